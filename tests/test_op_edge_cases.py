"""Edge cases of indexing, reductions and arithmetic where ferrograd once
differed from PyTorch: 0-d integer indices, empty selections, bools in
`dim`'s place, gradients at ties and zero spreads, dtypes of scaled sums and
integer powers, and casts into integer tensors. Each runs on ferrograd and,
when importable, on torch."""

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch
from helpers import torch as ref_torch

LIBS = [pytest.param(fg, id="ferrograd")]
if has_torch:
    LIBS.append(pytest.param(ref_torch, id="torch"))


@pytest.mark.parametrize("lib", LIBS)
def test_a_0d_integer_index_selects_a_view(lib):
    x = lib.zeros(3, 4)
    x[lib.tensor(1)][0] = 5
    x[np.int64(2)][1] = 7
    x[lib.tensor(0, dtype=lib.int32)].add_(1)
    assert x.tolist() == [[1.0] * 4, [5.0, 0, 0, 0], [0, 7.0, 0, 0]]
    assert tuple(lib.zeros(2, 3, 4)[lib.tensor(0), :, [1, 2]].shape) == (3, 2)
    y = lib.zeros(2, 3, 4)
    y[lib.tensor(1), :, [0, 3]] = 1.0
    assert y.sum().item() == 6 and y[1, :, 0].tolist() == [1.0] * 3 and y[1, :, 3].tolist() == [1.0] * 3


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize(
    "shape, index, expected",
    [
        ((2, 3, 0), lambda lib: ([1], [2]), (1, 0)),
        ((3, 0), lambda lib: lib.tensor(2), (0,)),
        ((3, 0), lambda lib: lib.tensor([2, 0]), (2, 0)),
        ((4, 1, 0), lambda lib: lib.ones(4, 1, dtype=lib.bool), (4, 0)),
    ],
)
def test_advanced_indexing_into_empty_rows(lib, shape, index, expected):
    assert tuple(lib.zeros(*shape)[index(lib)].shape) == expected


@pytest.mark.parametrize("lib", LIBS)
def test_assigning_through_an_empty_slice_writes_nothing_and_differentiates(lib):
    x = lib.ones(4, 4, 2, dtype=lib.float64, requires_grad=True)
    y = x.clone()
    y[[0, 1], [1, 2], 2:] = 7.0
    y[lib.ones(4, 4, dtype=lib.bool), 3:1] = 1.0
    y.sum().backward()
    assert y.sum().item() == 32 and x.grad.tolist() == lib.ones(4, 4, 2).tolist()


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_convolution_of_an_empty_batch(lib, dims):
    conv = getattr(lib.nn.functional, f"conv{dims}d")
    out = conv(lib.zeros(0, 4, *[5] * dims), lib.zeros(6, 2, *[3] * dims), groups=2)
    assert tuple(out.shape) == (0, 6, *[3] * dims)


@pytest.mark.parametrize("lib", LIBS)
def test_a_bool_where_dim_goes_is_unbiased(lib):
    x = lib.arange(12.0).reshape(3, 4)
    assert lib.std(x, True).item() == pytest.approx(x.std().item())
    assert x.var(False).item() == pytest.approx(float(np.var(np.arange(12.0))))
    assert tuple(x.std(0, True).shape) == (4,)


@pytest.mark.parametrize("lib", LIBS)
def test_std_gradient_is_zero_where_the_spread_is_zero(lib):
    a = lib.tensor([[1.0, 1, 1], [1, 2, 3]], dtype=lib.float64, requires_grad=True)
    a.std(dim=1).sum().backward()
    assert a.grad.tolist() == [[0.0, 0.0, 0.0], [-0.5, 0.0, 0.5]]


@pytest.mark.parametrize("lib", LIBS)
def test_a_number_over_a_tensor_saves_the_reciprocal(lib):
    y = lib.tensor([1.0, 2.0, 4.0], dtype=lib.float64, requires_grad=True) * 1
    z = 2 / y
    assert z.tolist() == [2.0, 1.0, 0.5]
    y.add_(1)  # y itself is not needed by backward
    z.sum().backward()
    assert (1 / lib.tensor([3, 4])).dtype == lib.float32


@pytest.mark.parametrize("lib", LIBS)
def test_integer_powers_with_negative_tensor_exponents(lib):
    base = lib.tensor([2, 3, 1, -1, -1, 0, -2])
    exponent = lib.tensor([-1, 2, -5, -3, -2, -1, -2])
    assert lib.pow(base, exponent).tolist() == [0, 9, 1, -1, 1, 0, 0]
    assert (2 ** lib.tensor([3, -1])).tolist() == [8, 0]
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        lib.tensor([2]) ** -1


@pytest.mark.parametrize("lib", LIBS)
def test_scaled_python_numbers_keep_their_low_promotion_priority(lib):
    five = lib.tensor(5, dtype=lib.int32)
    assert lib.add(five, 3, alpha=2).dtype == lib.int32
    assert lib.sub(five, 3, alpha=2).item() == -1 and lib.sub(five, 3, alpha=2).dtype == lib.int32
    assert lib.add(lib.tensor([1.0]), 3, alpha=2).dtype == lib.float32


@pytest.mark.parametrize("lib", LIBS)
def test_values_cast_into_an_integer_tensor_carry_no_gradient(lib):
    b = lib.tensor([1.5, 2.5], requires_grad=True)
    y = lib.zeros(2, dtype=lib.int64)
    y[:] = b
    z = lib.zeros(2, dtype=lib.bool)
    z.copy_(b)
    assert not y.requires_grad and y.grad_fn is None and y.tolist() == [1, 2]
    assert not z.requires_grad and z.tolist() == [True, True]


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("reduction", ["max", "min"])
def test_max_of_a_tensor_with_nans_shares_the_gradient_among_them(lib, reduction):
    nan = float("nan")
    x = lib.tensor([1.0, nan, 3.0, nan], dtype=lib.float64, requires_grad=True)
    getattr(x, reduction)().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.0, 0.5]
    x.grad = None
    x.amax().backward()  # amax's gradient goes through equality, as torch's does
    assert all(np.isnan(x.grad.tolist()))


@pytest.mark.parametrize("lib", LIBS)
def test_norm_dtype_and_elementwise_extremes_by_keyword(lib):
    x = lib.tensor([3.0, 4.0])
    assert x.norm(dtype=lib.float64).dtype == lib.float64 and x.norm(dtype=lib.float64).item() == 5.0
    y = lib.tensor([4.0, 1.0])
    assert lib.max(x, other=y).tolist() == [4.0, 4.0] and x.min(other=y).tolist() == [3.0, 1.0]


@pytest.mark.parametrize("lib", LIBS)
def test_a_number_over_a_complex_tensor(lib):
    z = lib.tensor([1j, 2.0 + 0j], requires_grad=True)
    out = 2 / z
    assert out.tolist() == [-2j, 1 + 0j]
    out.abs().sum().backward()
    assert z.grad is not None


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("op", ["floor_divide", "remainder", "fmod"])
def test_integer_division_of_nothing_by_zero_is_empty(lib, op):
    out = getattr(lib, op)(lib.zeros(0, 3, dtype=lib.int64), lib.tensor([1, 0, 2]))
    assert tuple(out.shape) == (0, 3)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        getattr(lib, op)(lib.ones(1, 3, dtype=lib.int64), lib.tensor([1, 0, 2]))


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("sparse_grad", [False, True])
def test_gather_takes_sparse_grad(lib, sparse_grad):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = lib.gather(x, 1, lib.tensor([[1], [0]]), sparse_grad=sparse_grad)
    assert out.tolist() == [[2.0], [3.0]]
    out.sum().backward()
    grad = x.grad.to_dense() if sparse_grad and lib is not fg else x.grad
    assert grad.tolist() == [[0.0, 1.0], [1.0, 0.0]]


@pytest.mark.parametrize("lib", LIBS)
def test_hardtanh_records_its_own_node(lib):
    x = lib.tensor([-1.0, 0.0, 3.0, 6.0], requires_grad=True)
    y = lib.nn.functional.relu6(x)
    assert type(y.grad_fn).__name__ == "HardtanhBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 0.0]


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize(
    "values, name, median, grad",
    [
        ([3.0, 1.0, 2.0, 2.0], "median", 2.0, [0, 0, 0.5, 0.5]),
        ([1.0, float("nan"), 2.0, float("nan")], "median", float("nan"), [0, 0.5, 0, 0.5]),
        ([1.0, float("nan"), 5.0, 2.0], "nanmedian", 2.0, [0, 0, 0, 1]),
        ([float("nan"), float("nan")], "nanmedian", float("nan"), [0.5, 0.5]),
        ([float("inf"), 1.0, float("inf")], "median", float("inf"), [0.5, 0, 0.5]),
    ],
)
def test_median_of_all_elements_shares_its_gradient_among_ties(lib, values, name, median, grad):
    x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    m = getattr(lib, name)(x)
    assert type(m.grad_fn).__name__ == name.capitalize() + "Backward0"
    np.testing.assert_array_equal(m.item(), median)
    m.backward()
    np.testing.assert_array_equal(x.grad.numpy(), grad)


@pytest.mark.parametrize("lib", LIBS)
def test_median_of_all_elements_by_dtype(lib):
    assert lib.tensor([[5, 1], [3, 9]]).median().item() == 3
    assert lib.tensor([[5, 1], [3, 9]]).median().dtype == lib.int64
    with pytest.raises(NotImplementedError, match="\"median_cpu\" not implemented for 'Bool'"):
        lib.tensor([True, False]).median()
    assert np.isnan(lib.tensor([]).median().item())


@pytest.mark.parametrize("lib", LIBS)
def test_signs_of_zero_through_neg_abs_and_relu(lib):
    zeros = lib.tensor([0.0, -0.0])
    assert np.signbit((-zeros).numpy()).tolist() == [True, False]
    assert np.signbit(zeros.neg().numpy()).tolist() == [True, False]
    assert np.signbit(zeros.abs().numpy()).tolist() == [False, False]
    assert np.signbit(lib.relu(zeros).numpy()).tolist() == [False, True]
    assert (-lib.tensor([3, -2, 0])).tolist() == [-3, 2, 0]
    assert lib.tensor([-5, 0, 7]).abs().tolist() == [5, 0, 7]


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_and_minimum_send_the_whole_gradient_to_both_sides_of_a_nan(lib, name):
    nan = float("nan")
    a = lib.tensor([nan, 1.0, 2.0, 3.0, nan], requires_grad=True)
    b = lib.tensor([1.0, nan, 2.0, 1.0, nan], requires_grad=True)
    getattr(lib, name)(a, b).sum().backward()
    winner_a = 1.0 if name == "maximum" else 0.0
    assert a.grad.tolist() == [1.0, 1.0, 0.5, winner_a, 1.0]
    assert b.grad.tolist() == [1.0, 1.0, 0.5, 1.0 - winner_a, 1.0]


@pytest.mark.skipif(not has_torch, reason="torch not installed")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lerp_rounds_as_torch_does(dtype):
    rng = np.random.default_rng(7)
    start, end = rng.standard_normal((2, 4000)).astype(dtype)
    weight = rng.uniform(-0.5, 1.5, 4000).astype(dtype)
    ours = fg.lerp(fg.tensor(start), fg.tensor(end), fg.tensor(weight)).numpy()
    theirs = ref_torch.lerp(ref_torch.tensor(start), ref_torch.tensor(end), ref_torch.tensor(weight)).numpy()
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("lib", LIBS)
def test_dims_of_a_0d_tensor(lib):
    x = lib.tensor(2.5, requires_grad=True)
    for method in ("size", "stride"):
        for dim in (0, -1):
            with pytest.raises(
                IndexError, match=f"Dimension specified as {dim} but tensor has no dimensions"
            ):
                getattr(x, method)(dim)
    assert x.size() == () and x.stride() == ()
    moved = x.movedim(0, 0)
    assert moved.shape == () and moved.item() == 2.5
    assert x.moveaxis([-1], [0]).shape == ()
    moved.backward()
    assert x.grad.item() == 1.0
    with pytest.raises(
        IndexError, match=r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"
    ):
        x.movedim(0, 1)
    for sizes in ([1], [0], []):
        with pytest.raises(RuntimeError, match="split expects at least a 1-dimensional tensor"):
            x.split(sizes)

"""Edge cases of Python-level functions compared with torch: medians over infinities and NaNs,
fresh results of repeat_interleave, masked_scatter's gradient, 0-d results of searchsorted and
unique, integer logspace, is_signed, ``in``, rsub's type promotion, division with a rounding_mode
(dtypes, division by zero and zero gradients) and Tensor.tile's counts."""

import math

import numpy as np
import pytest

import ferrograd as fg

from helpers import check_op, has_torch
from helpers import torch as ref_torch

nan, inf = math.nan, math.inf

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is not installed")


def libraries():
    return [fg, ref_torch] if has_torch else [fg]


# --------------------------------------------------------------------------- median, nanmedian


def median_and_grad(T, op, values):
    x = T.tensor(values, dtype=T.float64, requires_grad=True)
    y = getattr(x, op)()
    y.backward()
    return y.item(), x.grad.tolist()


# (op, input, value, gradient) as torch gives them: the gradient is shared evenly among the
# elements equal to the result (NaN matching NaN).
MEDIAN_CASES = [
    ("nanmedian", [1.0, nan, 2.0, 3.0], 2.0, [0.0, 0.0, 1.0, 0.0]),
    ("nanmedian", [nan, nan, 1.0], 1.0, [0.0, 0.0, 1.0]),
    ("nanmedian", [nan, nan], nan, [0.5, 0.5]),
    ("nanmedian", [0.1, 0.1, 0.1, nan], 0.1, [1 / 3, 1 / 3, 1 / 3, 0.0]),
    ("median", [inf, 1.0], 1.0, [0.0, 1.0]),
    ("median", [inf, inf, 1.0], inf, [0.5, 0.5, 0.0]),
    ("median", [-inf, -inf, 1.0, inf], -inf, [0.5, 0.5, 0.0, 0.0]),
    ("median", [nan, nan, 1.0], nan, [0.5, 0.5, 0.0]),
    ("median", [2.0, 1.0, 2.0, 3.0, 2.0], 2.0, [1 / 3, 0.0, 1 / 3, 0.0, 1 / 3]),
]


@pytest.mark.parametrize("op, values, value, grad", MEDIAN_CASES)
def test_median_over_infinities_and_nans(op, values, value, grad):
    for T in libraries():
        got_value, got_grad = median_and_grad(T, op, values)
        np.testing.assert_equal(got_value, value)
        np.testing.assert_allclose(got_grad, grad, rtol=1e-15)


def test_median_value_is_exact_for_finite_ties():
    # The shared gradient must not move the value: 0.1 + 0.1 + 0.1 is not 3 * 0.1.
    x = fg.tensor([0.1, 0.1, 0.1, 5.0, -inf], dtype=fg.float64, requires_grad=True)
    assert x.median().item() == 0.1


def test_median_over_infinities_supports_double_backward():
    x = fg.tensor([[inf, 1.0], [2.0, -inf]], dtype=fg.float64, requires_grad=True)
    y = x.median()
    assert y.item() == 1.0
    (g,) = fg.autograd.grad(y, x, create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), [[0.0, 1.0], [0.0, 0.0]])


# --------------------------------------------------------------------------- repeat_interleave


@pytest.mark.parametrize(
    "shape, repeats, dim",
    [((1, 3), 2, 0), ((1, 3), 1, 1), ((2, 3), 1, 0), ((1,), 1, None), ((), 3, None), ((1, 1), [2], 0)],
)
def test_repeat_interleave_returns_a_new_tensor(shape, repeats, dim):
    for T in libraries():
        x = T.zeros(shape)
        r = x.repeat_interleave(T.tensor(repeats) if isinstance(repeats, list) else repeats, dim=dim)
        assert r.is_contiguous()
        r.add_(1)  # raises on an expanded view
        r.view(-1)[0] = 9
        assert x.abs().sum().item() == 0


@pytest.mark.parametrize("repeats, dim", [(2, 0), (3, 1), (1, 0), (2, None)])
def test_repeat_interleave_gradient_over_size_one_dims(repeats, dim):
    check_op(lambda T, a: T.repeat_interleave(a, repeats, dim=dim), np.array([[1.5, -2.0, 0.5]]))


def test_repeat_interleave_takes_a_one_element_repeats_tensor():
    for T in libraries():
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]])
        r = x.repeat_interleave(T.tensor([2]), dim=1)
        assert r.tolist() == [[1.0, 1.0, 2.0, 2.0], [3.0, 3.0, 4.0, 4.0]]


@pytest.mark.parametrize(
    "repeats, dim, message",
    [
        (2, 0, r"but got 1\)"),
        (2, 2, r"but got 2\)"),
        ("tensor", 0, "Dimension specified as 0 but tensor has no dimensions"),
    ],
)
def test_repeat_interleave_of_a_0d_tensor_along_a_dim_raises_like_torch(repeats, dim, message):
    for T in libraries():
        r = T.tensor(2) if repeats == "tensor" else repeats
        with pytest.raises(IndexError, match=message):
            T.zeros(()).repeat_interleave(r, dim=dim)


# --------------------------------------------------------------------------- masked_scatter


@pytest.mark.parametrize("form", ["function", "method", "inplace"])
@pytest.mark.parametrize("source_size", [3, 0])
def test_masked_scatter_with_no_true_gives_source_a_zero_gradient(form, source_size):
    for T in libraries():
        x = T.tensor([1.0, 2.0], requires_grad=True)
        s = T.ones(source_size, requires_grad=True)
        mask = T.tensor([False, False])
        if form == "function":
            y = T.masked_scatter(x, mask, s)
        elif form == "method":
            y = x.masked_scatter(mask, s)
        else:
            y = x.clone()
            y.masked_scatter_(mask, s)
        assert y.tolist() == [1.0, 2.0]
        (y * T.tensor([2.0, 3.0])).sum().backward()
        assert s.grad is not None and s.grad.tolist() == [0.0] * source_size
        assert x.grad.tolist() == [2.0, 3.0]


def test_masked_scatter_with_no_true_keeps_nonfinite_source_out_of_the_values():
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    s = fg.tensor([inf, nan], requires_grad=True)
    y = x.masked_scatter(fg.tensor([False, False]), s)
    y.sum().backward()
    assert y.tolist() == [1.0, 2.0]
    assert s.grad.tolist() == [0.0, 0.0]


# --------------------------------------------------------------------------- 0-d results


@pytest.mark.parametrize(
    "fn",
    [
        lambda T: T.searchsorted(T.tensor([1, 2, 3, 4]), 2),
        lambda T: T.searchsorted(T.tensor([1, 2, 3, 4]), T.tensor(2)),
        lambda T: T.searchsorted(T.tensor([1.0, 2.0, 3.0]), 2.5, right=True, out_int32=True),
        lambda T: T.bucketize(T.tensor(2), T.tensor([1, 2, 3, 4])),
        lambda T: T.bucketize(2, T.tensor([1, 2, 3, 4])),
        lambda T: T.bucketize(2.5, T.tensor([1, 2, 3, 4]), right=True),
        lambda T: T.isin(T.tensor(2), T.tensor([1, 2])),
    ],
)
def test_scalar_queries_give_0d_results(fn):
    expected = fn(ref_torch) if has_torch else None
    out = fn(fg)
    assert out.shape == ()
    if expected is not None:
        assert out.item() == expected.item() and str(out.dtype)[-5:] == str(expected.dtype)[-5:]


def test_searchsorted_of_a_scalar_in_nd_boundaries_raises_like_torch():
    for T in libraries():
        for value in (2, T.tensor(2)):
            with pytest.raises(RuntimeError, match="input value can be a scalar only when boundaries"):
                T.searchsorted(T.tensor([[1, 2], [3, 4]]), value)


@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
def test_unique_inverse_of_a_0d_tensor_is_0d(name):
    for T in libraries():
        values, inverse, counts = getattr(T, name)(T.tensor(3), return_inverse=True, return_counts=True)
        assert values.tolist() == [3] and counts.tolist() == [1]
        assert inverse.shape == () and inverse.item() == 0


@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
@pytest.mark.parametrize("dim", [0, -1, 1])
def test_unique_along_a_dim_of_a_0d_tensor_raises_like_torch(name, dim):
    for T in libraries():
        with pytest.raises(IndexError, match=f"Dimension specified as {dim} but tensor has no dimensions"):
            getattr(T, name)(T.tensor(3), dim=dim)


# --------------------------------------------------------------------------- logspace


INTEGER_DTYPES = ["int64", "int32", "int16", "int8", "uint8"]


@pytest.mark.parametrize(
    "args, base, expected",
    [
        ((0, 6, 7), 2, [1, 2, 4, 8, 16, 32, 64]),
        ((0, 3, 4), 10, [1, 10, 100, 1000]),
        ((0, 1, 5), 10, [1, 1, 3, 5, 10]),  # powers truncated
        ((-2, 2, 5), 10, [0, 0, 1, 10, 100]),
        ((0.5, 2.5, 3), 4, [1, 4, 16]),  # start and end truncated first
        ((3, 0, 4), 2, [8, 4, 2, 1]),
        ((1, 3, 3), -2, [-2, 4, -8]),
        ((0.5, 3, 1), 4, [2]),  # a single step is base ** start, not truncated
        ((0, 15, 4), 10, [1, 100000, 10000000000, 1000000000000000]),
    ],
)
def test_logspace_of_int64_matches_torch(args, base, expected):
    assert fg.logspace(*args, base=base, dtype=fg.int64).tolist() == expected


@needs_torch
@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
@pytest.mark.parametrize(
    "args, base",
    [
        ((0, 6, 7), 2),
        ((0, 10, 11), 10),
        ((-2, 2, 5), 2),
        ((0, 2, 5), 3),
        ((0, 3, 7), -2),
        ((1, 3, 3), -2),
        ((0.9, 2.5, 3), 2),  # the ends truncated first
        ((-1, 2, 4), 2),  # -1 wraps around to 255 in uint8
        ((0, 20, 5), 10),
        ((2, 0, 3), 7),
        ((0, 1, 0), 10),
    ],
)
def test_logspace_of_integers_matches_torch(dtype, args, base):
    got = fg.logspace(*args, base=base, dtype=getattr(fg, dtype)).tolist()
    assert got == ref_torch.logspace(*args, base=base, dtype=getattr(ref_torch, dtype)).tolist()


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "args, base", [((0, 20, 5), 10), ((0.1, 2.3, 7), 3.3), ((-3, 3, 101), 7), ((0, 2, 5), -2)]
)
def test_logspace_of_floats_matches_torch(dtype, args, base):
    got = fg.logspace(*args, base=base, dtype=getattr(fg, dtype)).numpy()
    expected = ref_torch.logspace(*args, base=base, dtype=getattr(ref_torch, dtype)).numpy()
    # torch's own values differ in the last place between its AVX2 and
    # AVX-512 kernels (float64 `base ** x`), so one unit in the last place.
    np.testing.assert_array_max_ulp(got, expected, maxulp=1)


def test_logspace_rejects_bool_and_integer_gradients_like_torch():
    for T in libraries():
        with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
            T.logspace(0, 1, 3, dtype=T.bool)
        with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
            T.logspace(0, 1, 3, dtype=T.int64, requires_grad=True)
        with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
            T.logspace(0, 1, -1)


# --------------------------------------------------------------------------- is_signed


@pytest.mark.parametrize(
    "dtype, signed",
    [
        ("uint8", False),
        ("bool", False),
        ("int8", True),
        ("int16", True),
        ("int32", True),
        ("int64", True),
        ("float32", True),
        ("float64", True),
        ("complex64", True),
        ("complex128", True),
    ],
)
def test_is_signed(dtype, signed):
    for T in libraries():
        x = T.zeros(2, dtype=getattr(T, dtype))
        assert x.is_signed() is signed
        assert T.is_signed(x) is signed


# --------------------------------------------------------------------------- in


@pytest.mark.parametrize(
    "element, expected",
    [
        (3, True),
        (5, False),
        (2.0, True),
        (2.5, False),
        (True, True),
        (np.int64(4), True),
        ("tensor 0-d", True),
        ("tensor row", True),
        ("tensor column", False),
    ],
)
def test_contains_compares_every_element(element, expected):
    for T in libraries():
        x = T.tensor([[1, 2], [3, 4]])
        item = (
            {
                "tensor 0-d": T.tensor(3),
                "tensor row": T.tensor([3, 9]),
                "tensor column": T.tensor([[3], [9]]),
            }.get(element, element)
            if isinstance(element, str)
            else element
        )
        assert (item in x) is expected


def test_contains_of_a_0d_tensor():
    for T in libraries():
        x = T.tensor(3)
        assert 3 in x and 4 not in x
        assert T.tensor([1, 3]) in x and T.tensor([1, 2]) not in x


def test_contains_of_nan_is_false():
    for T in libraries():
        assert (nan in T.tensor([nan, 1.0])) is False


@pytest.mark.parametrize("element", ["a", None, [1], (1,)])
def test_contains_rejects_other_objects_like_torch(element):
    for T in libraries():
        with pytest.raises(RuntimeError, match="Tensor.__contains__ only supports Tensor or scalar"):
            element in T.tensor([[1, 2], [3, 4]])  # noqa: B015 - the test is the error


# --------------------------------------------------------------------------- rsub


def dtype_name(dtype) -> str:
    return str(dtype).split(".")[-1]


# (input, other, alpha, result dtype, values): a Python number ``other`` ranks below any tensor
# in type promotion, and is converted to the result dtype as PyTorch converts it.
RSUB_CASES = [
    (lambda T: T.tensor(3, dtype=T.int32), 2, 1, "int32", -1),
    (lambda T: T.tensor(3, dtype=T.int8), 2, 3, "int8", -7),
    (lambda T: T.tensor([3], dtype=T.int8), 300, 1, "int8", [41]),  # 300 wraps to 44
    (lambda T: T.tensor([3], dtype=T.uint8), -5, 1, "uint8", [248]),
    (lambda T: T.tensor(3, dtype=T.int16), 2.5, 1, "float32", -0.5),
    (lambda T: T.tensor(3.0, dtype=T.float64), 0.1, 1, "float64", 0.1 - 3.0),
    (lambda T: T.tensor(3.0, dtype=T.float64), 0.1 + 1j, 1, "complex128", 0.1 - 3.0 + 1j),
    (lambda T: T.tensor([3.0], dtype=T.float32), 2 + 1j, 1, "complex64", [-1 + 1j]),
    (lambda T: T.tensor(3, dtype=T.int32), np.int64(2), 1, "int32", -1),
    (lambda T: T.tensor(3, dtype=T.int16), lambda T: T.tensor(2), 1, "int64", -1),
]


@pytest.mark.parametrize("make_input, other, alpha, dtype, expected", RSUB_CASES)
def test_rsub_keeps_a_python_number_weak_in_type_promotion(make_input, other, alpha, dtype, expected):
    for T in libraries():
        out = T.rsub(make_input(T), other(T) if callable(other) else other, alpha=alpha)
        assert dtype_name(out.dtype) == dtype
        assert out.tolist() == expected


def test_rsub_gradient_is_minus_alpha():
    for T in libraries():
        x = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
        T.rsub(x, 5, alpha=3).sum().backward()
        assert x.grad.tolist() == [-3.0, -3.0]


def test_rsub_checks_alpha_against_the_result_dtype_like_torch():
    for T in libraries():
        x = T.tensor(3, dtype=T.int32)
        with pytest.raises(RuntimeError, match="argument alpha must not be a floating point number"):
            T.rsub(x, 2, alpha=2.5)
        assert T.rsub(x, 2.5, alpha=2.5).item() == -5.0


# --------------------------------------------------------------------------- div with rounding_mode


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
@pytest.mark.parametrize(
    "mode, expected",
    [("trunc", [3, -3, -2, 0, 14]), ("floor", [3, -4, -3, 0, 14])],
)
def test_rounded_division_of_integer_tensors_keeps_their_dtype(dtype, mode, expected):
    signed = dtype != "uint8"
    dividend = [7, -7, 5, 0, 100] if signed else [7, 9, 5, 0, 100]
    divisor = [2, 2, -2, 3, 7] if signed else [2, 2, 2, 3, 7]
    if not signed:
        expected = [3, 4, 2, 0, 14]
    for T in libraries():
        a, b = (T.tensor(v, dtype=getattr(T, dtype)) for v in (dividend, divisor))
        out = T.div(a, b, rounding_mode=mode)
        assert dtype_name(out.dtype) == dtype
        assert out.tolist() == expected
        assert a.div(b, rounding_mode=mode).tolist() == expected


@pytest.mark.parametrize(
    "make_operands, dtype, expected",
    [
        (lambda T: (T.tensor([5, 6], dtype=T.uint8), T.tensor([-3], dtype=T.int8)), "int16", [-1, -2]),
        (lambda T: (T.tensor([5, -6], dtype=T.int32), T.tensor(2)), "int32", [2, -3]),
        (lambda T: (T.tensor([-128], dtype=T.int8), -1), "int8", [-128]),  # wraps, as in C
        (lambda T: (7, T.tensor([2, -2], dtype=T.int8)), "int8", [3, -3]),
        (lambda T: (T.tensor([5, 6], dtype=T.uint8), -3), "uint8", [0, 0]),  # -3 is 253 in uint8
        (lambda T: (T.tensor([5, -6], dtype=T.int32), 2.5), "float32", [2.0, -2.0]),
    ],
)
def test_trunc_division_promotes_like_torch(make_operands, dtype, expected):
    for T in libraries():
        out = T.div(*make_operands(T), rounding_mode="trunc")
        assert dtype_name(out.dtype) == dtype
        assert out.tolist() == expected


def test_floor_division_wraps_a_negative_number_to_an_unsigned_dtype():
    for T in libraries():
        out = T.div(T.tensor([5, 6], dtype=T.uint8), -3, rounding_mode="floor")
        assert dtype_name(out.dtype) == "uint8"
        assert out.tolist() == [0, 0]


@pytest.mark.parametrize("mode", ["trunc", "floor"])
@pytest.mark.parametrize(
    "make_operands",
    [
        lambda T: (T.tensor([3, 4], dtype=T.int8), T.tensor([0, 1], dtype=T.int8)),
        lambda T: (T.tensor([3, 4], dtype=T.int32), 0),
        lambda T: (T.tensor([3, 4], dtype=T.int8), 256),  # 256 wraps to 0 in int8
    ],
)
def test_integer_division_by_zero_raises_in_both_rounding_modes(mode, make_operands):
    for T in libraries():
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            T.div(*make_operands(T), rounding_mode=mode)


@pytest.mark.parametrize(
    "make_operands, name",
    [
        (lambda T: (T.tensor([True, False]), T.tensor([True, True])), "Bool"),
        (lambda T: (T.tensor([True, False]), True), "Bool"),
        (lambda T: (T.tensor([1 + 1j]), 2), "ComplexFloat"),
    ],
)
def test_trunc_division_of_bool_and_complex_raises_like_torch(make_operands, name):
    for T in libraries():
        with pytest.raises(NotImplementedError, match=f"\"div_trunc_cpu\" not implemented for '{name}'"):
            T.div(*make_operands(T), rounding_mode="trunc")


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_rounded_division_gradient_is_zero_where_the_quotient_is_not_finite(mode):
    dividend = [1.0, inf, -inf, 3.0, 0.0, -2.0]
    divisor = [0.0, 2.0, 0.0, 0.5, 0.0, -0.0]
    expected = {
        "trunc": [inf, inf, -inf, 6.0, nan, inf],
        "floor": [inf, nan, -inf, 6.0, nan, inf],
    }[mode]
    for T in libraries():
        a = T.tensor(dividend, dtype=T.float64, requires_grad=True)
        b = T.tensor(divisor, dtype=T.float64, requires_grad=True)
        out = T.div(a, b, rounding_mode=mode)
        np.testing.assert_array_equal(out.detach().numpy(), expected)
        out.backward(T.ones_like(out))
        assert a.grad.tolist() == [0.0] * 6
        assert b.grad.tolist() == [0.0] * 6


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_rounded_division_gradient_is_zero_across_broadcasting_and_dtypes(mode):
    for T in libraries():
        a = T.tensor([[1.5, inf]], dtype=T.float32, requires_grad=True)
        b = T.tensor([[0.0], [-2.0]], dtype=T.float64, requires_grad=True)
        out = T.div(a, b, rounding_mode=mode)
        assert dtype_name(out.dtype) == "float64"
        out.sum().backward()
        assert a.grad.tolist() == [[0.0, 0.0]]
        assert b.grad.tolist() == [[0.0], [0.0]]
        c = T.tensor([1.0, -inf], requires_grad=True)
        T.div(c, 0, rounding_mode=mode).sum().backward()
        assert c.grad.tolist() == [0.0, 0.0]


@needs_torch
@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_rounded_division_matches_torch_on_finite_values(mode):
    check_op(lambda T, a, b: T.div(a, b, rounding_mode=mode), [[1.3, -2.5, 7.1]], [[2.0], [-0.7]])


# --------------------------------------------------------------------------- tile


@pytest.mark.parametrize(
    "call, reps",
    [
        (lambda x: x.tile(2, 1), (2, 1)),
        (lambda x: x.tile(2, 1, 2), (2, 1, 2)),
        (lambda x: x.tile((2, 1)), (2, 1)),
        (lambda x: x.tile([2]), (2,)),
        (lambda x: x.tile(2), (2,)),
        (lambda x: x.tile(dims=(2, 1)), (2, 1)),
    ],
)
def test_tile_method_takes_the_counts_one_by_one_or_as_a_sequence(call, reps):
    expected = np.tile(np.arange(6).reshape(2, 3), reps).tolist()
    for T in libraries():
        assert call(T.arange(6).reshape(2, 3)).tolist() == expected


def test_tile_method_without_counts_raises_like_torch():
    for T in libraries():
        with pytest.raises(TypeError, match="missing 1 required positional argument"):
            T.arange(3).tile()
        with pytest.raises(TypeError, match="got multiple values for argument 'dims'"):
            T.arange(3).tile((2,), dims=(1,))

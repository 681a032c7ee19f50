"""Tensor ops found to differ from PyTorch under ``import ferrograd as torch``: broadcasting
and expanding errors, ``sum`` with an integer ``dtype``, fills whose value is a 0-d tensor
that requires grad, ``flatten`` of a 0-d tensor, complex ``var``/``std``, ``all``/``any`` over
no dims, index and dim messages. Each test states the expected behaviour and,
when torch is installed, checks torch agrees."""

import re

import numpy as np
import pytest

import ferrograd as fg

from helpers import assert_raises_like_torch, has_torch, torch


def modules():
    return [fg] + ([torch] if has_torch else [])


# ----------------------------------------------------------------------------- broadcasting


@pytest.mark.parametrize(
    "op",
    [
        lambda F, T: T.zeros(3, 4) + T.zeros(4, 3),
        lambda F, T: T.zeros(3, 4).mul_(T.zeros(4, 3)),
        lambda F, T: T.broadcast_tensors(T.zeros(3, 4), T.zeros(4, 3)),
        lambda F, T: F.cosine_similarity(T.zeros(3, 4), T.zeros(4, 3)),
    ],
)
def test_broadcasting_errors_name_the_last_mismatched_dimension(op):
    # Dimensions are matched from the right, so the mismatch reported is dimension 1.
    message = "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1"
    assert_raises_like_torch(op, RuntimeError, re.escape(message))


def test_broadcast_shapes_returns_a_size():
    for T in modules():
        shape = T.broadcast_shapes((3, 1), (4,))
        assert isinstance(shape, T.Size) and shape == (3, 4)


@pytest.mark.parametrize(
    "op, tensor, sizes",
    [
        (lambda F, T: T.zeros(2, 3, 4).expand(3, 4), "[2, 3, 4]", "[3, 4]"),
        (lambda F, T: T.zeros(2, 3, 4).expand_as(T.zeros(3, 4)), "[2, 3, 4]", "[3, 4]"),
        (lambda F, T: T.broadcast_to(T.zeros(2, 3, 4), (3, 4)), "[2, 3, 4]", "[3, 4]"),
        (lambda F, T: T.zeros(4, 3).__setitem__((slice(None), 1), T.ones(4, 1)), "[4, 1]", "[4]"),
    ],
)
def test_expanding_to_fewer_dimensions_lists_the_sizes(op, tensor, sizes):
    n, ndim = len(sizes.split(",")), len(tensor.split(","))
    message = (
        rf"expand\((ferrograd|torch)\.FloatTensor\{{{re.escape(tensor)}\}}, size={re.escape(sizes)}\): the "
        rf"number of sizes provided \({n}\) must be greater or equal to the number of dimensions in the "
        rf"tensor \({ndim}\)"
    )
    assert_raises_like_torch(op, RuntimeError, message)


# ----------------------------------------------------------------------------- sum(dtype=)


@pytest.mark.parametrize(
    "make, dtype, value",
    [
        (lambda T: T.tensor([1, 2]).sum(dtype=T.int32), "int32", 3),
        (lambda T: T.tensor([100, 100], dtype=T.int8).sum(dtype=T.int8), "int8", -56),
        (lambda T: T.tensor([1.5, 1.5]).sum(dtype=T.int32), "int32", 2),
        (lambda T: T.tensor([[1, 2], [3, 4]]).sum(1, dtype=T.int16), "int16", [3, 7]),
        (lambda T: T.nansum(T.tensor([1, 2]), dtype=T.int32), "int32", 3),
        (lambda T: T.tensor([1, 2], dtype=T.int32).sum(), "int64", 3),
        (lambda T: T.tensor([1, 2]).sum(dtype=T.float64), "float64", 3.0),
    ],
)
def test_sum_returns_the_dtype_asked_for(make, dtype, value):
    for T in modules():
        out = make(T)
        assert str(out.dtype).rsplit(".", 1)[-1] == dtype
        assert out.tolist() == value


# ----------------------------------------------------------------------------- fills


MASK = np.array([[True, False, True], [False, False, True]])


def fill_programs():
    """Fills by a 0-d tensor ``v`` that requires grad, each with the gradient ``v`` gets from
    ``(out * w).sum()`` for the weights ``w`` below: the sum of ``w`` where ``v`` was written."""
    w = np.arange(1.0, 7.0).reshape(2, 3)
    return [
        ("masked_fill", lambda T, x, v, m: x.masked_fill(m, v), "MaskedFillBackward1", w[MASK].sum()),
        (
            "masked_fill_",
            lambda T, x, v, m: x.clone().masked_fill_(m, v),
            "MaskedFillBackward1",
            w[MASK].sum(),
        ),
        ("fill_", lambda T, x, v, m: x.clone().fill_(v), "FillBackward3", w.sum()),
        ("fill_ of a fresh tensor", lambda T, x, v, m: T.zeros(2, 3).fill_(v), "FillBackward3", w.sum()),
        ("index_fill", lambda T, x, v, m: x.index_fill(1, T.tensor([0, 2]), v), None, w[:, [0, 2]].sum()),
        ("fill", lambda T, x, v, m: T.fill(x, v), None, w.sum()),
    ], w


@pytest.mark.parametrize("case", range(6))
def test_fills_by_a_tensor_pass_its_gradient(case):
    programs, w = fill_programs()
    _, fill, name, expected = programs[case]
    grads = []
    for T in modules():
        x = T.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        v = T.tensor(2.5, requires_grad=True)
        out = fill(T, x, v, T.tensor(MASK))
        if name is not None:
            assert type(out.grad_fn).__name__ == name
        (out * T.tensor(w)).sum().backward()
        assert v.grad.item() == pytest.approx(expected)
        grads.append(x.grad.numpy() if x.grad is not None else None)
    if has_torch:
        ours, theirs = grads
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_allclose(ours, theirs)


def test_fill_by_a_tensor_of_another_dtype_gives_the_gradient_in_its_dtype():
    for T in modules():
        x = T.zeros(2, 3, requires_grad=True)
        v = T.tensor(1.5, dtype=T.float64, requires_grad=True)
        out = x.masked_fill(T.tensor(MASK), v)
        assert out.dtype == T.float32
        out.sum().backward()
        assert v.grad.dtype == T.float64 and v.grad.item() == 3.0


@pytest.mark.parametrize(
    "op, message",
    [
        (
            lambda F, T: T.zeros(3).masked_fill(T.ones(3, dtype=T.bool), T.ones(1)),
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).",
        ),
        (
            lambda F, T: T.zeros(3).masked_fill_(T.ones(3, dtype=T.bool), T.ones(2)),
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).",
        ),
        (
            lambda F, T: T.zeros(3).fill_(T.ones(2)),
            "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.",
        ),
        (
            lambda F, T: T.fill(T.zeros(3), T.ones(2)),
            "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.",
        ),
    ],
)
def test_fills_refuse_a_value_tensor_with_dimensions(op, message):
    assert_raises_like_torch(op, RuntimeError, re.escape(message))


# ----------------------------------------------------------------------------- flatten


def test_flatten_of_a_zero_dim_tensor_checks_its_dims():
    for T in modules():
        t = T.tensor(2.0)
        for args in [(), (0,), (0, -1), (-1, -1)]:
            assert t.flatten(*args).tolist() == [2.0]
        assert T.nn.Flatten(0)(t).tolist() == [2.0]
    expected = r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"
    assert_raises_like_torch(lambda F, T: T.tensor(2.0).flatten(1), IndexError, expected)
    assert_raises_like_torch(lambda F, T: T.nn.Flatten()(T.tensor(2.0)), IndexError, expected)


# ----------------------------------------------------------------------------- complex logsumexp


def test_logsumexp_of_complex_values_and_its_gradient():
    z = np.array([[1 + 1j, 2], [0.5 - 2j, -1 + 3j], [40 + 1j, 39 - 1j]])

    def loss(z):
        return np.abs(np.log(np.exp(z).sum(1))).sum()

    # PyTorch's convention for a real loss of complex inputs: dL/dRe + i dL/dIm.
    h, expected = 1e-6, np.zeros_like(z)
    for idx in np.ndindex(z.shape):
        for step in (1, 1j):
            e = np.zeros_like(z)
            e[idx] = h * step
            expected[idx] += step * (loss(z + e) - loss(z - e)) / (2 * h)
    grads = []
    for T in modules():
        t = T.tensor(z, requires_grad=True)
        y = t.logsumexp(1)
        assert y.dtype == T.complex128
        np.testing.assert_allclose(y.detach().numpy(), np.log(np.exp(z).sum(1)), rtol=1e-12)
        y.abs().sum().backward()
        np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6, atol=1e-8)
        grads.append(t.grad.numpy())
    if has_torch:
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


# ----------------------------------------------------------------------------- linear layers


@pytest.mark.parametrize(
    "op, message",
    [
        (
            lambda F, T: T.nn.Linear(4, 3)(T.ones(2, 4, dtype=T.int64)),
            "mat1 and mat2 must have the same dtype, but got Long and Float",
        ),
        (
            lambda F, T: T.nn.Linear(4, 3)(T.ones(5, 2, 4, dtype=T.float64)),
            "mat1 and mat2 must have the same dtype, but got Double and Float",
        ),
        (
            lambda F, T: T.addmm(T.ones(2, dtype=T.float64), T.ones(2, 3), T.ones(3, 2)),
            "self and mat2 must have the same dtype, but got Double and Float",
        ),
        (
            lambda F, T: T.nn.Linear(4, 3)(T.tensor(1.0)),
            "both arguments to linear need to be at least 1D, but they are 0D and 2D",
        ),
        (
            lambda F, T: F.linear(T.ones(3), T.tensor(1.0)),
            "both arguments to linear need to be at least 1D, but they are 1D and 0D",
        ),
    ],
)
def test_linear_layers_name_mismatched_inputs_like_torch(op, message):
    assert_raises_like_torch(op, RuntimeError, re.escape(message))


# ----------------------------------------------------------------------------- norms


def test_gradient_of_a_p_norm_below_one_is_zero_at_zero():
    grads = []
    for T in modules():
        x = T.tensor([0.0, 1.0, 2.0], dtype=T.float64, requires_grad=True)
        x.norm(0.5).backward()
        grads.append(x.grad.numpy())
    # d/dx_i (sum |x|^p)^(1/p) = (sum |x|^p)^(1/p - 1) |x_i|^(p - 1) sign(x_i), and 0 at x_i = 0.
    total = 1.0 + 2.0**0.5
    expected = [0.0, total, total * 2.0**-0.5]
    np.testing.assert_allclose(grads[0], expected)
    if has_torch:
        np.testing.assert_allclose(grads[0], grads[1])


# ----------------------------------------------------------------------------- losses and norms of modules


@pytest.mark.parametrize(
    "loss, kernel",
    [("mse_loss", "mse_cpu"), ("smooth_l1_loss", "smooth_l1_cpu"), ("huber_loss", "huber_cpu")],
)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_of_integer_tensors_raise_like_torch(loss, kernel, reduction):
    def op(F, T):
        getattr(F, loss)(T.tensor([1, 2, 3]), T.tensor([1, 5, 3]), reduction=reduction)

    assert_raises_like_torch(op, NotImplementedError, re.escape(f"\"{kernel}\" not implemented for 'Long'"))
    for T in modules():
        out = getattr(T.nn.functional, loss)(T.tensor([1.0, 2.0, 3.0]), T.tensor([1, 5, 3]), reduction="sum")
        assert out.item() == {"mse_loss": 9.0, "smooth_l1_loss": 2.5, "huber_loss": 2.5}[loss]


@pytest.mark.parametrize(
    "sizes, name",
    [
        ((2, 2, 3, 3), "running_mean"),
        ((3, 2, 3, 3), "running_var"),
        ((3, 3, 2, 3), "weight"),
        ((3, 3, 3, 2), "bias"),
    ],
)
def test_batch_norm_names_the_first_parameter_of_the_wrong_size(sizes, name):
    def op(F, T):
        mean, var, weight, bias = (T.ones(n) for n in sizes)
        F.batch_norm(T.ones(4, 3), mean, var, weight, bias)

    assert_raises_like_torch(op, RuntimeError, f"{name} should contain 3 elements not 2")


@pytest.mark.parametrize("pool", ["avg_pool2d", "max_pool2d"])
@pytest.mark.parametrize(
    "shape, kernel, message",
    [
        ((1, 1, 2, 2), 3, "(1x2x2). Calculated output size: (1x0x0)"),
        ((2, 3, 2, 5), (3, 2), "(3x2x5). Calculated output size: (3x0x2)"),
        ((3, 2, 2), 3, "(3x2x2). Calculated output size: (3x0x0)"),
    ],
)
def test_pooling_windows_larger_than_the_input_raise_like_torch(pool, shape, kernel, message):
    expected = re.escape(f"Given input size: {message}. Output size is too small")
    assert_raises_like_torch(lambda F, T: getattr(F, pool)(T.ones(*shape), kernel), RuntimeError, expected)


# ----------------------------------------------------------------------------- bool, uint8 and scalar conversion

BOOL_SUB = re.escape(
    "Subtraction, the `-` operator, with a bool tensor is not supported. "
    "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
)
TWO_BOOL_SUB = re.escape(
    "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead."
)


@pytest.mark.parametrize(
    "op, message",
    [
        (lambda T: T.tensor([True, False]) - 1, BOOL_SUB),
        (lambda T: 1 - T.tensor([True, False]), BOOL_SUB),
        (lambda T: T.tensor([1.0, 2.0]) - T.tensor([True, False]), BOOL_SUB),
        (lambda T: T.zeros(2).sub_(T.tensor([True, False])), BOOL_SUB),
        (lambda T: T.tensor([True, False]) - T.tensor([True, True]), TWO_BOOL_SUB),
        (lambda T: T.tensor([True, False]) - True, TWO_BOOL_SUB),
        (lambda T: T.tensor([True]).sub(T.tensor([True]), alpha=1.5), TWO_BOOL_SUB),
    ],
)
def test_subtraction_with_a_bool_tensor_raises_like_torch(op, message):
    assert_raises_like_torch(lambda F, T: op(T), RuntimeError, message)


def test_bool_power_of_bool_raises_like_torch():
    message = re.escape("\"pow\" not implemented for 'Bool'")
    assert_raises_like_torch(
        lambda F, T: T.tensor([True, False]) ** T.tensor([True, True]), NotImplementedError, message
    )
    assert_raises_like_torch(lambda F, T: True ** T.tensor([True, False]), NotImplementedError, message)
    for T in modules():
        b = T.tensor([True, False])
        assert (b**True).tolist() == [True, False] and (b**False).tolist() == [True, True]
        assert (b**2).tolist() == [1, 0]


@pytest.mark.parametrize(
    "op, expected",
    [
        (lambda T, u: u // -2, [0, 0, 0]),
        (lambda T, u: u % -2, [1, 200, 3]),
        (lambda T, u: -2 // u, [254, 1, 84]),
        (lambda T, u: -2 % u, [0, 54, 2]),
        (lambda T, u: u.fmod(-2), [1, 200, 3]),
        (lambda T, u: u.pow(T.tensor(-1)), [1, 0, 171]),
    ],
)
def test_python_numbers_wrap_into_uint8_before_the_op(op, expected):
    # -2 becomes 254 in uint8 first, as PyTorch converts it.
    for T in modules():
        out = op(T, T.tensor([1, 200, 3], dtype=T.uint8))
        assert out.dtype == T.uint8 and out.tolist() == expected
    message = "ZeroDivisionError"
    assert_raises_like_torch(lambda F, T: T.tensor([1], dtype=T.uint8) // 256, RuntimeError, message)


def test_integer_addcmul_truncates_a_float_value():
    for T in modules():
        out = T.tensor([4]).addcmul(T.tensor([2]), T.tensor([3]), value=1.7)
        assert out.dtype == T.int64 and out.tolist() == [10]
        assert T.tensor([4]).addcmul(T.tensor([2]), T.tensor([3]), value=-1.7).tolist() == [-2]
        t = T.tensor([4], dtype=T.int32)
        t.addcmul_(T.tensor([2], dtype=T.int32), T.tensor([3], dtype=T.int32), value=0.5)
        assert t.dtype == T.int32 and t.tolist() == [4]
        assert T.tensor([4]).addcmul(T.tensor([2]), T.tensor([3.0]), value=1.5).tolist() == [13.0]
    overflow = "value cannot be converted to type {} without overflow"
    i8 = lambda F, T: T.ones(1, dtype=T.int8)  # noqa: E731
    assert_raises_like_torch(
        lambda F, T: i8(F, T).addcmul(i8(F, T), i8(F, T), value=300), RuntimeError, overflow.format("int8_t")
    )
    assert_raises_like_torch(
        lambda F, T: T.ones(1).addcmul(T.ones(1), T.ones(1), value=1j), RuntimeError, overflow.format("float")
    )


@pytest.mark.parametrize(
    "op, message",
    [
        (
            lambda T: T.tensor([5, -7, 3]).index_put_((T.tensor([0]),), T.tensor(1.5)),
            "Index put requires the source and destination dtypes match, got Long for the destination and Float for the source.",
        ),
        (
            lambda T: T.tensor([5, -7, 3]).index_put((T.tensor([0]),), T.tensor([1], dtype=T.int32)),
            "Index put requires the source and destination dtypes match, got Long for the destination and Int for the source.",
        ),
        (
            lambda T: T.zeros(2).__setitem__(0, 1 + 2j),
            "value cannot be converted to type float without overflow",
        ),
        (
            lambda T: T.zeros(2).__setitem__(T.tensor([0]), 1j),
            "value cannot be converted to type float without overflow",
        ),
        (
            lambda T: T.zeros(2, dtype=T.int64).__setitem__(0, 1e30),
            "value cannot be converted to type int64_t without overflow",
        ),
        (
            lambda T: T.zeros(2).masked_fill(T.tensor([True, False]), 1j),
            "value cannot be converted to type float without overflow",
        ),
        (
            lambda T: T.zeros(2).masked_fill_(T.tensor([True, False]), T.tensor(1j)),
            "value cannot be converted to type float without overflow",
        ),
        (
            lambda T: T.tensor([4.0]).add(T.tensor([1.0]), alpha=1j),
            "For non-complex input tensors, argument alpha must not be a complex number.",
        ),
        (
            lambda T: T.zeros(2, 3).masked_fill(T.tensor([True, False, True]), T.tensor([2.0])),
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).",
        ),
    ],
)
def test_values_of_another_dtype_raise_like_torch(op, message):
    assert_raises_like_torch(lambda F, T: op(T), RuntimeError, re.escape(message))


def test_values_converted_as_torch_converts_them():
    # Python numbers and one value at a single bool mask take the tensor's dtype.
    for T in modules():
        x = T.tensor([5, -7, 3])
        x[T.tensor([0])] = 1.5
        x[T.tensor([False, True, False])] = T.tensor(2.5)
        assert x.tolist() == [1, 2, 3]
        u = T.zeros(2, dtype=T.uint8)
        u[0] = -1
        assert u.tolist() == [255, 0]
        assert T.zeros(2).masked_fill(T.tensor([True, False]), 1 + 0j).tolist() == [1.0, 0.0]


# ----------------------------------------------------------------------------- complex var and std


@pytest.mark.parametrize("is_std", [False, True])
@pytest.mark.parametrize("dim, correction", [(None, 1), (1, 0), (0, 1)])
def test_var_and_std_of_complex_values_are_real_with_their_gradient(is_std, dim, correction):
    z = np.array([[1 + 2j, 3 - 1j, 0.25j], [-2 + 0.5j, 2, 1 - 1j]])

    def spread(z):
        dev = z - z.mean(axis=dim, keepdims=True)
        n = z.size if dim is None else z.shape[dim]
        v = (np.abs(dev) ** 2).sum(axis=dim) / (n - correction)
        return np.sqrt(v) if is_std else v

    # PyTorch's convention for a real loss of complex inputs: dL/dRe + i dL/dIm.
    weights = np.arange(1.0, np.asarray(spread(z)).size + 1).reshape(np.shape(spread(z)))
    h, expected = 1e-6, np.zeros_like(z)
    for idx in np.ndindex(z.shape):
        for step in (1, 1j):
            e = np.zeros_like(z)
            e[idx] = h * step
            expected[idx] += step * ((spread(z + e) - spread(z - e)) * weights).sum() / (2 * h)
    grads = []
    for T in modules():
        t = T.tensor(z, requires_grad=True)
        kwargs = {} if dim is None else {"dim": dim}
        y = (t.std if is_std else t.var)(correction=correction, **kwargs)
        assert y.dtype == T.float64
        np.testing.assert_allclose(y.detach().numpy(), spread(z), rtol=1e-12)
        (y * T.tensor(weights)).sum().backward()
        np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6, atol=1e-8)
        grads.append(t.grad.numpy())
    if has_torch:
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_var_mean_of_complex_values():
    for T in modules():
        v, m = T.var_mean(T.tensor([1 + 1j, 3 - 1j]), correction=0)
        assert v.item() == 2.0 and m.item() == 2 + 0j


# ----------------------------------------------------------------------------- all and any over no dims


@pytest.mark.parametrize("op", ["all", "any"])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "float32"])
def test_all_and_any_over_an_empty_list_of_dims_reduce_none(op, dtype):
    values = [[1, 0, 2], [0, 0, 3]]
    for T in modules():
        t = T.tensor(values, dtype=getattr(T, dtype))
        out = getattr(t, op)(dim=())
        assert out.dtype == (T.uint8 if dtype == "uint8" else T.bool)
        assert out.tolist() == [[bool(v) for v in row] for row in values]
        assert getattr(T, op)(t, dim=()).shape == t.shape
        # No dims given still reduces them all.
        assert getattr(t, op)().shape == ()


# ----------------------------------------------------------------------------- index and dim messages


@pytest.mark.parametrize(
    "fn, kind, message",
    [
        (lambda F, T: T.zeros(3, 4).index_select(0, T.tensor([3])), IndexError, "index out of range in self"),
        (
            lambda F, T: T.zeros(3, 4).index_select(0, T.tensor([-1])),
            IndexError,
            "index out of range in self",
        ),
        (
            lambda F, T: T.zeros(3, 4).select(0, 5),
            IndexError,
            re.escape("select(): index 5 out of range for tensor of size [3, 4] at dimension 0"),
        ),
        (
            lambda F, T: T.zeros(3, 4).select(1, -5),
            IndexError,
            re.escape("select(): index -5 out of range for tensor of size [3, 4] at dimension 1"),
        ),
        (lambda F, T: T.zeros(3, 4)[5], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
        (
            lambda F, T: T.zeros(3, 4).movedim((0, 0), (1, 0)),
            RuntimeError,
            re.escape("movedim: repeated dim in `source` ([0, 0])"),
        ),
        (
            lambda F, T: T.zeros(3, 4).movedim((0, 1), (1, -1)),
            RuntimeError,
            re.escape("movedim: repeated dim in `destination` ([1, -1])"),
        ),
    ],
)
def test_index_and_dim_errors_read_as_torch_words_them(fn, kind, message):
    assert_raises_like_torch(fn, kind, message)


def test_index_select_still_selects_in_range():
    for T in modules():
        t = T.arange(12.0).reshape(3, 4)
        assert t.index_select(1, T.tensor([3, 0])).tolist() == [[3.0, 0.0], [7.0, 4.0], [11.0, 8.0]]
        assert t.select(1, -1).tolist() == [3.0, 7.0, 11.0]


# ----------------------------------------------------------------------------- node names


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda t: t.squeeze(), "SqueezeBackward0"),
        (lambda t: t.squeeze(0), "SqueezeBackward1"),
        (lambda t: t.squeeze(-1), "SqueezeBackward1"),
        (lambda t: t.squeeze((0, 2)), "SqueezeBackward2"),
        (lambda t: t.squeeze(dim=(0,)), "SqueezeBackward2"),
        (lambda t: t.squeeze_(), "SqueezeBackward3"),
        (lambda t: t.squeeze_(0), "SqueezeBackward4"),
        (lambda t: t.squeeze_((0, 2)), "SqueezeBackward5"),
        (lambda t: t.unsqueeze_(0), "UnsqueezeBackward1"),
        (lambda t: t.transpose_(0, 1), "TransposeBackward1"),
        (lambda t: t.swapdims_(0, 1), "TransposeBackward1"),
        (lambda t: t.squeeze_(2).t_(), "TBackward1"),
    ],
)
def test_shape_nodes_are_named_by_the_form_called(call, name):
    """Out of place and in place, as PyTorch names them (the gradient reaches the input either way)."""
    for T in modules():
        t = T.zeros(1, 3, 1, requires_grad=True)
        out = call(t * 1)
        assert out.grad_fn.name() == name
        out.sum().backward()
        assert t.grad.shape == t.shape

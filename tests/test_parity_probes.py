"""Everyday PyTorch idioms found to behave differently under ``import ferrograd as torch``:
tensor creation from mixed data, legacy tensor types, conversions to Python numbers, ``to``
and the casts, NumPy scalars in arithmetic, return-type printing and error types. Each test
states the expected behaviour and, when torch is installed, checks torch agrees."""

import math
import re
import warnings

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch, torch


def modules():
    return [fg] + ([torch] if has_torch else [])


def same_outcome(fn):
    """Runs ``fn(T)`` for ferrograd and, when installed, torch: both return values with the same
    dtype name and values, or both raise the same exception type with the same message (the
    module's name aside). Returns ferrograd's outcome."""
    outcomes = []
    for T in modules():
        try:
            value = fn(T)
        except Exception as e:  # the comparison is the point
            outcomes.append((type(e).__name__, str(e).split("\n")[0].replace("torch", "ferrograd")))
        else:
            outcomes.append(("value", _described(value)))
    if has_torch:
        assert outcomes[0] == outcomes[1]
    return outcomes[0]


def _described(value):
    if isinstance(value, (fg.Tensor, *((torch.Tensor,) if has_torch else ()))):
        return str(value.dtype).rsplit(".", 1)[-1], value.tolist()
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [_described(v) for v in value]
    return value


# ----------------------------------------------------------------------------- tensor()


@pytest.mark.parametrize(
    "make, dtype",
    [
        (lambda T: T.tensor([np.float32(1.5), 2.5]), "float32"),
        (lambda T: T.tensor([1, np.float64(2.0)]), "float64"),
        (lambda T: T.tensor([np.int32(1), np.int32(2)]), "int32"),
        (lambda T: T.tensor([np.int32(1), 2]), "int64"),
        (lambda T: T.tensor([np.uint8(1), np.uint8(2)]), "uint8"),
        (lambda T: T.tensor([np.int16(1), np.uint8(2)]), "int16"),
        (lambda T: T.tensor([np.int32(1), 2.5]), "float32"),
        (lambda T: T.tensor([[np.float32(1.0)], [2.0]]), "float32"),
        (lambda T: T.tensor([np.bool_(True), False]), "bool"),
        (lambda T: T.tensor([True, 2]), "int64"),
        (lambda T: T.tensor([1, 2.5, 1j]), "complex64"),
        (lambda T: T.tensor(range(3)), "int64"),
        (lambda T: T.tensor([(1, 2), (3, 4)]), "int64"),
        (lambda T: T.tensor([T.tensor(1, dtype=T.int32), T.tensor(2, dtype=T.int32)]), "int32"),
        (lambda T: T.tensor([T.tensor(1, dtype=T.int32), 2.5]), "float32"),
        (lambda T: T.tensor([1, 2], dtype=float), "float64"),
        (lambda T: T.tensor([1.7, 0.0], dtype=int), "int64"),
        (lambda T: T.tensor([1, 0], dtype=bool), "bool"),
        (lambda T: T.tensor([1, 2], dtype=complex), "complex128"),
    ],
)
def test_tensor_dtype_of_mixed_data(make, dtype):
    kind, (got_dtype, _) = same_outcome(make)
    assert kind == "value" and got_dtype == dtype


def test_tensor_from_a_list_of_numpy_arrays_keeps_their_dtype():
    rows = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    if has_torch:
        with pytest.warns(UserWarning, match="list of numpy.ndarrays is extremely slow"):
            expected = torch.tensor(rows)
        assert expected.dtype == torch.float64
    out = fg.tensor(rows)
    assert out.dtype == fg.float64 and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_tensor_of_tensors_that_require_grad_copies_their_values():
    def make(T):
        a = T.tensor(1.5, requires_grad=True)
        return T.tensor([a, 2 * a.detach()])

    if has_torch:
        with pytest.warns(UserWarning, match="requires_grad=True to a scalar"):
            expected = make(torch)
        assert not expected.requires_grad
    out = make(fg)
    assert out.tolist() == [1.5, 3.0] and not out.requires_grad and out.grad_fn is None


@pytest.mark.parametrize(
    "data, kind, message",
    [
        ([[1, 2], [3]], ValueError, "expected sequence of length 2 at dim 1 (got 1)"),
        ([[[1, 2]], [[3]]], ValueError, "expected sequence of length 2 at dim 2 (got 1)"),
        ([[1, 2], [3, 4], [5, 6, 7]], ValueError, "expected sequence of length 2 at dim 1 (got 3)"),
        ([1, [2]], TypeError, "'list' object cannot be interpreted as an integer"),
        ([1.5, [2]], TypeError, "must be real number, not list"),
        ([[1, 2], 3], TypeError, "not a sequence"),
        ("abc", TypeError, "new(): invalid data type 'str'"),
        ([1, "a"], TypeError, "new(): invalid data type 'str'"),
        (None, RuntimeError, "Could not infer dtype of NoneType"),
        ([None], RuntimeError, "Could not infer dtype of NoneType"),
        ({1: 2}, RuntimeError, "Could not infer dtype of dict"),
    ],
)
def test_tensor_rejects_bad_data_as_pytorch_does(data, kind, message):
    for T in modules():
        with pytest.raises(kind, match=re.escape(message)):
            T.tensor(data)


def test_tensor_dtype_argument_and_requires_grad_errors():
    for T in modules():
        with pytest.raises(
            TypeError, match=re.escape("tensor(): argument 'dtype' must be torch.dtype, not str")
        ):
            T.tensor([1.0], dtype="float32")
        with pytest.raises(
            RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients$"
        ):
            T.tensor([1, 2], requires_grad=True)
    assert fg.tensor([1, 2], dtype=fg.float32, requires_grad=True).requires_grad


def test_ragged_data_in_asarray_is_rejected_too():
    with pytest.raises(ValueError, match=re.escape("expected sequence of length 2 at dim 1 (got 1)")):
        fg.asarray([[1, 2], [3]])
    assert fg.asarray([np.float32(1.0), 2.0]).dtype == fg.float32


# ----------------------------------------------------------------------------- NumPy operands


@pytest.mark.parametrize("scalar", [np.float32(2.0), np.float64(2.0), np.int64(2)])
def test_numpy_scalar_times_tensor_is_a_tensor_that_differentiates(scalar):
    for T in modules():
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = scalar * x
        assert isinstance(y, T.Tensor) and y.dtype == T.float32
        y.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]
        assert isinstance(scalar - x, T.Tensor) and isinstance(x / scalar, T.Tensor)


# ----------------------------------------------------------------------------- devices


def test_tensor_device_is_a_device_object():
    for T in modules():
        x = T.zeros(2)
        assert x.device.type == "cpu" and str(x.device) == "cpu" and x.device.index is None
        assert x.device == T.device("cpu") and repr(x.device) == "device(type='cpu')"


def test_cuda_is_unavailable():
    for T in modules():
        with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
            T.zeros(2).cuda()


# ----------------------------------------------------------------------------- legacy tensor types


@pytest.mark.parametrize(
    "name, dtype",
    [
        ("FloatTensor", "float32"),
        ("DoubleTensor", "float64"),
        ("LongTensor", "int64"),
        ("IntTensor", "int32"),
        ("ShortTensor", "int16"),
        ("CharTensor", "int8"),
        ("ByteTensor", "uint8"),
        ("BoolTensor", "bool"),
    ],
)
def test_legacy_tensor_types(name, dtype):
    for T in modules():
        cls = getattr(T, name)
        values = cls([1, 0, 1])
        assert values.dtype == getattr(T, dtype) and values.tolist() == [1, 0, 1]
        assert cls(2, 3).shape == (2, 3) and cls().shape == (0,)
        assert isinstance(values, cls) and isinstance(values, T.Tensor)
        assert not isinstance(values.to(T.complex64), cls)
        assert T.zeros(2).type(cls).dtype == getattr(T, dtype)
        assert T.zeros(2).type(f"torch.{name}").dtype == getattr(T, dtype)


def test_legacy_type_names_that_do_not_exist():
    for T in modules():
        with pytest.raises(ValueError, match=re.escape("invalid type: 'torch.NoSuchTensor'")):
            T.zeros(2).type("torch.NoSuchTensor")


def test_tensor_constructor_with_data_or_sizes():
    for T in modules():
        assert T.Tensor([1, 2]).dtype == T.float32 and T.Tensor([1, 2]).tolist() == [1.0, 2.0]
        assert T.Tensor(2, 3).shape == (2, 3) and T.Tensor().shape == (0,)
        assert T.Tensor([[1, 2]]).shape == (1, 2) and not T.Tensor([1.0]).requires_grad
        assert T.Tensor(T.Size([2, 1])).shape == (2, 1)


# ----------------------------------------------------------------------------- functions


def test_pow_with_a_number_base():
    for T in modules():
        x = T.tensor([0.5, 2.0], dtype=T.float64, requires_grad=True)
        y = T.pow(2, x)
        y.sum().backward()
        np.testing.assert_allclose(y.detach().numpy(), 2 ** np.array([0.5, 2.0]))
        np.testing.assert_allclose(x.grad.numpy(), math.log(2) * 2 ** np.array([0.5, 2.0]))
        assert T.pow(x, 2).tolist() == [0.25, 4.0]
    assert fg.autograd.gradcheck(
        lambda x: fg.pow(3.0, x), (fg.tensor([0.1, -0.7], dtype=fg.float64, requires_grad=True),)
    )


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda T: T.add(1, T.tensor([1, 2])), ("int64", [2, 3])),
        (lambda T: T.add(2.5, T.tensor([1.0, 2.0]), alpha=2), ("float32", [4.5, 6.5])),
        (lambda T: T.add(2, 3.5), ("float32", 5.5)),
        (lambda T: T.mul(2.5, T.tensor([1, 2])), ("float32", [2.5, 5.0])),
        (lambda T: T.multiply(2, T.tensor([1, 2], dtype=T.int32)), ("int32", [2, 4])),
        (lambda T: T.sub(1, T.tensor([1, 2])), ("int64", [0, -1])),
        (lambda T: T.sub(1, T.tensor([1.0, 2.0]), alpha=2), ("float32", [-1.0, -3.0])),
        (lambda T: T.subtract(3, T.tensor([1, 2], dtype=T.uint8), alpha=2), ("uint8", [1, 255])),
        (lambda T: T.true_divide(1, T.tensor([2])), ("float32", [0.5])),
        (lambda T: T.div(1, T.tensor([2])), ("float32", [0.5])),
        (lambda T: T.floor_divide(7, T.tensor([2])), ("int64", [3])),
        (lambda T: T.remainder(-3, T.tensor([2, 5])), ("int64", [1, 2])),
        # The number takes the tensor's dtype first: -3 next to uint8 is 253.
        (lambda T: T.remainder(-3, T.tensor([2, 5], dtype=T.uint8)), ("uint8", [1, 3])),
        (lambda T: T.bitwise_and(1, T.tensor([1, 3])), ("int64", [1, 1])),
        (lambda T: T.bitwise_or(True, T.tensor([False])), ("bool", [True])),
        (lambda T: T.bitwise_xor(1, T.tensor([1, 2])), ("int64", [0, 3])),
        (lambda T: T.bitwise_left_shift(1, T.tensor([1, 2])), ("int64", [2, 4])),
        (lambda T: T.pow(2, T.tensor([1, 2])), ("int64", [2, 4])),
        (lambda T: T.add(2, T.tensor([1.0, 2.0]), out=T.empty(2)), ("float32", [3.0, 4.0])),
    ],
)
def test_functions_take_a_python_number_first(call, expected):
    assert same_outcome(call) == ("value", expected)


def test_a_python_number_first_keeps_the_gradient_of_the_tensor():
    for T in modules():
        x = T.tensor([1.0, 2.0], requires_grad=True)
        T.sub(1, x, alpha=3).sum().backward()
        assert x.grad.tolist() == [-3.0, -3.0]


@pytest.mark.parametrize(
    "call, expected",
    [
        (
            lambda T: T.maximum(1, T.tensor([2])),
            "maximum(): argument 'input' (position 1) must be Tensor, not int",
        ),
        (
            lambda T: T.atan2(1.5, T.tensor([2.0])),
            "atan2(): argument 'input' (position 1) must be Tensor, not float",
        ),
        (lambda T: T.exp(2), "exp(): argument 'input' (position 1) must be Tensor, not int"),
        (
            lambda T: T.add(None, T.tensor([2])),
            "add(): argument 'input' (position 1) must be Tensor, not NoneType",
        ),
        (lambda T: T.add("a", T.tensor([2])), "add(): argument 'input' (position 1) must be Tensor, not str"),
        (
            lambda T: T.eq(1, T.tensor([2])),
            "eq() received an invalid combination of arguments - got (int, Tensor), but expected one of:",
        ),
        (
            lambda T: T.fmod(True, other=T.tensor([2])),
            "fmod() received an invalid combination of arguments - got (bool, other=Tensor), but expected one of:",
        ),
        (
            lambda T: T.copysign(1, T.tensor([2.0])),
            "copysign() received an invalid combination of arguments - got (int, Tensor), but expected one of:",
        ),
    ],
)
def test_functions_refuse_a_python_number_first_where_torch_does(call, expected):
    assert same_outcome(call) == ("TypeError", expected)


@pytest.mark.parametrize("name", ["eq", "lt", "fmod", "copysign"])
def test_refusal_of_a_number_first_lists_the_forms_torch_offers(name):
    with pytest.raises(TypeError) as ours:
        getattr(fg, name)(1, fg.tensor([2.0]))
    assert str(ours.value).endswith(
        "expected one of:\n"
        " * (Tensor input, Tensor other, *, Tensor out = None)\n"
        " * (Tensor input, Number other, *, Tensor out = None)\n"
    )
    if has_torch:
        with pytest.raises(TypeError) as theirs:
            getattr(torch, name)(1, torch.tensor([2.0]))
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda T, x: T.var_mean(x, 1, unbiased=False), lambda a: (a.var(1), a.mean(1))),
        (
            lambda T, x: T.var_mean(x, dim=0, unbiased=True, keepdim=True),
            lambda a: (a.var(0, ddof=1, keepdims=True), a.mean(0, keepdims=True)),
        ),
        (lambda T, x: T.var_mean(x, False), lambda a: (a.var(), a.mean())),
        (lambda T, x: T.std_mean(x, unbiased=False), lambda a: (a.std(), a.mean())),
        (lambda T, x: T.std_mean(x, (0, 1), correction=2), lambda a: (a.std(ddof=2), a.mean())),
        (
            lambda T, x: T.std_mean(x, 1, True, True),
            lambda a: (a.std(1, ddof=1, keepdims=True), a.mean(1, keepdims=True)),
        ),
    ],
)
def test_var_mean_and_std_mean_take_unbiased(call, expected):
    data = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
    want_spread, want_mean = expected(data)
    for T in modules():
        spread, mean = call(T, T.tensor(data))
        np.testing.assert_allclose(spread.numpy(), want_spread)
        np.testing.assert_allclose(mean.numpy(), want_mean)


# ----------------------------------------------------------------------------- to() and the casts


def test_to_with_copy_true_copies():
    for T in modules():
        x = T.tensor([1.0, 2.0])
        for y in (x.to(T.float32, copy=True), x.to(copy=True), x.to("cpu", copy=True)):
            y[0] = 5.0
            assert x.tolist() == [1.0, 2.0] and y is not x
        assert x.to(T.float64, copy=True).dtype == T.float64


def test_casts_to_the_same_dtype_return_the_tensor_itself():
    for T in modules():
        x = T.tensor([1.0, 2.0], requires_grad=True)
        assert x.to(T.float32) is x and x.to("cpu") is x and x.to(x) is x and x.float() is x
        assert x.type(T.float32) is x and x.type_as(x) is x and x.contiguous() is x
        assert x.double() is not x and x.double().grad_fn is not None
        n = T.tensor([1, 2])
        assert n.long() is n and n.int() is not n
        m = T.ones(2, 3).t()
        assert m.contiguous() is not m and m.contiguous().is_contiguous()


def test_to_cuda_is_refused():
    for T in modules():
        for target in ("cuda", "cuda:0"):
            with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
                T.zeros(2).to(target)


# ----------------------------------------------------------------------------- Python numbers


@pytest.mark.parametrize("convert", [float, int, complex])
def test_python_numbers_from_tensors_of_many_elements(convert):
    for T in modules():
        with pytest.raises(ValueError, match="^only one element tensors can be converted to Python scalars$"):
            convert(T.tensor([1.0, 2.0]))
        assert convert(T.tensor([[3.0]])) == convert(3.0)


@pytest.mark.parametrize(
    "convert",
    [
        lambda T: int(T.tensor(1e20)),  # float32's nearest value, exactly
        lambda T: int(T.tensor(1e20, dtype=T.float64)),
        lambda T: int(T.tensor(-(2.0**70), dtype=T.float64)),
        lambda T: int(T.tensor(-2.7)),
        lambda T: int(T.tensor(float("inf"))),
        lambda T: int(T.tensor(float("-inf"), dtype=T.float64)),
        lambda T: int(T.tensor(float("nan"))),
        lambda T: int(T.tensor(2**62)),
        lambda T: int(T.tensor(True)),
        lambda T: int(T.tensor(2.5 + 0j)),
        lambda T: int(T.tensor(2.5 + 1j)),
        lambda T: float(T.tensor(1j)),
        lambda T: float(T.tensor(complex(1.5, float("nan")), dtype=T.complex64)),
        lambda T: float(T.tensor(-1.5 - 0j)),
        lambda T: complex(T.tensor(1.5 + 2j)),
    ],
)
def test_python_numbers_keep_their_value_or_raise(convert):
    # int() of a float is exact however large, as Python's; infinities, NaNs
    # and complex values with an imaginary part raise instead of wrapping.
    outcome = same_outcome(convert)
    if outcome[0] == "value":
        assert type(outcome[1]) in (int, float, complex)


def test_integer_tensors_of_every_width_are_indices():
    items = list(range(10, 20))
    for T in modules():
        for dtype in (T.int8, T.int16, T.int32, T.int64, T.uint8, T.bool):
            assert items[T.tensor(1, dtype=dtype)] == 11
        with pytest.raises(
            TypeError, match="only integer tensors of a single element can be converted to an index"
        ):
            items[T.tensor(1.0)]


def test_format_spec_on_tensors():
    for T in modules():
        assert f"{T.tensor(2.5):.3f}" == "2.500" and f"{T.tensor(3):04d}" == "0003"
        assert f"{T.tensor([1.0, 2.0])}" == str(T.tensor([1.0, 2.0]))
        with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
            format(T.tensor([1.0, 2.0]), ".2f")


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.tensor([1, 2]).softmax(0),
        lambda T: T.tensor([1, 2]).log_softmax(0),
        lambda T: T.rand_like(T.tensor([1, 2])),
        lambda T: T.randn_like(T.tensor([1, 2])),
        lambda T: T.tensor([1.0]) & T.tensor([1.0]),
        lambda T: T.tensor([[True]]).mm(T.tensor([[True]])),
    ],
)
def test_kernels_missing_for_a_dtype_raise_not_implemented_error(call):
    kind, message = same_outcome(call)
    assert kind == "NotImplementedError" and "not implemented for" in message


def test_error_messages():
    cases = [
        (lambda T: T.where(T.tensor([1.0]), T.zeros(1), T.ones(1)), "RuntimeError", "dtype Float"),
        (lambda T: T.where(T.tensor([1]), T.zeros(1), T.ones(1)), "RuntimeError", "dtype Long"),
        (lambda T: T.cat([]), "ValueError", "expected a non-empty list of Tensors"),
        (lambda T: T.cat(T.zeros(2, 3)), "TypeError", "must be tuple of Tensors, not Tensor"),
        (lambda T: T.stack(T.zeros(2, 3)), "TypeError", "must be tuple of Tensors, not Tensor"),
        (lambda T: T.tensor([1, 2]).add(1, alpha=0.5), "RuntimeError", "alpha must not be a floating point"),
        (lambda T: T.tensor([1, 2]).sub(T.tensor([1, 1]), alpha=2.0), "RuntimeError", "alpha must not"),
        (lambda T: T.tensor([1.0, 2.0]).add(1, alpha=True), "RuntimeError", "Boolean alpha only supported"),
    ]
    for call, kind, fragment in cases:
        got_kind, message = same_outcome(call)
        assert got_kind == kind and fragment in message
    assert fg.tensor([1, 2]).add(1, alpha=3).tolist() == [4, 5]
    assert fg.tensor([True, False]).add(fg.tensor([True, True]), alpha=True).tolist() == [True, True]


# ----------------------------------------------------------------------------- index assignment


def test_assignment_drops_leading_unit_dims_of_the_value():
    for T in modules():
        x = T.zeros(2, 3)
        x[0] = T.tensor([[1.0, 2.0, 3.0]])
        x[:, :] = x[None, None] * 2
        x[T.tensor([1])] = T.tensor([[[7.0, 8.0, 9.0]]])
        assert x.tolist() == [[2.0, 4.0, 6.0], [7.0, 8.0, 9.0]]


def test_assignment_errors():
    for call, kind, fragment in [
        (
            lambda T: T.zeros(3).__setitem__(T.tensor([True, False, True]), T.ones(3)),
            "RuntimeError",
            "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2]",
        ),
        (
            lambda T: T.zeros(2, 3).__setitem__(0, [1.0, 2.0, 3.0]),
            "TypeError",
            "can't assign a list to a ferrograd.FloatTensor",
        ),
        (
            lambda T: T.zeros(2, 3).__setitem__(0, np.ones(3)),
            "TypeError",
            "can't assign a numpy.ndarray to a ferrograd.FloatTensor",
        ),
    ]:
        got_kind, message = same_outcome(call)
        assert got_kind == kind and message == fragment


# ----------------------------------------------------------------------------- NumPy arrays as operands


def test_tensor_operators_take_numpy_arrays():
    for T in modules():
        with warnings.catch_warnings():
            # torch gets there through NumPy's __array_wrap__, which NumPy 2 deprecates.
            warnings.simplefilter("ignore", DeprecationWarning)
            x = T.tensor([1.0, 2.0])
            total = x + np.array([1.0, 2.0])
            assert isinstance(total, T.Tensor) and total.dtype == T.float64 and total.tolist() == [2.0, 4.0]
            assert (x * np.array([3, 4], dtype=np.float32)).tolist() == [3.0, 8.0]
            assert (x == np.array([1.0, 0.0])).tolist() == [True, False]


# ----------------------------------------------------------------------------- printing and reductions


def test_return_types_print_as_pytorch_prints_them():
    x = np.array([[1.0, 5.0], [7.0, 2.0]], dtype=np.float32)
    calls = [
        lambda T, t: t.max(1),
        lambda T, t: t.min(0, keepdim=True),
        lambda T, t: t.sort(1),
        lambda T, t: t.topk(1),
        lambda T, t: t.median(1),
        lambda T, t: t.kthvalue(1, 1),
        lambda T, t: T.cummax(t, 0),
        lambda T, t: T.aminmax(t),
        lambda T, t: T.linalg.slogdet(t),
        lambda T, t: T.linalg.qr(t),
    ]
    for call in calls:
        text = repr(call(fg, fg.tensor(x)))
        name = text.split("(", 1)[0]
        assert name.startswith("ferrograd.return_types.") and "(\n" in text and ",\n" in text
        if has_torch:
            assert text == repr(call(torch, torch.tensor(x))).replace("torch", "ferrograd")


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.norm(1),
        lambda t: t.norm(p=1, dim=1),
        lambda t: t.norm(3, dim=(0, 1), keepdim=True),
        lambda t: t.norm(float("inf")),
        lambda t: t.norm(-float("inf"), 0),
        lambda t: t.norm(0.5),
        lambda t: t.norm("nuc"),
        lambda t: t.norm("fro", dim=1),
    ],
)
def test_norm_of_any_order(call):
    data = np.array([[1.0, -2.0, 0.5], [3.0, 4.0, -1.5]])
    x = fg.tensor(data, requires_grad=True)
    out = call(x)
    out.sum().backward()
    assert fg.autograd.gradcheck(call, (fg.tensor(data, requires_grad=True),))
    if has_torch:
        t = torch.tensor(data, requires_grad=True)
        expected = call(t)
        expected.sum().backward()
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10)
    order_one = fg.tensor(data).norm(1).item()
    assert order_one == pytest.approx(np.abs(data).sum())


@pytest.mark.parametrize("decimals", [1, 2, -1, -2, 3])
def test_round_to_decimals(decimals):
    values = np.array([1.25, 2.5, -0.55, 3.456, 1234.5678, -76.5])
    for dtype in (np.float32, np.float64):
        out = fg.tensor(values.astype(dtype)).round(decimals=decimals)
        np.testing.assert_allclose(out.numpy(), np.round(values.astype(dtype), decimals), rtol=1e-6)
        if has_torch:
            expected = torch.tensor(values.astype(dtype)).round(decimals=decimals)
            np.testing.assert_array_equal(out.numpy(), expected.numpy())
    x = fg.tensor(values, requires_grad=True)
    fg.round(x, decimals=decimals).sum().backward()
    assert x.grad.tolist() == [0.0] * len(values)
    kind, message = same_outcome(lambda T: T.tensor([1, 2]).round(decimals=decimals))
    assert kind == "NotImplementedError" and message == "\"round_cpu\" not implemented for 'Long'"


@pytest.mark.parametrize(
    "make, spec, expected",
    [
        (lambda T: (T.ones(3, requires_grad=True) * 2).sum(), "", "6.0"),
        (lambda T: T.tensor(0.01), "", "0.009999999776482582"),
        (lambda T: T.tensor(2.0, dtype=T.float64), ".3f", "2.000"),
        (lambda T: T.tensor(7), "03d", "007"),
        (lambda T: T.tensor(True), "", "True"),
        (lambda T: T.tensor([1.5]), "", "tensor([1.5000])"),
        (
            lambda T: T.nn.Parameter(T.tensor(0.5)),
            "",
            "Parameter containing:\ntensor(0.5000, requires_grad=True)",
        ),
    ],
)
def test_format_of_a_zero_dim_tensor_is_its_value(make, spec, expected):
    # Only a plain 0-d tensor formats as its value; others (Parameter too) as str().
    for T in modules():
        assert format(make(T), spec) == expected


@pytest.mark.parametrize("make", [lambda T: T.tensor([1.5]), lambda T: T.nn.Parameter(T.tensor(0.5))])
def test_format_spec_for_a_tensor_that_is_not_a_plain_scalar_raises(make):
    kind, message = same_outcome(lambda T: format(make(T), ".3f"))
    assert kind == "TypeError" and re.fullmatch(
        r"unsupported format string passed to \w+\.__format__", message
    )


def test_optimizer_repr_shows_a_tensor_learning_rate_as_its_value():
    for T in modules():
        opt = T.optim.Adam([T.nn.Parameter(T.tensor(0.5))], lr=T.tensor(0.01))
        assert "    lr: 0.009999999776482582" in repr(opt).splitlines()


# ----------------------------------------------------------------------------- grad modes


def test_grad_modes_decorate_without_parentheses():
    for T in modules():

        @T.no_grad
        def doubled(x):
            return x * 2

        @T.enable_grad
        def tripled(x):
            return x * 3

        x = T.tensor([1.0], requires_grad=True)
        assert not doubled(x).requires_grad and doubled.__name__ == "doubled"
        with T.no_grad():
            assert tripled(x).requires_grad
        assert T.is_grad_enabled()


# ----------------------------------------------------------------------------- print options


@pytest.mark.parametrize("sci_mode", [True, False])
def test_print_options_force_scientific_notation(sci_mode):
    arrays = [
        np.array([1e-8, 1.0, 2.5], dtype=np.float32),
        np.array([1.0, 2.0, 300.0], dtype=np.float32),
        np.array([[0.125, -3.5], [1e5, 7.0]]),
        np.array([0.0, float("nan"), float("inf")], dtype=np.float32),
        np.array([1 + 2j, 1e-6 - 3j], dtype=np.complex64),
    ]
    expected_numbers = {True: "1.0000e+00", False: "1.0000"}
    try:
        for T in modules():
            T.set_printoptions(sci_mode=sci_mode)
        assert fg.get_printoptions()["sci_mode"] is sci_mode
        assert expected_numbers[sci_mode] in repr(fg.tensor([1.0, 2.5]))
        for a in arrays:
            got = repr(fg.tensor(a))
            if has_torch:
                assert got == repr(torch.tensor(a)).replace("torch.", "ferrograd.")
    finally:
        for T in modules():
            T.set_printoptions(profile="default", sci_mode=None)
    assert (
        fg.get_printoptions()["sci_mode"] is None
        and repr(fg.tensor([1e-8, 1.0])) == "tensor([1.0000e-08, 1.0000e+00])"
    )


@pytest.mark.parametrize(
    "value, dtype",
    [
        (-1, "uint8"),
        (-200, "uint8"),
        (255, "uint8"),
        (256, "uint8"),
        (127, "int8"),
        (128, "int8"),
        (-129, "int8"),
        (2**31, "int32"),
        (2**63 - 1, "int64"),
        (2**63, "int64"),
        (2**64, "int64"),
    ],
)
def test_tensor_of_integers_outside_the_dtype(value, dtype):
    kind, outcome = same_outcome(lambda T: T.tensor([value, 1], dtype=getattr(T, dtype)))
    fits = np.iinfo(dtype).min <= value <= np.iinfo(dtype).max
    if fits or (dtype == "uint8" and value < 0):
        assert kind == "value" and outcome == (dtype, [value % 256 if dtype == "uint8" else value, 1])
    elif value >= 2**63:
        assert (kind, outcome) == ("ValueError", "Overflow when unpacking long long")
    else:
        assert (kind, outcome) == (
            "RuntimeError",
            f"value cannot be converted to type {dtype} without overflow",
        )


def test_shape_functions_take_their_arguments_by_keyword():
    for T in modules():
        x = T.arange(6).reshape(2, 3)
        assert T.reshape(x, shape=(3, 2)).shape == (3, 2) and T.reshape(x, (-1,)).shape == (6,)
        assert T.permute(x, dims=(1, 0)).tolist() == [[0, 3], [1, 4], [2, 5]]
        assert T.flip(x, dims=[0]).tolist() == [[3, 4, 5], [0, 1, 2]] and T.flip(x, (0, 1))[0, 0].item() == 5
        w = T.ones(2, 3, dtype=T.float64, requires_grad=True)
        T.flip(T.permute(T.reshape(w, shape=(3, 2)), dims=(1, 0)), dims=(0,)).sum().backward()
        assert w.grad.tolist() == [[1.0] * 3] * 2


def test_shape_methods_take_their_sizes_by_keyword():
    for T in modules():
        x = T.arange(6).reshape(2, 3)
        assert x.reshape(shape=(3, 2)).shape == (3, 2) and x.view(size=(3, 2)).shape == (3, 2)
        assert x.permute(dims=(1, 0)).shape == (3, 2) and x.flip(dims=(1,))[0].tolist() == [2, 1, 0]
        assert x.repeat(repeats=(1, 2)).shape == (2, 6) and x[:1].expand(size=(2, 2, 3)).shape == (2, 2, 3)
        with pytest.raises(TypeError):
            x.reshape(3, 2, shape=(3, 2))


@pytest.mark.parametrize(
    "make",
    [
        lambda T: T.zeros(2, dtype=T.long, requires_grad=True),
        lambda T: T.ones(2, dtype=T.int32, requires_grad=True),
        lambda T: T.arange(3, requires_grad=True),
        lambda T: T.full((2,), 1, requires_grad=True),
        lambda T: T.empty(2, dtype=T.bool, requires_grad=True),
        lambda T: T.randint(0, 3, (2,), requires_grad=True),
        lambda T: T.eye(2, dtype=T.long, requires_grad=True),
        lambda T: T.zeros_like(T.zeros(2, dtype=T.long), requires_grad=True),
    ],
)
def test_factories_refuse_requires_grad_for_integer_dtypes(make):
    assert same_outcome(make) == (
        "RuntimeError",
        "Only Tensors of floating point and complex dtype can require gradients",
    )


def test_tensors_without_elements_are_contiguous():
    for T in modules():
        empty = T.zeros(3, 0, 2).transpose(0, 2)
        assert T.zeros(0, 3).t().is_contiguous() and empty.is_contiguous()
        # contiguous() then returns the tensor itself.
        assert empty.contiguous().stride() == empty.stride()
        assert not T.zeros(2, 3).t().is_contiguous()


# ----------------------------------------------------------------------------- view(dtype)


@pytest.mark.parametrize(
    "dtype, shape",
    [
        ("int32", [2, 4]),
        ("float32", [2, 4]),
        ("float64", [2, 2]),
        ("int64", [2, 2]),
        ("complex64", [2, 2]),
        ("complex128", [2, 1]),
        ("int16", [2, 8]),
        ("uint8", [2, 16]),
        ("int8", [2, 16]),
    ],
)
def test_view_dtype_reads_the_same_memory_without_history(dtype, shape):
    for T in modules():
        x = T.arange(8.0).reshape(2, 4).requires_grad_()
        y = x.view(getattr(T, dtype))
        assert list(y.shape) == shape and y.stride() == (shape[1], 1)
        assert not y.requires_grad and y.grad_fn is None and y._base is None
        # The bytes are the same bytes, whichever way round they are read.
        assert y.view(T.float32).tolist() == x.tolist()
        assert y.detach().numpy().tobytes() == x.detach().numpy().tobytes()


def test_view_dtype_matches_numpy_bit_patterns():
    values = np.array([1.0, -2.5, 3.0e38, 0.0], dtype=np.float32)
    ints = fg.tensor(values).view(fg.int32)
    assert ints.tolist() == values.view(np.int32).tolist()
    assert fg.tensor(values.astype(np.float64)).view(dtype=fg.int64).tolist() == (
        values.astype(np.float64).view(np.int64).tolist()
    )
    pair = fg.tensor([1 + 2j, -3 - 4j], dtype=fg.complex64).view(fg.float32)
    assert pair.tolist() == [1.0, 2.0, -3.0, -4.0]


def test_view_dtype_shares_storage_and_version_counter():
    for T in modules():
        x = T.tensor([1.0, 2.0])
        bits = x.view(T.int32)
        bits[0] = 0
        assert x.tolist() == [0.0, 2.0] and x._version == bits._version == 1
        # Writing through it is allowed even on a leaf that requires grad: it
        # is no view for autograd.
        leaf = T.ones(4, requires_grad=True)
        leaf.view(T.int32).add_(1)
        assert leaf._version == 1 and leaf.tolist()[0] > 1.0


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda T: T.ones(2, 4).t().view(T.float64), "self.stride(-1) must be 1 to view Float as Double"),
        (lambda T: T.ones(2, 4)[:, 1:].view(T.float64), "self.size(-1) must be divisible by 2"),
        (lambda T: T.ones((), dtype=T.float64).view(T.float32), "self.dim() cannot be 0"),
        (lambda T: T.ones(4, 6)[:, 1:5].view(T.float64), "self.storage_offset() must be divisible by 2"),
        (lambda T: T.ones(4, 6)[1:, :4].view(T.complex128), "self.storage_offset() must be divisible by 4"),
        (lambda T: T.ones(3, 4).t().contiguous()[:, :2].view(T.float64), "self.stride(0) must be divisible"),
    ],
)
def test_view_dtype_refuses_layouts_that_do_not_divide(make, message):
    kind, text = same_outcome(make)
    assert kind == "RuntimeError" and message in text and "(different element sizes)" in text


def test_view_dtype_keeps_strided_layouts_of_equal_sized_types():
    for T in modules():
        y = T.ones(2, 4).t().view(T.int32)
        assert list(y.shape) == [4, 2] and y.stride() == (1, 4)


@pytest.mark.parametrize("source, target", [("uint8", "bool"), ("bool", "uint8"), ("bool", "int8")])
def test_view_dtype_keeps_bool_memory_bool(source, target):
    # A bool holds 0 or 1; a view of another type could read or write any
    # other byte, so ferrograd refuses what PyTorch allows here.
    x = fg.zeros(4, dtype=getattr(fg, source))
    with pytest.raises(RuntimeError, match="a bool tensor is viewed only as bool"):
        x.view(getattr(fg, target))
    assert x.view(x.dtype).tolist() == x.tolist()


def test_view_dtype_refuses_memory_not_aligned_for_the_new_type():
    raw = np.zeros(9, dtype=np.uint8)
    shifted = fg.from_numpy(raw[1:])
    with pytest.raises(RuntimeError, match="not aligned"):
        shifted.view(fg.int32)
    assert fg.from_numpy(raw[:8]).view(fg.int32).tolist() == [0, 0]

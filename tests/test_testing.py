"""ferrograd.testing: assert_close passes and fails where torch's does, with the same exception
type and message (tensors of every dtype, 0-d tensors, NumPy arrays, Python and NumPy numbers,
nested sequences and mappings, attribute checks, custom messages); make_tensor's ranges,
layouts and errors."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is the reference")


def outcome(T, actual, expected, **kwargs):
    """What ``T.testing.assert_close`` does: ``None`` when it passes, else the exception's type
    name and message, with the libraries' names taken out so that both read alike (ferrograd's
    ``Size`` prints as torch's does)."""
    try:
        T.testing.assert_close(actual, expected, **kwargs)
    except Exception as error:  # noqa: BLE001 - the exception is the result compared
        message = str(error)
        for name in ("torch", "ferrograd"):
            message = message.replace(name + ".", "LIB.").replace("'" + name, "'LIB")
        return type(error).__name__, message
    return None


# Each case builds its arguments from a torch-like module, so it runs the same under both.
CASES = {
    "float_mismatch": lambda T: (T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.5, 3.0]), {}),
    "two_mismatches": lambda T: (T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 2.5, 3.1]), {}),
    "int_2d": lambda T: (T.tensor([[1, 2], [3, 4]]), T.tensor([[1, 2], [3, 5]]), {}),
    "dtype": lambda T: (T.tensor([1.0, 2.0]), T.tensor([1.0, 2.0], dtype=T.float64), {}),
    "shape": lambda T: (T.ones(2, 1), T.ones(2), {}),
    "stride": lambda T: (T.ones(2, 2), T.ones(2, 2).t().contiguous().t(), {"check_stride": True}),
    "stride_unchecked": lambda T: (T.ones(2, 2), T.ones(2, 2).t().contiguous().t(), {}),
    "tensor_vs_float": lambda T: (T.tensor(1.0), 1.0, {}),
    "tensor_vs_list": lambda T: (T.ones(2), [1.0, 1.0], {}),
    "tensor_vs_array": lambda T: (T.ones(2), np.ones(2), {}),
    "arrays": lambda T: (np.ones(2), np.ones(2) + 1, {}),
    "array_scalars": lambda T: (np.array(1.0), np.array(2.0), {}),
    "ints": lambda T: (1, 2, {}),
    "int_vs_float": lambda T: (1, 1.0, {}),
    "int_vs_float_unchecked": lambda T: (1, 1.0, {"check_dtype": False}),
    "floats": lambda T: (1.0, 1.5, {}),
    "floats_within": lambda T: (1.0, 1.0 + 1e-9, {}),
    "floats_vs_zero": lambda T: (1.0, 0.0, {}),
    "ints_vs_zero": lambda T: (1, 0, {}),
    "nan_scalars": lambda T: (math.nan, math.nan, {}),
    "nan_scalars_equal": lambda T: (math.nan, math.nan, {"equal_nan": True}),
    "inf_scalars": lambda T: (math.inf, math.inf, {}),
    "complex_scalars": lambda T: (1 + 1j, 1 + 2j, {}),
    "booleans": lambda T: (True, False, {}),
    "numpy_numbers": lambda T: (np.float32(1.0), 1.0, {}),
    "numpy_int_vs_float": lambda T: (1, np.float64(1.0), {}),
    "list_item": lambda T: ([1.0, 2.0], [1.0, 2.5], {}),
    "nested_item": lambda T: ([{"a": [1, 2]}], [{"a": [1, 3]}], {}),
    "tuple_vs_list": lambda T: ((T.ones(1),), [T.ones(1)], {}),
    "mapping_item": lambda T: ({"a": T.ones(2)}, {"a": T.zeros(2)}, {}),
    "mapping_keys": lambda T: ({"b": 1, "a": 2, "c": 3}, {"a": 2, "d": 4, "e": 5}, {}),
    "mapping_first_key": lambda T: ({"b": 1, "a": 2}, {"a": 3, "b": 1}, {}),
    "mapping_vs_list": lambda T: ({"a": 1}, [1], {}),
    "sequence_lengths": lambda T: ([T.ones(2)], [T.ones(2), T.ones(2)], {}),
    "nan_tensor": lambda T: (T.tensor([math.nan]), T.tensor([math.nan]), {}),
    "nan_tensor_equal": lambda T: (T.tensor([math.nan]), T.tensor([math.nan]), {"equal_nan": True}),
    "nan_among": lambda T: (T.tensor([1.0, math.nan, 3]), T.tensor([2.0, math.nan, 3]), {}),
    "nan_expected": lambda T: (T.tensor([1.0, 5, 3]), T.tensor([2.0, math.nan, 3]), {}),
    "opposite_infs": lambda T: (T.tensor([math.inf]), T.tensor([-math.inf]), {}),
    "equal_infs": lambda T: (T.tensor([math.inf]), T.tensor([math.inf]), {}),
    "only_rtol": lambda T: (T.ones(2), T.ones(2), {"rtol": 1e-3}),
    "only_atol": lambda T: (T.ones(2), T.ones(2), {"atol": 1.0}),
    "custom_msg": lambda T: (T.ones(2), T.zeros(2), {"msg": "custom"}),
    "callable_msg": lambda T: ([1, [2, 3]], [1, [2, 4]], {"msg": lambda m: "<" + m + ">"}),
    "msg_on_type_error": lambda T: (T.ones(1), "x", {"msg": "custom"}),
    "booleans_tensor": lambda T: (T.tensor([True, False]), T.tensor([True, True]), {}),
    "complex_tensor": lambda T: (T.tensor([1 + 1j]), T.tensor([1 + 2j]), {}),
    "requires_grad": lambda T: (T.tensor([1.0, 2.0], requires_grad=True), T.tensor([1.0, 2.0]), {}),
    "strings": lambda T: ("a", "a", {}),
    "tiny_vs_zero": lambda T: (T.tensor([0.0, 1.0]), T.tensor([1e-6, 1.0]), {}),
    "matrix": lambda T: (T.tensor([[0.0, 1.0], [2, 3]]), T.tensor([[0, 1.0], [2, 5]]), {}),
    "zero_dim": lambda T: (T.tensor(3.0), T.tensor(4.0), {}),
    "zero_dim_int": lambda T: (T.tensor(1), T.tensor(2), {}),
    "against_zero": lambda T: (T.tensor([0.0, 1.0]), T.tensor([0.0, 0.0]), {}),
    "exact": lambda T: (T.tensor([1.0, 1.0]), T.tensor([1.0, 2.0]), {"atol": 0, "rtol": 0}),
    "exact_scalar": lambda T: (T.tensor(1.0), T.tensor(1.5), {"rtol": 0, "atol": 0}),
    "only_rtol_zero": lambda T: (T.tensor([1.0, 2.0]), T.tensor([1.0, 2.5]), {"rtol": 0.1, "atol": 0}),
    "only_atol_zero": lambda T: (T.tensor([1.0, 2.0]), T.tensor([1.0, 2.5]), {"rtol": 0, "atol": 0.1}),
    "dtypes_unchecked": lambda T: (T.ones(2), T.ones(2, dtype=T.float64), {"check_dtype": False}),
    "int_vs_float_tensor": lambda T: (T.tensor([1, 2]), T.tensor([1.0, 2.5]), {"check_dtype": False}),
    "widest_tolerance": lambda T: (
        T.tensor([1.0, 2.0], dtype=T.float64),
        T.tensor([1.0, 2.0 + 1e-6]),
        {"check_dtype": False},
    ),
    "int_vs_zero": lambda T: (T.tensor([2, 5]), T.tensor([0, 5]), {}),
    "empty": lambda T: (T.empty(0), T.empty(0), {}),
    "nones": lambda T: (None, None, {}),
    "none_vs_int": lambda T: (None, 1, {}),
    "transposed": lambda T: (T.ones(2, 3).t(), T.ones(3, 2), {}),
    "greatest_first": lambda T: (T.tensor([10.0, 2.0]), T.tensor([1.0, 2.0]), {}),
    "int_range": lambda T: (T.tensor([-3, 0, 7], dtype=T.int64), T.tensor([3, 0, -7], dtype=T.int64), {}),
    "float64": lambda T: (
        T.tensor([1.0, 2.0], dtype=T.float64),
        T.tensor([1.0, 2.0 + 1e-6], dtype=T.float64),
        {},
    ),
    "subclass": lambda T: (T.nn.Parameter(T.ones(2)), T.ones(2), {}),
    "subclass_refused": lambda T: (T.nn.Parameter(T.ones(2)), T.ones(2), {"allow_subclasses": False}),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(CASES))
def test_assert_close_behaves_as_torch(name):
    fg_args = CASES[name](fg)
    torch_args = CASES[name](torch)
    assert outcome(fg, *fg_args[:2], **fg_args[2]) == outcome(torch, *torch_args[:2], **torch_args[2])


def test_assert_close_reports_the_mismatch():
    with pytest.raises(AssertionError) as info:
        fg.testing.assert_close(fg.tensor([1.0, 2.0, 3.0]), fg.tensor([1.0, 2.5, 3.0]))
    assert str(info.value) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)"
    )
    with pytest.raises(AssertionError, match=r"The failure occurred for item \[0\]\['a'\]\[1\]$"):
        fg.testing.assert_close([{"a": [1, 2]}], [{"a": [1, 3]}])
    with pytest.raises(ValueError, match="must be either specified or omitted, but got no atol"):
        fg.testing.assert_close(fg.ones(1), fg.ones(1), rtol=0.1)


def test_default_tolerances_follow_the_dtype():
    one = fg.ones(3)
    fg.testing.assert_close(one + 5e-6, one)  # within float32's atol of 1e-5
    with pytest.raises(AssertionError):
        fg.testing.assert_close(one + 5e-5, one)
    double = fg.ones(3, dtype=fg.float64)
    with pytest.raises(AssertionError):
        fg.testing.assert_close(double + 5e-6, double)
    fg.testing.assert_close(double + 5e-8, double)
    with pytest.raises(AssertionError, match="not equal"):
        fg.testing.assert_close(fg.tensor([1, 2]), fg.tensor([1, 3]))
    fg.testing.assert_close(fg.tensor([1.0, 2.0]), fg.tensor([1.0, 2.5]), rtol=0.25, atol=0)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3, allow_nan=False, width=32), min_size=1, max_size=12),
    st.floats(0, 1e-2),
)
def test_assert_close_agrees_with_isclose(values, noise):
    """Passes exactly when every element is within ``atol + rtol * |expected|``."""
    expected = np.array(values, dtype=np.float64)
    actual = expected + noise * np.cos(np.arange(len(values)))
    within = bool(np.all(np.abs(actual - expected) <= 1e-4 + 1e-3 * np.abs(expected)))
    try:
        fg.testing.assert_close(fg.tensor(actual), fg.tensor(expected), rtol=1e-3, atol=1e-4)
        passed = True
    except AssertionError as error:
        passed = False
        mismatched = int(np.sum(np.abs(actual - expected) > 1e-4 + 1e-3 * np.abs(expected)))
        assert f"Mismatched elements: {mismatched} / {len(values)}" in str(error)
    assert passed == within


def test_booleans_against_numbers():
    with pytest.raises(AssertionError, match=r"The \(d\)types do not match: <class 'bool'> != <class 'int'>"):
        fg.testing.assert_close(True, 1)
    fg.testing.assert_close(True, 1, check_dtype=False)
    with pytest.raises(AssertionError, match="Expected 2 but got True"):
        fg.testing.assert_close(True, 2, check_dtype=False)


def test_assert_allclose_is_deprecated_and_lenient():
    with pytest.warns(FutureWarning, match="assert_close"):
        fg.testing.assert_allclose([1.0, 2.0], fg.tensor([1.0, 2.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        fg.testing.assert_allclose(fg.tensor([math.nan]), fg.tensor([math.nan]))
        fg.testing.assert_allclose(fg.tensor([1.0]), fg.tensor([1.0], dtype=fg.float64))
        with pytest.raises(AssertionError, match="not close"):
            fg.testing.assert_allclose([1.0, 2.0], fg.tensor([1.0, 2.5]))


# ---- make_tensor -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype, low, high",
    [
        (fg.float32, -9, 9),
        (fg.float64, -9, 9),
        (fg.int64, -9, 10),
        (fg.int32, -9, 10),
        (fg.uint8, 0, 10),
        (fg.int8, -9, 10),
    ],
)
def test_make_tensor_default_ranges(dtype, low, high):
    fg.manual_seed(0)
    x = fg.testing.make_tensor(4000, dtype=dtype, device="cpu")
    assert x.dtype == dtype and x.shape == (4000,)
    values = x.numpy()
    assert values.min() >= low and values.max() < high
    if not dtype.is_floating_point:
        assert set(np.unique(values)) == set(range(low, high))


def test_make_tensor_options():
    fg.manual_seed(0)
    x = fg.testing.make_tensor((2, 3), dtype=fg.float32, device="cpu", noncontiguous=True)
    assert x.shape == (2, 3) and not x.is_contiguous() and x.stride() == (6, 2)
    assert fg.testing.make_tensor((1,), dtype=fg.float32, device="cpu", noncontiguous=True).is_contiguous()
    y = fg.testing.make_tensor(2, 2, 2, 2, dtype=fg.float32, device="cpu", memory_format=fg.channels_last)
    assert y.stride() == (8, 1, 4, 2)
    z = fg.testing.make_tensor(50, dtype=fg.int64, device="cpu", low=-1, high=1, exclude_zero=True)
    assert set(z.tolist()) <= {-1, 1}
    w = fg.testing.make_tensor(8, dtype=fg.float32, device="cpu", requires_grad=True, low=2, high=3)
    assert w.requires_grad and w.is_leaf and bool(((w >= 2) & (w < 3)).all())
    c = fg.testing.make_tensor(64, dtype=fg.complex64, device="cpu", low=-1, high=1)
    assert c.dtype == fg.complex64 and bool((c.real.abs() <= 1).all() & (c.imag.abs() <= 1).all())
    b = fg.testing.make_tensor(64, dtype=fg.bool, device="cpu")
    assert b.dtype == fg.bool and 0 < int(b.sum()) < 64
    assert fg.testing.make_tensor((), dtype=fg.float32, device="cpu").shape == ()
    clamped = fg.testing.make_tensor(200, dtype=fg.uint8, device="cpu", low=-5, high=300)
    assert clamped.dtype == fg.uint8
    with pytest.warns(FutureWarning, match="low==high"):
        assert fg.testing.make_tensor(3, dtype=fg.float32, device="cpu", low=2, high=2).tolist() == [2.0] * 3


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"dtype": fg.int64, "requires_grad": True}, ValueError, "`requires_grad=True` is not supported"),
        (
            {"dtype": fg.float32, "noncontiguous": True, "memory_format": fg.channels_last},
            ValueError,
            "mutually exclusive",
        ),
        (
            {"dtype": fg.float32, "low": 3, "high": 2},
            ValueError,
            "`low` must be less than `high`, but got 3 >= 2",
        ),
        ({"dtype": fg.float32, "low": math.nan}, ValueError, "cannot be NaN, but got low=nan and high=9"),
        ({"dtype": fg.int8, "low": -500, "high": -300}, ValueError, r"only supports \[-128, 128\)"),
        ({"dtype": fg.float32, "low": 1e39, "high": 2e39}, ValueError, "only supports"),
    ],
)
def test_make_tensor_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        fg.testing.make_tensor(2, 2, 2, 2, device="cpu", **kwargs)


def test_make_tensor_needs_dtype_and_device():
    with pytest.raises(TypeError):
        fg.testing.make_tensor((2,), dtype=fg.float32)


@needs_torch
@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["float32", "float64", "int64", "complex64", "bool"]),
    st.lists(st.integers(1, 4), min_size=0, max_size=3),
    st.integers(0, 2**32 - 1),
    st.sampled_from([0.0, 1e-6, 1e-3, 0.5]),
)
def test_random_mismatches_read_as_torch(dtype, shape, seed, noise):
    """Counts, greatest differences, their indices and 0-d messages match torch's on random
    tensors with a random share of elements perturbed."""
    rng = np.random.default_rng(seed)
    expected = rng.normal(size=shape) * 10
    actual = expected + noise * (rng.random(shape) < 0.5) * rng.normal(size=shape)
    if dtype in ("int64", "bool"):
        expected, actual = np.round(expected), np.round(actual + 2 * (noise > 0.1))
        if dtype == "bool":
            expected, actual = expected > 0, actual > 0
    elif dtype == "complex64":
        expected, actual = expected * (1 + 1j), actual * (1 - 0.5j * noise)
    results = []
    for T in (fg, torch):
        lib_dtype = getattr(T, dtype)
        results.append(outcome(T, T.tensor(actual, dtype=lib_dtype), T.tensor(expected, dtype=lib_dtype)))
    assert results[0] == results[1]

"""``ferrograd.testing``: ``assert_close`` compares tensors, NumPy arrays, numbers and nested
sequences and mappings of them with tolerances chosen by dtype, and reports a mismatch as PyTorch
does (how many elements differ, the greatest differences and where, the item that failed);
``make_tensor`` makes random test inputs of any dtype, shape and layout."""

from __future__ import annotations

import collections.abc
import math
import warnings
from typing import Any, Callable

import numpy as np

import ferrograd as _fg
from ferrograd import Tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

# (rtol, atol) when neither is given; exact comparison for every other dtype.
_DEFAULT_TOLERANCES = {
    _fg.float32: (1.3e-6, 1e-5),
    _fg.complex64: (1.3e-6, 1e-5),
    _fg.float64: (1e-7, 1e-7),
    _fg.complex128: (1e-7, 1e-7),
}
_NUMBER_DTYPES = {bool: _fg.bool, int: _fg.int64, float: _fg.float64, complex: _fg.complex128}
_COMPLEX_PARTS = {_fg.complex64: _fg.float32, _fg.complex128: _fg.float64}


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise, its message, and the path of the nested
    item that failed (set where it failed)."""

    def __init__(self, kind: type[Exception], message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.path: list | None = None


def _unsupported(actual: Any, expected: Any) -> _Mismatch:
    return _Mismatch(
        TypeError,
        f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.",
    )


def _tolerances(dtypes, rtol, atol) -> tuple[float, float]:
    if rtol is not None:
        return rtol, atol
    defaults = [_DEFAULT_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(r for r, _ in defaults), max(a for _, a in defaults)


def _allowed(tolerance) -> str:
    return f" (up to {tolerance} allowed)"


def _mismatch_message(identifier: str, rtol, atol, body: list[str], abs_line: str, rel_line: str) -> str:
    exact = rtol == 0 and atol == 0
    lines = [f"{identifier} are not {'equal' if exact else 'close'}!", "", *body]
    lines.append(abs_line + ("" if exact else _allowed(atol)))
    lines.append(rel_line + ("" if exact else _allowed(rtol)))
    return "\n".join(lines)


def _relative(abs_diff, expected):
    if expected != 0:
        return abs_diff / abs(expected)
    return abs_diff if abs_diff != abs_diff else math.inf


def _scalar_message(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    return _mismatch_message(
        "Scalars",
        rtol,
        atol,
        [f"Expected {expected} but got {actual}."],
        f"Absolute difference: {abs_diff}",
        f"Relative difference: {_relative(abs_diff, expected)}",
    )


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype) -> None:
    if isinstance(actual, np.generic):
        actual = actual.item()
    if isinstance(expected, np.generic):
        expected = expected.item()
    if isinstance(actual, bool) and isinstance(expected, bool):
        if actual != expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
        return
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    rtol, atol = _tolerances([_NUMBER_DTYPES[type(x)] for x in (actual, expected)], rtol, atol)
    if actual == expected or (equal_nan and actual != actual and expected != expected):
        return
    abs_diff = abs(actual - expected)
    if abs_diff == abs_diff and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_message(actual, expected, rtol, atol))


def _as_tensor(value) -> Tensor:
    return _fg.as_tensor(value) if isinstance(value, np.ndarray) else value.detach()


def _check_attributes(
    actual: Tensor, expected: Tensor, check_device, check_dtype, check_layout, check_stride
):
    checks = [("shape", True), ("device", check_device), ("dtype", check_dtype), ("layout", check_layout)]
    for name, wanted in checks:
        if wanted and getattr(actual, name) != getattr(expected, name):
            raise _Mismatch(
                AssertionError,
                f"The values for attribute '{name}' do not match: {getattr(actual, name)} != {getattr(expected, name)}.",
            )
    if check_stride and actual.stride() != expected.stride():
        raise _Mismatch(
            AssertionError,
            f"The values for attribute 'stride()' do not match: {actual.stride()} != {expected.stride()}.",
        )


def _greatest(diff: Tensor, matches: Tensor, shape) -> tuple[Any, tuple[int, ...]]:
    """The greatest difference among the mismatched elements (NaN first) and its index."""
    value, flat_index = _fg.where(matches, _fg.zeros((), dtype=diff.dtype), diff).max(0)
    return value.item(), tuple(int(i) for i in np.unravel_index(int(flat_index), shape))


def _tensor_message(actual: Tensor, expected: Tensor, matches: Tensor, rtol, atol) -> str:
    total = matches.numel()
    mismatched = total - int(matches.sum())
    actual_flat, expected_flat, matches_flat = actual.flatten(), expected.flatten(), matches.flatten()
    if not (actual.dtype.is_floating_point or actual.dtype.is_complex):
        # Integers (and booleans) subtract without wrapping in int64.
        actual_flat, expected_flat = actual_flat.to(_fg.int64), expected_flat.to(_fg.int64)
    abs_diff = (actual_flat - expected_flat).abs()
    greatest_abs, abs_index = _greatest(abs_diff, matches_flat, actual.shape)
    greatest_rel, rel_index = _greatest(abs_diff / expected_flat.abs(), matches_flat, actual.shape)
    return _mismatch_message(
        "Tensor-likes",
        rtol,
        atol,
        [f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"],
        f"Greatest absolute difference: {greatest_abs} at index {abs_index}",
        f"Greatest relative difference: {greatest_rel} at index {rel_index}",
    )


def _compare_tensors(actual, expected, rtol, atol, equal_nan, options) -> None:
    actual, expected = _as_tensor(actual), _as_tensor(expected)
    _check_attributes(actual, expected, *options)
    rtol, atol = _tolerances([actual.dtype, expected.dtype], rtol, atol)
    if actual.dtype != expected.dtype:
        common = _fg.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    if actual.numel() == 0:
        return
    matches = _fg.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if actual.dim() == 0:
        message = _scalar_message(actual.item(), expected.item(), rtol, atol)
    else:
        message = _tensor_message(actual, expected, matches, rtol, atol)
    raise _Mismatch(AssertionError, message)


def _is_sequence(value) -> bool:
    return isinstance(value, collections.abc.Sequence) and not isinstance(value, str)


def _is_number(value) -> bool:
    return isinstance(value, (int, float, complex, np.number, np.bool_))


def _is_tensor_pair(actual, expected, allow_subclasses: bool) -> bool:
    if isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
        return True
    if allow_subclasses:
        return isinstance(actual, Tensor) and isinstance(expected, Tensor)
    return type(actual) is Tensor and type(expected) is Tensor


def _sorted_keys(keys) -> list:
    try:
        return sorted(keys)
    except TypeError:
        return list(keys)


def _compare(actual, expected, path: list, settings: dict) -> None:
    """Compares one pair, recursing into sequences and mappings; ``path`` names the item."""
    try:
        if _is_sequence(actual) and _is_sequence(expected):
            if len(actual) != len(expected):
                raise _Mismatch(
                    AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}"
                )
            for index, (a, e) in enumerate(zip(actual, expected)):
                _compare(a, e, [*path, index], settings)
            return
        if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
            actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
            if actual_keys != expected_keys:
                lines = ["The keys of the mappings do not match:"]
                if expected_keys - actual_keys:
                    lines.append(
                        f"Missing keys in the actual mapping: {_sorted_keys(expected_keys - actual_keys)}"
                    )
                if actual_keys - expected_keys:
                    lines.append(
                        f"Additional keys in the actual mapping: {_sorted_keys(actual_keys - expected_keys)}"
                    )
                raise _Mismatch(AssertionError, "\n".join(lines))
            for key in _sorted_keys(actual_keys):
                _compare(actual[key], expected[key], [*path, key], settings)
            return
        tolerances = settings["rtol"], settings["atol"], settings["equal_nan"]
        if actual is None or expected is None:
            if actual is not expected:
                raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}")
        elif _is_number(actual) and _is_number(expected):
            _compare_numbers(actual, expected, *tolerances, settings["options"][1])
        elif _is_tensor_pair(actual, expected, settings["allow_subclasses"]):
            with _fg.no_grad():
                _compare_tensors(actual, expected, *tolerances, settings["options"])
        else:
            raise _unsupported(actual, expected)
    except _Mismatch as mismatch:
        if mismatch.path is None:
            mismatch.path = path
        raise


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Asserts that ``actual`` and ``expected`` are close: ``|actual - expected| <= atol + rtol *
    |expected|`` elementwise, with matching shape, device, dtype and layout (and strides with
    ``check_stride``). Without ``rtol`` and ``atol`` the tolerances follow the dtype (exact for
    integers and booleans). Sequences and mappings are compared item by item. ``msg`` replaces the
    failure message, or, called with it, returns the one to raise."""
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.")
    settings = {
        "rtol": rtol,
        "atol": atol,
        "equal_nan": equal_nan,
        "allow_subclasses": allow_subclasses,
        "options": (check_device, check_dtype, check_layout, check_stride),
    }
    try:
        _compare(actual, expected, [], settings)
    except _Mismatch as mismatch:
        message = mismatch.message
        # A failed comparison names the item that failed and may be reworded; unsupported inputs
        # (a TypeError) are reported as they are.
        if mismatch.kind is AssertionError:
            if mismatch.path:
                message += "\n\nThe failure occurred for item " + "".join(
                    f"[{key!r}]" for key in mismatch.path
                )
            if msg is not None:
                message = msg(message) if callable(msg) else msg
        raise mismatch.kind(message) from None


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg="",
) -> None:
    """Deprecated: ``assert_close`` of the two as tensors, of any dtypes, with NaNs equal."""
    warnings.warn(
        "`ferrograd.testing.assert_allclose()` is deprecated and will be removed in a future release. "
        "Please use `ferrograd.testing.assert_close()` instead.",
        FutureWarning,
        stacklevel=2,
    )
    actual = actual if isinstance(actual, Tensor) else _fg.as_tensor(actual)
    expected = expected if isinstance(expected, Tensor) else _fg.as_tensor(expected, dtype=actual.dtype)
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        check_stride=False,
        msg=msg or None,
    )


# ---------------------------------------------------------------------------------- make_tensor


def _value_range(dtype, low, high) -> tuple[Any, Any]:
    """``low`` and ``high`` with the defaults filled in, checked and clamped to what ``dtype``
    holds."""
    if dtype.is_floating_point or dtype.is_complex:
        limits = _fg.finfo(dtype)
        lowest, highest = -limits.max, limits.max
        default_low, default_high = -9, 9
    else:
        limits = _fg.iinfo(dtype)
        lowest, highest = limits.min, limits.max + 1
        default_low, default_high = max(-9, lowest), 10
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    is_float = dtype.is_floating_point or dtype.is_complex
    if low > high or (low == high and not is_float):
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    if high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest}, {highest})"
        )
    low, high = max(low, lowest), min(high, highest)
    if not is_float:
        low, high = math.ceil(low), math.ceil(high)
    elif low == high:
        warnings.warn(
            "Passing `low==high` to `ferrograd.testing.make_tensor` for floating or complex types is "
            "deprecated. Use `ferrograd.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    return low, high


def _uniform(shape, low, high, dtype, device) -> Tensor:
    # Drawn in float64 so that the widest ranges (a dtype's whole span) do not overflow.
    unit = _fg.rand(shape, dtype=_fg.float64, device=device)
    return (unit * (float(high) - float(low)) + float(low)).to(dtype)


def make_tensor(
    *shape: Any,
    dtype,
    device,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format=None,
) -> Tensor:
    """A tensor of ``shape`` and ``dtype`` filled with random values in ``[low, high)`` (booleans
    at random; by default ``[-9, 9)`` for floating and complex dtypes and ``[-9, 10)`` for integers,
    clamped to the dtype's range). ``noncontiguous`` lays the values out with gaps,
    ``memory_format`` in that format; ``exclude_zero`` replaces zeros (with 1 for integers and
    the smallest normal value for floating dtypes)."""
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    is_float = dtype.is_floating_point or dtype.is_complex
    if requires_grad and not is_float:
        raise ValueError(
            f"`requires_grad=True` is not supported for boolean and integral dtypes, but got dtype={dtype}"
        )
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    # A noncontiguous tensor is every other element of one twice as long in its last dimension.
    storage_shape = (*shape[:-1], 2 * shape[-1]) if noncontiguous and shape else shape
    if dtype == _fg.bool:
        result = _fg.randint(0, 2, storage_shape, dtype=_fg.bool, device=device)
    elif not is_float:
        low, high = _value_range(dtype, low, high)
        result = _fg.randint(low, high, storage_shape, dtype=dtype, device=device)
    else:
        low, high = _value_range(dtype, low, high)
        if dtype.is_complex:
            parts = [_uniform(storage_shape, low, high, _COMPLEX_PARTS[dtype], device) for _ in range(2)]
            result = _fg.complex(*parts)
        else:
            result = _uniform(storage_shape, low, high, dtype, device)
    if exclude_zero and dtype != _fg.bool:
        replacement = _fg.finfo(dtype).tiny if is_float else 1
        result = _fg.where(result == 0, _fg.full((), replacement, dtype=dtype), result)
    if noncontiguous and shape:
        result = result[..., ::2]
        if result.numel() <= 1:
            result = result.contiguous()
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    return result.requires_grad_(requires_grad)

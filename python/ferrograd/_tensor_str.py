"""Tensor ``repr`` identical to torch's (with torch's default print options).

Depends only on numpy so that it can be used (and tested) without the compiled
core: the core converts a tensor to a numpy array and calls :func:`format_tensor`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["format_tensor"]

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80
SCI_MODE: bool | None = None  # None: chosen from the values


# dtypes that torch does not name in the repr of a non-empty tensor, by default float dtype
_DEFAULT_DTYPES = {
    "float32": frozenset({"float32", "complex64", "int64", "bool"}),
    "float64": frozenset({"float64", "complex128", "int64", "bool"}),
}


class _Formatter:
    """Chooses one fixed-width style for all the values of a (real) tensor."""

    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not self.floating:
            self.max_width = max([1, *(len(str(v)) for v in values.ravel().tolist())])
            return
        finite = values[np.isfinite(values) & (values != 0)]
        if finite.size == 0:
            return
        magnitudes = np.abs(finite).astype(np.float64)
        lo, hi = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4 if SCI_MODE is None else SCI_MODE
        if self.sci_mode:
            fmt, extra = f"{{:.{PRECISION}e}}", 0
        elif self.int_mode:
            fmt, extra = "{:.0f}", 1  # room for the trailing "."
        else:
            fmt, extra = f"{{:.{PRECISION}f}}", 0
        widths = (len(fmt.format(v)) + extra for v in np.unique(finite).tolist())
        self.max_width = max(self.max_width, *widths)

    def format(self, value: float) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRECISION}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{PRECISION}f}"
        return text.rjust(self.max_width)


def _summarized(array: np.ndarray) -> np.ndarray:
    """Only the elements that are printed when the tensor is summarized."""
    for axis, size in enumerate(array.shape):
        if size > 2 * EDGEITEMS:
            keep = [*range(EDGEITEMS), *range(size - EDGEITEMS, size)]
            array = np.take(array, keep, axis=axis)
    return array


def _tensor_body(
    array: np.ndarray,
    indent: int,
    summarize: bool,
    fmt: Callable[[object], str],
    element_width: int,
) -> str:
    if array.ndim == 0:
        return fmt(array.item())
    size = array.shape[0]
    elided = summarize and size > 2 * EDGEITEMS
    if array.ndim == 1:
        if elided:
            data = [fmt(v) for v in array[:EDGEITEMS].tolist()] + [" ..."]
            data += [fmt(v) for v in array[-EDGEITEMS:].tolist()]
        else:
            data = [fmt(v) for v in array.tolist()]
        per_line = max(1, (LINEWIDTH - indent) // element_width)
        lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows: Sequence[int | None] = range(size)
    if elided:
        rows = [*range(EDGEITEMS), None, *range(size - EDGEITEMS, size)]
    slices = [
        "..." if i is None else _tensor_body(array[i], indent + 1, summarize, fmt, element_width)
        for i in rows
    ]
    return "[" + ("," + "\n" * (array.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(array: np.ndarray, indent: int) -> str:
    summarize = array.size > THRESHOLD
    shown = _summarized(array) if summarize else array
    if array.dtype.kind == "c":
        real, imag = _Formatter(shown.real), _Formatter(shown.imag)

        def fmt(value: complex) -> str:
            re = real.format(value.real)
            im = (imag.format(value.imag) + "j").lstrip()
            return re + im if im[0] in "+-" else re + "+" + im

        width = real.max_width + 2 + imag.max_width + 1
    else:
        formatter = _Formatter(shown)
        fmt, width = formatter.format, formatter.max_width + 2
    return _tensor_body(array, indent, summarize, fmt, width)


def _add_suffixes(text: str, suffixes: Sequence[str], indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1  # (sic) as torch computes it
    for suffix in suffixes:
        # Lines break exactly where torch breaks them, i.e. as if the dtype
        # were spelled "torch.float64", so that our repr is torch's repr with
        # "torch." replaced by "ferrograd.".
        length = len(suffix.replace("ferrograd.", "torch."))
        if last_line_len + length + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + length
        else:
            parts.append(", " + suffix)
            last_line_len += length + 2
    parts.append(")")
    return "".join(parts)


def format_tensor(
    array: np.ndarray, dtype_name: str, suffix: Sequence[str] = (), default_dtype: str = "float32"
) -> str:
    """Return ``repr(tensor)`` as torch prints it.

    ``array`` holds the tensor's values (any shape), ``dtype_name`` is the
    ferrograd dtype name (e.g. ``"float64"``) and ``suffix`` lists extra items
    such as ``"grad_fn=<SubBackward0>"`` or ``"requires_grad=True"``;
    ``default_dtype`` names the default float dtype, which the repr leaves unsaid.
    """
    array = np.asarray(array)
    dtype_name = dtype_name.rsplit(".", 1)[-1]
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if array.size == 0:
        # no values to infer the shape or dtype from, so torch states them
        if array.ndim != 1:
            suffixes.append(f"size={tuple(array.shape)}")
        if dtype_name != default_dtype:
            suffixes.append(f"dtype=ferrograd.{dtype_name}")
        body = "[]"
    else:
        if dtype_name not in _DEFAULT_DTYPES[default_dtype]:
            suffixes.append(f"dtype=ferrograd.{dtype_name}")
        body = _tensor_str(array, indent)
    suffixes.extend(suffix)
    return _add_suffixes(prefix + body, suffixes, indent)


def tensor_repr(t) -> str:
    """``repr(tensor)``: the values as PyTorch prints them, then autograd state."""
    suffix = []
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffix.append("requires_grad=True")
    from .autograd.forward_ad import unpack_dual

    tangent = unpack_dual(t).tangent
    if tangent is not None:
        suffix.append(f"tangent={tensor_repr(tangent)}")
    from ._C import get_default_dtype

    default_dtype = repr(get_default_dtype()).rsplit(".", 1)[-1]
    return format_tensor(t.detach().numpy(), t.dtype.__repr__(), suffix, default_dtype)

"""dtype information and promotion (``finfo``, ``iinfo``, ``promote_types``,
``result_type``, ``can_cast``), the default dtype, ``device`` and print options."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

import ferrograd

from . import _tensor_str

__all__ = [
    "can_cast",
    "device",
    "finfo",
    "get_printoptions",
    "iinfo",
    "is_floating_point",
    "promote_types",
    "result_type",
    "set_printoptions",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


def _name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _category(dtype) -> int:
    if dtype.is_complex:
        return _COMPLEX
    if dtype.is_floating_point:
        return _FLOAT
    if dtype == ferrograd.bool:
        return _BOOL
    return _INT


def _check_dtype(fn: str, arg: str, position: int, value) -> None:
    if not isinstance(value, ferrograd.dtype):
        raise TypeError(
            f"{fn}(): argument '{arg}' (position {position}) must be torch.dtype, not {type(value).__name__}"
        )


class finfo:
    """Machine limits of a floating-point dtype (of its real part for complex dtypes)."""

    def __init__(self, type: ferrograd.dtype | None = None) -> None:  # noqa: A002 - PyTorch's name
        if type is None:
            type = ferrograd.get_default_dtype()
        _check_dtype("finfo", "type", 1, type)
        if not (type.is_floating_point or type.is_complex):
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'"
            )
        real = {ferrograd.complex64: ferrograd.float32, ferrograd.complex128: ferrograd.float64}.get(
            type, type
        )
        info = np.finfo(np.float32 if real == ferrograd.float32 else np.float64)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = float(info.smallest_normal)
        self.smallest_normal = self.tiny
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = _name(real)

    def __eq__(self, other) -> builtins.bool:
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:
    """Limits of an integer dtype."""

    def __init__(self, type: ferrograd.dtype) -> None:  # noqa: A002 - PyTorch's name
        _check_dtype("iinfo", "type", 1, type)
        if type == ferrograd.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.is_floating_point or type.is_complex:
            raise TypeError(
                "torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'"
            )
        info = np.iinfo(ferrograd._NUMPY_DTYPES[type])
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = _name(type)

    def __eq__(self, other) -> builtins.bool:
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


def is_floating_point(input: ferrograd.Tensor) -> builtins.bool:
    """Whether ``input``'s dtype is a real floating-point type."""
    if not isinstance(input, ferrograd.Tensor):
        raise TypeError(
            f"is_floating_point(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    return input.is_floating_point()


def promote_types(type1: ferrograd.dtype, type2: ferrograd.dtype) -> ferrograd.dtype:
    """The smallest dtype to which both ``type1`` and ``type2`` convert without losing kind."""
    _check_dtype("promote_types", "type1", 1, type1)
    _check_dtype("promote_types", "type2", 2, type2)
    return ferrograd._C.promote_types(type1, type2)


def _to_complex(dtype):
    return ferrograd.complex128 if dtype == ferrograd.float64 else ferrograd.complex64


def _combine(higher, lower):
    """Combine the dtype of a higher-priority group of operands with a lower one."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return _to_complex(higher) if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher == ferrograd.bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def _scalar_dtype(value):
    if isinstance(value, builtins.bool):
        return ferrograd.bool
    if isinstance(value, int):
        return ferrograd.int64
    if isinstance(value, float):
        return ferrograd.get_default_dtype()
    if isinstance(value, builtins.complex):
        return (
            ferrograd.complex128
            if ferrograd.get_default_dtype() == ferrograd.float64
            else ferrograd.complex64
        )
    raise TypeError(
        "result_type() received an invalid combination of arguments - got "
        f"({type(value).__name__}), expected Tensor or Number"
    )


def result_type(tensor1: Any, tensor2: Any) -> ferrograd.dtype:
    """The dtype an arithmetic operation on ``tensor1`` and ``tensor2`` gives: tensors with
    dimensions decide first, then 0-d tensors, then Python numbers, each lower group
    counting only when it is of a higher kind (bool < integer < float < complex)."""
    groups: list = [None, None, None]  # dimensioned tensors, 0-d tensors, Python numbers
    for value in (tensor1, tensor2):
        if isinstance(value, ferrograd.Tensor):
            level, dtype = (0 if value.dim() > 0 else 1), value.dtype
        else:
            level, dtype = 2, _scalar_dtype(value)
        groups[level] = dtype if groups[level] is None else promote_types(groups[level], dtype)
    return _combine(groups[0], _combine(groups[1], groups[2]))


def can_cast(from_: ferrograd.dtype, to: ferrograd.dtype) -> builtins.bool:
    """Whether casting ``from_`` to ``to`` is allowed by type promotion (no complex to
    real, no floating to integer, nothing but bool to bool)."""
    _check_dtype("can_cast", "from_", 1, from_)
    _check_dtype("can_cast", "to", 2, to)
    return _category(from_) <= _category(to) or _category(from_) == _BOOL


_DEVICE_TYPES = (
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, "
    "hpu, mtia, privateuseone"
)


class device(str):
    """A device, such as ``device("cpu")``. Tensors live on the CPU; the object is also
    the string of its type, so it is accepted wherever a device string is and compares
    equal to ``Tensor.device``."""

    type: str
    index: int | None

    def __new__(cls, type: Any, index: int | None = None):  # noqa: A002 - PyTorch's name
        if isinstance(type, device):
            return type
        if isinstance(type, int) and not isinstance(type, builtins.bool):
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(
                f"device() received an invalid combination of arguments - got ({type.__class__.__name__})"
            )
        kind, _, idx = str.__str__(type).partition(":")
        if kind not in _DEVICE_TYPES.split(", "):
            raise RuntimeError(
                f"Expected one of {_DEVICE_TYPES} device type at start of device string: {type}"
            )
        if idx:
            if index is not None:
                raise RuntimeError(
                    f"type (string) must not include an index because index was passed explicitly: {type}"
                )
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        obj = super().__new__(cls, kind)
        obj.type = kind
        obj.index = index
        return obj

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other) -> builtins.bool:
        if isinstance(other, device):
            return self.type == other.type and self.index == other.index
        if isinstance(other, str):
            return str(self) == other
        return NotImplemented

    def __ne__(self, other) -> builtins.bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(str(self))

    def __reduce__(self):
        return device, (self.type, self.index)


_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80}
_PROFILES = {
    "default": _DEFAULTS,
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": 2**63 - 1, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision: int | None = None,
    threshold: int | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: builtins.bool | None = None,
) -> None:
    """Set how tensors print: digits after the point (``precision``), the element count
    above which the repr is summarized (``threshold``), the items kept at each edge of a
    summarized dimension (``edgeitems``), the line width, or a ``profile`` ("default",
    "short", "full") setting all of those; ``sci_mode`` True or False forces scientific
    notation on or off for floating values, None (each call's default) chooses it from them."""
    if profile is not None:
        opts = _PROFILES[profile]
        _tensor_str.PRECISION = opts["precision"]
        _tensor_str.THRESHOLD = opts["threshold"]
        _tensor_str.EDGEITEMS = opts["edgeitems"]
        _tensor_str.LINEWIDTH = opts["linewidth"]
    if precision is not None:
        _tensor_str.PRECISION = int(precision)
    if threshold is not None:
        _tensor_str.THRESHOLD = int(threshold)
    if edgeitems is not None:
        _tensor_str.EDGEITEMS = int(edgeitems)
    if linewidth is not None:
        _tensor_str.LINEWIDTH = int(linewidth)
    _tensor_str.SCI_MODE = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options."""
    return {
        "precision": _tensor_str.PRECISION,
        "threshold": _tensor_str.THRESHOLD,
        "edgeitems": _tensor_str.EDGEITEMS,
        "linewidth": _tensor_str.LINEWIDTH,
        "sci_mode": _tensor_str.SCI_MODE,
    }

"""Tensors exchanged with other array libraries through DLPack, sharing memory.

A ferrograd tensor exports itself (``__dlpack__``) as a NumPy view of its own
storage would, so NumPy, PyTorch, JAX or CuPy's host arrays read and write the
same elements; ``from_dlpack`` takes any such exporter, or a capsule made by an
older library's ``to_dlpack``, and views its memory without copying.
"""

from __future__ import annotations

import enum

import numpy as np

from .. import _C
from .._C import Tensor

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes (ferrograd's tensors are all ``kDLCPU``)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLExtDev = 12
    kDLOneAPI = 14


def _dlpack(self: Tensor, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of this tensor's memory (versioned when ``max_version`` allows it)."""
    if self.requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    if stream is not None and stream != -1:
        raise AssertionError("stream should be None on cpu.")
    if dl_device is not None and tuple(dl_device) != (DLDeviceType.kDLCPU, 0):
        raise BufferError(f"Unsupported device for DLPack export: {tuple(dl_device)}")
    # Only the arguments given are passed on: NumPy before 2.1 takes none of them.
    given = {"max_version": max_version, "copy": copy}
    return self.numpy().__dlpack__(**{k: v for k, v in given.items() if v is not None})


def _dlpack_device(self: Tensor) -> tuple[DLDeviceType, int]:
    """Where this tensor's memory lives, as DLPack names devices."""
    return (DLDeviceType.kDLCPU, 0)


class _Capsule:
    """An exporter around a bare capsule, so NumPy's importer takes it."""

    def __init__(self, capsule) -> None:
        self._capsule = capsule

    def __dlpack__(self, **kwargs):
        return self._capsule

    def __dlpack_device__(self) -> tuple[DLDeviceType, int]:
        return (DLDeviceType.kDLCPU, 0)


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor viewing the memory of ``ext_tensor``: an object with ``__dlpack__``
    (another library's array or tensor) or a capsule from ``to_dlpack``. Writes through
    either side are seen by the other."""
    if hasattr(ext_tensor, "__dlpack_device__"):
        device, _ = ext_tensor.__dlpack_device__()
        if device not in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
            raise BufferError(
                f"ferrograd tensors live in CPU memory; cannot import from DLPack device type {int(device)}"
            )
    exporter = ext_tensor if hasattr(ext_tensor, "__dlpack__") else _Capsule(ext_tensor)
    return _C._share_array(np.from_dlpack(exporter))


def to_dlpack(tensor: Tensor):
    """An unversioned DLPack capsule of ``tensor``'s memory, for libraries that take capsules."""
    return tensor.__dlpack__()

"""Storages: the memory under a tensor and all its views (``Tensor.untyped_storage()`` and the
deprecated ``Tensor.storage()``). They share that memory; comparing ``data_ptr()`` tells whether
two tensors share it, and ``nbytes()`` says how much there is."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import _C
from ._dtype_info import device as _device_type

_CPU = _device_type("cpu")

__all__ = ["TypedStorage", "UntypedStorage"]


class _Storage:
    """What both storage kinds share: a length, indexing with bounds checks, and the CPU."""

    device = property(lambda self: _CPU)

    def size(self) -> int:
        raise NotImplementedError

    def tolist(self) -> list[Any]:
        raise NotImplementedError

    def __len__(self) -> int:
        return self.size()

    def _position(self, index: int) -> int:
        size = self.size()
        if not -size <= index < size:
            raise IndexError(f"index {index} out of range for storage of size {size}")
        return index % size

    def __iter__(self) -> Iterator[Any]:
        return iter(self.tolist())

    def cpu(self) -> _Storage:
        return self

    def is_shared(self) -> bool:
        return False

    def is_pinned(self, device: Any = None) -> bool:
        return False

    def _repr(self, kind: str) -> str:
        lines = [f" {v}" for v in self.tolist()]
        return "\n".join([*lines, f"[ferrograd.storage.{kind} of size {self.size()}]"])


class UntypedStorage(_Storage):
    """The bytes of a storage. Writes through it (``fill_``, ``copy_``, item assignment) change
    every tensor over that memory, as in PyTorch, without bumping their version counters."""

    def __init__(self, raw: np.ndarray) -> None:
        self._bytes = raw

    @classmethod
    def _of(cls, tensor: _C.Tensor) -> UntypedStorage:
        return cls(_whole_storage(tensor).numpy().view(np.uint8))

    def data_ptr(self) -> int:
        return self._bytes.ctypes.data

    def nbytes(self) -> int:
        return self._bytes.nbytes

    def size(self) -> int:
        return self._bytes.nbytes

    def element_size(self) -> int:
        return 1

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return UntypedStorage(self._bytes[index])
        return int(self._bytes[self._position(index)])

    def __setitem__(self, index: int | slice, value: int) -> None:
        self._bytes[index if isinstance(index, slice) else self._position(index)] = value

    def tolist(self) -> list[int]:
        return self._bytes.tolist()

    def fill_(self, value: int) -> UntypedStorage:
        self._bytes[...] = value
        return self

    def copy_(self, source: UntypedStorage) -> UntypedStorage:
        if len(source) != len(self):
            raise RuntimeError(f"size mismatch: storage of {len(self)} bytes, source of {len(source)} bytes")
        self._bytes[...] = source._bytes
        return self

    def clone(self) -> UntypedStorage:
        return UntypedStorage(self._bytes.copy())

    def _elements_as(self, dtype) -> _C.Tensor:
        """The bytes as elements of ``dtype``, sharing them (the source of ``Tensor.set_``)."""
        itemsize = _C.empty(0, dtype=dtype).element_size()
        whole = self._bytes[: len(self._bytes) // itemsize * itemsize]
        return _C.from_numpy(whole).view(dtype)

    def resize_(self, size: int) -> UntypedStorage:
        raise RuntimeError("ferrograd storages cannot be resized; create a new tensor of the size wanted")

    def __repr__(self) -> str:
        return self._repr("UntypedStorage(device=cpu)")


class TypedStorage(_Storage):
    """The elements of a storage, of its tensor's dtype (deprecated in favour of
    ``UntypedStorage``). Writes through it bump the version counters and refuse read-only
    memory, as in-place tensor ops do."""

    def __init__(self, elements: _C.Tensor) -> None:
        self._elements = elements

    @classmethod
    def _of(cls, tensor: _C.Tensor) -> TypedStorage:
        return cls(_whole_storage(tensor))

    dtype = property(lambda self: self._elements.dtype)

    def _elements_as(self, dtype) -> _C.Tensor:
        """The elements reinterpreted as ``dtype`` (the source of ``Tensor.set_``)."""
        return self._elements.view(dtype)

    @property
    def _untyped_storage(self) -> UntypedStorage:
        return self.untyped()

    def untyped(self) -> UntypedStorage:
        return UntypedStorage(self._elements.numpy().view(np.uint8))

    def data_ptr(self) -> int:
        return self._elements.data_ptr()

    def size(self) -> int:
        return self._elements.numel()

    def element_size(self) -> int:
        return self._elements.element_size()

    def nbytes(self) -> int:
        return self._elements.nbytes

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return TypedStorage(self._elements[index])
        return self._elements[self._position(index)].item()

    def __setitem__(self, index: int | slice, value: Any) -> None:
        self._elements[index if isinstance(index, slice) else self._position(index)] = value

    def tolist(self) -> list[Any]:
        return self._elements.tolist()

    def fill_(self, value: Any) -> TypedStorage:
        self._elements.fill_(value)
        return self

    def clone(self) -> TypedStorage:
        return TypedStorage(self._elements.clone())

    def __repr__(self) -> str:
        return self._repr(f"TypedStorage(dtype={self.dtype}, device=cpu)")


def _whole_storage(tensor: _C.Tensor) -> _C.Tensor:
    """A 1-d tensor over every element of ``tensor``'s storage, without history."""
    length = tensor._storage_nbytes() // tensor.element_size()
    return tensor.detach().as_strided((length,), (1,), 0)


_warned_typed_storage = False


def _untyped_storage(self: _C.Tensor) -> UntypedStorage:
    """``Tensor.untyped_storage()``: the bytes of the memory under this tensor and its views."""
    return UntypedStorage._of(self)


def _typed_storage(self: _C.Tensor) -> TypedStorage:
    """``Tensor.storage()``: the memory under this tensor as elements of its dtype (deprecated)."""
    global _warned_typed_storage
    if not _warned_typed_storage:
        _warned_typed_storage = True
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
            "storage class. This should only matter to you if you are using storages directly.  To access "
            "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
            UserWarning,
            stacklevel=2,
        )
    return TypedStorage._of(self)

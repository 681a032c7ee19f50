"""``save`` and ``load``: pickle-based checkpoints.

A tensor is pickled as its values (a NumPy array), its dtype's name and its
``requires_grad`` flag, so state dicts, optimizer state dicts and any nesting of
dicts, lists and tuples holding tensors round-trip. Tensors that shared storage
before saving are separate after loading, unless they were the same object.

Tensors also pickle and deep-copy this way outside ``save`` (``pickle.dumps``,
``copy.deepcopy`` of a model, tensors sent to worker processes).
"""

from __future__ import annotations

import copy
import io
import os
import pickle
from typing import IO, Any

import numpy as np

import ferrograd

__all__ = ["load", "save"]

DEFAULT_PROTOCOL = 4

# What ``load(..., weights_only=True)`` lets a checkpoint refer to.
_SAFE_GLOBALS = {
    ("builtins", "set"),
    ("_codecs", "encode"),
    ("builtins", "frozenset"),
    ("builtins", "complex"),
    ("builtins", "slice"),
    ("builtins", "range"),
    ("builtins", "bytearray"),
    ("collections", "OrderedDict"),
    ("collections", "defaultdict"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("ferrograd.serialization", "_rebuild_tensor"),
    ("ferrograd.serialization", "_rebuild_parameter"),
    ("ferrograd.serialization", "_rebuild_dtype"),
}
_NUMPY_DTYPE_CLASSES = "numpy.dtypes"


def _dtype_by_name(name: str) -> ferrograd.dtype:
    dtype = getattr(ferrograd, name, None)
    if not isinstance(dtype, ferrograd.dtype):
        raise pickle.UnpicklingError(f"unknown dtype {name!r} in checkpoint")
    return dtype


def _dtype_name(dtype: ferrograd.dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _rebuild_tensor(array: np.ndarray, dtype_name: str, requires_grad: bool) -> ferrograd.Tensor:
    out = ferrograd.tensor(np.asarray(array), dtype=_dtype_by_name(dtype_name))
    if requires_grad:
        out.requires_grad_(True)
    return out


def _rebuild_parameter(array: np.ndarray, dtype_name: str, requires_grad: bool):
    return ferrograd.nn.Parameter(_rebuild_tensor(array, dtype_name, False), requires_grad)


def _rebuild_dtype(name: str) -> ferrograd.dtype:
    return _dtype_by_name(name)


def _tensor_args(tensor: ferrograd.Tensor) -> tuple[np.ndarray, str, bool]:
    return tensor.detach().numpy().copy(), _dtype_name(tensor.dtype), bool(tensor.requires_grad)


def _reduce_tensor(tensor: ferrograd.Tensor, protocol: int) -> tuple[Any, ...]:
    """Plain pickling (``pickle``, ``copy``, multiprocessing): as ``save`` pickles a tensor,
    plus the Python attributes set on it."""
    return _rebuild_tensor, _tensor_args(tensor), tensor.__dict__ or None


_DEEPCOPY_NON_LEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the "
    "moment.  If you were attempting to deepcopy a module, this may be because of a "
    "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001"
)


def _deepcopy_tensor(tensor: ferrograd.Tensor, memo: dict[int, Any]) -> ferrograd.Tensor:
    """``copy.deepcopy`` of a leaf: its values, ``requires_grad``, ``.grad`` and Python
    attributes, copied once per ``memo`` (tied tensors stay tied)."""
    if id(tensor) in memo:
        return memo[id(tensor)]
    if not tensor.is_leaf:
        raise RuntimeError(_DEEPCOPY_NON_LEAF)
    with ferrograd.no_grad():
        out = tensor.clone()
    out.requires_grad_(tensor.requires_grad)
    memo[id(tensor)] = out
    if tensor.grad is not None:
        out.grad = copy.deepcopy(tensor.grad, memo)
    out.__dict__.update(copy.deepcopy(tensor.__dict__, memo))
    return out


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, ferrograd.Tensor):
            args = _tensor_args(obj)
            if isinstance(obj, ferrograd.nn.Parameter):
                return _rebuild_parameter, args
            return _rebuild_tensor, args
        if isinstance(obj, ferrograd.dtype):
            return _rebuild_dtype, (_dtype_name(obj),)
        return NotImplemented


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, weights_only: bool) -> None:
        super().__init__(file)
        self.weights_only = weights_only

    def find_class(self, module: str, name: str):
        if not self.weights_only or (module, name) in _SAFE_GLOBALS or module == _NUMPY_DTYPE_CLASSES:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            "Weights only load failed. In ferrograd, `weights_only` defaults to True, as in PyTorch 2.6+. "
            "Re-running `ferrograd.load` with `weights_only` set to `False` will likely succeed, but it can "
            "result in arbitrary code execution. Do it only if you got the file from a trusted source.\n"
            f"Unsupported global: GLOBAL {module}.{name}"
        )


def _is_path(f) -> bool:
    return isinstance(f, (str, os.PathLike))


def save(
    obj: Any,
    f: str | os.PathLike | IO[bytes],
    pickle_module: Any = None,
    pickle_protocol: int = DEFAULT_PROTOCOL,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Write ``obj`` (tensors, state dicts, nested containers, ...) to the path or binary file ``f``."""
    if _is_path(f):
        with open(f, "wb") as fh:
            _Pickler(fh, protocol=pickle_protocol).dump(obj)
    else:
        _Pickler(f, protocol=pickle_protocol).dump(obj)  # type: ignore[arg-type]


def load(
    f: str | os.PathLike | IO[bytes],
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Read back what :func:`save` wrote. Everything is loaded on the CPU whatever
    ``map_location`` says. With ``weights_only`` (the default, as in PyTorch 2.6+) the
    checkpoint may hold only tensors, dtypes, numbers, strings and standard containers;
    pass ``weights_only=False`` for files from a trusted source holding other objects."""
    if weights_only is None:
        weights_only = True
    if _is_path(f):
        with open(f, "rb") as fh:
            return _Unpickler(io.BytesIO(fh.read()), weights_only).load()
    return _Unpickler(f, weights_only).load()

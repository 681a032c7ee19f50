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
from typing import IO, Any, Callable

import numpy as np

import ferrograd

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "safe_globals", "save"]

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
    ("ferrograd._dtype_info", "device"),
    ("ferrograd._size", "Size"),
}
_NUMPY_DTYPE_CLASSES = "numpy.dtypes"

# Globals the user allows on top of those (``add_safe_globals``): objects, or
# ``(object, "module.qualname")`` pairs naming them as the checkpoint does.
_marked_safe_globals: set[Callable | tuple[Callable, str]] = set()


def add_safe_globals(safe_globals: list[Callable | tuple[Callable, str]]) -> None:
    """Lets ``load(..., weights_only=True)`` use the given functions and classes. Each item is
    the object, found in a checkpoint as ``{__module__}.{__qualname__}``, or a pair
    ``(object, "module.qualname")`` giving the path the checkpoint names it by."""
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals.union(safe_globals)


def get_safe_globals() -> list[Callable | tuple[Callable, str]]:
    """The globals added by :func:`add_safe_globals` (and open :class:`safe_globals` blocks)."""
    return list(_marked_safe_globals)


def clear_safe_globals() -> None:
    """Forgets every global added by :func:`add_safe_globals`."""
    global _marked_safe_globals
    _marked_safe_globals = set()


class safe_globals:  # noqa: N801 - PyTorch's name
    """Context manager allowing the given globals (as :func:`add_safe_globals`) inside its block;
    on exit they are removed, as in PyTorch, even those allowed before the block."""

    def __init__(self, safe_globals: list[Callable | tuple[Callable, str]]) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc_info: object) -> None:
        global _marked_safe_globals
        _marked_safe_globals = _marked_safe_globals - set(self.safe_globals)


def _user_allowed_globals() -> dict[str, Any]:
    """The globals added by the user, by the path a checkpoint names them with; malformed
    pairs raise when a checkpoint is loaded, as in PyTorch."""
    allowed: dict[str, Any] = {}
    for item in _marked_safe_globals:
        if isinstance(item, tuple):
            if len(item) != 2:
                raise ValueError(
                    f"Expected tuple of length 2 (global, str of callable full path), but got tuple of length: {len(item)}"
                )
            if type(item[1]) is not str:
                raise TypeError(
                    f"Expected second item in tuple to be str of callable full path, but got: {type(item[1])}"
                )
            allowed[item[1]] = item[0]
        else:
            allowed[f"{item.__module__}.{item.__qualname__}"] = item
    return allowed


_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `ferrograd.load` "
    "from `False` to `True`. Re-running `ferrograd.load` with `weights_only` set to `False` will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a "
    "trusted source."
)
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of ferrograd.load to learn more about types accepted by default with "
    "weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


def _weights_only_message(message: str) -> str:
    """PyTorch's explanation around an error of a ``weights_only`` load: the two ways to load
    a checkpoint refused for a global, or the way out for other errors."""
    if "was not an allowed global by default" in message:
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two options, "
            "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
            f"\n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
            "the recommended steps in the following error message.\n\tWeightsUnpickler error: "
            f"{message}{_DOCS_MESSAGE}"
        )
    return (
        f"Weights only load failed. {_UNSAFE_MESSAGE}\nPlease file an issue with the following so that we can "
        "make `weights_only=True` compatible with your use case: WeightsUnpickler error: "
        f"\n\n{message}{_DOCS_MESSAGE}"
    )


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
        full_path = f"{module}.{name}"
        allowed = _user_allowed_globals()
        if full_path in allowed:
            # The object the user allowed, not whatever importing the path would give.
            return allowed[full_path]
        if module == "builtins":
            full_path = name
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. "
            f"Please use `ferrograd.serialization.add_safe_globals([{full_path}])` or the "
            f"`ferrograd.serialization.safe_globals([{full_path}])` context manager to allowlist this global "
            "if you trust this class/function."
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
    checkpoint may hold only tensors, dtypes, devices, sizes, numbers, strings, standard
    containers and the globals allowed by :func:`add_safe_globals`; pass
    ``weights_only=False`` for files from a trusted source holding other objects."""
    if weights_only is None:
        weights_only = True
    if _is_path(f):
        with open(f, "rb") as fh:
            f = io.BytesIO(fh.read())
    try:
        return _Unpickler(f, weights_only).load()
    except pickle.UnpicklingError as e:
        if not weights_only:
            raise
        raise pickle.UnpicklingError(_weights_only_message(str(e))) from None

"""The autograd graph as users see it: ``Node`` and saved-tensor hooks.

``saved_tensors_hooks(pack, unpack)`` applies ``pack`` to every tensor an op
or a custom Function saves for backward while the block is active, keeps
whatever ``pack`` returns instead of the tensor, and calls ``unpack`` on it
when backward needs the tensor. Hooks are per thread and nest.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .. import _C
from .._C import Node, Tensor

__all__ = [
    "Node",
    "disable_saved_tensors_hooks",
    "save_on_cpu",
    "saved_tensors_hooks",
]


class _Disabled(threading.local):
    message: str | None = None


_disabled = _Disabled()


class saved_tensors_hooks:
    """Context manager: ``pack(tensor) -> Any`` runs when a tensor is saved
    for backward, ``unpack(packed) -> Tensor`` when backward uses it.

    ``pack`` must not modify its input in place, and ``unpack`` must return
    a tensor with the same content as the one that was packed.
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if _disabled.message is not None:
            raise RuntimeError(_disabled.message)
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        _C._pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept as copies in CPU memory and copied back when
    backward uses them. ferrograd tensors always live in CPU memory, so
    this keeps a private copy of each saved tensor."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple:
            return (tensor.device, tensor.detach().clone())

        def unpack_from_cpu(packed: tuple) -> Tensor:
            _device, tensor = packed
            return tensor

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Within the block, entering ``saved_tensors_hooks`` raises
    ``RuntimeError(error_message)``; raises it at once if hooks are active."""
    previous = _disabled.message
    if _C._current_saved_tensors_hooks() is not None:
        raise RuntimeError(error_message)
    try:
        _disabled.message = error_message
        yield
    finally:
        _disabled.message = previous

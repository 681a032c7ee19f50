"""The autograd graph as users see it: ``Node``, saved-tensor hooks, hooks
over several tensors, and version bumps for writes ferrograd cannot see.

``saved_tensors_hooks(pack, unpack)`` applies ``pack`` to every tensor an op
or a custom Function saves for backward while the block is active, keeps
whatever ``pack`` returns instead of the tensor, and calls ``unpack`` on it
when backward needs the tensor. Hooks are per thread and nest.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from .. import _C
from .._C import Node, Tensor

__all__ = [
    "Node",
    "disable_saved_tensors_hooks",
    "increment_version",
    "register_multi_grad_hook",
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


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Counts an in-place write to ``tensor`` (or to each of several) that
    ferrograd did not make, such as one through ``data_ptr()`` in a kernel
    of your own, so that backward refuses values saved before it. Tensors
    made in inference mode have no version counter and are left alone."""
    _C._increment_version(tensor)


class _MultiHandle:
    """Removes every hook of a ``register_multi_grad_hook`` at once."""

    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self) -> _MultiHandle:
        return self

    def __exit__(self, *args: object) -> None:
        self.remove()


def _graph_node(tensor: Tensor) -> Node:
    """The node a gradient for ``tensor`` reaches first: its ``grad_fn``, or a
    leaf's accumulator (which every graph using the leaf shares)."""
    if tensor.grad_fn is not None:
        return tensor.grad_fn
    if not tensor.requires_grad:
        raise AssertionError("Expected gradient function to be set")
    from .grad_mode import enable_grad

    with enable_grad():
        return tensor.view_as(tensor).grad_fn.next_functions[0][0]


def _current_call() -> int:
    call = _C._current_graph_task_id()
    if call == -1:
        raise AssertionError("expected this hook to be called inside a backward call")
    return call


def register_multi_grad_hook(
    tensors: Sequence[Tensor],
    fn: Callable[..., None],
    *,
    mode: Literal["all", "any"] = "all",
) -> _MultiHandle:
    """Calls ``fn`` once per backward call that computes gradients for
    ``tensors``.

    With ``mode="all"``, ``fn(grads)`` runs after the gradient of every tensor
    that the call computes has been computed, ``grads`` holding one entry per
    tensor, ``None`` for those the call does not reach (not in its graph, or
    not on a path to its ``inputs``). With ``mode="any"``, ``fn(grad)`` runs on
    the first gradient computed. ``fn`` must not modify its arguments.
    Returns a handle whose ``remove()`` removes the hook.
    """
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    lock = threading.Lock()
    if mode == "any":
        # Keyed by backward call: each runs `fn` once, whichever gradient comes first.
        called: set[int] = set()

        @functools.wraps(fn)
        def on_first_grad(grad: Tensor) -> None:
            call = _current_call()
            with lock:
                if call in called:
                    return
                called.add(call)
            fn(grad)

        handles = tuple(t.register_hook(on_first_grad) for t in tensors if t.requires_grad)
        return _MultiHandle(handles)

    nodes = [_graph_node(t) for t in tensors]
    # Per backward call: the gradients seen so far and how many are awaited.
    pending: dict[int, tuple[list[Tensor | None], list[int]]] = {}

    def collect(index: int) -> Callable[[Tensor], None]:
        def on_grad(grad: Tensor) -> None:
            call = _current_call()
            with lock:
                if call not in pending:
                    awaited = sum(map(_C._will_engine_execute_node, nodes))
                    pending[call] = ([None] * len(nodes), [awaited])
                grads, left = pending[call]
                grads[index] = grad
                left[0] -= 1
                if left[0] > 0:
                    return
                del pending[call]
            fn(grads)

        return on_grad

    handles = tuple(t.register_hook(collect(i)) for i, t in enumerate(tensors))
    return _MultiHandle(handles)

"""Activation checkpointing: trade compute for memory.

``checkpoint(fn, *args, use_reentrant=True)`` runs ``fn`` without recording
a graph and keeps only its inputs; backward reruns ``fn`` with grad enabled
and backpropagates through the rerun from inside the engine (a reentrant
backward). The activations inside ``fn`` therefore never live beyond one
segment's backward.

``use_reentrant=False`` records ``fn``'s graph as usual but, through
saved-tensor hooks, keeps only a handle for each tensor its ops save. The
first time backward needs one of them, ``fn`` is rerun once (with the random
number generator state of the forward) and the saved tensors are served from
the rerun. This variant works with ``autograd.grad``, ``backward(inputs=)``
and keyword arguments.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .. import _C
from .._C import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import saved_tensors_hooks

__all__ = [
    "CheckpointError",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_early_stop",
]

_DETERMINISM_CHECKS = ("default", "none")


class CheckpointError(RuntimeError):
    """A recomputation that saved other tensors than the forward pass did."""


def noop_context_fn() -> tuple[contextlib.AbstractContextManager, contextlib.AbstractContextManager]:
    """The default ``context_fn``: no context around the forward pass or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Accepted for PyTorch's code: whether a recomputation may stop once it has every tensor
    backward needs. ferrograd always reruns the whole function, which gives the same tensors."""
    yield


def detach_variable(inputs: tuple) -> tuple:
    """``inputs`` detached from their graphs, each still requiring grad if it did."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}"
        )
    return tuple(x.detach().requires_grad_(x.requires_grad) if isinstance(x, Tensor) else x for x in inputs)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warns when no tensor among ``inputs`` requires grad: the checkpoint would get no gradients."""
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


_REENTRANT_PARTIAL = (
    "When use_reentrant=True, ferrograd.utils.checkpoint is incompatible with .grad() or passing an `inputs` "
    "parameter to .backward(). To resolve this error, you can either set use_reentrant=False, or call "
    ".backward() without passing the `inputs` argument."
)
_PASS_USE_REENTRANT = (
    "ferrograd.utils.checkpoint: the use_reentrant parameter should be passed explicitly. use_reentrant=False "
    "is recommended, but if you need to preserve the current default behavior, you can pass "
    "use_reentrant=True. Refer to docs for more details on the differences between the two variants."
)


class _RngState:
    """Runs a block with the generator set to a saved state, then restores the caller's."""

    def __init__(self, state: Tensor | None) -> None:
        self._state = state
        self._outer: Tensor | None = None

    def __enter__(self) -> None:
        if self._state is not None:
            self._outer = _C.get_rng_state()
            _C.set_rng_state(self._state)

    def __exit__(self, *exc: object) -> None:
        if self._outer is not None:
            _C.set_rng_state(self._outer)


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function: Callable, preserve_rng_state: bool, *args: Any) -> Any:
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=4)
        ctx.run_function = run_function
        ctx.rng_state = _C.get_rng_state() if preserve_rng_state else None
        ctx.args = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(a if isinstance(a, Tensor) else None for a in args))
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs: Any) -> tuple:
        if not _C._is_checkpoint_valid():
            raise RuntimeError(_REENTRANT_PARTIAL)
        inputs = []
        for arg, saved in zip(ctx.args, ctx.saved_tensors):
            if saved is None:
                inputs.append(arg)
            else:
                x = saved.detach()
                x.requires_grad_(saved.requires_grad)
                inputs.append(x)
        with _RngState(ctx.rng_state), enable_grad():
            outputs = ctx.run_function(*inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [
            (out, g) for out, g in zip(outputs, grad_outputs) if isinstance(out, Tensor) and out.requires_grad
        ]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _C._backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(x.grad if isinstance(x, Tensor) else None for x in inputs)
        return (None, None, *grads)


_RECOMPUTED_FEWER = (
    "ferrograd.utils.checkpoint: trying to save more tensors during the recomputation than during the "
    "original forward pass ({} in the forward, {} recomputed). The checkpointed function must run the "
    "same operations in its recomputation."
)
_RECOMPUTED_DIFFERENT = (
    "ferrograd.utils.checkpoint: Recomputed values for the following tensors have different metadata than "
    "during the forward pass.\ntensor at position {}:\nsaved metadata: {}\nrecomputed metadata: {}\n"
)


class _Recomputation:
    """One non-reentrant checkpointed call: the handles given out for the
    tensors its forward saved, and the rerun that serves them in backward."""

    def __init__(
        self,
        function: Callable,
        args: tuple,
        kwargs: dict,
        rng_state: Tensor | None,
        context: contextlib.AbstractContextManager,
        check_metadata: bool,
    ) -> None:
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.rng_state = rng_state
        self.context = context
        self.check_metadata = check_metadata
        # Shape and dtype of each saved tensor, in saving order.
        self.metadata: list[tuple] = []
        self.recomputed: list[Tensor] | None = None

    def pack(self, t: Tensor) -> int:
        self.metadata.append((tuple(t.shape), t.dtype))
        return len(self.metadata) - 1

    def unpack(self, index: int) -> Tensor:
        if self.recomputed is None:
            self.recompute()
        assert self.recomputed is not None
        return self.recomputed[index]

    def recompute(self) -> None:
        saved: list[Tensor] = []

        def keep(t: Tensor) -> None:
            saved.append(t.detach())

        def unused(_packed: None) -> Tensor:
            raise RuntimeError("ferrograd.utils.checkpoint: the recomputation's graph is never run")

        inputs = [
            a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in self.args
        ]
        with _RngState(self.rng_state), enable_grad(), self.context, saved_tensors_hooks(keep, unused):
            self.function(*inputs, **self.kwargs)
        if len(saved) < len(self.metadata):
            raise CheckpointError(_RECOMPUTED_FEWER.format(len(self.metadata), len(saved)))
        for i, (meta, t) in enumerate(zip(self.metadata, saved)):
            now = (tuple(t.shape), t.dtype)
            if self.check_metadata and now != meta:
                raise CheckpointError(_RECOMPUTED_DIFFERENT.format(i, _describe(meta), _describe(now)))
        self.recomputed = saved[: len(self.metadata)]
        # The rerun is done: drop what only it needed.
        self.function = None  # type: ignore[assignment]
        self.args = ()
        self.kwargs = {}
        self.context = contextlib.nullcontext()


def _describe(meta: tuple) -> str:
    shape, dtype = meta
    return "{" + f"'shape': {list(shape)}, 'dtype': {dtype}" + "}"


def _checkpoint_without_reentrant(
    function: Callable,
    preserve_rng_state: bool,
    context_fn: Callable[[], tuple],
    check_metadata: bool,
    *args: Any,
    **kwargs: Any,
) -> Any:
    rng_state = _C.get_rng_state() if preserve_rng_state else None
    forward_context, recompute_context = context_fn()
    frame = _Recomputation(function, args, kwargs, rng_state, recompute_context, check_metadata)
    with forward_context, saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


def checkpoint(
    function: Callable,
    *args: Any,
    use_reentrant: bool | None = None,
    preserve_rng_state: bool = True,
    context_fn: Callable[[], tuple] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """Runs ``function(*args)`` keeping only its inputs for backward, which reruns it.

    With ``use_reentrant=True`` the rerun happens in a nested backward call
    inside the engine, which cannot serve ``autograd.grad`` or
    ``backward(inputs=...)``. Without it, ``context_fn()`` gives the two context managers to
    run the forward pass and the recomputation in, and ``determinism_check="none"`` skips the
    check that the recomputation saved tensors of the same shapes and dtypes.
    """
    if use_reentrant is None:
        warnings.warn(_PASS_USE_REENTRANT, stacklevel=2)
        use_reentrant = True
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(
            f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, but got {determinism_check}"
        )
    if not use_reentrant:
        return _checkpoint_without_reentrant(
            function, preserve_rng_state, context_fn, determinism_check == "default", *args, **kwargs
        )
    if context_fn is not noop_context_fn or debug:
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


def checkpoint_sequential(
    functions: Sequence[Callable] | Any,
    segments: int,
    input: Any,
    use_reentrant: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Runs a sequence of modules in ``segments`` checkpointed chunks (the last one is not checkpointed)."""
    if use_reentrant is None:
        warnings.warn(_PASS_USE_REENTRANT, stacklevel=2)
        use_reentrant = True
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)

    def run_segment(start: int, end: int) -> Callable:
        def forward(x: Any) -> Any:
            for f in functions[start : end + 1]:
                x = f(x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run_segment(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run_segment(end + 1, len(functions) - 1)(input)

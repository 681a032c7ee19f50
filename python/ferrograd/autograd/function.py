"""Custom differentiable operations: subclass ``Function`` and call ``apply``.

The node a Function records is run by the Rust engine, which takes the GIL
only to call ``backward``.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

from .. import _C
from .._C import Tensor
from . import forward_ad
from .grad_mode import enable_grad, no_grad

_GRAPH_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


class FunctionCtx:
    """The ``ctx`` a Function's forward and backward share; any attribute may be set on it."""

    def __init__(self) -> None:
        self._saved: list | None = []
        self._dirty: tuple = ()
        self._non_differentiable: tuple = ()
        self.materialize_grads = True
        self.needs_input_grad: tuple = ()
        # What ``saved_tensors`` gives while ``jvp`` runs: the tensors of ``save_for_forward``.
        self._saved_for_jvp: tuple | None = None

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        # (tensor or packed form, version at saving, output number when it
        # is an output, unpack hook when packed)
        # filled in by _save_variables once forward has returned.
        self._saved = [(t, 0, None, None) for t in tensors]

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise RuntimeError(
                    f"mark_dirty can only accept variables, but argument {i} is of type {type(t).__name__}"
                )
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        for t in tensors:
            if not isinstance(t, Tensor):
                raise RuntimeError(
                    f"mark_non_differentiable only accepts variable arguments, but got {type(t).__name__}"
                )
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        if self._saved_for_jvp is not None:
            return self._saved_for_jvp
        if self._saved is None:
            raise RuntimeError(_GRAPH_FREED)
        name = getattr(self, "_node_name", "")
        tensors = []
        for t, version, output_nr, unpack in self._saved:
            if unpack is not None:
                t = _C._run_unpack_hook(unpack, t)
            elif t is not None:
                _C._check_saved_version(t, version, name, output_nr)
            if output_nr is not None and t is not None:
                # In a differentiable backward, a saved output is again the
                # output of this node.
                t = _C._saved_output(t, output_nr)
            tensors.append(t)
        return tuple(tensors)

    def _save_variables(self, outputs: tuple, recording: bool) -> None:
        """Once forward returned (and dirty outputs were marked): the version
        of each saved tensor is recorded, saved outputs are kept detached
        (the output's node holds this ctx, and a reference back would make
        a cycle), and the saved-tensor hooks in force, if any, pack them.
        ``outputs`` are the node's outputs: the tensors forward returned."""
        if not recording:
            # No backward will read them: as in PyTorch, nothing is saved or packed.
            self._saved = []
            return
        for i, (t, _, _, _) in enumerate(self._saved):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type {type(t).__name__}"
                )
        hooks = _C._current_saved_tensors_hooks()
        for k, (t, _, _, _) in enumerate(self._saved):
            version = _C._version_at_saving(t, recording) if t is not None else 0
            nr = next((i for i, o in enumerate(outputs) if o is t), None)
            if nr is not None:
                t = t.detach()
            if hooks is not None and t is not None:
                self._saved[k] = (_C._run_pack_hook(hooks[0], t), version, nr, hooks[1])
            else:
                self._saved[k] = (t, version, nr, None)

    def _release_saved(self) -> None:
        self._saved = None


class Function:
    """Base class of custom autograd operations.

    Define ``forward(ctx, *args)`` (or ``forward(*args)`` plus
    ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grad_outputs)``
    as static methods, then call ``MyFn.apply(*args)``.
    """

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> None:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    # Set on Functions of ferrograd's own: with inputs that carry tangents, their tangents come
    # from ``backward`` (see ``_jvp_through_backward``), as those of built-in ops do.
    _jvp_from_backward = False

    @staticmethod
    def jvp(ctx: FunctionCtx, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        ctx = FunctionCtx()
        ctx._forward_cls = cls
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        uses_setup_context = cls.setup_context is not Function.setup_context
        # Inputs with tangents: forward sees their primals, and jvp gives the outputs' tangents.
        tangents = forward_ad._input_tangents(args)
        primals_only = (
            forward_ad._set_fwd_grad_enabled(False) if tangents is not None else contextlib.nullcontext()
        )
        with no_grad(), primals_only:
            if uses_setup_context:
                output = cls.forward(*args, **kwargs)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        if uses_setup_context:
            cls.setup_context(ctx, args, output)
        is_tuple = isinstance(output, tuple)
        outputs = output if is_tuple else (output,)
        if any(all(t is not o for o in outputs) for t in ctx._dirty):
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned as output. "
                "The inputs that are modified inplace must all be outputs of the Function."
            )
        if _C.is_grad_enabled() and any(t.is_leaf and t.requires_grad for t in ctx._dirty):
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        # The node has an output per tensor output; other outputs are returned as they are.
        ctx._output_is_tensor = tuple(isinstance(o, Tensor) for o in outputs)
        tensor_outputs = tuple(o for o in outputs if isinstance(o, Tensor))
        node_cls = cls if len(tensor_outputs) == len(outputs) else _with_all_output_grads(cls.__name__)
        dirty, non_differentiable = list(ctx._dirty), list(ctx._non_differentiable)
        wired = iter(_C._function_record(node_cls, ctx, args, tensor_outputs, dirty, non_differentiable))
        jvp_from_backward = tangents is not None and cls.jvp is Function.jvp and cls._jvp_from_backward
        recording = _C.is_grad_enabled() and any(ctx.needs_input_grad)
        ctx._save_variables(tensor_outputs, recording or jvp_from_backward)
        result = tuple(next(wired) if isinstance(o, Tensor) else o for o in outputs)
        if jvp_from_backward:
            forward_ad._set_output_tangents(result, _jvp_through_backward(cls, ctx, args, tangents, result))
        elif tangents is not None:
            ctx._saved_for_jvp = tuple(getattr(ctx, "saved_for_forward", ()))
            try:
                with forward_ad._set_fwd_grad_enabled(False):
                    output_tangents = cls.jvp(ctx, *tangents)
            finally:
                ctx._saved_for_jvp = None
            forward_ad._set_output_tangents(result, output_tangents)
        return result if is_tuple else result[0]


def _jvp_through_backward(cls: type, ctx: FunctionCtx, args: tuple, tangents: list, outputs: tuple) -> tuple:
    """The outputs' tangents of a Function of ferrograd's own from its backward, as the core
    computes those of built-in ops: the gradient, with respect to the output gradients ``u``, of
    the real inner product of ``backward(u)`` with the input tangents."""
    # Nodes made from here on are the only ones that can reach the cotangents.
    since = _C._node_mark()
    cotangents = [
        o.new_zeros(o.shape).requires_grad_()
        if isinstance(o, Tensor) and (o.is_floating_point() or o.is_complex())
        else None
        for o in outputs
    ]
    live = [u for u in cotangents if u is not None]
    differentiable = _C.is_grad_enabled()
    needs_input_grad = ctx.needs_input_grad
    ctx.needs_input_grad = tuple(n or t is not None for n, t in zip(needs_input_grad, tangents))
    try:
        with enable_grad(), forward_ad._set_fwd_grad_enabled(False):
            grads = cls.backward(ctx, *cotangents)
            grads = grads if isinstance(grads, tuple) else (grads,)
            terms = [
                (g.conj() * t).real.sum() if g.is_complex() else (g * t).sum()
                for g, t, a in zip(grads, tangents, args)
                if isinstance(g, Tensor) and isinstance(t, Tensor) and isinstance(a, Tensor)
            ]
            total = sum(terms[1:], terms[0]) if terms else None
            found = (
                _C._grad_since([total], live, differentiable, since)
                if total is not None and total.requires_grad and live
                else [None] * len(live)
            )
    finally:
        ctx.needs_input_grad = needs_input_grad
    by_output = iter(found)
    output_tangents = []
    for u in cotangents:
        tangent = None if u is None else next(by_output)
        # An output that does not depend on the inputs has a zero tangent.
        output_tangents.append(u.new_zeros(u.shape) if u is not None and tangent is None else tangent)
    return tuple(output_tangents)


@functools.cache
def _with_all_output_grads(name: str) -> type:
    """The class a node runs the backward of, for a Function some of whose outputs are not
    tensors: named like the Function (so is its node), it calls the Function's backward with a
    gradient per output, None for those that are not tensors, as PyTorch does."""

    def backward(ctx: FunctionCtx, *tensor_grads: Any) -> Any:
        grads = iter(tensor_grads)
        all_grads = (next(grads) if is_tensor else None for is_tensor in ctx._output_is_tensor)
        return ctx._forward_cls.backward(ctx, *all_grads)

    return type(name, (), {"backward": staticmethod(backward)})


def once_differentiable(fn):
    """Marks a ``backward`` that is not itself differentiable: it runs without recording, and when
    its gradients would otherwise be differentiated they raise instead, as in PyTorch."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not _C.is_grad_enabled() or not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        # The gradients require grad through a node that raises, whose inputs are throwaway
        # leaves (PyTorch's DelayedError): nothing else is reachable from them.
        is_tuple = isinstance(outputs, tuple)
        leaves = [
            o.detach().requires_grad_() if isinstance(o, Tensor) else o
            for o in (outputs if is_tuple else (outputs,))
        ]
        return _DelayedError.apply(*leaves)

    return wrapper


class _DelayedError(Function):
    _jvp_from_backward = True
    # PyTorch's node for it is named so.
    _backward_node_name = "Error"

    @staticmethod
    def forward(ctx, *args):
        # New tensors (inputs returned as-is would be views of them).
        outputs = tuple(a.detach() if isinstance(a, Tensor) else a for a in args)
        return outputs if len(outputs) > 1 else outputs[0]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with @once_differentiable"
        )


def _no_derivative(name: str, message: str, outputs: int = 1) -> type[Function]:
    """A Function that links results computed without recording to the inputs they came from, so
    that differentiating them raises ``message`` as PyTorch does for ops without a derivative.
    ``apply(*inputs, *results)`` returns the last ``outputs`` arguments."""

    class NoDerivative(Function):
        _jvp_from_backward = True

        @staticmethod
        def forward(ctx, *args):
            # New tensors, as the results of built-in ops are (returned inputs would be views).
            results = tuple(r.detach() for r in args[-outputs:])
            return results if outputs > 1 else results[0]

        @staticmethod
        def backward(ctx, *grads):
            raise RuntimeError(message)

    NoDerivative.__name__ = NoDerivative.__qualname__ = f"{name}NoDerivative"
    return NoDerivative

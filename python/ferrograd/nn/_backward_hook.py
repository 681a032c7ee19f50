"""Module backward hooks (``register_full_backward_hook`` and
``register_full_backward_pre_hook``).

A module is not one node of the graph, so its gradients are caught at its
edges: its tensor inputs and its tensor outputs each pass through an
identity Function. The node on the output side receives the gradients of
the outputs first; the node on the input side then receives the gradients
of the inputs, and the hooks may replace either before they flow on.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import ferrograd

from ..autograd.function import Function


class BackwardHookFunction(Function):
    """Identity whose node carries a module's backward hooks."""

    _jvp_from_backward = True

    @staticmethod
    def forward(ctx: Any, *tensors: ferrograd.Tensor) -> tuple[ferrograd.Tensor, ...]:
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx: Any, *grads: ferrograd.Tensor | None) -> tuple[ferrograd.Tensor | None, ...]:
        return grads


def _pack_with_none(indices: Sequence[int], values: Sequence[Any], size: int) -> tuple[Any, ...]:
    """The gradients of the tensor positions, with None at the others."""
    packed: list[Any] = [None] * size
    for index, value in zip(indices, values):
        packed[index] = value
    return tuple(packed)


def _run_replacing(
    hooks: Sequence[Callable[..., Any]],
    call: Callable[[Callable[..., Any], tuple[Any, ...]], Any],
    grads: tuple[Any, ...],
    wrong_count: str,
) -> tuple[Any, ...]:
    """Runs each hook as `call(hook, grads)`; a tuple it returns replaces
    `grads` for the hooks after it and for the graph."""
    for hook in hooks:
        replaced = call(hook, grads)
        if replaced is None:
            continue
        if len(replaced) != len(grads):
            raise RuntimeError(f"{wrong_count}, got {len(replaced)}, but expected {len(grads)}")
        grads = tuple(replaced)
    return grads


class BackwardHook:
    """The backward hooks of one call of a module."""

    def __init__(
        self,
        module: Any,
        hooks: Sequence[Callable[..., Any]],
        pre_hooks: Sequence[Callable[..., Any]],
    ) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = 0
        self.input_indices: list[int] | None = None
        # (shape, dtype) of each tensor input, for the zeros that stand in
        # for the gradient of an input the outputs do not depend on.
        self.input_meta: list[tuple[Any, Any]] = []
        self.n_outputs = 0
        self.output_indices: list[int] | None = None

    @staticmethod
    def _through_identity(args: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[int] | None, Any]:
        """`args` with its tensors passed through a `BackwardHookFunction`,
        their positions and the identity's node; `args` unchanged (and no
        positions) when nothing will flow back through them."""
        indices = [i for i, a in enumerate(args) if isinstance(a, ferrograd.Tensor)]
        tensors = [args[i] for i in indices]
        if not (ferrograd.is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return args, None, None
        wrapped = BackwardHookFunction.apply(*tensors)
        node = next(t.grad_fn for t in wrapped if t.grad_fn is not None)
        out = list(args)
        for i, t in zip(indices, wrapped):
            out[i] = t
        return tuple(out), indices, node

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        wrapped, self.input_indices, node = self._through_identity(args)
        self.n_inputs = len(args)
        if node is not None:
            self.input_meta = [(args[i].shape, args[i].dtype) for i in self.input_indices or ()]
            node.register_prehook(self._on_input_grads)
        return wrapped

    def setup_output_hook(self, result: Any) -> Any:
        outputs = result if isinstance(result, tuple) else (result,)
        wrapped, self.output_indices, node = self._through_identity(outputs)
        self.n_outputs = len(outputs)
        if node is not None:
            node.register_prehook(self._on_output_grads)
        return wrapped if isinstance(result, tuple) else wrapped[0]

    def _on_output_grads(self, grads: tuple[Any, ...]) -> tuple[Any, ...] | None:
        assert self.output_indices is not None
        grad_outputs = _run_replacing(
            self.pre_hooks,
            lambda hook, current: hook(self.module, current),
            _pack_with_none(self.output_indices, grads, self.n_outputs),
            "Backward pre hook returned an invalid number of grad_output",
        )
        if self.input_indices is None:
            # No input takes a gradient, so no input-side node will run:
            # the hooks see the outputs' gradients here.
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to module outputs "
                "since no inputs require gradients.",
                stacklevel=2,
            )
            grad_inputs = (None,) * self.n_inputs
            for hook in self.hooks:
                res = hook(self.module, grad_inputs, grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should always "
                        "return None or None for all gradients."
                    )
        else:
            self.grad_outputs = grad_outputs
        return tuple(grad_outputs[i] for i in self.output_indices)

    def _on_input_grads(self, grads: tuple[Any, ...]) -> tuple[Any, ...] | None:
        if self.grad_outputs is None:
            # The inputs' gradient did not come through the module's outputs
            # (a second backward through the inputs alone, say).
            return None
        assert self.input_indices is not None
        grads = tuple(
            ferrograd.zeros(shape, dtype=dtype) if g is None else g
            for g, (shape, dtype) in zip(grads, self.input_meta)
        )
        grad_inputs = _run_replacing(
            self.hooks,
            lambda hook, current: hook(self.module, current, self.grad_outputs),
            _pack_with_none(self.input_indices, grads, self.n_inputs),
            "Backward hook returned an invalid number of grad_input",
        )
        self.grad_outputs = None
        return tuple(grad_inputs[i] for i in self.input_indices)


def register_on_output_node(
    module: Any, hooks: Sequence[Callable[..., Any]], inputs: tuple[Any, ...], result: Any
) -> None:
    """The deprecated `register_backward_hook`: each hook runs as
    `hook(module, grad_input, grad_output)` on the node that produced the module's first output
    tensor, with PyTorch's warnings when that node does not see all of the module's inputs and
    outputs."""
    output = result
    while not isinstance(output, ferrograd.Tensor):
        if isinstance(output, dict):
            output = next(v for v in output.values() if isinstance(v, ferrograd.Tensor))
        else:
            output = output[0]
    node = output.grad_fn
    if node is None:
        return
    for hook in hooks:
        node.register_hook(
            lambda grad_inputs, grad_outputs, hook=hook: hook(module, grad_inputs, grad_outputs)
        )
    problem = _what_the_output_node_misses(inputs, result, node)
    if problem is not None:
        warnings.warn(problem, FutureWarning, stacklevel=4)


def _what_the_output_node_misses(inputs: tuple[Any, ...], result: Any, node: Any) -> str | None:
    """Why the hooks on `node` miss some of the module's gradients, as PyTorch warns, or None."""
    if isinstance(result, ferrograd.Tensor):
        result = (result,)
    elif not (isinstance(result, tuple) and all(isinstance(r, ferrograd.Tensor) for r in result)):
        return (
            "Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
            "Tensors is deprecated and will be removed in future versions. This hook will be missing some "
            "of the grad_output. Please use register_full_backward_hook to get the documented behavior."
        )
    if not all(isinstance(i, ferrograd.Tensor) for i in inputs):
        return (
            "Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
            "tuple of Tensors is deprecated and will be removed in future versions. This hook will be "
            "missing some of the grad_input. Please use register_full_backward_hook to get the documented "
            "behavior."
        )
    output_nodes = {r.grad_fn for r in result if r.grad_fn is not None}
    if len(output_nodes) > 1:
        return (
            "Using a non-full backward hook when outputs are generated by different autograd Nodes is "
            "deprecated and will be removed in future versions. This hook will be missing some grad_output. "
            "Please use register_full_backward_hook to get the documented behavior."
        )
    if node not in output_nodes:
        return (
            "Using a non-full backward hook when outputs are nested in python data structure is deprecated "
            "and will be removed in future versions. This hook will be missing some grad_output."
        )
    input_nodes = {i.grad_fn for i in inputs if i.grad_fn is not None}
    if input_nodes != {next_node for next_node, _ in node.next_functions}:
        return (
            "Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated "
            "and will be removed in future versions. This hook will be missing some grad_input. Please use "
            "register_full_backward_hook to get the documented behavior."
        )
    return None

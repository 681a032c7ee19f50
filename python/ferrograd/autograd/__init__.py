"""Automatic differentiation: ``backward``, ``grad`` and grad modes."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Optional, Union

from .. import _C
from .._C import Tensor
from . import forward_ad, functional, graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def backward(
    tensors: _TensorOrTensors,
    grad_tensors: Optional[_TensorOrTensors] = None,
    retain_graph: Optional[bool] = None,
    create_graph: bool = False,
    inputs: Optional[_TensorOrTensors] = None,
) -> None:
    """Accumulates the gradients of ``tensors`` into the ``.grad`` of graph leaves."""
    tensors = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    if inputs is not None:
        inputs = _as_tuple(inputs)
    _C._backward(tensors, grads, retain_graph, create_graph, inputs)


def grad(
    outputs: _TensorOrTensors,
    inputs: _TensorOrTensors,
    grad_outputs: Optional[_TensorOrTensors] = None,
    retain_graph: Optional[bool] = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: Optional[bool] = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs``, leaving ``.grad`` alone.

    With ``is_grads_batched=True`` the first dimension of each of ``grad_outputs`` is a batch of
    vectors, and each gradient gains that dimension: one vector-Jacobian product per entry."""
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    if not inputs_t:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False."
        )
    if is_grads_batched:
        result = _batched_grad(outputs, inputs_t, grads, retain_graph, create_graph, allow_unused)
    else:
        result = _C._grad(outputs, inputs_t, grads, retain_graph, create_graph, allow_unused)
    if materialize_grads:
        result = [g if g is not None else _zeros_like(i) for g, i in zip(result, inputs_t)]
    return tuple(result)


_VOLATILE_SET = "volatile was removed and now has no effect. Use `with ferrograd.no_grad():` instead."


class _VariableMeta(type):
    """Makes ``Variable(...)`` build a tensor and ``isinstance(x, Variable)`` test for one."""

    def __call__(cls, data: Tensor, requires_grad: bool = False, volatile: bool = False) -> Tensor:
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            warnings.warn(_VOLATILE_SET, UserWarning, stacklevel=2)
        return data.detach().requires_grad_(requires_grad)

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """The legacy wrapper: a Variable is a tensor, so ``Variable(data, requires_grad=False)``
    returns a new leaf sharing ``data``'s memory (cut from its graph), and every tensor is an
    instance of it. ``volatile`` has no effect (use ``no_grad``) and warns."""


def _volatile_get(self: Tensor) -> bool:
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def _volatile_set(self: Tensor, value: bool) -> None:
    warnings.warn(_VOLATILE_SET, UserWarning, stacklevel=2)


Tensor.volatile = property(_volatile_get, _volatile_set, doc="Always False (removed); warns.")


_multithreading = True


class set_multithreading_enabled:  # noqa: N801 - PyTorch's name
    """Records whether backward may run on several threads, as a call or a context manager that
    restores the previous value; ferrograd's backward runs on the calling thread either way."""

    def __init__(self, mode: bool) -> None:
        global _multithreading
        self._previous = _multithreading
        self.mode = bool(mode)
        _multithreading = self.mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        global _multithreading
        _multithreading = self._previous

    def clone(self) -> set_multithreading_enabled:
        return self.__class__(self.mode)


def is_multithreading_enabled() -> bool:
    """The flag set by :class:`set_multithreading_enabled` (True by default)."""
    return _multithreading


def is_view_replay_enabled() -> bool:
    """Always False: ferrograd does not replay views (PyTorch's default too)."""
    return False


def _zeros_like(t: Tensor, batch: tuple = ()) -> Tensor:
    return _C.zeros(*batch, *t.shape, dtype=t.dtype)


def _batch_size(outputs: tuple, grads: tuple) -> int:
    """The batch size shared by batched ``grads``, each checked against its output's shape."""
    sizes = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if out.dim() == 0:
                raise ValueError(
                    "vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that input is a "
                    "Tensor of dimensionality 0 so expected in_dim to satisfy 0 <= in_dim < 0."
                )
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        if g.dim() == 0 or tuple(g.shape[1:]) != tuple(out.shape):
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of "
                f"corresponding output, but a mismatch was detected: grad_output[{i}] has a shape of "
                f"ferrograd.Size({list(g.shape[1:])}) and output[{i}] has a shape of ferrograd.Size({list(out.shape)}). "
                "If you only want some tensors in `grad_output` to be considered batched, consider using vmap."
            )
        sizes.append(g.shape[0])
    if len(set(sizes)) > 1:
        raise ValueError(
            f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes {sizes} "
            "for the mapped dimension"
        )
    return sizes[0]


def _batched_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused) -> list:
    """``grad`` once per entry of the batched ``grads``, each result stacked along a new first
    dimension. The graph is kept until the last entry, which frees it unless asked not to."""
    batch = _batch_size(outputs, grads)
    keep = create_graph if retain_graph is None else retain_graph
    if batch == 0:
        # Nothing to differentiate; one pass with zero vectors still tells unused inputs apart.
        probe = tuple(g.new_zeros(g.shape[1:]) for g in grads)
        used = _C._grad(outputs, inputs, probe, keep, create_graph, allow_unused)
        return [None if g is None else _zeros_like(i, (0,)) for g, i in zip(used, inputs)]
    rows = [
        _C._grad(
            outputs, inputs, tuple(g[b] for g in grads), keep or b < batch - 1, create_graph, allow_unused
        )
        for b in range(batch)
    ]
    return [None if column[0] is None else _C.stack(column) for column in zip(*rows)]


__all__ = [
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Tensor",
    "Variable",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "forward_ad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "is_multithreading_enabled",
    "is_view_replay_enabled",
    "no_grad",
    "graph",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
    "set_multithreading_enabled",
]

"""Automatic differentiation: ``backward``, ``grad`` and grad modes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional, Union

from .. import _C
from .._C import Tensor
from . import functional, graph
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
    """The gradients of ``outputs`` with respect to ``inputs``, leaving ``.grad`` alone."""
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported")
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False."
        )
    result = _C._grad(outputs, inputs_t, grads, retain_graph, create_graph, allow_unused)
    if materialize_grads:
        result = [g if g is not None else _zeros_like(i) for g, i in zip(result, inputs_t)]
    return tuple(result)


def _zeros_like(t: Tensor) -> Tensor:
    return _C.zeros(*t.shape, dtype=t.dtype)


__all__ = [
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Tensor",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "no_grad",
    "graph",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
]

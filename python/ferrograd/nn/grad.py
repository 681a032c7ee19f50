"""Gradients of convolutions with respect to their input or weight (``torch.nn.grad``), for
custom ``autograd.Function`` backward passes. Each differentiates the convolution itself, so
the result is differentiable in ``weight``/``input`` and ``grad_output`` when grad mode is on."""

from __future__ import annotations

from collections.abc import Sequence

from .. import _C
from .._C import is_grad_enabled
from ..autograd import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from . import functional as F

__all__ = [
    "conv1d_input",
    "conv1d_weight",
    "conv2d_input",
    "conv2d_weight",
    "conv3d_input",
    "conv3d_weight",
]

_CONVS = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _placeholder(size: Sequence[int], like: _C.Tensor) -> _C.Tensor:
    return _C.zeros(tuple(size), dtype=like.dtype).requires_grad_()


def _conv_gradient(dims, wrt_input, input, weight, grad_output, stride, padding, dilation, groups):
    """The gradient of ``conv{dims}d(input, weight)`` for ``grad_output`` with respect to the
    one of ``input``/``weight`` given as a size."""
    given = weight if wrt_input else input
    keep_graph = is_grad_enabled() and (given.requires_grad or grad_output.requires_grad)
    if wrt_input:
        input = _placeholder(input, grad_output)
    else:
        weight = _placeholder(weight, grad_output)
    with enable_grad():
        out = _CONVS[dims](input, weight, None, stride, padding, dilation, groups)
        (gradient,) = _autograd_grad(
            out, input if wrt_input else weight, grad_output, create_graph=keep_graph
        )
    return gradient


def _gradients(dims: int):
    """``conv{dims}d_input`` and ``conv{dims}d_weight``, with PyTorch's parameter names."""

    def conv_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _conv_gradient(dims, True, input_size, weight, grad_output, stride, padding, dilation, groups)

    def conv_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _conv_gradient(dims, False, input, weight_size, grad_output, stride, padding, dilation, groups)

    for function, wanted in ((conv_input, "input"), (conv_weight, "weight")):
        function.__name__ = function.__qualname__ = f"conv{dims}d_{wanted}"
        function.__doc__ = (
            f"The gradient of ``conv{dims}d`` with respect to its {wanted}, given that one's size."
        )
    return conv_input, conv_weight


conv1d_input, conv1d_weight = _gradients(1)
conv2d_input, conv2d_weight = _gradients(2)
conv3d_input, conv3d_weight = _gradients(3)

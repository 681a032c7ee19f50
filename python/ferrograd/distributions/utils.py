"""Helpers shared by the distributions: parameter broadcasting and the
logits/probabilities conversions."""

from __future__ import annotations

import numbers
from functools import update_wrapper
from typing import Any

import ferrograd as _fg
from ferrograd import Tensor

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant

__all__ = [
    "bce_with_logits",
    "broadcast_all",
    "clamp_probs",
    "euler_constant",
    "format_value",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "size_str",
    "sum_rightmost",
    "tensor_like",
]


def size_str(shape) -> str:
    """Render a shape the way PyTorch prints ``torch.Size`` in messages."""
    return f"torch.Size({list(shape)})"


def format_value(value) -> str:
    """Format a bound or parameter as PyTorch's f-strings do (0-d tensors as numbers)."""
    if isinstance(value, Tensor) and value.dim() == 0:
        return str(value.item())
    return str(value)


def broadcast_all(*values):
    """Broadcast tensors and Python numbers to a common shape.

    Numbers become tensors of the dtype of the first tensor argument (or the
    default dtype when every argument is a number)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or torch.tensor.")
    if not any(isinstance(v, Tensor) for v in values):
        dtype = _fg.get_default_dtype()
        return tuple(_fg.tensor(float(v), dtype=dtype) for v in values)
    ref = next(v for v in values if isinstance(v, Tensor))
    dtype = ref.dtype if ref.is_floating_point() else _fg.get_default_dtype()
    tensors = [v if isinstance(v, Tensor) else _fg.tensor(v, dtype=dtype) for v in values]
    return tuple(_fg.broadcast_tensors(*tensors))


def clamp_probs(probs: Tensor) -> Tensor:
    eps = _fg.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    if is_binary:
        return _fg.sigmoid(logits)
    return _fg.softmax(logits, dim=-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    ps = clamp_probs(probs)
    if is_binary:
        return _fg.log(ps) - _fg.log1p(-ps)
    return _fg.log(ps)


class lazy_property:  # noqa: N801 - PyTorch's name
    """Compute an attribute on first access and cache it on the instance."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type=None):
        if instance is None:
            return self
        with _fg.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def sum_rightmost(value, dim: int):
    """Sum out the ``dim`` right-most dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.dim() - dim]) + (-1,)).sum(-1)


def bce_with_logits(logits, target):
    """Elementwise ``-(target * log sigmoid(logits) + (1 - target) * log sigmoid(-logits))``."""
    return _fg.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")


def tensor_like(value, ref):
    """``value`` as a tensor: tensors pass through, numbers take the dtype of ``ref``."""
    return value if isinstance(value, Tensor) else _fg.tensor(float(value), dtype=ref.dtype)

"""Gradient clipping with PyTorch's semantics."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable

import ferrograd

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _grads(parameters) -> list:
    if isinstance(parameters, ferrograd.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def get_total_norm(
    tensors: ferrograd.Tensor | Iterable[ferrograd.Tensor],
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> ferrograd.Tensor:
    """The ``norm_type`` norm of all ``tensors`` taken together, as if concatenated into one vector,
    as a 0-d tensor (no gradient). ``foreach`` is accepted for compatibility and ignored."""
    tensors = [tensors] if isinstance(tensors, ferrograd.Tensor) else list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return ferrograd.tensor(0.0)
    with ferrograd.no_grad():
        vector_norm = ferrograd.linalg.vector_norm
        norms = [vector_norm(t.detach(), norm_type) for t in tensors]
        total_norm = vector_norm(ferrograd.stack(norms), norm_type)
    if error_if_nonfinite and not math.isfinite(total_norm.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
            "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
            "anyway, set `error_if_nonfinite=False`"
        )
    return total_norm


def clip_grads_with_norm_(
    parameters: ferrograd.Tensor | Iterable[ferrograd.Tensor],
    max_norm: float,
    total_norm: ferrograd.Tensor,
    foreach: bool | None = None,
) -> None:
    """Multiply the gradients of ``parameters`` in place by ``min(1, max_norm / (total_norm + 1e-6))``,
    with ``total_norm`` precomputed (e.g. by :func:`get_total_norm`)."""
    grads = _grads(parameters)
    if len(grads) == 0:
        return
    with ferrograd.no_grad():
        clip_coef = float(max_norm) / (total_norm + 1e-6)
        clip_coef_clamped = clip_coef.clamp(max=1.0)
        for g in grads:
            g.mul_(clip_coef_clamped.to(g.dtype))


def clip_grad_norm_(
    parameters: ferrograd.Tensor | Iterable[ferrograd.Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> ferrograd.Tensor:
    """Scale the gradients of ``parameters`` in place so that their joint norm is at most ``max_norm``.

    :func:`get_total_norm` of the gradients followed by :func:`clip_grads_with_norm_`.
    Returns the total norm of the gradients (before clipping) as a 0-d tensor.
    """
    if isinstance(parameters, ferrograd.Tensor):
        parameters = [parameters]
    parameters = list(parameters)
    total_norm = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(
    parameters: ferrograd.Tensor | Iterable[ferrograd.Tensor], clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every gradient of ``parameters`` in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    with ferrograd.no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)

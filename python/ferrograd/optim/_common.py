"""Pieces shared by Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD and LBFGS: PyTorch's
hyper-parameter checks, restoring pickled state, and the real view of complex tensors.

Relies on
  Tensor: numel(), is_complex().
  top level: ferrograd.Tensor, ferrograd.tensor(float), ferrograd.is_tensor(obj),
    ferrograd.view_as_real(t).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ferrograd

if TYPE_CHECKING:
    from ferrograd import Tensor

    from .optimizer import Optimizer


def check_non_negative(what: str, value: Any) -> None:
    """PyTorch's "Invalid <what>: <value>" for a hyper-parameter below zero."""
    if not 0.0 <= value:
        raise ValueError(f"Invalid {what}: {value}")


def check_lr(lr: float | Tensor) -> None:
    if isinstance(lr, ferrograd.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    check_non_negative("learning rate", lr)


def check_betas(betas: tuple[float, float]) -> None:
    for index, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {beta}")


def restore_state(optimizer: Optimizer, added_later: dict[str, Any], scalar_keys: tuple[str, ...]) -> None:
    """``__setstate__``'s fix-ups for state pickled by older versions: group options that did
    not exist yet get their defaults, and per-parameter scalars saved as numbers become 0-d tensors."""
    for group in optimizer.param_groups:
        for key, value in added_later.items():
            group.setdefault(key, value)
    for p_state in optimizer.state.values():
        for key in scalar_keys:
            if key in p_state and not ferrograd.is_tensor(p_state[key]):
                p_state[key] = ferrograd.tensor(float(p_state[key]))


def real_views(param: Tensor, *tensors: Tensor) -> tuple[Tensor, ...]:
    """``param`` and ``tensors`` as real tensors: PyTorch updates a complex parameter (and its
    gradient and state) as independent real and imaginary parts."""
    if not param.is_complex():
        return (param, *tensors)
    return tuple(ferrograd.view_as_real(t) for t in (param, *tensors))

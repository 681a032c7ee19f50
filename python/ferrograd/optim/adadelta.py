"""torch.optim.Adadelta, with PyTorch's single-tensor update rule.

Relies on
  Tensor: grad, unary -, add(other, alpha=float), add(float), add_(other, alpha=float),
    mul_(float), mul_(other), div_(other), addcmul_(t1, t2, value=float), sqrt_(), clone(),
    is_complex().
  top level: ferrograd.tensor(float), ferrograd.zeros_like(t).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import ferrograd

from ._common import check_lr, check_non_negative, real_views, restore_state
from .optimizer import Optimizer
from .rmsprop import _scalar

if TYPE_CHECKING:
    from ferrograd import Tensor

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    """Adadelta (Zeiler): the gradient scaled by the ratio of running root-mean-squares of past
    updates and of past gradients, times ``lr``."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_non_negative("epsilon value", eps)
        check_non_negative("weight_decay value", weight_decay)
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        added_later = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}
        restore_state(self, added_later, ("step",))

    def _state_of(self, param: Tensor) -> dict[str, Any]:
        state = self.state[param]
        if not state:
            state["step"] = ferrograd.tensor(0.0)
            state["square_avg"] = ferrograd.zeros_like(param)
            state["acc_delta"] = ferrograd.zeros_like(param)
        return state

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._state_of(p) for p in params]
        adadelta(
            params,
            [p.grad for p in params],
            [s["square_avg"] for s in states],
            [s["acc_delta"] for s in states],
            [s["step"] for s in states],
            lr=group["lr"],
            rho=group["rho"],
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            maximize=group["maximize"],
            differentiable=group["differentiable"],
        )


def adadelta(
    params: list[Tensor],
    grads: list[Tensor],
    square_avgs: list[Tensor],
    acc_deltas: list[Tensor],
    state_steps: list[Tensor],
    *,
    lr: float | Tensor,
    rho: float,
    eps: float,
    weight_decay: float,
    maximize: bool,
    differentiable: bool = False,
) -> None:
    """Functional Adadelta: updates parameters, running averages and step counts in place."""
    lr = _scalar(lr)
    for param, grad, square_avg, acc_delta, step_t in zip(
        params, grads, square_avgs, acc_deltas, state_steps
    ):
        step_t.add_(1)
        grad = -grad if maximize else grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        param, grad, square_avg, acc_delta = real_views(param, grad, square_avg, acc_delta)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        if differentiable:
            # ``delta`` is modified below; a recording step must not modify a saved tensor.
            delta = delta.clone()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)

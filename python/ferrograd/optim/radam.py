"""torch.optim.RAdam, with PyTorch's single-tensor update rule.

Relies on
  Tensor: grad, unary -, add(other, alpha=float), add_(other, alpha=float), mul_(float),
    lerp_(end, float), addcmul_(t1, t2, value=float), / float, float / Tensor, * float,
    * Tensor, sqrt(), add(float), add_(float), item(), is_complex().
  top level: ferrograd.tensor(float), ferrograd.zeros_like(t).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import ferrograd

from ._common import check_betas, check_lr, check_non_negative, real_views, restore_state
from .optimizer import Optimizer
from .rmsprop import _scalar

if TYPE_CHECKING:
    from ferrograd import Tensor

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    """Rectified Adam (Liu et al.): plain momentum SGD until the variance of the adaptive rate is
    tractable, then Adam scaled by the rectification term; L2 or decoupled weight decay."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        check_non_negative("epsilon value", eps)
        check_betas(betas)
        check_non_negative("weight_decay value", weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        added_later = {
            "foreach": None,
            "maximize": False,
            "differentiable": False,
            "decoupled_weight_decay": False,
            "capturable": False,
        }
        restore_state(self, added_later, ("step",))

    def _state_of(self, param: Tensor) -> dict[str, Any]:
        state = self.state[param]
        if not state:
            state["step"] = ferrograd.tensor(0.0)
            state["exp_avg"] = ferrograd.zeros_like(param)
            state["exp_avg_sq"] = ferrograd.zeros_like(param)
        return state

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._state_of(p) for p in params]
        beta1, beta2 = group["betas"]
        radam(
            params,
            [p.grad for p in params],
            [s["exp_avg"] for s in states],
            [s["exp_avg_sq"] for s in states],
            [s["step"] for s in states],
            beta1=beta1,
            beta2=beta2,
            lr=group["lr"],
            weight_decay=group["weight_decay"],
            eps=group["eps"],
            maximize=group["maximize"],
            decoupled_weight_decay=group["decoupled_weight_decay"],
            differentiable=group["differentiable"],
        )


def radam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    *,
    beta1: float,
    beta2: float,
    lr: float | Tensor,
    weight_decay: float,
    eps: float,
    maximize: bool,
    decoupled_weight_decay: bool = False,
    differentiable: bool = False,
) -> None:
    """Functional RAdam: updates parameters, moments and step counts in place."""
    lr = _scalar(lr)
    # Length of the approximated simple moving average as the step count goes to infinity.
    rho_inf = 2 / (1 - beta2) - 1
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        step_t = state_steps[i]
        param, grad, exp_avg, exp_avg_sq = real_views(param, grad, exp_avgs[i], exp_avg_sqs[i])
        step_t.add_(1)
        step = step_t.item()
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction2 = 1 - beta2**step
        update = exp_avg / (1 - beta1**step) * lr
        rho_t = rho_inf - 2 * step * beta2**step / bias_correction2
        if rho_t > 5.0:
            # The adaptive rate's variance is tractable: scale by it and by the rectification.
            root = exp_avg_sq.sqrt()
            root = root.add(eps) if differentiable else root.add_(eps)
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            update = update * (bias_correction2**0.5 / root) * rect
        param.add_(update, alpha=-1.0)

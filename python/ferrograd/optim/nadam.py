"""torch.optim.NAdam, with PyTorch's single-tensor update rule.

Relies on
  Tensor: grad, unary -, add(other, alpha=float), mul_(float), lerp_(end, float),
    addcmul_(t1, t2, value=float), addcdiv_(t1, t2, value=float), div(float), sqrt(),
    add_(float), item(), is_complex().
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

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    """Adam with Nesterov momentum (Dozat), whose momentum coefficient warms up with
    ``momentum_decay``; L2 or (``decoupled_weight_decay``) AdamW-style weight decay."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
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
        check_non_negative("momentum_decay value", momentum_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        added_later = {
            "maximize": False,
            "foreach": None,
            "capturable": False,
            "differentiable": False,
            "decoupled_weight_decay": False,
        }
        restore_state(self, added_later, ("step", "mu_product"))

    def _state_of(self, param: Tensor) -> dict[str, Any]:
        state = self.state[param]
        if not state:
            state["step"] = ferrograd.tensor(0.0)
            # A 0-d tensor in the scalar dtype, as torch: its rounding is part of the trajectory.
            state["mu_product"] = ferrograd.tensor(1.0)
            state["exp_avg"] = ferrograd.zeros_like(param)
            state["exp_avg_sq"] = ferrograd.zeros_like(param)
        return state

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._state_of(p) for p in params]
        beta1, beta2 = group["betas"]
        nadam(
            params,
            [p.grad for p in params],
            [s["exp_avg"] for s in states],
            [s["exp_avg_sq"] for s in states],
            [s["mu_product"] for s in states],
            [s["step"] for s in states],
            beta1=beta1,
            beta2=beta2,
            lr=group["lr"],
            weight_decay=group["weight_decay"],
            momentum_decay=group["momentum_decay"],
            eps=group["eps"],
            decoupled_weight_decay=group["decoupled_weight_decay"],
            maximize=group["maximize"],
        )


def nadam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    mu_products: list[Tensor],
    state_steps: list[Tensor],
    *,
    beta1: float,
    beta2: float,
    lr: float | Tensor,
    weight_decay: float,
    momentum_decay: float,
    eps: float,
    maximize: bool,
    decoupled_weight_decay: bool = False,
) -> None:
    """Functional NAdam: updates parameters, moments, momentum products and step counts in place."""
    lr = _scalar(lr)
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        mu_product, step_t = mu_products[i], state_steps[i]
        param, grad, exp_avg, exp_avg_sq = real_views(param, grad, exp_avgs[i], exp_avg_sqs[i])
        step_t.add_(1)
        step = step_t.item()
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        # The momentum coefficient of this step and of the next one (Nesterov's look-ahead).
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
        mu_product.mul_(mu)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(1 - beta2**step).sqrt().add_(eps)
        product = mu_product.item()
        param.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - product))
        param.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - product * mu_next))

"""torch.optim.Adamax, with PyTorch's single-tensor update rule.

Relies on
  Tensor: grad, unary -, add(other, alpha=float), mul_(float), lerp_(end, float), abs(),
    add_(float), copy_(src), addcdiv_(t1, t2, value=float), item(), is_complex().
  top level: ferrograd.tensor(float), ferrograd.zeros_like(t), ferrograd.maximum(a, b).
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

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    """Adamax (Kingma & Ba): Adam with the second moment replaced by an exponentially
    weighted infinity norm of the gradients."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
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
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
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
            state["exp_avg"] = ferrograd.zeros_like(param)
            state["exp_inf"] = ferrograd.zeros_like(param)
        return state

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._state_of(p) for p in params]
        beta1, beta2 = group["betas"]
        adamax(
            params,
            [p.grad for p in params],
            [s["exp_avg"] for s in states],
            [s["exp_inf"] for s in states],
            [s["step"] for s in states],
            eps=group["eps"],
            beta1=beta1,
            beta2=beta2,
            lr=group["lr"],
            weight_decay=group["weight_decay"],
            maximize=group["maximize"],
        )


def adamax(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_infs: list[Tensor],
    state_steps: list[Tensor],
    *,
    eps: float,
    beta1: float,
    beta2: float,
    lr: float | Tensor,
    weight_decay: float,
    maximize: bool,
) -> None:
    """Functional Adamax: updates parameters, first moments, infinity norms and step counts in place."""
    lr = _scalar(lr)
    for param, grad, exp_avg, exp_inf, step_t in zip(params, grads, exp_avgs, exp_infs, state_steps):
        grad = -grad if maximize else grad
        step_t.add_(1)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        param, grad, exp_avg, exp_inf = real_views(param, grad, exp_avg, exp_inf)
        exp_avg.lerp_(grad, 1 - beta1)
        # Out of place, so a ``differentiable`` step records the maximum as well.
        exp_inf.copy_(ferrograd.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
        param.addcdiv_(exp_avg, exp_inf, value=-lr / (1 - beta1 ** step_t.item()))

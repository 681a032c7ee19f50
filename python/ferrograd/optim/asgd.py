"""torch.optim.ASGD, with PyTorch's single-tensor update rule.

Relies on
  Tensor: grad, unary -, add(other, alpha=float), add_(other, alpha=float), mul_(float),
    mul_(0-d tensor), sub(other), copy_(src), item(), is_complex().
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

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    """Averaged SGD (Polyak & Juditsky): SGD with a decaying rate ``eta`` that also keeps ``ax``,
    the running average of the iterates from step ``t0`` on."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_lr(lr)
        check_non_negative("weight_decay value", weight_decay)
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
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
        restore_state(self, added_later, ("step", "eta", "mu"))

    def _state_of(self, param: Tensor, lr: float | Tensor) -> dict[str, Any]:
        state = self.state[param]
        if not state:
            # ``eta`` and ``mu`` are 0-d tensors in the scalar dtype, as torch: their rounding
            # is part of the trajectory.
            state["step"] = ferrograd.tensor(0.0)
            state["eta"] = ferrograd.tensor(float(_scalar(lr)))
            state["mu"] = ferrograd.tensor(1.0)
            state["ax"] = ferrograd.zeros_like(param)
        return state

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._state_of(p, group["lr"]) for p in params]
        asgd(
            params,
            [p.grad for p in params],
            [s["ax"] for s in states],
            [s["mu"] for s in states],
            [s["eta"] for s in states],
            [s["step"] for s in states],
            lambd=group["lambd"],
            lr=group["lr"],
            t0=group["t0"],
            alpha=group["alpha"],
            weight_decay=group["weight_decay"],
            maximize=group["maximize"],
        )


def asgd(
    params: list[Tensor],
    grads: list[Tensor],
    axs: list[Tensor],
    mus: list[Tensor],
    etas: list[Tensor],
    state_steps: list[Tensor],
    *,
    lambd: float,
    lr: float | Tensor,
    t0: float,
    alpha: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    """Functional ASGD: updates parameters, averages, rates, averaging weights and step counts in place."""
    lr = _scalar(lr)
    for param, grad, ax, mu, eta, step_t in zip(params, grads, axs, mus, etas, state_steps):
        grad = -grad if maximize else grad
        param, grad, ax = real_views(param, grad, ax)
        step_t.add_(1)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        rate = eta.item()
        param.mul_(1 - lambd * rate)
        param.add_(grad, alpha=-rate)
        if mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        step = step_t.item()
        # Through a default-dtype tensor, as torch: after load_state_dict has cast ``eta`` and
        # ``mu`` to the parameter's dtype, the new values are still rounded to the scalar dtype.
        eta.copy_(ferrograd.tensor(lr / (1 + lambd * lr * step) ** alpha))
        mu.copy_(ferrograd.tensor(1 / max(1, step - t0)))

"""torch.optim.Rprop, with PyTorch's single-tensor update rule.

Relies on
  Tensor: grad, unary -, mul(other), mul_(other), sign(), gt(float), lt(float), eq(float),
    clamp_(min, max), masked_fill(mask, float), masked_fill_(mask, float), addcmul_(t1, t2, value=float), copy_(src),
    clone(), is_complex().
  top level: ferrograd.tensor(float), ferrograd.zeros_like(t), ferrograd.full_like(t, value).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import ferrograd

from ._common import check_lr, real_views, restore_state
from .optimizer import Optimizer
from .rmsprop import _scalar

if TYPE_CHECKING:
    from ferrograd import Tensor

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    """Resilient backpropagation (Riedmiller & Braun): each coordinate moves by its own step
    size, grown by ``etas[1]`` while its gradient keeps its sign and shrunk by ``etas[0]`` when
    the sign flips; only the gradient's sign is used."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
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

    def _state_of(self, param: Tensor, lr: float | Tensor) -> dict[str, Any]:
        state = self.state[param]
        if not state:
            state["step"] = ferrograd.tensor(0.0)
            state["prev"] = ferrograd.zeros_like(param)
            lr = _scalar(lr)
            # The imaginary part of a complex parameter is a coordinate of its own, with its own step size.
            state["step_size"] = ferrograd.full_like(param, complex(lr, lr) if param.is_complex() else lr)
        return state

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._state_of(p, group["lr"]) for p in params]
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        rprop(
            params,
            [p.grad for p in params],
            [s["prev"] for s in states],
            [s["step_size"] for s in states],
            [s["step"] for s in states],
            step_size_min=step_size_min,
            step_size_max=step_size_max,
            etaminus=etaminus,
            etaplus=etaplus,
            maximize=group["maximize"],
            differentiable=group["differentiable"],
        )


def rprop(
    params: list[Tensor],
    grads: list[Tensor],
    prevs: list[Tensor],
    step_sizes: list[Tensor],
    state_steps: list[Tensor],
    *,
    step_size_min: float,
    step_size_max: float,
    etaminus: float,
    etaplus: float,
    maximize: bool,
    differentiable: bool = False,
) -> None:
    """Functional Rprop: updates parameters, previous gradients, step sizes and step counts in place."""
    for param, grad, prev, step_size, step_t in zip(params, grads, prevs, step_sizes, state_steps):
        grad = -grad if maximize else grad
        step_t.add_(1)
        param, grad, prev, step_size = real_views(param, grad, prev, step_size)
        agreement = grad.mul(prev.clone() if differentiable else prev)
        flipped = agreement.lt(0)
        # Built from the sign so that it has the parameter's dtype (and a NaN stays NaN).
        factor = agreement.sign().masked_fill_(agreement.gt(0), etaplus)
        factor.masked_fill_(flipped, etaminus).masked_fill_(agreement.eq(0), 1)
        step_size.mul_(factor).clamp_(step_size_min, step_size_max)
        # After a sign flip the coordinate rests for one step, and the next step does not
        # count as a flip again.
        grad = grad.masked_fill(flipped, 0)
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)

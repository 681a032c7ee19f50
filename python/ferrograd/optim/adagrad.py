"""torch.optim.Adagrad, with torch's single-tensor update rule.

Relies on
  Tensor: grad, unary -, add(other, alpha=float), add_(float), addcmul_(t1, t2, value=float),
    addcdiv_(t1, t2, value=float), sqrt(), item(), numel(), is_complex().
  top level: ferrograd.tensor(float), ferrograd.full_like(t, value), ferrograd.view_as_real(t),
    ferrograd.is_tensor(obj).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import ferrograd

from .optimizer import Optimizer, _check_implementation_flags
from .rmsprop import _scalar

if TYPE_CHECKING:
    from ferrograd import Tensor

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.): each coordinate's step divided by the root of the sum of its
    squared gradients, with an optional learning-rate decay per step and L2 weight decay."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if isinstance(lr, ferrograd.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        _check_implementation_flags(fused, foreach, differentiable)
        # As torch, every parameter's state exists from construction on (``share_memory`` needs it).
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, initial_accumulator_value)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
        for p_state in self.state.values():
            if p_state and "step" in p_state and not ferrograd.is_tensor(p_state["step"]):
                p_state["step"] = ferrograd.tensor(float(p_state["step"]))

    def _init_state(self, param: Tensor, initial_accumulator_value: float) -> dict[str, Any]:
        state = self.state[param]
        state["step"] = ferrograd.tensor(0.0)
        value: complex = initial_accumulator_value
        if param.is_complex():
            value = complex(initial_accumulator_value, initial_accumulator_value)
        state["sum"] = ferrograd.full_like(param, value)
        return state

    def share_memory(self) -> None:
        """Kept for torch's API: ferrograd's tensors live in one process, so this does nothing."""

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        # A parameter added after construction gets its state on its first step.
        states = [
            self.state[p] or self._init_state(p, self.defaults["initial_accumulator_value"]) for p in params
        ]
        adagrad(
            params,
            [p.grad for p in params],
            [s["sum"] for s in states],
            [s["step"] for s in states],
            lr=group["lr"],
            weight_decay=group["weight_decay"],
            lr_decay=group["lr_decay"],
            eps=group["eps"],
            maximize=group["maximize"],
            differentiable=group["differentiable"],
        )


def adagrad(
    params: list[Tensor],
    grads: list[Tensor],
    state_sums: list[Tensor],
    state_steps: list[Tensor],
    *,
    lr: float | Tensor,
    weight_decay: float,
    lr_decay: float,
    eps: float,
    maximize: bool,
    differentiable: bool = False,
) -> None:
    """Functional Adagrad: updates parameters, sums of squared gradients and step counts in place."""
    if not all(isinstance(t, ferrograd.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    lr = _scalar(lr)
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t.add_(1)
        step = step_t.item()
        grad = -grad if maximize else grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        if param.is_complex():
            # A complex parameter is updated as its real and imaginary parts.
            param, grad, state_sum = (ferrograd.view_as_real(t) for t in (param, grad, state_sum))
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt() + eps if differentiable else state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)

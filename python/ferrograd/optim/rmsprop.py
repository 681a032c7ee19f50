"""torch.optim.RMSprop, with torch's single-tensor update rule.

Relies on
  Tensor: grad, unary -, add(other, alpha=float), add(float), add_(float),
    add_(other, alpha=float), mul_(float), lerp_(end, float),
    addcmul(t1, t2, value=float), addcmul_(t1, t2, value=float),
    addcdiv_(t1, t2, value=float), sqrt(), sqrt_(), item(), numel(), is_complex().
  top level: ferrograd.tensor(float), ferrograd.zeros_like(t), ferrograd.view_as_real(t),
    ferrograd.is_tensor(obj).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import ferrograd

from .optimizer import Optimizer

if TYPE_CHECKING:
    from ferrograd import Tensor

__all__ = ["RMSprop", "rmsprop"]


def _scalar(value: Any) -> Any:
    """A one-element tensor hyper-parameter (a scheduled ``lr``) as a Python number."""
    return value.item() if isinstance(value, ferrograd.Tensor) else value


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture notes; centered as in Graves 2013): the gradient divided by the
    root of a running average of its square, optionally with momentum and weight decay."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        if isinstance(lr, ferrograd.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        added_later = {
            "momentum": 0,
            "centered": False,
            "foreach": None,
            "maximize": False,
            "differentiable": False,
            "capturable": False,
        }
        for group in self.param_groups:
            for key, value in added_later.items():
                group.setdefault(key, value)
            for p in group["params"]:
                p_state = self.state.get(p)
                if p_state and not ferrograd.is_tensor(p_state["step"]):
                    p_state["step"] = ferrograd.tensor(float(p_state["step"]))

    def _state_of(self, param: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        state = self.state[param]
        if not state:
            state["step"] = ferrograd.tensor(0.0)
            state["square_avg"] = ferrograd.zeros_like(param)
            if group["momentum"] > 0:
                state["momentum_buffer"] = ferrograd.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = ferrograd.zeros_like(param)
        return state

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._state_of(p, group) for p in params]
        rmsprop(
            params,
            [p.grad for p in params],
            [s["square_avg"] for s in states],
            [s["grad_avg"] for s in states] if group["centered"] else [],
            [s["momentum_buffer"] for s in states] if group["momentum"] > 0 else [],
            [s["step"] for s in states],
            lr=group["lr"],
            alpha=group["alpha"],
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            momentum=group["momentum"],
            centered=group["centered"],
            maximize=group["maximize"],
            differentiable=group["differentiable"],
        )


def rmsprop(
    params: list[Tensor],
    grads: list[Tensor],
    square_avgs: list[Tensor],
    grad_avgs: list[Tensor],
    momentum_buffer_list: list[Tensor],
    state_steps: list[Tensor],
    *,
    lr: float | Tensor,
    alpha: float,
    eps: float,
    weight_decay: float,
    momentum: float,
    centered: bool,
    maximize: bool,
    differentiable: bool = False,
) -> None:
    """Functional RMSprop: updates parameters, running averages, momentum buffers and step
    counts in place. ``grad_avgs`` is only read when ``centered``, ``momentum_buffer_list``
    only when ``momentum > 0``."""
    if not all(isinstance(t, ferrograd.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    lr = _scalar(lr)
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        square_avg = square_avgs[i]
        state_steps[i].add_(1)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        is_complex = param.is_complex()
        if is_complex:
            # A complex parameter is updated as its real and imaginary parts.
            param, grad, square_avg = (ferrograd.view_as_real(t) for t in (param, grad, square_avg))
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            if is_complex:
                grad_avg = ferrograd.view_as_real(grad_avg)
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add(eps) if differentiable else avg.add_(eps)
        if momentum > 0:
            buf = momentum_buffer_list[i]
            if is_complex:
                buf = ferrograd.view_as_real(buf)
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)

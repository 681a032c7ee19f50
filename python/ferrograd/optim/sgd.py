"""torch.optim.SGD, with torch's exact update rule.

Relies on
  Tensor: grad, unary -, add(other, alpha=float), add_(other, alpha=float),
    mul_(float), clone(), detach().
  top level: none (grad modes come from Optimizer._step_groups).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ferrograd._C import _sgd_momentum_

from .optimizer import Optimizer, _check_implementation_flags

if TYPE_CHECKING:
    from ferrograd import Tensor

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum, dampening, weight decay and Nesterov momentum."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_implementation_flags(fused, foreach, differentiable)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        momentum = group["momentum"]
        buffers = [self.state[p].get("momentum_buffer") for p in params] if momentum != 0 else []
        sgd(
            params,
            [p.grad for p in params],
            buffers,
            weight_decay=group["weight_decay"],
            momentum=momentum,
            lr=group["lr"],
            dampening=group["dampening"],
            nesterov=group["nesterov"],
            maximize=group["maximize"],
        )
        for p, buf in zip(params, buffers):
            self.state[p]["momentum_buffer"] = buf


def sgd(
    params: list[Tensor],
    grads: list[Tensor],
    momentum_buffer_list: list[Tensor | None],
    *,
    weight_decay: float,
    momentum: float,
    lr: float,
    dampening: float,
    nesterov: bool,
    maximize: bool,
) -> None:
    """Functional SGD; fills ``momentum_buffer_list`` in place (torch's single-tensor algorithm).

    Once a parameter has a momentum buffer its step runs as one fused pass
    when the tensors allow (see ``_sgd_momentum_``), with the same rounding.
    """
    for i, param in enumerate(params):
        buf = momentum_buffer_list[i] if momentum != 0 else None
        if buf is not None and _sgd_momentum_(
            param, grads[i], buf, lr, momentum, dampening, weight_decay, nesterov, maximize
        ):
            continue
        grad = -grads[i] if maximize else grads[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = momentum_buffer_list[i] = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        param.add_(grad, alpha=-lr)

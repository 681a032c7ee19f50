"""torch.optim.Adafactor (Shazeer & Stern, 2018, as PyTorch 2.5+ implements it): second moments
kept as row and column averages for parameters of two or more dimensions, a relative step size
and update clipping; no first moment.

Relies on
  Tensor: grad, unary -, dim(), shape, numel(), norm(p=2) and norm(dim=int, keepdim=True),
    square_(), div_(float), lerp_(end, float), mean(dim=int, keepdim=True), clamp_(min=float),
    rsqrt_(), mul_(t), mul_(float), add_(t, alpha=float), clone(), @, item(), is_complex(),
    is_sparse (optional).
  top level: ferrograd.tensor(float), ferrograd.zeros(shape, dtype=), ferrograd.zeros_like(t),
    ferrograd.finfo(dtype).eps.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import ferrograd

from ._common import restore_state
from .optimizer import Optimizer
from .rmsprop import _scalar

if TYPE_CHECKING:
    from ferrograd import Tensor

__all__ = ["Adafactor", "adafactor"]


def _check_at_least(what: str, bound: int, value: Any) -> None:
    """PyTorch's "<what> should be >= <bound> but is: <value>"."""
    if not bound <= value:
        raise ValueError(f"{what} should be >= {bound} but is: {value}")


class Adafactor(Optimizer):
    """Adafactor: a memory-light Adam without momentum, whose second moment of an
    (..., R, C) gradient is stored as an (..., R, 1) row and an (..., 1, C) column average."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, ferrograd.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check_at_least("Learning rate", 0, lr)
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None:
            _check_at_least("epsilon1", 0, eps[0])
        _check_at_least("epsilon2", 0, eps[1])
        _check_at_least("Clipping threshold d", 1, d)
        _check_at_least("weight_decay", 0, weight_decay)
        defaults = {
            "lr": lr,
            "beta2_decay": beta2_decay,
            "eps": eps,
            "d": d,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self.defaults.pop("differentiable", None)  # the base class adds it; Adafactor has none
        restore_state(self, {"foreach": None}, ("step",))

    def _state_of(self, param: Tensor) -> dict[str, Any]:
        if param.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        if getattr(param.grad, "is_sparse", False):
            raise RuntimeError("Adafactor does not support sparse gradients")
        state = self.state[param]
        if not state:
            state["step"] = ferrograd.tensor(0.0)
            grad = param.grad
            if grad.dim() > 1:
                shape = list(grad.shape)
                state["row_var"] = ferrograd.zeros(shape[:-1] + [1], dtype=grad.dtype)
                state["col_var"] = ferrograd.zeros(shape[:-2] + [1, shape[-1]], dtype=grad.dtype)
            else:
                state["variance"] = ferrograd.zeros_like(grad)
        return state

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        states = [self._state_of(p) for p in params]
        eps1, eps2 = group["eps"]
        adafactor(
            params,
            [p.grad for p in params],
            [s.get("row_var") for s in states],
            [s.get("col_var") for s in states],
            [s.get("variance") for s in states],
            [s["step"] for s in states],
            d=group["d"],
            lr=group["lr"],
            beta2_decay=group["beta2_decay"],
            weight_decay=group["weight_decay"],
            eps1=eps1,
            eps2=eps2,
            maximize=group["maximize"],
        )


def _mean_square(grad: Tensor, dim: int) -> Tensor:
    """The mean of ``grad``'s squares along ``dim``, kept as a dimension of size one."""
    return grad.norm(dim=dim, keepdim=True).square_().div_(grad.shape[dim])


def _rms(t: Tensor) -> float:
    return t.norm(2).item() / (t.numel() ** 0.5)


def adafactor(
    params: list[Tensor],
    grads: list[Tensor],
    row_vars: list[Tensor | None],
    col_vars: list[Tensor | None],
    variances: list[Tensor | None],
    state_steps: list[Tensor],
    foreach: bool | None = None,
    *,
    d: float,
    lr: float | Tensor,
    beta2_decay: float,
    weight_decay: float,
    eps1: float | None,
    eps2: float,
    maximize: bool,
) -> None:
    """Functional Adafactor: updates parameters, second-moment factors and step counts in place
    (``foreach`` is accepted for PyTorch's signature; there is one implementation)."""
    if not all(isinstance(t, ferrograd.Tensor) for t in state_steps):
        raise RuntimeError("`state_steps` argument must contain a list of singleton tensors")
    lr = _scalar(lr)
    for param, grad, row_var, col_var, variance, step_t in zip(
        params, grads, row_vars, col_vars, variances, state_steps
    ):
        grad = -grad if maximize else grad
        if eps1 is None:  # as PyTorch, the first parameter's dtype decides for the whole group
            eps1 = ferrograd.finfo(param.dtype).eps
        step_t.add_(1)
        step = step_t.item()
        one_minus_beta2 = step**beta2_decay
        alpha = max(eps2, _rms(param)) * min(lr, 1 / step**0.5)
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        if grad.dim() > 1:
            if row_var is None or col_var is None:
                raise AssertionError("row_var and col_var should be defined when grad is multidimensional")
            row_var.lerp_(_mean_square(grad, -1), one_minus_beta2)
            col_var.lerp_(_mean_square(grad, -2), one_minus_beta2)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            if variance is None:
                raise AssertionError("variance should be defined when grad is a vector")
            variance.lerp_(grad * grad, one_minus_beta2)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        param.add_(update, alpha=-alpha / max(1.0, _rms(update) / d))

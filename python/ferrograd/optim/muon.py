"""torch.optim.Muon (Jordan et al., 2024, as PyTorch 2.9+ implements it) for 2-D parameters: a
momentum update orthogonalised by a quintic Newton-Schulz iteration, with decoupled weight decay
and a learning rate scaled to the matrix's shape.

PyTorch runs the Newton-Schulz iteration in bfloat16. ferrograd has no bfloat16 and runs it in the
parameter's own dtype, so updates agree with PyTorch's to bfloat16's precision (about 1%), not
bit for bit.

Relies on
  Tensor: grad, ndim, shape, size(), is_complex(), lerp_(end, float), lerp(end, float), mT, @,
    norm(), clamp(min=float), div(t), mul_(float), add_(t, alpha=float).
  top level: ferrograd.Tensor, ferrograd.zeros_like(t), ferrograd.addmm(input, m1, m2, beta=, alpha=).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import ferrograd

from .optimizer import Optimizer
from .rmsprop import _scalar

if TYPE_CHECKING:
    from ferrograd import Tensor

__all__ = ["Muon", "muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5
_ADJUSTMENTS = ("original", "match_rms_adamw")


class Muon(Optimizer):
    """Muon: each 2-D parameter moves along its momentum's nearest semi-orthogonal matrix.
    Biases, embeddings and other parameters belong with a standard optimizer such as AdamW."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
        eps: float = EPS,
        ns_steps: int = DEFAULT_NS_STEPS,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, ferrograd.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in _ADJUSTMENTS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        f"Muon only supports 2D parameters whereas we found a parameter with size: {p.size()}"
                    )

    def _update_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        buffers = []
        for p in params:
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            if getattr(p.grad, "is_sparse", False):
                raise RuntimeError("Muon does not support sparse gradients")
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = ferrograd.zeros_like(p.grad)
            buffers.append(state["momentum_buffer"])
        muon(
            params,
            [p.grad for p in params],
            buffers,
            lr=group["lr"],
            weight_decay=group["weight_decay"],
            momentum=group["momentum"],
            nesterov=group["nesterov"],
            ns_coefficients=group["ns_coefficients"],
            eps=group["eps"],
            ns_steps=group["ns_steps"],
            adjust_lr_fn=group["adjust_lr_fn"],
        )


def _orthogonalized(update: Tensor, ns_coefficients: tuple[float, float, float], ns_steps: int, eps: float):
    """About ``U V^T`` of ``update = U S V^T``: the quintic ``X <- aX + (bG + cG^2) X`` with
    ``G = X X^T``, from ``X`` scaled to norm one, run on the wide orientation so that ``G`` is
    the smaller Gram matrix. Its coefficients trade exact convergence for speed: singular values
    end near, not at, one."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if update.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = update.shape[0] > update.shape[1]
    x = update.mT if tall else update
    x = x / x.norm().clamp(min=eps)
    for _ in range(ns_steps):
        gram = x @ x.mT
        polynomial = ferrograd.addmm(gram, gram, gram, beta=b, alpha=c)
        x = ferrograd.addmm(x, polynomial, x, beta=a)
    return x.mT if tall else x


def _adjusted_lr(lr: float, adjust_lr_fn: str | None, shape) -> float:
    """``lr`` scaled so that updates of every shape have a like RMS: by ``sqrt(max(1, A/B))``
    (``'original'``, the default) or ``0.2 sqrt(max(A, B))`` (``'match_rms_adamw'``)."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


def muon(
    params: list[Tensor],
    grads: list[Tensor],
    muon_momentum_bufs: list[Tensor],
    *,
    foreach: bool | None = None,
    lr: float | Tensor,
    weight_decay: float,
    momentum: float,
    nesterov: bool,
    ns_coefficients: tuple[float, float, float],
    ns_steps: int,
    eps: float,
    adjust_lr_fn: str | None,
) -> None:
    """Functional Muon: updates parameters and momentum buffers in place."""
    if foreach:
        raise RuntimeError("Foreach is not supported for Muon yet")
    lr = _scalar(lr)
    for param, grad, buf in zip(params, grads, muon_momentum_bufs):
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if nesterov else buf
        update = _orthogonalized(update, ns_coefficients, ns_steps, eps)
        param.mul_(1 - lr * weight_decay)
        param.add_(update, alpha=-_adjusted_lr(lr, adjust_lr_fn, param.shape))

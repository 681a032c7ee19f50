"""torch.optim.LBFGS: limited-memory BFGS over all parameters as one flat vector, with a fixed
step or a strong-Wolfe line search, taking PyTorch's steps and keeping PyTorch's state.

Relies on
  Tensor: grad, numel(), reshape(-1), view_as(t), slicing, clone(), copy_(src), neg(), sub(t),
    mul(t or float), dot(t), abs(), max(), sum(), sqrt(), add_(t, alpha=float or 0-d tensor),
    comparisons and arithmetic of 0-d tensors with numbers, float(t), is_complex(), dtype.
  top level: ferrograd.cat(tensors, dim), ferrograd.zeros(n, dtype=), ferrograd.mul(t, s),
    ferrograd.view_as_real(t), ferrograd.no_grad(), ferrograd.enable_grad().
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

import ferrograd

from ._common import check_lr, real_views
from .optimizer import Optimizer
from .rmsprop import _scalar

if TYPE_CHECKING:
    from ferrograd import Tensor

__all__ = ["LBFGS"]


def _call(closure: Callable[[], Any]) -> Any:
    """The closure's loss, with its graph recorded (``step`` itself runs without recording)."""
    with ferrograd.enable_grad():
        return closure()


class LBFGS(Optimizer):
    """L-BFGS (Nocedal & Wright, after minFunc): a quasi-Newton direction from the last
    ``history_size`` steps and gradient changes; ``step(closure)`` runs up to ``max_iter``
    iterations and ``max_eval`` closure evaluations. One parameter group only."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr,
            "max_iter": max_iter,
            "max_eval": max_eval,
            "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change,
            "history_size": history_size,
            "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    @property
    def _params(self) -> list[Tensor]:
        return self.param_groups[0]["params"]

    def _flat_grad(self) -> Tensor:
        """Every parameter's gradient as one real vector, zeros for a parameter without one."""
        pieces = []
        for p in self._params:
            grad = ferrograd.zeros(p.numel(), dtype=p.dtype) if p.grad is None else p.grad.reshape(-1)
            pieces.append(ferrograd.view_as_real(grad).reshape(-1) if grad.is_complex() else grad)
        return ferrograd.cat(pieces, 0)

    def _move(self, step: float | Tensor, direction: Tensor) -> None:
        """Parameters += ``step`` * ``direction``, a flat vector laid out as ``_flat_grad``."""
        offset = 0
        for p in self._params:
            (p,) = real_views(p)
            size = p.numel()
            p.add_(direction[offset : offset + size].view_as(p), alpha=step)
            offset += size

    def _evaluate_along(
        self, closure: Callable[[], Any], start: list[Tensor], step: float | Tensor, direction: Tensor
    ) -> tuple[float, Tensor]:
        """Loss and flat gradient at ``start + step * direction``; the parameters go back to ``start``."""
        self._move(step, direction)
        loss = float(_call(closure))
        flat_grad = self._flat_grad()
        for p, saved in zip(self._params, start):
            p.copy_(saved)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run one L-BFGS minimisation; ``closure`` recomputes the loss and its gradients."""
        with ferrograd.no_grad():
            return self._minimize(closure)

    def _minimize(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr = _scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        # The whole optimizer's state lives with the first parameter, as in torch.
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = _call(closure)
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        for n_iter in range(1, max_iter + 1):
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                # Only pairs with positive curvature keep the inverse Hessian estimate positive definite.
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        del old_dirs[0], old_stps[0], ro[0]
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                alphas = state.setdefault("al", [None] * history_size)
                d = _two_loop_direction(flat_grad, old_dirs, old_stps, ro, h_diag, alphas)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss
            # The very first step is scaled so that it moves no parameter by more than ``lr``.
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break

            if group["line_search_fn"] is not None:
                if group["line_search_fn"] != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                start = [p.clone() for p in self._params]
                loss, flat_grad, t, search_evals = _strong_wolfe(
                    partial(self._evaluate_along, closure),
                    start,
                    t,
                    d,
                    loss,
                    flat_grad,
                    gtd,
                    max_ls=max_eval - evals,
                )
                self._move(t, d)
            else:
                self._move(t, d)
                if n_iter == max_iter:  # the loss at the last point is not needed
                    break
                loss = float(_call(closure))
                flat_grad = self._flat_grad()
                search_evals = 1
            evals += search_evals
            state["func_evals"] += search_evals
            if evals >= max_eval or flat_grad.abs().max() <= tolerance_grad:
                break
            if d.mul(t).abs().max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break

        state.update(
            d=d,
            t=t,
            old_dirs=old_dirs,
            old_stps=old_stps,
            ro=ro,
            H_diag=h_diag,
            prev_flat_grad=prev_flat_grad,
            prev_loss=prev_loss,
        )
        return orig_loss


def _two_loop_direction(
    flat_grad: Tensor,
    old_dirs: list[Tensor],
    old_stps: list[Tensor],
    ro: list[Tensor],
    h_diag: float | Tensor,
    alphas: list[Any],
) -> Tensor:
    """The quasi-Newton direction -H @ flat_grad by the two-loop recursion over the stored
    pairs (gradient changes ``old_dirs``, steps ``old_stps``), starting from ``h_diag`` * I;
    ``alphas`` is scratch space kept in the state, as PyTorch's "al"."""
    q = flat_grad.neg()
    for i in reversed(range(len(old_dirs))):
        alphas[i] = old_stps[i].dot(q) * ro[i]
        q.add_(old_dirs[i], alpha=-alphas[i])
    r = ferrograd.mul(q, h_diag)
    for i in range(len(old_dirs)):
        beta = old_dirs[i].dot(r) * ro[i]
        r.add_(old_stps[i], alpha=alphas[i] - beta)
    return r


def _cubic_minimum(
    x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any, bounds: tuple[Any, Any] | None = None
) -> Any:
    """Minimiser of the cubic through values ``f1``, ``f2`` with slopes ``g1``, ``g2`` at ``x1``, ``x2``,
    clamped to ``bounds`` (default: between the two points); their midpoint when the cubic has no minimum."""
    low, high = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if not d2_square >= 0:
        return (low + high) / 2.0
    d2 = d2_square.sqrt()
    if x1 <= x2:
        minimum = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        minimum = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(minimum, low), high)


def _strong_wolfe(
    evaluate: Callable[[list[Tensor], Any, Tensor], tuple[float, Tensor]],
    start: list[Tensor],
    t: Any,
    d: Tensor,
    f: float,
    g: Tensor,
    gtd: Tensor,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, Tensor, Any, int]:
    """A step ``t`` along ``d`` from ``start`` (loss ``f``, gradient ``g``, slope ``gtd``) meeting the
    strong Wolfe conditions (sufficient decrease ``c1``, curvature ``c2``), within ``max_ls``
    evaluations: first an interval holding such a step is bracketed, then narrowed by cubic
    interpolation. Returns the loss, flat gradient and step chosen and the evaluations made.
    A bracket end is ``(t, loss, gradient, slope)``."""
    d_norm = d.abs().max()
    start_point = (0, f, g.clone(), gtd)
    f_new, g_new = evaluate(start, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    previous = start_point
    done = False
    ls_iter = 0
    bracket = None
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= previous[1]):
            bracket = [previous, (t, f_new, g_new.clone(), gtd_new)]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = [(t, f_new, g_new, gtd_new)]
            done = True
            break
        if gtd_new >= 0:  # the slope turned: a minimum lies between the last two steps
            bracket = [previous, (t, f_new, g_new.clone(), gtd_new)]
            break
        # Still going down: extrapolate, at least 1% beyond t and at most 10 times t.
        t_prev, f_prev, _, gtd_prev = previous
        previous = (t, f_new, g_new.clone(), gtd_new)
        bounds = (t + 0.01 * (t - t_prev), t * 10)
        t = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds)
        f_new, g_new = evaluate(start, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if bracket is None:  # out of evaluations while still extrapolating
        bracket = [start_point, (t, f_new, g_new, gtd_new)]

    # Zoom: shrink the bracket, keeping at ``low`` the end with the lower loss.
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    insufficient_progress = False
    while not done and ls_iter < max_ls:
        (t_a, f_a, _, gtd_a), (t_b, f_b, _, gtd_b) = bracket
        if abs(t_b - t_a) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(t_a, f_a, gtd_a, t_b, f_b, gtd_b)
        top, bottom = max(t_a, t_b), min(t_a, t_b)
        margin = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < margin:
            # Too close to an end: accept once, then (or if outside) move a margin inside.
            if insufficient_progress or t >= top or t <= bottom:
                t = top - margin if abs(t - top) < abs(t - bottom) else bottom + margin
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(start, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:
            bracket[high] = (t, f_new, g_new.clone(), gtd_new)
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = (t, f_new, g_new.clone(), gtd_new)
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals

"""torch.optim.swa_utils: Stochastic Weight Averaging and exponential moving averages of a
model's weights (``AveragedModel``), the SWA learning-rate schedule (``SWALR``) and the
recomputation of batch-norm statistics for averaged weights (``update_bn``).

Relies on
  Tensor: detach(), copy_(src), lerp_(end, float), is_floating_point(), is_complex(), dtype,
    arithmetic with tensors and numbers, ``+=``, ``==``, to(device) (``device`` arguments only).
  top level: ferrograd.tensor(int, dtype=), ferrograd.long, ferrograd.no_grad();
    nn.Module, nn.modules._BatchNorm and _InstanceNorm; LRScheduler from .lr_scheduler.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from copy import deepcopy
from typing import Any

import ferrograd
from ferrograd.nn import Module
from ferrograd.nn.modules import _BatchNorm, _InstanceNorm

from .lr_scheduler import LRScheduler, _per_group
from .optimizer import Optimizer

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]

Tensor = ferrograd.Tensor


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _interpolates(t: Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[Sequence[Tensor], Sequence[Tensor], Any], None]:
    """An in-place EMA of lists of parameters: ``ema = decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    @ferrograd.no_grad()
    def ema_update(ema_params: Sequence[Tensor], current_params: Sequence[Tensor], _: Any) -> None:
        floating = _interpolates(ema_params[0])
        for ema, current in zip(ema_params, current_params):
            if floating:
                ema.lerp_(current, 1 - decay)
            else:
                ema.copy_(ema * decay + current * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[Sequence[Tensor], Sequence[Tensor], Any], None]:
    """An in-place running mean of lists of parameters, ``num_averaged`` models seen so far."""

    @ferrograd.no_grad()
    def swa_update(averaged: Sequence[Tensor], current: Sequence[Tensor], num_averaged: Any) -> None:
        floating = _interpolates(averaged[0])
        weight = 1 / (float(num_averaged) + 1)
        for avg, cur in zip(averaged, current):
            if floating:
                avg.lerp_(cur, weight)
            else:
                avg.copy_(avg + (cur - avg) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The EMA of one parameter, returned: ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    @ferrograd.no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The running mean of one parameter after ``num_averaged`` models, returned."""

    @ferrograd.no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` (in ``self.module``) whose parameters (and buffers if ``use_buffers``)
    are averaged over the models passed to ``update_parameters``; the first call copies them."""

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: Callable[[Tensor, Tensor, Any], Tensor] | None = None,
        multi_avg_fn: Callable[[Sequence[Tensor], Sequence[Tensor], Any], None] | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", ferrograd.tensor(0, dtype=ferrograd.long))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _averaged_tensors(self, model: Module) -> tuple[Iterable[Tensor], Iterable[Tensor]]:
        if self.use_buffers:
            return (
                itertools.chain(self.module.parameters(), self.module.buffers()),
                itertools.chain(model.parameters(), model.buffers()),
            )
        return self.parameters(), model.parameters()

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current weights into the average (copy them the first time)."""
        mine, theirs = self._averaged_tensors(model)
        pairs = [(p.detach(), q.detach()) for p, q in zip(mine, theirs)]
        first = bool(self.n_averaged == 0)
        with ferrograd.no_grad():
            if first:
                for averaged, current in pairs:
                    averaged.copy_(current)
            elif self.avg_fn is not None:
                for averaged, current in pairs:
                    averaged.copy_(self.avg_fn(averaged, current, self.n_averaged))
            elif self.multi_avg_fn is not None:
                by_dtype: dict[Any, tuple[list[Tensor], list[Tensor]]] = {}
                for averaged, current in pairs:
                    lists = by_dtype.setdefault(averaged.dtype, ([], []))
                    lists[0].append(averaged)
                    lists[1].append(current)
                for averaged_list, current_list in by_dtype.values():
                    self.multi_avg_fn(averaged_list, current_list, self.n_averaged)
            else:  # PyTorch's default on the CPU: the single-tensor running mean
                swa = get_swa_avg_fn()
                for averaged, current in pairs:
                    averaged.copy_(swa(averaged, current, self.n_averaged))
            if not self.use_buffers:
                for b_mine, b_model in zip(self.module.buffers(), model.buffers()):
                    b_mine.detach().copy_(b_model.detach())
            self.n_averaged += 1


def _batch_norms(model: Module) -> list[Any]:
    return [m for m in model.modules() if isinstance(m, _BatchNorm) and not isinstance(m, _InstanceNorm)]


@ferrograd.no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of ``model``'s batch-norm layers as plain averages over
    one pass of ``loader`` (batches are tensors, or lists/tuples whose first item is the input)."""
    momenta = {}
    for module in _batch_norms(model):
        module.reset_running_stats()
        momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


def _linear_anneal(t: float) -> float:
    return t


def _cosine_anneal(t: float) -> float:
    return (1 - math.cos(math.pi * t)) / 2


class SWALR(LRScheduler):
    """Anneals each group's learning rate to its ``swa_lr`` over ``anneal_epochs`` steps
    ("cos" or "linear"), then keeps it there."""

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | Sequence[float],
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        for value, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_strategy = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @property
    def anneal_func(self) -> Callable[[float], float]:
        """The annealing curve from 0 to 1 (a property, so ``state_dict`` leaves it out, as torch)."""
        return _cosine_anneal if self._anneal_strategy == "cos" else _linear_anneal

    @staticmethod
    def _get_initial_lr(lr: Any, swa_lr: Any, alpha: float) -> Any:
        """The learning rate the annealing started from, given the current one at ``alpha``."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _alpha(self, step: int) -> float:
        return self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha, alpha = self._alpha(step - 1), self._alpha(step)
        groups = self.optimizer.param_groups
        starts = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, starts)]

"""torch.optim.lr_scheduler: learning-rate schedules that rewrite ``group["lr"]`` of an optimizer.

Every scheduler computes the same learning rates as torch's for the same sequence of ``step()``
calls: the chainable (recursive) rule on plain ``step()``, the closed form when an epoch is
passed to ``step(epoch)`` (deprecated, as in torch), and torch's argument errors and warnings.

Relies on
  Tensor: clone(), fill_(float), item() (only for learning rates given as one-element tensors).
  top level: ferrograd.Tensor; Optimizer from .optimizer.
"""

from __future__ import annotations

import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from functools import partial, wraps
from typing import Any, SupportsFloat

import ferrograd

from .optimizer import Optimizer

__all__ = [
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "CosineAnnealingLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "PolynomialLR",
    "LRScheduler",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


# --------------------------------------------------------------------------- helpers


def _copy(value: Any) -> Any:
    """A learning rate as stored: tensors are cloned so that no two places alias one."""
    return value.clone() if isinstance(value, ferrograd.Tensor) else value


def _current(optimizer: Optimizer, key: str = "lr") -> list[Any]:
    """``group[key]`` of every parameter group (copies of tensors)."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def _assign(group: dict[str, Any], key: str, value: Any) -> None:
    """Write a value into a group; a tensor already there is filled in place, not replaced."""
    if isinstance(group[key], ferrograd.Tensor):
        if isinstance(value, ferrograd.Tensor):
            value = value.item()
        group[key].fill_(value)
    else:
        group[key] = value


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """One value per parameter group: a list or tuple of the right length, or one value repeated."""
    count = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != count:
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(value)} values, param_groups has {count}."
            )
        return [_copy(v) for v in value]
    return [_copy(value) for _ in range(count)]


def _require_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _lambdas_per_group(optimizer: Optimizer, lr_lambda: Any) -> list[Callable[[int], float]]:
    _require_optimizer(optimizer)
    count = len(optimizer.param_groups)
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * count
    if len(lr_lambda) != count:
        raise ValueError(f"Expected {count} lr_lambdas, but got {len(lr_lambda)}")
    return list(lr_lambda)


def _track_optimizer_steps(optimizer: Optimizer) -> None:
    """Wrap ``optimizer.step`` once so that the scheduler can tell whether it ran before the first
    ``scheduler.step()`` (a wrong order skips the schedule's first value, so it is warned about)."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    owner = weakref.ref(optimizer)
    current = optimizer.step
    func = getattr(current, "__func__", None)
    if func is None:  # a plain callable set on the instance is called as it is
        func, bound = current, False
    else:  # a method is re-bound on each call, so the wrapper holds no reference to the optimizer
        bound = True
    del current

    @wraps(func)
    def step(*args: Any, **kwargs: Any) -> Any:
        opt = owner()
        opt._opt_called = True  # type: ignore[union-attr]
        return func(opt, *args, **kwargs) if bound else func(*args, **kwargs)

    step._wrapped_by_lr_sched = True  # type: ignore[attr-defined]
    optimizer.step = step  # type: ignore[method-assign]


def _lambda_state(lambdas: list[Any]) -> list[Any]:
    """Plain functions and lambdas are not saved; callable objects are saved as their ``__dict__``."""
    return [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy() for fn in lambdas]


def _check_children(owner: str, optimizer: Any, schedulers: Sequence[Any]) -> None:
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs "
                f"to be specified when calling `step`, but got one at index {i} in the given schedulers "
                "sequence."
            )
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got scheduler "
                f"{type(scheduler).__name__} at index {i} has {scheduler.optimizer}, which is different "
                f"from {type(optimizer).__name__}."
            )


# --------------------------------------------------------------------------- base class


class LRScheduler:
    """Base class: ``step()`` advances ``last_epoch`` and writes ``get_lr()`` into the optimizer's
    parameter groups. Creating a scheduler sets each group's ``initial_lr`` (when ``last_epoch`` is
    -1) and takes the first step, so ``group["lr"]`` holds the schedule's value for epoch 0."""

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False
    # An attribute that state_dict holds in a form of its own (``_saved_form``) and that
    # load_state_dict leaves in place and brings up to date (``_restore``): callables, child
    # schedulers.
    _converted_attribute: str | None = None

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler "
                        "with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't properly loaded "
                        "the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not recommended)"
                    )
        self.base_lrs: list[Any] = _current(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_optimizer_steps(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    @contextmanager
    def _within_step(self):
        self._get_lr_called_within_step = True
        try:
            yield
        finally:
            self._get_lr_called_within_step = False

    def _warn_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer (and ``_converted_attribute`` in its saved form)."""
        key = self._converted_attribute
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", key)}
        if key is not None:
            state[key] = self._saved_form()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        key = self._converted_attribute
        if key is None:
            self.__dict__.update(state_dict)
            return
        saved = state_dict.pop(key)
        try:
            self.__dict__.update(state_dict)
        finally:
            state_dict[key] = saved
        self._restore(saved)

    def _saved_form(self) -> Any:
        raise NotImplementedError

    def _restore(self, saved: Any) -> None:
        raise NotImplementedError

    def get_last_lr(self) -> list[Any]:
        """The learning rates of the last step, one per parameter group."""
        return self._last_lr

    def get_lr(self) -> list[Any]:
        """The learning rates for ``last_epoch`` (called by ``step``; use ``get_last_lr`` to read them)."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                    "initialization. Please, make sure to call `optimizer.step()` before "
                    "`lr_scheduler.step()`. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                    "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
                    "will result in PyTorch skipping the first value of the learning rate schedule. "
                    "See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        with self._within_step():
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        groups = self.optimizer.param_groups
        if len(values) != len(groups):
            raise ValueError(
                f"{type(self).__name__} computed {len(values)} learning rates for {len(groups)} groups"
            )
        for group, lr in zip(groups, values):
            _assign(group, "lr", lr)
        self._last_lr: list[Any] = _current(self.optimizer)


class _LRScheduler(LRScheduler):
    """The base class's older name."""


# --------------------------------------------------------------------------- schedules


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``, one function or one per group."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas_per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    # The lambdas that are callable objects are saved as their ``__dict__`` (functions as None).
    _converted_attribute = "lr_lambdas"

    def _saved_form(self) -> list[dict[str, Any] | None]:
        return _lambda_state(self.lr_lambdas)

    def _restore(self, saved: list[dict[str, Any] | None]) -> None:
        for fn, fn_state in zip(self.lr_lambdas, saved):
            if fn_state is not None:
                fn.__dict__.update(fn_state)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(LRScheduler):
    """Each step multiplies the learning rate by ``lr_lambda(epoch)``."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas_per_group(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    _converted_attribute = LambdaLR._converted_attribute
    _saved_form = LambdaLR._saved_form
    _restore = LambdaLR._restore

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        if self._is_initial:
            return _current(self.optimizer)
        groups = self.optimizer.param_groups
        return [group["lr"] * fn(self.last_epoch) for fn, group in zip(self.lr_lambdas, groups)]


class StepLR(LRScheduler):
    """Multiplies the learning rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _current(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiplies the learning rate by ``gamma`` at each milestone (twice at a milestone given twice)."""

    def __init__(
        self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        if self.last_epoch not in self.milestones:
            return _current(self.optimizer)
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base_lr * self.gamma**passed for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """The learning rate times ``factor`` for the first ``total_iters`` epochs, then the learning rate."""

    def __init__(
        self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in groups]
        if self.last_epoch != self.total_iters:
            return _current(self.optimizer)
        return [group["lr"] * (1.0 / self.factor) for group in groups]

    def _get_closed_form_lr(self) -> list[Any]:
        scale = self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)
        return [base_lr * scale for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """The multiplier goes linearly from ``start_factor`` to ``end_factor`` over ``total_iters`` epochs."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _current(self.optimizer)
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [group["lr"] * ratio for group in groups]

    def _get_closed_form_lr(self) -> list[Any]:
        done = min(self.total_iters, self.last_epoch)
        scale = self.start_factor + (self.end_factor - self.start_factor) * done / self.total_iters
        return [base_lr * scale for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiplies the learning rate by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        if self._is_initial:
            return _current(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """``initial_lr * (1 - epoch / total_iters) ** power`` until ``total_iters``, then that (zero)."""

    def __init__(
        self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return _current(self.optimizer)
        now = 1.0 - self.last_epoch / self.total_iters
        before = 1.0 - (self.last_epoch - 1) / self.total_iters
        factor = (now / before) ** self.power
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        left = 1.0 - min(self.total_iters, self.last_epoch) / self.total_iters
        return [base_lr * left**self.power for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial learning rate to ``eta_min`` over ``T_max`` epochs (and back
    up over the next ``T_max``, as the recursive rule continues the cosine)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def _cosine(self, base_lr: Any) -> Any:
        return (
            self.eta_min
            + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        )

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _current(self.optimizer)
        if self._step_count == 1 and self.last_epoch > 0:
            # Resumed (``last_epoch`` given): the closed form, in the order the recursion would round.
            return [
                self.eta_min
                + (base_lr - self.eta_min) * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                for base_lr in self.base_lrs
            ]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            # At the trough the ratio below would divide by zero: step up from eta_min instead.
            rise = (1 - math.cos(math.pi / self.T_max)) / 2
            return [
                group["lr"] + (base_lr - self.eta_min) * rise for base_lr, group in zip(self.base_lrs, groups)
            ]
        ratio = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / (
            1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)
        )
        return [ratio * (group["lr"] - self.eta_min) + self.eta_min for group in groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [self._cosine(base_lr) for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every ``T_i`` epochs, the period ``T_0`` growing by ``T_mult`` per
    restart (SGDR). ``step(epoch)`` may take fractional epochs."""

    def __init__(
        self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        phase = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base_lr - self.eta_min) * phase for base_lr in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                restarts = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult**restarts - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult**restarts
        else:
            self.T_i = self.T_0
            self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        with self._within_step():
            values = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            _assign(group, "lr", lr)
        self._last_lr = _current(self.optimizer)


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith): the rate goes between ``base_lr`` and ``max_lr`` in triangles
    (``triangular``, ``triangular2`` halving each cycle, ``exp_range``) or under a custom
    ``scale_fn``; momentum (or Adam's beta1) cycles the opposite way when ``cycle_momentum``."""

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float = 0.8,
        max_momentum: float = 0.9,
        last_epoch: int = -1,
    ) -> None:
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _assign(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(
                    self.max_momentums, self.base_momentums, optimizer.param_groups
                ):
                    _set_momentum(group, top, self.use_beta1)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = _flat_scale
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = _halving_scale
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(_exponential_scale, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * scale_factor * scale for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            pairs = zip(self.base_momentums, self.max_momentums, self.optimizer.param_groups)
            for bottom, top, group in pairs:
                _set_momentum(group, top - (top - bottom) * scale_factor * scale, self.use_beta1)
        return lrs

    # A custom scale_fn that is a callable object is saved as its ``__dict__`` (a function as None).
    _converted_attribute = "_scale_fn_custom"

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)  # set again from the mode on loading
        return state

    def _saved_form(self) -> dict[str, Any] | None:
        fn = self._scale_fn_custom
        return None if fn is None or isinstance(fn, types.FunctionType) else fn.__dict__.copy()

    def _restore(self, saved: dict[str, Any] | None) -> None:
        if saved is not None:
            self._scale_fn_custom.__dict__.update(saved)
        self._init_scale_fn()


def _flat_scale(x: float) -> float:
    return 1.0


def _halving_scale(x: float) -> float:
    return 1 / (2.0 ** (x - 1))


def _exponential_scale(gamma: float, x: float) -> float:
    return gamma**x


def _set_momentum(group: dict[str, Any], value: float, use_beta1: bool) -> None:
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): the rate rises from ``max_lr / div_factor`` to ``max_lr``
    over ``pct_start`` of ``total_steps``, then anneals to ``initial_lr / final_div_factor``
    (``three_phase`` first comes back down to the initial rate); momentum moves the opposite way."""

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")

        def phase(end_step: float, lr: tuple[str, str], momentum: tuple[str, str]) -> dict[str, Any]:
            return {
                "end_step": end_step,
                "start_lr": lr[0],
                "end_lr": lr[1],
                "start_momentum": momentum[0],
                "end_momentum": momentum[1],
            }

        warmup_end = float(pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        if three_phase:
            self._schedule_phases = [
                phase(warmup_end, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
                phase(
                    float(2 * pct_start * self.total_steps) - 2,
                    ("max_lr", "initial_lr"),
                    ("base_momentum", "max_momentum"),
                ),
                phase(last, ("initial_lr", "min_lr"), ("max_momentum", "max_momentum")),
            ]
        else:
            self._schedule_phases = [
                phase(warmup_end, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
                phase(last, ("max_lr", "min_lr"), ("base_momentum", "max_momentum")),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy

        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(max_momentums, base_momentums, optimizer.param_groups):
                    _set_momentum(group, top, self.use_beta1)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _annealing_cos(start: float, end: float, pct: float) -> float:
        """Cosine from ``start`` (pct 0) to ``end`` (pct 1)."""
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start: float, end: float, pct: float) -> float:
        """Straight line from ``start`` (pct 0) to ``end`` (pct 1)."""
        return (end - start) * pct + start

    def _anneal_func(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        if self._anneal_func_type == "linear":
            return self._annealing_linear(start, end, pct)
        raise ValueError(f"Unknown _anneal_func_type: {self._anneal_func_type}")

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(
                f"Tried to step {step_num} times. The specified number of total steps is {self.total_steps}"
            )
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal_func(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                        )
                        _set_momentum(group, momentum, self.use_beta1)
                    break
                start_step = end_step
        return lrs


# --------------------------------------------------------------------------- combinations


class SequentialLR(LRScheduler):
    """Runs ``schedulers[i]`` from ``milestones[i - 1]`` on; each one after the first restarts from
    its own epoch 0 at its milestone."""

    def __init__(
        self, optimizer: Optimizer, schedulers: list[LRScheduler], milestones: list[int], last_epoch: int = -1
    ) -> None:
        owner = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{owner} expects at least one scheduler, but got no scheduler.")
        _check_children(owner, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than the number "
                f"of milestone points, but got number of schedulers {len(schedulers)} and the number of "
                f"milestones to be equal to {len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # The children each took their first step on creation: undo that and start the first one again.
        for group in optimizer.param_groups:
            _assign(group, "lr", group["initial_lr"])
        self.recursive_undo()
        first = self._schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        """Take one epoch back from every scheduler nested in this one."""
        target = self if sched is None else sched
        if hasattr(target, "_schedulers"):
            for child in target._schedulers:
                self.recursive_undo(child)
        elif hasattr(target, "last_epoch"):
            target.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    # The children are saved as their state dicts.
    _converted_attribute = "_schedulers"

    def _saved_form(self) -> list[dict[str, Any]]:
        return [s.state_dict() for s in self._schedulers]

    def _restore(self, saved: list[dict[str, Any]]) -> None:
        for scheduler, child_state in zip(self._schedulers, saved):
            scheduler.load_state_dict(child_state)


class ChainedScheduler(LRScheduler):
    """Steps every scheduler in the list at each ``step()``; their multiplicative effects compose."""

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None:
        owner = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{owner} expects at least one scheduler to be chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_children(owner, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _current(self._schedulers[-1].optimizer)

    def step(self) -> None:  # type: ignore[override]
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _current(self._schedulers[-1].optimizer)

    _converted_attribute = SequentialLR._converted_attribute
    _saved_form = SequentialLR._saved_form
    _restore = SequentialLR._restore


class ReduceLROnPlateau(LRScheduler):
    """Multiplies the learning rate by ``factor`` once a metric passed to ``step(metric)`` has not
    improved for more than ``patience`` epochs, then waits ``cooldown`` epochs."""

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: list[float] | float = 0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _require_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _current(optimizer)
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: SupportsFloat, epoch: int | None = None) -> None:  # type: ignore[override]
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _current(self.optimizer)

    def _reduce_lr(self, epoch: int) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new param "
                    "group being added to the optimizer. Please modify the `min_lrs` field to match the "
                    "length of the `optimizer` param groups."
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                _assign(group, "lr", new_lr)

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode)

"""``ferrograd.amp``: the interface of automatic mixed precision.

ferrograd computes in float32 and float64 only. ``autocast`` therefore changes no dtype: asked for
a lower precision, it warns and stays disabled, as PyTorch does on a device that lacks the dtype.
``GradScaler`` scales losses and unscales gradients as PyTorch's does (a float32 step never needs
it), so training code written for mixed precision runs unchanged.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable
from typing import Any

from . import _C
from ._C import Tensor
from .autograd.grad_mode import no_grad

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` can be enabled for ``device_type``: never, as ferrograd has no
    lower-precision dtype."""
    return False


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Always ``False`` (see :class:`autocast`)."""
    return False


class autocast:
    """A context manager (and decorator) accepted wherever PyTorch's is; it never lowers the
    precision of ops (see the module's description)."""

    def __init__(
        self,
        device_type: str = "cpu",
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        _check_device_type(device_type)
        if device_type not in ("cpu", "cuda"):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        if enabled and device_type == "cuda":
            warnings.warn("CUDA is not available. Disabling autocast.", UserWarning, stacklevel=2)
        elif enabled and dtype not in (None, _C.float32):
            warnings.warn(
                f"ferrograd has no {dtype} dtype: autocast is disabled and ops run in their own precision.",
                UserWarning,
                stacklevel=2,
            )
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = False

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, *exc: object) -> bool:
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorated


def _check_device_type(device_type: Any) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type: str, cast_inputs: Any = None):
    """Decorates a custom Function's ``forward``. Under an enabled autocast it would run with
    floating inputs cast to ``cast_inputs`` and autocast off; autocast never enables here, so
    ``forward`` runs as written (usable bare or called with options)."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorates a custom Function's ``backward`` to run under the autocast state of its
    ``forward``: off, as autocast never enables here."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd


class GradScaler:
    """Multiplies losses by a scale before backward, divides the gradients by it before the step,
    skips a step whose gradients hold an inf or NaN and then lowers the scale (by
    ``backoff_factor``), and raises it (by ``growth_factor``) after ``growth_interval`` clean steps.
    Disabled (every method a pass-through) when ``enabled=False`` or for ``device="cuda"``, which
    warns, as PyTorch does without CUDA."""

    _READY, _UNSCALED, _STEPPED = "ready", "unscaled", "stepped"

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        if enabled and device == "cuda":
            warnings.warn(
                "GradScaler is enabled for CUDA, but CUDA is not available. Disabling.",
                UserWarning,
                stacklevel=2,
            )
            enabled = False
        if growth_factor <= 1.0:
            raise AssertionError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise AssertionError("The backoff factor must be < 1.0.")
        self._device = device
        self._enabled = enabled
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs):
        """``outputs`` (a tensor or nested lists and tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, Iterable):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, (list, tuple)) else scaled
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer) -> dict[str, Any]:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": self._READY, "found_inf": False})

    def unscale_(self, optimizer) -> None:
        """Divides the gradients of ``optimizer``'s parameters by the scale, in place, and notes
        whether any holds an inf or NaN."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] is self._UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is self._STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inverse = 1.0 / self._scale
        found_inf = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    found_inf = found_inf or not bool(p.grad.isfinite().all())
                    p.grad.mul_(inverse)
        state["found_inf"] = found_inf
        state["stage"] = self._UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step(*args, **kwargs)`` on unscaled gradients, or nothing (``None``) when
        they hold an inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] is self._STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is self._READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = self._STEPPED
        return result

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """The scale for the next iteration: ``new_scale`` if given, else grown or backed off
        after the steps since the last update."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        else:
            if not self._per_optimizer:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(s["found_inf"] for s in self._per_optimizer.values()):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer = {}

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict[str, Any]:
        if not self._enabled:
            return {}
        return {
            "scale": self._scale,
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a disabled instance of GradScaler."
            )
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])

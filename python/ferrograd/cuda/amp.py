"""``ferrograd.cuda.amp``: the CUDA forms of ``ferrograd.amp``'s ``autocast`` and ``GradScaler``;
with no CUDA device both warn and stay disabled, as PyTorch's do on a machine without CUDA."""

from __future__ import annotations

import warnings
from typing import Any

from .. import amp

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]


class autocast(amp.autocast):
    """``ferrograd.amp.autocast("cuda", ...)``."""

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(amp.GradScaler):
    """``ferrograd.amp.GradScaler("cuda", ...)``, with the same other arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("cuda", *args, **kwargs)


def custom_fwd(fwd=None, *, cast_inputs: Any = None):
    """Deprecated: ``ferrograd.amp.custom_fwd(..., device_type="cuda")``."""
    warnings.warn(
        "`ferrograd.cuda.amp.custom_fwd(args...)` is deprecated. "
        "Please use `ferrograd.amp.custom_fwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """Deprecated: ``ferrograd.amp.custom_bwd(..., device_type="cuda")``."""
    warnings.warn(
        "`ferrograd.cuda.amp.custom_bwd(args...)` is deprecated. "
        "Please use `ferrograd.amp.custom_bwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return amp.custom_bwd(bwd, device_type="cuda")

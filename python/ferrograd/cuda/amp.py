"""``ferrograd.cuda.amp``: the CUDA forms of ``ferrograd.amp``'s ``autocast`` and ``GradScaler``;
with no CUDA device both warn and stay disabled, as PyTorch's do on a machine without CUDA."""

from __future__ import annotations

from typing import Any

from .. import amp

__all__ = ["GradScaler", "autocast"]


class autocast(amp.autocast):
    """``ferrograd.amp.autocast("cuda", ...)``."""

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(amp.GradScaler):
    """``ferrograd.amp.GradScaler("cuda", ...)``, with the same other arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("cuda", *args, **kwargs)

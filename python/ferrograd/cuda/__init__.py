"""``ferrograd.cuda``: ferrograd runs on the CPU only, so no CUDA device is ever available."""

from __future__ import annotations

__all__ = ["amp", "device_count", "is_available", "manual_seed", "manual_seed_all"]


def is_available() -> bool:
    """Always ``False``."""
    return False


def device_count() -> int:
    """Always ``0``."""
    return 0


def manual_seed(seed: int) -> None:
    """Does nothing (there is no CUDA generator), as in PyTorch without CUDA."""


def manual_seed_all(seed: int) -> None:
    """Does nothing (there is no CUDA generator), as in PyTorch without CUDA."""


from . import amp  # noqa: E402  (after the functions it does not need)

"""``ferrograd.accelerator``: device-agnostic code asks here for an accelerator; there is none, so
it falls back to the CPU."""

from __future__ import annotations

__all__ = ["current_accelerator", "device_count", "is_available"]


def is_available() -> bool:
    """Always ``False``."""
    return False


def current_accelerator(check_available: bool = False) -> None:
    """``None``: no accelerator exists."""
    return None


def device_count() -> int:
    """Always ``0``."""
    return 0

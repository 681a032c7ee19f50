"""``ferrograd.cpu``: the one device ferrograd computes on."""

from __future__ import annotations

from typing import Any

__all__ = ["current_device", "device_count", "is_available", "set_device", "synchronize"]


def is_available() -> bool:
    """Always ``True``."""
    return True


def device_count() -> int:
    """Always ``1``."""
    return 1


def current_device() -> str:
    """``"cpu"``."""
    return "cpu"


def set_device(device: Any) -> None:
    """Does nothing: the CPU is the only device."""


def synchronize(device: Any = None) -> None:
    """Returns at once: every CPU kernel has finished when its call returns."""

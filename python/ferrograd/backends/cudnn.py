"""``ferrograd.backends.cudnn``: cuDNN is never available; its switches are kept and unused."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from typing import Any

from ._flags import switched

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """Always ``False``."""
    return False


def version() -> None:
    """``None``: there is no cuDNN library."""
    return None


def is_acceptable(tensor: Any) -> bool:
    """Always ``False``: no tensor can use cuDNN."""
    return False


def flags(
    enabled: bool = False, benchmark: bool = False, deterministic: bool = False, allow_tf32: bool = True
) -> AbstractContextManager[None]:
    """Sets the switches inside a ``with`` block and restores them after it."""
    return switched(
        sys.modules[__name__],
        enabled=enabled,
        benchmark=benchmark,
        deterministic=deterministic,
        allow_tf32=allow_tf32,
    )


__all__ = [
    "allow_tf32",
    "benchmark",
    "benchmark_limit",
    "deterministic",
    "enabled",
    "flags",
    "is_acceptable",
    "is_available",
    "version",
]

"""``ferrograd.backends.mkldnn``: oneDNN is not used; its switch is kept and unused."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager

from ._flags import switched

__all__ = ["enabled", "flags", "is_available"]

enabled = True


def is_available() -> bool:
    """Always ``False``: ferrograd's kernels are its own."""
    return False


def flags(enabled: bool = False) -> AbstractContextManager[None]:
    """Sets ``enabled`` inside a ``with`` block and restores it after it."""
    return switched(sys.modules[__name__], enabled=enabled)

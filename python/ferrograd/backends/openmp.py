"""``ferrograd.backends.openmp``: ferrograd's threads are rayon's, not OpenMP's."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """Always ``False``."""
    return False

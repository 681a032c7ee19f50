"""``ferrograd.random``: the global generator's seed and state, and ``fork_rng``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ._C import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(
    devices: Any = None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str = "cuda",
) -> Iterator[None]:
    """Restores the global generator's state when the ``with`` block ends, so that random numbers
    drawn inside it leave the sequence outside it unchanged. ``devices``/``device_type`` name
    accelerator generators, of which ferrograd has none."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)

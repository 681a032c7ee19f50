"""``nn.attention``: choosing the scaled-dot-product attention backend. ferrograd has one CPU
implementation, so ``sdpa_kernel`` only sets the ``backends.cuda`` switches for its block (and
restores them after), as code written for several backends expects."""

from __future__ import annotations

import contextlib
import enum
from typing import Iterable, Iterator

from ...backends import cuda as _cuda
from . import bias

__all__ = ["WARN_FOR_UNFUSED_KERNELS", "SDPBackend", "bias", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The attention backends PyTorch distinguishes."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# The `backends.cuda` switch of each backend that has one.
_SWITCHES = {
    SDPBackend.MATH: "math",
    SDPBackend.FLASH_ATTENTION: "flash",
    SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
    SDPBackend.CUDNN_ATTENTION: "cudnn",
}


@contextlib.contextmanager
def sdpa_kernel(backends: SDPBackend | Iterable[SDPBackend], set_priority: bool = False) -> Iterator[None]:
    """Within the block, only ``backends`` are enabled; the switches are restored after."""
    chosen = [backends] if isinstance(backends, SDPBackend) else backends
    if not isinstance(chosen, (list, tuple)) or not all(isinstance(b, SDPBackend) for b in chosen):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
            f"got {type(backends).__name__}"
        )
    saved = dict(_cuda._attention_enabled)
    try:
        for backend, switch in _SWITCHES.items():
            _cuda._attention_enabled[switch] = backend in chosen
        yield
    finally:
        _cuda._attention_enabled.update(saved)

"""``ferrograd.backends.cuda``: built without CUDA; the matmul and attention switches are kept
and unused (ferrograd's attention is always its one CPU implementation)."""

from __future__ import annotations


class _MatmulSwitches:
    """``backends.cuda.matmul``: reduced-precision permissions for CUDA matrix products."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _MatmulSwitches()
_attention_enabled = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built() -> bool:
    """Always ``False``: ferrograd has no CUDA build."""
    return False


def _attention_switch(kind: str):
    """``enable_<kind>_sdp(enabled)`` and ``<kind>_sdp_enabled()``."""

    def enable(enabled: bool) -> None:
        _attention_enabled[kind] = bool(enabled)

    def is_enabled() -> bool:
        return _attention_enabled[kind]

    enable.__name__, is_enabled.__name__ = f"enable_{kind}_sdp", f"{kind}_sdp_enabled"
    return enable, is_enabled


enable_flash_sdp, flash_sdp_enabled = _attention_switch("flash")
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _attention_switch("mem_efficient")
enable_math_sdp, math_sdp_enabled = _attention_switch("math")
enable_cudnn_sdp, cudnn_sdp_enabled = _attention_switch("cudnn")


__all__ = [
    "cudnn_sdp_enabled",
    "enable_cudnn_sdp",
    "enable_flash_sdp",
    "enable_math_sdp",
    "enable_mem_efficient_sdp",
    "flash_sdp_enabled",
    "is_built",
    "math_sdp_enabled",
    "matmul",
    "mem_efficient_sdp_enabled",
]

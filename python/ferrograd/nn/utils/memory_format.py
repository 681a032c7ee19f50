"""Laying out convolution weights in a memory format (torch.nn.utils.memory_format)."""

from __future__ import annotations

from ..modules import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d, Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert_weights(module: Module, kinds: tuple[type, ...], rank: int, memory_format) -> Module:
    """Every ``kinds`` submodule's weight (of ``rank`` dimensions) laid out in ``memory_format``;
    as with ``Module.to``, a converted weight is a new Parameter."""
    for sub in module.modules():
        if isinstance(sub, kinds):
            sub._apply(lambda t: t.contiguous(memory_format=memory_format) if t.dim() == rank else t)
    return module


def convert_conv2d_weight_memory_format(module: Module, memory_format) -> Module:
    """Lays out the weights of ``module``'s ``Conv2d`` and ``ConvTranspose2d`` layers in
    ``memory_format`` (``channels_last``: N, H, W, C); returns ``module``."""
    return _convert_weights(module, (Conv2d, ConvTranspose2d), 4, memory_format)


def convert_conv3d_weight_memory_format(module: Module, memory_format) -> Module:
    """Lays out the weights of ``module``'s ``Conv3d`` and ``ConvTranspose3d`` layers in
    ``memory_format`` (``channels_last_3d``: N, D, H, W, C); returns ``module``."""
    return _convert_weights(module, (Conv3d, ConvTranspose3d), 5, memory_format)

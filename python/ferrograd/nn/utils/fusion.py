"""Folding an eval-mode BatchNorm into the preceding convolution or linear layer."""

from __future__ import annotations

import copy
import functools

import ferrograd

from ..modules import Module
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def _fused_copy(module: Module, bn: Module, fuse_weights) -> Module:
    """A copy of ``module`` whose weight and bias are ``fuse_weights`` of its own and ``bn``'s
    running statistics and affine parameters."""
    fused = copy.deepcopy(module)
    assert bn.running_mean is not None and bn.running_var is not None
    fused.weight, fused.bias = fuse_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused


def fuse_conv_bn_eval(conv: Module, bn: Module, transpose: bool = False) -> Module:
    """A copy of ``conv`` whose weight and bias also apply ``bn`` (both must be in eval mode)."""
    assert not (conv.training or bn.training), "Fusion only for eval!"
    return _fused_copy(conv, bn, functools.partial(fuse_conv_bn_weights, transpose=transpose))


def fuse_conv_bn_weights(
    conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose: bool = False
) -> tuple[Parameter, Parameter]:
    """Convolution weight and bias (as new Parameters) equal to the convolution followed by a
    BatchNorm with running statistics ``bn_rm``/``bn_rv`` and affine ``bn_w``/``bn_b``."""
    conv_weight_dtype = conv_w.dtype
    conv_bias_dtype = conv_b.dtype if conv_b is not None else conv_weight_dtype
    if conv_b is None:
        conv_b = ferrograd.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = ferrograd.ones_like(bn_rm)
    if bn_b is None:
        bn_b = ferrograd.zeros_like(bn_rm)
    bn_var_rsqrt = ferrograd.rsqrt(bn_rv + bn_eps)
    # output channels are dim 0 of a convolution weight, dim 1 of a transposed one
    trailing = [1] * (conv_w.dim() - 2)
    shape = [1, -1, *trailing] if transpose else [-1, 1, *trailing]
    fused_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(conv_weight_dtype)
    fused_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(conv_bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear: Module, bn: Module) -> Module:
    """A copy of ``linear`` whose weight and bias also apply ``bn`` (both must be in eval mode)."""
    assert not (linear.training or bn.training), "Fusion only for eval!"
    # bn's channels broadcast against linear's outputs: equal counts, or a single bn channel
    assert linear.out_features == bn.num_features or bn.num_features == 1, (
        "To fuse, linear.out_features == bn.num_features or bn.num_features == 1"
    )
    return _fused_copy(linear, bn, fuse_linear_bn_weights)


def fuse_linear_bn_weights(
    linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b
) -> tuple[Parameter, Parameter]:
    """Linear weight and bias (as new Parameters) equal to the linear layer followed by a
    BatchNorm with running statistics ``bn_rm``/``bn_rv`` and affine ``bn_w``/``bn_b``: a linear
    weight is a convolution weight without spatial dims, so this is ``fuse_conv_bn_weights``."""
    return fuse_conv_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b)

"""torch.nn.functional subset.

Relies on
  Tensor: t(), matmul(other) / @, + - * / with tensors and Python scalars,
    unary -, relu(), relu_(), tanh(), sigmoid(), softmax(dim), log_softmax(dim),
    sum(), sum(dim), mean(), mul_(other), dim(), numel(), shape, dtype,
    to(dtype), reshape(shape), movedim(src, dst) (only for inputs with > 2 dims),
    is_floating_point(), != scalar -> bool tensor, all(), any(), bool(0-d tensor),
    < scalar -> bool tensor, indexing t[index_tensor] and
    t[arange(n), index_tensor] (int64 index tensors, differentiable).
  top level: ferrograd.arange(n), ferrograd.where(cond, x, y),
    ferrograd.zeros_like(t), ferrograd.rand_like(t).
  and, for grid sampling, bags and the class-margin losses: gather, scatter,
    scatter_reduce("amax"), index_add, cumprod, narrow, floor, round, remainder,
    uniform_, exponential_, ferrograd.triu_indices, ferrograd.meshgrid, ferrograd.linspace.
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

import ferrograd
from ferrograd import _C
from ferrograd._functions import _broadcast_pair

from .attention.bias import CausalBias

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ferrograd import Tensor

__all__ = [
    "ctc_loss",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "affine_grid",
    "alpha_dropout",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "batch_norm",
    "bilinear",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "celu",
    "celu_",
    "channel_shuffle",
    "conv1d",
    "conv_tbc",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_embedding_loss",
    "cosine_similarity",
    "cross_entropy",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "elu",
    "elu_",
    "embedding",
    "embedding_bag",
    "feature_alpha_dropout",
    "fold",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "gaussian_nll_loss",
    "gelu",
    "glu",
    "grid_sample",
    "group_norm",
    "gumbel_softmax",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "hinge_embedding_loss",
    "huber_loss",
    "instance_norm",
    "interpolate",
    "kl_div",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "leaky_relu_",
    "linear",
    "linear_cross_entropy",
    "local_response_norm",
    "log_softmax",
    "logsigmoid",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "margin_ranking_loss",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "mish",
    "mse_loss",
    "multi_head_attention_forward",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "pairwise_distance",
    "pdist",
    "pixel_shuffle",
    "pixel_unshuffle",
    "poisson_nll_loss",
    "prelu",
    "relu",
    "relu6",
    "relu_",
    "rms_norm",
    "rrelu",
    "rrelu_",
    "scaled_dot_product_attention",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "soft_margin_loss",
    "softmax",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "unfold",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    return _C.linear(input, weight, bias)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu_() if inplace else input.relu()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def _in_place(input: Tensor, result: Tensor) -> Tensor:
    """``input`` overwritten with ``result``, as the ``inplace=True`` activations do."""
    return input.copy_(result)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return _C.gelu(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    # In place, the op runs on a copy: its backward reads the input it saw.
    return _in_place(input, _C.silu(input.clone())) if inplace else _C.silu(input)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _in_place(input, _C.elu(input.clone(), alpha)) if inplace else _C.elu(input, alpha)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    if inplace:
        return _in_place(input, _C.leaky_relu(input.clone(), negative_slope))
    return _C.leaky_relu(input, negative_slope)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return _C.softplus(input, beta, threshold)


def logsigmoid(input: Tensor) -> Tensor:
    return -_C.softplus(-input, 1.0, 20.0)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace and not (input.requires_grad and _C.is_grad_enabled()):  # nothing to save: no copy
        return input.clamp_(min_val, max_val)
    return _activate(input, lambda x: _C.hardtanh(x, min_val, max_val), inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return (input if dtype is None else input.to(dtype)).softmax(dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return (input if dtype is None else input.to(dtype)).log_softmax(dim)


def _check_dropout_p(p: float) -> None:
    """PyTorch's error for a dropout probability outside [0, 1] (functions and modules alike)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_dropout_p(p)
    if not training or p == 0:
        return input
    if p == 1:
        return input.mul_(0.0) if inplace else input * 0.0
    keep = 1 - p
    mask = (ferrograd.rand_like(input) < keep).to(input.dtype) / keep
    return input.mul_(mask) if inplace else input * mask


def _legacy_reduction(size_average: bool | None, reduce: bool | None, stacklevel: int = 3) -> str:
    """The reduction the deprecated arguments stand for, with a warning pointing ``stacklevel``
    frames up (by default at the caller of the function that called this one)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
        stacklevel=stacklevel,
    )
    return reduction


def _check_reduction(reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()


def _reduce_weighted(
    loss: Tensor, input: Tensor, weight: Tensor | None, reduction: str, mean_over_weight: bool
) -> Tensor:
    """``loss * weight`` reduced; a mean divides by the total weight (``mse_loss``, ``l1_loss``)
    or by the element count (``huber_loss``), as in PyTorch."""
    if weight is None:
        return _reduce(loss, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    return loss.sum() / weight.sum() if reduction == "mean" and mean_over_weight else _reduce(loss, reduction)


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    _warn_if_shapes_differ(input, target)
    reduction = _reduction_arg(size_average, reduce, reduction)
    _require_float_difference(input, target, "mse_cpu")
    diff = input - target
    return _reduce_weighted(diff * diff, input, weight, reduction, mean_over_weight=True)


def _require_float_difference(input: Tensor, target: Tensor, kernel: str) -> None:
    """PyTorch's error for a loss whose kernel takes only floating values."""
    dt = ferrograd.result_type(input, target)
    if not (dt.is_floating_point or dt.is_complex):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt._scalar_type_name}'")


def _warn_if_shapes_differ(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=3,
        )


def _reduction_arg(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, stacklevel=4)
    _check_reduction(reduction)
    return reduction


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    _warn_if_shapes_differ(input, target)
    reduction = _reduction_arg(size_average, reduce, reduction)
    return _reduce_weighted((input - target).abs(), input, weight, reduction, mean_over_weight=True)


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta``, for ``d = input - target``."""
    _warn_if_shapes_differ(input, target)
    reduction = _reduction_arg(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _require_float_difference(input, target, "smooth_l1_cpu")
    d = input - target
    ad = d.abs()
    if beta == 0:
        return _reduce(ad, reduction)
    loss = ferrograd.where(ad < beta, d * d * (0.5 / beta), ad - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``, for ``d = input - target``."""
    _warn_if_shapes_differ(input, target)
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _require_float_difference(input, target, "huber_cpu")
    d = input - target
    ad = d.abs()
    loss = ferrograd.where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    return _reduce_weighted(loss, input, weight, reduction, mean_over_weight=False)


def _check_same_size(input: Tensor, target: Tensor, message: str) -> None:
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(message.format(target=target.shape, input=input.shape))


def _check_no_grad_needed(tensor: Tensor | None, argument: str, function: str) -> None:
    """PyTorch's error for an argument its op has no derivative for, raised while grad mode is on."""
    if tensor is not None and tensor.requires_grad and _C.is_grad_enabled():
        raise RuntimeError(
            f"The function '{function}' is not differentiable with respect to argument '{argument}'. "
            "This input cannot have requires_grad True."
        )


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``-w (t log x + (1 - t) log(1 - x))`` with each log clamped at -100, as PyTorch; the gradient
    divides by ``x (1 - x)`` floored at 1e-12, so it is finite at probabilities of 0 and 1."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    _check_no_grad_needed(weight, "weight", "binary_cross_entropy")
    return _C._binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """``(1 - t) x + (1 + (p - 1) t) softplus(-x)``: the sigmoid's logarithms without overflow."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    _check_same_size(input, target, "Target size ({target}) must be the same as input size ({input})")
    _check_no_grad_needed(weight, "weight", "binary_cross_entropy_with_logits")
    _check_no_grad_needed(pos_weight, "pos_weight", "binary_cross_entropy_with_logits")
    # PyTorch computes the loss in place in ``1 - target``, so it takes the target's dtype
    if target.dtype == ferrograd.bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if not target.is_floating_point():
        result = ferrograd.promote_types(input.dtype, target.dtype)
        raise RuntimeError(
            f"result type {result._scalar_type_name} can't be cast to the desired output type "
            f"{target.dtype._scalar_type_name}"
        )
    log_weight = 1 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = (1 - target) * input + log_weight * _C.softplus(-input, 1.0, 20.0)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.to(target.dtype), reduction)


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """``target (log target - input)`` pointwise, ``input`` holding log-probabilities."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
            stacklevel=2,
        )
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # xlogy(t, t) - t * input: t log t is 0 at t = 0 (and NaN below, as a log is).
        zero = target == 0
        safe = ferrograd.where(zero, ferrograd.ones_like(target), target)
        loss = ferrograd.where(zero, ferrograd.zeros_like(target), target * safe.log()) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.dim() > 0 else 1)
    return _reduce(loss, reduction)


def _class_weights(weight: Tensor, ndim: int) -> Tensor:
    """``weight`` of shape (C,) broadcastable against an input of shape (N, C, d1, ...)."""
    return weight if ndim <= 2 else weight.reshape((-1,) + (1,) * (ndim - 2))


def _valid_targets(target: Tensor, ignore_index: int) -> tuple[Tensor, Tensor | None]:
    """Targets safe for indexing, and the mask of non-ignored ones (None when all count)."""
    valid = target != ignore_index
    if bool(valid.all()):
        return target, None
    return ferrograd.where(valid, target, ferrograd.zeros_like(target)), valid


def _check_nll_shapes(input: Tensor, target: Tensor) -> None:
    """PyTorch's checks of ``nll_loss``'s shapes, with its messages: input ``(C,)`` with target
    ``()`` or ``(1,)``, ``(N, C)`` with ``(N,)``, ``(N, C, d1, ...)`` with ``(N, d1, ...)``."""
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() == 1 and target.dim() == 1:
        if target.shape[0] != 1:
            raise ValueError(
                f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}"
            )
    elif input.dim() != 1 and (target.dim() == 0 or input.shape[0] != target.shape[0]):
        got = target.shape[0] if target.dim() else 1
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({got}).")
    if input.dim() <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif input.dim() == 4 and target.dim() != 3:
        raise RuntimeError(
            f"only batches of spatial targets supported (3D tensors) but got targets of dimension: {target.dim()}"
        )
    elif input.dim() == 4 and tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
    elif tuple(target.shape[1:]) != tuple(input.shape[2:]):
        expected = [input.shape[0], *input.shape[2:]]
        raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    reduction = _reduction_arg(size_average, reduce, reduction)
    _check_nll_shapes(input, target)
    if input.dim() == 1:  # unbatched: input (C,), target ()
        loss = nll_loss(
            input.reshape((1, -1)),
            target.reshape((1,)),
            weight,
            None,
            ignore_index,
            None,
            reduction,
        )
        return loss.reshape(()) if reduction == "none" else loss
    if input.dim() > 2:  # (N, C, d1, ...) -> (N * d1 * ..., C)
        flat = input.movedim(1, -1).reshape((-1, input.shape[1]))
        loss = nll_loss(flat, target.reshape((-1,)), weight, None, ignore_index, None, reduction)
        return loss.reshape(tuple(target.shape)) if reduction == "none" else loss
    return _C._nll_loss(input, target, weight, reduction, ignore_index)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy for class-index targets (int64, input.shape without the class dim)
    or class-probability targets (floating, same shape as input)."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    soft = tuple(input.shape) == tuple(target.shape)
    if soft and not target.is_floating_point():
        raise RuntimeError(
            "Expected floating point type for target with class probabilities, "
            f"got {target.dtype._scalar_type_name}"
        )
    if soft and ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if input.dim() == 0:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    logp = log_softmax(input, class_dim)

    if soft:  # class probabilities
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        loss = logp * target
        if weight is not None:
            loss = loss * _class_weights(weight, input.dim())
        if reduction == "none":
            return -loss.sum(class_dim)
        if reduction == "sum":
            return -loss.sum()
        return -loss.sum() / (input.numel() // n_classes)

    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing == 0:
        return nll
    # class indices with label smoothing: mix in the loss against the uniform distribution
    weighted = logp if weight is None else logp * _class_weights(weight, input.dim())
    smooth = -weighted.sum(class_dim)
    safe_target, valid = _valid_targets(target, ignore_index)
    if valid is not None:
        smooth = ferrograd.where(valid, smooth, ferrograd.zeros_like(smooth))
    if reduction == "mean":
        if weight is not None:
            total = weight[safe_target]
            total = (total if valid is None else total * valid.to(total.dtype)).sum()
        else:
            total = target.numel() if valid is None else valid.to(smooth.dtype).sum()
        smooth = smooth.sum() / total
    else:
        smooth = _reduce(smooth, reduction)
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / n_classes)


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options: Any = None,
) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``. A weight of shape
    ``(C, d_1, ..., d_K, in_features)`` gives logits ``(N, C, d_1, ..., d_K)`` (a K-dimensional
    loss). ``options`` (``nn.LinearCrossEntropyOptions``) is accepted; the logits are always
    computed whole, so it changes neither the result nor the memory used."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(
            f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}"
        )
    num_batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {in_features} and {linear_weight.shape[-1]}, respectively"
        )
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(
            f"expected linear_bias shape {(num_classes, *out_features)}, got {tuple(linear_bias.shape)}"
        )
    if out_features and not num_batches:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
            f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}"
        )
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if out_features:
        logits = linear(input, linear_weight.reshape(-1, in_features)).reshape(logits_shape)
        if linear_bias is not None:
            logits = logits + linear_bias
    else:
        logits = linear(input, linear_weight, linear_bias)
    return cross_entropy(
        logits,
        target,
        weight,
        ignore_index=-100 if ignore_index is None else ignore_index,
        reduction=reduction,
        label_smoothing=label_smoothing,
    )


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalizes each sample's channels in ``num_groups`` groups, then scales and shifts per channel."""
    if input.dim() >= 2 and num_groups > 0:
        size = [input.shape[0] * input.shape[1] // num_groups, num_groups, *input.shape[2:]]
        if math.prod((size[0], *size[2:])) == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    return _C._group_norm(input, num_groups, weight, bias, eps)


def layer_norm(
    input: Tensor,
    normalized_shape: tuple[int, ...] | list[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalizes over the trailing ``normalized_shape`` dims with the biased variance."""
    if not isinstance(normalized_shape, (tuple, list)):  # a bare int too, as PyTorch (nn.LayerNorm takes one)
        raise TypeError(
            "layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, "
            f"not {type(normalized_shape).__name__}"
        )
    return _C._layer_norm(input, list(normalized_shape), weight, bias, eps)


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input``; rows at ``padding_idx`` get no gradient.

    With ``max_norm``, the picked rows of ``weight`` whose ``norm_type``-norm exceeds it are first
    scaled down to it in place; with ``scale_grad_by_freq``, the gradient of each row is divided by
    how often its index occurs in ``input``."""
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not supported")
    if input.dtype not in (ferrograd.int64, ferrograd.int32):
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            f"but got {input.dtype} instead (while checking arguments for embedding)"
        )
    rows = weight.shape[0]
    if input.numel() and (int(input.max()) >= rows or int(input.min()) < 0):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    out = weight[input]
    if scale_grad_by_freq:
        counts = ferrograd.bincount(input.reshape(-1).long(), minlength=rows)[input]
        out = _ScaleGrad.apply(out, counts.unsqueeze(-1).to(out.dtype).reciprocal())
    if padding_idx is None:
        return out
    if padding_idx < 0:
        padding_idx += rows
    padding = (input == padding_idx).unsqueeze(-1)
    return ferrograd.where(padding, out.detach(), out)


def _embedding_renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    """Scales the rows of ``weight`` that ``input`` picks down to a ``norm_type``-norm of
    ``max_norm`` where they exceed it, in place and unrecorded."""
    with ferrograd.no_grad():
        picked = ferrograd.unique(input.reshape(-1).long())
        selected = weight[picked]
        norms = ferrograd.linalg.vector_norm(selected, norm_type, dim=1, keepdim=True)
        scale = ferrograd.where(norms > max_norm, max_norm / (norms + 1e-7), ferrograd.ones_like(norms))
        weight[picked] = selected * scale


class _ScaleGrad(ferrograd.autograd.Function):
    """Identity whose backward multiplies the gradient by ``scale``."""

    @staticmethod
    def forward(ctx: Any, tensor: Tensor, scale: Tensor) -> Tensor:
        ctx.scale = scale
        return tensor

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        return grad * ctx.scale, None


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    if tensor.dtype != ferrograd.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() and int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max()) + 1
    elif tensor.numel() and int(tensor.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == ferrograd.arange(num_classes)).to(ferrograd.int64)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:
    """``input`` over its ``p``-norm along ``dim``, the norm floored at ``eps``."""
    if out is not None:
        raise TypeError("normalize() does not support out=")
    return input / input.norm(p, dim, keepdim=True).clamp(min=eps)


# ---- images: convolution, pooling, normalization -------------------------------------


def _pair(value: int | tuple[int, ...] | list[int], name: str) -> tuple[int, int]:
    """An int or a one- or two-element sequence as a (rows, columns) pair."""
    if isinstance(value, int):
        return (value, value)
    pair = tuple(int(v) for v in value)
    if len(pair) == 1:
        return (pair[0], pair[0])
    if len(pair) != 2:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of 2 values to match the convolution "
            f"dimensions, but got {name}={list(pair)}"
        )
    return (pair[0], pair[1])


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """Pads (negative amounts crop) with ``pad`` listing (before, after) amounts from the last dim
    backwards; ``mode`` is ``"constant"`` (``value``, default 0), ``"reflect"``, ``"replicate"`` or
    ``"circular"``."""
    pad = list(pad)
    if mode == "circular" and any(amount < 0 for amount in pad):
        # PyTorch crops first and wraps around what is left
        for dim, (before, after) in zip(range(input.dim() - 1, -1, -1), zip(pad[::2], pad[1::2])):
            if before < 0:
                input = input.narrow(dim, -before, input.shape[dim] + before)
            if after < 0:
                input = input.narrow(dim, 0, input.shape[dim] + after)
        pad = [max(amount, 0) for amount in pad]
    return _C._pad(input, pad, mode, value)


_RESIZE_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_LINEAR_MODE_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3}


def interpolate(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resizes the spatial dims (after batch and channels) to ``size`` or by ``scale_factor``:
    ``nearest``, ``nearest-exact``, ``area`` (adaptive average pooling), ``linear`` (3D input),
    ``bilinear`` (4D), ``bicubic`` (4D), ``trilinear`` (5D) or, with ``antialias``, the
    antialiased ``bilinear``, ``bicubic`` and ``lanczos`` (4D) of PyTorch and PIL."""
    spatial = list(input.shape[2:])
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = [size] * len(spatial) if isinstance(size, int) else list(size)
        if len(sizes) != len(spatial):
            raise ValueError(
                f"Input and output must have the same number of spatial dimensions, but got input with spatial "
                f"dimensions of {spatial} and output size of {size}. Please provide input tensor in "
                "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
            )
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        scales: list[float | None] = [None] * len(spatial)
    elif scale_factor is not None:
        factors = (
            [scale_factor] * len(spatial) if isinstance(scale_factor, (int, float)) else list(scale_factor)
        )
        if len(factors) != len(spatial):
            raise ValueError(
                f"Input and scale_factor must have the same number of spatial dimensions, but got input with spatial "
                f"dimensions of {spatial} and scale_factor of shape {scale_factor}. Please provide input tensor in "
                "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
            )
        sizes = [math.floor(n * f) for n, f in zip(spatial, factors)]
        scales = [None if recompute_scale_factor else float(f) for f in factors]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D tensor "
            "as input"
        )
    if mode == "area" and 1 <= len(spatial) <= 3:
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[len(spatial) - 1](input, sizes)
    if mode == "lanczos" and len(spatial) == 2:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if mode in _LINEAR_MODE_DIMS and 1 <= len(spatial) <= 3 and len(spatial) != _LINEAR_MODE_DIMS[mode]:
        raise NotImplementedError(
            f"Got {input.dim()}D input, but {mode} mode needs {_LINEAR_MODE_DIMS[mode] + 2}D input"
        )
    separable = (
        len(spatial) == 2 and mode in ("bilinear", "bicubic", "lanczos") and (antialias or mode == "bicubic")
    )
    if not (
        separable or (mode in ("nearest", "nearest-exact", *_LINEAR_MODE_DIMS) and 1 <= len(spatial) <= 3)
    ):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: "
            f"{_RESIZE_MODES} (got {mode})"
        )
    if not (all(spatial) and all(sizes)):
        axes = "DHW"[-len(spatial) :]
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input "
            f"({', '.join(f'{a}: {n}' for a, n in zip(axes, spatial))}) "
            f"output ({', '.join(f'{a}: {n}' for a, n in zip(axes, sizes))})"
        )
    if separable:
        return _resize_separably(input, sizes, scales, mode, bool(align_corners), antialias)
    return _C._interpolate(input, sizes, scales, mode, bool(align_corners))


def _resample(input: Tensor, dim: int, taps: np.ndarray, weights: np.ndarray) -> Tensor:
    """``input`` resampled along ``dim``: output ``i`` is ``sum_k weights[i, k] * input[taps[i, k]]``,
    a tap of -1 adding nothing (it reads an appended zero, so that an infinity elsewhere cannot
    make it NaN). Composed of ``index_select``, it is differentiable."""
    dim %= input.dim()
    if (taps < 0).any():
        taps = np.where(taps < 0, input.shape[dim], taps)
        input = ferrograd.cat([input, ferrograd.zeros_like(input.narrow(dim, 0, 1))], dim)
    along_dim = (-1,) + (1,) * (input.dim() - dim - 1)
    out = None
    for k in range(taps.shape[1]):  # tap by tap: a few output-sized terms, not one tensor of all taps
        weight = ferrograd.tensor(weights[:, k].reshape(along_dim), dtype=input.dtype)
        term = input.index_select(dim, ferrograd.tensor(taps[:, k])) * weight
        out = term if out is None else out + term
    return out


def _source_scale(size: int, output: int, align_corners: bool, scale: float | None) -> float:
    """Input pixels per output pixel (PyTorch's ``area_pixel_compute_scale``)."""
    if align_corners:
        return (size - 1) / (output - 1) if output > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else size / output


def _cubic_taps(
    size: int, output: int, align_corners: bool, scale: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """The four input indices (clamped to the border) and cubic convolution weights (A = -0.75)
    of each output index, as PyTorch's ``upsample_bicubic2d``."""
    ratio = _source_scale(size, output, align_corners, scale)
    position = np.arange(output, dtype=np.float64)
    source = ratio * position if align_corners else ratio * (position + 0.5) - 0.5
    index = np.minimum(np.floor(source), size - 1)
    t = np.clip(source - index, 0.0, 1.0)
    taps = np.clip(index[:, None] + np.arange(-1, 3), 0, size - 1).astype(np.int64)
    return taps, np.stack(_cubic_coefficients(t), axis=1)


def _keys_cubic(x: np.ndarray) -> np.ndarray:
    """The cubic convolution kernel with A = -0.5, the antialiased bicubic filter (as PIL's)."""
    x = np.abs(x)
    return np.where(x < 1, _cubic_near(x, -0.5), np.where(x < 2, _cubic_far(x, -0.5), 0.0))


# each antialiasing filter's half-width at scale 1, and the filter
_ANTIALIAS_FILTERS = {
    "bilinear": (1.0, lambda x: np.maximum(1.0 - np.abs(x), 0.0)),
    "bicubic": (2.0, _keys_cubic),
    "lanczos": (3.0, lambda x: np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0.0)),
}


def _antialias_taps(
    size: int, output: int, align_corners: bool, scale: float | None, mode: str
) -> tuple[np.ndarray, np.ndarray]:
    """The input indices and normalized weights of each output index for the antialiased modes,
    as PyTorch's ``_compute_indices_min_size_weights_aa``: when shrinking, the filter is widened
    by the shrink factor so that every input pixel counts."""
    half_width, kernel = _ANTIALIAS_FILTERS[mode]
    ratio = _source_scale(size, output, align_corners, scale)
    stretch = max(ratio, 1.0)
    support = half_width * stretch
    count = math.ceil(support) * 2 + 1
    center = ratio * (np.arange(output) + 0.5)
    # the C++ casts truncate toward zero
    first = np.maximum(np.trunc(center - support + 0.5).astype(np.int64), 0)
    lengths = np.clip(np.minimum(np.trunc(center + support + 0.5).astype(np.int64), size) - first, 0, count)
    offsets = np.arange(count)
    valid = offsets < lengths[:, None]
    weights = np.where(valid, kernel((offsets + first[:, None] - center[:, None] + 0.5) / stretch), 0.0)
    total = weights.sum(1, keepdims=True)
    weights = np.divide(weights, total, out=weights, where=total != 0)
    return np.where(valid, first[:, None] + offsets, -1), weights


def _resize_separably(
    input: Tensor,
    sizes: list[int],
    scales: list[float | None],
    mode: str,
    align_corners: bool,
    antialias: bool,
) -> Tensor:
    """``bicubic`` and the antialiased modes of a 4-D input: along the width, then the height, as
    PyTorch, each a resampling by taps and weights (so gradients come from ``index_select``)."""
    if not input.is_floating_point():
        kernel = "compute_index_ranges_weights" if antialias else "compute_indices_weights_cubic"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype._scalar_type_name}'")
    out = input
    for dim, output, scale in ((3, sizes[1], scales[1]), (2, sizes[0], scales[0])):
        size = input.shape[dim]
        if antialias and size == output:  # PyTorch skips the dims whose size is kept
            continue
        if antialias:
            taps, weights = _antialias_taps(size, output, align_corners, scale, mode)
        else:
            taps, weights = _cubic_taps(size, output, align_corners, scale)
        out = _resample(out, dim, taps, weights)
    return out.clone() if out is input else out


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] | str = 0,
    dilation: int | tuple[int, int] = 1,
    groups: int = 1,
) -> Tensor:
    dilation = _pair(dilation, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            if _pair(stride, "stride") != (1, 1):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
            if total[0] % 2 or total[1] % 2:  # odd: the extra row and column go after, as in torch
                warnings.warn(
                    "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
                    "copy of the input be created",
                    stacklevel=2,
                )
                input = pad(
                    input, (total[1] // 2, total[1] - total[1] // 2, total[0] // 2, total[0] - total[0] // 2)
                )
                padding = 0
            else:
                padding = (total[0] // 2, total[1] // 2)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    return _C._conv2d(
        input, weight, bias, _pair(stride, "stride"), _pair(padding, "padding"), dilation, groups
    )


def max_pool2d(
    input: Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    dilation: int | tuple[int, int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """Window maxima; with ``return_indices`` also each maximum's flat position within its input
    plane (row * width + column), as ``max_unpool2d`` takes it."""
    kernel = _pair(kernel_size, "kernel_size")
    strides = (
        kernel
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else _pair(stride, "stride")
    )
    padding, dilation = _pair(padding, "padding"), _pair(dilation, "dilation")
    _check_pool_windows(kernel, strides, padding, dilation)
    out, indices = _C._max_pool2d(input, kernel, strides, padding, dilation, ceil_mode)
    return (out, indices) if return_indices else out


def unfold(
    input: Tensor,
    kernel_size: int | tuple[int, int],
    dilation: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    stride: int | tuple[int, int] = 1,
) -> Tensor:
    return _C._unfold(
        input,
        _pair(kernel_size, "kernel_size"),
        _pair(dilation, "dilation"),
        _pair(padding, "padding"),
        _pair(stride, "stride"),
    )


def fold(
    input: Tensor,
    output_size: int | tuple[int, int],
    kernel_size: int | tuple[int, int],
    dilation: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    stride: int | tuple[int, int] = 1,
) -> Tensor:
    return _C._fold(
        input,
        _pair(output_size, "output_size"),
        _pair(kernel_size, "kernel_size"),
        _pair(dilation, "dilation"),
        _pair(padding, "padding"),
        _pair(stride, "stride"),
    )


def avg_pool2d(
    input: Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Window means, computed as the mean of ``unfold``'s columns. With ``ceil_mode`` a last,
    partial window is kept and divided by the part of it lying within the (padded) input."""
    if input.dim() == 3:
        return avg_pool2d(
            input.unsqueeze(0), kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
        ).squeeze(0)
    kernel = _pair(kernel_size, "kernel_size")
    strides = (
        kernel
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else _pair(stride, "stride")
    )
    padding = _pair(padding, "padding")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _check_pool_windows(kernel, strides, padding)
    n, c, h, w = input.shape
    oh = _pool_output_size(h, kernel[0], padding[0], strides[0], 1, ceil_mode)
    ow = _pool_output_size(w, kernel[1], padding[1], strides[1], 1, ceil_mode)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output size is too small"
        )
    # zeros after the padding so that a last, partial window (ceil_mode) is complete
    extra = [
        max(0, (o - 1) * s + k - size - 2 * p)
        for o, s, k, size, p in zip((oh, ow), strides, kernel, (h, w), padding)
    ]
    x = input.reshape((n * c, 1, h, w))
    if extra != [0, 0]:
        x = pad(x, [0, extra[1], 0, extra[0]])
    cols = unfold(x, kernel, 1, padding, strides)
    total = cols.sum(1)
    if divisor_override is not None:
        out = total / divisor_override
    elif extra == [0, 0] and (count_include_pad or padding == (0, 0)):
        out = total / (kernel[0] * kernel[1])
    else:
        with ferrograd.no_grad():
            inside = ferrograd.ones((1, 1, h, w), dtype=input.dtype)
            inside = pad(
                inside, [padding[1], padding[1], padding[0], padding[0]], value=float(count_include_pad)
            )
            inside = pad(inside, [0, extra[1], 0, extra[0]])
            counts = unfold(inside, kernel, 1, 0, strides).sum(1)
        out = total / counts
    return out.reshape((n, c, oh, ow))


def adaptive_avg_pool2d(input: Tensor, output_size: int | tuple[int | None, int | None]) -> Tensor:
    """Means over the bins ``[floor(i H / oh), ceil((i + 1) H / oh))`` (and likewise for columns)."""
    h, w = input.shape[-2], input.shape[-1]
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    oh, ow = (h if size[0] is None else size[0]), (w if size[1] is None else size[1])
    if (oh, ow) == (1, 1):
        return input.mean((-2, -1), keepdim=True)
    if h % oh == 0 and w % ow == 0:
        return avg_pool2d(input, (h // oh, w // ow))
    return _resample(_resample(input, -1, *_bin_taps(w, ow)), -2, *_bin_taps(h, oh))


def _bin_taps(size: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The indices of each adaptive pooling bin ``[floor(i size / count), ceil((i + 1) size / count))``
    (-1 past a shorter bin's end) and the weights averaging over them."""
    bins = np.arange(count)
    starts = bins * size // count
    lengths = -(-(bins + 1) * size // count) - starts
    offsets = np.arange(lengths.max())
    inside = offsets < lengths[:, None]
    return np.where(inside, starts[:, None] + offsets, -1), np.where(inside, 1.0 / lengths[:, None], 0.0)


# ---- more convolutions and pooling, composed of the 2-d kernels above ------------------


def _ntuple(value, n: int, name: str) -> tuple[int, ...]:
    """An int or an ``n``-element (or one-element) sequence as an ``n``-tuple."""
    if isinstance(value, int):
        return (value,) * n
    values = tuple(int(v) for v in value)
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {n} values to match the convolution "
            f"dimensions, but got {name}={list(values)}"
        )
    return values


def _check_conv_input(
    name: str, input: Tensor, weight: Tensor, spatial: int, groups: int, transposed: bool = False
) -> None:
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {name}, but got input of "
            f"size: {list(input.shape)}"
        )
    if weight.dim() != spatial + 2:
        raise RuntimeError(
            f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
            f"{list(weight.shape)}, but got {input.dim()}-dimensional input of size {list(input.shape)} instead"
        )
    shape = list(input.shape) if input.dim() == spatial + 2 else [1, *input.shape]
    if transposed:
        if weight.shape[0] % groups:
            raise RuntimeError(
                f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight "
                f"of size [{list(weight.shape)}] instead"
            )
        if shape[1] != weight.shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {list(weight.shape)}, expected input{shape} to have "
                f"{weight.shape[0]} channels, but got {shape[1]} channels instead"
            )
    elif shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{shape} to have "
            f"{weight.shape[1] * groups} channels, but got {shape[1]} channels instead"
        )


def _same_padding(weight: Tensor, dilation: Sequence[int]) -> list[int]:
    """``F.pad`` amounts (last dim first) giving 'same' output sizes; an odd total puts the extra one after."""
    amounts: list[int] = []
    for d, k in zip(reversed(dilation), reversed(weight.shape[2:])):
        total = d * (k - 1)
        amounts += [total // 2, total - total // 2]
    return amounts


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """A 1-d convolution in time-batch-channel layout: ``input`` ``(T, B, C_in)``, ``weight``
    ``(kernel_width, C_in, C_out)``, ``bias`` ``(C_out,)``, ``pad`` zeros at both ends of time."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int] = 1,
    padding: int | tuple[int] | str = 0,
    dilation: int | tuple[int] = 1,
    groups: int = 1,
) -> Tensor:
    """1-d cross-correlation: ``conv2d`` over inputs and kernels given a unit height."""
    _check_conv_input("conv1d", input, weight, 1, groups)
    stride, dilation = _ntuple(stride, 1, "stride"), _ntuple(dilation, 1, "dilation")
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and stride != (1,):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        padding2: tuple[int, int] | str = padding
    else:
        padding2 = (0, _ntuple(padding, 1, "padding")[0])
        length = input.shape[-1] + 2 * padding2[1]
        if length < dilation[0] * (weight.shape[2] - 1) + 1:
            raise RuntimeError(
                f"Calculated padded input size per channel: ({length}). Kernel size: "
                f"({dilation[0] * (weight.shape[2] - 1) + 1}). Kernel size can't be greater than actual input size"
            )
    with warnings.catch_warnings():
        if padding == "same" and dilation[0] * (weight.shape[2] - 1) % 2:
            warnings.warn(
                "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
                "copy of the input be created",
                stacklevel=2,
            )
            warnings.simplefilter("ignore")
        out = conv2d(
            input.unsqueeze(-2),
            weight.unsqueeze(-2),
            bias,
            (1, stride[0]),
            padding2,
            (1, dilation[0]),
            groups,
        )
    return out.squeeze(-2)


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int, int] = 1,
    padding: int | tuple[int, int, int] | str = 0,
    dilation: int | tuple[int, int, int] = 1,
    groups: int = 1,
) -> Tensor:
    """3-d cross-correlation: for each depth offset of the kernel, one ``conv2d`` of every output
    depth's input slice (batched together) with that kernel plane, summed over the offsets."""
    _check_conv_input("conv3d", input, weight, 3, groups)
    if input.dim() == 4:
        return conv3d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    stride, dilation = _ntuple(stride, 3, "stride"), _ntuple(dilation, 3, "dilation")
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and stride != (1, 1, 1):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        if padding == "same":
            amounts = _same_padding(weight, dilation)
            if any(a != b for a, b in zip(amounts[::2], amounts[1::2])):
                warnings.warn(
                    "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
                    "copy of the input be created",
                    stacklevel=2,
                )
            input = pad(input, amounts)
        padding = 0
    padding = _ntuple(padding, 3, "padding")
    padded = [s + 2 * p for s, p in zip(input.shape[2:], padding)]
    spans = [d * (k - 1) + 1 for d, k in zip(dilation, weight.shape[2:])]
    if any(p < k for p, k in zip(padded, spans)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
            f"({' x '.join(map(str, spans))}). Kernel size can't be greater than actual input size"
        )
    if padding[0]:
        input = pad(input, [0, 0, 0, 0, padding[0], padding[0]])
    n, c, depth, h, w = input.shape
    out_depth = (depth - spans[0]) // stride[0] + 1
    total = None
    for i in range(weight.shape[2]):
        start = i * dilation[0]
        planes = input[:, :, start : start + (out_depth - 1) * stride[0] + 1 : stride[0]]
        planes = planes.movedim(2, 1).reshape((n * out_depth, c, h, w))
        part = _C._conv2d(planes, weight[:, :, i], None, stride[1:], padding[1:], dilation[1:], groups)
        total = part if total is None else total + part
    assert total is not None
    out = total.reshape((n, out_depth, *total.shape[1:])).movedim(1, 2)
    if bias is not None:
        out = out + bias.reshape((1, -1, 1, 1, 1))
    return out


def _conv_transpose(
    name: str,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride,
    padding,
    output_padding,
    groups: int,
    dilation,
    spatial: int,
) -> Tensor:
    _check_conv_input(name, input, weight, spatial, groups, transposed=True)
    if input.dim() == spatial + 1:
        return _conv_transpose(
            name, input.unsqueeze(0), weight, bias, stride, padding, output_padding, groups, dilation, spatial
        ).squeeze(0)
    stride, padding = _ntuple(stride, spatial, "stride"), _ntuple(padding, spatial, "padding")
    output_padding = _ntuple(output_padding, spatial, "output_padding")
    dilation = _ntuple(dilation, spatial, "dilation")
    if spatial == 1:
        # (the core checks the 2-d form, whose message would name a height as well)
        if output_padding[0] >= stride[0] and output_padding[0] >= dilation[0]:
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, but got "
                f"output_padding_width: {output_padding[0]} stride_width: {stride[0]} dilation_width: {dilation[0]}"
            )
        out = _conv_transpose(
            "conv_transpose2d",
            input.unsqueeze(-2),
            weight.unsqueeze(-2),
            bias,
            (1, stride[0]),
            (0, padding[0]),
            (0, output_padding[0]),
            groups,
            (1, dilation[0]),
            2,
        )
        return out.squeeze(-2)
    if spatial == 3:
        return _conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return _C._conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def _conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    output_padding: tuple[int, ...],
    groups: int,
    dilation: tuple[int, ...],
) -> Tensor:
    """For each depth offset of the kernel, one ``conv_transpose2d`` of every input depth slice
    (batched together); its planes land ``stride`` apart in the output depth, shifted by the offset."""
    if any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
        parts = [
            f"{label}_{axis}: {v}"
            for label, values in (
                ("output_padding", output_padding),
                ("stride", stride),
                ("dilation", dilation),
            )
            for axis, v in zip(("depth", "height", "width"), values)
        ]
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got " + " ".join(parts)
        )
    out_channels = weight.shape[1] * groups
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
            f"{out_channels} elements, but got bias of size {list(bias.shape)} instead"
        )
    n, c, depth, h, w = input.shape
    out_sizes = [
        (size - 1) * s - 2 * p + d * (k - 1) + o + 1
        for size, s, p, d, k, o in zip(
            input.shape[2:], stride, padding, dilation, weight.shape[2:], output_padding
        )
    ]
    if min(out_sizes) < 1:
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, input.shape[2:]))}). Calculated output size "
            f"per channel: ({' x '.join(map(str, out_sizes))}). Output size is too small"
        )
    planes = input.movedim(2, 1).reshape((n * depth, c, h, w))
    total = None
    for j in range(weight.shape[2]):
        shift = j * dilation[0] - padding[0]  # output depth of input slice i: i * stride + shift
        first = -(-max(0, -shift) // stride[0])
        last = min(depth - 1, (out_sizes[0] - 1 - shift) // stride[0])
        if last < first:
            continue
        part = _C._conv_transpose2d(
            planes, weight[:, :, j], None, stride[1:], padding[1:], output_padding[1:], groups, dilation[1:]
        )
        part = part.reshape((n, depth, *part.shape[1:]))[:, first : last + 1]
        if stride[0] > 1:  # stride - 1 zero planes after each slice
            gaps = ferrograd.zeros((*part.shape[:2], stride[0] - 1, *part.shape[2:]), dtype=part.dtype)
            part = ferrograd.cat([part.unsqueeze(2), gaps], 2).reshape((n, -1, *part.shape[2:]))
            part = part[:, : (last - first) * stride[0] + 1]
        before = first * stride[0] + shift
        part = pad(part, [0, 0, 0, 0, 0, 0, before, out_sizes[0] - before - part.shape[1]])
        total = part if total is None else total + part
    if total is None:
        total = ferrograd.zeros((n, out_sizes[0], out_channels, *out_sizes[1:]), dtype=input.dtype)
    out = total.movedim(1, 2)
    if bias is not None:
        out = out + bias.reshape((1, -1, 1, 1, 1))
    return out


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int] = 1,
    padding: int | tuple[int] = 0,
    output_padding: int | tuple[int] = 0,
    groups: int = 1,
    dilation: int | tuple[int] = 1,
) -> Tensor:
    """The gradient of ``conv1d`` with respect to its input (a "deconvolution"); ``weight`` is
    (in_channels, out_channels / groups, kernel)."""
    return _conv_transpose(
        "conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups, dilation, 1
    )


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    output_padding: int | tuple[int, int] = 0,
    groups: int = 1,
    dilation: int | tuple[int, int] = 1,
) -> Tensor:
    """The gradient of ``conv2d`` with respect to its input (a "deconvolution"); ``weight`` is
    (in_channels, out_channels / groups, kh, kw). One matrix product per group, whose blocks ``fold`` adds."""
    return _conv_transpose(
        "conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups, dilation, 2
    )


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int, int] = 1,
    padding: int | tuple[int, int, int] = 0,
    output_padding: int | tuple[int, int, int] = 0,
    groups: int = 1,
    dilation: int | tuple[int, int, int] = 1,
) -> Tensor:
    """The gradient of ``conv3d`` with respect to its input (a "deconvolution"); ``weight`` is
    (in_channels, out_channels / groups, kd, kh, kw)."""
    return _conv_transpose(
        "conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups, dilation, 3
    )


def _check_pool_windows(kernel, strides, pads, dilations=None) -> None:
    """PyTorch's checks of a pooling window, one spatial dim after another (H before W)."""
    for k, s, p, d in zip(kernel, strides, pads, dilations or (1,) * len(kernel)):
        if s == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} and "
                f"dilation={d}"
            )


def _pool_output_size(size: int, kernel: int, pad_: int, stride: int, dilation: int, ceil_mode: bool) -> int:
    span = dilation * (kernel - 1) + 1
    out = (size + 2 * pad_ - span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad_:
        out -= 1  # the last window would start in the padding after the input
    return out


def max_pool1d(
    input: Tensor,
    kernel_size: int | tuple[int],
    stride: int | tuple[int] | None = None,
    padding: int | tuple[int] = 0,
    dilation: int | tuple[int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """Window maxima over the last dim: ``max_pool2d`` of a unit-height input."""
    if input.dim() not in (2, 3):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:"
            f"{list(input.shape)}"
        )
    kernel = _ntuple(kernel_size, 1, "kernel_size")[0]
    strides = (
        kernel
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else _ntuple(stride, 1, "stride")[0]
    )
    pad_, dilation_ = _ntuple(padding, 1, "padding")[0], _ntuple(dilation, 1, "dilation")[0]
    for bad, message in [
        (kernel <= 0, f"kernel_size must be greater than zero, but got {kernel}"),
        (strides <= 0, f"stride must be greater than zero, but got {strides}"),
        (pad_ < 0, f"padding must be non-negative, but got {pad_}"),
        (
            2 * pad_ > kernel,
            f"padding should be at most half of kernel size, but got padding={pad_} and kernel_size={kernel}",
        ),
        (dilation_ <= 0, f"dilation must be greater than zero, but got {dilation_}"),
    ]:
        if bad:
            raise RuntimeError(f"max_pool1d() {message}")
    result = max_pool2d(
        input.unsqueeze(-2),
        (1, kernel),
        (1, strides),
        (0, pad_),
        (1, dilation_),
        ceil_mode,
        return_indices,
    )
    if return_indices:
        return result[0].squeeze(-2), result[1].squeeze(-2)
    return result.squeeze(-2)


def avg_pool1d(
    input: Tensor,
    kernel_size: int | tuple[int],
    stride: int | tuple[int] | None = None,
    padding: int | tuple[int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """Window means over the last dim: ``avg_pool2d`` of a unit-height input."""
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 'self' "
            "(while checking arguments for avg_pool1d)"
        )
    kernel = _ntuple(kernel_size, 1, "kernel_size")[0]
    strides = (
        kernel
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else _ntuple(stride, 1, "stride")[0]
    )
    out = avg_pool2d(
        input.unsqueeze(-2),
        (1, kernel),
        (1, strides),
        (0, _ntuple(padding, 1, "padding")[0]),
        ceil_mode,
        count_include_pad,
    )
    return out.squeeze(-2)


def _check_adaptive_1d(name: str, input: Tensor, output_size) -> int:
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 'self' "
            f"(while checking arguments for {name})"
        )
    if isinstance(output_size, int):
        return output_size
    sizes = list(output_size)
    if len(sizes) != 1:
        raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got {len(sizes)})")
    return int(sizes[0])


def adaptive_avg_pool1d(input: Tensor, output_size: int | tuple[int]) -> Tensor:
    """Means over the bins ``[floor(i L / out), ceil((i + 1) L / out))`` of the last dim."""
    size = _check_adaptive_1d("adaptive_avg_pool1d", input, output_size)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


def _adaptive_bins(size: int, count: int) -> list[tuple[int, int]]:
    return [((i * size) // count, -((-(i + 1) * size) // count)) for i in range(count)]


def adaptive_max_pool2d(
    input: Tensor, output_size: int | tuple[int | None, int | None], return_indices: bool = False
):
    """Maxima over the bins ``[floor(i H / oh), ceil((i + 1) H / oh))`` (and likewise for
    columns); the gradient goes to each bin's (first) maximum."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    if input.dim() == 3:
        result = adaptive_max_pool2d(input.unsqueeze(0), output_size, return_indices)
        return (result[0].squeeze(0), result[1].squeeze(0)) if return_indices else result.squeeze(0)
    h, w = input.shape[-2], input.shape[-1]
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    oh, ow = (h if size[0] is None else size[0]), (w if size[1] is None else size[1])
    if h % oh == 0 and w % ow == 0:
        return max_pool2d(input, (h // oh, w // ow), return_indices=return_indices)
    values, indices = [], []
    for r0, r1 in _adaptive_bins(h, oh):
        for c0, c1 in _adaptive_bins(w, ow):
            best, where = input[..., r0:r1, c0:c1].reshape((*input.shape[:2], -1)).max(-1)
            values.append(best)
            indices.append((where // (c1 - c0) + r0) * w + where % (c1 - c0) + c0)
    out = ferrograd.stack(values, -1).reshape((*input.shape[:2], oh, ow))
    if return_indices:
        return out, ferrograd.stack(indices, -1).reshape((*input.shape[:2], oh, ow))
    return out


def adaptive_max_pool1d(input: Tensor, output_size: int | tuple[int], return_indices: bool = False):
    """Maxima over the bins ``[floor(i L / out), ceil((i + 1) L / out))`` of the last dim."""
    size = _check_adaptive_1d("adaptive_max_pool1d", input, output_size)
    result = adaptive_max_pool2d(input.unsqueeze(-2), (1, size), return_indices)
    if return_indices:
        return result[0].squeeze(-2), result[1].squeeze(-2)
    return result.squeeze(-2)


def lp_pool2d(
    input: Tensor,
    norm_type: float,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """The ``norm_type``-norm of each window: ``(sum x ** p) ** (1 / p)``."""
    return _lp_pool(avg_pool2d, 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool1d(
    input: Tensor,
    norm_type: float,
    kernel_size: int | tuple[int],
    stride: int | tuple[int] | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """The ``norm_type``-norm of each window over the last dim."""
    return _lp_pool(avg_pool1d, 1, input, norm_type, kernel_size, stride, ceil_mode)


def _lp_pool(
    avg_pool, dims: int, input: Tensor, norm_type: float, kernel_size, stride, ceil_mode: bool
) -> Tensor:
    """The ``norm_type``-norm of each window: the window mean of ``x ** p`` times the window size
    (negative means clamped to zero), to the power ``1 / p``."""
    count = math.prod(_ntuple(kernel_size, dims, "kernel_size"))
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(count).pow(1.0 / norm_type)


def _unpool_size(input: Tensor, kernel_size, stride, padding, output_size, dims: int) -> list[int]:
    """The spatial output size of a ``dims``-d max unpooling: ``output_size`` (spatial, or with batch
    and channels) checked against the default ``(in - 1) * stride + kernel - 2 * padding``."""
    kernel = _ntuple(kernel_size, dims, "kernel_size")
    strides = kernel if stride is None else _ntuple(stride, dims, "stride")
    pads = _ntuple(padding, dims, "padding")
    spatial = input.shape[input.dim() - dims :]
    default = [(n - 1) * s + k - 2 * p for n, s, k, p in zip(spatial, strides, kernel, pads)]
    if output_size is None:
        return default
    size = [int(v) for v in output_size]
    if len(size) == dims + 2:
        size = size[2:]
    if len(size) != dims:
        raise ValueError(
            f"output_size should be a sequence containing {dims} or {dims + 2} elements, but it has a length "
            f"of '{len(size)}'"
        )
    for d in range(dims):
        low, high = default[d] - strides[d], default[d] + strides[d]
        if not low < size[d] < high:
            raise ValueError(
                f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})'
            )
    return size


def _max_unpool(input: Tensor, indices: Tensor, size: list[int]) -> Tensor:
    """Puts each value of ``input`` at the flat position ``indices`` names within its output volume
    of ``size``; every other position is zero."""
    dims = len(size)
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Input to max_unpooling{dims}d should be a {dims + 1}d or {dims + 2}d Tensor, but got a tensor "
            f"with {input.dim()} dimensions."
        )
    if indices.dtype != ferrograd.int64:
        raise RuntimeError("elements in indices should be type int64")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) but got "
            f"indices tensor with shape: {list(indices.shape)}"
        )
    batch = input.shape[:-dims]
    planes = math.prod(batch)
    volume = math.prod(size)
    with ferrograd.no_grad():
        local = indices.reshape((planes, -1))
        bad = ((local < 0) | (local >= volume)).reshape(-1)
        if bool(bad.any()):
            first = int(local.reshape(-1)[bad.nonzero()[0, 0]])
            raise RuntimeError(
                f"Found an invalid max index: {first} (output volumes are of size {'x'.join(map(str, size))}"
            )
        flat = (local + (ferrograd.arange(planes) * volume).reshape((planes, 1))).reshape(-1)
    out = ferrograd.zeros(planes * volume, dtype=input.dtype).index_put((flat,), input.reshape(-1))
    return out.reshape((*batch, *size))


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: int | tuple[int],
    stride: int | tuple[int] | None = None,
    padding: int | tuple[int] = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """Puts each value back at the position ``indices`` (as from ``max_pool1d(return_indices=True)``)
    names within its channel; every other position is zero."""
    size = _unpool_size(input, kernel_size, stride, padding, output_size, 1)
    return _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), [*size, 1]).squeeze(-1)


def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """Puts each value back at the position ``indices`` (as from ``max_pool2d(return_indices=True)``)
    names within its channel; every other position is zero."""
    return _max_unpool(input, indices, _unpool_size(input, kernel_size, stride, padding, output_size, 2))


def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    padding: int | tuple[int, int, int] = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """Puts each value back at the position ``indices`` (as from ``max_pool3d(return_indices=True)``)
    names within its channel; every other position is zero."""
    return _max_unpool(input, indices, _unpool_size(input, kernel_size, stride, padding, output_size, 3))


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalizes each channel (dim 1) over the batch and any spatial dims; in training the
    running statistics, when given, move towards the batch's by ``momentum``."""
    if momentum is None:
        raise TypeError("batch_norm(): argument 'momentum' (position 7) must be float, not NoneType")
    if training and math.prod((input.shape[0], *input.shape[2:])) == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {input.shape}"
        )
    return _C._batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


# ---- more activations ------------------------------------------------------------------


def _activate(input: Tensor, fn, inplace: bool) -> Tensor:
    """``fn(input)``, or written over ``input`` when ``inplace`` (computed from a copy, so the
    gradient reads the values the op saw)."""
    return _in_place(input, fn(input.clone())) if inplace else fn(input)


def _thresholded(x: Tensor, threshold: float, value: float) -> Tensor:
    return ferrograd.where(x > threshold, x, ferrograd.full_like(x, value))


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``input`` where it is greater than ``threshold``, else ``value``."""
    return _activate(input, lambda x: _thresholded(x, threshold, value), inplace)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _activate(input, lambda x: _thresholded(x, threshold, value), True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(input, alpha)`` with the self-normalising constants."""
    return _activate(input, lambda x: _C.elu(x, _SELU_ALPHA) * _SELU_SCALE, inplace)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")

    def fn(x: Tensor) -> Tensor:
        # The exponential only ever sees the non-positive part, so it cannot overflow for alpha > 0.
        return x.relu() + ((x.clamp(max=0.0) / alpha).exp() - 1) * alpha

    return _activate(input, fn, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x tanh(softplus(x))``."""
    return _activate(input, lambda x: x * _C.softplus(x, 1.0, 20.0).tanh(), inplace)


def softsign(input: Tensor) -> Tensor:
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    return input - input.tanh()


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``; the gradient is 1/6 strictly inside (-3, 3) and 0 elsewhere."""

    def fn(x: Tensor) -> Tensor:
        inside = (x > -3) & (x < 3)
        return ferrograd.where(inside, x / 6 + 0.5, (x >= 3).to(x.dtype))

    return _activate(input, fn, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x relu6(x + 3) / 6``: 0 up to -3, ``x`` from 3, ``x (x + 3) / 6`` between (the
    gradient at -3 and 3 is that of the outer pieces)."""

    def fn(x: Tensor) -> Tensor:
        inner = ferrograd.where(x > -3, x * (x + 3) / 6, ferrograd.zeros_like(x))
        return ferrograd.where(x >= 3, x, inner)

    return _activate(input, fn, inplace)


def _finfo_max(dtype) -> tuple[str, float]:
    if dtype == ferrograd.float64:
        return "Double", 1.7976931348623157e308
    return "Float", 3.4028234663852886e38


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between."""
    if lambd < 0:
        name, top = _finfo_max(input.dtype)
        raise RuntimeError(
            f"lambda must be in range [0, {top:g}] for input dtype {name}, but found {lambd:g}"
        )
    zero = ferrograd.zeros_like(input)
    return ferrograd.where(input > lambd, input - lambd, ferrograd.where(input < -lambd, input + lambd, zero))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0."""
    return ferrograd.where((input > lambd) | (input < -lambd), input, ferrograd.zeros_like(input))


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, else ``weight * x``; ``weight`` holds one slope or one per channel (dim 1)."""
    if weight.dim() > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}"
        )
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.numel() != 1:
        if weight.numel() != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                f"{weight.numel()} and channel size = {channels}."
            )
        slope = weight.reshape((channels,) + (1,) * (input.dim() - 2))
    else:
        slope = weight.reshape(())
    return ferrograd.where(input > 0, input, slope * input)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return (-(input if dtype is None else input.to(dtype))).softmax(dim)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The first half of ``input`` along ``dim`` gated by the sigmoid of the second."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = dim + input.dim() if dim < 0 else dim
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {size}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


# ---- distances -------------------------------------------------------------------------


def _vector_norm(x: Tensor, p: float, dim: int, keepdim: bool) -> Tensor:
    """The ``p``-norm along ``dim``: 2 by ``Tensor.norm``, the others composed."""
    if p == 2:
        return x.norm(2, dim, keepdim=keepdim)
    if p == math.inf:
        return x.abs().amax(dim, keepdim=keepdim)
    if p == -math.inf:
        return x.abs().amin(dim, keepdim=keepdim)
    if p == 0:
        # the count of nonzeros, linked to x by an empty slice of it so that, as in PyTorch, the
        # result requires grad (a zero one)
        return (x != 0).to(x.dtype).sum(dim, keepdim=keepdim) + x.narrow(dim, 0, 0).sum(dim, keepdim=keepdim)
    if p == 1:
        return x.abs().sum(dim, keepdim=keepdim)
    return x.abs().pow(p).sum(dim, keepdim=keepdim).pow(1.0 / p)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps))`` along ``dim``, the inputs broadcast
    together; each norm is floored at ``eps`` (the floor itself passes the gradient through)."""
    shape = tuple(_broadcast_pair(x1.shape, x2.shape))
    x1, x2 = x1.expand(shape), x2.expand(shape)

    def unit(x: Tensor) -> Tensor:
        norm = x.norm(2, dim, keepdim=True).clone()
        with ferrograd.no_grad():
            norm.clamp_(min=eps)
        return x / norm

    return (unit(x1) * unit(x2)).sum(dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dim."""
    diff = x1 - x2 + eps
    if diff.dim() == 0:
        return _vector_norm(diff.reshape((1,)), p, 0, keepdim).reshape(())
    return _vector_norm(diff, p, -1, keepdim)


# ---- more losses -----------------------------------------------------------------------


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -target (input1 - input2) + margin)``."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0.0), reduction)


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    zeros = ferrograd.zeros_like(input)
    from_margin = ferrograd.where(target != 1, (margin - input).clamp(min=0.0), zeros)
    from_input = ferrograd.where(target != -1, input, zeros)
    return _reduce(from_margin + from_input, reduction)


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``log(1 + exp(-target input))``."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    _check_no_grad_needed(target, "target", "soft_margin_loss")
    return _reduce((-input * target).exp().log1p(), reduction)


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(input1, input2)`` where ``target`` is 1, ``max(0, cos - margin)`` where it is -1;
    the cosine along the last dim, each squared norm raised by 1e-12."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    dim = target.dim()
    if dim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != dim + 1 or input2.dim() != dim + 1:
        raise RuntimeError(
            f"{dim}D target tensor expects {dim + 1}D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + 1e-12
    mag2 = (input2 * input2).sum(dim) + 1e-12
    cos = prod / (mag1 * mag2).sqrt()
    zeros = ferrograd.zeros_like(cos)
    pos = ferrograd.where(target == 1, 1 - cos, zeros)
    neg = ferrograd.where(target == -1, (cos - margin).clamp(min=0.0), zeros)
    return _reduce(pos + neg, reduction)


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with ``d`` the
    ``pairwise_distance``; ``swap`` uses the smaller of ``d(anchor, negative)`` and
    ``d(positive, negative)``."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _reduce(_triplet_margin(anchor, positive, negative, margin, p, eps, swap), reduction)


def _triplet_margin(
    anchor: Tensor, positive: Tensor, negative: Tensor, margin: float, p: float, eps: float, swap: bool
) -> Tensor:
    """The unreduced triplet margin loss (no check on ``margin``, as ``ferrograd.triplet_margin_loss``)."""
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
            f"but got: anchor {anchor.dim()}D, positive {positive.dim()}D, and negative {negative.dim()}D inputs"
        )
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return (margin + d_pos - d_neg).clamp(min=0.0)


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``exp(input) - target input`` for a log-rate input, else ``input - target log(input + eps)``;
    ``full`` adds Stirling's approximation of ``log(target!)`` where ``target > 1``."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (2 * math.pi * target).log() * 0.5
        loss = loss + stirling.masked_fill(target <= 1, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """``0.5 (log var + (input - target)^2 / var)`` with ``var`` floored at ``eps`` (the floor
    passes the gradient through); ``var`` may be a float, the input's shape, or broadcastable to
    it in one dim; ``full`` adds ``0.5 log(2 pi)``."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        v = ferrograd.full_like(input, float(var))
    else:
        v = var
        if bool((v < 0).any()):
            raise ValueError("var has negative entry/entries")
    in_shape, var_shape = tuple(input.shape), tuple(v.shape)
    if var_shape != in_shape:
        if in_shape[:-1] == var_shape:
            v = v.unsqueeze(-1)
        elif not (
            len(in_shape) == len(var_shape) and sum(v for i, v in zip(in_shape, var_shape) if i != v) == 1
        ):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    v = v.clone()
    with ferrograd.no_grad():
        v.clamp_(min=eps)
    diff = input - target
    loss = (v.log() + diff * diff / v) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The per-class binary logistic loss averaged over the classes (the last dim)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


# ---- rearranging -----------------------------------------------------------------------


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C r^2, H, W)`` to ``(*, C, H r, W r)``."""
    r = upscale_factor
    if input.dim() < 3:
        raise RuntimeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got input with {input.dim()} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
            f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    n = len(lead)
    x = input.reshape((*lead, c // (r * r), r, r, h, w))
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape((*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H r, W r)`` to ``(*, C r^2, H, W)``, the inverse of ``pixel_shuffle``."""
    r = downscale_factor
    if input.dim() < 3:
        raise RuntimeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with {input.dim()} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    for name, size, at in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but input.size({at})={size} "
                f"is not divisible by {r}"
            )
    n = len(lead)
    x = input.reshape((*lead, c, h // r, r, w // r, r))
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape((*lead, c * r * r, h // r, w // r))


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Channels (dim 1) in ``groups`` groups, interleaved: ``(N, g, C / g, *)`` transposed to ``(N, C / g, g, *)``."""
    if input.dim() <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    x = input.reshape((n, groups, c // groups, *rest)).transpose(1, 2)
    return x.reshape((n, c, *rest))


def _unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """``input`` with ``dim`` split into ``sizes`` (one of which may be -1)."""
    dim = dim + input.dim() if dim < 0 else dim
    shape = list(input.shape)
    total = shape[dim]
    sizes = list(sizes)
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten: only one dimension can be inferred")
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes:
        if known == 0 or total % known:
            raise RuntimeError(
                f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {dim} "
                f"({total}) in the input tensor"
            )
        sizes[sizes.index(-1)] = total // known
    elif known != total:
        raise RuntimeError(
            f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {dim} ({total}) in the input tensor"
        )
    return input.reshape(tuple(shape[:dim] + sizes + shape[dim + 1 :]))


# ---- more normalization ----------------------------------------------------------------

_FINFO_EPS = {ferrograd.float32: 1.1920928955078125e-07, ferrograd.float64: 2.220446049250313e-16}


def rms_norm(
    input: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """``input / sqrt(mean(input^2) + eps)`` over the trailing ``normalized_shape`` dims, times
    ``weight``; ``eps`` defaults to the machine epsilon of the input's dtype."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else [int(s) for s in normalized_shape]
    k = len(shape)
    if input.dim() < k or list(input.shape[input.dim() - k :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={shape}, expected input with shape [*{', '.join(map(str, shape))}], "
            f"but got input of size{list(input.shape)}"
        )
    if weight is not None and list(weight.shape) != shape:
        raise RuntimeError(
            f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{list(weight.shape)} and normalized_shape = {shape}"
        )
    if eps is None:
        eps = _FINFO_EPS.get(input.dtype, _FINFO_EPS[ferrograd.float32])
    dims = tuple(range(-k, 0))
    out = (
        input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
        if k
        else input * (input * input + eps).rsqrt()
    )
    return out if weight is None else out * weight


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalizes each channel of each sample over its spatial dims: ``batch_norm`` of the input
    seen as one sample with N * C channels. Running statistics, when given and ``use_input_stats``,
    move towards the batch's mean of the per-sample statistics."""
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    n, c = input.shape[0], input.shape[1]

    def repeated(t: Tensor | None) -> Tensor | None:
        return None if t is None else t.repeat(n)

    mean_rep, var_rep = repeated(running_mean), repeated(running_var)
    out = _C._batch_norm(
        input.reshape((1, n * c, *input.shape[2:])),
        mean_rep,
        var_rep,
        repeated(weight),
        repeated(bias),
        use_input_stats,
        momentum,
        eps,
    )
    if use_input_stats:
        with ferrograd.no_grad():
            for stat, rep in ((running_mean, mean_rep), (running_var, var_rep)):
                if stat is not None and rep is not None:
                    stat.copy_(rep.reshape((n, c)).mean(0))
    return out.reshape(tuple(input.shape))


# ---- attention ----------------------------------------------------------------------------


def _safe_softmax(scores: Tensor) -> Tensor:
    """Softmax over the last dim whose rows of only ``-inf`` give zeros (not NaN), as torch's
    attention kernels do; their gradient is zero."""
    with ferrograd.no_grad():
        dead = scores.amax(-1, keepdim=True) == float("-inf")
    if not bool(dead.any()):
        return scores.softmax(-1)
    weights = ferrograd.where(dead, ferrograd.zeros((), dtype=scores.dtype), scores).softmax(-1)
    return ferrograd.where(dead, ferrograd.zeros((), dtype=scores.dtype), weights)


def _attention_bias(mask: Tensor, dtype) -> Tensor:
    """A float additive mask: a boolean ``mask`` keeps True entries (0) and masks False ones (-inf)."""
    if mask.dtype == ferrograd.bool:
        return ferrograd.zeros(tuple(mask.shape), dtype=dtype).masked_fill(mask.logical_not(), float("-inf"))
    return mask


def _repeat_heads(t: Tensor, repeats: int) -> Tensor:
    """``t.repeat_interleave(repeats, dim=-3)`` from unsqueeze, expand and reshape."""
    if repeats == 1:
        return t
    shape = tuple(t.shape)
    expanded = t.unsqueeze(-3).expand(*shape[:-2], repeats, *shape[-2:])
    return expanded.reshape((*shape[:-3], shape[-3] * repeats, *shape[-2:]))


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(Q K^T * scale + bias) V over the last two dims, batch dims broadcast.

    A boolean ``attn_mask`` marks the positions that may be attended (True); a float one is
    added to the scores. ``is_causal`` masks every key after the query's own position (top-left
    aligned), combined with ``attn_mask`` when both are given. Rows with every key masked give
    zeros. ``enable_gqa`` lets key and value have fewer heads (dim -3) than the query."""
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must be at least 2-D")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(
            f"Expected query and key to have the same embedding size, got {query.shape[-1]} and {key.shape[-1]}"
        )
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            f"Expected key and value to have the same sequence length, got {key.shape[-2]} and {value.shape[-2]}"
        )
    L, S = query.shape[-2], key.shape[-2]
    scale_factor = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk != 0 or hq % hv != 0:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
        key, value = _repeat_heads(key, hq // hk), _repeat_heads(value, hq // hv)
    scores = query.matmul(key.transpose(-2, -1)) * scale_factor
    if is_causal:
        scores = scores + _attention_bias(ferrograd.ones((L, S), dtype=ferrograd.bool).tril(), scores.dtype)
    if attn_mask is not None:
        if isinstance(attn_mask, CausalBias):
            if is_causal:
                raise ValueError("CausalBias should not be used with causal=True")
            attn_mask = attn_mask._materialize()
        scores = scores + _attention_bias(attn_mask, scores.dtype)
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights.matmul(value)


def _canonical_mask(
    mask: Tensor | None, mask_name: str, other_type, other_name: str, target_type, check_other: bool = True
) -> Tensor | None:
    """A boolean mask as a float one (True -> -inf); float masks pass unchanged."""
    if mask is None:
        return None
    if mask.dtype != ferrograd.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both instead.",
            stacklevel=3,
        )
    if not mask.is_floating_point():
        mask = ferrograd.zeros(tuple(mask.shape), dtype=target_type).masked_fill(mask, float("-inf"))
    return mask


def _none_or_dtype(t: Tensor | None):
    if t is None:
        return None
    if isinstance(t, ferrograd.Tensor):
        return t.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or ferrograd.Tensor")


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but found "
                f"{key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                f"{attn_mask.dim()}-D tensor instead"
            )
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but found "
                f"{key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                    f"{attn_mask.dim()}-D tensor instead"
                )
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(
                        f"Expected `attn_mask` shape to be {expected} but got {tuple(attn_mask.shape)}"
                    )
        return False
    raise AssertionError(
        f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query tensor"
    )


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention on sequence-first inputs (L, N, E) or unbatched (L, E)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(
        key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask", query.dtype
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
            "`generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint alone selects the causal mask
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(
                f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's {tuple(value.shape[:2])}"
            )
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")

    # in-projection
    if not use_separate_proj_weight:
        w_q, w_k, w_v = in_proj_weight.chunk(3)
    else:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3)
    q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                    f"{(bsz * num_heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        k = ferrograd.cat([k, bias_k.repeat(1, bsz, 1)])
        v = ferrograd.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))

    q = q.reshape((tgt_len, bsz * num_heads, head_dim)).transpose(0, 1)
    k = k if static_k is None else static_k
    v = v if static_v is None else static_v
    if static_k is None:
        k = k.reshape((k.shape[0], bsz * num_heads, head_dim)).transpose(0, 1)
    if static_v is None:
        v = v.reshape((v.shape[0], bsz * num_heads, head_dim)).transpose(0, 1)

    if add_zero_attn:
        k = ferrograd.cat([k, ferrograd.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype)], 1)
        v = ferrograd.cat([v, ferrograd.zeros((bsz * num_heads, 1, head_dim), dtype=v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))

    src_len = k.shape[1]
    if key_padding_mask is not None:
        for dim, expected in enumerate((bsz, src_len)):
            if key_padding_mask.shape[dim] != expected:
                raise AssertionError(
                    f"Expected key_padded_mask.shape[{dim}] to be {expected}, but got {key_padding_mask.shape[dim]}"
                )
        key_padding_mask = (
            key_padding_mask.reshape((bsz, 1, 1, src_len))
            .expand(bsz, num_heads, 1, src_len)
            .reshape((bsz * num_heads, 1, src_len))
        )
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = (q * math.sqrt(1.0 / float(head_dim))).matmul(k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = scores.softmax(-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        attn_output = weights.matmul(v)
        attn_output = attn_output.transpose(0, 1).reshape((tgt_len * bsz, embed_dim))
        attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.reshape((tgt_len, bsz, attn_output.shape[1]))
        weights = weights.reshape((bsz, num_heads, tgt_len, src_len))
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            attn_output = attn_output.squeeze(1)
            weights = weights.squeeze(0)
        return attn_output, weights

    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape((bsz, num_heads, -1, src_len))
    q = q.reshape((bsz, num_heads, tgt_len, head_dim))
    k = k.reshape((bsz, num_heads, src_len, head_dim))
    v = v.reshape((bsz, num_heads, src_len, head_dim))
    attn_output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    attn_output = attn_output.permute(2, 0, 1, 3).reshape((bsz * tgt_len, embed_dim))
    attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = attn_output.reshape((tgt_len, bsz, attn_output.shape[1]))
    if not is_batched:
        attn_output = attn_output.squeeze(1)
    return attn_output, None


# ---- in-place activation aliases and randomized leaky ReLU -----------------------------


def relu_(input: Tensor) -> Tensor:
    """``relu`` written over ``input``."""
    return relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``elu`` written over ``input``."""
    return elu(input, alpha, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``leaky_relu`` written over ``input``."""
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``hardtanh`` written over ``input``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """``selu`` written over ``input``."""
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``celu`` written over ``input``."""
    return celu(input, alpha, inplace=True)


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomized leaky ReLU: non-positive values times a slope drawn from ``U(lower, upper)``
    per element in training, times ``(lower + upper) / 2`` otherwise."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)

    def fn(x: Tensor) -> Tensor:
        with ferrograd.no_grad():
            slope = ferrograd.empty_like(x).uniform_(lower, upper)
            slope = ferrograd.where(x > 0, ferrograd.ones_like(x), slope)
        return x * slope

    return _activate(input, fn, inplace)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """``rrelu`` written over ``input``."""
    return rrelu(input, lower, upper, training, inplace=True)


# ---- channel-wise and alpha dropout ----------------------------------------------------


_SELU_NEGATIVE_LIMIT = _SELU_ALPHA * _SELU_SCALE  # -selu(-inf): where alpha dropout sends dropped units


def _noise_dropout(
    input: Tensor, p: float, training: bool, inplace: bool, feature: bool, alpha: bool
) -> Tensor:
    """Dropout with a keep-mask drawn per element, or per (sample, channel) when ``feature``
    (dims 0 and 1 of an input of at least 2 dims); ``alpha`` keeps SELU's mean and variance by
    sending dropped units to ``-selu(-inf)`` and applying an affine correction."""
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0.0) if inplace else input * 0.0
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = (*input.shape[:2], *([1] * (input.dim() - 2))) if feature else tuple(input.shape)
    with ferrograd.no_grad():
        keep = (ferrograd.rand(shape, dtype=input.dtype) < 1 - p).to(input.dtype)
    if not alpha:
        scale = keep / (1 - p)
        return input.mul_(scale) if inplace else input * scale
    a = 1.0 / math.sqrt((_SELU_NEGATIVE_LIMIT**2 * p + 1) * (1 - p))
    shift = (keep - 1) * (_SELU_NEGATIVE_LIMIT * a) + _SELU_NEGATIVE_LIMIT * a * p
    if inplace:
        return input.mul_(keep * a).add_(shift)
    return input * (keep * a) + shift


def _dropout_no_batch(input: Tensor, batched: bool, p: float, training: bool, inplace: bool) -> Tensor:
    """Channel dropout of ``input``, given a batch dim of one first when it has none."""
    if batched:
        return _noise_dropout(input, p, training, inplace, True, False)
    out = _noise_dropout(input.unsqueeze(0), p, training, inplace, True, False)
    return input if inplace else out.squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of an ``(N, C, L)`` or ``(C, L)`` input with probability ``p``,
    scaling the rest by ``1 / (1 - p)``."""
    _check_dropout_p(p)
    dims = input.dim()
    if dims not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {dims}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs)."
        )
    return _dropout_no_batch(input, dims == 3, p, training, inplace)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of an ``(N, C, H, W)`` input with probability ``p``; a 3-D input is
    taken as ``(N, C, L)``, as PyTorch still does (with its warning)."""
    _check_dropout_p(p)
    dims = input.dim()
    if dims not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {dims}-D input to dropout2d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout2d "
            "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if dims == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _noise_dropout(input, p, training, inplace, True, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of an ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input with probability ``p``."""
    _check_dropout_p(p)
    dims = input.dim()
    if dims not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {dims}-D input to dropout3d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout3d "
            "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    return _dropout_no_batch(input, dims == 5, p, training, inplace)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: keeps the input's mean and variance (zero and one)."""
    _check_dropout_p(p)
    return _noise_dropout(input, p, training, inplace, False, True)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """``alpha_dropout`` with one mask entry per (sample, channel)."""
    _check_dropout_p(p)
    return _noise_dropout(input, p, training, inplace, True, True)


# ---- sampling grids --------------------------------------------------------------------


def _align_corners_default(align_corners: bool | None) -> bool:
    if align_corners is None:
        warnings.warn(
            "Default grid_sample and affine_grid behavior has changed "
            "to align_corners=False since 1.3.0. Please specify "
            "align_corners=True if the old behavior is desired. "
            "See the documentation of grid_sample for details.",
            stacklevel=3,
        )
        return False
    return align_corners


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """``coord`` folded back and forth into ``[twice_low / 2, twice_high / 2]`` (the bounds are
    given doubled so that half-pixel bounds stay integers)."""
    if twice_low == twice_high:
        return ferrograd.zeros_like(coord)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = (coord - low).abs()
    with ferrograd.no_grad():
        flips = (distance / span).floor()
        odd = flips.remainder(2) == 1
    extra = distance - flips * span
    return ferrograd.where(odd, span - extra + low, extra + low)


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    """A normalized ``[-1, 1]`` grid coordinate as a pixel position along a dim of ``size``."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _source_index(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """A normalized grid coordinate as a pixel position, reflected or clamped by ``padding_mode``."""
    return _padded_position(_unnormalize(coord, size, align_corners), size, padding_mode, align_corners)


def _padded_position(coord: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """A pixel position reflected into or clamped to the input by ``padding_mode`` ('zeros' leaves it)."""
    if padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
    if padding_mode != "zeros":
        coord = coord.clamp(0, size - 1)
    return coord


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Samples ``input`` (N, C, H, W) or (N, C, D, H, W) at the normalized positions of ``grid``
    (N, Ho, Wo, 2) or (N, Do, Ho, Wo, 3), whose last dim lists x (width) first. Bilinear and
    bicubic (4-d input only) sampling are differentiable in both ``input`` and ``grid``; nearest
    only in ``input`` (the grid's gradient is zero)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', "
            f"but got: '{padding_mode}'"
        )
    align_corners = _align_corners_default(align_corners)
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            f"grid_sampler(): expected grid and input to have same batch size, but got {sizes}"
        )
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got grid "
            f"with sizes {list(grid.shape)}"
        )
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError(
            f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got {sizes}"
        )
    if mode == "bicubic" and input.dim() != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    n, c, *spatial = input.shape
    out_spatial = list(grid.shape[1:-1])
    # positions per input dim (grid's last dim lists them from the last input dim backwards);
    # bicubic sampling pads each tap's position instead
    coords = [
        _unnormalize(grid[..., len(spatial) - 1 - d], size, align_corners)
        if mode == "bicubic"
        else _source_index(grid[..., len(spatial) - 1 - d], size, padding_mode, align_corners)
        for d, size in enumerate(spatial)
    ]
    flat = input.reshape((n, c, -1))
    points = math.prod(out_spatial)

    def gather(corner: list[Tensor]) -> Tensor:
        """``input`` at integer-valued positions ``corner``, zero outside it."""
        with ferrograd.no_grad():
            inside = ferrograd.ones_like(corner[0], dtype=ferrograd.bool)
            index = ferrograd.zeros_like(corner[0], dtype=ferrograd.int64)
            for pos, size in zip(corner, spatial):
                inside = inside & (pos >= 0) & (pos <= size - 1)
                index = index * size + pos.clamp(0, size - 1).to(ferrograd.int64)
            index = index.reshape((n, 1, points)).expand((n, c, points))
        values = flat.gather(2, index).reshape((n, c, *out_spatial))
        return values * inside.unsqueeze(1).to(values.dtype)

    if mode == "nearest":
        # (rounds halves to even, as PyTorch does); the grid gets a zero gradient, as in PyTorch
        out = gather([pos.detach().round() for pos in coords])
        if not grid.requires_grad:
            return out
        keep = ferrograd.ones((1,) * out.dim(), dtype=ferrograd.bool)
        return ferrograd.where(keep, out, grid[..., :1].movedim(-1, 1))
    lows = [pos.detach().floor() for pos in coords]
    if mode == "bicubic":
        taps = []  # per dim: the four tap positions and their cubic convolution coefficients
        for pos, low, size in zip(coords, lows, spatial):
            with ferrograd.no_grad():
                positions = [
                    _padded_position(low + k, size, padding_mode, align_corners) for k in (-1, 0, 1, 2)
                ]
            taps.append((positions, _cubic_coefficients(pos - low)))
        (rows, row_weights), (cols, col_weights) = taps
        out = None
        for row, row_weight in zip(rows, row_weights):
            line = None
            for col, col_weight in zip(cols, col_weights):
                term = gather([row, col]) * col_weight.unsqueeze(1)
                line = term if line is None else line + term
            term = line * row_weight.unsqueeze(1)
            out = term if out is None else out + term
        return out
    out = None
    for corner in itertools.product((0, 1), repeat=len(spatial)):
        weight = None
        for pos, low, upper in zip(coords, lows, corner):
            w = pos - low if upper else low + 1 - pos
            weight = w if weight is None else weight * w
        term = gather([low + upper for low, upper in zip(lows, corner)]) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out


def _cubic_near(x, a: float):
    """The cubic convolution kernel with parameter ``a`` where ``|x| <= 1`` (tensors or arrays)."""
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic_far(x, a: float):
    """The cubic convolution kernel with parameter ``a`` where ``1 < |x| < 2``."""
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def _cubic_coefficients(t: Tensor, a: float = -0.75) -> list[Tensor]:
    """The weights of the taps at -1, 0, 1 and 2 from a position ``t`` in [0, 1) past tap 0, by the
    cubic convolution kernel with parameter ``a``."""
    return [_cubic_far(t + 1, a), _cubic_near(t, a), _cubic_near(1 - t, a), _cubic_far(2 - t, a)]


def _base_coordinates(size: int, align_corners: bool, dtype) -> Tensor:
    """The normalized centres of ``size`` pixels along one dim."""
    if size <= 1:
        return ferrograd.zeros((size,), dtype=dtype)
    points = ferrograd.linspace(-1.0, 1.0, size, dtype=dtype)
    return points if align_corners else points * ((size - 1) / size)


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The ``grid_sample`` grid of an output of ``size`` (N, C, H, W) or (N, C, D, H, W) mapped by
    the affine matrices ``theta`` (N, 2, 3) or (N, 3, 4)."""
    align_corners = _align_corners_default(align_corners)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got {theta.shape}."
            )
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got {theta.shape}."
            )
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. "
            f"Got size {size}."
        )
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when align_corners=True. "
            "This is not an intended use case of affine_grid. See the documentation of affine_grid for details.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    # homogeneous coordinates (x, y[, z], 1) of every output pixel, x varying fastest
    axes = [_base_coordinates(s, align_corners, theta.dtype) for s in spatial]
    mesh = ferrograd.meshgrid(*axes, indexing="ij")
    base = ferrograd.stack([*reversed(mesh), ferrograd.ones_like(mesh[0])], -1).reshape(
        (1, -1, len(spatial) + 1)
    )
    grid = base.matmul(theta.transpose(1, 2))
    return grid.reshape((size[0], *spatial, len(spatial)))


# ---- more layers -----------------------------------------------------------------------


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y_o = x1^T W_o x2 + b_o`` over the last dims of ``input1`` and ``input2``, with ``weight``
    of shape (out, in1, in2)."""
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        for d, (a, b) in enumerate(zip(input1.shape[:-1], input2.shape[:-1])):
            if a != b:
                raise RuntimeError(
                    f"bilinear(): input batch dimensions do not match at dim {d}: got {a} and {b}"
                )
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}"
        )
    out_features, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but expected {in1}"
        )
    if input2.shape[-1] != in2:
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but expected {in2}"
        )
    if bias is not None and bias.shape[-1] != out_features:
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {bias.shape[-1]} but expected {out_features}"
        )
    # x1 W, for every output at once: (..., in1) @ (in1, out * in2)
    left = input1.matmul(weight.permute(1, 0, 2).reshape((in1, out_features * in2)))
    out = (left.reshape((*left.shape[:-1], out_features, in2)) * input2.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """A softmax of ``(logits + Gumbel noise) / tau``; with ``hard`` the one-hot of its argmax in
    the forward pass and the soft sample's gradient in the backward pass (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    with ferrograd.no_grad():
        gumbels = -ferrograd.empty_like(logits).exponential_().log()
    soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return soft
    with ferrograd.no_grad():
        index = soft.argmax(dim, keepdim=True)
        one_hot_ = ferrograd.zeros_like(soft).scatter(dim, index, 1.0)
    return one_hot_ - soft.detach() + soft


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm distances between every pair of rows ``i < j`` of a 2-D ``input``, in
    row-major order of the pairs."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    rows = input.shape[0]
    first, second = ferrograd.triu_indices(rows, rows, 1)
    diff = input[first] - input[second]
    if p == 2:
        # Tensor.norm's gradient at a zero difference is zero, as torch's pdist's is
        return diff.norm(2, -1)
    return _vector_norm(diff, p, -1, False)


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """``input / (k + alpha * mean of input^2 over size neighbouring channels) ** beta``; the
    window is zero-padded with ``size // 2`` channels before and ``(size - 1) // 2`` after."""
    dims = input.dim()
    if dims < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality                          input (got {dims} dimensions)"
        )
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    square = (input * input).movedim(1, -1)
    square = pad(square, [size // 2, (size - 1) // 2]).movedim(-1, 1)
    window = square.narrow(1, 0, channels)
    for offset in range(1, size):
        window = window + square.narrow(1, offset, channels)
    return input / (window * (alpha / size) + k).pow(beta)


def upsample(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated alias of ``interpolate``."""
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(
    input: Tensor, size: int | Sequence[int] | None = None, scale_factor: float | None = None
) -> Tensor:
    """Deprecated: ``interpolate`` with mode ``"nearest"``."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(
    input: Tensor,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
) -> Tensor:
    """Deprecated: ``interpolate`` with mode ``"bilinear"`` and ``align_corners=True``."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: int | tuple[int],
    stride: int | tuple[int] | None = None,
    padding: int | tuple[int] = 0,
    dilation: int | tuple[int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """``max_pool1d``'s maxima and their indices, whatever ``return_indices`` says."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    dilation: int | tuple[int, int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """``max_pool2d``'s maxima and their indices, whatever ``return_indices`` says."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(
    input: Tensor, output_size: int | tuple[int], return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool1d``'s maxima and their indices, whatever ``return_indices`` says."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(
    input: Tensor, output_size: int | tuple[int | None, int | None], return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool2d``'s maxima and their indices, whatever ``return_indices`` says."""
    return adaptive_max_pool2d(input, output_size, True)


# ---- margin losses over classes --------------------------------------------------------


def _class_scores(input: Tensor) -> Tensor:
    """``input`` as (samples, classes): a vector or scalar is one sample."""
    dims = input.dim()
    if not (dims == 0 or (dims == 1 and input.shape[0]) or (dims == 2 and input.shape[1])):
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {list(input.shape)}"
        )
    return input.reshape((1, -1)) if dims < 2 else input


def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-class hinge loss ``sum_{j != y} max(0, margin - x[y] + x[j]) ** p / classes``,
    each term scaled by ``weight[y]``."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_reduction(reduction)
    _check_no_grad_needed(weight, "weight", "multi_margin_loss")
    scores = _class_scores(input)
    samples, classes = scores.shape
    if target.dim() > 1 or target.numel() != samples:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples "
            f"(batch size). Expected target size [{samples}], but got {list(target.shape)}. "
            f"Input has shape {list(input.shape)}."
        )
    target_shape = target.shape
    target = target.reshape((samples, 1))
    if target.numel() and (int(target.min()) < 0 or int(target.max()) >= classes):
        raise RuntimeError("target out of range")
    hinge = (margin - scores.gather(1, target) + scores).clamp(min=0.0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight[target.reshape(-1)].unsqueeze(1)
    others = ferrograd.arange(classes).unsqueeze(0) != target
    loss = (hinge * others.to(hinge.dtype)).sum(1) / classes
    # a single sample's loss has its target's shape
    return _reduce(loss if input.dim() == 2 else loss.reshape(tuple(target_shape)), reduction)


def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-label hinge loss ``sum_{j in y, i not in y} max(0, 1 - (x[j] - x[i])) / classes``,
    with the labels ``y`` of a sample listed in ``target`` up to its first -1."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    _check_reduction(reduction)
    scores = _class_scores(input)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    samples, classes = scores.shape
    labels = target.reshape((samples, classes))
    with ferrograd.no_grad():
        # a label counts only before the first -1 of its row
        listed = (labels >= 0).to(ferrograd.int64).cumprod(1).to(ferrograd.bool)
        safe = ferrograd.where(listed, labels, ferrograd.zeros_like(labels))
        is_label = ((safe.unsqueeze(2) == ferrograd.arange(classes)) & listed.unsqueeze(2)).any(1)
        pairs = (listed.unsqueeze(2) & ~is_label.unsqueeze(1)).to(scores.dtype)
    hinge = (1 - scores.gather(1, safe).unsqueeze(2) + scores.unsqueeze(1)).clamp(min=0.0)
    loss = (hinge * pairs).sum((1, 2)) / classes
    return _reduce(loss if input.dim() == 2 else loss.reshape(()), reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function=None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with ``d`` the given
    ``distance_function`` (by default ``pairwise_distance``); ``swap`` uses the smaller of
    ``d(anchor, negative)`` and ``d(positive, negative)``."""
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
            f"but got: anchor {anchor.dim()}D, positive {positive.dim()}D, and negative {negative.dim()}D inputs"
        )
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp(min=0.0), reduction)


# ---- bags of embeddings ----------------------------------------------------------------


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sum, mean or maximum of the ``weight`` rows of each bag of indices: the rows of a 2-D
    ``input``, or the runs of a 1-D ``input`` starting at ``offsets``. Indices equal to
    ``padding_idx`` are left out; an empty bag gives zeros."""
    if weight.dtype == ferrograd.int64 and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, ...)` "
            "is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length "
                f"sequences. However, found offsets of type {type(offsets)}"
            )
        offsets = (
            ferrograd.arange(0, input.numel(), input.shape[1])
            if input.shape[1]
            else ferrograd.zeros(input.shape[0], dtype=ferrograd.int64)
        )
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding_bag: scale_grad_by_freq and sparse are not supported")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub."
        )
    length, rows = input.shape[0], weight.shape[0]
    if offsets.numel() and int(offsets[0]) != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
            f"However, got {int(offsets[0])}"
        )
    if offsets.numel() and int(offsets[-1]) > length:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {length} but got offsets[-1] of {int(offsets[-1])}"
        )
    for position, index in enumerate(input.tolist()):
        if not 0 <= index < rows:
            raise RuntimeError(
                f"Index {position} of input takes value {index} which is not in the valid range [0, {rows})"
            )
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    starts = offsets[:-1] if include_last_offset else offsets
    bags = starts.shape[0]
    with ferrograd.no_grad():
        # each position's bag: the last start at or before it; positions past a final offset drop out
        bag = (ferrograd.arange(length).unsqueeze(1) >= starts.unsqueeze(0)).sum(1) - 1
        keep = bag >= 0
        if include_last_offset and offsets.numel():
            keep = keep & (ferrograd.arange(length) < offsets[-1])
        if padding_idx is not None:
            keep = keep & (input != (padding_idx + rows if padding_idx < 0 else padding_idx))
        bag, index = bag[keep], input[keep]
    values = weight[index]
    if per_sample_weights is not None:
        values = values * per_sample_weights[keep].unsqueeze(1)
    empty = ferrograd.zeros((bags, weight.shape[1]), dtype=weight.dtype)
    if mode == "max":
        spread = bag.unsqueeze(1).expand(tuple(values.shape))
        return empty.scatter_reduce(0, spread, values, "amax", include_self=False)
    total = empty.index_add(0, bag, values)
    if mode == "sum":
        return total
    with ferrograd.no_grad():
        counts = ferrograd.zeros((bags,), dtype=weight.dtype).index_add(
            0, bag, ferrograd.ones_like(bag, dtype=weight.dtype)
        )
    return total / counts.clamp(min=1).unsqueeze(1)


# ---- 3-d pooling: a 2-d pool over (H, W), then a 1-d pool over the depth ---------------


def _pool3d_args(input: Tensor, kernel_size, stride, padding, dilation=1):
    if input.dim() not in (4, 5) or input.numel() == 0:
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    kernel = _ntuple(kernel_size, 3, "kernel_size")
    empty = stride is None or (not isinstance(stride, int) and len(stride) == 0)
    strides = kernel if empty else _ntuple(stride, 3, "stride")
    pads, dilations = _ntuple(padding, 3, "padding"), _ntuple(dilation, 3, "dilation")
    _check_pool_windows(kernel, strides, pads, dilations)
    return kernel, strides, pads, dilations


def _depth_windows(
    x: Tensor, kernel: int, stride: int, pad_: int, dilation: int, ceil_mode: bool, fill: float
):
    """The ``kernel`` depth (dim 2) slices of every window of ``x``, stacked in a last dim."""
    depth = x.shape[2]
    out = _pool_output_size(depth, kernel, pad_, stride, dilation, ceil_mode)
    after = max(0, (out - 1) * stride + dilation * (kernel - 1) + 1 - depth - pad_)
    padded = pad(x, [0, 0, 0, 0, pad_, after], value=fill)
    span = (out - 1) * stride + 1
    return ferrograd.stack(
        [padded[:, :, i * dilation : i * dilation + span : stride] for i in range(kernel)], -1
    ), out


def max_pool3d(
    input: Tensor,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    padding: int | tuple[int, int, int] = 0,
    dilation: int | tuple[int, int, int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """Window maxima over (D, H, W); with ``return_indices`` also each maximum's flat position
    within its input volume (``(d * H + h) * W + w``)."""
    kernel, strides, pads, dilations = _pool3d_args(input, kernel_size, stride, padding, dilation)
    if input.dim() == 4:
        result = max_pool3d(input.unsqueeze(0), kernel, strides, pads, dilations, ceil_mode, return_indices)
        return (result[0].squeeze(0), result[1].squeeze(0)) if return_indices else result.squeeze(0)
    n, c, d, h, w = input.shape
    planes, plane_index = max_pool2d(
        input.reshape((n, c * d, h, w)), kernel[1:], strides[1:], pads[1:], dilations[1:], ceil_mode, True
    )
    ho, wo = planes.shape[-2:]
    windows, _ = _depth_windows(
        planes.reshape((n, c, d, ho, wo)), kernel[0], strides[0], pads[0], dilations[0], ceil_mode, -math.inf
    )
    out, which = windows.max(-1)
    if not return_indices:
        return out
    with ferrograd.no_grad():
        index_windows, depth_out = _depth_windows(
            plane_index.reshape((n, c, d, ho, wo)), kernel[0], strides[0], pads[0], dilations[0], ceil_mode, 0
        )
        in_plane = index_windows.gather(-1, which.unsqueeze(-1)).squeeze(-1)
        starts = (ferrograd.arange(depth_out) * strides[0] - pads[0]).reshape((depth_out, 1, 1))
        indices = (which * dilations[0] + starts) * (h * w) + in_plane
    return out, indices


def max_pool3d_with_indices(
    input: Tensor,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    padding: int | tuple[int, int, int] = 0,
    dilation: int | tuple[int, int, int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """``max_pool3d``'s maxima and their indices, whatever ``return_indices`` says."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool3d(
    input: Tensor,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    padding: int | tuple[int, int, int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Window means over (D, H, W). A window's divisor is the product of its extents along each
    dim, so the mean is a 2-d mean of (H, W) followed by a mean over the depth."""
    kernel, strides, pads, _ = _pool3d_args(input, kernel_size, stride, padding)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if input.dim() == 4:
        return avg_pool3d(
            input.unsqueeze(0), kernel, strides, pads, ceil_mode, count_include_pad, divisor_override
        ).squeeze(0)
    n, c, d, h, w = input.shape
    # with divisor_override both stages sum (a divisor of 1), and the override divides at the end
    unit = None if divisor_override is None else 1
    planes = avg_pool2d(
        input.reshape((n, c * d, h, w)), kernel[1:], strides[1:], pads[1:], ceil_mode, count_include_pad, unit
    )
    ho, wo = planes.shape[-2:]
    columns = planes.reshape((n, c, d, ho * wo)).movedim(2, -1).reshape((n, c * ho * wo, 1, d))
    depth = avg_pool2d(
        columns, (1, kernel[0]), (1, strides[0]), (0, pads[0]), ceil_mode, count_include_pad, unit
    )
    out = depth.reshape((n, c, ho, wo, -1)).movedim(-1, 2)
    return out if divisor_override is None else out / divisor_override


def adaptive_avg_pool3d(
    input: Tensor, output_size: int | tuple[int | None, int | None, int | None]
) -> Tensor:
    """Means over the bins ``[floor(i D / od), ceil((i + 1) D / od))`` along each of (D, H, W)."""
    if input.dim() not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {list(input.shape)}")
    if input.dim() == 4:
        return adaptive_avg_pool3d(input.unsqueeze(0), output_size).squeeze(0)
    n, c, d, h, w = input.shape
    sizes = (output_size,) * 3 if isinstance(output_size, int) else tuple(output_size)
    od, oh, ow = (s if s is not None else full for s, full in zip(sizes, (d, h, w)))
    planes = adaptive_avg_pool2d(input.reshape((n, c * d, h, w)), (oh, ow))
    columns = planes.reshape((n, c, d, oh * ow)).movedim(2, -1).reshape((n, c * oh * ow, d))
    depth = adaptive_avg_pool1d(columns, od)
    return depth.reshape((n, c, oh, ow, od)).movedim(-1, 2)


def adaptive_max_pool3d(
    input: Tensor, output_size: int | tuple[int | None, int | None, int | None], return_indices: bool = False
):
    """Maxima over the bins ``[floor(i D / od), ceil((i + 1) D / od))`` along each of (D, H, W): an
    adaptive 2-d pool of every depth slice, then one over the depth; indices are flat positions
    ``(d * H + h) * W + w`` within each input volume."""
    if input.dim() not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: {list(input.shape)}")
    sizes = (output_size,) * 3 if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != 3:
        raise RuntimeError("adaptive_max_pool3d(): internal error: output_size.size() must be 3")
    if input.dim() == 4:
        result = adaptive_max_pool3d(input.unsqueeze(0), output_size, return_indices)
        return (result[0].squeeze(0), result[1].squeeze(0)) if return_indices else result.squeeze(0)
    n, c, d, h, w = input.shape
    od, oh, ow = (s if s is not None else full for s, full in zip(sizes, (d, h, w)))
    if 0 in (od, oh, ow):
        out = ferrograd.zeros((n, c, od, oh, ow), dtype=input.dtype) + input.sum() * 0
        return (out, ferrograd.zeros(out.shape, dtype=ferrograd.int64)) if return_indices else out
    planes, in_plane = adaptive_max_pool2d(input.reshape((n, c * d, h, w)), (oh, ow), True)

    def columns(t: Tensor) -> Tensor:  # (n, c * d, oh, ow) -> (n, c * oh * ow, d)
        return t.reshape((n, c, d, oh * ow)).movedim(2, -1).reshape((n, c * oh * ow, d))

    def volumes(t: Tensor) -> Tensor:  # (n, c * oh * ow, od) -> (n, c, od, oh, ow)
        return t.reshape((n, c, oh, ow, od)).movedim(-1, 2)

    out, depth = adaptive_max_pool1d(columns(planes), od, True)
    if not return_indices:
        return volumes(out)
    with ferrograd.no_grad():
        indices = depth * (h * w) + columns(in_plane).gather(-1, depth)
    return volumes(out), volumes(indices)


def adaptive_max_pool3d_with_indices(
    input: Tensor, output_size: int | tuple[int | None, int | None, int | None], return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool3d``'s maxima and their indices, whatever ``return_indices`` says."""
    return adaptive_max_pool3d(input, output_size, True)


def lp_pool3d(
    input: Tensor,
    norm_type: float,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """The ``norm_type``-norm of each (D, H, W) window: ``(sum x ** p) ** (1 / p)``."""
    return _lp_pool(avg_pool3d, 3, input, norm_type, kernel_size, stride, ceil_mode)


# ---- fractional max pooling --------------------------------------------------------------


def _fractional_starts(samples, size: int, out: int, kernel: int) -> np.ndarray:
    """Window starts along one dim for each random sample in [0, 1): pseudo-random steps of
    ``alpha = (size - kernel) / (out - 1)``, the last window ending at the input's end. Computed in
    the samples' floating dtype, whose rounding decides the integer parts."""
    starts = np.empty((*samples.shape, out), dtype=np.int64)
    if out == 0:
        return starts
    if out > 1:
        dtype = samples.dtype.type
        alpha = dtype(size - kernel) / dtype(out - 1)
        steps = np.arange(out - 1, dtype=samples.dtype)
        scaled = ((steps + samples[..., None]) * alpha).astype(np.int64)
        starts[..., :-1] = scaled - (samples * alpha).astype(np.int64)[..., None]
    starts[..., -1] = size - kernel
    return starts


def _fractional_max_pool(
    name: str,
    input: Tensor,
    kernel_size,
    output_size,
    output_ratio,
    return_indices: bool,
    samples: Tensor | None,
    dims: int,
):
    """Maxima over ``kernel_size`` windows at pseudo-random starts (one random sample per batch
    entry, channel and dim, as ``samples`` (N, C, dims) gives them) that make the output
    ``output_size`` or ``output_ratio`` times the input's spatial size."""
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if dims == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratios = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * dims
        output_size = [int(input.shape[d - dims] * ratios[d]) for d in range(dims)]
    if samples is None:
        batch = 1 if input.dim() == dims + 1 else input.size(0)
        samples = ferrograd.rand((batch, input.size(-dims - 1), dims), dtype=input.dtype)
    count = "Ints" if dims == 2 else "three Ints"
    kernel = (kernel_size,) * dims if isinstance(kernel_size, int) else tuple(kernel_size)
    if len(kernel) == 1:
        kernel *= dims
    if len(kernel) != dims:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or tuple of {count}")
    sizes = (output_size,) * dims if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) == 1:
        sizes *= dims
    if len(sizes) != dims:
        raise RuntimeError(f"{name}: output_size must either be a single Int or tuple of {count}")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"{name}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: {list(input.shape)}"
        )
    x = input if input.dim() == dims + 2 else input.unsqueeze(0)
    n, c, *spatial = x.shape
    if samples.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != dims:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {dims}; got {samples.shape[2]}.")
    # (the 3-d kernel also refuses a window reaching exactly to the end)
    prefix, slack = (f"{name}()", 1) if dims == 2 else (f"{name}_out()", 0)
    for label, k, o, size in zip(("time", "height", "width")[3 - dims :], kernel, sizes, spatial):
        if o + k - slack > size:
            raise RuntimeError(f"{prefix}: pool {label} {k} too large relative to input {label} {size}")
    # the samples list the dims from the last backwards in 2-d and from the first in 3-d
    values = samples[:n].detach().numpy()
    order = [1, 0] if dims == 2 else [0, 1, 2]
    starts = [_fractional_starts(values[..., order[d]], spatial[d], sizes[d], kernel[d]) for d in range(dims)]
    # flat input positions of every (output position, window offset), (n, c, *sizes, *kernel)
    index = np.zeros((n, c, *sizes, *kernel), dtype=np.int64)
    for d in range(dims):
        position = starts[d].reshape((n, c) + tuple(-1 if e == d else 1 for e in range(dims)) + (1,) * dims)
        offset = np.arange(kernel[d]).reshape(tuple(-1 if e == d else 1 for e in range(dims)))
        index = index * spatial[d] + position + offset
    index = ferrograd.tensor(index.reshape((n, c, math.prod(sizes), math.prod(kernel))))
    windows = x.reshape((n, c, math.prod(spatial))).gather(2, index.reshape((n, c, index[0, 0].numel())))
    windows = windows.reshape(tuple(index.shape))
    out, which = windows.max(-1)
    out = out.reshape((n, c, *sizes))
    if input.dim() == dims + 1:
        out = out.squeeze(0)
    if not return_indices:
        return out
    indices = index.gather(-1, which.unsqueeze(-1)).reshape(tuple(out.shape))
    return out, indices


def fractional_max_pool2d(
    input: Tensor,
    kernel_size: int | tuple[int, int],
    output_size: int | tuple[int, int] | None = None,
    output_ratio: float | tuple[float, float] | None = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
):
    """Fractional max pooling (Graham) over (H, W); ``_random_samples`` (N, C, 2), drawn from the
    default generator when not given, place the windows (its last dim lists width first)."""
    return _fractional_max_pool(
        "fractional_max_pool2d",
        input,
        kernel_size,
        output_size,
        output_ratio,
        return_indices,
        _random_samples,
        2,
    )


def fractional_max_pool2d_with_indices(
    input: Tensor,
    kernel_size: int | tuple[int, int],
    output_size: int | tuple[int, int] | None = None,
    output_ratio: float | tuple[float, float] | None = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """``fractional_max_pool2d``'s maxima and their indices, whatever ``return_indices`` says."""
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d(
    input: Tensor,
    kernel_size: int | tuple[int, int, int],
    output_size: int | tuple[int, int, int] | None = None,
    output_ratio: float | tuple[float, float, float] | None = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
):
    """Fractional max pooling (Graham) over (D, H, W); ``_random_samples`` (N, C, 3), drawn from the
    default generator when not given, place the windows (its last dim lists depth first)."""
    return _fractional_max_pool(
        "fractional_max_pool3d",
        input,
        kernel_size,
        output_size,
        output_ratio,
        return_indices,
        _random_samples,
        3,
    )


def fractional_max_pool3d_with_indices(
    input: Tensor,
    kernel_size: int | tuple[int, int, int],
    output_size: int | tuple[int, int, int] | None = None,
    output_ratio: float | tuple[float, float, float] | None = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """``fractional_max_pool3d``'s maxima and their indices, whatever ``return_indices`` says."""
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)


# ---- CTC ----------------------------------------------------------------------------------

# Log-probability of the states no alignment reaches. A finite stand-in for -inf keeps the
# gradients of the log-sum-exps free of NaN (exp(-inf - -inf)); the sums stay at this value.
_CTC_UNREACHABLE = -1e30


def _lengths_list(name: str, lengths: Any, batch: int) -> list[int]:
    if isinstance(lengths, ferrograd.Tensor):
        values = [int(v) for v in lengths.reshape(-1).tolist()]
    elif isinstance(lengths, (list, tuple)):
        values = [int(v) for v in lengths]
    else:
        raise TypeError(
            f"ctc_loss(): argument '{name}' must be a tuple of ints or a Tensor, not {type(lengths).__name__}"
        )
    if len(values) != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    for v in values:
        if v < 0:
            raise RuntimeError(
                f"Expected {name} to have value at least 0, but got value {v} "
                "(while checking arguments for ctc_loss_allocate_outputs)"
            )
    return values


def _ctc_labels(targets: Tensor, target_lengths: list[int], blank: int) -> list[list[int]]:
    """Each sample's target, from a padded (N, S) or a concatenated 1-D ``targets``."""
    flat = [int(v) for v in targets.reshape(-1).tolist()]
    if targets.dim() == 1:
        total = sum(target_lengths)
        if len(flat) != total:
            raise RuntimeError(
                f"Expected tensor to have size {total} at dimension 0, but got size {len(flat)} for "
                "argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)"
            )
        starts = list(itertools.accumulate([0, *target_lengths]))
        return [flat[a : a + n] for a, n in zip(starts, target_lengths)]
    width = targets.shape[1]
    longest = max(target_lengths, default=0)
    if width < longest:
        raise RuntimeError(
            f"Expected tensor to have size at least {longest} at dimension 1, but got size {width} for "
            "argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)"
        )
    return [flat[i * width : i * width + n] for i, n in enumerate(target_lengths)]


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """Connectionist temporal classification loss: minus the log-probability of all the
    alignments of each target with its input, by the forward (alpha) recursion in log space over
    the target with blanks interleaved, ``(T, N, L)`` at once per time step; autograd gives the
    gradient. ``log_probs`` is (T, N, C) or unbatched (T, C); ``targets`` padded (N, S) or
    concatenated 1-D; a mean divides each loss by its target length before averaging."""
    _check_reduction(reduction)
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)  # targets are then 1-D, as concatenated ones
    steps, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    in_lens = _lengths_list("input_lengths", input_lengths, batch)
    tgt_lens = _lengths_list("target_lengths", target_lengths, batch)
    for v in in_lens:
        if v > steps:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {steps}, but got value {v} "
                "(while checking arguments for ctc_loss_allocate_outputs)"
            )
    labels = _ctc_labels(targets, tgt_lens, blank)
    width = 2 * max(tgt_lens, default=0) + 1
    # The extended targets (blank, l1, blank, l2, ..., blank), padded with blanks, and where a
    # state may be entered from two states back (a label differing from the one before it).
    extended = [[blank] * width for _ in labels]
    skip = [[False] * width for _ in labels]
    for n, label in enumerate(labels):
        for j, c in enumerate(label):
            extended[n][2 * j + 1] = c
            skip[n][2 * j + 1] = j > 0 and c != blank and c != label[j - 1]
    ext = ferrograd.tensor(extended, dtype=ferrograd.long)
    lp = log_probs.gather(2, ext.unsqueeze(0).expand((steps, batch, width)))  # (T, N, L)
    unreachable = ferrograd.full((batch, width), _CTC_UNREACHABLE, dtype=log_probs.dtype)
    can_skip = ferrograd.tensor(skip)
    positions = ferrograd.arange(width).unsqueeze(0)
    starts = (positions < 2) & (positions <= 2 * ferrograd.tensor(tgt_lens).unsqueeze(1))
    alpha = ferrograd.where(starts, lp[0], unreachable)
    in_len_t = ferrograd.tensor(in_lens).unsqueeze(1)
    pad1, pad2 = unreachable[:, :1], unreachable[:, :2]
    for t in range(1, max(in_lens, default=0)):
        from_prev = ferrograd.cat([pad1, alpha[:, :-1]], dim=1)
        from_skip = ferrograd.where(can_skip, ferrograd.cat([pad2, alpha[:, :-2]], dim=1), unreachable)
        step = ferrograd.logsumexp(ferrograd.stack([alpha, from_prev, from_skip]), dim=0) + lp[t]
        alpha = ferrograd.where(in_len_t > t, step, alpha)
    ends = ferrograd.tensor([[2 * n, max(2 * n - 1, 0)] for n in tgt_lens], dtype=ferrograd.long)
    last_two = alpha.gather(1, ends)
    has_label = ferrograd.tensor([[True, n > 0] for n in tgt_lens])
    log_likelihood = ferrograd.logsumexp(ferrograd.where(has_label, last_two, unreachable[:, :2]), dim=1)
    # No frames: only the empty target is possible, with probability one.
    no_input = ferrograd.tensor([n == 0 for n in in_lens])
    empty = ferrograd.tensor([0.0 if n == 0 else _CTC_UNREACHABLE for n in tgt_lens], dtype=log_probs.dtype)
    log_likelihood = ferrograd.where(no_input, empty, log_likelihood)
    impossible = log_likelihood < _CTC_UNREACHABLE / 2
    infinite = ferrograd.full((batch,), 0.0 if zero_infinity else math.inf, dtype=log_probs.dtype)
    loss = ferrograd.where(impossible, infinite, -log_likelihood)
    if reduction == "mean":
        divisor = ferrograd.tensor([max(n, 1) for n in tgt_lens], dtype=log_probs.dtype)
        return (loss / divisor).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.reshape(()) if unbatched else loss

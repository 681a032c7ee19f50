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
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import ferrograd
from ferrograd import _C

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ferrograd import Tensor

__all__ = [
    "adaptive_avg_pool2d",
    "avg_pool2d",
    "batch_norm",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "conv2d",
    "cross_entropy",
    "dropout",
    "elu",
    "embedding",
    "fold",
    "gelu",
    "hardtanh",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "group_norm",
    "interpolate",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log_softmax",
    "logsigmoid",
    "max_pool2d",
    "mse_loss",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "relu",
    "relu6",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softplus",
    "tanh",
    "unfold",
]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


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
    return input.clamp_(min_val, max_val) if inplace else input.clamp(min_val, max_val)


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


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        return input.mul_(0.0) if inplace else input * 0.0
    keep = 1 - p
    mask = (ferrograd.rand_like(input) < keep).to(input.dtype) / keep
    return input.mul_(mask) if inplace else input * mask


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
        stacklevel=3,
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
    diff = input - target
    return _reduce_weighted(diff * diff, input, weight, reduction, mean_over_weight=True)


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
        reduction = _legacy_reduction(size_average, reduce)
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
    d = input - target
    ad = d.abs()
    loss = ferrograd.where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    return _reduce_weighted(loss, input, weight, reduction, mean_over_weight=False)


def _check_same_size(input: Tensor, target: Tensor, message: str) -> None:
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(message.format(target=tuple(target.shape), input=tuple(input.shape)))


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``-(t log x + (1 - t) log(1 - x))`` with each log clamped at -100, as PyTorch."""
    reduction = _reduction_arg(size_average, reduce, reduction)
    _check_same_size(
        input,
        target,
        "Using a target size ({target}) that is different to the input size ({input}) is deprecated. "
        "Please ensure they have the same size.",
    )
    if bool(((input < 0) | (input > 1)).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    log_x = input.log().clamp(min=-100.0)
    log_1mx = (1 - input).log().clamp(min=-100.0)
    loss = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


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
    log_weight = 1 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = (1 - target) * input + log_weight * _C.softplus(-input, 1.0, 20.0)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


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


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    _check_reduction(reduction)
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
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    logp = log_softmax(input, class_dim)

    if tuple(input.shape) == tuple(target.shape):  # class probabilities
        if not target.is_floating_point():
            raise RuntimeError(
                f"Expected floating point type for target with class probabilities, got {target.dtype}"
            )
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
    normalized_shape: int | tuple[int, ...] | list[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalizes over the trailing ``normalized_shape`` dims with the biased variance."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    return _C._layer_norm(input, shape, weight, bias, eps)


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` picked by the int64 ``input``; rows at ``padding_idx`` get no gradient."""
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not supported")
    if input.dtype != ferrograd.int64:
        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            f"but got {input.dtype} instead (while checking arguments for embedding)"
        )
    rows = weight.shape[0]
    if input.numel() and (int(input.max()) >= rows or int(input.min()) < 0):
        raise IndexError("index out of range in self")
    out = weight[input]
    if padding_idx is None:
        return out
    if padding_idx < 0:
        padding_idx += rows
    padding = (input == padding_idx).unsqueeze(-1)
    return ferrograd.where(padding, out.detach(), out)


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
    return _C._pad(input, list(pad), mode, value)


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
    ``nearest``, ``nearest-exact``, ``linear`` (3D input), ``bilinear`` (4D) or ``trilinear`` (5D)."""
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
        scales: list[float | None] = [None] * len(spatial)
    elif scale_factor is not None:
        factors = [scale_factor] * len(spatial) if isinstance(scale_factor, (int, float)) else list(scale_factor)
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
    if antialias:
        raise NotImplementedError("interpolate: antialias is not supported")
    if mode in _LINEAR_MODE_DIMS and len(spatial) != _LINEAR_MODE_DIMS[mode]:
        raise NotImplementedError(
            f"Got {input.dim()}D input, but {mode} mode needs {_LINEAR_MODE_DIMS[mode] + 2}D input"
        )
    if mode in ("bicubic", "area", "lanczos"):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported")
    if mode not in ("nearest", "nearest-exact", *_LINEAR_MODE_DIMS) or not 1 <= len(spatial) <= 3:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: "
            f"{_RESIZE_MODES} (got {mode})"
        )
    return _C._interpolate(input, sizes, scales, mode, bool(align_corners))


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
                input = pad(input, (total[1] // 2, total[1] - total[1] // 2, total[0] // 2, total[0] - total[0] // 2))
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
) -> Tensor:
    if return_indices:
        raise NotImplementedError("max_pool2d: return_indices is not supported")
    kernel = _pair(kernel_size, "kernel_size")
    strides = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _pair(stride, "stride")
    return _C._max_pool2d(input, kernel, strides, _pair(padding, "padding"), _pair(dilation, "dilation"), ceil_mode)


def unfold(
    input: Tensor,
    kernel_size: int | tuple[int, int],
    dilation: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    stride: int | tuple[int, int] = 1,
) -> Tensor:
    return _C._unfold(
        input, _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation"), _pair(padding, "padding"),
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
        input, _pair(output_size, "output_size"), _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation"),
        _pair(padding, "padding"), _pair(stride, "stride"),
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
    """Window means, computed as the mean of ``unfold``'s columns."""
    if ceil_mode:
        raise NotImplementedError("avg_pool2d: ceil_mode is not supported")
    if input.dim() == 3:
        return avg_pool2d(input.unsqueeze(0), kernel_size, stride, padding, ceil_mode, count_include_pad,
                          divisor_override).squeeze(0)
    kernel = _pair(kernel_size, "kernel_size")
    strides = kernel if stride is None else _pair(stride, "stride")
    padding = _pair(padding, "padding")
    if 2 * padding[0] > kernel[0] or 2 * padding[1] > kernel[1]:
        raise RuntimeError("pad should be at most half of kernel size")
    n, c, h, w = input.shape
    cols = unfold(input.reshape((n * c, 1, h, w)), kernel, 1, padding, strides)
    oh = (h + 2 * padding[0] - kernel[0]) // strides[0] + 1
    ow = (w + 2 * padding[1] - kernel[1]) // strides[1] + 1
    total = cols.sum(1)
    if divisor_override is not None:
        out = total / divisor_override
    elif count_include_pad or padding == (0, 0):
        out = total / (kernel[0] * kernel[1])
    else:
        counts = unfold(ferrograd.ones((1, 1, h, w), dtype=input.dtype), kernel, 1, padding, strides).sum(1)
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

    def bins(size: int, count: int) -> list[tuple[int, int]]:
        return [((i * size) // count, -((-(i + 1) * size) // count)) for i in range(count)]

    rows = [
        ferrograd.stack([input[..., r0:r1, c0:c1].mean((-2, -1)) for c0, c1 in bins(w, ow)], -1)
        for r0, r1 in bins(h, oh)
    ]
    return ferrograd.stack(rows, -2)


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
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    return _C._batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)

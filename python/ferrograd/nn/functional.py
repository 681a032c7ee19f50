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

import warnings
from typing import TYPE_CHECKING

import ferrograd
from ferrograd import _C

if TYPE_CHECKING:
    from ferrograd import Tensor

__all__ = [
    "cross_entropy",
    "dropout",
    "linear",
    "log_softmax",
    "mse_loss",
    "nll_loss",
    "relu",
    "sigmoid",
    "softmax",
    "tanh",
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


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=2,
        )
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    _check_reduction(reduction)
    diff = input - target
    loss = diff * diff
    if weight is None:
        return _reduce(loss, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    return loss.sum() / weight.sum() if reduction == "mean" else _reduce(loss, reduction)


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

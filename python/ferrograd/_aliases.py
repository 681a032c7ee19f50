"""PyTorch's alternative names and small composite functions, built from ferrograd's ops.

Each function is composed of differentiable tensor ops, so autograd (and double backward)
work through it as through the ops it is made of. ``FUNCTIONS`` are installed at the top
level, ``METHODS`` on ``Tensor``.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from . import _C
from ._C import Tensor
from ._functions import _as_tensor, _from_np, _np_of, _return_type, _wrap_dim, broadcast_shapes, tensordot
from .autograd.grad_mode import no_grad

_cummax_t = _return_type("cummax")
_cummin_t = _return_type("cummin")


# --------------------------------------------------------------------------- comparisons


def _bound(input: Tensor, bound, above: builtins.bool) -> Tensor:
    if isinstance(bound, Tensor):
        return input.maximum(bound) if above else input.minimum(bound)
    return input.clamp(min=bound) if above else input.clamp(max=bound)


def clamp_min(input: Tensor, min) -> Tensor:
    """``input`` with every element below ``min`` (a number or a tensor) raised to it."""
    return _bound(input, min, True)


def clamp_max(input: Tensor, max) -> Tensor:
    """``input`` with every element above ``max`` (a number or a tensor) lowered to it."""
    return _bound(input, max, False)


def positive(input: Tensor) -> Tensor:
    """``+input``: the tensor itself (bool tensors have no ``+``)."""
    if input.dtype == _C.bool:
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return input


def rsub(input: Tensor, other, *, alpha=1) -> Tensor:
    """``other - alpha * input``."""
    return _as_tensor(other, input).sub(input, alpha=alpha)


# --------------------------------------------------------------------------- shapes


def ravel(input: Tensor) -> Tensor:
    """The elements of ``input`` as a 1-D tensor (a view when the layout allows)."""
    return input.reshape(-1)


def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple[Tensor, ...]:
    """``input`` split along ``dim`` into pieces of the given sizes, which must add up to its length."""
    sizes = list(split_sizes)
    length = input.shape[_wrap_dim(dim, input.dim())]
    if builtins.sum(sizes) != length:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {length} (input tensor's size at "
            f"dimension {dim}), but got split_sizes={sizes}"
        )
    return tuple(input.split(sizes, dim))


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with the flattened ``input`` on diagonal ``offset``."""
    return input.reshape(-1).diag(offset)


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """The elements of ``input`` at ``indices`` along ``dim`` (of the flattened input when None),
    with the other dimensions broadcast between the two."""
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    if input.dim() != indices.dim():
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of dimensions, "
            f"but got {input.dim()} dimensions for input, and {indices.dim()} dimensions for indices"
        )
    d = _wrap_dim(dim, input.dim())
    shape_of = lambda t, size: [size if i == d else s for i, s in enumerate(t.shape)]  # noqa: E731
    # The dimensions other than ``dim`` broadcast; ``dim`` keeps each side's own length.
    other = list(broadcast_shapes(tuple(shape_of(input, 1)), tuple(shape_of(indices, 1))))
    source = input.expand(*[input.shape[d] if i == d else s for i, s in enumerate(other)])
    index = indices.expand(*[indices.shape[d] if i == d else s for i, s in enumerate(other)])
    return source.gather(d, index)


# --------------------------------------------------------------------------- products


def inner(input: Tensor, other: Tensor) -> Tensor:
    """The sum of products over the last dimension of both (a plain product when either is 0-d)."""
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input.shape)} and {list(other.shape)}"
        )
    return tensordot(input, other, dims=([-1], [-1]))


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """The dot product of two 1-D tensors, the first conjugated."""
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors")
    return input.conj().dot(other)


def _scaled_sum(input: Tensor, product: Tensor, beta, alpha) -> Tensor:
    """``beta * input + alpha * product``; with ``beta == 0`` the input is ignored (NaNs too)."""
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        input.expand_as(product)  # the input must still broadcast to the product's shape
        return product
    return product + (input if beta == 1 else input * beta)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``."""
    return _scaled_sum(input, mat.mv(vec), beta, alpha)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    return _scaled_sum(input, vec1.outer(vec2), beta, alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    return _scaled_sum(input, batch1.bmm(batch2), beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (the sum over the batch of batch1[i] @ batch2[i])``."""
    return _scaled_sum(input, batch1.bmm(batch2).sum(0), beta, alpha)


# --------------------------------------------------------------------------- reductions


def std_mean(input: Tensor, dim=None, *, correction=1, keepdim: builtins.bool = False):
    """``(std, mean)`` over ``dim`` (all elements when None)."""
    return input.std(dim, correction=correction, keepdim=keepdim), _mean(input, dim, keepdim)


def var_mean(input: Tensor, dim=None, *, correction=1, keepdim: builtins.bool = False):
    """``(var, mean)`` over ``dim`` (all elements when None)."""
    return input.var(dim, correction=correction, keepdim=keepdim), _mean(input, dim, keepdim)


def _mean(input: Tensor, dim, keepdim: builtins.bool) -> Tensor:
    if dim is None:
        return input.mean().reshape([1] * input.dim()) if keepdim else input.mean()
    return input.mean(dim, keepdim=keepdim)


def _running_extreme(input: Tensor, dim: int, is_max: builtins.bool, cls):
    d = _wrap_dim(dim, input.dim())
    if input.dim() == 0:
        return cls(input.clone(), _C.zeros((), dtype=_C.int64))
    values = np.moveaxis(_np_of(input), d, -1)
    positions = np.broadcast_to(np.arange(values.shape[-1]), values.shape)
    better = np.greater_equal if is_max else np.less_equal
    # Each position takes the running extreme's index: itself where it is at least as
    # extreme as everything before it (the last of equal extremes wins) or is NaN, and
    # a NaN, once met, keeps its index.
    best = np.empty_like(positions)
    if values.shape[-1]:
        best[..., 0] = 0
    for i in range(1, values.shape[-1]):
        previous = np.take_along_axis(values, best[..., i - 1 : i], -1)[..., 0]
        current = values[..., i]
        take = (better(current, previous) | np.isnan(current)) & ~np.isnan(previous)
        best[..., i] = np.where(take, i, best[..., i - 1])
    indices = _from_np(np.ascontiguousarray(np.moveaxis(best, -1, d)), _C.int64)
    return cls(input.gather(d, indices), indices)


def cummax(input: Tensor, dim: int):
    """The running maximum along ``dim`` and where each was found (``(values, indices)``)."""
    return _running_extreme(input, dim, True, _cummax_t)


def cummin(input: Tensor, dim: int):
    """The running minimum along ``dim`` and where each was found (``(values, indices)``)."""
    return _running_extreme(input, dim, False, _cummin_t)


def msort(input: Tensor) -> Tensor:
    """``input`` sorted along its first dimension."""
    return input.sort(dim=0).values


# --------------------------------------------------------------------------- indices


def isin(elements, test_elements, *, assume_unique: builtins.bool = False, invert: builtins.bool = False):
    """Whether each element of ``elements`` occurs in ``test_elements`` (a bool tensor)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments: neither argument is a Tensor")
    a = _np_of(elements) if isinstance(elements, Tensor) else np.asarray(elements)
    b = _np_of(test_elements) if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return _from_np(np.isin(a, b, assume_unique=assume_unique, invert=invert), _C.bool)


def unravel_index(indices, shape) -> tuple[Tensor, ...]:
    """The coordinates in a tensor of ``shape`` of each flat index in ``indices``."""
    indices = _as_tensor(indices)
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype == _C.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    total = math.prod(shape)
    # Indices outside the shape wrap around, negative ones from the end.
    flat = indices.remainder(total) if total else indices
    coordinates = []
    for size in reversed(shape):
        coordinates.append(flat.remainder(size))
        flat = flat.floor_divide(size)
    return tuple(reversed(coordinates))


# --------------------------------------------------------------------------- factories


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, requires_grad=False, **_) -> Tensor:
    """``steps`` numbers from ``base ** start`` to ``base ** end``, evenly spaced in exponent."""
    exponents = _C.linspace(start, end, steps, dtype=_C.float64)
    values = exponents.mul(math.log(base)).exp() if base > 0 else _C.full((steps,), base).pow(exponents)
    out = values.to(dtype or _C.get_default_dtype())
    return out.requires_grad_(requires_grad)


def _window(name: str, length: int, periodic: builtins.bool, dtype, coefficients) -> Tensor:
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={length}")
    dtype = dtype or _C.get_default_dtype()
    if not (dtype.is_floating_point):
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if length <= 1:
        return _C.ones((length,), dtype=dtype)
    # A periodic window is the first ``length`` points of a symmetric one of ``length + 1``.
    span = length if periodic else length - 1
    phase = _C.arange(length, dtype=_C.float64) * (2 * math.pi / span)
    out = _C.zeros((length,), dtype=_C.float64)
    for k, c in enumerate(coefficients):
        out = out + (phase * k).cos() * c
    return out.to(dtype)


def hann_window(window_length: int, periodic: builtins.bool = True, *, dtype=None, **_) -> Tensor:
    """The Hann window, ``0.5 - 0.5 cos(2πn / N)``."""
    return _window("hann_window", window_length, periodic, dtype, (0.5, -0.5))


def hamming_window(
    window_length: int,
    periodic: builtins.bool = True,
    alpha: float = 0.54,
    beta: float = 0.46,
    *,
    dtype=None,
    **_,
) -> Tensor:
    """The Hamming window, ``alpha - beta cos(2πn / N)``."""
    return _window("hamming_window", window_length, periodic, dtype, (alpha, -beta))


def blackman_window(window_length: int, periodic: builtins.bool = True, *, dtype=None, **_) -> Tensor:
    """The Blackman window, ``0.42 - 0.5 cos(2πn / N) + 0.08 cos(4πn / N)``."""
    return _window("blackman_window", window_length, periodic, dtype, (0.42, -0.5, 0.08))


def bartlett_window(window_length: int, periodic: builtins.bool = True, *, dtype=None, **_) -> Tensor:
    """The Bartlett (triangular) window."""
    dtype = dtype or _C.get_default_dtype()
    if window_length <= 1:
        return _window("bartlett_window", window_length, periodic, dtype, ())
    span = window_length if periodic else window_length - 1
    n = _C.arange(window_length, dtype=_C.float64)
    return (1 - (n * (2 / span) - 1).abs()).to(dtype)


# --------------------------------------------------------------------------- in-place forms


def _copy_result(fn, name: str):
    """An in-place method that writes ``fn(self, ...)`` into ``self`` (computed from a clone,
    so that what ``fn`` saves for backward is not the tensor being overwritten)."""

    def method(self, *args, **kwargs):
        self.copy_(fn(self.clone() if self.requires_grad else self, *args, **kwargs))
        return self

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``."
    return method


def _fill_diagonal_(self: Tensor, fill_value, wrap: builtins.bool = False) -> Tensor:
    """Writes ``fill_value`` on the main diagonal (all dimensions of equal length past 2-D);
    ``wrap`` restarts it every ``columns + 1`` rows of a tall matrix."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = builtins.min(self.shape)
    if self.dim() == 2 and wrap and self.shape[0] > self.shape[1] + 1:
        rows = _C.arange(self.shape[0])
        rows = rows[rows.remainder(self.shape[1] + 1) < self.shape[1]]
        columns = rows.remainder(self.shape[1] + 1)
        self[rows, columns] = fill_value
        return self
    position = _C.arange(n)
    self[(position,) * self.dim()] = fill_value
    return self


def _random_fill(transform, name: str):
    """An in-place random method: uniform numbers in (0, 1) mapped through ``transform``."""

    def method(self, *args, **kwargs):
        with no_grad():
            u = _C.rand(tuple(self.shape), dtype=_C.float64).clamp(min=np.finfo(np.float64).tiny)
            self.copy_(transform(u, *args, **kwargs))
        return self

    method.__name__ = method.__qualname__ = name
    return method


def _exponential(u: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return -u.log() / lambd


def _geometric(u: Tensor, p: float, *, generator=None) -> Tensor:
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return (u.log() / math.log1p(-p)).ceil()


def _log_normal(u: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    # Box-Muller on two independent uniforms.
    other = _C.rand(tuple(u.shape), dtype=_C.float64)
    normal = (-2 * u.log()).sqrt() * (other * (2 * math.pi)).cos()
    return (normal * std + mean).exp()


def _cauchy(u: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    return ((u - 0.5) * math.pi).tan() * sigma + median


def _new_tensor(self: Tensor, data, *, dtype=None, device=None, requires_grad: builtins.bool = False, **_):
    """A new tensor holding a copy of ``data``, of ``self``'s dtype unless one is given."""
    from . import tensor

    source = data.detach().clone() if isinstance(data, Tensor) else tensor(data, dtype=dtype or self.dtype)
    return source.to(dtype or self.dtype).requires_grad_(requires_grad)


def _is_nonzero(self: Tensor) -> builtins.bool:
    if self.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if self.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(self.item())


# Offered both as ``ferrograd.name(input, ...)`` and as ``input.name(...)``.
_FUNCTIONS_AND_METHODS = {
    "absolute": Tensor.abs,
    "greater": Tensor.gt,
    "greater_equal": Tensor.ge,
    "less": Tensor.lt,
    "less_equal": Tensor.le,
    "not_equal": Tensor.ne,
    "swapdims": Tensor.transpose,
    "clamp_min": clamp_min,
    "clamp_max": clamp_max,
    "positive": positive,
    "ravel": ravel,
    "split_with_sizes": split_with_sizes,
    "diagflat": diagflat,
    "take_along_dim": take_along_dim,
    "inner": inner,
    "vdot": vdot,
    "addmv": addmv,
    "addr": addr,
    "baddbmm": baddbmm,
    "addbmm": addbmm,
    "cummax": cummax,
    "cummin": cummin,
    "msort": msort,
    "is_nonzero": _is_nonzero,
    "is_same_size": lambda input, other: tuple(input.shape) == tuple(other.shape),
    "is_signed": lambda input: input.dtype != _C.bool,
}

FUNCTIONS = {
    **_FUNCTIONS_AND_METHODS,
    "concat": _C.cat,
    "concatenate": _C.cat,
    "rsub": rsub,
    "std_mean": std_mean,
    "var_mean": var_mean,
    "isin": isin,
    "unravel_index": unravel_index,
    "logspace": logspace,
    "hann_window": hann_window,
    "hamming_window": hamming_window,
    "blackman_window": blackman_window,
    "bartlett_window": bartlett_window,
    "polygamma": lambda n, input: input.polygamma(n),
}

METHODS = {
    **_FUNCTIONS_AND_METHODS,
    "absolute_": Tensor.abs_,
    "ndimension": Tensor.dim,
    "get_device": lambda self: -1,
    "new_tensor": _new_tensor,
    "fill_diagonal_": _fill_diagonal_,
    "exponential_": _random_fill(_exponential, "exponential_"),
    "geometric_": _random_fill(_geometric, "geometric_"),
    "log_normal_": _random_fill(_log_normal, "log_normal_"),
    "cauchy_": _random_fill(_cauchy, "cauchy_"),
}
for _name, _fn in {
    "eq": Tensor.eq,
    "ne": Tensor.ne,
    "lt": Tensor.lt,
    "le": Tensor.le,
    "gt": Tensor.gt,
    "ge": Tensor.ge,
    "logical_and": Tensor.logical_and,
    "logical_or": Tensor.logical_or,
    "logical_xor": Tensor.logical_xor,
    "logical_not": Tensor.logical_not,
    "clamp_min": clamp_min,
    "clamp_max": clamp_max,
    "cumsum": Tensor.cumsum,
    "cumprod": Tensor.cumprod,
    "tril": Tensor.tril,
    "triu": Tensor.triu,
    "addmv": addmv,
    "addr": addr,
    "baddbmm": baddbmm,
    "addbmm": addbmm,
}.items():
    METHODS[_name + "_"] = _copy_result(_fn, _name + "_")
del _name, _fn

"""PyTorch's alternative names and small composite functions, built from ferrograd's ops.

Each function is composed of differentiable tensor ops, so autograd (and double backward)
work through it as through the ops it is made of. ``FUNCTIONS`` are installed at the top
level, ``METHODS`` on ``Tensor``.
"""

from __future__ import annotations

import builtins
import math
import numbers

import numpy as np

from . import _C
from ._C import Tensor
from ._functions import (
    _as_tensor,
    _dtype_name,
    _from_np,
    _np_of,
    _number_as_tensor,
    _return_type,
    _wrap_dim,
    _zero_grad_like,
    broadcast_shapes,
    tensordot,
    tile,
)
from .autograd.function import Function
from .autograd.grad_mode import enable_grad, no_grad
from .special import multigammaln

_cummax_t = _return_type("cummax")
_cummin_t = _return_type("cummin")


# --------------------------------------------------------------------------- comparisons


def positive(input: Tensor) -> Tensor:
    """``+input``: the tensor itself (bool tensors have no ``+``)."""
    if input.dtype == _C.bool:
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return input


def rsub(input: Tensor, other, *, alpha=1) -> Tensor:
    """``other - alpha * input``. A Python number ``other`` keeps the lowest rank in type
    promotion, as in PyTorch: ``rsub(int32 tensor, 2)`` is int32."""
    if not isinstance(other, Tensor):
        other = _number_as_tensor(other, input)
    return other.sub(input, alpha=alpha)


def _contains(self: Tensor, element) -> builtins.bool:
    """``element in self``: whether any element of ``self`` equals ``element`` (a number, or a
    tensor compared after broadcasting), rather than Python's walk over the first dimension."""
    if not isinstance(element, (Tensor, numbers.Number)):
        raise RuntimeError(
            f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}."
        )
    return builtins.bool(self.eq(element).any().item())


def format_tensor(self: Tensor, format_spec: str) -> str:
    """``format(self, spec)`` and f-strings: a 0-d plain tensor formats as its value (so
    ``f"{loss:.3f}"`` works), anything else (subclasses such as ``Parameter`` included) as
    ``str(self)``, as in PyTorch."""
    if type(self) is Tensor and self.dim() == 0:
        return self.detach().item().__format__(format_spec)
    if format_spec:
        # object.__format__'s error, naming the class as PyTorch's does (without the module).
        raise TypeError(f"unsupported format string passed to {type(self).__name__}.__format__")
    return str(self)


# --------------------------------------------------------------------------- shapes


def ravel(input: Tensor) -> Tensor:
    """The elements of ``input`` as a 1-D tensor (a view when the layout allows)."""
    return input.reshape(-1)


def _tile(self: Tensor, *dims, **kwargs) -> Tensor:
    """``Tensor.tile``: the counts as one sequence (or ``dims=``), as ``tile`` takes them, or one
    by one (``x.tile(2, 1)``), as PyTorch's method also does."""
    if len(dims) > 1:
        return tile(self, dims, **kwargs)
    return tile(self, *dims, **kwargs)


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


def _correction(unbiased, correction):
    """The ``correction`` of a variance given either way: ``unbiased`` (True for 1, False for 0),
    or ``correction`` (1 when neither is given)."""
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def std_mean(input: Tensor, dim=None, unbiased=None, keepdim: builtins.bool = False, *, correction=None):
    """``(std, mean)`` over ``dim`` (all elements when None)."""
    if isinstance(dim, builtins.bool):  # std_mean(input, unbiased)
        dim, unbiased = None, dim
    c = _correction(unbiased, correction)
    return input.std(dim, correction=c, keepdim=keepdim), _mean(input, dim, keepdim)


def var_mean(input: Tensor, dim=None, unbiased=None, keepdim: builtins.bool = False, *, correction=None):
    """``(var, mean)`` over ``dim`` (all elements when None)."""
    if isinstance(dim, builtins.bool):  # var_mean(input, unbiased)
        dim, unbiased = None, dim
    c = _correction(unbiased, correction)
    return input.var(dim, correction=c, keepdim=keepdim), _mean(input, dim, keepdim)


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
    # extreme as everything before it (the last of equal extremes wins) or is NaN. As in
    # PyTorch's kernel every NaN takes over, while no number does after a NaN (comparisons
    # with the NaN are false).
    best = np.empty_like(positions)
    if values.shape[-1]:
        best[..., 0] = 0
    for i in range(1, values.shape[-1]):
        previous = np.take_along_axis(values, best[..., i - 1 : i], -1)[..., 0]
        current = values[..., i]
        take = better(current, previous) | np.isnan(current)
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
    """``steps`` numbers from ``base ** start`` to ``base ** end``, evenly spaced in exponent.

    Computed as PyTorch does, so integer results agree: ``start`` and ``end`` converted to the
    result's dtype (integers truncated), the exponents and powers in double, the second half
    counted back from ``end``, and the powers truncated to integers.
    """
    from . import tensor

    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = dtype or _C.get_default_dtype()
    if dtype == _C.bool:
        raise NotImplementedError("\"logspace_cpu\" not implemented for 'Bool'")
    if steps <= 1:
        exponents = np.full(steps, float(start))
    else:
        first, last = (_C.full((), x, dtype=dtype).item() for x in (start, end))
        span = last - first
        if dtype == _C.float32:
            span = float(np.float32(span))  # float32 arithmetic, as PyTorch's
        step = span / (steps - 1)
        i = np.arange(steps)
        exponents = np.where(i < steps // 2, first + step * i, last - step * (steps - 1 - i))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        values = np.power(complex(base) if dtype.is_complex else float(base), exponents)
        if not (dtype.is_floating_point or dtype.is_complex):
            # As C converts a double: narrower integers through int32, so 1000 wraps to 232 in
            # uint8 and values out of range become the type's minimum.
            values = values.astype(np.int64 if dtype == _C.int64 else np.int32)
    return tensor(values, dtype=dtype, requires_grad=requires_grad)


def _window_dtype(name: str, length: int, dtype):
    """The dtype of a window of ``length`` points, after PyTorch's checks of both."""
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={length}")
    dtype = dtype or _C.get_default_dtype()
    if not (dtype.is_floating_point):
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    return dtype


def _window(name: str, length: int, periodic: builtins.bool, dtype, coefficients) -> Tensor:
    dtype = _window_dtype(name, length, dtype)
    if length <= 1:
        return _C.ones((length,), dtype=dtype)
    # A periodic window is the first ``length`` points of a symmetric one of ``length + 1``.
    span = length if periodic else length - 1
    phase = _C.arange(length, dtype=_C.float64) * (2 * math.pi / span)
    out = _C.zeros((length,), dtype=_C.float64)
    for k, c in enumerate(coefficients):
        out = out + (phase * k).cos() * c
    return out.to(dtype)


def kaiser_window(
    window_length: int, periodic: builtins.bool = True, beta: float = 12.0, *, dtype=None, **_
) -> Tensor:
    """The Kaiser window, ``I0(beta sqrt(1 - (2n/N - 1)^2)) / I0(beta)``."""
    dtype = _window_dtype("kaiser_window", window_length, dtype)
    if window_length <= 1:
        return _C.ones((window_length,), dtype=dtype)
    span = window_length if periodic else window_length - 1
    ratio = _C.arange(window_length, dtype=_C.float64) * (2 / span) - 1
    out = ((1 - ratio * ratio).clamp_min(0).sqrt() * beta).i0() / _C.full(
        (), float(beta), dtype=_C.float64
    ).i0()
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


def index_reduce(
    input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: builtins.bool = True
) -> Tensor:
    """``input`` with slice ``i`` of ``source`` along ``dim`` reduced (``prod``, ``mean``, ``amax``
    or ``amin``) into slice ``index[i]``: ``scatter_reduce`` with ``index`` spread over the slices."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}."
        )
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    d = _wrap_dim(dim, source.dim())
    spread = index.reshape([-1 if k == d else 1 for k in range(builtins.max(source.dim(), 1))])
    return input.scatter_reduce(d, spread.expand(source.shape), source, reduce, include_self=include_self)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero()`` cut or padded with ``fill_value`` rows to exactly ``size`` rows."""
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = input.nonzero()[:size]
    missing = size - found.shape[0]
    if missing == 0:
        return found
    padding = _C.full((missing, found.shape[1]), fill_value, dtype=found.dtype)
    return _C.cat([found, padding])


def _dim_order(self: Tensor, *, ambiguity_check: builtins.bool = False) -> tuple[int, ...]:
    """The dims from outermost to innermost in memory: by falling stride, ties in order."""
    strides = self.stride()
    return tuple(sorted(range(self.dim()), key=lambda d: -strides[d]))


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` (a bool or a one-element tensor) holds, else
    ``false_fn(*operands)``: PyTorch's ``cond`` run eagerly."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        pred = pred.item()
    return (true_fn if pred else false_fn)(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """``carried_inputs`` passed through ``body_fn`` while ``cond_fn`` of them holds: PyTorch's
    ``while_loop`` run eagerly; a tuple, as there."""
    carried = tuple(carried_inputs)
    while cond_fn(*carried):
        carried = tuple(body_fn(*carried))
    return carried


def _is_set_to(self: Tensor, tensor: Tensor) -> builtins.bool:
    """Whether both tensors view the same elements of the same memory in the same layout."""
    return (
        self.data_ptr() == tensor.data_ptr()
        and self.dtype == tensor.dtype
        and tuple(self.shape) == tuple(tensor.shape)
        and self.stride() == tensor.stride()
    )


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


# --------------------------------------------------------------------------- tensor attributes


class layout:
    """How a tensor's elements are laid out in memory; ferrograd has only :data:`strided`."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"ferrograd.{self._name}"

    def __reduce__(self):
        return self._name


strided = layout("strided")


def _adjoint(self: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions."""
    if self.dim() < 2:
        raise RuntimeError(
            "tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor."
        )
    return self.transpose(-2, -1).conj()


def _H(self: Tensor) -> Tensor:
    if self.dim() > 2:
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor."
        )
    return self.t().conj() if self.dim() == 2 else self


def _mH(self: Tensor) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError(
            f"tensor.mH is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor."
        )
    return self.transpose(-2, -1).conj()


# --------------------------------------------------------------------------- indexing composites


def _check_index(name: str, index: Tensor) -> None:
    if index.dtype != _C.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {_dtype_name(index.dtype)}")


def _bounded(index: Tensor, size: int, name: str, dim: int) -> Tensor:
    """``index`` with negative entries counted from the end, after checking the bounds."""
    if index.numel():
        low, high = builtins.int(index.min().item()), builtins.int(index.max().item())
        for i in (high, low):
            if not -size <= i < size:
                raise IndexError(f"{name}index {i} is out of bounds for dimension {dim} with size {size}")
    return index.remainder(size) if size else index


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``input`` with the slices at ``index`` along ``dim`` replaced by the slices of ``source``."""
    _check_index("index_copy_", index)
    if index.dim() > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.dim()})")
    if input.dtype != source.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{_dtype_name(input.dtype)} and (source) {_dtype_name(source.dtype)}"
        )
    d = _wrap_dim(dim, input.dim())
    src = source if source.dim() else source.reshape(1)
    if index.numel() != (src.shape[d] if src.dim() > d else 1):
        raise IndexError(
            f"index_copy_(): Number of indices ({index.numel()}) should be equal to source.size(dim) "
            f"({src.shape[d] if src.dim() > d else 1})"
        )
    for i in range(input.dim()):
        if i != d and (src.dim() != input.dim() or src.shape[i] != input.shape[i]):
            raise RuntimeError(
                "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                f"shape: {input.shape[i]} at dimension {i} and source slice shape: "
                f"{src.shape[i] if i < src.dim() else 1} at dimension {i}."
            )
    position = _bounded(index.reshape(-1), input.shape[d] if input.dim() else 1, "index_copy_(): ", d)
    out = input.clone().movedim(d, 0) if input.dim() else input.clone().reshape(1)
    out.index_put_((position,), src.movedim(d, 0) if src.dim() else src)
    return out.movedim(0, d) if input.dim() else out.reshape(())


def _dim_mask(input: Tensor, d: int, index: Tensor) -> Tensor:
    """A bool tensor broadcastable to ``input``: True on the slices at ``index`` along ``d``."""
    length = input.shape[d] if input.dim() else 1
    mask = _C.zeros((length,), dtype=_C.bool)
    if index.numel():
        mask[_bounded(index.reshape(-1), length, "", d)] = True
    return mask.reshape([length if i == d else 1 for i in range(input.dim())])


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """``input`` with the slices at ``index`` along ``dim`` set to ``value`` (a number or 0-d tensor)."""
    if index.dtype != _C.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(
            f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.dim()} dimension(s)."
        )
    return input.masked_fill(_dim_mask(input, _wrap_dim(dim, input.dim()), index), value)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the positions where ``mask`` holds filled, in order, by the elements of ``source``."""
    if mask.dtype != _C.bool:
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {_dtype_name(mask.dtype)}"
        )
    if input.dtype != source.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{_dtype_name(input.dtype)} and {_dtype_name(source.dtype)}"
        )
    shape = broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    mask = mask.expand(*shape)
    flat = mask.reshape(-1)
    ones = builtins.int(flat.sum().item())
    if ones > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if not ones:
        # Nothing is taken from ``source``, but it gets a zero gradient, as in PyTorch.
        return _zero_grad_like(input.expand(*shape).clone(), source.sum())
    # The k-th True position takes source's k-th element.
    order = flat.to(_C.int64).cumsum(0).sub(1).clamp(min=0)
    picked = source.reshape(-1).index_select(0, order).reshape(shape)
    return picked.where(mask, input.expand(*shape))


def take(input: Tensor, index: Tensor) -> Tensor:
    """The elements of the flattened ``input`` at ``index`` (negative counting from the end), in
    ``index``'s shape."""
    _check_index("take", index)
    return input.reshape(-1).index_select(0, _flat_position(input, index)).reshape(tuple(index.shape))


def _flat_position(input: Tensor, index: Tensor) -> Tensor:
    n = input.numel()
    if index.numel():
        for i in (builtins.int(index.max().item()), builtins.int(index.min().item())):
            if not -n <= i < n:
                raise IndexError(f"out of range: tried to access index {i} on a tensor of {n} elements.")
    return index.reshape(-1).remainder(n) if n else index.reshape(-1)


def _put_(self: Tensor, index: Tensor, source: Tensor, accumulate: builtins.bool = False) -> Tensor:
    """Writes (or with ``accumulate`` adds) ``source``'s elements at the flat positions ``index``."""
    _check_index("put_", index)
    if source.numel() != index.numel():
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    position = _flat_position(self, index)
    if self.is_contiguous():
        self.view(-1).index_put_((position,), source.reshape(-1), accumulate)
    else:
        flat = self.reshape(-1).clone()
        flat.index_put_((position,), source.reshape(-1), accumulate)
        self.copy_(flat.reshape(tuple(self.shape)))
    return self


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: builtins.bool = False) -> Tensor:
    """Out-of-place :meth:`Tensor.put_`."""
    return _put_(input.clone(), index, source, accumulate)


def _scatter_into(input: Tensor, src: Tensor, view) -> Tensor:
    """A copy of ``input`` whose region ``view(copy)`` holds ``src``."""
    out = input.clone()
    region = view(out)
    if tuple(region.shape) != tuple(src.shape):
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(region.shape)}"
        )
    region.copy_(src)
    return out


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """``input`` with the diagonal ``diagonal(offset, dim1, dim2)`` replaced by ``src``."""
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def as_strided_scatter(input: Tensor, src: Tensor, size, stride, storage_offset=None) -> Tensor:
    """``input`` with the elements ``as_strided(size, stride, storage_offset)`` reads replaced
    by ``src``."""
    return _scatter_into(input, src, lambda t: t.as_strided(size, stride, storage_offset))


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """``input`` with ``select(dim, index)`` replaced by ``src``."""
    return _scatter_into(input, src, lambda t: t.select(dim, index))


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    """``input`` with the slice ``start:end:step`` along ``dim`` replaced by ``src``."""
    d = _wrap_dim(dim, input.dim())
    key = (slice(None),) * d + (slice(start, end, step),)
    return _scatter_into(input, src, lambda t: t[key])


# --------------------------------------------------------------------------- reductions and scans


_aminmax_t = _return_type("aminmax", ("min", "max"))


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: builtins.bool = False):
    """``(min, max)`` of ``input`` over ``dim`` (all elements when None)."""
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"aminmax_cpu\" not implemented for '{_dtype_name(input.dtype)}'")
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
            )
        low, high = input.amin(), input.amax()
        if keepdim:
            low, high = (t.reshape([1] * input.dim()) for t in (low, high))
        return _aminmax_t(low, high)
    d = _wrap_dim(dim, input.dim())
    if input.dim() and input.shape[d] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
    if input.dim() == 0:
        return _aminmax_t(input.clone(), input.clone())
    return _aminmax_t(input.amin(d, keepdim), input.amax(d, keepdim))


class _LogCumSumExp(Function):
    """``logcumsumexp`` of a real tensor as PyTorch computes it: a running log-add-exp along ``dim``
    in double precision, rounded once per element (NumPy's ``logaddexp`` does the same arithmetic),
    with PyTorch's gradient, whose terms ``log(grad) - result + input`` make it NaN where the input
    is infinite."""

    _jvp_from_backward = True

    @staticmethod
    def forward(ctx, input: Tensor, dim: int) -> Tensor:
        with np.errstate(all="ignore"):
            running = np.logaddexp.accumulate(_np_of(input).astype(np.float64), axis=dim)
        result = _from_np(running, dtype=input.dtype)
        ctx.save_for_backward(input, result)
        ctx.dim = dim
        return result

    @staticmethod
    def backward(ctx, grad: Tensor):
        input, result = ctx.saved_tensors
        d = ctx.dim
        if grad.requires_grad:
            # To be differentiated with respect to grad itself (jvp's double vjp does so at
            # grad = 0) the gradient must be linear in it, which the log-space formula below is
            # not at 0: it is then the gradient of the pairwise scan.
            from .autograd import grad as gradient

            # An input without grad (one with a tangent) becomes a variable of its own.
            x = input if input.requires_grad else input.detach().requires_grad_()
            with enable_grad():
                return gradient(_logaddexp_scan(x, d), x, grad, create_graph=True)[0], None
        # Positive and negative parts of grad in log space, the dtype's lowest number standing
        # for log(0) as in PyTorch's formula.
        lowest = float(np.finfo(np.float64 if grad.dtype == _C.float64 else np.float32).min)
        log_grad = grad.abs().log()
        parts = [log_grad.where(grad > 0, lowest), log_grad.where(grad < 0, lowest)]
        pos, neg = ((logcumsumexp((p - result).flip(d), d).flip(d) + input).exp() for p in parts)
        return pos - neg, None


def _logaddexp_scan(input: Tensor, d: int) -> Tensor:
    """``logcumsumexp`` along ``d`` as a prefix scan of pairwise log-add-exps (log2(n) vectorised
    steps), differentiable through its ops."""
    n = input.shape[d]
    out = input
    step = 1
    while step < n:
        head = out.narrow(d, 0, step)
        tail = out.narrow(d, step, n - step).logaddexp(out.narrow(d, 0, n - step))
        out = _C.cat([head, tail], d)
        step *= 2
    return out if n > 1 else input.clone()


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input)))`` along ``dim``, computed without overflow or underflow: for real
    tensors as PyTorch computes it (see ``_LogCumSumExp``), for complex ones as a prefix scan."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{_dtype_name(input.dtype)}'"
        )
    if input.dim() == 0:
        return input.clone()
    d = _wrap_dim(dim, input.dim())
    if input.dtype.is_floating_point:
        return _LogCumSumExp.apply(input, d)
    return _logaddexp_scan(input, d)


def renorm(input: Tensor, p, dim: int, maxnorm) -> Tensor:
    """``input`` with every slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to it."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    d = _wrap_dim(dim, input.dim())
    others = tuple(i for i in range(input.dim()) if i != d)
    norms = input.abs().pow(p).sum(others, True).pow(1.0 / p)
    # PyTorch's scale: maxnorm / (norm + 1e-7) where the norm is too large, else 1.
    scale = (norms + 1e-7).reciprocal().mul(maxnorm).where(norms > maxnorm, _C.ones((), dtype=norms.dtype))
    return input * scale


def sum_to_size(self: Tensor, *size) -> Tensor:
    """``self`` summed over the dimensions it was broadcast along from ``size``."""
    size = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else tuple(size)
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or builtins.any(s not in (1, shape[lead + i]) for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    out = self.sum(tuple(range(lead))) if lead else self
    dims = tuple(i for i, s in enumerate(size) if s == 1 and out.shape[i] != 1)
    return out.sum(dims, True) if dims else out


def _directional_split(name: str, dim: int, min_dims: int):
    def split(input: Tensor, indices_or_sections):
        if input.dim() < min_dims:
            raise RuntimeError(
                f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor "
                f"with {input.dim()} dimensions!"
            )
        d = 0 if name == "hsplit" and input.dim() == 1 else dim
        if isinstance(indices_or_sections, int):
            sections = indices_or_sections
            if sections == 0 or input.shape[d] % sections:
                raise RuntimeError(
                    f"torch.{name} attempted to split along dimension {d}, but the size of the dimension "
                    f"{input.shape[d]} is not divisible by the split_size {sections}!"
                )
        return tuple(input.tensor_split(indices_or_sections, d))

    split.__name__ = split.__qualname__ = name
    split.__doc__ = f"``input`` split along dimension {dim} (``tensor_split`` with even sections)."
    return split


hsplit = _directional_split("hsplit", 1, 1)
vsplit = _directional_split("vsplit", 0, 2)
dsplit = _directional_split("dsplit", 2, 3)


# --------------------------------------------------------------------------- pointwise


def _real_only(name: str, input: Tensor) -> None:
    if input.dtype.is_complex:
        raise RuntimeError(f"{name} does not support complex inputs.")


def isposinf(input: Tensor) -> Tensor:
    """Where ``input`` is ``+inf``."""
    _real_only("isposinf", input)
    return input.isinf() & (input > 0)


def isneginf(input: Tensor) -> Tensor:
    """Where ``input`` is ``-inf``."""
    _real_only("isneginf", input)
    return input.isinf() & (input < 0)


def isreal(input: Tensor) -> Tensor:
    """Where ``input`` has a zero imaginary part (everywhere for real dtypes)."""
    if not input.dtype.is_complex:
        return _C.ones(tuple(input.shape), dtype=_C.bool)
    return input.imag == 0


_frexp_t = _return_type("frexp", ("mantissa", "exponent"))


def frexp(input: Tensor):
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent`` and ``0.5 <= |mantissa| < 1``;
    the exponent is int32."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    _, exponent = np.frexp(_np_of(input))
    exponent = _from_np(exponent.astype(np.int32), _C.int32)
    # The mantissa as a differentiable quotient (exact: a power of two).
    return _frexp_t(input / _C.full((), 2.0, dtype=input.dtype).pow(exponent.to(input.dtype)), exponent)


def ldexp(input: Tensor, other) -> Tensor:
    """``input * 2 ** other``, in a floating dtype."""
    other = _as_tensor(other)
    exact = other.dtype.is_floating_point or other.dtype.is_complex
    power = _C.full((), 2.0, dtype=other.dtype if exact else _C.get_default_dtype()).pow(other)
    return input * power


_INTEGER_DTYPES = (_C.uint8, _C.int8, _C.int16, _C.int32, _C.int64)


def _integer_binary(name: str, numpy_fn):
    def fn(input: Tensor, other: Tensor) -> Tensor:
        for t in (input, other):
            if t.dtype not in _INTEGER_DTYPES:
                raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_dtype_name(t.dtype)}'")
        return _from_np(numpy_fn(_np_of(input), _np_of(other)), _C.promote_types(input.dtype, other.dtype))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The elementwise ``{name}`` of two integer tensors (broadcast)."
    return fn


gcd = _integer_binary("gcd", np.gcd)
lcm = _integer_binary("lcm", np.lcm)


# --------------------------------------------------------------------------- linear algebra


def _linalg():
    from . import linalg

    return linalg


_svd_t = _return_type("svd", ("U", "S", "V"))
_qr_t = _return_type("qr", ("Q", "R"))
_triangular_solve_t = _return_type("triangular_solve", ("solution", "cloned_coefficient"))


def svd(input: Tensor, some: builtins.bool = True, compute_uv: builtins.bool = True):
    """``(U, S, V)`` with ``input = U diag(S) V^H`` (``V``, not ``Vh``); reduced unless ``some`` is
    False. Without ``compute_uv``, ``U`` and ``V`` are zero-filled square matrices."""
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        S = _linalg().svdvals(input)
        return _svd_t(
            _C.zeros(batch + (m, m), dtype=input.dtype), S, _C.zeros(batch + (n, n), dtype=input.dtype)
        )
    U, S, Vh = _linalg().svd(input, full_matrices=not some)
    return _svd_t(U, S, Vh.transpose(-2, -1).conj())


def qr(input: Tensor, some: builtins.bool = True):
    """``(Q, R)`` with ``input = Q R``; reduced unless ``some`` is False."""
    return _qr_t(*_linalg().qr(input, "reduced" if some else "complete"))


def cholesky(input: Tensor, upper: builtins.bool = False) -> Tensor:
    """The Cholesky factor of each symmetric positive-definite matrix (lower unless ``upper``)."""
    return _linalg().cholesky(input, upper=upper)


def _check_rhs(B: Tensor, A: Tensor) -> None:
    for label, t in (("b", B), ("A", A)):
        if t.dim() < 2:
            raise RuntimeError(
                f"{label} should have at least 2 dimensions, but has {t.dim()} dimensions instead"
            )


def _gram(L: Tensor, upper: builtins.bool) -> Tensor:
    """``A`` from its Cholesky factor: ``L L^H``, or ``U^H U`` when ``upper``."""
    H = L.transpose(-2, -1).conj()
    return H @ L if upper else L @ H


def cholesky_solve(B: Tensor, L: Tensor, upper: builtins.bool = False) -> Tensor:
    """``X`` with ``A X = B`` given the Cholesky factor ``L`` of ``A`` (``U`` when ``upper``).
    ``A`` is rebuilt from the whole factor, so gradients reach every entry of it as in PyTorch."""
    _check_rhs(B, L)
    return _linalg().solve(_gram(L, upper), B)


def cholesky_inverse(L: Tensor, upper: builtins.bool = False) -> Tensor:
    """The inverse of ``A`` given its Cholesky factor (``L L^H``, or ``U^H U`` when ``upper``)."""
    if L.dim() < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    return _linalg().inv(_gram(L, upper))


def triangular_solve(
    b: Tensor,
    A: Tensor,
    upper: builtins.bool = True,
    transpose: builtins.bool = False,
    unitriangular: builtins.bool = False,
):
    """``(X, A.clone())`` with ``A X = b`` (``A^T X = b`` when ``transpose``) for triangular ``A``."""
    _check_rhs(b, A)
    coefficient = A.transpose(-2, -1) if transpose else A
    X = _linalg().solve_triangular(coefficient, b, upper=upper != transpose, unitriangular=unitriangular)
    return _triangular_solve_t(X, A.clone())


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The pseudo-inverse, singular values at most ``rcond`` times the largest counting as zero."""
    return _linalg().pinv(input, rtol=rcond)


def matrix_power(input: Tensor, n: int) -> Tensor:
    """``input`` multiplied by itself ``n`` times."""
    return _linalg().matrix_power(input, n)


def matrix_exp(input: Tensor) -> Tensor:
    """The matrix exponential of each square matrix."""
    return _linalg().matrix_exp(input)


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of the matrices, in the cheapest order (``linalg.multi_dot``)."""
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return matrices[0].clone()
    return _linalg().multi_dot(matrices)


def nuclear_norm(input: Tensor, dim=(-2, -1), keepdim: builtins.bool = False) -> Tensor:
    """The sum of the singular values over the two dimensions ``dim``."""
    if isinstance(dim, builtins.bool):  # torch.nuclear_norm(input, keepdim)
        dim, keepdim = (-2, -1), dim
    return _linalg().matrix_norm(input, "nuc", dim, keepdim)


def frobenius_norm(input: Tensor, dim=(-2, -1), keepdim: builtins.bool = False) -> Tensor:
    """The square root of the sum of squared magnitudes over ``dim``."""
    return _linalg().vector_norm(input, 2, dim, keepdim)


def vander(x: Tensor, N: int | None = None, increasing: builtins.bool = False) -> Tensor:
    """The Vandermonde matrix of a 1-D ``x``: columns ``x ** (N-1), ..., x ** 0`` (ascending with
    ``increasing``)."""
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is not None and N < 0:
        raise RuntimeError("N must be non-negative.")
    n = x.shape[0] if N is None else N
    if n == 0:
        return _C.zeros((x.shape[0], 0), dtype=x.dtype if x.dtype != _C.bool else _C.int64)
    x = x.to(_C.int64) if x.dtype == _C.bool else x
    out = _linalg()._powers(x, n)
    return out if increasing else out.flip(-1)


# --------------------------------------------------------------------------- sampling and statistics


_histogram_t = _return_type("histogram", ("hist", "bin_edges"))


def histogram(
    input: Tensor, bins=100, *, range=None, weight: Tensor | None = None, density: builtins.bool = False
):
    """``(hist, bin_edges)``: counts (or ``weight`` sums, or a density) of ``input``'s elements in
    ``bins`` equal bins over ``range`` (the data's span by default), or in the bins a 1-D tensor of
    edges delimits."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_dtype_name(input.dtype)}'")
    edges = _np_of(bins) if isinstance(bins, Tensor) else bins
    weights = None if weight is None else _np_of(weight).reshape(-1)
    hist, bin_edges = np.histogram(
        _np_of(input).reshape(-1), edges, range=range, weights=weights, density=density
    )
    return _histogram_t(_from_np(hist, input.dtype), _from_np(bin_edges, input.dtype))


_histogramdd_t = _return_type("histogramdd", ("hist", "bin_edges"))


def histogramdd(
    input: Tensor, bins=10, *, range=None, weight: Tensor | None = None, density: builtins.bool = False
):
    """``(hist, bin_edges)`` of the points in the rows of ``input`` (``[..., D]``): a
    ``D``-dimensional histogram with ``bins`` equal bins per dimension (an int, or one per
    dimension), or the bins tensors of edges delimit; ``range`` is ``[left_0, right_0, left_1,
    ...]``, each dimension's data span by default."""
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_dtype_name(input.dtype)}'")
    dims = input.shape[-1]
    if not isinstance(bins, int):
        for d, edges in enumerate(bins):
            if isinstance(edges, Tensor) and edges.dtype != input.dtype:
                raise RuntimeError(
                    "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input "
                    f"with dtype {_dtype_name(input.dtype).lower()} and bins for dimension {d} with dtype "
                    f"{_dtype_name(edges.dtype).lower()}"
                )
        bins = [_np_of(b) if isinstance(b, Tensor) else b for b in bins]
        if len(bins) != dims:
            raise RuntimeError(
                "histogramdd: The size of bins must be equal to the innermost dimension of the input."
            )
    if range is not None:
        if len(range) != 2 * dims:
            raise RuntimeError(
                f"torch.histogramdd: for a {dims}-dimensional histogram range should have "
                f"{2 * dims} elements, but got {len(range)}"
            )
        range = [(range[2 * d], range[2 * d + 1]) for d in builtins.range(dims)]
    weights = None if weight is None else _np_of(weight).reshape(-1)
    hist, edges = np.histogramdd(
        _np_of(input).reshape(-1, dims), bins, range=range, weights=weights, density=density
    )
    return _histogramdd_t(_from_np(hist, input.dtype), tuple(_from_np(e, input.dtype) for e in edges))


def _gradient_along(f: Tensor, d: int, spacing, edge_order: int) -> Tensor:
    n = f.shape[d]
    part = lambda start, length: f.narrow(d, start, length)  # noqa: E731
    if not isinstance(spacing, Tensor):
        h = spacing
        inner_ = (part(2, n - 2) - part(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / h
            last = (part(n - 1, 1) - part(n - 2, 1)) / h
        else:
            first = (part(0, 1) * -3 + part(1, 1) * 4 - part(2, 1)) / (2 * h)
            last = (part(n - 1, 1) * 3 - part(n - 2, 1) * 4 + part(n - 3, 1)) / (2 * h)
        return _C.cat([first, inner_, last], d)
    # Coordinates: second-order differences on the uneven grid (the central ones exact for
    # quadratics), with the edges one- or two-sided.
    dx = spacing.diff().to(f.dtype)
    inner_shape = [n - 2 if i == d else 1 for i in range(f.dim())]
    hd, hs = dx[:-1].reshape(inner_shape), dx[1:].reshape(inner_shape)
    inner_ = (
        part(0, n - 2) * (-hs / (hd * (hd + hs)))
        + part(1, n - 2) * ((hs - hd) / (hd * hs))
        + part(2, n - 2) * (hd / (hs * (hd + hs)))
    )
    if edge_order == 1:
        first = (part(1, 1) - part(0, 1)) / dx[0]
        last = (part(n - 1, 1) - part(n - 2, 1)) / dx[-1]
    else:
        a, b = dx[0], dx[1]
        first = (
            part(0, 1) * (-(2 * a + b) / (a * (a + b)))
            + part(1, 1) * ((a + b) / (a * b))
            + part(2, 1) * (-a / (b * (a + b)))
        )
        a, b = dx[-2], dx[-1]
        last = (
            part(n - 3, 1) * (b / (a * (a + b)))
            + part(n - 2, 1) * (-(a + b) / (a * b))
            + part(n - 1, 1) * ((2 * b + a) / (b * (a + b)))
        )
    return _C.cat([first, inner_, last], d)


def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative estimate of ``input`` along each of ``dim`` (all dimensions by default): central
    differences inside, one-sided differences of order ``edge_order`` (1 or 2) at the edges.
    ``spacing`` is one step for all dimensions, one per dimension, or one coordinate tensor per
    dimension."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(range(input.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [_wrap_dim(d, input.dim()) for d in dims]
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            what = (
                "'self.dim() = " + str(input.dim()) + "', since dim argument was not given"
                if dim is None
                else "'dim'"
            )
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to "
                f"{what}, but got a list of length {len(spacing)}"
            )
        spacings = list(spacing)
    else:
        spacings = [spacing.item() if isinstance(spacing, Tensor) else spacing] * len(dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    f = input if input.dtype.is_floating_point or input.dtype.is_complex else input.to(_C.get_default_dtype())
    return tuple(_gradient_along(f, d, s, edge_order) for d, s in zip(dims, spacings))


# --------------------------------------------------------------------------- factories


def scalar_tensor(s, *, dtype=None, requires_grad: builtins.bool = False, **_) -> Tensor:
    """A 0-d tensor holding ``s``, of the default floating dtype unless one is given."""
    return _C.full((), s, dtype=dtype or _C.get_default_dtype()).requires_grad_(requires_grad)


def empty_strided(size, stride, *, dtype=None, requires_grad: builtins.bool = False, **_) -> Tensor:
    """An uninitialised tensor of ``size``. ferrograd cannot create tensors with arbitrary strides,
    so the result is contiguous whatever ``stride`` says (after checking it has one per dimension)."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(
            f"dimensionality of sizes ({len(size)}) must match dimensionality of strides ({len(stride)})"
        )
    return _C.empty(size, dtype=dtype or _C.get_default_dtype()).requires_grad_(requires_grad)


# --------------------------------------------------------------------------- functional ops at top level


def _functional():
    # nn.functional imports the top-level package, so it is fetched when first used.
    from .nn import functional

    return functional


def _from_functional(name: str):
    """``ferrograd.name``: ``nn.functional.name`` with the same signature."""

    def fn(*args, **kwargs):
        return getattr(_functional(), name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``ferrograd.nn.functional.{name}``."
    return fn


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _dropout_form(name: str):
    """``torch.name(input, p, train)``: ``nn.functional.name`` with ``train`` for ``training``."""

    def fn(input: Tensor, p: float, train: builtins.bool) -> Tensor:
        return getattr(_functional(), name)(input, p, train)

    fn.__name__ = fn.__qualname__ = name
    return fn


def _max_pool_form(name: str):
    """``torch.name``: ``nn.functional.name`` where an empty ``stride`` means the kernel size; no
    indices."""

    def fn(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return getattr(_functional(), name)(input, kernel_size, stride or None, padding, dilation, ceil_mode)

    fn.__name__ = fn.__qualname__ = name
    return fn


def _embedding(
    weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq=False, sparse=False
):
    """``torch.embedding(weight, indices, ...)``: the weight first, ``padding_idx=-1`` for none."""
    return _functional().embedding(indices, weight, None if padding_idx < 0 else padding_idx)


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5, cudnn_enable=True):
    """``torch.layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable)``."""
    return _functional().layer_norm(input, normalized_shape, weight, bias, eps)


def _group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5, cudnn_enabled=True):
    """``torch.group_norm(input, num_groups, weight, bias, eps, cudnn_enabled)``."""
    return _functional().group_norm(input, num_groups, weight, bias, eps)


def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``torch.batch_norm``: the affine parameters before the running statistics."""
    return _functional().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _instance_norm(
    input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled
):
    """``torch.instance_norm``: the affine parameters before the running statistics."""
    return _functional().instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


def _max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool1d_with_indices``: ``(values, indices)``."""
    F = _functional()
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode, return_indices=True)


def _adaptive_max_pool1d(input, output_size):
    """``torch.adaptive_max_pool1d``: ``(values, indices)``."""
    return _functional().adaptive_max_pool1d(input, output_size, return_indices=True)


def _kl_div(input, target, reduction: int = 1, *, log_target: builtins.bool = False):
    """``torch.kl_div``: ``reduction`` as PyTorch's enum (0 none, 1 mean, 2 sum)."""
    return _functional().kl_div(input, target, reduction=_REDUCTIONS[reduction], log_target=log_target)


def _bce_with_logits(input, target, weight=None, pos_weight=None, reduction: int = 1):
    """``torch.binary_cross_entropy_with_logits``: ``reduction`` as PyTorch's enum."""
    return _functional().binary_cross_entropy_with_logits(
        input, target, weight, reduction=_REDUCTIONS[reduction], pos_weight=pos_weight
    )


def _threshold(input, threshold, value):
    """``torch.threshold(input, threshold, value)``."""
    return _functional().threshold(input, threshold, value)


_TOP_LEVEL_FUNCTIONAL = {
    **{
        name: _from_functional(name)
        for name in (
            "conv1d conv2d conv3d conv_transpose1d conv_transpose2d avg_pool1d adaptive_avg_pool1d "
            "pixel_shuffle pixel_unshuffle cosine_similarity pairwise_distance selu celu prelu "
            "hardshrink rms_norm conv_transpose3d pdist rrelu channel_shuffle conv_tbc"
        ).split()
    },
    "max_pool1d_with_indices": _max_pool1d_with_indices,
    "adaptive_max_pool1d": _adaptive_max_pool1d,
    **{name: _dropout_form(name) for name in ("dropout", "alpha_dropout", "feature_alpha_dropout")},
    "embedding": _embedding,
    "layer_norm": _layer_norm,
    "group_norm": _group_norm,
    "batch_norm": _batch_norm,
    "instance_norm": _instance_norm,
    **{name: _max_pool_form(name) for name in ("max_pool1d", "max_pool2d", "max_pool3d")},
    "kl_div": _kl_div,
    "binary_cross_entropy_with_logits": _bce_with_logits,
    "threshold": _threshold,
}


# Offered both as ``ferrograd.name(input, ...)`` and as ``input.name(...)``.
_FUNCTIONS_AND_METHODS = {
    "absolute": Tensor.abs,
    "greater": Tensor.gt,
    "greater_equal": Tensor.ge,
    "less": Tensor.lt,
    "less_equal": Tensor.le,
    "not_equal": Tensor.ne,
    "swapdims": Tensor.transpose,
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
    "is_signed": lambda input: input.dtype.is_signed,
    "index_copy": index_copy,
    "index_fill": index_fill,
    "masked_scatter": masked_scatter,
    "take": take,
    "put": put,
    "aminmax": aminmax,
    "logcumsumexp": logcumsumexp,
    "renorm": renorm,
    "hsplit": hsplit,
    "vsplit": vsplit,
    "dsplit": dsplit,
    "as_strided_scatter": as_strided_scatter,
    "diagonal_scatter": diagonal_scatter,
    "select_scatter": select_scatter,
    "slice_scatter": slice_scatter,
    "isposinf": isposinf,
    "isneginf": isneginf,
    "isreal": isreal,
    "frexp": frexp,
    "ldexp": ldexp,
    "gcd": gcd,
    "lcm": lcm,
    "svd": svd,
    "qr": qr,
    "cholesky": cholesky,
    "cholesky_solve": cholesky_solve,
    "cholesky_inverse": cholesky_inverse,
    "triangular_solve": triangular_solve,
    "pinverse": pinverse,
    "matrix_power": matrix_power,
    "matrix_exp": matrix_exp,
    "adjoint": _adjoint,
    "histogram": histogram,
    "mvlgamma": multigammaln,
    "index_reduce": index_reduce,
    "nonzero_static": nonzero_static,
}

FUNCTIONS = {
    **_FUNCTIONS_AND_METHODS,
    "concat": _C.cat,
    "concatenate": _C.cat,
    "rsub": rsub,
    "histogramdd": histogramdd,
    "std_mean": std_mean,
    "var_mean": var_mean,
    "isin": isin,
    "unravel_index": unravel_index,
    "logspace": logspace,
    "hann_window": hann_window,
    "kaiser_window": kaiser_window,
    "hamming_window": hamming_window,
    "blackman_window": blackman_window,
    "bartlett_window": bartlett_window,
    "polygamma": lambda n, input: input.polygamma(n),
    "strided": strided,
    "layout": layout,
    "chain_matmul": chain_matmul,
    "nuclear_norm": nuclear_norm,
    "frobenius_norm": frobenius_norm,
    "vander": vander,
    "gradient": gradient,
    "scalar_tensor": scalar_tensor,
    "empty_strided": empty_strided,
    "cond": cond,
    "while_loop": while_loop,
    "get_device": lambda input: -1,
    **_TOP_LEVEL_FUNCTIONAL,
}

METHODS = {
    **_FUNCTIONS_AND_METHODS,
    "absolute_": Tensor.abs_,
    "__contains__": _contains,
    "tile": _tile,
    "ndimension": Tensor.dim,
    "const_data_ptr": Tensor.data_ptr,
    "get_device": lambda self: -1,
    "new_tensor": _new_tensor,
    "fill_diagonal_": _fill_diagonal_,
    "exponential_": _random_fill(_exponential, "exponential_"),
    "geometric_": _random_fill(_geometric, "geometric_"),
    "log_normal_": _random_fill(_log_normal, "log_normal_"),
    "cauchy_": _random_fill(_cauchy, "cauchy_"),
    "mH": property(_mH, doc="The conjugate transpose of the last two dimensions."),
    "H": property(_H, doc="The conjugate transpose of a matrix."),
    "is_cpu": property(lambda self: True, doc="Always True: ferrograd tensors live in CPU memory."),
    "layout": property(lambda self: strided, doc="Always ``ferrograd.strided``."),
    "put_": _put_,
    "sum_to_size": sum_to_size,
    "multinomial": lambda self, num_samples, replacement=False, *, generator=None: _C.multinomial(
        self, num_samples, replacement, generator=generator
    ),
    "prelu": lambda self, weight: _functional().prelu(self, weight),
    "hardshrink": lambda self, lambd=0.5: _functional().hardshrink(self, lambd),
    "multiply_": Tensor.mul_,
    "true_divide_": Tensor.div_,
    "dim_order": _dim_order,
    "is_set_to": _is_set_to,
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
    "cumsum": Tensor.cumsum,
    "cumprod": Tensor.cumprod,
    "tril": Tensor.tril,
    "triu": Tensor.triu,
    "addmv": addmv,
    "addr": addr,
    "baddbmm": baddbmm,
    "addbmm": addbmm,
    "addmm": Tensor.addmm,
    "conj_physical": Tensor.conj_physical,
    "index_copy": index_copy,
    "index_fill": index_fill,
    "masked_scatter": masked_scatter,
    "renorm": renorm,
    "ldexp": ldexp,
    "gcd": gcd,
    "lcm": lcm,
    "mvlgamma": multigammaln,
    "index_reduce": index_reduce,
}.items():
    METHODS[_name + "_"] = _copy_result(_fn, _name + "_")
for _name, _fn in {"greater_": "gt_", "greater_equal_": "ge_", "less_": "lt_", "less_equal_": "le_"}.items():
    METHODS[_name] = METHODS[_fn]
METHODS["not_equal_"] = METHODS["ne_"]
del _name, _fn

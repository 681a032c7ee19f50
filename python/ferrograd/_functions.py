"""Top-level functions composed of existing differentiable tensor ops.

Every function here builds its result from ferrograd's own ops (views, ``cat``,
``where``, reductions, ``matmul``/``bmm``...), so autograd, double backward and
hooks work through them exactly as through the ops they are made of.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import itertools
import math
import warnings
from collections.abc import Sequence

import numpy as np

from . import _C
from ._C import (
    Tensor,
    complex64,
    complex128,
    float32,
    float64,
    get_default_dtype,
    int32,
    int64,
)
from ._C import bool as _bool
from ._dtype_info import result_type
from ._size import Size
from .autograd.function import Function
from .autograd.grad_mode import no_grad

_FLOAT_TYPES = (float32, float64)


# --------------------------------------------------------------------------- helpers


def _is_seq(x) -> builtins.bool:
    return isinstance(x, (list, tuple))


def _as_tensor(x, like: Tensor | None = None) -> Tensor:
    if isinstance(x, Tensor):
        return x
    from . import tensor

    if like is not None and isinstance(x, (int, float)) and not isinstance(x, builtins.bool):
        if like.dtype.is_floating_point or like.dtype.is_complex:
            return tensor(x, dtype=like.dtype)
    return tensor(x)


def _number_as_tensor(number, other) -> Tensor:
    """A Python number as the 0-d tensor PyTorch makes of it next to ``other``: of the dtype the
    two promote to (so the number still ranks lowest in type promotion), its value read in its
    widest type and then converted, wrapping as PyTorch does (-3 next to a uint8 tensor is 253)."""
    value = np.array(number)
    return _from_np(value).to(result_type(value.item(), other))


def _promote(*dtypes):
    """PyTorch's promotion between tensor dtypes of the same category rules."""
    return functools.reduce(_C.promote_types, dtypes)


def _to_float(x: Tensor) -> Tensor:
    """Integer and bool tensors become the default float dtype, as PyTorch's float ops do."""
    if x.dtype.is_floating_point or x.dtype.is_complex:
        return x
    return x.to(get_default_dtype())


def _wrap_dim(dim: int, ndim: int, name: str | None = None) -> int:
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def _tensors_arg(tensors, name: str) -> list[Tensor]:
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    return list(tensors)


def _zero_grad_like(value: Tensor, graph: Tensor) -> Tensor:
    """``value`` itself, but connected to ``graph`` with a zero gradient (for rounding ops)."""
    if not graph.requires_grad:
        return value
    keep = _C.ones(value.shape, dtype=_bool)
    return graph.where(keep.logical_not(), value)


# --------------------------------------------------------------------------- joining and shape


def atleast_1d(*tensors):
    """Views of the inputs with at least one dimension (a 0-d tensor becomes shape ``(1,)``)."""
    return _atleast(tensors, 1)


def atleast_2d(*tensors):
    """Views with at least two dimensions: a 1-d tensor of size ``N`` becomes ``(1, N)``."""
    return _atleast(tensors, 2)


def atleast_3d(*tensors):
    """Views with at least three dimensions: ``(N,)`` becomes ``(1, N, 1)``, ``(M, N)`` becomes ``(M, N, 1)``."""
    return _atleast(tensors, 3)


def _atleast_one(t: Tensor, n: int) -> Tensor:
    d = t.dim()
    if d >= n:
        return t
    if n == 1:
        return t.reshape(1)
    if n == 2:
        return t.reshape(1, 1) if d == 0 else t.unsqueeze(0)
    if d == 0:
        return t.reshape(1, 1, 1)
    if d == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1)


def _atleast(tensors, n: int):
    if len(tensors) == 1:
        only = tensors[0]
        if isinstance(only, Tensor):
            return _atleast_one(only, n)
        tensors = tuple(only)
    return tuple(_atleast_one(t, n) for t in tensors)


def _check_nonempty(tensors, name):
    if len(tensors) == 0:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def hstack(tensors) -> Tensor:
    """Stacks tensors horizontally: along dim 0 for 1-d inputs, else along dim 1."""
    tensors = _tensors_arg(tensors, "hstack")
    _check_nonempty(tensors, "hstack")
    rep = [_atleast_one(t, 1) for t in tensors]
    return _C.cat(rep, 0 if rep[0].dim() == 1 else 1)


def _stack_at_least(tensors, name: str, ndim: int, dim: int) -> Tensor:
    """``tensors``, each made at least ``ndim``-d, concatenated along ``dim`` (errors name ``name``)."""
    tensors = _tensors_arg(tensors, name)
    _check_nonempty(tensors, name)
    return _C.cat([_atleast_one(t, ndim) for t in tensors], dim)


def vstack(tensors) -> Tensor:
    """Stacks tensors vertically (row-wise) after making them at least 2-d."""
    return _stack_at_least(tensors, "vstack", 2, 0)


def row_stack(tensors) -> Tensor:
    """Alias of :func:`vstack`."""
    return _stack_at_least(tensors, "row_stack", 2, 0)


def dstack(tensors) -> Tensor:
    """Stacks tensors depth-wise (along dim 2) after making them at least 3-d."""
    return _stack_at_least(tensors, "dstack", 3, 2)


def column_stack(tensors) -> Tensor:
    """Stacks 0-d and 1-d tensors as columns (and 2-d ones as they are) along dim 1."""
    tensors = _tensors_arg(tensors, "column_stack")
    _check_nonempty(tensors, "column_stack")
    cols = [t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors]
    return _C.cat(cols, 1)


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple[Tensor, ...]:
    """Splits ``input`` along ``dim`` into views: ``n`` nearly equal sections (the first
    ``size % n`` one element longer), or at the given indices."""
    if input.dim() == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    if isinstance(indices_or_sections, Tensor):
        ios = indices_or_sections
        if ios.dtype != int64:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                + _dtype_name(ios.dtype)
            )
        if ios.dim() > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                f"one-dimensional tensor, but got a tensor with {ios.dim()} dims"
            )
        indices_or_sections = ios.item() if ios.dim() == 0 else [int(v) for v in ios.tolist()]
    dim = _wrap_dim(dim, input.dim())
    size = input.shape[dim]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        base, extra = divmod(size, n)
        try:
            # Allocated up front, so that a count of sections no memory can hold fails at once
            # rather than after filling the machine's memory with views.
            out: list = [None] * n
        except MemoryError:
            raise RuntimeError(f"not enough memory for {n} sections") from None
        start = 0
        for i in range(n):
            length = base + (1 if i < extra else 0)
            out[i] = input.narrow(dim, start, length)
            start += length
        return tuple(out)
    out, start = [], 0
    for idx in list(indices_or_sections) + [size]:
        idx = int(idx)
        if idx < 0:
            idx += size
        idx = builtins.min(builtins.max(idx, 0), size)
        out.append(input.narrow(dim, start, builtins.max(idx - start, 0)))
        start = idx
    return tuple(out)


def _dtype_name(dt) -> str:
    return dt._scalar_type_name


def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of the given shapes broadcast to."""
    shapes = tuple((x,) if isinstance(x, int) else x for x in shapes if x is not None)
    for shape in shapes:
        if not _is_seq(shape):
            raise RuntimeError(
                f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}"
            )
    common = [1] * builtins.max((len(s) for s in shapes), default=0)
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
                continue
            if shape[idx] == 1:
                continue
            raise RuntimeError(
                f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! "
                f"Mismatching argument at index {arg_idx} had {shape}; but expected shape "
                f"should be broadcastable to {common}"
            )
    return Size(int(v) for v in common)


def broadcast_to(input: Tensor, size) -> Tensor:
    """A view of ``input`` expanded to ``size`` (``-1`` keeps a dimension)."""
    return input.expand(*size) if _is_seq(size) else input.expand(size)


def _broadcast_pair(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """The shape ``a`` and ``b`` broadcast to, with PyTorch's error when they do not, which
    names the last mismatched dimension (dimensions are matched from the right)."""
    n = builtins.max(len(a), len(b))
    a, b = [1] * (n - len(a)) + list(a), [1] * (n - len(b)) + list(b)
    for d in reversed(range(n)):
        if a[d] != b[d] and a[d] != 1 and b[d] != 1:
            raise RuntimeError(
                f"The size of tensor a ({a[d]}) must match the size of tensor b ({b[d]}) "
                f"at non-singleton dimension {d}"
            )
    return [y if x == 1 else x for x, y in zip(a, b)]


def broadcast_tensors(*tensors) -> tuple[Tensor, ...]:
    """Views of the inputs expanded to their common broadcast shape."""
    if len(tensors) == 1 and _is_seq(tensors[0]):
        tensors = tuple(tensors[0])
    common: list[int] = []
    for t in tensors:
        common = _broadcast_pair(common, t.shape)
    return tuple(t.expand(*common) for t in tensors)


def tile(input: Tensor, dims) -> Tensor:
    """Repeats ``input`` along each dimension; ``dims`` shorter than ``input.dim()`` is padded with ones."""
    if isinstance(dims, int):
        dims = (dims,)
    dims = tuple(dims)
    if len(dims) < input.dim():
        dims = (1,) * (input.dim() - len(dims)) + dims
    return input.repeat(*dims)


def repeat_interleave(input: Tensor, repeats=None, dim: int | None = None, *, output_size: int | None = None):
    """Repeats each element ``repeats`` times (an int, or a tensor of per-element counts) along ``dim``
    (the flattened input when ``dim`` is None). ``repeat_interleave(counts)`` repeats ``arange(len(counts))``."""
    if repeats is None:
        counts = input
        if counts.dim() != 1:
            raise RuntimeError("repeats must be 1-d tensor")
        if counts.dtype != int64:
            raise RuntimeError("repeats has to be Long or Int tensor")
        vals = counts.tolist()
        if any(v < 0 for v in vals):
            raise RuntimeError("repeats can not be negative")
        return _C.from_numpy(np.repeat(np.arange(len(vals), dtype=np.int64), vals))
    if dim is None:
        input = input.reshape(-1)
        dim = 0
    if input.dim() == 0:  # with an explicit dim: PyTorch's messages for either kind of repeats
        if isinstance(repeats, Tensor):
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        got = 1 if dim in (0, -1) else dim
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {got})")
    dim = _wrap_dim(dim, input.dim())
    # A single count (an int, or a tensor of one element) applies to every slice.
    if isinstance(repeats, Tensor) and repeats.dim() <= 1 and repeats.numel() == 1:
        repeats = int(repeats.item())
    if isinstance(repeats, int):
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        repeats = [repeats] * input.shape[dim]
    if not isinstance(repeats, Tensor):
        repeats = _C.from_numpy(np.array(repeats, dtype=np.int64).reshape(-1))
    if repeats.dim() != 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    counts = repeats.tolist()
    if len(counts) != input.shape[dim]:
        raise RuntimeError(
            "repeats must have the same size as input along dim, but got "
            f"repeats.size(0) = {len(counts)} and input.size({dim}) = {input.shape[dim]}"
        )
    if any(v < 0 for v in counts):
        raise RuntimeError("repeats can not be negative")
    index = _C.from_numpy(np.repeat(np.arange(len(counts), dtype=np.int64), counts))
    return input.index_select(dim, index)


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    """Expands dimension ``dim`` into ``sizes`` (one entry may be ``-1``)."""
    sizes = tuple(int(s) for s in sizes)
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if input.dim() == 0:
        raise IndexError(
            "Dimension specified as 0 but tensor has no dimensions"
            if dim in (0, -1)
            else f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})"
        )
    dim = _wrap_dim(dim, input.dim())
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in sizes if s != -1)
    size = input.shape[dim]
    if -1 in sizes:
        if known == 0 or size % known:
            raise RuntimeError(
                f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                f"({size}) in the input tensor"
            )
        sizes = tuple(size // known if s == -1 else s for s in sizes)
    elif known != size:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
            f"({size}) in the input tensor"
        )
    shape = list(input.shape)
    return input.reshape(shape[:dim] + list(sizes) + shape[dim + 1 :])


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotates ``input`` by 90 degrees ``k`` times in the plane of ``dims``, from the first towards the second."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = dims
    if d0 == d1 or (d0 - d1) % input.dim() == 0:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    n = input.dim()
    if not (-n <= d0 < n and -n <= d1 < n):
        raise RuntimeError(
            f"Rotation dim0 out of range, dim0 = {d0}"
            if not -n <= d0 < n
            else f"Rotation dim1 out of range, dim1 = {d1}"
        )
    k %= 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip(d0, d1)
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


def fliplr(input: Tensor) -> Tensor:
    """Flips a tensor of at least 2 dimensions left to right (along dim 1)."""
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return input.flip(1)


def flipud(input: Tensor) -> Tensor:
    """Flips a tensor of at least 1 dimension up to down (along dim 0)."""
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return input.flip(0)


def block_diag(*tensors) -> Tensor:
    """A block-diagonal matrix of the given (0-, 1- or 2-d) tensors, zeros elsewhere."""
    mats = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.dim()} dimensions"
            )
        mats.append(t.reshape(1, 1) if t.dim() == 0 else t.unsqueeze(0) if t.dim() == 1 else t)
    if not mats:
        return _C.empty(1, 0)
    dt = _promote(*[m.dtype for m in mats])
    mats = [m.to(dt) for m in mats]
    total = builtins.sum(m.shape[1] for m in mats)
    rows, col = [], 0
    for m in mats:
        r, c = m.shape
        parts = []
        if col:
            parts.append(_C.zeros(r, col, dtype=dt))
        parts.append(m)
        if total - col - c:
            parts.append(_C.zeros(r, total - col - c, dtype=dt))
        rows.append(_C.cat(parts, 1) if len(parts) > 1 else m)
        col += c
    return _C.cat(rows, 0)


def meshgrid(*tensors, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids of 0- or 1-d tensors: ``indexing='ij'`` (matrix order) or ``'xy'`` (Cartesian,
    first two output dimensions swapped). Without ``indexing`` it warns and uses ``'ij'``, as PyTorch does."""
    if len(tensors) == 1 and _is_seq(tensors[0]):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if len(tensors) == 0:
        raise RuntimeError("torch.meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(
                f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {_repr_short(t)}"
            )
    for t in tensors[1:]:
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.numel() for t in ts]
    out = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        out.append(t.reshape(view).expand(*shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def _repr_short(t: Tensor) -> str:
    return repr(t)


def cartesian_prod(*tensors) -> Tensor:
    """The Cartesian product of 1-d tensors as rows of a 2-d tensor (a single input is returned as is)."""
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return _C.stack([g.reshape(-1) for g in grids], 1)


def _tri_indices(row: int, col: int, offset: int, dtype, upper: builtins.bool) -> Tensor:
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if upper:
        r, c = np.triu_indices(row, offset, col)
    else:
        r, c = np.tril_indices(row, offset, col)
    if dtype not in (None, int64):
        name = "triu_indices" if upper else "tril_indices"
        raise NotImplementedError(f"\"{name}\" not implemented for '{_dtype_name(dtype)}'")
    return _C.from_numpy(np.stack([r, c]).astype(np.int64).reshape(2, -1))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """A ``2 x N`` tensor of the row and column indices of the lower triangle of a ``row x col`` matrix."""
    return _tri_indices(row, col, offset, dtype, upper=False)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """A ``2 x N`` tensor of the row and column indices of the upper triangle of a ``row x col`` matrix."""
    return _tri_indices(row, col, offset, dtype, upper=True)


def combinations(input: Tensor, r: int = 2, with_replacement: builtins.bool = False) -> Tensor:
    """The length-``r`` combinations of a 1-d tensor's elements as rows (like ``itertools.combinations``)."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    make = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(make(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    if idx.shape[0] == 0:
        return input.new_empty(0, r)
    out = input.index_select(0, _C.from_numpy(np.ascontiguousarray(idx.reshape(-1))))
    return out.reshape(-1, r)


# --------------------------------------------------------------------------- elementwise math


def subtract(input, other, *, alpha=1) -> Tensor:
    """``input - alpha * other``; alias of :func:`sub`, ``input`` may be a Python number as there."""
    if not isinstance(input, Tensor):
        input = _number_as_tensor(input, other)
    return input.sub(other, alpha=alpha) if alpha != 1 else input.sub(other)


def divide(input, other, *, rounding_mode: str | None = None) -> Tensor:
    """``input / other``; ``rounding_mode='trunc'`` rounds towards zero, ``'floor'`` towards minus
    infinity (both keep integer dtypes and give zero gradients)."""
    if rounding_mode is None:
        if not isinstance(input, Tensor):
            input = _as_tensor(input, other if isinstance(other, Tensor) else None)
        return Tensor.div(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '"
            + str(rounding_mode)
            + "'"
        )
    # Python numbers take the result dtype first, as in PyTorch: uint8 values divided by -3 are
    # divided by 253.
    if not isinstance(input, Tensor):
        input = _number_as_tensor(input, other)
    if not isinstance(other, Tensor):
        other = _number_as_tensor(other, input)
    dtype = result_type(input, other)
    with no_grad():
        if rounding_mode == "floor":
            quotient = input.floor_divide(other)
        elif dtype == _bool or dtype.is_complex:
            raise NotImplementedError(f"\"div_trunc_cpu\" not implemented for '{_dtype_name(dtype)}'")
        elif dtype.is_floating_point:
            quotient = Tensor.div(input, other).trunc()
        else:
            # What fmod leaves is an exact multiple of the divisor, so its floor quotient is the
            # truncated one (and a zero divisor raises as floor division does).
            quotient = input.sub(input.fmod(other)).floor_divide(other)
    # The rounded quotient is piecewise constant: zero gradients, as in PyTorch, which the
    # quotient's own would not give where the divisor is 0 or the dividend infinite (NaN there).
    for operand in (input, other):
        quotient = _zero_grad_like(quotient, operand)
    return quotient


def float_power(input, exponent) -> Tensor:
    """``input ** exponent`` computed in double precision (complex128 for complex operands)."""
    cplx = (
        (isinstance(input, Tensor) and input.dtype.is_complex)
        or (isinstance(exponent, Tensor) and exponent.dtype.is_complex)
        or isinstance(exponent, builtins.complex)
        or isinstance(input, builtins.complex)
    )
    dt = complex128 if cplx else float64
    if not isinstance(input, Tensor):
        from . import tensor

        return tensor(input, dtype=dt).pow(exponent.to(dt))
    if isinstance(exponent, Tensor):
        exponent = exponent.to(dt)
    return input.to(dt).pow(exponent)


class _TimesLog(Function):
    """``x * log(y - pole)`` of two tensors of one dtype and shape (``xlogy`` with pole 0,
    ``xlog1py`` with pole -1 through ``log1p``), differentiated by PyTorch's formulas: ``op(grad,
    y)`` for ``x``, made 0 where ``x`` is 0 and ``y <= pole`` (but ``inf`` at ``x = 0, y = inf``),
    and ``grad * x / (y - pole)`` for ``y`` (NaN at ``x = 0, y = pole``). The backward is made of
    differentiable ops, so it differentiates again."""

    _jvp_from_backward = True

    @staticmethod
    def forward(ctx, x: Tensor, y: Tensor, op, value, pole: float) -> Tensor:
        ctx.save_for_backward(x, y)
        ctx.op, ctx.pole = op, pole
        return value(x, y)

    @staticmethod
    def backward(ctx, grad: Tensor):
        x, y = ctx.saved_tensors
        grad_x = grad_y = None
        if ctx.needs_input_grad[0]:
            keep = x.eq(0).logical_and(y.le(ctx.pole)).logical_not()
            grad_x = ctx.op(grad, y).where(keep, 0.0)
        if ctx.needs_input_grad[1]:
            grad_y = grad * x / (y - ctx.pole)
        return grad_x, grad_y, None, None, None


def _xlogy_value(x: Tensor, y: Tensor) -> Tensor:
    # x * log(y) is already 0 where x is 0 and y is positive and finite; where y would make
    # the product NaN (y <= 0 or infinite) the logarithm is replaced by 0.
    bad = x.eq(0).logical_and(y.le(0).logical_or(y.isinf()))
    return x * y.where(bad.logical_not(), 1.0).log()


def _same_dtype_and_shape(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """``x`` and ``y`` cast to their result type and broadcast together (differentiably), for the
    elementwise ``Function`` s below, whose gradients have the shapes and dtypes of their inputs."""
    dt = result_type(x, y)
    x, y = x.to(dt), y.to(dt)
    if tuple(x.shape) != tuple(y.shape):
        x, y = broadcast_tensors(x, y)
    return x, y


def xlogy(input, other) -> Tensor:
    """``input * log(other)``, with 0 where ``input`` is 0 (and NaN where ``other`` is NaN)."""
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise TypeError("xlogy(): at least one of input and other must be a Tensor")
        input = _as_tensor(float(input), _to_float(other))
    if not isinstance(other, Tensor):
        other = _as_tensor(float(other), _to_float(input))
    x, y = _to_float(input), _to_float(other)
    if not (x.requires_grad or y.requires_grad) or not _C.is_grad_enabled():
        dt = _promote(x.dtype, y.dtype) if x.dim() and y.dim() else None
        if dt is not None:
            x, y = x.to(dt), y.to(dt)
        return _xlogy_value(x, y)
    return _TimesLog.apply(*_same_dtype_and_shape(x, y), xlogy, _xlogy_value, 0.0)


class _Logit(Function):
    """``logit`` differentiated as PyTorch does when its gradient may be differentiated again
    (``infinitely_differentiable_logit_backward``): ``grad / (x * (1 - x))`` inside
    ``[eps, 1 - eps]`` and 0 outside it, or, without ``eps``, inside ``[0, 1]`` and NaN outside."""

    _jvp_from_backward = True

    @staticmethod
    def forward(ctx, x: Tensor, eps) -> Tensor:
        ctx.save_for_backward(x)
        ctx.eps = eps
        return _logit_value(x, eps)

    @staticmethod
    def backward(ctx, grad: Tensor):
        (x,) = ctx.saved_tensors
        eps = ctx.eps
        lo, hi = (0.0, 1.0) if eps is None else (eps, 1.0 - eps)
        inside = x.ge(lo).logical_and(x.le(hi))
        return (grad / (x * (1.0 - x))).where(inside, math.nan if eps is None else 0.0), None


def _logit_value(x: Tensor, eps) -> Tensor:
    if eps is not None:
        # PyTorch's ``x < lo ? lo : (x > hi ? hi : x)``: the lower bound wins when eps > 0.5.
        lo, hi = eps, 1.0 - eps
        x = x.where(x.le(hi).logical_or(x.isnan()), hi).where(x.ge(lo).logical_or(x.isnan()), lo)
    return (x / (1.0 - x)).log()


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``; with ``eps`` the input is first clamped to ``[eps, 1 - eps]``."""
    x = _to_float(input)
    if not x.requires_grad or not _C.is_grad_enabled():
        return _logit_value(x, eps)
    return _Logit.apply(x, eps)


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians."""
    return _to_float(input) * (math.pi / 180.0)


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees."""
    return _to_float(input) * (180.0 / math.pi)


def sinc(input: Tensor) -> Tensor:
    """The normalized sinc ``sin(pi x) / (pi x)``, 1 at 0."""
    x = _to_float(input)
    zero = x.eq(0)
    px = x.where(zero.logical_not(), 1.0) * math.pi
    return (px.sin() / px).where(zero.logical_not(), 1.0)


def count_nonzero(input: Tensor, dim=None) -> Tensor:
    """The number of non-zero elements, over all of ``input`` or along ``dim`` (an int or tuple)."""
    nz = input.ne(0)
    if dim is None:
        return nz.sum()
    return nz.sum(dim)


class _NanToZero(Function):
    """``x`` with its NaNs replaced by zeros, whose gradient is PyTorch's for nansum: the incoming
    gradient times the mask of numbers, so that an infinite one (nanmean over nothing but NaNs
    divides by a count of 0) leaves NaN rather than 0 at the NaNs."""

    _jvp_from_backward = True

    @staticmethod
    def forward(ctx, x: Tensor) -> Tensor:
        numbers = x.isnan().logical_not()
        ctx.save_for_backward(numbers)
        return x.where(numbers, 0.0)

    @staticmethod
    def backward(ctx, grad: Tensor) -> Tensor:
        (numbers,) = ctx.saved_tensors
        return grad * numbers


def nansum(input: Tensor, dim=None, keepdim: builtins.bool = False, *, dtype=None) -> Tensor:
    """The sum treating NaN as zero."""
    x = input
    if x.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if x.dtype.is_floating_point:
        x = _NanToZero.apply(x) if x.requires_grad else x.where(x.isnan().logical_not(), 0.0)
    kwargs = {} if dtype is None else {"dtype": dtype}
    if dim is None:
        return x.sum(**kwargs) if not keepdim else x.sum(tuple(range(x.dim())), True, **kwargs)
    return x.sum(dim, keepdim, **kwargs)


def nanmean(input: Tensor, dim=None, keepdim: builtins.bool = False, *, dtype=None) -> Tensor:
    """The mean of the non-NaN elements."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex) and dtype is None:
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            + _dtype_name(input.dtype)
        )
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    x = input if dtype is None else input.to(dtype)
    count = (
        x.isnan().logical_not().sum(dim, keepdim)
        if dim is not None
        else (
            x.isnan().logical_not().sum()
            if not keepdim
            else x.isnan().logical_not().sum(tuple(range(x.dim())), True)
        )
    )
    return nansum(x, dim, keepdim) / count.to(x.dtype if x.dtype.is_floating_point else get_default_dtype())


def diff(
    input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None
):
    """The ``n``-th forward difference along ``dim`` (logical xor for bool tensors), after
    concatenating ``prepend`` and ``append``."""
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = _wrap_dim(dim, input.dim())

    if n == 0:
        return input

    def as_part(extra: Tensor) -> Tensor:
        if extra.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        return extra

    parts = ([as_part(prepend)] if prepend is not None else []) + [input]
    if append is not None:
        parts.append(as_part(append))
    x = _C.cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[dim]
        if length == 0:
            break
        a = x.narrow(dim, 1, length - 1)
        b = x.narrow(dim, 0, length - 1)
        x = a.logical_xor(b) if x.dtype == _bool else a - b
    return x


def _trapz_core(y: Tensor, dx, dim: int, cumulative: builtins.bool) -> Tensor:
    dim = _wrap_dim(dim, y.dim())
    length = y.shape[dim]
    if length == 0:
        if cumulative:
            return _to_float(y).narrow(dim, 0, 0)
        shape = [s for i, s in enumerate(y.shape) if i != dim]
        return _C.zeros(shape, dtype=_to_float(y).dtype)
    y = _to_float(y)
    avg = (y.narrow(dim, 1, length - 1) + y.narrow(dim, 0, length - 1)) * 0.5
    terms = avg * dx
    return terms.cumsum(dim) if cumulative else terms.sum(dim)


def _trapz(y: Tensor, x, dx, dim: int, name: str, cumulative: builtins.bool) -> Tensor:
    if y.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if x is None:
        return _trapz_core(y, 1.0 if dx is None else dx, dim, cumulative)
    if not isinstance(x, Tensor):
        return _trapz_core(y, x, dim, cumulative)
    d = _wrap_dim(dim, y.dim())
    if x.dim() == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[d] = -1
        dxs = diff(_to_float(x)).reshape(shape)
    else:
        xd = _wrap_dim(dim, x.dim())
        dxs = diff(_to_float(x), dim=xd)
    return _trapz_core(y, dxs, d, cumulative)


def trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim`` with sample points ``x`` (a tensor) or spacing ``dx``."""
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments")
    return _trapz(y, x, dx, dim, "trapezoid", False)


def trapz(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """Alias of :func:`trapezoid`."""
    return _trapz(y, x, dx, dim, "trapezoid", False)


def cumulative_trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoidal integral along ``dim`` (one element shorter than ``y`` there)."""
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments")
    return _trapz(y, x, dx, dim, "cumulative_trapezoid", True)


def _cross(input: Tensor, other: Tensor, dim: int, name: str) -> Tensor:
    if input.dim() != other.dim():
        raise RuntimeError(
            f"{name}: inputs dimension {dim} must have length 3. Got {input.shape[dim] if -input.dim() <= dim < input.dim() else '?'} and "
            f"{other.shape[dim] if -other.dim() <= dim < other.dim() else '?'}"
        )
    a, b = broadcast_tensors(input, other)
    given = dim
    dim = _wrap_dim(dim, a.dim())
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(
            f"{name}: inputs dimension {given} must have length 3. Got {input.shape[dim]} and {other.shape[dim]}"
        )
    a0, a1, a2 = (a.select(dim, i) for i in range(3))
    b0, b1, b2 = (b.select(dim, i) for i in range(3))
    return _C.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The 3-vector cross product along ``dim`` (the first dimension of size 3 when ``dim`` is None)."""
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\n"
            "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
            "The default value of dim will change to agree with that of linalg.cross in a future release.",
            UserWarning,
            stacklevel=2,
        )
        shape = broadcast_shapes(input.shape, other.shape)
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _cross(input, other, dim, "linalg.cross")


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: every element of ``input`` scales a block equal to ``other``."""
    nd = builtins.max(input.dim(), other.dim())
    a = input.reshape([1] * (nd - input.dim()) + list(input.shape))
    b = other.reshape([1] * (nd - other.dim()) + list(other.shape))
    # interleave: a gets a singleton after each dim, b before each dim
    a_view, b_view = [], []
    for sa, sb in zip(a.shape, b.shape):
        a_view += [sa, 1]
        b_view += [1, sb]
    out = a.reshape(a_view) * b.reshape(b_view)
    return out.reshape([sa * sb for sa, sb in zip(a.shape, b.shape)])


def _tensordot_dims(a: Tensor, b: Tensor, dims):
    if isinstance(dims, Tensor):
        if dims.numel() > 1:
            return [int(v) for v in dims[0].tolist()], [int(v) for v in dims[1].tolist()]
        value = int(dims.item())
        if value < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        return list(range(-value, 0)), list(range(value))
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.dim() or dims > b.dim():
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    da, db = dims
    if isinstance(da, int):
        da = [da]
    if isinstance(db, int):
        db = [db]
    return list(da), list(db)


def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    """Contracts the last ``dims`` dimensions of ``a`` with the first of ``b`` (or the listed pairs of
    dimensions) with one matrix product."""
    da, db = _tensordot_dims(a, b, dims)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    for x, y in zip(da, db):
        sx, sy = a.shape[_wrap_dim(x, a.dim())], b.shape[_wrap_dim(y, b.dim())]
        if sx != sy and sx != 1 and sy != 1:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {sx} in dim {x} "
                f"and second has size {sy} in dim {y}"
            )
    da = [_wrap_dim(d, a.dim()) for d in da]
    db = [_wrap_dim(d, b.dim()) for d in db]
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    sizes = [builtins.max(a.shape[x], b.shape[y]) for x, y in zip(da, db)]
    k = math.prod(sizes)
    pa = a.permute(*(free_a + da))
    pb = b.permute(*(db + free_b))
    exp_a = [a.shape[d] for d in free_a] + sizes
    exp_b = sizes + [b.shape[d] for d in free_b]
    pa = pa.expand(*exp_a) if list(pa.shape) != exp_a else pa
    pb = pb.expand(*exp_b) if list(pb.shape) != exp_b else pb
    m = math.prod(a.shape[d] for d in free_a)
    n = math.prod(b.shape[d] for d in free_b)
    dt = _promote(a.dtype, b.dtype)
    res = pa.reshape(m, k).to(dt).mm(pb.reshape(k, n).to(dt))
    return res.reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm of ``input - other``."""
    from .linalg import vector_norm

    return vector_norm(input - other, p)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"):
    """Pairwise ``p``-norm distances between the rows of ``x1`` (``... x P x M``) and ``x2`` (``... x R x M``).
    For ``p=2`` large inputs use a matrix product, as PyTorch does."""
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if not (x1.dtype.is_floating_point and x2.dtype.is_floating_point):
        raise RuntimeError(
            f"cdist only supports floating-point dtypes, X1 got: {_dtype_name(x1.dtype)}"
            if not x1.dtype.is_floating_point
            else f"cdist only supports floating-point dtypes, X2 got: {_dtype_name(x2.dtype)}"
        )
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {_dtype_name(x1.dtype)} but found {_dtype_name(x2.dtype)}")
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    batch = broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    P, R, M = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    a = x1.expand(*batch, P, M)
    b = x2.expand(*batch, R, M)
    use_mm = p == 2 and (
        compute_mode == "use_mm_for_euclid_dist"
        or (compute_mode == "use_mm_for_euclid_dist_if_necessary" and (P > 25 or R > 25))
    )
    if use_mm:
        a_sq = (a * a).sum(-1, True)
        b_sq = (b * b).sum(-1, True)
        d2 = (a_sq - 2.0 * a.matmul(b.transpose(-1, -2)) + b_sq.transpose(-1, -2)).clamp(min=0.0)
        zero = d2.eq(0)
        return d2.where(zero.logical_not(), 1.0).sqrt().where(zero.logical_not(), 0.0)
    diffs = (a.unsqueeze(-2) - b.unsqueeze(-3)).abs()
    if p == 0:
        return _zero_grad_like(diffs.ne(0).sum(-1).to(a.dtype), diffs.sum(-1))
    if p == 1:
        return diffs.sum(-1)
    if math.isinf(p):
        if diffs.shape[-1] == 0:
            return diffs.sum(-1)
        return diffs.amax(-1)
    s = diffs.pow(p).sum(-1)
    zero = s.eq(0)
    return s.where(zero.logical_not(), 1.0).pow(1.0 / p).where(zero.logical_not(), 0.0)


def cov(
    input: Tensor, *, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None
):
    """The covariance matrix of the variables in the rows of ``input`` (observations in columns), with
    optional frequency and observation weights."""
    if input.dim() > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an input with {input.dim()} dimensions"
        )
    x = input.reshape(1, -1) if input.dim() < 2 else input
    x = _to_float(x)
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.dim() > 1:
            raise RuntimeError(
                f"cov(): expected fweights to have one or fewer dimensions but got fweights with {fweights.dim()} dimensions"
            )
        if fweights.dtype != int64:
            raise RuntimeError(
                f"cov(): expected fweights to have integral dtype but got fweights with {_dtype_name(fweights.dtype)} dtype"
            )
        if fweights.numel() != n_obs:
            raise RuntimeError(
                f"cov(): expected fweights to have the same numel as there are observations in the input but got {fweights.numel()} != {n_obs}"
            )
        if n_obs > 0 and builtins.bool((fweights < 0).any()):
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights.to({complex64: float32, complex128: float64}.get(x.dtype, x.dtype))
    if aweights is not None:
        if aweights.dim() > 1:
            raise RuntimeError(
                f"cov(): expected aweights to have one or fewer dimensions but got aweights with {aweights.dim()} dimensions"
            )
        if not aweights.dtype.is_floating_point:
            raise RuntimeError(
                f"cov(): expected aweights to have floating point dtype but got aweights with {_dtype_name(aweights.dtype)} dtype"
            )
        if aweights.numel() != n_obs:
            raise RuntimeError(
                f"cov(): expected aweights to have the same numel as there are observations in the input but got {aweights.numel()} != {n_obs}"
            )
        if n_obs > 0 and builtins.bool((aweights < 0).any()):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.mean(1) if n_obs else x.sum(1) / 0.0
        norm_factor = float(n_obs - correction)
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if correction == 0:
            norm_factor = w_sum
        elif aweights is None:
            norm_factor = w_sum - correction
        else:
            norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    if builtins.bool(norm_factor <= 0):
        norm_factor = norm_factor.clamp(min=0.0) if isinstance(norm_factor, Tensor) else 0.0
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of observations.",
            UserWarning,
            stacklevel=2,
        )
    xc = x - avg.unsqueeze(1)
    xw = xc if w is None else xc * w
    c = xw.matmul(xc.transpose(0, 1).conj()) / norm_factor
    return c.squeeze() if input.dim() < 2 or x.shape[0] == 1 else c


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the rows of ``input``, clipped to ``[-1, 1]``."""
    if input.dim() > 2:
        raise RuntimeError(
            f"corrcoef(): expected input to have two or fewer dimensions but got an input with {input.dim()} dimensions"
        )
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    std = (d.real if d.dtype.is_complex else d).sqrt()
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    if c.dtype.is_complex:
        return _C.complex(c.real.clamp(-1.0, 1.0), c.imag.clamp(-1.0, 1.0))
    return c.clamp(-1.0, 1.0)


def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a 2-d tensor."""
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    return input.diagonal().sum()


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose 2-d planes at ``(dim1, dim2)`` have the last dimension of ``input`` on their
    ``offset`` diagonal, zeros elsewhere."""
    nd = input.dim() + 1
    d1 = _wrap_dim(dim1, nd)
    d2 = _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] if input.dim() else 1
    x = input if input.dim() else input.reshape(1)
    m = n + abs(offset)
    rows = np.arange(n) + builtins.max(-offset, 0)
    cols = np.arange(n) + builtins.max(offset, 0)
    # element i lands at [rows[i], cols[i]]; every other position picks the appended zero
    pos = np.full((m, m), n, dtype=np.int64)
    pos[rows, cols] = np.arange(n)
    padded = _C.cat([x, x.new_zeros(*x.shape[:-1], 1)], -1)
    out = padded.index_select(x.dim() - 1, _C.from_numpy(pos.reshape(-1)))
    out = out.reshape(list(x.shape[:-1]) + [m, m])
    if (d1, d2) != (nd - 2, nd - 1):
        if d1 > d2:
            out = out.transpose(-1, -2)
            d1, d2 = d2, d1
        out = out.movedim((nd - 2, nd - 1), (d1, d2))
    return out


# --------------------------------------------------------------------------- einsum


def _labels_of(sub: str, where: str):
    out = []
    i = 0
    while i < len(sub):
        ch = sub[i]
        if ch == ".":
            if sub[i : i + 3] != "..." or "..." in sub[i + 3 :] or "..." in sub[:i]:
                raise RuntimeError(f"einsum(): found '.' for {where} that is not part of any ellipsis")
            out.append(...)
            i += 3
            continue
        if ch == " ":
            i += 1
            continue
        if not ch.isalpha() or not ch.isascii():
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {i} in the equation string, subscripts must be in [a-zA-Z]"
            )
        out.append(ch)
        i += 1
    return out


def _sublist_labels(sub) -> list:
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append(...)
        else:
            s = int(s)
            if not 0 <= s < 52:
                raise ValueError(
                    "einsum(): subscript in subscript list is not within the valid range [0, 52)"
                )
            out.append(chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
    return out


def _take_diagonal(t: Tensor, d1: int, d2: int) -> Tensor:
    """The diagonal of dims ``d1 < d2`` (equal sizes) as one dim at position ``d1``."""
    n = t.shape[d1]
    moved = t.movedim((d1, d2), (t.dim() - 2, t.dim() - 1))
    flat = moved.reshape(list(moved.shape[:-2]) + [n * n])
    diag = flat[..., :: n + 1] if n > 0 else flat
    return diag.movedim(-1, d1)


def einsum(*args) -> Tensor:
    """Einstein summation: ``einsum('ij,jk->ik', a, b)``, with implicit outputs, ``...`` broadcasting,
    repeated subscripts in one operand (diagonals) and the sublist form ``einsum(a, [0, 1], b, [1, 2])``.
    Contractions are done pair by pair with batched matrix products."""
    if len(args) == 0:
        raise TypeError(
            "einsum(): must specify the equation string and at least one operand, or at least one operand and its subscripts list"
        )
    if isinstance(args[0], str):
        equation = args[0]
        operands = list(args[1:])
        if len(operands) == 1 and _is_seq(operands[0]):
            operands = list(operands[0])
        equation = equation.replace(" ", "")
        if "->" in equation:
            lhs, rhs = equation.split("->", 1)
        else:
            lhs, rhs = equation, None
        subs = lhs.split(",")
        in_labels = [_labels_of(s, "operand " + str(i)) for i, s in enumerate(subs)]
        out_labels = _labels_of(rhs, "output") if rhs is not None else None
    else:
        ops, subl = list(args[0::2]), list(args[1::2])
        out_labels = None
        if len(ops) > len(subl):
            out_labels = _sublist_labels(ops[-1]) if not isinstance(ops[-1], Tensor) else None
            if out_labels is not None:
                ops = ops[:-1]
        operands = ops
        in_labels = [_sublist_labels(s) for s in subl]
    if len(operands) == 0:
        raise RuntimeError("einsum(): must provide at least one operand")
    if len(in_labels) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(in_labels) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")

    # expand ellipses into labels '0'..'k' (shared, right aligned)
    ell_dims = 0
    for i, (t, labs) in enumerate(zip(operands, in_labels)):
        named = len([x for x in labs if x is not ...])
        if ... in labs:
            if t.dim() < named:
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({named}) is more than the number "
                    f"of dimensions ({t.dim()}) for operand {i}"
                )
            ell_dims = builtins.max(ell_dims, t.dim() - named)
        elif named != t.dim():
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({named}) does not match the number "
                f"of dimensions ({t.dim()}) for operand {i} and no ellipsis was given"
            )
    ell = [str(k) for k in range(ell_dims)]
    full_labels = []
    for t, labs in zip(operands, in_labels):
        if ... in labs:
            named = len(labs) - 1
            k = t.dim() - named
            pos = labs.index(...)
            labs = labs[:pos] + ell[ell_dims - k :] + labs[pos + 1 :]
        full_labels.append(labs)

    counts: dict[str, int] = {}
    for labs in full_labels:
        for lab in labs:
            counts[lab] = counts.get(lab, 0) + 1
    if out_labels is None:
        letters = sorted((lab for lab, c in counts.items() if c == 1 and not lab.isdigit()), key=_label_key)
        out_full = ell + letters
    else:
        seen = set()
        for lab in out_labels:
            if lab is ...:
                continue
            if lab in seen:
                raise RuntimeError(f"einsum(): output subscript {lab} appears more than once in the output")
            seen.add(lab)
            if lab not in counts:
                raise RuntimeError(
                    f"einsum(): output subscript {lab} does not appear in the equation for any input operand"
                )
        if ... in out_labels:
            pos = out_labels.index(...)
            out_full = out_labels[:pos] + ell + out_labels[pos + 1 :]
        else:
            out_full = list(out_labels) + []
            # ellipsis dims not in the output are summed
    for i, (t, labs) in enumerate(zip(operands, full_labels)):
        first: dict[str, int] = {}
        for d, lab in enumerate(labs):
            if lab in first and t.shape[first[lab]] != t.shape[d]:
                raise RuntimeError(
                    f"einsum(): subscript {lab} is repeated for operand {i} but the sizes don't match, "
                    f"{t.shape[d]} != {t.shape[first[lab]]}"
                )
            first.setdefault(lab, d)
    # sizes, with broadcasting of size-1 dimensions
    sizes: dict[str, int] = {}
    for i, (t, labs) in enumerate(zip(operands, full_labels)):
        for lab, s in zip(labs, t.shape):
            prev = sizes.get(lab)
            if prev is None or prev == 1:
                sizes[lab] = s
            elif s != 1 and s != prev:
                if lab.isdigit():
                    raise RuntimeError(
                        f"einsum(): dimension {lab} covered by ellipsis in operand {i}has size {s} which does "
                        f"not broadcast with previously seen ellipsis with size {prev} for the respective dimension"
                    )
                raise RuntimeError(
                    f"einsum(): subscript {lab} has size {s} for operand {i} which does not broadcast with "
                    f"previously seen size {prev}"
                )

    # per operand: diagonals of repeated labels, then sum labels used nowhere else
    terms = []
    for t, labs in zip(operands, full_labels):
        labs = list(labs)
        j = 0
        while j < len(labs):
            lab = labs[j]
            k = labs.index(lab, j + 1) if lab in labs[j + 1 :] else -1
            if k >= 0:
                t = _take_diagonal(t, j, k)
                del labs[k]
                continue
            j += 1
        terms.append((t, labs))

    def needed_elsewhere(idx_skip: set, lab: str) -> builtins.bool:
        if lab in out_full:
            return True
        return any(lab in labs for k, (_, labs) in enumerate(terms) if k not in idx_skip)

    reduced = []
    for k, (t, labs) in enumerate(terms):
        drop = [d for d, lab in enumerate(labs) if not needed_elsewhere({k}, lab)]
        if drop:
            t = t.sum(tuple(drop))
            labs = [lab for d, lab in enumerate(labs) if d not in drop]
        reduced.append((t, labs))
    terms = reduced

    for t, _ in terms[1:]:
        if t.dtype != terms[0][0].dtype:
            raise RuntimeError(
                f"expected scalar type {_dtype_name(terms[0][0].dtype)} but found {_dtype_name(t.dtype)}"
            )
    t, labs = terms[0]
    for k in range(1, len(terms)):
        u, ulabs = terms[k]
        rest = [lab for _, ls in terms[k + 1 :] for lab in ls]
        keep = set(out_full) | set(rest)
        t, labs = _contract_pair(t, labs, u, ulabs, keep, sizes)
    # final: sum leftover labels not in output, then order as the output
    drop = [d for d, lab in enumerate(labs) if lab not in out_full]
    if drop:
        t = t.sum(tuple(drop))
        labs = [lab for d, lab in enumerate(labs) if d not in drop]
    perm = [labs.index(lab) for lab in out_full]
    if perm != list(range(len(perm))):
        t = t.permute(*perm)
    target = [sizes[lab] for lab in out_full]
    if list(t.shape) != target:
        t = t.expand(*target)
    return t


def _label_key(lab: str):
    return (0 if lab.isupper() else 1, lab)


def _contract_pair(a: Tensor, la: list, b: Tensor, lb: list, keep: set, sizes: dict):
    # sum labels private to one side and not kept
    for side in (0, 1):
        t, ls, other = (a, la, lb) if side == 0 else (b, lb, la)
        drop = [d for d, lab in enumerate(ls) if lab not in keep and lab not in other]
        if drop:
            t = t.sum(tuple(drop))
            ls = [lab for d, lab in enumerate(ls) if d not in drop]
        if side == 0:
            a, la = t, ls
        else:
            b, lb = t, ls
    batch = [lab for lab in la if lab in lb and lab in keep]
    contr = [lab for lab in la if lab in lb and lab not in keep]
    a_only = [lab for lab in la if lab not in lb]
    b_only = [lab for lab in lb if lab not in la]
    pa = a.permute(*[la.index(lab) for lab in batch + a_only + contr])
    pb = b.permute(*[lb.index(lab) for lab in batch + contr + b_only])
    bs = [sizes[lab] for lab in batch]
    cs = [sizes[lab] for lab in contr]
    ash = [a.shape[la.index(lab)] for lab in a_only]
    bsh = [b.shape[lb.index(lab)] for lab in b_only]
    if list(pa.shape) != bs + ash + cs:
        pa = pa.expand(*(bs + ash + cs))
    if list(pb.shape) != bs + cs + bsh:
        pb = pb.expand(*(bs + cs + bsh))
    B, M, K, N = math.prod(bs), math.prod(ash), math.prod(cs), math.prod(bsh)
    if K == 1 and not contr:
        out = pa.reshape(bs + ash + [1] * len(bsh)) * pb.reshape(bs + [1] * len(ash) + bsh)
        return out, batch + a_only + b_only
    out = pa.reshape(B, M, K).bmm(pb.reshape(B, K, N))
    return out.reshape(bs + ash + bsh), batch + a_only + b_only


# --------------------------------------------------------------------------- in-place forms


def _inplace(fn, name: str):
    """The in-place Tensor method ``name`` writing ``fn(self, ...)`` into ``self`` with PyTorch's
    casting and shape rules. The function runs on a copy when gradients are recorded, so the
    values it saves for backward are not the ones being overwritten."""

    def method(self, *args, **kwargs):
        from . import is_grad_enabled

        src = self.clone() if is_grad_enabled() else self
        result = fn(src, *args, **kwargs)
        if result.dtype != self.dtype:
            raise RuntimeError(
                f"result type {_dtype_name(result.dtype)} can't be cast to the desired output type "
                f"{_dtype_name(self.dtype)}"
            )
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}"
            )
        return self.copy_(result)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place form of ``{name[:-1]}``."
    return method


def _float_power_(self, exponent):
    needed = (
        complex128
        if self.dtype.is_complex
        or (isinstance(exponent, Tensor) and exponent.dtype.is_complex)
        or isinstance(exponent, builtins.complex)
        else float64
    )
    if self.dtype != needed:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {_dtype_name(self.dtype)} but the operation's result "
            f"requires dtype {_dtype_name(needed)}"
        )
    return _inplace(float_power, "float_power_")(self, exponent)


def _round_decimals(input: Tensor, decimals: int) -> Tensor:
    """``input`` rounded half to even at ``decimals`` decimal places (at tens, hundreds... when
    negative): scaled, rounded and scaled back in the input's dtype, as PyTorch computes it.
    Tensor.round hands a non-zero ``decimals`` here."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"round_cpu\" not implemented for '{_dtype_name(input.dtype)}'")
    if decimals > 0:
        scale = 10.0**decimals
        return (input * scale).round() / scale
    scale = 10.0**-decimals
    return (input / scale).round() * scale


# Tensor.div_ hands a rounding_mode here.
_divide_inplace = _inplace(divide, "divide_")


# --------------------------------------------------------------------------- numpy helpers


def _np_of(t: Tensor) -> np.ndarray:
    return t.detach().numpy()


def _from_np(a, dtype=None) -> Tensor:
    from . import tensor

    # ``ascontiguousarray`` makes a 0-d array 1-d: the shape is restored.
    return tensor(np.ascontiguousarray(a).reshape(np.shape(a)), dtype=dtype)


# --------------------------------------------------------------------------- selection


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of ``input`` where the (broadcast) boolean ``mask`` holds, as a 1-D tensor."""
    if not isinstance(mask, Tensor) or mask.dtype != _bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    a, m = broadcast_tensors(input, mask)
    if a.dim() == 0:
        a, m = a.reshape(1), m.reshape(1)
    return a[m]


def nonzero(input: Tensor, *, as_tuple: builtins.bool = False):
    """The positions of the non-zero elements of ``input``: an ``(n, input.dim())`` int64 tensor, or
    with ``as_tuple`` one 1-D tensor per dimension."""
    a = _np_of(input)
    if as_tuple:
        return tuple(_from_np(i.astype(np.int64), dtype=int64) for i in np.nonzero(np.atleast_1d(a)))
    return _from_np(np.argwhere(a).astype(np.int64).reshape(np.count_nonzero(a), a.ndim), dtype=int64)


def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``: the positions of the non-zero elements, one row each."""
    return nonzero(input)


def unique(
    input: Tensor,
    sorted: builtins.bool = True,
    return_inverse: builtins.bool = False,
    return_counts: builtins.bool = False,
    dim: int | None = None,
):
    """The distinct elements (or slices along ``dim``) of ``input`` in ascending order, with the
    position of each input element among them and their counts on request. As in PyTorch, no NaN
    equals another: each is a value of its own."""
    a = _np_of(input)
    if dim is None:
        flat = a.reshape(-1)
        # A stable sort with NaNs last: equal numbers keep their input order (the first stands for
        # them, e.g. the sign of a zero), and the NaNs follow in input order, one value each.
        order = np.argsort(flat, kind="stable")
        starts, inv, cnt = _runs_of_equals(flat[order].reshape(-1, 1), order)
        vals, inv = flat[order][starts], inv.reshape(a.shape)
        return _unique_result(vals, inv, cnt, input.dtype, return_inverse, return_counts)
    d = _unique_dim(dim, input)
    slices = _slices(a, d)
    # Lexicographic and stable, NaNs after numbers in each column; a slice holding a NaN equals
    # no other, so it is a value of its own (count 1).
    order = np.lexsort(slices.T[::-1]) if slices.size else np.arange(len(slices))
    starts, inv, cnt = _runs_of_equals(slices[order], order)
    vals = np.take(a, order[starts], axis=d)
    return _unique_result(vals, inv, cnt, input.dtype, return_inverse, return_counts)


def _runs_of_equals(ordered: np.ndarray, order: np.ndarray):
    """For the rows ``ordered`` (``order`` taking them from the input): where each run of equal rows
    starts, each input row's run number and each run's length. A NaN ends a run, as it equals
    nothing."""
    starts = np.ones(len(ordered), dtype=bool)
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    inv = np.empty(len(ordered), dtype=np.int64)
    inv[order] = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    return first, inv, np.diff(np.append(first, len(ordered)))


def _unique_dim(dim: int, input: Tensor) -> int:
    if input.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, input.dim())
    empty = list(input.shape).count(0)
    if input.shape[d] == 0 and empty > 1:
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
    if input.shape[d] != 0 and empty:
        raise RuntimeError(
            "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"
        )
    return d


def _slices(a: np.ndarray, d: int) -> np.ndarray:
    """``a``'s slices along ``d``, flattened into the rows of a 2-D array."""
    return np.moveaxis(a, d, 0).reshape(a.shape[d], math.prod(a.shape[:d] + a.shape[d + 1 :]))


def _unique_result(vals, inv, cnt, dtype, return_inverse, return_counts):
    out = [_from_np(vals, dtype=dtype)]
    if return_inverse:
        out.append(_from_np(inv.astype(np.int64), dtype=int64))
    if return_counts:
        out.append(_from_np(cnt.astype(np.int64), dtype=int64))
    return out[0] if len(out) == 1 else tuple(out)


def unique_consecutive(
    input: Tensor,
    return_inverse: builtins.bool = False,
    return_counts: builtins.bool = False,
    dim: int | None = None,
):
    """``input`` with each run of equal consecutive elements (or slices along ``dim``) kept once."""
    a = _np_of(input)
    if dim is None:
        flat = a.reshape(-1)
        starts = np.ones(flat.size, dtype=bool)
        if flat.size:
            starts[1:] = flat[1:] != flat[:-1]
        vals = flat[starts]
        inv = (np.cumsum(starts) - 1).reshape(a.shape)
    else:
        d = _unique_dim(dim, input)
        m = _slices(a, d)
        starts = np.ones(m.shape[0], dtype=bool)
        if m.shape[0]:
            starts[1:] = (m[1:] != m[:-1]).any(axis=1)
        vals = np.compress(starts, a, axis=d)
        inv = np.cumsum(starts) - 1
    idx = np.nonzero(starts)[0]
    cnt = np.diff(np.append(idx, starts.size))
    return _unique_result(vals, inv, cnt, input.dtype, return_inverse, return_counts)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value ``0..max(input)`` occurs in the 1-D non-negative integer ``input``
    (summing ``weights`` instead of counting, when given)."""
    if input.dtype.is_floating_point or input.dtype.is_complex or input.dtype == _bool:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_dtype_name(input.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.dim() == 1 and input.numel() == 0:
        return _C.zeros((minlength,), dtype=int64)  # int64 even with weights, as in PyTorch
    a = _np_of(input).astype(np.int64)
    if input.dim() != 1 or a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _from_np(np.bincount(a, minlength=minlength).astype(np.int64), dtype=int64)
    if tuple(weights.shape) != tuple(input.shape):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights.dtype == float32:
        # PyTorch adds float32 weights in float32, one after another.
        sums = np.zeros(builtins.max(int(a.max()) + 1, minlength), dtype=np.float32)
        with np.errstate(all="ignore"):  # inf - inf is NaN, quietly
            np.add.at(sums, a, _np_of(weights))
        return _from_np(sums, dtype=float32)
    return _from_np(
        np.bincount(a, weights=_np_of(weights).astype(np.float64), minlength=minlength), dtype=float64
    )


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """A histogram of ``input`` with ``bins`` equal-width bins over ``[min, max]`` (the data's range
    when both are 0); elements outside the range are left out."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_dtype_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    a = _np_of(input).reshape(-1).astype(np.float64)
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    keep = a[(a >= lo) & (a <= hi)]
    pos = ((keep - lo) * bins / (hi - lo)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    return _from_np(np.bincount(pos, minlength=bins).astype(np.float64), dtype=input.dtype)


def searchsorted(
    sorted_sequence: Tensor,
    input,
    *,
    out_int32: builtins.bool = False,
    right: builtins.bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
) -> Tensor:
    """For each element of ``input``, the position in the sorted innermost rows of
    ``sorted_sequence`` where it would be inserted to keep them sorted."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of left "
                "while right was True"
            )
        right = side == "right"
    seq = _np_of(sorted_sequence)
    if sorter is not None:
        seq = np.take_along_axis(seq, _np_of(sorter), axis=-1)
    vals = _np_of(input) if isinstance(input, Tensor) else np.asarray(input)
    if seq.ndim == 1:
        out = _bisect(seq.reshape(1, -1), vals.reshape(1, -1), right).reshape(vals.shape)
    else:
        if vals.ndim == 0:
            raise RuntimeError(
                "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                f"is 1, but we got boundaries tensor dim({seq.ndim}) and input value's dim(0) numel(1)"
            )
        if vals.shape[:-1] != seq.shape[:-1]:
            raise RuntimeError(
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                f"{list(seq.shape)} and input value tensor {list(vals.shape)}"
            )
        rows = seq.reshape(math.prod(seq.shape[:-1]), seq.shape[-1])
        out = _bisect(rows, vals.reshape(rows.shape[0], vals.shape[-1]), right).reshape(vals.shape)
    return _from_np(out, dtype=int32 if out_int32 else int64)


def _bisect(rows: np.ndarray, values: np.ndarray, right: builtins.bool) -> np.ndarray:
    """Where each row of ``values`` goes in the same row of ``rows``, by PyTorch's binary search:
    it moves right of the middle element unless that is >= the value (> with ``right``). A NaN
    compares false, so a NaN value goes to the end and a NaN in a row sends the search past it,
    where NumPy's search would take NaNs for the largest numbers."""
    n = rows.shape[-1]
    lo = np.zeros(values.shape, dtype=np.int64)
    hi = np.full(values.shape, n, dtype=np.int64)
    while (active := lo < hi).any():
        mid = lo + (hi - lo) // 2
        middle = np.take_along_axis(rows, np.minimum(mid, n - 1), axis=-1)
        stop = middle > values if right else middle >= values
        lo = np.where(active & ~stop, mid + 1, lo)
        hi = np.where(active & stop, mid, hi)
    return lo


def bucketize(input, boundaries: Tensor, *, out_int32: builtins.bool = False, right: builtins.bool = False):
    """The index of the bucket of 1-D sorted ``boundaries`` each element of ``input`` falls in."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# --------------------------------------------------------------------------- order statistics


def _structseq_repr(self) -> str:
    fields = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
    return f"ferrograd.return_types.{type(self).__name__}(\n{fields})"


@functools.cache
def _return_type(name: str, fields: tuple[str, ...] = ("values", "indices")):
    """The named tuple type ``ferrograd.return_types.<name>``, one per name, printed one field
    a line as PyTorch prints its return types."""
    import collections

    cls = collections.namedtuple(name, fields)
    cls.__module__ = "ferrograd.return_types"
    cls.__repr__ = _structseq_repr
    return cls


_median_t = _return_type("median")
_nanmedian_t = _return_type("nanmedian")
_kthvalue_t = _return_type("kthvalue")
_mode_t = _return_type("mode")


def _pick(input: Tensor, dim: int, idx: Tensor, keepdim: builtins.bool, cls):
    """values = input gathered at ``idx`` (with the ``dim`` axis kept), as a namedtuple ``cls``."""
    values = input.gather(dim, idx)
    if not keepdim:
        values = values.squeeze(dim)
        idx = idx.squeeze(dim)
    return cls(values, idx)


def _nan_sorted_indices(x: Tensor, dim: int) -> np.ndarray:
    """Stable ascending order along ``dim`` with NaNs last (numpy's order)."""
    return np.argsort(_np_of(x), axis=dim, kind="stable")


def _median_dim(input, dim, keepdim, name, ignore_nan, cls):
    nd = input.dim()
    d = _wrap_dim(dim, nd)
    x = input if nd > 0 else input.reshape(1)
    n = x.shape[d]
    if n == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    a = _np_of(x)
    order = _nan_sorted_indices(x, d)
    nans = np.isnan(a) if a.dtype.kind in "fc" else np.zeros(a.shape, dtype=bool)
    nan_count = nans.sum(axis=d, keepdims=True)
    if ignore_nan:
        valid = n - nan_count
        k = np.where(valid > 0, (valid - 1) // 2, 0)
    else:
        k = np.where(nan_count > 0, n - nan_count, (n - 1) // 2)
    idx = np.take_along_axis(order, k.astype(np.int64), axis=d)
    if not ignore_nan:
        # the first NaN along dim, as PyTorch reports it
        first_nan = np.expand_dims(np.argmax(nans, axis=d), d)
        idx = np.where(nan_count > 0, first_nan, idx)
    res = _pick(x, d, _from_np(idx.astype(np.int64), dtype=int64), keepdim or nd == 0, cls)
    if nd == 0:
        return cls(res.values.reshape(()), res.indices.reshape(()))
    return res


def median(input: Tensor, dim: int | None = None, keepdim: builtins.bool = False):
    """The lower median of all elements (a 0-d tensor), or along ``dim`` as ``(values, indices)``.
    A NaN anywhere in the reduced elements makes the median NaN."""
    if dim is None:
        if input.numel() == 0:
            return _C.full((), float("nan"), dtype=input.dtype)
        return _C._median_all(input, False)
    return _median_dim(input, dim, keepdim, "median", False, _median_t)


def nanmedian(input: Tensor, dim: int | None = None, keepdim: builtins.bool = False):
    """``median`` leaving NaNs out (NaN only where every reduced element is NaN)."""
    if dim is None:
        if input.numel() == 0:
            return _C.full((), float("nan"), dtype=input.dtype)
        return _C._median_all(input, True)
    return _median_dim(input, dim, keepdim, "nanmedian", True, _nanmedian_t)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: builtins.bool = False):
    """The ``k``-th smallest element along ``dim`` (``k`` counts from 1) and its position."""
    nd = input.dim()
    d = _wrap_dim(dim, nd)
    x = input if nd > 0 else input.reshape(1)
    n = x.shape[d]
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    order = _nan_sorted_indices(x, d)
    idx = np.take(order, [k - 1], axis=d)
    res = _pick(x, d, _from_np(idx.astype(np.int64), dtype=int64), keepdim or nd == 0, _kthvalue_t)
    if nd == 0:
        return _kthvalue_t(res.values.reshape(()), res.indices.reshape(()))
    return res


def mode(input: Tensor, dim: int = -1, keepdim: builtins.bool = False):
    """The most frequent value along ``dim`` (the smallest among equally frequent ones, NaNs
    counted together) and the position of its last occurrence."""
    nd = input.dim()
    d = _wrap_dim(dim, nd)
    x = input if nd > 0 else input.reshape(1)
    if x.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    a = np.moveaxis(_np_of(x), d, -1)
    rows = a.reshape(-1, a.shape[-1])
    best = np.empty(rows.shape[0], dtype=np.int64)
    for r, row in enumerate(rows):
        vals, cnt = np.unique(row, return_counts=True)
        v = vals[np.argmax(cnt)]
        hits = (row == v) | (np.isnan(row) & np.isnan(v)) if row.dtype.kind == "f" else row == v
        best[r] = np.flatnonzero(hits)[-1]
    idx = np.expand_dims(best.reshape(a.shape[:-1]), d)
    res = _pick(x, d, _from_np(idx, dtype=int64), keepdim or nd == 0, _mode_t)
    if nd == 0:
        return _mode_t(res.values.reshape(()), res.indices.reshape(()))
    return res


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, name, ignore_nan):
    if not isinstance(input, Tensor) or input.dtype not in _FLOAT_TYPES:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
            f"but got {interpolation}"
        )
    if isinstance(q, Tensor):
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        qs = _np_of(q).astype(np.float64).reshape(-1)
        q_scalar = q.dim() == 0
    else:
        qs = np.array([float(q)])
        q_scalar = True
    for v in qs:
        if not 0 <= v <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {v}")
    if input.numel() == 0 and dim is None:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if dim is None:
        x = input.reshape(-1)
        d = 0
    else:
        d = _wrap_dim(dim, input.dim())
        x = input if input.dim() > 0 else input.reshape(1)
        if x.shape[d] == 0:
            raise RuntimeError(f"{name}() input tensor must be non-empty")
    # rows along the last axis
    xm = x.movedim(d, -1)
    lead = tuple(xm.shape[:-1])
    n = xm.shape[-1]
    rows = xm.reshape(-1, n)
    a = _np_of(rows)
    nans = np.isnan(a)
    # PyTorch's ranks, in the input's dtype as it computes them. A NaN quantile is one of the
    # sorted NaNs (and so takes the gradient): the last for quantile, and for nanquantile of
    # nothing but NaNs the first. Only linear and midpoint interpolate, so the other methods
    # keep infinities (lerp would turn inf - inf into NaN). Equal elements (NaNs among them)
    # keep their input order in the stable sort below.
    real = a.dtype.type
    picks = []  # (positions below, positions above or None, weights) per q
    for qv in qs:
        if ignore_nan:
            rank = np.maximum(real(qv) * (n - 1 - nans.sum(axis=1, keepdims=True)).astype(real), 0)
        else:
            rank = np.where(nans.any(axis=1, keepdims=True), real(n - 1), real(qv) * real(n - 1))
        if interpolation == "lower":
            rank = np.floor(rank)
        elif interpolation == "higher":
            rank = np.ceil(rank)
        elif interpolation == "nearest":
            rank = np.round(rank)  # half to even, as PyTorch's round
        below = rank.astype(np.int64)
        if interpolation in ("linear", "midpoint"):
            w = np.full_like(rank, 0.5) if interpolation == "midpoint" else rank - below.astype(real)
            picks.append((below, np.ceil(rank).astype(np.int64), w))
        else:
            picks.append((below, None, None))
    order = np.argsort(a, axis=-1, kind="stable")  # NaNs last
    srt = rows.gather(1, _from_np(order.astype(np.int64), dtype=int64))
    outs = []
    for below, above, w in picks:
        out = srt.gather(1, _from_np(below, dtype=int64))
        if above is not None:
            out = out.lerp(srt.gather(1, _from_np(above, dtype=int64)), _from_np(w, dtype=input.dtype))
        outs.append(out.reshape(lead))
    res = _C.stack(outs, 0)  # (Q, *lead)
    if keepdim:
        if dim is None:
            res = res.reshape((len(qs),) + (1,) * input.dim())
        else:
            res = res.unsqueeze(d + 1) if input.dim() > 0 else res
    if q_scalar:
        res = res.squeeze(0)
    return res


def quantile(
    input: Tensor, q, dim: int | None = None, keepdim: builtins.bool = False, *, interpolation: str = "linear"
):
    """The ``q``-th quantiles (a float or 1-D tensor in [0, 1]) of all elements or along ``dim``,
    interpolating between the neighbouring order statistics; NaN where a reduced slice has a NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, "quantile", False)


def nanquantile(
    input: Tensor, q, dim: int | None = None, keepdim: builtins.bool = False, *, interpolation: str = "linear"
):
    """``quantile`` leaving NaNs out (NaN only where every reduced element is NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, "quantile", True)


INPLACE_METHODS = {
    name + "_": _inplace(fn, name + "_")
    for name, fn in {
        "sinc": sinc,
        "logit": logit,
        "xlogy": xlogy,
        "deg2rad": deg2rad,
        "rad2deg": rad2deg,
        "subtract": subtract,
    }.items()
}
INPLACE_METHODS["divide_"] = Tensor.div_
INPLACE_METHODS["float_power_"] = _float_power_


_NUMPY_NAMES = (("dim", "axis"), ("keepdim", "keepdims"))


def numpy_names(fn):
    """``fn`` that also takes NumPy's names for its ``dim`` and ``keepdim`` (``axis=``,
    ``keepdims=``), as PyTorch's functions do; ``fn`` itself if it has neither parameter.

    A name given both ways is the ``TypeError`` of an unexpected keyword, as in PyTorch.
    """
    params = inspect.signature(fn).parameters
    positional = [n for n, p in params.items() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    aliases = {alias: name for name, alias in _NUMPY_NAMES if name in params and alias not in params}
    if not aliases:
        return fn
    # How many positional arguments reach each name (None: keyword only).
    reached_by = {
        name: positional.index(name) + 1 if name in positional else None for name in aliases.values()
    }

    @functools.wraps(fn)
    def call(*args, **kwargs):
        for alias, name in aliases.items():
            if alias in kwargs:
                at = reached_by[name]
                if name in kwargs or (at is not None and len(args) >= at):
                    raise TypeError(f"{fn.__name__}() got an unexpected keyword argument '{alias}'")
                kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)

    return call

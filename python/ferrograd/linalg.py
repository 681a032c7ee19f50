"""``ferrograd.linalg``: norms, products and diagonals with PyTorch's ``torch.linalg`` signatures.

Everything here is composed of differentiable tensor ops. Norms that need a singular value
decomposition (matrix 2-norm, nuclear norm) raise ``NotImplementedError``.
"""

from __future__ import annotations

import builtins
import math

from . import _C
from ._C import Tensor
from ._functions import _cross, _dtype_name, _wrap_dim

__all__ = ["cross", "diagonal", "matmul", "matrix_norm", "norm", "vecdot", "vector_norm"]


def _dims(dim, ndim: int) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    out = tuple(_wrap_dim(d, ndim) for d in dim)
    if len(set(out)) != len(out):
        raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
    return out


def _check_float(x: Tensor, name: str) -> None:
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got {_dtype_name(x.dtype)}"
        )


def _sum_or_all(x: Tensor, dims: tuple[int, ...], keepdim: bool) -> Tensor:
    if x.dim() == 0:
        return x
    return x.sum(dims, keepdim)


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The vector ``ord``-norm over ``dim`` (all elements when None): ``ord`` may be any real
    number, ``inf`` (largest magnitude), ``-inf`` (smallest) or ``0`` (number of non-zeros)."""
    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not str")
    _check_float(x, "linalg.vector_norm")
    if dtype is not None:
        x = x.to(dtype)
    a = x.abs()
    if a.dim() == 0:
        return _vector_norm_reduced(a.reshape(1), ord, (0,), False)
    dims = _dims(dim, a.dim())
    if (ord < 0 or math.isinf(ord)) and any(a.shape[d] == 0 for d in dims):
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {_ord_str(ord)} norm on an empty tensor because "
            "the operation does not have an identity"
        )
    return _vector_norm_reduced(a, ord, dims, keepdim)


def _ord_str(ord) -> str:
    if math.isinf(ord):
        return "inf" if ord > 0 else "-inf"
    return str(ord)


def _vector_norm_reduced(a: Tensor, ord, dims, keepdim: bool) -> Tensor:
    if ord == math.inf:
        return a.amax(dims, keepdim)
    if ord == -math.inf:
        return a.amin(dims, keepdim)
    if ord == 0:
        count = _sum_or_all(a.ne(0).to(a.dtype), dims, keepdim)
        # PyTorch gives the 0-"norm" a zero gradient
        graph = _sum_or_all(a, dims, keepdim)
        if not graph.requires_grad:
            return count
        return graph.where(_C.zeros(count.shape, dtype=_C.bool), count)
    if ord == 1:
        return _sum_or_all(a, dims, keepdim)
    s = _sum_or_all(a * a if ord == 2 else a.pow(ord), dims, keepdim)
    if ord < 0:
        return s.pow(1.0 / ord)
    zero = s.eq(0)
    safe = s.where(zero.logical_not(), 1.0)
    root = safe.sqrt() if ord == 2 else safe.pow(1.0 / ord)
    return root.where(zero.logical_not(), 0.0)


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:
    """The matrix norm over the two dimensions ``dim``: ``'fro'``, ``1``/``-1`` (max/min column
    sum), ``inf``/``-inf`` (max/min row sum). ``'nuc'`` and ``±2`` need singular values and raise
    ``NotImplementedError``."""
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    _check_float(A, "linalg.matrix_norm")
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    d0, d1 = (_wrap_dim(d, A.dim()) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if dtype is not None:
        A = A.to(dtype)
    if isinstance(ord, str):
        if ord == "fro":
            return vector_norm(A, 2, (d0, d1), keepdim)
        if ord == "nuc":
            raise NotImplementedError(
                "linalg.matrix_norm: ord='nuc' needs singular values, which ferrograd does not compute yet"
            )
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if ord in (2, -2):
        raise NotImplementedError(
            f"linalg.matrix_norm: ord={ord} needs singular values, which ferrograd does not compute yet"
        )
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # ord ±1: reduce over rows (d0) then max/min over columns (d1); ±inf the other way round
    first, second = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = A.abs().sum(first, True)
    out = sums.amax(second, True) if ord > 0 else sums.amin(second, True)
    if not keepdim:
        out = out.squeeze(builtins.max(d0, d1)).squeeze(builtins.min(d0, d1))
    return out


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """A vector or matrix norm: with ``dim`` an int (or None and ``ord`` None) a vector norm, with a
    2-tuple ``dim`` (or a 2-d input and an ``ord``) a matrix norm."""
    if dim is not None:
        if isinstance(dim, int):
            dim = (dim,)
        dim = tuple(dim)
        if len(dim) not in (1, 2):
            raise RuntimeError(
                f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}"
            )
    elif ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D."
        )
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    is_matrix = isinstance(ord, str) or (dim is not None and len(dim) == 2) or (dim is None and A.dim() == 2)
    if is_matrix:
        return matrix_norm(A, ord, dim if dim is not None else (-2, -1), keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: Order {ord} not supported.")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (inputs broadcast)."""
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    return _cross(input, other, dim, "linalg.cross")


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of vectors along ``dim`` (the first argument conjugated)."""
    prod = (x.conj() if x.dtype.is_complex else x) * y
    return prod.sum(dim)


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """Alias of :func:`ferrograd.matmul`."""
    return input.matmul(other)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Alias of :meth:`Tensor.diagonal` with the matrix dimensions last by default."""
    return A.diagonal(offset, _wrap_dim(dim1, A.dim()), _wrap_dim(dim2, A.dim()))

"""``ferrograd.linalg``: decompositions, solvers, norms and products with PyTorch's ``torch.linalg``
signatures.

The decompositions and solvers (``inv``, ``det``, ``slogdet``, ``solve``, ``cholesky``,
``solve_triangular``, ``eigh``, ``svd``, ``qr``, ``pinv``, ``matrix_rank``) run in the Rust core,
batched over leading dimensions, with backward rules written in differentiable ops (so second
derivatives work). This module only handles arguments.
"""

from __future__ import annotations

import builtins
import collections
import math

from . import _C
from ._C import Tensor
from ._functions import _cross, _dtype_name, _wrap_dim

__all__ = [
    "LinAlgError",
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_triangular",
    "svd",
    "svdvals",
    "vecdot",
    "vector_norm",
]

LinAlgError = _C.LinAlgError


def _return_type(name: str, fields: list[str]):
    cls = collections.namedtuple(name, fields)
    cls.__module__ = "ferrograd.return_types"
    return cls


_SlogdetResult = _return_type("linalg_slogdet", ["sign", "logabsdet"])
_TorchSlogdetResult = _return_type("slogdet", ["sign", "logabsdet"])
_EighResult = _return_type("linalg_eigh", ["eigenvalues", "eigenvectors"])
_SvdResult = _return_type("linalg_svd", ["U", "S", "Vh"])
_QrResult = _return_type("linalg_qr", ["Q", "R"])
_LstsqResult = _return_type("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def inv(A: Tensor) -> Tensor:
    """The inverse of each square matrix in ``A`` (``[..., n, n]``); raises :class:`LinAlgError`
    for a singular matrix."""
    return _C.linalg_inv(A)


def det(A: Tensor) -> Tensor:
    """The determinant of each square matrix in ``A``."""
    return _C.linalg_det(A)


def slogdet(A: Tensor):
    """``(sign, logabsdet)`` of each square matrix's determinant: ``det = sign * exp(logabsdet)``,
    sign 0 and logabsdet -inf for a singular matrix."""
    return _SlogdetResult(*_C.linalg_slogdet(A))


def _torch_slogdet(A: Tensor):
    """``ferrograd.slogdet``: :func:`slogdet` as ``torch.return_types.slogdet``."""
    return _TorchSlogdetResult(*_C.linalg_slogdet(A))


def _logdet(A: Tensor) -> Tensor:
    """``ferrograd.logdet``: log(det A), NaN where the determinant is negative."""
    return _C.logdet(A)


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """``X`` with ``A X = B`` (``X A = B`` when ``left`` is False) for square ``A``; batch
    dimensions broadcast, and ``B`` of ``A``'s shape less its last dimension is a batch of
    vectors."""
    return _C.linalg_solve(A, B, left)


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The lower Cholesky factor ``L`` (``A = L L^T``) of each symmetric positive-definite matrix,
    or the upper one ``U = L^T`` with ``upper``; raises :class:`LinAlgError` when a matrix is not
    positive-definite."""
    return _C.linalg_cholesky(A, upper)


def solve_triangular(
    A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False
) -> Tensor:
    """``X`` with ``A X = B`` (``X A = B`` when ``left`` is False) for triangular ``A``, reading
    only its upper or lower triangle (and taking its diagonal as ones when ``unitriangular``)."""
    return _C.linalg_solve_triangular(A, B, (upper, left, unitriangular))


def _check_uplo(UPLO: str) -> bool:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO == "U"


def eigh(A: Tensor, UPLO: str = "L"):
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix, reading its lower (``'L'``) or upper
    (``'U'``) triangle: eigenvalues ascending, eigenvectors as columns."""
    return _EighResult(*_C.linalg_eigh(A, _check_uplo(UPLO)))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of each symmetric matrix, ascending."""
    return eigh(A, UPLO).eigenvalues


def svd(A: Tensor, full_matrices: bool = True):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh`` for each matrix: singular values descending; ``U`` and
    ``Vh`` square with ``full_matrices``, else of ``min(m, n)`` columns and rows."""
    return _SvdResult(*_C.linalg_svd(A, full_matrices))


def svdvals(A: Tensor) -> Tensor:
    """The singular values of each matrix, descending."""
    return _C.linalg_svd(A, False)[1]


def pinv(
    A: Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False
) -> Tensor:
    """The pseudo-inverse of each matrix, from its SVD, singular values at most
    ``max(atol, rtol * largest)`` counting as zero. ``hermitian`` is accepted for PyTorch's signature;
    the SVD serves both cases."""
    return _C.linalg_pinv(A, (atol, rtol))


def matrix_rank(
    A: Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False
) -> Tensor:
    """How many singular values of each matrix exceed ``max(atol, rtol * largest)`` (int64)."""
    return _C.linalg_matrix_rank(A, (atol, rtol))


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None):
    """The least-squares (minimum-norm when ``A`` lacks rank) solution of ``A X = B``, as
    ``(solution, residuals, rank, singular_values)``. ``B`` may be a batch of vectors (one dimension
    fewer than ``A``). Singular values at most ``rcond`` times the largest count as zero (default:
    the dtype's epsilon times ``max(m, n)``). Which of the other three are filled follows PyTorch's
    ``driver``: ``'gelsy'`` (the default) the rank, ``'gels'`` the residuals, ``'gelsd'``/``'gelss'``
    all three; residuals only when ``m > n`` and every matrix has full rank. The solution is
    ``pinv(A) @ B``, so it differentiates through the SVD."""
    driver = "gelsy" if driver is None else driver
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError(
            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    vector = B.dim() == A.dim() - 1
    rhs = B.unsqueeze(-1) if vector else B
    if A.dim() < 2 or rhs.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    if rhs.shape[-2] != m:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    if rcond is None:
        from ._dtype_info import finfo

        rcond = finfo(A.dtype).eps * builtins.max(m, n)
    solution = pinv(A, rtol=rcond) @ rhs
    nothing = _C.zeros((0,), dtype=A.dtype)
    rank = _C.linalg_matrix_rank(A, (None, rcond)) if driver != "gels" else _C.zeros((0,), dtype=_C.int64)
    full_rank = driver == "gels" or builtins.bool((rank == builtins.min(m, n)).all().item())
    residuals = nothing
    if driver != "gelsy" and m > n and full_rank:
        residuals = (A @ solution - rhs).abs().pow(2).sum(-2)
        residuals = residuals.squeeze(-1) if vector else residuals
    singular_values = svdvals(A) if driver in ("gelsd", "gelss") else nothing
    return _LstsqResult(solution.squeeze(-1) if vector else solution, residuals, rank, singular_values)


def qr(A: Tensor, mode: str = "reduced"):
    """``(Q, R)`` with ``A = Q R``, ``Q`` orthonormal columns, ``R`` upper triangular: ``'reduced'``
    (``min(m, n)`` columns of ``Q``), ``'complete'`` (square ``Q``) or ``'r'`` (``R`` only, ``Q``
    empty)."""
    return _QrResult(*_C.linalg_qr(A, mode))


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
    sum), ``inf``/``-inf`` (max/min row sum), ``'nuc'`` (sum of singular values), ``2``/``-2``
    (largest/smallest singular value)."""
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
            return _singular_value_norm(A, d0, d1, keepdim, lambda s: s.sum(-1))
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if ord in (2, -2):
        return _singular_value_norm(A, d0, d1, keepdim, lambda s: s.amax(-1) if ord == 2 else s.amin(-1))
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # ord ±1: reduce over rows (d0) then max/min over columns (d1); ±inf the other way round
    first, second = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = A.abs().sum(first, True)
    out = sums.amax(second, True) if ord > 0 else sums.amin(second, True)
    if not keepdim:
        out = out.squeeze(builtins.max(d0, d1)).squeeze(builtins.min(d0, d1))
    return out


def _singular_value_norm(A: Tensor, d0: int, d1: int, keepdim: bool, reduce) -> Tensor:
    out = reduce(svdvals(A.movedim((d0, d1), (-2, -1))))
    if keepdim:
        for d in sorted((d0, d1)):
            out = out.unsqueeze(d)
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


def matrix_power(A: Tensor, n: int) -> Tensor:
    """``A`` multiplied by itself ``n`` times (the identity for 0, powers of the inverse for
    negative ``n``)."""
    return _C.linalg_matrix_power(A, n)


def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices, multiplied in the cheapest order; the first (last) may be
    1-d, a row (column) vector."""
    return _C.linalg_multi_dot(list(tensors))

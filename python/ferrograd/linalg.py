"""``ferrograd.linalg``: decompositions, solvers, norms and products with PyTorch's ``torch.linalg``
signatures.

The decompositions and solvers (``inv``, ``det``, ``slogdet``, ``solve``, ``cholesky``,
``solve_triangular``, ``eigh``, ``svd``, ``qr``, ``pinv``, ``matrix_rank``) run in the Rust core,
batched over leading dimensions, with backward rules written in differentiable ops (so second
derivatives work). This module only handles arguments.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from . import _C
from ._C import Tensor
from ._functions import _cross, _dtype_name, _from_np, _return_type, _wrap_dim
from .autograd.function import _no_derivative

__all__ = [
    "LinAlgError",
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matmul",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]

LinAlgError = _C.LinAlgError


_SlogdetResult = _return_type("linalg_slogdet", ("sign", "logabsdet"))
_TorchSlogdetResult = _return_type("slogdet", ("sign", "logabsdet"))
_EighResult = _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
_EigResult = _return_type("linalg_eig", ("eigenvalues", "eigenvectors"))
_SvdResult = _return_type("linalg_svd", ("U", "S", "Vh"))
_QrResult = _return_type("linalg_qr", ("Q", "R"))
_LstsqResult = _return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
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


def eig(A: Tensor):
    """``(eigenvalues, eigenvectors)`` of each square matrix, complex (complex64 for float32
    input): ``A V = V diag(L)``, each eigenvector of unit norm. Eigenvectors are defined up to a
    factor ``e^{iφ}``, so a loss that depends on that choice has no gradient (an error, as in
    PyTorch); losses of the eigenvalues and of ``V.abs()`` differentiate."""
    return _EigResult(*_C.linalg_eig(A))


def eigvals(A: Tensor) -> Tensor:
    """The eigenvalues of each square matrix, complex, in the order ``eig`` gives them."""
    return _C.linalg_eig(A)[0]


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
    if 0 < ord < 1:
        # |x|^p has an infinite slope at 0, where PyTorch's gradient is 0.
        nonzero = a.ne(0)
        powered = a.where(nonzero, 1.0).pow(ord).where(nonzero, 0.0)
    else:
        powered = a * a if ord == 2 else a.pow(ord)
    s = _sum_or_all(powered, dims, keepdim)
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


# --------------------------------------------------------------------------- composites


_InvExResult = _return_type("linalg_inv_ex", ("inverse", "info"))
_CholeskyExResult = _return_type("linalg_cholesky_ex", ("L", "info"))
_SolveExResult = _return_type("linalg_solve_ex", ("result", "info"))
_LuFactorResult = _return_type("linalg_lu_factor", ("LU", "pivots"))
_LuFactorExResult = _return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_LuResult = _return_type("linalg_lu", ("P", "L", "U"))
_LuUnpackResult = _return_type("lu_unpack", ("P", "L", "U"))


def _check_square(A: Tensor, name: str) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices"
        )


def _eye_like(A: Tensor) -> Tensor:
    return _C.eye(A.shape[-1], dtype=A.dtype).expand(*A.shape)


def matrix_exp(A: Tensor) -> Tensor:
    """``exp(A)`` of each square matrix: a degree-18 Taylor polynomial of ``A / 2^s`` (``s`` chosen
    so its 1-norm is at most 1/2, where the truncation error is below float64's epsilon) squared
    ``s`` times. Made of matrix products, so it is differentiable to any order."""
    _check_square(A, "linalg.matrix_exp")
    _check_float(A, "linalg.matrix_exp")
    if A.numel() == 0:
        return A.clone()
    norm = builtins.float(A.detach().abs().sum(-2).amax().item())
    squarings = builtins.max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    X = A / (2.0**squarings) if squarings else A
    eye = _eye_like(A)
    out = eye
    for k in range(18, 0, -1):  # Horner: I + X/1 (I + X/2 (I + ...))
        out = eye + (X @ out) / k
    for _ in range(squarings):
        out = out @ out
    return out


def cond(A: Tensor, p=None) -> Tensor:
    """The condition number of each matrix in the norm ``p``: the ratio of extreme singular values
    for ``None``/``2``/``-2`` (any shape), else ``norm(A) * norm(inv(A))`` for square ``A``
    (``inf`` where ``A`` is singular)."""
    if p is not None and p not in ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor A must have at least 2 dimensions.")
    _check_float(A, "linalg.cond")
    if p in (None, 2, -2):
        s = svdvals(A)
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    _check_square(A, f"linalg.cond(ord={p})")
    inverse, info = inv_ex(A)
    singular = info.ne(0)
    safe = inverse.where(singular.unsqueeze(-1).unsqueeze(-1).logical_not(), _eye_like(A))
    out = matrix_norm(A, p) * matrix_norm(safe, p)
    return out.masked_fill(singular, math.inf)


def _powers(x: Tensor, n: int) -> Tensor:
    """``x ** 0, ..., x ** (n - 1)`` along a new last dimension, as running products."""
    ones = _C.ones((*x.shape, 1), dtype=x.dtype)
    if n == 1:
        return ones
    repeated = x.unsqueeze(-1).expand(*x.shape, n - 1)
    return _C.cat([ones, repeated.cumprod(-1)], -1)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """The Vandermonde matrices of the vectors in ``x``: ``x ** 0, ..., x ** (N - 1)`` along the last
    dimension (``N`` defaults to the vectors' length)."""
    n = (x.shape[-1] if x.dim() else 1) if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    return _powers(x, n)


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``A`` under ``tensordot(A, X, ind)``: shape ``A.shape[ind:] + A.shape[:ind]``."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if math.prod(rows) != math.prod(cols):
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), "
            f"but got {math.prod(cols)} != {math.prod(rows)}"
        )
    return inv(A.reshape(math.prod(rows), math.prod(cols))).reshape(*cols, *rows)


def tensorsolve(A: Tensor, B: Tensor, dims=None) -> Tensor:
    """``X`` with ``tensordot(A, X, X.dim()) = B``; ``dims`` of ``A`` are moved to the end first."""
    if dims is not None:
        dims = [_wrap_dim(d, A.dim()) for d in dims]
        A = A.movedim(dims, list(range(A.dim() - len(dims), A.dim())))
    rest = tuple(A.shape[B.dim() :])
    rows = math.prod(B.shape)
    if math.prod(rest) != rows:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == prod(self.shape"
            f"[:other.ndim]), but got {math.prod(rest)} != {rows}"
        )
    return solve(A.reshape(rows, rows), B.reshape(rows)).reshape(*rest)


def _lu_steps(A: Tensor):
    """The packed LU factorisation with partial pivoting of each matrix (``P A = L U``, ``L`` with a
    unit diagonal below, ``U`` on and above the diagonal), built from differentiable ops: the
    pivot rows are chosen on the values, then the row exchanges and eliminations are tensor ops.
    Returns ``(LU, pivots, info)`` with LAPACK's conventions: 1-based pivots (int64: ferrograd has
    no int32) and ``info`` the 1-based position of the first zero pivot, 0 when there is none."""
    batch = tuple(A.shape[:-2])
    m, n = A.shape[-2], A.shape[-1]
    M = A.reshape(-1, m, n)
    count = M.shape[0]
    k_max = builtins.min(m, n)
    pivots = np.tile(np.arange(1, k_max + 1), (count, 1))
    info = np.zeros(count, dtype=np.int64)
    for k in range(k_max):
        column = np.abs(M.detach()[:, k:, k].numpy())
        best = column.argmax(-1) + k
        pivots[:, k] = best + 1
        order = np.tile(np.arange(m), (count, 1))
        order[np.arange(count), k] = best
        order[np.arange(count), best] = k
        index = _from_np(order)
        M = M.gather(1, index.unsqueeze(-1).expand(count, m, n))
        pivot = M[:, k, k]
        zero = pivot.detach().eq(0)
        info = np.where((info == 0) & zero.numpy(), k + 1, info)
        if k + 1 == m:
            break
        multipliers = M[:, k + 1 :, k] / pivot.masked_fill(zero, 1).unsqueeze(-1)
        block = M[:, k + 1 :, k + 1 :] - multipliers.unsqueeze(-1) * M[:, k : k + 1, k + 1 :]
        lower = _C.cat([M[:, k + 1 :, :k], multipliers.unsqueeze(-1), block], -1)
        M = _C.cat([M[:, : k + 1, :], lower], 1)
    return (
        M.reshape(*batch, m, n),
        _from_np(pivots.reshape(*batch, k_max)),
        _from_np(info.reshape(batch)),
    )


def _check_lu_input(A: Tensor, name: str) -> None:
    if A.dim() < 2:
        raise RuntimeError(
            f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead"
        )
    _check_float(A, name)


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False):
    """``(LU, pivots, info)``: the packed LU factorisation with partial pivoting (see
    :func:`lu_factor`) and, per matrix, the 1-based position of the first zero pivot (0 if none)."""
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    _check_lu_input(A, "torch.lu_factor")
    LU, pivots, info = _lu_steps(A)
    if check_errors:
        _raise_for_info(info, "torch.linalg.lu_factor_ex", lambda i: f"U[{i},{i}] is zero.")
    return _LuFactorExResult(LU, pivots, info)


def _raise_for_info(info: Tensor, name: str, what) -> None:
    failed = info.reshape(-1).nonzero()
    if failed.numel():
        first = builtins.int(failed[0, 0].item())
        position = builtins.int(info.reshape(-1)[first].item())
        prefix = f"(Batch element {first}): " if info.dim() else ""
        raise LinAlgError(f"{name}: {prefix}{what(position)}")


def lu_factor(A: Tensor, *, pivot: bool = True):
    """``(LU, pivots)``: ``L`` (unit diagonal, below) and ``U`` (on and above) packed in one matrix with
    ``P A = L U``, and the 1-based row exchanged with each row in turn (int64, where PyTorch has
    int32). Raises when a pivot is zero."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    failed = info.reshape(-1).nonzero()
    if failed.numel():
        # PyTorch names the zero pivot by its 1-based position, as LAPACK's info has it.
        i = builtins.int(info.reshape(-1)[builtins.int(failed[0, 0].item())].item())
        raise RuntimeError(
            f"torch.linalg.lu_factor: U[{i},{i}] is zero and using it on lu_solve would result in a "
            "division by zero. If you still want to perform the factorization, consider calling "
            "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
        )
    return _LuFactorResult(LU, pivots)


def _permutation(pivots: Tensor, m: int):
    """For each batch element, the row order ``perm`` with ``A[perm] = L U`` from LAPACK pivots."""
    swaps = pivots.detach().numpy().reshape(-1, pivots.shape[-1]) - 1
    order = np.tile(np.arange(m), (swaps.shape[0], 1))
    rows = np.arange(swaps.shape[0])
    for k in range(swaps.shape[1]):
        first, other = order[rows, k].copy(), order[rows, swaps[:, k]].copy()
        order[rows, k], order[rows, swaps[:, k]] = other, first
    return order.reshape(*pivots.shape[:-1], m)


def _unpack(LU: Tensor):
    m, n = LU.shape[-2], LU.shape[-1]
    k = builtins.min(m, n)
    L = LU[..., :, :k].tril(-1) + _C.eye(m, k, dtype=LU.dtype)
    U = LU[..., :k, :].triu()
    return L, U


def lu(A: Tensor, *, pivot: bool = True):
    """``(P, L, U)`` with ``A = P L U``: ``P`` a permutation matrix, ``L`` unit lower triangular
    (``m x k``), ``U`` upper triangular (``k x n``), ``k = min(m, n)``."""
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return _LuResult(*lu_unpack(LU, pivots))


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True):
    """``ferrograd.lu_unpack``: ``(P, L, U)`` from ``lu_factor``'s packed result (an empty tensor
    for the parts not asked for)."""
    empty = _C.empty((0,), dtype=LU_data.dtype)
    L, U = _unpack(LU_data) if unpack_data else (empty, empty)
    if not unpack_pivots:
        return _LuUnpackResult(empty, L, U)
    m = LU_data.shape[-2]
    order = _from_np(_permutation(LU_pivots, m))
    # P[perm[i], i] = 1, i.e. column i of P is the unit vector at perm[i].
    P = (
        _C.eye(m, dtype=LU_data.dtype)
        .expand(*order.shape, m)
        .gather(-2, order.unsqueeze(-1).expand(*order.shape, m))
    )
    return _LuUnpackResult(P.transpose(-2, -1), L, U)


def _torch_lu(A: Tensor, pivot: bool = True, get_infos: bool = False):
    """``ferrograd.lu`` / ``Tensor.lu``, the older form of ``lu_factor`` (``lu_factor_ex`` with
    ``get_infos``)."""
    return tuple(lu_factor_ex(A, pivot=pivot)) if get_infos else tuple(lu_factor(A, pivot=pivot))


def _torch_lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """``ferrograd.lu_solve(b, LU_data, LU_pivots)`` / ``b.lu_solve(...)``: ``lu_solve`` with the
    right-hand side first."""
    return lu_solve(LU_data, LU_pivots, b)


_GeqrfResult = _return_type("geqrf", ("a", "tau"))


_GeqrfNoDerivative = _no_derivative("Geqrf", "the derivative for 'geqrf' is not implemented.", outputs=2)


def _torch_geqrf(input: Tensor):
    """``ferrograd.geqrf``: the Householder QR of each matrix in LAPACK's form, ``R`` on and above
    the diagonal of ``a`` and the reflectors below it, with their scales ``tau``
    (``householder_product(a, tau)`` is ``Q``)."""
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    m, n = input.shape[-2], input.shape[-1]
    k = builtins.min(m, n)
    matrices = input.detach().numpy().reshape(-1, m, n)
    a = np.empty_like(matrices)
    tau = np.empty((matrices.shape[0], k), dtype=matrices.dtype)
    for i, matrix in enumerate(matrices):
        if k:
            raw, scales = np.linalg.qr(matrix, mode="raw")
            a[i], tau[i] = raw.T, scales
        else:
            a[i] = matrix
    a = _from_np(a.reshape(input.shape), dtype=input.dtype)
    tau = _from_np(tau.reshape(*input.shape[:-2], k), dtype=input.dtype)
    if _C.is_grad_enabled() and input.requires_grad:
        a, tau = _GeqrfNoDerivative.apply(input, a, tau)
    return _GeqrfResult(a, tau)


def _full_householder_product(input: Tensor, tau: Tensor) -> Tensor:
    """The whole ``m x m`` ``Q = H_1 ... H_k`` of reflectors stored below ``input``'s diagonal."""
    m, n = input.shape[-2], input.shape[-1]
    square = input[..., :, :m] if n >= m else _C.cat([input, input.new_zeros(*input.shape[:-1], m - n)], -1)
    return householder_product(square, tau)


def _torch_ormqr(
    input: Tensor, tau: Tensor, other: Tensor, left: bool = True, transpose: bool = False
) -> Tensor:
    """``ferrograd.ormqr``: ``other`` multiplied by the ``Q`` of ``geqrf``'s output (``Q^H`` with
    ``transpose``), from the left or the right; differentiable in all three."""
    for name, t in (("input", input), ("other", other)):
        if t.dim() < 2:
            raise RuntimeError(f"torch.ormqr: {name} must have at least 2 dimensions.")
    if other.dim() != input.dim():
        raise RuntimeError(
            "torch.ormqr: Expected other to have the same number of dimensions as input, but got "
            f"other.ndim equal to {other.dim()} and input.ndim is equal to {input.dim()}"
        )
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.shape[-1] != builtins.min(other.shape[side], input.shape[-1]):
        raise RuntimeError(
            f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1])"
        )
    Q = _full_householder_product(input, tau)
    if transpose:
        Q = Q.transpose(-2, -1).conj()
    return Q @ other if left else other @ Q


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """``X`` with ``A X = B`` (``X A = B`` unless ``left``; ``A^H`` for ``A`` with ``adjoint``) from
    ``lu_factor(A)``."""
    if not left:
        H = lambda t: t.transpose(-2, -1).conj()  # noqa: E731
        return H(lu_solve(LU, pivots, H(B), adjoint=not adjoint))
    L, U = _unpack(LU)
    order = _from_np(_permutation(pivots, LU.shape[-2]))
    if not adjoint:
        B, order = _broadcast_rows(B, order)
        PB = B.gather(-2, order.unsqueeze(-1).expand(*order.shape, B.shape[-1]))
        y = solve_triangular(L, PB, upper=False, unitriangular=True)
        return solve_triangular(U, y, upper=True)
    y = solve_triangular(U.transpose(-2, -1).conj(), B, upper=False)
    x = solve_triangular(L.transpose(-2, -1).conj(), y, upper=True, unitriangular=True)
    x, order = _broadcast_rows(x, order)
    inverse = order.argsort(-1)
    return x.gather(-2, inverse.unsqueeze(-1).expand(*inverse.shape, x.shape[-1]))


def _broadcast_rows(B: Tensor, order: Tensor):
    """``B`` and the row orders broadcast over their batch dimensions."""
    from ._functions import broadcast_shapes

    batch = broadcast_shapes(tuple(B.shape[:-2]), tuple(order.shape[:-1]))
    return B.expand(*batch, *B.shape[-2:]), order.expand(*batch, order.shape[-1])


def inv_ex(A: Tensor, *, check_errors: bool = False):
    """``(inverse, info)``: the inverse of each square matrix and the 1-based position of the first
    zero pivot of its LU factorisation (0 when it is invertible; the inverse is then inf/NaN)."""
    _check_square(A, "linalg.inv_ex")
    _, _, info = _lu_steps(A.detach())
    if builtins.bool(info.eq(0).all().item()):
        return _InvExResult(inv(A), info)
    if check_errors:
        _raise_for_info(
            info,
            "linalg.inv_ex",
            lambda i: (
                f"The diagonal element {i} is zero, the inversion could not be completed because "
                "the input matrix is singular."
            ),
        )
    LU, pivots, _ = _lu_steps(A)
    return _InvExResult(lu_solve(LU, pivots, _eye_like(A)), info)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False):
    """``(result, info)``: :func:`solve` with ``info`` as in :func:`inv_ex` instead of raising."""
    _check_square(A, "linalg.solve_ex")
    _, _, info = _lu_steps(A.detach())
    if builtins.bool(info.eq(0).all().item()):
        return _SolveExResult(solve(A, B, left=left), info)
    if check_errors:
        _raise_for_info(
            info,
            "torch.linalg.solve_ex",
            lambda i: "The solver failed because the input matrix is singular.",
        )
    vector = left and B.dim() == A.dim() - 1
    rhs = B.unsqueeze(-1) if vector else B
    LU, pivots, _ = _lu_steps(A)
    out = lu_solve(LU, pivots, rhs, left=left)
    return _SolveExResult(out.squeeze(-1) if vector else out, info)


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False):
    """``(L, info)``: :func:`cholesky` and, per matrix, 0 or the order of the first leading minor
    that is not positive-definite; a failed matrix's factor is left zero."""
    _check_square(A, "linalg.cholesky_ex")
    try:
        return _CholeskyExResult(cholesky(A, upper=upper), _C.zeros(tuple(A.shape[:-2]), dtype=_C.int64))
    except LinAlgError:
        pass
    values = A.detach().numpy().reshape(-1, A.shape[-1], A.shape[-1])
    info = np.zeros(values.shape[0], dtype=np.int64)
    for b, matrix in enumerate(values):
        for order in range(1, matrix.shape[0] + 1):
            try:
                np.linalg.cholesky(matrix[:order, :order])
            except np.linalg.LinAlgError:
                info[b] = order
                break
    info_t = _from_np(info.reshape(tuple(A.shape[:-2])))
    if check_errors:
        _raise_for_info(
            info_t,
            "linalg.cholesky_ex",
            lambda i: (
                f"The factorization could not be completed because the input is not positive-definite "
                f"(the leading minor of order {i} is not positive-definite)."
            ),
        )
    flat = A.reshape(-1, A.shape[-1], A.shape[-1])
    factors = [
        cholesky(flat[b], upper=upper) if info[b] == 0 else _C.zeros(tuple(flat.shape[1:]), dtype=A.dtype)
        for b in range(flat.shape[0])
    ]
    return _CholeskyExResult(_C.stack(factors).reshape(*A.shape), info_t)


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first ``n`` columns of ``H_1 ... H_k`` with ``H_i = I - tau_i v_i v_i^H``, ``v_i`` the
    ``i``-th column of ``A`` below the diagonal with a 1 on it (the ``Q`` of a Householder QR)."""
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if tau.shape[-1] > n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    unit = _C.eye(m, dtype=A.dtype)
    below = A.tril(-1) + unit[:, :n]
    Q = unit.expand(*A.shape[:-2], m, m)
    for i in range(tau.shape[-1]):
        v = below[..., :, i : i + 1]
        Q = Q - (Q @ v) @ (v.transpose(-2, -1).conj() * tau[..., i : i + 1].unsqueeze(-1))
    return Q[..., :, :n]

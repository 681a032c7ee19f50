"""Randomized low-rank SVD and PCA (Halko, Martinsson and Tropp, 2009), made of differentiable
ops (``matmul``, ``linalg.qr``, ``linalg.svd``), so gradients flow through them."""

from __future__ import annotations

from . import _C, linalg
from ._C import Tensor

__all__ = ["pca_lowrank", "svd_lowrank"]


def _orthonormal_range(A: Tensor, q: int, niter: int) -> Tensor:
    """An orthonormal basis ``Q`` (``[..., m, k]``) whose span nearly holds the range of ``A``:
    the range of a random ``q``-column sketch, sharpened by ``niter`` power iterations, each
    re-orthonormalised so that small singular values are not lost."""
    Q = linalg.qr(A @ _C.randn(A.shape[-1], q, dtype=A.dtype)).Q
    for _ in range(niter):
        Q = linalg.qr(A.mH @ Q).Q
        Q = linalg.qr(A @ Q).Q
    return Q


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None):
    """``(U, S, V)`` with ``A - M ≈ U diag(S) V^H`` for a matrix (or batch) of rank about ``q``:
    ``U`` is ``[..., m, q]``, ``S`` ``[..., q]`` and ``V`` ``[..., n, q]``. ``niter`` power
    iterations trade time for accuracy when the singular values decay slowly. The sketch is
    drawn from ferrograd's generator, so ``manual_seed`` makes the result repeatable."""
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    if M is not None:
        A = A - M.broadcast_to(A.shape)
    m, n = A.shape[-2:]
    if m < n or n > q:
        # Sketch the rows' span instead: A is wide, or has more columns than the sketch.
        Q = _orthonormal_range(A.mH, q, niter)
        U, S, Vh = linalg.svd(A @ Q, full_matrices=False)  # A ≈ (A Q) Q^H
        return U, S, Q @ Vh.mH
    Q = _orthonormal_range(A, q, niter)
    U, S, Vh = linalg.svd(Q.mH @ A, full_matrices=False)  # A ≈ Q (Q^H A)
    return Q @ U, S, Vh.mH


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2):
    """Principal components of the rows of ``A`` (``[..., m, n]``) as ``(U, S, V)``: ``V``'s
    columns are the ``q`` principal directions (``q`` defaults to ``min(6, m, n)``) and
    ``S**2 / (m - 1)`` the variances along them, with the column means removed first when
    ``center``."""
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    if not (isinstance(q, int) and 0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (isinstance(niter, int) and niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(dim=-2, keepdim=True)
    return svd_lowrank(A, q, niter=niter)

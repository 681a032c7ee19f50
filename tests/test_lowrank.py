"""svd_lowrank and pca_lowrank: exact on matrices of rank at most q, differentiable, PyTorch's checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ferrograd as fg

from helpers import assert_raises_like_torch, fd_grads, has_torch, torch


def _low_rank(rng: np.random.Generator, batch: tuple, m: int, n: int, rank: int) -> np.ndarray:
    return rng.standard_normal((*batch, m, rank)) @ rng.standard_normal((*batch, rank, n))


def _rebuilt(U, S, V):
    return (U @ fg.diag_embed(S) @ V.mT).numpy()


@given(
    m=st.integers(1, 9),
    n=st.integers(1, 9),
    rank=st.integers(0, 4),
    extra=st.integers(0, 3),
    batch=st.sampled_from([(), (2,)]),
    niter=st.integers(0, 2),
    seed=st.integers(0, 2**32 - 1),
)
def test_matrices_of_rank_at_most_q_are_recovered(m, n, rank, extra, batch, niter, seed):
    rank = min(rank, m, n)
    q = min(rank + extra, m, n)
    A = _low_rank(np.random.default_rng(seed), batch, m, n, rank)
    U, S, V = fg.svd_lowrank(fg.tensor(A), q=q, niter=niter)
    k = S.shape[-1]
    assert U.shape == (*batch, m, k) and V.shape == (*batch, n, k) and k <= q
    np.testing.assert_allclose(_rebuilt(U, S, V), A, atol=1e-9 * (1 + np.abs(A).max()))
    # The singular values are the matrix's own (descending; zeros past its rank).
    exact = np.linalg.svd(A, compute_uv=False)[..., :k]
    np.testing.assert_allclose(S.numpy(), exact, atol=1e-9 * (1 + np.abs(A).max()))
    gram = (V.mT @ V).numpy()[..., :rank, :rank]
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(rank), gram.shape), atol=1e-9)


def test_a_subtracted_matrix_m():
    rng = np.random.default_rng(3)
    A = _low_rank(rng, (), 7, 5, 2)
    M = rng.standard_normal((1, 5))  # broadcast over A's rows
    U, S, V = fg.svd_lowrank(fg.tensor(A + M), q=3, M=fg.tensor(M))
    np.testing.assert_allclose(_rebuilt(U, S, V), A, atol=1e-10)


def test_pca_finds_the_principal_directions_and_variances():
    rng = np.random.default_rng(7)
    directions = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    scores = rng.standard_normal((400, 4)) * np.array([5.0, 3.0, 1.0, 0.2])
    X = scores @ directions.T + np.array([1.0, -2.0, 0.5, 3.0])
    U, S, V = fg.pca_lowrank(fg.tensor(X), q=4)
    centred = X - X.mean(0)
    variances = np.linalg.eigvalsh(np.cov(centred.T))[::-1]
    np.testing.assert_allclose(S.numpy() ** 2 / (X.shape[0] - 1), variances, rtol=1e-10)
    # Each found direction is one of the true ones up to sign.
    alignment = np.abs(V.numpy().T @ np.linalg.eigh(np.cov(centred.T))[1][:, ::-1])
    np.testing.assert_allclose(np.diag(alignment), 1.0, atol=1e-8)
    np.testing.assert_allclose(_rebuilt(U, S, V), centred, atol=1e-9)
    # Uncentred, the means stay in the data the factors rebuild.
    U, S, V = fg.pca_lowrank(fg.tensor(X), q=4, center=False)
    np.testing.assert_allclose(_rebuilt(U, S, V), X, atol=1e-9)
    assert fg.pca_lowrank(fg.tensor(X))[1].shape == (4,)  # q = min(6, m, n)


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (2, 3, 5)])
def test_singular_values_have_the_gradient_of_the_exact_decomposition(shape):
    rng = np.random.default_rng(11)
    a = rng.standard_normal(shape)
    q = min(shape[-2:])
    cotangent = rng.standard_normal((*shape[:-2], q))
    x = fg.tensor(a, requires_grad=True)
    S = fg.svd_lowrank(x, q=q)[1]
    S.backward(fg.tensor(cotangent))

    def singular_values(arr):
        return np.linalg.svd(arr, compute_uv=False)

    (expected,) = fd_grads(singular_values, [a.copy()], cotangent)
    np.testing.assert_allclose(x.grad.numpy(), expected, atol=1e-6)


def test_the_low_rank_factors_carry_gradients_to_the_input():
    x = fg.tensor(_low_rank(np.random.default_rng(5), (), 6, 5, 2), requires_grad=True)
    U, S, V = fg.pca_lowrank(x, q=3, center=True)
    (U @ fg.diag_embed(S) @ V.mT).pow(2).sum().backward()
    centred = x.detach().numpy() - x.detach().numpy().mean(0)
    # d/dx ||centre(x)||^2 = 2 centre(x): the rank-2 matrix is rebuilt exactly.
    np.testing.assert_allclose(x.grad.numpy(), 2 * centred, atol=1e-9)


@pytest.mark.skipif(not has_torch, reason="torch is not installed")
def test_singular_values_match_torch():
    A = _low_rank(np.random.default_rng(2), (3,), 8, 6, 3)
    ours = fg.svd_lowrank(fg.tensor(A), q=4)[1].numpy()
    theirs = torch.svd_lowrank(torch.tensor(A), q=4)[1].numpy()
    np.testing.assert_allclose(ours, theirs, atol=1e-10)
    ours = fg.pca_lowrank(fg.tensor(A), q=3)[1].numpy()
    theirs = torch.pca_lowrank(torch.tensor(A), q=3)[1].numpy()
    np.testing.assert_allclose(ours, theirs, atol=1e-10)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"q": -1}, r"q\(=-1\) must be non-negative integer and not greater than min\(m, n\)=5"),
        ({"q": 7}, r"q\(=7\) must be non-negative integer and not greater than min\(m, n\)=5"),
        ({"niter": -1}, r"niter\(=-1\) must be non-negative integer"),
    ],
)
def test_pca_argument_errors_match_torch(kwargs, message):
    assert_raises_like_torch(lambda F, T: T.pca_lowrank(T.ones(5, 6), **kwargs), ValueError, message)

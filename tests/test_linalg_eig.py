"""linalg.eig and linalg.eigvals of real matrices: complex decompositions, gradients of losses that
do not depend on each eigenvector's phase, PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ferrograd as fg

from helpers import fd_grads, has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is not installed")


def _matrix(seed: int, shape) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _same_multiset(ours: np.ndarray, theirs: np.ndarray, atol: float) -> None:
    """Every eigenvalue of one list is matched by a distinct one of the other."""
    left = list(theirs)
    for value in ours:
        k = int(np.argmin([abs(value - other) for other in left]))
        assert abs(value - left.pop(k)) <= atol, (ours, theirs)


@given(
    n=st.integers(0, 6),
    batch=st.sampled_from([(), (3,), (2, 1)]),
    seed=st.integers(0, 2**32 - 1),
)
def test_eigenpairs_of_real_matrices(n, batch, seed):
    a = _matrix(seed, (*batch, n, n))
    values, vectors = fg.linalg.eig(fg.tensor(a))
    assert values.dtype == fg.complex128 and vectors.dtype == fg.complex128
    assert values.shape == (*batch, n) and vectors.shape == (*batch, n, n)
    L, V = values.numpy(), vectors.numpy()
    scale = 1 + np.abs(a).max(initial=0.0)
    np.testing.assert_allclose(a @ V, V * L[..., None, :], atol=1e-9 * scale * n)
    np.testing.assert_allclose(np.linalg.norm(V, axis=-2), 1.0, atol=1e-12)
    # Each eigenvector's largest component is real and positive.
    if n:
        largest = np.take_along_axis(V, np.abs(V).argmax(-2)[..., None, :], -2)
        np.testing.assert_allclose(largest.imag, 0.0, atol=1e-12)
        assert (largest.real > 0).all()
    for index in np.ndindex(*batch):
        _same_multiset(L[index], np.linalg.eigvals(a[index]), 1e-8 * scale)
    np.testing.assert_array_equal(fg.linalg.eigvals(fg.tensor(a)).numpy(), L)


def test_float32_gives_complex64_and_a_rotation_its_conjugate_pair():
    values, vectors = fg.linalg.eig(fg.tensor([[0.0, 1.0], [-1.0, 0.0]]))
    assert values.dtype == fg.complex64 and vectors.dtype == fg.complex64
    _same_multiset(values.numpy(), np.array([1j, -1j]), 1e-6)
    V = vectors.numpy()
    np.testing.assert_allclose(V[:, 0], V[:, 1].conj(), atol=1e-6)


def _sum_of_moduli(a):
    return np.abs(np.linalg.eigvals(a)).sum(-1)


def _weighted_vector_moduli(a, weights):
    values, vectors = np.linalg.eig(a)
    return ((np.abs(vectors) ** 2) * weights[..., :, None] * values.real[..., None, :]).sum((-2, -1))


def _ours_sum_of_moduli(x):
    return fg.linalg.eigvals(x).abs().sum(-1)


def _ours_weighted_vector_moduli(x, weights):
    values, vectors = fg.linalg.eig(x)
    return (vectors.abs().pow(2) * weights[..., :, None] * values.real[..., None, :]).sum((-2, -1))


@pytest.mark.parametrize("shape", [(3, 3), (4, 4), (2, 5, 5)])
def test_gradients_of_eigenvalue_losses_match_finite_differences(shape):
    a = _matrix(sum(shape), shape)
    cotangent = np.random.default_rng(1).standard_normal(shape[:-2])
    x = fg.tensor(a, requires_grad=True)
    _ours_sum_of_moduli(x).backward(fg.tensor(cotangent))
    (expected,) = fd_grads(_sum_of_moduli, [a.copy()], cotangent)
    np.testing.assert_allclose(x.grad.numpy(), expected, atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 3), (4, 4), (2, 5, 5)])
def test_gradients_of_eigenvector_losses_match_finite_differences(shape):
    a = _matrix(2 * sum(shape), shape)
    weights = np.random.default_rng(4).standard_normal(shape[:-1])
    cotangent = np.ones(shape[:-2])
    x = fg.tensor(a, requires_grad=True)
    _ours_weighted_vector_moduli(x, fg.tensor(weights)).backward(fg.tensor(cotangent))
    (expected,) = fd_grads(lambda m: _weighted_vector_moduli(m, weights), [a.copy()], cotangent)
    np.testing.assert_allclose(x.grad.numpy(), expected, atol=1e-6)


@needs_torch
def test_gradients_and_second_derivatives_match_torch():
    a = _matrix(9, (4, 4))
    weights = _matrix(10, (4,))
    probe = _matrix(11, (4, 4))
    results = []
    for T in (fg, torch):
        x = T.tensor(a, requires_grad=True)
        values, vectors = T.linalg.eig(x)
        loss = values.abs().sum() + (vectors.abs().pow(2) * T.tensor(weights)[:, None] * values.real).sum()
        (g,) = T.autograd.grad(loss, x, create_graph=True)
        (gg,) = T.autograd.grad((g * T.tensor(probe)).sum(), x)
        results.append((g.detach().numpy(), gg.numpy()))
    (g, gg), (tg, tgg) = results
    np.testing.assert_allclose(g, tg, atol=1e-10)
    np.testing.assert_allclose(gg, tgg, atol=1e-8)
    assert fg.linalg.eig(fg.tensor(a, requires_grad=True))[0].grad_fn.name() == "LinalgEigBackward0"


def test_a_loss_that_depends_on_the_phase_of_an_eigenvector_is_refused():
    x = fg.tensor(_matrix(5, (3, 3)), requires_grad=True)
    vectors = fg.linalg.eig(x).eigenvectors
    with pytest.raises(RuntimeError, match=r"linalg_eig_backward: The eigenvectors in the complex case are"):
        vectors.imag.sum().backward()
    if has_torch:
        t = torch.tensor(_matrix(5, (3, 3)), requires_grad=True)
        with pytest.raises(
            RuntimeError, match=r"linalg_eig_backward: The eigenvectors in the complex case are"
        ):
            torch.linalg.eig(t).eigenvectors.imag.sum().backward()


@pytest.mark.parametrize(
    "make, kind, message",
    [
        (
            lambda T: T.ones(2, 3),
            RuntimeError,
            "linalg.eig: A must be batches of square matrices, but they are 2 by 3 matrices",
        ),
        (
            lambda T: T.ones(3),
            RuntimeError,
            "linalg.eig: The input tensor A must have at least 2 dimensions.",
        ),
        (
            lambda T: T.tensor([[float("nan"), 0.0], [0.0, 1.0]]),
            RuntimeError,
            "input tensor should not contain infs or NaNs.",
        ),
        (
            lambda T: T.tensor([[float("inf"), 0.0], [0.0, 1.0]]),
            RuntimeError,
            "input tensor should not contain infs or NaNs.",
        ),
    ],
)
def test_errors_match_torch(make, kind, message):
    modules = [fg] + ([torch] if has_torch else [])
    for T in modules:
        with pytest.raises(kind, match=message):
            T.linalg.eig(make(T))


def test_empty_and_named_results():
    values, vectors = fg.linalg.eig(fg.zeros(0, 0))
    assert values.shape == (0,) and vectors.shape == (0, 0) and values.dtype == fg.complex64
    result = fg.linalg.eig(fg.eye(2, dtype=fg.float64))
    assert result.eigenvalues.tolist() == [1, 1]
    np.testing.assert_allclose(np.abs(result.eigenvectors.numpy()), np.eye(2))

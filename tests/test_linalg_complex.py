"""The LU-based linear algebra of complex matrices: ``inv``, ``det``, ``slogdet``, ``logdet`` and
``solve`` give values against numpy and gradients against central differences, in PyTorch's
convention for a real loss of complex inputs (dL/dRe + i dL/dIm), and against torch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ferrograd as fg

from helpers import has_torch, torch

RNG = np.random.default_rng(7)
W = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
ROWS = np.stack([W[:2], W[1:]])  # a batch of two 2x3 right-hand sides of XA = B


def _complex_fd(loss, z: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """dL/dRe + i dL/dIm of a real ``loss`` by central differences."""
    grad = np.zeros_like(z)
    for idx in np.ndindex(z.shape):
        for step in (1, 1j):
            e = np.zeros_like(z)
            e[idx] = h * step
            grad[idx] += step * (loss(z + e) - loss(z - e)) / (2 * h)
    return grad


def _slogdet(a):
    sign, log = np.linalg.slogdet(a)
    return sign, log


# Each case: (loss on a library's tensors, the same loss on numpy arrays).
CASES = {
    "inv": (
        lambda T, a: (T.linalg.inv(a) * T.tensor(W)).real.sum() + T.linalg.inv(a).imag.sum(),
        lambda a: (np.linalg.inv(a) * W).real.sum() + np.linalg.inv(a).imag.sum(),
    ),
    "det": (
        lambda T, a: (T.linalg.det(a) * (1 - 2j)).real.sum() + T.linalg.det(a).abs().sum(),
        lambda a: (np.linalg.det(a) * (1 - 2j)).real.sum() + np.abs(np.linalg.det(a)).sum(),
    ),
    "slogdet": (
        lambda T, a: (lambda s, ld: (s * (1 + 2j)).real.sum() + (ld * 0.5).sum() + s.imag.sum())(
            *T.linalg.slogdet(a)
        ),
        lambda a: (lambda s, ld: (s * (1 + 2j)).real.sum() + (ld * 0.5).sum() + s.imag.sum())(*_slogdet(a)),
    ),
    "logdet": (
        lambda T, a: (T.logdet(a) * (0.5 - 1j)).real.sum(),
        lambda a: (np.log(np.linalg.det(a)) * (0.5 - 1j)).real.sum(),
    ),
    "solve": (
        lambda T, a: (T.linalg.solve(a, T.tensor(W[:, :2])) * (2 + 1j)).real.sum(),
        lambda a: (np.linalg.solve(a, W[:, :2]) * (2 + 1j)).real.sum(),
    ),
    "solve_right": (
        lambda T, a: T.linalg.solve(a, T.tensor(ROWS), left=False).abs().sum(),
        lambda a: np.abs(np.linalg.solve(a.swapaxes(-1, -2), ROWS.swapaxes(-1, -2)).swapaxes(-1, -2)).sum(),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
@given(seed=st.integers(0, 2**16))
def test_complex_lu_ops_and_their_gradients(case, seed):
    rng = np.random.default_rng(seed)
    # Well conditioned: a dominant diagonal keeps the differences accurate.
    a_np = rng.normal(size=(2, 3, 3)) + 1j * rng.normal(size=(2, 3, 3)) + 4 * np.eye(3)
    loss, loss_np = CASES[case]
    a = fg.tensor(a_np, requires_grad=True)
    value = loss(fg, a)
    value.backward()
    np.testing.assert_allclose(value.item(), loss_np(a_np), rtol=1e-10)
    np.testing.assert_allclose(a.grad.numpy(), _complex_fd(loss_np, a_np), rtol=1e-5, atol=1e-7)


@pytest.mark.skipif(not has_torch, reason="torch is not installed")
@pytest.mark.parametrize("case", sorted(CASES))
def test_complex_lu_gradients_match_torch(case):
    a_np = RNG.normal(size=(2, 3, 3)) + 1j * RNG.normal(size=(2, 3, 3))
    grads = []
    for T in (fg, torch):
        a = T.tensor(a_np, requires_grad=True)
        CASES[case][0](T, a).backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-9, atol=1e-12)


def test_complex64_keeps_its_dtype_and_slogdet_its_real_log():
    a = fg.tensor([[1 + 1j, 2], [0.5j, 1]], dtype=fg.complex64)
    assert fg.linalg.inv(a).dtype == fg.complex64
    assert fg.linalg.det(a).dtype == fg.complex64
    sign, log = fg.linalg.slogdet(a)
    assert sign.dtype == fg.complex64 and log.dtype == fg.float32
    np.testing.assert_allclose(abs(sign.item()), 1.0, rtol=1e-6)
    np.testing.assert_allclose(fg.linalg.det(a).item(), 1 + 0j, atol=1e-6)


def test_a_singular_complex_matrix_is_refused_or_has_zero_determinant():
    z = fg.zeros(2, 2, dtype=fg.complex128)
    with pytest.raises(fg.linalg.LinAlgError, match="The diagonal element 1 is zero"):
        fg.linalg.inv(z)
    sign, log = fg.linalg.slogdet(z)
    assert sign.item() == 0 and log.item() == float("-inf")
    assert fg.linalg.det(z).item() == 0

"""geqrf, orgqr and ormqr: Householder QR in LAPACK's compact form and products with its Q."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg


def random(rng, shape, complex_=False):
    values = rng.standard_normal(shape)
    if complex_:
        values = values + 1j * rng.standard_normal(shape)
    return fg.tensor(values, dtype=fg.complex128 if complex_ else fg.float64)


@st.composite
def matrices(draw):
    batch = draw(st.sampled_from([(), (2,)]))
    m, n = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    return batch, m, n, draw(st.booleans()), draw(st.integers(0, 2**16))


@settings(max_examples=40, deadline=None)
@given(matrices())
def test_geqrf_holds_r_and_the_reflectors_of_q(case):
    batch, m, n, complex_, seed = case
    A = random(np.random.default_rng(seed), (*batch, m, n), complex_)
    a, tau = fg.geqrf(A)
    k = min(m, n)
    assert a.shape == A.shape and tau.shape == (*batch, k) and a.dtype == A.dtype
    R = a.triu()[..., :k, :]
    Q = fg.orgqr(a[..., :, :k], tau)
    np.testing.assert_allclose((Q @ R).numpy(), A.numpy(), atol=1e-10)
    np.testing.assert_allclose((Q.mH @ Q).numpy(), np.broadcast_to(np.eye(k), (*batch, k, k)), atol=1e-10)
    result = fg.geqrf(A)
    assert result.a is result[0] and result.tau is result[1]


@settings(max_examples=40, deadline=None)
@given(matrices(), st.booleans(), st.booleans(), st.integers(1, 3))
def test_ormqr_multiplies_by_the_whole_q(case, left, transpose, columns):
    batch, m, n, complex_, seed = case
    rng = np.random.default_rng(seed)
    A = random(rng, (*batch, m, n), complex_)
    a, tau = fg.geqrf(A)
    other = random(rng, (*batch, m, columns) if left else (*batch, columns, m), complex_)
    full_q, _ = np.linalg.qr(A.numpy(), mode="complete")
    got = fg.ormqr(a, tau, other, left=left, transpose=transpose).numpy()
    Q = fg.ormqr(a, tau, fg.eye(m, dtype=A.dtype).expand(*batch, m, m)).numpy()
    op = np.conj(np.swapaxes(Q, -1, -2)) if transpose else Q
    expect = op @ other.numpy() if left else other.numpy() @ op
    np.testing.assert_allclose(got, expect, atol=1e-10)
    np.testing.assert_allclose(
        np.conj(np.swapaxes(Q, -1, -2)) @ Q, np.broadcast_to(np.eye(m), Q.shape), atol=1e-10
    )
    np.testing.assert_allclose(np.abs(Q[..., :, : min(m, n)]), np.abs(full_q[..., :, : min(m, n)]), atol=1e-8)


def test_ormqr_is_differentiable_and_geqrf_is_not():
    rng = np.random.default_rng(1)
    a, tau = fg.geqrf(random(rng, (4, 3)))
    a, tau = a.requires_grad_(), tau.requires_grad_()
    other = random(rng, (4, 2)).requires_grad_()
    assert fg.autograd.gradcheck(lambda a, t, o: fg.ormqr(a, t, o, transpose=True), (a, tau, other))
    x = random(rng, (3, 3)).requires_grad_()
    out = fg.geqrf(x)
    assert out.a.requires_grad
    with pytest.raises(RuntimeError, match="the derivative for 'geqrf' is not implemented."):
        out.a.sum().backward()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: fg.geqrf(fg.ones(3)), "torch.geqrf: input must have at least 2 dimensions."),
        (lambda: fg.ormqr(fg.ones(4), fg.ones(3), fg.ones(4, 2)), "input must have at least 2 dimensions."),
        (lambda: fg.ormqr(fg.ones(4, 3), fg.ones(3), fg.ones(4)), "other must have at least 2 dimensions."),
        (
            lambda: fg.ormqr(fg.ones(4, 3), fg.ones(3), fg.ones(5, 2)),
            r"other.shape\[-2\] must be equal to input",
        ),
        (
            lambda: fg.ormqr(fg.ones(4, 3), fg.ones(3), fg.ones(2, 5), left=False),
            r"other.shape\[-1\] must be equal to input.shape\[-2\]",
        ),
        (
            lambda: fg.ormqr(fg.ones(4, 3), fg.ones(2), fg.ones(4, 2)),
            r"tau.shape\[-1\] must be equal to min\(other.shape\[-2\], input.shape\[-1\]\)",
        ),
        (
            lambda: fg.ormqr(fg.ones(2, 4, 3), fg.ones(2, 3), fg.ones(4, 2)),
            "Expected other to have the same number of dimensions as input",
        ),
    ],
)
def test_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_agrees_with_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    A, other = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    ours, theirs = fg.geqrf(fg.tensor(A)), torch.geqrf(torch.tensor(A))
    np.testing.assert_allclose(ours.a.numpy(), theirs.a.numpy(), atol=1e-12)
    np.testing.assert_allclose(ours.tau.numpy(), theirs.tau.numpy(), atol=1e-12)
    for left, transpose in [(True, False), (True, True)]:
        got = fg.ormqr(ours.a, ours.tau, fg.tensor(other), left=left, transpose=transpose)
        expect = torch.ormqr(theirs.a, theirs.tau, torch.tensor(other), left=left, transpose=transpose)
        np.testing.assert_allclose(got.numpy(), expect.numpy(), atol=1e-12)
    np.testing.assert_allclose(
        ours.a.orgqr(ours.tau).numpy(),
        torch.orgqr(theirs.a, theirs.tau).numpy(),
        atol=1e-12,
    )

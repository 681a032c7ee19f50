"""Matrix decompositions and solvers of ``ferrograd.linalg``: values against numpy and torch,
gradients against finite differences (first and second order), grad_fn names and errors against
torch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg
from ferrograd.autograd import gradcheck, gradgradcheck

from helpers import has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is not installed")

batch_shapes = st.sampled_from([(), (1,), (3,), (2, 2)])
orders = st.integers(1, 4)
seeds = st.integers(0, 2**31 - 1)


def invertible(rng, batch, n):
    """Random matrices moved away from singularity by ``n I``."""
    return rng.standard_normal((*batch, n, n)) + n * np.eye(n)


def spd(rng, batch, n):
    """Symmetric positive-definite matrices ``B B^T + n I``."""
    b = rng.standard_normal((*batch, n, n))
    return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)


def leaf(x, dtype=fg.float64):
    return fg.tensor(x, dtype=dtype, requires_grad=True)


def sym(x):
    """A symmetric matrix function of any matrix, so finite differences stay symmetric."""
    return (x + x.transpose(-2, -1)) / 2


# ---------------------------------------------------------------------------- values


@given(seeds, batch_shapes, orders)
@settings(max_examples=20, deadline=None)
def test_inv_det_slogdet_match_numpy(seed, batch, n):
    rng = np.random.default_rng(seed)
    a = invertible(rng, batch, n) * rng.choice([-1.0, 1.0], size=(*batch, 1, 1))
    t = fg.tensor(a)
    np.testing.assert_allclose(fg.linalg.inv(t).numpy(), np.linalg.inv(a), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fg.linalg.det(t).numpy(), np.linalg.det(a), rtol=1e-10, atol=1e-12)
    sign, logabs = fg.linalg.slogdet(t)
    ref_sign, ref_log = np.linalg.slogdet(a)
    np.testing.assert_array_equal(sign.numpy(), ref_sign)
    np.testing.assert_allclose(logabs.numpy(), ref_log, rtol=1e-10, atol=1e-12)
    ld = fg.logdet(t).numpy()
    np.testing.assert_allclose(ld, np.where(ref_sign < 0, np.nan, ref_log), rtol=1e-10, atol=1e-12)


def test_float32_and_empty_matrices():
    rng = np.random.default_rng(1)
    a = invertible(rng, (2,), 3).astype(np.float32)
    got = fg.linalg.inv(fg.tensor(a))
    assert got.dtype == fg.float32
    np.testing.assert_allclose(got.numpy(), np.linalg.inv(a), rtol=1e-5, atol=1e-5)
    empty = fg.zeros(2, 0, 0)
    assert fg.linalg.inv(empty).shape == (2, 0, 0)
    np.testing.assert_array_equal(fg.linalg.det(empty).numpy(), [1.0, 1.0])
    assert fg.linalg.inv(fg.zeros(0, 2, 2)).shape == (0, 2, 2)


def test_det_of_singular_matrix_is_zero_and_slogdet_minus_inf():
    s = fg.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    assert fg.linalg.det(s).item() == 0.0
    sign, logabs = fg.linalg.slogdet(s)
    assert sign.item() == 0.0 and logabs.item() == -np.inf
    assert np.isnan(fg.logdet(-fg.eye(3)).item())


@given(seeds, batch_shapes, orders, st.integers(1, 3), st.booleans())
@settings(max_examples=25, deadline=None)
def test_solve_matches_numpy(seed, batch, n, k, left):
    rng = np.random.default_rng(seed)
    a = invertible(rng, batch, n)
    b = rng.standard_normal((*batch, n, k) if left else (*batch, k, n))
    x = fg.linalg.solve(fg.tensor(a), fg.tensor(b), left=left).numpy()
    ref = (
        np.linalg.solve(a, b)
        if left
        else np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    )
    np.testing.assert_allclose(x, ref, rtol=1e-9, atol=1e-9)


def test_solve_vector_and_broadcast_right_hand_sides():
    rng = np.random.default_rng(2)
    a = invertible(rng, (3,), 4)
    v = rng.standard_normal(4)
    got = fg.linalg.solve(fg.tensor(a), fg.tensor(v))
    assert got.shape == (3, 4)
    np.testing.assert_allclose(got.numpy(), np.linalg.solve(a, v[None, :, None])[..., 0], rtol=1e-10)
    vb = rng.standard_normal((3, 4))  # A's shape less its last dimension: a batch of vectors
    got = fg.linalg.solve(fg.tensor(a), fg.tensor(vb))
    np.testing.assert_allclose(got.numpy(), np.linalg.solve(a, vb[..., None])[..., 0], rtol=1e-10)
    b = rng.standard_normal((2, 1, 4, 2))  # batch dimensions broadcast
    got = fg.linalg.solve(fg.tensor(a), fg.tensor(b))
    assert got.shape == (2, 3, 4, 2)
    np.testing.assert_allclose(got.numpy(), np.linalg.solve(a, b), rtol=1e-10)


@given(seeds, batch_shapes, orders, st.booleans())
@settings(max_examples=20, deadline=None)
def test_cholesky_matches_numpy(seed, batch, n, upper):
    rng = np.random.default_rng(seed)
    a = spd(rng, batch, n)
    got = fg.linalg.cholesky(fg.tensor(a), upper=upper).numpy()
    lower = np.linalg.cholesky(a)
    np.testing.assert_allclose(got, np.swapaxes(lower, -1, -2) if upper else lower, rtol=1e-10, atol=1e-10)


def test_cholesky_reads_only_its_triangle():
    rng = np.random.default_rng(3)
    a = spd(rng, (), 3)
    noisy_upper = a + np.triu(rng.standard_normal((3, 3)), 1)
    noisy_lower = a + np.tril(rng.standard_normal((3, 3)), -1)
    np.testing.assert_allclose(
        fg.linalg.cholesky(fg.tensor(noisy_upper)).numpy(), np.linalg.cholesky(a), rtol=1e-10
    )
    np.testing.assert_allclose(
        fg.linalg.cholesky(fg.tensor(noisy_lower), upper=True).numpy(), np.linalg.cholesky(a).T, rtol=1e-10
    )


@given(seeds, batch_shapes, orders, st.booleans(), st.booleans(), st.booleans())
@settings(max_examples=30, deadline=None)
def test_solve_triangular_matches_numpy(seed, batch, n, upper, left, unit):
    rng = np.random.default_rng(seed)
    full = invertible(rng, batch, n)
    tri = np.triu(full) if upper else np.tril(full)
    if unit:
        tri = tri - tri * np.eye(n) + np.eye(n)
    b = rng.standard_normal((*batch, n, 2) if left else (*batch, 2, n))
    # the other triangle (and the diagonal when unitriangular) is never read
    got = fg.linalg.solve_triangular(
        fg.tensor(full), fg.tensor(b), upper=upper, left=left, unitriangular=unit
    )
    ref = (
        np.linalg.solve(tri, b)
        if left
        else np.swapaxes(np.linalg.solve(np.swapaxes(tri, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    )
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-9, atol=1e-9)


@given(seeds, batch_shapes, orders, st.sampled_from(["L", "U"]))
@settings(max_examples=20, deadline=None)
def test_eigh_reconstructs_and_matches_numpy(seed, batch, n, uplo):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, n, n))
    a = a + np.swapaxes(a, -1, -2)
    # only the named triangle is read
    noisy = a + (
        np.tril(rng.standard_normal((n, n)), -1) if uplo == "U" else np.triu(rng.standard_normal((n, n)), 1)
    )
    values, vectors = fg.linalg.eigh(fg.tensor(noisy), UPLO=uplo)
    np.testing.assert_allclose(values.numpy(), np.linalg.eigvalsh(a), rtol=1e-9, atol=1e-9)
    v = vectors.numpy()
    np.testing.assert_allclose(v @ (values.numpy()[..., None] * np.swapaxes(v, -1, -2)), a, atol=1e-9)
    np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(n), v.shape), atol=1e-9)
    np.testing.assert_allclose(fg.linalg.eigvalsh(fg.tensor(noisy), UPLO=uplo).numpy(), values.numpy())


# ---------------------------------------------------------------------------- gradients


@given(seeds, st.sampled_from([(), (2,)]), st.integers(1, 3))
@settings(max_examples=8, deadline=None)
def test_inverse_and_determinant_gradients(seed, batch, n):
    rng = np.random.default_rng(seed)
    a = leaf(invertible(rng, batch, n))
    for f in (fg.linalg.inv, fg.linalg.det, lambda x: fg.linalg.slogdet(x).logabsdet):
        assert gradcheck(f, (a,))
        assert gradgradcheck(f, (a,))
    positive = leaf(spd(rng, batch, n))  # logdet is NaN for a negative determinant
    assert gradcheck(fg.logdet, (positive,))
    assert gradgradcheck(fg.logdet, (positive,))


@given(
    seeds, st.sampled_from([((), (3, 2)), ((2,), (2, 3, 1)), ((2,), (3,)), ((), (2, 1, 3, 2))]), st.booleans()
)
@settings(max_examples=8, deadline=None)
def test_solve_gradients(seed, shapes, left):
    batch, b_shape = shapes
    rng = np.random.default_rng(seed)
    a = leaf(invertible(rng, batch, 3))
    if not left and len(b_shape) > 1:
        b_shape = (*b_shape[:-2], b_shape[-1], b_shape[-2])
    b = leaf(rng.standard_normal(b_shape))
    f = lambda x, y: fg.linalg.solve(x, y, left=left)  # noqa: E731
    assert gradcheck(f, (a, b))
    assert gradgradcheck(f, (a, b))


@given(seeds, st.sampled_from([(), (2,)]), st.integers(1, 3), st.booleans())
@settings(max_examples=8, deadline=None)
def test_cholesky_gradients(seed, batch, n, upper):
    rng = np.random.default_rng(seed)
    a = leaf(spd(rng, batch, n))
    f = lambda x: fg.linalg.cholesky(sym(x), upper=upper)  # noqa: E731
    assert gradcheck(f, (a,))
    assert gradgradcheck(f, (a,))


@given(seeds, st.booleans(), st.booleans(), st.booleans())
@settings(max_examples=8, deadline=None)
def test_solve_triangular_gradients(seed, upper, left, unit):
    rng = np.random.default_rng(seed)
    a = leaf(invertible(rng, (2,), 3))
    b = leaf(rng.standard_normal((3, 2) if left else (2, 3)))
    f = lambda x, y: fg.linalg.solve_triangular(x, y, upper=upper, left=left, unitriangular=unit)  # noqa: E731
    assert gradcheck(f, (a, b))
    assert gradgradcheck(f, (a, b))
    # only the triangle that is read gets a gradient
    f(a, b).sum().backward()
    g = a.grad.numpy()
    other = np.tril(g, -1) if upper else np.triu(g, 1)
    assert np.all(other == 0)
    if unit:
        assert np.all(np.diagonal(g, axis1=-2, axis2=-1) == 0)


@given(seeds, st.sampled_from([(), (2,)]), st.integers(1, 3))
@settings(max_examples=8, deadline=None)
def test_eigh_gradients(seed, batch, n):
    rng = np.random.default_rng(seed)
    # distinct eigenvalues keep the eigenvectors (up to sign) differentiable
    q, _ = np.linalg.qr(rng.standard_normal((*batch, n, n)))
    a = leaf(q @ (np.arange(1, n + 1) * 1.5 * np.swapaxes(q, -1, -2)))

    def vectors_up_to_sign(x):
        v = fg.linalg.eigh(sym(x)).eigenvectors
        return v * v  # invariant under each column's sign

    assert gradcheck(lambda x: fg.linalg.eigvalsh(sym(x)), (a,))
    assert gradcheck(vectors_up_to_sign, (a,))
    assert gradgradcheck(lambda x: fg.linalg.eigvalsh(sym(x)), (a,))
    assert gradgradcheck(vectors_up_to_sign, (a,))


# ---------------------------------------------------------------------------- against torch


@needs_torch
def test_values_and_gradients_match_torch():
    rng = np.random.default_rng(4)
    a_np, b_np = invertible(rng, (2,), 3), rng.standard_normal((2, 3, 2))
    p_np = spd(rng, (2,), 3)
    cases = [
        (lambda L, a, b, p: L.linalg.inv(a), "LinalgInvExBackward0"),
        (lambda L, a, b, p: L.linalg.det(a), "LinalgDetBackward0"),
        (lambda L, a, b, p: L.linalg.slogdet(a).logabsdet, "LinalgSlogdetBackward0"),
        (lambda L, a, b, p: L.linalg.solve(a, b), "LinalgSolveExBackward0"),
        (lambda L, a, b, p: L.linalg.cholesky(p), "LinalgCholeskyExBackward0"),
        (lambda L, a, b, p: L.linalg.solve_triangular(a, b, upper=True), "LinalgSolveTriangularBackward0"),
        (lambda L, a, b, p: L.linalg.eigh(p).eigenvalues, "LinalgEighBackward0"),
        (lambda L, a, b, p: L.inverse(a), "LinalgInvExBackward0"),
        (lambda L, a, b, p: a.det(), "LinalgDetBackward0"),
        (lambda L, a, b, p: a.slogdet().logabsdet, "LinalgSlogdetBackward0"),
    ]
    for f, name in cases:
        ours = [fg.tensor(x, requires_grad=True) for x in (a_np, b_np, p_np)]
        theirs = [torch.tensor(x, requires_grad=True) for x in (a_np, b_np, p_np)]
        out, ref = f(fg, *ours), f(torch, *theirs)
        assert out.grad_fn.name() == ref.grad_fn.name() == name
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12)
        cot = rng.standard_normal(ref.shape)
        grads = fg.autograd.grad(out, ours, fg.tensor(cot), allow_unused=True)
        ref_grads = torch.autograd.grad(ref, theirs, torch.tensor(cot), allow_unused=True)
        for g, r in zip(grads, ref_grads):
            assert (g is None) == (r is None)
            if g is not None:
                np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-8, atol=1e-10)
    same_return_type(fg.linalg.slogdet(fg.tensor(a_np)), torch.linalg.slogdet(torch.tensor(a_np)))
    same_return_type(fg.slogdet(fg.tensor(a_np)), torch.slogdet(torch.tensor(a_np)))
    same_return_type(fg.linalg.eigh(fg.tensor(p_np)), torch.linalg.eigh(torch.tensor(p_np)))


def same_return_type(ours, theirs):
    """Named tuples of the same name and fields, in order."""
    assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs)
    for k, name in enumerate(ours._fields):
        assert getattr(theirs, name) is theirs[k]


def _error(lib, f):
    with pytest.raises(Exception) as info:
        f(lib)
    return info.value


SINGULAR = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]
NOT_PD = [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


@needs_torch
@pytest.mark.parametrize(
    "f",
    [
        lambda L: L.linalg.inv(L.tensor(SINGULAR)),
        lambda L: L.linalg.inv(L.stack([L.eye(3), L.tensor(SINGULAR)])),
        lambda L: L.linalg.inv(L.zeros(3, 3)),
        lambda L: L.linalg.solve(L.tensor(SINGULAR), L.ones(3)),
        lambda L: L.linalg.solve(L.stack([L.eye(3), L.tensor(SINGULAR)]), L.ones(3)),
        lambda L: L.linalg.cholesky(L.tensor(NOT_PD)),
        lambda L: L.linalg.cholesky(L.stack([L.eye(3), L.tensor(NOT_PD)])),
    ],
)
def test_linalg_errors_match_torch(f):
    ours, theirs = _error(fg, f), _error(torch, f)
    assert isinstance(ours, fg.linalg.LinAlgError) and isinstance(ours, RuntimeError)
    assert isinstance(theirs, torch.linalg.LinAlgError)
    assert str(ours) == str(theirs)


@needs_torch
@pytest.mark.parametrize(
    "f",
    [
        lambda L: L.linalg.inv(L.zeros(3, 4)),
        lambda L: L.linalg.inv(L.zeros(2, 3, 4)),
        lambda L: L.linalg.inv(L.zeros(3)),
        lambda L: L.linalg.inv(L.ones(3, 3, dtype=L.int64)),
        lambda L: L.linalg.det(L.zeros(3, 4)),
        lambda L: L.linalg.det(L.ones(3, 3, dtype=L.int64)),
        lambda L: L.linalg.slogdet(L.zeros(3, 4)),
        lambda L: L.logdet(L.zeros(3, 4)),
        lambda L: L.linalg.solve(L.zeros(3, 4), L.zeros(3)),
        lambda L: L.linalg.solve(L.eye(3), L.zeros(4)),
        lambda L: L.linalg.solve(L.eye(3), L.zeros(4, 2)),
        lambda L: L.linalg.solve(L.eye(3), L.zeros(3, 2, dtype=L.float64)),
        lambda L: L.linalg.cholesky(L.zeros(3, 4)),
        lambda L: L.linalg.cholesky(L.ones(3, 3, dtype=L.int64)),
        lambda L: L.linalg.solve_triangular(L.eye(3), L.zeros(3), upper=True),
        lambda L: L.linalg.solve_triangular(L.zeros(3, 4), L.zeros(3, 2), upper=True),
        lambda L: L.linalg.solve_triangular(L.eye(3), L.zeros(4, 2), upper=True),
        lambda L: L.linalg.eigh(L.zeros(3, 4)),
        lambda L: L.linalg.eigh(L.eye(3), UPLO="X"),
    ],
)
def test_argument_errors_match_torch(f):
    ours, theirs = _error(fg, f), _error(torch, f)
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------------- svd, qr and friends


@given(seeds, batch_shapes, st.integers(1, 4), st.integers(1, 4), st.booleans())
@settings(max_examples=25, deadline=None)
def test_svd_matches_numpy(seed, batch, m, n, full):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, m, n))
    u, s, vh = fg.linalg.svd(fg.tensor(a), full_matrices=full)
    k = min(m, n)
    assert u.shape == (*batch, m, m if full else k) and vh.shape == (*batch, n if full else k, n)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a, compute_uv=False), rtol=1e-9, atol=1e-9)
    u, vh = u.numpy(), vh.numpy()
    np.testing.assert_allclose((u[..., :k] * s.numpy()[..., None, :]) @ vh[..., :k, :], a, atol=1e-9)
    np.testing.assert_allclose(
        np.swapaxes(u, -1, -2) @ u,
        np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2),
        atol=1e-9,
    )
    np.testing.assert_allclose(
        vh @ np.swapaxes(vh, -1, -2),
        np.broadcast_to(np.eye(vh.shape[-2]), vh.shape[:-2] + (vh.shape[-2],) * 2),
        atol=1e-9,
    )
    np.testing.assert_allclose(fg.linalg.svdvals(fg.tensor(a)).numpy(), s.numpy())


@given(seeds, st.integers(1, 4), st.integers(1, 4))
@settings(max_examples=20, deadline=None)
def test_pinv_and_matrix_rank_match_numpy(seed, m, n):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(0, min(m, n) + 1))
    a = rng.standard_normal((2, m, rank)) @ rng.standard_normal((2, rank, n))
    np.testing.assert_allclose(fg.linalg.pinv(fg.tensor(a)).numpy(), np.linalg.pinv(a), atol=1e-8)
    np.testing.assert_array_equal(fg.linalg.matrix_rank(fg.tensor(a)).numpy(), np.linalg.matrix_rank(a))
    assert fg.linalg.matrix_rank(fg.tensor(a), atol=1e30).numpy().tolist() == [0, 0]


@given(
    seeds, batch_shapes, st.integers(1, 4), st.integers(1, 4), st.sampled_from(["reduced", "complete", "r"])
)
@settings(max_examples=25, deadline=None)
def test_qr_reconstructs(seed, batch, m, n, mode):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, m, n))
    q, r = fg.linalg.qr(fg.tensor(a), mode=mode)
    ref_r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")[1]
    # R is unique up to the signs of its rows
    np.testing.assert_allclose(np.abs(r.numpy()), np.abs(ref_r), atol=1e-9)
    assert np.all(np.tril(r.numpy(), -1) == 0)
    if mode == "r":
        assert q.shape == (0,)
        return
    q = q.numpy()
    np.testing.assert_allclose(q @ r.numpy(), a, atol=1e-9)
    np.testing.assert_allclose(
        np.swapaxes(q, -1, -2) @ q,
        np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2),
        atol=1e-9,
    )


@given(seeds, st.sampled_from([(), (2,)]), st.sampled_from([(3, 3), (4, 2), (2, 4)]))
@settings(max_examples=6, deadline=None)
def test_svd_gradients(seed, batch, mn):
    rng = np.random.default_rng(seed)
    a = leaf(rng.standard_normal((*batch, *mn)))

    def gauge_invariant(x):
        u, s, vh = fg.linalg.svd(x, full_matrices=False)
        return u * u, s, vh * vh  # each singular pair is defined up to a common sign

    assert gradcheck(gauge_invariant, (a,))
    assert gradgradcheck(gauge_invariant, (a,))
    assert gradcheck(fg.linalg.svdvals, (a,))
    assert gradcheck(lambda x: fg.linalg.svd(x).S, (a,))
    assert gradcheck(lambda x: fg.linalg.pinv(x), (a,))
    assert gradcheck(lambda x: fg.linalg.matrix_norm(x, "nuc"), (a,))


@given(seeds, st.sampled_from([(), (2,)]), st.sampled_from([(3, 3), (4, 2), (2, 4)]))
@settings(max_examples=6, deadline=None)
def test_qr_gradients(seed, batch, mn):
    rng = np.random.default_rng(seed)
    a = leaf(rng.standard_normal((*batch, *mn)) + np.eye(*mn))
    assert gradcheck(lambda x: fg.linalg.qr(x), (a,))
    assert gradgradcheck(lambda x: fg.linalg.qr(x), (a,))
    assert gradcheck(lambda x: fg.linalg.qr(x).R, (a,))


@needs_torch
def test_svd_and_qr_match_torch():
    rng = np.random.default_rng(5)
    for shape in ((2, 4, 3), (3, 2, 4)):
        a_np = rng.standard_normal(shape)
        ours, theirs = fg.tensor(a_np, requires_grad=True), torch.tensor(a_np, requires_grad=True)
        for f, name in (
            (lambda L, x: L.linalg.svd(x, full_matrices=False).S, "LinalgSvdBackward0"),
            (lambda L, x: L.linalg.svdvals(x), "LinalgSvdBackward0"),
            (lambda L, x: L.linalg.qr(x).R, "LinalgQrBackward0"),
        ):
            out, ref = f(fg, ours), f(torch, theirs)
            assert out.grad_fn.name() == ref.grad_fn.name() == name
            cot = rng.standard_normal(ref.shape)
            (g,) = fg.autograd.grad(out, ours, fg.tensor(cot))
            (r,) = torch.autograd.grad(ref, theirs, torch.tensor(cot))
            np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(
            fg.linalg.pinv(ours).detach().numpy(), torch.linalg.pinv(theirs).detach().numpy(), atol=1e-10
        )
        same_return_type(fg.linalg.svd(ours), torch.linalg.svd(theirs))
        same_return_type(fg.linalg.qr(ours), torch.linalg.qr(theirs))


@needs_torch
@pytest.mark.parametrize(
    "f",
    [
        lambda L: L.linalg.svd(L.zeros(3)),
        lambda L: L.linalg.svd(L.ones(3, 3, dtype=L.int64)),
        lambda L: L.linalg.qr(L.eye(3), mode="x"),
        lambda L: L.linalg.qr(L.zeros(3)),
    ],
)
def test_svd_qr_argument_errors_match_torch(f):
    ours, theirs = _error(fg, f), _error(torch, f)
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------------- products


@given(seeds, batch_shapes, orders, st.integers(-3, 5))
@settings(max_examples=25, deadline=None)
def test_matrix_power_matches_numpy(seed, batch, n, k):
    rng = np.random.default_rng(seed)
    a = invertible(rng, batch, n) / n
    got = fg.linalg.matrix_power(fg.tensor(a), k)
    assert got.shape == a.shape
    np.testing.assert_allclose(got.numpy(), np.linalg.matrix_power(a, k), rtol=1e-9, atol=1e-9)


def test_matrix_power_gradients():
    rng = np.random.default_rng(6)
    a = leaf(invertible(rng, (2,), 3) / 3)
    for k in (0, 1, 3, -2):
        assert gradcheck(lambda x, k=k: fg.linalg.matrix_power(x, k), (a,))
    assert gradgradcheck(lambda x: fg.linalg.matrix_power(x, 3), (a,))


@given(seeds, st.lists(st.integers(1, 5), min_size=3, max_size=6), st.booleans(), st.booleans())
@settings(max_examples=25, deadline=None)
def test_multi_dot_matches_numpy(seed, sizes, first_vector, last_vector):
    rng = np.random.default_rng(seed)
    mats = [rng.standard_normal((sizes[i], sizes[i + 1])) for i in range(len(sizes) - 1)]
    if first_vector:
        mats[0] = mats[0][0]
    if last_vector:
        mats[-1] = mats[-1][:, 0]
    got = fg.linalg.multi_dot([fg.tensor(m) for m in mats])
    np.testing.assert_allclose(got.numpy(), np.linalg.multi_dot(mats), rtol=1e-10, atol=1e-12)


def test_multi_dot_gradients():
    rng = np.random.default_rng(7)
    xs = [leaf(rng.standard_normal(s)) for s in ((3,), (3, 4), (4, 2), (2,))]
    assert gradcheck(lambda *t: fg.linalg.multi_dot(t), xs)
    assert gradgradcheck(lambda *t: fg.linalg.multi_dot(t), xs)


@needs_torch
@pytest.mark.parametrize(
    "f",
    [
        lambda L: L.linalg.multi_dot([L.eye(2)]),
        lambda L: L.linalg.multi_dot([L.zeros(4, 3), L.zeros(4, 3)]),
        lambda L: L.linalg.multi_dot([L.zeros(4, 3), L.zeros(3), L.zeros(3, 2)]),
        lambda L: L.linalg.multi_dot([L.zeros(2, 4, 3), L.zeros(3, 3)]),
        lambda L: L.linalg.matrix_power(L.zeros(4, 3), 2),
    ],
)
def test_product_errors_match_torch(f):
    ours, theirs = _error(fg, f), _error(torch, f)
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------------- least squares


@given(seeds, st.sampled_from([(), (2,)]), st.sampled_from([(5, 3), (3, 3), (2, 4)]), st.booleans())
@settings(max_examples=20, deadline=None)
def test_lstsq_matches_numpy(seed, batch, mn, vector):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, *mn))
    b = rng.standard_normal((*batch, mn[0])) if vector else rng.standard_normal((*batch, mn[0], 2))
    got = fg.linalg.lstsq(fg.tensor(a), fg.tensor(b)).solution.numpy()
    expected = np.linalg.pinv(a) @ (b[..., None] if vector else b)
    np.testing.assert_allclose(got, expected[..., 0] if vector else expected, rtol=1e-9, atol=1e-10)


def test_lstsq_rank_deficient_gives_the_minimum_norm_solution():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    b = np.array([[1.0], [2.0], [2.0]])
    result = fg.linalg.lstsq(fg.tensor(a), fg.tensor(b))
    assert result.rank.item() == 1
    np.testing.assert_allclose(result.solution.numpy(), np.linalg.lstsq(a, b, rcond=None)[0], atol=1e-12)


def test_lstsq_gradients():
    rng = np.random.default_rng(7)
    a = leaf(rng.standard_normal((5, 3)))
    b = leaf(rng.standard_normal((5, 2)))
    assert gradcheck(lambda x, y: fg.linalg.lstsq(x, y).solution, (a, b))
    assert gradgradcheck(lambda x, y: fg.linalg.lstsq(x, y).solution, (a, b))


@needs_torch
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 6, 3)])
def test_lstsq_outputs_match_torch(driver, shape):
    rng = np.random.default_rng(len(shape))
    a = rng.standard_normal(shape)
    b = rng.standard_normal((*shape[:-1], 2))
    got = fg.linalg.lstsq(fg.tensor(a), fg.tensor(b), driver=driver)
    want = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    for name in ("solution", "residuals", "rank", "singular_values"):
        g, w = getattr(got, name), getattr(want, name)
        assert tuple(g.shape) == tuple(w.shape), name
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-8, atol=1e-10, err_msg=name)


@needs_torch
@pytest.mark.parametrize(
    "call",
    [
        lambda T: T.linalg.lstsq(T.zeros(3, 2), T.zeros(3, 1), driver="foo"),
        lambda T: T.linalg.lstsq(T.zeros(3, 2), T.zeros(4, 1)),
    ],
)
def test_lstsq_errors_match_torch(call):
    messages = []
    for T in (fg, torch):
        with pytest.raises(RuntimeError) as info:
            call(T)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_lu_unpack_rebuilds_the_matrix_and_the_older_lu_forms_solve():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2, 4, 3)), rng.standard_normal((3, 3))
    LU, pivots = fg.linalg.lu_factor(fg.tensor(a))
    P, L, U = fg.lu_unpack(LU, pivots)
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=1e-12)
    assert tuple(L.shape) == (2, 4, 3) and tuple(U.shape) == (2, 3, 3)
    assert fg.lu_unpack(LU, pivots, unpack_data=False).L.numel() == 0
    assert fg.lu_unpack(LU, pivots, unpack_pivots=False).P.numel() == 0
    square = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    LU, pivots = fg.tensor(square).lu()
    x = fg.tensor(b).lu_solve(LU, pivots)
    np.testing.assert_allclose(square @ x.numpy(), b, atol=1e-12)
    assert len(fg.lu(fg.tensor(square), get_infos=True)) == 3
    x = fg.tensor(square, requires_grad=True)
    assert gradcheck(lambda t: fg.lu_unpack(*fg.linalg.lu_factor(t))[1:], (x,))


@needs_torch
@pytest.mark.filterwarnings("ignore:torch.lu")
def test_lu_unpack_and_older_lu_forms_match_torch():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((4, 4)), rng.standard_normal((4, 2))

    def program(T):
        LU, pivots = T.lu(T.tensor(a))
        P, L, U = T.lu_unpack(LU, pivots)
        return [P, L, U, T.lu_solve(T.tensor(b), LU, pivots)]

    for ours, theirs in zip(program(fg), program(torch)):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)

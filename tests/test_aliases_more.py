"""PyTorch's further names and composites (``_aliases.py``, ``linalg.py`` additions, top-level
settings and ``autograd`` legacy names): values and gradients against torch and finite
differences, and PyTorch's errors for bad arguments."""

import math
import re

import numpy as np
import pytest

import ferrograd as fg

from helpers import assert_raises_like_torch, check_op, fd_grads, has_torch, torch

# torch warns that several of these legacy names are deprecated; the comparisons still hold.
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*(deprecated|has been replaced|unspecified requires_grad).*:UserWarning"
)

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is not installed")
RNG = np.random.default_rng(2024)


def rand(*shape):
    return RNG.standard_normal(shape)


MODULES = [fg] + ([torch] if has_torch else [])


def raises_like_torch(fn, kind, message):
    """``fn(T)`` raises ``kind`` with exactly ``message`` (as a literal prefix) for ferrograd and torch."""
    assert_raises_like_torch(lambda _F, T: fn(T), kind, re.escape(message))


def spd(*batch, n=3):
    b = rand(*batch, n, n)
    return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)


# ----------------------------------------------------------------------------- tensor attributes


def test_matrix_attributes_and_layout():
    a = rand(2, 3, 4) + 1j * rand(2, 3, 4)
    t = fg.tensor(a)
    np.testing.assert_array_equal(t.mH.numpy(), np.conj(np.swapaxes(a, -1, -2)))
    np.testing.assert_array_equal(t.adjoint().numpy(), np.conj(np.swapaxes(a, -1, -2)))
    np.testing.assert_array_equal(fg.adjoint(t).numpy(), t.mH.numpy())
    np.testing.assert_array_equal(t[0].H.numpy(), np.conj(a[0].T))
    assert t.is_cpu is True and t.is_inference() is False
    assert t.layout is fg.strided and repr(fg.strided) == "ferrograd.strided"
    raises_like_torch(lambda T: T.zeros(2, 2, 2).H, RuntimeError, "tensor.H is only supported on matrices")
    raises_like_torch(lambda T: T.zeros(2).mH, RuntimeError, "tensor.mH is only supported on matrices")


def test_matrix_attribute_gradients():
    check_op(lambda T, x: x.mH * 2, rand(2, 3, 4))
    check_op(lambda T, x: x.H.exp(), rand(3, 4))


# ----------------------------------------------------------------------------- indexing composites


def test_index_copy_and_fill():
    check_op(lambda T, x, s: x.index_copy(1, T.tensor([3, 0]), s), rand(3, 4), rand(3, 2))
    check_op(lambda T, x: x.index_fill(0, T.tensor([-1]), -2.5), rand(3, 4))
    check_op(lambda T, x, s: T.index_copy(x, 0, T.tensor(1), s), rand(3), rand())
    for T in MODULES:
        x = T.zeros(3, 2)
        assert x.index_fill_(1, T.tensor([1]), 7.0) is x
        assert x[:, 1].sum().item() == 21 and x[:, 0].sum().item() == 0
        y = T.zeros(3, 2)
        y.index_copy_(0, T.tensor([2]), T.ones(1, 2))
        assert y.sum().item() == 2 and y[2].sum().item() == 2


@pytest.mark.parametrize(
    "call, kind, message",
    [
        (lambda T: T.zeros(3, 4).index_copy(0, T.tensor([0.0]), T.ones(1, 4)), RuntimeError,
         "index_copy_(): Expected a long tensor for index, but got Float"),
        (lambda T: T.zeros(3, 4).index_copy(0, T.tensor([[0]]), T.ones(1, 4)), IndexError,
         "index_copy_(): Index should have dimension 1 or 0 (got 2)"),
        (lambda T: T.zeros(3, 4).index_copy(0, T.tensor([0]), T.ones(1, 4, dtype=T.float64)), RuntimeError,
         "index_copy_(): self and source expected to have the same dtype, but got (self) Float and (source) Double"),
        (lambda T: T.zeros(3, 4).index_copy(0, T.tensor([0]), T.ones(2, 4)), IndexError,
         "index_copy_(): Number of indices (1) should be equal to source.size(dim) (2)"),
        (lambda T: T.zeros(3, 4).index_copy(0, T.tensor([5]), T.ones(1, 4)), IndexError,
         "index_copy_(): index 5 is out of bounds for dimension 0 with size 3"),
        (lambda T: T.zeros(3, 4).index_fill(0, T.tensor([0.0]), 1), IndexError,
         "index_fill_(): Expected dtype int64 for index."),
        (lambda T: T.zeros(3, 4).index_fill(0, T.tensor([0]), T.ones(2)), RuntimeError,
         "index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s)."),
        (lambda T: T.zeros(3, 4).masked_scatter(T.ones(3, 4) > 0, T.ones(5)), RuntimeError,
         "Number of elements of source < number of ones in mask"),
        (lambda T: T.zeros(3, 4).masked_scatter(T.ones(3, 4), T.ones(12)), RuntimeError,
         "masked_scatter_ only supports boolean masks, but got mask with dtype Float"),
        (lambda T: T.zeros(3, 4).take(T.tensor([12])), IndexError,
         "out of range: tried to access index 12 on a tensor of 12 elements."),
        (lambda T: T.zeros(3, 4).take(T.tensor([1.0])), RuntimeError,
         "take(): Expected a long tensor for index, but got Float"),
        (lambda T: T.zeros(3, 4).put_(T.tensor([1, 2]), T.ones(1)), IndexError,
         "put_(): Expected source and index to have the same number of elements, but got source.numel() = 1, "
         "index.numel() = 2"),
        (lambda T: T.zeros(3, 4).diagonal_scatter(T.ones(2)), RuntimeError,
         "expected src to have a size equal to the slice of self. src size = [2], slice size = [3]"),
        (lambda T: T.zeros(3, 4).slice_scatter(T.ones(3, 4), 0, 0, 2), RuntimeError,
         "expected src to have a size equal to the slice of self. src size = [3, 4], slice size = [2, 4]"),
        (lambda T: T.zeros(3, 4).as_strided_scatter(T.ones(3), (2,), (2,)), RuntimeError,
         "expected src to have a size equal to the slice of self. src size = [3], slice size = [2]"),
    ],
)  # fmt: skip
def test_indexing_errors_match_torch(call, kind, message):
    raises_like_torch(call, kind, message)


def test_masked_scatter_take_put():
    mask = rand(3, 4) > 0
    check_op(lambda T, x, s: x.masked_scatter(T.tensor(mask), s), rand(3, 4), rand(14))
    # the mask broadcasts against the input
    check_op(lambda T, x, s: T.masked_scatter(x, T.tensor([True, False, True, True]), s), rand(3, 4), rand(9))
    check_op(lambda T, x: T.take(x, T.tensor([[0, -1], [5, 3]])), rand(3, 4))
    check_op(lambda T, x, s: x.put(T.tensor([1, 1, -2]), s, accumulate=True), rand(3, 4), rand(3))
    check_op(lambda T, x, s: T.put(x.t(), T.tensor([0, 4]), s), rand(3, 4), rand(2))
    for T in MODULES:
        x = T.zeros(2, 3).t()  # not contiguous: put_ must still write into x
        x.put_(T.tensor([1, 5]), T.tensor([1.0, 2.0]))
        np.testing.assert_array_equal(x.numpy(), [[0, 1], [0, 0], [0, 2]])


@pytest.mark.parametrize(
    "name, args, src",
    [
        ("diagonal_scatter", (1,), (3,)),
        ("diagonal_scatter", (-1, 1, 0), (3,)),
        ("select_scatter", (1, -1), (3,)),
        ("slice_scatter", (1, 1, None, 2), (3, 2)),
        ("slice_scatter", (0,), (3, 4)),
    ],
)
def test_scatter_into_views(name, args, src):
    out = check_op(lambda T, x, s: getattr(T, name)(x, s, *args), rand(3, 4), rand(*src))
    assert out.shape == (3, 4)
    method = check_op(lambda T, x, s: getattr(x, name)(s, *args), rand(3, 4), rand(*src))
    assert method.shape == (3, 4)


# ----------------------------------------------------------------------------- reductions and scans


def test_aminmax():
    x = rand(3, 4)
    for kwargs in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}, {"keepdim": True}):
        out = check_op(lambda T, t, kw=kwargs: T.stack([*T.aminmax(t, **kw)]), x)
        low, high = fg.tensor(x).aminmax(**kwargs)
        np.testing.assert_array_equal(out.detach().numpy(), np.stack([low.numpy(), high.numpy()]))
    assert fg.aminmax(fg.tensor(x), dim=1)._fields == ("min", "max")
    raises_like_torch(
        lambda T: T.aminmax(T.zeros(0)),
        RuntimeError,
        "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.",
    )
    raises_like_torch(
        lambda T: T.aminmax(T.zeros(0, 3), dim=0),
        IndexError,
        "aminmax: Expected reduction dim 0 to have non-zero size.",
    )


def test_logcumsumexp_values_and_gradients():
    check_op(lambda T, x: T.logcumsumexp(x, 1), rand(3, 5))
    check_op(lambda T, x: x.logcumsumexp(0), rand(7))
    check_op(lambda T, x: x.logcumsumexp(-1), rand(2, 1))


def test_logcumsumexp_is_stable():
    x = np.array([[1000.0, -np.inf, 3.0, 1001.0, -5.0], [-np.inf, -np.inf, 0.0, 1.0, 2.0], [-800.0] * 5])
    out = fg.logcumsumexp(fg.tensor(x), 1).numpy()
    # reference in extended precision: running log-sum-exp from the left
    expected = np.logaddexp.accumulate(x, axis=1)
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    assert np.isneginf(out[1, :2]).all() and np.isfinite(out[0]).all()
    if has_torch:
        np.testing.assert_allclose(out, torch.logcumsumexp(torch.tensor(x), 1).numpy(), rtol=1e-12)
    t = fg.tensor(x[[0, 2]], requires_grad=True)
    fg.logcumsumexp(t, 1).sum().backward()
    assert np.isfinite(t.grad.numpy()).all()
    raises_like_torch(
        lambda T: T.logcumsumexp(T.tensor([1]), 0),
        NotImplementedError,
        "\"logcumsumexp_out_cpu\" not implemented for 'Long'",
    )


def test_renorm_and_sum_to_size():
    check_op(lambda T, x: x.renorm(2, 0, 1.5), rand(3, 4) * 2)
    check_op(lambda T, x: T.renorm(x, 1, 1, 0.7), rand(3, 4))
    check_op(lambda T, x: x.sum_to_size(1, 4), rand(3, 4))
    check_op(lambda T, x: x.sum_to_size((2, 1, 1)), rand(4, 2, 3, 1))
    for T in MODULES:
        x = T.ones(2, 3) * 5
        assert x.renorm_(2, 0, 1.0) is x and abs(x.norm(dim=1) - 1).max().item() < 1e-6
    raises_like_torch(
        lambda T: T.zeros(3, 4).renorm(0.0, 0, 1), RuntimeError, "renorm: non-positive-norm not supported"
    )
    raises_like_torch(
        lambda T: T.zeros(3).renorm(2, 0, 1),
        RuntimeError,
        "renorm: input needs at least 2 dimensions, got 1 dimensions",
    )
    raises_like_torch(
        lambda T: T.zeros(3, 4).sum_to_size(5), RuntimeError, "size {[5]} is not expandable to size {[3, 4]}."
    )


@pytest.mark.parametrize("name", ["hsplit", "vsplit", "dsplit"])
@pytest.mark.parametrize("sections", [2, [1, 3]])
def test_directional_splits(name, sections):
    x = rand(4, 4, 4)
    out = check_op(lambda T, t: T.cat([p.reshape(-1) for p in getattr(T, name)(t, sections)]), x)
    pieces = getattr(np, name)(x, sections)
    np.testing.assert_array_equal(out.detach().numpy(), np.concatenate([p.reshape(-1) for p in pieces]))
    assert len(getattr(fg.tensor(x), name)(sections)) == len(pieces)


def test_directional_split_errors():
    raises_like_torch(
        lambda T: T.zeros(4).vsplit(2),
        RuntimeError,
        "torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 dimensions!",
    )
    raises_like_torch(
        lambda T: T.zeros(3, 4).hsplit(3),
        RuntimeError,
        "torch.hsplit attempted to split along dimension 1, but the size of the dimension 4 is not divisible by "
        "the split_size 3!",
    )
    raises_like_torch(
        lambda T: T.zeros(5).hsplit(2),
        RuntimeError,
        "torch.hsplit attempted to split along dimension 0, but the size of the dimension 5",
    )


# ----------------------------------------------------------------------------- pointwise


def test_infinity_and_real_tests():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -1.0])
    for name, expected in (("isposinf", np.isposinf(x)), ("isneginf", np.isneginf(x))):
        np.testing.assert_array_equal(getattr(fg, name)(fg.tensor(x)).numpy(), expected)
        raises_like_torch(
            lambda T, n=name: getattr(T, n)(T.zeros(2, dtype=T.complex64)),
            RuntimeError,
            f"{name} does not support complex",
        )
    z = np.array([1 + 0j, 1j, 2 - 0j])
    np.testing.assert_array_equal(fg.isreal(fg.tensor(z)).numpy(), np.isreal(z))
    assert fg.tensor(x).isreal().all().item()


def test_frexp_and_ldexp():
    x = np.array([0.0, 1.0, -3.5, 1e-300, 7e12])
    mantissa, exponent = fg.frexp(fg.tensor(x))
    m, e = np.frexp(x)
    np.testing.assert_array_equal(mantissa.numpy(), m)
    np.testing.assert_array_equal(exponent.numpy(), e)
    assert exponent.dtype == fg.int32
    check_op(lambda T, t: T.frexp(t).mantissa, rand(3, 2))
    raises_like_torch(
        lambda T: T.frexp(T.tensor([1])), RuntimeError, "torch.frexp() only supports floating-point dtypes"
    )
    # torch's ldexp gradient is wrong for negative integer exponents, so finite differences judge it
    e = np.array([1, 2, -1, 0])
    t = fg.tensor(rand(3, 4), requires_grad=True)
    out = fg.ldexp(t, fg.tensor(e))
    np.testing.assert_array_equal(out.detach().numpy(), np.ldexp(t.detach().numpy(), e))
    out.sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), np.broadcast_to(2.0**e, (3, 4)))
    assert fg.ldexp(fg.tensor([1, 2]), fg.tensor([3, 1])).dtype == fg.float32
    for T in MODULES:
        y = T.ones(2, dtype=T.float64)
        assert y.ldexp_(T.tensor([2, -2])) is y and y.tolist() == [4.0, 0.25]


def test_gcd_lcm():
    a, b = np.array([12, -9, 0, 7]), np.array([8, 6, 5, 0])
    np.testing.assert_array_equal(fg.gcd(fg.tensor(a), fg.tensor(b)).numpy(), np.gcd(a, b))
    np.testing.assert_array_equal(fg.tensor(a).lcm(fg.tensor(b)).numpy(), np.lcm(a, b))
    if has_torch:
        np.testing.assert_array_equal(
            fg.gcd(fg.tensor(a), fg.tensor(b)).numpy(), torch.gcd(torch.tensor(a), torch.tensor(b))
        )
    x = fg.tensor(a)
    assert x.gcd_(fg.tensor(b)) is x and x.tolist() == np.gcd(a, b).tolist()
    raises_like_torch(
        lambda T: T.gcd(T.tensor([1.0]), T.tensor([2.0])),
        NotImplementedError,
        "\"gcd_cpu\" not implemented for 'Float'",
    )


def test_in_place_aliases():
    for T in MODULES:
        x = T.tensor([1.0, 2.0, 3.0])
        assert x.greater_(2.0) is x and x.tolist() == [0.0, 0.0, 1.0]
        x = T.tensor([1.0, 2.0, 3.0])
        assert x.less_equal_(2.0).tolist() == [1.0, 1.0, 0.0]
        x = T.tensor([1.0, 2.0])
        assert x.not_equal_(T.tensor([1.0, 0.0])).tolist() == [0.0, 1.0]
        assert T.tensor([2.0, 4.0]).multiply_(3).tolist() == [6.0, 12.0]
        assert T.tensor([3.0, 4.0]).true_divide_(2).tolist() == [1.5, 2.0]
        y = T.tensor([-1.0, 4.0])
        assert T.relu_(y) is y and y.tolist() == [0.0, 4.0]
        assert T.sqrt_(y).tolist() == [0.0, 2.0] and T.exp_(T.zeros(1)).tolist() == [1.0]
        z = T.tensor([0.0, -0.5])
        T.sigmoid_(z)
        np.testing.assert_allclose(z.numpy(), 1 / (1 + np.exp([0.0, 0.5])), rtol=1e-6)
    leaf = fg.tensor([1.0, 2.0], requires_grad=True)
    y = leaf * 1
    fg.tanh_(y)
    y.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), 1 - np.tanh([1.0, 2.0]) ** 2, rtol=1e-6)


# ----------------------------------------------------------------------------- linear algebra (torch.*)


def test_svd_returns_v():
    a = rand(2, 4, 3)
    U, S, V = fg.svd(fg.tensor(a))
    np.testing.assert_allclose((U @ fg.diag_embed(S) @ V.mT).numpy(), a, atol=1e-12)
    assert tuple(U.shape) == (2, 4, 3) and tuple(V.shape) == (2, 3, 3)
    assert tuple(fg.svd(fg.tensor(a), some=False).U.shape) == (2, 4, 4)
    U0, S0, V0 = fg.tensor(a).svd(compute_uv=False)
    assert tuple(U0.shape) == (2, 4, 4) and not U0.any().item() and not V0.any().item()
    np.testing.assert_allclose(S0.numpy(), S.numpy())
    check_op(lambda T, x: T.svd(x).S, a)
    check_op(lambda T, x: (lambda r: r.U @ T.diag_embed(r.S) @ r.V.mT)(x.svd()), a)


def test_qr_and_cholesky():
    a = rand(2, 4, 3)
    check_op(lambda T, x: (lambda r: r.Q @ r.R)(T.qr(x)), a)
    Q, R = fg.qr(fg.tensor(a), some=False)
    assert tuple(Q.shape) == (2, 4, 4) and tuple(R.shape) == (2, 4, 3)
    np.testing.assert_allclose((Q @ R).numpy(), a, atol=1e-12)
    check_op(lambda T, x: T.cholesky(x @ x.mT + 3 * T.eye(3), upper=True), rand(2, 3, 3))
    check_op(lambda T, x: (x @ x.mT + 3 * T.eye(3)).cholesky(), rand(3, 3))


def test_cholesky_solve_and_inverse():
    L = np.linalg.cholesky(spd(2))
    check_op(lambda T, b, factor: T.cholesky_solve(b, factor), rand(2, 3, 2), L)
    check_op(lambda T, b, u: T.cholesky_solve(b, u, upper=True), rand(3, 1), np.swapaxes(L[0], -1, -2))
    check_op(lambda T, factor: T.cholesky_inverse(factor), L[1])
    out = fg.cholesky_inverse(fg.tensor(L))
    np.testing.assert_allclose(out.numpy(), np.linalg.inv(L @ np.swapaxes(L, -1, -2)), rtol=1e-10)
    raises_like_torch(
        lambda T: T.cholesky_solve(T.zeros(3), T.eye(3)),
        RuntimeError,
        "b should have at least 2 dimensions, but has 1",
    )


@pytest.mark.parametrize(
    "upper, transpose, unit", [(True, False, False), (False, True, False), (False, False, True)]
)
def test_triangular_solve(upper, transpose, unit):
    A = np.triu(rand(3, 3)) + 3 * np.eye(3) if upper else np.tril(rand(3, 3)) + 3 * np.eye(3)
    check_op(lambda T, b, a: T.triangular_solve(b, a, upper, transpose, unit).solution, rand(2, 3, 2), A)
    solution, coefficient = fg.triangular_solve(fg.tensor(rand(3, 1)), fg.tensor(A), upper)
    np.testing.assert_array_equal(coefficient.numpy(), A)
    assert fg.triangular_solve(fg.tensor(rand(3, 1)), fg.tensor(A))._fields == (
        "solution",
        "cloned_coefficient",
    )


def test_pinverse_matrix_power_chain():
    check_op(lambda T, x: T.pinverse(x), rand(4, 3))
    check_op(lambda T, x: x.matrix_power(3), rand(2, 3, 3))
    check_op(lambda T, a, b, c: T.chain_matmul(a, b, c), rand(2, 3), rand(3, 4), rand(4, 2))
    raises_like_torch(
        lambda T: T.chain_matmul(), RuntimeError, "chain_matmul(): Expected one or more matrices"
    )
    check_op(lambda T, x: T.nuclear_norm(x), rand(3, 4))
    check_op(lambda T, x: T.frobenius_norm(x, (0, 1)), rand(3, 4))


def test_vander():
    check_op(lambda T, x: T.vander(x), rand(4), grad=False)
    x = rand(3)
    np.testing.assert_allclose(
        fg.vander(fg.tensor(x), 5, increasing=True).numpy(), np.vander(x, 5, increasing=True)
    )
    t = fg.tensor(x, requires_grad=True)
    fg.vander(t, 4).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), 3 * x**2 + 2 * x + 1)
    raises_like_torch(lambda T: T.vander(T.zeros(2, 2)), RuntimeError, "x must be a one-dimensional tensor.")
    raises_like_torch(lambda T: T.vander(T.zeros(2), N=-1), RuntimeError, "N must be non-negative.")


# ----------------------------------------------------------------------------- statistics


def test_gradient_uniform_spacing():
    x = rand(4, 5)
    for kwargs in (
        {},
        {"spacing": 2.0},
        {"spacing": [0.5, 3.0], "edge_order": 2},
        {"dim": 1, "edge_order": 2},
    ):
        outs = fg.gradient(fg.tensor(x), **kwargs)
        np_spacing = kwargs.get("spacing", 1.0)
        axes = (kwargs["dim"],) if "dim" in kwargs else (0, 1)
        spacing = np_spacing if isinstance(np_spacing, list) else [np_spacing] * len(axes)
        expected = np.gradient(x, *spacing, axis=axes, edge_order=kwargs.get("edge_order", 1))
        expected = expected if isinstance(expected, (list, tuple)) else [expected]
        for o, e in zip(outs, expected):
            np.testing.assert_allclose(o.numpy(), e, rtol=1e-12)
    check_op(lambda T, t: T.gradient(t, edge_order=2)[1], x)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_coordinates(edge_order):
    coordinates = np.array([0.0, 0.5, 1.7, 2.0, 3.5])
    x = rand(3, 5)
    out = check_op(
        lambda T, t: T.gradient(t, spacing=(T.tensor(coordinates),), dim=1, edge_order=edge_order)[0], x
    )
    np.testing.assert_allclose(
        out.detach().numpy(), np.gradient(x, coordinates, axis=1, edge_order=edge_order)
    )


def test_gradient_errors():
    message = "torch.gradient expected each dimension size to be at least edge_order+1"
    raises_like_torch(lambda T: T.gradient(T.zeros(2), edge_order=2), RuntimeError, message)
    raises_like_torch(
        lambda T: T.gradient(T.zeros(4), edge_order=3),
        RuntimeError,
        "torch.gradient only supports edge_order=1 and edge_order=2.",
    )
    raises_like_torch(
        lambda T: T.gradient(T.zeros(4), spacing=[1.0, 2.0]),
        RuntimeError,
        "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to 'self.dim() = 1', "
        "since dim argument was not given, but got a list of length 2",
    )


def test_histogram():
    x = rand(20)
    w = np.abs(rand(20))
    for kwargs in ({"bins": 4}, {"bins": 3, "range": (-1.0, 1.0), "density": True}):
        hist, edges = fg.histogram(fg.tensor(x), **kwargs)
        e_hist, e_edges = np.histogram(x, **kwargs)
        np.testing.assert_allclose(hist.numpy(), e_hist)
        np.testing.assert_allclose(edges.numpy(), e_edges)
    hist, _ = fg.tensor(x).histogram(fg.tensor([-1.0, 0.0, 2.0]), weight=fg.tensor(w))
    np.testing.assert_allclose(hist.numpy(), np.histogram(x, [-1.0, 0.0, 2.0], weights=w)[0])
    if has_torch:
        t_hist, t_edges = torch.histogram(torch.tensor(x), 5)
        np.testing.assert_allclose(fg.histogram(fg.tensor(x), 5).hist.numpy(), t_hist.numpy())
    raises_like_torch(
        lambda T: T.histogram(T.tensor([1, 2]), 3),
        NotImplementedError,
        "\"histogramdd\" not implemented for 'Long'",
    )


EDGES = [[-3.0, 0.0, 3.0], [-1.0, 0.5, 2.0, 3.0]]
HISTOGRAMDD_CASES = [
    (3, {}),
    ([2, 4], {"density": True}),
    (2, {"range": [0.0, 1.0, -1.0, 1.0]}),
    (EDGES, {}),
]


@pytest.mark.parametrize("bins, kwargs", HISTOGRAMDD_CASES)
def test_histogramdd(bins, kwargs):
    points, w = rand(30, 2), np.abs(rand(30))
    flat_range = kwargs.get("range")
    expected_hist, expected_edges = np.histogramdd(
        points,
        bins,
        range=None if flat_range is None else [flat_range[:2], flat_range[2:]],
        weights=w,
        density=kwargs.get("density", False),
    )
    for T in MODULES:
        # Edges go in as one tensor per dimension.
        bins_of_t = [T.tensor(edges, dtype=T.float64) for edges in bins] if bins is EDGES else bins
        hist, edges = T.histogramdd(T.tensor(points), bins_of_t, weight=T.tensor(w), **kwargs)
        np.testing.assert_allclose(hist.numpy(), expected_hist, rtol=1e-12)
        assert len(edges) == 2
        for got, want in zip(edges, expected_edges):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_histogramdd_batched_points_and_errors():
    points = rand(2, 5, 3)
    hist = fg.histogramdd(fg.tensor(points), bins=2).hist
    np.testing.assert_allclose(hist.numpy(), np.histogramdd(points.reshape(-1, 3), 2)[0])
    raises_like_torch(
        lambda T: T.histogramdd(T.ones(4, 2), bins=[2, 2, 2]),
        RuntimeError,
        "histogramdd: The size of bins must be equal to the innermost dimension of the input.",
    )
    raises_like_torch(
        lambda T: T.histogramdd(T.ones(4, 2), bins=2, range=[0.0, 1.0]),
        RuntimeError,
        "torch.histogramdd: for a 2-dimensional histogram range should have 4 elements, but got 2",
    )
    raises_like_torch(
        lambda T: T.histogramdd(T.ones(4, 2, dtype=T.float64), bins=[T.ones(2), T.ones(2, dtype=T.float64)]),
        RuntimeError,
        "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input with dtype "
        "double and bins for dimension 0 with dtype float",
    )
    raises_like_torch(
        lambda T: T.histogramdd(T.ones(4), bins=2),
        RuntimeError,
        "torch.histogramdd: input tensor should have at least 2 dimensions",
    )


def test_multinomial_method():
    fg.manual_seed(0)
    probabilities = fg.tensor([0.0, 1.0, 0.0, 3.0])
    draws = probabilities.multinomial(50, replacement=True)
    assert draws.shape == (50,) and set(draws.tolist()) <= {1, 3}
    assert sorted(probabilities.multinomial(2).tolist()) == [1, 3]


# ----------------------------------------------------------------------------- linalg additions


def test_matrix_exp():
    for scale in (0.1, 3.0):
        check_op(lambda T, x, c=scale: T.linalg.matrix_exp(x * c), rand(2, 3, 3), atol=1e-9)
    check_op(lambda T, x: x.matrix_exp(), rand(3, 3))
    # exp of a skew-symmetric generator is a rotation
    theta = 0.7
    R = fg.matrix_exp(fg.tensor([[0.0, -theta], [theta, 0.0]], dtype=fg.float64)).numpy()
    np.testing.assert_allclose(
        R, [[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]], atol=1e-14
    )
    raises_like_torch(
        lambda T: T.matrix_exp(T.zeros(2, 3)),
        RuntimeError,
        "linalg.matrix_exp: A must be batches of square matrices, but they are 2 by 3 matrices",
    )


def test_cond():
    a = rand(2, 3, 3)
    for p in (None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf):
        out = fg.linalg.cond(fg.tensor(a), p).numpy()
        np.testing.assert_allclose(out, np.linalg.cond(a, p), rtol=1e-10)
    check_op(lambda T, x: T.linalg.cond(x), a)
    tall = rand(4, 3)
    np.testing.assert_allclose(fg.linalg.cond(fg.tensor(tall)).item(), np.linalg.cond(tall), rtol=1e-10)
    assert math.isinf(fg.linalg.cond(fg.zeros(2, 2), 1).item())
    raises_like_torch(
        lambda T: T.linalg.cond(T.eye(2), "bad"), RuntimeError, "linalg.cond got an invalid norm type: bad"
    )
    raises_like_torch(
        lambda T: T.linalg.cond(T.zeros(2, 3), 1),
        RuntimeError,
        "linalg.cond(ord=1): A must be batches of square matrices, but they are 2 by 3 matrices",
    )


def test_linalg_vander_tensorinv_tensorsolve():
    check_op(lambda T, x: T.linalg.vander(x), rand(2, 4))
    check_op(lambda T, x: T.linalg.vander(x, N=2), rand(3))
    check_op(lambda T, x: T.linalg.tensorinv(x, ind=1), rand(4, 2, 2) + np.eye(4).reshape(4, 2, 2) * 3)
    check_op(
        lambda T, a, b: T.linalg.tensorsolve(a, b), rand(2, 3, 6) + 3 * np.eye(6).reshape(2, 3, 6), rand(2, 3)
    )
    check_op(lambda T, a, b: T.linalg.tensorsolve(a, b, dims=(0,)), rand(6, 2, 3), rand(2, 3))
    raises_like_torch(
        lambda T: T.linalg.tensorinv(T.zeros(4, 2, 2), ind=0),
        RuntimeError,
        "Expected a strictly positive integer for 'ind', but got 0",
    )
    raises_like_torch(
        lambda T: T.linalg.tensorinv(T.zeros(4, 2, 3)),
        RuntimeError,
        "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got 3 != 8",
    )


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (4, 3), (2, 3, 5)])
def test_lu_factor_and_lu(shape):
    a = rand(*shape)
    LU, pivots = fg.linalg.lu_factor(fg.tensor(a))
    P, L, U = fg.linalg.lu(fg.tensor(a))
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=1e-12)
    assert pivots.dtype == fg.int64 and pivots.min().item() >= 1
    if has_torch:
        t_LU, t_pivots = torch.linalg.lu_factor(torch.tensor(a))
        np.testing.assert_allclose(LU.numpy(), t_LU.numpy(), atol=1e-12)
        np.testing.assert_array_equal(pivots.numpy(), t_pivots.numpy())
    check_op(lambda T, x: T.linalg.lu(x).U, a)
    check_op(lambda T, x: T.linalg.lu(x).L, a)


@pytest.mark.parametrize("left, adjoint", [(True, False), (True, True), (False, False), (False, True)])
def test_lu_solve(left, adjoint):
    a = rand(2, 3, 3)
    b = rand(2, 3, 2) if left else rand(2, 2, 3)
    check_op(lambda T, x, y: T.linalg.lu_solve(*T.linalg.lu_factor(x), y, left=left, adjoint=adjoint), a, b)


def test_ex_variants_report_info():
    singular = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 3.0]]])
    inverse, info = fg.linalg.inv_ex(fg.tensor(singular))
    assert info.tolist() == [2, 0]
    np.testing.assert_allclose(inverse[1].numpy(), np.linalg.inv(singular[1]))
    result, info = fg.linalg.solve_ex(
        fg.tensor(singular), fg.tensor([[1.0, 1.0], [2.0, 3.0]], dtype=fg.float64)
    )
    assert info.tolist() == [2, 0] and result[1].tolist() == [1.0, 1.0]
    _, _, info = fg.linalg.lu_factor_ex(fg.tensor(singular))
    assert info.tolist() == [2, 0]
    good = spd(n=3)
    L, info = fg.linalg.cholesky_ex(fg.tensor(np.stack([np.diag([1.0, -1.0, 1.0]), good])))
    assert info.tolist() == [2, 0]
    np.testing.assert_allclose(L[1].numpy(), np.linalg.cholesky(good), rtol=1e-12)
    if has_torch:
        for name in ("inv_ex", "lu_factor_ex"):
            t_info = getattr(torch.linalg, name)(torch.tensor(singular)).info
            f_info = getattr(fg.linalg, name)(fg.tensor(singular)).info
            assert f_info.tolist() == t_info.tolist()
    check_op(lambda T, x: T.linalg.inv_ex(x).inverse, rand(2, 3, 3) + 3 * np.eye(3))
    check_op(lambda T, x, b: T.linalg.solve_ex(x, b).result, rand(3, 3) + 3 * np.eye(3), rand(3))
    with pytest.raises(fg.linalg.LinAlgError, match="The diagonal element 2 is zero"):
        fg.linalg.inv_ex(fg.tensor(singular[0]), check_errors=True)
    raises_like_torch(
        lambda T: T.linalg.lu_factor(T.zeros(2, 2)), RuntimeError, "torch.linalg.lu_factor: U[1,1] is zero"
    )


def test_householder_product():
    a, tau = rand(2, 5, 3), rand(2, 2)
    check_op(lambda T, x, t: T.linalg.householder_product(x, t), a, tau)
    raises_like_torch(
        lambda T: T.linalg.householder_product(T.zeros(2, 3), T.zeros(2)),
        RuntimeError,
        "torch.linalg.householder_product: input.shape[-2] must be greater than or equal to input.shape[-1]",
    )


# ----------------------------------------------------------------------------- top-level settings and factories


def test_asarray_shares_memory_like_torch():
    t = fg.zeros(2)
    assert fg.asarray(t) is t and fg.asarray(t, dtype=fg.float32) is t and fg.asarray(t, copy=True) is not t
    a = np.zeros(3)
    shared = fg.asarray(a)
    a[0] = 5.0
    assert shared[0].item() == 5.0
    copied = fg.asarray(a, copy=True)
    a[1] = 7.0
    assert copied[1].item() == 0.0
    assert fg.asarray([1, 2]).dtype == fg.int64 and fg.asarray(3.5).dtype == fg.float32
    assert fg.asarray(a, dtype=fg.float32).dtype == fg.float32
    assert fg.asarray([1.0], requires_grad=True).requires_grad
    raises_like_torch(
        lambda T: T.asarray([1, 2], copy=False), ValueError, "can't alias arbitrary sequence into a tensor."
    )
    raises_like_torch(
        lambda T: T.asarray(T.zeros(2), dtype=T.float64, copy=False),
        ValueError,
        "can't alias tensor with dtype 'Float' into dtype 'Double'.",
    )


def test_compile_is_identity():
    def f(x):
        return x * 2

    assert fg.compile(f) is f

    @fg.compile
    def g(x):
        return x + 1

    @fg.compile(mode="max-autotune", fullgraph=True)
    def h(x):
        return x - 1

    assert g(fg.ones(1)).item() == 2 and h(fg.ones(1)).item() == 0
    model = fg.nn.Linear(2, 2)
    assert fg.compile(model) is model


def test_global_settings():
    assert fg.get_float32_matmul_precision() == "highest"
    try:
        fg.set_float32_matmul_precision("medium")
        assert fg.get_float32_matmul_precision() == "medium"
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            fg.set_float32_matmul_precision("bad")
        assert fg.get_float32_matmul_precision() == "medium"
    finally:
        fg.set_float32_matmul_precision("highest")
    assert str(fg.get_default_device()) == "cpu"
    fg.set_default_device("cpu")
    fg.set_default_device(None)
    with pytest.raises(RuntimeError, match="only supports the CPU"):
        fg.set_default_device("cuda")
    previous = fg.get_num_interop_threads()
    fg.set_num_interop_threads(3)
    assert fg.get_num_interop_threads() == 3
    fg.set_num_interop_threads(previous)
    raises_like_torch(
        lambda T: T.set_num_interop_threads(0),
        RuntimeError,
        "set_num_interop_threads expects a positive integer",
    )
    assert fg.is_warn_always_enabled() is False
    fg.set_warn_always(True)
    assert fg.is_warn_always_enabled() is True
    fg.set_warn_always(False)


def test_scalar_tensor_and_empty_strided():
    for T in MODULES:
        s = T.scalar_tensor(3)
        assert s.shape == () and s.dtype == T.float32 and s.item() == 3.0
        assert T.scalar_tensor(2, dtype=T.float64).dtype == T.float64
        e = T.empty_strided((2, 3), (3, 1), dtype=T.float64)
        assert tuple(e.shape) == (2, 3) and e.dtype == T.float64
    raises_like_torch(
        lambda T: T.empty_strided((2, 3), (1,)),
        RuntimeError,
        "dimensionality of sizes (2) must match dimensionality of strides (1)",
    )


# ----------------------------------------------------------------------------- functional ops at top level


@pytest.mark.parametrize(
    "call, inputs",
    [
        (lambda T, x, w: T.conv1d(x, w, None, 1, 1), [(1, 2, 6), (3, 2, 3)]),
        (lambda T, x, w: T.conv2d(x, w, padding=1), [(1, 2, 4, 4), (2, 2, 3, 3)]),
        (lambda T, x, w: T.conv_transpose1d(x, w, None, 2), [(1, 2, 4), (2, 3, 3)]),
        (lambda T, x: T.max_pool1d(x, 2), [(1, 2, 6)]),
        (lambda T, x: T.max_pool2d(x, 2, [], 0, 1, False), [(1, 1, 4, 4)]),
        (lambda T, x: T.avg_pool1d(x, 3, 1), [(1, 2, 6)]),
        (lambda T, x: T.adaptive_avg_pool1d(x, 3), [(1, 2, 7)]),
        (lambda T, x: T.dropout(x, 0.5, False), [(3, 4)]),
        (lambda T, w: T.embedding(w, T.tensor([[2, 0], [1, 1]])), [(3, 4)]),
        (lambda T, x, w, b: T.layer_norm(x, [4], w, b, 1e-5, True), [(3, 4), (4,), (4,)]),
        (lambda T, x, w: T.group_norm(x, 2, w, None, 1e-5, True), [(2, 4, 3), (4,)]),
        (lambda T, x, w, b: T.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False), [(5, 3), (3,), (3,)]),
        (lambda T, x, w: T.instance_norm(x, w, None, None, None, True, 0.1, 1e-5, False), [(2, 3, 5), (3,)]),
        (lambda T, x: T.pixel_shuffle(x, 2), [(1, 4, 2, 2)]),
        (lambda T, x: T.pixel_unshuffle(x, 2), [(1, 1, 4, 4)]),
        (lambda T, a, b: T.cosine_similarity(a, b, 1), [(3, 4), (3, 4)]),
        (lambda T, a, b: T.pairwise_distance(a, b), [(3, 4), (3, 4)]),
        (lambda T, a, b: T.kl_div(a, b.exp(), 0), [(3, 4), (3, 4)]),
        (lambda T, a, b: T.kl_div(a, b, 2, log_target=True), [(3, 4), (3, 4)]),
        (lambda T, x: T.selu(x), [(3, 4)]),
        (lambda T, x: T.celu(x, 0.5), [(3, 4)]),
        (lambda T, x: T.threshold(x, 0.1, 2.0), [(3, 4)]),
        (lambda T, x, w: T.prelu(x, w), [(2, 3, 4), (3,)]),
        (lambda T, x, w: x.prelu(w), [(2, 3), (1,)]),
        (lambda T, x: T.hardshrink(x, 0.3), [(3, 4)]),
        (lambda T, x: x.hardshrink(), [(3, 4)]),
        (lambda T, x, y: T.binary_cross_entropy_with_logits(x, y.sigmoid(), None, None, 2), [(3, 4), (3, 4)]),
        (lambda T, x, w: T.rms_norm(x, [4], w), [(3, 4), (4,)]),
    ],
)
def test_top_level_functional_forms(call, inputs):
    check_op(call, *[rand(*s) for s in inputs])


def test_top_level_in_place_functional_forms():
    for T in MODULES:
        x = T.tensor([-1.0, 0.5])
        assert T.selu_(x) is x
        y = T.tensor([-1.0, 0.5])
        T.threshold_(y, 0.0, 9.0)
        assert y.tolist() == [9.0, 0.5]
        z = T.ones(4)
        assert T.dropout_(z, 0.5, False) is z and z.tolist() == [1.0] * 4
    np.testing.assert_allclose(fg.celu_(fg.tensor([-1.0]), 2.0).numpy(), 2 * (np.exp(-0.5) - 1), rtol=1e-6)


# ----------------------------------------------------------------------------- autograd legacy names


def test_variable_and_multithreading():
    for T in MODULES:
        t = T.ones(2)
        v = T.autograd.Variable(t, requires_grad=True)
        assert v is not t and v.requires_grad and v.is_leaf and not t.requires_grad
        (v * 3).sum().backward()
        assert v.grad.tolist() == [3.0, 3.0]
        with T.no_grad():
            v[0] = 5.0  # the same memory as t
        assert t[0].item() == 5.0
        w = T.autograd.Variable(T.ones(1, requires_grad=True) * 2)
        assert w.requires_grad is False and w.grad_fn is None
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
            T.autograd.Variable([1])
        assert isinstance(t, T.autograd.Variable) and not isinstance([t], T.autograd.Variable)
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            assert not T.autograd.Variable(t, volatile=True).requires_grad
        with pytest.warns(UserWarning, match=r"volatile was removed \(Variable.volatile is always False\)"):
            assert t.volatile is False
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            t.volatile = True
    assert fg.autograd.is_multithreading_enabled() is True
    with fg.autograd.set_multithreading_enabled(False):
        assert fg.autograd.is_multithreading_enabled() is False
    assert fg.autograd.is_multithreading_enabled() is True
    fg.autograd.set_multithreading_enabled(False)
    assert fg.autograd.is_multithreading_enabled() is False
    fg.autograd.set_multithreading_enabled(True)
    assert fg.autograd.is_view_replay_enabled() is False
    if has_torch:
        assert torch.autograd.is_view_replay_enabled() is fg.autograd.is_view_replay_enabled()


def test_finite_differences_of_renorm_in_float64():
    # renorm's scale depends on the norm; its gradient includes that dependence
    x = rand(3, 4) * 2
    v = rand(3, 4)
    t = fg.tensor(x, requires_grad=True)
    (t.renorm(2, 0, 1.0) * fg.tensor(v)).sum().backward()

    def f(a):
        with fg.no_grad():
            return fg.tensor(a).renorm(2, 0, 1.0).numpy()

    (expected,) = fd_grads(f, [x.copy()], v)
    np.testing.assert_allclose(t.grad.numpy(), expected, atol=1e-6)


def test_nonzero_static_and_dim_order():
    x = fg.tensor([[1, 0], [0, 3]])
    assert x.nonzero_static(size=4).tolist() == [[0, 0], [1, 1], [-1, -1], [-1, -1]]
    assert fg.nonzero_static(x, size=1).tolist() == [[0, 0]]
    assert fg.tensor([0, 0]).nonzero_static(size=2, fill_value=7).tolist() == [[7], [7]]
    assert tuple(fg.tensor(5).nonzero_static(size=2).shape) == (2, 0)
    with pytest.raises(RuntimeError, match="'size' must be an non-negative integer"):
        x.nonzero_static(size=-1)
    assert fg.empty(2, 1, 3).permute(1, 0, 2).dim_order() == (0, 1, 2)
    assert fg.empty(2, 3, 4).permute(2, 0, 1).dim_order() == (1, 2, 0)
    assert fg.empty(3, 1).t().dim_order() == (0, 1)


def _top_level_functional_program(T):
    """PyTorch's top-level forms of functional ops, on fixed inputs."""
    rng = np.random.default_rng(4)
    x = T.tensor(rng.standard_normal((2, 4, 8)))
    volume = T.tensor(rng.standard_normal((1, 2, 4, 4, 4)))
    weight = T.tensor(rng.standard_normal((2, 3, 2, 2, 2)))
    values, indices = T.max_pool1d_with_indices(x, 3, 2, 1)
    adaptive, adaptive_indices = T.adaptive_max_pool1d(x, 3)
    outs = [
        T.kaiser_window(7),
        T.kaiser_window(6, False, 3.5, dtype=T.float64),
        T.kaiser_window(1),
        values,
        indices,
        adaptive,
        adaptive_indices,
        T.max_pool3d(volume, 2),
        T.conv_transpose3d(volume, weight, None, 2),
        T.pdist(x[0]),
        T.channel_shuffle(x.reshape(2, 4, 2, 4), 2),
        T.rrelu(x, 0.1, 0.3, False),
        T.alpha_dropout(x, 0.5, False),
        T.feature_alpha_dropout(x, 0.5, False),
    ]
    return [o.tolist() for o in outs]


def test_top_level_functional_forms_match_torch():
    ours = _top_level_functional_program(fg)
    np.testing.assert_allclose(ours[0], np.kaiser(8, 12.0)[:7], rtol=1e-5)
    np.testing.assert_allclose(ours[1], np.kaiser(6, 3.5), rtol=1e-12)
    assert ours[2] == [1.0]
    if has_torch:
        for k, (a, b) in enumerate(zip(ours, _top_level_functional_program(torch))):
            np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-5, atol=1e-6, err_msg=str(k))


def test_cond_and_while_loop_run_eagerly_with_gradients():
    x = fg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = fg.cond(x.sum() > 0, lambda a: a * 3, lambda a: a - 1, (x,))
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]
    assert fg.cond(False, lambda a: a * 3, lambda a: a - 1, [x]).tolist() == [0.0, -3.0, 2.0]
    with pytest.raises(RuntimeError, match="Expected pred to be bool or single-element tensor"):
        fg.cond(x, lambda a: a, lambda a: a, (x,))
    steps, value = fg.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2), (fg.tensor(0), x))
    assert steps.item() == 3 and value.tolist() == [8.0, -16.0, 24.0]
    assert fg.get_device(x) == -1
    assert x.is_set_to(x) and x.is_set_to(x.view(3)) and not x.is_set_to(x[:2])
    assert not x.is_set_to(x.detach().clone())


@pytest.mark.parametrize(
    "size, stride, offset", [((2, 2), (1, 2), 1), ((3, 2), (4, 1), None), ((2,), (5,), 2)]
)
def test_as_strided_scatter_values_match_torch_and_gradients_finite_differences(size, stride, offset):
    # Gradients are checked against finite differences only: torch 2.13
    # returns the input's gradient at the replaced elements and zero elsewhere.
    x, src = rand(3, 4), rand(*size)
    out = fg.as_strided_scatter(fg.tensor(x, requires_grad=True), fg.tensor(src), size, stride, offset)
    if has_torch:
        expected = torch.as_strided_scatter(torch.tensor(x), torch.tensor(src), size, stride, offset)
        np.testing.assert_array_equal(out.detach().numpy(), expected.numpy())
    tx, ts = fg.tensor(x, requires_grad=True), fg.tensor(src, requires_grad=True)
    out = tx.as_strided_scatter(ts, size, stride, offset)
    cotangent = np.random.default_rng(0).standard_normal(out.shape)
    out.backward(fg.tensor(cotangent))

    def f(a, b):
        with fg.no_grad():
            return fg.tensor(a).as_strided_scatter(fg.tensor(b), size, stride, offset).numpy()

    for got, want in zip((tx.grad, ts.grad), fd_grads(f, [x.copy(), src.copy()], cotangent)):
        np.testing.assert_allclose(got.numpy(), want, atol=1e-6)


def test_const_data_ptr_is_the_address_of_the_first_element():
    x = fg.zeros(3, 4, dtype=fg.float64)
    assert x.const_data_ptr() == x.data_ptr()
    assert x[1:].const_data_ptr() == x.data_ptr() + 4 * 8

"""Special functions (tan, lgamma, digamma, polygamma, erfinv), the binary functions with their
own NaN and sign rules (logaddexp, logaddexp2, fmax, fmin, copysign, nextafter, heaviside,
signbit), ``ferrograd.special`` and PyTorch's alternative names and small composites."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg
from ferrograd.autograd import gradcheck, gradgradcheck

from helpers import arrays, broadcastable_pair, check_op, has_torch, shapes, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is not installed")


def _positive(shape):
    return arrays(shape, 0.2, 6.0)


# --------------------------------------------------------------------------- unary special functions


@settings(max_examples=25, deadline=None)
@given(shapes(max_dims=2).flatmap(lambda s: arrays(s, -1.2, 1.2)))
def test_tan_matches_fd_and_torch(x):
    check_op(lambda T, a: T.tan(a), x)


@settings(max_examples=25, deadline=None)
@given(shapes(max_dims=2).flatmap(_positive))
def test_lgamma_digamma_polygamma_match_fd_and_torch(x):
    check_op(lambda T, a: T.lgamma(a), x)
    check_op(lambda T, a: T.digamma(a), x)
    for n in (1, 2, 3):
        check_op(lambda T, a, n=n: T.polygamma(n, a), x, rtol=1e-7, fd_atol=1e-4)


@settings(max_examples=25, deadline=None)
@given(shapes(max_dims=2).flatmap(lambda s: arrays(s, -0.95, 0.95)))
def test_erfinv_matches_fd_and_torch(x):
    check_op(lambda T, a: T.erfinv(a), x)


def test_special_values_at_poles_and_edges():
    x = fg.tensor([0.0, -0.0, -2.0, 1.0, 0.5], dtype=fg.float64)
    d = x.digamma().numpy()
    assert d[0] == -math.inf and d[1] == math.inf and math.isnan(d[2])
    assert d[3] == pytest.approx(-0.5772156649015329, rel=1e-15)
    assert d[4] == pytest.approx(-0.5772156649015329 - 2 * math.log(2), rel=1e-15)
    assert x.lgamma().numpy()[2] == math.inf
    assert x.polygamma(1).numpy()[3] == pytest.approx(math.pi**2 / 6, rel=1e-14)
    e = fg.tensor([-1.0, 1.0, 1.5, 0.0]).erfinv().numpy()
    assert e[0] == -math.inf and e[1] == math.inf and math.isnan(e[2]) and e[3] == 0


@needs_torch
def test_special_functions_match_torch_over_wide_ranges():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-20, 20, 200), rng.uniform(1e-4, 1e3, 200), [1e-300, 1e8]])
    x = x[np.abs(x - np.round(x)) > 1e-3]  # away from the poles at the non-positive integers
    for name in ("lgamma", "digamma"):
        got = getattr(fg, name)(fg.tensor(x)).numpy()
        want = getattr(torch, name)(torch.tensor(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=name)
    positive = x[x > 0]
    for n in (1, 2, 4):
        got = fg.polygamma(n, fg.tensor(positive)).numpy()
        want = torch.polygamma(n, torch.tensor(positive)).numpy()
        # torch's own series is good to about 1e-10 here; against exact values, below.
        np.testing.assert_allclose(got, want, rtol=1e-8, err_msg=f"polygamma {n}")
    y = np.concatenate([rng.uniform(-1, 1, 300), 1 - np.logspace(-15, -1, 30), [-1 + 1e-12, 1e-200]])
    got = fg.erfinv(fg.tensor(y)).numpy()
    np.testing.assert_allclose(got, torch.erfinv(torch.tensor(y)).numpy(), rtol=1e-12)
    f32 = rng.uniform(-0.999, 0.999, 100).astype(np.float32)
    np.testing.assert_allclose(
        fg.erfinv(fg.tensor(f32)).numpy(), torch.erfinv(torch.tensor(f32)).numpy(), rtol=2e-6
    )


def test_polygamma_is_exact_to_double_precision():
    mpmath = pytest.importorskip("mpmath")
    x = np.array([1e-3, 0.4, 1.0, 3.3, 9.99, 10.0, 12.0, 25.5, 700.0, 1e6, -0.5, -3.7])
    for n in (0, 1, 2, 5):
        got = fg.polygamma(n, fg.tensor(x)).numpy()
        want = np.array([float(mpmath.polygamma(n, v)) for v in x])
        np.testing.assert_allclose(got, want, rtol=2e-13, err_msg=f"polygamma {n}")


def test_second_derivatives_of_special_functions():
    x = fg.tensor([0.7, 1.3, 2.9], dtype=fg.float64, requires_grad=True)
    y = fg.tensor([-0.6, 0.1, 0.8], dtype=fg.float64, requires_grad=True)
    for fn in (fg.lgamma, fg.digamma, lambda t: fg.polygamma(2, t), fg.tan):
        assert gradcheck(fn, (x,)) and gradgradcheck(fn, (x,))
    assert gradcheck(fg.erfinv, (y,)) and gradgradcheck(fg.erfinv, (y,))


@needs_torch
def test_grad_fn_names_match_torch():
    def names(T):
        a = T.tensor([0.5, 1.5], requires_grad=True)
        b = T.tensor([1.0, -2.0], requires_grad=True)
        outs = [
            a.tan(),
            a.lgamma(),
            a.digamma(),
            T.polygamma(2, a),
            (a / 2).erfinv(),
            T.logaddexp(a, b),
            T.logaddexp2(a, b),
            T.fmax(a, b),
            T.fmin(a, b),
            T.copysign(a, b),
            T.copysign(a, -1.0),
            T.nextafter(a, b),
        ]
        return [o.grad_fn.name() for o in outs]

    assert names(fg) == names(torch)


def test_integer_inputs_compute_in_the_default_float_dtype():
    i = fg.tensor([1, 2, 3])
    for out in (i.tan(), i.lgamma(), i.digamma(), i.polygamma(1), i.erfinv()):
        assert out.dtype == fg.float32


@pytest.mark.parametrize("name", ["lgamma", "digamma", "erfinv"])
def test_complex_input_is_refused(name):
    with pytest.raises(RuntimeError, match="not implemented for 'ComplexFloat'"):
        getattr(fg, name)(fg.tensor([1j]))


def test_polygamma_refuses_negative_order():
    with pytest.raises(RuntimeError, match=r"polygamma\(n, x\) does not support negative n."):
        fg.polygamma(-1, fg.tensor([1.0]))


def test_in_place_forms_write_into_the_tensor():
    x = fg.tensor([0.3, 0.6], dtype=fg.float64)
    expected = x.digamma().numpy()
    assert x.digamma_() is x
    np.testing.assert_array_equal(x.numpy(), expected)
    z = fg.tensor([1.5, 2.5], dtype=fg.float64)
    z.polygamma_(1)
    np.testing.assert_allclose(z.numpy(), fg.tensor([1.5, 2.5], dtype=fg.float64).polygamma(1).numpy())


# --------------------------------------------------------------------------- binary functions


@settings(max_examples=30, deadline=None)
@given(
    broadcastable_pair(max_dims=2).flatmap(lambda s: st.tuples(arrays(s[0], -30, 30), arrays(s[1], -30, 30)))
)
def test_logaddexp_and_logaddexp2_match_fd_and_torch(xy):
    x, y = xy
    check_op(lambda T, a, b: T.logaddexp(a, b), x, y)
    check_op(lambda T, a, b: T.logaddexp2(a, b), x, y)


@settings(max_examples=30, deadline=None)
@given(broadcastable_pair(max_dims=2).flatmap(lambda s: st.tuples(arrays(s[0]), arrays(s[1]))))
def test_fmax_fmin_copysign_nextafter_match_fd_and_torch(xy):
    x, y = xy
    # Values a finite difference can straddle are moved apart: fmax/fmin switch sides and
    # copysign flips at them.
    # Ties are split first, then zeros of y moved to a value that is not x (a tie moved to
    # zero would make copysign flip).
    x = np.where(np.abs(x) < 1e-3, 0.5, x)
    xb = np.broadcast_to(x, np.broadcast_shapes(x.shape, y.shape))
    y = np.where(np.abs(xb - y) < 1e-3, y + 0.5, y)
    y = np.where(np.abs(y) < 1e-3, np.where(np.abs(xb + 0.7) < 1e-3, 0.9, -0.7), y)
    check_op(lambda T, a, b: T.fmax(a, b), x, y)
    check_op(lambda T, a, b: T.fmin(a, b), x, y)
    check_op(lambda T, a, b: T.copysign(a, b), x, y)
    check_op(lambda T, a, b: T.nextafter(a, b), x, y, fd_atol=1e-4)


@needs_torch
def test_nan_inf_and_tie_rules_match_torch():
    nan, inf = math.nan, math.inf
    a_vals = [1.0, 2.0, nan, nan, inf, -inf, 0.0, -0.0, 3.0]
    b_vals = [1.0, nan, 3.0, nan, inf, -inf, -0.0, 0.0, -3.0]

    def run(T):
        a = T.tensor(a_vals, dtype=T.float64, requires_grad=True)
        b = T.tensor(b_vals, dtype=T.float64, requires_grad=True)
        outs = [T.fmax(a, b), T.fmin(a, b), T.logaddexp(a, b), T.logaddexp2(a, b), T.copysign(a, b)]
        values = [o.detach().numpy() for o in outs]
        grads = []
        for o in outs[:2] + outs[4:]:
            ga, gb = T.autograd.grad(o.sum(), (a, b))
            grads += [ga.numpy(), gb.numpy()]
        a = a.detach()
        bits = [T.signbit(a).numpy(), T.heaviside(a, T.tensor([7.0], dtype=T.float64)).numpy()]
        return values, grads, bits

    for got, want in zip(run(fg), run(torch)):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


@needs_torch
def test_integer_and_bool_operands_follow_torch():
    pairs = [([1, 5], [3, 2]), ([True, False], [False, False])]
    for a, b in pairs:
        for name in ("fmax", "fmin", "copysign", "heaviside"):
            got = getattr(fg, name)(fg.tensor(a), fg.tensor(b))
            want = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
            assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert fg.signbit(fg.tensor([-1, 2])).tolist() == [True, False]


def test_errors_match_torch_messages():
    with pytest.raises(RuntimeError, match="\"logaddexp_cpu\" not implemented for 'Long'"):
        fg.logaddexp(fg.tensor([1]), fg.tensor([2]))
    with pytest.raises(
        RuntimeError, match="heaviside is not yet implemented for tensors with different dtypes"
    ):
        fg.heaviside(fg.tensor([1.0]), fg.tensor([1]))
    with pytest.raises(RuntimeError, match="fmax not implemented for complex tensors."):
        fg.fmax(fg.tensor([1j]), fg.tensor([1j]))
    with pytest.raises(RuntimeError, match="signbit is not implemented for complex tensors."):
        fg.signbit(fg.tensor([1j]))
    x = fg.tensor([1.0, -1.0], requires_grad=True)
    out = fg.heaviside(x, fg.tensor([0.5]))
    assert out.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
        out.sum().backward()


def test_logaddexp_is_exact_far_from_overflow():
    a = fg.tensor([1000.0, -1000.0, 0.0], dtype=fg.float64)
    b = fg.tensor([1000.0, -1000.0, -50.0], dtype=fg.float64)
    np.testing.assert_allclose(
        fg.logaddexp(a, b).numpy(), [1000 + math.log(2), -1000 + math.log(2), math.log1p(math.exp(-50))]
    )
    np.testing.assert_allclose(fg.logaddexp2(a, b).numpy()[:2], [1001.0, -999.0])


def test_nextafter_moves_one_unit_in_each_dtype():
    one = fg.tensor([1.0], dtype=fg.float32)
    assert fg.nextafter(one, fg.tensor([2.0])).item() == float(np.nextafter(np.float32(1), np.float32(2)))
    assert (
        fg.nextafter(fg.tensor([0.0], dtype=fg.float64), fg.tensor([-1.0], dtype=fg.float64)).item()
        == -5e-324
    )


# --------------------------------------------------------------------------- complex views after in-place writes


def test_view_as_real_of_a_leaf_written_under_no_grad_still_requires_grad():
    z = fg.tensor([1 + 2j, -1j], dtype=fg.complex128, requires_grad=True)
    with fg.no_grad():
        z.mul_(2)
    for view in (z.real, z.imag, fg.view_as_real(z)):
        assert view.requires_grad
    (z.real * 3 + z.imag).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), np.array([3 + 1j, 3 + 1j]))


# --------------------------------------------------------------------------- alternative names and composites


@needs_torch
def test_aliases_match_torch():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))

    def run(T):
        a, b = T.tensor(x), T.tensor(y)
        return [
            T.absolute(a),
            T.greater(a, b),
            T.greater_equal(a, b),
            T.less(a, b),
            T.less_equal(a, b),
            T.not_equal(a, b),
            T.concat([a, b], 1),
            T.concatenate([a, b]),
            T.swapdims(a, 0, 1),
            a.swapdims(1, 0),
            T.ravel(a.t()),
            T.clamp_min(a, 0.1),
            T.clamp_max(a, b),
            a.clamp_min(b),
            T.positive(a),
            T.rsub(a, 2.0, alpha=3),
            T.diagflat(a[0]),
            T.diagflat(a, 1),
            T.msort(a),
            T.inner(a, b),
            T.vdot(a[0], b[0]),
            T.addmv(a[:, 0], a, b[0], beta=0.5, alpha=2),
            T.addr(a, a[:, 0], b[0], alpha=-1),
            T.baddbmm(a[:, :3], a.unsqueeze(0).expand(2, 3, 4), b.t().unsqueeze(0).expand(2, 4, 3), beta=0),
            T.addbmm(a[:, :3], a.reshape(1, 3, 4), b.t().reshape(1, 4, 3)),
            *T.std_mean(a, 1),
            *T.var_mean(a, dim=0, correction=0, keepdim=True),
            *T.std_mean(a),
            *T.cummax(a, 1),
            *T.cummin(a, 0),
            T.take_along_dim(a, T.tensor(np.argsort(x, 1)), 1),
            T.take_along_dim(a, T.tensor([[0], [2], [1]]), 1),
            T.take_along_dim(a, T.tensor([5, 0])),
            *T.split_with_sizes(a, [1, 3], 1),
            T.logspace(-1, 2, 5),
            T.logspace(0, 3, 4, base=2.0, dtype=T.float64),
            T.hann_window(8),
            T.hann_window(7, periodic=False),
            T.hamming_window(6),
            T.blackman_window(9, dtype=T.float64),
            T.bartlett_window(5),
            T.bartlett_window(5, periodic=False),
            T.isin(T.tensor([1, 2, 3, 4]), T.tensor([2, 4, 6])),
            T.isin(T.tensor([1, 2, 3, 4]), T.tensor([2, 4, 6]), invert=True),
            *T.unravel_index(T.tensor([0, 5, 11, -1, 13, -13]), (3, 4)),
            T.special.expit(a),
            T.special.logit(T.sigmoid(a)),
            T.special.gammaln(a.abs() + 0.1),
            T.special.psi(a.abs() + 0.1),
            T.special.erfinv(a / 4),
            T.special.xlogy(a, a.abs()),
            T.special.xlog1py(a, a.abs()),
            T.special.ndtr(a),
            T.special.ndtri(T.sigmoid(a)),
            T.special.log_ndtr(a * 4),
            T.special.entr(a),
            T.special.logsumexp(a, 1),
            T.special.softmax(a, 1),
            T.special.log_softmax(a, 0),
            T.special.sinc(a),
            T.special.round(a * 3),
            T.special.round(a, decimals=2),
            T.special.multigammaln(a.abs() + 2, 3),
            T.special.exp2(a),
            T.special.expm1(a),
            T.special.log1p(a.abs()),
            T.special.polygamma(1, a.abs() + 0.1),
        ]

    for k, (got, want) in enumerate(zip(run(fg), run(torch))):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6, err_msg=str(k))
        assert tuple(got.shape) == tuple(want.shape), k


@needs_torch
def test_composites_differentiate_like_torch():
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    check_op(lambda T, a, b: T.inner(a, b), x, y)
    check_op(lambda T, a, b: T.addr(a, a[:, 0], b[0], beta=2, alpha=-1), x, y)
    check_op(lambda T, a, b: T.addmv(a[:, 0], a, b[0]), x, y)
    check_op(lambda T, a, b: T.baddbmm(a[:, :3], a.unsqueeze(0), b.t().unsqueeze(0), alpha=0.5), x, y)
    check_op(lambda T, a: T.cummax(a, 1).values, x)
    check_op(lambda T, a: T.cummin(a, 0).values, x)
    check_op(lambda T, a: T.std_mean(a, 1)[0] * T.std_mean(a, 1)[1], x)
    check_op(lambda T, a: T.take_along_dim(a, T.tensor([[0], [2], [1]]), 1), x)
    check_op(lambda T, a, b: T.clamp_min(a, b), x, y)
    check_op(lambda T, a: T.special.xlog1py(a, a.abs()), x)
    check_op(lambda T, a: T.special.entr(a.abs() + 0.1), x)
    check_op(lambda T, a: T.special.log_ndtr(a), x)


@needs_torch
def test_cummax_ties_and_nans_pick_torch_indices():
    data = [[1.0, 3.0, 3.0, 2.0, math.nan, 5.0], [2.0, 2.0, 1.0, 2.0, 0.0, 2.0]]
    for name in ("cummax", "cummin"):
        got = getattr(fg, name)(fg.tensor(data), 1)
        want = getattr(torch, name)(torch.tensor(data), 1)
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())


@needs_torch
def test_in_place_alias_methods_match_torch():
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    for name, args in [
        ("eq_", (y,)),
        ("lt_", (y,)),
        ("ge_", (0.0,)),
        ("logical_and_", (y,)),
        ("logical_not_", ()),
        ("clamp_min_", (0.2,)),
        ("clamp_max_", (y,)),
        ("cumsum_", (1,)),
        ("cumprod_", (0,)),
        ("tril_", (1,)),
        ("triu_", ()),
        ("absolute_", ()),
        ("fill_diagonal_", (7.0,)),
        ("copysign_", (y,)),
    ]:
        outs = []
        for T in (fg, torch):
            t = T.tensor(x)
            targs = [T.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
            assert getattr(t, name)(*targs) is t
            outs.append(t.numpy())
        np.testing.assert_allclose(outs[0], outs[1], err_msg=name)


def test_in_place_cumprod_differentiates_through_the_original_values():
    x = fg.tensor([1.5, -2.0, 0.5], dtype=fg.float64, requires_grad=True)
    y = x * 1
    y.cumprod_(0)
    y.sum().backward()
    a, b, c = 1.5, -2.0, 0.5
    np.testing.assert_allclose(x.grad.numpy(), [1 + b + b * c, a + a * c, a * b])


@needs_torch
def test_fill_diagonal_wrap_matches_torch():
    for shape, wrap in [((7, 3), True), ((7, 3), False), ((3, 3, 3), False), ((2, 5), False)]:
        a = fg.zeros(shape)
        b = torch.zeros(shape)
        a.fill_diagonal_(2.0, wrap=wrap)
        b.fill_diagonal_(2.0, wrap=wrap)
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_random_in_place_fills_have_their_distributions():
    fg.manual_seed(0)
    n = 200_000
    e = fg.empty(n).exponential_(2.0).numpy()
    assert e.min() > 0 and abs(e.mean() - 0.5) < 0.01
    g = fg.empty(n, dtype=fg.float64).geometric_(0.25).numpy()
    assert g.min() >= 1 and np.all(g == np.round(g)) and abs(g.mean() - 4) < 0.05
    ln = fg.empty(n, dtype=fg.float64).log_normal_(0.0, 0.5).numpy()
    assert abs(np.log(ln).mean()) < 0.01 and abs(np.log(ln).std() - 0.5) < 0.01
    c = fg.empty(n, dtype=fg.float64).cauchy_(1.0, 2.0).numpy()
    assert abs(np.median(c) - 1.0) < 0.05
    with pytest.raises(RuntimeError, match="exponential_ expects lambda > 0.0"):
        fg.empty(3).exponential_(-1.0)


def test_small_tensor_predicates_and_constructors():
    x = fg.tensor([[1.0, 2.0]])
    assert x.ndimension() == 2 and x.get_device() == -1 and x.is_signed()
    assert not fg.tensor([True]).is_signed()
    assert fg.is_same_size(x, fg.zeros(1, 2)) and not x.is_same_size(fg.zeros(2))
    assert fg.tensor([3]).is_nonzero() and not fg.is_nonzero(fg.tensor([0.0]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        x.is_nonzero()
    n = x.new_tensor([4, 5])
    assert n.dtype == fg.float32 and n.tolist() == [4.0, 5.0] and not n.requires_grad
    with pytest.raises(TypeError, match="The `\\+` operator, on a bool tensor is not supported."):
        fg.positive(fg.tensor([True]))


def test_composite_errors_match_torch_messages():
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
        fg.vdot(fg.zeros(2, 2), fg.zeros(2))
    with pytest.raises(RuntimeError, match="inner\\(\\) the last dimension must match on both input tensors"):
        fg.inner(fg.zeros(2, 3), fg.zeros(2))
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum exactly to 4"):
        fg.split_with_sizes(fg.zeros(4), [1, 2])
    with pytest.raises(RuntimeError, match="gather\\(\\): Expected dtype int32/int64 for index"):
        fg.take_along_dim(fg.zeros(4), fg.zeros(2))
    with pytest.raises(TypeError, match="expected 'indices' to be integer dtype, but got ferrograd.float32"):
        fg.unravel_index(fg.tensor([1.0]), (2,))


def test_mvlgamma_sums_shifted_lgammas_and_has_their_gradient():
    a = np.array([[2.5, 3.0, 7.25], [1.75, 4.0, 12.0]])
    for p in (1, 2, 3):
        expected = [
            [sum(math.lgamma(v - j / 2) for j in range(p)) + p * (p - 1) / 4 * math.log(math.pi) for v in row]
            for row in a
        ]
        x = fg.tensor(a, requires_grad=True)
        out = x.mvlgamma(p)
        np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)
        np.testing.assert_allclose(fg.mvlgamma(x, p).detach().numpy(), expected, rtol=1e-12)
        out.sum().backward()
        eps = 1e-6
        numeric = (fg.mvlgamma(fg.tensor(a + eps), p) - fg.mvlgamma(fg.tensor(a - eps), p)).numpy() / (
            2 * eps
        )
        np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6)
    y = fg.tensor([2.5, 4.0])
    assert y.mvlgamma_(2) is y
    np.testing.assert_allclose(y.numpy(), fg.tensor([2.5, 4.0]).mvlgamma(2).numpy())
    assert math.isinf(fg.mvlgamma(fg.tensor([0.5]), 2).item())
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        fg.tensor([2.0]).mvlgamma(0)


@needs_torch
def test_mvlgamma_matches_torch():
    a = np.array([0.5, 1.2, 2.5, 9.0])
    for p in (1, 2, 4):
        np.testing.assert_allclose(
            fg.mvlgamma(fg.tensor(a), p).numpy(), torch.mvlgamma(torch.tensor(a), p).numpy(), rtol=1e-12
        )
    check_op(lambda T, x: T.mvlgamma(x.abs() + 2, 3), np.random.default_rng(2).standard_normal((3, 4)))

"""The Bessel, scaled error, incomplete gamma and Hurwitz zeta functions of
``ferrograd.special``: values against torch over wide grids and against
closed forms, dtype promotion, gradients (finite differences and torch),
PyTorch's errors, and the tensor-method and in-place forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ferrograd as fg

from helpers import check_op, has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is not installed")

UNARY = ["i0", "i0e", "i1", "i1e", "erfcx"]

_POS = np.logspace(-300, 300, 3001)
GRID = np.concatenate(
    [
        -_POS[::-1],
        [0.0, -0.0, np.inf, -np.inf, np.nan],
        _POS,
        np.linspace(-40, 40, 8001),
        [24.999999, 25.0, 10.0],
    ]
)


def _assert_close(got, expected, rtol, atol=0.0):
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=rtol, atol=atol)
    inf = np.isinf(expected)
    np.testing.assert_array_equal(got[inf], expected[inf])


@needs_torch
@pytest.mark.parametrize("name", UNARY)
def test_unary_values_match_torch_float64(name):
    got = getattr(fg.special, name)(fg.tensor(GRID)).numpy()
    expected = getattr(torch.special, name)(torch.tensor(GRID)).numpy()
    # erfcx: torch's exp(x²) loses a few digits for negative x; ours keeps them.
    _assert_close(got, expected, 1e-12 if name == "erfcx" else 1e-13)


@needs_torch
@pytest.mark.parametrize("name", UNARY)
def test_unary_values_match_torch_float32(name):
    x = GRID[np.abs(GRID) < 3e38].astype(np.float32)
    got = getattr(fg.special, name)(fg.tensor(x))
    assert got.dtype == fg.float32
    expected = getattr(torch.special, name)(torch.tensor(x)).numpy()
    _assert_close(got.numpy(), expected, 1e-5)


def test_unary_closed_forms_and_edges():
    x = fg.tensor([0.0, 1.0, -1.0, 30.0, -30.0, math.inf, -math.inf, math.nan], dtype=fg.float64)
    i0 = fg.special.i0(x).tolist()
    assert i0[:5] == pytest.approx(
        [1.0, 1.2660658777520084, 1.2660658777520084, 781672297823.9775, 781672297823.9775], rel=1e-15
    )
    assert all(math.isnan(v) for v in i0[5:])  # PyTorch's kernel gives NaN at ±inf
    i1e = fg.special.i1e(x).tolist()
    assert i1e[5] == 0.0 and math.copysign(1.0, i1e[6]) == -1.0 and math.isnan(i1e[7])
    assert fg.special.i1(x).tolist()[2] == pytest.approx(-0.5651591039924850, rel=1e-15)
    e = fg.special.erfcx(fg.tensor([1.0, -1.0, 1e10, math.inf, -30.0], dtype=fg.float64)).tolist()
    assert e[:3] == pytest.approx(
        [math.e * math.erfc(1.0), math.e * (1 + math.erf(1.0)), 1 / (1e10 * math.sqrt(math.pi))], rel=1e-15
    )
    assert e[3:] == [0.0, math.inf]


@pytest.mark.parametrize("name", UNARY)
def test_unary_promotes_integers_and_bools(name):
    f = getattr(fg.special, name)
    for t in (fg.tensor([0, 1, 2]), fg.tensor([True, False])):
        out = f(t)
        assert out.dtype == fg.float32
        expected = f(t.to(fg.float32))
        assert out.tolist() == expected.tolist()


@pytest.mark.parametrize("name", UNARY)
def test_unary_rejects_complex_and_numbers(name):
    kernel = {"i0": "i0_vml_cpu"}.get(name, f"{name}_cpu")
    with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for 'ComplexFloat'"):
        getattr(fg.special, name)(fg.tensor([1.0]).to(fg.complex64))
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        getattr(fg.special, name)(2.0)


# The series side, then the asymptotic side (kept apart: finite differences of
# a sum lose the small terms next to values near 1e11).
POINTS = [np.array([[-6.0, -3.5, -0.2], [0.7, 2.0, 8.0]]), np.array([-31.0, 27.0])]
# erfcx grows like 2exp(x²) for negative x.
ERFCX_POINTS = [np.array([[-1.5, -0.2, 0.7], [2.0, 8.0, 12.0]]), np.array([-5.0])]


@pytest.mark.parametrize("name", UNARY)
def test_unary_gradients(name):
    for points in ERFCX_POINTS if name == "erfcx" else POINTS:
        out = check_op(lambda T, x: getattr(T.special, name)(x), points, atol=1e-8, rtol=1e-7, fd_atol=1e-4)
    expected_name = {"i0": "I0Backward0", "erfcx": "SpecialErfcxBackward0"}.get(
        name, f"Special{name.upper()[:2]}{name[2:].upper()}Backward0"
    )
    assert out.grad_fn.name() == expected_name


def test_i1_gradient_is_one_half_at_zero():
    for f in (fg.special.i1, fg.special.i1e):
        x = fg.tensor([0.0, 1e-20, -0.0], dtype=fg.float64, requires_grad=True)
        f(x).sum().backward()
        assert x.grad.tolist() == [0.5, 0.5, 0.5]


def test_i0_gradient_is_i1_and_second_order():
    x = fg.tensor([1.5, -2.0], dtype=fg.float64, requires_grad=True)
    (g,) = fg.autograd.grad(fg.i0(x).sum(), x, create_graph=True)
    assert g.tolist() == fg.special.i1(x.detach()).tolist()
    (g2,) = fg.autograd.grad(g.sum(), x)
    # I₁'(x) = I₀(x) - I₁(x)/x.
    xs = x.detach()
    assert g2.numpy() == pytest.approx((fg.special.i0(xs) - fg.special.i1(xs) / xs).numpy(), rel=1e-14)


def test_i0_method_function_and_inplace():
    x = fg.tensor([0.5, -1.0, 3.0])
    expected = fg.special.i0(x).tolist()
    assert fg.i0(x).tolist() == expected and x.i0().tolist() == expected
    y = x.clone()
    assert y.i0_() is y
    assert y.tolist() == expected
    z = fg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        z.i0_()


# The regularized incomplete gamma functions.

A_VALUES = np.concatenate([np.logspace(-10, 3.5, 40), [0.0, 0.5, 1.0, 2.0, 100.5, np.inf, np.nan, -1.0]])


def _pairs():
    a, x = np.meshgrid(A_VALUES, A_VALUES)
    return a.ravel(), x.ravel()


@needs_torch
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_matches_torch(name):
    a, x = _pairs()
    got = getattr(fg.special, name)(fg.tensor(a), fg.tensor(x)).numpy()
    expected = getattr(torch.special, name)(torch.tensor(a), torch.tensor(x)).numpy()
    # torch's own values are good to about 2e-9 near x = a for large a, so the
    # tight check is against closed forms below.
    # Where a < 1e-5, torch's upper function keeps only about 6 digits.
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    rtol = np.where(a < 1e-5, 1e-5, 1e-8)
    np.testing.assert_array_less(np.abs(got - expected), rtol * np.abs(expected) + 1e-300)
    got32 = getattr(fg.special, name)(fg.tensor(a.astype(np.float32)), fg.tensor(x.astype(np.float32)))
    assert got32.dtype == fg.float32
    exp32 = getattr(torch.special, name)(
        torch.tensor(a.astype(np.float32)), torch.tensor(x.astype(np.float32))
    )
    np.testing.assert_allclose(got32.numpy(), exp32.numpy(), rtol=1e-4, atol=1e-6)


def _p2_series(x):
    """P(2, x) = 1 - e⁻ˣ (1 + x) = Σₖ₌₂ (-1)ᵏ (k - 1) xᵏ / k!, for x < 1 without cancellation."""
    return sum((-1) ** k * (k - 1) * x**k / math.factorial(k) for k in range(2, 30))


def test_incomplete_gamma_closed_forms():
    x = np.concatenate([np.logspace(-12, 2.8, 200)])
    xt = fg.tensor(x)
    for a, lower in (
        (1.0, -np.expm1(-x)),
        (0.5, np.array([math.erf(math.sqrt(v)) for v in x])),
        (2.0, np.where(x < 1, _p2_series(x), -np.expm1(-x) - x * np.exp(-x))),
    ):
        at = fg.full_like(xt, a)
        p, q = fg.special.gammainc(at, xt).numpy(), fg.special.gammaincc(at, xt).numpy()
        upper = (
            np.array([math.erfc(math.sqrt(v)) for v in x])
            if a == 0.5
            else (np.exp(-x) * (1 + x) if a == 2 else np.exp(-x))
        )
        np.testing.assert_allclose(p, lower, rtol=1e-13)
        np.testing.assert_allclose(q, upper, rtol=1e-13, atol=1e-300)
    # Q(n, x) = e⁻ˣ Σₖ<ₙ xᵏ/k! near the median for n = 200, where P and Q are both large.
    n, xs = 200, np.array([180.0, 199.5, 230.0])
    terms = [sum(math.exp(k * math.log(v) - v - math.lgamma(k + 1)) for k in range(n)) for v in xs]
    q = fg.special.gammaincc(fg.full_like(fg.tensor(xs), float(n)), fg.tensor(xs)).numpy()
    np.testing.assert_allclose(q, terms, rtol=1e-13)


def test_incomplete_gamma_edges_and_broadcast():
    nan, inf = math.nan, math.inf
    a = fg.tensor([0.0, 0.0, 0.5, inf, inf, nan, -1.0], dtype=fg.float64)
    x = fg.tensor([0.5, 0.0, 0.0, 1.0, inf, inf, 1.0], dtype=fg.float64)
    p = fg.special.gammainc(a, x).tolist()
    assert (
        p[0] == 1.0 and math.isnan(p[1]) and p[2] == 0.0 and p[3] == 0.0 and math.isnan(p[4]) and p[5] == 1.0
    )
    assert math.isnan(p[6])
    out = fg.special.gammainc(fg.tensor([[1.0], [2.0]]), fg.tensor([0.5, 1.0, 3.0]))
    assert out.shape == (2, 3) and out.dtype == fg.float32
    assert fg.special.gammainc(fg.tensor([2.0]), fg.tensor([1.0], dtype=fg.float64)).dtype == fg.float64


def test_incomplete_gamma_dtype_errors():
    for f, kernel in ((fg.special.gammainc, "igamma_cpu"), (fg.igammac, "igammac_cpu")):
        with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for 'Long'"):
            f(fg.tensor([2, 3]), fg.tensor([1, 2]))
        with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for 'Bool'"):
            f(fg.tensor([True]), fg.tensor([False]))
    with pytest.raises(
        TypeError, match=r"special_gammainc\(\): argument 'other' \(position 2\) must be Tensor, not float"
    ):
        fg.special.gammainc(fg.tensor([1.0]), 2.0)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_gradient_of_other(name):
    a = np.array([0.5, 2.0, 7.5, 30.0])

    def f(T, x):
        return getattr(T.special, name)(T.tensor(a, dtype=T.float64), x)

    out = check_op(f, np.array([0.3, 1.7, 9.0, 28.0]), atol=1e-10, rtol=1e-9)
    assert out.grad_fn.name() == ("IgammaBackward0" if name == "gammainc" else "IgammacBackward0")


@pytest.mark.parametrize(("name", "op"), [("igamma", "igamma"), ("igammac", "igammac")])
def test_incomplete_gamma_gradient_of_input_is_not_implemented(name, op):
    modules = [fg] + ([torch] if has_torch else [])
    for T in modules:
        a = T.tensor([1.5], dtype=T.float64, requires_grad=True)
        x = T.tensor([2.0], dtype=T.float64, requires_grad=True)
        out = getattr(T, name)(a, x)
        with pytest.raises(
            NotImplementedError, match=f"the derivative for '{op}: input' is not implemented."
        ):
            out.sum().backward()


def test_incomplete_gamma_methods_and_inplace():
    a, x = fg.tensor([0.5, 3.0]), fg.tensor([1.0, 2.0])
    p = fg.special.gammainc(a, x).tolist()
    assert a.igamma(x).tolist() == p and fg.igamma(a, x).tolist() == p
    assert (a.igammac(x) + a.igamma(x)).tolist() == pytest.approx([1.0, 1.0], abs=1e-7)
    b = a.clone()
    assert b.igamma_(x) is b and b.tolist() == p
    c = a.clone()
    c.igammac_(x.double())
    assert c.dtype == fg.float32 and c.tolist() == fg.special.gammaincc(a, x).tolist()


# The Hurwitz zeta function.


@needs_torch
def test_zeta_matches_torch():
    s = np.concatenate([1 + np.logspace(-4, 3, 40), [1.0, 2.0, 3.0, 4.0, 0.5, np.inf, np.nan, -1.0, 0.0]])
    q = np.concatenate(
        [np.logspace(-10, 10, 40), -np.logspace(-1, 2, 10), [-2.5, -3.0, 0.0, np.inf, -np.inf, np.nan, 1.0]]
    )
    S, Q = (v.ravel() for v in np.meshgrid(s, q))
    got = fg.special.zeta(fg.tensor(S), fg.tensor(Q)).numpy()
    expected = torch.special.zeta(torch.tensor(S), torch.tensor(Q)).numpy()
    _assert_close(got, expected, 1e-13, atol=1e-300)  # subnormal results keep fewer digits
    got32 = fg.special.zeta(fg.tensor(S.astype(np.float32)), fg.tensor(Q.astype(np.float32))).numpy()
    exp32 = torch.special.zeta(torch.tensor(S.astype(np.float32)), torch.tensor(Q.astype(np.float32))).numpy()
    ok = np.isfinite(exp32) & (np.abs(exp32) < 1e38) & (np.abs(exp32) > 1e-37)
    np.testing.assert_allclose(got32[ok], exp32[ok], rtol=1e-5)
    np.testing.assert_array_equal(np.isnan(got32), np.isnan(exp32))


def test_zeta_known_values_numbers_and_promotion():
    assert fg.special.zeta(fg.tensor([2.0, 4.0], dtype=fg.float64), 1.0).tolist() == pytest.approx(
        [math.pi**2 / 6, math.pi**4 / 90], rel=1e-15
    )
    # ζ(2, ½) = π²/2, with the first argument a number.
    assert fg.special.zeta(2, fg.tensor([0.5], dtype=fg.float64)).item() == pytest.approx(
        math.pi**2 / 2, rel=1e-15
    )
    assert fg.special.zeta(2, fg.tensor([1, 2])).dtype == fg.float32
    assert fg.special.zeta(fg.tensor([2, 3]), 2.5).dtype == fg.float32
    assert fg.special.zeta(fg.tensor([True]), fg.tensor([1])).dtype == fg.float32
    assert fg.special.zeta(fg.tensor([2.0]), fg.tensor([2.0], dtype=fg.float64)).dtype == fg.float64
    assert fg.special.zeta(fg.tensor([2.0, 3.0]), fg.tensor([[1.0], [2.0]])).shape == (2, 2)
    with pytest.raises(TypeError, match="special_zeta\\(\\) received an invalid combination of arguments"):
        fg.special.zeta(2.0, 3.0)
    with pytest.raises(NotImplementedError, match="\"zeta_cpu\" not implemented for 'ComplexFloat'"):
        fg.special.zeta(fg.tensor([2.0]).to(fg.complex64), fg.tensor([1.0]))


def test_zeta_gradients():
    s = np.array([2.0, 3.5, 1.5])
    out = check_op(
        lambda T, q: T.special.zeta(T.tensor(s, dtype=T.float64), q),
        np.array([0.4, 2.0, 7.0]),
        atol=1e-9,
        rtol=1e-9,
    )
    assert out.grad_fn.name() == "SpecialZetaBackward0"
    q = fg.tensor([1.5, 2.0], dtype=fg.float64, requires_grad=True)
    assert fg.special.zeta(2.0, q).grad_fn.name() == "SpecialZetaBackward1"
    assert fg.special.zeta(q, 2.0).grad_fn.name() == "SpecialZetaBackward2"
    modules = [fg] + ([torch] if has_torch else [])
    for T in modules:
        x = T.tensor([1.5, 2.0], dtype=T.float64, requires_grad=True)
        with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented."):
            T.special.zeta(x, 2.0).sum().backward()
        q = T.tensor([1.5, 2.0], dtype=T.float64, requires_grad=True)
        T.special.zeta(2.0, q).sum().backward()
        assert q.grad.tolist() == pytest.approx([-0.8287966442343199, -0.4041138063191886], rel=1e-13)


# The forms PyTorch does not differentiate.

# Each name with its value at 0.
NO_GRAD = {
    "modified_bessel_i0": 1.0,
    "modified_bessel_i1": 0.0,
    "spherical_bessel_j0": 1.0,
    "modified_bessel_k0": math.inf,
    "modified_bessel_k1": math.inf,
    "scaled_modified_bessel_k0": math.inf,
    "scaled_modified_bessel_k1": math.inf,
    "bessel_j0": 1.0,
    "bessel_j1": 0.0,
    "bessel_y0": -math.inf,
    "bessel_y1": -math.inf,
    "airy_ai": 0.3550280538878172,
}

# The oscillating ones, with their amplitude envelope at large |x|.
OSCILLATING = {
    "bessel_j0": lambda x: np.sqrt(2 / (np.pi * np.abs(x))),
    "bessel_j1": lambda x: np.sqrt(2 / (np.pi * np.abs(x))),
    "bessel_y0": lambda x: np.sqrt(2 / (np.pi * np.abs(x))),
    "bessel_y1": lambda x: np.sqrt(2 / (np.pi * np.abs(x))),
    "airy_ai": lambda x: np.abs(x) ** -0.25 / np.sqrt(np.pi),
}


def _oscillating_atol(name, x, floor, torch_error=True):
    """Near their zeros these functions are only accurate to a fraction of their envelope; PyTorch's
    kernels also round the phase x - π/4 (or ζ + π/4) to the ulp of x, so where that ulp is large its
    values drift off the true ones (ours keep the phase exact), by up to the envelope times that ulp.
    And PyTorch's float64 kernels lose digits in the middle range: its J and Y are off by up to 2e-6
    of the envelope for 2 < |x| < 18 (1e-12 up to 25), its Ai by up to 5e-6 for x < -2 (mpmath agrees with ours there,
    see test_undifferentiated_bessel_match_mpmath), so the comparison allows that much there."""
    ax = np.maximum(np.abs(x.astype(np.float64)), 1.0)
    envelope = np.minimum(OSCILLATING[name](ax), 1.0)
    # Past 1e20 the phase is lost anyway (the bound reaches twice the envelope).
    ax_c = np.minimum(ax, 1e20)
    phase = ax_c * np.sqrt(ax_c) if name == "airy_ai" else ax_c
    phase_ulp = np.spacing(phase.astype(x.dtype)).astype(np.float64)
    if not torch_error:
        allowance = 0.0
    elif name == "airy_ai":
        allowance = np.where(x < -2, 1e-5, 0.0)
    else:
        allowance = np.select([np.abs(x) <= 2, np.abs(x) < 18, np.abs(x) < 25], [0.0, 5e-6, 1e-12], 0.0)
    return envelope * np.minimum(floor + allowance + 8 * phase_ulp, 2.0)


@needs_torch
@pytest.mark.parametrize("name", list(NO_GRAD))
def test_undifferentiated_bessel_match_torch(name):
    got = getattr(fg.special, name)(fg.tensor(GRID)).numpy()
    expected = getattr(torch.special, name)(torch.tensor(GRID)).numpy()
    if name in OSCILLATING:
        atol = _oscillating_atol(name, GRID, 2e-15)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
        np.testing.assert_array_equal(got[np.isinf(expected)], expected[np.isinf(expected)])
        finite = np.isfinite(expected)
        err = np.abs(got[finite] - expected[finite])
        assert np.all(err <= 1e-13 * np.abs(expected[finite]) + atol[finite])
    else:
        _assert_close(got, expected, 1e-13)
    x = GRID[np.abs(GRID) < 3e38].astype(np.float32)
    # PyTorch's float32 K kernels go wrong at subnormal float32 inputs (K₁ NaN, eˣK₀ inf or off by 0.3%).
    x = x[(x == 0) | (np.abs(x) >= np.finfo(np.float32).tiny)]
    got32 = getattr(fg.special, name)(fg.tensor(x))
    assert got32.dtype == fg.float32
    expected32 = getattr(torch.special, name)(torch.tensor(x)).numpy()
    if name in OSCILLATING:
        # PyTorch's float32 kernels compute in float32, phase included, so their error grows with |x|.
        small = (np.abs(x) < 1e3) & np.isfinite(expected32)
        atol = _oscillating_atol(name, x, 1e-6)
        err = np.abs(got32.numpy()[small].astype(np.float64) - expected32[small])
        assert np.all(err <= 1e-5 * np.abs(expected32[small]) + atol[small])
    else:
        # Subnormal float32 results keep only a few bits.
        _assert_close(got32.numpy(), expected32, 1e-5, atol=1e-37)


@pytest.mark.parametrize("name", list(NO_GRAD))
def test_undifferentiated_bessel_record_no_gradient(name):
    f = getattr(fg.special, name)
    x = fg.tensor([0.5, -2.0, 0.0], dtype=fg.float64, requires_grad=True)
    out = f(x)
    assert not out.requires_grad and out.grad_fn is None
    with pytest.raises(
        RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"
    ):
        out.sum().backward()
    assert f(fg.tensor([1, 2])).dtype == fg.float32 and f(fg.tensor([True])).dtype == fg.float32
    with pytest.raises(NotImplementedError, match=f"\"{name}_cpu\" not implemented for 'ComplexFloat'"):
        f(fg.tensor([1.0]).to(fg.complex64))
    assert f(fg.tensor([0.0])).item() == pytest.approx(NO_GRAD[name], rel=1e-7)
    assert f(fg.tensor([math.nan])).isnan().item()
    if name.startswith("modified_bessel_i"):
        same = getattr(fg.special, name.replace("modified_bessel_", ""))(x.detach())
        assert out.tolist() == same.tolist()
    elif name == "spherical_bessel_j0":
        assert out.tolist()[:2] == pytest.approx([math.sin(0.5) / 0.5, math.sin(-2.0) / -2.0], rel=1e-15)
    elif name in ("bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1") or name.startswith(
        "scaled"
    ):
        # Defined for x >= 0 only.
        assert math.isnan(out.tolist()[1])
    else:
        assert not math.isnan(out.tolist()[1])


MPMATH = {
    "bessel_j0": lambda mp, x: mp.besselj(0, x),
    "bessel_j1": lambda mp, x: mp.besselj(1, x),
    "bessel_y0": lambda mp, x: mp.bessely(0, x),
    "bessel_y1": lambda mp, x: mp.bessely(1, x),
    "modified_bessel_k0": lambda mp, x: mp.besselk(0, x),
    "modified_bessel_k1": lambda mp, x: mp.besselk(1, x),
    "scaled_modified_bessel_k0": lambda mp, x: mp.besselk(0, x) * mp.exp(x),
    "scaled_modified_bessel_k1": lambda mp, x: mp.besselk(1, x) * mp.exp(x),
    "airy_ai": lambda mp, x: mp.airyai(x),
}


@pytest.mark.parametrize("name", list(MPMATH))
def test_undifferentiated_bessel_match_mpmath(name):
    """Against mpmath at 30 digits (installed with torch): relative to the value, or for the oscillating
    ones to their envelope (and to the conditioning of the phase, x or ζ rounded to its ulp)."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    x = np.concatenate([np.linspace(-40, 40, 321), np.logspace(-5, 5, 61), -np.logspace(-5, 5, 61)])
    if name.startswith(("bessel_y", "modified", "scaled")):
        assert np.isnan(_special(name, x[x < 0])).all()
        x = x[x > 0]
    got = _special(name, x)
    expected = np.array([float(MPMATH[name](mp, mp.mpf(float(v)))) for v in x])
    if name in OSCILLATING:
        atol = _oscillating_atol(name, x, 2e-15, torch_error=False)
        assert np.all(np.abs(got - expected) <= 2e-15 * np.abs(expected) + atol)
    else:
        np.testing.assert_allclose(got, expected, rtol=3e-15, atol=0)


def _special(name, x):
    return getattr(fg.special, name)(fg.tensor(x, dtype=fg.float64)).numpy()


def test_bessel_j_y_identities():
    """Independent of PyTorch: the Wronskian J₁Y₀ - J₀Y₁ = 2/(πx), J₀' = -J₁, Y₀' = -Y₁, the
    recurrence J₀ + J₂ = (2/x) J₁ checked against J₂ from its own series, and the known zeros."""
    x = np.concatenate([np.logspace(-3, 4, 400), [24.999999, 25.0, 25.000001]])
    j0, j1, y0, y1 = (_special(n, x) for n in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"))
    np.testing.assert_allclose(j1 * y0 - j0 * y1, 2 / (np.pi * x), rtol=1e-13)
    h = 1e-6
    for f, df in (("bessel_j0", -j1), ("bessel_y0", -y1)):
        slope = (_special(f, x[50:] + h) - _special(f, x[50:] - h)) / (2 * h)
        np.testing.assert_allclose(slope, df[50:], atol=1e-8 * np.maximum(1, np.abs(df[50:])).max())
    # J₂(x) = Σ (-x²/4)^k (x/2)² / (k! (k+2)!), summed exactly by Python's fractions for x = 3.
    from fractions import Fraction

    q = Fraction(9, 4)
    j2 = float(sum((-q) ** k * q / (math.factorial(k) * math.factorial(k + 2)) for k in range(60)))
    assert _special("bessel_j0", [3.0])[0] + j2 == pytest.approx(
        2 / 3 * _special("bessel_j1", [3.0])[0], rel=1e-14
    )
    # The first zeros of J₀ and Y₀ (relative accuracy holds even there, below the switch at 25).
    assert abs(_special("bessel_j0", [2.404825557695773])[0]) < 1e-15
    assert abs(_special("bessel_y0", [0.8935769662791675])[0]) < 1e-15
    # Even and odd.
    np.testing.assert_array_equal(_special("bessel_j0", -x), j0)
    np.testing.assert_array_equal(_special("bessel_j1", -x), -j1)


def test_modified_bessel_k_identities():
    """I₀K₁ + I₁K₀ = 1/x (with the scaled forms, so it holds far out), K₀' = -K₁, and the scaled forms are
    exp(x) times the others."""
    x = np.logspace(-4, 5, 500)
    k0, k1 = _special("scaled_modified_bessel_k0", x), _special("scaled_modified_bessel_k1", x)
    i0e, i1e = _special("i0e", x), _special("i1e", x)
    np.testing.assert_allclose(i0e * k1 + i1e * k0, 1 / x, rtol=2e-14)
    small = x[x < 300]
    np.testing.assert_allclose(_special("modified_bessel_k0", small) * np.exp(small), k0[x < 300], rtol=1e-13)
    np.testing.assert_allclose(_special("modified_bessel_k1", small) * np.exp(small), k1[x < 300], rtol=1e-13)
    h = 1e-6
    mid = x[(x > 0.1) & (x < 50)]
    slope = (_special("modified_bessel_k0", mid + h) - _special("modified_bessel_k0", mid - h)) / (2 * h)
    np.testing.assert_allclose(slope, -_special("modified_bessel_k1", mid), rtol=1e-6)
    # K_ν(x) ~ √(π/(2x)) e^-x (1 + (4ν² - 1)/(8x)) far out.
    assert _special("scaled_modified_bessel_k1", [1e6])[0] == pytest.approx(
        math.sqrt(math.pi / 2e6) * (1 + 3 / 8e6 - 15 / (128 * 1e12)), rel=1e-15
    )


def test_airy_ai_identities():
    """Ai'' = x Ai (central differences), the first zero, and the
    decay Ai(x) ~ e^-ζ / (2√π x^(1/4)) far out."""
    x = np.linspace(-15, 8, 400)
    h = 1e-4
    ai = _special("airy_ai", x)
    second = (_special("airy_ai", x + h) - 2 * ai + _special("airy_ai", x - h)) / h**2
    np.testing.assert_allclose(second, x * ai, atol=1e-6)
    assert abs(_special("airy_ai", [-2.338107410459767])[0]) < 1e-15
    z = 50.0
    zeta = 2 / 3 * z**1.5
    series = 1 - 5 / (72 * zeta) + 385 / (10368 * zeta**2)
    expected = math.exp(-zeta) / (2 * math.sqrt(math.pi) * z**0.25) * series
    assert _special("airy_ai", [z])[0] == pytest.approx(expected, rel=1e-8)


# The orthogonal polynomials, taking (x, n).

POLYNOMIALS = [
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]

# x over and beyond [-1, 1] (its ends and the shifted forms' 0 and 1 included), and degrees: negative,
# non-integer, past the switch to the closed forms, large (overflowing to NaN off [-1, 1]), inf and NaN.
_POLY_X = np.concatenate([np.linspace(-3, 3, 61), [-1.0, 0.0, 1.0, 0.5, 1e-300, -0.0, 4.5, np.nan, np.inf]])
_POLY_N = np.array(
    [-3.0, -0.5, 0.0, 1.0, 2.0, 2.7, 3.0, 6.0, 7.0, 8.0, 9.0, 12.0, 25.0, 150.0, 1500.0, np.inf, np.nan]
)


@needs_torch
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_match_torch(name):
    x, n = np.meshgrid(_POLY_X, _POLY_N)
    got = getattr(fg.special, name)(fg.tensor(x), fg.tensor(n)).numpy()
    expected = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)).numpy()
    # PyTorch's CPU loop gives some NaN x the value of the element before it (U₂(NaN) = U₂(4.5) = 80 here);
    # ours are NaN for finite n >= 1 (a degree-0 polynomial, or n < 0, inf or NaN, has no x in it).
    nan_x, has_x = np.isnan(x), np.isfinite(n) & (n >= 1)
    assert np.isnan(got[nan_x & has_x]).all() and not np.isnan(got[nan_x & ~has_x]).any()
    got, expected = got[~nan_x], expected[~nan_x]
    # The recurrences round in the same order as PyTorch's, so they agree closely even where the
    # values are large or cancel.
    _assert_close(got, expected, 1e-12, atol=1e-12)
    # float32 rounds every step, so it overflows to NaN where PyTorch's float32 kernel does (degree 150
    # at 3 here, finite in float64); the values agree to float32 rounding, amplified by the degree.
    x32, n32 = x[:, ~np.isnan(_POLY_X)].astype(np.float32), n[:, ~np.isnan(_POLY_X)].astype(np.float32)
    got32 = getattr(fg.special, name)(fg.tensor(x32), fg.tensor(n32)).numpy()
    expected32 = getattr(torch.special, name)(torch.tensor(x32), torch.tensor(n32)).numpy()
    # (At degree 1500 PyTorch's float32 Laguerre overflows inside a step, before its division by k + 1,
    # a little before ours, which rounds whole steps.)
    upto = n32 <= 150
    np.testing.assert_array_equal(np.isnan(got32[upto]), np.isnan(expected32[upto]))
    low = np.isfinite(expected32) & (n32 <= 25)
    np.testing.assert_allclose(got32[low], expected32[low], rtol=1e-4, atol=1e-4)
    # Numbers on either side, and the float32 result of integer operands.
    f = getattr(fg.special, name)
    assert f(0.3, fg.tensor([4.0], dtype=fg.float64)).item() == pytest.approx(
        getattr(torch.special, name)(0.3, torch.tensor([4.0], dtype=torch.float64)).item(), rel=1e-14
    )
    assert f(fg.tensor([0.3], dtype=fg.float64), 5).item() == pytest.approx(
        getattr(torch.special, name)(torch.tensor([0.3], dtype=torch.float64), 5).item(), rel=1e-14
    )
    assert (
        f(fg.tensor([1, 2]), 3).dtype == fg.float32 and f(fg.tensor([1, 2]), fg.tensor(3)).dtype == fg.float32
    )
    assert f(fg.tensor([0.5]), 2).dtype == fg.float32


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_conventions_and_no_gradient(name):
    f = getattr(fg.special, name)
    x = fg.tensor([0.3, -0.7], dtype=fg.float64, requires_grad=True)
    out = f(x, 3)
    assert not out.requires_grad and out.grad_fn is None
    # n is truncated; negative, infinite or NaN n gives 0.
    assert f(x, 3.9).tolist() == out.tolist()
    assert f(x.detach(), fg.tensor([-1.0, math.inf], dtype=fg.float64)).tolist() == [0.0, 0.0]
    assert f(x.detach(), math.nan).tolist() == [0.0, 0.0]
    assert f(x.detach(), 0).tolist() == [1.0, 1.0]
    with pytest.raises(NotImplementedError, match=f"\"{name}_cpu\" not implemented for 'ComplexFloat'"):
        f(fg.tensor([1.0]).to(fg.complex64), 2)
    with pytest.raises(TypeError, match=f"special_{name}\\(\\) received an invalid combination of arguments"):
        f(0.5, 2)


def test_polynomials_closed_forms_and_recurrences():
    """Independent of PyTorch: Tₙ(cos θ) = cos(nθ), Uₙ(cos θ) = sin((n+1)θ)/sin θ, Vₙ and Wₙ in their
    half-angle forms, the shifted forms at (x + 1)/2, Hₙ(x) = 2ⁿ/² Heₙ(√2 x), Legendre's P₃ and
    Laguerre's L₃, and large degrees off [-1, 1] against cosh(n acosh x)."""
    theta = np.linspace(0.05, 3.1, 40)
    c = np.cos(theta)
    sp = fg.special

    def ev(name, x, n):
        return getattr(sp, name)(fg.tensor(x, dtype=fg.float64), n).numpy()

    for n in (3, 7, 10, 40):
        np.testing.assert_allclose(ev("chebyshev_polynomial_t", c, n), np.cos(n * theta), atol=1e-12)
        np.testing.assert_allclose(
            ev("chebyshev_polynomial_u", c, n),
            np.sin((n + 1) * theta) / np.sin(theta),
            rtol=1e-10,
            atol=1e-10,
        )
        np.testing.assert_allclose(
            ev("chebyshev_polynomial_v", c, n),
            np.cos((n + 0.5) * theta) / np.cos(theta / 2),
            rtol=1e-10,
            atol=1e-10,
        )
        np.testing.assert_allclose(
            ev("chebyshev_polynomial_w", c, n),
            np.sin((n + 0.5) * theta) / np.sin(theta / 2),
            rtol=1e-10,
            atol=1e-10,
        )
        for kind in "tuvw":
            np.testing.assert_allclose(
                ev(f"shifted_chebyshev_polynomial_{kind}", (c + 1) / 2, n),
                ev(f"chebyshev_polynomial_{kind}", c, n),
                rtol=1e-12,
                atol=1e-12,
            )
    x = np.linspace(-2.5, 2.5, 21)
    for n in (2, 5, 9):
        np.testing.assert_allclose(
            ev("hermite_polynomial_h", x, n),
            2 ** (n / 2) * ev("hermite_polynomial_he", np.sqrt(2) * x, n),
            rtol=1e-12,
            atol=1e-9,
        )
    np.testing.assert_allclose(
        ev("legendre_polynomial_p", x, 3), (5 * x**3 - 3 * x) / 2, rtol=1e-13, atol=1e-14
    )
    np.testing.assert_allclose(
        ev("laguerre_polynomial_l", x, 3), (-(x**3) + 9 * x**2 - 18 * x + 6) / 6, rtol=1e-13, atol=1e-14
    )
    y = np.array([1.01, 1.5, 2.0])
    np.testing.assert_allclose(ev("chebyshev_polynomial_t", y, 30), np.cosh(30 * np.arccosh(y)), rtol=1e-12)

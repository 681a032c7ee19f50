"""Complex inputs of the floating unary ops that PyTorch also defines over the
complex numbers: sqrt, log, exp2, expm1, log2, log10, log1p, reciprocal, rsqrt,
sin, cos, tan, sinh, cosh, tanh, asin, acos, atan, asinh, acosh and atanh, and
nan_to_num.

Forward values are compared with torch (when importable), NumPy (whose
branch cuts are C99's, as torch's) and, for the precision near 0, mpmath.
Gradients follow PyTorch's convention: for a real loss ``L(z)`` the gradient
of ``z = a + ib`` is ``dL/da + i dL/db``, which for a holomorphic ``f`` is
``grad * conj(f'(z))``; they are compared with that formula, with central
finite differences and with torch, and the second derivatives with
gradgradcheck.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import ferrograd as fg
from ferrograd.autograd import gradcheck, gradgradcheck

from helpers import has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is the reference")

# Domains, as (real low, real high, imaginary low, imaginary high); a pair of
# them is a union (a random half from each).
PLANE = (-2.0, 2.0, -2.0, 2.0)
# Away from 0 and from the cut of log and sqrt on the negative real axis.
RIGHT = (0.3, 2.0, -2.0, 2.0)
# 1 + z in the right half plane.
SHIFTED = (-0.7, 2.0, -2.0, 2.0)
# Away from the real axis: the cuts of asin, acos, atanh (|x| > 1) and acosh
# (x < 1), and the points +-1.
OFF_REAL = ((-2.0, 2.0, 0.2, 1.5), (-2.0, 2.0, -1.5, -0.2))
# Away from the imaginary axis: the cuts of atan and asinh (|y| > 1), and +-i.
OFF_IMAG = ((0.2, 1.5, -2.0, 2.0), (-1.5, -0.2, -2.0, 2.0))
# Away from the poles of tan (+-pi/2 on the real axis) and of tanh (+-i pi/2).
TAN_STRIP = (-1.2, 1.2, -2.0, 2.0)
TANH_STRIP = (-2.0, 2.0, -1.2, 1.2)


def _rsqrt(z):
    return 1 / np.sqrt(z)


# name -> (NumPy function, derivative, domain of the gradient checks).
OPS = {
    "sqrt": (np.sqrt, lambda z: 0.5 / np.sqrt(z), RIGHT),
    "log": (np.log, lambda z: 1 / z, RIGHT),
    "sin": (np.sin, np.cos, PLANE),
    "cos": (np.cos, lambda z: -np.sin(z), PLANE),
    "tan": (np.tan, lambda z: 1 / np.cos(z) ** 2, TAN_STRIP),
    "tanh": (np.tanh, lambda z: 1 / np.cosh(z) ** 2, TANH_STRIP),
    "exp2": (np.exp2, lambda z: np.log(2) * np.exp2(z), PLANE),
    "expm1": (np.expm1, np.exp, PLANE),
    "log2": (np.log2, lambda z: 1 / (z * np.log(2)), RIGHT),
    "log10": (np.log10, lambda z: 1 / (z * np.log(10)), RIGHT),
    "log1p": (np.log1p, lambda z: 1 / (1 + z), SHIFTED),
    "reciprocal": (np.reciprocal, lambda z: -1 / z**2, RIGHT),
    "rsqrt": (_rsqrt, lambda z: -0.5 * _rsqrt(z) ** 3, RIGHT),
    "sinh": (np.sinh, np.cosh, PLANE),
    "cosh": (np.cosh, np.sinh, PLANE),
    "asin": (np.arcsin, lambda z: 1 / np.sqrt(1 - z * z), OFF_REAL),
    "acos": (np.arccos, lambda z: -1 / np.sqrt(1 - z * z), OFF_REAL),
    "atan": (np.arctan, lambda z: 1 / (1 + z * z), OFF_IMAG),
    "asinh": (np.arcsinh, lambda z: 1 / np.sqrt(1 + z * z), OFF_IMAG),
    # Not 1 / sqrt(z^2 - 1), which has the wrong sign where Re z < 0.
    "acosh": (np.arccosh, lambda z: 1 / (np.sqrt(z + 1) * np.sqrt(z - 1)), OFF_REAL),
    "atanh": (np.arctanh, lambda z: 1 / (1 - z * z), OFF_REAL),
}
NAMES = sorted(OPS)


def sample(domain, n: int, seed: int) -> np.ndarray:
    """``n`` complex128 values drawn uniformly from ``domain``."""
    rng = np.random.default_rng(seed)
    if isinstance(domain[0], tuple):
        halves = [sample(d, n, seed + 1 + k) for k, d in enumerate(domain)]
        return np.where(rng.random(n) < 0.5, halves[0], halves[1])
    re_lo, re_hi, im_lo, im_hi = domain
    return rng.uniform(re_lo, re_hi, n) + 1j * rng.uniform(im_lo, im_hi, n)


def forward_points(seed: int) -> np.ndarray:
    """Values over the plane, small ones (where exp2, expm1, log1p, sinh,
    asin... must keep their relative precision) and moderately large ones."""
    rng = np.random.default_rng(seed)
    angles = rng.uniform(0, 2 * np.pi, 30)
    small = 10.0 ** rng.uniform(-12, -2, 10) * np.exp(1j * angles[:10])
    large = 10.0 ** rng.uniform(1, 1.4, 10) * np.exp(1j * angles[10:20])
    return np.concatenate([sample(PLANE, 30, seed), small, large])


def apply(T, name: str, z):
    return getattr(T, name)(z)


def values(t) -> np.ndarray:
    """A tensor's values (torch's lazily conjugated ones resolved)."""
    return t.detach().resolve_conj().numpy()


def wirtinger_fd(loss, z: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the real ``loss(z)``: ``dL/da + i dL/db`` per
    element ``a + ib`` of ``z``, the gradient PyTorch's ``backward`` computes."""
    g = np.zeros_like(z)
    flat, gflat = z.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        orig = flat[i]
        for step in (eps, 1j * eps):
            flat[i] = orig + step
            plus = loss(z)
            flat[i] = orig - step
            minus = loss(z)
            flat[i] = orig
            gflat[i] += (plus - minus) / (2 * eps) * (step / eps)
    return g


# --- Forward ----------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_forward_matches_numpy(name):
    z = forward_points(1)
    if name == "log1p":
        # NumPy's complex log1p is log(1 + z), which loses the digits of
        # small z: compared on the plane only (the small ones against mpmath
        # and torch below).
        z = z[:30]
    out = apply(fg, name, fg.tensor(z))
    assert out.dtype == fg.complex128
    with np.errstate(all="ignore"):
        expected = OPS[name][0](z)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-300)


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_forward_matches_torch(name):
    z = forward_points(2)
    out = apply(fg, name, fg.tensor(z)).numpy()
    expected = apply(torch, name, torch.from_numpy(z)).numpy()
    # torch's acos is pi/2 - asin(z), exact only to absolute rounding errors
    # (near 1, and in the real part far away): hence the atol.
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-15)


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_complex64_forward_matches_torch(name):
    z = forward_points(3).astype(np.complex64)
    out = apply(fg, name, fg.tensor(z))
    assert out.dtype == fg.complex64
    expected = apply(torch, name, torch.from_numpy(z)).numpy()
    assert expected.dtype == np.complex64
    np.testing.assert_allclose(out.numpy(), expected, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_complex64_is_complex128_rounded(name):
    # complex64 computes in float64 and rounds once: within one float32
    # rounding of the complex128 result.
    z = forward_points(4).astype(np.complex64)
    out = apply(fg, name, fg.tensor(z)).numpy()
    wide = apply(fg, name, fg.tensor(z.astype(np.complex128))).numpy()
    np.testing.assert_array_equal(out, wide.astype(np.complex64))


SMALL = np.array(
    [1e-10 + 1e-10j, -3e-9 + 2e-12j, 2e-13 - 5e-11j, -1e-6 - 1e-6j, 1e-4 + 3e-5j, -2e-300 + 1e-300j]
)


@pytest.mark.parametrize(
    "name",
    ["expm1", "log1p", "exp2", "sin", "tan", "sinh", "tanh", "asin", "asinh", "atan", "atanh", "reciprocal"],
)
def test_small_arguments_keep_relative_precision(name):
    # exp(z) - 1 or log(1 + z) taken literally would lose every digit of
    # these: the result must be right relative to its own modulus.
    mpmath = pytest.importorskip("mpmath")
    f = {
        "expm1": mpmath.expm1,
        "log1p": mpmath.log1p,
        "exp2": lambda z: mpmath.power(2, z),
        "sin": mpmath.sin,
        "tan": mpmath.tan,
        "sinh": mpmath.sinh,
        "tanh": mpmath.tanh,
        "asin": mpmath.asin,
        "asinh": mpmath.asinh,
        "atan": mpmath.atan,
        "atanh": mpmath.atanh,
        "reciprocal": lambda z: 1 / z,
    }[name]
    out = apply(fg, name, fg.tensor(SMALL)).numpy()
    # Enough bits for the cancellations inside mpmath's own formulas at 1e-300.
    with mpmath.workprec(1200):
        expected = np.array([complex(f(mpmath.mpc(v.real, v.imag))) for v in SMALL])
    np.testing.assert_array_less(np.abs(out - expected), 1e-14 * np.abs(expected))
    if has_torch:
        np.testing.assert_allclose(apply(torch, name, torch.from_numpy(SMALL)).numpy(), expected, rtol=1e-14)


def test_expm1_and_log1p_of_tiny_values():
    z = fg.tensor([1e-20 + 0j, 0j, -1e-15 + 1e-15j], dtype=fg.complex128)
    np.testing.assert_allclose(fg.expm1(z).numpy(), [1e-20, 0, -1e-15 + 1e-15j], rtol=1e-14)
    np.testing.assert_allclose(fg.log1p(z).numpy(), [1e-20, 0, -1e-15 + 1e-15j], rtol=1e-14)
    # And log1p is the inverse of expm1, on the circle |1 + z| = 1 too (the
    # image of the imaginary axis), where log1p's real part cancels.
    w = np.array([0.3 + 0.2j, -0.2 + 0.6j, 0.7j, -2.5j, 1e-8 - 2e-8j])
    np.testing.assert_allclose(fg.log1p(fg.expm1(fg.tensor(w))).numpy(), w, rtol=1e-14, atol=1e-16)


def test_acos_keeps_precision_near_one():
    # torch's pi/2 - asin(z) keeps only absolute precision here.
    mpmath = pytest.importorskip("mpmath")
    z = np.array([1 + 1e-12j, 1 - 1e-10 + 1e-13j, 0.999999 - 1e-9j])
    out = fg.acos(fg.tensor(z)).numpy()
    with mpmath.workprec(300):
        expected = np.array([complex(mpmath.acos(mpmath.mpc(v.real, v.imag))) for v in z])
    np.testing.assert_allclose(out.real, expected.real, rtol=1e-14)
    np.testing.assert_allclose(out.imag, expected.imag, rtol=1e-14)


def test_log_keeps_precision_near_the_unit_circle():
    # log|z| = log(1 + (|z|^2 - 1)) / 2 cancels when |z| is near 1: the
    # real part must stay right relative to itself.
    mpmath = pytest.importorskip("mpmath")
    z = np.array([1 + 1e-10j, 1e-10 + 1j, np.exp(1e-9j) * (1 + 3e-13), 0.6 + 0.8j, -0.6 - 0.8000000001j])
    with mpmath.workprec(300):
        expected = np.array([complex(mpmath.log(mpmath.mpc(v.real, v.imag))) for v in z])
    for dtype in (fg.complex128, fg.complex64):
        out = fg.log(fg.tensor(z, dtype=dtype)).numpy()
        want = expected if dtype == fg.complex128 else _rounded_log(z.astype(np.complex64), mpmath)
        np.testing.assert_allclose(out.real, want.real, rtol=1e-14 if dtype == fg.complex128 else 1e-6)
        np.testing.assert_allclose(out.imag, want.imag, rtol=1e-15 if dtype == fg.complex128 else 1e-7)


def _rounded_log(z64, mpmath):
    """The log of complex64 values, exact, rounded to complex64."""
    with mpmath.workprec(300):
        exact = [complex(mpmath.log(mpmath.mpc(float(v.real), float(v.imag)))) for v in z64]
    return np.array(exact).astype(np.complex64)


def test_tanh_and_tan_far_from_the_origin():
    # cosh^2 and sinh^2 overflow past |x| = 355, while tanh is 1 + O(e^(-2|x|)) i
    # there: the imaginary part keeps its size and sign (sin 2y).
    mpmath = pytest.importorskip("mpmath")
    z = np.array([300 + 1j, -300 + 1j, 30 + 2j, -25 - 3j, 20 + 1e10j, 3 - 2j])
    out = fg.tanh(fg.tensor(z)).numpy()
    with mpmath.workprec(200):
        expected = np.array([complex(mpmath.tanh(mpmath.mpc(v.real, v.imag))) for v in z])
    np.testing.assert_allclose(out.real, expected.real, rtol=1e-15)
    np.testing.assert_allclose(out.imag, expected.imag, rtol=1e-13, atol=0)
    # Where e^(-2|x|) underflows: +-1 and a zero with the sign of sin 2y.
    far = np.array([400 + 1j, -400 + 2j, 1e300 - 1j])
    np.testing.assert_array_equal(fg.tanh(fg.tensor(far)).numpy(), [1 + 0j, -1 + 0j, 1 + 0j])
    np.testing.assert_array_equal(np.signbit(fg.tanh(fg.tensor(far)).numpy().imag), [False, True, True])
    # tan(iz) = i tanh(z).
    np.testing.assert_allclose(fg.tan(fg.tensor(1j * z)).numpy(), 1j * out, rtol=1e-13, atol=0)


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_special_values_and_branch_cuts_match_torch(name):
    # Zeros of either sign (which pick the side of a branch cut), the branch
    # points, infinities and NaNs: C99's values, as torch's std::complex ones.
    inf, nan = float("inf"), float("nan")
    parts = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, inf, -inf, nan]
    z = np.array([complex(a, b) for a, b in itertools.product(parts, parts)])
    if name == "log1p":
        # torch gives NaN for an infinite part beside a NaN; C99's log gives
        # an infinite real part, as here.
        keep = ~(np.isinf(z.real) & np.isnan(z.imag)) & ~(np.isnan(z.real) & np.isinf(z.imag))
        z = z[keep]
    with np.errstate(all="ignore"):
        out = apply(fg, name, fg.tensor(z)).numpy()
        expected = apply(torch, name, torch.from_numpy(z)).numpy()
    for part in (np.real, np.imag):
        got, want = part(out), part(expected)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        finite = ~np.isnan(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-15, atol=0)
        zero = want == 0
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]), err_msg=f"{z[zero]}")


def test_integer_and_real_inputs_are_unchanged():
    # Real dtypes keep their kernels; the complex ones do not leak into them.
    x = np.array([0.25, 0.5, 0.75, 1.5])
    for name in NAMES:
        with np.errstate(invalid="ignore", divide="ignore"):  # acosh, asin, acos, atanh: NaN outside [-1, 1]
            expected = OPS[name][0](x)
        np.testing.assert_allclose(apply(fg, name, fg.tensor(x)).numpy(), expected, rtol=1e-14)
    assert fg.sinh(fg.tensor([1, 2])).dtype == fg.float32


@pytest.mark.parametrize("name", ["frac", "erf", "erfc"])
def test_ops_without_complex_kernels_still_raise(name):
    with pytest.raises(NotImplementedError, match="ComplexDouble"):
        getattr(fg, name)(fg.tensor([1 + 1j], dtype=fg.complex128))


# --- Gradients --------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_gradient_is_conjugate_derivative(name):
    _, derivative, domain = OPS[name]
    z = sample(domain, 8, 10)
    w = sample(PLANE, 8, 11)
    t = fg.tensor(z, requires_grad=True)
    (apply(fg, name, t) * fg.tensor(w)).real.sum().backward()
    assert t.grad.dtype == fg.complex128
    # L = Re(sum(f(z) w)): dL/da + i dL/db = conj(f'(z) w).
    np.testing.assert_allclose(t.grad.numpy(), np.conj(derivative(z) * w), rtol=1e-10, atol=1e-12)

    def loss(zz):
        with fg.no_grad():
            return float(np.sum(np.real(apply(fg, name, fg.tensor(zz)).numpy() * w)))

    np.testing.assert_allclose(t.grad.numpy(), wirtinger_fd(loss, z.copy()), rtol=1e-5, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_gradient_matches_torch(name):
    domain = OPS[name][2]
    z, w, v = sample(domain, 6, 20), sample(PLANE, 6, 21), sample(PLANE, 6, 22)
    grads = []
    for T in (fg, torch):
        t = T.tensor(z, requires_grad=True)
        out = apply(T, name, t)
        # A complex cotangent, and a real loss of the output.
        out.backward(T.tensor(v), retain_graph=True)
        g1 = values(t.grad)
        t.grad = None
        (out * T.tensor(w)).real.sum().backward()
        grads.append((g1, values(t.grad)))
    for ours, theirs in zip(grads[0], grads[1]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_second_derivative_matches_torch(name):
    # The backward formulas are made of differentiable ops: the gradient of
    # a real function of the gradient.
    domain = OPS[name][2]
    z, w, v = sample(domain, 5, 30), sample(PLANE, 5, 31), sample(PLANE, 5, 32)
    results = []
    for T in (fg, torch):
        t = T.tensor(z, requires_grad=True)
        (g,) = T.autograd.grad((apply(T, name, t) * T.tensor(w)).real.sum(), t, create_graph=True)
        (g * T.tensor(v)).real.sum().backward()
        results.append((values(g), values(t.grad)))
    for ours, theirs in zip(results[0], results[1]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_gradcheck_and_gradgradcheck(name):
    z = sample(OPS[name][2], 4, 40).reshape(2, 2)
    fn = getattr(fg, name)
    assert gradcheck(fn, (fg.tensor(z, requires_grad=True),))
    assert gradgradcheck(fn, (fg.tensor(z, requires_grad=True),))


def test_acosh_gradient_in_the_left_half_plane():
    # 1 / sqrt(z^2 - 1) would flip the sign here.
    z = np.array([-2 + 0.5j, -0.5 - 0.3j, -1.5 - 1j])
    t = fg.tensor(z, requires_grad=True)
    fg.acosh(t).backward(fg.ones_like(t))
    np.testing.assert_allclose(t.grad.numpy(), np.conj(1 / (np.sqrt(z + 1) * np.sqrt(z - 1))), rtol=1e-12)
    assert not np.allclose(t.grad.numpy(), np.conj(1 / np.sqrt(z * z - 1)))


def test_real_input_through_complex_op_has_real_gradient():
    # R -> C -> R: a float64 leaf gets a float64 gradient.
    x = fg.tensor([0.3, -0.7], dtype=fg.float64, requires_grad=True)
    fg.asinh(x * (1 + 1j)).abs().sum().backward()
    assert x.grad.dtype == fg.float64

    def loss(xx):
        return float(np.sum(np.abs(np.arcsinh(xx * (1 + 1j)))))

    x0, eps = np.array([0.3, -0.7]), 1e-6
    fd = [(loss(x0 + eps * e) - loss(x0 - eps * e)) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-6)


@pytest.mark.parametrize("name", ["sinh", "log1p", "rsqrt", "atanh"])
def test_in_place_variants(name):
    z = sample(OPS[name][2], 6, 50)
    t = fg.tensor(z)
    getattr(t, name + "_")()
    np.testing.assert_array_equal(t.numpy(), apply(fg, name, fg.tensor(z)).numpy())


# --- nan_to_num, isnan, isfinite, isinf --------------------------------------

INF, NAN = float("inf"), float("nan")
NONFINITE = [
    complex(INF, 1),
    complex(1, -INF),
    complex(NAN, 2),
    complex(3, NAN),
    complex(-INF, NAN),
    complex(NAN, INF),
    1 - 2j,
]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"nan": 7.0}, {"nan": -1.5, "posinf": 100.0, "neginf": -200.0}, {"posinf": 1e300, "neginf": -1e300}],
)
def test_nan_to_num_replaces_each_part(dtype, kwargs):
    real = np.float32 if dtype == "complex64" else np.float64
    info = np.finfo(real)
    z = np.array(NONFINITE, dtype=dtype)
    out = fg.nan_to_num(fg.tensor(z), **kwargs)
    assert out.dtype == getattr(fg, dtype)

    def part(x):
        x = np.where(np.isnan(x), real(kwargs.get("nan", 0.0)), x)
        x = np.where(x == INF, real(kwargs.get("posinf", info.max)), x)
        return np.where(x == -INF, real(kwargs.get("neginf", info.min)), x)

    expected = np.empty_like(z)
    with np.errstate(over="ignore"):  # posinf=1e300 in float32
        expected.real, expected.imag = part(z.real), part(z.imag)
    np.testing.assert_array_equal(out.numpy(), expected)
    if has_torch:
        np.testing.assert_array_equal(torch.nan_to_num(torch.from_numpy(z), **kwargs).numpy(), expected)
    t = fg.tensor(z)
    t.nan_to_num_(**kwargs)
    np.testing.assert_array_equal(t.numpy(), expected)


def test_nan_to_num_of_complex_is_not_differentiable():
    z = fg.tensor(NONFINITE, dtype=fg.complex128, requires_grad=True)
    message = "nan_to_num does not support automatic differentiation for outputs with complex dtype."
    with pytest.raises(RuntimeError, match=message):
        fg.nan_to_num(z)
    with fg.no_grad():
        assert fg.nan_to_num(z).isfinite().all()
    if has_torch:
        with pytest.raises(RuntimeError, match=message):
            torch.nan_to_num(torch.tensor(NONFINITE, dtype=torch.complex128, requires_grad=True))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_nan_and_infinity_predicates_look_at_both_parts(dtype):
    z = np.array(NONFINITE, dtype=dtype)
    t = fg.tensor(z)
    np.testing.assert_array_equal(fg.isnan(t).numpy(), np.isnan(z))
    np.testing.assert_array_equal(fg.isinf(t).numpy(), np.isinf(z))
    np.testing.assert_array_equal(fg.isfinite(t).numpy(), np.isfinite(z))
    if has_torch:
        tz = torch.from_numpy(z)
        np.testing.assert_array_equal(torch.isnan(tz).numpy(), np.isnan(z))
        np.testing.assert_array_equal(torch.isinf(tz).numpy(), np.isinf(z))
        np.testing.assert_array_equal(torch.isfinite(tz).numpy(), np.isfinite(z))

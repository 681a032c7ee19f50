"""The second batch of ``ferrograd.distributions`` (Cauchy, Chi2,
ContinuousBernoulli, FisherSnedecor, Gumbel, HalfCauchy, HalfNormal,
Kumaraswamy, LogisticNormal, Multinomial, NegativeBinomial, Pareto, the relaxed
Bernoulli/categorical pairs, StudentT, VonMises, Weibull) and the
``StickBreakingTransform``: values and float64 gradients against torch and
finite differences, KL divergences, sample shapes and statistics under fixed
seeds, reparameterized samples, ``expand`` and argument validation."""

import math

import numpy as np
import pytest

import ferrograd as fg
from ferrograd import distributions as fd
from ferrograd.distributions import constraints, transforms

from helpers import check_op, has_torch, torch
from test_distributions import CONC, LOC, POS_V, REAL_V, SCALE, UNIT_V, D, check_samples, f64, t64


@pytest.fixture(autouse=True)
def _restore_validation():
    saved = fd.Distribution._validate_args
    yield
    fd.Distribution.set_default_validate_args(saved)


def needs_torch():
    return pytest.importorskip("torch")


BIG = np.array([[5.0, 7.5, 9.0], [12.0, 6.0, 30.0]])  # degrees of freedom with finite variance
PROBS = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
LOGITS = np.array([[0.4, -1.0, 2.0], [0.0, 0.3, -0.7]])
CB_PROBS = np.array([[0.2, 0.4995, 0.5], [0.9, 0.03, 0.5007]])  # includes the Taylor region
SIMPLEX4 = np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.4, 0.1]])
SIMPLEX3 = np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]])

# name -> (builder(T, *params), parameter arrays, value in the support)
CONTINUOUS = {
    "Cauchy": (lambda T, a, b: D(T).Cauchy(a, b), (LOC, SCALE), REAL_V),
    "Chi2": (lambda T, df: D(T).Chi2(df), (2 * CONC,), POS_V),
    "ContinuousBernoulli": (lambda T, p: D(T).ContinuousBernoulli(p), (CB_PROBS,), UNIT_V),
    "ContinuousBernoulliLogits": (lambda T, x: D(T).ContinuousBernoulli(logits=x), (LOGITS,), UNIT_V),
    "FisherSnedecor": (lambda T, a, b: D(T).FisherSnedecor(a, b), (2 * CONC, BIG), POS_V),
    "Gumbel": (lambda T, a, b: D(T).Gumbel(a, b), (LOC, SCALE), REAL_V),
    "HalfCauchy": (lambda T, s: D(T).HalfCauchy(s), (SCALE,), POS_V),
    "HalfNormal": (lambda T, s: D(T).HalfNormal(s), (SCALE,), POS_V),
    "Kumaraswamy": (lambda T, a, b: D(T).Kumaraswamy(a, b), (CONC, SCALE + 0.5), UNIT_V),
    "Pareto": (lambda T, s, a: D(T).Pareto(s, a), (SCALE, BIG / 2), SCALE + POS_V),
    "StudentT": (lambda T, df, a, b: D(T).StudentT(df, a, b), (CONC, LOC, SCALE), REAL_V),
    "VonMises": (
        lambda T, a, k: D(T).VonMises(a, k),
        (LOC, np.array([[0.5, 3.0, 4.0], [8.0, 0.05, 3.74]])),
        REAL_V,
    ),
    "Weibull": (lambda T, s, k: D(T).Weibull(s, k), (SCALE, CONC), POS_V),
    "RelaxedBernoulli": (lambda T, t, p: D(T).RelaxedBernoulli(t, p), (SCALE, UNIT_V), UNIT_V[::-1].copy()),
    "RelaxedBernoulliLogits": (
        lambda T, t, x: D(T).RelaxedBernoulli(t, logits=x),
        (SCALE, LOGITS),
        UNIT_V[::-1].copy(),
    ),
    "LogitRelaxedBernoulli": (
        lambda T, t, p: D(T).relaxed_bernoulli.LogitRelaxedBernoulli(t, p),
        (SCALE, UNIT_V),
        REAL_V,
    ),
}

# the entropy has a closed form (others: torch raises NotImplementedError too)
WITH_ENTROPY = [
    "Cauchy",
    "Chi2",
    "ContinuousBernoulli",
    "ContinuousBernoulliLogits",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Kumaraswamy",
    "Pareto",
    "StudentT",
    "Weibull",
]
# mean and variance are finite for these parameters
FINITE_MOMENTS = [
    "Chi2",
    "ContinuousBernoulli",
    "ContinuousBernoulliLogits",
    "FisherSnedecor",
    "Gumbel",
    "HalfNormal",
    "Kumaraswamy",
    "Pareto",
    "VonMises",
    "Weibull",
]


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_log_prob_matches_torch_with_gradients(name):
    needs_torch()
    build, params, value = CONTINUOUS[name]
    check_op(lambda T, *xs: build(T, *xs[:-1]).log_prob(xs[-1]), *params, value)


@pytest.mark.parametrize("name", WITH_ENTROPY)
def test_entropy_matches_torch_with_gradients(name):
    needs_torch()
    build, params, _ = CONTINUOUS[name]
    check_op(lambda T, *xs: build(T, *xs).entropy(), *params)


@pytest.mark.parametrize("name", FINITE_MOMENTS)
@pytest.mark.parametrize("attr", ["mean", "variance", "stddev"])
def test_moments_match_torch_with_gradients(name, attr):
    needs_torch()
    build, params, _ = CONTINUOUS[name]
    check_op(lambda T, *xs: getattr(build(T, *xs), attr), *params)


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_all_moments_and_mode_match_torch_including_nan_and_inf(name):
    """Undefined moments are nan and divergent ones inf, exactly where torch has them."""
    needs_torch()
    build, params, _ = CONTINUOUS[name]
    if name == "StudentT":  # cover df <= 1, 1 < df <= 2 and df > 2
        params = (np.array([[0.5, 1.0, 1.5], [2.0, 2.5, 9.0]]),) + params[1:]
    if name == "FisherSnedecor":  # df2 <= 2, 2 < df2 <= 4 and df2 > 4; df1 <= 2 for the mode
        params = (np.array([[1.0, 2.0, 3.0], [4.0, 6.0, 8.0]]), np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 9.0]]))
    if name == "Pareto":  # alpha <= 1, <= 2 and > 2
        params = (SCALE, np.array([[0.5, 1.0, 1.5], [2.0, 2.5, 9.0]]))
    fdist = build(fg, *map(f64, params))
    tdist = build(torch, *map(t64, params))
    attrs = ["mean", "variance", "stddev", "mode"]
    if name == "Kumaraswamy":
        attrs.remove("mode")  # torch's mode is nan everywhere, see test_kumaraswamy_mode_is_the_argmax
    for attr in attrs:
        try:
            want = getattr(tdist, attr)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                getattr(fdist, attr)
            continue
        got = getattr(fdist, attr)
        assert tuple(got.shape) == tuple(want.shape), (name, attr)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-7, err_msg=attr)


def test_kumaraswamy_mode_is_the_argmax():
    """The closed-form mode against a grid search (torch returns nan here)."""
    a = np.array([2.0, 3.0, 1.5, 1.0, 0.5, 1.0])
    b = np.array([3.0, 2.0, 5.0, 4.0, 2.0, 1.0])
    d = fd.Kumaraswamy(f64(a), f64(b))
    mode = d.mode.numpy()
    assert np.isnan(mode[4:]).all()  # a < 1: unbounded density; a = b = 1: uniform
    grid = np.linspace(1e-4, 1 - 1e-4, 20001)
    density = d.log_prob(f64(np.repeat(grid[:, None], 6, 1))).numpy()
    np.testing.assert_allclose(mode[:3], grid[density.argmax(0)][:3], atol=1e-4)
    np.testing.assert_allclose(mode[3], 0.0, atol=1e-12)  # a = 1: decreasing density


CDF_CASES = ["Cauchy", "Gumbel", "HalfCauchy", "HalfNormal", "Pareto", "Weibull", "Kumaraswamy"]


@pytest.mark.parametrize("name", CDF_CASES + ["ContinuousBernoulli", "ContinuousBernoulliLogits"])
def test_cdf_and_icdf_match_torch(name):
    needs_torch()
    build, params, value = CONTINUOUS[name]
    check_op(lambda T, *xs: build(T, *xs[:-1]).cdf(xs[-1]), *params, value)
    probs = np.array([[0.1, 0.55, 0.93], [0.3, 0.75, 0.02]])
    check_op(lambda T, *xs: build(T, *xs[:-1]).icdf(xs[-1]), *params, probs)
    d = build(fg, *map(f64, params))
    np.testing.assert_allclose(d.cdf(d.icdf(f64(probs))).numpy(), probs, rtol=1e-9, atol=1e-12)


def test_continuous_bernoulli_density_integrates_to_one_and_cdf_is_its_integral():
    probs = np.array([0.02, 0.3, 0.4995, 0.5, 0.5009, 0.8, 0.999])
    d = fd.ContinuousBernoulli(f64(probs))
    x = np.linspace(0.0, 1.0, 20001)
    dens = d.log_prob(f64(np.repeat(x[:, None], len(probs), 1))).exp().numpy()
    total = np.trapezoid(dens, x, axis=0)
    np.testing.assert_allclose(total, 1.0, rtol=1e-6)
    mean = np.trapezoid(dens * x[:, None], x, axis=0)
    np.testing.assert_allclose(d.mean.numpy(), mean, rtol=1e-6)
    var = np.trapezoid(dens * (x[:, None] - mean) ** 2, x, axis=0)
    np.testing.assert_allclose(d.variance.numpy(), var, rtol=1e-5)
    cdf = d.cdf(f64(np.full(len(probs), 0.3))).numpy()
    mask = x <= 0.3 + 1e-9
    want = np.trapezoid(dens[mask], x[mask], axis=0)
    stable = np.abs(probs - 0.5) > 0.001  # inside lims the cdf is the uniform one, as in torch
    np.testing.assert_allclose(cdf[stable], want[stable], rtol=1e-5)
    np.testing.assert_allclose(cdf[~stable], want[~stable], atol=5e-4)
    np.testing.assert_array_equal(d.cdf(f64(np.zeros(len(probs)))).numpy(), 0.0)
    np.testing.assert_array_equal(d.cdf(f64(np.ones(len(probs)))).numpy(), 1.0)


# ----------------------------------------------------------------------------- vector-valued and discrete


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_multinomial_matches_torch(param):
    needs_torch()
    arr = PROBS if param == "probs" else LOGITS
    counts = np.array([[[1.0, 2.0, 3.0], [6.0, 0.0, 0.0]], [[0.0, 0.0, 6.0], [2.0, 2.0, 2.0]]])

    def build(T, p):
        return T.distributions.Multinomial(6, **{param: p})

    check_op(lambda T, p: build(T, p).log_prob(T.tensor(counts)), arr)
    check_op(lambda T, p: build(T, p).entropy(), arr)
    check_op(lambda T, p: build(T, p).mean, arr)
    check_op(lambda T, p: build(T, p).variance, arr)
    d = build(fg, f64(arr))
    assert d.batch_shape == (2,) and d.event_shape == (3,)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_negative_binomial_matches_torch(param):
    needs_torch()
    arr = UNIT_V if param == "probs" else LOGITS
    counts = np.array([[0.0, 3.0, 1.0], [12.0, 0.0, 5.0]])

    def build(T, n, p):
        return T.distributions.NegativeBinomial(n, **{param: p})

    check_op(lambda T, n, p: build(T, n, p).log_prob(T.tensor(counts)), CONC, arr)
    for attr in ["mean", "variance", "mode"]:
        check_op(lambda T, n, p, attr=attr: getattr(build(T, n, p), attr), CONC, arr, grad=attr != "mode")
    # total_count == 0 is a point mass at 0
    d = fd.NegativeBinomial(f64([0.0, 0.0]), f64([0.4, 0.4]))
    np.testing.assert_allclose(d.log_prob(f64([0.0, 2.0])).numpy(), [0.0, -math.inf])


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_relaxed_one_hot_categorical_matches_torch(param):
    needs_torch()
    arr = PROBS if param == "probs" else LOGITS
    temp = np.array(0.7)  # a scalar temperature: it scales every event coordinate

    def build(T, t, p):
        return T.distributions.RelaxedOneHotCategorical(t, **{param: p})

    check_op(lambda T, t, p, v: build(T, t, p).log_prob(v / v.sum(-1, keepdim=True)), temp, arr, SIMPLEX3)

    def exp_relaxed(T, t, p, v):
        return T.distributions.relaxed_categorical.ExpRelaxedCategorical(t, **{param: p}).log_prob(v)

    log_simplex = np.log(SIMPLEX3)
    check_op(exp_relaxed, temp, arr, log_simplex)


def test_logistic_normal_matches_torch():
    needs_torch()

    def build(T, a, b):
        return T.distributions.LogisticNormal(a, b)

    check_op(lambda T, a, b, v: build(T, a, b).log_prob(v / v.sum(-1, keepdim=True)), LOC, SCALE, SIMPLEX4)
    d = build(fg, f64(LOC), f64(SCALE))
    assert d.batch_shape == (2,) and d.event_shape == (4,)
    scalar = build(fg, f64(0.5), f64(1.0))  # a scalar Normal becomes a point on the 2-simplex
    assert scalar.event_shape == (2,) and tuple(scalar.sample((3,)).shape) == (3, 2)
    np.testing.assert_allclose(scalar.loc.numpy(), [0.5])


def test_stick_breaking_transform_matches_torch():
    needs_torch()
    t = transforms.StickBreakingTransform()
    assert t.domain.event_dim == 1 and t.codomain is constraints.simplex
    assert t == transforms.StickBreakingTransform() and t.bijective
    assert t.forward_shape((2, 3)) == (2, 4) and t.inverse_shape((2, 4)) == (2, 3)
    check_op(lambda T, x: T.distributions.transforms.StickBreakingTransform()(x), REAL_V)
    check_op(lambda T, y: T.distributions.transforms.StickBreakingTransform().inv(y), SIMPLEX4)

    def ladj(T, x):
        tr = T.distributions.transforms.StickBreakingTransform()
        return tr.log_abs_det_jacobian(x, tr(x))

    check_op(ladj, REAL_V)
    y = t(f64(REAL_V))
    assert bool(constraints.simplex.check(y).all())
    np.testing.assert_allclose(t.inv(y).numpy(), REAL_V, rtol=1e-10, atol=1e-12)
    # x = 0 maps to the uniform point of the simplex
    np.testing.assert_allclose(t(f64(np.zeros(3))).numpy(), 0.25, rtol=1e-12)
    with pytest.raises(ValueError, match="Too few dimensions"):
        t.forward_shape(())


def test_stick_breaking_log_det_is_the_jacobian_of_the_first_k_coordinates():
    t = transforms.StickBreakingTransform()
    x0 = np.array([0.3, -0.8, 1.1])
    eps = 1e-6
    jac = np.zeros((3, 3))
    for j in range(3):
        dx = np.zeros(3)
        dx[j] = eps
        jac[:, j] = (t(f64(x0 + dx)).numpy()[:3] - t(f64(x0 - dx)).numpy()[:3]) / (2 * eps)
    want = np.log(abs(np.linalg.det(jac)))
    np.testing.assert_allclose(t.log_abs_det_jacobian(f64(x0), t(f64(x0))).item(), want, rtol=1e-7)


# ----------------------------------------------------------------------------- KL divergences

KL_SAME = {
    "Cauchy": (lambda T, a, b: D(T).Cauchy(a, b), (LOC, SCALE)),
    "Gumbel": (lambda T, a, b: D(T).Gumbel(a, b), (LOC, SCALE)),
    "HalfNormal": (lambda T, s: D(T).HalfNormal(s), (SCALE,)),
    "HalfCauchy": (lambda T, s: D(T).HalfCauchy(s), (SCALE,)),
    # q's scale stays below p's, else the KL is infinite
    "Pareto": (
        lambda T, s, a: D(T).Pareto(s, a),
        (SCALE + 0.3, CONC),
        (SCALE.min() * np.ones((2, 3)), CONC[::-1]),
    ),
    "ContinuousBernoulli": (lambda T, p: D(T).ContinuousBernoulli(p), (CB_PROBS,)),
    "LogisticNormal": (lambda T, a, b: D(T).LogisticNormal(a, b), (LOC, SCALE)),
}


@pytest.mark.parametrize("name", sorted(KL_SAME))
def test_kl_same_family_matches_torch(name):
    needs_torch()
    build, params, *explicit = KL_SAME[name]
    n = len(params)
    shifted = list(explicit[0]) if explicit else [np.flip(p, -1).copy() for p in params]

    def kl(T, *xs):
        return T.distributions.kl_divergence(build(T, *xs[:n]), build(T, *xs[n:]))

    out = check_op(kl, *params, *shifted)
    assert np.isfinite(out.detach().numpy()).all()
    assert (out.detach().numpy() >= -1e-12).all()
    same = fd.kl_divergence(build(fg, *map(f64, params)), build(fg, *map(f64, params)))
    np.testing.assert_allclose(same.numpy(), 0.0, atol=1e-12)


def test_kl_pareto_with_larger_q_scale_is_infinite():
    p = fd.Pareto(f64([1.0, 2.0]), f64([3.0, 3.0]))
    q = fd.Pareto(f64([1.5, 1.5]), f64([2.0, 2.0]))
    out = fd.kl_divergence(p, q).numpy()
    assert math.isinf(out[0]) and np.isfinite(out[1])


U_LO, U_HI = np.array([0.1, 0.6, 0.05]), np.array([0.9, 0.99, 0.4])  # inside [0, 1] and above Pareto scales
PAR_S, PAR_A = np.array([0.05, 0.5, 0.01]), np.array([2.5, 3.0, 6.0])
CB_P = np.array([0.3, 0.8, 0.4999])
KL_CROSS = {
    ("Beta", "ContinuousBernoulli"): (
        lambda T, a, b: D(T).Beta(a, b),
        (CONC[0], SCALE[0] + 0.5),
        lambda T, p: D(T).ContinuousBernoulli(p),
        (CB_P,),
    ),
    ("ContinuousBernoulli", "Exponential"): (
        lambda T, p: D(T).ContinuousBernoulli(p),
        (CB_P,),
        lambda T, r: D(T).Exponential(r),
        (SCALE[0],),
    ),
    ("ContinuousBernoulli", "Normal"): (
        lambda T, p: D(T).ContinuousBernoulli(p),
        (CB_P,),
        lambda T, a, b: D(T).Normal(a, b),
        (LOC[0], SCALE[0]),
    ),
    ("ContinuousBernoulli", "Uniform"): (
        lambda T, p: D(T).ContinuousBernoulli(p),
        (CB_P,),
        lambda T, lo, hi: D(T).Uniform(lo, hi),
        (np.array([-0.5, -0.01, -1.0]), np.array([1.5, 1.2, 2.0])),
    ),
    ("Uniform", "ContinuousBernoulli"): (
        lambda T, lo, hi: D(T).Uniform(lo, hi),
        (U_LO, U_HI),
        lambda T, p: D(T).ContinuousBernoulli(p),
        (CB_P,),
    ),
    ("Exponential", "Gumbel"): (
        lambda T, r: D(T).Exponential(r),
        (SCALE[0],),
        lambda T, a, b: D(T).Gumbel(a, b),
        (LOC[0], SCALE[1]),
    ),
    ("Gamma", "Gumbel"): (
        lambda T, a, b: D(T).Gamma(a, b),
        (CONC[0], SCALE[1]),
        lambda T, a, b: D(T).Gumbel(a, b),
        (LOC[1], SCALE[0]),
    ),
    ("Normal", "Gumbel"): (
        lambda T, a, b: D(T).Normal(a, b),
        (LOC[0], SCALE[0]),
        lambda T, a, b: D(T).Gumbel(a, b),
        (LOC[1], SCALE[1]),
    ),
    ("Uniform", "Gumbel"): (
        lambda T, lo, hi: D(T).Uniform(lo, hi),
        (LOC[0] - 1, LOC[0] + SCALE[0]),
        lambda T, a, b: D(T).Gumbel(a, b),
        (LOC[1], SCALE[1]),
    ),
    ("Gumbel", "Normal"): (
        lambda T, a, b: D(T).Gumbel(a, b),
        (LOC[0], SCALE[0]),
        lambda T, a, b: D(T).Normal(a, b),
        (LOC[1], SCALE[1]),
    ),
    ("Pareto", "Exponential"): (
        lambda T, s, a: D(T).Pareto(s, a),
        (PAR_S, PAR_A),
        lambda T, r: D(T).Exponential(r),
        (SCALE[0],),
    ),
    ("Pareto", "Gamma"): (
        lambda T, s, a: D(T).Pareto(s, a),
        (PAR_S, PAR_A),
        lambda T, a, b: D(T).Gamma(a, b),
        (CONC[0], SCALE[1]),
    ),
    ("Pareto", "Normal"): (
        lambda T, s, a: D(T).Pareto(s, a),
        (PAR_S, PAR_A),
        lambda T, a, b: D(T).Normal(a, b),
        (LOC[0], SCALE[0]),
    ),
    ("Uniform", "Pareto"): (
        lambda T, lo, hi: D(T).Uniform(lo, hi),
        (U_LO, U_HI + 1),
        lambda T, s, a: D(T).Pareto(s, a),
        (PAR_S, PAR_A),
    ),
}


@pytest.mark.parametrize("pair", sorted(KL_CROSS), ids=lambda pair: "-".join(pair))
def test_kl_cross_family_matches_torch(pair):
    needs_torch()
    build_p, params_p, build_q, params_q = KL_CROSS[pair]
    n = len(params_p)

    def kl(T, *xs):
        return T.distributions.kl_divergence(build_p(T, *xs[:n]), build_q(T, *xs[n:]))

    out = check_op(kl, *params_p, *params_q)
    assert np.isfinite(out.detach().numpy()).all()
    assert (out.detach().numpy() > 0).all()


def test_kl_cross_family_against_monte_carlo():
    """Independent of torch: KL(p || q) = E_p[log p - log q] from 200k samples."""
    fg.manual_seed(17)
    n = 200_000
    for pair in [("Normal", "Gumbel"), ("Gamma", "Gumbel"), ("Pareto", "Gamma"), ("Uniform", "Pareto")]:
        build_p, params_p, build_q, params_q = KL_CROSS[pair]
        p, q = build_p(fg, *map(f64, params_p)), build_q(fg, *map(f64, params_q))
        x = p.sample((n,))
        terms = (p.log_prob(x) - q.log_prob(x)).numpy()
        se = terms.std(0) / math.sqrt(n)
        np.testing.assert_allclose(
            fd.kl_divergence(p, q).numpy(), terms.mean(0), atol=5 * se.max(), err_msg=pair
        )


INFINITE_PAIRS = [
    (lambda: fd.Beta(f64(2.0), f64(3.0)), lambda: fd.Pareto(f64(0.5), f64(2.0))),
    (lambda: fd.ContinuousBernoulli(f64(0.3)), lambda: fd.Pareto(f64(0.5), f64(2.0))),
    (lambda: fd.Exponential(f64(1.0)), lambda: fd.ContinuousBernoulli(f64(0.3))),
    (lambda: fd.Gamma(f64(2.0), f64(1.0)), lambda: fd.Pareto(f64(0.5), f64(2.0))),
    (lambda: fd.Gumbel(f64(0.0), f64(1.0)), lambda: fd.Exponential(f64(1.0))),
    (lambda: fd.Gumbel(f64(0.0), f64(1.0)), lambda: fd.Uniform(f64(-1.0), f64(1.0))),
    (lambda: fd.Laplace(f64(0.0), f64(1.0)), lambda: fd.ContinuousBernoulli(f64(0.3))),
    (lambda: fd.Normal(f64(0.0), f64(1.0)), lambda: fd.Pareto(f64(0.5), f64(2.0))),
    (lambda: fd.Pareto(f64(0.5), f64(2.0)), lambda: fd.Uniform(f64(0.0), f64(10.0))),
    (lambda: fd.Pareto(f64(0.5), f64(2.0)), lambda: fd.Beta(f64(2.0), f64(3.0))),
]


def test_kl_with_disjoint_support_is_infinite():
    for make_p, make_q in INFINITE_PAIRS:
        out = fd.kl_divergence(make_p(), make_q())
        assert out.shape == () and math.isinf(out.item()) and out.item() > 0
    # inf where the support condition fails, finite elsewhere
    out = fd.kl_divergence(fd.Uniform(f64([0.2, -0.1]), f64([0.8, 0.5])), fd.ContinuousBernoulli(f64(0.3)))
    assert np.isfinite(out.numpy()[0]) and math.isinf(out.numpy()[1])
    with pytest.raises(NotImplementedError, match="No KL"):
        fd.kl_divergence(fd.StudentT(f64(3.0)), fd.Normal(f64(0.0), f64(1.0)))


# ----------------------------------------------------------------------------- sampling


def _all_distributions(batch, T=fg):
    b = np.ones(batch)
    ones3 = np.ones(batch + (3,))

    def t(x):
        return T.tensor(np.asarray(x, dtype=np.float64))

    d = D(T)
    return {
        "Cauchy": d.Cauchy(t(b * 0.5), t(b * 2.0)),
        "Chi2": d.Chi2(t(b * 3.0)),
        "ContinuousBernoulli": d.ContinuousBernoulli(t(b * 0.8)),
        "ContinuousBernoulliHalf": d.ContinuousBernoulli(logits=t(b * 0.001)),
        "FisherSnedecor": d.FisherSnedecor(t(b * 5.0), t(b * 30.0)),
        "Gumbel": d.Gumbel(t(b * 1.0), t(b * 2.0)),
        "HalfCauchy": d.HalfCauchy(t(b * 1.5)),
        "HalfNormal": d.HalfNormal(t(b * 1.5)),
        "Kumaraswamy": d.Kumaraswamy(t(b * 2.0), t(b * 3.0)),
        "LogisticNormal": d.LogisticNormal(t(ones3 * 0.0), t(ones3)),
        "Multinomial": d.Multinomial(10, probs=t(ones3 * [0.2, 0.3, 0.5])),
        "NegativeBinomial": d.NegativeBinomial(t(b * 5.0), t(b * 0.3)),
        "Pareto": d.Pareto(t(b * 1.5), t(b * 9.0)),
        "RelaxedBernoulli": d.RelaxedBernoulli(t(b * 0.5), t(b * 0.3)),
        "LogitRelaxedBernoulli": d.relaxed_bernoulli.LogitRelaxedBernoulli(t(b * 0.5), t(b * 0.3)),
        "RelaxedOneHotCategorical": d.RelaxedOneHotCategorical(t(0.7), t(ones3 * [0.2, 0.3, 0.5])),
        "ExpRelaxedCategorical": d.relaxed_categorical.ExpRelaxedCategorical(t(0.7), logits=t(ones3 * 0.0)),
        "StudentT": d.StudentT(t(b * 12.0), t(b * 1.0), t(b * 2.0)),
        "VonMises": d.VonMises(t(b * 2.5), t(b * 4.0)),
        "Weibull": d.Weibull(t(b * 2.0), t(b * 1.5)),
    }


@pytest.mark.parametrize("batch", [(), (2, 3)])
def test_sample_and_rsample_shapes_and_support(batch):
    for name, d in _all_distributions(batch).items():
        check_samples(name, d, batch)


def test_has_rsample_and_constraints_match_torch():
    needs_torch()
    theirs = _all_distributions((), torch)
    for name, d in _all_distributions(()).items():
        td = theirs[name]
        assert type(d).__name__ == type(td).__name__
        assert d.has_rsample == td.has_rsample, name
        assert set(d.arg_constraints) == set(td.arg_constraints), name
        for key, c in d.arg_constraints.items():
            assert repr(c) == repr(td.arg_constraints[key]), (name, key)
        if not constraints.is_dependent(type(d).support):
            assert repr(d.support) == repr(td.support), name
        assert d.support.is_discrete == td.support.is_discrete, name
        assert d.support.event_dim == td.support.event_dim == len(d.event_shape), name
        assert d.batch_shape == tuple(td.batch_shape) and d.event_shape == tuple(td.event_shape), name


def _check_moments(x, mean, var, name, n):
    sd = np.sqrt(var)
    np.testing.assert_allclose(x.mean(0), mean, atol=(5 * sd / math.sqrt(n)).max() + 1e-12, err_msg=name)
    np.testing.assert_allclose(x.var(0), var, rtol=0.1, atol=1e-9, err_msg=name)


def test_sample_statistics_match_moments():
    fg.manual_seed(1234)
    n = 20000
    dists = _all_distributions((2,))
    for name in [
        "Chi2",
        "ContinuousBernoulli",
        "ContinuousBernoulliHalf",
        "FisherSnedecor",
        "Gumbel",
        "HalfNormal",
        "Kumaraswamy",
        "Multinomial",
        "NegativeBinomial",
        "Pareto",
        "StudentT",
        "Weibull",
    ]:
        d = dists[name]
        x = d.sample((n,))
        _check_moments(x.numpy(), d.mean.numpy(), d.variance.numpy(), name, n)


def test_heavy_tailed_and_circular_sample_statistics():
    fg.manual_seed(99)
    n = 40000
    x = fd.Cauchy(f64([0.5, -2.0]), f64([2.0, 0.5])).sample((n,)).numpy()
    np.testing.assert_allclose(np.median(x, 0), [0.5, -2.0], atol=0.05)
    np.testing.assert_allclose(np.percentile(x, 75, 0) - np.percentile(x, 25, 0), [4.0, 1.0], rtol=0.05)
    x = fd.HalfCauchy(f64([1.5, 0.2])).sample((n,)).numpy()
    np.testing.assert_allclose(np.median(x, 0), [1.5, 0.2], rtol=0.04)
    d = fd.VonMises(f64([2.5, -3.0, 0.0]), f64([4.0, 0.5, 20.0]))
    x = d.sample((n,)).numpy()
    assert (x >= -math.pi).all() and (x < math.pi).all()
    resultant = np.exp(1j * x).mean(0)
    np.testing.assert_allclose(np.angle(resultant), [2.5, -3.0, 0.0], atol=0.05)
    np.testing.assert_allclose(1 - np.abs(resultant), d.variance.numpy(), atol=0.01)


def test_relaxed_distributions_sample_statistics():
    fg.manual_seed(5)
    n = 40000
    probs = np.array([0.3, 0.8])
    for temp in [0.1, 2.0]:
        x = fd.RelaxedBernoulli(f64([temp, temp]), f64(probs)).sample((n,)).numpy()
        # P(X > 1/2) = P(logistic noise > -logit(p)) = p for every temperature
        np.testing.assert_allclose((x > 0.5).mean(0), probs, atol=0.015)
        cat = np.array([0.1, 0.2, 0.3, 0.4])
        y = fd.RelaxedOneHotCategorical(f64(temp), f64(cat)).sample((n,)).numpy()
        np.testing.assert_allclose(y.sum(-1), 1.0, rtol=1e-12)
        # the argmax of a Gumbel-softmax sample is Categorical(probs)
        np.testing.assert_allclose(np.bincount(y.argmax(-1), minlength=4) / n, cat, atol=0.015)
    low = fd.RelaxedBernoulli(f64(0.05), f64(0.5)).sample((1000,)).numpy()
    assert ((low < 0.05) | (low > 0.95)).mean() > 0.9  # low temperature: nearly binary


def test_logistic_normal_samples_invert_to_the_normal():
    fg.manual_seed(8)
    loc, scale = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.3, 2.0])
    d = fd.LogisticNormal(f64(loc), f64(scale))
    y = d.sample((20000,))
    assert bool(constraints.simplex.check(y).all())
    z = transforms.StickBreakingTransform().inv(y).numpy()
    np.testing.assert_allclose(z.mean(0), loc, atol=0.05)
    np.testing.assert_allclose(z.std(0), scale, rtol=0.03)


def test_multinomial_samples_sum_to_total_count():
    fg.manual_seed(3)
    d = fd.Multinomial(7, logits=f64(LOGITS))
    x = d.sample((50,)).numpy()
    np.testing.assert_array_equal(x.sum(-1), 7.0)
    assert (x == np.round(x)).all() and (x >= 0).all()


def test_manual_seed_makes_sampling_reproducible():
    def draw():
        fg.manual_seed(42)
        return [d.sample((3,)).numpy() for d in _all_distributions((2,)).values()]

    for a, b in zip(draw(), draw()):
        np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------------- reparameterization


def _noise(kind, shape):
    if kind == "rand":
        return fg.rand(shape, dtype=fg.float64)
    if kind == "randn":
        return fg.randn(shape, dtype=fg.float64)
    return getattr(fg.empty(shape, dtype=fg.float64), kind + "_")()


TINY, EPS = np.finfo(np.float64).tiny, np.finfo(np.float64).eps
# name -> (builder, params, kind of generator noise, sample written in torch ops from that noise)
RSAMPLE_CASES = {
    "Cauchy": (lambda T, a, b: D(T).Cauchy(a, b), (LOC[0], SCALE[0]), "cauchy", lambda a, b, e: a + b * e),
    "Gumbel": (
        lambda T, a, b: D(T).Gumbel(a, b),
        (LOC[0], SCALE[0]),
        "rand",
        lambda a, b, u: a - b * (-(TINY + u * (1 - EPS - TINY)).log()).log(),
    ),
    "HalfNormal": (lambda T, s: D(T).HalfNormal(s), (SCALE[0],), "randn", lambda s, e: (s * e).abs()),
    "Kumaraswamy": (
        lambda T, a, b: D(T).Kumaraswamy(a, b),
        (CONC[0], SCALE[0]),
        "rand",
        lambda a, b, u: (1 - u ** (1 / b)) ** (1 / a),
    ),
    "Weibull": (
        lambda T, s, k: D(T).Weibull(s, k),
        (SCALE[0], CONC[0]),
        "exponential",
        lambda s, k, e: s * e ** (1 / k),
    ),
    "Pareto": (
        lambda T, s, a: D(T).Pareto(s, a),
        (SCALE[0], CONC[0]),
        "exponential",
        lambda s, a, e: s * (e / a).exp(),
    ),
    "ContinuousBernoulli": (
        lambda T, p: D(T).ContinuousBernoulli(p),
        (CB_PROBS[0],),
        "rand",
        lambda p, u: torch.distributions.ContinuousBernoulli(p).icdf(u),
    ),
    "RelaxedBernoulli": (
        lambda T, t, p: D(T).RelaxedBernoulli(t, p),
        (SCALE[0], UNIT_V[0]),
        "rand",
        lambda t, p, u: ((u.log() - (-u).log1p() + p.log() - (-p).log1p()) / t).sigmoid(),
    ),
}


@pytest.mark.parametrize("name", sorted(RSAMPLE_CASES))
def test_rsample_is_the_reparameterized_noise_with_torch_gradients(name):
    needs_torch()
    build, params, kind, formula = RSAMPLE_CASES[name]
    fg.manual_seed(31)
    noise = _noise(kind, (4, 3)).numpy()
    fg.manual_seed(31)
    fps = [fg.tensor(p, requires_grad=True) for p in params]
    d = build(fg, *fps)
    assert d.has_rsample
    x = d.rsample((4,))
    tps = [torch.tensor(p, requires_grad=True) for p in params]
    want = formula(*tps, torch.tensor(noise))
    np.testing.assert_allclose(x.detach().numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12)
    (x.sin() * x).sum().backward()
    (want.sin() * want).sum().backward()
    for fp, tp in zip(fps, tps):
        np.testing.assert_allclose(fp.grad.numpy(), tp.grad.numpy(), rtol=1e-8, atol=1e-12)


PATHWISE = {
    "Chi2": (lambda T, df: D(T).Chi2(df), (np.array([1.5, 6.0]),)),
    "StudentT": (
        lambda T, df, a, b: D(T).StudentT(df, a, b),
        (np.array([5.0, 9.0]), LOC[0, :2], SCALE[0, :2]),
    ),
    "FisherSnedecor": (
        lambda T, a, b: D(T).FisherSnedecor(a, b),
        (np.array([4.0, 7.0]), np.array([12.0, 20.0])),
    ),
    "Gumbel": RSAMPLE_CASES["Gumbel"][:2],
    "Weibull": RSAMPLE_CASES["Weibull"][:2],
    "Kumaraswamy": RSAMPLE_CASES["Kumaraswamy"][:2],
    # away from 1/2, where (as in torch) rsample is the uniform draw itself
    "ContinuousBernoulli": (RSAMPLE_CASES["ContinuousBernoulli"][0], (np.array([0.2, 0.9]),)),
    "HalfCauchyMedian": (lambda T, s: D(T).HalfCauchy(s), (SCALE[0, :2],)),
}


@pytest.mark.parametrize("name", sorted(PATHWISE))
def test_rsample_gradient_estimates_expectation_gradient(name):
    """The pathwise gradient of a sample statistic estimates the gradient of its expectation."""
    fg.manual_seed(11)
    build, params = PATHWISE[name]
    ps = [fg.tensor(p[:2], requires_grad=True) for p in params]
    x = build(fg, *ps).rsample((40000,))
    if name == "HalfCauchyMedian":  # the mean is infinite: P(X <= scale) = 1/2, E[X; X <= s]
        # d/ds E[min(X, c)] for fixed c is estimated pathwise; compare with its closed form
        c = 1.0
        x.clamp(max=c).mean(0).sum().backward()
        s = params[0][:2]
        # E[min(X, c)] = (s/pi) log(1 + c^2/s^2) + c (1 - 2/pi atan(c/s))
        h = 1e-6

        def emin(s):
            return (s / math.pi) * np.log1p(c**2 / s**2) + c * (1 - 2 / math.pi * np.arctan(c / s))

        want = [(emin(s + h) - emin(s - h)) / (2 * h)]
    else:
        x.mean(0).sum().backward()
        ps2 = [fg.tensor(p[:2], requires_grad=True) for p in params]
        grads = fg.autograd.grad(build(fg, *ps2).mean.sum(), ps2, allow_unused=True)
        want = [np.zeros(2) if g is None else g.numpy() for g in grads]
    for p, w in zip(ps, want):
        np.testing.assert_allclose(p.grad.numpy(), w, rtol=0.05, atol=0.03, err_msg=name)


def test_non_reparameterized_distributions():
    for d in [
        fd.VonMises(f64(0.0), f64(1.0)),
        fd.Multinomial(3, f64([0.5, 0.5])),
        fd.NegativeBinomial(f64(2.0), f64(0.5)),
        fd.relaxed_bernoulli.LogitRelaxedBernoulli(f64(1.0), f64(0.5)),
    ]:
        assert not d.has_rsample
    # LogitRelaxedBernoulli still implements rsample (as torch's does): its samples carry gradients
    p = fg.tensor(0.3, dtype=fg.float64, requires_grad=True)
    fd.relaxed_bernoulli.LogitRelaxedBernoulli(f64(0.5), p).rsample((10,)).sum().backward()
    np.testing.assert_allclose(p.grad.item(), 10 / 0.5 / (0.3 * 0.7), rtol=1e-10)


# ----------------------------------------------------------------------------- expand


def test_expand_keeps_type_parameters_and_densities():
    for name, d in _all_distributions((3,)).items():
        e = d.expand((2, 3))
        assert type(e) is type(d), name
        assert e.batch_shape == (2, 3) and e.event_shape == d.event_shape, name
        assert e._validate_args == d._validate_args
        x = d.sample((2,))
        np.testing.assert_allclose(e.log_prob(x).numpy(), d.log_prob(x).numpy(), rtol=1e-12, err_msg=name)
        assert tuple(e.sample((4,)).shape) == (4, 2, 3) + tuple(d.event_shape), name
        try:
            mean = d.mean.numpy()
        except NotImplementedError:
            continue
        np.testing.assert_allclose(e.mean.numpy(), np.broadcast_to(mean, e.mean.shape), err_msg=name)


def test_expand_preserves_attributes():
    cb = fd.ContinuousBernoulli(f64([0.3]), lims=(0.4, 0.6)).expand((2,))
    assert cb._lims == (0.4, 0.6)
    np.testing.assert_allclose(
        cb.mean.numpy(), fd.ContinuousBernoulli(f64([0.3, 0.3]), lims=(0.4, 0.6)).mean.numpy()
    )
    r = fd.RelaxedBernoulli(f64(0.7), logits=f64([0.1])).expand((3,))
    assert r.temperature.item() == 0.7 and tuple(r.logits.shape) == (3,)
    w = fd.Weibull(f64([2.0]), f64([1.5])).expand((2,))
    assert tuple(w.concentration_reciprocal.shape) == (2,) and tuple(w.scale.shape) == (2,)
    m = fd.Multinomial(4, f64([0.2, 0.8])).expand((3,))
    assert m.total_count == 4 and tuple(m.probs.shape) == (3, 2)
    s = fd.StudentT(f64([3.0]), 0.0, 1.0).expand((2,))
    assert tuple(s.df.shape) == (2,) and tuple(s.rsample().shape) == (2,)


# ----------------------------------------------------------------------------- validation


def _messages(fn, kind=ValueError):
    out = []
    for T in [fg] + ([torch] if has_torch else []):
        with pytest.raises(kind) as info:
            fn(T)
        out.append(str(info.value).split("\n")[0])
    return out


INVALID_PARAMS = [
    lambda T: D(T).Cauchy(T.tensor([0.0]), T.tensor([-1.0]), validate_args=True),
    lambda T: D(T).Chi2(T.tensor([-1.0, 2.0]), validate_args=True),
    lambda T: D(T).FisherSnedecor(T.tensor(2.0), T.tensor(0.0), validate_args=True),
    lambda T: D(T).Gumbel(T.tensor(float("nan")), T.tensor(1.0), validate_args=True),
    lambda T: D(T).HalfCauchy(T.tensor([1.0, 0.0]), validate_args=True),
    lambda T: D(T).HalfNormal(T.tensor(-2.0), validate_args=True),
    lambda T: D(T).Kumaraswamy(T.tensor(1.0), T.tensor(-1.0), validate_args=True),
    lambda T: D(T).LogisticNormal(T.zeros(2), T.tensor([1.0, -1.0]), validate_args=True),
    lambda T: D(T).Multinomial(3, T.tensor([0.5, -0.5]), validate_args=True),
    lambda T: D(T).NegativeBinomial(T.tensor(-1.0), T.tensor(0.5), validate_args=True),
    lambda T: D(T).NegativeBinomial(T.tensor(2.0), T.tensor(1.0), validate_args=True),
    lambda T: D(T).Pareto(T.tensor(1.0), T.tensor(0.0), validate_args=True),
    lambda T: D(T).RelaxedBernoulli(T.tensor(0.5), T.tensor(1.5), validate_args=True),
    lambda T: D(T).RelaxedOneHotCategorical(T.tensor(0.5), T.tensor([0.5, -0.1]), validate_args=True),
    lambda T: D(T).StudentT(T.tensor(0.0), validate_args=True),
    lambda T: D(T).VonMises(T.tensor(0.0), T.tensor(-1.0), validate_args=True),
    lambda T: D(T).Weibull(T.tensor(1.0), T.tensor(-1.0), validate_args=True),
]


@pytest.mark.parametrize("case", range(len(INVALID_PARAMS)))
def test_invalid_parameter_message_matches_torch(case):
    msgs = _messages(INVALID_PARAMS[case])
    assert msgs[0].startswith("Expected parameter "), msgs[0]
    assert len(set(msgs)) == 1, msgs


OUT_OF_SUPPORT = [
    lambda T: D(T).Chi2(T.tensor(2.0), validate_args=True).log_prob(T.tensor(-1.0)),
    lambda T: D(T).ContinuousBernoulli(T.tensor(0.3), validate_args=True).log_prob(T.tensor(1.5)),
    lambda T: D(T).HalfNormal(T.tensor(1.0), validate_args=True).log_prob(T.tensor([1.0, -0.5])),
    lambda T: D(T).Kumaraswamy(T.tensor(1.0), T.tensor(2.0), validate_args=True).log_prob(T.tensor(2.0)),
    lambda T: D(T).Multinomial(3, T.tensor([0.5, 0.5]), validate_args=True).log_prob(T.tensor([3.0, 1.0])),
    lambda T: D(T).NegativeBinomial(T.tensor(2.0), T.tensor(0.5), validate_args=True).log_prob(T.tensor(1.5)),
    lambda T: D(T).Pareto(T.tensor(1.0), T.tensor(2.0), validate_args=True).log_prob(T.tensor(0.5)),
    lambda T: (
        D(T).RelaxedBernoulli(T.tensor(0.5), T.tensor(0.3), validate_args=True).log_prob(T.tensor(-0.1))
    ),
    lambda T: (
        D(T).LogisticNormal(T.zeros(2), T.ones(2), validate_args=True).log_prob(T.tensor([0.5, 0.6, 0.1]))
    ),
    lambda T: D(T).Weibull(T.tensor(1.0), T.tensor(2.0), validate_args=True).log_prob(T.tensor(0.0)),
]


@pytest.mark.parametrize("case", range(len(OUT_OF_SUPPORT)))
def test_out_of_support_value_message_matches_torch(case):
    msgs = _messages(OUT_OF_SUPPORT[case])
    assert msgs[0].startswith("Expected value argument ("), msgs[0]
    assert "to be within the support (" in msgs[0]
    assert len(set(msgs)) == 1, msgs


def test_other_argument_errors_match_torch():
    cases = [
        (lambda T: D(T).ContinuousBernoulli(), ValueError, "Either `probs` or `logits`"),
        (
            lambda T: D(T).ContinuousBernoulli(T.tensor(0.5), T.tensor(0.0)),
            ValueError,
            "Either `probs` or `logits`",
        ),
        (lambda T: D(T).NegativeBinomial(T.tensor(2.0)), ValueError, "Either `probs` or `logits`"),
        (lambda T: D(T).RelaxedBernoulli(T.tensor(1.0)), ValueError, "Either `probs` or `logits`"),
        (lambda T: D(T).RelaxedOneHotCategorical(T.tensor(1.0)), ValueError, "Either `probs` or `logits`"),
        # an explicit validate_args, even False, checks ContinuousBernoulli's probs
        (
            lambda T: D(T).ContinuousBernoulli(T.tensor(1.5), validate_args=False),
            ValueError,
            "The parameter probs has invalid values",
        ),
        (
            lambda T: D(T).Multinomial(T.tensor(3), T.tensor([0.5, 0.5])),
            NotImplementedError,
            "inhomogeneous total_count is not supported",
        ),
        (
            lambda T: D(T).VonMises(T.zeros(2), T.ones(2), validate_args=True).log_prob(T.zeros(3)),
            ValueError,
            "Value is not broadcastable",
        ),
    ]
    for fn, kind, pattern in cases:
        msgs = _messages(fn, kind)
        assert pattern in msgs[0], msgs
        assert len(set(msgs)) == 1, msgs


def test_validation_can_be_turned_off():
    fd.Distribution.set_default_validate_args(False)
    d = fd.StudentT(f64(-1.0))
    assert math.isnan(d.log_prob(f64(0.0)).item())
    fd.Weibull(f64(1.0), f64(2.0)).log_prob(f64(-1.0))  # no support check
    fd.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Expected parameter df"):
        fd.StudentT(f64(-1.0))
    with pytest.raises(ValueError, match="Expected value argument"):
        fd.Gumbel(f64(0.0), f64(1.0)).log_prob(f64(math.nan))


def test_multinomial_with_impossible_category_and_chi2_kl():
    needs_torch()
    probs = np.array([0.5, 0.5, 0.0])
    counts = np.array([[2.0, 1.0, 0.0], [0.0, 3.0, 0.0], [1.0, 1.0, 1.0]])
    got = fd.Multinomial(3, f64(probs)).log_prob(f64(counts)).numpy()
    want = torch.distributions.Multinomial(3, t64(probs)).log_prob(t64(counts)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got[:2], np.log([3 / 8, 1 / 8]), rtol=1e-12)
    assert got[2] < -30  # probs are clamped to eps before the log
    # with a -inf logit, 0 * log 0 counts as 0 and any positive count is impossible
    logits = np.array([0.0, 0.0, -np.inf])
    got = fd.Multinomial(3, logits=f64(logits)).log_prob(f64(counts)).numpy()
    want = torch.distributions.Multinomial(3, logits=t64(logits)).log_prob(t64(counts)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got[:2], np.log([3 / 8, 1 / 8]), rtol=1e-12)
    assert got[2] == -math.inf
    # Chi2 is a Gamma: the Gamma closed form applies
    kl = fd.kl_divergence(fd.Chi2(f64([3.0, 5.0])), fd.Chi2(f64([4.0, 2.0])))
    want = torch.distributions.kl_divergence(
        torch.distributions.Chi2(t64([3.0, 5.0])), torch.distributions.Chi2(t64([4.0, 2.0]))
    )
    np.testing.assert_allclose(kl.numpy(), want.numpy(), rtol=1e-10)


def test_float32_parameters_keep_their_dtype():
    fg.manual_seed(0)
    f = fg.float32
    for d in [
        fd.Gumbel(fg.zeros(2, dtype=f), fg.ones(2, dtype=f)),
        fd.StudentT(fg.full((2,), 3.0, dtype=f)),
        fd.VonMises(fg.zeros(2, dtype=f), fg.ones(2, dtype=f)),
        fd.ContinuousBernoulli(fg.full((2,), 0.3, dtype=f)),
        fd.Kumaraswamy(fg.ones(2, dtype=f), fg.ones(2, dtype=f)),
        fd.RelaxedOneHotCategorical(fg.tensor(0.5), logits=fg.zeros(2, 3, dtype=f)),
    ]:
        x = d.sample((3,))
        assert x.dtype == f and d.log_prob(x).dtype == f, type(d).__name__
        assert np.isfinite(d.log_prob(x).numpy()).all(), type(d).__name__

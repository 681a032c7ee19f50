"""``ferrograd.distributions`` against ``torch.distributions``: log-densities,
entropies, moments, CDFs and KL divergences with their gradients (float64,
checked against finite differences and, when importable, torch); sample
shapes and sample statistics under fixed seeds; reparameterized gradients;
argument validation with PyTorch's messages; and the REINFORCE / VAE / SAC
patterns end to end."""

import math
import re

import numpy as np
import pytest

import ferrograd as fg
from ferrograd import distributions as fd
from ferrograd.distributions import constraints, transforms

from helpers import check_op, has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is not installed")


@pytest.fixture(autouse=True)
def _restore_validation():
    """Tests toggle the global validation default; keep it isolated."""
    saved = fd.Distribution._validate_args
    yield
    fd.Distribution.set_default_validate_args(saved)


def f64(x):
    return fg.tensor(np.asarray(x, dtype=np.float64))


def t64(x):
    return torch.tensor(np.asarray(x, dtype=np.float64))


def D(T):
    return T.distributions


LOC = np.array([[0.3, -1.2, 0.0], [1.0, 0.5, -0.4]])
SCALE = np.array([[0.5, 2.0, 1.1], [0.7, 1.3, 0.9]])
REAL_V = np.array([[0.1, 1.5, -0.3], [0.9, -2.0, 0.2]])
POS_V = np.array([[0.4, 2.5, 1.2], [0.8, 0.1, 3.0]])
UNIT_V = np.array([[0.2, 0.7, 0.45], [0.9, 0.05, 0.5]])
CONC = np.array([[1.5, 3.0, 0.8], [2.2, 0.6, 4.0]])

# name -> (builder(T, *params), parameter arrays, value in the support)
CONTINUOUS = {
    "Normal": (lambda T, a, b: D(T).Normal(a, b), (LOC, SCALE), REAL_V),
    "Laplace": (lambda T, a, b: D(T).Laplace(a, b), (LOC, SCALE), REAL_V),
    "LogNormal": (lambda T, a, b: D(T).LogNormal(a, b), (LOC, SCALE), POS_V),
    "Exponential": (lambda T, r: D(T).Exponential(r), (SCALE,), POS_V),
    "Gamma": (lambda T, a, b: D(T).Gamma(a, b), (CONC, SCALE), POS_V),
    "Beta": (lambda T, a, b: D(T).Beta(a, b), (CONC, SCALE), UNIT_V),
    "Uniform": (lambda T, lo, hi: D(T).Uniform(lo, hi), (LOC - 3, LOC + SCALE + 2), REAL_V),
}


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_log_prob_matches_torch_with_gradients(name):
    build, params, value = CONTINUOUS[name]
    # gradients w.r.t. every parameter and the value (Uniform's density has no value-gradient)
    check_op(lambda T, *xs: build(T, *xs[:-1]).log_prob(xs[-1]), *params, value)


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
@pytest.mark.parametrize("attr", ["mean", "variance", "stddev", "entropy"])
def test_moments_and_entropy_match_torch(name, attr):
    build, params, _ = CONTINUOUS[name]

    def fn(T, *xs):
        d = build(T, *xs)
        return d.entropy() if attr == "entropy" else getattr(d, attr)

    check_op(fn, *params)


@pytest.mark.parametrize("name", ["Normal", "Laplace", "LogNormal", "Exponential", "Uniform"])
def test_cdf_and_icdf_match_torch(name):
    build, params, value = CONTINUOUS[name]
    check_op(lambda T, *xs: build(T, *xs[:-1]).cdf(xs[-1]), *params, value)
    probs = np.array([[0.1, 0.55, 0.93], [0.3, 0.75, 0.02]])  # away from the median kink
    check_op(lambda T, *xs: build(T, *xs[:-1]).icdf(xs[-1]), *params, probs)
    # icdf inverts cdf
    d = build(fg, *[f64(p) for p in params])
    np.testing.assert_allclose(d.cdf(d.icdf(f64(probs))).numpy(), probs, rtol=1e-9, atol=1e-12)


def test_mode_matches_torch():
    if not has_torch:
        pytest.skip("torch is not installed")
    for name, (build, params, _) in CONTINUOUS.items():
        got = build(fg, *[f64(p) for p in params]).mode.numpy()
        want = build(torch, *[t64(p) for p in params]).mode.numpy()
        np.testing.assert_allclose(got, want, rtol=1e-10, err_msg=name)


PROBS = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
LOGITS = np.array([[0.4, -1.0, 2.0], [0.0, 0.3, -0.7]])


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_categorical_log_prob_entropy_and_gradients(param):
    arr = PROBS if param == "probs" else LOGITS
    idx = np.array([[2, 0], [1, 1], [0, 2]])  # sample_shape (3,) + batch (2,)

    def log_prob(T, p):
        return T.distributions.Categorical(**{param: p}).log_prob(T.tensor(idx))

    check_op(log_prob, arr)
    check_op(lambda T, p: T.distributions.Categorical(**{param: p}).entropy(), arr)
    other = "logits" if param == "probs" else "probs"
    check_op(lambda T, p: getattr(T.distributions.Categorical(**{param: p}), other), arr)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_bernoulli_and_one_hot_categorical_match_torch(param):
    unit = np.array([[0.2, 0.9, 0.5], [0.01, 0.6, 0.35]])
    arr = unit if param == "probs" else LOGITS
    value = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    check_op(lambda T, p: T.distributions.Bernoulli(**{param: p}).log_prob(T.tensor(value)), arr)
    check_op(lambda T, p: T.distributions.Bernoulli(**{param: p}).entropy(), arr)
    check_op(lambda T, p: T.distributions.Bernoulli(**{param: p}).variance, arr)
    cat_arr = PROBS if param == "probs" else LOGITS
    one_hot = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    check_op(
        lambda T, p: T.distributions.OneHotCategorical(**{param: p}).log_prob(T.tensor(one_hot)), cat_arr
    )
    check_op(lambda T, p: T.distributions.OneHotCategorical(**{param: p}).entropy(), cat_arr)


def test_discrete_count_distributions_match_torch():
    rate = np.array([0.5, 3.0, 12.0])
    counts = np.array([0.0, 2.0, 15.0])
    check_op(lambda T, r: T.distributions.Poisson(r).log_prob(T.tensor(counts)), rate)
    probs = np.array([0.3, 0.7, 0.05])
    check_op(lambda T, p: T.distributions.Geometric(p).log_prob(T.tensor(counts)), probs)
    check_op(lambda T, p: T.distributions.Geometric(p).entropy(), probs)
    check_op(lambda T, p: T.distributions.Binomial(15, p).log_prob(T.tensor(counts)), probs)
    check_op(lambda T, p: T.distributions.Binomial(15, p).entropy(), probs)
    check_op(lambda T, p: T.distributions.Binomial(15, logits=p).log_prob(T.tensor(counts)), LOGITS[0])


def test_dirichlet_matches_torch():
    value = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    check_op(lambda T, c, v: T.distributions.Dirichlet(c).log_prob(v / v.sum(-1, keepdim=True)), CONC, value)
    for attr in ["mean", "variance"]:
        check_op(lambda T, c, attr=attr: getattr(T.distributions.Dirichlet(c), attr), CONC)
    check_op(lambda T, c: T.distributions.Dirichlet(c).entropy(), CONC)


COV = np.array([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, 1.5]])


@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_matches_torch(kind):
    loc = np.array([[0.5, -1.0, 0.2], [0.0, 0.3, 1.0]])  # batch (2,)
    value = np.array([[[0.1, 0.2, 0.3]], [[-1.0, 0.5, 2.0]]])  # broadcasts to (2, 2, 3)
    matrix = np.linalg.cholesky(COV) if kind == "scale_tril" else COV

    def build(T, m, mat):
        # keep finite-difference perturbations inside the constraint
        mat = mat.tril() if kind == "scale_tril" else (mat + mat.mT) / 2
        return T.distributions.MultivariateNormal(m, **{kind: mat})

    check_op(lambda T, m, mat, v: build(T, m, mat).log_prob(v), loc, matrix, value, fd_atol=1e-4)
    check_op(lambda T, m, mat: build(T, m, mat).entropy(), loc, matrix, fd_atol=1e-4)
    for attr in ["variance", "covariance_matrix", "precision_matrix", "scale_tril"]:
        check_op(lambda T, m, mat, attr=attr: getattr(build(T, m, mat), attr), loc, matrix, fd_atol=1e-4)


def test_independent_and_transformed_match_torch():
    def indep(T, a, b, v):
        return T.distributions.Independent(T.distributions.Normal(a, b), 1).log_prob(v)

    check_op(indep, LOC, SCALE, REAL_V)
    check_op(
        lambda T, a, b: T.distributions.Independent(T.distributions.Laplace(a, b), 2).entropy(), LOC, SCALE
    )

    def tanh_affine(T, a, b, v):
        tr = T.distributions.transforms
        parts = [tr.AffineTransform(0.5, 2.0), tr.TanhTransform(), tr.SigmoidTransform(), tr.ExpTransform()]
        return T.distributions.TransformedDistribution(T.distributions.Normal(a, b), parts).log_prob(v)

    value = np.array([[1.4, 1.5, 2.0], [1.9, 1.6, 1.35]])  # inside (e^sigmoid(-1), e^sigmoid(1))
    check_op(tanh_affine, LOC, SCALE, value)

    def event_affine(T, a, b, s, v):
        tr = T.distributions.transforms.AffineTransform(1.0, s, event_dim=1)
        return T.distributions.TransformedDistribution(T.distributions.Normal(a, b), tr).log_prob(v)

    check_op(event_affine, LOC, SCALE, np.array([0.5, -2.0, 3.0]), REAL_V)


KL_CASES = {
    "Normal": (lambda T, a, b: D(T).Normal(a, b), (LOC, SCALE)),
    "Laplace": (lambda T, a, b: D(T).Laplace(a, b), (LOC, SCALE)),
    "LogNormal": (lambda T, a, b: D(T).LogNormal(a, b), (LOC, SCALE)),
    "Exponential": (lambda T, r: D(T).Exponential(r), (SCALE,)),
    "Gamma": (lambda T, a, b: D(T).Gamma(a, b), (CONC, SCALE)),
    "Beta": (lambda T, a, b: D(T).Beta(a, b), (CONC, SCALE)),
    "Poisson": (lambda T, r: D(T).Poisson(r), (SCALE,)),
    "Geometric": (lambda T, p: D(T).Geometric(p), (UNIT_V,)),
    "Bernoulli": (lambda T, p: D(T).Bernoulli(p), (UNIT_V,)),
    "Categorical": (lambda T, p: D(T).Categorical(logits=p), (LOGITS,)),
    "OneHotCategorical": (lambda T, p: D(T).OneHotCategorical(logits=p), (LOGITS,)),
    "Dirichlet": (lambda T, c: D(T).Dirichlet(c), (CONC,)),
    "Independent": (lambda T, a, b: D(T).Independent(D(T).Normal(a, b), 1), (LOC, SCALE)),
}


@pytest.mark.parametrize("name", sorted(KL_CASES))
def test_kl_divergence_matches_torch(name):
    build, params = KL_CASES[name]
    n = len(params)
    shifted = [np.flip(p, -1).copy() for p in params]  # a different member of the same family

    def kl(T, *xs):
        return T.distributions.kl_divergence(build(T, *xs[:n]), build(T, *xs[n:]))

    out = check_op(kl, *params, *shifted)
    assert (out.detach().numpy() >= -1e-12).all()
    same = fd.kl_divergence(build(fg, *map(f64, params)), build(fg, *map(f64, params)))
    np.testing.assert_allclose(same.numpy(), 0.0, atol=1e-12)


def test_kl_uniform_and_multivariate_normal():
    def kl_uniform(T, lo1, hi1, lo2, hi2):
        return T.distributions.kl_divergence(
            T.distributions.Uniform(lo1, hi1), T.distributions.Uniform(lo2, hi2)
        )

    out = check_op(
        kl_uniform, np.array([0.0, 1.0]), np.array([1.0, 2.0]), np.array([-1.0, 0.5]), np.array([2.0, 3.0])
    )
    assert np.isfinite(out.detach().numpy()).all()
    outside = fd.kl_divergence(fd.Uniform(f64(0.0), f64(2.0)), fd.Uniform(f64(0.5), f64(3.0)))
    assert math.isinf(outside.item())

    l1 = np.linalg.cholesky(COV)
    l2 = np.array([[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [-0.3, 0.1, 0.7]])

    def kl_mvn(T, m1, s1, m2, s2):
        p = T.distributions.MultivariateNormal(m1, scale_tril=s1.tril())
        return T.distributions.kl_divergence(p, T.distributions.MultivariateNormal(m2, scale_tril=s2.tril()))

    check_op(
        kl_mvn, np.array([0.0, 1.0, -1.0]), l1, np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]), l2, fd_atol=1e-4
    )


def test_register_kl_dispatch_and_missing_pair():
    class MyNormal(fd.Normal):
        pass

    p, q = MyNormal(f64(0.0), f64(1.0)), fd.Normal(f64(1.0), f64(2.0))
    # subclasses fall back to the parent's closed form
    np.testing.assert_allclose(
        fd.kl_divergence(p, q).item(), fd.kl_divergence(fd.Normal(f64(0.0), f64(1.0)), q).item()
    )

    @fd.register_kl(MyNormal, fd.Normal)
    def _kl(p, q):
        return fg.tensor(-7.0)

    assert fd.kl_divergence(p, q).item() == -7.0
    with pytest.raises(NotImplementedError, match="No KL"):
        fd.kl_divergence(fd.Normal(f64(0.0), f64(1.0)), fd.Exponential(f64(1.0)))


# ----------------------------------------------------------------------------- sampling


def _all_distributions(batch):
    b = np.ones(batch)
    return {
        "Normal": fd.Normal(f64(b * 0.5), f64(b * 2.0)),
        "Laplace": fd.Laplace(f64(b), f64(b)),
        "LogNormal": fd.LogNormal(f64(b * 0.1), f64(b * 0.5)),
        "Exponential": fd.Exponential(f64(b * 2.0)),
        "Uniform": fd.Uniform(f64(b * -1), f64(b * 3)),
        "Gamma": fd.Gamma(f64(b * 0.7), f64(b * 2.0)),
        "Beta": fd.Beta(f64(b * 2.0), f64(b * 0.5)),
        "Poisson": fd.Poisson(f64(b * 40.0)),
        "Geometric": fd.Geometric(f64(b * 0.3)),
        "Binomial": fd.Binomial(f64(b * 6), f64(b * 0.4)),
        "Bernoulli": fd.Bernoulli(f64(b * 0.3)),
        "Categorical": fd.Categorical(probs=f64(np.ones(batch + (4,)))),
        "OneHotCategorical": fd.OneHotCategorical(logits=f64(np.zeros(batch + (4,)))),
        "Dirichlet": fd.Dirichlet(f64(np.ones(batch + (4,)) * 1.5)),
        "MultivariateNormal": fd.MultivariateNormal(f64(np.zeros(batch + (3,))), f64(COV)),
        "Independent": fd.Independent(fd.Normal(f64(np.zeros(batch + (4,))), f64(np.ones(batch + (4,)))), 1),
        "TanhNormal": fd.TransformedDistribution(fd.Normal(f64(b), f64(b)), [fd.TanhTransform()]),
    }


def check_samples(name, d, batch):
    """Samples of every shape lie in the support with finite log-densities;
    ``rsample`` matches ``sample``'s shape, or raises when not offered."""
    assert tuple(d.batch_shape) == batch, name
    for sample_shape in [(), (5,), (4, 2)]:
        x = d.sample(sample_shape)
        assert tuple(x.shape) == sample_shape + batch + tuple(d.event_shape), name
        assert not x.requires_grad
        assert bool(d.support.check(x).all()), name
        assert tuple(d.log_prob(x).shape) == sample_shape + batch, name
        assert np.isfinite(d.log_prob(x).numpy()).all(), name
        if d.has_rsample:
            assert tuple(d.rsample(sample_shape).shape) == x.shape, name
        elif name != "LogitRelaxedBernoulli":  # has rsample without claiming it, like torch's
            with pytest.raises(NotImplementedError):
                d.rsample(sample_shape)


@pytest.mark.parametrize("batch", [(), (2, 3)])
def test_sample_and_rsample_shapes_and_support(batch):
    for name, d in _all_distributions(batch).items():
        check_samples(name, d, batch)


def test_sample_statistics_match_moments():
    fg.manual_seed(1234)
    n = 20000
    for name, d in _all_distributions((2,)).items():
        if name in ("Categorical", "TanhNormal"):
            continue  # no finite closed-form mean; Categorical is checked through its probabilities below
        x = d.sample((n,))
        mean, var = d.mean.detach().numpy(), d.variance.detach().numpy()
        sd = np.sqrt(var)
        # sample mean within 5 standard errors, sample variance within 10%
        np.testing.assert_allclose(
            x.numpy().mean(0), mean, atol=(5 * sd / math.sqrt(n)).max() + 1e-12, err_msg=name
        )
        np.testing.assert_allclose(x.numpy().var(0), var, rtol=0.1, atol=1e-9, err_msg=name)

    probs = np.array([0.1, 0.2, 0.3, 0.4])
    x = fd.Categorical(probs=f64(probs)).sample((n,)).numpy()
    np.testing.assert_allclose(np.bincount(x, minlength=4) / n, probs, atol=0.02)


def test_manual_seed_makes_sampling_reproducible():
    d = fd.Normal(f64([0.0, 1.0]), f64([1.0, 2.0]))
    c = fd.Categorical(logits=f64(LOGITS))
    fg.manual_seed(7)
    a = (
        d.rsample((3,)).detach().numpy(),
        c.sample((4,)).numpy(),
        fd.Gamma(f64(0.5), f64(1.0)).sample((3,)).numpy(),
    )
    fg.manual_seed(7)
    b = (
        d.rsample((3,)).detach().numpy(),
        c.sample((4,)).numpy(),
        fd.Gamma(f64(0.5), f64(1.0)).sample((3,)).numpy(),
    )
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], d.sample((3,)).numpy())


def test_rsample_uses_generator_noise_and_matches_torch_gradients():
    loc, scale = np.array([0.3, -1.0]), np.array([0.5, 2.0])
    fg.manual_seed(3)
    eps = fg.randn((4, 2), dtype=fg.float64).numpy()
    fg.manual_seed(3)
    floc = fg.tensor(loc, requires_grad=True)
    fscale = fg.tensor(scale, requires_grad=True)
    x = fd.Normal(floc, fscale).rsample((4,))
    np.testing.assert_allclose(x.detach().numpy(), loc + scale * eps, rtol=1e-12)
    (x.sin() * x).sum().backward()
    xn = loc + scale * eps
    dfdx = np.sin(xn) + xn * np.cos(xn)
    np.testing.assert_allclose(floc.grad.numpy(), dfdx.sum(0), rtol=1e-10)
    np.testing.assert_allclose(fscale.grad.numpy(), (dfdx * eps).sum(0), rtol=1e-10)


@pytest.mark.parametrize(
    "name", ["Normal", "Laplace", "Exponential", "Uniform", "LogNormal", "Gamma", "Beta"]
)
def test_rsample_gradient_estimates_expectation_gradient(name):
    """The pathwise gradient of the sample mean estimates d(mean)/d(params)."""
    fg.manual_seed(11)
    build, params, _ = CONTINUOUS[name]
    ps = [fg.tensor(p[0, :2], requires_grad=True) for p in params]
    d = build(fg, *ps)
    d.rsample((40000,)).mean(0).sum().backward()
    got = [p.grad.numpy() for p in ps]
    ps2 = [fg.tensor(p[0, :2], requires_grad=True) for p in params]
    want = fg.autograd.grad(build(fg, *ps2).mean.sum(), ps2, allow_unused=True)
    for g, w in zip(got, want):
        w = np.zeros(2) if w is None else w.numpy()
        np.testing.assert_allclose(g, w, rtol=0.05, atol=0.03)


def test_multivariate_normal_rsample_gradient_and_covariance():
    fg.manual_seed(5)
    loc = fg.tensor([1.0, -2.0, 0.5], dtype=fg.float64, requires_grad=True)
    d = fd.MultivariateNormal(loc, covariance_matrix=f64(COV))
    x = d.rsample((30000,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), 30000.0)
    np.testing.assert_allclose(np.cov(x.detach().numpy().T), COV, atol=0.08)


@needs_torch
def test_gamma_implicit_reparameterization_gradient_matches_torch():
    """dx/dalpha for the very same samples against torch's _standard_gamma_grad."""
    alpha = np.array([0.05, 0.5, 2.0, 30.0, 400.0])
    fg.manual_seed(2)
    a = fg.tensor(alpha, requires_grad=True)
    x = fd.Gamma(a, fg.ones(5, dtype=fg.float64)).rsample((6,))
    x.backward(fg.ones_like(x))
    want = torch._standard_gamma_grad(t64(alpha).expand(6, 5), t64(x.detach().numpy())).sum(0)
    # torch's gradient is itself an approximation (Taylor/saddle point/rational fits)
    np.testing.assert_allclose(a.grad.numpy(), want.numpy(), rtol=5e-3)


def test_dirichlet_rsample_is_differentiable_and_on_the_simplex():
    fg.manual_seed(4)
    conc = fg.tensor([0.7, 2.0, 5.0], requires_grad=True, dtype=fg.float64)
    x = fd.Dirichlet(conc).rsample((20000,))
    assert bool(constraints.simplex.check(x.detach()).all())
    x[:, 0].mean().backward()
    total = 7.7  # d/dc mean_0 = (sum - c_0) / sum^2 for c_0, -c_0 / sum^2 for the others
    want = np.array([(total - 0.7) / total**2, -0.7 / total**2, -0.7 / total**2])
    np.testing.assert_allclose(conc.grad.numpy(), want, rtol=0.1, atol=2e-3)


def test_small_concentration_gamma_samples_are_positive_and_unbiased():
    fg.manual_seed(21)
    x = fd.Gamma(f64([0.1, 0.5]), f64([1.0, 3.0])).sample((40000,)).numpy()
    assert (x > 0).all()
    np.testing.assert_allclose(x.mean(0), [0.1, 0.5 / 3.0], rtol=0.08)


def test_enumerate_support_and_expand():
    c = fd.Categorical(probs=f64(PROBS))
    support = c.enumerate_support()
    assert tuple(support.shape) == (3, 2)
    np.testing.assert_allclose(c.log_prob(support).exp().numpy(), PROBS.T)
    assert tuple(c.enumerate_support(expand=False).shape) == (3, 1)
    b = fd.Bernoulli(f64([0.2, 0.7]))
    np.testing.assert_allclose(b.log_prob(b.enumerate_support()).exp().sum(0).numpy(), 1.0)
    o = fd.OneHotCategorical(probs=f64(PROBS))
    np.testing.assert_allclose(o.log_prob(o.enumerate_support()).exp().sum(0).numpy(), 1.0)
    bn = fd.Binomial(5, f64([0.2, 0.7]))
    np.testing.assert_allclose(bn.log_prob(bn.enumerate_support()).exp().sum(0).numpy(), 1.0)

    n = fd.Normal(f64([0.0, 1.0]), f64([1.0, 2.0])).expand((3, 2))
    assert tuple(n.batch_shape) == (3, 2) and tuple(n.sample().shape) == (3, 2)
    ce = c.expand((4, 2))
    assert tuple(ce.batch_shape) == (4, 2) and tuple(ce.sample((5,)).shape) == (5, 4, 2)
    m = fd.MultivariateNormal(f64([0.0, 0.0, 0.0]), f64(COV)).expand((2,))
    assert tuple(m.batch_shape) == (2,) and tuple(m.covariance_matrix.shape) == (2, 3, 3)
    ln = fd.LogNormal(f64(0.0), f64(1.0)).expand((4,))
    assert isinstance(ln, fd.LogNormal) and tuple(ln.sample().shape) == (4,)


@needs_torch
def test_constraints_check_like_torch():
    values = np.array([[-1.0, 0.0, 0.5, 1.0, 2.0, np.nan]])
    names = ["real", "positive", "nonnegative", "unit_interval", "boolean", "nonnegative_integer"]
    for name in names:
        got = getattr(constraints, name).check(f64(values)).numpy()
        want = getattr(torch.distributions.constraints, name).check(t64(values)).numpy()
        np.testing.assert_array_equal(got, want, err_msg=name)
        assert repr(getattr(constraints, name)) == repr(getattr(torch.distributions.constraints, name))
    simplex = np.array([[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1]])
    np.testing.assert_array_equal(constraints.simplex.check(f64(simplex)).numpy(), [True, False, False])
    interval = constraints.integer_interval(0, 3)
    np.testing.assert_array_equal(
        interval.check(f64([0.0, 3.0, 1.5, 4.0])).numpy(), [True, True, False, False]
    )
    assert constraints.integer_interval(0, 3).is_discrete and not constraints.real.is_discrete
    assert constraints.independent(constraints.real, 1).check(f64(simplex)).shape == (3,)
    pd = np.stack([COV, -COV])
    np.testing.assert_array_equal(constraints.positive_definite.check(f64(pd)).numpy(), [True, False])
    np.testing.assert_array_equal(
        constraints.lower_cholesky.check(f64(np.stack([np.linalg.cholesky(COV), COV]))).numpy(), [True, False]
    )


# ----------------------------------------------------------------------------- validation


def _messages(fn):
    """Error messages raised by ``fn(T)`` for ferrograd and, when installed, torch."""
    out = []
    for T in [fg] + ([torch] if has_torch else []):
        with pytest.raises(ValueError) as info:
            fn(T)
        out.append(str(info.value))
    return out


def test_invalid_parameter_message_matches_torch():
    msgs = _messages(
        lambda T: T.distributions.Normal(T.tensor([0.0, 1.0]), T.tensor([1.0, -1.0]), validate_args=True)
    )
    assert msgs[0].startswith(
        "Expected parameter scale (Tensor of shape (2,)) of distribution "
        "Normal(loc: torch.Size([2]), scale: torch.Size([2])) "
        "to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values:"
    )
    assert all(m.split("\n")[0] == msgs[0].split("\n")[0] for m in msgs)
    for fn in [
        lambda T: T.distributions.Categorical(probs=T.tensor([-0.1, 1.1]), validate_args=True),
        lambda T: T.distributions.Bernoulli(probs=T.tensor([1.5]), validate_args=True),
        lambda T: T.distributions.Gamma(T.tensor(0.0), T.tensor(1.0), validate_args=True),
        lambda T: T.distributions.Dirichlet(T.tensor([1.0, -1.0]), validate_args=True),
        lambda T: T.distributions.MultivariateNormal(
            T.zeros(2), T.tensor([[1.0, 2.0], [2.0, 1.0]]), validate_args=True
        ),
    ]:
        msgs = _messages(fn)
        assert msgs[0].startswith("Expected parameter ")
        assert all(m.split("\n")[0] == msgs[0].split("\n")[0] for m in msgs)


def test_out_of_support_value_message_matches_torch():
    for fn in [
        lambda T: T.distributions.Exponential(T.tensor(2.0), validate_args=True).log_prob(
            T.tensor([-1.0, 1.0])
        ),
        lambda T: T.distributions.Bernoulli(T.tensor([0.5]), validate_args=True).log_prob(T.tensor([0.5])),
        lambda T: T.distributions.Categorical(logits=T.zeros(3), validate_args=True).log_prob(T.tensor(3)),
        lambda T: T.distributions.Uniform(T.tensor(0.0), T.tensor(1.0), validate_args=True).log_prob(
            T.tensor(1.5)
        ),
    ]:
        msgs = _messages(fn)
        assert msgs[0].startswith("Expected value argument (Tensor of shape ")
        assert "to be within the support (" in msgs[0]
        assert all(m.split("\n")[0] == msgs[0].split("\n")[0] for m in msgs)
    shape_msgs = _messages(
        lambda T: T.distributions.Normal(T.zeros(3), T.ones(3), validate_args=True).log_prob(T.zeros(2))
    )
    assert (
        shape_msgs[0]
        == "Value is not broadcastable with batch_shape+event_shape: torch.Size([2]) vs torch.Size([3])."
    )
    assert len(set(shape_msgs)) == 1
    event_msgs = _messages(
        lambda T: T.distributions.MultivariateNormal(T.zeros(3), T.eye(3), validate_args=True).log_prob(
            T.zeros(2)
        )
    )
    assert len(set(event_msgs)) == 1 and event_msgs[0].startswith(
        "The right-most size of value must match event_shape"
    )


def test_other_argument_errors_match_torch():
    cases = [
        (
            lambda T: T.distributions.Categorical(probs=T.ones(2), logits=T.ones(2)),
            "Either `probs` or `logits`",
        ),
        (lambda T: T.distributions.Bernoulli(), "Either `probs` or `logits`"),
        (lambda T: T.distributions.MultivariateNormal(T.zeros(2)), "Exactly one of covariance_matrix"),
        (
            lambda T: T.distributions.MultivariateNormal(T.tensor(0.0), T.eye(1)),
            "loc must be at least one-dimensional",
        ),
        (
            lambda T: T.distributions.Uniform(T.tensor(1.0), T.tensor(0.0), validate_args=True),
            "LessThan(upper_bound=0.0)",
        ),
        (
            lambda T: T.distributions.Independent(T.distributions.Normal(T.zeros(2), T.ones(2)), 2),
            "reinterpreted_batch_ndims",
        ),
    ]
    for fn, pattern in cases:
        msgs = _messages(fn)
        assert re.search(re.escape(pattern), msgs[0])
        assert len(set(msgs)) == 1, msgs


def test_set_default_validate_args_toggles_checks():
    fd.Distribution.set_default_validate_args(False)
    d = fd.Normal(f64(0.0), f64(-1.0))  # accepted without validation
    assert math.isnan(d.log_prob(f64(0.0)).item())
    fd.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        fd.Normal(f64(0.0), f64(-1.0))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        fd.Normal(f64(0.0), f64(1.0)).log_prob(0.5)
    # an explicit validate_args wins over the default
    assert math.isnan(fd.Normal(f64(0.0), f64(-1.0), validate_args=False).log_prob(f64(0.0)).item())
    with pytest.raises(ValueError):
        fd.Distribution.set_default_validate_args("yes")


# ----------------------------------------------------------------------------- end to end


@needs_torch
def test_reinforce_loss_backward_matches_torch():
    rng = np.random.default_rng(0)
    w, obs, reward = rng.standard_normal((4, 3)), rng.standard_normal((8, 4)), rng.standard_normal(8)
    fw = fg.tensor(w, requires_grad=True)
    fg.manual_seed(0)
    fdist = fd.Categorical(logits=fg.tensor(obs) @ fw)
    actions = fdist.sample()
    floss = -(fdist.log_prob(actions) * fg.tensor(reward)).sum() - 0.01 * fdist.entropy().sum()
    floss.backward()
    tw = torch.tensor(w, requires_grad=True)
    tdist = torch.distributions.Categorical(logits=torch.tensor(obs) @ tw)
    tloss = (
        -(tdist.log_prob(torch.tensor(actions.numpy())) * torch.tensor(reward)).sum()
        - 0.01 * tdist.entropy().sum()
    )
    tloss.backward()
    np.testing.assert_allclose(floss.item(), tloss.item(), rtol=1e-12)
    np.testing.assert_allclose(fw.grad.numpy(), tw.grad.numpy(), rtol=1e-10, atol=1e-12)


@needs_torch
def test_vae_and_sac_reparameterized_losses_match_torch():
    """ferrograd's own rsample calls against torch fed the same generator noise."""
    rng = np.random.default_rng(1)
    mu, log_sigma = rng.standard_normal((5, 2)), 0.3 * rng.standard_normal((5, 2))

    def loss(T, mu_t, log_sigma_t, noise):
        D_ = T.distributions
        q = D_.Normal(mu_t, log_sigma_t.exp())
        prior = D_.Normal(T.zeros_like(mu_t), T.ones_like(mu_t))
        tanh = D_.TransformedDistribution(q, [D_.transforms.TanhTransform(cache_size=1)])
        if noise is None:  # ferrograd: draw from the seeded generator
            z, action = q.rsample(), tanh.rsample()
        else:  # torch: the same noise, reparameterized by hand
            z = mu_t + log_sigma_t.exp() * noise[0]
            action = tanh.transforms[0](mu_t + log_sigma_t.exp() * noise[1])
        vae = (z**2).sum() + D_.kl_divergence(q, prior).sum()
        sac = (tanh.log_prob(action) - action).sum()
        return vae + sac

    fg.manual_seed(9)
    noise = [fg.randn((5, 2), dtype=fg.float64).numpy() for _ in range(2)]
    fg.manual_seed(9)
    fmu, fls = fg.tensor(mu, requires_grad=True), fg.tensor(log_sigma, requires_grad=True)
    floss = loss(fg, fmu, fls, None)
    floss.backward()
    tmu, tls = torch.tensor(mu, requires_grad=True), torch.tensor(log_sigma, requires_grad=True)
    tloss = loss(torch, tmu, tls, [torch.tensor(n) for n in noise])
    tloss.backward()
    np.testing.assert_allclose(floss.item(), tloss.item(), rtol=1e-10)
    np.testing.assert_allclose(fmu.grad.numpy(), tmu.grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fls.grad.numpy(), tls.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_tanh_transform_cache_inverts_saturated_samples():
    base = fd.Normal(f64([0.0, 30.0]), f64([1.0, 1.0]))
    d = fd.TransformedDistribution(base, [transforms.TanhTransform(cache_size=1)])
    x = d.rsample()
    assert np.isfinite(d.log_prob(x).detach().numpy()).all()  # atanh(1.0) would be inf without the cache
    assert d.support.check(x).all()
    t = transforms.ComposeTransform([transforms.AffineTransform(1.0, 2.0), transforms.ExpTransform()])
    y = t(f64([0.5, -1.0]))
    np.testing.assert_allclose(t.inv(y).numpy(), [0.5, -1.0], rtol=1e-12)
    np.testing.assert_allclose(
        t.log_abs_det_jacobian(f64([0.5, -1.0]), y).numpy(), math.log(2.0) + 1 + 2 * np.array([0.5, -1.0])
    )
    assert t.inv.inv is t

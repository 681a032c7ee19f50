"""MixtureSameFamily, InverseGamma, LowRankMultivariateNormal, OneHotCategoricalStraightThrough,
Gamma.cdf and the ExponentialFamily base: values and float64 gradients against torch and finite
differences (check_op), sample shapes and statistics under fixed seeds, expand, and torch's
errors."""

import math

import numpy as np
import pytest

import ferrograd as fg
from ferrograd import distributions as fd

from helpers import check_op, has_torch, torch

WEIGHT_LOGITS = np.array([[0.3, -0.5, 1.2], [0.0, 0.8, -0.4]])
LOCS = np.array([[-2.0, 0.5, 3.0], [1.0, -1.0, 0.0]])
SCALES = np.array([[0.7, 1.3, 0.4], [2.0, 0.5, 1.1]])
POINTS = np.array([[0.1, -1.7], [2.5, 0.3], [-0.4, 4.0]])  # sample dim first, then the batch of 2


def gaussian_mixture(T, logits, loc, scale):
    D = T.distributions
    return D.MixtureSameFamily(D.Categorical(logits=logits), D.Normal(loc, scale))


@pytest.mark.parametrize(
    "quantity",
    [
        lambda m, x: m.log_prob(x),
        lambda m, x: m.cdf(x),
        lambda m, x: m.mean * x.sum(),
        lambda m, x: m.variance * x.sum(),
    ],
    ids=["log_prob", "cdf", "mean", "variance"],
)
def test_gaussian_mixture_against_torch_and_finite_differences(quantity):
    check_op(
        lambda T, logits, loc, scale, x: quantity(gaussian_mixture(T, logits, loc, scale), x),
        WEIGHT_LOGITS,
        LOCS,
        SCALES,
        POINTS,
        atol=1e-9,
        rtol=1e-9,
    )


def test_multivariate_components_and_broadcast_mixture():
    rng = np.random.default_rng(1)
    loc, scale = rng.normal(size=(4, 3, 2)), rng.uniform(0.5, 1.5, size=(4, 3, 2))
    logits, x = rng.normal(size=3), rng.normal(size=(5, 4, 2))

    def log_prob(T, logits, loc, scale, x):
        D = T.distributions
        components = D.Independent(D.Normal(loc, scale), 1)
        return D.MixtureSameFamily(D.Categorical(logits=logits), components).log_prob(x)

    check_op(log_prob, logits, loc, scale, x, atol=1e-9, rtol=1e-9)
    mixture = fd.MixtureSameFamily(
        fd.Categorical(logits=fg.tensor(logits)),
        fd.Independent(fd.Normal(fg.tensor(loc), fg.tensor(scale)), 1),
    )
    assert mixture.batch_shape == (4,) and mixture.event_shape == (2,)
    assert mixture.sample((7,)).shape == (7, 4, 2) and mixture.mean.shape == (4, 2)
    assert mixture.expand((6, 4)).batch_shape == (6, 4)


def test_samples_follow_the_mixture():
    fg.manual_seed(0)
    weights = fg.tensor([0.2, 0.8])
    mixture = fd.MixtureSameFamily(
        fd.Categorical(weights), fd.Normal(fg.tensor([-5.0, 5.0]), fg.tensor([0.1, 0.1]))
    )
    samples = mixture.sample((4000,))
    assert samples.shape == (4000,) and not samples.requires_grad
    share_high = float((samples > 0).float().mean())
    assert abs(share_high - 0.8) < 0.03
    assert abs(float(samples.mean()) - float(mixture.mean)) < 0.2
    assert abs(float(samples.var()) - float(mixture.variance)) < 1.0
    assert mixture.support is mixture.component_distribution.support and not mixture.has_rsample


def test_mixture_errors_and_repr():
    normal2 = fd.Normal(fg.zeros(2), fg.ones(2))
    cases = [
        ((fd.Normal(0.0, 1.0), normal2), "needs to be an  instance of ferrograd.distributions.Categorical"),
        ((fd.Categorical(fg.ones(2)), 3), "needs to be an instance of ferrograd.distributions.Distribution"),
        ((fd.Categorical(fg.ones(3)), normal2), r"`mixture_distribution component` \(3\) does not equal"),
        (
            (fd.Categorical(fg.ones(4, 2)), fd.Normal(fg.zeros(3, 2), fg.ones(3, 2))),
            r"`mixture_distribution.batch_shape` \(torch.Size\(\[4\]\)\) is not compatible",
        ),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            fd.MixtureSameFamily(*args)
    text = repr(fd.MixtureSameFamily(fd.Categorical(fg.ones(2)), normal2))
    assert text.splitlines() == [
        "MixtureSameFamily(",
        "  Categorical(probs: torch.Size([2]), logits: torch.Size([2])),",
        "  Normal(loc: torch.Size([2]), scale: torch.Size([2])))",
    ]


CONCENTRATION = np.array([0.8, 2.5, 4.0])
RATE = np.array([1.5, 0.7, 3.0])


@pytest.mark.parametrize(
    "quantity",
    [
        lambda d, x: d.log_prob(x),
        lambda d, x: d.entropy() * x.sum(),
        lambda d, x: d.mode * x.sum(),
    ],
    ids=["log_prob", "entropy", "mode"],
)
def test_inverse_gamma(quantity):
    check_op(
        lambda T, c, r, x: quantity(T.distributions.InverseGamma(c, r), x),
        CONCENTRATION,
        RATE,
        np.array([0.4, 1.2, 2.5]),
        atol=1e-9,
        rtol=1e-9,
    )


def test_inverse_gamma_moments_and_samples():
    d = fd.InverseGamma(fg.tensor(CONCENTRATION), fg.tensor(RATE))
    mean, variance = d.mean.tolist(), d.variance.tolist()
    assert mean[0] == math.inf and variance[0] == math.inf and math.isfinite(variance[1])
    assert mean[2] == pytest.approx(3.0 / 3.0) and variance[2] == pytest.approx(9.0 / (9.0 * 2.0))
    assert variance[1] == pytest.approx(0.7**2 / (1.5**2 * 0.5))
    fg.manual_seed(2)
    concentration = fg.tensor([6.0], requires_grad=True)
    samples = fd.InverseGamma(concentration, fg.tensor([5.0])).rsample((20000,))
    assert abs(float(samples.mean()) - 1.0) < 0.05 and bool((samples > 0).all())
    samples.mean().backward()
    assert concentration.grad is not None and float(concentration.grad) < 0
    if has_torch:
        reference = torch.distributions.InverseGamma(torch.tensor(CONCENTRATION), torch.tensor(RATE))
        np.testing.assert_allclose(d.mean.numpy(), reference.mean.numpy())
        np.testing.assert_allclose(d.variance.numpy(), reference.variance.numpy())


def test_one_hot_straight_through():
    fg.manual_seed(3)
    logits = fg.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    d = fd.OneHotCategoricalStraightThrough(logits=logits)
    sample = d.rsample((5,))
    assert sample.shape == (5, 1, 3) and sample.detach().sum(-1).tolist() == [[1.0]] * 5
    weights = fg.tensor([1.0, 2.0, 3.0])
    (sample * weights).sum().backward()
    probs = logits.detach().softmax(-1)
    # The gradient is that of 5 * <probs, weights>: probs * (weights - <probs, weights>).
    expected = 5 * probs * (weights - (probs * weights).sum())
    np.testing.assert_allclose(logits.grad.numpy(), expected.numpy(), rtol=1e-5)
    assert d.has_rsample and isinstance(d, fd.OneHotCategorical)


class NaturalNormal(fd.ExponentialFamily):
    """A normal distribution given only through its natural parameters."""

    arg_constraints = {}

    def __init__(self, loc, scale):
        self.loc, self.scale = loc, scale
        super().__init__(tuple(loc.shape), validate_args=False)

    @property
    def _natural_params(self):
        return (self.loc / self.scale**2, -0.5 / self.scale**2)

    def _log_normalizer(self, eta1, eta2):
        return -0.25 * eta1**2 / eta2 + 0.5 * (-math.pi / eta2).log()

    @property
    def _mean_carrier_measure(self):
        return 0


def test_exponential_family_entropy_from_natural_parameters():
    loc, scale = fg.tensor([0.5, -1.0], dtype=fg.float64), fg.tensor([0.3, 2.0], dtype=fg.float64)
    np.testing.assert_allclose(
        NaturalNormal(loc, scale).entropy().detach().numpy(), fd.Normal(loc, scale).entropy().numpy()
    )
    for family in (
        fd.Bernoulli,
        fd.Beta,
        fd.ContinuousBernoulli,
        fd.Dirichlet,
        fd.Exponential,
        fd.Gamma,
        fd.Normal,
        fd.Poisson,
    ):
        assert issubclass(family, fd.ExponentialFamily)
    assert not issubclass(fd.Categorical, fd.ExponentialFamily)


def test_samples_with_a_mixture_batch_shorter_than_the_components():
    fg.manual_seed(4)
    locs = fg.tensor([[0.0, 10.0], [20.0, 30.0], [40.0, 50.0]])  # batch of 3, two components each
    mixture = fd.MixtureSameFamily(
        fd.Categorical(fg.tensor([0.0, 1.0])), fd.Normal(locs, fg.full((3, 2), 1e-6))
    )
    samples = mixture.sample((4,))
    assert samples.shape == (4, 3)
    np.testing.assert_allclose(samples.numpy(), np.tile([10.0, 30.0, 50.0], (4, 1)), atol=1e-3)


def test_gamma_and_inverse_gamma_cdf():
    def cdf(T, rate, x, family):
        D = T.distributions
        return getattr(D, family)(T.tensor(CONCENTRATION), rate).cdf(x)

    for family in ("Gamma", "InverseGamma"):
        check_op(
            lambda T, r, x, family=family: cdf(T, r, x, family),
            RATE,
            np.array([0.4, 1.2, 2.5]),
            atol=1e-9,
            rtol=1e-9,
        )
    with pytest.raises(ValueError, match="within the support"):
        fd.Gamma(fg.tensor([2.0]), fg.tensor([3.0]), validate_args=True).cdf(fg.tensor([-0.5]))


LR_LOC = np.array([[0.2, -0.4, 1.0, 0.0], [1.5, 0.3, -0.7, 0.2]])
LR_FACTOR = np.array(
    [[[0.5, -0.2], [0.1, 0.9], [-0.6, 0.3], [0.2, 0.4]], [[1.0, 0.0], [0.3, -0.5], [0.2, 0.2], [-0.4, 0.7]]]
)
LR_DIAG = np.array([[0.8, 1.2, 0.5, 1.0], [0.6, 0.9, 1.4, 0.7]])


@pytest.mark.parametrize(
    "quantity",
    [
        lambda d, x: d.log_prob(x),
        lambda d, x: d.entropy() * x.sum(),
        lambda d, x: d.precision_matrix.sum((-2, -1)) * x.sum(),
        lambda d, x: d.variance * x,
    ],
    ids=["log_prob", "entropy", "precision", "variance"],
)
def test_low_rank_multivariate_normal(quantity):
    points = np.array(
        [[[0.3, -1.0, 0.5, 0.8], [1.0, 0.0, -0.2, 0.4]], [[-0.5, 0.6, 1.1, -0.3], [0.1, 0.9, 0.0, 0.0]]]
    )
    check_op(
        lambda T, loc, w, d, x: quantity(T.distributions.LowRankMultivariateNormal(loc, w, d), x),
        LR_LOC,
        LR_FACTOR,
        LR_DIAG,
        points,
        atol=1e-9,
        rtol=1e-9,
    )


def test_low_rank_multivariate_normal_samples_and_errors():
    fg.manual_seed(5)
    d = fd.LowRankMultivariateNormal(fg.tensor(LR_LOC[0]), fg.tensor(LR_FACTOR[0]), fg.tensor(LR_DIAG[0]))
    samples = d.rsample((20000,)).numpy()
    np.testing.assert_allclose(np.cov(samples.T), d.covariance_matrix.numpy(), atol=0.08)
    full = fd.MultivariateNormal(fg.tensor(LR_LOC[0]), covariance_matrix=d.covariance_matrix)
    np.testing.assert_allclose(
        d.log_prob(fg.tensor(samples[:5])).numpy(), full.log_prob(fg.tensor(samples[:5])).numpy()
    )
    assert d.expand((3,)).batch_shape == (3,) and d.mean is d.loc
    with pytest.raises(ValueError, match="loc must be at least one-dimensional"):
        fd.LowRankMultivariateNormal(fg.tensor(1.0), fg.ones(1, 1), fg.ones(1))
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices with shape 4 x m"):
        fd.LowRankMultivariateNormal(fg.zeros(4), fg.ones(3, 2), fg.ones(4))
    with pytest.raises(ValueError, match="cov_diag must be a batch of vectors with shape"):
        fd.LowRankMultivariateNormal(fg.zeros(4), fg.ones(4, 2), fg.ones(3))


def test_kl_with_low_rank_normals():
    def kl(T, loc, w, d, loc2, w2, d2):
        D = T.distributions
        low_rank = D.LowRankMultivariateNormal(loc, w, d)
        other = D.LowRankMultivariateNormal(loc2, w2, d2)
        full = D.MultivariateNormal(loc2, covariance_matrix=other.covariance_matrix)
        return (
            D.kl_divergence(low_rank, other)
            + 2 * D.kl_divergence(low_rank, full)
            + 3 * D.kl_divergence(full, low_rank)
        )

    check_op(
        kl, LR_LOC, LR_FACTOR, LR_DIAG, LR_LOC[::-1], LR_FACTOR[::-1], LR_DIAG[::-1], atol=1e-9, rtol=1e-9
    )
    a = fd.LowRankMultivariateNormal(fg.zeros(3), fg.ones(3, 1), fg.ones(3))
    with pytest.raises(ValueError, match="different event shapes cannot be computed"):
        fd.kl_divergence(a, fd.MultivariateNormal(fg.zeros(2), fg.eye(2)))
    assert float(fd.kl_divergence(a, a)) == pytest.approx(0.0, abs=1e-6)

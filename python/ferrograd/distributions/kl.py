"""KL divergence ``KL(p || q)`` with a registry of closed forms."""

from __future__ import annotations

import math

import ferrograd as _fg

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import euler_constant, sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}
_KL_MEMOIZE: dict = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as ``KL(p || q)`` for the two classes.

    Lookup picks the most specific registered pair by method resolution order."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


def _dispatch_kl(type_p, type_q):
    matches = [
        (super_p, super_q)
        for super_p, super_q in _KL_REGISTRY
        if issubclass(type_p, super_p) and issubclass(type_q, super_q)
    ]
    if not matches:
        return NotImplemented

    def rank(pair):
        return (type_p.__mro__.index(pair[0]), type_q.__mro__.index(pair[1]))

    best = min(matches, key=rank)
    return _KL_REGISTRY[best]


def kl_divergence(p, q):
    """``KL(p || q)`` summed over event dims, with shape ``batch_shape``."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type {q.__class__.__name__}"
        )
    return fun(p, q)


def _infinite_like(t):
    return _fg.full_like(t, math.inf)


_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _fg.where((q.probs == 0).expand_as(t), _infinite_like(t), t)
    t = _fg.where((p.probs == 0).expand_as(t), _fg.zeros_like(t), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


def _bernoulli_term(weight, q_logits, p_logits, q_impossible, p_impossible):
    softplus = _fg.nn.functional.softplus
    t = weight * (softplus(q_logits) - softplus(p_logits))
    t = _fg.where(q_impossible, _infinite_like(t), t)
    return _fg.where(p_impossible, _fg.zeros_like(t), t)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = _bernoulli_term(p.probs, -q.logits, -p.logits, q.probs == 0, p.probs == 0)
    t2 = _bernoulli_term(1 - p.probs, q.logits, p.logits, q.probs == 1, p.probs == 1)
    return t1 + t2


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    kl = p.total_count * _kl_bernoulli_bernoulli(Bernoulli(p.probs), Bernoulli(q.probs))
    return _fg.where(p.total_count > q.total_count, _infinite_like(kl), kl)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return _fg.where(outside, _infinite_like(result), result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * _fg.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event shapes cannot be computed"
        )
    n = p.event_shape[0]
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = q._half_log_det() - p._half_log_det()
    batch = _fg.broadcast_shapes(tuple(lq.shape[:-2]), tuple(lp.shape[:-2]))
    solved = _fg.linalg.solve_triangular(lq.expand(batch + (n, n)), lp.expand(batch + (n, n)), upper=False)
    term2 = solved.pow(2).sum((-2, -1))
    term3 = _batch_mahalanobis(lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


def _as_full_normal(d):
    """A low-rank normal as the ``MultivariateNormal`` of its whole covariance."""
    return (
        MultivariateNormal(d.loc, covariance_matrix=d.covariance_matrix)
        if isinstance(d, LowRankMultivariateNormal)
        else d
    )


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_with_low_rank_normal(p, q):
    # Through the whole covariance: O(n^3) where the low-rank form allows O(n r^2).
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two (Low Rank) Multivariate Normals with different event shapes cannot be computed"
        )
    return _kl_multivariatenormal_multivariatenormal(_as_full_normal(p), _as_full_normal(q))


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = _fg.lgamma(q.concentration) - _fg.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * _fg.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


def _kl_dirichlet_concentrations(cp, cq):
    sum_p = cp.sum(-1)
    sum_q = cq.sum(-1)
    t1 = _fg.lgamma(sum_p) - _fg.lgamma(sum_q)
    t2 = (_fg.lgamma(cp) - _fg.lgamma(cq)).sum(-1)
    t3 = cp - cq
    t4 = _fg.digamma(cp) - _fg.digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    return _kl_dirichlet_concentrations(p.concentration, q.concentration)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return _kl_dirichlet_concentrations(p._concentration, q._concentration)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - _fg.log1p(-q.probs) / p.probs - q.logits


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    extra_event_dim = len(p.event_shape) - len(p.base_dist.event_shape)
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra_event_dim)


# ----------------------------------------------------------------------------- newer families


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    numerator = (p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)
    return (numerator / (4 * p.scale * q.scale)).log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ratio = p.scale / q.scale
    shift = (p.loc - q.loc) / q.scale
    tail = (_fg.lgamma(1 + ratio) - shift).exp()
    return -ratio.log() + shift + euler_constant * (ratio - 1) + tail - 1


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    return 0.5 * (var_ratio - 1 - var_ratio.log())


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    # E_p[log x] = log(p.scale) + 1 / p.alpha
    alpha_ratio = q.alpha / p.alpha
    result = -alpha_ratio.log() + q.alpha * (p.scale / q.scale).log() + alpha_ratio - 1
    return _fg.where(p.scale < q.scale, _infinite_like(result), result)


def _cb_log_density_terms(q):
    """``(natural parameter, log(1 - probs) + log C)`` of a continuous Bernoulli:
    ``log q(x) = x * eta + base``."""
    return q.logits, _fg.log1p(-q.probs) + q._cont_bern_log_norm()


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    eta_p, base_p = _cb_log_density_terms(p)
    eta_q, base_q = _cb_log_density_terms(q)
    return p.mean * (eta_p - eta_q) + base_p - base_q


def _cross_entropy_normal(q, mean, variance):
    """``-E[log q(x)]`` for a Normal ``q`` and ``x`` with the given moments."""
    return _HALF_LOG_2PI + q.scale.log() + (variance + (mean - q.loc).pow(2)) / (2 * q.scale.pow(2))


def _cross_entropy_gumbel(q, mean, neg_exp_moment):
    """``-E[log q(x)]`` for a Gumbel ``q`` given ``E[x]`` and ``E[exp(-x / q.scale)]``."""
    return q.scale.log() + (mean - q.loc) / q.scale + (q.loc / q.scale).exp() * neg_exp_moment


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    eta, base = _cb_log_density_terms(q)
    return -p.entropy() - p.mean * eta - base


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    return -p.entropy() + _cross_entropy_normal(q, p.mean, p.variance)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = (q.low > 0) | (q.high < 1)
    return _fg.where(outside, _infinite_like(result), result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    eta, base = _cb_log_density_terms(q)
    result = -p.entropy() - p.mean * eta - base
    outside = (p.low < 0) | (p.high > 1)
    return _fg.where(outside, _infinite_like(result), result)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    rate_scale = p.rate * q.scale
    return -p.entropy() + _cross_entropy_gumbel(q, p.mean, rate_scale / (rate_scale + 1))


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    moment = (-p.concentration * _fg.log1p((p.rate * q.scale).reciprocal())).exp()
    return -p.entropy() + _cross_entropy_gumbel(q, p.mean, moment)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    moment = (-p.loc / q.scale + 0.5 * (p.scale / q.scale).pow(2)).exp()
    return -p.entropy() + _cross_entropy_gumbel(q, p.loc, moment)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    width = p.high - p.low
    moment = q.scale * ((-p.low / q.scale).exp() - (-p.high / q.scale).exp()) / width
    return -p.entropy() + _cross_entropy_gumbel(q, p.mean, moment)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    return -p.entropy() + _cross_entropy_normal(q, p.mean, p.variance)


def _pareto_moments(p):
    """``(mean, variance)`` of a Pareto, infinite where they diverge."""
    mean = _fg.where(p.alpha > 1, p.mean, _infinite_like(p.mean))
    variance = _fg.where(p.alpha > 2, p.variance, _infinite_like(p.variance))
    return mean, variance


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    mean, _ = _pareto_moments(p)
    return -p.entropy() - q.rate.log() + q.rate * mean


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    mean, _ = _pareto_moments(p)
    mean_log = p.scale.log() + p.alpha.reciprocal()
    a, b = q.concentration, q.rate
    cross = _fg.lgamma(a) - a * b.log() - (a - 1) * mean_log + b * mean
    return -p.entropy() + cross


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    mean, variance = _pareto_moments(p)
    return -p.entropy() + _cross_entropy_normal(q, mean, variance)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    # E_p[log x] = (b log b - a log a) / (b - a) - 1
    a, b = p.low, p.high
    mean_log = (_fg.xlogy(b, b) - _fg.xlogy(a, a)) / (b - a) - 1
    cross = -q.alpha.log() - q.alpha * q.scale.log() + (q.alpha + 1) * mean_log
    result = -p.entropy() + cross
    return _fg.where(p.low < q.scale, _infinite_like(result), result)


def _kl_infinite(p, q):
    """``KL = inf``: ``p`` puts mass where ``q`` has none."""
    shape = _fg.broadcast_shapes(tuple(p.batch_shape), tuple(q.batch_shape))
    return _fg.full(shape, math.inf, dtype=p.mean.dtype)


for _p, _q in [
    (Beta, Pareto),
    (ContinuousBernoulli, Pareto),
    (Exponential, ContinuousBernoulli),
    (Exponential, Pareto),
    (Gamma, ContinuousBernoulli),
    (Gamma, Pareto),
    (Gumbel, Beta),
    (Gumbel, ContinuousBernoulli),
    (Gumbel, Exponential),
    (Gumbel, Gamma),
    (Gumbel, Pareto),
    (Gumbel, Uniform),
    (Laplace, ContinuousBernoulli),
    (Laplace, Pareto),
    (Normal, ContinuousBernoulli),
    (Normal, Pareto),
    (Pareto, Beta),
    (Pareto, ContinuousBernoulli),
    (Pareto, Uniform),
]:
    register_kl(_p, _q)(_kl_infinite)

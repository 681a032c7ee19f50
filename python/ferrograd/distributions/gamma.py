"""Gamma distribution and the Marsaglia-Tsang sampler shared with Beta and Dirichlet."""

from __future__ import annotations

import math

import ferrograd as _fg

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]

_MAX_REJECTION_ROUNDS = 1000


def _standard_gamma(concentration):
    """Draw Gamma(concentration, 1) samples of the same shape, without gradient.

    Marsaglia & Tsang's squeeze/rejection method, vectorized: every round draws
    candidates for all positions and keeps the first accepted one. For
    ``concentration < 1`` a Gamma(concentration + 1) draw is scaled by
    ``U ** (1 / concentration)``."""
    with _fg.no_grad():
        alpha = concentration.detach()
        dtype = alpha.dtype
        boost = alpha < 1
        a = _fg.where(boost, alpha + 1, alpha)
        d = a - 1.0 / 3.0
        c = 1.0 / (9.0 * d).sqrt()
        result = _fg.zeros_like(alpha)
        done = _fg.zeros(alpha.shape, dtype=_fg.bool)
        for _ in range(_MAX_REJECTION_ROUNDS):
            x = _fg.randn(alpha.shape, dtype=dtype)
            u = _fg.rand(alpha.shape, dtype=dtype)
            v = (1 + c * x) ** 3
            positive = v > 0
            v_safe = _fg.where(positive, v, _fg.ones_like(v))
            accept = positive & (u.log() < 0.5 * x * x + d - d * v_safe + d * v_safe.log())
            take = accept & ~done
            result = _fg.where(take, d * v_safe, result)
            done = done | accept
            if bool(done.all()):
                break
        u = _fg.rand(alpha.shape, dtype=dtype)
        scale = _fg.where(boost, u.pow(1.0 / alpha), _fg.ones_like(alpha))
        tiny = _fg.finfo(dtype).tiny
        return (result * scale).clamp(min=tiny)


def _log_gamma_cdf(alpha, x):
    """log P(alpha, x), the regularized lower incomplete gamma function, from the
    series ``P = x^a e^-x sum_n x^n / Gamma(a + n + 1)`` summed in log space.

    Differentiable in ``alpha`` through ``lgamma``; enough terms are taken for
    the largest ``x`` (the terms peak near ``n = x - alpha``)."""
    x = x.clamp(min=_fg.finfo(x.dtype).tiny)
    x_max = float(x.max()) if x.numel() else 0.0
    terms = int(x_max + 12.0 * math.sqrt(x_max) + 40)
    n = _fg.arange(terms, dtype=x.dtype)
    a, xs = alpha.unsqueeze(-1), x.unsqueeze(-1)
    log_terms = (a + n) * xs.log() - xs - _fg.lgamma(a + n + 1)
    return log_terms.logsumexp(-1)


class _StandardGammaSample(_fg.autograd.Function):
    """Gamma(alpha, 1) draws with implicit reparameterization gradients:
    ``dx/dalpha = -(dF/dalpha)(x) / f(x)`` for the CDF ``F`` and density ``f``."""

    @staticmethod
    def forward(ctx, alpha):
        x = _standard_gamma(alpha)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        alpha, x = ctx.saved_tensors
        with _fg.enable_grad():
            a = alpha.detach().requires_grad_()
            log_cdf = _log_gamma_cdf(a, x.detach())
            (dlog_cdf,) = _fg.autograd.grad(log_cdf.sum(), [a])
        with _fg.no_grad():
            a = alpha.detach()
            log_pdf = (a - 1) * x.log() - x - _fg.lgamma(a)
            dx_dalpha = -(log_cdf.detach() - log_pdf).exp() * dlog_cdf
        return grad_output * dx_dalpha


def standard_gamma_rsample(concentration):
    """Gamma(concentration, 1) samples, differentiable in ``concentration``."""
    if concentration.requires_grad and _fg.is_grad_enabled():
        return _StandardGammaSample.apply(concentration)
    return _standard_gamma(concentration)


class Gamma(ExponentialFamily):
    """Gamma distribution with shape ``concentration`` and ``rate`` (inverse scale)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(tuple(self.concentration.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return standard_gamma_rsample(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return _fg.xlogy(a, b) + _fg.xlogy(a - 1, value) - b * value - _fg.lgamma(a)

    def cdf(self, value):
        """The regularised lower incomplete gamma function of ``rate * value``; differentiable
        in ``value`` and ``rate`` (not in ``concentration``, as in PyTorch)."""
        if self._validate_args:
            self._validate_sample(value)
        return _fg.special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        a = self.concentration
        return a - _fg.log(self.rate) + _fg.lgamma(a) + (1.0 - a) * _fg.digamma(a)

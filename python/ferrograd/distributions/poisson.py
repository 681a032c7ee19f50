"""Poisson distribution."""

from __future__ import annotations

import math

import ferrograd as _fg

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]

_CHUNK_RATE = 16.0  # larger rates are split into sums of Poisson(<= 16) draws


def _sample_poisson(rate):
    """Poisson draws of the shape of ``rate`` by sequential CDF inversion.

    Large rates are split into ``m`` equal parts (a sum of independent Poisson
    variables is Poisson), so the inversion loop stays short and
    ``exp(-rate)`` never underflows."""
    with _fg.no_grad():
        rate = rate.detach()
        max_rate = float(rate.max()) if rate.numel() else 0.0
        parts = max(1, math.ceil(max_rate / _CHUNK_RATE))
        lam = (rate / parts).unsqueeze(-1).expand(tuple(rate.shape) + (parts,))
        u = _fg.rand(lam.shape, dtype=lam.dtype)
        k = _fg.zeros_like(lam)
        pmf = _fg.exp(-lam)
        cdf = pmf.clone()
        for i in range(1, 10_000):
            active = u > cdf
            if not bool(active.any()):
                break
            k = k + active.to(k.dtype)
            pmf = pmf * lam / i
            cdf = cdf + pmf
            if not bool((pmf > 0).any()):  # rounding left u above the reachable CDF
                break
        return k.sum(-1)


class Poisson(ExponentialFamily):
    """Poisson distribution with ``rate`` (mean number of events)."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Poisson, batch_shape, ("rate",), _instance)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _sample_poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return _fg.xlogy(value, rate) - rate - _fg.lgamma(value + 1)

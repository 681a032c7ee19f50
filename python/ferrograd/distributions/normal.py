"""Normal (Gaussian) distribution."""

from __future__ import annotations

import math

import ferrograd as _fg

from ._bases import LocScale
from .exp_family import ExponentialFamily

__all__ = ["Normal"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Normal(LocScale, ExponentialFamily):
    """Normal distribution parameterized by ``loc`` (mean) and ``scale`` (standard deviation)."""

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Normal, batch_shape, ("loc", "scale"), _instance)

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _fg.randn(shape, dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - _LOG_SQRT_2PI

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + _fg.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * _fg.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + _LOG_SQRT_2PI + _fg.log(self.scale)

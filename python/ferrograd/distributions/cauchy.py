"""Cauchy (Lorentz) distribution."""

from __future__ import annotations

import math

import ferrograd as _fg

from ._bases import LocScale

__all__ = ["Cauchy"]


class Cauchy(LocScale):
    """Cauchy distribution with median ``loc`` and half width at half maximum ``scale``."""

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Cauchy, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self):
        return _fg.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def variance(self):
        return _fg.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with _fg.no_grad():
            eps = _fg.empty(shape, dtype=self.loc.dtype).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _fg.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return _fg.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()

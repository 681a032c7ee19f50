"""Laplace distribution."""

from __future__ import annotations

import math

import ferrograd as _fg

from ._bases import LocScale

__all__ = ["Laplace"]


class Laplace(LocScale):
    """Laplace distribution parameterized by ``loc`` and ``scale``."""

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Laplace, batch_shape, ("loc", "scale"), _instance)

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = _fg.finfo(self.loc.dtype).eps
        with _fg.no_grad():
            u = _fg.rand(shape, dtype=self.loc.dtype) * (2 - tiny) - (1 - tiny)  # in (-1, 1)
        return self.loc - self.scale * u.sign() * _fg.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -_fg.log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * _fg.expm1(-z.abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * _fg.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + _fg.log(2 * self.scale)

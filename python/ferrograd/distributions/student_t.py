"""Student's t-distribution."""

from __future__ import annotations

import math

import ferrograd as _fg

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, location ``loc`` and ``scale``."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(tuple(self.df.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(StudentT, batch_shape, ("df", "loc", "scale"), _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return _fg.where(self.df <= 1, _fg.full_like(self.loc, math.nan), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        big = df > 2
        safe_df = _fg.where(big, df, _fg.full_like(df, 3.0))
        var = self.scale.pow(2) * safe_df / (safe_df - 2)
        var = _fg.where(big, var, _fg.full_like(var, math.inf))
        return _fg.where(df <= 1, _fg.full_like(var, math.nan), var)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = _fg.randn(shape, dtype=self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        y = x * _fg.rsqrt(z / self.df)
        return self.loc + self.scale * y

    def _log_beta_half(self):
        """``log B(df / 2, 1 / 2)``."""
        half = 0.5 * self.df
        return _fg.lgamma(half) + math.lgamma(0.5) - _fg.lgamma(half + 0.5)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z2 = ((value - self.loc) / self.scale).pow(2)
        log_norm = self.scale.log() + 0.5 * self.df.log() + self._log_beta_half()
        return -0.5 * (self.df + 1) * _fg.log1p(z2 / self.df) - log_norm

    def entropy(self):
        half = 0.5 * self.df
        digamma_gap = _fg.digamma(half + 0.5) - _fg.digamma(half)
        return self.scale.log() + 0.5 * self.df.log() + self._log_beta_half() + (half + 0.5) * digamma_gap

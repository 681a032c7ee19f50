"""Fisher-Snedecor (F) distribution."""

from __future__ import annotations

import math

import ferrograd as _fg

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """F-distribution with ``df1`` and ``df2`` degrees of freedom."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(tuple(self.df1.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(FisherSnedecor, batch_shape, ("df1", "df2"), _instance)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = _fg.where(self.df2 <= 2, _fg.full_like(self.df2, math.nan), self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return _fg.where(self.df1 <= 2, _fg.full_like(mode, math.nan), mode)

    @property
    def variance(self):
        df2 = _fg.where(self.df2 <= 4, _fg.full_like(self.df2, math.nan), self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = _fg.finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = 0.5 * self.df1, 0.5 * self.df2
        log_beta = _fg.lgamma(half1) + _fg.lgamma(half2) - _fg.lgamma(half1 + half2)
        ratio = self.df1 / self.df2
        # x^(d1/2 - 1) (d1/d2)^(d1/2) (1 + x d1/d2)^-((d1 + d2)/2) / B(d1/2, d2/2)
        return (
            half1 * ratio.log()
            + _fg.xlogy(half1 - 1, value)
            - (half1 + half2) * _fg.log1p(ratio * value)
            - log_beta
        )

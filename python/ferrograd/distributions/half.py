"""Half-normal and half-Cauchy distributions: ``|X|`` for a centred ``X``."""

from __future__ import annotations

import math

import ferrograd as _fg

from . import constraints
from .cauchy import Cauchy
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy", "HalfNormal"]


class _Folded(TransformedDistribution):
    """``|X|`` with ``X ~ base(0, scale)`` for a symmetric location/scale ``base``."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base_cls: type = Normal

    def __init__(self, scale, validate_args=None) -> None:
        base_dist = self._base_cls(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(_Folded, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return _fg.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return _fg.where(value >= 0, log_prob, _fg.full_like(log_prob, -math.inf))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """``|X|`` with ``X ~ Normal(0, scale)``."""

    _base_cls = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    """``|X|`` with ``X ~ Cauchy(0, scale)``."""

    _base_cls = Cauchy

    @property
    def mean(self):
        return _fg.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        return self.base_dist.variance

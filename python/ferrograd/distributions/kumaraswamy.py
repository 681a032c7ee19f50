"""Kumaraswamy distribution on the unit interval."""

from __future__ import annotations

import math

import ferrograd as _fg

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """The ``n``-th raw moment ``b * B(1 + n / a, b)``."""
    arg1 = 1 + n / a
    log_value = _fg.lgamma(arg1) + _fg.lgamma(b) - _fg.lgamma(arg1 + b)
    return b * _fg.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """``(1 - U ** (1 / concentration0)) ** (1 / concentration1)`` for ``U ~ Uniform(0, 1)``."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(
            _fg.full_like(self.concentration0, 0),
            _fg.full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # argmax of the density: ((a - 1) / (a b - 1)) ** (1 / a) for a, b >= 1 (not both 1)
        a, b = self.concentration1, self.concentration0
        log_mode = ((a - 1).log() - (a * b - 1).log()) / a
        undefined = (a < 1) | (b < 1) | ((a == 1) & (b == 1))
        return _fg.where(undefined, _fg.full_like(log_mode, math.nan), log_mode.exp())

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - _fg.pow(self.mean, 2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = _fg.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * h0 - _fg.log(self.concentration1) - _fg.log(self.concentration0)

"""Two-parameter Weibull distribution."""

from __future__ import annotations

import ferrograd as _fg

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


def _weibull_transforms(scale, concentration_reciprocal):
    return [PowerTransform(exponent=concentration_reciprocal), AffineTransform(loc=0, scale=scale)]


class Weibull(TransformedDistribution):
    """``scale * E ** (1 / concentration)`` with ``E ~ Exponential(1)``."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(_fg.ones_like(self.scale), validate_args=validate_args)
        transforms = _weibull_transforms(self.scale, self.concentration_reciprocal)
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = _weibull_transforms(new.scale, new.concentration_reciprocal)
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * _fg.exp(_fg.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()

    @property
    def variance(self):
        return self.scale.pow(2) * (
            _fg.exp(_fg.lgamma(1 + 2 * self.concentration_reciprocal))
            - _fg.exp(2 * _fg.lgamma(1 + self.concentration_reciprocal))
        )

    def entropy(self):
        return (
            euler_constant * (1 - self.concentration_reciprocal)
            + _fg.log(self.scale * self.concentration_reciprocal)
            + 1
        )

"""Beta distribution."""

from __future__ import annotations

import ferrograd as _fg

from . import constraints
from .dirichlet import _dirichlet_entropy, _dirichlet_log_prob, _dirichlet_mode
from .exp_family import ExponentialFamily
from .gamma import standard_gamma_rsample
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """Beta distribution with ``concentration1`` (alpha) and ``concentration0`` (beta)."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        super().__init__(tuple(self.concentration1.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Beta, batch_shape, ("concentration1", "concentration0"), _instance)

    @property
    def _concentration(self):
        return _fg.stack([self.concentration1, self.concentration0], -1)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return _dirichlet_mode(self._concentration)[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = standard_gamma_rsample(self.concentration1.expand(shape))
        y = standard_gamma_rsample(self.concentration0.expand(shape))
        return x / (x + y)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _dirichlet_log_prob(self._concentration, _fg.stack([value, 1.0 - value], -1))

    def entropy(self):
        return _dirichlet_entropy(self._concentration)

"""Negative binomial distribution."""

from __future__ import annotations

import ferrograd as _fg

from . import constraints
from ._bases import BinaryParam
from .gamma import Gamma
from .poisson import _sample_poisson
from .utils import lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryParam):
    """Number of successes (each with probability ``probs``) before ``total_count`` failures."""

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None) -> None:
        (total_count,) = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(tuple(self._param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(NegativeBinomial, batch_shape, _instance, extra=("total_count",))

    @property
    def mean(self):
        return self.total_count * _fg.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / _fg.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=_fg.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=()):
        with _fg.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return _sample_poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, k = self.total_count, value
        logsigmoid = _fg.nn.functional.logsigmoid
        # log C(n + k - 1, k) + n log(1 - p) + k log p; the coefficient is 0 when n + k = 0
        log_coef = _fg.lgamma(n + k) - _fg.lgamma(k + 1) - _fg.lgamma(n)
        log_coef = _fg.where(n + k == 0, _fg.zeros_like(log_coef), log_coef)
        return log_coef + n * logsigmoid(-self.logits) + k * logsigmoid(self.logits)

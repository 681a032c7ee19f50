"""Multinomial distribution."""

from __future__ import annotations

import math

import ferrograd as _fg

from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts of each of ``K`` categories in ``total_count`` independent Categorical draws."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = tuple(self._categorical.param_shape[-1:])
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = tuple(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new.probs)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self) -> tuple:
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        sample_shape = tuple(sample_shape)
        k = self._event_shape[0]
        with _fg.no_grad():
            # (total_count,) + sample_shape + batch_shape category indices, one-hot and summed
            draws = self._categorical.sample((self.total_count,) + sample_shape)
            counts = _fg.nn.functional.one_hot(draws, num_classes=k).sum(0)
            return counts.reshape(self._extended_shape(sample_shape)).type_as(self.probs)

    def entropy(self):
        # H = log n! - n * sum_k p_k log p_k ... written as
        # n * H(categorical) - log n! + sum_k E[log x_k!] with x_k ~ Binomial(n, p_k)
        n = float(self.total_count)
        counts = self._binomial.enumerate_support(expand=False)[1:]  # x_k = 0 adds log 0! = 0
        expected_log_factorials = (
            (self._binomial.log_prob(counts).exp() * _fg.lgamma(counts + 1)).sum(0).sum(-1)
        )
        return n * self._categorical.entropy() - math.lgamma(n + 1) + expected_log_factorials

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # log multinomial coefficient + sum_k x_k log p_k, with 0 * log 0 = 0
        log_coef = _fg.lgamma(value.sum(-1) + 1) - _fg.lgamma(value + 1).sum(-1)
        weighted = _fg.where(value == 0, _fg.zeros_like(logits), value * logits)
        return log_coef + weighted.sum(-1)

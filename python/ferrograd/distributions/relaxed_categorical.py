"""Relaxed (Concrete / Gumbel-softmax) one-hot categorical distributions."""

from __future__ import annotations

import math

import ferrograd as _fg

from . import constraints
from ._bases import RelaxedBaseParams
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs, tensor_like

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a ``RelaxedOneHotCategorical`` sample, with ``temperature``."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = tensor_like(temperature, self._categorical._param)
        batch_shape = self._categorical.batch_shape
        event_shape = tuple(self._categorical.param_shape[-1:])
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = tuple(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @property
    def param_shape(self) -> tuple:
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with _fg.no_grad():
            u = clamp_probs(_fg.rand(shape, dtype=self.logits.dtype))
            gumbel_noise = -(-u.log()).log()
        scores = (self.logits + gumbel_noise) / self.temperature
        return scores.log_softmax(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self._categorical._num_events
        logits, value = broadcast_all(self.logits, value)
        # log (k-1)! + (k-1) log t + sum_i (logits_i - t y_i) - k logsumexp(logits - t y)
        shifted = logits - self.temperature * value
        log_const = math.lgamma(k) + (k - 1) * self.temperature.log()
        return log_const + shifted.sum(-1) - k * shifted.logsumexp(-1)


class RelaxedOneHotCategorical(RelaxedBaseParams, TransformedDistribution):
    """A relaxed one-hot categorical on the simplex (Gumbel-softmax): ``exp`` of an
    ``ExpRelaxedCategorical`` sample; differentiable in ``probs``/``logits``."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)

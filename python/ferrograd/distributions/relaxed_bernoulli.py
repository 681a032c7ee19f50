"""Relaxed (Concrete / Gumbel-sigmoid) Bernoulli distributions."""

from __future__ import annotations

import ferrograd as _fg

from . import constraints
from ._bases import BinaryParam, RelaxedBaseParams
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs, tensor_like

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(BinaryParam):
    """The logit of a ``RelaxedBernoulli`` sample, with ``temperature``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        self._set_probs_or_logits(probs, logits)
        self.temperature = tensor_like(temperature, self._param)
        super().__init__(tuple(self._param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_binary(LogitRelaxedBernoulli, batch_shape, _instance)
        new.temperature = self.temperature
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with _fg.no_grad():
            u = clamp_probs(_fg.rand(shape, dtype=self._param.dtype))
            logistic_noise = u.log() - (-u).log1p()
        # logit(p) + logistic noise, sharpened by the temperature
        probs = clamp_probs(self.probs.expand(shape))
        return (probs.log() - (-probs).log1p() + logistic_noise) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * _fg.nn.functional.softplus(diff)


class RelaxedBernoulli(RelaxedBaseParams, TransformedDistribution):
    """A relaxed Bernoulli on ``(0, 1)``: ``sigmoid`` of a ``LogitRelaxedBernoulli``
    sample; differentiable in ``probs``/``logits`` through ``rsample``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

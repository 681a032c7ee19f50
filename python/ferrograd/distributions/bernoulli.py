"""Bernoulli distribution."""

from __future__ import annotations

import ferrograd as _fg

from . import constraints
from ._bases import BinaryParam
from .exp_family import ExponentialFamily
from .utils import bce_with_logits, broadcast_all

__all__ = ["Bernoulli"]


class Bernoulli(BinaryParam, ExponentialFamily):
    """Bernoulli distribution parameterized by ``probs`` or ``logits`` (not both)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        self._set_probs_or_logits(probs, logits)
        super().__init__(tuple(self._param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(Bernoulli, batch_shape, _instance)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return _fg.where(self.probs == 0.5, _fg.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with _fg.no_grad():
            return _fg.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -bce_with_logits(logits, value.to(logits.dtype))

    def entropy(self):
        return bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand: bool = True):
        values = _fg.arange(2, dtype=self._param.dtype)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values

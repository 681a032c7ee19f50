"""Binomial distribution."""

from __future__ import annotations

import ferrograd as _fg

from . import constraints
from ._bases import BinaryParam

__all__ = ["Binomial"]


class Binomial(BinaryParam):
    """Number of successes in ``total_count`` independent Bernoulli(``probs``) trials."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        (total_count,) = self._set_probs_or_logits(probs, logits, total_count)
        self.total_count = total_count.type_as(self._param)
        super().__init__(tuple(self._param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(Binomial, batch_shape, _instance, extra=("total_count",))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return _fg.minimum(((self.total_count + 1) * self.probs).floor(), self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with _fg.no_grad():
            n_max = int(self.total_count.max()) if self.total_count.numel() else 0
            probs = self.probs.expand(shape).unsqueeze(-1).expand(shape + (n_max,))
            trials = _fg.bernoulli(probs)
            index = _fg.arange(n_max, dtype=probs.dtype)
            used = (index < self.total_count.expand(shape).unsqueeze(-1)).to(probs.dtype)
            return (trials * used).sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, k = self.total_count, value
        log_comb = _fg.lgamma(n + 1) - _fg.lgamma(k + 1) - _fg.lgamma(n - k + 1)
        # k*log(p) + (n-k)*log(1-p) == k*logits - n*softplus(logits)
        return log_comb + k * self.logits - n * _fg.nn.functional.softplus(self.logits)

    def entropy(self):
        total_count = int(self.total_count.max())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(_fg.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True):
        total_count = int(self.total_count.max())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = _fg.arange(1 + total_count, dtype=self._param.dtype)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values

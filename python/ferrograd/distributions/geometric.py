"""Geometric distribution: number of failures before the first success."""

from __future__ import annotations

import ferrograd as _fg

from . import constraints
from ._bases import BinaryParam
from .utils import bce_with_logits, broadcast_all

__all__ = ["Geometric"]


class Geometric(BinaryParam):
    """Geometric distribution on ``{0, 1, 2, ...}`` with success probability ``probs``."""

    arg_constraints = {"probs": constraints.interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        self._set_probs_or_logits(probs, logits)
        super().__init__(tuple(self._param.shape), validate_args=validate_args)
        if self._validate_args and probs is not None:
            # PyTorch rejects probs == 0 (the distribution would be improper).
            value = self.probs
            if not bool((value > 0).all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive "
                    f"but found invalid values:\n{value[value == 0]}"
                )

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(Geometric, batch_shape, _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return _fg.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = _fg.finfo(self.probs.dtype).tiny
        with _fg.no_grad():
            u = _fg.rand(shape, dtype=self.probs.dtype).clamp(min=tiny)
            return (u.log() / _fg.log1p(-self.probs)).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # value * log(1 - p) is 0 (not nan) when p == 1 and value == 0
        probs = _fg.where((probs == 1) & (value == 0), _fg.zeros_like(probs), probs)
        return value * _fg.log1p(-probs) + self.probs.log()

    def entropy(self):
        return bce_with_logits(self.logits, self.probs) / self.probs

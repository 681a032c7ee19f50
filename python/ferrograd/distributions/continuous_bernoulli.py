"""Continuous Bernoulli distribution on the unit interval."""

from __future__ import annotations

import math

import ferrograd as _fg

from . import constraints
from ._bases import BinaryParam
from .exp_family import ExponentialFamily
from .utils import bce_with_logits, broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(BinaryParam, ExponentialFamily):
    """Density ``C(p) * p ** x * (1 - p) ** (1 - x)`` on ``[0, 1]`` for ``p = probs``.

    The normalizer ``C(p) = 2 atanh(1 - 2p) / (1 - 2p)`` and the moments are
    ``0 / 0`` at ``p = 1/2``; for ``probs`` inside ``lims`` they are replaced by
    their Taylor expansions around ``1/2`` (and ``cdf``/``icdf`` by the uniform's)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None) -> None:
        self._set_probs_or_logits(probs, logits)
        if probs is not None:
            # an explicit validate_args (True or False) checks probs before they are clamped
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(tuple(self._param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_binary(ContinuousBernoulli, batch_shape, _instance)
        new._lims = self._lims
        return new

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _stable(self):
        """Where ``probs`` is far enough from 1/2 for the closed forms."""
        low, high = self._lims
        return (self.probs <= low) | (self.probs > high)

    def _safe_probs(self):
        """``probs`` where stable and a harmless stand-in elsewhere (keeps gradients finite)."""
        return _fg.where(self._stable(), self.probs, _fg.full_like(self.probs, self._lims[0]))

    def _log_eta(self, p):
        """``log(1 - p) - log(p)``, minus the natural parameter."""
        return _fg.log1p(-p) - _fg.log(p)

    def _cont_bern_log_norm(self):
        """``log C(probs)``."""
        p = self._safe_probs()
        closed = self._log_eta(p).abs().log() - (1.0 - 2.0 * p).abs().log()
        x2 = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x2) * x2
        return _fg.where(self._stable(), closed, taylor)

    @property
    def mean(self):
        p = self._safe_probs()
        closed = p / (2.0 * p - 1.0) + self._log_eta(p).reciprocal()
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return _fg.where(self._stable(), closed, taylor)

    @property
    def variance(self):
        p = self._safe_probs()
        closed = self._log_eta(p).pow(-2) - p * (1.0 - p) / (1.0 - 2.0 * p).pow(2)
        x2 = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x2) * x2
        return _fg.where(self._stable(), closed, taylor)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with _fg.no_grad():
            u = _fg.rand(shape, dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return self._cont_bern_log_norm() - bce_with_logits(logits, value)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._safe_probs()
        closed = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = _fg.where(self._stable(), closed, value)
        inside = _fg.where(value <= 0.0, _fg.zeros_like(inside), inside)
        return _fg.where(value >= 1.0, _fg.ones_like(inside), inside)

    def icdf(self, value):
        p = self._safe_probs()
        closed = (_fg.log1p((2.0 * p - 1.0) * value - p) - _fg.log1p(-p)) / -self._log_eta(p)
        return _fg.where(self._stable(), closed, value)

    def entropy(self):
        log_q = _fg.log1p(-self.probs)
        return self.mean * (log_q - _fg.log(self.probs)) - self._cont_bern_log_norm() - log_q

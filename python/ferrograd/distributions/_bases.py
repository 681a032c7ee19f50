"""Private base classes shared by several distributions."""

from __future__ import annotations

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits


class LocMode:
    """Mean and mode both equal ``loc`` (symmetric unimodal distributions)."""

    loc: object

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class RelaxedBaseParams:
    """A relaxed distribution built on a base one: its temperature and
    parameters are the base distribution's."""

    base_dist: object

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class LocScale(LocMode, Distribution):
    """A real-valued location/scale family with reparameterized sampling."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)


class BinaryParam(Distribution):
    """Distributions of a success probability given as ``probs`` or ``logits``."""

    def _set_probs_or_logits(self, probs, logits, *others):
        """Store whichever of ``probs``/``logits`` was given (broadcast with
        ``others``) and return the broadcast ``others``."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name = "probs" if probs is not None else "logits"
        param, *rest = broadcast_all(probs if probs is not None else logits, *others)
        setattr(self, name, param)
        self._param = param
        return rest

    def _expand_binary(self, cls, batch_shape, _instance, extra=()):
        new = self._expand_params(cls, batch_shape, ("probs", "logits") + tuple(extra), _instance)
        new._param = new.probs if "probs" in new.__dict__ else new.logits
        return new

    def _new(self, *args, **kwargs):
        return self._param.new_tensor(*args, **kwargs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> tuple:
        return tuple(self._param.shape)

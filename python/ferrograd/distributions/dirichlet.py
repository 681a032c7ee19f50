"""Dirichlet distribution over the probability simplex."""

from __future__ import annotations

import ferrograd as _fg

from . import constraints
from .exp_family import ExponentialFamily
from .gamma import standard_gamma_rsample

__all__ = ["Dirichlet"]


def _dirichlet_log_prob(concentration, value):
    return (
        _fg.xlogy(concentration - 1.0, value).sum(-1)
        + _fg.lgamma(concentration.sum(-1))
        - _fg.lgamma(concentration).sum(-1)
    )


def _dirichlet_entropy(concentration):
    k = concentration.shape[-1]
    a0 = concentration.sum(-1)
    return (
        _fg.lgamma(concentration).sum(-1)
        - _fg.lgamma(a0)
        - (k - a0) * _fg.digamma(a0)
        - ((concentration - 1.0) * _fg.digamma(concentration)).sum(-1)
    )


def _dirichlet_mode(concentration):
    conc = (concentration - 1).clamp(min=0.0)
    mode = conc / conc.sum(-1, keepdim=True)
    # all concentrations below one: the density peaks at a vertex
    mask = (concentration < 1).all(dim=-1)
    one_hot = _fg.nn.functional.one_hot(mode.argmax(-1), mode.shape[-1]).to(mode.dtype)
    return _fg.where(mask.unsqueeze(-1), one_hot, mode)


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution with ``concentration`` of shape ``batch_shape + (K,)``."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(
            Dirichlet, batch_shape, ("concentration",), _instance, param_event_shape=self.event_shape
        )

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = standard_gamma_rsample(self.concentration.expand(shape))
        return x / x.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _dirichlet_log_prob(self.concentration, value)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        return _dirichlet_mode(self.concentration)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        return _dirichlet_entropy(self.concentration)

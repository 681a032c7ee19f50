"""Exponential families: ``p(x; θ) = exp(<t(x), θ> - F(θ) + k(x))``."""

from __future__ import annotations

import ferrograd as _fg

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base of distributions in the exponential family. A subclass gives its natural
    parameters ``θ`` (``_natural_params``), the log normalizer ``F`` (``_log_normalizer``) and the
    expected carrier measure ``E[k(x)]`` (``_mean_carrier_measure``); the entropy then follows as
    ``F(θ) - <θ, ∇F(θ)> - E[k(x)]``, differentiable in the parameters."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        params = [p.detach().requires_grad_() for p in self._natural_params]
        with _fg.enable_grad():
            log_normalizer = self._log_normalizer(*params)
            gradients = _fg.autograd.grad(log_normalizer.sum(), params, create_graph=True)
        result = log_normalizer - self._mean_carrier_measure
        for param, gradient in zip(params, gradients):
            result = result - (param * gradient).reshape(tuple(self.batch_shape) + (-1,)).sum(-1)
        return result

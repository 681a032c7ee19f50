"""Mixtures whose components are one distribution family, batched along its last batch dim."""

from __future__ import annotations

import ferrograd as _fg

from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """A mixture of the ``k`` components that ``component_distribution`` holds along its last
    batch dimension, weighted by ``mixture_distribution`` (a ``Categorical`` over ``k``): for
    example a Gaussian mixture is ``MixtureSameFamily(Categorical(w), Normal(mu, sigma))``."""

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None) -> None:
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(
                " The Mixture distribution needs to be an  instance of ferrograd.distributions.Categorical"
            )
        if not isinstance(component_distribution, Distribution):
            raise ValueError(
                "The Component distribution needs to be an instance of ferrograd.distributions.Distribution"
            )
        mixture_batch = tuple(mixture_distribution.batch_shape)
        component_batch = tuple(component_distribution.batch_shape[:-1])
        for size1, size2 in zip(reversed(mixture_batch), reversed(component_batch)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({_fg.Size(mixture_batch)}) is not compatible with "
                    f"`component_distribution.batch_shape`({_fg.Size(component_batch)})"
                )
        mixture_k = mixture_distribution.logits.shape[-1]
        component_k = component_distribution.batch_shape[-1]
        if mixture_k != component_k:
            raise ValueError(
                f"`mixture_distribution component` ({mixture_k}) does not equal "
                f"`component_distribution.batch_shape[-1]` ({component_k})"
            )
        self._num_component = mixture_k
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(component_batch, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,)
        )
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return self._component_distribution.support

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _weights(self):
        """The mixture's probabilities, shaped to broadcast against the components' moments."""
        probs = self._mixture_distribution.probs
        return probs.reshape(tuple(probs.shape) + (1,) * self._event_ndims)

    def _component_dim(self) -> int:
        return -1 - self._event_ndims

    @property
    def mean(self):
        return (self._weights() * self._component_distribution.mean).sum(self._component_dim())

    @property
    def variance(self):
        # The law of total variance: the mean of the components' variances plus the variance of
        # their means.
        weights, components = self._weights(), self._component_distribution
        mean_of_variances = (weights * components.variance).sum(self._component_dim())
        spread = (components.mean - self.mean.unsqueeze(self._component_dim())).square()
        return mean_of_variances + (weights * spread).sum(self._component_dim())

    def cdf(self, x):
        x = x.unsqueeze(self._component_dim())
        return (self._component_distribution.cdf(x) * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        component_log_probs = self._component_distribution.log_prob(x.unsqueeze(self._component_dim()))
        log_weights = self._mixture_distribution.logits.log_softmax(-1)
        return (component_log_probs + log_weights).logsumexp(-1)

    def sample(self, sample_shape=()):
        sample_shape = tuple(sample_shape)
        with _fg.no_grad():
            chosen = self._mixture_distribution.sample(sample_shape)
            samples = self._component_distribution.sample(sample_shape)
            # A mixture batch shorter than the components' broadcasts against their left dims.
            batch_shape, mixture_batch = (
                tuple(self.batch_shape),
                tuple(self._mixture_distribution.batch_shape),
            )
            padding = (1,) * (len(batch_shape) - len(mixture_batch))
            chosen = chosen.reshape(sample_shape + padding + mixture_batch).expand(sample_shape + batch_shape)
            gather_dim = len(sample_shape) + len(batch_shape)
            event_shape = tuple(self.event_shape)
            index = chosen.reshape(tuple(chosen.shape) + (1,) * (len(event_shape) + 1))
            index = index.expand(tuple(chosen.shape) + (1,) + event_shape)
            return samples.gather(gather_dim, index).squeeze(gather_dim)

    def __repr__(self) -> str:
        return f"MixtureSameFamily(\n  {self._mixture_distribution},\n  {self._component_distribution})"

"""Multivariate normal distribution."""

from __future__ import annotations

import math

import ferrograd as _fg

from . import constraints
from ._bases import LocMode
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mahalanobis(scale_tril, diff):
    """Squared Mahalanobis distance ``diff^T (L L^T)^-1 diff`` with broadcasting."""
    batch = _fg.broadcast_shapes(tuple(scale_tril.shape[:-2]), tuple(diff.shape[:-1]))
    n = diff.shape[-1]
    scale_tril = scale_tril.expand(batch + (n, n))
    diff = diff.expand(batch + (n,))
    solved = _fg.linalg.solve_triangular(scale_tril, diff.unsqueeze(-1), upper=False).squeeze(-1)
    return solved.pow(2).sum(-1)


def _precision_to_scale_tril(precision):
    # Cholesky of the reversed precision gives the inverse of a lower factor of the covariance.
    lf = _fg.linalg.cholesky(_fg.flip(precision, (-2, -1)))
    l_inv = _fg.flip(lf, (-2, -1)).transpose(-2, -1)
    eye = _fg.eye(precision.shape[-1], dtype=precision.dtype)
    return _fg.linalg.solve_triangular(l_inv, eye.expand(l_inv.shape), upper=False)


class MultivariateNormal(LocMode, Distribution):
    """Multivariate normal with mean ``loc`` and exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (lower Cholesky factor of the covariance)."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."
            )
        matrix = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        if matrix.dim() < 2:
            name = (
                "scale_tril"
                if scale_tril is not None
                else ("covariance_matrix" if covariance_matrix is not None else "precision_matrix")
            )
            raise ValueError(
                f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions"
            )
        batch_shape = _fg.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        event_shape = tuple(loc.shape[-1:])
        full = batch_shape + event_shape + event_shape
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(full)
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(full)
        else:
            self.precision_matrix = precision_matrix.expand(full)
        self.loc = loc.expand(batch_shape + event_shape)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = _fg.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(
            MultivariateNormal,
            batch_shape,
            ("covariance_matrix", "precision_matrix", "scale_tril"),
            _instance,
            param_event_shape=self.event_shape + self.event_shape,
        )
        new.loc = self.loc.expand(tuple(batch_shape) + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(
            self._batch_shape + self._event_shape + self._event_shape
        )

    @lazy_property
    def covariance_matrix(self):
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.mT).expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        n = self._event_shape[0]
        lower = self._unbroadcasted_scale_tril
        eye = _fg.eye(n, dtype=lower.dtype).expand(lower.shape)
        lower_inv = _fg.linalg.solve_triangular(lower, eye, upper=False)
        return (lower_inv.mT @ lower_inv).expand(self._batch_shape + self._event_shape + self._event_shape)

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _fg.randn(shape, dtype=self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        k = self._event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        k = self._event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)

"""Multivariate normal with a low-rank-plus-diagonal covariance."""

from __future__ import annotations

import math

import ferrograd as _fg

from . import constraints
from ._bases import LocMode
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


class LowRankMultivariateNormal(LocMode, Distribution):
    """Normal with mean ``loc`` and covariance ``cov_factor @ cov_factor.mT + diag(cov_diag)``
    (``cov_factor`` is ``n x r``): densities and samples cost ``O(n r^2)`` rather than
    ``O(n^3)``, through the ``r x r`` capacitance ``I + W^T D^-1 W`` (Woodbury's identity and the
    matrix determinant lemma)."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, with optional leading batch dimensions"
            )
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {_fg.Size(event_shape)}")
        batch_shape = _fg.broadcast_shapes(
            tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]), tuple(cov_diag.shape[:-1])
        )
        rank = cov_factor.shape[-1]
        self.loc = loc.expand(batch_shape + event_shape)
        self.cov_factor = cov_factor.expand(batch_shape + event_shape + (rank,))
        self.cov_diag = cov_diag.expand(batch_shape + event_shape)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = self._capacitance_cholesky(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    @staticmethod
    def _capacitance_cholesky(cov_factor, cov_diag):
        """The Cholesky factor of ``I + W^T D^-1 W``."""
        scaled = cov_factor / cov_diag.unsqueeze(-1)
        capacitance = cov_factor.mT @ scaled
        eye = _fg.eye(cov_factor.shape[-1], dtype=cov_factor.dtype)
        return _fg.linalg.cholesky(capacitance + eye)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        event_shape = tuple(self.event_shape)
        new.loc = self.loc.expand(batch_shape + event_shape)
        new.cov_diag = self.cov_diag.expand(batch_shape + event_shape)
        new.cov_factor = self.cov_factor.expand(batch_shape + tuple(self.cov_factor.shape[-2:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.square().sum(-1) + self._unbroadcasted_cov_diag).expand(
            tuple(self.batch_shape) + tuple(self.event_shape)
        )

    def _full_shape(self) -> tuple:
        return tuple(self.batch_shape) + tuple(self.event_shape) + tuple(self.event_shape)

    @lazy_property
    def covariance_matrix(self):
        factor = self._unbroadcasted_cov_factor
        covariance = factor @ factor.mT + self._unbroadcasted_cov_diag.diag_embed()
        return covariance.expand(self._full_shape())

    @lazy_property
    def precision_matrix(self):
        # Woodbury: (W W^T + D)^-1 = D^-1 - D^-1 W C^-1 W^T D^-1, with C = L L^T the capacitance.
        inverse_diag = self._unbroadcasted_cov_diag.reciprocal()
        scaled = self._unbroadcasted_cov_factor * inverse_diag.unsqueeze(-1)
        solved = _fg.linalg.solve_triangular(self._capacitance_tril, scaled.mT, upper=False)
        precision = inverse_diag.diag_embed() - solved.mT @ solved
        return precision.expand(self._full_shape())

    @lazy_property
    def scale_tril(self):
        return _fg.linalg.cholesky(self.covariance_matrix)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rank = self._unbroadcasted_cov_factor.shape[-1]
        eps_low_rank = _fg.randn(tuple(shape[:-1]) + (rank,), dtype=self.loc.dtype)
        eps_diag = _fg.randn(shape, dtype=self.loc.dtype)
        low_rank = (self._unbroadcasted_cov_factor @ eps_low_rank.unsqueeze(-1)).squeeze(-1)
        return self.loc + low_rank + self._unbroadcasted_cov_diag.sqrt() * eps_diag

    def _log_det(self):
        """``log det(W W^T + D)`` by the matrix determinant lemma."""
        half_capacitance = self._capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return 2 * half_capacitance + self._unbroadcasted_cov_diag.log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        diag = self._unbroadcasted_cov_diag
        # diff^T (W W^T + D)^-1 diff = |diff|^2_D - |L^-1 W^T D^-1 diff|^2.
        projected = self._unbroadcasted_cov_factor.mT @ (diff / diag).unsqueeze(-1)
        batch = _fg.broadcast_shapes(tuple(self._capacitance_tril.shape[:-2]), tuple(projected.shape[:-2]))
        tril = self._capacitance_tril.expand(batch + tuple(self._capacitance_tril.shape[-2:]))
        solved = _fg.linalg.solve_triangular(
            tril, projected.expand(batch + tuple(projected.shape[-2:])), upper=False
        )
        mahalanobis = (diff.square() / diag).sum(-1) - solved.squeeze(-1).square().sum(-1)
        n = self.event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + self._log_det() + mahalanobis)

    def entropy(self):
        n = self.event_shape[0]
        entropy = 0.5 * (n * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return entropy.expand(tuple(self.batch_shape)) if self.batch_shape else entropy

"""Von Mises distribution: a circular analogue of the normal distribution."""

from __future__ import annotations

import math

import ferrograd as _fg

from . import constraints
from ._bases import LocMode
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

_MAX_REJECTION_ROUNDS = 1000


def _eval_poly(y, coef):
    coef = list(coef)
    result = coef.pop()
    while coef:
        result = coef.pop() + y * result
    return result


# Abramowitz & Stegun 9.8.1-9.8.4 polynomial fits of I0 and I1
_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813]
_I0_COEF_LARGE = [
    0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281,
    -0.02057706, 0.02635537, -0.01647633, 0.00392377,
]  # fmt: skip
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]
_I1_COEF_LARGE = [
    0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555,
    0.02282967, -0.02895312, 0.01787654, -0.00420059,
]  # fmt: skip
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _log_modified_bessel_fn(x, order=0):
    """``log I_order(x)`` for ``x > 0`` and ``order`` 0 or 1."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75).pow(2)
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return _fg.where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, shape):
    """Best & Fisher (1979): wrapped-Cauchy proposals accepted until every position has one."""
    x = _fg.zeros(shape, dtype=loc.dtype)
    done = _fg.zeros(shape, dtype=_fg.bool)
    for _ in range(_MAX_REJECTION_ROUNDS):
        u1, u2, u3 = _fg.rand((3,) + tuple(shape), dtype=loc.dtype).unbind()
        z = _fg.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = (c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)
        x = _fg.where(accept & ~done, (u3 - 0.5).sign() * f.acos(), x)
        done = done | accept
        if bool(done.all()):
            break
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(LocMode, Distribution):
    """Circular distribution with mean direction ``loc`` and ``concentration``;
    samples are angles in ``[-pi, pi)``."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(tuple(self.loc.shape), (), validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, batch_shape, ("loc", "concentration"), _instance)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * _fg.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _proposal_r(self):
        kappa = self.concentration.detach().double()
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho**2) / (2 * rho)
        return _fg.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with _fg.no_grad():
            loc = self.loc.detach().double()
            kappa = self.concentration.detach().double()
            x = _rejection_sample(loc, kappa, self._proposal_r, shape)
            return x.to(self.loc.dtype)

    @lazy_property
    def variance(self):
        return (
            1
            - (
                _log_modified_bessel_fn(self.concentration, order=1)
                - _log_modified_bessel_fn(self.concentration, order=0)
            ).exp()
        )

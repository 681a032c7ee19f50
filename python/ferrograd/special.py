"""``ferrograd.special``: PyTorch's ``torch.special`` names for the special functions.

The kernels (``lgamma``, ``digamma``, ``polygamma``, ``erf``, ``erfc``, ``erfinv``, ``erfcx``, the
modified Bessel functions ``i0``, ``i0e``, ``i1``, ``i1e``, the incomplete gamma functions, ``zeta``,
the Bessel and Airy functions and the orthogonal polynomials...) live in the core; the compositions
here (``xlog1py``, ``entr``, ``ndtr``, ``ndtri``, ``log_ndtr``, ``multigammaln``) are made of
differentiable ops, so they differentiate to any order.
"""

from __future__ import annotations

import math

from . import _C
from ._C import Tensor
from ._functions import _as_tensor, _same_dtype_and_shape, _TimesLog, _to_float, logit, sinc, xlogy
from .autograd.function import Function

__all__ = [
    "airy_ai",
    "bessel_j0",
    "bessel_j1",
    "bessel_y0",
    "bessel_y1",
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp2",
    "expit",
    "expm1",
    "gammainc",
    "gammaincc",
    "gammaln",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
    "log1p",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "modified_bessel_i0",
    "modified_bessel_i1",
    "modified_bessel_k0",
    "modified_bessel_k1",
    "multigammaln",
    "ndtr",
    "ndtri",
    "polygamma",
    "psi",
    "round",
    "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "sinc",
    "softmax",
    "spherical_bessel_j0",
    "xlog1py",
    "xlogy",
    "zeta",
]


def expit(input: Tensor) -> Tensor:
    """The logistic sigmoid, ``1 / (1 + exp(-x))``."""
    return input.sigmoid()


def gammaln(input: Tensor) -> Tensor:
    """``ln|Γ(x)|``."""
    return input.lgamma()


def digamma(input: Tensor) -> Tensor:
    """ψ(x), the derivative of ``ln Γ(x)``."""
    return input.digamma()


psi = digamma


def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of ψ."""
    return input.polygamma(n)


def multigammaln(input: Tensor, p: int) -> Tensor:
    """The log of the multivariate gamma function of dimension ``p`` (``mvlgamma``): the sum of
    ``lgamma(input - j/2)`` for ``j < p`` plus ``p(p-1)/4 log(pi)``, infinite where a term's argument
    is a pole, as in PyTorch."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _to_float(input)
    # All p terms at once along a new last dim, as PyTorch computes them: one op each whatever
    # p is, and a p too large for memory fails at once.
    halves = _C.arange(-(p - 1) / 2, 0.25, 0.5, dtype=x.dtype)
    terms = (x.unsqueeze(-1) + halves).lgamma().sum(-1)
    return terms + p * (p - 1) / 4 * math.log(math.pi)


def erf(input: Tensor) -> Tensor:
    return input.erf()


def erfc(input: Tensor) -> Tensor:
    return input.erfc()


def erfinv(input: Tensor) -> Tensor:
    return input.erfinv()


def exp2(input: Tensor) -> Tensor:
    return input.exp2()


def expm1(input: Tensor) -> Tensor:
    return input.expm1()


def log1p(input: Tensor) -> Tensor:
    return input.log1p()


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """Rounds half to even, at ``decimals`` places (scaled by ``10 ** decimals``, as PyTorch does)."""
    if decimals == 0:
        return input.round()
    scale = 10.0**decimals
    return (input * scale).round() / scale


def logsumexp(input: Tensor, dim, keepdim: bool = False) -> Tensor:
    return input.logsumexp(dim, keepdim)


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    return input.softmax(dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    return input.log_softmax(dim, dtype=dtype)


def _xlog1py_value(x: Tensor, y: Tensor) -> Tensor:
    # Where the product would be 0 * -inf or 0 * NaN from log1p, the logarithm is replaced by 0.
    bad = x.eq(0).logical_and(y.le(-1).logical_or(y.isinf()))
    return x * y.where(bad.logical_not(), 0.0).log1p()


def xlog1py(input, other) -> Tensor:
    """``input * log1p(other)``, with 0 where ``input`` is 0 (and NaN where ``other`` is NaN)."""
    x = _to_float(_as_tensor(input, other if isinstance(other, Tensor) else None))
    y = _to_float(_as_tensor(other, x))
    if not (x.requires_grad or y.requires_grad) or not _C.is_grad_enabled():
        return _xlog1py_value(x, y)
    return _TimesLog.apply(*_same_dtype_and_shape(x, y), xlog1py, _xlog1py_value, -1.0)


class _Entr(Function):
    """``entr`` differentiated by PyTorch's formula ``grad * -(1 + log(x))``: ``inf`` at 0 and NaN
    below it (the value there is constant, but PyTorch does not special-case it)."""

    _jvp_from_backward = True

    @staticmethod
    def forward(ctx, x: Tensor) -> Tensor:
        ctx.save_for_backward(x)
        return _entr_value(x)

    @staticmethod
    def backward(ctx, grad: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return grad * -(1 + x.log())


def _entr_value(x: Tensor) -> Tensor:
    positive = x > 0
    safe = x.where(positive, 1.0)
    # x * 0 + 0 is the 0 (not -0) at either zero and the NaN at NaN; numbers below 0 give -inf.
    at_most_zero = x.mul(0).add(0.0).where(x.eq(0).logical_or(x.isnan()), -math.inf)
    return (-safe * safe.log()).where(positive, at_most_zero)


def entr(input: Tensor) -> Tensor:
    """The elementwise entropy ``-x ln x``: 0 at 0, ``-inf`` below, NaN at NaN."""
    x = _to_float(input)
    if not x.requires_grad or not _C.is_grad_enabled():
        return _entr_value(x)
    return _Entr.apply(x)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal distribution function."""
    x = _to_float(input)
    return (x * -math.sqrt(0.5)).erfc() * 0.5


class _LogNdtr(Function):
    """``log_ndtr`` as PyTorch computes it: through the scaled ``erfcx`` below -1, where
    ``log(ndtr(x))`` would underflow to -inf (from x = -15 in float32), through ``log1p`` above,
    and differentiated by PyTorch's formula ``grad * exp(-(result + x**2 / 2)) / sqrt(2 pi)``."""

    _jvp_from_backward = True

    @staticmethod
    def forward(ctx, x: Tensor) -> Tensor:
        t = x * math.sqrt(0.5)
        # (division by -2 keeps the sign of a zero, which negation does not)
        result = ((erfcx(-t) / 2).log() - t * t).where(x < -1, (t.erfc() / -2).log1p())
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx, grad: Tensor) -> Tensor:
        x, result = ctx.saved_tensors
        return grad / math.sqrt(2 * math.pi) * (result + x.pow(2) / 2).neg().exp()


def log_ndtr(input: Tensor) -> Tensor:
    """The log of the standard normal distribution function (see ``_LogNdtr``)."""
    return _LogNdtr.apply(_to_float(input))


def ndtri(input: Tensor) -> Tensor:
    """The inverse of ``ndtr``: the standard normal quantile of ``p``."""
    p = _to_float(input)
    return (p * 2 - 1).erfinv() * math.sqrt(2)


def _tensor_argument(function: str, value, name: str, position: int) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(
            f"{function}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}"
        )
    return value


def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 0."""
    return _tensor_argument("special_i0", input, "input", 1).i0()


def i0e(input: Tensor) -> Tensor:
    """``exp(-|x|) * i0(x)``."""
    return _C.special_i0e(_tensor_argument("special_i0e", input, "input", 1))


def i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 1."""
    return _C.special_i1(_tensor_argument("special_i1", input, "input", 1))


def i1e(input: Tensor) -> Tensor:
    """``exp(-|x|) * i1(x)``."""
    return _C.special_i1e(_tensor_argument("special_i1e", input, "input", 1))


def erfcx(input: Tensor) -> Tensor:
    """The scaled complementary error function ``exp(x**2) * erfc(x)``."""
    return _C.special_erfcx(_tensor_argument("special_erfcx", input, "input", 1))


def modified_bessel_i0(input: Tensor) -> Tensor:
    """I₀(x), as ``i0``; like PyTorch's, this form records no gradient."""
    return _C.special_modified_bessel_i0(_tensor_argument("special_modified_bessel_i0", input, "input", 1))


def modified_bessel_i1(input: Tensor) -> Tensor:
    """I₁(x), as ``i1``; like PyTorch's, this form records no gradient."""
    return _C.special_modified_bessel_i1(_tensor_argument("special_modified_bessel_i1", input, "input", 1))


def spherical_bessel_j0(input: Tensor) -> Tensor:
    """The spherical Bessel function ``sin(x) / x`` (1 at 0); like PyTorch's, it records no gradient."""
    return _C.special_spherical_bessel_j0(_tensor_argument("special_spherical_bessel_j0", input, "input", 1))


def airy_ai(input: Tensor) -> Tensor:
    """The Airy function Ai(x); like PyTorch's, it records no gradient."""
    return _C.special_airy_ai(_tensor_argument("special_airy_ai", input, "input", 1))


def bessel_j0(input: Tensor) -> Tensor:
    """The Bessel function of the first kind J₀(x); like PyTorch's, it records no gradient."""
    return _C.special_bessel_j0(_tensor_argument("special_bessel_j0", input, "input", 1))


def bessel_j1(input: Tensor) -> Tensor:
    """The Bessel function of the first kind J₁(x); like PyTorch's, it records no gradient."""
    return _C.special_bessel_j1(_tensor_argument("special_bessel_j1", input, "input", 1))


def bessel_y0(input: Tensor) -> Tensor:
    """The Bessel function of the second kind Y₀(x) (NaN below 0); like PyTorch's, it records no gradient."""
    return _C.special_bessel_y0(_tensor_argument("special_bessel_y0", input, "input", 1))


def bessel_y1(input: Tensor) -> Tensor:
    """The Bessel function of the second kind Y₁(x) (NaN below 0); like PyTorch's, it records no gradient."""
    return _C.special_bessel_y1(_tensor_argument("special_bessel_y1", input, "input", 1))


def modified_bessel_k0(input: Tensor) -> Tensor:
    """The modified Bessel function of the second kind K₀(x); like PyTorch's, it records no gradient."""
    return _C.special_modified_bessel_k0(_tensor_argument("special_modified_bessel_k0", input, "input", 1))


def modified_bessel_k1(input: Tensor) -> Tensor:
    """The modified Bessel function of the second kind K₁(x); like PyTorch's, it records no gradient."""
    return _C.special_modified_bessel_k1(_tensor_argument("special_modified_bessel_k1", input, "input", 1))


def scaled_modified_bessel_k0(input: Tensor) -> Tensor:
    """``exp(x) * K₀(x)``; like PyTorch's, it records no gradient."""
    return _C.special_scaled_modified_bessel_k0(
        _tensor_argument("special_scaled_modified_bessel_k0", input, "input", 1)
    )


def scaled_modified_bessel_k1(input: Tensor) -> Tensor:
    """``exp(x) * K₁(x)``; like PyTorch's, it records no gradient."""
    return _C.special_scaled_modified_bessel_k1(
        _tensor_argument("special_scaled_modified_bessel_k1", input, "input", 1)
    )


def gammainc(input: Tensor, other: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function ``P(input, other)``."""
    a = _tensor_argument("special_gammainc", input, "input", 1)
    return a.igamma(_tensor_argument("special_gammainc", other, "other", 2))


def gammaincc(input: Tensor, other: Tensor) -> Tensor:
    """The regularized upper incomplete gamma function ``Q(input, other) = 1 - P(input, other)``."""
    a = _tensor_argument("special_gammaincc", input, "input", 1)
    return a.igammac(_tensor_argument("special_gammaincc", other, "other", 2))


def _not_both_numbers(function: str, a, b, signatures: tuple[str, ...]) -> None:
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(
            f"{function}() received an invalid combination of arguments - got "
            f"({type(a).__name__}, {type(b).__name__}), but expected one of:\n"
            + "".join(f" * ({signature}, *, Tensor out = None)\n" for signature in signatures)
        )


def zeta(input, other) -> Tensor:
    """The Hurwitz zeta function ``sum((other + k) ** -input for k >= 0)``; either argument may be a number."""
    _not_both_numbers(
        "special_zeta",
        input,
        other,
        ("Tensor input, Tensor other", "Number self, Tensor other", "Tensor input, Number other"),
    )
    return _C.special_zeta(input, other)


def _polynomial(name: str, input, n) -> Tensor:
    _not_both_numbers(
        f"special_{name}", input, n, ("Tensor x, Tensor n", "Number x, Tensor n", "Tensor x, Number n")
    )
    return getattr(_C, f"special_{name}")(input, n)


def chebyshev_polynomial_t(input, n) -> Tensor:
    """The Chebyshev polynomial of the first kind Tₙ(x) (n truncated to an integer, 0 for n < 0); either argument may be a number. No gradient."""
    return _polynomial("chebyshev_polynomial_t", input, n)


def chebyshev_polynomial_u(input, n) -> Tensor:
    """The Chebyshev polynomial of the second kind Uₙ(x) (n truncated to an integer, 0 for n < 0); either argument may be a number. No gradient."""
    return _polynomial("chebyshev_polynomial_u", input, n)


def chebyshev_polynomial_v(input, n) -> Tensor:
    """The Chebyshev polynomial of the third kind Vₙ(x) (n truncated to an integer, 0 for n < 0); either argument may be a number. No gradient."""
    return _polynomial("chebyshev_polynomial_v", input, n)


def chebyshev_polynomial_w(input, n) -> Tensor:
    """The Chebyshev polynomial of the fourth kind Wₙ(x) (n truncated to an integer, 0 for n < 0); either argument may be a number. No gradient."""
    return _polynomial("chebyshev_polynomial_w", input, n)


def shifted_chebyshev_polynomial_t(input, n) -> Tensor:
    """Tₙ(2x - 1) (n truncated to an integer, 0 for n < 0); either argument may be a number. No gradient."""
    return _polynomial("shifted_chebyshev_polynomial_t", input, n)


def shifted_chebyshev_polynomial_u(input, n) -> Tensor:
    """Uₙ(2x - 1) (n truncated to an integer, 0 for n < 0); either argument may be a number. No gradient."""
    return _polynomial("shifted_chebyshev_polynomial_u", input, n)


def shifted_chebyshev_polynomial_v(input, n) -> Tensor:
    """Vₙ(2x - 1) (n truncated to an integer, 0 for n < 0); either argument may be a number. No gradient."""
    return _polynomial("shifted_chebyshev_polynomial_v", input, n)


def shifted_chebyshev_polynomial_w(input, n) -> Tensor:
    """Wₙ(2x - 1) (n truncated to an integer, 0 for n < 0); either argument may be a number. No gradient."""
    return _polynomial("shifted_chebyshev_polynomial_w", input, n)


def hermite_polynomial_h(input, n) -> Tensor:
    """The physicists' Hermite polynomial Hₙ(x) (n truncated to an integer, 0 for n < 0); either argument may be a number. No gradient."""
    return _polynomial("hermite_polynomial_h", input, n)


def hermite_polynomial_he(input, n) -> Tensor:
    """The probabilists' Hermite polynomial Heₙ(x) (n truncated to an integer, 0 for n < 0); either argument may be a number. No gradient."""
    return _polynomial("hermite_polynomial_he", input, n)


def laguerre_polynomial_l(input, n) -> Tensor:
    """The Laguerre polynomial Lₙ(x) (n truncated to an integer, 0 for n < 0); either argument may be a number. No gradient."""
    return _polynomial("laguerre_polynomial_l", input, n)


def legendre_polynomial_p(input, n) -> Tensor:
    """The Legendre polynomial Pₙ(x) (n truncated to an integer, 0 for n < 0); either argument may be a number. No gradient."""
    return _polynomial("legendre_polynomial_p", input, n)

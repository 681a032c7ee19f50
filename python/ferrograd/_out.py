"""The ``out=`` argument of ferrograd's functions, as PyTorch has it.

A function called with ``out=t`` computes its result as usual and then writes it into ``t``
(resized when its shape differs, with PyTorch's warning when ``t`` had elements) and returns
``t``; functions with several results take and return a tuple of tensors. As in PyTorch, the
write is not recorded by autograd, so it is refused while grad mode is on and an argument
requires grad. Factories (``zeros``, ``arange``, ``randn``, ...) take ``out``'s dtype unless
one is given, which must then be ``out``'s.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from . import _C
from ._dtype_info import can_cast
from .autograd.grad_mode import no_grad

# Functions that build a tensor from sizes or ranges: the result takes ``out``'s dtype.
FACTORIES = frozenset(
    "arange range linspace logspace zeros ones full empty eye rand randn randint randperm".split()
)

# Functions whose output dtype must equal the result's, as in PyTorch (linear algebra,
# and every function with several results); the rest cast when PyTorch's rules allow.
EXACT_DTYPE = frozenset(
    "matmul mm bmm mv dot vdot inner outer ger addmm addmv addr addbmm baddbmm chain_matmul "
    "matrix_power kron tensordot cholesky cholesky_inverse cholesky_solve inverse lu_solve "
    "triangular_solve geqrf ormqr qr svd lu lu_unpack".split()
)

TOP_LEVEL = (
    "abs acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin aminmax angle any "
    "arange asin asinh atan atan2 atanh baddbmm bernoulli bitwise_and bitwise_left_shift "
    "bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm bucketize cat ceil chain_matmul "
    "cholesky cholesky_inverse cholesky_solve clamp clip column_stack complex concat concatenate "
    "conj_physical copysign cos cosh cross cummax cummin cumprod cumsum deg2rad diag diff digamma "
    "div divide dot dstack empty eq erf erfc erfinv exp exp2 expm1 eye fix float_power floor "
    "floor_divide fmax fmin fmod frac frexp full gather gcd ge geqrf ger greater greater_equal gt "
    "heaviside histc histogram hstack hypot i0 igamma igammac index_select inner inverse isneginf "
    "isposinf kron kthvalue lcm ldexp le lerp less less_equal lgamma linspace log log10 log1p "
    "log2 logaddexp logaddexp2 logcumsumexp logical_and logical_not logical_or logical_xor logit "
    "logspace logsumexp lt lu lu_solve lu_unpack masked_select matmul matrix_power max maximum "
    "mean median min minimum mm mode msort mul nansum prod sum argmax argmin multinomial multiply mv mvlgamma nan_to_num "
    "nanmean nanmedian nanquantile narrow_copy ne neg negative nextafter nonzero norm normal "
    "not_equal ones ormqr outer polar polygamma pow qr quantile rad2deg rand randint randn "
    "randperm range reciprocal remainder renorm round row_stack rsqrt searchsorted sgn sigmoid "
    "sign signbit sin sinc sinh sort sqrt square stack std sub subtract svd take_along_dim tan "
    "tanh tensordot topk triangular_solve tril triu trunc var vdot vstack where xlogy zeros"
).split()

LINALG = (
    "cholesky cholesky_ex cond cross det eig eigh eigvals eigvalsh householder_product inv "
    "inv_ex lu lu_factor lu_factor_ex lu_solve matmul matrix_norm matrix_power matrix_rank "
    "multi_dot norm pinv qr slogdet solve solve_ex solve_triangular svd svdvals tensorinv "
    "tensorsolve vecdot vector_norm"
).split()

SPECIAL = (
    "airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t "
    "chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w digamma entr erf erfc "
    "erfcx erfinv exp2 expit expm1 gammainc gammaincc gammaln hermite_polynomial_h "
    "hermite_polynomial_he i0 i0e i1 i1e laguerre_polynomial_l legendre_polynomial_p log1p "
    "log_ndtr logit logsumexp modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 "
    "modified_bessel_k1 multigammaln ndtr ndtri polygamma psi round scaled_modified_bessel_k0 "
    "scaled_modified_bessel_k1 shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u "
    "shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w sinc spherical_bessel_j0 "
    "xlog1py xlogy zeta"
).split()

FFT = (
    "fft fft2 fftfreq fftn hfft hfft2 hfftn ifft ifft2 ifftn ihfft ihfft2 ihfftn irfft irfft2 "
    "irfftn rfft rfft2 rfftfreq rfftn"
).split()

# Functions that join tensors, whose dtype error is ``cat``'s.
_JOINS = frozenset("cat concat concatenate stack hstack vstack dstack column_stack row_stack".split())

FFT_FACTORIES = frozenset({"fftfreq", "rfftfreq"})

_RESIZED = (
    "An output with one or more elements was resized since it had shape {}, which does not "
    "match the required output shape {}. This behavior is deprecated, and in a future PyTorch "
    "release outputs will not be resized unless they have zero elements. You can explicitly "
    "reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0)."
)


def _tensors_in(values: Iterable[Any]) -> Iterable[_C.Tensor]:
    """The tensors among ``values`` and inside the lists and tuples among them."""
    for value in values:
        if isinstance(value, _C.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, _C.Tensor))


def _out_tensors(name: str, out: Any, count: int | None) -> list[_C.Tensor]:
    """``out`` as a list of tensors: one tensor, or ``count`` of them in a tuple or list."""
    if count is None:
        if not isinstance(out, _C.Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        return [out]
    if not isinstance(out, (tuple, list)) or not all(isinstance(o, _C.Tensor) for o in out):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
    if len(out) != count:
        raise TypeError(f"expected tuple of {count} elements but got {len(out)}")
    return list(out)


def _check_dtype(name: str, result: _C.Tensor, out: _C.Tensor, exact: bool) -> None:
    if exact and result.dtype != out.dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {result.dtype._cpp_name}, "
            f"but got {out.dtype._cpp_name} instead"
        )
    if name == "where" and result.dtype != out.dtype:
        raise RuntimeError(
            f"Expected out type to be {result.dtype._scalar_type_name} but got {out.dtype._scalar_type_name}"
        )
    if not can_cast(result.dtype, out.dtype):
        if name in _JOINS:
            raise TypeError(
                "torch.cat(): input types can't be cast to the desired output type "
                f"{out.dtype._scalar_type_name}"
            )
        raise RuntimeError(
            f"result type {result.dtype._scalar_type_name} can't be cast to the desired "
            f"output type {out.dtype._scalar_type_name}"
        )


def _write(result: _C.Tensor, out: _C.Tensor) -> None:
    if out.shape != result.shape:
        if out.numel() != 0:
            warnings.warn(_RESIZED.format(list(out.shape), list(result.shape)), stacklevel=4)
        # Resized as PyTorch resizes outputs: beside autograd (a tensor that requires grad
        # may be an output under no_grad) and without counting as a write of its own.
        resized = out.data
        resized.resize_(result.shape)
        out.data = resized
    with no_grad():
        out.copy_(result)


def call(name: str, fn: Callable, args: tuple, kwargs: dict, out: Any, exact: bool = False):
    """``fn(*args, **kwargs)`` written into ``out``: what ``name(..., out=out)`` does."""
    if _C.is_grad_enabled() and any(t.requires_grad for t in _tensors_in((*args, *kwargs.values(), out))):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    result = fn(*args, **kwargs)
    several = isinstance(result, tuple)
    outs = _out_tensors(name, out, len(result) if several else None)
    results = list(result) if several else [result]
    for r, o in zip(results, outs):
        _check_dtype(name, r, o, exact or several or name in EXACT_DTYPE)
    for r, o in zip(results, outs):
        _write(r, o)
    if not several:
        return out
    return type(result)(*outs) if hasattr(type(result), "_fields") else type(result)(outs)


def _call_factory(fn: Callable, args: tuple, kwargs: dict, out: Any, name: str):
    (out,) = _out_tensors(name, out, None)
    dtype = kwargs.get("dtype")
    if dtype is None:
        kwargs["dtype"] = out.dtype
    elif dtype != out.dtype:
        raise RuntimeError(
            f"dtype {dtype._scalar_type_name} does not match dtype of out parameter "
            f"({out.dtype._scalar_type_name})"
        )
    result = fn(*args, **kwargs)
    if name in ("arange", "range") and out.numel() not in (0, result.numel()):
        warnings.warn(
            f"The number of elements in the out tensor of shape {list(out.shape)} is "
            f"{out.numel()} which does not match the computed number of elements "
            f"{result.numel()}. Note that this may occur as a result of rounding error. The out "
            f"tensor will be resized to a tensor of shape ({result.numel()},).",
            stacklevel=3,
        )
    # A factory resizes ``out`` as ``resize_`` does: refused for a tensor that requires grad.
    out.resize_(result.shape)
    with no_grad():
        out.copy_(result)
    return out


def accepting_out(fn: Callable, name: str, *, factory: bool = False, exact: bool = False):
    """``fn`` with PyTorch's ``out=`` keyword (see the module's docstring)."""

    @functools.wraps(fn)
    def function(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if factory:
            return _call_factory(fn, args, kwargs, out, name)
        return call(name, fn, args, kwargs, out, exact)

    return function


def install(
    namespace: dict[str, Any],
    names: Iterable[str],
    *,
    exact: bool = False,
    factories: frozenset[str] = FACTORIES,
) -> None:
    """Gives the functions ``names`` of ``namespace`` (those it has) the ``out=`` keyword."""
    for name in names:
        fn = namespace.get(name)
        if fn is None or getattr(fn, "takes_out", False):
            continue
        namespace[name] = accepting_out(fn, name, factory=name in factories, exact=exact)

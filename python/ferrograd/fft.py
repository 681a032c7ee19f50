"""``ferrograd.fft``: discrete Fourier transforms with PyTorch's ``torch.fft`` signatures.

The transforms (``fft``, ``ifft``, ``rfft``, ``irfft`` and their ``2``/``n`` forms) run in the Rust
core on ``rustfft`` plans of any length, batched over the other dimensions, with PyTorch's backward
rules (``FftC2CBackward0``, ``FftR2CBackward0``, ``FftC2RBackward0``), themselves written with
transforms so that they differentiate again. The Hermitian transforms (``hfft``, ``ihfft`` and their
``2``/``n`` forms), ``fftfreq``, ``rfftfreq``, ``fftshift`` and ``ifftshift`` are compositions of
those and other ops. This module only handles arguments.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Union

from . import _C
from ._C import Tensor
from ._compat import _require_tensor
from ._functions import _wrap_dim

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

# A runtime alias: ``X | Y`` between types needs Python 3.10.
_Dims = Union[int, Sequence[int], None]


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim``.

    ``n`` trims or zero-pads the signal; ``norm`` is ``"backward"`` (the default, no scaling),
    ``"ortho"`` (``1/sqrt(n)``) or ``"forward"`` (``1/n``). Real inputs give complex results
    (float32 to complex64, float64 to complex128, integers to the default complex dtype).
    """
    return _C.fft_fft(input, n, dim, norm)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-dimensional inverse discrete Fourier transform (``"backward"`` scales by ``1/n``)."""
    return _C.fft_ifft(input, n, dim, norm)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The ``n // 2 + 1`` non-negative frequencies of the transform of a real signal."""
    return _C.fft_rfft(input, n, dim, norm)


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of :func:`rfft`: a real signal of ``n`` points (default ``2 * (size - 1)``)."""
    return _C.fft_irfft(input, n, dim, norm)


def _require_dims(name: str, dim: _Dims) -> None:
    """The two-dimensional transforms, unlike the n-dimensional ones, take no ``dim=None``."""
    if dim is None:
        raise TypeError(f"{name}(): argument 'dim' must be tuple of ints, not NoneType")


def fft2(
    input: Tensor, s: Sequence[int] | None = None, dim: _Dims = (-2, -1), norm: str | None = None
) -> Tensor:
    """The two-dimensional discrete Fourier transform over ``dim`` (the last two by default)."""
    _require_dims("fft_fft2", dim)
    return _C.fft_fftn(input, s, dim, norm)


def ifft2(
    input: Tensor, s: Sequence[int] | None = None, dim: _Dims = (-2, -1), norm: str | None = None
) -> Tensor:
    """The two-dimensional inverse discrete Fourier transform."""
    _require_dims("fft_ifft2", dim)
    return _C.fft_ifftn(input, s, dim, norm)


def fftn(input: Tensor, s: Sequence[int] | None = None, dim: _Dims = None, norm: str | None = None) -> Tensor:
    """The n-dimensional discrete Fourier transform over ``dim``.

    By default all dims, or the last ``len(s)`` when ``s`` (the signal sizes, ``-1`` keeping a
    size) is given.
    """
    return _C.fft_fftn(input, s, dim, norm)


def ifftn(
    input: Tensor, s: Sequence[int] | None = None, dim: _Dims = None, norm: str | None = None
) -> Tensor:
    """The n-dimensional inverse discrete Fourier transform."""
    return _C.fft_ifftn(input, s, dim, norm)


def rfft2(
    input: Tensor, s: Sequence[int] | None = None, dim: _Dims = (-2, -1), norm: str | None = None
) -> Tensor:
    """The two-dimensional transform of a real signal; the last dim keeps ``n // 2 + 1`` frequencies."""
    _require_dims("fft_rfft2", dim)
    return _C.fft_rfftn(input, s, dim, norm)


def irfft2(
    input: Tensor, s: Sequence[int] | None = None, dim: _Dims = (-2, -1), norm: str | None = None
) -> Tensor:
    """The inverse of :func:`rfft2`."""
    _require_dims("fft_irfft2", dim)
    return _C.fft_irfftn(input, s, dim, norm)


def rfftn(
    input: Tensor, s: Sequence[int] | None = None, dim: _Dims = None, norm: str | None = None
) -> Tensor:
    """The n-dimensional transform of a real signal; the last dim keeps ``n // 2 + 1`` frequencies."""
    return _C.fft_rfftn(input, s, dim, norm)


def irfftn(
    input: Tensor, s: Sequence[int] | None = None, dim: _Dims = None, norm: str | None = None
) -> Tensor:
    """The inverse of :func:`rfftn`: the last dim gets ``s[-1]`` points (default ``2 * (size - 1)``)."""
    return _C.fft_irfftn(input, s, dim, norm)


# The Hermitian transforms are the real ones on conjugates. The forward transform of a signal is the
# conjugate of the unscaled inverse transform of its conjugate, so ``hfft`` (whose result is real) is
# ``irfft`` of ``input.conj()`` and ``ihfft`` is ``rfft(input).conj()``, each scaled as ``norm`` says
# for the direction it stands for: the real transform underneath takes the mode that scales the
# opposite direction alike.
_OPPOSITE_NORM = {None: "forward", "backward": "forward", "forward": "backward"}
_NORMS = (None, "backward", "ortho", "forward")


def _opposite(norm: str | None) -> str | None:
    """The norm mode that scales the other direction as ``norm`` scales this one ("ortho" and
    invalid modes pass through, the latter to be refused by the core)."""
    return _OPPOSITE_NORM.get(norm, norm)


def _listed(value: int | Sequence[int]) -> list[int]:
    return [value] if isinstance(value, int) else list(value)


def _fft_dim(dim: int, ndim: int) -> int:
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim)


def _sizes_and_dims(input: Tensor, s: Sequence[int] | None, dim: _Dims) -> tuple[list[int], list[int]]:
    """The signal size along each transformed dim, and those dims, checked in the order and with the
    messages of the core's transforms (``-1`` in ``s`` keeps a size; without ``dim``, ``s`` covers
    the last dims)."""
    ndim = input.dim()
    dims = None
    if dim is not None:
        dims = [_fft_dim(d, ndim) for d in _listed(dim)]
        if len(set(dims)) < len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is None:
        dims = list(range(ndim)) if dims is None else dims
        sizes = [input.size(d) for d in dims]
    else:
        s = _listed(s)
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        dims = list(range(ndim - len(s), ndim)) if dims is None else dims
        sizes = [input.size(d) if n == -1 else n for n, d in zip(s, dims)]
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return sizes, dims


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The transform of a signal with a Hermitian spectrum, given by its first half: a real signal
    of ``n`` points (default ``2 * (size - 1)``). Real inputs are taken as complex."""
    _require_tensor("fft_hfft", "input", 1, input)
    return irfft(input.conj(), n, dim, _opposite(norm))


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of :func:`hfft`: the ``n // 2 + 1`` first points of the (Hermitian) inverse
    transform of a real signal (``"backward"`` scales by ``1/n``)."""
    _require_tensor("fft_ihfft", "input", 1, input)
    if input.is_complex():
        raise RuntimeError(f"ihfft expects a real input tensor, but got {input.dtype._scalar_type_name}")
    return rfft(input, n, dim, _opposite(norm)).conj()


def _hfftn(input: Tensor, s: Sequence[int] | None, dim: _Dims, norm: str | None) -> Tensor:
    if not _sizes_and_dims(input, s, dim)[1]:
        raise RuntimeError("hfftn must transform at least one axis")
    return irfftn(input.conj(), s, dim, _opposite(norm))


def _ihfftn(input: Tensor, s: Sequence[int] | None, dim: _Dims, norm: str | None) -> Tensor:
    sizes, dims = _sizes_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    # PyTorch checks the mode, and only then that the input is real.
    if isinstance(norm, str) and norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    if input.is_complex():
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {input.dtype._scalar_type_name}")
    # The one-sided transform along the last dim, then (as PyTorch does, hence its grad_fn) the
    # inverse complex transforms along the others.
    half = rfft(input, sizes[-1], dims[-1], _opposite(norm)).conj()
    return ifftn(half, sizes[:-1], dims[:-1], norm) if len(dims) > 1 else half


def hfft2(
    input: Tensor, s: Sequence[int] | None = None, dim: _Dims = (-2, -1), norm: str | None = None
) -> Tensor:
    """The two-dimensional :func:`hfftn`."""
    _require_tensor("fft_hfft2", "input", 1, input)
    _require_dims("fft_hfft2", dim)
    return _hfftn(input, s, dim, norm)


def ihfft2(
    input: Tensor, s: Sequence[int] | None = None, dim: _Dims = (-2, -1), norm: str | None = None
) -> Tensor:
    """The two-dimensional :func:`ihfftn`."""
    _require_tensor("fft_ihfft2", "input", 1, input)
    _require_dims("fft_ihfft2", dim)
    return _ihfftn(input, s, dim, norm)


def hfftn(
    input: Tensor, s: Sequence[int] | None = None, dim: _Dims = None, norm: str | None = None
) -> Tensor:
    """The n-dimensional transform of a signal whose spectrum is Hermitian in the last of ``dim``,
    where ``input`` holds its first half: a real result with ``s[-1]`` points there (default
    ``2 * (size - 1)``). Real inputs are taken as complex."""
    _require_tensor("fft_hfftn", "input", 1, input)
    return _hfftn(input, s, dim, norm)


def ihfftn(
    input: Tensor, s: Sequence[int] | None = None, dim: _Dims = None, norm: str | None = None
) -> Tensor:
    """The inverse of :func:`hfftn` for a real ``input``: the last of ``dim`` keeps ``n // 2 + 1``
    points."""
    _require_tensor("fft_ihfftn", "input", 1, input)
    return _ihfftn(input, s, dim, norm)


def fftfreq(
    n: int, d: float = 1.0, *, dtype=None, layout=None, device=None, requires_grad: bool = False
) -> Tensor:
    """The sample frequencies of :func:`fft` for a signal of ``n`` points spaced ``d`` apart:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``."""
    del layout, device
    n = _int_argument("fft_fftfreq", n)
    _check_dtype("fftfreq", dtype)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    k = _C.arange(n, dtype=dtype or _C.get_default_dtype())
    k = _C.cat([k[: (n + 1) // 2], _C.arange(-(n // 2), 0, dtype=k.dtype)]) if n > 1 else k
    return _finish(k * _reciprocal(n * float(d)), requires_grad)


def rfftfreq(
    n: int, d: float = 1.0, *, dtype=None, layout=None, device=None, requires_grad: bool = False
) -> Tensor:
    """The sample frequencies of :func:`rfft` for a signal of ``n`` points spaced ``d`` apart:
    ``[0, 1, ..., n // 2] / (d * n)``."""
    del layout, device
    n = _int_argument("fft_rfftfreq", n)
    _check_dtype("rfftfreq", dtype)
    # n // 2 rounded towards zero, as PyTorch computes it (so n = -1 gives one frequency).
    size = (n // 2 if n >= 0 else -(-n // 2)) + 1
    if size < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {size}: [{size}]")
    k = _C.arange(size, dtype=dtype or _C.get_default_dtype())
    return _finish(k * _reciprocal(n * float(d)), requires_grad)


def _int_argument(name: str, n) -> int:
    try:
        return operator.index(n)
    except TypeError:
        raise TypeError(f"{name}(): argument 'n' (position 1) must be int, not {type(n).__name__}") from None


def _reciprocal(x: float) -> float:
    """``1 / x`` in IEEE arithmetic, as PyTorch scales the frequencies: a zero spacing (or ``n``)
    gives infinities, and NaN where they meet a zero."""
    return 1.0 / x if x else math.copysign(math.inf, x)


def _check_dtype(name: str, dtype) -> None:
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    return t.requires_grad_(True) if requires_grad else t


def _shifts(input: Tensor, dim: _Dims, inverse: bool) -> tuple[list[int], list[int]]:
    if dim is None:
        dims = list(range(input.dim()))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    extra = 1 if inverse else 0
    return [(input.size(d) + extra) // 2 for d in dims], dims


def fftshift(input: Tensor, dim: _Dims = None) -> Tensor:
    """Moves the zero frequency to the centre of ``dim`` (all dims by default): a roll by half."""
    _require_tensor("fft_fftshift", "input", 1, input)
    shifts, dims = _shifts(input, dim, inverse=False)
    return input.roll(shifts, dims)


def ifftshift(input: Tensor, dim: _Dims = None) -> Tensor:
    """The inverse of :func:`fftshift`."""
    _require_tensor("fft_ifftshift", "input", 1, input)
    shifts, dims = _shifts(input, dim, inverse=True)
    return input.roll(shifts, dims)

"""``ferrograd.fft``: discrete Fourier transforms with PyTorch's ``torch.fft`` signatures.

The transforms (``fft``, ``ifft``, ``rfft``, ``irfft`` and their ``2``/``n`` forms) run in the Rust
core on ``rustfft`` plans of any length, batched over the other dimensions, with PyTorch's backward
rules (``FftC2CBackward0``, ``FftR2CBackward0``, ``FftC2RBackward0``), themselves written with
transforms so that they differentiate again. ``fftfreq``, ``rfftfreq``, ``fftshift`` and
``ifftshift`` are compositions of existing ops. This module only handles arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

from . import _C
from ._C import Tensor

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
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


def fft2(
    input: Tensor, s: Sequence[int] | None = None, dim: _Dims = (-2, -1), norm: str | None = None
) -> Tensor:
    """The two-dimensional discrete Fourier transform over ``dim`` (the last two by default)."""
    return _C.fft_fftn(input, s, dim, norm)


def ifft2(
    input: Tensor, s: Sequence[int] | None = None, dim: _Dims = (-2, -1), norm: str | None = None
) -> Tensor:
    """The two-dimensional inverse discrete Fourier transform."""
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
    return _C.fft_rfftn(input, s, dim, norm)


def irfft2(
    input: Tensor, s: Sequence[int] | None = None, dim: _Dims = (-2, -1), norm: str | None = None
) -> Tensor:
    """The inverse of :func:`rfft2`."""
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


def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of :func:`fft` for a signal of ``n`` points spaced ``d`` apart:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``."""
    del device
    _check_dtype("fftfreq", dtype)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    k = _C.arange(n, dtype=dtype or _C.get_default_dtype())
    k = _C.cat([k[: (n + 1) // 2], _C.arange(-(n // 2), 0, dtype=k.dtype)]) if n > 1 else k
    return _finish(k * (1.0 / (n * d)) if n else k, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of :func:`rfft` for a signal of ``n`` points spaced ``d`` apart:
    ``[0, 1, ..., n // 2] / (d * n)``."""
    del device
    _check_dtype("rfftfreq", dtype)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n // 2 + 1}: [{n // 2 + 1}]")
    k = _C.arange(n // 2 + 1, dtype=dtype or _C.get_default_dtype())
    return _finish(k * (1.0 / (n * d)) if n else k, requires_grad)


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
    shifts, dims = _shifts(input, dim, inverse=False)
    return input.roll(shifts, dims)


def ifftshift(input: Tensor, dim: _Dims = None) -> Tensor:
    """The inverse of :func:`fftshift`."""
    shifts, dims = _shifts(input, dim, inverse=True)
    return input.roll(shifts, dims)

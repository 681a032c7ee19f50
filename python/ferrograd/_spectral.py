"""The short-time Fourier transform and its inverse, made of differentiable ops (frames by
``unfold``, transforms by ``ferrograd.fft``, overlap-add by ``index_add``)."""

from __future__ import annotations

import builtins
import warnings

from . import _C, fft
from ._C import Tensor


def _window_of(window: Tensor | None, n_fft: int, win_length: int | None, dtype) -> Tensor:
    """The window, centred and zero-padded to ``n_fft`` points (all ones when not given)."""
    win_length = n_fft if win_length is None else win_length
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied, which is known to cause "
            "spectral leakage; windows such as ferrograd.hann_window reduce it. To use a rectangular "
            "window without this warning, pass `window=ferrograd.ones(n_fft)`.",
            UserWarning,
            stacklevel=3,
        )
        window = _C.ones((win_length,), dtype=dtype)
    if window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(
            f"stft: expected a 1D window tensor of size equal to win_length={win_length}, but got window "
            f"with size {list(window.shape)}"
        )
    if win_length == n_fft:
        return window
    left = (n_fft - win_length) // 2
    zeros = [_C.zeros((k,), dtype=window.dtype) for k in (left, n_fft - win_length - left)]
    return _C.cat([zeros[0], window, zeros[1]])


def stft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: builtins.bool = True,
    pad_mode: str = "reflect",
    normalized: builtins.bool = False,
    onesided: builtins.bool | None = None,
    return_complex: builtins.bool | None = None,
) -> Tensor:
    """``(*, n_fft // 2 + 1, frames)`` (all ``n_fft`` frequencies unless ``onesided``): the
    windowed transform of frames ``hop_length`` apart, the signal padded by ``n_fft // 2`` on each
    side (``pad_mode``) when ``center``."""
    if return_complex is None and not input.is_complex() and not (window is not None and window.is_complex()):
        raise RuntimeError(
            "stft requires the return_complex parameter be given for real inputs, and will further "
            "require that return_complex=True in a future PyTorch release."
        )
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D")
    hop_length = n_fft // 4 if hop_length is None else hop_length
    if not 0 < n_fft <= input.shape[-1] + (2 * (n_fft // 2) if center else 0):
        raise RuntimeError(f"stft: expected 0 < n_fft < {input.shape[-1]}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop_length}")
    signal = input if input.dim() == 2 else input.unsqueeze(0)
    if center:
        from .nn import functional as F

        pad = n_fft // 2
        signal = F.pad(signal.unsqueeze(1), (pad, pad), mode=pad_mode).squeeze(1)
    real_dtype = signal.real.dtype if signal.is_complex() else signal.dtype
    frames = signal.unfold(-1, n_fft, hop_length) * _window_of(window, n_fft, win_length, real_dtype)
    complex_data = frames.is_complex()
    onesided = not complex_data if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    spectrum = (fft.rfft(frames, norm=norm) if onesided else fft.fft(frames, norm=norm)).transpose(-2, -1)
    if input.dim() == 1:
        spectrum = spectrum.squeeze(0)
    if return_complex is False:
        warnings.warn("stft with return_complex=False is deprecated", UserWarning, stacklevel=2)
        return _C.view_as_real(spectrum)
    return spectrum


def istft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: builtins.bool = True,
    normalized: builtins.bool = False,
    onesided: builtins.bool | None = None,
    length: int | None = None,
    return_complex: builtins.bool = False,
) -> Tensor:
    """The signal whose ``stft`` (with the same arguments) is ``input``: inverse transforms of the
    frames, windowed again, overlapped and added, divided by the summed squared window."""
    if input.dim() not in (2, 3) or not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor of 2 or 3 dimensions")
    hop_length = n_fft // 4 if hop_length is None else hop_length
    spectrum = input if input.dim() == 3 else input.unsqueeze(0)
    onesided = spectrum.shape[-2] != n_fft if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    columns = spectrum.transpose(-2, -1)
    if onesided:
        frames = fft.irfft(columns, n=n_fft, norm=norm)
    else:
        frames = fft.ifft(columns, n=n_fft, norm=norm)
        frames = frames if return_complex else frames.real
    win = _window_of(window, n_fft, win_length, frames.real.dtype if frames.is_complex() else frames.dtype)
    count = frames.shape[-2]
    total = n_fft + hop_length * (count - 1)
    positions = (_C.arange(count).unsqueeze(1) * hop_length + _C.arange(n_fft)).reshape(-1)
    batch = frames.shape[0]
    signal = _C.zeros((batch, total), dtype=frames.dtype).index_add(
        1, positions, (frames * win).reshape(batch, -1)
    )
    envelope = _C.zeros((total,), dtype=win.dtype).index_add(0, positions, (win * win).repeat(count))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else builtins.min(start + length, total)
    if (envelope[start:end].abs() < 1e-11).any().item():
        raise RuntimeError("istft: window overlap add min: 1")
    signal = signal[:, start:end] / envelope[start:end]
    if length is not None and signal.shape[-1] < length:
        signal = _C.cat([signal, _C.zeros((batch, length - signal.shape[-1]), dtype=signal.dtype)], 1)
    return signal if input.dim() == 3 else signal.squeeze(0)

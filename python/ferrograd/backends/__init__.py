"""``ferrograd.backends``: the switches PyTorch's backends expose, so that code which sets them
(``backends.cudnn.benchmark = True``) or asks about them runs unchanged. ferrograd computes on the
CPU with its own kernels: no CUDA, cuDNN, MPS, oneDNN or OpenMP backend is ever available, and
the switches change nothing ferrograd computes."""

from . import cuda, cudnn, mkldnn, mps, openmp

__all__ = ["cuda", "cudnn", "mkldnn", "mps", "openmp"]

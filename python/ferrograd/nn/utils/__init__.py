"""torch.nn.utils subset: gradient clipping, parameter/vector conversion and ``rnn.pad_sequence``."""

from __future__ import annotations

from . import rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "parameters_to_vector",
    "rnn",
    "vector_to_parameters",
]

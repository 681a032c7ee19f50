"""Flattening parameters into one vector and back."""

from __future__ import annotations

from collections.abc import Iterable

import ferrograd

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[ferrograd.Tensor]) -> ferrograd.Tensor:
    """One 1-D tensor holding all of ``parameters`` flattened and concatenated (differentiable)."""
    return ferrograd.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: ferrograd.Tensor, parameters: Iterable[ferrograd.Tensor]) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters`` (the inverse of
    :func:`parameters_to_vector`)."""
    if not isinstance(vec, ferrograd.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    with ferrograd.no_grad():
        for param in parameters:
            num = param.numel()
            param.copy_(vec[pointer : pointer + num].reshape(param.shape))
            pointer += num

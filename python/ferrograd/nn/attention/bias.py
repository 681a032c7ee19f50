"""Causal attention masks given by their shape (torch.nn.attention.bias): passed as
``scaled_dot_product_attention``'s ``attn_mask``, a ``CausalBias`` stands for the boolean mask
it describes, aligned to the top-left or the bottom-right of the scores."""

from __future__ import annotations

import enum
import warnings

import ferrograd

__all__ = ["CausalBias", "CausalVariant", "causal_lower_right", "causal_upper_left"]


class CausalVariant(enum.IntEnum):
    """Where the diagonal of a causal mask starts: the first query and key (``UPPER_LEFT``) or
    the last of each (``LOWER_RIGHT``, for queries that continue a longer key sequence)."""

    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """A causal mask of ``seq_len_q`` queries by ``seq_len_kv`` keys."""

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if variant == CausalVariant.LOWER_RIGHT and seq_len_q > seq_len_kv:
            warnings.warn(
                "Lower right causal bias will produce NaNs in the output when seq_len_q > seq_len_kv!",
                stacklevel=3,
            )

    def _materialize(self, device=None) -> ferrograd.Tensor:
        """The boolean mask: ``True`` where a query may attend to a key."""
        ones = ferrograd.ones((self.seq_len_q, self.seq_len_kv), dtype=ferrograd.bool)
        if self.variant == CausalVariant.UPPER_LEFT:
            return ones.tril()
        return ones.tril(diagonal=self.seq_len_kv - self.seq_len_q)

    def __repr__(self) -> str:
        return repr(self._materialize())


def _causal(variant: CausalVariant, name: str, size: tuple[int, ...]) -> CausalBias:
    if len(size) != 2:
        raise AssertionError(f"{name} only supports 2D tensors")
    return CausalBias(variant, size[0], size[1])


def causal_upper_left(*size: int) -> CausalBias:
    """The causal mask whose diagonal starts at the first query and key."""
    return _causal(CausalVariant.UPPER_LEFT, "causal_upper_left", size)


def causal_lower_right(*size: int) -> CausalBias:
    """The causal mask whose diagonal ends at the last query and key."""
    return _causal(CausalVariant.LOWER_RIGHT, "causal_lower_right", size)

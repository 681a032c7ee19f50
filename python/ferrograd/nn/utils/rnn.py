"""torch.nn.utils.rnn subset: ``pad_sequence``."""

from __future__ import annotations

from collections.abc import Sequence

import ferrograd

__all__ = ["pad_sequence"]


def pad_sequence(
    sequences: ferrograd.Tensor | Sequence[ferrograd.Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> ferrograd.Tensor:
    """Stack variable-length sequences of shape ``(L_i, *)`` into one tensor padded with
    ``padding_value``: ``(max L, B, *)``, or ``(B, max L, *)`` when ``batch_first``.
    ``padding_side="left"`` puts the padding before each sequence. Differentiable."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, ferrograd.Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = max_len - s.shape[0]
        if missing == 0:
            padded.append(s)
            continue
        pad = ferrograd.full((missing, *s.shape[1:]), padding_value, dtype=s.dtype)
        padded.append(ferrograd.cat([s, pad] if padding_side == "right" else [pad, s]))
    return ferrograd.stack(padded, dim=0 if batch_first else 1)

"""torch.nn.utils.rnn: padding and packing of variable-length sequences.

A :class:`PackedSequence` stores the time steps of a batch of sequences sorted by decreasing
length one after the other: ``data`` holds, for every step ``t``, the ``batch_sizes[t]``
sequences still running at ``t``. Packing and unpacking are differentiable (slices and cats).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

import ferrograd

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


def invert_permutation(permutation: ferrograd.Tensor | None) -> ferrograd.Tensor | None:
    """The inverse of the 1-D index permutation ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    output = ferrograd.empty_like(permutation)
    return output.scatter_(0, permutation, ferrograd.arange(permutation.numel(), dtype=permutation.dtype))


class PackedSequence(
    namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])
):
    """A packed batch of variable-length sequences (see the module docstring).

    ``sorted_indices[i]`` is the original batch index of the i-th longest sequence, and
    ``unsorted_indices`` its inverse; both are None when the batch was already sorted.
    Build it with :func:`pack_padded_sequence` or :func:`pack_sequence`.
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            # torch also accepts the (data, batch_sizes) pair as the first argument
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data: ferrograd.Tensor) -> PackedSequence:
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """Apply ``Tensor.to`` to ``data`` (the index tensors keep their dtype); ``self`` when
        nothing changes, as in torch."""
        data = self.data.to(*args, **kwargs)
        if data.dtype == self.data.dtype and data.device == self.data.device and not kwargs.get("copy"):
            return self
        return self._with_data(data)

    def cpu(self) -> PackedSequence:
        return self._with_data(self.data.cpu())

    def double(self) -> PackedSequence:
        return self.to(dtype=ferrograd.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=ferrograd.float32)

    def detach(self) -> PackedSequence:
        return self._with_data(self.data.detach())

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def pack_padded_sequence(
    input: ferrograd.Tensor,
    lengths: ferrograd.Tensor | Sequence[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack the padded batch ``input`` (``(T, B, *)``, or ``(B, T, *)`` when ``batch_first``) whose
    sequences have the given ``lengths``. Unless ``enforce_sorted``, the batch is first sorted
    by decreasing length (the permutation is recorded in the result)."""
    if isinstance(lengths, ferrograd.Tensor):
        lengths = lengths.to(ferrograd.int64)
    else:
        lengths = ferrograd.tensor(list(lengths), dtype=ferrograd.int64)
    if lengths.dim() != 1:
        raise RuntimeError(
            f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D cpu Long tensor"
        )
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = ferrograd.sort(lengths, descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch_size = input.shape[1]
    lens = lengths.tolist()
    if len(lens) != batch_size:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} (batch_size={batch_size})"
        )
    if lens[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"
        )
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
            "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
            "if you do not need ONNX exportability."
        )
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])]
    data = ferrograd.cat([input[t, :bs] for t, bs in enumerate(batch_sizes)], 0)
    return PackedSequence(data, ferrograd.tensor(batch_sizes, dtype=ferrograd.int64), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[ferrograd.Tensor, ferrograd.Tensor]:
    """Inverse of :func:`pack_padded_sequence`: the padded batch (in the original batch order) and
    the int64 tensor of lengths. ``total_length`` pads the time dimension further."""
    batch_sizes = sequence.batch_sizes.tolist()
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {max_seq_length}"
            )
        max_seq_length = total_length
    data = sequence.data
    batch = batch_sizes[0]
    feature_shape = tuple(data.shape[1:])
    steps, offset = [], 0
    for bs in batch_sizes:
        step = data[offset : offset + bs]
        offset += bs
        if bs < batch:
            step = ferrograd.cat(
                [step, ferrograd.full((batch - bs, *feature_shape), padding_value, dtype=data.dtype)]
            )
        steps.append(step)
    for _ in range(max_seq_length - len(batch_sizes)):
        steps.append(ferrograd.full((batch, *feature_shape), padding_value, dtype=data.dtype))
    padded = ferrograd.stack(steps, 1 if batch_first else 0)
    lengths = ferrograd.tensor(
        [sum(1 for bs in batch_sizes if bs > b) for b in range(batch)], dtype=ferrograd.int64
    )
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    return padded, lengths


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


def unpad_sequence(
    padded_sequences: ferrograd.Tensor,
    lengths: ferrograd.Tensor | Sequence[int],
    batch_first: bool = False,
) -> list[ferrograd.Tensor]:
    """Split a padded batch back into the list of its sequences, cut to ``lengths``."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    if isinstance(lengths, ferrograd.Tensor):
        lengths = lengths.tolist()
    return [seq[: int(length)] for seq, length in zip(padded_sequences.unbind(0), lengths)]


def pack_sequence(sequences: Sequence[ferrograd.Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of variable-length sequences ``(L_i, *)`` (sorted by decreasing length unless
    ``enforce_sorted=False``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[ferrograd.Tensor]:
    """Inverse of :func:`pack_sequence`: the list of the packed sequences."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

"""nn.utils.rnn packing (PackedSequence, pack/pad/unpad/unpack) and RNN/LSTM/GRU on packed
input, against torch: values, gradients and errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch not installed")
MODULES = [fg] + ([torch] if has_torch else [])


def _np(t):
    return t.detach().numpy()


def _padded(lengths, features=3, seed=0, batch_first=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((len(lengths), max(lengths), features))
    for b, n in enumerate(lengths):
        x[b, n:] = 0.0
    return x if batch_first else x.transpose(1, 0, 2).copy()


@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize(("lengths", "enforce_sorted"), [([4, 3, 3, 1], True), ([2, 4, 1, 3], False)])
def test_pack_padded_round_trip_matches_torch(lengths, enforce_sorted, batch_first):
    x = _padded(lengths, batch_first=batch_first)
    out = {}
    for T in (fg, torch):
        xt = T.tensor(x, requires_grad=True)
        packed = T.nn.utils.rnn.pack_padded_sequence(
            xt, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted
        )
        padded, lens = T.nn.utils.rnn.pad_packed_sequence(
            packed, batch_first=batch_first, padding_value=-1.0, total_length=6
        )
        (padded * T.arange(padded.numel(), dtype=padded.dtype).reshape(padded.shape)).sum().backward()
        out[T] = (packed, padded, lens, xt.grad)
    fp, tp = out[fg][0], out[torch][0]
    assert isinstance(fp, fg.nn.utils.rnn.PackedSequence) and isinstance(fp, tuple)
    np.testing.assert_array_equal(_np(fp.data), _np(tp.data))
    assert fp.batch_sizes.tolist() == tp.batch_sizes.tolist()
    for name in ("sorted_indices", "unsorted_indices"):
        f_idx, t_idx = getattr(fp, name), getattr(tp, name)
        assert (f_idx is None) == (t_idx is None)
        if f_idx is not None:
            assert f_idx.tolist() == t_idx.tolist()
    for i in (1, 2, 3):
        np.testing.assert_array_equal(_np(out[fg][i]), _np(out[torch][i]))
    assert out[fg][2].dtype == fg.int64


@needs_torch
def test_pack_sequence_unpack_unpad_match_torch():
    rng = np.random.default_rng(1)
    seqs = [rng.standard_normal((n, 2)) for n in (2, 5, 3)]
    fseqs = [fg.tensor(s) for s in seqs]
    packed = fg.nn.utils.rnn.pack_sequence(fseqs, enforce_sorted=False)
    tpacked = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    np.testing.assert_array_equal(_np(packed.data), _np(tpacked.data))
    for got, want in zip(fg.nn.utils.rnn.unpack_sequence(packed), seqs):
        np.testing.assert_array_equal(_np(got), want)
    padded = fg.nn.utils.rnn.pad_sequence(fseqs, batch_first=True)
    for got, want in zip(
        fg.nn.utils.rnn.unpad_sequence(padded, fg.tensor([2, 5, 3]), batch_first=True), seqs
    ):
        np.testing.assert_array_equal(_np(got), want)


def test_packed_sequence_namedtuple_and_to():
    p = fg.nn.utils.rnn.pack_sequence([fg.ones(3, 2), fg.ones(1, 2)])
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert data is p.data and sorted_indices is None and unsorted_indices is None
    assert batch_sizes.tolist() == [2, 1, 1]
    d = p.double()
    assert d.data.dtype == fg.float64 and d.batch_sizes is p.batch_sizes
    assert p.to(fg.float32) is p


def test_invert_permutation_via_unsorted_indices():
    perm = fg.tensor([2, 0, 3, 1])
    p = fg.nn.utils.rnn.PackedSequence(fg.zeros(4, 1), fg.tensor([4]), perm)
    assert p.unsorted_indices[perm].tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("fn", "kind", "message"),
    [
        (
            lambda T: T.nn.utils.rnn.pack_padded_sequence(T.zeros(3, 2, 1), [1, 2]),
            RuntimeError,
            re.escape("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True."),
        ),
        (
            lambda T: T.nn.utils.rnn.pack_padded_sequence(T.zeros(3, 2, 1), [2, 0]),
            RuntimeError,
            "Length of all samples has to be greater than 0",
        ),
        (
            lambda T: T.nn.utils.rnn.pack_padded_sequence(T.zeros(3, 2, 1), [2, 2, 1]),
            RuntimeError,
            re.escape("Expected `len(lengths)` to be equal to batch_size, but got 3 (batch_size=2)"),
        ),
        (
            lambda T: T.nn.utils.rnn.pad_packed_sequence(
                T.nn.utils.rnn.pack_sequence([T.ones(3, 1), T.ones(2, 1)]), total_length=2
            ),
            ValueError,
            "Expected total_length to be at least the length of the longest sequence in input, but got "
            "total_length=2 and max sequence length being 3",
        ),
    ],
)
def test_packing_errors_like_torch(fn, kind, message):
    for T in MODULES:
        with pytest.raises(kind, match=message):
            fn(T)


def _copy_params(fmod, tmod):
    with fg.no_grad():
        for name, p in tmod.named_parameters():
            getattr(fmod, name).copy_(fg.tensor(p.detach().numpy()))


@needs_torch
@pytest.mark.parametrize(
    ("kind", "kwargs"),
    [
        ("RNN", {}),
        ("RNN", {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}),
        ("GRU", {"bidirectional": True, "batch_first": True}),
        ("LSTM", {"num_layers": 2}),
        ("LSTM", {"bidirectional": True, "proj_size": 2}),
    ],
)
@pytest.mark.parametrize("with_hx", [False, True])
def test_rnn_on_packed_input_matches_torch(kind, kwargs, with_hx):
    lengths = [3, 5, 1, 4]
    batch_first = kwargs.get("batch_first", False)
    x = _padded(lengths, batch_first=batch_first, seed=2)
    tmod = getattr(torch.nn, kind)(3, 4, dtype=torch.float64, **kwargs)
    fmod = getattr(fg.nn, kind)(3, 4, dtype=fg.float64, **kwargs)
    _copy_params(fmod, tmod)
    dirs = 2 if kwargs.get("bidirectional") else 1
    layers = kwargs.get("num_layers", 1)
    rng = np.random.default_rng(3)
    h0 = rng.standard_normal((layers * dirs, len(lengths), kwargs.get("proj_size") or 4))
    c0 = rng.standard_normal((layers * dirs, len(lengths), 4))
    results = []
    for T, mod in ((fg, fmod), (torch, tmod)):
        xt = T.tensor(x, requires_grad=True)
        packed = T.nn.utils.rnn.pack_padded_sequence(
            xt, lengths, batch_first=batch_first, enforce_sorted=False
        )
        hx = None
        if with_hx:
            hx = (
                (T.tensor(h0, requires_grad=True), T.tensor(c0))
                if kind == "LSTM"
                else T.tensor(h0, requires_grad=True)
            )
        out, state = mod(packed, hx)
        assert isinstance(out, T.nn.utils.rnn.PackedSequence)
        h_n = state[0] if kind == "LSTM" else state
        padded, _ = T.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first)
        loss = padded.pow(2).sum() + h_n.sum() + (state[1].sum() if kind == "LSTM" else 0)
        loss.backward()
        grads = [xt.grad] + [p.grad for _, p in mod.named_parameters()]
        if with_hx:
            grads.append((hx[0] if kind == "LSTM" else hx).grad)
        results.append((padded, h_n, *grads))
    for a, b in zip(*results):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-9, atol=1e-12)


@needs_torch
def test_rnn_packed_hidden_size_error_like_torch():
    for T in MODULES:
        rnn = T.nn.GRU(3, 4)
        packed = T.nn.utils.rnn.pack_sequence([T.ones(3, 3), T.ones(2, 3)])
        with pytest.raises(RuntimeError, match=re.escape("Expected hidden size (1, 2, 4), got [1, 3, 4]")):
            rnn(packed, T.zeros(1, 3, 4))


def test_rnn_plain_tensor_path_unchanged_by_packing():
    rnn = fg.nn.LSTM(2, 3, batch_first=True)
    x = fg.randn(2, 4, 2)
    out, (h, _) = rnn(x)
    packed_out, (hp, _) = rnn(fg.nn.utils.rnn.pack_padded_sequence(x, [4, 4], batch_first=True))
    padded, _ = fg.nn.utils.rnn.pad_packed_sequence(packed_out, batch_first=True)
    np.testing.assert_allclose(_np(padded), _np(out), rtol=1e-6)
    np.testing.assert_allclose(_np(hp), _np(h), rtol=1e-6)

"""PyTorch's lower-level top-level functions (recurrent cells, native_* normalisations and
dropout, convolution, constant_pad_nd, empty_permuted, in-place dropout variants): outputs,
saved statistics and gradients as torch's, gradients against finite differences in float64."""

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is the reference")


def arrays(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=s) for s in shapes]


CELLS = {
    "lstm_cell": (8, lambda T, x, h, c, wi, wh, bi, bh: T.lstm_cell(x, (h, c), wi, wh, bi, bh)),
    "gru_cell": (6, lambda T, x, h, c, wi, wh, bi, bh: T.gru_cell(x, h, wi, wh, bi, bh)),
    "rnn_tanh_cell": (2, lambda T, x, h, c, wi, wh, bi, bh: T.rnn_tanh_cell(x, h, wi, wh, bi, bh)),
    "rnn_relu_cell": (2, lambda T, x, h, c, wi, wh, bi, bh: T.rnn_relu_cell(x, h, wi, wh, bi, bh)),
}


def cell_inputs(gates):
    return arrays((3, 4), (3, 2), (3, 2), (gates, 4), (gates, 2), (gates,), (gates,))


def total(outputs):
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    return sum((o * (i + 1)).sum() for i, o in enumerate(outputs))


@pytest.mark.parametrize("name", sorted(CELLS))
def test_cells_gradcheck(name):
    gates, call = CELLS[name]
    inputs = [fg.tensor(a, requires_grad=True) for a in cell_inputs(gates)]
    assert fg.autograd.gradcheck(lambda *t: call(fg, *t), tuple(inputs))


@needs_torch
@pytest.mark.parametrize("name", sorted(CELLS))
def test_cells_match_torch(name):
    gates, call = CELLS[name]
    results = []
    for T in (fg, torch):
        inputs = [T.tensor(a, requires_grad=True) for a in cell_inputs(gates)]
        out = call(T, *inputs)
        total(out).backward()
        out = out if isinstance(out, tuple) else (out,)
        results.append(
            ([o.detach().numpy() for o in out], [t.grad.numpy() for t in inputs if t.grad is not None])
        )
    for mine, theirs in zip(*[r[0] + r[1] for r in results]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


@needs_torch
def test_native_normalisations_match_torch():
    (x,) = arrays((4, 3, 5))
    w, b = arrays((5,), (5,), seed=1)
    wc, bc = arrays((3,), (3,), seed=2)
    calls = [
        lambda T, t: T.native_layer_norm(t, (5,), T.tensor(w), T.tensor(b), 1e-5),
        lambda T, t: T.native_layer_norm(t, (3, 5), None, None, 1e-5),
        lambda T, t: T.native_group_norm(t, T.tensor(wc), T.tensor(bc), 4, 3, 5, 3, 1e-5),
        lambda T, t: T.native_batch_norm(
            t,
            T.tensor(wc),
            T.tensor(bc),
            T.zeros(3, dtype=T.float64),
            T.ones(3, dtype=T.float64),
            True,
            0.1,
            1e-5,
        ),
        lambda T, t: T.native_batch_norm(
            t, None, None, T.zeros(3, dtype=T.float64), T.ones(3, dtype=T.float64), False, 0.1, 1e-5
        ),
    ]
    for call in calls:
        results = []
        for T in (fg, torch):
            t = T.tensor(x, requires_grad=True)
            out = call(T, t)
            (out[0] * T.arange(5.0, dtype=T.float64)).sum().backward()
            results.append([o.detach().numpy() for o in out] + [t.grad.numpy()])
        for mine, theirs in zip(*results):
            assert mine.shape == theirs.shape
            np.testing.assert_allclose(mine, theirs, rtol=1e-7, atol=1e-9)


def test_native_dropout_and_feature_dropout():
    fg.manual_seed(0)
    x = fg.ones(200, 10, 3, requires_grad=True)
    out, mask = fg.native_dropout(x, 0.25, True)
    assert mask.dtype == fg.bool and 0.6 < mask.float().mean().item() < 0.9
    np.testing.assert_allclose(out.detach().numpy(), mask.numpy() / 0.75, rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), mask.numpy() / 0.75, rtol=1e-6)
    same, ones = fg.native_dropout(x, 0.25, False)
    assert bool(ones.all()) and same.tolist() == x.tolist()
    channels = fg.feature_dropout(fg.ones(50, 4, 6), 0.5, True)
    per_channel = channels.amax(dim=2) == channels.amin(dim=2)
    assert bool(per_channel.all()) and 0 < int((channels[:, :, 0] == 0).sum()) < 200
    y = fg.ones(8, 4, 2)
    assert fg.feature_dropout_(y, 1.0, True) is y and float(y.abs().sum()) == 0.0
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        fg.feature_dropout(fg.ones(3), 0.5, True)
    with pytest.raises(ValueError, match="between 0 and 1"):
        fg.feature_dropout(fg.ones(3, 3), 1.5, True)
    z = fg.ones(4, 4)
    assert fg.alpha_dropout_(z, 0.5, False) is z and fg.feature_alpha_dropout_(z, 0.5, False) is z
    assert fg.rrelu_(fg.tensor([-8.0]), 0.25, 0.25).tolist() == [-2.0]
    w = fg.tensor([0.0, 1.0])
    assert fg.i0_(w) is w and w.tolist()[0] == 1.0


@needs_torch
def test_convolution_and_padding_match_torch():
    x1, w1, x2, w2, wt = arrays((2, 3, 7), (4, 3, 3), (1, 2, 6, 6), (4, 1, 3, 3), (2, 3, 2, 2))
    calls = [
        lambda T, x, w: T.convolution(x, w, None, [2], [1], [1], False, [0], 1),
        lambda T, x, w: T.convolution(x, w, None, [1, 1], [1, 1], [2, 2], False, [0, 0], 2),
        lambda T, x, w: T.convolution(x, w, None, [2, 2], [0, 0], [1, 1], True, [1, 1], 1),
    ]
    for call, (xa, wa) in zip(calls, [(x1, w1), (x2, w2), (x2, wt)]):
        results = []
        for T in (fg, torch):
            x, w = T.tensor(xa, requires_grad=True), T.tensor(wa, requires_grad=True)
            out = call(T, x, w)
            (out * out).sum().backward()
            results.append([out.detach().numpy(), x.grad.numpy(), w.grad.numpy()])
        for mine, theirs in zip(*results):
            np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-9)
    padded = fg.constant_pad_nd(fg.ones(2, 2), [1, 1, 0, 1], 3.0)
    np.testing.assert_array_equal(
        padded.numpy(), torch.constant_pad_nd(torch.ones(2, 2), [1, 1, 0, 1], 3.0).numpy()
    )
    shuffled = fg.native_channel_shuffle(fg.arange(4.0).view(1, 4, 1), 2)
    assert shuffled.flatten().tolist() == [0.0, 2.0, 1.0, 3.0]


def test_empty_permuted_layouts():
    for order in [(0, 1, 2), (0, 2, 1), (2, 0, 1), (1, 2, 0)]:
        t = fg.empty_permuted((2, 3, 4), order)
        assert t.shape == (2, 3, 4)
        assert [t.stride(d) for d in order] == sorted(t.stride(), reverse=True)
        if has_torch:
            assert t.stride() == torch.empty_permuted((2, 3, 4), order).stride()
    assert fg.empty_permuted((2, 3, 4, 5), (0, 2, 3, 1)).is_contiguous(memory_format=fg.channels_last)
    assert fg.empty_permuted((2, 3), (1, 0), dtype=fg.float64, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="Duplicate dim"):
        fg.empty_permuted((2, 3), (0, 0))
    with pytest.raises(RuntimeError, match="len\\(size\\) = 2 is not equal to len\\(physical_layout\\) = 1"):
        fg.empty_permuted((2, 3), (0,))
    with pytest.raises(IndexError, match="Dimension out of range"):
        fg.empty_permuted((2, 3), (0, 5))

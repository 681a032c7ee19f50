"""nn.utils: gradient clipping, parameter/vector conversion and pad_sequence, against torch."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch not installed")


def _grads_pair(shapes, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) * scale for s in shapes]
    fps = []
    for a in arrays:
        p = fg.tensor(a.astype(np.float32), requires_grad=True)
        p.grad = fg.tensor(a.astype(np.float32) * 3.0)
        fps.append(p)
    return arrays, fps


@needs_torch
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    shapes = [(3, 4), (4,), ()]
    arrays, fps = _grads_pair(shapes)
    tps = []
    for a in arrays:
        p = torch.tensor(a.astype(np.float32), requires_grad=True)
        p.grad = torch.tensor(a.astype(np.float32) * 3.0)
        tps.append(p)
    total = fg.nn.utils.clip_grad_norm_(fps, max_norm, norm_type)
    expected = torch.nn.utils.clip_grad_norm_(tps, max_norm, norm_type)
    assert isinstance(total, fg.Tensor) and total.dim() == 0
    np.testing.assert_allclose(total.item(), expected.item(), rtol=1e-5)
    for f, t in zip(fps, tps):
        np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_scales_to_max_norm():
    _, fps = _grads_pair([(5,), (2, 2)], scale=10.0)
    before = math.sqrt(sum(float((p.grad * p.grad).sum().item()) for p in fps))
    total = fg.nn.utils.clip_grad_norm_(fps, 1.0)
    assert total.item() == pytest.approx(before, rel=1e-5)
    after = math.sqrt(sum(float((p.grad * p.grad).sum().item()) for p in fps))
    assert after == pytest.approx(1.0, rel=1e-4)
    # a norm below max_norm leaves the gradients as they are
    snapshot = [p.grad.numpy().copy() for p in fps]
    fg.nn.utils.clip_grad_norm_(fps, 10.0)
    for p, s in zip(fps, snapshot):
        np.testing.assert_array_equal(p.grad.numpy(), s)


def test_clip_grad_norm_single_tensor_and_no_grads():
    p = fg.tensor([3.0, 4.0], requires_grad=True)
    assert fg.nn.utils.clip_grad_norm_(p, 1.0).item() == 0.0  # no gradient yet
    p.grad = fg.tensor([3.0, 4.0])
    assert fg.nn.utils.clip_grad_norm_(p, 1.0).item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-5)


def test_clip_grad_norm_nonfinite():
    modules = [fg] + ([torch] if has_torch else [])
    for T in modules:
        p = T.tensor([1.0, 2.0], requires_grad=True)
        p.grad = T.tensor([float("nan"), 1.0])
        msg = "The total norm of order 2.0 for gradients from `parameters` is non-finite"
        with pytest.raises(RuntimeError, match=re.escape(msg)):
            T.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
        total = T.nn.utils.clip_grad_norm_([p], 1.0)
        assert math.isnan(total.item())


@needs_torch
def test_clip_grad_value_matches_torch():
    arrays, fps = _grads_pair([(3, 3), (6,)])
    tps = []
    for a in arrays:
        p = torch.tensor(a.astype(np.float32), requires_grad=True)
        p.grad = torch.tensor(a.astype(np.float32) * 3.0)
        tps.append(p)
    assert fg.nn.utils.clip_grad_value_(fps, 0.7) is None
    torch.nn.utils.clip_grad_value_(tps, 0.7)
    for f, t in zip(fps, tps):
        np.testing.assert_array_equal(f.grad.numpy(), t.grad.numpy())
    assert max(float(f.grad.abs().max().item()) for f in fps) <= 0.7 + 1e-7


def test_parameters_vector_round_trip():
    model = fg.nn.Sequential(fg.nn.Linear(3, 4), fg.nn.Linear(4, 2))
    params = list(model.parameters())
    vec = fg.nn.utils.parameters_to_vector(params)
    assert vec.shape == (sum(p.numel() for p in params),)
    np.testing.assert_array_equal(
        vec.detach().numpy(), np.concatenate([p.detach().numpy().ravel() for p in params])
    )
    # the vector is differentiable with respect to the parameters
    (vec * 2.0).sum().backward()
    assert all((p.grad == 2.0).all().item() for p in params)
    new = fg.arange(vec.numel(), dtype=fg.float32)
    fg.nn.utils.vector_to_parameters(new, params)
    np.testing.assert_array_equal(fg.nn.utils.parameters_to_vector(params).detach().numpy(), new.numpy())
    assert all(p.requires_grad for p in params)
    assert params[0].shape == (4, 3)


def test_vector_to_parameters_type_error():
    modules = [fg] + ([torch] if has_torch else [])
    for T in modules:
        with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
            T.nn.utils.vector_to_parameters([1.0], [T.ones(1)])


@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, padding_side):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((n, 2)).astype(np.float32) for n in (3, 1, 4)]
    got = fg.nn.utils.rnn.pad_sequence(
        [fg.tensor(a) for a in arrays], batch_first=batch_first, padding_value=-1.5, padding_side=padding_side
    )
    expected = torch.nn.utils.rnn.pad_sequence(
        [torch.tensor(a) for a in arrays],
        batch_first=batch_first,
        padding_value=-1.5,
        padding_side=padding_side,
    )
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_pad_sequence_values_and_grad():
    a = fg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = fg.tensor([4.0], requires_grad=True)
    out = fg.nn.utils.rnn.pad_sequence([a, b], batch_first=True)
    np.testing.assert_array_equal(out.detach().numpy(), [[1, 2, 3], [4, 0, 0]])
    out = fg.nn.utils.rnn.pad_sequence([a, b], padding_side="left", padding_value=9)
    np.testing.assert_array_equal(out.detach().numpy(), [[1, 9], [2, 9], [3, 4]])
    (out * fg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [1, 3, 5])
    np.testing.assert_array_equal(b.grad.numpy(), [6])
    ints = fg.nn.utils.rnn.pad_sequence([fg.tensor([1, 2]), fg.tensor([3])], batch_first=True)
    assert ints.dtype == fg.int64


def test_pad_sequence_errors():
    modules = [fg] + ([torch] if has_torch else [])
    for T in modules:
        with pytest.raises(
            RuntimeError, match="Expected padding_side to be one of left or right, but got up."
        ):
            T.nn.utils.rnn.pad_sequence([T.ones(2)], padding_side="up")
        with pytest.raises(RuntimeError, match="received an empty list of sequences"):
            T.nn.utils.rnn.pad_sequence([])

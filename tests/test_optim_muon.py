"""optim.Muon: the update against a NumPy reference of its definition, against PyTorch's (which
orthogonalises in bfloat16, so to about 1%), its state and its checks."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ferrograd as fg
from ferrograd.optim.muon import _orthogonalized

from helpers import has_torch, torch

COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def _reference_orthogonalized(g: np.ndarray, steps: int = 5, eps: float = 1e-7) -> np.ndarray:
    a, b, c = COEFFICIENTS
    tall = g.shape[0] > g.shape[1]
    x = g.T if tall else g
    x = x / max(np.linalg.norm(x), eps)
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if tall else x


def _reference_steps(w: np.ndarray, grads: list[np.ndarray], lr, momentum, weight_decay, nesterov, scale):
    buf = np.zeros_like(w)
    for g in grads:
        buf = momentum * buf + (1 - momentum) * g
        update = g + momentum * (buf - g) if nesterov else buf
        w = w * (1 - lr * weight_decay) - lr * scale * _reference_orthogonalized(update)
    return w


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5)])
@pytest.mark.parametrize("nesterov", [True, False])
@pytest.mark.parametrize("adjust_lr_fn", [None, "original", "match_rms_adamw"])
def test_steps_follow_the_definition(shape, nesterov, adjust_lr_fn):
    rng = np.random.default_rng(sum(shape))
    w0 = rng.standard_normal(shape)
    grads = [rng.standard_normal(shape) for _ in range(3)]
    w = fg.tensor(w0, requires_grad=True)
    opt = fg.optim.Muon(
        [w], lr=0.02, momentum=0.9, weight_decay=0.05, nesterov=nesterov, adjust_lr_fn=adjust_lr_fn
    )
    for g in grads:
        w.grad = fg.tensor(g)
        opt.step()
    rows, cols = shape
    scale = (
        0.2 * np.sqrt(max(rows, cols)) if adjust_lr_fn == "match_rms_adamw" else np.sqrt(max(1, rows / cols))
    )
    expected = _reference_steps(w0, grads, 0.02, 0.9, 0.05, nesterov, scale)
    np.testing.assert_allclose(w.detach().numpy(), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        opt.state[w]["momentum_buffer"].numpy(),
        sum(0.1 * 0.9 ** (len(grads) - 1 - k) * g for k, g in enumerate(grads)),
        rtol=1e-12,
    )


@given(rows=st.integers(1, 12), cols=st.integers(1, 12), seed=st.integers(0, 2**32 - 1))
def test_the_update_is_nearly_semi_orthogonal(rows, cols, seed):
    g = np.random.default_rng(seed).standard_normal((rows, cols))
    update = _orthogonalized(fg.tensor(g), COEFFICIENTS, 5, 1e-7).numpy()
    assert update.shape == (rows, cols)
    singular = np.linalg.svd(update, compute_uv=False)
    # The quintic pushes every non-negligible singular value into a band around one.
    relevant = singular[np.linalg.svd(g, compute_uv=False) > 1e-3 * np.linalg.norm(g)]
    assert ((relevant > 0.3) & (relevant < 1.25)).all(), singular
    # The singular vectors are the input's.
    np.testing.assert_allclose(update, _reference_orthogonalized(g), rtol=1e-10, atol=1e-12)


@pytest.mark.skipif(not has_torch, reason="torch is not installed")
def test_training_agrees_with_torch_to_bfloat16_precision():
    rng = np.random.default_rng(0)
    w1, w2 = rng.standard_normal((8, 5)), rng.standard_normal((3, 8))
    x, y = rng.standard_normal((16, 5)), rng.standard_normal((16, 3))
    moved = []
    for T in (fg, torch):
        a, b = T.tensor(w1, requires_grad=True), T.tensor(w2, requires_grad=True)
        opt = T.optim.Muon([a, b], lr=0.05, adjust_lr_fn="match_rms_adamw")
        for _ in range(3):
            opt.zero_grad()
            ((T.tensor(x) @ a.mT).tanh() @ b.mT - T.tensor(y)).pow(2).mean().backward()
            opt.step()
        moved.append((a.detach().numpy() - w1, b.detach().numpy() - w2))
    for ours, theirs in zip(*moved):
        np.testing.assert_allclose(ours, theirs, atol=0.03 * np.abs(theirs).max())


def test_state_dict_round_trip_continues_identically():
    rng = np.random.default_rng(3)
    w = fg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    opt = fg.optim.Muon([w], lr=0.1)
    w.grad = fg.tensor(rng.standard_normal((4, 3)))
    opt.step()
    twin = fg.tensor(w.detach().numpy(), requires_grad=True)
    restored = fg.optim.Muon([twin], lr=0.1)
    restored.load_state_dict(copy.deepcopy(opt.state_dict()))
    g = fg.tensor(rng.standard_normal((4, 3)))
    w.grad, twin.grad = g, g.clone()
    opt.step()
    restored.step()
    np.testing.assert_array_equal(w.detach().numpy(), twin.detach().numpy())


@pytest.mark.parametrize(
    "make, kind, message",
    [
        (
            lambda T: T.optim.Muon([T.zeros(3, requires_grad=True)]),
            ValueError,
            "Muon only supports 2D parameters",
        ),
        (
            lambda T: T.optim.Muon([T.zeros(2, 2)], lr=-1.0),
            ValueError,
            "Learning rate should be >= 0 but is: -1.0",
        ),
        (
            lambda T: T.optim.Muon([T.zeros(2, 2)], momentum=-1.0),
            ValueError,
            "momentum should be >= 0 but is: -1.0",
        ),
        (
            lambda T: T.optim.Muon([T.zeros(2, 2)], weight_decay=-1.0),
            ValueError,
            "weight decay should be >= 0",
        ),
        (
            lambda T: T.optim.Muon([T.zeros(2, 2)], adjust_lr_fn="sqrt"),
            ValueError,
            "Adjust learning rate function sqrt is not supported",
        ),
    ],
)
def test_argument_errors_match_torch(make, kind, message):
    for T in [fg] + ([torch] if has_torch else []):
        with pytest.raises(kind, match=message):
            make(T)


def test_complex_parameters_and_too_many_steps_are_refused():
    z = fg.zeros(2, 2, dtype=fg.complex64, requires_grad=True)
    z.grad = fg.ones(2, 2, dtype=fg.complex64)
    with pytest.raises(RuntimeError, match="Muon does not support complex parameters"):
        fg.optim.Muon([z]).step()
    w = fg.zeros(2, 2, requires_grad=True)
    w.grad = fg.ones(2, 2)
    with pytest.raises(ValueError, match="Number of steps must be less than 100"):
        fg.optim.Muon([w], ns_steps=100).step()

"""Shared test helpers: finite-difference gradient checks in float64, a
side-by-side comparison with torch when it is importable, and hypothesis
strategies for shapes (0-d, empty and broadcast shapes included)."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ferrograd as fg

try:  # torch is a reference, never a dependency: comparisons skip without it.
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

has_torch = torch is not None


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 0, max_side: int = 4):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def arrays(shape, low: float = -3.0, high: float = 3.0, dtype=np.float64):
    return hnp.arrays(dtype, shape, elements=st.floats(low, high, allow_nan=False, width=64))


def broadcastable_pair(max_dims: int = 3, max_side: int = 4, min_side: int = 0):
    """Two shapes that broadcast together."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=2, max_dims=max_dims, max_side=max_side, min_side=min_side
    ).map(lambda s: s.input_shapes)


def fd_grads(
    f: Callable[..., np.ndarray], arrays_: list[np.ndarray], cotangent: np.ndarray, eps: float = 1e-6
):
    """Central-difference gradients of ``sum(f(*arrays) * cotangent)``."""
    grads = []
    for k, a in enumerate(arrays_):
        g = np.zeros_like(a)
        flat = a.reshape(-1)
        gflat = g.reshape(-1)
        for i in range(flat.size):
            orig = flat[i]
            flat[i] = orig + eps
            plus = np.sum(np.asarray(f(*arrays_)) * cotangent)
            flat[i] = orig - eps
            minus = np.sum(np.asarray(f(*arrays_)) * cotangent)
            flat[i] = orig
            gflat[i] = (plus - minus) / (2 * eps)
        grads.append(g)
        arrays_[k] = a
    return grads


def check_op(
    fn: Callable,
    *inputs: np.ndarray,
    grad: bool = True,
    atol: float = 1e-6,
    rtol: float = 1e-5,
    fd_atol: float = 1e-5,
    seed: int = 0,
):
    """Checks ``fn(T, *tensors)`` written once against a torch-like module ``T``.

    - ferrograd's forward matches torch's (when torch is importable);
    - with ``grad``: float64 gradients for a random cotangent match central
      finite differences and torch's gradients.
    """
    inputs = [np.array(x, dtype=np.float64) for x in inputs]
    ts = [fg.tensor(x, requires_grad=grad) for x in inputs]
    out = fn(fg, *ts)
    out_np = out.detach().numpy()
    if has_torch:
        tts = [torch.tensor(x, requires_grad=grad) for x in inputs]
        tout = fn(torch, *tts)
        np.testing.assert_allclose(out_np, tout.detach().numpy(), atol=atol, rtol=rtol)
    if not grad:
        return out
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(out_np.shape)
    if out.requires_grad:
        out.backward(fg.tensor(v))
    got = [t.grad.numpy() if t.grad is not None else np.zeros_like(x) for t, x in zip(ts, inputs)]

    def f_np(*arrs):
        with fg.no_grad():
            return fn(fg, *[fg.tensor(a) for a in arrs]).numpy()

    expected = fd_grads(f_np, [x.copy() for x in inputs], v)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, atol=fd_atol, rtol=1e-4)
    if has_torch and tout.requires_grad:
        tout.backward(torch.tensor(v))
        for g, t in zip(got, tts):
            tg = t.grad.numpy() if t.grad is not None else np.zeros(t.shape)
            np.testing.assert_allclose(g, tg, atol=atol, rtol=rtol)
    return out


def assert_raises_like_torch(fn, kind, message):
    """``fn(F, T)`` raises ``kind`` matching ``message`` for ferrograd and, when installed, torch."""
    modules = [fg] + ([torch] if has_torch else [])
    for T in modules:
        with pytest.raises(kind, match=message):
            fn(T.nn.functional, T)


def fixed_linear(T):
    """A 3-to-2 ``nn.Linear`` of module ``T`` with fixed weights, for programs run on both libraries."""
    lin = T.nn.Linear(3, 2)
    with T.no_grad():
        lin.weight.copy_(T.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]))
        lin.bias.fill_(0.5)
    return lin

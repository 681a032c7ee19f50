"""``autograd.grad(..., is_grads_batched=True)``: one vector-Jacobian product per entry of the
batched ``grad_outputs``, stacked along a new first dimension."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ferrograd as fg

from helpers import fd_grads, has_torch, shapes, torch


def _f(x, w):
    return (x * w).tanh() * x


@given(
    shape=shapes(min_dims=1, max_dims=2, min_side=1, max_side=3),
    batch=st.integers(1, 4),
    seed=st.integers(0, 999),
)
def test_each_entry_is_the_vector_jacobian_product_of_its_vector(shape, batch, seed):
    rng = np.random.default_rng(seed)
    x_np, w_np = rng.normal(size=shape), rng.normal(size=shape)
    vs = rng.normal(size=(batch, *shape))
    x = fg.tensor(x_np, requires_grad=True)
    w = fg.tensor(w_np, requires_grad=True)
    gx, gw = fg.autograd.grad(_f(x, w), (x, w), fg.tensor(vs), is_grads_batched=True)
    assert tuple(gx.shape) == (batch, *shape) and tuple(gw.shape) == (batch, *shape)
    for b in range(batch):
        ex, ew = fd_grads(lambda a, c: np.tanh(a * c) * a, [x_np.copy(), w_np.copy()], vs[b])
        np.testing.assert_allclose(gx[b].numpy(), ex, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gw[b].numpy(), ew, rtol=1e-6, atol=1e-8)


def test_identity_vectors_give_the_jacobian():
    x = fg.randn(4, dtype=fg.float64, requires_grad=True)
    (jac,) = fg.autograd.grad(x.sin(), x, fg.eye(4, dtype=fg.float64), is_grads_batched=True)
    np.testing.assert_allclose(jac.numpy(), np.diag(np.cos(x.detach().numpy())))


def test_several_outputs_add_their_products():
    x = fg.randn(3, requires_grad=True)
    (g,) = fg.autograd.grad((x * 2, x.sum() * 3), x, (fg.eye(3), fg.ones(3)), is_grads_batched=True)
    np.testing.assert_allclose(g.numpy(), 2 * np.eye(3) + 3)


def test_unused_inputs_are_none_or_zeros():
    x = fg.randn(3, requires_grad=True)
    w = fg.randn(2, requires_grad=True)
    assert fg.autograd.grad(x * 2, (x, w), fg.eye(3), is_grads_batched=True, allow_unused=True)[1] is None
    _, gw = fg.autograd.grad(x * 2, (x, w), fg.eye(3), is_grads_batched=True, materialize_grads=True)
    # Materialised as the input's zeros, without the batch dimension, as torch does.
    assert tuple(gw.shape) == (2,) and not gw.any()


def test_create_graph_keeps_the_batched_gradient_differentiable():
    x = fg.randn(3, dtype=fg.float64, requires_grad=True)
    (jac,) = fg.autograd.grad(x**3, x, fg.eye(3, dtype=fg.float64), is_grads_batched=True, create_graph=True)
    (second,) = fg.autograd.grad(jac.sum(), x)
    np.testing.assert_allclose(second.numpy(), 6 * x.detach().numpy())


def test_the_graph_is_freed_after_the_last_entry_unless_retained():
    x = fg.randn(3, requires_grad=True)
    y = x.exp()
    fg.autograd.grad(y, x, fg.eye(3), is_grads_batched=True, retain_graph=True)
    fg.autograd.grad(y, x, fg.eye(3), is_grads_batched=True)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        fg.autograd.grad(y, x, fg.ones(3))


def test_an_empty_batch_gives_empty_gradients():
    x = fg.randn(3, requires_grad=True)
    w = fg.randn(2, requires_grad=True)
    gx, gw = fg.autograd.grad(x * 2, (x, w), fg.ones(0, 3), is_grads_batched=True, allow_unused=True)
    assert tuple(gx.shape) == (0, 3) and gw is None


@pytest.mark.parametrize(
    "grad_outputs, error, text",
    [
        (
            (fg.ones(3),),
            RuntimeError,
            r"grad_output\[0\] has a shape of ferrograd.Size\(\[\]\) and output\[0\]",
        ),
        ((fg.eye(3), fg.ones(2)), ValueError, r"got sizes \[3, 2\] for the mapped dimension"),
        ((fg.eye(3), None), ValueError, "that input is a Tensor of dimensionality 0"),
    ],
)
def test_bad_batches_are_refused(grad_outputs, error, text):
    x = fg.randn(3, requires_grad=True)
    outputs = (x * 2, x.sum())[: len(grad_outputs)]
    with pytest.raises(error, match=text):
        fg.autograd.grad(outputs, x, grad_outputs, is_grads_batched=True)


@pytest.mark.skipif(not has_torch, reason="torch is not installed")
def test_batched_gradients_match_torch():
    rng = np.random.default_rng(0)
    x_np, vs = rng.normal(size=(2, 3)), rng.normal(size=(5, 2, 3))
    results = []
    for lib in (fg, torch):
        x = lib.tensor(x_np, requires_grad=True)
        y = (x.softmax(-1) * x).cumsum(0)
        (g,) = lib.autograd.grad(y, x, lib.tensor(vs), is_grads_batched=True)
        results.append(g.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10)

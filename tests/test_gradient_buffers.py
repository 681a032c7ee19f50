"""Gradients that reach one input by several paths are summed in the node's
input buffer, in place when nothing else holds the tensor being summed into.
These tests check the sums and that no tensor a user, a hook or a custom
Function can still see is ever overwritten by them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg
from ferrograd.autograd import Function

from helpers import arrays, has_torch, shapes, torch


@settings(max_examples=40, deadline=None)
@given(
    shapes(max_dims=3, max_side=4).flatmap(lambda s: st.tuples(arrays(s), arrays(s))),
    st.lists(st.floats(-2, 2, allow_nan=False), min_size=1, max_size=6),
)
def test_many_paths_sum_to_the_analytic_gradient(values, weights):
    x_np, w_np = values
    x = fg.tensor(x_np, requires_grad=True)
    w = fg.tensor(w_np)
    h = (x * w).tanh()  # one node that receives a gradient from every path
    total = sum(((h * c) for c in weights), start=fg.zeros_like(h)).sum()
    total.backward()
    dtanh = 1 - np.tanh(x_np * w_np) ** 2
    np.testing.assert_allclose(x.grad.numpy(), sum(weights) * dtanh * w_np, rtol=1e-12, atol=1e-12)


def test_gradients_a_function_keeps_are_not_written_into():
    kept = []

    class KeepGradient(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            out = g * 2
            kept.append(out)
            return out

    x = fg.ones(3, dtype=fg.float64, requires_grad=True)
    h = x * 1.0
    (KeepGradient.apply(h) + KeepGradient.apply(h) + h * 3).sum().backward()
    assert x.grad.tolist() == [7.0, 7.0, 7.0]
    assert [k.tolist() for k in kept] == [[2.0, 2.0, 2.0]] * 2


def test_a_gradient_on_foreign_memory_is_not_written_into():
    arrays_returned = []

    class FromNumpy(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            a = np.full(3, 5.0)
            arrays_returned.append(a)
            return fg.from_numpy(a)

    x = fg.ones(3, dtype=fg.float64, requires_grad=True)
    h = x * 1.0
    (FromNumpy.apply(h) + FromNumpy.apply(h)).sum().backward()
    assert x.grad.tolist() == [10.0, 10.0, 10.0]
    assert [a.tolist() for a in arrays_returned] == [[5.0, 5.0, 5.0]] * 2


def test_a_gradient_seen_by_a_hook_is_not_written_into():
    seen = []
    x = fg.ones(2, 2, dtype=fg.float64, requires_grad=True)
    a = x * 2
    b = x * 3
    a.register_hook(lambda g: seen.append(g))
    h = a + b  # both reach x; a's gradient reaches x after the hook saw a's
    (h * h).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 2), 2 * 5 * 5.0))
    np.testing.assert_allclose(seen[0].numpy(), np.full((2, 2), 10.0))


def test_root_gradients_given_by_the_user_are_not_written_into():
    x = fg.ones(3, dtype=fg.float64, requires_grad=True)
    y = x * 2
    g1 = fg.full((3,), 1.5, dtype=fg.float64)
    g2 = fg.full((3,), 0.5, dtype=fg.float64)
    fg.autograd.backward([y, y], [g1, g2])
    assert x.grad.tolist() == [4.0, 4.0, 4.0]
    assert g1.tolist() == [1.5] * 3 and g2.tolist() == [0.5] * 3


def test_retained_gradient_of_a_shared_node_is_its_whole_sum():
    x = fg.tensor([1.0, 2.0], dtype=fg.float64, requires_grad=True)
    h = x * 1.0
    h.retain_grad()
    out = (h * 2).sum() + (h * 3).sum() + (h * h).sum()
    out.backward()
    np.testing.assert_allclose(h.grad.numpy(), [7.0, 9.0])
    np.testing.assert_allclose(x.grad.numpy(), [7.0, 9.0])


def test_sums_under_create_graph_keep_their_graph():
    x = fg.tensor([0.3, -1.2], dtype=fg.float64, requires_grad=True)
    h = x.sin()
    out = (h * h).sum() + (h * x).sum() + h.sum()
    (g,) = fg.autograd.grad(out, x, create_graph=True)
    (gg,) = fg.autograd.grad(g.sum(), x)
    xs = x.detach().numpy()
    s, c = np.sin(xs), np.cos(xs)
    np.testing.assert_allclose(g.detach().numpy(), 2 * s * c + s + xs * c + c, rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), 2 * (c * c - s * s) + 2 * c - xs * s - s, rtol=1e-12)


def test_deterministic_sums_match_the_plain_ones():
    fg.manual_seed(3)
    x = fg.randn(64, dtype=fg.float64, requires_grad=True)

    def gradient():
        h = x.tanh()
        sum(((h * (k + 1) / 7) for k in range(9)), start=fg.zeros_like(h)).sum().backward()
        g = x.grad.clone()
        x.grad = None
        return g

    plain = gradient()
    fg.use_deterministic_algorithms(True)
    try:
        assert fg.equal(gradient(), plain)
    finally:
        fg.use_deterministic_algorithms(False)


@pytest.mark.skipif(not has_torch, reason="torch is not installed")
def test_fan_in_gradients_match_torch():
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((4, 5))

    def run(T):
        x = T.tensor(x_np, requires_grad=True)
        h = x.exp()
        parts = [h * 0.5, h.t().t() * 2, h.sum(0, keepdim=True) * h, h[:, 1:].sum() * h]
        sum(p.sum() for p in parts).backward()
        return x.grad.detach().numpy()

    np.testing.assert_allclose(run(fg), run(torch), rtol=1e-12)


# --- numbers held in their storage ---------------------------------------


@pytest.mark.parametrize(
    "dtype, value",
    [
        (fg.bool, True),
        (fg.uint8, 200),
        (fg.int8, -7),
        (fg.int16, -300),
        (fg.int32, 1 << 20),
        (fg.int64, -(1 << 40)),
        (fg.float32, 1.5),
        (fg.float64, 2.0**-40),
        (fg.complex64, 1 - 2j),
        (fg.complex128, 3 + 0.25j),
    ],
)
def test_a_number_result_is_shared_with_numpy_and_outlives_its_tensor(dtype, value):
    t = fg.tensor(value, dtype=dtype) * 1  # a 0-d result: its element lives in its storage
    shared = t.numpy()
    assert shared.shape == () and shared.item() == value
    if dtype != fg.bool:
        shared[()] = value - 1
        assert t.item() == value - 1
        assert (t + 0).item() == value - 1
    view = t.reshape(1)
    del t
    assert view.numpy().ctypes.data == shared.ctypes.data
    assert view.numpy()[0] == shared[()]


def test_number_results_keep_their_values_and_gradients():
    x = fg.tensor(0.5, dtype=fg.float64, requires_grad=True)
    y = fg.tensor(-1.25, dtype=fg.float64, requires_grad=True)
    z = (x * y).tanh() + x
    z.backward()
    t = np.tanh(0.5 * -1.25)
    assert z.item() == pytest.approx(t + 0.5, rel=1e-15)
    assert x.grad.item() == pytest.approx((1 - t * t) * -1.25 + 1, rel=1e-15)
    assert y.grad.item() == pytest.approx((1 - t * t) * 0.5, rel=1e-15)
    z.detach().add_(1.0)  # shares z's storage
    assert z.item() == pytest.approx(t + 1.5, rel=1e-15)


SHAPE = (2, 3, 4, 5)


def stored_values(permutation):
    """The values of a `SHAPE` leaf as stored in memory order `permutation`."""
    return np.arange(120, dtype=np.float64).reshape([SHAPE[d] for d in permutation]) / 7


def leaf_gradients(T, permutation):
    """For a leaf stored in the memory order `permutation` (row-major, channels-last,
    transposed), after a plain and a `create_graph` backward: its `.grad`'s strides and
    values, the sums of its and another leaf's `.grad` after each is written in place (an
    expanded or shared `.grad` could not be), and the history of its `.grad`."""
    base = T.tensor(stored_values(permutation)).permute(*np.argsort(permutation).tolist())
    weights = T.tensor(np.linspace(-1, 1, 120).reshape(SHAPE))
    seen = []
    for create_graph in (False, True):
        leaf = base.detach().requires_grad_()
        other = T.ones(SHAPE, dtype=T.float64, requires_grad=True)
        loss = (leaf * leaf * weights / 2).sum() + (leaf + other).sum()
        with warnings.catch_warnings():  # the cycle `.grad` makes with its leaf is warned of (test_autograd)
            warnings.simplefilter("ignore", UserWarning)
            loss.backward(create_graph=create_graph)
        layout, grad = leaf.grad.stride(), leaf.grad.detach().numpy().copy()
        with T.no_grad():
            leaf.grad.add_(1)
            other.grad.mul_(3)
        sums = (leaf.grad.detach().sum().item(), other.grad.detach().sum().item())
        seen.append((layout, grad, sums, history(leaf.grad)))
    return seen


def history(t):
    """The name of `t`'s node and those of the nodes its edges lead to (None for an edge to
    nothing), or None when `t` has no history."""
    node = t.grad_fn
    if node is None:
        return None
    return node.name(), [None if n is None else n.name() for n, _ in node.next_functions]


@pytest.mark.parametrize("permutation", [(0, 1, 2, 3), (0, 2, 3, 1), (3, 2, 1, 0), (1, 0, 3, 2)])
def test_a_leaf_gradient_takes_the_leaf_layout_and_is_its_own_tensor(permutation):
    strides, step = [0] * 4, 1
    for d in reversed(permutation):
        strides[d], step = step, step * SHAPE[d]
    leaf = np.transpose(stored_values(permutation), np.argsort(permutation))
    expected = leaf * np.linspace(-1, 1, 120).reshape(SHAPE) + 1
    seen = leaf_gradients(fg, permutation)
    for (layout, grad, sums, made_by), create_graph in zip(seen, (False, True), strict=True):
        assert layout == tuple(strides)
        np.testing.assert_allclose(grad, expected, rtol=1e-12)
        assert sums == pytest.approx((expected.sum() + 120, 360.0))
        # Under create_graph the gradient is copied into a new `.grad`, as PyTorch records it.
        assert made_by == (
            ("torch::autograd::CopyBackwards", [None, "AddBackward0"]) if create_graph else None
        )
    if has_torch:
        theirs = leaf_gradients(torch, permutation)
        assert [(s[0], s[3]) for s in seen] == [(s[0], s[3]) for s in theirs]
        for ours, reference in zip(seen, theirs, strict=True):
            np.testing.assert_allclose(ours[1], reference[1], rtol=1e-12)
            assert ours[2] == pytest.approx(reference[2])

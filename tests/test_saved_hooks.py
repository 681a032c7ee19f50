"""Saved-tensor hooks (``ferrograd.autograd.graph``): pack at saving, unpack
in backward, for built-in ops and custom Functions alike."""

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg
from ferrograd.autograd import Function
from ferrograd.autograd.graph import Node, disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks

from helpers import has_torch
from helpers import torch as ref_torch


def counting_hooks():
    calls = {"pack": 0, "unpack": 0}

    def pack(t):
        calls["pack"] += 1
        return ("packed", t)

    def unpack(p):
        calls["unpack"] += 1
        assert p[0] == "packed"
        return p[1]

    return calls, pack, unpack


def test_builtin_ops_pack_at_save_and_unpack_in_backward():
    calls, pack, unpack = counting_hooks()
    x = fg.tensor([0.5, 1.0, 2.0], dtype=fg.float64, requires_grad=True)
    with saved_tensors_hooks(pack, unpack):
        y = x.sin() * x  # sin saves x; mul saves both operands
    assert calls == {"pack": 3, "unpack": 0}
    y.sum().backward()
    assert calls == {"pack": 3, "unpack": 3}
    xv = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xv) * xv + np.sin(xv))
    # Outside the block nothing is packed.
    x.exp().sum().backward()
    assert calls["pack"] == 3


def test_unpack_result_is_what_backward_uses():
    x = fg.tensor([1.0, 2.0], dtype=fg.float64, requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: t * 10):
        y = x.exp()  # exp saves its output
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 10 * np.exp([1.0, 2.0]))


def test_hooks_nest_and_are_per_thread():
    outer_calls, outer_pack, outer_unpack = counting_hooks()
    inner_calls, inner_pack, inner_unpack = counting_hooks()
    x = fg.randn(4, requires_grad=True)
    seen_in_thread = []
    with saved_tensors_hooks(outer_pack, outer_unpack):
        a = x.exp()
        with saved_tensors_hooks(inner_pack, inner_unpack):
            b = a.sin()
        c = b.tanh()

        def other_thread():
            seen_in_thread.append(fg._C._current_saved_tensors_hooks())
            x.cos()

        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
    assert outer_calls["pack"] == 2 and inner_calls["pack"] == 1
    assert seen_in_thread == [None]
    c.sum().backward()
    assert outer_calls["unpack"] == 2 and inner_calls["unpack"] == 1
    assert fg._C._current_saved_tensors_hooks() is None


def test_unpack_must_return_a_tensor():
    x = fg.randn(3, requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda p: 3):
        y = x.exp()
    with pytest.raises(
        TypeError,
        match="Output of saved tensor unpack_hook expected to be a Tensor but got result of type int",
    ):
        y.sum().backward()


def test_pack_errors_reach_the_op_and_in_place_packing_is_refused():
    x = fg.randn(3, requires_grad=True)

    def failing(t):
        raise ValueError("cannot pack")

    with saved_tensors_hooks(failing, lambda p: p), pytest.raises(ValueError, match="cannot pack"):
        x.exp()
    with saved_tensors_hooks(lambda t: t.mul_(1), lambda p: p):
        with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in place"):
            (x * 1).sin()
    # The engine and later ops are unaffected.
    x.exp().sum().backward()
    assert x.grad is not None


def test_packing_replaces_the_version_check():
    # As in PyTorch, a packed tensor is whatever unpack returns: the version
    # counter of the original is not consulted.
    x = fg.tensor([1.0, 2.0], dtype=fg.float64, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda p: p):
        a = x * 1
        y = a.sin()
    a.add_(1)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([1.0, 2.0]))


def test_disable_saved_tensors_hooks():
    with disable_saved_tensors_hooks("hooks are off here"):
        with pytest.raises(RuntimeError, match="hooks are off here"):
            with saved_tensors_hooks(lambda t: t, lambda p: p):
                pass
        with disable_saved_tensors_hooks("inner message"):
            with pytest.raises(RuntimeError, match="inner message"):
                saved_tensors_hooks(lambda t: t, lambda p: p).__enter__()
        with pytest.raises(RuntimeError, match="hooks are off here"):
            saved_tensors_hooks(lambda t: t, lambda p: p).__enter__()
    with saved_tensors_hooks(lambda t: t, lambda p: p):
        with pytest.raises(RuntimeError, match="already active"):
            with disable_saved_tensors_hooks("already active"):
                pass
    with saved_tensors_hooks(lambda t: t, lambda p: p):
        pass


def test_save_on_cpu_keeps_a_private_copy():
    x = fg.tensor([0.1, 0.2, 0.3], dtype=fg.float64, requires_grad=True)
    with save_on_cpu(pin_memory=False):
        a = x * 2
        y = a.sin()
    a.add_(100)  # the copy is unaffected
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(2 * np.array([0.1, 0.2, 0.3])))


def test_custom_function_saved_tensors_are_packed():
    calls, pack, unpack = counting_hooks()

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = fg.tensor([3.0], dtype=fg.float64, requires_grad=True)
    with saved_tensors_hooks(pack, unpack):
        y = Square.apply(x)
    assert calls["pack"] == 1
    y.backward()
    assert calls["unpack"] == 1 and x.grad.tolist() == [6.0]
    with saved_tensors_hooks(lambda t: t, lambda p: "no"):
        y = Square.apply(x)
    with pytest.raises(TypeError, match="expected to be a Tensor but got result of type str"):
        y.backward()


def test_double_backward_through_packed_tensors():
    x = fg.tensor([0.3, -1.2], dtype=fg.float64, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda p: p):
        y = (x.sin() * x).sum()
    (g,) = fg.autograd.grad(y, x, create_graph=True)
    (gg,) = fg.autograd.grad(g.sum(), x)
    xv = x.detach().numpy()
    np.testing.assert_allclose(g.detach().numpy(), np.cos(xv) * xv + np.sin(xv))
    np.testing.assert_allclose(gg.numpy(), 2 * np.cos(xv) - xv * np.sin(xv))


def test_node_is_the_class_of_every_grad_fn():
    x = fg.randn(2, requires_grad=True)
    y = (x * 2).sum()
    assert isinstance(y.grad_fn, Node)
    assert all(isinstance(f, Node) for f, _ in y.grad_fn.next_functions)
    assert Node.__module__ == "ferrograd.autograd.graph"


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=1, max_size=6))
def test_hooks_leave_gradients_unchanged(values):
    def f(x):
        return ((x.exp() * x.tanh()).sum() / (1 + (x * x).sum())).log1p()

    x = fg.tensor(values, dtype=fg.float64, requires_grad=True)
    f(x).backward()
    plain = x.grad.numpy().copy()
    x.grad = None
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda p: p):
        y = f(x)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), plain, rtol=1e-12, atol=1e-15)


@pytest.mark.skipif(not has_torch, reason="torch is not installed")
def test_pack_and_unpack_counts_match_torch():
    def run(lib):
        calls, pack, unpack = counting_hooks()
        x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x.exp() * x.sin()).tanh().sum()
        packed = calls["pack"]
        y.backward()
        return packed, calls["unpack"], x.grad.tolist()

    ours, theirs = run(fg), run(ref_torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2])


@pytest.mark.timeout(60)
def test_threads_with_their_own_hooks_run_backward_concurrently():
    errors = []

    def worker(k):
        try:
            calls, pack, unpack = counting_hooks()
            x = fg.full((200_000,), 0.1 * (k + 1), dtype=fg.float64, requires_grad=True)
            for _ in range(5):
                with saved_tensors_hooks(pack, unpack):
                    y = (x.sin() * x).sum()
                y.backward()
            v = 0.1 * (k + 1)
            np.testing.assert_allclose(x.grad.numpy()[:3], 5 * (np.cos(v) * v + np.sin(v)))
            assert calls == {"pack": 15, "unpack": 15}
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors

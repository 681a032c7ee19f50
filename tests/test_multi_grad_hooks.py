"""Hooks over several tensors (`autograd.graph.register_multi_grad_hook`),
the engine state they read, leaf hooks in `autograd.grad`, and
`autograd.graph.increment_version`; checked against torch when importable."""

import threading

import pytest

import ferrograd as fg

from helpers import has_torch
from helpers import torch as ref_torch

LIBS = [pytest.param(fg, id="ferrograd")]
if has_torch:
    LIBS.append(pytest.param(ref_torch, id="torch"))


def four_tensors(lib):
    a = lib.rand(2, 3, requires_grad=True)
    b = lib.rand(2, 3, requires_grad=True)
    return a, b, a * b, a * b


@pytest.mark.parametrize("lib", LIBS)
def test_all_mode_waits_for_every_gradient_the_call_computes(lib):
    a, b, c, d = four_tensors(lib)
    seen = []
    handle = lib.autograd.graph.register_multi_grad_hook(
        (a, b, c, d), lambda grads: seen.append([g is not None for g in grads])
    )
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    (c.sum() + d.sum()).backward(retain_graph=True)
    lib.autograd.grad(c.sum(), (c,), retain_graph=True)
    handle.remove()
    c.sum().backward(retain_graph=True)
    assert seen == [
        [True, True, True, False],
        [True, False, True, False],
        [True, True, True, True],
        [False, False, True, False],
    ]


@pytest.mark.parametrize("lib", LIBS)
def test_all_mode_hands_over_the_gradients(lib):
    a, b, c, _ = four_tensors(lib)
    seen = []
    lib.autograd.graph.register_multi_grad_hook((a, c), seen.append)
    (c * 3).sum().backward()
    grads = seen[0]
    assert grads[1].tolist() == [[3.0] * 3] * 2
    assert grads[0].tolist() == (3 * b).tolist()


@pytest.mark.parametrize("lib", LIBS)
def test_any_mode_runs_once_per_call_on_the_first_gradient(lib):
    a, b, c, d = four_tensors(lib)
    seen = []
    lib.autograd.graph.register_multi_grad_hook((a, b), lambda g: seen.append(tuple(g.shape)), mode="any")
    (c.sum() + d.sum()).backward(retain_graph=True)
    c.sum().backward()
    assert seen == [(2, 3), (2, 3)]


@pytest.mark.parametrize("lib", LIBS)
def test_multi_grad_hook_rejects_bad_mode_and_tensors_without_grad(lib):
    a = lib.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"Expects mode to be one of \('all', 'any'\) but got x"):
        lib.autograd.graph.register_multi_grad_hook((a,), print, mode="x")
    with pytest.raises(AssertionError, match="Expected gradient function to be set"):
        lib.autograd.graph.register_multi_grad_hook((a, lib.ones(2)), print)


def test_multi_grad_hook_counts_per_call_across_threads():
    x = fg.ones(64, requires_grad=True)
    calls = []
    fg.autograd.graph.register_multi_grad_hook((x,), lambda grads: calls.append(grads[0].sum().item()))

    def run():
        for _ in range(20):
            (x * 2).sum().backward()

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [128.0] * 80


def test_engine_state_outside_backward():
    node = (fg.ones(1, requires_grad=True) * 2).grad_fn
    assert fg._C._current_graph_task_id() == -1
    with pytest.raises(RuntimeError, match="should only be called during the backward pass"):
        fg._C._will_engine_execute_node(node)


@pytest.mark.parametrize("lib", LIBS)
def test_leaf_hooks_see_and_replace_the_gradient_grad_returns(lib):
    a, b = lib.ones(3, requires_grad=True), lib.ones(3, requires_grad=True)
    seen = []
    b.register_hook(lambda g: seen.append(g.tolist()) or g * 2)
    (grad,) = lib.autograd.grad((a * b * 5).sum(), (b,))
    assert seen == [[5.0] * 3] and grad.tolist() == [10.0] * 3 and b.grad is None


@pytest.mark.parametrize("lib", LIBS)
def test_increment_version_makes_backward_refuse_saved_values(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 1
    z = y.sin()  # saves y
    before = y._version
    lib.autograd.graph.increment_version(y)
    assert y._version == before + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    lib.autograd.graph.increment_version([x, y])
    assert (x._version, y._version) == (1, before + 2)
    with lib.inference_mode():
        i = lib.ones(2)
    lib.autograd.graph.increment_version(i)  # no version counter: left alone

"""Non-reentrant activation checkpointing, built on saved-tensor hooks."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg
from ferrograd.utils.checkpoint import checkpoint


def block(x, w):
    return (x @ w).tanh() * x.sin()


def test_gradients_equal_the_plain_ones():
    fg.manual_seed(1)
    x = fg.randn(5, 4, dtype=fg.float64, requires_grad=True)
    w = fg.randn(4, 4, dtype=fg.float64, requires_grad=True)
    out = checkpoint(block, checkpoint(block, x, w, use_reentrant=False), w, use_reentrant=False)
    # The graph is the function's own: no wrapper node.
    assert out.grad_fn.name() == "MulBackward0"
    gx, gw = fg.autograd.grad(out.sum(), (x, w))
    px, pw = fg.autograd.grad(block(block(x, w), w).sum(), (x, w))
    np.testing.assert_allclose(gx.numpy(), px.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), pw.numpy(), rtol=1e-12)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_gradients_equal_the_plain_ones_for_any_shape(n, m, seed):
    fg.manual_seed(seed)
    x = fg.randn(n, m, dtype=fg.float64, requires_grad=True)
    w = fg.randn(m, m, dtype=fg.float64, requires_grad=True)
    checkpoint(block, x, w, use_reentrant=False).exp().sum().backward()
    gx, gw = x.grad.numpy().copy(), w.grad.numpy().copy()
    x.grad = w.grad = None
    block(x, w).exp().sum().backward()
    np.testing.assert_allclose(gx, x.grad.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gw, w.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_forward_is_rerun_once_in_backward():
    calls = []

    def segment(x, scale=1.0):
        calls.append(1)
        return (x.exp() * scale).sin().tanh()

    x = fg.randn(6, dtype=fg.float64, requires_grad=True)
    out = checkpoint(segment, x, use_reentrant=False, scale=2.0)
    assert len(calls) == 1
    out.sum().backward(retain_graph=True)
    assert len(calls) == 2
    g = x.grad.numpy().copy()
    out.sum().backward()
    assert len(calls) == 2
    np.testing.assert_allclose(x.grad.numpy(), 2 * g)


def test_works_with_grad_and_backward_inputs():
    # What the reentrant variant refuses.
    x = fg.randn(3, dtype=fg.float64, requires_grad=True)
    (g,) = fg.autograd.grad(checkpoint(fg.sin, x, use_reentrant=False).sum(), x)
    np.testing.assert_allclose(g.numpy(), np.cos(x.detach().numpy()))
    checkpoint(fg.sin, x, use_reentrant=False).sum().backward(inputs=[x])
    np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()))


def test_random_numbers_are_replayed():
    x = fg.ones(1000, dtype=fg.float64, requires_grad=True)

    def noisy(t):
        return t * fg.rand(1000, dtype=fg.float64)

    fg.manual_seed(3)
    out = checkpoint(noisy, x, use_reentrant=False)
    fg.rand(5)  # the generator moves on before backward
    out.sum().backward()
    fg.manual_seed(3)
    np.testing.assert_array_equal(x.grad.numpy(), fg.rand(1000, dtype=fg.float64).numpy())


def test_recomputation_that_differs_is_an_error():
    shapes = iter([(3,), (4,)])

    def changing(x):
        return x * fg.ones(*next(shapes), dtype=fg.float64)

    x = fg.ones(1, dtype=fg.float64, requires_grad=True)
    out = checkpoint(changing, x, use_reentrant=False)
    with pytest.raises(
        RuntimeError, match="Recomputed values for the following tensors have different metadata"
    ):
        out.sum().backward()


def test_double_backward_through_a_checkpoint():
    def f(x):
        return (x.sin() * x).tanh().sum()

    x = fg.tensor([0.3, -0.7, 1.1], dtype=fg.float64, requires_grad=True)
    (g,) = fg.autograd.grad(checkpoint(f, x, use_reentrant=False), x, create_graph=True)
    (gg,) = fg.autograd.grad(g.sum(), x)
    (pg,) = fg.autograd.grad(f(x), x, create_graph=True)
    (pgg,) = fg.autograd.grad(pg.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), pg.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), pgg.numpy(), rtol=1e-12)
    h = fg.autograd.functional.hessian(lambda t: checkpoint(f, t, use_reentrant=False), x)
    np.testing.assert_allclose(h.numpy(), fg.autograd.functional.hessian(f, x).numpy(), rtol=1e-12)


def test_custom_functions_inside_a_checkpoint():
    from test_function import Exp, LogSumExp

    def f(x):
        return LogSumExp.apply(Exp.apply(x) * x)

    x = fg.tensor([0.2, -0.4, 0.9], dtype=fg.float64, requires_grad=True)
    (g,) = fg.autograd.grad(checkpoint(f, x, use_reentrant=False), x)
    (pg,) = fg.autograd.grad(f(x), x)
    np.testing.assert_allclose(g.numpy(), pg.numpy(), rtol=1e-12)


# checkpoint_sequential with both variants and the peak memory with and
# without checkpointing are tested in test_threads.py.


def test_context_fn_wraps_the_forward_and_the_recomputation():
    import contextlib

    entered = []

    def contexts():
        @contextlib.contextmanager
        def record(name):
            entered.append(name)
            yield

        return record("forward"), record("recompute")

    x = fg.ones(3, dtype=fg.float64, requires_grad=True)
    out = checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=False, context_fn=contexts)
    assert entered == ["forward"]
    out.backward()
    assert entered == ["forward", "recompute"]
    np.testing.assert_allclose(x.grad.numpy(), (np.sin(1.0) + np.cos(1.0)) * np.ones(3))
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(lambda t: t * 2, x, use_reentrant=True, context_fn=contexts)
    with pytest.raises(
        ValueError, match="determinism_check should be one of \\['default', 'none'\\], but got x"
    ):
        checkpoint(lambda t: t * 2, x, use_reentrant=False, determinism_check="x")


def test_determinism_check_none_and_checkpoint_error():
    from ferrograd.utils import checkpoint as module

    shapes = iter([(3,), (1,)])

    def changing(x):
        return (x * fg.ones(*next(shapes), dtype=fg.float64)).sum()

    x = fg.ones(1, dtype=fg.float64, requires_grad=True)
    checkpoint(changing, x, use_reentrant=False, determinism_check="none").backward()
    assert x.grad is not None
    shapes = iter([(3,), (4,)])
    out = checkpoint(changing, x, use_reentrant=False)
    with pytest.raises(module.CheckpointError):
        out.backward()
    assert issubclass(module.CheckpointError, RuntimeError)


def test_checkpoint_helpers():
    from ferrograd.utils import checkpoint as module

    a, b = fg.ones(2, requires_grad=True) * 2, fg.zeros(2)
    detached = module.detach_variable((a, b, 3))
    assert (
        detached[0].requires_grad
        and detached[0].is_leaf
        and not detached[1].requires_grad
        and detached[2] == 3
    )
    with pytest.raises(
        RuntimeError, match="Only tuple of tensors is supported. Got Unsupported input type: list"
    ):
        module.detach_variable([a])
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        module.check_backward_validity((b, 1))
    forward, recompute = module.noop_context_fn()
    with forward, recompute, module.set_checkpoint_early_stop(False):
        pass

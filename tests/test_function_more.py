"""Custom Functions: saved outputs in double backward, views of inputs,
in-place misuse, error tracebacks, and errors compared with torch."""

import traceback

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_function import Exp

import ferrograd as fg
from ferrograd.autograd import Function, gradcheck, gradgradcheck

from helpers import has_torch
from helpers import torch as ref_torch


def make_exp(lib):
    """test_function's Exp (it saves its output) as a Function of `lib`."""
    methods = {"forward": staticmethod(Exp.forward), "backward": staticmethod(Exp.backward)}
    return type("Exp", (lib.autograd.Function,), methods)


def make_flatten(lib):
    class Flatten(lib.autograd.Function):
        """Returns a view of its input."""

        @staticmethod
        def forward(ctx, x):
            ctx.shape = x.shape
            return x.view(-1)

        @staticmethod
        def backward(ctx, g):
            return g.reshape(ctx.shape) * 3

    return Flatten


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(-2, 2), min_size=1, max_size=5))
def test_saved_output_takes_part_in_double_backward(values):
    Exp = make_exp(fg)
    x = fg.tensor(values, dtype=fg.float64, requires_grad=True)
    (g,) = fg.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    assert g.requires_grad
    (gg,) = fg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), np.exp(values), rtol=1e-12)
    assert gradcheck(Exp.apply, (x,)) and gradgradcheck(Exp.apply, (x,))


def test_saved_output_is_plain_in_a_non_differentiable_backward():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            seen.append(y.requires_grad)
            return g * 2

    x = fg.ones(2, requires_grad=True)
    Probe.apply(x).sum().backward()
    fg.autograd.grad(Probe.apply(x).sum(), x, create_graph=True)
    assert seen == [False, True]


def test_output_that_is_a_view_of_the_input():
    Flatten = make_flatten(fg)
    a = fg.randn(2, 2, requires_grad=True)
    out = Flatten.apply(a * 1)
    assert out.grad_fn.name() == "FlattenBackward" and out.shape == (4,)
    out.sum().backward()
    assert a.grad.tolist() == [[3.0, 3.0], [3.0, 3.0]]


# mark_dirty on a leaf that requires grad: test_examples.py::test_in_place_example_refuses_leaves.


def test_exception_in_backward_keeps_its_traceback():
    def failing_helper():
        raise LookupError("deep inside backward")

    class Fails(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            failing_helper()

    x = fg.ones(1, requires_grad=True)
    with pytest.raises(LookupError) as info:
        Fails.apply(x).sum().backward()
    names = [frame.name for frame in traceback.extract_tb(info.value.__traceback__)]
    assert names[-2:] == ["backward", "failing_helper"]
    for _ in range(3):  # the engine stays usable
        x.grad = None
        (x * 3).sum().backward()
        assert x.grad.tolist() == [3.0]


def test_hooks_on_a_custom_function_node():
    Exp = make_exp(fg)
    x = fg.tensor([0.0, 1.0], dtype=fg.float64, requires_grad=True)
    y = Exp.apply(x)
    seen = []
    y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 10,))
    handle = y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(grad_outputs[0].tolist()))
    y.sum().backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), 10 * np.exp([0.0, 1.0]))
    assert seen == [[10.0, 10.0]]
    handle.remove()
    y.sum().backward()
    assert len(seen) == 1


@pytest.mark.skipif(not has_torch, reason="torch is not installed")
def test_view_output_and_saved_output_match_torch():
    def run(lib):
        a = lib.tensor([[0.1, -0.4], [1.2, 0.7]], dtype=lib.float64, requires_grad=True)
        y = make_exp(lib).apply(make_flatten(lib).apply(a * 2))
        (g,) = lib.autograd.grad(y.sum(), a, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), a)
        return g.detach().numpy(), gg.numpy()

    for ours, theirs in zip(run(fg), run(ref_torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.skipif(not has_torch, reason="torch is not installed")
def test_gradient_errors_match_torch():
    def messages(lib):
        class TooFew(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y

            @staticmethod
            def backward(ctx, g):
                return g

        class WrongShape(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return lib.ones(3)

        class NonTensorGrad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g, g

        a = lib.ones(2, requires_grad=True)
        out = []
        for f in (
            lambda: TooFew.apply(a, a),
            lambda: WrongShape.apply(a),
            lambda: NonTensorGrad.apply(a, 2.0),
        ):
            with pytest.raises(RuntimeError) as info:
                f().sum().backward()
            out.append(str(info.value).replace("torch", "ferrograd"))
        return out

    assert messages(fg) == messages(ref_torch)

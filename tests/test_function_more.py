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


def libs():
    """ferrograd, and torch when installed: the same program must behave the same on both."""
    return [fg] + ([ref_torch] if has_torch else [])


def make_mul_two_(lib):
    class MulTwo_(lib.autograd.Function):
        """Doubles its input in place."""

        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return MulTwo_


@pytest.mark.parametrize("lib", libs(), ids=lambda m: m.__name__)
def test_mark_dirty_on_a_view_rewrites_the_base_history(lib):
    x0 = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    x = x0.clone()
    v = x[:2]
    y = make_mul_two_(lib).apply(v)
    assert y is v
    assert type(x.grad_fn).__name__ == "CopySlices"
    assert type(y.grad_fn).__name__ == "AsStridedBackward0"
    (x * lib.tensor([1.0, 10.0, 100.0], dtype=lib.float64)).sum().backward()
    assert x.tolist() == [2.0, 4.0, 3.0]
    assert x0.grad.tolist() == [2.0, 20.0, 100.0]


@pytest.mark.parametrize("lib", libs(), ids=lambda m: m.__name__)
def test_mark_dirty_on_a_view_through_the_view_and_its_errors(lib):
    x0 = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    x = x0.clone()
    y = make_mul_two_(lib).apply(x[1:])
    (y * y).sum().backward()
    # d/dx0 of (2 x0[1:])**2 = 8 x0[1:]
    assert x0.grad.tolist() == [0.0, 16.0, 24.0]
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used"):
        make_mul_two_(lib).apply(lib.ones(3, requires_grad=True)[:2])

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x, x * 3

        @staticmethod
        def backward(ctx, g, h):
            return g * 2 + h * 6

    with pytest.raises(RuntimeError, match="cannot return more than one Tensor"):
        Two.apply(x0.clone()[:2])


@pytest.mark.parametrize("lib", libs(), ids=lambda m: m.__name__)
def test_mark_dirty_on_an_input_not_returned_raises(lib):
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    message = "Some elements marked as dirty during the forward method were not returned as output"
    for x in (lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True).clone(), lib.ones(2)):
        with pytest.raises(RuntimeError, match=message):
            F.apply(x)
    with lib.no_grad(), pytest.raises(RuntimeError, match=message):
        F.apply(lib.ones(2))


def make_cube_once(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    return Cube


@pytest.mark.parametrize("lib", libs(), ids=lambda m: m.__name__)
def test_once_differentiable_gradient_refuses_a_second_derivative(lib):
    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    Cube = make_cube_once(lib)
    (g,) = lib.autograd.grad((Cube.apply(x) ** 2).sum(), x, create_graph=True)
    # d/dx x**6 = 6 x**5
    assert g.tolist() == [6.0, 192.0, 1458.0]
    assert g.requires_grad and type(g.grad_fn).__name__ == "Error"
    assert g.grad_fn.name() == "torch::autograd::Error"
    with pytest.raises(
        RuntimeError,
        match="trying to differentiate twice a function that was marked with @once_differentiable",
    ):
        g.sum().backward()
    # Gradients that do not require grad stay as they are.
    (g,) = lib.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad and g.tolist() == [3.0, 12.0, 27.0]


@pytest.mark.parametrize("lib", libs(), ids=lambda m: m.__name__)
def test_an_input_returned_as_is_comes_back_as_a_view(lib):
    class Ident(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    class NonDiffIdent(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_non_differentiable(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x0 = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    x = x0.clone()
    y = Ident.apply(x)
    assert y is not x and y._base is x
    assert type(y.grad_fn).__name__ == "IdentBackward"
    y.sum().backward()
    assert x0.grad.tolist() == [5.0, 5.0]
    with pytest.raises(
        RuntimeError,
        match="Output 0 of Ident is a view and is being modified inplace. This view was created inside a custom Function",
    ):
        y.mul_(2)
    z = NonDiffIdent.apply(x)
    assert z is not x and not z.requires_grad and z.grad_fn is None and x.requires_grad
    plain = lib.ones(2)
    w = Ident.apply(plain)
    assert w is not plain and w._base is plain and not w.requires_grad


@pytest.mark.parametrize("lib", libs(), ids=lambda m: m.__name__)
def test_a_view_made_in_forward_refuses_in_place_writes(lib):
    class Halves(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:2], x[2:]

        @staticmethod
        def backward(ctx, g, h):
            return lib.cat([g, h])

    class Head(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:2]

        @staticmethod
        def backward(ctx, g):
            return lib.cat([g, g.new_zeros(1)])

    x = lib.ones(3, requires_grad=True).clone()
    with pytest.raises(
        RuntimeError,
        match="Output 1 of Halves is a view and is being modified inplace. This view is the output of a function that returns multiple views",
    ):
        Halves.apply(x)[1].add_(1)
    with pytest.raises(
        RuntimeError,
        match="Output 0 of Head is a view and is being modified inplace. This view was created inside a custom Function",
    ):
        Head.apply(x).add_(1)


@pytest.mark.parametrize("lib", libs(), ids=lambda m: m.__name__)
@pytest.mark.parametrize("value", [3.0, [1.0]], ids=["float", "list"])
def test_backward_returning_a_non_tensor_raises(lib, value):
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return value

    x = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=rf"^expected Variable or None \(got {type(value).__name__}\)$"):
        F.apply(x).sum().backward()

"""Custom autograd Functions run by the Rust engine."""

import gc
import threading
import weakref

import numpy as np
import pytest

import ferrograd as torch
from ferrograd.autograd import Function, once_differentiable


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class LogSumExp(Function):
    """Numerically stable log-sum-exp over all elements."""

    @staticmethod
    def forward(ctx, x):
        m = x.amax()
        out = (x - m).exp().sum().log() + m
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        return g * (x - out).exp()


class StraightThrough(Function):
    @staticmethod
    def forward(ctx, x):
        return x.round()

    @staticmethod
    def backward(ctx, g):
        return g


class ScaleBy(Function):
    """Non-tensor arguments get no gradient (None)."""

    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x * factor

    @staticmethod
    def backward(ctx, g):
        return g * ctx.factor, None


def test_custom_function_values_grad_fn_and_gradient():
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, -1.0, 2.0]), rtol=1e-6)


def test_logsumexp_matches_composite():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    LogSumExp.apply(x).backward()
    e = np.exp([1.0, 2.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), e / e.sum(), rtol=1e-6)


def test_straight_through_and_non_tensor_args():
    x = torch.tensor([0.4, 1.6], requires_grad=True)
    (StraightThrough.apply(x) * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    x.grad = None
    ScaleBy.apply(x, 2.5).sum().backward()
    assert x.grad.tolist() == [2.5, 2.5]


def test_custom_function_trains_in_a_loop():
    w = torch.tensor([1.0], requires_grad=True)
    for _ in range(100):
        loss = (Exp.apply(w) - 2.0) ** 2
        loss.sum().backward()
        with torch.no_grad():
            w.sub_(0.05 * w.grad)
        w.grad = None
    assert abs(np.exp(w.item()) - 2.0) < 1e-2


def test_wrong_number_of_gradients_raises():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g

    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([1.0], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"function BadBackward returned an incorrect number of gradients \(expected 2, got 1\)",
    ):
        Bad.apply(a, b).sum().backward()


def test_wrong_gradient_shape_raises():
    class BadShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return torch.ones(3)

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"Function BadShapeBackward returned an invalid gradient at index 0 - got \[3\] but expected shape compatible with \[2\]",
    ):
        BadShape.apply(x).sum().backward()


def test_exception_in_backward_reaches_caller_and_engine_stays_usable():
    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    x = torch.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="boom in backward"):
        Boom.apply(x).sum().backward()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0]


def test_saved_tensor_modified_in_place_is_detected():
    class SaveInput(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    y = SaveInput.apply(b)
    with torch.no_grad():
        b.add_(1)
    with pytest.raises(
        RuntimeError,
        match="one of the variables needed for gradient computation has been modified by an inplace operation",
    ):
        y.sum().backward()


def test_saved_tensors_are_freed_after_backward():
    x = torch.tensor([1.0], requires_grad=True)
    y = Exp.apply(x)
    ctx_node = y.grad_fn
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()
    assert ctx_node.name() == "ExpBackward"


def test_once_differentiable_and_needs_input_grad():
    seen = {}

    class Double(Function):
        @staticmethod
        def forward(ctx, x, y):
            seen["needs"] = ctx.needs_input_grad
            return x * 2 + y

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            seen["grad_mode"] = torch.is_grad_enabled()
            return g * 2, g

    a = torch.tensor([1.0], requires_grad=True)
    Double.apply(a, torch.tensor([1.0])).sum().backward(create_graph=True)
    assert seen == {"needs": (True, False), "grad_mode": False}


def test_setup_context_style():
    class Square(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = torch.tensor([3.0], requires_grad=True)
    Square.apply(x).sum().backward()
    assert x.grad.tolist() == [6.0]


def test_double_backward_through_custom_function():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g

    x = torch.tensor([2.0], requires_grad=True)
    (g,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    assert g.tolist() == [12.0] and gg.tolist() == [12.0]


class Marker:
    pass


def marking_function(refs):
    """A Function whose ctx holds a Marker; weak references to both go to `refs`."""

    class Keep(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.marker = Marker()
            refs.extend([weakref.ref(ctx.marker), weakref.ref(ctx)])
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Keep


def test_graphs_holding_python_objects_are_collected():
    refs = []
    Keep = marking_function(refs)
    x = torch.tensor([1.0], requires_grad=True)
    y = Keep.apply(x).exp()
    gc.collect()
    assert all(r() is not None for r in refs)
    del y
    gc.collect()
    assert all(r() is None for r in refs)


def test_custom_function_backward_from_many_threads():
    errors = []

    def work():
        try:
            for _ in range(20):
                x = torch.tensor([0.5, 1.5], requires_grad=True)
                Exp.apply(x).sum().backward()
                np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.5]), rtol=1e-6)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors


def test_gradcheck_and_gradgradcheck_on_custom_functions():
    from ferrograd.autograd import gradcheck, gradgradcheck

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g

    x = torch.tensor([0.5, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    assert gradcheck(Cube.apply, (x,))
    assert gradgradcheck(Cube.apply, (x,))
    assert gradcheck(LogSumExp.apply, (x,))

    class WrongGrad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    assert not gradcheck(WrongGrad.apply, (x,), raise_exception=False)
    with pytest.raises(torch.autograd.GradcheckError, match="Jacobian mismatch"):
        gradcheck(WrongGrad.apply, (x,))
    # An output outside the graph has a zero Jacobian: right for a constant,
    # wrong for a detached copy of the input.
    assert gradgradcheck(lambda t: t**0, (x,))
    assert not gradcheck(lambda t: t.detach() * 1.0, (x,), raise_exception=False)


def test_mark_dirty_in_place_custom_op():
    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    version = b._version
    out = AddOneInPlace.apply(b)
    assert out is b and b._version > version
    assert b.grad_fn.name() == "AddOneInPlaceBackward"
    (out * 3).sum().backward()
    assert b.tolist() == [3.0, 5.0] and a.grad.tolist() == [6.0, 6.0]


def test_several_outputs_and_non_differentiable_ones():
    class SortLike(Function):
        @staticmethod
        def forward(ctx, x):
            idx = torch.tensor([1, 0])
            ctx.mark_non_differentiable(idx)
            return x * 2, idx, x * 3

        @staticmethod
        def backward(ctx, g_double, g_idx, g_triple):
            assert g_idx is None or not g_idx.requires_grad
            return g_double * 2 + g_triple * 3

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    d, idx, t = SortLike.apply(x)
    assert not idx.requires_grad and d.requires_grad and t.requires_grad
    (d.sum() + t.sum()).backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_unused_output_gradient_is_materialized_or_none():
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            return g1

    x = torch.tensor([1.0], requires_grad=True)
    a, _ = Two.apply(x)
    a.sum().backward()
    assert seen == [(False, True)] and x.grad.tolist() == [1.0]


def test_returning_an_input_gives_a_new_tensor():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = torch.tensor([1.0], requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and y.grad_fn.name() == "IdentityBackward"
    y.sum().backward()
    assert x.grad.tolist() == [5.0]


def test_cycles_through_the_graph_are_collected():
    """ctx -> output -> node -> ctx: the garbage collector sees the edge the
    graph holds and frees the whole cycle."""
    refs = []
    SelfRef = marking_function(refs)

    def make():
        x = torch.tensor([1.0], requires_grad=True)
        out = SelfRef.apply(x)
        out.grad_fn  # noqa: B018 - a grad_fn handle must not keep the graph alive
        return out

    out = make()
    ctx = refs[1]()
    ctx.self_ref = out  # the cycle
    ref_out = weakref.ref(out)
    del out, ctx
    gc.collect()
    assert all(r() is None for r in refs) and ref_out() is None

    # Through a chain of nodes, some of which saved the tensors between
    # them, and through a plain Python object.
    holder = Marker()
    x = torch.tensor([1.0], requires_grad=True)
    y = (SelfRef.apply(x) * x).sin().exp() + 1
    holder.y = y
    refs[-1]().holder = holder
    ref_holder = weakref.ref(holder)
    del y, holder
    gc.collect()
    assert ref_holder() is None and refs[-1]() is None


def test_reachable_graphs_are_not_collected():
    refs = []

    class SelfRef(Function):
        @staticmethod
        def forward(ctx, x):
            refs.append(weakref.ref(ctx))
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = torch.tensor([2.0], requires_grad=True)
    out = SelfRef.apply(x)
    refs[0]().self_ref = out
    keep = [out]
    del out
    gc.collect()
    assert refs[0]() is not None
    keep[0].sum().backward()
    assert x.grad.tolist() == [3.0]

    # A cycle whose tensors are also held from outside stays alive, and so
    # does everything the outside tensor reaches.
    mid = SelfRef.apply(x)
    y = (mid * mid).sin()
    refs[-1]().self_ref = y
    del y
    gc.collect()
    assert refs[-1]() is not None
    refs[-1]().self_ref.backward()
    assert x.grad.tolist()[0] == pytest.approx(3.0 + np.cos(36.0) * 2 * 6.0 * 3)

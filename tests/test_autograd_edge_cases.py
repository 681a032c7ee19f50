"""Autograd edge cases, each checked against known values and, when it is
importable, against torch: grad-mode decorators on generator functions,
custom Functions with outputs that are not tensors, what save_for_backward,
mark_dirty and mark_non_differentiable accept, and autograd.grad's errors."""

import re

import pytest

import ferrograd as fg

from helpers import assert_raises_like_torch, has_torch
from helpers import torch as ref_torch

LIBS = [pytest.param(fg, id="ferrograd")]
if has_torch:
    LIBS.append(pytest.param(ref_torch, id="torch"))

# (decorator of `lib`, the grad mode the body runs in when the caller's is the opposite)
MODES = [
    pytest.param(lambda lib: lib.no_grad(), False, id="no_grad"),
    pytest.param(lambda lib: lib.no_grad, False, id="no_grad-bare"),
    pytest.param(lambda lib: lib.enable_grad(), True, id="enable_grad"),
    pytest.param(lambda lib: lib.set_grad_enabled(False), False, id="set_grad_enabled-False"),
    pytest.param(lambda lib: lib.set_grad_enabled(True), True, id="set_grad_enabled-True"),
    pytest.param(lambda lib: lib.inference_mode(), False, id="inference_mode"),
]


# Grad-mode decorators on generator functions


@pytest.mark.parametrize("lib", LIBS)
def test_no_grad_generator_records_nothing(lib):
    @lib.no_grad()
    def doubled(x):
        yield (x * 2).requires_grad

    assert list(doubled(lib.ones(1, requires_grad=True))) == [False]


@pytest.mark.parametrize("make_decorator, inside", MODES)
@pytest.mark.parametrize("lib", LIBS)
def test_the_body_runs_in_the_mode_and_the_caller_keeps_its_own(lib, make_decorator, inside):
    seen = []

    @make_decorator(lib)
    def steps():
        for _ in range(3):
            seen.append(lib.is_grad_enabled())
            yield

    caller = not inside
    with lib.set_grad_enabled(caller):
        for _ in steps():
            assert lib.is_grad_enabled() is caller
    assert seen == [inside] * 3


@pytest.mark.parametrize("lib", LIBS)
def test_decorating_a_generator_with_set_grad_enabled_leaves_the_mode_alone(lib):
    assert lib.is_grad_enabled()

    @lib.set_grad_enabled(False)
    def steps():
        yield lib.is_grad_enabled()

    assert lib.is_grad_enabled()
    assert list(steps()) == [False]
    assert lib.is_grad_enabled()


@pytest.mark.parametrize("lib", LIBS)
def test_set_grad_enabled_made_earlier_sets_its_mode_when_entered(lib):
    x = lib.ones(2, requires_grad=True)
    ctx = lib.set_grad_enabled(False)  # as in `ctx = set_grad_enabled(phase == "train")`
    assert not lib.is_grad_enabled()
    lib.set_grad_enabled(True)
    with ctx as entered:
        assert entered is None and not lib.is_grad_enabled()
        assert not (x * 2).requires_grad
    # Leaving restores the mode from before the object was made.
    assert lib.is_grad_enabled()
    assert repr(ctx) == f"{lib.__name__}.autograd.grad_mode.set_grad_enabled(mode=False)"
    assert (ctx.mode, ctx.prev) == (False, True)


@pytest.mark.parametrize("lib", LIBS)
def test_send_reaches_the_body_in_the_mode(lib):
    @lib.no_grad()
    def echo():
        received = yield "ready"
        while True:
            received = yield (received, lib.is_grad_enabled())

    gen = echo()
    assert next(gen) == "ready"
    assert gen.send(7) == (7, False)
    assert lib.is_grad_enabled()
    assert gen.send("x") == ("x", False)
    gen.close()


@pytest.mark.parametrize("lib", LIBS)
def test_throw_is_handled_by_the_body_in_the_mode(lib):
    @lib.no_grad()
    def catching():
        while True:
            try:
                yield "waiting"
            except ValueError as e:
                yield (str(e), lib.is_grad_enabled())

    gen = catching()
    next(gen)
    assert gen.throw(ValueError("boom")) == ("boom", False)
    assert lib.is_grad_enabled()
    assert next(gen) == "waiting"
    gen.close()


@pytest.mark.parametrize("lib", LIBS)
def test_an_exception_leaving_the_body_restores_the_callers_mode(lib):
    @lib.no_grad()
    def failing():
        yield 1
        raise KeyError(f"grad enabled: {lib.is_grad_enabled()}")

    gen = failing()
    with pytest.raises(ValueError, match="thrown"):
        next(gen)
        gen.throw(ValueError("thrown"))
    assert lib.is_grad_enabled()
    with pytest.raises(KeyError, match="grad enabled: False"):
        list(failing())
    assert lib.is_grad_enabled()


@pytest.mark.parametrize("lib", LIBS)
def test_close_runs_the_cleanup_in_the_mode(lib):
    cleanup = []

    @lib.no_grad()
    def with_cleanup():
        try:
            yield 1
            yield 2
        finally:
            cleanup.append(lib.is_grad_enabled())

    gen = with_cleanup()
    assert next(gen) == 1
    gen.close()
    assert cleanup == [False]
    assert lib.is_grad_enabled()
    with pytest.raises(StopIteration):
        next(gen)


@pytest.mark.parametrize("lib", LIBS)
def test_the_return_value_reaches_the_caller(lib):
    @lib.no_grad()
    def counted():
        yield lib.is_grad_enabled()
        return "done"

    gen = counted()
    assert next(gen) is False
    with pytest.raises(StopIteration) as stop:
        next(gen)
    assert stop.value.value == "done"


@pytest.mark.parametrize("lib", LIBS)
def test_decorated_generators_nest(lib):
    @lib.enable_grad()
    def inner():
        yield lib.is_grad_enabled()
        return "inner done"

    @lib.no_grad()
    def outer():
        yield lib.is_grad_enabled()
        result = yield from inner()
        yield (result, lib.is_grad_enabled())

    assert list(outer()) == [False, True, ("inner done", False)]


@pytest.mark.parametrize("lib", LIBS)
def test_a_mode_set_in_the_body_does_not_outlive_a_yield(lib):
    """Each resume re-enters the decorator's mode, so a ``with`` block around a
    ``yield`` in the body sees that mode after it, as in PyTorch."""
    trace = []

    @lib.no_grad()
    def body():
        with lib.enable_grad():
            trace.append(lib.is_grad_enabled())
            yield
            trace.append(lib.is_grad_enabled())
        trace.append(lib.is_grad_enabled())

    gen = body()
    next(gen)
    trace.append(lib.is_grad_enabled())
    with pytest.raises(StopIteration):
        next(gen)
    assert trace == [True, True, False, False]


@pytest.mark.parametrize("lib", LIBS)
def test_inference_mode_generator_makes_inference_tensors(lib):
    @lib.inference_mode()
    def made():
        for _ in range(2):
            yield lib.ones(1).is_inference(), lib.is_inference_mode_enabled()

    gen = made()
    for step in gen:
        assert step == (True, True)
        assert not lib.is_inference_mode_enabled()


# Custom Functions with outputs that are not tensors


def _recording_function(lib, forward, grads_seen, backward_result=lambda grads: grads[0]):
    """A Function of `lib` running `forward(ctx, a)`; its backward records
    each gradient it gets (None, or the values) and returns `backward_result(grads)`."""

    def backward(ctx, *grads):
        grads_seen.append([None if g is None else g.tolist() for g in grads])
        return backward_result(grads)

    methods = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    return type("WithExtras", (lib.autograd.Function,), methods)


@pytest.mark.parametrize("lib", LIBS)
def test_backward_gets_none_for_an_output_that_is_not_a_tensor(lib):
    seen = []
    fn = _recording_function(lib, lambda ctx, a: (a * 2, 5), seen, lambda grads: grads[0] * 2)
    a = lib.ones(2, requires_grad=True)
    doubled, five = fn.apply(a)
    assert five == 5
    assert doubled.grad_fn.name() == "WithExtrasBackward"
    doubled.sum().backward()
    assert seen == [[[1.0, 1.0], None]]
    assert a.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("lib", LIBS)
def test_a_tensor_after_other_outputs_gets_its_gradient(lib):
    seen = []
    fn = _recording_function(lib, lambda ctx, a: ("tag", None, a * 3), seen, lambda grads: grads[2] * 3)
    a = lib.ones(2, requires_grad=True)
    tag, nothing, tripled = fn.apply(a)
    assert (tag, nothing) == ("tag", None)
    tripled.sum().backward()
    assert seen == [[None, None, [1.0, 1.0]]]
    assert a.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("lib", LIBS)
def test_unused_tensor_outputs_get_zeros_and_other_outputs_none(lib):
    seen = []
    fn = _recording_function(lib, lambda ctx, a: (a * 2, 5, a * 3), seen)
    a = lib.ones(2, requires_grad=True)
    doubled, _, _ = fn.apply(a)
    doubled.sum().backward()
    assert seen == [[[1.0, 1.0], None, [0.0, 0.0]]]


@pytest.mark.parametrize("lib", LIBS)
def test_without_materialized_grads_unused_tensor_outputs_get_none(lib):
    def forward(ctx, a):
        ctx.set_materialize_grads(False)
        return a * 2, 5, a * 3

    seen = []
    fn = _recording_function(lib, forward, seen, lambda grads: grads[2])
    a = lib.ones(2, requires_grad=True)
    _, _, tripled = fn.apply(a)
    tripled.sum().backward()
    assert seen == [[None, None, [1.0, 1.0]]]


@pytest.mark.parametrize("lib", LIBS)
def test_non_differentiable_tensor_output_next_to_other_outputs(lib):
    def forward(ctx, a):
        indices = a * 0
        ctx.mark_non_differentiable(indices)
        return a * 2, "label", indices

    seen = []
    fn = _recording_function(lib, forward, seen)
    a = lib.ones(2, requires_grad=True)
    doubled, label, indices = fn.apply(a)
    assert (doubled.requires_grad, label, indices.requires_grad) == (True, "label", False)
    doubled.sum().backward()
    assert seen == [[[1.0, 1.0], None, [0.0, 0.0]]]


@pytest.mark.parametrize("lib", LIBS)
def test_saved_output_after_a_non_tensor_output_in_double_backward(lib):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            y = a.exp()
            ctx.save_for_backward(y)
            return "tag", y

        @staticmethod
        def backward(ctx, g_tag, g):
            assert g_tag is None
            (y,) = ctx.saved_tensors
            return g * y

    a = lib.tensor([0.5, 1.0], dtype=lib.float64, requires_grad=True)
    _, y = Exp.apply(a)
    (g,) = lib.autograd.grad(y.sum(), a, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), a)
    expected = a.detach().exp().tolist()
    assert g.tolist() == pytest.approx(expected)
    assert gg.tolist() == pytest.approx(expected)


@pytest.mark.parametrize("lib", LIBS)
def test_a_forward_returning_no_tensor(lib):
    fn = _recording_function(lib, lambda ctx, a: 5, [])
    assert fn.apply(lib.ones(1, requires_grad=True)) == 5


@pytest.mark.parametrize("grad_enabled", [True, False])
@pytest.mark.parametrize("lib", LIBS)
def test_mark_non_differentiable_and_mark_dirty_take_only_tensors(lib, grad_enabled):
    def marking(mark):
        def forward(ctx, a):
            mark(ctx)(5)
            return a * 2, 5

        return _recording_function(lib, forward, [])

    a = lib.ones(2, requires_grad=True)
    with lib.set_grad_enabled(grad_enabled):
        with pytest.raises(
            RuntimeError, match="^mark_non_differentiable only accepts variable arguments, but got"
        ):
            marking(lambda ctx: ctx.mark_non_differentiable).apply(a)
        with pytest.raises(RuntimeError, match="^mark_dirty can only accept variables, but argument"):
            marking(lambda ctx: ctx.mark_dirty).apply(a)


# save_for_backward


def _saving(lib, *extra):
    class Saving(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(*extra, a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g

    return Saving


@pytest.mark.parametrize(
    "extra, message",
    [
        ((3.0,), "save_for_backward can only save variables, but argument 0 is of type float"),
        ((None, [1]), "save_for_backward can only save variables, but argument 1 is of type list"),
    ],
)
@pytest.mark.parametrize("lib", LIBS)
def test_save_for_backward_takes_only_tensors_or_none(lib, extra, message):
    with pytest.raises(TypeError) as info:
        _saving(lib, *extra).apply(lib.ones(2, requires_grad=True))
    assert str(info.value) == message


@pytest.mark.parametrize("lib", LIBS)
def test_nothing_is_saved_for_a_node_that_is_not_recorded(lib):
    packed = []
    a = lib.ones(2, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        with lib.no_grad():
            assert not _saving(lib, 3.0).apply(a).requires_grad
        assert not _saving(lib, 3.0).apply(a.detach()).requires_grad
        assert packed == []
        _saving(lib).apply(a)
    assert packed == [1]


# autograd.grad


@pytest.mark.parametrize("inputs", [[], ()])
@pytest.mark.parametrize("lib", LIBS)
def test_grad_with_no_inputs_raises(lib, inputs):
    a = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        lib.autograd.grad(a.sum(), inputs)
    assert str(info.value) == "`inputs` argument to `grad()` cannot be empty."


@pytest.mark.parametrize("check", ["gradcheck", "gradgradcheck"])
@pytest.mark.parametrize("lib", LIBS)
def test_gradchecks_need_an_input_that_requires_grad(lib, check):
    x = lib.ones(2, dtype=lib.float64)
    with pytest.raises(ValueError, match="^gradcheck expects at least one input tensor to require gradient"):
        getattr(lib.autograd, check)(lambda t: t * 2, (x,), raise_exception=False)


@pytest.mark.parametrize("lib", LIBS)
def test_unused_input_error_names_its_index(lib):
    used, unused = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        lib.autograd.grad((used * 2).sum(), [used, unused])
    assert str(info.value) == (
        "The differentiated Tensor at index 1 appears to not have been used in the graph. "
        "Set allow_unused=True if this is the desired behavior."
    )


@pytest.mark.parametrize(
    "op, kind, message",
    [
        (lambda T: setattr(T.ones(2), "requires_grad", 3), RuntimeError, "requires_grad must be a bool"),
        (
            lambda T: setattr(T.ones(2, requires_grad=True), "grad", [1, 2]),
            TypeError,
            "assigned grad expected to be a Tensor or None but got grad of type list",
        ),
        (
            lambda T: (T.ones(2, requires_grad=True) * 2).sum().backward(inputs=[]),
            RuntimeError,
            "`inputs` argument to `backward()` cannot be empty.",
        ),
    ],
)
def test_setting_autograd_attributes_to_the_wrong_kind_raises_like_torch(op, kind, message):
    assert_raises_like_torch(lambda F, T: op(T), kind, re.escape(message))


def test_grad_can_be_set_to_none_and_again():
    t = fg.ones(2, requires_grad=True)
    (t * 2).sum().backward()
    t.grad = None
    assert t.grad is None
    (t * 2).sum().backward()
    assert t.grad.tolist() == [2.0, 2.0]

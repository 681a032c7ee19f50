"""Autograd rules that training code leans on without knowing it: in-place writes to parameters
and to views that were made to require grad are refused, ``retain_grad`` follows an in-place op,
grad modes nest inside inference mode, relu has a double backward, hooks may not change what
they return, the functional API checks ``v``, and new random tensors start at version 0. Each
test states the expected behaviour and, when torch is installed, checks torch agrees."""

from __future__ import annotations

import math

import pytest

import ferrograd as fg

from helpers import has_torch, torch

LIBS = [fg] + ([torch] if has_torch else [])


def message(fn, T):
    """The error ``fn(T)`` raises, as (type name, first line with the library named ferrograd)."""
    try:
        fn(T)
    except Exception as e:  # the comparison is the point
        return type(e).__name__, str(e).split("\n")[0].replace("torch", "ferrograd")
    return None


def raises_like_torch(fn, kind: str, text: str):
    ours = message(fn, fg)
    assert ours == (kind, text)
    if has_torch:
        assert message(fn, torch) == ours


# --- In-place writes to parameters and leaf views -------------------------------------------

LEAF = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF = "a view of a leaf Variable that requires grad is being used in an in-place operation."


@pytest.mark.parametrize(
    "write, text",
    [
        (lambda T, p: p.mul_(2), LEAF),
        (lambda T, p: p.zero_(), LEAF),
        (lambda T, p: p.copy_(T.ones(2, 3)), LEAF),
        (lambda T, p: p.normal_(), LEAF),
        (lambda T, p: p.sub_(p.detach() * 0.1), LEAF),
        # Assignment writes through the view p[0].
        (lambda T, p: p.__setitem__(0, 1.0), VIEW_OF_LEAF),
    ],
)
def test_in_place_on_a_parameter_is_refused(write, text):
    def program(T):
        layer = T.nn.Linear(3, 2)
        write(T, layer.weight)

    raises_like_torch(program, "RuntimeError", text)


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_parameters_are_leaves_of_their_own(lib):
    data = lib.ones(2, 3)
    p = lib.nn.Parameter(data)
    assert p._base is None and p.is_leaf and p.grad_fn is None
    # The data is shared, version counter included.
    data.add_(1)
    assert p._version == data._version == 1
    assert p.detach().tolist() == [[2.0] * 3] * 2
    with lib.no_grad():
        p.mul_(2)  # the optimizer's way: allowed, and still a leaf
    assert p.is_leaf and data.tolist() == [[4.0] * 3] * 2
    (p * p).sum().backward()
    assert p.grad.tolist() == [[8.0] * 3] * 2


def test_in_place_on_a_view_made_to_require_grad_is_refused():
    raises_like_torch(lambda T: T.ones(4)[:2].requires_grad_().mul_(2), "RuntimeError", VIEW_OF_LEAF)
    # A view that does not require grad, of a tensor that does not either, stays writable.
    for T in LIBS:
        base = T.zeros(4)
        base[:2].add_(1)
        assert base.tolist() == [1.0, 1.0, 0.0, 0.0]


# --- retain_grad and in-place ops --------------------------------------------------------------


@pytest.mark.parametrize(
    "write, expected",
    [
        (lambda y: y.mul_(3), [1.0, 1.0, 1.0]),
        (lambda y: y[0:2].mul_(5), [1.0, 1.0, 1.0]),
        (lambda y: y.exp_(), [1.0, 1.0, 1.0]),
    ],
)
def test_retained_gradient_is_that_of_the_value_after_an_in_place_op(write, expected):
    for T in LIBS:
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        y.retain_grad()
        write(y)
        y.sum().backward()
        assert y.grad.tolist() == expected, T.__name__
        assert y.retains_grad


def test_retained_gradient_before_and_after_in_place_differs_from_x_grad():
    for T in LIBS:
        x = T.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        y.retain_grad()
        y.mul_(3)
        (y * y).sum().backward()
        assert y.grad.tolist() == [6.0, 12.0]
        assert x.grad.tolist() == [18.0, 36.0]


# --- Grad modes inside inference mode ----------------------------------------------------------


def test_inference_mode_false_turns_grad_mode_on():
    for T in LIBS:
        x = T.ones(2, requires_grad=True)
        with T.inference_mode():
            with T.inference_mode(False):
                assert T.is_grad_enabled() and not T.is_inference_mode_enabled()
                y = x * 2
            assert not T.is_grad_enabled() and T.is_inference_mode_enabled()
        assert y.requires_grad and not y.is_inference()
        with T.no_grad(), T.inference_mode(False):
            assert T.is_grad_enabled()
        assert T.is_grad_enabled()


def test_inference_mode_decorates_without_parentheses():
    for T in LIBS:

        @T.inference_mode
        def double(x):
            return x * 2

        out = double(T.ones(2, requires_grad=True))
        assert out.tolist() == [2.0, 2.0] and out.is_inference() and not out.requires_grad


@pytest.mark.parametrize("mode", [1, 0, None, "yes", 1.0])
def test_set_grad_enabled_takes_a_bool_only(mode):
    kind = type(mode).__name__
    raises_like_torch(
        lambda T: T.set_grad_enabled(mode),
        "TypeError",
        f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {kind}",
    )
    assert fg.is_grad_enabled()


# --- Double backward through relu -----------------------------------------------------------


def test_relu_gradient_is_differentiable():
    for T in LIBS:
        x = T.tensor([1.0, -2.0, 3.0, 0.0], dtype=T.float64, requires_grad=True)
        (g,) = T.autograd.grad(x.relu().sum(), x, create_graph=True)
        assert g.requires_grad and g.grad_fn.name() == "ThresholdBackwardBackward0"
        assert g.tolist() == [1.0, 0.0, 1.0, 0.0]
        (gg,) = T.autograd.grad(g.sum(), x)
        assert gg.tolist() == [0.0] * 4


def test_gradient_penalty_through_relu_reaches_the_weights():
    # d/dw of |d relu(w x)/dx|^2 = d/dw of sum(w^2 [w x > 0]): 2 w where w x > 0 (the first only).
    for T in LIBS:
        w = T.tensor([2.0, -1.0, 3.0], dtype=T.float64, requires_grad=True)
        x = T.tensor([1.0, 1.0, -1.0], dtype=T.float64, requires_grad=True)
        (gx,) = T.autograd.grad((w * x).relu().sum(), x, create_graph=True)
        (gx * gx).sum().backward()
        assert w.grad.tolist() == [4.0, 0.0, 0.0]
        assert x.grad.tolist() == [0.0, 0.0, 0.0]


# --- What hooks may return ------------------------------------------------------------------


def changed_size(g):
    return g.new_ones(3)


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize(
    "hook, kind, text",
    [
        (changed_size, "RuntimeError", "hook 'changed_size' has changed the size of value"),
        (lambda g: g.reshape(2, 1), "RuntimeError", "hook '<lambda>' has changed the size of value"),
        (
            lambda g: g.double(),
            "RuntimeError",
            "hook '<lambda>' has changed the type of value (was ferrograd.FloatTensor got ferrograd.DoubleTensor)",
        ),
        (lambda g: 3, "TypeError", "expected Variable, but hook returned 'int'"),
    ],
)
def test_tensor_hooks_may_not_change_the_gradient_shape_or_type(leaf, hook, kind, text):
    def program(T):
        x = T.ones(2, requires_grad=True)
        y = x if leaf else x * 1
        y.register_hook(hook)
        (y * 1).sum().backward()

    raises_like_torch(program, kind, text)


def test_hook_without_a_name_is_named_unknown():
    class Doubling:
        def __call__(self, g):
            return g.new_ones(5)

    def program(T):
        x = T.ones(2, requires_grad=True)
        x.register_hook(Doubling())
        x.sum().backward()

    raises_like_torch(program, "RuntimeError", "hook '<unknown>' has changed the size of value")


def test_a_hook_returning_a_gradient_of_the_same_shape_replaces_it():
    for T in LIBS:
        x = T.ones(2, requires_grad=True)
        x.register_hook(lambda g: g * 3)
        (x * 1).sum().backward()
        assert x.grad.tolist() == [3.0, 3.0]


def test_post_accumulate_grad_hooks_return_none():
    def program(T):
        x = T.ones(2, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: t * 2)
        (x * 1).sum().backward()

    raises_like_torch(program, "RuntimeError", "Tensor post accumulate grad hooks should return None.")


def test_node_hooks_return_as_many_gradients_as_they_were_given():
    def post(T):
        x = T.ones(2, requires_grad=True)
        y = x * x
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0],))
        y.sum().backward()

    def pre(T):
        x = T.ones(2, requires_grad=True)
        y = x * x
        y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0], grad_outputs[0]))
        y.sum().backward()

    raises_like_torch(
        post,
        "RuntimeError",
        "hook '<lambda>' has returned an incorrect number of values (got 1, but expected 2)",
    )
    raises_like_torch(
        pre,
        "RuntimeError",
        "hook '<lambda>' has returned an incorrect number of values (got 2, but expected 1)",
    )


# --- autograd.functional ------------------------------------------------------------------


@pytest.mark.parametrize("lib", LIBS, ids=lambda m: m.__name__)
def test_jvp_of_a_function_that_ignores_its_input_is_zero(lib):
    out, jv = lib.autograd.functional.jvp(lambda x: lib.ones(3), lib.ones(2), lib.ones(2))
    assert out.tolist() == [1.0] * 3 and jv.tolist() == [0.0] * 3
    outs, jvs = lib.autograd.functional.jvp(lambda x: (x * 2, lib.ones(3)), lib.ones(2), lib.ones(2))
    assert jvs[0].tolist() == [2.0, 2.0] and jvs[1].tolist() == [0.0] * 3


@pytest.mark.parametrize(
    "call, text",
    [
        (
            lambda T: T.autograd.functional.hvp(lambda x: x.sum(), T.ones(2), T.ones(3)),
            "v has invalid size: should be ferrograd.Size([2]) but got ferrograd.Size([3]).",
        ),
        (
            lambda T: T.autograd.functional.vhp(lambda x: x.sum(), T.ones(2), T.ones(3)),
            "v has invalid size: should be ferrograd.Size([2]) but got ferrograd.Size([3]).",
        ),
        (
            lambda T: T.autograd.functional.vjp(lambda x: x * 2, T.ones(2), T.ones(3)),
            "v has invalid size: should be ferrograd.Size([2]) but got ferrograd.Size([3]).",
        ),
        (
            lambda T: T.autograd.functional.jvp(lambda x: x * 2, T.ones(2), T.ones(3)),
            "v has invalid size: should be ferrograd.Size([2]) but got ferrograd.Size([3]).",
        ),
        (
            lambda T: T.autograd.functional.jvp(
                lambda x, y: x * y, (T.ones(2), T.ones(2)), (T.ones(2), T.ones(3))
            ),
            "Entry 1 in v has invalid size: should be ferrograd.Size([2]) but got ferrograd.Size([3]).",
        ),
        (
            lambda T: T.autograd.functional.jvp(lambda x, y: x * y, (T.ones(2), T.ones(2)), (T.ones(2),)),
            "v is a tuple of invalid length: should be 2 but got 1.",
        ),
    ],
)
def test_functional_products_check_v(call, text):
    raises_like_torch(call, "RuntimeError", text)


# --- Gradient values and bookkeeping ---------------------------------------------------------


def test_atan2_gradient_at_the_origin_is_zero():
    for T in LIBS:
        y = T.tensor([0.0, 0.0, 1.0, 1e-30], requires_grad=True)
        x = T.tensor([0.0, -0.0, 0.0, 0.0], requires_grad=True)
        T.atan2(y, x).sum().backward()
        # 1e-30 squared underflows in float32: its reciprocal is infinite, zeroed as at (0, 0).
        assert y.grad.tolist() == [0.0, -0.0, 0.0, 0.0]
        assert [math.copysign(1, v) for v in y.grad.tolist()] == [1, -1, 1, 1]
        assert x.grad.tolist() == [-0.0, -0.0, -1.0, -0.0]


@pytest.mark.parametrize(
    "make",
    [
        lambda T: T.randn(3),
        lambda T: T.rand(3),
        lambda T: T.randint(0, 5, (3,)),
        lambda T: T.normal(0.0, 1.0, (3,)),
        lambda T: T.randn_like(T.ones(2)),
        lambda T: T.rand_like(T.ones(2)),
    ],
)
def test_new_random_tensors_are_at_version_zero(make):
    for T in LIBS:
        t = make(T)
        assert t._version == 0
        t.add_(1)
        assert t._version == 1


def test_log1p_node_is_named_as_torch_names_it():
    for T in LIBS:
        assert T.ones(2, requires_grad=True).log1p().grad_fn.name() == "Log1PBackward0"


def test_a_custom_function_node_reads_through_to_its_ctx():
    for T in LIBS:

        class Square(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.scale = 3
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        x = T.ones(2, requires_grad=True)
        y = Square.apply(x)
        assert y.grad_fn.scale == 3
        assert y.grad_fn.needs_input_grad == (True,)
        (saved,) = y.grad_fn.saved_tensors
        assert saved.tolist() == [1.0, 1.0]
        with pytest.raises(AttributeError, match="^'SquareBackward' object has no attribute 'missing'$"):
            _ = y.grad_fn.missing
        with pytest.raises(AttributeError, match="^'MulBackward0' object has no attribute 'scale'$"):
            _ = (x * 2).grad_fn.scale


def test_a_number_on_the_left_of_add_and_mul_is_the_second_edge():
    for T in LIBS:
        x = T.ones(2, requires_grad=True)
        for y in (2 * x, x * 2, 2 + x, x + 2):
            kinds = [(None if n is None else type(n).__name__, nr) for n, nr in y.grad_fn.next_functions]
            assert kinds == [("AccumulateGrad", 0), (None, 0)], T.__name__


def test_a_retaining_view_keeps_the_gradient_of_its_value_after_its_base_is_written():
    for T in LIBS:
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        v = y[0:2]
        v.retain_grad()
        y.mul_(3)
        (v * v).sum().backward()
        assert v.grad.tolist() == [6.0, 12.0], T.__name__
        assert x.grad.tolist() == [18.0, 36.0, 0.0]

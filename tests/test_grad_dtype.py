"""`Tensor.grad_dtype`: the dtype a leaf's gradients are cast to on their way
into `.grad` (or a `grad()` result), and the dtype an assigned `.grad` must
have. Each scenario runs on ferrograd and, when it is importable, on torch,
asserting the same outcome of both."""

import pytest

import ferrograd as fg

from helpers import torch

LIBS = [fg] + ([torch] if torch is not None else [])
lib_ids = [m.__name__ for m in LIBS]
each_lib = pytest.mark.parametrize("T", LIBS, ids=lib_ids)


def doubling_function(T):
    """A custom Function computing ``2 * a`` whose backward passes its gradient on as float64."""

    class Double(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g.double()

    return Double


@each_lib
def test_defaults_to_the_dtype_and_is_for_leaves_only(T):
    x = T.randn(3, requires_grad=True)
    assert x.grad_dtype == T.float32
    assert T.randn(2, dtype=T.float64).grad_dtype == T.float64
    assert x.detach().grad_dtype == T.float32
    with pytest.raises(RuntimeError, match="grad_dtype can only be accessed on leaf tensors."):
        _ = (x * 2).grad_dtype
    with pytest.raises(RuntimeError, match="grad_dtype can only be set on leaf tensors."):
        (x * 2).grad_dtype = T.float64
    with pytest.raises(RuntimeError, match="grad_dtype must be a .*dtype or None, but got str"):
        x.grad_dtype = "float"


@each_lib
def test_incoming_gradients_are_cast_for_backward_grad_and_hooks(T):
    x = T.randn(3, requires_grad=True)
    x.grad_dtype = T.float64
    seen = []
    x.register_hook(lambda g: seen.append(g.dtype))
    x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.dtype))
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    assert x.grad.dtype == T.float64
    assert x.grad.tolist() == [4.0, 4.0, 4.0]
    assert seen == [T.float64] * 4
    (g,) = T.autograd.grad((x * 3).sum(), x)
    assert g.dtype == T.float64
    assert g.tolist() == [3.0, 3.0, 3.0]


@each_lib
def test_the_setting_at_backward_time_counts(T):
    x = T.randn(3, requires_grad=True)
    loss = (x.expand(4, 3) * 2).sum()
    x.grad_dtype = T.complex64
    loss.backward()
    assert x.grad.dtype == T.complex64
    assert x.grad.tolist() == [8 + 0j] * 3


@each_lib
def test_none_keeps_the_dtype_a_gradient_arrives_with(T):
    double = doubling_function(T)
    x = T.randn(3, requires_grad=True)
    double.apply(x).sum().backward()
    assert x.grad.dtype == T.float32

    x = T.randn(3, requires_grad=True)
    x.grad_dtype = None
    assert x.grad_dtype is None
    double.apply(x).sum().backward()
    assert x.grad.dtype == T.float64
    (x * 2).sum().backward()  # float32 gradient added into the float64 one
    assert x.grad.dtype == T.float64
    assert x.grad.tolist() == [3.0, 3.0, 3.0]

    y = T.randn(3, requires_grad=True)
    y.grad_dtype = None
    (y * 2).sum().backward()
    double.apply(y).sum().backward()  # float64 added into the float32 one
    assert y.grad.dtype == T.float32
    assert y.grad.tolist() == [3.0, 3.0, 3.0]


@each_lib
def test_an_assigned_grad_must_have_the_grad_dtype(T):
    x = T.randn(3, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'",
    ):
        x.grad = T.ones(3, dtype=T.float64)
    x.grad_dtype = T.float64
    x.grad = T.ones(3, dtype=T.float64)
    x.grad_dtype = None
    x.grad = T.ones(3, dtype=T.complex64)
    assert x.grad.dtype == T.complex64


@each_lib
def test_changing_it_needs_a_matching_or_cleared_grad(T):
    x = T.randn(3, requires_grad=True)
    (x * 2).sum().backward()
    with pytest.raises(
        RuntimeError,
        match=r"Cannot set grad_dtype to 'Double' because there is already a gradient with dtype 'float'",
    ):
        x.grad_dtype = T.float64
    assert x.grad_dtype == T.float32
    x.grad_dtype = T.float32
    x.grad_dtype = None
    x.grad = None
    x.grad_dtype = T.float64
    assert x.grad_dtype == T.float64


def test_a_grad_dtype_that_cannot_hold_gradients_fails_backward_cleanly():
    x = fg.randn(3, requires_grad=True)
    x.grad_dtype = fg.int64
    with pytest.raises(RuntimeError, match="only floating point and complex gradients"):
        (x * 2).sum().backward()
    assert x.grad is None


def test_survives_a_change_of_data_and_of_requires_grad():
    x = fg.randn(3, requires_grad=True)
    x.grad_dtype = fg.float64
    x.data = fg.randn(3)
    assert x.grad_dtype == fg.float64
    x.requires_grad_(False)
    assert x.grad_dtype == fg.float64
    x.requires_grad_()
    (x * 2).sum().backward()
    assert x.grad.dtype == fg.float64

"""Products (`prod`, `cumprod`), N-D `diagonal` and `Tensor.unfold`: values
against numpy, gradients against finite differences and torch, zeros in
products, views sharing storage, and PyTorch's errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import arrays, check_op, has_torch, shapes

if has_torch:
    import torch


def with_zeros(data, a):
    """`a` with some elements set to zero, drawn (and tiny ones, whose
    quotients underflow, set to zero as well)."""
    a = np.where(np.abs(a) < 1e-3, 0.0, a)
    if a.size:
        mask = data.draw(arrays(a.shape, 0.0, 1.0)) < 0.3
        a = np.where(mask, 0.0, a)
    return a


@settings(max_examples=40, deadline=None)
@given(shapes(max_side=4), st.data())
def test_prod_matches_numpy_and_its_gradient_handles_zeros(shape, data):
    a = with_zeros(data, data.draw(arrays(shape, 0.5, 2.0) if data.draw(st.booleans()) else arrays(shape)))
    np.testing.assert_allclose(fg.tensor(a).prod().numpy(), np.prod(a), rtol=1e-12)
    check_op(lambda T, x: T.prod(x), a)
    if shape:
        dim = data.draw(st.integers(-len(shape), len(shape) - 1))
        keepdim = data.draw(st.booleans())
        np.testing.assert_allclose(
            fg.tensor(a).prod(dim, keepdim).numpy(), np.prod(a, axis=dim, keepdims=keepdim), rtol=1e-12
        )
        check_op(lambda T, x: T.prod(x, dim, keepdim=keepdim), a)


def test_prod_records_pytorchs_nodes_and_differentiates_twice_without_zeros():
    x = fg.tensor(np.random.default_rng(1).uniform(0.5, 2.0, (3, 4)), requires_grad=True)
    assert x.prod().grad_fn.name() == "ProdBackward0"
    assert x.prod(1).grad_fn.name() == "ProdBackward1"
    assert fg.autograd.gradgradcheck(lambda x: x.prod(1), (x,))
    assert fg.autograd.gradgradcheck(lambda x: x.prod(), (x,))


def test_second_derivative_of_prod_at_a_zero_is_refused_not_wrong():
    x = fg.tensor([[1.0, 0.0, 3.0]], requires_grad=True)
    (g,) = fg.autograd.grad(x.prod(), x, create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), [[0.0, 3.0, 0.0]])
    with pytest.raises(RuntimeError, match="not implemented for inputs containing zeros"):
        g.sum().backward()


def test_prod_dtypes_and_errors():
    assert fg.tensor([1, 2, 3]).prod().dtype == fg.int64
    assert fg.tensor([1, 2, 3]).prod().item() == 6
    assert fg.tensor([True, False]).prod().dtype == fg.int64
    assert fg.tensor([1, 2]).prod(dtype=fg.float64).dtype == fg.float64
    big = np.random.default_rng(0).uniform(0.999, 1.001, (3000, 50))
    for dim in (0, 1):
        np.testing.assert_allclose(fg.tensor(big).prod(dim).numpy(), np.prod(big, dim), rtol=1e-10)
    np.testing.assert_allclose(fg.tensor(big).prod().item(), np.prod(big), rtol=1e-10)
    assert fg.tensor(3.0).prod(0).item() == 3.0
    assert fg.ones(0).prod().item() == 1.0
    with pytest.raises(IndexError, match="Dimension out of range"):
        fg.ones(2, 3).prod(2)
    z = fg.tensor([1 + 2j, 3 - 1j, 0.5j], requires_grad=True)
    np.testing.assert_allclose(z.prod().detach().numpy(), np.prod([1 + 2j, 3 - 1j, 0.5j]))
    if has_torch:
        tz = torch.tensor([1 + 2j, 3 - 1j, 0.5j], requires_grad=True)
        (z.prod() * 2j).real.backward()
        (tz.prod() * 2j).real.backward()
        np.testing.assert_allclose(z.grad.numpy(), tz.grad.numpy(), rtol=1e-6)


@settings(max_examples=40, deadline=None)
@given(shapes(min_dims=1, max_side=5), st.data())
def test_cumprod_matches_numpy_and_its_gradient_handles_zeros(shape, data):
    a = with_zeros(data, data.draw(arrays(shape)))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    np.testing.assert_allclose(fg.tensor(a).cumprod(dim).numpy(), np.cumprod(a, axis=dim), rtol=1e-12)
    check_op(lambda T, x: T.cumprod(x, dim), a)


def test_cumprod_nodes_dtypes_and_second_derivative():
    x = fg.tensor(np.random.default_rng(2).uniform(0.5, 2.0, (3, 4)), requires_grad=True)
    assert x.cumprod(1).grad_fn.name() == "CumprodBackward0"
    assert fg.autograd.gradgradcheck(lambda x: x.cumprod(1), (x,))
    assert fg.autograd.gradgradcheck(lambda x: x.cumprod(0), (x,))
    assert fg.tensor([True, True, False]).cumprod(0).dtype == fg.int64
    np.testing.assert_array_equal(fg.tensor([2, 3, 4]).cumprod(0).numpy(), [2, 6, 24])
    assert fg.tensor([2, 3]).cumprod(0, dtype=fg.float64).dtype == fg.float64
    big = np.random.default_rng(0).uniform(0.99, 1.01, (40, 3000))
    np.testing.assert_allclose(fg.tensor(big).cumprod(1).numpy(), np.cumprod(big, 1), rtol=1e-10)
    np.testing.assert_allclose(fg.tensor(big).cumprod(0).numpy(), np.cumprod(big, 0), rtol=1e-10)


@settings(max_examples=40, deadline=None)
@given(shapes(min_dims=2, max_dims=4, max_side=4), st.data())
def test_diagonal_of_any_two_dims_is_a_view_with_the_diagonal_last(shape, data):
    a = data.draw(arrays(shape))
    n = len(shape)
    d1, d2 = data.draw(st.lists(st.integers(-n, n - 1), min_size=2, max_size=2, unique_by=lambda d: d % n))
    offset = data.draw(st.integers(-3, 3))
    x = fg.tensor(a)
    view = x.diagonal(offset, d1, d2)
    np.testing.assert_array_equal(view.numpy(), np.diagonal(a, offset, d1, d2))
    assert view._base is not None and view._version == x._version
    check_op(lambda T, x: T.diagonal(x, offset, d1, d2), a)


def test_diagonal_writes_through_and_rejects_one_dim_twice():
    x = fg.zeros(2, 3, 3)
    x.diagonal(0, 1, 2).fill_(1.0)
    np.testing.assert_array_equal(x.numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)))
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 1, -2"):
        x.diagonal(0, 1, -2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        fg.ones(3).diagonal()
    y = fg.tensor(np.random.default_rng(3).standard_normal((2, 3, 4)), requires_grad=True)
    assert y.diagonal(1, 0, 2).grad_fn.name() == "DiagonalBackward0"
    assert fg.autograd.gradgradcheck(lambda y: y.diagonal(-1, 2, 1) ** 2, (y,))


@settings(max_examples=40, deadline=None)
@given(shapes(min_dims=1, max_side=6), st.data())
def test_unfold_windows_match_numpy_and_overlapping_gradients_add(shape, data):
    a = data.draw(arrays(shape))
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = data.draw(st.integers(0, shape[d]))
    step = data.draw(st.integers(1, 3))
    windows = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
    axis = d % len(shape)
    expected = np.take(windows, np.arange(0, windows.shape[axis], step), axis=axis)
    np.testing.assert_array_equal(fg.tensor(a).unfold(d, size, step).numpy(), expected)
    check_op(lambda T, x: x.unfold(d, size, step) * x.unfold(d, size, step), a)


def test_unfold_is_a_view_and_checks_its_arguments():
    x = fg.arange(6.0)
    w = x.unfold(0, 2, 2)
    w[1, 0] = 10.0
    assert x[2].item() == 10.0
    assert fg.tensor(5.0).unfold(0, 1, 1).shape == (1,)
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 6 but size is 7"):
        x.unfold(0, 7, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        x.unfold(0, 2, 0)
    y = fg.tensor(np.random.default_rng(4).standard_normal((3, 5)), requires_grad=True)
    assert y.unfold(1, 3, 1).grad_fn.name() == "UnfoldBackward0"
    assert fg.autograd.gradgradcheck(lambda y: y.unfold(1, 3, 1) ** 2, (y,))

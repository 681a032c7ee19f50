"""sort, argsort and topk: order, positions, ties, NaN, gradients and errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import check_op, shapes


def distinct(shape, data):
    """Values without ties (the gradient of a reordering is smooth only there)."""
    size = int(np.prod(shape))
    return np.array(data.draw(st.permutations(range(size))), dtype=np.float64).reshape(shape) * 0.37


@settings(max_examples=40, deadline=None)
@given(shape=shapes(min_dims=1, max_dims=3), descending=st.booleans(), data=st.data())
def test_sort_orders_stably_and_points_at_the_sources(shape, descending, data):
    n = len(shape)
    dim = data.draw(st.integers(-n, n - 1))
    # Small integers: many ties, whose order must stay the original one.
    a = np.array(
        data.draw(st.lists(st.integers(-2, 2), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
    ).reshape(shape)
    for dtype in ("float32", "int64"):
        values, indices = fg.tensor(a.astype(dtype)).sort(dim, descending)
        key = -a if descending else a
        expected = np.argsort(key, axis=dim, kind="stable")
        np.testing.assert_array_equal(indices.numpy(), expected)
        np.testing.assert_array_equal(values.numpy(), np.take_along_axis(a, expected, dim))
        assert indices.dtype == fg.int64
        np.testing.assert_array_equal(fg.tensor(a.astype(dtype)).argsort(dim, descending).numpy(), expected)


@settings(max_examples=30, deadline=None)
@given(shape=shapes(min_dims=1, max_dims=3), data=st.data())
def test_sort_and_topk_gradients_go_back_to_the_sources(shape, data):
    a = distinct(shape, data)
    n = len(shape)
    dim = data.draw(st.integers(-n, n - 1))
    descending = data.draw(st.booleans())
    check_op(lambda T, x: T.sort(x, dim, descending).values ** 2, a)
    k = data.draw(st.integers(0, shape[dim]))
    largest = data.draw(st.booleans())
    out = check_op(lambda T, x: x.topk(k, dim, largest).values * 3.0, a)
    expected = np.sort(a, axis=dim)
    expected = np.flip(expected, dim) if largest else expected
    np.testing.assert_array_equal(out.detach().numpy(), np.take(expected, np.arange(k), axis=dim) * 3.0)
    if a.size:
        x = fg.tensor(a, requires_grad=True)
        assert x.sort(dim).values.grad_fn.name() == "SortBackward0"
        assert x.topk(k, dim).values.grad_fn.name() == "TopkBackward0"
        assert fg.autograd.gradgradcheck(lambda x: x.sort(dim, descending).values ** 3, (x,))


def test_nan_sorts_above_every_number():
    x = fg.tensor([1.0, float("nan"), -np.inf, 0.0, np.inf])
    np.testing.assert_array_equal(x.sort().indices.numpy(), [2, 3, 0, 4, 1])
    np.testing.assert_array_equal(x.sort(descending=True).indices.numpy(), [1, 4, 0, 3, 2])
    np.testing.assert_array_equal(x.topk(2).indices.numpy(), [1, 4])
    np.testing.assert_array_equal(x.topk(2, largest=False).indices.numpy(), [2, 3])
    b = fg.tensor([True, False, True])
    np.testing.assert_array_equal(b.sort().values.numpy(), [False, True, True])


SPECIAL_FLOATS = [0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 3e38, -3e38]


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.sampled_from(SPECIAL_FLOATS) | st.floats(width=32), min_size=1, max_size=40),
    descending=st.booleans(),
    dtype=st.sampled_from(["float32", "float64"]),
)
def test_signed_zeros_tie_and_every_nan_sorts_above_every_number(values, descending, dtype):
    a = np.array(values, dtype=dtype)

    def rank(i):
        # NaNs (of any sign or payload) count as equal and above everything;
        # -0.0 equals 0.0; ties keep their positions.
        if np.isnan(a[i]):
            return (-1 if descending else 1, 0.0, i)
        return (0, -a[i] if descending else a[i], i)

    expected = sorted(range(len(a)), key=rank)
    values_, indices = fg.tensor(a).sort(descending=descending)
    np.testing.assert_array_equal(indices.numpy(), expected)
    np.testing.assert_array_equal(values_.numpy(), a[expected])
    k = len(a) // 2
    np.testing.assert_array_equal(fg.tensor(a).topk(k, largest=descending).indices.numpy(), expected[:k])


def test_int64_extremes_sort_in_order():
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    a = np.array([0, big, -1, small, 1, small, big])
    expected = np.argsort(a, kind="stable")
    np.testing.assert_array_equal(fg.tensor(a).sort().indices.numpy(), expected)
    np.testing.assert_array_equal(fg.tensor(a).sort(descending=True).values.numpy(), np.sort(a)[::-1])
    np.testing.assert_array_equal(fg.tensor(a).topk(3).indices.numpy(), [1, 6, 4])


def test_large_sorts_spread_over_the_pool_and_match():
    a = np.random.default_rng(0).standard_normal((300, 500)).astype(np.float32)
    np.testing.assert_array_equal(fg.tensor(a).sort(1).values.numpy(), np.sort(a, 1))
    np.testing.assert_array_equal(fg.tensor(a).sort(0).indices.numpy(), np.argsort(a, 0, kind="stable"))
    top = fg.tensor(a).topk(7, 1)
    np.testing.assert_array_equal(top.values.numpy(), -np.sort(-a, 1)[:, :7])


def test_zero_dim_and_empty_tensors():
    s = fg.tensor(2.0)
    assert s.sort().values.item() == 2.0 and s.sort().indices.item() == 0
    assert s.topk(0).values.item() == 2.0
    v, i = fg.zeros(3, 0).sort(1)
    assert v.shape == (3, 0) and i.shape == (3, 0)
    v, i = fg.ones(2, 5).topk(0)
    assert v.shape == (2, 0) and i.dtype == fg.int64


def test_errors_match_pytorch():
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        fg.ones(3).topk(4)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        fg.ones(3).topk(-1)
    with pytest.raises(RuntimeError, match="Sort does not support complex dtypes on CPU"):
        fg.ones(3, dtype=fg.complex64).sort()
    with pytest.raises(RuntimeError, match="topk does not support complex dtypes on CPU"):
        fg.ones(3, dtype=fg.complex64).topk(1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        fg.ones(3).sort(1)

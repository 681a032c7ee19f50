"""Permuted and transposed views read by elementwise kernels, copies and in-place updates (which
read such views in tiles when the last dim is strided and an earlier one contiguous): the same
elements as numpy's reading of the same view, and gradients that reach the base in its order."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg


@st.composite
def permuted_views(draw):
    """A base of 2-4 dims (sides up to 70, so some views are large enough to be tiled), a
    permutation of its dims, and optionally a slice off the front of its first dim."""
    ndim = draw(st.integers(2, 4))
    limit = {2: 70, 3: 20, 4: 9}[ndim]
    shape = tuple(draw(st.lists(st.integers(1, limit), min_size=ndim, max_size=ndim)))
    order = tuple(draw(st.permutations(range(ndim))))
    start = draw(st.integers(0, shape[0] - 1))
    return shape, order, start


def views(shape, order, start, seed):
    base = np.random.default_rng(seed).standard_normal(shape)
    t = fg.tensor(base)[start:].permute(*order)
    return t, base[start:].transpose(order)


@settings(max_examples=60, deadline=None)
@given(permuted_views(), st.integers(0, 2**16))
def test_copies_and_unary_ops_of_permuted_views_read_the_elements_in_order(case, seed):
    t, a = views(*case, seed)
    np.testing.assert_array_equal(t.contiguous().numpy(), a)
    np.testing.assert_array_equal(t.clone().numpy(), a)
    np.testing.assert_allclose(t.exp().numpy(), np.exp(a), rtol=1e-12)
    np.testing.assert_array_equal(t.to(fg.float32).numpy(), a.astype(np.float32))
    np.testing.assert_array_equal(t.reshape(-1).numpy(), a.reshape(-1))


@settings(max_examples=60, deadline=None)
@given(permuted_views(), st.integers(0, 2**16))
def test_binary_ops_and_updates_pair_permuted_views_with_row_major_operands(case, seed):
    t, a = views(*case, seed)
    other = np.random.default_rng(seed + 1).standard_normal(a.shape)
    o = fg.tensor(other)
    np.testing.assert_array_equal((t - o).numpy(), a - other)
    np.testing.assert_array_equal((o - t).numpy(), other - a)
    np.testing.assert_array_equal((t * t).numpy(), a * a)
    target = fg.tensor(other.copy())
    target.sub_(t)
    np.testing.assert_array_equal(target.numpy(), other - a)
    target.copy_(t)
    np.testing.assert_array_equal(target.numpy(), a)


def test_large_transposes_split_over_threads_keep_every_element():
    # Large enough for the pool, with sides that are not multiples of the tile.
    base = np.random.default_rng(0).standard_normal((301, 517)).astype(np.float32)
    t = fg.tensor(base).t()
    np.testing.assert_array_equal(t.contiguous().numpy(), base.T)
    np.testing.assert_array_equal((t + fg.tensor(base.T.copy())).numpy(), base.T * 2)
    cube = np.random.default_rng(1).standard_normal((7, 90, 130))
    view = fg.tensor(cube).permute(2, 0, 1)
    np.testing.assert_array_equal(view.contiguous().numpy(), cube.transpose(2, 0, 1))


@settings(max_examples=30, deadline=None)
@given(permuted_views(), st.integers(0, 2**16))
def test_gradients_through_permuted_copies_reach_the_base_in_its_order(case, seed):
    shape, order, start = case
    x = fg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)
    y = x[start:].permute(*order).contiguous()
    g = np.random.default_rng(seed + 1).standard_normal(tuple(y.shape))
    (y * fg.tensor(g)).sum().backward()
    expected = np.zeros(shape)
    expected[start:] = g.transpose(np.argsort(order))
    np.testing.assert_array_equal(x.grad.numpy(), expected)

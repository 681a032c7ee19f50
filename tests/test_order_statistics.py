"""median, nanmedian, kthvalue, mode, quantile and nanquantile: values against numpy and torch,
gradients against torch and float64 finite differences, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import check_op, has_torch, torch


def _distinct(shape, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return rng.permutation(n).reshape(shape).astype(np.float64) * 0.37 - 2.0 + rng.random(shape) * 0.01


def _raises(fn, kind, msg):
    for T in [fg] + ([torch] if has_torch else []):
        with pytest.raises(kind, match=msg):
            fn(T)


def _lower_median(a, axis):
    s = np.sort(a, axis=axis)
    return np.take(s, (a.shape[axis] - 1) // 2, axis=axis)


@pytest.mark.parametrize("shape", [(1,), (5,), (4,), (3, 4), (2, 3, 5)])
def test_median_all_elements(shape):
    a = _distinct(shape)
    got = fg.median(fg.tensor(a))
    assert got.shape == ()
    assert got.item() == _lower_median(a.reshape(-1), 0)
    check_op(lambda T, x: T.median(x), a)
    check_op(lambda T, x: x.nanmedian(), a)


@pytest.mark.parametrize("shape, dim", [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 5), -2), ((), 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_median_along_dim(shape, dim, keepdim):
    a = _distinct(shape, seed=1)
    res = fg.median(fg.tensor(a), dim, keepdim)
    assert type(res).__name__ == "median"
    values, indices = res
    expected = _lower_median(np.atleast_1d(a), dim) if a.ndim else a
    if keepdim and a.ndim:
        expected = np.expand_dims(expected, dim)
    np.testing.assert_array_equal(values.numpy(), expected)
    assert indices.dtype == fg.int64
    if a.ndim:
        np.testing.assert_array_equal(
            np.take_along_axis(a, indices.numpy() if keepdim else np.expand_dims(indices.numpy(), dim), dim),
            np.expand_dims(expected, dim) if not keepdim else expected,
        )
    check_op(lambda T, x: T.median(x, dim, keepdim).values, a)
    check_op(lambda T, x: x.nanmedian(dim, keepdim=keepdim)[0], a)
    if has_torch:
        np.testing.assert_array_equal(
            indices.numpy(), torch.median(torch.tensor(a), dim, keepdim).indices.numpy()
        )


def test_median_with_nan():
    a = np.array([[1.0, np.nan, 3.0, np.nan], [4.0, 2.0, 0.5, 9.0]])
    v, i = fg.median(fg.tensor(a), 1)
    assert np.isnan(v[0].item()) and i[0].item() == 1
    assert v[1].item() == 2.0 and i[1].item() == 1
    assert np.isnan(fg.median(fg.tensor(a)).item())
    v, i = fg.nanmedian(fg.tensor(a), 1)
    assert v.tolist() == [1.0, 2.0] and i.tolist() == [0, 1]
    assert fg.nanmedian(fg.tensor(a)).item() == np.sort(a[~np.isnan(a)])[(6 - 1) // 2]
    v, i = fg.nanmedian(fg.tensor([[np.nan, np.nan]]), 1)
    assert np.isnan(v.item())


def test_median_ties_share_the_gradient():
    x = fg.tensor([2.0, 1.0, 2.0, 5.0, 2.0], dtype=fg.float64, requires_grad=True)
    fg.median(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [1 / 3, 0, 1 / 3, 0, 1 / 3])
    y = fg.tensor([[2.0, 1.0, 7.0]], dtype=fg.float64, requires_grad=True)
    y.median(1).values.sum().backward()
    assert y.grad.tolist() == [[1.0, 0.0, 0.0]]


def test_median_empty():
    assert np.isnan(fg.median(fg.zeros(0)).item())
    v, i = fg.median(fg.zeros(0, 3), 1)
    assert v.shape == (0,) and i.shape == (0,)
    _raises(
        lambda T: T.median(T.zeros(0, 3), 0),
        IndexError,
        r"median\(\): Expected reduction dim 0 to have non-zero size",
    )


@given(st.integers(0, 2**31 - 1), st.integers(1, 3))
@settings(max_examples=25, deadline=None)
def test_kthvalue_matches_numpy(seed, nd):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 5, size=nd))
    dim = int(rng.integers(-nd, nd))
    a = rng.standard_normal(shape)
    k = int(rng.integers(1, shape[dim] + 1))
    v, i = fg.kthvalue(fg.tensor(a), k, dim)
    np.testing.assert_array_equal(v.numpy(), np.take(np.sort(a, axis=dim), k - 1, axis=dim))
    np.testing.assert_array_equal(
        np.take_along_axis(a, np.expand_dims(i.numpy(), dim), dim).squeeze(dim), v.numpy()
    )


def test_kthvalue_gradients_and_errors():
    a = _distinct((3, 4), seed=4)
    check_op(lambda T, x: T.kthvalue(x, 2, 1).values, a)
    check_op(lambda T, x: x.kthvalue(3, 0, keepdim=True)[0], a)
    assert type(fg.kthvalue(fg.tensor(a), 1)).__name__ == "kthvalue"
    _raises(
        lambda T: T.kthvalue(T.arange(3.0), 4),
        RuntimeError,
        r"kthvalue\(\): selected number k out of range for dimension 0",
    )
    _raises(
        lambda T: T.kthvalue(T.arange(3.0), 0),
        RuntimeError,
        r"kthvalue\(\): selected number k out of range for dimension 0",
    )


def test_mode():
    v, i = fg.mode(fg.tensor([1.0, 2.0, 2.0, 1.0, 3.0]))
    assert v.item() == 1.0 and i.item() == 3  # the smallest of the most frequent, its last position
    v, i = fg.tensor([[3, 1, 1, 3, 3], [5, 4, 4, 0, 0]]).mode(1)
    assert v.tolist() == [3, 0] and i.tolist() == [4, 4]
    v, i = fg.mode(fg.tensor([[1.0, 2.0], [1.0, 3.0], [4.0, 3.0]]), 0, keepdim=True)
    assert v.tolist() == [[1.0, 3.0]] and i.tolist() == [[1, 2]]
    assert type(fg.mode(fg.tensor([1.0]))).__name__ == "mode"
    rng = np.random.default_rng(5)
    a = rng.integers(0, 4, size=(4, 6)).astype(np.float64)
    fv, fi = fg.mode(fg.tensor(a), 1)
    for r in range(4):
        vals, cnt = np.unique(a[r], return_counts=True)
        assert fv[r].item() == vals[np.argmax(cnt)]
        assert a[r, fi[r].item()] == fv[r].item()
    if has_torch:
        np.testing.assert_array_equal(fv.numpy(), torch.mode(torch.tensor(a), 1).values.numpy())
    x = fg.tensor(a, requires_grad=True)
    fg.mode(x, 1).values.sum().backward()
    assert x.grad.sum().item() == 4 and all(x.grad.numpy()[r, fi[r].item()] == 1 for r in range(4))


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize(
    "shape, dim, keepdim",
    [((7,), None, False), ((3, 5), 1, False), ((3, 5), 0, True), ((2, 3, 4), None, True), ((), None, False)],
)
def test_quantile_matches_numpy(interpolation, shape, dim, keepdim):
    a = _distinct(shape, seed=6)
    for q in (0.0, 0.3, 0.5, 1.0, [0.1, 0.25, 0.9]):
        qq = fg.tensor(q, dtype=fg.float64) if isinstance(q, list) else q
        got = fg.quantile(fg.tensor(a), qq, dim=dim, keepdim=keepdim, interpolation=interpolation)
        expected = np.quantile(a, q, axis=dim, keepdims=keepdim, method=interpolation)
        assert got.shape == np.shape(expected)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-12)
    check_op(lambda T, x: T.quantile(x, 0.3, dim=dim, keepdim=keepdim, interpolation=interpolation), a)
    check_op(
        lambda T, x: x.nanquantile(
            T.tensor([0.2, 0.8], dtype=T.float64), dim=dim, interpolation=interpolation
        ),
        a,
    )


def test_quantile_float32_and_nan():
    a = np.array([[3.0, np.nan, 1.0, 2.0], [0.5, 4.0, 2.0, 8.0]], dtype=np.float32)
    got = fg.quantile(fg.tensor(a), 0.4, dim=1)
    assert got.dtype == fg.float32
    assert np.isnan(got[0].item())
    np.testing.assert_allclose(got[1].item(), np.quantile(a[1], 0.4), rtol=1e-6)
    nq = fg.nanquantile(fg.tensor(a), 0.4, dim=1).numpy()
    np.testing.assert_allclose(nq, np.nanquantile(a, 0.4, axis=1), rtol=1e-6)
    assert np.isnan(fg.nanquantile(fg.tensor([np.nan, np.nan]), 0.5).item())


def test_quantile_errors():
    _raises(
        lambda T: T.quantile(T.arange(3), 0.5),
        RuntimeError,
        r"quantile\(\) input tensor must be either float or double dtype",
    )
    _raises(
        lambda T: T.quantile(T.arange(3.0), 1.5),
        RuntimeError,
        r"quantile\(\) q must be in the range \[0, 1\] but got 1.5",
    )
    _raises(
        lambda T: T.quantile(T.arange(3.0), 0.5, interpolation="foo"),
        RuntimeError,
        r"quantile\(\) interpolation must be one of linear, lower, higher, midpoint or nearest, but got foo",
    )
    _raises(
        lambda T: T.quantile(T.arange(3.0), T.tensor([0.5], dtype=T.float64)),
        RuntimeError,
        r"quantile\(\) q tensor must be same dtype as the input tensor",
    )
    _raises(
        lambda T: T.nanquantile(T.arange(3), 0.5),
        RuntimeError,
        r"quantile\(\) input tensor must be either float",
    )

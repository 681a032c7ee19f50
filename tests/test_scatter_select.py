"""scatter, scatter_add, scatter_reduce and the selection functions (masked_select, nonzero,
argwhere, unique, unique_consecutive, bincount, histc, searchsorted, bucketize)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import check_op, has_torch, torch


def _scatter_index(rng, shape, dim, index_shape):
    return rng.integers(0, shape[dim], size=index_shape)


def _np_scatter(x, dim, idx, src, accumulate):
    out = x.copy()
    for pos in np.ndindex(*idx.shape):
        target = list(pos)
        target[dim] = idx[pos]
        if accumulate:
            out[tuple(target)] += src[pos]
        else:
            out[tuple(target)] = src[pos]
    return out


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_values_match_a_loop(dim):
    rng = np.random.default_rng(dim + 5)
    x = rng.standard_normal((4, 5))
    src = rng.standard_normal((3, 4))
    d = dim % 2
    # distinct positions per slice so the written value is well defined
    if d == 0:
        idx = np.stack([rng.permutation(4)[:3] for _ in range(4)], axis=1)
    else:
        idx = np.stack([rng.permutation(5)[:4] for _ in range(3)], axis=0)
    got = fg.scatter(fg.tensor(x), dim, fg.tensor(idx), fg.tensor(src))
    np.testing.assert_allclose(got.numpy(), _np_scatter(x, d, idx, src, False))
    got = fg.tensor(x).scatter_add(dim, fg.tensor(idx), fg.tensor(src))
    np.testing.assert_allclose(got.numpy(), _np_scatter(x, d, idx, src, True))


@given(st.integers(0, 2**31 - 1), st.integers(1, 3))
@settings(max_examples=25, deadline=None)
def test_scatter_add_with_repeats_matches_a_loop(seed, nd):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 4, size=nd))
    dim = int(rng.integers(0, nd))
    ishape = tuple(
        int(rng.integers(0, s + 1)) if k != dim else int(rng.integers(0, 5)) for k, s in enumerate(shape)
    )
    x = rng.standard_normal(shape)
    src = rng.standard_normal(tuple(s + 1 for s in ishape))
    idx = _scatter_index(rng, shape, dim, ishape)
    got = fg.scatter_add(fg.tensor(x), dim, fg.tensor(idx), fg.tensor(src))
    np.testing.assert_allclose(got.numpy(), _np_scatter(x, dim, idx, src, True), atol=1e-12)


def test_scatter_gradients_and_value_form():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    src = rng.standard_normal((2, 4))
    idx = [[0, 2, 1, 0], [2, 0, 0, 1]]
    check_op(lambda T, a, b: T.scatter(a, 0, T.tensor(idx), b), x, src)
    check_op(lambda T, a, b: T.scatter_add(a, 0, T.tensor(idx), b), x, src)
    check_op(
        lambda T, a, b: a.scatter(1, T.tensor([[3], [1], [0]]), b[:, :1].reshape(2, 1).repeat(2, 1)[:3]),
        x,
        src,
    )
    out = check_op(lambda T, a: T.scatter(a, 1, T.tensor([[1, 3]]), value=2.5), x)
    assert out[0, 1].item() == 2.5 and out[0, 3].item() == 2.5
    np.testing.assert_allclose(out[1:].detach().numpy(), x[1:])


def test_scatter_input_gradient_is_zero_at_written_positions():
    x = fg.ones(3, dtype=fg.float64, requires_grad=True)
    s = fg.tensor([5.0], dtype=fg.float64, requires_grad=True)
    fg.scatter(x, 0, fg.tensor([1]), s).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]
    assert s.grad.tolist() == [1.0]


def test_scatter_inplace_forms():
    x = fg.zeros(2, 3)
    r = x.scatter_(1, fg.tensor([[2], [0]]), fg.tensor([[1.0], [2.0]]))
    assert r is x
    assert x.tolist() == [[0.0, 0.0, 1.0], [2.0, 0.0, 0.0]]
    x.scatter_add_(0, fg.tensor([[1, 1, 1]]), fg.ones(1, 3))
    assert x.tolist() == [[0.0, 0.0, 1.0], [3.0, 1.0, 1.0]]
    x.scatter_reduce_(1, fg.tensor([[0, 0]]), fg.tensor([[4.0, -1.0]]), "amax", include_self=False)
    assert x.tolist()[0] == [4.0, 0.0, 1.0]
    x.scatter_(0, fg.tensor([[0]]), value=-7.0)
    assert x[0, 0].item() == -7.0


def test_scatter_0d():
    out = fg.scatter(fg.tensor(1.0), 0, fg.tensor(0), fg.tensor(5.0))
    assert out.shape == () and out.item() == 5.0


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin", "prod"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_values_and_gradients(reduce, include_self):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4))
    src = rng.standard_normal((4, 4))
    idx = [[0, 2, 1, 0], [2, 0, 0, 1], [0, 0, 2, 2], [1, 0, 0, 0]]
    check_op(
        lambda T, a, b: T.scatter_reduce(a, 0, T.tensor(idx), b, reduce, include_self=include_self),
        x,
        src,
    )


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_gradient_is_the_product_of_the_other_factors(include_self):
    # Many factors per position, some with one zero factor and some with two.
    rng = np.random.default_rng(5)
    x = rng.uniform(0.5, 1.5, 40)
    x[[3, 7]] = 0.0
    src = rng.uniform(0.5, 1.5, 4000)
    idx = rng.integers(0, 30, 4000)
    src[np.flatnonzero(idx == 5)[:1]] = 0.0
    src[np.flatnonzero(idx == 9)[:2]] = 0.0
    src[np.flatnonzero(idx == 3)[:1]] = 0.0
    a = fg.tensor(x, requires_grad=True)
    b = fg.tensor(src, requires_grad=True)
    out = fg.scatter_reduce(a, 0, fg.tensor(idx), b, "prod", include_self=include_self)
    weights = rng.standard_normal(40)
    (out * fg.tensor(weights)).sum().backward()
    want_a, want_b = np.zeros(40), np.zeros(4000)
    for p in range(40):
        members = np.flatnonzero(idx == p)
        factors = list(src[members]) + ([x[p]] if include_self or not members.size else [])
        for k, j in enumerate(members):
            want_b[j] = weights[p] * np.prod(factors[:k] + factors[k + 1 :])
        if include_self or not members.size:
            want_a[p] = weights[p] * np.prod(factors[:-1])
    np.testing.assert_allclose(a.grad.numpy(), want_a, rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(b.grad.numpy(), want_b, rtol=1e-9, atol=1e-300)


def test_scatter_reduce_against_numpy():
    x = np.array([1.0, 10.0, 4.0])
    src = np.array([2.0, 3.0, -1.0, 7.0])
    idx = np.array([0, 0, 2, 0])

    def t(r, inc=True):
        return fg.scatter_reduce(fg.tensor(x), 0, fg.tensor(idx), fg.tensor(src), r, include_self=inc)

    assert t("sum").tolist() == [13.0, 10.0, 3.0]
    assert t("mean").tolist() == [3.25, 10.0, 1.5]
    assert t("mean", False).tolist() == [4.0, 10.0, -1.0]
    assert t("amax").tolist() == [7.0, 10.0, 4.0]
    assert t("amin", False).tolist() == [2.0, 10.0, -1.0]
    assert t("prod").tolist() == [42.0, 10.0, -4.0]
    assert t("prod", False).tolist() == [42.0, 10.0, -1.0]


def test_scatter_reduce_amax_ties_share_the_gradient():
    x = fg.tensor([1.0], dtype=fg.float64, requires_grad=True)
    s = fg.tensor([1.0, 1.0, 0.0], dtype=fg.float64, requires_grad=True)
    fg.scatter_reduce(x, 0, fg.tensor([0, 0, 0]), s, "amax").sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1 / 3])
    np.testing.assert_allclose(s.grad.numpy(), [1 / 3, 1 / 3, 0.0])


@given(st.integers(0, 2**31 - 1), st.integers(1, 3), st.sampled_from(["sum", "prod", "mean", "amax", "amin"]))
@settings(max_examples=40, deadline=None)
def test_scatter_reduce_any_shape_matches_finite_differences_and_torch(seed, nd, reduce):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 4, size=nd))
    dim = int(rng.integers(-nd, nd))
    d = dim % nd
    ishape = tuple(
        int(rng.integers(1, 5)) if k == d else int(rng.integers(1, n + 1)) for k, n in enumerate(shape)
    )
    idx = _scatter_index(rng, shape, d, ishape)
    # Distinct values (no ties for amax/amin, no zero factors): finite differences are well defined.
    x = rng.permutation(np.arange(1, 1 + int(np.prod(shape)))).reshape(shape) / 7.0
    src = -rng.permutation(np.arange(1, 1 + int(np.prod(ishape)))).reshape(ishape) / 5.0
    include_self = bool(rng.integers(0, 2))
    check_op(
        lambda T, a, b: T.scatter_reduce(a, dim, T.tensor(idx), b, reduce, include_self=include_self),
        x,
        src,
    )


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_second_derivatives(reduce, include_self):
    rng = np.random.default_rng(11)
    x = fg.tensor(rng.uniform(0.5, 2.0, (3, 4)), requires_grad=True)
    src = fg.tensor(rng.uniform(-2.0, -0.5, (4, 4)), requires_grad=True)
    idx = fg.tensor([[0, 2, 1, 0], [2, 0, 0, 1], [0, 0, 2, 2], [1, 0, 0, 0]])

    def f(a, b):
        return fg.scatter_reduce(a, 0, idx, b, reduce, include_self=include_self)

    assert fg.autograd.gradcheck(f, (x, src))
    assert fg.autograd.gradgradcheck(f, (x, src))


def test_scatter_family_second_derivatives():
    rng = np.random.default_rng(12)
    x = fg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    src = fg.tensor(rng.standard_normal((2, 4)), requires_grad=True)
    idx = fg.tensor([[0, 2, 1, 0], [2, 1, 0, 1]])
    for f in (
        lambda a, b: a.scatter(0, idx, b) * a,
        lambda a, b: a.scatter_add(0, idx, b) ** 2,
        lambda a, b: a.scatter(0, idx, value=1.5) * b.sum(),
    ):
        assert fg.autograd.gradgradcheck(f, (x, src))


def test_scatter_grad_fn_names_match_torch():
    mods = [fg] + ([torch] if has_torch else [])
    for T in mods:
        x = T.ones(3, 4, requires_grad=True)
        src = T.ones(2, 4, requires_grad=True)
        idx = T.tensor([[0, 2, 1, 0], [2, 1, 0, 1]])
        assert x.scatter(0, idx, src).grad_fn.name() == "ScatterBackward0"
        assert x.scatter(0, idx, 2.0).grad_fn.name() == "ScatterBackward1"
        assert x.scatter_add(0, idx, src).grad_fn.name() == "ScatterAddBackward0"
        assert x.scatter_reduce(0, idx, src, "amax").grad_fn.name() == "ScatterReduceBackward0"
        assert x.gather(0, idx).grad_fn.name() == "GatherBackward0"
        y = x.clone()
        y.scatter_(0, idx, src)
        assert y.grad_fn.name() == "ScatterBackward0"
        y.scatter_add_(0, idx, src)
        assert y.grad_fn.name() == "ScatterAddBackward0"
        y.scatter_reduce_(0, idx, src, "mean")
        assert y.grad_fn.name() == "ScatterReduceBackward0"


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_a_source_larger_than_the_index_gets_zero_gradient_outside_it(reduce):
    src = fg.tensor(np.arange(1.0, 13.0).reshape(3, 4), requires_grad=True)
    x = fg.ones(2, 4, dtype=fg.float64, requires_grad=True)
    out = x.scatter_reduce(0, fg.tensor([[1, 0, 1], [0, 0, 1]]), src, reduce)
    (out * fg.tensor(np.arange(8.0).reshape(2, 4))).sum().backward()
    assert src.grad.shape == (3, 4)
    assert src.grad[2].tolist() == [0.0] * 4 and src.grad[:, 3].tolist() == [0.0] * 3
    assert (src.grad[:2, :3] != 0).any()


def test_scatter_between_0d_and_1d_one_element_tensors():
    for T in [fg] + ([torch] if has_torch else []):
        src = T.tensor(5.0, dtype=T.float64, requires_grad=True)
        out = T.zeros(4, dtype=T.float64).scatter_add(0, T.tensor([2]), src)
        assert out.tolist() == [0.0, 0.0, 5.0, 0.0]
        (out * 3.0).sum().backward()
        assert src.grad.shape == () and src.grad.item() == 3.0
        src = T.tensor([5.0, 6.0], dtype=T.float64, requires_grad=True)
        out = T.zeros((), dtype=T.float64).scatter(0, T.tensor(0), src)
        assert out.item() == 5.0
    # (torch's backward refuses a source larger than the index; ferrograd's gives zeros beyond it)
    src = fg.tensor([5.0, 6.0], dtype=fg.float64, requires_grad=True)
    fg.zeros((), dtype=fg.float64).scatter(0, fg.tensor(0), src).backward()
    assert src.grad.tolist() == [1.0, 0.0]
    _raises(
        lambda T: T.zeros(4).scatter(0, T.tensor([0, 2, 3]), T.tensor(5.0)),
        RuntimeError,
        r"Expected index \[3\] to be no larger than self \[4\] apart from dimension 0 and to be no larger "
        r"size than src \[\]",
    )
    # An empty index writes nothing, whatever the shapes.
    assert fg.ones(2, 2).scatter(0, fg.zeros(0, dtype=fg.int64), fg.ones(3)).tolist() == [[1.0, 1.0]] * 2
    src = fg.ones(2, 3, requires_grad=True)
    fg.ones(2, 2).scatter_add(0, fg.zeros(0, 5, dtype=fg.int64), src).sum().backward()
    assert src.grad.tolist() == [[0.0] * 3] * 2
    for T in [fg] + ([torch] if has_torch else []):
        assert T.ones(2, 2).gather(0, T.zeros(0, 5, dtype=T.int64)).shape == (0, 5)


def test_scatter_legacy_reduce_and_value_forms():
    x = fg.tensor([[1.0, 2.0], [3.0, 4.0]])
    idx = fg.tensor([[1, 0]])
    assert x.scatter(0, idx, fg.tensor([[10.0, 20.0]]), reduce="add").tolist() == [[1.0, 22.0], [13.0, 4.0]]
    assert x.scatter(0, idx, 3.0, reduce="multiply").tolist() == [[1.0, 6.0], [9.0, 4.0]]
    assert x.scatter(0, idx, 7).tolist() == [[1.0, 7.0], [7.0, 4.0]]
    with pytest.raises(TypeError, match="'src' or 'value'"):
        x.scatter(0, idx)


def test_scatter_reduce_dtype_errors():
    _raises(
        lambda T: T.zeros(3, dtype=T.complex64).scatter_reduce(
            0, T.tensor([0]), T.ones(1, dtype=T.complex64), "amax"
        ),
        NotImplementedError,
        "\"scatter_gather_tensor_cpu_reduce_amax\" not implemented for 'ComplexFloat'",
    )
    _raises(
        lambda T: T.zeros(3, dtype=T.bool).scatter_reduce(0, T.tensor([0]), T.ones(1, dtype=T.bool), "mean"),
        NotImplementedError,
        "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'",
    )
    _raises(
        lambda T: T.ones(3).scatter_reduce(0, T.tensor([0.0]), T.ones(1), "sum"),
        RuntimeError,
        r"^scatter\(\): Expected dtype int32/int64 for index",
    )
    _raises(
        lambda T: T.ones(3).scatter_add(0, T.tensor([0]), T.ones(1, dtype=T.float64)),
        RuntimeError,
        r"^scatter\(\): Expected self.dtype to be equal to src.dtype",
    )
    _raises(
        lambda T: T.zeros(3).scatter(0, T.tensor([0]), 2.0, reduce="mean"),
        RuntimeError,
        "reduce argument must be either add or multiply.",
    )
    _raises(
        lambda T: T.zeros(3).gather(0, T.tensor([0.0])),
        RuntimeError,
        r"gather\(\): Expected dtype int32/int64 for index",
    )


def test_scatter_bool_and_complex_values():
    b = fg.zeros(3, dtype=fg.bool).scatter_add(0, fg.tensor([0, 0, 2]), fg.tensor([True, False, True]))
    assert b.tolist() == [True, False, True]
    c = fg.ones(2, dtype=fg.complex128).scatter_reduce(
        0, fg.tensor([0, 0]), fg.tensor([1j, 2.0 + 0j], dtype=fg.complex128), "prod"
    )
    assert c.tolist() == [2j, 1 + 0j]


def _raises(fn, kind, msg):
    mods = [fg] + ([torch] if has_torch else [])
    for T in mods:
        with pytest.raises(kind, match=msg):
            fn(T)


def test_scatter_errors():
    _raises(
        lambda T: T.zeros(3, 4).scatter(0, T.tensor([[0.0, 1.0]]), T.ones(1, 2)),
        RuntimeError,
        r"scatter\(\): Expected dtype int32/int64 for index",
    )
    _raises(
        lambda T: T.zeros(3, 4).scatter(0, T.tensor([0, 1]), T.ones(1, 2)),
        RuntimeError,
        "Index tensor must have the same number of dimensions as self tensor",
    )
    _raises(
        lambda T: T.zeros(3, 4).scatter(0, T.tensor([[0, 5]]), T.ones(1, 2)),
        RuntimeError,
        "index 5 is out of bounds for dimension 0 with size 3",
    )
    _raises(
        lambda T: T.zeros(3, 4).scatter_add(0, T.tensor([[-1, 0]]), T.ones(1, 2)),
        RuntimeError,
        "index -1 is out of bounds for dimension 0 with size 3",
    )
    _raises(
        lambda T: T.zeros(3, 4).scatter(0, T.tensor([[0, 1, 1]]), T.ones(1, 2)),
        RuntimeError,
        r"Expected index \[1, 3\] to be no larger than self \[3, 4\] apart from dimension 0 and to be "
        r"no larger size than src \[1, 2\]",
    )
    _raises(
        lambda T: T.zeros(3, 4).scatter(0, T.tensor([[0, 1]]), T.ones(1, 2, dtype=T.float64)),
        RuntimeError,
        r"scatter\(\): Expected self.dtype to be equal to src.dtype",
    )
    _raises(
        lambda T: T.zeros(3, 4).scatter(2, T.tensor([[0, 1]]), T.ones(1, 2)),
        IndexError,
        "Dimension out of range",
    )
    _raises(
        lambda T: T.zeros(3).scatter_reduce(0, T.tensor([0]), T.ones(1), "foo"),
        RuntimeError,
        "reduce argument must be either sum, prod, mean, amax or amin, got foo",
    )


# --------------------------------------------------------------------------- selection


@pytest.mark.parametrize(
    "shape, mshape", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1), (2, 3)), ((), ()), ((0, 2), (2,))]
)
def test_masked_select(shape, mshape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    m = rng.random(mshape) > 0.4
    expected = np.broadcast_to(x, np.broadcast_shapes(shape, mshape))[
        np.broadcast_to(m, np.broadcast_shapes(shape, mshape))
    ]
    got = fg.masked_select(fg.tensor(x), fg.tensor(m))
    np.testing.assert_array_equal(got.numpy(), expected)
    assert fg.tensor(x).masked_select(fg.tensor(m)).shape == expected.shape
    if x.size and expected.size:
        check_op(lambda T, a: T.masked_select(a, T.tensor(m)), x)
    _raises(
        lambda T: T.masked_select(T.zeros(2), T.ones(2)),
        RuntimeError,
        "masked_select: expected BoolTensor for mask",
    )


@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 2)])
def test_nonzero_and_argwhere(shape):
    rng = np.random.default_rng(2)
    a = (rng.random(shape) > 0.5) * rng.integers(1, 5, size=shape)
    t = fg.tensor(a)
    nz = fg.nonzero(t)
    assert nz.dtype == fg.int64 and not nz.requires_grad
    np.testing.assert_array_equal(nz.numpy(), np.argwhere(a).reshape(np.count_nonzero(a), a.ndim))
    np.testing.assert_array_equal(t.argwhere().numpy(), np.argwhere(a).reshape(np.count_nonzero(a), a.ndim))
    tup = t.nonzero(as_tuple=True)
    expected = np.nonzero(np.atleast_1d(a))
    assert len(tup) == len(expected)
    for g, e in zip(tup, expected):
        np.testing.assert_array_equal(g.numpy(), e)
    if has_torch:
        np.testing.assert_array_equal(nz.numpy(), torch.nonzero(torch.tensor(a)).numpy())


@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 4), (2, 0, 3)])
def test_where_with_the_condition_alone_gives_its_nonzero_indices(shape):
    rng = np.random.default_rng(3)
    cond = rng.random(shape) > 0.5
    got = fg.where(fg.tensor(cond))
    expected = np.nonzero(np.atleast_1d(cond))
    assert isinstance(got, tuple) and len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == fg.int64
        np.testing.assert_array_equal(g.numpy(), e)
    _raises(
        lambda T: T.where(T.tensor(cond), T.ones(shape)),
        TypeError,
        "where\\(\\) received an invalid combination",
    )


@given(st.lists(st.integers(-3, 3), max_size=12), st.booleans(), st.booleans())
@settings(max_examples=40, deadline=None)
def test_unique_matches_numpy(values, inv, cnt):
    a = np.array(values, dtype=np.float32).reshape(-1)
    res = fg.unique(fg.tensor(a), return_inverse=inv, return_counts=cnt)
    res = res if isinstance(res, tuple) else (res,)
    vals, e_inv, e_cnt = np.unique(a, return_inverse=True, return_counts=True)
    assert res[0].dtype == fg.float32
    np.testing.assert_array_equal(res[0].numpy(), vals)
    k = 1
    if inv:
        np.testing.assert_array_equal(res[k].numpy(), e_inv.reshape(a.shape))
        np.testing.assert_array_equal(res[0].numpy()[res[k].numpy()], a)
        k += 1
    if cnt:
        np.testing.assert_array_equal(res[k].numpy(), e_cnt)


def test_unique_dim_and_method():
    t = fg.tensor([[3, 1], [0, 2], [3, 1]])
    vals, inv, cnt = t.unique(dim=0, return_inverse=True, return_counts=True)
    assert vals.tolist() == [[0, 2], [3, 1]]
    assert inv.tolist() == [1, 0, 1] and cnt.tolist() == [1, 2]
    assert fg.unique(fg.tensor([[2.0, 1.0], [1.0, 2.0]])).tolist() == [1.0, 2.0]
    if has_torch:
        for d in (0, 1):
            tv = torch.unique(torch.tensor([[3, 1], [0, 2], [3, 1]]), dim=d, return_inverse=True)
            fv = fg.unique(t, dim=d, return_inverse=True)
            for a, b in zip(fv, tv):
                np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_unique_consecutive():
    t = fg.tensor([1, 1, 2, 2, 3, 1, 1, 2])
    out, inv, cnt = fg.unique_consecutive(t, return_inverse=True, return_counts=True)
    assert out.tolist() == [1, 2, 3, 1, 2]
    assert inv.tolist() == [0, 0, 1, 1, 2, 3, 3, 4]
    assert cnt.tolist() == [2, 2, 1, 2, 1]
    m = fg.tensor([[1, 1, 2], [1, 1, 2], [0, 1, 2]])
    assert m.unique_consecutive(dim=0).tolist() == [[1, 1, 2], [0, 1, 2]]
    assert m.unique_consecutive(dim=1, return_counts=True)[1].tolist() == [1, 1, 1]
    assert fg.unique_consecutive(fg.tensor([], dtype=fg.int64)).tolist() == []


def test_bincount():
    a = np.array([0, 3, 3, 1, 7])
    w = np.array([0.5, 1.0, 2.0, -1.0, 0.25])
    assert fg.bincount(fg.tensor(a)).tolist() == np.bincount(a).tolist()
    assert fg.tensor(a).bincount(minlength=10).tolist() == np.bincount(a, minlength=10).tolist()
    got = fg.bincount(fg.tensor(a), fg.tensor(w, dtype=fg.float32))
    assert got.dtype == fg.float32
    np.testing.assert_allclose(got.numpy(), np.bincount(a, weights=w))
    assert fg.bincount(fg.tensor(a), fg.tensor(w)).dtype == fg.float64
    assert fg.bincount(fg.tensor([], dtype=fg.int64)).shape == (0,)
    _raises(
        lambda T: T.bincount(T.tensor([-1, 2])),
        RuntimeError,
        "bincount only supports 1-d non-negative integral inputs.",
    )
    _raises(
        lambda T: T.bincount(T.tensor([[1, 2]])),
        RuntimeError,
        "bincount only supports 1-d non-negative integral inputs.",
    )


@pytest.mark.parametrize("bins, lo, hi", [(4, 0, 0), (5, -1.0, 1.0), (3, 0.5, 0.5), (7, -10, 10)])
def test_histc(bins, lo, hi):
    rng = np.random.default_rng(bins)
    x = rng.standard_normal(50).astype(np.float32)
    x[:2] = [1.0, -1.0]
    got = fg.histc(fg.tensor(x), bins=bins, min=lo, max=hi)
    assert got.dtype == fg.float32 and got.shape == (bins,)
    a, b = (lo, hi) if lo != hi else (x.min(), x.max())
    inside = ((x >= a) & (x <= b)).sum()
    assert got.sum().item() == inside
    if has_torch:
        np.testing.assert_array_equal(
            got.numpy(), torch.histc(torch.tensor(x), bins=bins, min=lo, max=hi).numpy()
        )
    _raises(
        lambda T: T.histc(T.tensor([1.0, 2.0]), min=3, max=1), RuntimeError, "max must be larger than min"
    )
    _raises(lambda T: T.histc(T.tensor([1.0, 2.0]), bins=0), RuntimeError, "bins must be > 0")


def test_histc_edges():
    # the maximum falls in the last bin; a constant tensor widens the range by one each side
    assert fg.histc(fg.tensor([0.0, 1.0, 2.0, 3.0]), bins=3).tolist() == [1.0, 1.0, 2.0]
    assert fg.histc(fg.tensor([2.0, 2.0]), bins=2).tolist() == [0.0, 2.0]


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_and_bucketize(right):
    seq = np.array([1.0, 2.0, 2.0, 4.0, 7.0])
    vals = np.array([[0.0, 2.0, 2.5], [7.0, 8.0, 4.0]])
    side = "right" if right else "left"
    got = fg.searchsorted(fg.tensor(seq), fg.tensor(vals), right=right)
    assert got.dtype == fg.int64
    np.testing.assert_array_equal(got.numpy(), np.searchsorted(seq, vals, side=side))
    np.testing.assert_array_equal(
        fg.searchsorted(fg.tensor(seq), fg.tensor(vals), side=side).numpy(), got.numpy()
    )
    np.testing.assert_array_equal(
        fg.bucketize(fg.tensor(vals), fg.tensor(seq), right=right).numpy(), got.numpy()
    )
    assert fg.searchsorted(fg.tensor(seq), 2.0, right=right).item() == np.searchsorted(seq, 2.0, side=side)
    rows = np.array([[1.0, 3.0, 5.0], [0.0, 0.5, 9.0]])
    v = np.array([[3.0, 6.0], [0.5, -1.0]])
    got2 = fg.searchsorted(fg.tensor(rows), fg.tensor(v), right=right).numpy()
    np.testing.assert_array_equal(got2, [np.searchsorted(r, x, side=side) for r, x in zip(rows, v)])
    if has_torch:
        np.testing.assert_array_equal(
            got2, torch.searchsorted(torch.tensor(rows), torch.tensor(v), right=right).numpy()
        )


def test_searchsorted_errors():
    _raises(
        lambda T: T.searchsorted(T.tensor([[1, 2], [3, 4]]), T.tensor([1, 2, 3])),
        RuntimeError,
        "boundaries tensor should be 1 dimension or the first N-1 dimensions",
    )
    _raises(
        lambda T: T.searchsorted(T.tensor([1, 2]), T.tensor([1]), side="middle"),
        RuntimeError,
        "side can only be 'left' or 'right'",
    )


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_int64_matches_numpy(include_self):
    x = np.array([5, 1, 4, -3])
    src = np.array([2, 3, -1, 7, 6])
    idx = np.array([0, 0, 2, 0, 3])
    touched = np.isin(np.arange(4), idx)
    for reduce, ufunc, ident in [
        ("sum", np.add, 0),
        ("prod", np.multiply, 1),
        ("amax", np.maximum, np.iinfo(np.int64).min),
        ("amin", np.minimum, np.iinfo(np.int64).max),
    ]:
        expected = x.copy() if include_self else np.where(touched, ident, x)
        ufunc.at(expected, idx, src)
        got = fg.scatter_reduce(
            fg.tensor(x), 0, fg.tensor(idx), fg.tensor(src), reduce, include_self=include_self
        )
        assert got.dtype == fg.int64
        assert got.tolist() == expected.tolist(), reduce
    total = np.where(touched & (not include_self), 0, x)
    np.add.at(total, idx, src)
    count = np.bincount(idx, minlength=4) + (1 if include_self else 0)
    expected = np.where(count > 0, total // np.maximum(count, 1), x)
    got = fg.scatter_reduce(
        fg.tensor(x), 0, fg.tensor(idx), fg.tensor(src), "mean", include_self=include_self
    )
    assert got.tolist() == expected.tolist()


# PyTorch calls its index_reduce a beta and warns.
@pytest.mark.filterwarnings("ignore:index_reduce.. is in beta")
def test_index_reduce_matches_torch_with_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    base = rng.uniform(0.5, 2.0, (3, 4, 2))
    source = rng.uniform(0.5, 2.0, (3, 5, 2))
    index = [0, 2, 0, 3, 2]
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            results = []
            for T in (fg, torch):
                x = T.tensor(base, requires_grad=True)
                s = T.tensor(source, requires_grad=True)
                out = x.index_reduce(1, T.tensor(index), s, reduce, include_self=include_self)
                (out * T.tensor(np.arange(out.numel()).reshape(out.shape))).sum().backward()
                results.append([out.detach().numpy(), x.grad.numpy(), s.grad.numpy()])
            for ours, theirs in zip(*results):
                np.testing.assert_allclose(ours, theirs, rtol=1e-10, err_msg=f"{reduce} {include_self}")
    x = fg.ones(3, 2)
    assert x.index_reduce_(0, fg.tensor([2, 2]), fg.full((2, 2), 3.0), "prod") is x
    assert x.tolist() == [[1.0, 1.0], [1.0, 1.0], [9.0, 9.0]]
    with pytest.raises(
        RuntimeError, match="Expected reduce to be one of prod, mean, amax or amin but got sum"
    ):
        x.index_reduce(0, fg.tensor([0]), fg.ones(1, 2), "sum")

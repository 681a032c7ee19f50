"""Joining, splitting and reshaping functions: values and gradients against torch and NumPy,
float64 finite-difference checks, Tensor methods, and PyTorch's errors for bad arguments."""

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import check_op, has_torch, shapes, torch

RNG = np.random.default_rng(1234)


def rand(*shape):
    return RNG.standard_normal(shape)


def modules():
    return [fg] + ([torch] if has_torch else [])


def raises_like_torch(fn, kind, message):
    """``fn(T)`` raises ``kind`` whose message matches ``message`` exactly (as a literal) for
    ferrograd and, when installed, torch."""
    for T in modules():
        with pytest.raises(kind, match=re.escape(message)):
            fn(T)


def cat_all(T, outs):
    return T.cat([o.reshape(-1) for o in outs])


# ----------------------------------------------------------------------------- stacking


@pytest.mark.parametrize("name", ["hstack", "vstack", "row_stack", "dstack", "column_stack"])
@pytest.mark.parametrize(
    "shapes_",
    [[(), ()], [(3,), (2,)], [(3,), (3,)], [(2, 3), (2, 3)], [(2, 3, 1), (2, 3, 2)], [(0,), (3,)], [(4,)]],
)
def test_stacking_matches_numpy_and_torch(name, shapes_):
    arrs = [rand(*s) for s in shapes_]
    np_fn = getattr(np, name if name != "row_stack" else "vstack")
    try:
        expected = np_fn(arrs)
    except ValueError:
        for T in modules():
            with pytest.raises(RuntimeError):
                getattr(T, name)([T.tensor(a) for a in arrs])
        return
    out = check_op(lambda T, *xs: getattr(T, name)(list(xs)), *arrs)
    np.testing.assert_array_equal(out.detach().numpy(), expected)
    assert out.shape == expected.shape


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack", "column_stack"])
def test_stacking_float32_and_tuples(name):
    a, b = rand(2, 3).astype(np.float32), rand(2, 3).astype(np.float32)
    out = getattr(fg, name)((fg.tensor(a), fg.tensor(b)))
    assert out.dtype == fg.float32
    np.testing.assert_array_equal(out.numpy(), getattr(np, name)((a, b)))


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack", "column_stack"])
def test_stacking_needs_tensors(name):
    raises_like_torch(lambda T: getattr(T, name)([]), RuntimeError, f"{name} expects a non-empty TensorList")


def test_atleast_nd():
    for T in modules():
        s = T.tensor(1.5)
        v = T.arange(3.0)
        m = T.ones(2, 3)
        assert T.atleast_1d(s).shape == (1,)
        assert T.atleast_2d(s).shape == (1, 1)
        assert T.atleast_3d(s).shape == (1, 1, 1)
        assert T.atleast_2d(v).shape == (1, 3)
        assert T.atleast_3d(v).shape == (1, 3, 1)
        assert T.atleast_3d(m).shape == (2, 3, 1)
        assert T.atleast_1d(m) is m
        outs = T.atleast_2d(s, v)
        assert isinstance(outs, tuple) and [tuple(o.shape) for o in outs] == [(1, 1), (1, 3)]
        outs = T.atleast_3d([s, m])
        assert [tuple(o.shape) for o in outs] == [(1, 1, 1), (2, 3, 1)]
    check_op(lambda T, x: T.atleast_3d(x) * 2, rand(4))


# ----------------------------------------------------------------------------- splitting


@settings(max_examples=40, deadline=None)
@given(
    shape=shapes(min_dims=1, max_dims=3, max_side=7),
    data=st.data(),
)
def test_tensor_split_sections_and_indices(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = RNG.standard_normal(shape)
    if data.draw(st.booleans()):
        spec = data.draw(st.integers(1, 8))
        np_spec = spec
    else:
        spec = data.draw(st.lists(st.integers(-9, 9), max_size=4))
        np_spec = spec
    got = fg.tensor(x).tensor_split(spec, dim)
    expected = np.array_split(x, np_spec, axis=dim) if isinstance(spec, int) else None
    if expected is not None:
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g.numpy(), e)
    if has_torch:
        ref = torch.tensor(x).tensor_split(spec, dim)
        assert len(got) == len(ref)
        for g, r in zip(got, ref):
            assert tuple(g.shape) == tuple(r.shape)
            np.testing.assert_array_equal(g.numpy(), r.numpy())


def test_tensor_split_grads_and_tensor_specs():
    x = rand(7, 3)
    check_op(lambda T, a: cat_all(T, [p * (i + 1) for i, p in enumerate(T.tensor_split(a, 3))]), x)
    check_op(lambda T, a: cat_all(T, [p * (i + 1) for i, p in enumerate(a.tensor_split([1, 5], dim=0))]), x)
    for T in modules():
        t = T.tensor(x)
        assert [p.shape[0] for p in t.tensor_split(T.tensor(3))] == [3, 2, 2]
        assert [p.shape[0] for p in t.tensor_split(T.tensor([2, 4]))] == [2, 2, 3]


def test_tensor_split_errors():
    raises_like_torch(
        lambda T: T.ones(4).tensor_split(0), RuntimeError, "number of sections must be larger than 0, got 0"
    )
    raises_like_torch(
        lambda T: T.tensor_split(T.tensor(1.0), 2),
        RuntimeError,
        "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims",
    )
    raises_like_torch(
        lambda T: T.ones(4).tensor_split(T.tensor([1.0])),
        RuntimeError,
        "tensor_split expected tensor_indices_or_sections to have dtype of long, but got Float",
    )
    raises_like_torch(lambda T: T.ones(4).tensor_split(2, 3), IndexError, "Dimension out of range")


# ----------------------------------------------------------------------------- broadcasting


@settings(max_examples=40, deadline=None)
@given(st.lists(shapes(max_dims=4), min_size=0, max_size=4))
def test_broadcast_shapes_matches_numpy(shape_list):
    try:
        expected = np.broadcast_shapes(*shape_list)
    except ValueError:
        for T in modules():
            with pytest.raises(RuntimeError, match="Attempting to broadcast a dimension of length"):
                T.broadcast_shapes(*shape_list)
        return
    assert tuple(fg.broadcast_shapes(*shape_list)) == expected
    if has_torch:
        assert tuple(torch.broadcast_shapes(*shape_list)) == expected


def test_broadcast_shapes_accepts_ints_and_reports_like_torch():
    assert fg.broadcast_shapes(3, (2, 1)) == (2, 3)
    assert fg.broadcast_shapes() == ()
    raises_like_torch(
        lambda T: T.broadcast_shapes((2, 3), (5, 1)),
        RuntimeError,
        "Attempting to broadcast a dimension of length 5 at -2! Mismatching argument at index 1 had (5, 1); "
        "but expected shape should be broadcastable to [2, 3]",
    )
    raises_like_torch(
        lambda T: T.broadcast_shapes((-1,), (4,)),
        ValueError,
        "Attempting to broadcast a dimension with negative length!",
    )


def test_broadcast_to_and_tensors():
    x = rand(3, 1)
    check_op(lambda T, a: T.broadcast_to(a, (2, 3, 4)), x)
    check_op(lambda T, a: a.broadcast_to((2, -1, 4)), x)
    a, b, c = rand(3, 1), rand(4), rand()
    check_op(
        lambda T, *xs: T.stack(T.broadcast_tensors(*xs)) * T.tensor([1.0, 2.0, 3.0]).reshape(3, 1, 1), a, b, c
    )
    outs = fg.broadcast_tensors(fg.tensor(a), fg.tensor(b))
    assert all(o.shape == (3, 4) for o in outs)


def test_broadcast_errors():
    raises_like_torch(
        lambda T: T.broadcast_tensors(T.ones(3), T.ones(4)),
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0",
    )
    raises_like_torch(
        lambda T: T.broadcast_tensors(T.ones(2, 3), T.ones(5, 1)),
        RuntimeError,
        "The size of tensor a (2) must match the size of tensor b (5) at non-singleton dimension 0",
    )


# ----------------------------------------------------------------------------- repeating


@pytest.mark.parametrize(
    "shape,dims", [((2, 3), (2,)), ((2, 3), (2, 1, 2)), ((3,), (2, 2)), ((), (3,)), ((0, 2), (2, 2))]
)
def test_tile(shape, dims):
    x = rand(*shape)
    out = check_op(lambda T, a: T.tile(a, dims), x)
    np.testing.assert_array_equal(out.detach().numpy(), np.tile(x, dims))
    check_op(lambda T, a: a.tile(dims), x)


@pytest.mark.parametrize(
    "shape,repeats,dim",
    [
        ((2, 3), 2, None),
        ((2, 3), 3, 1),
        ((2, 3), 0, 0),
        ((4,), [1, 0, 2, 3], 0),
        ((2, 3), [2, 1], 0),
        ((3, 2), [0, 0, 1], -2),
        ((), 3, None),
    ],
)
def test_repeat_interleave(shape, repeats, dim):
    x = rand(*shape)

    def fn(T, a):
        r = T.tensor(repeats) if isinstance(repeats, list) else repeats
        return T.repeat_interleave(a, r, dim)

    out = check_op(fn, x)
    np.testing.assert_array_equal(out.detach().numpy(), np.repeat(x, repeats, axis=dim))
    check_op(
        lambda T, a: a.repeat_interleave(
            T.tensor(repeats) if isinstance(repeats, list) else repeats, dim=dim
        ),
        x,
    )


def test_repeat_interleave_counts_form_and_errors():
    for T in modules():
        np.testing.assert_array_equal(T.repeat_interleave(T.tensor([2, 0, 3])).numpy(), [0, 0, 2, 2, 2])
    raises_like_torch(lambda T: T.ones(3).repeat_interleave(-1), RuntimeError, "Repeats must be non-negative")
    raises_like_torch(
        lambda T: T.ones(3).repeat_interleave(T.tensor([1, -1, 1])),
        RuntimeError,
        "repeats can not be negative",
    )
    raises_like_torch(
        lambda T: T.ones(3).repeat_interleave(T.tensor([[1]])),
        RuntimeError,
        "repeats must be 0-dim or 1-dim tensor",
    )
    raises_like_torch(
        lambda T: T.ones(3).repeat_interleave(T.tensor([1, 2]), dim=0),
        RuntimeError,
        "repeats must have the same size as input along dim, but got repeats.size(0) = 2 and input.size(0) = 3",
    )


# ----------------------------------------------------------------------------- reshaping


def test_unflatten():
    x = rand(2, 12)
    for sizes in [(3, 4), (-1, 2), (2, 3, 2), (12,)]:
        out = check_op(lambda T, a, sizes=sizes: T.unflatten(a, 1, sizes), x)
        assert out.shape == np.empty((2, 12)).reshape(2, *sizes).shape
    check_op(lambda T, a: a.unflatten(-2, (1, 2)), x)
    raises_like_torch(
        lambda T: T.ones(2, 12).unflatten(1, (5, 2)),
        RuntimeError,
        "unflatten: Provided sizes [5, 2] don't multiply up to the size of dim 1 (12) in the input tensor",
    )
    raises_like_torch(
        lambda T: T.ones(2, 12).unflatten(1, ()), RuntimeError, "unflatten: sizes must be non-empty"
    )


@pytest.mark.parametrize("k", [-5, -1, 0, 1, 2, 3, 4, 6])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (-1, 0), (1, 2)])
def test_rot90(k, dims):
    x = rand(2, 3, 4)
    out = check_op(lambda T, a: T.rot90(a, k, dims), x)
    np.testing.assert_array_equal(out.detach().numpy(), np.rot90(x, k, dims))
    check_op(lambda T, a: a.rot90(k, dims), x)


def test_rot90_errors():
    raises_like_torch(
        lambda T: T.ones(2, 2).rot90(1, [0]),
        RuntimeError,
        "expected total rotation dims == 2, but got dims = 1",
    )
    raises_like_torch(
        lambda T: T.ones(2).rot90(1, [0, 1]), RuntimeError, "expected total dims >= 2, but got total dims = 1"
    )
    raises_like_torch(
        lambda T: T.ones(2, 2).rot90(1, [1, 1]),
        RuntimeError,
        "expected rotation dims to be different, but got dim0 = 1 and dim1 = 1",
    )


def test_flips():
    x = rand(2, 3, 2)
    np.testing.assert_array_equal(check_op(lambda T, a: T.fliplr(a), x).detach().numpy(), np.fliplr(x))
    np.testing.assert_array_equal(check_op(lambda T, a: a.flipud(), x).detach().numpy(), np.flipud(x))
    raises_like_torch(lambda T: T.fliplr(T.ones(3)), RuntimeError, "Input must be >= 2-d.")
    raises_like_torch(lambda T: T.flipud(T.tensor(1.0)), RuntimeError, "Input must be >= 1-d.")


# ----------------------------------------------------------------------------- block_diag, grids, products


def test_block_diag():
    a, b, c, d = rand(2, 3), rand(3), rand(), rand(0, 2)
    out = check_op(lambda T, *xs: T.block_diag(*xs), a, b, c, d)
    expected = np.zeros((2 + 1 + 1 + 0, 3 + 3 + 1 + 2))
    expected[:2, :3] = a
    expected[2, 3:6] = b
    expected[3, 6] = c
    np.testing.assert_array_equal(out.detach().numpy(), expected)
    mixed = fg.block_diag(fg.ones(1, 1, dtype=fg.int64), fg.ones(1, 1))
    assert mixed.dtype == fg.float32
    raises_like_torch(
        lambda T: T.block_diag(T.ones(2), T.ones(1, 1, 1)),
        RuntimeError,
        "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 1 has 3 dimensions",
    )


@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("sizes", [(3,), (2, 3), (2, 3, 4), (0, 2), (1, 4, 2, 3)])
def test_meshgrid(indexing, sizes):
    xs = [rand(s) for s in sizes]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fg.meshgrid(*[fg.tensor(x) for x in xs], indexing=indexing)
    expected = np.meshgrid(*xs, indexing=indexing)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g.numpy(), e)
    check_op(lambda T, *ts: T.stack(T.meshgrid(*ts, indexing=indexing)).sin().sum(0), *xs)


def test_meshgrid_warns_without_indexing_and_takes_scalars():
    for T in modules():
        with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
            a, b = T.meshgrid(T.arange(2), T.arange(3))
        assert a.shape == (2, 3)
        a, b = T.meshgrid([T.tensor(1.0), T.arange(3.0)], indexing="xy")
        assert a.shape == (3, 1)
    raises_like_torch(
        lambda T: T.meshgrid(T.ones(2), indexing="ab"),
        RuntimeError,
        'torch.meshgrid: indexing must be one of "xy" or "ij", but received: ab',
    )
    raises_like_torch(
        lambda T: T.meshgrid(T.ones(2, 2), indexing="ij"),
        RuntimeError,
        "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: ",
    )


def test_cartesian_prod():
    a, b, c = rand(2), rand(3), rand(2)
    out = check_op(lambda T, *xs: T.cartesian_prod(*xs), a, b, c)
    expected = np.array(list(__import__("itertools").product(a, b, c)))
    np.testing.assert_array_equal(out.detach().numpy(), expected)
    check_op(lambda T, x: T.cartesian_prod(x), a)
    raises_like_torch(
        lambda T: T.cartesian_prod(T.ones(2, 2)), RuntimeError, "Expect a 1D vector, but got shape [2, 2]"
    )


@pytest.mark.parametrize(
    "row,col,offset", [(3, 3, 0), (4, 3, 1), (3, 5, -1), (0, 3, 0), (3, 0, 2), (1, 1, -4), (5, 2, 7)]
)
def test_tri_indices(row, col, offset):
    for name, np_fn in (("tril_indices", np.tril_indices), ("triu_indices", np.triu_indices)):
        got = getattr(fg, name)(row, col, offset)
        assert got.dtype == fg.int64
        np.testing.assert_array_equal(got.numpy(), np.stack(np_fn(row, offset, col)).reshape(2, -1))
        if has_torch:
            np.testing.assert_array_equal(got.numpy(), getattr(torch, name)(row, col, offset).numpy())
    raises_like_torch(lambda T: T.tril_indices(-1, 3), RuntimeError, "row must be non-negative, got-1")
    raises_like_torch(
        lambda T: T.tril_indices(3, 3, dtype=T.float64),
        NotImplementedError,
        "\"tril_indices\" not implemented for 'Double'",
    )
    raises_like_torch(lambda T: T.triu_indices(3, -2), RuntimeError, "col must be non-negative, got-2")


@pytest.mark.parametrize("n", [0, 1, 3, 4])
@pytest.mark.parametrize("r", [1, 2, 3])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations(n, r, with_replacement):
    x = rand(n)
    import itertools

    make = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    expected = np.array(list(make(x, r)))
    got = fg.combinations(fg.tensor(x), r, with_replacement)
    if expected.size:
        np.testing.assert_array_equal(got.numpy(), expected.reshape(got.shape))
    else:
        assert got.numel() == 0
    if has_torch:
        ref = torch.combinations(torch.tensor(x), r, with_replacement)
        assert tuple(got.shape) == tuple(ref.shape)
    if expected.size:
        check_op(lambda T, a: T.combinations(a, r, with_replacement) * 1.5, x)


def test_combinations_errors():
    raises_like_torch(
        lambda T: T.combinations(T.ones(2, 2)), RuntimeError, "Expect a 1D vector, but got shape [2, 2]"
    )
    raises_like_torch(
        lambda T: T.combinations(T.ones(3), -1), RuntimeError, "Expect a non-negative number, but got -1"
    )

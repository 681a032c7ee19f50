"""Indexing and joining: values, views, gradients (finite differences and torch) and errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import arrays, check_op, has_torch, shapes

A = np.arange(24.0).reshape(2, 3, 4) / 7.0

KEYS = [
    0,
    -1,
    (1, 2),
    slice(1, None),
    (slice(None), 1),
    (Ellipsis, 2),
    (None, 0),
    (0, None, slice(None, None, 2)),
    (slice(-2, 10, 2), slice(None, -1)),
    [1, 0, 1],
    ([0, 1], [2, 0]),
    (slice(None), [0, 2], [1, 3]),
    ([0, 1], slice(None), [1, 3]),
    (1, [0, 2], slice(1, 3)),
    (Ellipsis, [0, 3, 3]),
    (np.array([1, 0]),),
    ([[0], [1]], [[0, 1, 2]]),
    True,
    False,
    (),
]


def convert(T, key):
    def one(k):
        return T.tensor(k) if isinstance(k, np.ndarray) else k

    return tuple(one(k) for k in key) if isinstance(key, tuple) else one(key)


@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_getitem_matches_torch_with_grads(key):
    check_op(lambda T, x: x[convert(T, key)] * 1.0, A)


def test_masks_and_repeated_indices_accumulate():
    mask = A > 1.5
    check_op(lambda T, x: x[T.tensor(mask)], A)
    check_op(lambda T, x: x[T.tensor(mask[1, :, 0]), 1:], A[0].copy())
    check_op(lambda T, x: x[[0, 0, 1, 0]] ** 2, A[:, 0, :].copy())
    check_op(lambda T, x: x[:, T.tensor(mask[0, :, 0])], A)
    x = fg.tensor(np.ones(3), requires_grad=True)
    x[fg.tensor([0, 0, 2])].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2, 0, 1])


def test_double_backward_through_index():
    x = fg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x[[0, 0, 2]] ** 3).sum()
    (g,) = fg.autograd.grad(y, x, create_graph=True)
    (gg,) = fg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [12.0, 0.0, 18.0])


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_one_index_tensor_gathers_along_its_dim(dim):
    """`x[..., idx]` and `index_select` by one 1-d index: values of every dtype (signed zeros
    kept) on strided inputs, and the gradient adding repeated picks, against numpy. Negative
    indices count from the end in `x[..., idx]`; `index_select` takes them wrapped (it refuses
    negative ones, as torch does)."""
    rng = np.random.default_rng(dim)
    a = rng.standard_normal((40, 50, 60))
    a[0, 0, :] = -0.0
    idx = np.array([3, -1, 0, 3, 7, 3, -2] * 5)
    key = (slice(None),) * dim + (idx,)
    want = a[key]
    wrapped = fg.tensor(idx % a.shape[dim])
    for dtype in (fg.float32, fg.float64, fg.int64, fg.bool, fg.complex64):
        x = fg.tensor(a, dtype=dtype)
        expected = fg.tensor(want, dtype=dtype).numpy()
        got = x[(slice(None),) * dim + (fg.tensor(idx),)].numpy()
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(np.signbit(got.real), np.signbit(expected.real))
        np.testing.assert_array_equal(x.index_select(dim, wrapped).numpy(), expected)
    # A transposed (strided) source.
    xt = fg.tensor(a.transpose(2, 1, 0).copy()).permute(2, 1, 0)
    np.testing.assert_array_equal(xt.index_select(dim, wrapped).numpy(), want)
    x = fg.tensor(a, requires_grad=True)
    g = rng.standard_normal(want.shape)
    x.index_select(dim, wrapped).backward(fg.tensor(g))
    expected_grad = np.zeros_like(a)
    np.add.at(expected_grad, key, g)
    np.testing.assert_allclose(x.grad.numpy(), expected_grad, rtol=1e-12, atol=1e-12)
    with pytest.raises(IndexError, match=f"index 60 is out of bounds for dimension {dim}"):
        x[(slice(None),) * dim + (fg.tensor([0, 60]),)]


def test_basic_indexing_returns_views():
    x = fg.tensor(A.copy())
    v = x[1, :, ::2]
    x[1, 0, 0] = 100.0
    assert v[0, 0].item() == 100.0
    c = x[[1]]
    x[1, 0, 0] = -1.0
    assert c[0, 0, 0].item() == 100.0  # advanced indexing copies


def test_setitem_forms():
    a = A.copy()
    x = fg.tensor(A.copy())
    x[0] = 5.0
    a[0] = 5.0
    x[:, 1] = fg.tensor([1.0, 2.0, 3.0, 4.0])
    a[:, 1] = [1.0, 2.0, 3.0, 4.0]
    x[x > 20] = 0.0
    a[a > 20] = 0.0
    # PyTorch's index_put_ takes values only in the tensor's own dtype (float64 here)
    x[[0, 1], [2, 2]] = fg.tensor([[7.0], [8.0]], dtype=x.dtype)
    a[[0, 1], [2, 2]] = [[7.0], [8.0]]
    np.testing.assert_allclose(x.numpy(), a)
    v0 = x._version
    x[0, 0, 0] = 1
    assert x._version > v0
    w = fg.zeros(3)
    w.index_put_((fg.tensor([0, 0]),), fg.tensor([1.0, 2.0]), accumulate=True)
    np.testing.assert_array_equal(w.numpy(), [3, 0, 0])


def test_setitem_autograd_rules():
    leaf = fg.ones(3, requires_grad=True)
    with pytest.raises(
        RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."
    ):
        leaf[0] = 2.0
    with fg.no_grad():
        leaf[0] = 2.0
    assert leaf[0].item() == 2.0


@pytest.mark.parametrize(
    "fn, exc, msg",
    [
        (lambda: fg.zeros(3)[5], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
        (lambda: fg.zeros(2, 3)[0, 3], IndexError, "index 3 is out of bounds for dimension 1 with size 3"),
        (lambda: fg.zeros(3)[0, 0], IndexError, "too many indices for tensor of dimension 1"),
        (lambda: fg.zeros(3)[::-1], ValueError, "step must be greater than zero"),
        (lambda: fg.zeros(3)[[0, 5]], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
        (
            lambda: fg.zeros(4)[fg.tensor([True, False, True])],
            IndexError,
            r"The shape of the mask \[3\] at index 0 does not match the shape of the indexed tensor \[4\] at index 0",
        ),
        (
            lambda: fg.zeros(3)[fg.tensor([0.5])],
            IndexError,
            "tensors used as indices must be long, int, byte or bool tensors",
        ),
        (
            lambda: fg.zeros(3, 3)[[0, 1], [0, 1, 2]],
            IndexError,
            "shape mismatch: indexing tensors could not be broadcast together",
        ),
    ],
)
def test_index_errors(fn, exc, msg):
    with pytest.raises(exc, match=msg):
        fn()


@settings(max_examples=20, deadline=None)
@given(shape=shapes(min_dims=1, max_dims=3), data=st.data())
def test_cat_stack(shape, data):
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    extra = list(shape)
    extra[d] = data.draw(st.integers(0, 3))
    a, b = data.draw(arrays(shape)), data.draw(arrays(tuple(extra)))
    check_op(lambda T, x, y: T.cat([x, y, x], d), a, b)
    s = data.draw(st.integers(-len(shape) - 1, len(shape)))
    check_op(lambda T, x, y: T.stack((x, y * 2), dim=s), a, a + 1)


def test_cat_skips_empty_vectors_and_names():
    x = fg.ones(2, 3, requires_grad=True)
    out = fg.cat([x, fg.zeros(0), x])
    assert out.shape == (4, 3) and out.grad_fn.name() == "CatBackward0"
    assert fg.stack([x, x]).grad_fn.name() == "StackBackward0"
    with pytest.raises(
        RuntimeError,
        match="Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for tensor number 1 in the list.",
    ):
        fg.cat([fg.ones(2, 3), fg.ones(2, 2)])
    with pytest.raises(
        RuntimeError, match=r"zero-dimensional tensor \(at position 0\) cannot be concatenated"
    ):
        fg.cat([fg.tensor(1.0)])
    with pytest.raises(
        RuntimeError,
        match=r"stack expects each tensor to be equal size, but got \[2\] at entry 0 and \[3\] at entry 1",
    ):
        fg.stack([fg.ones(2), fg.ones(3)])


@settings(max_examples=20, deadline=None)
@given(shape=shapes(min_dims=1, max_dims=3, min_side=1), data=st.data())
def test_split_chunk_unbind(shape, data):
    a = data.draw(arrays(shape))
    d = data.draw(st.integers(0, len(shape) - 1))
    size = data.draw(st.integers(1, 3))
    check_op(lambda T, x: T.cat([p * (i + 1) for i, p in enumerate(x.split(size, d))], d), a)
    # Only some pieces used: the others' gradients are zeros.
    check_op(lambda T, x: x.chunk(2, d)[0] * 3, a)
    check_op(lambda T, x: x.unbind(d)[-1] * 2, a)
    check_op(lambda T, x: T.stack(x.unbind(d), d), a)


def test_split_views_and_names():
    x = fg.tensor(np.arange(6.0), requires_grad=True)
    parts = x.split([1, 5])
    assert [p.shape for p in parts] == [(1,), (5,)]
    assert parts[0].grad_fn.name() == "SplitWithSizesBackward0"
    assert x.split(4)[1].grad_fn.name() == "SplitBackward0"
    assert x.unbind()[0].grad_fn.name() == "UnbindBackward0"


@settings(max_examples=20, deadline=None)
@given(shape=shapes(min_dims=1, max_dims=3, min_side=1), data=st.data())
def test_index_select_gather_masked_fill(shape, data):
    a = data.draw(arrays(shape))
    d = data.draw(st.integers(0, len(shape) - 1))
    idx = np.array(data.draw(st.lists(st.integers(0, shape[d] - 1), max_size=4)), dtype=np.int64)
    check_op(lambda T, x: x.index_select(d, T.tensor(idx, dtype=T.int64)), a)
    gshape = list(shape)
    gshape[d] = data.draw(st.integers(0, 3))
    gidx = np.array(data.draw(arrays(tuple(gshape), low=0, high=shape[d] - 1)), dtype=np.int64)
    check_op(lambda T, x: T.gather(x, d, T.tensor(gidx)), a)
    mask = a > 0
    check_op(lambda T, x: x.masked_fill(T.tensor(mask), -2.0), a)


@pytest.mark.skipif(not has_torch, reason="needs torch")
def test_numpy_and_tensor_keys_mixed():
    import torch

    idx = np.array([1, 0])
    x, t = fg.tensor(A), torch.tensor(A)
    np.testing.assert_array_equal(x[idx, fg.tensor(1)].numpy(), t[idx, torch.tensor(1)].numpy())


@settings(max_examples=20, deadline=None)
@given(shape=shapes(min_dims=2, max_dims=3), data=st.data())
def test_flip_tril_triu_repeat_movedim(shape, data):
    a = data.draw(arrays(shape))
    n = len(shape)
    dims = data.draw(st.lists(st.integers(-n, n - 1), unique_by=lambda d: d % n, max_size=n))
    check_op(lambda T, x: T.flip(x, dims), a)
    k = data.draw(st.integers(-2, 2))
    check_op(lambda T, x: x.tril(k) + T.triu(x, k) * 2, a)
    reps = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n + 1))
    check_op(lambda T, x: x.repeat(*reps), a)
    src, dst = data.draw(st.integers(0, n - 1)), data.draw(st.integers(-n, n - 1))
    check_op(lambda T, x: T.movedim(x, src, dst) * 1.0, a)


@settings(max_examples=30, deadline=None)
@given(shape=shapes(min_dims=2, max_dims=4), k=st.integers(-7, 7), data=st.data())
def test_tril_triu_match_numpy_for_every_dtype(shape, k, data):
    dtype = data.draw(st.sampled_from(["float32", "float64", "int64", "bool", "complex64"]))
    a = data.draw(arrays(shape)).astype(dtype)
    # A strided source (a transposed view) goes through the same kernel.
    x = fg.tensor(a).transpose(-1, -2)
    view = np.swapaxes(a, -1, -2)
    np.testing.assert_array_equal(x.tril(k).numpy(), np.tril(view, k))
    np.testing.assert_array_equal(fg.triu(x, k).numpy(), np.triu(view, k))


@pytest.mark.parametrize("args", [((),), ([], [])], ids=["no-shifts", "no-shifts-no-dims"])
def test_roll_requires_shifts(args):
    modules = [fg]
    if has_torch:
        import torch

        modules.append(torch)
    for T in modules:
        with pytest.raises(RuntimeError, match="`shifts` required"):
            T.roll(T.ones(3), *args)


@settings(max_examples=30, deadline=None)
@given(shape=shapes(min_dims=0, max_dims=3), data=st.data())
def test_roll_matches_numpy_and_its_gradient_rolls_back(shape, data):
    a = data.draw(arrays(shape))
    n = max(len(shape), 1)
    dims = data.draw(st.lists(st.integers(-n, n - 1), max_size=3))
    shifts = data.draw(st.lists(st.integers(-6, 6), min_size=len(dims), max_size=len(dims)))
    if not dims:
        # One shift without dims rolls the flattened tensor.
        shift = data.draw(st.integers(-6, 6))
        got = fg.tensor(a).roll(shift)
        np.testing.assert_array_equal(got.numpy(), np.roll(a, shift))
        check_op(lambda T, x: T.roll(x, shift), a)
        return
    x = fg.tensor(a)
    if not shape:
        with pytest.raises(IndexError, match="but tensor has no dimensions"):
            x.roll(tuple(shifts), tuple(dims))
        return
    np.testing.assert_array_equal(
        x.roll(tuple(shifts), tuple(dims)).numpy(), np.roll(a, shifts, [d % n for d in dims])
    )
    check_op(lambda T, x: T.roll(x, tuple(shifts), tuple(dims)), a)


def test_roll_copies_and_checks_its_arguments():
    x = fg.arange(6.0).reshape(2, 3)
    y = x.roll(3, 1)  # a whole turn: nothing moves, still a new tensor
    y.add_(1)
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(2, 3))
    with pytest.raises(RuntimeError, match="shifts and dimensions must align. shifts: 2, dims:1"):
        x.roll((1, 2), 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.roll(1, 2)


@settings(max_examples=30, deadline=None)
@given(shape=shapes(min_dims=0, max_dims=3), data=st.data())
def test_cumsum_matches_numpy_with_a_gradient_summed_from_the_other_end(shape, data):
    a = data.draw(arrays(shape))
    n = max(len(shape), 1)
    dim = data.draw(st.integers(-n, n - 1))
    expected = np.cumsum(a, axis=dim % n) if shape else a
    np.testing.assert_allclose(fg.tensor(a).cumsum(dim).numpy(), expected, rtol=1e-12)
    check_op(lambda T, x: T.cumsum(x, dim) * T.cumsum(x * x, dim), a)
    if shape and a.size:
        x = fg.tensor(a, requires_grad=True)
        assert x.cumsum(dim).grad_fn.name() == "CumsumBackward0"
        assert fg.autograd.gradgradcheck(lambda x: (x.cumsum(dim) ** 2).cumsum(0), (x,))


def test_cumsum_of_integers_and_bools_is_int64_unless_told():
    b = fg.tensor([True, False, True, True])
    assert b.cumsum(0).dtype == fg.int64
    np.testing.assert_array_equal(b.cumsum(0).numpy(), [1, 1, 2, 3])
    assert fg.tensor([1, 2, 3]).cumsum(0, dtype=fg.float64).dtype == fg.float64
    assert fg.tensor([1.0, 2.0]).cumsum(0).dtype == fg.float32
    # A large scan spreads blocks over the pool and still matches.
    big = np.random.default_rng(0).standard_normal((64, 3000))
    np.testing.assert_allclose(fg.tensor(big).cumsum(1).numpy(), np.cumsum(big, 1), rtol=1e-10)
    np.testing.assert_allclose(fg.tensor(big).cumsum(0).numpy(), np.cumsum(big, 0), rtol=1e-10)
    with pytest.raises(IndexError, match="Dimension out of range"):
        fg.tensor([1.0]).cumsum(1)


def test_gather_with_a_0d_index_picks_that_element():
    x = fg.tensor([5.0, 6.0, 7.0], requires_grad=True)
    y = fg.gather(x, 0, fg.tensor(2))
    assert y.item() == 7.0
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 1.0])
    # A flipped (negative-stride) source places its elements from the end.
    np.testing.assert_array_equal(
        fg.tensor(A).flip(2).gather(2, fg.tensor([[[0, 3]]])).numpy(), A[:1, :1, [3, 0]]
    )


def test_index_put_into_an_empty_selection_writes_nothing():
    t = fg.zeros(2, 0, 2)
    version = t._version
    t[fg.tensor([0, 1])] = 1.0
    assert tuple(t.shape) == (2, 0, 2) and t._version == version + 1
    base = fg.ones(3, 2)
    view = base[:, :0]
    view[fg.tensor([0, 2])] = fg.tensor(2.0)
    assert base.tolist() == [[1.0, 1.0]] * 3

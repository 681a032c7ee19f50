"""Reductions: values and gradients against finite differences and torch, tie handling, errors."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import arrays, check_op, shapes


def distinct(a):
    """Finite differences need the extreme to be unique (no ties within 1e-3)."""
    flat = np.sort(a.reshape(-1))
    return flat.size < 2 or np.min(np.diff(flat)) > 1e-3


@st.composite
def array_and_dim(draw, min_side=1):
    shape = draw(shapes(min_dims=1, min_side=min_side))
    a = draw(arrays(shape))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    return a, dim, draw(st.booleans())


SMOOTH = {
    "softmax": lambda T, x, d, k: T.softmax(x, d),
    "log_softmax": lambda T, x, d, k: x.log_softmax(d),
    "logsumexp": lambda T, x, d, k: x.logsumexp(d, keepdim=k),
    "var": lambda T, x, d, k: x.var(d, keepdim=k),
    "std": lambda T, x, d, k: (x * x + 1).std(d, keepdim=k),
    "var_biased": lambda T, x, d, k: x.var(d, unbiased=False, keepdim=k),
    "norm": lambda T, x, d, k: (x * x + 0.5).norm(dim=d, keepdim=k),
}


@pytest.mark.parametrize("name", sorted(SMOOTH))
@settings(max_examples=20, deadline=None)
@given(case=array_and_dim(min_side=2))
def test_smooth_reductions(name, case):
    a, d, k = case
    if name == "std":
        # std's gradient is undefined at zero spread: make x * x distinct
        # along every dim (positive, increasing by more than a varies).
        a = 0.1 + np.arange(a.size).reshape(a.shape) * 0.1 + 0.01 * np.tanh(a)
    check_op(lambda T, x: SMOOTH[name](T, x, d, k), a, fd_atol=1e-4)


@settings(max_examples=20, deadline=None)
@given(case=array_and_dim(min_side=0))
def test_softmax_family_on_empty_and_0d(case):
    a, d, _ = case
    check_op(lambda T, x: T.softmax(x, d) + x.log_softmax(d), a)
    check_op(lambda T, x: T.softmax(x, 0) * x.log_softmax(-1), np.array(1.5))


EXTREMES = {
    "amax": lambda T, x, d, k: x.amax(d, keepdim=k),
    "amin": lambda T, x, d, k: T.amin(x, d, keepdim=k),
    "max_dim": lambda T, x, d, k: x.max(d, keepdim=k).values,
    "min_dim": lambda T, x, d, k: T.min(x, dim=d, keepdim=k)[0],
    "max_all": lambda T, x, d, k: x.max(),
    "min_all": lambda T, x, d, k: T.min(x),
}


@pytest.mark.parametrize("name", sorted(EXTREMES))
@settings(max_examples=20, deadline=None)
@given(case=array_and_dim())
def test_extremes(name, case):
    a, d, k = case
    assume(distinct(a))
    check_op(lambda T, x: EXTREMES[name](T, x, d, k), a)


@settings(max_examples=20, deadline=None)
@given(case=array_and_dim())
def test_arg_extremes_match_numpy(case):
    a, d, k = case
    x = fg.tensor(a)
    np.testing.assert_array_equal(x.argmax(d, keepdim=k).numpy(), np.argmax(a, axis=d, keepdims=k))
    np.testing.assert_array_equal(fg.argmin(x, d).numpy(), np.argmin(a, axis=d))
    assert x.argmax().item() == np.argmax(a)
    r = x.max(d, keepdim=k)
    np.testing.assert_array_equal(r.indices.numpy(), np.argmax(a, axis=d, keepdims=k))
    np.testing.assert_array_equal(r.values.numpy(), np.max(a, axis=d, keepdims=k))


@settings(max_examples=20, deadline=None)
@given(a=shapes().flatmap(lambda s: arrays(s, low=-1, high=1)), data=st.data())
def test_all_any(a, data):
    a = np.round(a)
    x = fg.tensor(a)
    assert x.all().dtype == fg.bool
    assert x.all().item() == np.all(a) and fg.any(x).item() == np.any(a)
    if a.ndim:
        d = data.draw(st.integers(0, a.ndim - 1))
        np.testing.assert_array_equal(x.any(d).numpy(), np.any(a, axis=d))
        np.testing.assert_array_equal(x.all(d, keepdim=True).numpy(), np.all(a, axis=d, keepdims=True))


def test_ties_split_gradient_like_torch():
    x = fg.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], requires_grad=True)
    x.amax(1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0.5, 0.5], [0.5, 0.5, 0]])
    y = fg.tensor([3.0, 1.0, 3.0], requires_grad=True)
    y.max().backward()
    np.testing.assert_allclose(y.grad.numpy(), [0.5, 0, 0.5])
    z = fg.tensor([3.0, 1.0, 3.0], requires_grad=True)
    z.max(0).values.backward()
    np.testing.assert_allclose(z.grad.numpy(), [1, 0, 0])
    assert z.max(0).values.grad_fn.name() == "MaxBackward0"
    assert z.max().grad_fn.name() == "MaxBackward1"


def test_softmax_is_stable_and_double_differentiable():
    x = fg.tensor([1000.0, 0.0, -1000.0], dtype=fg.float64, requires_grad=True)
    np.testing.assert_allclose(x.softmax(0).detach().numpy(), [1, 0, 0])
    np.testing.assert_allclose(x.log_softmax(0).detach().numpy(), [0, -1000, -2000])
    y = fg.tensor([0.1, 0.5, -0.3], dtype=fg.float64, requires_grad=True)
    (g,) = fg.autograd.grad((y.softmax(0) ** 2).sum(), y, create_graph=True)
    (gg,) = fg.autograd.grad(g.sum(), y)
    assert np.all(np.isfinite(gg.numpy()))
    assert fg.softmax(fg.tensor([1, 2]), 0, dtype=fg.float64).dtype == fg.float64


def test_max_with_tensor_is_maximum():
    a, b = fg.tensor([1.0, 5.0]), fg.tensor([3.0, 2.0])
    np.testing.assert_array_equal(a.max(b).numpy(), [3, 5])
    np.testing.assert_array_equal(fg.min(a, b).numpy(), [1, 2])


@pytest.mark.parametrize(
    "fn, exc, msg",
    [
        (
            lambda: fg.zeros(0, 3).max(),
            RuntimeError,
            r"max\(\): Expected reduction dim to be specified for input.numel\(\) == 0. Specify the reduction dim with the 'dim' argument.",
        ),
        (
            lambda: fg.zeros(0, 3).max(0),
            IndexError,
            r"max\(\): Expected reduction dim 0 to have non-zero size.",
        ),
        (
            lambda: fg.zeros(0, 3).amax(0),
            IndexError,
            r"amax\(\): Expected reduction dim 0 to have non-zero size.",
        ),
        (
            lambda: fg.zeros(0, 3).argmax(),
            IndexError,
            r"argmax\(\): Expected reduction dim to be specified for input.numel\(\) == 0.",
        ),
        (lambda: fg.zeros(0, 3).min(), RuntimeError, r"min\(\): Expected reduction dim to be specified"),
        (
            lambda: fg.tensor([1, 2]).softmax(0),
            RuntimeError,
            "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'",
        ),
        (
            lambda: fg.tensor([1, 2]).var(),
            RuntimeError,
            "std and var only support floating point and complex dtypes",
        ),
        (
            lambda: fg.ones(2, 3).max(2),
            IndexError,
            r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
        ),
    ],
)
def test_errors(fn, exc, msg):
    with pytest.raises(exc, match=msg):
        fn()


def test_empty_reductions_over_nonempty_dims():
    x = fg.zeros(0, 3)
    assert x.amax(1).shape == (0,)
    assert x.max(1).values.shape == (0,)
    assert x.logsumexp(0).numpy().tolist() == [-np.inf] * 3


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=4),
    data=st.data(),
)
def test_sums_over_any_dims_of_permuted_tensors(shape, data):
    """Sums of a tensor whose dims are stored in another order (transposes,
    permutes) agree with numpy whichever dims are reduced."""
    a = np.random.default_rng(len(shape)).standard_normal(shape)
    order = data.draw(st.permutations(range(len(shape))))
    dims = data.draw(st.lists(st.sampled_from(range(len(shape))), unique=True, min_size=1))
    keepdim = data.draw(st.booleans())
    x = fg.tensor(a).permute(*order)
    want = a.transpose(order).sum(tuple(dims), keepdims=keepdim)
    np.testing.assert_allclose(x.sum(dims, keepdim=keepdim).numpy(), want, rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=3, max_size=5).map(tuple),
    op=st.sampled_from(["sum", "mean", "amax", "amin"]),
    data=st.data(),
)
def test_reducing_a_middle_block_of_dims(shape, op, data):
    # Consecutive reduced dims with kept dims on both sides: the kernel that
    # folds whole rows of the trailing dims.
    first = data.draw(st.integers(1, len(shape) - 2))
    last = data.draw(st.integers(first, len(shape) - 2))
    dims = tuple(range(first, last + 1))
    keepdim = data.draw(st.booleans())
    a = data.draw(arrays(shape, low=-2.0, high=2.0))
    if op in ("amax", "amin"):
        # Ties split the gradient, where finite differences are undefined.
        assume(a.size == 1 or np.diff(np.sort(a.ravel())).min() > 1e-3)
    out = check_op(lambda T, x: getattr(x, op)(dim=dims, keepdim=keepdim), a)
    expected = getattr(np, {"amax": "max", "amin": "min"}.get(op, op))(a, axis=dims, keepdims=keepdim)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=3, max_size=3).map(tuple), data=st.data())
def test_reducing_strided_runs_of_a_permuted_tensor(shape, data):
    # After the permute the reduced dims are neither contiguous nor leading
    # in memory: the kernel folds strided runs.
    a = data.draw(arrays(shape))
    dims = data.draw(st.sampled_from([(0,), (1,), (0, 2), (1, 2)]))
    out = check_op(lambda T, x: x.permute(2, 0, 1).sum(dim=dims), a)
    np.testing.assert_allclose(
        out.detach().numpy(), a.transpose(2, 0, 1).sum(axis=dims), rtol=1e-12, atol=1e-12
    )


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=2, max_size=4).map(tuple), data=st.data())
def test_reducing_any_dims_of_a_permuted_flipped_view(shape, data):
    # Any subset of dims of a view whose kept elements may or may not form
    # rows of adjacent elements (the kernel that folds whole kept rows, with
    # negative strides from the flip, and the per-group fallback).
    a = data.draw(arrays(shape, low=-2.0, high=2.0))
    perm = data.draw(st.permutations(range(len(shape))))
    flipped = data.draw(st.lists(st.sampled_from(range(len(shape))), unique=True, max_size=2))
    dims = tuple(data.draw(st.lists(st.sampled_from(range(len(shape))), unique=True, min_size=1)))
    op = data.draw(st.sampled_from(["sum", "amax"]))
    view = np.flip(a, flipped).transpose(perm) if flipped else a.transpose(perm)
    if op == "amax":
        assume(distinct(a))

    def reduced(T, x):
        view = (x.flip(flipped) if flipped else x).permute(*perm)
        return getattr(view, op)(dim=dims)

    out = check_op(reduced, a)
    expected = view.sum(axis=dims) if op == "sum" else view.max(axis=dims)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-12)


def test_repeat_gradient_sums_the_tiles():
    a = np.arange(24, dtype=np.float64).reshape(2, 12)
    x = fg.tensor(a, requires_grad=True)
    w = fg.tensor(np.arange(3 * 2 * 4 * 12, dtype=np.float64).reshape(3, 4, 24))
    (x.repeat(3, 2, 2) * w).sum().backward()
    expected = np.arange(3 * 2 * 4 * 12, dtype=np.float64).reshape(3, 2, 2, 2, 12).sum(axis=(0, 1, 3))
    np.testing.assert_array_equal(x.grad.numpy(), expected)


@settings(max_examples=30, deadline=None)
@given(shape=shapes(min_dims=1, max_dims=4), data=st.data())
def test_sum_of_an_expanded_tensor(shape, data):
    # Broadcast dims are summed from one copy of their element, times their
    # size when reduced; kept ones are repeated in the (writable) result.
    dtype = data.draw(st.sampled_from(["float64", "int64", "bool"]))
    small = tuple(data.draw(st.sampled_from([1, s])) for s in shape)
    a = data.draw(arrays(small, low=-3.0, high=3.0)).round().astype(dtype)
    dims = tuple(data.draw(st.lists(st.sampled_from(range(len(shape))), unique=True)))
    keepdim = data.draw(st.booleans())
    out = fg.tensor(a).expand(*shape).sum(dim=dims, keepdim=keepdim)
    expected = np.broadcast_to(a, shape).sum(axis=dims or None, keepdims=keepdim)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    out.add_(1)


@pytest.mark.parametrize("cols", [1, 3, 8, 100, 5000])
def test_sums_over_leading_dims_of_few_columns_do_not_depend_on_threads(cols):
    # Few columns: bands of rows are folded apart and then combined in order.
    a = np.random.default_rng(cols).standard_normal((40, 70_000 // cols + 3, cols)).astype(np.float32)
    before = fg.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            fg.set_num_threads(threads)
            results.append(fg.tensor(a).sum((0, 1)).numpy())
            results.append(fg.tensor(a).amax((0, 1)).numpy())
    finally:
        fg.set_num_threads(before)
    np.testing.assert_allclose(results[0], a.astype(np.float64).sum((0, 1)), rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(results[1], a.max((0, 1)))
    np.testing.assert_array_equal(results[0], results[2])
    np.testing.assert_array_equal(results[1], results[3])


# NumPy's keyword names, which PyTorch takes for ``dim`` and ``keepdim``.
NUMPY_KEYWORD_CALLS = [
    lambda T, x: x.sum(axis=1, keepdims=True),
    lambda T, x: x.mean(axis=(0, 2)),
    lambda T, x: x.prod(axis=2, keepdims=True),
    lambda T, x: x.max(axis=0).values,
    lambda T, x: x.min(axis=1, keepdims=True).indices,
    lambda T, x: x.amax(axis=(1, 2), keepdims=True),
    lambda T, x: x.amin(axis=-1),
    lambda T, x: x.argmax(axis=2, keepdims=True),
    lambda T, x: x.argmin(axis=0),
    lambda T, x: (x > 0).all(axis=1),
    lambda T, x: (x > 0).any(axis=2, keepdims=True),
    lambda T, x: x.logsumexp(axis=1, keepdims=True),
    lambda T, x: x.var(axis=0, keepdims=True),
    lambda T, x: x.std(axis=2),
    lambda T, x: x.softmax(axis=1),
    lambda T, x: x.log_softmax(axis=0),
    lambda T, x: x.cumsum(axis=2),
    lambda T, x: x.cumprod(axis=1),
    lambda T, x: x.unsqueeze(axis=1),
    lambda T, x: x[:, :1].squeeze(axis=1),
    lambda T, x: T.cat([x, x], axis=1),
    lambda T, x: T.stack([x, x], axis=-1),
    lambda T, x: T.sum(x, axis=0, keepdims=True),
    lambda T, x: T.concat([x, x], axis=2),
    lambda T, x: x.sort(axis=0).values,
    lambda T, x: x.argsort(axis=1, descending=True),
    lambda T, x: x.topk(2, axis=1).values,
    lambda T, x: x.unbind(axis=2)[1],
    lambda T, x: x.chunk(2, axis=1)[0],
    # Functions written in Python.
    lambda T, x: x.median(axis=1).values,
    lambda T, x: x.nansum(axis=0, keepdims=True),
    lambda T, x: x.nanmean(axis=2),
    lambda T, x: x.kthvalue(2, axis=1, keepdims=True).values,
    lambda T, x: x.quantile(0.25, axis=1),
    lambda T, x: x.count_nonzero(axis=0),
    lambda T, x: x.diff(axis=1),
    lambda T, x: T.var_mean(x, axis=2)[0],
    lambda T, x: x.logcumsumexp(axis=1),
    lambda T, x: x.cummax(axis=2).values,
    lambda T, x: x.tensor_split(2, axis=2)[1],
    lambda T, x: x.repeat_interleave(2, axis=0),
]


def test_numpy_keyword_names_agree_with_dim_and_keepdim():
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    x = fg.tensor(a)
    np.testing.assert_allclose(x.sum(axis=1, keepdims=True).numpy(), a.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(x.mean(axis=(0, 2)).numpy(), a.mean(axis=(0, 2)))
    np.testing.assert_allclose(x.amax(axis=-1).numpy(), a.max(axis=-1))
    np.testing.assert_allclose(fg.cat([x, x], axis=2).numpy(), np.concatenate([a, a], axis=2))
    np.testing.assert_array_equal(x.argmax(axis=2, keepdims=True).numpy(), a.argmax(axis=2)[..., None])
    np.testing.assert_allclose(x.std(axis=0).numpy(), a.std(axis=0, ddof=1))
    np.testing.assert_allclose(x.cumsum(axis=1).numpy(), a.cumsum(axis=1))
    np.testing.assert_allclose(fg.stack([x, x], axis=-1).numpy(), np.stack([a, a], axis=-1))
    assert x.unsqueeze(axis=1).shape == (2, 1, 3, 4)
    y = fg.tensor(a, requires_grad=True)
    y.logsumexp(axis=1).sum(axis=0).sum().backward()
    expected = np.exp(a - np.log(np.exp(a).sum(axis=1, keepdims=True)))
    np.testing.assert_allclose(y.grad.numpy(), expected, rtol=1e-6)


def test_numpy_keyword_names_match_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).standard_normal((2, 3, 4))
    for i, call in enumerate(NUMPY_KEYWORD_CALLS):
        ours, theirs = call(fg, fg.tensor(a)), call(torch, torch.tensor(a))
        assert tuple(ours.shape) == tuple(theirs.shape), i
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, err_msg=str(i))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: x.sum(0, axis=1), "sum() got an unexpected keyword argument 'axis'"),
        (lambda x: x.amax(dim=0, axis=1), "amax() got an unexpected keyword argument 'axis'"),
        (
            lambda x: x.mean(keepdim=True, keepdims=False),
            "mean() got an unexpected keyword argument 'keepdims'",
        ),
        (
            lambda x: x.softmax(keepdims=True, dim=0),
            "softmax() got an unexpected keyword argument 'keepdims'",
        ),
        (lambda x: x.sum(axes=0), "sum() got an unexpected keyword argument 'axes'"),
        (lambda x: x.cumsum(), "cumsum() missing 1 required positional argument"),
        (lambda x: x.median(0, axis=1), "median() got an unexpected keyword argument 'axis'"),
        (lambda x: fg.nansum(x, dim=0, axis=1), "nansum() got an unexpected keyword argument 'axis'"),
    ],
)
def test_numpy_keyword_names_refuse_a_name_given_twice_or_unknown(call, message):
    with pytest.raises(TypeError) as raised:
        call(fg.ones(2, 3))
    assert message in str(raised.value)

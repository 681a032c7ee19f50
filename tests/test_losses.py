"""nll_loss and cross_entropy: values and gradients against finite differences and torch,
class weights, ignore_index, label smoothing, the graph they record, and torch's errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import check_op

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

F = fg.nn.functional
IGNORE = -100


@st.composite
def classification(draw):
    """Logits (N, C), class targets (some ignored), optional positive class weights."""
    n = draw(st.integers(1, 5))
    c = draw(st.integers(1, 5))
    logits = np.array(draw(st.lists(st.floats(-4, 4), min_size=n * c, max_size=n * c))).reshape(n, c)
    target = draw(st.lists(st.sampled_from(list(range(c)) + [IGNORE]), min_size=n, max_size=n))
    weight = draw(st.none() | st.lists(st.floats(0.1, 2.0), min_size=c, max_size=c))
    return logits, np.array(target, dtype=np.int64), None if weight is None else np.array(weight)


@settings(max_examples=30, deadline=None)
@given(case=classification(), reduction=st.sampled_from(["mean", "sum", "none"]))
def test_nll_loss_matches_torch_and_finite_differences(case, reduction):
    logits, target, weight = case
    if reduction == "mean" and (target == IGNORE).all():
        return  # nan loss: checked on its own below

    def fn(T, x):
        w = None if weight is None else T.tensor(weight)
        return T.nn.functional.nll_loss(x.log_softmax(1), T.tensor(target), weight=w, reduction=reduction)

    check_op(fn, logits, fd_atol=1e-5)


@settings(max_examples=30, deadline=None)
@given(
    case=classification(),
    reduction=st.sampled_from(["mean", "sum", "none"]),
    smoothing=st.sampled_from([0.0, 0.25]),
)
def test_cross_entropy_matches_torch_and_finite_differences(case, reduction, smoothing):
    logits, target, weight = case
    if reduction == "mean" and (target == IGNORE).all():
        return

    def fn(T, x):
        w = None if weight is None else T.tensor(weight)
        return T.nn.functional.cross_entropy(
            x, T.tensor(target), weight=w, reduction=reduction, label_smoothing=smoothing
        )

    check_op(fn, logits, fd_atol=1e-5)


def test_cross_entropy_with_spatial_dims_and_unbatched_input():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4))
    t = rng.integers(0, 3, (2, 4))
    check_op(lambda T, v: T.nn.functional.cross_entropy(v, T.tensor(t)), x)
    check_op(lambda T, v: T.nn.functional.cross_entropy(v, T.tensor(t), reduction="none"), x)
    check_op(lambda T, v: T.nn.functional.cross_entropy(v, T.tensor(2)), rng.standard_normal(3))


def test_cross_entropy_records_nll_over_log_softmax():
    x = fg.randn(4, 3, requires_grad=True)
    loss = F.cross_entropy(x, fg.tensor([0, 1, 2, 1]))
    assert loss.grad_fn.name() == "NllLossBackward0"
    ((parent, _),) = loss.grad_fn.next_functions
    assert parent.name() == "LogSoftmaxBackward0"


def test_all_targets_ignored_gives_nan_loss_and_zero_gradient():
    x = fg.randn(3, 4, requires_grad=True)
    loss = F.cross_entropy(x, fg.tensor([IGNORE] * 3))
    assert np.isnan(loss.item())
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 4), dtype=np.float32))


def test_ignored_row_with_infinite_input_adds_nothing():
    x = fg.tensor([[-float("inf"), 0.0], [0.5, -0.5]], requires_grad=True)
    loss = F.nll_loss(x, fg.tensor([0, 1]), ignore_index=0, reduction="sum")
    assert loss.item() == 0.5
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 0], [0, -1]])


def test_nll_loss_keeps_input_dtype():
    x = fg.randn(2, 3, dtype=fg.float64)
    assert F.nll_loss(x, fg.tensor([0, 2])).dtype == fg.float64
    assert F.cross_entropy(x.float(), fg.tensor([0, 2])).dtype == fg.float32


ERRORS = {
    "target out of bounds": (
        lambda T, x: T.nn.functional.nll_loss(x, T.tensor([0, 1, 3, 1])),
        IndexError,
        "Target 3 is out of bounds.",
    ),
    "negative target": (
        lambda T, x: T.nn.functional.nll_loss(x, T.tensor([0, -2, 1, 1])),
        IndexError,
        "Target -2 is out of bounds.",
    ),
    "batch mismatch": (
        lambda T, x: T.nn.functional.nll_loss(x, T.tensor([0, 1, 2])),
        ValueError,
        r"Expected input batch_size \(4\) to match target batch_size \(3\).",
    ),
    "float target": (
        lambda T, x: T.nn.functional.nll_loss(x, T.tensor([0.0, 1, 2, 1])),
        RuntimeError,
        "expected target dtype to be Long or Byte, but got Float",
    ),
    "integer input": (
        lambda T, x: T.nn.functional.nll_loss(T.ones(4, 3, dtype=T.int64), T.tensor([0, 1, 2, 1])),
        RuntimeError,
        "\"nll_loss_out_frame\" not implemented for 'Long'",
    ),
    "weight size": (
        lambda T, x: T.nn.functional.nll_loss(x, T.tensor([0, 1, 2, 1]), weight=T.ones(4)),
        RuntimeError,
        "weight tensor should be defined either for all 3 classes or no classes",
    ),
    "weight requires grad": (
        lambda T, x: T.nn.functional.nll_loss(
            x, T.tensor([0, 1, 2, 1]), weight=T.ones(3, requires_grad=True)
        ),
        RuntimeError,
        "is not differentiable with respect to argument 'weight'",
    ),
    "bad reduction": (
        lambda T, x: T.nn.functional.cross_entropy(x, T.tensor([0, 1, 2, 1]), reduction="avg"),
        ValueError,
        "avg is not a valid value for reduction",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    fn, kind, message = ERRORS[name]
    modules = [fg] + ([torch] if torch is not None else [])
    for T in modules:
        x = T.randn(4, 3, requires_grad=True)
        with pytest.raises(kind, match=message):
            fn(T, x)


@settings(max_examples=20, deadline=None)
@given(
    rows=st.integers(1, 6),
    cols=st.integers(1, 40),
    scale=st.sampled_from([1.0, 30.0]),
    op=st.sampled_from(["log_softmax", "softmax"]),
)
def test_row_kernel_of_softmax_ops_matches_the_composed_form(rows, cols, scale, op):
    """The last-dim row kernels (forward and backward) against the strided path on a transpose."""
    rng = np.random.default_rng(rows * 100 + cols)
    a = rng.standard_normal((rows, cols)) * scale
    g = rng.standard_normal((rows, cols))
    x = fg.tensor(a, requires_grad=True)
    xt = fg.tensor(a.T.copy(), requires_grad=True)
    y, yt = getattr(x, op)(1), getattr(xt, op)(0)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy().T, rtol=1e-12, atol=1e-12)
    y.backward(fg.tensor(g))
    yt.backward(fg.tensor(g.T.copy()))
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy().T, rtol=1e-12, atol=1e-12)
    # With create_graph the backward records ops: it must give the same gradient.
    (gx,) = fg.autograd.grad(getattr(x, op)(1), x, fg.tensor(g), create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), x.grad.numpy(), rtol=1e-12, atol=1e-12)
    # A sum hands the backward an expanded gradient.
    (gs,) = fg.autograd.grad(getattr(x, op)(1).sum(), x)
    (gst,) = fg.autograd.grad(getattr(xt, op)(0).sum(), xt)
    np.testing.assert_allclose(gs.numpy(), gst.numpy().T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", ["log_softmax", "softmax"])
@pytest.mark.parametrize("cols", [1, 7, 8, 9, 31, 256])
def test_float32_row_kernels_of_softmax_ops_against_float64(op, cols):
    """The float32 rows (their exponentials vectorised) within float32 rounding of float64's."""
    rng = np.random.default_rng(cols)
    # Both runs start from the same float32 values.
    a = (rng.standard_normal((33, cols)) * 4).astype(np.float32)
    g = rng.standard_normal((33, cols)).astype(np.float32)
    results = {}
    for dtype in (fg.float32, fg.float64):
        x = fg.tensor(a, dtype=dtype, requires_grad=True)
        y = getattr(x, op)(1)
        y.backward(fg.tensor(g, dtype=dtype))
        results[dtype] = (y.detach().numpy().astype(np.float64), x.grad.numpy().astype(np.float64))
    for got, want in zip(results[fg.float32], results[fg.float64]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


SOFTMAX_ROWS_WITH_INFINITIES = {
    "log_softmax": [[np.nan, np.nan], [np.nan, -np.inf], [np.nan, np.nan], [0.0, -np.inf]],
    "softmax": [[np.nan, np.nan], [np.nan, np.nan], [np.nan, np.nan], [1.0, 0.0]],
}


@pytest.mark.parametrize("op", sorted(SOFTMAX_ROWS_WITH_INFINITIES))
def test_softmax_rows_with_infinities_and_nan(op):
    x = fg.tensor(
        [[float("-inf"), float("-inf")], [float("inf"), 1.0], [float("nan"), 0.0], [0.0, float("-inf")]]
    )
    got = getattr(x, op)(1).numpy()
    if torch is not None:
        want = getattr(torch.tensor(x.numpy()), op)(1).numpy()
    else:
        want = np.array(SOFTMAX_ROWS_WITH_INFINITIES[op], dtype=np.float32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "loss",
    [
        lambda F, x, t: F.nll_loss(x, t, size_average=False),
        lambda F, x, t: F.cross_entropy(x, t, reduce=False),
        lambda F, x, t: F.kl_div(x, x, reduce=False),
        lambda F, x, t: F.l1_loss(x, x, reduce=True),
    ],
)
def test_legacy_reduction_arguments_warn_at_the_callers_line(loss):
    x, t = fg.zeros(3, 4), fg.tensor([0, 1, 3])
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated") as caught:
        loss(fg.nn.functional, x, t)
    assert caught[0].filename == __file__


def test_nll_loss_2d_is_nll_loss_under_a_deprecated_name():
    log_probs = fg.randn(2, 3, 4, 5).log_softmax(1)
    target = fg.randint(0, 3, (2, 4, 5))
    weight = fg.tensor([1.0, 2.0, 0.5])
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        old = fg.nn.NLLLoss2d(weight, ignore_index=1, reduction="sum")
    assert isinstance(old, fg.nn.NLLLoss)
    expect = fg.nn.NLLLoss(weight, ignore_index=1, reduction="sum")(log_probs, target)
    assert old(log_probs, target).item() == expect.item()


# (input shape, target shape or a float target's shape marked "soft", keyword arguments, error, message)
_SHAPE_ERRORS = [
    ((), (), {}, ValueError, "Expected 1 or more dimensions (got 0)"),
    ((4,), (3,), {}, ValueError, "For 1D input, 1D target must have size 1, but got target size: 3"),
    ((2, 4), (2, 2), {}, RuntimeError, "0D or 1D target tensor expected, multi-target not supported"),
    ((2, 4), (3,), {}, ValueError, "Expected input batch_size (2) to match target batch_size (3)."),
    ((2, 4, 5), (2,), {}, RuntimeError, "Expected target size [2, 5], got [2]"),
    ((2, 4, 5), (2, 6), {}, RuntimeError, "Expected target size [2, 5], got [2, 6]"),
    ((2, 4, 5), (3, 5), {}, ValueError, "Expected input batch_size (2) to match target batch_size (3)."),
    (
        (2, 4, 5, 6),
        (2, 5),
        {},
        RuntimeError,
        "only batches of spatial targets supported (3D tensors) but got targets of dimension: 2",
    ),
    ((2, 4, 5, 6), (2, 5, 7), {}, RuntimeError, "size mismatch (got input: [2, 4, 5, 6] , target: [2, 5, 7]"),
    ((2, 4, 5, 6, 7), (2, 5), {}, RuntimeError, "Expected target size [2, 5, 6, 7], got [2, 5]"),
]


@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("shapes", _SHAPE_ERRORS, ids=lambda c: c[-1][:40])
def test_class_index_targets_of_the_wrong_shape_raise_as_torch(loss, shapes):
    in_shape, target_shape, kwargs, error, text = shapes
    if loss == "cross_entropy" and in_shape == ():
        error, text = (
            RuntimeError,
            "Expected floating point type for target with class probabilities, got Long",
        )
    for T in [fg] + ([torch] if torch is not None else []):
        with pytest.raises(error) as e:
            getattr(T.nn.functional, loss)(T.zeros(in_shape), T.zeros(target_shape, dtype=T.int64), **kwargs)
        assert str(e.value) == text, T.__name__


def test_probability_targets_refuse_an_ignore_index():
    for T in [fg] + ([torch] if torch is not None else []):
        x, p = T.zeros(2, 3), T.full((2, 3), 1 / 3)
        with pytest.raises(RuntimeError, match="^ignore_index is not supported for floating point target$"):
            T.nn.functional.cross_entropy(x, p, ignore_index=1)
        # The default (-100), and any negative index, are no index at all.
        loss = T.nn.functional.cross_entropy(x, p, ignore_index=-1)
        assert abs(loss.item() - np.log(3)) < 1e-6

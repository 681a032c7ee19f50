"""conv2d, unfold/fold, max/avg/adaptive pooling and batch norm: values and gradients against
finite differences and torch, second order through conv2d, running statistics, the modules'
reprs and torch's errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import assert_raises_like_torch, check_op

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None


@st.composite
def conv_case(draw):
    groups = draw(st.sampled_from([1, 2]))
    c = groups * draw(st.integers(1, 2))
    o = groups * draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    h = draw(st.integers(dilation[0] * (kh - 1) + 1, 6))
    w = draw(st.integers(dilation[1] * (kw - 1) + 1, 6))
    n = draw(st.integers(1, 2))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.standard_normal((n, c, h, w))
    weight = rng.standard_normal((o, c // groups, kh, kw))
    bias = rng.standard_normal(o) if draw(st.booleans()) else None
    return x, weight, bias, dict(stride=stride, padding=padding, dilation=dilation, groups=groups)


@settings(max_examples=30, deadline=None)
@given(case=conv_case())
def test_conv2d(case):
    x, weight, bias, kw = case
    if bias is None:
        check_op(lambda T, a, w: T.nn.functional.conv2d(a, w, **kw), x, weight)
    else:
        check_op(lambda T, a, w, b: T.nn.functional.conv2d(a, w, b, **kw), x, weight, bias)


def test_conv2d_unbatched_and_same_padding():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 5, 4)), rng.standard_normal((3, 2, 2, 3))
    with pytest.warns(UserWarning, match="zero-padded copy of the input"):
        check_op(lambda T, a, k: T.nn.functional.conv2d(a, k, padding="same"), x, w)
    check_op(lambda T, a, k: T.nn.functional.conv2d(a, k, padding="valid", stride=(1, 2)), x, w)


def test_conv2d_second_order_matches_torch():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((1, 2, 4, 4)), rng.standard_normal((2, 2, 3, 3))
    assert fg.autograd.gradcheck(
        lambda a, k: fg.nn.functional.conv2d(a, k, padding=1).tanh(),
        (fg.tensor(x, requires_grad=True), fg.tensor(w, requires_grad=True)),
    )
    assert fg.autograd.gradgradcheck(
        lambda a, k: fg.nn.functional.conv2d(a, k, stride=2).tanh(),
        (fg.tensor(x, requires_grad=True), fg.tensor(w, requires_grad=True)),
    )


@settings(max_examples=20, deadline=None)
@given(case=conv_case())
def test_unfold_and_fold_are_adjoint(case):
    x, weight, _, kw = case
    k = tuple(weight.shape[2:])
    geometry = dict(dilation=kw["dilation"], padding=kw["padding"], stride=kw["stride"])
    check_op(lambda T, a: T.nn.functional.unfold(a, k, **geometry), x)
    cols = fg.nn.functional.unfold(fg.tensor(x), k, **geometry).numpy()
    check_op(lambda T, c: T.nn.functional.fold(c, x.shape[2:], k, **geometry), cols)


@st.composite
def pool_case(draw):
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    padding = (draw(st.integers(0, kh // 2)), draw(st.integers(0, kw // 2)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    h, w = draw(st.integers(kh, 7)), draw(st.integers(kw, 7))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    # distinct values: a tie would make the max's gradient depend on which one is picked
    x = rng.permutation(2 * 3 * h * w).reshape(2, 3, h, w) * 0.1
    return x, (kh, kw), stride, padding


@settings(max_examples=30, deadline=None)
@given(case=pool_case(), ceil_mode=st.booleans(), dilation=st.sampled_from([1, 2]))
def test_max_pool2d(case, ceil_mode, dilation):
    x, k, stride, padding = case
    if any(dilation * (kk - 1) + 1 > s + 2 * p for kk, s, p in zip(k, x.shape[2:], padding)):
        return
    check_op(lambda T, a: T.nn.functional.max_pool2d(a, k, stride, padding, dilation, ceil_mode), x)


@settings(max_examples=30, deadline=None)
@given(case=pool_case(), include_pad=st.booleans())
def test_avg_pool2d(case, include_pad):
    x, k, stride, padding = case
    check_op(lambda T, a: T.nn.functional.avg_pool2d(a, k, stride, padding, count_include_pad=include_pad), x)


@pytest.mark.parametrize("size", [1, (1, 1), (2, 3), (3, 3), (4, None), 7])
def test_adaptive_avg_pool2d(size):
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 7))
    check_op(lambda T, a: T.nn.functional.adaptive_avg_pool2d(a, size), x)


@pytest.mark.parametrize("fill", [0.0, float("-inf")])
def test_max_pool2d_routes_ties_to_the_first_maximum_as_torch(fill):
    if torch is None:
        pytest.skip("torch not installed")
    x = np.full((1, 2, 5, 6), fill)
    x[0, 1, 2:, 3:] = 1.0
    grads = []
    for T in (fg, torch):
        t = T.tensor(x, requires_grad=True)
        out = T.nn.functional.max_pool2d(t, 3, 2, 1, dilation=(1, 2), ceil_mode=True)
        out.backward(T.arange(out.numel(), dtype=T.float64).reshape(out.shape))
        grads.append((out.detach().numpy(), t.grad.numpy()))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])


def test_max_pool2d_records_its_node_and_differentiates_twice():
    x = fg.tensor(np.random.default_rng(8).permutation(50).reshape(1, 2, 5, 5) * 0.1, requires_grad=True)
    assert fg.nn.functional.max_pool2d(x, 2).grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert fg.autograd.gradgradcheck(lambda a: fg.nn.functional.max_pool2d(a, 3, 2, 1) ** 2, (x,))


def test_max_pool2d_propagates_nan_and_splits_no_gradient_between_windows():
    x = fg.tensor([[[[1.0, float("nan")], [3.0, 2.0]]]], requires_grad=True)
    out = fg.nn.functional.max_pool2d(x, 2)
    assert np.isnan(out.item())
    y = fg.tensor([[[[1.0, 5.0, 2.0]]]], requires_grad=True)
    fg.nn.functional.max_pool2d(y, (1, 2), stride=1).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [[[[0, 2, 0]]]])


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5)])
def test_batch_norm_training_and_eval(shape):
    rng = np.random.default_rng(3)
    x, w, b = rng.standard_normal(shape), rng.standard_normal(3), rng.standard_normal(3)
    check_op(lambda T, a, g, c: T.nn.functional.batch_norm(a, None, None, g, c, training=True), x, w, b)
    mean, var = rng.standard_normal(3), rng.random(3) + 0.5
    check_op(lambda T, a: T.nn.functional.batch_norm(a, T.tensor(mean), T.tensor(var), training=False), x)


@st.composite
def batch_norm_case(draw):
    n, c = draw(st.integers(2, 4)), draw(st.integers(1, 4))
    spatial = tuple(draw(st.lists(st.integers(1, 9), max_size=2)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.standard_normal((n, c, *spatial)) * 3 + rng.standard_normal()
    affine = draw(st.booleans())
    weight, bias = (rng.standard_normal(c), rng.standard_normal(c)) if affine else (None, None)
    stats = rng.standard_normal(c), rng.random(c) + 0.5
    return x, weight, bias, stats, draw(st.booleans())


@settings(max_examples=40, deadline=None)
@given(case=batch_norm_case())
def test_batch_norm_values_and_gradients(case):
    x, weight, bias, (mean, var), training = case

    def running(T):
        return (None, None) if training else (T.tensor(mean), T.tensor(var))

    if weight is None:
        check_op(lambda T, a: T.nn.functional.batch_norm(a, *running(T), training=training), x)
    else:
        check_op(
            lambda T, a, w, b: T.nn.functional.batch_norm(a, *running(T), w, b, training=training),
            x,
            weight,
            bias,
        )


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(3, 2), (2, 3, 4), (2, 2, 3, 3)])
def test_batch_norm_second_order(shape, training):
    rng = np.random.default_rng(5)
    x = fg.tensor(rng.standard_normal(shape), requires_grad=True)
    w = fg.tensor(rng.standard_normal(shape[1]), requires_grad=True)
    b = fg.tensor(rng.standard_normal(shape[1]), requires_grad=True)
    stats = (
        (None, None)
        if training
        else (fg.tensor(rng.standard_normal(shape[1])), fg.tensor(rng.random(shape[1]) + 0.5))
    )

    def fn(a, g, c):
        return fg.nn.functional.batch_norm(a, *stats, g, c, training=training)

    assert fg.autograd.gradgradcheck(fn, (x, w, b))


def test_batch_norm_records_one_node_and_updates_running_statistics_in_place():
    rm, rv = fg.zeros(3), fg.ones(3)
    versions = rm._version, rv._version
    x = fg.randn(4, 3, 2, requires_grad=True)
    y = fg.nn.functional.batch_norm(x, rm, rv, training=True, momentum=0.5)
    assert y.grad_fn.name() == "NativeBatchNormBackward0"
    assert (rm._version, rv._version) != versions
    data = x.detach().numpy().transpose(1, 0, 2).reshape(3, -1)
    np.testing.assert_allclose(rm.numpy(), 0.5 * data.mean(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), 0.5 + 0.5 * data.var(1, ddof=1), rtol=1e-5, atol=1e-6)


def test_batch_norm_float32_keeps_precision_when_the_mean_dwarfs_the_spread():
    rng = np.random.default_rng(6)
    x = (1e4 + rng.standard_normal((16, 4, 8, 8))).astype(np.float32)
    out = fg.nn.functional.batch_norm(fg.tensor(x), None, None, training=True).numpy()
    xd = x.astype(np.float64)
    mean, var = xd.mean((0, 2, 3), keepdims=True), xd.var((0, 2, 3), keepdims=True)
    np.testing.assert_allclose(out, (xd - mean) / np.sqrt(var + 1e-5), atol=2e-3)


def test_batch_norm_is_the_same_on_any_number_of_threads():
    rng = np.random.default_rng(7)
    x = fg.tensor(rng.standard_normal((8, 32, 24, 24)).astype(np.float32), requires_grad=True)
    g = fg.tensor(rng.standard_normal((8, 32, 24, 24)).astype(np.float32))
    w, b = fg.ones(32, requires_grad=True), fg.zeros(32, requires_grad=True)
    before = fg.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            fg.set_num_threads(threads)
            x.grad = w.grad = b.grad = None
            y = fg.nn.functional.batch_norm(x, None, None, w, b, training=True)
            y.backward(g)
            results.append([t.numpy() for t in (y.detach(), x.grad, w.grad, b.grad)])
    finally:
        fg.set_num_threads(before)
    for one, two in zip(*results):
        np.testing.assert_array_equal(one, two)


@pytest.mark.parametrize("op", ["batch_norm", "max_pool2d"])
def test_kernel_outputs_and_gradients_are_fresh_tensors_not_views(op):
    # An in-place op on a view would route through its base (as `ReLU(inplace=True)` after
    # every batch norm of a ResNet does).
    x = fg.randn(2, 3, 4, 4, requires_grad=True)
    w = fg.ones(3, requires_grad=True)
    out = (
        fg.nn.functional.batch_norm(x, None, None, w, training=True)
        if op == "batch_norm"
        else fg.nn.functional.max_pool2d(x, 2)
    )
    assert out._base is None
    out.relu_().sum().backward()
    assert x.grad._base is None and (op != "batch_norm" or w.grad._base is None)


def test_batch_norm_of_an_empty_batch_leaves_running_statistics():
    rm, rv = fg.zeros(3), fg.ones(3)
    x = fg.randn(0, 3, 2, requires_grad=True)
    out = fg.nn.functional.batch_norm(x, rm, rv, training=True)
    out.sum().backward()
    assert out.shape == (0, 3, 2) and x.grad.shape == (0, 3, 2)
    np.testing.assert_array_equal(rm.numpy(), np.zeros(3))
    np.testing.assert_array_equal(rv.numpy(), np.ones(3))


def test_batch_norm_weight_of_any_shape_gets_a_gradient_of_its_shape():
    w = fg.ones(1, 3, requires_grad=True)
    fg.nn.functional.batch_norm(fg.randn(4, 3), None, None, w, training=True).sum().backward()
    assert w.grad.shape == (1, 3)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_module_tracks_running_statistics_as_torch(momentum):
    if torch is None:
        pytest.skip("torch not installed")
    rng = np.random.default_rng(4)
    batches = [rng.standard_normal((4, 3, 2, 2)) for _ in range(3)]
    results = []
    for T in (fg, torch):
        bn = T.nn.BatchNorm2d(3, momentum=momentum).double()
        for xb in batches:
            bn(T.tensor(xb)).sum()
        bn.eval()
        out = bn(T.tensor(batches[0]))
        results.append(
            (
                bn.running_mean.numpy(),
                bn.running_var.numpy(),
                int(bn.num_batches_tracked),
                out.detach().numpy(),
            )
        )
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


MODULES_REPR = {
    "conv": lambda nn: nn.Conv2d(3, 64, 7, 2, 3, bias=False),
    "conv_same": lambda nn: nn.Conv2d(4, 4, (3, 1), padding="same", dilation=2, groups=2),
    "max_pool": lambda nn: nn.MaxPool2d(3, 2, 1),
    "avg_pool": lambda nn: nn.AvgPool2d(2),
    "adaptive": lambda nn: nn.AdaptiveAvgPool2d((1, 1)),
    "bn2d": lambda nn: nn.BatchNorm2d(64),
    "bn1d": lambda nn: nn.BatchNorm1d(8, affine=False, momentum=None),
}


@pytest.mark.parametrize("name", sorted(MODULES_REPR))
def test_module_reprs_and_parameters_match_torch(name):
    if torch is None:
        pytest.skip("torch not installed")
    ours, theirs = MODULES_REPR[name](fg.nn), MODULES_REPR[name](torch.nn)
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()
    ]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]


def test_conv2d_module_initialises_within_torch_bounds():
    conv = fg.nn.Conv2d(4, 6, 3)
    bound = 1 / np.sqrt(4 * 9)
    assert np.abs(conv.weight.detach().numpy()).max() <= bound
    assert np.abs(conv.bias.detach().numpy()).max() <= bound
    assert conv(fg.randn(2, 4, 5, 5)).shape == (2, 6, 3, 3)


ERRORS = {
    "conv input dims": (
        lambda F, T: F.conv2d(T.zeros(2, 3), T.zeros(1, 3, 1, 1)),
        RuntimeError,
        r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d",
    ),
    "conv channels": (
        lambda F, T: F.conv2d(T.zeros(1, 2, 5, 5), T.zeros(4, 3, 3, 3)),
        RuntimeError,
        "expected input.* to have 3 channels, but got 2 channels instead",
    ),
    "conv kernel too large": (
        lambda F, T: F.conv2d(T.zeros(1, 1, 2, 2), T.zeros(1, 1, 3, 3)),
        RuntimeError,
        "Kernel size can't be greater than actual input size",
    ),
    "conv padding string": (
        lambda F, T: F.conv2d(T.zeros(1, 1, 3, 3), T.zeros(1, 1, 1, 1), padding="full"),
        RuntimeError,
        "Invalid padding string: 'full'",
    ),
    "same with stride": (
        lambda F, T: F.conv2d(T.zeros(1, 1, 3, 3), T.zeros(1, 1, 1, 1), stride=2, padding="same"),
        RuntimeError,
        "padding='same' is not supported for strided convolutions",
    ),
    "module padding string": (
        lambda F, T: T.nn.Conv2d(1, 1, 1, padding="full"),
        ValueError,
        "Invalid padding string 'full', should be one of",
    ),
    "module same with stride": (
        lambda F, T: T.nn.Conv2d(1, 1, 1, stride=2, padding="same"),
        ValueError,
        "padding='same' is not supported for strided convolutions",
    ),
    "pool padding": (
        lambda F, T: F.max_pool2d(T.zeros(1, 1, 4, 4), 2, padding=2),
        RuntimeError,
        "pad should be at most half of",
    ),
    "bn one value": (
        lambda F, T: F.batch_norm(T.zeros(1, 3), None, None, training=True),
        ValueError,
        "Expected more than 1 value per channel when training",
    ),
    "groups": (
        lambda F, T: T.nn.Conv2d(3, 4, 1, groups=2),
        ValueError,
        "in_channels must be divisible by groups",
    ),
    "bn2d dims": (
        lambda F, T: T.nn.BatchNorm2d(3)(T.zeros(2, 3)),
        ValueError,
        r"expected 4D input \(got 2D input\)",
    ),
    "bn dtype": (
        lambda F, T: F.batch_norm(T.zeros(4, 3, dtype=T.int64), None, None, training=True),
        NotImplementedError,
        "\"batch_norm\" not implemented for 'Long'",
    ),
    "bn weight size": (
        lambda F, T: F.batch_norm(T.zeros(4, 3), None, None, T.ones(4), training=True),
        RuntimeError,
        "weight should contain 3 elements not 4",
    ),
    "bn running size": (
        lambda F, T: F.batch_norm(T.zeros(4, 3), T.zeros(3), T.ones(2), training=True),
        RuntimeError,
        "running_var should contain 3 elements not 2",
    ),
    "bn parameter dtype": (
        lambda F, T: F.batch_norm(
            T.zeros(4, 3), T.zeros(3, dtype=T.float64), T.ones(3, dtype=T.float64), training=True
        ),
        RuntimeError,
        r"mixed dtype \(CPU\): expect parameter to have scalar type of Float",
    ),
    "bn mixed dtype": (
        lambda F, T: F.batch_norm(T.zeros(4, 3, dtype=T.float64), T.zeros(3), T.ones(3)),
        RuntimeError,
        r"mixed dtype \(CPU\): all inputs must share same datatype.",
    ),
    "bn one running": (
        lambda F, T: F.batch_norm(T.zeros(4, 3), T.zeros(3), None, training=True),
        ValueError,
        "running_mean and running_var must either both be None or neither be None",
    ),
    "bn eval without": (
        lambda F, T: F.batch_norm(T.zeros(4, 3), None, None),
        RuntimeError,
        "running_mean must be defined in evaluation mode",
    ),
    "bn running grad": (
        lambda F, T: F.batch_norm(T.zeros(4, 3), T.zeros(3, requires_grad=True), T.ones(3)),
        RuntimeError,
        "not differentiable with respect to argument 'running_mean'",
    ),
    "bn momentum": (
        lambda F, T: F.batch_norm(T.zeros(4, 3), None, None, training=True, momentum=None),
        TypeError,
        "argument 'momentum' .* must be float, not NoneType",
    ),
}


def test_integer_convolution_is_refused_clearly():
    x = fg.zeros(1, 1, 3, 3, dtype=fg.int64)
    with pytest.raises(RuntimeError, match="\"slow_conv2d_cpu\" not implemented for 'Long'"):
        fg.nn.functional.conv2d(x, fg.zeros(1, 1, 1, 1, dtype=fg.int64))


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_raises_like_torch(*ERRORS[name])

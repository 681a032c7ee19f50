"""conv1d, conv3d, conv_transpose1d/2d, the 1-d, adaptive-max and Lp pools, max_unpool2d and the
pooling options ceil_mode / return_indices: values and gradients against finite differences and
torch, the modules' parameters, initialisation and reprs, and torch's errors."""

import warnings

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

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")


def _rng(draw):
    return np.random.default_rng(draw(st.integers(0, 2**16)))


# ---- convolutions ------------------------------------------------------------------------


@st.composite
def conv1d_case(draw):
    groups = draw(st.sampled_from([1, 2, 3]))
    c, o = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    k, stride, dilation = draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 2))
    padding = draw(st.sampled_from([0, 1, 2, "valid", "same"]))
    if padding == "same":
        stride = 1
    length = draw(st.integers(dilation * (k - 1) + 1, 9))
    rng = _rng(draw)
    x = rng.standard_normal((draw(st.integers(1, 2)), c, length))
    if draw(st.booleans()):
        x = x[0]  # unbatched
    weight = rng.standard_normal((o, c // groups, k))
    bias = rng.standard_normal(o) if draw(st.booleans()) else None
    return x, weight, bias, dict(stride=stride, padding=padding, dilation=dilation, groups=groups)


def _check_with_bias(fn, x, weight, bias, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 'same' with an even kernel warns (as torch does)
        if bias is None:
            check_op(lambda T, a, w: fn(T)(a, w, **kw), x, weight)
        else:
            check_op(lambda T, a, w, b: fn(T)(a, w, b, **kw), x, weight, bias)


@settings(max_examples=40, deadline=None)
@given(case=conv1d_case())
def test_conv1d_values_and_gradients(case):
    x, weight, bias, kw = case
    _check_with_bias(lambda T: T.nn.functional.conv1d, x, weight, bias, **kw)


def test_conv1d_same_with_even_kernel_warns_and_pads_after():
    x = np.arange(6.0).reshape(1, 1, 6)
    w = np.array([[[1.0, 10.0]]])
    with pytest.warns(UserWarning, match="zero-padded copy of the input"):
        out = fg.nn.functional.conv1d(fg.tensor(x), fg.tensor(w), padding="same")
    # the one extra zero goes after the input: out[i] = x[i] + 10 x[i + 1]
    np.testing.assert_array_equal(out.numpy(), [[[10.0, 21.0, 32.0, 43.0, 54.0, 5.0]]])


@st.composite
def conv3d_case(draw):
    groups = draw(st.sampled_from([1, 2]))
    c, o = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 2)) for _ in range(3))
    stride = tuple(draw(st.integers(1, 2)) for _ in range(3))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(3))
    padding = draw(st.sampled_from([0, 1, (1, 0, 1), "same", "valid"]))
    if padding == "same":
        stride = 1
    size = tuple(draw(st.integers(d * (k - 1) + 1, 4)) for d, k in zip(dilation, kernel))
    rng = _rng(draw)
    x = rng.standard_normal((draw(st.integers(1, 2)), c, *size))
    weight = rng.standard_normal((o, c // groups, *kernel))
    bias = rng.standard_normal(o) if draw(st.booleans()) else None
    return x, weight, bias, dict(stride=stride, padding=padding, dilation=dilation, groups=groups)


@settings(max_examples=25, deadline=None)
@given(case=conv3d_case())
def test_conv3d_values_and_gradients(case):
    x, weight, bias, kw = case
    _check_with_bias(lambda T: T.nn.functional.conv3d, x, weight, bias, **kw)


def test_conv3d_of_an_unbatched_input():
    rng = np.random.default_rng(11)
    check_op(
        lambda T, a, w: T.nn.functional.conv3d(a, w, stride=(2, 1, 1), padding=1),
        rng.standard_normal((2, 3, 3, 4)),
        rng.standard_normal((2, 2, 2, 2, 1)),
    )


@st.composite
def conv_transpose_case(draw, dims):
    groups = draw(st.sampled_from([1, 2]))
    c, o = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 4)) for _ in range(dims))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(dims))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(dims))
    output_padding = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    size = tuple(draw(st.integers(1, 4)) for _ in range(dims))
    full = [(n - 1) * s + d * (k - 1) + 1 for n, s, d, k in zip(size, stride, dilation, kernel)]
    # the output must keep at least one element: out = full - 2 pad + output_padding
    padding = tuple(draw(st.integers(0, (f + op - 1) // 2)) for f, op in zip(full, output_padding))
    rng = _rng(draw)
    x = rng.standard_normal((draw(st.integers(1, 2)), c, *size))
    if draw(st.booleans()):
        x = x[0]
    weight = rng.standard_normal((c, o // groups, *kernel))
    bias = rng.standard_normal(o) if draw(st.booleans()) else None
    return (
        x,
        weight,
        bias,
        dict(stride=stride, padding=padding, output_padding=output_padding, groups=groups, dilation=dilation),
    )


@settings(max_examples=40, deadline=None)
@given(case=conv_transpose_case(2))
def test_conv_transpose2d_values_and_gradients(case):
    x, weight, bias, kw = case
    _check_with_bias(lambda T: T.nn.functional.conv_transpose2d, x, weight, bias, **kw)


@settings(max_examples=40, deadline=None)
@given(case=conv_transpose_case(1))
def test_conv_transpose1d_values_and_gradients(case):
    x, weight, bias, kw = case
    _check_with_bias(lambda T: T.nn.functional.conv_transpose1d, x, weight, bias, **kw)


@settings(max_examples=15, deadline=None)
@given(case=conv_transpose_case(2))
def test_conv_transpose2d_is_the_input_gradient_of_conv2d(case):
    # Without torch: <conv_transpose2d(x, w), p> == <x, conv2d(p, w)> for every p of the output's shape.
    x, weight, _, kw = case
    if x.ndim == 3:
        x = x[None]
    y = fg.nn.functional.conv_transpose2d(fg.tensor(x), fg.tensor(weight), **kw)
    probe = np.random.default_rng(0).standard_normal(y.shape)
    forward = fg.nn.functional.conv2d(
        fg.tensor(probe),
        fg.tensor(weight),
        stride=kw["stride"],
        padding=kw["padding"],
        dilation=kw["dilation"],
        groups=kw["groups"],
    )
    # an output padding of at least the stride (allowed below the dilation) adds outputs conv2d maps
    # to more positions than the input has: those lie after it
    assert forward.shape[:2] == x.shape[:2] and forward.shape[2:] >= x.shape[2:]
    forward = forward.numpy()[..., : x.shape[2], : x.shape[3]]
    np.testing.assert_allclose((y.numpy() * probe).sum(), (x * forward).sum(), rtol=1e-10, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("name", ["conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d"])
def test_float32_matches_torch(name):
    rng = np.random.default_rng(3)
    dims = 3 if name == "conv3d" else 2 if name.endswith("2d") else 1
    x = rng.standard_normal((4, 6, *(7,) * dims)).astype(np.float32)
    # six input channels and four output channels in two groups
    w = rng.standard_normal((6, 2, *(3,) * dims) if "transpose" in name else (4, 3, *(3,) * dims)).astype(
        np.float32
    )
    b = rng.standard_normal(4).astype(np.float32)
    kw = dict(stride=2, padding=1, groups=2)
    if "transpose" in name:
        kw["output_padding"] = 1
    g = rng.standard_normal(
        tuple(
            getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(w), torch.tensor(b), **kw).shape
        )
    ).astype(np.float32)
    results = []
    for T in (fg, torch):
        ts = [T.tensor(a, requires_grad=True) for a in (x, w, b)]
        out = getattr(T.nn.functional, name)(*ts, **kw)
        out.backward(T.tensor(g))
        assert out.dtype == T.float32
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4)


def test_convolutions_gradcheck_without_torch():
    rng = np.random.default_rng(4)

    def t(*shape):
        return fg.tensor(rng.standard_normal(shape), requires_grad=True)

    F = fg.nn.functional
    assert fg.autograd.gradcheck(
        lambda a, w, b: F.conv1d(a, w, b, stride=2, padding=1, dilation=2), (t(2, 2, 7), t(3, 2, 2), t(3))
    )
    assert fg.autograd.gradcheck(
        lambda a, w: F.conv3d(a, w, padding=(1, 0, 1), stride=(1, 2, 1)), (t(1, 2, 3, 4, 3), t(2, 2, 2, 2, 2))
    )
    assert fg.autograd.gradcheck(
        lambda a, w, b: F.conv_transpose2d(
            a, w, b, stride=(2, 3), padding=1, output_padding=(1, 2), groups=2
        ),
        (t(1, 4, 3, 2), t(4, 1, 3, 3), t(2)),
    )
    assert fg.autograd.gradcheck(
        lambda a, w: F.conv_transpose1d(a, w, stride=3, dilation=2, output_padding=1),
        (t(2, 2, 3), t(2, 3, 2)),
    )
    assert fg.autograd.gradgradcheck(
        lambda a, w: F.conv_transpose2d(a, w, stride=2).tanh(), (t(1, 2, 2, 2), t(2, 1, 2, 2))
    )


def test_conv_transpose2d_of_an_empty_batch():
    for T in [fg] + ([torch] if torch is not None else []):
        w = T.ones(3, 2, 3, 3, requires_grad=True)
        y = T.nn.functional.conv_transpose2d(T.ones(0, 3, 4, 4), w, T.ones(2), stride=2, padding=1)
        assert tuple(y.shape) == (0, 2, 7, 7)
        y.sum().backward()
        np.testing.assert_array_equal(w.grad.numpy(), np.zeros((3, 2, 3, 3)))


def test_conv_transpose2d_of_a_single_pixel_is_the_kernel():
    w = np.arange(18.0).reshape(1, 2, 3, 3)
    out = fg.nn.functional.conv_transpose2d(fg.ones(1, 1, 1, 1, dtype=fg.float64), fg.tensor(w))
    np.testing.assert_array_equal(out.numpy(), w)
    strided = fg.nn.functional.conv_transpose2d(
        fg.ones(1, 1, 2, 1, dtype=fg.float64), fg.tensor(w[:, :1]), stride=3, output_padding=(2, 0)
    )
    np.testing.assert_array_equal(strided.numpy()[0, 0], np.concatenate([w[0, 0], w[0, 0], np.zeros((2, 3))]))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_conv_padding_modes_pad_the_input_first(mode, dims):
    fg.manual_seed(0)
    conv = getattr(fg.nn, f"Conv{dims}d")(
        2, 3, 3, padding=(1,) * dims if dims > 1 else 2, padding_mode=mode, dilation=2 if dims == 1 else 1
    ).double()
    x = fg.randn(2, 2, *(5,) * dims, dtype=fg.float64)
    out = conv(x)
    padded = fg.nn.functional.pad(x, conv._reversed_padding_repeated_twice, mode=mode)
    direct = getattr(fg.nn.functional, f"conv{dims}d")(padded, conv.weight, conv.bias, dilation=conv.dilation)
    np.testing.assert_allclose(out.detach().numpy(), direct.detach().numpy(), rtol=1e-12)
    assert out.shape == (2, 3, *(5,) * dims)
    if torch is not None:
        theirs = getattr(torch.nn, f"Conv{dims}d")(
            2, 3, 3, padding=(1,) * dims if dims > 1 else 2, padding_mode=mode, dilation=2 if dims == 1 else 1
        ).double()
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(conv.weight.detach().numpy()))
            theirs.bias.copy_(torch.tensor(conv.bias.detach().numpy()))
        np.testing.assert_allclose(
            out.detach().numpy(), theirs(torch.tensor(x.numpy())).detach().numpy(), rtol=1e-10, atol=1e-12
        )


@needs_torch
@pytest.mark.parametrize("mode", ["reflect", "circular"])
def test_conv_same_padding_with_a_padding_mode_matches_torch(mode):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 2, 6, 5))
    results = []
    for T in (fg, torch):
        T.manual_seed(0)
        conv = T.nn.Conv2d(2, 2, (4, 3), padding="same", padding_mode=mode, dilation=(1, 2)).double()
        with T.no_grad():
            conv.weight.copy_(T.tensor(rng.standard_normal((2, 2, 4, 3)) if T is fg else results[0][1]))
        results.append(
            (conv(T.tensor(x)).detach().numpy(), conv.weight.detach().numpy(), conv.bias.detach().numpy())
        )
    bias_shift = (results[0][2] - results[1][2]).reshape(1, 2, 1, 1)
    np.testing.assert_allclose(results[0][0], results[1][0] + bias_shift, rtol=1e-10, atol=1e-12)


# ---- modules -----------------------------------------------------------------------------

MODULES = {
    "conv1d": lambda nn: nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2),
    "conv1d_same": lambda nn: nn.Conv1d(2, 2, 4, padding="same", padding_mode="reflect", bias=False),
    "conv1d_dil": lambda nn: nn.Conv1d(3, 5, (2,), dilation=3, padding_mode="circular"),
    "conv2d_mode": lambda nn: nn.Conv2d(3, 4, 3, padding=(1, 2), padding_mode="replicate"),
    "conv3d": lambda nn: nn.Conv3d(2, 4, (1, 2, 3), stride=(1, 2, 1), padding=1, groups=2),
    "conv3d_plain": lambda nn: nn.Conv3d(1, 1, 2, bias=False),
    "convt1d": lambda nn: nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
    "convt2d": lambda nn: nn.ConvTranspose2d(64, 32, 4, 2, 1, bias=False),
    "convt2d_dil": lambda nn: nn.ConvTranspose2d(2, 3, (3, 2), dilation=(2, 1), output_padding=(1, 0)),
    "max_pool1d": lambda nn: nn.MaxPool1d(3, 2, 1, ceil_mode=True),
    "avg_pool1d": lambda nn: nn.AvgPool1d(3, 2, 1),
    "avg_pool1d_default": lambda nn: nn.AvgPool1d(4),
    "adaptive_avg1d": lambda nn: nn.AdaptiveAvgPool1d(5),
    "adaptive_max1d": lambda nn: nn.AdaptiveMaxPool1d(3, return_indices=True),
    "adaptive_max2d": lambda nn: nn.AdaptiveMaxPool2d((2, None)),
    "lp_pool1d": lambda nn: nn.LPPool1d(2, 3),
    "lp_pool2d": lambda nn: nn.LPPool2d(1.5, (2, 3), stride=1, ceil_mode=True),
    "max_unpool2d": lambda nn: nn.MaxUnpool2d(2),
    "max_unpool2d_args": lambda nn: nn.MaxUnpool2d((3, 2), stride=1, padding=1),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_reprs_and_parameters_match_torch(name):
    ours, theirs = MODULES[name](fg.nn), MODULES[name](torch.nn)
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()
    ]


@pytest.mark.parametrize(
    "cls, args, fan_in",
    [
        ("Conv1d", (4, 6, 3), 4 * 3),
        ("Conv3d", (2, 4, (1, 2, 3), 1, 0, 1, 2), 1 * 6),
        ("ConvTranspose1d", (4, 6, 3), 6 * 3),
        ("ConvTranspose2d", (6, 4, (2, 3), 1, 0, 0, 2), 2 * 6),
    ],
)
def test_conv_modules_initialise_within_the_fan_in_bound(cls, args, fan_in):
    fg.manual_seed(1)
    module = getattr(fg.nn, cls)(*args)
    bound = 1 / np.sqrt(fan_in)
    weight, bias = module.weight.detach().numpy(), module.bias.detach().numpy()
    assert np.abs(weight).max() <= bound and np.abs(bias).max() <= bound
    # uniform over the whole interval, not a constant
    assert weight.std() > bound / 4 and np.abs(bias).max() > 0


def test_conv_transpose_modules_weight_layout_and_output_size():
    m = fg.nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2)
    assert m.weight.shape == (4, 3, 3, 3)
    x = fg.randn(1, 4, 5, 5)
    assert m(x).shape == (1, 6, 11, 11)
    assert m(x, output_size=(12, 11)).shape == (1, 6, 12, 11)
    assert m(x, output_size=[1, 6, 12, 12]).shape == (1, 6, 12, 12)
    assert m(x[0], output_size=(6, 12, 12)).shape == (6, 12, 12)
    m1 = fg.nn.ConvTranspose1d(2, 2, 3, stride=3, padding=1)
    assert m1(fg.randn(2, 4), output_size=[11]).shape == (2, 11)


# ---- pooling -----------------------------------------------------------------------------


def _every_window_meets_the_input(size, k, stride, padding, dilation, ceil_mode):
    """False when a dilated window lies wholly in the padding (its maximum is -inf, at no input position;
    see the test below)."""
    span = dilation * (k - 1) + 1
    out = (size + 2 * padding - span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return all(any(0 <= o * stride - padding + j * dilation < size for j in range(k)) for o in range(out))


def test_a_dilated_window_wholly_in_the_padding_gives_minus_infinity_at_an_input_position():
    x = fg.tensor(np.arange(10.0).reshape(1, 1, 2, 5), requires_grad=True)
    y, at = fg.nn.functional.max_pool2d(x, 2, 1, padding=1, dilation=(3, 2), return_indices=True)
    assert np.isneginf(y.detach().numpy()).all()
    assert ((at.numpy() >= 0) & (at.numpy() < 10)).all()
    fg.where(fg.isinf(y), fg.zeros_like(y), y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((1, 1, 2, 5)))
    one = fg.nn.functional.max_pool1d(fg.tensor([[[3.0]]]), 2, 1, padding=1, dilation=2)
    assert one.shape == (1, 1, 1) and np.isneginf(one.item())
    # Windows that do meet the input keep their maxima beside the empty ones.
    z = fg.tensor(np.arange(4.0).reshape(1, 1, 4), requires_grad=True)
    out = fg.nn.functional.max_pool1d(z, 2, 1, padding=1, dilation=3)
    if torch is not None:
        expected = torch.nn.functional.max_pool1d(
            torch.arange(4.0).reshape(1, 1, 4), 2, 1, padding=1, dilation=3
        )
        np.testing.assert_array_equal(out.detach().numpy(), expected.numpy())


@st.composite
def pool1d_case(draw):
    k = draw(st.integers(1, 4))
    padding = draw(st.integers(0, k // 2))
    stride = draw(st.integers(1, 3))
    dilation = draw(st.integers(1, 2))
    length = draw(st.integers(max(1, dilation * (k - 1) + 1 - 2 * padding), 9))
    rng = _rng(draw)
    x = rng.permutation(2 * 3 * length).reshape(2, 3, length) * 0.1
    if draw(st.booleans()):
        x = x[0]
    return x, k, stride, padding, dilation


@settings(max_examples=40, deadline=None)
@given(case=pool1d_case(), ceil_mode=st.booleans())
def test_max_pool1d(case, ceil_mode):
    x, k, stride, padding, dilation = case
    if not _every_window_meets_the_input(x.shape[-1], k, stride, padding, dilation, ceil_mode):
        return
    check_op(lambda T, a: T.nn.functional.max_pool1d(a, k, stride, padding, dilation, ceil_mode), x)
    check_op(
        lambda T, a: T.nn.functional.max_pool1d(
            a, k, stride, padding, dilation, ceil_mode, return_indices=True
        )[1],
        x,
        grad=False,
    )


@settings(max_examples=40, deadline=None)
@given(case=pool1d_case(), ceil_mode=st.booleans(), include_pad=st.booleans())
def test_avg_pool1d(case, ceil_mode, include_pad):
    x, k, stride, padding, _ = case
    if x.shape[-1] + 2 * padding < k:
        return
    check_op(lambda T, a: T.nn.functional.avg_pool1d(a, k, stride, padding, ceil_mode, include_pad), x)


@st.composite
def pool2d_case(draw):
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    padding = (draw(st.integers(0, kh // 2)), draw(st.integers(0, kw // 2)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    h, w = draw(st.integers(kh, 7)), draw(st.integers(kw, 7))
    rng = _rng(draw)
    x = rng.permutation(2 * 3 * h * w).reshape(2, 3, h, w) * 0.1
    if draw(st.booleans()):
        x = x[0]
    return x, (kh, kw), stride, padding


@settings(max_examples=40, deadline=None)
@given(case=pool2d_case(), include_pad=st.booleans(), divisor=st.sampled_from([None, 1, 5]))
def test_avg_pool2d_ceil_mode(case, include_pad, divisor):
    x, k, stride, padding = case
    check_op(lambda T, a: T.nn.functional.avg_pool2d(a, k, stride, padding, True, include_pad, divisor), x)


@settings(max_examples=40, deadline=None)
@given(case=pool2d_case(), ceil_mode=st.booleans(), dilation=st.sampled_from([1, 2]))
def test_max_pool2d_return_indices(case, ceil_mode, dilation):
    x, k, stride, padding = case
    if any(
        dilation * (kk - 1) + 1 > n + 2 * p
        or not _every_window_meets_the_input(n, kk, s, p, dilation, ceil_mode)
        for n, kk, s, p in zip(x.shape[-2:], k, stride, padding)
    ):
        return
    out, idx = fg.nn.functional.max_pool2d(fg.tensor(x), k, stride, padding, dilation, ceil_mode, True)
    assert idx.dtype == fg.int64 and idx.shape == out.shape
    # every index names the maximum it was returned with
    flat = x.reshape(*x.shape[:-2], -1)
    np.testing.assert_array_equal(
        np.take_along_axis(flat, idx.numpy().reshape(*idx.shape[:-2], -1), -1),
        out.numpy().reshape(*out.shape[:-2], -1),
    )
    check_op(
        lambda T, a: T.nn.functional.max_pool2d(a, k, stride, padding, dilation, ceil_mode, True)[1],
        x,
        grad=False,
    )


@needs_torch
def test_max_pool2d_indices_of_ties_and_nan_match_torch():
    x = np.zeros((1, 2, 5, 6))
    x[0, 1, 2:, 3:] = 1.0
    x[0, 0, 1, 1] = np.nan
    for kw in (
        dict(kernel_size=3, stride=2, padding=1, dilation=(1, 2), ceil_mode=True),
        dict(kernel_size=2),
    ):
        ours = fg.nn.functional.max_pool2d(fg.tensor(x), return_indices=True, **kw)[1].numpy()
        theirs = torch.nn.functional.max_pool2d(torch.tensor(x), return_indices=True, **kw)[1].numpy()
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("size", [1, 2, 3, (2, 3), (3, None), (4, 5), 7])
def test_adaptive_max_pool2d(size):
    x = np.random.default_rng(5).permutation(2 * 3 * 6 * 7).reshape(2, 3, 6, 7) * 0.1
    check_op(lambda T, a: T.nn.functional.adaptive_max_pool2d(a, size), x)
    check_op(lambda T, a: T.nn.functional.adaptive_max_pool2d(a, size, True)[1], x, grad=False)
    check_op(lambda T, a: T.nn.functional.adaptive_max_pool2d(a, size), x[0])


@pytest.mark.parametrize("size", [1, 2, 3, (4,), 7, 9])
def test_adaptive_1d_pools(size):
    x = np.random.default_rng(6).permutation(2 * 3 * 7).reshape(2, 3, 7) * 0.1
    check_op(lambda T, a: T.nn.functional.adaptive_avg_pool1d(a, size), x)
    check_op(lambda T, a: T.nn.functional.adaptive_max_pool1d(a, size), x)
    check_op(
        lambda T, a: T.nn.functional.adaptive_max_pool1d(a, size, return_indices=True)[1], x[0], grad=False
    )


def test_adaptive_max_pool_takes_the_maximum_of_overlapping_bins_without_torch():
    x = fg.tensor([[[1.0, 5.0, 2.0, 7.0, 3.0]]], requires_grad=True)
    out, idx = fg.nn.functional.adaptive_max_pool1d(x, 3, return_indices=True)
    # bins [0, 2), [1, 4), [3, 5)
    np.testing.assert_array_equal(out.detach().numpy(), [[[5.0, 7.0, 7.0]]])
    np.testing.assert_array_equal(idx.numpy(), [[[1, 3, 3]]])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[[0.0, 1.0, 0.0, 2.0, 0.0]]])


@pytest.mark.parametrize("norm_type", [1.0, 2.0, 3.0])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_lp_pools(norm_type, ceil_mode):
    rng = np.random.default_rng(7)
    x = rng.random((2, 3, 5, 7)) + 0.5  # positive: fractional powers of negative windows are NaN in both
    check_op(lambda T, a: T.nn.functional.lp_pool2d(a, norm_type, (2, 3), stride=2, ceil_mode=ceil_mode), x)
    check_op(lambda T, a: T.nn.functional.lp_pool1d(a, norm_type, 3, ceil_mode=ceil_mode), x[:, :, 0])


def test_lp_pool2d_of_norm_one_is_the_window_sum():
    x = np.abs(np.random.default_rng(8).standard_normal((1, 1, 4, 4)))
    out = fg.nn.functional.lp_pool2d(fg.tensor(x), 1, 2).numpy()
    np.testing.assert_allclose(out, x.reshape(1, 1, 2, 2, 2, 2).sum((3, 5)), rtol=1e-12)


@pytest.mark.parametrize(
    "kw",
    [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=(2, 3), stride=(1, 2))],
)
def test_max_unpool2d_inverts_max_pool2d_at_the_maxima(kw):
    x = np.random.default_rng(9).permutation(2 * 3 * 5 * 6).reshape(2, 3, 5, 6) * 0.1
    pooled, idx = fg.nn.functional.max_pool2d(fg.tensor(x), return_indices=True, **kw)
    size = x.shape[-2:]
    restored = fg.nn.functional.max_unpool2d(pooled, idx, output_size=size, **kw).numpy()
    kept = restored != 0
    np.testing.assert_array_equal(restored[kept], x[kept])
    np.testing.assert_array_equal(np.sort(restored[kept]), np.unique(pooled.numpy()))
    if kw == dict(kernel_size=2):  # distinct indices: the finite differences are well defined
        check_op(
            lambda T, a: T.nn.functional.max_unpool2d(a, T.tensor(idx.numpy()), output_size=size, **kw),
            pooled.numpy(),
        )
    # overlapping windows repeat an index: each copy's gradient is the output's gradient there
    p = fg.tensor(pooled.numpy(), requires_grad=True)
    g = np.random.default_rng(1).standard_normal((2, 3, *size))
    fg.nn.functional.max_unpool2d(p, idx, output_size=size, **kw).backward(fg.tensor(g))
    expected = np.take_along_axis(g.reshape(2, 3, -1), idx.numpy().reshape(2, 3, -1), -1).reshape(p.shape)
    np.testing.assert_array_equal(p.grad.numpy(), expected)
    if torch is not None:
        t = torch.tensor(pooled.numpy(), requires_grad=True)
        out = torch.nn.functional.max_unpool2d(t, torch.tensor(idx.numpy()), output_size=size, **kw)
        out.backward(torch.tensor(g))
        np.testing.assert_array_equal(restored, out.detach().numpy())
        np.testing.assert_array_equal(p.grad.numpy(), t.grad.numpy())


def test_max_unpool2d_module_and_default_size():
    pool, unpool = fg.nn.MaxPool2d(2, return_indices=True), fg.nn.MaxUnpool2d(2)
    x = fg.arange(16.0).reshape(1, 1, 4, 4)
    out = unpool(*pool(x))
    expected = np.zeros((4, 4))
    expected[1::2, 1::2] = [[5, 7], [13, 15]]
    np.testing.assert_array_equal(out.numpy()[0, 0], expected)


# ---- errors ------------------------------------------------------------------------------

ERRORS = {
    "conv1d dims": (
        lambda F, T: F.conv1d(T.zeros(3), T.zeros(1, 3, 1)),
        RuntimeError,
        r"Expected 2D \(unbatched\) or 3D \(batched\) input to conv1d, but got input of "
        r"size: \[3\]",
    ),
    "conv1d channels": (
        lambda F, T: F.conv1d(T.zeros(1, 2, 5), T.zeros(4, 3, 3)),
        RuntimeError,
        r"Given groups=1, weight of size \[4, 3, 3\], expected input\[1, 2, 5\] to have 3 channels, "
        "but got 2 channels instead",
    ),
    "conv1d kernel": (
        lambda F, T: F.conv1d(T.zeros(1, 1, 2), T.zeros(1, 1, 3)),
        RuntimeError,
        r"Calculated padded input size per channel: \(2\). Kernel size: \(3\). Kernel size can't",
    ),
    "conv1d weight dims": (
        lambda F, T: F.conv1d(T.zeros(1, 1, 5), T.zeros(1, 1, 3, 3)),
        RuntimeError,
        "Expected 4-dimensional input for 4-dimensional weight",
    ),
    "conv1d stride": (
        lambda F, T: F.conv1d(T.zeros(1, 1, 5), T.zeros(1, 1, 3), stride=(1, 2)),
        RuntimeError,
        r"expected stride to be a single integer value or a list of 1 values to match the convolution "
        r"dimensions, but got stride=\[1, 2\]",
    ),
    "conv1d same stride": (
        lambda F, T: F.conv1d(T.zeros(1, 1, 5), T.zeros(1, 1, 3), stride=2, padding="same"),
        RuntimeError,
        "padding='same' is not supported for strided convolutions",
    ),
    "conv3d dims": (
        lambda F, T: F.conv3d(T.zeros(1, 1, 3), T.zeros(1, 1, 1, 1, 1)),
        RuntimeError,
        r"Expected 4D \(unbatched\) or 5D \(batched\) input to conv3d",
    ),
    "conv3d channels": (
        lambda F, T: F.conv3d(T.zeros(1, 2, 3, 3, 3), T.zeros(1, 1, 1, 1, 1)),
        RuntimeError,
        r"expected input\[1, 2, 3, 3, 3\] to have 1 channels, but got 2 channels instead",
    ),
    "conv3d kernel": (
        lambda F, T: F.conv3d(T.zeros(1, 1, 2, 3, 3), T.zeros(1, 1, 3, 1, 1)),
        RuntimeError,
        "Kernel size can't be greater than actual input size",
    ),
    "convt channels": (
        lambda F, T: F.conv_transpose2d(T.zeros(1, 2, 5, 5), T.zeros(4, 3, 3, 3)),
        RuntimeError,
        r"Given transposed=1, weight of size \[4, 3, 3, 3\], expected input\[1, 2, 5, 5\] to have 4 "
        "channels, but got 2 channels instead",
    ),
    "convt output padding": (
        lambda F, T: F.conv_transpose2d(T.zeros(1, 4, 5, 5), T.zeros(4, 3, 3, 3), stride=2, output_padding=2),
        RuntimeError,
        "output padding must be smaller than either stride or dilation, but got output_padding_height: "
        "2 output_padding_width: 2 stride_height: 2 stride_width: 2 dilation_height: 1 dilation_width: 1",
    ),
    "convt1d output padding": (
        lambda F, T: F.conv_transpose1d(T.zeros(1, 4, 5), T.zeros(4, 3, 3), stride=2, output_padding=3),
        RuntimeError,
        "output padding must be smaller than either stride or dilation",
    ),
    "convt dims": (
        lambda F, T: F.conv_transpose2d(T.zeros(4, 5), T.zeros(4, 3, 3, 3)),
        RuntimeError,
        r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv_transpose2d, but got input of size: "
        r"\[4, 5\]",
    ),
    "convt1d dims": (
        lambda F, T: F.conv_transpose1d(T.zeros(4), T.zeros(4, 3, 3)),
        RuntimeError,
        r"Expected 2D \(unbatched\) or 3D \(batched\) input to conv_transpose1d",
    ),
    "convt empty plane": (
        lambda F, T: F.conv_transpose2d(T.zeros(1, 3, 0, 4), T.zeros(3, 2, 3, 3)),
        RuntimeError,
        r"Only zero batch or zero channel inputs are supported, but got input shape: \[1, 3, 0, 4\]",
    ),
    "convt too small": (
        lambda F, T: F.conv_transpose2d(T.zeros(1, 1, 1, 1), T.zeros(1, 1, 1, 1), padding=1),
        RuntimeError,
        r"Calculated output size per channel: \(-1 x -1\). Output size is too small",
    ),
    "convt groups": (
        lambda F, T: F.conv_transpose2d(T.zeros(1, 4, 5, 5), T.zeros(4, 3, 3, 3), groups=3),
        RuntimeError,
        "Given groups=3, expected weight to be divisible by 3 at dimension 0",
    ),
    "convt module mode": (
        lambda F, T: T.nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect"),
        ValueError,
        'Only "zeros" padding mode is supported for ConvTranspose2d',
    ),
    "convt1d module mode": (
        lambda F, T: T.nn.ConvTranspose1d(1, 1, 3, padding_mode="circular"),
        ValueError,
        'Only "zeros" padding mode is supported for ConvTranspose1d',
    ),
    "conv module mode": (
        lambda F, T: T.nn.Conv1d(1, 1, 3, padding_mode="foo"),
        ValueError,
        "padding_mode must be one of .*, but got padding_mode='foo'",
    ),
    "conv3d module groups": (
        lambda F, T: T.nn.Conv3d(2, 3, 1, groups=2),
        ValueError,
        "out_channels must be divisible by groups",
    ),
    "conv1d module same stride": (
        lambda F, T: T.nn.Conv1d(1, 1, 3, stride=2, padding="same"),
        ValueError,
        "padding='same' is not supported for strided convolutions",
    ),
    "convt output size": (
        lambda F, T: T.nn.ConvTranspose2d(1, 1, 3, stride=2)(T.zeros(1, 1, 4, 4), output_size=(20, 20)),
        ValueError,
        r"requested an output size of \(20, 20\), but valid sizes range from \[9, 9\] to \[10, 10\]",
    ),
    "convt output size length": (
        lambda F, T: T.nn.ConvTranspose2d(1, 1, 3, stride=2)(T.zeros(1, 1, 4, 4), output_size=(20,)),
        ValueError,
        r"ConvTranspose2D: for 4D input, output_size must have 2 or 4 elements \(got 1\)",
    ),
    "max_pool1d dims": (
        lambda F, T: F.max_pool1d(T.zeros(1, 1, 1, 4), 2),
        RuntimeError,
        r"max_pool1d: Expected 2D or 3D \(batch mode\) tensor with optional 0 dim batch size for "
        r"input, but got:\[1, 1, 1, 4\]",
    ),
    "max_pool1d padding": (
        lambda F, T: F.max_pool1d(T.zeros(1, 1, 4), 2, padding=2),
        RuntimeError,
        r"max_pool1d\(\) padding should be at most half of kernel size, but got padding=2 and "
        "kernel_size=2",
    ),
    "avg_pool1d dims": (
        lambda F, T: F.avg_pool1d(T.zeros(1, 1, 1, 4), 2),
        RuntimeError,
        r"Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' \(while "
        r"checking arguments for avg_pool1d\)",
    ),
    "avg_pool2d padding": (
        lambda F, T: F.avg_pool2d(T.zeros(1, 1, 4, 4), 2, padding=2),
        RuntimeError,
        "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and dilation=1",
    ),
    "avg_pool2d divisor": (
        lambda F, T: F.avg_pool2d(T.zeros(1, 1, 4, 4), 2, divisor_override=0),
        RuntimeError,
        "divisor must be not zero",
    ),
    "avg_pool1d padding names the width": (
        lambda F, T: F.avg_pool1d(T.zeros(1, 1, 4), 2, padding=5),
        RuntimeError,
        "pad should be at most half of effective kernel size, but got pad=5, kernel_size=2 and dilation=1",
    ),
    "avg_pool2d padding of the second dim": (
        lambda F, T: F.avg_pool2d(T.zeros(1, 1, 4, 4), (4, 2), padding=(1, 5)),
        RuntimeError,
        "but got pad=5, kernel_size=2 and dilation=1",
    ),
    "avg_pool1d negative padding": (
        lambda F, T: F.avg_pool1d(T.zeros(1, 1, 4), 2, padding=-1),
        RuntimeError,
        "pad must be non-negative, but got pad: -1",
    ),
    "avg_pool1d zero kernel": (
        lambda F, T: F.avg_pool1d(T.zeros(1, 1, 4), 0),
        RuntimeError,
        "stride should not be zero",
    ),
    "avg_pool2d zero stride": (
        lambda F, T: F.avg_pool2d(T.zeros(1, 1, 4, 4), 2, stride=0),
        RuntimeError,
        "stride should not be zero",
    ),
    "avg_pool3d zero stride": (
        lambda F, T: F.avg_pool3d(T.zeros(1, 1, 4, 4, 4), 2, stride=0),
        RuntimeError,
        "stride should not be zero",
    ),
    "max_pool2d zero stride": (
        lambda F, T: F.max_pool2d(T.zeros(1, 1, 4, 4), 2, stride=(1, 0)),
        RuntimeError,
        "stride should not be zero",
    ),
    "max_pool2d negative padding": (
        lambda F, T: F.max_pool2d(T.zeros(1, 1, 4, 4), 2, padding=-1),
        RuntimeError,
        "pad must be non-negative, but got pad: -1",
    ),
    "max_pool3d zero stride": (
        lambda F, T: F.max_pool3d(T.zeros(1, 1, 4, 4, 4), 2, stride=0),
        RuntimeError,
        "stride should not be zero",
    ),
    "max_pool1d zero kernel": (
        lambda F, T: F.max_pool1d(T.zeros(1, 1, 4), 0),
        RuntimeError,
        r"max_pool1d\(\) kernel_size must be greater than zero, but got 0",
    ),
    "max_pool1d zero stride": (
        lambda F, T: F.max_pool1d(T.zeros(1, 1, 4), 2, stride=0),
        RuntimeError,
        r"max_pool1d\(\) stride must be greater than zero, but got 0",
    ),
    "max_pool1d negative padding": (
        lambda F, T: F.max_pool1d(T.zeros(1, 1, 4), 2, padding=-1),
        RuntimeError,
        r"max_pool1d\(\) padding must be non-negative, but got -1",
    ),
    "max_pool1d zero dilation": (
        lambda F, T: F.max_pool1d(T.zeros(1, 1, 4), 2, dilation=0),
        RuntimeError,
        r"max_pool1d\(\) dilation must be greater than zero, but got 0",
    ),
    "adaptive_avg_pool1d dims": (
        lambda F, T: F.adaptive_avg_pool1d(T.zeros(1, 1, 1, 4), 2),
        RuntimeError,
        "4-dimensional tensor for argument #1 'self' .*adaptive_avg_pool1d",
    ),
    "adaptive_max_pool1d size": (
        lambda F, T: F.adaptive_max_pool1d(T.zeros(1, 1, 4), (2, 2)),
        RuntimeError,
        r"adaptive_max_pool1d\(\) argument 'output_size' should contain one int \(got 2\)",
    ),
    "adaptive_max_pool2d dims": (
        lambda F, T: F.adaptive_max_pool2d(T.zeros(4, 4), 2),
        RuntimeError,
        r"adaptive_max_pool2d\(\): Expected 3D or 4D tensor, but got: \[4, 4\]",
    ),
    "max_unpool2d size": (
        lambda F, T: F.max_unpool2d(
            T.zeros(1, 1, 2, 2), T.zeros(1, 1, 2, 2, dtype=T.int64), 2, output_size=(9, 9)
        ),
        ValueError,
        r'invalid output_size "\(9, 9\)" \(dim 0 must be between 2 and 6\)',
    ),
    "max_unpool2d boundary": (
        lambda F, T: F.max_unpool2d(
            T.zeros(1, 1, 2, 2), T.zeros(1, 1, 2, 2, dtype=T.int64), 2, output_size=(4, 6)
        ),
        ValueError,
        r"dim 1 must be between 2 and 6",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_raises_like_torch(*ERRORS[name])


@pytest.mark.parametrize("pad", [0, 1, 2])
def test_conv_tbc_is_conv1d_in_time_batch_channel_layout(pad):
    rng = np.random.default_rng(pad)
    x, w, b = (fg.tensor(rng.standard_normal(s), requires_grad=True) for s in ((6, 2, 3), (3, 3, 4), (4,)))
    out = fg.conv_tbc(x, w, b, pad)
    assert out.shape == (6 + 2 * pad - 2, 2, 4)
    expect = fg.nn.functional.conv1d(x.permute(1, 2, 0), w.permute(2, 1, 0), b, padding=pad).permute(2, 0, 1)
    np.testing.assert_allclose(out.detach().numpy(), expect.detach().numpy(), rtol=1e-12)
    assert fg.autograd.gradcheck(lambda x, w, b: fg.nn.functional.conv_tbc(x, w, b, pad), (x, w, b))
    if torch is not None:
        theirs = torch.conv_tbc(*(torch.tensor(t.detach().numpy()) for t in (x, w, b)), pad)
        np.testing.assert_allclose(out.detach().numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        (((2, 3), (3, 3, 4), (4,)), "Input must have 3 dims: time, batch, in_channel"),
        (((6, 2, 3), (3, 4), (4,)), "Weight tensor must have 3 dims"),
        (((6, 2, 3), (3, 3, 4), (2, 2)), "Bias must be 1-D"),
        (
            ((6, 2, 3), (3, 2, 4), (4,)),
            r"Input dim 2 \(input channels\) is not == dim 1 in the weight tensor",
        ),
        (
            ((6, 2, 3), (3, 3, 4), (2,)),
            r"Bias size must equal dim 2 in the weight tensor \(output channels\).",
        ),
    ],
)
def test_conv_tbc_errors(shapes, message):
    with pytest.raises(RuntimeError, match=message):
        fg.conv_tbc(*(fg.randn(*s) for s in shapes))

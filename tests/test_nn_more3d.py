"""conv_transpose3d / ConvTranspose3d, adaptive_max_pool3d, lp_pool3d, max_unpool1d/3d, fractional
max pooling, AdaptiveLogSoftmaxWithLoss and grid_sample's bicubic mode (and nearest's grid
gradient): values and gradients against finite differences and torch (float64 and float32),
torch's errors, and the modules' state_dicts loaded both ways."""

import re

import numpy as np
import pytest

import ferrograd as fg

from helpers import assert_raises_like_torch, check_op, has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch not installed")


def _cotangent(shape):
    return np.cos(np.arange(int(np.prod(shape)))).reshape(shape)


def _run(T, fn, arrays, dtype):
    """``fn(T, *tensors)``'s output (first element if a tuple), the rest of a tuple, and the
    gradients of the floating inputs for a fixed cotangent."""
    ts = [T.tensor(a.astype(dtype), requires_grad=a.dtype.kind == "f") for a in arrays]
    result = fn(T, *ts)
    out, extra = (result[0], list(result[1:])) if isinstance(result, tuple) else (result, [])
    out.backward(T.tensor(_cotangent(tuple(out.shape)).astype(dtype)))
    grads = [t.grad.numpy() for t in ts if t.requires_grad]
    return out.detach().numpy(), [e.numpy() for e in extra], grads


def _compare(fn, *arrays, dtype=np.float64, atol=1e-10):
    """ferrograd's and torch's outputs, extra outputs (exactly) and gradients agree."""
    got, got_extra, got_grads = _run(fg, fn, arrays, dtype)
    want, want_extra, want_grads = _run(torch, fn, arrays, dtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=atol, rtol=atol)
    for g, w in zip(got_extra, want_extra):
        np.testing.assert_array_equal(g, w)
    grad_atol = atol if dtype == np.float64 else max(atol, 1e-5)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, atol=grad_atol, rtol=grad_atol)
    return got


def _raises(fn, kind, message):
    assert_raises_like_torch(lambda F, T: fn(T), kind, re.escape(message))


def _state_round_trip(make, args=(), kwargs=None):
    """state_dict keys and shapes equal torch's, and values load both ways."""
    kwargs = kwargs or {}
    ours = make(fg)(*args, **kwargs)
    if not has_torch:
        ours.load_state_dict(ours.state_dict())
        return ours, None
    theirs = make(torch)(*args, **kwargs).double()
    ours = ours.double()
    ours_sd, theirs_sd = ours.state_dict(), theirs.state_dict()
    assert list(ours_sd) == list(theirs_sd)
    for k in ours_sd:
        assert tuple(ours_sd[k].shape) == tuple(theirs_sd[k].shape)
    ours.load_state_dict({k: fg.tensor(v.detach().numpy()) for k, v in theirs_sd.items()})
    for k, v in ours.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), theirs_sd[k].detach().numpy())
    with torch.no_grad():
        for p in theirs.parameters():
            p.mul_(0.5)
    ours.load_state_dict({k: fg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(v.detach().numpy(), ours.state_dict()[k].numpy())
    return ours, theirs


# ---- conv_transpose3d ---------------------------------------------------------------------

CONV_T3D = [
    # (in, out, groups), kernel, stride, padding, output_padding, dilation, input spatial
    ((2, 3, 1), 2, 1, 0, 0, 1, (2, 3, 2)),
    ((4, 6, 2), (2, 3, 2), (2, 1, 3), (1, 0, 1), (1, 0, 2), (1, 2, 1), (3, 2, 3)),
    ((2, 2, 1), (3, 1, 2), (3, 2, 1), (2, 0, 0), (2, 1, 0), (2, 1, 1), (2, 2, 2)),
    ((3, 3, 3), 2, 2, 1, 1, 1, (2, 2, 2)),
    ((2, 4, 2), (1, 2, 2), (1, 2, 2), (0, 1, 0), (0, 1, 1), 1, (3, 2, 2)),
]


@pytest.mark.parametrize("case", CONV_T3D)
@pytest.mark.parametrize("with_bias", [True, False])
def test_conv_transpose3d_matches_finite_differences_and_torch(case, with_bias):
    (cin, cout, groups), k, s, p, op, d, spatial = case
    rng = np.random.default_rng(0)
    kernel = (k,) * 3 if isinstance(k, int) else k
    x = rng.standard_normal((2, cin, *spatial))
    w = rng.standard_normal((cin, cout // groups, *kernel))
    kw = dict(stride=s, padding=p, output_padding=op, groups=groups, dilation=d)
    if with_bias:
        out = check_op(
            lambda T, a, b_, c_: T.nn.functional.conv_transpose3d(a, b_, c_, **kw),
            x,
            w,
            rng.standard_normal(cout),
        )
    else:
        out = check_op(lambda T, a, b_: T.nn.functional.conv_transpose3d(a, b_, **kw), x, w)
    expected = [
        (n - 1) * st - 2 * pd + dl * (kk - 1) + o + 1
        for n, st, pd, dl, kk, o in zip(
            spatial,
            *(v if isinstance(v, tuple) else (v,) * 3 for v in (s, p, d)),
            kernel,
            op if isinstance(op, tuple) else (op,) * 3,
        )
    ]
    assert tuple(out.shape) == (2, cout, *expected)


@needs_torch
@pytest.mark.parametrize("case", CONV_T3D)
def test_conv_transpose3d_float32_and_unbatched(case):
    (cin, cout, groups), k, s, p, op, d, spatial = case
    rng = np.random.default_rng(1)
    kernel = (k,) * 3 if isinstance(k, int) else k
    x = rng.standard_normal((2, cin, *spatial))
    w = rng.standard_normal((cin, cout // groups, *kernel))
    b = rng.standard_normal(cout)
    kw = dict(stride=s, padding=p, output_padding=op, groups=groups, dilation=d)

    def fn(T, a, w_, b_):
        return T.nn.functional.conv_transpose3d(a, w_, b_, **kw)

    out = _compare(fn, x, w, b, dtype=np.float32, atol=1e-4)
    assert out.dtype == np.float32
    _compare(fn, x[0], w, b)


@needs_torch
def test_conv_transpose3d_double_backward_matches_torch():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((1, 2, 2, 3, 2)), rng.standard_normal((2, 2, 2, 2, 2))
    results = []
    for T in (fg, torch):
        xt, wt = T.tensor(x, requires_grad=True), T.tensor(w, requires_grad=True)
        out = T.nn.functional.conv_transpose3d(xt, wt, stride=2, padding=1)
        (gx,) = T.autograd.grad((out * out).sum(), [xt], create_graph=True)
        (gw,) = T.autograd.grad((gx * gx).sum(), [wt])
        results.append(gw.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], atol=1e-10)


def test_conv_transpose3d_errors_match_torch():
    def x(T):
        return T.zeros((2, 4, 3, 4, 5))

    def w(T):
        return T.zeros((4, 3, 2, 2, 2))

    _raises(
        lambda T: T.nn.functional.conv_transpose3d(x(T), w(T), stride=(2, 1, 1), output_padding=(1, 1, 0)),
        RuntimeError,
        "output padding must be smaller than either stride or dilation, but got output_padding_depth: 1 "
        "output_padding_height: 1 output_padding_width: 0 stride_depth: 2 stride_height: 1 stride_width: 1 "
        "dilation_depth: 1 dilation_height: 1 dilation_width: 1",
    )
    _raises(
        lambda T: T.nn.functional.conv_transpose3d(x(T)[:, :3], w(T)),
        RuntimeError,
        "Given transposed=1, weight of size [4, 3, 2, 2, 2], expected input[2, 3, 3, 4, 5] to have 4 channels, "
        "but got 3 channels instead",
    )
    _raises(
        lambda T: T.nn.functional.conv_transpose3d(x(T)[0, 0], w(T)),
        RuntimeError,
        "Expected 4D (unbatched) or 5D (batched) input to conv_transpose3d, but got input of size: [3, 4, 5]",
    )
    _raises(
        lambda T: T.nn.functional.conv_transpose3d(x(T), w(T), groups=3),
        RuntimeError,
        "Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight of size "
        "[[4, 3, 2, 2, 2]] instead",
    )
    _raises(
        lambda T: T.nn.functional.conv_transpose3d(x(T), w(T), T.zeros(5)),
        RuntimeError,
        "Given transposed=1, weight of size [4, 3, 2, 2, 2], expected bias to be 1-dimensional with 3 "
        "elements, but got bias of size [5] instead",
    )


def test_conv_transpose3d_module_state_dict_output_size_and_repr():
    ours, theirs = _state_round_trip(
        lambda T: T.nn.ConvTranspose3d, (4, 6, (2, 3, 2)), dict(stride=(2, 1, 2), padding=1, groups=2)
    )
    assert tuple(ours.weight.shape) == (4, 3, 2, 3, 2) and tuple(ours.bias.shape) == (6,)
    x = np.random.default_rng(3).standard_normal((2, 4, 3, 4, 3))
    out = ours(fg.tensor(x), output_size=[5, 4, 5])
    assert tuple(out.shape) == (2, 6, 5, 4, 5)
    assert tuple(ours(fg.tensor(x), output_size=[2, 6, 4, 4, 4]).shape) == (2, 6, 4, 4, 4)
    with pytest.raises(ValueError, match=re.escape("ConvTranspose3D: for 5D input, output_size must have 3")):
        ours(fg.tensor(x), output_size=[5, 4])
    with pytest.raises(ValueError, match=re.escape("requested an output size of [6, 4, 6], but valid sizes")):
        ours(fg.tensor(x), output_size=[6, 4, 6])
    if theirs is not None:
        np.testing.assert_allclose(
            out.detach().numpy(), theirs(torch.tensor(x), output_size=[5, 4, 5]).detach().numpy(), atol=1e-12
        )
        assert repr(ours) == repr(theirs)
    lazy = fg.nn.LazyConvTranspose3d(2, 2)
    lazy(fg.zeros((1, 3, 2, 2, 2)))
    assert type(lazy) is fg.nn.ConvTranspose3d and tuple(lazy.weight.shape) == (3, 2, 2, 2, 2)


# ---- adaptive_max_pool3d, lp_pool3d, max_unpool1d / 3d -------------------------------------


@pytest.mark.parametrize("size", [2, (3, 2, 4), (1, None, 2), (4, 3, 5), (1, 1, 1)])
def test_adaptive_max_pool3d_values_gradients_indices(size):
    x = np.random.default_rng(4).standard_normal((2, 2, 4, 3, 5))
    check_op(lambda T, a: T.nn.functional.adaptive_max_pool3d(a, size), x)
    if has_torch:
        for dtype in (np.float64, np.float32):
            _compare(
                lambda T, a: T.nn.functional.adaptive_max_pool3d(a, size, return_indices=True), x, dtype=dtype
            )
            _compare(
                lambda T, a: T.nn.functional.adaptive_max_pool3d_with_indices(a, size), x[0], dtype=dtype
            )


def test_adaptive_max_pool3d_module_and_errors():
    x = fg.tensor(np.random.default_rng(5).standard_normal((2, 5, 6, 7)))
    out, idx = fg.nn.AdaptiveMaxPool3d((2, 3, 2), return_indices=True)(x)
    assert tuple(out.shape) == tuple(idx.shape) == (2, 2, 3, 2) and idx.dtype == fg.int64
    flat = x.reshape((2, -1))
    np.testing.assert_array_equal(flat.gather(1, idx.reshape((2, -1))).numpy(), out.reshape((2, -1)).numpy())
    assert repr(fg.nn.AdaptiveMaxPool3d(2)) == "AdaptiveMaxPool3d(output_size=2)"
    _raises(
        lambda T: T.nn.functional.adaptive_max_pool3d(T.zeros((5, 6, 7)), 2),
        RuntimeError,
        "adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: [5, 6, 7]",
    )
    _raises(
        lambda T: T.nn.functional.adaptive_max_pool3d(T.zeros((1, 5, 6, 7)), (2, 3)),
        RuntimeError,
        "adaptive_max_pool3d(): internal error: output_size.size() must be 3",
    )


@pytest.mark.parametrize(
    "norm, kernel, stride, ceil",
    [(2, (2, 3, 2), None, False), (3, 2, (1, 2, 3), True), (1.5, (1, 2, 2), 1, False)],
)
def test_lp_pool3d(norm, kernel, stride, ceil):
    x = np.random.default_rng(6).uniform(0.5, 2.0, (2, 2, 4, 5, 5))
    check_op(lambda T, a: T.nn.functional.lp_pool3d(a, norm, kernel, stride, ceil), x)
    if has_torch:
        _compare(lambda T, a: T.nn.LPPool3d(norm, kernel, stride, ceil)(a), x[0], dtype=np.float32, atol=1e-5)
        assert repr(fg.nn.LPPool3d(norm, kernel, stride, ceil)) == repr(
            torch.nn.LPPool3d(norm, kernel, stride, ceil)
        )
    _raises(
        lambda T: T.nn.functional.lp_pool3d(T.zeros((4, 5, 5)), 2, 2),
        RuntimeError,
        "non-empty 4D or 5D (batch mode) tensor expected for input",
    )


@pytest.mark.parametrize("kernel, stride, padding", [(2, None, 0), (3, 2, 1), (2, 1, 0)])
def test_max_unpool1d(kernel, stride, padding):
    x = np.random.default_rng(7).standard_normal((2, 3, 8))

    def fn(T, a):
        out, idx = T.nn.functional.max_pool1d(a, kernel, stride, padding, return_indices=True)
        return T.nn.MaxUnpool1d(kernel, stride, padding)(out, idx, output_size=a.shape[-1:])

    if stride is None:  # (overlapping windows may pick a maximum twice; its gradient then counts twice)
        check_op(fn, x)
        check_op(fn, x[0])
    if has_torch:
        _compare(fn, x[0])
        _compare(fn, x, dtype=np.float32)
        assert repr(fg.nn.MaxUnpool1d(kernel, stride, padding)) == repr(
            torch.nn.MaxUnpool1d(kernel, stride, padding)
        )


@pytest.mark.parametrize("kernel, stride, padding", [(2, None, 0), ((2, 3, 2), (2, 2, 1), (1, 1, 0))])
def test_max_unpool3d(kernel, stride, padding):
    x = np.random.default_rng(8).standard_normal((2, 2, 4, 6, 5))

    def fn(T, a):
        out, idx = T.nn.functional.max_pool3d(a, kernel, stride, padding, return_indices=True)
        return T.nn.MaxUnpool3d(kernel, stride, padding)(out, idx, output_size=a.shape[-3:])

    if stride is None:  # (overlapping windows may pick a maximum twice; its gradient then counts twice)
        check_op(fn, x)
        check_op(fn, x[0])
    if has_torch:
        _compare(fn, x, dtype=np.float32)
        assert repr(fg.nn.MaxUnpool3d(kernel, stride, padding)) == repr(
            torch.nn.MaxUnpool3d(kernel, stride, padding)
        )


def test_max_unpool_errors_match_torch():
    def pooled(T):
        return T.nn.functional.max_pool3d(
            T.arange(2 * 3 * 4 * 6 * 6.0).reshape((2, 3, 4, 6, 6)), 2, return_indices=True
        )

    def pooled1d(T):
        return T.nn.functional.max_pool1d(T.arange(3 * 12.0).reshape((3, 12)), 2, return_indices=True)

    _raises(
        lambda T: T.nn.functional.max_unpool3d(*pooled(T), 2, output_size=[5, 6]),
        ValueError,
        "output_size should be a sequence containing 3 or 5 elements, but it has a length of '2'",
    )
    _raises(
        lambda T: T.nn.functional.max_unpool1d(*pooled1d(T), 2, output_size=[20]),
        ValueError,
        'invalid output_size "[20]" (dim 0 must be between 10 and 14)',
    )
    _raises(
        lambda T: T.nn.functional.max_unpool1d(pooled1d(T)[0][0], pooled1d(T)[1][0], 2),
        RuntimeError,
        "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with 2 dimensions.",
    )
    _raises(
        lambda T: T.nn.functional.max_unpool3d(pooled(T)[0][0, 0], pooled(T)[1][0, 0], 2),
        RuntimeError,
        "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with 3 dimensions.",
    )
    _raises(
        lambda T: T.nn.functional.max_unpool3d(pooled(T)[0], pooled(T)[1].to(T.float64), 2),
        RuntimeError,
        "elements in indices should be type int64",
    )
    _raises(
        lambda T: T.nn.functional.max_unpool3d(pooled(T)[0], pooled(T)[1][:, :, :1], 2),
        RuntimeError,
        "Expected shape of indices to be same as that of the input tensor ([2, 3, 2, 3, 3]) but got indices "
        "tensor with shape: [2, 3, 1, 3, 3]",
    )

    def bad_index(T):
        out, idx = pooled(T)
        idx = idx.clone()
        idx[0, 0, 0, 0, 0] = 200
        return T.nn.functional.max_unpool3d(out, idx, 2)

    _raises(bad_index, RuntimeError, "Found an invalid max index: 200 (output volumes are of size 4x6x6")


# ---- fractional max pooling ---------------------------------------------------------------

FRACTIONAL_2D = [(2, (5, 6)), ((3, 2), (7, 9)), (2, (1, 1)), (1, (11, 13)), (2, (2, 12))]
FRACTIONAL_3D = [(2, (3, 4, 5)), ((2, 3, 1), (5, 5, 8)), (2, (1, 1, 1))]


@pytest.mark.parametrize("kernel, size", FRACTIONAL_2D)
def test_fractional_max_pool2d_matches_torch(kernel, size):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 11, 13))
    for trial in range(3):
        samples = rng.uniform(0, 1, (2, 3, 2))

        def fn(T, a, samples=samples):
            s_ = T.tensor(samples[: a.shape[0], : a.shape[1]]).to(a.dtype)
            return T.nn.functional.fractional_max_pool2d(
                a, kernel, size, return_indices=True, _random_samples=s_
            )

        if has_torch:
            for dtype in (np.float64, np.float32):
                _compare(fn, x, dtype=dtype, atol=0)
        if trial == 0:
            check_op(lambda T, a: fn(T, a)[0], x[:1, :2])


@pytest.mark.parametrize("kernel, size", FRACTIONAL_3D)
def test_fractional_max_pool3d_matches_torch(kernel, size):
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 2, 7, 8, 9))
    samples = rng.uniform(0, 1, (2, 2, 3))

    def fn(T, a):
        n, c = (a.shape[0], a.shape[1]) if a.dim() == 5 else (1, a.shape[0])
        s_ = T.tensor(samples[:n, :c]).to(a.dtype)
        return T.nn.functional.fractional_max_pool3d(a, kernel, size, return_indices=True, _random_samples=s_)

    if has_torch:
        for dtype in (np.float64, np.float32):
            _compare(fn, x, dtype=dtype, atol=0)
            _compare(fn, x[0], dtype=dtype, atol=0)
    check_op(lambda T, a: fn(T, a)[0], x[:1, :1])


@needs_torch
def test_fractional_max_pool_output_ratio_and_with_indices():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 8, 9, 10))
    s3, s2 = rng.uniform(0, 1, (1, 2, 3)), rng.uniform(0, 1, (1, 3, 2))
    _compare(
        lambda T, a: T.nn.functional.fractional_max_pool3d_with_indices(
            a, 2, output_ratio=(0.5, 0.6, 0.7), _random_samples=T.tensor(s3)
        ),
        x[0, :2],
    )
    _compare(
        lambda T, a: T.nn.functional.fractional_max_pool2d_with_indices(
            a, (2, 3), output_ratio=[0.5, 0.6], _random_samples=T.tensor(s2)
        ),
        x[0, :, 0],
    )


def test_fractional_max_pool_window_starts_round_in_the_input_dtype():
    # a sample whose float32 window starts differ from the float64 ones (torch rounds in float32)
    sample = 0.5957445502281189
    ends = [2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 32, 35, 38, 40, 43, 46, 49]
    for dtype, expected in ((fg.float32, ends), (fg.float64, [*ends[:12], 37, *ends[13:]])):
        x = fg.arange(50 * 50).to(dtype).reshape((1, 1, 50, 50))
        samples = fg.full((1, 1, 2), sample, dtype=dtype)
        _, idx = fg.nn.functional.fractional_max_pool2d(
            x, 3, 17, return_indices=True, _random_samples=samples
        )
        assert (idx[0, 0, 0] % 50).tolist() == expected
        assert (idx[0, 0, :, 0] // 50).tolist() == expected
    if has_torch:
        _compare(
            lambda T, a: T.nn.functional.fractional_max_pool2d(
                a, 3, 17, return_indices=True, _random_samples=T.full((1, 2, 2), sample)
            ),
            np.random.default_rng(18).standard_normal((1, 2, 50, 50)),
            dtype=np.float32,
            atol=0,
        )


def test_fractional_max_pool_draws_samples_from_ferrograd_generator():
    x = fg.randn((2, 3, 9, 10))
    fg.manual_seed(123)
    drawn = fg.nn.functional.fractional_max_pool2d(x, 2, output_size=(4, 5))
    fg.manual_seed(123)
    samples = fg.rand((2, 3, 2))
    explicit = fg.nn.functional.fractional_max_pool2d(x, 2, output_size=(4, 5), _random_samples=samples)
    np.testing.assert_array_equal(drawn.numpy(), explicit.numpy())
    fg.manual_seed(7)
    first = fg.nn.FractionalMaxPool3d(2, output_ratio=0.5)(x)
    fg.manual_seed(7)
    again = fg.nn.functional.fractional_max_pool3d(x, 2, (1, 4, 5), _random_samples=fg.rand((1, 2, 3)))
    np.testing.assert_array_equal(first.numpy(), again.numpy())
    # different draws give different windows somewhere
    outs = {
        tuple(fg.nn.functional.fractional_max_pool2d(x, 2, (4, 5)).reshape(-1).tolist()) for _ in range(6)
    }
    assert len(outs) > 1


def test_fractional_max_pool_modules_and_state_dict():
    samples = np.random.default_rng(12).uniform(0, 1, (1, 3, 2))
    ours = fg.nn.FractionalMaxPool2d(2, output_size=(3, 4), _random_samples=fg.tensor(samples))
    assert list(ours.state_dict()) == ["_random_samples"]
    assert fg.nn.FractionalMaxPool2d(2, output_ratio=0.5).output_ratio == (0.5, 0.5)
    assert list(fg.nn.FractionalMaxPool2d(2, output_ratio=0.5).state_dict()) == []
    x = np.random.default_rng(13).standard_normal((1, 3, 7, 9))
    out = ours(fg.tensor(x))
    if has_torch:
        theirs = torch.nn.FractionalMaxPool2d(
            2, output_size=(3, 4), _random_samples=torch.zeros((1, 3, 2)).double()
        )
        theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
        np.testing.assert_array_equal(out.numpy(), theirs(torch.tensor(x)).numpy())
        ours.load_state_dict({"_random_samples": fg.zeros((1, 3, 2))})
        theirs.load_state_dict({"_random_samples": torch.zeros((1, 3, 2), dtype=torch.float64)})
        np.testing.assert_array_equal(ours(fg.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy())
        assert repr(ours) == repr(theirs) == "FractionalMaxPool2d()"
    out3, idx3 = fg.nn.FractionalMaxPool3d((2, 2, 3), output_size=2, return_indices=True)(
        fg.randn((2, 5, 6, 7))
    )
    assert tuple(out3.shape) == tuple(idx3.shape) == (2, 2, 2, 2)


def test_fractional_max_pool_errors_match_torch():
    x5 = (1, 2, 4, 7, 9)
    _raises(
        lambda T: T.nn.functional.fractional_max_pool2d(T.zeros((2, 3, 7, 9)), 2),
        ValueError,
        "fractional_max_pool2d requires specifying either an output_size or an output_ratio",
    )
    _raises(
        lambda T: T.nn.functional.fractional_max_pool2d(
            T.zeros((2, 3, 7, 9)), 2, output_ratio=(0.5, 0.6, 0.7)
        ),
        ValueError,
        "fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.",
    )
    _raises(
        lambda T: T.nn.functional.fractional_max_pool2d(T.zeros((2, 3, 7, 9)), 3, output_size=(6, 8)),
        RuntimeError,
        "fractional_max_pool2d(): pool height 3 too large relative to input height 7",
    )
    _raises(
        lambda T: T.nn.functional.fractional_max_pool2d(T.zeros((2, 3, 7, 9)), 2, output_size=(4, 9)),
        RuntimeError,
        "fractional_max_pool2d(): pool width 2 too large relative to input width 9",
    )
    _raises(
        lambda T: T.nn.functional.fractional_max_pool2d(T.zeros((2, 3, 7, 9)), (2, 3, 4), output_size=(4, 5)),
        RuntimeError,
        "fractional_max_pool2d: kernel_size must either be a single Int or tuple of Ints",
    )
    _raises(
        lambda T: T.nn.functional.fractional_max_pool3d(T.zeros(x5), 2, output_size=(2, 4)),
        RuntimeError,
        "fractional_max_pool3d: output_size must either be a single Int or tuple of three Ints",
    )
    _raises(
        lambda T: T.nn.functional.fractional_max_pool3d(T.zeros(x5), 2, output_size=(3, 4, 5)),
        RuntimeError,
        "fractional_max_pool3d_out(): pool time 2 too large relative to input time 4",
    )
    _raises(
        lambda T: T.nn.functional.fractional_max_pool3d(T.zeros(x5), 2, output_size=(2, 6, 5)),
        RuntimeError,
        "fractional_max_pool3d_out(): pool height 2 too large relative to input height 7",
    )
    samples_cases = [
        ((1, 2, 2), "Expect _random_samples.size(2) equals to 3; got 2."),
        ((0, 2, 3), "Expect _random_samples.size(0) no less then input batch size."),
        ((1, 1, 3), "Expect _random_samples.size(1) equals to input channel size."),
        ((1, 2, 3, 1), "Expect _random_samples to have 3 dimensions, got 4"),
    ]
    for shape, message in samples_cases:
        _raises(
            lambda T, shape=shape: T.nn.functional.fractional_max_pool3d(
                T.zeros(x5), 2, output_size=(2, 4, 5), _random_samples=T.zeros(shape)
            ),
            RuntimeError,
            message,
        )
    _raises(
        lambda T: T.nn.functional.fractional_max_pool2d(
            T.zeros((2, 4, 7)), 2, output_size=(3, 3), _random_samples=T.zeros((2, 2, 2), dtype=T.float64)
        ),
        RuntimeError,
        "Expect _random_samples to have the same dtype as input",
    )
    _raises(
        lambda T: T.nn.FractionalMaxPool2d(2), ValueError, "FractionalMaxPool2d requires specifying either"
    )
    _raises(
        lambda T: T.nn.FractionalMaxPool3d(2, 2, 0.5), ValueError, "only one of output_size and output_ratio"
    )
    _raises(
        lambda T: T.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 1.0)),
        ValueError,
        "output_ratio must be between 0 and 1 (got (0.5, 0.5, 1.0))",
    )


# ---- AdaptiveLogSoftmaxWithLoss ----------------------------------------------------------


def _asm_pair(head_bias=True):
    ours, theirs = _state_round_trip(
        lambda T: T.nn.AdaptiveLogSoftmaxWithLoss, (8, 10, [3, 6]), dict(div_value=2.0, head_bias=head_bias)
    )
    return ours, theirs


def test_adaptive_log_softmax_structure_and_state_dict():
    ours, theirs = _asm_pair()
    assert list(ours.state_dict()) == [
        "head.weight",
        "head.bias",
        "tail.0.0.weight",
        "tail.0.1.weight",
        "tail.1.0.weight",
        "tail.1.1.weight",
    ]
    assert tuple(ours.tail[1][0].weight.shape) == (2, 8) and tuple(ours.tail[1][1].weight.shape) == (4, 2)
    assert ours.cutoffs == [3, 6, 10] and ours.shortlist_size == 3 and ours.head_size == 5
    if theirs is not None:
        assert repr(ours) == repr(theirs)
    assert "head.bias" not in fg.nn.AdaptiveLogSoftmaxWithLoss(16, 10, [3, 6]).state_dict()


@needs_torch
@pytest.mark.parametrize("target", [[0, 4, 9, 2, 7, 5], [1, 1, 2, 0, 2, 1], [9, 8, 7, 6, 9, 7]])
def test_adaptive_log_softmax_forward_log_prob_predict_match_torch(target):
    ours, theirs = _asm_pair()
    x = np.random.default_rng(14).standard_normal((6, 8))
    results = []
    for T, m in ((fg, ours), (torch, theirs)):
        m.zero_grad()
        xt = T.tensor(x, requires_grad=True)
        out = m(xt, T.tensor(target))
        assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
        (out.output.sum() * 0.3 + out.loss).backward()
        results.append(
            [out.output.detach().numpy(), out.loss.detach().numpy(), xt.grad.numpy()]
            + [np.zeros(1) if p.grad is None else p.grad.numpy() for p in m.parameters()]
            + [m.log_prob(xt).detach().numpy()]
        )
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, atol=1e-12)
    np.testing.assert_allclose(np.exp(results[0][-1]).sum(1), 1.0, atol=1e-12)
    unbatched = [m(T.tensor(x[2]), T.tensor(target[2])) for T, m in ((fg, ours), (torch, theirs))]
    assert tuple(unbatched[0].output.shape) == ()
    np.testing.assert_allclose(unbatched[0].output.detach().numpy(), unbatched[1].output.detach().numpy())


@needs_torch
def test_adaptive_log_softmax_predict_all_paths():
    ours, theirs = _asm_pair()
    x = np.random.default_rng(15).standard_normal((40, 8)) * 3
    for bias in ([5.0, 5.0, 5.0, -5.0, -5.0], [-5.0, -5.0, -5.0, 5.0, 5.0], [0.0, 0.0, 0.0, 0.5, 0.5]):
        with torch.no_grad():
            theirs.head.bias.copy_(torch.tensor(bias))
        ours.load_state_dict({k: fg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
        got, want = ours.predict(fg.tensor(x)).numpy(), theirs.predict(torch.tensor(x)).numpy()
        np.testing.assert_array_equal(got, want)
    assert (got < 3).any() and (got >= 3).any()  # the last bias mixes shortlist and cluster rows


def test_adaptive_log_softmax_errors_match_torch():
    def m(T):
        return T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0)

    _raises(
        lambda T: m(T)(T.zeros((3, 8)), T.tensor([1, 2, 10])),
        RuntimeError,
        "Target values should be in [0, 9], but values in range [1, 10] were found. ",
    )
    _raises(
        lambda T: m(T)(T.zeros((3, 8)), T.tensor([1, 2])),
        RuntimeError,
        "Input and target should have the same size in the batch dimension.",
    )
    _raises(
        lambda T: m(T)(T.zeros((3, 8)), T.tensor(1)),
        RuntimeError,
        "0D target tensor expects 1D input tensors, but found inputs with size torch.Size([3, 8])",
    )
    _raises(
        lambda T: m(T)(T.zeros((3, 2, 8)), T.tensor([1, 2, 3])),
        RuntimeError,
        "1D target tensor expects 2D input tensors, but found inputs with size torch.Size([3, 2, 8])",
    )
    _raises(
        lambda T: m(T)(T.zeros((3, 8)), T.tensor([[1]])),
        RuntimeError,
        "0D or 1D target tensor expected, multi-target not supported",
    )
    _raises(
        lambda T: T.nn.AdaptiveLogSoftmaxWithLoss(16, 10, []),
        ValueError,
        "cutoffs should be a sequence of length larger than 0",
    )
    for cutoffs in ([6, 3], [3, 10], [3, 3], [0, 4]):
        _raises(
            lambda T, c=cutoffs: T.nn.AdaptiveLogSoftmaxWithLoss(16, 10, c),
            ValueError,
            "cutoffs should be a sequence of unique, positive integers sorted in an increasing order",
        )


# ---- grid_sample: bicubic, and nearest's grid gradient -------------------------------------


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_bicubic(padding_mode, align_corners):
    rng = np.random.default_rng(16)
    x = rng.standard_normal((2, 2, 4, 5))
    grid = rng.uniform(-1.4, 1.4, (2, 3, 4, 2))

    def fn(T, a, g):
        return T.nn.functional.grid_sample(a, g, "bicubic", padding_mode, align_corners)

    check_op(fn, x, grid, fd_atol=1e-4)
    if has_torch:
        _compare(fn, x, grid, dtype=np.float32, atol=1e-4)


def test_grid_sample_bicubic_only_4d():
    _raises(
        lambda T: T.nn.functional.grid_sample(
            T.zeros((1, 1, 2, 2, 2)), T.zeros((1, 2, 2, 2, 3)), mode="bicubic", align_corners=False
        ),
        RuntimeError,
        "grid_sampler(): bicubic interpolation only supports 4D input",
    )


@pytest.mark.parametrize("dims", [2, 3])
def test_grid_sample_nearest_grid_gradient_is_zero(dims):
    rng = np.random.default_rng(17)
    x = rng.standard_normal((2, 3, *(4,) * dims))
    grid = rng.uniform(-1.3, 1.3, (2, *(3,) * dims, dims))
    grid.reshape(-1)[[0, 5, 9, 14]] = [np.nan, np.inf, -np.inf, np.nan]
    for padding_mode in ("zeros", "border", "reflection"):
        xt, gt = fg.tensor(x, requires_grad=True), fg.tensor(grid, requires_grad=True)
        out = fg.nn.functional.grid_sample(xt, gt, "nearest", padding_mode, align_corners=False)
        out.backward(fg.tensor(_cotangent(tuple(out.shape))))
        assert gt.grad is not None and tuple(gt.grad.shape) == grid.shape
        assert not gt.grad.numpy().any()
        assert xt.grad.numpy().any()
        # the output is the one without a grid gradient (non-finite positions included) ...
        plain = fg.nn.functional.grid_sample(fg.tensor(x), fg.tensor(grid), "nearest", padding_mode, False)
        assert plain.grad_fn is None
        np.testing.assert_array_equal(out.detach().numpy(), plain.numpy())
        np.testing.assert_array_equal(np.signbit(out.detach().numpy()), np.signbit(plain.numpy()))
        if has_torch:  # ... and torch's at the finite positions
            want = torch.nn.functional.grid_sample(
                torch.tensor(x), torch.tensor(grid), "nearest", padding_mode, align_corners=False
            ).numpy()
            finite = np.isfinite(grid).all(-1)[:, None].repeat(3, 1)
            np.testing.assert_array_equal(out.detach().numpy()[finite], want[finite])

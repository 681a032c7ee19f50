"""The nn.functional additions matching PyTorch: in-place activation aliases, rrelu, channel
and alpha dropout, grid_sample / affine_grid, bilinear, gumbel_softmax, pdist,
local_response_norm, the deprecated upsample aliases, the *_with_indices pooling aliases, the
class-margin losses, embedding_bag, and their modules plus nn.Buffer and BatchNorm3d: values and
gradients against torch and finite differences (float64), statistics of the random ops, and
torch's errors and warnings."""

import math
import warnings

import numpy as np
import pytest

import ferrograd as fg

from helpers import assert_raises_like_torch, check_op

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is the reference")
MODULES = [fg] + ([torch] if torch is not None else [])
rng = np.random.default_rng(1234)


def warns_like_torch(fn, message):
    """``fn(F, T)`` warns with ``message`` for ferrograd and, when installed, torch."""
    for T in MODULES:
        with pytest.warns(UserWarning, match=message):
            fn(T.nn.functional, T)


# ---- in-place activations and rrelu ---------------------------------------------------

INPLACE = {
    "relu_": (lambda F, x: F.relu_(x), lambda F, x: F.relu(x)),
    "elu_": (lambda F, x: F.elu_(x, 0.7), lambda F, x: F.elu(x, 0.7)),
    "leaky_relu_": (lambda F, x: F.leaky_relu_(x, 0.2), lambda F, x: F.leaky_relu(x, 0.2)),
    "hardtanh_": (lambda F, x: F.hardtanh_(x, -0.5, 0.8), lambda F, x: F.hardtanh(x, -0.5, 0.8)),
    "selu_": (lambda F, x: F.selu_(x), lambda F, x: F.selu(x)),
    "celu_": (lambda F, x: F.celu_(x, 1.3), lambda F, x: F.celu(x, 1.3)),
    "rrelu_": (lambda F, x: F.rrelu_(x, 0.1, 0.3), lambda F, x: F.leaky_relu(x, 0.2)),
    "rrelu_inplace": (lambda F, x: F.rrelu(x, 0.1, 0.3, inplace=True), lambda F, x: F.leaky_relu(x, 0.2)),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_activation_overwrites_input_with_out_of_place_value_and_gradient(name):
    inplace, reference = INPLACE[name]
    a = rng.uniform(-2, 2, (3, 4))
    a[np.abs(a) < 0.05] = 0.3  # keep finite differences off the kink at 0
    a[np.abs(np.abs(a) - 0.5) < 0.05] = 0.3
    a[np.abs(a - 0.8) < 0.05] = 0.3
    x = fg.tensor(a)
    out = inplace(fg.nn.functional, x)
    assert out is x
    np.testing.assert_allclose(x.numpy(), reference(fg.nn.functional, fg.tensor(a)).numpy(), rtol=1e-12)
    # on a non-leaf, the in-place form has the out-of-place gradient
    check_op(lambda T, t: inplace(T.nn.functional, t * 1.0), a)


def test_rrelu_training_draws_slopes_in_bounds_and_backpropagates_them():
    x = fg.tensor(np.linspace(-3, 3, 4001), requires_grad=True)
    out = fg.nn.functional.rrelu(x, 0.1, 0.4, training=True)
    out.sum().backward()
    a = x.detach().numpy()
    slope = out.detach().numpy()[a < 0] / a[a < 0]
    assert slope.min() >= 0.1 and slope.max() <= 0.4
    assert slope.std() > 0.05  # one slope per element, not a shared one
    np.testing.assert_allclose(x.grad.numpy()[a < 0], slope, rtol=1e-12)
    np.testing.assert_array_equal(out.detach().numpy()[a > 0], a[a > 0])
    np.testing.assert_array_equal(x.grad.numpy()[a > 0], 1.0)


def test_rrelu_eval_matches_torch_and_checks_bounds():
    check_op(
        lambda T, x: T.nn.functional.rrelu(x, 0.2, 0.6), rng.uniform(0.1, 2, (5,)) * rng.choice([-1, 1], 5)
    )
    for training in (False, True):
        assert_raises_like_torch(
            lambda F, T, training=training: F.rrelu(T.ones(3), 0.5, 0.2, training=training),
            RuntimeError,
            "Lower bound should be less than or equal to the upper bound",
        )


def test_rrelu_module_is_random_in_training_and_mean_slope_in_eval():
    m = fg.nn.RReLU(0.1, 0.3)
    x = -fg.ones(1000)
    assert len(set(m(x).numpy().round(12))) > 10
    m.eval()
    np.testing.assert_allclose(m(x).numpy(), -0.2)
    if torch is not None:
        assert repr(m) == repr(torch.nn.RReLU(0.1, 0.3))
        assert repr(fg.nn.RReLU(inplace=True)) == repr(torch.nn.RReLU(inplace=True))


# ---- channel and alpha dropout --------------------------------------------------------

CHANNEL_DROPOUT = [
    ("dropout1d", (6, 40, 5)),
    ("dropout1d", (40, 5)),
    ("dropout2d", (6, 40, 3, 2)),
    ("dropout3d", (6, 40, 2, 2, 2)),
    ("dropout3d", (40, 2, 3, 2)),
]


@pytest.mark.parametrize(("name", "shape"), CHANNEL_DROPOUT)
def test_channel_dropout_zeroes_whole_channels_and_scales_the_rest(name, shape):
    p = 0.3
    a = rng.uniform(1, 2, shape)
    x = fg.tensor(a, requires_grad=True)
    out = getattr(fg.nn.functional, name)(x, p)
    assert tuple(out.shape) == shape
    out.sum().backward()
    batched = len(shape) == {"dropout1d": 3, "dropout2d": 4, "dropout3d": 5}[name]
    ratio = (out.detach().numpy() / a).reshape((*shape[: 1 + batched], -1))
    per_channel = ratio[..., :1]
    np.testing.assert_allclose(ratio, np.broadcast_to(per_channel, ratio.shape))
    assert set(np.round(per_channel.ravel(), 12)) == {0.0, round(1 / (1 - p), 12)}
    assert abs((per_channel == 0).mean() - p) < 0.2
    np.testing.assert_allclose(x.grad.numpy(), out.detach().numpy() / a)


@pytest.mark.parametrize(
    "name", ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]
)
def test_dropout_variants_are_identity_in_eval_and_zero_at_p_one(name):
    fn = getattr(fg.nn.functional, name)
    shape = {"dropout2d": (2, 3, 4, 2), "dropout3d": (2, 3, 4, 2)}.get(name, (2, 3, 4))
    x = fg.tensor(rng.standard_normal(shape))
    np.testing.assert_array_equal(fn(x, 0.5, training=False).numpy(), x.numpy())
    np.testing.assert_array_equal(fn(x, 0.0, training=True).numpy(), x.numpy())
    np.testing.assert_array_equal(fn(x, 1.0, training=True).numpy(), 0.0)
    assert_raises_like_torch(
        lambda F, T: getattr(F, name)(T.ones(shape), 1.5),
        ValueError,
        "dropout probability has to be between 0 and 1",
    )


def test_channel_dropout_inplace_writes_the_input():
    x = fg.ones((4, 30, 3))
    assert fg.nn.functional.dropout1d(x, 0.5, inplace=True) is x
    assert set(x.numpy()[:, :, 0].ravel()) <= {0.0, 2.0}
    y = fg.ones((30, 3))
    assert fg.nn.functional.dropout1d(y, 0.5, inplace=True) is y
    assert tuple(y.shape) == (30, 3) and (y.numpy() == 0).any()


def test_channel_dropout_dimension_errors_and_warnings_as_torch():
    assert_raises_like_torch(
        lambda F, T: F.dropout1d(T.ones(2, 2, 2, 2)), RuntimeError, "dropout1d: Expected 2D or 3D"
    )
    warns_like_torch(lambda F, T: F.dropout2d(T.ones(2, 2, 2, 2, 2)), "dropout2d: Received a 5-D input")
    warns_like_torch(lambda F, T: F.dropout2d(T.ones(2, 2, 2)), "dropout2d: Received a 3D input")
    warns_like_torch(lambda F, T: F.dropout3d(T.ones(2, 2, 2)), "dropout3d: Received a 3-D input")
    assert_raises_like_torch(
        lambda F, T: F.feature_alpha_dropout(T.ones(3), training=True),
        RuntimeError,
        "Feature dropout requires at least 2 dimensions in the input",
    )


def test_alpha_dropout_keeps_zero_mean_unit_variance_and_takes_two_forms():
    p = 0.2
    a = rng.standard_normal(200_000)
    out = fg.nn.functional.alpha_dropout(fg.tensor(a), p, training=True).numpy()
    assert abs(out.mean()) < 0.02 and abs(out.var() - 1) < 0.03
    # kept units are an affine map of the input; dropped ones all take the same value
    alpha = 1.6732632423543772 * 1.0507009873554805
    scale = 1 / math.sqrt((alpha**2 * p + 1) * (1 - p))
    kept = np.isclose(out, a * scale + alpha * scale * p)
    dropped = np.isclose(out, -alpha * scale + alpha * scale * p)
    assert (kept | dropped).all() and abs(dropped.mean() - p) < 0.01


def test_feature_alpha_dropout_masks_whole_channels():
    a = rng.standard_normal((4, 50, 6))
    out = fg.nn.functional.feature_alpha_dropout(fg.tensor(a), 0.5, training=True).numpy()
    alpha = 1.6732632423543772 * 1.0507009873554805
    scale = 1 / math.sqrt((alpha**2 * 0.5 + 1) * 0.5)
    dropped = np.isclose(out, -alpha * scale * 0.5).all(axis=2)
    constant = np.ptp(out, axis=2) < 1e-12
    np.testing.assert_array_equal(dropped, constant)
    assert 0.25 < dropped.mean() < 0.75


@pytest.mark.parametrize(
    "name", ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
)
def test_dropout_modules_follow_training_mode_and_repr(name):
    m = getattr(fg.nn, name)(0.4)
    x = {"Dropout2d": fg.ones((3, 20, 2, 2)), "Dropout3d": fg.ones((3, 20, 2, 2, 2))}.get(
        name, fg.ones((3, 20, 4))
    )
    assert (m(x).numpy() != 1).any()
    m.eval()
    assert m(x) is x
    with pytest.raises(ValueError, match="dropout probability"):
        getattr(fg.nn, name)(-0.1)
    if torch is not None:
        assert repr(m) == repr(getattr(torch.nn, name)(0.4))


# ---- grid_sample / affine_grid --------------------------------------------------------


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_bilinear_matches_torch_and_finite_differences(padding_mode, align_corners):
    x = rng.standard_normal((2, 2, 3, 4))
    grid = rng.uniform(-1.7, 1.7, (2, 3, 2, 2))  # partly outside [-1, 1]
    check_op(
        lambda T, a, g: T.nn.functional.grid_sample(a, g, "bilinear", padding_mode, align_corners), x, grid
    )


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@needs_torch
def test_grid_sample_matches_torch_in_2d_and_3d(mode, padding_mode, align_corners):
    for shape, grid_shape in (((2, 3, 5, 4), (2, 4, 6, 2)), ((1, 2, 3, 4, 5), (1, 2, 3, 4, 3))):
        x, grid = rng.standard_normal(shape), rng.uniform(-2.5, 2.5, grid_shape)
        outs = []
        for T in (fg, torch):
            a, g = T.tensor(x, requires_grad=True), T.tensor(grid, requires_grad=True)
            out = T.nn.functional.grid_sample(a, g, mode, padding_mode, align_corners)
            (out * T.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))).sum().backward()
            g_grad = np.zeros(grid_shape) if g.grad is None else g.grad.numpy()
            outs.append((out.detach().numpy(), a.grad.numpy(), g_grad))
        for mine, theirs in zip(*outs):
            np.testing.assert_allclose(mine, theirs, atol=1e-10)


def test_grid_sample_double_backward_matches_finite_differences():
    x = fg.tensor(rng.standard_normal((1, 1, 3, 3)), requires_grad=True)
    grid = rng.uniform(-0.9, 0.9, (1, 2, 2, 2))

    def grid_grad(g):
        out = fg.nn.functional.grid_sample(x, g, align_corners=False)
        (gg,) = fg.autograd.grad((out * out).sum(), g, create_graph=True)
        return gg

    g = fg.tensor(grid, requires_grad=True)
    (second,) = fg.autograd.grad(grid_grad(g).sum(), g)
    eps, expected = 1e-6, np.zeros_like(grid)
    for i in np.ndindex(grid.shape):
        hi, lo = grid.copy(), grid.copy()
        hi[i] += eps
        lo[i] -= eps
        expected[i] = (
            grid_grad(fg.tensor(hi, requires_grad=True)).sum().item()
            - grid_grad(fg.tensor(lo, requires_grad=True)).sum().item()
        ) / (2 * eps)
    np.testing.assert_allclose(second.numpy(), expected, atol=1e-5)


def test_grid_sample_errors_and_default_warning_as_torch():
    x, g = lambda T: T.ones(1, 1, 3, 3), lambda T: T.zeros(1, 2, 2, 2)
    assert_raises_like_torch(
        lambda F, T: F.grid_sample(x(T), g(T), mode="cubic"), ValueError, "expected mode to be"
    )
    assert_raises_like_torch(
        lambda F, T: F.grid_sample(x(T), g(T), padding_mode="wrap"), ValueError, "expected padding_mode to be"
    )
    assert_raises_like_torch(
        lambda F, T: F.grid_sample(x(T), T.zeros(2, 2, 2, 2), align_corners=False),
        RuntimeError,
        "expected grid and input to have same batch size",
    )
    assert_raises_like_torch(
        lambda F, T: F.grid_sample(x(T), T.zeros(1, 2, 2, 3), align_corners=False),
        RuntimeError,
        "expected grid to have size 2 in last dimension",
    )
    warns_like_torch(lambda F, T: F.grid_sample(x(T), g(T)), "Default grid_sample and affine_grid behavior")


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_matches_torch_and_finite_differences(align_corners):
    check_op(
        lambda T, th: T.nn.functional.affine_grid(th, [2, 1, 3, 4], align_corners),
        rng.standard_normal((2, 2, 3)),
    )
    check_op(
        lambda T, th: T.nn.functional.affine_grid(th, [1, 2, 2, 3, 4], align_corners),
        rng.standard_normal((1, 3, 4)),
    )


def test_affine_grid_then_grid_sample_identity_reproduces_the_input():
    x = fg.tensor(rng.standard_normal((2, 3, 4, 5)))
    theta = fg.tensor(np.tile(np.eye(2, 3), (2, 1, 1)))
    grid = fg.nn.functional.affine_grid(theta, list(x.shape), align_corners=False)
    np.testing.assert_allclose(fg.nn.functional.grid_sample(x, grid, align_corners=False).numpy(), x.numpy())


def test_affine_grid_errors_as_torch():
    assert_raises_like_torch(
        lambda F, T: F.affine_grid(T.zeros(1, 2, 3, dtype=T.int64), [1, 1, 2, 2], False),
        ValueError,
        "Expected theta to have floating point type",
    )
    assert_raises_like_torch(
        lambda F, T: F.affine_grid(T.zeros(1, 3, 3), [1, 1, 2, 2], False), ValueError, "shape Nx2x3 for size"
    )
    assert_raises_like_torch(
        lambda F, T: F.affine_grid(T.zeros(1, 2, 3), [1, 1, 2], False),
        NotImplementedError,
        "only supports 4D and 5D",
    )
    assert_raises_like_torch(
        lambda F, T: F.affine_grid(T.zeros(1, 2, 3), [1, 1, 0, 2], False),
        ValueError,
        "non-zero, positive output size",
    )


# ---- bilinear, gumbel_softmax, pdist, local_response_norm -----------------------------


def test_bilinear_matches_torch_and_finite_differences():
    check_op(
        lambda T, a, b, w, c: T.nn.functional.bilinear(a, b, w, c),
        rng.standard_normal((2, 3, 2)),
        rng.standard_normal((2, 3, 4)),
        rng.standard_normal((3, 2, 4)),
        rng.standard_normal(3),
    )
    check_op(
        lambda T, a, b, w: T.nn.functional.bilinear(a, b, w),
        *(rng.standard_normal(s) for s in [(2,), (3,), (2, 2, 3)]),
    )


def test_bilinear_errors_as_torch():
    assert_raises_like_torch(
        lambda F, T: F.bilinear(T.ones(3, 2), T.ones(4, 3), T.ones(5, 2, 3)),
        RuntimeError,
        "batch dimensions do not match",
    )
    assert_raises_like_torch(
        lambda F, T: F.bilinear(T.ones(3, 2), T.ones(3, 3), T.ones(5, 3, 3)),
        RuntimeError,
        "input1 size does not match",
    )
    assert_raises_like_torch(
        lambda F, T: F.bilinear(T.ones(3, 2), T.ones(3, 3), T.ones(5, 2, 3), T.ones(4)),
        RuntimeError,
        "bias size does not match",
    )


def test_bilinear_module_shapes_init_and_repr():
    m = fg.nn.Bilinear(4, 3, 5)
    assert tuple(m.weight.shape) == (5, 4, 3) and tuple(m.bias.shape) == (5,)
    weight = m.weight.detach().numpy()
    assert np.abs(weight).max() <= 0.5 and weight.std() > 0
    x1, x2 = fg.randn(2, 4), fg.randn(2, 3)
    np.testing.assert_allclose(
        m(x1, x2).detach().numpy(), fg.nn.functional.bilinear(x1, x2, m.weight, m.bias).detach().numpy()
    )
    assert fg.nn.Bilinear(4, 3, 5, bias=False).bias is None
    if torch is not None:
        assert repr(m) == repr(torch.nn.Bilinear(4, 3, 5))


def test_gumbel_softmax_soft_and_straight_through_hard_samples():
    logits = fg.tensor(rng.standard_normal((5, 7)), requires_grad=True)
    fg.manual_seed(3)
    soft = fg.nn.functional.gumbel_softmax(logits, tau=0.5)
    fg.manual_seed(3)
    hard = fg.nn.functional.gumbel_softmax(logits, tau=0.5, hard=True)
    np.testing.assert_allclose(soft.detach().numpy().sum(1), 1.0)
    one_hot = np.eye(7)[soft.detach().numpy().argmax(1)]
    np.testing.assert_array_equal(hard.detach().numpy(), one_hot)
    weights = fg.tensor(rng.standard_normal((5, 7)))
    (g_soft,) = fg.autograd.grad((soft * weights).sum(), logits)
    (g_hard,) = fg.autograd.grad((hard * weights).sum(), logits)
    np.testing.assert_allclose(g_hard.numpy(), g_soft.numpy(), atol=1e-12)
    assert np.abs(g_soft.numpy()).max() > 0


def test_gumbel_softmax_samples_follow_the_softmax_of_the_logits():
    logits = fg.tensor(np.log([[0.1, 0.6, 0.3]]).repeat(20000, 0))
    picks = fg.nn.functional.gumbel_softmax(logits, hard=True, dim=1).numpy().mean(0)
    np.testing.assert_allclose(picks, [0.1, 0.6, 0.3], atol=0.02)
    warns_like_torch(lambda F, T: F.gumbel_softmax(T.zeros(3), eps=1e-5), "`eps` parameter is deprecated")


@pytest.mark.parametrize("p", [2.0, 1.0, 0.5, 3.0, math.inf])
def test_pdist_matches_torch_and_finite_differences(p):
    check_op(lambda T, x: T.nn.functional.pdist(x, p), rng.standard_normal((5, 3)))


def test_pdist_errors_as_torch():
    assert_raises_like_torch(
        lambda F, T: F.pdist(T.ones(3)), RuntimeError, "pdist only supports 2D tensors, got: 1D"
    )
    assert_raises_like_torch(
        lambda F, T: F.pdist(T.ones(3, 2), -1), RuntimeError, "only supports non-negative p"
    )


@pytest.mark.parametrize("shape", [(2, 5, 3), (1, 4, 2, 3), (1, 6, 2, 1, 2)])
@pytest.mark.parametrize("size", [1, 2, 3])
def test_local_response_norm_matches_torch_and_finite_differences(shape, size):
    check_op(
        lambda T, x: T.nn.functional.local_response_norm(x, size, 0.3, 0.6, 1.5), rng.standard_normal(shape)
    )


def test_local_response_norm_errors_and_module():
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality"):
        fg.nn.functional.local_response_norm(fg.ones(2, 3), 2)
    m = fg.nn.LocalResponseNorm(3, beta=0.5)
    x = fg.randn(2, 4, 3)
    np.testing.assert_allclose(m(x).numpy(), fg.nn.functional.local_response_norm(x, 3, beta=0.5).numpy())
    if torch is not None:
        assert repr(m) == repr(torch.nn.LocalResponseNorm(3, beta=0.5))


def test_softmax2d_normalizes_channels_and_checks_dims():
    a = rng.standard_normal((2, 3, 4, 5))
    out = fg.nn.Softmax2d()(fg.tensor(a)).numpy()
    np.testing.assert_allclose(out, np.exp(a) / np.exp(a).sum(1, keepdims=True))
    np.testing.assert_allclose(fg.nn.Softmax2d()(fg.tensor(a[0])).numpy(), out[0])
    for T in MODULES:
        with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
            T.nn.Softmax2d()(T.ones(2, 2))


# ---- deprecated and alias functions ---------------------------------------------------


@needs_torch
def test_upsample_aliases_warn_and_match_interpolate():
    a = rng.standard_normal((1, 2, 3, 4))
    cases = [
        ("upsample", lambda F, x: F.upsample(x, scale_factor=2, mode="bilinear", align_corners=False)),
        ("upsample_nearest", lambda F, x: F.upsample_nearest(x, size=(5, 7))),
        ("upsample_bilinear", lambda F, x: F.upsample_bilinear(x, scale_factor=2)),
    ]
    for name, fn in cases:
        for T in MODULES:
            with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
                fn(T.nn.functional, T.tensor(a))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_op(lambda T, x, fn=fn: fn(T.nn.functional, x), a)


def test_upsampling_modules_match_interpolate_and_torch_repr():
    x = fg.tensor(rng.standard_normal((1, 1, 2, 3)))
    np.testing.assert_allclose(
        fg.nn.UpsamplingBilinear2d(scale_factor=2)(x).numpy(),
        fg.nn.functional.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True).numpy(),
    )
    np.testing.assert_allclose(
        fg.nn.UpsamplingNearest2d(size=(4, 5))(x).numpy(),
        fg.nn.functional.interpolate(x, size=(4, 5)).numpy(),
    )
    if torch is not None:
        assert repr(fg.nn.UpsamplingBilinear2d(scale_factor=2)) == repr(
            torch.nn.UpsamplingBilinear2d(scale_factor=2)
        )
        assert repr(fg.nn.UpsamplingNearest2d(size=3)) == repr(torch.nn.UpsamplingNearest2d(size=3))


def test_with_indices_aliases_return_the_return_indices_path():
    F = fg.nn.functional
    x2, x1 = fg.tensor(rng.standard_normal((1, 2, 5, 6))), fg.tensor(rng.standard_normal((2, 3, 7)))
    pairs = [
        (F.max_pool2d_with_indices(x2, 2, 1), F.max_pool2d(x2, 2, 1, return_indices=True)),
        (F.max_pool1d_with_indices(x1, 3), F.max_pool1d(x1, 3, return_indices=True)),
        (F.adaptive_max_pool2d_with_indices(x2, (2, 4)), F.adaptive_max_pool2d(x2, (2, 4), True)),
        (F.adaptive_max_pool1d_with_indices(x1, 3), F.adaptive_max_pool1d(x1, 3, True)),
    ]
    for got, expected in pairs:
        assert len(got) == 2
        np.testing.assert_array_equal(got[0].numpy(), expected[0].numpy())
        np.testing.assert_array_equal(got[1].numpy(), expected[1].numpy())
    if torch is not None:
        out, idx = torch.nn.functional.max_pool2d_with_indices(torch.tensor(x2.numpy()), 2, 1)
        np.testing.assert_array_equal(pairs[0][0][1].numpy(), idx.numpy())


# ---- losses ---------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss_matches_torch_and_finite_differences(reduction, p):
    target = np.array([0, 3, 4, 1])
    weight = rng.uniform(0.5, 2, 5)
    check_op(
        lambda T, x: T.nn.functional.multi_margin_loss(
            x, T.tensor(target), p=p, margin=0.7, weight=T.tensor(weight), reduction=reduction
        ),
        rng.standard_normal((4, 5)),
    )
    check_op(
        lambda T, x: T.nn.functional.multi_margin_loss(x, T.tensor([2]), p=p, reduction=reduction),
        rng.standard_normal(4),
    )


def test_multi_margin_loss_errors_as_torch():
    x = lambda T: T.ones(3, 4)  # noqa: E731
    assert_raises_like_torch(
        lambda F, T: F.multi_margin_loss(x(T), T.tensor([0, 1, 2]), p=3), ValueError, "only p == 1"
    )
    assert_raises_like_torch(
        lambda F, T: F.multi_margin_loss(x(T), T.tensor([0, 1, 2]), weight=T.ones(2, 2)),
        ValueError,
        "one-dimensional",
    )
    assert_raises_like_torch(
        lambda F, T: F.multi_margin_loss(x(T), T.tensor([0, 1])),
        RuntimeError,
        r"Expected target size \[3\], but got \[2\]",
    )
    assert_raises_like_torch(
        lambda F, T: F.multi_margin_loss(x(T), T.tensor([0, 1, 5])), RuntimeError, "target out of range"
    )
    assert_raises_like_torch(
        lambda F, T: F.multi_margin_loss(T.ones(3, 4, 2), T.tensor([0, 1, 2])),
        RuntimeError,
        "Expected non-empty vector",
    )


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss_matches_torch_and_finite_differences(reduction):
    # labels up to each row's first -1, repeats included
    target = np.array([[3, 0, -1, 1, 2], [1, 1, -1, 0, 0], [-1, 2, 3, 4, 0], [0, 1, 2, 3, 4]])
    check_op(
        lambda T, x: T.nn.functional.multilabel_margin_loss(x, T.tensor(target), reduction=reduction),
        rng.standard_normal((4, 5)),
    )
    check_op(
        lambda T, x: T.nn.functional.multilabel_margin_loss(x, T.tensor([2, 0, -1]), reduction=reduction),
        rng.standard_normal(3),
    )


def test_multilabel_margin_loss_errors_as_torch():
    assert_raises_like_torch(
        lambda F, T: F.multilabel_margin_loss(T.ones(3, 4), T.tensor([0, 1, 2])),
        RuntimeError,
        "inconsistent target size",
    )


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_triplet_margin_with_distance_loss_matches_torch(swap, reduction):
    a, p, n = (rng.standard_normal((3, 4)) for _ in range(3))
    check_op(
        lambda T, x, y, z: T.nn.functional.triplet_margin_with_distance_loss(
            x, y, z, swap=swap, reduction=reduction
        ),
        a,
        p,
        n,
    )
    cosine = lambda T: lambda u, v: 1 - T.nn.functional.cosine_similarity(u, v)  # noqa: E731
    check_op(
        lambda T, x, y, z: T.nn.functional.triplet_margin_with_distance_loss(
            x, y, z, distance_function=cosine(T), margin=0.5, swap=swap, reduction=reduction
        ),
        a,
        p,
        n,
    )


def test_triplet_margin_with_distance_loss_errors_and_module():
    ones = lambda T, n=2: T.ones((3,) * n)  # noqa: E731
    assert_raises_like_torch(
        lambda F, T: F.triplet_margin_with_distance_loss(ones(T), ones(T), ones(T), margin=0),
        ValueError,
        "margin must be greater than 0",
    )
    assert_raises_like_torch(
        lambda F, T: F.triplet_margin_with_distance_loss(ones(T), ones(T, 1), ones(T)),
        RuntimeError,
        "anchor 2D, positive 1D, and negative 2D",
    )
    with pytest.raises(ValueError, match="TripletMarginWithDistanceLoss: expected margin"):
        fg.nn.TripletMarginWithDistanceLoss(margin=-1)
    m = fg.nn.TripletMarginWithDistanceLoss(reduction="sum")
    assert isinstance(m.distance_function, fg.nn.PairwiseDistance)
    a, p, n = (fg.randn(3, 4) for _ in range(3))
    np.testing.assert_allclose(
        m(a, p, n).item(), fg.nn.functional.triplet_margin_loss(a, p, n, reduction="sum").item()
    )


def test_margin_loss_modules_match_functional():
    x, t = fg.randn(4, 5), fg.tensor([0, 3, 4, 1])
    w = fg.rand(5) + 0.5
    m = fg.nn.MultiMarginLoss(p=2, margin=0.5, weight=w, reduction="none")
    assert "weight" in dict(m.named_buffers())
    np.testing.assert_allclose(
        m(x, t).numpy(), fg.nn.functional.multi_margin_loss(x, t, 2, 0.5, w, reduction="none").numpy()
    )
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        fg.nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="expected weight to be None or 1D tensor, got 2D"):
        fg.nn.MultiMarginLoss(weight=fg.ones(2, 2))
    labels = fg.tensor([[1, -1, 0, 0, 0]] * 4)
    np.testing.assert_allclose(
        fg.nn.MultiLabelMarginLoss()(x, labels).item(),
        fg.nn.functional.multilabel_margin_loss(x, labels).item(),
    )


# ---- embedding_bag --------------------------------------------------------------------

BAG_INPUT = np.array([1, 2, 4, 5, 4, 3, 2, 9])


@needs_torch
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2, -6])
@pytest.mark.parametrize("offsets", [[0, 2, 2, 5], [0, 3, 8]])
def test_embedding_bag_matches_torch(mode, padding_idx, offsets):
    include_last = offsets[-1] == len(BAG_INPUT)  # (torch leaves gradients past a last offset undefined)
    check_op(
        lambda T, w: T.nn.functional.embedding_bag(
            T.tensor(BAG_INPUT),
            w,
            T.tensor(offsets),
            mode=mode,
            padding_idx=padding_idx,
            include_last_offset=include_last,
        ),
        rng.standard_normal((10, 3)),
    )


def test_embedding_bag_2d_input_and_per_sample_weights():
    check_op(
        lambda T, w: T.nn.functional.embedding_bag(T.tensor(BAG_INPUT.reshape(2, 4)), w, mode="max"),
        rng.standard_normal((10, 3)),
    )
    check_op(
        lambda T, w, psw: T.nn.functional.embedding_bag(
            T.tensor(BAG_INPUT), w, T.tensor([0, 4]), mode="sum", per_sample_weights=psw
        ),
        rng.standard_normal((10, 2)),
        rng.standard_normal(8),
    )


def test_embedding_bag_errors_as_torch():
    idx, w = lambda T: T.tensor([1, 2, 3]), lambda T: T.ones(5, 2)  # noqa: E731
    assert_raises_like_torch(
        lambda F, T: F.embedding_bag(idx(T), w(T)), ValueError, "offsets has to be a 1D Tensor but got None"
    )
    assert_raises_like_torch(
        lambda F, T: F.embedding_bag(T.tensor([[1, 2]]), w(T), T.tensor([0])),
        ValueError,
        "if input is 2D, then offsets",
    )
    assert_raises_like_torch(
        lambda F, T: F.embedding_bag(idx(T), w(T), T.tensor([0]), mode="min"),
        ValueError,
        "mode has to be one of",
    )
    assert_raises_like_torch(
        lambda F, T: F.embedding_bag(idx(T), w(T), T.tensor([0]), per_sample_weights=T.ones(3)),
        NotImplementedError,
        "per_sample_weights is only supported for mode='sum'",
    )
    assert_raises_like_torch(
        lambda F, T: F.embedding_bag(idx(T), w(T), T.tensor([1])), RuntimeError, "offsets\\[0\\] has to be 0"
    )
    assert_raises_like_torch(
        lambda F, T: F.embedding_bag(T.tensor([1, 7]), w(T), T.tensor([0])),
        RuntimeError,
        "Index 1 of input takes value 7",
    )


def test_embedding_bag_module():
    m = fg.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2)
    np.testing.assert_array_equal(m.weight.detach().numpy()[2], 0.0)
    out = m(fg.tensor(BAG_INPUT), fg.tensor([0, 4]))
    w = m.weight.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), [w[[1, 4, 5]].sum(0), w[[4, 3, 9]].sum(0)])
    frozen = fg.nn.EmbeddingBag.from_pretrained(fg.ones(4, 2), mode="max")
    assert not frozen.weight.requires_grad and frozen.mode == "max"
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        fg.nn.EmbeddingBag(3, 2, padding_idx=3)
    if torch is not None:
        assert repr(m) == repr(torch.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2))


# ---- nn.Buffer and BatchNorm3d --------------------------------------------------------


def test_buffer_assignment_registers_buffers_with_persistence():
    for T in MODULES:
        m = T.nn.Module()
        m.kept = T.nn.Buffer(T.ones(2))
        m.transient = T.nn.Buffer(T.zeros(1), persistent=False)
        m.plain = T.ones(3)
        assert [name for name, _ in m.named_buffers()] == ["kept", "transient"]
        assert list(m.state_dict()) == ["kept"]
        assert isinstance(m.kept, T.nn.Buffer) and not isinstance(m.plain, T.nn.Buffer)
        assert T.nn.Buffer(T.ones(1, requires_grad=True)).requires_grad
        assert tuple(T.nn.Buffer().shape) == (0,)
        m.kept = T.zeros(2)  # replacing a buffer keeps it one
        assert "kept" in dict(m.named_buffers())
        with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'kept'"):
            m.kept = 3


@needs_torch
def test_batch_norm3d_matches_torch():
    a = rng.standard_normal((2, 3, 2, 2, 3))
    mine, theirs = fg.nn.BatchNorm3d(3), torch.nn.BatchNorm3d(3, dtype=torch.float64)
    mine = mine.to(fg.float64) if hasattr(mine, "to") else mine
    for _ in range(2):
        np.testing.assert_allclose(
            mine(fg.tensor(a)).detach().numpy(), theirs(torch.tensor(a)).detach().numpy(), atol=1e-6
        )
    np.testing.assert_allclose(mine.running_var.numpy(), theirs.running_var.numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="expected 5D input"):
        mine(fg.ones(2, 3, 4))


# ---- 3-d pooling ----------------------------------------------------------------------

POOL3D = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": (2, 3, 2), "stride": (1, 2, 3), "padding": (1, 1, 0), "ceil_mode": True},
]


@pytest.mark.parametrize("kwargs", [*POOL3D, {"kernel_size": 2, "dilation": 2, "stride": 1}])
@pytest.mark.parametrize("batched", [True, False])
def test_max_pool3d_matches_torch_and_finite_differences(kwargs, batched):
    x = rng.permutation(2 * 4 * 5 * 5).reshape((2, 4, 5, 5)).astype(np.float64) / 10  # distinct: no ties
    x = x[None] if batched else x
    check_op(lambda T, a: T.nn.functional.max_pool3d(a, **kwargs), x)
    if torch is not None:
        _, mine = fg.nn.functional.max_pool3d_with_indices(fg.tensor(x), **kwargs)
        _, theirs = torch.nn.functional.max_pool3d(torch.tensor(x), return_indices=True, **kwargs)
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize(
    "kwargs",
    [
        *POOL3D,
        {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
        {"kernel_size": (2, 3, 2), "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False},
        {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "divisor_override": 5},
    ],
)
def test_avg_pool3d_matches_torch_and_finite_differences(kwargs):
    check_op(lambda T, a: T.nn.functional.avg_pool3d(a, **kwargs), rng.standard_normal((1, 2, 4, 5, 5)))


@pytest.mark.parametrize("output_size", [2, (3, 2, 4), (None, 2, 3), 1])
def test_adaptive_avg_pool3d_matches_torch_and_finite_differences(output_size):
    check_op(
        lambda T, a: T.nn.functional.adaptive_avg_pool3d(a, output_size), rng.standard_normal((1, 2, 4, 5, 5))
    )


def test_pool3d_errors_and_modules():
    assert_raises_like_torch(
        lambda F, T: F.max_pool3d(T.ones(4, 4, 4), 2), RuntimeError, "non-empty 4D or 5D"
    )
    assert_raises_like_torch(
        lambda F, T: F.avg_pool3d(T.ones(1, 1, 4, 4, 4), 2, padding=2),
        RuntimeError,
        "pad should be at most half",
    )
    assert_raises_like_torch(
        lambda F, T: F.adaptive_avg_pool3d(T.ones(4, 4), 2), RuntimeError, "Expected 4D or 5D"
    )
    x = fg.randn(1, 2, 4, 4, 4)
    np.testing.assert_array_equal(fg.nn.MaxPool3d(2)(x).numpy(), fg.nn.functional.max_pool3d(x, 2).numpy())
    np.testing.assert_array_equal(fg.nn.AvgPool3d(2)(x).numpy(), fg.nn.functional.avg_pool3d(x, 2).numpy())
    np.testing.assert_array_equal(
        fg.nn.AdaptiveAvgPool3d(3)(x).numpy(), fg.nn.functional.adaptive_avg_pool3d(x, 3).numpy()
    )
    if torch is not None:
        for name, args in [
            ("MaxPool3d", (2,)),
            ("AvgPool3d", (3, 2)),
            ("AdaptiveAvgPool3d", ((2, None, 3),)),
        ]:
            assert repr(getattr(fg.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))

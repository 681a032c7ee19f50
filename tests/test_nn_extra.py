"""The activations, distances, losses, rearranging and normalization functions added to
nn.functional, with their modules: values and gradients against finite differences and torch
(float64 and float32), module parameters, buffers and reprs, and torch's errors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import arrays, assert_raises_like_torch, check_op, shapes

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is the reference")


def off_kinks(a, kinks, margin=1e-2):
    """``a`` with every element within ``margin`` of a kink moved ``2 * margin`` above it, so
    finite differences never straddle one."""
    a = np.array(a, dtype=np.float64)
    for k in kinks:
        a[np.abs(a - k) < margin] = k + 2 * margin
    return a


# ---- activations ----------------------------------------------------------------------

ACTIVATIONS = {
    "selu": (lambda F, x: F.selu(x), [0.0]),
    "celu": (lambda F, x: F.celu(x, alpha=0.7), []),
    "celu_negative_alpha": (lambda F, x: F.celu(x, alpha=-1.5), [0.0]),
    "mish": (lambda F, x: F.mish(x), []),
    "softsign": (lambda F, x: F.softsign(x), [0.0]),
    "tanhshrink": (lambda F, x: F.tanhshrink(x), []),
    "hardswish": (lambda F, x: F.hardswish(x * 2), [-1.5, 1.5]),
    "hardsigmoid": (lambda F, x: F.hardsigmoid(x * 2), [-1.5, 1.5]),
    "softshrink": (lambda F, x: F.softshrink(x, 0.8), [-0.8, 0.8]),
    "hardshrink": (lambda F, x: F.hardshrink(x, 0.6), [-0.6, 0.6]),
    "threshold": (lambda F, x: F.threshold(x, 0.4, -2.5), [0.4]),
    "softmin": (lambda F, x: F.softmin(x, dim=-1), []),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_activations_match_torch_and_finite_differences(name, data):
    fn, kinks = ACTIVATIONS[name]
    min_dims = 1 if name == "softmin" else 0
    a = off_kinks(data.draw(arrays(shapes(min_dims=min_dims, max_dims=3, max_side=4), -4.0, 4.0)), kinks)
    check_op(lambda T, x: fn(T.nn.functional, x), a)


@pytest.mark.parametrize("name", ["selu", "celu", "mish", "hardswish", "hardsigmoid", "threshold"])
def test_inplace_activations_overwrite_their_input_and_keep_gradients(name):
    F = fg.nn.functional
    extra = (0.2, -1.0) if name == "threshold" else ()
    a = np.array([-4.0, -2.0, -0.3, 0.4, 2.5, 3.5])
    x = fg.tensor(a, requires_grad=True)
    y = x * 1.0
    out = getattr(F, name)(y, *extra, inplace=True)
    assert out is y
    expected = getattr(F, name)(fg.tensor(a), *extra).numpy()
    np.testing.assert_allclose(y.detach().numpy(), expected)
    (out * fg.arange(6.0)).sum().backward()
    x2 = fg.tensor(a, requires_grad=True)
    (getattr(F, name)(x2, *extra) * fg.arange(6.0)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy())
    if name == "threshold":
        z = fg.tensor(a)
        assert F.threshold_(z, 0.2, -1.0) is z
        np.testing.assert_array_equal(z.numpy(), expected)


def test_activation_definitions_without_torch():
    F = fg.nn.functional
    a = np.linspace(-5, 5, 41)
    x = fg.tensor(a)
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    np.testing.assert_allclose(F.selu(x).numpy(), scale * np.where(a > 0, a, alpha * np.expm1(a)), rtol=1e-12)
    np.testing.assert_allclose(
        F.celu(x, 2.0).numpy(),
        np.maximum(a, 0) + np.minimum(0, 2.0 * np.expm1(a / 2.0)),
        rtol=1e-12,
        atol=1e-15,
    )
    np.testing.assert_allclose(F.mish(x).numpy(), a * np.tanh(np.log1p(np.exp(a))), rtol=1e-12)
    np.testing.assert_allclose(F.hardsigmoid(x).numpy(), np.clip(a + 3, 0, 6) / 6, atol=1e-15)
    np.testing.assert_allclose(F.hardswish(x).numpy(), a * np.clip(a + 3, 0, 6) / 6, atol=1e-15)
    np.testing.assert_allclose(
        F.softshrink(x, 1.0).numpy(), np.sign(a) * np.maximum(np.abs(a) - 1, 0), atol=1e-15
    )
    np.testing.assert_array_equal(F.hardshrink(x, 1.0).numpy(), np.where(np.abs(a) > 1, a, 0))
    np.testing.assert_array_equal(F.threshold(x, 1.0, 7.0).numpy(), np.where(a > 1, a, 7.0))
    # mish does not overflow where its softplus would
    big = F.mish(fg.tensor([-200.0, 200.0], requires_grad=True))
    np.testing.assert_allclose(big.detach().numpy(), [0.0, 200.0], atol=1e-12)
    assert np.isfinite(F.celu(fg.tensor([1e4]), 1e-3).numpy()).all()


def test_hard_activation_gradients_at_their_corners():
    """At exactly -3 and 3 the gradients take the side PyTorch's kernels take."""
    F = fg.nn.functional
    for name, want in (("hardsigmoid", [0.0, 0.0, 1 / 6]), ("hardswish", [0.0, 1.0, 0.5])):
        x = fg.tensor([-3.0, 3.0, 0.0], dtype=fg.float64, requires_grad=True)
        getattr(F, name)(x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)
        if torch is not None:
            t = torch.tensor([-3.0, 3.0, 0.0], dtype=torch.float64, requires_grad=True)
            getattr(torch.nn.functional, name)(t).sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-7)


@pytest.mark.parametrize(
    "shape, slopes", [((5,), 1), ((3, 4), 4), ((2, 3, 5), 3), ((2, 3, 2, 2), 3), ((2, 3), 1)]
)
def test_prelu(shape, slopes):
    rng = np.random.default_rng(sum(shape))
    a = off_kinks(rng.standard_normal(shape) * 2, [0.0])
    w = rng.standard_normal(slopes)
    check_op(lambda T, x, w: T.nn.functional.prelu(x, w), a, w)
    out = fg.nn.functional.prelu(fg.tensor(a), fg.tensor(w)).numpy()
    per_channel = w.reshape((-1,) + (1,) * (len(shape) - 2)) if slopes > 1 else w
    np.testing.assert_allclose(out, np.where(a > 0, a, per_channel * a))


def test_prelu_module_learns_its_slopes():
    m = fg.nn.PReLU(3, init=0.1)
    assert isinstance(m.weight, fg.nn.Parameter)
    np.testing.assert_allclose(m.weight.detach().numpy(), [0.1] * 3, rtol=1e-6)
    assert list(m.state_dict()) == ["weight"]
    out = m(fg.tensor([[-1.0, -2.0, 3.0]]))
    np.testing.assert_allclose(out.detach().numpy(), [[-0.1, -0.2, 3.0]], rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), [-1.0, -2.0, 0.0])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_glu(dim):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 6, 2))
    check_op(lambda T, x: T.nn.functional.glu(x, dim), a)
    half = a.shape[dim] // 2
    first, second = np.split(a, [half], axis=dim)
    out = fg.nn.functional.glu(fg.tensor(a), dim).numpy()
    np.testing.assert_allclose(out, first / (1 + np.exp(-second)), rtol=1e-12)


def test_softmin_without_dim_warns_as_softmax_does():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        out = fg.nn.functional.softmin(fg.tensor([[1.0, 2.0]]))
    np.testing.assert_allclose(out.numpy(), [[1 / (1 + math.exp(-1)), 1 / (1 + math.exp(1))]], rtol=1e-6)


# ---- distances -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "s1, s2, dim",
    [
        ((4, 5), (4, 5), 1),
        ((3, 4, 5), (3, 4, 5), 2),
        ((3, 4), (4,), 1),
        ((2, 1, 3), (4, 3), -1),
        ((6,), (6,), 0),
    ],
)
def test_cosine_similarity(s1, s2, dim):
    rng = np.random.default_rng(len(s1) + len(s2))
    a, b = rng.standard_normal(s1), rng.standard_normal(s2)
    out = check_op(lambda T, x, y: T.nn.functional.cosine_similarity(x, y, dim), a, b)
    A, B = np.broadcast_arrays(a, b)
    want = (A * B).sum(dim) / (np.linalg.norm(A, axis=dim) * np.linalg.norm(B, axis=dim))
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12)


def test_cosine_similarity_floors_each_norm_at_eps():
    """Each vector is divided by its own norm floored at eps, not the product of the norms."""
    a = np.array([[1e-9, 0.0], [3.0, 4.0]])
    b = np.array([[100.0, 0.0], [0.0, 1e-10]])
    out = fg.nn.functional.cosine_similarity(fg.tensor(a), fg.tensor(b), eps=1e-8).numpy()
    np.testing.assert_allclose(out, [0.1, 0.8 * 1e-2], rtol=1e-9)
    if torch is None:
        return
    grads = []
    for T in (fg, torch):  # the floor is not smooth: compared with torch, not finite differences
        x, y = T.tensor(a, requires_grad=True), T.tensor(b, requires_grad=True)
        T.nn.functional.cosine_similarity(x, y, eps=1e-8).backward(T.tensor([1.0, -2.0], dtype=T.float64))
        grads.append([x.grad.numpy(), y.grad.numpy()])
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, math.inf])
@pytest.mark.parametrize("shapes_", [((4, 5), (4, 5)), ((3, 4), (4,)), ((2, 3, 4), (2, 3, 4)), ((5,), (5,))])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance(p, shapes_, keepdim):
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(shapes_[0]), rng.standard_normal(shapes_[1])
    out = check_op(lambda T, x, y: T.nn.functional.pairwise_distance(x, y, p, keepdim=keepdim), a, b)
    d = np.abs(a - b + 1e-6)
    want = d.max(-1) if p == math.inf else (d**p).sum(-1) ** (1 / p)
    np.testing.assert_allclose(out.detach().numpy(), want[..., None] if keepdim else want, rtol=1e-12)


def test_pairwise_distance_zero_norm_counts_nonzero_differences():
    a = fg.tensor([[1.0, 2.0, 3.0]])
    b = fg.tensor([[1.0 + 1e-6, 0.0, 3.0 + 1e-6]])
    assert fg.nn.functional.pairwise_distance(a, b, p=0, eps=0.0).item() == 3.0
    assert fg.nn.functional.pairwise_distance(a, a, p=0, eps=0.0).tolist() == [0.0]


# ---- losses -----------------------------------------------------------------------------------

REDUCTIONS = ["none", "mean", "sum"]


def _signs(rng, shape):
    return np.where(rng.random(shape) < 0.5, -1.0, 1.0)


def _loss_cases(rng):
    """name -> (fn(T, reduction, *tensors), float inputs); targets are constants in the closures."""
    x = rng.standard_normal((5, 4)) * 2
    y = rng.standard_normal((5, 4))
    t = _signs(rng, (5, 4))
    t1 = _signs(rng, (5,))
    counts = rng.integers(0, 5, (5, 4)).astype(np.float64)
    bits = (rng.random((5, 4)) < 0.5).astype(np.float64)
    w = rng.random(4) + 0.5
    ranked = y + off_kinks(x - y + 0.3 * t, [0.0]) - 0.3 * t  # keeps -t (x - y) + margin off 0
    hinge = off_kinks(x, [0.7])
    return {
        "margin_ranking": (
            lambda T, r, a, b: T.nn.functional.margin_ranking_loss(
                a, b, T.tensor(t), margin=0.3, reduction=r
            ),
            [ranked, y],
        ),
        "hinge_embedding": (
            lambda T, r, a: T.nn.functional.hinge_embedding_loss(a, T.tensor(t), margin=0.7, reduction=r),
            [hinge],
        ),
        "soft_margin": (lambda T, r, a: T.nn.functional.soft_margin_loss(a, T.tensor(t), reduction=r), [x]),
        "cosine_embedding": (
            lambda T, r, a, b: T.nn.functional.cosine_embedding_loss(
                a, b, T.tensor(t1), margin=-0.9, reduction=r
            ),
            [x, y],
        ),
        "cosine_embedding_1d": (
            lambda T, r, a, b: T.nn.functional.cosine_embedding_loss(
                a, b, T.tensor(-1.0), margin=-0.9, reduction=r
            ),
            [x[0], y[0]],
        ),
        "triplet": (
            lambda T, r, a, p, n: T.nn.functional.triplet_margin_loss(a, p, n, margin=3.0, reduction=r),
            [x, y, rng.standard_normal((5, 4)) * 2],
        ),
        "triplet_swap_p1": (
            lambda T, r, a, p, n: T.nn.functional.triplet_margin_loss(
                a, p, n, margin=4.0, p=1, swap=True, reduction=r
            ),
            [x, y, rng.standard_normal((5, 4)) * 2],
        ),
        "poisson_log": (
            lambda T, r, a: T.nn.functional.poisson_nll_loss(a, T.tensor(counts), reduction=r),
            [x],
        ),
        "poisson_full": (
            lambda T, r, a: T.nn.functional.poisson_nll_loss(a, T.tensor(counts), full=True, reduction=r),
            [x],
        ),
        "poisson_rate": (
            lambda T, r, a: T.nn.functional.poisson_nll_loss(
                a, T.tensor(counts), log_input=False, reduction=r
            ),
            [np.abs(x) + 0.1],
        ),
        "poisson_both_grads": (
            lambda T, r, a, c: T.nn.functional.poisson_nll_loss(a, c, full=True, reduction=r),
            [x, counts + 1.5],
        ),
        "gaussian": (
            lambda T, r, a, v: T.nn.functional.gaussian_nll_loss(a, T.tensor(y), v, reduction=r),
            [x, np.abs(y) + 0.1],
        ),
        "gaussian_full_homoscedastic": (
            lambda T, r, a, v: T.nn.functional.gaussian_nll_loss(a, T.tensor(y), v, full=True, reduction=r),
            [x, np.abs(y[:, 0]) + 0.1],
        ),
        "gaussian_one_var_column": (
            lambda T, r, a, v: T.nn.functional.gaussian_nll_loss(a, T.tensor(y), v, reduction=r),
            [x, np.abs(y[:, :1]) + 0.1],
        ),
        "gaussian_float_var": (
            lambda T, r, a, b: T.nn.functional.gaussian_nll_loss(a, b, 0.5, reduction=r),
            [x, y],
        ),
        "multilabel_soft_margin": (
            lambda T, r, a: T.nn.functional.multilabel_soft_margin_loss(a, T.tensor(bits), reduction=r),
            [x],
        ),
        "multilabel_soft_margin_weighted": (
            lambda T, r, a: T.nn.functional.multilabel_soft_margin_loss(
                a, T.tensor(bits), weight=T.tensor(w), reduction=r
            ),
            [x],
        ),
    }


LOSS_NAMES = sorted(_loss_cases(np.random.default_rng(0)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", LOSS_NAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_losses_match_torch_and_finite_differences(name, reduction, seed):
    fn, inputs = _loss_cases(np.random.default_rng(seed))[name]
    out = check_op(lambda T, *xs: fn(T, reduction, *xs), *inputs)
    assert out.shape == (() if reduction != "none" else out.shape)


@settings(max_examples=20, deadline=None)
@given(
    shape=st.sampled_from([(3,), (2, 3), (4, 1), (2, 2, 2)]),
    margin=st.floats(-1.0, 1.0),
    reduction=st.sampled_from(REDUCTIONS),
    data=st.data(),
)
def test_margin_ranking_and_hinge_against_their_definitions(shape, margin, reduction, data):
    a = data.draw(arrays(shape))
    b = data.draw(arrays(shape))
    t = np.where(data.draw(arrays(shape)) < 0, -1.0, 1.0)
    F = fg.nn.functional

    def reduce(v):
        return v if reduction == "none" else v.sum() if reduction == "sum" else v.mean()

    got = F.margin_ranking_loss(fg.tensor(a), fg.tensor(b), fg.tensor(t), margin, reduction=reduction).numpy()
    np.testing.assert_allclose(got, reduce(np.maximum(0, -t * (a - b) + margin)), rtol=1e-12, atol=1e-12)
    got = F.hinge_embedding_loss(fg.tensor(a), fg.tensor(t), margin + 1, reduction=reduction).numpy()
    want = np.where(t == 1, a, np.maximum(0, margin + 1 - a))
    np.testing.assert_allclose(got, reduce(want), rtol=1e-12, atol=1e-12)
    got = F.soft_margin_loss(fg.tensor(a), fg.tensor(t), reduction=reduction).numpy()
    np.testing.assert_allclose(got, reduce(np.log1p(np.exp(-a * t))), rtol=1e-12)


def test_gaussian_nll_loss_floors_the_variance_but_passes_its_gradient():
    x, y = fg.tensor([1.0, 2.0], dtype=fg.float64), fg.tensor([0.0, 0.0], dtype=fg.float64)
    var = fg.tensor([1e-9, 4.0], dtype=fg.float64, requires_grad=True)
    loss = fg.nn.functional.gaussian_nll_loss(x, y, var, eps=1e-3, reduction="none")
    np.testing.assert_allclose(
        loss.detach().numpy(), 0.5 * (np.log([1e-3, 4.0]) + np.array([1.0, 4.0]) / [1e-3, 4.0])
    )
    loss.sum().backward()
    v = np.array([1e-3, 4.0])
    np.testing.assert_allclose(var.grad.numpy(), 0.5 * (1 / v - np.array([1.0, 4.0]) / v**2))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_loss_modules_match_their_functions(reduction):
    rng = np.random.default_rng(11)
    x, y, z = (fg.tensor(rng.standard_normal((4, 3))) for _ in range(3))
    t = fg.tensor(_signs(rng, (4, 3)))
    t1 = fg.tensor(_signs(rng, (4,)))
    F, nn = fg.nn.functional, fg.nn
    pairs = [
        (
            nn.MarginRankingLoss(0.2, reduction=reduction)(x, y, t),
            F.margin_ranking_loss(x, y, t, 0.2, reduction=reduction),
        ),
        (
            nn.HingeEmbeddingLoss(reduction=reduction)(x, t),
            F.hinge_embedding_loss(x, t, 1.0, reduction=reduction),
        ),
        (nn.SoftMarginLoss(reduction=reduction)(x, t), F.soft_margin_loss(x, t, reduction=reduction)),
        (
            nn.CosineEmbeddingLoss(0.1, reduction=reduction)(x, y, t1),
            F.cosine_embedding_loss(x, y, t1, 0.1, reduction=reduction),
        ),
        (
            nn.TripletMarginLoss(2.0, p=1, swap=True, reduction=reduction)(x, y, z),
            F.triplet_margin_loss(x, y, z, 2.0, 1, swap=True, reduction=reduction),
        ),
        (
            nn.PoissonNLLLoss(full=True, reduction=reduction)(x, y.abs() * 3),
            F.poisson_nll_loss(x, y.abs() * 3, full=True, reduction=reduction),
        ),
        (
            nn.GaussianNLLLoss(full=True, reduction=reduction)(x, y, z.abs()),
            F.gaussian_nll_loss(x, y, z.abs(), full=True, reduction=reduction),
        ),
        (
            nn.MultiLabelSoftMarginLoss(weight=fg.ones(3) * 2, reduction=reduction)(x, (t > 0).double()),
            F.multilabel_soft_margin_loss(x, (t > 0).double(), weight=fg.ones(3) * 2, reduction=reduction),
        ),
    ]
    for got, want in pairs:
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_legacy_reduction_arguments_warn_and_apply():
    x, t = fg.tensor([[1.0, -2.0]]), fg.tensor([[1.0, -1.0]])
    with pytest.warns(UserWarning, match="reduction='sum'"):
        got = fg.nn.functional.soft_margin_loss(x, t, size_average=False)
    np.testing.assert_allclose(got.item(), np.log1p(np.exp([-1.0, -2.0])).sum(), rtol=1e-6)
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert fg.nn.MarginRankingLoss(reduce=False).reduction == "none"


# ---- rearranging ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, r", [((1, 4, 2, 3), 2), ((2, 9, 2, 2), 3), ((8, 1, 1), 2), ((2, 2, 4, 2, 2), 2), ((3, 2, 2), 1)]
)
def test_pixel_shuffle_and_unshuffle(shape, r):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape)
    out = check_op(lambda T, x: T.nn.functional.pixel_shuffle(x, r), a, grad=True)
    *lead, c, h, w = shape
    # Output pixel (y, x) of channel k comes from channel k r^2 + (y % r) r + x % r at (y // r, x // r).
    k, y, x = np.meshgrid(np.arange(c // r**2), np.arange(h * r), np.arange(w * r), indexing="ij")
    want = a[..., k * r * r + (y % r) * r + x % r, y // r, x // r]
    np.testing.assert_array_equal(out.detach().numpy(), want)
    back = check_op(lambda T, x: T.nn.functional.pixel_unshuffle(x, r), out.detach().numpy())
    np.testing.assert_array_equal(back.detach().numpy(), a)
    np.testing.assert_array_equal(fg.nn.PixelUnshuffle(r)(fg.nn.PixelShuffle(r)(fg.tensor(a))).numpy(), a)


@pytest.mark.parametrize("shape, groups", [((2, 6, 3), 2), ((1, 6, 2, 2), 3), ((2, 4, 1), 4), ((3, 5, 2), 1)])
def test_channel_shuffle(shape, groups):
    a = np.random.default_rng(2).standard_normal(shape)
    out = check_op(lambda T, x: T.nn.functional.channel_shuffle(x, groups), a)
    c = shape[1]
    order = [(i % groups) * (c // groups) + i // groups for i in range(c)]
    np.testing.assert_array_equal(out.detach().numpy(), a[:, order])
    np.testing.assert_array_equal(fg.nn.ChannelShuffle(groups)(fg.tensor(a)).numpy(), a[:, order])


@pytest.mark.parametrize(
    "dim, sizes, shape",
    [(1, (2, 3), (4, 6)), (-1, [3, -1], (2, 6)), (0, (1, 2, 2), (4, 3)), (1, (-1,), (2, 5))],
)
def test_unflatten(dim, sizes, shape):
    a = np.arange(float(np.prod(shape))).reshape(shape)
    m = fg.nn.Unflatten(dim, sizes)
    out = m(fg.tensor(a, requires_grad=True))
    if torch is not None:
        assert tuple(out.shape) == tuple(torch.nn.Unflatten(dim, sizes)(torch.tensor(a)).shape)
        assert repr(m) == repr(torch.nn.Unflatten(dim, sizes))
    np.testing.assert_array_equal(out.detach().numpy().reshape(shape), a)
    assert out.dim() == len(shape) - 1 + len(sizes)


PADS = [
    ("ZeroPad1d", (2,), "constant", (3, 4)),
    ("ZeroPad2d", ((1, 0, 2, 1),), "constant", (2, 3, 4)),
    ("ZeroPad3d", (1,), "constant", (1, 2, 2, 2, 2)),
    ("ConstantPad1d", ((0, 2), 1.5), "constant", (2, 3, 4)),
    ("ConstantPad2d", (1, -2.0), "constant", (2, 3, 3)),
    ("ConstantPad3d", ((1, 0, 0, 1, 2, 0), 0.5), "constant", (2, 2, 2, 3)),
    ("ReflectionPad1d", (2,), "reflect", (2, 3, 4)),
    ("ReflectionPad2d", ((1, 2, 0, 1),), "reflect", (1, 2, 3, 4)),
    ("ReflectionPad3d", (1,), "reflect", (1, 1, 2, 3, 3)),
    ("ReplicationPad1d", ((3, 1),), "replicate", (2, 4)),
    ("ReplicationPad2d", (2,), "replicate", (1, 2, 2, 3)),
    ("ReplicationPad3d", ((1, 0, 2, 0, 0, 1),), "replicate", (2, 2, 2, 2)),
    ("CircularPad1d", (1,), "circular", (2, 3, 4)),
    ("CircularPad2d", ((1, 2, 2, 0),), "circular", (1, 2, 3, 4)),
    ("CircularPad3d", (1,), "circular", (1, 1, 2, 3, 3)),
]


@pytest.mark.parametrize("name, args, mode, shape", PADS, ids=[p[0] for p in PADS])
def test_padding_modules(name, args, mode, shape):
    a = np.random.default_rng(4).standard_normal(shape)
    out = check_op(lambda T, x: getattr(T.nn, name)(*args)(x), a)
    sides = int(name[-2]) * 2
    padding = (args[0],) * sides if isinstance(args[0], int) else args[0]
    value = args[1] if len(args) > 1 else None
    want = fg.nn.functional.pad(fg.tensor(a), padding, mode, value if mode == "constant" else None)
    np.testing.assert_array_equal(out.detach().numpy(), want.numpy())
    if mode == "constant":
        width = [(0, 0)] * (len(shape) - sides // 2) + [
            (padding[2 * i], padding[2 * i + 1]) for i in reversed(range(sides // 2))
        ]
        np.testing.assert_array_equal(out.detach().numpy(), np.pad(a, width, constant_values=value or 0.0))
    if torch is not None:
        assert repr(getattr(fg.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


def test_fold_and_unfold_modules():
    a = np.random.default_rng(5).standard_normal((2, 3, 5, 4))
    unfold = fg.nn.Unfold((2, 3), padding=1, stride=(1, 2))
    cols = check_op(lambda T, x: T.nn.Unfold((2, 3), padding=1, stride=(1, 2))(x), a)
    np.testing.assert_array_equal(
        cols.detach().numpy(), fg.nn.functional.unfold(fg.tensor(a), (2, 3), padding=1, stride=(1, 2)).numpy()
    )
    check_op(lambda T, c: T.nn.Fold((5, 4), (2, 3), padding=1, stride=(1, 2))(c), cols.detach().numpy())
    if torch is not None:
        assert repr(unfold) == repr(torch.nn.Unfold((2, 3), padding=1, stride=(1, 2)))
        assert repr(fg.nn.Fold(4, 2, dilation=2)) == repr(torch.nn.Fold(4, 2, dilation=2))


# ---- normalization ----------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    lead=st.lists(st.integers(1, 3), max_size=2).map(tuple),
    shape=st.sampled_from([(4,), (2, 3), (1,), (5,)]),
    weighted=st.booleans(),
    eps=st.sampled_from([None, 1e-3]),
    data=st.data(),
)
def test_rms_norm(lead, shape, weighted, eps, data):
    a = data.draw(arrays(lead + shape))
    w = data.draw(arrays(shape))
    a[np.abs(a) < 0.1] = 0.5  # keeps every mean square away from 0, where the gradient blows up

    def f(T, x, w):
        return T.nn.functional.rms_norm(x, shape, w if weighted else None, eps)

    out = check_op(f, a, w, fd_atol=1e-4)
    e = np.finfo(np.float64).eps if eps is None else eps
    axes = tuple(range(len(lead), a.ndim))
    want = a / np.sqrt((a**2).mean(axis=axes, keepdims=True) + e) * (w if weighted else 1)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-10, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rms_norm_default_eps_follows_the_dtype(dtype):
    a = np.zeros((2, 3), dtype=dtype)
    a[0, 0] = 1e-9  # tiny values: the dtype's eps dominates the mean square
    got = fg.nn.functional.rms_norm(fg.tensor(a), (3,)).numpy()
    want = torch.nn.functional.rms_norm(torch.tensor(a), (3,)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_rms_norm_module():
    m = fg.nn.RMSNorm((2, 3), eps=1e-4)
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.ones((2, 3), dtype=np.float32))
    x = fg.randn(4, 2, 3)
    out = m(x)
    np.testing.assert_allclose((out.detach().numpy() ** 2).mean((1, 2)), 1.0, rtol=1e-3)
    out.sum().backward()
    assert m.weight.grad is not None
    assert list(fg.nn.RMSNorm(3, elementwise_affine=False).parameters()) == []
    assert m.weight.dtype == fg.float32 and fg.nn.RMSNorm(3, dtype=fg.float64).weight.dtype == fg.float64


@settings(max_examples=25, deadline=None)
@given(
    batch=st.integers(1, 3),
    channels=st.integers(1, 3),
    spatial=st.sampled_from([(3,), (2, 2), (4, 1), (2, 1, 2)]),
    affine=st.booleans(),
    data=st.data(),
)
def test_instance_norm(batch, channels, spatial, affine, data):
    a = data.draw(arrays((batch, channels) + spatial))
    a = a + np.arange(a.size).reshape(a.shape) * 1e-2  # no constant instance: its variance would be 0
    w, b = data.draw(arrays((channels,))), data.draw(arrays((channels,)))

    def f(T, x, w, b):
        return T.nn.functional.instance_norm(
            x, weight=w if affine else None, bias=b if affine else None, eps=1e-3
        )

    out = check_op(f, a, w, b, fd_atol=1e-4)
    rows = f(fg, fg.tensor(a), None, None).numpy().reshape(batch * channels, -1)
    np.testing.assert_allclose(rows.mean(1), 0, atol=1e-9)
    flat = a.reshape(batch * channels, -1)
    want = (flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(rows, want, rtol=1e-9, atol=1e-9)
    assert out.shape == a.shape


@pytest.mark.parametrize("momentum", [0.1, 0.5])
def test_instance_norm_running_statistics(momentum):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((3, 2, 5)) * 2 + 1
    mean, var = fg.zeros(2, dtype=fg.float64), fg.ones(2, dtype=fg.float64)
    fg.nn.functional.instance_norm(fg.tensor(a), mean, var, momentum=momentum)
    n = a.shape[-1]
    np.testing.assert_allclose(mean.numpy(), momentum * a.mean(2).mean(0), rtol=1e-12)
    unbiased = a.var(2) * n / (n - 1)
    np.testing.assert_allclose(var.numpy(), (1 - momentum) + momentum * unbiased.mean(0), rtol=1e-12)
    frozen = fg.nn.functional.instance_norm(fg.tensor(a), mean, var, use_input_stats=False).numpy()
    want = (a - mean.numpy()[:, None]) / np.sqrt(var.numpy()[:, None] + 1e-5)
    np.testing.assert_allclose(frozen, want, rtol=1e-12)


@pytest.mark.parametrize(
    "cls, shape",
    [
        ("InstanceNorm1d", (2, 3, 5)),
        ("InstanceNorm2d", (2, 3, 2, 3)),
        ("InstanceNorm3d", (2, 3, 2, 2, 2)),
        ("InstanceNorm1d", (3, 5)),
    ],
)
@pytest.mark.parametrize("affine, track", [(False, False), (True, True), (False, True)])
def test_instance_norm_modules(cls, shape, affine, track):
    fm = getattr(fg.nn, cls)(3, affine=affine, track_running_stats=track, momentum=0.2)
    names = [n for n, _ in fm.named_parameters()]
    assert names == (["weight", "bias"] if affine else [])
    assert list(fm.state_dict()) == names + (
        ["running_mean", "running_var", "num_batches_tracked"] if track else []
    )
    a = np.random.default_rng(8).standard_normal(shape)
    out = fm(fg.tensor(a.astype(np.float32)))
    assert out.shape == shape
    if torch is None:
        return
    tm = getattr(torch.nn, cls)(3, affine=affine, track_running_stats=track, momentum=0.2).double()
    assert repr(fm) == repr(getattr(torch.nn, cls)(3, affine=affine, track_running_stats=track, momentum=0.2))
    assert list(fm.state_dict()) == list(tm.state_dict())
    fm = fm.double()
    fm.load_state_dict({k: fg.tensor(v.numpy()) for k, v in tm.state_dict().items()})  # undo the first step
    for mode in ("train", "eval"):
        getattr(fm, mode)()
        getattr(tm, mode)()
        x, tx = fg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        y, ty = fm(x), tm(tx)
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-9, atol=1e-9)
        g = np.cos(np.arange(a.size)).reshape(shape)
        y.backward(fg.tensor(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-9)
        for name, buf in tm.state_dict().items():
            np.testing.assert_allclose(fm.state_dict()[name].numpy(), buf.numpy(), rtol=1e-12)


def test_instance_norm_module_checks_its_features():
    with pytest.raises(
        ValueError, match=r"expected input's size at dim=1 to match num_features \(3\), but got: 4."
    ):
        fg.nn.InstanceNorm1d(3, affine=True)(fg.randn(2, 4, 5))
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        fg.nn.InstanceNorm1d(3)(fg.randn(2, 4, 5))
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        fg.nn.InstanceNorm2d(3)(fg.randn(3, 4))


# ---- float32 against torch ---------------------------------------------------------------------

FLOAT32 = {
    **{name: (lambda F, x, fn=fn: fn(F, x * 2), [(3, 4)]) for name, (fn, _) in ACTIVATIONS.items()},
    "prelu": (lambda F, x, w: F.prelu(x, w), [(2, 3, 4), (3,)]),
    "glu": (lambda F, x: F.glu(x, 1), [(3, 4, 2)]),
    "cosine_similarity": (lambda F, x, y: F.cosine_similarity(x, y, -1), [(3, 4, 5), (4, 5)]),
    "pairwise_distance": (lambda F, x, y: F.pairwise_distance(x, y, 3.0), [(3, 4), (3, 4)]),
    "margin_ranking": (lambda F, x, y: F.margin_ranking_loss(x, y, x.detach().sign(), 0.5), [(6,), (6,)]),
    "soft_margin": (
        lambda F, x: F.soft_margin_loss(x, (x.detach() > 0).float() * 2 - 1, reduction="sum"),
        [(3, 4)],
    ),
    "cosine_embedding": (
        lambda F, x, y: F.cosine_embedding_loss(x, y, (x.detach()[:, 0] > 0).float() * 2 - 1),
        [(4, 3), (4, 3)],
    ),
    "triplet": (
        lambda F, x, y, z: F.triplet_margin_loss(x, y, z, margin=5.0, swap=True),
        [(4, 3), (4, 3), (4, 3)],
    ),
    "poisson": (lambda F, x: F.poisson_nll_loss(x, x.detach().abs() * 3, full=True), [(3, 4)]),
    "gaussian": (
        lambda F, x, v: F.gaussian_nll_loss(x, x.detach() * 0.5, v.abs() + 0.1, full=True),
        [(3, 4), (3, 4)],
    ),
    "multilabel_soft_margin": (
        lambda F, x: F.multilabel_soft_margin_loss(x, (x.detach() > 0).float()),
        [(3, 4)],
    ),
    "pixel_shuffle": (lambda F, x: F.pixel_shuffle(x, 2), [(2, 8, 2, 3)]),
    "pixel_unshuffle": (lambda F, x: F.pixel_unshuffle(x, 2), [(2, 2, 4, 6)]),
    "channel_shuffle": (lambda F, x: F.channel_shuffle(x, 3), [(2, 6, 2)]),
    "rms_norm": (lambda F, x, w: F.rms_norm(x, (4,), w), [(3, 4), (4,)]),
    "instance_norm": (lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b), [(2, 3, 6), (3,), (3,)]),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(FLOAT32))
def test_float32_matches_torch(name):
    fn, in_shapes = FLOAT32[name]
    rng = np.random.default_rng(9)
    values = [off_kinks(rng.standard_normal(s), [0.0]).astype(np.float32) for s in in_shapes]
    results = []
    for T in (fg, torch):
        xs = [T.tensor(v, requires_grad=True) for v in values]
        out = fn(T.nn.functional, *xs)
        assert out.dtype == T.float32
        out.backward(T.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)).astype(np.float32)))
        results.append([out.detach().numpy()] + [x.grad.numpy() for x in xs])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


# ---- modules: reprs, parameters, state ------------------------------------------------------------

MODULES = {
    "SELU": lambda nn: nn.SELU(inplace=True),
    "CELU": lambda nn: nn.CELU(0.5, inplace=True),
    "Mish": lambda nn: nn.Mish(),
    "Hardswish": lambda nn: nn.Hardswish(inplace=True),
    "Hardsigmoid": lambda nn: nn.Hardsigmoid(),
    "Softsign": lambda nn: nn.Softsign(),
    "Tanhshrink": lambda nn: nn.Tanhshrink(),
    "Softshrink": lambda nn: nn.Softshrink(0.25),
    "Hardshrink": lambda nn: nn.Hardshrink(),
    "Threshold": lambda nn: nn.Threshold(0.1, 20, inplace=True),
    "PReLU": lambda nn: nn.PReLU(3, init=0.5),
    "Softmin": lambda nn: nn.Softmin(dim=1),
    "GLU": lambda nn: nn.GLU(1),
    "CosineSimilarity": lambda nn: nn.CosineSimilarity(dim=0, eps=1e-6),
    "PairwiseDistance": lambda nn: nn.PairwiseDistance(p=1.0, keepdim=True),
    "PixelShuffle": lambda nn: nn.PixelShuffle(2),
    "PixelUnshuffle": lambda nn: nn.PixelUnshuffle(3),
    "ChannelShuffle": lambda nn: nn.ChannelShuffle(4),
    "Unflatten": lambda nn: nn.Unflatten(-1, [2, -1]),
    "RMSNorm": lambda nn: nn.RMSNorm([2, 3]),
    "RMSNorm_eps": lambda nn: nn.RMSNorm(4, eps=1e-3, elementwise_affine=False),
    "InstanceNorm2d": lambda nn: nn.InstanceNorm2d(4, affine=True),
    "MarginRankingLoss": lambda nn: nn.MarginRankingLoss(0.5),
    "HingeEmbeddingLoss": lambda nn: nn.HingeEmbeddingLoss(reduction="sum"),
    "SoftMarginLoss": lambda nn: nn.SoftMarginLoss(),
    "CosineEmbeddingLoss": lambda nn: nn.CosineEmbeddingLoss(),
    "TripletMarginLoss": lambda nn: nn.TripletMarginLoss(margin=2.0, swap=True),
    "PoissonNLLLoss": lambda nn: nn.PoissonNLLLoss(log_input=False),
    "GaussianNLLLoss": lambda nn: nn.GaussianNLLLoss(full=True),
    "MultiLabelSoftMarginLoss": lambda nn: nn.MultiLabelSoftMarginLoss(weight=None),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_reprs_parameters_and_state_match_torch(name):
    fm, tm = MODULES[name](fg.nn), MODULES[name](torch.nn)
    assert repr(fm) == repr(tm)
    assert [n for n, _ in fm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert list(fm.state_dict()) == list(tm.state_dict())
    for (_, p), (_, q) in zip(fm.named_parameters(), tm.named_parameters()):
        assert tuple(p.shape) == tuple(q.shape)
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy())
    for attr in (
        "margin",
        "reduction",
        "eps",
        "dim",
        "norm",
        "keepdim",
        "p",
        "swap",
        "full",
        "log_input",
        "lambd",
    ):
        if hasattr(tm, attr):
            assert getattr(fm, attr) == getattr(tm, attr), attr


def test_modules_call_their_functions():
    rng = np.random.default_rng(10)
    x = fg.tensor(rng.standard_normal((2, 4, 2, 2)))
    F, nn = fg.nn.functional, fg.nn
    pairs = [
        (nn.SELU()(x), F.selu(x)),
        (nn.CELU(0.5)(x), F.celu(x, 0.5)),
        (nn.Mish()(x), F.mish(x)),
        (nn.Hardswish()(x), F.hardswish(x)),
        (nn.Hardsigmoid()(x), F.hardsigmoid(x)),
        (nn.Softsign()(x), F.softsign(x)),
        (nn.Tanhshrink()(x), F.tanhshrink(x)),
        (nn.Softshrink(0.3)(x), F.softshrink(x, 0.3)),
        (nn.Hardshrink(0.3)(x), F.hardshrink(x, 0.3)),
        (nn.Threshold(0.2, 5.0)(x), F.threshold(x, 0.2, 5.0)),
        (nn.Softmin(1)(x), F.softmin(x, 1)),
        (nn.GLU(1)(x), F.glu(x, 1)),
        (nn.CosineSimilarity(1)(x, x * 2 + 1), F.cosine_similarity(x, x * 2 + 1, 1)),
        (nn.PairwiseDistance(3.0)(x, x * 2), F.pairwise_distance(x, x * 2, 3.0)),
        (nn.RMSNorm(2, elementwise_affine=False)(x), F.rms_norm(x, (2,))),
        (nn.InstanceNorm2d(4)(x), F.instance_norm(x)),
    ]
    for got, want in pairs:
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(
        ValueError, match="TripletMarginLoss: expected margin to be greater than 0, got 0 instead"
    ):
        nn.TripletMarginLoss(margin=0)


# ---- parameter containers ---------------------------------------------------------------------------


def test_parameter_list():
    a, b = fg.nn.Parameter(fg.ones(3)), fg.ones(2, 2, dtype=fg.float64)
    pl = fg.nn.ParameterList([a, b])
    assert len(pl) == 2 and pl[0] is a
    assert isinstance(pl[1], fg.nn.Parameter) and pl[1].requires_grad  # tensors become parameters
    assert pl[-1] is pl[1]
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    assert list(pl.state_dict()) == ["0", "1"]
    pl.append(fg.zeros(1))
    pl += [fg.zeros(4)]
    assert len(pl) == 4 and [tuple(p.shape) for p in pl] == [(3,), (2, 2), (1,), (4,)]
    pl[2] = fg.nn.Parameter(fg.ones(5))
    assert tuple(pl[2].shape) == (5,)
    sliced = pl[1:3]
    assert isinstance(sliced, fg.nn.ParameterList) and len(sliced) == 2 and sliced[0] is pl[1]
    with pytest.raises(IndexError, match="index 4 is out of range"):
        pl[4]
    with pytest.raises(
        TypeError, match="ParameterList.extend should be called with an iterable, but got Tensor"
    ):
        pl.extend(fg.ones(2))
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl(1)
    model = fg.nn.Module()
    model.params = pl
    assert [n for n, _ in model.named_parameters()] == ["params.0", "params.1", "params.2", "params.3"]
    if torch is not None:
        tl = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.ones(3)), torch.ones(2, 2, dtype=torch.float64)]
        )
        want = repr(tl).replace("torch.", "ferrograd.")
        assert repr(fg.nn.ParameterList([a, b])) == want


def test_parameter_dict():
    pd = fg.nn.ParameterDict({"w": fg.ones(2, 3), "b": fg.nn.Parameter(fg.zeros(3))})
    assert list(pd) == ["b", "w"]  # a plain dict is added in key order
    assert isinstance(pd["w"], fg.nn.Parameter) and "w" in pd and len(pd) == 2
    assert list(pd.state_dict()) == ["b", "w"]
    pd["a"] = fg.ones(1)
    assert list(pd.keys()) == ["b", "w", "a"]
    assert [n for n, _ in pd.named_parameters()] == ["b", "w", "a"]
    assert pd.pop("w").shape == (2, 3) and "w" not in pd
    assert pd.get("missing") is None and pd.setdefault("c", fg.ones(2)).shape == (2,)
    merged = pd | fg.nn.ParameterDict([("z", fg.ones(1))])
    assert list(merged) == ["b", "a", "c", "z"] and list(pd) == ["b", "a", "c"]
    key, value = pd.popitem()
    assert key == "c" and value.shape == (2,)
    with pytest.raises(TypeError, match="cannot be used as a key as it is not a string"):
        pd[1]
    with pytest.raises(
        ValueError, match="ParameterDict update sequence element #0 has length 3; 2 is required"
    ):
        pd.update([("a", fg.ones(1), 3)])
    with pytest.raises(RuntimeError, match="ParameterDict should not be called."):
        pd(fg.ones(1))
    pd.clear()
    assert len(pd) == 0 and list(pd.parameters()) == []
    if torch is not None:
        td = torch.nn.ParameterDict({"w": torch.ones(2, 3), "d": torch.ones(3, dtype=torch.float64)})
        fd = fg.nn.ParameterDict({"w": fg.ones(2, 3), "d": fg.ones(3, dtype=fg.float64)})
        assert repr(fd) == repr(td).replace("torch.", "ferrograd.")


def test_parameter_list_trains_with_an_optimizer():
    pl = fg.nn.ParameterList([fg.ones(2), fg.ones(3)])
    opt = fg.optim.SGD(pl.parameters(), lr=0.5)
    (pl[0].sum() + (pl[1] ** 2).sum()).backward()
    opt.step()
    np.testing.assert_allclose(pl[0].detach().numpy(), [0.5, 0.5])
    np.testing.assert_allclose(pl[1].detach().numpy(), [0.0, 0.0, 0.0])


# ---- errors -----------------------------------------------------------------------------------------

ERRORS = {
    "glu odd": (
        lambda F, T: F.glu(T.ones(3, 3), 1),
        RuntimeError,
        "Halving dimension must be even, but dimension 1 is size 3",
    ),
    "glu odd negative dim": (lambda F, T: F.glu(T.ones(2, 3)), RuntimeError, "dimension 1 is size 3"),
    "glu scalar": (lambda F, T: F.glu(T.tensor(1.0)), RuntimeError, "glu does not support scalars"),
    "softshrink lambda": (
        lambda F, T: F.softshrink(T.ones(3), -1.0),
        RuntimeError,
        r"lambda must be in range \[0, 3.40282e\+38\] for input dtype Float, but found -1",
    ),
    "softshrink lambda double": (
        lambda F, T: F.softshrink(T.ones(3, dtype=T.float64), -0.5),
        RuntimeError,
        r"lambda must be in range \[0, 1.79769e\+308\] for input dtype Double, but found -0.5",
    ),
    "celu alpha": (
        lambda F, T: F.celu(T.ones(3), 0.0),
        RuntimeError,
        "ZeroDivisionError: alpha cannot be 0 for CELU",
    ),
    "prelu channels": (
        lambda F, T: F.prelu(T.ones(2, 4), T.ones(3)),
        RuntimeError,
        "Mismatch of parameter numbers and input channel size. Found parameter numbers = 3 and channel size = 4.",
    ),
    "prelu weight dims": (
        lambda F, T: F.prelu(T.ones(2, 4), T.ones(1, 4)),
        RuntimeError,
        "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2",
    ),
    "prelu module": (
        lambda F, T: T.nn.PReLU(3)(T.ones(2, 4)),
        RuntimeError,
        "Found parameter numbers = 3 and channel size = 4",
    ),
    "cosine_similarity sizes": (
        lambda F, T: F.cosine_similarity(T.ones(2, 4), T.ones(2, 3)),
        RuntimeError,
        r"The size of tensor a \(4\) must match the size of tensor b \(3\) at non-singleton dimension 1",
    ),
    "reduction": (
        lambda F, T: F.hinge_embedding_loss(T.ones(3), T.ones(3), reduction="avg"),
        ValueError,
        "avg is not a valid value for reduction",
    ),
    "soft margin reduction": (
        lambda F, T: F.soft_margin_loss(T.ones(3), T.ones(3), reduction="x"),
        ValueError,
        "x is not a valid value for reduction",
    ),
    "poisson reduction": (
        lambda F, T: F.poisson_nll_loss(T.ones(3), T.ones(3), reduction="x"),
        ValueError,
        "x is not a valid value for reduction",
    ),
    "triplet reduction": (
        lambda F, T: F.triplet_margin_loss(T.ones(2, 3), T.ones(2, 3), T.ones(2, 3), reduction="x"),
        ValueError,
        "x is not a valid value for reduction",
    ),
    "gaussian reduction": (
        lambda F, T: F.gaussian_nll_loss(T.ones(3), T.ones(3), T.ones(3), reduction="x"),
        ValueError,
        "x is not valid",
    ),
    "multilabel reduction": (
        lambda F, T: F.multilabel_soft_margin_loss(T.ones(2, 3), T.ones(2, 3), reduction="x"),
        ValueError,
        "x is not valid",
    ),
    "margin ranking dims": (
        lambda F, T: F.margin_ranking_loss(T.ones(2, 3), T.ones(2, 3), T.ones(3)),
        RuntimeError,
        "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: ",
    ),
    "cosine embedding target dims": (
        lambda F, T: F.cosine_embedding_loss(T.ones(2, 3), T.ones(2, 3), T.ones(2, 1)),
        RuntimeError,
        "0D or 1D target tensor expected, multi-target not supported",
    ),
    "cosine embedding 1d target": (
        lambda F, T: F.cosine_embedding_loss(T.ones(3), T.ones(3), T.ones(1)),
        RuntimeError,
        r"1D target tensor expects 2D input tensors, but found inputs with sizes \[3\] and \[3\].",
    ),
    "cosine embedding 0d target": (
        lambda F, T: F.cosine_embedding_loss(T.ones(2, 3), T.ones(2, 3), T.tensor(1.0)),
        RuntimeError,
        r"0D target tensor expects 1D input tensors, but found inputs with sizes "
        r"\[2, 3\] and \[2, 3\].",
    ),
    "triplet dims": (
        lambda F, T: F.triplet_margin_loss(T.ones(2, 3), T.ones(2, 3), T.ones(3)),
        RuntimeError,
        "The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
        "but got: anchor 2D, positive 2D, and negative 1D inputs",
    ),
    "triplet margin": (
        lambda F, T: F.triplet_margin_loss(T.ones(2, 3), T.ones(2, 3), T.ones(2, 3), margin=0),
        ValueError,
        "margin must be greater than 0, got 0",
    ),
    "gaussian var size": (
        lambda F, T: F.gaussian_nll_loss(T.ones(2, 4), T.ones(2, 4), T.ones(3)),
        ValueError,
        "var is of incorrect size",
    ),
    "gaussian var negative": (
        lambda F, T: F.gaussian_nll_loss(T.ones(2, 4), T.ones(2, 4), -T.ones(2, 4)),
        ValueError,
        "var has negative entry/entries",
    ),
    "gaussian float var negative": (
        lambda F, T: F.gaussian_nll_loss(T.ones(2), T.ones(2), -1.0),
        ValueError,
        "var has negative entry/entries",
    ),
    "pixel_shuffle dims": (
        lambda F, T: F.pixel_shuffle(T.ones(4, 3), 2),
        RuntimeError,
        r"pixel_shuffle expects input to have at least 3 dimensions, but got input with 2 dimension\(s\)",
    ),
    "pixel_shuffle channels": (
        lambda F, T: F.pixel_shuffle(T.ones(5, 3, 3), 2),
        RuntimeError,
        "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
        r"upscale_factor, but input.size\(-3\)=5 is not divisible by 4",
    ),
    "pixel_shuffle factor": (
        lambda F, T: F.pixel_shuffle(T.ones(4, 3, 3), 0),
        RuntimeError,
        "pixel_shuffle expects a positive upscale_factor, but got 0",
    ),
    "pixel_unshuffle height": (
        lambda F, T: F.pixel_unshuffle(T.ones(4, 3, 4), 2),
        RuntimeError,
        r"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size\(-2\)=3 "
        "is not divisible by 2",
    ),
    "pixel_unshuffle width": (
        lambda F, T: F.pixel_unshuffle(T.ones(4, 4, 3), 2),
        RuntimeError,
        r"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size\(-1\)=3",
    ),
    "pixel_unshuffle factor": (
        lambda F, T: F.pixel_unshuffle(T.ones(4, 4, 4), -1),
        RuntimeError,
        "pixel_unshuffle expects a positive downscale_factor, but got -1",
    ),
    "pixel_unshuffle dims": (
        lambda F, T: F.pixel_unshuffle(T.ones(4, 4), 2),
        RuntimeError,
        "pixel_unshuffle expects input to have at least 3 dimensions",
    ),
    "channel_shuffle divisible": (
        lambda F, T: F.channel_shuffle(T.ones(1, 5, 3), 2),
        RuntimeError,
        "Number of channels must be divisible by groups. Got 5 channels and 2 groups.",
    ),
    "channel_shuffle dims": (
        lambda F, T: F.channel_shuffle(T.ones(4, 3), 2),
        RuntimeError,
        r"channel_shuffle expects input with > 2 dims, but got input with sizes \[4, 3\]",
    ),
    "channel_shuffle groups": (
        lambda F, T: F.channel_shuffle(T.ones(1, 4, 3), 0),
        RuntimeError,
        "Number of groups to divide channels in must be positive. Value of groups:0",
    ),
    "unflatten sizes": (
        lambda F, T: T.nn.Unflatten(1, (2, 2))(T.ones(3, 5)),
        RuntimeError,
        r"unflatten: Provided sizes \[2, 2\] don't multiply up to the size of dim 1 \(5\) in the input tensor",
    ),
    "unflatten type": (
        lambda F, T: T.nn.Unflatten(1, 2.0),
        TypeError,
        "unflattened_size must be a tuple of ints, but found type float",
    ),
    "unflatten element": (
        lambda F, T: T.nn.Unflatten(1, (2, 2.0)),
        TypeError,
        "unflattened_size must be tuple of ints, but found element of type float at pos 1",
    ),
    "rms_norm shape": (
        lambda F, T: F.rms_norm(T.ones(2, 4), (3,)),
        RuntimeError,
        r"Given normalized_shape=\[3\], expected input with shape \[\*3\], but got input of size\[2, 4\]",
    ),
    "rms_norm shape 2d": (
        lambda F, T: F.rms_norm(T.ones(2, 4), (2, 3)),
        RuntimeError,
        r"expected input with shape \[\*2, 3\], but got input of size\[2, 4\]",
    ),
    "rms_norm weight": (
        lambda F, T: F.rms_norm(T.ones(2, 4), (4,), T.ones(3)),
        RuntimeError,
        r"Expected weight to be of same shape as normalized_shape, but got weight of shape \[3\] and "
        r"normalized_shape = \[4\]",
    ),
    "instance_norm spatial": (
        lambda F, T: F.instance_norm(T.ones(2, 4, 1)),
        ValueError,
        "Expected more than 1 spatial element when training, got input size",
    ),
    "circular pad dims": (
        lambda F, T: T.nn.CircularPad2d(1)(T.ones(2, 4)),
        ValueError,
        r"expected 3D or 4D input \(got 2D input\)",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_raises_like_torch(*ERRORS[name])

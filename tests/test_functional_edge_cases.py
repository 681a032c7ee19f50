"""Edge cases where nn.functional used to part from PyTorch: binary cross entropy at probabilities
of exactly 0 and 1, hardtanh's gradient at its bounds, circular padding with negative amounts,
interpolate's area, bicubic and antialiased modes, the losses PyTorch refuses to differentiate
with respect to some argument, order-0 distances and layer_norm's normalized_shape."""

import re

import numpy as np
import pytest

import ferrograd as fg
import ferrograd.nn.functional as F

from helpers import assert_raises_like_torch, check_op, fd_grads, has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch not installed")
MODULES = [fg] + ([torch] if has_torch else [])
# the gradient's floor under x (1 - x) is the float32 nearest 1e-12, in every dtype
BCE_FLOOR = float(np.float32(1e-12))


def _values(t) -> np.ndarray:
    return t.detach().numpy()


# ---- binary cross entropy ------------------------------------------------------------------


@pytest.mark.parametrize("T", MODULES, ids=lambda T: T.__name__)
def test_bce_gradient_is_finite_through_a_saturated_sigmoid(T):
    z = T.tensor([20.0, 0.5], requires_grad=True)
    T.nn.functional.binary_cross_entropy(z.sigmoid(), T.tensor([1.0, 1.0])).backward()
    expected = [0.0, -(1 - 1 / (1 + np.exp(-0.5))) / 2]
    np.testing.assert_allclose(z.grad.numpy(), expected, rtol=1e-6, atol=1e-7)
    z.grad = None
    T.nn.BCELoss()(z.sigmoid(), T.tensor([1.0, 1.0])).backward()
    np.testing.assert_allclose(z.grad.numpy(), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("T", MODULES, ids=lambda T: T.__name__)
def test_bce_at_probabilities_of_zero_and_one(T):
    x = T.tensor([0.0, 1.0, 0.0, 1.0], dtype=T.float64, requires_grad=True)
    target = T.tensor([1.0, 0.0, 0.0, 1.0], dtype=T.float64)
    loss = T.nn.functional.binary_cross_entropy(x, target, reduction="none")
    np.testing.assert_array_equal(_values(loss), [100.0, 100.0, 0.0, 0.0])
    loss.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [-1 / BCE_FLOOR, 1 / BCE_FLOOR, 0.0, 0.0])
    x.grad = None
    T.nn.functional.binary_cross_entropy(x, target).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [-0.25 / BCE_FLOOR, 0.25 / BCE_FLOOR, 0.0, 0.0])


@needs_torch
def test_bce_first_and_second_derivatives_match_torch_at_the_edges():
    x = np.array([0.0, 1.0, 0.0, 1.0, 0.3, 1e-13])
    t = np.array([1.0, 0.0, 0.0, 1.0, 0.2, 0.5])
    results = []
    for T in (torch, fg):
        xs = T.tensor(x, requires_grad=True)
        ts = T.tensor(t, requires_grad=True)
        go = T.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=T.float64, requires_grad=True)
        weight = T.tensor([1.0, 2.0, 1.0, 1.0, 3.0, 1.0], dtype=T.float64)
        loss = T.nn.functional.binary_cross_entropy(xs, ts, weight=weight, reduction="none")
        gx, gt = T.autograd.grad(loss, (xs, ts), go, create_graph=True)
        second = T.autograd.grad(gx, (xs, ts, go), T.full((6,), 0.5, dtype=T.float64))
        results.append([_values(r) for r in (loss, gx, gt, *second)])
    for expected, got in zip(*results):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_bce_values_and_gradients_inside_the_unit_interval(reduction):
    rng = np.random.default_rng(0)
    x, t = rng.uniform(0.05, 0.95, (3, 4)), rng.uniform(0, 1, (3, 4))
    weight = rng.uniform(0.5, 2, (3, 4))
    check_op(
        lambda T, x, t: T.nn.functional.binary_cross_entropy(
            x, t, weight=T.tensor(weight), reduction=reduction
        ),
        x,
        t,
    )
    xs, ts = fg.tensor(x, requires_grad=True), fg.tensor(t, requires_grad=True)
    assert fg.autograd.gradgradcheck(lambda x, t: F.binary_cross_entropy(x, t, reduction=reduction), (xs, ts))


def test_bce_weighs_in_the_input_dtype():
    x = fg.tensor([0.2, 0.7], requires_grad=True)
    loss = F.binary_cross_entropy(x, fg.tensor([1.0, 0.0]), weight=fg.tensor([1.0, 2.0], dtype=fg.float64))
    assert loss.dtype == fg.float32


@pytest.mark.parametrize(
    "fn, message",
    [
        (
            lambda F, T: F.binary_cross_entropy(T.tensor([0.5]), T.tensor([1.0], dtype=T.float64)),
            "Found dtype Double but expected Float",
        ),
        (
            lambda F, T: F.binary_cross_entropy(T.tensor([0.5], dtype=T.float64), T.tensor([1.0])),
            "Found dtype Float but expected Double",
        ),
        (
            lambda F, T: F.binary_cross_entropy(T.tensor([0.5]), T.tensor([1])),
            "Found dtype Long but expected Float",
        ),
        (
            lambda F, T: F.binary_cross_entropy(T.tensor([float("nan")]), T.tensor([1.0])),
            "all elements of input should be between 0 and 1",
        ),
        (
            lambda F, T: F.binary_cross_entropy(T.tensor([0.5]), T.tensor([1.5])),
            "all elements of target should be between 0 and 1",
        ),
        (
            lambda F, T: F.binary_cross_entropy_with_logits(T.tensor([0.5]), T.tensor([1])),
            "result type Float can't be cast to the desired output type Long",
        ),
        (
            lambda F, T: F.binary_cross_entropy_with_logits(T.tensor([0.5]), T.tensor([1], dtype=T.int32)),
            "result type Float can't be cast to the desired output type Int",
        ),
        (
            lambda F, T: F.binary_cross_entropy_with_logits(T.tensor([0.5]), T.tensor([True])),
            "Subtraction, the `-` operator, with two bool tensors is not supported",
        ),
    ],
)
def test_bce_dtype_and_range_errors_match_torch(fn, message):
    assert_raises_like_torch(fn, RuntimeError, message)


@pytest.mark.parametrize("T", MODULES, ids=lambda T: T.__name__)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_bce_is_one_node_whose_gradient_has_one_node_too(T, reduction):
    x = T.tensor([0.2, 0.7, 1.0], dtype=T.float64, requires_grad=True)
    t = T.tensor([0.0, 1.0, 0.5], dtype=T.float64, requires_grad=True)
    weight = T.tensor([2.0, 1.0, 3.0], dtype=T.float64)
    loss = T.nn.functional.binary_cross_entropy(x, t, weight=weight, reduction=reduction)
    assert type(loss.grad_fn).__name__ == "BinaryCrossEntropyBackward0"
    assert [type(f).__name__ for f, _ in loss.grad_fn.next_functions] == ["AccumulateGrad"] * 2
    grad_x, grad_t = T.autograd.grad(loss.sum(), (x, t), create_graph=True)
    assert type(grad_x.grad_fn).__name__ == "BinaryCrossEntropyBackwardBackward0"
    scale = {"none": 1.0, "sum": 1.0, "mean": 1 / 3}[reduction]
    xs, ts, ws = (np.array(v) for v in ([0.2, 0.7, 1.0], [0.0, 1.0, 0.5], [2.0, 1.0, 3.0]))
    expected_x = scale * ws * (xs - ts) / np.maximum(xs * (1 - xs), BCE_FLOOR)
    with np.errstate(divide="ignore"):
        expected_t = scale * ws * (np.log1p(-xs) - np.log(xs))
    np.testing.assert_allclose(_values(grad_x), expected_x, rtol=1e-12)
    np.testing.assert_allclose(_values(grad_t), expected_t, rtol=1e-12)


def test_bce_size_mismatch_names_both_sizes_as_torch_does():
    assert_raises_like_torch(
        lambda F, T: F.binary_cross_entropy(T.full((2, 3), 0.5), T.full((3,), 0.5)),
        ValueError,
        re.escape(
            "Using a target size (torch.Size([3])) that is different to the input size "
            "(torch.Size([2, 3])) is deprecated. Please ensure they have the same size."
        ),
    )


@pytest.mark.parametrize("T", MODULES, ids=lambda T: T.__name__)
def test_bce_with_logits_takes_the_targets_dtype(T):
    x = T.tensor([0.2, -1.0], requires_grad=True)
    loss = T.nn.functional.binary_cross_entropy_with_logits(x.double(), T.tensor([1.0, 0.0]))
    assert loss.dtype == T.float32
    loss = T.nn.functional.binary_cross_entropy_with_logits(x, T.tensor([1.0, 0.0], dtype=T.float64))
    assert loss.dtype == T.float64


NOT_DIFFERENTIABLE = {
    "bce weight": (
        lambda F, T, w: F.binary_cross_entropy(
            T.tensor([0.3, 0.6, 0.9]), T.tensor([1.0, 0.0, 1.0]), weight=w
        ),
        "'binary_cross_entropy' is not differentiable with respect to argument 'weight'",
    ),
    "bce module weight": (
        lambda F, T, w: T.nn.BCELoss(weight=w)(T.tensor([0.3, 0.6, 0.9]), T.tensor([1.0, 0.0, 1.0])),
        "'binary_cross_entropy' is not differentiable with respect to argument 'weight'",
    ),
    "bce logits weight": (
        lambda F, T, w: F.binary_cross_entropy_with_logits(T.zeros(3), T.ones(3), weight=w),
        "'binary_cross_entropy_with_logits' is not differentiable with respect to argument 'weight'",
    ),
    "bce logits pos_weight": (
        lambda F, T, w: F.binary_cross_entropy_with_logits(T.zeros(3), T.ones(3), pos_weight=w),
        "'binary_cross_entropy_with_logits' is not differentiable with respect to argument 'pos_weight'",
    ),
    "multi margin weight": (
        lambda F, T, w: F.multi_margin_loss(T.zeros(2, 3), T.tensor([0, 2]), weight=w),
        "'multi_margin_loss' is not differentiable with respect to argument 'weight'",
    ),
    "soft margin target": (
        lambda F, T, w: F.soft_margin_loss(T.zeros(3), w),
        "'soft_margin_loss' is not differentiable with respect to argument 'target'",
    ),
}


@pytest.mark.parametrize("name", sorted(NOT_DIFFERENTIABLE))
def test_arguments_without_a_derivative_must_not_require_grad(name):
    fn, message = NOT_DIFFERENTIABLE[name]
    for T in MODULES:
        w = T.tensor([1.0, -1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match=message + r"\. This input cannot have requires_grad True\."):
            fn(T.nn.functional, T, w)
        with T.no_grad():
            fn(T.nn.functional, T, w)  # nothing is recorded, so nothing is refused


@pytest.mark.parametrize("T", MODULES, ids=lambda T: T.__name__)
def test_relu_passes_the_gradient_at_nan(T):
    x = T.tensor([float("nan"), -1.0, 0.0, 2.0], requires_grad=True)
    (T.relu(x) * T.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 0.0, 4.0])
    x.grad = None
    (g,) = T.autograd.grad(T.relu(x).sum(), x, create_graph=True)  # the recorded formula
    np.testing.assert_array_equal(_values(g), [1.0, 0.0, 0.0, 1.0])


# ---- hardtanh and relu6 ----------------------------------------------------------------------


@pytest.mark.parametrize("T", MODULES, ids=lambda T: T.__name__)
def test_hardtanh_gradient_passes_strictly_inside_the_bounds_and_at_nan(T):
    x = T.tensor([0.0, 6.0, 3.0, -1.0, 7.0, float("nan")], requires_grad=True)
    T.nn.functional.relu6(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 1, 0, 0, 1])
    x.grad = None
    T.nn.Hardtanh(0.0, 6.0)(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 1, 0, 0, 1])
    x = T.tensor([-1.0, 1.0, 0.5, float("nan")], requires_grad=True)
    y = T.nn.functional.hardtanh(x)
    np.testing.assert_array_equal(_values(y), [-1.0, 1.0, 0.5, np.nan])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 1, 1])


@pytest.mark.parametrize("T", MODULES, ids=lambda T: T.__name__)
def test_relu6_in_place_keeps_the_open_interval_gradient(T):
    x = T.tensor([0.0, 6.0, 3.0, 8.0], requires_grad=True)
    y = x * 1.0
    out = T.nn.ReLU6(inplace=True)(y)
    assert out is y
    np.testing.assert_array_equal(_values(y), [0.0, 6.0, 3.0, 6.0])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 1, 0])


def test_hardtanh_without_grad_stays_a_plain_clamp_and_double_backward_works():
    x = fg.tensor([-3.0, 0.5, 3.0])
    y = F.hardtanh(x, inplace=True)
    assert y is x and y.grad_fn is None
    np.testing.assert_array_equal(x.numpy(), [-1.0, 0.5, 1.0])
    x = fg.tensor([-0.7, 0.2, 0.4], dtype=fg.float64, requires_grad=True)
    assert fg.autograd.gradgradcheck(lambda x: F.hardtanh(x, -0.5, 0.5) * x, (x,))


# ---- circular padding ------------------------------------------------------------------------


@pytest.mark.parametrize("T", MODULES, ids=lambda T: T.__name__)
@pytest.mark.parametrize(
    "pads, expected",
    [
        ((-1, 2), [1, 2, 3, 4, 1, 2]),
        ((2, -1), [2, 3, 0, 1, 2, 3]),
        ((-2, -1), [2, 3]),
        ((1, -4), [0, 0]),
    ],
)
def test_circular_pad_wraps_around_what_the_crop_leaves(T, pads, expected):
    out = T.nn.functional.pad(T.arange(5.0).view(1, 1, 5), pads, mode="circular")
    np.testing.assert_array_equal(out.numpy().ravel(), expected)


@pytest.mark.parametrize("pads", [(-1, 2), (2, -1), (-1, 2, 1, -1), (1, -2, -1, 2), (-1, -1, 2, 0)])
def test_circular_pad_with_crops_values_and_gradients(pads):
    a = np.random.default_rng(1).standard_normal((2, 2, 4, 5)[: 2 + len(pads) // 2])
    check_op(lambda T, x: T.nn.functional.pad(x, pads, mode="circular"), a)


def test_circular_pad_cannot_wrap_past_what_the_crop_leaves():
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than once"):
        F.pad(fg.arange(5.0).view(1, 1, 5), (-3, 4), mode="circular")


# ---- interpolate: area, bicubic, antialias ---------------------------------------------------

RESIZES = [((2, 2, 5, 7), (8, 9)), ((1, 2, 9, 8), (4, 3)), ((1, 1, 6, 4), (3, 7)), ((1, 2, 4, 4), (1, 1))]


@pytest.mark.parametrize("shape, size", RESIZES)
@pytest.mark.parametrize("align_corners", [False, True])
def test_bicubic_matches_torch_and_finite_differences(shape, size, align_corners):
    a = np.random.default_rng(2).standard_normal(shape)
    check_op(
        lambda T, x: T.nn.functional.interpolate(x, size=size, mode="bicubic", align_corners=align_corners),
        a,
        atol=1e-6,
    )


@pytest.mark.parametrize(
    "scale_factor, recompute", [(1.7, None), (0.6, None), (2.3, True), ((1.3, 0.45), False), (0.5, True)]
)
@pytest.mark.parametrize("align_corners", [False, True])
def test_bicubic_by_scale_factor_matches_torch(scale_factor, recompute, align_corners):
    a = np.random.default_rng(3).standard_normal((1, 2, 7, 9))
    check_op(
        lambda T, x: T.nn.functional.interpolate(
            x,
            scale_factor=scale_factor,
            mode="bicubic",
            align_corners=align_corners,
            recompute_scale_factor=recompute,
        ),
        a,
        atol=1e-6,
    )


def test_bicubic_known_values_and_double_backward():
    # a spike upsampled by 2: output i reads position i / 2 - 1 / 4, weighted by the cubic
    # convolution kernel (A = -0.75) at 1/4, 3/4, 5/4 and 7/4 from the spike
    x = np.zeros((1, 1, 1, 5))
    x[..., 2] = 1.0
    out = F.interpolate(fg.tensor(x), size=(1, 10), mode="bicubic").numpy().ravel()
    weights = [-0.03515625, -0.10546875, 0.26171875, 0.87890625]
    np.testing.assert_allclose(out, [0, *weights, *weights[::-1], 0], atol=1e-15)
    xs = fg.tensor(np.random.default_rng(4).standard_normal((1, 1, 3, 4)), requires_grad=True)
    assert fg.autograd.gradgradcheck(
        lambda x: F.interpolate(x, size=(5, 3), mode="bicubic", align_corners=True) ** 2, (xs,)
    )


@pytest.mark.parametrize(
    "shape, size",
    [
        ((2, 2, 7, 9), (3, 4)),
        ((1, 2, 5, 5), (8, 7)),
        ((1, 1, 6, 6), (3, 2)),
        ((1, 2, 7), (3,)),
        ((1, 1, 4, 5, 6), (3, 2, 4)),
    ],
)
def test_area_is_adaptive_average_pooling(shape, size):
    a = np.random.default_rng(5).standard_normal(shape)
    out = check_op(lambda T, x: T.nn.functional.interpolate(x, size=size, mode="area"), a)
    assert tuple(out.shape) == shape[:2] + size


def test_area_by_scale_factor_and_its_errors():
    a = np.random.default_rng(6).standard_normal((1, 2, 11, 13))
    out = check_op(lambda T, x: T.nn.functional.interpolate(x, scale_factor=0.37, mode="area"), a)
    assert tuple(out.shape) == (1, 2, 4, 4)
    assert_raises_like_torch(
        lambda F, T: F.interpolate(T.ones(1, 1, 4, 4), size=2, mode="area", align_corners=False),
        ValueError,
        "align_corners option can only be set with the interpolating modes",
    )


def test_adaptive_average_pooling_keeps_infinities_out_of_other_bins():
    x = np.arange(35.0).reshape(1, 1, 5, 7)
    x[0, 0, 0, 0] = np.inf
    out = F.adaptive_avg_pool2d(fg.tensor(x), (3, 3)).numpy()[0, 0]
    assert out[0, 0] == np.inf
    assert np.isfinite(out.ravel()[1:]).all()
    if has_torch:
        np.testing.assert_allclose(
            out, torch.nn.functional.adaptive_avg_pool2d(torch.tensor(x), (3, 3))[0, 0]
        )


@pytest.mark.parametrize(
    "mode, align_corners",
    [("bilinear", False), ("bilinear", True), ("bicubic", False), ("bicubic", True), ("lanczos", False)],
)
@pytest.mark.parametrize(
    "shape, size", [((2, 2, 17, 19), (3, 4)), ((1, 2, 5, 5), (8, 7)), ((1, 1, 12, 12), (5, 12))]
)
def test_antialiased_resizing_matches_torch(mode, align_corners, shape, size):
    a = np.random.default_rng(7).standard_normal(shape)
    check_op(
        lambda T, x: T.nn.functional.interpolate(
            x, size=size, mode=mode, align_corners=align_corners, antialias=True
        ),
        a,
        atol=1e-6,
    )


@pytest.mark.parametrize(
    "kw",
    [
        dict(scale_factor=(1.0, 1.05), mode="bicubic"),
        dict(scale_factor=1.05, mode="bilinear", antialias=True),
    ],
)
def test_kept_sizes_with_a_scale_factor_have_the_forwards_gradient(kw):
    # torch's values agree; its backward disagrees with its own forward here (it takes a
    # kept size for the identity), so the gradient is checked against finite differences only
    a = np.random.default_rng(8).standard_normal((1, 1, 5, 6))
    x = fg.tensor(a, requires_grad=True)
    out = F.interpolate(x, **kw)
    if has_torch:
        np.testing.assert_allclose(
            _values(out), torch.nn.functional.interpolate(torch.tensor(a), **kw).numpy(), atol=1e-12
        )
    v = np.cos(np.arange(out.numel())).reshape(tuple(out.shape))
    out.backward(fg.tensor(v))
    expected = fd_grads(lambda b: F.interpolate(fg.tensor(b), **kw).numpy(), [a.copy()], v)[0]
    np.testing.assert_allclose(x.grad.numpy(), expected, atol=1e-6)


def test_float32_resizing_is_close_to_torch():
    a = np.random.default_rng(9).standard_normal((2, 3, 15, 17)).astype(np.float32)
    for kw in (
        dict(size=(31, 9), mode="bicubic"),
        dict(size=(4, 6), mode="bicubic", antialias=True),
        dict(size=(4, 6), mode="area"),
    ):
        out = F.interpolate(fg.tensor(a), **kw)
        assert out.dtype == fg.float32
        if has_torch:
            expected = torch.nn.functional.interpolate(torch.tensor(a), **kw).numpy()
            np.testing.assert_allclose(out.numpy(), expected, atol=1e-5)


@pytest.mark.parametrize(
    "fn, kind, message",
    [
        (
            lambda F, T: F.interpolate(T.ones(1, 1, 4, 4), size=2, antialias=True),
            ValueError,
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes",
        ),
        (
            lambda F, T: F.interpolate(T.ones(1, 1, 4), size=2, mode="linear", antialias=True),
            ValueError,
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes",
        ),
        (
            lambda F, T: F.interpolate(T.ones(1, 1, 4, 4), size=2, mode="lanczos"),
            ValueError,
            "Lanczos mode requires antialias=True",
        ),
        (
            lambda F, T: F.interpolate(
                T.ones(1, 1, 4, 4), size=2, mode="lanczos", align_corners=True, antialias=True
            ),
            ValueError,
            "Lanczos mode does not support align_corners=True",
        ),
        (
            lambda F, T: F.interpolate(
                T.ones(1, 1, 4, 4), size=2, mode="bicubic", recompute_scale_factor=True
            ),
            ValueError,
            "recompute_scale_factor is not meaningful with an explicit size",
        ),
        (
            lambda F, T: F.interpolate(T.ones(1, 1, 4), size=2, mode="bicubic"),
            NotImplementedError,
            r"Input Error: Only 3D, 4D and 5D input Tensors supported \(got 3D\)",
        ),
        (
            lambda F, T: F.interpolate(T.ones(1, 1, 4, 4), size=(0, 3), mode="bicubic"),
            RuntimeError,
            r"Input and output sizes should be greater than 0, but got input \(H: 4, W: 4\) output \(H: 0, W: 3\)",
        ),
        (
            lambda F, T: F.interpolate(T.ones(1, 1, 4, 4, dtype=T.int64), size=2, mode="bicubic"),
            NotImplementedError,
            "not implemented for 'Long'",
        ),
    ],
)
def test_interpolate_errors_match_torch(fn, kind, message):
    assert_raises_like_torch(fn, kind, message)


# ---- order-0 distances and layer_norm's normalized_shape -------------------------------------


@pytest.mark.parametrize("T", MODULES, ids=lambda T: T.__name__)
def test_order_zero_distances_require_grad_with_a_zero_gradient(T):
    x = T.tensor([[1.0, 0.0, 2.0], [0.0, 1.0, 3.0]], requires_grad=True)
    d = T.nn.functional.pairwise_distance(x, T.zeros(2, 3), p=0)
    assert d.requires_grad
    np.testing.assert_array_equal(_values(d), [3.0, 3.0])  # eps makes every entry nonzero
    d.sum().backward()
    assert x.grad is None or not x.grad.numpy().any()
    distances = T.nn.functional.pdist(x, p=0)
    assert distances.requires_grad
    np.testing.assert_array_equal(_values(distances), [3.0])
    assert T.nn.functional.triplet_margin_loss(x, x * 2, x * 3, p=0).requires_grad


@pytest.mark.parametrize("shape, name", [(6, "int"), (6.0, "float"), (None, "NoneType")])
def test_layer_norm_wants_a_sequence_of_ints(shape, name):
    assert_raises_like_torch(
        lambda F, T: F.layer_norm(T.ones(2, 6), shape),
        TypeError,
        rf"layer_norm\(\): argument 'normalized_shape' \(position 2\) must be tuple of ints, not {name}",
    )
    assert tuple(F.layer_norm(fg.ones(2, 6), [6]).shape) == (2, 6)
    assert tuple(fg.nn.LayerNorm(6)(fg.ones(2, 6)).shape) == (2, 6)

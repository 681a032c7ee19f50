"""nn.functional activations, regression and binary losses, layer_norm, embedding, one_hot and
normalize, with their modules: values and gradients against finite differences and torch, and
torch's errors."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import arrays, assert_raises_like_torch, check_op

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

MODULES = [fg] + ([torch] if torch is not None else [])


def away_from(points, a, margin=1e-2):
    """``a`` nudged so no element is within ``margin`` of a kink at ``points``."""
    a = a.copy()
    for p in points:
        near = np.abs(a - p) < margin
        a[near] = p + 2 * margin
    return a


ACTIVATIONS = {
    "gelu": (lambda F, x: F.gelu(x), []),
    "gelu_tanh": (lambda F, x: F.gelu(x, approximate="tanh"), []),
    "silu": (lambda F, x: F.silu(x), []),
    "elu": (lambda F, x: F.elu(x, alpha=0.7), [0.0]),
    "leaky_relu": (lambda F, x: F.leaky_relu(x, 0.2), [0.0]),
    "softplus": (lambda F, x: F.softplus(x, beta=2.0, threshold=3.0), [1.5]),
    "logsigmoid": (lambda F, x: F.logsigmoid(x), []),
    "hardtanh": (lambda F, x: F.hardtanh(x, -0.5, 1.5), [-0.5, 1.5]),
    "relu6": (lambda F, x: F.relu6(x * 4), [0.0, 1.5]),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@settings(max_examples=15, deadline=None)
@given(values=st.lists(st.floats(-4, 4), min_size=1, max_size=12))
def test_activations(name, values):
    fn, kinks = ACTIVATIONS[name]
    a = away_from(kinks, np.array(values))
    check_op(lambda T, x: fn(T.nn.functional, x), a)


@pytest.mark.parametrize("name", ["silu", "elu", "leaky_relu", "hardtanh", "relu6"])
def test_inplace_activations_overwrite_their_input_and_keep_gradients(name):
    F = fg.nn.functional
    a = np.array([-2.0, -0.3, 0.4, 2.5])
    x = fg.tensor(a, requires_grad=True)
    y = x * 1.0
    out = getattr(F, name)(y, inplace=True)
    assert out is y
    expected = getattr(F, name)(fg.tensor(a)).numpy()
    np.testing.assert_allclose(y.detach().numpy(), expected)
    out.sum().backward()
    x2 = fg.tensor(a, requires_grad=True)
    getattr(F, name)(x2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy())


MODULE_OF = {
    "gelu": lambda nn: nn.GELU(approximate="tanh"),
    "silu": lambda nn: nn.SiLU(),
    "elu": lambda nn: nn.ELU(alpha=0.5),
    "leaky_relu": lambda nn: nn.LeakyReLU(0.1),
    "softplus": lambda nn: nn.Softplus(beta=2.0),
    "logsigmoid": lambda nn: nn.LogSigmoid(),
    "hardtanh": lambda nn: nn.Hardtanh(-2.0, 2.0),
    "relu6": lambda nn: nn.ReLU6(inplace=True),
    "l1": lambda nn: nn.L1Loss(reduction="sum"),
    "smooth_l1": lambda nn: nn.SmoothL1Loss(beta=0.5),
    "huber": lambda nn: nn.HuberLoss(delta=2.0),
    "bce": lambda nn: nn.BCELoss(),
    "bce_logits": lambda nn: nn.BCEWithLogitsLoss(),
    "kl_div": lambda nn: nn.KLDivLoss(reduction="batchmean", log_target=True),
    "layer_norm": lambda nn: nn.LayerNorm((2, 3), eps=1e-3),
    "embedding": lambda nn: nn.Embedding(5, 3, padding_idx=1),
}


@pytest.mark.parametrize("name", sorted(MODULE_OF))
def test_module_reprs_match_torch(name):
    if torch is None:
        pytest.skip("torch not installed")
    assert repr(MODULE_OF[name](fg.nn)) == repr(MODULE_OF[name](torch.nn))


@st.composite
def pairs(draw, low=-3.0, high=3.0):
    n = draw(st.integers(1, 4))
    m = draw(st.integers(1, 4))
    values = st.lists(st.floats(low, high), min_size=n * m, max_size=n * m)
    a = np.array(draw(values)).reshape(n, m)
    b = np.array(draw(values)).reshape(n, m)
    return a, b


REGRESSION = {
    "l1": (lambda F, x, y, r: F.l1_loss(x, y, reduction=r), [0.0]),
    "smooth_l1": (lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r), [-1.0, 0.0, 1.0]),
    "smooth_l1_beta": (lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.5), [-0.5, 0.0, 0.5]),
    "smooth_l1_beta0": (lambda F, x, y, r: F.smooth_l1_loss(x, y, reduction=r, beta=0.0), [0.0]),
    "huber": (lambda F, x, y, r: F.huber_loss(x, y, reduction=r, delta=1.5), [-1.5, 0.0, 1.5]),
    "mse": (lambda F, x, y, r: F.mse_loss(x, y, reduction=r), []),
}


@pytest.mark.parametrize("name", sorted(REGRESSION))
@settings(max_examples=15, deadline=None)
@given(case=pairs(), reduction=st.sampled_from(["mean", "sum", "none"]))
def test_regression_losses(name, case, reduction):
    fn, kinks = REGRESSION[name]
    a, b = case
    a = b + away_from(kinks, a - b)  # the difference stays off the loss's kinks
    check_op(lambda T, x, y: fn(T.nn.functional, x, y, reduction), a, b)


@pytest.mark.parametrize("name", ["mse", "l1", "huber"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_elementwise_weights_reduce_as_torch(name, reduction):
    """A weighted mean divides by the total weight for mse and l1, by the element count for huber."""
    rng = np.random.default_rng(5)
    a, b, w = rng.standard_normal((2, 3)) * 2, rng.standard_normal((2, 3)), rng.random((2, 3)) + 0.5
    fn = {"mse": "mse_loss", "l1": "l1_loss", "huber": "huber_loss"}[name]
    check_op(
        lambda T, x, y: getattr(T.nn.functional, fn)(x, y, reduction=reduction, weight=T.tensor(w)), a, b
    )
    if name == "huber" and reduction == "mean":  # torch-free check of huber's plain mean
        d = np.abs(a - b)
        want = (np.where(d < 1, 0.5 * d**2, d - 0.5) * w).mean()
        got = fg.nn.functional.huber_loss(fg.tensor(a), fg.tensor(b), weight=fg.tensor(w)).item()
        assert abs(got - want) < 1e-12
    with pytest.raises(ValueError, match="Weights and input must have the same size."):
        getattr(fg.nn.functional, fn)(fg.tensor(a), fg.tensor(b), weight=fg.ones(3))


@settings(max_examples=20, deadline=None)
@given(case=pairs(0.05, 0.95), reduction=st.sampled_from(["mean", "sum", "none"]), weighted=st.booleans())
def test_binary_cross_entropy(case, reduction, weighted):
    probs, target = case
    w = np.linspace(0.5, 1.5, probs.shape[1])

    def fn(T, x, t):
        weight = T.tensor(w) if weighted else None
        return T.nn.functional.binary_cross_entropy(x, t, weight=weight, reduction=reduction)

    check_op(fn, probs, target)


@settings(max_examples=20, deadline=None)
@given(case=pairs(-30.0, 30.0), reduction=st.sampled_from(["mean", "sum", "none"]), pos=st.booleans())
def test_binary_cross_entropy_with_logits_is_stable(case, reduction, pos):
    logits, raw = case
    target = (raw + 30) / 60
    pw = np.linspace(0.5, 3.0, logits.shape[1])

    def fn(T, x, t):
        pos_weight = T.tensor(pw) if pos else None
        return T.nn.functional.binary_cross_entropy_with_logits(
            x, t, pos_weight=pos_weight, reduction=reduction
        )

    out = check_op(fn, logits, target)
    assert np.isfinite(out.detach().numpy()).all()


@settings(max_examples=20, deadline=None)
@given(case=pairs(), reduction=st.sampled_from(["batchmean", "sum", "none"]), log_target=st.booleans())
def test_kl_div(case, reduction, log_target):
    a, b = case
    target = np.exp(b) / np.exp(b).sum(1, keepdims=True)
    target[0, 0] = 0.0  # a zero probability contributes nothing
    if log_target:
        target = np.log(target + 1e-3)

    def fn(T, x):  # the target is a constant: perturbing a zero probability has no log
        return T.nn.functional.kl_div(
            x.log_softmax(1), T.tensor(target), reduction=reduction, log_target=log_target
        )

    check_op(fn, a)


def test_kl_div_mean_warns_about_batchmean():
    x = fg.randn(2, 3).log_softmax(1)
    with pytest.warns(UserWarning, match="batchmean"):
        fg.nn.functional.kl_div(x, x.exp())


@settings(max_examples=30, deadline=None)
@given(
    lead=st.lists(st.integers(0, 3), max_size=2).map(tuple),
    shape=st.sampled_from([(4,), (2, 3), (1,), (9,)]),
    params=st.sampled_from(["none", "weight", "bias", "both"]),
    data=st.data(),
)
def test_layer_norm(lead, shape, params, data):
    # The row kernels (forward, one-pass gradient) against finite
    # differences and torch; gradgradcheck runs the create_graph backward.
    a = data.draw(arrays(lead + shape))
    w, b = data.draw(arrays(shape)), data.draw(arrays(shape))

    def f(T, x, w, b):
        return T.nn.functional.layer_norm(
            x,
            shape,
            w if params in ("weight", "both") else None,
            b if params in ("bias", "both") else None,
            eps=1e-3,
        )

    check_op(f, a, w, b)
    xs = [fg.tensor(v, requires_grad=True) for v in (a, w, b)]
    assert fg.autograd.gradgradcheck(lambda x, w, b: f(fg, x, w, b), xs)


@pytest.mark.skipif(torch is None, reason="torch is the reference")
def test_layer_norm_float32_matches_torch():
    rng = np.random.default_rng(0)
    a, w, b = rng.standard_normal((6, 300)) * 5 + 3, rng.standard_normal(300), rng.standard_normal(300)
    g = rng.standard_normal((6, 300))
    outs = []
    for T in (fg, torch):
        x, wt, bt = (T.tensor(v.astype(np.float32), requires_grad=True) for v in (a, w, b))
        y = T.nn.functional.layer_norm(x, (300,), wt, bt)
        y.backward(T.tensor(g.astype(np.float32)))
        outs.append([t.detach().numpy() for t in (y, x.grad, wt.grad, bt.grad)])
    for got, want in zip(*outs):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_layer_norm_module_trains_its_affine_parameters():
    ln = fg.nn.LayerNorm(3)
    assert [tuple(p.shape) for p in ln.parameters()] == [(3,), (3,)]
    ln(fg.randn(4, 3)).pow(2).sum().backward()
    assert ln.weight.grad is not None and ln.bias.grad is not None
    assert list(fg.nn.LayerNorm(3, elementwise_affine=False).parameters()) == []


@settings(max_examples=30, deadline=None)
@given(
    batch=st.integers(0, 3),
    groups_channels=st.sampled_from([(1, 2), (2, 4), (3, 3), (2, 6)]),
    positions=st.lists(st.integers(1, 3), max_size=2).map(tuple),
    affine=st.booleans(),
    data=st.data(),
)
def test_group_norm(batch, groups_channels, positions, affine, data):
    groups, channels = groups_channels
    a = data.draw(arrays((batch, channels) + positions))
    w, b = data.draw(arrays((channels,))), data.draw(arrays((channels,)))

    def f(T, x, w, b):
        return T.nn.functional.group_norm(x, groups, w if affine else None, b if affine else None, eps=1e-3)

    if batch * channels // groups * int(np.prod(positions)) == 1:
        # One value per group: no variance to normalise by.
        with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
            f(fg, fg.tensor(a), None, None)
        return
    out = check_op(f, a, w, b)
    if batch:
        # Each group of each sample: mean 0 and biased variance 1 before the affine step.
        rows = f(fg, fg.tensor(a), None, None).numpy().reshape(batch * groups, -1)
        np.testing.assert_allclose(rows.mean(1), 0, atol=1e-9)
        xs = [fg.tensor(v, requires_grad=True) for v in (a, w, b)]
        assert fg.autograd.gradgradcheck(lambda x, w, b: f(fg, x, w, b), xs)
    assert out.shape == a.shape


@pytest.mark.parametrize(
    "fn, kind, message",
    [
        (
            lambda F, T: F.group_norm(T.ones(2, 4, 5), 3),
            RuntimeError,
            r"Expected number of channels in input to be divisible by num_groups, but got input of shape \[2, 4, 5\]",
        ),
        (
            lambda F, T: F.group_norm(T.ones(2, 4, 5), 2, T.ones(3)),
            RuntimeError,
            "Expected weight to be a vector of size equal to the number of channels in input",
        ),
        (
            lambda F, T: F.group_norm(T.ones(4), 2),
            RuntimeError,
            "Expected at least 2 dimensions for input tensor",
        ),
        (
            lambda F, T: F.group_norm(T.ones(2, 4, dtype=T.int64), 2),
            NotImplementedError,
            "GroupNormKernelImpl",
        ),
        (
            lambda F, T: T.nn.GroupNorm(3, 4),
            ValueError,
            r"num_channels \(4\) must be divisible by num_groups \(3\)",
        ),
        (
            lambda F, T: F.group_norm(T.ones(2, 4, 3), 2, T.ones(4, dtype=T.float64)),
            RuntimeError,
            r"mixed dtype \(CPU\): expect parameter to have scalar type of Float",
        ),
        (
            lambda F, T: F.group_norm(T.ones(2, 4, 3, dtype=T.float64), 2, None, T.ones(4)),
            RuntimeError,
            r"mixed dtype \(CPU\): all inputs must share same datatype.",
        ),
        (
            lambda F, T: F.layer_norm(T.ones(2, 3), (3,), T.ones(3, dtype=T.float64)),
            RuntimeError,
            r"mixed dtype \(CPU\): expect parameter to have scalar type of Float",
        ),
    ],
)
def test_group_norm_errors(fn, kind, message):
    assert_raises_like_torch(fn, kind, message)


@pytest.mark.parametrize(
    "shape, groups", [((16, 32, 8, 8), 8), ((3, 6, 700), 3), ((64, 16), 2), ((2, 4, 0), 2)]
)
def test_group_norm_float32_matches_torch_and_keeps_precision_about_a_large_mean(shape, groups):
    # Offset data: the kernels take each group's sums about its mean, so float32
    # stays close to the float64 result although the mean dwarfs the spread.
    rng = np.random.default_rng(5)
    a = (1000.0 + rng.standard_normal(shape)).astype(np.float32)
    w, b = rng.standard_normal(shape[1]).astype(np.float32), rng.standard_normal(shape[1]).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    results = {}
    for T, dtype in [(fg, fg.float32), (fg, fg.float64)] + (
        [(torch, torch.float64)] if torch is not None else []
    ):
        xs = [T.tensor(v, dtype=dtype, requires_grad=True) for v in (a, w, b)]
        y = T.nn.functional.group_norm(*xs[:1], groups, *xs[1:], eps=1e-5)
        y.backward(T.tensor(g, dtype=dtype))
        if y.numel():
            assert y.grad_fn.name() == "NativeGroupNormBackward0"
        results[(T.__name__, str(dtype))] = [
            t.detach().numpy().astype(np.float64) for t in (y, *[x.grad for x in xs])
        ]
    reference = results[("ferrograd", "ferrograd.float64")]
    if torch is not None and a.size:
        # (torch's weight gradient of an empty input is NaN; ferrograd's is the empty sum, 0)
        for got, want in zip(reference, results[("torch", "torch.float64")]):
            np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    for got, want in zip(results[("ferrograd", "ferrograd.float32")], reference):
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3 * (1 + np.abs(want).max(initial=0)))


def test_group_norm_module_trains_its_affine_parameters():
    gn = fg.nn.GroupNorm(2, 4)
    assert [tuple(p.shape) for p in gn.parameters()] == [(4,), (4,)]
    gn(fg.randn(3, 4, 5, 5)).pow(3).sum().backward()
    assert gn.weight.grad is not None and gn.bias.grad is not None
    assert list(fg.nn.GroupNorm(2, 4, affine=False).parameters()) == []
    assert repr(gn) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"


def test_embedding_picks_rows_and_skips_the_padding_gradient():
    weight = np.arange(12.0).reshape(4, 3)
    idx = [[0, 2, 2], [3, 1, 0]]
    for T in MODULES:
        w = T.tensor(weight, requires_grad=True)
        out = T.nn.functional.embedding(T.tensor(idx), w, padding_idx=2)
        np.testing.assert_array_equal(out.detach().numpy(), weight[np.array(idx)])
        (out * T.arange(3.0)).sum().backward()
        grad = w.grad.numpy()
        np.testing.assert_array_equal(grad[2], [0, 0, 0])
        np.testing.assert_array_equal(grad[0], [0, 2, 4])
    emb = fg.nn.Embedding(5, 2, padding_idx=-1)
    assert emb.padding_idx == 4
    np.testing.assert_array_equal(emb.weight.detach().numpy()[4], [0, 0])


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_embedding_max_norm_renormalises_the_picked_rows_in_place(norm_type):
    weight = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0], [1.0, -2.0]])
    idx = [[0, 1], [1, 3]]
    results = []
    for T in MODULES:
        w = T.tensor(weight, requires_grad=True)
        out = T.nn.functional.embedding(T.tensor(idx, dtype=T.int32), w, max_norm=1.0, norm_type=norm_type)
        (out * T.tensor([1.0, 2.0])).sum().backward()
        results.append((w.detach().numpy().copy(), out.detach().numpy(), w.grad.numpy()))
    w, out, grad = results[0]
    norms = np.linalg.norm(weight, ord=norm_type, axis=1)
    expected = weight * np.where(norms > 1.0, 1.0 / (norms + 1e-7), 1.0)[:, None]
    expected[2] = weight[2]  # row 2 is not picked, so it keeps its norm
    np.testing.assert_allclose(w, expected, rtol=1e-12)
    np.testing.assert_allclose(out, expected[np.array(idx)], rtol=1e-12)
    np.testing.assert_array_equal(grad, [[1, 2], [2, 4], [0, 0], [1, 2]])
    for other in results[1:]:
        for got, want in zip(results[0], other):
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_embedding_scale_grad_by_freq_divides_by_the_count_of_each_index():
    for T in MODULES:
        emb = T.nn.Embedding(5, 2, scale_grad_by_freq=True, padding_idx=1)
        out = emb(T.tensor([[0, 0, 1], [2, 0, 4]]))
        (out * T.tensor([1.0, 3.0])).sum().backward()
        grad = emb.weight.grad.numpy()
        # index 0 occurs three times: 3 * (1/3); padding row 1 gets nothing
        np.testing.assert_allclose(grad, [[1, 3], [0, 0], [1, 3], [0, 0], [1, 3]], rtol=1e-6)


def test_embedding_from_pretrained_and_repr():
    table = fg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    frozen = fg.nn.Embedding.from_pretrained(table, padding_idx=1)
    assert not frozen.weight.requires_grad and frozen.padding_idx == 1
    assert frozen.weight.data_ptr() == table.data_ptr()  # the table itself, padding row not zeroed
    assert frozen(fg.tensor([1, 2])).tolist() == [[3.0, 4.0], [5.0, 6.0]]
    trainable = fg.nn.Embedding.from_pretrained(table, freeze=False)
    trainable(fg.tensor([2, 2])).sum().backward()
    assert trainable.weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0], [2.0, 2.0]]
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be 2-dimensional"):
        fg.nn.Embedding.from_pretrained(fg.ones(3))
    with pytest.raises(AssertionError, match="Shape of weight does not match"):
        fg.nn.Embedding(2, 2, _weight=fg.ones(3, 2))
    with pytest.raises(NotImplementedError, match="sparse"):
        fg.nn.Embedding(3, 2, sparse=True)(fg.tensor([0]))
    args = dict(padding_idx=0, max_norm=2.0, norm_type=1.0, scale_grad_by_freq=True, sparse=True)
    text = repr(fg.nn.Embedding(4, 3, **args))
    assert (
        text
        == "Embedding(4, 3, padding_idx=0, max_norm=2.0, norm_type=1.0, scale_grad_by_freq=True, sparse=True)"
    )
    if torch is not None:
        assert text == repr(torch.nn.Embedding(4, 3, **args))


def test_embedding_bag_max_norm():
    weight = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    for T in MODULES:
        w = T.tensor(weight)
        out = T.nn.functional.embedding_bag(
            T.tensor([0, 1, 2, 1]), w, T.tensor([0, 2]), max_norm=1.0, mode="sum"
        )
        np.testing.assert_allclose(out.numpy(), [[0.9, 1.2], [0.9, 1.2]], rtol=1e-5)
        np.testing.assert_allclose(w.numpy()[2], [0.6, 0.8], rtol=1e-5)


def test_one_hot_and_normalize():
    for T in MODULES:
        F = T.nn.functional
        np.testing.assert_array_equal(
            F.one_hot(T.tensor([2, 0, 1])).numpy(), np.eye(3, dtype=np.int64)[[2, 0, 1]]
        )
        assert F.one_hot(T.tensor([[1], [0]]), 4).shape == (2, 1, 4)
        assert F.one_hot(T.tensor([1]), 3).dtype == T.int64
    check_op(lambda T, x: T.nn.functional.normalize(x, dim=1), np.array([[3.0, -4.0], [0.5, 1.0]]))
    check_op(lambda T, x: T.nn.functional.normalize(x, dim=0), np.array([[3.0, -4.0], [0.5, 1.0]]))
    zero = fg.nn.functional.normalize(fg.zeros(2, 3)).numpy()
    np.testing.assert_array_equal(zero, np.zeros((2, 3), dtype=np.float32))


ERRORS = {
    "bce out of range": (
        lambda F, T: F.binary_cross_entropy(T.tensor([1.5]), T.tensor([1.0])),
        RuntimeError,
        "all elements of input should be between 0 and 1",
    ),
    "bce sizes": (
        lambda F, T: F.binary_cross_entropy(T.tensor([0.5, 0.5]), T.tensor([[1.0, 0.0]])),
        ValueError,
        "that is different to the input size",
    ),
    "bce logits sizes": (
        lambda F, T: F.binary_cross_entropy_with_logits(T.zeros(2), T.zeros(3)),
        ValueError,
        re.escape("Target size (torch.Size([3])) must be the same as input size (torch.Size([2]))"),
    ),
    "smooth l1 beta": (
        lambda F, T: F.smooth_l1_loss(T.zeros(2), T.zeros(2), beta=-1.0),
        RuntimeError,
        "does not support negative values for beta",
    ),
    "huber delta": (
        lambda F, T: F.huber_loss(T.zeros(2), T.zeros(2), delta=0.0),
        RuntimeError,
        "does not support non-positive values for delta",
    ),
    "kl reduction": (
        lambda F, T: F.kl_div(T.zeros(2), T.zeros(2), reduction="avg"),
        ValueError,
        "avg is not a valid value for reduction",
    ),
    "one_hot dtype": (
        lambda F, T: F.one_hot(T.tensor([1.0])),
        RuntimeError,
        "one_hot is only applicable to index tensor",
    ),
    "one_hot negative": (
        lambda F, T: F.one_hot(T.tensor([-1, 0])),
        RuntimeError,
        "Class values must be non-negative.",
    ),
    "one_hot too large": (
        lambda F, T: F.one_hot(T.tensor([3]), 3),
        RuntimeError,
        "Class values must be smaller than num_classes.",
    ),
    "embedding range": (
        lambda F, T: F.embedding(T.tensor([4]), T.zeros(4, 2)),
        IndexError,
        "index out of range in self",
    ),
    "layer_norm shape": (
        lambda F, T: F.layer_norm(T.zeros(2, 4), (3,)),
        RuntimeError,
        r"Given normalized_shape=\[3\], expected input with shape \[\*, 3\]",
    ),
    "layer_norm weight": (
        lambda F, T: F.layer_norm(T.zeros(2, 4), (4,), T.ones(3)),
        RuntimeError,
        r"Expected weight to be of same shape as normalized_shape, but got weight "
        r"of shape \[3\] and normalized_shape = \[4\]",
    ),
    "layer_norm int": (
        lambda F, T: F.layer_norm(T.zeros(2, 4, dtype=T.int64), (4,)),
        RuntimeError,
        "\"LayerNormKernelImpl\" not implemented for 'Long'",
    ),
    "hardtanh bounds": (
        lambda F, T: F.hardtanh(T.zeros(2), 1.0, -1.0),
        ValueError,
        "min_val cannot be greater than max_val",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_raises_like_torch(*ERRORS[name])

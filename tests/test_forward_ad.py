"""Forward-mode AD (``autograd.forward_ad``): tangents against central differences in float64
and against torch, the level's life cycle and its errors, in-place ops and views, and custom
Functions' ``jvp``."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg
import ferrograd.autograd.forward_ad as fwAD

try:
    import torch
except ImportError:  # torch is only a reference
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def tangent_of(T, f, x, t, *others):
    """The tangent of ``f(dual(x, t), *others)``, computed by ``T``."""
    ad = T.autograd.forward_ad
    with warnings.catch_warnings():
        # torch loads decompositions for forward AD through a deprecated path.
        warnings.simplefilter("ignore", DeprecationWarning)
        with ad.dual_level():
            out = f(ad.make_dual(x, t), *others)
            return ad.unpack_dual(out).tangent


def central_difference(f, x, t, *others, eps=1e-6):
    with fg.no_grad():
        return (f(x + eps * t, *others) - f(x - eps * t, *others)) / (2 * eps)


FUNCTIONS = {
    "sin_times_exp": lambda x, T, w: x.sin() * x.exp(),
    "division": lambda x, T, w: (x + 3.0) / (x * x + 1.0),
    "power": lambda x, T, w: (x * x + 0.5) ** 1.5,
    "matmul_chain": lambda x, T, w: (x @ w).tanh() @ w.t(),
    "softmax": lambda x, T, w: T.nn.functional.softmax(x @ w, dim=-1),
    "log_softmax": lambda x, T, w: T.nn.functional.log_softmax(x, dim=0),
    "logsumexp": lambda x, T, w: x.logsumexp(dim=1),
    "reductions": lambda x, T, w: x.sum(0) * x.mean(1).sum() + x.prod(1).sum(),
    "norm": lambda x, T, w: x.norm(dim=1) + T.linalg.vector_norm(x),
    "indexing_and_cat": lambda x, T, w: T.cat([x[:, :1] * 2, x.t()[-1:].t(), x[:, 0:1].flip(0)], dim=1),
    "reshape_permute": lambda x, T, w: (
        x.reshape(-1).unsqueeze(0).expand(2, -1).permute(1, 0).contiguous() * 3
    ),
    "where_and_clamp": lambda x, T, w: T.where(x > 0, x.clamp(max=0.7), x.sigmoid()),
    "linear_relu": lambda x, T, w: T.nn.functional.relu(T.nn.functional.linear(x, w.t(), w[0])),
    "max_values": lambda x, T, w: x.max(dim=1).values + x.min(dim=0).values.sum(),
    # Floors its norms in place under no_grad.
    "cosine_similarity": lambda x, T, w: T.nn.functional.cosine_similarity(x, x.flip(0) + 1.5, dim=1),
}


# A function of FUNCTIONS and its arguments' shapes and values.
function_samples = given(
    rows=st.integers(1, 4),
    cols=st.integers(1, 4),
    name=st.sampled_from(sorted(FUNCTIONS)),
    seed=st.integers(0, 2**31 - 1),
)


def sample_arguments(rows, cols, name, seed):
    """A primal ``x``, two directions of its shape and the weight ``w`` for FUNCTIONS[name]."""
    rng = np.random.default_rng(seed)
    x, t, r = (fg.tensor(rng.uniform(-1.0, 1.0, (rows, cols))) for _ in range(3))
    w = fg.tensor(rng.uniform(-1.0, 1.0, (cols, 3)))
    if name == "max_values":
        # Ties make max not differentiable: spread the values apart.
        x = x + fg.arange(rows * cols, dtype=fg.float64).reshape(rows, cols) * 3
    return x, t, r, w


@settings(max_examples=25, deadline=None)
@function_samples
def test_tangents_match_central_differences(rows, cols, name, seed):
    x, t, _, w = sample_arguments(rows, cols, name, seed)
    f = FUNCTIONS[name]
    got = tangent_of(fg, f, x, t, fg, w)
    expected = central_difference(f, x, t, fg, w)
    assert got is not None
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_tangents_match_torch(name):
    rng = np.random.default_rng(7)
    arrays = [rng.uniform(-1.0, 1.0, shape) for shape in [(3, 4), (3, 4), (4, 3)]]
    results = []
    for T in (fg, torch):
        x, t, w = (T.tensor(a) for a in arrays)
        results.append(tangent_of(T, FUNCTIONS[name], x, t, T, w).numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10, atol=1e-12)


def weighted_tangent(T, f, x, t, w):
    """``sum(c * tangent)`` for the tangent of ``f`` at ``x`` in the direction ``t``, with
    fixed weights ``c`` spread over [-1, 1]."""
    tangent = tangent_of(T, f, x, t, T, w)
    c = T.linspace(-1.0, 1.0, tangent.numel(), dtype=T.float64).reshape(tangent.shape)
    return (tangent * c).sum()


def tangent_gradient(T, f, x, t, w):
    """The gradient of :func:`weighted_tangent` with respect to ``x`` (reverse over forward);
    zeros where it does not depend on ``x``."""
    x = x.detach().requires_grad_()
    weighted = weighted_tangent(T, f, x, t, w)
    if not weighted.requires_grad:
        return np.zeros(tuple(x.shape))
    (g,) = T.autograd.grad(weighted, x, allow_unused=True)
    return np.zeros(tuple(x.shape)) if g is None else g.numpy()


@settings(max_examples=25, deadline=None)
@function_samples
def test_tangent_gradients_match_central_differences(rows, cols, name, seed):
    # Reverse over forward: the tangent's history reaches the primal through every input and
    # output the formulas saved (exp, tanh, softmax and the norms save their outputs).
    x, t, r, w = sample_arguments(rows, cols, name, seed)
    f = FUNCTIONS[name]
    got = tangent_gradient(fg, f, x, t, w)
    eps = 1e-6
    ahead, behind = (weighted_tangent(fg, f, x + s * eps * r, t, w).item() for s in (1, -1))
    expected = (ahead - behind) / (2 * eps)
    np.testing.assert_allclose((got * r.numpy()).sum(), expected, rtol=1e-5, atol=1e-6)


# torch 2.13 cannot differentiate these tangents: its forward formulas modify a saved `exp`
# output in place ("one of the variables needed for gradient computation has been modified").
TORCH_TANGENT_GRADIENT_FAILS = {"softmax", "log_softmax", "logsumexp"}


@needs_torch
@pytest.mark.parametrize("name", sorted(set(FUNCTIONS) - TORCH_TANGENT_GRADIENT_FAILS))
def test_tangent_gradients_match_torch(name):
    rng = np.random.default_rng(11)
    arrays = [rng.uniform(-1.0, 1.0, shape) for shape in [(3, 4), (3, 4), (4, 3)]]
    if name == "max_values":
        arrays[0] = arrays[0] + np.arange(12.0).reshape(3, 4) * 3
    results = []
    for T in (fg, torch):
        x, t, w = (T.tensor(a) for a in arrays)
        results.append(tangent_gradient(T, FUNCTIONS[name], x, t, w))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10, atol=1e-12)


@needs_torch
def test_complex_tangents_match_torch():
    def f(z, T):
        return (z * z).exp() + z.abs() + (z.conj() * 2j).real

    results = []
    for T in (fg, torch):
        z = T.tensor([1 + 2j, 3 - 1j, -0.5 + 0.25j], dtype=T.complex128)
        t = T.tensor([0.5 - 1j, 2 + 0.3j, 1j], dtype=T.complex128)
        results.append(tangent_of(T, f, z, t, T).numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_real_to_complex_tangent_matches_central_differences():
    x = fg.tensor([0.3, -1.2, 2.0], dtype=fg.float64)
    t = fg.tensor([1.0, 0.5, -2.0], dtype=fg.float64)

    def f(x):
        return fg.polar(x * x + 1.0, x)

    got = tangent_of(fg, f, x, t)
    np.testing.assert_allclose(got.numpy(), central_difference(f, x, t).numpy(), rtol=1e-6)


def test_multi_output_op_gives_each_output_its_tangent():
    x = fg.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]], dtype=fg.float64)
    t = fg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=fg.float64)
    with fwAD.dual_level():
        values, indices = fwAD.make_dual(x, t).sort(dim=1)
        np.testing.assert_array_equal(
            fwAD.unpack_dual(values).tangent.numpy(), [[2.0, 3.0, 1.0], [6.0, 4.0, 5.0]]
        )
        assert fwAD.unpack_dual(indices).tangent is None


def test_level_life_cycle_and_errors():
    x, t = fg.randn(3), fg.randn(3)
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(x, t)
    assert fwAD.unpack_dual(x) == (x, None)
    with fwAD.dual_level() as level:
        assert level == 0
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the moment"):
            fwAD.enter_dual_level()
        with pytest.raises(
            RuntimeError, match=r"Tensor is of size \[3\] while the given forward gradient is of size \[4\]"
        ):
            fwAD.make_dual(x, fg.randn(4))
        with pytest.raises(
            ValueError, match="Expected primal to be floating point or complex, but got: ferrograd.int64"
        ):
            fwAD.make_dual(fg.arange(3), t)
        with pytest.raises(ValueError, match="Expected tangent to be floating point or complex"):
            fwAD.make_dual(x, fg.arange(3))
        with pytest.raises(RuntimeError, match="not the last one that was created"):
            fwAD.exit_dual_level(level=3)
        dual = fwAD.make_dual(x, t)
        kept = dual * 2
        assert fwAD.unpack_dual(kept).tangent is not None
    # The level closed: every tangent is gone, the values stay.
    assert fwAD.unpack_dual(dual).tangent is None
    assert fwAD.unpack_dual(kept).tangent is None
    assert np.allclose(kept.numpy(), 2 * x.numpy())
    with fwAD.dual_level():  # a new level opens after the old one closed
        assert fwAD.unpack_dual(dual).tangent is None


def test_dual_level_decorates_a_function():
    @fwAD.dual_level()
    def tangent_of_square(x, t):
        return fwAD.unpack_dual(fwAD.make_dual(x, t) ** 2).tangent

    x = fg.tensor([1.0, 2.0])
    np.testing.assert_allclose(tangent_of_square(x, fg.ones(2)).numpy(), [2.0, 4.0])
    assert fwAD._current_level == -1


def test_dual_is_a_view_and_primal_has_no_tangent():
    x = fg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    t = fg.tensor([1.0, 0.0, -1.0])
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        assert dual.grad_fn.name() == "ViewBackward0"
        assert dual._base is not None
        primal, tangent = fwAD.unpack_dual(dual)
        assert fwAD.unpack_dual(primal).tangent is None
        assert fwAD.unpack_dual(x).tangent is None
        np.testing.assert_array_equal(tangent.numpy(), t.numpy())
        # The tangent is the given tensor itself: a write to it shows.
        t.mul_(2)
        np.testing.assert_array_equal(fwAD.unpack_dual(dual).tangent.numpy(), [2.0, 0.0, -2.0])
        assert fwAD.unpack_dual(dual.detach()).tangent is None


def test_tangents_propagate_without_grad_mode():
    x, t = fg.tensor([0.0, 1.0], dtype=fg.float64), fg.tensor([1.0, 1.0], dtype=fg.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        with fg.no_grad():
            y = dual.tanh()
        assert not y.requires_grad
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), 1 - np.tanh(x.numpy()) ** 2)


def test_in_place_ops_update_tangents():
    x = fg.tensor([1.0, 2.0, 3.0], dtype=fg.float64)
    t = fg.tensor([1.0, 1.0, 0.0], dtype=fg.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x.clone(), t)
        z = fg.tensor([5.0, 6.0, 7.0], dtype=fg.float64)
        z.mul_(dual)  # a plain tensor written with a dual one gets a tangent
        np.testing.assert_array_equal(fwAD.unpack_dual(z).tangent.numpy(), [5.0, 6.0, 0.0])
        z.sin_()
        np.testing.assert_allclose(
            fwAD.unpack_dual(z).tangent.numpy(), np.cos([5.0, 12.0, 21.0]) * [5.0, 6.0, 0.0]
        )
        z.zero_()
        np.testing.assert_array_equal(fwAD.unpack_dual(z).tangent.numpy(), [0.0, 0.0, 0.0])
        # A write through a view reaches its base's tangent, which the view's shares.
        dual[1:].mul_(3)
        np.testing.assert_array_equal(fwAD.unpack_dual(dual).tangent.numpy(), [1.0, 3.0, 0.0])
        np.testing.assert_array_equal(t.numpy(), [1.0, 3.0, 0.0])
        # A plain tensor written through a view: its base gets the tangent, zero elsewhere.
        w = fg.zeros(4, dtype=fg.float64)
        w[1:].copy_(dual)
        np.testing.assert_array_equal(fwAD.unpack_dual(w).tangent.numpy(), [0.0, 1.0, 3.0, 0.0])


@needs_torch
def test_in_place_programs_match_torch():
    def program(T):
        ad = T.autograd.forward_ad
        x = T.tensor([[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]], dtype=T.float64)
        t = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=T.float64)
        with ad.dual_level():
            d = ad.make_dual(x.clone(), t.clone())
            d[0].mul_(3)
            d.t()[1].add_(d[:, 2])
            z = x.clone()
            z[:, 1:] = d[:, :2].exp()
            z.addcmul_(d, d, value=0.5)
            return [ad.unpack_dual(v).tangent.numpy() for v in (d, z)]

    for ours, theirs in zip(program(fg), program(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_tangent_is_differentiable_forward_over_reverse():
    # The Hessian-vector product of f(x) = sum(x^3) is 6 x * v.
    x = fg.tensor([1.0, -2.0, 0.5], dtype=fg.float64, requires_grad=True)
    v = fg.tensor([1.0, 2.0, 3.0], dtype=fg.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, v)
        (grad,) = fg.autograd.grad((dual**3).sum(), dual, create_graph=True)
        hvp_forward = fwAD.unpack_dual(grad).tangent
        directional = fwAD.unpack_dual((dual**3).sum()).tangent
    np.testing.assert_allclose(hvp_forward.detach().numpy(), 6 * x.detach().numpy() * v.numpy())
    (hvp_reverse,) = fg.autograd.grad(directional, x)
    np.testing.assert_allclose(hvp_reverse.numpy(), 6 * x.detach().numpy() * v.numpy())


def test_in_place_op_under_no_grad_keeps_a_tangents_history():
    # As PyTorch: the write changes the tangent's values and leaves its history as it was.
    def run(T):
        ad = T.autograd.forward_ad
        x = T.tensor([0.5, 1.0, 2.0], dtype=T.float64, requires_grad=True)
        t = T.tensor([1.0, -1.0, 0.5], dtype=T.float64)
        with ad.dual_level():
            y = ad.make_dual(x, t).sin()
            with T.no_grad():
                y.mul_(2.0)
            tangent = ad.unpack_dual(y).tangent
        (g,) = T.autograd.grad(tangent.sum(), x)
        return tangent.detach().numpy(), g.numpy()

    tangent, g = run(fg)
    x, t = np.array([0.5, 1.0, 2.0]), np.array([1.0, -1.0, 0.5])
    np.testing.assert_allclose(tangent, 2 * np.cos(x) * t)
    np.testing.assert_allclose(g, -np.sin(x) * t)
    if torch is not None:
        for ours, theirs in zip((tangent, g), run(torch)):
            np.testing.assert_allclose(ours, theirs)


class ScaledSine(fg.autograd.Function):
    @staticmethod
    def forward(ctx, x, y, k):
        ctx.save_for_forward(x)
        ctx.k = k
        ScaledSine.forward_saw_tangent = fwAD.unpack_dual(x).tangent is not None
        return x.sin() * k, y * 2

    @staticmethod
    def jvp(ctx, tx, ty, tk):
        (x,) = ctx.saved_tensors
        ScaledSine.jvp_got = (tx, ty, tk)
        return x.cos() * tx * ctx.k, ty * 2

    @staticmethod
    def backward(ctx, ga, gb):
        raise AssertionError("not used")


def test_custom_function_jvp():
    x = fg.tensor([0.5, 1.0], dtype=fg.float64)
    y = fg.tensor([3.0, 4.0], dtype=fg.float64)
    t = fg.tensor([1.0, -2.0], dtype=fg.float64)
    with fwAD.dual_level():
        a, b = ScaledSine.apply(fwAD.make_dual(x, t), y, 3.0)
        np.testing.assert_allclose(fwAD.unpack_dual(a).tangent.numpy(), np.cos(x.numpy()) * t.numpy() * 3)
        np.testing.assert_array_equal(fwAD.unpack_dual(b).tangent.numpy(), [0.0, 0.0])
        assert a.grad_fn is None  # nothing requires grad: no node
    # forward saw the primals; jvp got the tangent, zeros for y and None for the number.
    assert ScaledSine.forward_saw_tangent is False
    tx, ty, tk = ScaledSine.jvp_got
    np.testing.assert_array_equal(tx.numpy(), t.numpy())
    np.testing.assert_array_equal(ty.numpy(), [0.0, 0.0])
    assert tk is None
    assert np.allclose(a.numpy(), np.sin(x.numpy()) * 3)


def test_custom_function_without_jvp_raises():
    class Double(fg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = fg.randn(2)
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            Double.apply(fwAD.make_dual(x, fg.ones(2)))
        # Without a dual input, no jvp is needed.
        assert fwAD.unpack_dual(Double.apply(x)).tangent is None


def test_tangent_of_an_op_whose_backward_fails_raises_when_read():
    x = fg.tensor(np.random.default_rng(3).uniform(-1, 1, (4, 2)))
    t = fg.ones(4, 2, dtype=fg.float64)
    with fwAD.dual_level():
        q, _ = fg.linalg.qr(fwAD.make_dual(x, t), mode="complete")
        with pytest.raises(RuntimeError, match="could not compute the tangent .* LinalgQrBackward0: The QR"):
            fwAD.unpack_dual(q)
        # The reduced decomposition has one.
        q, r = fg.linalg.qr(fwAD.make_dual(x, t))
        np.testing.assert_allclose(fwAD.unpack_dual(q @ r).tangent.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


BUILT_AS_FUNCTIONS = {
    "logit": lambda x, T: T.logit(x),
    "xlogy": lambda x, T: T.xlogy(x, x + 1.0),
    "nansum": lambda x, T: T.nansum(x, dim=1),
    "nanmean": lambda x, T: T.nanmean(x, dim=0),
    "entr": lambda x, T: T.special.entr(x),
    "log_ndtr": lambda x, T: T.special.log_ndtr(x),
    "logcumsumexp": lambda x, T: T.logcumsumexp(x, dim=1),
}


@pytest.mark.parametrize("name", sorted(BUILT_AS_FUNCTIONS))
@pytest.mark.parametrize("requires_grad", [False, True])
def test_ops_built_as_functions_have_tangents(name, requires_grad):
    # Whether the input requires grad decides whether these ops run as Functions of ferrograd's
    # own, whose tangents come from their backward.
    rng = np.random.default_rng(11)
    x = fg.tensor(rng.uniform(0.2, 0.8, (3, 4)), requires_grad=requires_grad)
    t = fg.tensor(rng.uniform(-1.0, 1.0, (3, 4)))
    f = BUILT_AS_FUNCTIONS[name]
    got = tangent_of(fg, f, x, t, fg)
    expected = central_difference(f, x.detach(), t, fg)
    np.testing.assert_allclose(got.detach().numpy(), expected.numpy(), rtol=1e-6, atol=1e-7)
    if torch is not None:
        theirs = tangent_of(torch, f, torch.tensor(x.detach().numpy()), torch.tensor(t.numpy()), torch)
        np.testing.assert_allclose(got.detach().numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_samples_have_zero_gradients_and_tangents():
    mean = fg.zeros(3, requires_grad=True)
    std = fg.ones(3, requires_grad=True)
    assert fg.normal(mean, 1.0).grad_fn.name() == "NormalBackward1"
    assert fg.normal(0.0, std).grad_fn.name() == "NormalBackward2"
    sample = fg.normal(mean, std)
    assert sample.grad_fn.name() == "NormalBackward3"
    sample.sum().backward()
    np.testing.assert_array_equal(mean.grad.numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(std.grad.numpy(), [0.0, 0.0, 0.0])
    with fwAD.dual_level():
        dual = fwAD.make_dual(fg.ones(3), fg.ones(3))
        np.testing.assert_array_equal(fwAD.unpack_dual(fg.normal(dual, 1.0)).tangent.numpy(), [0.0] * 3)
        np.testing.assert_array_equal(fwAD.unpack_dual(fg.poisson(dual)).tangent.numpy(), [0.0] * 3)


@pytest.mark.parametrize("n", [4, 1 << 16])
def test_a_tangent_carries_no_tangent_of_its_own(n):
    # Large graphs run their backward on worker threads: the tangents computed there are plain.
    x = fg.linspace(0.5, 1.5, n, dtype=fg.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, fg.ones(n, dtype=fg.float64))
        tangent = fwAD.unpack_dual((dual * dual).exp()).tangent
        np.testing.assert_allclose(tangent.numpy(), 2 * x.numpy() * np.exp(x.numpy() ** 2))
        assert fwAD.unpack_dual(tangent).tangent is None
        assert fwAD.unpack_dual(tangent * 2).tangent is None


def test_non_reentrant_checkpoint_propagates_tangents():
    x = fg.tensor([0.5, 1.0, 2.0], dtype=fg.float64, requires_grad=True)
    t = fg.tensor([1.0, -1.0, 0.5], dtype=fg.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        out = fg.utils.checkpoint.checkpoint(lambda a: a.sin() * a, dual, use_reentrant=False)
        tangent = fwAD.unpack_dual(out).tangent
    xs = x.detach().numpy()
    np.testing.assert_allclose(tangent.detach().numpy(), (np.cos(xs) * xs + np.sin(xs)) * t.numpy())
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xs) * xs + np.sin(xs))


MODULES = {
    "conv_batchnorm": (
        lambda: fg.nn.Sequential(fg.nn.Conv2d(2, 3, 3, padding=1), fg.nn.BatchNorm2d(3), fg.nn.ReLU()),
        (2, 2, 5, 5),
    ),
    "lstm": (lambda: fg.nn.LSTM(4, 3, batch_first=True), (2, 5, 4)),
    "transformer_layer": (
        lambda: fg.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True),
        (2, 3, 4),
    ),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_tangents_match_central_differences(name):
    make, shape = MODULES[name]
    fg.manual_seed(0)
    module = make().double()
    rng = np.random.default_rng(1)
    x = fg.tensor(rng.standard_normal(shape))
    t = fg.tensor(rng.standard_normal(shape))

    def f(z):
        out = module(z)
        return out[0] if isinstance(out, tuple) else out

    got = tangent_of(fg, f, x, t)
    np.testing.assert_allclose(
        got.detach().numpy(), central_difference(f, x, t).numpy(), rtol=1e-5, atol=1e-7
    )


SCALAR_FUNCTIONS = {
    # Ops that save their own outputs (prod, exp, tanh, softmax, sigmoid): their tangents must
    # reach the saved copies for forward over reverse.
    "prod": lambda x, T: (x * x).prod(),
    "cubes_times_prod": lambda x, T: (x**3).sum() * x.prod(),
    "exp_tanh": lambda x, T: x.exp().sum() * x.tanh().sum(),
    "softmax_sigmoid": lambda x, T: T.softmax(x, 0)[0] * x.sigmoid().sum(),
}


@pytest.mark.parametrize("name", sorted(SCALAR_FUNCTIONS))
def test_hessian_forward_over_reverse_matches_reverse_over_reverse(name):
    f = SCALAR_FUNCTIONS[name]
    x = fg.tensor([0.1, 0.2, 0.3, -0.4], dtype=fg.float64)
    forward = fg.autograd.functional.hessian(
        lambda x: f(x, fg), x, outer_jacobian_strategy="forward-mode", vectorize=True
    )
    reverse = fg.autograd.functional.hessian(lambda x: f(x, fg), x)
    assert not forward.requires_grad
    np.testing.assert_allclose(forward.numpy(), reverse.numpy(), rtol=1e-10, atol=1e-12)
    if torch is not None:
        theirs = torch.autograd.functional.hessian(lambda x: f(x, torch), torch.tensor(x.numpy()))
        np.testing.assert_allclose(forward.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_jacobian_forward_mode():
    def f(x, y):
        return (x.sin()[:, None] * y).exp(), x.sum() * y.prod()

    x = fg.tensor([0.1, 0.2, 0.3], dtype=fg.float64)
    y = fg.tensor([1.0, 2.0], dtype=fg.float64)
    forward = fg.autograd.functional.jacobian(f, (x, y), strategy="forward-mode", vectorize=True)
    reverse = fg.autograd.functional.jacobian(f, (x, y))
    assert [[j.shape for j in row] for row in forward] == [[(3, 2, 3), (3, 2, 2)], [(3,), (2,)]]
    for row_f, row_r in zip(forward, reverse):
        for a, b in zip(row_f, row_r):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    with pytest.raises(
        AssertionError, match='Expected strategy to be either "forward-mode" or "reverse-mode"'
    ):
        fg.autograd.functional.jacobian(f, (x, y), strategy="sideways")
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        fg.autograd.functional.jacobian(f, (x, y), strategy="forward-mode")
    with pytest.raises(NotImplementedError, match='`create_graph=True` and `strategy="forward-mode"`'):
        fg.autograd.functional.jacobian(f, (x, y), strategy="forward-mode", vectorize=True, create_graph=True)
    with pytest.raises(RuntimeError, match='`strict=True` and `strategy="forward-mode"`'):
        fg.autograd.functional.jacobian(f, (x, y), strategy="forward-mode", vectorize=True, strict=True)


@pytest.mark.parametrize("hooks", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", sorted(SCALAR_FUNCTIONS))
def test_gradients_computed_inside_a_dual_level_have_hessian_vector_tangents(name, create_graph, hooks):
    # As in PyTorch, a backward inside a dual level gives its gradients tangents (H v here),
    # with or without create_graph, and through saved-tensor hooks, which pack the saved
    # values but not their tangents.
    f = SCALAR_FUNCTIONS[name]
    x = fg.tensor([0.1, 0.2, 0.3, -0.4], dtype=fg.float64)
    v = fg.tensor([1.0, -1.0, 0.5, 2.0], dtype=fg.float64)
    hessian = fg.autograd.functional.hessian(lambda x: f(x, fg), x)
    pack = fg.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
    with fwAD.dual_level(), pack if hooks else fg.enable_grad():
        dual = fwAD.make_dual(x.clone().requires_grad_(), v)
        (gradient,) = fg.autograd.grad(f(dual, fg), dual, create_graph=create_graph)
        tangent = fwAD.unpack_dual(gradient).tangent
    np.testing.assert_allclose(tangent.detach().numpy(), hessian.numpy() @ v.numpy(), rtol=1e-10, atol=1e-12)

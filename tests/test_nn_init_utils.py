"""nn.init (orthogonal_, trunc_normal_, dirac_, eye_, sparse_), nn.utils.parametrize and
parametrizations, hook-based weight/spectral norm, BatchNorm fusion, skip_init, total-norm
clipping and stateless.functional_call, against torch."""

from __future__ import annotations

import math
import operator
import re
import warnings

import numpy as np
import pytest

import ferrograd as fg

from helpers import assert_raises_like_torch, has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch not installed")
MODULES = [fg] + ([torch] if has_torch else [])


def _raises_like_torch(fn, kind, message):
    """``fn(T)`` raises ``kind`` matching ``message`` for ferrograd and, when installed, torch."""
    assert_raises_like_torch(lambda _F, T: fn(T), kind, message)


def _assert_grads_match(f, t, x, names, **tolerance):
    """Backward of ``sum(m(x) ** 2)`` through the ferrograd module ``f`` and the torch module ``t``
    gives the tensors at the dotted attribute ``names`` the same gradients."""
    f(fg.tensor(x)).pow(2).sum().backward()
    t(torch.tensor(x)).pow(2).sum().backward()
    for name in names:
        got, expected = operator.attrgetter(name)(f).grad, operator.attrgetter(name)(t).grad
        np.testing.assert_allclose(got.numpy(), expected.numpy(), **tolerance)


def _np(t):
    return t.detach().numpy()


def _linear_pair(out_f, in_f, seed=0, scale=1.0):
    """A float64 ferrograd Linear and a torch Linear with the same weights."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((out_f, in_f)) * scale
    b = rng.standard_normal(out_f)
    f = fg.nn.Linear(in_f, out_f).double()
    t = torch.nn.Linear(in_f, out_f).double()
    for m, T in ((f, fg), (t, torch)):
        with T.no_grad():
            m.weight.copy_(T.tensor(w))
            m.bias.copy_(T.tensor(b))
    return f, t


# ---- nn.init -------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 2, 3)])
def test_orthogonal_init(shape):
    w = fg.empty(shape, dtype=fg.float64)
    fg.nn.init.orthogonal_(w, gain=2.0)
    flat = _np(w).reshape(shape[0], -1)
    gram = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
    np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-10)


def test_init_generator_reproducible():
    for fn in (
        lambda t, g: fg.nn.init.orthogonal_(t, generator=g),
        lambda t, g: fg.nn.init.trunc_normal_(t, generator=g),
        lambda t, g: fg.nn.init.sparse_(t, 0.5, generator=g),
    ):
        outs = []
        for _ in range(2):
            g = fg.Generator()
            g.manual_seed(123)
            outs.append(_np(fn(fg.empty(6, 4), g)))
        np.testing.assert_array_equal(outs[0], outs[1])


def test_trunc_normal_bounds_and_moments():
    w = fg.empty(20000, dtype=fg.float64)
    fg.nn.init.trunc_normal_(w, mean=1.0, std=2.0, a=-1.0, b=2.5)
    x = _np(w)
    assert x.min() >= -1.0 and x.max() <= 2.5
    # mean of the truncated normal: mu + sigma (phi(alpha) - phi(beta)) / (Phi(beta) - Phi(alpha))
    alpha, beta = (-1.0 - 1.0) / 2.0, (2.5 - 1.0) / 2.0
    pdf = [math.exp(-z * z / 2) / math.sqrt(2 * math.pi) for z in (alpha, beta)]
    cdf = [(1 + math.erf(z / math.sqrt(2))) / 2 for z in (alpha, beta)]
    mean = 1.0 + 2.0 * (pdf[0] - pdf[1]) / (cdf[1] - cdf[0])
    assert x.mean() == pytest.approx(mean, abs=0.03)


def test_trunc_normal_warns_far_mean():
    for T in MODULES:
        with pytest.warns(UserWarning, match=re.escape("mean is more than 2 std from [a, b]")):
            T.nn.init.trunc_normal_(T.empty(3), mean=10.0)


@needs_torch
@pytest.mark.parametrize(
    ("shape", "groups"), [((4, 4, 3), 1), ((6, 3, 3, 3), 2), ((4, 2, 1, 3, 2), 2), ((2, 5, 3), 1)]
)
def test_dirac_matches_torch(shape, groups):
    f = fg.nn.init.dirac_(fg.randn(*shape), groups)
    t = torch.nn.init.dirac_(torch.randn(*shape), groups)
    np.testing.assert_array_equal(_np(f), _np(t))


@needs_torch
@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2)])
def test_eye_matches_torch(shape):
    np.testing.assert_array_equal(
        _np(fg.nn.init.eye_(fg.randn(*shape))), _np(torch.nn.init.eye_(torch.randn(*shape)))
    )


def test_sparse_zero_count_per_column():
    w = fg.nn.init.sparse_(fg.empty(10, 7), sparsity=0.25, std=1.0)
    zeros_per_col = (_np(w) == 0).sum(axis=0)
    assert (zeros_per_col == 3).all()  # ceil(0.25 * 10)


@pytest.mark.parametrize(
    ("fn", "kind", "message"),
    [
        (lambda T: T.nn.init.orthogonal_(T.empty(3)), ValueError, "Only tensors with 2 or more dimensions"),
        (lambda T: T.nn.init.dirac_(T.empty(3, 3)), ValueError, "Only tensors with 3, 4, or 5 dimensions"),
        (lambda T: T.nn.init.dirac_(T.empty(3, 3, 3), 2), ValueError, "dim 0 must be divisible by groups"),
        (lambda T: T.nn.init.eye_(T.empty(3, 3, 3)), ValueError, "Only tensors with 2 dimensions"),
        (lambda T: T.nn.init.sparse_(T.empty(3), 0.1), ValueError, "Only tensors with 2 dimensions"),
    ],
)
def test_init_errors_like_torch(fn, kind, message):
    _raises_like_torch(fn, kind, message)


# ---- parametrize ---------------------------------------------------------------------------


class _Symmetric:
    """Builds the same parametrization module for either library."""

    @staticmethod
    def make(T):
        class Symmetric(T.nn.Module):
            def forward(self, x):
                return x.triu() + x.triu(1).transpose(-1, -2)

        return Symmetric()


def _scale(T, factor):
    class Scale(T.nn.Module):
        def forward(self, x):
            return x * factor

        def right_inverse(self, x):
            return x / factor

    return Scale()


@needs_torch
def test_register_parametrization_values_grads_and_structure():
    P, TP = fg.nn.utils.parametrize, torch.nn.utils.parametrize
    f, t = _linear_pair(3, 3)
    orig_param = f.weight
    for m, lib, T in ((f, P, fg), (t, TP, torch)):
        lib.register_parametrization(m, "weight", _Symmetric.make(T))
        lib.register_parametrization(m, "weight", _scale(T, 3.0))
    assert f.parametrizations.weight.original is orig_param  # optimizers keep working
    assert type(f).__name__ == "ParametrizedLinear" and isinstance(f, fg.nn.Linear)
    assert fg.nn.utils.parametrize.type_before_parametrizations(f) is fg.nn.Linear
    assert P.is_parametrized(f) and P.is_parametrized(f, "weight") and not P.is_parametrized(f, "bias")
    assert "weight" not in dict(f.named_parameters())
    assert sorted(f.state_dict()) == sorted(t.state_dict())
    np.testing.assert_allclose(_np(f.weight), _np(t.weight), rtol=1e-12)
    x = np.random.default_rng(1).standard_normal((2, 3))
    _assert_grads_match(f, t, x, ["parametrizations.weight.original"], rtol=1e-10)


@needs_torch
def test_right_inverse_on_assignment_and_registration():
    P, TP = fg.nn.utils.parametrize, torch.nn.utils.parametrize
    f, t = _linear_pair(2, 3)
    P.register_parametrization(f, "weight", _scale(fg, 2.0))
    TP.register_parametrization(t, "weight", _scale(torch, 2.0))
    # registration stores right_inverse(weight): the visible weight is unchanged
    np.testing.assert_allclose(
        _np(f.parametrizations.weight.original), _np(t.parametrizations.weight.original)
    )
    new = np.arange(6.0).reshape(2, 3)
    f.weight = fg.tensor(new)
    t.weight = torch.tensor(new)
    np.testing.assert_allclose(_np(f.weight), new)
    np.testing.assert_allclose(
        _np(f.parametrizations.weight.original), _np(t.parametrizations.weight.original)
    )


@needs_torch
@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    P, TP = fg.nn.utils.parametrize, torch.nn.utils.parametrize
    f, t = _linear_pair(3, 3)
    for m, lib, T in ((f, P, fg), (t, TP, torch)):
        lib.register_parametrization(m, "weight", _Symmetric.make(T))
        lib.remove_parametrizations(m, "weight", leave_parametrized=leave)
    assert type(f) is fg.nn.Linear and not hasattr(f, "parametrizations")
    assert isinstance(f.weight, fg.nn.Parameter)
    np.testing.assert_allclose(_np(f.weight), _np(t.weight))


@needs_torch
def test_cached_computes_once():
    calls = []

    def counting(T):
        class Counting(T.nn.Module):
            def forward(self, x):
                calls.append(1)
                return x * 2

        return Counting()

    for T in MODULES:
        calls.clear()
        m = T.nn.Linear(2, 2)
        T.nn.utils.parametrize.register_parametrization(m, "weight", counting(T), unsafe=True)
        calls.clear()
        with T.nn.utils.parametrize.cached():
            a, b = m.weight, m.weight
        assert a is b and len(calls) == 1, T
        m.weight  # noqa: B018 (outside the context the value is recomputed)
        assert len(calls) == 2, T


def _wrong_shape(T):
    class Flatten(T.nn.Module):
        def forward(self, x):
            return x.reshape(-1)

    return Flatten()


def _no_inverse_of_tuple(T):
    class Pair(T.nn.Module):
        def forward(self, a, b):
            return a + b

        def right_inverse(self, x):
            return x, T.zeros_like(x)

    return Pair()


@pytest.mark.parametrize(
    ("fn", "kind", "message"),
    [
        (
            lambda T: T.nn.utils.parametrize.register_parametrization(
                T.nn.Linear(2, 3), "weight", _wrong_shape(T)
            ),
            ValueError,
            "Registering a parametrization may not change the shape of the tensor",
        ),
        (
            lambda T: T.nn.utils.parametrize.register_parametrization(
                T.nn.Linear(2, 3), "nope", _wrong_shape(T)
            ),
            ValueError,
            "does not have a parameter, a buffer, or a parametrized element with name 'nope'",
        ),
        (
            lambda T: T.nn.utils.parametrize.remove_parametrizations(T.nn.Linear(2, 3), "weight"),
            ValueError,
            "does not have a parametrization on weight",
        ),
        (
            lambda T: T.nn.utils.parametrize.remove_parametrizations(
                T.nn.utils.parametrize.register_parametrization(
                    T.nn.Linear(2, 3), "weight", _no_inverse_of_tuple(T)
                ),
                "weight",
                leave_parametrized=False,
            ),
            ValueError,
            re.escape("Cannot leave unparametrized (`leave_parametrized=False`) a tensor"),
        ),
    ],
)
def test_parametrize_errors_like_torch(fn, kind, message):
    _raises_like_torch(fn, kind, message)


def test_unsafe_allows_shape_change_and_sequence_originals():
    m = fg.nn.Linear(2, 3)
    fg.nn.utils.parametrize.register_parametrization(m, "weight", _wrong_shape(fg), unsafe=True)
    assert tuple(m.weight.shape) == (6,)
    fg.nn.utils.parametrize.remove_parametrizations(m, "weight")
    assert tuple(m.weight.shape) == (6,) and isinstance(m.weight, fg.nn.Parameter)
    m2 = fg.nn.Linear(2, 3)
    w = _np(m2.weight).copy()
    fg.nn.utils.parametrize.register_parametrization(m2, "weight", _no_inverse_of_tuple(fg))
    np.testing.assert_allclose(_np(m2.parametrizations.weight.original0), w)
    np.testing.assert_array_equal(_np(m2.parametrizations.weight.original1), np.zeros_like(w))
    assert isinstance(m2.parametrizations.weight.original1, fg.nn.Parameter)


# ---- parametrizations ----------------------------------------------------------------------


@needs_torch
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(dim):
    f, t = _linear_pair(4, 3)
    fg.nn.utils.parametrizations.weight_norm(f, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(t, dim=dim)
    for i in (0, 1):
        np.testing.assert_allclose(
            _np(getattr(f.parametrizations.weight, f"original{i}")),
            _np(getattr(t.parametrizations.weight, f"original{i}")),
            rtol=1e-12,
        )
    x = np.random.default_rng(2).standard_normal((5, 3))
    names = ["parametrizations.weight.original0", "parametrizations.weight.original1"]
    _assert_grads_match(f, t, x, names, rtol=1e-9)


def _sync_uv(f_norm, t_norm):
    with fg.no_grad():
        f_norm._u.copy_(fg.tensor(t_norm._u.numpy()))
        f_norm._v.copy_(fg.tensor(t_norm._v.numpy()))


@needs_torch
@pytest.mark.parametrize("n_iter", [1, 3])
def test_spectral_norm_parametrization(n_iter):
    f, t = _linear_pair(5, 3)
    fg.nn.utils.parametrizations.spectral_norm(f, n_power_iterations=n_iter)
    torch.nn.utils.parametrizations.spectral_norm(t, n_power_iterations=n_iter)
    _sync_uv(f.parametrizations.weight[0], t.parametrizations.weight[0])
    x = np.random.default_rng(3).standard_normal((2, 3))
    for _ in range(2):  # training mode: each access moves u and v, as in torch
        np.testing.assert_allclose(_np(f.weight), _np(t.weight), rtol=1e-10)
    np.testing.assert_allclose(
        _np(f.parametrizations.weight[0]._u), _np(t.parametrizations.weight[0]._u), rtol=1e-10
    )
    f(fg.tensor(x)).sum().backward()
    t(torch.tensor(x)).sum().backward()
    np.testing.assert_allclose(
        f.parametrizations.weight.original.grad.numpy(),
        t.parametrizations.weight.original.grad.numpy(),
        rtol=1e-9,
    )
    f.eval()
    u = _np(f.parametrizations.weight[0]._u).copy()
    f.weight  # noqa: B018 (eval mode must not move u)
    np.testing.assert_array_equal(_np(f.parametrizations.weight[0]._u), u)
    # the converged estimate is the largest singular value
    w = fg.nn.Linear(3, 6).double()
    fg.nn.utils.parametrizations.spectral_norm(w)
    assert np.linalg.norm(_np(w.weight), 2) == pytest.approx(1.0, rel=1e-3)


@needs_torch
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_parametrization(orthogonal_map, shape):
    f, t = _linear_pair(*shape)
    fg.nn.utils.parametrizations.orthogonal(f, orthogonal_map=orthogonal_map)
    torch.nn.utils.parametrizations.orthogonal(t, orthogonal_map=orthogonal_map)
    w = _np(f.weight)
    gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-10)
    # with the same base and original, values and gradients match torch
    rng = np.random.default_rng(4)
    new = rng.standard_normal(shape) * 2.0
    with fg.no_grad():
        f.parametrizations.weight[0].base = fg.tensor(t.parametrizations.weight[0].base.numpy())
        f.parametrizations.weight.original.copy_(fg.tensor(new))
    with torch.no_grad():
        t.parametrizations.weight.original.copy_(torch.tensor(new))
    np.testing.assert_allclose(_np(f.weight), _np(t.weight), atol=1e-10)
    x = rng.standard_normal((2, shape[1]))
    _assert_grads_match(f, t, x, ["parametrizations.weight.original"], atol=1e-9)


def test_orthogonal_assignment_uses_right_inverse():
    m = fg.nn.Linear(3, 3).double()
    fg.nn.utils.parametrizations.orthogonal(m)
    q = np.linalg.qr(np.random.default_rng(5).standard_normal((3, 3)))[0]
    m.weight = fg.tensor(q)
    np.testing.assert_allclose(_np(m.weight), q, atol=1e-12)


@pytest.mark.parametrize(
    ("fn", "kind", "message"),
    [
        (
            lambda T: T.nn.utils.parametrizations.orthogonal(T.nn.Linear(2, 2), orthogonal_map="bad"),
            ValueError,
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: bad',
        ),
        (
            lambda T: T.nn.utils.parametrizations.orthogonal(T.nn.Linear(2, 2), "bias"),
            ValueError,
            "Expected a matrix or batch of matrices. Got a tensor of 1 dimensions.",
        ),
        (
            lambda T: T.nn.utils.parametrizations.spectral_norm(T.nn.Linear(2, 2), "nope"),
            ValueError,
            "has no parameter or buffer with name 'nope'",
        ),
        (
            lambda T: T.nn.utils.parametrizations.spectral_norm(T.nn.Linear(2, 2), n_power_iterations=0),
            ValueError,
            "Expected n_power_iterations to be positive, but got n_power_iterations=0",
        ),
        (
            lambda T: T.nn.utils.parametrizations.spectral_norm(T.nn.Linear(2, 2), dim=2),
            IndexError,
            re.escape("Dimension out of range (expected to be in range of [-2, 1] but got 2)"),
        ),
    ],
)
def test_parametrizations_errors_like_torch(fn, kind, message):
    _raises_like_torch(fn, kind, message)


# ---- hook-based weight_norm / spectral_norm ------------------------------------------------


@needs_torch
def test_old_weight_norm_matches_torch_and_removes():
    f, t = _linear_pair(4, 3)
    for m, T in ((f, fg), (t, torch)):
        with pytest.warns(FutureWarning, match="`torch.nn.utils.weight_norm` is deprecated"):
            T.nn.utils.weight_norm(m, dim=0)
    assert sorted(n for n, _ in f.named_parameters()) == ["bias", "weight_g", "weight_v"]
    np.testing.assert_allclose(_np(f.weight_g), _np(t.weight_g), rtol=1e-12)
    x = np.random.default_rng(6).standard_normal((2, 3))
    _assert_grads_match(f, t, x, ["weight_g", "weight_v"], rtol=1e-9)
    fg.nn.utils.remove_weight_norm(f)
    assert sorted(n for n, _ in f.named_parameters()) == ["bias", "weight"]
    np.testing.assert_allclose(_np(f.weight), _np(t.weight), rtol=1e-12)


@needs_torch
def test_old_spectral_norm_matches_torch_and_removes():
    f, t = _linear_pair(5, 3)
    fg.nn.utils.spectral_norm(f)
    torch.nn.utils.spectral_norm(t)
    assert sorted(f.state_dict()) == sorted(t.state_dict())
    with fg.no_grad():
        f.weight_u.copy_(fg.tensor(t.weight_u.numpy()))
        f.weight_v.copy_(fg.tensor(t.weight_v.numpy()))
    x = np.random.default_rng(7).standard_normal((2, 3))
    for _ in range(2):
        yf, yt = f(fg.tensor(x)), t(torch.tensor(x))
        np.testing.assert_allclose(_np(yf), _np(yt), rtol=1e-10)
    yf.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(f.weight_orig.grad.numpy(), t.weight_orig.grad.numpy(), rtol=1e-9)
    fg.nn.utils.remove_spectral_norm(f)
    torch.nn.utils.remove_spectral_norm(t)
    assert sorted(n for n, _ in f.named_parameters()) == ["bias", "weight"]
    np.testing.assert_allclose(_np(f.weight), _np(t.weight), rtol=1e-10)


@pytest.mark.parametrize(
    ("fn", "kind", "message"),
    [
        (
            lambda T: T.nn.utils.remove_weight_norm(T.nn.Linear(2, 2)),
            ValueError,
            "weight_norm of 'weight' not found",
        ),
        (
            lambda T: T.nn.utils.remove_spectral_norm(T.nn.Linear(2, 2)),
            ValueError,
            "spectral_norm of 'weight' not found",
        ),
        (
            lambda T: T.nn.utils.weight_norm(T.nn.utils.weight_norm(T.nn.Linear(2, 2))),
            RuntimeError,
            "Cannot register two weight_norm hooks on the same parameter weight",
        ),
        (
            lambda T: T.nn.utils.spectral_norm(T.nn.utils.spectral_norm(T.nn.Linear(2, 2))),
            RuntimeError,
            "Cannot register two spectral_norm hooks on the same parameter weight",
        ),
    ],
)
def test_old_norm_errors_like_torch(fn, kind, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        _raises_like_torch(fn, kind, message)


# ---- fusion, skip_init ---------------------------------------------------------------------


def _bn_stats(bn, T, seed):
    rng = np.random.default_rng(seed)
    n = bn.num_features
    with T.no_grad():
        bn.running_mean.copy_(T.tensor(rng.standard_normal(n)))
        bn.running_var.copy_(T.tensor(rng.uniform(0.5, 2.0, n)))
        bn.weight.copy_(T.tensor(rng.standard_normal(n)))
        bn.bias.copy_(T.tensor(rng.standard_normal(n)))


@pytest.mark.parametrize("bias", [True, False])
def test_fuse_conv_bn_eval_equals_sequence(bias):
    conv = fg.nn.Conv2d(2, 3, 3, bias=bias).double().eval()
    bn = fg.nn.BatchNorm2d(3).double().eval()
    _bn_stats(bn, fg, 8)
    fused = fg.nn.utils.fuse_conv_bn_eval(conv, bn)
    assert fused is not conv and isinstance(fused.weight, fg.nn.Parameter)
    x = fg.randn(2, 2, 5, 5, dtype=fg.float64)
    np.testing.assert_allclose(_np(fused(x)), _np(bn(conv(x))), atol=1e-12)


def test_fuse_conv_transpose_bn_eval_equals_sequence():
    conv = fg.nn.ConvTranspose2d(2, 3, 3).double().eval()
    bn = fg.nn.BatchNorm2d(3).double().eval()
    _bn_stats(bn, fg, 9)
    fused = fg.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=True)
    x = fg.randn(1, 2, 4, 4, dtype=fg.float64)
    np.testing.assert_allclose(_np(fused(x)), _np(bn(conv(x))), atol=1e-12)


@pytest.mark.parametrize("features", [4, 1])
def test_fuse_linear_bn_eval_equals_sequence(features):
    lin = fg.nn.Linear(3, 4).double().eval()
    bn = fg.nn.BatchNorm1d(features).double().eval()
    _bn_stats(bn, fg, 10)
    fused = fg.nn.utils.fuse_linear_bn_eval(lin, bn)
    x = fg.randn(5, 3, dtype=fg.float64)
    expected = bn(lin(x)) if features == 4 else bn(lin(x).unsqueeze(1)).squeeze(1)
    np.testing.assert_allclose(_np(fused(x)), _np(expected), atol=1e-12)


def test_fuse_errors_like_torch():
    for T in MODULES:
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            T.nn.utils.fuse_linear_bn_eval(T.nn.Linear(2, 3), T.nn.BatchNorm1d(3))
        with pytest.raises(AssertionError, match="To fuse, linear.out_features == bn.num_features"):
            T.nn.utils.fuse_linear_bn_eval(T.nn.Linear(2, 3).eval(), T.nn.BatchNorm1d(2).eval())


def test_skip_init():
    m = fg.nn.utils.skip_init(fg.nn.Linear, 3, out_features=2)
    assert isinstance(m, fg.nn.Linear) and tuple(m.weight.shape) == (2, 3)
    for T in MODULES:
        with pytest.raises(RuntimeError, match="Expected a Module"):
            T.nn.utils.skip_init(int)

        class NoDevice(T.nn.Module):
            def __init__(self, n):
                super().__init__()

        with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
            T.nn.utils.skip_init(NoDevice, 2)


# ---- get_total_norm / clip_grads_with_norm_ ------------------------------------------------


@needs_torch
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_total_norm_and_clip_with_norm_match_torch(norm_type):
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal(s) for s in ((3, 2), (4,))]
    out = {}
    for T in (fg, torch):
        params = [T.tensor(a, requires_grad=True) for a in arrays]
        for p, a in zip(params, arrays):
            p.grad = T.tensor(a * 2.0)
        total = T.nn.utils.get_total_norm([p.grad for p in params], norm_type)
        T.nn.utils.clip_grads_with_norm_(params, 0.5, total)
        out[T] = (total.item(), [p.grad.numpy().copy() for p in params])
    assert out[fg][0] == pytest.approx(out[torch][0], rel=1e-12)
    for a, b in zip(out[fg][1], out[torch][1]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert fg.nn.utils.get_total_norm([]).item() == 0.0


def test_get_total_norm_nonfinite_like_torch():
    for T in MODULES:
        with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters`"):
            T.nn.utils.get_total_norm([T.tensor([float("inf"), 1.0])], error_if_nonfinite=True)


# ---- stateless.functional_call -------------------------------------------------------------


class _Tied:
    @staticmethod
    def make(T):
        class Tied(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = T.nn.Linear(2, 2, dtype=T.float64)
                self.b = T.nn.Linear(2, 2, dtype=T.float64)
                self.b.weight = self.a.weight
                self.register_buffer("shift", T.ones(2, dtype=T.float64))

            def forward(self, x):
                return self.b(self.a(x)) + self.shift

        return Tied()


def _call(T, m, params, x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return T.nn.utils.stateless.functional_call(m, params, x, **kw)


@needs_torch
@pytest.mark.parametrize("tie_weights", [True, False])
def test_functional_call_matches_torch(tie_weights):
    rng = np.random.default_rng(12)
    w, shift, x = rng.standard_normal((2, 2)), rng.standard_normal(2), rng.standard_normal((3, 2))
    tm = _Tied.make(torch)
    fm = _Tied.make(fg)
    with fg.no_grad():
        for name, p in tm.named_parameters():
            dict(fm.named_parameters())[name].copy_(fg.tensor(p.detach().numpy()))
    results = []
    for T, m in ((fg, fm), (torch, tm)):
        before = m.a.weight.detach().numpy().copy()
        wt = T.tensor(w, requires_grad=True)
        y = _call(T, m, {"a.weight": wt, "shift": T.tensor(shift)}, T.tensor(x), tie_weights=tie_weights)
        y.pow(2).sum().backward()
        # the module is unchanged after the call; untied, b still used (and differentiated) the original
        np.testing.assert_array_equal(m.a.weight.detach().numpy(), before)
        assert m.b.weight is m.a.weight and (m.a.weight.grad is None) == tie_weights
        results.append((_np(y), wt.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10)


def test_functional_call_errors_like_torch():
    for T in MODULES:
        m = _Tied.make(T)
        x = T.zeros(2, dtype=T.float64)
        unexpected = "Error(s) in reparametrizing for Tied:\n\tUnexpected key(s): 'zz'."
        with pytest.raises(RuntimeError, match=re.escape(unexpected)):
            _call(T, m, {"zz": T.zeros(2)}, x, strict=True)
        with pytest.raises(RuntimeError, match=re.escape("Missing key(s): 'a.bias', 'a.weight'")):
            _call(T, m, {"b.bias": T.zeros(2), "shift": T.zeros(2)}, x, strict=True)
        tied = "functional_call got multiple values for keys ['a.weight', 'b.weight']"
        with pytest.raises(ValueError, match=re.escape(tied)):
            _call(T, m, {"a.weight": T.zeros(2, 2), "b.weight": T.ones(2, 2)}, x)
        assert m.a.weight is m.b.weight  # restored after the failure


def test_functional_call_warns_deprecated():
    for T in MODULES:
        with pytest.warns(FutureWarning, match="`torch.nn.utils.stateless.functional_call` is deprecated"):
            T.nn.utils.stateless.functional_call(T.nn.Linear(2, 2), {}, T.zeros(2))


# ---- casting a module keeps tied parameters tied -------------------------------------------


@pytest.mark.parametrize(
    "cast", [lambda m, T: m.double(), lambda m, T: m.to(T.float64), lambda m, T: m.to(dtype=T.float64)]
)
def test_cast_keeps_tied_parameters_like_torch(cast):
    for T in MODULES:
        m = T.nn.Module()
        m.a, m.b = T.nn.Linear(3, 3), T.nn.Linear(3, 3)
        m.b.weight = m.a.weight
        m.a.weight.grad = T.ones(3, 3)
        m.a.bias.grad = m.b.bias.grad = T.full((3,), 2.0)  # one gradient tensor for two parameters
        cast(m, T)
        assert m.a.weight is m.b.weight
        assert m.a.weight.dtype == m.a.weight.grad.dtype == m.b.bias.grad.dtype == T.float64
        assert [name for name, _ in m.named_parameters()] == ["a.weight", "a.bias", "b.bias"]
        # the gradient is still one tensor (ferrograd's .grad is a new wrapper at each access)
        m.a.bias.grad.add_(1.0)
        assert m.b.bias.grad.tolist() == [3.0, 3.0, 3.0]
        m.float()
        assert m.a.weight is m.b.weight and m.b.weight.dtype == T.float32
        # the shared parameter gathers the gradients of both uses
        m.zero_grad()
        m.b(m.a(T.ones(2, 3))).sum().backward()
        assert m.a.weight.grad.shape == (3, 3)

"""Math, reduction, product and norm functions (and ``ferrograd.linalg``): values against torch and
NumPy in float32 and float64, gradients against torch and float64 finite differences, Tensor
methods, and PyTorch's errors for bad arguments."""

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg
from ferrograd.autograd import gradcheck, gradgradcheck

from helpers import arrays, check_op, has_torch, shapes, torch

RNG = np.random.default_rng(4321)


def rand(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, shape)


def modules():
    return [fg] + ([torch] if has_torch else [])


def raises_like_torch(fn, kind, message):
    for T in modules():
        with pytest.raises(kind, match=re.escape(message)):
            fn(T)


def compare_float32(fn, *arrays_, rtol=1e-5, atol=1e-6):
    """``fn`` on float32 inputs keeps float32 and matches torch (or, without it, float64 ferrograd)."""
    xs = [np.asarray(a, dtype=np.float32) for a in arrays_]
    got = fn(fg, *[fg.tensor(x) for x in xs])
    assert got.dtype == fg.float32
    if has_torch:
        ref = fn(torch, *[torch.tensor(x) for x in xs]).numpy()
    else:
        ref = fn(fg, *[fg.tensor(x.astype(np.float64)) for x in xs]).numpy()
    np.testing.assert_allclose(got.numpy(), ref, rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------- elementwise


UNARY = {
    "asinh": (np.arcsinh, -5.0, 5.0),
    "acosh": (np.arccosh, 1.05, 6.0),
    "atanh": (np.arctanh, -0.95, 0.95),
    "sinc": (np.sinc, -3.0, 3.0),
    "deg2rad": (np.deg2rad, -400.0, 400.0),
    "rad2deg": (np.rad2deg, -7.0, 7.0),
    "erfc": (np.vectorize(math.erfc, otypes=[float]), -4.0, 4.0),
    "logit": (lambda p: np.log(p / (1 - p)), 0.02, 0.98),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3)])
def test_unary_values_and_grads(name, shape):
    ref, lo, hi = UNARY[name]
    x = rand(*shape, low=lo, high=hi)
    out = check_op(lambda T, a: getattr(T, name)(a), x)
    np.testing.assert_allclose(out.detach().numpy(), ref(x), rtol=1e-12, atol=1e-14)
    check_op(lambda T, a: getattr(a, name)(), x)
    compare_float32(lambda T, a: getattr(T, name)(a), x)


@pytest.mark.parametrize("name", ["asinh", "acosh", "atanh", "sinc", "erfc", "logit", "deg2rad", "rad2deg"])
def test_unary_second_order(name):
    _, lo, hi = UNARY[name]
    x = fg.tensor(rand(4, low=lo, high=hi), requires_grad=True)
    assert gradcheck(getattr(fg, name), (x,))
    assert gradgradcheck(getattr(fg, name), (x,))


def test_inverse_hyperbolic_extremes_match_numpy():
    x = np.array([0.0, -0.0, 1e-300, -1e-12, 1e-8, 3e8, -1e30, 1e300])
    np.testing.assert_allclose(fg.asinh(fg.tensor(x)).numpy(), np.arcsinh(x), rtol=1e-14)
    y = np.array([1.0, 1.0 + 1e-12, 2.0, 1e10, 1e300, 0.5])
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(fg.acosh(fg.tensor(y)).numpy(), np.arccosh(y), rtol=1e-13)
    z = np.array([0.0, 1e-20, -0.5, 1.0, -1.0, 1.5])
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(fg.atanh(fg.tensor(z)).numpy(), np.arctanh(z), rtol=1e-14)
    big32 = np.array([1e20, -3e38], dtype=np.float32)
    np.testing.assert_allclose(
        fg.asinh(fg.tensor(big32)).numpy(), np.arcsinh(big32.astype(np.float64)), rtol=1e-6
    )
    # gradients where the formulas switch branches
    t = fg.tensor([0.0, 1e9], requires_grad=True)
    fg.asinh(t).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), 1 / np.sqrt(np.array([0.0, 1e9]) ** 2 + 1))
    t = fg.tensor([0.0], requires_grad=True)
    fg.sinc(t).sum().backward()
    assert t.grad.item() == 0.0 and fg.sinc(fg.tensor(0.0)).item() == 1.0


def test_erfc_is_accurate_in_the_tail():
    x = np.array([3.0, 5.0, 10.0, 26.0, -6.0])
    expected = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(fg.erfc(fg.tensor(x)).numpy(), expected, rtol=1e-14)
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(fg.erfc(fg.tensor(x32)).numpy(), expected.astype(np.float32), rtol=1e-6)


def test_float32_erfc_is_within_one_ulp_everywhere():
    # A dense sweep through both sides of the polynomial switch at |x| = 0.8 and
    # into the subnormal tail (erfc underflows to 0 in float32 from x = 10.06).
    x = np.linspace(-11.0, 11.0, 300_001).astype(np.float32)
    got = fg.erfc(fg.tensor(x)).numpy()
    want = np.array([math.erfc(v) for v in x.astype(np.float64)]).astype(np.float32)
    ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
    assert ulps.max() <= 1, x[ulps.argmax()]
    assert got[x > 10.06].max() == 0.0 and (got[(x > 9.2) & (x < 10.0)] > 0).all()
    special = fg.erfc(fg.tensor([np.inf, -np.inf, np.nan, 0.0], dtype=fg.float32)).numpy()
    np.testing.assert_array_equal(special[[0, 1, 3]], [0.0, 2.0, 1.0])
    assert np.isnan(special[2])


def test_integer_inputs_become_float():
    for name in ("asinh", "atanh", "sinc", "deg2rad", "rad2deg", "erfc", "logit"):
        assert getattr(fg, name)(fg.tensor([0, 1])).dtype == fg.float32
        if has_torch:
            assert getattr(torch, name)(torch.tensor([0, 1])).dtype == torch.float32


def test_logit_eps():
    x = np.array([0.0, 0.05, 0.3, 0.9999, 1.0])
    for eps in (1e-6, 0.1):
        out = check_op(lambda T, a, eps=eps: T.logit(a, eps), x)
        c = np.clip(x, eps, 1 - eps)
        np.testing.assert_allclose(out.detach().numpy(), np.log(c / (1 - c)))


def test_arc_aliases():
    x = fg.tensor([0.3])
    assert fg.arcsinh(x).item() == fg.asinh(x).item() and x.arctanh().item() == fg.atanh(x).item()
    assert fg.arccosh(fg.tensor([2.0])).item() == fg.acosh(fg.tensor([2.0])).item()


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_xlogy(data):
    sa, sb = data.draw(st.sampled_from([((3,), (3,)), ((2, 1), (3,)), ((), (4,)), ((2, 3), ())]))
    x = data.draw(arrays(sa, low=-2, high=2))
    y = data.draw(arrays(sb, low=0.1, high=3))
    x = np.where(np.abs(x) < 0.5, 0.0, x)
    out = check_op(lambda T, a, b: T.xlogy(a, b), x, y)
    np.testing.assert_allclose(out.detach().numpy(), x * np.log(y), atol=1e-12)
    check_op(lambda T, a, b: a.xlogy(b), x, y)
    # where x is 0 the value is 0 and, as in PyTorch, the gradient for x is still log(y)
    zx = np.where(np.abs(x) < 1.0, 0.0, x)
    t = fg.tensor(zx, requires_grad=True)
    fg.xlogy(t, fg.tensor(y)).sum().backward()
    full = np.broadcast_to(np.log(y), np.broadcast_shapes(zx.shape, y.shape))
    lead = full.ndim - zx.ndim
    expected = full.sum(axis=tuple(range(lead)))
    expected = expected.sum(axis=tuple(i for i, n in enumerate(zx.shape) if n == 1), keepdims=True).reshape(
        zx.shape
    )
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-12)
    if has_torch:
        tt = torch.tensor(zx, requires_grad=True)
        torch.xlogy(tt, torch.tensor(y)).sum().backward()
        np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-12)


def test_xlogy_special_values_and_scalars():
    x = fg.tensor([0.0, 0.0, 1.0, 0.0])
    y = fg.tensor([0.0, float("nan"), 0.0, float("inf")])
    got = fg.xlogy(x, y).numpy()
    if has_torch:
        np.testing.assert_array_equal(
            got, torch.xlogy(torch.tensor(x.numpy()), torch.tensor(y.numpy())).numpy()
        )
    assert got[0] == 0 and np.isnan(got[1]) and got[2] == -np.inf and got[3] == 0
    t = fg.tensor([0.0, 0.0, 2.0], requires_grad=True)
    fg.xlogy(t, fg.tensor([0.0, -1.0, 0.5])).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [0.0, 0.0, np.log(np.float32(0.5))])
    if has_torch:
        tt = torch.tensor([0.0, 0.0, 2.0], requires_grad=True)
        torch.xlogy(tt, torch.tensor([0.0, -1.0, 0.5])).sum().backward()
        np.testing.assert_array_equal(t.grad.numpy(), tt.grad.numpy())
    np.testing.assert_allclose(fg.xlogy(2.0, fg.tensor([3.0])).numpy(), [2 * np.log(3.0)], rtol=1e-6)
    np.testing.assert_allclose(fg.xlogy(fg.tensor([3.0]), 2.0).numpy(), [3 * np.log(2.0)], rtol=1e-6)
    assert fg.xlogy(fg.tensor([1, 2]), fg.tensor([2, 3])).dtype == fg.float32


def test_float_power():
    x, e = rand(3, low=0.5, high=2), rand(3)
    out = check_op(lambda T, a, b: T.float_power(a, b), x, e)
    np.testing.assert_allclose(out.detach().numpy(), np.power(x, e))
    for T in modules():
        assert T.float_power(T.tensor([1.0, 2.0]), 2).dtype == T.float64
        assert T.tensor([2, 3]).float_power(T.tensor(0.5)).dtype == T.float64
    check_op(lambda T, a: a.float_power(3), x)


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
def test_divide_rounding_modes(mode):
    a = np.array([7.0, -7.0, 7.5, -7.5, 1.0, 0.0, 5.0])
    b = np.array([2.0, 2.0, -2.0, -2.0, 0.1, 3.0, -0.0])
    with np.errstate(divide="ignore"):
        expected = {None: a / b, "trunc": np.trunc(a / b), "floor": np.floor_divide(a, b)}[mode]
    for dt in (fg.float32, fg.float64):
        got = fg.divide(fg.tensor(a, dtype=dt), fg.tensor(b, dtype=dt), rounding_mode=mode)
        assert got.dtype == dt
        np.testing.assert_allclose(
            got.numpy(), expected.astype(np.float32 if dt == fg.float32 else np.float64), rtol=1e-6
        )
        if has_torch:
            tdt = torch.float32 if dt == fg.float32 else torch.float64
            ref = torch.divide(torch.tensor(a, dtype=tdt), torch.tensor(b, dtype=tdt), rounding_mode=mode)
            np.testing.assert_array_equal(got.numpy(), ref.numpy())
    ia, ib = np.array([7, -7, 7, -7, 0]), np.array([2, 2, -2, -2, 3])
    for T in modules():
        got = T.div(T.tensor(ia), T.tensor(ib), rounding_mode=mode)
        if mode is None:
            assert got.dtype == T.float32
        else:
            assert got.dtype == T.int64
            ref = np.trunc(ia / ib) if mode == "trunc" else np.floor_divide(ia, ib)
            np.testing.assert_array_equal(got.numpy(), ref)
        got = T.tensor(ia).div(3, rounding_mode=mode)
        if mode is not None:
            np.testing.assert_array_equal(got.numpy(), np.trunc(ia / 3) if mode == "trunc" else ia // 3)
            # in place: the same values, written into the tensor itself
            t = T.tensor(ia)
            assert t.div_(3, rounding_mode=mode) is t
            np.testing.assert_array_equal(t.numpy(), got.numpy())
    # gradients: true division as usual, zero through rounding (but still recorded)
    x = rand(4, low=0.5, high=2)
    y = rand(4, low=0.5, high=2)
    out = check_op(lambda T, p, q: T.divide(p, q, rounding_mode=mode), x, y)
    assert out.requires_grad
    check_op(lambda T, p, q: p.divide(q, rounding_mode=mode) + p.div(q, rounding_mode=mode), x, y)


def test_divide_errors_and_aliases():
    raises_like_torch(
        lambda T: T.div(T.ones(2), 2, rounding_mode="round"),
        RuntimeError,
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'",
    )
    x, y = rand(3), rand(3)
    check_op(lambda T, a, b: T.subtract(a, b, alpha=2) + a.subtract(b), x, y)
    check_op(lambda T, a, b: T.multiply(a, b), x, y)


# ----------------------------------------------------------------------------- reductions


@pytest.mark.parametrize("dim", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_nansum_nanmean(dim, keepdim):
    x = rand(3, 4)
    x[0, 1] = x[2, 3] = x[1, 1] = np.nan
    np_dim = dim if not isinstance(dim, tuple) else tuple(dim)
    out = fg.nansum(fg.tensor(x), dim, keepdim)
    np.testing.assert_allclose(out.numpy(), np.nansum(x, axis=np_dim, keepdims=keepdim), rtol=1e-12)
    out = fg.tensor(x).nanmean(dim, keepdim)
    np.testing.assert_allclose(out.numpy(), np.nanmean(x, axis=np_dim, keepdims=keepdim), rtol=1e-12)
    mask = np.isnan(x)
    for name in ("nansum", "nanmean"):
        t = fg.tensor(x, requires_grad=True)
        getattr(t, name)(dim, keepdim).sum().backward()
        if has_torch:
            tt = torch.tensor(x, requires_grad=True)
            getattr(tt, name)(dim, keepdim).sum().backward()
            np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), rtol=1e-12)
        assert np.all(t.grad.numpy()[mask] == 0) and np.all(t.grad.numpy()[~mask] > 0)
    clean = rand(2, 3)
    check_op(lambda T, a: T.nansum(a, 1) * T.nanmean(a, 0).sum(), clean)
    compare_float32(lambda T, a: T.nanmean(a, 0), x)
    assert fg.nansum(fg.tensor([1, 2])).dtype == fg.int64


def test_nanmean_errors():
    raises_like_torch(
        lambda T: T.nanmean(T.tensor([1, 2])),
        RuntimeError,
        "nanmean(): expected input to have floating point or complex dtype but got Long",
    )


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
def test_count_nonzero(dim):
    x = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, -3.0]])
    got = fg.count_nonzero(fg.tensor(x), dim)
    assert got.dtype == fg.int64
    np.testing.assert_array_equal(got.numpy(), np.count_nonzero(x, axis=dim))
    np.testing.assert_array_equal(fg.tensor(x).count_nonzero(dim).numpy(), np.count_nonzero(x, axis=dim))


# ----------------------------------------------------------------------------- differences and integrals


@settings(max_examples=30, deadline=None)
@given(shape=shapes(min_dims=1, max_dims=3, max_side=5), data=st.data())
def test_diff(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.integers(0, 3))
    x = data.draw(arrays(shape))
    use_pre = data.draw(st.booleans())
    pre_shape = list(shape)
    pre_shape[dim] = 2
    pre = data.draw(arrays(tuple(pre_shape)))
    args = (x, pre) if use_pre else (x,)

    def fn(T, a, *p):
        return T.diff(a, n, dim, prepend=p[0] if p else None)

    out = check_op(fn, *args)
    expected = np.diff(x, n, axis=dim, prepend=pre) if use_pre else np.diff(x, n, axis=dim)
    np.testing.assert_allclose(out.detach().numpy(), expected, atol=1e-12)


def test_diff_scalar_append_bool_and_errors():
    x = rand(2, 3)
    out = check_op(lambda T, a: a.diff(dim=0, append=T.ones(1, 3, dtype=a.dtype)), x)
    np.testing.assert_allclose(out.detach().numpy(), np.diff(x, axis=0, append=1.0))
    raises_like_torch(
        lambda T: T.diff(T.ones(3), append=T.tensor(1.0)),
        RuntimeError,
        "diff expects prepend or append to be the same dimension as input",
    )
    assert fg.diff(fg.ones(3), 0, prepend=fg.ones(2)).shape == (3,)
    b = np.array([True, False, False, True])
    np.testing.assert_array_equal(fg.diff(fg.tensor(b)).numpy(), np.diff(b))
    raises_like_torch(
        lambda T: T.diff(T.tensor(1.0)), RuntimeError, "diff expects input to be at least one-dimensional"
    )
    raises_like_torch(lambda T: T.diff(T.ones(3), -1), RuntimeError, "order must be non-negative but got -1")


@pytest.mark.parametrize(
    "shape,dim", [((5,), -1), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), -2), ((0,), 0), ((3, 1), 1)]
)
def test_trapezoid(shape, dim):
    y = rand(*shape)
    out = check_op(lambda T, a: T.trapezoid(a, dim=dim), y)
    np.testing.assert_allclose(out.detach().numpy(), np.trapezoid(y, axis=dim), atol=1e-12)
    out = check_op(lambda T, a: T.trapz(a, dx=0.5, dim=dim), y)
    np.testing.assert_allclose(out.detach().numpy(), np.trapezoid(y, dx=0.5, axis=dim), atol=1e-12)
    xs = np.sort(rand(shape[dim]))
    out = check_op(lambda T, a, s: T.trapezoid(a, s, dim=dim), y, xs)
    np.testing.assert_allclose(out.detach().numpy(), np.trapezoid(y, xs, axis=dim), atol=1e-12)
    full_x = np.sort(rand(*shape), axis=dim)
    out = check_op(lambda T, a, s: T.trapezoid(a, s, dim=dim), y, full_x)
    np.testing.assert_allclose(out.detach().numpy(), np.trapezoid(y, full_x, axis=dim), atol=1e-12)
    out = check_op(lambda T, a, s: T.cumulative_trapezoid(a, s, dim=dim), y, xs)
    check_op(lambda T, a: T.cumulative_trapezoid(a, dx=2.0, dim=dim), y)
    if shape[dim] > 1:
        last = out.detach().numpy().take(-1, axis=dim)
        np.testing.assert_allclose(last, np.trapezoid(y, xs, axis=dim), atol=1e-12)


def test_trapezoid_errors():
    raises_like_torch(
        lambda T: T.trapezoid(T.ones(3), T.ones(4)),
        RuntimeError,
        "trapezoid: There must be one `x` value for each sample point",
    )
    raises_like_torch(
        lambda T: T.trapezoid(T.tensor(1.0)),
        IndexError,
        "Dimension specified as -1 but tensor has no dimensions",
    )


# ----------------------------------------------------------------------------- products


@pytest.mark.parametrize(
    "sa,sb,dim",
    [
        ((3,), (3,), None),
        ((4, 3), (4, 3), 1),
        ((3, 2), (3, 1), 0),
        ((2, 3, 5), (1, 3, 5), -2),
        ((2, 4, 3), (2, 4, 3), -1),
    ],
)
def test_cross(sa, sb, dim):
    a, b = rand(*sa), rand(*sb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = check_op(lambda T, x, y: T.cross(x, y, dim=dim), a, b)
    np_axis = dim if dim is not None else 0
    np.testing.assert_allclose(
        out.detach().numpy(), np.cross(*np.broadcast_arrays(a, b), axis=np_axis), atol=1e-12
    )
    d = -1 if dim is None else dim
    check_op(lambda T, x, y: T.linalg.cross(x, y, dim=d), a, b)
    check_op(lambda T, x, y: x.cross(y, d), a, b)


def test_cross_errors_and_warning():
    raises_like_torch(
        lambda T: T.linalg.cross(T.ones(2, 4), T.ones(2, 4)),
        RuntimeError,
        "linalg.cross: inputs dimension -1 must have length 3. Got 4 and 4",
    )
    raises_like_torch(
        lambda T: T.linalg.cross(T.ones(3), T.ones(2, 3)),
        RuntimeError,
        "linalg.cross: inputs must have the same number of dimensions.",
    )
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg is deprecated"):
        fg.cross(fg.ones(3), fg.ones(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_like_torch(
            lambda T: T.cross(T.ones(2, 4), T.ones(2, 4)), RuntimeError, "no dimension of size 3 in input"
        )


@pytest.mark.parametrize(
    "sa,sb", [((2, 3), (4, 1)), ((3,), (2,)), ((2, 2), (2, 3, 2)), ((), (3,)), ((2, 0), (3, 2))]
)
def test_kron(sa, sb):
    a, b = rand(*sa), rand(*sb)
    out = check_op(lambda T, x, y: T.kron(x, y), a, b)
    np.testing.assert_allclose(out.detach().numpy(), np.kron(a, b), atol=1e-12)
    check_op(lambda T, x, y: x.kron(y), a, b)


@pytest.mark.parametrize(
    "sa,sb,dims",
    [
        ((3, 4, 5), (4, 5, 2), 2),
        ((3, 4), (4, 2), 1),
        ((2, 3), (4,), 0),
        ((3, 4, 5), (5, 3), ([0, 2], [1, 0])),
        ((2, 3), (3, 2), ([1], [0])),
        ((3, 4), (3, 4), 2),
    ],
)
def test_tensordot(sa, sb, dims):
    a, b = rand(*sa), rand(*sb)
    out = check_op(lambda T, x, y: T.tensordot(x, y, dims), a, b)
    np.testing.assert_allclose(out.detach().numpy(), np.tensordot(a, b, dims), atol=1e-12)
    compare_float32(lambda T, x, y: T.tensordot(x, y, dims), a, b)


def test_tensordot_errors():
    raises_like_torch(
        lambda T: T.tensordot(T.ones(2, 3), T.ones(4, 2), ([1], [0])),
        RuntimeError,
        "contracted dimensions need to match, but first has size 3 in dim 1 and second has size 4 in dim 0",
    )
    raises_like_torch(
        lambda T: T.tensordot(T.ones(2), T.ones(2), -1),
        RuntimeError,
        "tensordot expects dims >= 0, but got dims=-1",
    )


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, 0, math.inf, -math.inf])
def test_dist(p):
    a, b = rand(3, 2), rand(2)
    grad = p not in (0, 0.5)
    out = check_op(lambda T, x, y: T.dist(x, y, p), a, b, grad=grad)
    d = np.abs(a - b).reshape(-1)
    expected = {0: np.count_nonzero(d), math.inf: d.max(), -math.inf: d.min()}.get(p)
    if expected is None:
        expected = (d**p).sum() ** (1 / p)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)
    check_op(lambda T, x, y: x.dist(y, p), a, b, grad=grad)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.0, math.inf, 1.5])
@pytest.mark.parametrize(
    "sa,sb", [((4, 3), (5, 3)), ((2, 4, 3), (1, 2, 3)), ((3, 0), (2, 0)), ((0, 2), (3, 2))]
)
def test_cdist(p, sa, sb):
    a, b = rand(*sa), rand(*sb)
    out = check_op(lambda T, x, y: T.cdist(x, y, p), a, b, grad=p != 0.0)
    diff = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        expected = (diff != 0).sum(-1)
    elif math.isinf(p):
        expected = diff.max(-1, initial=0.0)
    else:
        expected = (diff**p).sum(-1) ** (1 / p)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-12)


def test_cdist_matrix_product_path_and_zero_distance():
    a, b = rand(30, 4), rand(27, 4)
    out = check_op(lambda T, x, y: T.cdist(x, y), a, b, atol=1e-9, rtol=1e-7)
    np.testing.assert_allclose(
        out.detach().numpy(), np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1)), rtol=1e-9
    )
    check_op(lambda T, x, y: T.cdist(x, y, compute_mode="donot_use_mm_for_euclid_dist"), a[:3], b[:2])
    x = fg.tensor(a[:3], requires_grad=True)
    fg.cdist(x, x.detach()).sum().backward()
    assert np.all(np.isfinite(x.grad.numpy()))
    compare_float32(lambda T, x, y: T.cdist(x, y), a, b, rtol=1e-4, atol=1e-4)


def test_cdist_errors():
    raises_like_torch(
        lambda T: T.cdist(T.ones(3), T.ones(2, 3)),
        RuntimeError,
        "cdist only supports at least 2D tensors, X1 got: 1D",
    )
    raises_like_torch(
        lambda T: T.cdist(T.ones(2, 3), T.ones(2, 4)),
        RuntimeError,
        "X1 and X2 must have the same number of columns. X1: 3 X2: 4",
    )
    raises_like_torch(
        lambda T: T.cdist(T.ones(2, 3), T.ones(2, 3), -1.0),
        RuntimeError,
        "cdist only supports non-negative p values",
    )


def _np_cov(x, correction=1, fw=None, aw=None):
    return np.cov(x, ddof=correction, fweights=fw, aweights=aw)


@pytest.mark.parametrize("shape", [(3, 5), (1, 4), (6,), (2, 2)])
@pytest.mark.parametrize("correction", [0, 1, 2])
def test_cov(shape, correction):
    x = rand(*shape)
    if correction >= shape[-1]:
        for T in modules():
            with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
                T.cov(T.tensor(x), correction=correction)
        return
    out = check_op(lambda T, a: T.cov(a, correction=correction), x)
    np.testing.assert_allclose(out.detach().numpy(), _np_cov(x, correction), rtol=1e-10)
    # Weights for which every degrees-of-freedom count below stays positive (the shapes'
    # last dims are at least 2, and the corrections below them): frequencies 1 to 3 and
    # analytic weights within a factor of three of one another.
    n = shape[-1]
    fw = RNG.integers(1, 4, n)
    aw = rand(n, low=0.5, high=1.5)
    out = check_op(lambda T, a, w: T.cov(a, correction=correction, fweights=T.tensor(fw), aweights=w), x, aw)
    np.testing.assert_allclose(out.detach().numpy(), _np_cov(x, correction, fw, aw), rtol=1e-10)
    out = check_op(lambda T, a: a.cov(fweights=T.tensor(fw)), x)
    np.testing.assert_allclose(out.detach().numpy(), _np_cov(x, 1, fw), rtol=1e-10)


def test_corrcoef():
    x = rand(3, 6)
    out = check_op(lambda T, a: T.corrcoef(a), x)
    np.testing.assert_allclose(out.detach().numpy(), np.corrcoef(x), rtol=1e-10)
    check_op(lambda T, a: a.corrcoef(), x[:2])
    compare_float32(lambda T, a: T.corrcoef(a), x)


def test_cov_errors():
    raises_like_torch(
        lambda T: T.cov(T.ones(2, 2, 2)),
        RuntimeError,
        "cov(): expected input to have two or fewer dimensions but got an input with 3 dimensions",
    )
    raises_like_torch(
        lambda T: T.cov(T.ones(2, 3), fweights=T.tensor([1.0, 2.0, 3.0])),
        RuntimeError,
        "cov(): expected fweights to have integral dtype but got fweights with Float dtype",
    )
    raises_like_torch(
        lambda T: T.cov(T.ones(2, 3), aweights=T.tensor([1.0, 2.0])),
        RuntimeError,
        "cov(): expected aweights to have the same numel as there are observations in the input but got 2 != 3",
    )
    raises_like_torch(
        lambda T: T.cov(T.ones(2, 3), fweights=T.tensor([1, -2, 3])),
        RuntimeError,
        "cov(): fweights cannot be negative",
    )


def test_trace():
    for shape in [(3, 3), (2, 4), (4, 2), (0, 3)]:
        x = rand(*shape)
        out = check_op(lambda T, a: T.trace(a), x)
        np.testing.assert_allclose(out.detach().numpy(), np.trace(x))
        check_op(lambda T, a: a.trace(), x)
    assert fg.trace(fg.ones(2, 2, dtype=fg.int64)).dtype == fg.int64
    raises_like_torch(
        lambda T: T.trace(T.ones(2, 2, 2)),
        RuntimeError,
        "trace: expected a matrix, but got tensor with dim 3",
    )


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 1, 4)])
@pytest.mark.parametrize("offset", [0, 1, -2])
@pytest.mark.parametrize("dims", [(-2, -1), (-1, -2), (0, 1), (0, -1)])
def test_diag_embed(shape, offset, dims):
    x = rand(*shape)
    out = check_op(lambda T, a: T.diag_embed(a, offset, *dims), x)
    n = shape[-1] + abs(offset)
    planes = np.zeros(shape[:-1] + (n, n))
    r = np.arange(shape[-1]) + max(-offset, 0)
    c = np.arange(shape[-1]) + max(offset, 0)
    planes[..., r, c] = x
    d1, d2 = (d % (len(shape) + 1) for d in dims)
    expected = np.moveaxis(planes, (-2, -1), (d1, d2))
    np.testing.assert_array_equal(out.detach().numpy(), expected)
    check_op(lambda T, a: a.diag_embed(offset, *dims), x)


def test_diag_embed_errors():
    raises_like_torch(
        lambda T: T.diag_embed(T.ones(2, 3), 0, 1, 1),
        RuntimeError,
        "diagonal dimensions cannot be identical 1, 1",
    )


# ----------------------------------------------------------------------------- einsum

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ba,ca", [(2, 3), (4, 3)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (2,)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->ji", [(3, 3, 2)]),
    ("iji->j", [(2, 4, 2)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("...ij->...ji", [(2, 3, 4)]),
    ("i...->...", [(3, 2, 2)]),
    ("b...,b...->b", [(2, 3), (2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ab,ab,ab->a", [(3, 2), (3, 2), (3, 2)]),
    ("Ab,bA->A", [(3, 2), (2, 3)]),
    ("ij,ij->ij", [(3, 1), (1, 4)]),
    ("i,ij->", [(0,), (0, 3)]),
    ("...,...", [(), (2,)]),
    ("", [()]),
    ("ijk,ijk->", [(2, 3, 4), (2, 3, 4)]),
    ("i j , j k -> i k", [(2, 3), (3, 2)]),
]


@pytest.mark.parametrize("equation,shapes_", EINSUM_CASES)
def test_einsum_matches_numpy_and_torch(equation, shapes_):
    arrs = [rand(*s) for s in shapes_]
    out = check_op(lambda T, *xs: T.einsum(equation, *xs), *arrs)
    np_eq = equation.replace(" ", "")
    if np_eq == "b...,b...->b":  # NumPy wants the summed ellipsis written out
        expected = np.einsum("b...,b...->b...", *arrs).reshape(arrs[0].shape[0], -1).sum(1)
    else:
        expected = np.einsum(np_eq, *arrs)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    check_op(lambda T, *xs: T.einsum(equation, list(xs)), *arrs)
    compare_float32(lambda T, *xs: T.einsum(equation, *xs), *arrs, rtol=1e-5, atol=1e-5)


def test_einsum_sublist_format():
    a, b = rand(2, 3), rand(3, 4)
    out = check_op(lambda T, x, y: T.einsum(x, [0, 1], y, [1, 2], [0, 2]), a, b)
    np.testing.assert_allclose(out.detach().numpy(), a @ b, rtol=1e-12)
    out = check_op(lambda T, x, y: T.einsum(x, [Ellipsis, 1], y, [1, 2]), a, b)
    np.testing.assert_allclose(out.detach().numpy(), a @ b, rtol=1e-12)


def test_einsum_second_order():
    a = fg.tensor(rand(2, 3), requires_grad=True)
    b = fg.tensor(rand(3, 3), requires_grad=True)
    assert gradcheck(lambda x, y: fg.einsum("ij,jj,jk->ik", x, y, y), (a, b))
    assert gradgradcheck(lambda x, y: fg.einsum("ij,jk->i", x, y), (a, b))


def _node_names(node, seen=None):
    seen = set() if seen is None else seen
    if node is None or id(node) in seen:
        return set()
    seen.add(id(node))
    names = {node.name()}
    for child, _ in node.next_functions:
        names |= _node_names(child, seen)
    return names


def test_einsum_large_contraction_uses_matmul():
    a = fg.randn(64, 128, dtype=fg.float64, requires_grad=True)
    b = fg.randn(2, 128, 96, dtype=fg.float64)
    out = fg.einsum("ik,bkj->bij", a, b)
    np.testing.assert_allclose(out.detach().numpy(), a.detach().numpy() @ b.numpy(), rtol=1e-10)
    assert "BmmBackward0" in _node_names(out.grad_fn)
    assert "MulBackward0" not in _node_names(out.grad_fn)


@pytest.mark.parametrize(
    "call,kind,message",
    [
        (
            lambda T: T.einsum("ij,jk->ik", T.ones(2, 3)),
            RuntimeError,
            "einsum(): fewer operands were provided than specified in the equation",
        ),
        (
            lambda T: T.einsum("ij->ij", T.ones(2, 3), T.ones(2)),
            RuntimeError,
            "einsum(): more operands were provided than specified in the equation",
        ),
        (
            lambda T: T.einsum("ijk->ij", T.ones(2, 3)),
            RuntimeError,
            "einsum(): the number of subscripts in the equation (3) does not match the number of dimensions (2) for operand 0 and no ellipsis was given",
        ),
        (
            lambda T: T.einsum("ij->ii", T.ones(2, 2)),
            RuntimeError,
            "einsum(): output subscript i appears more than once in the output",
        ),
        (
            lambda T: T.einsum("ij->k", T.ones(2, 2)),
            RuntimeError,
            "einsum(): output subscript k does not appear in the equation for any input operand",
        ),
        (
            lambda T: T.einsum("ii->i", T.ones(2, 3)),
            RuntimeError,
            "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 3 != 2",
        ),
        (
            lambda T: T.einsum("ij,jk->ik", T.ones(2, 3), T.ones(4, 2)),
            RuntimeError,
            "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3",
        ),
        (
            lambda T: T.einsum("...ij,...jk->...ik", T.ones(2, 2, 3), T.ones(3, 3, 2)),
            RuntimeError,
            "einsum(): dimension 0 covered by ellipsis in operand 1has size 3 which does not broadcast with previously seen ellipsis with size 2 for the respective dimension",
        ),
        (
            lambda T: T.einsum("...ij,...jk", T.ones(2, 3), T.ones(3)),
            RuntimeError,
            "einsum(): the number of subscripts in the equation (2) is more than the number of dimensions (1) for operand 1",
        ),
        (
            lambda T: T.einsum("i.j", T.ones(2, 3)),
            RuntimeError,
            "einsum(): found '.' for operand 0 that is not part of any ellipsis",
        ),
        (
            lambda T: T.einsum("i1", T.ones(2, 2)),
            RuntimeError,
            "einsum(): invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]",
        ),
        (
            lambda T: T.einsum("ij,jk", T.ones(2, 3), T.ones(3, 2, dtype=T.float64)),
            RuntimeError,
            "expected scalar type Float but found Double",
        ),
    ],
)
def test_einsum_errors(call, kind, message):
    raises_like_torch(call, kind, message)


# ----------------------------------------------------------------------------- linalg


@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, 0, math.inf, -math.inf, -1.5])
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_vector_norm(ord, dim, keepdim):
    x = rand(3, 4)
    grad = ord not in (0, 0.5)
    out = check_op(lambda T, a: T.linalg.vector_norm(a, ord, dim, keepdim), x, grad=grad)
    axis = dim if dim is not None else (0, 1)
    a = np.abs(x)
    if ord == 0:
        expected = (a != 0).sum(axis=axis, keepdims=keepdim).astype(float)
    elif math.isinf(ord):
        expected = a.max(axis=axis, keepdims=keepdim) if ord > 0 else a.min(axis=axis, keepdims=keepdim)
    else:
        expected = (a**ord).sum(axis=axis, keepdims=keepdim) ** (1 / ord)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10)
    compare_float32(lambda T, a: T.linalg.vector_norm(a, ord, dim, keepdim), x, rtol=1e-5)


def test_vector_norm_zero_vector_and_scalars():
    for ord in (2, 3, 1):
        t = fg.zeros(3, dtype=fg.float64, requires_grad=True)
        fg.linalg.vector_norm(t, ord).backward()
        np.testing.assert_array_equal(t.grad.numpy(), np.zeros(3))
    assert fg.linalg.vector_norm(fg.tensor(-3.0)).item() == 3.0
    assert fg.linalg.vector_norm(fg.ones(0)).item() == 0.0
    np.testing.assert_allclose(fg.linalg.vector_norm(fg.tensor([3.0, 4.0]), dtype=fg.float64).item(), 5.0)
    z = fg.tensor([3 + 4j, 0j])
    np.testing.assert_allclose(fg.linalg.vector_norm(z).item(), 5.0)


def test_vector_norm_errors():
    raises_like_torch(
        lambda T: T.linalg.vector_norm(T.tensor([1, 2])),
        RuntimeError,
        "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long",
    )
    raises_like_torch(
        lambda T: T.linalg.vector_norm(T.ones(0), math.inf),
        RuntimeError,
        "linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation does not have an identity",
    )


@pytest.mark.parametrize("ord", ["fro", 1, -1, math.inf, -math.inf])
@pytest.mark.parametrize("dim", [(-2, -1), (0, 2), (2, 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norm(ord, dim, keepdim):
    x = rand(3, 2, 4)
    out = check_op(lambda T, a: T.linalg.matrix_norm(a, ord, dim, keepdim), x)
    moved = np.moveaxis(x, dim, (-2, -1))
    expected = np.linalg.norm(moved, ord, axis=(-2, -1))
    if keepdim:
        for d in sorted(v % 3 for v in dim):
            expected = np.expand_dims(expected, d)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10)


def test_matrix_norm_svd_orders_and_errors():
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    for ord in ("nuc", 2, -2):
        for dim in ((-2, -1), (0, 2)):
            got = fg.linalg.matrix_norm(fg.tensor(a), ord, dim, keepdim=True).numpy()
            expected = np.linalg.norm(a, ord, axis=dim, keepdims=True)
            np.testing.assert_allclose(got, expected, rtol=1e-10)
    raises_like_torch(
        lambda T: T.linalg.matrix_norm(T.ones(3)),
        RuntimeError,
        "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.",
    )
    raises_like_torch(
        lambda T: T.linalg.matrix_norm(T.ones(2, 2), "abc"),
        RuntimeError,
        "linalg.matrix_norm: Order abc not supported.",
    )


@pytest.mark.parametrize(
    "shape,ord,dim",
    [
        ((5,), None, None),
        ((2, 3, 4), None, None),
        ((3, 4), None, None),
        ((3, 4), "fro", None),
        ((3, 4), 1, None),
        ((4,), 3, None),
        ((2, 3), 2, 1),
        ((2, 3, 4), math.inf, (1, 2)),
        ((2, 3, 4), None, (0, 2)),
    ],
)
def test_linalg_norm(shape, ord, dim):
    x = rand(*shape)
    out = check_op(lambda T, a: T.linalg.norm(a, ord, dim), x)
    np_x, axis = x, dim
    if ord is None and dim is None:
        np_x, axis = x.reshape(-1), None
    np.testing.assert_allclose(out.detach().numpy(), np.linalg.norm(np_x, ord, axis=axis), rtol=1e-10)


def test_linalg_norm_errors():
    raises_like_torch(
        lambda T: T.linalg.norm(T.ones(2, 3), 2, (0, 1, 2)),
        RuntimeError,
        "linalg.norm: If dim is specified, it must be of length 1 or 2. Got [0, 1, 2]",
    )
    raises_like_torch(
        lambda T: T.linalg.norm(T.ones(2, 3), "fro", 0),
        RuntimeError,
        "linalg.matrix_norm: dim must be a 2-tuple. Got 0",
    )
    raises_like_torch(
        lambda T: T.linalg.matrix_norm(T.ones(2, 3), 1, (0, 0)),
        RuntimeError,
        "linalg.matrix_norm: dims must be different. Got (0, 0)",
    )
    raises_like_torch(
        lambda T: T.linalg.vector_norm(T.ones(2, 3), 2, (0, 0)),
        RuntimeError,
        "dim 0 appears multiple times in the list of dims",
    )
    raises_like_torch(
        lambda T: T.linalg.vector_norm(T.ones(2, 3), "fro"),
        TypeError,
        "argument 'ord' (position 2) must be Number, not str",
    )
    raises_like_torch(
        lambda T: T.linalg.norm(T.ones(2, 2, 2), 2),
        RuntimeError,
        "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D.",
    )


def test_linalg_vecdot_matmul_diagonal():
    a, b = rand(3, 4), rand(2, 3, 4)
    out = check_op(lambda T, x, y: T.linalg.vecdot(x, y), a, b)
    np.testing.assert_allclose(out.detach().numpy(), (a * b).sum(-1), rtol=1e-12)
    check_op(lambda T, x, y: T.linalg.vecdot(x, y, dim=0), a, b[0])
    z1, z2 = fg.tensor([1j, 2.0]), fg.tensor([1j, 1.0])
    np.testing.assert_allclose(fg.linalg.vecdot(z1, z2).item(), np.vdot(z1.numpy(), z2.numpy()))
    check_op(lambda T, x, y: T.linalg.matmul(x, y), a, b.transpose(0, 2, 1)[0])
    m = rand(3, 4)
    out = check_op(lambda T, x: T.linalg.diagonal(x, offset=1), m)
    np.testing.assert_array_equal(out.detach().numpy(), np.diagonal(m, 1))


@st.composite
def einsum_problems(draw):
    letters = "abcdeA"
    sizes = {c: draw(st.integers(1, 3)) for c in letters}
    n_ops = draw(st.integers(1, 3))
    subs = [draw(st.lists(st.sampled_from(letters), min_size=0, max_size=4)) for _ in range(n_ops)]
    used = sorted({c for s in subs for c in s})
    out = draw(st.permutations(used).map(lambda p: p[: draw(st.integers(0, len(p)))]))
    eq = ",".join("".join(s) for s in subs) + "->" + "".join(out)
    arrs = [RNG.standard_normal([sizes[c] for c in s]) for s in subs]
    return eq, arrs


@settings(max_examples=60, deadline=None)
@given(einsum_problems())
def test_einsum_random_equations_match_numpy(problem):
    equation, arrs = problem
    out = check_op(lambda T, *xs: T.einsum(equation, *xs), *arrs, fd_atol=1e-4)
    np.testing.assert_allclose(out.detach().numpy(), np.einsum(equation, *arrs), rtol=1e-9, atol=1e-10)


INPLACE = [
    ("asinh_", (), -2.0, 2.0),
    ("arcsinh_", (), -2.0, 2.0),
    ("acosh_", (), 1.1, 3.0),
    ("arccosh_", (), 1.1, 3.0),
    ("atanh_", (), -0.9, 0.9),
    ("arctanh_", (), -0.9, 0.9),
    ("sinc_", (), -2.0, 2.0),
    ("erfc_", (), -2.0, 2.0),
    ("logit_", (), 0.1, 0.9),
    ("logit_", (0.2,), 0.1, 0.9),
    ("deg2rad_", (), -90.0, 90.0),
    ("rad2deg_", (), -2.0, 2.0),
    ("subtract_", (1.5,), -2.0, 2.0),
    ("float_power_", (2.5,), 0.5, 2.0),
]


@pytest.mark.parametrize("name,args,lo,hi", INPLACE)
def test_inplace_methods_match_out_of_place(name, args, lo, hi):
    x = rand(2, 3, low=lo, high=hi)

    def fn(T, a):
        y = a * 1.0
        assert getattr(y, name)(*args) is y
        return y

    if name in ("asinh_", "arcsinh_", "acosh_", "arccosh_", "atanh_", "arctanh_"):
        # torch records no derivative for these in-place forms; ferrograd does
        out = fn(fg, fg.tensor(x))
        assert gradcheck(lambda a: fn(fg, a), (fg.tensor(x, requires_grad=True),))
        if has_torch:
            ref = fn(torch, torch.tensor(x))
            np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12)
    else:
        out = check_op(fn, x)
    with fg.no_grad():
        expected = getattr(fg, name.rstrip("_"))(fg.tensor(x), *args)
    np.testing.assert_array_equal(out.detach().numpy(), expected.numpy())


def test_inplace_tensor_arguments_and_views():
    x, w = rand(3, low=0.5, high=2), rand(3, low=0.5, high=2)
    check_op(lambda T, a, b: (a * 1.0).xlogy_(b), x, w)
    check_op(lambda T, a, b: (a * 1.0).divide_(b, rounding_mode="trunc") + a, x, w)
    check_op(lambda T, a, b: (a * 1.0).subtract_(b, alpha=2), x, w)

    def row_inplace(T, a):
        y = a * 1.0
        y[0].logit_()
        y[1].sinc_()
        return y

    check_op(row_inplace, rand(2, 3, low=0.1, high=0.9))
    for T in modules():
        i = T.tensor([7, -7, 6])
        i.div_(2, rounding_mode="floor")
        np.testing.assert_array_equal(i.numpy(), [3, -4, 3])
        f = T.tensor([7.0, -7.0])
        f.div_(2, rounding_mode="trunc")
        np.testing.assert_array_equal(f.numpy(), [3.0, -3.0])


def test_inplace_errors():
    raises_like_torch(
        lambda T: T.tensor([1, 2]).asinh_(),
        RuntimeError,
        "result type Float can't be cast to the desired output type Long",
    )
    raises_like_torch(
        lambda T: T.tensor([1, 2]).subtract_(1.5),
        RuntimeError,
        "result type Float can't be cast to the desired output type Long",
    )
    raises_like_torch(
        lambda T: T.ones(2).float_power_(2),
        RuntimeError,
        "the base given to float_power_ has dtype Float but the operation's result requires dtype Double",
    )
    raises_like_torch(
        lambda T: T.ones(3).xlogy_(T.ones(2, 3)),
        RuntimeError,
        "output with shape [3] doesn't match the broadcast shape [2, 3]",
    )
    raises_like_torch(
        lambda T: T.ones(2, requires_grad=True).sinc_(),
        RuntimeError,
        "a leaf Variable that requires grad is being used in an in-place operation.",
    )


def test_complex_cov_corrcoef_and_products():
    x = rand(3, 5) + 1j * rand(3, 5)
    fw = np.array([1, 2, 0, 1, 3])
    for fn in (
        lambda T, a: T.cov(a),
        lambda T, a: T.cov(a, fweights=T.tensor(fw)),
        lambda T, a: T.corrcoef(a),
        lambda T, a: T.einsum("ij,kj->ik", a, a.conj()),
        lambda T, a: T.kron(a[0], a[1]),
        lambda T, a: T.tensordot(a, a, ([1], [1])),
        lambda T, a: T.linalg.vector_norm(a, 3, dim=1),
    ):
        got = fn(fg, fg.tensor(x)).numpy()
        if has_torch:
            np.testing.assert_allclose(got, fn(torch, torch.tensor(x)).numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fg.cov(fg.tensor(x)).numpy(), np.cov(x), rtol=1e-10)
    np.testing.assert_allclose(fg.corrcoef(fg.tensor(x)).numpy(), np.corrcoef(x), rtol=1e-10)


def test_more_argument_errors():
    raises_like_torch(
        lambda T: T.nansum(T.ones(2, dtype=T.complex64)),
        RuntimeError,
        "nansum on CPU does not support complex inputs",
    )
    raises_like_torch(
        lambda T: T.nanmean(T.ones(2, dtype=T.complex64)),
        RuntimeError,
        "nansum on CPU does not support complex inputs",
    )
    raises_like_torch(
        lambda T: T.meshgrid(T.ones(2), T.ones(2, dtype=T.float64), indexing="ij"),
        RuntimeError,
        "meshgrid expects all tensors to have the same dtype",
    )
    raises_like_torch(
        lambda T: T.cdist(T.ones(2, 3), T.ones(2, 3, dtype=T.float64)),
        RuntimeError,
        "expected scalar type Float but found Double",
    )
    raises_like_torch(
        lambda T: T.tensordot(T.ones(3, 4), T.ones(3, 4), 1),
        RuntimeError,
        "contracted dimensions need to match, but first has size 4 in dim -1 and second has size 3 in dim 0",
    )


def test_tensordot_tensor_dims():
    a, b = rand(3, 4), rand(3, 4)
    for T in modules():
        got = T.tensordot(T.tensor(a), T.tensor(b), T.tensor([[0], [0]]))
        np.testing.assert_allclose(got.numpy(), np.tensordot(a, b, ([0], [0])), rtol=1e-12)
        got = T.tensordot(T.tensor(a), T.tensor(b.T.copy()), T.tensor(1))
        np.testing.assert_allclose(got.numpy(), a @ b.T, rtol=1e-12)

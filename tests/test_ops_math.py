"""The everyday elementwise API against finite differences and torch."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import arrays, broadcastable_pair, check_op, has_torch, shapes

if has_torch:
    import torch
    import torch.nn.functional as F

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is the reference")


def act(name, **kw):
    """An activation: ferrograd's `_C` function or torch's `nn.functional` one."""
    return lambda T, a: (getattr(fg._C, name) if T is fg else getattr(F, name))(a, **kw)


UNARY = {
    "exp2": lambda T, a: a.exp2(),
    "expm1": lambda T, a: T.expm1(a),
    "log2": lambda T, a: (a * a + 0.5).log2(),
    "log10": lambda T, a: (a * a + 0.5).log10(),
    "log1p": lambda T, a: (a * a).log1p(),
    "reciprocal": lambda T, a: (a * a + 0.5).reciprocal(),
    "rsqrt": lambda T, a: (a * a + 0.5).rsqrt(),
    "square": lambda T, a: a.square(),
    "sinh": lambda T, a: a.sinh(),
    "cosh": lambda T, a: T.cosh(a),
    "asin": lambda T, a: (a / 4).asin(),
    "acos": lambda T, a: (a / 4).acos(),
    "atan": lambda T, a: a.atan(),
    "erf": lambda T, a: a.erf(),
    "frac": lambda T, a: (a * 0.3 + 0.1).frac() * a,
    "floor": lambda T, a: a.floor() + a,
    "ceil": lambda T, a: a.ceil() * a,
    "trunc": lambda T, a: T.trunc(a) + a,
    "sign": lambda T, a: a.sign() * a,
    "nan_to_num": lambda T, a: a.log().nan_to_num(nan=0.5, neginf=-3.0),
    "softplus": act("softplus"),
    "softplus_beta": act("softplus", beta=2.0, threshold=2.0),  # switch at x = 1, kept away from below
    "gelu": act("gelu"),
    "gelu_tanh": act("gelu", approximate="tanh"),
    "silu": act("silu"),
    "leaky_relu": act("leaky_relu", negative_slope=0.2),
    "elu": act("elu", alpha=0.7),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_unary(name, data):
    a = data.draw(arrays(data.draw(shapes())))
    # Keep away from kinks and integer jumps where finite differences fail.
    a = np.where(np.abs(a - np.round(a)) < 1e-2, a + 0.05, a)
    a = np.where(np.abs(a * 0.3 + 0.1 - np.round(a * 0.3 + 0.1)) < 1e-2, a + 0.05, a)
    check_op(UNARY[name], a, fd_atol=1e-4)


# float32 runs its own kernels (vectorised erf, exp, tanh and ln(1 + z)).
FLOAT32_UNARY = ["erf", "softplus", "softplus_beta", "gelu", "gelu_tanh", "silu", "leaky_relu", "elu"]


@needs_torch
@pytest.mark.parametrize("name", FLOAT32_UNARY)
def test_float32_unary_matches_torch(name):
    rng = np.random.default_rng(0)
    a = np.concatenate(
        [
            np.linspace(-12, 12, 4001),
            rng.standard_normal(5000) * 3,
            [0.0, -0.0, 1e-30, -1e-30, 1e-7, 88.0, -88.0, 1e4, -1e4, np.inf, -np.inf, np.nan],
        ]
    ).astype(np.float32)
    cotangent = rng.standard_normal(a.shape).astype(np.float32)

    def run(T, values, cotangent):
        x = T.tensor(values, requires_grad=True)
        y = UNARY[name](T, x)
        y.backward(T.tensor(cotangent))
        return y.detach().numpy(), x.grad.numpy()

    (ours, our_grad), (theirs, their_grad) = run(fg, a, cotangent), run(torch, a, cotangent)
    # torch's AVX-512 kernels give NaN for gelu(±inf) where its scalar path
    # (one element) gives the limits: infinite inputs are compared with that.
    for i in np.flatnonzero(np.isinf(a)):
        single = run(torch, a[i : i + 1], cotangent[i : i + 1])
        theirs[i], their_grad[i] = single[0][0], single[1][0]
    assert ours.dtype == np.float32 and our_grad.dtype == np.float32
    # Absolute error grows with |x| where a result is x times a sum that
    # cancels (gelu's 1 + erf near -inf); both libraries round there.
    scale = 1 + np.abs(a)
    for got, want, rtol, atol in ((ours, theirs, 4e-7, 3e-7), (our_grad, their_grad, 2e-6, 1e-6)):
        with np.errstate(invalid="ignore"):
            close = np.abs(got - want) <= rtol * np.abs(want) + atol * scale
        agree = close | (got == want) | (np.isnan(got) & np.isnan(want))
        assert np.all(agree), (a[~agree], got[~agree], want[~agree])


BINARY = {
    "atan2": lambda T, a, b: T.atan2(a, b),
    "hypot": lambda T, a, b: a.hypot(b),
    "remainder": lambda T, a, b: a % (b * b + 0.7),
    "remainder_scalar": lambda T, a, b: (a % 1.3) * b,
    "fmod": lambda T, a, b: T.fmod(a, b * b + 0.7),
    "lerp": lambda T, a, b: a.lerp(b, 0.3),
    "lerp_tensor": lambda T, a, b: T.lerp(a, b, (a * b).sigmoid()),
    "addcmul": lambda T, a, b: a.addcmul(b, b.exp(), value=0.5),
    "addcdiv": lambda T, a, b: T.addcdiv(a, b, b * b + 1, value=-2),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_binary(name, data):
    sa, sb = data.draw(broadcastable_pair())
    a, b = data.draw(arrays(sa)), data.draw(arrays(sb))
    if name in ("atan2", "hypot"):
        a = np.where(np.abs(a) < 0.1, 0.5, a)
    if name.startswith("remainder") or name == "fmod":
        # Away from the jumps of the sawtooth.
        q = (
            a / (np.broadcast_to(b, np.broadcast_shapes(sa, sb)) ** 2 + 0.7)
            if name != "remainder_scalar"
            else a / 1.3
        )
        if np.any(np.abs(q - np.round(q)) < 1e-2):
            return
    check_op(BINARY[name], a, b, fd_atol=1e-4)


@needs_torch
@pytest.mark.parametrize("op", ["remainder", "floor_divide", "fmod"])
def test_division_family_matches_torch(op):
    vals = [-7.5, -3.0, -1.0, -0.0, 0.0, 1.0, 2.5, 7.0]
    for x in vals:
        for y in [-2.0, -0.5, 0.5, 2.0, 3.0]:
            ours = getattr(fg, op)(fg.tensor([x]), fg.tensor([y]))
            theirs = getattr(torch, op)(torch.tensor([x]), torch.tensor([y]))
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    a, b = np.arange(-7, 8), np.array([-3, -2, 2, 3])
    for y in b:
        ours = getattr(fg, op)(fg.tensor(a), int(y))
        theirs = getattr(torch, op)(torch.tensor(a), int(y))
        assert ours.dtype == fg.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        getattr(fg, op)(fg.tensor([1]), 0)


def test_operators_and_inplace_forms():
    x = fg.tensor([5.0, -5.0, 7.5])
    assert (x % 3).tolist() == [2.0, 1.0, 1.5]
    assert (x // 2).tolist() == [2.0, -3.0, 3.0]
    assert (10 // fg.tensor([3])).tolist() == [3]
    assert (7 % fg.tensor([4])).tolist() == [3]
    y = x.clone()
    y %= 3
    y //= 1
    assert y.tolist() == [2.0, 1.0, 1.0]
    z = fg.tensor([2.0, 3.0])
    z **= 2
    assert z.tolist() == [4.0, 9.0]
    w = fg.tensor([0.5, 2.0])
    assert w.reciprocal_() is w and w.tolist() == [2.0, 0.5] and w._version == 1
    w.floor_().add_(0.25).exp2_()
    assert np.allclose(w.numpy(), [2**2.25, 2**0.25])


def test_integers_compute_in_float32():
    i = fg.arange(1, 4)
    for name in ("exp2", "log2", "log1p", "rsqrt", "sinh", "atan", "erf"):
        assert getattr(i, name)().dtype == fg.float32
    for name in ("floor", "ceil", "trunc", "sign", "square"):
        assert getattr(i, name)().dtype == fg.int64
    assert fg.atan2(i, i).dtype == fg.float32
    assert i.sign().tolist() == [1, 1, 1] and (-i).sign().tolist() == [-1, -1, -1]


def test_sign_of_a_zero_or_nan_is_positive_zero():
    out = fg.tensor([-0.0, 0.0, float("nan"), -2.5]).sign().tolist()
    assert [np.copysign(1.0, v) for v in out[:3]] == [1.0, 1.0, 1.0]
    assert out == [0.0, 0.0, 0.0, -1.0]
    assert fg.tensor([float("nan")], dtype=fg.float64).sgn().tolist() == [0.0]


@needs_torch
def test_bitwise():
    a, b = np.array([0, 1, 6, -7, 12]), np.array([3, 5, 2, 9, -1])
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        ours = getattr(fg, name)(fg.tensor(a), fg.tensor(b))
        np.testing.assert_array_equal(
            ours.numpy(), getattr(torch, name)(torch.tensor(a), torch.tensor(b)).numpy()
        )
    np.testing.assert_array_equal(fg.tensor(a).bitwise_not().numpy(), (~torch.tensor(a)).numpy())
    assert fg.bitwise_and(fg.tensor([True, False]), fg.tensor([True, True])).tolist() == [True, False]
    with pytest.raises(RuntimeError) as ours:
        fg.ones(2).bitwise_and(fg.ones(2))
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(2).bitwise_and(torch.ones(2))
    assert str(ours.value) == str(theirs.value)


@needs_torch
def test_isclose_allclose_equal():
    nan, inf = float("nan"), float("inf")
    a = [1.0, 1.0 + 1e-6, nan, inf, -inf, 0.0, 1e-9]
    b = [1.0, 1.0, nan, inf, inf, 1e-7, 0.0]
    for equal_nan in (False, True):
        ours = fg.isclose(fg.tensor(a), fg.tensor(b), equal_nan=equal_nan)
        theirs = torch.isclose(torch.tensor(a), torch.tensor(b), equal_nan=equal_nan)
        assert ours.tolist() == theirs.tolist()
    assert fg.allclose(fg.ones(3), fg.ones(3) + 1e-7)
    assert not fg.allclose(fg.ones(3), fg.ones(3) * 1.1)
    assert fg.equal(fg.ones(2), fg.ones(2)) and not fg.equal(fg.ones(2), fg.ones(3))


@needs_torch
def test_grad_fn_names():
    cases = {
        "Exp2Backward0": lambda T, x: x.exp2(),
        "RsqrtBackward0": lambda T, x: x.rsqrt(),
        "FloorBackward0": lambda T, x: x.floor(),
        "SignBackward0": lambda T, x: x.sign(),
        "PowBackward0": lambda T, x: x.square(),
        "Atan2Backward0": lambda T, x: T.atan2(x, x),
        "RemainderBackward0": lambda T, x: x % 2,
        "RemainderBackward1": lambda T, x: x % x,
        "LerpBackward0": lambda T, x: x.lerp(x * 2, 0.5),
        "AddcmulBackward0": lambda T, x: x.addcmul(x, x),
        "GeluBackward0": lambda T, x: fg._C.gelu(x) if T is fg else F.gelu(x),
        "SiluBackward0": lambda T, x: fg._C.silu(x) if T is fg else F.silu(x),
    }
    for name, op in cases.items():
        assert op(fg, fg.ones(2, requires_grad=True)).grad_fn.name() == name
        assert type(op(torch, torch.ones(2, requires_grad=True)).grad_fn).__name__ == name


def test_second_order_gelu():
    x = fg.tensor([0.3, -1.2], dtype=fg.float64, requires_grad=True)
    (g,) = fg.autograd.grad(fg._C.gelu(x).sum(), x, create_graph=True)
    g.sum().backward()
    if has_torch:
        tx = torch.tensor([0.3, -1.2], dtype=torch.float64, requires_grad=True)
        (tg,) = torch.autograd.grad(F.gelu(tx).sum(), tx, create_graph=True)
        tg.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


@settings(max_examples=30, deadline=None)
@given(
    shape=shapes(max_dims=3),
    exponent=st.sampled_from([-2, -1, -0.5, 0, 0.5, 1, 2, 3, 3.0, 1.7, -3]),
    data=st.data(),
)
def test_power_by_a_number(shape, exponent, data):
    # The common exponents run as products, roots and reciprocals, others
    # as powf; the gradient is one pass outside create_graph.
    a = data.draw(arrays(shape, low=0.3, high=2.0))
    out = check_op(lambda T, x: x**exponent, a)
    np.testing.assert_allclose(out.detach().numpy(), np.power(a, float(exponent)), rtol=1e-14)
    x = fg.tensor(a, requires_grad=True)
    assert fg.autograd.gradgradcheck(lambda t: t**exponent, (x,))
    f32 = fg.tensor(a.astype(np.float32)) ** exponent
    assert f32.dtype == fg.float32
    np.testing.assert_allclose(f32.numpy(), np.power(a.astype(np.float32), np.float32(exponent)), rtol=2e-6)

"""Gradients at the edge points of ``xlogy``, ``special.xlog1py``, ``special.entr`` and
``logit``, where ferrograd once gave 0 (or a finite number) and PyTorch's formulas give ``inf``
or NaN: ``xlogy(grad, y)`` for ``x`` and ``grad * x / y`` for ``y`` (NaN at ``x = y = 0``),
``-(1 + log x)`` for ``entr`` and ``grad / (x (1 - x))`` for ``logit``, NaN outside ``[0, 1]``
or 0 outside ``[eps, 1 - eps]``. The expected numbers are PyTorch 2.13's; each test runs on
ferrograd and, when importable, on torch. Signs of zeros are not compared."""

import math

import pytest

import ferrograd as fg

from helpers import has_torch
from helpers import torch as ref_torch

LIBS = [pytest.param(fg, id="ferrograd")]
if has_torch:
    LIBS.append(pytest.param(ref_torch, id="torch"))

DTYPES = ["float32", "float64"]
inf, nan = math.inf, math.nan


def assert_close(actual, expected, rel):
    assert len(actual) == len(expected), (actual, expected)
    for a, e in zip(actual, expected):
        if math.isnan(e):
            assert math.isnan(a), (actual, expected)
        elif math.isinf(e):
            assert a == e, (actual, expected)
        else:
            assert a == pytest.approx(e, rel=rel, abs=rel), (actual, expected)


def tolerance(dtype):
    return 1e-6 if dtype == "float32" else 1e-12


def first_and_second(lib, f, *inputs):
    """The gradients of ``f(*inputs).sum()`` and those of the sum of those gradients."""
    out = f(*inputs)
    firsts = lib.autograd.grad(out.sum(), inputs, create_graph=True)
    seconds = lib.autograd.grad(sum(g.sum() for g in firsts), inputs)
    return out, firsts, seconds


# x, y pairs: (0, inf), (0, 0), (0, -1), (0, -inf), (0, nan), (2, 0), (2, -1), (0, 2), (2, inf), (-1, 3)
XS = [0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 0.0, 2.0, -1.0]
YS = [inf, 0.0, -1.0, -inf, nan, 0.0, -1.0, 2.0, inf, 3.0]
LN3 = math.log(3.0)
XLOGY_VALUE = [0.0, 0.0, 0.0, 0.0, nan, -inf, nan, 0.0, inf, -LN3]
XLOGY_GRAD_X = [inf, 0.0, 0.0, 0.0, nan, -inf, nan, math.log(2.0), inf, LN3]
XLOGY_GRAD_Y = [0.0, nan, 0.0, 0.0, nan, inf, -2.0, 0.0, 0.0, -1 / 3]
XLOGY_SECOND_X = [0.0, inf, -1.0, 0.0, nan, inf, -1.0, 0.5, 0.0, 1 / 3]
XLOGY_SECOND_Y = [0.0, nan, 0.0, 0.0, nan, nan, -3.0, 0.5, 0.0, 4 / 9]


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, shift", [("xlogy", 0.0), ("xlog1py", 1.0)])
def test_xlogy_and_xlog1py_gradients_at_zero_and_infinity(lib, dtype, name, shift):
    f = lib.xlogy if name == "xlogy" else lib.special.xlog1py
    dt = getattr(lib, dtype)
    x = lib.tensor(XS, dtype=dt, requires_grad=True)
    y = lib.tensor([v - shift for v in YS], dtype=dt, requires_grad=True)
    out, (gx, gy), (ggx, ggy) = first_and_second(lib, f, x, y)
    assert out.dtype == gx.dtype == gy.dtype == ggx.dtype == ggy.dtype == dt
    rel = tolerance(dtype)
    assert_close(out.tolist(), XLOGY_VALUE, rel)
    assert_close(gx.tolist(), XLOGY_GRAD_X, rel)
    assert_close(gy.tolist(), XLOGY_GRAD_Y, rel)
    assert_close(ggx.tolist(), XLOGY_SECOND_X, rel)
    assert_close(ggy.tolist(), XLOGY_SECOND_Y, rel)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_xlogy_gradients_broadcast_and_promote(lib, name):
    f = lib.xlogy if name == "xlogy" else lib.special.xlog1py
    shift = 0.0 if name == "xlogy" else 1.0
    x = lib.tensor([[0.0, 1.0], [2.0, 0.0]], requires_grad=True)
    y = lib.tensor([0.0 - shift, 3.0 - shift], dtype=lib.float64, requires_grad=True)
    out = f(x, y)
    out.sum().backward()
    assert out.dtype == y.grad.dtype == lib.float64 and x.grad.dtype == lib.float32
    assert_close(x.grad.flatten().tolist(), [0.0, LN3, -inf, LN3], 1e-6)
    assert_close(y.grad.tolist(), [nan, 1 / 3], 1e-12)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_entr_gradient_is_infinite_at_zero_and_nan_below(lib, dtype):
    dt = getattr(lib, dtype)
    x = lib.tensor([0.0, -1.0, 0.5, 1.0, inf, nan, -inf, 2.0], dtype=dt, requires_grad=True)
    out, (g,), (gg,) = first_and_second(lib, lib.special.entr, x)
    assert out.dtype == g.dtype == gg.dtype == dt
    rel = tolerance(dtype)
    ln2 = math.log(2.0)
    assert_close(out.tolist(), [0.0, -inf, ln2 / 2, 0.0, -inf, nan, -inf, -2 * ln2], rel)
    assert_close(g.tolist(), [inf, nan, ln2 - 1, -1.0, -inf, nan, nan, -1 - ln2], rel)
    assert_close(gg.tolist(), [-inf, 1.0, -2.0, -1.0, 0.0, nan, 0.0, -0.5], rel)


LOGIT_XS = [0.0, 1.0, 2.0, -1.0, 0.5, 0.015, 0.985, 0.01, 0.99, nan, inf, 0.25]
L015 = math.log(0.015 / 0.985)
L01 = math.log(0.01 / 0.99)
LQ = math.log(1 / 3)
G015 = 1 / (0.015 * 0.985)
G01 = 1 / (0.01 * 0.99)
GG015 = (2 * 0.015 - 1) / (0.015 * 0.985) ** 2
L15 = math.log(1.5)
GG01 = (2 * 0.01 - 1) / (0.01 * 0.99) ** 2
LOGIT_CASES = {
    None: (
        [-inf, inf, nan, nan, 0.0, L015, -L015, L01, -L01, nan, nan, LQ],
        [inf, inf, nan, nan, 4.0, G015, G015, G01, G01, nan, nan, 16 / 3],
        [nan, nan, 0.0, 0.0, 0.0, GG015, -GG015, GG01, -GG01, nan, nan, -128 / 9],
    ),
    0.015: (
        [L015, -L015, -L015, L015, 0.0, L015, -L015, L015, -L015, nan, -L015, LQ],
        [0.0, 0.0, 0.0, 0.0, 4.0, G015, G015, 0.0, 0.0, 0.0, 0.0, 16 / 3],
        [nan, nan, 0.0, 0.0, 0.0, GG015, -GG015, 0.0, 0.0, nan, nan, -128 / 9],
    ),
    0.0: (
        [-inf, inf, inf, -inf, 0.0, L015, -L015, L01, -L01, nan, inf, LQ],
        [inf, inf, 0.0, 0.0, 4.0, G015, G015, G01, G01, 0.0, 0.0, 16 / 3],
        [nan, nan, 0.0, 0.0, 0.0, GG015, -GG015, GG01, -GG01, nan, nan, -128 / 9],
    ),
    0.5: (
        [0.0] * 9 + [nan, 0.0, 0.0],
        [0.0] * 4 + [4.0] + [0.0] * 7,
        [nan, nan] + [0.0] * 7 + [nan, nan, 0.0],
    ),
    # eps above 1/2: the lower bound wins (x < eps gives eps, else x > 1 - eps gives 1 - eps).
    0.6: (
        [L15, -L15, -L15, L15, L15, L15, -L15, L15, -L15, nan, -L15, L15],
        [0.0] * 12,
        [nan, nan] + [0.0] * 7 + [nan, nan, 0.0],
    ),
}


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("eps", list(LOGIT_CASES), ids=lambda eps: f"eps={eps}")
def test_logit_gradient_outside_the_unit_interval_and_eps_bounds(lib, dtype, eps):
    dt = getattr(lib, dtype)
    x = lib.tensor(LOGIT_XS, dtype=dt, requires_grad=True)
    out, (g,), (gg,) = first_and_second(lib, lambda t: lib.logit(t, eps), x)
    assert out.dtype == g.dtype == gg.dtype == dt
    # float32 rounds 0.015 and 0.01 before the formulas see them
    rel = 2e-4 if dtype == "float32" else 1e-12
    value, grad, second = LOGIT_CASES[eps]
    assert_close(out.tolist(), value, rel)
    assert_close(g.tolist(), grad, rel)
    assert_close(gg.tolist(), second, rel)

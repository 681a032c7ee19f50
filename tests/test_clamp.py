"""`clamp`/`clip`, `clamp_min` and `clamp_max` with number and tensor bounds: values, dtypes,
broadcasting, gradients (finite differences in float64 and torch) and PyTorch's errors."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import arrays, assert_raises_like_torch, check_op, has_torch, shapes, torch

BOUNDED = {
    "min_max": lambda T, x, lo, hi: T.clamp(x, min=lo, max=hi),
    "min": lambda T, x, lo, hi: x.clamp(min=lo),
    "max": lambda T, x, lo, hi: x.clip(max=hi),
    "clamp_min": lambda T, x, lo, hi: T.clamp_min(x, lo),
    "clamp_max": lambda T, x, lo, hi: x.clamp_max(hi),
}


@pytest.mark.parametrize("name", sorted(BOUNDED))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_tensor_bounds_broadcast_with_gradients(name, data):
    """All three operands broadcast together; the gradient goes to the input inside the bounds,
    to `min` below it and to `max` above it (to `max` where the bounds cross)."""
    shape = data.draw(shapes(max_dims=2, min_side=1))
    x = data.draw(arrays(shape))
    lo = data.draw(arrays(shape[len(shape) // 2 :]))
    hi = data.draw(arrays(shape[:0] if data.draw(st.booleans()) else shape))
    # Finite differences are meaningless where an input meets a bound.
    for a, b in [(x, lo), (x, hi), (lo, hi)]:
        assume(np.all(np.abs(np.subtract(a, b)) > 1e-3))
    check_op(BOUNDED[name], x, lo, hi)


def test_gradient_routing_at_ties_and_crossed_bounds_matches_torch_rules():
    x = fg.tensor([0.0, 1.0, 2.0, 1.0, float("nan")], requires_grad=True)
    lo = fg.tensor([1.0, 1.0, 1.0, 0.0, 0.0], requires_grad=True)
    hi = fg.tensor([1.5, 0.5, 3.0, 1.0, 1.0], requires_grad=True)
    y = fg.clamp(x, lo, hi)
    assert y.grad_fn.name() == "ClampBackward0"
    np.testing.assert_array_equal(y.detach().numpy(), [1.0, 0.5, 2.0, 1.0, np.nan])
    y.backward(fg.ones(5))
    # x == min passes to x; bounds crossed (min > max) give max; x == max passes to x.
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 1, 1, 0])
    np.testing.assert_array_equal(lo.grad.numpy(), [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(hi.grad.numpy(), [0, 1, 0, 0, 0])


def test_nan_in_a_tensor_bound_gives_nan():
    out = fg.clamp(fg.tensor([1.0, 2.0]), min=fg.tensor([3.0, float("nan")]), max=fg.tensor(2.0))
    np.testing.assert_array_equal(out.numpy(), [2.0, np.nan])


@pytest.mark.parametrize(
    "bounds", [{"min": float("nan")}, {"max": float("nan")}, {"min": 0.0, "max": float("nan")}]
)
def test_a_nan_number_bound_gives_nan(bounds):
    for T in [fg] + ([torch] if has_torch else []):
        out = T.tensor([-1.0, 0.5, 2.0], dtype=T.float64).clamp(**bounds)
        assert np.isnan(out.numpy()).all(), T.__name__


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda T, x, b: T.clamp(x, min=b), "ClampBackward0"),
        (lambda T, x, b: x.clamp(min=0.5), "ClampBackward1"),
        (lambda T, x, b: T.clamp_min(x, b), "ClampMinBackward1"),
        (lambda T, x, b: x.clamp_max(b), "ClampMaxBackward1"),
        (lambda T, x, b: T.clamp_min(x, 0.5), "ClampMinBackward0"),
        (lambda T, x, b: x.clamp_max(0.5), "ClampMaxBackward0"),
    ],
)
def test_grad_fn_names(call, name):
    modules = [fg] + ([torch] if has_torch else [])
    for T in modules:
        x = T.tensor([0.0, 1.0], requires_grad=True)
        assert call(T, x, T.tensor(0.5)).grad_fn.name() == name


@pytest.mark.parametrize(
    "x, bound, dtype",
    [
        ([1, 5, 9], 2.5, "float32"),
        ([1, 5, 9], [2.5, 0.0, 0.0], "float32"),
        ([1, 5, 9], [2, 0, 7], "int64"),
        ([1.0, 5.0, 9.0], [2, 0, 7], "float32"),
    ],
)
def test_tensor_bounds_promote_with_the_input(x, bound, dtype):
    out = fg.clamp(fg.tensor(x), min=fg.tensor(bound))
    assert out.dtype == getattr(fg, dtype)
    expected = np.maximum(np.array(x, dtype=np.float64), np.array(bound, dtype=np.float64))
    np.testing.assert_allclose(out.numpy(), expected)


def test_promotion_uses_all_three_operands_at_once():
    """An int64 input with 0-d float32 and float64 bounds gives float64, as one promotion of all
    three does (two pairwise promotions would stop at float32)."""
    x = fg.tensor([1, 5, 9])
    out = fg.clamp(x, fg.tensor(2.5, dtype=fg.float32), fg.tensor(8.25, dtype=fg.float64))
    if has_torch:
        tout = torch.clamp(
            torch.tensor([1, 5, 9]),
            torch.tensor(2.5, dtype=torch.float32),
            torch.tensor(8.25, dtype=torch.float64),
        )
        assert str(tout.dtype) == f"torch.{str(out.dtype).split('.')[-1]}"
    assert out.dtype == fg.float64
    np.testing.assert_array_equal(out.numpy(), [2.5, 5.0, 8.25])


def test_output_takes_the_broadcast_shape():
    out = fg.clamp(fg.tensor([1.0, 5.0, 9.0]), min=fg.tensor([[0.0], [6.0]]))
    np.testing.assert_array_equal(out.numpy(), [[1.0, 5.0, 9.0], [6.0, 6.0, 9.0]])


def test_in_place_with_tensor_bounds_records_the_bounds():
    lo = fg.tensor([2.0, 2.0, 2.0], requires_grad=True)
    x = fg.tensor([1.0, 5.0, 9.0])
    assert x.clamp_(min=lo, max=fg.tensor(8.0)) is x
    np.testing.assert_array_equal(x.detach().numpy(), [2.0, 5.0, 8.0])
    x.sum().backward()
    np.testing.assert_array_equal(lo.grad.numpy(), [1.0, 0.0, 0.0])
    y = fg.tensor([1.0, 5.0, 9.0])
    assert y.clamp_min_(fg.tensor(4.0)) is y and y.clamp_max_(6.0) is y
    np.testing.assert_array_equal(y.numpy(), [4.0, 5.0, 6.0])
    assert fg.clamp_min_(y, 5.5) is y
    np.testing.assert_array_equal(y.numpy(), [5.5, 5.5, 6.0])


def test_in_place_result_must_keep_the_shape():
    with pytest.raises(
        RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"
    ):
        fg.tensor([1.0, 5.0, 9.0]).clamp_(min=fg.tensor([[0.0], [6.0]]))


@pytest.mark.parametrize(
    "call, kind, message",
    [
        (lambda T: T.clamp(T.ones(2), min=0.0, max=T.ones(2)), TypeError, "received an invalid combination"),
        (lambda T: T.clamp(T.ones(4), min=T.ones(2)), RuntimeError, "must match the size of tensor b"),
        (lambda T: T.clamp(T.ones(1) * 1j, min=T.zeros(1)), NotImplementedError, "not supported for complex"),
        (lambda T: T.clamp(T.ones(1) * 1j, min=0.0), NotImplementedError, "not supported for complex"),
        (lambda T: T.clamp(T.ones(1)), RuntimeError, "At least one of 'min' or 'max' must not be None"),
        (lambda T: T.ones(1).clamp(None, None), RuntimeError, "At least one of 'min' or 'max'"),
    ],
)
def test_errors_match_torch(call, kind, message):
    assert_raises_like_torch(lambda F, T: call(T), kind, message)


def test_second_order_through_tensor_bounds():
    x = fg.tensor([0.5, 2.0], dtype=fg.float64, requires_grad=True)
    lo = fg.tensor([1.0, 1.0], dtype=fg.float64, requires_grad=True)
    y = (fg.clamp(x, min=lo) ** 2).sum()
    (g_lo,) = fg.autograd.grad(y, lo, create_graph=True)
    np.testing.assert_allclose(g_lo.detach().numpy(), [2.0, 0.0])
    (gg,) = fg.autograd.grad(g_lo.sum(), lo)
    np.testing.assert_allclose(gg.numpy(), [2.0, 0.0])

"""Values and gradients of the elementwise ops against finite differences and torch."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ferrograd as fg

from helpers import arrays, broadcastable_pair, check_op, has_torch, shapes, torch

BINARY = {
    "add": lambda T, a, b: a + b,
    "sub": lambda T, a, b: a - b,
    "mul": lambda T, a, b: a * b,
    "div": lambda T, a, b: a / (b * b + 0.5),
    "maximum": lambda T, a, b: T.maximum(a, b),
    "minimum": lambda T, a, b: T.minimum(a, b),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_binary_ops_broadcast(name, data):
    sa, sb = data.draw(broadcastable_pair())
    a = data.draw(arrays(sa))
    b = data.draw(arrays(sb))
    if name in ("maximum", "minimum"):
        # Finite differences are meaningless at ties.
        assume(np.all(np.abs(np.subtract(a, b)) > 1e-3))
    check_op(BINARY[name], a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("cols", [1, 3, 8, 17])
def test_broadcasts_of_strided_operands_over_many_short_rows(dtype, cols):
    """Sliced operands broadcast against each other: over a million outputs in rows of `cols`,
    so the pool's pieces start and end inside rows."""
    rng = np.random.default_rng(cols)
    a = (rng.standard_normal((300, 40)) * 10).astype(dtype)
    b = (rng.standard_normal((200, 40)) * 10).astype(dtype)
    x, y = fg.tensor(a), fg.tensor(b)
    cases = [
        (x[:, None, :cols] * y[None, :, :cols], a[:, None, :cols] * b[None, :, :cols]),
        (x[:, None, :1] - y[None, :, :cols], a[:, None, :1] - b[None, :, :cols]),
        (x[:, None, :cols] + y[None, :, :1], a[:, None, :cols] + b[None, :, :1]),
        (x[:, None, :1] * y[None, :, :1], a[:, None, :1] * b[None, :, :1]),
        (x[:, None, :cols:2] - y[None, :, :cols:2], a[:, None, :cols:2] - b[None, :, :cols:2]),
    ]
    for got, want in cases:
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)


def test_copies_of_broadcast_tensors_repeat_the_value():
    x = fg.tensor([[1.5], [-2.0], [4.0]])
    np.testing.assert_array_equal(
        x.expand(3, 5).contiguous().numpy(), np.repeat([[1.5], [-2.0], [4.0]], 5, 1)
    )
    np.testing.assert_array_equal(fg.tensor(7).expand(2, 3).clone().numpy(), np.full((2, 3), 7))
    big = fg.tensor(0.25).expand(1000, 1000).contiguous()
    assert big.is_contiguous()
    np.testing.assert_array_equal(big.numpy(), np.full((1000, 1000), 0.25, dtype=np.float32))


UNARY = {
    "exp": lambda T, a: a.exp(),
    "log": lambda T, a: (a * a + 0.5).log(),
    "sqrt": lambda T, a: (a * a + 0.5).sqrt(),
    "sin": lambda T, a: a.sin(),
    "cos": lambda T, a: a.cos(),
    "tanh": lambda T, a: a.tanh(),
    "sigmoid": lambda T, a: a.sigmoid(),
    "neg": lambda T, a: -a,
    "pow": lambda T, a: a**3,
    "rpow": lambda T, a: 2.0**a,
    "scalar_arith": lambda T, a: 3 * a - 1.5 / (a * a + 1) + 2,
}


@pytest.mark.parametrize("name", sorted(UNARY))
@settings(max_examples=25, deadline=None)
@given(a=shapes().flatmap(arrays))
def test_unary_ops(name, a):
    check_op(UNARY[name], a)


@settings(max_examples=25, deadline=None)
@given(a=shapes(min_dims=1).flatmap(lambda s: arrays(s)))
def test_kinked_ops_away_from_kinks(a):
    a = np.where(np.abs(a) < 1e-3, 0.5, a)
    a = np.where(np.abs(np.abs(a) - 1.0) < 1e-3, 0.5, a)
    check_op(lambda T, x: x.relu() + x.abs() + x.clamp(-1.0, 1.0), a)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_sum_mean_over_dims(data):
    shape = data.draw(shapes(min_dims=1))
    a = data.draw(arrays(shape))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    keepdim = data.draw(st.booleans())
    check_op(lambda T, x: x.sum(dim, keepdim=keepdim) * 2 + x.sum(), a)
    if shape[dim] > 0:
        check_op(lambda T, x: x.mean(dim, keepdim=keepdim), a)


def test_python_floats_reach_double_kernels_unrounded():
    """A Python float operand keeps its double value in float64 and
    complex128 ops, and still promotes as a float32 scalar would."""
    x = fg.tensor([1.0, 3.0], dtype=fg.float64)
    np.testing.assert_array_equal((x * 0.01).numpy(), np.array([1.0, 3.0]) * 0.01)
    np.testing.assert_array_equal(
        x.add(x, alpha=0.1).numpy(), np.array([1.0, 3.0]) + np.array([1.0, 3.0]) * 0.1
    )
    z = fg.tensor([1 + 1j], dtype=fg.complex128)
    np.testing.assert_array_equal((z * (0.1 + 0.3j)).numpy(), np.array([1 + 1j]) * (0.1 + 0.3j))
    assert (fg.ones(2) * 0.01).dtype == fg.float32
    assert (fg.arange(3) * 0.5).dtype == fg.float32
    assert (fg.arange(3) * 1j).dtype == fg.complex64
    assert (fg.ones(2) * 1j).dtype == fg.complex64
    assert (x * 1j).dtype == fg.complex128
    np.testing.assert_array_equal((fg.ones(1) * 0.01).numpy(), np.float32(0.01))


# Sizes on both sides of the parallel split and of the streamed-output
# threshold (12 MiB), so every kernel path of a product's gradients runs.
@pytest.mark.parametrize("n", [1000, 100_000, 4_500_000])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_product_gradients_of_large_tensors_are_exact(n, dtype):
    rng = np.random.default_rng(n)
    an, bn, gn = (rng.standard_normal(n).astype(dtype) for _ in range(3))
    a = fg.tensor(an, requires_grad=True)
    b = fg.tensor(bn, requires_grad=True)
    out = a * b
    np.testing.assert_array_equal(out.detach().numpy(), an * bn)
    out.backward(fg.tensor(gn))
    np.testing.assert_array_equal(a.grad.numpy(), gn * bn)
    np.testing.assert_array_equal(b.grad.numpy(), gn * an)


def test_product_gradients_of_strided_broadcast_and_recorded_backwards():
    rng = np.random.default_rng(0)
    an = rng.standard_normal((300, 400))
    bn = rng.standard_normal(400)
    a = fg.tensor(an, requires_grad=True)
    b = fg.tensor(bn, requires_grad=True)
    at = a.t()
    (at * b[:300]).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.broadcast_to(bn[:300, None], (300, 400)))
    np.testing.assert_allclose(b.grad.numpy(), np.concatenate([an.sum(1), np.zeros(100)]))
    a.grad = b.grad = None
    (y,) = fg.autograd.grad((a * a).sum(), a, create_graph=True)
    np.testing.assert_allclose(y.detach().numpy(), 2 * an)
    (z,) = fg.autograd.grad(y.sum(), a)
    np.testing.assert_allclose(z.numpy(), np.full_like(an, 2.0))


@settings(max_examples=40, deadline=None)
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=4),
    transpose=st.booleans(),
    data=st.data(),
)
def test_where_broadcasts_three_operands(shapes, transpose, data):
    cond_shape, a_shape, b_shape = shapes.input_shapes
    cond = data.draw(hnp.arrays(np.bool_, cond_shape))
    a = data.draw(arrays(a_shape))
    b = data.draw(arrays(b_shape))

    def fn(T, x, y):
        if transpose and x.dim() >= 2:
            # A strided operand: the transpose of a contiguous copy.
            x = x.transpose(0, -1).contiguous().transpose(0, -1)
        return T.where(T.tensor(cond), x, y * 2)

    out = check_op(fn, a, b)
    np.testing.assert_array_equal(out.detach().numpy(), np.where(cond, a, b * 2))


# Python floats meeting float tensors in operators: the number takes part at the tensor's
# precision, as in PyTorch, whether it is exact there or not, and in every position.
NUMBER_OPS = {
    "mul": lambda x, c: x * c,
    "rmul": lambda x, c: c * x,
    "add": lambda x, c: x + c,
    "rsub": lambda x, c: c - x,
    "div": lambda x, c: x / c,
    "rdiv": lambda x, c: c / x,
    "lt": lambda x, c: x < c,
    "eq": lambda x, c: x == c,
}


@settings(max_examples=60, deadline=None)
@given(
    op=st.sampled_from(sorted(NUMBER_OPS)),
    dtype=st.sampled_from(["float32", "float64", "int64"]),
    number=st.sampled_from([0.1, 1.0001, 1e-50, 1e40, -2.5, 3.0, float("inf")]),
    data=st.data(),
)
def test_python_floats_in_operators_match_torch(op, dtype, number, data):
    values = data.draw(arrays(data.draw(shapes(max_dims=2)), low=0.5, high=4.0))
    f = NUMBER_OPS[op]
    x = fg.tensor(values).to(getattr(fg, dtype))
    out = f(x, number)
    expected_dtype = {"lt": fg.bool, "eq": fg.bool}.get(op, fg.float32 if dtype == "int64" else x.dtype)
    assert out.dtype == expected_dtype
    if not has_torch:
        return
    tx = torch.tensor(values).to(getattr(torch, dtype))
    expected = f(tx, number)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_a_float_recorded_with_a_float32_tensor_differentiates_at_its_precision():
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    (x * 0.1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.float32([0.1, 0.1]))
    y = fg.tensor([1.0, 2.0], dtype=fg.float64, requires_grad=True)
    (0.1 * y).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [0.1, 0.1])

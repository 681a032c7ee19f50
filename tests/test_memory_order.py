"""Elementwise results keep the memory order of a dense operand: a transposed, permuted or
channels-last tensor gives a result with its strides (computed in one pass over storage), as
PyTorch's do, while `contiguous()` and `clone(memory_format=contiguous_format)` stay row-major."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

try:
    import torch
except ImportError:  # the comparisons with PyTorch skip without it
    torch = None


@st.composite
def dense_permutations(draw):
    """A base shape of 2-4 dims and a permutation of its dims that is not the identity."""
    ndim = draw(st.integers(2, 4))
    limit = {2: 70, 3: 16, 4: 7}[ndim]
    shape = tuple(draw(st.lists(st.integers(2, limit), min_size=ndim, max_size=ndim)))
    order = tuple(draw(st.permutations(range(ndim))))
    if order == tuple(range(ndim)):
        order = order[::-1]
    return shape, order


def permuted(shape, order, seed, requires_grad=False):
    base = np.random.default_rng(seed).standard_normal(shape)
    x = fg.tensor(base, requires_grad=requires_grad)
    return x, x.permute(*order), base.transpose(order)


@settings(max_examples=50, deadline=None)
@given(dense_permutations(), st.integers(0, 2**16))
def test_unary_ops_and_copies_keep_a_permuted_operands_strides(case, seed):
    _, t, a = permuted(*case, seed)
    for out, expected in [
        (t.exp(), np.exp(a)),
        (-t, -a),
        (t.abs(), np.abs(a)),
        (t.relu(), np.maximum(a, 0)),
        (t.clone(), a),
    ]:
        assert out.stride() == t.stride()
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    f32 = t.float()
    assert f32.stride() == t.stride() and f32.dtype == fg.float32
    np.testing.assert_array_equal(f32.numpy(), a.astype(np.float32))
    for row_major in [t.contiguous(), t.clone(memory_format=fg.contiguous_format)]:
        assert row_major.is_contiguous()
        np.testing.assert_array_equal(row_major.numpy(), a)


@settings(max_examples=50, deadline=None)
@given(dense_permutations(), st.integers(0, 2**16))
def test_binary_ops_of_one_permuted_layout_or_a_number_keep_it(case, seed):
    shape, order = case
    _, t, a = permuted(shape, order, seed)
    _, u, b = permuted(shape, order, seed + 1)
    for out, expected in [
        (t + u, a + b),
        (t * u, a * b),
        (t - 2.5, a - 2.5),
        (3.0 / u, 3.0 / b),
        (t > u, a > b),
        (t * fg.tensor(2.0), a * 2.0),
    ]:
        assert out.stride() == t.stride()
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    # With a row-major partner, the first operand's order decides.
    row_major = fg.tensor(np.ascontiguousarray(b))
    first = t + row_major
    assert first.stride() == t.stride()
    np.testing.assert_allclose(first.numpy(), a + b, rtol=1e-12)
    second = row_major - t
    assert second.is_contiguous()
    np.testing.assert_allclose(second.numpy(), b - a, rtol=1e-12)
    last = fg.tensor(b[(0,) * (b.ndim - 1)])
    biased = t * last
    assert biased.stride() == t.stride()
    np.testing.assert_allclose(biased.numpy(), a * b[(0,) * (b.ndim - 1)], rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(dense_permutations(), st.integers(0, 2**16))
def test_gradients_through_ops_on_permuted_views_match_the_row_major_computation(case, seed):
    shape, order = case
    x, t, a = permuted(shape, order, seed, requires_grad=True)
    g = np.random.default_rng(seed + 2).standard_normal(a.shape)
    ((t.tanh() * t + 1.5) * fg.tensor(g)).sum().backward()
    y = x.detach().clone().requires_grad_()
    (
        (y.permute(*order).contiguous().tanh() * y.permute(*order).contiguous() + 1.5) * fg.tensor(g)
    ).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-12, atol=1e-12)
    expected = (np.tanh(a) + a * (1 - np.tanh(a) ** 2)) * g
    np.testing.assert_allclose(x.grad.numpy(), expected.transpose(np.argsort(order)), rtol=1e-10)


@pytest.mark.parametrize("order", [(1, 0, 2), (2, 0, 1), (2, 1, 0)])
def test_gradients_of_ops_on_permuted_views_pass_finite_differences(order):
    x = fg.randn(3, 4, 5, dtype=fg.float64, requires_grad=True)
    y = fg.randn(*[(3, 4, 5)[d] for d in order], dtype=fg.float64)

    def f(x):
        t = x.permute(*order)
        return (t.sin() * t + t * y - 2.0 * t.exp()).tanh()

    assert f(x).stride() == x.permute(*order).stride()
    assert fg.autograd.gradcheck(f, (x,))
    assert fg.autograd.gradgradcheck(f, (x,))


def test_channels_last_activations_stay_channels_last():
    x = fg.randn(2, 3, 5, 4).contiguous(memory_format=fg.channels_last)
    for out in [x.relu(), x * 2, x + x, fg.sigmoid(x), x.clone()]:
        assert out.is_contiguous(memory_format=fg.channels_last)
        assert out.stride() == x.stride()
    np.testing.assert_array_equal(x.relu().numpy(), np.maximum(x.numpy(), 0))


def test_like_factories_keep_a_dense_layout_unless_given_a_format():
    t = fg.randn(3, 4, 5).permute(2, 0, 1)
    made = [fg.zeros_like(t), fg.ones_like(t), fg.empty_like(t), fg.full_like(t, 7.0)]
    made += [fg.rand_like(t), fg.randn_like(t), fg.randint_like(t, 5)]
    for out in made:
        assert out.shape == t.shape and out.stride() == t.stride()
    np.testing.assert_array_equal(fg.full_like(t, 7.0).numpy(), np.full((5, 3, 4), 7.0))
    assert fg.randint_like(t, 5).dtype == t.dtype
    assert fg.zeros_like(t, memory_format=fg.contiguous_format).is_contiguous()
    assert fg.zeros_like(t[1:]).is_contiguous()
    x = fg.randn(2, 3, 4, 5)
    cl = fg.ones_like(x, memory_format=fg.channels_last)
    assert cl.is_contiguous(memory_format=fg.channels_last) and (cl.numpy() == 1).all()
    assert fg.randn_like(x, memory_format=fg.channels_last).is_contiguous(memory_format=fg.channels_last)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        fg.zeros_like(t, memory_format=fg.channels_last)


def test_pruning_a_channels_last_weight_masks_its_smallest_entries():
    conv = fg.nn.Conv2d(2, 3, 3)
    conv.weight = fg.nn.Parameter(conv.weight.detach().contiguous(memory_format=fg.channels_last))
    w = conv.weight.detach().numpy().copy()
    fg.nn.utils.prune.l1_unstructured(conv, "weight", amount=5)
    mask = conv.weight_mask.numpy()
    assert mask.sum() == w.size - 5
    assert np.abs(w[mask == 0]).max() <= np.abs(w[mask == 1]).min()
    np.testing.assert_array_equal(conv.weight.detach().numpy(), w * mask)


def test_a_view_of_a_permuted_result_needs_reshape_as_in_pytorch():
    t = fg.arange(6.0).reshape(2, 3).t()
    out = t * 2
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride"):
        out.view(-1)
    np.testing.assert_array_equal(out.reshape(-1).numpy(), [0, 6, 2, 8, 4, 10])


def test_sliced_and_broadcast_operands_give_row_major_results_with_their_values():
    base = np.random.default_rng(3).standard_normal((6, 8))
    t = fg.tensor(base).t()[1:]
    np.testing.assert_allclose(t.exp().numpy(), np.exp(base.T[1:]), rtol=1e-14)
    assert t.exp().is_contiguous()
    row = fg.tensor(base[0, :6])
    np.testing.assert_array_equal((fg.tensor(base).t() + row).numpy(), base.T + base[0, :6])


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize(
    "expr",
    [
        "a.t().exp()",
        "-a.t()",
        "a.t() + 1",
        "2 * a.t()",
        "a.t() * a.t()",
        "a.t().clone()",
        "a.t().float()",
        "c.permute(2, 0, 1).sin()",
        "c.permute(1, 2, 0) - c.permute(1, 2, 0)",
        "a.t().contiguous()",
        "a.t().clone(memory_format=M.contiguous_format)",
        "c.unsqueeze(0).permute(0, 3, 1, 2).relu()",
        "a.t() + a.t().contiguous()",
        "a.t().contiguous() + a.t()",
        "c.permute(2, 0, 1) * M.arange(3.0, dtype=M.float64)",
        "c.permute(1, 2, 0) - c.permute(1, 2, 0).contiguous()",
        "M.zeros_like(a.t())",
        "M.full_like(c.permute(1, 2, 0), 2.0)",
        "M.ones_like(a.t(), memory_format=M.contiguous_format)",
        "M.ones_like(c.unsqueeze(0), memory_format=M.channels_last)",
    ],
)
def test_strides_match_pytorch(expr):
    strides = []
    for M in (fg, torch):
        a = M.arange(12.0, dtype=M.float64).reshape(3, 4)
        c = M.arange(24.0, dtype=M.float64).reshape(2, 3, 4)
        out = eval(expr, {"a": a, "c": c, "M": M})
        strides.append((tuple(out.shape), out.stride(), out.detach().numpy().tolist()))
    assert strides[0] == strides[1]

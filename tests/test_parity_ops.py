"""Tensor ops found to differ from PyTorch under ``import ferrograd as torch``: broadcasting
and expanding errors, ``sum`` with an integer ``dtype``, fills whose value is a 0-d tensor
that requires grad, ``flatten`` of a 0-d tensor. Each test states the expected behaviour and,
when torch is installed, checks torch agrees."""

import re

import numpy as np
import pytest

import ferrograd as fg

from helpers import assert_raises_like_torch, has_torch, torch


def modules():
    return [fg] + ([torch] if has_torch else [])


# ----------------------------------------------------------------------------- broadcasting


@pytest.mark.parametrize(
    "op",
    [
        lambda F, T: T.zeros(3, 4) + T.zeros(4, 3),
        lambda F, T: T.zeros(3, 4).mul_(T.zeros(4, 3)),
        lambda F, T: T.broadcast_tensors(T.zeros(3, 4), T.zeros(4, 3)),
        lambda F, T: F.cosine_similarity(T.zeros(3, 4), T.zeros(4, 3)),
    ],
)
def test_broadcasting_errors_name_the_last_mismatched_dimension(op):
    # Dimensions are matched from the right, so the mismatch reported is dimension 1.
    message = "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1"
    assert_raises_like_torch(op, RuntimeError, re.escape(message))


def test_broadcast_shapes_returns_a_size():
    for T in modules():
        shape = T.broadcast_shapes((3, 1), (4,))
        assert isinstance(shape, T.Size) and shape == (3, 4)


@pytest.mark.parametrize(
    "op, tensor, sizes",
    [
        (lambda F, T: T.zeros(2, 3, 4).expand(3, 4), "[2, 3, 4]", "[3, 4]"),
        (lambda F, T: T.zeros(2, 3, 4).expand_as(T.zeros(3, 4)), "[2, 3, 4]", "[3, 4]"),
        (lambda F, T: T.broadcast_to(T.zeros(2, 3, 4), (3, 4)), "[2, 3, 4]", "[3, 4]"),
        (lambda F, T: T.zeros(4, 3).__setitem__((slice(None), 1), T.ones(4, 1)), "[4, 1]", "[4]"),
    ],
)
def test_expanding_to_fewer_dimensions_lists_the_sizes(op, tensor, sizes):
    n, ndim = len(sizes.split(",")), len(tensor.split(","))
    message = (
        rf"expand\((ferrograd|torch)\.FloatTensor\{{{re.escape(tensor)}\}}, size={re.escape(sizes)}\): the "
        rf"number of sizes provided \({n}\) must be greater or equal to the number of dimensions in the "
        rf"tensor \({ndim}\)"
    )
    assert_raises_like_torch(op, RuntimeError, message)


# ----------------------------------------------------------------------------- sum(dtype=)


@pytest.mark.parametrize(
    "make, dtype, value",
    [
        (lambda T: T.tensor([1, 2]).sum(dtype=T.int32), "int32", 3),
        (lambda T: T.tensor([100, 100], dtype=T.int8).sum(dtype=T.int8), "int8", -56),
        (lambda T: T.tensor([1.5, 1.5]).sum(dtype=T.int32), "int32", 2),
        (lambda T: T.tensor([[1, 2], [3, 4]]).sum(1, dtype=T.int16), "int16", [3, 7]),
        (lambda T: T.nansum(T.tensor([1, 2]), dtype=T.int32), "int32", 3),
        (lambda T: T.tensor([1, 2], dtype=T.int32).sum(), "int64", 3),
        (lambda T: T.tensor([1, 2]).sum(dtype=T.float64), "float64", 3.0),
    ],
)
def test_sum_returns_the_dtype_asked_for(make, dtype, value):
    for T in modules():
        out = make(T)
        assert str(out.dtype).rsplit(".", 1)[-1] == dtype
        assert out.tolist() == value


# ----------------------------------------------------------------------------- fills


MASK = np.array([[True, False, True], [False, False, True]])


def fill_programs():
    """Fills by a 0-d tensor ``v`` that requires grad, each with the gradient ``v`` gets from
    ``(out * w).sum()`` for the weights ``w`` below: the sum of ``w`` where ``v`` was written."""
    w = np.arange(1.0, 7.0).reshape(2, 3)
    return [
        ("masked_fill", lambda T, x, v, m: x.masked_fill(m, v), "MaskedFillBackward1", w[MASK].sum()),
        (
            "masked_fill_",
            lambda T, x, v, m: x.clone().masked_fill_(m, v),
            "MaskedFillBackward1",
            w[MASK].sum(),
        ),
        ("fill_", lambda T, x, v, m: x.clone().fill_(v), "FillBackward3", w.sum()),
        ("fill_ of a fresh tensor", lambda T, x, v, m: T.zeros(2, 3).fill_(v), "FillBackward3", w.sum()),
        ("index_fill", lambda T, x, v, m: x.index_fill(1, T.tensor([0, 2]), v), None, w[:, [0, 2]].sum()),
        ("fill", lambda T, x, v, m: T.fill(x, v), None, w.sum()),
    ], w


@pytest.mark.parametrize("case", range(6))
def test_fills_by_a_tensor_pass_its_gradient(case):
    programs, w = fill_programs()
    _, fill, name, expected = programs[case]
    grads = []
    for T in modules():
        x = T.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        v = T.tensor(2.5, requires_grad=True)
        out = fill(T, x, v, T.tensor(MASK))
        if name is not None:
            assert type(out.grad_fn).__name__ == name
        (out * T.tensor(w)).sum().backward()
        assert v.grad.item() == pytest.approx(expected)
        grads.append(x.grad.numpy() if x.grad is not None else None)
    if has_torch:
        ours, theirs = grads
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_allclose(ours, theirs)


def test_fill_by_a_tensor_of_another_dtype_gives_the_gradient_in_its_dtype():
    for T in modules():
        x = T.zeros(2, 3, requires_grad=True)
        v = T.tensor(1.5, dtype=T.float64, requires_grad=True)
        out = x.masked_fill(T.tensor(MASK), v)
        assert out.dtype == T.float32
        out.sum().backward()
        assert v.grad.dtype == T.float64 and v.grad.item() == 3.0


@pytest.mark.parametrize(
    "op, message",
    [
        (
            lambda F, T: T.zeros(3).masked_fill(T.ones(3, dtype=T.bool), T.ones(1)),
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).",
        ),
        (
            lambda F, T: T.zeros(3).masked_fill_(T.ones(3, dtype=T.bool), T.ones(2)),
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s).",
        ),
        (
            lambda F, T: T.zeros(3).fill_(T.ones(2)),
            "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.",
        ),
        (
            lambda F, T: T.fill(T.zeros(3), T.ones(2)),
            "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.",
        ),
    ],
)
def test_fills_refuse_a_value_tensor_with_dimensions(op, message):
    assert_raises_like_torch(op, RuntimeError, re.escape(message))


# ----------------------------------------------------------------------------- flatten


def test_flatten_of_a_zero_dim_tensor_checks_its_dims():
    for T in modules():
        t = T.tensor(2.0)
        for args in [(), (0,), (0, -1), (-1, -1)]:
            assert t.flatten(*args).tolist() == [2.0]
        assert T.nn.Flatten(0)(t).tolist() == [2.0]
    expected = r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"
    assert_raises_like_torch(lambda F, T: T.tensor(2.0).flatten(1), IndexError, expected)
    assert_raises_like_torch(lambda F, T: T.nn.Flatten()(T.tensor(2.0)), IndexError, expected)


# ----------------------------------------------------------------------------- complex logsumexp


def test_logsumexp_of_complex_values_and_its_gradient():
    z = np.array([[1 + 1j, 2], [0.5 - 2j, -1 + 3j], [40 + 1j, 39 - 1j]])

    def loss(z):
        return np.abs(np.log(np.exp(z).sum(1))).sum()

    # PyTorch's convention for a real loss of complex inputs: dL/dRe + i dL/dIm.
    h, expected = 1e-6, np.zeros_like(z)
    for idx in np.ndindex(z.shape):
        for step in (1, 1j):
            e = np.zeros_like(z)
            e[idx] = h * step
            expected[idx] += step * (loss(z + e) - loss(z - e)) / (2 * h)
    grads = []
    for T in modules():
        t = T.tensor(z, requires_grad=True)
        y = t.logsumexp(1)
        assert y.dtype == T.complex128
        np.testing.assert_allclose(y.detach().numpy(), np.log(np.exp(z).sum(1)), rtol=1e-12)
        y.abs().sum().backward()
        np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6, atol=1e-8)
        grads.append(t.grad.numpy())
    if has_torch:
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)

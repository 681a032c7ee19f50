"""F.pad: constant padding and cropping, reflect, replicate and circular padding, their
gradients (finite differences and torch) and PyTorch's errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg
import ferrograd.nn.functional as F

from helpers import arrays, assert_raises_like_torch, check_op, shapes

NUMPY_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@settings(max_examples=40, deadline=None)
@given(shape=shapes(min_dims=1, max_dims=4, max_side=4), data=st.data())
def test_constant_pad_pads_and_crops(shape, data):
    a = data.draw(arrays(shape))
    k = data.draw(st.integers(1, len(shape)))
    pads = []
    for size in reversed(shape[-k:]):
        before = data.draw(st.integers(-size, 3))
        pads += [before, data.draw(st.integers(-(size + min(before, 0)), 3))]
    value = data.draw(st.sampled_from([None, 0.0, -1.5]))
    out = check_op(lambda T, x: T.nn.functional.pad(x, pads, value=value), a)
    # numpy: crop the negative amounts, then pad the positive ones.
    amounts = [(0, 0)] * (len(shape) - k) + [(pads[2 * i], pads[2 * i + 1]) for i in reversed(range(k))]
    crop = tuple(slice(max(-b, 0), s - max(-e, 0)) for (b, e), s in zip(amounts, shape))
    widths = [(max(b, 0), max(e, 0)) for b, e in amounts]
    expected = np.pad(a[crop], widths, constant_values=value or 0.0)
    np.testing.assert_array_equal(out.detach().numpy(), expected)
    if out.numel():
        assert out.grad_fn.name() == "ConstantPadNdBackward0"


@settings(max_examples=40, deadline=None)
@given(mode=st.sampled_from(["reflect", "replicate", "circular"]), k=st.integers(1, 3), data=st.data())
def test_edge_modes_match_numpy_and_send_gradients_back(mode, k, data):
    batch = data.draw(st.integers(0, 1))
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=k + 1 + batch, max_size=k + 1 + batch)))
    if mode == "reflect":
        shape = shape[: len(shape) - k] + tuple(max(s, 2) for s in shape[len(shape) - k :])
    a = data.draw(arrays(shape))
    pads = []
    for size in reversed(shape[-k:]):
        most = size - 1 if mode == "reflect" else size if mode == "circular" else 3
        pads += [data.draw(st.integers(0, most)), data.draw(st.integers(0, most))]
    out = check_op(lambda T, x: T.nn.functional.pad(x, pads, mode) ** 2, a)
    widths = [(0, 0)] * (len(shape) - k) + [(pads[2 * i], pads[2 * i + 1]) for i in reversed(range(k))]
    np.testing.assert_allclose(out.detach().numpy(), np.pad(a, widths, NUMPY_MODE[mode]) ** 2)
    x = fg.tensor(a, requires_grad=True)
    assert fg.autograd.gradgradcheck(lambda x: F.pad(x, pads, mode) ** 3, (x,))


def test_reflect_with_a_negative_amount_crops_first():
    x = fg.arange(6.0).reshape(1, 2, 3)
    np.testing.assert_array_equal(F.pad(x, (-1, 2), "reflect").numpy(), [[[1, 2, 1, 0], [4, 5, 4, 3]]])
    assert F.pad(x.requires_grad_(), (1, 1, 1, 1), "replicate").grad_fn.name() == "ReplicationPad2DBackward0"


def test_constant_pad_of_integers_and_an_input_it_does_not_alias():
    np.testing.assert_array_equal(F.pad(fg.tensor([1, 2]), (1, 1), value=3).numpy(), [3, 1, 2, 3])
    x = fg.ones(2, 2)
    y = F.pad(x, (0, 0))
    y.add_(1)
    np.testing.assert_array_equal(x.numpy(), np.ones((2, 2)))


@pytest.mark.parametrize(
    "fn, kind, message",
    [
        (lambda F, T: F.pad(T.ones(1, 2, 3), (1,)), RuntimeError, "Padding length must be divisible by 2"),
        (
            lambda F, T: F.pad(T.ones(2), (1, 1, 1, 1)),
            RuntimeError,
            "Padding length should be less than or equal",
        ),
        (
            lambda F, T: F.pad(T.ones(1, 2, 3), (3, 3), "reflect"),
            RuntimeError,
            r"Padding size should be less than the corresponding input dimension, but got: padding \(3, 3\)",
        ),
        (
            lambda F, T: F.pad(T.ones(1, 2, 3), (4, 1), "circular"),
            RuntimeError,
            "Padding value causes wrapping around more than once.",
        ),
        (
            lambda F, T: F.pad(T.ones(1, 2, 3), (1, 1), "foo"),
            NotImplementedError,
            "Unrecognised padding mode foo",
        ),
        (
            lambda F, T: F.pad(T.ones(3), (1, 1), "reflect"),
            NotImplementedError,
            "Padding size 2 is not supported for 1D input tensor",
        ),
        (
            lambda F, T: F.pad(T.ones(1, 2, 3), (1, 1), "reflect", value=1.0),
            RuntimeError,
            'Padding mode "reflect" doesn\'t take in value argument',
        ),
        (
            lambda F, T: F.pad(T.ones(1, 0), (0, 0), "replicate"),
            RuntimeError,
            "other non-zero dimensions for input",
        ),
    ],
)
def test_errors_match_pytorch(fn, kind, message):
    assert_raises_like_torch(fn, kind, message)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_padding_by_copy_keeps_signed_zeros(mode):
    x = fg.tensor([[[-0.0, 1.0, -0.0, 2.0]]])
    out = fg.nn.functional.pad(x, (2, 2), mode=mode).numpy()
    assert np.signbit(out[out == 0]).all()

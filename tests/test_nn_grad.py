"""nn.grad: convolution gradients with respect to input and weight, as a custom Function's
backward uses them; checked against autograd, finite differences and torch."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg
from ferrograd.nn import grad as nn_grad

CONVS = {1: fg.nn.functional.conv1d, 2: fg.nn.functional.conv2d, 3: fg.nn.functional.conv3d}


@st.composite
def conv_cases(draw):
    dims = draw(st.sampled_from([1, 2, 3]))
    groups = draw(st.sampled_from([1, 2]))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(dims))
    stride = draw(st.integers(1, 2))
    padding = draw(st.integers(0, 1))
    dilation = draw(st.integers(1, 2))
    spatial = tuple(dilation * (k - 1) + 1 + draw(st.integers(0, 3)) for k in kernel)
    batch = draw(st.integers(1, 2))
    seed = draw(st.integers(0, 2**16))
    return (
        dims,
        (batch, cin, *spatial),
        (cout, cin // groups, *kernel),
        stride,
        padding,
        dilation,
        groups,
        seed,
    )


@settings(max_examples=40, deadline=None)
@given(conv_cases())
def test_gradients_match_autograd_through_the_convolution(case):
    dims, input_size, weight_size, stride, padding, dilation, groups, seed = case
    rng = np.random.default_rng(seed)
    x = fg.tensor(rng.standard_normal(input_size), dtype=fg.float64, requires_grad=True)
    w = fg.tensor(rng.standard_normal(weight_size), dtype=fg.float64, requires_grad=True)
    out = CONVS[dims](x, w, None, stride, padding, dilation, groups)
    g = fg.tensor(rng.standard_normal(tuple(out.shape)), dtype=fg.float64)
    expect_x, expect_w = fg.autograd.grad(out, (x, w), g)
    conv_input = getattr(nn_grad, f"conv{dims}d_input")
    conv_weight = getattr(nn_grad, f"conv{dims}d_weight")
    got_x = conv_input(input_size, w.detach(), g, stride, padding, dilation, groups)
    got_w = conv_weight(x.detach(), weight_size, g, stride, padding, dilation, groups)
    assert tuple(got_x.shape) == input_size and tuple(got_w.shape) == weight_size
    np.testing.assert_allclose(got_x.numpy(), expect_x.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_w.numpy(), expect_w.numpy(), rtol=1e-12, atol=1e-12)
    assert not got_x.requires_grad and not got_w.requires_grad


class Conv2dFunction(fg.autograd.Function):
    """A convolution whose backward is written with nn.grad, as in PyTorch's extension docs."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return fg.nn.functional.conv2d(x, w, stride=2, padding=1)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return (
            nn_grad.conv2d_input(x.shape, w, g, stride=2, padding=1),
            nn_grad.conv2d_weight(x, w.shape, g, stride=2, padding=1),
        )


def test_a_custom_function_built_on_them_passes_gradcheck_and_gradgradcheck():
    x = fg.randn(2, 2, 5, 4, dtype=fg.float64, requires_grad=True)
    w = fg.randn(3, 2, 3, 2, dtype=fg.float64, requires_grad=True)
    assert fg.autograd.gradcheck(Conv2dFunction.apply, (x, w))
    assert fg.autograd.gradgradcheck(Conv2dFunction.apply, (x, w))


def test_the_result_tracks_the_given_operands_only_under_grad_mode():
    w = fg.randn(3, 2, 3, dtype=fg.float64, requires_grad=True)
    g = fg.randn(1, 3, 4, dtype=fg.float64)
    assert nn_grad.conv1d_input((1, 2, 6), w, g).requires_grad
    with fg.no_grad():
        assert not nn_grad.conv1d_input((1, 2, 6), w, g).requires_grad


def test_functional_grad_is_nn_grad_and_sizes_must_fit():
    assert fg.nn.functional.grad is fg.nn.grad
    w = fg.randn(3, 2, 3)
    with pytest.raises(RuntimeError, match="shape"):
        nn_grad.conv1d_input((1, 2, 6), w, fg.randn(1, 3, 5))


def test_agrees_with_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 4, 7, 6)), rng.standard_normal((6, 2, 3, 3))
    g = rng.standard_normal((2, 6, 4, 1))
    kwargs = {"stride": (2, 3), "padding": (1, 0), "dilation": (1, 2), "groups": 2}
    expect_x = torch.nn.grad.conv2d_input(x.shape, torch.tensor(w), torch.tensor(g), **kwargs)
    expect_w = torch.nn.grad.conv2d_weight(torch.tensor(x), w.shape, torch.tensor(g), **kwargs)
    got_x = nn_grad.conv2d_input(x.shape, fg.tensor(w), fg.tensor(g), **kwargs)
    got_w = nn_grad.conv2d_weight(fg.tensor(x), w.shape, fg.tensor(g), **kwargs)
    np.testing.assert_allclose(got_x.numpy(), expect_x.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got_w.numpy(), expect_w.numpy(), rtol=1e-10, atol=1e-10)

"""Memory formats: channels_last layouts from contiguous(), clone(), to() and Module.to(), the
checks is_contiguous() makes, and PyTorch's errors."""

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch, torch


def nhwc_strides(shape):
    n, c, h, w = shape
    return (h * w * c, 1, w * c, c)


def test_contiguous_in_channels_last_keeps_values_and_records_a_clone():
    x = fg.randn(2, 3, 4, 5, requires_grad=True)
    y = x.contiguous(memory_format=fg.channels_last)
    assert y.stride() == nhwc_strides((2, 3, 4, 5)) and y.grad_fn.name() == "CloneBackward0"
    assert y.is_contiguous(memory_format=fg.channels_last) and not y.is_contiguous()
    assert y.contiguous(memory_format=fg.channels_last) is y
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
    assert y.contiguous().stride() == (60, 20, 5, 1)
    g = fg.randn(2, 3, 4, 5)
    (y * g).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), g.numpy())


def test_channels_last_3d_and_size_one_channels():
    x = fg.randn(2, 3, 2, 4, 5)
    y = x.contiguous(memory_format=fg.channels_last_3d)
    assert y.stride() == (120, 1, 60, 15, 3) and y.is_contiguous(memory_format=fg.channels_last_3d)
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    one_channel = fg.randn(2, 1, 3, 3)
    assert one_channel.is_contiguous(memory_format=fg.channels_last)
    assert one_channel.contiguous(memory_format=fg.channels_last) is one_channel


def test_clone_preserves_channels_last_unless_told_otherwise():
    y = fg.randn(2, 3, 4, 5).contiguous(memory_format=fg.channels_last)
    assert y.clone().stride() == nhwc_strides((2, 3, 4, 5))
    assert y.clone(memory_format=fg.contiguous_format).stride() == (60, 20, 5, 1)
    x = fg.randn(2, 3, 4, 5)
    assert x.clone(memory_format=fg.channels_last).stride() == nhwc_strides((2, 3, 4, 5))
    assert x.clone(memory_format=fg.preserve_format).stride() == (60, 20, 5, 1)
    copy = y.clone()
    copy.add_(1)
    np.testing.assert_allclose(copy.numpy(), y.numpy() + 1, rtol=1e-6)


def test_to_and_module_to_take_a_memory_format():
    x = fg.randn(2, 3, 4, 5)
    assert x.to(memory_format=fg.channels_last).stride() == nhwc_strides((2, 3, 4, 5))
    assert x.to(fg.float64, memory_format=fg.channels_last).stride() == nhwc_strides((2, 3, 4, 5))
    conv = fg.nn.Conv2d(3, 4, 3).to(memory_format=fg.channels_last)
    assert conv.weight.stride() == nhwc_strides((4, 3, 3, 3)) and conv.bias.stride() == (1,)
    assert isinstance(conv.weight, fg.nn.Parameter)
    out = conv(x)
    reference = fg.nn.functional.conv2d(x, conv.weight.contiguous(), conv.bias)
    np.testing.assert_allclose(out.detach().numpy(), reference.detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    assert conv.weight.grad.shape == (4, 3, 3, 3)


def test_memory_format_objects_and_errors():
    assert (
        repr(fg.channels_last) == "ferrograd.channels_last"
        and str(fg.preserve_format) == "ferrograd.preserve_format"
    )
    assert isinstance(fg.contiguous_format, fg.memory_format) and fg.channels_last != fg.contiguous_format
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        fg.randn(3, 4, 5).contiguous(memory_format=fg.channels_last)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d format"):
        fg.randn(2, 3, 4, 5).contiguous(memory_format=fg.channels_last_3d)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        fg.randn(3, 4, 5).clone(memory_format=fg.channels_last)
    with pytest.raises(TypeError):
        fg.randn(2, 3, 4, 5).contiguous(memory_format="channels_last")
    assert not fg.randn(3, 4, 5).is_contiguous(memory_format=fg.channels_last)
    x = fg.randn(2, 3, 4, 5)
    assert x.contiguous(memory_format=fg.preserve_format) is x and x.is_contiguous(
        memory_format=fg.preserve_format
    )


@pytest.mark.skipif(not has_torch, reason="torch is not installed")
def test_strides_agree_with_torch():
    for shape, ours, theirs in [
        ((2, 3, 4, 5), fg.channels_last, torch.channels_last),
        ((2, 1, 4, 4), fg.channels_last, torch.channels_last),
        ((2, 3, 2, 4, 5), fg.channels_last_3d, torch.channels_last_3d),
    ]:
        a = fg.zeros(*shape).contiguous(memory_format=ours)
        b = torch.zeros(*shape).contiguous(memory_format=theirs)
        assert a.stride() == b.stride()
        assert a.clone().stride() == b.clone().stride()
        assert a.is_contiguous() == b.is_contiguous()
    t = fg.zeros(2, 3, 4, 5).permute(0, 2, 3, 1)
    u = torch.zeros(2, 3, 4, 5).permute(0, 2, 3, 1)
    assert t.is_contiguous(memory_format=fg.channels_last) == u.is_contiguous(
        memory_format=torch.channels_last
    )


def test_convert_conv_weight_memory_format():
    fg.manual_seed(0)
    model = fg.nn.Sequential(
        fg.nn.Conv2d(3, 4, 3),
        fg.nn.ReLU(),
        fg.nn.ConvTranspose2d(4, 2, 2),
        fg.nn.Conv3d(2, 2, 1),
        fg.nn.Linear(2, 2),
    )
    before = [p.detach().clone() for p in model.parameters()]
    assert fg.nn.utils.convert_conv2d_weight_memory_format(model, fg.channels_last) is model
    for conv in (model[0], model[2]):
        assert conv.weight.is_contiguous(memory_format=fg.channels_last) and not conv.weight.is_contiguous()
        assert isinstance(conv.weight, fg.nn.Parameter) and conv.weight.requires_grad
    assert model[3].weight.is_contiguous() and model[4].weight.is_contiguous()
    fg.nn.utils.memory_format.convert_conv3d_weight_memory_format(model, fg.channels_last_3d)
    assert model[3].weight.is_contiguous(memory_format=fg.channels_last_3d)
    for old, new in zip(before, model.parameters()):
        np.testing.assert_array_equal(old.numpy(), new.detach().numpy())
    x = fg.randn(1, 3, 6, 6)
    model[0](x).sum().backward()
    assert model[0].weight.grad.shape == (4, 3, 3, 3)

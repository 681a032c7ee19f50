"""Mixed-precision interface: ``autocast`` accepted and inert, ``GradScaler`` scaling, skipping and
rescheduling as PyTorch's does (compared with torch when it is installed)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch, torch


def test_autocast_is_accepted_and_changes_no_dtype():
    x = fg.randn(3, 3, requires_grad=True)
    with fg.autocast("cpu", dtype=fg.float32) as ctx:
        y = x @ x
    assert ctx.device == "cpu" and y.dtype == fg.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with fg.autocast("cpu", enabled=False), fg.amp.autocast("cpu", dtype=fg.float32):
            pass

    @fg.autocast("cpu", dtype=fg.float32)
    def square(t):
        return t * t

    square(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-6)
    with pytest.warns(UserWarning, match="CUDA is not available. Disabling autocast"):
        fg.cuda.amp.autocast()
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'tpu'"):
        fg.autocast("tpu")
    assert not fg.is_autocast_enabled() and not fg.amp.is_autocast_available("cpu")


def _scaled_training(T, grads_to_poison=()):
    """Six SGD steps of a linear model through a CPU GradScaler; the gradients of the steps in
    ``grads_to_poison`` get an inf. Returns the weights, scales and whether each step ran."""
    lin = T.nn.Linear(3, 2)
    with T.no_grad():
        lin.weight.copy_(T.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]))
        lin.bias.fill_(0.1)
    opt = T.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
    scaler = T.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    x, target = T.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]]), T.tensor([[1.0, 0.0], [0.0, 1.0]])
    scales, stepped = [], []
    for i in range(6):
        opt.zero_grad()
        loss = ((lin(x) - target) ** 2).mean()
        scaler.scale(loss).backward()
        if i in grads_to_poison:
            lin.bias.grad[0] = float("inf")
        before = lin.weight.detach().clone()
        scaler.step(opt)
        stepped.append(not bool((lin.weight.detach() == before).all()))
        scaler.update()
        scales.append(scaler.get_scale())
    return lin.weight.detach().numpy(), scales, stepped, scaler.state_dict()


def test_grad_scaler_unscales_skips_bad_steps_and_reschedules():
    weights, scales, stepped, state = _scaled_training(fg, grads_to_poison=(2,))
    assert stepped == [True, True, False, True, True, True]
    assert scales == [8.0, 16.0, 8.0, 8.0, 16.0, 16.0]
    assert state["scale"] == 16.0 and state["_growth_tracker"] == 1
    # Without poison, scaling by powers of two changes nothing: the same weights as plain SGD.
    plain = fg.nn.Linear(3, 2)
    with fg.no_grad():
        plain.weight.copy_(fg.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]))
        plain.bias.fill_(0.1)
    opt = fg.optim.SGD(plain.parameters(), lr=0.1, momentum=0.9)
    x, target = fg.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 0.0]]), fg.tensor([[1.0, 0.0], [0.0, 1.0]])
    for _ in range(6):
        opt.zero_grad()
        ((plain(x) - target) ** 2).mean().backward()
        opt.step()
    np.testing.assert_array_equal(_scaled_training(fg)[0], plain.weight.detach().numpy())


def test_grad_scaler_refuses_calls_out_of_order_and_round_trips_its_state():
    p = fg.nn.Parameter(fg.ones(2))
    opt = fg.optim.SGD([p], lr=0.1)
    scaler = fg.amp.GradScaler("cpu")
    scaler.scale(p.sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update"):
        scaler.step(opt)
    scaler.update()
    with pytest.raises(AssertionError, match="No inf checks were recorded"):
        scaler.update()
    other = fg.amp.GradScaler("cpu", init_scale=1.0)
    other.load_state_dict(scaler.state_dict())
    assert other.get_scale() == scaler.get_scale() == 65536.0
    disabled = fg.amp.GradScaler("cpu", enabled=False)
    loss = p.sum()
    assert disabled.scale(loss) is loss and disabled.get_scale() == 1.0 and disabled.state_dict() == {}
    with pytest.warns(UserWarning, match="CUDA is not available"):
        assert not fg.cuda.amp.GradScaler().is_enabled()


@pytest.mark.skipif(not has_torch, reason="torch is not installed")
def test_grad_scaler_matches_torch():
    ours, theirs = _scaled_training(fg, (2, 3)), _scaled_training(torch, (2, 3))
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    assert ours[1:] == theirs[1:]


def test_custom_fwd_and_bwd_decorate_function_passes():
    class Square(fg.autograd.Function):
        @staticmethod
        @fg.amp.custom_fwd(device_type="cpu", cast_inputs=fg.float32)
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @fg.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = fg.tensor([1.0, -3.0], dtype=fg.float64, requires_grad=True)
    with fg.autocast("cpu"):
        y = Square.apply(x)
    assert y.dtype == fg.float64  # autocast never enables, so nothing is cast
    y.sum().backward()
    assert x.grad.tolist() == [2.0, -6.0]
    with pytest.raises(TypeError, match="device_type"):
        fg.amp.custom_fwd(lambda ctx, x: x)
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        fg.amp.custom_bwd(lambda ctx, g: g, device_type=0)
    with pytest.warns(FutureWarning, match="custom_fwd\\(args...\\)` is deprecated"):
        decorated = fg.cuda.amp.custom_fwd(lambda ctx, x: x)
    assert decorated(None, 3) == 3

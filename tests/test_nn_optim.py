"""nn and optim: a training step matches torch given the same weights, and
the seeds' fine-tuning recipe (frozen base, new head) trains only the head."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ferrograd as torch
from ferrograd import nn, optim

from helpers import has_torch


def mlp(T, sizes=(6, 8, 8, 3)):
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers.append(T.nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(T.nn.ReLU())
    return T.nn.Sequential(*layers)


def copy_weights(src, dst, T):
    with T.no_grad():
        for (_, p), (_, q) in zip(src.named_parameters(), dst.named_parameters()):
            q.copy_(T.tensor(p.detach().numpy()))


def test_module_registration_and_naming():
    model = mlp(torch)
    names = [n for n, _ in model.named_parameters()]
    assert names == ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in model.parameters())
    assert repr(model).startswith("Sequential(\n  (0): Linear(in_features=6, out_features=8, bias=True)")
    model.eval()
    assert not model.training and not model[0].training
    model.train()
    assert model[2].training


def test_training_step_matches_torch():
    real = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    y = rng.integers(0, 3, 5)
    ref = mlp(real)
    ours = mlp(torch)
    copy_weights(ref, ours, torch)
    opt_ref = real.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
    opt = optim.SGD(ours.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
    for _ in range(4):
        losses = []
        for T, model, o in ((real, ref, opt_ref), (torch, ours, opt)):
            o.zero_grad()
            loss = T.nn.functional.cross_entropy(model(T.tensor(x)), T.tensor(y))
            loss.backward()
            o.step()
            losses.append(loss.item())
        assert abs(losses[0] - losses[1]) < 1e-5
    for p, q in zip(ref.parameters(), ours.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_mse_and_functional_pieces():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    t = torch.tensor([[0.0, 2.0], [3.0, 5.0]])
    loss = nn.functional.mse_loss(x, t)
    loss.backward()
    assert loss.item() == pytest.approx(0.5)
    np.testing.assert_allclose(x.grad.numpy(), [[0.5, 0.0], [0.0, -0.5]])
    s = nn.functional.softmax(x.detach(), dim=1)
    np.testing.assert_allclose(s.sum(1).numpy(), [1.0, 1.0], rtol=1e-6)


def test_finetuning_a_frozen_base_trains_only_the_head():
    model = mlp(torch, (4, 8, 8, 3))
    for param in model.parameters():
        param.requires_grad = False
    model[4] = nn.Linear(8, 2)  # parameters of new modules require grad by default
    base_before = [p.detach().clone() for p in model[0].parameters()]
    optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    x = torch.randn(16, 4)
    target = torch.randint(0, 2, (16,))
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        out = model(x)
        assert out.grad_fn is not None
        loss = nn.functional.cross_entropy(out, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert all(p.grad is None for p in model[0].parameters())
    for before, p in zip(base_before, model[0].parameters()):
        assert (before == p).all().item()
    assert model[4].weight.grad is not None


@pytest.mark.skipif(not has_torch, reason="torch not installed")
def test_module_double_and_float():
    model = nn.Linear(3, 2)
    model.double()
    assert model.weight.dtype == torch.float64
    out = model(torch.ones(1, 3, dtype=torch.float64))
    assert out.dtype == torch.float64
    model.float()
    assert model.weight.dtype == torch.float32


def unfused_sgd_steps(p, grads, *, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """torch's single-tensor SGD written out with the unfused in-place ops."""
    buf = None
    for g in grads:
        with torch.no_grad():
            g = -g if maximize else g
            if weight_decay != 0:
                g = g.add(p, alpha=weight_decay)
            if buf is None:
                buf = g.detach().clone()
            else:
                buf.mul_(momentum).add_(g, alpha=1 - dampening)
            step = g.add(buf, alpha=momentum) if nesterov else buf
            p.add_(step, alpha=-lr)
    return buf


@settings(max_examples=40, deadline=None)
@given(
    size=st.sampled_from([1, 7, 1000, 70_000]),
    dtype=st.sampled_from(["float32", "float64"]),
    momentum=st.sampled_from([0.5, 0.9]),
    dampening=st.sampled_from([0.0, 0.1]),
    weight_decay=st.sampled_from([0.0, 0.01]),
    nesterov=st.booleans(),
    maximize=st.booleans(),
    strided=st.booleans(),
)
def test_sgd_momentum_steps_round_exactly_as_the_unfused_ops(
    size, dtype, momentum, dampening, weight_decay, nesterov, maximize, strided
):
    """SGD's fused momentum step gives bitwise the parameters and buffers of
    the three unfused ops, on contiguous parameters (fused) and strided ones
    (not fusable, so unfused)."""
    assume(not nesterov or dampening == 0)
    rng = np.random.default_rng(size)
    dt = getattr(torch, dtype)
    start = rng.standard_normal(size * (2 if strided else 1))
    grads = [torch.tensor(rng.standard_normal(size), dtype=dt) for _ in range(3)]
    hyper = dict(
        lr=0.05,
        momentum=momentum,
        dampening=dampening,
        weight_decay=weight_decay,
        nesterov=nesterov,
        maximize=maximize,
    )

    def param():
        base = torch.tensor(start, dtype=dt)
        return (base[::2] if strided else base).requires_grad_()

    ours = param()
    opt = optim.SGD([ours], **hyper)
    for g in grads:
        ours.grad = g.clone()
        opt.step()
    want = param()
    buf = unfused_sgd_steps(want, grads, **hyper)
    assert np.array_equal(ours.detach().numpy(), want.detach().numpy())
    assert np.array_equal(opt.state[ours]["momentum_buffer"].numpy(), buf.numpy())


def test_fused_sgd_step_bumps_versions_and_matches_torch():
    """The fused step is an in-place write of the parameter and its buffer."""
    p = torch.randn(100_000, requires_grad=True)
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = torch.ones(100_000)
    opt.step()
    buf = opt.state[p]["momentum_buffer"]
    versions = (p._version, buf._version)
    p.grad = torch.full((100_000,), 2.0)
    opt.step()
    assert (p._version, buf._version) == (versions[0] + 1, versions[1] + 1)
    if has_torch:
        import torch as real

        q = real.tensor(p.detach().numpy(), requires_grad=True)
        ref = real.optim.SGD([q], lr=0.1, momentum=0.9)
        ref.state[q]["momentum_buffer"] = real.tensor(buf.numpy())
        q.grad = real.full((100_000,), 3.0)
        ref.step()
        p.grad = torch.full((100_000,), 3.0)
        opt.step()
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())

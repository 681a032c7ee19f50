"""optim.Adam and optim.AdamW: trajectories against a NumPy reference of the algorithm and
against torch, AMSGrad, weight decay of both kinds, maximize, complex parameters, state_dict
round trips and the hyper-parameter errors."""

import numpy as np
import pytest

import ferrograd as fg

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None


def reference_adam(w, grads, lr, betas, eps, weight_decay, amsgrad, maximize, decoupled):
    """Adam as published (with torch's placement of weight decay and AMSGrad), in float64."""
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    v_max = np.zeros_like(w)
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        if weight_decay and decoupled:
            w = w * (1 - lr * weight_decay)
        elif weight_decay:
            g = g + weight_decay * w
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        v_max = np.maximum(v_max, v)
        second = v_max if amsgrad else v
        denom = np.sqrt(second) / np.sqrt(1 - betas[1] ** t) + eps
        w = w - lr / (1 - betas[0] ** t) * m / denom
    return w


CONFIGS = [
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("Adam", {"lr": 0.1, "betas": (0.5, 0.9), "eps": 1e-3, "maximize": True}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.5, "amsgrad": True}),
]


@pytest.mark.parametrize("name,kwargs", CONFIGS)
def test_adam_follows_the_published_update(name, kwargs):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 4))
    grads = [rng.standard_normal((3, 4)) for _ in range(8)]
    w = fg.tensor(w0, requires_grad=True)
    opt = getattr(fg.optim, name)([w], **kwargs)
    for g in grads:
        w.grad = fg.tensor(g)
        opt.step()
    defaults = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "amsgrad": False, "maximize": False}
    defaults["weight_decay"] = 1e-2 if name == "AdamW" else 0.0
    hyper = {**defaults, **kwargs}
    want = reference_adam(w0, grads, decoupled=name == "AdamW", **hyper)
    np.testing.assert_allclose(w.detach().numpy(), want, rtol=1e-12, atol=1e-12)
    assert opt.state[w]["step"].item() == len(grads)
    assert ("max_exp_avg_sq" in opt.state[w]) == hyper["amsgrad"]


@pytest.mark.parametrize("name,kwargs", CONFIGS)
def test_adam_training_matches_torch(name, kwargs):
    if torch is None:
        pytest.skip("torch not installed")

    def train(T):
        w = T.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=T.float32, requires_grad=True)
        b = T.tensor(np.arange(3.0), dtype=T.float32, requires_grad=True)
        x = T.tensor(np.cos(np.arange(8.0)).reshape(2, 4), dtype=T.float32)
        opt = getattr(T.optim, name)([w, b], **kwargs)
        for _ in range(15):
            opt.zero_grad()
            ((x @ w.t() + b) ** 2).sum().backward()
            opt.step()
        return w.detach().numpy(), b.detach().numpy()

    for got, want in zip(train(fg), train(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_complex_parameters_update_as_their_real_parts():
    rng = np.random.default_rng(1)
    z0 = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    grads = [rng.standard_normal(3) + 1j * rng.standard_normal(3) for _ in range(5)]
    z = fg.tensor(z0, requires_grad=True)
    opt = fg.optim.Adam([z], lr=0.1)
    for g in grads:
        z.grad = fg.tensor(g)
        opt.step()
    pairs = lambda c: np.stack([c.real, c.imag], -1)  # noqa: E731
    kw = {
        "lr": 0.1,
        "betas": (0.9, 0.999),
        "eps": 1e-8,
        "weight_decay": 0,
        "amsgrad": False,
        "maximize": False,
    }
    want = reference_adam(pairs(z0), [pairs(g) for g in grads], decoupled=False, **kw)
    np.testing.assert_allclose(pairs(z.detach().numpy()), want, rtol=1e-12, atol=1e-12)


def test_params_without_gradients_are_left_alone():
    a = fg.ones(2, requires_grad=True)
    b = fg.ones(2, requires_grad=True)
    opt = fg.optim.Adam([a, b], lr=0.5)
    (a * 3).sum().backward()
    opt.step()
    np.testing.assert_array_equal(b.detach().numpy(), [1, 1])
    assert b not in opt.state
    assert (a.detach().numpy() < 1).all()


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"lr": -1.0}, "Invalid learning rate: -1.0"),
        ({"eps": -1.0}, "Invalid epsilon value: -1.0"),
        ({"betas": (1.0, 0.999)}, "Invalid beta parameter at index 0: 1.0"),
        ({"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1: -0.1"),
        ({"weight_decay": -0.1}, "Invalid weight_decay value: -0.1"),
    ],
)
def test_invalid_hyper_parameters(kwargs, message):
    for T in [fg] + ([torch] if torch is not None else []):
        for name in ("Adam", "AdamW"):
            with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
                getattr(T.optim, name)([T.zeros(2, requires_grad=True)], **kwargs)

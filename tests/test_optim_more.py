"""optim.RMSprop and optim.Adagrad: trajectories against a NumPy reference of each algorithm and
against torch for every combination of options, in float32 and float64; the state they keep,
state_dict round trips (AdamW's beside them), parameter groups, complex parameters and the hyper-parameter errors."""

import itertools

import numpy as np
import pytest

import ferrograd as fg

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")


def reference_rmsprop(w, grads, lr, alpha, eps, weight_decay, momentum, centered, maximize):
    """RMSprop as documented (square root before eps, centered variant subtracting the mean's square)."""
    v = np.zeros_like(w)
    g_avg = np.zeros_like(w)
    buf = np.zeros_like(w)
    for g in grads:
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * w
        v = alpha * v + (1 - alpha) * g * g
        v_hat = v
        if centered:
            g_avg = alpha * g_avg + (1 - alpha) * g
            v_hat = v - g_avg * g_avg
        step = g / (np.sqrt(v_hat) + eps)
        if momentum > 0:
            buf = momentum * buf + step
            step = buf
        w = w - lr * step
    return w


def reference_adagrad(w, grads, lr, lr_decay, weight_decay, initial_accumulator_value, eps, maximize):
    """Adagrad as documented: the rate decays as lr / (1 + (t - 1) * lr_decay)."""
    total = np.full_like(w, initial_accumulator_value)
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * w
        total = total + g * g
        w = w - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(total) + eps)
    return w


RMSPROP_CONFIGS = [
    {"lr": 0.01, "centered": c, "momentum": m, "weight_decay": wd, "maximize": mx}
    for c, m, wd, mx in itertools.product([False, True], [0, 0.9], [0, 0.1], [False, True])
]
ADAGRAD_CONFIGS = [
    {"lr": 0.1, "lr_decay": ld, "weight_decay": wd, "initial_accumulator_value": iav, "maximize": mx}
    for ld, wd, iav, mx in itertools.product([0, 0.05], [0, 0.1], [0, 0.5], [False, True])
]
RMSPROP_DEFAULTS = {"lr": 1e-2, "alpha": 0.99, "eps": 1e-8, "weight_decay": 0, "momentum": 0}
RMSPROP_DEFAULTS.update(centered=False, maximize=False)
ADAGRAD_DEFAULTS = {"lr": 1e-2, "lr_decay": 0, "weight_decay": 0, "initial_accumulator_value": 0}
ADAGRAD_DEFAULTS.update(eps=1e-10, maximize=False)


def grads_and_start(seed=0, shape=(3, 4), steps=8):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape), [rng.standard_normal(shape) for _ in range(steps)]


def run_with_grads(T, name, kwargs, w0, grads, dtype):
    dt = getattr(T, dtype)
    w = T.tensor(w0, dtype=dt, requires_grad=True)
    opt = getattr(T.optim, name)([w], **kwargs)
    for g in grads:
        w.grad = T.tensor(g, dtype=dt)
        opt.step()
    return w.detach().numpy(), opt


@pytest.mark.parametrize(
    "kwargs", RMSPROP_CONFIGS + [{"lr": 0.05, "alpha": 0.5, "eps": 1e-3, "momentum": 0.5}]
)
def test_rmsprop_follows_the_documented_update(kwargs):
    w0, grads = grads_and_start()
    got, opt = run_with_grads(fg, "RMSprop", kwargs, w0, grads, "float64")
    want = reference_rmsprop(w0, grads, **{**RMSPROP_DEFAULTS, **kwargs})
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert not np.allclose(got, w0)


@pytest.mark.parametrize("kwargs", ADAGRAD_CONFIGS + [{"eps": 1e-2}])
def test_adagrad_follows_the_documented_update(kwargs):
    w0, grads = grads_and_start(1)
    got, opt = run_with_grads(fg, "Adagrad", kwargs, w0, grads, "float64")
    want = reference_adagrad(w0, grads, **{**ADAGRAD_DEFAULTS, **kwargs})
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert not np.allclose(got, w0)


TOLERANCE = {"float32": {"rtol": 1e-5, "atol": 1e-6}, "float64": {"rtol": 1e-12, "atol": 1e-13}}


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "name,kwargs", [("RMSprop", k) for k in RMSPROP_CONFIGS] + [("Adagrad", k) for k in ADAGRAD_CONFIGS]
)
def test_trajectory_matches_torch(name, kwargs, dtype):
    w0, grads = grads_and_start(2, shape=(4, 5), steps=12)
    got, opt = run_with_grads(fg, name, kwargs, w0, grads, dtype)
    want, ref = run_with_grads(torch, name, kwargs, w0, grads, dtype)
    np.testing.assert_allclose(got, want, **TOLERANCE[dtype])
    (w,) = opt.param_groups[0]["params"]
    (w_ref,) = ref.param_groups[0]["params"]
    state, ref_state = opt.state[w], ref.state[w_ref]
    assert sorted(state) == sorted(ref_state)
    for key, value in ref_state.items():
        np.testing.assert_allclose(state[key].numpy(), value.numpy(), **TOLERANCE[dtype])
    assert state["step"].item() == len(grads)


@needs_torch
@pytest.mark.parametrize("name,kwargs", [("RMSprop", {"momentum": 0.8, "centered": True}), ("Adagrad", {})])
def test_training_with_backward_matches_torch(name, kwargs):
    def train(T):
        w = T.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=T.float32, requires_grad=True)
        b = T.tensor(np.arange(3.0), dtype=T.float32, requires_grad=True)
        x = T.tensor(np.cos(np.arange(8.0)).reshape(2, 4), dtype=T.float32)
        opt = getattr(T.optim, name)([{"params": [w]}, {"params": [b], "lr": 0.05}], lr=0.01, **kwargs)
        for _ in range(15):
            opt.zero_grad()
            ((x @ w.t() + b) ** 2).sum().backward()
            opt.step()
        return w.detach().numpy(), b.detach().numpy()

    for got, want in zip(train(fg), train(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@needs_torch
@pytest.mark.parametrize(
    "name,kwargs",
    [("RMSprop", {"momentum": 0.9, "centered": True, "weight_decay": 0.1}), ("Adagrad", {"lr_decay": 0.1})],
)
def test_complex_parameters_match_torch(name, kwargs):
    rng = np.random.default_rng(3)
    z0 = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    grads = [rng.standard_normal(4) + 1j * rng.standard_normal(4) for _ in range(6)]

    def run(T):
        z = T.tensor(z0, requires_grad=True)
        opt = getattr(T.optim, name)([z], **kwargs)
        for g in grads:
            z.grad = T.tensor(g)
            opt.step()
        return z.detach().numpy()

    np.testing.assert_allclose(run(fg), run(torch), rtol=1e-12, atol=1e-12)


def test_rmsprop_state_keys_follow_the_options():
    for momentum, centered in itertools.product([0, 0.5], [False, True]):
        w = fg.ones(3, requires_grad=True)
        opt = fg.optim.RMSprop([w], momentum=momentum, centered=centered)
        assert w not in opt.state  # created on the first step
        w.grad = fg.ones(3)
        opt.step()
        want = {"step", "square_avg"} | ({"momentum_buffer"} if momentum else set())
        want |= {"grad_avg"} if centered else set()
        assert set(opt.state[w]) == want


def test_adagrad_state_exists_from_construction():
    w = fg.ones(2, 3, requires_grad=True)
    opt = fg.optim.Adagrad([w], initial_accumulator_value=0.25)
    assert set(opt.state[w]) == {"step", "sum"}
    assert opt.state[w]["step"].item() == 0
    np.testing.assert_array_equal(opt.state[w]["sum"].numpy(), np.full((2, 3), 0.25))
    z = fg.zeros(2, dtype=fg.complex128, requires_grad=True)
    opt = fg.optim.Adagrad([z], initial_accumulator_value=0.5)
    np.testing.assert_array_equal(opt.state[z]["sum"].numpy(), [0.5 + 0.5j, 0.5 + 0.5j])


def test_adagrad_param_group_added_later_gets_state_on_its_first_step():
    a = fg.ones(2, requires_grad=True)
    b = fg.ones(2, requires_grad=True)
    opt = fg.optim.Adagrad([a], lr=0.5, initial_accumulator_value=1.0)
    opt.add_param_group({"params": [b], "lr": 0.1})
    assert b not in opt.state
    b.grad = fg.ones(2)
    opt.step()
    # sum = 1 + 1, step = 0.1 * 1 / (sqrt(2) + eps)
    np.testing.assert_allclose(b.detach().numpy(), 1 - 0.1 / (np.sqrt(2.0) + 1e-10), rtol=1e-6)
    np.testing.assert_array_equal(a.detach().numpy(), [1, 1])


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("RMSprop", {"lr": 0.1, "momentum": 0.9, "centered": True}),
        ("Adagrad", {"lr": 0.3, "lr_decay": 0.1}),
        ("AdamW", {"lr": 0.1, "amsgrad": True}),
    ],
)
def test_state_dict_round_trip_continues_the_same_trajectory(name, kwargs):
    def make():
        w = fg.tensor([1.0, -2.0, 3.0], requires_grad=True)
        return w, getattr(fg.optim, name)([w], **kwargs)

    def steps(w, opt, n):
        for _ in range(n):
            opt.zero_grad()
            (w * w * w).sum().backward()
            opt.step()

    w, opt = make()
    steps(w, opt, 6)
    straight = w.detach().numpy()
    w2, opt2 = make()
    steps(w2, opt2, 3)
    saved = opt2.state_dict()
    assert saved["param_groups"][0]["lr"] == kwargs["lr"]
    w3, opt3 = make()
    with fg.no_grad():
        w3.copy_(w2)
    opt3.load_state_dict(saved)
    assert opt3.state[w3]["step"].item() == 3
    steps(w3, opt3, 3)
    np.testing.assert_array_equal(w3.detach().numpy(), straight)
    assert not np.array_equal(straight, [1.0, -2.0, 3.0])


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad"])
def test_params_without_gradients_are_left_alone(name):
    a = fg.ones(2, requires_grad=True)
    b = fg.ones(2, requires_grad=True)
    opt = getattr(fg.optim, name)([a, b], lr=0.5)
    (a * 3).sum().backward()
    opt.step()
    np.testing.assert_array_equal(b.detach().numpy(), [1, 1])
    assert (a.detach().numpy() < 1).all()
    if name == "RMSprop":
        assert b not in opt.state
    else:
        assert opt.state[b]["step"].item() == 0


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad"])
def test_tensor_learning_rate(name):
    w = fg.ones(3, requires_grad=True)
    v = fg.ones(3, requires_grad=True)
    opt = getattr(fg.optim, name)([w], lr=fg.tensor(0.1))
    ref = getattr(fg.optim, name)([v], lr=0.1)
    for p, o in ((w, opt), (v, ref)):
        p.grad = fg.full((3,), 2.0)
        o.step()
    np.testing.assert_array_equal(w.detach().numpy(), v.detach().numpy())
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        getattr(fg.optim, name)([w], lr=fg.tensor([0.1, 0.2]))


def test_defaults_and_repr():
    w = fg.ones(2, requires_grad=True)
    rms = fg.optim.RMSprop([w])
    assert {k: rms.defaults[k] for k in RMSPROP_DEFAULTS} == RMSPROP_DEFAULTS
    assert rms.defaults["capturable"] is False and rms.defaults["foreach"] is None
    ada = fg.optim.Adagrad([w])
    assert {k: ada.defaults[k] for k in ADAGRAD_DEFAULTS} == ADAGRAD_DEFAULTS
    assert ada.defaults["fused"] is None
    assert "alpha: 0.99" in repr(rms) and "lr_decay: 0" in repr(ada)


@pytest.mark.parametrize(
    "name,kwargs,message",
    [
        ("RMSprop", {"lr": -1.0}, "Invalid learning rate: -1.0"),
        ("RMSprop", {"eps": -1.0}, "Invalid epsilon value: -1.0"),
        ("RMSprop", {"momentum": -0.5}, "Invalid momentum value: -0.5"),
        ("RMSprop", {"weight_decay": -0.1}, "Invalid weight_decay value: -0.1"),
        ("RMSprop", {"alpha": -0.9}, "Invalid alpha value: -0.9"),
        ("Adagrad", {"lr": -1.0}, "Invalid learning rate: -1.0"),
        ("Adagrad", {"lr_decay": -0.1}, "Invalid lr_decay value: -0.1"),
        ("Adagrad", {"weight_decay": -0.1}, "Invalid weight_decay value: -0.1"),
        ("Adagrad", {"initial_accumulator_value": -1}, "Invalid initial_accumulator_value value: -1"),
        ("Adagrad", {"eps": -1e-10}, "Invalid epsilon value: -1e-10"),
    ],
)
def test_invalid_hyper_parameters(name, kwargs, message):
    for T in [fg] + ([torch] if torch is not None else []):
        with pytest.raises(ValueError) as info:
            getattr(T.optim, name)([T.zeros(2, requires_grad=True)], **kwargs)
        assert str(info.value) == message


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"fused": True, "differentiable": True}, "`fused` does not support `differentiable`"),
        ({"fused": True, "foreach": True}, "`fused` and `foreach` cannot be `True` together."),
    ],
)
def test_adagrad_implementation_flags(kwargs, message):
    with pytest.raises(RuntimeError) as info:
        fg.optim.Adagrad([fg.zeros(2, requires_grad=True)], **kwargs)
    assert str(info.value) == message


def test_functional_forms_are_exported():
    from ferrograd.optim.adagrad import adagrad
    from ferrograd.optim.rmsprop import rmsprop

    w = fg.ones(2)
    with pytest.raises(RuntimeError, match="state_steps"):
        hyper = {"lr": 0.1, "alpha": 0.9, "eps": 1e-8, "weight_decay": 0, "momentum": 0}
        rmsprop([w], [w], [fg.zeros(2)], [], [], [0], centered=False, maximize=False, **hyper)
    total, step = fg.zeros(2), fg.tensor(0.0)
    adagrad([w], [fg.ones(2)], [total], [step], lr=0.5, weight_decay=0, lr_decay=0, eps=0, maximize=False)
    np.testing.assert_array_equal(w.numpy(), [0.5, 0.5])
    np.testing.assert_array_equal(total.numpy(), [1, 1])
    assert step.item() == 1

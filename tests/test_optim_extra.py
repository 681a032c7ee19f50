"""optim.Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD and LBFGS against torch: the parameters after
every step (fixed gradient streams, real and complex, and a small training run), the state they
keep and its state_dict, load_state_dict round trips, and the hyper-parameter errors."""

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch not installed")

CONFIGS = [
    ("Adamax", {}),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.1, "betas": (0.5, 0.9), "eps": 1e-3, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.1, "betas": (0.8, 0.99), "momentum_decay": 0.05, "maximize": True}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    # beta2 = 0.8 makes rho_inf = 9: the rectified branch never starts, only momentum SGD runs.
    ("RAdam", {"lr": 0.1, "betas": (0.5, 0.8), "eps": 1e-3, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "eps": 1e-4, "weight_decay": 0.1}),
    ("Adadelta", {"maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("Rprop", {"maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 1e-2, "alpha": 0.5, "t0": 3, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.1, "t0": 0, "maximize": True}),
]
NAMES = sorted({name for name, _ in CONFIGS})
STEPS = 12


def gradient_stream(seed, shape, complex_=False):
    """A start point and STEPS gradients; every third gradient repeats the previous one's signs
    negated, so that Rprop sees sign flips as well as agreements."""
    rng = np.random.default_rng(seed)

    def draw():
        real = rng.standard_normal(shape)
        return real + 1j * rng.standard_normal(shape) if complex_ else real

    grads = [draw() for _ in range(STEPS)]
    for i in range(2, STEPS, 3):
        grads[i] = -grads[i - 1] * 0.5
    return draw(), grads


def run_stream(T, name, kwargs, w0, grads):
    """Parameter values after each step of ``name`` fed the gradients ``grads``, and the optimizer."""
    w = T.tensor(w0, requires_grad=True)
    opt = getattr(T.optim, name)([w], **kwargs)
    trajectory = []
    for g in grads:
        w.grad = T.tensor(g)
        opt.step()
        trajectory.append(w.detach().clone().numpy())
    return trajectory, opt


def assert_same_state(state, ref_state, rtol=1e-12, atol=1e-14):
    """Same keys; tensors of the same shape and dtype and (close) values; other values equal."""
    assert sorted(state) == sorted(ref_state)
    for key, ref_value in ref_state.items():
        value = state[key]
        if isinstance(ref_value, torch.Tensor):
            assert isinstance(value, fg.Tensor), key
            assert tuple(value.shape) == tuple(ref_value.shape), key
            assert str(value.dtype).split(".")[-1] == str(ref_value.dtype).split(".")[-1], key
            np.testing.assert_allclose(value.numpy(), ref_value.numpy(), rtol=rtol, atol=atol, err_msg=key)
        elif isinstance(ref_value, list):
            assert len(value) == len(ref_value), key
            for item, ref_item in zip(value, ref_value):
                assert_same_state({key: item}, {key: ref_item}, rtol, atol)
        elif ref_value is None:
            assert value is None, key
        else:
            assert value == pytest.approx(ref_value, rel=rtol, abs=atol), key


def assert_same_state_dict(opt, ref):
    saved, ref_saved = opt.state_dict(), ref.state_dict()
    assert saved["param_groups"] == ref_saved["param_groups"]
    assert sorted(saved["state"]) == sorted(ref_saved["state"])
    for index, ref_state in ref_saved["state"].items():
        assert_same_state(saved["state"][index], ref_state)


@needs_torch
@pytest.mark.parametrize("name,kwargs", CONFIGS)
def test_each_step_matches_torch(name, kwargs):
    w0, grads = gradient_stream(0, (3, 4))
    got, opt = run_stream(fg, name, kwargs, w0, grads)
    want, ref = run_stream(torch, name, kwargs, w0, grads)
    for step, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14, err_msg=f"step {step + 1}")
    assert not np.allclose(got[-1], w0)
    assert_same_state_dict(opt, ref)
    (param,) = opt.param_groups[0]["params"]
    assert opt.state[param]["step"].item() == STEPS
    assert opt.state[param]["step"].dtype == fg.float32


@needs_torch
@pytest.mark.parametrize("name,kwargs", [c for c in CONFIGS if c[1]])
def test_complex_parameters_match_torch(name, kwargs):
    z0, grads = gradient_stream(1, (5,), complex_=True)
    got, opt = run_stream(fg, name, kwargs, z0, grads)
    want, ref = run_stream(torch, name, kwargs, z0, grads)
    for step, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14, err_msg=f"step {step + 1}")
    assert_same_state_dict(opt, ref)


def two_layer_loss(T, params, x, y):
    w1, b1, w2 = params
    return ((T.tanh(x @ w1.t() + b1) @ w2.t() - y) ** 2).mean()


def two_layer_problem(T):
    rng = np.random.default_rng(2)
    params = [
        T.tensor(rng.standard_normal(shape) * 0.5, requires_grad=True) for shape in [(4, 3), (4,), (1, 4)]
    ]
    x = T.tensor(rng.standard_normal((8, 3)))
    y = T.tensor(np.sin(rng.standard_normal((8, 1))))
    return params, x, y


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_training_two_layers_matches_torch(name):
    def train(T):
        params, x, y = two_layer_problem(T)
        # Two groups: the second layer at a tenth of the rate.
        opt = getattr(T.optim, name)([{"params": params[:2]}, {"params": params[2:], "lr": 0.002}], lr=0.02)
        losses = []
        for _ in range(10):
            opt.zero_grad()
            loss = two_layer_loss(T, params, x, y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return [p.detach().numpy() for p in params], losses, opt

    got, losses, opt = train(fg)
    want, ref_losses, ref = train(torch)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-10)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    assert losses[-1] < losses[0]
    assert_same_state_dict(opt, ref)


def resume_stream(T, name, kwargs, w0, grads, stop):
    """``stop`` steps, then a new optimizer loaded with the state_dict takes the remaining ones."""
    first, opt = run_stream(T, name, kwargs, w0, grads[:stop])
    w = T.tensor(first[-1], requires_grad=True)
    resumed = getattr(T.optim, name)([w], **kwargs)
    resumed.load_state_dict(opt.state_dict())
    assert resumed.state[w]["step"].item() == stop
    trajectory = []
    for g in grads[stop:]:
        w.grad = T.tensor(g)
        resumed.step()
        trajectory.append(w.detach().clone().numpy())
    return trajectory


@pytest.mark.parametrize("name,kwargs", CONFIGS)
def test_state_dict_round_trip_continues_the_same_trajectory(name, kwargs):
    w0, grads = gradient_stream(3, (2, 3))
    half = STEPS // 2
    resumed = resume_stream(fg, name, kwargs, w0, grads, half)
    if has_torch:
        want = resume_stream(torch, name, kwargs, w0, grads, half)
        np.testing.assert_allclose(resumed, want, rtol=1e-12, atol=1e-14)
    if name not in ("NAdam", "ASGD"):
        # Exactly the uninterrupted run. NAdam's mu_product and ASGD's eta and mu are float32
        # scalars that loading casts to the parameter's dtype, as torch does, so they round differently.
        straight, _ = run_stream(fg, name, kwargs, w0, grads)
        np.testing.assert_array_equal(resumed, straight[half:])


@pytest.mark.parametrize("name", NAMES)
def test_params_without_gradients_are_left_alone(name):
    a = fg.ones(2, requires_grad=True)
    b = fg.ones(2, requires_grad=True)
    opt = getattr(fg.optim, name)([a, b], lr=0.5)
    (a * 3).sum().backward()
    opt.step()
    np.testing.assert_array_equal(b.detach().numpy(), [1, 1])
    assert b not in opt.state
    assert (a.detach().numpy() < 1).all()


@needs_torch
@pytest.mark.parametrize("name", NAMES)
def test_defaults_match_torch(name):
    opt = getattr(fg.optim, name)([fg.zeros(2, requires_grad=True)])
    ref = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)])
    assert opt.defaults == ref.defaults


@needs_torch
@pytest.mark.parametrize(
    "name,kwargs,message",
    [
        (name, {"lr": -1.0}, "Invalid learning rate: -1.0")
        for name in ["Adamax", "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD", "LBFGS"]
    ]
    + [
        (name, {"eps": -1e-8}, "Invalid epsilon value: -1e-08")
        for name in ["Adamax", "NAdam", "RAdam", "Adadelta"]
    ]
    + [
        (name, {"betas": (1.0, 0.999)}, "Invalid beta parameter at index 0: 1.0")
        for name in ["Adamax", "NAdam", "RAdam"]
    ]
    + [
        (name, {"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1: -0.1")
        for name in ["Adamax", "NAdam", "RAdam"]
    ]
    + [
        (name, {"weight_decay": -0.1}, "Invalid weight_decay value: -0.1")
        for name in ["Adamax", "NAdam", "RAdam", "Adadelta", "ASGD"]
    ]
    + [
        ("NAdam", {"momentum_decay": -0.1}, "Invalid momentum_decay value: -0.1"),
        ("Adadelta", {"rho": 1.5}, "Invalid rho value: 1.5"),
        ("Rprop", {"etas": (1.0, 1.2)}, "Invalid eta values: 1.0, 1.2"),
        ("Rprop", {"etas": (0.5, 0.9)}, "Invalid eta values: 0.5, 0.9"),
    ]
    + [(name, {"lr": "tensor"}, "Tensor lr must be 1-element") for name in ["RAdam", "Rprop", "LBFGS"]],
)
def test_invalid_hyper_parameters_match_torch(name, kwargs, message):
    for T in (fg, torch):
        hyper = {"lr": T.tensor([0.1, 0.2])} if kwargs.get("lr") == "tensor" else kwargs
        with pytest.raises(ValueError) as info:
            getattr(T.optim, name)([T.zeros(2, requires_grad=True)], **hyper)
        assert str(info.value) == message


def rosenbrock(T, x, y):
    return (1 - x) ** 2 + 100 * (y - x**2) ** 2


LBFGS_CONFIGS = [
    {"lr": 0.1},
    {"lr": 0.5, "max_iter": 7, "history_size": 3},
    {"lr": 1, "line_search_fn": "strong_wolfe"},
    {"lr": 1, "line_search_fn": "strong_wolfe", "max_iter": 10, "max_eval": 12, "history_size": 2},
    {"lr": 1, "line_search_fn": "strong_wolfe", "tolerance_change": 1e-4, "tolerance_grad": 1e-3},
]


def run_lbfgs(T, kwargs, steps=4):
    """Rosenbrock from (-1.5, 2) in two parameter tensors, beside one the loss does not use (its
    gradient counts as zeros); after each ``step``: the parameters, the returned loss and the
    closure calls made."""
    x = T.tensor([-1.5], dtype=T.float64, requires_grad=True)
    unused = T.zeros(2, dtype=T.float64, requires_grad=True)
    y = T.tensor(np.array([2.0]), requires_grad=True)
    opt = T.optim.LBFGS([x, unused, y], **kwargs)
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = rosenbrock(T, x, y).sum()
        loss.backward()
        return loss

    history = []
    for _ in range(steps):
        loss = opt.step(closure)
        history.append((x.item(), y.item(), loss.item(), len(calls)))
    return history, opt


@needs_torch
@pytest.mark.parametrize("kwargs", LBFGS_CONFIGS)
def test_lbfgs_matches_torch(kwargs):
    got, opt = run_lbfgs(fg, kwargs)
    want, ref = run_lbfgs(torch, kwargs)
    for step, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g[:3], w[:3], rtol=1e-10, atol=1e-12, err_msg=f"step {step + 1}")
        assert g[3] == w[3], f"closure calls after step {step + 1}"
    assert got[0][:2] != (-1.5, 2.0)
    assert_same_state_dict(opt, ref)


@needs_torch
def test_lbfgs_strong_wolfe_converges_like_torch():
    got, opt = run_lbfgs(fg, {"line_search_fn": "strong_wolfe"}, steps=8)
    want, _ = run_lbfgs(torch, {"line_search_fn": "strong_wolfe"}, steps=8)
    np.testing.assert_allclose([g[:3] for g in got], [w[:3] for w in want], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got[-1][:2], [1.0, 1.0], atol=1e-5)


@needs_torch
@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_complex_parameter_matches_torch(line_search_fn):
    def run(T):
        z = T.tensor(np.array([1.0 - 2.0j, 0.5 + 0.5j]), requires_grad=True)
        target = T.tensor(np.array([0.3 + 0.1j, -1.0 + 2.0j]))
        opt = T.optim.LBFGS([z], lr=0.5, max_iter=5, line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = ((z - target).abs() ** 2).sum() + ((z * z - target).abs() ** 2).sum()
            loss.backward()
            return loss

        for _ in range(3):
            opt.step(closure)
        return z.detach().numpy(), opt

    got, opt = run(fg)
    want, ref = run(torch)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert_same_state_dict(opt, ref)


def test_lbfgs_state_dict_round_trip_continues_the_same_trajectory():
    straight, _ = run_lbfgs(fg, {"lr": 0.5, "history_size": 3}, steps=4)
    _, opt = run_lbfgs(fg, {"lr": 0.5, "history_size": 3}, steps=2)
    saved = opt.state_dict()
    x, y = (fg.tensor([v], dtype=fg.float64, requires_grad=True) for v in straight[1][:2])
    resumed = fg.optim.LBFGS(
        [x, fg.zeros(2, dtype=fg.float64, requires_grad=True), y], lr=0.5, history_size=3
    )
    resumed.load_state_dict(saved)

    def closure():
        resumed.zero_grad()
        loss = rosenbrock(fg, x, y).sum()
        loss.backward()
        return loss

    for want in straight[2:]:
        resumed.step(closure)
        assert (x.item(), y.item()) == want[:2]


def test_lbfgs_usage_errors():
    w = fg.zeros(2, requires_grad=True)
    opt = fg.optim.LBFGS([w])
    with pytest.raises(TypeError):
        opt.step()  # the closure is required
    with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options \(parameter groups\)"):
        fg.optim.LBFGS([{"params": [w]}, {"params": [fg.zeros(1, requires_grad=True)]}])

    def closure():
        opt.zero_grad()
        loss = ((w - 1) ** 2).sum()
        loss.backward()
        return loss

    opt = fg.optim.LBFGS([w], line_search_fn="backtracking")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


def test_lbfgs_stops_at_a_stationary_point():
    w = fg.ones(3, requires_grad=True)
    opt = fg.optim.LBFGS([w])

    def closure():
        opt.zero_grad()
        loss = ((w - 1) ** 2).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 0
    assert opt.state[w] == {"func_evals": 1, "n_iter": 0}

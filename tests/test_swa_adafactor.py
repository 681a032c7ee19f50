"""optim.Adafactor and optim.swa_utils against torch: Adafactor's parameters after every step
(vectors, matrices and batches of matrices), its state and state_dict, its argument errors;
AveragedModel (SWA, EMA, buffers), SWALR's learning rates and update_bn's statistics."""

import numpy as np
import pytest
from test_optim_extra import assert_same_state_dict

import ferrograd as fg
from ferrograd.optim import swa_utils

from helpers import has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch not installed")

SHAPES = [(5,), (4, 3), (2, 3, 4)]
ADAFACTOR_CONFIGS = [
    {},
    {"lr": 0.05, "weight_decay": 0.1},
    {"lr": 0.1, "beta2_decay": -0.5, "eps": (1e-6, 1e-2), "d": 2.0, "maximize": True},
    {"foreach": True, "lr": 0.03},
]
STEPS = 10


def run_adafactor(T, kwargs, starts, grads):
    params = [T.tensor(w, requires_grad=True) for w in starts]
    opt = T.optim.Adafactor(params, **kwargs)
    trajectory = []
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = T.tensor(g)
        opt.step()
        trajectory.append([p.detach().clone().numpy() for p in params])
    return trajectory, opt


def adafactor_stream(seed):
    rng = np.random.default_rng(seed)
    starts = [rng.standard_normal(s) for s in SHAPES]
    return starts, [[rng.standard_normal(s) for s in SHAPES] for _ in range(STEPS)]


@needs_torch
@pytest.mark.parametrize("kwargs", ADAFACTOR_CONFIGS)
def test_adafactor_each_step_matches_torch(kwargs):
    starts, grads = adafactor_stream(1)
    ours, opt = run_adafactor(fg, kwargs, starts, grads)
    ref, ref_opt = run_adafactor(torch, kwargs, starts, grads)
    for step, (mine, theirs) in enumerate(zip(ours, ref)):
        for a, b in zip(mine, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"step {step}")
    assert_same_state_dict(opt, ref_opt)
    assert opt.defaults == ref_opt.defaults


@needs_torch
def test_adafactor_float32_state_and_default_eps_match_torch():
    starts, grads = adafactor_stream(2)
    starts = [s.astype(np.float32) for s in starts]
    grads = [[g.astype(np.float32) for g in gs] for gs in grads]
    ours, opt = run_adafactor(fg, {}, starts, grads)
    ref, ref_opt = run_adafactor(torch, {}, starts, grads)
    for a, b in zip(ours[-1], ref[-1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for key, state in opt.state_dict()["state"].items():
        assert sorted(state) == sorted(ref_opt.state_dict()["state"][key])
        for name, value in state.items():
            assert (
                str(value.dtype).split(".")[-1]
                == str(ref_opt.state_dict()["state"][key][name].dtype).split(".")[-1]
            )


def test_adafactor_state_dict_round_trip_continues_the_same_trajectory():
    starts, grads = adafactor_stream(3)
    full, _ = run_adafactor(fg, {"lr": 0.05}, starts, grads)
    first, opt = run_adafactor(fg, {"lr": 0.05}, starts, grads[:4])
    params = [fg.tensor(w, requires_grad=True) for w in first[-1]]
    resumed = fg.optim.Adafactor(params, lr=0.05)
    resumed.load_state_dict(opt.state_dict())
    for step_grads, expected in zip(grads[4:], full[4:]):
        for p, g in zip(params, step_grads):
            p.grad = fg.tensor(g)
        resumed.step()
        for p, e in zip(params, expected):
            np.testing.assert_allclose(p.detach().numpy(), e, rtol=1e-12)


@needs_torch
@pytest.mark.parametrize(
    "kwargs",
    [
        {"lr": -1.0},
        {"beta2_decay": 0.5},
        {"eps": (-1.0, 1e-3)},
        {"eps": (None, -1.0)},
        {"d": 0.5},
        {"weight_decay": -0.1},
    ],
)
def test_adafactor_invalid_arguments_match_torch(kwargs):
    with pytest.raises(ValueError) as ref:
        torch.optim.Adafactor([torch.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as ours:
        fg.optim.Adafactor([fg.zeros(2, requires_grad=True)], **kwargs)
    assert str(ours.value) == str(ref.value)


def test_adafactor_rejects_complex_parameters():
    w = fg.zeros(2, dtype=fg.complex128, requires_grad=True)
    w.grad = fg.ones(2, dtype=fg.complex128)
    with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
        fg.optim.Adafactor([w]).step()


# ---- AveragedModel -------------------------------------------------------------------------


def make_net(T):
    return T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4), T.nn.Linear(4, 2))


def copy_weights(src, dst):
    """Load torch module ``src``'s state into ferrograd module ``dst``."""
    dst.load_state_dict({k: fg.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})


def perturb(T, net, rng, data):
    """Deterministic changes to the weights and (through a forward in training mode) buffers."""
    with T.no_grad():
        for p in net.parameters():
            p.add_(T.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
    net(T.tensor(data, dtype=T.float32))


AVERAGE_CONFIGS = [
    ({}, {}),
    ({"multi_avg_fn": "ema_multi"}, {}),
    ({"avg_fn": "ema"}, {"use_buffers": True}),
    ({"multi_avg_fn": "ema_multi"}, {"use_buffers": True}),
    ({"multi_avg_fn": "swa_multi"}, {}),
    ({"avg_fn": "swa"}, {}),
]


def averaging(T, fn):
    utils = T.optim.swa_utils
    return {
        "ema_multi": lambda: utils.get_ema_multi_avg_fn(0.8),
        "ema": lambda: utils.get_ema_avg_fn(0.7),
        "swa_multi": utils.get_swa_multi_avg_fn,
        "swa": utils.get_swa_avg_fn,
    }[fn]()


@needs_torch
@pytest.mark.parametrize("fns,kwargs", AVERAGE_CONFIGS)
def test_averaged_model_matches_torch(fns, kwargs):
    torch.manual_seed(0)
    ref_net = make_net(torch)
    net = make_net(fg)
    copy_weights(ref_net, net)
    ref_avg = torch.optim.swa_utils.AveragedModel(
        ref_net, **{k: averaging(torch, v) for k, v in fns.items()}, **kwargs
    )
    avg = swa_utils.AveragedModel(net, **{k: averaging(fg, v) for k, v in fns.items()}, **kwargs)
    rng_ref, rng = np.random.default_rng(5), np.random.default_rng(5)
    data = np.random.default_rng(6).standard_normal((8, 3))
    for _ in range(4):
        perturb(torch, ref_net, rng_ref, data)
        perturb(fg, net, rng, data)
        ref_avg.update_parameters(ref_net)
        avg.update_parameters(net)
        ref_state, state = ref_avg.state_dict(), avg.state_dict()
        assert list(state) == list(ref_state)
        for key, value in ref_state.items():
            np.testing.assert_allclose(state[key].numpy(), value.numpy(), rtol=1e-5, atol=1e-6, err_msg=key)
    x = np.random.default_rng(7).standard_normal((5, 3))
    avg.eval()
    ref_avg.eval()
    np.testing.assert_allclose(
        avg(fg.tensor(x, dtype=fg.float32)).detach().numpy(),
        ref_avg(torch.tensor(x, dtype=torch.float32)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


def test_averaged_model_copies_the_model_and_checks_arguments():
    net = fg.nn.Linear(2, 2)
    avg = swa_utils.AveragedModel(net)
    assert avg.module is not net and avg.module.weight is not net.weight
    assert int(avg.n_averaged) == 0 and avg.n_averaged.dtype == fg.int64
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        swa_utils.AveragedModel(
            net, avg_fn=swa_utils.get_swa_avg_fn(), multi_avg_fn=swa_utils.get_swa_multi_avg_fn()
        )


@needs_torch
@pytest.mark.parametrize("name", ["get_ema_avg_fn", "get_ema_multi_avg_fn"])
def test_ema_decay_errors_match_torch(name):
    with pytest.raises(ValueError) as ref:
        getattr(torch.optim.swa_utils, name)(1.5)
    with pytest.raises(ValueError) as ours:
        getattr(swa_utils, name)(1.5)
    assert str(ours.value) == str(ref.value)


# ---- SWALR and update_bn -------------------------------------------------------------------


def swalr_lrs(T, kwargs, steps=8):
    w1 = T.zeros(2, requires_grad=True)
    w2 = T.zeros(2, requires_grad=True)
    opt = T.optim.SGD([{"params": [w1]}, {"params": [w2], "lr": 0.3}], lr=0.1)
    sched = T.optim.swa_utils.SWALR(opt, **kwargs)
    lrs = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
    return lrs, sched


@needs_torch
@pytest.mark.parametrize(
    "kwargs",
    [
        {"swa_lr": 0.05},
        {"swa_lr": [0.05, 0.01], "anneal_epochs": 3, "anneal_strategy": "linear"},
        {"swa_lr": 0.02, "anneal_epochs": 0},
        {"swa_lr": (0.2, 0.5), "anneal_epochs": 5, "anneal_strategy": "cos"},
    ],
)
def test_swalr_matches_torch(kwargs):
    ours, sched = swalr_lrs(fg, kwargs)
    ref, ref_sched = swalr_lrs(torch, kwargs)
    np.testing.assert_allclose(np.array(ours), np.array(ref), rtol=1e-12)
    assert sorted(sched.state_dict()) == sorted(ref_sched.state_dict())
    assert [g["swa_lr"] for g in sched.optimizer.param_groups] == [
        g["swa_lr"] for g in ref_sched.optimizer.param_groups
    ]


@needs_torch
@pytest.mark.parametrize(
    "kwargs",
    [
        {"swa_lr": 0.1, "anneal_strategy": "exp"},
        {"swa_lr": 0.1, "anneal_epochs": -1},
        {"swa_lr": 0.1, "anneal_epochs": 1.5},
        {"swa_lr": [0.1, 0.2, 0.3]},
    ],
)
def test_swalr_errors_match_torch(kwargs):
    def build(T):
        opt = T.optim.SGD(
            [{"params": [T.zeros(1, requires_grad=True)]}, {"params": [T.zeros(1, requires_grad=True)]}],
            lr=0.1,
        )
        T.optim.swa_utils.SWALR(opt, **kwargs)

    with pytest.raises(ValueError) as ref:
        build(torch)
    with pytest.raises(ValueError) as ours:
        build(fg)
    assert str(ours.value) == str(ref.value)


def test_swalr_state_dict_round_trip():
    _, sched = swalr_lrs(fg, {"swa_lr": 0.05, "anneal_strategy": "linear"}, steps=3)
    _, other = swalr_lrs(fg, {"swa_lr": 0.05}, steps=1)
    other.load_state_dict(sched.state_dict())
    assert other.anneal_func(0.25) == pytest.approx(0.25)  # linear now, as the saved one


@needs_torch
@pytest.mark.parametrize("as_tuples", [False, True])
def test_update_bn_matches_torch(as_tuples):
    torch.manual_seed(1)
    ref_net = make_net(torch)
    net = make_net(fg)
    copy_weights(ref_net, net)
    batches = [np.random.default_rng(i).standard_normal((6, 3)) for i in range(3)]

    def loader(T):
        tensors = [T.tensor(b, dtype=T.float32) for b in batches]
        return [(t, 0) for t in tensors] if as_tuples else tensors

    for model in (ref_net, net):
        model.eval()
    torch.optim.swa_utils.update_bn(loader(torch), ref_net)
    swa_utils.update_bn(loader(fg), net)
    assert not net.training and net[1].momentum == ref_net[1].momentum == 0.1
    for key, value in ref_net.state_dict().items():
        np.testing.assert_allclose(
            net.state_dict()[key].numpy(), value.numpy(), rtol=1e-5, atol=1e-6, err_msg=key
        )

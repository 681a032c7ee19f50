"""optim.lr_scheduler: every scheduler's learning rates (and cycled momentum) step for step against
torch, their closed forms against the formulas they stand for, state_dict round trips, the warnings
about the order of the steps, argument errors, and a small training run with a schedule."""

import math
import warnings

import numpy as np
import pytest

import ferrograd as fg
from ferrograd import nn
from ferrograd.optim import lr_scheduler

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")


def make_optimizer(T, name="SGD", lrs=(0.1, 0.5)):
    """Two parameter groups with different learning rates (the second overrides the default)."""
    a = T.zeros(2, requires_grad=True)
    b = T.zeros(3, requires_grad=True)
    extra = {"momentum": 0.9} if name in ("SGD", "RMSprop") else {}
    return getattr(T.optim, name)([{"params": [a]}, {"params": [b], "lr": lrs[1]}], lr=lrs[0], **extra)


def record(T, build, steps=60, name="SGD", metrics=None):
    """Learning rates (and momenta) after construction and after each ``optimizer.step(); sched.step()``."""
    opt = make_optimizer(T, name)
    sched = build(T.optim.lr_scheduler, opt)

    def snapshot():
        lrs = [float(lr) for lr in sched.get_last_lr()]
        assert lrs == [float(g["lr"]) for g in opt.param_groups]
        momenta = [g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]
        return lrs, momenta

    seen = [snapshot()]
    for i in range(steps):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
        seen.append(snapshot())
    return seen, sched


SCHEDULERS = {
    "LambdaLR": lambda S, o: S.LambdaLR(o, lambda e: 1 / (1 + e)),
    "LambdaLR-per-group": lambda S, o: S.LambdaLR(o, [lambda e: 0.9**e, lambda e: 1 + math.sin(e)]),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95),
    "MultiplicativeLR-per-group": lambda S, o: S.MultiplicativeLR(o, [lambda e: 0.9, lambda e: 1.01 + e % 3]),
    "StepLR": lambda S, o: S.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, milestones=[3, 10, 10, 25], gamma=0.3),
    "ConstantLR": lambda S, o: S.ConstantLR(o, factor=0.25, total_iters=6),
    "ConstantLR-default": lambda S, o: S.ConstantLR(o),
    "LinearLR": lambda S, o: S.LinearLR(o, start_factor=0.1, end_factor=0.8, total_iters=13),
    "LinearLR-down": lambda S, o: S.LinearLR(o, start_factor=1.0, end_factor=0.05, total_iters=20),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, gamma=0.93),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, T_max=9, eta_min=0.01),
    "CosineAnnealingLR-zero-min": lambda S, o: S.CosineAnnealingLR(o, T_max=20),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o, total_iters=17, power=2.0),
    "PolynomialLR-sqrt": lambda S, o: S.PolynomialLR(o, total_iters=30, power=0.5),
    "CosineAnnealingWarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=5, eta_min=0.001),
    "CosineAnnealingWarmRestarts-mult": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=61),
    "OneCycleLR-linear-3phase": lambda S, o: S.OneCycleLR(
        o,
        max_lr=0.8,
        epochs=6,
        steps_per_epoch=11,
        anneal_strategy="linear",
        three_phase=True,
        pct_start=0.25,
    ),
    "OneCycleLR-no-momentum": lambda S, o: S.OneCycleLR(o, max_lr=0.3, total_steps=70, cycle_momentum=False),
    "CyclicLR": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=4, step_size_down=6),
    "CyclicLR-triangular2": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=5, mode="triangular2"),
    "CyclicLR-exp_range": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.97),
    "CyclicLR-scale_fn": lambda S, o: S.CyclicLR(
        o, 0.01, 0.1, step_size_up=4, scale_fn=lambda x: 1 / (1 + x / 10), scale_mode="iterations"
    ),
    "SequentialLR": lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=8), S.CosineAnnealingLR(o, T_max=30)], milestones=[8]
    ),
    "SequentialLR-three": lambda S, o: S.SequentialLR(
        o,
        [S.ConstantLR(o, factor=0.5, total_iters=4), S.ExponentialLR(o, 0.9), S.StepLR(o, 5, 0.5)],
        milestones=[6, 20],
    ),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.1, total_iters=5), S.ExponentialLR(o, gamma=0.9)]
    ),
    "ChainedScheduler-warmup-cosine": lambda S, o: S.ChainedScheduler(
        [S.LinearLR(o, start_factor=0.2, total_iters=10), S.CosineAnnealingLR(o, T_max=15)], optimizer=o
    ),
}


@needs_torch
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
@pytest.mark.parametrize("key", sorted(SCHEDULERS))
def test_learning_rates_match_torch(key, optimizer):
    got, sched = record(fg, SCHEDULERS[key], name=optimizer)
    want, ref = record(torch, SCHEDULERS[key], name=optimizer)
    for (lrs, momenta), (ref_lrs, ref_momenta) in zip(got, want):
        np.testing.assert_allclose(lrs, ref_lrs, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(momenta, ref_momenta, rtol=1e-13, atol=1e-15)
    assert len({tuple(lrs) for lrs, _ in got}) > 1  # the schedule changed something
    if hasattr(ref, "last_epoch"):
        assert sched.last_epoch == ref.last_epoch


@needs_torch
@pytest.mark.parametrize(
    "kwargs,metrics",
    [
        ({"patience": 2}, [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8] * 3),
        ({"mode": "max", "factor": 0.5, "patience": 1, "cooldown": 2}, list(np.sin(np.arange(40) / 3.0))),
        (
            {"threshold_mode": "abs", "threshold": 0.05, "patience": 0, "min_lr": [0.01, 0.2]},
            list(1 / (1 + np.arange(40) / 10.0)),
        ),
        ({"mode": "max", "threshold_mode": "abs", "factor": 0.3, "patience": 3, "eps": 0.05}, [0.0] * 40),
    ],
)
def test_reduce_on_plateau_matches_torch(kwargs, metrics):
    got, sched = record(fg, lambda S, o: S.ReduceLROnPlateau(o, **kwargs), len(metrics), metrics=metrics)
    want, ref = record(torch, lambda S, o: S.ReduceLROnPlateau(o, **kwargs), len(metrics), metrics=metrics)
    np.testing.assert_allclose([g[0] for g in got], [w[0] for w in want], rtol=1e-15)
    assert len({tuple(lrs) for lrs, _ in got}) > 1
    assert (sched.best, sched.num_bad_epochs, sched.cooldown_counter, sched.last_epoch) == (
        ref.best,
        ref.num_bad_epochs,
        ref.cooldown_counter,
        ref.last_epoch,
    )


CLOSED_FORMS = {
    "StepLR": (lambda S, o: S.StepLR(o, 4, 0.5), lambda lr, e: lr * 0.5 ** (e // 4)),
    "MultiStepLR": (
        lambda S, o: S.MultiStepLR(o, [3, 7, 7], 0.1),
        lambda lr, e: lr * 0.1 ** ((e >= 3) + 2 * (e >= 7)),
    ),
    "ConstantLR": (lambda S, o: S.ConstantLR(o, 0.5, 4), lambda lr, e: lr * (0.5 if e < 4 else 1.0)),
    "LinearLR": (lambda S, o: S.LinearLR(o, 0.2, 1.0, 8), lambda lr, e: lr * (0.2 + 0.8 * min(e, 8) / 8)),
    "ExponentialLR": (lambda S, o: S.ExponentialLR(o, 0.9), lambda lr, e: lr * 0.9**e),
    "PolynomialLR": (lambda S, o: S.PolynomialLR(o, 10, 2.0), lambda lr, e: lr * (1 - min(e, 10) / 10) ** 2),
    "CosineAnnealingLR": (
        lambda S, o: S.CosineAnnealingLR(o, 10, 0.001),
        lambda lr, e: 0.001 + (lr - 0.001) * (1 + math.cos(math.pi * e / 10)) / 2,
    ),
    "LambdaLR": (lambda S, o: S.LambdaLR(o, lambda e: 1 / (e + 1)), lambda lr, e: lr / (e + 1)),
    "MultiplicativeLR": (lambda S, o: S.MultiplicativeLR(o, lambda e: 0.8), lambda lr, e: lr * 0.8**e),
    "CosineAnnealingWarmRestarts": (
        lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2),
        lambda lr, e: lr * (1 + math.cos(math.pi * _sgdr_position(e, 4, 2))) / 2,
    ),
}


def _sgdr_position(epoch, t0, mult):
    """Fraction of the current SGDR period reached at ``epoch``."""
    period = t0
    while epoch >= period:
        epoch -= period
        period *= mult
    return epoch / period


@pytest.mark.parametrize("key", sorted(CLOSED_FORMS))
def test_recursive_steps_follow_the_closed_form(key):
    build, formula = CLOSED_FORMS[key]
    seen, _ = record(fg, build, steps=30)
    for epoch, (lrs, _) in enumerate(seen):
        for lr, base in zip(lrs, (0.1, 0.5)):
            assert lr == pytest.approx(formula(base, epoch), rel=1e-9, abs=1e-12), epoch


@pytest.mark.parametrize("key", sorted(set(CLOSED_FORMS) - {"LambdaLR", "MultiplicativeLR"}))
def test_step_with_an_epoch_uses_the_closed_form(key):
    build, formula = CLOSED_FORMS[key]
    opt = make_optimizer(fg)
    sched = build(lr_scheduler, opt)
    opt.step()
    for epoch in (5, 2, 11, 0, 9):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the epoch argument is deprecated
            sched.step(epoch)
        assert sched.last_epoch == epoch
        for lr, base in zip(sched.get_last_lr(), (0.1, 0.5)):
            assert lr == pytest.approx(formula(base, epoch), rel=1e-9, abs=1e-12)


@needs_torch
@pytest.mark.parametrize("key", sorted(set(CLOSED_FORMS) - {"MultiplicativeLR"}))
def test_step_with_an_epoch_matches_torch(key):
    build, _ = CLOSED_FORMS[key]

    def run(T):
        opt = make_optimizer(T)
        sched = build(T.optim.lr_scheduler, opt)
        opt.step()
        out = []
        for epoch in (3, 8, 1, 17, 17, 4):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # the epoch argument is deprecated
                sched.step(epoch)
            out.append(sched.get_last_lr())
            sched.step()
            out.append(sched.get_last_lr())
        return out

    np.testing.assert_allclose(run(fg), run(torch), rtol=1e-13, atol=1e-15)


def test_step_with_an_epoch_warns_that_it_is_deprecated():
    opt = make_optimizer(fg)
    sched = lr_scheduler.StepLR(opt, 3)
    opt.step()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
        sched.step(4)


def test_construction_sets_initial_lr_base_lrs_and_last_epoch():
    opt = make_optimizer(fg)
    sched = lr_scheduler.ExponentialLR(opt, gamma=0.5)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert sched.base_lrs == [0.1, 0.5]
    assert sched.last_epoch == 0
    assert sched.get_last_lr() == [0.1, 0.5]
    for _ in range(3):
        opt.step()
        sched.step()
    assert sched.last_epoch == 3
    assert sched.get_last_lr() == pytest.approx([0.1 / 8, 0.5 / 8])
    # initial_lr is kept: a second scheduler starts from the original rates
    other = lr_scheduler.StepLR(opt, step_size=2)
    assert other.base_lrs == [0.1, 0.5]
    assert issubclass(lr_scheduler._LRScheduler, lr_scheduler.LRScheduler)
    assert isinstance(sched, lr_scheduler.LRScheduler)
    assert fg.optim.lr_scheduler is lr_scheduler


def test_get_last_lr_is_a_copy():
    opt = make_optimizer(fg)
    sched = lr_scheduler.StepLR(opt, 2)
    sched.get_last_lr()[0] = 123.0
    opt.step()
    sched.step()
    assert sched.get_last_lr() == [0.1, 0.5]


def test_resuming_with_last_epoch():
    opt = make_optimizer(fg)
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        lr_scheduler.StepLR(opt, 2, last_epoch=3)
    for group in opt.param_groups:
        group["initial_lr"] = group["lr"]
    sched = lr_scheduler.StepLR(opt, 2, gamma=0.5, last_epoch=3)
    assert sched.last_epoch == 4
    assert sched.get_last_lr() == pytest.approx([0.05, 0.25])


@pytest.mark.parametrize(
    "key", ["StepLR", "CosineAnnealingLR", "OneCycleLR", "SequentialLR", "ChainedScheduler", "LambdaLR"]
)
def test_state_dict_round_trip_continues_the_same_schedule(key):
    build = SCHEDULERS[key]

    def start():
        opt = make_optimizer(fg)
        return opt, build(lr_scheduler, opt)

    def steps(opt, sched, n):
        out = []
        for _ in range(n):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr())
        return out

    opt, sched = start()
    straight = steps(opt, sched, 20)
    opt1, sched1 = start()
    steps(opt1, sched1, 8)
    saved_opt, saved = opt1.state_dict(), sched1.state_dict()
    assert "optimizer" not in saved
    opt2, sched2 = start()
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    assert getattr(sched2, "last_epoch", None) == getattr(sched1, "last_epoch", None)
    assert steps(opt2, sched2, 12) == straight[8:]


def test_lambda_state_dict_keeps_callable_objects_state():
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate**epoch

    opt = make_optimizer(fg)
    sched = lr_scheduler.LambdaLR(opt, [Decay(0.5), lambda e: 1.0])
    state = sched.state_dict()
    assert state["lr_lambdas"] == [{"rate": 0.5}, None]
    other = lr_scheduler.LambdaLR(make_optimizer(fg), [Decay(0.9), lambda e: 1.0])
    other.load_state_dict(state)
    assert other.lr_lambdas[0].rate == 0.5
    assert "lr_lambdas" in state


def test_scheduler_step_before_optimizer_step_warns():
    opt = make_optimizer(fg)
    sched = lr_scheduler.StepLR(opt, 2)
    with pytest.warns(
        UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"
    ):
        sched.step()
    opt2 = make_optimizer(fg)
    sched2 = lr_scheduler.StepLR(opt2, 2)
    opt2.step = lambda closure=None: None  # replaced after the scheduler wrapped it
    with pytest.warns(UserWarning, match="Seems like `optimizer.step\\(\\)` has been overridden"):
        sched2.step()


def test_in_order_steps_do_not_warn_and_the_optimizer_still_steps():
    w = fg.ones(2, requires_grad=True)
    opt = fg.optim.SGD([w], lr=0.5)
    sched = lr_scheduler.StepLR(opt, 1, gamma=0.5)
    lr_scheduler.ExponentialLR(opt, 1.0)  # a second scheduler does not wrap the step twice
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            w.grad = fg.ones(2)
            opt.step()
            sched.step()
    # steps of 0.5 and then 0.25
    np.testing.assert_allclose(w.detach().numpy(), [0.25, 0.25])
    assert opt._opt_called is True


def test_get_lr_outside_step_warns():
    sched = lr_scheduler.StepLR(make_optimizer(fg), 2)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()


def test_tensor_learning_rates_are_filled_in_place():
    w = fg.zeros(2, requires_grad=True)
    lr = fg.tensor(0.2, dtype=fg.float64)
    opt = fg.optim.SGD([w], lr=lr)
    sched = lr_scheduler.ExponentialLR(opt, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr
    assert lr.item() == pytest.approx(0.1)
    last = sched.get_last_lr()[0]
    assert isinstance(last, fg.Tensor) and last is not lr


def test_reduce_on_plateau_without_torch():
    opt = make_optimizer(fg)
    sched = lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=2, min_lr=[0.04, 0])
    for metric in [1.0, 1.0, 1.0]:
        sched.step(metric)
    assert sched.get_last_lr() == [0.1, 0.5]
    sched.step(1.0)  # a third epoch without improvement
    assert sched.get_last_lr() == [0.05, 0.25]
    for _ in range(3):
        sched.step(fg.tensor(2.0))  # tensors are accepted as metrics
    assert sched.get_last_lr() == [0.04, 0.125]  # clipped at min_lr
    sched.step(0.1)
    assert sched.best == 0.1 and sched.num_bad_epochs == 0
    state = sched.state_dict()
    fresh = lr_scheduler.ReduceLROnPlateau(make_optimizer(fg))
    fresh.load_state_dict(state)
    assert (fresh.best, fresh.patience, fresh.factor) == (0.1, 2, 0.5)


@pytest.mark.parametrize(
    "build,error,message",
    [
        (lambda o: lr_scheduler.StepLR([], 2), TypeError, "list is not an Optimizer"),
        (lambda o: lr_scheduler.ExponentialLR(object(), 0.5), TypeError, "object is not an Optimizer"),
        (lambda o: lr_scheduler.ReduceLROnPlateau("sgd"), TypeError, "str is not an Optimizer"),
        (lambda o: lr_scheduler.OneCycleLR(None, 0.1, 10), TypeError, "NoneType is not an Optimizer"),
        (
            lambda o: lr_scheduler.LambdaLR(o, [lambda e: 1.0]),
            ValueError,
            "Expected 2 lr_lambdas, but got 1",
        ),
        (
            lambda o: lr_scheduler.MultiplicativeLR(o, 0.9),
            TypeError,
            "lr_lambda should be a function, but got float",
        ),
        (
            lambda o: lr_scheduler.ConstantLR(o, factor=1.5),
            ValueError,
            "Constant multiplicative factor expected to be between 0 and 1.",
        ),
        (
            lambda o: lr_scheduler.LinearLR(o, start_factor=0),
            ValueError,
            "Starting multiplicative factor expected to be greater than 0 and less or equal to 1.",
        ),
        (
            lambda o: lr_scheduler.LinearLR(o, end_factor=2),
            ValueError,
            "Ending multiplicative factor expected to be between 0 and 1.",
        ),
        (
            lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=-1),
            ValueError,
            "Expected positive integer T_0, but got -1",
        ),
        (
            lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2.5),
            ValueError,
            "Expected positive integer T_0, but got 2.5",
        ),
        (
            lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
            ValueError,
            "Expected integer T_mult >= 1, but got 0",
        ),
        (
            lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
            ValueError,
            "Expected float or int eta_min, but got 0 of type <class 'str'>",
        ),
        (
            lambda o: lr_scheduler.OneCycleLR(o, 0.1),
            ValueError,
            "You must define either total_steps OR (epochs AND steps_per_epoch)",
        ),
        (
            lambda o: lr_scheduler.OneCycleLR(o, 0.1, total_steps=0),
            ValueError,
            "Expected positive integer total_steps, but got 0",
        ),
        (
            lambda o: lr_scheduler.OneCycleLR(o, 0.1, total_steps=10.0),
            ValueError,
            "Expected positive integer total_steps, but got 10.0",
        ),
        (
            lambda o: lr_scheduler.OneCycleLR(o, 0.1, epochs=-2, steps_per_epoch=3),
            ValueError,
            "Expected positive integer epochs, but got -2",
        ),
        (
            lambda o: lr_scheduler.OneCycleLR(o, 0.1, epochs=2, steps_per_epoch=0),
            ValueError,
            "Expected positive integer steps_per_epoch, but got 0",
        ),
        (
            lambda o: lr_scheduler.OneCycleLR(o, 0.1, total_steps=10, pct_start=1),
            ValueError,
            "Expected float between 0 and 1 pct_start, but got 1",
        ),
        (
            lambda o: lr_scheduler.OneCycleLR(o, 0.1, total_steps=10, anneal_strategy="exp"),
            ValueError,
            "anneal_strategy must be one of 'cos' or 'linear', instead got exp",
        ),
        (
            lambda o: lr_scheduler.OneCycleLR(o, [0.1, 0.2, 0.3], total_steps=10),
            ValueError,
            "max_lr must have the same length as optimizer.param_groups. "
            "max_lr has 3 values, param_groups has 2.",
        ),
        (
            lambda o: lr_scheduler.CyclicLR(o, 0.1, 1.0, mode="square"),
            ValueError,
            "mode is invalid and scale_fn is None",
        ),
        (lambda o: lr_scheduler.ReduceLROnPlateau(o, mode="avg"), ValueError, "mode avg is unknown!"),
        (
            lambda o: lr_scheduler.ReduceLROnPlateau(o, threshold_mode="pct"),
            ValueError,
            "threshold mode pct is unknown!",
        ),
        (lambda o: lr_scheduler.ReduceLROnPlateau(o, factor=1.0), ValueError, "Factor should be < 1.0."),
        (lambda o: lr_scheduler.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError, "expected 2 min_lrs, got 1"),
        (
            lambda o: lr_scheduler.SequentialLR(o, [], []),
            ValueError,
            "SequentialLR expects at least one scheduler, but got no scheduler.",
        ),
        (
            lambda o: lr_scheduler.SequentialLR(
                o, [lr_scheduler.StepLR(o, 2), lr_scheduler.StepLR(o, 3)], []
            ),
            ValueError,
            "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
            "milestone points, but got number of schedulers 2 and the number of milestones to be equal to 0",
        ),
        (
            lambda o: lr_scheduler.SequentialLR(o, [lr_scheduler.ReduceLROnPlateau(o)], []),
            ValueError,
            "SequentialLR does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to "
            "be specified when calling `step`, but got one at index 0 in the given schedulers sequence.",
        ),
        (
            lambda o: lr_scheduler.ChainedScheduler([]),
            ValueError,
            "ChainedScheduler expects at least one scheduler to be chained, but got no scheduler.",
        ),
        (
            lambda o: lr_scheduler.ChainedScheduler([lr_scheduler.StepLR(o, 2), 3], optimizer=o),
            TypeError,
            "ChainedScheduler at index 1 should have `optimizer` as its attribute.",
        ),
    ],
)
def test_argument_errors(build, error, message):
    opt = make_optimizer(fg)
    with pytest.raises(error) as info:
        build(opt)
    assert str(info.value) == message


@needs_torch
def test_argument_error_messages_agree_with_torch():
    cases = [
        lambda S, o: S.StepLR([], 2),
        lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=-1),
        lambda S, o: S.OneCycleLR(o, 0.1),
        lambda S, o: S.OneCycleLR(o, 0.1, total_steps=-3),
        lambda S, o: S.OneCycleLR(o, 0.1, epochs=2, steps_per_epoch=1.5),
        lambda S, o: S.ReduceLROnPlateau(o, mode="avg"),
        lambda S, o: S.ReduceLROnPlateau(o, threshold_mode="x"),
        lambda S, o: S.LinearLR(o, start_factor=1.1),
        lambda S, o: S.OneCycleLR(o, 0.1, total_steps=10, anneal_strategy="step"),
    ]
    for build in cases:
        messages = []
        for T in (fg, torch):
            with pytest.raises((TypeError, ValueError)) as info:
                build(T.optim.lr_scheduler, make_optimizer(T))
            messages.append((type(info.value), str(info.value)))
        assert messages[0] == messages[1]


def test_one_cycle_refuses_to_step_past_total_steps():
    opt = make_optimizer(fg)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=5)
    for _ in range(4):
        opt.step()
        sched.step()
    assert sched.get_last_lr()[0] == pytest.approx(1.0 / 25 / 1e4)
    opt.step()
    sched.step()  # the fifth step is the last one allowed
    with pytest.raises(ValueError) as info:
        sched.step()
    assert str(info.value) == "Tried to step 6 times. The specified number of total steps is 5"


def test_cycle_momentum_needs_an_optimizer_with_momentum():
    opt = make_optimizer(fg, "Adagrad")
    for build in (
        lambda: lr_scheduler.OneCycleLR(opt, 0.1, total_steps=10),
        lambda: lr_scheduler.CyclicLR(opt, 0.01, 0.1),
    ):
        with pytest.raises(ValueError) as info:
            build()
        assert (
            str(info.value) == "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
        )
    sched = lr_scheduler.OneCycleLR(opt, 0.1, total_steps=10, cycle_momentum=False)
    assert sched.get_last_lr() == [pytest.approx(0.1 / 25)] * 2


def test_warm_restarts_reject_a_negative_epoch():
    opt = make_optimizer(fg)
    sched = lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3)
    with pytest.raises(ValueError) as info:
        sched.step(-1)
    assert str(info.value) == "Expected non-negative epoch, but got -1"
    sched.step(4.5)  # fractional epochs within a period
    assert sched.T_cur == pytest.approx(1.5)
    assert sched.get_last_lr()[0] == pytest.approx(0.05 * (1 + math.cos(math.pi * 0.5)))


def test_training_with_a_schedule_lowers_the_loss():
    fg.manual_seed(0)
    x = fg.randn(64, 5)
    true_w = fg.tensor([[1.5, -2.0, 0.5, 3.0, -1.0]])
    y = x @ true_w.t() + 0.3
    for make_opt, make_sched in [
        (lambda p: fg.optim.RMSprop(p, lr=0.05, momentum=0.5), lambda o: lr_scheduler.StepLR(o, 20, 0.5)),
        (lambda p: fg.optim.Adagrad(p, lr=0.5), lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=60)),
        (lambda p: fg.optim.SGD(p, lr=0.05, momentum=0.9), lambda o: lr_scheduler.OneCycleLR(o, 0.1, 60)),
    ]:
        model = nn.Linear(5, 1)
        opt = make_opt(model.parameters())
        sched = make_sched(opt)
        loss_fn = nn.MSELoss()
        losses = []
        for _ in range(60):
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
        assert losses[-1] < 0.05 * losses[0], (type(opt).__name__, losses[0], losses[-1])
        assert sched.get_last_lr()[0] != sched.base_lrs[0]

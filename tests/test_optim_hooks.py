"""Optimizer hooks: step pre- and post-hooks (the optimizer's own and every optimizer's, in
torch's order, with the arguments step was given, replaceable by a pre-hook), state_dict and
load_state_dict hooks, removal through the handles, and one run per step for optimizers whose
step calls another; and Module.to_empty, which training scripts use beside them."""

import pytest

import ferrograd as fg
import ferrograd.optim.optimizer as optimizer_module


def parameter():
    p = fg.nn.Parameter(fg.ones(2))
    p.grad = fg.ones(2)
    return p


@pytest.mark.parametrize(
    "make", [lambda p: fg.optim.SGD([p], lr=0.1), lambda p: fg.optim.Adam([p]), lambda p: fg.optim.LBFGS([p])]
)
def test_step_hooks_run_in_order(make):
    p = parameter()
    opt = make(p)
    calls = []
    global_pre = optimizer_module.register_optimizer_step_pre_hook(
        lambda o, a, k: calls.append(("global pre", o is opt))
    )
    global_post = optimizer_module.register_optimizer_step_post_hook(
        lambda o, a, k: calls.append(("global post", o is opt))
    )
    local_pre = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", a[0] is opt, sorted(k))))
    opt.register_step_post_hook(lambda o, a, k: calls.append(("post", len(a), sorted(k))))
    try:
        loss = opt.step(closure=lambda: (p * p).sum())
    finally:
        global_pre.remove()
        global_post.remove()
    assert float(loss) == 2.0
    assert calls == [
        ("global pre", True),
        ("pre", True, ["closure"]),
        ("post", 1, ["closure"]),
        ("global post", True),
    ]
    local_pre.remove()
    calls.clear()
    opt.step(closure=lambda: (p * p).sum())
    assert calls == [("post", 1, ["closure"])]


def test_pre_hook_may_replace_the_arguments():
    p = parameter()
    opt = fg.optim.SGD([p], lr=0.1)
    seen = []
    opt.register_step_pre_hook(
        lambda o, a, k: (a, {"closure": lambda: seen.append("replaced") or fg.tensor(1.0)})
    )
    assert float(opt.step()) == 1.0 and seen == ["replaced"]
    bad = fg.optim.SGD([parameter()], lr=0.1)
    bad.register_step_pre_hook(lambda o, a, k: 5)
    with pytest.raises(
        RuntimeError, match="must return None or a tuple of \\(new_args, new_kwargs\\), but got 5"
    ):
        bad.step()


def test_state_dict_hooks():
    p = parameter()
    opt = fg.optim.SGD([p], lr=0.1, momentum=0.9)
    opt.step()
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    opt.register_state_dict_pre_hook(lambda o: calls.append("first"), prepend=True)
    state = opt.state_dict()
    assert state["extra"] == 1 and calls == ["first", "pre"]
    opt.register_load_state_dict_pre_hook(lambda o, sd: {k: v for k, v in sd.items() if k != "extra"})
    opt.register_load_state_dict_post_hook(lambda o: calls.append("loaded"))
    state["param_groups"][0]["lr"] = 0.5
    opt.load_state_dict(state)
    assert opt.param_groups[0]["lr"] == 0.5 and calls[-1] == "loaded"


def test_scheduler_wrapping_keeps_the_hooks():
    p = parameter()
    opt = fg.optim.SGD([p], lr=0.1)
    calls = []
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    scheduler = fg.optim.lr_scheduler.StepLR(opt, step_size=1)
    opt.step()
    scheduler.step()
    assert calls == ["post"]


def test_module_to_empty():
    model = fg.nn.Sequential(fg.nn.Linear(3, 2), fg.nn.BatchNorm1d(2))
    shapes = {name: (t.shape, t.dtype) for name, t in model.state_dict().items()}
    assert model.to_empty(device="cpu") is model
    assert {name: (t.shape, t.dtype) for name, t in model.state_dict().items()} == shapes
    assert isinstance(model[0].weight, fg.nn.Parameter) and model[0].weight.requires_grad
    inner = fg.nn.Sequential(fg.nn.Linear(2, 2))
    weight = inner[0].weight
    inner.to_empty(device="cpu", recurse=False)  # the Sequential holds no tensors of its own
    assert inner[0].weight is weight
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        model.to_empty(device="cuda")
    assert fg.nn.Module.call_super_init is False and fg.nn.Module.dump_patches is False

"""Global module hooks (``nn.modules.module.register_module_*``): they run for every module, before
the module's own hooks of the same kind. Each program is written once against a torch-like
module ``T``, run with ferrograd and, when it is installed, with torch, and what it records is
compared; plain assertions check the part of the behaviour each test is about."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import ferrograd as fg
import ferrograd.nn.modules.module as fg_module_module
from ferrograd.nn.modules.module import register_module_forward_hook

from helpers import fixed_linear, has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is the reference")
LIBRARIES = [fg] + ([torch] if has_torch else [])


@pytest.fixture(autouse=True)
def _fresh_backward_hook_kind():
    """Once a global backward hook is registered, the kind (full or not) stays chosen for the
    process, even after its removal, as in PyTorch; each test starts with none chosen."""
    yield
    for T in LIBRARIES:
        T.nn.modules.module._global_is_full_backward_hook = None


def _plain(value):
    """What a program records of a value: tensors as nested lists, sequences recursively."""
    if isinstance(value, (fg.Tensor, *([torch.Tensor] if has_torch else []))):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _name(module):
    return type(module).__name__


def _assert_same_records(got, want):
    """Equal structure and strings; numbers equal to float32 precision."""
    assert type(got) is type(want) or {type(got), type(want)} <= {int, float}, (got, want)
    if isinstance(got, (list, tuple)):
        assert len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            _assert_same_records(g, w)
    elif isinstance(got, dict):
        assert got.keys() == want.keys()
        for key in got:
            _assert_same_records(got[key], want[key])
    elif isinstance(got, float):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    else:
        assert got == want


def _with_global_hooks(register, run):
    """Runs `run()` with the hooks `register()` returns the handles of, then removes them."""
    handles = register()
    try:
        return run()
    finally:
        for handle in handles:
            handle.remove()


def _recorded_warnings(run):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run()
    return result, [(w.category.__name__, str(w.message)) for w in caught]


# ---- importing ----------------------------------------------------------------------------


def test_module_submodule_is_importable_as_in_torch():
    import ferrograd.nn.modules.module as m
    from ferrograd.nn.modules import Linear

    assert fg.nn.modules.module is m is fg_module_module
    assert m.__name__ == "ferrograd.nn.modules.module"
    assert m.register_module_forward_hook is register_module_forward_hook
    assert m.Module is fg.nn.Module and Linear is fg.nn.Linear
    assert "register_module_full_backward_hook" in m.__all__ and "Module" in m.__all__
    assert m._EXTRA_STATE_KEY_SUFFIX == "_extra_state" and m._addindent is fg.nn.modules._addindent
    # A fresh interpreter importing the submodule first also gets the package set up.
    program = (
        "from ferrograd.nn.modules.module import register_module_forward_pre_hook, Module\n"
        "import ferrograd.nn.modules.module as m, ferrograd\n"
        "assert m.Module is ferrograd.nn.Module is Module\n"
        "print(m.register_module_forward_pre_hook is register_module_forward_pre_hook)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


def test_module_submodule_shares_state_with_module_calls():
    """Names set through the submodule are the ones module calls use."""
    m = fg_module_module
    handle = m.register_module_full_backward_hook(lambda mod, gi, go: None)
    handle.remove()
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        m.register_module_backward_hook(lambda mod, gi, go: None)
    m._global_is_full_backward_hook = None
    m.register_module_backward_hook(lambda mod, gi, go: None).remove()
    assert m._global_backward_hooks is fg.nn.modules._global_backward_hooks
    assert len(m._global_backward_hooks) == 0


# ---- forward hooks ------------------------------------------------------------------------


def _forward_order_program(T):
    m = T.nn.modules.module
    log = []
    seq = T.nn.Sequential(fixed_linear(T), T.nn.ReLU())
    lin = seq[0]
    lin.register_forward_pre_hook(lambda mod, args: log.append(("own pre", _name(mod), _plain(args))))
    lin.register_forward_pre_hook(
        lambda mod, args: log.append(("own pre, prepended", _name(mod))), prepend=True
    )
    lin.register_forward_hook(lambda mod, args, out: log.append(("own", _name(mod), _plain(out))))

    def register():
        return [
            m.register_module_forward_pre_hook(
                lambda mod, args: log.append(("global pre", _name(mod), _plain(args)))
            ),
            # A single value returned by a pre-hook is wrapped into the args tuple.
            m.register_module_forward_pre_hook(
                lambda mod, args: args[0] * 2 if isinstance(mod, T.nn.Linear) else None
            ),
            m.register_module_forward_hook(
                lambda mod, args, out: log.append(("global", _name(mod), _plain(out)))
            ),
            m.register_module_forward_hook(
                lambda mod, args, out: out + 1 if isinstance(mod, T.nn.ReLU) else None
            ),
        ]

    x = T.tensor([[1.0, -1.0, 2.0]])
    log.append(("output", _plain(_with_global_hooks(register, lambda: seq(x)))))
    log.append(("output after removal", _plain(seq(x))))
    log.append(("global dicts", len(m._global_forward_pre_hooks), len(m._global_forward_hooks)))
    return log


def test_global_forward_hooks_run_before_the_modules_own():
    log = _forward_order_program(fg)
    first_call = log[: next(i for i, entry in enumerate(log) if entry[0] == "output")]
    on_linear = [entry[0] for entry in first_call if entry[1:2] == ("Linear",)]
    assert on_linear == ["global pre", "own pre, prepended", "own pre", "global", "own"]
    # The container's hooks wrap its children's.
    assert [entry[:2] for entry in first_call][:2] == [("global pre", "Sequential"), ("global pre", "Linear")]
    assert first_call[-1][:2] == ("global", "Sequential")
    # Once removed, only the module's own hooks run.
    second_call = log[len(first_call) + 1 : -2]
    assert [entry[0] for entry in second_call] == ["own pre, prepended", "own pre", "own"]
    # The second global pre-hook doubled the Linear's input; the ReLU's output gained one.
    own_pre = next(entry for entry in log if entry[0] == "own pre")
    assert own_pre[2] == [[[2.0, -2.0, 4.0]]]
    output = next(entry[1] for entry in log if entry[0] == "output")
    assert log[-2][0] == "output after removal" and log[-2][1] != output
    assert np.allclose(output, np.maximum(fixed_linear(fg)(fg.tensor([[2.0, -2.0, 4.0]])).tolist(), 0) + 1)
    assert log[-1] == ("global dicts", 0, 0)


@needs_torch
def test_global_forward_hooks_match_torch():
    _assert_same_records(_forward_order_program(fg), _forward_order_program(torch))


def _kwargs_program(T):
    m = T.nn.modules.module
    log = []

    class Scaled(T.nn.Module):
        def forward(self, x, *, scale=1.0):
            return x * scale

    module = Scaled()
    module.register_forward_pre_hook(
        lambda mod, args, kwargs: (args, {**kwargs, "scale": kwargs["scale"] * 10}), with_kwargs=True
    )

    def register():
        return [
            m.register_module_forward_hook(
                lambda mod, args, kwargs, out: log.append(("with kwargs", dict(kwargs), _plain(out))),
                with_kwargs=True,
            ),
            m.register_module_forward_hook(
                lambda mod, args, kwargs, out: out - kwargs["scale"], with_kwargs=True
            ),
            m.register_module_forward_hook(lambda mod, args, out: log.append(("without", _plain(out)))),
        ]

    log.append(_plain(_with_global_hooks(register, lambda: module(T.tensor([1.0, 2.0]), scale=2.0))))
    return log


def test_global_forward_hook_with_kwargs_sees_the_kwargs_the_forward_got():
    log = _kwargs_program(fg)
    assert log == [
        ("with kwargs", {"scale": 20.0}, [20.0, 40.0]),
        ("without", [0.0, 20.0]),
        [0.0, 20.0],
    ]


@needs_torch
def test_global_forward_hook_with_kwargs_matches_torch():
    _assert_same_records(_kwargs_program(fg), _kwargs_program(torch))


def _always_call_program(T):
    m = T.nn.modules.module
    log = []

    class Failing(T.nn.Module):
        def forward(self, x):
            raise ValueError("forward failed")

    def failing_hook(mod, args, out):
        log.append("failing always-call hook")
        raise RuntimeError("hook failed")

    def call(module, x):
        try:
            return module(x)
        except (ValueError, KeyError) as error:
            log.append(("raised", type(error).__name__, str(error)))
            return None

    failing = Failing()
    failing.register_forward_hook(lambda mod, args, out: log.append(("own always", out)), always_call=True)
    failing.register_forward_hook(lambda mod, args, out: log.append("own"))
    _with_global_hooks(
        lambda: [
            m.register_module_forward_hook(
                lambda mod, args, out: log.append(("global always", out)), always_call=True
            ),
            m.register_module_forward_hook(lambda mod, args, out: log.append("global")),
            m.register_module_forward_hook(failing_hook, always_call=True),
        ],
        lambda: log.append(_recorded_warnings(lambda: call(failing, T.ones(1)))[1]),
    )

    # A forward hook that raises: the always-call hooks that have run do not run again.
    identity = T.nn.Identity()
    identity.register_forward_hook(lambda mod, args, out: {}["missing"])
    identity.register_forward_hook(lambda mod, args, out: log.append("own always"), always_call=True)
    _with_global_hooks(
        lambda: [
            m.register_module_forward_hook(
                lambda mod, args, out: log.append(("global always", _plain(out))), always_call=True
            )
        ],
        lambda: call(identity, T.ones(1)),
    )

    # A pre-hook that raises: the always-call hooks run, with no output.
    _with_global_hooks(
        lambda: [
            m.register_module_forward_pre_hook(lambda mod, args: {}["no input"]),
            m.register_module_forward_hook(
                lambda mod, args, out: log.append(("global always", out)), always_call=True
            ),
        ],
        lambda: call(T.nn.Identity(), T.ones(1)),
    )

    # A successful call runs an always-call hook once.
    _with_global_hooks(
        lambda: [m.register_module_forward_hook(lambda mod, args, out: log.append("once"), always_call=True)],
        lambda: T.nn.Identity()(T.ones(1)),
    )
    return log


def test_always_call_global_hooks_run_when_the_call_raises():
    assert _always_call_program(fg) == [
        ("global always", None),
        "failing always-call hook",
        ("own always", None),
        ("raised", "ValueError", "forward failed"),
        [
            (
                "UserWarning",
                "global module forward hook with ``always_call=True`` raised an exception that was "
                "silenced as another error was raised in forward: hook failed",
            )
        ],
        ("global always", [1.0]),
        "own always",
        ("raised", "KeyError", "'missing'"),
        ("global always", None),
        ("raised", "KeyError", "'no input'"),
        "once",
    ]


@needs_torch
def test_always_call_global_hooks_match_torch():
    _assert_same_records(_always_call_program(fg), _always_call_program(torch))


def test_handles_remove_and_work_as_context_managers():
    log = []
    lin = fg.nn.Linear(2, 2)
    with register_module_forward_hook(lambda mod, args, out: log.append(_name(mod))):
        lin(fg.ones(1, 2))
    lin(fg.ones(1, 2))
    handle = fg_module_module.register_module_forward_pre_hook(lambda mod, args: log.append("pre"))
    handle.remove()
    handle.remove()  # removing twice is harmless
    lin(fg.ones(1, 2))
    assert log == ["Linear"]
    assert not fg_module_module._global_forward_hooks and not fg_module_module._global_forward_pre_hooks
    assert not fg.nn.modules._global_call_hooks


# ---- backward hooks -----------------------------------------------------------------------


def _backward_program(T):
    m = T.nn.modules.module
    log = []
    model = T.nn.Sequential(fixed_linear(T), T.nn.ReLU())
    lin = model[0]
    lin.register_full_backward_pre_hook(lambda mod, go: log.append(("own pre", _name(mod), _plain(go))))
    lin.register_full_backward_hook(
        lambda mod, gi, go: log.append(("own", _name(mod), _plain(gi), _plain(go)))
    )

    def register():
        return [
            m.register_module_full_backward_pre_hook(
                lambda mod, go: log.append(("global pre", _name(mod), _plain(go)))
            ),
            # Replacements flow to the hooks after and to the graph.
            m.register_module_full_backward_pre_hook(
                lambda mod, go: (go[0] * 2,) if _name(mod) == "ReLU" else None
            ),
            m.register_module_full_backward_hook(
                lambda mod, gi, go: log.append(("global", _name(mod), _plain(gi), _plain(go)))
            ),
            m.register_module_full_backward_hook(
                lambda mod, gi, go: (gi[0] + 1,) if _name(mod) == "Linear" else None
            ),
        ]

    def run():
        x = T.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        (model(x) * T.tensor([[2.0, 3.0]])).sum().backward()
        return x

    x = _with_global_hooks(register, run)
    log.append(("x.grad", _plain(x.grad)))
    log.append(("weight.grad", _plain(lin.weight.grad)))
    return log


def test_global_backward_hooks_run_before_the_modules_own():
    log = _backward_program(fg)
    assert [entry[:2] for entry in log[:-2]] == [
        ("global pre", "Sequential"),
        ("global pre", "ReLU"),
        ("global", "ReLU"),
        ("global pre", "Linear"),
        ("own pre", "Linear"),
        ("global", "Linear"),
        ("own", "Linear"),
        ("global", "Sequential"),
    ]
    # ReLU's output gradient was doubled; the Linear's input gradient then shifted by one.
    lin = fixed_linear(fg)
    out = lin(fg.tensor([[1.0, 2.0, 3.0]]))
    relu_grad = [[2.0 * 2 * (out[0, 0].item() > 0), 3.0 * 2 * (out[0, 1].item() > 0)]]
    assert log[3][2] == [relu_grad]
    expected_x_grad = (fg.tensor(relu_grad) @ lin.weight).detach() + 1
    assert log[-2] == ("x.grad", expected_x_grad.tolist())
    assert log[-3][2] == [log[-2][1]]  # the Sequential sees the Linear's replaced input gradient


@needs_torch
def test_global_backward_hooks_match_torch():
    _assert_same_records(_backward_program(fg), _backward_program(torch))


def test_observing_global_backward_hooks_leave_gradients_unchanged():
    model = fg.nn.Sequential(fg.nn.Linear(3, 4), fg.nn.Tanh(), fg.nn.Linear(4, 2)).double()
    seen = []
    handles = [
        fg_module_module.register_module_full_backward_pre_hook(lambda mod, go: seen.append("pre")),
        fg_module_module.register_module_full_backward_hook(lambda mod, gi, go: seen.append("full")),
    ]
    try:
        x = fg.randn(2, 3, dtype=fg.float64, requires_grad=True)
        assert fg.autograd.gradcheck(lambda t: model(t), (x,))
    finally:
        for handle in handles:
            handle.remove()
    assert "pre" in seen and "full" in seen


def _deprecated_backward_program(T):
    m = T.nn.modules.module
    log = []
    lin = fixed_linear(T)

    def register():
        return [
            m.register_module_backward_hook(lambda mod, gi, go: log.append((_name(mod), len(gi), _plain(go))))
        ]

    def run():
        x = T.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        (lin(x) * T.tensor([[2.0, 3.0]])).sum().backward()

    log.append(_recorded_warnings(lambda: _with_global_hooks(register, run))[1])
    with pytest.raises(RuntimeError) as error:
        m.register_module_full_backward_hook(lambda mod, gi, go: None)
    log.append(str(error.value))
    return log


def test_global_deprecated_backward_hook_runs_on_the_output_node():
    log = _deprecated_backward_program(fg)
    name, n_grad_inputs, grad_outputs = log[0]
    assert name == "Linear" and grad_outputs == [[[2.0, 3.0]]]
    assert n_grad_inputs >= 2
    assert log[1] == [("FutureWarning", MULTIPLE_NODES_WARNING)]
    assert log[2] == (
        "Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
        "Please use only one of them."
    )


@needs_torch
def test_global_deprecated_backward_hook_matches_torch():
    got, want = _deprecated_backward_program(fg), _deprecated_backward_program(torch)
    # The output node's inputs are the op's own (PyTorch's addmm has three), so only the
    # gradient of the output and the messages compare.
    assert (got[0][0], got[0][2]) == (want[0][0], want[0][2])
    assert got[1:] == want[1:]


MULTIPLE_NODES_WARNING = (
    "Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated and "
    "will be removed in future versions. This hook will be missing some grad_input. Please use "
    "register_full_backward_hook to get the documented behavior."
)


def _deprecated_hook_warnings_program(T):
    """The warnings of the deprecated backward hook for modules of several shapes."""

    class TwoOutputs(T.nn.Module):
        def forward(self, x):
            return x * 2, x.exp()

    class DictOutput(T.nn.Module):
        def forward(self, x):
            return {"y": x * 2}

    class ScaledBy(T.nn.Module):
        def forward(self, x, scale):
            return x * scale

    class Nested(T.nn.Module):
        def forward(self, x):
            return (x * 2).sum(), x

    x = T.ones(2, 3, requires_grad=True)
    hidden = x * 3
    cases = [
        ("linear on a leaf", T.nn.Linear(3, 2), (x,)),
        ("relu on a leaf", T.nn.ReLU(), (x,)),
        ("relu on a non-leaf", T.nn.ReLU(), (hidden,)),
        ("tanh of a linear", T.nn.Sequential(T.nn.Linear(3, 3), T.nn.Tanh()), (hidden,)),
        ("two outputs", TwoOutputs(), (hidden,)),
        ("dict output", DictOutput(), (hidden,)),
        ("non-tensor input", ScaledBy(), (hidden, 2.0)),
        ("output of another node first", Nested(), (hidden,)),
    ]
    log = []
    for label, module, args in cases:
        module.register_backward_hook(lambda mod, gi, go: None)
        log.append((label, _recorded_warnings(lambda module=module, args=args: module(*args))[1]))
    return log


def test_deprecated_backward_hook_warns_when_the_output_node_misses_gradients():
    log = dict(_deprecated_hook_warnings_program(fg))
    assert log["linear on a leaf"] == [("FutureWarning", MULTIPLE_NODES_WARNING)]
    assert log["relu on a non-leaf"] == []
    assert [message for _, message in log["two outputs"]] == [
        "Using a non-full backward hook when outputs are generated by different autograd Nodes is deprecated "
        "and will be removed in future versions. This hook will be missing some grad_output. Please use "
        "register_full_backward_hook to get the documented behavior."
    ]
    assert "does not return a single Tensor" in log["dict output"][0][1]
    assert "does not take as input a single Tensor" in log["non-tensor input"][0][1]


@needs_torch
def test_deprecated_backward_hook_warnings_match_torch():
    assert _deprecated_hook_warnings_program(fg) == _deprecated_hook_warnings_program(torch)


def test_backward_hooks_warn_when_the_output_is_not_a_tensor_or_tuple():
    class DictOutput(fg.nn.Module):
        def forward(self, x):
            return {"y": x * 2}

    module = DictOutput()
    module.register_full_backward_hook(lambda mod, gi, go: None)
    with pytest.warns(UserWarning, match="For backward hooks to be called, module output should be a Tensor"):
        out = module(fg.ones(2, requires_grad=True))
    assert out["y"].tolist() == [2.0, 2.0]


# ---- registration hooks -------------------------------------------------------------------


def _registration_program(T):
    m = T.nn.modules.module
    log = []
    replacements = {}

    def replace_bias(mod, name, param):
        if isinstance(mod, T.nn.Linear) and name == "bias":
            replacements["bias"] = T.nn.Parameter(T.full(param.shape, 7.0))
            return replacements["bias"]
        return None

    def register():
        return [
            m.register_module_parameter_registration_hook(
                lambda mod, name, param: log.append(("parameter", _name(mod), name, list(param.shape)))
            ),
            m.register_module_parameter_registration_hook(replace_bias),
            m.register_module_buffer_registration_hook(
                lambda mod, name, buf: log.append(("buffer", _name(mod), name, _plain(buf)))
            ),
            m.register_module_buffer_registration_hook(
                lambda mod, name, buf: T.zeros(2) if name == "replaced" else None
            ),
            m.register_module_module_registration_hook(
                lambda mod, name, sub: log.append(("module", _name(mod), name, _name(sub)))
            ),
            m.register_module_module_registration_hook(
                lambda mod, name, sub: T.nn.Tanh() if isinstance(sub, T.nn.ReLU) else None
            ),
        ]

    def run():
        lin = T.nn.Linear(2, 2)
        holder = T.nn.Module()
        holder.register_buffer("kept", T.ones(2))
        holder.register_buffer("replaced", T.ones(2), persistent=False)
        holder.register_buffer("empty", None)
        holder.act = T.nn.ReLU()
        holder.add_module("lin", lin)
        holder.act = None
        holder.register_parameter("nothing", None)
        holder.scale = T.nn.Parameter(T.ones(1))
        holder.seq = T.nn.Sequential(T.nn.ReLU(), T.nn.Identity())
        holder.norm = T.nn.BatchNorm1d(2)
        return holder

    holder = _with_global_hooks(register, run)
    log.append(("bias replaced", [holder.lin.bias is replacements["bias"]]))
    log.append(("buffers", _plain(dict(holder.named_buffers()))))
    log.append(("children", [(name, _name(sub)) for name, sub in holder.named_children()]))
    # Removed hooks no longer run.
    holder.extra = T.nn.ReLU()
    log.append(("after removal", [_name(holder.extra)]))
    return log


def test_registration_hooks_see_and_replace_values():
    log = _registration_program(fg)
    assert log[:2] == [("parameter", "Linear", "weight", [2, 2]), ("parameter", "Linear", "bias", [2])]
    assert ("buffer", "Module", "empty", None) in log
    assert ("module", "Module", "act", "NoneType") in log  # setting a child to None runs them too
    assert not any(entry[:3] == ("parameter", "Module", "nothing") for entry in log)
    results = dict(log[-4:])
    assert results["bias replaced"] == [True]
    assert results["buffers"]["kept"] == [1.0, 1.0] and results["buffers"]["replaced"] == [0.0, 0.0]
    assert results["children"] == [("lin", "Linear"), ("seq", "Sequential"), ("norm", "BatchNorm1d")]
    assert ("module", "Sequential", "0", "ReLU") in log
    assert results["after removal"] == ["ReLU"]


@needs_torch
def test_registration_hooks_match_torch():
    _assert_same_records(_registration_program(fg), _registration_program(torch))

"""Module hooks: forward pre-hooks and hooks, the full backward hooks that see (and may replace)
the gradients of a module's outputs and inputs, and the state dict hooks; then the rest of the
Module API a training script uses, each program compared with torch where it is installed."""

import warnings

import numpy as np
import pytest

import ferrograd as fg

from helpers import fixed_linear, has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is the reference")

NO_INPUT_WARNING = "Full backward hook is firing when gradients are computed with respect to module outputs"


def _values(grads):
    return [None if g is None else g.tolist() for g in grads]


def test_backward_hooks_see_output_then_input_gradients():
    lin = fixed_linear(fg)
    log = []
    lin.register_full_backward_pre_hook(lambda m, go: log.append(("pre", m, _values(go))))
    lin.register_full_backward_hook(lambda m, gi, go: log.append(("full", m, _values(gi), _values(go))))
    x = fg.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    (lin(x) * fg.tensor([[2.0, 3.0]])).sum().backward()
    # grad_input = grad_output @ W
    assert log == [
        ("pre", lin, [[[2.0, 3.0]]]),
        ("full", lin, [[[-1.0, 5.5, 12.0]]], [[[2.0, 3.0]]]),
    ]
    assert x.grad.tolist() == [[-1.0, 5.5, 12.0]]


def test_backward_hooks_replace_gradients():
    lin = fixed_linear(fg)
    lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 10,))
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0] + 1,))
    x = fg.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    lin(x).sum().backward()
    # The replaced output gradient [[10, 10]] reaches the parameters and the
    # input; the input's is then shifted by one.
    assert lin.bias.grad.tolist() == [10.0, 10.0]
    assert lin.weight.grad.tolist() == [[10.0, 20.0, 30.0]] * 2
    assert x.grad.tolist() == [[1.0, 26.0, 51.0]]


def test_positions_of_non_tensors_and_unused_inputs():
    class Pair(fg.nn.Module):
        def forward(self, a, scale, unused, constant):
            return a * scale, constant.sum(), "label"

    log = []
    module = Pair()
    module.register_full_backward_hook(lambda m, gi, go: log.append((_values(gi), _values(go[:2]), go[2])))
    a = fg.tensor([1.0, 2.0], requires_grad=True)
    unused = fg.ones(3, requires_grad=True)
    product, _, label = module(a, 3.0, unused, fg.tensor([3.0, 4.0]))
    assert label == "label"
    product.sum().backward()
    # Tensor inputs the outputs do not depend on get zeros, as PyTorch gives.
    assert log == [([[3.0, 3.0], None, [0.0, 0.0, 0.0], [0.0, 0.0]], [[1.0, 1.0], None], None)]
    assert unused.grad.tolist() == [0.0, 0.0, 0.0]


def test_no_input_requiring_grad_fires_on_the_outputs_with_a_warning():
    lin = fixed_linear(fg)
    log = []
    lin.register_full_backward_hook(lambda m, gi, go: log.append((gi, _values(go))))
    with pytest.warns(UserWarning, match=NO_INPUT_WARNING):
        (lin(fg.ones(1, 3)) ** 2).sum().backward()
    assert log == [((None,), [[[13.0, 4.0]]])]

    lin.register_full_backward_hook(lambda m, gi, go: (fg.ones(1, 3),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="no input requires gradient should always return None"):
            lin(fg.ones(1, 3)).sum().backward()


def test_wrong_number_of_replacements_raises():
    lin = fg.nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but expected 1"):
        lin(fg.ones(1, 2, requires_grad=True)).sum().backward()
    lin = fg.nn.Linear(2, 2)
    lin.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_output, got 2, but expected 1"):
        lin(fg.ones(1, 2)).sum().backward()


def test_hooks_run_module_by_module_from_the_output_back():
    seq = fg.nn.Sequential(fg.nn.Linear(2, 2), fg.nn.ReLU(), fg.nn.Linear(2, 1))
    log = []
    for i, module in enumerate(seq):
        module.register_full_backward_hook(lambda m, gi, go, i=i: log.append(("full", i)))
        module.register_full_backward_pre_hook(lambda m, go, i=i: log.append(("pre", i)))
    seq(fg.ones(1, 2, requires_grad=True)).sum().backward()
    assert log == [(kind, i) for i in (2, 1, 0) for kind in ("pre", "full")]


def test_removed_and_no_grad_calls_run_no_hook():
    lin = fg.nn.Linear(2, 2)
    log = []
    handle = lin.register_full_backward_hook(lambda m, gi, go: log.append("full"))
    pre = lin.register_full_backward_pre_hook(lambda m, go: log.append("pre"))
    with fg.no_grad():
        out = lin(fg.ones(1, 2, requires_grad=True))
    assert out.grad_fn is None
    handle.remove()
    pre.remove()
    lin(fg.ones(1, 2, requires_grad=True)).sum().backward()
    assert log == []
    assert lin._backward_hooks == {} and lin._backward_pre_hooks == {}


def test_prepend_puts_a_hook_first():
    lin = fg.nn.Linear(2, 2)
    log = []
    lin.register_full_backward_hook(lambda m, gi, go: log.append("second"))
    lin.register_full_backward_hook(lambda m, gi, go: log.append("first"), prepend=True)
    lin(fg.ones(1, 2, requires_grad=True)).sum().backward()
    assert log == ["first", "second"]


def test_forward_hooks_with_backward_hooks():
    lin = fixed_linear(fg)
    lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    lin.register_forward_hook(lambda m, args, out: out + 1)
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append(_values(gi)))
    x = fg.tensor([[1.0, 0.0, 0.0]], requires_grad=True)
    out = lin(x)
    assert out.tolist() == [[3.5, -0.5]]
    out.sum().backward()
    # The hook sees the gradient of the module's input (after the pre-hook
    # doubled it); x's gradient carries the doubling.
    assert seen == [[[[0.0, 2.5, 5.0]]]]
    assert x.grad.tolist() == [[0.0, 5.0, 10.0]]


def _hook_program(T):
    log = []
    lin = fixed_linear(T)
    lin.register_full_backward_pre_hook(lambda m, go: log.append(("pre", _values(go))))
    lin.register_full_backward_hook(lambda m, gi, go: log.append(("full", _values(gi), _values(go))))
    x = T.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    (lin(x).tanh() * T.tensor([[2.0, 3.0]])).sum().backward()
    log.append(("x", x.grad.tolist()))

    class Split(T.nn.Module):
        def forward(self, a, b):
            return a * b, b.exp()

    split = Split()
    split.register_full_backward_hook(lambda m, gi, go: log.append(("split", _values(gi), _values(go))))
    a = T.tensor([0.5, -1.0], requires_grad=True)
    b = T.tensor([2.0, 0.25], requires_grad=True)
    p, q = split(a, b)
    (p * 3 + q).sum().backward()
    log.append(("ab", a.grad.tolist(), b.grad.tolist()))
    return log


@needs_torch
def test_backward_hooks_match_torch():
    got, want = _hook_program(fg), _hook_program(torch)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g[0] == w[0]
        for gv, wv in zip(g[1:], w[1:]):
            np.testing.assert_allclose(np.array(gv, dtype=float), np.array(wv, dtype=float), rtol=1e-5)


def _deprecated_hook_program(T):
    log = []
    lin = fixed_linear(T)
    lin.register_backward_hook(
        lambda m, gi, go: log.append(([None if g is None else g.tolist() for g in gi], _values(go)))
    )
    x = T.tensor([[1.0, 2.0, 3.0], [0.0, 1.0, -1.0]], requires_grad=True)
    (lin(x) * T.tensor([2.0, 3.0])).sum().backward()
    seq = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.ReLU())
    seq.register_backward_hook(lambda m, gi, go: log.append(("seq", len(gi), len(go))))
    seq(T.ones(1, 2)).sum().backward()
    return log


def test_deprecated_backward_hook_runs_on_the_output_node():
    # The Linear's output node is one of several (its input and weight reach it through others).
    with pytest.warns(FutureWarning, match="forward contains multiple autograd Nodes"):
        log = _deprecated_hook_program(fg)
    # The hook sees the gradients of the inputs of the last op (the product
    # with bias): the bias, the input and the transposed weight.
    grad_inputs, grad_outputs = log[0]
    assert grad_outputs == [[[2.0, 3.0], [2.0, 3.0]]]
    assert grad_inputs[0] == [4.0, 6.0]
    assert grad_inputs[1] == [[-1.0, 5.5, 12.0]] * 2
    assert log[1] == ("seq", 1, 1)  # ReLU's node: one input


def test_regular_and_full_backward_hooks_do_not_mix():
    for first, second in [
        ("register_backward_hook", "register_full_backward_hook"),
        ("register_full_backward_hook", "register_backward_hook"),
    ]:
        lin = fg.nn.Linear(2, 2)
        getattr(lin, first)(lambda *args: None)
        with pytest.raises(
            RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"
        ):
            getattr(lin, second)(lambda *args: None)


@needs_torch
def test_deprecated_backward_hook_matches_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _deprecated_hook_program(torch)
        got = _deprecated_hook_program(fg)
    assert got == want


def _outcome(fn):
    """What calling `fn` gives: its value, or the type and message of what it raises."""
    try:
        return ("value", fn())
    except Exception as error:  # the programs compare errors with torch's
        return ("raises", type(error).__name__, str(error).replace("ferrograd", "torch"))


# ---- state dict hooks and extra state ------------------------------------------------------


def _net_holding_a_linear(T):
    """A module named ``Net`` whose one child ``a`` is a ``Linear(1, 1)``."""

    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = T.nn.Linear(1, 1)

    return Net()


def _state_dict_hooks_program(T):
    log = []

    net = _net_holding_a_linear(T)
    for module in (net, net.a):
        module.register_state_dict_pre_hook(
            lambda m, prefix, keep_vars: log.append(("pre", type(m).__name__, prefix, keep_vars))
        )
    net.a.register_state_dict_post_hook(
        lambda m, state, prefix, meta: log.append(("post", type(m).__name__, prefix, sorted(state), meta))
    )
    # The private hook's return value replaces the state dict of the module it was called on.
    private = net._register_state_dict_hook(lambda m, state, prefix, meta: {"keys": sorted(state)})
    log.append(("state_dict", net.state_dict(prefix="p.", keep_vars=True)))
    private.remove()
    log.append(("after removal", sorted(net.state_dict())))

    def returns_a_value(m, state, prefix, meta):
        return {}

    net.a.register_state_dict_post_hook(returns_a_value)
    log.append(_outcome(net.state_dict))
    log.append(_outcome(lambda: net._register_state_dict_hook(returns_a_value)))
    return log


def test_state_dict_hooks():
    log = _state_dict_hooks_program(fg)
    assert log[:4] == [
        ("pre", "Net", "p.", True),
        ("pre", "Linear", "p.a.", True),
        ("post", "Linear", "p.a.", ["p.a.bias", "p.a.weight"], {"version": 1}),
        ("state_dict", {"keys": ["p.a.bias", "p.a.weight"]}),
    ]
    assert ("after removal", ["a.bias", "a.weight"]) in log
    assert log[-2] == ("raises", "RuntimeError", "state_dict post-hook must return None")
    assert log[-1][:2] == ("raises", "RuntimeError") and "register_state_dict_post_hook" in log[-1][2]


@needs_torch
def test_state_dict_hooks_match_torch():
    assert _state_dict_hooks_program(fg) == _state_dict_hooks_program(torch)


def _load_hooks_program(T):
    log = []

    net = _net_holding_a_linear(T)
    net.register_load_state_dict_pre_hook(
        lambda m, state, prefix, meta, strict, missing, unexpected, errors: log.append(
            ("pre", type(m).__name__, prefix, sorted(state), strict)
        )
    )
    # A pre-hook may fill in an entry the checkpoint lacks.
    net.a._register_load_state_dict_pre_hook(
        lambda state, prefix, *rest: state.setdefault(prefix + "bias", T.full((1,), 3.0))
    )
    for module in (net, net.a):
        module.register_load_state_dict_post_hook(
            lambda m, keys: log.append(
                ("post", type(m).__name__, list(keys.missing_keys), list(keys.unexpected_keys))
            )
        )
    checkpoint = {"a.weight": T.full((1, 1), 2.0), "extra": T.ones(1)}
    result = net.load_state_dict(checkpoint, strict=False)
    log.append(
        ("loaded", result.missing_keys, result.unexpected_keys, net.a.bias.tolist(), net.a.weight.tolist())
    )
    log.append(_outcome(lambda: str(net.load_state_dict(checkpoint))))
    # A post-hook that clears the unexpected keys lets a strict load pass.
    net.register_load_state_dict_post_hook(lambda m, keys: keys.unexpected_keys.clear())
    log.append(_outcome(lambda: str(net.load_state_dict(checkpoint))))
    net.a.register_load_state_dict_post_hook(lambda m, keys: keys)
    log.append(_outcome(lambda: net.load_state_dict(checkpoint, strict=False)))
    return log


def test_load_state_dict_hooks():
    log = _load_hooks_program(fg)
    assert log[:4] == [
        ("pre", "Net", "", ["a.weight", "extra"], True),
        ("post", "Linear", [], ["extra"]),
        ("post", "Net", [], ["extra"]),
        ("loaded", [], ["extra"], [3.0], [[2.0]]),
    ]
    outcomes = [entry for entry in log if entry[0] in ("value", "raises")]
    assert outcomes[0] == (
        "raises",
        "RuntimeError",
        'Error(s) in loading state_dict for Net:\n\tUnexpected key(s) in state_dict: "extra". ',
    )
    assert outcomes[1] == ("value", "<All keys matched successfully>")
    assert outcomes[2][:2] == ("raises", "AssertionError")


@needs_torch
def test_load_state_dict_hooks_match_torch():
    assert _load_hooks_program(fg) == _load_hooks_program(torch)


def _extra_state_program(T):
    class Counter(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = T.nn.Parameter(T.ones(1))
            self.count = 3

        def get_extra_state(self):
            return {"count": self.count}

        def set_extra_state(self, state):
            self.count = state["count"]

    saved = T.nn.Sequential(Counter()).state_dict()
    fresh = T.nn.Sequential(Counter())
    fresh[0].count = 0
    fresh.load_state_dict(saved)
    lin = T.nn.Linear(1, 1)
    return [
        list(saved),
        saved["0._extra_state"],
        fresh[0].count,
        _outcome(lambda: fresh.load_state_dict({"0.w": T.ones(1)})),
        _outcome(lambda: lin.load_state_dict({**lin.state_dict(), "_extra_state": 1})),
        _outcome(
            lambda: lin.load_state_dict({**lin.state_dict(), "_extra_state": 1}, strict=False).unexpected_keys
        ),
    ]


def test_extra_state_is_saved_and_loaded():
    log = _extra_state_program(fg)
    assert log[:3] == [["0.w", "0._extra_state"], {"count": 3}, 3]
    assert 'Missing key(s) in state_dict: "0._extra_state"' in log[3][2]
    assert 'Unexpected key(s) in state_dict: "_extra_state"' in log[4][2]
    assert log[5] == ("value", ["_extra_state"])


@needs_torch
def test_extra_state_matches_torch():
    assert _extra_state_program(fg) == _extra_state_program(torch)


def test_state_dict_positional_arguments_are_deprecated():
    lin = fg.nn.Linear(1, 1)
    destination = {}
    with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
        got = lin.state_dict(destination, "p.", True)
    assert got is destination and sorted(got) == ["p.bias", "p.weight"]
    assert got["p.weight"] is lin.weight  # keep_vars


# ---- looking modules, parameters and buffers up ----------------------------------------------


def _lookup_program(T):
    net = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.BatchNorm1d(2))
    net.register_buffer("scale", T.ones(1), persistent=False)
    log = [
        _outcome(lambda: list(net.get_parameter("0.bias").shape)),
        _outcome(lambda: net.get_parameter("0.nothing")),
        _outcome(lambda: net.get_parameter("1.running_mean")),
        _outcome(lambda: net.get_parameter("5.weight")),
        _outcome(lambda: net.get_parameter("0")),
        _outcome(lambda: net.get_buffer("scale").tolist()),
        _outcome(lambda: net.get_buffer("1.num_batches_tracked").tolist()),
        _outcome(lambda: net.get_buffer("0.weight")),
        _outcome(lambda: net.get_buffer("training")),
        _outcome(lambda: net.get_buffer("1.nothing")),
    ]
    log += [
        _outcome(lambda: (net.set_submodule("0", T.nn.ReLU()), type(net[0]).__name__)[1]),
        _outcome(lambda: (net.set_submodule("2", T.nn.Tanh()), len(net))[1]),
        _outcome(lambda: net.set_submodule("3", T.nn.Tanh(), strict=True)),
        _outcome(lambda: net.set_submodule("4.x", T.nn.Tanh())),
        _outcome(lambda: net.set_submodule("1.weight", T.nn.Tanh())),
        _outcome(lambda: net.set_submodule("", T.nn.Tanh())),
        _outcome(lambda: net.set_submodule("0", 3)),
    ]
    return log


def test_get_parameter_get_buffer_and_set_submodule():
    log = _lookup_program(fg)
    assert log[0] == ("value", [2]) and log[5] == ("value", [1.0]) and log[6] == ("value", 0)
    assert log[1] == ("raises", "AttributeError", "Linear has no attribute `nothing`")
    assert log[2] == ("raises", "AttributeError", "`running_mean` is not an nn.Parameter")
    assert log[7] == ("raises", "AttributeError", "`weight` is not a buffer")
    assert log[10:12] == [("value", "ReLU"), ("value", 3)]
    assert log[12] == ("raises", "AttributeError", "Sequential has no attribute `3`")
    assert log[15] == ("raises", "ValueError", "Cannot set the submodule without a target name!")


@needs_torch
def test_lookups_match_torch():
    assert _lookup_program(fg) == _lookup_program(torch)


# ---- containers -------------------------------------------------------------------------------


def _sequential_arithmetic_program(T):
    a, b = T.nn.Linear(1, 1), T.nn.ReLU()
    seq = T.nn.Sequential(a, b)

    def layout(module):
        return [
            (key, [a, b].index(m) if m in (a, b) else type(m).__name__) for key, m in module._modules.items()
        ]

    log = [
        layout(seq + T.nn.Sequential(T.nn.Tanh())),
        layout(seq * 2),
        layout(3 * T.nn.Sequential(b)),
        _outcome(lambda: seq + [b]),
        _outcome(lambda: seq * 0),
        _outcome(lambda: seq * 1.5),
    ]
    grown = T.nn.Sequential(a)
    same = grown.__iadd__(T.nn.Sequential(b))
    log.append((same is grown, layout(grown)))
    same = grown.__imul__(2)
    log.append((same is grown, layout(grown)))
    log.append(_outcome(lambda: grown.__iadd__(b)))
    return log


def test_sequential_arithmetic():
    log = _sequential_arithmetic_program(fg)
    assert log[0] == [("0", 0), ("1", 1), ("2", "Tanh")]
    assert log[1] == [("0", 0), ("1", 1), ("2", 0), ("3", 1)]
    assert log[2] == [("0", 1), ("1", 1), ("2", 1)]
    assert log[3][:2] == ("raises", "ValueError") and log[4][:2] == ("raises", "ValueError")
    assert log[5][:2] == ("raises", "TypeError")
    assert log[6] == (True, [("0", 0), ("1", 1)])
    assert log[7] == (True, [("0", 0), ("1", 1), ("2", 0), ("3", 1)])


@needs_torch
def test_sequential_arithmetic_matches_torch():
    def without_message(entry):
        # Messages name the class by its module path, which differs.
        return entry[:2] if isinstance(entry, tuple) and entry[0] == "raises" else entry

    got, want = _sequential_arithmetic_program(fg), _sequential_arithmetic_program(torch)
    assert [without_message(e) for e in got] == [without_message(e) for e in want]


def _module_dict_update_program(T):
    target = T.nn.ModuleDict({"q": T.nn.ReLU()})
    target.update(T.nn.ModuleDict({"r": T.nn.Tanh(), "a": T.nn.Identity()}))
    return [(key, type(module).__name__) for key, module in target.items()]


def test_module_dict_updates_from_a_module_dict():
    assert _module_dict_update_program(fg) == [("q", "ReLU"), ("r", "Tanh"), ("a", "Identity")]


@needs_torch
def test_module_dict_update_matches_torch():
    assert _module_dict_update_program(fg) == _module_dict_update_program(torch)


def _wrong_assignment_program(T):
    lin = T.nn.Linear(1, 1)
    return [
        _outcome(lambda: lin.register_parameter("extra", T.ones(1))),
        _outcome(lambda: setattr(lin, "weight", T.ones(1, 1, dtype=T.float64))),
        _outcome(lambda: setattr(lin, "weight", 3)),
    ]


def test_wrong_assignments_name_the_tensor_type():
    log = _wrong_assignment_program(fg)
    assert log[0] == (
        "raises",
        "TypeError",
        "cannot assign 'torch.FloatTensor' object to parameter 'extra' (torch.nn.Parameter or None required)",
    )
    assert "'torch.DoubleTensor' as parameter 'weight'" in log[1][2]
    assert "'int' as parameter 'weight'" in log[2][2]


@needs_torch
def test_wrong_assignments_match_torch():
    assert _wrong_assignment_program(fg) == _wrong_assignment_program(torch)


def _batch_norm_state_program(T):
    norm = T.nn.BatchNorm1d(2)
    norm(T.ones(3, 2))  # counts one batch
    saved = norm.state_dict()
    without_count = {k: v for k, v in saved.items() if k != "num_batches_tracked"}
    fresh = T.nn.BatchNorm1d(2)
    with_metadata = type(saved)(without_count)
    with_metadata._metadata = saved._metadata
    return [
        saved._metadata[""],
        # A state dict without metadata (as from an old checkpoint) need not hold the count.
        _outcome(lambda: (str(fresh.load_state_dict(without_count)), fresh.num_batches_tracked.item())),
        _outcome(lambda: T.nn.BatchNorm1d(2).load_state_dict(with_metadata)),
        _outcome(lambda: (str(fresh.load_state_dict(saved)), fresh.num_batches_tracked.item())),
    ]


def test_batch_norm_state_dicts_without_the_batch_count_load():
    log = _batch_norm_state_program(fg)
    assert log[0] == {"version": 2}
    assert log[1] == ("value", ("<All keys matched successfully>", 0))
    assert log[2][:2] == ("raises", "RuntimeError") and '"num_batches_tracked"' in log[2][2]
    assert log[3] == ("value", ("<All keys matched successfully>", 1))


@needs_torch
def test_batch_norm_state_dicts_match_torch():
    assert _batch_norm_state_program(fg) == _batch_norm_state_program(torch)


def test_modules_pickled_without_newer_hook_dicts_unpickle_whole():
    lin = fg.nn.Linear(2, 1)
    reduced = lin.__reduce_ex__(2)
    state = {
        k: v for k, v in reduced[2].items() if k not in ("_state_dict_hooks", "_load_state_dict_post_hooks")
    }
    restored = reduced[0](*reduced[1])
    restored.__setstate__(state)
    assert sorted(restored.state_dict()) == ["bias", "weight"]
    assert str(restored.load_state_dict(lin.state_dict())) == "<All keys matched successfully>"
    assert restored._state_dict_hooks == {} and restored._load_state_dict_post_hooks == {}


def _conversion_program(T):
    net = T.nn.Sequential(T.nn.Linear(1, 1), T.nn.BatchNorm1d(1))
    converted = net.type(T.float64)
    return [
        converted is net,
        [str(t.dtype) for t in net.state_dict().values()],
        net.share_memory() is net,
        [str(p.dtype) for p in net.parameters()],
    ]


def test_type_converts_every_tensor_and_share_memory_returns_the_module():
    log = _conversion_program(fg)
    # `type` converts integer buffers too (the batch count), unlike `double()`.
    assert log[0] and log[2]
    assert set(log[1]) == {"ferrograd.float64"} and set(log[3]) == {"ferrograd.float64"}


@needs_torch
def test_conversions_match_torch():
    got = _conversion_program(fg)
    assert [str(x).replace("ferrograd", "torch") for x in got] == [str(x) for x in _conversion_program(torch)]


def test_compile_leaves_the_module_unchanged_and_cuda_raises_as_a_cpu_build():
    net = fg.nn.Sequential(fg.nn.Linear(2, 1))
    x = fg.tensor([[1.0, 2.0]])
    before = net(x).tolist()
    assert net.compile(mode="max-autotune") is None
    assert net(x).tolist() == before
    with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
        net.cuda()
    if has_torch and torch.version.cuda is None:  # a CPU build, as the reference
        with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
            torch.nn.Linear(1, 1).cuda()


def _complex_module_program(T):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = T.nn.Linear(1, 1).to(T.complex64)
    # The first sentence: PyTorch's goes on to point to its own issue tracker.
    return [str(p.dtype).split(".")[-1] for p in module.parameters()], [
        (w.category.__name__, str(w.message).split(" or buffers.")[0]) for w in caught
    ]


def test_converting_a_module_to_complex_warns():
    dtypes, caught = _complex_module_program(fg)
    assert dtypes == ["complex64", "complex64"]
    assert len(caught) == 1 and caught[0][1].startswith("Complex modules are a new feature")


@needs_torch
def test_converting_a_module_to_complex_matches_torch():
    assert _complex_module_program(fg) == _complex_module_program(torch)

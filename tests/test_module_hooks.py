"""Module hooks: forward pre-hooks and hooks, and the full backward hooks
that see (and may replace) the gradients of a module's outputs and inputs."""

import warnings

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is the reference")

NO_INPUT_WARNING = "Full backward hook is firing when gradients are computed with respect to module outputs"


def _linear(T):
    lin = T.nn.Linear(3, 2)
    with T.no_grad():
        lin.weight.copy_(T.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]))
        lin.bias.fill_(0.5)
    return lin


def _values(grads):
    return [None if g is None else g.tolist() for g in grads]


def test_backward_hooks_see_output_then_input_gradients():
    lin = _linear(fg)
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
    lin = _linear(fg)
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
    lin = _linear(fg)
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
    lin = _linear(fg)
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
    lin = _linear(T)
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
    lin = _linear(T)
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
    assert _deprecated_hook_program(fg) == want

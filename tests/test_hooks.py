"""Tensor hooks: observe and replace gradients; removal; post-accumulate hooks."""

import pytest

import ferrograd as torch


def test_hook_on_non_leaf_replaces_gradient():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    y.sum().backward()
    assert seen == [[1.0, 1.0]]
    assert x.grad.tolist() == [20.0, 20.0]


def test_hook_on_leaf_runs_before_accumulation_and_can_be_removed():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    handle = x.register_hook(lambda g: g * 0 + 7)
    (x * 3).sum().backward()
    assert x.grad.tolist() == [7.0, 7.0]
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_hook_returning_none_keeps_gradient_and_retain_grad_sees_replacement():
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: None)
    y.register_hook(lambda g: g + 1)
    (y * 3).sum().backward()
    assert y.grad.tolist() == [4.0]
    assert x.grad.tolist() == [8.0]


def test_post_accumulate_grad_hook():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * x).sum().backward()
    assert seen == [[2.0, 4.0]]
    with pytest.raises(
        RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"
    ):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_hook_errors_and_exceptions():
    with pytest.raises(
        RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"
    ):
        torch.tensor([1.0]).register_hook(lambda g: g)
    x = torch.tensor([1.0], requires_grad=True)

    def bad(g):
        raise KeyError("from hook")

    x.register_hook(bad)
    with pytest.raises(KeyError, match="from hook"):
        (x * 2).sum().backward()


def test_node_hooks_and_prehooks():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = []
    pre = y.grad_fn.register_prehook(lambda grad_outputs: seen.append(("pre", grad_outputs[0].tolist())))
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 2, None))
    y.sum().backward(retain_graph=True)
    assert seen == [("pre", [1.0, 1.0])]
    assert x.grad.tolist() == [6.0, 6.0]  # 3 per element, doubled by the hook
    pre.remove()
    x.grad = None
    y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 0,))
    y.sum().backward()
    assert len(seen) == 1 and x.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("through", ["backward", "grad"])
def test_a_leaf_hook_runs_before_its_accumulator_pre_hooks(through):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = []
    x.register_hook(lambda g: (seen.append(("tensor", g.tolist())), g * 10)[1])
    accumulator = y.grad_fn.next_functions[0][0]
    accumulator.register_prehook(lambda grads: seen.append(("pre", grads[0].tolist())))
    if through == "backward":
        y.sum().backward()
        assert x.grad.tolist() == [30.0, 30.0]
    else:
        assert torch.autograd.grad(y.sum(), x)[0].tolist() == [30.0, 30.0]
    assert seen == [("tensor", [3.0, 3.0]), ("pre", [30.0, 30.0])]

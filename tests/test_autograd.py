"""Autograd semantics from the seeds: requires_grad propagation, backward,
accumulation, graph freeing, grad(), grad modes and their errors."""

import gc
import json
import subprocess
import sys
import textwrap
import threading
import warnings
import weakref

import numpy as np
import pytest

import ferrograd as torch  # the seeds' code runs with this alias unchanged
from ferrograd import autograd

from helpers import assert_raises_like_torch, has_torch


def test_tutorial_q_example():
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor([6.0, 4.0], requires_grad=True)
    Q = 3 * a**3 - b**2
    assert repr(Q) == "tensor([-12.,  65.], grad_fn=<SubBackward0>)"
    Q_sum = Q.sum()
    assert repr(Q_sum) == "tensor(53., grad_fn=<SumBackward0>)"
    Q_sum.backward()
    assert repr(9 * a**2 == a.grad) == "tensor([True, True])"
    assert repr(-2 * b == b.grad) == "tensor([True, True])"
    assert a.grad.tolist() == [36.0, 81.0]
    assert b.grad.tolist() == [-12.0, -8.0]


def test_backward_twice_without_retain_graph_raises_torchs_error():
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor([6.0, 4.0], requires_grad=True)
    Q = 3 * a**3 - b**2
    Q.sum().backward()
    with pytest.raises(RuntimeError) as err:
        Q.backward(gradient=torch.tensor([1.0, 1.0]))
    assert str(err.value) == (
        "Trying to backward through the graph a second time (or directly access saved tensors after they "
        "have already been freed). Saved intermediate values of the graph are freed when you call "
        ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph "
        "a second time or if you need to access saved tensors after calling backward."
    )


def test_backward_with_gradient_argument():
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor([6.0, 4.0], requires_grad=True)
    Q = 3 * a**3 - b**2
    Q.backward(gradient=torch.tensor([1.0, 1.0]))
    assert (a.grad == 9 * a**2).all().item() if hasattr(a.grad, "all") else True
    assert a.grad.tolist() == [36.0, 81.0]
    assert b.grad.tolist() == [-12.0, -8.0]


def test_retain_graph_allows_a_second_backward_and_grads_accumulate():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]
    x.grad = None
    assert x.grad is None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_requires_grad_propagates_as_the_seeds_state():
    x = torch.zeros(5, 5)
    y = torch.ones(5, 5)
    z = torch.ones(5, 5, requires_grad=True)
    a = x + y
    assert a.requires_grad is False and a.grad_fn is None and a.is_leaf
    b = a + z
    assert b.requires_grad is True and not b.is_leaf
    assert b.grad_fn.name() == "AddBackward0"


def test_frozen_inputs_record_no_node():
    w = torch.ones(3)
    x = torch.ones(3)
    out = (w * x).exp().sum()
    assert out.grad_fn is None and not out.requires_grad


def test_grad_is_none_until_first_backward_and_leaves_only():
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    assert x.grad is None
    y.sum().backward()
    assert x.grad.tolist() == [2.0]
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert y.grad is None  # non-leaf without retain_grad


def test_retain_grad_keeps_non_leaf_gradients():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    assert y.grad.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [18.0, 36.0]


def _identity_program(T):
    """Which attribute reads give back the object an earlier read gave."""
    seen = {}
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    first_node = y.grad_fn
    seen["grad_fn read twice"] = y.grad_fn is first_node
    (y * y).sum().backward(retain_graph=True)
    grad = x.grad
    seen["grad read twice"] = x.grad is grad
    seen["non-leaf grad read twice"] = y.grad is y.grad
    (y * y).sum().backward()
    seen["grad after accumulating"] = x.grad is grad
    seen["accumulated in place"] = grad.tolist() == [36.0, 72.0]
    assigned = T.zeros(2)
    x.grad = assigned
    seen["assigned grad"] = x.grad is assigned
    x.grad = None
    seen["grad set to None"] = x.grad is None
    v = x.detach()[1:]
    seen["base read twice"] = v._base is v._base
    with T.no_grad():
        z = x * 1
    z.requires_grad_()
    w = z * 2
    node = w.grad_fn
    w.mul_(2)
    seen["grad_fn after an in-place op"] = w.grad_fn is node
    return seen


def test_reading_an_attribute_again_gives_the_same_object():
    assert _identity_program(torch) == {
        "grad_fn read twice": True,
        "grad read twice": True,
        "non-leaf grad read twice": True,
        "grad after accumulating": True,
        "accumulated in place": True,
        "assigned grad": True,
        "grad set to None": True,
        "base read twice": True,
        "grad_fn after an in-place op": False,
    }


@pytest.mark.skipif(not has_torch, reason="torch is the reference")
def test_attribute_identity_matches_torch():
    import torch as reference

    assert _identity_program(torch) == _identity_program(reference)


@pytest.mark.parametrize(
    "grad, message",
    [
        (
            lambda T: T.ones(2, 2),
            r"^attempting to assign a gradient of size '\[2, 2\]' to a tensor of size '\[3\]'\. "
            "Please ensure that the gradient and the tensor are the same size$",
        ),
        (
            lambda T: T.ones(3, dtype=T.float64),
            r"^attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'\. "
            "The gradient must match the tensor's grad_dtype",
        ),
        (
            lambda T: T.ones(3, dtype=T.int64),
            "^attempting to assign a gradient with dtype 'long int' to a tensor with grad_dtype 'Float'",
        ),
    ],
)
def test_assigning_a_mismatched_grad_raises_torchs_error(grad, message):
    leaves = []

    def assign(F, T):
        leaves.append(T.ones(3, requires_grad=True))
        leaves[-1].grad = grad(T)

    assert_raises_like_torch(assign, RuntimeError, message)
    assert leaves and all(x.grad is None for x in leaves)


def test_next_functions_walk_the_graph():
    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([2.0], requires_grad=True)
    c = a * b + a
    names = [f.name() for f, _ in c.grad_fn.next_functions]
    assert names == ["MulBackward0", "torch::autograd::AccumulateGrad"]  # PyTorch's names
    acc = c.grad_fn.next_functions[1][0]
    assert acc.variable is not None and acc.variable.tolist() == [1.0]


def test_detach_and_requires_grad_errors():
    x = torch.tensor([1.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require gradients$"):
        torch.tensor([1, 2]).requires_grad_()
    assert torch.tensor([1.0]).requires_grad_().requires_grad


def test_implicit_gradient_errors():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(
        RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"
    ):
        torch.tensor([1.0]).sum().backward()
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of"):
        (x * 2).backward(torch.tensor([1.0, 2.0, 3.0]))


def test_autograd_grad_and_create_graph():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x**3).sum()
    (g,) = autograd.grad(y, x, create_graph=True)
    assert g.tolist() == [3.0, 12.0]
    assert x.grad is None
    (gg,) = autograd.grad(g.sum(), x)
    assert gg.tolist() == [6.0, 12.0]


GRAD_CYCLE_PROGRAM = textwrap.dedent(
    """
    import json, sys, warnings
    import {module} as torch

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.autograd.grad((x * x).sum(), x, create_graph=True)
        seen.append(len(caught))
        try:
            torch.ones(2).sum().backward(create_graph=True)
        except RuntimeError:
            pass
        seen.append(len(caught))
        (x * x).sum().backward(create_graph=True)
        seen.append(len(caught))
        torch.autograd.backward((x * x).sum(), create_graph=True, inputs=[x])
        (x * x).sum().backward(create_graph=True)
        seen.append(len(caught))
    messages = [(w.category.__name__, str(w.message)) for w in caught]
    json.dump({{"counts": seen, "messages": messages, "grad": x.grad.tolist()}}, sys.stdout)
    """
)


def run_grad_cycle_program(module):
    done = subprocess.run(
        [sys.executable, "-c", GRAD_CYCLE_PROGRAM.format(module=module)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_backward_with_create_graph_warns_once_a_process_of_the_grad_cycle():
    # A `.grad` with a graph can hold its own leaf: warned of once, by backward()
    # only, and only once a backward can run (a fresh process: the warning is
    # given once for good).
    ours = run_grad_cycle_program("ferrograd")
    assert ours["counts"] == [0, 0, 1, 1]
    ((category, message),) = ours["messages"]
    assert category == "UserWarning"
    assert message.startswith(
        "Using backward() with create_graph=True will create a reference cycle between the parameter "
        "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
        "creating the graph to avoid this. If you have to use this function, make sure to reset the "
        ".grad fields of your parameters to None after use to break the cycle and avoid the leak."
    )
    assert ours["grad"] == [6.0, 12.0]
    if has_torch:
        theirs = run_grad_cycle_program("torch")
        assert ours["counts"] == theirs["counts"]
        assert theirs["messages"][0][1].startswith(message)
        assert ours["grad"] == theirs["grad"]


def test_autograd_grad_unused_inputs():
    x = torch.tensor([1.0], requires_grad=True)
    z = torch.tensor([1.0], requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gx.tolist() == [2.0] and gz is None
    gx, gz = autograd.grad(y, [x, z], materialize_grads=True)
    assert gz.tolist() == [0.0]


def test_backward_inputs_restricts_accumulation():
    x = torch.tensor([1.0], requires_grad=True)
    w = torch.tensor([3.0], requires_grad=True)
    (x * w).sum().backward(inputs=[x])
    assert x.grad.tolist() == [3.0] and w.grad is None


def test_autograd_backward_with_several_roots():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    autograd.backward([(x * 2).sum(), (x * x).sum()])
    assert x.grad.tolist() == [4.0, 6.0]


def test_no_grad_enable_grad_set_grad_enabled():
    x = torch.tensor([1.0], requires_grad=True)
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        y = x * 2
        with torch.enable_grad():
            z = x * 2
    assert not y.requires_grad and z.requires_grad
    assert torch.is_grad_enabled()

    @torch.no_grad()
    def doubled(t):
        return t * 2

    assert not doubled(x).requires_grad
    torch.set_grad_enabled(False)
    assert not (x * 2).requires_grad
    torch.set_grad_enabled(True)
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad
    with torch.inference_mode():
        assert not (x * 2).requires_grad and torch.is_inference_mode_enabled()
    assert not torch.is_inference_mode_enabled()


def _inference_program(T):
    """What tensors made in inference mode may and may not do afterwards."""
    log = []

    def attempt(name, fn):
        try:
            fn()
            log.append((name, "ok"))
        except RuntimeError as e:
            log.append((name, str(e).split(".")[0]))

    x = T.ones(2, requires_grad=True)
    with T.inference_mode():
        made = T.ones(2)
        from_grad = x * 2
        made.add_(1)  # inside inference mode any tensor may be written
        inside_normal = T.ones(1)
    log.append(("flags", made.is_inference(), made[0].is_inference(), made.detach().is_inference()))
    log.append(("data", made.data.is_inference(), made.clone().is_inference(), (made * 2).is_inference()))
    log.append(("from_grad", from_grad.requires_grad, from_grad.is_inference(), x.is_inference()))
    log.append(("plain", inside_normal.is_inference(), T.ones(1).is_inference()))
    with T.no_grad():
        log.append(("no_grad", T.ones(1).is_inference()))
    with T.inference_mode():
        with T.inference_mode(False):
            log.append(("nested", T.ones(1).is_inference()))
    attempt("saved", lambda: (made * x).sum().backward())
    attempt("saved view", lambda: (made[0] * x).sum().backward())
    attempt("not saved", lambda: (made + x).sum().backward())
    attempt("clone saved", lambda: (made.clone() * x).sum().backward())
    attempt("inplace", lambda: made.add_(1))
    attempt("inplace view", lambda: made[0].zero_())
    attempt("requires_grad", lambda: made.requires_grad_())
    attempt("version", lambda: made._version)
    attempt("copy from", lambda: T.zeros(2).copy_(made))
    return log


def test_inference_tensors():
    log = dict((entry[0], entry[1:]) for entry in _inference_program(torch))
    assert log["flags"] == (True, True, True)
    assert log["data"] == (True, False, False)
    assert log["from_grad"] == (False, True, False)
    assert log["plain"] == (True, False) and log["no_grad"] == (False,) and log["nested"] == (False,)
    assert log["saved"] == log["saved view"] == ("Inference tensors cannot be saved for backward",)
    assert log["not saved"] == log["clone saved"] == log["copy from"] == ("ok",)
    assert (
        log["inplace"]
        == log["inplace view"]
        == ("Inplace update to inference tensor outside InferenceMode is not allowed",)
    )
    assert log["requires_grad"] == (
        "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed",
    )
    assert log["version"] == ("Inference tensors do not track version counter",)


@pytest.mark.skipif(not has_torch, reason="torch is the reference")
def test_inference_tensors_match_torch():
    import torch as reference

    assert _inference_program(torch) == _inference_program(reference)


def test_custom_function_cannot_save_an_inference_tensor():
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.save_for_backward(factor)
            return x * factor

        @staticmethod
        def backward(ctx, grad):
            (factor,) = ctx.saved_tensors
            return grad * factor, None

    with torch.inference_mode():
        factor = torch.full((2,), 3.0)
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        Scale.apply(x, factor)
    # Nothing is recorded without a gradient to compute, so nothing is saved.
    assert Scale.apply(torch.ones(2), factor).tolist() == [3.0, 3.0]


def test_reading_the_unfilled_grad_of_a_non_leaf_warns():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor is being accessed"):
        assert y.grad is None
    kept = x * 3
    kept.retain_grad()
    kept.sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert kept.grad.tolist() == [1.0, 1.0] and x.grad.tolist() == [5.0, 5.0]
        assert torch.ones(1).grad is None  # a leaf that does not require grad


def test_grad_mode_is_per_thread():
    seen = {}

    def worker():
        seen["enabled"] = torch.is_grad_enabled()
        x = torch.tensor([1.0], requires_grad=True)
        seen["requires"] = (x * 2).requires_grad

    with torch.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen == {"enabled": True, "requires": True}


def test_seeds_multithreaded_train_fn():
    results = []

    def train_fn():
        x = torch.ones(5, 5, requires_grad=True)
        y = (x + 3) * (x + 4) * 0.5
        y.sum().backward()
        results.append(x.grad.tolist())

    threads = [threading.Thread(target=train_fn) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [[[4.5] * 5] * 5] * 10


def test_type_promotion_follows_torch():
    f = torch.tensor([1.0, 2.0])
    i = torch.tensor([1, 2])
    d = torch.tensor([1.0], dtype=torch.float64)
    assert (i * 2.5).dtype == torch.float32
    assert (f * d).dtype == torch.float64
    assert (f * 2.0).dtype == torch.float32
    assert (i + i).dtype == torch.int64
    assert (i / i).dtype == torch.float32
    assert (torch.tensor(True) + 1).dtype == torch.int64
    assert (f + torch.tensor(1.0, dtype=torch.float64)).dtype == torch.float32  # 0-d does not widen
    assert (i + torch.tensor(1.0, dtype=torch.float64)).dtype == torch.float64
    assert torch.tensor(3).dtype == torch.int64 and torch.tensor(3.0).dtype == torch.float32


def test_numpy_interop_shares_memory():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.from_numpy(arr)
    arr[0, 0] = 100.0
    assert t[0, 0].item() == 100.0 if hasattr(t, "__getitem__") else True
    assert t.tolist()[0][0] == 100.0
    back = t.numpy()
    back[1, 2] = -1.0
    assert arr[1, 2] == -1.0
    assert np.shares_memory(back, arr)
    copy = torch.tensor(arr)
    arr[0, 1] = 7.0
    assert copy.tolist()[0][1] == 1.0
    assert torch.tensor(np.zeros(2)).dtype == torch.float64
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        torch.tensor([1.0], requires_grad=True).numpy()


def test_scalar_conversions_and_len():
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert len(t) == 2 and t.shape == (2, 2) and t.size() == (2, 2) and t.size(1) == 2
    assert t.dim() == 2 and t.numel() == 4
    assert [r.tolist() for r in t] == [[1.0, 2.0], [3.0, 4.0]]
    assert float(torch.tensor(2.5)) == 2.5 and int(torch.tensor(3)) == 3
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(torch.tensor(1.0))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(torch.tensor([1.0, 2.0]))


def test_training_loop_memory_stays_flat():
    """10^5 steps: graphs and saved tensors are freed every iteration."""

    def rss_kb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4

    w = torch.tensor([0.5, -0.25, 1.0], requires_grad=True)
    x = torch.tensor([1.0, 2.0, 3.0])
    marks = []
    for step in range(100_000):
        loss = ((w * x).tanh() * 2.0 - 1.0).sum()
        loss.backward()
        with torch.no_grad():
            w.grad = None
        if step in (10_000, 99_999):
            gc.collect()
            marks.append(rss_kb())
    assert marks[1] - marks[0] < 4096, marks


@pytest.mark.skipif(not has_torch, reason="torch not installed")
def test_grad_fn_names_match_torch():
    import torch as real

    def build(T):
        a = T.tensor([2.0, 3.0], requires_grad=True)
        return [
            (a + 1).grad_fn,
            (a - 1).grad_fn,
            (a * 2).grad_fn,
            (a / 2).grad_fn,
            (a**2).grad_fn,
            (2**a).grad_fn,
            a.exp().grad_fn,
            a.tanh().grad_fn,
            a.sum().grad_fn,
            a.sum(0).grad_fn,
            a.mean().grad_fn,
            a.view(2, 1).grad_fn,
            a.unsqueeze(0).grad_fn,
            (-a).grad_fn,
        ]

    ours = [f.name() for f in build(torch)]
    theirs = [f.name() for f in build(real)]
    assert ours == theirs
    assert [type(f).__name__ for f in build(torch)] == [type(f).__name__ for f in build(real)]


def test_a_node_is_an_instance_of_a_class_named_after_it():
    class Double(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.tensor([1.0], requires_grad=True)
    node = (x * 2).exp().grad_fn
    mul = node.next_functions[0][0]
    accumulate = mul.next_functions[0][0]
    custom = Double.apply(x).grad_fn
    assert [type(n).__name__ for n in (node, mul, accumulate, custom)] == [
        "ExpBackward0",
        "MulBackward0",
        "AccumulateGrad",
        "DoubleBackward",
    ]
    assert all(isinstance(n, autograd.graph.Node) for n in (node, mul, accumulate, custom))
    assert type((x * 3).grad_fn) is type(mul)
    assert repr(node).startswith("<ExpBackward0 object at 0x")


def node_identities(T):
    """How a graph's nodes compare by identity, reached along different paths."""
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y.exp() + y
    exp_node, y_node = (node for node, _ in z.grad_fn.next_functions)
    leaf = y.grad_fn.next_functions[0][0]
    walked = set()
    stack = [z.grad_fn]
    while stack:  # a graph walker that tells nodes apart by id, as graph printers do
        node = stack.pop()
        if id(node) not in walked:
            walked.add(id(node))
            stack.extend(n for n, _ in node.next_functions if n is not None)
    return [
        exp_node.next_functions[0][0] is y.grad_fn,
        y_node is y.grad_fn,
        leaf is y.grad_fn.next_functions[0][0],
        z.grad_fn.next_functions[0][0] is z.grad_fn.next_functions[0][0],
        len(walked),
    ]


def test_every_path_to_a_node_gives_the_same_object():
    assert node_identities(torch) == [True, True, True, True, 4]


def test_node_objects_keep_neither_themselves_nor_their_nodes_alive():
    class Keep(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.kept = torch.ones(2)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    x = torch.ones(2, requires_grad=True)
    y = Keep.apply(x) * 2
    keep_node = y.grad_fn.next_functions[0][0]
    kept = weakref.ref(keep_node.kept)
    assert keep_node is y.grad_fn.next_functions[0][0]
    del y, keep_node
    gc.collect()
    assert kept() is None
    # Many nodes made and dropped (their objects' records are swept out on the way);
    # a live graph's nodes keep their identity throughout.
    y = x * 3
    first = y.grad_fn
    for _ in range(5000):
        node = (x * 2).grad_fn
        assert node.next_functions[0][0] is node.next_functions[0][0]
        assert y.grad_fn is first and (y + 1).grad_fn.next_functions[0][0] is first


@pytest.mark.skipif(not has_torch, reason="torch is the reference")
def test_node_identities_match_torch():
    import torch as real

    assert node_identities(torch) == node_identities(real)


def test_empty_views_with_offsets_are_safe():
    x = torch.zeros(3, 0)
    row = x[2]
    assert row.shape == (0,) and row.tolist() == []
    assert (row + 1).shape == (0,) and row.sum().item() == 0.0
    y = torch.zeros(2, 3)[:, 3:]
    assert (y * 2).shape == (2, 0) and y.clone().shape == (2, 0)


def test_a_gradient_shared_with_a_sibling_node_is_kept_without_a_copy():
    """Both inputs of an add receive one gradient; the leaf's accumulator
    runs after the product's backward has finished reading it, so `.grad`
    takes that buffer itself rather than a copy."""
    a, b, c = (torch.randn(1000, dtype=torch.float64, requires_grad=True) for _ in range(3))
    s = a * b + c
    seen = []
    s.register_hook(lambda g: seen.append(g.data_ptr()))
    s.tanh().sum().backward()
    assert c.grad.data_ptr() == seen[0]
    np.testing.assert_allclose(c.grad.numpy(), 1 - np.tanh(s.detach().numpy()) ** 2)


def test_the_gradient_of_a_weight_used_transposed_is_kept_without_a_copy():
    """W's gradient through `W.t()` is a view of the product's buffer;
    nothing else reads it, so `.grad` takes that buffer instead of a copy."""
    x = torch.randn(8, 5, dtype=torch.float64)
    w = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g.data_ptr()))
    out = x @ w.t()
    out.tanh().sum().backward()
    assert w.grad.data_ptr() == seen[0]
    assert w.grad._base is None
    g = 1 - np.tanh(out.detach().numpy()) ** 2
    np.testing.assert_allclose(w.grad.numpy(), g.T @ x.numpy(), rtol=1e-12)
    kept = []
    w.grad = None
    w.register_hook(lambda g: kept.append(g))
    (x @ w.t()).tanh().sum().backward()
    assert w.grad.data_ptr() != kept[0].data_ptr()


def test_the_gradient_of_a_weight_used_transposed_arrives_in_its_layout():
    """`x @ W.t()` computes W's gradient in W's own layout: the buffer that
    reaches W's accumulator is already contiguous, so `.grad` needs no
    strided gather."""
    x = torch.randn(8, 5, dtype=torch.float64)
    w = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g.is_contiguous()))
    g = torch.randn(8, 3, dtype=torch.float64)
    (x @ w.t()).backward(g)
    assert seen == [True]
    np.testing.assert_allclose(w.grad.numpy(), g.numpy().T @ x.numpy())

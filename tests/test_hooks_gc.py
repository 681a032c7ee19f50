"""Hooks whose functions refer back to the tensor they watch make cycles
through the graph; the garbage collector frees them once unreachable."""

import gc
import weakref

import ferrograd as fg


class Watcher:
    """A hook function object that keeps a reference to what it watches."""

    def __init__(self):
        self.target = None
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1


def collected_after_drop(make):
    watcher = Watcher()
    tensor = make(watcher)
    watcher.target = tensor  # the cycle: tensor -> graph -> hook -> watcher -> tensor
    refs = [weakref.ref(watcher), weakref.ref(tensor)]
    del watcher, tensor
    gc.collect()
    return all(r() is None for r in refs)


def test_tensor_hook_on_a_non_leaf():
    def make(watcher):
        y = fg.ones(2, requires_grad=True) * 2
        y.register_hook(watcher)
        return y

    assert collected_after_drop(make)


def test_leaf_hooks():
    def make(watcher):
        x = fg.ones(2, requires_grad=True)
        x.register_hook(watcher)
        x.register_post_accumulate_grad_hook(watcher)
        return x

    assert collected_after_drop(make)


def test_node_hooks():
    def make(watcher):
        y = (fg.ones(2, requires_grad=True) + 1).neg()
        y.grad_fn.register_hook(watcher)
        y.grad_fn.register_prehook(watcher)
        return y

    assert collected_after_drop(make)


def test_hooks_of_a_live_graph_still_run():
    watcher = Watcher()
    x = fg.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(watcher)
    watcher.target = y
    ref = weakref.ref(watcher)
    del watcher
    gc.collect()
    assert ref() is not None  # reachable through y
    y.sum().backward()
    assert ref().calls == 1 and x.grad.tolist() == [2.0, 2.0]

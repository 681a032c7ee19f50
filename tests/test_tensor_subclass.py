"""Tensor subclasses: `Tensor(t)` and `t.as_subclass(cls)` alias `t` and keep its history
(`AliasBackward0`), while `Tensor._make_subclass` (how `nn.Parameter` is made) detaches."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch, torch

MODULES = [fg] + ([torch] if has_torch else [])


def alias_program(T) -> list:
    """What a user sees of aliases made through subclasses, as plain values."""

    class Marked(T.Tensor):
        pass

    seen: list = []
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    for source in (x, y):
        for make in (lambda t: Marked(t), lambda t: T.Tensor(t), lambda t: t.as_subclass(Marked)):
            a = make(source)
            seen.append((type(a).__name__, a.requires_grad, a.is_leaf, a.grad_fn.name(), a.tolist()))
            seen.append(a.data_ptr() == source.data_ptr())
            x.grad = None
            (a * T.tensor([1.0, 10.0, 100.0])).sum().backward(retain_graph=True)
            seen.append(x.grad.tolist())
    plain = T.ones(2)
    seen.append((plain.as_subclass(Marked).requires_grad, plain.as_subclass(Marked).grad_fn))
    back = Marked(y).as_subclass(T.Tensor)
    seen.append((type(back).__name__, back.grad_fn.name(), back.grad_fn.next_functions[0][0].name()))
    return seen


def test_aliases_keep_history():
    seen = alias_program(fg)
    assert seen[0] == ("Marked", True, False, "AliasBackward0", [1.0, 2.0, 3.0])
    assert seen[1] is True
    assert seen[2] == [1.0, 10.0, 100.0]
    assert seen[-3] == [2.0, 20.0, 200.0]  # through y = x * 2
    assert seen[-2] == (False, None)
    assert seen[-1] == ("Tensor", "AliasBackward0", "AliasBackward0")
    if has_torch:
        assert seen == alias_program(torch)


@pytest.mark.parametrize("T", MODULES, ids=lambda m: m.__name__)
def test_as_subclass_shares_elements_and_version(T):
    class Marked(T.Tensor):
        def __new__(cls, *args, **kwargs):
            raise AssertionError("as_subclass must not call __new__")

        def __init__(self, *args, **kwargs):
            raise AssertionError("as_subclass must not call __init__")

    base = T.zeros(4)
    marked = base.as_subclass(Marked)
    assert isinstance(marked, Marked)
    marked[1] = 5.0
    np.testing.assert_array_equal(base.numpy(), [0.0, 5.0, 0.0, 0.0])
    assert base._version == marked._version == 1


@pytest.mark.parametrize("T", MODULES, ids=lambda m: m.__name__)
def test_as_subclass_rejects_other_classes(T):
    x = T.ones(2)
    with pytest.raises(TypeError, match=re.escape("Make sure your class inherits from Tensor.")):
        x.as_subclass(int)
    with pytest.raises(TypeError, match=re.escape("cls must be a type (got str)")):
        x.as_subclass("Tensor")


def test_make_subclass_detaches():
    y = fg.ones(3, requires_grad=True) * 3
    param = fg.nn.Parameter(y)
    assert param.is_leaf and param.requires_grad and param.grad_fn is None
    assert param.data_ptr() == y.data_ptr()

"""utils._pytree: flattening and rebuilding nested containers, specs that print and compare as
torch's, tree_map over several trees, registered classes, and func's use of them."""

import collections
import dataclasses

import pytest

import ferrograd as fg
from ferrograd.utils import _pytree as pytree

from helpers import has_torch

Point = collections.namedtuple("Point", "x y")

TREES = [
    (1, 2),
    {"a": [1, None]},
    {"b": 1, "a": 2},
    1,
    None,
    [1, (2, 3), {"x": Point(4, [5])}],
    collections.OrderedDict(a=1, b=[2]),
    collections.deque([1, 2], maxlen=3),
    collections.defaultdict(list, a=[1]),
    [],
    {"nested": {"deeper": ((), [3])}},
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_round_trips(tree):
    leaves, spec = pytree.tree_flatten(tree)
    rebuilt = pytree.tree_unflatten(leaves, spec)
    assert rebuilt == tree and type(rebuilt) is type(tree)
    assert spec.num_leaves == len(leaves) == len(pytree.tree_leaves(tree))
    assert pytree.tree_structure(tree) == spec and spec.unflatten(leaves) == tree
    if has_torch:
        import torch.utils._pytree as torch_pytree

        torch_leaves, torch_spec = torch_pytree.tree_flatten(tree)
        assert leaves == torch_leaves and repr(spec) == repr(torch_spec)


def test_tree_map_over_several_trees():
    assert pytree.tree_map(lambda x, y: x + y, {"a": (1, 2)}, {"a": (10, 20)}) == {"a": (11, 22)}
    # A second tree may hold whole subtrees where the first has leaves.
    assert pytree.tree_map(lambda x, y: (x, y), [1, 2], [[5], {"k": 1}]) == [(1, [5]), (2, {"k": 1})]
    with pytest.raises(ValueError, match="arity mismatch"):
        pytree.tree_map(lambda x, y: x, [1, 2], [1])
    with pytest.raises(ValueError, match="structure mismatch"):
        pytree.tree_map(lambda x, y: x, [1, 2], (1, 2))
    seen = []
    assert pytree.tree_map_(seen.append, [1, (2,)]) == [1, (2,)] and seen == [1, 2]
    assert pytree.tree_map_only(int, lambda x: x * 10, [1, "a", 2.5]) == [10, "a", 2.5]
    assert pytree.tree_map(lambda x: 0, [1, [2]], is_leaf=lambda n: isinstance(n, list) and len(n) == 1) == [
        0,
        0,
    ]
    assert pytree.tree_all(lambda x: x > 0, [1, (2,)]) and not pytree.tree_any(lambda x: x > 5, [1, (2,)])
    assert pytree.tree_any_only(str, lambda s: s == "a", [1, "a"]) and pytree.tree_all_only(
        str, str.isalpha, [1, "a"]
    )
    tensors = pytree.tree_map(lambda t: t * 2, {"w": fg.ones(2), "b": [fg.zeros(1)]})
    assert tensors["w"].tolist() == [2.0, 2.0] and tensors["b"][0].tolist() == [0.0]


def test_unflatten_errors_and_leaves():
    spec = pytree.tree_structure((1, 2))
    with pytest.raises(
        ValueError, match="`leaves` has length 1 but the spec refers to a pytree that holds 2 items"
    ):
        pytree.tree_unflatten([1], spec)
    with pytest.raises(TypeError, match="Expected `treespec` to be instance of TreeSpec"):
        pytree.tree_unflatten([1], "spec")
    assert pytree.tree_structure(7) == pytree.LeafSpec() and pytree.tree_is_leaf(None)
    assert (
        pytree.is_namedtuple(Point(1, 2)) and pytree.is_namedtuple(Point) and not pytree.is_namedtuple((1, 2))
    )


def test_registered_classes_flatten():
    @dataclasses.dataclass
    class Pair:
        first: object
        second: object

    pytree.register_pytree_node(
        Pair, lambda p: ([p.first, p.second], None), lambda children, _: Pair(*children)
    )
    try:
        leaves, spec = pytree.tree_flatten([Pair(1, (2, 3))])
        assert leaves == [1, 2, 3] and pytree.tree_unflatten([4, 5, 6], spec) == [Pair(4, (5, 6))]
        with pytest.raises(ValueError, match="already registered"):
            pytree.register_pytree_node(Pair, lambda p: ([], None), lambda c, _: Pair(0, 0))
    finally:
        del pytree.SUPPORTED_NODES[Pair]


def test_vmap_takes_none_as_a_leaf():
    double = fg.func.vmap(lambda x, y: x * 2)
    with pytest.raises(
        ValueError, match="Got in_dim=0 for an input but the input is of type <class 'NoneType'>"
    ):
        double(fg.ones(2, 3), None)
    assert fg.func.vmap(lambda x, y: x * 2, in_dims=(0, None))(fg.ones(2, 3), None).shape == (2, 3)
    out, nothing = fg.func.vmap(lambda x: (x, None), out_dims=(0, None))(fg.ones(2, 3))
    assert out.shape == (2, 3) and nothing is None

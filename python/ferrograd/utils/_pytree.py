"""Pytrees: nested containers (tuples, lists, dicts, named tuples, ``OrderedDict``,
``defaultdict``, ``deque`` and registered classes) whose other values, ``None`` included, are
leaves.
``tree_flatten`` splits a tree into its leaves and a ``TreeSpec`` of its structure,
``tree_unflatten`` rebuilds it, and ``tree_map`` applies a function to every leaf. ``func``
(``vmap``, ``grad``, ``jvp``, ...) walks its arguments and results with these."""

from __future__ import annotations

import collections
from typing import Any, Callable, Iterable, Iterator, NamedTuple

__all__ = [
    "LeafSpec",
    "SUPPORTED_NODES",
    "TreeSpec",
    "is_namedtuple",
    "register_pytree_node",
    "tree_all",
    "tree_all_only",
    "tree_any",
    "tree_any_only",
    "tree_flatten",
    "tree_is_leaf",
    "tree_iter",
    "tree_leaves",
    "tree_map",
    "tree_map_",
    "tree_map_only",
    "tree_map_only_",
    "tree_structure",
    "tree_unflatten",
]

FlattenFn = Callable[[Any], "tuple[list, Any]"]
UnflattenFn = Callable[[Iterable, Any], Any]


class NodeDef(NamedTuple):
    """How a container type splits into its children and a context, and is rebuilt from them."""

    type: type
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn


SUPPORTED_NODES: dict[type, NodeDef] = {}


def register_pytree_node(
    cls: type,
    flatten_fn: FlattenFn,
    unflatten_fn: UnflattenFn,
    *,
    serialized_type_name: str | None = None,
    to_dumpable_context: Any = None,
    from_dumpable_context: Any = None,
    flatten_with_keys_fn: Any = None,
) -> None:
    """Makes ``cls`` a container: ``flatten_fn(node)`` returns ``(children, context)`` and
    ``unflatten_fn(children, context)`` rebuilds the node."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn)


def is_namedtuple(obj: Any) -> bool:
    """Whether ``obj`` (an instance or a class) is a named tuple."""
    cls = obj if isinstance(obj, type) else type(obj)
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


register_pytree_node(tuple, lambda t: (list(t), None), lambda children, _: tuple(children))
register_pytree_node(list, lambda xs: (list(xs), None), lambda children, _: list(children))
register_pytree_node(
    dict, lambda d: (list(d.values()), list(d)), lambda children, keys: dict(zip(keys, children))
)
register_pytree_node(
    collections.OrderedDict,
    lambda d: (list(d.values()), list(d)),
    lambda children, keys: collections.OrderedDict(zip(keys, children)),
)
register_pytree_node(
    collections.defaultdict,
    lambda d: (list(d.values()), [d.default_factory, list(d)]),
    lambda children, context: collections.defaultdict(context[0], zip(context[1], children)),
)
register_pytree_node(
    collections.deque,
    lambda d: (list(d), d.maxlen),
    lambda children, maxlen: collections.deque(children, maxlen=maxlen),
)
_NAMEDTUPLE = NodeDef(tuple, lambda t: (list(t), type(t)), lambda children, cls: cls(*children))


def _node_def(node: Any) -> NodeDef | None:
    found = SUPPORTED_NODES.get(type(node))
    if found is None and is_namedtuple(node):
        return _NAMEDTUPLE
    return found


def _spec_type(node_def: NodeDef, node: Any) -> type:
    """The type a spec records for ``node``: its own class for a named tuple."""
    return type(node) if node_def is _NAMEDTUPLE else node_def.type


class TreeSpec:
    """The structure of a pytree: a container ``type`` (None for a leaf), the ``context`` that
    rebuilding it needs (a dict's keys, a named tuple's class) and the specs of its children."""

    __slots__ = ("children_specs", "context", "num_leaves", "type")

    def __init__(self, type: type | None, context: Any, children_specs: list[TreeSpec]) -> None:
        self.type = type
        self.context = context
        self.children_specs = list(children_specs)
        self.num_leaves: int = 1 if type is None else sum(c.num_leaves for c in self.children_specs)

    @property
    def num_children(self) -> int:
        return len(self.children_specs)

    def is_leaf(self) -> bool:
        return self.type is None

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        return tree_unflatten(leaves, self)

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of ``tree`` at this spec's leaves; ``tree`` must have this structure
        down to them."""
        subtrees: list[Any] = []

        def walk(spec: TreeSpec, node: Any) -> None:
            if spec.is_leaf():
                subtrees.append(node)
                return
            node_def = _node_def(node)
            if node_def is None or _spec_type(node_def, node) is not spec.type:
                raise ValueError(
                    f"Node structure mismatch: expected a tree with structure {spec}, got {node!r}."
                )
            children, context = node_def.flatten_fn(node)
            if context != spec.context:
                raise ValueError(f"Node context mismatch: expected {spec.context!r}, got {context!r}.")
            if len(children) != spec.num_children:
                raise ValueError(
                    f"Node arity mismatch; expected {spec.num_children}, but got {len(children)}."
                )
            for child_spec, child in zip(spec.children_specs, children):
                walk(child_spec, child)

        walk(self, tree)
        return subtrees

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TreeSpec)
            and self.type is other.type
            and self.context == other.context
            and self.children_specs == other.children_specs
        )

    def __hash__(self) -> int:
        return hash((self.type, tuple(self.children_specs)))

    def _repr(self, indent: int) -> str:
        # As PyTorch prints specs: a leaf is `*`, children go one per line.
        if self.is_leaf():
            return "*"
        children = (",\n" + " " * (indent + 2)).join(c._repr(indent + 2) for c in self.children_specs)
        name = "namedtuple" if is_namedtuple(self.type) else self.type.__name__
        return f"TreeSpec({name}, {self.context!r}, [{children}])"

    def __repr__(self) -> str:
        return self._repr(0)


class LeafSpec(TreeSpec):
    """The structure of a single leaf."""

    def __init__(self) -> None:
        super().__init__(None, None, [])


def tree_is_leaf(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether ``tree`` is a leaf: not a container, or one that ``is_leaf`` stops at."""
    return (is_leaf is not None and is_leaf(tree)) or _node_def(tree) is None


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` in order, and its structure. ``is_leaf(node)`` may stop the walk
    at containers too."""
    leaves: list[Any] = []

    def walk(node: Any) -> TreeSpec:
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return LeafSpec()
        node_def = _node_def(node)
        children, context = node_def.flatten_fn(node)
        return TreeSpec(_spec_type(node_def, node), context, [walk(child) for child in children])

    return leaves, walk(tree)


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> Any:
    """The tree of structure ``treespec`` holding ``leaves``."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(
            f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of TreeSpec but got item of type {type(treespec)}."
        )
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(
            f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to a pytree "
            f"that holds {treespec.num_leaves} items ({treespec})."
        )
    remaining = iter(leaves)

    def build(spec: TreeSpec) -> Any:
        if spec.is_leaf():
            return next(remaining)
        children = [build(child) for child in spec.children_specs]
        node_def = SUPPORTED_NODES.get(spec.type) or (_NAMEDTUPLE if is_namedtuple(spec.type) else None)
        if node_def is None:
            raise ValueError(f"{spec.type} is not a registered pytree node.")
        return node_def.unflatten_fn(children, spec.context)

    return build(treespec)


def tree_iter(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> Iterator[Any]:
    """The leaves of ``tree``, one at a time."""
    yield from tree_flatten(tree, is_leaf)[0]


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(
    func: Callable[..., Any], tree: Any, *rests: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """The tree of ``func(leaf, *matching subtrees of rests)`` over ``tree``'s leaves; each of
    ``rests`` has ``tree``'s structure at least down to its leaves."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return tree_unflatten([func(*args) for args in zip(leaves, *others)], spec)


def tree_map_(
    func: Callable[..., Any], tree: Any, *rests: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """Calls ``func`` on every leaf (and the matching subtrees of ``rests``) for its effect;
    returns ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    for args in zip(leaves, *others):
        func(*args)
    return tree


def _only(type_or_types_or_pred: Any, func: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``func`` applied to leaves of the given types (or that pass the predicate); others pass."""
    if isinstance(type_or_types_or_pred, (type, tuple)):
        wanted = type_or_types_or_pred

        def selected(x: Any) -> bool:
            return isinstance(x, wanted)

    elif callable(type_or_types_or_pred):
        selected = type_or_types_or_pred
    else:
        raise TypeError(f"Unexpected type_or_types_or_pred: {type_or_types_or_pred}")
    return lambda x: func(x) if selected(x) else x


def tree_map_only(
    type_or_types_or_pred: Any,
    func: Callable[[Any], Any],
    tree: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """``tree_map`` that applies ``func`` only to leaves of the given types."""
    return tree_map(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_map_only_(
    type_or_types_or_pred: Any,
    func: Callable[[Any], Any],
    tree: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """``tree_map_`` that calls ``func`` only on leaves of the given types."""
    return tree_map_(_only(type_or_types_or_pred, func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred: Callable[[Any], bool], tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(
    type_or_types: Any, pred: Callable[[Any], bool], tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> bool:
    """Whether ``pred`` holds for every leaf of the given types."""
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(
    type_or_types: Any, pred: Callable[[Any], bool], tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> bool:
    """Whether ``pred`` holds for some leaf of the given types."""
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))

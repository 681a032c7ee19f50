"""``torch.func``: composable function transforms (``grad``, ``vjp``, ``jvp``, ``jacrev``,
``jacfwd``, ``hessian``, ``vmap``) and ``functional_call`` / ``stack_module_state``.

Everything is built on ferrograd's reverse-mode autograd:

- Each transform call opens a *level*: the differentiated inputs are replaced by fresh
  tensors (a clone of the input when it is itself part of an outer graph, so that
  transforms nest and compose with ordinary autograd; a clone of a new leaf otherwise).
  Gradients are always computed with ``create_graph=True`` and a result keeps its graph
  only when it still depends on something outside the level (an outer transform's input
  or a leaf the caller made), as ``torch.func`` unwraps its results.
- Forward-mode products (``jvp``, ``jacfwd``, ``linearize``) use the double-vjp identity:
  ``u -> u^T J`` is linear, so differentiating it with respect to ``u`` in the direction
  ``v`` gives ``J v``. One evaluation of ``func`` and one reverse pass record that map, and
  each direction then costs one reverse pass through it: ``jacfwd`` takes one per input
  element (its columns) where ``jacrev`` takes one per output element (its rows). This
  needs no dual level, so forward transforms nest freely, and it is what ferrograd's
  forward-mode AD does op by op, so running on dual tensors would not be faster. The
  exception is a graph holding a user's custom Function: torch.func differentiates it by its
  ``jvp`` (its backward need not be differentiable), so each direction then evaluates
  ``func`` again on dual tensors (see ``_Linearization``).
- ``vmap`` runs the function **once per slice** of the mapped dimension and stacks the
  results: it has PyTorch's semantics (nesting, composition with ``grad``, ``in_dims`` /
  ``out_dims`` pytrees, the randomness modes), not its speed.

Inputs and outputs may be pytrees: nested tuples, lists, dicts (and namedtuples) of
tensors; ``None`` is an empty node, as in PyTorch.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from . import _C
from ._C import Tensor
from .autograd import forward_ad
from .autograd import grad as _autograd_grad
from .autograd.functional import _grads, jacobian
from .autograd.grad_mode import enable_grad
from .nn.utils.stateless import _reparametrize_module
from .utils._pytree import TreeSpec as _Spec
from .utils._pytree import tree_flatten as _flatten
from .utils._pytree import tree_unflatten as _unflatten

__all__ = [
    "functional_call",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "replace_all_batch_norm_modules_",
    "stack_module_state",
    "vjp",
    "vmap",
]


# --------------------------------------------------------------------------- pytrees


def _broadcast_prefix(prefix: Any, spec: _Spec) -> list | None:
    """One value per leaf of ``spec``: an int or None in ``prefix`` covers a whole subtree.
    None when ``prefix`` is not a prefix of ``spec``'s structure."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * spec.num_leaves
    if spec.is_leaf():
        return None
    if isinstance(prefix, dict):
        if not issubclass(spec.type, dict) or set(prefix) != set(spec.context):
            return None
        subs = [prefix[k] for k in spec.context]
    elif isinstance(prefix, (tuple, list)):
        same = isinstance(prefix, tuple) == issubclass(spec.type, tuple)
        if not same or len(prefix) != spec.num_children:
            return None
        subs = list(prefix)
    else:
        return None
    out: list = []
    for sub, child in zip(subs, spec.children_specs):
        part = _broadcast_prefix(sub, child)
        if part is None:
            return None
        out.extend(part)
    return out


def _name(func: Callable) -> str:
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


# --------------------------------------------------------------------------- levels


_running = threading.local()


def _running_levels() -> list[_Level]:
    """The levels whose transform calls are under way on this thread, outermost first."""
    if not hasattr(_running, "levels"):
        _running.levels = []
    return _running.levels


class _Level:
    """One transform call: makes its differentiable inputs and unwraps its results. Used as a
    context manager around the call, so that leaves made by the levels nested in it count as
    its own (see :meth:`leaf`)."""

    def __init__(self) -> None:
        self.keep = _C.is_grad_enabled()
        self.stops: set = set()

    def __enter__(self) -> _Level:
        _running_levels().append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _running_levels().pop()

    def leaf(self, like: Tensor) -> Tensor:
        """A fresh tensor with ``like``'s value that this level differentiates with respect to.
        It is internal to every level running around this one too: a result of an outer
        level that depends on it depends on nothing outside that level."""
        fresh = like.detach().requires_grad_().clone()
        for level in {self, *_running_levels()}:
            level.stops.add(fresh.grad_fn)
        return fresh

    def input(self, t: Any) -> Tensor:
        if not isinstance(t, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
        if self.keep and t.requires_grad:
            return t.clone()  # stays connected to the outer graph
        return self.leaf(t)

    def _depends_on_outer(self, t: Tensor) -> bool:
        if not t.requires_grad:
            return False
        todo = [t.grad_fn]
        if todo[0] is None:
            return True  # a leaf made outside this level
        seen: set = set()
        while todo:
            node = todo.pop()
            if node in seen or node in self.stops:
                continue
            seen.add(node)
            if type(node).__name__ == "AccumulateGrad":
                return True
            todo.extend(f for f, _ in node.next_functions if f is not None)
        return False

    def unwrap_aux(self, aux: Any) -> Any:
        """The auxiliary output, which (as in PyTorch) may only hold tensors."""
        for x in _flatten(aux)[0]:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
        return self.unwrap(aux)

    def unwrap(self, tree: Any, keep: bool = True) -> Any:
        """``tree`` with every tensor detached unless it still depends on the outer graph."""
        leaves, spec = _flatten(tree)
        out = [
            x
            if not isinstance(x, Tensor) or (keep and self.keep and self._depends_on_outer(x))
            else x.detach()
            for x in leaves
        ]
        return _unflatten(out, spec)


def _argnums(argnums: Any, n: int) -> tuple[tuple[int, ...], bool]:
    """The wrapped positions of ``argnums`` and whether it was a single int."""

    def wrap(a: Any) -> int:
        if not isinstance(a, int):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if -n <= a < n:
            return a % n
        raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")

    if isinstance(argnums, int):
        return (wrap(argnums),), True
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        wrapped = tuple(wrap(a) for a in argnums)
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"argnums elements must be unique, got {wrapped}")
        return wrapped, False
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _prepare(level: _Level, args: tuple, argnums: Any) -> tuple[list, _Spec, Callable[[list], tuple]]:
    """The fresh flat differentiable inputs, the structure of the differentiated arguments
    (the argument itself for an int ``argnums``, a tuple of them otherwise) and a function
    rebuilding all the arguments from flat differentiable inputs."""
    positions, single = _argnums(argnums, len(args))
    diff = args[positions[0]] if single else tuple(args[p] for p in positions)
    flat, spec = _flatten(diff)
    fresh = [level.input(x) for x in flat]

    def rebuild(flat_inputs: list) -> tuple:
        new = _unflatten(flat_inputs, spec)
        new = (new,) if single else new
        out = list(args)
        for p, value in zip(positions, new):
            out[p] = value
        return tuple(out)

    return fresh, spec, rebuild


def _split_aux(output: Any, has_aux: bool, api: str) -> tuple[Any, Any]:
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


def _tensor_outputs(output: Any, api: str) -> tuple[list, _Spec]:
    flat, spec = _flatten(output)
    if not flat:
        raise RuntimeError(
            f"{api}: Expected f to be a function that has non-empty output (got output = {output})"
        )
    for o in flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}"
            )
    return flat, spec


def _zeros_like(t: Tensor) -> Tensor:
    return _C.zeros(*t.shape, dtype=t.dtype)


# --------------------------------------------------------------------------- grad and vjp


def grad_and_value(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """``func`` -> a function returning ``(gradient, value)`` (``(gradient, (value, aux))`` with
    ``has_aux``) of the scalar tensor ``func`` returns, with respect to the arguments at
    ``argnums`` (a tuple of gradients for a tuple of argnums; each gradient has its
    argument's pytree structure)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _Level() as level, enable_grad():
            fresh, spec, rebuild = _prepare(level, args, argnums)
            output, aux = _split_aux(func(*rebuild(fresh), **kwargs), has_aux, "grad_and_value(f)(*args)")
            if not isinstance(output, Tensor):
                raise RuntimeError(
                    f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}"
                )
            if output.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
                )
            grads = _grads((output,), fresh, (_C.ones(dtype=output.dtype),), True)
        gradient, value = level.unwrap((_unflatten(list(grads), spec), output))
        return (gradient, (value, level.unwrap_aux(aux))) if has_aux else (gradient, value)

    return wrapper


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """``func`` -> a function computing the gradient of the scalar ``func`` returns (with
    ``has_aux``: ``(gradient, aux)``). Transforms nest: ``grad(grad(f))`` is the second
    derivative, and ``vmap(grad(f))`` gives per-sample gradients."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        gradient, value = inner(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn)`` (and ``aux`` with ``has_aux``): ``vjp_fn(cotangents)``
    takes cotangents shaped as the output pytree and returns a tuple, one entry per primal,
    of the vector-Jacobian products. ``vjp_fn`` may be called several times."""
    with _Level() as level, enable_grad():
        fresh, spec, rebuild = _prepare(level, primals, tuple(range(len(primals))))
        output, aux = _split_aux(func(*rebuild(fresh)), has_aux, "vjp(f, *primals)")
        flat_out, out_spec = _tensor_outputs(output, "vjp(f, *primals)")
    for o in flat_out:
        if not (o.is_floating_point() or o.is_complex()):
            raise RuntimeError(
                f"vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor with dtype {o.dtype}"
            )

    def vjp_fn(cotangents: Any, retain_graph: bool = True, create_graph: bool | None = None) -> tuple:
        if create_graph is None:
            create_graph = _C.is_grad_enabled()
        flat_ct, ct_spec = _flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of outputs to "
                f"the function. cotangents: {ct_spec}, primal output: {out_spec}"
            )
        with enable_grad():
            grads = _grads(flat_out, fresh, flat_ct, True)
        return level.unwrap(_unflatten(list(grads), spec), keep=create_graph)

    out = level.unwrap(output)
    return (out, vjp_fn, level.unwrap_aux(aux)) if has_aux else (out, vjp_fn)


# --------------------------------------------------------------------------- jvp


class _Linearization:
    """``func`` evaluated at a level's fresh inputs, with ``u -> J^T u`` recorded for fresh
    cotangents ``u``: that map is linear, so its derivative with respect to ``u`` in a
    direction ``v`` is ``J v`` (the double-vjp identity). One evaluation and one reverse pass
    serve any number of directions, each one more reverse pass through the recorded vjp.

    When the graph holds a custom Function of the user's, whose backward may not be
    differentiable and whose ``jvp`` torch.func uses, each direction is instead one evaluation
    on dual tensors (forward AD, which calls ``Function.jvp``), unless a dual level is already
    open: levels do not nest."""

    def __init__(self, level: _Level, evaluate: Callable[[list], Any], fresh: list, has_aux: bool, api: str):
        self.evaluate, self.fresh, self.has_aux, self.api = evaluate, fresh, has_aux, api
        self.output, self.aux = _split_aux(evaluate(fresh), has_aux, api)
        self.flat_out, self.out_spec = _tensor_outputs(self.output, api)
        self.dual = forward_ad._current_level < 0 and _has_user_function(self.flat_out, fresh)
        if not self.dual:
            self.us = [level.leaf(_zeros_like(o)) for o in self.flat_out]
            self.vjps = _grads(self.flat_out, fresh, self.us, True)

    def push(self, directions: list) -> list:
        """``J v`` for ``v`` given by ``directions`` (one per fresh input, None for zeros),
        one tensor per flat output."""
        if self.dual:
            jv = self._push_dual(directions)
        else:
            linked = [(g, v) for g, v in zip(self.vjps, directions) if v is not None and g.requires_grad]
            jv = (None,) * len(self.us)
            if linked:
                jv = _autograd_grad(
                    [g for g, _ in linked],
                    self.us,
                    [v for _, v in linked],
                    create_graph=True,
                    allow_unused=True,
                )
        return [_zeros_like(o) if j is None else j for j, o in zip(jv, self.flat_out)]

    def _push_dual(self, directions: list) -> list:
        with forward_ad.dual_level():
            inputs = [x if v is None else forward_ad.make_dual(x, v) for x, v in zip(self.fresh, directions)]
            output, _ = _split_aux(self.evaluate(inputs), self.has_aux, self.api)
            return [forward_ad.unpack_dual(o).tangent for o in _tensor_outputs(output, self.api)[0]]


def _has_user_function(outputs: list, inputs: list) -> bool:
    """Whether the graph of ``outputs`` back to ``inputs`` holds a node of a custom Function
    other than ferrograd's own (those whose tangents come from their backward)."""
    stops = {x.grad_fn for x in inputs}
    todo = [o.grad_fn for o in outputs if o.grad_fn is not None]
    seen: set = set()
    while todo:
        node = todo.pop()
        if node in seen or node in stops:
            continue
        seen.add(node)
        # A custom Function's node reads the attributes of its ctx.
        cls = getattr(node, "_forward_cls", None)
        if cls is not None and not cls._jvp_from_backward:
            return True
        todo.extend(f for f, _ in node.next_functions if f is not None)
    return False


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False, has_aux: bool = False) -> tuple:
    """``(func(*primals), J @ tangents)`` (and ``aux`` with ``has_aux``); ``primals`` is a
    tuple of arguments and ``tangents`` has its structure. Computed by two reverse passes
    (the double-vjp identity)."""
    api = "jvp(f, primals, tangents)"
    flat_p, p_spec, flat_t = _flat_jvp_arguments(primals, tangents, api)
    level, lin = _linearize_at(func, flat_p, p_spec, has_aux, api)
    with enable_grad():
        jv = lin.push(flat_t)
    result = level.unwrap((lin.output, _unflatten(jv, lin.out_spec)))
    return (*result, level.unwrap_aux(lin.aux)) if has_aux else result


def _flat_jvp_arguments(primals: Any, tangents: Any, api: str) -> tuple[list, _Spec, list]:
    """The flat primals, their structure and the flat tangents, with PyTorch's errors for
    arguments ``jvp`` refuses."""
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    flat_p, p_spec = _flatten(primals)
    flat_t, t_spec = _flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            f"{api}: Expected primals and tangents to have the same python structure. For example, if "
            "primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
            f"{p_spec} and tangents with structure {t_spec}"
        )
    for what, flat in (("primals", flat_p), ("tangents", flat_t)):
        if not flat:
            raise RuntimeError(f"{api}: Expected {what} to be a non-empty tuple of Tensors.")
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(
                    f"{api}: Expected {what} to be a tuple of Tensors, got a tuple with an element of type {type(x)}"
                )
    for x, t in zip(flat_p, flat_t):
        if not (x.is_floating_point() or x.is_complex()):
            raise ValueError(f"Expected primal to be floating point or complex, but got: {x.dtype}")
        if x.shape != t.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the original Tensor, "
                f"this is not supported. Tensor is of size {list(x.shape)} while the given forward gradient is "
                f"of size {list(t.shape)}."
            )
    return flat_p, p_spec, flat_t


def _linearize_at(
    func: Callable, flat_p: list, p_spec: _Spec, has_aux: bool, api: str
) -> tuple[_Level, _Linearization]:
    """A level for ``func`` at the primals and its linearization there."""
    with _Level() as level, enable_grad():
        fresh = [level.input(x) for x in flat_p]
        return level, _Linearization(level, lambda xs: func(*_unflatten(xs, p_spec)), fresh, has_aux, api)


def linearize(func: Callable, *primals: Any) -> tuple[Any, Callable]:
    """``(func(*primals), jvp_fn)`` with ``jvp_fn(*tangents)`` the jvp at ``primals``.
    ``func`` runs once: each ``jvp_fn`` call is one reverse pass through its linearization."""
    api = "jvp(f, primals, tangents)"
    flat_p, p_spec, _ = _flat_jvp_arguments(primals, primals, api)
    level, lin = _linearize_at(func, flat_p, p_spec, False, api)

    def jvp_fn(*tangents: Any) -> Any:
        flat_t, t_spec = _flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(
                f"Expected the tangents {t_spec} to have the same argspec as the primals {p_spec}"
            )
        for idx, (t, p) in enumerate(zip(flat_t, flat_p)):
            for what in ("shape", "dtype"):
                if getattr(t, what) != getattr(p, what):
                    raise RuntimeError(
                        f"tangent:{idx} with {what} {getattr(t, what)} in flattened pytree doesn't match the "
                        f"{what} {getattr(p, what)} of the corresponding primal."
                    )
        with enable_grad():
            jv = lin.push(flat_t)
        return level.unwrap(_unflatten(jv, lin.out_spec))

    return level.unwrap(lin.output), jvp_fn


# --------------------------------------------------------------------------- Jacobians


def _refuse_complex(api: str, tensors: Any, what: str) -> None:
    """PyTorch's error for a complex input or output of a Jacobian transform."""
    for idx, x in enumerate(_flatten(tensors)[0]):
        if isinstance(x, Tensor) and x.is_complex():
            raise RuntimeError(
                f"{api.split('(')[0]}: Expected all {what} to be real but received complex tensor at "
                f"flattened input idx: {idx}"
            )


def _jacobian(func: Callable, argnums: Any, has_aux: bool, api: str) -> Callable:
    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        _refuse_complex(api, args, "inputs")
        found: dict[str, Any] = {}

        def flat_func(*flat_inputs: Tensor) -> tuple:
            output, found["aux"] = _split_aux(func(*rebuild(list(flat_inputs))), has_aux, api)
            flat_out, found["spec"] = _tensor_outputs(output, api)
            _refuse_complex(api, flat_out, "outputs")
            return tuple(flat_out)

        with _Level() as level, enable_grad():
            fresh, spec, rebuild = _prepare(level, args, argnums)
            rows = jacobian(flat_func, tuple(fresh), create_graph=True)
        jac = _unflatten([_unflatten(list(row), spec) for row in rows], found["spec"])
        result = level.unwrap(jac)
        return (result, level.unwrap_aux(found["aux"])) if has_aux else result

    return wrapper


def jacrev(
    func: Callable,
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
) -> Callable:
    """``func`` -> a function computing its Jacobian by reverse mode: for every output leaf,
    the Jacobian with respect to the arguments at ``argnums`` (shaped ``out.shape +
    in.shape``, in the arguments' pytree structure). ``chunk_size`` is accepted; rows are
    computed one at a time."""
    if chunk_size is not None and not chunk_size > 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian(func, argnums, has_aux, "jacrev(f, ...)(*args)")


def jacfwd(
    func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *, randomness: str = "error"
) -> Callable:
    """``func`` -> a function computing its Jacobian column by column, laid out as
    :func:`jacrev`'s: after one evaluation of ``func`` and one reverse pass, one more reverse
    pass per element of the differentiated arguments (see the module's notes), the cheap way
    for functions with few inputs and many outputs."""
    _check_randomness(randomness)
    api = "jacfwd(f, ...)(*args)"

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        _refuse_complex(api, args, "inputs")
        with _Level() as level, enable_grad():
            fresh, spec, rebuild = _prepare(level, args, argnums)
            lin = _Linearization(level, lambda xs: func(*rebuild(xs)), fresh, has_aux, api)
            _refuse_complex(api, lin.flat_out, "outputs")
            # columns[j][k]: the output columns along element k of input j.
            columns: list[list[list]] = []
            for j, x in enumerate(fresh):
                columns.append([])
                for k in range(x.numel()):
                    basis = _C.zeros(x.numel(), dtype=x.dtype)
                    basis[k] = 1
                    directions: list = [None] * len(fresh)
                    directions[j] = basis.reshape(x.shape)
                    columns[j].append(lin.push(directions))
        rows = [
            _unflatten(
                [
                    (
                        _C.stack([c[o] for c in cols], dim=-1)
                        if cols
                        else _C.zeros(*out.shape, 0, dtype=out.dtype)
                    ).reshape(*out.shape, *x.shape)
                    for cols, x in zip(columns, fresh)
                ],
                spec,
            )
            for o, out in enumerate(lin.flat_out)
        ]
        result = level.unwrap(_unflatten(rows, lin.out_spec))
        return (result, level.unwrap_aux(lin.aux)) if has_aux else result

    return wrapper


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """``func`` -> a function computing the Hessian: the Jacobian of the Jacobian, shaped
    ``out.shape + in.shape + in.shape``."""
    return jacfwd(jacrev(func, argnums), argnums)


# --------------------------------------------------------------------------- vmap


def _check_randomness(randomness: str) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}"
        )


def _batched_inputs(func: Callable, in_dims: Any, args: tuple) -> tuple[list, _Spec, list, int]:
    """The flat arguments, their structure, one normalized in_dim per leaf and the batch size."""
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
            f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying to "
            "vmap over a function with no inputs. The latter is unsupported."
        )
    flat, spec = _flatten(args)
    dims = _broadcast_prefix(in_dims, spec)
    if dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the structure "
            f"of `inputs`. in_dims has structure {_flatten(in_dims)[1]} but inputs has structure {spec}."
        )
    prefix = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={{}} for "
    for i, (arg, d) in enumerate(zip(flat, dims)):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(
                prefix.format(d) + "an input but in_dim must be either an integer dimension or None."
            )
        if not isinstance(arg, Tensor):
            raise ValueError(
                prefix.format(d) + f"an input but the input is of type {type(arg)}. We cannot vmap over "
                "non-Tensor arguments, please use None as the respective in_dim"
            )
        if not -arg.dim() <= d < arg.dim():
            raise ValueError(
                prefix.format(d) + f"some input, but that input is a Tensor of dimensionality {arg.dim()} "
                f"so expected in_dim to satisfy -{arg.dim()} <= in_dim < {arg.dim()}."
            )
        dims[i] = d % arg.dim()
    sizes = [arg.shape[d] for arg, d in zip(flat, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    return flat, spec, dims, sizes[0]


def _slice(flat: list, dims: list, i: int | None) -> list:
    """Slice ``i`` of every mapped argument (zeros shaped like a slice when ``i`` is None)."""
    out = []
    for arg, d in zip(flat, dims):
        if d is None:
            out.append(arg)
        elif i is None:
            out.append(_C.zeros(*(s for k, s in enumerate(arg.shape) if k != d), dtype=arg.dtype))
        else:
            out.append(arg.select(d, i))
    return out


def _stack_outputs(func: Callable, outputs: list, out_dims: Any, size: int) -> Any:
    name = _name(func)
    flats = [_flatten(o) for o in outputs]
    spec = flats[0][1]
    if any(s != spec for _, s in flats):
        raise ValueError(
            f"vmap({name}, ...): `{name}` must return outputs of the same structure for every slice"
        )
    for d in _flatten(out_dims)[0] if not isinstance(out_dims, int) else ():
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                "collection of ints representing where in the outputs the vmapped dimension should appear."
            )
    if spec.is_leaf() and isinstance(out_dims, tuple) and len(out_dims) == 1:
        dims: list | None = list(out_dims)
    else:
        dims = _broadcast_prefix(out_dims, spec)
    if dims is None:
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the structure "
            f"of `outputs`. out_dims has structure {_flatten(out_dims)[1]} but outputs has structure {spec}."
        )
    result = []
    for k, d in enumerate(dims):
        values = [leaves[k] for leaves, _ in flats]
        first = values[0]
        if d is None:
            if isinstance(first, Tensor) and any(not v.equal(first) for v in values[1:]):
                raise ValueError(
                    f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
                )
            result.append(first)
            continue
        if not isinstance(first, Tensor):
            raise ValueError(
                f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(first)}. "
                "Did you mean to set out_dims= to None for output?"
            )
        if size == 0:
            shape = list(first.shape)
            shape.insert(d % (first.dim() + 1), 0)
            result.append(_C.zeros(*shape, dtype=first.dtype))
        else:
            result.append(_C.stack(values, d))
    return _unflatten(result, spec)


_RANDOM_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the 'same' or "
    "'different' randomness flags on vmap or perform the randomness operation out of vmap"
)


def vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """``func`` mapped over a dimension of its inputs.

    ferrograd runs ``func`` **once per slice** of the mapped dimension (``in_dims``: an int,
    None for an argument that is not mapped, or a pytree prefix of the arguments) and
    stacks the results at ``out_dims`` (an int, None for an output that is the same for
    every slice, or a pytree prefix of the outputs). Keyword arguments are not mapped.
    The result is what PyTorch computes, at the cost of a Python loop: ``vmap`` nests and
    composes with the other transforms (``vmap(grad(f))`` gives per-sample gradients).

    ``randomness``: ``'different'`` lets each slice draw its own random numbers;
    ``'same'`` replays the default generator's state for every slice, so they all draw the
    same numbers; ``'error'`` raises when a slice advances the default generator (random
    ops on an explicit ``Generator`` are not detected). With a batch of size 0, ``func``
    runs once on zero-filled slices to learn the output shapes. ``chunk_size`` is accepted
    and has no effect, as slices already run one at a time.
    """
    _check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        flat, spec, dims, size = _batched_inputs(func, in_dims, args)
        start = _C.get_rng_state()
        outputs = []
        for i in range(size) if size else (None,):
            before = _C.get_rng_state()
            if randomness == "same" or i is None:
                _C.set_rng_state(start)
            outputs.append(func(*_unflatten(_slice(flat, dims, i), spec), **kwargs))
            if randomness == "error" and i is not None and not before.equal(_C.get_rng_state()):
                raise RuntimeError(_RANDOM_ERROR)
        if size == 0:
            _C.set_rng_state(start)
        return _stack_outputs(func, outputs, out_dims, size)

    return wrapped


# --------------------------------------------------------------------------- modules


def functional_call(
    module: Any,
    parameter_and_buffer_dicts: Any,
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module(*args, **kwargs)`` with its parameters and buffers replaced, for this call
    only, by the tensors in ``parameter_and_buffer_dicts`` (a dict of dotted names, or a
    list/tuple of such dicts with distinct keys). ``args`` that is not a tuple is the one
    positional argument."""
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        tensors = {}
        repeated = []
        for d in parameter_and_buffer_dicts:
            repeated += [k for k in d if k in tensors and k not in repeated]
            tensors.update(d)
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous"
            )
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
            f"{type(parameter_and_buffer_dicts)}"
        )
    positional = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrize_module(module, tensors, tie_weights=tie_weights, strict=strict):
        return module(*positional, **(kwargs or {}))


def stack_module_state(models: Any) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """``(params, buffers)``: for every parameter and buffer name of the models (all of one
    class and training mode), the models' tensors stacked along a new first dimension.
    Stacked parameters are new leaves that require grad when the models' do."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named: list[dict[str, Tensor]]) -> dict[str, Tensor]:
        out = {}
        for key in named[0]:
            tensors = [n[key] for n in named]
            flags = {t.requires_grad for t in tensors}
            if len(flags) != 1:
                raise RuntimeError(f"Expected {key} from each model to have the same .requires_grad")
            value = _C.stack([t.detach() for t in tensors])
            out[key] = value.requires_grad_() if flags.pop() else value
        return out

    return (
        stacked([dict(m.named_parameters()) for m in models]),
        stacked([dict(m.named_buffers()) for m in models]),
    )


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``func`` as a function without in-place mutations in its traced program. ferrograd runs
    eagerly and traces nothing, so the result runs ``func`` itself: the same outputs, and the
    same changes to its inputs, which a functionalized program also applies at its end."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
            "Valid options are:\n     remove='mutations': all inplace and out= operators will be removed "
            "from the program, and replaced with their out-of-place equivalents.\n     "
            "remove='mutations_and_views': In addition to the above, all aliasing operators {view} will "
            "be replaced with their non-aliasing counterparts, {view}_copy.\n"
        )

    @functools.wraps(func)
    def functionalized(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return functionalized


def replace_all_batch_norm_modules_(root: Any) -> Any:
    """Makes every batch-norm layer in ``root`` normalise by its batch's own statistics, in
    place: no running statistics are kept or used (as ``vmap`` over a model needs)."""
    from .nn.modules import _BatchNorm

    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root

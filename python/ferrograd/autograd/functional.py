"""Higher-level differentiation: ``vjp``, ``jvp``, ``jacobian``, ``hessian``,
``hvp`` and ``vhp`` with PyTorch's signatures, built on ``grad``.

Forward-mode products (``jvp``, ``hvp``) use the double-vjp identity: the
vjp is linear in its cotangent, so differentiating it again with respect to
the cotangent yields the jvp.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import _C


def _tuple(x) -> tuple[tuple, bool]:
    """``x`` as a tuple, and whether it already was one."""
    if isinstance(x, (tuple, list)):
        return tuple(x), True
    return (x,), False


def _grad_inputs(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs detached from any outer graph (kept when ``create_graph``) that require grad."""
    return tuple(i if create_graph and i.requires_grad else i.detach().requires_grad_() for i in inputs)


def _outputs(value, fn_name: str) -> tuple[tuple, bool]:
    """What the user's function returned, as a tuple of tensors, and whether it was a tuple (a
    list is refused, as torch refuses it)."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for k, item in enumerate(items):
        if not isinstance(item, _C.Tensor):
            where = f"value at index {k}" if is_tuple else "given outputs of the user-provided function"
            raise TypeError(
                f"The outputs of the user-provided function given to {fn_name} must be either a Tensor or a "
                f"tuple of Tensors but the {where} has type {type(item)}."
            )
    return items, is_tuple


def _single_output(value, fn_name: str, strict: bool) -> _C.Tensor:
    """The one-element tensor that ``hessian``/``vhp``/``hvp`` differentiate twice."""
    outputs, is_tuple = _outputs(value, fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if is_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single element"
        )
    return outputs[0]


_NOT_DIFFERENTIABLE = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be "
    "computed in a differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
    "function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect "
    "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure that your "
    "function is twice differentiable and that the jacobian depends on the inputs (this would be violated by a "
    "linear function for example).",
}


def _check_requires_grad(tensors, kind: str, strict: bool) -> None:
    """Strict mode's refusal of results that no longer depend on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(_INDEPENDENT["back"].format(i=i))
        if not t.requires_grad:
            raise RuntimeError(_NOT_DIFFERENTIABLE[kind].format(i=i))


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in "
    "strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
    "using the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed "
    "in strict mode.",
}


def _filled(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    """``grads`` with zeros like ``refs`` for the missing ones; strict mode refuses those, and
    with ``create_graph`` any that no longer depends on the inputs."""
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = _C.zeros(*ref.shape, dtype=ref.dtype)
        elif strict and create_graph and not g.requires_grad:
            what = "jacobian" if stage == "back" else "hessian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This is not allowed in "
                "strict mode when create_graph=True."
            )
        out.append(g if create_graph else g.detach())
    return tuple(out)


def _raw_grads(outputs, inputs, cotangents, create_graph: bool) -> tuple:
    """Gradients of the outputs that require grad (None for an input none of them reaches)."""
    from . import grad

    diff = [(o, v) for o, v in zip(outputs, cotangents) if o.requires_grad]
    if not diff:
        return (None,) * len(inputs)
    return grad(
        [o for o, _ in diff], inputs, [v for _, v in diff], create_graph=create_graph, allow_unused=True
    )


def _grads(outputs, inputs, cotangents, create_graph: bool) -> tuple:
    """The vector-Jacobian product, zeros for inputs the outputs do not reach; the graph is kept
    so that the result can be differentiated again."""
    return _filled(_raw_grads(outputs, inputs, cotangents, True), inputs, False, create_graph, "back")


def _ones_like_outputs(outputs: tuple, v) -> tuple:
    if v is None:
        if any(o.numel() != 1 for o in outputs):
            raise RuntimeError(
                "The vector v can only be None if the user-provided function returns a single Tensor with a single element."
            )
        return tuple(_C.ones(*o.shape, dtype=o.dtype) for o in outputs)
    return _tuple(v)[0]


def _validated(v, like: tuple, like_is_tuple: bool) -> tuple:
    """``v`` as a tuple of tensors shaped as ``like`` (the function's outputs or inputs)."""
    vs = _tuple(v)[0]
    if len(vs) != len(like):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(vs)}.")
    for k, (el_v, el) in enumerate(zip(vs, like)):
        if el_v.shape != el.shape:
            prefix = f"Entry {k} in " if like_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {el.shape} but got {el_v.shape}.")
    return vs


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``."""
    inputs_t, is_tuple = _tuple(inputs)
    xs = _grad_inputs(inputs_t, create_graph)
    outputs, out_tuple = _outputs(func(*xs), "vjp")
    _check_requires_grad(outputs, "outputs", strict)
    vs = _ones_like_outputs(outputs, None) if v is None else _validated(v, outputs, out_tuple)
    grads = _filled(_raw_grads(outputs, xs, vs, create_graph), xs, strict, create_graph, "back")
    outs = tuple(o if create_graph else o.detach() for o in outputs)
    return (outs if out_tuple else outs[0]), (grads if is_tuple else grads[0])


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``."""
    from . import grad

    inputs_t, is_tuple = _tuple(inputs)
    xs = _grad_inputs(inputs_t, True)
    outputs, out_tuple = _outputs(func(*xs), "jvp")
    _check_requires_grad(outputs, "outputs", strict)
    if v is None:
        if any(i.numel() != 1 for i in inputs_t):
            raise RuntimeError(
                "The vector v can only be None if the input to the user-provided function is a single Tensor with a single element."
            )
        v = tuple(_C.ones(*i.shape, dtype=i.dtype) for i in inputs_t)
    vs = _validated(v, inputs_t, is_tuple)
    # u is a dummy cotangent; d(u^T J)/du . v = J v.
    us = tuple(_C.zeros(*o.shape, dtype=o.dtype).requires_grad_() for o in outputs)
    vjps = _raw_grads(outputs, xs, us, True)
    _check_requires_grad(vjps, "grad_inputs", strict)
    vjps = _filled(vjps, xs, False, True, "back")
    linear = [(j, v) for j, v in zip(vjps, vs) if j.requires_grad]
    if linear:
        jv = grad(
            [j for j, _ in linear], us, [v for _, v in linear], create_graph=create_graph, allow_unused=True
        )
    else:  # no output depends on the inputs: J = 0
        jv = (None,) * len(outputs)
    jv = _filled(jv, outputs, strict, create_graph, "back_trick")
    outs = tuple(o if create_graph else o.detach() for o in outputs)
    return (outs if out_tuple else outs[0]), (jv if out_tuple else jv[0])


def jacobian(
    func: Callable,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
):
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` has shape ``out_i.shape + in_j.shape``.
    ``strategy="forward-mode"`` computes it a column at a time with forward AD."""
    from . import grad

    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` "
                'and `strategy="forward-mode"` are not supported together (yet). '
                "Please either set `create_graph=False` or "
                '`strategy="reverse-mode"`.'
            )
        return _jacobian_forward(func, inputs, strict, vectorize)
    inputs_t, is_tuple = _tuple(inputs)
    xs = _grad_inputs(inputs_t, create_graph)
    outputs, out_tuple = _outputs(func(*xs), "jacobian")
    _check_requires_grad(outputs, "outputs", strict)
    if vectorize and strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported together. "
            "Please either set `strict=False` or `vectorize=False`."
        )
    rows = []
    for o, out in enumerate(outputs):
        flat = out.reshape(-1)
        per_input = [[] for _ in xs]
        for k in range(flat.numel()):
            if out.requires_grad:
                gs = grad(flat[k], xs, retain_graph=True, create_graph=create_graph, allow_unused=True)
            else:
                gs = (None,) * len(xs)
            for j, (g, x) in enumerate(zip(gs, xs)):
                if g is None:
                    if strict:
                        raise RuntimeError(
                            f"Output {o} of the user-provided function is independent of input {j}. This is not "
                            "allowed in strict mode."
                        )
                    g = _C.zeros(*x.shape, dtype=x.dtype)
                elif strict and create_graph and not g.requires_grad:
                    raise RuntimeError(
                        f"The jacobian of the user-provided function is independent of input {o}. This is not "
                        "allowed in strict mode when create_graph=True."
                    )
                per_input[j].append(g if create_graph else g.detach())
        rows.append(
            tuple(
                (_C.stack(gs) if gs else _C.zeros(0, *x.shape, dtype=x.dtype)).reshape(*out.shape, *x.shape)
                for gs, x in zip(per_input, xs)
            )
        )
    if not is_tuple:
        rows = [r[0] for r in rows]
    return tuple(rows) if out_tuple else rows[0]


def _jacobian_forward(func: Callable, inputs, strict: bool, vectorize: bool):
    """The Jacobian through forward AD: one dual evaluation of ``func`` per input element, whose
    output tangents are that element's column."""
    from . import forward_ad

    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` "
            'and `strategy="forward-mode"` are not supported together (yet). '
            "Please either set `strict=False` or "
            '`strategy="reverse-mode"`.'
        )
    if not vectorize:
        # PyTorch's words, its missing space included.
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`."
        )
    inputs_t, is_tuple = _tuple(inputs)
    columns: list[list[list]] = []  # per output, per input: the columns
    out_tuple, outputs = False, ()
    for j, x in enumerate(inputs_t):
        for k in range(x.numel()):
            with forward_ad.dual_level():
                duals = []
                for i, y in enumerate(inputs_t):
                    tangent = _C.zeros(y.numel(), dtype=y.dtype)
                    if i == j:
                        tangent[k] = 1
                    duals.append(forward_ad.make_dual(y, tangent.reshape(y.shape)))
                outputs, out_tuple = _tuple(func(*duals))
                if not columns:
                    columns = [[[] for _ in inputs_t] for _ in outputs]
                for o, out in enumerate(outputs):
                    primal, tangent = forward_ad.unpack_dual(out)
                    columns[o][j].append(tangent.detach() if tangent is not None else _C.zeros_like(primal))
    rows = []
    for o, out in enumerate(outputs):
        rows.append(
            tuple(
                (_C.stack(cols, dim=-1) if cols else _C.zeros(*out.shape, 0, dtype=out.dtype)).reshape(
                    *out.shape, *x.shape
                )
                for cols, x in zip(columns[o], inputs_t)
            )
        )
    if not is_tuple:
        rows = [r[0] for r in rows]
    return tuple(rows) if out_tuple else rows[0]


def hessian(
    func: Callable,
    inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
):
    """The Hessian of a scalar function: the Jacobian of its gradient (forward over reverse with
    ``outer_jacobian_strategy="forward-mode"``)."""
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    inputs_t, is_tuple = _tuple(inputs)
    forward = outer_jacobian_strategy == "forward-mode"

    def gradient(*xs):
        if forward:
            # The dual inputs are the variables the gradient is taken with respect to.
            xs = tuple(x.requires_grad_(True) for x in xs)
        out = _single_output(func(*xs), "hessian", strict)
        g = _raw_grads((out,), xs, (_C.ones(*out.shape, dtype=out.dtype),), True)
        g = _filled(g, xs, False, True, "back")
        _check_requires_grad(g, "jacobian", strict)
        return g if is_tuple else g[0]

    return jacobian(
        gradient,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)``."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)``; the Hessian is symmetric, so this is ``vhp``."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func: Callable, inputs, v, create_graph: bool, strict: bool, fn_name: str):
    inputs_t, is_tuple = _tuple(inputs)
    xs = _grad_inputs(inputs_t, True)
    out = _single_output(func(*xs), fn_name, strict)
    jac = _raw_grads((out,), xs, (_C.ones(*out.shape, dtype=out.dtype),), True)
    _check_requires_grad(jac, "jacobian", strict)
    jac = _filled(jac, xs, False, True, "back")
    vs = _ones_like_outputs(inputs_t, v) if v is None else _validated(v, inputs_t, is_tuple)
    res = _filled(_raw_grads(jac, xs, vs, create_graph), xs, strict, create_graph, "double_back")
    return (out if create_graph else out.detach()), (res if is_tuple else res[0])


__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

"""``autograd.functional``'s strict mode and argument checks: each error is raised where torch
raises it, with torch's type and words (checked against torch when it is installed)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch, torch


def _inputs(T):
    x = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
    y = T.tensor([0.5, -1.0, 2.0], dtype=T.float64)
    return x, y, T.ones(3, dtype=T.float64)


NOT_DIFFERENTIABLE = (
    "Output 0 of the user-provided function does not require gradients. The outputs must be computed in a "
    "differentiable manner from the input when running in strict mode."
)
LINEAR_HESSIAN = (
    "While computing the hessian, found that the jacobian of the user-provided function with respect to input 0 "
    "is independent of the input. This is not allowed in strict mode."
)

CASES = {
    "jacobian of a constant": (
        lambda T, AF, x, y, o: AF.jacobian(lambda a: T.ones(2, dtype=T.float64), x, strict=True),
        RuntimeError,
        NOT_DIFFERENTIABLE,
    ),
    "jacobian of a detached output": (
        lambda T, AF, x, y, o: AF.jacobian(lambda a: a.detach() * 2, x, strict=True),
        RuntimeError,
        NOT_DIFFERENTIABLE,
    ),
    "vjp of a constant": (
        lambda T, AF, x, y, o: AF.vjp(lambda a: T.ones(3, dtype=T.float64), x, o, strict=True),
        RuntimeError,
        NOT_DIFFERENTIABLE,
    ),
    "jvp of a constant": (
        lambda T, AF, x, y, o: AF.jvp(lambda a: T.ones(3, dtype=T.float64), x, o, strict=True),
        RuntimeError,
        NOT_DIFFERENTIABLE,
    ),
    "vjp ignoring an input": (
        lambda T, AF, x, y, o: AF.vjp(lambda a, b: a * 2, (x, y), o, strict=True),
        RuntimeError,
        "The output of the user-provided function is independent of input 1. This is not allowed in strict mode.",
    ),
    "jvp ignoring an input": (
        lambda T, AF, x, y, o: AF.jvp(lambda a, b: a * 2, (x, y), (o, o), strict=True),
        RuntimeError,
        "The output of the user-provided function is independent of input 1. This is not allowed in strict mode.",
    ),
    "vjp of a linear function with create_graph": (
        lambda T, AF, x, y, o: AF.vjp(lambda a, b: a * 2 + b, (x, y), o, strict=True, create_graph=True),
        RuntimeError,
        "The jacobian of the user-provided function is independent of input 0. This is not allowed in strict mode "
        "when create_graph=True.",
    ),
    "jacobian of a linear function with create_graph": (
        lambda T, AF, x, y, o: AF.jacobian(lambda a: a * 2, x, strict=True, create_graph=True),
        RuntimeError,
        "The jacobian of the user-provided function is independent of input 0. This is not allowed in strict mode "
        "when create_graph=True.",
    ),
    "jacobian, an output ignoring an input": (
        lambda T, AF, x, y, o: AF.jacobian(lambda a, b: (a * 2, b * a), (x, y), strict=True),
        RuntimeError,
        "Output 0 of the user-provided function is independent of input 1. This is not allowed in strict mode.",
    ),
    "hessian of a linear function": (
        lambda T, AF, x, y, o: AF.hessian(lambda a: (a * 2).sum(), x, strict=True),
        RuntimeError,
        LINEAR_HESSIAN,
    ),
    "hvp of a linear function": (
        lambda T, AF, x, y, o: AF.hvp(lambda a: (a * 2).sum(), x, o, strict=True),
        RuntimeError,
        LINEAR_HESSIAN,
    ),
    "vhp of a linear function": (
        lambda T, AF, x, y, o: AF.vhp(lambda a: a.sum(), x, o, strict=True),
        RuntimeError,
        LINEAR_HESSIAN,
    ),
    "hessian, a term linear in an input": (
        lambda T, AF, x, y, o: AF.hessian(lambda a, b: (a**2).sum() + b.sum(), (x, y), strict=True),
        RuntimeError,
        LINEAR_HESSIAN.replace("input 0", "input 1"),
    ),
    "strict and vectorize": (
        lambda T, AF, x, y, o: AF.jacobian(lambda a: a * 2, x, strict=True, vectorize=True),
        RuntimeError,
        "`strict=True` and `vectorized=True` are not supported together",
    ),
    "a number as output": (
        lambda T, AF, x, y, o: AF.jacobian(lambda a: 3.0, x),
        TypeError,
        "The outputs of the user-provided function given to jacobian must be either a Tensor or a tuple of "
        "Tensors but the given outputs of the user-provided function has type <class 'float'>.",
    ),
    "a list as output": (
        lambda T, AF, x, y, o: AF.jvp(lambda a: [a], x, o),
        TypeError,
        "given to jvp must be either a Tensor or a tuple of Tensors but the given outputs of the user-provided "
        "function has type <class 'list'>.",
    ),
    "a number in an output tuple": (
        lambda T, AF, x, y, o: AF.vjp(lambda a: (a, 3), x, (o, o)),
        TypeError,
        "given to vjp must be either a Tensor or a tuple of Tensors but the value at index 1 has type <class 'int'>.",
    ),
    "hessian of a vector": (
        lambda T, AF, x, y, o: AF.hessian(lambda a: a * 2, x),
        RuntimeError,
        "The Tensor returned by the function given to hessian should contain a single element",
    ),
    "vhp of a tuple": (
        lambda T, AF, x, y, o: AF.vhp(lambda a: (a.sum(), a.sum()), x, o),
        RuntimeError,
        "The function given to vhp should return a single Tensor",
    ),
    "hvp of a vector": (
        lambda T, AF, x, y, o: AF.hvp(lambda a: a * 2, x, o),
        RuntimeError,
        "The Tensor returned by the function given to hvp should contain a single element",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_functional_errors_read_as_torch_words_them(case):
    call, kind, message = CASES[case]
    for T in [fg] + ([torch] if has_torch else []):
        with pytest.raises(kind, match=re.escape(message)):
            call(T, T.autograd.functional, *_inputs(T))


@pytest.mark.parametrize(
    "call",
    [
        lambda T, AF, x, y, o: AF.vjp(lambda a, b: a * b, (x, y), o, strict=True)[1],
        lambda T, AF, x, y, o: AF.jvp(lambda a, b: a * b, (x, y), (o, o), strict=True)[1],
        lambda T, AF, x, y, o: AF.jvp(lambda a: a * 2, x, o, strict=True)[1],
        lambda T, AF, x, y, o: AF.jacobian(lambda a: a**2, x, strict=True, create_graph=True),
        lambda T, AF, x, y, o: AF.hessian(lambda a: (a**3).sum(), x, strict=True, create_graph=True),
        lambda T, AF, x, y, o: AF.vhp(lambda a, b: (a**2).sum() + (b**3).sum(), (x, y), (o, o), strict=True)[
            1
        ],
        lambda T, AF, x, y, o: AF.hvp(lambda a: (a**2).sum(), x, o, strict=True, create_graph=True)[1],
    ],
)
def test_strict_mode_accepts_what_depends_on_the_inputs(call):
    x, y, o = _inputs(fg)
    result = call(fg, fg.autograd.functional, x, y, o)
    flat = result if isinstance(result, tuple) else (result,)
    expected = None
    if has_torch:
        t_result = call(torch, torch.autograd.functional, *_inputs(torch))
        expected = t_result if isinstance(t_result, tuple) else (t_result,)
    for k, r in enumerate(flat):
        assert np.isfinite(r.detach().numpy()).all()
        if expected is not None:
            np.testing.assert_allclose(r.detach().numpy(), expected[k].detach().numpy(), rtol=1e-12)


def test_a_gradcheck_failure_prints_both_jacobians_as_tensors():
    x = fg.tensor([1.0, 2.0], dtype=fg.float64, requires_grad=True)
    with pytest.raises(fg.autograd.GradcheckError, match=r"numerical:tensor\(\[\[2\.0000, 0\.0000\]"):
        fg.autograd.gradcheck(lambda a: a.detach() * 2 + a * 0, (x,))

"""``gradcheck``/``gradgradcheck``: analytical Jacobians (from backward)
against central finite differences, in float64 as PyTorch recommends."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .. import _C
from .._C import Tensor


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when the Jacobians disagree."""


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable_inputs(inputs: tuple) -> list[int]:
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _outputs(func: Callable, inputs: tuple) -> tuple:
    """The differentiable (floating) outputs of ``func``."""
    return tuple(o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor) and o.dtype.is_floating_point)


def _numerical_jacobian(func: Callable, inputs: tuple, index: int, eps: float) -> list[np.ndarray]:
    """d(outputs)/d(inputs[index]) by central differences: one matrix
    (input numel x output numel) per output."""
    x = inputs[index]
    # Evaluated with grad mode on: gradgradcheck's function calls grad() itself.
    base = x.detach().clone().requires_grad_(x.requires_grad)
    flat = base.detach().numpy().reshape(-1)
    columns: list[list[np.ndarray]] = []
    for k in range(flat.size):
        orig = flat[k]
        flat[k] = orig + eps
        plus = [o.detach().numpy().reshape(-1).copy() for o in _outputs(func, _replace(inputs, index, base))]
        flat[k] = orig - eps
        minus = [o.detach().numpy().reshape(-1).copy() for o in _outputs(func, _replace(inputs, index, base))]
        flat[k] = orig
        columns.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    n_out = len(_outputs_shapes(func, inputs))
    return [np.stack([c[j] for c in columns]) if columns else np.zeros((0, 0)) for j in range(n_out)]


def _outputs_shapes(func: Callable, inputs: tuple) -> list[tuple]:
    return [o.shape for o in _outputs(func, inputs)]


def _replace(inputs: tuple, index: int, value: Tensor) -> tuple:
    return tuple(value if i == index else t for i, t in enumerate(inputs))


def _analytical_jacobian(func: Callable, inputs: tuple, index: int) -> list[np.ndarray]:
    """d(outputs)/d(inputs[index]) row by row from vector-Jacobian products."""
    from . import grad

    outputs = _outputs(func, inputs)
    x = inputs[index]
    result = []
    for out in outputs:
        jac = np.zeros((x.numel(), out.numel()))
        for j in range(out.numel()):
            unit = np.zeros(out.numel())
            unit[j] = 1.0
            cot = _C.from_numpy(unit.reshape(out.shape)).to(out.dtype)
            (g,) = grad(out, x, cot, retain_graph=True, allow_unused=True)
            if g is not None:
                jac[:, j] = g.detach().numpy().reshape(-1)
        result.append(jac)
    return result


def gradcheck(
    func: Callable,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    fast_mode: bool = False,
    masked=None,
) -> bool:
    """Whether the gradients of ``func`` at ``inputs`` match finite differences."""
    inputs = _as_tuple(inputs)
    for i in _differentiable_inputs(inputs):
        t = inputs[i]
        if t.dtype not in (_C.float64, _C.complex128):
            import warnings

            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are not of double precision floating point or complex.",
                stacklevel=2,
            )
        numerical = _numerical_jacobian(func, inputs, i, eps)
        analytical = _analytical_jacobian(func, inputs, i)
        for j, (a, n) in enumerate(zip(analytical, numerical)):
            if a.shape != n.shape or not np.allclose(a, n, atol=atol, rtol=rtol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {j} with respect to input {i},\nnumerical:{n}\nanalytical:{a}\n"
                )
    return True


def gradgradcheck(
    func: Callable,
    inputs,
    grad_outputs: Sequence[Tensor] | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """``gradcheck`` of the function that maps inputs (and output cotangents)
    to the gradients of ``func``: checks second derivatives."""
    from . import grad

    inputs = _as_tuple(inputs)
    diff = _differentiable_inputs(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            _C.from_numpy(rng.standard_normal(o.shape)).to(o.dtype).requires_grad_() for o in outs
        )
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_derivatives(*args):
        xs, gos = args[:n_in], args[n_in:]
        outputs = _outputs(func, xs)
        grads = grad(outputs, [xs[i] for i in diff], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivatives,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )

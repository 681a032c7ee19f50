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
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them have requires_grad=True."
        )
    return diff


def _outputs(func: Callable, inputs: tuple) -> tuple:
    """The differentiable (floating or complex) outputs of ``func``."""
    return tuple(
        o
        for o in _as_tuple(func(*inputs))
        if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex)
    )


def _real_coordinates(t: Tensor) -> np.ndarray:
    """The elements of ``t`` as real numbers; a complex element is a
    (real, imaginary) pair. Shares memory with ``t``."""
    arr = t.detach().numpy().reshape(-1)
    return arr.view(arr.real.dtype) if np.iscomplexobj(arr) else arr


def _numerical_jacobian(func: Callable, inputs: tuple, index: int, eps: float) -> list[list[np.ndarray]]:
    """d(outputs)/d(inputs[index]) by central differences. For each output, a
    matrix (input numel x output numel) per real coordinate of the input
    elements: one for a real input, two (real, imaginary part) for a complex
    one. Entries have the output's dtype."""
    x = inputs[index]
    # Evaluated with grad mode on: gradgradcheck's function calls grad() itself.
    base = x.detach().clone().requires_grad_(x.requires_grad)
    coords = _real_coordinates(base)
    parts = 2 if base.dtype.is_complex else 1
    out_sizes = [o.numel() for o in _outputs(func, inputs)]
    columns: list[list[np.ndarray]] = []
    for k in range(coords.size):
        orig = coords[k]
        coords[k] = orig + eps
        plus = [o.detach().numpy().reshape(-1).copy() for o in _outputs(func, _replace(inputs, index, base))]
        coords[k] = orig - eps
        minus = [o.detach().numpy().reshape(-1).copy() for o in _outputs(func, _replace(inputs, index, base))]
        coords[k] = orig
        columns.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    result = []
    for j, size in enumerate(out_sizes):
        per_part = []
        for part in range(parts):
            rows = columns[part::parts]
            per_part.append(np.stack([c[j] for c in rows]) if rows else np.zeros((0, size)))
        result.append(per_part)
    return result


def _replace(inputs: tuple, index: int, value: Tensor) -> tuple:
    return tuple(value if i == index else t for i, t in enumerate(inputs))


def _analytical_jacobian(func: Callable, inputs: tuple, index: int, imag: bool = False) -> list[np.ndarray]:
    """d(outputs)/d(inputs[index]) row by row from vector-Jacobian products.
    With ``imag``, the cotangents of complex outputs are ``1j`` (the
    gradients of their imaginary parts), else ``1``. Columns of a complex
    input hold ``d/d(real part) + 1j * d/d(imaginary part)``, as
    ``backward`` computes them."""
    from . import grad

    outputs = _outputs(func, inputs)
    x = inputs[index]
    result = []
    for out in outputs:
        jac = np.zeros((x.numel(), out.numel()), dtype=np.complex128 if x.dtype.is_complex else np.float64)
        unit_value = 1j if imag and out.dtype.is_complex else 1.0
        # An output outside the graph (a gradient that is identically zero,
        # as of x ** 0) has a zero Jacobian, which the numerical one must match.
        for j in range(out.numel() if out.requires_grad else 0):
            unit = np.zeros(out.numel(), dtype=np.complex128 if out.dtype.is_complex else np.float64)
            unit[j] = unit_value
            cot = _C.from_numpy(unit.reshape(out.shape)).to(out.dtype)
            (g,) = grad(out, x, cot, retain_graph=True, allow_unused=True)
            if g is not None:
                jac[:, j] = g.detach().numpy().reshape(-1)
        result.append(jac)
    return result


def _numerical_for_part(per_part: list[np.ndarray], imag: bool) -> np.ndarray:
    """The numerical counterpart of ``_analytical_jacobian``: the real (or
    imaginary) part of the output differentiated by each input coordinate,
    combined as ``d/d(real part) + 1j * d/d(imaginary part)`` for complex inputs."""
    take = np.imag if imag else np.real
    if len(per_part) == 1:
        return take(per_part[0])
    return take(per_part[0]) + 1j * take(per_part[1])


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
        complex_outputs = [o.dtype.is_complex for o in _outputs(func, inputs)]
        # As PyTorch does: the imaginary parts of complex outputs first, then
        # the real parts (and the real outputs).
        for imag in (True, False) if any(complex_outputs) else (False,):
            analytical = _analytical_jacobian(func, inputs, i, imag=imag)
            for j, (a, per_part) in enumerate(zip(analytical, numerical)):
                if imag and not complex_outputs[j]:
                    continue
                n = _numerical_for_part(per_part, imag)
                if a.shape != n.shape or not np.allclose(a, n, atol=atol, rtol=rtol):
                    if not raise_exception:
                        return False
                    prefix = (
                        f"While considering the {'imaginary' if imag else 'real'} part of complex outputs only, "
                        if complex_outputs[j]
                        else ""
                    )
                    raise GradcheckError(
                        f"{prefix}Jacobian mismatch for output {j} with respect to input {i},\n"
                        f"numerical:{_C.from_numpy(np.asarray(n))}\nanalytical:{_C.from_numpy(np.asarray(a))}\n"
                    )
    return True


def _random_like(rng: np.random.Generator, t: Tensor) -> np.ndarray:
    """Standard normal values of ``t``'s shape; complex when ``t`` is."""
    values = rng.standard_normal(t.shape)
    if t.dtype.is_complex:
        values = values + 1j * rng.standard_normal(t.shape)
    # An array even for 0-d shapes (NumPy returns scalars there), owned by
    # the tensor made from it.
    return np.array(values)


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
        grad_outputs = tuple(_C.from_numpy(_random_like(rng, o)).to(o.dtype).requires_grad_() for o in outs)
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

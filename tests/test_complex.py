"""Complex autograd with PyTorch's conventions.

Every complex op's gradient is checked against central finite differences of
the real and imaginary parts in complex128 (hypothesis draws shapes and
values) and, when torch is importable, against torch. For a cotangent ``v``
the loss is ``L = Re(sum(conj(v) * f(x)))``; the gradient of a complex input
``x = a + ib`` is ``dL/da + i dL/db`` (twice the conjugate Wirtinger
derivative, which is what ``backward`` computes), of a real input ``dL/dx``.
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ferrograd as fg
from ferrograd.autograd import gradcheck, gradgradcheck

from helpers import has_torch, shapes

if has_torch:
    import torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is the reference")

EPS = 1e-6

# Domains, as (real low, real high, imaginary low, imaginary high).
PLANE = (-2.0, 2.0, -2.0, 2.0)
# The right half-plane keeps away from branch cuts (log, sqrt, pow, angle on
# the negative real axis) and from 0 (abs, sgn, division).
RIGHT = (0.3, 2.0, -2.0, 2.0)
# A strip around the real axis keeps away from the poles of tanh and sigmoid.
STRIP = (-2.0, 2.0, -1.0, 1.0)
REAL = (-2.0, 2.0)
POSITIVE = (0.3, 2.0)


def _floats(low: float, high: float):
    return st.floats(low, high, allow_nan=False, width=64)


def complex_array(shape, domain=PLANE):
    """A complex128 array of ``shape`` with parts in ``domain``."""
    re_lo, re_hi, im_lo, im_hi = domain
    return st.tuples(
        hnp.arrays(np.float64, shape, elements=_floats(re_lo, re_hi)),
        hnp.arrays(np.float64, shape, elements=_floats(im_lo, im_hi)),
    ).map(lambda p: np.asarray(p[0] + 1j * p[1]))


def real_array(shape, domain=REAL):
    return hnp.arrays(np.float64, shape, elements=_floats(*domain))


def draw_input(draw, shape, domain) -> np.ndarray:
    return draw(complex_array(shape, domain) if len(domain) == 4 else real_array(shape, domain))


def _loss(out: np.ndarray, v: np.ndarray) -> float:
    return float(np.sum(np.real(np.conj(v) * out)))


def fd_grads(f: Callable[..., np.ndarray], arrays: list[np.ndarray], v: np.ndarray) -> list[np.ndarray]:
    """Central differences of ``Re(sum(conj(v) * f(*arrays)))`` in the real
    and imaginary part of every element of every input."""
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        flat, gflat = a.reshape(-1), g.reshape(-1)
        steps = (EPS, 1j * EPS) if np.iscomplexobj(a) else (EPS,)
        for i in range(flat.size):
            orig = flat[i]
            for step in steps:
                flat[i] = orig + step
                plus = _loss(f(*arrays), v)
                flat[i] = orig - step
                minus = _loss(f(*arrays), v)
                flat[i] = orig
                # A step in the imaginary part contributes i * dL/db.
                gflat[i] += (plus - minus) / (2 * EPS) * (step / EPS)
        grads.append(g)
    return grads


def check_complex(
    fn: Callable, *inputs: np.ndarray, seed: int = 0, atol: float = 1e-6, fd_atol: float = 1e-5
):
    """Checks ``fn(T, *tensors)`` written once against a torch-like module
    ``T``: forward and dtype against torch, gradients for a random cotangent
    (complex for complex outputs) against finite differences and torch."""
    ts = [fg.tensor(x, requires_grad=True) for x in inputs]
    out = fn(fg, *ts)
    out_np = out.detach().numpy()
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(out_np.shape)
    if out.dtype.is_complex:
        v = v + 1j * rng.standard_normal(out_np.shape)
    if out.requires_grad:
        out.backward(fg.tensor(v))
    got = [t.grad.numpy() if t.grad is not None else np.zeros_like(x) for t, x in zip(ts, inputs)]
    for g, t in zip(got, ts):
        assert g.dtype == np.dtype(t.dtype.__repr__().split(".")[-1])

    def f_np(*arrays):
        with fg.no_grad():
            return fn(fg, *[fg.tensor(a) for a in arrays]).numpy()

    expected = fd_grads(f_np, [x.copy() for x in inputs], v)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, atol=fd_atol, rtol=1e-4)
    if has_torch:
        tts = [torch.from_numpy(np.array(x)).requires_grad_() for x in inputs]
        tout = fn(torch, *tts)
        assert str(tout.dtype).split(".")[-1] == str(out.dtype).split(".")[-1]
        np.testing.assert_allclose(out_np, tout.detach().resolve_conj().numpy(), atol=atol, rtol=1e-6)
        # torch's own backward of view_as_real refuses empty gradients.
        if tout.requires_grad and tout.numel() > 0:
            tout.backward(torch.from_numpy(np.array(v)))
            for g, t in zip(got, tts):
                tg = t.grad.resolve_conj().numpy() if t.grad is not None else np.zeros(t.shape, dtype=g.dtype)
                np.testing.assert_allclose(g, tg, atol=atol, rtol=1e-6)
    return out


def checkerboard(T, a):
    """A fixed boolean mask of ``a``'s shape (a mask computed from the values
    would flip under the finite-difference steps)."""
    return T.arange(a.numel()).reshape(a.shape) % 2 == 0


# name -> (fn(T, *inputs), domain of each input). Every op of the complex
# scope: arithmetic, powers, the elementwise functions, cross-domain ops,
# reductions, shape ops, indexing, cat/stack and where.
ELEMENTWISE = {
    "add": (lambda T, a, b: a + b, (PLANE, PLANE)),
    "sub": (lambda T, a, b: a - b, (PLANE, PLANE)),
    "mul": (lambda T, a, b: a * b, (PLANE, PLANE)),
    "div": (lambda T, a, b: a / b, (PLANE, RIGHT)),
    "pow": (lambda T, a, b: a**b, (RIGHT, STRIP)),
    "pow_int": (lambda T, a: a**2, (PLANE,)),
    "pow_float": (lambda T, a: a**2.5, (RIGHT,)),
    "pow_complex": (lambda T, a: a ** (0.5 - 1.5j), (RIGHT,)),
    "rpow": (lambda T, a: (1.5 + 0.5j) ** a, (PLANE,)),
    "neg": (lambda T, a: -a, (PLANE,)),
    "exp": (lambda T, a: a.exp(), (PLANE,)),
    "log": (lambda T, a: T.log(a), (RIGHT,)),
    "sqrt": (lambda T, a: a.sqrt(), (RIGHT,)),
    "sin": (lambda T, a: a.sin(), (PLANE,)),
    "cos": (lambda T, a: T.cos(a), (PLANE,)),
    "tanh": (lambda T, a: a.tanh(), (STRIP,)),
    "sigmoid": (lambda T, a: a.sigmoid(), (STRIP,)),
    "abs": (lambda T, a: a.abs(), (RIGHT,)),
    "abs_squared": (lambda T, a: a.abs() ** 2, (RIGHT,)),
    "angle": (lambda T, a: a.angle(), (RIGHT,)),
    "sgn": (lambda T, a: a.sgn(), (RIGHT,)),
    "conj": (lambda T, a: a.conj() * (1 + 2j), (PLANE,)),
    "conj_mul": (lambda T, a: (a * a.conj()).real, (PLANE,)),
    "real": (lambda T, a: a.real, (PLANE,)),
    "imag": (lambda T, a: a.imag, (PLANE,)),
    "real_imag": (lambda T, a: T.real(a) * T.imag(a), (PLANE,)),
    "view_as_real": (lambda T, a: T.view_as_real(a), (PLANE,)),
    "view_as_real_roundtrip": (lambda T, a: T.view_as_complex(T.view_as_real(a) * 2.0), (PLANE,)),
    "complex": (lambda T, a, b: T.complex(a, b), (REAL, REAL)),
    "polar": (lambda T, a, b: T.polar(a, b), (POSITIVE, REAL)),
    "sum": (lambda T, a: a.sum(), (PLANE,)),
    "mean": (lambda T, a: a.mean(), (PLANE,)),
    "mul_real_tensor": (lambda T, a, b: a * b, (PLANE, REAL)),
    "add_real_tensor": (lambda T, a, b: b + a, (PLANE, REAL)),
    "div_by_real": (lambda T, a, b: a / (b * b + 0.5), (PLANE, REAL)),
    "python_complex": (lambda T, a: (a + (1 - 2j)) * (0.5 + 1j) - 2j / (a * a + 3), (RIGHT,)),
    "real_times_complex_scalar": (lambda T, a: a * (2 - 1j), (REAL,)),
    "where": (lambda T, a, b: T.where(checkerboard(T, a), a, b), (PLANE, PLANE)),
}


@st.composite
def elementwise_case(draw):
    name = draw(st.sampled_from(sorted(ELEMENTWISE)))
    fn, domains = ELEMENTWISE[name]
    shape = draw(shapes(max_dims=2, max_side=3))
    return name, fn, [draw_input(draw, shape, d) for d in domains]


@settings(max_examples=150)
@given(elementwise_case(), st.integers(0, 2**16))
def test_elementwise_gradients(case, seed):
    _, fn, inputs = case
    check_complex(fn, *inputs, seed=seed)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_every_elementwise_op_once(name):
    # Each op at least once on a fixed 2x3 shape, whatever hypothesis draws.
    fn, domains = ELEMENTWISE[name]
    rng = np.random.default_rng(len(name))
    inputs = []
    for d in domains:
        if len(d) == 4:
            inputs.append(rng.uniform(d[0], d[1], (2, 3)) + 1j * rng.uniform(d[2], d[3], (2, 3)))
        else:
            inputs.append(rng.uniform(d[0], d[1], (2, 3)))
    check_complex(fn, *inputs)


SHAPE_OPS = {
    "reshape": lambda T, a: a.reshape(-1),
    "view": lambda T, a: a.view(a.shape[1], a.shape[0]),
    "t": lambda T, a: a.t(),
    "permute": lambda T, a: a.permute(1, 0),
    "transpose": lambda T, a: a.transpose(0, 1),
    "unsqueeze": lambda T, a: a.unsqueeze(1),
    "squeeze": lambda T, a: a.unsqueeze(0).squeeze(0),
    "flatten": lambda T, a: a.flatten(),
    "expand": lambda T, a: a[:, :1].expand(a.shape[0], 4),
    "narrow": lambda T, a: a.narrow(1, 1, a.shape[1] - 1),
    "select": lambda T, a: a[1],
    "slice": lambda T, a: a[::2, 1:],
    "advanced_index": lambda T, a: a[[1, 0, 1]],
    "mask_index": lambda T, a: a[checkerboard(T, a)],
    "flip": lambda T, a: a.flip(0),
    "sum_dim": lambda T, a: a.sum(1),
    "mean_dim": lambda T, a: a.mean(0, keepdim=True),
    "cat": lambda T, a: T.cat([a, a * 2j], 1),
    "stack": lambda T, a: T.stack([a, a.conj()]),
    "matmul": lambda T, a: a @ (a.t() * (1 - 1j)),
    "matmul_vec": lambda T, a: a @ a[0],
    "view_as_real_of_slice": lambda T, a: T.view_as_real(a[:, 1:]),
}


@settings(max_examples=60)
@given(
    st.sampled_from(sorted(SHAPE_OPS)),
    st.integers(2, 3).flatmap(lambda n: complex_array((n, n))),
    st.integers(0, 2**16),
)
def test_shape_reduction_index_ops(name, a, seed):
    check_complex(SHAPE_OPS[name], a, seed=seed)


@settings(max_examples=25)
@given(
    st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)).flatmap(
        lambda s: st.tuples(complex_array((s[0], s[1])), complex_array((s[1], s[2])))
    )
)
def test_matmul_two_inputs(pair):
    check_complex(lambda T, a, b: a @ b, *pair)


@settings(max_examples=25)
@given(shapes(min_dims=1, max_dims=3, min_side=1, max_side=3).flatmap(lambda s: real_array(s + (2,))))
def test_view_as_complex_gradient(x):
    check_complex(lambda T, x: T.view_as_complex(x) * (1 + 1j), x)


@pytest.mark.parametrize("dtype", ["complex64", "float32"])
def test_conj_physical_records_its_own_node(dtype):
    modules = [fg] + ([torch] if has_torch else [])
    names = []
    for T in modules:
        z = T.tensor([1 + 2j, 3 - 1j] if dtype == "complex64" else [1.0, 3.0], dtype=getattr(T, dtype))
        z.requires_grad_()
        out = T.conj_physical(z * 1)
        names.append(out.grad_fn.name())
        out.real.sum().backward() if out.is_complex() else out.sum().backward()
        np.testing.assert_array_equal(z.grad.numpy(), np.ones(2))
    assert names[0] == ("ConjPhysicalBackward0" if dtype == "complex64" else "MulBackward0")
    assert len(set(names)) == 1


# --- The seeds' examples --------------------------------------------------


def test_gradient_of_squared_modulus_is_2z():
    z = fg.tensor([1 + 2j, -3 + 0.5j], dtype=fg.complex128, requires_grad=True)
    (z * z.conj()).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * z.detach().numpy())
    z.grad = None
    (z.abs() ** 2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * z.detach().numpy())


def test_holomorphic_gradient_is_conjugate_derivative():
    z = fg.tensor([1 + 2j, -3 + 0.5j], dtype=fg.complex128, requires_grad=True)
    y = z * z
    y.backward(fg.ones_like(y))
    np.testing.assert_allclose(z.grad.numpy(), np.conj(2 * z.detach().numpy()))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_backward_on_complex_scalar_raises(dtype):
    z = fg.tensor([1 + 1j], dtype=getattr(fg, dtype), requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=f"^grad can be implicitly created only for real scalar outputs but got ferrograd.{dtype}$",
    ):
        (z * z).sum().backward()
    # An explicit complex gradient is accepted.
    (z * z).sum().backward(fg.tensor(1 - 1j, dtype=getattr(fg, dtype)))
    np.testing.assert_allclose(z.grad.numpy(), [(1 - 1j) * np.conj(2 * (1 + 1j))], rtol=1e-6)


def test_real_gradient_for_complex_output_is_rejected():
    z = fg.tensor([1 + 1j], requires_grad=True)
    with pytest.raises(RuntimeError, match="For complex Tensors, both grad_output and output are required"):
        (z * 2).backward(fg.tensor([1.0]))


def test_complex_gradients_of_real_leaves_are_real():
    # ℝ → ℂ → ℝ: the gradient of a real leaf is real.
    x = fg.tensor([0.5, -1.5], dtype=fg.float64, requires_grad=True)
    (x * (1 + 2j)).exp().abs().sum().backward()
    assert x.grad.dtype == fg.float64
    # |exp((1 + 2i) x)| = exp(x), whose derivative is exp(x).
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, -1.5]))


# --- Views ----------------------------------------------------------------


def test_real_and_imag_are_views_sharing_storage():
    z = fg.tensor([1 + 2j, 3 - 4j], dtype=fg.complex128)
    re, im = z.real, z.imag
    assert re.dtype == fg.float64 and im.dtype == fg.float64
    assert re.data_ptr() == z.data_ptr()
    assert im.data_ptr() == z.data_ptr() + 8
    assert re.stride() == (2,) and im.stride() == (2,)
    re.mul_(10)
    im[1] = 7.0
    np.testing.assert_array_equal(z.numpy(), [10 + 2j, 30 + 7j])
    assert z._version == re._version == im._version == 2


def test_in_place_ops_between_views_of_one_buffer():
    # The parts are views on different storages of one buffer: the source is
    # read before the destination is written, as for overlapping views.
    z = fg.tensor([1 + 2j, 3 + 4j], dtype=fg.complex128)
    z.real.copy_(z.imag)
    np.testing.assert_array_equal(z.numpy(), [2 + 2j, 4 + 4j])
    z.imag.add_(z.real)
    np.testing.assert_array_equal(z.numpy(), [2 + 4j, 4 + 8j])
    w = fg.view_as_complex(fg.view_as_real(z))
    w.mul_(z)
    np.testing.assert_array_equal(z.numpy(), np.array([2 + 4j, 4 + 8j]) ** 2)
    z.real = z.imag
    np.testing.assert_array_equal(z.numpy().real, z.numpy().imag)


def test_real_and_imag_setters_write_through():
    z = fg.zeros(3, dtype=fg.complex64)
    z.real = fg.tensor([1.0, 2.0, 3.0])
    z.imag = 5
    np.testing.assert_array_equal(z.numpy(), [1 + 5j, 2 + 5j, 3 + 5j])
    z.imag = fg.tensor([1.0])  # broadcast, as copy_ does
    np.testing.assert_array_equal(z.numpy(), [1 + 1j, 2 + 1j, 3 + 1j])
    with pytest.raises(RuntimeError, match="must match the size"):
        z.real = fg.tensor([1.0, 2.0])


def test_real_of_real_tensor_is_itself_and_imag_raises():
    x = fg.tensor([1.0, 2.0])
    assert x.real is x
    with pytest.raises(RuntimeError, match="^imag is not implemented for tensors with non-complex dtypes.$"):
        _ = x.imag


def test_view_as_real_and_view_as_complex_share_storage():
    z = fg.tensor([[1 + 2j, 3 + 4j], [5 + 6j, 7 + 8j]], dtype=fg.complex64)
    r = fg.view_as_real(z)
    assert r.shape == (2, 2, 2) and r.stride() == (4, 2, 1) and r.dtype == fg.float32
    r[0, 1, 1] = -1.0
    assert z[0, 1].item() == 3 - 1j
    back = fg.view_as_complex(r)
    assert back.shape == (2, 2) and back.data_ptr() == z.data_ptr()
    x = fg.zeros(3, 2, dtype=fg.float64)
    c = fg.view_as_complex(x)
    assert c.dtype == fg.complex128
    c[2] = 1 + 9j
    np.testing.assert_array_equal(x.numpy()[2], [1.0, 9.0])
    # A strided view of the real parts of a transposed complex tensor.
    t = z.t()
    np.testing.assert_array_equal(t.real.numpy(), z.numpy().T.real)
    np.testing.assert_array_equal(
        fg.view_as_real(t).numpy(), np.stack([z.numpy().T.real, z.numpy().T.imag], -1)
    )


def test_views_keep_their_base_alive():
    def make():
        return fg.tensor([1 + 2j, 3 + 4j], dtype=fg.complex128).imag

    im = make()
    np.testing.assert_array_equal(im.numpy(), [2.0, 4.0])
    assert im[0].item() == 2.0


VIEW_ERRORS = [
    (lambda T: T.view_as_real(T.ones(2)), "view_as_real is only supported for complex tensors"),
    (lambda T: T.view_as_complex(T.ones(3)), "Tensor must have a last dimension of size 2"),
    (lambda T: T.view_as_complex(T.ones(2, 3).t()), "Tensor must have a last dimension with stride 1"),
    (lambda T: T.view_as_complex(T.ones(3, 4)[:, 1:3]), "Tensor must have a storage_offset divisible by 2"),
    (
        lambda T: T.view_as_complex(T.ones(3, 6)[:, ::3]),
        "Tensor must have a last dimension with stride 1",
    ),
    (lambda T: T.view_as_complex(T.ones(())), "Input tensor must have one or more dimensions"),
    (
        lambda T: T.view_as_complex(T.ones(2, dtype=T.int64)),
        "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: Long",
    ),
    (
        lambda T: T.complex(T.ones(2), T.ones(2, dtype=T.float64)),
        "Expected object of scalar type Float but got scalar type Double for second argument",
    ),
    (
        lambda T: T.complex(T.ones(2, dtype=T.int64), T.ones(2, dtype=T.int64)),
        "Expected both inputs to be Half, Float or Double tensors but got Long and Long",
    ),
    (
        lambda T: T.polar(T.ones(2, dtype=T.float64), T.ones(2)),
        "Expected object of scalar type Double but got scalar type Float for second argument",
    ),
    (
        lambda T: T.complex(T.ones(2), T.ones(3)),
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0",
    ),
]


@pytest.mark.parametrize("case", range(len(VIEW_ERRORS)))
def test_errors_match_torch(case):
    fn, message = VIEW_ERRORS[case]
    with pytest.raises(RuntimeError) as info:
        fn(fg)
    assert str(info.value) == message
    if has_torch:
        with pytest.raises(RuntimeError) as tinfo:
            fn(torch)
        assert str(tinfo.value) == message


def test_grad_fn_names_match_torch():
    z = fg.tensor([1 + 1j], requires_grad=True)
    x = fg.tensor([1.0], requires_grad=True)
    names = {
        "real": z.real.grad_fn.name(),
        "imag": z.imag.grad_fn.name(),
        "view_as_real": fg.view_as_real(z).grad_fn.name(),
        "view_as_complex": fg.view_as_complex(fg.view_as_real(z)).grad_fn.name(),
        "angle": z.angle().grad_fn.name(),
        "complex": fg.complex(x, x).grad_fn.name(),
        "polar": fg.polar(x, x).grad_fn.name(),
    }
    assert names == {
        "real": "SelectBackward0",
        "imag": "SelectBackward0",
        "view_as_real": "ViewAsRealBackward0",
        "view_as_complex": "ViewAsComplexBackward0",
        "angle": "AngleBackward0",
        "complex": "ComplexBackward0",
        "polar": "PolarBackward0",
    }


def test_angle_of_real_tensors():
    x = fg.tensor([1.0, -2.0, 0.0, float("nan")], requires_grad=True)
    a = x.angle()
    np.testing.assert_allclose(a.detach().numpy(), [0.0, np.pi, 0.0, np.nan])
    a.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0, 0.0])
    assert fg.tensor([1, -2]).angle().dtype == fg.float32


def test_angle_and_sgn_gradients_at_zero_are_zero():
    z = fg.tensor([0j, 1 + 1j], dtype=fg.complex128, requires_grad=True)
    z.angle().sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [0, -0.5 + 0.5j])
    z.grad = None
    z.sgn().backward(fg.tensor([1 + 1j, 2j], dtype=fg.complex128))
    np.testing.assert_allclose(z.grad.numpy(), [0, (2j - (1j) * (-2j)) / (2 * np.sqrt(2))])


# --- Type promotion, conversion, printing -----------------------------------


PROMOTIONS = [
    (lambda T: T.ones(2) * 1j, "complex64"),
    (lambda T: T.ones(2, dtype=T.float64) * (1 + 1j), "complex128"),
    (lambda T: T.ones(2, dtype=T.int64) * 1j, "complex64"),
    (lambda T: T.ones(2, dtype=T.bool) + 1j, "complex64"),
    (lambda T: T.ones(2, dtype=T.complex64) + T.ones(2, dtype=T.float64), "complex128"),
    (lambda T: T.ones(2, dtype=T.complex64) + T.ones((), dtype=T.float64), "complex64"),
    (lambda T: T.ones(2, dtype=T.complex64) * T.ones((), dtype=T.complex128), "complex64"),
    (lambda T: T.ones(2) + T.ones((), dtype=T.complex128), "complex64"),
    (lambda T: T.ones(2, dtype=T.float64) + T.ones((), dtype=T.complex64), "complex128"),
    (lambda T: T.ones(2, dtype=T.complex64) * 2.5, "complex64"),
    (lambda T: T.ones(2, dtype=T.complex128) / 3, "complex128"),
    (
        lambda T: T.where(T.ones(2, dtype=T.bool), T.ones(2, dtype=T.complex64), T.ones(2, dtype=T.float64)),
        "complex128",
    ),
    (lambda T: T.cat([T.ones(2, dtype=T.complex64), T.ones(2)]), "complex64"),
    (lambda T: T.tensor([1, 2.5, 1j]), "complex64"),
    (lambda T: T.tensor(np.array([1j], dtype=np.complex128)), "complex128"),
    (lambda T: T.tensor(1 + 1j), "complex64"),
    (lambda T: T.ones(2, dtype=T.cfloat) @ T.ones(2, dtype=T.cfloat), "complex64"),
]


@pytest.mark.parametrize("case", range(len(PROMOTIONS)))
def test_type_promotion(case):
    make, promoted = PROMOTIONS[case]
    out = make(fg)
    assert out.dtype == getattr(fg, promoted)
    if has_torch:
        t = make(torch)
        assert t.dtype == getattr(torch, promoted)
        np.testing.assert_allclose(out.numpy(), t.numpy(), rtol=1e-6)


def test_dtype_aliases():
    assert fg.cfloat is fg.complex64 or fg.cfloat == fg.complex64
    assert fg.cdouble == fg.complex128
    assert fg.complex64.is_complex and not fg.complex64.is_floating_point
    assert fg.tensor([1j]).is_complex() and fg.is_complex(fg.tensor([1j]))
    assert not fg.tensor([1.0]).is_complex()


def test_numpy_round_trip():
    a = np.array([[1 + 2j, 3 - 1j]], dtype=np.complex64)
    t = fg.from_numpy(a)
    assert t.dtype == fg.complex64
    a[0, 0] = 9j  # shares memory
    assert t[0, 0].item() == 9j
    out = (t * 2).numpy()
    assert out.dtype == np.complex64
    np.testing.assert_array_equal(out, 2 * a)
    b = fg.tensor(np.array([1 + 1j], dtype=np.complex128))
    assert b.dtype == fg.complex128 and b.numpy().dtype == np.complex128
    assert fg.tensor([1 + 1j]).dtype == fg.complex64
    assert fg.tensor(2 - 3j).item() == 2 - 3j
    assert complex(fg.tensor(2 - 3j)) == 2 - 3j
    assert fg.tensor([0.5 + 1j]).tolist() == [0.5 + 1j]
    # The real-part view exports to NumPy with the right strides.
    np.testing.assert_array_equal(fg.from_numpy(np.array([1 + 2j, 3 + 4j])).imag.numpy(), [2.0, 4.0])


@needs_torch
@pytest.mark.parametrize(
    "make",
    [
        lambda T: T.tensor([1 + 2j, -3.5 - 0.25j]),
        lambda T: T.tensor([[1 + 2j, -3.5 - 0.25j], [0j, 1e5j]]),
        lambda T: T.tensor([1 + 2j], dtype=T.complex128),
        lambda T: T.tensor(1 - 1j),
        lambda T: T.tensor([1 + 2j], requires_grad=True) * 2,
        lambda T: T.tensor([[1.5 + 2j]], requires_grad=True).real,
        lambda T: T.tensor([1 + 2j]).angle(),
        lambda T: T.zeros(0, dtype=T.complex64),
    ],
)
def test_printing_matches_torch(make):
    expected = repr(make(torch)).replace("torch", "ferrograd")
    assert repr(make(fg)) == expected


# --- gradcheck --------------------------------------------------------------


def _c128(values, requires_grad=True):
    return fg.tensor(np.array(values, dtype=np.complex128), requires_grad=requires_grad)


def _f64(values, requires_grad=True):
    return fg.tensor(np.array(values, dtype=np.float64), requires_grad=requires_grad)


GRADCHECK = {
    "mul": (lambda T, a, b: a * b, lambda: (_c128([1 + 2j, -0.5j]), _c128([0.3 - 1j, 2 + 0j]))),
    "div": (lambda T, a, b: a / b, lambda: (_c128([1 + 2j, -0.5j]), _c128([0.3 - 1j, 2 + 1j]))),
    "exp": (lambda T, a: a.exp(), lambda: (_c128([1 + 2j, -0.5j]),)),
    "log": (lambda T, a: a.log(), lambda: (_c128([1 + 2j, 0.5 - 0.5j]),)),
    "sqrt": (lambda T, a: a.sqrt(), lambda: (_c128([1 + 2j, 0.5 - 0.5j]),)),
    "sin_cos": (lambda T, a: a.sin() * a.cos(), lambda: (_c128([1 + 2j, 0.5 - 0.5j]),)),
    "tanh": (lambda T, a: a.tanh(), lambda: (_c128([0.3 + 0.2j, -0.5j]),)),
    "sigmoid": (lambda T, a: a.sigmoid(), lambda: (_c128([0.3 + 0.2j, -0.5j]),)),
    "abs": (lambda T, a: a.abs(), lambda: (_c128([1 + 2j, -0.5j]),)),
    "angle": (lambda T, a: a.angle(), lambda: (_c128([1 + 2j, -0.5j]),)),
    "sgn": (lambda T, a: a.sgn(), lambda: (_c128([1 + 2j, -0.5j]),)),
    "conj": (lambda T, a: a.conj() * a, lambda: (_c128([1 + 2j, -0.5j]),)),
    "real_imag": (lambda T, a: a.real * a.imag, lambda: (_c128([1 + 2j, -0.5j]),)),
    "view_as_real": (lambda T, a: T.view_as_real(a) ** 2, lambda: (_c128([1 + 2j, -0.5j]),)),
    "view_as_complex": (lambda T, x: T.view_as_complex(x) ** 2, lambda: (_f64([[1.0, 2.0], [-0.5, 0.3]]),)),
    "complex": (lambda T, x, y: T.complex(x, y) ** 2, lambda: (_f64([1.0, -2.0]), _f64([0.5, 0.25]))),
    "polar": (lambda T, r, t: T.polar(r, t) ** 2, lambda: (_f64([1.0, 2.0]), _f64([0.5, -2.5]))),
    "pow": (lambda T, a, b: a**b, lambda: (_c128([1 + 2j, 0.5 - 0.5j]), _c128([0.5 + 0.1j, 2 - 1j]))),
    "matmul": (lambda T, a, b: a @ b, lambda: (_c128([[1 + 2j, -0.5j]]), _c128([[0.3 - 1j], [2 + 1j]]))),
    "sum_mean": (lambda T, a: a.sum() * a.mean(), lambda: (_c128([1 + 2j, -0.5j]),)),
    "where_cat": (
        lambda T, a, b: T.cat([T.where(a.real > 0, a, b), T.stack([a, b]).flatten()]),
        lambda: (_c128([1 + 2j, -0.5 - 0.5j]), _c128([0.3 - 1j, 2 + 1j])),
    ),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck_and_gradgradcheck(name):
    fn, make = GRADCHECK[name]
    assert gradcheck(functools.partial(fn, fg), make())
    assert gradgradcheck(functools.partial(fn, fg), make())
    if has_torch:
        # torch's gradcheck accepts the same function: both check the same thing.
        tin = tuple(torch.tensor(t.detach().numpy(), requires_grad=True) for t in make())
        assert torch.autograd.gradcheck(functools.partial(fn, torch), tin)


class MissingConj(fg.autograd.Function):
    """``z * z`` with a backward that forgets to conjugate the derivative."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * 2 * z


class WrongAbs(fg.autograd.Function):
    """``abs`` with a backward that conjugates where it should not."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z.abs()

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * z.conj() / z.abs()


def test_gradcheck_catches_a_missing_conjugate():
    z = _c128([1 + 2j])
    assert not gradcheck(MissingConj.apply, (z,), raise_exception=False)
    with pytest.raises(RuntimeError) as info:
        gradcheck(MissingConj.apply, (z,))
    message = str(info.value)
    assert message.startswith(
        "While considering the imaginary part of complex outputs only, "
        "Jacobian mismatch for output 0 with respect to input 0,"
    )
    assert "numerical:tensor([[4.0000+2.0000j]],dtype=ferrograd.complex128)" in message.replace(" ", "")


def test_gradcheck_catches_a_wrong_cross_domain_gradient():
    z = _c128([1 + 2j])
    with pytest.raises(RuntimeError) as info:
        gradcheck(WrongAbs.apply, (z,))
    assert str(info.value).startswith("Jacobian mismatch for output 0 with respect to input 0,")


def test_gradcheck_checks_real_inputs_with_complex_outputs():
    class DropsImag(fg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * (1 + 1j)

        @staticmethod
        def backward(ctx, g):
            return g.real  # wrong: should be Re(conj(1 + 1j) * g)

    x = _f64([0.5, -1.0])
    assert not gradcheck(DropsImag.apply, (x,), raise_exception=False)
    assert gradcheck(lambda x: x * (1 + 1j), (x,))


# --- complex64 ----------------------------------------------------------------


@needs_torch
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_complex64_matches_torch(name):
    # Single precision: the same ops in complex64/float32 agree with torch to
    # float32 rounding, and gradients keep each input's dtype.
    fn, domains = ELEMENTWISE[name]
    rng = np.random.default_rng(7)
    inputs = []
    for d in domains:
        if len(d) == 4:
            x = rng.uniform(d[0], d[1], (2, 3)) + 1j * rng.uniform(d[2], d[3], (2, 3))
            inputs.append(x.astype(np.complex64))
        else:
            inputs.append(rng.uniform(d[0], d[1], (2, 3)).astype(np.float32))
    results = []
    for T in (fg, torch):
        ts = [T.from_numpy(x.copy()).requires_grad_() for x in inputs]
        out = fn(T, *ts)
        v = np.ones(out.shape, dtype=np.complex64 if out.dtype.is_complex else np.float32) * 0.5
        out.backward(T.from_numpy(np.array(v)))
        grads = [t.grad.resolve_conj().numpy() for t in ts if t.grad is not None]
        results.append((str(out.dtype).split(".")[-1], out.detach().resolve_conj().numpy(), grads))
    (dtype, out, grads), (tdtype, tout, tgrads) = results
    assert dtype == tdtype
    np.testing.assert_allclose(out, tout, rtol=2e-5, atol=2e-5)
    assert len(grads) == len(tgrads)
    for g, tg, x in zip(grads, tgrads, inputs):
        assert g.dtype == x.dtype == tg.dtype
        np.testing.assert_allclose(g, tg, rtol=2e-5, atol=2e-5)


@needs_torch
def test_sgn_and_abs_match_torch_to_the_last_bits():
    rng = np.random.default_rng(3)
    a = rng.uniform(-3, 3, 200) + 1j * rng.uniform(-3, 3, 200)
    a[:3] = [0j, 2.5 + 0j, -1j]
    sgn = fg.tensor(a).sgn().numpy()
    np.testing.assert_array_equal(sgn[:3], [0j, 1 + 0j, -1j])
    np.testing.assert_allclose(sgn, torch.tensor(a).sgn().numpy(), rtol=4e-16, atol=0)
    np.testing.assert_allclose(fg.tensor(a).abs().numpy(), torch.tensor(a).abs().numpy(), rtol=4e-16, atol=0)


@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_on_complex_tensors(equal_nan):
    nan = complex("nan+0j")
    a = np.array([1 + 1j, 1 + 1j, 2 - 1j, nan, complex("inf+1j"), 1e-9j])
    b = np.array([1 + 1j, 1 + 1.0000001j, 2 + 1j, nan, complex("inf+1j"), 0j])
    expected = [True, True, False, equal_nan, True, True]
    got = fg.isclose(fg.tensor(a), fg.tensor(b), equal_nan=equal_nan).tolist()
    assert got == expected
    if has_torch:
        assert torch.isclose(torch.tensor(a), torch.tensor(b), equal_nan=equal_nan).tolist() == expected
    assert fg.allclose(fg.tensor(a[:2]), fg.tensor(b[:2]))
    assert not fg.allclose(fg.tensor(a[:3]), fg.tensor(b[:3]))

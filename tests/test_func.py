"""``ferrograd.func`` against ``torch.func``: each test runs the same code with both modules
on the same float64 inputs and compares the results' structure, shapes and values (and
ferrograd against closed forms or finite differences where that adds a check), plus
PyTorch's errors for bad arguments."""

import re

import numpy as np
import pytest

import ferrograd as fg

from helpers import assert_raises_like_torch, fd_grads, has_torch, torch

# torch.func.jvp scripts a helper on first use, and torch warns that scripting is deprecated.
# torch.func.linearize traces with torch.fx, which warns about its own graph.
pytestmark = [
    pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Attempted to insert a get_attr Node:UserWarning"),
]
needs_torch = pytest.mark.skipif(not has_torch, reason="torch is not installed")
RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.standard_normal(shape)


def tensors(T, *arrays, requires_grad=False):
    return [T.tensor(a, dtype=T.float64, requires_grad=requires_grad) for a in arrays]


def assert_same_tree(a, b, rtol=1e-9, atol=1e-11):
    """``a`` (ferrograd) and ``b`` (torch) have one pytree structure and equal tensor leaves."""
    if isinstance(a, fg.Tensor):
        assert isinstance(b, torch.Tensor), type(b)
        assert tuple(a.shape) == tuple(b.shape)
        assert a.requires_grad == b.requires_grad
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b)
        for k in a:
            assert_same_tree(a[k], b[k], rtol, atol)
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), (type(a), type(b))
        for x, y in zip(a, b):
            assert_same_tree(x, y, rtol, atol)
    else:
        assert a == b


def same(fn, rtol=1e-9, atol=1e-11):
    """``fn(T)`` gives the same pytree with ferrograd and torch; returns ferrograd's."""
    ours = fn(fg)
    if has_torch:
        assert_same_tree(ours, fn(torch), rtol, atol)
    return ours


def raises_like_torch(fn, kind, message):
    assert_raises_like_torch(lambda _F, T: fn(T), kind, re.escape(message))


X3, Y3, W23, B4 = rand(3), rand(3), rand(2, 3), rand(4, 3)


# --------------------------------------------------------------------------- grad


def test_grad_matches_the_closed_form_and_torch():
    g = same(lambda T: T.func.grad(lambda x: (x.sin() * x).sum())(*tensors(T, X3)))
    np.testing.assert_allclose(g.numpy(), np.cos(X3) * X3 + np.sin(X3))


def test_grad_argnums_tuple_negative_and_grad_and_value():
    def f(x, w, b):
        return ((w @ x + b).tanh() ** 2).sum()

    args = (X3, W23, rand(2))
    same(lambda T: T.func.grad(f, argnums=(0, 2))(*tensors(T, *args)))
    same(lambda T: T.func.grad(f, argnums=-2)(*tensors(T, *args)))
    g, v = same(lambda T: T.func.grad_and_value(f, argnums=(1,))(*tensors(T, *args)))
    assert isinstance(g, tuple) and len(g) == 1
    x, w, b = (fg.tensor(a) for a in args)
    assert np.isclose(v.item(), f(x, w, b).item())
    expected = fd_grads(
        lambda w_: np.sum(np.tanh(w_ @ args[0] + args[2]) ** 2), [args[1].copy()], np.array(1.0)
    )
    np.testing.assert_allclose(g[0].numpy(), expected[0], atol=1e-6)


def test_grad_has_aux_returns_aux_detached():
    def f(x):
        y = x.exp()
        return y.sum(), {"y": y, "n": [y * 2]}

    (g, aux) = same(lambda T: T.func.grad(f, has_aux=True)(*tensors(T, X3)))
    np.testing.assert_allclose(g.numpy(), np.exp(X3))
    np.testing.assert_allclose(aux["y"].numpy(), np.exp(X3))
    g2, (value, aux2) = same(lambda T: T.func.grad_and_value(f, has_aux=True)(*tensors(T, X3)))
    assert np.isclose(value.item(), np.exp(X3).sum())
    raises_like_torch(
        lambda T: T.func.grad(lambda x: (x.sum(), 3), has_aux=True)(*tensors(T, X3)),
        RuntimeError,
        "Expected tensors, got unsupported type <class 'int'>",
    )


def test_grad_over_pytree_inputs():
    def f(params, x):
        return (params["w"] @ x + params["b"][0] * params["b"][1]).pow(2).sum()

    b0_, b1_ = rand(2), rand(2)

    def run(T):
        w, b0, b1, x = tensors(T, W23, b0_, b1_, X3)
        return T.func.grad(f)({"w": w, "b": [b0, b1]}, x)

    g = same(run)
    assert set(g) == {"w", "b"} and isinstance(g["b"], list)


def test_nested_grad_gives_higher_derivatives():
    x0 = 0.7
    d3 = same(
        lambda T: T.func.grad(T.func.grad(T.func.grad(lambda x: x.sin() * x)))(T.tensor(x0, dtype=T.float64))
    )
    # d^3/dx^3 (x sin x) = -3 sin x - x cos x
    assert np.isclose(d3.item(), -3 * np.sin(x0) - x0 * np.cos(x0))


def test_nested_grad_does_not_confuse_perturbations():
    # d/dx [x * d/dy (x + y)] = d/dx [x] = 1, not 2.
    def outer(x):
        return x * fg_or_torch(x).func.grad(lambda y: x + y)(x)

    def fg_or_torch(t):
        return fg if isinstance(t, fg.Tensor) else torch

    out = same(lambda T: T.func.grad(outer)(T.tensor(2.0, dtype=T.float64)))
    assert out.item() == 1.0


def test_grad_composes_with_backward_and_detaches_otherwise():
    def run(T):
        (x,) = tensors(T, X3, requires_grad=True)
        g = T.func.grad(lambda x: (x**3).sum())(x)
        g.sum().backward()
        return g, x.grad

    g, xg = same(run)
    np.testing.assert_allclose(xg.numpy(), 6 * X3)
    plain = same(lambda T: T.func.grad(lambda x: (x**3).sum())(*tensors(T, X3)))
    assert not plain.requires_grad


def test_grad_sees_closed_over_tensors_that_require_grad():
    def run(T):
        x, w = tensors(T, X3, Y3)
        w.requires_grad_()
        g = T.func.grad(lambda x: (x * w).sin().sum())(x)
        g.pow(2).sum().backward()
        return g, w.grad

    same(run)


def test_grad_under_no_grad_still_differentiates():
    def run(T):
        (x,) = tensors(T, X3, requires_grad=True)
        with T.no_grad():
            return T.func.grad(lambda x: (x**2).sum())(x)

    g = same(run)
    assert not g.requires_grad
    np.testing.assert_allclose(g.numpy(), 2 * X3)


def test_grad_of_an_unused_argument_is_zero():
    g = same(lambda T: T.func.grad(lambda x, y: (x**2).sum(), argnums=1)(*tensors(T, X3, Y3)))
    assert not g.numpy().any()


def test_grad_errors_match_torch():
    raises_like_torch(
        lambda T: T.func.grad(lambda x: x * 2)(*tensors(T, W23)),
        RuntimeError,
        "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with 2 dims. "
        "Maybe you wanted to use the vjp or jacrev APIs instead?",
    )
    raises_like_torch(
        lambda T: T.func.grad(lambda x: x.sum(), has_aux=True)(*tensors(T, X3)),
        RuntimeError,
        "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is True",
    )
    raises_like_torch(
        lambda T: T.func.grad(lambda x: 1.0)(*tensors(T, X3)),
        RuntimeError,
        "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got <class 'float'>",
    )
    raises_like_torch(
        lambda T: T.func.grad(lambda x, y: x.sum(), argnums=2)(*tensors(T, X3, Y3)),
        RuntimeError,
        "Got argnum=2, but only 2 positional inputs",
    )
    raises_like_torch(
        lambda T: T.func.grad(lambda x, y: x.sum(), argnums=(0, -2))(*tensors(T, X3, Y3)),
        RuntimeError,
        "argnums elements must be unique",
    )
    raises_like_torch(
        lambda T: T.func.grad(lambda x: x.sum(), argnums=())(*tensors(T, X3)),
        RuntimeError,
        "argnums must be non-empty",
    )
    raises_like_torch(
        lambda T: T.func.grad(lambda x: x.sum(), argnums=[0])(*tensors(T, X3)),
        RuntimeError,
        "argnums must be int or Tuple[int, ...], got: <class 'list'>",
    )


# --------------------------------------------------------------------------- vjp, jvp


def test_vjp_with_pytree_output_and_aux():
    def f(x, w):
        y = w @ x
        return {"a": y.sin(), "b": (x * x, y.sum())}, y.detach()

    cotangents = rand(2), rand(3)

    def run(T):
        x, w, ca, cb0 = tensors(T, X3, W23, *cotangents)
        out, fn, aux = T.func.vjp(f, x, w, has_aux=True)
        cts = {"a": ca, "b": (cb0, T.tensor(1.5, dtype=T.float64))}
        return out, aux, fn(cts), fn(cts)

    out, aux, g1, g2 = same(run)
    assert isinstance(g1, tuple) and len(g1) == 2
    np.testing.assert_allclose(g1[0].numpy(), g2[0].numpy())


def test_vjp_cotangent_structure_error():
    def run(T):
        _, fn = T.func.vjp(lambda x: (x, x), *tensors(T, X3))
        fn(tensors(T, X3)[0])

    raises_like_torch(
        run,
        RuntimeError,
        "Expected pytree structure of cotangents to be the same as pytree structure of outputs",
    )


def test_jvp_matches_torch_including_unused_inputs_and_pytrees():
    def f(p, z):
        return (p["x"].sin() * p["y"], p["x"].sum() * 2), z.detach()

    arrays = X3, Y3, rand(3), rand(3), rand(3), rand(3)

    def run(T):
        x, y, z, tx, ty, tz = tensors(T, *arrays)
        return T.func.jvp(f, ({"x": x, "y": y}, z), ({"x": tx, "y": ty}, tz), has_aux=True)

    out, tangent, aux = same(run)
    x, y, _, tx, ty, _ = arrays
    np.testing.assert_allclose(tangent[0].numpy(), np.cos(x) * y * tx + np.sin(x) * ty)
    assert np.isclose(tangent[1].item(), 2 * tx.sum())
    same(lambda T: T.func.jvp(lambda x, y: x * 2, tuple(tensors(T, X3, Y3)), tuple(tensors(T, Y3, X3))))
    same(
        lambda T: T.func.jvp(
            lambda x: T.ones(2, dtype=T.float64), tuple(tensors(T, X3)), tuple(tensors(T, Y3))
        )
    )


def test_jvp_value_is_the_directional_derivative():
    _, t = same(lambda T: T.func.jvp(lambda x: x.exp() * x, tuple(tensors(T, X3)), tuple(tensors(T, Y3))))
    np.testing.assert_allclose(t.numpy(), (np.exp(X3) * X3 + np.exp(X3)) * Y3)


def test_jvp_errors_match_torch():
    raises_like_torch(
        lambda T: T.func.jvp(lambda x: x, tensors(T, X3), tuple(tensors(T, X3))),
        RuntimeError,
        "jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to call f(*primals).",
    )
    raises_like_torch(
        lambda T: T.func.jvp(lambda x, y: x, tuple(tensors(T, X3, X3)), tuple(tensors(T, X3))),
        RuntimeError,
        "jvp(f, primals, tangents): Expected primals and tangents to have the same python structure.",
    )


def test_linearize_matches_jvp():
    t2 = rand(3)

    def run(T):
        x, t1, t2_ = tensors(T, X3, Y3, t2)
        out, fn = T.func.linearize(lambda x: x.sin() * x, x)
        return out, fn(t1), fn(t2_)

    same(run)
    raises_like_torch(
        lambda T: T.func.linearize(lambda x: x.sin(), *tensors(T, X3))[1](*tensors(T, W23)),
        RuntimeError,
        "tangent:0 with shape",
    )


def test_linearize_runs_the_function_once():
    calls = []

    def f(x):
        calls.append(1)
        return x.sin() * x

    x, t1, t2 = tensors(fg, X3, Y3, rand(3))
    out, jvp_fn = fg.func.linearize(f, x)
    pushed = [jvp_fn(t).numpy() for t in (t1, t2, t1)]
    assert len(calls) == 1
    derivative = np.cos(X3) * X3 + np.sin(X3)
    np.testing.assert_allclose(out.numpy(), np.sin(X3) * X3)
    for got, t in zip(pushed, (t1, t2, t1)):
        np.testing.assert_allclose(got, derivative * t.numpy())


def test_grad_of_jvp_and_jvp_of_grad():
    def f(x):
        return (x.sin() * x).sum()

    def run(T):
        x, v = tensors(T, X3, Y3)
        hvp = T.func.jvp(T.func.grad(f), (x,), (v,))[1]
        g = T.func.grad(lambda x: T.func.jvp(f, (x,), (v,))[1])(x)
        return hvp, g

    hvp, g = same(run)
    np.testing.assert_allclose(hvp.numpy(), g.numpy())


# --------------------------------------------------------------------------- Jacobians


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobians_match_torch(name):
    def f(x, w):
        return {"y": (w @ x).tanh(), "s": (x**2).sum()}

    def run(T):
        jac = getattr(T.func, name)
        x, w = tensors(T, X3, W23)
        return jac(f)(x, w), jac(f, argnums=(0, 1))(x, w), jac(lambda x: x.exp())(x)

    j0, j01, je = same(run)
    assert tuple(j01["y"][1].shape) == (2, 2, 3)
    np.testing.assert_allclose(je.numpy(), np.diag(np.exp(X3)))


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobians_with_aux_and_pytree_inputs(name):
    def f(p):
        y = p["a"] * p["b"].sum()
        return y, y.detach() + 1

    b = rand(2, 2)

    def run(T):
        a, b_ = tensors(T, X3, b)
        return getattr(T.func, name)(f, has_aux=True)({"a": a, "b": b_})

    jac, aux = same(run)
    assert tuple(jac["b"].shape) == (3, 2, 2)


def test_hessian_matches_torch_and_closed_form():
    h = same(lambda T: T.func.hessian(lambda x: (x**3).sum() + x[0] * x[1])(*tensors(T, X3)))
    expected = np.diag(6 * X3)
    expected[0, 1] = expected[1, 0] = 1
    np.testing.assert_allclose(h.numpy(), expected)

    def run(T):
        x, w = tensors(T, X3, W23)
        return T.func.hessian(lambda x, w: ((w @ x).sin() ** 2).sum(), argnums=(0, 1))(x, w)

    h2 = same(run)
    assert tuple(h2[1][0].shape) == (2, 3, 3)


def test_jacrev_chunk_size_and_randomness_checks():
    raises_like_torch(
        lambda T: T.func.jacrev(lambda x: x, chunk_size=0),
        ValueError,
        "jacrev: `chunk_size` should be greater than 0.",
    )
    same(lambda T: T.func.jacrev(lambda x: x.sin(), chunk_size=2)(*tensors(T, X3)))
    raises_like_torch(
        lambda T: T.func.jacfwd(lambda x: x, randomness="sometimes")(*tensors(T, X3)),
        RuntimeError,
        "Only allowed values for randomness are 'error', 'different', or 'same'. Got sometimes",
    )


def test_forward_transforms_compose_and_nest_as_torch():
    def g(x):
        return (x.sin() * x.sum()).exp()

    def run(T):
        x, v, w = tensors(T, X3, Y3, W23)
        x_rg = tensors(T, X3, requires_grad=True)[0]
        return (
            T.func.jvp(lambda x: T.func.jvp(g, (x,), (v,))[1], (x,), (v,)),  # jvp of jvp
            # Along the tangent: the inner level's cotangent leaves are the outer level's own.
            T.func.grad(lambda v: T.func.jvp(g, (x,), (v,))[1].sum())(v),
            T.func.grad(lambda v: T.func.jvp(g, (x_rg,), (v,))[1].sum())(v),  # keeps x_rg's graph
            T.func.jacrev(lambda v: T.func.jvp(g, (x,), (v,))[1])(v),
            T.func.jvp(g, (x_rg,), (v,)),  # both results keep the outer graph
            T.func.vmap(lambda t: T.func.jvp(g, (x,), (t,))[1])(w),
            T.func.jacrev(T.func.jacfwd(g))(x),
            T.func.jacfwd(T.func.jacfwd(g))(x),
            T.func.vmap(T.func.jacfwd(g))(w),
            T.func.jvp(T.func.jacfwd(g), (x,), (v,)),
            T.func.jacfwd(g)(x_rg),
            T.func.jacfwd(lambda x, w: (w @ x).tanh(), argnums=(0, 1))(x, w),
        )

    same(run)


def test_jacfwd_evaluates_the_function_once_and_builds_columns():
    calls = []

    def spread(x):
        calls.append(1)
        return (x[0] * fg.arange(40, dtype=fg.float64)).sin() + x[1] ** 2

    jac = fg.func.jacfwd(spread)(fg.tensor([0.3, -1.2], dtype=fg.float64))
    assert len(calls) == 1
    ks = np.arange(40)
    np.testing.assert_allclose(jac.numpy()[:, 0], ks * np.cos(0.3 * ks))
    np.testing.assert_allclose(jac.numpy()[:, 1], np.full(40, -2.4))


def test_jvp_of_an_integer_primal_or_a_tangent_of_another_shape_raises_like_torch():
    raises_like_torch(
        lambda T: T.func.jvp(lambda x: x * 2, (T.arange(3),), (T.arange(3),)),
        ValueError,
        "Expected primal to be floating point or complex, but got: ",
    )
    raises_like_torch(
        lambda T: T.func.jvp(lambda x: x * 2, tuple(tensors(T, X3)), tuple(tensors(T, W23))),
        RuntimeError,
        "Trying to set a forward gradient that has a different size than that of the original Tensor, this "
        "is not supported. Tensor is of size [3] while the given forward gradient is of size [2, 3].",
    )


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobians_of_complex_functions_raise_like_torch(name):
    raises_like_torch(
        lambda T: getattr(T.func, name)(lambda x: (x * 1j).exp())(*tensors(T, X3)),
        RuntimeError,
        f"{name}: Expected all outputs to be real but received complex tensor at flattened input idx: 0",
    )
    raises_like_torch(
        lambda T: getattr(T.func, name)(lambda x, y: x + y.abs())(*tensors(T, X3), tensors(T, X3)[0] * 1j),
        RuntimeError,
        f"{name}: Expected all inputs to be real but received complex tensor at flattened input idx: 1",
    )


# --------------------------------------------------------------------------- vmap


def test_vmap_in_dims_and_out_dims_variants():
    def f(x, y):
        return x * y.sum()

    arrays = B4, rand(4, 2), rand(2, 4)

    def run(T):
        x, y, yt = tensors(T, *arrays)
        return (
            T.func.vmap(f)(x, y),
            T.func.vmap(f, in_dims=(0, 1))(x, yt),
            T.func.vmap(f, in_dims=(1, None))(x, y),
            T.func.vmap(f, in_dims=(-1, None), out_dims=1)(x, y),
            T.func.vmap(f, out_dims=-1)(x, y),
            T.func.vmap(lambda x: (x.sum(), x * 2), out_dims=(0, 1))(x),
            T.func.vmap(lambda x: (T.ones(2, dtype=T.float64), x), out_dims=(None, 0))(x),
        )

    same(run)


def test_vmap_nested_pytree_in_dims_kwargs_and_outputs():
    def f(d, scale=1.0):
        return {"p": d["a"] @ d["b"][0] * scale, "q": [d["b"][1] * 2]}

    arrays = rand(5, 2, 3), rand(3, 5), rand(4)

    def run(T):
        a, b0, b1 = tensors(T, *arrays)
        return T.func.vmap(f, in_dims=({"a": 0, "b": [1, None]},))({"a": a, "b": [b0, b1]}, scale=3.0)

    out = same(run)
    assert tuple(out["q"][0].shape) == (5, 4)


def test_nested_vmap_is_an_outer_product():
    arrays = rand(4), rand(5)

    def run(T):
        x, y = tensors(T, *arrays)
        return T.vmap(T.func.vmap(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))(x, y)

    out = same(run)
    assert tuple(out.shape) == (4, 5)
    assert fg.vmap is fg.func.vmap


def test_vmap_of_jacrev_and_grad_of_vmap():
    def run(T):
        (x,) = tensors(T, B4)
        jac = T.func.vmap(T.func.jacrev(lambda v: v.sin() * v.sum()))(x)
        g = T.func.grad(lambda x: T.func.vmap(lambda r: (r**2).sum().sqrt())(x).sum())(x)
        return jac, g

    same(run)


def test_vmap_empty_batch():
    out = same(
        lambda T: T.func.vmap(lambda x: (x.sum(), x * 2), out_dims=(0, 1))(T.zeros(0, 3, dtype=T.float64))
    )
    assert tuple(out[1].shape) == (3, 0)


def test_vmap_errors_match_torch():
    raises_like_torch(
        lambda T: T.func.vmap(lambda x, y: x + y)(*tensors(T, rand(2, 3), rand(3, 3))),
        ValueError,
        "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes [2, 3] for the "
        "mapped dimension",
    )
    raises_like_torch(
        lambda T: T.func.vmap(lambda x, y: x + y, in_dims=(0,))(*tensors(T, B4, B4)),
        ValueError,
        "vmap(<lambda>, in_dims=(0,), ...)(<inputs>): in_dims is not compatible with the structure of `inputs`.",
    )
    raises_like_torch(
        lambda T: T.func.vmap(lambda x: x, in_dims=2)(*tensors(T, B4)),
        ValueError,
        "vmap(<lambda>, in_dims=2, ...)(<inputs>): Got in_dim=2 for some input, but that input is a Tensor of "
        "dimensionality 2 so expected in_dim to satisfy -2 <= in_dim < 2.",
    )
    raises_like_torch(
        lambda T: T.func.vmap(lambda x, n: x * n)(tensors(T, B4)[0], 2.0),
        ValueError,
        "vmap(<lambda>, in_dims=0, ...)(<inputs>): Got in_dim=0 for an input but the input is of type "
        "<class 'float'>. We cannot vmap over non-Tensor arguments, please use None as the respective in_dim",
    )
    raises_like_torch(
        lambda T: T.func.vmap(lambda x: x, in_dims=[0])(*tensors(T, B4)),
        ValueError,
        "vmap(<lambda>, in_dims=[0], ...)(<inputs>): expected `in_dims` to be int or a (potentially nested) "
        "tuple matching the structure of inputs, got: <class 'list'>.",
    )
    raises_like_torch(
        lambda T: T.func.vmap(lambda x: x, in_dims=None)(*tensors(T, B4)),
        ValueError,
        "vmap(<lambda>, in_dims=None, ...)(<inputs>): expected `in_dims` to be int",
    )
    raises_like_torch(
        lambda T: T.func.vmap(lambda x: x, in_dims=(None,))(*tensors(T, B4)),
        ValueError,
        "vmap: Expected at least one Tensor to vmap over",
    )
    raises_like_torch(
        lambda T: T.func.vmap(lambda: 1)(), ValueError, "vmap(<lambda>)(<inputs>): got no inputs."
    )
    raises_like_torch(
        lambda T: T.func.vmap(lambda x: x, out_dims=(0, 1))(*tensors(T, B4)),
        ValueError,
        "vmap(<lambda>, ..., out_dims=(0, 1))(<inputs>): out_dims is not compatible with the structure of "
        "`outputs`.",
    )
    raises_like_torch(
        lambda T: T.func.vmap(lambda x: x, out_dims=None)(*tensors(T, B4)),
        ValueError,
        "vmap(<lambda>, ...): `<lambda>` can not return a BatchedTensor when out_dim is None",
    )
    raises_like_torch(
        lambda T: T.func.vmap(lambda x: 1.0)(*tensors(T, B4)),
        ValueError,
        "vmap(<lambda>, ...): `<lambda>` must only return Tensors, got type <class 'float'>. "
        "Did you mean to set out_dims= to None for output?",
    )
    raises_like_torch(
        lambda T: T.func.vmap(lambda x: x, chunk_size=0),
        ValueError,
        "vmap: chunk_size should be None or greater than 0. (got 0)",
    )
    raises_like_torch(
        lambda T: T.func.vmap(lambda x: x, randomness="never"),
        RuntimeError,
        "Only allowed values for randomness are 'error', 'different', or 'same'. Got never",
    )


def test_vmap_randomness_modes():
    def noisy(x):
        return x + fg.rand(3)

    raises_like_torch(
        lambda T: T.func.vmap(lambda x: x + T.rand(3))(T.zeros(2, 3)),
        RuntimeError,
        "vmap: called random operation while in randomness error mode. Please either use the 'same' or "
        "'different' randomness flags on vmap or perform the randomness operation out of vmap",
    )
    fg.manual_seed(3)
    same_rows = fg.func.vmap(noisy, randomness="same")(fg.zeros(4, 3))
    assert all(same_rows[i].equal(same_rows[0]) for i in range(4))
    fg.manual_seed(3)
    first = fg.rand(3)
    assert same_rows[0].equal(first)
    after_vmap = fg.rand(3)
    fg.manual_seed(3)
    fg.rand(3)
    assert after_vmap.equal(fg.rand(3))  # 'same' advances the generator as one call does
    different = fg.func.vmap(noisy, randomness="different")(fg.zeros(4, 3))
    assert not different[0].equal(different[1])
    # a function that draws nothing is fine in 'error' mode
    same(lambda T: T.func.vmap(lambda x: x * 2)(*tensors(T, B4)))


# --------------------------------------------------------------------------- modules


def _models(T, seed, n=1):
    """``n`` small MLPs for ``T`` with weights from ``seed`` (the same for both modules)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 2)).double()
        with T.no_grad():
            for p in m.parameters():
                p.copy_(T.tensor(rng.standard_normal(tuple(p.shape)), dtype=T.float64))
        out.append(m)
    return out


def test_per_sample_gradients_with_functional_call_and_vmap_of_grad():
    data, targets = rand(6, 3), rand(6, 2)

    def run(T):
        (model,) = _models(T, 11)
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def loss(params, buffers, sample, target):
            pred = T.func.functional_call(model, (params, buffers), (sample.unsqueeze(0),))
            return T.nn.functional.mse_loss(pred, target.unsqueeze(0))

        x, y = tensors(T, data, targets)
        per_sample = T.func.vmap(T.func.grad(loss), in_dims=(None, None, 0, 0))(params, buffers, x, y)
        return per_sample, params

    per_sample, params = same(run)
    assert set(per_sample) == {"0.weight", "0.bias", "2.weight", "2.bias"}
    assert tuple(per_sample["0.weight"].shape) == (6, 4, 3)
    # the mean of the per-sample gradients is the batch gradient
    (model,) = _models(fg, 11)
    fg.nn.functional.mse_loss(model(fg.tensor(data)), fg.tensor(targets)).backward()
    for name, p in model.named_parameters():
        np.testing.assert_allclose(per_sample[name].mean(0).numpy(), p.grad.numpy(), atol=1e-12)


def test_stack_module_state_ensembles_with_vmap():
    data = rand(5, 3)

    def run(T):
        models = _models(T, 5, n=3)
        params, buffers = T.func.stack_module_state(models)
        base = models[0]

        def call(p, b, x):
            return T.func.functional_call(base, (p, b), (x,))

        out = T.func.vmap(call, in_dims=(0, 0, None))(params, buffers, *tensors(T, data))
        assert all(v.is_leaf and v.requires_grad for v in params.values())
        return params, buffers, out

    params, _, out = same(run)
    assert tuple(params["0.weight"].shape) == (3, 4, 3)
    models = _models(fg, 5, n=3)
    for k, m in enumerate(models):
        np.testing.assert_allclose(out[k].detach().numpy(), m(fg.tensor(data)).detach().numpy(), atol=1e-12)


def test_stack_module_state_errors_match_torch():
    raises_like_torch(
        lambda T: T.func.stack_module_state([]),
        RuntimeError,
        "stack_module_state: Expected at least one model, got 0.",
    )
    raises_like_torch(
        lambda T: T.func.stack_module_state([T.nn.Linear(2, 2), T.nn.Linear(2, 2).eval()]),
        RuntimeError,
        "stack_module_state: Expected all models to have the same training/eval mode.",
    )
    raises_like_torch(
        lambda T: T.func.stack_module_state([T.nn.Linear(2, 2), T.nn.Tanh()]),
        RuntimeError,
        "stack_module_state: Expected all models to be of the same class.",
    )


def test_functional_call_dicts_and_errors():
    arrays = rand(2, 4), rand(3)

    def run(T):
        (model,) = _models(T, 2)
        weight, x = tensors(T, *arrays)
        return T.func.functional_call(model, ({"2.weight": weight}, {}), x), tuple(model[2].weight.shape)

    same(run)
    raises_like_torch(
        lambda T: T.func.functional_call(
            T.nn.Linear(2, 2), ({"bias": T.zeros(2)}, {"bias": T.ones(2)}), T.ones(2)
        ),
        ValueError,
        "['bias'] appeared in multiple dictionaries; behavior of functional call is ambiguous",
    )
    raises_like_torch(
        lambda T: T.func.functional_call(T.nn.Linear(2, 2), [1], T.ones(2)),
        ValueError,
        "Expected all elements of parameter_and_buffer_dicts to be dictionaries",
    )


@needs_torch
def test_public_names_match_torch_func():
    ours = set(fg.func.__all__)
    assert ours <= set(dir(torch.func))
    missing = {"functionalize", "replace_all_batch_norm_modules_", "debug_unwrap", "rearrange"}
    assert set(torch.func.__all__) - ours <= missing


def test_functionalize_and_batch_norm_replacement():
    def shift(x):
        x.add_(1)
        return x * 2

    x = fg.zeros(2)
    assert fg.func.functionalize(shift)(x).tolist() == [2.0, 2.0] and x.tolist() == [1.0, 1.0]
    assert fg.func.functionalize(shift, remove="mutations_and_views").__name__ == "shift"
    with pytest.raises(RuntimeError, match="received invalid argument for remove=views"):
        fg.func.functionalize(shift, remove="views")
    model = fg.nn.Sequential(fg.nn.Linear(3, 3), fg.nn.BatchNorm1d(3))
    assert fg.func.replace_all_batch_norm_modules_(model) is model
    norm = model[1]
    assert norm.running_mean is None and norm.running_var is None and not norm.track_running_stats
    assert sorted(model.state_dict()) == ["0.bias", "0.weight", "1.bias", "1.weight"]
    model.eval()  # still the batch's own statistics
    out = model(fg.randn(8, 3))
    np.testing.assert_allclose(out.mean(0).detach().numpy(), np.zeros(3), atol=1e-5)


def make_numpy_cube(lib, with_jvp=True):
    """x**3 computed with numpy: its backward is not differentiable, so only its jvp gives the
    forward derivative."""

    def forward(x):
        return lib.tensor(x.detach().numpy() ** 3)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return lib.tensor(3 * x.detach().numpy() ** 2 * g.detach().numpy())

    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * t

    methods = {"forward": forward, "setup_context": setup_context, "backward": backward}
    if with_jvp:
        methods["jvp"] = jvp
    return type("Cube", (lib.autograd.Function,), {k: staticmethod(v) for k, v in methods.items()})


@pytest.mark.parametrize("lib", [fg] + ([torch] if has_torch else []), ids=lambda m: m.__name__)
def test_forward_transforms_use_a_custom_functions_jvp(lib):
    x_np = np.array([1.0, 2.0, 3.0])
    # d/dx sin(x**3) * x = 3 x**3 cos(x**3) + sin(x**3)
    expected = 3 * x_np**3 * np.cos(x_np**3) + np.sin(x_np**3)
    Cube = make_numpy_cube(lib)
    x, t = lib.tensor(x_np), lib.ones(3, dtype=lib.float64)

    def f(x):
        return Cube.apply(x).sin() * x

    np.testing.assert_allclose(lib.func.jvp(f, (x,), (t,))[1].numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(lib.func.linearize(f, x)[1](t).numpy(), expected, rtol=1e-12)
    # The tangent is differentiable through the jvp: d/dx sum(3 x**2) = 6 x.
    grad = lib.func.grad(lambda x: lib.func.jvp(Cube.apply, (x,), (t,))[1].sum())(x)
    np.testing.assert_allclose(grad.numpy(), 6 * x_np, rtol=1e-12)
    xr = x.clone().requires_grad_()
    lib.func.jvp(Cube.apply, (xr,), (t,))[1].sum().backward()
    np.testing.assert_allclose(xr.grad.numpy(), 6 * x_np, rtol=1e-12)
    message = (
        "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
    )
    with pytest.raises(NotImplementedError, match=re.escape(message)):
        lib.func.jvp(make_numpy_cube(lib, with_jvp=False).apply, (x,), (t,))
    if lib is fg:
        # torch.func's jacfwd needs a vmap rule of the Function; ferrograd's takes a jvp per column.
        np.testing.assert_allclose(lib.func.jacfwd(f)(x).numpy(), np.diag(expected), rtol=1e-12)

"""Matrix products: values, gradients (finite differences and torch), grad_fn names and errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import arrays, assert_raises_like_torch, check_op, has_torch, torch


@st.composite
def matmul_shapes(draw):
    """Operand shapes matmul accepts: 1-D, 2-D and broadcast batches."""
    m, k, n = (draw(st.integers(0, 3)) for _ in range(3))
    k = max(k, 1) if draw(st.booleans()) else k
    batch_a = draw(st.lists(st.integers(1, 3), max_size=2))
    batch_b = [1 if draw(st.booleans()) else d for d in batch_a]
    if draw(st.booleans()):
        batch_b = batch_b[1:]
    a = [k] if draw(st.booleans()) and not batch_a else [*batch_a, m, k]
    b = [k] if draw(st.booleans()) and not batch_b else [*batch_b, k, n]
    if draw(st.booleans()):
        a, b = list(a), list(b)
    return tuple(a), tuple(b)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_matmul_values_and_grads(data):
    sa, sb = data.draw(matmul_shapes())
    a, b = data.draw(arrays(sa)), data.draw(arrays(sb))
    check_op(lambda T, x, y: x @ y, a, b)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_mm_bmm_addmm(data):
    m, k, n, bs = (data.draw(st.integers(1, 3)) for _ in range(4))
    a, b = data.draw(arrays((m, k))), data.draw(arrays((k, n)))
    check_op(lambda T, x, y: T.mm(x, y), a, b)
    check_op(lambda T, x, y: T.mm(x.t(), y.t().t()), a.T.copy(), b)
    c = data.draw(arrays((n,)))
    check_op(lambda T, i, x, y: T.addmm(i, x, y, beta=0.5, alpha=2.0), c, a, b)
    check_op(lambda T, i, x, y: T.addmm(i, x, y), c, a, b)
    ba, bb = data.draw(arrays((bs, m, k))), data.draw(arrays((bs, k, n)))
    check_op(lambda T, x, y: T.bmm(x, y), ba, bb)
    v, w = data.draw(arrays((k,))), data.draw(arrays((k,)))
    check_op(lambda T, x, y: T.dot(x, y), v, w)
    check_op(lambda T, x, y: T.mv(x, y), a, v)
    check_op(lambda T, x, y: T.outer(x, y), v, c)


@settings(max_examples=30, deadline=None)
@given(
    data=st.data(),
    lead=st.lists(st.integers(1, 3), max_size=2),
    bias=st.sampled_from(["vector", "scalar", "none"]),
    transposed=st.booleans(),
)
def test_linear_values_and_grads(data, lead, bias, transposed):
    """F.linear on 1-D, 2-D and batched inputs (contiguous or not), with a vector, scalar or no bias."""
    k, n = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    x = data.draw(arrays((*lead, k)))
    w = data.draw(arrays((n, k)))
    if transposed and x.ndim >= 2:
        # A non-contiguous input: the transpose of a contiguous array.
        x = np.swapaxes(x, -1, -2).copy()
        prepare = lambda t: t.transpose(-1, -2)  # noqa: E731
    else:
        prepare = lambda t: t  # noqa: E731
    if bias == "none":
        check_op(lambda T, a, b: T.nn.functional.linear(prepare(a), b), x, w)
        return
    c = data.draw(arrays((n,) if bias == "vector" else ()))
    check_op(lambda T, a, b, i: T.nn.functional.linear(prepare(a), b, i), x, w, c)


# (input shape, input contiguous, bias shape or None) -> the grad_fn PyTorch records
LINEAR_GRAD_FNS = [
    ((3, 4), True, (5,), "AddmmBackward0"),
    ((3, 4), True, (3, 5), "AddmmBackward0"),
    ((3, 4), True, None, "MmBackward0"),
    ((2, 3, 4), True, (5,), "ViewBackward0"),
    ((0, 3, 4), True, (5,), "ViewBackward0"),
    ((4,), True, (5,), "ViewBackward0"),
    ((2, 3, 4), False, (5,), "AddBackward0"),
    ((2, 3, 4), True, (), "AddBackward0"),
    ((2, 3, 4), True, None, "UnsafeViewBackward0"),
]


@pytest.mark.parametrize(("shape", "contiguous", "bias_shape", "name"), LINEAR_GRAD_FNS)
def test_linear_records_the_nodes_torch_records(shape, contiguous, bias_shape, name):
    modules = [fg] + ([torch] if has_torch else [])
    for T in modules:
        x = T.randn(*shape).requires_grad_()
        if not contiguous:
            x = T.randn(*shape[:-2], shape[-1], shape[-2]).transpose(-1, -2).requires_grad_()
        w = T.randn(5, shape[-1], requires_grad=True)
        b = None if bias_shape is None else T.randn(bias_shape, requires_grad=True)
        out = T.nn.functional.linear(x, w, b)
        assert out.grad_fn.name() == name
        assert tuple(out.shape) == (*shape[:-1], 5)


def test_linear_gives_the_weight_its_own_strides_and_the_bias_a_row_sum():
    """The weight used as `W.t()` inside addmm still gets the contiguous gradient `g^T @ x`."""
    x = fg.randn(64, 30, dtype=fg.float64)
    w = fg.randn(20, 30, dtype=fg.float64, requires_grad=True)
    b = fg.randn(20, dtype=fg.float64, requires_grad=True)
    g = np.random.default_rng(0).standard_normal((64, 20))
    fg.nn.functional.linear(x, w, b).backward(fg.tensor(g))
    assert w.grad.is_contiguous() and w.grad.stride() == (30, 1)
    np.testing.assert_allclose(w.grad.numpy(), g.T @ x.numpy(), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), g.sum(0), rtol=1e-12)


def test_linear_errors_as_torch():
    assert_raises_like_torch(
        lambda F, T: F.linear(T.randn(3, 4), T.randn(5, 3), T.randn(5)),
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 3x5\)",
    )
    assert_raises_like_torch(
        lambda F, T: F.linear(T.randn(3, 4), T.randn(4), T.randn(5)),
        RuntimeError,
        "mat2 must be a matrix, got 1-D tensor",
    )
    assert_raises_like_torch(
        lambda F, T: F.linear(T.randn(2, 3, 4), T.randn(5, 3), T.randn(5)),
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(6x4 and 3x5\)",
    )


def test_addmm_with_default_factors_matches_its_expansion_to_second_order():
    rng = np.random.default_rng(0)
    c, a, b = rng.standard_normal(4), rng.standard_normal((3, 5)), rng.standard_normal((5, 4))
    results = []
    for f in (lambda i, x, y: fg.addmm(i, x, y), lambda i, x, y: i + x @ y):
        i, x, y = (fg.tensor(v, requires_grad=True) for v in (c, a, b))
        out = f(i, x, y)
        gi, gx = fg.autograd.grad(out.pow(2).sum(), (i, x), create_graph=True)
        (gy,) = fg.autograd.grad(gi.sum() + gx.pow(2).sum(), y)
        results.append([out.detach().numpy(), gi.detach().numpy(), gx.detach().numpy(), gy.numpy()])
    assert fg.addmm(fg.tensor(c), fg.tensor(a), fg.tensor(b)).grad_fn is None
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [fg.float32, fg.float64, fg.complex64, fg.complex128])
@pytest.mark.parametrize(("m", "k", "n"), [(3, 5, 4), (64, 300, 520), (200, 190, 130), (300, 64, 20)])
def test_a_row_bias_added_inside_the_product_rounds_as_adding_it_after(dtype, m, k, n):
    """linear's and addmm's row bias, added by each part of the product (whole, split over
    threads, computed transposed or as stored) gives the bits of `product + bias`."""
    rng = np.random.default_rng(m * k * n)
    x = fg.tensor(draw_values(rng, dtype, m, k), dtype=dtype)
    w = fg.tensor(draw_values(rng, dtype, n, k), dtype=dtype)
    w_by_rows = fg.tensor(draw_values(rng, dtype, k, n), dtype=dtype)
    b = fg.tensor(draw_values(rng, dtype, n), dtype=dtype)
    for weight in (w.t(), w_by_rows):
        expected = (x @ weight + b).numpy()
        for got in (fg.addmm(b, x, weight), fg.addmm(b.reshape(1, n), x, weight)):
            assert got.shape == (m, n) and got.dtype == dtype
            np.testing.assert_array_equal(got.numpy(), expected)
    np.testing.assert_array_equal(fg.nn.functional.linear(x, w, b).numpy(), (x @ w.t() + b).numpy())
    # As in PyTorch, a bias of another dtype is refused rather than promoted.
    other = fg.complex64 if dtype == fg.complex128 else fg.complex128
    bias = fg.tensor(draw_values(rng, other, n), dtype=other)
    with pytest.raises(RuntimeError, match="self and mat2 must have the same dtype, but got Complex"):
        fg.addmm(bias, x, w.t())


def test_double_backward_through_mm():
    x = fg.tensor(np.random.rand(3, 3), requires_grad=True)
    y = (x @ x).sum()
    (g,) = fg.autograd.grad(y, x, create_graph=True)
    (gg,) = fg.autograd.grad(g.sum(), x)
    # d/dx sum(x @ x) = 1 @ x^T + x^T @ 1; its sum's gradient is 2 * n everywhere... per row/col.
    ones = np.ones((3, 3))
    expected = ones @ ones + ones @ ones
    np.testing.assert_allclose(gg.numpy(), expected)


def test_complex_and_int_products():
    a = np.array([[1 + 2j, 3 - 1j], [0.5j, 2]], dtype=np.complex128)
    b = np.array([[2 - 1j, 1j], [1, 1 + 1j]], dtype=np.complex128)
    np.testing.assert_allclose((fg.tensor(a) @ fg.tensor(b)).numpy(), a @ b)
    i = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal((fg.tensor(i) @ fg.tensor(i.T.copy())).numpy(), i @ i.T)
    f = np.random.rand(4, 5).astype(np.float32)
    np.testing.assert_allclose((fg.tensor(f).t() @ fg.tensor(f)).numpy(), f.T @ f, rtol=1e-5)


@pytest.mark.skipif(not has_torch, reason="needs torch")
def test_complex_grads_match_torch():
    import torch

    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    b = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    grads = []
    for T in (fg, torch):
        x, y = T.tensor(a, requires_grad=True), T.tensor(b, requires_grad=True)
        (x @ y).abs().sum().backward()
        grads.append((x.grad.numpy(), y.grad.numpy()))
    for g, t in zip(*grads):
        np.testing.assert_allclose(g, t)


@pytest.mark.parametrize(
    "sa, sb, name",
    [
        ((3,), (3,), "DotBackward0"),
        ((2, 3), (3,), "MvBackward0"),
        ((2, 3), (3, 4), "MmBackward0"),
        ((5, 2, 3), (3, 4), "UnsafeViewBackward0"),
        ((5, 2, 3), (3,), "UnsafeViewBackward0"),
        ((5, 2, 3), (5, 3, 4), "UnsafeViewBackward0"),
        ((3,), (5, 3, 4), "UnsafeViewBackward0"),
        ((2, 3), (5, 3, 4), "CloneBackward0"),
        ((2, 1, 2, 3), (4, 3, 2), "UnsafeViewBackward0"),
    ],
)
def test_grad_fn_names(sa, sb, name):
    a = fg.tensor(np.ones(sa), requires_grad=True)
    b = fg.tensor(np.ones(sb))
    assert (a @ b).grad_fn.name() == name
    assert fg.bmm(fg.ones(2, 2, 2, requires_grad=True), fg.ones(2, 2, 2)).grad_fn.name() == "BmmBackward0"


@pytest.mark.parametrize(
    "fn, exc, msg",
    [
        (
            lambda: fg.ones(2, 3) @ fg.ones(4, 5),
            RuntimeError,
            r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)",
        ),
        (
            lambda: fg.tensor(1.0) @ fg.ones(3),
            RuntimeError,
            "both arguments to matmul need to be at least 1D, but they are 0D and 1D",
        ),
        (
            lambda: fg.ones(2, 3) @ fg.ones(3, 4, dtype=fg.float64),
            RuntimeError,
            "expected m1 and m2 to have the same dtype, but got: float != double",
        ),
        (
            lambda: fg.ones(3) @ fg.ones(3, dtype=fg.float64),
            RuntimeError,
            "dot : expected both vectors to have same dtype, but found Float and Double",
        ),
        (
            lambda: fg.ones(3) @ fg.ones(4),
            RuntimeError,
            r"inconsistent tensor size, expected tensor \[3\] and src \[4\]",
        ),
        (
            lambda: fg.ones(2, 3) @ fg.ones(4),
            RuntimeError,
            r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)",
        ),
        (
            lambda: fg.ones(2, 2, 3) @ fg.ones(2, 4, 5),
            RuntimeError,
            r"Expected size for first two dimensions of batch2 tensor to be: \[2, 3\] but got: \[2, 4\].",
        ),
        (lambda: fg.bmm(fg.ones(2, 3), fg.ones(2, 3)), RuntimeError, "batch1 must be a 3D tensor"),
        (lambda: fg.mm(fg.ones(3), fg.ones(3, 3)), RuntimeError, "self must be a matrix"),
        (lambda: fg.ones(2, 3, 2) @ fg.ones(3, 3, 2), RuntimeError, "The size of tensor a"),
    ],
)
def test_errors(fn, exc, msg):
    with pytest.raises(exc, match=msg):
        fn()


@settings(max_examples=30, deadline=None)
@given(
    m=st.integers(1, 40),
    k=st.integers(1, 40),
    n=st.integers(1, 40),
    layouts=st.sampled_from(["rr", "rc", "cr", "cc"]),
    batch=st.integers(0, 2),
)
def test_products_of_transposed_operands(m, k, n, layouts, batch):
    """Operands stored by rows or by columns give the same product and
    gradients; a gradient reaches `.grad` with its operand's strides."""
    rng = np.random.default_rng(m * 1600 + k * 40 + n)
    lead = (batch,) if batch else ()
    x = rng.standard_normal((*lead, m, k))
    y = rng.standard_normal((*lead, k, n))
    g = rng.standard_normal((*lead, m, n))

    def stored(array, by_columns):
        if not by_columns:
            return fg.tensor(array, requires_grad=True), None
        base = fg.tensor(np.swapaxes(array, -1, -2).copy(), requires_grad=True)
        return base, base.transpose(-1, -2)

    (xa, xv), (ya, yv) = stored(x, layouts[0] == "c"), stored(y, layouts[1] == "c")
    out = (xa if xv is None else xv) @ (ya if yv is None else yv)
    np.testing.assert_allclose(out.detach().numpy(), x @ y, rtol=1e-10, atol=1e-10)
    out.backward(fg.tensor(g))
    gx, gy = g @ np.swapaxes(y, -1, -2), np.swapaxes(x, -1, -2) @ g
    for leaf, view, want in ((xa, xv, gx), (ya, yv, gy)):
        got = leaf.grad.numpy()
        np.testing.assert_allclose(
            got if view is None else np.swapaxes(got, -1, -2), want, rtol=1e-10, atol=1e-10
        )
        assert leaf.grad.is_contiguous()


def test_linear_weight_gradient():
    """`x @ W.t()` gives W the contiguous gradient `g^T @ x`."""
    x = fg.randn(64, 30, dtype=fg.float64)
    w = fg.randn(20, 30, dtype=fg.float64, requires_grad=True)
    (x @ w.t()).sum().backward()
    assert w.grad.is_contiguous()
    want = np.ones((64, 20)).T @ x.numpy()
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-12)


def draw_values(rng, dtype, *shape):
    """Standard normal values of `shape`, complex for the complex dtypes."""
    values = rng.standard_normal(shape)
    if dtype in (fg.complex64, fg.complex128):
        values = values + 1j * rng.standard_normal(shape)
    return values


@settings(max_examples=40, deadline=None)
@given(
    m=st.integers(1, 30),
    k=st.integers(2, 30),
    n=st.integers(1, 30),
    repeated=st.sampled_from(["lhs", "rhs", "both"]),
    transposed=st.booleans(),
    batch=st.integers(0, 3),
    dtype=st.sampled_from([fg.float64, fg.complex128]),
)
def test_products_with_an_operand_repeated_along_the_contraction(m, k, n, repeated, transposed, batch, dtype):
    """An operand expanded along the contracted dimension (the gradient of a
    sum arrives so) gives the same product and gradients as its dense copy."""
    rng = np.random.default_rng(m * 900 + k * 30 + n)
    lead = (batch,) if batch else ()

    def draw(*shape):
        return draw_values(rng, dtype, *shape)

    x = draw(*lead, m, 1) if repeated != "rhs" else draw(*lead, m, k)
    y = draw(*lead, 1, n) if repeated != "lhs" else draw(*lead, k, n)
    dense_x = np.broadcast_to(x, (*lead, m, k))
    dense_y = np.broadcast_to(y, (*lead, k, n))

    def operand(values, dense, by_columns):
        if by_columns:
            leaf = fg.tensor(np.swapaxes(values, -1, -2).copy(), requires_grad=True)
            stored = leaf.transpose(-1, -2)
        else:
            leaf = fg.tensor(values.copy(), requires_grad=True)
            stored = leaf
        return leaf, stored.expand(*dense.shape)

    xa, xe = operand(x, dense_x, transposed)
    ya, ye = operand(y, dense_y, not transposed)
    out = xe @ ye
    np.testing.assert_allclose(out.detach().numpy(), dense_x @ dense_y, rtol=1e-10, atol=1e-10)
    g = draw(*lead, m, n)
    out.backward(fg.tensor(g))
    gx = (
        (g @ np.swapaxes(dense_y, -1, -2).conj()).sum(-1, keepdims=True)
        if x.shape[-1] == 1
        else g @ np.swapaxes(dense_y, -1, -2).conj()
    )
    gy = (
        (np.swapaxes(dense_x, -1, -2).conj() @ g).sum(-2, keepdims=True)
        if y.shape[-2] == 1
        else np.swapaxes(dense_x, -1, -2).conj() @ g
    )
    for leaf, want, was_transposed in ((xa, gx, transposed), (ya, gy, not transposed)):
        got = leaf.grad.numpy()
        got = np.swapaxes(got, -1, -2) if was_transposed else got
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(
    m=st.integers(1, 20),
    k=st.integers(1, 20),
    n=st.integers(1, 20),
    batch=st.integers(0, 3),
    transposed=st.booleans(),
    dtype=st.sampled_from([fg.float64, fg.complex128]),
)
def test_gradients_through_a_summed_product(m, k, n, batch, transposed, dtype):
    """The gradient of a product's sum (one value per matrix, a different one
    per batch entry here) reaches both operands, and a tanh before the
    product, as the dense formulas give; leaves get dense gradients."""
    rng = np.random.default_rng(m * 400 + k * 20 + n)
    lead = (batch,) if batch else ()

    def draw(*shape):
        return draw_values(rng, dtype, *shape)

    a, b = draw(*lead, m, k), draw(*lead, k, n)
    weights = draw(*lead) if batch else draw()
    fa = fg.tensor(a, requires_grad=True)
    if transposed:
        fb_leaf = fg.tensor(np.swapaxes(b, -1, -2).copy(), requires_grad=True)
        fb = fb_leaf.transpose(-1, -2)
    else:
        fb_leaf = fb = fg.tensor(b, requires_grad=True)
    sums = (fa.tanh() @ fb).sum((-2, -1))
    (sums * fg.tensor(weights)).sum().real.backward()
    g = np.broadcast_to(np.conj(weights)[..., None, None], (*lead, m, n))
    t = np.tanh(a)
    want_b = np.swapaxes(t, -1, -2).conj() @ g
    want_t = g @ np.swapaxes(b, -1, -2).conj()
    want_a = want_t * np.conj(1 - t * t)
    np.testing.assert_allclose(fa.grad.numpy(), want_a, rtol=1e-10, atol=1e-10)
    got_b = fb_leaf.grad.numpy()
    np.testing.assert_allclose(
        np.swapaxes(got_b, -1, -2) if transposed else got_b, want_b, rtol=1e-10, atol=1e-10
    )
    for leaf in (fa, fb_leaf):
        sized = [i for i, d in enumerate(leaf.shape) if d > 1]
        assert [leaf.grad.stride(i) for i in sized] == [leaf.stride(i) for i in sized]


def test_summed_product_second_order_matches_finite_differences():
    """With `create_graph` the gradients of a summed product stay functions of
    every input, so their own gradients are right."""
    rng = np.random.default_rng(3)
    a = fg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    b = fg.tensor(rng.standard_normal((3, 5)), requires_grad=True)

    def grad_norm(a, b):
        (ga,) = fg.autograd.grad((a @ b).sum() * (a * a).sum(), a, create_graph=True)
        return (ga * ga).sum()

    grad_norm(a, b).backward()
    eps, base = 1e-6, b.detach().numpy()
    for i, j in [(0, 0), (2, 4), (1, 2)]:
        up, down = base.copy(), base.copy()
        up[i, j] += eps
        down[i, j] -= eps
        at = [grad_norm(a.detach().requires_grad_(), fg.tensor(v)).item() for v in (up, down)]
        diff = (at[0] - at[1]) / (2 * eps)
        assert abs(b.grad[i, j].item() - diff) < 1e-5 * max(1.0, abs(diff))


def test_matrix_sum_backward_products_match_torch():
    """`(A @ B).sum()` backward multiplies by the expanded gradient of the sum."""
    torch = pytest.importorskip("torch")
    a, b = np.random.default_rng(0).standard_normal((2, 70, 70))
    fa, fb = fg.tensor(a, requires_grad=True), fg.tensor(b, requires_grad=True)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    (fa @ fb.t()).mean().backward()
    (ta @ tb.t()).mean().backward()
    np.testing.assert_allclose(fa.grad.numpy(), ta.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(fb.grad.numpy(), tb.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("layouts", ["rr", "rc", "cr", "cc"])
def test_products_write_every_element_of_reused_memory(layouts):
    """Product buffers are not zero-filled before gemm writes them: on memory
    freed by NaN-filled tensors of the same size, every element still comes
    out right."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3, 128, 128)).astype(np.float32)
    x = fg.tensor(a) if layouts[0] == "r" else fg.tensor(a.swapaxes(1, 2).copy()).transpose(1, 2)
    y = fg.tensor(b) if layouts[1] == "r" else fg.tensor(b.swapaxes(1, 2).copy()).transpose(1, 2)
    for _ in range(3):
        # Output, scratch and packed operand: three blocks of this size.
        poison = [fg.full((3, 128, 128), float("nan")) for _ in range(3)]
        del poison
        np.testing.assert_allclose((x @ y).numpy(), a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("dtype", "k"),
    [(fg.float32, 256), (fg.float64, 128), (fg.complex64, 128), (fg.complex128, 64), (fg.float32, 512)],
)
@pytest.mark.parametrize("rows", [31, 32, 200])
@pytest.mark.parametrize("batch", [0, 2])
def test_products_with_a_transposed_operand_whose_columns_are_1_kib_apart(dtype, k, rows, batch):
    """A right operand read by columns a multiple of 1 KiB apart is copied
    before the product; the product is the same as from its dense copy."""
    rng = np.random.default_rng(rows + k)
    lead = (batch,) if batch else ()
    a = draw_values(rng, dtype, *lead, rows, k)
    w = draw_values(rng, dtype, *lead, 70, k)
    fa, fw = fg.tensor(a, dtype=dtype), fg.tensor(w, dtype=dtype)
    got = (fa @ fw.transpose(-1, -2)).numpy()
    want = a @ np.swapaxes(w, -1, -2)
    tol = 1e-4 if dtype in (fg.float32, fg.complex64) else 1e-10
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(k))

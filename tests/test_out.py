"""The ``out=`` argument: a function writes its result into a given tensor (resized when its
shape differs, with a warning when it had elements) and returns it; several results go into
a tuple of tensors. Checked on its own and, with torch present, side by side with torch."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferrograd as fg

from helpers import arrays, has_torch, shapes, torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch not installed")

UNARY = ["exp", "sin", "tanh", "abs", "neg", "sqrt", "floor", "sigmoid", "square", "log1p"]
BINARY = ["add", "sub", "mul", "div", "maximum", "atan2", "pow", "fmod", "eq", "lt"]


@settings(max_examples=40, deadline=None)
@given(
    name=st.sampled_from(UNARY + BINARY),
    data=st.data(),
    out_shape=st.sampled_from(["same", "empty", "other", "strided"]),
)
def test_elementwise_out_matches_the_result_and_is_returned(name, data, out_shape):
    shape = data.draw(shapes(max_dims=3, max_side=4))
    x = np.asarray(np.abs(data.draw(arrays(shape))) + 0.5)
    args = (fg.tensor(x),) + ((fg.tensor(np.flip(x).copy()),) if name in BINARY else ())
    expected = getattr(fg, name)(*args)
    if out_shape == "same":
        out = fg.empty(shape, dtype=expected.dtype)
    elif out_shape == "empty":
        out = fg.empty(0, dtype=expected.dtype)
    elif out_shape == "other":
        out = fg.empty(int(np.prod(shape)) + 2, dtype=expected.dtype)
    else:  # every other element of a larger tensor, written in place
        base = fg.zeros(int(np.prod(shape)) * 2, dtype=expected.dtype)
        out = base[::2].view(shape) if len(shape) <= 1 else base[::2].reshape(shape)
    version = out._version
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        returned = getattr(fg, name)(*args, out=out)
    assert returned is out
    assert out.shape == expected.shape and out.dtype == expected.dtype
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    assert out._version == version + 1
    resized = [w for w in caught if "was resized" in str(w.message)]
    assert len(resized) == (out_shape == "other")
    if out_shape == "strided" and len(shape) <= 1:
        np.testing.assert_array_equal(base[::2].numpy(), expected.numpy().reshape(-1))


def test_out_aliasing_an_input_is_written_after_the_result_is_complete():
    x = fg.arange(6.0).reshape(2, 3)
    fg.matmul(x[:, :2], fg.eye(2), out=x[:, 1:])
    np.testing.assert_array_equal(x.numpy(), [[0, 0, 1], [3, 3, 4]])
    y = fg.ones(3)
    assert fg.mul(y, 2, out=y) is y
    np.testing.assert_array_equal(y.numpy(), [2, 2, 2])


def test_out_is_refused_while_recording_and_allowed_under_no_grad():
    a = fg.randn(3, requires_grad=True)
    message = "add(): functions with out=... arguments don't support automatic differentiation"
    with pytest.raises(RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        fg.add(a, 1, out=fg.empty(3))
    with pytest.raises(RuntimeError, match="but one of the arguments requires grad"):
        fg.add(fg.ones(3), 1, out=fg.zeros(3, requires_grad=True))
    with pytest.raises(RuntimeError, match=r"cat\(\): functions with out"):
        fg.cat([a, a], out=fg.empty(6))
    with fg.no_grad():
        out = fg.empty(3)
        assert fg.add(a, 1, out=out) is out
        np.testing.assert_allclose(out.numpy(), a.detach().numpy() + 1)
        leaf = fg.zeros(2, requires_grad=True)
        with pytest.warns(UserWarning, match="was resized"):
            fg.add(fg.ones(3), 1, out=leaf)  # resized beside autograd, as PyTorch resizes outputs
    assert leaf.shape == (3,) and leaf.requires_grad and leaf.is_leaf
    np.testing.assert_array_equal(leaf.detach().numpy(), [2, 2, 2])
    assert out.grad_fn is None and not out.requires_grad


def test_dtype_rules():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        fg.add(fg.ones(3), 1, out=fg.empty(3, dtype=fg.int64))
    with pytest.raises(
        RuntimeError, match="result type ComplexFloat can't be cast to the desired output type Float"
    ):
        fg.mul(fg.ones(3, dtype=fg.complex64), 1, out=fg.empty(3))
    assert fg.add(fg.ones(3, dtype=fg.int64), 1, out=fg.empty(3)).dtype == fg.float32
    assert fg.eq(fg.ones(3), 1, out=fg.empty(3, dtype=fg.int64)).tolist() == [1, 1, 1]
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        fg.matmul(fg.ones(2, 2), fg.ones(2, 2), out=fg.empty(2, 2, dtype=fg.float64))
    with pytest.raises(
        RuntimeError, match="Expected out tensor to have dtype long int, but got float instead"
    ):
        fg.sort(fg.ones(3), out=(fg.empty(3), fg.empty(3)))
    with pytest.raises(RuntimeError, match="Expected out type to be Float but got Double"):
        fg.where(fg.tensor([True]), fg.ones(1), fg.zeros(1), out=fg.empty(1, dtype=fg.float64))
    with pytest.raises(
        TypeError, match="torch.cat\\(\\): input types can't be cast to the desired output type Long"
    ):
        fg.stack([fg.ones(2)], out=fg.empty(2, dtype=fg.int64))
    assert fg.cat([fg.ones(2)], out=fg.empty(2, dtype=fg.float64)).dtype == fg.float64


def test_argument_errors():
    with pytest.raises(TypeError, match=r"add\(\): argument 'out' must be Tensor, not tuple"):
        fg.add(fg.ones(3), 1, out=(fg.empty(3),))
    with pytest.raises(TypeError, match=r"sort\(\): argument 'out' must be tuple of Tensors, not Tensor"):
        fg.sort(fg.ones(3), out=fg.empty(3))
    with pytest.raises(TypeError, match="expected tuple of 2 elements but got 1"):
        fg.sort(fg.ones(3), out=(fg.empty(3),))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        fg.add(fg.ones(2, 2), 1, out=fg.empty(1).expand(2, 2))


def test_several_results_fill_the_given_tensors():
    x = fg.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    values, indices = fg.empty(0), fg.empty(0, dtype=fg.int64)
    result = fg.max(x, 1, out=(values, indices))
    assert result.values is values and result.indices is indices
    assert values.tolist() == [3.0, 5.0] and indices.tolist() == [0, 1]
    values, indices = fg.empty(2), fg.empty(2, dtype=fg.int64)
    result = fg.topk(x[0], 2, out=[values, indices])
    assert result[0] is values and values.tolist() == [3.0, 2.0] and indices.tolist() == [0, 2]


def test_factories_take_the_out_dtype_and_refuse_another():
    out = fg.empty(0, dtype=fg.int64)
    assert fg.arange(5, out=out) is out and out.dtype == fg.int64 and out.tolist() == [0, 1, 2, 3, 4]
    out = fg.empty(6)
    assert fg.zeros(2, 3, out=out) is out and out.shape == (2, 3) and out.stride() == (3, 1)
    assert fg.full((3,), 2, out=fg.empty(0, dtype=fg.int64)).tolist() == [2, 2, 2]
    assert fg.eye(2, out=fg.empty(4)).tolist() == [[1, 0], [0, 1]]
    assert fg.linspace(0, 1, 3, out=fg.empty(3, dtype=fg.float64)).dtype == fg.float64
    with pytest.raises(RuntimeError, match=r"dtype Double does not match dtype of out parameter \(Float\)"):
        fg.zeros(2, dtype=fg.float64, out=fg.empty(2))
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        fg.randn(3, out=fg.zeros(3, requires_grad=True))
    with pytest.warns(UserWarning, match="The number of elements in the out tensor of shape"):
        fg.arange(3, out=fg.empty(5))
    fg.manual_seed(7)
    drawn = fg.randn(4, dtype=fg.float64)
    fg.manual_seed(7)
    out = fg.empty(4, dtype=fg.float64)
    fg.randn(4, out=out)
    np.testing.assert_array_equal(out.numpy(), drawn.numpy())


def test_submodules_take_out():
    a = fg.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=fg.float64)
    out = fg.empty(2, 2, dtype=fg.float64)
    assert fg.linalg.inv(a, out=out) is out
    np.testing.assert_allclose(out.numpy(), np.linalg.inv(a.numpy()))
    out = fg.empty(3)
    assert fg.special.expit(fg.zeros(3), out=out) is out and out.tolist() == [0.5, 0.5, 0.5]
    out = fg.empty(4, dtype=fg.complex64)
    assert fg.fft.fft(fg.ones(4), out=out) is out
    np.testing.assert_allclose(out.numpy(), np.fft.fft(np.ones(4)), atol=1e-6)
    out = fg.empty(4)
    assert fg.fft.fftfreq(4, out=out) is out and out.tolist() == [0.0, 0.25, -0.5, -0.25]


# Calls made on both libraries, whose outcomes (values, shape, strides, dtype, version change
# of the outputs, warnings; or the error type and message) must agree.
CASES = [
    "M.add(M.ones(3), 1, out=M.empty(2))",
    "M.add(M.ones(3), 1, out=M.empty(7)[::2])",
    "M.add(M.ones(3), 1, out=M.empty(6)[::2])",
    "M.add(M.ones(2, 3), M.ones(3), alpha=2, out=M.empty(3, 2).t())",
    "M.sub(M.arange(4), 1, out=M.empty(4, dtype=M.float64))",
    "M.div(M.arange(4), 2, rounding_mode='floor', out=M.empty(4, dtype=M.int64))",
    "M.clamp(M.arange(5.0), 1, 3, out=M.empty(0))",
    "M.sum(M.ones(2, 3), 1, out=M.empty(2, dtype=M.float64))",
    "M.mean(M.ones(2, 3), 1, keepdim=True, out=M.empty(1))",
    "M.cumsum(M.arange(4.0), 0, out=M.empty(4))",
    "M.max(M.arange(6.0).reshape(2, 3), 1, out=(M.empty(2, dtype=M.float64), M.empty(2, dtype=M.int64)))",
    "M.sort(M.tensor([2.0, 1.0]), out=(M.empty(2), M.empty(2, dtype=M.int64)))",
    "M.matmul(M.ones(2, 3), M.ones(3, 4), out=M.empty(2, 4))",
    "M.mm(M.ones(2, 3), M.ones(3, 4), out=M.empty(1))",
    "M.cat([M.ones(2), M.zeros(2)], out=M.empty(4, dtype=M.float64))",
    "M.stack([M.ones(2), M.zeros(2)], out=M.empty(4))",
    "M.where(M.tensor([True, False]), M.ones(2), M.zeros(2), out=M.empty(2))",
    "M.gather(M.arange(6.0).reshape(2, 3), 1, M.tensor([[0], [2]]), out=M.empty(2, 1))",
    "M.index_select(M.arange(6.0), 0, M.tensor([4, 1]), out=M.empty(2))",
    "M.linalg.vector_norm(M.ones(4), out=M.empty(()))",
    "M.linalg.solve(M.eye(2) * 2, M.ones(2), out=M.empty(2))",
    "M.special.erf(M.zeros(2), out=M.empty(2))",
    "M.arange(5, out=M.empty(0, dtype=M.int64))",
    "M.ones(3, out=M.empty(5))",
    "M.zeros(2, 3, dtype=M.float64, out=M.empty(6))",
    "M.randn(3, out=M.zeros(3, requires_grad=True))",
    "M.add(M.ones(3), 1, out=M.empty(3, requires_grad=True))",
    "M.exp(M.ones(3, dtype=M.int64), out=M.empty(3, dtype=M.int64))",
]


def _outcome(M, case):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            namespace = {"M": M}
            result = eval(case, namespace)
        except Exception as e:  # noqa: BLE001 - the error is the outcome compared
            return ("error", type(e).__name__, str(e).split("\n")[0])
    outs = list(result) if isinstance(result, tuple) else [result]
    return (
        [(o.tolist(), tuple(o.shape), o.stride(), str(o.dtype).split(".")[-1]) for o in outs],
        sorted(str(w.message).split(" (Triggered")[0] for w in caught if w.category is UserWarning),
    )


@needs_torch
@pytest.mark.parametrize("case", CASES)
def test_out_matches_torch(case):
    assert _outcome(fg, case) == _outcome(torch, case)


@needs_torch
def test_versions_and_views_match_torch():
    def program(M):
        base = M.zeros(6)
        out = base[1:4]
        v0 = out._version
        M.add(M.ones(3), 2, out=out)
        grown = M.empty(2)
        g0 = grown._version
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            M.mul(M.ones(3), 3, out=grown)
        assert len(caught) == 1
        same = M.ones(2)
        s0 = same._version
        M.mul(same, 2, out=same)
        return base.tolist(), out._version - v0, grown._version - g0, same._version - s0, same.tolist()

    assert program(fg) == program(torch)

"""set_default_dtype(float64): what new tensors and Python floats become, beside torch."""

import numpy as np
import pytest

import ferrograd as fg

from helpers import has_torch

if has_torch:
    import torch

needs_torch = pytest.mark.skipif(not has_torch, reason="torch is the reference")


@pytest.fixture
def double_default():
    """float64 as the default for the test, float32 again afterwards whatever happens."""
    modules = [fg, torch] if has_torch else [fg]
    for T in modules:
        T.set_default_dtype(T.float64)
    try:
        yield
    finally:
        for T in modules:
            T.set_default_dtype(T.float32)


def dtype_name(t) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


# Expressions evaluated with `T` bound to ferrograd and to torch.
CREATIONS = [
    "T.zeros(2, 3)",
    "T.ones(2)",
    "T.empty(4)",
    "T.full((2,), 1.5)",
    "T.full((2,), 3)",
    "T.full((2,), 1j)",
    "T.eye(3)",
    "T.rand(3)",
    "T.randn(3)",
    "T.arange(0.0, 2.0, 0.5)",
    "T.arange(4)",
    "T.linspace(0, 1, 5)",
    "T.linspace(0, 1j, 5)",
    "T.tensor([1.0, 2.0])",
    "T.tensor(2.5)",
    "T.tensor([1, 2])",
    "T.tensor([1j])",
    "T.tensor(np.ones(2, dtype=np.float32))",
    "T.tensor(np.float32(1.5))",
    "T.tensor([np.float32(1.5)])",
    "T.normal(0.0, 1.0, (3,))",
    "T.zeros_like(T.tensor([1, 2]), dtype=None).float()",
    "T.tensor([1, 2]) * 2.5",
    "T.tensor([1, 2]) / T.tensor([2, 4])",
    "T.tensor([1, 2]) * 1j",
    "T.tensor([1, 2]).exp()",
    "T.tensor([1, 2], dtype=T.float32) * 2.5",
    "T.tensor([1, 2], dtype=T.float32) + T.tensor(1.0)",
    "T.logsumexp(T.tensor([1, 2]), 0)",
    "T.nn.Linear(3, 2).weight",
]


@needs_torch
@pytest.mark.parametrize("expr", CREATIONS)
def test_dtype_matches_torch_under_float64_default(double_default, expr):
    got = eval(expr, {"T": fg, "np": np})
    expected = eval(expr, {"T": torch, "np": np})
    assert dtype_name(got) == dtype_name(expected)


def test_new_tensors_follow_the_default(double_default):
    assert fg.get_default_dtype() == fg.float64
    assert fg.zeros(2).dtype == fg.float64
    assert fg.tensor([0.1]).dtype == fg.float64
    # a float64 default keeps the value a float32 default would round
    assert fg.tensor([0.1]).item() == 0.1
    assert (fg.tensor([1, 2]) * 0.1).dtype == fg.float64
    assert fg.tensor([1j]).dtype == fg.complex128
    assert fg.ones(2, dtype=fg.float32).dtype == fg.float32


def test_default_returns_to_float32():
    assert fg.get_default_dtype() == fg.float32
    fg.set_default_dtype(fg.float64)
    fg.set_default_dtype(fg.float32)
    assert fg.zeros(1).dtype == fg.float32
    assert (fg.tensor([1]) * 0.5).dtype == fg.float32
    assert fg.tensor([1j]).dtype == fg.complex64


def test_rejected_dtype_leaves_the_default(double_default):
    for bad in (fg.int64, fg.bool, fg.complex128):
        with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
            fg.set_default_dtype(bad)
    assert fg.get_default_dtype() == fg.float64


def test_repr_names_the_non_default_float(double_default):
    assert repr(fg.tensor([1.5, 2.0])) == "tensor([1.5000, 2.0000])"
    assert repr(fg.tensor([1.5], dtype=fg.float32)) == "tensor([1.5000], dtype=ferrograd.float32)"
    assert repr(fg.tensor([], dtype=fg.float32)) == "tensor([], dtype=ferrograd.float32)"
    assert repr(fg.tensor([])) == "tensor([])"
    assert repr(fg.tensor([1j])) == "tensor([0.+1.j])"


def test_training_step_in_float64(double_default):
    fg.manual_seed(0)
    model = fg.nn.Sequential(fg.nn.Linear(4, 8), fg.nn.Tanh(), fg.nn.Linear(8, 1))
    opt = fg.optim.SGD(model.parameters(), lr=0.1)
    x, y = fg.randn(16, 4), fg.randn(16, 1)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = fg.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert loss.dtype == fg.float64
    assert all(p.grad.dtype == fg.float64 for p in model.parameters())
    assert losses[-1] < losses[0]


def test_gradient_of_a_python_float_expression_is_float64(double_default):
    x = fg.tensor([0.3, -1.2], requires_grad=True)
    (x.sin() * 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * np.cos([0.3, -1.2]), rtol=1e-15)

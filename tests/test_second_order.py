"""create_graph=True: second derivatives of every differentiable op family,
checked by gradgradcheck (finite differences of first derivatives) in float64."""

import numpy as np
import pytest

import ferrograd as torch
from ferrograd.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(0)


def leaf(*shape, positive=False):
    values = rng.uniform(0.5, 2.0, shape) if positive else rng.uniform(-1.5, 1.5, shape)
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


UNARY = {
    "exp": lambda x: x.exp(),
    "log": lambda x: x.log(),
    "sqrt": lambda x: x.sqrt(),
    "sin": lambda x: x.sin(),
    "cos": lambda x: x.cos(),
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "pow": lambda x: x**3,
    "rpow": lambda x: 2.0**x,
    "reciprocal": lambda x: x.reciprocal(),
    "softmax": lambda x: x.softmax(-1),
    "log_softmax": lambda x: x.log_softmax(-1),
    "logsumexp": lambda x: x.logsumexp(-1),
    "sum_mean": lambda x: x.sum(0) * x.mean(),
    "var": lambda x: x.var(-1),
    "views": lambda x: x.t().reshape(-1).unsqueeze(0).expand(2, -1) * x.flatten(),
    "index": lambda x: x[torch.tensor([0, 0, 1])] ** 2,
    "mask": lambda x: x[x > 0.0] ** 2,
    "cat_stack": lambda x: torch.cat([x, x * x]).sum(0) * torch.stack([x, x]).sum(0).sum(0),
    "amax": lambda x: x.amax(-1) ** 2,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_second_derivatives(name):
    x = leaf(2, 3, positive=name in ("log", "sqrt", "reciprocal"))
    assert gradcheck(UNARY[name], (x,))
    assert gradgradcheck(UNARY[name], (x,))


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a**b,
    "matmul": lambda a, b: a @ b.t(),
    "maximum": lambda a, b: torch.maximum(a, b) * a,
    "where": lambda a, b: torch.where(a > b, a * a, b * a),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_second_derivatives(name):
    a = leaf(2, 3, positive=name == "pow")
    b = leaf(2, 3, positive=name == "div")
    if name == "div":
        b = (b + 1.0).detach().requires_grad_()
    assert gradcheck(BINARY[name], (a, b))
    assert gradgradcheck(BINARY[name], (a, b))


def test_cross_entropy_second_derivatives():
    x = leaf(3, 4)
    target = torch.tensor([0, 3, 1])
    fn = lambda x: torch.nn.functional.cross_entropy(x, target)  # noqa: E731
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("offset", [-1, 0, 2])
def test_diag_and_diagonal(offset):
    v = leaf(3)
    m = leaf(3, 4)
    assert gradgradcheck(lambda x: x.diag(offset) * 2, (v,))
    assert gradgradcheck(lambda x: torch.diag(x, offset) ** 2, (m,))
    assert gradcheck(lambda x: x.diagonal(offset) * 3, (m,))
    np.testing.assert_allclose(torch.diag(v.detach(), offset).numpy(), np.diag(v.detach().numpy(), offset))
    np.testing.assert_allclose(m.detach().diag(offset).numpy(), np.diag(m.detach().numpy(), offset))

"""autograd.functional against torch.autograd.functional and closed forms."""

import numpy as np
import pytest

import ferrograd as fg
from ferrograd.autograd import functional as F

real = pytest.importorskip("torch")


def f_vec(T):
    return lambda x, y: (x.exp() * y).sum(0) + x * y


def f_scalar(T):
    return lambda x: (x**3).sum() + (x[0] * x[1]).sin()


def both(*arrays):
    return [fg.tensor(a) for a in arrays], [real.tensor(a) for a in arrays]


def close(a, b):
    if isinstance(a, (tuple, list)):
        for x, y in zip(a, b):
            close(x, y)
        return
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-8)


X = np.array([0.3, -0.7, 1.1])
Y = np.array([1.5, 0.2, -0.4])


def test_vjp_and_jvp_match_torch():
    (x, y), (tx, ty) = both(X, Y)
    v = np.array([1.0, -2.0, 0.5])
    close(
        F.vjp(f_vec(fg), (x, y), fg.tensor(v)),
        real.autograd.functional.vjp(f_vec(real), (tx, ty), real.tensor(v)),
    )
    close(
        F.jvp(f_vec(fg), (x, y), (fg.tensor(v), fg.tensor(v))),
        real.autograd.functional.jvp(f_vec(real), (tx, ty), (real.tensor(v), real.tensor(v))),
    )


def test_jacobian_and_hessian_match_torch():
    (x, y), (tx, ty) = both(X, Y)
    close(F.jacobian(f_vec(fg), (x, y)), real.autograd.functional.jacobian(f_vec(real), (tx, ty)))
    close(F.jacobian(lambda a: a.exp(), x), real.autograd.functional.jacobian(lambda a: a.exp(), tx))
    close(F.hessian(f_scalar(fg), x), real.autograd.functional.hessian(f_scalar(real), tx))


def test_hvp_and_vhp_match_torch():
    (x,), (tx,) = both(X)
    v = np.array([0.1, 0.2, -0.3])
    close(
        F.hvp(f_scalar(fg), x, fg.tensor(v)), real.autograd.functional.hvp(f_scalar(real), tx, real.tensor(v))
    )
    close(
        F.vhp(f_scalar(fg), x, fg.tensor(v)), real.autograd.functional.vhp(f_scalar(real), tx, real.tensor(v))
    )


def test_strict_mode_reports_independent_outputs():
    (x,), _ = both(X)
    with pytest.raises(
        RuntimeError, match="Output 0 of the user-provided function does not require gradients"
    ):
        F.vjp(lambda a: fg.ones(3), x, fg.ones(3), strict=True)

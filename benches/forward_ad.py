"""ferrograd beside torch on forward-mode AD: dual tensors (``autograd.forward_ad``) and the
forward transforms of ``func`` (``jvp``, ``jacfwd``, ``hessian``), timed in alternating rounds
in one process as in conv_net.py.

usage: python3 benches/forward_ad.py      (needs torch)
"""

from __future__ import annotations

import warnings

import numpy as np
from conv_net import compare


def mlp(T):
    """784-512-512-10 with tanh on a batch of 64, and a direction for the batch."""
    rng = np.random.default_rng(0)

    def normal(*shape, scale=1.0):
        return T.tensor(rng.standard_normal(shape).astype(np.float32) * scale)

    w1, w2, w3 = normal(512, 784, scale=0.05), normal(512, 512, scale=0.05), normal(10, 512, scale=0.05)
    return (lambda x: ((x @ w1.t()).tanh() @ w2.t()).tanh() @ w3.t()), normal(64, 784), normal(64, 784)


def chain(u):
    """200 small ops: what each op costs beyond its arithmetic."""
    for _ in range(200):
        u = (u * 1.0001).sin()
    return u


def dual_mlp(T):
    f, x, v = mlp(T)
    ad = T.autograd.forward_ad

    def step():
        with T.no_grad(), ad.dual_level():
            return ad.unpack_dual(f(ad.make_dual(x, v))).tangent

    return step


def jvp_mlp(T):
    f, x, v = mlp(T)
    return lambda: T.func.jvp(f, (x,), (v,))


def jvp_chain(T):
    x, v = T.randn(16), T.randn(16)
    return lambda: T.func.jvp(chain, (x,), (v,))


def tangent_gradient_chain(T):
    """Reverse over forward: the gradient of a tangent with respect to the primal."""
    x, v = T.randn(16, requires_grad=True), T.randn(16)
    return lambda: T.autograd.grad(T.func.jvp(chain, (x,), (v,))[1].sum(), x)


def dual_xlogy_chain(T):
    """Dual tensors through 200 ``xlogy`` (a Function of ferrograd's own, whose tangent comes
    from its backward) with a primal that requires grad: each tangent's walk must stop at
    the op, not revisit the chain before it."""
    x, v = T.rand(16, requires_grad=True), T.randn(16)
    ad = T.autograd.forward_ad

    def step():
        with ad.dual_level():
            u = ad.make_dual(x, v)
            for _ in range(200):
                u = T.special.xlogy(u, u + 1.0) * 0.01 + u
            return ad.unpack_dual(u).tangent

    return step


def jacfwd_wide(T):
    """A Jacobian with 8 columns and 2000 rows: forward mode's case."""
    a, z = T.randn(2000, 8), T.randn(8)
    return lambda: T.func.jacfwd(lambda z: (a @ z).tanh())(z)


def hessian_32(T):
    b, y = T.randn(32, 32) * 0.2, T.randn(32)
    return lambda: T.func.hessian(lambda y: ((b @ y).sin() ** 2).sum() + (y**3).sum())(y)


CASES = {
    "dual_mlp": dual_mlp,
    "func.jvp_mlp": jvp_mlp,
    "func.jvp_chain200": jvp_chain,
    "tangent_gradient_chain200": tangent_gradient_chain,
    "dual_xlogy_chain200": dual_xlogy_chain,
    "func.jacfwd_8_to_2000": jacfwd_wide,
    "func.hessian_32": hessian_32,
}

if __name__ == "__main__":
    # torch's forward AD loads decompositions through a deprecated path.
    warnings.simplefilter("ignore", DeprecationWarning)
    compare(CASES)

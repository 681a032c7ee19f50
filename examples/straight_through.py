"""A straight-through estimator (STE) as a custom autograd Function.

Rounding has a zero derivative almost everywhere, so nothing upstream of it
would learn. The STE rounds in the forward pass but passes the gradient
straight through in the backward pass, as if the op were the identity
clamped to [-limit, limit] (the usual "clipped" STE).

gradcheck compares a backward with the derivative of the forward, which
an estimator deliberately differs from. What the example checks instead is
that the backward is exactly the gradient of the surrogate it stands in for:
``ste_against_surrogate`` has the surrogate's values and the STE's gradient,
so it passes gradcheck/gradgradcheck only if the two gradients agree.
"""

import ferrograd as torch
from ferrograd.autograd import Function, gradcheck, gradgradcheck


class RoundSTE(Function):
    @staticmethod
    def forward(ctx, x, limit):
        ctx.save_for_backward(x)
        ctx.limit = limit
        return x.clamp(-limit, limit).round()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        inside = (x.abs() <= ctx.limit).to(grad.dtype)
        return grad * inside, None


def ste_against_surrogate(x, limit=2.0):
    """Values of the surrogate clamp(x), gradient of the STE."""
    q = RoundSTE.apply(x, limit)
    return q + (x.clamp(-limit, limit) - q).detach()


def main(steps=300, verbose=True):
    torch.manual_seed(0)
    # Points away from the clamp's kinks, where finite differences are exact.
    x = (torch.rand(6, dtype=torch.float64) * 3.6 - 1.8).requires_grad_()
    assert gradcheck(ste_against_surrogate, (x,), eps=1e-6, atol=1e-6)
    assert gradgradcheck(ste_against_surrogate, (x,), eps=1e-6, atol=1e-6)
    assert RoundSTE.apply(torch.tensor([0.4, 1.6, -3.0]), 2.0).tolist() == [0.0, 2.0, -2.0]

    # Learn weights that are integers in the forward pass (quantisation-aware
    # training): fit y = X @ [1, -2, 0] with rounded weights.
    features = torch.randn(128, 3, dtype=torch.float64)
    target = features @ torch.tensor([1.0, -2.0, 0.0], dtype=torch.float64)
    w = torch.tensor([0.2, 0.1, 0.7], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.05)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((features @ RoundSTE.apply(w, 2.0) - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    if verbose:
        print(
            f"straight-through: loss {losses[0]:.4f} -> {losses[-1]:.4f}, weights {RoundSTE.apply(w, 2.0).tolist()}"
        )
    return losses


if __name__ == "__main__":
    main()

"""An in-place custom op: ``ctx.mark_dirty`` tells autograd that forward
modified its input, which then becomes the op's output.

``ScaledTanh_`` computes ``x.tanh_().mul_(scale)`` in place and saves its
output for backward (d/dx scale*tanh(x) = scale * (1 - tanh(x)^2)). Its
input must not be a leaf that requires grad, as with built-in in-place ops,
so it is applied to the result of a linear layer.
"""

import ferrograd as torch
from ferrograd.autograd import Function, gradcheck, gradgradcheck


class ScaledTanh_(Function):
    @staticmethod
    def forward(ctx, x, scale):
        x.tanh_().mul_(scale)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        t = out / ctx.scale
        return grad * ctx.scale * (1 - t * t), None


def scaled_tanh(x, scale=1.5):
    # In-place on a copy, so that gradcheck's inputs stay intact.
    return ScaledTanh_.apply(x.clone(), scale)


def main(steps=300, verbose=True):
    torch.manual_seed(0)
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    assert gradcheck(scaled_tanh, (x,), eps=1e-6, atol=1e-5)
    assert gradgradcheck(scaled_tanh, (x,), eps=1e-6, atol=1e-5)
    y = x * 1
    version = y._version
    out = ScaledTanh_.apply(y, 1.5)
    assert out is y and y._version > version and out.grad_fn.name() == "ScaledTanh_Backward"

    # Fit a one-layer network whose activation runs in place.
    features = torch.randn(64, 2, dtype=torch.float64)
    target = 1.5 * (features @ torch.tensor([[0.7], [-1.1]], dtype=torch.float64)).tanh()
    layer = torch.nn.Linear(2, 1).double()
    opt = torch.optim.SGD(layer.parameters(), lr=0.3)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((ScaledTanh_.apply(layer(features), 1.5) - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    if verbose:
        print(f"in-place custom op: loss {losses[0]:.4f} -> {losses[-1]:.6f}")
    return losses


if __name__ == "__main__":
    main()

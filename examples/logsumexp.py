"""A numerically stable LogSumExp as a custom autograd Function.

log(sum(exp(x))) overflows for large x; subtracting the maximum first does
not. The backward is softmax(x) * grad, computed from the saved output, and
is itself differentiable, so double backward works too. The example checks
the gradients with gradcheck/gradgradcheck, then fits a small log-linear
model with it.
"""

import ferrograd as torch
from ferrograd.autograd import Function, gradcheck, gradgradcheck


class LogSumExp(Function):
    @staticmethod
    def forward(ctx, x, dim):
        m = x.amax(dim=dim, keepdim=True)
        out = ((x - m).exp().sum(dim=dim, keepdim=True).log() + m).squeeze(dim)
        ctx.save_for_backward(x, out)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        # The gradient is softmax(x) * grad. Its ops are recorded when
        # create_graph=True, and the saved output is then this node's output
        # again: double backward works.
        return grad.unsqueeze(ctx.dim) * (x - out.unsqueeze(ctx.dim)).exp(), None


def logsumexp(x, dim=-1):
    return LogSumExp.apply(x, dim)


def main(steps=200, verbose=True):
    torch.manual_seed(0)
    x = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    assert gradcheck(logsumexp, (x,), eps=1e-6, atol=1e-5)
    assert gradgradcheck(logsumexp, (x,), eps=1e-6, atol=1e-5)
    # No overflow where the naive formula gives inf.
    big = torch.tensor([[1000.0, 1000.0]], dtype=torch.float64)
    assert abs(logsumexp(big).item() - (1000.0 + 0.6931471805599453)) < 1e-9

    # Multinomial logistic regression: the loss is logsumexp(logits) - logit of the class.
    features = torch.randn(64, 3, dtype=torch.float64)
    true_w = torch.randn(3, 4, dtype=torch.float64)
    labels = (features @ true_w).argmax(dim=1)
    w = torch.zeros(3, 4, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.5)
    rows = torch.arange(64)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        logits = features @ w
        loss = (logsumexp(logits) - logits[rows, labels]).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    if verbose:
        print(f"LogSumExp: loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    return losses


if __name__ == "__main__":
    main()

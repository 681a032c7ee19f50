"""The autograd tutorial's first example: Q = 3a^3 - b^2."""

import ferrograd as torch

a = torch.tensor([2.0, 3.0], requires_grad=True)
b = torch.tensor([6.0, 4.0], requires_grad=True)

Q = 3 * a**3 - b**2
print(Q)
print(Q.grad_fn)

external_grad = torch.tensor([1.0, 1.0])
Q.backward(gradient=external_grad)

print(a.grad)
print(b.grad)
print(9 * a**2 == a.grad)
print(-2 * b == b.grad)

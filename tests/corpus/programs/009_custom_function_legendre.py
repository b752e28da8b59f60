# gradcli corpus 009: a custom autograd Function (Legendre P2) inside a fitting loop
# Source: written for the gradcli corpus, modelled on "PyTorch: Defining New autograd Functions" of Learning
#   PyTorch with Examples (pytorch/tutorials beginner_source/examples_autograd/polynomial_custom_function.py,
#   BSD-3-Clause): same idea with another polynomial, own data and values; not a copy.
# License: MIT (gradcli's). Edits: none.
"""
A custom autograd Function inside a small fitting loop.

P2 is the Legendre polynomial of degree two, P2(x) = (3x^2 - 1) / 2; its
backward is written by hand.
"""
import math
import torch


class LegendreP2(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (3 * input ** 2 - 1)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 3 * input


x = torch.linspace(-1, 1, 50)
y = torch.cos(math.pi * x / 2)

a = torch.full((), 0.0, requires_grad=True)
b = torch.full((), -1.0, requires_grad=True)
c = torch.full((), 0.0, requires_grad=True)
d = torch.full((), 0.5, requires_grad=True)

learning_rate = 4e-4
P2 = LegendreP2.apply
for t in range(300):
    y_pred = a + b * P2(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, round(loss.item(), 6))
    loss.backward()
    with torch.no_grad():
        for p in (a, b, c, d):
            p -= learning_rate * p.grad
            p.grad = None

print(f"Result: y = {a.item():.4f} + {b.item():.4f} * P2({c.item():.4f} + {d.item():.4f} x)")

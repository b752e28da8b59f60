# gradcli corpus 007: fitting a cubic to sin(x) with autograd and a no_grad update
# Source: written for the gradcli corpus, modelled on "PyTorch: Tensors and autograd" of Learning PyTorch with
#   Examples (pytorch/tutorials beginner_source/examples_autograd/polynomial_autograd.py, BSD-3-Clause):
#   same structure, own data, sizes and starting values; not a copy.
# License: MIT (gradcli's). Edits: none.
# -*- coding: utf-8 -*-
"""
Fit a third order polynomial to sin(x) on [-pi, pi] with autograd
------------------------------------------------------------------

The weights are tensors with ``requires_grad=True``; the update runs
under ``torch.no_grad()`` and the gradients are reset to None.
"""
import math

import torch

dtype = torch.float
device = torch.device("cpu")

x = torch.linspace(-math.pi, math.pi, 200, device=device, dtype=dtype)
y = torch.sin(x)

a = torch.tensor(0.1, device=device, dtype=dtype, requires_grad=True)
b = torch.tensor(-0.2, device=device, dtype=dtype, requires_grad=True)
c = torch.tensor(0.05, device=device, dtype=dtype, requires_grad=True)
d = torch.tensor(0.3, device=device, dtype=dtype, requires_grad=True)

learning_rate = 1e-5
for t in range(500):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")

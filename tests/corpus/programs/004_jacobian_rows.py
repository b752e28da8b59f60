# gradcli corpus 004: the Jacobian of a vector function, one row per backward pass
# Source: written for the gradcli corpus, modelled on the "vector-Jacobian product" explanation in the
#   PyTorch autograd tutorial (pytorch/tutorials beginner_source/basics/autogradqs_tutorial.py, BSD-3-Clause)
#   and the many notebooks that build a Jacobian row by row. Not a copy.
# License: MIT (gradcli's). Edits: none.
"""Compute the Jacobian of a vector function one row at a time."""
import torch


def f(x):
    return torch.stack([x[0] * x[1], x[1] ** 2 + torch.sin(x[0]), x.sum()])


x = torch.tensor([1.0, 2.0], requires_grad=True)
y = f(x)
print(y)

rows = []
for i in range(y.shape[0]):
    grad_output = torch.zeros_like(y)
    grad_output[i] = 1.0
    (row,) = torch.autograd.grad(y, x, grad_output, retain_graph=True)
    rows.append(row)

J = torch.stack(rows)
print(J)
print(J.shape)

# gradcli corpus 026: gradcheck and gradgradcheck in float64, and a hand-written central difference
# Source: written for the gradcli corpus, modelled on the gradcheck usage of "Extending torch.autograd"
#   (pytorch/pytorch docs/source/notes/extending.rst, BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
from torch.autograd import gradcheck, gradgradcheck


def f(x, y):
    return (x * y.exp()).sum(dim=0) / (1 + x.pow(2))


x = torch.tensor([[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]], dtype=torch.double, requires_grad=True)
y = torch.tensor([[1.0, -1.0], [0.5, 0.25], [0.0, 2.0]], dtype=torch.double, requires_grad=True)
print(gradcheck(f, (x, y), eps=1e-6, atol=1e-4))
print(gradgradcheck(f, (x, y)))

# a central-difference check written out by hand
g = lambda t: (t ** 3 - 2 * t).sum()
t = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
g(t).backward()
eps = 1e-6
numeric = torch.zeros_like(t)
for i in range(t.numel()):
    e = torch.zeros_like(t)
    e[i] = eps
    numeric[i] = (g(t.detach() + e) - g(t.detach() - e)) / (2 * eps)
print(t.grad)
print(torch.allclose(t.grad, numeric, atol=1e-6))

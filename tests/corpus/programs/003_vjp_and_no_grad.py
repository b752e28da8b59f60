# gradcli corpus 003: a vector-Jacobian product through a data-dependent loop; no_grad and detach
# Source: written for the gradcli corpus, modelled on PyTorch's blitz autograd tutorial (the "while
#   y.data.norm() < 1000" example; pytorch/tutorials beginner_source/blitz/autograd_tutorial.py, BSD-3-Clause).
#   Not a copy; fixed values where the tutorial used torch.randn.
# License: MIT (gradcli's). Edits: none.
import torch

x = torch.tensor([0.25, -0.8, 1.3], requires_grad=True)

y = x * 2
steps = 0
while y.data.norm() < 1000:
    y = y * 2
    steps += 1

print(y)
print("doubled", steps, "more times")

v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(v)
print(x.grad)

print(x.requires_grad)
print((x ** 2).requires_grad)

with torch.no_grad():
    print((x ** 2).requires_grad)

y = x.detach()
print(y.requires_grad)
print(x.eq(y).all())

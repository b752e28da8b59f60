# gradcli corpus 002: switching requires_grad on in place with requires_grad_()
# Source: written for the gradcli corpus, modelled on PyTorch's blitz autograd tutorial
#   (pytorch/tutorials beginner_source/blitz/autograd_tutorial.py, BSD-3-Clause): same topic, not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

a = torch.tensor([[2.0, -1.0], [0.5, 3.0]])
a = ((a * 3) / (a - 1))
print(a)
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)

b = (a * a).sum()
print(b.requires_grad, b.grad_fn.name())

b.backward()
print(a.grad)

# gradcli corpus 001: requires_grad, grad_fn and backward on a 2x2 leaf
# Source: written for the gradcli corpus, modelled on the autograd section of PyTorch's
#   "Deep Learning with PyTorch: A 60 Minute Blitz" (pytorch/tutorials beginner_source/blitz/autograd_tutorial.py,
#   BSD-3-Clause): same topic and constructs, not a copy (see tests/corpus/README.md, "Provenance").
# License: MIT (gradcli's). Edits: none.
"""
Autograd basics
===============

Create a tensor that tracks its history, do a few operations with it and
call ``backward()`` on a scalar made from it.
"""
import torch

x = torch.ones(2, 2, requires_grad=True)
print(x)

y = x + 2
print(y)
print(y.grad_fn.name())
print(x.is_leaf, y.is_leaf)

z = y * y * 3
out = z.mean()
print(z, out)

# out is a scalar, so out.backward() is out.backward(torch.tensor(1.))
out.backward()
print(x.grad)

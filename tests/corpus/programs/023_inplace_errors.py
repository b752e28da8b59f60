# gradcli corpus 023: in-place operations on leaves and on saved tensors, and the version counter
# Source: written for the gradcli corpus, modelled on "In-place operations with autograd" in
#   docs/source/notes/autograd.rst (pytorch/pytorch, BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

leaf = torch.tensor([1.0, 2.0], requires_grad=True)
try:
    leaf.add_(1)
except RuntimeError as e:
    print("RuntimeError:", e)

with torch.no_grad():
    leaf.add_(1)
print(leaf)

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.sigmoid()
c = b * 2
print(b._version)
b.mul_(10)
print(b._version)
try:
    c.sum().backward()
except RuntimeError as e:
    print(str(e).split("Hint")[0].strip())

d = a.exp()
e = d.clone()
e.add_(1)
e.sum().backward()
print(a.grad)

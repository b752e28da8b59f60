# gradcli corpus 012: torch.autograd.grad's options: allow_unused, materialize_grads, only_inputs,
#   grad_outputs, and the error for an unused input
# Source: written for the gradcli corpus, modelled on the torch.autograd.grad documentation and its tests
#   (pytorch/pytorch torch/autograd/__init__.py and test/test_autograd.py, BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
unused = torch.tensor([5.0], requires_grad=True)

out = (a * b).sum() + a.pow(2).sum()

grads = torch.autograd.grad(out, [a, b, unused], retain_graph=True, allow_unused=True)
for name, g in zip(["a", "b", "unused"], grads):
    print(name, g)

grads = torch.autograd.grad(out, [a, unused], retain_graph=True, allow_unused=True,
                            materialize_grads=True)
print(grads)

ga, = torch.autograd.grad(outputs=out, inputs=a, only_inputs=True, retain_graph=True)
print(ga)
print(a.grad is None, b.grad is None)

try:
    torch.autograd.grad(out, [a, unused])
except RuntimeError as e:
    print(e)

vec = a * b
gv, = torch.autograd.grad(vec, a, grad_outputs=torch.ones_like(vec))
print(gv)

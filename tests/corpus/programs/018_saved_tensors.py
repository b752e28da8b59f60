# gradcli corpus 018: what a node saves for backward (_saved_self, _saved_result, ...) and
#   torch.autograd.graph.saved_tensors_hooks
# Source: written for the gradcli corpus, modelled on "Hooks for autograd saved tensors"
#   (pytorch/tutorials intermediate_source/autograd_saved_tensors_hooks_tutorial.py, BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x.pow(2)
print(y.grad_fn._saved_self is x)
print(torch.equal(y.grad_fn._saved_self, x))
print(y.grad_fn._saved_exponent)

z = x.exp()
print(z.grad_fn._saved_result.equal(z))
print(z.grad_fn._saved_result is z)

a = torch.tensor([4.0, 5.0], requires_grad=True)
b = torch.tensor([0.5, 2.0], requires_grad=True)
c = a * b
print(c.grad_fn._saved_self, c.grad_fn._saved_other)

packed = []


def pack_hook(t):
    packed.append(tuple(t.shape))
    return t


def unpack_hook(t):
    return t


with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    s = (a * b).sin().sum()
s.backward()
print(packed)
print(a.grad)

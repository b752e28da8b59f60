# gradcli corpus 015: Tensor.register_hook: observing and replacing a gradient; removing the hook
# Source: written for the gradcli corpus, modelled on the Tensor.register_hook documentation and the
#   "Backward Hooks" section of docs/source/notes/autograd.rst (pytorch/pytorch, BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
z = y.pow(2).sum()

seen = []


def remember(grad):
    seen.append(grad.clone())


def double(grad):
    return grad * 2


h1 = y.register_hook(remember)
h2 = x.register_hook(double)
z.backward(retain_graph=True)
print("grad seen at y:", seen[0])
print("x.grad (doubled by the hook):", x.grad)

h1.remove()
h2.remove()
x.grad = None
z.backward()
print("hooks removed:", x.grad, "calls recorded:", len(seen))

w = torch.tensor([0.5, -0.5], requires_grad=True)
w.register_hook(lambda grad: print("hook on w got", grad))
(w * w).sum().backward()

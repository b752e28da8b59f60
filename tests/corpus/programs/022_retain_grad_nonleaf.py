# gradcli corpus 022: .grad of non-leaf tensors, retain_grad(), is_leaf and retains_grad
# Source: written for the gradcli corpus, modelled on the retain_grad discussion in PyTorch's autograd
#   tutorial (pytorch/tutorials beginner_source/introyt/autogradyt_tutorial.py, BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = x * x
h.retain_grad()
m = h.mean()
out = m * 2
out.backward()
print(x.grad)
print(h.grad)
print(m.grad)  # not a leaf and not retained: None, with a warning
print(x.is_leaf, h.is_leaf, m.is_leaf)
print(h.retains_grad, m.retains_grad)

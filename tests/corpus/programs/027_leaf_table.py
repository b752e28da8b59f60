# gradcli corpus 027: a table of is_leaf / requires_grad / grad_fn for tensors built in different ways
# Source: written for the gradcli corpus, modelled on the leaf-tensor explanations of the torch.Tensor.is_leaf
#   documentation (pytorch/pytorch torch/_tensor_docs.py, BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0])
c = a + b
d = c.detach()
e = d * a
f = torch.tensor(5.0).requires_grad_()
g = a.to(torch.float64)

tensors = {"a": a, "b": b, "c": c, "d": d, "e": e, "f": f, "g": g}
print(f"{'name':<6}{'leaf':<7}{'requires_grad':<15}grad_fn")
for name, t in tensors.items():
    fn = t.grad_fn.name() if t.grad_fn is not None else "-"
    print(f"{name:<6}{str(t.is_leaf):<7}{str(t.requires_grad):<15}{fn}")

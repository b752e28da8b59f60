# gradcli corpus 013: the Hessian of the Rosenbrock function, by double backward and with
#   torch.autograd.functional.hessian
# Source: written for the gradcli corpus, modelled on Hessian examples in the torch.autograd.functional
#   documentation (pytorch/pytorch torch/autograd/functional.py, BSD-3-Clause) and optimisation course
#   notebooks. Not a copy.
# License: MIT (gradcli's). Edits: none.
"""Hessian of the Rosenbrock function, by hand and with torch.autograd.functional."""
import torch
from torch.autograd.functional import hessian


def rosenbrock(xy):
    x, y = xy[0], xy[1]
    return (1 - x) ** 2 + 100 * (y - x ** 2) ** 2


p = torch.tensor([-1.5, 2.0], requires_grad=True)
f = rosenbrock(p)
grad, = torch.autograd.grad(f, p, create_graph=True)
print("f =", f.item())
print("grad =", grad)

rows = [torch.autograd.grad(grad[i], p, retain_graph=True)[0] for i in range(2)]
H = torch.stack(rows)
print(H)

H2 = hessian(rosenbrock, p.detach())
print(H2)
print(torch.equal(H, H2))

# gradcli corpus 020: torch.func transforms: grad, grad of grad, vmap, jacrev, jacfwd, hessian
# Source: written for the gradcli corpus, modelled on "Jacobians, Hessians, hvp, vhp, and more: composing
#   function transforms" (pytorch/tutorials intermediate_source/jacobians_hessians.py, BSD-3-Clause) and the
#   torch.func documentation. Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
from torch.func import grad, vmap, jacrev, jacfwd, hessian


def f(x):
    return torch.sin(x).sum() + (x ** 2).sum()


x = torch.tensor([0.0, 0.5, 1.0])
print(grad(f)(x))
print(grad(grad(lambda t: t ** 3))(torch.tensor(2.0)))


def affine(w, b, x):
    return w @ x + b


w = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
b = torch.tensor([0.5, -0.5])
xs = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
print(vmap(affine, in_dims=(None, None, 0))(w, b, xs))
print(jacrev(affine, argnums=2)(w, b, xs[2]))
print(jacfwd(affine, argnums=2)(w, b, xs[2]))
print(hessian(f)(x))

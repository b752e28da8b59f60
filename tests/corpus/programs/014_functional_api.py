# gradcli corpus 014: torch.autograd.functional: jacobian, vjp, jvp, hvp, vhp
# Source: written for the gradcli corpus, modelled on the examples of the torch.autograd.functional
#   documentation (pytorch/pytorch torch/autograd/functional.py, BSD-3-Clause), with fixed inputs instead of
#   torch.rand. Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
from torch.autograd.functional import jacobian, vjp, jvp, hvp, vhp


def exp_reducer(x):
    return x.exp().sum(dim=1)


def adder(x, y):
    return 2 * x + 3 * y


def pow_reducer(x):
    return x.pow(3).sum()


inputs = torch.tensor([[0.1, 0.2], [-0.3, 0.4]])
print(jacobian(exp_reducer, inputs))
print(jacobian(exp_reducer, inputs, create_graph=True).requires_grad)

args = (torch.tensor([1.0, 2.0]), torch.tensor([3.0, -1.0]))
print(jacobian(adder, args))

out, vjp_val = vjp(exp_reducer, inputs, torch.ones(2))
print(out)
print(vjp_val)

out, jvp_val = jvp(exp_reducer, inputs, torch.ones(2, 2))
print(jvp_val)

x = torch.tensor([[1.0, -2.0], [0.5, 3.0]])
v = torch.ones(2, 2)
print(hvp(pow_reducer, x, v))
print(vhp(pow_reducer, x, v))

# gradcli corpus 019: forward-mode AD with dual tensors
# Source: written for the gradcli corpus, modelled on "Forward-mode Automatic Differentiation"
#   (pytorch/tutorials intermediate_source/forward_ad_usage.py, BSD-3-Clause), with fixed values instead of
#   torch.randn. Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
import torch.autograd.forward_ad as fwAD

primal = torch.tensor([0.5, 1.0, 2.0])
tangent = torch.tensor([1.0, 0.0, -1.0])


def fn(x, y):
    return x ** 2 + y.sin()


with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    plain_tensor = torch.tensor([3.0, 3.0, 3.0])
    out = fn(dual_input, plain_tensor)
    jvp = fwAD.unpack_dual(out).tangent
    print(fwAD.unpack_dual(out).primal)
    print(jvp)
    print(fwAD.unpack_dual(plain_tensor).tangent is None)

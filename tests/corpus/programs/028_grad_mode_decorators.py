# gradcli corpus 028: grad modes as context managers, decorators and functions
# Source: written for the gradcli corpus, modelled on the examples of torch.no_grad, torch.enable_grad,
#   torch.set_grad_enabled and torch.inference_mode (pytorch/pytorch torch/autograd/grad_mode.py,
#   BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

x = torch.tensor([1.0], requires_grad=True)


@torch.no_grad()
def doubler(t):
    return t * 2


@torch.enable_grad()
def tripler(t):
    return t * 3


print(doubler(x).requires_grad)
with torch.no_grad():
    print(tripler(x).requires_grad)
    print(torch.is_grad_enabled())

is_train = False
with torch.set_grad_enabled(is_train):
    y = x * 2
print(y.requires_grad)

torch.set_grad_enabled(False)
print((x * 2).requires_grad)
torch.set_grad_enabled(True)
print((x * 2).requires_grad)

with torch.inference_mode():
    z = x * 5
    print(torch.is_inference_mode_enabled())
print(z.requires_grad, torch.is_inference_mode_enabled())
print(z.is_inference())

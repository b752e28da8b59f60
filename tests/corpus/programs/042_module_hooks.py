# gradcli corpus 042: forward hooks and full backward hooks on nn modules, kept in a dict
# Source: written for the gradcli corpus, modelled on the activation-capturing idiom of blog posts on
#   PyTorch hooks and the nn.Module.register_forward_hook documentation (pytorch/pytorch
#   torch/nn/modules/module.py, BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[1.0, 0.5], [-1.0, 2.0], [0.25, -0.75]]))
    model[0].bias.copy_(torch.tensor([0.0, 0.1, -0.2]))
    model[2].weight.copy_(torch.tensor([[0.5, -0.5, 1.0]]))
    model[2].bias.fill_(0.3)

activations = {}
gradients = {}


def save_activation(name):
    def hook(module, inputs, output):
        activations[name] = output.detach()
    return hook


def save_gradient(name):
    def hook(module, grad_input, grad_output):
        gradients[name] = grad_output[0].detach()
    return hook


handles = []
for name, module in model.named_children():
    handles.append(module.register_forward_hook(save_activation(name)))
    handles.append(module.register_full_backward_hook(save_gradient(name)))

x = torch.tensor([[1.0, 2.0], [-1.0, 0.5]], requires_grad=True)
out = model(x).sum()
out.backward()

for name in sorted(activations):
    print(name, activations[name])
for name in sorted(gradients):
    print(name, gradients[name])

for h in handles:
    h.remove()
print(len(model[0]._forward_hooks))

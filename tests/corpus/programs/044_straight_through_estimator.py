# gradcli corpus 044: a straight-through estimator (custom Function) used inside an nn.Module
# Source: written for the gradcli corpus, modelled on the straight-through rounding used in quantization-aware
#   training blog posts and repositories. Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
import torch.nn as nn
import torch.nn.functional as F


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        # pass the gradient straight through the rounding
        return grad_output


class QuantLinear(nn.Linear):
    def __init__(self, in_features, out_features, scale=0.25):
        super().__init__(in_features, out_features)
        self.scale = scale

    def forward(self, input):
        w_q = RoundSTE.apply(self.weight / self.scale) * self.scale
        return F.linear(input, w_q, self.bias)


layer = QuantLinear(3, 2)
with torch.no_grad():
    layer.weight.copy_(torch.tensor([[0.3, -0.6, 0.1], [0.9, 0.2, -0.4]]))
    layer.bias.zero_()

x = torch.tensor([[1.0, 2.0, 3.0]])
out = layer(x)
print(out)
out.sum().backward()
print(layer.weight.grad)
print(layer.bias.grad)

w = torch.tensor([0.4, 1.6, -2.5], requires_grad=True)
print(torch.round(w).requires_grad, RoundSTE.apply(w))
torch.round(w).sum().backward()
print(w.grad)

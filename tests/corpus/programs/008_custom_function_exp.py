# gradcli corpus 008: a custom autograd Function (exp) saving its result for backward
# Source: written for the gradcli corpus, modelled on the Exp example of the torch.autograd.Function
#   documentation and docs/source/notes/extending.rst (pytorch/pytorch, BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
from torch.autograd import Function


class Exp(Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


x = torch.tensor([0.0, 1.0, -2.0], requires_grad=True)
y = Exp.apply(x)
print(y)
print(y.grad_fn.name())

y.sum().backward()
print(x.grad)
print(torch.allclose(x.grad, torch.exp(x)))

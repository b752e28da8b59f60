# gradcli corpus 053: a custom Function with the newer setup_context, a backward written with differentiable
#   ops (so double backward works), and once_differentiable
# Source: written for the gradcli corpus, modelled on "Double Backward with Custom Functions"
#   (pytorch/tutorials intermediate_source/custom_function_double_backward_tutorial.rst, BSD-3-Clause) and
#   the setup_context section of docs/source/notes/extending.rst. Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
from torch.autograd.function import once_differentiable


class Square(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 2 * x


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 3 * x ** 2


x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)

y = Square.apply(x)
g, = torch.autograd.grad(y.sum(), x, create_graph=True)
print(g)
gg, = torch.autograd.grad(g.sum(), x)
print(gg)

x64 = x.detach().double().requires_grad_()
print(torch.autograd.gradcheck(Square.apply, (x64,)))
print(torch.autograd.gradgradcheck(Square.apply, (x64,)))

z = Cube.apply(x)
g, = torch.autograd.grad(z.sum(), x, create_graph=True)
print(g, g.requires_grad)
try:
    g.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)

# gradcli corpus 010: custom Functions with a non-tensor argument, needs_input_grad, two outputs and
#   mark_non_differentiable
# Source: written for the gradcli corpus, modelled on the "Extending torch.autograd" notes
#   (pytorch/pytorch docs/source/notes/extending.rst, BSD-3-Clause: MulConstant, LinearFunction and the
#   non-differentiable outputs example). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch


class ScaleAndShift(torch.autograd.Function):
    """y = x * scale + shift, where scale is a Python number."""

    @staticmethod
    def forward(ctx, x, shift, scale):
        ctx.scale = scale
        return x * scale + shift

    @staticmethod
    def backward(ctx, grad_out):
        grad_x = grad_shift = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_out * ctx.scale
        if ctx.needs_input_grad[1]:
            grad_shift = grad_out.sum(0)
        return grad_x, grad_shift, None


class SortWithIndices(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = x.sort()
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        indices, = ctx.saved_tensors
        grad_x = torch.zeros_like(grad_values)
        grad_x.index_add_(0, indices, grad_values)
        return grad_x


x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
shift = torch.tensor([0.5, -0.5])
y = ScaleAndShift.apply(x, shift, 3.0)
print(y)
y.sum().backward()
print(x.grad)

shift.requires_grad_()
x.grad = None
y = ScaleAndShift.apply(x, shift, -2.0)
(y * y).sum().backward()
print(x.grad, shift.grad)

z = torch.tensor([0.3, -1.2, 2.5, 0.0], requires_grad=True)
values, indices = SortWithIndices.apply(z)
print(values, indices)
print(indices.requires_grad)
(values * torch.arange(4.0)).sum().backward()
print(z.grad)

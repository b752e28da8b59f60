# gradcli corpus 011: second and third derivatives with create_graph=True; a gradient penalty
# Source: written for the gradcli corpus, modelled on the higher-order gradient examples of the
#   torch.autograd.grad documentation and the "double backward" tutorial
#   (pytorch/tutorials intermediate_source/custom_function_double_backward_tutorial.rst, BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 3

dy_dx, = torch.autograd.grad(y, x, create_graph=True)
print("dy/dx   =", dy_dx)
d2y_dx2, = torch.autograd.grad(dy_dx, x, create_graph=True)
print("d2y/dx2 =", d2y_dx2)
d3y_dx3, = torch.autograd.grad(d2y_dx2, x)
print("d3y/dx3 =", d3y_dx3)

# gradient penalty: d/dw of ||d loss / d inp||^2
w = torch.tensor([0.5, -1.0, 0.25], requires_grad=True)
inp = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
loss = torch.tanh(w * inp).sum()
g, = torch.autograd.grad(loss, inp, create_graph=True)
penalty = g.pow(2).sum()
penalty.backward()
print(w.grad)
print(inp.grad)

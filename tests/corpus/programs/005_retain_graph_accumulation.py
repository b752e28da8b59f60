# gradcli corpus 005: calling backward twice, gradient accumulation, zero_, and the freed-graph error
# Source: written for the gradcli corpus, modelled on the "Computing Gradients" part of PyTorch's autograd
#   tutorial (pytorch/tutorials beginner_source/basics/autogradqs_tutorial.py, BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x ** 2).sum()

y.backward(retain_graph=True)
print("first:", x.grad)
y.backward(retain_graph=True)
print("accumulated:", x.grad)

x.grad.zero_()
y.backward()
print("after zero_:", x.grad)

try:
    y.backward()
except RuntimeError as err:
    print("RuntimeError:", str(err).split(".")[0])

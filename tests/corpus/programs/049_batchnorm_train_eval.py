# gradcli corpus 049: BatchNorm1d in training and evaluation mode, running statistics and gradients
# Source: written for the gradcli corpus, modelled on batch normalization notebooks of PyTorch courses
#   (e.g. d2l-ai/d2l-en chapter_convolutional-modern/batch-norm.md). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
import torch.nn as nn

bn = nn.BatchNorm1d(3, momentum=0.1)
x = torch.tensor([[1.0, 2.0, 0.0], [3.0, -2.0, 1.0], [5.0, 0.0, 2.0], [7.0, 4.0, 5.0]], requires_grad=True)

bn.train()
y = bn(x)
print(y)
print(bn.running_mean, bn.running_var)
print(bn.num_batches_tracked)

weights = torch.tensor([[1.0, 2.0, 3.0], [0.0, 1.0, -1.0], [2.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
(y * weights).sum().backward()
print(x.grad)
print(bn.weight.grad, bn.bias.grad)

bn.eval()
with torch.no_grad():
    print(bn(torch.tensor([[4.0, 1.0, 2.0]])))
print(bn.training)

# gradcli corpus 025: the pre-0.4 API that old tutorials use: Variable, FloatTensor, .data, .grad.data
# Source: written for the gradcli corpus, modelled on the PyTorch 0.3-era tutorials (e.g. jcjohnson/pytorch-examples
#   autograd/two_layer_net_autograd.py, MIT) that still run on today's PyTorch. Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
from torch.autograd import Variable

x = Variable(torch.FloatTensor([[1, 2], [3, 4]]), requires_grad=True)
y = x + 2
z = y * y * 3
out = z.mean()
out.backward()
print(x.grad)
print(x.data)
print(type(x.data))

w1 = Variable(torch.FloatTensor([[0.1, -0.2], [0.3, 0.4]]), requires_grad=True)
inp = Variable(torch.FloatTensor([[1.0, 1.0]]), requires_grad=False)
target = Variable(torch.FloatTensor([[0.5, 0.5]]))
for i in range(3):
    y_pred = inp.mm(w1).clamp(min=0)
    loss = (y_pred - target).pow(2).sum()
    print(i, loss.item())
    loss.backward()
    w1.data -= 0.1 * w1.grad.data
    w1.grad.data.zero_()
print(w1)

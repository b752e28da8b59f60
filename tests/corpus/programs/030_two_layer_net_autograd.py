# gradcli corpus 030: the same two-layer network with autograd computing the backward pass
# Source: written for the gradcli corpus, modelled on "PyTorch: Tensors and autograd" of Learning PyTorch with
#   Examples (pytorch/tutorials beginner_source/examples_autograd/two_layer_net_autograd.py, BSD-3-Clause):
#   same method, own sizes and fixed values; not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

dtype = torch.float
device = torch.device("cpu")
N, D_in, H, D_out = 4, 3, 5, 2

x = torch.arange(N * D_in, dtype=dtype, device=device).reshape(N, D_in) / 10
y = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, -0.5]], device=device)
w1 = torch.linspace(-0.5, 0.5, D_in * H, device=device).reshape(D_in, H).requires_grad_()
w2 = torch.linspace(0.3, -0.3, H * D_out, device=device).reshape(H, D_out).requires_grad_()

learning_rate = 1e-2
for t in range(50):
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    loss = (y_pred - y).pow(2).sum()
    if t % 10 == 9:
        print(t, round(loss.item(), 5))
    loss.backward()
    with torch.no_grad():
        w1 -= learning_rate * w1.grad
        w2 -= learning_rate * w2.grad
        w1.grad.zero_()
        w2.grad.zero_()

print(w2)

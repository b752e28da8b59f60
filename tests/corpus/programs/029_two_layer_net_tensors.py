# gradcli corpus 029: a two-layer ReLU network trained with hand-written backprop on tensors (no autograd)
# Source: written for the gradcli corpus, modelled on "PyTorch: Tensors" of Learning PyTorch with Examples
#   (pytorch/tutorials beginner_source/examples_tensor/two_layer_net_tensor.py, BSD-3-Clause): same method,
#   own sizes and fixed values; not a copy.
# License: MIT (gradcli's). Edits: none.
"""
Two-layer network, manual backprop
----------------------------------

Forward pass, loss and backward pass are computed by hand with tensor ops.
"""
import torch

dtype = torch.float
N, D_in, H, D_out = 4, 3, 5, 2

x = torch.arange(N * D_in, dtype=dtype).reshape(N, D_in) / 10
y = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, -0.5]])
w1 = torch.linspace(-0.5, 0.5, D_in * H).reshape(D_in, H)
w2 = torch.linspace(0.3, -0.3, H * D_out).reshape(H, D_out)

learning_rate = 1e-2
for t in range(50):
    h = x.mm(w1)
    h_relu = h.clamp(min=0)
    y_pred = h_relu.mm(w2)

    loss = (y_pred - y).pow(2).sum().item()
    if t % 10 == 9:
        print(t, round(loss, 5))

    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.t().mm(grad_y_pred)
    grad_h_relu = grad_y_pred.mm(w2.t())
    grad_h = grad_h_relu.clone()
    grad_h[h < 0] = 0
    grad_w1 = x.t().mm(grad_h)

    w1 -= learning_rate * grad_w1
    w2 -= learning_rate * grad_w2

print(w2)

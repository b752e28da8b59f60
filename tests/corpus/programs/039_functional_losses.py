# gradcli corpus 039: a tour of torch.nn.functional losses and their gradients
# Source: written for the gradcli corpus, modelled on the loss function examples of the torch.nn
#   documentation (pytorch/pytorch torch/nn/modules/loss.py, BSD-3-Clause), with fixed inputs instead of
#   torch.randn. Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
import torch.nn.functional as F

pred = torch.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7]], requires_grad=True)
target = torch.tensor([[0.0, -1.5, 1.0], [1.0, 0.0, 0.0]])
labels = torch.tensor([2, 0])

losses = {
    "mse": lambda: F.mse_loss(pred, target),
    "l1": lambda: F.l1_loss(pred, target),
    "smooth_l1": lambda: F.smooth_l1_loss(pred, target, beta=0.5),
    "huber": lambda: F.huber_loss(pred, target, delta=0.8),
    "cross_entropy": lambda: F.cross_entropy(pred, labels),
    "nll": lambda: F.nll_loss(F.log_softmax(pred, dim=1), labels),
    "bce_logits": lambda: F.binary_cross_entropy_with_logits(pred, (target > 0).float()),
}

for name, make_loss in losses.items():
    pred.grad = None
    loss = make_loss()
    loss.backward()
    print(f"{name:>14}: {loss.item():.6f}")
    print(pred.grad)

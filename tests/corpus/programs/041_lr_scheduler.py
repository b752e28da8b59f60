# gradcli corpus 041: a learning-rate schedule (StepLR) on top of SGD with momentum
# Source: written for the gradcli corpus, modelled on the torch.optim documentation's "How to adjust learning
#   rate" example (pytorch/pytorch docs/source/optim.md, BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
from torch.optim.lr_scheduler import StepLR

w = torch.tensor([2.0, -3.0], requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1, momentum=0.5)
scheduler = StepLR(optimizer, step_size=2, gamma=0.5)

for epoch in range(6):
    optimizer.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    optimizer.step()
    scheduler.step()
    print(epoch, optimizer.param_groups[0]["lr"], scheduler.get_last_lr(), w.detach())

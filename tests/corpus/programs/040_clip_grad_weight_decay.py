# gradcli corpus 040: SGD with weight decay and clip_grad_norm_ between backward and step
# Source: written for the gradcli corpus, modelled on the gradient clipping idiom of PyTorch's examples
#   (e.g. pytorch/examples word_language_model/main.py, BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
import torch.nn as nn

model = nn.Linear(3, 2)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]]))
    model.bias.copy_(torch.tensor([0.1, -0.1]))

inputs = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
targets = torch.tensor([[0.0, 1.0], [1.0, 0.0]])

optimizer = torch.optim.SGD(model.parameters(), lr=0.05, weight_decay=1e-2)
for step in range(5):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    clipped = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}, grad norm {total_norm.item():.4f} -> {clipped.item():.4f}")

print(model.weight)
print(model.bias)

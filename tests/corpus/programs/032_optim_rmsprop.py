# gradcli corpus 032: the polynomial fit with torch.optim.RMSprop and optimizer.zero_grad()/step()
# Source: written for the gradcli corpus, modelled on "PyTorch: optim" of Learning PyTorch with Examples
#   (pytorch/tutorials beginner_source/examples_nn/polynomial_optim.py, BSD-3-Clause): same structure, own data
#   and values; not a copy.
# License: MIT (gradcli's). Edits: none.
import math

import torch

x = torch.linspace(-math.pi, math.pi, 100)
y = torch.sin(x) + 0.25
xx = x.unsqueeze(-1).pow(torch.tensor([1, 2, 3]))

model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.5, 0.0, -0.05]]))
    model[0].bias.fill_(0.0)

loss_fn = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
for t in range(200):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 50 == 49:
        print(t, f"{loss.item():.4f}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

layer = model[0]
w = layer.weight.detach().squeeze()
print(f"Result: y = {layer.bias.item():.4f} + {w[0]:.4f} x + {w[1]:.4f} x^2 + {w[2]:.4f} x^3")

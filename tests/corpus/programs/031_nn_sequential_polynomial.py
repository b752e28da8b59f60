# gradcli corpus 031: a polynomial fit with nn.Sequential, nn.MSELoss and a manual parameter update
# Source: written for the gradcli corpus, modelled on "PyTorch: nn" of Learning PyTorch with Examples
#   (pytorch/tutorials beginner_source/examples_nn/polynomial_nn.py, BSD-3-Clause): same structure, own data,
#   sizes and initial values; not a copy.
# License: MIT (gradcli's). Edits: none.
import math
import torch

x = torch.linspace(-math.pi, math.pi, 100)
y = torch.sin(x)

p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
print(xx.shape)

model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1),
)
torch.nn.init.constant_(model[0].weight, 0.1)
torch.nn.init.zeros_(model[0].bias)

loss_fn = torch.nn.MSELoss(reduction="sum")
learning_rate = 1e-5
for t in range(300):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, f"{loss.item():.3f}")
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad

linear_layer = model[0]
print(f"Result: y = {linear_layer.bias.item():.4f} + {linear_layer.weight[:, 0].item():.4f} x + "
      f"{linear_layer.weight[:, 1].item():.4f} x^2 + {linear_layer.weight[:, 2].item():.4f} x^3")

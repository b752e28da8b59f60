# gradcli corpus 033: a custom nn.Module with nn.Parameter attributes, a string() method and SGD
# Source: written for the gradcli corpus, modelled on "PyTorch: Custom nn Modules" of Learning PyTorch with
#   Examples (pytorch/tutorials beginner_source/examples_nn/polynomial_module.py, BSD-3-Clause): same structure,
#   own data and fixed initial values; not a copy.
# License: MIT (gradcli's). Edits: none.
import math

import torch


class Polynomial3(torch.nn.Module):
    def __init__(self):
        """Four scalar parameters, registered as module attributes."""
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.0))
        self.b = torch.nn.Parameter(torch.tensor(0.5))
        self.c = torch.nn.Parameter(torch.tensor(0.0))
        self.d = torch.nn.Parameter(torch.tensor(-0.1))

    def forward(self, x):
        return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

    def string(self):
        return f"y = {self.a.item():.4f} + {self.b.item():.4f} x + {self.c.item():.4f} x^2 + {self.d.item():.4f} x^3"


x = torch.linspace(-math.pi, math.pi, 100)
y = torch.sin(x) + 0.1 * x ** 2

model = Polynomial3()
print(len(list(model.parameters())), "parameters")

criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
for t in range(400):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 100 == 99:
        print(t, f"{loss.item():.4f}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"Result: {model.string()}")

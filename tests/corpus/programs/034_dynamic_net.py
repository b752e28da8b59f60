# gradcli corpus 034: a module whose forward pass reuses a parameter a varying number of times
# Source: written for the gradcli corpus, modelled on "PyTorch: Control Flow + Weight Sharing" of Learning
#   PyTorch with Examples (pytorch/tutorials beginner_source/examples_nn/dynamic_net.py, BSD-3-Clause); the
#   number of repeats follows the step number instead of random.randint. Not a copy.
# License: MIT (gradcli's). Edits: none.
import math

import torch


class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.1))
        self.b = torch.nn.Parameter(torch.tensor(0.8))
        self.c = torch.nn.Parameter(torch.tensor(0.0))
        self.d = torch.nn.Parameter(torch.tensor(-0.1))
        self.e = torch.nn.Parameter(torch.tensor(0.01))

    def forward(self, x, extra_terms):
        """a + b x + c x^2 + d x^3, then e x^4, e x^5, ... for extra_terms more powers (weight sharing)."""
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, 4 + extra_terms):
            y = y + self.e * x ** exp
        return y

    def string(self):
        return (f"y = {self.a.item():.4f} + {self.b.item():.4f} x + {self.c.item():.4f} x^2 + "
                f"{self.d.item():.4f} x^3 + {self.e.item():.4f} x^4 ? + {self.e.item():.4f} x^5 ?")


x = torch.linspace(-1.5, 1.5, 60)
y = torch.sin(x)

model = DynamicNet()
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
for t in range(300):
    y_pred = model(x, extra_terms=t % 3)
    loss = criterion(y_pred, y)
    if t % 60 == 59:
        print(t, f"{loss.item():.5f}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"Result: {model.string()}")

# gradcli corpus 037: a small MLP classifier with nn.CrossEntropyLoss, Adam and model.apply(init_weights)
# Source: written for the gradcli corpus, modelled on "Optimizing Model Parameters" and "Build the Neural
#   Network" of PyTorch's basics tutorials (pytorch/tutorials beginner_source/basics/optimization_tutorial.py
#   and buildmodel_tutorial.py, BSD-3-Clause), on toy data instead of FashionMNIST. Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
from torch import nn


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(2, 8),
            nn.ReLU(),
            nn.Linear(8, 3),
        )

    def forward(self, x):
        logits = self.linear_relu_stack(x)
        return logits


def init_weights(m):
    if isinstance(m, nn.Linear):
        with torch.no_grad():
            n = m.weight.numel()
            m.weight.copy_(torch.linspace(-0.5, 0.5, n).reshape(m.weight.shape))
            m.bias.fill_(0.01)


X = torch.tensor([[0.0, 0.0], [0.1, 0.2], [1.0, 1.0], [0.9, 1.1], [-1.0, 1.0], [-0.8, 0.9]])
labels = torch.tensor([0, 0, 1, 1, 2, 2])

model = NeuralNetwork()
model.apply(init_weights)
print(model)

loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)

for epoch in range(60):
    model.train()
    pred = model(X)
    loss = loss_fn(pred, labels)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if epoch % 20 == 19:
        correct = (pred.argmax(1) == labels).type(torch.float).sum().item()
        print(f"loss: {loss.item():>7f}  accuracy: {100 * correct / len(labels):>0.1f}%")

model.eval()
with torch.no_grad():
    probs = nn.Softmax(dim=1)(model(torch.tensor([[0.05, 0.1], [-0.9, 1.0]])))
print(probs.argmax(1))

# gradcli corpus 036: logistic regression as an nn.Module with BCELoss, SGD and an accuracy count
# Source: written for the gradcli corpus, modelled on the logistic regression notebooks of PyTorch courses
#   (e.g. the "Logistic regression" chapter of Deep Learning with PyTorch courses). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
from torch import nn


class LogisticRegression(nn.Module):
    def __init__(self, n_features):
        super(LogisticRegression, self).__init__()
        self.linear = nn.Linear(n_features, 1)

    def forward(self, x):
        return torch.sigmoid(self.linear(x))


X = torch.tensor([[0.5, 1.0], [1.5, 2.0], [3.0, 0.5], [2.5, 3.5], [0.2, 0.4], [3.5, 2.5]])
y = torch.tensor([[0.0], [0.0], [1.0], [1.0], [0.0], [1.0]])

model = LogisticRegression(2)
with torch.no_grad():
    model.linear.weight.copy_(torch.tensor([[0.1, -0.1]]))
    model.linear.bias.zero_()

criterion = nn.BCELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

for epoch in range(100):
    y_pred = model(X)
    loss = criterion(y_pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if (epoch + 1) % 25 == 0:
        print(f"epoch: {epoch + 1}, loss = {loss.item():.4f}")

with torch.no_grad():
    predicted = model(X).round()
    acc = predicted.eq(y).sum() / float(y.shape[0])
    print(f"accuracy: {acc:.4f}")
    print(predicted.squeeze())

# gradcli corpus 006: linear regression with hand-written gradient descent on autograd leaves
# Source: written for the gradcli corpus, modelled on the linear-regression-from-scratch notebooks of
#   deep learning courses (e.g. d2l-ai/d2l-en chapter_linear-regression/linear-regression-scratch.md,
#   Dive into Deep Learning, CC BY-SA 4.0 / MIT-0 code). Same idiom, not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

# data: y = 2x + 1 with a little fixed noise
X = torch.tensor([[1.0], [2.0], [3.0], [4.0], [5.0]])
Y = torch.tensor([[3.1], [4.9], [7.2], [8.8], [11.1]])

w = torch.zeros(1, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.02


def forward(x):
    return x @ w + b


def mse(pred, target):
    return ((pred - target) ** 2).mean()


for epoch in range(1, 21):
    loss = mse(forward(X), Y)
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad.zero_()
    b.grad.zero_()
    if epoch % 5 == 0:
        print(f"epoch {epoch:3d}  loss {loss.item():.4f}  w {w.item():.4f}  b {b.item():.4f}")

print("prediction for x=6:", forward(torch.tensor([[6.0]])).item())

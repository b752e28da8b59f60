# Gradient descent with in-place updates, the way PyTorch tutorials write it: the weights stay the same leaf
# tensors (w -= lr * w.grad under no_grad), and their gradients are zeroed in place between steps.
import torch

torch.manual_seed(0)
x = torch.tensor([[1., 2.], [3., 4.], [5., 6.]])
target = torch.tensor([[1.], [2.], [3.]])
w = torch.tensor([[0.1], [-0.2]], requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.01
for step in range(5):
    pred = x @ w + b
    loss = ((pred - target) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad.zero_()
    b.grad.zero_()
    print(step, loss.item() > 0, loss)
print(w, b, w.is_leaf, w.grad)

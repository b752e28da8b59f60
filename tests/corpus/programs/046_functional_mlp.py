# gradcli corpus 046: an MLP written with torch.nn.functional on a list of parameter tensors, with L2
#   regularization and a manual SGD step
# Source: written for the gradcli corpus, modelled on "multilayer perceptrons from scratch" chapters
#   (e.g. d2l-ai/d2l-en chapter_multilayer-perceptrons/mlp-implementation.md). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
import torch.nn.functional as F

sizes = [3, 4, 2]
params = []
for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
    W = torch.linspace(-1, 1, n_in * n_out).reshape(n_out, n_in) * (0.5 + i)
    b = torch.full((n_out,), 0.1 * (i + 1))
    params += [W.requires_grad_(), b.requires_grad_()]


def net(X):
    W1, b1, W2, b2 = params
    H = F.relu(F.linear(X, W1, b1))
    return F.linear(H, W2, b2)


X = torch.tensor([[0.5, -1.0, 2.0], [1.0, 1.0, 1.0], [-0.5, 0.0, 0.25]])
y = torch.tensor([1, 0, 1])
lr, wd = 0.1, 1e-3

for epoch in range(5):
    logits = net(X)
    loss = F.cross_entropy(logits, y) + wd * sum((p ** 2).sum() for p in params[::2]) / 2
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad.zero_()
    print(f"epoch {epoch + 1}, loss {loss:.6f}")

print([tuple(p.shape) for p in params])
print(net(X).argmax(dim=1))

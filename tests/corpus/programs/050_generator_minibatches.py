# gradcli corpus 050: a minibatch generator (yield) feeding a training loop with nn.Linear and SGD
# Source: written for the gradcli corpus, modelled on the data_iter generator of "Linear regression from
#   scratch" chapters (e.g. d2l-ai/d2l-en chapter_linear-regression/linear-regression-scratch.md), without
#   shuffling. Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
from torch import nn


def data_iter(batch_size, features, labels):
    num_examples = len(features)
    for i in range(0, num_examples, batch_size):
        j = slice(i, min(i + batch_size, num_examples))
        yield features[j], labels[j]


true_w = torch.tensor([2.0, -3.4])
true_b = 4.2
features = torch.tensor([[0.1 * i, 0.05 * (i % 7) - 0.2] for i in range(20)])
labels = (features @ true_w + true_b).reshape(-1, 1)

net = nn.Sequential(nn.Linear(2, 1))
net[0].weight.data.fill_(0.0)
net[0].bias.data.fill_(0.0)
loss = nn.MSELoss()
trainer = torch.optim.SGD(net.parameters(), lr=0.05)

for epoch in range(3):
    for X, y in data_iter(6, features, labels):
        l = loss(net(X), y)
        trainer.zero_grad()
        l.backward()
        trainer.step()
    l = loss(net(features), labels)
    print(f'epoch {epoch + 1}, loss {l:f}')

w = net[0].weight.data
print('error in estimating w:', true_w - w.reshape(true_w.shape))
b = net[0].bias.data
print('error in estimating b:', true_b - b)

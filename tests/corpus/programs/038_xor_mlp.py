# gradcli corpus 038: learning XOR with nn.Sequential, Tanh, Sigmoid, BCELoss and SGD with momentum
# Source: written for the gradcli corpus, modelled on the XOR examples of PyTorch blog posts and course
#   notebooks. Not a copy; fixed initial weights instead of random ones.
# License: MIT (gradcli's). Edits: none.
import torch
import torch.nn as nn

X = torch.tensor([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
Y = torch.tensor([[0.], [1.], [1.], [0.]])

model = nn.Sequential(
    nn.Linear(2, 4),
    nn.Tanh(),
    nn.Linear(4, 1),
    nn.Sigmoid(),
)
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[1.0, -1.0], [-1.0, 1.0], [0.5, 0.5], [-0.5, -0.3]]))
    model[0].bias.copy_(torch.tensor([0.0, 0.0, -0.5, 0.2]))
    model[2].weight.copy_(torch.tensor([[1.0, 1.0, -1.0, 0.5]]))
    model[2].bias.fill_(0.0)

loss_fn = nn.BCELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)

for step in range(200):
    optimizer.zero_grad()
    loss = loss_fn(model(X), Y)
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        print("step", step, "loss", round(loss.item(), 4))

with torch.no_grad():
    out = model(X)
for inp, o in zip(X.tolist(), out.squeeze(1).tolist()):
    print(inp, "->", round(o, 3))

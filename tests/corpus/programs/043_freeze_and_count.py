# gradcli corpus 043: freezing layers with requires_grad_(False), counting parameters, optimizing only
#   the trainable ones
# Source: written for the gradcli corpus, modelled on the fine-tuning idiom of "Finetuning Torchvision Models"
#   (pytorch/tutorials beginner_source/finetuning_torchvision_models_tutorial.py, BSD-3-Clause) and course
#   notebooks. Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
import torch.nn as nn

model = nn.Sequential(
    nn.Linear(4, 3),
    nn.ReLU(),
    nn.Linear(3, 2),
)
for i, p in enumerate(model.parameters()):
    with torch.no_grad():
        p.copy_(torch.arange(p.numel(), dtype=torch.float32).reshape(p.shape) * 0.1 - 0.2 * i)

total = sum(p.numel() for p in model.parameters())
print("total parameters:", total)

for param in model[0].parameters():
    param.requires_grad_(False)

trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
print("trainable parameters:", trainable)
for name, param in model.named_parameters():
    print(f"{name:10s} {str(tuple(param.shape)):8s} requires_grad={param.requires_grad}")

optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.1)
x = torch.tensor([[1.0, 0.0, -1.0, 2.0]])
target = torch.tensor([[1.0, -1.0]])
for _ in range(3):
    optimizer.zero_grad()
    loss = ((model(x) - target) ** 2).mean()
    loss.backward()
    optimizer.step()
    print(round(loss.item(), 5))

print(model[0].weight.grad is None, model[2].weight.grad is not None)
print(model[2].bias)

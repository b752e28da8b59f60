# gradcli corpus 047: minimizing the Rosenbrock function with torch.optim.Adam
# Source: written for the gradcli corpus, modelled on the optimizer comparison notebooks that run
#   torch.optim on Rosenbrock's function (e.g. jettify/pytorch-optimizer examples/viz_optimizers.py,
#   Apache-2.0). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch


def rosenbrock(tensor):
    x, y = tensor
    return (1 - x) ** 2 + 100 * (y - x ** 2) ** 2


xy = torch.tensor([-1.5, 2.0], requires_grad=True)
optimizer = torch.optim.Adam([xy], lr=0.05)

history = []
for step in range(1, 501):
    optimizer.zero_grad()
    f = rosenbrock(xy)
    f.backward()
    optimizer.step()
    if step % 100 == 0:
        history.append((step, f.item()))
        print(f"step {step:4d}: f = {f.item():.5f}, x = {xy[0].item():.4f}, y = {xy[1].item():.4f}")

best_step, best_f = min(history, key=lambda item: item[1])
print("best:", best_step, round(best_f, 4))

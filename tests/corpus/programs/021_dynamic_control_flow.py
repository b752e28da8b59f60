# gradcli corpus 021: gradients through data-dependent branches and loops
# Source: written for the gradcli corpus, modelled on the "dynamic graphs" argument of PyTorch's autograd
#   tutorials (pytorch/tutorials beginner_source/introyt/autogradyt_tutorial.py, BSD-3-Clause). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch


def shrink(x, max_steps=10):
    """Apply a branchy map to a scalar tensor, recording a graph as it goes."""
    path = []
    for _ in range(max_steps):
        if x > 1:
            x = x / 2
            path.append("half")
        elif x < 0.5:
            x = x * 3 + 0.25
            path.append("triple")
        else:
            break
    return x, path


for start in [7.0, 0.1, 0.75]:
    x = torch.tensor(start, requires_grad=True)
    y, path = shrink(x)
    y.backward()
    print(f"x={start}: y={y.item():.4f} via {'/'.join(path) or 'nothing'}, dy/dx={x.grad.item()}")

# gradcli corpus 017: walking the autograd graph through grad_fn.next_functions
# Source: written for the gradcli corpus, modelled on the graph-printing helpers of blog posts and of
#   pytorch/tutorials beginner_source/introyt/autogradyt_tutorial.py (BSD-3-Clause), which print
#   grad_fn.next_functions. Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
out = torch.relu(w @ x).sum() * 3


def walk(fn, depth=0):
    if fn is None:
        return
    print("  " * depth + fn.name())
    for next_fn, _ in fn.next_functions:
        walk(next_fn, depth + 1)


walk(out.grad_fn)

leaf_shapes = []
stack = [out.grad_fn]
while stack:
    node = stack.pop()
    if node is None:
        continue
    if hasattr(node, "variable"):
        leaf_shapes.append(tuple(node.variable.shape))
    stack.extend(f for f, _ in node.next_functions)
print(sorted(leaf_shapes))

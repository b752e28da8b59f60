# gradcli corpus 016: register_post_accumulate_grad_hook (an optimizer step inside backward) and
#   Node.register_prehook / Node.register_hook
# Source: written for the gradcli corpus, modelled on "How to save memory by fusing the optimizer step into
#   the backward pass" (pytorch/tutorials intermediate_source/optimizer_step_in_backward_tutorial.py,
#   BSD-3-Clause) and the hooks section of docs/source/notes/autograd.rst. Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

params = [torch.tensor([1.0, -1.0], requires_grad=True), torch.tensor([0.5], requires_grad=True)]
lr = 0.1


def sgd_step(p):
    with torch.no_grad():
        p.add_(p.grad, alpha=-lr)
    p.grad = None


handles = [p.register_post_accumulate_grad_hook(sgd_step) for p in params]

for step in range(3):
    loss = (params[0] ** 2).sum() + (params[1] * 3).sum()
    loss.backward()
    print(step, [p.detach() for p in params], [p.grad for p in params])

for h in handles:
    h.remove()

a = torch.tensor([2.0, 3.0], requires_grad=True)
b = a * a
c = b.sum()


def pre(grad_outputs):
    print("prehook", b.grad_fn.name(), grad_outputs)


def post(grad_inputs, grad_outputs):
    print("hook", grad_inputs, grad_outputs)


b.grad_fn.register_prehook(pre)
b.grad_fn.register_hook(post)
c.backward()
print(a.grad)

"""Tensor and node hooks: register_hook (returning a new gradient or not), on leaves and
non-leaves, outputs of a node with several, under autograd.grad and create_graph; post-accumulate hooks;
grad_fn.register_prehook/register_hook; handles' remove(). Programs print what PyTorch prints."""

from __future__ import annotations


from helpers import python_and_gradcli_stdout

PROGRAM = '''
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
a, b = y.split([1, 2])
log = []
ha = a.register_hook(lambda g: log.append(("a", g.tolist())))
hb = b.register_hook(lambda g: g * 10)
hx = x.register_hook(lambda g: log.append(("x", g.tolist())))
(a.sum() * 3 + (b ** 2).sum()).backward(retain_graph=True)
print(x.grad, log)
ha.remove(); hb.remove(); hx.remove()
x.grad = None
(a.sum() * 3 + (b ** 2).sum()).backward()
print(x.grad, len(log))

w = torch.tensor([0.5, -1.5], requires_grad=True)
h = w.register_hook(lambda g: g + 1)
(gw,) = torch.autograd.grad((w ** 3).sum(), w, create_graph=True)
print(gw)
(ggw,) = torch.autograd.grad(gw.sum(), w)
print(ggw)
h.remove()

p = torch.tensor([1.0, -1.0], requires_grad=True)
calls = []
hp = p.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.tolist()))
(p * p).sum().backward()
(p * 3).sum().backward()
print(calls, p.grad)
hp.remove()

c = torch.tensor([2.0, 3.0], requires_grad=True)
d = c.exp()
e = d.sum()
d.grad_fn.register_prehook(lambda go: (go[0] * 2,))
d.grad_fn.register_hook(lambda gi, go: print("node hook", gi, go))
e.backward()
print(c.grad)
try:
    torch.tensor([1.0]).register_hook(lambda g: g)
except RuntimeError as err:
    print(err)
'''


def test_hooks_print_what_pytorch_prints(tmp_path, torch):
    want, got = python_and_gradcli_stdout(tmp_path, "hooks", PROGRAM)
    assert got == want

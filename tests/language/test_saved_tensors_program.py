"""A PyTorch program reading what graph nodes saved (``grad_fn._saved_*``, ``metadata``) and using saved tensors
hooks prints under ``gradcli run`` what it prints with Python and torch (gradcli/ops/core/saved_names.py,
gradcli/ops/core/saved_hooks.py)."""

from __future__ import annotations

from helpers import python_and_gradcli_stdout

PROGRAM = '''\
import torch
from torch.autograd.graph import saved_tensors_hooks

x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
w = torch.tensor([[1.0, -1.0, 0.5], [2.0, 0.0, 1.0]], requires_grad=True)
h = torch.mv(w, x)
print(h.grad_fn._saved_self is w, h.grad_fn._saved_vec is x)
t = h.tanh()
print(t.grad_fn._saved_result)
s = t.sum(0, keepdim=True)
print(s.grad_fn._saved_dim, s.grad_fn._saved_keepdim, s.grad_fn._saved_self_sym_sizes)
q = w.transpose(0, -1)
print(q.grad_fn._saved_dim0, q.grad_fn._saved_dim1)
m = torch.clamp(x, min=-1, max=1.5)
print(m.grad_fn._saved_min, m.grad_fn._saved_max, m.grad_fn._saved_self)
sm = torch.softmax(w, dim=1)
print(sm.grad_fn._saved_dim, sm.grad_fn._saved_result)
t.grad_fn.metadata["label"] = "hidden"
print(t.grad_fn.metadata)
s.backward()
try:
    t.grad_fn._saved_result
except RuntimeError as e:
    print("RuntimeError:", str(e)[:60])
print(s.grad_fn._saved_dim)

events = []


def pack(t):
    events.append(("pack", tuple(t.shape)))
    return t * 2


def unpack(t):
    events.append(("unpack", tuple(t.shape)))
    return t / 2


a = torch.tensor([1.0, -2.0], requires_grad=True)
with saved_tensors_hooks(pack, unpack):
    r = (a * a).exp().sum()
print(events)
r.backward()
print(events[-3:])
print(a.grad)

with torch.autograd.graph.save_on_cpu():
    r = (a.sin() * a).sum()
a.grad = None
r.backward()
print(a.grad)

u = a.pow(3)
u.grad_fn._raw_saved_self.register_hooks(lambda t: t + 1, lambda t: t)
print(u.grad_fn._saved_self)
a.grad = None
u.sum().backward()
print(a.grad)
'''


def test_saved_tensors_program_matches_pytorch(tmp_path, torch):
    want, got = python_and_gradcli_stdout(tmp_path, "saved_tensors", PROGRAM)
    assert got == want

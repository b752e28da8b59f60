"""``torch.func.vmap`` as a transform, through ``gradcli run`` programs compared with PyTorch: the function runs
once on the batch (BatchedTensor and batching rules, gradcli/api/vmap.py), so that ``torch.autograd.grad``
inside vmap (vmap over the cotangents), ``in_dims``/``out_dims`` (ints, None, nested tuples), nested vmaps,
``chunk_size``, randomness modes and PyTorch's refusals (data-dependent shapes, ``.item()``, control flow,
``backward()``) behave as in PyTorch."""

from __future__ import annotations

import pytest

import gradcli as G
from gradcli.api import func as F
from gradcli.api import vmap as V
from gradcli.ops.core import apply as _apply
from helpers import assert_printed_alike, python_and_gradcli_stdout

GRAD_INSIDE = """\
import torch
from torch.func import vmap, grad

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x ** 2
print(vmap(lambda v: torch.autograd.grad(y, x, v, retain_graph=True))(torch.eye(3)))
print(vmap(lambda v: torch.autograd.grad(y, x, v))(torch.eye(3)))
try:
    vmap(lambda v: torch.autograd.grad(y, x, v))(torch.eye(3))
except RuntimeError as e:
    print("RuntimeError", str(e)[:60])
y = x.sin() * x
g, = torch.autograd.grad(y.sum(), x, create_graph=True)
print(vmap(lambda v: torch.autograd.grad(g, x, v, retain_graph=True)[0])(torch.eye(3)))
w = torch.tensor([0.5, -1.0, 2.0])
print(vmap(grad(lambda v: (v.sin() * w).sum()))(torch.eye(3)))
print(vmap(grad(lambda v, u: (v * u).pow(2).sum(), argnums=1), in_dims=(0, None))(torch.eye(3), w))
z = vmap(lambda v: v * x)(torch.eye(3))
print(z.grad_fn.name())
z.sum().backward()
print(x.grad)
try:
    vmap(lambda v: torch.autograd.grad((v * v).sum(), v))(torch.eye(3).requires_grad_())
except RuntimeError as e:
    print("RuntimeError", e)
def calls_backward(v):
    (v * x).sum().backward()
    return v
try:
    vmap(calls_backward)(torch.eye(3))
except RuntimeError as e:
    print("RuntimeError", e)
"""

DIMS_AND_NESTING = """\
import torch
from torch.func import vmap

a = torch.arange(24.0).reshape(2, 3, 4)
b = torch.arange(4.0)
print(vmap(lambda u, v: u @ v, in_dims=(0, None))(a, b))
print(vmap(lambda u, v: u * v, in_dims=(1, None))(a, b))
print(vmap(lambda u: u.sum(0), in_dims=2)(a))
print(vmap(lambda u: (u.sum(), u.t()), out_dims=(0, 1))(a))
print(vmap(lambda u: u.softmax(0), in_dims=1, out_dims=2)(a))
print(vmap(lambda p, q: p["k"] * q[0] + q[1], in_dims=({"k": 0}, (1, None)))({"k": b}, (a[0], b[:3])))
print(vmap(vmap(lambda u, v: torch.dot(u, v)), in_dims=(0, None))(a, a[0]))
print(vmap(vmap(lambda u: u.cumsum(0) / u.max(), in_dims=1), in_dims=0)(a))
print(vmap(lambda u: u.view(2, 2).mT.reshape(-1), chunk_size=2)(a.reshape(6, 4)))
print(vmap(lambda u: u.mean(), chunk_size=1)(a))
print(vmap(lambda u: torch.zeros(2), out_dims=None)(a))
print(vmap(lambda u: b * 2)(a))
try:
    vmap(lambda u: u, out_dims=None)(a)
except ValueError as e:
    print("ValueError", e)
try:
    vmap(lambda u, v: u + v)(a, b)
except ValueError as e:
    print("ValueError", e)
"""

REFUSALS = """\
import torch
from torch.func import vmap

x = torch.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]])
for f in (lambda v: v[v > 0], lambda v: v.sum().item(), lambda v: 1 if v.sum() > 0 else 0,
          lambda v: torch.rand(3), lambda v: v.nonzero(), lambda v: torch.bernoulli(v.sigmoid())):
    try:
        vmap(f)(x)
    except RuntimeError as e:
        print("RuntimeError", e)
torch.manual_seed(0)
same = vmap(lambda v: torch.rand_like(v), randomness="same")(x)
print(same[0] == same[1])
different = vmap(lambda v: torch.rand_like(v), randomness="different")(x)
print(different.shape, bool((different[0] != different[1]).all()))
try:
    vmap(lambda v: torch.bernoulli(v.sigmoid()), randomness="same")(x)
except RuntimeError as e:
    print("RuntimeError", e)
try:
    vmap(lambda v: v, randomness="sometimes")(x)
except RuntimeError as e:
    print("RuntimeError", e)
"""


@pytest.mark.parametrize("name, program", [("grad_inside", GRAD_INSIDE), ("dims", DIMS_AND_NESTING),
                                           ("refusals", REFUSALS)])
def test_vmap_programs_print_what_pytorch_prints(tmp_path, name, program):
    want, got = python_and_gradcli_stdout(tmp_path, f"vmap_{name}", program)
    assert_printed_alike(got, want)


def test_the_function_runs_once_on_the_batch():
    calls = []

    def f(v):
        calls.append(type(v).__name__)
        return (v.sin() * 2).sum(-1).softmax(0) @ v

    x = G.arange(24.0).reshape(4, 2, 3)
    out = F.vmap(f)(x)
    assert calls == ["BatchedTensor"]
    rows = G.stack([f(x[i]) for i in range(4)])
    assert (abs(out - rows) < 1e-6).all()


def test_ops_with_rules_do_not_take_the_fallback(monkeypatch):
    taken = []
    monkeypatch.setattr(V, "fallback", lambda o, args, levels: taken.append(o.name))
    x = G.arange(24.0).reshape(4, 2, 3)
    F.vmap(lambda v: ((v.exp() + 1).log().sum(0).unsqueeze(0).expand(2, 3).transpose(0, 1).reshape(6)
                      .cumsum(0).amax() * v.mean()))(x)
    F.vmap(lambda v: v.mT @ v)(x)
    assert taken == []


def test_nothing_is_installed_outside_vmap():
    F.vmap(lambda v: v * 2)(G.ones(3))
    from gradcli.engine.context import state
    assert state.batching is None and state.batched_autograd is None
    assert state.vmap_levels == () and state.vmap_randomness == ()
    assert G.autograd.grad.__module__ == "gradcli.engine.autograd"

"""torch.autograd.graph.register_multi_grad_hook and allow_mutation_on_saved_tensors,
torch.autograd.enforce_grad_layout_policy and Tensor.grad_dtype (gradcli/engine/hooks.py,
gradcli/api/autograd_graph.py), compared with PyTorch; and the same through `gradcli run`."""

from __future__ import annotations

import pytest

import gradcli as G
from gradcli.api.autograd_graph import allow_mutation_on_saved_tensors, enforce_grad_layout_policy
from gradcli.engine.hooks import register_multi_grad_hook
from helpers import python_and_gradcli_stdout


def _api(m):
    """(register_multi_grad_hook, allow_mutation_on_saved_tensors, enforce_grad_layout_policy) of gradcli or torch."""
    if m is G:
        return register_multi_grad_hook, allow_mutation_on_saved_tensors, enforce_grad_layout_policy
    return (m.autograd.graph.register_multi_grad_hook, m.autograd.graph.allow_mutation_on_saved_tensors,
            m.autograd.enforce_grad_layout_policy)


def test_multi_grad_hook_all_per_backward_pass(torch):
    def run(m):
        hook = _api(m)[0]
        calls = []
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        c, d = a * b, a * b
        handle = hook((a, b, c, d), lambda grads: calls.append([None if g is None else g.tolist() for g in grads]))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        (c + d).sum().backward(retain_graph=True)
        handle.remove()
        c.sum().backward(retain_graph=True)
        return calls

    assert run(G) == run(torch)


def test_multi_grad_hook_any_fires_once_per_pass(torch):
    def run(m):
        hook = _api(m)[0]
        calls = []
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        c = a * b
        hook((a, b), lambda g: calls.append(g.tolist()), mode="any")
        c.sum().backward(retain_graph=True)
        (c * 2).sum().backward()
        return calls

    assert run(G) == run(torch)


def test_multi_grad_hook_mode_error(torch):
    with pytest.raises(ValueError) as want:
        torch.autograd.graph.register_multi_grad_hook((torch.ones(1, requires_grad=True),), print, mode="some")
    with pytest.raises(ValueError) as got:
        register_multi_grad_hook((G.ones(1, requires_grad=True),), print, mode="some")
    assert str(got.value) == str(want.value)


def test_backward_with_inputs_leaves_other_leaves_hooks_alone(torch):
    def run(m):
        seen = []
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0], requires_grad=True)
        a.register_hook(lambda g: seen.append("a"))
        b.register_hook(lambda g: seen.append("b"))
        (a * b).sum().backward(inputs=(a,))
        return seen, b.grad is None

    assert run(G) == run(torch)


def test_allow_mutation_on_saved_tensors(torch):
    def run(m):
        allow = _api(m)[1]
        with allow():
            a = m.ones(2, 3, requires_grad=True)
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.sum().backward()
            c = a * 3
            y = (c * c).sum()
        try:
            y.backward()
        except AssertionError as e:
            err = str(e)
        return a.grad.tolist(), [[round(v, 6) for v in row] for row in b.tolist()], err  # (sin: last bit)

    assert run(G) == run(torch)


def test_allow_mutation_blocks_do_not_nest(torch):
    for m in (torch, G):
        allow = _api(m)[1]
        with pytest.raises(RuntimeError, match="cannot be nested"):
            with allow():
                with allow():
                    pass


def test_enforce_grad_layout_policy(torch):
    def run(m):
        policy = _api(m)[2]
        p = m.empty(2, 3, 4).permute(2, 0, 1).requires_grad_()
        (p * 2).sum().backward()
        enforced = p.grad.stride()
        p.grad = None
        with policy(False):
            (p * 2).sum().backward()
        relaxed = p.grad.stride()
        p.grad = None
        (p * 2).sum().backward()
        return enforced, relaxed, p.grad.stride(), p.grad.tolist() == (2 * m.ones(4, 2, 3)).tolist()

    assert run(G) == run(torch)


def test_grad_dtype(torch):
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        out = [x.grad_dtype]
        x.grad_dtype = m.float64
        out.append(x.grad_dtype)
        (x * 2).sum().backward()
        out.append((x.grad.dtype, x.grad.tolist()))
        x.grad_dtype = None
        out.append(x.grad_dtype)
        y = x * 2
        for act in (lambda: y.grad_dtype, lambda: setattr(y, "grad_dtype", m.float16)):
            try:
                act()
            except RuntimeError as e:
                out.append(str(e))
        return [str(v) for v in out]

    assert run(G) == run(torch)


PROGRAM = """
import torch
a = torch.rand(2, 3, requires_grad=True)
b = torch.rand(2, 3, requires_grad=True)
c = a * b
d = a * b
def fn(grads):
    print([g is not None for g in grads])
h = torch.autograd.graph.register_multi_grad_hook((a, b, c, d), fn)
c.sum().backward(retain_graph=True)
c.sum().backward(inputs=(a,), retain_graph=True)
h.remove()
c.sum().backward()
with torch.autograd.graph.allow_mutation_on_saved_tensors():
    w = torch.ones(2, 3, requires_grad=True)
    v = w.clone()
    out = (v ** 2).sum()
    v.sin_()
    out.sum().backward()
print(w.grad, v)
p = torch.empty(2, 3, 4).permute(2, 0, 1).requires_grad_()
with torch.autograd.enforce_grad_layout_policy(False):
    (p * 2).sum().backward()
print(p.grad.stride())
x = torch.tensor([1.0, 2.0], requires_grad=True)
print(x.grad_dtype)
x.grad_dtype = torch.float16
(x * 3).sum().backward()
print(x.grad_dtype, x.grad)
"""


def test_a_program_prints_what_pytorch_prints(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "autograd_graph", PROGRAM)
    assert got == want

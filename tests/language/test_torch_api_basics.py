"""The small torch API real programs use: torch.all/any (and the methods),
torch.equal, torch.allclose, torch.isclose, torch.device, torch.cuda.is_available(), .to(device), hasattr,
repr. A program through ``gradcli run`` prints what PyTorch prints."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import gradcli as G
from helpers import HANG_TIMEOUT, ROOT
from torch_python import run_python

PROGRAM = """\
import torch
x = torch.tensor([[1., 0.], [2., 3.]])
print(torch.all(x), x.all(), x.any(dim=0), torch.any(x > 2, 1, keepdim=True), torch.all(x.int(), dim=(0, 1)))
print(torch.equal(x, x.clone()), torch.equal(x, x[:1]), x.equal(x + 0))
print(torch.allclose(x, x + 1e-9), torch.allclose(x, x + 1e-3), x.allclose(x))
print(torch.isclose(x, x + torch.tensor([[0., 1e-3], [0., 0.]])))
print(torch.device("cpu"), repr(torch.device("cuda:0")), torch.cuda.is_available())
print(hasattr(x, "grad"), hasattr(x, "nope"), hasattr(torch, "sin"))
print(x.to(torch.device("cpu")), x.to("cpu", torch.float64).dtype)
"""

EXPECTED = """\
tensor(False) tensor(False) tensor([True, True]) tensor([[False],
        [ True]]) tensor(False)
True False True
True False True
tensor([[ True, False],
        [ True,  True]])
cpu device(type='cuda', index=0) False
True False True
tensor([[1., 0.],
        [2., 3.]]) torch.float64
"""


def test_the_program_prints_what_pytorch_prints(tmp_path):
    path = tmp_path / "api.py"
    path.write_text(PROGRAM)
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert got.returncode == 0, got.stderr
    assert got.stdout == EXPECTED
    pytest.importorskip("torch")
    want = run_python(path, timeout=HANG_TIMEOUT)
    assert want.returncode == 0, want.stderr
    assert want.stdout == EXPECTED


def test_isclose_messages():
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        G.isclose(G.tensor([1.0]), G.tensor([1.0], dtype=G.float64))


GRAD_PROGRAM = """\
import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = torch.tensor([3.], requires_grad=True)
out = (x * x).sum()
print(torch.autograd.grad(out, (x, y), retain_graph=True, materialize_grads=True))
try:
    torch.autograd.grad(out, (x, y), retain_graph=True, materialize_grads=True, allow_unused=False)
except ValueError as e:
    print("ValueError:", e)
print(torch.autograd.grad(out, x, retain_graph=True, only_inputs=True))
o = x * x
print(torch.autograd.grad(o, x, torch.eye(2), is_grads_batched=True))
from torch.autograd import Variable
v = Variable(torch.ones(2), requires_grad=True)
print(v, Variable(v * 2).grad_fn, Variable(torch.ones(1)).requires_grad)
"""

GRAD_EXPECTED = """\
(tensor([2., 4.]), tensor([0.]))
ValueError: Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False.
(tensor([2., 4.]),)
(tensor([[2., 0.],
        [0., 4.]]),)
tensor([1., 1.], requires_grad=True) None False
"""


def test_autograd_grad_s_whole_signature_and_variable(tmp_path):
    """torch.autograd.grad's materialize_grads, allow_unused, only_inputs, is_grads_batched, and the legacy
    Variable, as PyTorch prints them."""
    path = tmp_path / "grad_options.py"
    path.write_text(GRAD_PROGRAM)
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert got.returncode == 0, got.stderr
    assert got.stdout == GRAD_EXPECTED
    pytest.importorskip("torch")
    want = run_python(path, timeout=HANG_TIMEOUT)
    assert want.returncode == 0, want.stderr
    assert want.stdout == GRAD_EXPECTED

"""``torch.Tensor``, ``nn.Parameter``, torch.nn modules and optimizers as classes in a program: ``isinstance``
and ``issubclass`` with them (and tuples of them), ``type(x)`` (``type(m) is nn.Linear``), and Tensor's methods
called through the class (``torch.Tensor.sum(x)``). Each program runs through ``gradcli run`` and, where torch is
installed, under Python and PyTorch: both print the same (memory addresses masked)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from helpers import ROOT
from torch_python import run_python


def _mask(text: str) -> str:
    return re.sub(r"0x[0-9a-f]+", "0x?", text)


def run_program(tmp_path, text: str, name: str = "prog.py"):
    """``gradcli run`` of ``text`` in a subprocess: (exit code, stdout, stderr)."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    p = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True,
                       env=env, timeout=120, cwd=tmp_path)
    return p.returncode, p.stdout, p.stderr


def torch_prints(tmp_path, text: str) -> str:
    """What Python with PyTorch prints for the same program (the oracle; skips without torch)."""
    pytest.importorskip("torch")
    path = tmp_path / "oracle.py"
    path.write_text(text, encoding="utf-8")
    p = run_python(path, timeout=300, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    return p.stdout


def check_like_torch(tmp_path, text: str, expected: str | None = None) -> str:
    code, out, err = run_program(tmp_path, text)
    assert code == 0 and err == "", err
    if expected is not None:
        assert _mask(out) == expected
    assert _mask(out) == _mask(torch_prints(tmp_path, text))
    return out


TYPES = """\
import torch
import torch.nn as nn
x = torch.tensor([1., 2.])
m = nn.Linear(2, 3)
print(type(x), type(m), type(m.weight))
print(type(m) is nn.Linear, type(x) is torch.Tensor, type(x) == torch.Tensor, type(m.weight) is nn.Parameter)
print(isinstance(x, torch.Tensor), isinstance(m.weight, torch.Tensor), isinstance(m.weight, nn.Parameter))
print(isinstance(x, nn.Parameter), isinstance(m, nn.Linear), isinstance(m, nn.Module), isinstance(m, nn.ReLU))
print(isinstance(x, (torch.Tensor, float)), isinstance(2.0, (torch.Tensor, float)), isinstance(3, (nn.Module, (str, torch.Tensor))))
print(issubclass(nn.Linear, nn.Module), issubclass(nn.Parameter, torch.Tensor), issubclass(torch.Tensor, nn.Parameter))
print(issubclass(nn.ReLU, (nn.Linear, nn.Module)), issubclass(nn.Module, nn.Linear), issubclass(torch.Tensor, torch.Tensor))
opt = torch.optim.SGD(m.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, 1)
print(type(opt), type(opt) is torch.optim.SGD, isinstance(opt, torch.optim.Optimizer), isinstance(opt, torch.optim.Adam))
print(type(sched), isinstance(sched, torch.optim.lr_scheduler.LRScheduler), issubclass(torch.optim.AdamW, torch.optim.Adam))
print(torch.Tensor, nn.Parameter, nn.Linear, [torch.Tensor, nn.Module], torch.Tensor.__name__, nn.Linear.__name__)
"""

TYPES_EXPECTED = """\
<class 'torch.Tensor'> <class 'torch.nn.modules.linear.Linear'> <class 'torch.nn.parameter.Parameter'>
True True True True
True True True
False True True False
True True False
True True False
True False True
<class 'torch.optim.sgd.SGD'> True True False
<class 'torch.optim.lr_scheduler.StepLR'> True True
<class 'torch.Tensor'> <class 'torch.nn.parameter.Parameter'> <class 'torch.nn.modules.linear.Linear'> \
[<class 'torch.Tensor'>, <class 'torch.nn.modules.module.Module'>] Tensor Linear
"""


def test_isinstance_issubclass_and_type_with_torch_classes(tmp_path):
    """The user's report: ``isinstance(x, torch.Tensor)`` was a TypeError ("arg 2 must be a type"),
    ``type(m) is nn.Linear`` False; now as in PyTorch."""
    check_like_torch(tmp_path, TYPES, TYPES_EXPECTED)


PROGRAM_CLASSES = """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)
    def forward(self, x):
        return self.fc(x)
class Wide(nn.Linear):
    pass
net = Net()
w = Wide(2, 2)
print(isinstance(net, nn.Module), isinstance(net, nn.Linear), isinstance(net, Net), isinstance(net.fc, nn.Linear))
print(issubclass(Net, nn.Module), issubclass(Net, (nn.Linear, Net)), issubclass(Wide, nn.Linear), issubclass(Wide, nn.ReLU))
print(isinstance(w, nn.Linear), isinstance(w, Net), type(net.fc) is nn.Linear, type(net) is Net, type(w) is nn.Linear)
print(type(net), Net, type(net.fc))
print([isinstance(p, nn.Parameter) for p in net.parameters()], all(isinstance(p, torch.Tensor) for p in w.parameters()))
"""


def test_program_classes_deriving_torch_nn(tmp_path):
    out = check_like_torch(tmp_path, PROGRAM_CLASSES)
    assert "<class '__main__.Net'> <class '__main__.Net'> <class 'torch.nn.modules.linear.Linear'>" in out


UNBOUND = """\
import torch
x = torch.tensor([[1., float('nan')], [3., 4.]], requires_grad=True)
print(torch.Tensor.sum(x), torch.Tensor.sum(x, 0), torch.Tensor.sum(x, dim=1, keepdim=True))
print(torch.Tensor.isnan(x), torch.Tensor.isinf(x / 0), torch.Tensor.isfinite(torch.tensor([1, 2])), x.isnan().any())
print(torch.Tensor.pow(torch.tensor([2., 3.]), 2), torch.Tensor.abs(torch.tensor([-1., 2.])))
print(torch.Tensor.size(x), torch.Tensor.dim(x), torch.Tensor.detach(x).requires_grad)
f = torch.Tensor.exp
print(f(torch.zeros(2)), list(map(torch.Tensor.item, [torch.tensor(1.5), torch.tensor(2)])))
print(hasattr(torch.Tensor, "sum"), hasattr(torch.Tensor, "no_such_method"))
"""


def test_tensor_methods_through_the_class(tmp_path):
    """``torch.Tensor.sum(x)``, ``torch.Tensor.isnan(x)``: the method unbound (it was "AttributeError:
    'function' object has no attribute 'sum'"; gradcli had no isnan/isinf/isfinite)."""
    check_like_torch(tmp_path, UNBOUND)


ERRORS = """\
import torch
import torch.nn as nn
for f in (lambda: isinstance(torch.ones(1), 3), lambda: issubclass(3, torch.Tensor),
          lambda: issubclass(nn.Linear, 3), lambda: torch.Tensor.sum(3), lambda: torch.Tensor.sum(),
          lambda: torch.Tensor.no_such_method, lambda: isinstance(torch.ones(1), (torch.Tensor, 2))):
    try:
        f()
    except (TypeError, AttributeError) as e:
        print(type(e).__name__, e)
"""


def test_errors_are_pythons_and_pytorchs(tmp_path):
    check_like_torch(tmp_path, ERRORS)


def test_legacy_constructor_still_works(tmp_path):
    """``torch.Tensor(...)`` is still PyTorch's legacy constructor now that ``torch.Tensor`` is a class."""
    check_like_torch(tmp_path, "import torch\nprint(torch.Tensor([1, 2]), torch.Tensor(2, 3).shape, "
                               "torch.Tensor().shape, torch.Tensor([[1.5]]).dtype)\n")

"""torch.nn and torch.optim load when a program first names them: a program without them runs without
gradcli.api.nn (about 3 ms of every start), and one that uses them sees no difference."""

import subprocess
import sys

import pytest

from helpers import ROOT

_PROBE = """
import sys
from gradcli.frontends.cli import main
sys.argv = ["gradcli", "run", sys.argv[1]]
try:
    main()
except SystemExit:
    pass
kind = lambda name: type(sys.modules[name]).__name__ if name in sys.modules else "absent"
print(kind("gradcli.api.nn"), kind("gradcli.api.optim"))
"""


def _run(tmp_path, program: str) -> list[str]:
    path = tmp_path / "p.py"
    path.write_text(program, encoding="utf-8")
    p = subprocess.run([sys.executable, "-c", _PROBE, str(path)], capture_output=True, text=True, timeout=600,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


@pytest.mark.perf
def test_a_program_without_nn_does_not_load_it(tmp_path):
    out = _run(tmp_path, "x = torch.ones(2, requires_grad=True)\n(x * x).sum().backward()\nprint(x.grad)\n")
    assert out == ["tensor([2., 2.])", "_LazyModule _LazyModule"]


def test_a_program_with_nn_loads_it_when_it_names_it(tmp_path):
    out = _run(tmp_path, "import torch\nfrom torch import nn\nx = torch.ones(2)\n"
                         "print(isinstance(x, nn.Parameter), type(x))\n"
                         "m = nn.Linear(2, 1)\nprint(isinstance(m, nn.Module), type(m))\n"
                         "opt = torch.optim.SGD(m.parameters(), lr=0.1)\nprint(type(opt))\n")
    assert out == ["False <class 'torch.Tensor'>", "True <class 'torch.nn.modules.linear.Linear'>",
                   "<class 'torch.optim.sgd.SGD'>", "module module"]

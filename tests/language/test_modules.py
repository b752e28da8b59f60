"""``import math`` and ``import random``: Python's modules as programs use them; any other
module is an ImportError naming what gradcli provides."""

from __future__ import annotations

import os
import subprocess
import sys

from typer.testing import CliRunner

from gradcli.frontends.cli import app

from helpers import ROOT

PROGRAM = """\
import math
import random
import torch
print(math.sqrt(2), math.pi, math.exp(1.0), math.floor(2.7), math.isclose(0.1 + 0.2, 0.3), math.inf)
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x * math.pi).sum() + math.log(2.0)
y.backward()
print(x.grad)
random.seed(3)
print(random.random(), random.randint(1, 10), random.choice([1, 2, 3]), random.gauss(0.0, 1.0))
"""


def test_math_and_random_print_what_python_prints(tmp_path):
    path = tmp_path / "modules.py"
    path.write_text(PROGRAM)
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines()[0] == "1.4142135623730951 3.141592653589793 2.718281828459045 2 True inf"
    assert got.stdout.splitlines()[1] == "tensor([3.1416, 3.1416])"
    import random

    r = random.Random(3)
    assert got.stdout.splitlines()[2] == f"{r.random()} {r.randint(1, 10)} {r.choice([1, 2, 3])} {r.gauss(0.0, 1.0)}"


def test_random_follows_the_seed_option_and_runs_do_not_share_it():
    args = ["grad", "import random; tensor(random.random())"]
    a = CliRunner().invoke(app, [*args, "--seed", "5", "--json"]).stdout
    b = CliRunner().invoke(app, [*args, "--seed", "5", "--json"]).stdout
    c = CliRunner().invoke(app, [*args, "--seed", "6", "--json"]).stdout
    assert a == b != c


def test_other_modules_are_refused_with_what_gradcli_provides():
    r = CliRunner().invoke(app, ["grad", "import os; 1"])
    assert r.exit_code == 1
    assert ("No module named 'os' (gradcli programs can import torch, torch.nn, torch.nn.functional, torch.nn.init, "
            "torch.nn.utils, torch.optim, torch.optim.lr_scheduler, torch.autograd, torch.autograd.functional, "
            "torch.autograd.forward_ad, torch.utils.data, math, random, numpy, collections and itertools)") in r.stderr
    r = CliRunner().invoke(app, ["grad", "import math; math.__dict__"])
    assert r.exit_code == 2 and "does not allow the attribute" in r.stderr and "Traceback" not in r.stderr

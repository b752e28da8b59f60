"""What examples/README.md says about the tutorials run as programs holds: gradcli's random numbers are
PyTorch's bit for bit (``--seed N`` is ``torch.manual_seed(N)``), run as the README runs the examples."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers import ROOT

TEXT = (ROOT / "examples" / "README.md").read_text(encoding="utf-8")


def test_randn_of_gradcli_run_with_a_seed_is_pytorchs(tmp_path):
    torch = pytest.importorskip("torch")
    program = tmp_path / "rand.py"
    program.write_text("print(torch.randn(2, 3))\nprint(torch.rand(4))\nprint(torch.randint(0, 10, (5,)))\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    p = subprocess.run([sys.executable, "-m", "gradcli", "run", "--seed", "0", str(program)], capture_output=True,
                       text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    torch.manual_seed(0)
    expected = f"{torch.randn(2, 3)}\n{torch.rand(4)}\n{torch.randint(0, 10, (5,))}\n"
    assert p.stdout == expected


def test_examples_readme_says_randn_is_pytorchs():
    flat = " ".join(TEXT.split())
    assert "numpy's, not PyTorch's" not in flat
    assert "gradcli's `rand`/`randn` are PyTorch's, bit for bit" in flat
    # the tests it names exist
    for path in ("tests/language/test_run.py", "tests/engine/test_inplace.py"):
        assert f"`{path}`" in flat and (ROOT / path).exists()

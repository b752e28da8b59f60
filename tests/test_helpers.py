"""The comparison rules of tests/helpers.py that other tests rely on."""

from helpers import printed_alike


def test_printed_alike_rules():
    """Exact text between numbers (up to whitespace), numbers to rtol 1e-4 or one unit of the last printed
    digit, integers and integral floats exactly."""
    assert printed_alike("tensor([1., 2.])\n", "tensor([1., 2.])\n")
    assert printed_alike("0 tensor(0.1235, grad_fn=<AddBackward0>)\n", "0 tensor(0.1234, grad_fn=<AddBackward0>)\n")
    assert printed_alike("13.257688522338867\n", "13.25768756866455\n")  # a float32 .item() at full precision
    assert printed_alike("tensor([-0.0000,  1.0000])\n", "tensor([0.0000, 1.0000])\n")
    assert printed_alike("1.5e-03\n", "1.6e-03\n")  # one unit of the last digit: 1e-4
    assert printed_alike("nan inf\n", "nan inf\n")
    assert not printed_alike("0.1236\n", "0.1234\n")  # two units
    assert not printed_alike("0 loss\n", "1 loss\n")  # integers exactly (a step count)
    assert not printed_alike("tensor(12.)\n", "tensor(13.)\n")
    assert not printed_alike("loss 1.0\n", "cost 1.0\n")
    assert not printed_alike("1.0 2.0\n", "1.0\n")
    assert not printed_alike("nan\n", "1.0\n")
    assert not printed_alike("inf\n", "-inf\n")


PROGRAMS = {  # what `python FILE` does: output, exit status, __name__, argv, sys.path[0], stdin, cwd, environment
    "prints": "import torch\nprint(torch.manual_seed(0) is not None, torch.randn(2))\n",
    "main": "import sys, os\nprint(__name__, sys.argv == [__file__], sys.path[0] == os.path.dirname(__file__))\n",
    "stdin": "import sys\nprint(repr(sys.stdin.read()))\n",
    "cwd_env": "import os\nprint(os.path.basename(os.getcwd()), os.environ.get('GRADCLI_RUNNER_PROBE'))\n",
    "raises": "print('before')\nraise ValueError('boom')\n",
    "exits": "import sys\nprint('out')\nsys.exit(3)\n",
    "exits_text": "import sys\nsys.exit('bye')\n",
    "exits_none": "raise SystemExit\n",
    "stderr": "import sys, warnings\nsys.stderr.write('to stderr\\n')\nwarnings.warn('careful')\nprint(1)\n",
}


def test_run_python_is_python_on_the_file(tmp_path, monkeypatch):
    """torch_python.run_python (a fork of a process that imported torch) gives what a fresh ``python FILE`` gives:
    standard output, the exit status, and standard error's message."""
    import subprocess
    import sys

    import pytest

    from torch_python import run_python

    pytest.importorskip("torch")
    monkeypatch.setenv("GRADCLI_RUNNER_PROBE", "set")
    (tmp_path / "work").mkdir()
    for name, text in PROGRAMS.items():
        path = tmp_path / f"{name}.py"
        path.write_text(text)
        want = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600,
                              cwd=tmp_path / "work", stdin=subprocess.DEVNULL)
        got = run_python(path, timeout=600, cwd=tmp_path / "work")
        assert (got.returncode, got.stdout) == (want.returncode, want.stdout), name
        assert got.stderr.splitlines()[-1:] == want.stderr.splitlines()[-1:], name
    # unseeded draws differ from run to run, as in two fresh interpreters (torch, random, numpy)
    path = tmp_path / "unseeded.py"
    path.write_text("import random, numpy, torch\nprint(torch.rand(2), random.random(), numpy.random.rand())\n")
    outs = [run_python(path, timeout=600).stdout for _ in range(3)]
    assert len(set(outs)) == 3, outs

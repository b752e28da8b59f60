"""``help(obj)`` for NumPy's functions and ``int(text, base)`` in programs, compared with Python running the same
program (the text pydoc writes when standard output is not a terminal), and the refusals of ``help``."""

from __future__ import annotations

import subprocess
import sys

from helpers import HANG_TIMEOUT, python_and_gradcli_stdout

PROGRAM = """
import numpy as np
help(np.sort)
help(np.add)
help(np.float32)
print(int('0b100', base=0), int('ff', 16), int('  -42 '), int('0o17', 0), int(3.9), int('z', 36))
for bad in [lambda: int('12', base=1), lambda: int(5, base=2), lambda: int('0x1g', 0)]:
    try:
        bad()
    except (ValueError, TypeError) as e:
        print(type(e).__name__, e)
"""


def test_help_and_int_base_print_what_python_prints(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "help", PROGRAM)
    assert got == want


def test_help_refuses_what_it_cannot_show_safely(tmp_path):
    for call, text in [("help()", "interactive help"), ("help('os')", "installed modules"),
                       ("help(torch.relu)", "NumPy's documentation only")]:
        path = tmp_path / "h.py"
        path.write_text(f"import torch\n{call}\n")
        proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True,
                              timeout=HANG_TIMEOUT)
        assert proc.returncode == 1, proc.stderr
        assert "NotImplementedError" in proc.stderr and text in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr

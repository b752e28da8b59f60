"""Issue 13's constructs, each checked against real Python on the same program text (print output only)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gradcli.language.build import build_program
from gradcli.language.interpreter import Interpreter


def gradcli_output(text: str) -> str:
    out: list = []
    Interpreter(write=out.append).run(build_program(text))
    return "".join(out)


def python_output(text: str) -> str:
    return subprocess.run([sys.executable, "-c", text], capture_output=True, text=True, check=True).stdout


PROGRAMS = {
    "strings": '"""Module docstring\nover two lines."""\nx = 3.14159\n'
               "s = 'a' 'b' r\"\\n\" f\"{x:.2f}\" '''tri\nple'''\nprint(s)\n"
               "print(f\"{x!r:>10} {'q'!r} {[1, 2][:1]} {x:{'>'}8.3f} {x!s:>9}\")\n"
               "print(rf\"\\t{x:.1f}\")\ndef f():\n    '''doc'''\n    return 1\nprint(f())\n",
    "is_in": "a = None\nb = [1, 2]\nprint(a is None, a is not None, b is b, 1 in b, 3 not in b, 'x' in 'xy')\n"
             "print(1 < 2 in b, not 2 in b)\nfor i, j in [(1, 2)]:\n    print(i in b, j)\n",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_output_as_python(name):
    text = PROGRAMS[name]
    assert gradcli_output(text) == python_output(text)

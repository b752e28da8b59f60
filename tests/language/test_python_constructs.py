"""Python constructs real programs use (list methods, strings, is/in, comprehensions, lambdas and closures,
imports, try/except), each checked against real Python on the same program text (print output only)."""

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
    "star_arguments_where_written": "def f(*a, **k):\n    return a, k\nb = [7, 8]\n"
                                    "print(f(1, *b, 2), f(*b, *b), f(*b, 1, *(3,), x=1, **{'y': 2}))\n"
                                    "print(max(*[3, 9], 4), list(range(*[1, 7], 2)))\n",
    "list_methods": "l = [1, 2]\nl.extend(range(3))\nl.insert(0, 9)\nl.remove(2)\nl.reverse()\n"
                    "print(l, l.count(1))\nl.clear()\nprint(l)\n",
    "strings": '"""Module docstring\nover two lines."""\nx = 3.14159\n'
               "s = 'a' 'b' r\"\\n\" f\"{x:.2f}\" '''tri\nple'''\nprint(s)\n"
               "print(f\"{x!r:>10} {'q'!r} {[1, 2][:1]} {x:{'>'}8.3f} {x!s:>9}\")\n"
               "print(rf\"\\t{x:.1f}\")\ndef f():\n    '''doc'''\n    return 1\nprint(f())\n",
    "is_in": "a = None\nb = [1, 2]\nprint(a is None, a is not None, b is b, 1 in b, 3 not in b, 'x' in 'xy')\n"
             "print(1 < 2 in b, not 2 in b)\nfor i, j in [(1, 2)]:\n    print(i in b, j)\n",
    "dicts_comprehensions": "d = {}\nd['a'] = 1\ne = {'b': 2, **d}\nprint(d, e, {}, {1, 2})\n"
                            "print([x * y for x in range(3) for y in range(x) if y > 0 if x > 1])\n"
                            "print({k: v for k, v in e.items()}, {x % 2 for x in range(5)})\n"
                            "print(sum(x for x in range(4)), list(x for x in 'ab'), sorted(e.values()))\n"
                            "x = 10\nprint([x for x in range(2)], x)\ndef f(n):\n"
                            "    return [i + n for i in range(n)]\nprint(f(3), e.get('z', 0), any([]), all([]))\n",
    "lambda_closures_assert": "sq = lambda v, k=2: v ** k\nprint(sq(3), sq(2, k=3), (lambda: 7)())\n"
                              "def adder(n):\n    def add(v):\n        return v + n\n    return add\n"
                              "print(adder(2)(5), [(lambda i: i * n)(1) for n in range(3)])\n"
                              "def outer():\n    m = 10\n    return [lambda: m + j for j in range(2)]\n"
                              "print([g() for g in outer()])\nassert 1 < 2, 'fine'\nprint('ok')\n",
    "imports": "from torch.autograd import grad, backward as bw\nimport torch.nn.functional as F2, torch\n"
               "from torch import (tensor,\n    zeros)\nprint(tensor(1.0), zeros(1))\n",
    "try_except": 'import torch\ntry:\n    x = torch.ones(2, 3) @ torch.ones(2, 3)\nexcept RuntimeError as e:\n    print("caught:", e)\ntry:\n    raise ValueError("bad value")\nexcept (TypeError, ValueError) as e:\n    print(e)\nelse:\n    print("no")\nfinally:\n    print("finally")\ntry:\n    y = 1\nexcept Exception:\n    print("never")\nelse:\n    print("else", y)\ndef f():\n    try:\n        return 1\n    finally:\n        print("in finally")\nprint(f())\ntry:\n    [1][5]\nexcept IndexError as e:\n    print("index:", e)\ntry:\n    assert False, "msg"\nexcept AssertionError as e:\n    print("assert", e)\n',
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_output_as_python(name):
    text = PROGRAMS[name]
    assert gradcli_output(text) == python_output(text)


def test_assert_raises_assertion_error_with_its_message():
    from gradcli.engine.errors import GradcliError

    with pytest.raises(GradcliError) as e:
        gradcli_output("x = 1\nassert x > 2, f'x is {x}'")
    assert (e.value.type, e.value.message, e.value.line) == ("AssertionError", "x is 1", 2)


@pytest.mark.parametrize("text, message, line, column", [
    ("match x:\n    case 1:\n        pass", "`match` statements are not supported by gradcli", 1, 1),
    ("async def f():\n    pass", "`async` functions are not supported by gradcli", 1, 1),
])
def test_unsupported_statements_say_so_at_the_keyword(text, message, line, column):
    from gradcli.engine.errors import GradcliSyntaxError

    with pytest.raises(GradcliSyntaxError) as e:
        build_program(text)
    assert (e.value.message, e.value.line, e.value.column, e.value.hint) == (message, line, column, None)


def test_no_grammar_names_in_messages():
    from gradcli.engine.errors import GradcliSyntaxError

    with pytest.raises(GradcliSyntaxError) as e:
        build_program("x = 1\nx x")
    assert "augop" not in (e.value.hint or "").lower() and "comp_op" not in (e.value.hint or "").lower()

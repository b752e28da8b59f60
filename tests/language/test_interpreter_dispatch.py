"""The interpreter's statement table: every statement the builder makes has one handler, the generator forms
cover the statements that can contain a ``yield``, and each statement behaves alike in a plain function and in a
generator function, as Python runs it (the same program run by ``gradcli run`` and by Python)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gradcli.language import nodes as n
from gradcli.language.build import build_program
from gradcli.language.generators import GENERATOR_STATEMENTS
from gradcli.language.statements import STATEMENTS

# One of each statement kind of the language (a generator function's forms are in GENERATOR_PROGRAM).
EVERY_STATEMENT = '''
import math
from math import sqrt as root
total = 0
total += 1
a = b = [1, 2]
del b
def f(x, *args, k=1, **kw):
    global total
    total += x
    return x
class C:
    pass
if total > 100:
    pass
elif total > 1:
    total = total
else:
    pass
while total < 10:
    total += 1
    if total == 5:
        continue
    if total == 8:
        break
for i in range(3):
    pass
try:
    raise ValueError("no")
except ValueError as e:
    message = str(e)
else:
    pass
finally:
    pass
assert total == 8, "total"
with torch.no_grad():
    f(1)
def g():
    x = 0
    def h():
        nonlocal x
        x += 1
    h()
    return x
print(total, message, g(), root(4.0))
'''

# Each statement that can contain a yield, in a generator function: yield in if/elif/else, while and for with
# break and continue, try/except/else/finally, yield from, send, and return ending the generator.
GENERATOR_PROGRAM = '''
def gen(n):
    i = 0
    while i < n:
        i += 1
        if i == 2:
            continue
        if i % 3 == 0:
            yield -i
        elif i == 7:
            break
        else:
            got = yield i
            if got is not None:
                yield got * 10
    for j in range(10):
        if j == 1:
            continue
        if j == 3:
            break
        yield j
    try:
        yield 100
        raise ValueError("x")
    except ValueError:
        yield 101
    else:
        yield 102
    finally:
        yield 103
    try:
        yield 104
    except ValueError:
        yield 105
    else:
        yield 106
    yield from [200, 201]
    return 5
    yield 999

out = []
g = gen(9)
for v in g:
    out.append(v)
print(out)
g = gen(9)
print(next(g), g.send(4), next(g), next(g))
print(list(gen(0)))
'''


def _statement_types(body):
    for s in body:
        yield type(s)
        for field in ("body", "orelse", "final"):
            yield from _statement_types(getattr(s, field, None) or ())
        for _, block in getattr(s, "branches", ()):
            yield from _statement_types(block)
        for *_, block in getattr(s, "handlers", ()):
            yield from _statement_types(block)


# The expression nodes (Expressions.eval_expr's, and Starred, which only a Call's arguments hold); every other
# node class of nodes.py is a statement.
EXPRESSION_NODES = {n.Const, n.FString, n.Name, n.Seq, n.Dict, n.Comprehension, n.BinOp, n.UnaryOp, n.Compare,
                    n.BoolOp, n.Ternary, n.Attribute, n.Call, n.Subscript, n.SliceExpr, n.Lambda, n.Starred}


def test_every_statement_kind_has_one_handler():
    node_classes = {cls for cls in vars(n).values()
                    if isinstance(cls, type) and issubclass(cls, n.Node) and cls is not n.Node}
    assert set(STATEMENTS) == node_classes - EXPRESSION_NODES
    program = build_program(EVERY_STATEMENT + GENERATOR_PROGRAM)
    assert set(_statement_types(program.body)) == set(STATEMENTS)  # the programs below run every kind
    # the statements that can contain a yield have a generator form (yield and if run in gen_block)
    assert set(GENERATOR_STATEMENTS) == {n.While, n.For, n.Try, n.With}


def _gradcli_run(tmp_path, text):
    path = tmp_path / "program.py"
    path.write_text(text)
    return subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True,
                          timeout=120)


def _python_run(text):
    # the program under CPython itself: the specification of its statements' semantics
    prelude = "import types\ntorch = types.SimpleNamespace(no_grad=__import__('contextlib').nullcontext)\n"
    return subprocess.run([sys.executable, "-c", prelude + text], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("text", [EVERY_STATEMENT, GENERATOR_PROGRAM], ids=["plain", "generator"])
def test_statements_run_as_python_runs_them(tmp_path, text):
    got = _gradcli_run(tmp_path, text)
    want = _python_run(text)
    assert want.returncode == 0, want.stderr
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout
    assert "Traceback" not in got.stderr


@pytest.mark.parametrize("text, message", [
    ("yield 1\n", "SyntaxError: 'yield' outside function"),
    ("def g():\n    with torch.no_grad():\n        yield 1\nnext(g())\n",
     "SyntaxError: gradcli does not support 'yield' inside a 'with' block"),
    ("def g():\n    for x in 3:\n        yield x\nnext(g())\n", "TypeError: 'int' object is not iterable"),
    ("def g():\n    yield from 3\nnext(g())\n", "TypeError: 'int' object is not iterable"),
    ("for x in 3:\n    pass\n", "TypeError: 'int' object is not iterable"),
    ("break\n", "SyntaxError: 'break' outside loop"),
])
def test_statement_errors_in_both_forms(tmp_path, text, message):
    got = _gradcli_run(tmp_path, text)
    assert got.returncode == 1, (got.returncode, got.stderr)
    assert message in got.stderr
    assert "Traceback" not in got.stderr

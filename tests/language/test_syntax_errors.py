"""Indentation errors say what Python says (CPython's own ``compile()`` is the oracle here): a block header
(``def g(t):``, ``if x:``, ...) followed by a line that is not indented further is ``IndentationError: expected
an indented block after function definition on line 1``, at that line's first character, as a user sees it from
``gradcli run FILE`` and ``gradcli grad``: the position, the source line with a caret, exit code 2, no
traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers import ROOT


def _gradcli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)


def _python(text: str) -> SyntaxError:
    """The SyntaxError (or IndentationError) CPython raises compiling ``text``."""
    try:
        compile(text, "<python>", "exec")
    except SyntaxError as e:
        return e
    raise AssertionError(f"Python compiles {text!r}")


def _report(path, line: int, column: int, text: str, kind: str, message: str) -> str:
    source = text.split("\n")[line - 1]
    return f"{path}:{line}:{column}:\n    {source}\n    {' ' * (column - 1)}^\n{kind}: {message}\n"


MISSING_BLOCKS = [
    "def g(t):\nreturn t\n",
    "def g(t):\ny = 1\n",
    "if x:\ny = 1\n",
    "for i in range(3):\nprint(i)\n",
    "while x:\nx -= 1\n",
    "class A:\nx = 1\n",
    "with no_grad():\ny = x * 2\n",
    "try:\ny = 1\n",
    "try:\n    y = 1\nexcept ValueError:\ny = 2\n",
    "try:\n    y = 1\nfinally:\ny = 2\n",
    "if x:\n    y = 1\nelif z:\ny = 2\n",
    "if x: y = 1\nelse:\ny = 2\n",
    "x = 1\n@dec\ndef g(t):  # a comment: with a colon\n\n    # an indented comment\nreturn t\n",
    "def g(a,\n      b):\nreturn a\n",
    "if a and \\\n   b:\nc = 1\n",
    "def g(t):\n    if t:\n    return t\n",  # the inner block: same indentation as its header
    "def g(t):\n    if t:\nreturn t\n",  # less: the line closes the outer block too
]


@pytest.mark.parametrize("text", MISSING_BLOCKS)
def test_a_header_without_its_indented_block_says_what_python_says(tmp_path, text):
    python = _python(text)
    assert type(python) is IndentationError and python.msg.startswith("expected an indented block after ")
    path = tmp_path / "prog.py"
    path.write_text(text, encoding="utf-8")
    p = _gradcli("run", str(path))
    assert (p.returncode, p.stdout) == (2, "")
    first = text.split("\n")[python.lineno - 1]
    column = len(first) - len(first.lstrip()) + 1  # the line's first character, where CPython's offset points
    assert python.offset in (column, 0)  # (0 where the line also closes an outer block: CPython's DEDENT token)
    assert p.stderr == _report(path, python.lineno, column, text, "IndentationError", python.msg)


@pytest.mark.parametrize("text", ["def g(t):\nreturn t\n", "def g(t):\ny = 1\n", "for i in x:\n\ny = 1"])
def test_grad_says_it_too(text):
    python = _python(text)
    p = _gradcli("grad", text, "-i", "x=[1.]")
    assert (p.returncode, p.stdout) == (2, "") and "Traceback" not in p.stderr
    assert p.stderr == _report("<expr>", python.lineno, 1, text, "IndentationError", python.msg)


def test_other_indentation_errors_are_pythons(tmp_path):
    # Python's type and message, on the line Python names; the caret at the line's first character (CPython's
    # offsets for these point elsewhere: past the line's end, or at column 0).
    for text in ("def g(t):\n    y = 1\n  return y\n",  # unindent does not match any outer indentation level
                 "def g(t):\n    for i in t:\n  return t\n",  # the same, where a block's body is missing too
                 "x = 1\n    y = 2\n",  # unexpected indent
                 "class A:\n    @dec\nx = 1\n"):  # unexpected unindent (a decorator with nothing to decorate)
        python = _python(text)
        path = tmp_path / "prog.py"
        path.write_text(text, encoding="utf-8")
        p = _gradcli("run", str(path))
        assert (p.returncode, p.stdout) == (2, ""), text
        first = text.split("\n")[python.lineno - 1]
        column = len(first) - len(first.lstrip()) + 1
        assert type(python) is IndentationError
        assert p.stderr == _report(path, python.lineno, column, text, "IndentationError", python.msg), text


def test_a_colon_that_opens_no_block_is_not_taken_for_a_header(tmp_path):
    # a ':' inside brackets (a dict, a lambda) or a string, or a one-line block before the next statement
    for text, error in (("d = {1:\n)\n", "SyntaxError: invalid syntax: unexpected ')'"),
                        ("y = f(lambda:\n)\n", "SyntaxError: invalid syntax: unexpected ')'"),
                        ("s = 'if a:'\nt = 1\n", None),
                        ("def g(t): return t\ny = g(1)\n", None)):
        path = tmp_path / "prog.py"
        path.write_text(text, encoding="utf-8")
        p = _gradcli("run", str(path))
        if error is None:
            assert (p.returncode, p.stderr) == (0, ""), text
        else:
            assert p.returncode == 2 and error in p.stderr and "IndentationError" not in p.stderr, text


def test_a_header_at_the_end_of_the_text_is_an_entry_that_goes_on(tmp_path):
    # At the end of the text a header's block may still come (the session waits for it, the batch reader reads
    # on): that stays "unexpected end of input", with what the parser expected.
    from gradcli.frontends.session.core import Session

    path = tmp_path / "prog.py"
    path.write_text("x = 1\ndef g(t):\n", encoding="utf-8")
    p = _gradcli("run", str(path))
    assert p.returncode == 2
    assert p.stderr.endswith("SyntaxError: unexpected end of input\nexpected one of: an indented block\n")
    session = Session(write=lambda *a, **k: None, error=lambda *a, **k: None)
    assert not session.is_complete("def g(t):")
    assert not session.is_complete("def g(t):\n    if t:")
    # a line that closes the blocks before the inner one has its body is an error now, as in Python's REPL
    assert session.is_complete("def g(t):\n    if t:\nreturn t")

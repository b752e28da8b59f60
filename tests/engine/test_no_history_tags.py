"""Comments and docstrings say what the code does and why, never when: no history tags in them.

A history tag is a tracker or planning reference that means nothing to a reader of the code: an issue number,
the name of a development branch, a numbered stop or session of the work, a pull-request number. Every ``.py``
file under ``gradcli/``, ``tests/``, ``scripts/`` and ``benchmarks/`` is read with :mod:`tokenize` (comments)
and :mod:`ast` (string statements: module, class and function docstrings, and attribute docstrings), nothing is
imported or run; each hit is reported as ``file:line: text``. Test files are also checked by name (a test file
is named after what it tests). Documentation of measurements (README.md, benchmarks/README.md,
tests/corpus/FAILURES.md) may cite history and is not scanned; neither are the corpus programs, which are
PyTorch scripts kept as data.

Only unambiguous tags are checked. Words that can also state history ("now", "earlier", "used to") are left to
review: most of their uses describe the code.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("gradcli", "tests", "scripts", "benchmarks")
#: Python files kept as data, not as code: the corpus programs (PyTorch scripts, compared by their output).
DATA = (ROOT / "tests" / "corpus" / "programs",)

#: Words that may follow "branch" in a sentence about code (an if's branch, a branch cut, ...), not a name.
_BRANCH_WORDS = ("of", "and", "or", "for", "to", "in", "on", "at", "by", "is", "are", "was", "that", "which",
                 "where", "when", "with", "without", "taken", "deep", "the", "a", "an", "it", "its", "each", "not",
                 "cut", "cuts", "point", "points", "returns", "runs", "wins", "chosen", "here", "above", "below")
#: The tags (in comments and docstrings). The pattern for branches is case-sensitive on the name: names are lowercase, and a name ends the phrase (followed by ":", ",", ")" or the end).
TAGS = re.compile("|".join((
    r"\b[Ii]ssues? ?#?\d+",  # a tracker number
    r"\b[Bb]ranch(?:es)? (?!(?:" + "|".join(_BRANCH_WORDS) + r")\b)[a-z][a-z0-9_]*(?=[:,)]|\s*$)",  # a branch's name
    r"\b[Ss]tops? \d+\b",  # a numbered stop of the work
    r"\b[Ss]essions? \d+\b",  # a numbered working session
    r"\(#\d+\)",  # a pull request or issue, as GitHub writes it
    r"\bPR ?#?\d+",
)))
#: Test file names that name an issue, a branch or a stop rather than what they test.
NAME_TAGS = re.compile(r"(?i)(?:^|_)(?:issue|branch|stop|pr|session)_?\d+|(?:^|_)issues?(?:_|\.py$)")


def python_files() -> list[Path]:
    """The scanned ``.py`` files, sorted, without the data directories."""
    files = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            if not any(d in path.parents for d in DATA) and "__pycache__" not in path.parts:
                files.append(path)
    return files


def comments_and_docstrings(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and of every line of every string statement (docstrings) of ``source``."""
    lines = source.splitlines()
    found = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.extend((n, lines[n - 1]) for n in range(node.lineno, node.end_lineno + 1))
    return sorted(found)


def history_tags(path: Path) -> list[str]:
    """``file:line: text`` for each comment or docstring line of ``path`` holding a history tag."""
    rel = path.relative_to(ROOT)
    return [f"{rel}:{line}: {text.strip()}" for line, text in comments_and_docstrings(path.read_text(encoding="utf-8"))
            if TAGS.search(text)]


def test_no_history_tags_in_comments_or_docstrings():
    hits = [hit for path in python_files() for hit in history_tags(path)]
    assert not hits, ("comments and docstrings must say what and why, not which issue, branch or stop "
                      f"({len(hits)} hits):\n" + "\n".join(hits))


def test_test_files_are_named_after_what_they_test():
    named = [str(p.relative_to(ROOT)) for p in python_files() if p.is_relative_to(ROOT / "tests")
             and NAME_TAGS.search(p.name)]
    assert not named, "test files named after an issue, branch or stop:\n" + "\n".join(named)


@pytest.mark.parametrize("text", [
    "# torch.nn (issue 18): modules", "# branch nnfunc: torch.pi", "(issue 18, branch conv)", "Issue 13's constructs",
    "# stop 15's figures", "# see (#42)", "# as in session 3", "# branches conv, nnfunc", "# PR #7 added it",
])
def test_the_patterns_find_tags(text):
    assert TAGS.search(text)


@pytest.mark.parametrize("text", [
    "# x feeds the first branch deep down", "PyTorch's O(n^2) branch of cumprod", "the dense-CPU branch of",
    "# both branches taken", "# the principal branch cut of log", "# the interactive session (gradcli repl)",
    "start 0, stop past the end", "# an issue the parser reports",
])
def test_the_patterns_leave_sentences_about_code(text):
    assert not TAGS.search(text)


def test_file_name_patterns():
    assert NAME_TAGS.search("test_ops_issue18.py") and NAME_TAGS.search("test_stop_15.py")
    assert not NAME_TAGS.search("test_session.py") and not NAME_TAGS.search("test_ops_scans_scatters_order.py")

"""The errors gradcli reports to its users.

Every failure that reaches a user is a :class:`GradcliError`: it carries the PyTorch-style type name shown
before the message (``RuntimeError: grad can be implicitly created only for scalar outputs``), an optional
source position, and the process exit code documented in the README:

====  =====================================================================
code  meaning
====  =====================================================================
0     success
1     evaluation error: the program parsed but failed while running
2     bad input: syntax errors, unreadable files, bad options or input specs
====  =====================================================================

Limits (:mod:`gradcli.engine.limits`) raise :class:`LimitError` (exit 1) or, for input that is too large or too
deeply nested, :class:`InputLimitError` (exit 2); both are shown as ``LimitError: ...`` with a hint saying
how to raise the limit.

The engine itself raises plain Python exceptions (``RuntimeError``, ``TypeError``, ...) with PyTorch's texts,
so that ``import gradcli`` behaves like ``import torch``; the language layer wraps them into
:class:`EvalError` with the position of the expression that failed.
"""

from __future__ import annotations

import re

# C0 controls but newline and tab, DEL, C1 controls (ESC among them) and lone surrogates
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def escape_controls(text: str) -> str:
    """``text`` with its control characters (C0 but newline and tab, DEL, C1, ESC) and lone surrogates written
    as Python's ``repr`` writes them (``\\x1b``, ``\\r``, ``\\ud800``), so that text from a program is shown on a
    terminal, never run by it (an ESC sequence could set the window title or move the cursor). Other text is
    returned as it is."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)

EXIT_OK = 0
EXIT_EVAL = 1
EXIT_INPUT = 2
CARET_WIDTH = 100  # longest source excerpt shown above a caret


class GradcliError(Exception):
    """Base class of the errors shown to users.

    Attributes:
        message: the text after ``type:``.
        type: the name shown before the message (``"RuntimeError"``, ``"SyntaxError"``, ...).
        line, column: 1-based position in ``source``, or None when the error has no position.
        source: the text the position refers to (a program, an input spec), or None.
        filename: where ``source`` came from (``"<expr>"``, ``"-i x"``, a path), or None.
        hint: an optional extra line (``"expected one of: ..."``).
        exit_code: the process exit status for this error.
        code: what failed as a stable identifier, for hints chosen without reading the message
            (``"undefined_name"``: a name the program reads is not defined), or None.
        subject: what ``code`` is about (the undefined name), or None.
    """

    exit_code = EXIT_EVAL
    default_type = "Error"
    code: str | None = None
    subject: str | None = None

    def __init__(self, message: str, *, type: str | None = None, line: int | None = None,
                 column: int | None = None, source: str | None = None, filename: str | None = None,
                 hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.type = type or self.default_type
        self.line = line
        self.column = column
        self.source = source
        self.filename = filename
        self.hint = hint

    def with_position(self, *, line: int | None, column: int | None, source: str | None,
                      filename: str | None) -> "GradcliError":
        """Fill in the position if it is not set yet; returns self."""
        if self.line is None:
            self.line, self.column = line, column
            self.source, self.filename = source, filename
        return self

    def caret_lines(self) -> list[str]:
        """The offending source line and a caret under the column, or [] without a position. A line longer
        than :data:`CARET_WIDTH` is cut to a window around the column, with ``...`` where text is left out."""
        if self.source is None or self.line is None:
            return []
        lines = self.source.splitlines() or [""]
        if not 1 <= self.line <= len(lines):
            return []
        text = lines[self.line - 1].expandtabs(1)
        col = max(1, self.column or 1)
        if len(text) > CARET_WIDTH:
            start = max(0, min(col - 1 - CARET_WIDTH // 2, len(text) - CARET_WIDTH))
            window = text[start:start + CARET_WIDTH]
            prefix = "..." if start > 0 else ""
            suffix = "..." if start + CARET_WIDTH < len(text) else ""
            text, col = prefix + window + suffix, col - start + len(prefix)
        return ["    " + text, "    " + " " * (col - 1) + "^"]

    def format(self) -> str:
        """The full multi-line report: location, source line with caret, ``type: message``, hint."""
        out = []
        if self.line is not None:
            where = self.filename or "<input>"
            out.append(f"{where}:{self.line}:{self.column or 1}:")
        out.extend(self.caret_lines())
        out.append(f"{self.type}: {self.message}")
        if self.hint:
            out.append(self.hint)
        return escape_controls("\n".join(out))  # a program's text, shown and never run by the terminal

    def to_dict(self) -> dict:
        """The error as JSON-ready data: type, message, line, column."""
        return {"type": self.type, "message": self.message, "line": self.line, "column": self.column}


class InputError(GradcliError):
    """Bad input: an unreadable file, a malformed input spec or option. Exit code 2."""

    exit_code = EXIT_INPUT
    default_type = "InputError"


class GradcliSyntaxError(InputError):
    """A program or spec that does not parse. Exit code 2; carries line, column and what was expected."""

    default_type = "SyntaxError"


class EvalError(GradcliError):
    """An error while running a program (PyTorch's RuntimeError, TypeError, ...). Exit code 1."""

    exit_code = EXIT_EVAL
    default_type = "RuntimeError"

    @classmethod
    def from_exception(cls, exc: BaseException) -> "EvalError":
        """Wrap an engine exception, keeping its Python type name as the shown type (and a NameError's ``name``
        as the ``subject`` of code ``"undefined_name"``)."""
        message = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], str) else str(exc)
        err = cls(message, type=type(exc).__name__)
        if isinstance(exc, NameError) and getattr(exc, "name", None):
            err.code, err.subject = "undefined_name", exc.name
        return err


class LimitError(EvalError):
    """A resource limit was reached while running (exit code 1): tensor elements, steps, graph nodes, ...
    ``limit`` names the limit (see :mod:`gradcli.engine.limits`)."""

    default_type = "LimitError"
    limit = ""


class InputLimitError(InputError):
    """A resource limit was reached while reading input (exit code 2): program length, nesting depth, file
    size. ``limit`` names the limit."""

    default_type = "LimitError"
    limit = ""


class Unbatchable(Exception):
    """Raised inside ``vmap`` where gradcli cannot batch a step of the function (its values are read as a numpy
    array, or a value computed from unmapped inputs alone is written into an unbatched tensor); ``vmap`` then
    runs the function once per example (gradcli.api.func), which gives PyTorch's results for such functions."""

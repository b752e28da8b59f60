"""What ``gradcli run`` does: run a program from top to bottom, as ``python`` runs a script.

``print`` writes to standard output what PyTorch prints, warnings go to standard error in Python's format, and
a failing top-level statement is reported with its position (``file:line:col``, the line and a caret,
PyTorch's ``Type: message``). With ``keep_going`` the run reports the error and goes on with the next top-level
statement, like a notebook whose next cell is run after one fails. With ``notebook`` the value of the last
expression of each cell is shown as Jupyter shows ``Out[n]`` (:func:`gradcli.engine.printing.format_display`); cells
begin at marker lines, in the formats of ``jupyter nbconvert --to script`` (``# In[3]:``) and of jupytext,
VS Code and Spyder (``# %%``). Nothing here parses command-line options or writes to a stream directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..engine import dtypes
from ..engine.errors import EXIT_EVAL, EXIT_OK, GradcliError
from ..engine.printing import format_display
from ..language import nodes
from ..language.build import build_program
from ..language.interpreter import Interpreter
from ..language.specs import read_stdin, read_text_file
from .stages import run_context, seed_context

# A line that starts a notebook cell: "# In[3]:", "# In [ ]:", "# %%", "# %% [markdown]" ...
CELL_MARKER = re.compile(r"^#\s*(?:%%|In\s*\[[^\]\n]*\]:)")


@dataclass
class RunRequest:
    """A program to run and how.

    Attributes:
        source: the program text.
        filename: shown in error messages and warnings (a path or ``<stdin>``).
        keep_going: after an error, go on with the next top-level statement.
        notebook: show the value of each cell's last expression statement, as Jupyter does.
        max_steps: the most statement executions (None: the interpreter's default, 5,000,000).
        seed: seed of ``rand``/``randn``/``randint`` (numpy's generator, not PyTorch's stream).
        dtype: the default float dtype, "float32" (PyTorch's default) or "float64".
        anomaly: stop at the first op whose backward produces NaN or infinity, pointing at the expression
            that created it (torch.autograd.detect_anomaly, see :mod:`gradcli.engine.anomaly`).
    """
    source: str
    filename: str = "<stdin>"
    keep_going: bool = False
    notebook: bool = False
    max_steps: int | None = None
    seed: int | None = None
    dtype: str = "float32"
    anomaly: bool = False


@dataclass
class RunResult:
    """What a run did: the errors reported (in order) and how many top-level statements ran without one."""
    errors: list = field(default_factory=list)
    statements_ok: int = 0

    @property
    def exit_code(self) -> int:
        """0 when every statement ran, else 1 (an evaluation error, see :mod:`gradcli.engine.errors`)."""
        return EXIT_EVAL if self.errors else EXIT_OK


def read_source(path: str, stdin=None) -> tuple[str, str]:
    """The text of a program file and the name to show for it; ``-`` reads ``stdin`` (default sys.stdin).
    Read within the ``file_bytes`` limit, as UTF-8 (a byte-order mark is allowed, as in Python).

    Raises:
        InputError: the file does not exist, is a directory, cannot be read, is binary or not UTF-8 (with the
            line and column of the first bad byte), or is over the ``file_bytes`` limit (exit code 2).
    """
    if path == "-":
        return read_stdin(stdin), "<stdin>"
    return read_text_file(path), path


def cell_starts(source: str) -> list[int]:
    """The 1-based line numbers of the cell marker lines of ``source`` (see :data:`CELL_MARKER`)."""
    return [k for k, line in enumerate(source.splitlines(), 1) if CELL_MARKER.match(line)]


def displayed_statements(program, source: str) -> set[int]:
    """The ids of the top-level statements whose value a notebook shows: the last statement of each cell,
    when it is an expression statement. Without marker lines the whole program is one cell."""
    import bisect

    starts = cell_starts(source)
    last_of_cell = {}
    for stmt in program.body:
        last_of_cell[bisect.bisect_right(starts, stmt.line)] = stmt
    return {id(s) for s in last_of_cell.values() if isinstance(s, nodes.ExprStmt)}


def run_program(req: RunRequest, *, write, warn, report) -> RunResult:
    """Parse the whole program (syntax errors before anything runs), then run its top-level statements.

    Args:
        req: the program and options.
        write: called with each piece of standard output text (``print``, notebook values).
        warn: called with each warning's text (Python's format: ``file:line: UserWarning: ...``).
        report: called with each :class:`~gradcli.engine.errors.GradcliError` raised by a statement, when it happens.

    Returns:
        A :class:`RunResult`. Without ``keep_going`` the run stops at the first error; with it, every
        top-level statement runs, except after the step limit (``max_steps`` bounds the whole program).

    Raises:
        InputError: a bad ``dtype`` or ``seed`` (exit code 2).
        GradcliSyntaxError: the program does not parse (exit code 2); nothing has run.
    """
    ctx = run_context(req.dtype, anomaly=req.anomaly)  # the run's own context: nothing it sets leaks out
    program = build_program(req.source, req.filename)
    if req.seed is not None:
        seed_context(ctx, req.seed)
    shown = displayed_statements(program, req.source) if req.notebook else set()
    result = RunResult()
    with ctx:
        # made in the run's context: its ``random`` module is seeded from the run's seed (--seed)
        interp = Interpreter(write=write, warn=warn, max_steps=req.max_steps)
        with interp.running(program):
            for stmt in program.body:
                try:
                    value = interp.exec_top(stmt)
                except GradcliError as err:
                    result.errors.append(err)
                    report(err)
                    if req.keep_going and err.type != "StepLimitError":
                        continue
                    break
                result.statements_ok += 1
                if id(stmt) in shown:
                    text = format_display(value, default_dtype=dtypes.get_default_dtype().np)
                    if text is not None:
                        write(text + "\n")
    return result

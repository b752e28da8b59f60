"""The interactive session's logic, without a terminal: one interpreter whose variables persist from entry to
entry, the session commands (``:grad``, ``:graph``, ...) and the parser's verdict on whether an entry is
complete. :mod:`gradcli.session.app` puts prompt_toolkit in front of it; piped input uses it directly.

Each entry is the language of ``gradcli grad``/``run`` (the same parser, :func:`gradcli.language.build.
build_program`, and interpreter); an expression statement's value is shown as Python's REPL shows it
(:func:`gradcli.printing.format_display`: PyTorch's text, nothing for None). Errors are reported as the CLI
reports them (``<stdin>:line:col:``, the line, a caret, ``Type: message``) and the session goes on.
"""

from __future__ import annotations

import io
import re
import sys
from dataclasses import dataclass, field

from .. import dtypes
from ..errors import EXIT_EVAL, EXIT_INPUT, EXIT_OK, GradcliError, GradcliSyntaxError, InputError
from ..reporting import report_error, to_error

FILENAME = "<stdin>"
COMMANDS = {
    ":grad": ":grad EXPR       the grad command's answer for EXPR: output, gradients of the session's leaves, graph",
    ":graph": ":graph NAME [--format F] [-o FILE]  the autograd graph of a tensor: a tree, or dot, mermaid, svg, "
              "png, pdf (the extension of FILE chooses one too)",
    ":jacobian": ":jacobian EXPR   the Jacobian of EXPR with respect to each of the session's leaves",
    ":hessian": ":hessian EXPR    the Hessian of a single-element EXPR with respect to the session's leaves",
    ":inputs": ":inputs          the session's leaves (tensors that require grad) and their gradients",
    ":format": ":format table|json   how :grad answers (now: {format})",
    ":reset": ":reset           forget every variable and line",
    ":save": ":save FILE       write the session's successful lines as a program (gradcli run FILE reproduces it)",
    ":load": ":load FILE       run a program file in the session",
    ":ops": ":ops [TEXT]      the supported ops (names containing TEXT)",
    ":help": ":help            this help",
}
COMPOUND = ("If", "While", "For", "FunctionDef", "Try", "With")


@dataclass
class Outcome:
    """What one entry did: ``code`` is 0, or the exit code of the error it reported (1 evaluation, 2 input)."""
    code: int = EXIT_OK
    exit: bool = False
    errors: list = field(default_factory=list)


class Session:
    """The state of one interactive session.

    Args:
        write: where values, print() output and answers go (a function taking a string).
        error: where error reports and warnings go.
        dtype: the default float dtype ("float32", PyTorch's default, or "float64").
        format: the renderer of ``:grad`` answers ("table" or "json"; ``:format`` changes it).
        color: whether answers are drawn for a terminal (its width; colour unless NO_COLOR).

    Raises:
        InputError: an unknown ``format`` or ``dtype`` (exit code 2).

    Attributes:
        lines: the source of every entry that ran without an error, in order (what ``:save`` writes).
        interp: the interpreter; ``interp.globals`` holds the session's variables.
    """

    def __init__(self, *, write=None, error=None, dtype: str = "float32", format: str = "table",
                 color: bool = False):
        self.write = write or sys.stdout.write
        self.error = error or sys.stderr.write
        self.dtype = dtype
        self.format = "table"
        if format != "table":
            self.cmd_format(format)
        self.color = color
        self.reset()

    # ------------------------------------------------------------------------------------------ state
    def reset(self) -> None:
        """Forget every variable, line and seed: a new interpreter in a new run context."""
        from ..calculator import run_context
        from ..language.interpreter import Interpreter

        self.context = run_context(self.dtype)
        self.interp = Interpreter(write=lambda text: self.write(text), warn=lambda text: self.error(text))
        self.lines: list[str] = []

    def leaves(self) -> list:
        """``(name, tensor)`` of the session's variables that are leaf tensors requiring grad, in definition
        order (a tensor bound to two names is listed once)."""
        from ..tensor import Tensor

        seen, out = set(), []
        for name, value in self.interp.globals.items():
            if isinstance(value, Tensor) and value.is_leaf and value.requires_grad and id(value) not in seen:
                seen.add(id(value))
                out.append((name, value))
        return out

    # ------------------------------------------------------------------------------------ completeness
    def is_complete(self, text: str) -> bool:
        """Whether ``text`` is a whole entry, as the parser decides: False when the parse stops at the end of the
        input (an open bracket, a block header waiting for its body), and, as in Python's REPL, a
        compound statement (``for``, ``def``, ``if`` ...) goes on until an empty line. Any other syntax error is
        complete: running it reports the error."""
        from ..language.build import build_program

        if not text.strip() or text.lstrip().startswith(":"):
            return True
        try:
            program = build_program(text, FILENAME)
        except GradcliSyntaxError as err:
            if err.message.startswith("unexpected end of input"):
                return False
            return not _open_triple_quote(text, err)
        except GradcliError:
            return True
        if program.body and type(program.body[-1]).__name__ in COMPOUND:
            lines = text.split("\n")
            return len(lines) > 1 and not lines[-1].strip()
        return True

    # ------------------------------------------------------------------------------------------ running
    def execute(self, text: str) -> Outcome:
        """Run one entry: a session command (``:name ...``) or program text. Returns what it did; errors are
        reported (not raised). KeyboardInterrupt is left to the caller (the session goes on)."""
        from .. import limits

        stripped = text.strip()
        if not stripped:
            return Outcome()
        with limits.time_guard("the entry"):  # the time limit applies to each entry, not to the session
            return self._execute(text, stripped)

    def _execute(self, text: str, stripped: str) -> Outcome:
        if stripped.startswith(":"):
            try:
                return self.command(stripped)
            except GradcliError as err:
                return self._report(err)
            except Exception as exc:  # a bug or a MemoryError: reported, the session goes on
                return self._report(to_error(exc))
        return self.run_source(text)

    def run_source(self, text: str, filename: str = FILENAME, record: bool = True) -> Outcome:
        """Parse ``text`` (nothing runs if it does not parse), then run its top-level statements one by one,
        showing each expression statement's value; stops at the first error. The statements that ran are kept
        for ``:save`` (with ``record``)."""
        from ..language.build import build_program
        from ..printing import format_display

        try:
            program = build_program(text, filename)
        except GradcliError as err:
            return self._report(err)
        from ..language import nodes as n

        source_lines = text.split("\n")
        done = []
        self.interp.steps = 0  # --max-steps bounds each entry, not the whole session
        with self.context, self.interp.running(program):
            for k, stmt in enumerate(program.body):
                try:
                    value = self.interp.exec_top(stmt)
                except GradcliError as err:
                    self._keep(done, program, source_lines, k, record)
                    return self._report(err)
                except Exception as exc:
                    self._keep(done, program, source_lines, k, record)
                    return self._report(to_error(exc))
                done.append(stmt)
                if isinstance(stmt, n.ExprStmt):
                    shown = format_display(value, default_dtype=dtypes.get_default_dtype().np)
                    if shown is not None:
                        self.write(shown + "\n")
        if record:
            self.lines.append(text.rstrip("\n"))
        return Outcome()

    def _keep(self, done, program, source_lines, failed: int, record: bool) -> None:
        # The statements before the failing one ran: keep their lines for :save (the failing one is left out).
        if record and done:
            stmt = program.body[failed]
            head = source_lines[:stmt.line - 1] + [source_lines[stmt.line - 1][:max(stmt.col - 1, 0)]]
            kept = "\n".join(head).rstrip().rstrip(";").rstrip()
            if kept:
                self.lines.append(kept)

    def _report(self, err: GradcliError) -> Outcome:
        text = err.format()
        self.error(text + "\n")
        return Outcome(code=err.exit_code, errors=[err])

    # ----------------------------------------------------------------------------------------- commands
    def command(self, line: str) -> Outcome:
        """Run a session command (see :data:`COMMANDS`).

        Raises:
            InputError: an unknown command or a bad argument (exit code 2).
            EvalError: the expression of ``:grad`` fails (exit code 1).
        """
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        if name in (":q", ":quit", ":exit"):
            return Outcome(exit=True)
        handler = {":grad": self.cmd_grad, ":graph": self.cmd_graph, ":inputs": self.cmd_inputs,
                   ":jacobian": self.cmd_jacobian, ":hessian": self.cmd_hessian,
                   ":format": self.cmd_format, ":reset": self.cmd_reset, ":save": self.cmd_save,
                   ":load": self.cmd_load, ":ops": self.cmd_ops, ":help": self.cmd_help}.get(name)
        if handler is None:
            import difflib

            close = difflib.get_close_matches(name, list(COMMANDS), n=1)
            hint = f"did you mean {close[0]}?" if close else "type :help for the session commands"
            raise InputError(f"unknown session command {name!r}", type="UsageError", hint=hint)
        return handler(arg) or Outcome()

    def cmd_help(self, arg: str) -> None:
        self.write("Type the language of `gradcli grad`/`run`: variables persist; an expression's value is "
                   "shown.\nA block (for, def, if ...) ends at an empty line. Ctrl-C cancels the line or a "
                   "running computation, Ctrl-D exits.\n")
        for text in COMMANDS.values():
            self.write("  " + text.format(format=self.format) + "\n")

    def cmd_format(self, arg: str) -> None:
        from .. import render

        if not arg:
            self.write(f"format: {self.format}\n")
            return
        choices = [f for f in render.names() if f in ("table", "json", "compact")]
        if arg not in choices:
            raise InputError(f"the session's format must be one of {', '.join(choices)}, got {arg!r}",
                             type="UsageError")
        self.format = arg

    def cmd_reset(self, arg: str) -> None:
        self.reset()
        self.write("session reset: no variables\n")

    def cmd_save(self, arg: str) -> None:
        if not arg:
            raise InputError(":save needs a file name: :save FILE", type="UsageError")
        text = "\n".join(self.lines) + ("\n" if self.lines else "")
        try:
            with open(arg, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:
            raise InputError(f"cannot write {arg}: {exc.strerror}", type="FileError") from None
        count = f"{len(self.lines)} entr{'y' if len(self.lines) == 1 else 'ies'}"
        self.write(f"saved {count} to {arg} (gradcli run {arg} reproduces the session)\n")

    def cmd_load(self, arg: str) -> Outcome:
        from ..language.specs import read_text_file

        if not arg:
            raise InputError(":load needs a file name: :load FILE", type="UsageError")
        text = read_text_file(arg)
        return self.run_source(text, filename=arg)

    def cmd_ops(self, arg: str) -> None:
        from .. import render
        from ..catalog import list_ops

        self._render(lambda stream: render.get("table").ops(list_ops(name=arg or None), stream))

    def cmd_inputs(self, arg: str) -> None:
        from ..printing import format_value

        leaves = self.leaves()
        if not leaves:
            self.write("no leaves: define one with e.g. x = tensor([1., 2.], requires_grad=True)\n")
            return
        default = dtypes.get_default_dtype().np
        with self.context:
            for name, t in leaves:
                self.write(f"{name}: {format_value(t, default_dtype=default)}\n")
                if t._grad is not None:
                    self.write(f"{name}.grad: {format_value(t._grad, default_dtype=default)}\n")

    def cmd_grad(self, arg: str) -> None:
        from .. import render
        from .answers import grad_result

        if not arg:
            raise InputError(":grad needs an expression: :grad EXPR", type="UsageError")
        self.interp.steps = 0
        with self.context:
            result = grad_result(self, arg)
        renderer = render.get(self.format)
        self._render(lambda stream: renderer.grad(result, stream))

    def cmd_jacobian(self, arg: str) -> None:
        self._transform(arg, "jacobian")

    def cmd_hessian(self, arg: str) -> None:
        self._transform(arg, "hessian")

    def _transform(self, arg: str, kind: str) -> None:
        from .. import render
        from .answers import transform_result

        if not arg:
            raise InputError(f":{kind} needs an expression: :{kind} EXPR", type="UsageError")
        self.interp.steps = 0
        with self.context:
            result = transform_result(self, arg, kind)
        renderer = render.get(self.format)
        self._render(lambda stream: renderer.transform(result, stream))

    def cmd_graph(self, arg: str) -> None:
        from .. import render
        from .answers import graph_result

        arg, fmt, path = _graph_options(arg)
        if not arg:
            raise InputError(":graph needs a tensor: :graph NAME (or an expression)", type="UsageError")
        from ..cli_options import graph_renderer
        from ..cli_output import emit, format_for_path

        renderer = graph_renderer(fmt or format_for_path(path) or "tree")
        with self.context:
            result = graph_result(self, arg)
        if result.output.grad_fn is None:
            if result.output.requires_grad:
                self.write(f"{arg} is a leaf that requires grad: it has no grad_fn, so its graph is itself "
                           "(AccumulateGrad, where backward leaves its .grad)\n")
            else:
                self.write(f"{arg} does not require grad: it has no grad_fn and no graph (define a leaf with "
                           "requires_grad=True and compute from it)\n")
            return
        if path is None and not renderer.binary:
            self._render(lambda stream: renderer.graph(result, stream, None))
        elif path is None:
            raise InputError(f"the {renderer.name} format is binary: write it to a file with "
                             f":graph {arg} -o FILE.{renderer.name}", type="UsageError")
        else:
            emit(renderer, path, lambda stream: renderer.graph(result, stream, None))
            self.write(f"wrote {path}\n")

    def _render(self, draw) -> None:
        """Render into a string (rich honours the session's colour and width), then write it."""
        buffer = _Capture(self.color)
        draw(buffer)
        self.write(buffer.getvalue())


_GRAPH_OPTION = re.compile(r"\s+(--format|-f|--output|-o)\s+(\S+)\s*$")


def _graph_options(arg: str) -> tuple[str, str | None, str | None]:
    """``:graph``'s argument split into the expression and its trailing ``--format F`` / ``-o FILE`` (in either
    order, as ``gradcli grad --graph F -o FILE`` takes them)."""
    fmt = path = None
    arg = " " + arg.strip()
    while (m := _GRAPH_OPTION.search(arg)):
        if m.group(1) in ("--format", "-f"):
            fmt = fmt or m.group(2)
        else:
            path = path or m.group(2)
        arg = arg[:m.start()]
    return arg.strip(), fmt, path


_TRIPLE = re.compile(r"[rRuUfFbB]{0,2}(\"\"\"|''')")


def _open_triple_quote(text: str, err) -> bool:
    """Whether the lexer stopped at a triple-quoted string that the text has not closed yet (the string token
    cannot end before the end of the input)."""
    if not err.line or not err.column:
        return False
    lines = text.split("\n")
    if err.line > len(lines):
        return False
    offset = sum(len(line) + 1 for line in lines[:err.line - 1]) + err.column - 1
    # the lexer reads `"""abc` as the empty string `""` and stops at the third quote: look around the error
    for start in range(max(0, offset - 4), offset + 1):
        m = _TRIPLE.match(text, start)
        if m is not None and m.start(1) <= offset < m.end(1) + 1:
            return m.group(1) not in text[m.end():]
    return False


class _Capture(io.StringIO):
    """A text stream for renderers: looks like a terminal when the session has colour."""

    def __init__(self, color: bool):
        super().__init__()
        self._color = color

    def isatty(self) -> bool:
        return self._color


def exit_code(outcome: Outcome) -> int:
    """The exit code of a script run through the session: 0, or the documented code of its error."""
    return outcome.code if outcome.code in (EXIT_OK, EXIT_EVAL, EXIT_INPUT) else EXIT_EVAL

"""The interactive session's logic, without a terminal: one interpreter whose variables persist from entry to
entry, the session commands (``:grad``, ``:graph``, ...) and the parser's verdict on whether an entry is
complete. :mod:`gradcli.frontends.session.app` puts prompt_toolkit in front of it; piped input uses it directly.

Each entry is the language of ``gradcli grad``/``run`` (the same parser, :func:`gradcli.language.build.
build_program`, and interpreter); an expression statement's value is shown as Python's REPL shows it
(:func:`gradcli.engine.printing.format_display`: PyTorch's text, nothing for None). Errors are reported as the CLI
reports them (``<stdin>:line:col:``, the line, a caret, ``Type: message``) and the session goes on.
"""

from __future__ import annotations

import io
import re
import sys
from dataclasses import dataclass, field
from typing import NamedTuple

from ... import render
from ...engine import dtypes, limits
from ...engine.errors import (EXIT_EVAL, EXIT_INPUT, EXIT_OK, GradcliError, GradcliSyntaxError, InputError,
                              escape_controls)
from ...engine.lazy import lazy
from ...engine.printing import format_display, format_value
from ...engine.tensor import Tensor
from ...app.reporting import to_error
from ..cli_options import graph_renderer
from ..cli_output import emit, format_for_path

build = lazy("gradcli.language.build")
grammar = lazy("gradcli.language.grammar")  # END_OF_INPUT, after build has loaded it
calculator = lazy("gradcli.app.calculator")
catalog = lazy("gradcli.app.catalog")
jobs = lazy("gradcli.app.jobs")  # the pipeline: :grad, :graph, :jacobian and :hessian are jobs of it
interpreter = lazy("gradcli.language.interpreter")
nodes = lazy("gradcli.language.nodes")
specs = lazy("gradcli.language.specs")

FILENAME = "<stdin>"

#: the renderers ``:format`` chooses among for ``:grad``'s answers
FORMATS = ("table", "json", "compact")


class Command(NamedTuple):
    """A session command: how it is typed (``usage``), what it does (``help``; ``{format}`` is the session's
    format), the :class:`Session` method that runs it (given the text after the name) and its other names."""
    usage: str
    help: str
    method: str
    aliases: tuple = ()


#: Every session command: ``Session.command`` dispatches from this table and ``:help`` lists it, so that the
#: help cannot miss a command.
COMMANDS = {c.usage.split()[0]: c for c in (
    Command(":grad EXPR", "the grad command's answer for EXPR: output, gradients of the session's leaves, graph",
            "cmd_grad"),
    Command(":diff EXPR", "the gradient of EXPR with respect to the session's leaves as a formula, checked "
            "against autograd at their values (needs SymPy)", "cmd_diff"),
    Command(":graph NAME [--format F] [-o FILE]", "the autograd graph of a tensor: a tree, or dot, mermaid, svg, "
            "png, pdf (the extension of FILE chooses one too)", "cmd_graph"),
    Command(":jacobian EXPR", "the Jacobian of EXPR with respect to each of the session's leaves", "cmd_jacobian"),
    Command(":hessian EXPR", "the Hessian of a single-element EXPR with respect to the session's leaves",
            "cmd_hessian"),
    Command(":inputs", "the session's leaves (tensors that require grad) and their gradients", "cmd_inputs"),
    Command(":format " + "|".join(FORMATS), "how :grad, :jacobian and :hessian answer (now: {format}); "
            ":format alone shows it", "cmd_format"),
    Command(":reset", "forget every variable and line", "cmd_reset"),
    Command(":save FILE", "write the session's successful entries as a notebook script: "
            "gradcli run --notebook FILE shows what the session showed", "cmd_save"),
    Command(":load FILE", "run a program file in the session", "cmd_load"),
    Command(":ops [TEXT]", "the supported ops (names containing TEXT)", "cmd_ops"),
    Command(":help", "this help", "cmd_help"),
    Command(":quit", "end the session, as Ctrl-D does", "cmd_quit", aliases=(":q", ":exit")),
)}

#: every name a session command answers to (its name and its aliases) -> the command
DISPATCH = {name: c for c in COMMANDS.values() for name in (c.usage.split()[0], *c.aliases)}
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
        lines: what ``:save`` writes: for each entry, in order, the ``(source, is an expression)`` of each of its
            top-level statements that ran without an error (:func:`statement_sources`).
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
        self.context = calculator.run_context(self.dtype)
        # a program's text is shown, never run by the terminal (control characters as repr writes them)
        self.interp = interpreter.Interpreter(write=lambda text: self.write(escape_controls(text)),
                                              warn=lambda text: self.error(escape_controls(text)))
        self.lines: list[list[tuple[str, bool]]] = []

    def leaves(self) -> list:
        """``(name, tensor)`` of the session's variables that are leaf tensors requiring grad, in definition
        order (a tensor bound to two names is listed once)."""
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
        if not text.strip() or text.lstrip().startswith(":"):
            return True
        try:
            program = build.build_program(text, FILENAME)
        except GradcliSyntaxError as err:
            if err.code == grammar.END_OF_INPUT:
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
        stripped = text.strip()
        if not stripped:
            return Outcome()
        with limits.time_guard("the entry", hard=True):  # the time limit applies to each entry, not to the session
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
        for ``:save`` (with ``record``; the failing one is left out)."""
        try:
            program = build.build_program(text, filename)
        except GradcliError as err:
            return self._report(err)

        done = []
        self.interp.reset_steps()  # --max-steps bounds each entry, not the whole session
        try:
            with self.context, self.interp.running(program):
                for stmt in program.body:
                    try:
                        value = self.interp.exec_top(stmt)
                    except GradcliError as err:
                        return self._report(err)
                    except Exception as exc:
                        return self._report(to_error(exc))
                    done.append(stmt)
                    if isinstance(stmt, nodes.ExprStmt):
                        shown = format_display(value, default_dtype=dtypes.get_default_dtype().np)
                        if shown is not None:
                            self.write(escape_controls(shown) + "\n")
        finally:
            if record and done:
                self.lines.append(statement_sources(text, program.body, len(done)))
        return Outcome()

    def _report(self, err: GradcliError) -> Outcome:
        text = err.format()
        self.error(text + "\n")
        return Outcome(code=err.exit_code, errors=[err])

    # ----------------------------------------------------------------------------------------- commands
    def command(self, line: str) -> Outcome:
        """Run a session command (see :data:`COMMANDS`, with their aliases in :data:`DISPATCH`).

        Raises:
            InputError: an unknown command or a bad argument (exit code 2).
            EvalError: the expression of ``:grad`` fails (exit code 1).
        """
        name, _, arg = line.partition(" ")
        command = DISPATCH.get(name)
        if command is None:
            import difflib

            close = difflib.get_close_matches(name, list(DISPATCH), n=1)
            hint = f"did you mean {close[0]}?" if close else "type :help for the session commands"
            raise InputError(f"unknown session command {name!r}", type="UsageError", hint=hint)
        return getattr(self, command.method)(arg.strip()) or Outcome()

    def cmd_help(self, arg: str) -> None:
        self.write("Type the language of `gradcli grad`/`run`: variables persist; an expression's value is "
                   "shown.\nA block (for, def, if ...) ends at an empty line. Ctrl-C cancels the line or a "
                   "running computation, Ctrl-D exits.\n")
        width = 17
        for c in COMMANDS.values():
            also = f" (also {', '.join(c.aliases)})" if c.aliases else ""
            usage = c.usage.ljust(width - 1) if len(c.usage) < width else c.usage + " "
            self.write(f"  {usage} {c.help.format(format=self.format)}{also}\n")

    def cmd_quit(self, arg: str) -> Outcome:
        return Outcome(exit=True)

    def cmd_format(self, arg: str) -> None:
        if not arg:
            self.write(f"format: {self.format}\n")
            return
        choices = [f for f in render.names() if f in FORMATS]
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
        text = notebook_script(self.lines, arg)
        try:
            with open(arg, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:
            raise InputError(f"cannot write {arg}: {exc.strerror}", type="FileError") from None
        count = f"{len(self.lines)} entr{'y' if len(self.lines) == 1 else 'ies'}"
        self.write(f"saved {count} to {arg} (gradcli run --notebook {arg} shows what the session showed)\n")

    def cmd_load(self, arg: str) -> Outcome:
        if not arg:
            raise InputError(":load needs a file name: :load FILE", type="UsageError")
        text = specs.read_text_file(arg)
        return self.run_source(text, filename=arg)

    def cmd_ops(self, arg: str) -> None:
        self._render(lambda stream: render.get("table").ops(catalog.list_ops(name=arg or None), stream))

    def cmd_inputs(self, arg: str) -> None:
        leaves = self.leaves()
        if not leaves:
            self.write("no leaves: define one with e.g. x = tensor([1., 2.], requires_grad=True)\n")
            return
        default = dtypes.get_default_dtype().np
        with self.context:
            for name, t in leaves:
                self.write(f"{name}: {format_value(t, default_dtype=default)}\n")
                if t.grad is not None:  # a leaf: reading .grad never warns
                    self.write(f"{name}.grad: {format_value(t.grad, default_dtype=default)}\n")

    def cmd_grad(self, arg: str) -> None:
        if not arg:
            raise InputError(":grad needs an expression: :grad EXPR", type="UsageError")
        self.interp.reset_steps()
        with self.context:
            result = jobs.run(jobs.SessionJob(self, "grad", arg))
        renderer = render.get(self.format)
        self._render(lambda stream: renderer.grad(result, stream))

    def cmd_diff(self, arg: str) -> None:
        if not arg:
            raise InputError(":diff needs an expression: :diff EXPR", type="UsageError")
        self.interp.steps = 0
        with self.context:
            result = jobs.run(jobs.SessionJob(self, "diff", arg))
        renderer = render.get(self.format)
        fields = ("symbolic",) if renderer.name == "json" else ("formula",)
        self._render(lambda stream: renderer.grad(result, stream, fields=fields))

    def cmd_jacobian(self, arg: str) -> None:
        self._transform(arg, "jacobian")

    def cmd_hessian(self, arg: str) -> None:
        self._transform(arg, "hessian")

    def _transform(self, arg: str, kind: str) -> None:
        if not arg:
            raise InputError(f":{kind} needs an expression: :{kind} EXPR", type="UsageError")
        self.interp.reset_steps()
        with self.context:
            result = jobs.run(jobs.SessionJob(self, kind, arg))
        renderer = render.get(self.format)
        self._render(lambda stream: renderer.transform(result, stream))

    def cmd_graph(self, arg: str) -> None:
        arg, fmt, path = _graph_options(arg)
        if not arg:
            raise InputError(":graph needs a tensor: :graph NAME (or an expression)", type="UsageError")

        renderer = graph_renderer(fmt or format_for_path(path) or "tree")
        with self.context:
            result = jobs.run(jobs.SessionJob(self, "graph", arg))
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


def statement_sources(text: str, body: list, count: int) -> list[tuple[str, bool]]:
    """The source of each of the first ``count`` top-level statements of ``body`` (parsed from ``text``), with
    whether it is an expression statement (whose value the session showed). A statement's source runs from
    where it starts to where the next one starts (the first takes the comments before it), without trailing
    whitespace and semicolons, so that ``1 + 1; 2 + 2`` gives two statements; lines of only spaces (the
    prompt's automatic indentation) are left out, but not inside a multi-line string."""
    lines = text.split("\n")
    starts = [0] + [0] * (len(lines))
    for k, line in enumerate(lines):
        starts[k + 1] = starts[k] + len(line) + 1

    def offset(stmt) -> int:
        return starts[stmt.line - 1] + max(stmt.col - 1, 0)

    keep = _string_lines(text)
    out = []
    for k, stmt in enumerate(body[:count]):
        begin = 0 if k == 0 else offset(stmt)
        end = offset(body[k + 1]) if k + 1 < len(body) else len(text)
        first_line = text.count("\n", 0, begin) + 1
        kept = [line for j, line in enumerate(text[begin:end].split("\n"), first_line)
                if line.strip() or j in keep]
        source = "\n".join(kept).rstrip().rstrip(";").rstrip()
        if source:
            out.append((source, isinstance(stmt, nodes.ExprStmt)))
    return out


def _string_lines(text: str) -> set[int]:
    """The 1-based numbers of the lines that a multi-line string literal of ``text`` continues onto (their
    spaces are the string's), by Python's tokenizer (the language's strings are Python's); none if it
    cannot read the text."""
    import tokenize

    lines = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                lines.update(range(tok.start[0] + 1, tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass
    return lines


def notebook_script(entries: list[list[tuple[str, bool]]], name: str) -> str:
    """The text ``:save`` writes: the entries (see :attr:`Session.lines`) as ``# %%`` cells, a cell ending
    after each expression statement and at the end of each entry. ``gradcli run --notebook`` shows a cell's
    last expression, so it shows the values the session showed, in the same order (the session shows every
    expression statement's value; a script run without ``--notebook`` shows none)."""
    out = [f"# A gradcli session: `gradcli run --notebook {name}` shows what the session showed."]
    for statements in entries:
        cell: list[str] = []
        for source, is_expression in statements:
            cell.append(source)
            if is_expression:
                out += ["# %%", *cell]
                cell = []
        if cell:
            out += ["# %%", *cell]
    return "\n".join(out) + "\n"


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

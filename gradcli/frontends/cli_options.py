"""The options the commands share, declared once (typer ``Annotated`` aliases), and what they add up to: a
:class:`CommandOptions`.

``gradcli grad``, ``run`` and ``batch`` take ``--seed``, ``--dtype``, ``--max-steps``, ``--limit``,
``--anomaly`` and ``--debug``; every command that writes a result takes ``--format`` (``--json`` is short for
``--format json``). ``--dtype`` is a choice of :class:`DType`, checked in one place (:func:`dtype_name`) with
gradcli's usage error; ``--format`` is a choice of the registered renderers (:mod:`gradcli.render`), so a
format registered later is accepted without touching the commands.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, List, NamedTuple, Optional

import typer

from .. import render
from ..engine.errors import InputError
from ..app.reporting import debug_enabled

#: Backward calls of one ``gradcli grad --repeat N`` (gradcli.app.calculator.MAX_REPEAT, which checks it again for
#: the library and batch; here so that --help and the option's range need not import the calculator and numpy).
MAX_REPEAT = 10_000

#: ``gradcli batch``'s input formats. ``--input-format`` takes them; ``--format`` takes them too, so that a
#: command line that names the input format with ``--format`` keeps working.
INPUT_FORMATS = ("auto", "text", "jsonl")


class DType(str, Enum):
    """``--dtype``: the default float dtype (PyTorch's default is float32)."""
    float32 = "float32"
    float64 = "float64"


class InputFormat(str, Enum):
    """``gradcli batch --input-format``: auto (by the extension, else by the first line), text or jsonl."""
    auto = "auto"
    text = "text"
    jsonl = "jsonl"


def _lenient_dtype(value):
    # Keep a bad name as it is: dtype_name() reports it with gradcli's message, inside the command's error path.
    # The option is declared as str with the choices in its metavar, not as the Enum: typer 0.28 (pinned for its
    # start-up, see pyproject.toml) hands the command None for an Enum option that has a parser.
    return value.value if isinstance(value, DType) else value


def dtype_name(value) -> str:
    """``--dtype``'s value as a name, "float32" or "float64".

    Raises:
        InputError: anything else (a usage error, exit 2).
    """
    if isinstance(value, DType):
        return value.value
    if value in (DType.float32.value, DType.float64.value):
        return value
    raise InputError(f"--dtype must be float32 or float64, got {value!r}", type="UsageError")


def _format_parser(kind: str, extra: tuple = (), extra_what: str = ""):
    """``--format``'s parser for a command whose result is ``kind`` (see :data:`gradcli.render.KINDS`): the
    registered formats that can show it (read when the command line is parsed, so a format registered later
    counts), and ``extra``."""
    def parse(value: str) -> str:
        if value in render.showing(kind) or value in extra:
            return value
        choices = ", ".join(repr(n) for n in render.showing(kind))
        raise typer.BadParameter(f"{value!r} is not one of {choices}{extra_what}.")
    return parse


def _format_metavar(kind: str, extra: tuple = ()) -> str:
    return "[" + "|".join(render.showing(kind) + extra) + "]"


def format_option(kind: str, help: str = "The output format (default: table).", extra: tuple = (),
                  extra_what: str = ""):
    """The ``--format`` option of a command whose result is ``kind``: its choices (in ``--help`` and when parsed)
    are the formats that can show that result, and ``extra``."""
    return Annotated[Optional[str], typer.Option("--format", metavar=_format_metavar(kind, extra),
                                                 parser=_format_parser(kind, extra, extra_what), help=help)]


_LIMIT_HELP = ("Raise or lower a limit (repeatable): elements, items, int_bits, chars, nesting, steps, call_depth, "
               "graph_nodes, file_bytes, memory, time; 'none' removes it. Also GRADCLI_MAX_<NAME>.")
_SEED_HELP = "torch.manual_seed(N) before the program: rand/randn/randint/randperm/... give PyTorch's numbers."
_DTYPE_HELP = "Default float dtype: float32 (PyTorch's default) or float64."

Check = Annotated[bool, typer.Option("--check", help="Compare the gradients with central finite differences in "
                                                     "float64; exit 1 above tolerance (also where only kinks "
                                                     "differ: it names them).")]
Eps = Annotated[float, typer.Option(metavar="FLOAT", help="--check: finite-difference step.")]
Atol = Annotated[float, typer.Option(metavar="FLOAT", help="--check: absolute tolerance.")]
Rtol = Annotated[float, typer.Option(metavar="FLOAT", help="--check: relative tolerance.")]
CheckMaxEvaluations = Annotated[int, typer.Option(min=2, metavar="N", help="--check: most program runs (two per input "
                                                                            "element, one at the inputs, three more "
                                                                            "per element at a kink).")]
Seed = Annotated[Optional[int], typer.Option(metavar="N", help=_SEED_HELP)]
Dtype = Annotated[str, typer.Option(parser=_lenient_dtype, metavar="[float32|float64]", help=_DTYPE_HELP)]
#: ``gradcli batch``'s --seed, --dtype and --limit: what an entry's own fields do with them.
BatchSeed = Annotated[Optional[int], typer.Option(
    "--seed", metavar="N", help=_SEED_HELP + " The default of every entry (an entry's own 'seed' wins).")]
BatchDtype = Annotated[str, typer.Option(
    "--dtype", parser=_lenient_dtype, metavar="[float32|float64]",
    help=_DTYPE_HELP + " The default of every entry (an entry's own 'dtype' wins).")]
BatchLimit = Annotated[Optional[List[str]], typer.Option("--limit", metavar="NAME=N",
                                                         help=_LIMIT_HELP + " The time limit is per entry.")]
MaxSteps = Annotated[Optional[int], typer.Option(min=1, metavar="N",
                                                 help="Stop a program after this many statement executions "
                                                      "(default 5,000,000; the same as --limit steps=N).")]
Limit = Annotated[Optional[List[str]], typer.Option("--limit", metavar="NAME=N", help=_LIMIT_HELP)]
Anomaly = Annotated[bool, typer.Option("--anomaly", help="Stop at the first op whose backward produces NaN or "
                                                         "infinity and show where the program called it "
                                                         "(torch.autograd.detect_anomaly).")]
Debug = Annotated[bool, typer.Option("--debug", help="Show the internal traceback with errors (for bug reports; "
                                                     "also GRADCLI_DEBUG=1).")]
#: ``--format`` of gradcli grad (every format: a picture format draws the graph), of gradcli ops, and of
#: gradcli jacobian/hessian/jvp/hvp.
Format = format_option("grad")
OpsFormat = format_option("ops")
TransformFormat = format_option("transform")
Json = Annotated[bool, typer.Option("--json", help="The same as --format json.")]
#: ``gradcli batch --format``: an output format, or (kept for compatibility) an input format.
BatchFormat = format_option(
    "batch", help="The output format (default: table). auto, text and jsonl are taken as --input-format.",
    extra=INPUT_FORMATS, extra_what=" (or an input format: 'auto', 'text', 'jsonl', as --input-format)")


def graph_formats() -> tuple:
    """The registered formats that draw the autograd graph (their renderer implements ``graph``)."""
    return tuple(n for n in render.names() if render.draws_graph(n))  # imports no renderer (--help's metavar)


def _graph_parser(value: str) -> str:
    if value in graph_formats():
        return value
    raise typer.BadParameter(f"{value!r} is not one of {', '.join(repr(n) for n in graph_formats())}.")


def graph_renderer(name: str):
    """The renderer of ``--graph NAME``: a registered format that draws graphs.

    Raises:
        InputError: no such format, or one that cannot draw the graph (a usage error, exit 2).
    """
    if name not in graph_formats():
        raise InputError(f"--graph takes a format that draws the graph: {', '.join(graph_formats())}; got "
                         f"{name!r}", type="UsageError")
    return render.get(name)


#: ``gradcli grad --graph FORMAT``: draw the autograd graph in a format that can (dot, svg, png, ...).
GraphFormat = Annotated[Optional[str], typer.Option(
    "--graph", metavar="[" + "|".join(graph_formats()) + "]", parser=_graph_parser,
    help="Draw the autograd graph instead of the tables: DOT text, SVG/PNG/PDF (Graphviz), Mermaid, a tree in "
         "the terminal, or its JSON.")]
#: ``gradcli plot --format``: a registered format, or csv (the plot's values, a format of gradcli plot only).
PlotFormat = format_option(
    "plot", help="The output: table (the default: the plot in the terminal), png, svg, pdf (matplotlib), csv or "
                 "json (the values).", extra=("csv",), extra_what=" (or 'csv')")
#: ``-o FILE``: where the result goes; its extension may choose the format (gradcli.frontends.cli_output).
Output = Annotated[Optional[str], typer.Option(
    "--output", "-o", metavar="FILE", help="Write the result to FILE instead of standard output; without "
                                           "--format/--graph its extension chooses the format (.svg, .png, .pdf, "
                                           ".dot, .mmd, .json).")]


def output_format(format: str | None, json_: bool) -> str:
    """The output format of ``--format`` and ``--json``: ``--json`` means ``--format json``; default ``table``.

    Raises:
        InputError: ``--json`` with another ``--format`` (a usage error, exit 2).
    """
    if json_:
        if format not in (None, "json"):
            raise InputError(f"--json means --format json; it cannot be combined with --format {format}",
                             type="UsageError")
        return "json"
    return format or "table"


class Invocation(NamedTuple):
    """How the command line was started, as the click context's ``obj``. :func:`gradcli.frontends.cli.main` (the console
    script, ``python -m gradcli``) owns the process: it installs the memory and time guards and reports every
    exception. Run any other way (typer's test runner, a program calling the app), gradcli leaves the process
    alone and lets exceptions other than its own errors reach the caller. (A NamedTuple, as
    :class:`CommandOptions`: immutable, and its class is created at every start-up for a seventh of what a
    frozen dataclass's costs.)"""
    owns_process: bool = False


def owns_process(ctx: typer.Context) -> bool:
    """Whether the command runs in the process :func:`gradcli.frontends.cli.main` started (see :class:`Invocation`)."""
    obj = ctx.find_root().obj
    return isinstance(obj, Invocation) and obj.owns_process


class CommandOptions(NamedTuple):
    """What the shared options of one command line add up to, checked (immutable).

    Attributes:
        format: the output format's name (a registered renderer; ``table`` by default).
        seed: seed of rand/randn/randint, or None.
        dtype: the default float dtype, "float32" or "float64".
        max_steps: the statement limit (``--max-steps``; the same as ``--limit steps=N``), or None.
        limits: the ``--limit NAME=N`` texts, in order.
        anomaly: ``--anomaly``.
        debug: ``--debug`` or ``GRADCLI_DEBUG=1``: show internal tracebacks.
        owns_process: the command runs under :func:`gradcli.frontends.cli.main` (see :class:`Invocation`).
    """
    format: str = "table"
    seed: int | None = None
    dtype: str = "float32"
    max_steps: int | None = None
    limits: tuple = ()
    anomaly: bool = False
    debug: bool = False
    owns_process: bool = False

    @classmethod
    def from_cli(cls, ctx: typer.Context, *, format: str | None = None, json_: bool = False, seed=None,
                 dtype=DType.float32, max_steps=None, limit=None, anomaly: bool = False,
                 debug: bool = False) -> "CommandOptions":
        """The options of a command line (typer's values).

        Raises:
            InputError: a bad ``--dtype``, or ``--json`` with another ``--format`` (usage errors, exit 2).
        """
        return cls(format=output_format(format, json_), seed=seed, dtype=dtype_name(dtype), max_steps=max_steps,
                   limits=tuple(limit or ()), anomaly=anomaly, debug=debug_enabled(debug),
                   owns_process=owns_process(ctx))

    @property
    def renderer(self):
        """The :class:`~gradcli.render.Renderer` of :attr:`format`."""
        return render.get(self.format)

    def configure_limits(self) -> None:
        """Apply ``--limit`` (and ``--max-steps``) over the GRADCLI_MAX_* environment variables; in the process
        gradcli owns, install the memory and time guards with the new values.

        Raises:
            InputError: a malformed ``--limit`` (exit 2).
        """
        from ..engine import limits  # (imports numpy: not at start-up, which --help shares)

        values = dict(limits.parse_option(o) for o in self.limits)
        if self.max_steps is not None:
            values["steps"] = self.max_steps
        limits.configure(values)
        if self.owns_process:
            limits.install_process_guards()

"""The ``gradcli`` command (typer): read input, call the core, hand the result to the renderer of ``--format``.

Exit codes: 0 success, 1 evaluation error, 2 bad input (syntax errors, unreadable files, bad options).
Errors go to standard error as ``file:line:col:``, the line with a caret, and ``Type: message``; standard
output carries only results. ``--debug`` (or ``GRADCLI_DEBUG=1``) adds the internal traceback. Every command
reports errors through :func:`reported` (the mapping itself is :mod:`gradcli.app.reporting`); the options the
commands share are declared once in :mod:`gradcli.frontends.cli_options`.
"""

from __future__ import annotations

import copy
import gc
import inspect
import os
import re
import sys
from contextlib import contextmanager
from typing import Annotated, List, Optional

import typer

from .. import render
from .cli_options import (INPUT_FORMATS, MAX_REPEAT, Anomaly, Atol, BatchDtype, BatchFormat, BatchLimit,
                          BatchSeed, Check, CheckMaxEvaluations, CommandOptions,
                          Debug, DType, Dtype, Eps, Format, OpsFormat, Rtol, TransformFormat,
                          GraphFormat, InputFormat, Invocation, Json, Limit, MaxSteps, Output, PlotFormat, Seed,
                          graph_formats,
                          graph_renderer,
                          owns_process)
from ..engine.errors import EXIT_EVAL, EXIT_INPUT, GradcliError, InputError
from .cli_output import emit, format_for_path
from .program_io import (OUTPUT_ERRNOS, AllowRead, ClosedOutput, RawOutput, allow_reading, output_error,
                         program_output)
from ..app.reporting import debug_enabled, report_error, report_exception
from ..engine.lazy import lazy
from ..render.schemas import DESCRIPTIONS as SCHEMA_DESCRIPTIONS, NAMES as SCHEMA_NAMES, schema_text

# Loaded by the commands that use them (``gradcli --help`` and the commands that compute nothing start without
# them). The modules the start-up tests watch in sys.modules (tests/cli/test_startup_imports.py: the limits, the
# language, the calculator, the renderers and their messages; tests/session/test_prompt.py: the session) are
# imported inside the functions that need them instead: lazy() would already put them in sys.modules (and, for
# the language's modules, their package too).
batching = lazy("gradcli.frontends.batch")
catalog = lazy("gradcli.app.catalog")
graphview = lazy("gradcli.render.graphview")
jobs = lazy("gradcli.app.jobs")  # the pipeline: every command that computes builds a job and runs it
plot_grid = lazy("gradcli.app.plot_grid")
run_program = lazy("gradcli.app.run_program")


def _usage_metavar(make_metavar):
    """Typer's argument metavar in the usage line, without its braces: typer writes a required argument as
    ``{program}`` (``{PROGRAM}`` with a metavar), which reads as a literal brace to type; click, POSIX usage
    lines and gradcli's README write ``PROGRAM``. Optional arguments keep their brackets (``[NAME]``)."""
    def metavar(self, ctx, *, usage: bool = False) -> str:
        if usage and self.required and self.metavar is not None and self.nargs == 1:
            return self.metavar
        return make_metavar(self, ctx, usage=usage)
    return metavar


typer.core.TyperArgument.make_metavar = _usage_metavar(typer.core.TyperArgument.make_metavar)

app = typer.Typer(add_completion=True, rich_markup_mode=None,
                  help="gradcli: a command-line gradient calculator with PyTorch's semantics.")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("gradcli")
        except PackageNotFoundError:  # run from a checkout without installing
            v = "unknown (not installed)"
        typer.echo(f"gradcli {v}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def _root(ctx: typer.Context,
          version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Print gradcli's version and exit.")] = False) -> None:
    """gradcli: a command-line gradient calculator with PyTorch's semantics. Exit codes: 0 success,
    1 evaluation error, 2 bad input, 141 standard output closed. With no command on a terminal: the interactive
    session (gradcli repl). Shell completion: gradcli --install-completion."""
    if ctx.invoked_subcommand is None:
        if sys.stdin.isatty() and sys.stdout.isatty():
            started()
            raise typer.Exit(_start_session())
        typer.echo(ctx.get_help())
        raise typer.Exit(EXIT_INPUT)


@app.command()
def repl(
    ctx: typer.Context,
    dtype: Dtype = DType.float32,
    format: Annotated[str, typer.Option("--format", metavar="[table|json|compact]",
                                        help=":grad's answers (the session's :format).")] = "table",
) -> None:
    """The interactive session: variables persist, values print as PyTorch prints them, :help for the session
    commands. Standard input that is not a terminal runs line by line, stopping at the first error (its exit
    code: 1 evaluation, 2 bad input)."""
    with reported(ctx):
        code = _start_session(dtype=getattr(dtype, "value", dtype), format=format)
    raise typer.Exit(code)


def _start_session(**options) -> int:
    """:func:`gradcli.frontends.session.start` with ``options``: the interactive session; its exit code."""
    from .session import start  # not even in sys.modules for the other commands (tests/session/test_prompt.py)

    return start(**options)


#: Whether :func:`main` turned the cyclic garbage collector off for the start-up (:func:`started` turns it on).
_collector_deferred = False


def started() -> None:
    """The command's own work begins: end the start-up's pause of the cyclic garbage collector, if :func:`main`
    paused it. What start-up created (modules, classes, functions, the click command) lives until the process
    exits, so collecting it is wasted work: Python 3.11 runs about 140 collections over it, one of them full (a
    walk over every object, 15-40 ms). It is frozen instead (``gc.freeze``: no collection looks at it again) and
    collection is on again for what the command computes, so a program that makes reference cycles is collected
    as usual. Every command calls this as it begins (:func:`reported` does); it does nothing when the app runs
    in another process (tests), where the collector was never paused."""
    global _collector_deferred
    if _collector_deferred:
        _collector_deferred = False
        gc.freeze()
        gc.enable()


@contextmanager
def reported(ctx: typer.Context, debug: bool = False):
    """The error path of every command: a gradcli error in the block is reported (message and exit code, see
    :func:`gradcli.app.reporting.report_exception`; the traceback first under ``--debug``) and ends the command.
    In the process :func:`main` started, so is every other exception (MemoryError, a bug, Ctrl-C, a closed
    pipe); run any other way (tests), those reach the caller. Entering it ends the start-up (:func:`started`).

    Raises:
        typer.Exit: with the exit code, after reporting.
    """
    started()
    try:
        yield
        sys.stdout.flush()  # here, so that a reader gone away (| head -1) is a closed pipe of this command
    except (typer.Exit, typer.Abort):
        raise
    except GradcliError as err:
        raise typer.Exit(report_exception(err, debug_enabled(debug))) from None
    except (Exception, KeyboardInterrupt) as exc:
        if not owns_process(ctx):
            raise
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError) and exc.errno in OUTPUT_ERRNOS:
            exc = output_error(exc)  # a full disk, a closed standard output
        raise typer.Exit(report_exception(exc, debug_enabled(debug))) from None


def use_utf8(stream) -> None:
    """Make a text stream write UTF-8 whatever the locale (JSON and tables may hold any character)."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(encoding="utf-8")
        except (ValueError, OSError):
            pass


@app.command()
def grad(
    ctx: typer.Context,
    program: Annotated[str, typer.Argument(metavar="PROGRAM",
                                           help="The program: an expression or statements separated by ';' or "
                                                "newlines; the last expression is the output. '@path' reads a "
                                                "file, '-' standard input.")],
    input: Annotated[Optional[List[str]], typer.Option("--input", "-i", metavar="NAME=SPEC",
                                                       help="A leaf that requires grad (default float dtype). "
                                                            "SPEC is an expression or @file.npy/.json/.csv.")] = None,
    const: Annotated[Optional[List[str]], typer.Option("--const", "-c", metavar="NAME=SPEC",
                                                       help="A constant, with PyTorch's dtype inference.")] = None,
    gradient: Annotated[Optional[str], typer.Option(metavar="SPEC",
                                                    help="v of the vector-Jacobian product, for a non-scalar "
                                                         "output (same shape as the output).")] = None,
    repeat: Annotated[int, typer.Option(min=1, max=MAX_REPEAT, metavar="N", help=(
        f"Run backward N times (1 to {MAX_REPEAT:,}), keeping the graph, and show the gradients after each "
        "call (accumulation)."))] = 1,
    zero_grad: Annotated[bool, typer.Option("--zero-grad", help="Zero the gradients between repeated calls.")] = False,
    seed: Seed = None,
    dtype: Dtype = DType.float32,
    format: Format = None,
    json_: Json = False,
    max_steps: MaxSteps = None,
    limit: Limit = None,
    anomaly: Anomaly = False,
    debug: Debug = False,
    check: Check = False,
    eps: Eps = 1e-6,
    atol: Atol = 1e-5,
    rtol: Rtol = 1e-3,
    check_max_evaluations: CheckMaxEvaluations = 20_000,
    raw_output: RawOutput = False,
    allow_read: AllowRead = None,
    graph: GraphFormat = None,
    graph_values: Annotated[bool, typer.Option("--graph-values", help="Record each graph node's forward value "
                                                                      "and the gradient that flowed into it; "
                                                                      "shown by --graph, in --format json's "
                                                                      "graph, and as a tree after the tables.")] = False,
    graph_saved: Annotated[bool, typer.Option("--graph-saved", help="Show what each node saved for backward "
                                                                    "(as torchviz's show_saved).")] = False,
    graph_max_nodes: Annotated[Optional[int], typer.Option(min=0, metavar="N", help="--graph: draw at most N "
                                                                                    "nodes (default 80), repeated "
                                                                                    "chains collapsed; 0 draws "
                                                                                    "every node.")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Explain the chain rule node by node, with numbers: "
                                                            "each op's local derivative, the gradient in, what "
                                                            "it sends to each input (--format table or json).")
                       ] = False,
    output: Output = None,
    fields: Annotated[Optional[str], typer.Option(
        "--fields", metavar="NAMES",
        help="--format json: the members of the document, comma-separated, from output, inputs, "
             "grads, calls, graph, symbolic (default: all; symbolic: the formulas, as --symbolic).")] = None,
    show: Annotated[Optional[str], typer.Option(
        "--show", metavar="NAMES",
        help="Tables and compact lines: the sections, comma-separated, from output, inputs, grads, "
             "graph, formula (default: all; formula: the formulas, as --symbolic).")] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="The same as --format compact: one line per "
                                                              "result.")] = False,
    symbolic: Annotated[bool, typer.Option("--symbolic", help="Also each gradient as a simplified closed form "
                                                              "(needs SymPy: pip install 'gradcli[symbolic]'), "
                                                              "checked against autograd at the inputs.")] = False,
    symbolic_format: Annotated[str, typer.Option("--symbolic-format", metavar="unicode|latex",
                                                 help="--symbolic: the tables' form of the formula.")] = "unicode",
) -> None:
    """Compute a program's output, the gradient of every input, and show the autograd graph (as tables, JSON,
    or a picture with --graph)."""
    with reported(ctx, debug):
        opts, renderer, graph, chosen = _grad_output(
            ctx, format=_quiet_format(quiet, format, json_), json_=json_, graph=graph, explain=explain,
            output=output, fields=fields, show=show, seed=seed, dtype=dtype, max_steps=max_steps, limit=limit,
            anomaly=anomaly, debug=debug)
        _needs(ctx, "zero_grad", "--zero-grad", repeat > 1, "--repeat N (it zeroes the gradients between repeated "
                                                            "backward calls)")
        for name in ("eps", "atol", "rtol", "check_max_evaluations"):
            _needs(ctx, name, "--" + name.replace("_", "-"), check, "--check (it sets the finite-difference "
                                                                    "comparison)")
        opts.configure_limits()
        req = _grad_request(program, inputs=input or [], consts=const or [], gradient=gradient, repeat=repeat,
                            zero_grad=zero_grad, seed=opts.seed, dtype=opts.dtype,
                            max_steps=opts.max_steps, anomaly=opts.anomaly, graph_names=graph is not None,
                            graph_values=graph_values, graph_saved=graph_saved, explain=explain)
        tolerances = dict(eps=eps, atol=atol, rtol=rtol, max_evaluations=check_max_evaluations) if check else None
        # What the program prints shares standard output with tables; a JSON document keeps it to itself.
        to_file = output not in (None, "-")
        write = program_output(sys.stdout if renderer.prints_to_stdout or to_file else sys.stderr, raw_output)
        style, only_symbolic = _symbolic_style(symbolic, symbolic_format, chosen)
        with allow_reading(allow_read):
            result = jobs.run(jobs.GradJob(req, check=tolerances, symbolic=style), jobs.Context(write=write))
        _show_grad(result, renderer, output, graph=graph, explain=explain, chosen=chosen,
                   tree=graph_values or graph_saved, max_nodes=graph_max_nodes)
    if result.check is not None and not result.check.ok:
        raise typer.Exit(EXIT_EVAL)
    if _symbolic_failed(result, only_symbolic):
        raise typer.Exit(EXIT_EVAL)


def _symbolic_style(symbolic: bool, style: str, chosen) -> tuple:
    """``--symbolic`` (also asked for by ``--fields symbolic`` or ``--show formula``): the printed form of the
    formulas the grad job computes (None: no formulas), and whether the formula is the only thing asked for.

    Raises:
        InputError: a --symbolic-format other than unicode or latex (exit 2).
    """
    if style not in ("unicode", "latex"):
        raise InputError(f"--symbolic-format must be unicode or latex, got {style!r}", type="UsageError")
    asked = chosen is not None and ("symbolic" in chosen or "formula" in chosen)
    only = chosen is not None and tuple(chosen) in (("symbolic",), ("formula",))
    return (style if symbolic or asked else None), only


def _symbolic_failed(result, only: bool) -> bool:
    """Say on standard error when a formula disagrees with autograd (a bug: exit 1), or when the formula
    was all that was asked for and there is none (exit 1)."""
    sym = getattr(result, "symbolic", None)
    if sym is None:
        return False
    bad = [n for n, f in sym.formulas.items() if f.reason is None and f.agrees is False]
    if bad:
        sys.stderr.write(f"gradcli: the formula of {', '.join(bad)} disagrees with autograd at the inputs "
                         f"(a bug of gradcli's symbolic rules)\n")
        return True
    missing = sym.reason or next((f.reason for f in sym.formulas.values() if f.reason is not None), None)
    if only and missing:
        sys.stderr.write(f"gradcli: {missing}\n")
        return True
    return False


def _grad_request(program: str, **fields):
    """The :class:`~gradcli.app.calculator.GradRequest` of ``program`` (its text, or ``@path``: read by
    :func:`gradcli.language.specs.read_program`, which also names the file) with the other ``fields``.

    Raises:
        InputError: an unreadable program file (exit 2).
    """
    from ..app.calculator import GradRequest  # watched at start-up (tests/cli/test_startup_imports.py)
    from ..language.specs import read_program  # the language's package is watched at start-up too

    text, filename = read_program(program)
    return GradRequest(program=text, filename=filename, **fields)


def _quiet_format(quiet: bool, format: str | None, json_: bool) -> str | None:
    """``-q``/``--quiet``: ``--format compact``.

    Raises:
        InputError: -q with another --format or --json (a usage error, exit 2).
    """
    if not quiet:
        return format
    if format not in (None, "compact") or json_:
        raise InputError("-q is --format compact: leave out the other --format/--json", type="UsageError")
    return "compact"


def _grad_output(ctx, *, format, json_, graph, explain, output, fields, show, **shared):
    """What ``gradcli grad`` writes: ``(options, renderer, graph format or None, chosen sections or JSON
    members or None)``. ``-o FILE``'s extension chooses the format when nothing else does; ``--format svg`` (a
    format that draws graphs) is ``--graph svg``. ``shared``: the options of :meth:`CommandOptions.from_cli`.

    Raises:
        InputError: options that contradict each other (usage errors, exit 2).
    """
    if graph is None and format is None and not json_ and not explain:
        format = format_for_path(output)  # -o graph.svg: the extension decides
    if graph is None and format not in (None, "table", "json") and format in graph_formats():
        graph, format = format, None  # --format svg draws the graph, as --graph svg does
    opts = CommandOptions.from_cli(ctx, format=format, json_=json_, **shared)
    renderer = opts.renderer
    if graph is not None:
        if explain:
            raise InputError("--explain and --graph are two different outputs: choose one", type="UsageError")
        if format is not None or json_:
            raise InputError("--graph FORMAT chooses the output format: leave out --format/--json",
                             type="UsageError")
        renderer = graph_renderer(graph)
    chosen = _json_fields(fields, renderer, graph is not None or explain)
    if show is not None:
        if chosen is not None or renderer.name not in ("table", "compact") or graph is not None or explain:
            raise InputError("--show chooses the sections of the tables and compact lines (--fields those of "
                             "--format json)", type="UsageError")
        chosen = _sections(show)
    return opts, renderer, graph, chosen


def _show_grad(result, renderer, output, *, graph, explain, chosen, tree: bool, max_nodes) -> None:
    """Render ``gradcli grad``'s result: the graph (``--graph``), the chain rule (``--explain``) or the tables /
    JSON / compact lines (``chosen``: their sections or members; ``tree``: the recorded graph as a tree after
    the tables), to ``output`` (``-o``); then the non-finite warning and a failed check's message on standard
    error."""
    from ..render.messages import check_failure, nonfinite_warning  # watched at start-up (test_startup_imports)

    options = _graph_options(max_nodes)
    if graph is not None:
        emit(renderer, output, lambda stream: renderer.graph(result, stream, options))
    elif explain:
        emit(renderer, output, lambda stream: renderer.explain(result, stream))
    else:
        def draw(stream):
            if chosen is None:
                renderer.grad(result, stream)
            else:
                renderer.grad(result, stream, fields=chosen)
            if tree and renderer.name == "table":
                render.get("tree").graph(result, stream, options)

        emit(renderer, output, draw)
    warning = nonfinite_warning(result)
    if warning:
        sys.stderr.write(warning + "\n")
    failure = None if result.check is None else check_failure(result.check)
    if failure:
        sys.stderr.write(failure + "\n")


def _sections(show: str) -> tuple:
    """``--show``'s sections in their order.

    Raises:
        InputError: unknown names (a usage error, exit 2).
    """
    from ..render.compact import SECTIONS  # --json never loads the compact renderer (test_startup_imports)

    names = [f.strip() for f in show.split(",") if f.strip()]
    if not names or any(f not in SECTIONS for f in names):
        raise InputError(f"--show takes names from {', '.join(SECTIONS)}, got {show!r}", type="UsageError")
    return tuple(f for f in SECTIONS if f in names)


def _needs(ctx: typer.Context, param: str, option: str, present: bool, what: str) -> None:
    """Refuse ``option`` given on the command line without what it works with (it would be silently ignored).

    Raises:
        InputError: a usage error (exit 2).
    """
    source = ctx.get_parameter_source(param)  # (click's ParameterSource; typer vendors click in newer releases)
    if not present and getattr(source, "name", None) == "COMMANDLINE":
        raise InputError(f"{option} needs {what}", type="UsageError")


def _json_fields(fields: str | None, renderer, other_output: bool):
    """``--fields``: the chosen members of the JSON document in their order, or None when not given.

    Raises:
        InputError: unknown names, or --fields without --format json (a usage error, exit 2).
    """
    if fields is None:
        return None
    from ..render.json import FIELDS  # tables never load the JSON renderer (test_startup_imports)

    if renderer.name != "json" or other_output:
        raise InputError("--fields chooses the members of the JSON document: use it with --format json",
                         type="UsageError")
    names = [f.strip() for f in fields.split(",") if f.strip()]
    unknown = [f for f in names if f not in FIELDS]
    if unknown or not names:
        raise InputError(f"--fields takes names from {', '.join(FIELDS)}, got {fields!r}", type="UsageError")
    return tuple(names)


def _transform_command(ctx, kind: str, mode: str, vectors, options: dict) -> None:
    """What ``gradcli jacobian``/``hessian``/``jvp``/``hvp`` share: options (``options``: the parameters of
    :data:`_TRANSFORM_HEAD` and :data:`_TRANSFORM_TAIL` by name), the request, the answer and its rendering;
    ``vectors`` are the -t/-v blocks (None for jacobian/hessian), and a failed --check exits 1."""
    format, json_ = options["format"], options["json_"]
    with reported(ctx, options["debug"]):
        format = _quiet_format(options["quiet"], format, json_)
        opts = CommandOptions.from_cli(ctx, format=format, json_=json_, seed=options["seed"], dtype=options["dtype"],
                                       max_steps=options["max_steps"], limit=options["limit"], debug=options["debug"])
        renderer = opts.renderer
        for name in ("eps", "atol", "rtol"):
            _needs(ctx, name, "--" + name, options["check"], "--check (it sets the finite-difference comparison)")
        check = {k: options[k] for k in ("eps", "atol", "rtol")} if options["check"] else None
        opts.configure_limits()
        req = _grad_request(options["program"], inputs=options["input"] or [], consts=options["const"] or [],
                            seed=opts.seed, dtype=opts.dtype, max_steps=opts.max_steps)
        write = sys.stdout.write if renderer.prints_to_stdout else sys.stderr.write
        result = jobs.run(jobs.TransformJob(req, kind, mode, vectors=vectors, check=check,
                                            symbolic=bool(options.get("symbolic")),
                                            strict=bool(options.get("strict"))), jobs.Context(write=write))
        renderer.transform(result, sys.stdout)
        from ..render.messages import check_failure  # watched at start-up (test_startup_imports)

        failure = None if result.check is None else check_failure(result.check)
        if failure:
            sys.stderr.write(failure + "\n")
    if result.check is not None and not result.check.ok:
        raise typer.Exit(EXIT_EVAL)
    if _symbolic_failed(result, False):
        raise typer.Exit(EXIT_EVAL)


_TRANSFORM_INPUT = Annotated[Optional[List[str]], typer.Option(
    "--input", "-i", metavar="NAME=SPEC", help="An input to differentiate with respect to (as for grad).")]
_TRANSFORM_CONST = Annotated[Optional[List[str]], typer.Option(
    "--const", "-c", metavar="NAME=SPEC", help="A constant (as for grad).")]
_TRANSFORM_PROGRAM = Annotated[str, typer.Argument(
    metavar="PROGRAM", help="The program, as for grad: its output is differentiated ('@path' reads a file, '-' "
                            "standard input).")]
_QUIET = Annotated[bool, typer.Option("-q", "--quiet", help="The same as --format compact.")]

#: The options every transform command takes, declared once: (parameter, annotation, default), in --help's
#: order; a command's own option (--mode, --tangent, --vector) goes between ``const`` and ``format``.
_TRANSFORM_HEAD = (("program", _TRANSFORM_PROGRAM, inspect.Parameter.empty), ("input", _TRANSFORM_INPUT, None),
                   ("const", _TRANSFORM_CONST, None))
_TRANSFORM_TAIL = (("format", TransformFormat, None), ("json_", Json, False), ("quiet", _QUIET, False),
                   ("seed", Seed, None), ("dtype", Dtype, DType.float32), ("max_steps", MaxSteps, None),
                   ("limit", Limit, None), ("debug", Debug, False), ("check", Check, False), ("eps", Eps, 1e-6),
                   ("atol", Atol, 1e-5), ("rtol", Rtol, 1e-3))

_STRICT = Annotated[bool, typer.Option(
    "--strict", help="PyTorch's strict=True: an output independent of an input, or one that does not require "
                     "grad, is an error (PyTorch's message) instead of zeros; reverse mode only, as in PyTorch.")]

#: ``gradcli jacobian``/``hessian``/``jvp``/``hvp``: each command's own options (parameter, annotation, default;
#: ``mode`` is the differentiation mode, a vectors option holds the -t/-v blocks), its fixed mode when it has
#: no --mode, and its docstring (the help).
_TRANSFORMS = {
    "jacobian": ((("mode", Annotated[str, typer.Option(
        "--mode", metavar="[reverse|forward|auto]",
        help="How to compute it: reverse mode (rows: vector-Jacobian products, batched), forward mode (columns: "
             "one forward-mode JVP per input element); auto chooses forward when the inputs have fewer elements "
             "than the output (reverse with --strict).")], "auto"), ("strict", _STRICT, False)), None,
        """The Jacobian of the program's output with respect to each input: shape output + input, as
    torch.autograd.functional.jacobian (tables, or JSON: gradcli schema jacobian). A program ending in a tuple
    of tensors has several outputs: one block per output and input, as PyTorch's tuple of tuples. --check
    compares it with central differences along each input element."""),
    "hessian": ((("symbolic", Annotated[bool, typer.Option(
        "--symbolic", help="Also each block as a simplified closed form (needs SymPy: pip install "
                           "'gradcli[symbolic]'), checked against the computed block.")], False),
                 ("strict", _STRICT, False)), "reverse",
                """The Hessian of the program's single-element output with respect to the inputs: H[a][b] of shape
    a + b, as torch.autograd.functional.hessian (tables, or JSON: gradcli schema hessian). --check compares it
    with central differences of the gradient along each input element."""),
    "jvp": ((("tangent", Annotated[Optional[List[str]], typer.Option(
        "--tangent", "-t", metavar="NAME=SPEC", help="The tangent of an input (its shape; one per -i input).")],
             None),), "auto",
            """The Jacobian-vector product J v of the program's output with the tangents, by forward-mode AD: the
    output's shape, as torch.func.jvp (tables, or JSON: gradcli schema jvp). --check compares it with central
    differences along the tangents."""),
    "hvp": ((("vector", Annotated[Optional[List[str]], typer.Option(
        "--vector", "-v", metavar="NAME=SPEC", help="The vector's block for an input (its shape; one per -i "
                                                      "input).")], None),), "reverse",
            """The Hessian-vector product H v of the program's single-element output: one block per input, of its
    shape, as torch.autograd.functional.hvp (tables, or JSON: gradcli schema hvp). --check compares it with
    central differences of the gradient along the vector."""),
}


def _register_transform(kind: str, own: tuple, mode: str | None, doc: str) -> None:
    """Register the command ``kind`` of :data:`_TRANSFORMS`: the shared options of :data:`_TRANSFORM_HEAD` and
    :data:`_TRANSFORM_TAIL` around its own options ``own`` (rows), the signature typer reads."""
    rows = _TRANSFORM_HEAD + tuple(own) + _TRANSFORM_TAIL
    vectors_name = next((row[0] for row in own if row[0] in ("tangent", "vector")), None)

    def command(ctx: typer.Context, **options) -> None:
        vectors = None if vectors_name is None else options[vectors_name]
        _transform_command(ctx, kind, options.get("mode", mode), vectors, options)

    params = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)]
    params += [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
                                 annotation=annotation) for name, annotation, default in rows]
    command.__signature__ = inspect.Signature(params, return_annotation=None)
    command.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
    command.__name__ = command.__qualname__ = kind
    command.__doc__ = doc
    app.command(kind)(command)


for _kind, (_own, _mode, _doc) in _TRANSFORMS.items():
    _register_transform(_kind, _own, _mode, _doc)


@app.command()
def ops(
    ctx: typer.Context,
    name: Annotated[Optional[str], typer.Argument(metavar="NAME",
                                                  help="Show only names containing this text.")] = None,
    kind: Annotated[Optional[str], typer.Option(help="Show only this kind: op, creation or function.",
                                                metavar="[op|creation|function]")] = None,
    format: OpsFormat = None,
    json_: Json = False,
) -> None:
    """List the supported ops: name, signature, grad_fn and derivative note, from the op table itself."""
    with reported(ctx):
        opts = CommandOptions.from_cli(ctx, format=format, json_=json_)
        if kind is not None and kind not in ("op", "creation", "function"):
            raise InputError(f"--kind must be op, creation or function, got {kind!r}", type="UsageError")
        opts.renderer.ops(catalog.list_ops(kind=kind, name=name), sys.stdout)


@app.command()
def run(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(metavar="PATH", help="The program file; '-' reads standard input.")],
    keep_going: Annotated[bool, typer.Option("--keep-going", help="Report an error and go on with the next "
                                                                 "top-level statement; exit 1 at the end if any "
                                                                 "failed.")] = False,
    notebook: Annotated[bool, typer.Option("--notebook", help="Show the value of each cell's last expression as "
                                                              "Jupyter does (cells begin at '# In[n]:' or '# %%' "
                                                              "lines; without them the file is one cell).")] = False,
    seed: Seed = None,
    dtype: Dtype = DType.float32,
    max_steps: MaxSteps = None,
    limit: Limit = None,
    anomaly: Anomaly = False,
    debug: Debug = False,
    raw_output: RawOutput = False,
    allow_read: AllowRead = None,
    graph: Annotated[Optional[str], typer.Option(
        "--graph", metavar="[" + "|".join(graph_formats()) + "]",
        help="After the run, draw the graph of the last backward call the program made (-o FILE keeps it apart "
             "from what the program prints).")] = None,
    graph_values: Annotated[bool, typer.Option("--graph-values", help="--graph: each node's forward value "
                                                                      "and the gradient of that call.")] = False,
    graph_saved: Annotated[bool, typer.Option("--graph-saved", help="--graph: what each node saved for "
                                                                    "backward.")] = False,
    graph_max_nodes: Annotated[Optional[int], typer.Option(min=0, metavar="N", help="--graph: draw at most N "
                                                                                    "nodes (default 80); 0 draws "
                                                                                    "every node.")] = None,
    output: Output = None,
) -> None:
    """Run a program like a Python script: print() shows values as PyTorch prints them, warnings go to
    standard error, an error shows file:line:col, the line with a caret and PyTorch's message (exit 1).
    Syntax errors stop the run before anything runs (exit 2)."""
    with reported(ctx, debug):
        opts = CommandOptions.from_cli(ctx, seed=seed, dtype=dtype, max_steps=max_steps, limit=limit,
                                       anomaly=anomaly, debug=debug)
        if graph is None and format_for_path(output) in graph_formats():
            graph = format_for_path(output)
        if graph is None and (graph_values or graph_saved or output or graph_max_nodes is not None):
            raise InputError("--graph-values, --graph-saved, --graph-max-nodes and -o go with --graph FORMAT",
                             type="UsageError")
        renderer = None if graph is None else graph_renderer(graph)
        opts.configure_limits()
        source, filename = run_program.read_source(path)
        req = run_program.RunRequest(source=source, filename=filename, keep_going=keep_going, notebook=notebook,
                         max_steps=opts.max_steps, seed=opts.seed, dtype=opts.dtype, anomaly=opts.anomaly)

        with allow_reading(allow_read, path):
            done = jobs.run(jobs.RunJob(req, graph=renderer is not None, graph_values=graph_values,
                                        graph_saved=graph_saved),
                            jobs.Context(write=program_output(sys.stdout, raw_output),
                                         warn=program_output(sys.stderr, raw_output),
                                         report=lambda err: report_error(err, opts.debug)))
        result = done.result
        if renderer is not None:
            drawn = done.drawn
            if drawn is None:
                sys.stderr.write("gradcli run: --graph: the program made no backward call, so there is no graph "
                                 "to draw\n")
            else:
                sys.stdout.flush()
                options = _graph_options(graph_max_nodes)
                emit(renderer, output, lambda stream: renderer.graph(drawn, stream, options))
    raise typer.Exit(result.exit_code)


def _graph_options(max_nodes: int | None):
    """``--graph-max-nodes``'s GraphOptions (None: the defaults)."""
    if max_nodes is None:
        return None
    return graphview.GraphOptions(max_nodes=max_nodes, collapse=max_nodes != 0)


@app.command()
def plot(
    ctx: typer.Context,
    program: Annotated[str, typer.Argument(metavar="PROGRAM", help="The program, as for grad ('@path' reads a "
                                                                   "file); the swept inputs are names in it.")],
    over: Annotated[List[str], typer.Option("--over", metavar="NAME=START:STOP[:POINTS]",
                                            help="The input to sweep and its range (START and STOP may be "
                                                 "multiples of pi: -2pi, pi/2). Once: f and its derivatives; "
                                                 "twice: a heat map of f with its gradient.")],
    input: Annotated[Optional[List[str]], typer.Option("--input", "-i", metavar="NAME=SPEC",
                                                       help="A fixed input (as for grad).")] = None,
    const: Annotated[Optional[List[str]], typer.Option("--const", "-c", metavar="NAME=SPEC",
                                                       help="A fixed constant (as for grad).")] = None,
    points: Annotated[Optional[int], typer.Option(min=2, metavar="N", help="Grid points (per input for two "
                                                                           "--over; default 400, or 41 per axis).")
                      ] = None,
    order: Annotated[int, typer.Option(min=1, max=2, metavar="[1|2]", help="The highest derivative plotted: 1, "
                                                                         "or 2 for d2f/dx2 too (through "
                                                                         "create_graph).")] = 1,
    format: PlotFormat = None,
    output: Output = None,
    seed: Seed = None,
    dtype: Dtype = DType.float32,
    max_steps: MaxSteps = None,
    limit: Limit = None,
    debug: Debug = False,
) -> None:
    """Plot a program and its derivative over a range of one input (or a heat map with the gradient over two):
    in the terminal, as PNG/SVG/PDF (-o FILE, matplotlib), or the values as CSV or JSON. Kinks and NaN
    regions are gaps, and PyTorch's subgradient at a kink is marked."""
    from ..language.specs import read_program  # the language's package is watched at start-up

    with reported(ctx, debug):
        if format is None:
            format = "csv" if (output or "").lower().endswith(".csv") else format_for_path(output)
        opts = CommandOptions.from_cli(ctx, format=None if format == "csv" else format, seed=seed, dtype=dtype,
                                       max_steps=max_steps, limit=limit, debug=debug)
        if format == "csv":
            from ..render.pictures import PLOT_CSV  # watched at start-up (test_startup_imports)

            renderer = PLOT_CSV
        else:
            renderer = opts.renderer
        if type(renderer).plot is render.Renderer.plot:
            plots = [n for n in render.names() if type(render.get(n)).plot is not render.Renderer.plot] + ["csv"]
            raise InputError(f"gradcli plot writes {', '.join(plots)} (table: the terminal plot), not "
                             f"{renderer.name}", type="UsageError")
        opts.configure_limits()
        text, filename = read_program(program)
        req = plot_grid.PlotRequest(program=text, over=over, inputs=input or [], consts=const or [], points=points,
                          order=order, seed=opts.seed, dtype=opts.dtype, filename=filename, max_steps=opts.max_steps)
        with _progress_bar() as progress:
            result = jobs.run(jobs.PlotJob(req), jobs.Context(progress=progress))
        emit(renderer, output, lambda stream: renderer.plot(result, stream))


@contextmanager
def _progress_bar():
    """A ``progress(done, total, elapsed)`` callback that shows a bar on standard error once a point-by-point
    evaluation has taken half a second (only when standard error is a terminal)."""
    if not sys.stderr.isatty():
        yield None
        return
    state = {}

    def progress(done, total, elapsed):
        if "bar" not in state:
            if elapsed < 0.5 or done == total:
                return
            from rich.console import Console
            from rich.progress import Progress

            bar = Progress(console=Console(file=sys.stderr), transient=True)
            bar.start()
            state["bar"] = bar
            state["task"] = bar.add_task("evaluating point by point", total=total)
        state["bar"].update(state["task"], completed=done)

    try:
        yield progress
    finally:
        if "bar" in state:
            state["bar"].stop()


def _batch_input_format(format: str | None, input_format: InputFormat | None) -> tuple[str, str | None]:
    """``(input format, output format or None)`` of ``gradcli batch``: ``--format auto|text|jsonl`` is the
    spelling of ``--input-format`` from before ``--format`` chose the output.

    Raises:
        InputError: ``--format`` and ``--input-format`` name different input formats (exit 2).
    """
    if format in INPUT_FORMATS:
        if input_format is not None and input_format.value != format:
            raise InputError(f"--format {format} is --input-format {format}, but --input-format "
                             f"{input_format.value} was given too", type="UsageError")
        return format, None
    return (input_format or InputFormat.auto).value, format


@app.command()
def batch(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE",
                                        help="The entries: a text file (one program per line; a block ended "
                                             "by '---' for a multi-line entry) or JSON Lines; '-' reads "
                                             "standard input, streaming.")],
    format: BatchFormat = None,
    json_: Json = False,
    input_format: Annotated[Optional[InputFormat], typer.Option(
        "--input-format", metavar="[" + "|".join(INPUT_FORMATS) + "]",
        help="The input format; auto (the default): .jsonl/.ndjson are JSON Lines, .txt/.gc "
             "text, otherwise JSON Lines if the first line starts with '{'.")] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, metavar="N",
                                      help="Worker processes (the output keeps the input order).")] = 1,
    dask: Annotated[Optional[str], typer.Option(
        "--dask", metavar="ADDRESS", help="Run the entries on the Dask cluster whose scheduler is at ADDRESS "
                                          "(tcp://HOST:8786), in partitions; the output keeps the input order. "
                                          "Needs gradcli[dask] here and gradcli on the workers.")] = None,
    output_dir: Annotated[Optional[str], typer.Option(
        "--output-dir", metavar="DIR", help="With --dask and FILE a pattern ('DIR/part-*.jsonl'): the workers read "
                                            "the input parts and write one output part each to DIR (JSON "
                                            "Lines with --json), byte for byte what one process writes.")] = None,
    seed: BatchSeed = None,
    dtype: BatchDtype = DType.float32,
    max_steps: MaxSteps = None,
    limit: BatchLimit = None,
    anomaly: Anomaly = False,
    debug: Debug = False,
    check: Check = False,
    eps: Eps = 1e-6,
    atol: Atol = 1e-5,
    rtol: Rtol = 1e-3,
    check_max_evaluations: CheckMaxEvaluations = 20_000,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="The same as --format compact: one line per "
                                                              "entry.")] = False,
) -> None:
    """Evaluate a file of entries: one result per entry (a table row, or a JSON line with --format json),
    written as soon as it is done; a summary on standard error. Exit 0 if every entry succeeded, 1 if any
    failed, 2 if the file cannot be read (or the Dask scheduler cannot be reached)."""
    use_utf8(sys.stdout)
    use_utf8(sys.stderr)
    with reported(ctx, debug):
        format = _quiet_format(quiet, format, json_)
        input_fmt, format = _batch_input_format(format, input_format)
        opts = CommandOptions.from_cli(ctx, format=format, json_=json_, seed=seed, dtype=dtype,
                                       max_steps=max_steps, limit=limit, anomaly=anomaly, debug=debug)
        entry_format = opts.renderer.batch(sys.stdout)
        opts.configure_limits()
        from ..engine import limits  # watched at start-up (test_startup_imports)

        limits.disarm_time()  # in batch, the time limit applies to each entry (batch.runner.run_entry)
        tolerances = dict(eps=eps, atol=atol, rtol=rtol, max_evaluations=check_max_evaluations) if check else None
        status = batching.run(file, fmt=input_fmt, jobs=jobs, entry_format=entry_format, dtype=opts.dtype,
                              seed=opts.seed, max_steps=opts.max_steps, anomaly=opts.anomaly, debug=opts.debug,
                              check=tolerances, dask=dask, output_dir=output_dir)
    if owns_process(ctx):
        ignore_interrupts()
    raise typer.Exit(status)


def ignore_interrupts() -> None:
    """Ignore SIGINT from now until the process exits: the batch has written its results and its summary, and
    a Ctrl-C that lands while typer ends the command or the interpreter shuts down must not turn the finished
    batch into exit 130 ("interrupted"). Only in the main thread (the only one that may set a handler); only
    in the process :func:`main` started (tests that run the app keep their Ctrl-C)."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


_SCHEMA_HELP = ("Print the JSON Schema (draft 2020-12) of a JSON output: " +
                ", ".join(f"'{n}' ({what})" for n, what in SCHEMA_DESCRIPTIONS.items()) +
                ". Without NAME, the names, one a line.")


@app.command(help=_SCHEMA_HELP)
def schema(
    ctx: typer.Context,
    name: Annotated[Optional[str], typer.Argument(
        metavar="NAME", help=", ".join(SCHEMA_DESCRIPTIONS) + ": the JSON output it describes; without it, the "
                                                              "names.")] = None,
) -> None:
    """Print the JSON Schema of a JSON output (the help text is :data:`_SCHEMA_HELP`, from the list of schemas in
    :mod:`gradcli.render.schemas`)."""
    with reported(ctx):
        if name is None:
            sys.stdout.write("".join(f"{n}\n" for n in SCHEMA_NAMES))
            return
        if name not in SCHEMA_NAMES:
            raise InputError(f"no schema named {name!r}; the schemas are: {', '.join(SCHEMA_NAMES)}",
                             type="UsageError")
        sys.stdout.write(schema_text(name))


_INPUT_LIKE = re.compile(r"[A-Za-z_]\w*=.+")


def _app_for(argv: list) -> typer.Typer:
    """The app with only the command ``argv`` names, when it names one (else the whole app).

    Typer builds the click parameters of every registered command before it parses the command line (about
    20 ms for gradcli's commands); one command's are enough to run it. Its usage errors and ``--help`` are the
    same: click looks the command up by name. Shell completion (``_GRADCLI_COMPLETE``) gets the whole app.
    """
    if not argv or "_GRADCLI_COMPLETE" in os.environ:
        return app
    name = argv[0]
    chosen = [c for c in app.registered_commands
              if (c.name or typer.main.get_command_name(c.callback.__name__)) == name]
    if not chosen:
        return app
    for func in [c.callback for c in chosen] + [app.registered_callback.callback]:
        _resolve_annotations(func)
    slim = copy.copy(app)
    slim.registered_commands = chosen
    return slim


def _resolve_annotations(func) -> None:
    """Replace ``func``'s annotations, strings in this module (``from __future__ import annotations``), by what
    they evaluate to. Typer reads them with ``inspect.signature(eval_str=True)`` and ``typing.get_type_hints``,
    which compile and evaluate every string each time, and it reads each function four times while building one
    command: about 2 ms of ``grad``'s start-up (30 options). Evaluated once here, typer sees the same objects."""
    if any(isinstance(a, str) for a in func.__annotations__.values()):
        import typing

        func.__annotations__ = typing.get_type_hints(func, include_extras=True)


def _positional_input_hint(argv: list) -> None:
    """``gradcli grad "sin(x)*x**2" x=1.5``: an input given without ``-i`` (typer would say only "unexpected
    extra argument"). Exits 2 with the command to type instead."""
    # The cheap test first (building grad's click command costs milliseconds at every start): a NAME=VALUE
    # token that does not follow an option. (A NAME=VALUE after a flag, ``--check x=1``, is left to typer's
    # "unexpected extra argument".)
    if not argv or argv[0] != "grad" or not any(_INPUT_LIKE.fullmatch(t) and not argv[i].startswith("-")
                                                for i, t in enumerate(argv[2:], 1)):
        return
    command = typer.main.get_command(_app_for(argv)).commands.get("grad")
    if command is None:
        return
    takes_value = {o for p in command.params if not getattr(p, "is_flag", False) and p.param_type_name == "option"
                   for o in p.opts}
    positionals, skip = [], False
    for token in argv[1:]:
        if skip:
            skip = False
        elif token == "--":
            continue
        elif token.startswith("-") and token != "-" and "=" not in token:
            skip = token in takes_value
        elif not token.startswith("-") or token == "-":
            positionals.append(token)
    for extra in positionals[1:]:
        if _INPUT_LIKE.fullmatch(extra):
            sys.stderr.write(f"UsageError: {extra} is not an option: give an input with -i \"{extra}\" (or a "
                             f"constant with -c \"{extra}\")\n")
            sys.exit(EXIT_INPUT)


#: The root's own options: each prints something and exits before any command runs (click handles them eagerly).
_ROOT_ONLY = frozenset({"--help", "--version", "--install-completion", "--show-completion"})


def main() -> None:
    """Entry point of the ``gradcli`` console script and ``python -m gradcli``: the limits from the
    environment, the process guards (memory, time), and no traceback for anything that escapes a command
    (``GRADCLI_DEBUG=1`` shows it; a command's own ``--debug`` is handled by :func:`reported`).

    ``gradcli --help`` (``--version``, the completion options) computes nothing: it imports neither numpy nor the
    limits (tests/cli/test_startup_imports.py).
    """
    global _collector_deferred
    if gc.isenabled():  # paused over the start-up (see started())
        gc.disable()
        _collector_deferred = True
    argv = sys.argv[1:]
    computes = not (argv and argv[0] in _ROOT_ONLY)
    if sys.stdout is None:  # started with standard output closed
        sys.stdout = ClosedOutput()
    # JSON and tables may hold any character: write UTF-8 whatever the locale.
    use_utf8(sys.stdout)
    use_utf8(sys.stderr)
    if computes:
        import warnings

        # OpenBLAS's idle threads spin for 2**28 cycles (about 0.1 s) after each multithreaded call before they
        # sleep, on every other core: after a command's last matmul they slowed the JSON encoder's threads and
        # the reader of the output (benchmarks/README.md). 2**24 cycles (a few milliseconds) still keeps them
        # awake between the calls of a training loop. Read by OpenBLAS when numpy loads it; the user's own
        # setting wins.
        os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "24")
        import numpy as np

        # PyTorch never warns about overflow or invalid values (or the mean of nothing); NaN/inf show in the
        # results instead, flagged as nonfinite.
        np.seterr(all="ignore")
        warnings.filterwarnings("ignore", category=RuntimeWarning, module="numpy")
    try:
        _positional_input_hint(argv)
        if computes:
            from ..engine import limits  # numpy: not for --help (test_startup_imports)

            limits.configure()
            limits.install_process_guards()
        _app_for(argv)(obj=Invocation(owns_process=True))
    except (Exception, KeyboardInterrupt) as exc:  # outside a command: starting up, or parsing the command line
        sys.exit(report_exception(exc, debug_enabled()))


__all__ = ["app", "main", "reported", "EXIT_INPUT"]

"""The ``gradcli`` command (typer): read input, call the core, hand the result to one renderer.

Exit codes: 0 success, 1 evaluation error, 2 bad input (syntax errors, unreadable files, bad options).
Errors go to standard error as ``file:line:col:``, the line with a caret, and ``Type: message``; standard
output carries only results. ``--debug`` (or ``GRADCLI_DEBUG=1``) adds the internal traceback.
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from typing import Annotated, List, Optional

import typer

from .errors import EXIT_EVAL, EXIT_INPUT, EvalError, GradcliError, InputError

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="gradcli: a command-line gradient calculator with PyTorch's semantics.")


@app.callback()
def _root() -> None:
    """gradcli: a command-line gradient calculator with PyTorch's semantics. Exit codes: 0 success,
    1 evaluation error, 2 bad input."""


def _stdout_console():
    from rich.console import Console

    console = Console()
    if not console.is_terminal:
        # Piped output is read whole: do not wrap tensors at 80 columns.
        console = Console(width=200)
    return console


_debug = False  # --debug was given (GRADCLI_DEBUG=1 works for every command)
_process_guards = False  # main() runs: the memory and time limits apply to this process


def _debug_enabled() -> bool:
    return _debug or os.environ.get("GRADCLI_DEBUG", "") not in ("", "0")


def _traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` and of the exceptions it was raised from (innermost last), for --debug."""
    import traceback

    chain = []
    e = exc
    while e is not None and e not in chain:
        chain.append(e)
        e = e.__cause__ or e.__context__
    return "".join("".join(traceback.format_exception(type(e), e, e.__traceback__, chain=False))
                   for e in reversed(chain))


def report_error(err: GradcliError) -> int:
    """Write a gradcli error to standard error (with the internal traceback under --debug); returns its exit
    code."""
    if _debug_enabled():
        sys.stderr.write(_traceback(err))
    sys.stderr.write(err.format() + "\n")
    sys.stderr.flush()
    return err.exit_code


def use_utf8(stream) -> None:
    """Make a text stream write UTF-8 whatever the locale (JSON and tables may hold any character)."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(encoding="utf-8")
        except (ValueError, OSError):
            pass


def _read_program(program: str) -> tuple[str, str]:
    """``PROGRAM`` is the text itself, ``@path`` for a file, or ``-`` for standard input (UTF-8, within the
    file_bytes limit)."""
    from .language.specs import read_program

    return read_program(program)


def _configure_limits(options, **overrides) -> None:
    """Apply ``--limit NAME=N`` options (and named overrides) over the GRADCLI_MAX_* environment variables."""
    from . import limits

    values = dict(limits.parse_option(o) for o in options or [])
    values.update({k: v for k, v in overrides.items() if v is not None})
    limits.configure(values)
    if _process_guards:
        limits.install_process_guards()


_LIMIT_HELP = ("Raise or lower a limit (repeatable): elements, items, int_bits, chars, nesting, steps, call_depth, "
               "graph_nodes, file_bytes, memory, time; 'none' removes it. Also GRADCLI_MAX_<NAME>.")
_ANOMALY_HELP = ("Stop at the first op whose backward produces NaN or infinity and show where the program called "
                 "it (torch.autograd.detect_anomaly).")
_DEBUG_HELP = "Show the internal traceback with errors (for bug reports)."


@app.command()
def grad(
    program: Annotated[str, typer.Argument(help="The program: an expression or statements separated by ';' or "
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
    repeat: Annotated[int, typer.Option(min=1, help="Run backward N times, keeping the graph, and show the "
                                                    "gradients after each call (accumulation).")] = 1,
    zero_grad: Annotated[bool, typer.Option("--zero-grad", help="Zero the gradients between repeated calls.")] = False,
    seed: Annotated[Optional[int], typer.Option(help="Seed for rand/randn/randint.")] = None,
    dtype: Annotated[str, typer.Option(help="Default float dtype: float32 (PyTorch's default) or float64.")] = "float32",
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    max_steps: Annotated[Optional[int], typer.Option(min=1, help="Stop programs after this many statement "
                                                                 "executions (default 5,000,000).")] = None,
    limit: Annotated[Optional[List[str]], typer.Option("--limit", metavar="NAME=N", help=_LIMIT_HELP)] = None,
    anomaly: Annotated[bool, typer.Option("--anomaly", help=_ANOMALY_HELP)] = False,
    debug: Annotated[bool, typer.Option("--debug", help=_DEBUG_HELP)] = False,
    check: Annotated[bool, typer.Option("--check", help="Compare the gradients with central finite differences "
                                                        "in float64; exit 1 above tolerance.")] = False,
    eps: Annotated[float, typer.Option(help="--check: finite-difference step.")] = 1e-6,
    atol: Annotated[float, typer.Option(help="--check: absolute tolerance.")] = 1e-5,
    rtol: Annotated[float, typer.Option(help="--check: relative tolerance.")] = 1e-3,
    check_max_evaluations: Annotated[int, typer.Option(help="--check: most program runs (two per input "
                                                            "element).")] = 20_000,
) -> None:
    """Compute a program's output, the gradient of every input, and show the autograd graph."""
    global _debug
    from . import limits
    from .calculator import GradRequest, compute
    from .limits import TimeLimitError

    _debug = debug
    try:
        _configure_limits(limit, steps=max_steps)
        text, filename = _read_program(program)
        req = GradRequest(program=text, inputs=input or [], consts=const or [], gradient=gradient, repeat=repeat,
                          zero_grad=zero_grad, seed=seed, dtype=dtype, filename=filename, max_steps=max_steps,
                          anomaly=anomaly)
        # Program prints go to stdout with tables, to stderr with --json (stdout is one JSON document).
        write = sys.stderr.write if json_ else sys.stdout.write
        if check:
            from .check import compute_checked

            result = compute_checked(req, write=write, eps=eps, atol=atol, rtol=rtol,
                                     max_evaluations=check_max_evaluations)
        else:
            result = compute(req, write=write)
    except GradcliError as err:
        if isinstance(err, TimeLimitError):
            limits.disarm_time()
        raise typer.Exit(report_error(err))
    if json_:
        from .render.json import dumps, grad_result_to_dict

        sys.stdout.write(dumps(grad_result_to_dict(result)) + "\n")
    else:
        from . import dtypes
        from .render.table import render_check, render_grad

        console = _stdout_console()
        render_grad(result, console, dtypes.as_dtype(req.dtype).np)  # the request's default dtype
        if result.check is not None:
            render_check(result.check, console)
    from .render.table import nonfinite_warning

    warning = nonfinite_warning(result)
    if warning:
        sys.stderr.write(warning + "\n")
    if result.check is not None and not result.check.ok:
        bad = ", ".join(f"{i.name} (max abs diff {i.max_abs_diff:.3e})" for i in result.check.inputs if not i.ok)
        sys.stderr.write(f"gradcli: --check failed: gradients differ from finite differences beyond "
                         f"atol={atol:g}, rtol={rtol:g}: {bad}\n")
        raise typer.Exit(EXIT_EVAL)


@app.command()
def ops(
    name: Annotated[Optional[str], typer.Argument(help="Show only names containing this text.")] = None,
    kind: Annotated[Optional[str], typer.Option(help="Show only this kind: op, creation or function.")] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print a JSON array instead of a table.")] = False,
) -> None:
    """List the supported ops: name, signature, grad_fn and derivative note, from the op table itself."""
    from .catalog import list_ops

    if kind is not None and kind not in ("op", "creation", "function"):
        raise typer.Exit(report_error(InputError(f"--kind must be op, creation or function, got {kind!r}",
                                                 type="UsageError")))
    infos = list_ops(kind=kind, name=name)
    if json_:
        from .render.json import dumps

        sys.stdout.write(dumps([i.to_dict() for i in infos]) + "\n")
        return
    from .render.table import render_ops

    render_ops(infos, _stdout_console())


@app.command()
def run(
    path: Annotated[str, typer.Argument(help="The program file; '-' reads standard input.")],
    keep_going: Annotated[bool, typer.Option("--keep-going", help="Report an error and go on with the next "
                                                                 "top-level statement; exit 1 at the end if any "
                                                                 "failed.")] = False,
    notebook: Annotated[bool, typer.Option("--notebook", help="Show the value of each cell's last expression as "
                                                              "Jupyter does (cells begin at '# In[n]:' or '# %%' "
                                                              "lines; without them the file is one cell).")] = False,
    seed: Annotated[Optional[int], typer.Option(help="Seed for rand/randn/randint.")] = None,
    dtype: Annotated[str, typer.Option(help="Default float dtype: float32 (PyTorch's default) or "
                                             "float64.")] = "float32",
    max_steps: Annotated[Optional[int], typer.Option(min=1, help="Stop the program after this many statement "
                                                                 "executions (default 5,000,000).")] = None,
    limit: Annotated[Optional[List[str]], typer.Option("--limit", metavar="NAME=N", help=_LIMIT_HELP)] = None,
    anomaly: Annotated[bool, typer.Option("--anomaly", help=_ANOMALY_HELP)] = False,
    debug: Annotated[bool, typer.Option("--debug", help=_DEBUG_HELP)] = False,
) -> None:
    """Run a program like a Python script: print() shows values as PyTorch prints them, warnings go to
    standard error, an error shows file:line:col, the line with a caret and PyTorch's message (exit 1).
    Syntax errors stop the run before anything runs (exit 2)."""
    global _debug
    from . import limits
    from .runner import RunRequest, read_source, run_program

    _debug = debug
    try:
        _configure_limits(limit, steps=max_steps)
        source, filename = read_source(path)
        req = RunRequest(source=source, filename=filename, keep_going=keep_going, notebook=notebook,
                         max_steps=max_steps, seed=seed, dtype=dtype, anomaly=anomaly)
        result = run_program(req, write=sys.stdout.write, warn=sys.stderr.write, report=report_error)
    except GradcliError as err:
        if isinstance(err, limits.TimeLimitError):
            limits.disarm_time()
        raise typer.Exit(report_error(err))
    raise typer.Exit(result.exit_code)


class InputFormat(str, Enum):
    auto = "auto"
    text = "text"
    jsonl = "jsonl"


@app.command()
def batch(
    file: Annotated[str, typer.Argument(help="The entries: a text file (one program per line; a block ended "
                                             "by '---' for a multi-line entry) or JSON Lines; '-' reads "
                                             "standard input, streaming.")],
    json_: Annotated[bool, typer.Option("--json", help="Write JSON Lines: one object per entry, in input "
                                                       "order.")] = False,
    format: Annotated[InputFormat, typer.Option("--format", help="The input format; auto: .jsonl/.ndjson are "
                                                                 "JSON Lines, .txt/.gc text, otherwise JSON "
                                                                 "Lines if the first line starts with '{'.")
                      ] = InputFormat.auto,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Worker processes (the output keeps the "
                                                                  "input order).")] = 1,
    seed: Annotated[Optional[int], typer.Option(help="Seed rand/randn/randint in every entry (an entry's "
                                                     "own 'seed' wins).")] = None,
    dtype: Annotated[str, typer.Option(help="Default float dtype: float32 or float64 (an entry's own "
                                            "'dtype' wins).")] = "float32",
    max_steps: Annotated[Optional[int], typer.Option(min=1, help="Stop each program after this many statement "
                                                                 "executions (default 5,000,000).")] = None,
    limit: Annotated[Optional[List[str]], typer.Option("--limit", metavar="NAME=N",
                                                       help=_LIMIT_HELP + " In batch, time is per entry.")] = None,
    anomaly: Annotated[bool, typer.Option("--anomaly", help=_ANOMALY_HELP)] = False,
    debug: Annotated[bool, typer.Option("--debug", help=_DEBUG_HELP)] = False,
) -> None:
    """Evaluate a file of entries: one result per entry (a table row, or a JSON line with --json), written
    as soon as it is done; a summary on standard error. Exit 0 if every entry succeeded, 1 if any failed,
    2 if the file cannot be read."""
    global _debug
    from . import limits
    from .batch import run

    use_utf8(sys.stdout)
    use_utf8(sys.stderr)
    _debug = debug
    if debug:
        os.environ["GRADCLI_DEBUG"] = "1"  # for the entries, in this process and in --jobs workers
    try:
        _configure_limits(limit, steps=max_steps)
    except GradcliError as err:
        raise typer.Exit(report_error(err))
    limits.disarm_time()  # in batch, the time limit applies to each entry (batch.runner.run_entry)
    raise typer.Exit(run(file, fmt=format.value, jobs=jobs, as_json=json_, dtype=dtype, seed=seed,
                         max_steps=max_steps, anomaly=anomaly))


@app.command()
def schema(
    name: Annotated[str, typer.Argument(help="grad, batch or ops: the JSON output it describes.")],
) -> None:
    """Print the JSON Schema (draft 2020-12) of a JSON output: 'grad' (gradcli grad --json), 'batch' (one
    line of gradcli batch --json), 'ops' (gradcli ops --json)."""
    from .schemas import NAMES, schema_text

    if name not in NAMES:
        raise typer.Exit(report_error(InputError(f"no schema named {name!r}; the schemas are: "
                                                 f"{', '.join(NAMES)}", type="UsageError")))
    sys.stdout.write(schema_text(name))


def main() -> None:
    """Entry point of the ``gradcli`` console script and ``python -m gradcli``: the limits from the
    environment, the process guards (memory, time), and no traceback for anything that escapes a command
    (``--debug`` or ``GRADCLI_DEBUG=1`` show it)."""
    global _process_guards, _debug
    import warnings

    import numpy as np

    # JSON and tables may hold any character: write UTF-8 whatever the locale.
    use_utf8(sys.stdout)
    use_utf8(sys.stderr)
    from . import limits

    # PyTorch never warns about overflow or invalid values (or the mean of nothing); NaN/inf show in the results
    # instead, flagged as nonfinite.
    np.seterr(all="ignore")
    warnings.filterwarnings("ignore", category=RuntimeWarning, module="numpy")
    _debug = False
    try:
        limits.configure()
        limits.install_process_guards()
        _process_guards = True
        app()
    except KeyboardInterrupt:
        limits.disarm_time()
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except BrokenPipeError:  # `gradcli run prog.py | head`: the reader has gone; stop quietly

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error when Python flushes at exit
        sys.exit(EXIT_EVAL)
    except GradcliError as err:  # e.g. the time limit while writing results
        limits.disarm_time()
        sys.exit(report_error(err))
    except MemoryError as exc:
        limits.disarm_time()
        sys.exit(report_error(limits.memory_error(exc)))
    except RecursionError as exc:
        limits.disarm_time()
        sys.exit(report_error(EvalError.from_exception(exc)))
    except Exception as exc:  # a bug in gradcli: say so, without a traceback unless --debug
        limits.disarm_time()
        if _debug_enabled():
            sys.stderr.write(_traceback(exc))
        sys.stderr.write(f"gradcli: internal error: {type(exc).__name__}: {exc}\n"
                         "Please report this with the command that caused it (add --debug for the traceback).\n")
        sys.exit(EXIT_EVAL)
    finally:
        _process_guards = False


__all__ = ["app", "main", "EXIT_INPUT"]

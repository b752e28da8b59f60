"""The ``gradcli`` command (typer): read input, call the core, hand the result to one renderer.

Exit codes: 0 success, 1 evaluation error, 2 bad input (syntax errors, unreadable files, bad options).
Errors go to standard error as ``file:line:col:``, the line with a caret, and ``Type: message``; standard
output carries only results. ``--debug`` (or ``GRADCLI_DEBUG=1``) adds the internal traceback.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, List, Optional

import typer

from .errors import EXIT_EVAL, EXIT_INPUT, EvalError, GradcliError

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
    limit: Annotated[Optional[List[str]], typer.Option("--limit", metavar="NAME=N",
                                                       help="Raise or lower a limit (repeatable): elements, items, "
                                                            "int_bits, chars, nesting, steps, call_depth, "
                                                            "graph_nodes, file_bytes, memory, time; 'none' removes "
                                                            "it. Also GRADCLI_MAX_<NAME>.")] = None,
    anomaly: Annotated[bool, typer.Option("--anomaly", help="Stop at the first op whose backward produces NaN or "
                                                            "infinity and show where the program called it "
                                                            "(torch.autograd.detect_anomaly).")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show the internal traceback with errors (for bug "
                                                        "reports).")] = False,
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
        from .render.table import render_grad

        render_grad(result, _stdout_console(), dtypes.get_default_dtype().np)
    from .render.table import nonfinite_warning

    warning = nonfinite_warning(result)
    if warning:
        sys.stderr.write(warning + "\n")


def main() -> None:
    """Entry point of the ``gradcli`` console script and ``python -m gradcli``: the limits from the
    environment, the process guards (memory, time), and no traceback for anything that escapes a command
    (``--debug`` or ``GRADCLI_DEBUG=1`` show it)."""
    global _process_guards, _debug
    import warnings

    import numpy as np

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

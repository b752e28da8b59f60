"""The ``gradcli`` command (typer): read input, call the core, hand the result to one renderer.

Exit codes: 0 success, 1 evaluation error, 2 bad input (syntax errors, unreadable files, bad options).
Errors go to standard error as ``file:line:col:``, the line with a caret, and ``Type: message``; standard
output carries only results.
"""

from __future__ import annotations

import sys
from typing import Annotated, List, Optional

import typer

from .errors import EXIT_EVAL, EXIT_INPUT, GradcliError, InputError

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


def report_error(err: GradcliError) -> int:
    """Write a gradcli error to standard error; returns its exit code."""
    sys.stderr.write(err.format() + "\n")
    sys.stderr.flush()
    return err.exit_code


def _read_program(program: str) -> tuple[str, str]:
    """``PROGRAM`` is the text itself, ``@path`` for a file, or ``-`` for standard input."""
    from .runner import read_source

    if program == "-" or program.startswith("@"):
        return read_source(program if program == "-" else program[1:])
    return program, "<expr>"


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
    max_steps: Annotated[Optional[int], typer.Option(help="Stop programs after this many statement "
                                                          "executions (default 5,000,000).")] = None,
) -> None:
    """Compute a program's output, the gradient of every input, and show the autograd graph."""
    from .calculator import GradRequest, compute

    try:
        text, filename = _read_program(program)
        req = GradRequest(program=text, inputs=input or [], consts=const or [], gradient=gradient, repeat=repeat,
                          zero_grad=zero_grad, seed=seed, dtype=dtype, filename=filename, max_steps=max_steps)
        # Program prints go to stdout with tables, to stderr with --json (stdout is one JSON document).
        write = sys.stderr.write if json_ else sys.stdout.write
        result = compute(req, write=write)
    except GradcliError as err:
        raise typer.Exit(report_error(err))
    if json_:
        from .render.json import dumps, grad_result_to_dict

        sys.stdout.write(dumps(grad_result_to_dict(result)) + "\n")
    else:
        from . import dtypes
        from .render.table import render_grad

        render_grad(result, _stdout_console(), dtypes.get_default_dtype().np)


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
) -> None:
    """Run a program like a Python script: print() shows values as PyTorch prints them, warnings go to
    standard error, an error shows file:line:col, the line with a caret and PyTorch's message (exit 1).
    Syntax errors stop the run before anything runs (exit 2)."""
    from .runner import RunRequest, read_source, run_program

    try:
        source, filename = read_source(path)
        req = RunRequest(source=source, filename=filename, keep_going=keep_going, notebook=notebook,
                         max_steps=max_steps, seed=seed, dtype=dtype)
        result = run_program(req, write=sys.stdout.write, warn=sys.stderr.write, report=report_error)
    except GradcliError as err:
        raise typer.Exit(report_error(err))
    raise typer.Exit(result.exit_code)


def main() -> None:
    """Entry point of the ``gradcli`` console script and ``python -m gradcli``."""
    import numpy as np

    # PyTorch never warns about overflow or invalid values; NaN/inf show in the results instead.
    np.seterr(all="ignore")
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except BrokenPipeError:  # `gradcli run prog.py | head`: the reader has gone; stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error when Python flushes at exit
        sys.exit(EXIT_EVAL)
    except Exception as exc:  # a bug in gradcli: say so, without a traceback
        sys.stderr.write(f"gradcli: internal error: {type(exc).__name__}: {exc}\n"
                         "Please report this with the command that caused it.\n")
        sys.exit(EXIT_EVAL)


__all__ = ["app", "main", "EXIT_INPUT"]

"""The ``gradcli`` command (typer): read input, call the core, hand the result to one renderer.

Exit codes: 0 success, 1 evaluation error, 2 bad input (syntax errors, unreadable files, bad options).
Errors go to standard error as ``file:line:col:``, the line with a caret, and ``Type: message``; standard
output carries only results.
"""

from __future__ import annotations

import sys
from enum import Enum
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


def use_utf8(stream) -> None:
    """Make a text stream write UTF-8 whatever the locale (JSON and tables may hold any character)."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(encoding="utf-8")
        except (ValueError, OSError):
            pass


def _read_program(program: str) -> tuple[str, str]:
    """``PROGRAM`` is the text itself, ``@path`` for a file, or ``-`` for standard input."""
    if program == "-":
        return sys.stdin.read(), "<stdin>"
    if program.startswith("@"):
        from pathlib import Path

        path = Path(program[1:])
        try:
            return path.read_text(encoding="utf-8"), program[1:]
        except FileNotFoundError:
            raise InputError(f"no such file: {program[1:]}", type="FileNotFoundError") from None
        except IsADirectoryError:
            raise InputError(f"{program[1:]} is a directory", type="IsADirectoryError") from None
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"cannot read {program[1:]}: {e}", type="OSError") from None
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
    max_steps: Annotated[Optional[int], typer.Option(help="Stop each program after this many statement "
                                                          "executions (default 5,000,000).")] = None,
) -> None:
    """Evaluate a file of entries: one result per entry (a table row, or a JSON line with --json), written
    as soon as it is done; a summary on standard error. Exit 0 if every entry succeeded, 1 if any failed,
    2 if the file cannot be read."""
    from .batch import run

    use_utf8(sys.stdout)
    use_utf8(sys.stderr)
    raise typer.Exit(run(file, fmt=format.value, jobs=jobs, as_json=json_, dtype=dtype, seed=seed,
                         max_steps=max_steps))


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
    """Entry point of the ``gradcli`` console script and ``python -m gradcli``."""
    import numpy as np

    # JSON and tables may hold any character: write UTF-8 whatever the locale.
    use_utf8(sys.stdout)
    use_utf8(sys.stderr)

    # PyTorch never warns about overflow or invalid values; NaN/inf show in the results instead.
    np.seterr(all="ignore")
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except Exception as exc:  # a bug in gradcli: say so, without a traceback
        sys.stderr.write(f"gradcli: internal error: {type(exc).__name__}: {exc}\n"
                         "Please report this with the command that caused it.\n")
        sys.exit(EXIT_EVAL)


__all__ = ["app", "main", "EXIT_INPUT"]

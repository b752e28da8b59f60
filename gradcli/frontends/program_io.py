"""What a program run from the command line may reach of the process: where its printed text goes (escaped on a
terminal, as it is with ``--raw-output`` or when piped), the directories it may read files in
(``--allow-read``), and what a failed write of the output is reported as."""

from __future__ import annotations

import errno
import os
from typing import Annotated, List, Optional

import typer

from ..app.reporting import silence_stdout
from ..engine.errors import GradcliError

#: Why writing the output can fail: a full disk or device (``> /dev/full``), a closed standard output
#: (``>&-``), an output device's error, a file or quota limit.
OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EBADF, errno.EIO, errno.EFBIG, errno.EDQUOT})


def output_error(exc: OSError) -> GradcliError:
    """The error reported when the output cannot be written (exit 1); what is still buffered is dropped, so
    that Python's final flush does not report it again."""
    silence_stdout()
    return GradcliError(f"cannot write to standard output: {exc.strerror or exc}", type="OutputError")


class ClosedOutput:
    """Standard output when the process started with it closed (``gradcli ... >&-``): writing is the error
    Python's own stream would give (EBADF), reported as :func:`output_error`."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "standard output is closed")


RawOutput = Annotated[bool, typer.Option(
    "--raw-output", help="Write what the program prints as it is, control characters included (by default, on a "
                         "terminal, they are written escaped as Python's repr writes them; piped output is "
                         "always as it is).")]


AllowRead = Annotated[Optional[List[str]], typer.Option(
    "--allow-read", metavar="DIR", help="Let the program read files (open(path), Path.read_text(); never write) "
                                        "under DIR; repeatable. Reads count against --limit file_bytes.")]


def allow_reading(directories, program_path: str | None = None):
    """``with allow_reading(...):`` the directories the runs started in the block may read files in:
    ``directories`` (``--allow-read``), and for ``gradcli run`` the program file's own directory (not for
    standard input). Afterwards the process allows what it allowed before (nothing, for the commands)."""
    from ..language import files  # the language is loaded by the commands that run a program

    dirs = list(directories or [])
    if program_path and program_path != "-":
        dirs.append(os.path.dirname(os.path.abspath(program_path)))
    return files.reading_allowed(dirs, "--allow-read DIR")


def program_output(stream, raw: bool = False):
    """The function that writes a program's printed text to ``stream``: as it is when ``raw`` or when the stream
    is not a terminal, else with control characters escaped (:func:`~gradcli.engine.errors.escape_controls`),
    so that a program cannot drive the terminal (set its title, move its cursor)."""
    isatty = getattr(stream, "isatty", None)
    if raw or not (isatty is not None and isatty()):
        return stream.write
    from ..engine.errors import escape_controls  # (the errors module is loaded by now)

    return lambda text: stream.write(escape_controls(text))

"""From an exception to what the user sees: one message on standard error and the exit status.

Every command reports through :func:`report_exception` (``gradcli.frontends.cli``), and each ``gradcli batch`` entry
turns its exception into its error with the same ladder, :func:`to_error`:

=======================  ============================================================  ====
exception                reported as                                                   exit
=======================  ============================================================  ====
GradcliError             itself: ``file:line:col:``, the line with a caret, ``Type:     1, 2
                         message``, the hint (:meth:`~gradcli.engine.errors.GradcliError.format`)
MemoryError              ``MemoryError: out of memory ...`` with how to raise the limit  1
RecursionError           ``RecursionError: ...``                                       1
any other Exception      :class:`InternalError`: a bug in gradcli                       1
KeyboardInterrupt        ``interrupted``                                               130
BrokenPipeError          nothing: the reader of standard output went away              141
=======================  ============================================================  ====

``debug`` (``--debug``, or ``GRADCLI_DEBUG=1`` for every command: :func:`debug_enabled`) writes the internal
traceback first. Nothing here keeps state: the flag is passed in by the caller.
"""

from __future__ import annotations

import os
import sys

from ..engine.errors import EvalError, GradcliError, escape_controls

#: Exit status when interrupted (SIGINT, Ctrl-C): 128 + SIGINT, as shells report it.
EXIT_INTERRUPTED = 130


class InternalError(GradcliError):
    """A bug in gradcli: an exception that is none of gradcli's errors (exit 1). ``exc`` is that exception.

    As the error of a batch entry its message is ``ZeroDivisionError: ... (a bug in gradcli; please report
    it)``; as a command's error, :meth:`format` asks for a bug report."""

    default_type = "InternalError"

    def __init__(self, exc: BaseException):
        super().__init__(f"{type(exc).__name__}: {exc} (a bug in gradcli; please report it)")
        self.exc = exc

    def format(self) -> str:
        return escape_controls(f"gradcli: internal error: {type(self.exc).__name__}: {self.exc}\n"
                               "Please report this with the command that caused it (add --debug for the traceback).")


def to_error(exc: BaseException) -> GradcliError:
    """The one exception → error ladder (see the module docstring): a GradcliError is itself, a MemoryError the
    ``memory`` limit's error, a RecursionError an :class:`~gradcli.engine.errors.EvalError` of that type, anything
    else an :class:`InternalError`."""
    if isinstance(exc, GradcliError):
        return exc
    if isinstance(exc, MemoryError):
        from ..engine import limits  # deferred: --help loads this module, and must not load the limits

        return limits.memory_error(exc)
    if isinstance(exc, RecursionError):
        return EvalError.from_exception(exc)
    return InternalError(exc)


def debug_enabled(flag: bool = False) -> bool:
    """``--debug`` was given (``flag``) or the environment variable ``GRADCLI_DEBUG`` is set (not 0)."""
    return flag or os.environ.get("GRADCLI_DEBUG", "") not in ("", "0")


def traceback_text(exc: BaseException) -> str:
    """The traceback of ``exc`` and of the exceptions it was raised from (innermost last), for ``--debug``."""
    import traceback

    chain = []
    e = exc
    while e is not None and e not in chain:
        chain.append(e)
        e = e.__cause__ or e.__context__
    return "".join("".join(traceback.format_exception(type(e), e, e.__traceback__, chain=False))
                   for e in reversed(chain))


def _stderr(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):  # standard error is closed: nothing more to say
        pass


def report_error(err: GradcliError, debug: bool = False) -> int:
    """Write a gradcli error to standard error (after the internal traceback when ``debug``); returns its exit
    code."""
    if debug:
        _stderr(traceback_text(err))
    _stderr(err.format() + "\n")
    return err.exit_code


#: A closed standard output (``gradcli grad ... | head -1``): 128 + SIGPIPE, quietly, as ``gradcli batch``.
EXIT_BROKEN_PIPE = 141


def silence_stdout() -> None:
    """After the reader of standard output went away: send what is still buffered to the null device, so that
    Python's final flush does not report a BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def report_exception(exc: BaseException, debug: bool = False) -> int:
    """Report whatever a command raised (see the module docstring) and return the exit status. The ``time``
    guard is disarmed first, so that it cannot interrupt the report."""
    limits = sys.modules.get("gradcli.engine.limits")  # not imported: no guard was armed (and --help stays numpy-free)
    if limits is not None:
        limits.disarm_time()
    if isinstance(exc, KeyboardInterrupt):
        _stderr("interrupted\n")
        return EXIT_INTERRUPTED
    if isinstance(exc, BrokenPipeError):
        silence_stdout()
        return EXIT_BROKEN_PIPE
    if debug:
        _stderr(traceback_text(exc))
    err = to_error(exc)
    _stderr(err.format() + "\n")
    return err.exit_code

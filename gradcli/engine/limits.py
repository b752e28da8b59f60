"""Resource limits: what one run of gradcli may use, checked before the work is done.

gradcli reads programs and files from people and from other programs, so every resource a run can consume is
bounded. Each limit has a name, a default, an environment variable ``GRADCLI_MAX_<NAME>`` and the command-line
form ``--limit NAME=N`` (``--max-steps`` also sets ``steps``). A value of ``none`` (or 0) removes a limit.

==========  ==============  ===================================================================================
name        default         what it bounds (exceeding it is a ``LimitError``)
==========  ==============  ===================================================================================
elements    100,000,000     elements of one tensor: creation, broadcasting, matmul, expand, indexing, files
items       10,000,000      items of one Python list/tuple/dict/set/string a program builds (``[0] * n``, ``s + s``)
int_bits    100,000         bits of a Python integer (``10 ** 10 ** 10`` is refused, not computed)
chars       100,000         characters of a program or input spec (checked before parsing; exit 2)
nesting     1,000           nesting depth of expressions and blocks (checked after parsing; exit 2)
steps       5,000,000       statement executions of a program (loops)
call_depth  1,000           nested calls of functions defined in the program (Python's default)
graph_nodes 1,000,000       autograd graph nodes one program run records
file_bytes  64 MiB          size of a program file, standard input or a .json/.csv file (.npy: ``elements``)
memory      3/4 of RAM      address space of the ``gradcli`` process (an OS limit: allocations fail cleanly)
time        300             wall-clock seconds of the ``gradcli`` process (of each entry in ``gradcli batch``);
                            SIGALRM, and a watchdog process for work inside one C call (:func:`start_watchdog`)
==========  ==============  ===================================================================================

``memory`` and ``time`` are process guards that only the ``gradcli`` command installs (they would affect a
host program); the others apply wherever gradcli's engine and language run. Library users change them with
:func:`configure`.

This module supplies the numbers and the errors; the limits are part of the run context
(:mod:`gradcli.engine.context`), and the checks are made where the work is: by the ops, the language, and the
autograd engine, which counts the graph nodes of a program run (``graph_nodes``).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import asdict, dataclass, field
from typing import NamedTuple

import numpy as np

from .errors import InputError, InputLimitError, LimitError

UNLIMITED = sys.maxsize


class LimitSpec(NamedTuple):
    """One limit: its name, default (None: computed, see :func:`_default_memory`), unit and meaning. (A
    NamedTuple: a frozen dataclass cost ten times as much to create at every start-up.)"""
    name: str
    default: int | None
    doc: str
    unit: str = ""
    input_error: bool = False  # exceeded while reading input (exit 2) rather than while running (exit 1)

    @property
    def env(self) -> str:
        """The environment variable that sets it, e.g. ``GRADCLI_MAX_ELEMENTS``."""
        return "GRADCLI_MAX_" + self.name.upper()


SPECS = {s.name: s for s in [
    LimitSpec("elements", 100_000_000, "elements per tensor"),
    LimitSpec("items", 10_000_000, "items per Python list, tuple or string"),
    LimitSpec("int_bits", 100_000, "bits per Python integer"),
    LimitSpec("chars", 100_000, "characters per program or input spec", input_error=True),
    LimitSpec("nesting", 1_000, "nesting depth of expressions and blocks", input_error=True),
    LimitSpec("steps", 5_000_000, "statement executions per program"),
    LimitSpec("call_depth", 1_000, "nested calls of program functions"),
    LimitSpec("graph_nodes", 1_000_000, "autograd graph nodes per program run"),
    LimitSpec("file_bytes", 64 * 1024 * 1024, "bytes per program or data file", "bytes", input_error=True),
    LimitSpec("memory", None, "bytes of address space of the gradcli process", "bytes"),
    LimitSpec("time", 300, "seconds of wall-clock time of the gradcli process, or of one batch entry", "seconds"),
]}


def _default_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") * 3 // 4
    except (ValueError, OSError, AttributeError):
        return 8 * 1024 ** 3


@dataclass
class Limits:
    """The active values, one attribute per limit of :data:`SPECS` (``UNLIMITED`` when removed)."""
    elements: int = SPECS["elements"].default
    items: int = SPECS["items"].default
    int_bits: int = SPECS["int_bits"].default
    chars: int = SPECS["chars"].default
    nesting: int = SPECS["nesting"].default
    steps: int = SPECS["steps"].default
    call_depth: int = SPECS["call_depth"].default
    graph_nodes: int = SPECS["graph_nodes"].default
    file_bytes: int = SPECS["file_bytes"].default
    memory: int = field(default_factory=_default_memory)
    time: int = SPECS["time"].default

    def as_dict(self) -> dict:
        """Name → value."""
        return asdict(self)


#: The limits of the active run context (:mod:`gradcli.engine.context`, which swaps this holder when a context is
#: activated). Hot paths read attributes of this object; :func:`configure` replaces it.
current = Limits()

_SUFFIX = {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3, "t": 1024 ** 4}
_VALUE_RE = re.compile(r"^\s*([0-9][0-9_]*(?:\.[0-9]*)?(?:[eE][+]?[0-9]+)?)\s*([kKmMgGtT]?)(?:i?[bB])?\s*$")


def parse_value(name: str, text: str, where: str) -> int:
    """A limit value from text: a whole number (``100_000``, ``1e9``; for byte limits a K/M/G/T suffix, powers
    of 1024), or ``none``/``0`` for no limit.

    Raises:
        InputError: for anything else, naming ``where`` the value came from (an option or variable).
    """
    t = text.strip()
    if t.lower() in ("none", "inf", "unlimited", "0"):
        return UNLIMITED
    m = _VALUE_RE.match(t)
    if m and (not m.group(2) or SPECS[name].unit == "bytes"):
        value = float(m.group(1).replace("_", "")) * _SUFFIX[m.group(2).lower()]
        if value >= 1 and value == int(value):
            return min(int(value), UNLIMITED)
    unit = " (K, M, G suffixes allowed)" if SPECS[name].unit == "bytes" else ""
    raise InputError(f"{where}: expected a positive whole number{unit} or 'none', got {text!r}",
                     type="UsageError")


def parse_option(text: str) -> tuple[str, int]:
    """``NAME=N`` from ``--limit`` (dashes or underscores in NAME).

    Raises:
        InputError: for an unknown name or a bad value, listing the names.
    """
    name, sep, value = text.partition("=")
    key = name.strip().lower().replace("-", "_")
    if not sep or key not in SPECS:
        raise InputError(f"--limit expects NAME=N with NAME one of {', '.join(SPECS)}; got {text!r}",
                         type="UsageError")
    return key, parse_value(key, value, f"--limit {key}")


def configure(overrides: dict | None = None, environ=None) -> Limits:
    """Set the limits of the active run context: defaults, then ``GRADCLI_MAX_*`` environment variables, then
    ``overrides`` (name → int). Returns the new :data:`current`.

    Raises:
        InputError: for a malformed environment variable.
    """
    global current
    env = os.environ if environ is None else environ
    values = {}
    for name, spec in SPECS.items():
        if spec.env in env and env[spec.env].strip():
            values[name] = parse_value(name, env[spec.env], spec.env)
    values.update(overrides or {})
    current = Limits(**values)
    return current


def _fmt(n: int) -> str:
    return "none" if n >= UNLIMITED else f"{n:,}"


def exceeded(name: str, what: str, value: int | None = None):
    """The error for limit ``name``: ``what`` says what was asked for, ``value`` is the limit (default: the
    active one); the hint says how to raise it. Returns a :class:`LimitError` (or :class:`InputLimitError` for
    input limits) for the caller to raise."""
    spec = SPECS[name]
    cls = InputLimitError if spec.input_error else LimitError
    value = vars(current)[name] if value is None else value
    unit = f" {spec.unit}" if spec.unit and spec.unit != "bytes" else ""
    err = cls(f"{what}; the limit is {_fmt(value)}{unit} ({spec.doc})",
              hint=f"raise it with --limit {name}=N or the environment variable {spec.env}=N")
    err.limit = name
    return err


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def check_numel(shape, what: str = "the result") -> None:
    """Refuse a tensor of ``shape`` (a sequence of ints) with more elements than ``elements``.

    Raises:
        LimitError: before anything is allocated.
    """
    n = _numel(shape)
    if n > current.elements:
        raise exceeded("elements", f"{what} would have shape {list(int(s) for s in shape)}, {n:,} elements")


def check_operands(arrays) -> None:
    """Refuse an op whose tensor operands broadcast to more than ``elements`` elements.

    Cheap in the common case: the product of the operands' sizes bounds the broadcast size (an operand of size
    0 broadcasts to size 0), and only when that bound is over the limit is the broadcast shape computed.
    Operands that do not broadcast are left to the op, which reports its own error. ``arrays`` holds numpy
    arrays, numbers or None.
    """
    if len(arrays) == 2:  # the common case, kept cheap: this runs for every binary op
        a, b = arrays
        if type(a) is np.ndarray and type(b) is np.ndarray and a.size * b.size <= current.elements:
            return
    bound = 1
    for a in arrays:
        if type(a) is np.ndarray:
            bound *= a.size
    if bound <= current.elements:
        return
    shapes = [a.shape for a in arrays if type(a) is np.ndarray]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        return
    check_numel(shape, "broadcasting " + " and ".join(str(list(s)) for s in shapes))


def matmul_shape(a: tuple, b: tuple) -> tuple | None:
    """The shape of ``matmul`` of operands of shapes ``a`` and ``b`` (numpy/PyTorch rules, batch dimensions
    broadcast), or None when they do not multiply (the op reports that)."""
    if not a or not b:
        return None
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    try:
        batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError:
        return None
    out = tuple(batch) + (a2[-2], b2[-1])
    if len(b) == 1:
        out = out[:-1]
    if len(a) == 1:
        out = out[:-2] + out[-1:] if len(b) > 1 else out[:-1]
    return out


def check_matmul(a_shape, b_shape) -> None:
    """Refuse a matrix product whose result would have more than ``elements`` elements.

    Raises:
        LimitError: before the product is computed.
    """
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)
    if _numel(max(s, 1) for s in a_shape) * _numel(max(s, 1) for s in b_shape) <= current.elements:
        return  # an upper bound of the result's size (every dimension comes from one operand) is under it
    shape = matmul_shape(a_shape, b_shape)
    if shape is not None:
        check_numel(shape, f"the matrix product of {list(a_shape)} and {list(b_shape)}")


def check_items(n: int, what: str = "the result") -> None:
    """Refuse a Python list, tuple or string of more than ``items`` items.

    Raises:
        LimitError: before it is built.
    """
    if n > current.items:
        raise exceeded("items", f"{what} would have {n:,} items")


def check_int_bits(bits: int, what: str) -> None:
    """Refuse a Python integer of more than ``int_bits`` bits.

    Raises:
        LimitError: before it is computed.
    """
    if bits > current.int_bits:
        raise exceeded("int_bits", f"{what} would have about {bits:,} bits")


def check_source(text: str, filename: str) -> None:
    """Refuse a program or spec longer than ``chars`` characters (parsing time grows with length).

    Raises:
        InputLimitError: before parsing (exit 2).
    """
    if len(text) > current.chars:
        err = exceeded("chars", f"{filename} has {len(text):,} characters")
        raise err


def check_file_size(size: int, name: str, stream: bool = False) -> None:
    """Refuse a file (or, with ``stream``, standard input or a pipe read up to one byte over the limit) of
    more than ``file_bytes`` bytes.

    Raises:
        InputLimitError: before reading it whole (exit 2).
    """
    if size > current.file_bytes:
        raise exceeded("file_bytes", f"{name} is {'more than ' if stream else ''}{size - stream:,} bytes")


# ------------------------------------------------------------------------------------------ process guards
class TimeLimitError(LimitError):
    """The ``time`` limit of the gradcli process ran out (exit code 1)."""


def install_process_guards() -> None:
    """Apply ``memory`` (RLIMIT_AS: allocations beyond it fail with MemoryError instead of waking the
    out-of-memory killer) and ``time`` (SIGALRM raises :class:`TimeLimitError` where the program is, and again
    every second in case something swallowed it) to this process. For the ``gradcli`` command only; a no-op
    where the platform lacks them."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Linux/macOS
        resource = None
    if resource is not None:
        want = current.memory if current.memory < UNLIMITED else resource.RLIM_INFINITY
        try:
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY and (want == resource.RLIM_INFINITY or want > hard):
                want = hard
            resource.setrlimit(resource.RLIMIT_AS, (want, hard))
        except (ValueError, OSError):
            pass
    import signal

    if not hasattr(signal, "setitimer"):  # pragma: no cover - Windows
        return
    if current.time >= UNLIMITED:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return

    def on_alarm(signum, frame):
        raise exceeded_time()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, float(current.time), 1.0)
    start_watchdog(current.time, "gradcli")


def disarm_time() -> None:
    """Stop the ``time`` guard and its watchdog (before reporting the error the process ends with)."""
    import signal

    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, 0)
    stop_watchdog()


#: Seconds the watchdog waits past the ``time`` limit for Python's own stop (the SIGALRM handler, which runs
#: between two of the interpreter's steps) before it kills the process: a tenth of the limit, from 2 to 10.
WATCHDOG_GRACE = (2.0, 0.1, 10.0)


def watchdog_grace(seconds: float) -> float:
    """The grace of :data:`WATCHDOG_GRACE` for a limit of ``seconds``."""
    low, share, high = WATCHDOG_GRACE
    return min(max(low, share * seconds), high)
#: The exit status of a process the watchdog killed, as a shell reports it: 128 + SIGKILL (Python's subprocess
#: says -9).
EXIT_KILLED = 137
_watchdog: list = []  # [pid, write end of its pipe] while one watches this process


def start_watchdog(seconds: float, what: str = "gradcli") -> None:
    """Watch this process from outside: a forked child that kills it with SIGKILL (exit status
    :data:`EXIT_KILLED`) after ``seconds`` + :func:`watchdog_grace`, unless :func:`stop_watchdog` is called or this
    process ends first. The one thing that stops work inside a single C call (``0.5 in range(10**15)``, a hash
    collision set, a long LAPACK call), which holds Python's interpreter lock and never reaches the SIGALRM
    handler. The child writes one line to standard error before the kill. Replaces a running watchdog; a no-op
    without ``fork`` (Windows) or when the limit is removed.

    The child only waits on a pipe: it reads end-of-file when this process closes its end (stop_watchdog, or its
    exit), and then ends; it kills nothing once this process is gone (its parent changed)."""
    stop_watchdog()
    if seconds >= UNLIMITED or not hasattr(os, "fork"):
        return
    import signal

    message = (f"LimitError: {what} ran for more than {int(seconds):,} seconds, the time limit, inside one "
               f"computation that Python cannot interrupt, and was killed (exit status {EXIT_KILLED}); raise the "
               f"limit with --limit time=N or the environment variable {SPECS['time'].env}=N\n"
               ).encode("utf-8", "replace")
    import select  # here, not in the child: a thread of this process may hold the import lock at the fork

    parent = os.getpid()
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no process to spare: Python's own stop (SIGALRM) is all there is
        os.close(read_end)
        os.close(write_end)
        return
    if pid == 0:  # the watchdog: signals and descriptors of its own, never back into the caller's code
        try:
            os.close(write_end)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the watched process
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            ready, _, _ = select.select([read_end], [], [], float(seconds) + watchdog_grace(seconds))
            if not ready and os.getppid() == parent:
                os.write(2, message)
                os.kill(parent, signal.SIGKILL)
        finally:
            os._exit(0)
    os.close(read_end)
    _watchdog[:] = [pid, write_end]


def stop_watchdog() -> None:
    """Stop the watchdog of :func:`start_watchdog`, if one runs (it ends on its own; reaped if it has)."""
    if not _watchdog:
        return
    pid, write_end = _watchdog
    _watchdog.clear()
    try:
        os.close(write_end)
        os.waitpid(pid, os.WNOHANG)
    except OSError:
        pass


def time_guard(what: str = "gradcli", hard: bool = False):
    """A context manager applying the ``time`` limit to its block alone (``gradcli batch``: each entry), in
    the main thread where SIGALRM exists; otherwise it does nothing. Restores the previous SIGALRM handler.
    ``hard``: also a :func:`start_watchdog` for the block, which kills the whole process when the block is stuck
    inside one C call past the limit (the session: its entries).

    Raises:
        TimeLimitError: ``what`` ran for longer than ``time`` seconds (raised where the block is).
    """
    import contextlib
    import signal
    import threading

    if (current.time >= UNLIMITED or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()):
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def guard():
        def on_alarm(signum, frame):
            raise exceeded_time(what)

        old = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, float(current.time), 1.0)
        if hard:
            start_watchdog(current.time, what)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if hard:
                stop_watchdog()
            signal.signal(signal.SIGALRM, old)

    return guard()


def exceeded_time(what: str = "gradcli") -> TimeLimitError:
    """The error raised when the ``time`` limit runs out (``what`` ran too long)."""
    err = TimeLimitError(f"{what} ran for {current.time:,} seconds; the limit is {current.time:,} seconds "
                         f"({SPECS['time'].doc})",
                         hint=f"raise it with --limit time=N or the environment variable {SPECS['time'].env}=N")
    err.limit = "time"
    return err


def memory_error(exc: BaseException | None = None) -> LimitError:
    """The error reported for a MemoryError (an allocation over the ``memory`` limit or the machine's)."""
    detail = f" ({exc})" if exc is not None and str(exc) else ""
    err = LimitError(f"out of memory{detail}; the memory limit is {_fmt(current.memory)} bytes "
                     f"({SPECS['memory'].doc})",
                     hint=f"raise it with --limit memory=N (K, M, G suffixes) or {SPECS['memory'].env}=N; "
                          f"smaller tensors need less")
    err.type = "MemoryError"
    err.limit = "memory"
    return err

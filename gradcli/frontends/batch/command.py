"""The ``gradcli batch`` command: open the input, run the entries, write each result as whole lines as soon as
it is done, and a summary on standard error; behave in pipes (a closed pipe ends quietly with status 141,
Ctrl-C ends with status 130 leaving only whole lines, output is UTF-8 whatever the locale).
"""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
import time
from contextlib import closing, contextmanager

from ...engine.errors import EXIT_EVAL, EXIT_OK, InputError
from ...engine.lazy import lazy
from ...app.reporting import EXIT_INTERRUPTED, report_error  # noqa: F401 - re-exported by the package
from .entries import FORMATS, Defaults, format_for, read_entries
from . import forking
from .runner import run_entries

#: The signals that stop a batch as Ctrl-C (SIGINT) does: the workers end, the summary says how many entries
#: were written, the exit status is 128 + the signal's number.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))

dask_runner = lazy("gradcli.frontends.batch.dask_runner")  # Dask: only with --dask
specs = lazy("gradcli.language.specs")

#: Exit status when the reader of standard output went away (``| head -1``): 128 + SIGPIPE, as shells report
#: a process killed by SIGPIPE.
EXIT_BROKEN_PIPE = 141

#: Seconds a batch runs before the progress bar appears (short runs never show it).
PROGRESS_DELAY = 0.5


class OutputClosed(Exception):
    """Standard output was closed by its reader (``| head -1``)."""


class LineWriter:
    """Writes whole lines to standard output, in UTF-8, each flushed at once; a Ctrl-C (SIGINT) that arrives
    during a write takes effect right after it, so an interrupted batch leaves only whole lines. A closed pipe
    raises :class:`OutputClosed`.

    Lines go straight to the file descriptor with ``os.write`` in a loop: a write to a full pipe that a signal
    interrupts after part of the data returns the part's size, and Python's buffered writer reports that
    short count without writing the rest (CPython 3.11), which would leave half a line. Streams without a
    file descriptor (tests' captured output) are written through their text layer.
    """

    def __init__(self, stream):
        self.stream = stream
        try:
            self._fd = stream.fileno()
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            self._fd = None
        self._deferring = 0  # depth of nested deferring_sigint blocks
        self._interrupted = False
        self.finished = False  # every entry was written: a SIGINT has nothing left to interrupt
        self.signal = None  # the signal that stopped the batch
        self.stopping = False  # the batch is ending (its workers stopping, its summary being written)

    @contextmanager
    def deferring_sigint(self):
        """A block in which a SIGINT waits (it is raised as KeyboardInterrupt at the end of the block): a line
        is written whole and counted."""
        self._deferring += 1
        try:
            yield
        finally:
            self._deferring -= 1
        if self._interrupted and not self._deferring:
            raise KeyboardInterrupt

    def write(self, text: str) -> None:
        """Write ``text`` (one or more whole lines) and flush it, with SIGINT deferred.

        Raises:
            OutputClosed: the reader went away.
            KeyboardInterrupt: a SIGINT arrived during the write.
        """
        with self.deferring_sigint():
            try:
                if self._fd is None:
                    self.stream.write(text)
                    self.stream.flush()
                else:
                    self.stream.flush()  # anything written through sys.stdout before goes first
                    data = memoryview(text.encode("utf-8"))
                    while data:
                        data = data[os.write(self._fd, data):]
            except BrokenPipeError:
                raise OutputClosed() from None

    def on_sigint(self, signum, frame) -> None:
        """The handler of SIGINT, SIGTERM and SIGHUP while a batch runs (ignored once it has :attr:`finished`):
        the batch stops as for Ctrl-C, after the line being written; :attr:`signal` remembers which came."""
        if self.finished or self.stopping:
            return
        if self.signal is None or signum != signal.SIGINT:
            self.signal = signum
        if self._deferring:
            self._interrupted = True
        else:
            raise KeyboardInterrupt

    def silence(self) -> None:
        """After the reader went away: send what is still buffered to the null device, so that Python's
        final flush does not report a BrokenPipeError."""
        if self._fd is None:
            return
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._fd)
            os.close(devnull)
        except OSError:
            pass


class Progress:
    """A rich progress bar on standard error, shown only when ``enabled`` (standard error is a terminal and
    results go elsewhere) and the batch has run for :data:`PROGRESS_DELAY` seconds. ``total`` is the input's
    size in bytes (None for a pipe: the bar then just pulses)."""

    def __init__(self, total: int | None, enabled: bool):
        self.enabled = enabled
        self._lock = threading.Lock()
        self._started = False
        self._stopped = False
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (BarColumn, Progress as RichProgress, SpinnerColumn, TaskProgressColumn,
                                   TextColumn, TimeElapsedColumn)

        self._bar = RichProgress(SpinnerColumn(), BarColumn(), TaskProgressColumn(),
                                 TextColumn("{task.fields[entries]} entries, {task.fields[failed]} failed"),
                                 TimeElapsedColumn(), console=Console(stderr=True), transient=True,
                                 redirect_stdout=False, redirect_stderr=False)
        self._task = self._bar.add_task("batch", total=total, entries=0, failed=0)
        self._timer = threading.Timer(PROGRESS_DELAY, self._start)
        self._timer.daemon = True
        self._timer.start()

    def _start(self) -> None:
        with self._lock:
            if not self._stopped:
                self._bar.start()
                self._started = True

    def update(self, end: int, entries: int, failed: int) -> None:
        """After an entry: ``end`` bytes of input consumed, ``entries`` done, ``failed`` of them failed."""
        if self.enabled:
            self._bar.update(self._task, completed=end, entries=entries, failed=failed)

    def message(self, text: str) -> None:
        """Write ``text`` to standard error (above the bar when it is shown)."""
        with self._lock:
            if self._started and not self._stopped:
                from rich.text import Text

                self._bar.console.print(Text(text.rstrip("\n")))
                return
        _stderr(text)

    def stop(self) -> None:
        """Remove the bar (idempotent)."""
        if not self.enabled:
            return
        with self._lock:
            self._stopped = True
            self._timer.cancel()
            if self._started:
                self._bar.stop()


def _stderr(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _restore_sigint(old_handler) -> None:
    signal.signal(signal.SIGINT, old_handler if old_handler is not None else signal.SIG_DFL)


def _prefixed(messages: str, name: str, line: int) -> str:
    return "".join(f"{name}:{line}: {m}\n" for m in messages.rstrip("\n").split("\n"))


def _close_client(client) -> None:
    """Close a Dask client without waiting long for a scheduler that is gone, and without a traceback."""
    try:
        client.close(timeout=5)
    except Exception:
        pass


class FdLines:
    """Lines of a file descriptor read with ``os.read`` (``readline(size)`` as a binary file's): standard input
    as the batch reads it. A reader thread blocked in Python's buffered ``sys.stdin.buffer.readline`` holds that
    buffer's lock, and an interpreter that exits meanwhile (a batch stopped by a signal while standard input
    is still open) aborts on it ("could not acquire lock ... at interpreter shutdown"); ``os.read`` holds no
    lock."""

    CHUNK = 1 << 16

    def __init__(self, fd: int):
        self.fd = fd
        self._buf = bytearray()
        self._eof = False

    def readline(self, size: int = -1) -> bytes:
        while True:
            cut = self._buf.find(b"\n")
            if cut >= 0 and (size < 0 or cut < size):
                return self._take(cut + 1)
            if 0 <= size <= len(self._buf):
                return self._take(size)
            if self._eof:
                return self._take(len(self._buf))
            data = os.read(self.fd, self.CHUNK)
            if not data:
                self._eof = True
            self._buf += data

    def _take(self, n: int) -> bytes:
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def close(self) -> None:
        pass


def open_input(path: str):
    """Open the batch input: ``(binary stream, name for messages, size in bytes or None)``; ``-`` is standard
    input.

    Raises:
        InputError: the file cannot be opened, or is a directory (exit 2).
    """
    if path == "-":
        try:
            return FdLines(sys.stdin.fileno()), "<stdin>", None
        except (AttributeError, ValueError, io.UnsupportedOperation):  # a standard input without a descriptor
            return sys.stdin.buffer, "<stdin>", None
    try:
        stream = open(path, "rb")
    except OSError as e:
        raise specs.file_error(e, path) from None
    import stat

    try:
        st = os.fstat(stream.fileno())
    except OSError:
        return stream, path, None
    if stat.S_ISDIR(st.st_mode):
        stream.close()
        raise InputError(f"{path} is a directory, not a file", type="IsADirectoryError")
    return stream, path, st.st_size if stat.S_ISREG(st.st_mode) else None


class CountedEntries:
    """The batch's entries as the runner reads them: how many were read, and whether the input has ended."""

    def __init__(self, entries):
        self._entries = iter(entries)
        self.read = 0
        self.ended = False
        self._broken = False  # reading was cut by an exception (Ctrl-C): the reader cannot go on

    def __iter__(self):
        return self

    def __next__(self):
        try:
            entry = next(self._entries)
        except StopIteration:
            self.ended = True
            raise
        except BaseException:
            self._broken = True
            raise
        self.read += 1
        return entry

    def look_for_end(self) -> bool:
        """Whether the input has ended, reading on to the next entry if need be (which is then dropped: call it
        only when the batch stops, in the thread that reads, on an input that never waits, a regular file)."""
        if not self.ended and not self._broken:
            try:
                next(self)
            except StopIteration:
                pass
            except (Exception, KeyboardInterrupt):
                self._broken = True
        return self.ended


def finished_before(read: int, written: int, input_ended: bool) -> bool:
    """Whether a Ctrl-C found the batch already done: the input had ended and the result of every entry read
    was written (it came while worker processes stopped, or the process was exiting). Such a batch reports
    its summary and exit status as if no Ctrl-C had come; otherwise it was interrupted (status 130)."""
    return input_ended and written >= read


class Summary:
    """Counts entries and failures (remembering the first few failed lines) and says so at the end."""

    SHOWN = 10

    def __init__(self):
        self.start = time.perf_counter()
        self.done = 0
        self.failed = 0
        self.failed_lines: list[int] = []

    def add(self, line: int, ok: bool) -> None:
        self.done += 1
        if not ok:
            self.failed += 1
            if len(self.failed_lines) < self.SHOWN:
                self.failed_lines.append(line)

    def text(self, interrupted: str | None = None) -> str:
        """``gradcli batch: 12 entries, 1 failed (line 7), 0.84 s, 14 entries/s``; ``interrupted``: the name
        of the signal that stopped the batch (``gradcli batch: interrupted after 12 entries ...``, with ``by
        SIGTERM`` for another signal than SIGINT)."""
        elapsed = time.perf_counter() - self.start
        where = ""
        if self.failed_lines:
            shown = ", ".join(str(n) for n in self.failed_lines) + (", ..." if self.failed > self.SHOWN else "")
            where = f" (line{'s' if self.failed > 1 else ''} {shown})"
        rate = ""
        if self.done and elapsed > 0:
            per_s = self.done / elapsed
            rate = f", {per_s:,.0f} entries/s" if per_s >= 10 else f", {per_s:.2g} entries/s"
        stop = ""
        if interrupted:
            stop = "interrupted " + ("" if interrupted == "SIGINT" else f"by {interrupted} ") + "after "
        return (f"gradcli batch: {stop}{self.done} "
                f"entr{'y' if self.done == 1 else 'ies'}, {self.failed} failed{where}, {elapsed:.2f} s{rate}\n")


def _check_options(fmt: str, jobs: int, dask: str | None) -> None:
    """Raises InputError (a UsageError) for an input format gradcli does not read, ``--jobs`` below 1, or both
    ``--jobs`` and ``--dask``."""
    if fmt not in FORMATS:
        raise InputError(f"--input-format must be one of {', '.join(FORMATS)}, got {fmt!r}", type="UsageError")
    if jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {jobs}", type="UsageError")
    if dask is not None and jobs > 1:
        raise InputError("--jobs runs worker processes here and --dask on a Dask cluster: give one of them",
                         type="UsageError")


def _write_outcomes(outcomes, header: str, writer, progress, summary: Summary, name: str) -> None:
    """Write ``header`` (when not empty), then each entry's outcome as it comes, counting it in ``summary``
    (a line written is a line counted, even under Ctrl-C) and its messages to the progress line's stream."""
    if header:
        writer.write(header)
    for entry, outcome in outcomes:
        if outcome.messages:
            progress.message(_prefixed(outcome.messages, name, entry.line))
        with writer.deferring_sigint():  # a line written is a line counted
            writer.write(outcome.text)
            summary.add(entry.line, outcome.ok)
        progress.update(entry.end, summary.done, summary.failed)


def _run_partitioned(pattern: str, output_dir: str, entry_format, dask: str | None, jobs: int, defaults,
                     debug: bool) -> int:
    """``--output-dir``: the partitioned mode on the Dask cluster at ``dask``
    (:func:`~gradcli.frontends.batch.dask_runner.run_partitioned`); the summary counts every part's entries."""
    start = time.perf_counter()
    if dask is None or jobs > 1:
        return report_error(InputError("--output-dir writes one output part per input part on a Dask cluster: "
                                       "give --dask ADDRESS (and no --jobs)", type="UsageError"), debug)
    try:
        client = dask_runner.connect(dask, quiet=not debug)
    except InputError as err:
        return report_error(err, debug)
    try:
        parts, done, failed = dask_runner.run_partitioned(pattern, output_dir, client, entry_format, defaults,
                                                          debug)
    except InputError as err:
        return report_error(err, debug)
    finally:
        _close_client(client)
    elapsed = time.perf_counter() - start
    _stderr(f"gradcli batch: {done} entr{'y' if done == 1 else 'ies'}, {failed} failed, in {parts} "
            f"part{'' if parts == 1 else 's'} written to {output_dir}, {elapsed:.2f} s, "
            f"{done / elapsed if elapsed else 0:,.0f} entries/s\n")
    return EXIT_EVAL if failed else EXIT_OK


def run(path: str, *, entry_format, fmt: str = "auto", jobs: int = 1, dtype: str = "float32",
        seed: int | None = None, max_steps: int | None = None, anomaly: bool = False, debug: bool = False,
        check: dict | None = None, dask: str | None = None, output_dir: str | None = None) -> int:
    """``gradcli batch``: read entries from ``path`` (``-``: standard input) in the input format ``fmt``, write
    each entry's result to standard output as it is done, and a summary to standard error.

    Args:
        entry_format: the output format's :class:`~gradcli.render.registry.EntryFormat` (its ``header()``
            first, then its ``entry(...)`` text of each entry).
        fmt: the input format, "auto", "text" or "jsonl" (see :func:`~gradcli.frontends.batch.entries.read_entries`).
        jobs: worker processes (1: run the entries in this process).
        dask: the address of a Dask scheduler (``tcp://HOST:8786``) whose workers run the entries, in
            partitions (:class:`~gradcli.frontends.batch.dask_runner.DaskRunner`); None: this machine. Not with ``jobs``.
        dtype, seed, max_steps, anomaly: the defaults of every entry (``--dtype`` ...; an entry's own wins).
        debug: an entry's internal error also writes its traceback (``--debug``); so do errors here.
        check: ``--check``'s tolerances for every entry (a dict of ``eps``, ``atol``, ``rtol``,
            ``max_evaluations``), or None; a JSON Lines entry's own ``check`` wins.

    Returns the exit status: 0 every entry succeeded, 1 some failed, 2 the input cannot be read (or a bad
    option, or the Dask scheduler cannot be reached or was lost), 130 interrupted (SIGINT; 143 SIGTERM, 129
    SIGHUP), 141 standard output closed by its reader. Never raises for bad input.
    """
    from rich.console import Console

    summary = Summary()
    if output_dir is not None:
        return _run_partitioned(path, output_dir, entry_format, dask, jobs,
                                Defaults(dtype, seed, max_steps, path, anomaly, check), debug)
    try:
        _check_options(fmt, jobs, dask)
        stream, name, size = open_input(path)
    except InputError as err:
        return report_error(err, debug)
    client = None
    if dask is not None:
        try:
            client = dask_runner.connect(dask, quiet=not debug)
        except InputError as err:
            if path != "-":
                stream.close()
            return report_error(err, debug)

    entries = CountedEntries(read_entries(stream, format_for(path, fmt),
                                          Defaults(dtype, seed, max_steps, name, anomaly, check)))
    progress = Progress(size, enabled=Console(stderr=True).is_terminal and not Console(file=sys.stdout).is_terminal)
    writer = LineWriter(sys.stdout)
    in_main = threading.current_thread() is threading.main_thread()
    old_handler = signal.signal(signal.SIGINT, writer.on_sigint) if in_main else None
    old_others = {sig: signal.signal(sig, writer.on_sigint) for sig in STOP_SIGNALS} if in_main else {}
    status = None
    try:
        if client is None:
            results = run_entries(entries, entry_format, jobs, notice=progress.message, debug=debug,
                                  streaming=size is None)
        else:
            results = iter(dask_runner.DaskRunner(entries, entry_format, client, notice=progress.message,
                                                  debug=debug))
        with closing(results) as outcomes:
            _write_outcomes(outcomes, entry_format.header(), writer, progress, summary, name)
        writer.finished = True
    except KeyboardInterrupt:
        # a Ctrl-C just after the last line was written may come before the reader has seen the input's end
        ended = entries.ended or (client is None and not forking.available() and size is not None
                                  and entries.read <= summary.done and entries.look_for_end())
        writer.finished = finished_before(entries.read, summary.done, ended)
        status = None if writer.finished else 128 + int(writer.signal or signal.SIGINT)
    except OutputClosed:
        writer.silence()
        status = EXIT_BROKEN_PIPE  # quietly: whoever reads our output has gone
    except InputError as err:  # the input became unreadable part-way
        progress.stop()
        status = report_error(err, debug)
    finally:
        writer.stopping = True  # from here on a signal changes nothing: the batch is ending
        progress.stop()
        if path != "-":
            stream.close()
        if client is not None:
            _close_client(client)
    if status != EXIT_BROKEN_PIPE:
        stopped_by = None if status is None or status < 128 else signal.Signals(status - 128).name
        _stderr(summary.text(interrupted=stopped_by))
    if in_main:  # restored after the summary: a signal once every entry is written changes neither it nor the status
        _restore_sigint(old_handler)
        for sig, handler in old_others.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
    if status is not None:
        return status
    return EXIT_EVAL if summary.failed else EXIT_OK

"""Running ``gradcli batch`` entries: in this process, or in ``--jobs`` worker processes, with the results
in input order.

Each entry's result is rendered where it ran, by the output format's
:class:`~gradcli.render.registry.EntryFormat` (a JSON line, a table row, ...), so that only text crosses
between processes; this module never looks at what the text is.
"""

from __future__ import annotations

import queue
import re
import signal
import threading
from collections import deque
from dataclasses import dataclass
from typing import Iterable, Iterator

from ...engine import limits
from ...language import grammar
from ...language.build import shape_cache
from ...engine.errors import GradcliError
from ...app.reporting import InternalError, to_error, traceback_text
from ...app.result import EntryResult, ErrorInfo
from .entries import Entry


@dataclass
class Outcome:
    """What one entry produced: ``text``, its output (whole lines in the output format), whether it ran
    (``ok``), and ``messages``: what the program printed and its warnings (for standard error)."""
    line: int
    ok: bool
    text: str
    messages: str = ""


_SPEC_FILENAME = re.compile(r"^(-i|-c|--gradient) (\w+)$")


def _where(err: GradcliError, entry: Entry) -> str | None:
    """Where an error is when it is not in the program: ``inputs.x``, ``consts.c`` or ``gradient`` (the
    JSON Lines fields), or the error's file name; None for the program itself."""
    if err.filename is None or entry.request is None or err.filename == entry.request.filename:
        return None
    m = _SPEC_FILENAME.match(err.filename)
    if m is None:
        return err.filename
    return {"-i": f"inputs.{m.group(2)}", "-c": f"consts.{m.group(2)}", "--gradient": "gradient"}[m.group(1)]


def error_info(err: GradcliError, entry: Entry) -> ErrorInfo:
    """A failed entry's error as plain data: ``type``, ``message`` (prefixed with where it is when that is not
    the program, e.g. ``inputs.x: ...``), ``line``/``column`` relative to the entry's text (the program, or
    the input spec or JSON line that failed; None when unknown), the hint and the caret excerpt."""
    message = err.message
    where = _where(err, entry)
    if where is not None:
        if err.filename and message.startswith(err.filename + ": "):
            message = message[len(err.filename) + 2:]
        message = f"{where}: {message}"
    return ErrorInfo(type=err.type, message=message, line=err.line, column=err.column, hint=err.hint,
                     excerpt=[line[4:] for line in err.caret_lines()])


class EntryClock:
    """The ``time`` limit of each entry of a sequence run one after another in this thread: what
    :func:`gradcli.engine.limits.time_guard` does for each entry, with SIGALRM's handler installed once for the whole
    sequence (``with EntryClock() as clock:``) and only the timer set and cleared per entry (:meth:`arm`,
    :meth:`disarm`). Inactive (its methods do nothing) without a time limit, without ``setitimer`` or outside
    the main thread, as ``time_guard``. Restores the previous handler at the end."""

    def __init__(self):
        self.active = False
        self._old = None

    def __enter__(self) -> "EntryClock":
        import signal
        import threading

        if (limits.current.time < limits.UNLIMITED and hasattr(signal, "setitimer")
                and threading.current_thread() is threading.main_thread()):
            self._old = signal.signal(signal.SIGALRM, self._on_alarm)
            self._setitimer, self._real = signal.setitimer, signal.ITIMER_REAL
            self.active = True
        return self

    def __exit__(self, *exc) -> None:
        if self.active:
            import signal

            self._setitimer(self._real, 0)
            signal.signal(signal.SIGALRM, self._old)
            self.active = False

    @staticmethod
    def _on_alarm(signum, frame):
        raise limits.exceeded_time("the entry")

    def arm(self) -> None:
        """Start the entry's time (the limit as it is now)."""
        if self.active:
            self._setitimer(self._real, float(limits.current.time), 1.0)

    def disarm(self) -> None:
        """Stop it."""
        if self.active:
            self._setitimer(self._real, 0)


def run_entry(entry: Entry, entry_format, debug: bool = False, clock: EntryClock | None = None) -> Outcome:
    """Run one entry and render its result with ``entry_format`` (an
    :class:`~gradcli.render.registry.EntryFormat`; in the worker process with ``--jobs``). Never raises for a
    bad entry: the error is the outcome (:func:`gradcli.app.reporting.to_error`: the ``time`` limit applies to
    each entry, running out of memory is a MemoryError of the entry, an unexpected exception is an
    ``InternalError``, with its traceback on standard error when ``debug``). With ``entry.check``, the
    gradients are also compared with central differences (:func:`gradcli.app.finite_differences.compute_checked`); an entry
    whose check fails is a failed entry (its result, with the check, is still written). ``clock``: the
    :class:`EntryClock` of the sequence of entries this one belongs to (None: the time limit is set up for this
    entry alone)."""
    messages: list[str] = []
    result = None
    error = entry.error
    if error is None:
        try:
            if clock is None:
                with limits.time_guard("the entry"), shape_cache():  # (programs of a known shape are not parsed again)
                    result = entry.compute(write=messages.append, warn=messages.append)
            else:
                clock.arm()
                try:
                    with shape_cache():
                        result = entry.compute(write=messages.append, warn=messages.append)
                finally:
                    clock.disarm()
        except Exception as e:  # a failing entry (or a bug in gradcli): report it on this entry and go on
            error = to_error(e)
            if debug and isinstance(error, InternalError):
                messages.append(traceback_text(e))
    item = EntryResult(entry.line, entry.text, result=result,
                       error=None if error is None else error_info(error, entry), id=entry.id, has_id=entry.has_id)
    ok = item.ok and (result is None or result.check is None or result.check.ok)  # a failed check fails the entry
    return Outcome(entry.line, ok, entry_format.entry(item), "".join(messages))


def run_entries(entries: Iterable[Entry], entry_format, jobs: int = 1, notice=None,
                debug: bool = False) -> Iterator[tuple[Entry, Outcome]]:
    """Run entries and yield ``(entry, outcome)`` in input order, each as soon as it and all before it are
    done, rendered by ``entry_format`` (see :func:`run_entry`). ``jobs > 1`` runs them in that many worker
    processes (:class:`ParallelRunner`; ``notice`` receives its messages for standard error)."""
    if jobs <= 1:
        with EntryClock() as clock:
            for entry in entries:
                yield entry, run_entry(entry, entry_format, debug, clock)
    else:
        yield from ParallelRunner(entries, entry_format, jobs, notice=notice, debug=debug)


_END = object()


class _ReadFailed:
    def __init__(self, exc: BaseException):
        self.exc = exc


def _worker_init() -> None:
    """Worker processes leave Ctrl-C to the main process (which stops them) and, like the CLI, let numpy
    produce NaN/inf silently (PyTorch never warns about them)."""
    import numpy as np

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    np.seterr(all="ignore")
    grammar.parser()  # build the grammar once per worker, before the first entry


def run_chunk(entries: list, entry_format, debug: bool = False) -> list:
    """:func:`run_entry` for several entries (one task of a worker process: fewer, larger messages)."""
    with EntryClock() as clock:
        return [run_entry(entry, entry_format, debug, clock) for entry in entries]


def _worker_main(conn, limit_values: dict | None = None, entry_format=None, debug: bool = False) -> None:
    """A worker process: run the chunks it receives, one at a time, and send back their outcomes; stop at
    None or when the main process goes away. ``limit_values`` are the main process's limits (--limit);
    ``entry_format`` and ``debug`` are :func:`run_entry`'s."""
    if limit_values is not None:
        limits.configure(limit_values)
    _worker_init()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        conn.send(run_chunk(task, entry_format, debug))


class _Job:
    """A chunk of consecutive entries and its outcomes once done. ``alone``: a single entry run again after
    its worker died."""

    __slots__ = ("entries", "outcomes", "alone", "deaths")

    def __init__(self, entries: list, alone: bool = False):
        self.entries = entries
        self.outcomes = None
        self.alone = alone
        self.deaths = 0  # how many times a worker died running it


class _Worker:
    """One worker process ("spawn" start method) and the pipe to it; ``job`` is what it is running."""

    def __init__(self, ctx, entry_format, debug: bool):
        conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker_main, args=(child, limits.current.as_dict(), entry_format, debug),
                                   name="gradcli-batch-worker", daemon=True)
        self.process.start()
        child.close()  # only the worker holds its end: if it dies, reading from conn ends (EOFError)
        self.conn = conn
        self.job: _Job | None = None

    def stop(self, kill: bool) -> None:
        """End the process: at once with ``kill``, else after asking it to stop."""
        if not kill:
            try:
                self.conn.send(None)
            except OSError:
                kill = True
        if kill:
            self.process.kill()
        self.process.join(None if kill else 10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


class ParallelRunner:
    """Runs entries in ``jobs`` worker processes and yields ``(entry, outcome)`` in input order.

    Built on multiprocessing's Process, Pipe and ``connection.wait`` (a pool that can be killed at once:
    Ctrl-C and a closed pipe must not wait for running entries). A reader thread takes entries from the input
    into a bounded queue; the main thread gives each idle worker a chunk of up to ``chunk`` entries (what has
    arrived: on standard input a lone line is a chunk of one, started at once), collects results as workers
    finish, and yields the oldest chunk's outcomes as soon as they are there, so output order is input order.
    At most ``2 * jobs`` chunks are pending (memory is bounded). If a worker process dies (killed, out of
    memory), it is replaced and the entries of its chunk run again one at a time, so that only an entry that
    kills its worker (twice) is reported as failed and no entry is lost.
    """

    def __init__(self, entries: Iterable[Entry], entry_format, jobs: int, chunk: int = 16, notice=None,
                 debug: bool = False):
        self.entries = entries
        self.notice = notice or (lambda text: None)
        self.entry_format = entry_format
        self.debug = debug
        self.jobs = jobs
        self.chunk = chunk
        self.window = 2 * jobs
        self._queue: queue.Queue = queue.Queue(maxsize=chunk * jobs)
        self._stop = threading.Event()
        self._eof = False
        self._failure = None

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _read(self) -> None:
        try:
            for entry in self.entries:
                if not self._put(entry):
                    return
        except Exception as e:  # an unreadable input: handed to the main thread, raised after the results
            self._put(_ReadFailed(e))
        else:
            self._put(_END)

    def _take(self, block: bool) -> list:
        """The entries that have arrived, up to a chunk; waits for the first one only if ``block``."""
        chunk = []
        while len(chunk) < self.chunk and not self._eof:
            try:
                item = self._queue.get(block=block and not chunk)
            except queue.Empty:
                break
            if item is _END:
                self._eof = True
            elif isinstance(item, _ReadFailed):
                self._failure, self._eof = item.exc, True
            else:
                chunk.append(item)
        return chunk

    def __iter__(self) -> Iterator[tuple[Entry, Outcome]]:
        import multiprocessing
        from multiprocessing.connection import wait

        ctx = multiprocessing.get_context("spawn")
        workers = [self._worker(ctx) for _ in range(self.jobs)]
        threading.Thread(target=self._read, name="gradcli-batch-reader", daemon=True).start()
        pending: deque[_Job] = deque()  # input order; done or running
        rerun: deque[_Job] = deque()  # jobs to run (again) after a worker died, before new input
        finished = False
        try:
            while True:
                while pending and pending[0].outcomes is not None:
                    job = pending.popleft()
                    yield from zip(job.entries, job.outcomes)
                for k, w in enumerate(workers):
                    if w.job is not None:
                        continue
                    if rerun:
                        job = rerun.popleft()
                    elif not self._eof and len(pending) < self.window:
                        chunk = self._take(block=not pending)  # wait for input only when there is nothing else
                        if not chunk:
                            continue
                        job = _Job(chunk)
                        pending.append(job)
                    else:
                        continue
                    try:
                        w.conn.send(job.entries)
                    except OSError:  # it died while idle: the job did not start; another worker takes it
                        w.stop(kill=True)
                        workers[k] = self._worker(ctx)
                        rerun.appendleft(job)
                        continue
                    w.job = job
                if not pending:
                    if self._eof:
                        break
                    continue
                busy = [k for k, w in enumerate(workers) if w.job is not None]
                if not busy:
                    continue  # the jobs to run again go to fresh workers first
                more_input = len(busy) < len(workers) and not self._eof and len(pending) < self.window
                handles = {}
                for k in busy:  # a result, or the end of the process (a death is seen even mid-message)
                    handles[workers[k].conn] = handles[workers[k].process.sentinel] = k
                ready = wait(list(handles), timeout=0.05 if more_input else None)
                for k in sorted({handles[h] for h in ready}):
                    w = workers[k]
                    if w.process.sentinel in ready:
                        workers[k] = self._replace(w, ctx, pending, rerun)
                        continue
                    try:
                        outcomes = w.conn.recv()
                    except (EOFError, OSError):
                        workers[k] = self._replace(w, ctx, pending, rerun)
                        continue
                    w.job.outcomes = outcomes
                    w.job = None
            finished = True
            if self._failure is not None:
                raise self._failure
        finally:
            self._stop.set()
            for w in workers:
                w.stop(kill=not finished)

    def _worker(self, ctx) -> _Worker:
        return _Worker(ctx, self.entry_format, self.debug)

    def _replace(self, worker: _Worker, ctx, pending: deque, rerun: deque) -> _Worker:
        """A worker died running ``worker.job``: run the chunk's entries again one at a time (in its place in
        the output order); a lone entry whose worker dies twice is reported as failed. Returns a new
        worker."""
        job = worker.job
        worker.stop(kill=True)
        job.deaths += 1
        if job.alone and job.deaths >= 2:
            job.outcomes = [_died(job.entries[0], self.entry_format)]
        elif job.alone:
            rerun.appendleft(job)
        else:
            n = len(job.entries)
            what = "its entry again" if n == 1 else f"its {n} entries again, one at a time"
            self.notice(f"gradcli batch: a worker process died; running {what} (from line {job.entries[0].line})\n")
            singles = [_Job([entry], alone=True) for entry in job.entries]
            at = pending.index(job)
            del pending[at]
            for offset, single in enumerate(singles):
                pending.insert(at + offset, single)
            rerun.extendleft(reversed(singles))
        return self._worker(ctx)


def _died(entry: Entry, entry_format) -> Outcome:
    err = GradcliError("the worker process running this entry died (killed, or out of memory)",
                       type="WorkerProcessError")
    return run_entry(Entry(entry.line, entry.text, entry.end, error=err, id=entry.id, has_id=entry.has_id),
                     entry_format)

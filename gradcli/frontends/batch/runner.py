"""Running ``gradcli batch`` entries: in this process, or in ``--jobs`` worker processes, with the results
in input order.

Each entry's result is rendered where it ran, by the output format's
:class:`~gradcli.render.registry.EntryFormat` (a JSON line, a table row, ...), so that only text crosses
between processes; this module never looks at what the text is.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Iterable, Iterator

from ...engine import limits
from ...language import grammar
from ...language.build import shape_cache
from ...engine.errors import GradcliError, LimitError
from ...app.reporting import InternalError, to_error, traceback_text
from ...app.result import EntryResult, ErrorInfo
from ...render.messages import nonfinite_warning
from . import forking
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


#: What one entry may print (``print``, warnings), in characters: at most the ``file_bytes`` limit, and at most
#: this. Past it the entry fails with a LimitError and the batch goes on (printed text is held until the entry
#: ends, so it must be bounded).
PRINTED_CHARS = 8 << 20


class Printed:
    """Collects what an entry prints and warns, up to ``budget`` characters; past them, the write raises the
    entry's :class:`~gradcli.engine.errors.LimitError` (and so does every later write: a program that catches
    it still cannot print more)."""

    def __init__(self, budget: int):
        self.parts: list[str] = []
        self.size = 0
        self.budget = budget

    def __call__(self, text: str) -> None:
        # what a print writes must be UTF-8, as on gradcli run's standard output: a lone surrogate is the
        # program's UnicodeEncodeError (Python's own message), not a character silently dropped
        text.encode("utf-8")
        self.size += len(text)
        if self.size > self.budget:
            err = LimitError(f"the entry printed more than {self.budget:,} characters (what one entry of a batch "
                             f"may print: the file_bytes limit, at most {PRINTED_CHARS:,})",
                             hint="print less, or raise it with --limit file_bytes=N")
            err.limit = "file_bytes"
            raise err
        self.parts.append(text)

    def text(self) -> str:
        return "".join(self.parts)


def run_entry(entry: Entry, entry_format, debug: bool = False, clock: EntryClock | None = None) -> Outcome:
    """Run one entry and render its result with ``entry_format`` (an
    :class:`~gradcli.render.registry.EntryFormat`; in the worker process with ``--jobs``). Never raises for a
    bad entry: the error is the outcome (:func:`gradcli.app.reporting.to_error`: the ``time`` limit applies to
    each entry, running out of memory is a MemoryError of the entry, an unexpected exception is an
    ``InternalError``, with its traceback on standard error when ``debug``; what it prints is bounded by
    :class:`Printed`). With ``entry.check``, the gradients are also compared with central differences
    (:func:`gradcli.app.finite_differences.compute_checked`); an entry whose check fails is a failed entry (its
    result, with the check, is still written). A result holding NaN or infinity adds ``grad``'s warning to the
    messages. ``clock``: the :class:`EntryClock` of the sequence of entries this one belongs to (None: the time
    limit is set up for this entry alone)."""
    printed = Printed(min(limits.current.file_bytes, PRINTED_CHARS))
    result = None
    error = entry.error
    if error is None:
        try:
            if clock is None:
                with limits.time_guard("the entry"), shape_cache():  # (programs of a known shape are not parsed again)
                    result = entry.compute(write=printed, warn=printed)
            else:
                clock.arm()
                try:
                    with shape_cache():
                        result = entry.compute(write=printed, warn=printed)
                finally:
                    clock.disarm()
        except Exception as e:  # a failing entry (or a bug in gradcli): report it on this entry and go on
            error = to_error(e)
            if debug and isinstance(error, InternalError):
                printed.parts.append(traceback_text(e))
    messages = printed.text()
    if result is not None and getattr(result, "blocks", None) is None:
        warning = nonfinite_warning(result)
        if warning:
            messages += warning + "\n"
    item = EntryResult(entry.line, entry.text, result=result,
                       error=None if error is None else error_info(error, entry), id=entry.id, has_id=entry.has_id)
    ok = item.ok and (result is None or result.check is None or result.check.ok)  # a failed check fails the entry
    try:
        text = entry_format.entry(item)
    except Exception as e:  # whatever the result holds, the entry gets its line
        item = EntryResult(entry.line, entry.text, error=error_info(to_error(e), entry), id=entry.id,
                           has_id=entry.has_id)
        text, ok = entry_format.entry(item), False
    return Outcome(entry.line, ok, text, messages)


def run_entries(entries: Iterable[Entry], entry_format, jobs: int = 1, notice=None,
                debug: bool = False, streaming: bool = True) -> Iterator[tuple[Entry, Outcome]]:
    """Run entries and yield ``(entry, outcome)`` in input order, each as soon as it and all before it are
    done, rendered by ``entry_format`` (see :func:`run_entry`). They run in ``jobs`` worker processes
    (:class:`ParallelRunner`: one is enough for the ``time`` limit to stop an entry stuck in a C call), or in
    this process where workers cannot be forked (``notice`` receives messages for standard error).
    ``streaming``: the input may wait for more (see :class:`Feeder`)."""
    if forking.available():
        yield from ParallelRunner(entries, entry_format, jobs, notice=notice, debug=debug, streaming=streaming)
        return
    if jobs > 1 and notice is not None:
        notice("gradcli batch: --jobs needs os.fork; running the entries in this process\n")
    with EntryClock() as clock:
        for entry in entries:
            yield entry, run_entry(entry, entry_format, debug, clock)


_END = object()


class _ReadFailed:
    def __init__(self, exc: BaseException):
        self.exc = exc


#: CPU seconds an entry may run before its worker sends the outcomes of the entries before it in its chunk
#: (which then need not wait for it); fast entries travel in one message per chunk.
SEND_AFTER = 0.02


def _worker_main(conn, slot: int, entry_format, debug: bool, progress) -> None:
    """A worker process: run the chunks it receives, one at a time, and send back their outcomes, in one
    message per chunk; when an entry runs past :data:`SEND_AFTER` seconds of CPU, a timer (SIGPROF) sends
    the outcomes of the entries before it at once. Stops at None or when the main process goes away. Like
    the CLI, numpy makes NaN and infinity silently."""
    import numpy as np

    np.seterr(all="ignore")
    pending: list = []

    def send(signum=None, frame=None):
        if pending:
            try:
                conn.send(list(pending))
            except OSError:  # the main process is gone
                os._exit(0)
            pending.clear()

    signal.signal(signal.SIGPROF, send)
    with EntryClock() as clock:
        while True:
            try:
                task = conn.recv()
            except (EOFError, OSError):
                return
            if task is None:
                return
            for k, entry in enumerate(task):
                progress.start(slot, k)
                if pending:
                    signal.setitimer(signal.ITIMER_PROF, SEND_AFTER)
                outcome = run_entry(entry, entry_format, debug, clock)
                signal.setitimer(signal.ITIMER_PROF, 0)
                pending.append(outcome)
            progress.idle(slot)
            send()


class _Job:
    """A chunk of consecutive entries and its outcomes once done. ``alone``: a single entry run again after
    its worker died."""

    __slots__ = ("entries", "outcomes", "alone", "deaths", "received", "yielded")

    def __init__(self, entries: list, alone: bool = False):
        self.entries = entries
        self.outcomes = None
        self.alone = alone
        self.deaths = 0  # how many times a worker died running it
        self.received: list = []  # the outcomes of its first entries, while it runs
        self.yielded = 0  # how many of its outcomes were handed on (its first entries' before it was done)

    def receive(self, outcomes: list) -> bool:
        """Take outcomes of the next entries; True when the job is done."""
        self.received += outcomes
        if len(self.received) < len(self.entries):
            return False
        self.outcomes, self.received = self.received, []
        return True


class _Worker:
    """One worker process (forked by the batch's :class:`~gradcli.frontends.batch.forking.Forker`), the
    connection to it, its slot in the shared progress table, and the ``job`` it is running."""

    def __init__(self, forker, slot: int, progress):
        progress.idle(slot)
        self.pid, self.conn = forker.fork(slot)
        self.slot = slot
        self.job: _Job | None = None

    def stop(self, kill: bool) -> None:
        """End the process: at once with ``kill``, else by asking it to stop."""
        if not kill:
            try:
                self.conn.send(None)
            except OSError:
                kill = True
        if kill:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
        self.conn.close()


#: Entries per chunk (one message to a worker and one back): on a stream, what has arrived up to this; from a
#: file, this many (fewer, larger messages: about 11 us of this process's CPU per entry at 64, 16 us at 16,
#: measured with workers that return at once).
STREAM_CHUNK = 16
FILE_CHUNK = 64


class Feeder:
    """Reads entries in a thread into a bounded queue, from which chunks of what has arrived are taken
    (:meth:`_take`): the input side of :class:`ParallelRunner` and of the Dask runner.

    ``streaming``: the input may wait for more (standard input, a pipe), so each entry is handed over as soon
    as it is read; otherwise (a regular file) the reader hands over whole chunks, one queue operation per
    chunk rather than per entry (the reading process's work per entry is what caps how many workers it can
    feed)."""

    def __init__(self, entries: Iterable[Entry], entry_format, jobs: int, chunk: int | None = None, notice=None,
                 debug: bool = False, streaming: bool = True):
        if chunk is None:
            chunk = STREAM_CHUNK if streaming else FILE_CHUNK
        self.entries = entries
        self.notice = notice or (lambda text: None)
        self.entry_format = entry_format
        self.debug = debug
        self.jobs = jobs
        self.chunk = chunk
        self.window = 2 * jobs
        self.streaming = streaming
        self._queue: queue.Queue = queue.Queue(maxsize=(jobs + 1) * (chunk if streaming else 1))
        self._stop = threading.Event()
        self._eof = False
        self._failure = None
        self._left: list = []  # entries taken from the queue that did not fit in the last chunk

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _read(self) -> None:
        group: list = []
        size = 1 if self.streaming else self.chunk
        try:
            for entry in self.entries:
                group.append(entry)
                if len(group) >= size:
                    if not self._put(group):
                        return
                    group = []
        except Exception as e:  # an unreadable input: handed to the main thread, raised after the results
            if group and not self._put(group):
                return
            self._put(_ReadFailed(e))
        else:
            if group and not self._put(group):
                return
            self._put(_END)

    def _take(self, block: bool) -> list:
        """The entries that have arrived, up to a chunk; waits for the first one only if ``block``."""
        chunk, self._left = self._left[:self.chunk], self._left[self.chunk:]
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
                room = self.chunk - len(chunk)
                chunk += item[:room]
                self._left += item[room:]
        return chunk


#: Seconds past an entry's ``time`` limit after which its worker is killed (the worker's own alarm stops an
#: entry that runs Python code at the limit; this is for one stuck in a single C call).
GRACE = 2.0

#: Seconds between looks at the entries' deadlines while workers run.
DEADLINE_POLL = 0.25


class ParallelRunner(Feeder):
    """Runs entries in ``jobs`` worker processes and yields ``(entry, outcome)`` in input order.

    Workers are forked warm, when there is work for them (:mod:`.forking`: a batch of a few entries starts as
    fast with ``--jobs 16`` as with one worker), and killed at once when the batch stops (Ctrl-C, SIGTERM, a
    closed pipe). A reader thread takes entries from the input into a bounded queue; the main thread gives each
    idle worker a chunk of up to ``chunk`` entries (what has arrived: on standard input a lone line is a chunk
    of one, started at once), collects results as workers finish, and yields the oldest chunk's outcomes as
    soon as they are there, so output order is input order. At most ``2 * jobs`` chunks are pending (memory
    is bounded).

    An entry past its ``time`` limit by :data:`GRACE` seconds (stuck in one C call, where the worker's alarm
    cannot stop it) has its worker killed and is reported as that entry's ``LimitError``. If a worker process
    dies (killed, out of memory), it is replaced and the other entries of its chunk run again one at a time,
    so that only an entry that kills its worker (twice) is reported as failed and no entry is lost.
    """

    def __iter__(self) -> Iterator[tuple[Entry, Outcome]]:
        grammar.parser()  # built here once: the workers are forked with it
        self._progress = progress = forking.Progress(self.jobs)
        entry_format, debug = self.entry_format, self.debug
        forker = forking.Forker(lambda conn, slot: _worker_main(conn, slot, entry_format, debug, progress))
        workers: list[_Worker | None] = [None] * self.jobs
        threading.Thread(target=self._read, name="gradcli-batch-reader", daemon=True).start()
        pending: deque[_Job] = deque()  # input order; done or running
        rerun: deque[_Job] = deque()  # jobs to run (again) after a worker died, before new input
        finished = False
        try:
            while True:
                yield from self._done(pending)
                self._dispatch(workers, forker, pending, rerun)
                if not pending:
                    if self._eof:
                        break
                    continue
                self._collect(workers, pending, rerun)
            finished = True
            if self._failure is not None:
                raise self._failure
        finally:
            self._stop.set()
            for w in workers:
                if w is not None:
                    w.stop(kill=not finished)
            forker.close()

    @staticmethod
    def _done(pending: deque) -> Iterator[tuple[Entry, Outcome]]:
        """The outcomes at the head of ``pending`` not yet handed on, in input order (a running job's first
        entries as soon as they came); done jobs leave ``pending``."""
        while pending:
            job = pending[0]
            done = job.outcomes if job.outcomes is not None else job.received
            if len(done) > job.yielded:
                first, job.yielded = job.yielded, len(done)
                yield from zip(job.entries[first:len(done)], done[first:])
            if job.outcomes is None:
                return
            pending.popleft()

    def _dispatch(self, workers: list, forker, pending: deque, rerun: deque) -> None:
        """Give each idle worker a job: one to run again first, else a chunk of new input (while fewer than
        ``window`` are pending; waiting for input only when nothing else is pending). A worker is forked when
        its slot first has work."""
        for k, w in enumerate(workers):
            if w is not None and w.job is not None:
                continue
            if rerun:
                job = rerun.popleft()
            elif not self._eof and len(pending) < self.window:
                chunk = self._take(block=not pending)
                if not chunk:
                    continue
                job = _Job(chunk)
                pending.append(job)
            else:
                continue
            if w is None:
                w = workers[k] = _Worker(forker, k, self._progress)
            try:
                w.conn.send(job.entries)
            except OSError:  # it died while idle: the job did not start; another worker takes it
                w.stop(kill=True)
                workers[k] = None
                rerun.appendleft(job)
                continue
            w.job = job

    def _collect(self, workers: list, pending: deque, rerun: deque) -> None:
        """Wait for outcomes from the busy workers (briefly when an idle worker could take new input, or to
        look at the deadlines), take them, replace a worker that died, and kill one whose entry is past its
        deadline."""
        from multiprocessing.connection import wait

        busy = [w for w in workers if w is not None and w.job is not None]
        if not busy:
            return  # the jobs to run again go to fresh workers first
        timed = limits.current.time < limits.UNLIMITED
        more_input = len(busy) < len(workers) and not self._eof and len(pending) < self.window
        ready = set(wait([w.conn for w in busy], timeout=0.05 if more_input else (DEADLINE_POLL if timed else None)))
        for w in busy:
            if w.conn in ready:
                try:
                    outcomes = w.conn.recv()
                except (EOFError, OSError):
                    workers[w.slot] = self._replace(w, pending, rerun)
                    continue
                if w.job.receive(outcomes):
                    w.job = None
            elif timed:
                started, index = self._progress.running(w.slot)
                if started and time.monotonic() - started > limits.current.time + GRACE:
                    workers[w.slot] = self._replace(w, pending, rerun, stuck=index - len(w.job.received))

    def _replace(self, worker: _Worker, pending: deque, rerun: deque, stuck: int | None = None) -> None:
        """A worker died running ``worker.job``, or was killed because the entry at index ``stuck`` of its
        job ran past its deadline: that entry is reported as a LimitError, the chunk's other entries run again
        one at a time (in their place in the output order); a lone entry whose worker dies twice is reported
        as failed. The slot gets a new worker when there is work for it (returns None)."""
        job = worker.job
        worker.stop(kill=True)
        if job.received:  # the outcomes of its first entries came: only the others are left
            done = _Job(job.entries[:len(job.received)])
            done.outcomes, done.yielded = job.received, min(job.yielded, len(job.received))
            at = pending.index(job)
            pending.insert(at, done)
            job.entries, job.received, job.yielded = job.entries[len(done.entries):], [], 0
        if stuck is not None and len(job.entries) == 1:
            job.outcomes = [_timed_out(job.entries[0], self.entry_format)]
            return None
        if stuck is None:
            job.deaths += 1
        if job.alone and job.deaths >= 2:
            job.outcomes = [_died(job.entries[0], self.entry_format)]
        elif job.alone:
            rerun.appendleft(job)
        else:
            n = len(job.entries) - (stuck is not None)
            if stuck is None:
                what = "its entry again" if n == 1 else f"its {n} entries again, one at a time"
                self.notice(f"gradcli batch: a worker process died; running {what} "
                            f"(from line {job.entries[0].line})\n")
            singles = [_Job([entry], alone=True) for entry in job.entries]
            if stuck is not None and 0 <= stuck < len(singles):
                singles[stuck].outcomes = [_timed_out(job.entries[stuck], self.entry_format)]
            at = pending.index(job)
            del pending[at]
            for offset, single in enumerate(singles):
                pending.insert(at + offset, single)
            rerun.extendleft(reversed([s for s in singles if s.outcomes is None]))
        return None


def _timed_out(entry: Entry, entry_format) -> Outcome:
    return run_entry(Entry(entry.line, entry.text, entry.end, error=limits.exceeded_time("the entry"), id=entry.id,
                           has_id=entry.has_id), entry_format)


def _died(entry: Entry, entry_format) -> Outcome:
    err = GradcliError("the worker process running this entry died (killed, or out of memory)",
                       type="WorkerProcessError")
    return run_entry(Entry(entry.line, entry.text, entry.end, error=err, id=entry.id, has_id=entry.has_id),
                     entry_format)

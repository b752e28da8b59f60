"""Running ``gradcli batch`` entries: in this process, or in ``--jobs`` worker processes, with the results
in input order.

Each entry's outcome is rendered where it ran (the JSON line, or the table cells), so that only text crosses
between processes.
"""

from __future__ import annotations

import queue
import re
import signal
import threading
from collections import deque
from dataclasses import dataclass
from typing import Iterable, Iterator

from ..errors import GradcliError
from .entries import Entry


@dataclass
class Outcome:
    """What one entry produced, as the text to write: ``json`` (the JSON Lines line, without newline) or
    ``cells`` (entry, output or None, gradients or the error) for the table, and ``messages``: what the
    program printed and its warnings (for standard error)."""
    line: int
    ok: bool
    json: str | None = None
    cells: tuple | None = None
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


def error_dict(err: GradcliError, entry: Entry) -> dict:
    """The ``error`` object of a failed entry: ``type``, ``message`` (prefixed with where it is when that
    is not the program, e.g. ``inputs.x: ...``), and ``line``/``column`` relative to the entry's text
    (the program, or the input spec or JSON line that failed), null when unknown."""
    d = err.to_dict()
    where = _where(err, entry)
    if where is not None:
        message = err.message
        if err.filename and message.startswith(err.filename + ": "):
            message = message[len(err.filename) + 2:]
        d["message"] = f"{where}: {message}"
    return d


def _error_text(err: GradcliError, entry: Entry) -> str:
    """The error cell of the table: the source line with a caret (when known), ``Type: message``, hint."""
    d = error_dict(err, entry)
    return "\n".join([line[4:] for line in err.caret_lines()] + [f"{d['type']}: {d['message']}"]
                     + ([err.hint] if err.hint else []))


def run_entry(entry: Entry, as_json: bool) -> Outcome:
    """Run one entry and render its output (in the worker process with ``--jobs``). Never raises for a
    bad entry: the error is the outcome (an unexpected exception is reported as ``InternalError``)."""
    from .. import dtypes
    from ..calculator import compute

    messages: list[str] = []
    result = None
    error = entry.error
    if error is None:
        try:
            result = compute(entry.request, write=messages.append, warn=messages.append)
        except GradcliError as e:
            error = e
        except Exception as e:  # a bug in gradcli: report it on this entry and go on
            error = GradcliError(f"{type(e).__name__}: {e} (a bug in gradcli; please report it)",
                                 type="InternalError")
    if as_json:
        from ..render.json import batch_entry_to_dict, dumps

        doc = batch_entry_to_dict(entry.line, result, None if error is None else error_dict(error, entry),
                                  entry.id, entry.has_id)
        return Outcome(entry.line, error is None, json=dumps(doc), messages="".join(messages))
    if error is not None:
        cells = (entry.text, None, _error_text(error, entry))
    else:
        from ..render.table import batch_cells

        cells = (entry.text, *batch_cells(result, dtypes.get_default_dtype().np))
    return Outcome(entry.line, error is None, cells=cells, messages="".join(messages))


def run_entries(entries: Iterable[Entry], as_json: bool, jobs: int = 1,
                notice=None) -> Iterator[tuple[Entry, Outcome]]:
    """Run entries and yield ``(entry, outcome)`` in input order, each as soon as it and all before it are
    done. ``jobs > 1`` runs them in that many worker processes (:class:`ParallelRunner`; ``notice`` receives
    its messages for standard error)."""
    if jobs <= 1:
        for entry in entries:
            yield entry, run_entry(entry, as_json)
    else:
        yield from ParallelRunner(entries, as_json, jobs, notice=notice)


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
    from ..language.grammar import parser

    parser()  # build the grammar once per worker, before the first entry


def run_chunk(entries: list, as_json: bool) -> list:
    """:func:`run_entry` for several entries (one task of a worker process: fewer, larger messages)."""
    return [run_entry(entry, as_json) for entry in entries]


class ParallelRunner:
    """Runs entries in ``jobs`` worker processes (``concurrent.futures.ProcessPoolExecutor``, "spawn" start
    method) and yields ``(entry, outcome)`` in input order.

    A reader thread takes entries from the input into a bounded queue; the main thread sends what is
    available to the workers in chunks of up to ``chunk`` entries (at most 2 chunks per worker in flight),
    then waits for the oldest chunk, so output order is input order and memory is bounded (a few chunks per
    worker). Input that has arrived is started without waiting for more (standard input streams: a lone
    line is a chunk of one). If a worker process dies (killed, out of memory), the entries that were in
    flight run again one at a time in a fresh pool, so that only an entry that kills its worker is reported
    as failed and no entry is lost.
    """

    def __init__(self, entries: Iterable[Entry], as_json: bool, jobs: int, chunk: int = 16, notice=None):
        self.entries = entries
        self.notice = notice or (lambda text: None)
        self.as_json = as_json
        self.jobs = jobs
        self.chunk = chunk
        self.window = 2 * jobs
        self._queue: queue.Queue = queue.Queue(maxsize=chunk * jobs)
        self._stop = threading.Event()
        self._executor = None

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

    def _new_executor(self) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        if self._executor is not None:
            _stop_pool(self._executor, kill=True)
        self._executor = ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_worker_init)

    def _run_alone(self, entry: Entry) -> Outcome:
        from concurrent.futures.process import BrokenProcessPool

        try:
            return self._executor.submit(run_entry, entry, self.as_json).result()
        except BrokenProcessPool:
            self._new_executor()
            return _died(entry, self.as_json)

    def __iter__(self) -> Iterator[tuple[Entry, Outcome]]:
        from concurrent.futures.process import BrokenProcessPool

        self._new_executor()
        reader = threading.Thread(target=self._read, name="gradcli-batch-reader", daemon=True)
        reader.start()
        pending: deque = deque()  # (entries, future), oldest first
        failure = None
        eof = False
        finished = False
        try:
            while True:
                while not eof and len(pending) < self.window:
                    chunk = []
                    while len(chunk) < self.chunk:
                        try:  # wait for input only when there is nothing else to wait for
                            item = self._queue.get(block=not pending and not chunk)
                        except queue.Empty:
                            break
                        if item is _END:
                            eof = True
                            break
                        if isinstance(item, _ReadFailed):
                            failure, eof = item.exc, True
                            break
                        chunk.append(item)
                    if not chunk:
                        break
                    pending.append((chunk, self._executor.submit(run_chunk, chunk, self.as_json)))
                if not pending:
                    break
                chunk, future = pending[0]
                try:
                    outcomes = future.result()
                except BrokenProcessPool:
                    n = sum(len(c) for c, _ in pending)
                    self.notice(f"gradcli batch: a worker process died; running the {n} entries that were in "
                                f"flight again, one at a time (from line {chunk[0].line})\n")
                    self._new_executor()
                    while pending:
                        for entry in pending.popleft()[0]:
                            yield entry, self._run_alone(entry)
                    continue
                pending.popleft()
                yield from zip(chunk, outcomes)
            finished = True
            if failure is not None:
                raise failure
        finally:
            self._stop.set()
            _stop_pool(self._executor, kill=not finished)


def _died(entry: Entry, as_json: bool) -> Outcome:
    err = GradcliError("the worker process running this entry died (killed, or out of memory)",
                       type="WorkerProcessError")
    return run_entry(Entry(entry.line, entry.text, entry.end, error=err, id=entry.id, has_id=entry.has_id),
                     as_json)


def _stop_pool(executor, kill: bool) -> None:
    """Shut a pool down; with ``kill``, end its workers now (an interrupt, a closed pipe) instead of letting
    them finish their entries."""
    if kill:
        if hasattr(executor, "terminate_workers"):  # Python 3.14+
            executor.terminate_workers()
        else:
            for process in list((getattr(executor, "_processes", None) or {}).values()):
                process.terminate()
    executor.shutdown(wait=True, cancel_futures=True)

"""Running ``gradcli batch`` entries on a Dask cluster (``--dask tcp://HOST:8786``), with the results in input
order: the sibling of :class:`~gradcli.frontends.batch.runner.ParallelRunner` for a batch that outgrows one machine.

The entries are read here, in partitions of up to :data:`PARTITION` consecutive entries, and each partition is
one Dask task (``client.submit``) that a worker of the cluster runs with gradcli itself
(:func:`run_partition`: the worker imports gradcli, so it must be installed where the workers run) and renders
with the output format's :class:`~gradcli.render.registry.EntryFormat`: only entry text goes out and only
result text comes back. At most a few partitions per worker thread are in flight, and results are written as
soon as the oldest partition is done, so the memory used here is bounded however long the input (a
1,000,000-line standard input streams).

A worker lost mid-run (killed, out of memory) has its partitions run again elsewhere by Dask's scheduler; the
results of a partition are taken once, from its one future, so nothing is lost or duplicated. A partition that
Dask gives up on (:class:`distributed.KilledWorker`: it was running on several workers that died) is run
again one entry at a time, and an entry that Dask gives up on alone is reported as a failed entry
(``WorkerProcessError``), as with ``--jobs``. The scheduler lost mid-run (killed, its machine gone, the network
down) ends the run with ``ConnectionError: lost the Dask scheduler at ADDRESS ...`` and exit 2, whichever way
distributed reports it (the futures cancelled, or fetching a finished partition's results failing).

Dask is an optional dependency (``pip install 'gradcli[dask]'``) imported only here, when ``--dask`` is given.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import uuid
from collections import deque
from concurrent.futures import CancelledError
from typing import Iterable, Iterator

from ...engine import limits
from ...engine.errors import InputError
from .entries import Entry, format_for, read_entries
from .runner import Feeder, Outcome, _died, run_entries

#: Entries per Dask task: large enough that a task's overhead (a few milliseconds of scheduling and
#: messages) is small next to its work (about a millisecond per small entry), small enough to spread the work.
PARTITION = 500

#: What distributed raises when the scheduler is gone: the connection closed (``CommClosedError`` is an
#: ``OSError``) or the futures cancelled as the client lost it.
_LOST = (OSError, CancelledError, asyncio.CancelledError)

#: Partitions in flight per worker thread of the cluster (running, queued on a worker, or done and waiting for
#: the partitions before them to be written).
IN_FLIGHT_PER_THREAD = 2

#: Seconds between looks at Ctrl-C and new input while waiting for the oldest partition.
POLL = 0.05

# The run context is per process (gradcli.engine.context), so the entries of one worker process run one at a time
# even when the worker has several threads; start workers with ``--nthreads 1`` and more of them instead.
_ENTRY_LOCK = threading.Lock()


def run_partition(entries: list, entry_format, debug: bool = False, limit_values: dict | None = None) -> list:
    """A Dask task: run ``entries`` in the worker with the client's limits (``limit_values``, ``--limit``),
    numpy's warnings off (as the CLI) and one entry at a time per worker process. The entries run in a process
    forked from the Dask worker (:func:`~gradcli.frontends.batch.runner.run_entries`), so that an entry past its
    ``time`` limit is stopped even inside one C call (its process killed and replaced, the entry reported as its
    ``LimitError``) and the Dask worker goes on. Returns their :class:`~gradcli.frontends.batch.runner.Outcome` s
    in order; never raises for a bad entry (its error is its outcome)."""
    import numpy as np

    with _ENTRY_LOCK, np.errstate(all="ignore"):
        if limit_values is not None and limits.current.as_dict() != limit_values:
            limits.configure(limit_values)
        return [outcome for _, outcome in run_entries(entries, entry_format, 1, debug=debug, streaming=False)]


def _check_address(address: str) -> None:
    from distributed.comm.addressing import parse_address, parse_host_port

    scheme, location = parse_address(address)
    if scheme in ("tcp", "tls"):
        parse_host_port(location)  # a missing port is an error here, before a Client exists


def _silence_logs() -> None:
    """Drop the log records of Dask (and of the event loop under it) in this process. Dask's logging config
    gives some of its loggers (``distributed``, ``distributed.client``, ...) a stderr handler of their own:
    those go, the children propagate to their top logger, and that one has a null handler (so that Python's
    last-resort handler does not print them either)."""
    import logging

    names = [n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in ("distributed", "tornado")]
    for name in ["distributed", "tornado", "asyncio", *names]:
        log = logging.getLogger(name)
        for handler in list(log.handlers):
            log.removeHandler(handler)
        if "." not in name:  # the children propagate to it
            log.addHandler(logging.NullHandler())
            log.propagate = False
        else:
            log.propagate = True


def connect(address: str, timeout: float | str | None = None, quiet: bool = True):
    """A :class:`distributed.Client` of the Dask scheduler at ``address`` (``tcp://HOST:8786``; ``HOST:8786``
    means tcp). ``timeout``: how long to try (None: Dask's ``distributed.comm.timeouts.connect``, 30 s unless
    configured, e.g. ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=5s``). ``quiet``: Dask's own log messages
    in this process (connections closing, retries) are dropped, since standard error carries gradcli's
    messages only (and a log line written by Dask's thread as the process ends could take Python down with it).

    Raises:
        InputError: Dask is not installed (``UsageError``), the address is malformed (``UsageError``) or the
            scheduler cannot be reached in time (``ConnectionError``): exit 2.
    """
    try:
        from distributed import Client
    except ImportError:
        raise InputError("--dask needs Dask's distributed scheduler: pip install 'gradcli[dask]'",
                         type="UsageError") from None
    if quiet:
        _silence_logs()
    try:
        _check_address(address)
    except ValueError as e:
        raise InputError(f"--dask: {address!r} is not a scheduler address like tcp://HOST:8786 ({e})",
                         type="UsageError") from None
    try:
        return Client(address, set_as_default=False, **({} if timeout is None else {"timeout": timeout}))
    except (OSError, TimeoutError, ValueError) as e:
        detail = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InputError(f"cannot reach the Dask scheduler at {address}: {detail}", type="ConnectionError") from None


class _Partition:
    """Consecutive entries, the future of the task running them, and whether it is a single entry run
    again after Dask gave up on its partition (``alone``)."""

    __slots__ = ("entries", "future", "alone")

    def __init__(self, entries: list, future, alone: bool = False):
        self.entries = entries
        self.future = future
        self.alone = alone


class DaskRunner(Feeder):
    """Runs entries as Dask tasks on the cluster of ``client`` and yields ``(entry, outcome)`` in input order.

    Reads the input as :class:`~gradcli.frontends.batch.runner.ParallelRunner` does (its :class:`~gradcli.frontends.batch.runner.Feeder`) (a reader thread, a bounded queue,
    partitions of what has arrived, so a lone line of standard input is sent at once), keeps at most
    ``window`` partitions in flight (default: :data:`IN_FLIGHT_PER_THREAD` per worker thread of the cluster
    when it starts, at least 4), and yields the oldest partition's outcomes as soon as it is done.
    Closing the iterator (Ctrl-C, a closed pipe) cancels the tasks still in flight; the client stays open
    (its owner closes it).

    Raises (while iterating):
        InputError: the input became unreadable, or the connection to the scheduler was lost (exit 2).
    """

    def __init__(self, entries: Iterable[Entry], entry_format, client, partition: int = PARTITION,
                 window: int | None = None, notice=None, debug: bool = False):
        self.client = client
        self.address = getattr(client.scheduler, "address", None) or "?"
        if window is None:
            try:
                threads = sum(client.nthreads().values()) or 1
            except _LOST as e:
                raise self._lost(e) from e
            window = max(4, IN_FLIGHT_PER_THREAD * threads)
        super().__init__(entries, entry_format, jobs=1, chunk=partition, notice=notice, debug=debug)
        self.window = window
        self._limit_values = limits.current.as_dict()
        self._prefix = f"gradcli-batch-{uuid.uuid4().hex[:8]}"
        self._numbers = itertools.count()

    def _submit(self, entries: list, alone: bool = False) -> _Partition:
        key = f"{self._prefix}-{next(self._numbers)}"
        try:
            future = self.client.submit(run_partition, entries, self.entry_format, self.debug,
                                        self._limit_values, key=key, pure=False, retries=0)
        except _LOST as e:
            raise self._lost(e) from e
        return _Partition(entries, future, alone)

    def _lost(self, exc: BaseException | None = None) -> InputError:
        """The error that ends the run when the scheduler is gone (``exc``: how distributed said so, kept as
        the context for ``--debug``): ``ConnectionError``, exit 2. One text whichever way it was noticed,
        since the client cancels every task of the run when it loses the scheduler."""
        return InputError(f"lost the Dask scheduler at {self.address} (its tasks were cancelled)",
                          type="ConnectionError")

    def __iter__(self) -> Iterator[tuple[Entry, Outcome]]:
        threading.Thread(target=self._read, name="gradcli-batch-reader", daemon=True).start()
        pending: deque[_Partition] = deque()  # input order
        try:
            while True:
                while not self._eof and len(pending) < self.window:
                    entries = self._take(block=not pending)  # wait for input only when nothing is in flight
                    if not entries:
                        break
                    pending.append(self._submit(entries))
                if not pending:
                    if self._eof:
                        break
                    continue
                head = pending[0]
                # short waits: Ctrl-C is seen at once, and input that arrives meanwhile is sent
                timeout = POLL if not self._eof and len(pending) < self.window else 0.5
                try:
                    outcomes = head.future.result(timeout=timeout)
                except TimeoutError as e:  # not done yet (or just done: the next look takes it)
                    if head.future.status != "error":
                        continue
                    outcomes = self._failed(head, pending, e)  # the task itself raised TimeoutError
                except (Exception, asyncio.CancelledError) as e:
                    outcomes = self._failed(head, pending, e)
                else:
                    pending.popleft()
                    head.future.release()
                if outcomes is not None:
                    yield from zip(head.entries, outcomes)
            if self._failure is not None:
                raise self._failure
        finally:
            self._stop.set()
            futures = [p.future for p in pending]
            pending.clear()
            if futures:
                try:
                    self.client.cancel(futures)
                except Exception:  # a lost connection: nothing to cancel
                    pass

    def _failed(self, part: _Partition, pending: deque, exc: BaseException) -> list | None:
        """A partition (the first of ``pending``) whose task did not give outcomes (``exc``: what its
        ``future.result()`` raised): take it out of ``pending``, and return outcomes that say its entries
        failed (a single entry that Dask gave up on) or None after putting its entries back at the front of
        ``pending``, one task each (Dask gave up on the partition: the workers running it died).

        Only a future whose status is ``"error"`` holds the task's own failure. Any other status means the
        result never came: the future was cancelled (the client cancels every future when it loses the
        scheduler: ``CancelledError``) or fetching a finished task's result failed (``CommClosedError`` or
        another ``OSError``: the connection closed under it), which is the scheduler lost.

        Raises:
            InputError: the connection to the scheduler was lost (``ConnectionError``); or the task failed on
                the worker, not in an entry (gradcli cannot be imported there, ...: ``WorkerError``): exit 2.
        """
        from distributed import KilledWorker

        pending.popleft()
        if part.future.status != "error" or isinstance(exc, (CancelledError, asyncio.CancelledError)):
            raise self._lost(exc) from exc
        if not isinstance(exc, KilledWorker):  # the task itself failed: gradcli missing on a worker, ...
            hint = " (is gradcli installed where the workers run?)" if isinstance(exc, ImportError) else ""
            raise InputError(f"a Dask worker could not run the entries from line {part.entries[0].line}: "
                             f"{type(exc).__name__}: {exc}{hint}", type="WorkerError")
        if part.alone:
            return [_died(part.entries[0], self.entry_format)]
        n = len(part.entries)
        what = "its entry again" if n == 1 else f"its {n} entries again, one at a time"
        self.notice(f"gradcli batch: the Dask workers running a partition died; running {what} "
                    f"(from line {part.entries[0].line})\n")
        pending.extendleft(reversed([self._submit([entry], alone=True) for entry in part.entries]))
        return None





# ------------------------------------------------------------------------------------------ partitioned mode
def _part_task(in_path: str, out_path: str, name: str, entry_format, defaults, limit_values: dict,
               debug: bool) -> tuple[int, int]:
    """A Dask task of the partitioned mode: read the input part ``in_path`` (any fsspec URL) on the worker,
    run its entries as ``gradcli batch NAME --json`` would (lines numbered within the part, the time limit
    enforced by a forked worker process) and write the output part ``out_path`` whole: to a temporary name
    first, renamed when complete, so a worker killed mid-run leaves no partial part (Dask runs the task
    again elsewhere). Returns ``(entries, failed)``."""
    import fsspec
    import numpy as np

    with _ENTRY_LOCK, np.errstate(all="ignore"):
        if limits.current.as_dict() != limit_values:
            limits.configure(limit_values)
        fs, _, _ = fsspec.core.get_fs_token_paths(out_path)
        tmp = f"{out_path}.tmp-{uuid.uuid4().hex[:8]}"
        done = failed = 0
        with fsspec.open(in_path, "rb") as source, fs.open(tmp, "wb") as sink:
            entries = read_entries(source, format_for(name), defaults)
            sink.write(entry_format.header().encode("utf-8"))
            for _, outcome in run_entries(entries, entry_format, 1, debug=debug, streaming=False):
                sink.write(outcome.text.encode("utf-8"))
                done += 1
                failed += not outcome.ok
        fs.mv(tmp, out_path)
        return done, failed


def run_partitioned(pattern: str, output_dir: str, client, entry_format, defaults, debug: bool = False):
    """``gradcli batch 'DIR/part-*.jsonl' --dask ADDRESS --output-dir OUT``: one Dask task per input part
    (``dask.delayed``), each reading its part and writing ``OUT/<the part's name>`` on the worker, byte for
    byte what ``gradcli batch DIR/part-00000.jsonl --json`` writes; the client only builds the graph and
    gathers the counts. Returns ``(parts, entries, failed)``.

    Raises:
        InputError: no file matches ``pattern`` (exit 2), or the scheduler was lost.
    """
    import os
    import posixpath

    import dask
    import fsspec

    fs, _, paths = fsspec.core.get_fs_token_paths(pattern)
    paths = sorted(paths)
    if not paths:
        raise InputError(f"no file matches {pattern!r}", type="FileNotFoundError")
    out_fs, _, _ = fsspec.core.get_fs_token_paths(output_dir)
    out_fs.makedirs(output_dir, exist_ok=True)
    local = "://" not in pattern
    tasks = []
    for path in paths:
        base = posixpath.basename(path)
        name = os.path.join(os.path.dirname(pattern), base) if local else path
        url = path if local else fs.unstrip_protocol(path)
        part_defaults = type(defaults)(**{**vars(defaults), "filename": name})
        tasks.append(dask.delayed(_part_task, pure=False)(url, posixpath.join(output_dir.rstrip("/"), base), name,
                                                          entry_format, part_defaults, limits.current.as_dict(),
                                                          debug, dask_key_name=f"gradcli-part-{uuid.uuid4().hex[:8]}-{base}"))
    try:
        counts = client.gather(client.compute(tasks, retries=2))
    except _LOST as e:
        raise InputError(f"lost the Dask scheduler ({e})", type="ConnectionError") from e
    # A worker killed while writing a part leaves its temporary file (the part itself was written again
    # elsewhere): remove those, so the output directory holds the parts alone.
    bases = {posixpath.basename(path) for path in paths}
    for left in out_fs.glob(posixpath.join(output_dir.rstrip("/"), "*.tmp-*")):
        if posixpath.basename(left).rsplit(".tmp-", 1)[0] in bases:
            out_fs.rm(left)
    return len(paths), sum(c[0] for c in counts), sum(c[1] for c in counts)
__all__ = ["DaskRunner", "connect", "run_partition", "run_partitioned", "PARTITION"]

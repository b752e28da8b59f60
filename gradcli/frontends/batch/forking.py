"""Worker processes for ``gradcli batch``, forked warm from this process and killable at any time.

A :class:`Forker` is a small process forked from this one when a batch starts (so it holds every module this
process has loaded: the grammar, numpy, the pipeline) whose only work is to fork worker processes on request,
each connected to this process by a socket of its own. A worker starts in about a millisecond, already warm, so
a batch of any size starts at once, with one worker or sixteen; and a worker stuck inside one C call (an entry
that never reaches a point where Python can stop it) can be killed and replaced without losing the others.

Why not ``multiprocessing``: its "spawn" workers import gradcli again (a second or more each), its "fork"
workers are forked from a process that by then runs threads (the input's reader), and both start a helper
process that outlives a killed parent. Here the forker is forked before any thread starts, and nothing
outlives the batch: when this process ends however it ends (even SIGKILL), the forker reads the end of its
socket and kills every worker it forked (a worker waiting for work also ends when the forker's socket closes).

Messages are pickled objects on ``multiprocessing.connection.Connection`` s (length-prefixed, over the
sockets), which ``multiprocessing.connection.wait`` watches. Needs ``os.fork`` and ``socket.send_fds``
(Linux, macOS and the other Unixes); :func:`available` says so.
"""

from __future__ import annotations

import mmap
import os
import signal
import socket
import struct
import sys
import time

#: Most workers at once (the size of the shared table of the entries the workers are running).
MAX_WORKERS = 1024

_SLOT = struct.Struct("dq")  # a worker's slot: when its current entry started (monotonic seconds; 0: idle), its index


def available() -> bool:
    """Whether this platform can fork workers (os.fork, and sockets that pass file descriptors)."""
    return hasattr(os, "fork") and hasattr(socket, "send_fds") and hasattr(socket, "AF_UNIX")


class Progress:
    """The table shared by this process and its workers (anonymous shared memory, made before the forker is
    forked): which entry of its task each worker is running, and since when. A worker writes it at the
    start of each entry; this process reads it to find an entry past its deadline."""

    def __init__(self, size: int = MAX_WORKERS):
        self._mm = mmap.mmap(-1, _SLOT.size * size)

    def start(self, slot: int, index: int) -> None:
        """In a worker: entry ``index`` of its task starts now."""
        _SLOT.pack_into(self._mm, slot * _SLOT.size, time.monotonic(), index)

    def idle(self, slot: int) -> None:
        """In a worker: its task is done."""
        _SLOT.pack_into(self._mm, slot * _SLOT.size, 0.0, 0)

    def running(self, slot: int) -> tuple[float, int]:
        """``(monotonic start time, index)`` of the entry the worker at ``slot`` runs (start 0: none)."""
        return _SLOT.unpack_from(self._mm, slot * _SLOT.size)


def _quiet_child() -> None:
    """In a forked child: its standard streams go to the null device (it must not hold this process's output
    pipe open, nor write to it), Ctrl-C and hang-up are the parent's to handle, SIGTERM ends it."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, 0)


def _forker_main(control: socket.socket, worker_main) -> None:
    """The forker: for each request (a worker's slot number) fork a worker running ``worker_main(conn,
    slot)`` and send this process's end of its socket back; at the end of ``control`` kill the workers
    still running and exit."""
    from multiprocessing.connection import Connection

    forked = []
    while True:
        _reap(forked)
        try:
            request = control.recv(4)
        except OSError:
            request = b""
        if len(request) != 4:
            break
        slot = int.from_bytes(request, "little")
        mine, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            status = 0
            try:
                control.close()
                mine.close()
                worker_main(Connection(theirs.detach()), slot)
            except BaseException:
                status = 1
            finally:
                os._exit(status)
        theirs.close()
        try:
            socket.send_fds(control, [pid.to_bytes(8, "little")], [mine.fileno()])
        except OSError:
            break
        finally:
            mine.close()
        forked.append(pid)
    _reap(forked)
    for pid in forked:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for pid in forked:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def _reap(forked: list) -> None:
    """Wait for the workers that have ended (their CPU time then counts as this process's children's, and so
    as the batch's), dropping them from ``forked``: a pid still listed is a worker not yet reaped, never
    another process."""
    for pid in list(forked):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            forked.remove(pid)


class Forker:
    """The process that forks workers (see the module docstring). ``worker_main(conn, slot)`` is what each
    worker runs: ``conn`` its end of the socket to this process, ``slot`` the number this process gave it.
    Make it before starting any thread; :meth:`close` ends it (and the workers still running)."""

    def __init__(self, worker_main):
        mine, theirs = socket.socketpair()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered here may be written twice
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        pid = os.fork()
        if pid == 0:
            try:
                mine.close()
                _quiet_child()
                _forker_main(theirs, worker_main)
            finally:
                os._exit(0)
        theirs.close()
        self.pid = pid
        self._control = mine

    def fork(self, slot: int):
        """A new worker: ``(pid, conn)``.

        Raises:
            OSError: the forker is gone."""
        from multiprocessing.connection import Connection

        self._control.sendall(slot.to_bytes(4, "little"))
        data, fds, _, _ = socket.recv_fds(self._control, 8, 1)
        if len(data) != 8 or not fds:
            raise OSError("the batch's forker process ended")
        return int.from_bytes(data, "little"), Connection(fds[0])

    def close(self) -> None:
        """End the forker (it kills the workers still running) and wait for it."""
        if self._control is None:
            return
        self._control.close()
        self._control = None
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


__all__ = ["Forker", "Progress", "available", "MAX_WORKERS"]

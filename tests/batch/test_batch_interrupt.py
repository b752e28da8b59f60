"""Ctrl-C (SIGINT) that comes once every entry of a batch was written: the batch finished, so it reports its
normal summary and exit status, not "interrupted" and 130. A Ctrl-C before that still interrupts
(test_batch_pipes.py)."""

from __future__ import annotations

import io
import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest

from gradcli import render
from gradcli.frontends.batch import command
from gradcli.frontends.batch.command import CountedEntries, finished_before
from gradcli.frontends.batch.entries import Defaults, read_entries

from helpers import ROOT

TIMEOUT = 120
N = 30


def entries_text(n: int = N) -> str:
    return "".join(f"x = tensor([{k}.], requires_grad=True); (x * x).sum()\n" for k in range(n)) + "# the end\n\n"


def test_the_decision_from_the_counts():
    assert finished_before(read=400, written=400, input_ended=True)
    assert not finished_before(read=400, written=399, input_ended=True)  # an entry read was not written
    assert not finished_before(read=400, written=400, input_ended=False)  # more input may come


def test_counted_entries_look_for_the_end_of_a_file():
    def counted(text):
        return CountedEntries(read_entries(io.BytesIO(text.encode()), "text", Defaults(filename="f.txt")))

    entries = counted(entries_text(3))
    assert [next(entries).line for _ in range(3)] == [1, 2, 3]
    assert (entries.read, entries.ended) == (3, False)
    assert entries.look_for_end()  # only a comment and a blank line are left
    entries = counted(entries_text(3))
    next(entries)
    assert not entries.look_for_end()  # another entry follows


class InterruptingStdout(io.StringIO):
    """Standard output whose reader presses Ctrl-C as soon as it has the last entry's line."""

    def __init__(self, last_line: int):
        super().__init__()
        self.last_line = last_line

    def write(self, text: str) -> int:
        n = super().write(text)
        if any(json.loads(line)["line"] == self.last_line for line in text.splitlines()):
            signal.raise_signal(signal.SIGINT)  # handled at once: the batch's handler, in this (the main) thread
        return n


def test_ctrl_c_right_after_the_last_line_in_process(tmp_path, monkeypatch, capsys):
    # the window a user hits with one process: the SIGINT arrives while the last line is being written and
    # counted, before the reader has seen the end of the file
    path = tmp_path / "entries.txt"
    path.write_text(entries_text())
    out = InterruptingStdout(last_line=N)
    monkeypatch.setattr(sys, "stdout", out)
    before = signal.getsignal(signal.SIGINT)
    status = command.run(str(path), entry_format=render.get("json").batch(out), fmt="text")
    assert signal.getsignal(signal.SIGINT) is before
    err = capsys.readouterr().err
    assert status == 0
    assert len(out.getvalue().splitlines()) == N
    assert err.startswith(f"gradcli batch: {N} entries, 0 failed"), err


def test_ctrl_c_before_the_last_line_still_interrupts(tmp_path, monkeypatch, capsys):
    path = tmp_path / "entries.txt"
    path.write_text(entries_text())
    out = InterruptingStdout(last_line=N - 1)
    monkeypatch.setattr(sys, "stdout", out)
    status = command.run(str(path), entry_format=render.get("json").batch(out), fmt="text")
    assert status == 130
    assert capsys.readouterr().err.startswith(f"gradcli batch: interrupted after {N - 1} entries")


def test_ctrl_c_after_every_line_was_written_with_jobs(tmp_path):
    # As the user did: run the batch, read its output until the last entry's result, press Ctrl-C. With
    # worker processes the batch is still stopping them then (the window is wide).
    path = tmp_path / "entries.txt"
    path.write_text(entries_text())
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    p = subprocess.Popen([sys.executable, "-m", "gradcli", "batch", str(path), "--json", "--jobs", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        data = b""
        deadline = time.monotonic() + TIMEOUT
        while data.count(b"\n") < N:
            ready, _, _ = select.select([p.stdout], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"not every result came within {TIMEOUT} s"
            chunk = os.read(p.stdout.fileno(), 65536)
            assert chunk, "the output ended early"
            data += chunk
        assert json.loads(data.splitlines()[-1])["line"] == N
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 0, err.decode()
    assert out == b""
    assert err.decode().startswith(f"gradcli batch: {N} entries, 0 failed"), err.decode()
    assert b"interrupted" not in err and b"Traceback" not in err

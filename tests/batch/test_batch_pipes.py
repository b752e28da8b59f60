"""gradcli batch in real pipelines (real subprocesses): streaming from standard input, the output order with
--jobs, `| head -1`, Ctrl-C, a worker process that dies, UTF-8 whatever the locale, the progress bar only on a
terminal."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import HANG_TIMEOUT, ROOT
TIMEOUT = HANG_TIMEOUT


def env(**extra) -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1", **extra)


def gradcli(*args) -> list[str]:
    return [sys.executable, "-m", "gradcli", "batch", *args]


def popen(*args, **kw) -> subprocess.Popen:
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    kw.setdefault("env", env())
    return subprocess.Popen(gradcli(*args), **kw)


def readline(stream, timeout: float = TIMEOUT) -> bytes:
    """One line from a pipe, failing (instead of hanging) if it does not come."""
    line = b""
    deadline = time.monotonic() + timeout
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no complete line within {timeout} s (got {line!r})"
        chunk = os.read(stream.fileno(), 1)
        assert chunk, f"end of output (got {line!r})"
        line += chunk
    return line


def loop_entry(n: int, value: float) -> str:
    """A text entry that runs n loop iterations (about 0.1 s per 20,000 here) and outputs value * 2."""
    return ("def g(n):\n    i = 0\n    while i < n:\n        i += 1\n"
            f"    return tensor({value}, requires_grad=True) * 2\ng({n})\n---\n")


def fast_entry(value: float) -> str:
    return f"x = tensor([{value}], requires_grad=True); (x * x).sum()\n"


def big_entry(n: int) -> str:
    """An entry whose JSON line is large (about 30 bytes per element)."""
    return f"x = arange({n}.0, requires_grad=True); (x * x).sum()\n"


def processes_in_session(sid: int) -> list[int]:
    """Live (not zombie) processes of a session, from /proc."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            out.append(int(d.name))
    return out


def cpu_ticks(pid: int) -> int:
    """User + system CPU time of a process, in clock ticks (usually 1/100 s)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
                out.append(int(d.name))
    return out


# ------------------------------------------------------------------------------------------------ streaming
@pytest.mark.parametrize("jobs, fmt", [("1", "text"), ("2", "jsonl"), ("1", "table")])
def test_each_result_comes_before_stdin_is_closed(jobs, fmt):
    p = popen("-", "--jobs", jobs, *(["--json"] if fmt != "table" else []), stdin=subprocess.PIPE)
    try:
        for k in (1.0, 2.0, 3.0):
            entry = (json.dumps({"program": "(x * x).sum()", "inputs": {"x": [k]}, "id": k}) + "\n"
                     if fmt == "jsonl" else fast_entry(k))
            p.stdin.write(entry.encode())
            p.stdin.flush()
            line = readline(p.stdout)
            if fmt == "table":
                while b"tensor(" not in line:  # the header comes first
                    line = readline(p.stdout)
                assert f"x: tensor([{2 * k:.0f}.])".encode() in line
            else:
                doc = json.loads(line)
                assert doc["grads"]["x"]["value"] == [2 * k] and doc["line"] == k
        p.stdin.close()
        assert p.wait(TIMEOUT) == 0
        assert p.stderr.read().decode().startswith("gradcli batch: 3 entries, 0 failed, ")
    finally:
        p.kill()
        p.wait()


def test_tail_f_style_input_waits_for_a_multi_line_entry_to_end():
    p = popen("-", "--json", stdin=subprocess.PIPE)
    try:
        p.stdin.write(b"def f(x):\n    return (x * 3).sum()\n")
        p.stdin.flush()
        ready, _, _ = select.select([p.stdout], [], [], 1.0)
        assert not ready  # the block is still open
        p.stdin.write(b"x = tensor([1.], requires_grad=True)\nf(x)\n---\n")
        p.stdin.flush()
        assert json.loads(readline(p.stdout))["grads"]["x"]["value"] == [3.0]
        p.stdin.close()
        assert p.wait(TIMEOUT) == 0
    finally:
        p.kill()
        p.wait()


# -------------------------------------------------------------------------------------------------- order
def test_jobs_keep_input_order_and_output(tmp_path):
    parts = []
    for k in range(48):
        if k % 6 == 0:
            parts.append(loop_entry(10000 if k % 24 == 0 else 1000, float(k)))
        elif k % 6 == 3:
            parts.append("x = randn(3, requires_grad=True); (x * x).sum()\n")  # --seed: the same in every run
        elif k == 7:
            parts.append("x = tensor([1., 2.], requires_grad=True); x * 2\n")  # fails
        else:
            parts.append(fast_entry(float(k)))
    path = tmp_path / "mixed.txt"
    path.write_text("".join(parts))
    runs = {}
    for jobs in ("1", "2"):
        p = subprocess.run(gradcli(str(path), "--json", "--jobs", jobs, "--seed", "3"), capture_output=True,
                           env=env(), timeout=TIMEOUT)
        assert p.returncode == 1, p.stderr  # one entry fails
        runs[jobs] = p.stdout
        docs = [json.loads(line) for line in p.stdout.splitlines()]
        assert len(docs) == 48
        lines = [d["line"] for d in docs]
        assert lines == sorted(lines)
        assert [("error" in d) for d in docs] == [k == 7 for k in range(48)]
        # stderr: exactly the summary, no progress bar (not a terminal)
        assert p.stderr.decode().startswith("gradcli batch: 48 entries, 1 failed (line ")
        assert p.stderr.decode().count("\n") == 1
    assert runs["1"] == runs["2"]
    table = [subprocess.run(gradcli(str(path), "--jobs", jobs, "--seed", "3"), capture_output=True, env=env(),
                            timeout=TIMEOUT).stdout for jobs in ("1", "2")]
    assert table[0] == table[1] and b"RuntimeError" in table[0]


# -------------------------------------------------------------------------------------------------- pipes
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_head_closes_the_pipe_quietly(tmp_path, jobs):
    path = tmp_path / "big.txt"
    path.write_text(big_entry(3000) * 40)  # lines of about 90 kB: more than a pipe holds
    cmd = " ".join(gradcli(str(path), "--json", "--jobs", jobs)) + " | head -1"
    p = subprocess.run(["sh", "-c", cmd], capture_output=True, env=env(), timeout=TIMEOUT)
    assert p.returncode == 0
    assert p.stderr == b""  # no BrokenPipeError trace, no summary
    assert p.stdout.count(b"\n") == 1 and json.loads(p.stdout)["line"] == 1
    # The exit status: 141 (128 + SIGPIPE), as for other tools whose reader went away.
    proc = popen(str(path), "--json", "--jobs", jobs)
    readline(proc.stdout)
    proc.stdout.close()
    assert proc.wait(TIMEOUT) == 141
    assert proc.stderr.read() == b""


def test_sigint_during_a_write_leaves_only_whole_lines(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text(big_entry(20000) * 20)  # each line is far larger than a pipe's buffer
    p = popen(str(path), "--json")
    try:
        ready, _, _ = select.select([p.stdout], [], [], TIMEOUT)
        assert ready
        time.sleep(0.5)  # the pipe is full: gradcli is blocked in the middle of writing a line
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 130
    assert out.endswith(b"\n")
    docs = [json.loads(line) for line in out.splitlines()]
    assert 1 <= len(docs) < 20 and [d["line"] for d in docs] == list(range(1, len(docs) + 1))
    assert err.decode().startswith(f"gradcli batch: interrupted after {len(docs)} entr")
    assert b"Traceback" not in err


def test_ctrl_c_with_jobs_stops_every_process(tmp_path):
    path = tmp_path / "slow.txt"
    path.write_text(fast_entry(1.0) + loop_entry(10_000_000, 2.0) * 4)
    p = popen(str(path), "--json", "--jobs", "2", "--max-steps", "100000000", start_new_session=True)
    try:
        assert json.loads(readline(p.stdout))["line"] == 1
        time.sleep(0.5)
        os.killpg(p.pid, signal.SIGINT)  # what Ctrl-C does: the whole process group gets SIGINT
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 130
    assert out == b""  # (line 1 was read above)
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err
    assert err.decode().startswith("gradcli batch: interrupted after 1 entry, 0 failed")
    deadline = time.monotonic() + TIMEOUT
    while processes_in_session(p.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_in_session(p.pid) == []  # no worker left behind


def test_a_worker_that_dies_loses_no_entry():
    p = popen("-", "--json", "--jobs", "2", "--max-steps", "100000000", stdin=subprocess.PIPE)
    try:
        p.stdin.write(fast_entry(2.0).encode())
        p.stdin.flush()
        assert json.loads(readline(p.stdout))["line"] == 1  # a worker is up
        # the process that forks the workers (forked before any thread started): the child that has children
        # (the time limit's watchdog, also a child, has none and may still be ending)
        [forker] = [c for c in children(p.pid) if children(c)]
        workers = children(forker)  # forked when there is work for them: one so far
        assert len(workers) >= 1
        before = {w: cpu_ticks(w) for w in workers}
        p.stdin.write(loop_entry(300_000, 1.0).encode())  # runs for a second or more
        p.stdin.flush()
        deadline = time.monotonic() + TIMEOUT
        while all(cpu_ticks(w) - before[w] < 20 for w in workers):  # until one of them runs it (0.2 s of CPU)
            assert time.monotonic() < deadline
            time.sleep(0.05)
        for w in workers:
            os.kill(w, signal.SIGKILL)
        p.stdin.write(fast_entry(3.0).encode())
        p.stdin.close()
        p.wait(TIMEOUT)
        out, err = p.stdout.read(), p.stderr.read()
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 0, err
    docs = [json.loads(line) for line in out.splitlines()]
    assert [(d["line"], d["output"]["value"]) for d in docs] == [(2, 2.0), (9, 9.0)], (out, err)
    assert b"gradcli batch: a worker process died; running its entry again (from line 2)" in err
    assert err.decode().splitlines()[-1].startswith("gradcli batch: 3 entries, 0 failed")


# ------------------------------------------------------------------------------------------ encoding, tty
def test_output_is_utf8_whatever_the_locale(tmp_path):
    path = tmp_path / "u.jsonl"
    path.write_text(json.dumps({"program": "(x * 2).sum()", "inputs": {"x": [1.0]}, "id": "∂y/∂x ✓"},
                               ensure_ascii=False) + "\n", encoding="utf-8")
    ascii_env = env(PYTHONIOENCODING="ascii", LC_ALL="C", LANG="C")
    p = subprocess.run(gradcli(str(path), "--json"), capture_output=True, env=ascii_env, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.decode("utf-8"))["id"] == "∂y/∂x ✓"
    p = subprocess.run(gradcli(str(path)), capture_output=True, env=ascii_env, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    assert "│" in p.stdout.decode("utf-8")


def test_progress_bar_only_when_stderr_is_a_terminal(tmp_path):
    import pty

    path = tmp_path / "slow.txt"
    path.write_text(loop_entry(400_000, 1.0) + fast_entry(2.0))  # runs well over PROGRESS_DELAY
    master, slave = pty.openpty()
    p = popen(str(path), "--json", "--max-steps", "100000000", stderr=slave, env=env(COLUMNS="100"))
    os.close(slave)
    tty = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the other side is closed
            break
        if not chunk:
            break
        tty += chunk
    os.close(master)
    out = p.stdout.read()
    assert p.wait(TIMEOUT) == 0
    assert [json.loads(line)["line"] for line in out.splitlines()] == [1, 8]  # stdout: results only
    assert b"entries, 0 failed" in tty  # the bar's text
    assert b"\x1b[" in tty  # drawn with terminal control codes
    last = tty.rstrip().split(b"\n")[-1].split(b"\x1b[2K")[-1].strip()  # after the bar is erased
    assert re.fullmatch(rb"gradcli batch: 2 entries, 0 failed, \d+\.\d\d s, [\d.]+ entries/s", last), tty[-300:]

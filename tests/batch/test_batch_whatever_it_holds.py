"""Nothing lost whatever an entry holds, a deadline that always fires, and signals that end everything: each
case runs ``gradcli batch`` on a file as a user does (a subprocess) and checks that every entry has its one
result, in input order, with its line (and id), and that the batch goes on after the bad one.

The cases: a continuation that fails to parse (split back into its lines), ids that cannot be echoed (a
number out of range, a lone surrogate, nesting 3,000 deep), an entry that prints without end, a ``#`` comment
with bytes that are not UTF-8, a non-finite result, an entry stuck in one C call (its worker killed at the
deadline, in one process and with ``--jobs``), and SIGTERM, SIGINT and SIGHUP mid-run (every process of the
batch ends, checked by PID; the output written is valid; the summary says how many entries were written).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import ROOT

#: Seconds before a command counts as hung: a guard, not a speed check.
TIMEOUT = 300


def env(**extra) -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1", **extra)


def gradcli(*args) -> list[str]:
    return [sys.executable, "-m", "gradcli", "batch", *args]


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run(gradcli(*args), capture_output=True, env=env(), timeout=TIMEOUT)


def docs_of(out: bytes) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def valid(k: int) -> str:
    return f"x = tensor([{k}.], requires_grad=True); (x * x).sum()"


def jvalid(k: int, **fields) -> str:
    return json.dumps({"program": "(x * x).sum()", "inputs": {"x": [float(k)]}, **fields})


# ------------------------------------------------------------------------------------------------ nothing lost
@pytest.mark.parametrize("broken", [b"\xff\xfe\x00 junk", b"s = 'an unclosed string", b'"""'])
def test_a_continuation_that_fails_to_parse_is_split_into_its_lines(tmp_path, broken):
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"\n".join([valid(1).encode(), b"y = tensor([1.,", broken, valid(4).encode(),
                                 valid(5).encode()]) + b"\n")
    r = run(str(path), "--json")
    docs = docs_of(r.stdout)
    assert [d["line"] for d in docs] == [1, 2, 3, 4, 5], docs
    assert [d.get("output", {}).get("value") for d in docs] == [1.0, None, None, 16.0, 25.0]
    assert docs[1]["error"]["type"] == "SyntaxError" and "error" in docs[2]
    assert r.returncode == 1 and b"5 entries, 2 failed (lines 2, 3)" in r.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ids_that_cannot_be_echoed_are_errors_of_their_entry(tmp_path, jobs):
    deep = "[" * 3000 + "]" * 3000
    lines = [jvalid(1, id="a"),
             jvalid(2)[:-1] + ', "id": 1e999}',
             jvalid(3)[:-1] + ', "id": "\\ud800"}',
             jvalid(4)[:-1] + f', "id": {deep}}}',
             jvalid(5, id=[1, {"k": [None, True, 2.5, "\u2202"]}]),
             jvalid(6, id=7)]
    path = tmp_path / "ids.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = run(str(path), "--json", "--jobs", jobs)
    docs = docs_of(r.stdout)
    assert [d["line"] for d in docs] == [1, 2, 3, 4, 5, 6]
    assert [d.get("id") for d in docs] == ["a", None, None, None, [1, {"k": [None, True, 2.5, "\u2202"]}], 7]
    assert [d["output"]["value"] for d in docs if "output" in d] == [1.0, 25.0, 36.0]
    assert "out of range" in docs[1]["error"]["message"]
    assert "lone surrogate" in docs[2]["error"]["message"]
    assert docs[3]["error"]["type"] == "JSONDecodeError"
    assert r.returncode == 1 and b"Traceback" not in r.stderr
    assert b"6 entries, 3 failed (lines 2, 3, 4)" in r.stderr


def test_an_entry_that_prints_past_its_budget_fails_alone(tmp_path):
    path = tmp_path / "print.txt"
    path.write_text(valid(1) + "\nfor i in range(10 ** 8): print('0123456789' * 10)\n" + valid(3) + "\n")
    r = run(str(path), "--json", "--limit", "file_bytes=100000", "--limit", "steps=none")
    docs = docs_of(r.stdout)
    assert [d["line"] for d in docs] == [1, 2, 3]
    assert docs[1]["error"]["type"] == "LimitError" and "printed more than 100,000" in docs[1]["error"]["message"]
    assert docs[2]["output"]["value"] == 9.0
    assert len(r.stderr) < 200_000  # what it printed is bounded too
    assert r.returncode == 1 and b"3 entries, 1 failed (line 2)" in r.stderr


def test_an_entry_that_prints_a_lone_surrogate_fails_as_gradcli_run_does(tmp_path):
    path = tmp_path / "surrogate.txt"
    path.write_text(valid(1) + "\nprint('\\ud800'); " + valid(2) + "\n" + valid(3) + "\n")
    r = run(str(path), "--json")
    docs = docs_of(r.stdout)
    assert [d["line"] for d in docs] == [1, 2, 3]
    assert docs[1]["error"]["type"] == "UnicodeEncodeError" and "surrogates not allowed" in docs[1]["error"]["message"]
    assert docs[2]["output"]["value"] == 9.0
    assert r.returncode == 1 and b"3 entries, 1 failed (line 2)" in r.stderr


def test_a_comment_that_is_not_utf8_is_a_comment(tmp_path):
    path = tmp_path / "comment.txt"
    path.write_bytes(b"# caf\xe9 \xff\n" + valid(2).encode() + b"\n  # \xfe indented\n" + valid(4).encode() + b"\n")
    r = run(str(path), "--json")
    assert [(d["line"], d["output"]["value"]) for d in docs_of(r.stdout)] == [(2, 4.0), (4, 16.0)]
    assert r.returncode == 0 and b"2 entries, 0 failed" in r.stderr


def test_a_non_finite_result_gets_grad_s_warning_and_mark(tmp_path):
    path = tmp_path / "inf.txt"
    path.write_text(valid(1) + "\nw = tensor([1., 2.], requires_grad=True); (w / 0).sum()\n")
    r = run(str(path))
    out, err = r.stdout.decode(), r.stderr.decode()
    assert r.returncode == 0
    assert "nonfinite: output, grad of w" in out and out.count("nonfinite") == 1
    assert f"{path}:2: warning: NaN or infinity in output, grad of w" in err
    g = subprocess.run([sys.executable, "-m", "gradcli", "grad", "w = tensor([1., 2.], requires_grad=True); "
                        "(w / 0).sum()"], capture_output=True, env=env(), timeout=TIMEOUT)
    assert err.split(": ", 1)[1].split("\n")[0] in g.stderr.decode()  # the very warning grad writes


# -------------------------------------------------------------------------------------------------- deadline
STUCK = "print(0.5 in range(10 ** 15))"  # one C call that never returns to Python


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_entry_stuck_in_one_c_call_is_stopped_at_its_deadline(tmp_path, jobs):
    path = tmp_path / "stuck.txt"
    path.write_text("\n".join([valid(1), STUCK, valid(3), valid(4)]) + "\n")
    r = run(str(path), "--json", "--limit", "time=1", "--jobs", jobs)
    docs = docs_of(r.stdout)
    assert [d["line"] for d in docs] == [1, 2, 3, 4]
    assert docs[1]["error"]["type"] == "LimitError" and "the entry ran for 1 seconds" in docs[1]["error"]["message"]
    assert [d["output"]["value"] for d in docs if "output" in d] == [1.0, 9.0, 16.0]
    assert r.returncode == 1 and b"4 entries, 1 failed (line 2)" in r.stderr and b"Traceback" not in r.stderr


# --------------------------------------------------------------------------------------------------- signals
def descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (children, their children, ...), from /proc."""
    parents = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            parents[int(d.name)] = int(stat[stat.rindex(")") + 2:].split()[1])
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, parent in parents.items() if parent == p]
        found += kids
        todo += kids
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"  # a zombie has ended


def read_lines(p, n: int) -> bytes:
    data = b""
    deadline = time.monotonic() + TIMEOUT
    while data.count(b"\n") < n:
        ready, _, _ = select.select([p.stdout], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"not {n} lines within {TIMEOUT} s"
        chunk = os.read(p.stdout.fileno(), 65536)
        assert chunk, "the output ended early"
        data += chunk
    return data


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_signal_ends_every_process_and_says_what_was_written(tmp_path, sig, jobs):
    p = subprocess.Popen(gradcli("-", "--json", "--jobs", jobs), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env())
    try:
        p.stdin.write((valid(1) + "\n").encode())
        p.stdin.flush()
        data = read_lines(p, 1)
        p.stdin.write(("\n".join([STUCK, valid(3)]) + "\n").encode())
        p.stdin.flush()
        deadline = time.monotonic() + TIMEOUT
        while len(pids := descendants(p.pid)) < 2:  # the forker and the worker stuck in entry 2
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.3)
        p.send_signal(sig)
        out, err = p.stdout.read(), p.stderr.read()
        p.wait(TIMEOUT)
    finally:
        p.kill()
        p.wait()
    out = data + out
    assert p.returncode == 128 + sig
    assert [d["line"] for d in docs_of(out)] == [1]  # whole, valid lines
    name = "" if sig == signal.SIGINT else f"by {signal.Signals(sig).name} "
    assert err.decode().startswith(f"gradcli batch: interrupted {name}after 1 entry, 0 failed"), err
    assert b"Traceback" not in err
    deadline = time.monotonic() + TIMEOUT
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in pids if alive(pid)]  # no orphan


def test_sigkill_of_the_batch_leaves_no_process(tmp_path):
    p = subprocess.Popen(gradcli("-", "--json", "--jobs", "2"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env())
    try:
        p.stdin.write((valid(1) + "\n").encode())
        p.stdin.flush()
        read_lines(p, 1)
        p.stdin.write((STUCK + "\n").encode())
        p.stdin.flush()
        deadline = time.monotonic() + TIMEOUT
        while len(pids := descendants(p.pid)) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        p.kill()
        p.wait()
    finally:
        p.kill()
        p.wait()
    deadline = time.monotonic() + TIMEOUT
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in pids if alive(pid)]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_after_the_last_entry_leaves_a_finished_batch(tmp_path, sig):
    n = 30
    path = tmp_path / "entries.txt"
    path.write_text("".join(valid(k) + "\n" for k in range(n)))
    p = subprocess.Popen(gradcli(str(path), "--json", "--jobs", "2"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env())
    try:
        data = read_lines(p, n)
        p.send_signal(sig)
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        p.kill()
        p.wait()
    assert [d["line"] for d in docs_of(data + out)] == list(range(1, n + 1))
    if p.returncode == -sig:  # the signal came after the batch had restored the default action: it ended anyway
        assert err.decode().startswith(f"gradcli batch: {n} entries, 0 failed"), err
        return
    assert p.returncode == 0, err
    assert err.decode().startswith(f"gradcli batch: {n} entries, 0 failed"), err
    assert b"interrupted" not in err and b"Traceback" not in err

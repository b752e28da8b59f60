"""The robustness guarantees for ``gradcli run`` and ``gradcli batch`` (``tests/robust/test_robust.py`` covers
``gradcli grad``): ``--limit``, ``--anomaly`` and ``--debug`` on both commands, bounded and checked program
files for ``run``, and in ``batch`` limits that reach ``--jobs`` workers, a time limit per entry, and an entry's
MemoryError, RecursionError or internal error reported on that entry while the batch goes on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gradcli.engine import limits
from gradcli.frontends.cli import app

from helpers import HANG_TIMEOUT, ROOT
runner = CliRunner()


def gc(*args, input=None, env=None):
    return runner.invoke(app, list(args), input=input, env=env)


def program_file(tmp_path, text: str, name="prog.py") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def clean_failure(r, code: int, *fragments):
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == code, (r.exit_code, r.output)
    for f in fragments:
        assert f in r.stderr, (f, r.stderr)
    assert "Traceback" not in r.stderr
    return r.stderr


def json_lines(r) -> list[dict]:
    return [json.loads(line) for line in r.stdout.splitlines()]


def subprocess_gradcli(*args, input=None, env=None, timeout=HANG_TIMEOUT):
    e = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True, env=e, input=input,
                          timeout=timeout)


# ------------------------------------------------------------------------------------------ gradcli run
def test_run_limit_option_and_environment(tmp_path):
    path = program_file(tmp_path, "print('start')\nx = ones(11, 10)\nprint('never')\n")
    r = gc("run", path, "--limit", "elements=100")
    err = clean_failure(r, 1, "LimitError: the new tensor would have shape [11, 10], 110 elements; the limit is 100",
                        "--limit elements=N", "GRADCLI_MAX_ELEMENTS")
    assert r.stdout == "start\n" and err.startswith(f"{path}:2:5:")
    clean_failure(gc("run", path, env={"GRADCLI_MAX_ELEMENTS": "100"}), 1, "LimitError")
    assert gc("run", path, "--limit", "elements=110").stdout == "start\nnever\n"
    clean_failure(gc("run", path, "--limit", "elements=lots"), 2, "--limit elements")
    clean_failure(gc("run", path, "--limit", "colour=1"), 2, "colour")


def test_run_call_depth_follows_python_and_the_limit(tmp_path):
    text = "def down(n):\n    if n == 0:\n        return 0\n    return 1 + down(n - 1)\nprint(down(990))\n"
    path = program_file(tmp_path, text)
    assert gc("run", path).stdout == "990\n"  # Python's default recursion limit is 1,000
    r = gc("run", path, "--limit", "call_depth=500")
    clean_failure(r, 1, "RecursionError: maximum recursion depth exceeded: down()", "--limit call_depth=N")


def test_run_program_file_errors(tmp_path):
    clean_failure(gc("run", str(tmp_path / "missing.py")), 2, "FileNotFoundError: no such file")
    clean_failure(gc("run", str(tmp_path)), 2, "IsADirectoryError", "is a directory")
    binary = tmp_path / "prog.bin"
    binary.write_bytes(b"x = 1\n\0\0\1\2")
    clean_failure(gc("run", str(binary)), 2, "is a binary file", "line 2, column 1")
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"print(1)\ns = 'caf\xe9'\n")
    clean_failure(gc("run", str(latin)), 2, "UnicodeDecodeError", "is not UTF-8 text: invalid byte 0xe9",
                  "line 2, column 9")
    big = program_file(tmp_path, "x = 1\n" * 100)
    clean_failure(gc("run", big, "--limit", "file_bytes=100"), 2, "is 600 bytes", "--limit file_bytes=N")
    assert gc("run", big, "--limit", "file_bytes=600").exit_code == 0
    r = gc("run", "-", input="print(2 + 2)\n")
    assert (r.exit_code, r.stdout) == (0, "4\n")


def test_run_stdin_that_is_not_utf8():
    p = subprocess_gradcli("run", "-", input=b"print(1)\n\xff\n")
    err = p.stderr.decode()
    assert p.returncode == 2 and p.stdout == b"" and "Traceback" not in err
    assert "<stdin> is not UTF-8 text: invalid byte 0xff (line 2, column 1)" in err


def test_run_anomaly_names_the_op_and_the_line_like_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    text = "x = tensor([0., 1.], requires_grad=True)\ny = x * 1\nz = (sqrt(y) * 0).sum()\nz.backward()\nprint(x.grad)\n"
    path = program_file(tmp_path, text)
    r = gc("run", path)
    assert (r.exit_code, r.stdout) == (0, "tensor([nan, 0.])\n")  # without --anomaly: NaN, as PyTorch
    r = gc("run", path, "--anomaly")
    err = clean_failure(r, 1, "anomaly mode: the backward of SqrtBackward0")
    lines = err.splitlines()
    assert lines[0] == f"{path}:3:6:"  # sqrt(y), where the node was created, not z.backward()
    assert lines[2] == "         ^"
    x = torch.tensor([0., 1.], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly(), pytest.raises(RuntimeError) as e:
            (torch.sqrt(x * 1) * 0).sum().backward()
    assert lines[3] == f"RuntimeError: {e.value}"
    assert r.stdout == ""
    from gradcli.engine import anomaly

    assert not anomaly.enabled()  # off again after the run


def test_run_debug_shows_the_internal_traceback(tmp_path):
    path = program_file(tmp_path, "ones(2) @ ones(3)\n")
    r = gc("run", path, "--debug")
    assert r.exit_code == 1 and r.stderr.startswith("Traceback (most recent call last)")
    assert "ops/linalg/" in r.stderr and "RuntimeError: inconsistent tensor size" in r.stderr
    assert "Traceback" not in gc("run", path).stderr


def test_run_time_limit_stops_a_program(tmp_path):
    # The limit counts from the process's start, imports included, which take seconds on a loaded machine:
    # 5 s leaves them room, so that 'start' is printed before the endless loop is stopped.
    path = program_file(tmp_path, "print('start')\nwhile True:\n    x = 1\n")
    p = subprocess_gradcli("run", path, "--limit", "time=5", "--limit", "steps=none", timeout=HANG_TIMEOUT)
    err = p.stderr.decode()
    assert p.returncode == 1 and p.stdout == b"start\n", err
    assert "LimitError: gradcli ran for 5 seconds" in err and "Traceback" not in err


# ---------------------------------------------------------------------------------------- gradcli batch
BATCH = "x = tensor(2., requires_grad=True); (x * ones(11, 10)).sum()\nx = tensor(3., requires_grad=True); x * x\n"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_batch_limits_reach_every_entry_and_worker(jobs):
    r = gc("batch", "-", "--json", "--jobs", jobs, "--limit", "elements=100", input=BATCH)
    assert r.exit_code == 1
    first, second = json_lines(r)
    assert first["error"]["type"] == "LimitError" and "110 elements; the limit is 100" in first["error"]["message"]
    assert second["output"]["value"] == 9.0
    r = gc("batch", "-", "--json", "--jobs", jobs, input=BATCH)
    assert r.exit_code == 0 and [d["output"]["value"] for d in json_lines(r)] == [220.0, 9.0]
    r = gc("batch", "-", "--json", "--jobs", jobs, input=BATCH, env={"GRADCLI_MAX_ELEMENTS": "100"})
    assert [("error" in d) for d in json_lines(r)] == [True, False]


def test_batch_bad_limit_option_exits_2():
    clean_failure(gc("batch", "-", "--limit", "elements=-3", input=BATCH), 2, "--limit elements")
    clean_failure(gc("batch", "-", "--max-steps", "0", input=BATCH), 2)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_batch_time_limit_is_per_entry(jobs):
    entries = "while True:\n    pass\n---\nx = tensor(3., requires_grad=True); x * x\n"
    p = subprocess_gradcli("batch", "-", "--json", "--jobs", jobs, "--limit", "time=1", "--limit", "steps=none",
                           input=entries.encode(), timeout=HANG_TIMEOUT)
    assert p.returncode == 1, p.stderr
    first, second = [json.loads(line) for line in p.stdout.splitlines()]
    assert first["line"] == 1 and first["error"]["type"] == "LimitError"
    assert first["error"]["message"].startswith("the entry ran for 1 seconds; the limit is 1 seconds")
    assert second == {**second, "line": 4} and second["output"]["value"] == 9.0  # the batch went on


def test_batch_time_limit_does_not_end_a_long_batch():
    """The time limit is per entry: a batch that streams for longer than the limit in total still finishes."""
    e = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    p = subprocess.Popen([sys.executable, "-m", "gradcli", "batch", "-", "--json", "--limit", "time=1"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
    try:
        p.stdin.write(b"x = tensor(2., requires_grad=True); x * x\n")
        p.stdin.flush()
        first = json.loads(p.stdout.readline())  # streamed: answered before the input ends
        time.sleep(2.5)
        p.stdin.write(b"x = tensor(3., requires_grad=True); x * x\n")
        p.stdin.close()
        rest = p.stdout.read()
        assert p.wait(timeout=HANG_TIMEOUT) == 0, p.stderr.read()
    finally:
        p.kill()
    assert first["output"]["value"] == 4.0 and json.loads(rest)["output"]["value"] == 9.0


def test_batch_anomaly():
    entries = "x = tensor([0., 1.], requires_grad=True); (sqrt(x) * 0).sum()\nx = tensor(3., requires_grad=True); x * x\n"
    r = gc("batch", "-", "--json", "--anomaly", input=entries)
    first, second = json_lines(r)
    assert first["error"] == {"type": "RuntimeError", "line": 1, "column": 44,
                              "message": "Function 'SqrtBackward0' returned nan values in its 0th output."}
    assert second["output"]["value"] == 9.0
    r = gc("batch", "-", "--json", input=entries)
    assert json_lines(r)[0]["grads"]["x"]["value"] == ["NaN", 0.0] and r.exit_code == 0


@pytest.mark.parametrize("exc, type_, fragment", [
    (MemoryError(), "MemoryError", "out of memory"),
    (RecursionError("maximum recursion depth exceeded"), "RecursionError", "maximum recursion depth exceeded"),
    (ZeroDivisionError("a bug"), "InternalError", "ZeroDivisionError: a bug (a bug in gradcli; please report it)"),
])
def test_batch_entry_failures_are_reported_on_the_entry(monkeypatch, exc, type_, fragment):
    from gradcli.app import calculator

    real = calculator.compute
    calls = []

    def compute(req, **kw):  # the first entry fails inside the engine; the others run
        calls.append(req)
        if len(calls) == 1:
            raise exc
        return real(req, **kw)

    monkeypatch.setattr(calculator, "compute", compute)
    r = gc("batch", "-", "--json", input=BATCH)
    assert r.exit_code == 1 and "Traceback" not in r.stderr
    first, second = json_lines(r)
    assert first["error"]["type"] == type_ and fragment in first["error"]["message"]
    assert second["output"]["value"] == 9.0


def test_batch_debug_shows_the_traceback_of_an_internal_error(monkeypatch):
    from gradcli.app import calculator

    def compute(req, **kw):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(calculator, "compute", compute)
    monkeypatch.setenv("GRADCLI_DEBUG", "0")  # restored at the end: --debug sets it for the entries (and workers)
    r = gc("batch", "-", "--json", input="1\n")
    assert "Traceback" not in r.stderr
    r = gc("batch", "-", "--json", "--debug", input="1\n")
    assert "Traceback (most recent call last)" in r.stderr and "in compute" in r.stderr
    assert json_lines(r)[0]["error"]["type"] == "InternalError"


@pytest.mark.parametrize("long_line", [b"a" * 5000 + b"\n", b"\0" * 5000 + b"\n", b'{"program": "' + b"x" * 5000 + b'"}\n'])
def test_batch_line_over_the_file_bytes_limit_is_one_failed_entry(long_line):
    entries = (b"x = tensor(2., requires_grad=True); x * x\n" + long_line
               + b"x = tensor(3., requires_grad=True); x * x\n")
    p = subprocess_gradcli("batch", "-", "--json", "--format", "text", "--limit", "file_bytes=1000", input=entries)
    docs = [json.loads(line) for line in p.stdout.splitlines()]
    assert p.returncode == 1 and [d["line"] for d in docs] == [1, 2, 3]
    assert docs[1]["error"]["message"].startswith("line 2 of <stdin> is more than 1,000 bytes; the limit is 1,000")
    assert docs[0]["output"]["value"] == 4.0 and docs[2]["output"]["value"] == 9.0


def test_batch_never_holds_a_line_longer_than_the_limit():
    """An endless line (``/dev/zero``) is read in pieces, each at most the limit (+1 byte to see it is over)."""
    import io

    from gradcli.frontends.batch.entries import read_lines

    class Recording(io.BytesIO):
        largest = 0

        def readline(self, size=-1):
            data = super().readline(size)
            Recording.largest = max(Recording.largest, len(data))
            return data

    limits.configure({"file_bytes": 1000})
    stream = Recording(b"\0" * 10_000_000 + b"\nok\n")
    lines = list(read_lines(stream))
    assert [(ln.number, ln.text) for ln in lines] == [(1, None), (2, "ok")]
    assert lines[0].error.limit == "file_bytes" and lines[1].end == 10_000_004
    assert Recording.largest <= 1 << 20

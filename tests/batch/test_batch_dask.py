"""``gradcli batch --dask ADDRESS`` on a real Dask cluster on this machine: a LocalCluster
with a scheduler and two worker processes (one thread each), shared by the tests of this file.

The output is byte-identical to a one-process run (20,000 entries), a worker killed mid-run loses and
duplicates nothing, memory stays bounded (entries are read a bounded window ahead of the output), an
unreachable scheduler is a one-line error with exit 2, Ctrl-C and a closed pipe behave as without --dask, and
Dask is imported only with --dask. CI installs Dask (the README's test command installs ``.[test,plot,dask]``).
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("distributed", reason="gradcli batch --dask needs Dask: pip install -e '.[dask]'")
from distributed import Client, LocalCluster  # noqa: E402

from gradcli import render  # noqa: E402
from gradcli.frontends.batch import Defaults, read_entries
from gradcli.frontends.batch.dask_runner import DaskRunner
from helpers import ROOT

# pytest-xdist (the suite runs with -n auto): this module's tests run in one worker, so that the module-scoped
# LocalCluster starts once.
pytestmark = pytest.mark.xdist_group("dask")

#: Seconds before a test counts a command as hung: a guard against hangs, not a speed check (a loaded machine
#: can be many times slower than an idle one).
TIMEOUT = 600


def env(**extra) -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1", **extra)


def gradcli(*args) -> list[str]:
    return [sys.executable, "-m", "gradcli", "batch", *args]


def entry(k: int) -> str:
    return f"x = tensor([{k}., {k % 7}.5], requires_grad=True); (x * x).sum()\n"


def value(k: int) -> float:
    return float(k * k + (k % 7 + 0.5) ** 2)


def entries(n: int):
    return read_entries(io.BytesIO("".join(entry(k) for k in range(n)).encode()), "text", Defaults())


@pytest.fixture(scope="module")
def cluster():
    """A scheduler and two worker processes with one thread each (the workers import gradcli from this
    checkout: they are started with this process's sys.path)."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=":0") as c:
        yield c


@pytest.fixture(scope="module")
def client(cluster):
    with Client(cluster.scheduler_address, set_as_default=False) as c:
        yield c


def test_twenty_thousand_entries_byte_identical_to_one_process(tmp_path, cluster):
    path = tmp_path / "many.txt"
    path.write_text("".join(entry(k) for k in range(20_000)) + "bad (\n")
    # Both at once (the one-process run and the cluster's two workers share the CPUs): half the time
    commands = {"local": gradcli(str(path), "--json"),
                "dask": gradcli(str(path), "--json", "--dask", cluster.scheduler_address)}
    procs = {name: subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
             for name, cmd in commands.items()}
    (local, local_err), (dask, dask_err) = (procs[name].communicate(timeout=TIMEOUT) for name in commands)
    assert procs["dask"].returncode == procs["local"].returncode == 1, dask_err  # the last entry fails, as an entry
    assert dask == local
    assert local.count(b"\n") == 20_001
    assert json.loads(local.splitlines()[-1])["error"]["type"] == "SyntaxError"
    assert dask_err.decode().startswith("gradcli batch: 20001 entries, 1 failed (line 20001)")


def test_the_table_format_too(tmp_path, cluster):
    path = tmp_path / "few.txt"
    path.write_text("".join(entry(k) for k in range(30)) + "undefined + 1\n")
    local = subprocess.run(gradcli(str(path)), capture_output=True, env=env(), timeout=TIMEOUT)
    dask = subprocess.run(gradcli(str(path), "--dask", cluster.scheduler_address), capture_output=True, env=env(),
                          timeout=TIMEOUT)
    assert dask.returncode == local.returncode == 1
    assert dask.stdout == local.stdout and b"NameError" in dask.stdout


def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(client):
    n = 4_000
    before = client.run(os.getpid)  # worker address -> pid
    assert len(before) == 2
    outcomes = iter(DaskRunner(entries(n), render.get("json").batch(None), client, partition=100))
    got = []
    killed = None
    for e, outcome in outcomes:
        got.append((e.line, json.loads(outcome.text)))
        if len(got) == 500:  # part way: both workers are running partitions (4 are in flight)
            processing = client.processing()
            address = next(a for a in before if processing.get(a)) if any(processing.values()) else next(iter(before))
            killed = before[address]
            os.kill(killed, signal.SIGKILL)
    assert killed is not None
    assert [line for line, _ in got] == list(range(1, n + 1))  # every entry exactly once, in input order
    assert [doc["output"]["value"] for _, doc in got] == pytest.approx([value(k) for k in range(n)])
    deadline = time.monotonic() + TIMEOUT  # the nanny restarts the worker, for the tests after this one
    while True:
        pids = client.run(os.getpid)
        if len(pids) == 2 and killed not in pids.values():
            break
        assert time.monotonic() < deadline, pids
        time.sleep(0.2)


def test_entries_are_read_a_bounded_window_ahead(client):
    class Counting:
        def __init__(self, source):
            self.source, self.taken = source, 0

        def __iter__(self):
            for e in self.source:
                self.taken += 1
                yield e

    n, partition, window = 3_000, 50, 4
    source = Counting(entries(n))
    ahead = []
    lines = []
    for e, _ in DaskRunner(source, render.get("json").batch(None), client, partition=partition, window=window):
        lines.append(e.line)
        ahead.append(source.taken - len(lines))
    assert lines == list(range(1, n + 1))
    # At most: the partitions in flight, the reader's queue (one partition), the one being taken and one being
    # put; never the whole input.
    assert max(ahead) <= window * partition + 2 * partition + 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_scheduler_is_one_line_and_exit_2(tmp_path):
    path = tmp_path / "one.txt"
    path.write_text(entry(1))
    address = f"tcp://127.0.0.1:{_closed_port()}"
    p = subprocess.run(gradcli(str(path), "--dask", address), capture_output=True, timeout=TIMEOUT,
                       env=env(DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="1s"))
    assert p.returncode == 2
    assert p.stdout == b""
    lines = p.stderr.decode().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"ConnectionError: cannot reach the Dask scheduler at {address}: ")


@pytest.mark.parametrize("args, message", [
    (["--dask", "no-port"], "UsageError: --dask: 'no-port' is not a scheduler address like tcp://HOST:8786"),
    (["--dask", "tcp://127.0.0.1:1", "--jobs", "2"], "UsageError: --jobs runs worker processes here and --dask"),
])
def test_bad_dask_options_are_usage_errors(tmp_path, args, message):
    path = tmp_path / "one.txt"
    path.write_text(entry(1))
    p = subprocess.run(gradcli(str(path), *args), capture_output=True, env=env(), timeout=TIMEOUT)
    assert p.returncode == 2 and p.stdout == b""
    assert p.stderr.decode().startswith(message) and p.stderr.count(b"\n") == 1, p.stderr


@pytest.mark.perf
def test_dask_is_imported_only_with_dask(tmp_path):
    path = tmp_path / "one.txt"
    path.write_text(entry(1))
    code = ("import sys; from gradcli.frontends.cli import main; sys.argv = ['gradcli', 'batch', sys.argv[1], '--json']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(str(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))))")
    p = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, env=env(), timeout=TIMEOUT)
    assert json.loads(p.stdout)["line"] == 1
    assert p.stderr.decode().splitlines()[-1] == "[]"


def test_each_result_comes_before_stdin_is_closed(cluster):
    p = subprocess.Popen(gradcli("-", "--json", "--dask", cluster.scheduler_address), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
    try:
        for k in (3, 4):
            p.stdin.write(entry(k).encode())
            p.stdin.flush()
            doc = json.loads(p.stdout.readline())  # the pipe stays open: the result comes anyway
            assert doc["output"]["value"] == value(k)
        p.stdin.close()
        assert p.wait(TIMEOUT) == 0
    finally:
        p.kill()
        p.wait()


def test_a_closed_pipe_ends_quietly_with_141(tmp_path, cluster):
    path = tmp_path / "big.txt"
    path.write_text("x = arange(3000.0, requires_grad=True); (x * x).sum()\n" * 60)  # ~90 kB lines
    cmd = " ".join(gradcli(str(path), "--json", "--dask", cluster.scheduler_address)) + " | head -1"
    p = subprocess.run(["sh", "-c", cmd], capture_output=True, env=env(), timeout=TIMEOUT)
    assert p.returncode == 0 and p.stderr == b""
    assert p.stdout.count(b"\n") == 1 and json.loads(p.stdout)["line"] == 1
    proc = subprocess.Popen(gradcli(str(path), "--json", "--dask", cluster.scheduler_address),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
    try:
        assert json.loads(proc.stdout.readline())["line"] == 1
        proc.stdout.close()
        assert proc.wait(TIMEOUT) == 141
        assert proc.stderr.read() == b""
    finally:
        proc.kill()
        proc.wait()


def test_ctrl_c_exits_130_with_whole_lines(cluster):
    slow = ("def g(n):\n    i = 0\n    while i < n:\n        i += 1\n"
            "    return tensor(1.0, requires_grad=True) * 2\ng(200000)\n---\n")  # about a second
    p = subprocess.Popen(gradcli("-", "--json", "--dask", cluster.scheduler_address, "--max-steps", "10000000"),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(),
                         start_new_session=True)
    try:
        p.stdin.write(entry(1).encode())
        p.stdin.flush()
        assert json.loads(p.stdout.readline())["line"] == 1
        p.stdin.write(slow.encode())  # running on a worker when Ctrl-C comes
        p.stdin.flush()
        time.sleep(0.3)
        os.killpg(p.pid, signal.SIGINT)  # what Ctrl-C does: the process group (here gradcli alone) gets SIGINT
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 130, err
    assert out == b""  # (line 1 was read above)
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err
    assert err.decode().startswith("gradcli batch: interrupted after 1 entry, 0 failed"), err


def test_the_readme_s_dask_bag_example_runs(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("    import dask.bag as db\n")
    block = readme[start:readme.index("\n## ", start)].rstrip()
    code = "\n".join(line[4:] for line in block.splitlines())
    assert "range(100_000)" in code
    code = code.replace("range(100_000)", "range(2_000)")  # the same, smaller
    code += ("\n    import json, sys\n"
             "    json.dump([[r['id'], r['line'], r['output']['value']] for r in results], sys.stdout)\n")
    script = tmp_path / "example.py"
    script.write_text(code)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, env=env(), timeout=TIMEOUT, cwd=tmp_path)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    got = json.loads(p.stdout)
    assert [i for i, _, _ in got] == list(range(2_000))
    assert [v for _, _, v in got] == [float(i * i + 4) for i in range(2_000)]
    assert got[0][1] == 1  # line numbers count within each partition


CLUSTER_SCRIPT = """\
import sys
from distributed import LocalCluster
if __name__ == "__main__":
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=":0") as cluster:
        print(cluster.scheduler_address, flush=True)
        sys.stdin.read()
"""


def _assert_lost_scheduler_message(p, err: bytes, address: str) -> None:
    """The documented end of a run whose scheduler went away: exit 2, one ConnectionError line, then the
    summary; no traceback, no WorkerError."""
    text = err.decode()
    assert p.returncode == 2, text
    assert "Traceback" not in text and "WorkerError" not in text and "NoneType" not in text, text
    lines = text.splitlines()
    assert lines[0] == f"ConnectionError: lost the Dask scheduler at {address} (its tasks were cancelled)", text
    assert len(lines) == 2 and lines[1].startswith("gradcli batch: "), text  # and the summary, nothing else


def test_a_scheduler_lost_mid_run_is_one_line_and_exit_2(tmp_path):
    path = tmp_path / "many.txt"
    path.write_text("".join(entry(k) for k in range(5_000)))
    cluster = subprocess.Popen([sys.executable, "-c", CLUSTER_SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env=env(), start_new_session=True)
    try:
        address = cluster.stdout.readline().decode().strip()
        p = subprocess.Popen(gradcli(str(path), "--json", "--dask", address), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env())
        assert json.loads(p.stdout.readline())["line"] == 1
        os.killpg(cluster.pid, signal.SIGKILL)  # the scheduler and its worker
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        os.killpg(cluster.pid, signal.SIGKILL)
        cluster.wait()
    _assert_lost_scheduler_message(p, err, address)


def test_the_scheduler_alone_killed_mid_run_is_a_connection_error(tmp_path):
    """What a user with a ``dask scheduler`` and a ``dask worker`` sees when the scheduler dies and the worker
    lives on: the worker finishes its partitions, and the client learns of the loss either as cancelled
    futures or as a result that cannot be fetched (a closed connection). Both are the documented
    ConnectionError, never ``WorkerError: ... NoneType: None``."""
    path = tmp_path / "many.txt"
    path.write_text("".join(entry(k) for k in range(20_000)))
    scheduler_file = tmp_path / "scheduler.json"
    procs = []
    try:
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
             "--no-dashboard", "--scheduler-file", str(scheduler_file)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env(), start_new_session=True))
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(scheduler_file),
             "--nthreads", "1", "--nworkers", "1", "--no-dashboard", "--death-timeout", str(TIMEOUT)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env(), start_new_session=True))
        with Client(scheduler_file=str(scheduler_file), set_as_default=False, timeout=TIMEOUT) as c:
            c.wait_for_workers(1, timeout=TIMEOUT)
            address = c.scheduler.address
        p = subprocess.Popen(gradcli(str(path), "--json", "--dask", address), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env())
        assert json.loads(p.stdout.readline())["line"] == 1
        os.killpg(procs[0].pid, signal.SIGKILL)  # the scheduler only
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    assert out.count(b"\n") < 20_000 - 1  # it stopped part-way
    _assert_lost_scheduler_message(p, err, address)


class _FakeFuture:
    """A Dask future as the client sees it when the scheduler has gone: ``status`` and what ``result``
    raises."""

    def __init__(self, status: str, exc: BaseException):
        self.status, self._exc = status, exc

    def result(self, timeout=None):
        raise self._exc

    def exception(self, timeout=None):  # distributed answers None for any status but "error"
        return self._exc if self.status == "error" else None

    def release(self):
        pass


class _FakeClient:
    """Just what DaskRunner asks of a client; every submitted partition gets ``make_future()``."""

    class scheduler:
        address = "tcp://127.0.0.1:8786"

    def __init__(self, make_future):
        self.make_future = make_future

    def nthreads(self):
        return {"tcp://127.0.0.1:1": 1}

    def submit(self, *args, **kwargs):
        return self.make_future()

    def cancel(self, futures):
        pass


def _comm_closed():
    from distributed.comm.core import CommClosedError

    return CommClosedError("in <TCP (closed) ConnectionPool.gather local=tcp://127.0.0.1:1>: Stream is closed")


def _cancelled():
    from distributed.client import FutureCancelledError

    return FutureCancelledError("k", reason="scheduler-connection-lost", msg="Client lost the connection")


@pytest.mark.parametrize("status, make_exc", [
    ("finished", _comm_closed),  # the task finished; fetching its result found the connection closed
    ("finished", lambda: OSError("Timed out trying to connect to tcp://127.0.0.1:8786")),
    ("cancelled", _cancelled),  # the client cancelled every future as it lost the scheduler
    ("pending", _cancelled),
    ("pending", lambda: __import__("asyncio").CancelledError()),
], ids=["finished-comm-closed", "finished-oserror", "cancelled", "pending-cancelled", "asyncio-cancelled"])
def test_each_way_of_losing_the_scheduler_is_a_connection_error(status, make_exc):
    """The ways distributed reports a lost scheduler to a waiting client, each timing of the race the CLI test
    above can meet, all read as the scheduler lost (before, a finished future whose result could not be
    fetched was read as a failed task: ``WorkerError: ... NoneType: None``)."""
    from gradcli.engine.errors import InputError

    client = _FakeClient(lambda: _FakeFuture(status, make_exc()))
    with pytest.raises(InputError) as info:
        list(DaskRunner(entries(10), render.get("json").batch(None), client, partition=5))
    assert info.value.type == "ConnectionError"
    assert info.value.message == "lost the Dask scheduler at tcp://127.0.0.1:8786 (its tasks were cancelled)"


def test_a_task_that_failed_on_its_worker_is_a_worker_error_that_names_it():
    from gradcli.engine.errors import InputError

    client = _FakeClient(lambda: _FakeFuture("error", ModuleNotFoundError("No module named 'gradcli'")))
    with pytest.raises(InputError) as info:
        list(DaskRunner(entries(10), render.get("json").batch(None), client, partition=5))
    assert info.value.type == "WorkerError"
    assert info.value.message == ("a Dask worker could not run the entries from line 1: ModuleNotFoundError: "
                                  "No module named 'gradcli' (is gradcli installed where the workers run?)")


def test_an_entry_stuck_inside_c_is_stopped_at_its_time_limit(tmp_path, cluster):
    """Streaming mode: an entry that never returns to Python (one long C call) is killed at its deadline in a
    process forked by the Dask worker and reported as that entry's LimitError; the batch goes on, in order."""
    path = tmp_path / "entries.txt"
    path.write_text(entry(1) + "print(0.5 in range(10**15))\nwhile True: pass\n" + entry(2))
    p = subprocess.run(gradcli(str(path), "--json", "--dask", cluster.scheduler_address, "--limit", "time=2"),
                       capture_output=True, env=env(), timeout=TIMEOUT)
    assert p.returncode == 1, p.stderr
    docs = [json.loads(line) for line in p.stdout.splitlines()]
    assert [d["line"] for d in docs] == [1, 2, 3, 4]
    types = [d.get("error", {}).get("type") for d in docs]
    # the endless loop stops at the time limit or, on a fast machine, at the steps limit first
    assert types[:2] == [None, "LimitError"] and types[2] in ("LimitError", "StepLimitError") and types[3] is None
    assert docs[0]["output"]["value"] == value(1) and docs[3]["output"]["value"] == value(2)

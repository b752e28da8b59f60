"""``gradcli batch 'DIR/part-*.jsonl' --dask ADDRESS --output-dir OUT``: the partitioned mode on a real
LocalCluster (two worker processes of one thread): the workers read the input parts and write the output parts
themselves, one output part per input part, each byte for byte what ``gradcli batch DIR/part-0000N.jsonl
--json`` writes (lines numbered within their part, a bad line included)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("distributed", reason="gradcli batch --dask needs Dask: pip install -e '.[dask]'")
from distributed import LocalCluster  # noqa: E402

from helpers import ROOT  # noqa: E402

# pytest-xdist (the suite runs with -n auto): this module's tests run in one worker, so that the module-scoped
# cluster starts once.
pytestmark = pytest.mark.xdist_group("dask_partitioned")

TIMEOUT = 600


def env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")


def gradcli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gradcli", "batch", *args], capture_output=True, env=env(),
                          timeout=TIMEOUT)


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=":0") as c:
        yield c


def test_each_output_part_is_what_one_process_writes_for_its_input_part(tmp_path, cluster):
    parts = tmp_path / "in"
    parts.mkdir()
    for p in range(3):
        lines = [json.dumps({"program": "(x * x).sum()", "inputs": {"x": [float(k + p)]}, "id": k})
                 for k in range(40)]
        lines.insert(7, "not json")
        (parts / f"part-{p:05d}.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    r = gradcli(f"{parts}/part-*.jsonl", "--json", "--dask", cluster.scheduler_address, "--output-dir", str(out))
    assert r.returncode == 1, r.stderr  # one bad line per part
    assert "123 entries, 3 failed, in 3 parts" in r.stderr.decode()
    assert sorted(os.listdir(out)) == [f"part-{p:05d}.jsonl" for p in range(3)]
    for p in range(3):
        one = gradcli(str(parts / f"part-{p:05d}.jsonl"), "--json")
        got = (out / f"part-{p:05d}.jsonl").read_bytes()
        assert got == one.stdout
        assert [json.loads(line)["line"] for line in got.splitlines()] == list(range(1, 42))


def test_output_dir_needs_dask(tmp_path):
    r = gradcli(str(tmp_path / "part-*.jsonl"), "--json", "--output-dir", str(tmp_path / "out"))
    assert r.returncode == 2 and b"--output-dir" in r.stderr and b"Traceback" not in r.stderr


def test_no_matching_part_is_an_error(tmp_path, cluster):
    r = gradcli(str(tmp_path / "part-*.jsonl"), "--json", "--dask", cluster.scheduler_address,
                "--output-dir", str(tmp_path / "out"))
    assert r.returncode == 2 and b"no file matches" in r.stderr and b"Traceback" not in r.stderr


def _slow_parts(parts, n_parts: int, per_part: int) -> None:
    """Input parts whose entries each take a few milliseconds of Python (so a part runs long enough to be
    interrupted part way)."""
    parts.mkdir()
    for p in range(n_parts):
        lines = [json.dumps({"program": f"s = 0\nfor i in range(3000):\n    s = s + i\n(x * {p}).sum() + s",
                             "inputs": {"x": [float(k)]}, "id": f"{p}-{k}"}) for k in range(per_part)]
        (parts / f"part-{p:05d}.jsonl").write_text("\n".join(lines) + "\n")


def test_a_worker_killed_mid_run_loses_nothing(tmp_path):
    """SIGKILL to a Dask worker while it runs a part: Dask runs that part again elsewhere, and every output part
    is still byte for byte what one process writes for its input part; no partial or temporary file is left."""
    import signal
    import time

    from distributed import Client

    parts = tmp_path / "in"
    _slow_parts(parts, 4, 150)
    out = tmp_path / "out"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=":0") as c, Client(c.scheduler_address, set_as_default=False) as client:
        pids = client.run(os.getpid)
        proc = subprocess.Popen([sys.executable, "-m", "gradcli", "batch", f"{parts}/part-*.jsonl", "--json",
                                 "--dask", c.scheduler_address, "--output-dir", str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
        killed = None
        deadline = time.monotonic() + TIMEOUT
        while killed is None and proc.poll() is None and time.monotonic() < deadline:
            busy = [a for a, tasks in client.processing().items() if tasks]
            if busy:
                time.sleep(0.3)  # part way into the part
                killed = pids[busy[0]]
                os.kill(killed, signal.SIGKILL)
            time.sleep(0.02)
        _, err = proc.communicate(timeout=TIMEOUT)
    assert killed is not None, "no worker was seen running a part"
    assert proc.returncode == 0, err
    assert "600 entries, 0 failed, in 4 parts" in err.decode()
    assert sorted(os.listdir(out)) == [f"part-{p:05d}.jsonl" for p in range(4)]
    for p in range(4):
        one = gradcli(str(parts / f"part-{p:05d}.jsonl"), "--json")
        assert (out / f"part-{p:05d}.jsonl").read_bytes() == one.stdout


def test_an_entry_stuck_inside_c_is_stopped_at_its_time_limit(tmp_path, cluster):
    """An entry that never returns to Python is killed at its deadline on the worker and reported as its
    LimitError; the entries after it in the same part still run."""
    parts = tmp_path / "in"
    parts.mkdir()
    lines = [json.dumps({"program": "(x * 2).sum()", "inputs": {"x": [1.0]}}),
             json.dumps({"program": "print(0.5 in range(10**15))"}),
             json.dumps({"program": "(x * 3).sum()", "inputs": {"x": [1.0]}})]
    (parts / "part-00000.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    r = gradcli(f"{parts}/part-*.jsonl", "--json", "--dask", cluster.scheduler_address, "--output-dir", str(out),
                "--limit", "time=2")
    assert r.returncode == 1, r.stderr
    docs = [json.loads(line) for line in (out / "part-00000.jsonl").read_text().splitlines()]
    assert [d["line"] for d in docs] == [1, 2, 3]
    assert docs[1]["error"]["type"] == "LimitError"
    assert docs[0]["output"]["value"] == 2.0 and docs[2]["output"]["value"] == 3.0

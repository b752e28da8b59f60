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

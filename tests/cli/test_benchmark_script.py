"""benchmarks/run.py computes the same thing in every implementation it compares (its timings are not tested).

The workloads run small here: the chain of the per-op and 1,000,000-node benchmarks (gradcli, numpy's
hand-written derivatives, PyTorch), the MLP, the batch entries through ``gradcli batch``, and the table.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import ROOT


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("gradcli_benchmark", ROOT / "benchmarks" / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_chain_is_the_same_computation(bench):
    g = bench._chain_gradcli(2000)
    n = bench._chain_numpy(2000)
    assert g.dtype == n.dtype == np.float32
    np.testing.assert_array_equal(g, n)  # the same float32 formulas, in the same order
    torch = pytest.importorskip("torch")  # noqa: F841
    np.testing.assert_allclose(g, bench._chain_torch(2000), rtol=1e-5)


def test_mlp_is_the_same_computation(bench):
    got = bench.work_mlp("gradcli", 0, 1)
    want = bench.work_mlp("numpy", 0, 1)
    np.testing.assert_allclose(got["check"], want["check"], rtol=1e-4, atol=1e-7)


def test_matmul_is_the_same_computation(bench):
    got = bench.work_matmul("gradcli", 64, 1)
    want = bench.work_matmul("numpy", 64, 1)
    np.testing.assert_allclose(got["check"], want["check"], rtol=1e-5)


def test_batch_entries_all_succeed(bench, tmp_path):
    path = tmp_path / "entries.txt"
    path.write_text("\n".join(bench.batch_entries(25)) + "\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "gradcli", "batch", str(path), "--json"], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    docs = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(docs) == 25 and not any("error" in d for d in docs)


def test_table_reports_misses(bench, capsys):
    rows = [bench._row("x", "s", 2.0, 1.0, 0.5, ratio=2.0, ratio_of="torch", target=("<=", 0.5)),
            bench._row("y", "entries/CPU-s", 1500.0, None, None, ratio=None, ratio_of=None, target=(">=", 2000),
                       value_target=True)]
    assert rows[0]["status"] == "missed" and rows[0]["miss"] == pytest.approx(3.0)
    assert rows[1]["status"] == "missed" and rows[1]["miss"] == pytest.approx(0.25)
    info = {"cpu": "cpu", "cores": 2, "python": "3", "loadavg_start": [1.0], "loadavg_end": [1.0], "threads": 1}
    bench.print_table(rows, info, 1.0)
    out = capsys.readouterr().out
    assert "MISSED by 300%" in out and "MISSED by 25%" in out


def test_conv_is_the_same_computation(bench):
    """The conv row's gradcli and numpy workers compute the same loss and gradients (a batch of 2)."""
    got = bench.work_conv("gradcli", 2, 1)
    want = bench.work_conv("numpy", 2, 1)
    np.testing.assert_allclose(got["check"], want["check"], rtol=1e-4, atol=1e-7)
    torch = pytest.importorskip("torch")  # noqa: F841
    np.testing.assert_allclose(got["check"], bench.work_conv("torch", 2, 1)["check"], rtol=1e-4, atol=1e-7)


def test_parse_row_parses_what_ast_parses(bench):
    """The parse benchmark's two sides read the same entries into the same number of statements (parse branch)."""
    got = bench.work_parse("gradcli", 10, 1)
    want = bench.work_parse("ast", 10, 1)
    assert got["check"] == want["check"] and set(got["check"]) >= {2, 3}
    assert len(got["times"]) == 10 and all(t >= 0 for t in got["times"])

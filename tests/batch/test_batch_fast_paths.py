"""The per-entry shortcuts of ``gradcli batch`` (there for throughput) give exactly what the general code
gives: a JSON line's small arrays encoded element by element, their ``nonfinite`` flags, the time limit armed
per entry with one SIGALRM handler for the whole batch, and the ``random`` module made on first use."""

from __future__ import annotations

import json
import random
import signal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gradcli.engine import limits
from gradcli.frontends.batch.runner import EntryClock
from gradcli.frontends.cli import app
from gradcli.render.json import array_to_json, shortest_float64
from gradcli.app.result import nonfinite

runner = CliRunner()


def general_array_to_json(a: np.ndarray):
    """What array_to_json gives an array through its numpy passes (the code every array took before)."""
    values = (a if a.dtype == np.float64 else shortest_float64(a)).reshape(-1)
    obj = values.astype(object)
    obj[np.isnan(values)] = "NaN"
    obj[values == np.inf] = "Infinity"
    obj[values == -np.inf] = "-Infinity"
    return obj.reshape(a.shape).tolist()


def general_nonfinite(a: np.ndarray) -> list:
    return [k for k, hit in (("nan", np.isnan(a).any()), ("inf", np.isposinf(a).any()),
                             ("-inf", np.isneginf(a).any())) if hit]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=16),
       st.sampled_from([np.float16, np.float32, np.float64]), st.sampled_from(["flat", "0d", "rows", "cube"]))
def test_small_arrays_encode_as_the_general_code_does(bits, dtype, layout):
    """Any bit pattern (NaN of either sign, infinities, subnormals, -0.0) of float16/32/64, in 0 to 3 dimensions."""
    uint = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}[dtype]
    a = np.array(bits, np.uint64).astype(uint).view(dtype)
    if layout == "0d":
        a = a[0].reshape(())
    elif layout == "rows" and a.size % 2 == 0:
        a = a.reshape(2, -1)
    elif layout == "cube" and a.size % 4 == 0:
        a = a.reshape(2, 2, -1)
    assert json.dumps(array_to_json(a)) == json.dumps(general_array_to_json(a))
    assert nonfinite(a) == general_nonfinite(a)


def test_small_array_edge_values_and_empty_ones():
    a = np.float32([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-45, 0.1, 3.4028235e38, 16777217.0])
    assert json.dumps(array_to_json(a)) == json.dumps(general_array_to_json(a))
    assert json.dumps(array_to_json(a)) == ('[0.0, -0.0, "NaN", "NaN", "Infinity", "-Infinity", 1e-45, 0.1, '
                                            '3.4028235e+38, 16777216.0]')
    assert nonfinite(a) == ["nan", "inf", "-inf"] and nonfinite(a[:2]) == []
    for empty in (np.zeros((0,), np.float32), np.zeros((2, 0), np.float64)):
        assert array_to_json(empty) == empty.tolist() and nonfinite(empty) == []


def test_entry_clock_arms_per_entry_and_restores_the_handler():
    if not hasattr(signal, "setitimer"):
        pytest.skip("no setitimer on this platform (the clock is then inactive, as time_guard)")
    before = signal.getsignal(signal.SIGALRM)
    old = limits.current.time
    limits.current.time = 5
    try:
        with EntryClock() as clock:
            assert clock.active and signal.getsignal(signal.SIGALRM) is not before
            clock.arm()
            assert 4 < signal.getitimer(signal.ITIMER_REAL)[0] <= 5
            clock.disarm()
            assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
        assert signal.getsignal(signal.SIGALRM) is before
        limits.current.time = limits.UNLIMITED
        with EntryClock() as clock:  # no time limit: nothing installed
            assert not clock.active and signal.getsignal(signal.SIGALRM) is before
    finally:
        limits.current.time = old


def test_random_in_batch_entries_follows_the_seed():
    """The module made on first use is what a run makes up front: seeded from the entry's seed, its own."""
    entries = ("import random; x = tensor([random.random(), random.gauss(0.0, 1.0)], requires_grad=True); x.sum()\n"
               "x = tensor(1.0, requires_grad=True); x * 2\n"
               "from random import uniform; x = tensor(uniform(0, 1), requires_grad=True); x * 1\n")
    r = runner.invoke(app, ["batch", "-", "--json", "--seed", "7"], input=entries)
    assert r.exit_code == 0, r.output
    first, _, third = [json.loads(line) for line in r.stdout.splitlines()]
    py = random.Random(7)
    want = np.float32([py.random(), py.gauss(0.0, 1.0)])
    assert first["inputs"]["x"]["value"] == array_to_json(want)
    assert third["inputs"]["x"]["value"] == array_to_json(np.float32(random.Random(7).uniform(0, 1)))


def test_run_random_follows_the_seed(tmp_path):
    """``gradcli run --seed N``: the program's ``random`` is seeded from the run's seed, so runs repeat (the
    interpreter is made inside the run's context, not before it from an unseeded generator)."""
    path = tmp_path / "r.py"
    path.write_text("import random\nprint(random.random(), random.randint(1, 100))\n")
    outs = [runner.invoke(app, ["run", str(path), "--seed", "4"]) for _ in range(2)]
    assert all(r.exit_code == 0 for r in outs), outs[0].output
    py = random.Random(4)
    assert outs[0].stdout == outs[1].stdout == f"{py.random()} {py.randint(1, 100)}\n"

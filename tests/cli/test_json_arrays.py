"""Big tensors in JSON (issue 17, item 2): float32 values are written as their shortest round-trip decimals,
found for whole arrays at once, and a large array that appears twice in a document is encoded once. The
numbers must be exactly those of the small-array path (numpy's shortest repr of each float32)."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gradcli.cli import app
from gradcli.render.json import ArrayTexts, array_to_json, shortest_float64

runner = CliRunner()


def numpy_shortest(a: np.ndarray) -> np.ndarray:
    return np.array([float(s) for s in a.reshape(-1).astype(str)], np.float64).reshape(a.shape)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=300))
def test_shortest_decimals_equal_numpy_s_for_any_float32_bits(bits):
    a = np.array(bits, np.uint64).astype(np.uint32).view(np.float32)
    got, want = shortest_float64(a), numpy_shortest(a)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[finite], want[finite])
    np.testing.assert_array_equal(np.signbit(got[finite]), np.signbit(want[finite]))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert (np.array(got[finite]).astype(np.float32) == a[finite]).all()  # reads back to the same float32


def test_edge_values_and_float16():
    a = np.array([0.0, -0.0, 1.0, 0.1, 1e-5, 9.999e-5, 1e16, 123456789.0, 3.4028235e38, 1e-45, -2.5e-20, 16777217.0],
                 np.float32)
    np.testing.assert_array_equal(shortest_float64(a), numpy_shortest(a))
    h = np.random.default_rng(0).standard_normal(500).astype(np.float16)
    np.testing.assert_array_equal(shortest_float64(h), numpy_shortest(h))


def test_a_large_array_is_written_once_and_reads_back_exactly():
    rng = np.random.default_rng(1)
    big = rng.standard_normal((40, 50)).astype(np.float32)
    big[3, 4], big[5, 6] = np.nan, -np.inf
    enc = ArrayTexts()
    doc = {"a": enc(big), "b": [{"again": enc(big.copy())}], "small": enc(np.float32([0.5, 2.0]))}
    assert len(enc.texts) == 1  # the copy is recognised
    text = enc.substitute(json.dumps(doc))
    back = json.loads(text)
    assert back["a"] == back["b"][0]["again"] == array_to_json(big)
    values = np.array([[np.nan if v == "NaN" else -np.inf if v == "-Infinity" else v for v in row]
                       for row in back["a"]], np.float64).astype(np.float32)
    np.testing.assert_array_equal(values, big)
    assert back["small"] == [0.5, 2.0]


def test_grad_json_of_a_big_input_equals_its_values():
    """What a user does: a 100x100 input in --json; every number reads back to the same float32."""
    r = runner.invoke(app, ["grad", "(X * X).sum()", "-i", "X=randn(100, 100)", "--seed", "3", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    x = np.array(doc["inputs"]["X"]["value"], np.float64).astype(np.float32)
    g = np.array(doc["grads"]["X"]["value"], np.float64).astype(np.float32)
    np.testing.assert_array_equal(g, 2 * x)
    assert doc["calls"][0]["grads"]["X"]["value"] == doc["grads"]["X"]["value"]

"""Big tensors in JSON: float32 values are written as their shortest round-trip decimals,
found for whole arrays at once, and a large array that appears twice in a document is encoded once. The
numbers must be exactly those of the small-array path (numpy's shortest repr of each float32)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gradcli.frontends.cli import app
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


# ---- json branch: the text of large arrays built by numpy (gradcli.render.jsonarrays) ----

from gradcli.render import jsonarrays  # noqa: E402

_SPECIAL32 = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,
              0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x3F800000, 0x3DCCCCCD, 0x4B800001,
              0x5A0E1BCA, 0x3727C5AC, 0x38D1B717, 0x2EDBE6FF, 0x49742400, 0x4E6E6B28]

float32_bits = st.one_of(st.integers(0, 2**32 - 1), st.sampled_from(_SPECIAL32),
                         st.integers(0, 0x007FFFFF).map(lambda b: b | (0x80000000 if b % 2 else 0)))  # subnormals


def _json_text(a):
    return json.dumps(array_to_json(a), allow_nan=False)


@settings(max_examples=80, deadline=None)
@given(st.lists(float32_bits, min_size=1, max_size=400), st.sampled_from([None, (2, -1), (-1, 2, 2)]),
       st.sampled_from([5, 64, 1 << 15]))
def test_numpy_built_text_equals_json_dumps_for_any_float32_bits(bits, shape, chunk):
    """Any float32 bit pattern (subnormals, signed zeros, NaN with either sign, infinities), in 1 to 3
    dimensions, cut into slices of any size: the same text as json.dumps of the nested lists."""
    a = np.array(bits, np.uint64).astype(np.uint32).view(np.float32)
    if shape is not None:
        a = a[:a.size - a.size % (2 if len(shape) == 2 else 4)]
        if not a.size:
            return
        a = a.reshape(shape)
    old, jsonarrays.CHUNK = jsonarrays.CHUNK, chunk
    try:
        assert jsonarrays.float_array_text(a) == _json_text(a)
    finally:
        jsonarrays.CHUNK = old


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 2**16 - 1), min_size=1, max_size=300))
def test_numpy_built_text_equals_json_dumps_for_any_float16_bits(bits):
    a = np.array(bits, np.uint32).astype(np.uint16).view(np.float16)
    assert jsonarrays.float_array_text(a) == _json_text(a)


def test_numpy_built_text_of_every_notation():
    """Python's repr switches to d.ddde±XX below 1e-4 and from 1e16; integers keep ".0"; trailing zeros go."""
    a = np.array([1e-4, 9.9999e-5, 1e-5, 1.5e-5, 1e15, 1e16, 1.25e16, 123456789.0, 100.0, 1000.5, 2.5, -0.0, 0.0,
                  1e-45, -3.4028235e38, 0.1, 0.30000001, 7.0, 16777216.0, np.nan, np.inf, -np.inf], np.float32)
    text = jsonarrays.float_array_text(np.tile(a, (3, 1)))
    assert text == _json_text(np.tile(a, (3, 1)))
    assert text.startswith('[[0.0001, 9.9999e-05, 1e-05, 1.5e-05, 1000000000000000.0, 1e+16, 1.25e+16, 123456790.0, '
                           '100.0, 1000.5, 2.5, -0.0, 0.0, 1e-45, -3.4028235e+38, 0.1, 0.3, 7.0, 16777216.0, "NaN", '
                           '"Infinity", "-Infinity"], [0.0001')
    np.testing.assert_array_equal(np.array(json.loads(text.replace('"NaN"', "NaN").replace('"Infinity"', "Infinity")
                                                      .replace('"-Infinity"', "-Infinity")), np.float32),
                                  np.tile(a, (3, 1)))


def test_numpy_built_text_refuses_what_it_does_not_encode():
    for a in (np.float64([1.0, 2.0]), np.float32(1.0), np.zeros((0, 3), np.float32), np.arange(3)):
        with pytest.raises(ValueError):
            jsonarrays.float_array_text(a)


def test_grad_json_to_a_file_equals_standard_output(tmp_path):
    """A big document written with -o FILE (a text stream) and to standard output (the binary buffer) are the
    same text, and equal json.dumps of the same document."""
    args = ["grad", "(X * X).sum()", "-i", "X=randn(64, 64)", "--seed", "5", "--json"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    path = tmp_path / "out.json"
    r2 = runner.invoke(app, args + ["-o", str(path)])
    assert r2.exit_code == 0, r2.output
    assert path.read_text() == r.stdout
    doc = json.loads(r.stdout)
    assert r.stdout == json.dumps(doc, ensure_ascii=False) + "\n"


def test_numpy_built_text_of_deep_shapes_short_and_long_numbers():
    """The separators of 4 to 6 dimensions (longer than one 8-byte word with the sign), rows of the shortest
    texts next to the longest (so that rows written whole overlap up to six neighbours), numbers of 16
    integer digits, every positional exponent and both signs, cut into slices that end anywhere."""
    rng = np.random.default_rng(7)
    values = np.float32([0.0, -0.0, 1.0, -2.0, 5e15, -9.9e15, 1.2345678e15, -1.5e14, 3e13, 1e-4, -1.2345678e-4,
                         1e-45, -3.4028235e38, np.nan, np.inf, -np.inf])
    positional = np.float32(10.0 ** np.arange(-4, 16) * 1.2345678)
    for shape in [(2, 3, 2, 4), (1, 2, 1, 2, 3, 3), (3, 1, 1, 5)]:
        n = int(np.prod(shape))
        pool = np.concatenate([values, positional, -positional])
        a = rng.choice(pool, n).astype(np.float32).reshape(shape)
        a.reshape(-1)[:3] = 0.0
        for chunk in (1, 7, 1 << 16):
            old, jsonarrays.CHUNK = jsonarrays.CHUNK, chunk
            try:
                assert jsonarrays.float_array_text(a) == _json_text(a), (shape, chunk)
            finally:
                jsonarrays.CHUNK = old


def test_numpy_built_text_of_a_million_randn_equals_json_dumps():
    """The benchmark's case (benchmarks/run.py bigjson): a 1000x1000 randn float32 array, in several slices,
    byte for byte."""
    a = np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32)
    a[::7, ::11] *= np.float32(1e-6)  # some in exponent notation, in every slice
    assert jsonarrays.float_array_bytes(a) == _json_text(a).encode()


def test_slices_encoded_on_two_threads_equal_one_threads(monkeypatch):
    """On a machine with two CPUs or more, an array of several slices is encoded on two threads (jsonarrays._pool);
    the text is the same as one thread's, slice for slice and in order."""
    a = (np.random.default_rng(1).standard_normal((300, 700)) * 40).astype(np.float32)
    a[::5, ::3] = -a[::5, ::3] * np.float32(1e-9)
    monkeypatch.setattr(jsonarrays, "CHUNK", 4096)  # 52 slices
    monkeypatch.setattr(jsonarrays, "_POOL", None)
    threaded = jsonarrays.float_array_parts(a)
    if (os.cpu_count() or 1) > 1:
        assert jsonarrays._POOL is not None and jsonarrays._POOL is not False
    monkeypatch.setattr(jsonarrays, "_POOL", False)  # as on one CPU: no threads
    assert jsonarrays._pool() is None
    single = jsonarrays.float_array_parts(a)
    assert len(threaded) == len(single) == 54
    assert [bytes(p) for p in threaded] == [bytes(p) for p in single]
    assert b"".join(bytes(p) for p in single) == _json_text(a).encode()

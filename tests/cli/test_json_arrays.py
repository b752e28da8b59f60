"""Big tensors in JSON: float32 values are written as their shortest round-trip decimals,
found for whole arrays at once, and a large array that appears twice in a document is encoded once. The
numbers must be exactly those of the small-array path (numpy's shortest repr of each float32)."""

from __future__ import annotations

import json

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


# ---- the text of large arrays written by orjson (gradcli.render.jsonarrays) ----

from gradcli.render import jsonarrays  # noqa: E402

_SPECIAL32 = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,
              0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x3F800000, 0x3DCCCCCD, 0x4B800001,
              0x5A0E1BCA, 0x3727C5AC, 0x38D1B717, 0x2EDBE6FF, 0x49742400, 0x4E6E6B28]

float32_bits = st.one_of(st.integers(0, 2**32 - 1), st.sampled_from(_SPECIAL32),
                         st.integers(0, 0x007FFFFF).map(lambda b: b | (0x80000000 if b % 2 else 0)))  # subnormals

_SPECIAL64 = [0, 1 << 63, 1, (1 << 63) | 1, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF,
              0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001,
              0x3FF0000000000000, 0x3FB999999999999A, 0x4341C37937E08000, 0x432C6BF526340000, 0x3F1A36E2EB1C432D]

float64_bits = st.one_of(st.integers(0, 2**64 - 1), st.sampled_from(_SPECIAL64),
                         st.integers(0, 2**52 - 1).map(lambda b: b | ((1 << 63) if b % 2 else 0)))  # subnormals


def _json_text(a):
    return json.dumps(array_to_json(a), allow_nan=False)


def _shaped(a, shape):
    if shape is None:
        return a
    a = a[:a.size - a.size % (2 if len(shape) == 2 else 4)]
    return a.reshape(shape) if a.size else None


@settings(max_examples=80, deadline=None)
@given(st.lists(float32_bits, min_size=1, max_size=400), st.sampled_from([None, (2, -1), (-1, 2, 2)]))
def test_orjson_text_equals_json_dumps_for_any_float32_bits(bits, shape):
    """Any float32 bit pattern (subnormals, signed zeros, NaN with either sign, infinities), in 1 to 3
    dimensions: the same text as json.dumps of the nested lists (Python's notation, ", ", the strings of NaN
    and the infinities where orjson alone writes null)."""
    a = _shaped(np.array(bits, np.uint64).astype(np.uint32).view(np.float32), shape)
    if a is not None:
        assert jsonarrays.float_array_text(a) == _json_text(a)


@settings(max_examples=80, deadline=None)
@given(st.lists(float64_bits, min_size=1, max_size=400), st.sampled_from([None, (2, -1), (-1, 2, 2)]))
def test_orjson_text_equals_json_dumps_for_any_float64_bits(bits, shape):
    """The same for float64: each number is Python's repr of the element."""
    a = _shaped(np.array(bits, np.uint64).view(np.float64), shape)
    if a is not None:
        assert jsonarrays.float_array_text(a) == _json_text(a)


def test_orjson_text_of_every_notation():
    """Python's repr switches to d.ddde±XX below 1e-4 and from 1e16; integers keep ".0"; trailing zeros go.
    orjson writes some of these otherwise (``0.00001``, ``1e+15``): they are rewritten."""
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
    b = np.array([1e-5, 1e15, 1e16, 1e22, 1e23, 5e-324, 0.1, 1 / 3, -1e-7, 123456789012345678.0], np.float64)
    assert jsonarrays.float_array_text(b) == ("[1e-05, 1000000000000000.0, 1e+16, 1e+22, 1e+23, 5e-324, 0.1, "
                                              "0.3333333333333333, -1e-07, 1.2345678901234568e+17]")


def test_orjson_text_refuses_what_it_does_not_encode():
    for a in (np.float16([1.0, 2.0]), np.float32(1.0), np.zeros((0, 3), np.float32), np.arange(3)):
        with pytest.raises(ValueError):
            jsonarrays.float_array_text(a)


def test_orjson_text_of_strided_arrays_and_many_nonfinite():
    """A transposed or sliced array (orjson takes C-contiguous ones only) and an array of NaN and infinities
    only: the same text as json.dumps."""
    a = np.arange(60, dtype=np.float32).reshape(6, 10) / 7
    for view in (a.T, a[:, ::3], a[::-1]):
        assert jsonarrays.float_array_text(view) == _json_text(view)
    bad = np.tile(np.float32([np.nan, np.inf, -np.inf, -np.nan]), (5, 3))
    assert jsonarrays.float_array_text(bad) == _json_text(bad)


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


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_grad_json_of_big_arrays_with_nan_and_infinity(dtype):
    """What a user does: ``sqrt`` of a 40x40 input of both signs, with zeros: the gradient (a large array) holds
    NaN where the input is negative and Infinity where it is zero, written as those strings; the whole document
    is the text json.dumps writes (Python's notation, ", " and ": "), and every number reads back exactly."""
    r = runner.invoke(app, ["grad", "X.sqrt().sum()", "-i", "X=randn(40, 40) * (randn(40, 40) > -1)",
                            "--seed", "4", "--dtype", dtype, "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert r.stdout == json.dumps(doc, ensure_ascii=False) + "\n"
    x = np.array(doc["inputs"]["X"]["value"], np.float64).astype(dtype)
    assert (x < 0).any() and (x == 0).any()
    g = doc["grads"]["X"]["value"]
    assert doc["grads"]["X"]["nonfinite"] is True
    with np.errstate(divide="ignore", invalid="ignore"):
        want = (np.asarray(0.5, dtype) / np.sqrt(x)).astype(dtype)  # PyTorch's SqrtBackward0: grad / (2 sqrt(x))
    flat, wflat = [v for row in g for v in row], want.reshape(-1)
    assert [v for v, w in zip(flat, wflat) if not np.isfinite(w)] == \
        ["NaN" if np.isnan(w) else "Infinity" if w > 0 else "-Infinity" for w in wflat if not np.isfinite(w)]
    got = np.array([v for v, w in zip(flat, wflat) if np.isfinite(w)], np.float64).astype(dtype)
    np.testing.assert_allclose(got, wflat[np.isfinite(wflat)], rtol=1e-6 if dtype == "float32" else 1e-12)


def test_orjson_text_of_deep_shapes_short_and_long_numbers():
    """The separators of 4 to 6 dimensions, rows of the shortest texts next to the longest, numbers of 16
    integer digits, every positional exponent and both signs."""
    rng = np.random.default_rng(7)
    values = np.float32([0.0, -0.0, 1.0, -2.0, 5e15, -9.9e15, 1.2345678e15, -1.5e14, 3e13, 1e-4, -1.2345678e-4,
                         1e-45, -3.4028235e38, np.nan, np.inf, -np.inf])
    positional = np.float32(10.0 ** np.arange(-4, 16) * 1.2345678)
    for shape in [(2, 3, 2, 4), (1, 2, 1, 2, 3, 3), (3, 1, 1, 5)]:
        n = int(np.prod(shape))
        pool = np.concatenate([values, positional, -positional])
        a = rng.choice(pool, n).astype(np.float32).reshape(shape)
        a.reshape(-1)[:3] = 0.0
        assert jsonarrays.float_array_text(a) == _json_text(a), shape
        assert jsonarrays.float_array_text(a.astype(np.float64)) == _json_text(a.astype(np.float64)), shape


def test_orjson_text_of_a_million_randn_equals_json_dumps():
    """The benchmark's case (benchmarks/run.py bigjson): a 1000x1000 randn float32 array, byte for byte."""
    a = np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32)
    a[::7, ::11] *= np.float32(1e-6)  # some in exponent notation, throughout
    assert jsonarrays.float_array_bytes(a) == _json_text(a).encode()


def test_batch_json_lines_with_big_arrays_are_json_dumps_text():
    """What a user does: ``gradcli batch --json`` of programs with a 40x40 leaf (large arrays, written by orjson),
    one of them with NaN and infinities in its gradient: each line is the text json.dumps writes of its object."""
    entries = ("x = randn(40, 40, requires_grad=True); (x * x).sum()\n"
               "x = (randn(40, 40) * (randn(40, 40) > 0)).requires_grad_(); x.sqrt().sum()\n")
    r = runner.invoke(app, ["batch", "-", "--json", "--seed", "2"], input=entries)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert len(lines) == 2
    for k, line in enumerate(lines, start=1):
        doc = json.loads(line)
        assert doc["line"] == k and line == json.dumps(doc, ensure_ascii=False)
        assert len(doc["grads"]["x"]["value"]) == 40
    flat = [v for row in json.loads(lines[1])["grads"]["x"]["value"] for v in row]
    assert "NaN" in flat and "Infinity" in flat

"""JSON text of large float32 and float64 arrays, written by orjson (``OPT_SERIALIZE_NUMPY``) in C rather than by
``json.dumps`` walking a list of a million Python floats (as in ``gradcli grad ... -i "X=randn(1000, 1000)"
--json``).

The text is exactly what ``json.dumps(array_to_json(a))`` writes (:mod:`gradcli.render.json`): nested lists with
``", "`` between items, each number in Python's ``repr`` notation (``0.2``, ``-3.0``, ``1e-05``, ``1.5e+20``) of
the shortest decimal that reads back to the element (for float32, to the same float32), NaN and the infinities as
the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``.

orjson writes the same shortest digits (for a float32 array, those of the float32: ``0.1``, ``0.33333334``), in
its own notation and without spaces, and NaN and the infinities as ``null``. Its text is adapted in three steps,
each safe because the text holds numbers, brackets, commas and ``null`` only:

- ``","`` becomes ``", "``;
- the few numbers whose notation differs from ``repr`` (those with an exponent, ``1e-7``, ``3.4028235e38``,
  ``1e15``, and those below 1e-4 written positionally, ``0.00001``) are rewritten as ``repr(float(number))``:
  parsing the shortest decimal of at most 17 digits gives the float64 whose ``repr`` is those same digits;
- each ``null`` becomes the string of its element, in the elements' order.
"""

from __future__ import annotations

import re

import numpy as np

#: The characters a number may hold up to its end (a number ends at "," or "]").
_NUMBER_REST = re.compile(rb"[^,\]]*")

#: The longest number orjson writes (``-2.2250738585072014e-308``), with room to spare: where to look back for
#: the start of a number.
_LONGEST = 40

_NONFINITE = (b'"NaN"', b'"Infinity"', b'"-Infinity"')


def _orjson():
    import orjson  # (only when JSON is written: start-up stays lean)

    return orjson


def _rewrites(text: bytes) -> list:
    """Where ``text`` (orjson's text of a number array, with ``", "`` between items) needs Python's notation:
    ``(start, end, replacement)`` of each number that holds an exponent (``e``) or ``.0000`` (positional below
    1e-4), replaced by ``repr(float(number))``. Found by ``bytes.find`` (a few numbers per million in ``randn``
    data), not by a regular expression over the whole text."""
    starts = set()
    for needle in (b"e", b".0000"):
        i = text.find(needle)
        while i >= 0:
            lo = max(0, i - _LONGEST)
            starts.add(max(text.rfind(b" ", lo, i), text.rfind(b"[", lo, i)) + 1)
            i = text.find(needle, i + len(needle))
    out = []
    for s in sorted(starts):
        end = _NUMBER_REST.match(text, s).end()
        out.append((s, end, repr(float(text[s:end])).encode("ascii")))
    return out


def _nulls(text: bytes, bad: np.ndarray) -> list:
    """``(start, end, replacement)`` of each ``null`` in ``text``: the string of the non-finite element ``bad``
    (in the elements' order) that orjson wrote as null; nothing else in the text is null."""
    names = [_NONFINITE[c] for c in np.where(np.isnan(bad), 0, np.where(bad > 0, 1, 2)).tolist()]
    out, i = [], text.find(b"null")
    for name in names:
        if i < 0:
            break
        out.append((i, i + 4, name))
        i = text.find(b"null", i + 4)
    if len(out) != len(names) or i >= 0:
        raise AssertionError(f"orjson's text of {bad.size} non-finite values does not hold as many nulls")
    return out


def float_array_parts(a: np.ndarray) -> list:
    """The JSON text of the float32 or float64 array ``a`` (ndim >= 1, size >= 1): nested lists, exactly as
    ``json.dumps(array_to_json(a))`` writes them (see the module docstring), as ASCII bytes-like pieces to write
    one after another (orjson's text in slices, never copied again, with the rewritten numbers between them).
    Raises ValueError for another dtype (float16: orjson does not take it), a 0-d or an empty array."""
    a = np.asarray(a)
    if a.dtype not in (np.float32, np.float64) or a.ndim == 0 or a.size == 0:
        raise ValueError(f"float_array_bytes takes a non-empty float32/float64 array of ndim >= 1, not {a.dtype} "
                         f"of shape {a.shape}")
    orjson = _orjson()
    a = np.ascontiguousarray(a)  # (orjson takes C-contiguous arrays only)
    text = orjson.dumps(a, option=orjson.OPT_SERIALIZE_NUMPY).replace(b",", b", ")
    edits = _rewrites(text)
    finite = np.isfinite(a)
    if not finite.all():
        edits = sorted(edits + _nulls(text, a[~finite]))
    if not edits:
        return [text]
    view, parts, pos = memoryview(text), [], 0
    for start, end, new in edits:
        parts += [view[pos:start], new]
        pos = end
    parts.append(view[pos:])
    return parts


def float_array_bytes(a: np.ndarray) -> bytes:
    """:func:`float_array_parts` joined: the array's JSON text as ASCII bytes."""
    return b"".join(float_array_parts(a))


def float_array_text(a: np.ndarray) -> str:
    """:func:`float_array_bytes` as a str."""
    return float_array_bytes(a).decode("ascii")

"""JSON text of large float32 (and float16) arrays, built by numpy in C rather than by ``json.dumps`` walking a
list of a million Python floats (issue 17: ``gradcli grad ... -i "X=randn(1000, 1000)" --json``).

The text is exactly what ``json.dumps(array_to_json(a))`` writes (``gradcli.render.json``): nested lists with
``", "`` between items, each number the ``repr`` of the float64 that :func:`~gradcli.render.json.shortest_float64`
gives (the shortest decimal that reads back to the same float32, in Python's notation: ``0.2``, ``-3.0``,
``1e-05``, ``1.5e+20``), NaN and the infinities as the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``.

How: the array is taken in slices of :data:`CHUNK` elements (so that every temporary stays in the CPU's cache).
For each element, its shortest decimal is ``m * 10**(E - 8)`` with ``m`` an integer of 9 digits and ``E`` the
decimal exponent; the digits come from a table of the 10,000 four-digit strings, and the trailing zeros of
``m`` become NUL bytes. Each element gets a row of bytes: the sign, its digits placed as Python's ``repr``
places them for its exponent (``float_repr_style`` 'short': positional for -4 <= E < 16, else ``d.ddde±XX``),
then the separator (``", "``, or ``"], ["`` and so on at the end of a row). Unused bytes are NUL, and one
boolean mask over the rows removes them all, leaving the text.
"""

from __future__ import annotations

import numpy as np

#: Elements per slice: the slice's temporaries (about 60 bytes an element) stay within a core's L2 cache.
CHUNK = 1 << 15

_BODY = 18  # the longest number: "1234567890123456.0" (16 digits before the point, E = 15), after the sign

_TABLES = None


def _tables():
    """The four-digit strings 0000..9999 as little-endian uint32 words, and for each the mask that clears its
    trailing zero digits (all four for 0000)."""
    global _TABLES
    if _TABLES is None:
        v = np.arange(10000)
        digits = np.stack([v // 1000, v // 100 % 10, v // 10 % 10, v % 10], axis=1).astype(np.uint8)
        words = (digits + ord("0")).copy().view("<u4").reshape(-1)
        nonzero_from_right = np.cumsum((digits != 0)[:, ::-1], axis=1)[:, ::-1]  # > 0: a nonzero digit at or after
        keep = np.where(nonzero_from_right > 0, 0xFF, 0).astype(np.uint8)
        _TABLES = words, keep.copy().view("<u4").reshape(-1)
    return _TABLES


def _separators(shape: tuple, start: int, n: int, sep: np.ndarray) -> None:
    """Write into ``sep`` (n rows of 2 * ndim bytes, zeroed) what follows each of the elements ``start`` ..
    ``start + n - 1`` (flat, C order) of an array of ``shape`` in nested-list JSON: ``", "``; after the last of
    a row, ``"], ["`` (``"]], [["`` after the last of a plane, ...); after the very last element, ``"]" * ndim``."""
    ndim = len(shape)
    sep[:, 0:2] = np.frombuffer(b", ", np.uint8)
    period = 1
    for level in range(1, ndim):  # elements that close `level` brackets: every `period`-th, at its end
        period *= shape[ndim - level]
        first = (period - 1 - start) % period
        text = np.frombuffer(b"]" * level + b", " + b"[" * level, np.uint8)
        sep[first::period, :len(text)] = text
    total = int(np.prod(shape))
    if start <= total - 1 < start + n:
        sep[total - 1 - start, :] = 0
        sep[total - 1 - start, :ndim] = ord("]")


def _chunk_rows(a: np.ndarray, shortest, shape: tuple, start: int) -> np.ndarray:
    """The byte rows (n, 1 + _BODY + 2 * ndim) of the flat float32/float16 slice ``a`` (elements ``start`` ...)."""
    words, keep = _tables()
    n = a.size
    ndim = len(shape)
    out = np.zeros((n, 1 + _BODY + 2 * ndim), np.uint8)
    _separators(shape, start, n, out[:, 1 + _BODY:])
    with np.errstate(invalid="ignore", divide="ignore"):
        v = shortest(a)  # float64: each element's shortest decimal, NaN and infinities kept
        av = np.abs(v)
        finite = np.isfinite(av)
        nonzero = finite & (av > 0)
        e = np.floor(np.log10(av, where=nonzero, out=np.ones_like(av))).astype(np.int64)
        k = 8 - e
        m = np.where(k >= 0, av * _pow10(np.maximum(k, 0)), av / _pow10(np.maximum(-k, 0)))
    m = np.rint(m, out=m)
    m[~nonzero] = 1e8
    # log10 may land on the wrong side of a power of ten: renormalize to exactly 9 digits (exact operations)
    high = m >= 1e9
    if high.any():
        m[high] /= 10
        e[high] += 1
    low = m < 1e8
    if low.any():
        m[low] *= 10
        e[low] -= 1
    mi = m.astype(np.int64)
    lead, rest = np.divmod(mi, 100_000_000)
    hi4, lo4 = np.divmod(rest, 10_000)
    digits = np.empty((n, 12), np.uint8)  # bytes 3..11: the 9 digits, trailing zeros as NUL
    d32 = digits.view("<u4")
    d32[:, 0] = (lead.astype(np.uint32) + ord("0")) << 24
    d32[:, 2] = words[lo4] & keep[lo4]
    d32[:, 1] = words[hi4] & np.where(lo4 == 0, keep[hi4], np.uint32(0xFFFFFFFF))
    several = (d32[:, 1] | d32[:, 2]) != 0  # more than one significant digit

    sign = np.signbit(v) & ~np.isnan(v)
    out[:, 0] = np.where(sign & finite, ord("-"), 0)

    # the layout class of each element: 0..15 positional E = 0..15, 16..19 positional E = -1..-4, 20 exponent,
    # 21 zero, 22 NaN, 23 inf, 24 -inf
    cls = np.where(e >= 0, e, 15 - e)
    cls = np.where((e < -4) | (e > 15), 20, cls)
    cls[finite & ~nonzero] = 21
    cls[np.isnan(v)] = 22
    cls[np.isposinf(v)] = 23
    cls[np.isneginf(v)] = 24
    cls = cls.astype(np.uint8)
    order = np.argsort(cls, kind="stable")
    counts = np.bincount(cls, minlength=25)
    ends = np.cumsum(counts)
    body = out[:, 1:1 + _BODY]
    for c in np.flatnonzero(counts):
        rows = order[ends[c] - counts[c]:ends[c]]
        blk = np.zeros((rows.size, _BODY), np.uint8)
        if c <= 19:
            g = digits[rows, 3:]
            if c <= 15:  # positional, E = c >= 0: integer digits, ".", fraction digits (at least one)
                ip = c + 1
                k = min(ip, 9)
                blk[:, :k] = g[:, :k] | 0x30
                blk[:, k:ip] = ord("0")
                blk[:, ip] = ord(".")
                if ip < 9:
                    blk[:, ip + 1:10] = g[:, ip:]
                blk[:, ip + 1] |= 0x30
            else:  # positional, E = -1..-4: "0.", zeros, digits
                z = c - 16
                blk[:, 0] = ord("0")
                blk[:, 1] = ord(".")
                blk[:, 2:2 + z] = ord("0")
                blk[:, 2 + z:11 + z] = g
        elif c == 20:  # d.ddde-XX, without "." for one digit
            g = digits[rows, 3:]
            er = e[rows]
            ae = np.abs(er)
            blk[:, 0] = g[:, 0]
            blk[:, 1] = np.where(several[rows], ord("."), 0)
            blk[:, 2:10] = g[:, 1:]
            blk[:, 10] = ord("e")
            blk[:, 11] = np.where(er < 0, ord("-"), ord("+"))
            blk[:, 12] = ae // 10 + ord("0")
            blk[:, 13] = ae % 10 + ord("0")
        else:
            text = {21: b"0.0", 22: b'"NaN"', 23: b'"Infinity"', 24: b'"-Infinity"'}[int(c)]
            blk[:, :len(text)] = np.frombuffer(text, np.uint8)
        body[rows] = blk
    return out


_POW10_TABLE = 10.0 ** np.arange(64)


def _pow10(k: np.ndarray) -> np.ndarray:
    """10.0 ** k for integer arrays 0 <= k < 64 (exact up to 10**22, correctly rounded after)."""
    return _POW10_TABLE[k]


def float_array_text(a: np.ndarray, shortest) -> str:
    """The JSON text of the float32 or float16 array ``a`` (ndim >= 1, size >= 1): nested lists, exactly as
    ``json.dumps(array_to_json(a))`` writes them (see the module docstring). ``shortest`` is
    :func:`gradcli.render.json.shortest_float64`. Raises ValueError for another dtype, a 0-d or an empty array."""
    a = np.asarray(a)
    if a.dtype not in (np.float32, np.float16) or a.ndim == 0 or a.size == 0:
        raise ValueError(f"float_array_text takes a non-empty float32/float16 array of ndim >= 1, not {a.dtype} "
                         f"of shape {a.shape}")
    flat = a.reshape(-1)
    parts = [b"[" * a.ndim]
    for start in range(0, flat.size, CHUNK):
        rows = _chunk_rows(flat[start:start + CHUNK], shortest, a.shape, start).reshape(-1)
        parts.append(rows[rows != 0].tobytes())
    return b"".join(parts).decode("ascii")

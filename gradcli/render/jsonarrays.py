"""JSON text of large float32 (and float16) arrays, built by numpy in C rather than by ``json.dumps`` walking a
list of a million Python floats (as in ``gradcli grad ... -i "X=randn(1000, 1000)" --json``).

The text is exactly what ``json.dumps(array_to_json(a))`` writes (``gradcli.render.json``): nested lists with
``", "`` between items, each number the ``repr`` of the float64 that :func:`~gradcli.render.json.shortest_float64`
gives (the shortest decimal that reads back to the same float32, in Python's notation: ``0.2``, ``-3.0``,
``1e-05``, ``1.5e+20``), NaN and the infinities as the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``.

How: the array is taken in slices of :data:`CHUNK` elements (so that the temporaries stay small). For each
element, its shortest decimal is ``m * 10**(E - 8)`` with ``m`` an integer of 9 digits and ``E`` the decimal
exponent; its digits come from a table of the 10,000 four-digit strings, as the bytes of two little-endian
uint64 words with the trailing zeros of ``m`` as NUL. Each element gets a row of uint64 words: the separator
before it (``", "``, or ``"], ["`` and so on after the end of a row) and its sign, right-aligned in the first
word(s), then its number placed as Python's ``repr`` places it for its exponent (``float_repr_style`` 'short':
positional for -4 <= E < 16, else ``d.ddde±XX``), so that the element's text is contiguous in the row with NUL
before and after it. The rows are built sorted by layout (the exponent, or zero, NaN, infinity) and sign, so
that each layout's words come from the same shifts and masks of the digits' words over one block of rows, then
put back in the elements' order. Each row is then written whole (as one numpy void item) at the offset of its
text in the output, which the cumulative sum of the texts' lengths gives: in k passes over every k-th row,
each into its own zeroed buffer, with k so large that the rows of one pass do not overlap; or-ing the buffers
together leaves the text.
"""

from __future__ import annotations

import numpy as np

#: Elements per slice: large enough that numpy's per-call overhead (some 150 calls a slice, made holding the GIL)
#: is small against the work, small enough that the temporaries stay at a few megabytes. Measured in ``gradcli grad
#: ... --json``: on one thread 1 << 15 was a few % faster than 1 << 14 and 1 << 16 to 1 << 17 (1 << 13 some 25%
#: slower); on two threads (:func:`_pool`) 1 << 16 is faster than 1 << 15 (the two threads wait less for the GIL).
CHUNK = 1 << 16

_POOL = None


def _pool():
    """The threads that encode an array's slices side by side (numpy releases the GIL in its loops): two, made on
    first use; None on a machine with one CPU."""
    global _POOL
    if _POOL is None:
        import os
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="gradcli-json") if (os.cpu_count() or 1) > 1 \
            else False
    return _POOL or None

_TABLES = None
_POW10_TABLE = 10.0 ** np.arange(64)  # exact up to 10**22


def _tables():
    """Tables of the four-digit strings 0000..9999, indexed by ``v`` (the string of ``v``) and ``v + 10000`` (the
    same with its trailing zero digits as NUL, all four for 0000): ``digits``, the ASCII digits in the low four
    bytes of a little-endian uint64; ``trailing``, how many trailing zero digits were made NUL (int8)."""
    global _TABLES
    if _TABLES is None:
        v = np.arange(10000)
        digits = np.stack([v // 1000, v // 100 % 10, v // 10 % 10, v % 10], axis=1).astype(np.uint8)
        words = (digits + ord("0")).copy().view("<u4").reshape(-1).astype(np.uint64)
        nonzero_from_right = np.cumsum((digits != 0)[:, ::-1], axis=1)[:, ::-1]  # > 0: a nonzero digit at or after
        keep = np.where(nonzero_from_right > 0, 0xFF, 0).astype(np.uint8).copy().view("<u4").reshape(-1)
        trailing = (nonzero_from_right == 0).sum(axis=1)
        _TABLES = (np.concatenate([words, words & keep]),
                   np.concatenate([np.zeros(10000, np.int8), trailing]).astype(np.int8))
    return _TABLES


def _words(text: bytes, at: int, nwords: int) -> list:
    """``text`` placed at byte ``at`` of ``nwords`` little-endian uint64 words (NUL elsewhere), as np.uint64s."""
    value = int.from_bytes(bytes(at) + text, "little")
    return [np.uint64((value >> (64 * j)) & 0xFFFF_FFFF_FFFF_FFFF) for j in range(nwords)]


def _shifted(lo: np.ndarray, hi: np.ndarray, nbytes: int, nwords: int) -> list:
    """The two-word little-endian value (``lo``, ``hi``; ``hi`` < 2**56) moved ``nbytes`` (0..7) bytes up, as
    ``nwords`` uint64 arrays (zero beyond the third)."""
    if nbytes == 0:
        out = [lo, hi]
    else:
        b = np.uint64(8 * nbytes)
        out = [lo << b, (hi << b) | (lo >> np.uint64(64 - 8 * nbytes))]
    if nwords > 2:
        out.append(hi >> np.uint64(64 - 8 * nbytes) if nbytes else np.zeros_like(hi))
    return out + [np.zeros_like(hi)] * (nwords - 3)


def _shortest_digits(a: np.ndarray):
    """For a flat float32/float16 slice: (m, e, regular) with, where ``regular`` (finite, nonzero), ``m`` a
    float64 integer of exactly 9 digits and ``e`` an int64 such that the shortest decimal that reads back to the
    element is ``|x| = m * 10**(e - 8)`` (trailing zeros of ``m`` not significant). The search is the one of
    :func:`gradcli.render.json.shortest_float64` (the nearest p-digit decimal for the smallest p that converts
    back; elements of extreme magnitude take numpy's ``str``), so the digits are the same."""
    n = a.size
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ax = a.astype(np.float64)
        np.abs(ax, out=ax)
        regular = np.isfinite(a) & (a != 0)
        e = np.log10(ax, where=regular, out=np.ones(n))
        e = np.floor(e, out=e).astype(np.int64)  # (in place: a fresh temporary of this size costs page faults)
    rare = regular & ((e < -14) | (e > 22))
    todo = np.flatnonzero(regular & ~rare) if (rare.any() or not regular.all()) else None
    if todo is None:
        axt, et, target = ax, e, np.abs(a)
    else:
        axt, et, target = ax[todo], e[todo], np.abs(a[todo])
    dtype = a.dtype
    # where every element's 7-digit scale 10**(6 - e) is a whole power of ten, the other scales are that one
    # times or divided by powers of ten (exact: each is a power of ten that float64 holds)
    emax = int(et.max()) if et.size else 0
    pw7 = _POW10_TABLE.take(6 - et) if emax <= 6 else None

    def nearest(digits, idx=None):
        # the nearest `digits`-digit decimal m * 10**-k of the elements `idx` (all: None), and whether it
        # converts back to the element
        x, t = (axt, target) if idx is None else (axt[idx], target[idx])
        if pw7 is not None and digits - 1 - emax >= 0:  # k >= 0 for all
            pw = pw7 if idx is None else pw7[idx]
            if digits != 7:
                pw = pw * _POW10_TABLE[digits - 7] if digits > 7 else pw / _POW10_TABLE[7 - digits]
            mm = np.multiply(x, pw)
            np.rint(mm, out=mm)
            ok = np.divide(mm, pw, out=pw if pw is not pw7 else None).astype(dtype) == t
        else:
            k = digits - 1 - (et if idx is None else et[idx])
            pw = _POW10_TABLE[np.abs(k)]
            up = k >= 0
            mm = np.rint(np.where(up, x * pw, x / pw))
            ok = np.where(up, mm / pw, mm * pw).astype(dtype) == t
        mm *= _POW10_TABLE[9 - digits]  # scaled to 9 digits (exact)
        return mm, ok

    # 7 digits first, then down for those that took 7 and up for the rest (as shortest_float64); those that
    # no candidate fits are left in `up` (their candidate is replaced below)
    best, good7 = nearest(7)
    down = np.flatnonzero(good7)
    up = np.flatnonzero(~good7)
    for digits in range(6, 0, -1):
        if not down.size:
            break
        mm, good = nearest(digits, down)
        down = down[good]
        best[down] = mm[good]
    for digits in (8, 9):  # (a candidate that does not convert back is replaced by the next, or below)
        if not up.size:
            break
        mm, good = nearest(digits, up)
        best[up] = mm
        up = up[~good]
    if todo is None:
        m = best
        missing = up
    else:
        m = np.full(n, 1e8)  # (the digits "1" for zero, NaN and the infinities: written as themselves)
        m[todo] = best
        missing = np.concatenate([todo[up], np.flatnonzero(rare)])
    if missing.size:  # numpy's own shortest repr, element by element (rare), as shortest_float64
        v = np.abs(np.array([float(s) for s in a[missing].astype(str)]))
        em = np.floor(np.log10(v)).astype(np.int64)
        e[missing] = em
        m[missing] = np.rint(np.where(em <= 8, v * _POW10_TABLE[np.clip(8 - em, 0, 63)],
                                      v / _POW10_TABLE[np.clip(em - 8, 0, 63)]))
    # a rounding up to the next power of ten (9.9999999 -> 10.0), or log10 on the wrong side of one
    high = m >= 1e9
    if high.any():
        m[high] /= 10
        e[high] += 1
    low = regular & (m < 1e8)
    if low.any():
        m[low] *= 10
        e[low] -= 1
    return m, e, regular


def _body_width(c: int) -> int:
    """The most bytes that an element of layout class ``c`` (see :func:`_chunk_text`) takes after its sign."""
    if c <= 15:
        return max(c + 1, 9) + 1 + (c >= 8)
    return {16: 11, 17: 12, 18: 13, 19: 14, 20: 14, 21: 3, 22: 5, 23: 11}[c]


#: The layout class (see :func:`_chunk_text`) of a decimal exponent E, at index E + 64.
_CLASS_OF_EXPONENT = np.array([(e if e >= 0 else 15 - e) if -4 <= e <= 15 else 20 for e in range(-64, 64)], np.uint8)


def _digit_words(m: np.ndarray):
    """The 9 digits of ``m`` (float64 integers of 9 digits) as ASCII bytes 0..8 of two uint64 words ``(lo, hi)``
    (little-endian, from the table of :func:`_tables`), its trailing zeros as NUL; and ``nd``, how many of its
    digits are significant (int8). Operations in place where they can be: a fresh temporary of this size costs
    page faults."""
    digit_words, trailing = _tables()
    q = np.divide(m, 1e4)
    np.floor(q, out=q)
    t = np.multiply(q, 1e4)
    lo4 = np.subtract(m, t, out=t).astype(np.intp)
    lead = np.divide(q, 1e4)
    np.floor(lead, out=lead)
    t = np.multiply(lead, 1e4, out=t)
    hi4 = np.subtract(q, t, out=t).astype(np.intp)
    hi4 += (lo4 == 0) * 10000  # (then its own trailing zeros are NUL too)
    lo4 += 10000
    low = digit_words.take(lo4)
    lo = lead.astype(np.uint64)
    lo += np.uint64(ord("0"))
    t = digit_words.take(hi4)
    t <<= np.uint64(8)
    lo |= t
    t = np.left_shift(low, np.uint64(40), out=t)
    lo |= t
    hi = np.right_shift(low, np.uint64(24), out=low)
    nd = trailing.take(lo4)
    nd += trailing.take(hi4)
    np.subtract(np.int8(9), nd, out=nd)
    return lo, hi, nd


def _fill_rows(rows: np.ndarray, core: np.ndarray, classes: list, counts: np.ndarray, ends: np.ndarray,
               digits: tuple, e: np.ndarray, order: np.ndarray, nsep: int) -> None:
    """Write the rows of each layout class (see :func:`_chunk_text`; sorted rows, by class and sign): the ", "
    separator and the sign in word ``nsep - 1``, the number in the words after it; and ``core``, the length of
    each sorted row's sign and number. ``digits``: ``(lo, hi, nd)`` of :func:`_digit_words`; ``e``: each
    element's decimal exponent, in the elements' order."""
    lo, hi, nd = digits
    nbody = rows.shape[1] - nsep
    plus, minus = _words(b", ", 8 - 2, 1)[0], _words(b", -", 8 - 3, 1)[0]
    for c in classes:
        s, neg, t = int(ends[2 * c] - counts[2 * c]), int(ends[2 * c]), int(ends[2 * c + 1])
        if c != 23:
            rows[s:neg, nsep - 1] = plus
            rows[neg:t, nsep - 1] = minus
        else:  # the sign goes inside the string
            rows[s:t, nsep - 1] = plus
        lc, hc, ndc = lo[s:t], hi[s:t], nd[s:t]
        if c <= 15 or c == 20:  # integer digits (forced "0"), ".", fraction digits (at least one, forced "0")
            ip = c + 1 if c <= 15 else 1
            if ip < 8:
                keep = np.uint64((1 << (8 * ip)) - 1)
                above = lc & ~keep
                out = [(lc ^ above) | (above << np.uint64(8)), (hc << np.uint64(8)) | (lc >> np.uint64(56))]
                out += [np.zeros_like(lc)] * (nbody - 2)
            else:  # (only the ninth digit moves, for E = 7)
                out = [lc, hc << np.uint64(8) if ip == 8 else hc] + [np.zeros_like(lc)] * (nbody - 2)
            if c <= 15:
                fill = _words(b"0" * ip + b".0", 0, nbody)
                for j in range(nbody):
                    out[j] |= fill[j]
                core[s:t] = ip + 1 + np.maximum(ndc - ip, 1)
            else:  # d.ddde-XX, without "." for one digit: the exponent right after the last digit
                more = ndc > 1
                out[0] |= np.where(more, np.uint64(ord(".") << 8), np.uint64(0))
                ec = e.take(order[s:t])
                ae = np.abs(ec)
                x = (np.uint64(ord("e")) | (np.where(ec < 0, np.uint64(ord("-")), np.uint64(ord("+"))) << np.uint64(8))
                     | ((ae // 10 + ord("0")).astype(np.uint64) << np.uint64(16))
                     | ((ae % 10 + ord("0")).astype(np.uint64) << np.uint64(24)))
                at = (ndc + more) * 8
                out[0] |= x << at.astype(np.uint64)
                out[1] |= np.where(at >= 64, x << np.maximum(at - 64, 0).astype(np.uint64),
                                   x >> np.maximum(64 - at, 0).astype(np.uint64))
                core[s:t] = at // 8 + 4
        elif c <= 19:  # positional, E = -1..-4: "0.", zeros, digits
            z = c - 16
            out = _shifted(lc, hc, 2 + z, nbody)
            out[0] |= _words(b"0." + b"0" * z, 0, 1)[0]
            core[s:t] = 2 + z + ndc
        else:
            text = {21: b"0.0", 22: b'"NaN"', 23: b'"Infinity"'}[c]
            core[s:t] = len(text)
            out = [np.broadcast_to(w, (t - s,)) for w in _words(text, 0, nbody)]
            if c == 23:
                rows[neg:t, nsep:] = _words(b'"-Infinity"', 0, nbody)
                core[neg:t] += 1
                t = neg
        for j in range(nbody):
            rows[s:t, nsep + j] = out[j][:t - s]
        if c != 23:
            core[neg:t] += 1


def _separators(rows: np.ndarray, inverse: np.ndarray, minus: np.ndarray, shape: tuple, start: int,
                nsep: int) -> np.ndarray:
    """Write the separators other than ", " into the first ``nsep`` words of ``rows``: "], [" after the last
    element of a row, "]], [[" after a plane's, ... (right-aligned against the sign or the number, as ", " is);
    nothing before the array's first element. Returns each element's separator length (int64)."""
    n = inverse.size
    body = 8 * nsep
    sep = np.full(n, 2, np.int64)
    period = 1
    for level in range(1, len(shape)):
        period *= shape[len(shape) - level]
        at = slice((-start) % period, None, period)
        text = b"]" * level + b", " + b"[" * level
        where, neg = inverse[at], minus[at].astype(bool)
        rows[where[~neg], :nsep] = _words(text, body - len(text), nsep)
        rows[where[neg], :nsep] = _words(text + b"-", body - len(text) - 1, nsep)
        sep[at] = len(text)
    if start == 0:
        rows[inverse[0], :nsep] = _words(b"-" * int(minus[0]), body - int(minus[0]), nsep)
        sep[0] = 0
    return sep


def _chunk_text(a: np.ndarray, shape: tuple, start: int) -> np.ndarray:
    """The JSON text of the flat float32/float16 slice ``a`` (elements ``start`` ... of an array of ``shape``),
    each element with the separator before it, as a uint8 array of ASCII bytes."""
    n = a.size
    m, e, regular = _shortest_digits(a)
    with np.errstate(invalid="ignore"):
        nan = np.isnan(a)
        sign = np.signbit(a) & ~nan
        inf = np.isinf(a)
    # the layout class of each element: 0..15 positional E = 0..15, 16..19 positional E = -1..-4, 20 exponent,
    # 21 zero, 22 NaN, 23 infinity; sorted by class and sign, so that each class's rows are one contiguous
    # block (negative ones last) built with the same operations
    cls = _CLASS_OF_EXPONENT.take(e + 64)  # (|e| <= 46 for any float32)
    if not regular.all():
        cls[~regular] = 21
        cls[nan] = 22
        cls[inf] = 23
    key = cls * np.uint8(2) + sign
    order = np.argsort(key, kind="stable")
    counts = np.bincount(key, minlength=48)
    ends = np.cumsum(counts)
    m = m.take(order)

    # the 9 digits of m (see _digit_words); nd: how many are significant
    lo, hi, nd = _digit_words(m)

    classes = [int(c) for c in np.flatnonzero(counts[0::2] + counts[1::2])]
    # a row of uint64 words: the separator and the sign right-aligned in the first `nsep`, the number from the
    # next on; the text is contiguous in the row (NUL before and after it)
    nsep = -(-(2 * len(shape) + 1) // 8)
    nbody = -(-max(_body_width(c) for c in classes) // 8)
    body = 8 * nsep  # the number's first byte
    rows = np.empty((n, nsep + nbody), np.uint64)
    rows[:, :nsep - 1] = 0
    core = np.empty(n, np.int64)  # sorted: the sign's and the number's bytes
    _fill_rows(rows, core, classes, counts, ends, (lo, hi, nd), e, order, nsep)
    # the separators other than ", " (see _separators)
    inverse = np.empty_like(order)  # each element's row
    inverse[order] = np.arange(n)
    minus = (sign & ~inf).astype(np.int64)  # a "-" of its own before the number
    length = core.take(inverse)
    sep = _separators(rows, inverse, minus, shape, start, nsep)
    length += sep
    return _pack(rows.view(f"V{8 * (nsep + nbody)}").reshape(-1), order, length, body - minus - sep)


def _pack(rows: np.ndarray, order: np.ndarray, length: np.ndarray, first: np.ndarray) -> np.ndarray:
    """The texts of ``rows`` (numpy void items; row j holds element ``order[j]``, whose text is its bytes
    ``first[i]`` to ``first[i] + length[i]`` with NUL around it) one after another in the elements' order, as a
    uint8 array. Each row is written whole where its text goes, the rows of every k-th element into one of k
    zeroed buffers, k so large that the rows in one buffer do not overlap; the buffers are or-ed together."""
    n, width = rows.size, rows.dtype.itemsize
    ends = np.cumsum(length)
    total = int(ends[-1])
    at = ends - length  # where each row goes (the first `width` bytes: room for the first's NUL)
    at -= first
    at += width
    k = min(2, n)
    while k < n and int((at[k:] - at[:-k]).min()) < width:
        k += 1
    size = -(-(total + 2 * width) // 8) * 8
    buffers = np.zeros((k, size), np.uint8)
    for r in range(1, k):
        at[r::k] += r * size
    np.ndarray((k * size - width + 1,), rows.dtype, buffers, strides=(1,))[at.take(order)] = rows
    words = buffers.view(np.uint64)
    out = words[0] if k == 1 else np.bitwise_or(words[0], words[1])
    for r in range(2, k):
        out |= words[r]
    return out.view(np.uint8)[width:width + total]


def float_array_text(a: np.ndarray) -> str:
    """The JSON text of the float32 or float16 array ``a`` (ndim >= 1, size >= 1): nested lists, exactly as
    ``json.dumps(array_to_json(a))`` writes them (see the module docstring). Raises ValueError for another dtype, a 0-d or an empty array."""
    return float_array_bytes(a).decode("ascii")


def float_array_bytes(a: np.ndarray) -> bytes:
    """:func:`float_array_text` as ASCII bytes."""
    return b"".join(float_array_parts(a))


def float_array_parts(a: np.ndarray) -> list:
    """:func:`float_array_bytes` in bytes-like pieces (bytes, and one uint8 array per slice: written one after
    another, never joined into one buffer of megabytes)."""
    a = np.asarray(a)
    if a.dtype not in (np.float32, np.float16) or a.ndim == 0 or a.size == 0:
        raise ValueError(f"float_array_text takes a non-empty float32/float16 array of ndim >= 1, not {a.dtype} "
                         f"of shape {a.shape}")
    flat = a.reshape(-1)

    def chunk(start):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # (a candidate beyond float16's range)
            return _chunk_text(flat[start:start + CHUNK], a.shape, start)

    starts = range(0, flat.size, CHUNK)
    pool = _pool() if len(starts) > 1 else None
    return [b"[" * a.ndim, *(pool.map(chunk, starts) if pool is not None else map(chunk, starts)), b"]" * a.ndim]

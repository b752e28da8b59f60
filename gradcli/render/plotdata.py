"""``gradcli plot``'s values as data: ``--format csv`` (one row per point) and ``--format json`` (schema:
``gradcli schema plot``), and what the picture formats share: the curves cut into the pieces to draw.

Values are written in the dtype the plot was computed in (float32 by default), as the shortest decimal that
reads back to the same value; NaN and the infinities are ``nan``/``inf``/``-inf`` in CSV and the strings
``"NaN"``/``"Infinity"``/``"-Infinity"`` in JSON.
"""

from __future__ import annotations

import numpy as np



def _as_dtype(a, dtype: str) -> np.ndarray:
    return np.asarray(a, dtype=np.float32 if dtype == "float32" else np.float64)


def curves(result) -> list:
    """The curves of a 1-D plot as ``(label, values, breaks)``: f, df/dx and, with ``--order 2``, d²f/dx²."""
    c = result.curve
    name = c.name
    out = [("f", c.f, c.f_break), (f"df/d{name}", c.df, c.df_break)]
    if result.order == 2 and c.d2 is not None:
        out.append((f"d²f/d{name}²", c.d2, c.d2_break))
    return out


def segments(x: np.ndarray, v: np.ndarray, breaks: np.ndarray) -> list:
    """The pieces of a curve to draw as lines: lists of indices of consecutive finite points not separated by
    a break."""
    pieces, cur = [], []
    for i in range(len(x)):
        if not np.isfinite(v[i]):
            if cur:
                pieces.append(cur)
            cur = []
            continue
        if cur and breaks[i]:
            pieces.append(cur)
            cur = []
        cur.append(i)
    if cur:
        pieces.append(cur)
    return pieces


#: The y range of a curve plot with a few extreme values is cut at :data:`CUT_FACTOR` times this quantile of
#: the values' magnitudes (and their outer edge shown a little past it).
CUT_QUANTILE = 90
CUT_FACTOR = 1.5


def y_limits(result) -> tuple[float, float] | None:
    """The y range to show for a curve plot, or None for the full range.

    When a few extreme values (a pole: ``1/x`` near 0, ``x.sqrt()``'s derivative near 0) would flatten
    everything else (the full range is over 5 times the 1st-99th percentile range), the range is cut at
    ``M`` = :data:`CUT_FACTOR` × the :data:`CUT_QUANTILE`-th percentile of ``|y|`` over the values drawn: to
    ``[-M, M]`` where the values run past both (a pole that goes to both signs, ``1/x``, is cut
    symmetrically, however many of the extremes its derivative adds on one side), and only on the side they
    run past otherwise (``x.sqrt()``'s derivative: ``[0, M]``). A side that is not cut keeps a margin of 5%;
    the curves run off the edge where it is cut. Magnitudes, not percentiles of the signed values: with the
    latter, ``1/x`` with its derivative ``-1/x**2`` was cut at about ``[-550, 60]``."""
    values = np.concatenate([v[np.isfinite(v)] for _, v, _ in curves(result)] or [np.zeros(0)])
    if values.size < 10:
        return None
    lo, hi = float(values.min()), float(values.max())
    p1, p99 = (float(q) for q in np.percentile(values, [1, 99]))
    inner = p99 - p1
    if inner <= 0 or hi - lo <= 5 * inner:
        return None
    m = CUT_FACTOR * float(np.percentile(np.abs(values), CUT_QUANTILE))
    if m <= 0 or (lo >= -m and hi <= m):
        return None
    low, high = max(lo, -m), min(hi, m)
    margin = 0.05 * (high - low)
    return (low - margin if low == lo else low), (high + margin if high == hi else high)


def _text(v) -> str:
    return str(v)  # numpy scalars: shortest round-trip text; nan, inf, -inf


def plot_to_csv(result) -> str:
    """CSV text: ``x,f,df/dx[,d2f/dx2],kink`` per point of a curve (kink 1 at the points added at kinks), or
    ``x,y,f,df/dx,df/dy`` per point of a field (row by row)."""
    dt = result.dtype
    if result.curve is not None:
        c = result.curve
        cols = [c.x, c.f, c.df] + ([c.d2] if result.order == 2 and c.d2 is not None else [])
        head = [c.name, "f", f"df/d{c.name}"] + ([f"d2f/d{c.name}2"] if len(cols) == 4 else []) + ["kink"]
        cols = [_as_dtype(a, dt) for a in cols]
        lines = [",".join(head)]
        for i in range(len(c.x)):
            lines.append(",".join(_text(a[i]) for a in cols) + ("," + ("1" if c.kink[i] else "0")))
        return "\n".join(lines) + "\n"
    fl = result.field
    lines = [f"{fl.xname},{fl.yname},f,df/d{fl.xname},df/d{fl.yname}"]
    f, gx, gy = (_as_dtype(a, dt) for a in (fl.f, fl.dfdx, fl.dfdy))
    x, y = _as_dtype(fl.x, dt), _as_dtype(fl.y, dt)
    for j in range(len(y)):
        for i in range(len(x)):
            lines.append(",".join(_text(v) for v in (x[i], y[j], f[j, i], gx[j, i], gy[j, i])))
    return "\n".join(lines) + "\n"

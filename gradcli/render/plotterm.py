"""``gradcli plot`` in the terminal: the curves drawn by plotext, a field as a shaded map with arrows.

Sized to the terminal (the width, and at most :data:`MAX_HEIGHT` rows); written to a file or pipe it is
:data:`PIPE_SIZE` characters and without colour, as it is with ``NO_COLOR``. A curve is broken where the plot
found a gap (NaN, infinity, a jump); a kink's subgradient (the derivative PyTorch's rule gives exactly at the
kink) is a ``●``. A field shades ``f`` from low ``·`` to high ``█`` and draws the gradient's direction as an
arrow on every few cells (``→ ↗ ↑ ↖ ← ↙ ↓ ↘``; ``·`` where it is zero).
"""

from __future__ import annotations

import os
import shutil

import numpy as np

from .plotdata import curves, segments, y_limits

#: (width, height) when standard output is not a terminal.
PIPE_SIZE = (100, 30)
MAX_HEIGHT = 40
SHADES = " ·░▒▓█"
ARROWS = "→↗↑↖←↙↓↘"


def _size(stream) -> tuple[int, int, bool]:
    isatty = getattr(stream, "isatty", None)
    terminal = bool(isatty and isatty())
    if not terminal:
        return PIPE_SIZE[0], PIPE_SIZE[1], False
    cols, rows = shutil.get_terminal_size(PIPE_SIZE)
    return max(40, cols), max(12, min(MAX_HEIGHT, rows - 2)), not os.environ.get("NO_COLOR")


def render_plot(result, stream) -> None:
    """Write the plot of a :class:`~gradcli.plot.PlotResult` to ``stream`` (text)."""
    width, height, color = _size(stream)
    if result.curve is not None:
        stream.write(curve_text(result, width, height, color))
    else:
        stream.write(field_text(result, width, height))


def curve_text(result, width: int, height: int, color: bool = False) -> str:
    """The curve plot as text (plotext), ``width`` × ``height`` characters."""
    import plotext as plt

    c = result.curve
    fig = plt.figure
    fig.clear()
    plt.terminal.limit(False, False)
    fig.plot_size(width, height)
    for label, values, breaks in curves(result):
        pieces = segments(c.x, values, breaks)
        idx = [i for p in pieces for i in p]
        if not idx:
            continue
        sig = fig.signal([float(c.x[i]) for i in idx], [float(values[i]) for i in idx]).label(label)
        sig.lines()
        k = 0
        for p in pieces:
            if k:
                sig.line(k, False)  # the piece starts a new line: no segment from the previous piece
            k += len(p)
        fig.draw(sig)
    if c.kinks:
        marks = fig.signal([k.x for k in c.kinks], [k.df for k in c.kinks], marker="●")
        marks.label(f"df/d{c.name} at a kink (PyTorch's)")
        fig.draw(marks)
    limits = y_limits(result)
    if limits is not None:
        fig.ruler("y").lim(*limits).alignment(lim="edge")
    fig.title(result.program if len(result.program) < width - 4 else result.program[:width - 7] + "...")
    fig.label(c.name, axis="x")
    text = fig.build().string(colorless=not color)
    fig.clear()
    return text if text.endswith("\n") else text + "\n"


def _arrow(gx: float, gy: float) -> str:
    if not (np.isfinite(gx) and np.isfinite(gy)) or (gx == 0 and gy == 0):
        return "·"
    angle = np.arctan2(gy, gx)
    return ARROWS[int(np.round(angle / (np.pi / 4))) % 8]


def field_text(result, width: int, height: int) -> str:
    """The field as text: ``f`` shaded on a grid of characters (y up), the gradient's direction as arrows."""
    fl = result.field
    rows = max(4, min(height - 6, len(fl.y)))
    cols = max(8, min(width - 12, 2 * len(fl.x)))
    yi = np.linspace(len(fl.y) - 1, 0, rows).round().astype(int)  # top row: the largest y
    xi = np.linspace(0, len(fl.x) - 1, cols).round().astype(int)
    f = fl.f[np.ix_(yi, xi)]
    fin = f[np.isfinite(f)]
    lo, hi = (float(fin.min()), float(fin.max())) if fin.size else (0.0, 1.0)
    span = hi - lo or 1.0
    lines = [result.program, f"f from {lo:.4g} (' ') to {hi:.4g} ('█'); arrows: the gradient's direction"]
    ystep = max(2, rows // 8)
    xstep = max(4, cols // 12)
    for r, j in enumerate(yi):
        chars = []
        for c, i in enumerate(xi):
            v = fl.f[j, i]
            if r % ystep == ystep // 2 and c % xstep == xstep // 2:
                chars.append(_arrow(fl.dfdx[j, i], fl.dfdy[j, i]))
            elif not np.isfinite(v):
                chars.append("?")
            else:
                chars.append(SHADES[min(len(SHADES) - 1, int((v - lo) / span * (len(SHADES) - 1) + 0.5))])
        label = f"{fl.y[j]:>9.3g} " if r in (0, rows - 1) or r == rows // 2 else " " * 10
        lines.append(label + "│" + "".join(chars) + "│")
    lines.append(" " * 10 + "└" + "─" * cols + "┘")
    left, right = f"{fl.x[0]:.3g}", f"{fl.x[-1]:.3g}"
    lines.append(" " * 11 + left + f"{fl.xname}".center(cols - len(left) - len(right)) + right)
    lines.append(" " * 10 + f"(y axis: {fl.yname})")
    return "\n".join(lines) + "\n"

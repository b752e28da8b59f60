"""``gradcli plot`` in the terminal: the curves drawn by plotext, a field as a shaded map with arrows.

Sized to the terminal (the width, and at most :data:`MAX_HEIGHT` rows); written to a file or pipe it is
:data:`PIPE_SIZE` characters and without colour, as it is with ``NO_COLOR``. Without colour each curve has its
own marker (:data:`PLAIN_MARKERS`), so that they can be told apart. The legend is a line under the plot, where
it covers no curve; the y axis reads plain numbers (``10 5 0 -5``, not plotext's ``1e1 5e0``). A curve is
broken where the plot found a gap (NaN, infinity, a jump); a kink's subgradient (the derivative PyTorch's rule
gives exactly at the kink) is a ``●``. A field shades ``f`` from low ``·`` to high ``█`` and draws the gradient's direction as an
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
#: plotext's markers of f, df/dx and d²f/dx² without colour: quadrant blocks, braille dots, bullets
PLAIN_MARKERS = ("hd", "braille", "•")
#: the glyph of each marker in the legend
MARKER_GLYPHS = {"hd": "▚", "braille": "⢕", "•": "•", "●": "●"}
#: the colours plotext gives its signals in turn (its default theme's sequence, 256-colour codes): the legend's
#: samples are drawn in them
SIGNAL_COLORS = (12, 10, 9, 14, 13, 11)
#: about how many ticks the y axis gets
Y_TICKS = 5
ARROWS = "→↗↑↖←↙↓↘"


def _size(stream) -> tuple[int, int, bool]:
    isatty = getattr(stream, "isatty", None)
    terminal = bool(isatty and isatty())
    if not terminal:
        return PIPE_SIZE[0], PIPE_SIZE[1], False
    cols, rows = shutil.get_terminal_size(PIPE_SIZE)
    return max(40, cols), max(12, min(MAX_HEIGHT, rows - 2)), not os.environ.get("NO_COLOR")


def render_plot(result, stream) -> None:
    """Write the plot of a :class:`~gradcli.app.plot_grid.PlotResult` to ``stream`` (text)."""
    width, height, color = _size(stream)
    if result.curve is not None:
        stream.write(curve_text(result, width, height, color))
    else:
        stream.write(field_text(result, width, height))


def curve_text(result, width: int, height: int, color: bool = False) -> str:
    """The curve plot as text (plotext), ``width`` × ``height`` characters, the last line its legend."""
    import plotext as plt

    c = result.curve
    fig = plt.figure
    fig.clear()
    plt.terminal.limit(False, False)
    fig.plot_size(width, height - 1)  # the legend's line below
    legend = []
    drawn = []
    for k, (label, values, breaks) in enumerate(curves(result)):
        pieces = segments(c.x, values, breaks)
        idx = [i for p in pieces for i in p]
        if not idx:
            continue
        marker = "hd" if color else PLAIN_MARKERS[k]
        sig = fig.signal([float(c.x[i]) for i in idx], [float(values[i]) for i in idx], marker=marker)
        sig.lines()
        start = 0
        for p in pieces:
            if start:
                sig.line(start, False)  # the piece starts a new line: no segment from the previous piece
            start += len(p)
        fig.draw(sig)
        legend.append((marker, label))
        drawn.extend(float(values[i]) for i in idx)
    if c.kinks:
        fig.draw(fig.signal([k.x for k in c.kinks], [k.df for k in c.kinks], marker="●"))
        legend.append(("●", f"df/d{c.name} at a kink (PyTorch's)"))
        drawn.extend(k.df for k in c.kinks)
    limits = y_limits(result)
    if limits is None and drawn:
        limits = (min(drawn), max(drawn))
    if limits is not None:
        ticks = nice_ticks(*limits)
        fig.ruler("y").lim(*limits).alignment(lim="edge").ticks(ticks, tick_labels(ticks))
    fig.title(result.program if len(result.program) < width - 4 else result.program[:width - 7] + "...")
    fig.label(c.name, axis="x")
    text = fig.build().string(colorless=not color)
    fig.clear()
    return (text if text.endswith("\n") else text + "\n") + legend_line(legend, width, color) + "\n"


def legend_line(entries: list, width: int, color: bool) -> str:
    """The legend under the plot: each curve's marker and label, centred in ``width``; the markers in the
    curves' colours when ``color``."""
    parts, size = [], 0
    for k, (marker, label) in enumerate(entries):
        glyph = MARKER_GLYPHS.get(marker, marker)
        size += len(glyph) + 1 + len(label) + (3 if k else 0)
        if color:
            import plotext as plt

            glyph = str(plt.colorize(glyph, SIGNAL_COLORS[k % len(SIGNAL_COLORS)]))
        parts.append(f"{glyph} {label}")
    return " " * max(0, (width - size) // 2) + "   ".join(parts)


def nice_ticks(lo: float, hi: float, count: int = Y_TICKS) -> list:
    """About ``count`` round tick values within ``[lo, hi]``: multiples of 1, 2 or 5 times a power of ten
    (the step nearest ``(hi - lo) / count``), 0 among them when it is in the range."""
    import math

    span = hi - lo
    if not (math.isfinite(span) and span > 0):
        return [lo] if math.isfinite(lo) else []
    raw = span / count
    power = 10.0 ** math.floor(math.log10(raw))
    step = min((m * power for m in (1, 2, 5, 10)), key=lambda s: abs(s - raw))
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    return [k * step for k in range(first, last + 1)]


def tick_labels(ticks: list) -> list:
    """The ticks as plain decimals with as many digits as their step needs (``-6 -4 -2 0 2``, ``0.25 0.5``);
    exponents only beyond a million or below a millionth."""
    import math

    if not ticks:
        return []
    big = max(abs(t) for t in ticks)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else (abs(ticks[0]) or 1.0)
    if big >= 1e6 or (0 < big < 1e-6):
        return [f"{t:.3g}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-") for t in ticks]
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    return [f"{0.0 if abs(t) < step / 2 else t:.{decimals}f}" for t in ticks]


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

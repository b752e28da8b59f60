"""``gradcli plot -o FILE``: the plot as PNG, SVG or PDF, drawn by matplotlib (an optional dependency:
``pip install 'gradcli[plot]'``), imported only here and only when a file is asked for.

A curve: ``f``, ``df/dx`` (and ``d²f/dx²`` with ``--order 2``) on one pair of axes with a legend, broken where
the plot found a gap; at each kink the two one-sided derivatives as open circles and the subgradient
PyTorch's rule gives exactly there as a filled dot, annotated. A field: a heat map of ``f`` with a colour bar
and the gradient drawn as arrows. matplotlib's global state (pyplot) is not used: one ``Figure`` per call.
"""

from __future__ import annotations

import io

import numpy as np

from ..engine.errors import InputError
from .plotdata import curves, segments, y_limits

#: Figure size in inches, and resolution of PNG files.
SIZE = (8.0, 5.0)
DPI = 110
COLORS = ("#1f77b4", "#d62728", "#2ca02c")


def _matplotlib():
    try:
        import matplotlib
    except ImportError:
        raise InputError("writing a plot to a file needs matplotlib, an optional dependency: pip install "
                         "'gradcli[plot]' (or pip install matplotlib); the terminal plot and --format csv|json "
                         "need nothing more", type="DependencyError") from None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    return matplotlib, Figure, FigureCanvasAgg


def plot_bytes(result, fmt: str) -> bytes:
    """The plot of a :class:`~gradcli.app.plot_grid.PlotResult` as a ``fmt`` file ("png", "svg", "pdf").

    Raises:
        InputError: matplotlib is not installed (exit 2).
    """
    matplotlib, Figure, FigureCanvasAgg = _matplotlib()
    fig = Figure(figsize=SIZE, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if result.curve is not None:
        _draw_curve(ax, result)
    else:
        _draw_field(fig, ax, result)
    ax.set_title(result.program, fontsize=11, family="monospace")
    if result.field is not None:
        fig.suptitle("colour: f    arrows: its gradient", fontsize=9, color="#555555", x=0.02, ha="left")
    buf = io.BytesIO()
    # no creation date in the file: the same plot gives the same bytes (docs/ pictures are kept in git)
    metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}, "png": {}}[fmt]
    with matplotlib.rc_context({"svg.hashsalt": "gradcli"}):  # and the same element ids
        fig.savefig(buf, format=fmt, dpi=DPI, metadata=metadata)
    return buf.getvalue()


def _line(x, v, breaks):
    """x and v with NaN between the pieces, so that matplotlib leaves gaps there."""
    xs, vs = [], []
    for piece in segments(x, v, breaks):
        if xs:
            xs.append(np.nan)
            vs.append(np.nan)
        xs.extend(x[piece])
        vs.extend(v[piece])
    return np.array(xs, dtype=float), np.array(vs, dtype=float)


def _draw_curve(ax, result) -> None:
    c = result.curve
    styles = ("-", "-", "--")
    for (label, values, breaks), color, style in zip(curves(result), COLORS, styles):
        xs, vs = _line(c.x, values, breaks)
        ax.plot(xs, vs, style, color=color, label=label, linewidth=1.8)
    for k in c.kinks:
        ax.plot([k.x, k.x], [k.left, k.right], "o", mfc="white", mec=COLORS[1], ms=6, zorder=3)
        ax.plot([k.x], [k.df], "o", color=COLORS[1], ms=6, zorder=4)
        below = k.df > (k.left + k.right) / 2  # the text goes on the side away from the one-sided limits
        ax.annotate(f"PyTorch: df/d{c.name}({k.x:g}) = {k.df:g}", (k.x, k.df), textcoords="offset points",
                    xytext=(8, -14 if below else 7), fontsize=8, color=COLORS[1],
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8})
    if c.kinks:
        ax.plot([], [], "o", color=COLORS[1], label=f"df/d{c.name} at a kink (PyTorch's subgradient)")
    limits = y_limits(result)
    if limits is not None:
        ax.set_ylim(*limits)
    ax.axhline(0, color="#999999", linewidth=0.6, zorder=0)
    ax.grid(True, alpha=0.3)
    ax.set_xlabel(c.name)
    ax.set_ylabel("value")
    ax.legend(loc="best", fontsize=9)


def _draw_field(fig, ax, result) -> None:
    fl = result.field
    mesh = ax.pcolormesh(fl.x, fl.y, np.ma.masked_invalid(fl.f), shading="auto", cmap="viridis")
    fig.colorbar(mesh, ax=ax, label="f")
    ax.contour(fl.x, fl.y, np.ma.masked_invalid(fl.f), levels=8, colors="white", linewidths=0.5, alpha=0.6)
    # about 17 arrows per axis, whatever the grid
    sy = max(1, len(fl.y) // 17)
    sx = max(1, len(fl.x) // 17)
    X, Y = np.meshgrid(fl.x[::sx], fl.y[::sy])
    gx, gy = fl.dfdx[::sy, ::sx], fl.dfdy[::sy, ::sx]
    ax.quiver(X, Y, np.ma.masked_invalid(gx), np.ma.masked_invalid(gy), color="white", angles="xy",
              pivot="mid", width=0.004)
    ax.set_xlabel(fl.xname)
    ax.set_ylabel(fl.yname)
    ax.set_aspect("equal" if _similar(fl) else "auto")


def _similar(fl) -> bool:
    w, h = fl.x[-1] - fl.x[0], fl.y[-1] - fl.y[0]
    return 0.5 <= w / h <= 2

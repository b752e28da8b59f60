"""The picture formats ``svg``, ``png`` and ``pdf``: the autograd graph drawn by Graphviz, a plot drawn by
matplotlib.

The graph is the ``dot`` format's text (:mod:`gradcli.render.dot`) laid out by Graphviz's ``dot`` program
through the ``graphviz`` Python package; plots go through :mod:`gradcli.render.plotfile`. Both are imported
when a picture is asked for, never at start-up. What is missing is said plainly, with how to install it
(exit 2): Graphviz's ``dot`` program (a system package, not a Python one), the ``graphviz`` package, or
matplotlib (``pip install 'gradcli[plot]'``).

PNG and PDF are bytes: the command writes them to ``-o FILE`` or to a pipe, never to a terminal.
"""

from __future__ import annotations

from ..errors import InputError
from .graphview import GraphOptions
from .registry import Renderer, register

DOT_MISSING = ("the {fmt} format needs Graphviz's 'dot' program, which was not found on PATH. Install Graphviz "
               "(Debian/Ubuntu: sudo apt-get install graphviz; Fedora: sudo dnf install graphviz; macOS: brew "
               "install graphviz; Windows: winget install graphviz), or write DOT text with --graph dot and "
               "draw it elsewhere")


def graphviz_module():
    """The ``graphviz`` Python package.

    Raises:
        InputError: it is not installed (exit 2), saying how to install it.
    """
    try:
        import graphviz
    except ImportError:
        raise InputError("drawing the graph needs the Python package 'graphviz' (pip install graphviz), "
                         "a dependency of gradcli that is missing here", type="DependencyError") from None
    return graphviz


def render_dot(dot_text: str, fmt: str) -> bytes:
    """Lay out DOT text with Graphviz's ``dot`` into ``fmt`` ("svg", "png", "pdf").

    Raises:
        InputError: the ``graphviz`` package or the ``dot`` program is missing, or dot fails (exit 2).
    """
    graphviz = graphviz_module()
    try:
        return graphviz.Source(dot_text).pipe(format=fmt, engine="dot", quiet=True)
    except graphviz.ExecutableNotFound:
        raise InputError(DOT_MISSING.format(fmt=fmt), type="DependencyError") from None
    except graphviz.CalledProcessError as e:
        detail = (e.stderr or b"").decode("utf-8", "replace").strip()
        raise InputError(f"Graphviz's dot failed to draw the graph: {detail or e}", type="GraphvizError") from None


class ImageRenderer(Renderer):
    """A picture format: ``graph()`` through Graphviz, ``plot()`` through matplotlib. ``grad()`` draws the
    graph, so that ``--format svg`` is ``--graph svg``."""

    def __init__(self, name: str, binary: bool):
        self.name = name
        self.binary = binary

    def _write(self, stream, data: bytes) -> None:
        if self.binary:
            stream.write(data)
        else:
            stream.write(data.decode("utf-8"))

    def grad(self, result, stream) -> None:
        self.graph(result, stream, GraphOptions())

    def graph(self, result, stream, options) -> None:
        from .dot import graph_to_dot

        self._write(stream, render_dot(graph_to_dot(result, options), self.name))

    def plot(self, result, stream) -> None:
        from .plotfile import plot_bytes

        self._write(stream, plot_bytes(result, self.name))


register(ImageRenderer("svg", binary=False))
register(ImageRenderer("png", binary=True))
register(ImageRenderer("pdf", binary=True))

"""The picture formats' registrations: ``dot``, ``svg``, ``png``, ``pdf``, ``mermaid``, ``tree`` (the autograd
graph; ``svg``/``png``/``pdf`` draw plots too), and :data:`PLOT_CSV`, ``gradcli plot --format csv`` (not
registered: CSV is a format of ``gradcli plot`` only, so the other commands' ``--format`` do not offer it).

They live in one small module, which holds what draws the pictures through
:func:`~gradcli.engine.lazy.lazy` (loaded when a method first uses it), so that ``gradcli``'s start-up pays for
one module, never for Graphviz, plotext, matplotlib or the drawing code:

* the graph: :mod:`gradcli.render.graphview` (what a picture shows), :mod:`~gradcli.render.dot`,
  :mod:`~gradcli.render.graphviz` (SVG/PNG/PDF), :mod:`~gradcli.render.mermaid`, :mod:`~gradcli.render.tree`;
* plots: :mod:`~gradcli.render.plotfile` (matplotlib), :mod:`~gradcli.render.plotdata` (CSV; the JSON is the
  ``json`` format's), the terminal plot being the ``table`` format's (:mod:`~gradcli.render.plotterm`).

A graph format's ``grad()`` draws the graph, so ``--format svg`` is ``--graph svg``. PNG and PDF are bytes
(``binary``): the command writes them to ``-o FILE`` or a pipe, never to a terminal.
"""

from __future__ import annotations

from ..engine.lazy import lazy
from .registry import Renderer, register

dot = lazy("gradcli.render.dot")
graphviz = lazy("gradcli.render.graphviz")
mermaid = lazy("gradcli.render.mermaid")
plotdata = lazy("gradcli.render.plotdata")
plotfile = lazy("gradcli.render.plotfile")
table = lazy("gradcli.render.table")
tree = lazy("gradcli.render.tree")


class GraphRenderer(Renderer):
    """A format whose ``grad()`` draws the autograd graph."""

    def grad(self, result, stream) -> None:
        self.graph(result, stream, None)


class DotRenderer(GraphRenderer):
    """``dot``: Graphviz DOT text, no dependency."""

    name = "dot"

    def graph(self, result, stream, options) -> None:
        stream.write(dot.graph_to_dot(result, options))


class ImageRenderer(GraphRenderer):
    """``svg``, ``png``, ``pdf``: the graph through Graphviz, a plot through matplotlib."""

    def __init__(self, name: str, binary: bool):
        self.name = name
        self.binary = binary

    def _write(self, stream, data: bytes) -> None:
        stream.write(data if self.binary else data.decode("utf-8"))

    def graph(self, result, stream, options) -> None:
        self._write(stream, graphviz.render_dot(dot.graph_to_dot(result, options), self.name))

    def plot(self, result, stream) -> None:
        self._write(stream, plotfile.plot_bytes(result, self.name))


class MermaidRenderer(GraphRenderer):
    """``mermaid``: a Mermaid flowchart for Markdown."""

    name = "mermaid"

    def graph(self, result, stream, options) -> None:
        stream.write(mermaid.graph_to_mermaid(result, options))


class TreeRenderer(GraphRenderer):
    """``tree``: the graph as a rich tree in the terminal (the program's output may share standard output)."""

    name = "tree"
    prints_to_stdout = True

    def graph(self, result, stream, options) -> None:
        drawn = tree.build_tree(result, options)
        console = table.stdout_console(stream)
        if drawn is None:
            console.print("the output has no grad_fn: no inputs require grad, so there is no graph")
        else:
            console.print(drawn)


class CsvRenderer(Renderer):
    """``csv``: ``gradcli plot``'s values, one row per point (``gradcli plot --format csv``)."""

    name = "csv"

    def plot(self, result, stream) -> None:
        stream.write(plotdata.plot_to_csv(result))


register(DotRenderer())
register(ImageRenderer("svg", binary=False))
register(ImageRenderer("png", binary=True))
register(ImageRenderer("pdf", binary=True))
register(MermaidRenderer())
register(TreeRenderer())
#: ``gradcli plot --format csv``.
PLOT_CSV = CsvRenderer()

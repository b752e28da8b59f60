"""The output formats: a registry of renderers, looked up by the name ``--format`` takes.

A command computes plain data (:mod:`gradcli.app.result`, :class:`gradcli.app.catalog.OpInfo` rows) and hands it to
the renderer of the chosen format; nothing above this package knows what a format looks like. A new format
is one module that subclasses :class:`Renderer`, implements what it can show and calls :func:`register` with
an instance, plus the line that imports that module in ``gradcli/render/__init__.py``. ``gradcli grad``,
``gradcli ops`` and ``gradcli batch`` then accept it in ``--format``, and their help lists it.

This module imports nothing of the renderers (they import it), so the registry has no import cycle.

The built-in formats are *declared* (:func:`declare`: a name, the module that registers it, and whether it
draws the autograd graph) and their module is imported by the first :func:`get` of one of its names, so that
``gradcli --help`` imports no renderer and ``gradcli grad --json`` never imports the tables' module (nor rich).
"""

from __future__ import annotations

from ..engine.errors import InputError


class EntryFormat:
    """How a format writes ``gradcli batch``'s results: one piece of text per entry, streamed.

    :meth:`entry` runs where the entry ran (in a ``--jobs`` worker process, so an instance must pickle: keep
    only plain settings in it, such as a width) and returns whole lines; the command writes :meth:`header`
    once, before the first entry.
    """

    def header(self) -> str:
        """Text written once before the first entry ("" for none)."""
        return ""

    def entry(self, item) -> str:
        """The text of one entry: whole lines, each ending with ``"\\n"``.

        Args:
            item: a :class:`gradcli.app.result.EntryResult` (the entry's line and text, and its
                :class:`~gradcli.app.result.GradResult` or :class:`~gradcli.app.result.ErrorInfo`).
        """
        raise NotImplementedError


class Renderer:
    """One output format. Each method writes one kind of result to ``stream`` (standard output); a method a
    format does not implement makes the command fail with a usage error (exit 2).

    Attributes:
        name: the value of ``--format`` (lower case, no spaces).
        prints_to_stdout: whether what the program prints may share standard output with this format's text
            (True for tables, which are read by people); formats read by programs (JSON) keep standard output
            to themselves, and the program's output then goes to standard error.
    """

    name = ""
    prints_to_stdout = False
    #: The format is bytes (PNG, PDF): written to a file (``-o``) or a pipe, never to a terminal.
    binary = False

    def grad(self, result, stream) -> None:
        """Write ``gradcli grad``'s :class:`~gradcli.app.result.GradResult` (with ``result.check`` under
        ``--check``). The ``json`` format also takes ``fields=`` (``--fields``: the members to write)."""
        raise self.unsupported("gradcli grad's result", "grad")

    def transform(self, result, stream) -> None:
        """Write ``gradcli jacobian``/``hessian``'s :class:`~gradcli.app.transforms.TransformResult`."""
        raise self.unsupported("a Jacobian or Hessian", "transform")

    def ops(self, infos: list, stream) -> None:
        """Write ``gradcli ops``'s list of :class:`~gradcli.app.catalog.OpInfo`."""
        raise self.unsupported("the list of ops", "ops")

    def batch(self, stream) -> EntryFormat:
        """The :class:`EntryFormat` for ``gradcli batch`` writing to ``stream`` (decides, for example, the
        width from the terminal, here in the main process)."""
        raise self.unsupported("gradcli batch's results", "batch")

    def graph(self, result, stream, options) -> None:
        """Write the autograd graph of ``gradcli grad``'s result (``--graph FORMAT``); ``options`` is a
        :class:`gradcli.render.graphview.GraphOptions`."""
        raise self.unsupported("the autograd graph", "graph")

    def explain(self, result, stream) -> None:
        """Write ``gradcli grad --explain``'s :class:`~gradcli.app.result.Explanation` (in ``result.explanation``)."""
        raise self.unsupported("the chain rule explained", "explain")

    def plot(self, result, stream) -> None:
        """Write ``gradcli plot``'s :class:`~gradcli.app.plot_grid.PlotResult`."""
        raise self.unsupported("a plot", "plot")

    def unsupported(self, what: str, method: str | None = None) -> InputError:
        """The usage error (exit 2) for a result this format cannot show, naming the formats that can show it
        (those that implement ``method``, one of :data:`KINDS`; every format when it is None)."""
        can = showing(method) if method else names()
        return InputError(f"the {self.name} format cannot show {what}; the formats that can are: {', '.join(can)}",
                          type="UsageError")


#: What a renderer may show: the names of :class:`Renderer`'s methods.
KINDS = ("grad", "transform", "ops", "batch", "graph", "explain", "plot")


class _Declared:
    """A format not imported yet: what imports its module, and whether its renderer draws the graph."""

    __slots__ = ("load", "draws_graph", "shows")

    def __init__(self, load, draws_graph: bool, shows: tuple):
        self.load, self.draws_graph, self.shows = load, draws_graph, shows


#: name -> its Renderer, or a _Declared until its module is imported. Insertion order is the formats' order.
_RENDERERS: dict[str, Renderer | _Declared] = {}


def declare(name: str, load, draws_graph: bool = False, shows: tuple | None = None) -> None:
    """Declare the format ``name``: ``load()`` imports the module that registers it (an ``import`` statement, so
    that tests/engine/test_layers.py sees the edge), and the first :func:`get` of ``name`` calls it;
    ``draws_graph``: its renderer implements :meth:`Renderer.graph` (``--graph`` offers it without importing
    it); ``shows``: the :data:`KINDS` its renderer implements (``--help`` lists, per command, the formats that
    can show its result without importing them; None: every kind). The format takes its place in :func:`names`
    now.

    Raises:
        ValueError: the name is empty or already taken (a programming error).
    """
    if not name or name in _RENDERERS:
        raise ValueError(f"cannot declare a renderer named {name!r}: " + ("taken" if name else "no name"))
    kinds = KINDS if shows is None else tuple(shows) + (("graph",) if draws_graph and "graph" not in shows else ())
    _RENDERERS[name] = _Declared(load, draws_graph, kinds)


def register(renderer: Renderer) -> Renderer:
    """Make ``renderer`` the format ``renderer.name`` (in a declared format's place, when declared); returns it.

    Raises:
        ValueError: the name is empty or already registered (a programming error, not a user's).
    """
    name = renderer.name
    if not name or isinstance(_RENDERERS.get(name), Renderer):
        raise ValueError(f"cannot register a renderer named {name!r}: " + ("taken" if name else "no name"))
    _RENDERERS[name] = renderer
    return renderer


def unregister(name: str) -> None:
    """Remove the format ``name`` (for tests and plugins that register one for a while)."""
    _RENDERERS.pop(name, None)


def names() -> tuple[str, ...]:
    """The format names, declared and registered, in their order (``table`` first: the default). Imports
    nothing."""
    return tuple(_RENDERERS)


def draws_graph(name: str) -> bool:
    """Whether the format ``name`` draws the autograd graph (its renderer implements :meth:`Renderer.graph`),
    without importing a declared format's module; False for an unknown name."""
    r = _RENDERERS.get(name)
    if isinstance(r, _Declared):
        return r.draws_graph
    return r is not None and type(r).graph is not Renderer.graph


def shows(name: str, kind: str) -> bool:
    """Whether the format ``name`` can show ``kind`` (one of :data:`KINDS`: its renderer implements that method),
    read from a declared format's declaration without importing it; False for an unknown name."""
    r = _RENDERERS.get(name)
    if isinstance(r, _Declared):
        return kind in r.shows
    return r is not None and getattr(type(r), kind) is not getattr(Renderer, kind)


def showing(kind: str) -> tuple[str, ...]:
    """The formats that can show ``kind`` (see :func:`shows`), in their order. Imports nothing."""
    return tuple(n for n in _RENDERERS if shows(n, kind))


def loaded(name: str) -> bool:
    """Whether the format ``name`` is registered (its module imported), not only declared."""
    return isinstance(_RENDERERS.get(name), Renderer)


def get(name: str) -> Renderer:
    """The renderer of the format ``name``, importing its module if it is only declared.

    Raises:
        InputError: no such format (a usage error, exit 2), naming the formats there are.
        RuntimeError: a declared format's module did not register it (a programming error).
    """
    try:
        r = _RENDERERS[name]
    except KeyError:
        raise InputError(f"unknown format {name!r}; the formats are: {', '.join(names())}",
                         type="UsageError") from None
    if isinstance(r, _Declared):
        r.load()
        r = _RENDERERS.get(name)
        if not isinstance(r, Renderer):
            raise RuntimeError(f"the format {name!r} was declared but its module did not register it")
    return r

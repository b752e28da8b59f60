"""Renderers: the only place that formats results. Each format is a module that registers a
:class:`~gradcli.render.registry.Renderer` under its name.

The built-in formats are declared here by name, with what imports the module that registers them, and that
module is imported by the first :func:`get` of one of its names (so that ``gradcli --help`` imports no renderer,
tables never import the JSON encoder, and ``--json`` never imports rich): see
:func:`~gradcli.render.registry.declare`. ``tests/cli/test_startup_imports.py`` checks that each declaration
matches what its module registers.

A new format: a module here that subclasses ``Renderer`` and calls ``register(...)``, and its ``declare`` line
below (or an import of the module, for a format that should always be loaded).
"""

from .registry import (KINDS, EntryFormat, Renderer, declare, draws_graph, get, loaded, names,  # noqa: F401
                       register, showing, shows, unregister)


# Each loader imports a name, not the module: a module that another one holds through lazy() is in sys.modules
# before it runs, and ``from . import table`` would then not run it (nor register its format).
def _table() -> None:
    from .table import TableRenderer  # on first get(): importing registers the format(s)  # noqa: F401


def _json() -> None:
    from .json import JsonRenderer  # on first get(): importing registers the format(s)  # noqa: F401


def _compact() -> None:
    from .compact import CompactRenderer  # on first get(): importing registers the format(s)  # noqa: F401


def _pictures() -> None:
    from .pictures import DotRenderer  # on first get(): importing registers the format(s)  # noqa: F401


# What each shows is declared too (tests/cli/test_formats.py checks it against the renderers), so that --help
# lists, per command, the formats that can show its result without importing them.
declare("table", _table, shows=("grad", "transform", "ops", "batch", "explain", "plot"))  # the default: first
declare("json", _json, draws_graph=True)  # every kind
declare("compact", _compact, shows=("grad", "transform", "batch"))  # one line per result
for _name in ("dot", "svg", "png", "pdf", "mermaid", "tree"):  # the autograd graph (svg/png/pdf: plots too)
    declare(_name, _pictures, draws_graph=True, shows=("grad", "graph") + (("plot",) if _name in ("svg", "png", "pdf")
                                                                            else ()))
del _name

__all__ = ["KINDS", "EntryFormat", "Renderer", "declare", "draws_graph", "get", "loaded", "names", "register",
           "showing", "shows", "unregister"]

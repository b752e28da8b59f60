"""Renderers: the only place that formats results. Each format is a module that registers a
:class:`~gradcli.render.registry.Renderer` under its name; importing this package registers the built-in ones.

A new format: a module here that subclasses ``Renderer`` and calls ``register(...)``, and its import below.
"""

from . import table  # noqa: F401  (registers "table", the default: first)
from . import json  # noqa: F401  (registers "json")
from . import compact  # noqa: F401  (registers "compact": one line per result)
from . import pictures  # noqa: F401  (registers "dot", "svg", "png", "pdf", "mermaid", "tree", "csv")
from .registry import EntryFormat, Renderer, get, names, register, unregister

__all__ = ["EntryFormat", "Renderer", "get", "names", "register", "unregister"]

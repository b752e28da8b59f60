"""Modules loaded on first use: the one way gradcli defers an import of its own modules (or of a heavy library).

``calculator = lazy("gradcli.app.calculator")`` at the top of a module names the dependency where every reader
sees it (and where ``tests/engine/test_layers.py`` checks it against the layers), while the module itself is
executed only when an attribute of it is first read: ``gradcli --help`` and the commands that compute nothing
then start without numpy, the op table, rich or Lark. This is :class:`importlib.util.LazyLoader`, the standard
library's mechanism, applied to one module at a time.
"""

from __future__ import annotations

import importlib.util
import sys
import types


def lazy(name: str) -> types.ModuleType:
    """The module ``name`` (absolute, e.g. ``"gradcli.app.calculator"``), executed on first attribute access.

    An already imported module is returned as it is. The module's parent packages are imported now (they are
    light: gradcli's package ``__init__`` files import nothing heavy).

    Raises:
        ModuleNotFoundError: if there is no module ``name``.
    """
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return module

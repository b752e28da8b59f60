"""Whether ``--symbolic`` can run: SymPy is an optional dependency (``pip install 'gradcli[symbolic]'``), and the
front ends ask before they load :mod:`gradcli.app.symbolic`, which imports it."""

from __future__ import annotations

import importlib.util

from ..engine.errors import InputError


def require_sympy() -> None:
    """Raise a usage error (exit 2) that says how to install SymPy when it is missing.

    Raises:
        InputError: SymPy is not installed.
    """
    if importlib.util.find_spec("sympy") is None:
        raise InputError("--symbolic needs SymPy, which is not installed", type="UsageError",
                         hint="pip install 'gradcli[symbolic]' (or pip install sympy)")

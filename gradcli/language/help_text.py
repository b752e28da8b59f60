"""Python's ``help(obj)`` in programs: the text pydoc writes for NumPy's functions, classes and ufuncs (what a
program reaches as ``np.<name>``), written to the program's output as Python's ``help`` writes it when standard
output is not a terminal (pydoc's plain pager: ``plain(render_doc(obj, 'Help on %s:'))`` and a newline).

Only NumPy's own objects are documented: pydoc reads their docstrings and signatures, nothing else. A string
(``help('modules')``: pydoc would import and search modules), no argument (the interactive help), and every other
value (gradcli's torch functions, whose docstrings are not PyTorch's; a program's own functions) are refused with
a message that says so.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

_NUMPY_WRAPPERS = "gradcli.language.numpy_module"


def _numpy_object(obj):
    """The NumPy object behind ``obj`` (gradcli's wrapper of ``np.<name>``, a NumPy scalar type, a ufunc), or
    None."""
    if isinstance(obj, np.ufunc):
        return obj
    if callable(obj) and getattr(obj, "__module__", None) == _NUMPY_WRAPPERS:
        target = vars(np).get(getattr(obj, "__name__", ""))
        if target is not None and (callable(target) or isinstance(target, type)):
            return target
    if isinstance(obj, type) and issubclass(obj, np.generic):
        return obj
    if type(obj).__module__ == _NUMPY_WRAPPERS and type(obj).__name__ == "ScalarType":  # np.float32 in programs
        return obj.dtype.type
    return None


def make_help(write: Callable[[str], None]):
    """The ``help`` builtin of a run, writing to ``write``."""

    def help(*args):  # noqa: A001 - Python's name
        """``help(obj)``: see the module docstring.

        Raises:
            NotImplementedError: for no argument, a string, or a value that is not one of NumPy's objects.
        """
        if len(args) != 1:
            raise NotImplementedError("help() without an argument (Python's interactive help) is not available in "
                                      "gradcli programs")
        obj = args[0]
        if isinstance(obj, str):
            raise NotImplementedError("help('...') looks names up among Python's installed modules, which gradcli "
                                      "programs cannot reach; pass the object itself")
        target = _numpy_object(obj)
        if target is None:
            raise NotImplementedError(f"help() of {type(obj).__name__} values is not supported by gradcli (it shows "
                                      "NumPy's documentation only)")
        import pydoc  # the standard library's documentation renderer, needed only here

        write(pydoc.plain(pydoc.render_doc(target, "Help on %s:", renderer=pydoc.plaintext)) + "\n")

    return help

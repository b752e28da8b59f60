"""A program's values as text: ``str``, ``repr`` and ``print``, and the methods of Python's ``str`` a program
may call (:data:`STR_METHODS`), each within the limits of :mod:`gradcli.engine.limits` (see :mod:`.safety`).
Tensors print as PyTorch prints them (:mod:`gradcli.engine.printing`).
"""

from __future__ import annotations

import builtins as _py
from typing import Callable

from ..engine import dtypes
from ..engine.tensor import Tensor
from ..engine.printing import format_value
from .safety import admit, admit_text, check_format_widths, materialize
from .namespaces import Device
from .values import type_name


# ------------------------------------------------------------------------------------------ str and repr
def to_str(x="") -> str:
    """``str(x)``: strings as they are, anything else as ``print`` shows it (PyTorch's tensor repr)."""
    if isinstance(x, str):
        return x
    if isinstance(x, (list, tuple, dict, set)):
        admit_text(x, "str()")
    return format_value(x, default_dtype=dtypes.get_default_dtype().np)


def to_repr(x) -> str:
    """``repr(x)``: Python's for strings, numbers and containers of them, PyTorch's tensor repr otherwise (as
    ``print`` shows it)."""
    if isinstance(x, (str, int, float, bool, type(None))):
        return repr(x)
    if type(x).__module__ == "numpy":  # an array or NumPy scalar: NumPy's repr (summarized past 1,000 elements)
        return repr(x)
    if isinstance(x, (list, tuple)) and all(isinstance(v, (str, int, float, bool, type(None))) for v in x):
        admit_text(x, "repr()")
        return repr(x)
    return to_str(x)


def make_print(write: Callable[[str], None]):
    """Python's ``print(*args, sep=" ", end="\\n")`` writing to ``write`` (values formatted as :func:`to_str`)."""
    def print_(*args, sep=" ", end="\n", flush=False):
        parts = [to_str(a) for a in args]
        admit(sum(len(p) for p in parts) + len(args) * len(sep or " "), "print()")
        text = (sep if sep is not None else " ").join(parts)
        write(text + (end if end is not None else "\n"))

    return print_


def _repr(obj) -> str:
    """Python's ``repr`` of what a program holds: a Tensor as PyTorch prints it, strings quoted, containers of
    them as Python writes them (through :func:`to_str`'s rules for tensors)."""
    if isinstance(obj, (str, Device)) or type(obj).__module__ == "numpy":  # NumPy's repr of arrays and scalars
        return _py.repr(obj)
    if isinstance(obj, (list, tuple, dict, set)) or not isinstance(obj, (int, float, bool, type(None))):
        return to_str(obj)
    return _py.repr(obj)


# ------------------------------------------------------------------------------------------ str methods
def _str_join(sep: str):
    def join(iterable):
        items = materialize(iterable, "str.join()")
        admit(sum(len(s) if isinstance(s, str) else 0 for s in items) + len(sep) * len(items),
                           "str.join()")
        return sep.join(items)

    return join


def _str_format(s: str):
    """``str.format``: replacement fields by position or name only (``{0.attr}`` and ``{0[key]}`` would reach
    Python's internals, and are refused), each value formatted as an f-string formats it."""
    import string

    def format(*args, **kwargs):
        out, auto = [], 0
        for literal, field, spec, conv in string.Formatter().parse(s):
            out.append(literal)
            if field is None:
                continue
            if "." in field or "[" in field:
                raise ValueError("gradcli's str.format takes fields by position or name only")
            if field == "":
                value, auto = args[auto], auto + 1
            elif field.isdigit():
                value = args[int(field)]
            else:
                value = kwargs[field]
            if conv == "r":
                value = _repr(value)
            elif conv == "s":
                value = to_str(value)
            if isinstance(spec, str) and "{" in spec:
                raise ValueError("gradcli's str.format does not take nested fields")
            if spec:
                v = value.item() if isinstance(value, Tensor) else value
                if not isinstance(v, (int, float, str, bool)):
                    raise TypeError(f"unsupported format string passed to {type_name(value)}.__format__")
                check_format_widths(spec, "str.format()")
                out.append(_py.format(v, spec))
            else:
                out.append(to_str(value))
            admit(_py.sum(len(p) for p in out), "str.format()")
        return "".join(out)

    return format


def _str_replace(s: str):
    def replace(old, new, count=-1):
        if isinstance(old, str) and isinstance(new, str) and isinstance(count, int):
            hits = len(s) + 1 if old == "" else s.count(old)
            if count >= 0:
                hits = _py.min(hits, count)
            admit(len(s) + hits * (len(new) - len(old)), "str.replace()")
        return s.replace(old, new, count)

    return replace


def _str_pad(s: str, how: str):
    # ljust/rjust/center/zfill within the items limit (the width is the string's length)
    def pad(width, *fill):
        if not isinstance(width, int):
            raise TypeError(f"'{type_name(width)}' object cannot be interpreted as an integer")
        admit(width, f"str.{how}()")
        return {"ljust": s.ljust, "rjust": s.rjust, "center": s.center, "zfill": s.zfill}[how](width, *fill)

    return pad


#: The methods of ``str`` a program may read, one accessor each (``join``, ``replace``, ``format`` and the
#: padding ones build their strings within the ``items`` limit).
STR_METHODS = {"upper": lambda s: s.upper, "lower": lambda s: s.lower, "strip": lambda s: s.strip,
               "split": lambda s: s.split, "join": _str_join, "replace": _str_replace, "format": _str_format,
               "startswith": lambda s: s.startswith, "endswith": lambda s: s.endswith,
               "lstrip": lambda s: s.lstrip, "rstrip": lambda s: s.rstrip, "title": lambda s: s.title,
               "capitalize": lambda s: s.capitalize, "find": lambda s: s.find, "index": lambda s: s.index,
               "count": lambda s: s.count, "isdigit": lambda s: s.isdigit, "isalpha": lambda s: s.isalpha,
               "ljust": lambda s: _str_pad(s, "ljust"), "rjust": lambda s: _str_pad(s, "rjust"),
               "center": lambda s: _str_pad(s, "center"), "zfill": lambda s: _str_pad(s, "zfill"),
               "splitlines": lambda s: s.splitlines, "rsplit": lambda s: s.rsplit}

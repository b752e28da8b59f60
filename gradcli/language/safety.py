"""The checks that stop a program's Python values from exhausting the machine, before Python builds them.

Tensors are bounded by the engine (:mod:`gradcli.engine.limits`: elements, graph nodes); Python's own values are
bounded here, against the same limits: the bits of an integer (``10 ** 10 ** 10``, squaring huge integers), the
items of a list, tuple or string (``[0] * 10 ** 10``, ``s + s`` doubling, ``list(range(n))``) and the width of
a formatted string (``'%9999999d'``, ``f'{x:>9999999}'``). Each raises :class:`~gradcli.engine.errors.LimitError`
(``limits.exceeded``) instead of letting Python try.
"""

from __future__ import annotations

import builtins as _py
import itertools
import operator
import re
import sys

from ..engine import limits
from ..engine.tensor import Tensor

#: The Python sequences whose repetition and concatenation are checked.
SEQUENCES = (str, list, tuple)
_PERCENT_RE = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")


def materialize(iterable, what: str) -> list:
    """The items of ``iterable`` as a list, refusing more than the ``items`` limit before building it (a
    ``range`` or a tensor by its length, an iterator by reading one item past the limit).

    Raises:
        LimitError: for more items than the limit (``what`` names the operation in the message).
        TypeError: for a value that is not iterable (Python's).
    """
    try:
        size = len(iterable)
    except OverflowError:  # len(range(10 ** 30))
        raise limits.exceeded("items", f"{what} would have more than {sys.maxsize:,} items") from None
    except TypeError:
        size = None
    if size is not None:
        limits.check_items(size, what)
        return list(iterable)
    out = list(itertools.islice(iterable, limits.current.items + 1))
    if len(out) > limits.current.items:
        raise limits.exceeded("items", f"{what} would have more than {limits.current.items:,} items")
    return out


def check_python_op(alias: str, left, right) -> None:
    """Refuse, before computing it, a Python operation (an infix operator of the table
    :data:`gradcli.ops.operators.BINARY`, by its alias) whose result would pass the ``int_bits`` or ``items``
    limits: ``10 ** 10 ** 10``, squaring huge integers, ``[0] * 10 ** 10``, ``s + s`` doubling, ``'%9999999d'``.

    Raises:
        LimitError: for a result over a limit.
        ValueError: for a ``*`` width in %-formatting (not supported: its width would not be checked).
    """
    if alias == "pow":
        if type(left) is int and type(right) is int and right > 0 and _py.abs(left) > 1:
            limits.check_int_bits(right * (_py.abs(left).bit_length() - 1) + 1, f"the integer power {left} ** {right}")
    elif alias == "mul":
        if isinstance(left, SEQUENCES) or (isinstance(right, SEQUENCES) and not isinstance(left, Tensor)):
            seq, count = (left, right) if isinstance(left, SEQUENCES) else (right, left)
            try:
                count = operator.index(count)
            except TypeError:
                return
            limits.check_items(count * len(seq), "the repeated sequence")
        elif type(left) is int and type(right) is int:
            limits.check_int_bits(left.bit_length() + right.bit_length(), "the integer product")
    elif alias == "add":
        if isinstance(left, SEQUENCES) and isinstance(right, SEQUENCES):
            limits.check_items(len(left) + len(right), "the concatenation")
    elif alias == "mod" and isinstance(left, str):
        for m in _PERCENT_RE.finditer(left):
            for width in m.groups():
                if width == "*":
                    raise ValueError("gradcli does not support '*' widths in %-formatting; write the width")
            check_format_widths(m.group(0), "the %-format")


def check_format_widths(spec: str, what: str) -> None:
    """Refuse a format whose width or precision would build a string over the ``items`` limit.

    Raises:
        LimitError: for a width or precision over the limit (``what`` names the format in the message).
    """
    for digits in re.findall(r"\d+", spec):
        if len(digits) > 18 or int(digits) > limits.current.items:
            raise limits.exceeded("items", f"{what} {spec!r} would make a string of more than "
                                           f"{limits.current.items:,} characters")

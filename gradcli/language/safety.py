"""The checks that stop a program's Python values from exhausting the machine, before Python builds them.

:func:`admit` is the one gate: every builtin, operator and method of the language that builds a string, list,
tuple, dict, set or integer asks it first, with the size the result would have (a count of items or
characters, or a number of bits), and it refuses a size over the ``items`` or ``int_bits`` limit. The sizes come
from :func:`text_size` (an upper bound of the characters of ``str``/``repr`` of a value, found without building
it), :func:`materialize` (an iterable's items) and the arithmetic of the wrappers below (:func:`sized`, for
Python's ``math``, ``random`` and the methods of lists, dicts and arrays).

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

import numpy as np

from ..engine import limits
from ..engine.tensor import Tensor

#: The Python sequences whose repetition and concatenation are checked.
SEQUENCES = (str, list, tuple)
_PERCENT_RE = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")


def admit(size: int, what: str, limit: str = "items") -> None:
    """The one gate of sizes: refuse a value of ``size`` items or characters (``limit`` "items") or bits
    (``limit`` "int_bits") over the limit, before it is built.

    Raises:
        LimitError: for a size over the limit (``what`` names the operation in the message).
    """
    if limit == "int_bits":
        limits.check_int_bits(size, what)
    else:
        limits.check_items(size, what)


_SCALARS = (bool, float, complex, type(None))


def text_size(value, budget: int | None = None) -> int:
    """An upper bound of the characters of ``str(value)`` or ``repr(value)``, found without building it:
    strings by their length and quotes (10 a character when repr may escape some), integers by their bits,
    containers by their items (recursively, stopping once over ``budget``, default the ``items`` limit, so
    that a huge container costs no more than the limit to measure; a container inside itself counts once, as
    Python writes ``[...]``). Tensors and arrays print summarized beyond 1,000 elements, as PyTorch and NumPy
    do: a fixed 10,000; other values a fixed 100."""
    if budget is None:
        budget = limits.current.items
    stack, total, seen = [value], 0, set()
    while stack and total <= budget:
        v = stack.pop()
        t = type(v)
        if t is str:
            total += (len(v) if v.isprintable() else 10 * len(v)) + 2  # repr's escapes: \U0001f600 at most
        elif t is int:
            total += v.bit_length() * 30103 // 100000 + 2
        elif t in _SCALARS:
            total += 32
        elif t in (list, tuple, set, frozenset, dict):
            if id(v) in seen:  # [...]: Python writes a recursive container once
                total += 5
                continue
            seen.add(id(v))
            total += 2 + 2 * len(v)
            if t is dict:
                total += 2 * len(v)
                stack.extend(v.keys())
                stack.extend(v.values())
            else:
                stack.extend(v)
        elif isinstance(v, Tensor) or t.__module__ == "numpy":
            total += 10_000
        else:
            total += 100
    return total


def admit_text(value, what: str) -> None:
    """Refuse ``str``/``repr``/formatting of ``value`` whose text could pass the ``items`` limit (by
    :func:`text_size`), before it is built.

    Raises:
        LimitError: over the limit.
    """
    size = text_size(value)
    if size > limits.current.items:
        raise limits.exceeded("items", f"{what} would make a string of more than {limits.current.items:,} "
                                       "characters")


def sized(fn, size, what: str, limit: str = "items"):
    """``fn`` behind :func:`admit`: ``size(*args, **kwargs)`` computes the size the result would have (an int;
    None to let ``fn`` answer, e.g. with its TypeError), before ``fn`` is called. For Python's functions a program
    reaches (``math.factorial``, ``random.choices``, ``list.extend``, ...)."""
    def call(*args, **kwargs):
        n = size(*args, **kwargs)
        if n is not None:
            admit(n, what, limit)
        return fn(*args, **kwargs)

    call.__name__ = getattr(fn, "__name__", what)
    call.__doc__ = getattr(fn, "__doc__", None)
    return call


#: The types whose ``len`` is the number of items iterating them gives (so it is checked before they are read).
_SIZED = frozenset({list, tuple, str, dict, set, frozenset, range, type({}.keys()), type({}.values()),
                    type({}.items())})


def materialize(iterable, what: str) -> list:
    """The items of ``iterable`` as a list, refusing more than the ``items`` limit before building it (a
    ``range`` or a tensor by its length, an iterator by reading one item past the limit).

    Raises:
        LimitError: for more items than the limit (``what`` names the operation in the message).
        TypeError: for a value that is not iterable (Python's).
    """
    size = None
    if type(iterable) in _SIZED or isinstance(iterable, (Tensor, np.ndarray)):  # their length is what iterating them gives;
        try:  # a program's object's __len__ is not asked (its iterator may give more: read one past instead)
            size = len(iterable)
        except OverflowError:  # len(range(10 ** 30))
            raise limits.exceeded("items", f"{what} would have more than {sys.maxsize:,} items") from None
        except TypeError:  # a 0-d tensor: iterating it is its error
            size = None
    if size is not None:
        limits.check_items(size, what)
        return list(iterable)
    out = list(itertools.islice(iterable, limits.current.items + 1))
    if len(out) > limits.current.items:
        raise limits.exceeded("items", f"{what} would have more than {limits.current.items:,} items")
    return out


def check_python_op(alias: str, left, right):
    """Refuse, before computing it, a Python operation (an infix operator of the table
    :data:`gradcli.ops.operators.BINARY`, by its alias) whose result would pass the ``int_bits`` or ``items``
    limits: ``10 ** 10 ** 10``, squaring huge integers, ``[0] * 10 ** 10``, ``s + s`` doubling, ``'%9999999d'``.

    Returns None, or the operands to use instead: ``[0] * obj`` with the integer ``obj.__index__()`` answered,
    called once.

    Raises:
        LimitError: for a result over a limit.
        ValueError: for a ``*`` width in %-formatting (not supported: its width would not be checked).
    """
    if isinstance(left, (np.ndarray, np.generic)) or isinstance(right, (np.ndarray, np.generic)):
        check_array_op(alias, left, right)
        return None
    if alias == "pow":
        if type(left) is int and type(right) is int and right > 0 and _py.abs(left) > 1:
            admit(right * (_py.abs(left).bit_length() - 1) + 1, f"the integer power {left} ** {right}", "int_bits")
    elif alias == "mul":
        if isinstance(left, SEQUENCES) or (isinstance(right, SEQUENCES) and not isinstance(left, Tensor)):
            seq, count = (left, right) if isinstance(left, SEQUENCES) else (right, left)
            try:
                count = operator.index(count)
            except TypeError:
                return None
            admit(count * len(seq), "the repeated sequence")
            return (seq, count) if seq is left else (count, seq)  # the count asked once, and used
        elif type(left) is int and type(right) is int:
            admit(left.bit_length() + right.bit_length(), "the integer product", "int_bits")
    elif alias == "add":
        if isinstance(left, SEQUENCES) and isinstance(right, SEQUENCES):
            admit(len(left) + len(right), "the concatenation")
    elif alias == "mod" and isinstance(left, str):
        for m in _PERCENT_RE.finditer(left):
            for width in m.groups():
                if width == "*":
                    raise ValueError("gradcli does not support '*' widths in %-formatting; write the width")
            check_format_widths(m.group(0), "the %-format")
        admit(len(left) + text_size(right), "the %-format")
    return None


def check_format_widths(spec: str, what: str) -> None:
    """Refuse a format whose width or precision would build a string over the ``items`` limit.

    Raises:
        LimitError: for a width or precision over the limit (``what`` names the format in the message).
    """
    for digits in re.findall(r"\d+", spec):
        if len(digits) > 18 or int(digits) > limits.current.items:
            raise limits.exceeded("items", f"{what} {spec!r} would make a string of more than "
                                           f"{limits.current.items:,} characters")


def nominal_shape(data) -> tuple:
    """The shape a (nested) list or tuple of numbers would give as an array, read along first items (a ragged
    list is NumPy's error later): what its conversion is sized by before it is built, since ``[[0] * n] * m``
    holds m references to one list and makes m * n elements.

    Raises:
        ValueError: for lists nested deeper than 64 levels (a list that holds itself).
    """
    shape = []
    while isinstance(data, (list, tuple)):
        shape.append(len(data))
        if len(shape) > 64:  # NumPy's most dimensions (also ends a list that holds itself)
            raise ValueError("the data is nested deeper than an array's 64 dimensions")
        if not data:
            break
        data = data[0]
    return tuple(shape)


def _operand_shape(v) -> tuple:
    if isinstance(v, np.ndarray):
        return v.shape
    if isinstance(v, Tensor):
        return v.data.shape
    return nominal_shape(v) if isinstance(v, (list, tuple)) else ()


def check_array_op(alias: str, left, right) -> None:
    """Refuse an operator on NumPy arrays (``a * b``, ``a @ b``, ``a < b``) whose result would pass the
    ``elements`` limit, before NumPy broadcasts (lists as the arrays they would become).

    Raises:
        LimitError: for a result over the limit.
    """
    ls, rs = _operand_shape(left), _operand_shape(right)
    if alias == "matmul":
        limits.check_matmul(ls, rs)
        return
    try:
        shape = np.broadcast_shapes(ls, rs)
    except ValueError:
        return  # NumPy's own error
    limits.check_numel(shape, f"broadcasting {list(ls)} and {list(rs)}")


def check_array_index(a: np.ndarray, key) -> None:
    """Refuse indexing the array ``a`` with ``key`` whose result would pass the ``elements`` limit: index arrays
    (and lists) broadcast together (``a[i[:, None], j]``), times an upper bound of the dimensions they leave.

    Raises:
        LimitError: for a result over the limit.
    """
    advanced, consumed = [], 0
    for k in key if type(key) is tuple else (key,):
        if isinstance(k, Tensor):
            k = k.data
        if isinstance(k, (list, tuple)):
            advanced.append(nominal_shape(k))
            consumed += 1
        elif isinstance(k, np.ndarray) and k.dtype == np.bool_:
            advanced.append((k.size,))  # a mask selects at most its size
            consumed += max(k.ndim, 1)
        elif isinstance(k, np.ndarray):
            advanced.append(k.shape)
            consumed += 1
        elif k is not None and k is not Ellipsis:
            consumed += 1
    if not advanced:
        return  # a view: no larger than ``a``
    try:
        shape = np.broadcast_shapes(*advanced)
    except ValueError:
        return  # NumPy's own error
    kept = sorted(a.shape, reverse=True)[:max(a.ndim - consumed, 0)]
    limits.check_numel(tuple(shape) + tuple(kept), f"indexing an array of shape {list(a.shape)}")


def check_array_value(value):
    """``value`` as what ``a[key] = value`` stores in a program's NumPy array: a number, an array, a tensor's
    data (PyTorch's error if it requires grad) or a list sized by its nominal shape; anything else is refused.

    Raises:
        LimitError: for a list over the ``elements`` limit.
        TypeError: for a value that is not numbers.
    """
    if isinstance(value, Tensor):
        return value.numpy()
    if isinstance(value, (list, tuple)):
        limits.check_numel(nominal_shape(value), "the assigned list")
        return value
    if isinstance(value, (bool, int, float, np.ndarray, np.generic)):
        return value
    raise TypeError(f"an array holds numbers, not {type(value).__name__}")

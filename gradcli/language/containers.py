"""The methods of Python's built-in containers a program may call: ``list``, ``dict``, ``set`` and ``tuple``
(:data:`LIST_METHODS`, :data:`DICT_METHODS`, :data:`SET_METHODS`, :data:`TUPLE_METHODS`), and the ``str``
methods that :mod:`.strings` does not define (:data:`MORE_STR_METHODS`).

Every public method of those types that computes on the container alone is here (``dir(list)`` and so on, less
``str.encode``, whose bytes the language does not have). Those that can grow a container or build a new one ask
:func:`~.safety.admit` first with the size the result could have; the iterables they take are read with
:func:`~.safety.materialize`, within the ``items`` limit. A ``key`` function of ``list.sort`` may be a program's
function (run by the program's interpreter).
"""

from __future__ import annotations

from .safety import admit, materialize, sized
from .strings import _str_format


def _items(iterables, what: str) -> list:
    """The items of each iterable (sets and frozensets as they are), each within the ``items`` limit."""
    return [it if isinstance(it, (set, frozenset, dict)) else materialize(it, what) for it in iterables]


# ------------------------------------------------------------------------------------------ list
def _list_extend(v: list):
    def extend(iterable):
        items = materialize(iterable, "list.extend()")
        admit(len(v) + len(items), "list.extend()")
        v.extend(items)
    return extend


def _list_sort(v: list):
    def sort(*, key=None, reverse=False):
        v.sort(key=key, reverse=reverse)
    return sort


LIST_METHODS = {
    "append": lambda v: sized(v.append, lambda x: len(v) + 1, "list.append()"), "pop": lambda v: v.pop,
    "index": lambda v: v.index, "count": lambda v: v.count, "extend": _list_extend,
    "insert": lambda v: sized(v.insert, lambda *a: len(v) + 1, "list.insert()"), "remove": lambda v: v.remove,
    "reverse": lambda v: v.reverse, "clear": lambda v: v.clear, "copy": lambda v: v.copy, "sort": _list_sort}


# ------------------------------------------------------------------------------------------ dict
def _dict_update(d: dict):
    def update(*args, **kwargs):
        if len(args) > 1:
            raise TypeError(f"update expected at most 1 argument, got {len(args)}")
        source = args[0] if args else ()
        items = list(source.items()) if isinstance(source, dict) else materialize(source, "dict.update()")
        admit(len(d) + len(items) + len(kwargs), "dict.update()")
        d.update(items, **kwargs)
    return update


def _fromkeys(d: dict):
    def fromkeys(iterable, value=None):
        keys = materialize(iterable, "dict.fromkeys()")
        return type(d).fromkeys(keys, value)
    return fromkeys


DICT_METHODS = {
    "items": lambda d: d.items, "keys": lambda d: d.keys, "values": lambda d: d.values, "get": lambda d: d.get,
    "pop": lambda d: d.pop, "setdefault": lambda d: sized(d.setdefault, lambda *a: len(d) + 1, "dict.setdefault()"),
    "update": _dict_update, "copy": lambda d: d.copy, "clear": lambda d: d.clear, "popitem": lambda d: d.popitem,
    "fromkeys": _fromkeys}


# ------------------------------------------------------------------------------------------ set
_SET_FUNCTIONS = {f.__name__: f for f in (
    set.union, set.symmetric_difference, set.intersection, set.difference, set.update,
    set.symmetric_difference_update, set.intersection_update, set.difference_update, set.issubset,
    set.issuperset, set.isdisjoint)}

def _set_building(s: set, name: str, grows: bool):
    """``s.union(*others)`` and the other methods that build a new set (``grows``: its size may reach
    ``len(s)`` plus the others' sizes; otherwise it is at most ``len(s)``)."""
    method = _SET_FUNCTIONS[name]

    def build(*others):
        items = _items(others, f"set.{name}()")
        if grows:
            admit(len(s) + sum(len(i) for i in items), f"set.{name}()")
        return method(s, *items)

    build.__name__ = name
    return build


def _set_update(s: set, name: str, grows: bool):
    """``s.update(*others)`` and the other in-place methods (``grows``: as :func:`_set_building`)."""
    method = _SET_FUNCTIONS[name]

    def update(*others):
        items = _items(others, f"set.{name}()")
        if grows:
            admit(len(s) + sum(len(i) for i in items), f"set.{name}()")
        method(s, *items)

    update.__name__ = name
    return update


def _set_compare(s: set, name: str):
    method = _SET_FUNCTIONS[name]

    def compare(other):
        return method(s, _items((other,), f"set.{name}()")[0])

    compare.__name__ = name
    return compare


SET_METHODS = {
    "add": lambda s: sized(s.add, lambda x: len(s) + 1, "set.add()"), "discard": lambda s: s.discard,
    "remove": lambda s: s.remove, "pop": lambda s: s.pop, "clear": lambda s: s.clear, "copy": lambda s: s.copy,
    "union": lambda s: _set_building(s, "union", True),
    "symmetric_difference": lambda s: _set_building(s, "symmetric_difference", True),
    "intersection": lambda s: _set_building(s, "intersection", False),
    "difference": lambda s: _set_building(s, "difference", False),
    "update": lambda s: _set_update(s, "update", True),
    "symmetric_difference_update": lambda s: _set_update(s, "symmetric_difference_update", True),
    "intersection_update": lambda s: _set_update(s, "intersection_update", False),
    "difference_update": lambda s: _set_update(s, "difference_update", False),
    "issubset": lambda s: _set_compare(s, "issubset"), "issuperset": lambda s: _set_compare(s, "issuperset"),
    "isdisjoint": lambda s: _set_compare(s, "isdisjoint")}

TUPLE_METHODS = {"count": lambda t: t.count, "index": lambda t: t.index}


# ------------------------------------------------------------------------------------------ str
def _expandtabs(s: str):
    def expandtabs(tabsize=8):
        if isinstance(tabsize, int):
            admit(len(s) + s.count("\t") * max(tabsize, 0), "str.expandtabs()")
        return s.expandtabs(tabsize)
    return expandtabs


def _translate(s: str):
    def translate(table):
        if isinstance(table, dict):
            widest = max((len(v) for v in table.values() if isinstance(v, str)), default=1)
            admit(len(s) * max(widest, 1), "str.translate()")
        return s.translate(table)
    return translate


def _maketrans(s: str):
    def maketrans(*args):
        if args and isinstance(args[0], dict):
            admit(len(args[0]), "str.maketrans()")
        return str.maketrans(*args)
    return maketrans


def _format_map(s: str):
    def format_map(mapping):
        if not isinstance(mapping, dict):
            raise TypeError("gradcli's str.format_map takes a dict")
        return _str_format(s)(**{str(k): v for k, v in mapping.items()})
    return format_map


def _grown(s: str, name: str):
    """The case mappings, whose result may be up to three times longer (``'ß'.upper()`` is ``'SS'``, ``'ŉ'`` three
    characters), within the ``items`` limit."""
    method = {"casefold": str.casefold, "swapcase": str.swapcase}[name]

    def case(*args):
        admit(3 * len(s) if any(ord(c) > 127 for c in s) else len(s), f"str.{name}()")
        return method(s, *args)

    case.__name__ = name
    return case


MORE_STR_METHODS = {
    "casefold": lambda s: _grown(s, "casefold"), "swapcase": lambda s: _grown(s, "swapcase"),
    "expandtabs": _expandtabs, "format_map": _format_map, "maketrans": _maketrans, "translate": _translate,
    "partition": lambda s: s.partition, "rpartition": lambda s: s.rpartition,
    "removeprefix": lambda s: s.removeprefix, "removesuffix": lambda s: s.removesuffix,
    "rfind": lambda s: s.rfind, "rindex": lambda s: s.rindex, "isalnum": lambda s: s.isalnum,
    "isascii": lambda s: s.isascii, "isdecimal": lambda s: s.isdecimal, "isidentifier": lambda s: s.isidentifier,
    "islower": lambda s: s.islower, "isnumeric": lambda s: s.isnumeric, "isprintable": lambda s: s.isprintable,
    "isspace": lambda s: s.isspace, "istitle": lambda s: s.istitle, "isupper": lambda s: s.isupper}

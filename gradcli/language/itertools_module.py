"""Python's ``itertools`` for programs (``import itertools``, ``from itertools import product``), within the limits.

Every function is Python's own, behind the language's one gate of sizes (:func:`.safety.admit`):

* what a function reads whole before it yields (the pools of ``product``, ``permutations``, ``combinations``,
  ``combinations_with_replacement``) is read with :func:`.safety.materialize`, within the ``items`` limit;
* the length of each tuple it makes (``repeat=``, ``r=``, ``tee``'s ``n``) is admitted before it is made;
* each iterator it returns counts what it gives: the items, or, for iterators of tuples, the items of the
  tuples (a program that keeps them all holds that many), and stops with the ``items`` limit's LimitError once
  that passes the limit. So an endless ``count()``, ``repeat()`` or ``cycle()`` read by a builtin that loops in
  C (``list``, ``sum``, ``any``, ``x in it``, ``dict(zip(...))``) ends at the limit instead of running forever,
  and ``list(product(range(10 ** 6), repeat=10))`` ends there before it fills the memory;
* ``accumulate``'s default ``+`` goes through the operator checks of :func:`.safety.check_python_op` (summing
  lists or strings would double them).

A program's loop over one of them runs statements, each counted against the ``steps`` limit (``for i in
count(): ...`` ends there), and the ``time`` limit's process guard bounds the wall-clock time of the rest.
The callables a program passes (``starmap``'s function, ``takewhile``'s predicate, ``groupby``'s key) are the
language's values: a program function runs in the interpreter, with its limits.
"""

from __future__ import annotations

import itertools as _it
import operator

from ..engine import limits
from .safety import admit, check_python_op, materialize
from .values import Namespace


class BoundedIterator:
    """One iterator of ``itertools`` as a program holds it: Python's iterator, counted against the ``items``
    limit (``weight`` items a step: 1, or the length of the tuples it gives). Prints as Python's
    (``<itertools.count object at 0x...>``)."""

    __slots__ = ("_source", "_what", "_weight", "_given")

    def __init__(self, source, what: str, weight: int = 1):
        self._source = source
        self._what = what
        self._weight = max(int(weight), 1)
        self._given = 0

    def __iter__(self):
        return self

    def __next__(self):
        item = next(self._source)
        self._given += self._weight
        if self._given > limits.current.items:
            raise limits.exceeded("items", f"itertools.{self._what}() would give more than "
                                           f"{limits.current.items:,} items")
        return item

    def __repr__(self) -> str:
        if self._what in ("count", "repeat"):  # Python writes these as calls: count(5, 2), repeat('x', 3)
            return repr(self._source)
        return f"<itertools.{self._what} object at {id(self):#x}>"


def _index(v, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer")
    if v < 0:
        raise ValueError(f"{name} argument cannot be negative")
    return v


def _pools(iterables, what: str) -> list:
    """The pools of a combinatoric function, each read whole within the ``items`` limit."""
    admit(len(iterables), f"itertools.{what}()")
    return [tuple(materialize(p, f"itertools.{what}()")) for p in iterables]


# ----------------------------------------------------------------------------------------- infinite

def count(start=0, step=1):
    """``itertools.count(start=0, step=1)``."""
    return BoundedIterator(_it.count(start, step), "count")


def repeat(object, times=None):
    """``itertools.repeat(object[, times])``."""
    source = _it.repeat(object) if times is None else _it.repeat(object, times)
    return BoundedIterator(source, "repeat")


def cycle(iterable):
    """``itertools.cycle(iterable)`` (its copy of the items is as long as ``iterable``, itself bounded)."""
    return BoundedIterator(_it.cycle(iter(iterable)), "cycle")


# ------------------------------------------------------------------------------------- combinatoric

def product(*iterables, repeat=1):
    """``itertools.product(*iterables, repeat=1)``."""
    repeat = _index(repeat, "repeat")
    pools = _pools(iterables, "product")
    width = len(pools) * repeat
    admit(width, "itertools.product()")
    return BoundedIterator(_it.product(*pools, repeat=repeat), "product", width)


def permutations(iterable, r=None):
    """``itertools.permutations(iterable, r=None)``."""
    (pool,) = _pools((iterable,), "permutations")
    r = len(pool) if r is None else _index(r, "r")
    admit(r, "itertools.permutations()")
    return BoundedIterator(_it.permutations(pool, r), "permutations", r)


def combinations(iterable, r):
    """``itertools.combinations(iterable, r)``."""
    (pool,) = _pools((iterable,), "combinations")
    r = _index(r, "r")
    admit(r, "itertools.combinations()")
    return BoundedIterator(_it.combinations(pool, r), "combinations", r)


def combinations_with_replacement(iterable, r):
    """``itertools.combinations_with_replacement(iterable, r)``."""
    (pool,) = _pools((iterable,), "combinations_with_replacement")
    r = _index(r, "r")
    admit(r, "itertools.combinations_with_replacement()")
    return BoundedIterator(_it.combinations_with_replacement(pool, r), "combinations_with_replacement", r)


# ------------------------------------------------------------------------------------------- others

def chain(*iterables):
    """``itertools.chain(*iterables)``."""
    return BoundedIterator(_it.chain(*iterables), "chain")


def chain_from_iterable(iterable):
    """``itertools.chain.from_iterable(iterable)``."""
    return BoundedIterator(_it.chain.from_iterable(iterable), "chain")


def islice(iterable, *args):
    """``itertools.islice(iterable, stop)`` or ``islice(iterable, start, stop[, step])``."""
    return BoundedIterator(_it.islice(iterable, *args), "islice")


def _add(total, element):
    """``total + element`` as the language's ``+`` computes it (within the ``items`` and ``int_bits`` limits)."""
    swapped = check_python_op("add", total, element)
    return operator.add(*swapped) if swapped else total + element


def accumulate(iterable, func=None, *, initial=None):
    """``itertools.accumulate(iterable[, func], *, initial=None)``; the default ``func`` is the language's
    ``+``."""
    return BoundedIterator(_it.accumulate(iterable, _add if func is None else func, initial=initial), "accumulate")


def zip_longest(*iterables, fillvalue=None):
    """``itertools.zip_longest(*iterables, fillvalue=None)``."""
    admit(len(iterables), "itertools.zip_longest()")
    return BoundedIterator(_it.zip_longest(*iterables, fillvalue=fillvalue), "zip_longest", len(iterables))


def groupby(iterable, key=None):
    """``itertools.groupby(iterable, key=None)``: ``(key, group)`` pairs, each group an iterator of its own."""
    source = ((k, BoundedIterator(g, "_grouper")) for k, g in _it.groupby(iterable, key))
    return BoundedIterator(source, "groupby", 2)


def starmap(function, iterable):
    """``itertools.starmap(function, iterable)``."""
    return BoundedIterator(_it.starmap(function, iterable), "starmap")


def takewhile(predicate, iterable):
    """``itertools.takewhile(predicate, iterable)``."""
    return BoundedIterator(_it.takewhile(predicate, iterable), "takewhile")


def dropwhile(predicate, iterable):
    """``itertools.dropwhile(predicate, iterable)``."""
    return BoundedIterator(_it.dropwhile(predicate, iterable), "dropwhile")


def pairwise(iterable):
    """``itertools.pairwise(iterable)``."""
    return BoundedIterator(_it.pairwise(iterable), "pairwise", 2)


def tee(iterable, n=2):
    """``itertools.tee(iterable, n=2)``: ``n`` iterators (each bounded; Python keeps the items one has read and
    another not yet, at most the limit)."""
    n = _index(n, "n")
    admit(n, "itertools.tee()")
    return tuple(BoundedIterator(t, "_tee") for t in _it.tee(iterable, n))


def compress(data, selectors):
    """``itertools.compress(data, selectors)``."""
    return BoundedIterator(_it.compress(data, selectors), "compress")


def filterfalse(predicate, iterable):
    """``itertools.filterfalse(predicate, iterable)``."""
    return BoundedIterator(_it.filterfalse(predicate, iterable), "filterfalse")


#: The attributes of its functions a program reads (:data:`.attributes.TYPE_ATTRS`, installed by
#: :mod:`.builtins`): ``itertools.chain.from_iterable``.
FUNCTION_ATTRS = {chain: {"from_iterable": chain_from_iterable}}

#: The module's names, as Python's.
NAMES = {f.__name__: f for f in (count, repeat, cycle, product, permutations, combinations,
                                 combinations_with_replacement, chain, islice, accumulate, zip_longest, groupby,
                                 starmap, takewhile, dropwhile, pairwise, tee, compress, filterfalse)}


def itertools_module() -> Namespace:
    """Python's ``itertools`` for programs: :data:`NAMES`."""
    return Namespace("itertools", dict(NAMES))

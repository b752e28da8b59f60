"""PyTorch's version counter: how many times a tensor's memory was modified in place.

Each in-place write (``t += 1``, ``t.zero_()``, ``t[0] = 5``, see :mod:`gradcli.ops.shape.inplace`) counts as a
modification of the buffer it wrote: the root ``ndarray.base`` of the tensor's data, shared by every view of
it, as PyTorch's counter is shared by a storage's views. ``Tensor._version`` reads the count, and the backward
engine checks that no value a graph node saved was modified after the node was made (PyTorch's "one of the
variables needed for gradient computation has been modified by an inplace operation").

The registry is empty until the first in-place write, so programs without one pay nothing: the engine only
checks saved values while :data:`modified` is not empty.
"""

from __future__ import annotations

import array
import weakref

import numpy as np


class Record:
    """The modifications of one buffer.

    Attributes:
        ref: a weak reference to the buffer (the registry must not keep arrays alive).
        positions: the autograd node sequence number current when each modification was made (nodes with a
            smaller ``seq`` were made before it); 8 bytes each, so a training loop's updates cost little.
        recorded: for the modifications that were recorded, (position, name, geometry) of the node that became
            the grad_fn of the tensor whose memory layout is ``geometry`` (see :func:`geometry`; names, not nodes:
            the registry must not keep graphs alive). Other views of the buffer got PyTorch's AsStrided history.
    """

    __slots__ = ("ref", "positions", "recorded")

    def __init__(self, root: np.ndarray):
        self.ref = weakref.ref(root)
        self.positions = array.array("q")
        self.recorded = []


#: id(root buffer) -> :class:`Record`; empty until the first in-place write.
modified: dict = {}
_prune_at = 64


def root(a: np.ndarray) -> np.ndarray:
    """The array that owns ``a``'s memory (following ``ndarray.base``), shared by all views of it."""
    b = a.base
    while type(b) is np.ndarray:
        a, b = b, b.base
    return a


def record(a: np.ndarray, create: bool = False) -> Record | None:
    """The :class:`Record` of ``a``'s buffer: None if it was never modified (unless ``create``)."""
    r = root(a)
    rec = modified.get(id(r))
    if rec is not None and rec.ref() is not r:  # an entry of a dead buffer whose id was reused
        del modified[id(r)]
        rec = None
    if rec is None and create:
        global _prune_at
        if len(modified) >= _prune_at:
            for k in [k for k, x in modified.items() if x.ref() is None]:
                del modified[k]
            _prune_at = max(64, 2 * len(modified))
        rec = modified[id(r)] = Record(r)
    return rec


def geometry(a: np.ndarray) -> tuple:
    """Where ``a``'s elements are in memory: (data address, shape, strides)."""
    return a.__array_interface__["data"][0], a.shape, a.strides


def bump(a: np.ndarray, position: int, name: str | None = None, owner: np.ndarray | None = None) -> None:
    """Count one in-place modification of ``a``'s buffer, made when the node sequence counter was at
    ``position``; ``name`` is PyTorch's short name of the new grad_fn, when it was recorded, of the tensor whose
    array is ``owner`` (``a`` when not given)."""
    rec = record(a, create=True)
    rec.positions.append(position)
    if name is not None:
        rec.recorded.append((position, name, geometry(a if owner is None else owner)))


def version(a: np.ndarray) -> int:
    """How many times ``a``'s buffer was modified in place (PyTorch's ``Tensor._version``)."""
    if not modified:
        return 0
    rec = record(a)
    return 0 if rec is None else len(rec.positions)

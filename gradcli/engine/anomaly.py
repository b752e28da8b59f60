"""Anomaly detection: name the op whose backward produced NaN or infinity, and where the program called it.

Like ``torch.autograd.detect_anomaly``: while it is on, the engine checks the gradients every graph node's
backward returns, and the first one holding a non-finite value stops backward with PyTorch's message
(``Function 'DivBackward0' returned nan values in its 0th output.``). PyTorch then prints the traceback of the
forward call that created the node; gradcli's interpreter instead records, for every node a program creates,
the position of the expression that created it, and the error points there (``gradcli grad --anomaly``).
Unlike PyTorch (NaN only), infinities are reported too.

Anomaly mode belongs to the run context (:mod:`gradcli.engine.context`: ``RunContext(anomaly=True)``, or
:class:`detect_anomaly` inside one), which also holds the positions; the check itself is the engine's
(:mod:`gradcli.engine.autograd`). When off, the engine pays one ``is None`` test per backward and the interpreter
nothing.
"""

from __future__ import annotations

import weakref

from . import autograd
from .context import state


def enabled() -> bool:
    """Whether anomaly detection is on in the active run context."""
    return state.anomaly is not None


class detect_anomaly:
    """Context manager that turns anomaly detection on in the active run context, and restores the previous
    mode (and the positions recorded before) at the end of the block (torch.autograd.detect_anomaly)."""

    def __enter__(self):
        self._prev = state.anomaly
        if self._prev is None:
            state.anomaly = weakref.WeakKeyDictionary()
        return None

    def __exit__(self, *exc) -> bool:
        state.anomaly = self._prev
        return False


def mark() -> int:
    """A sequence number below every node created from now on (for :func:`tag`)."""
    return autograd.next_sequence()


def tag(node, since: int, where: dict) -> None:
    """Record ``where`` (dict(line=, column=, source=, filename=) of an expression) for ``node`` and every node
    under it created after ``since`` that has no position yet (the nodes an expression created; nested
    expressions tagged theirs first). Does nothing when anomaly detection is off."""
    positions = state.anomaly
    if positions is None:
        return
    stack = [node]
    while stack:
        n = stack.pop()
        if n.seq <= since or n in positions:
            continue
        positions[n] = where
        for e in n.edges:
            if type(e) is autograd.Node:
                stack.append(e)
            elif type(e) is autograd.OutputEdge:  # an output of a node with several
                stack.append(e.node)


def position(node) -> dict | None:
    """Where the program created ``node`` (recorded in anomaly mode), or None."""
    positions = state.anomaly
    return None if positions is None else positions.get(node)

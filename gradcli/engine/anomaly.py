"""Anomaly detection: name the op whose backward produced NaN or infinity, and where the program called it.

Like ``torch.autograd.detect_anomaly``: while it is on, the engine checks the gradients every graph node's
backward returns, and the first one holding a non-finite value stops backward with PyTorch's message
(``Function 'DivBackward0' returned nan values in its 0th output.``). PyTorch then prints the traceback of the
forward call that created the node; gradcli's interpreter instead records, for every node a program creates,
the position of the expression that created it, and the error points there (``gradcli grad --anomaly``).
Unlike PyTorch (NaN only), infinities are reported too.

Anomaly mode belongs to the run context (:mod:`gradcli.engine.context`: ``RunContext(anomaly=True)``, or
:class:`detect_anomaly` inside one), which also holds the positions; the check (:func:`check_gradients`) is made by
the engine (:mod:`gradcli.engine.autograd`) after each node's backward. When off, the engine pays one
``is None`` test per backward and the interpreter nothing.
"""

from __future__ import annotations

import weakref

import numpy as np

from . import graph
from .context import state
from .errors import EvalError
from .tensor import Tensor


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
    return graph.next_sequence()


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
            if type(e) is graph.Node:
                stack.append(e)
            elif type(e) is graph.OutputEdge:  # an output of a node with several
                stack.append(e.node)


def position(node) -> dict | None:
    """Where the program created ``node`` (recorded in anomaly mode), or None."""
    positions = state.anomaly
    return None if positions is None else positions.get(node)


def _nonfinite(g) -> str | None:
    """The kind of non-finite value the gradient ``g`` (an array or a Tensor) holds: "nan" (checked first),
    "inf", or None."""
    a = np.asarray(g.data if type(g) is Tensor else g)
    if a.dtype.kind not in "fc" or a.size == 0:
        return None
    if np.isnan(a).any():
        return "nan"
    if np.isinf(a).any():
        return "inf"
    return None


def check_gradients(node, grads, positions) -> None:
    """Anomaly mode's check of a node's backward (torch.autograd.detect_anomaly): raise if a gradient it
    returned for an input that requires grad holds NaN or infinity (PyTorch checks NaN only).

    Args:
        positions: the active context's anomaly positions: node → where the program created it
            (:func:`gradcli.engine.anomaly.tag`).

    Raises:
        EvalError: RuntimeError ``Function 'XBackward0' returned nan values in its 0th output.`` positioned at
            the expression that created the node (if known), with a hint naming it.
    """
    for i, (edge, g) in enumerate(zip(node.edges, grads)):
        if g is None or edge is None:  # a gradient nobody receives (an input that does not require grad)
            continue
        kind = _nonfinite(g)
        if kind is None:
            continue
        err = EvalError(f"Function '{graph.torch_name(node)}' returned {kind} values in its {i}th output.",
                        type="RuntimeError")
        where = positions.get(node)
        if where is not None:
            err.with_position(**where)
            err.hint = (f"anomaly mode: the backward of {node.name()} (created by the expression marked above) "
                        f"is the first to produce {'NaN' if kind == 'nan' else 'infinity'}")
        else:
            err.hint = f"anomaly mode: the backward of {node.name()} is the first to produce non-finite values"
        raise err

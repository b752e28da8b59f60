"""Anomaly detection: name the op whose backward produced NaN or infinity, and where the program called it.

Like ``torch.autograd.detect_anomaly``: while it is on, the engine checks the gradients every graph node's
backward returns, and the first one holding a non-finite value stops backward with PyTorch's message
(``Function 'DivBackward0' returned nan values in its 0th output.``). PyTorch then prints the traceback of the
forward call that created the node; gradcli's interpreter instead records, for every node a program creates,
the position of the expression that created it, and the error points there (``gradcli grad --anomaly``).
Unlike PyTorch (NaN only), infinities are reported too.

When off, the engine pays one ``is None`` test per node and the interpreter nothing.
"""

from __future__ import annotations

import weakref

import numpy as np

from . import autograd
from .errors import EvalError

# Node -> dict(line=, column=, source=, filename=) of the expression that created it.
_positions: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def enabled() -> bool:
    """Whether anomaly detection is on."""
    return autograd.anomaly_hook is not None


class detect_anomaly:
    """Context manager that turns anomaly detection on (torch.autograd.detect_anomaly)."""

    def __enter__(self):
        self._prev = autograd.anomaly_hook
        autograd.anomaly_hook = check_node
        return None

    def __exit__(self, *exc) -> bool:
        autograd.anomaly_hook = self._prev
        if self._prev is None:
            _positions.clear()
        return False


def mark() -> int:
    """A sequence number below every node created from now on (for :func:`tag`)."""
    return next(autograd._sequence)


def tag(node, since: int, where: dict) -> None:
    """Record ``where`` for ``node`` and every node under it created after ``since`` that has no position yet
    (the nodes an expression created; nested expressions tagged theirs first)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.seq <= since or n in _positions:
            continue
        _positions[n] = where
        for e in n.edges:
            if type(e) is autograd.Node:
                stack.append(e)
            elif type(e) is autograd.OutputEdge:  # an output of a node with several
                stack.append(e.node)


def position(node) -> dict | None:
    """Where the program created ``node``, or None."""
    return _positions.get(node)


def _kind(g) -> str | None:
    data = g.data if hasattr(g, "grad_fn") else g
    a = np.asarray(data)
    if a.dtype.kind not in "fc" or a.size == 0:
        return None
    if np.isnan(a).any():
        return "nan"
    if np.isinf(a).any():
        return "inf"
    return None


def check_node(node, grads) -> None:
    """The engine's hook: raise if a gradient ``node``'s backward returned for an input that requires grad holds
    NaN or infinity.

    Raises:
        EvalError: RuntimeError ``Function 'XBackward0' returned nan values in its 0th output.`` positioned at
            the expression that created the node (if known), with a hint naming it.
    """
    for i, (edge, g) in enumerate(zip(node.edges, grads)):
        if g is None or edge is None:  # a gradient nobody receives (an input that does not require grad)
            continue
        kind = _kind(g)
        if kind is None:
            continue
        err = EvalError(f"Function '{autograd.torch_name(node)}' returned {kind} values in its {i}th output.",
                        type="RuntimeError")
        where = _positions.get(node)
        if where is not None:
            err.with_position(**where)
            err.hint = (f"anomaly mode: the backward of {node.name()} (created by the expression marked above) "
                        f"is the first to produce {'NaN' if kind == 'nan' else 'infinity'}")
        else:
            err.hint = f"anomaly mode: the backward of {node.name()} is the first to produce non-finite values"
        raise err

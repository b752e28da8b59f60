"""The node budget of a program run: the ``graph_nodes`` limit (:mod:`gradcli.engine.limits`).

The interpreter starts the budget when a program run begins and stops it at the end; in between, every graph
node (:class:`gradcli.engine.graph.Node`) compares its sequence number with the run context's ``graph_stop``
and calls :func:`_graph_exceeded` when it reaches it. Outside program runs the engine is not limited.
"""

from __future__ import annotations

from . import limits as _limits
from .context import state as _state


def start_node_budget(nodes: int) -> None:
    """Start counting the graph nodes of a program run in the active run context: the node that would be
    number ``nodes + 1`` raises the ``graph_nodes`` LimitError (``nodes`` is ``limits.current.graph_nodes``,
    ``limits.UNLIMITED`` for no limit)."""
    base = _state.graph_base = next(_state.sequence)
    _state.graph_stop = base + nodes if nodes < _limits.UNLIMITED else _limits.UNLIMITED


def stop_node_budget() -> None:
    """Stop counting graph nodes (outside program runs the engine is not limited)."""
    _state.graph_stop = _limits.UNLIMITED


def _graph_exceeded(seq: int):
    """Raise the error for a graph that grew past the node budget (a node's ``seq`` reached
    ``graph_stop``).

    Raises:
        LimitError: always (once: the budget is lifted, as the run ends with this error).
    """
    _state.graph_stop = _limits.UNLIMITED
    raise _limits.exceeded("graph_nodes",
                           f"the program recorded more than {seq - _state.graph_base:,} autograd graph nodes")


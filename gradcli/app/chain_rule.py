"""The chain rule, node by node, with numbers (``gradcli grad --explain``).

For each node of the output's graph in backward order (highest sequence number first, as PyTorch's engine
runs them): its op, its local derivative as a formula (:mod:`gradcli.ops.core.formulas`), the gradient that came in
(recorded by :mod:`gradcli.app.recording` during the last backward call, summed over the node's consumers), and
what its backward sent to each input, summed to that input's shape (broadcasting undone) as the engine does.
The gradients sent are those of the node's own derivative rule, run once more on the gradient that came in
(the last backward call keeps the saved values for it), so the numbers are the engine's.
"""

from __future__ import annotations

import numpy as np

from ..engine.autograd import sum_to
from ..engine.graph import MultiNode, Node, OutputEdge
from ..ops.core.formulas import formula
from .recording import Recorder, graph_nodes
from .result import Explanation, ExplainStep, Sent
from ..engine.tensor import Tensor


def _fit(g, shape: tuple, dtype) -> np.ndarray:
    # what the engine does to a gradient before it reaches an input: undo broadcasting, cast to its dtype
    g = np.asarray(g)
    if g.shape != tuple(shape):
        g = sum_to(g, tuple(shape))
        if g.shape != tuple(shape):
            g = np.broadcast_to(g, tuple(shape))
    return np.array(g, dtype=dtype)


def _target(e, ids: dict):
    """(graph id, shape, dtype) of what an edge points to, or None for an input that needs no gradient."""
    if e is None:
        return None
    if type(e) is OutputEdge:
        return ids.get(e.node), e.out_shape, e.out_dtype
    if isinstance(e, Node):
        return ids.get(e), e.out_shape, e.out_dtype
    return ids.get(id(e)), e.data.shape, e.data.dtype


def _input_names(node, n: int) -> list:
    names = list(getattr(node.op, "input_names", ()) or ())
    if len(names) == n:
        return names
    base = names[0] if len(names) == 1 else "input"
    return [f"{base}[{i}]" for i in range(n)]


def _sent(node, grad_in):
    """The gradients ``node``'s rule returns for ``grad_in`` (one per edge, None where it gives none)."""
    if type(node) is MultiNode:
        filled = tuple(np.zeros(o.out_shape, dtype=o.out_dtype) if g is None else g
                       for g, o in zip(grad_in, node.outputs))
        return Node.apply(node, filled, False)  # not MultiNode.apply: it would fill retained gradients again
    return node.apply(grad_in, False)


def explain(output: Tensor, recorder: Recorder, ids: dict, named: list) -> Explanation:
    """The :class:`~gradcli.app.result.Explanation` of the last backward call of ``output``.

    Args:
        output: the program's output, after backward with ``retain_graph=True``.
        recorder: the run's recorder (``per_call``: it holds the last call's gradients).
        ids: graph node → graph id, leaf ``id(tensor)`` → its name (from
            :func:`gradcli.app.calculator.build_graph`).
        named: ``(name, tensor, kind)`` of the named leaves.

    Raises:
        RuntimeError: a rule fails as it did in backward (not expected: backward ran it already).
    """
    seed = recorder.grad(output.grad_fn) if output.grad_fn is not None else None
    if type(output.grad_fn) is MultiNode and seed is not None:
        seed = seed[getattr(output, "_output_nr", 0)]
    steps = []
    received = {}  # graph id of a leaf -> the sum of what it received
    for node in graph_nodes(output):
        grad_in = recorder.grad(node)
        step = ExplainStep(id=ids.get(node, "?"), name=node.name(), var=recorder.name(node), formula=formula(node),
                           value=recorder.value(node), grad_in=grad_in)
        steps.append(step)
        arrived = grad_in is not None and (type(node) is not MultiNode or any(g is not None for g in grad_in))
        if not arrived:
            continue
        grads = _sent(node, grad_in)
        for e, g, input_name in zip(node.edges, grads, _input_names(node, len(node.edges))):
            target = _target(e, ids)
            if target is None:
                step.sent.append(Sent(to=None, input=input_name, grad=None))
                continue
            tid, shape, dtype = target
            g = None if g is None else _fit(g.data if isinstance(g, Tensor) else g, shape, dtype)
            step.sent.append(Sent(to=tid, input=input_name, grad=g))
            if g is not None and not isinstance(e, (Node, OutputEdge)):
                received[tid] = g if tid not in received else received[tid] + g
    leaves = {name: received.get(name) for name, t, _ in named if t.requires_grad}
    return Explanation(seed=seed, steps=steps, leaves=leaves)

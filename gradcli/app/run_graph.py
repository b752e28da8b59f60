"""``gradcli run --graph FORMAT``: the graph of the last backward call a program made, drawn after it ran.

The program runs as ``gradcli run`` runs it (:func:`gradcli.app.run_program.run_program`); a profile function
(:mod:`gradcli.app.recording`) watches it from outside, so the runner and the engine are unchanged and a run
without ``--graph`` pays nothing. When the engine starts a backward call (``autograd._run``: ``.backward()``,
``torch.autograd.grad``), its roots become the graph to draw, and with ``--graph-values``/``--graph-saved``
every node of their graph gets its gradient retained and its saved tensors copied for that call (a node whose
tensor the program itself made retain its gradient keeps it); each leaf's value is copied as the call starts
and what the call added to its ``.grad`` is taken as it ends (a training loop changes both afterwards). The
last call wins. Nodes are named by the
program's global variables when the run ends; leaves the program made are drawn by their names.
"""

from __future__ import annotations

import numpy as np

from ..engine import autograd, dtypes
from ..engine.graph import Node, OutputEdge
from ..language.interpreter import Interpreter
from .stages import build_graph, tensor_info
from .recording import Recorder, graph_nodes
from .result import GradResult, InputInfo
from ..engine.tensor import Tensor


class GraphWatch:
    """What one ``gradcli run --graph`` run recorded: the last backward call's roots, the interpreter, and the
    :class:`~gradcli.app.recording.Recorder`."""

    def __init__(self, values: bool = False, saved: bool = False):
        self.recorder = Recorder(values=values, saved=saved, per_call=True)
        self.roots = None
        self.interp = None
        self.leaves = {}  # id(leaf) -> [leaf, value at the call, .grad before it, gradient the call added]
        self._engine_file = autograd.__file__
        self._pending = None

    def on_call(self, frame, event: str) -> None:
        """The profile function's view of a Python call or return: the engine's start (its roots) and end
        (what its leaves received), and the interpreter (the first call of one of its methods)."""
        code = frame.f_code
        if code.co_name == "_run" and code.co_filename == self._engine_file:  # the engine: autograd._run
            if event == "return":
                if self._pending is not None:
                    for entry in self._pending.values():
                        before, after = entry[2], entry[0]._grad
                        after = None if after is None else np.array(after.data)
                        entry[3] = after if before is None or after is None else after - before
                    self.leaves, self._pending = self._pending, None
                return
            roots = [t for t in frame.f_locals.get("roots", ()) if isinstance(t, Tensor) and t.grad_fn is not None]
            if roots:
                self.roots = roots
                self.recorder._proxies = {}  # the gradients of this call only
                self._pending = {}
                for root in roots:
                    self.recorder.attach(root)
                    for leaf in graph_leaves(root):
                        g = leaf._grad
                        self._pending[id(leaf)] = [leaf, np.array(leaf.data), None if g is None else np.array(g.data),
                                                   None]
            return
        if event != "call":
            return
        if self.interp is None:
            candidate = frame.f_locals.get("self")
            if type(candidate) is Interpreter:
                self.interp = candidate

    def result(self, source: str) -> GradResult | None:
        """The graph of the last backward call as a :class:`~gradcli.app.result.GradResult` (what the graph
        renderers draw), or None when the program made no backward call."""
        if not self.roots:
            return None
        root = self.roots[0]
        namespace = self.interp.globals if self.interp is not None else {}
        self.recorder.note_names(namespace)
        leaves = [(name, t) for name, t in namespace.items()
                  if isinstance(t, Tensor) and t.grad_fn is None and t.requires_grad and isinstance(name, str)]
        seen, named = set(), []
        for name, t in leaves:
            if id(t) not in seen:
                seen.add(id(t))
                named.append((name, t))
        ids = {}
        graph = build_graph(root, {id(t): name for name, t in named}, self.recorder, ids)
        if self.recorder.record_values:  # leaves as they were in that call
            for key, (leaf, value, _, received) in self.leaves.items():
                if key in ids:
                    node = graph.node(ids[key])
                    node.value, node.grad = value, received
        inputs = [InputInfo(name=name, value=tensor_info(t), kind="leaf",
                            grad=None if t._grad is None else t._grad.data) for name, t in named]
        return GradResult(program=source, output=tensor_info(root), inputs=inputs, calls=[], graph=graph,
                          default_dtype=dtypes.get_default_dtype().name)


def graph_leaves(root: Tensor) -> list:
    """The leaves that require grad under ``root``'s graph."""
    seen, out = set(), []
    for node in graph_nodes(root):
        for e in node.edges:
            if e is None or isinstance(e, (Node, OutputEdge)) or id(e) in seen:
                continue
            seen.add(id(e))
            out.append(e)
    return out

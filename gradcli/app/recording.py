"""What the pictures record about a run: the program variable each graph node was assigned to, every node's
forward value, what its backward saved, and the gradient that flowed into it (``gradcli grad --graph``,
``--graph-values``, ``--graph-saved``, ``--explain``).

The engine keeps no reference from a node to its output, and recording one for every node would cost every op
of every run. So the recorder works from outside the engine and costs nothing when it is not used:

* **names**: the interpreter's global namespace is a dict that notes each assignment of a tensor
  (``h = (x * w + b).tanh()`` names the TanhBackward0 node ``h``; a loop's ``y = y * w`` names each of its
  nodes ``y``), as :func:`gradcli.app.calculator.prepare` allows;
* **forward values**: while the program runs, a profile function (:func:`sys.setprofile`) looks at what each
  Python function returns and keeps a copy of the value of the first tensor seen with each new ``grad_fn``,
  which is the op that made it. A copy, because in-place ops later write into the same buffer. Only with
  ``values``: it slows the program down (a few times), never the engine;
* **gradients**: before backward, every node of the output's graph gets a stand-in output tensor that calls
  ``retain_grad()`` (PyTorch's own way to see the gradient of a non-leaf), so the engine fills its ``.grad``
  exactly as it fills a leaf's: summed over the node's consumers, accumulated over ``--repeat`` calls (zeroed
  with ``--zero-grad``), or, for ``--explain``, the gradient of the last call only (``per_call``);
* **saved tensors**: the node's saved values (named as the op's forward names its inputs, ``result`` for the
  output) are copied before backward releases them.

Retaining a node's gradient replaces a ``retain_grad()`` the program made on that node's tensor; after the
program has run nothing can read that tensor's ``.grad`` any more, so nothing visible changes.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

import numpy as np

from ..engine.graph import MultiNode, Node, OutputEdge
from ..engine.tensor import Tensor


def _key(t: Tensor) -> tuple:
    """(node, output number) of a non-leaf tensor."""
    return (t.grad_fn, getattr(t, "_output_nr", 0) if type(t.grad_fn) is MultiNode else 0)


class NamingGlobals(dict):
    """The interpreter's global namespace, noting the first name each graph node's tensor is assigned to.

    Attributes:
        names: (node, output number) → variable name.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.names = {}

    def __setitem__(self, name, value):
        if isinstance(value, Tensor) and value.grad_fn is not None and isinstance(name, str):
            self.names.setdefault(_key(value), name)
        super().__setitem__(name, value)


class Recorder:
    """Records names, values, saved tensors and gradients for the pictures (see the module docstring).

    Args:
        values: record forward values and gradients (``--graph-values``, ``--explain``).
        saved: record what each node saved for backward (``--graph-saved``).
        per_call: gradients of the last backward call only (``--explain``), not accumulated over calls.

    Use: ``globals()`` as the interpreter's namespace, run the program inside ``running()``, then
    ``attach(output)`` before the first backward call, ``before_call(zero)`` before each one.
    """

    def __init__(self, values: bool = False, saved: bool = False, per_call: bool = False):
        self.record_values = values
        self.record_saved = saved
        self.per_call = per_call
        self.namespace = NamingGlobals()
        self.values = {}  # (node, nr) -> forward value (a copy)
        self.saved = {}  # node -> [(name, array)]
        self._proxies = {}  # (node, nr) -> the Tensor whose .grad the engine fills

    # ------------------------------------------------------------------------------------------ the run
    def globals(self) -> NamingGlobals:
        """The namespace to run the program in (it notes names)."""
        return self.namespace

    @contextmanager
    def running(self, on_call=None):
        """The block in which the program runs: with ``values``, the forward value of every new node is
        copied as the op that made it returns (a profile function, removed at the end of the block).
        ``on_call(frame, event)``, when given, sees every Python function call and return of the block too
        (``event`` "call" or "return")."""
        if not self.record_values and on_call is None:
            yield self
            return
        seen = self.values
        values = self.record_values

        def note(t) -> None:
            key = _key(t)
            if key not in seen:
                seen[key] = np.array(t.data, copy=True)

        def profile(frame, event, arg):
            if on_call is not None and (event == "call" or event == "return"):
                on_call(frame, event)
            if values and event == "return" and arg is not None:
                if isinstance(arg, Tensor):
                    if arg.grad_fn is not None:
                        note(arg)
                elif type(arg) is tuple:  # the outputs of split/chunk/unbind
                    for t in arg:
                        if isinstance(t, Tensor) and t.grad_fn is not None:
                            note(t)

        previous = sys.getprofile()
        sys.setprofile(profile)
        try:
            yield self
        finally:
            sys.setprofile(previous)

    def note_names(self, namespace: dict) -> None:
        """Add the names of tensors bound in ``namespace`` (the globals after the run) that no assignment
        named."""
        for name, value in namespace.items():
            if isinstance(value, Tensor) and value.grad_fn is not None and isinstance(name, str):
                self.namespace.names.setdefault(_key(value), name)

    # ------------------------------------------------------------------------------------- the backward
    def attach(self, output: Tensor) -> None:
        """Prepare the backward calls of ``output``: copy the saved tensors (with ``saved``) and give every
        node a tensor that retains its gradient (with ``values``). A node whose tensor the program made retain
        its gradient keeps that tensor (its ``.grad`` is then read: accumulated over the program's calls)."""
        for node in graph_nodes(output):
            if self.record_saved:
                self.saved[node] = saved_tensors(node)
            if not self.record_values:
                continue
            outputs = node.outputs if type(node) is MultiNode else (node,)
            for nr, out in enumerate(outputs):
                kept = out.retained() if out.retained is not None else None
                if kept is not None and kept is not self._proxies.get((node, nr)):
                    self._proxies[(node, nr)] = kept  # the program's own retain_grad(): leave it alone
                    continue
                value = self.values.get((node, nr))
                proxy = Tensor(np.zeros((), dtype=out.out_dtype) if value is None else value, True, node)
                if type(node) is MultiNode:
                    proxy._output_nr = nr
                proxy.retain_grad()
                self._proxies[(node, nr)] = proxy

    def before_call(self, zero: bool) -> None:
        """Before a backward call: forget the gradients so far when ``zero`` (``--zero-grad`` after the first
        call) or when recording per call."""
        if zero or self.per_call:
            for proxy in self._proxies.values():
                proxy._grad = None

    # ------------------------------------------------------------------------------------------ reading
    def name(self, node) -> str | None:
        """The variable the program assigned the node's output to (outputs of a node with several: their
        names joined by ", "), or None."""
        names = self.namespace.names
        if type(node) is MultiNode:
            found = [names.get((node, nr)) for nr in range(len(node.outputs))]
            return ", ".join(n or "_" for n in found) if any(found) else None
        return names.get((node, 0))

    def value(self, node):
        """The node's forward value (a list, one per output, for a node with several), or None."""
        if not self.record_values:
            return None
        if type(node) is MultiNode:
            return [self.values.get((node, nr)) for nr in range(len(node.outputs))]
        return self.values.get((node, 0))

    def grad(self, node):
        """The gradient that flowed into the node (a list, one per output, for a node with several; None
        where none arrived), or None."""
        if not self.record_values:
            return None
        if type(node) is MultiNode:
            return [self._grad_of((node, nr)) for nr in range(len(node.outputs))]
        return self._grad_of((node, 0))

    def _grad_of(self, key):
        proxy = self._proxies.get(key)
        if proxy is None or proxy._grad is None:
            return None
        return np.array(proxy._grad.data)


def graph_nodes(output: Tensor) -> list:
    """The grad_fn nodes under ``output`` (without recursion), highest sequence number first: the order in
    which backward runs them (PyTorch's engine runs ready nodes by sequence number)."""
    root = output.grad_fn
    if root is None:
        return []
    seen = {root}
    stack = [root]
    while stack:
        node = stack.pop()
        for e in node.edges:
            if type(e) is OutputEdge:
                e = e.node
            elif not isinstance(e, Node):
                continue
            if e not in seen:
                seen.add(e)
                stack.append(e)
    return sorted(seen, key=lambda n: -n.seq)


def saved_tensors(node) -> list:
    """What ``node``'s backward saved, as ``(name, array copy)``: the op's name of the input, or ``result``;
    empty when nothing was saved or backward already released it."""
    saved = node.saved
    if not isinstance(saved, tuple):
        return []
    op = node.op
    plan = getattr(op, "save_plan", ())
    names = list(getattr(op, "input_names", ()))
    out = []
    for k, value in enumerate(saved):
        if value is None or not isinstance(value, np.ndarray):
            continue
        i = plan[k] if k < len(plan) else None
        if i is None:
            name = f"saved{k}"
        elif i == getattr(op, "ninputs", -1):
            name = "result"
        else:
            name = names[i] if i < len(names) else f"input{i}"
        out.append((name, np.array(value, copy=True)))
    return out

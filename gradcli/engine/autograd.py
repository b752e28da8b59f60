"""Reverse-mode automatic differentiation: the backward pass, and torch.autograd's namespace.

:func:`backward` and :func:`grad` (and ``Tensor.backward``, installed here) run the engine, :func:`_run`, on the
graph that the forward pass recorded (:mod:`gradcli.engine.graph`). This module is also what the package (and
``gradcli.autograd``) reads as ``torch.autograd``: the grad modes of :mod:`gradcli.engine.grad_mode` are
re-exported here, as torch.autograd re-exports torch.autograd.grad_mode's.

Backward runs without recursion. Dependencies are counted by an explicit-stack walk, then nodes are run when all
the gradients flowing into them have arrived, highest sequence number first, like PyTorch's engine
(torch/csrc/autograd/engine.cpp), so gradients accumulate in the same order and to the same bits. Each
gradient is summed back to its input's shape and cast to its dtype once, here, so derivative rules never
handle broadcasting. Saved values are released after a node runs unless ``retain_graph``.

With ``create_graph=True`` the rules run on Tensors with grad mode on, so the backward pass is itself
recorded and can be differentiated again (the rules are the same functions either way). The engine then works
on Tensors through their methods and operators (``sum``, ``expand``, ``to``, ``+``), which the op table
installs on :class:`~gradcli.engine.tensor.Tensor`: the engine sits below the ops and imports none of them.

What the engine reads besides its arguments is the active run context (:mod:`gradcli.engine.context`): the grad
mode, the hooks (:mod:`gradcli.engine.hooks`) and anomaly mode (:mod:`gradcli.engine.anomaly`: every node's
gradients are checked for NaN and infinity).
"""

from __future__ import annotations

import heapq

import numpy as np

from . import versions as _versions
from .anomaly import check_gradients
from .context import state as _state
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)
from .graph import _FREED, MultiNode, Node, OutputEdge, _accumulate_leaf
from .hooks import _hooked, _node_hooked, _node_prehooked, _tensor_hooked
from .rules import CALL_SAVED, CALL_SAVED_NEEDS, CALL_SAVED_PARAMS
from .tensor import Tensor, to_tensor

#: torch.autograd's names: the backward pass, and the grad modes re-exported (``autograd.no_grad()`` as
#: ``torch.autograd.no_grad()``)
__all__ = ["backward", "grad", "enable_grad", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled",
           "no_grad", "set_grad_enabled"]

#: Installed by gradcli.ops.shape.inplace (the in-place ops, one layer up): called with the roots before a backward
#: runs while some buffer was modified in place (gradcli.engine.versions), it makes a derivative rule that uses a value
#: modified after its node was made raise PyTorch's error.
saved_check = None


def _fit(grad, shape, dtype, create_graph: bool):
    """Sum a gradient back to its input's shape (undoing broadcasting) and cast it to the input's dtype."""
    if create_graph:
        if not isinstance(grad, Tensor):
            grad = Tensor(np.asarray(grad, dtype=dtype))
        if grad.data.shape != shape:
            # recorded: Tensor.sum and Tensor.expand are the ops sum and expand (installed by gradcli.ops)
            gshape = grad.data.shape
            lead = len(gshape) - len(shape)
            if lead > 0:
                grad = grad.sum(tuple(range(lead)))
            axes = tuple(i for i, s in enumerate(shape) if s == 1 and i < grad.data.ndim and grad.data.shape[i] != 1)
            if axes:
                grad = grad.sum(axes, keepdim=True)
            if grad.data.shape != shape:
                grad = grad.expand(shape)
        if grad.data.dtype != dtype:
            grad = grad.to(dtype)
        return grad
    if type(grad) is not np.ndarray:
        grad = np.asarray(grad)
    if grad.shape != shape:
        grad = sum_to(grad, shape)
        if grad.shape != shape:
            grad = np.broadcast_to(grad, shape)
    if grad.dtype != dtype:
        grad = grad.astype(dtype)
    return grad


def sum_to(a: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum ``a`` over the dimensions that broadcasting added or expanded to reach ``shape``.

    Leading extra dimensions are summed away and dimensions where ``shape`` has size 1 are summed with
    keepdims, like torch's ``sum_to_size``. A result that is still smaller than ``shape`` is returned as is
    (the caller broadcasts it).
    """
    lead = a.ndim - len(shape)
    if lead > 0:
        a = a.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and i < a.ndim and a.shape[i] != 1)
    if axes:
        a = a.sum(axis=axes, keepdims=True)
    return a


def _add(a, b):
    return b if a is None else a + b


def _run(roots, root_grads, retain_graph: bool, create_graph: bool, capture=None):
    """The engine. ``roots``: output Tensors; ``root_grads``: their gradients (ndarray, or Tensor when
    create_graph). With ``capture`` (id(tensor) -> tensor) the gradients of those tensors are returned in a
    dict instead of being accumulated into ``.grad``.

    One function on purpose, over the 100 lines functions keep to otherwise: it counts the dependencies, runs
    the nodes and hands the leaves their gradients; only the bodies of the cases a plain backward never meets
    (tensor hooks, captured gradients) are helpers. Splitting it costs speed. Measured on the backward alone of
    ``(x * y + x.sin()).sum()`` (x, y float64 of 3 elements; ``out.backward(retain_graph=True)``), CPU time per
    call, median of 300 interleaved runs of 1,000 calls (CPython 3.11, numpy, one shared 2-core machine, two
    sessions): this function 19.0 us (as before the engine was split into modules: 19.0); with the set-up and
    the leaves' delivery moved to three helpers (``_seed``, ``_walk``, ``_deliver``) 19.1-19.7 us (+0.2); with
    the rule call and the passing on of gradients moved out of the loop too (two more calls per node, every
    function under 60 lines) 19.6-20.2 us (+0.7, 4%, growing with the number of nodes)."""
    if _versions.modified and saved_check is not None:  # only after an in-place modification
        saved_check(roots)
    outer_task = _state.graph_task
    _state.graph_task = GraphTask(roots, capture)
    anomaly = _state.anomaly  # anomaly mode: None, or where the program created each node
    captured = {}
    capture_nodes = {}
    if capture is not None:
        for t in capture.values():
            if type(t.grad_fn) is MultiNode:  # outputs of one node: a list of them
                capture_nodes.setdefault(t.grad_fn, []).append(t)
            elif t.grad_fn is not None:
                capture_nodes[t.grad_fn] = t

    deps = {}
    buffers = {}
    leaf_buffers = {}
    stack = []
    for root, g in zip(roots, root_grads):
        node = root.grad_fn
        if node is None:
            leaf_buffers[id(root)] = (root, _add(leaf_buffers.get(id(root), (None, None))[1], g))
            continue
        if type(node) is MultiNode:  # one output of several: the node's buffer has a slot per output
            buf = buffers.get(node) or [None] * len(node.outputs)
            buf[root._output_nr] = _add(buf[root._output_nr], g)
            buffers[node] = buf
        else:
            buffers[node] = _add(buffers.get(node), g)
        if node not in deps:
            deps[node] = 0
            stack.append(node)
    # deps: how many gradients each node still waits for, counted over the nodes reachable from the roots.
    # With one root (and no create_graph, which adds uses as it runs), a node that only one edge points to
    # (Node.uses == 1) is reached once, through that edge, and is ready after its one gradient: it needs no
    # entry, which saves time and, on long chains, memory.
    single = len(stack) == 1 and not create_graph
    while stack:
        node = stack.pop()
        for e in node.edges:
            t = type(e)
            if t is OutputEdge:  # an output of a MultiNode: always counted
                e = e.node
            elif t is not Node:  # a leaf or None
                continue
            elif single and e.uses == 1:
                stack.append(e)
                continue
            n = deps.get(e)
            if n is None:
                deps[e] = 1
                stack.append(e)
            else:
                deps[e] = n + 1

    # Ready nodes wait in a heap ordered by sequence number, except the common case of exactly one node
    # becoming ready with none waiting (a chain): that one runs next without going through the heap.
    heap = [(-n.seq, n) for n in buffers if deps[n] == 0]
    heapq.heapify(heap)
    heappop, heappush = heapq.heappop, heapq.heappush
    prev_mode = _state.grad_enabled
    _state.grad_enabled = create_graph
    node = grad = nxt_grad = None
    try:
        while True:
            if node is None:
                if not heap:
                    break
                node = heappop(heap)[1]
                grad = buffers.pop(node)  # a gradient buffer is released as soon as it is consumed
            extra = node.extra  # None unless hooks were registered on the node or its output tensors (or ...)
            if extra is not None:
                if extra.tensor_hooks:
                    grad = _tensor_hooked(node, grad, create_graph)
                if extra.pre_hooks:
                    grad = _node_prehooked(node, grad, create_graph)
            if node.retained is not None:
                t = node.retained()
                if t is not None:
                    _accumulate_leaf(t, grad, create_graph)
            if capture_nodes and node in capture_nodes:
                _capture(capture_nodes[node], grad, captured)
            op = node.op
            saved = node.saved
            call = op.vjp_call
            if call and saved is not _FREED and not create_graph:  # not CALL_PLAN (0)
                # Node.apply's common cases, inline
                if call == CALL_SAVED:
                    grads = op.vjp(grad, *saved)
                elif call == CALL_SAVED_PARAMS:
                    grads = op.vjp(grad, *saved, *node.params)
                else:
                    edges = node.edges
                    needs = ((edges[0] is not None, edges[1] is not None) if len(edges) == 2 else
                             tuple([e is not None for e in edges]))
                    grads = (op.vjp(grad, *saved, needs) if call == CALL_SAVED_NEEDS else
                             op.vjp(grad, *saved, *node.params, needs))
                if op.ninputs == 1:
                    if not (type(grads) is tuple and len(grads) == 1):
                        grads = (grads,)
                elif len(grads) != op.ninputs:
                    grads = node.apply(grad, create_graph)  # raises the error about the rule
            else:
                grads = node.apply(grad, create_graph)
            if extra is not None and extra.post_hooks:
                grads = _node_hooked(node, grads, grad, create_graph)
            if anomaly is not None:
                check_gradients(node, grads, anomaly)
            grad = None
            if not retain_graph:
                node.saved = _FREED
            nxt = None
            for e, g in zip(node.edges, grads):
                if e is None:
                    continue
                if g is None:  # no gradient along this edge: the node waits for one less
                    _no_gradient(e, buffers, deps, heap, single)
                    continue
                if type(e) is not Node:
                    if type(e) is OutputEdge:  # an output of a MultiNode
                        e, g = _output_gradient(e, g, buffers, deps, create_graph)
                        if e is None:
                            continue
                    else:  # a leaf that requires grad
                        m = e._meta
                        if m is not None and m.no_grad_view == 1:  # a view made in no_grad mode: no edge leads
                            continue  # to it in PyTorch's graph (its grad accumulator is null)
                        d = e.data
                        if (create_graph or type(g) is not np.ndarray or g.shape != d.shape or
                                g.dtype != d.dtype):
                            g = _fit(g, d.shape, d.dtype, create_graph)
                        k = id(e)
                        prev = leaf_buffers.get(k)
                        leaf_buffers[k] = (e, g if prev is None else prev[1] + g)
                        continue
                else:
                    # _fit is a no-op for a gradient that already has its input's shape and dtype (most of them)
                    dtype = e.out_dtype
                    if (create_graph or type(g) is not np.ndarray or g.shape != e.out_shape or
                            (g.dtype is not dtype and g.dtype != dtype)):
                        g = _fit(g, e.out_shape, dtype, create_graph)
                    if not (single and e.uses == 1):
                        n = deps[e] - 1
                        if n:  # more gradients to come: accumulate in the node's buffer
                            deps[e] = n
                            prev = buffers.get(e)
                            buffers[e] = g if prev is None else prev + g
                            continue
                        prev = buffers.pop(e, None)
                        if prev is not None:
                            g = prev + g
                # the last gradient for e: e is ready
                if nxt is None and not heap:
                    nxt, nxt_grad = e, g
                else:
                    if nxt is not None:
                        buffers[nxt] = nxt_grad
                        heappush(heap, (-nxt.seq, nxt))
                        nxt = nxt_grad = None
                    buffers[e] = g
                    heappush(heap, (-e.seq, e))
            node, grad = nxt, nxt_grad
            grads = g = nxt_grad = None  # nothing of this node stays referenced while the next one runs
        for k, (leaf, g) in leaf_buffers.items():
            if capture is not None and k not in capture:  # inputs=: the other leaves get nothing, as PyTorch's
                continue
            meta = leaf._meta  # None unless the leaf has hooks (or is a Parameter, or an inference tensor)
            if meta is not None and meta.hooks:
                g = _hooked(meta.hooks, g, create_graph)
            if capture is not None:
                if k in capture:
                    captured[k] = g
            elif leaf.requires_grad:
                _accumulate_leaf(leaf, g, create_graph)
                if meta is not None and meta.post_hooks:
                    for hook in list(meta.post_hooks.values()):
                        hook(leaf)
    finally:
        _state.grad_enabled = prev_mode
        _state.graph_task = outer_task
    return captured


class GraphTask:
    """The backward pass that is running (``state.graph_task``): its root tensors and the ids of the tensors
    it captures (``inputs=``), or None; what PyTorch's ``_current_graph_task_id`` and
    ``_will_engine_execute_node`` answer from (torch.autograd.graph.register_multi_grad_hook)."""

    __slots__ = ("roots", "capture", "_reached", "__weakref__")

    def __init__(self, roots, capture):
        self.roots = roots
        self.capture = capture
        self._reached = None

    def will_run(self, t) -> bool:
        """Whether this backward pass gives ``t`` (a tensor that requires grad) its gradient: its node is reached
        from the roots, or for a leaf, it is reached and, when the pass captures (``inputs=``), captured."""
        if self._reached is None:
            nodes, leaves = set(), set()
            stack = [r.grad_fn for r in self.roots if r.grad_fn is not None]
            leaves.update(id(r) for r in self.roots if r.grad_fn is None)
            while stack:
                node = stack.pop()
                if node in nodes:
                    continue
                nodes.add(node)
                for e in node.edges:
                    if type(e) is OutputEdge:
                        stack.append(e.node)
                    elif isinstance(e, Node):
                        stack.append(e)
                    elif e is not None:
                        leaves.add(id(e))
            self._reached = (nodes, leaves)
        nodes, leaves = self._reached
        if t.grad_fn is not None:
            return t.grad_fn in nodes
        return id(t) in leaves and (self.capture is None or id(t) in self.capture)



def _capture(c, grad, captured: dict) -> None:
    """Capture the gradient ``grad`` of the tensor ``c`` (or of the outputs in the list ``c``, when ``grad`` is
    a MultiNode's list with a slot per output) into ``captured`` (id(tensor) -> gradient)."""
    if type(c) is list:  # grad is a list with a slot per output
        for t in c:
            if grad[t._output_nr] is not None:
                captured[id(t)] = grad[t._output_nr]
    else:
        captured[id(c)] = grad


def _output_gradient(e: OutputEdge, g, buffers: dict, deps: dict, create_graph: bool):
    """The engine's step for a gradient ``g`` flowing into output ``e.nr`` of a MultiNode: fitted to the
    output, added to the node's buffer (one slot per output). Returns (node, buffer) when that was the last
    gradient the node waited for, else (None, None)."""
    if create_graph or type(g) is not np.ndarray or g.shape != e.out_shape or g.dtype != e.out_dtype:
        g = _fit(g, e.out_shape, e.out_dtype, create_graph)
    m = e.node
    buf = buffers.get(m)
    if buf is None:
        buf = buffers[m] = [None] * len(m.outputs)
    prev = buf[e.nr]
    buf[e.nr] = g if prev is None else prev + g
    n = deps[m] - 1
    deps[m] = n
    if n:
        return None, None
    return m, buffers.pop(m)


def _no_gradient(e, buffers: dict, deps: dict, heap: list, single: bool) -> None:
    """The engine's step for an edge whose rule returned no gradient (None): the node it leads to waits for one
    gradient less. When that was its last and it got none at all, its own inputs get none in turn (PyTorch runs
    such a node with undefined gradients); when it got some, it is ready. Without this, a node one of whose
    consumers returns None would never run, and ``x.grad`` of ``(y * 2).sum() + norm(y, 0)`` with ``y = -x``
    would be None."""
    stack = [e]
    while stack:
        e = stack.pop()
        t = type(e)
        if t is OutputEdge:
            m = e.node
        elif t is Node:
            m = e
        else:  # a leaf: nothing waits
            continue
        if not (t is Node and single and m.uses == 1):
            n = deps[m] - 1
            deps[m] = n
            if n:
                continue
        buf = buffers.pop(m, None)
        if buf is not None and (type(buf) is not list or any(b is not None for b in buf)):
            buffers[m] = buf
            heapq.heappush(heap, (-m.seq, m))
        else:
            stack.extend(x for x in m.edges if x is not None)


def _as_list(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _make_grads(outputs, grad_outputs, create_graph: bool):
    # torch.autograd.__init__._make_grads: implicit ones for one-element outputs, shape check otherwise.
    grads = []
    for i, out in enumerate(outputs):
        g = None if grad_outputs is None else grad_outputs[i]
        if g is None:
            if out.requires_grad and out.data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = Tensor(np.ones(out.data.shape, dtype=out.data.dtype))
        else:
            g = to_tensor(g)
            if g.data.shape != out.data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of torch.Size({list(g.data.shape)}) and "
                    f"output[{i}] has a shape of torch.Size({list(out.data.shape)}).")
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g.data.dtype != out.data.dtype:
            g = g.to(out.dtype) if create_graph else Tensor(g.data.astype(out.data.dtype))
        grads.append(g if create_graph else g.data)
    return grads


def install_batched(grad_fn, backward_fn) -> None:
    """Install (or, with None, remove) what :func:`grad` and :func:`backward` do while a vmap runs, in the active
    run context (``state.batched_autograd``: ``(grad, backward)`` for BatchedTensor arguments, installed by
    gradcli.api.vmap; its grad returns NotImplemented when no argument is batched)."""
    _state.batched_autograd = None if grad_fn is None else (grad_fn, backward_fn)


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None, create_graph: bool = False,
             inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves of their graph.

    Args:
        tensors: a Tensor or a sequence of Tensors to differentiate.
        grad_tensors: the v of each vector-Jacobian product (same shapes as ``tensors``); may be None for
            one-element outputs.
        retain_graph: keep saved buffers for another backward (default: ``create_graph``).
        create_graph: record the backward pass for higher-order derivatives.
        inputs: if given, only these leaves get their ``.grad`` updated.

    Raises:
        RuntimeError: PyTorch's messages for non-scalar outputs without a gradient, shape mismatch, outputs
            that do not require grad, and backward through freed buffers.

    Matches torch.autograd.backward.
    """
    _state.backward_calls += 1  # the run context's count (RunContext.backward_calls)
    batched = _state.batched_autograd
    if batched is not None:
        batched[1](tensors)
    tensors = _as_list(tensors)
    grad_tensors = _as_list(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grad_tensors, create_graph)
    if inputs is None:
        _run(tensors, grads, retain_graph, create_graph)
        return
    inputs = _as_list(inputs)
    captured = _run(tensors, grads, retain_graph, create_graph, capture={id(t): t for t in inputs})
    for t in inputs:
        g = captured.get(id(t))
        if g is not None:
            _accumulate_leaf(t, g, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned rather than accumulated.

    Args:
        outputs: a Tensor or sequence of Tensors.
        inputs: a Tensor or sequence of Tensors that require grad (leaves or not).
        grad_outputs: the v of each vector-Jacobian product, or None for one-element outputs.
        retain_graph: keep saved buffers (default: ``create_graph``).
        create_graph: record the computation so the result can be differentiated again.
        only_inputs: deprecated and ignored, with PyTorch's warning when given False.
        allow_unused: return None for inputs the outputs do not depend on instead of raising (default False;
            True with ``materialize_grads``).
        is_grads_batched: the first dimension of each ``grad_outputs`` is a batch: one VJP per row, stacked
            (PyTorch runs them vectorized; the values are the same).
        materialize_grads: zeros instead of None for unused inputs.

    Returns:
        A tuple with one Tensor (or None) per input.

    Raises:
        RuntimeError: PyTorch's messages, including "The differentiated Tensor at index i appears to not have
            been used in the graph" and "One of the differentiated Tensors does not require grad".
        ValueError: ``materialize_grads`` with ``allow_unused=False`` (PyTorch's message).

    Matches torch.autograd.grad.
    """
    if not only_inputs:
        import warnings

        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", UserWarning,
                      stacklevel=2)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_list(outputs)
    inputs = _as_list(inputs)
    if retain_graph is None:
        retain_graph = create_graph
    batched = _state.batched_autograd
    if batched is not None and not is_grads_batched:
        out = batched[0](outputs, inputs, _as_list(grad_outputs), retain_graph, create_graph, allow_unused,
                          materialize_grads)
        if out is not NotImplemented:
            return out
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if is_grads_batched:
        return _batched_grad(outputs, inputs, _as_list(grad_outputs), retain_graph, create_graph, allow_unused,
                             materialize_grads)
    grads = _make_grads(outputs, _as_list(grad_outputs), create_graph)
    captured = _run(outputs, grads, retain_graph, create_graph, capture={id(t): t for t in inputs})
    result = []
    for i, t in enumerate(inputs):
        g = captured.get(id(t))
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            result.append(Tensor(np.zeros(t.data.shape, t.data.dtype)) if materialize_grads else None)
        else:
            result.append(g if isinstance(g, Tensor) else Tensor(np.array(g, copy=True)))
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """``grad(..., is_grads_batched=True)``: one VJP per row of the batched ``grad_outputs``, stacked along a new
    first dimension."""
    if not grad_outputs or any(g is None for g in grad_outputs):
        raise RuntimeError("If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
                           "the batch dimension. The sizes of the remaining dimensions are expected to match the "
                           "shape of corresponding output, but a mismatch was detected")
    if create_graph:
        raise NotImplementedError("torch.autograd.grad(..., is_grads_batched=True, create_graph=True) is not "
                                  "supported by gradcli")
    n = grad_outputs[0].data.shape[0]
    rows = []
    for k in range(n):
        rows.append(grad(outputs, inputs, [g[k] for g in grad_outputs], retain_graph=True if k < n - 1 else
                         retain_graph, create_graph=create_graph, allow_unused=allow_unused,
                         materialize_grads=materialize_grads))
    stacked = []
    for j, t in enumerate(inputs):
        col = [r[j] for r in rows]
        stacked.append(None if any(c is None for c in col) else Tensor(np.stack([c.data for c in col])))
    return tuple(stacked)


def _tensor_backward(self, gradient=None, retain_graph: bool | None = None, create_graph: bool = False,
                     inputs=None) -> None:
    """Accumulate the gradient of this tensor into ``.grad`` of the leaves it depends on.

    Args:
        gradient: v of the vector-Jacobian product, same shape as this tensor; may be omitted for
            tensors with one element (it is then 1).
        retain_graph: keep saved buffers for another backward; defaults to ``create_graph``.
        create_graph: record the backward pass so that gradients can be differentiated again.
        inputs: accumulate only into these leaves.

    Raises:
        RuntimeError: with PyTorch's messages, for a non-scalar output without ``gradient``, a gradient
            of the wrong shape, an output that does not require grad, or a second backward through
            freed buffers.

    Matches torch.Tensor.backward.
    """
    backward([self], None if gradient is None else [gradient], retain_graph=retain_graph,
             create_graph=create_graph, inputs=inputs)


_tensor_backward.__name__ = _tensor_backward.__qualname__ = "backward"
# The engine provides Tensor.backward (the tensor layer below does not import it).
Tensor.backward = _tensor_backward

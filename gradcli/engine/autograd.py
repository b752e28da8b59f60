"""Reverse-mode automatic differentiation: grad modes, graph nodes, and the backward engine.

The graph is recorded during the forward pass: every differentiable op applied to a tensor that requires grad
creates a :class:`Node` holding the op, the edges to its inputs (a Node, a leaf Tensor, or None when that
input does not require grad) and the values its derivative rule asked to save.

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
mode, the node budget of a program run (the ``graph_nodes`` limit, counted here from the numbers that
:mod:`gradcli.engine.limits` supplies) and anomaly mode (:mod:`gradcli.engine.anomaly`: every node's gradients are checked
for NaN and infinity).
"""

from __future__ import annotations

import functools
import heapq
import weakref

import numpy as np

from . import context as _context
from . import limits as _limits
from . import versions as _versions
from .context import state as _state
from .errors import EvalError
from .rules import (ARG_INPUT, ARG_PARAM, ARG_RESULT, ARG_SHAPE, ARG_VARARGS, CALL_SAVED, CALL_SAVED_NEEDS,
                    CALL_SAVED_PARAMS)
from .tensor import Tensor, to_tensor

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward."
)


# ------------------------------------------------------------------------------------------------ grad mode
# The grad mode is the active run context's (gradcli.engine.context.state.grad_enabled, read by every op).
def is_grad_enabled() -> bool:
    """Whether operations are being recorded in the active run context (torch.is_grad_enabled)."""
    return _state.grad_enabled




class _GradModeContext:
    """Base of no_grad/enable_grad: a context manager that also decorates functions. It sets the grad mode of
    the active run context and restores the previous mode at the end of the block."""

    _target = True

    def __enter__(self):
        self._prev = _state.grad_enabled
        _state.grad_enabled = self._target
        return None

    def __exit__(self, *exc) -> bool:
        _state.grad_enabled = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Context manager (and decorator) that disables recording: results have requires_grad False.
    Matches torch.no_grad."""

    _target = False


class enable_grad(_GradModeContext):
    """Context manager (and decorator) that enables recording inside a no_grad block.
    Matches torch.enable_grad."""

    _target = True


class set_grad_enabled(_GradModeContext):
    """``torch.set_grad_enabled(mode)``: turns recording on or off in the active run context at once; used as
    a context manager, the previous mode comes back at the end of the block; as a decorator, the function runs
    in that mode. Matches torch.set_grad_enabled."""

    def __init__(self, mode: bool):
        self._prev = _state.grad_enabled
        self._target = bool(mode)
        _state.grad_enabled = self._target

    def __enter__(self):
        return None

    def __call__(self, fn):
        _state.grad_enabled = self._prev  # as a decorator it changes nothing until the function runs
        target = self._target

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(target):
                return fn(*args, **kwargs)

        return wrapper

    def __repr__(self) -> str:
        return f"<torch.autograd.grad_mode.set_grad_enabled object at {id(self):#x}>"


_INFERENCE = [0]  # how many inference_mode blocks are open
_INFERENCE_TENSORS: dict = {}  # id(tensor) -> weak reference, for the tensors made in inference mode
_PLAIN_INIT = Tensor.__init__


def _inference_init(self, data, requires_grad: bool = False, grad_fn=None):
    # Tensor.__init__ while an inference_mode block is open (swapped in and out by the block, so that tensors
    # made outside pay nothing): the tensor is an inference tensor
    _PLAIN_INIT(self, data, requires_grad, grad_fn)
    key = id(self)
    _INFERENCE_TENSORS[key] = weakref.ref(self, lambda _, key=key: _INFERENCE_TENSORS.pop(key, None))


def _is_inference(self) -> bool:
    """Whether the tensor was made inside ``torch.inference_mode()`` (Tensor.is_inference)."""
    ref = _INFERENCE_TENSORS.get(id(self))
    return ref is not None and ref() is self


Tensor.is_inference = _is_inference


class inference_mode(_GradModeContext):
    """``torch.inference_mode(mode=True)``: recording off in the block (gradcli has no inference tensors:
    results are ordinary tensors that do not require grad). Matches torch.inference_mode's grad mode."""

    def __init__(self, mode: bool = True):
        self._target = not mode
        self._mode = bool(mode)

    def __enter__(self):
        _INFERENCE[0] += self._mode
        if _INFERENCE[0]:
            Tensor.__init__ = _inference_init
        return super().__enter__()

    def __exit__(self, *exc) -> bool:
        _INFERENCE[0] -= self._mode
        if not _INFERENCE[0]:
            Tensor.__init__ = _PLAIN_INIT
        return super().__exit__(*exc)

    def __call__(self, fn):
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled() -> bool:
    """``torch.is_inference_mode_enabled()``: inside an ``inference_mode`` block."""
    return _INFERENCE[0] > 0


# ------------------------------------------------------------------------------------------------------ hooks
class RemovableHandle:
    """What ``register_*hook`` returns: ``remove()`` unregisters the hook (PyTorch's
    torch.utils.hooks.RemovableHandle)."""

    program_attributes = ("remove", "id")
    _ids = iter(range(1 << 62))

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        """Unregister the hook (again: nothing)."""
        self._hooks.pop(self.id, None)

    def __repr__(self) -> str:
        return f"<torch.utils.hooks.RemovableHandle object at {id(self):#x}>"


#: Hooks the engine runs, kept outside the graph's objects so that a backward without any costs one test of
#: an empty dict per node. Non-leaf tensors' hooks by (node, output_nr); leaves' by id (with a weak reference
#: to the leaf); nodes' pre-hooks and hooks by node.
_TENSOR_HOOKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_LEAF_HOOKS: dict = {}
_NODE_PREHOOKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_NODE_HOOKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _register_hook(self, hook):
    """``Tensor.register_hook(hook)``: ``hook(grad)`` runs when the gradient of this tensor has been computed,
    and a tensor it returns replaces that gradient (for what flows on, and for ``.grad``). Returns a handle.

    Raises:
        RuntimeError: PyTorch's message for a tensor that does not require grad.
    """
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is None:
        key = id(self)
        entry = _LEAF_HOOKS.get(key)
        if entry is None or entry[0]() is not self:
            entry = _LEAF_HOOKS[key] = (weakref.ref(self, lambda _, key=key: _LEAF_HOOKS.pop(key, None)), {}, {})
        hooks = entry[1]
    else:
        hooks = _TENSOR_HOOKS.setdefault(self.grad_fn, {}).setdefault(self._output_nr
                                                                       if type(self.grad_fn) is MultiNode else 0, {})
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def _register_post_accumulate_grad_hook(self, hook):
    """``Tensor.register_post_accumulate_grad_hook(hook)``: ``hook(tensor)`` runs after backward has
    accumulated into this leaf's ``.grad``. Returns a handle.

    Raises:
        RuntimeError: PyTorch's message on a tensor that is not a leaf.
    """
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    key = id(self)
    entry = _LEAF_HOOKS.get(key)
    if entry is None or entry[0]() is not self:
        entry = _LEAF_HOOKS[key] = (weakref.ref(self, lambda _, key=key: _LEAF_HOOKS.pop(key, None)), {}, {})
    handle = RemovableHandle(entry[2])
    entry[2][handle.id] = hook
    return handle


def _as_grad_tensor(g, create_graph: bool):
    return g if type(g) is Tensor or g is None else Tensor(g)


def _hooked(hooks: dict, g, create_graph: bool):
    """Run tensor hooks on the gradient ``g`` (an array, or a Tensor under create_graph); a returned tensor
    replaces it."""
    for hook in list(hooks.values()):
        out = hook(_as_grad_tensor(g, create_graph))
        if out is not None:
            if not isinstance(out, Tensor):
                raise TypeError("hook returned a value that is not a Tensor")
            g = out if create_graph else out.data
    return g


def _node_prehooked(node, grad, create_graph: bool):
    hooks = _NODE_PREHOOKS.get(node)
    if not hooks:
        return grad
    multi = type(node) is MultiNode
    outs = tuple(_as_grad_tensor(g, create_graph) for g in (grad if multi else [grad]))
    for hook in list(hooks.values()):
        new = hook(outs)
        if new is not None:
            outs = tuple(new)
    vals = [o if create_graph or o is None else o.data for o in outs]
    return vals if multi else vals[0]


def _node_hooked(node, grads, grad, create_graph: bool):
    hooks = _NODE_HOOKS.get(node)
    if not hooks:
        return grads
    ins = tuple(None if g is None else _as_grad_tensor(g, create_graph) for g in grads)
    outs = tuple(_as_grad_tensor(g, create_graph) for g in (grad if type(node) is MultiNode else [grad]))
    for hook in list(hooks.values()):
        new = hook(ins, outs)
        if new is not None:
            ins = tuple(new)
    return tuple(None if g is None else (g if create_graph else g.data) for g in ins)


def _node_register(table):
    def register(self, hook):
        handle = RemovableHandle(table.setdefault(self, {}))
        table[self][handle.id] = hook
        return handle

    return register


Tensor.register_hook = _register_hook
Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook


# ------------------------------------------------------------------------------------------------------ graph
_FREED = object()

#: Installed by gradcli.ops.core.saved_names (one layer up, on the op table): ``saved_attribute(node, "_saved_self")``
#: gives a node's saved value under PyTorch's name (``_raw_saved_self``: the SavedTensor object),
#: ``saved_attribute_names(node)`` lists those names.
saved_attribute = None
saved_attribute_names = None


def pack_saved(node) -> None:
    """Replaced by gradcli.ops.core.saved_hooks: called for each node made inside a saved tensors hooks block (never
    entered before that module is loaded) to pack what the node saved."""
    raise RuntimeError("saved tensors hooks are not installed (import gradcli.ops.core.saved_hooks)")


#: ``grad_fn.metadata`` of the nodes that were asked for it (most never are: no dict per node).
_NODE_METADATA: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

#: Forward over reverse: the tangents of the values a node saved, for the nodes recorded inside a forward-AD
#: level (``node -> (level, {slot: tangent})``, filled by the op table's forward AD). A ``create_graph``
#: backward run inside that level gives the saved values their tangents again, so that the gradient's
#: computation carries tangents (the gradient's tangent is then a Hessian-vector product), as PyTorch's saved
#: variables keep their forward gradients.
SAVED_TANGENTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
#: Installed by gradcli.ops.shape.inplace (the in-place ops, one layer up): called with the roots before a backward
#: runs while some buffer was modified in place (gradcli.engine.versions), it makes a derivative rule that uses a value
#: modified after its node was made raise PyTorch's error.
saved_check = None


# Nodes are numbered in creation order (Node.seq) by a process-wide counter (gradcli.engine.context.state.sequence):
# nodes made in several run contexts may meet in one graph.
def next_sequence() -> int:
    """Take a sequence number: every node made after this call has a larger ``seq``."""
    return next(_state.sequence)


peek_sequence = _context.peek_sequence


# ----------------------------------------------------------------------------------------------- node budget
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


class Node:
    """One recorded operation: PyTorch's ``grad_fn`` object (``<MulBackward0 object at 0x...>``).

    Attributes:
        op: the :class:`gradcli.ops.core.declare.Op` that was applied.
        edges: per tensor input, the Node that produced it, the leaf Tensor that requires grad, or None.
        saved: the values the derivative rule asked for, as numpy arrays in the order of ``op.save_plan``
            (inputs as the op computed on them, i.e. in ``dtype``; the output), released after backward unless
            retain_graph.
        params: the op's non-tensor arguments (dim, keepdim, ...), never released.
        in_shapes: the shapes of the tensor inputs if the derivative rule uses them, else None.
        out_shape, out_dtype: shape and numpy dtype of the output.
        dtype: the numpy dtype the op computed in (inputs of another dtype are cast to it).
        seq: creation order; later nodes run first in backward.
        retained: a weak reference to the output tensor after ``retain_grad()``, else None.
        uses: how many edges of nodes created so far point to this node (never decreases). The engine need
            not count the consumers of a node used once (most nodes): see :func:`_run`.
    """

    __slots__ = ("op", "edges", "saved", "params", "in_shapes", "out_shape", "out_dtype", "dtype", "seq",
                 "retained", "uses", "__weakref__")

    def __init__(self, op, edges, saved, params, in_shapes, out_shape, out_dtype, dtype, counted=False):
        # counted: the caller has already added one use to each Node in ``edges``
        self.op = op
        self.edges = edges
        self.saved = saved
        self.params = params
        self.in_shapes = in_shapes
        self.out_shape = out_shape
        self.out_dtype = out_dtype
        self.dtype = dtype
        self.seq = seq = next(_state.sequence)
        if seq >= _state.graph_stop:  # a program run recorded more nodes than the graph_nodes limit
            _graph_exceeded(seq)
        self.retained = None
        self.uses = 0
        if not counted:
            for e in edges:
                if type(e) is Node:
                    e.uses += 1
        if _state.saved_hooks and saved:  # inside torch.autograd.graph.saved_tensors_hooks: pack now
            pack_saved(self)

    def name(self) -> str:
        """PyTorch's class name of this backward function, e.g. ``"MulBackward0"``."""
        g = self.op.grad_fn
        return g if type(g) is str else g(*self.params)

    @property
    def next_functions(self) -> tuple:
        """Pairs ``(node, output_nr)`` per input as in PyTorch: a Node (``output_nr`` the input's place among
        the outputs of a :class:`MultiNode`, else 0), an :class:`AccumulateGrad` for a leaf that requires grad,
        or None."""
        out = []
        for e in self.edges:
            if e is None:
                out.append((None, 0))
            elif isinstance(e, Node):
                out.append((e, 0))
            elif type(e) is OutputEdge:
                out.append((e.node, e.nr))
            else:
                out.append((AccumulateGrad(e), 0))
        return tuple(out)

    @property
    def metadata(self) -> dict:
        """A dict for the user's own data about this node, empty at first and kept with the node (PyTorch's
        ``grad_fn.metadata``)."""
        d = _NODE_METADATA.get(self)
        if d is None:
            d = _NODE_METADATA[self] = {}
        return d

    def __getattr__(self, name: str):
        # only for names the slots do not have: the saved values under PyTorch's names (gradcli.ops.core.saved_names)
        if name.startswith(("_saved_", "_raw_saved_")) and saved_attribute is not None:
            return saved_attribute(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self):
        extra = saved_attribute_names(self) if saved_attribute_names is not None else ()
        return sorted(set(object.__dir__(self)) | set(extra))

    def qualified_name(self) -> str:
        """The class name ``repr`` shows: :meth:`name`, after the op's ``torch_module`` when it has one (a
        custom Function's node is PyTorch's Python class ``torch.autograd.function.MyExpBackward``)."""
        module = getattr(self.op, "torch_module", None)
        return f"{module}.{self.name()}" if module else self.name()

    def __repr__(self) -> str:
        return f"<{self.qualified_name()} object at {id(self):#x}>"

    def apply(self, grad, create_graph: bool):
        """Run the derivative rule on the gradient of the output; returns one gradient (or None) per edge.

        Raises:
            RuntimeError: if the rule needs saved values that a previous backward released.
        """
        op = self.op
        saved = self.saved
        if saved is _FREED:
            if op.saves:
                raise RuntimeError(ERR_BACKWARD_TWICE)
            saved = ()
        call = op.vjp_call
        if create_graph or not call:  # CALL_PLAN is 0
            grads = op.vjp(*self._rule_args(grad, saved, create_graph))
        elif call == CALL_SAVED:  # the common cases: the rule takes saved arrays, parameters, needs_input_grad
            grads = op.vjp(grad, *saved)
        elif call == CALL_SAVED_NEEDS:
            grads = op.vjp(grad, *saved, tuple([e is not None for e in self.edges]))
        elif call == CALL_SAVED_PARAMS:
            grads = op.vjp(grad, *saved, *self.params)
        else:  # CALL_SAVED_PARAMS_NEEDS
            grads = op.vjp(grad, *saved, *self.params, tuple([e is not None for e in self.edges]))
        if op.ninputs == 1:
            return grads if type(grads) is tuple and len(grads) == 1 else (grads,)
        if len(grads) != len(self.edges):
            raise AssertionError(f"{op.name}: derivative returned {len(grads)} gradients for "
                                 f"{len(self.edges)} inputs")
        return grads

    def _rule_args(self, grad, saved, create_graph: bool) -> list:
        # The rule's arguments in the order it names them (Op.vjp_plan; the kinds of gradcli.engine.rules).
        args = [grad]
        for kind, i in self.op.vjp_plan:
            if kind == ARG_INPUT or kind == ARG_RESULT:  # a saved value
                d = saved[i]
                if create_graph and d is not None:
                    t = self._rebuild_saved(i, d)
                    if SAVED_TANGENTS and _state.fw_level is not None:
                        _restore_tangent(self, i, t)
                    args.append(t)
                else:
                    args.append(d)
            elif kind == ARG_PARAM:  # a non-tensor argument
                args.append(self.params[i])
            elif kind == ARG_SHAPE:  # an input's shape
                args.append(self.in_shapes[i])
            elif kind == ARG_VARARGS:  # a *args parameter: all the remaining arguments
                args.append(self.params[i:])
            else:  # ARG_NEEDS_INPUT_GRAD: which inputs need a gradient
                args.append(tuple([e is not None for e in self.edges]))
        return args

    def _rebuild_saved(self, slot: int, d: np.ndarray) -> Tensor:
        # A saved array as the Tensor a create_graph rule computes on, connected to the graph like the value
        # it was: the result (this node), an input produced by a node, a leaf that requires grad, or a constant.
        i = self.op.save_plan[slot]
        if i == self.op.ninputs:
            return Tensor(d, True, self)
        e = self.edges[i]
        if e is None:
            return Tensor(d)
        if type(e) is Node:
            if d.dtype == e.out_dtype:
                return Tensor(d, True, e)
            # the op computed on a cast of the input (promotion widens, so casting back is exact)
            return Tensor(d.astype(e.out_dtype), True, e).to(self.dtype)
        if type(e) is OutputEdge:  # one output of a MultiNode
            t = Tensor(d if d.dtype == e.out_dtype else d.astype(e.out_dtype), True, e.node)
            t._output_nr = e.nr
            return t if d.dtype == e.out_dtype else t.to(self.dtype)
        return e if e.data.dtype == self.dtype else e.to(self.dtype)


def _restore_tangent(node, slot: int, t: Tensor) -> None:
    # the saved value's tangent at the active forward-AD level, on the Tensor rebuilt from it (SAVED_TANGENTS)
    entry = SAVED_TANGENTS.get(node)
    if entry is None or entry[0] != _state.fw_level:
        return
    tangent = entry[1].get(slot)
    if tangent is not None and getattr(t, "_fw", None) is None:
        t._fw = (entry[0], tangent if tangent.data.dtype == t.data.dtype else tangent.to(t.dtype))


class OutputEdge:
    """The edge to one output of a :class:`MultiNode`: what a consumer's ``Node.edges`` holds for an input
    that is output ``nr`` of ``node`` (PyTorch's Edge(function, input_nr)).

    Attributes:
        node: the MultiNode.
        nr: the output's index (``Tensor.output_nr``).
        out_shape, out_dtype: the output's shape and numpy dtype (gradients for it are fitted to them).
        retained: a weak reference to the output tensor after ``retain_grad()``, else None.
    """

    __slots__ = ("node", "nr", "out_shape", "out_dtype", "retained")

    def __init__(self, node, nr: int, out_shape: tuple, out_dtype):
        self.node = node
        self.nr = nr
        self.out_shape = out_shape
        self.out_dtype = out_dtype
        self.retained = None

    def __repr__(self) -> str:
        return f"OutputEdge({self.node!r}, {self.nr})"


class MultiNode(Node):
    """A recorded operation with several differentiable outputs, PyTorch's one backward node for them all:
    ``a, b = x.split(2)`` gives ``a.grad_fn is b.grad_fn`` (SplitBackward0) with ``a.output_nr == 0`` and
    ``b.output_nr == 1``.

    ``outputs`` holds one :class:`OutputEdge` per output; consumers' edges are those objects, never the node
    itself. The engine gathers the gradients of each output separately and runs the derivative rule once
    with a tuple of them, one per output in order, zeros of the output's shape and dtype for outputs that
    received none (as PyTorch's engine materializes undefined gradients for these functions). Rules of such
    ops (``Op.multi_output``) take that tuple as their first argument. ``out_shape`` and ``out_dtype`` are
    those of output 0.
    """

    __slots__ = ("outputs",)

    def __init__(self, op, edges, saved, params, in_shapes, out_shapes, out_dtype, dtype):
        super().__init__(op, edges, saved, params, in_shapes, out_shapes[0] if out_shapes else (), out_dtype,
                         dtype)
        self.outputs = tuple(OutputEdge(self, k, s, out_dtype) for k, s in enumerate(out_shapes))

    def apply(self, grads, create_graph: bool):
        """Run the derivative rule on the gradients of the outputs (a list with None for outputs that got
        none): fills each retained output's ``.grad``, replaces None by zeros, and calls :meth:`Node.apply`."""
        filled = []
        for out, g in zip(self.outputs, grads):
            if g is None:
                g = np.zeros(out.out_shape, dtype=out.out_dtype)
                if create_graph:
                    g = Tensor(g)
            elif out.retained is not None:
                t = out.retained()
                if t is not None:
                    _accumulate_leaf(t, g, create_graph)
            filled.append(g)
        return Node.apply(self, tuple(filled), create_graph)


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


#: Backward functions PyTorch defines in C++ only: their ``name()`` is namespaced
#: (``"torch::autograd::CopySlices"``), while their class name (shown by repr and in a tensor's ``grad_fn=<...>``)
#: is the short one.
_CPP_FUNCTIONS = frozenset({"AccumulateGrad", "CopySlices", "CopyBackwards"})


def torch_name(fn) -> str:
    """What PyTorch's ``grad_fn.name()`` returns for the node (or AccumulateGrad) ``fn``: its class name, or
    ``torch::autograd::`` and it for the functions of :data:`_CPP_FUNCTIONS`."""
    name = fn.name()
    return "torch::autograd::" + name if name in _CPP_FUNCTIONS else name


class AccumulateGrad:
    """The graph node PyTorch shows for a leaf that requires grad; ``variable`` is the leaf."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor):
        self.variable = variable

    def name(self) -> str:
        """Always ``"AccumulateGrad"``."""
        return "AccumulateGrad"

    @property
    def next_functions(self) -> tuple:
        """Always empty."""
        return ()

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


# ------------------------------------------------------------------------------------------------ backward
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


def _accumulate_leaf(leaf: Tensor, grad, create_graph: bool) -> None:
    # AccumulateGrad (torch/csrc/autograd/functions/accumulate_grad.h): the first gradient is stored as a
    # new tensor (copied so it never aliases a buffer the caller or another node holds), later ones are
    # added in place, or out of place when recording the backward pass.
    old = leaf._grad
    if create_graph:
        leaf._grad = grad if old is None else old + grad
        return
    if old is None:
        leaf._grad = Tensor(np.array(grad, copy=True))
    elif old.requires_grad:
        leaf._grad = Tensor(old.data + grad)
    else:
        if not old.data.flags.writeable:
            old.data = np.array(old.data)
        old.data += grad


def _add(a, b):
    return b if a is None else a + b


def _run(roots, root_grads, retain_graph: bool, create_graph: bool, capture=None):
    """The engine. ``roots``: output Tensors; ``root_grads``: their gradients (ndarray, or Tensor when
    create_graph). With ``capture`` (id(tensor) -> tensor) the gradients of those tensors are returned in a
    dict instead of being accumulated into ``.grad``."""
    if _versions.modified and saved_check is not None:  # only after an in-place modification
        saved_check(roots)
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
            # (.data: the weak dictionaries' own dict, whose truth test is C's; theirs is a Python __len__ call,
            # half a microsecond per node over the three checks)
            if _TENSOR_HOOKS.data and node in _TENSOR_HOOKS:
                per_output = _TENSOR_HOOKS[node]
                if type(node) is MultiNode:
                    grad = list(grad)
                    for nr, hooks in per_output.items():
                        if grad[nr] is not None:
                            grad[nr] = _hooked(hooks, grad[nr], create_graph)
                elif 0 in per_output:
                    grad = _hooked(per_output[0], grad, create_graph)
            if _NODE_PREHOOKS.data:
                grad = _node_prehooked(node, grad, create_graph)
            if node.retained is not None:
                t = node.retained()
                if t is not None:
                    _accumulate_leaf(t, grad, create_graph)
            if capture_nodes and node in capture_nodes:
                c = capture_nodes[node]
                if type(c) is list:  # grad is a list with a slot per output
                    for t in c:
                        if grad[t._output_nr] is not None:
                            captured[id(t)] = grad[t._output_nr]
                else:
                    captured[id(c)] = grad
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
            if _NODE_HOOKS.data:
                grads = _node_hooked(node, grads, grad, create_graph)
            if anomaly is not None:
                _check_anomaly(node, grads, anomaly)
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
            entry = _LEAF_HOOKS.get(k) if _LEAF_HOOKS else None
            if entry is not None and entry[0]() is leaf and entry[1]:
                g = _hooked(entry[1], g, create_graph)
            if capture is not None:
                if k in capture:
                    captured[k] = g
            elif leaf.requires_grad:
                _accumulate_leaf(leaf, g, create_graph)
                if entry is not None and entry[0]() is leaf:
                    for hook in list(entry[2].values()):
                        hook(leaf)
    finally:
        _state.grad_enabled = prev_mode
    return captured


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


def _check_anomaly(node, grads, positions) -> None:
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
        err = EvalError(f"Function '{torch_name(node)}' returned {kind} values in its {i}th output.",
                        type="RuntimeError")
        where = positions.get(node)
        if where is not None:
            err.with_position(**where)
            err.hint = (f"anomaly mode: the backward of {node.name()} (created by the expression marked above) "
                        f"is the first to produce {'NaN' if kind == 'nan' else 'infinity'}")
        else:
            err.hint = f"anomaly mode: the backward of {node.name()} is the first to produce non-finite values"
        raise err


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


#: How many times :func:`backward` (and ``Tensor.backward``) has been called in this process: ``gradcli grad``
#: reads it around a program to know whether the program called backward itself.
backward_calls = 0


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
    global backward_calls
    backward_calls += 1
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
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
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
Node.register_prehook = _node_register(_NODE_PREHOOKS)
Node.register_prehook.__doc__ = ("``grad_fn.register_prehook(hook)``: ``hook(grad_outputs)`` before the node runs; "
                                 "a tuple it returns replaces the gradients. Returns a handle.")
Node.register_hook = _node_register(_NODE_HOOKS)
Node.register_hook.__doc__ = ("``grad_fn.register_hook(hook)``: ``hook(grad_inputs, grad_outputs)`` after the "
                              "node runs; a tuple it returns replaces grad_inputs. Returns a handle.")

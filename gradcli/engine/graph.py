"""The autograd graph: the nodes the forward pass records and what they hold.

A :class:`Node` (PyTorch's ``grad_fn``, e.g. ``<MulBackward0 object at 0x...>``) is made for every
differentiable op applied to a tensor that requires grad. It holds the op, the edges to its inputs (a Node, an
:class:`OutputEdge` to one output of a :class:`MultiNode`, a leaf Tensor, or None when that input does not require
grad), the values its derivative rule asked to save, and runs that rule (:meth:`Node.apply`). An
:class:`AccumulateGrad` stands for a leaf in ``next_functions``; :func:`_accumulate_leaf` is what it does.

Nodes are numbered in creation order (:func:`next_sequence`); each new number is checked against the node budget
of a program run (:mod:`gradcli.engine.node_budget`). What the op table installs from one layer up (the saved
values under PyTorch's names, packing inside saved tensors hooks) is assigned to this module's
``saved_attribute``, ``saved_attribute_names`` and ``pack_saved``. The backward pass that walks the graph is
:mod:`gradcli.engine.autograd`.
"""

from __future__ import annotations

import numpy as np

from . import context as _context
from .context import state as _state
from .node_budget import _graph_exceeded
from .rules import (ARG_INPUT, ARG_PARAM, ARG_RESULT, ARG_SHAPE, ARG_VARARGS, CALL_SAVED, CALL_SAVED_NEEDS,
                    CALL_SAVED_PARAMS)
from .tensor import Tensor


ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward."
)



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


# Nodes are numbered in creation order (Node.seq) by a process-wide counter (gradcli.engine.context.state.sequence):
# nodes made in several run contexts may meet in one graph.
def next_sequence() -> int:
    """Take a sequence number: every node made after this call has a larger ``seq``."""
    return next(_state.sequence)


peek_sequence = _context.peek_sequence


class NodeExtra:
    """What few graph nodes carry (``Node.extra``, None for most nodes).

    Attributes:
        tensor_hooks: per output number, the ``register_hook`` hooks (handle id -> hook) of the non-leaf tensor
            that is that output (:mod:`gradcli.engine.hooks`).
        pre_hooks: ``grad_fn.register_prehook`` hooks (handle id -> hook).
        post_hooks: ``grad_fn.register_hook`` hooks (handle id -> hook).
        metadata: the dict of ``grad_fn.metadata``, or None until it is read.
        fw_saved: forward over reverse, for a node recorded inside a forward-AD level: ``(level, {slot:
            tangent})``, the tangents of the values it saved (filled by the op table's forward AD), or None. A
            ``create_graph`` backward run inside that level gives the saved values their tangents again, so that
            the gradient's computation carries tangents (the gradient's tangent is then a Hessian-vector
            product), as PyTorch's saved variables keep their forward gradients.
    """

    __slots__ = ("tensor_hooks", "pre_hooks", "post_hooks", "metadata", "fw_saved")

    def __init__(self):
        self.tensor_hooks = {}
        self.pre_hooks = {}
        self.post_hooks = {}
        self.metadata = None
        self.fw_saved = None


def node_extra(node) -> NodeExtra:
    """``node.extra``, made on first use."""
    x = node.extra
    if x is None:
        x = node.extra = NodeExtra()
    return x


class Node:
    """One recorded operation: PyTorch's ``grad_fn`` object (``<MulBackward0 object at 0x...>``).

    Attributes:
        op: the :class:`gradcli.ops.core.base.Op` that was applied.
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
            not count the consumers of a node used once (most nodes): see :func:`gradcli.engine.autograd._run`.
        extra: None, or the node's rare parts (a :class:`NodeExtra`: hooks, ``metadata``, saved tangents); one
            slot for all of them, since each slot costs every node made.
    """

    __slots__ = ("op", "edges", "saved", "params", "in_shapes", "out_shape", "out_dtype", "dtype", "seq",
                 "retained", "uses", "extra", "__weakref__")

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
        self.extra = None
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
            elif e._meta is not None and e._meta.no_grad_view == 1:  # a view made in no_grad mode: no edge
                out.append((None, 0))
            else:
                out.append((AccumulateGrad(e), 0))
        return tuple(out)

    @property
    def metadata(self) -> dict:
        """A dict for the user's own data about this node, empty at first and kept with the node (PyTorch's
        ``grad_fn.metadata``)."""
        x = node_extra(self)
        if x.metadata is None:
            x.metadata = {}
        return x.metadata

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
                    if _state.fw_level is not None:
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
    # the saved value's tangent at the active forward-AD level, on the Tensor rebuilt from it (NodeExtra.fw_saved)
    x = node.extra
    entry = None if x is None else x.fw_saved
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



#: Backward functions PyTorch defines in C++ only: their ``name()`` is namespaced
#: (``"torch::autograd::CopySlices"``), while their class name (shown by repr and in a tensor's ``grad_fn=<...>``)
#: is the short one.
_CPP_FUNCTIONS = frozenset({"AccumulateGrad", "CopySlices", "CopyBackwards", "NotImplemented"})


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



def _accumulate_leaf(leaf: Tensor, grad, create_graph: bool) -> None:
    # AccumulateGrad (torch/csrc/autograd/functions/accumulate_grad.h): the first gradient is stored as a
    # new tensor (copied so it never aliases a buffer the caller or another node holds), later ones are
    # added in place, or out of place when recording the backward pass.
    old = leaf._grad
    meta = leaf._meta
    if meta is not None and meta.grad_dtype:  # Tensor.grad_dtype set: gradients are cast to it
        grad = grad.to(meta.grad_dtype) if isinstance(grad, Tensor) else np.asarray(grad, dtype=meta.grad_dtype.np)
    if create_graph:
        leaf._grad = grad if old is None else old + grad
        return
    if old is None:
        # PyTorch's gradient layout contract: the first gradient is laid out as the leaf (numpy's order="K"
        # of a dense leaf), unless torch.autograd.enforce_grad_layout_policy(False) keeps the gradient's own
        g = np.array(grad, copy=True) if _state.grad_layout_relaxed else np.empty_like(leaf.data, dtype=grad.dtype)
        if not _state.grad_layout_relaxed:
            g[...] = grad
        leaf._grad = Tensor(g)
    elif old.requires_grad:
        leaf._grad = Tensor(old.data + grad)
    else:
        if not old.data.flags.writeable:
            old.data = np.array(old.data)
        old.data += grad

"""What a graph node saved for backward, under PyTorch's names: ``y.grad_fn._saved_self``, ``_saved_result``,
``_saved_dim``, ``_saved_self_sym_sizes``.

PyTorch generates one attribute per value a backward formula of tools/autograd/derivatives.yaml names, from the
argument names of the aten function (``self``, ``other``, ``exponent``, ``mat2``), ``result`` for the output,
and ``<arg>_sym_sizes`` for an input's shape (``self.sym_sizes()`` in a formula). gradcli's derivative rule
names what it needs in the same way (:meth:`gradcli.ops.core.declare.Op.defvjp`), so the attributes are derived from
the rule's declaration, with no table per op:

=========================================  ===========================================================
the rule names                              the node has
=========================================  ===========================================================
a tensor input (``input``, ``other``)       ``_saved_self`` for ``input`` (the aten name of the first
                                            argument), else ``_saved_<name>`` (``_saved_other``)
``result``                                  ``_saved_result``
a non-tensor parameter (``dim``)            ``_saved_dim``; a ``*dims`` parameter: the tuple of them
``<input>_shape``                           ``_saved_self_sym_sizes`` (``_saved_<name>_sym_sizes``)
``needs_input_grad``                        nothing (PyTorch's ``should_compute_output`` is no value)
=========================================  ===========================================================

Where gradcli's rule saves something other than PyTorch's formula (``mul`` saves both factors where PyTorch saves
only those a needed gradient uses, and gives None for the other; ``x.sum()`` saves dim and keepdim where
PyTorch's SumBackward0 saves only self_sym_sizes), the names or values differ: tests/engine/
test_saved_names.py compares every op sample of the op table with PyTorch and lists those differences with
their reasons. An op whose rule names nothing (or a node that is not an op's: a custom Function's) has no
``_saved_`` attributes; nothing here needs an entry when an op is added.

Values are PyTorch's: a saved leaf input is the leaf itself (``x.grad_fn._saved_self is x``), a saved output a
new tensor with the node as grad_fn, non-tensor values as Python numbers, tuples and bools. (A saved input made
by the graph is a new tensor of its values with its producer as grad_fn, where PyTorch returns the input object
itself: nodes keep arrays, not the input Tensors. A constant input is shown in the dtype the op computed in.) After a
backward without ``retain_graph`` freed the node's saved values, a saved tensor raises PyTorch's RuntimeError;
the non-tensor values stay. Under ``torch.autograd.graph.saved_tensors_hooks`` (:mod:`gradcli.ops.core.saved_hooks`),
a saved tensor is what the unpack hook returns.
"""

from __future__ import annotations

import numpy as np

from ...engine import graph
from .declare import Op
from ...engine.rules import ARG_INPUT, ARG_PARAM, ARG_RESULT, ARG_SHAPE, ARG_VARARGS
from ...engine.tensor import Tensor

PREFIX = "_saved_"

#: gradcli's name of a tensor input -> the aten argument name PyTorch's attribute uses. PyTorch calls the first
#: argument of a method-like function ``self``; gradcli's ops call it ``input`` (torch.mul(input, other)).
TORCH_ARG = {"input": "self"}

#: Parameters that aten declares ``int`` or ``int[]`` (dimensions, positions, counts). PyTorch's generated
#: attributes return a saved ``int64_t`` through an unsigned conversion, so a negative one reads as its two's
#: complement: ``x.sum(-1).grad_fn._saved_dim == (18446744073709551615,)``. Scalars (``exponent``, ``alpha``,
#: ``min``) keep their sign.
INT64_PARAMS = frozenset({"dim", "dims", "dim0", "dim1", "dim2", "index", "diagonal", "offset", "start", "end",
                          "step", "ignore_index", "k", "split_size", "padding_idx", "repeats", "sizes", "size",
                          "source", "destination", "length"})

#: Ops whose aten ``dim`` is ``int[]`` (``sum.dim_IntList(Tensor self, int[1]? dim, ...)``): PyTorch saves a
#: tuple where gradcli's op takes one int.
DIM_LISTS = frozenset({"sum", "mean", "amax", "amin", "logsumexp", "std", "var", "_std", "_var", "_vector_norm"})

#: ``reduction`` as aten's enum (at::Reduction): what PyTorch saves for a loss's reduction string.
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}

#: The one kind of value each entry of :func:`names` reads.
TENSOR, PARAM, VARARGS, SHAPE = "tensor", "param", "varargs", "shape"


def torch_arg(name: str) -> str:
    """PyTorch's argument name for gradcli's input or parameter ``name`` (``input`` -> ``self``)."""
    return TORCH_ARG.get(name, name)


def names(op) -> dict:
    """The ``_saved_*`` attributes of the nodes of ``op``: ``{attribute: (kind, index)}``, where ``kind`` is
    :data:`TENSOR` (index: the slot in ``Node.saved``), :data:`PARAM` or :data:`VARARGS` (index: the position
    among the non-tensor parameters) or :data:`SHAPE` (index: the tensor input). Derived from the op's rule
    (:attr:`Op.vjp_plan`, :attr:`Op.save_plan`) and parameter names; empty for objects that are not ops of the
    table. Cached on the op."""
    cached = getattr(op, "_saved_names", None)
    if cached is not None:
        return cached
    out: dict = {}
    if isinstance(op, Op) and op.vjp_plan:  # (a custom Function's node, a hook's node: no op of the table)
        plan, inputs, params = op.vjp_plan, op.input_names, op.param_names
        save_plan = op.save_plan
        for kind, i in plan:
            if kind == ARG_INPUT:
                out[PREFIX + torch_arg(inputs[save_plan[i]])] = (TENSOR, i)
            elif kind == ARG_RESULT:
                out[PREFIX + "result"] = (TENSOR, i)
            elif kind == ARG_PARAM:
                out[PREFIX + torch_arg(params[i])] = (PARAM, i)
            elif kind == ARG_VARARGS:
                out[PREFIX + torch_arg(params[i])] = (VARARGS, i)
            elif kind == ARG_SHAPE:
                out[PREFIX + torch_arg(inputs[i]) + "_sym_sizes"] = (SHAPE, i)
    try:
        op._saved_names = out
    except AttributeError:  # an object with __slots__: computed again next time
        pass
    return out


RAW_PREFIX = "_raw_saved_"

#: ``grad_fn._raw_saved_<name>``'s class (gradcli.ops.core.saved_hooks.SavedTensor, which sets it: hooks on one value).
raw_saved = None


def attribute_names(node) -> list:
    """The ``_saved_*`` attribute names of a graph node, and ``_raw_saved_*`` for its saved tensors, sorted (what
    ``dir(node)`` adds)."""
    table = names(node.op)
    return sorted(list(table) + [RAW_PREFIX + n[len(PREFIX):] for n, (kind, _) in table.items() if kind == TENSOR])


def _python(value, int64: bool = False):
    # a non-tensor value as PyTorch returns it: tuples for int lists, Python numbers for numpy scalars, a
    # tensor for an index array; int64_t values through PyTorch's unsigned conversion (INT64_PARAMS)
    if isinstance(value, (list, tuple)):
        return tuple(_python(v, int64) for v in value)
    if isinstance(value, np.ndarray):
        return Tensor(value)
    if isinstance(value, np.generic):
        value = value.item()
    if int64 and type(value) is int and value < 0:
        return value + 2 ** 64
    return value


def _param(op, name: str, value):
    # a saved non-tensor parameter under PyTorch's type (see INT64_PARAMS, DIM_LISTS, REDUCTIONS)
    if name == "reduction" and value in REDUCTIONS:
        return REDUCTIONS[value]
    if name == "dim" and type(value) is int and op.name in DIM_LISTS:
        value = (value,)
    return _python(value, name in INT64_PARAMS)


def saved_value(node, attribute: str):
    """``node._saved_<name>``: the value the node saved under PyTorch's name (see the module docstring);
    ``node._raw_saved_<name>`` for a saved tensor: the :class:`gradcli.ops.core.saved_hooks.SavedTensor` holding it.

    Raises:
        AttributeError: PyTorch's ``'MulBackward0' object has no attribute '_saved_x'`` for a name the node's op
            does not save.
        RuntimeError: PyTorch's "Trying to backward through the graph a second time (or directly access saved
            tensors after they have already been freed). ..." for a saved tensor freed by backward.
        TypeError: PyTorch's message when an unpack hook returns something other than a Tensor.
    """
    raw = attribute.startswith(RAW_PREFIX)
    entry = names(node.op).get(PREFIX + attribute[len(RAW_PREFIX):] if raw else attribute)
    if entry is None or raw and entry[0] != TENSOR:
        raise AttributeError(f"'{node.name()}' object has no attribute '{attribute}'")
    kind, i = entry
    if raw:  # grad_fn._raw_saved_self: the saved value itself, whose hooks can be set
        return raw_saved(node, i)
    op = node.op
    if kind == PARAM:
        return _param(op, op.param_names[i], node.params[i])
    if kind == VARARGS:  # permute(x, 2, 0, 1) or permute(x, (2, 0, 1)): PyTorch's dims=(2, 0, 1)
        rest = tuple(node.params[i:])
        if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
            rest = tuple(rest[0])
        return _param(op, op.param_names[i], rest)
    if kind == SHAPE:
        shape = node.in_shapes[i] if node.in_shapes is not None else None
        return None if shape is None else tuple(int(s) for s in shape)
    return saved_tensor(node, i)


def saved_tensor(node, slot: int):
    """The Tensor PyTorch's SavedVariable gives back for slot ``slot`` of ``node.saved``: the input the op was
    called with where gradcli still has it (a leaf that requires grad: the same object), a tensor of the saved
    values with the producing node as grad_fn for an input made by the graph, the output (a new tensor whose
    grad_fn is the node itself), a constant's values; the unpack hook's result under saved tensors hooks.

    Raises:
        RuntimeError: if backward freed the saved values (PyTorch's message).
    """
    saved = node.saved
    if saved is graph._FREED:
        raise RuntimeError(graph.ERR_BACKWARD_TWICE)
    if type(saved) is not tuple:  # a gradcli.ops.core.saved_hooks.Packed: the unpack hook's tensor
        return saved.unpack_tensor(slot)
    d = saved[slot]
    if d is None:
        return None
    return as_tensor(node, slot, d)


def as_tensor(node, slot: int, d: np.ndarray):
    """The saved array ``d`` of ``node``'s slot as the Tensor PyTorch would show (see :func:`saved_tensor`)."""
    op = node.op
    i = op.save_plan[slot]
    if i == op.ninputs:  # the output
        t = Tensor(d, True, node)
        return t
    e = node.edges[i]
    if e is None:  # a constant: its values (in the dtype the op computed in)
        return Tensor(d)
    if type(e) is graph.Node or isinstance(e, graph.Node):
        return Tensor(d if d.dtype == e.out_dtype else d.astype(e.out_dtype), True, e)
    if type(e) is graph.OutputEdge:
        t = Tensor(d if d.dtype == e.out_dtype else d.astype(e.out_dtype), True, e.node)
        t._output_nr = e.nr
        return t
    # a leaf that requires grad: the leaf itself, as PyTorch returns the variable it saved
    return e


graph.saved_attribute = saved_value
graph.saved_attribute_names = attribute_names

"""What a run produced, as plain data: no rich, no JSON, no formatting (the renderers do that).

Shapes are tuples of ints, dtypes PyTorch's names without ``torch.`` (``"float32"``), values numpy arrays.

The classes are plain classes with their fields listed in ``_fields`` (``repr`` shows them, as a dataclass's
does); they are written out rather than made by ``dataclasses``, whose class creation cost about 2.5 ms of every
start-up. The classes that hold arrays compare by identity: a comparison field by field would compare numpy
arrays, whose ``==`` is elementwise, so it could never answer. :class:`ErrorInfo`, plain data, compares by value.
"""

from __future__ import annotations

import math

import numpy as np


class _Record:
    """The ``repr`` of a record: ``Name(field=value, ...)`` over ``_fields``."""

    _fields: tuple = ()

    def __repr__(self) -> str:
        d = self.__dict__
        return f"{type(self).__name__}({', '.join(f'{k}={d[k]!r}' for k in self._fields)})"


def nonfinite(value) -> list:
    """Which non-finite values an array (or None) holds: a sublist of ``["nan", "inf", "-inf"]``, empty when
    every value is finite (always for integer and bool arrays)."""
    if value is None:
        return []
    a = np.asarray(value)
    if a.dtype.kind not in "fc" or a.size == 0:
        return []
    if a.size <= 16 and a.dtype.kind == "f":  # a few elements: Python is faster than numpy's passes
        vals = a.reshape(-1).tolist()
        if all(map(math.isfinite, vals)):
            return []
        return [k for k, hit in (("nan", any(v != v for v in vals)), ("inf", math.inf in vals),
                                 ("-inf", -math.inf in vals)) if hit]
    if np.isfinite(a).all():
        return []
    kinds = []
    if np.isnan(a).any():
        kinds.append("nan")
    if np.isposinf(a).any():
        kinds.append("inf")
    if np.isneginf(a).any():
        kinds.append("-inf")
    return kinds


class TensorInfo(_Record):
    """A tensor's value and metadata. ``grad_fn`` is PyTorch's class name or None for leaves."""
    _fields = ('value', 'shape', 'dtype', 'grad_fn', 'requires_grad')

    def __init__(self, value: np.ndarray, shape: tuple, dtype: str, grad_fn: str | None = None,
                 requires_grad: bool = False):
        self.value = value
        self.shape = shape
        self.dtype = dtype
        self.grad_fn = grad_fn
        self.requires_grad = requires_grad


class InputInfo(_Record):
    """A named leaf: its value, whether it requires grad, and its ``.grad`` after the last backward call."""
    _fields = ('name', 'value', 'grad', 'kind')

    # kind: "input" (-i), "const" (-c) or "leaf" (a program variable that requires grad)
    def __init__(self, name: str, value: TensorInfo, grad: np.ndarray | None = None, kind: str = "input"):
        self.name = name
        self.value = value
        self.grad = grad
        self.kind = kind


class GraphNode(_Record):
    """One node of the autograd graph: a grad_fn, or a leaf (``name`` "AccumulateGrad", ``leaf`` its name).

    ``inputs`` lists the ids of the nodes that feed it (its ``next_functions``). ``shape`` is the output's;
    for a node with several outputs (SplitBackward0) that of output 0, and ``output_shapes`` lists them all
    (None for a node with one output)."""
    _fields = ('id', 'name', 'shape', 'dtype', 'inputs', 'leaf', 'output_shapes', 'var', 'value', 'grad', 'saved',
               'seq')

    # What the pictures, --graph-values and --explain add (None when not recorded; see gradcli.app.recording):
    # var: the program variable the node's output was assigned to ("h"), else None
    # value: its forward value (an array; a list of arrays, one per output, for several outputs)
    # grad: the gradient that flowed into it (shaped like value; a leaf's .grad)
    # saved: --graph-saved: (name, array) of what its backward saved ("self", "result")
    # seq: creation order (later nodes run first in backward); None for leaves
    def __init__(self, id: str, name: str, shape: tuple, dtype: str, inputs: list, leaf: str | None = None,
                 output_shapes: list | None = None, var: str | None = None, value: object = None, grad: object = None,
                 saved: list | None = None, seq: int | None = None):
        self.id = id
        self.name = name
        self.shape = shape
        self.dtype = dtype
        self.inputs = inputs
        self.leaf = leaf
        self.output_shapes = output_shapes
        self.var = var
        self.value = value
        self.grad = grad
        self.saved = saved
        self.seq = seq


class Graph(_Record):
    """The recorded graph of the output, root first. ``edges`` are (from id, to id, output_nr): gradient flows
    to→from; output_nr is which output of 'from' feeds 'to' (0 unless 'from' has several outputs)."""
    _fields = ('nodes', 'edges', 'values')

    # values: forward values and gradients were recorded (--graph-values)
    def __init__(self, nodes: list | None = None, edges: list | None = None, values: bool = False):
        self.nodes = [] if nodes is None else nodes
        self.edges = [] if edges is None else edges
        self.values = values

    def node(self, id: str) -> "GraphNode":
        """The node with this id.

        Raises:
            KeyError: no such node.
        """
        for n in self.nodes:
            if n.id == id:
                return n
        raise KeyError(id)


class GradResult(_Record):
    """The result of ``gradcli grad``: the output, every named leaf with its gradient, the gradient after each
    backward call (``calls[k][name]``), and the graph."""
    _fields = ('program', 'output', 'inputs', 'calls', 'graph', 'printed', 'check', 'default_dtype', 'explanation',
               'note', 'backward_by_program')

    # check: a gradcli.app.finite_differences.CheckResult with --check
    # default_dtype: the default float dtype of the run (decides PyTorch's ``dtype=`` in values)
    # explanation: an Explanation with --explain
    # note: why there are no gradients, when there are none: the output does not require grad (gradcli then
    # calls no backward; exit 0). None otherwise.
    # backward_by_program: the program called backward itself: the gradients are as it left them
    def __init__(self, program: str, output: TensorInfo, inputs: list, calls: list, graph: Graph, printed: str = "",
                 check: object = None, default_dtype: str = "float32", explanation: object = None,
                 note: str | None = None, backward_by_program: bool = False):
        self.program = program
        self.output = output
        self.inputs = inputs
        self.calls = calls
        self.graph = graph
        self.printed = printed
        self.check = check
        self.default_dtype = default_dtype
        self.explanation = explanation
        self.note = note
        self.backward_by_program = backward_by_program

    def grads(self) -> dict:
        """Name → final gradient (None if the output does not depend on it) of the leaves requiring grad; empty
        when no backward ran (:attr:`note`)."""
        if self.note is not None:
            return {}
        return {i.name: i.grad for i in self.inputs if i.value.requires_grad}


class Sent(_Record):
    """What one node's backward sent to one of its inputs (``--explain``): the input's graph id (None for an
    input that does not require grad, which gets nothing), the input's name in the op (``"self"``,
    ``"other"``), and the gradient summed to the input's shape (None when the rule gave none)."""
    _fields = ('to', 'input', 'grad')

    def __init__(self, to: str | None, input: str, grad: object = None):
        self.to = to
        self.input = input
        self.grad = grad


class ExplainStep(_Record):
    """One node of the chain rule, in backward order (``--explain``): the graph node's id, grad_fn name and
    program variable, its local derivative as a formula (:mod:`gradcli.ops.core.formulas`), its forward value, the
    gradient coming in (summed over its consumers) and what it sent to each input."""
    _fields = ('id', 'name', 'var', 'formula', 'value', 'grad_in', 'sent')

    def __init__(self, id: str, name: str, var: str | None, formula: str, value: object, grad_in: object,
                 sent: list | None = None):
        self.id = id
        self.name = name
        self.var = var
        self.formula = formula
        self.value = value
        self.grad_in = grad_in
        self.sent = [] if sent is None else sent


class Explanation(_Record):
    """The chain rule of the last backward call, node by node (``gradcli grad --explain``): ``steps`` in
    backward order (root first), the gradient the root started with (``seed``: ones for a one-element output,
    else ``--gradient``), and what each named leaf received in that call (``leaves``: name → gradient, None
    for a leaf the output does not depend on)."""
    _fields = ('seed', 'steps', 'leaves')

    def __init__(self, seed: object, steps: list | None = None, leaves: dict | None = None):
        self.seed = seed
        self.steps = [] if steps is None else steps
        self.leaves = {} if leaves is None else leaves


class ErrorInfo(_Record):
    """An error as a user sees it, as plain data: the type shown before the message (PyTorch's, or gradcli's:
    ``SyntaxError``, ``InputError``, ...), the message, the 1-based ``line``/``column`` in the text it refers
    to (None when unknown), an optional ``hint``, and ``excerpt``: that text's line and a caret under the
    column (empty without a position)."""
    _fields = ('type', 'message', 'line', 'column', 'hint', 'excerpt')

    def __init__(self, type: str, message: str, line: int | None = None, column: int | None = None,
                 hint: str | None = None, excerpt: list | None = None):
        self.type = type
        self.message = message
        self.line = line
        self.column = column
        self.hint = hint
        self.excerpt = [] if excerpt is None else excerpt

    def __eq__(self, other) -> bool:
        return type(other) is ErrorInfo and self.__dict__ == other.__dict__

    __hash__ = None  # mutable, compared by value (as a dataclass with eq=True)


class EntryResult(_Record):
    """What one ``gradcli batch`` entry produced: the 1-based ``line`` where it starts in the input, its
    ``text`` (the program), and either its ``result`` or its ``error``; ``id`` is the entry's own id, echoed
    when ``has_id``."""
    _fields = ('line', 'text', 'result', 'error', 'id', 'has_id')

    def __init__(self, line: int, text: str, result: GradResult | None = None, error: ErrorInfo | None = None,
                 id: object = None, has_id: bool = False):
        self.line = line
        self.text = text
        self.result = result
        self.error = error
        self.id = id
        self.has_id = has_id

    @property
    def ok(self) -> bool:
        """True when the entry ran (no error)."""
        return self.error is None

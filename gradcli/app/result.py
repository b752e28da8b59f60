"""What a run produced, as plain data: no rich, no JSON, no formatting (the renderers do that).

Shapes are tuples of ints, dtypes PyTorch's names without ``torch.`` (``"float32"``), values numpy arrays.

The classes that hold arrays compare by identity (``eq=False``): a comparison field by field would compare numpy
arrays, whose ``==`` is elementwise, so it could never answer; and without ``__eq__`` they cost less to create at
every start-up. :class:`ErrorInfo`, plain data, compares by value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


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


@dataclass(eq=False)
class TensorInfo:
    """A tensor's value and metadata. ``grad_fn`` is PyTorch's class name or None for leaves."""
    value: np.ndarray
    shape: tuple
    dtype: str
    grad_fn: str | None = None
    requires_grad: bool = False


@dataclass(eq=False)
class InputInfo:
    """A named leaf: its value, whether it requires grad, and its ``.grad`` after the last backward call."""
    name: str
    value: TensorInfo
    grad: np.ndarray | None = None
    kind: str = "input"  # "input" (-i), "const" (-c) or "leaf" (a program variable that requires grad)


@dataclass(eq=False)
class GraphNode:
    """One node of the autograd graph: a grad_fn, or a leaf (``name`` "AccumulateGrad", ``leaf`` its name).

    ``inputs`` lists the ids of the nodes that feed it (its ``next_functions``). ``shape`` is the output's;
    for a node with several outputs (SplitBackward0) that of output 0, and ``output_shapes`` lists them all
    (None for a node with one output)."""
    id: str
    name: str
    shape: tuple
    dtype: str
    inputs: list
    leaf: str | None = None
    output_shapes: list | None = None
    # What the pictures, --graph-values and --explain add (None when not recorded; see gradcli.app.recording):
    var: str | None = None  # the program variable the node's output was assigned to ("h"), else None
    value: object = None  # its forward value (an array; a list of arrays, one per output, for several outputs)
    grad: object = None  # the gradient that flowed into it (shaped like value; a leaf's .grad)
    saved: list | None = None  # --graph-saved: (name, array) of what its backward saved ("self", "result")
    seq: int | None = None  # creation order (later nodes run first in backward); None for leaves


@dataclass(eq=False)
class Graph:
    """The recorded graph of the output, root first. ``edges`` are (from id, to id, output_nr): gradient flows
    to→from; output_nr is which output of 'from' feeds 'to' (0 unless 'from' has several outputs)."""
    nodes: list = field(default_factory=list)
    edges: list = field(default_factory=list)
    values: bool = False  # forward values and gradients were recorded (--graph-values)

    def node(self, id: str) -> "GraphNode":
        """The node with this id.

        Raises:
            KeyError: no such node.
        """
        for n in self.nodes:
            if n.id == id:
                return n
        raise KeyError(id)


@dataclass(eq=False)
class GradResult:
    """The result of ``gradcli grad``: the output, every named leaf with its gradient, the gradient after each
    backward call (``calls[k][name]``), and the graph."""
    program: str
    output: TensorInfo
    inputs: list
    calls: list
    graph: Graph
    printed: str = ""
    check: object = None  # a gradcli.app.finite_differences.CheckResult with --check
    default_dtype: str = "float32"  # the default float dtype of the run (decides PyTorch's ``dtype=`` in values)
    explanation: object = None  # an Explanation with --explain
    # Why there are no gradients, when there are none: the output does not require grad (gradcli then calls no
    # backward; exit 0). None otherwise.
    note: str | None = None
    backward_by_program: bool = False  # the program called backward itself: the gradients are as it left them

    def grads(self) -> dict:
        """Name → final gradient (None if the output does not depend on it) of the leaves requiring grad; empty
        when no backward ran (:attr:`note`)."""
        if self.note is not None:
            return {}
        return {i.name: i.grad for i in self.inputs if i.value.requires_grad}


@dataclass(eq=False)
class Sent:
    """What one node's backward sent to one of its inputs (``--explain``): the input's graph id (None for an
    input that does not require grad, which gets nothing), the input's name in the op (``"self"``,
    ``"other"``), and the gradient summed to the input's shape (None when the rule gave none)."""
    to: str | None
    input: str
    grad: object = None


@dataclass(eq=False)
class ExplainStep:
    """One node of the chain rule, in backward order (``--explain``): the graph node's id, grad_fn name and
    program variable, its local derivative as a formula (:mod:`gradcli.ops.core.formulas`), its forward value, the
    gradient coming in (summed over its consumers) and what it sent to each input."""
    id: str
    name: str
    var: str | None
    formula: str
    value: object
    grad_in: object
    sent: list = field(default_factory=list)


@dataclass(eq=False)
class Explanation:
    """The chain rule of the last backward call, node by node (``gradcli grad --explain``): ``steps`` in
    backward order (root first), the gradient the root started with (``seed``: ones for a one-element output,
    else ``--gradient``), and what each named leaf received in that call (``leaves``: name → gradient, None
    for a leaf the output does not depend on)."""
    seed: object
    steps: list = field(default_factory=list)
    leaves: dict = field(default_factory=dict)


@dataclass
class ErrorInfo:
    """An error as a user sees it, as plain data: the type shown before the message (PyTorch's, or gradcli's:
    ``SyntaxError``, ``InputError``, ...), the message, the 1-based ``line``/``column`` in the text it refers
    to (None when unknown), an optional ``hint``, and ``excerpt``: that text's line and a caret under the
    column (empty without a position)."""
    type: str
    message: str
    line: int | None = None
    column: int | None = None
    hint: str | None = None
    excerpt: list = field(default_factory=list)


@dataclass(eq=False)
class EntryResult:
    """What one ``gradcli batch`` entry produced: the 1-based ``line`` where it starts in the input, its
    ``text`` (the program), and either its ``result`` or its ``error``; ``id`` is the entry's own id, echoed
    when ``has_id``."""
    line: int
    text: str
    result: GradResult | None = None
    error: ErrorInfo | None = None
    id: object = None
    has_id: bool = False

    @property
    def ok(self) -> bool:
        """True when the entry ran (no error)."""
        return self.error is None

"""The stages of the application pipeline, over plain data: what every job (:mod:`gradcli.app.jobs`) is made of.

* :func:`load` (program text → :class:`Program`: parsed, syntax errors before anything runs);
* :func:`bind` (a program, the ``-i``/``-c`` specs and where its output goes → :class:`Bound`: an interpreter with
  the inputs in its namespace);
* :func:`execute` (→ :class:`Outcome`: the output tensor, the leaves, the backward calls the program made itself,
  and the program as a function of its inputs);
* differentiating an outcome (:func:`gradcli.app.calculator.differentiate`, one entry per mode in its table);
* :func:`describe` (→ the :class:`~gradcli.app.result.Graph` under the output).

Each stage runs in the active run context (:func:`run_context`: the job's dtype, seed and anomaly mode). Nothing
here formats output; the engine's bookkeeping (a leaf's ``.grad``, the count of backward calls) is read here and
handed on as plain data, so no front end needs it.

The records here are plain classes, as those of :mod:`gradcli.app.result` are (``dataclasses`` would cost
start-up time); :class:`GradRequest` stays a dataclass (``dataclasses.replace`` derives requests from it).
"""

from __future__ import annotations

import itertools

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..engine import dtypes
from ..engine.context import RunContext, current as current_context
from ..engine.errors import EvalError, GradcliError, InputError
from ..engine.graph import AccumulateGrad, MultiNode, Node, OutputEdge
from ..engine.tensor import Tensor
from ..language import nodes
from ..language.build import build_program
from ..language.interpreter import Interpreter
from ..language.specs import Spec, evaluate_spec, make_spec
from ..ops import to_tensor
from .hints import backward_error, program_error
from .result import Graph, GraphNode, TensorInfo, _Record


@dataclass
class GradRequest:
    """What to compute. ``inputs``/``consts`` are ``NAME=SPEC`` strings (``-i``/``-c``) or ``(name, value)``
    pairs (value: SPEC text, or a number or nested lists); ``gradient`` is a SPEC (or such a value) for v of
    the vector-Jacobian product; ``dtype`` the default float dtype ("float32" or "float64")."""
    program: str
    inputs: list = field(default_factory=list)
    consts: list = field(default_factory=list)
    gradient: str | None = None
    repeat: int = 1
    zero_grad: bool = False
    seed: int | None = None
    dtype: str = "float32"
    filename: str = "<expr>"
    max_steps: int | None = None  # None: the ``steps`` limit (gradcli.engine.limits)
    anomaly: bool = False  # name the first op whose backward produces NaN/inf (torch.autograd.detect_anomaly)
    # What the pictures need (gradcli.app.recording); all off by default, and then nothing is recorded:
    graph_names: bool = False  # name graph nodes by the program variables they were assigned to (--graph)
    graph_values: bool = False  # each node's forward value and the gradient that flowed into it (--graph-values)
    graph_saved: bool = False  # what each node saved for backward (--graph-saved)
    explain: bool = False  # the chain rule of the last backward call, node by node (--explain)


def tensor_info(t: Tensor) -> TensorInfo:
    """The plain-data view of a tensor."""
    return TensorInfo(value=t.data, shape=tuple(t.data.shape), dtype=t.dtype.name,
                      grad_fn=None if t.grad_fn is None else t.grad_fn.name(), requires_grad=t.requires_grad)


class Program(_Record):
    """A parsed program: its ``text``, the ``filename`` its messages name, and its syntax ``tree``
    (:class:`gradcli.language.nodes.Program`)."""
    _fields = ("text", "filename", "tree")

    def __init__(self, text: str, filename: str, tree):
        self.text, self.filename, self.tree = text, filename, tree


class Bound(_Record):
    """A program bound to its inputs: the ``interp`` (an :class:`~gradcli.language.interpreter.Interpreter` whose
    globals hold them) and ``named``: ``(name, tensor, kind)`` of the specs, kind "input" (``-i``, requires grad)
    or "const" (``-c``)."""
    _fields = ("program", "interp", "named")

    def __init__(self, program: Program, interp, named: list | None = None):
        self.program, self.interp, self.named = program, interp, [] if named is None else named


class Outcome(_Record):
    """What running a bound program gave.

    Attributes:
        output: the program's output (its last expression), a Tensor (a tuple of them for a transform's
            several outputs).
        leaves: ``(name, tensor, kind)`` of the inputs, then of the leaves the program made itself (kind "leaf").
        backward_calls: how many backward calls the program made itself (``y.backward()`` in the program).
        wrt: ``(name, tensor)`` of the inputs a transform differentiates with respect to.
        rerun: the program as a function of those inputs: ``rerun(*values)`` binds them and runs it again (what
            torch.autograd.functional differentiates); None when it cannot run again.
        bound: the :class:`Bound` program it came from (None for a session's expression).
    """
    _fields = ("output", "leaves", "backward_calls", "wrt", "rerun", "bound")

    def __init__(self, output: Tensor, leaves: list | None = None, backward_calls: int = 0, wrt: list | None = None,
                 rerun: Callable | None = None, bound: Bound | None = None):
        self.output = output
        self.leaves = [] if leaves is None else leaves
        self.backward_calls = backward_calls
        self.wrt = [] if wrt is None else wrt
        self.rerun = rerun
        self.bound = bound


def load(text: str, filename: str = "<expr>") -> Program:
    """Parse ``text`` (the first stage: syntax errors before anything runs).

    Raises:
        GradcliSyntaxError: ``text`` does not parse (exit 2), with file, line and column.
    """
    return Program(text, filename, build_program(text, filename))


def bind(program: Program, inputs=(), consts=(), *, write=None, warn=None, max_steps: int | None = None,
         globals_: dict | None = None) -> Bound:
    """Bind ``program`` to the ``-i`` specs ``inputs`` (leaves that require grad) and the ``-c`` specs
    ``consts`` (``NAME=SPEC`` strings or ``(name, value)`` pairs), in the active run context: the interpreter
    that will run it (``write``: its ``print`` output; ``warn``: its warnings; ``max_steps``: None for the
    ``steps`` limit; ``globals_`` replaces its global namespace, a dict subclass may watch assignments).

    Raises:
        InputError, GradcliSyntaxError: a bad spec or a name given twice (exit 2).
    """
    interp = Interpreter(write=write, warn=warn, max_steps=max_steps)
    if globals_ is not None:
        interp.globals = globals_
    specs = [make_spec(s, True) for s in inputs] + [make_spec(s, False) for s in consts]
    seen = set()
    named = []
    for spec in specs:
        if spec.name in seen:
            raise InputError(f"{spec.name} is defined twice by -i/-c", type="InputSpecError")
        seen.add(spec.name)
        t = evaluate_spec(spec, interp)
        interp.globals[spec.name] = t
        named.append((spec.name, t, "input" if spec.requires_grad else "const"))
    return Bound(program, interp, named)


def prepare(req, write, warn, globals_: dict | None = None):
    """:func:`load` then :func:`bind` for a :class:`GradRequest`, in the active run context (the request's own:
    ``with run_context(req.dtype, req.seed, req.anomaly):``, in which the program then runs too).

    Returns ``(interpreter, program tree, named)`` (see :class:`Bound`).

    Raises:
        InputError, GradcliSyntaxError: bad options, specs or program text (exit 2).
    """
    program = load(req.program, req.filename)  # syntax errors before anything runs
    bound = bind(program, req.inputs, req.consts, write=write, warn=warn, max_steps=req.max_steps,
                 globals_=globals_)
    return bound.interp, program.tree, bound.named


def execute(bound: Bound, recorder=None, hint: bool = True, tuples: bool = False) -> Outcome:
    """Run the bound program (under ``recorder``, a :class:`gradcli.app.recording.Recorder`, when given): its
    output, its leaves (the inputs, then those the program made itself, by name), the backward calls it made,
    and the program as a function of its ``-i`` inputs. ``hint``: a failure gets its hint (an undefined name:
    how to give it with -i/-c). ``tuples``: a tuple of Tensors is an output too (see :func:`run_output`).

    Raises:
        EvalError: the program fails or has no numeric output (exit 1).
        InputError: the program is empty (exit 2).
    """
    interp, tree = bound.interp, bound.program.tree
    ctx = current_context()
    calls_before = ctx.backward_calls
    try:
        if recorder is None:
            output = run_output(interp, tree, tuples)
        else:
            with recorder.running():
                output = run_output(interp, tree, tuples)
            recorder.note_names(interp.globals)
    except EvalError as err:
        if hint:
            raise program_error(err)
        raise
    made = ctx.backward_calls - calls_before
    leaves = list(bound.named)
    _add_program_leaves(interp, leaves)
    wrt = [(name, t) for name, t, kind in bound.named if kind == "input"]

    def rerun(*values):
        for (name, _), v in zip(wrt, values):
            interp.globals[name] = v
        return run_output(interp, tree, tuples)

    return Outcome(output=output, leaves=leaves, backward_calls=made, wrt=wrt, rerun=rerun, bound=bound)


def describe(outcome: Outcome, recorder=None, ids_out: dict | None = None) -> Graph:
    """The graph under the outcome's output, its leaves named (:func:`build_graph`)."""
    return build_graph(outcome.output, {id(t): name for name, t, _ in outcome.leaves}, recorder, ids_out)


def grad_of(t: Tensor):
    """A copy of the array of ``t``'s ``.grad``, or None (what a result reports: later calls do not change it)."""
    return None if t._grad is None else np.array(t._grad.data)


def run_context(dtype, seed: int | None = None, anomaly: bool = False) -> RunContext:
    """The :class:`~gradcli.engine.context.RunContext` of one request (``gradcli grad``, ``run``, a batch entry): its
    default dtype, seed and anomaly mode, and the limits of the active context (``--limit``).

    Raises:
        InputError: a dtype other than float32/float64, or a seed outside torch.manual_seed's range (exit 2).
    """
    try:
        ctx = RunContext(dtype=dtypes.as_dtype(dtype), anomaly=anomaly)
    except TypeError:
        raise InputError(f"--dtype must be float32 or float64, got {dtype!r}", type="UsageError") from None
    if seed is not None:
        seed_context(ctx, seed)
    return ctx


def seed_context(ctx: RunContext, seed: int) -> None:
    """Seed ``ctx``'s generator (``--seed``).

    Raises:
        InputError: a seed outside torch.manual_seed's range, -2**63 to 2**64 - 1 (exit 2).
    """
    try:
        ctx.manual_seed(seed)
    except (ValueError, TypeError, OverflowError):
        raise InputError(f"--seed must be an integer from -2**63 to 2**64 - 1 (torch.manual_seed's range), got "
                         f"{seed}", type="UsageError") from None


def _add_program_leaves(interp, named: list) -> None:
    """Append to ``named`` the leaves the program made itself (``x = tensor(..., requires_grad=True)``), by
    name: they are reported too."""
    ids = {id(t) for _, t, _ in named}
    for name, value in interp.globals.items():
        if isinstance(value, Tensor) and value.is_leaf and value.requires_grad and id(value) not in ids:
            named.append((name, value, "leaf"))
            ids.add(id(value))


def gradient_tensor(req: GradRequest, interp, output: Tensor) -> Tensor | None:
    """``--gradient``'s tensor (the v of the vector-Jacobian product; an integer one takes the output's float
    dtype), or None."""
    if req.gradient is None:
        return None
    spec = (Spec("gradient", req.gradient, False, "--gradient") if isinstance(req.gradient, str)
            else Spec("gradient", "", False, "--gradient", data=req.gradient))
    gradient = evaluate_spec(spec, interp)
    if gradient.data.dtype.kind != "f":
        gradient = Tensor(gradient.data.astype(output.data.dtype))
    return gradient


def backward(output: Tensor, gradient=None, retain_graph: bool = False, where: str = "command") -> None:
    """``output.backward(gradient, retain_graph=...)`` with an engine failure as an :class:`EvalError` that
    carries the hint for the front end ``where`` (:mod:`gradcli.app.hints`).

    Raises:
        EvalError: PyTorch's message (a non-scalar output without a gradient, an output that does not require
            grad, ...); a GradcliError from the program's hooks as it is.
    """
    try:
        output.backward(gradient, retain_graph=retain_graph)
    except GradcliError:
        raise
    except (RuntimeError, TypeError, ValueError) as e:
        raise backward_error(e, output, gradient, where) from None


def run_output(interp, program, tuples: bool = False):
    """Run the program; its last expression (or assignment) is the output, as a Tensor. With ``tuples`` (the
    Jacobian and Hessian, whose function may return several outputs as PyTorch's may), a tuple with a Tensor
    among its items is returned as it is: torch.autograd.functional takes a tuple of outputs, and says what is
    wrong with one that is not a Tensor.

    Raises:
        EvalError: the program fails or has no numeric output (exit 1).
    """
    if not program.body:  # nothing but blanks and comments: bad input, not a failed evaluation
        raise InputError("the program is empty: give an expression, e.g. gradcli grad \"(x * x).sum()\" -i "
                         "\"x=[1., 2.]\"", type="UsageError")
    output = interp.run(program)
    if output is None:
        last = program.body[-1] if program.body else None
        if isinstance(last, nodes.ExprStmt):
            raise EvalError("the program's output is None, not a tensor", type="TypeError",
                            hint="a leaf's .grad is None until a backward call reaches it: call backward in the "
                                 "program first (y.backward(); x.grad), or let gradcli do it (output y)")
        raise EvalError("the program has no output: its last statement must be an expression (or an "
                        "assignment)", type="ValueError")
    if tuples and isinstance(output, tuple) and any(isinstance(o, Tensor) for o in output):
        return output
    if not isinstance(output, Tensor):
        try:
            output = to_tensor(output)
        except (TypeError, ValueError, OverflowError, RecursionError):
            raise EvalError(f"the output must be a tensor or a number, not {type(output).__name__}",
                            type="TypeError") from None
    return output


def build_graph(output: Tensor, leaf_names: dict, recorder=None, ids_out: dict | None = None) -> Graph:
    """The graph under ``output`` (root first, breadth first, without recursion): one node per grad_fn and per
    leaf that requires grad; leaves are named from ``leaf_names`` (id(tensor) → name) or ``leaf0``, ``leaf1``.
    A node with several outputs (SplitBackward0) is one node, with an edge to each consumer of each output
    (the edge's ``output_nr`` says which).

    With a :class:`gradcli.app.recording.Recorder` (after backward), each node also gets its variable name, its
    creation order and what the recorder kept (forward value, incoming gradient, saved tensors; a leaf's value
    and ``.grad``). ``ids_out``, when given, is filled with graph node → id (a leaf by ``id(tensor)``)."""
    graph = Graph(values=recorder is not None and recorder.record_values)
    root = output.grad_fn
    if root is None:
        return graph
    taken = set(leaf_names.values())  # node ids never collide with the names of inputs (n0, n1, leaf0)
    counter = itertools.count()

    def fresh(prefix: str) -> str:
        while (name := f"{prefix}{next(counter) if prefix == 'n' else next(unnamed)}") in taken:
            pass
        return name

    unnamed = itertools.count()
    ids = {}
    queue = [root]
    ids[root] = fresh("n")
    i = 0
    while i < len(queue):
        node = queue[i]
        i += 1
        inputs = []
        for e in node.edges:
            if e is None:
                continue
            nr = 0
            if isinstance(e, OutputEdge):  # output nr of a node with several: an edge from that node
                e, nr = e.node, e.nr
            key = e if isinstance(e, Node) else id(e)
            if key not in ids:
                if isinstance(e, Node):
                    ids[key] = fresh("n")
                    queue.append(e)
                else:
                    name = leaf_names.get(id(e))
                    if name is None:
                        name = fresh("leaf")
                    ids[key] = name
                    leaf = GraphNode(id=name, name=AccumulateGrad(e).name(), shape=tuple(e.data.shape),
                                     dtype=e.dtype.name, inputs=[], leaf=name)
                    if recorder is not None:
                        leaf.var = leaf_names.get(id(e))
                        if recorder.record_values:
                            leaf.value = np.array(e.data)
                            leaf.grad = None if e._grad is None else np.array(e._grad.data)
                    graph.nodes.append(leaf)
            inputs.append(ids[key])
            graph.edges.append((ids[key], ids[node], nr))
        output_shapes = None
        if isinstance(node, MultiNode):
            output_shapes = [tuple(o.out_shape) for o in node.outputs]
        info = GraphNode(id=ids[node], name=node.name(), shape=tuple(node.out_shape),
                         dtype=dtypes.from_numpy(node.out_dtype).name, inputs=inputs, output_shapes=output_shapes)
        if recorder is not None:
            info.var = recorder.name(node)
            info.seq = node.seq
            info.value = recorder.value(node)
            info.grad = recorder.grad(node)
            if recorder.record_saved:
                info.saved = recorder.saved.get(node, [])
        graph.nodes.append(info)
    if ids_out is not None:
        ids_out.update(ids)
    # Root first, then the other grad_fns in discovery order, leaves last.
    order = {n.id: k for k, n in enumerate(graph.nodes)}
    graph.nodes.sort(key=lambda n: (n.leaf is not None, order[n.id]))
    return graph

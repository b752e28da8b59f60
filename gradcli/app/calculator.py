"""The gradient calculation behind ``gradcli grad`` (and each entry of ``gradcli batch``).

Parse the program, bind the input specs, run it, take the last expression as the output, call backward
(``repeat`` times, keeping the graph, optionally zeroing gradients between calls), and collect a
:class:`~gradcli.app.result.GradResult`. Nothing here formats output.
"""

from __future__ import annotations

import itertools

from dataclasses import dataclass, field

import numpy as np

from ..engine import dtypes
from ..engine.graph import AccumulateGrad, MultiNode, Node, OutputEdge
from ..engine.context import RunContext, current as current_context
from ..engine.errors import EvalError, GradcliError, InputError
from .result import GradResult, Graph, GraphNode, InputInfo, TensorInfo
from ..engine.tensor import Tensor
from ..engine.lazy import lazy
from ..language import nodes
from ..language.build import build_program
from ..language.interpreter import Interpreter
from ..language.specs import Spec, evaluate_spec, make_spec
from ..ops import to_tensor
from .hints import backward_error, program_error

chain_rule = lazy("gradcli.app.chain_rule")  # --explain only
recording = lazy("gradcli.app.recording")  # --graph/--explain only

MAX_REPEAT = 10_000  # backward calls of one request (--repeat)


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


def compute(req: GradRequest, write=None, warn=None) -> GradResult:
    """Run a :class:`GradRequest`.

    Args:
        write: where the program's ``print`` output goes (default: collected into ``result.printed``).
        warn: where warnings go (default: standard error).

    Raises:
        InputError: bad options or input specs (exit 2).
        GradcliSyntaxError: the program or a spec does not parse (exit 2).
        EvalError: the program or backward fails (exit 1), with PyTorch's type and message.
        LimitError: a limit of :mod:`gradcli.engine.limits` was reached (exit 1; InputLimitError, exit 2, for input).

    The request runs in a run context of its own (:func:`run_context`): nothing it sets reaches the caller.
    """
    if not 1 <= req.repeat <= MAX_REPEAT:
        raise InputError(f"--repeat must be between 1 and {MAX_REPEAT:,}, got {req.repeat}", type="UsageError")
    with run_context(req.dtype, req.seed, req.anomaly):
        return _compute(req, write, warn)


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


def _compute(req: GradRequest, write, warn) -> GradResult:
    printed = []
    recorder = _recorder(req)
    interp, program, named = prepare(req, write or printed.append, warn,
                                     globals_=None if recorder is None else recorder.globals())
    ctx = current_context()
    calls_before = ctx.backward_calls
    output = _run(interp, program, recorder)
    by_program = ctx.backward_calls != calls_before
    _add_program_leaves(interp, named)
    gradient = _gradient(req, interp, output)
    leaf_names = {id(t): name for name, t, _ in named}
    if recorder is None:
        graph = build_graph(output, leaf_names)
    else:
        recorder.attach(output)
    calls, note = _backward_calls(req, output, gradient, named, by_program, recorder)
    explanation = None
    if recorder is not None:
        ids = {}
        graph = build_graph(output, leaf_names, recorder, ids)
        if req.explain and note is None:
            explanation = chain_rule.explain(output, recorder, ids, named)
    # a leaf's final gradient is the last call's copy when there is one (nothing changes .grad after it): one
    # array, not two equal ones (a 1000x1000 input's JSON then encodes it once without comparing them)
    last = calls[-1] if calls else {}
    inputs = [InputInfo(name=name, value=tensor_info(t), kind=kind, grad=last[name] if name in last else _grad(t))
              for name, t, kind in named]
    return GradResult(program=req.program, output=tensor_info(output), inputs=inputs, calls=calls, graph=graph,
                      printed="".join(printed), default_dtype=dtypes.get_default_dtype().name,
                      explanation=explanation, note=note, backward_by_program=by_program)


def _recorder(req: GradRequest):
    """The :class:`gradcli.app.recording.Recorder` the pictures of ``req`` need (--graph, --graph-values,
    --graph-saved, --explain), or None: then nothing is recorded."""
    if not (req.graph_names or req.graph_values or req.graph_saved or req.explain):
        return None
    return recording.Recorder(values=req.graph_values or req.explain, saved=req.graph_saved, per_call=req.explain)


def _run(interp, program, recorder) -> Tensor:
    """:func:`run_output` (under ``recorder`` when there is one), a failure with its hint (an undefined name:
    how to give it with -i/-c)."""
    try:
        if recorder is None:
            return run_output(interp, program)
        with recorder.running():
            output = run_output(interp, program)
        recorder.note_names(interp.globals)
        return output
    except EvalError as err:
        raise program_error(err)


def _add_program_leaves(interp, named: list) -> None:
    """Append to ``named`` the leaves the program made itself (``x = tensor(..., requires_grad=True)``), by
    name: they are reported too."""
    ids = {id(t) for _, t, _ in named}
    for name, value in interp.globals.items():
        if isinstance(value, Tensor) and value.is_leaf and value.requires_grad and id(value) not in ids:
            named.append((name, value, "leaf"))
            ids.add(id(value))


def _gradient(req: GradRequest, interp, output: Tensor) -> Tensor | None:
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


def _grad(t: Tensor):
    """A copy of ``t.grad``'s array, or None."""
    return None if t._grad is None else np.array(t._grad.data)


def _backward_calls(req: GradRequest, output: Tensor, gradient, named: list, by_program: bool, recorder):
    """Call backward ``req.repeat`` times and return ``(calls, note)``: each call's gradients ({name: array or
    None}) and the note when there is nothing to differentiate. A program that called backward itself has one
    call, its own (its gradients as it left them).

    Raises:
        InputError: --gradient, --repeat or --explain with a program that calls backward itself (exit 2).
        EvalError: backward fails (PyTorch's message, with a hint for the usual causes).
    """
    calls, note = [], None
    if by_program:
        given = [opt for opt, on in (("--gradient", gradient is not None), ("--repeat", req.repeat > 1),
                                     ("--explain", req.explain)) if on]
        if given:
            raise InputError(f"the program calls backward itself, so gradcli does not: {', '.join(given)} "
                             f"cannot apply", type="UsageError",
                             hint="leave out the program's own .backward() call, or the option")
        calls.append({name: _grad(t) for name, t, _ in named if t.requires_grad})
    elif not output.requires_grad:
        note = "no gradient: the output does not depend on an input that requires grad"
    repeat = 0 if by_program or note is not None else req.repeat
    for k in range(repeat):
        if req.zero_grad and k > 0:
            for _, t, _ in named:
                if t._grad is not None:
                    t._grad.data = np.zeros_like(t._grad.data)
        if recorder is not None:
            recorder.before_call(req.zero_grad and k > 0)
        # --explain replays each node's rule after the last call: its saved values must stay
        backward(output, gradient, retain_graph=k < req.repeat - 1 or req.explain)
        calls.append({name: _grad(t) for name, t, _ in named if t.requires_grad})
    return calls, note


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


def prepare(req: GradRequest, write, warn, globals_: dict | None = None):
    """Parse the program and bind the ``-i``/``-c`` specs, in the active run context: the request's own
    (``with run_context(req.dtype, req.seed, req.anomaly):``, in which the program then runs too).

    Returns ``(interpreter, program, named)`` where ``named`` lists ``(name, tensor, kind)`` of the specs.
    ``globals_`` replaces the interpreter's global namespace (a dict subclass may watch assignments).

    Raises:
        InputError, GradcliSyntaxError: bad options, specs or program text (exit 2).
    """
    interp = Interpreter(write=write, warn=warn, max_steps=req.max_steps)
    if globals_ is not None:
        interp.globals = globals_
    program = build_program(req.program, req.filename)  # syntax errors before anything runs
    specs = [make_spec(s, True) for s in req.inputs] + [make_spec(s, False) for s in req.consts]
    seen = set()
    named = []
    for spec in specs:
        if spec.name in seen:
            raise InputError(f"{spec.name} is defined twice by -i/-c", type="InputSpecError")
        seen.add(spec.name)
        t = evaluate_spec(spec, interp)
        interp.globals[spec.name] = t
        named.append((spec.name, t, "input" if spec.requires_grad else "const"))
    return interp, program, named


def run_output(interp, program) -> Tensor:
    """Run the program; its last expression (or assignment) is the output, as a Tensor.

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

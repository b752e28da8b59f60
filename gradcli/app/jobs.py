"""The one application pipeline: a job (plain data) in, a result out, whatever the front end.

Every front end builds a job and calls :func:`run`, then hands the result to a renderer:

==========================  ==========================================  =============================================
job                         built by                                    result
==========================  ==========================================  =============================================
:class:`GradJob`            ``gradcli grad`` (``--check`` too), a       :class:`~gradcli.app.result.GradResult`
                            ``gradcli batch`` gradient entry
:class:`TransformJob`       ``gradcli jacobian``/``hessian``/``jvp``/   :class:`~gradcli.app.transforms.TransformResult`
                            ``hvp``, a batch entry with ``transform``
:class:`SessionJob`         the session's ``:grad``, ``:graph``,        a GradResult or a TransformResult
                            ``:jacobian``, ``:hessian``
:class:`PlotJob`            ``gradcli plot``                            :class:`~gradcli.app.plot_grid.PlotResult`
:class:`RunJob`             ``gradcli run`` (``--graph`` too)           :class:`RunOutcome`
==========================  ==========================================  =============================================

Each job is made of the stages of :mod:`gradcli.app.stages` (load, bind, execute, describe) and one mode of
:func:`gradcli.app.calculator.differentiate` (grad, repeat, check, jacobian, hessian, jvp, hvp). A new kind of
job is a class here and one entry of :data:`RUNNERS`; a new way of differentiating is one entry of
:data:`gradcli.app.calculator.MODES`.

The records here are plain classes, as those of :mod:`gradcli.app.result` are (``dataclasses`` would cost
start-up time).
"""

from __future__ import annotations

from typing import Callable

from ..engine import dtypes
from ..engine.errors import InputError
from ..engine.lazy import lazy
from . import calculator  # calculator.compute at call time (a test replaces it)
from .calculator import GradRequest, differentiate
from .stages import Outcome, backward, build_graph, grad_of, load, run_output, tensor_info
from .hints import SESSION
from .result import GradResult, InputInfo, _Record

transforms = lazy("gradcli.app.transforms")  # transform jobs only
symbolic = lazy("gradcli.app.symbolic")  # --symbolic and the session's :diff only (it imports SymPy)
sympy_check = lazy("gradcli.app.sympy_check")  # --symbolic and :diff only
plot_grid = lazy("gradcli.app.plot_grid")  # gradcli plot only
run_graph = lazy("gradcli.app.run_graph")  # gradcli run --graph only
run_program = lazy("gradcli.app.run_program")  # gradcli run only


class GradJob(_Record):
    """The gradients of a program: the ``request`` (program text, input specs, options), and ``check``: the
    tolerances of a finite-difference check of the gradients (``--check``: ``eps``, ``atol``, ``rtol``,
    ``max_evaluations``, as keyword arguments of :func:`gradcli.app.finite_differences.finite_difference_check`;
    None: no check); ``symbolic``: the gradients as formulas too (``--symbolic``: "unicode" or "latex" for
    their printed form; None: no formulas)."""
    _fields = ("request", "check", "symbolic")

    def __init__(self, request: GradRequest, check: dict | None = None, symbolic: str | None = None):
        self.request, self.check, self.symbolic = request, check, symbolic


class TransformJob(_Record):
    """A transform of a program's output: ``kind`` jacobian, hessian, jvp or hvp; ``mode`` the jacobian's
    ("reverse", "forward" or "auto"); ``vectors`` the ``NAME=SPEC`` tangents (jvp) or vectors (hvp); ``check``
    the ``--check`` tolerances (``eps``, ``atol``, ``rtol``) or None; ``symbolic``: the Hessian as a formula too
    (``gradcli hessian --symbolic``); ``strict``: PyTorch's ``strict=True`` (``--strict``)."""
    _fields = ("request", "kind", "mode", "vectors", "check", "symbolic", "strict")

    def __init__(self, request: GradRequest, kind: str, mode: str = "auto", vectors: list | None = None,
                 check: dict | None = None, symbolic: bool = False, strict: bool = False):
        self.request, self.kind, self.mode, self.vectors, self.check = request, kind, mode, vectors, check
        self.symbolic, self.strict = symbolic, strict


class SessionJob(_Record):
    """A question the interactive session asks about ``text`` with its own variables (``workspace``: the
    session, its ``interp`` and ``leaves()``): ``kind`` "grad" (``:grad``), "diff" (``:diff``), "graph"
    (``:graph``), "jacobian" or "hessian"."""
    _fields = ("workspace", "kind", "text")

    def __init__(self, workspace, kind: str, text: str):
        self.workspace, self.kind, self.text = workspace, kind, text


class PlotJob(_Record):
    """``gradcli plot``: the :class:`~gradcli.app.plot_grid.PlotRequest`."""
    _fields = ("request",)

    def __init__(self, request):
        self.request = request


class RunJob(_Record):
    """``gradcli run``: the :class:`~gradcli.app.run_program.RunRequest`, and with ``graph`` the graph of the last
    backward call the program makes is recorded (``graph_values``: each node's value and gradient;
    ``graph_saved``: what it saved)."""
    _fields = ("request", "graph", "graph_values", "graph_saved")

    def __init__(self, request, graph: bool = False, graph_values: bool = False, graph_saved: bool = False):
        self.request, self.graph, self.graph_values, self.graph_saved = request, graph, graph_values, graph_saved


class RunOutcome(_Record):
    """What a :class:`RunJob` did: the :class:`~gradcli.app.run_program.RunResult` (errors, exit code), and with
    ``graph`` the drawn graph as a :class:`~gradcli.app.result.GradResult` (None: no graph asked for, or the
    program made no backward call)."""
    _fields = ("result", "drawn")

    def __init__(self, result, drawn: GradResult | None = None):
        self.result, self.drawn = result, drawn


class Context(_Record):
    """Where a job runs: ``write`` receives the program's ``print`` output (default: collected into the
    result's ``printed``), ``warn`` its warnings (default: standard error), ``report`` each error of a
    ``gradcli run`` statement as it happens, ``progress`` the progress of a point-by-point plot
    (``progress(done, total, elapsed)``)."""
    _fields = ("write", "warn", "report", "progress")

    def __init__(self, write: Callable[[str], object] | None = None, warn: Callable[[str], object] | None = None,
                 report: Callable[[object], object] | None = None, progress: Callable | None = None):
        self.write, self.warn, self.report, self.progress = write, warn, report, progress


def run(job, context: Context | None = None):
    """Run ``job`` (one of the job classes of this module) in ``context``: its result (see the module's table).

    Raises:
        InputError, GradcliSyntaxError: bad options, specs or program text (exit 2).
        EvalError: the program or the differentiation fails (exit 1), with PyTorch's type and message and a
            hint (:mod:`gradcli.app.hints`).
        LimitError: a limit of :mod:`gradcli.engine.limits` was reached.
        TypeError: not a job (a bug in the caller).
    """
    runner = RUNNERS.get(type(job))
    if runner is None:
        raise TypeError(f"not a job: {type(job).__name__}")
    return runner(job, context or Context())


def run_grad(job: GradJob, context: Context) -> GradResult:
    """A :class:`GradJob`: :func:`gradcli.app.calculator.compute`, or with ``check``
    :func:`gradcli.app.calculator.compute_checked`; with ``symbolic`` the formulas of the gradients
    (:func:`gradcli.app.symbolic.symbolic_gradients`) in ``result.symbolic``.

    Raises:
        InputError: ``symbolic`` without SymPy installed (exit 2).
    """
    if job.symbolic is not None:
        sympy_check.require_sympy()
    if job.check is None:
        result = calculator.compute(job.request, write=context.write, warn=context.warn)
    else:
        result = calculator.compute_checked(job.request, write=context.write, warn=context.warn, **job.check)
    if job.symbolic is not None:
        result.symbolic = symbolic.symbolic_gradients(result, job.request, job.symbolic)
    return result


def run_transform(job: TransformJob, context: Context):
    """A :class:`TransformJob`: :func:`gradcli.app.calculator.compute_transform`; with ``symbolic`` the Hessian's
    formula (:func:`gradcli.app.symbolic.symbolic_hessian`) in ``result.symbolic``."""
    if job.symbolic:
        sympy_check.require_sympy()
    result = calculator.compute_transform(job.request, job.kind, job.mode, vectors=job.vectors,
                                          write=context.write, warn=context.warn, check=job.check,
                                          strict=job.strict)
    if job.symbolic:
        result.symbolic = symbolic.symbolic_hessian(result, job.request)
    return result


def run_plot(job: PlotJob, context: Context):
    """A :class:`PlotJob`: :func:`gradcli.app.plot_grid.compute_plot`."""
    return plot_grid.compute_plot(job.request, progress=context.progress)


def run_run(job: RunJob, context: Context) -> RunOutcome:
    """A :class:`RunJob`: :func:`gradcli.app.run_program.run_program`, watched by
    :class:`gradcli.app.run_graph.GraphWatch` when ``job.graph``."""
    def run_it():
        return run_program.run_program(job.request, write=context.write, warn=context.warn, report=context.report)

    if not job.graph:
        return RunOutcome(run_it())
    watch = run_graph.GraphWatch(values=job.graph_values, saved=job.graph_saved)
    with watch.recorder.running(on_call=watch.on_call):
        result = run_it()
    return RunOutcome(result, watch.result(job.request.source))


def run_session(job: SessionJob, context: Context):
    """A :class:`SessionJob`: :func:`workspace_grad`, :func:`workspace_graph` or :func:`workspace_transform`."""
    if job.kind == "grad":
        return workspace_grad(job.workspace, job.text)
    if job.kind == "diff":
        return workspace_diff(job.workspace, job.text)
    if job.kind == "graph":
        return workspace_graph(job.workspace, job.text)
    return workspace_transform(job.workspace, job.text, job.kind)


#: job class → the function that runs it (``runner(job, context)``).
RUNNERS = {GradJob: run_grad, TransformJob: run_transform, SessionJob: run_session, PlotJob: run_plot,
           RunJob: run_run}


def run_in_workspace(workspace, text: str, filename: str = "<stdin>"):
    """Run ``text`` against a copy of the session's variables (an assignment in it does not stay); the value
    of its last expression, as a Tensor.

    Raises:
        GradcliSyntaxError: ``text`` does not parse (exit 2).
        EvalError: it fails or has no numeric output (exit 1).
    """
    program = load(text, filename).tree
    interp = workspace.interp
    saved = interp.globals
    interp.globals = dict(saved)
    try:
        return run_output(interp, program)
    finally:
        interp.globals = saved


def workspace_diff(workspace, text: str) -> GradResult:
    """``:diff EXPR``: :func:`workspace_grad` with the gradients as formulas too (``result.symbolic``: a
    :class:`gradcli.app.symbolic.SymbolicResult`, in terms of the session's leaves and other variables).

    Raises:
        InputError: SymPy is not installed (exit 2).
        GradcliSyntaxError, EvalError: as :func:`workspace_grad`.
    """
    sympy_check.require_sympy()
    result = workspace_grad(workspace, text)
    result.symbolic = symbolic.workspace_formulas(result, text, dict(workspace.interp.globals),
                                                  dtypes.get_default_dtype().name)
    return result


def workspace_grad(workspace, text: str, filename: str = "<stdin>") -> GradResult:
    """``:grad EXPR`` of the interactive session: the gradients of one ``backward()`` call from zero for the
    session's leaves (``workspace.leaves()``: (name, tensor) of the tensors that require grad). Backward keeps
    the graph (the session's tensors can still be differentiated) and the leaves' ``.grad`` are put back as they
    were, so asking twice gives the same answer.

    Raises:
        GradcliSyntaxError: ``text`` does not parse (exit code 2).
        EvalError: it fails, has no numeric output, or its output does not depend on a leaf (PyTorch's
            "element 0 of tensors does not require grad ..."), with a hint; a non-scalar output needs a
            scalar (exit code 1).
    """
    output = run_in_workspace(workspace, text, filename)
    leaves = workspace.leaves()
    before = {id(t): t._grad for _, t in leaves}
    for _, t in leaves:
        t._grad = None
    try:
        backward(output, retain_graph=True, where=SESSION)
        inputs = [InputInfo(name=name, value=tensor_info(t), kind="leaf", grad=grad_of(t)) for name, t in leaves]
    finally:
        for _, t in leaves:
            t._grad = before[id(t)]
    calls = [{i.name: i.grad for i in inputs}]
    graph = build_graph(output, {id(t): name for name, t in leaves})
    return GradResult(program=text, output=tensor_info(output), inputs=inputs, calls=calls, graph=graph,
                      printed="", default_dtype=dtypes.get_default_dtype().name)


def workspace_graph(workspace, text: str) -> GradResult:
    """``:graph NAME``: the autograd graph under the tensor ``text`` names (or computes), for the graph
    renderers; nothing runs backward.

    Raises:
        GradcliSyntaxError, EvalError: as :func:`workspace_grad`.
    """
    output = run_in_workspace(workspace, text)
    leaves = workspace.leaves()
    inputs = [InputInfo(name=name, value=tensor_info(t), kind="leaf") for name, t in leaves]
    graph = build_graph(output, {id(t): name for name, t in leaves})
    return GradResult(program=text, output=tensor_info(output), inputs=inputs, calls=[], graph=graph,
                      printed="", default_dtype=dtypes.get_default_dtype().name)


def workspace_transform(workspace, text: str, kind: str):
    """``:jacobian EXPR`` / ``:hessian EXPR``: the answer of ``gradcli jacobian``/``hessian`` for ``text`` with
    the session's leaves as the inputs (a :class:`~gradcli.app.transforms.TransformResult`, in reverse mode;
    ``EXPR`` may be a tuple of tensors, several outputs); the session's variables and the leaves' ``.grad``
    are left as they were.

    Raises:
        InputError: no leaf in the session (exit code 2).
        GradcliSyntaxError, EvalError: as :func:`workspace_grad`; PyTorch's errors of jacobian/hessian.
    """
    program = load(text, "<stdin>").tree
    leaves = workspace.leaves()
    if not leaves:
        raise InputError(f":{kind} needs a leaf to differentiate with respect to: define one, e.g. "
                         "x = tensor([1., 2.], requires_grad=True)", type="UsageError")
    interp = workspace.interp
    saved = interp.globals

    def rerun(*values):
        interp.globals = dict(saved)
        interp.globals.update({name: v for (name, _), v in zip(leaves, values)})
        try:
            return run_output(interp, program, tuples=True)
        finally:
            interp.globals = saved

    output = rerun(*(t for _, t in leaves))
    outcome = Outcome(output=output, leaves=[(name, t, "leaf") for name, t in leaves], wrt=list(leaves),
                      rerun=rerun)
    blocks = differentiate(outcome, kind, strategy="reverse")
    return transforms.TransformResult(kind=kind, output=transforms.output_info(output, tensor_info), mode="reverse",
                                      inputs=[(name, tuple(t.shape)) for name, t in leaves], blocks=blocks,
                                      default_dtype=dtypes.get_default_dtype().name)

"""The one entry of a gradient request, whatever the front end: a :class:`GradJob` (plain data) in, a
:class:`~gradcli.app.result.GradResult` (or, for a batch entry's transform, a
:class:`~gradcli.app.transforms.TransformResult`) out.

``gradcli grad`` builds the job from its options, a ``gradcli batch`` entry from its line, the interactive
session's ``:grad`` from the expression it asks about; each then calls :func:`run_grad` and hands the result to
a renderer. The work itself is :func:`gradcli.app.calculator.compute` (with ``check``:
:func:`gradcli.app.finite_differences.compute_checked`; with ``transform``:
:func:`gradcli.app.transforms.compute_transform`), or for the session :func:`workspace_grad`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..engine import dtypes
from ..engine.lazy import lazy
from ..language.build import build_program
from . import calculator  # calculator.compute at call time (a test replaces it)
from .calculator import GradRequest, backward, build_graph, run_output, tensor_info
from .hints import SESSION
from .result import GradResult, InputInfo

transforms = lazy("gradcli.app.transforms")  # jacobian/hessian only
finite_differences = lazy("gradcli.app.finite_differences")  # --check only


@dataclass
class GradJob:
    """What to compute: the request (program text, input specs, options), and optionally

    Attributes:
        check: the tolerances of a finite-difference check of the gradients (``--check``: ``eps``, ``atol``,
            ``rtol``, ``max_evaluations``), as keyword arguments of
            :func:`gradcli.app.finite_differences.compute_checked`; None: no check.
        transform: a batch entry's transform instead of the gradient, ``{"kind", "mode", "vectors"}`` (kind:
            jacobian, hessian, jvp or hvp; vectors: the ``NAME=SPEC`` tangents or vectors); None: the gradient.
    """
    request: GradRequest
    check: dict | None = None
    transform: dict | None = None


@dataclass
class GradContext:
    """Where a job runs: ``write`` receives the program's ``print`` output (default: collected into the
    result's ``printed``), ``warn`` its warnings (default: standard error); ``workspace``, when given, is an
    interactive session (its ``interp`` and ``leaves()``): the program runs against a copy of its variables and
    its leaves are the inputs (see :func:`workspace_grad`)."""
    write: Callable[[str], object] | None = None
    warn: Callable[[str], object] | None = None
    workspace: object | None = None


def run_grad(job: GradJob, context: GradContext | None = None):
    """Run ``job`` in ``context``: a :class:`GradResult` (with its check when ``job.check``), or with
    ``job.transform`` a :class:`~gradcli.app.transforms.TransformResult`.

    Raises:
        InputError, GradcliSyntaxError: bad options, specs or program text (exit 2).
        EvalError: the program or backward fails (exit 1), with PyTorch's type and message and a hint
            (:mod:`gradcli.app.hints`).
        LimitError: a limit of :mod:`gradcli.engine.limits` was reached.
    """
    context = context or GradContext()
    req = job.request
    if context.workspace is not None:
        return workspace_grad(context.workspace, req.program, req.filename)
    if job.transform is not None:
        check = None if job.check is None else {k: job.check[k] for k in ("eps", "atol", "rtol")}
        return transforms.compute_transform(req, job.transform["kind"], job.transform["mode"],
                                            vectors=job.transform["vectors"],
                                 write=context.write, warn=context.warn, check=check)
    if job.check is None:
        return calculator.compute(req, write=context.write, warn=context.warn)

    return finite_differences.compute_checked(req, write=context.write, warn=context.warn, **job.check)


def run_in_workspace(workspace, text: str, filename: str = "<stdin>"):
    """Run ``text`` against a copy of the session's variables (an assignment in it does not stay); the value
    of its last expression, as a Tensor.

    Raises:
        GradcliSyntaxError: ``text`` does not parse (exit 2).
        EvalError: it fails or has no numeric output (exit 1).
    """
    program = build_program(text, filename)
    interp = workspace.interp
    saved = interp.globals
    interp.globals = dict(saved)
    try:
        return run_output(interp, program)
    finally:
        interp.globals = saved


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
        inputs = [InputInfo(name=name, value=tensor_info(t), kind="leaf",
                            grad=None if t._grad is None else np.array(t._grad.data)) for name, t in leaves]
    finally:
        for _, t in leaves:
            t._grad = before[id(t)]
    calls = [{i.name: i.grad for i in inputs}]
    graph = build_graph(output, {id(t): name for name, t in leaves})
    return GradResult(program=text, output=tensor_info(output), inputs=inputs, calls=calls, graph=graph,
                      printed="", default_dtype=dtypes.get_default_dtype().name)

"""What a gradient or transform job computes, composed from the stages of :mod:`gradcli.app.stages`.

``gradcli grad`` (and a ``gradcli batch`` entry): :func:`compute` loads the program, binds the input specs, runs it
(the last expression is the output), differentiates the outcome in reverse mode (``repeat`` backward calls,
keeping the graph, optionally zeroing gradients between calls), describes its graph and collects a
:class:`~gradcli.app.result.GradResult`; with ``--check`` (:func:`compute_checked`) the gradients are then compared
with finite differences. ``gradcli jacobian``/``hessian``/``jvp``/``hvp``: :func:`compute_transform`.

Every way of differentiating an outcome is one entry of :data:`MODES`, called through :func:`differentiate`. Nothing
here formats output.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..engine import dtypes, limits
from ..engine.errors import EvalError, InputError
from ..engine.lazy import lazy
from ..engine.tensor import Tensor
from .result import GradResult, InputInfo
from .stages import (GradRequest, Outcome, backward, bind, build_graph, describe, execute, grad_of,  # noqa: F401
                     gradient_tensor, load, prepare, run_context, run_output, seed_context, tensor_info)

chain_rule = lazy("gradcli.app.chain_rule")  # --explain only
recording = lazy("gradcli.app.recording")  # --graph/--explain only
transforms = lazy("gradcli.app.transforms")  # jacobian, hessian, jvp, hvp only
finite_differences = lazy("gradcli.app.finite_differences")  # --check only

MAX_REPEAT = 10_000  # backward calls of one request (--repeat)


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


def _compute(req: GradRequest, write, warn) -> GradResult:
    printed = []
    recorder = _recorder(req)
    program = load(req.program, req.filename)  # syntax errors before anything runs
    bound = bind(program, req.inputs, req.consts, write=write or printed.append, warn=warn,
                 max_steps=req.max_steps, globals_=None if recorder is None else recorder.globals())
    outcome = execute(bound, recorder)
    gradient = gradient_tensor(req, bound.interp, outcome.output)
    if recorder is None:
        graph = describe(outcome)
    else:
        recorder.attach(outcome.output)
    calls, note = differentiate(outcome, "repeat" if req.repeat > 1 else "grad", request=req, gradient=gradient,
                                recorder=recorder)
    explanation = None
    if recorder is not None:
        ids = {}
        graph = describe(outcome, recorder, ids)
        if req.explain and note is None:
            explanation = chain_rule.explain(outcome.output, recorder, ids, outcome.leaves)
    # a leaf's final gradient is the last call's copy when there is one (nothing changes .grad after it): one
    # array, not two equal ones (a 1000x1000 input's JSON then encodes it once without comparing them)
    last = calls[-1] if calls else {}
    inputs = [InputInfo(name=name, value=tensor_info(t), kind=kind, grad=last[name] if name in last else grad_of(t))
              for name, t, kind in outcome.leaves]
    return GradResult(program=req.program, output=tensor_info(outcome.output), inputs=inputs, calls=calls,
                      graph=graph, printed="".join(printed), default_dtype=dtypes.get_default_dtype().name,
                      explanation=explanation, note=note, backward_by_program=outcome.backward_calls != 0)


def _recorder(req: GradRequest):
    """The :class:`gradcli.app.recording.Recorder` the pictures of ``req`` need (--graph, --graph-values,
    --graph-saved, --explain), or None: then nothing is recorded."""
    if not (req.graph_names or req.graph_values or req.graph_saved or req.explain):
        return None
    return recording.Recorder(values=req.graph_values or req.explain, saved=req.graph_saved, per_call=req.explain)


def reverse(outcome: Outcome, mode: str = "grad", *, request: GradRequest, gradient=None, recorder=None):
    """Reverse mode (``grad``: one backward call; ``repeat``: ``request.repeat`` of them, keeping the graph,
    zeroing the gradients between them with ``request.zero_grad``), with ``gradient`` the v of the
    vector-Jacobian product. Returns ``(calls, note)``: each call's gradients ({name: array or
    None}) and the note when there is nothing to differentiate. A program that called backward itself has one
    call, its own (its gradients as it left them).

    Raises:
        InputError: --gradient, --repeat or --explain with a program that calls backward itself (exit 2).
        EvalError: backward fails (PyTorch's message, with a hint for the usual causes).
    """
    req, output, named = request, outcome.output, outcome.leaves
    by_program = outcome.backward_calls != 0
    calls, note = [], None
    if by_program:
        given = [opt for opt, on in (("--gradient", gradient is not None), ("--repeat", req.repeat > 1),
                                     ("--explain", req.explain)) if on]
        if given:
            raise InputError(f"the program calls backward itself, so gradcli does not: {', '.join(given)} "
                             f"cannot apply", type="UsageError",
                             hint="leave out the program's own .backward() call, or the option")
        calls.append({name: grad_of(t) for name, t, _ in named if t.requires_grad})
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
        calls.append({name: grad_of(t) for name, t, _ in named if t.requires_grad})
    return calls, note


def check(outcome: Outcome | None, mode: str = "check", *, request: GradRequest, result, **tolerances):
    """``--check``: ``result`` (a :class:`~gradcli.app.result.GradResult` or a transform's
    :class:`~gradcli.app.transforms.TransformResult`) against central differences of ``request``'s program in
    float64 (:mod:`gradcli.app.finite_differences`); a transform's also takes ``base`` and ``vectors`` (float64
    arrays: the inputs' values and the tangents or vectors). Returns the
    :class:`~gradcli.app.finite_differences.CheckResult`.

    Raises:
        InputError: non-positive eps or negative tolerances, too many input elements (exit 2).
        EvalError: the program fails in float64 (exit 1).
    """
    if isinstance(result, GradResult):
        return finite_differences.finite_difference_check(request, result, **tolerances)
    return transforms.check_transform(request, result, **tolerances)


def transform(outcome: Outcome, mode: str, *, strategy: str = "reverse", vectors=(), strict: bool = False) -> dict:
    """A transform of the outcome's program (``mode``: jacobian, hessian, jvp or hvp) at its inputs, computed
    in ``strategy`` ("reverse" or "forward": the jacobian's); ``vectors`` the tangents (jvp) or vectors (hvp),
    one Tensor per input; ``strict``: PyTorch's ``strict=True``. Its blocks, keyed as
    :attr:`~gradcli.app.transforms.TransformResult.blocks`.

    Raises:
        EvalError: PyTorch's errors (a Hessian of an output with several elements, strict mode's).
    """
    values = tuple(t for _, t in outcome.wrt)
    try:
        return transforms.transform_blocks(mode, strategy, outcome.rerun, values, vectors,
                                           [n for n, _ in outcome.wrt], strict=strict)
    except (RuntimeError, TypeError, ValueError, NotImplementedError) as e:
        raise EvalError.from_exception(e) from None


#: How an outcome is differentiated: mode → ``function(outcome, mode, **options)`` (see each for its options
#: and what it returns). A new way of differentiating (a new command or option) is one entry here.
MODES = {
    "grad": reverse,
    "repeat": reverse,
    "check": check,
    "jacobian": transform,
    "hessian": transform,
    "jvp": transform,
    "hvp": transform,
}


def differentiate(outcome: Outcome | None, mode: str, **options):
    """Differentiate ``outcome`` in ``mode``, a key of :data:`MODES`, with that mode's ``options``.

    Raises:
        ValueError: an unknown mode (a bug in the caller); otherwise what the mode raises.
    """
    try:
        how = MODES[mode]
    except KeyError:
        raise ValueError(f"unknown mode of differentiation {mode!r}") from None
    return how(outcome, mode, **options)


def compute_checked(req: GradRequest, write=None, warn=None, **tolerances) -> GradResult:
    """:func:`compute` then the ``check`` mode (finite differences); a program without ``seed`` gets a fresh one
    so that every run draws the same random numbers. Returns the result with ``.check``."""
    if req.seed is None:
        req = replace(req, seed=int(np.random.SeedSequence().entropy % 2**32))
    result = compute(req, write=write, warn=warn)
    result.check = differentiate(None, "check", request=req, result=result, **tolerances)
    return result


def compute_transform(req: GradRequest, kind: str, mode: str = "auto", vectors=None, write=None, warn=None,
                      check: dict | None = None, strict: bool = False):
    """Run ``req``'s program and transform its output: ``kind`` one of
    :data:`~gradcli.app.transforms.KINDS`; ``mode`` the jacobian's ("reverse", "forward" or "auto");
    ``vectors``: the ``NAME=SPEC`` tangents (jvp) or vectors (hvp), one per input; ``check``: the ``--check``
    options (eps, atol, rtol), or None; ``strict``: PyTorch's ``strict=True`` (jacobian, hessian). A
    :class:`~gradcli.app.transforms.TransformResult`. The program of a Jacobian or Hessian may end in a tuple
    of tensors (several outputs, as a function given to torch.autograd.functional may return).

    Raises:
        InputError: no -i input, an unknown or unavailable mode, missing or misshapen vectors, or a result
            larger than the ``elements`` limit (exit 2).
        EvalError: the program fails; PyTorch's errors (a Hessian of an output with several elements, exit 1).
    """
    if kind not in transforms.KINDS:
        raise ValueError(f"unknown transform {kind!r}")
    if check is not None and req.seed is None:  # every run of the check draws the same random numbers
        req = replace(req, seed=int(np.random.SeedSequence().entropy % 2**32))
    with run_context(req.dtype, req.seed, req.anomaly):
        printed = []
        program = load(req.program, req.filename)
        bound = bind(program, req.inputs, req.consts, write=write or printed.append, warn=warn,
                     max_steps=req.max_steps)
        inputs = [(name, t) for name, t, kind_ in bound.named if kind_ == "input"]
        if not inputs:
            raise InputError(f"{kind} needs an input to differentiate with respect to: -i NAME=SPEC",
                             type="UsageError")
        vs = transforms.vectors(kind, vectors, inputs, bound.interp) if transforms.KINDS[kind]["vector"] else ()
        outcome = execute(bound, hint=False, tuples=kind in ("jacobian", "hessian"))
        outputs = transforms.outputs_of(outcome.output)
        out_n = sum(int(o.data.size) for o in outputs if isinstance(o, Tensor))
        sizes = [int(t.data.size) for _, t in inputs]
        total = {"jacobian": out_n * sum(sizes), "hessian": sum(sizes) ** 2, "jvp": out_n,
                 "hvp": sum(sizes)}[kind]
        if total > limits.current.elements:
            raise limits.exceeded("elements", f"the {kind} has {total:,} elements ({out_n:,} output x "
                                              f"{sum(sizes):,} input elements)")
        mode = transforms.choose_mode(kind, mode, sum(sizes), out_n, strict)
        base = [np.asarray(t.data, np.float64) for _, t in inputs]
        blocks = differentiate(outcome, kind, strategy=mode, vectors=vs, strict=strict)
        result = transforms.TransformResult(kind=kind, output=transforms.output_info(outcome.output, tensor_info),
                                            mode=mode,
                                            inputs=[(name, tuple(t.shape)) for name, t in inputs], blocks=blocks,
                                            default_dtype=dtypes.get_default_dtype().name)
    if check is not None:
        result.check = differentiate(outcome, "check", request=req, result=result, base=base,
                                     vectors=[np.asarray(v.data, np.float64) for v in vs], **check)
    return result

"""Symbolic gradients of a request: trace, differentiate, describe, check (see the package docstring)."""

from __future__ import annotations

import numpy as np

from ...engine.errors import GradcliError
from ...engine.tensor import Tensor
from ...language.build import build_program
from ...language.interpreter import Interpreter
from ...language.specs import Spec, evaluate_spec
from ..calculator import run_context, run_output
from ..result import _Record
from .algebra import NoFormula, V
from .evaluate import Evaluator
from .printing import LatexPrinter, Printer, TorchPrinter, first_leaf
from .trace import Failure, Tracer, seed_value

#: (rtol, atol) of the comparison with autograd's gradient, by the run's dtype (float32: room for the rounding of
#: an ill-conditioned product or inverse; a wrong formula is off by far more)
TOLERANCES = {"float64": (1e-7, 1e-9), "float32": (1e-4, 1e-5)}


class Formula(_Record):
    """One input's gradient as a formula: ``expr`` (PyTorch), ``pretty`` (Unicode), ``latex``; ``agrees``
    (whether its value at the inputs is autograd's gradient within the dtype's tolerance) and
    ``max_abs_diff``; or ``reason`` why there is none (then the others are None)."""
    _fields = ("name", "expr", "pretty", "latex", "agrees", "max_abs_diff", "reason")

    def __init__(self, name, expr=None, pretty=None, latex=None, agrees=None, max_abs_diff=None, reason=None):
        self.name, self.expr, self.pretty, self.latex = name, expr, pretty, latex
        self.agrees, self.max_abs_diff, self.reason = agrees, max_abs_diff, reason


class SymbolicResult(_Record):
    """The formulas of a gradient request: ``formulas`` (name → :class:`Formula`, inputs that require grad),
    ``reason`` (why there is no formula at all, else None), ``style`` ("unicode" or "latex": what tables
    show), ``what`` ("gradient" or "hessian")."""
    _fields = ("formulas", "reason", "style", "what")

    def __init__(self, formulas: dict, reason: str | None = None, style: str = "unicode", what: str = "gradient"):
        self.formulas, self.reason, self.style, self.what = formulas, reason, style, what

    @property
    def ok(self) -> bool:
        """Every input has a formula that agrees with autograd."""
        return self.reason is None and all(f.reason is None and f.agrees for f in self.formulas.values())


def _quiet(_text):
    return None


def trace_program(program_text: str, filename: str, inputs: list, dtype: str, seed, gradient, others=None,
                  derived=()):
    """Run ``program_text`` traced with ``inputs`` (``(name, array, requires_grad)``) bound; returns
    ``(tracer, output, seed V, values)`` where ``values`` are the float64 values of the leaves by name.
    ``others``: more variables to bind as they are (a session's functions); ``derived``: ``(name, array)`` of
    tensors computed from the leaves elsewhere (a session's earlier entries): a formula through one has none.

    Raises:
        NoFormula: the program fails when run again (its message).
    """
    with run_context(dtype, seed):
        interp = Interpreter(write=_quiet, warn=_quiet)
        program = build_program(program_text, filename)
        interp.globals.update(others or {})
        named = []
        for name, value, requires_grad in inputs:
            t = Tensor(np.array(value), bool(requires_grad))
            interp.globals[name] = t
            named.append((name, t))
        tracer = Tracer(named, interp.globals)
        for name, value in derived:
            t = Tensor(np.array(value))
            interp.globals[name] = t
            tracer.keep.append(t)
            tracer.values[id(t)] = Failure(f"{name} was computed from the leaves in an earlier entry (write the "
                                           f"expression in terms of the leaves)")
        try:
            with tracer.running():
                output = run_output(interp, program)
            v = None
            if gradient is not None:
                spec = (Spec("gradient", gradient, False, "--gradient") if isinstance(gradient, str)
                        else Spec("gradient", "", False, "--gradient", data=gradient))
                v = evaluate_spec(spec, interp)
        except GradcliError as e:
            raise NoFormula(f"the program failed when traced: {e.message}") from None
    values = {name: np.asarray(t.data, dtype=np.float64) for name, t in tracer.named.values()}
    seed_v = seed_value(tracer.s, v, output)
    if v is not None:
        values["v"] = np.asarray(v.data, dtype=np.float64)
    return tracer, output, seed_v, values


def describe(tracer, name: str, g: V, values: dict, expected, dtype: str, like: str | None = None) -> Formula:
    """The :class:`Formula` of ``g`` for input ``name``: its three forms, and its value at the inputs compared
    with ``expected`` (autograd's gradient, an array). ``like``: the input whose shape a constant formula
    takes in the PyTorch expression (``torch.full_like(x, 1)``); None: ``torch.full(shape, ...)``."""
    s = tracer.s
    pretty = Printer(s)(g.expr)
    latex = LatexPrinter(s)(g.expr)
    expr = TorchPrinter(s, first_leaf(s, g.expr))(g.expr)
    if not g.is_mat and (s.shape_of(g.expr) != g.shape or g.expr.is_Number):  # a constant, or a scalar for a
        # tensor: broadcast to the input's shape (and a tensor, not a Python number)
        leaf = first_leaf(s, g.expr)
        dt = f", dtype={leaf}.dtype" if leaf else ""
        size = "(" + ", ".join(map(str, g.shape)) + ("," if len(g.shape) == 1 else "") + ")"
        if g.expr.is_Number:
            expr = f"torch.full_like({like}, {expr})" if like else f"torch.full({size}, {float(g.expr)!r}{dt})"
        else:
            expr = f"({expr}) * " + (f"torch.ones_like({like})" if like else f"torch.ones({size}{dt})")
    agrees = diff = None
    if expected is not None:
        got = Evaluator(s, values)(g.expr, tuple(np.shape(expected)))
        want = np.asarray(expected, dtype=np.float64)
        rtol, atol = TOLERANCES.get(dtype, TOLERANCES["float32"])
        with np.errstate(invalid="ignore"):
            d = np.abs(got - want)
            diff = float(np.nanmax(d)) if d.size and not np.all(np.isnan(d)) else 0.0
            agrees = bool(np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True))
    return Formula(name, expr=expr, pretty=pretty, latex=latex, agrees=agrees, max_abs_diff=diff)


def workspace_formulas(result, text: str, variables: dict, dtype: str, style: str = "unicode") -> SymbolicResult:
    """The formulas of ``result``, the session's ``:grad EXPR`` answer for ``text`` (``:diff EXPR``), where
    ``variables`` are the session's: its leaves are the inputs, its other tensors constants (by name)."""
    inputs, derived, others = [], [], {}
    for name, value in variables.items():
        if not isinstance(name, str):
            continue
        if isinstance(value, Tensor):
            if value.requires_grad and not value.is_leaf:
                derived.append((name, value.data))
            else:
                inputs.append((name, value.data, value.requires_grad))
        else:
            others[name] = value
    names = [i.name for i in result.inputs]
    return _formulas(result, names, style, lambda: trace_program(text, "<stdin>", inputs, dtype, None, None,
                                                                 others, derived))


def symbolic_gradients(result, req, style: str = "unicode") -> SymbolicResult:
    """The formulas of the gradients of ``result`` (a GradResult of the request ``req``).

    Never raises for a program without a formula: the reason is in the result (and per input)."""
    names = [i.name for i in result.inputs if i.value.requires_grad and i.kind != "leaf"]
    names += [i.name for i in result.inputs if i.kind == "leaf"]
    inputs = [(i.name, i.value.value, i.value.requires_grad) for i in result.inputs if i.kind != "leaf"]
    return _formulas(result, names, style, lambda: trace_program(req.program, req.filename, inputs, req.dtype,
                                                                 req.seed, req.gradient), req.dtype)


def _formulas(result, names: list, style: str, trace, dtype: str | None = None) -> SymbolicResult:
    """Trace (``trace()``: :func:`trace_program`'s answer), differentiate, describe each of ``names``."""
    dtype = dtype or result.default_dtype
    # one backward call's gradient (with --repeat the leaves' .grad accumulate several)
    expected = dict(result.calls[0]) if result.calls and result.note is None else result.grads()

    def fail(reason):
        return SymbolicResult({n: Formula(n, reason=reason) for n in names}, reason=reason, style=style)

    if result.note is not None:
        return fail(result.note)
    if result.backward_by_program:
        return fail("the program calls backward itself")
    try:
        tracer, output, seed_v, values = trace()
        grads = tracer.gradients(output, seed_v, names)
    except NoFormula as e:
        return fail(f"no formula: {e.reason}")
    formulas = {}
    for n in names:
        if n not in grads:
            formulas[n] = Formula(n, reason="the output does not depend on it" if expected.get(n) is None
                                  else "no formula for this input")
            continue
        try:
            formulas[n] = describe(tracer, n, grads[n], values, expected.get(n), dtype, like=n)
        except (TypeError, ValueError, KeyError, NoFormula) as e:
            formulas[n] = Formula(n, reason=f"no formula: {e}")
    return SymbolicResult(formulas, style=style)

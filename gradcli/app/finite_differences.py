"""``gradcli grad --check``: the reported gradients against central finite differences in float64.

The program is run again in float64 (default dtype float64, every input that requires grad cast to float64)
with one input element moved by ``+eps`` and ``-eps`` at a time. The objective is ``sum(v * output)`` where
``v`` is ``--gradient`` (or 1 for a one-element output), so the numerical derivative estimates the same
vector-Jacobian product that backward computed. An element passes when
``|analytical - numerical| <= atol + rtol * |numerical|``, the criterion and defaults (eps 1e-6, atol 1e-5,
rtol 1e-3) of ``torch.autograd.gradcheck``.

At a kink (``relu`` at exactly 0) the central difference averages the two one-sided slopes, while PyTorch's
rule picks one subgradient: the element fails without anything being wrong. So the check also compares the
one-sided difference quotients ``(f(x + eps) - f(x)) / eps`` and ``(f(x) - f(x - eps)) / eps`` (one more run of
the program, at ``x``, for all elements): where they differ beyond the tolerance, and still differ with half the
step (a smooth function's differ by ``f'' eps``, which halves with the step; a kink's jump does not), the element
is at a kink (:class:`Kink`). The two half-step runs record every graph node's forward value, and the kink is
attributed to the nodes whose output bends there while their inputs do not: named by their op when the op has
kinks (:data:`gradcli.ops.core.formulas.KINKS`: relu, abs, clamp, max, min, hardtanh, ...).

Leaves that the program creates itself (``x = tensor([...], requires_grad=True)``) are perturbed when the
program assigns them to their name: the global namespace of each run watches assignments (:class:`_Perturbed`).
Random numbers are drawn from the same seed in every run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..engine.errors import EvalError, InputError
from ..engine.tensor import Tensor
from ..engine.graph import MultiNode, Node, OutputEdge
from ..engine.lazy import lazy
from ..language.specs import Spec, evaluate_spec
from .stages import prepare, run_context, run_output

recording = lazy("gradcli.app.recording")  # the kinks' second look only
formulas = lazy("gradcli.ops.core.formulas")  # the kinks' second look only

#: PyTorch's gradcheck defaults.
DEFAULT_EPS = 1e-6
DEFAULT_ATOL = 1e-5
DEFAULT_RTOL = 1e-3
#: Program runs allowed for one check (two per input element, one at the inputs, three per element at a kink).
DEFAULT_MAX_EVALUATIONS = 20_000


@dataclass
class Kink:
    """An element at which the output's one-sided difference quotients differ (see the module docstring).

    index: the element's index in its input (a tuple); value: the input's value there; left, right: the
    one-sided quotients ``(f(x) - f(x - eps)) / eps`` and ``(f(x + eps) - f(x)) / eps``; numerical: the central
    difference (their mean); analytical: the reported gradient; ok: whether the element is within tolerance;
    ops: the ops whose input is at a kink there (:data:`gradcli.ops.core.formulas.KINKS`'s names), empty when the kink
    comes from an op that declares none (or it could not be told).
    """
    index: tuple
    value: float
    left: float
    right: float
    numerical: float
    analytical: float
    ok: bool
    ops: tuple = ()
    jump: bool = False  # the output itself jumps there (a discontinuity): the quotients grow as eps shrinks

    def where(self, name: str) -> str:
        """``x[0]`` (``x`` for a 0-d input)."""
        return name if not self.index else f"{name}[{', '.join(str(i) for i in self.index)}]"

    def message(self, name: str) -> str:
        """What the check says about this element, e.g. ``x[0] = 0 is at a kink of relu: finite differences
        average the one-sided slopes (0 and 1 give 0.5); PyTorch's gradient there is 0``."""
        if self.jump:
            return (f"{self.where(name)} = {self.value:.6g} is at a discontinuity: the output jumps there, so the "
                    f"one-sided differences ({self.left:.6g} and {self.right:.6g}) grow as eps shrinks; PyTorch's "
                    f"gradient there is {self.analytical:.6g}")
        at = (("at a kink of " + " and ".join(self.ops)) if self.ops
              else "at a point where the one-sided slopes differ")
        return (f"{self.where(name)} = {self.value:.6g} is {at}: finite differences average the one-sided slopes "
                f"({self.left:.6g} and {self.right:.6g} give {self.numerical:.6g}); PyTorch's gradient there is "
                f"{self.analytical:.6g}")


@dataclass
class InputCheck:
    """The comparison for one input that requires grad.

    analytical / numerical: float64 arrays of the input's shape (an unused input's gradient counts as 0).
    max_abs_diff: max |analytical - numerical|; max_rel_diff: max |analytical - numerical| / |numerical| over
    elements where numerical is not 0 (0.0 when there are none); worst: flat index of the element furthest
    beyond the tolerance (or of the largest difference when all pass); kinks: the elements at a kink
    (:class:`Kink`, in index order).
    """
    name: str
    analytical: np.ndarray
    numerical: np.ndarray
    max_abs_diff: float
    max_rel_diff: float
    ok: bool
    worst: int = 0
    kinks: list = field(default_factory=list)
    atol: float | None = None  # the tolerances it was compared with
    rtol: float | None = None

    @property
    def fails_only_at_kinks(self) -> bool:
        """Every element beyond the tolerance is at a kink (and one is): nothing is known to be wrong."""
        return not self.ok and bool(self.kinks) and self.failing() == sum(not k.ok for k in self.kinks)

    def failing(self) -> int:
        """How many elements are beyond the tolerance."""
        return int(np.sum(~(np.abs(self.analytical - self.numerical) <=
                            self.atol + self.rtol * np.abs(self.numerical)))) if self.atol is not None else 0


@dataclass
class CheckResult:
    """What ``--check`` found: the tolerances, one :class:`InputCheck` per input, and the program runs used."""
    eps: float
    atol: float
    rtol: float
    inputs: list = field(default_factory=list)
    evaluations: int = 0
    max_evaluations: int = DEFAULT_MAX_EVALUATIONS  # the kinks are looked for within the same budget

    @property
    def ok(self) -> bool:
        """True when every element of every input is within tolerance."""
        return all(i.ok for i in self.inputs)

    @property
    def fails_only_at_kinks(self) -> bool:
        """The check failed, and only at kinks (see :attr:`InputCheck.fails_only_at_kinks`)."""
        return not self.ok and all(i.ok or i.fails_only_at_kinks for i in self.inputs)


class _Perturbed(dict):
    """A global namespace that replaces the values of named leaves (tensors requiring grad) as they are
    assigned, so a program's own ``x = tensor(..., requires_grad=True)`` sees the perturbed values."""

    def __init__(self, values: dict):
        super().__init__()
        self.values = values

    def __setitem__(self, key, value):
        if key in self.values and isinstance(value, Tensor) and value.is_leaf and value.requires_grad:
            value.data = self.values[key].copy()
        super().__setitem__(key, value)


def _discard(*_args, **_kwargs) -> None:
    return None


def finite_difference_check(req, result, eps: float = DEFAULT_EPS, atol: float = DEFAULT_ATOL,
                            rtol: float = DEFAULT_RTOL,
                            max_evaluations: int = DEFAULT_MAX_EVALUATIONS) -> CheckResult:
    """Compare ``result``'s first backward call with central differences of the program of ``req``.

    Args:
        req: the :class:`~gradcli.app.calculator.GradRequest` that produced ``result`` (with a fixed ``seed`` if
            the program draws random numbers; :func:`gradcli.app.calculator.compute_checked` sees to that).
        result: its :class:`~gradcli.app.result.GradResult`.
        eps, atol, rtol: step and tolerances (PyTorch gradcheck's defaults).
        max_evaluations: refuse inputs whose elements need more runs (two each, one more at the inputs); the
            kinks are looked for within what is left (three runs per element at a kink).

    Raises:
        InputError: non-positive eps or tolerances, or too many input elements (exit 2).
        EvalError: the program fails in float64 or its output changes shape (exit 1).
    """
    if not (eps > 0 and atol >= 0 and rtol >= 0):
        raise InputError(f"--check needs eps > 0 and atol, rtol >= 0 (got eps={eps}, atol={atol}, rtol={rtol})",
                         type="UsageError")
    wrt = [i for i in result.inputs if i.value.requires_grad]
    base = {i.name: np.array(i.value.value, dtype=np.float64) for i in wrt}
    total = sum(a.size for a in base.values())
    if 2 * total + 1 > max_evaluations:
        raise InputError(f"--check runs the program twice per input element and once at the inputs: {total} "
                         f"elements need {2 * total + 1} runs, more than the limit of {max_evaluations}",
                         type="CheckLimitError",
                         hint="check a smaller input, or raise the limit with --check-max-evaluations")
    req64 = replace(req, dtype="float64", repeat=1)
    first = result.calls[0] if result.calls else {}

    v = None

    def objective(values: dict, record: list | None = None) -> float:
        """sum(v * output) of the program at ``values``; with ``record`` (a list), the graph's nodes are
        appended to it as ``(grad_fn name, output value, [input values])``, in backward order."""
        nonlocal v
        with run_context(req64.dtype, req64.seed):  # every run in a fresh context: the same random numbers
            interp, program, _ = prepare(req64, _discard, _discard, globals_=_Perturbed(values))
            if record is None:
                output = run_output(interp, program)
            else:
                recorder = recording.Recorder(values=True)
                with recorder.running():
                    output = run_output(interp, program)
                record.extend(_node_values(output, recorder))
            out = output.data.astype(np.float64)
            if v is None:
                if req.gradient is not None:
                    v = evaluate_spec(Spec("gradient", req.gradient, False, "--gradient"), interp).data
                    v = np.asarray(v, dtype=np.float64)
                elif out.size == 1:
                    v = np.ones(out.shape)
                else:
                    raise EvalError("grad can be implicitly created only for scalar outputs", type="RuntimeError")
        if out.shape != result.output.shape:
            raise EvalError(f"--check: the output's shape changed from {list(result.output.shape)} to "
                            f"{list(out.shape)} in float64", type="RuntimeError")
        return float(np.sum(v * out))

    return _compare(wrt, base, first, objective, CheckResult(eps=eps, atol=atol, rtol=rtol,
                                                             max_evaluations=max_evaluations))


def _node_values(output: Tensor, recorder) -> list:
    """``(grad_fn name, output value, [input values])`` of each node of ``output``'s graph in backward order
    (float64 arrays; None where a value was not recorded, or for a node with several outputs)."""
    def value(e):
        if type(e) is OutputEdge:
            v = recorder.values.get((e.node, getattr(e, "nr", 0)))
        elif isinstance(e, Node):
            v = recorder.values.get((e, 0))
        elif isinstance(e, Tensor):
            v = e.data
        else:
            v = None
        return None if v is None else np.asarray(v, dtype=np.float64)

    rows = []
    for node in recording.graph_nodes(output):
        out = None if type(node) is MultiNode else recorder.values.get((node, 0))
        rows.append((node.name(), None if out is None else np.asarray(out, dtype=np.float64),
                     [value(e) for e in node.edges]))
    return rows


def _bends(minus, mid, plus) -> bool:
    """Whether an array's one-sided changes ``plus - mid`` and ``mid - minus`` differ anywhere by more than
    float64 rounding and a smooth function's second-order term (a thousandth of the change)."""
    if minus is None or mid is None or plus is None or not (minus.shape == mid.shape == plus.shape):
        return False
    with np.errstate(invalid="ignore", over="ignore"):
        up, down = plus - mid, mid - minus
        scale = np.maximum(np.abs(up), np.abs(down))
        floor = 64 * np.finfo(np.float64).eps * np.maximum(np.maximum(np.abs(minus), np.abs(mid)), np.abs(plus))
        return bool(np.any(np.abs(up - down) > 1e-3 * scale + floor))


def _kink_ops(minus: list, mid: list, plus: list) -> tuple:
    """The ops that bend where an element moves: nodes (matched across the three runs by their place in the
    graph) whose output's one-sided changes differ while none of their inputs' do. Named by
    :data:`gradcli.ops.core.formulas.KINKS`; a node whose op declares no kinks adds nothing."""
    if not (len(minus) == len(mid) == len(plus)) or any(a[0] != b[0] or a[0] != c[0]
                                                        for a, b, c in zip(minus, mid, plus)):
        return ()  # the program took another path: the graphs cannot be compared node by node
    found = []
    for (name, lo, ins_lo), (_, at, ins_at), (_, hi, ins_hi) in zip(minus, mid, plus):
        if name in formulas.KINKS and _bends(lo, at, hi) and not any(
                _bends(a, b, c) for a, b, c in zip(ins_lo, ins_at, ins_hi)):
            if formulas.KINKS[name] not in found:
                found.append(formulas.KINKS[name])
    return tuple(found)


def _compare(wrt, base, first, objective, out: CheckResult) -> CheckResult:
    eps, atol, rtol = out.eps, out.atol, out.rtol
    at_base = None
    for inp in wrt:
        x = base[inp.name]
        numerical = np.zeros(x.shape)
        flat = numerical.reshape(-1)
        sides = []  # (k, plus, minus) of each element
        for k in range(x.size):
            values = {name: a.copy() for name, a in base.items()}
            values[inp.name].reshape(-1)[k] += eps
            plus = objective(values)
            values[inp.name].reshape(-1)[k] -= 2 * eps
            minus = objective(values)
            flat[k] = (plus - minus) / (2 * eps)
            out.evaluations += 2
            sides.append((k, plus, minus))
        g = first.get(inp.name)
        analytical = np.zeros(x.shape) if g is None else np.asarray(g, dtype=np.float64).reshape(x.shape)
        result = compare_arrays(inp.name, analytical, numerical, atol, rtol)
        if x.size:
            if at_base is None:
                at_base = objective({name: a.copy() for name, a in base.items()})
                out.evaluations += 1
            result.kinks = _kinks(inp.name, x, base, sides, at_base, analytical, numerical, objective, out)
        out.inputs.append(result)
    return out


def _kinks(name, x, base, sides, at_base, analytical, numerical, objective, out: CheckResult) -> list:
    """The :class:`Kink` elements of input ``name`` (see the module docstring)."""
    eps, atol, rtol = out.eps, out.atol, out.rtol
    found = []
    for k, plus, minus in sides:
        right, left = (plus - at_base) / eps, (at_base - minus) / eps
        noise = 64 * np.finfo(np.float64).eps * max(abs(plus), abs(minus), abs(at_base)) / eps
        jump = abs(right - left)
        if not jump > atol + rtol * max(abs(right), abs(left)) + noise:  # (NaN: no kink to speak of)
            continue
        if out.evaluations + 3 > out.max_evaluations:  # no runs left to tell a kink: say nothing more
            break
        # Half the step: a smooth function's one-sided quotients get half as far apart, a kink's stay apart.
        records = []
        halves = []
        for sign in (1, -1):
            values = {n: a.copy() for n, a in base.items()}
            values[name].reshape(-1)[k] += sign * eps / 2
            record = []
            halves.append(objective(values, record))
            records.append(record)
            out.evaluations += 1
        right2, left2 = (halves[0] - at_base) / (eps / 2), (at_base - halves[1]) / (eps / 2)
        jump2 = abs(right2 - left2)
        if not jump2 > 0.75 * jump:
            continue
        mid = []
        objective({n: a.copy() for n, a in base.items()}, mid)
        out.evaluations += 1
        index = tuple(int(i) for i in np.unravel_index(k, x.shape))
        a, n = float(analytical.reshape(-1)[k]), float(numerical.reshape(-1)[k])
        found.append(Kink(index=index, value=float(x.reshape(-1)[k]), left=float(left), right=float(right),
                          numerical=n, analytical=a, ok=bool(abs(a - n) <= atol + rtol * abs(n)),
                          ops=_kink_ops(records[1], mid, records[0]), jump=bool(jump2 > 1.5 * jump)))
    return found


def compare_arrays(name: str, analytical: np.ndarray, numerical: np.ndarray, atol: float,
                   rtol: float) -> InputCheck:
    """The :class:`InputCheck` of an answer against its numerical estimate (float64 arrays of one shape): each
    element passes when ``|analytical - numerical| <= atol + rtol * |numerical|`` (NaN differences fail)."""
    diff = np.abs(analytical - numerical)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(numerical != 0, diff / np.abs(numerical), 0.0)
    excess = diff - (atol + rtol * np.abs(numerical))
    n = analytical.size
    ok = bool(np.all(excess <= 0)) if n else True
    worst = int(np.nanargmax(excess)) if n and not np.all(np.isnan(excess)) else 0
    return InputCheck(name=name, analytical=analytical, numerical=numerical,
                      max_abs_diff=float(np.max(diff)) if n else 0.0, max_rel_diff=float(np.max(rel)) if n else 0.0,
                      ok=ok, worst=worst, atol=atol, rtol=rtol)

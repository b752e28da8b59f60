"""``gradcli grad --check``: the reported gradients against central finite differences in float64.

The program is run again in float64 (default dtype float64, every input that requires grad cast to float64)
with one input element moved by ``+eps`` and ``-eps`` at a time. The objective is ``sum(v * output)`` where
``v`` is ``--gradient`` (or 1 for a one-element output), so the numerical derivative estimates the same
vector-Jacobian product that backward computed. An element passes when
``|analytical - numerical| <= atol + rtol * |numerical|``, the criterion and defaults (eps 1e-6, atol 1e-5,
rtol 1e-3) of ``torch.autograd.gradcheck``.

Leaves that the program creates itself (``x = tensor([...], requires_grad=True)``) are perturbed when the
program assigns them to their name: the global namespace of each run watches assignments (:class:`_Perturbed`).
Random numbers are drawn from the same seed in every run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .errors import EvalError, InputError
from .tensor import Tensor

#: PyTorch's gradcheck defaults.
DEFAULT_EPS = 1e-6
DEFAULT_ATOL = 1e-5
DEFAULT_RTOL = 1e-3
#: Program runs allowed for one check (two per input element).
DEFAULT_MAX_EVALUATIONS = 20_000


@dataclass
class InputCheck:
    """The comparison for one input that requires grad.

    analytical / numerical: float64 arrays of the input's shape (an unused input's gradient counts as 0).
    max_abs_diff: max |analytical - numerical|; max_rel_diff: max |analytical - numerical| / |numerical| over
    elements where numerical is not 0 (0.0 when there are none); worst: flat index of the element furthest
    beyond the tolerance (or of the largest difference when all pass).
    """
    name: str
    analytical: np.ndarray
    numerical: np.ndarray
    max_abs_diff: float
    max_rel_diff: float
    ok: bool
    worst: int = 0


@dataclass
class CheckResult:
    """What ``--check`` found: the tolerances, one :class:`InputCheck` per input, and the program runs used."""
    eps: float
    atol: float
    rtol: float
    inputs: list = field(default_factory=list)
    evaluations: int = 0

    @property
    def ok(self) -> bool:
        """True when every element of every input is within tolerance."""
        return all(i.ok for i in self.inputs)


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
        req: the :class:`~gradcli.calculator.GradRequest` that produced ``result`` (with a fixed ``seed`` if
            the program draws random numbers; :func:`compute_checked` sees to that).
        result: its :class:`~gradcli.result.GradResult`.
        eps, atol, rtol: step and tolerances (PyTorch gradcheck's defaults).
        max_evaluations: refuse inputs with more than ``max_evaluations / 2`` elements in total.

    Raises:
        InputError: non-positive eps or tolerances, or too many input elements (exit 2).
        EvalError: the program fails in float64 or its output changes shape (exit 1).
    """
    from .calculator import prepare, run_context, run_output
    from .language.specs import Spec, evaluate_spec

    if not (eps > 0 and atol >= 0 and rtol >= 0):
        raise InputError(f"--check needs eps > 0 and atol, rtol >= 0 (got eps={eps}, atol={atol}, rtol={rtol})",
                         type="UsageError")
    wrt = [i for i in result.inputs if i.value.requires_grad]
    base = {i.name: np.array(i.value.value, dtype=np.float64) for i in wrt}
    total = sum(a.size for a in base.values())
    if 2 * total > max_evaluations:
        raise InputError(f"--check runs the program twice per input element: {total} elements need "
                         f"{2 * total} runs, more than the limit of {max_evaluations}", type="CheckLimitError",
                         hint="check a smaller input, or raise the limit with --check-max-evaluations")
    req64 = replace(req, dtype="float64", repeat=1)
    first = result.calls[0] if result.calls else {}

    v = None

    def objective(values: dict) -> float:
        nonlocal v
        with run_context(req64.dtype, req64.seed):  # every run in a fresh context: the same random numbers
            interp, program, _ = prepare(req64, _discard, _discard, globals_=_Perturbed(values))
            out = run_output(interp, program).data.astype(np.float64)
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

    return _compare(wrt, base, first, objective, CheckResult(eps=eps, atol=atol, rtol=rtol))


def _compare(wrt, base, first, objective, out: CheckResult) -> CheckResult:
    eps, atol, rtol = out.eps, out.atol, out.rtol
    for inp in wrt:
        x = base[inp.name]
        numerical = np.zeros(x.shape)
        flat = numerical.reshape(-1)
        for k in range(x.size):
            values = {name: a.copy() for name, a in base.items()}
            values[inp.name].reshape(-1)[k] += eps
            plus = objective(values)
            values[inp.name].reshape(-1)[k] -= 2 * eps
            minus = objective(values)
            flat[k] = (plus - minus) / (2 * eps)
            out.evaluations += 2
        g = first.get(inp.name)
        analytical = np.zeros(x.shape) if g is None else np.asarray(g, dtype=np.float64).reshape(x.shape)
        out.inputs.append(compare_arrays(inp.name, analytical, numerical, atol, rtol))
    return out


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
                      ok=ok, worst=worst)


def compute_checked(req, write=None, warn=None, **tolerances):
    """:func:`~gradcli.calculator.compute` then :func:`finite_difference_check`; a program without ``seed``
    gets a fresh one so that every run draws the same random numbers. Returns the result with ``.check``."""
    from .calculator import compute

    if req.seed is None:
        req = replace(req, seed=int(np.random.SeedSequence().entropy % 2**32))
    result = compute(req, write=write, warn=warn)
    result.check = finite_difference_check(req, result, **tolerances)
    return result

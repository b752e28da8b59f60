"""What ``gradcli plot`` computes: a program evaluated over a grid of one input (or two), with its derivatives.

One ``--over NAME=START:STOP[:POINTS]`` gives a curve: ``f``, ``df/dx`` and ``d²f/dx²`` (the second derivative
through ``create_graph``, as ``torch.autograd.grad`` computes it). Two give a field: ``f`` on a grid with its
gradient ``(df/dx, df/dy)`` at every point. The other inputs are fixed with ``-i``/``-c`` as in ``gradcli grad``.

**Vectorized or point by point.** The grid is first bound to the input as one tensor and the program run
once. That is right for an elementwise program (each output element depends on its own grid point only,
``x.sin() * x ** 2``), and then ``f`` and its derivatives come from one backward pass each. A program that is
not elementwise (``x.sum()``, ``x.cumsum(0)``, an ``if`` on a value) gives another shape, fails, or disagrees
with single-point runs at five check points; it is then run once per grid point, with a progress callback.

**Kinks and gaps.** Where a value is NaN or infinite, or ``f`` or a derivative jumps between two grid points
(judged by the next derivative: a smooth function changes by about ``h * f'`` over a step ``h``; a jump
changes by more, or against the sign of both derivatives, as ``1/x`` across 0), the curve is broken there
instead of drawn through. At a kink of ``f`` (``relu``, ``abs``, ``clamp``) the simplest number between the two
grid points (0 before 0.5 before 0.25...) is tried: if the derivative jumps across it, it is the kink, its
point is added to the curve, and the derivative PyTorch's rule gives exactly there (the subgradient it uses:
``relu'(0) = 0``, ``abs'(0) = 0``) is marked.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field

import numpy as np

from ..engine.errors import EvalError, GradcliError, InputError, LimitError
from ..engine.tensor import Tensor
from ..engine import autograd, dtypes
from .stages import GradRequest, prepare, run_context, run_output

#: Grid points of one ``--over`` by default (per axis: :data:`FIELD_POINTS` for two).
POINTS = 400
FIELD_POINTS = 41
#: The largest grid (points in all) gradcli plot evaluates.
MAX_POINTS = 1_000_000
#: Grid points checked against single-point runs before a vectorized evaluation is trusted.
CHECKS = 5

_OVER_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([^:]+):([^:]+)(?::\s*(\d+)\s*)?$")


@dataclass
class Over:
    """One ``--over NAME=START:STOP[:POINTS]``: the input swept and its grid (``points`` None: the default)."""
    name: str
    start: float
    stop: float
    points: int | None = None


@dataclass
class PlotRequest:
    """What to plot: the program, one or two :class:`Over` (or their ``--over`` texts), the fixed ``-i``/``-c``
    specs, the number of grid points (per axis for two), the highest derivative to show (1 or 2), and the
    options of ``gradcli grad`` (seed, dtype, filename, max_steps)."""
    program: str
    over: list
    inputs: list = field(default_factory=list)
    consts: list = field(default_factory=list)
    points: int | None = None
    order: int = 1
    seed: int | None = None
    dtype: str = "float32"
    filename: str = "<expr>"
    max_steps: int | None = None


@dataclass
class Kink:
    """A kink of the curve: where ``f`` is continuous and ``df/dx`` jumps. ``df`` is the derivative PyTorch's
    rule gives exactly at ``x`` (the subgradient it uses), ``left``/``right`` the one-sided derivatives."""
    x: float
    f: float
    df: float
    left: float
    right: float


@dataclass
class Curve:
    """A plot over one input.

    Attributes:
        name: the input swept.
        x: the grid (float64), with the kink points added in order.
        f, df, d2: the program's value, first and second derivative at each point (float64; ``d2`` None when
            not computed: ``--order 1`` and the second derivative failed).
        f_break, df_break, d2_break: True where the curve must not be drawn from the previous point (a jump,
            or a NaN/infinity on either side).
        kink: True at the points added at kinks (where the subgradient is marked).
        kinks: the :class:`Kink` list.
    """
    name: str
    x: np.ndarray
    f: np.ndarray
    df: np.ndarray
    d2: np.ndarray | None
    f_break: np.ndarray
    df_break: np.ndarray
    d2_break: np.ndarray
    kink: np.ndarray
    kinks: list = field(default_factory=list)


@dataclass
class Field:
    """A plot over two inputs: ``f`` and the gradient ``(dfdx, dfdy)`` on the grid (arrays of shape
    ``(len(y), len(x))``, float64: row ``j`` is ``y[j]``)."""
    xname: str
    yname: str
    x: np.ndarray
    y: np.ndarray
    f: np.ndarray
    dfdx: np.ndarray
    dfdy: np.ndarray


@dataclass
class PlotResult:
    """What ``gradcli plot`` produced: the program, ``curve`` (one ``--over``) or ``field`` (two), the highest
    derivative asked for, the dtype it was computed in, and whether one vectorized run sufficed."""
    program: str
    order: int
    dtype: str
    vectorized: bool
    curve: Curve | None = None
    field: Field | None = None
    default_dtype: str = "float32"


# ------------------------------------------------------------------------------------------------ parsing
def _number(text: str, what: str) -> float:
    t = text.strip().replace(" ", "")
    try:
        return float(t)
    except ValueError:
        pass
    m = re.fullmatch(r"([+-]?(?:\d+\.?\d*|\.\d+)?(?:[eE][+-]?\d+)?)\*?pi(?:/(\d+(?:\.\d*)?))?", t)
    if m:
        coef = m.group(1)
        c = 1.0 if coef in ("", "+") else -1.0 if coef == "-" else float(coef)
        return c * math.pi / (float(m.group(2)) if m.group(2) else 1.0)
    raise InputError(f"--over: {what} must be a number (or a multiple of pi, as -2pi or pi/2), got {text!r}",
                     type="UsageError")


def parse_over(text: str) -> Over:
    """``NAME=START:STOP[:POINTS]`` as an :class:`Over` (``x=-3:3``, ``t=0:2pi:100``).

    Raises:
        InputError: malformed, START not below STOP, or fewer than 2 points (a usage error, exit 2).
    """
    m = _OVER_RE.match(text)
    if not m:
        raise InputError(f"--over must be NAME=START:STOP or NAME=START:STOP:POINTS, got {text!r}", type="UsageError")
    name, a, b, n = m.groups()
    start, stop = _number(a, "START"), _number(b, "STOP")
    if not (math.isfinite(start) and math.isfinite(stop) and start < stop):
        raise InputError(f"--over {name}: START must be below STOP, both finite (got {a.strip()} and "
                         f"{b.strip()})", type="UsageError")
    points = None if n is None else int(n)
    if points is not None and points < 2:
        raise InputError(f"--over {name}: at least 2 points, got {points}", type="UsageError")
    return Over(name, start, stop, points)


# ---------------------------------------------------------------------------------------------- evaluating
class _Evaluator:
    """Runs the program with the swept inputs bound to given values, and differentiates it."""

    def __init__(self, req: PlotRequest, names: list):
        self.req = req
        self.names = names
        self.base = GradRequest(program=req.program, inputs=list(req.inputs), consts=list(req.consts),
                                seed=req.seed, dtype=req.dtype, filename=req.filename, max_steps=req.max_steps)
        self.warned = False

    def run(self, values: list, second: bool, strict_second: bool):
        """``(f, [df/dname...], d2 or None)`` as numpy arrays for the swept inputs bound to ``values``, each
        evaluation in a run context of its own (the request's dtype, and its seed from the start)."""
        with run_context(self.base.dtype, self.base.seed):
            return self._run(values, second, strict_second)

    def _run(self, values: list, second: bool, strict_second: bool):
        def discard(_text):
            return None

        warn = None if not self.warned else discard  # the first run's warnings are shown, not 400 copies
        self.warned = True
        interp, program, named = prepare(self.base, discard, warn)
        taken = {n for n, _, _ in named}
        dt = dtypes.get_default_dtype().np
        leaves = []
        for name, v in zip(self.names, values):
            if name in taken:
                raise InputError(f"{name} is swept by --over and also given by -i/-c", type="UsageError")
            t = Tensor(np.asarray(v, dtype=dt), True)
            interp.globals[name] = t
            leaves.append(t)
        out = run_output(interp, program)
        f = np.asarray(out.data)
        if f.dtype.kind not in "fc":
            f = f.astype(np.float64)
        if not out.requires_grad:
            zeros = [np.zeros(np.shape(v)) for v in values]
            return f, zeros, (np.zeros(np.shape(values[0])) if second else None)
        try:
            grads = autograd.grad(out.sum() if out.data.size != 1 else out.reshape(()), leaves,
                                  create_graph=second, allow_unused=True)
        except GradcliError:
            raise
        except (RuntimeError, TypeError, ValueError) as e:
            raise EvalError.from_exception(e) from None
        d1 = [np.zeros(np.shape(v)) if g is None else np.array(g.data, dtype=np.float64) for g, v in zip(grads, values)]
        d2 = None
        if second:
            g = grads[0]
            try:
                if g is None or not g.requires_grad:
                    d2 = np.zeros(np.shape(values[0]))
                else:
                    (h,) = autograd.grad(g.sum(), [leaves[0]], allow_unused=True)
                    d2 = np.zeros(np.shape(values[0])) if h is None else np.array(h.data, dtype=np.float64)
            except GradcliError:
                if strict_second:
                    raise
            except (RuntimeError, TypeError, ValueError) as e:
                if strict_second:
                    raise EvalError.from_exception(e) from None
        return f, d1, d2


def _close(a, b, dtype: str) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    rtol = 1e-4 if dtype == "float32" else 1e-9
    both_nan = np.isnan(a) & np.isnan(b)
    same_inf = np.isinf(a) & (a == b)
    ok = np.isclose(a, b, rtol=rtol, atol=rtol) | both_nan | same_inf
    return bool(ok.all())


def _grid(o: Over, default: int, dtype: str) -> np.ndarray:
    n = o.points or default
    return np.linspace(o.start, o.stop, n).astype(np.float32 if dtype == "float32" else np.float64)


def compute_plot(req: PlotRequest, progress=None) -> PlotResult:
    """Evaluate a :class:`PlotRequest` (see the module docstring).

    Args:
        progress: called as ``progress(done, total)`` during a point-by-point evaluation.

    Raises:
        InputError: bad ``--over``, ``--points`` or ``--order``, a swept input also given by ``-i``/``-c``,
            bad specs or program text (exit 2).
        EvalError: the program fails at a grid point, or gives more than one number per point (exit 1).
    """
    overs = [o if isinstance(o, Over) else parse_over(o) for o in req.over]
    if not 1 <= len(overs) <= 2:
        raise InputError(f"gradcli plot takes one --over (a curve) or two (a field), got {len(overs)}",
                         type="UsageError")
    if len(overs) == 2 and overs[0].name == overs[1].name:
        raise InputError(f"--over {overs[0].name} is given twice", type="UsageError")
    if req.order not in (1, 2):
        raise InputError(f"--order must be 1 or 2, got {req.order}", type="UsageError")
    if len(overs) == 2 and req.order == 2:
        raise InputError("--order 2 plots a curve (one --over); a field shows f and its gradient",
                         type="UsageError")
    if req.points is not None:
        if req.points < 2:
            raise InputError(f"--points must be at least 2, got {req.points}", type="UsageError")
        overs = [Over(o.name, o.start, o.stop, o.points or req.points) for o in overs]
    total = 1
    for o in overs:
        total *= o.points or (POINTS if len(overs) == 1 else FIELD_POINTS)
    if total > MAX_POINTS:
        raise InputError(f"the grid has {total:,} points, more than {MAX_POINTS:,}", type="UsageError")
    ev = _Evaluator(req, [o.name for o in overs])
    if len(overs) == 1:
        return _curve(req, ev, overs[0], progress)
    return _field(req, ev, overs, progress)


def _vectorized(ev: _Evaluator, grids: list, second: bool, dtype: str):
    """The results of one run on the whole grid if the program is elementwise in the swept inputs (checked at
    :data:`CHECKS` points against single-point runs), else None."""
    n = grids[0].size
    try:
        f, d1, d2 = ev.run(grids, second, strict_second=False)
    except LimitError:
        raise
    except EvalError:
        return None
    if f.shape != (n,) or any(g.shape != (n,) for g in d1) or n < 2:
        return None
    for i in sorted({0, n // 4, n // 2, (3 * n) // 4, n - 1}):
        pf, pd1, _ = ev.run([g[i] for g in grids], False, strict_second=False)
        if pf.size != 1 or not _close(pf.reshape(()), f[i], dtype) or \
                not all(_close(a.reshape(()), b[i], dtype) for a, b in zip(pd1, d1)):
            return None
    return f.astype(np.float64), d1, (None if d2 is None else d2.astype(np.float64))


def _one_point(ev: _Evaluator, values: list, second: bool, strict: bool):
    f, d1, d2 = ev.run(values, second, strict_second=strict)
    if f.size != 1:
        raise EvalError(f"gradcli plot needs one number per point: at {', '.join(f'{n}={float(v):g}' for n, v in zip(ev.names, values))} "
                        f"the program gives shape {list(f.shape)}", type="ValueError",
                        hint="reduce the output to one number (e.g. with .sum()), or plot it elementwise")
    return (float(f.reshape(())), [float(np.reshape(d, ())) for d in d1],
            None if d2 is None else float(np.reshape(d2, ())))


def _pointwise(ev: _Evaluator, points: list, second: bool, strict: bool, progress):
    fs, ds, d2s = [], [], []
    start = time.monotonic()
    for k, values in enumerate(points):
        f, d1, d2 = _one_point(ev, values, second, strict)
        fs.append(f)
        ds.append(d1)
        d2s.append(d2)
        if progress is not None:
            progress(k + 1, len(points), time.monotonic() - start)
    d2 = None if any(v is None for v in d2s) else np.array(d2s, dtype=np.float64)
    return np.array(fs, dtype=np.float64), np.array(ds, dtype=np.float64).T, d2


def _curve(req: PlotRequest, ev: _Evaluator, o: Over, progress) -> PlotResult:
    x = _grid(o, POINTS, req.dtype)
    strict = req.order == 2
    got = _vectorized(ev, [x], True, req.dtype)
    vectorized = got is not None
    if got is not None:
        f, d1, d2 = got
        df = d1[0].astype(np.float64)
        if strict and d2 is None:  # the second derivative failed: let the error surface
            ev.run([x], True, strict_second=True)
    else:
        f, dmat, d2 = _pointwise(ev, [[v] for v in x], True, strict, progress)
        df = dmat[0]
    xs = x.astype(np.float64)
    curve = _breaks_and_kinks(ev, o.name, xs, f, df, d2, x.dtype)
    return PlotResult(program=req.program, order=req.order, dtype=req.dtype, vectorized=vectorized, curve=curve,
                      default_dtype=dtypes.get_default_dtype().name)


def _field(req: PlotRequest, ev: _Evaluator, overs: list, progress) -> PlotResult:
    x = _grid(overs[0], FIELD_POINTS, req.dtype)
    y = _grid(overs[1], FIELD_POINTS, req.dtype)
    X, Y = np.meshgrid(x, y)
    flat = [X.reshape(-1), Y.reshape(-1)]
    got = _vectorized(ev, flat, False, req.dtype)
    vectorized = got is not None
    if got is not None:
        f, d1, _ = got
        dfdx, dfdy = d1
    else:
        f, dmat, _ = _pointwise(ev, list(zip(*flat)), False, False, progress)
        dfdx, dfdy = dmat
    shape = X.shape
    fld = Field(overs[0].name, overs[1].name, x.astype(np.float64), y.astype(np.float64), f.reshape(shape),
                np.asarray(dfdx, dtype=np.float64).reshape(shape), np.asarray(dfdy, dtype=np.float64).reshape(shape))
    return PlotResult(program=req.program, order=1, dtype=req.dtype, vectorized=vectorized, field=fld,
                      default_dtype=dtypes.get_default_dtype().name)


# ------------------------------------------------------------------------------------------ kinks and gaps
def _scale(v: np.ndarray) -> float:
    fin = v[np.isfinite(v)]
    if fin.size == 0:
        return 1.0
    s = float(np.ptp(fin))
    return s if s > 0 else max(1.0, float(np.abs(fin).max()))


def jumps(x: np.ndarray, v: np.ndarray, dv: np.ndarray | None) -> np.ndarray:
    """Where ``v`` jumps between consecutive points (True at index i+1 for a jump between i and i+1), judged by
    its derivative ``dv`` (None: by its neighbouring steps). Non-finite values are not jumps (they are gaps
    anyway)."""
    n = len(x)
    out = np.zeros(n, dtype=bool)
    if n < 2:
        return out
    h = np.diff(x)
    step = np.diff(v)
    tol = 1e-3 * _scale(v)
    with np.errstate(all="ignore"):
        if dv is not None:
            expected = 2.0 * h * np.maximum(np.abs(dv[:-1]), np.abs(dv[1:]))
            big = np.abs(step) > expected + tol
            slope = np.sign(step)
            against = (slope != 0) & (np.sign(dv[:-1]) == -slope) & (np.sign(dv[1:]) == -slope) & \
                      (np.abs(step) > tol)
            jump = big | against
        else:
            a = np.abs(step)
            fin = a[np.isfinite(a)]
            typical = float(np.median(fin)) if fin.size else 0.0
            jump = a > 10.0 * typical + 10 * tol
    jump &= np.isfinite(step)
    if dv is not None:
        jump &= np.isfinite(dv[:-1]) & np.isfinite(dv[1:])
    out[1:] = jump
    return out


def _gaps(v: np.ndarray, jump: np.ndarray) -> np.ndarray:
    bad = ~np.isfinite(v)
    brk = jump.copy()
    brk[1:] |= bad[1:] | bad[:-1]
    brk[0] = False
    return brk


def simplest_between(a: float, b: float) -> float | None:
    """The simplest number in the closed interval [a, b]: an integer if there is one (the one nearest 0),
    else the multiple of 1/2, 1/4, 1/10, 1/20, ... nearest 0; None when the interval is too narrow."""
    if a > b:
        a, b = b, a
    for denom in (1, 2, 4, 10, 20, 40, 100, 200, 1000, 10_000, 100_000, 1_000_000):
        lo, hi = math.ceil(a * denom - 1e-9), math.floor(b * denom + 1e-9)
        if lo <= hi:
            k = 0 if lo <= 0 <= hi else (lo if lo > 0 else hi)
            return k / denom  # a division: 201 / 100 is the float nearest 2.01
    return None


def _breaks_and_kinks(ev: _Evaluator, name: str, x, f, df, d2, dtype) -> Curve:
    f_jump = jumps(x, f, df)
    df_jump = jumps(x, df, d2)
    kinks = []
    # a kink: df jumps where f does not; look for the exact point between (or at) the two grid points
    found = {}
    for i in np.nonzero(df_jump & ~f_jump)[0]:
        a, b = float(x[i - 1]), float(x[i])
        c = simplest_between(a, b)
        if c is None or c in found:
            continue
        k = _kink_at(ev, c, abs(b - a), df[i - 1], df[i], dtype)
        if k is not None:
            found[c] = k
    kinks = sorted(found.values(), key=lambda k: k.x)
    # the kink points join the curve: f runs through them, the derivatives are broken on both sides
    xs, fs, dfs = list(x), list(f), list(df)
    d2s = list(d2) if d2 is not None else None
    df_b = list(df_jump)
    inserted = [False] * len(xs)
    for k in kinks:
        pos = int(np.searchsorted(np.asarray(xs), k.x))
        if pos < len(xs) and xs[pos] == k.x:  # on the grid already: mark it
            inserted[pos] = True
            dfs[pos] = k.df
            continue
        xs.insert(pos, k.x)
        fs.insert(pos, k.f)
        dfs.insert(pos, k.df)
        if d2s is not None:
            d2s.insert(pos, float("nan"))
        df_b.insert(pos, True)
        inserted.insert(pos, True)
    x2, f2, df2 = np.array(xs), np.array(fs), np.array(dfs)
    d22 = None if d2s is None else np.array(d2s)
    inserted = np.array(inserted, dtype=bool)
    fj = jumps(x2, f2, df2) if kinks else f_jump
    dfj = np.array(df_b, dtype=bool)
    for pos in np.nonzero(inserted)[0]:  # the subgradient point stands alone
        dfj[pos] = True
        if pos + 1 < len(dfj):
            dfj[pos + 1] = True
    d2j = dfj | (jumps(x2, d22, None) if d22 is not None else False)
    return Curve(name=name, x=x2, f=f2, df=df2, d2=d22, f_break=_gaps(f2, fj), df_break=_gaps(df2, dfj),
                 d2_break=_gaps(d22, d2j) if d22 is not None else np.zeros(len(x2), dtype=bool), kink=inserted,
                 kinks=kinks)


def _kink_at(ev: _Evaluator, c: float, h: float, d_left: float, d_right: float, dtype) -> Kink | None:
    delta = max(h * 1e-3, abs(c) * 1e-5, 1e-6 if dtype == np.float32 else 1e-12)
    try:
        fc, (dc,), _ = _one_point(ev, [np.asarray(c, dtype=dtype)], False, False)
        _, (dl,), _ = _one_point(ev, [np.asarray(c - delta, dtype=dtype)], False, False)
        _, (dr,), _ = _one_point(ev, [np.asarray(c + delta, dtype=dtype)], False, False)
    except GradcliError:
        return None
    if not (math.isfinite(dl) and math.isfinite(dr)):
        return None
    if abs(dr - dl) < 0.5 * abs(d_right - d_left):
        return None
    return Kink(x=c, f=fc, df=dc, left=dl, right=dr)

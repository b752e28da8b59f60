"""Shared test helpers: input generation by domain, and a small numpy gradcheck for gradcli.

The gradcheck mirrors ``torch.autograd.gradcheck``'s defaults (eps 1e-6, atol 1e-5, rtol 1e-3, comparison
``|analytical - numerical| <= atol + rtol * |numerical|``): the analytical Jacobian is built row by row with
one-hot ``grad_outputs`` through ``backward``, cross-checked against one full vector-Jacobian product, and
compared with central finite differences computed by perturbing each input's ``.data`` in place.
"""

from __future__ import annotations

import math
import re
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import gradcli as G
from torch_python import run_python

#: The repository's top folder (examples/, grammars/, benchmarks/ live there).
ROOT = Path(__file__).resolve().parent.parent

#: Seconds before a subprocess of a test counts as hung. A guard against hangs, not a speed check: a loaded
#: machine (CI on two cores beside other jobs) can be many times slower than an idle one.
HANG_TIMEOUT = 600

#: Why a test that compares with PyTorch is skipped where torch is not installed (it is the tests' oracle only).
TORCH_REASON = "torch is the tests' oracle and is not installed: pip install torch==2.13.0"

GRADCHECK_EPS = 1e-6
GRADCHECK_ATOL = 1e-5
GRADCHECK_RTOL = 1e-3


# ---------------------------------------------------------------------------------------------- inputs
def sh(shape) -> str:
    """A shape as a test id: ``(3, 4)`` -> ``"3x4"``, ``()`` -> ``"0d"``."""
    return "x".join(map(str, shape)) if shape else "0d"


#: The shapes every unary op is tried on: 0-d, a vector, a matrix, a size-1 dim, three dims.
UNARY_SHAPES = [(), (4,), (3, 4), (3, 1), (2, 3, 4)]

#: The shape pairs every binary op is tried on: equal shapes, 0-d with anything, and broadcasting both ways
#: (size-1 dims and missing leading dims), after HIPS autograd's combinations.
BINARY_SHAPES = [((), ()), ((4,), (4,)), ((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((3, 4), ()),
                 ((), (3, 4)), ((1, 4), (3, 4)), ((2, 1, 4), (3, 1))]

@dataclass(frozen=True)
class Arg:
    """One tensor input of a case.

    shape: its shape.
    domain: where its values are drawn from, chosen so the op is smooth there (finite differences with eps
        1e-6 never cross a kink or leave the domain):
        "real"    uniform in [-2, 2]
        "nonzero" sign * uniform [0.5, 2]   (abs, sign, relu, a divisor, norm p=1: away from 0)
        "pos"     uniform [0.5, 2]          (log, sqrt, reciprocal, a base with a real exponent)
        "unit"    uniform [0.05, 0.95]      (probabilities: a BCE target)
        "gt1"     uniform [1.5, 3]          (acosh: defined above 1)
        "bool"    random booleans           (where's condition, masks; never differentiable)
        "int"     integers in [-3, 3]       (never differentiable)
        "index"   integers in [0, high)     (class indices of a loss; never differentiable)
    grad: whether the input requires grad (only float domains).
    high: the number of classes for the "index" domain.
    """

    shape: tuple
    domain: str = "real"
    grad: bool = True
    high: int = 0

    @property
    def is_float(self) -> bool:
        return self.domain not in ("bool", "int", "index")

    @property
    def differentiable(self) -> bool:
        return self.grad and self.is_float


def seed_of(text: str) -> int:
    """A stable seed from a string (Python's hash() is salted per process)."""
    return zlib.crc32(text.encode())


def make_array(arg: Arg, rng: np.random.Generator) -> np.ndarray:
    """A float64 (or bool/int64) numpy array for ``arg``, drawn from its domain (always an ndarray, also
    for shape (): numpy arithmetic on 0-d arrays returns scalars)."""
    a = _draw(arg, rng)
    return np.asarray(a, dtype=np.float64) if arg.is_float else np.asarray(a)


def _draw(arg: Arg, rng: np.random.Generator):
    shape = arg.shape
    if arg.domain == "real":
        return rng.uniform(-2.0, 2.0, shape)
    if arg.domain == "nonzero":
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)
    if arg.domain == "pos":
        return rng.uniform(0.5, 2.0, shape)
    if arg.domain == "unit":
        return rng.uniform(0.05, 0.95, shape)
    if arg.domain == "gt1":
        return rng.uniform(1.5, 3.0, shape)
    if arg.domain == "bool":
        a = rng.random(shape) < 0.5
        if a.size >= 2:  # both branches taken
            a.flat[0], a.flat[1] = True, False
        return np.asarray(a)
    if arg.domain == "int":
        return np.asarray(rng.integers(-3, 4, shape), dtype=np.int64)
    if arg.domain == "index":
        return np.asarray(rng.integers(0, arg.high, shape), dtype=np.int64)
    raise ValueError(f"unknown domain {arg.domain!r}")


def make_arrays(args, key: str) -> list:
    rng = np.random.default_rng(seed_of(key))
    return [make_array(a, rng) for a in args]


def cast(arr: np.ndarray, float_dtype) -> np.ndarray:
    """``arr`` in ``float_dtype`` if it is a float array, else unchanged."""
    return arr.astype(float_dtype) if arr.dtype.kind == "f" else arr


def g_inputs(args, arrays, float_dtype=np.float64) -> list:
    """gradcli leaf tensors for the arrays (float ones cast to ``float_dtype``)."""
    out = []
    for a, arr in zip(args, arrays):
        out.append(G.tensor(cast(arr, float_dtype), requires_grad=a.differentiable))
    return out


def t_inputs(torch, args, arrays, float_dtype=np.float64) -> list:
    """torch leaf tensors for the same arrays."""
    out = []
    for a, arr in zip(args, arrays):
        t = torch.from_numpy(np.array(cast(arr, float_dtype), copy=True))
        out.append(t.requires_grad_(a.differentiable))
    return out


# -------------------------------------------------------------------------------------------- gradcheck
class GradcheckError(AssertionError):
    pass


def _reset(tensors) -> None:
    for t in tensors:
        t.grad = None


def analytical_jacobians(out, inputs: list) -> list:
    """One (out.numel() x input.numel()) matrix per input: row k is the gradient of output element k, from
    ``out.backward(one_hot_k, retain_graph=True)``."""
    n_out = out.data.size
    jac = [np.zeros((n_out, t.data.size)) for t in inputs]
    for k in range(n_out):
        _reset(inputs)
        onehot = np.zeros(n_out, dtype=out.data.dtype)
        onehot[k] = 1
        out.backward(G.tensor(onehot.reshape(out.data.shape)), retain_graph=True)
        for j, t in enumerate(inputs):
            g = t.grad
            if g is None:
                continue
            if g.data.shape != t.data.shape or g.data.dtype != t.data.dtype:
                raise GradcheckError(f"grad of input {j} has shape {g.data.shape} / dtype {g.data.dtype}, "
                                     f"input has {t.data.shape} / {t.data.dtype}")
            jac[j][k] = g.data.reshape(-1)
    _reset(inputs)
    return jac


def numerical_jacobians(fn, all_inputs: list, inputs: list, eps: float = GRADCHECK_EPS) -> list:
    """Central differences: each element of each input's ``.data`` is perturbed in place by +-eps."""
    jac = []
    with G.no_grad():
        for t in inputs:
            flat = t.data.reshape(-1)
            if not np.shares_memory(flat, t.data):
                raise GradcheckError("input data is not contiguous; cannot perturb in place")
            cols = []
            for i in range(flat.size):
                orig = flat[i]
                flat[i] = orig + eps
                plus = np.array(fn(*all_inputs).data, dtype=np.float64, copy=True)
                flat[i] = orig - eps
                minus = np.array(fn(*all_inputs).data, dtype=np.float64, copy=True)
                flat[i] = orig
                cols.append(((plus - minus) / (2 * eps)).reshape(-1))
            jac.append(np.stack(cols, axis=1) if cols else np.zeros((0, 0)))
    return jac


def gradcheck(fn, inputs: list, eps: float = GRADCHECK_EPS, atol: float = GRADCHECK_ATOL,
              rtol: float = GRADCHECK_RTOL, seed: int = 0) -> bool:
    """Check gradcli's derivative of ``fn(*inputs)`` w.r.t. the float64 inputs that require grad.

    Raises GradcheckError with the worst mismatch; returns True otherwise.
    """
    wrt = [t for t in inputs if t.requires_grad]
    for t in wrt:
        if t.data.dtype != np.float64:
            raise GradcheckError("gradcheck needs float64 inputs")
    out = fn(*inputs)
    if out.data.dtype != np.float64:
        raise GradcheckError(f"output dtype {out.data.dtype}, expected float64")
    analytical = analytical_jacobians(out, wrt)

    # One full vector-Jacobian product must equal v @ J (catches rules that are only right for one-hot v).
    v = np.random.default_rng(seed).standard_normal(out.data.shape)
    _reset(wrt)
    out.backward(G.tensor(v), retain_graph=True)
    for j, t in enumerate(wrt):
        got = np.zeros(t.data.size) if t.grad is None else t.grad.data.reshape(-1)
        want = v.reshape(-1) @ analytical[j]
        if not np.allclose(got, want, atol=1e-12, rtol=1e-10):
            raise GradcheckError(f"input {j}: full vector-Jacobian product {got} != v @ J {want}")
    _reset(wrt)

    numerical = numerical_jacobians(fn, inputs, wrt, eps)
    for j, (a, n) in enumerate(zip(analytical, numerical)):
        bad = np.abs(a - n) > atol + rtol * np.abs(n)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise GradcheckError(
                f"Jacobian mismatch for input {j} (shape {wrt[j].data.shape}) at output {r}, input element {c}:"
                f" analytical {a[r, c]!r} vs numerical {n[r, c]!r}\nanalytical:\n{a}\nnumerical:\n{n}")
    return True


def gradgradcheck(fn, inputs: list, eps: float = GRADCHECK_EPS, atol: float = GRADCHECK_ATOL,
                  rtol: float = GRADCHECK_RTOL, seed: int = 0) -> bool:
    """Check second derivatives, like ``torch.autograd.gradgradcheck``: the first-order gradients
    ``grad(fn(*inputs), wrt, grad_outputs=v, create_graph=True)`` (``v`` random, fixed) are themselves
    gradchecked as functions of the inputs.

    A first gradient that does not require grad (the op is linear in every input) must be constant: its
    finite-difference Jacobian must vanish within ``atol``.
    Raises GradcheckError with the worst mismatch; returns True otherwise.
    """
    wrt_idx = [i for i, t in enumerate(inputs) if t.requires_grad]
    out = fn(*inputs)
    v = G.tensor(np.random.default_rng(seed + 1).standard_normal(out.data.shape))

    def first_grads(*xs):
        with G.enable_grad():  # also inside numerical_jacobians' no_grad
            o = fn(*xs)
            return G.grad(o, [xs[i] for i in wrt_idx], grad_outputs=v, create_graph=True, allow_unused=True)

    first = first_grads(*inputs)
    for k, g in enumerate(first):
        if g is None:
            continue

        def fn_k(*xs, k=k):
            return first_grads(*xs)[k]

        if g.requires_grad:
            try:
                gradcheck(fn_k, inputs, eps, atol, rtol, seed)
            except GradcheckError as e:
                raise GradcheckError(f"second derivative through the gradient of input {wrt_idx[k]}: {e}") from None
        else:
            for j, n in enumerate(numerical_jacobians(fn_k, inputs, [inputs[i] for i in wrt_idx], eps)):
                if n.size and np.abs(n).max() > atol:
                    raise GradcheckError(f"the gradient of input {wrt_idx[k]} does not require grad, but it "
                                         f"varies with input {wrt_idx[j]}: max |d/dx| {np.abs(n).max()!r}")
    return True


# ------------------------------------------------------------------------------------------------ cases
def api(m, name: str):
    """``m.<name>`` for gradcli; for torch, where torch keeps the same function: ``torch.nn.functional.X``
    if it exists (except the deprecated F.tanh/F.sigmoid), else ``torch.X``, and a few Tensor-only methods."""
    if m is G:
        return getattr(G, name)
    elsewhere = {
        "view": lambda: m.Tensor.view,
        "expand": lambda: m.Tensor.expand,
        "sum_to_size": lambda: m.Tensor.sum_to_size,
    }
    if name in elsewhere:
        return elsewhere[name]()
    if "." in name:  # a submodule's function: "special.expit", "linalg.det"
        head, _, tail = name.partition(".")
        return getattr(getattr(m, head), tail)
    if name not in ("tanh", "sigmoid") and hasattr(m.nn.functional, name):  # F.tanh/F.sigmoid are deprecated
        return getattr(m.nn.functional, name)  # losses: torch.X takes reduction as an int, F.X as a string
    return getattr(m, name)


@dataclass(frozen=True)
class Case:
    """One op call the generic tests run (tests/ops/test_op_table.py): a sample of the op table
    (tests/ops/opinfo.py) or a graph of several ops (tests/ops/cases_graphs.py).

    op: the op table entry it belongs to ("composite" for a graph).
    id: a readable test id, unique over the table and the graphs; it also seeds the input values.
    fn: ``fn(m, *tensors)`` with ``m`` gradcli or torch; returns one Tensor.
    args: the tensor inputs (shape, domain, requires grad).
    marks: extra pytest marks (a strict xfail for a reported bug).
    """

    op: str
    id: str
    fn: Callable
    args: tuple
    marks: tuple = field(default=())


class CaseBook:
    """Cases that do not fit one op's samples (graphs of several ops): a ``tests/ops/cases_*.py`` module
    defines ``BOOK = CaseBook()`` and adds to it."""

    def __init__(self):
        self.cases: list[Case] = []

    def add(self, op: str, id: str, fn: Callable, *args: Arg, marks=()) -> None:
        """A case with id ``f"{op}-{id}"``."""
        self.cases.append(Case(op, f"{op}-{id}", fn, tuple(args), marks=tuple(marks)))


# ---------------------------------------------------------------------------------------- torch oracle
def to_np(t) -> np.ndarray:
    """The values of a gradcli or torch tensor as a numpy array (torch's efficient zero tensors, e.g. abs's
    second derivative, as zeros)."""
    if isinstance(t, G.Tensor):
        return t.data
    if t._is_zerotensor():
        return np.zeros(tuple(t.shape))
    return t.detach().numpy()


def grad_fn_name(t):
    """The grad_fn class name of a gradcli or torch tensor (None for a leaf)."""
    if t.grad_fn is None:
        return None
    return t.grad_fn.name() if isinstance(t, G.Tensor) else type(t.grad_fn).__name__


def autograd_grad(m):
    """``gradcli.grad`` or ``torch.autograd.grad``."""
    return G.grad if m is G else m.autograd.grad


def assert_raises_like_torch(fn, torch) -> None:
    """``fn(torch)`` and ``fn(gradcli)`` both raise, with the same exception type name and message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as et:
            fn(torch)
        with pytest.raises(Exception) as eg:
            fn(G)
    assert (type(eg.value).__name__, str(eg.value)) == (type(et.value).__name__, str(et.value))


#: A number as Python and PyTorch print it (ints, decimals, exponents, nan and inf).
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b")


def _last_digit(literal: str) -> float:
    """One unit in the last printed digit of a printed number (``0.1235`` -> 1e-4, ``1.5e-03`` -> 1e-4): what
    rounding to that many digits can flip when two values differ in their last bits. 0 for an integer or an
    integral float (``3``, ``12.``), which must match exactly."""
    mantissa, _, exponent = literal.lower().partition("e")
    decimals = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    if decimals == 0:
        return 0.0
    return 10.0 ** (int(exponent or 0) - decimals)


def printed_alike(got: str, want: str, rtol: float = 1e-4) -> bool:
    """Whether two printed outputs say the same: the same text between the numbers (up to whitespace, since
    PyTorch pads columns to the widest number) and each pair of numbers within ``rtol`` or one unit of the
    last printed digit (integers exactly; nan with nan).

    For outputs with float32 results of matrix products, convolutions and long reductions, which may differ in
    their last bits with the BLAS kernel, the CPU and the summation order, so that a printed digit can flip;
    rtol 1e-4 as the corpus compares its rounding-sensitive programs (tests/corpus/test_corpus.py).
    """
    if got == want:
        return True
    text_g, text_w = _NUMBER.split(got), _NUMBER.split(want)
    if [" ".join(t.split()) for t in text_g] != [" ".join(t.split()) for t in text_w]:
        return False
    for g, w in zip(_NUMBER.findall(got), _NUMBER.findall(want)):
        a, b = float(g), float(w)
        if math.isnan(a) or math.isnan(b):
            if not (math.isnan(a) and math.isnan(b)):
                return False
            continue
        if a == b:
            continue
        if math.isinf(a) or math.isinf(b):
            return False
        if abs(a - b) > rtol * max(abs(a), abs(b)) + max(_last_digit(g), _last_digit(w)) * (1 + 1e-9):
            return False
    return True


def assert_printed_alike(got: str, want: str, rtol: float = 1e-4) -> None:
    """Fail with both outputs, line by line, unless :func:`printed_alike`."""
    if not printed_alike(got, want, rtol):
        diff = "\n".join(f"  got  {g!r}\n  want {w!r}" for g, w in zip(got.splitlines(), want.splitlines())
                         if g != w)
        raise AssertionError(f"the printed outputs differ beyond rtol {rtol}:\n{diff or (got, want)}")


def python_and_gradcli_stdout(tmp_path, name: str, program: str) -> tuple[str, str]:
    """Run ``program`` (the text of a PyTorch program) with Python and torch, then with ``gradcli run``, and
    return both standard outputs ``(want, got)``; each run must exit 0 (its stderr is the failure message)."""
    import os
    import subprocess
    import sys

    pytest.importorskip("torch", reason=TORCH_REASON)
    path = tmp_path / f"{name}.py"
    path.write_text(program)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    want = run_python(path, timeout=HANG_TIMEOUT, env=env)  # as `python PATH`, torch imported once per process
    assert want.returncode == 0, want.stderr
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True, env=env,
                         timeout=HANG_TIMEOUT)
    assert got.returncode == 0, got.stderr
    return want.stdout, got.stdout

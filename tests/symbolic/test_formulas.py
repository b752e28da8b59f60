"""The gradient as a formula (``gradcli grad --symbolic``), checked against PyTorch.

A table of expressions (scalar calculus, elementwise functions of vectors, the Matrix Cookbook's identities for
linear and quadratic forms, traces, inverses and determinants, norms, least squares, logistic regression,
softmax cross-entropy). For each, at a random point: gradcli's formula must agree with autograd at the inputs
(its own check), its ``expr`` evaluated by real PyTorch must be PyTorch's gradient of the same program, and
``gradcli grad`` must accept the ``expr`` as a program and compute the same values.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.app.calculator import GradRequest, compute
from helpers import seed_of

sympy = pytest.importorskip("sympy", reason="--symbolic needs SymPy: pip install 'gradcli[symbolic]'")
from gradcli.app.symbolic import symbolic_gradients  # noqa: E402  (after the SymPy check)

S, V, M = (), (4,), (3, 3)


def _draw(kind: str, shape: tuple, rng) -> np.ndarray:
    """A point where the expression is defined and smooth: ``pos`` positive, ``inv`` a well-conditioned
    matrix, ``spd`` symmetric positive definite, ``prob`` a probability vector, ``cls`` a class index."""
    if kind == "cls":
        return np.array(int(rng.integers(0, 4)))
    x = rng.uniform(-1.5, 1.5, size=shape)
    if kind == "pos":
        return rng.uniform(0.3, 2.0, size=shape)
    if kind == "unit":
        return rng.uniform(0.05, 0.95, size=shape)
    if kind == "inv":
        return x + 3 * np.eye(shape[0])
    if kind == "spd":
        return x @ x.T + shape[0] * np.eye(shape[0])
    if kind == "prob":
        p = rng.uniform(0.1, 1.0, size=shape)
        return p / p.sum()
    if kind == "nonzero":
        return np.where(np.abs(x) < 0.2, 0.7, x)
    return x


def I(shape=S, kind="any"):  # noqa: E743 - an input that requires grad
    return ("i", shape, kind)


def C(shape=S, kind="any"):  # a constant
    return ("c", shape, kind)


#: (program, {name: I(...) or C(...)})
CASES = [
    # ------------------------------------------------------------------ scalar calculus
    ("x * x.sin()", {"x": I()}),
    ("x.exp() * x.cos()", {"x": I()}),
    ("x ** 3 - 2 * x", {"x": I()}),
    ("x.log() / x", {"x": I(S, "pos")}),
    ("x.sqrt() * x", {"x": I(S, "pos")}),
    ("x.tanh()", {"x": I()}),
    ("x.sigmoid()", {"x": I()}),
    ("1 / (1 + x ** 2)", {"x": I()}),
    ("x.atan()", {"x": I()}),
    ("x.sin() ** 2 + x.cos() ** 2", {"x": I()}),
    ("x.exp() ** 2", {"x": I()}),
    ("(2 * x).sinh()", {"x": I()}),
    ("x * y", {"x": I(), "y": I()}),
    ("x / y", {"x": I(), "y": I(S, "pos")}),
    ("x ** y", {"x": I(S, "pos"), "y": I()}),
    ("(x * y).sin() + y", {"x": I(), "y": I()}),
    ("x.abs() * x", {"x": I(S, "nonzero")}),
    ("x.log1p()", {"x": I(S, "pos")}),
    ("x.relu() * x", {"x": I(S, "nonzero")}),
    ("x.erf()", {"x": I()}),
    ("2 ** x", {"x": I()}),
    ("x.cosh() - x.sinh()", {"x": I()}),
    # ------------------------------------------------------------------ elementwise functions of vectors
    ("(x * x.sin()).sum()", {"x": I(V)}),
    ("x.exp().sum()", {"x": I(V)}),
    ("(x ** 2).sum()", {"x": I(V)}),
    ("x.pow(3).mean()", {"x": I(V)}),
    ("(x.log() * x).sum()", {"x": I(V, "pos")}),
    ("x.sigmoid().sum()", {"x": I(V)}),
    ("x.tanh().sum()", {"x": I(V)}),
    ("(x * y).sum()", {"x": I(V), "y": I(V)}),
    ("(x / y).sum()", {"x": I(V), "y": I(V, "pos")}),
    ("(c * x).sum()", {"c": I(), "x": I(V)}),
    ("(x - y).pow(2).sum()", {"x": I(V), "y": I(V)}),
    ("(x.softmax(0) * w).sum()", {"x": I(V), "w": C(V)}),
    ("x.logsumexp(0)", {"x": I(V)}),
    ("x.norm()", {"x": I(V)}),
    ("x.norm() ** 2", {"x": I(V)}),
    ("x.sqrt().sum()", {"x": I(V, "pos")}),
    ("torch.nn.functional.softplus(x).sum()", {"x": I(V)}),
    ("torch.nn.functional.relu(x).sum()", {"x": I(V, "nonzero")}),
    ("(x.sin() * y.cos()).sum()", {"x": I(V), "y": I(V)}),
    ("x.sum() ** 2", {"x": I(V)}),
    ("x.mean()", {"x": I(V)}),
    ("x.sum()", {"x": I(V)}),
    ("(x.exp() / x.exp().sum()).log().sum()", {"x": I(V)}),
    ("torch.nn.functional.logsigmoid(x).sum()", {"x": I(V)}),
    ("(x.clone() * x).sum()", {"x": I(V)}),
    # ------------------------------------------------------------------ linear and quadratic forms
    ("a @ x", {"a": C(V), "x": I(V)}),
    ("x @ a", {"a": C(V), "x": I(V)}),
    ("x @ x", {"x": I(V)}),
    ("x @ A @ x", {"x": I(V), "A": C((4, 4))}),
    ("x @ A @ x", {"x": I(V), "A": I((4, 4))}),
    ("a @ X @ b", {"a": C((3,)), "X": I(M), "b": C((3,))}),
    ("a @ X.T @ b", {"a": C((3,)), "X": I(M), "b": C((3,))}),
    ("(A @ x).sum()", {"A": C((3, 4)), "x": I(V)}),
    ("(A @ x).sin().sum()", {"A": C((3, 4)), "x": I(V)}),
    ("(A @ x).tanh().sum()", {"A": C((3, 4)), "x": I(V)}),
    ("(x @ A @ x).exp()", {"x": I((3,)), "A": C(M)}),
    ("torch.outer(x, y).trace()", {"x": I((3,)), "y": I((3,))}),
    ("(x @ A @ y) * 2", {"x": I((3,)), "A": I(M), "y": I((3,))}),
    # ------------------------------------------------------------------ traces
    ("X.trace()", {"X": I(M)}),
    ("(A @ X).trace()", {"A": C(M), "X": I(M)}),
    ("(X @ A).trace()", {"A": C(M), "X": I(M)}),
    ("(X @ X).trace()", {"X": I(M)}),
    ("(X.T @ X).trace()", {"X": I(M)}),
    ("(X @ X.T).trace()", {"X": I(M)}),
    ("(A @ X @ B).trace()", {"A": C(M), "X": I(M), "B": C(M)}),
    ("(X.T @ A @ X).trace()", {"X": I(M), "A": C(M)}),
    ("(X.T @ A @ X).trace()", {"X": I(M), "A": I(M)}),
    # ------------------------------------------------------------------ inverses and determinants
    ("X.det()", {"X": I(M, "inv")}),
    ("X.det().log()", {"X": I(M, "spd")}),
    ("torch.logdet(X)", {"X": I(M, "spd")}),
    ("torch.linalg.det(X) ** 2", {"X": I(M, "inv")}),
    ("torch.linalg.inv(X).trace()", {"X": I(M, "inv")}),
    ("a @ torch.linalg.inv(X) @ b", {"a": C((3,)), "X": I(M, "inv"), "b": C((3,))}),
    ("(A @ torch.linalg.inv(X)).trace()", {"A": C(M), "X": I(M, "inv")}),
    ("torch.linalg.slogdet(X)[1]", {"X": I(M, "inv")}),
    # ------------------------------------------------------------------ norms
    ("(X ** 2).sum()", {"X": I(M)}),
    ("X.norm()", {"X": I(M)}),
    ("torch.linalg.norm(x)", {"x": I(V)}),
    ("(A @ x - b).norm()", {"A": C((3, 4)), "x": I(V), "b": C((3,))}),
    # ------------------------------------------------------------------ least squares
    ("((A @ x - b) ** 2).sum()", {"A": C((3, 4)), "x": I(V), "b": C((3,))}),
    ("((X @ w - y) ** 2).mean()", {"X": C((5, 4)), "w": I(V), "y": C((5,))}),
    ("torch.nn.functional.mse_loss(A @ x, b)", {"A": C((3, 4)), "x": I(V), "b": C((3,))}),
    ("torch.nn.functional.mse_loss(x, y)", {"x": I(V), "y": I(V)}),
    ("((A @ x - b) ** 2).sum() + lam * (x ** 2).sum()", {"A": C((3, 4)), "x": I(V), "b": C((3,)), "lam": C()}),
    # ------------------------------------------------------------------ logistic regression
    ("torch.nn.functional.binary_cross_entropy_with_logits(X @ w, y)",
     {"X": C((5, 4)), "w": I(V), "y": C((5,), "unit")}),
    ("(1 + (-(y * (X @ w))).exp()).log().mean()", {"X": C((5, 4)), "w": I(V), "y": C((5,))}),
    ("-(y * (X @ w).sigmoid().log() + (1 - y) * (1 - (X @ w).sigmoid()).log()).sum()",
     {"X": C((5, 4)), "w": I(V), "y": C((5,), "unit")}),
    # ------------------------------------------------------------------ softmax cross-entropy
    ("torch.nn.functional.cross_entropy(z, t)", {"z": I(V), "t": C(S, "cls")}),
    ("torch.nn.functional.cross_entropy(z, p)", {"z": I(V), "p": C(V, "prob")}),
    ("-(p * torch.nn.functional.log_softmax(z, 0)).sum()", {"z": I(V), "p": C(V, "prob")}),
    ("torch.nn.functional.cross_entropy(W @ x, t)", {"W": I((4, 3)), "x": C((3,)), "t": C(S, "cls")}),
]


def _point(program: str, spec: dict):
    rng = np.random.default_rng(seed_of(program + str(sorted(spec.items()))))
    return {name: _draw(kind, shape, rng) for name, (_, shape, kind) in spec.items()}


def _torch_inputs(torch, values: dict, spec: dict, requires_grad: bool) -> dict:
    out = {}
    for name, v in values.items():
        if v.dtype.kind == "i":
            out[name] = torch.tensor(v)
        else:
            out[name] = torch.tensor(v, dtype=torch.float64, requires_grad=requires_grad and spec[name][0] == "i")
    return out


def _symbolic(program: str, spec: dict, values: dict):
    inputs = [(n, values[n].tolist()) for n, s in spec.items() if s[0] == "i"]
    consts = [(n, values[n].tolist()) for n, s in spec.items() if s[0] == "c"]
    req = GradRequest(program=program, inputs=inputs, consts=consts, dtype="float64")
    result = compute(req)
    return symbolic_gradients(result, req), consts


def test_the_table_has_at_least_sixty_expressions():
    assert len(CASES) >= 60


@pytest.mark.parametrize("program,spec", CASES, ids=[f"{k}:{p}" for k, (p, _) in enumerate(CASES)])
def test_formula_is_pytorchs_gradient(torch, program, spec):
    values = _point(program, spec)
    sym, consts = _symbolic(program, spec, values)
    assert sym.reason is None, sym.reason
    # PyTorch's gradient of the same program (the programs are PyTorch expressions)
    env = _torch_inputs(torch, values, spec, True)
    out = eval(program, {"torch": torch}, dict(env))  # noqa: S307 - the test's own table, never user input
    names = [n for n, s in spec.items() if s[0] == "i"]
    grads = torch.autograd.grad(out, [env[n] for n in names])
    detached = {n: t.detach() for n, t in env.items()}
    for name, want in zip(names, grads):
        f = sym.formulas[name]
        assert f.reason is None, f.reason
        assert f.agrees, f"{name}: {f.pretty} disagrees with autograd by {f.max_abs_diff}"
        got = eval(f.expr, {"torch": torch}, dict(detached))  # noqa: S307 - the formula under test
        got = torch.as_tensor(got, dtype=torch.float64)
        assert tuple(got.shape) == tuple(want.shape), (f.expr, got.shape, want.shape)
        torch.testing.assert_close(got, want, rtol=1e-7, atol=1e-9, msg=lambda m: f"{f.expr}: {m}")
        # gradcli accepts the formula as a program and computes the same values
        every = [(n, values[n].tolist()) for n in spec]
        again = compute(GradRequest(program=f.expr, consts=every, dtype="float64"))
        np.testing.assert_allclose(again.output.value, want.numpy(), rtol=1e-7, atol=1e-9)


#: The formulas the issue's examples print (and a few more that read well only if simplified).
PRINTED = [
    ("x * x.sin()", {"x": I()}, "x", "sin(x) + x·cos(x)", "x.sin() + x * x.cos()"),
    ("(x * x.sin()).sum()", {"x": I(V)}, "x", "sin(x) + x·cos(x)", "x.sin() + x * x.cos()"),
    ("x @ A @ x", {"x": I(V), "A": C((4, 4))}, "x", "(A + Aᵀ) x", "(A + A.T) @ x"),
    ("(X.T @ A @ X).trace()", {"X": I(M), "A": C(M)}, "X", "(A + Aᵀ) X", "(A + A.T) @ X"),
    ("X.det().log()", {"X": I(M, "spd")}, "X", "X⁻ᵀ", "torch.linalg.inv(X).T"),
    ("torch.logdet(X)", {"X": I(M, "spd")}, "X", "X⁻ᵀ", "torch.linalg.inv(X).T"),
    ("((A @ x - b) ** 2).sum()", {"A": C((3, 4)), "x": I(V), "b": C((3,))}, "x", "2·Aᵀ (A x - b)",
     "2 * A.T @ (A @ x - b)"),
    ("a @ X @ b", {"a": C((3,)), "X": I(M), "b": C((3,))}, "X", "a bᵀ", "torch.outer(a, b)"),
    ("(A @ X).trace()", {"A": C(M), "X": I(M)}, "X", "Aᵀ", "A.T"),
    ("torch.nn.functional.cross_entropy(z, t)", {"z": I(V), "t": C(S, "cls")}, "z", None, None),
    ("x.sum()", {"x": I(V)}, "x", "1", "torch.full_like(x, 1)"),
]


@pytest.mark.parametrize("program,spec,name,pretty,expr", PRINTED, ids=[p[0] for p in PRINTED])
def test_printed_forms(program, spec, name, pretty, expr):
    sym, _ = _symbolic(program, spec, _point(program, spec))
    f = sym.formulas[name]
    assert f.agrees
    if pretty is not None:
        assert f.pretty == pretty
        assert f.expr == expr


def test_logdet_where_sympy_alone_gives_zero():
    """SymPy's own matrix calculus differentiates log(det(X)) to 0; gradcli's rule gives X⁻ᵀ, and its value
    is autograd's gradient."""
    X = sympy.MatrixSymbol("X", 3, 3)
    sympys = sympy.diff(sympy.log(sympy.Determinant(X)), X)
    spec = {"X": I(M, "spd")}
    sym, _ = _symbolic("X.det().log()", spec, _point("X.det().log()", spec))
    f = sym.formulas["X"]
    assert f.pretty == "X⁻ᵀ" and f.agrees
    assert sympys != sympy.Transpose(sympy.Inverse(X)) or sympys == 0  # (whatever SymPy says, ours is checked)


def test_det_where_sympy_alone_is_missing(torch):
    """det(X)'s gradient det(X) X⁻ᵀ (the Matrix Cookbook (49)) from gradcli's rule, checked by PyTorch."""
    spec = {"X": I(M, "inv")}
    values = _point("X.det()", spec)
    sym, _ = _symbolic("X.det()", spec, values)
    f = sym.formulas["X"]
    assert f.pretty == "det(X)·X⁻ᵀ" and f.agrees
    X = torch.tensor(values["X"], requires_grad=True)
    (want,) = torch.autograd.grad(torch.linalg.det(X), X)
    got = eval(f.expr, {"torch": torch}, {"X": X.detach()})  # noqa: S307 - the formula under test
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize("program,spec", CASES[::3], ids=[p for p, _ in CASES[::3]])
def test_formula_agrees_in_float32(program, spec):
    """In PyTorch's default dtype the check at the inputs passes too (autograd's float32 rounding is within its
    tolerance)."""
    values = _point(program, spec)
    inputs = [(n, values[n].tolist()) for n, s in spec.items() if s[0] == "i"]
    consts = [(n, values[n].tolist()) for n, s in spec.items() if s[0] == "c"]
    req = GradRequest(program=program, inputs=inputs, consts=consts)
    sym = symbolic_gradients(compute(req), req)
    assert sym.reason is None and all(f.agrees for f in sym.formulas.values()), sym

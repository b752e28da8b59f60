"""The Hessian of a scalar as a formula (``gradcli hessian --symbolic``).

Each input ``a``'s gradient formula is a PyTorch expression that gradcli runs (:mod:`gradcli.app.symbolic`); it
is traced again, and its vector-Jacobian product with a symbolic vector ``v`` of ``a``'s shape, taken with
respect to input ``b``, is ``H[a][b]ᵀ v``. The block is read off that linear form: ``M v`` gives ``H = Mᵀ``
(``x @ A @ x``: A + Aᵀ), an elementwise ``c·v`` gives ``diag(c)`` (``(x * x.sin()).sum()``: diag(2·cos(x) -
x·sin(x))), a scalar input its derivative. Blocks of more than two dimensions (matrix inputs) have no such
formula and say so.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions import MatMul, MatrixExpr, Transpose

from ..calculator import compute
from .gradients import Formula, SymbolicResult, describe, symbolic_gradients, trace_program
from .algebra import Diag, NoFormula, V, simplify

_SEED = "v"


def _linear_part(tracer, g: V, v_name: str, a_shape: tuple, b_shape: tuple) -> V:
    """``H[a][b]`` from ``g = H[a][b]ᵀ v`` (see the module docstring).

    Raises:
        NoFormula: a form the blocks cannot be read from.
    """
    s = tracer.s
    e = g.expr
    shape = tuple(a_shape) + tuple(b_shape)
    if len(shape) > 2:
        raise NoFormula(f"a Hessian block of shape {shape} (formulas cover scalar and vector inputs)")
    if isinstance(e, MatrixExpr):
        v_mat = s.mat_symbol(v_name)
        if isinstance(e, MatMul) and e.args[-1] == v_mat and not MatMul(*e.args[:-1]).has(v_mat):
            m = MatMul(*e.args[:-1]) if len(e.args) > 2 else e.args[0]
            return simplify(V(Transpose(m), shape), s)
        raise NoFormula("a Hessian whose product with a vector is not of the form M v")
    v = s.elem_symbol(v_name)
    if isinstance(e, s.SumAll) and len(a_shape) == 1 and b_shape == ():  # Σ c·v: H = c
        c = sp.diff(e.args[0], v)
        if sp.simplify(e.args[0] - c * v) == 0 and not c.has(v):
            return simplify(V(c, shape), s)
    c = sp.diff(e, v)
    if c.has(v) or sp.simplify(e - c * v) != 0:
        raise NoFormula("a Hessian whose product with a vector is not linear in the vector elementwise")
    if len(a_shape) == 1 and len(b_shape) == 1:
        return simplify(V(Diag(c, shape[0]), shape), s)
    return simplify(V(c, shape), s)


def symbolic_hessian(result, req, style: str = "unicode") -> SymbolicResult:
    """The formulas of the blocks of ``result`` (a Hessian :class:`~gradcli.app.transforms.TransformResult` of
    the request ``req``), keyed ``"a,b"``; each checked against the block autograd computed."""
    grad_result = compute(req)
    first = symbolic_gradients(grad_result, req, style)
    keys = [f"{a},{b}" for (a, b) in result.blocks]
    if first.reason is not None:
        return SymbolicResult({k: Formula(k, reason=first.reason) for k in keys}, first.reason, style, "hessian")
    inputs = [(i.name, i.value.value, i.value.requires_grad) for i in grad_result.inputs if i.kind != "leaf"]
    shapes = dict(result.inputs)
    formulas = {}
    for (a, b), block in result.blocks.items():
        key = f"{a},{b}"
        fa = first.formulas.get(a)
        if fa is None or fa.reason is not None:
            formulas[key] = Formula(key, reason=fa.reason if fa is not None else "no gradient formula")
            continue
        try:
            seed = _zeros(shapes[a])
            tracer, output, seed_v, values = trace_program(fa.expr, "<formula>", inputs, req.dtype, req.seed, seed)
            grads = tracer.gradients(output, seed_v, [b])
            if b not in grads:
                h = V(sp.Integer(0), tuple(shapes[a]) + tuple(shapes[b]))
            else:
                h = _linear_part(tracer, grads[b], _SEED, shapes[a], shapes[b])
            formulas[key] = describe(tracer, key, h, values, block, req.dtype)
        except NoFormula as e:
            formulas[key] = Formula(key, reason=f"no formula: {e.reason}")
        except (TypeError, ValueError, KeyError) as e:
            formulas[key] = Formula(key, reason=f"no formula: {type(e).__name__}: {e}")
    return SymbolicResult(formulas, style=style, what="hessian")


def _zeros(shape: tuple):
    """Nested lists of zeros of ``shape`` (the seed's value: only its shape matters)."""
    if not shape:
        return 0.0
    return [_zeros(shape[1:]) for _ in range(shape[0])]

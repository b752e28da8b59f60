"""Evaluating a formula at the inputs with numpy, by a walk over its SymPy tree (never eval/exec): the check
that the formula is the gradient autograd computed.

Elementwise expressions evaluate to arrays of their tensor shape (broadcasting as numpy does); matrix
expressions to 2-d arrays (a vector as an n x 1 column); the stand-ins between the worlds are reshaped.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from sympy.matrices.expressions import (Determinant, Identity, Inverse, MatAdd, MatMul, MatPow, MatrixExpr,
                                        MatrixSymbol, OneMatrix, Trace, Transpose, ZeroMatrix)

from .algebra import (Algebra, Diag, is_constant, LogSumExp, Norm, OneHot, Relu, Sigmoid, Sign, Softmax, Softplus,
                      Step, SumAll, mat_shape)

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _softmax(z):
    e = np.exp(z - np.max(z))
    return e / e.sum()


def _logsumexp(z):
    m = np.max(z)
    return m + np.log(np.sum(np.exp(z - m)))


_UNARY = {
    sp.sin: np.sin, sp.cos: np.cos, sp.tan: np.tan, sp.exp: np.exp, sp.log: np.log, sp.tanh: np.tanh,
    sp.sinh: np.sinh, sp.cosh: np.cosh, sp.asin: np.arcsin, sp.acos: np.arccos, sp.atan: np.arctan,
    sp.erf: _erf, sp.Abs: np.abs, Sign: np.sign, sp.sign: np.sign, Sigmoid: lambda x: 1 / (1 + np.exp(-x)),
    Relu: lambda x: np.maximum(x, 0), Step: lambda x: (np.asarray(x) > 0).astype(np.float64),
    Softplus: lambda x: np.logaddexp(0, x), SumAll: np.sum,
    Norm: lambda x: np.sqrt(np.sum(np.square(x))), Softmax: _softmax, LogSumExp: _logsumexp,
}


class Evaluator:
    """Evaluate formulas of ``algebra`` at ``values`` (leaf name → numpy array, float64)."""

    def __init__(self, algebra: Algebra, values: dict):
        self.a = algebra
        self.values = values

    def __call__(self, e, shape: tuple) -> np.ndarray:
        """The formula's value as an array of the tensor ``shape``."""
        if isinstance(e, MatrixExpr):
            return np.asarray(self.mat(e)).reshape(shape)
        return np.broadcast_to(np.asarray(self.elem(e), dtype=np.float64), shape).copy()

    def elem(self, e):
        if isinstance(e, sp.Symbol):
            if e in self.a.placeholders:
                v = self.a.placeholders[e]
                return np.asarray(self.mat(v.expr)).reshape(v.shape)
            return self.values[e.name]
        if e.is_Number or is_constant(e):
            return float(e)
        if isinstance(e, sp.Add):
            out = 0.0
            for t in e.args:
                out = out + self.elem(t)
            return out
        if isinstance(e, sp.Mul):
            out = 1.0
            for t in e.args:
                out = out * self.elem(t)
            return out
        if isinstance(e, sp.Pow):
            base = np.asarray(self.elem(e.base), dtype=np.float64)
            return np.power(base, float(e.exp)) if e.exp.is_Number else np.power(base, self.elem(e.exp))
        if isinstance(e, Trace):
            return np.trace(self.mat(e.arg))
        if isinstance(e, Determinant):
            return np.linalg.det(self.mat(e.arg))
        if isinstance(e, Diag):
            n = int(e.args[1])
            return np.diag(np.broadcast_to(np.asarray(self.elem(e.args[0]), dtype=np.float64), (n,)))
        if isinstance(e, OneHot):
            y = np.asarray(self.elem(e.args[0])).astype(np.int64)
            return np.eye(int(e.args[1]))[y]
        f = _UNARY.get(e.func)
        if f is None:
            raise TypeError(f"cannot evaluate {type(e).__name__}")
        return f(np.asarray(self.elem(e.args[0]), dtype=np.float64))

    def mat(self, e):
        if isinstance(e, MatrixSymbol):
            if e in self.a.blocks:
                v = self.a.blocks[e]
                return np.broadcast_to(np.asarray(self.elem(v.expr), dtype=np.float64), v.shape).reshape(e.shape)
            return np.asarray(self.values[e.name], dtype=np.float64).reshape(mat_shape(self.a.leaves[e.name]))
        if not isinstance(e, MatrixExpr):
            return np.asarray(self.elem(e), dtype=np.float64)
        if isinstance(e, MatAdd):
            out = 0.0
            for t in e.args:
                out = out + self.mat(t)
            return out
        if isinstance(e, MatMul):
            coef, acc = 1.0, None
            for t in e.args:
                if isinstance(t, MatrixExpr):
                    m = self.mat(t)
                    acc = m if acc is None else acc @ m
                else:
                    coef = coef * self.elem(t)
            return coef * acc
        if isinstance(e, Transpose):
            return self.mat(e.arg).T
        if isinstance(e, Inverse) or (isinstance(e, MatPow) and e.exp == -1):
            return np.linalg.inv(self.mat(e.args[0]))
        if isinstance(e, MatPow) and e.exp.is_Integer:
            return np.linalg.matrix_power(self.mat(e.base), int(e.exp))
        if isinstance(e, Identity):
            return np.eye(e.shape[0])
        if isinstance(e, OneMatrix):
            return np.ones(e.shape)
        if isinstance(e, ZeroMatrix):
            return np.zeros(e.shape)
        raise TypeError(f"cannot evaluate {type(e).__name__}")

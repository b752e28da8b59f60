"""The algebra of symbolic gradients: symbolic values, the functions SymPy lacks, and the toolbox that the op
table's symbolic rules (``@<op>.defsymbolic``) receive as ``s``.

A traced tensor's formula lives in one of two worlds, both SymPy expressions:

* **elementwise**: a scalar SymPy expression whose symbols stand for whole tensors, element by element (with
  broadcasting): ``x*sin(x)`` for a vector ``x`` is the vector of ``x_i sin(x_i)``. Scalars, elementwise
  functions of vectors and matrices, and reductions to a scalar (``sum``, norms, log-sum-exp) live here, so
  that SymPy's scalar calculus and simplification apply to them.
* **matrix**: a SymPy matrix expression (``MatrixSymbol``, ``MatMul``, ``Transpose``, ``Inverse``, ``Trace``,
  ``Determinant``): a vector of n elements is an n x 1 column, a scalar result of a product a 1 x 1 matrix.

Each world refers to the other through stand-ins: an elementwise expression holds a matrix expression as a
*placeholder* symbol, a matrix expression holds an elementwise one as a *block* (a MatrixSymbol); the printers
and the evaluator look them up in :class:`Algebra`. Derivatives of elementwise functions are SymPy's; the
matrix rules (the Matrix Cookbook's, e.g. ∇_X log det X = X⁻ᵀ, where SymPy 1.13's own ``diff`` gives 0) are
gradcli's, written beside each op's VJP.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from sympy.matrices.expressions import (Determinant, Identity, Inverse, MatAdd, MatMul, MatrixExpr, MatrixSymbol,
                                        OneMatrix, Trace, Transpose)


class NoFormula(Exception):
    """No closed form can be given; ``reason`` names the construct (and where it is, when known)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# ------------------------------------------------------------------------------ functions SymPy lacks
class SumAll(sp.Function):
    """The sum of all elements of a tensor (a scalar)."""
    nargs = 1


class Norm(sp.Function):
    """The Euclidean (vector) or Frobenius (matrix) norm ‖x‖."""
    nargs = 1


class LogSumExp(sp.Function):
    """log Σ exp(x_i) over all elements (a scalar)."""
    nargs = 1


class Softmax(sp.Function):
    """softmax of a vector: exp(x_i) / Σ_j exp(x_j) (a vector of the argument's shape)."""
    nargs = 1


class OneHot(sp.Function):
    """one_hot(y, C): the rows of the C x C identity chosen by the class indices y."""
    nargs = 2


class Diag(sp.Function):
    """Diag(c, n): the n x n diagonal matrix of the vector c (a scalar c: c times the identity)."""
    nargs = 2


class Step(sp.Function):
    """The unit step with value 0 at 0 (relu's derivative as PyTorch takes it)."""
    nargs = 1

    def fdiff(self, argindex=1):
        return sp.Integer(0)


class Relu(sp.Function):
    """max(x, 0)."""
    nargs = 1

    def fdiff(self, argindex=1):
        return Step(self.args[0])


class Sigmoid(sp.Function):
    """The logistic function σ(x) = 1 / (1 + exp(-x))."""
    nargs = 1

    def fdiff(self, argindex=1):
        return Sigmoid(self.args[0]) * (1 - Sigmoid(self.args[0]))


class Softplus(sp.Function):
    """log(1 + exp(x))."""
    nargs = 1

    def fdiff(self, argindex=1):
        return Sigmoid(self.args[0])


class Sign(sp.Function):
    """sign(x) with derivative 0 (SymPy's sign differentiates to a Dirac delta)."""
    nargs = 1

    def fdiff(self, argindex=1):
        return sp.Integer(0)


#: functions whose value is a scalar, whatever the shape of their argument
SCALAR_FUNCTIONS = (SumAll, Norm, LogSumExp)

#: gradcli's own functions (a number inside one is not a plain constant: Diag(2, 3) is a matrix)
OWN_FUNCTIONS = (SumAll, Norm, LogSumExp, Softmax, OneHot, Diag, Step, Relu, Sigmoid, Softplus, Sign)


def is_constant(e) -> bool:
    """A number-valued expression without symbols or gradcli's functions (π, √2, log 2)."""
    return not isinstance(e, MatrixExpr) and not e.is_Number and bool(e.is_number) and not e.has(*OWN_FUNCTIONS)


class V:
    """A traced tensor's formula: ``expr`` (elementwise SymPy expression or SymPy matrix expression) and the
    tensor's ``shape`` (a tuple of ints)."""
    __slots__ = ("expr", "shape")

    def __init__(self, expr, shape: tuple):
        self.expr = expr
        self.shape = tuple(shape)

    @property
    def is_mat(self) -> bool:
        return isinstance(self.expr, MatrixExpr)

    def __repr__(self) -> str:
        return f"V({self.expr}, {self.shape})"


def mat_shape(shape: tuple) -> tuple:
    """The matrix shape of a tensor shape: (n,) is an n x 1 column, () is 1 x 1.

    Raises:
        NoFormula: for tensors of more than 2 dimensions.
    """
    if len(shape) == 0:
        return (1, 1)
    if len(shape) == 1:
        return (shape[0], 1)
    if len(shape) == 2:
        return shape
    raise NoFormula(f"a tensor of {len(shape)} dimensions {tuple(shape)} (formulas cover scalars, vectors and "
                    f"matrices)")


def number(v):
    """A Python or numpy number as a SymPy number: integers exact, halves and quarters as fractions."""
    v = float(v) if not isinstance(v, (bool, int)) else int(v)
    if isinstance(v, int) or v.is_integer():
        return sp.Integer(int(v))
    for q in (2, 4, 8, 3):
        if (v * q).is_integer() and abs(v * q) < 1e6:
            return sp.Rational(int(v * q), q)
    return sp.Float(v)


class Algebra:
    """The toolbox handed to symbolic rules, and the tables of one formula: leaves (name → shape), placeholders
    (symbol → matrix value) and blocks (MatrixSymbol → elementwise value).

    Rules use :meth:`elem` and :meth:`mat` to take an argument into a world, the SymPy functions as attributes
    (``s.sin``, ``s.Trace``), and return a SymPy expression for the output; their VJP gets the output's
    gradient in the output's world.
    """

    sp = sp
    sin, cos, tan, exp, log, tanh, sinh, cosh = sp.sin, sp.cos, sp.tan, sp.exp, sp.log, sp.tanh, sp.sinh, sp.cosh
    sqrt = staticmethod(sp.sqrt)
    asin, acos, atan, erf, Abs = sp.asin, sp.acos, sp.atan, sp.erf, sp.Abs
    Sign, Sigmoid, Relu, Step, Softplus = Sign, Sigmoid, Relu, Step, Softplus
    SumAll, Norm, LogSumExp, Softmax, OneHot, Diag = SumAll, Norm, LogSumExp, Softmax, OneHot, Diag
    Trace, Det, Inverse, Transpose, Identity = Trace, Determinant, Inverse, Transpose, Identity
    NoFormula = NoFormula

    def __init__(self):
        self.leaves = {}  # name -> tensor shape
        self.placeholders = {}  # Symbol -> V (matrix world)
        self.blocks = {}  # MatrixSymbol -> V (elementwise world)
        self._mat_leaves = {}
        self._elem_leaves = {}

    # ------------------------------------------------------------------------------------------- leaves
    def leaf(self, name: str, shape: tuple) -> V:
        """The formula of an input (or constant) ``name`` of ``shape``: a scalar symbol for a 0-d tensor, else
        an elementwise symbol (its matrix form is a MatrixSymbol of the same name)."""
        self.leaves[name] = tuple(shape)
        return V(self.elem_symbol(name), shape)

    def elem_symbol(self, name: str):
        s = self._elem_leaves.get(name)
        if s is None:
            s = self._elem_leaves[name] = sp.Symbol(name, real=True)
        return s

    def mat_symbol(self, name: str):
        m = self._mat_leaves.get(name)
        if m is None:
            r, c = mat_shape(self.leaves[name])
            m = self._mat_leaves[name] = MatrixSymbol(name, r, c)
        return m

    # --------------------------------------------------------------------------------- the two worlds
    def elem(self, v):
        """``v`` (a V or a number) as an elementwise expression."""
        if v is None:
            return None
        if not isinstance(v, V):
            return number(v)
        e = v.expr
        if not isinstance(e, MatrixExpr):
            return e
        if isinstance(e, MatrixSymbol):
            if e.name in self.leaves:
                return self.elem_symbol(e.name)
            if e in self.blocks:
                return self.blocks[e].expr
        p = sp.Symbol(f"⟪{len(self.placeholders)}⟫", real=True)
        self.placeholders[p] = v
        return p

    def mat(self, v):
        """``v`` (a V or a number) as a matrix expression (a 0-d tensor: a scalar expression, a matrix product's
        coefficient)."""
        if v is None:
            return None
        if not isinstance(v, V):
            return number(v)
        e = v.expr
        if isinstance(e, MatrixExpr):
            return e
        if v.shape == ():
            return e
        if e in self.placeholders:
            return self.placeholders[e].expr
        if isinstance(e, sp.Symbol) and e.name in self.leaves and self.leaves[e.name] == v.shape:
            return self.mat_symbol(e.name)
        if isinstance(e, sp.Add):
            e = sp.factor_terms(e)
            if isinstance(e, sp.Add):  # a sum of matrix terms: A x - b
                return MatAdd(*[self.mat(V(t, v.shape)) for t in e.args]).doit()
        if isinstance(e, sp.Mul):  # 2·lam·(A x - b) → 2 lam (A x - b): scalars lead the matrix product
            scalars = [f for f in e.args if self.shape_of(f) == ()]
            if scalars and len(scalars) < len(e.args):
                rest = sp.Mul(*[f for f in e.args if self.shape_of(f) != ()])
                return sp.Mul(*scalars) * self.mat(V(rest, v.shape))
        r, c = mat_shape(v.shape)
        if self.shape_of(e) == ():
            return e * OneMatrix(r, c)
        b = MatrixSymbol(f"⟦{len(self.blocks)}⟧", r, c)
        self.blocks[b] = V(e, v.shape)
        return b

    def elems(self, *args):
        """Each argument as an elementwise expression."""
        return tuple(self.elem(a) for a in args)

    def operands(self, a, b):
        """Two arguments of a sum or difference in one world: matrix when both are tensors of the same shape
        and one is a matrix formula (so that matrix algebra can factor ``A x + Aᵀ x``), else elementwise."""
        if (isinstance(a, V) and isinstance(b, V) and a.shape == b.shape and a.shape != ()
                and (a.is_mat or b.is_mat)):
            return self.mat(a), self.mat(b)
        return self.elem(a), self.elem(b)

    # ------------------------------------------------------------------------------------------- shapes
    def shape_of(self, e) -> tuple:
        """The tensor shape of an elementwise expression: the broadcast of its symbols' shapes (a function
        of :data:`SCALAR_FUNCTIONS` is a scalar)."""
        if isinstance(e, MatrixExpr):
            raise TypeError("shape_of takes elementwise expressions")
        if isinstance(e, sp.Symbol):
            if e in self.placeholders:
                return self.placeholders[e].shape
            return self.leaves.get(e.name, ())
        if isinstance(e, SCALAR_FUNCTIONS) or isinstance(e, (Trace, Determinant)) or not e.args:
            return ()
        if isinstance(e, OneHot):
            return self.shape_of(e.args[0]) + (int(e.args[1]),)
        if isinstance(e, Diag):
            return (int(e.args[1]),) * 2
        return tuple(np.broadcast_shapes(*[self.shape_of(a) for a in e.args]))

    def to_shape(self, e, shape: tuple, actual: tuple = ()):
        """An elementwise gradient ``e`` for an input of ``shape``, where the gradient has the tensor shape
        ``actual`` (the op's output's): summed over what broadcasting added (a scalar gradient that stands for
        a tensor of n equal elements sums to n times itself).

        Raises:
            NoFormula: for broadcasting other than of a scalar.
        """
        have = self.shape_of(e)
        full = tuple(actual) if int(np.prod(actual)) >= int(np.prod(have)) else have
        shape = tuple(shape)
        if full == shape or (have == () and shape != ()):
            return e
        if shape == ():
            return e * int(np.prod(full)) if have == () else SumAll(e) * (int(np.prod(full)) // int(np.prod(have)))
        if tuple(np.broadcast_shapes(have, shape)) == have and int(np.prod(have)) == int(np.prod(shape)):
            return e
        raise NoFormula(f"broadcasting a tensor of shape {shape} to {full}")

    # ------------------------------------------------------------------------------------- rule helpers
    def elementwise(self, f, input):
        """``(f(u), vjp)`` of an elementwise function ``f`` (a SymPy function of one argument): the VJP is
        ``g·f'(u)`` with ``f'`` from SymPy's ``diff``."""
        u = self.elem(input)
        t = sp.Dummy("t", real=True)
        d = sp.diff(f(t), t)
        return f(u), lambda g: g * d.subs(t, u)

    def reduce_all(self, input, dim, what: str):
        """Check that a reduction covers every dimension (``dim`` None or all of them).

        Raises:
            NoFormula: a reduction over some dimensions only.
        """
        shape = input.shape if isinstance(input, V) else ()
        if dim is None or dim == () or dim == []:
            return
        dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
        if sorted(d % max(len(shape), 1) for d in dims) == list(range(len(shape))):
            return
        raise NoFormula(f"{what} over dimension {dim} of a tensor of shape {shape} (formulas cover reductions "
                        f"to a scalar)")

    def numel(self, v) -> int:
        return int(np.prod(v.shape)) if isinstance(v, V) else 1


def simplify(v: V, algebra: Algebra) -> V:
    """A simpler form of a final gradient: the shortest of a few SymPy rewritings for an elementwise formula,
    matrix terms with a common first or last factor
    factored (``A x + Aᵀ x`` → ``(A + Aᵀ) x``)."""
    e = v.expr
    if isinstance(e, MatrixExpr):
        e = _factor(_canon(e.doit()))
        if isinstance(e, MatMul):
            e = MatMul(*[a if isinstance(a, MatrixExpr) else _simplify_scalar(a) for a in e.args])
        return V(e, v.shape)
    return V(_simplify_scalar(e), v.shape)


def _simplify_scalar(e):
    """The shortest (fewest operations) of ``e`` and a few of SymPy's cheap rewritings: cancel, factor_terms,
    together, powsimp. (``sympy.simplify`` tries many more and costs ten times as much, the first call of a
    process most: it also rewrites ``exp(x)·(cos(x) - sin(x))`` as ``√2·exp(x)·cos(x + π/4)``.)"""
    if not e.has(sp.Symbol) or sp.count_ops(e) <= 1:
        return e
    best, cost = e, sp.count_ops(e)
    for rewrite in (sp.cancel, sp.factor_terms, sp.together, sp.powsimp):
        try:
            c = rewrite(e)
        except (TypeError, ValueError, AttributeError, NotImplementedError, sp.PolynomialError):
            continue
        n = sp.count_ops(c)
        if n < cost:
            best, cost = c, n
    return best


def _canon(e):
    """Transposes pushed onto leaves (``(A x)ᵀ`` → ``xᵀ Aᵀ``, ``(X⁻¹)ᵀ`` kept as the inverse of Xᵀ)."""
    if isinstance(e, Transpose):
        inner = e.arg
        if isinstance(inner, MatMul):
            return _canon(MatMul(*[Transpose(a) if isinstance(a, MatrixExpr) else a
                                   for a in reversed(inner.args)]).doit())
        if isinstance(inner, MatAdd):
            return _canon(MatAdd(*[Transpose(a) for a in inner.args]).doit())
        if isinstance(inner, Transpose):
            return _canon(inner.arg)
        return e.doit()
    if isinstance(e, (MatMul, MatAdd)):
        args = [_canon(a) if isinstance(a, MatrixExpr) else a for a in e.args]
        return type(e)(*args).doit()
    return e


def _split(term):
    """``(coefficient, [matrix factors])`` of a term of a matrix sum."""
    if isinstance(term, MatMul):
        coef = sp.Integer(1)
        mats = []
        for a in term.args:
            if isinstance(a, MatrixExpr):
                mats.append(a)
            else:
                coef *= a
        return coef, mats
    return sp.Integer(1), [term]


def _join(coef, mats):
    if not mats:
        return None
    m = mats[0] if len(mats) == 1 and coef == 1 else MatMul(*([coef] if coef != 1 else []), *mats)
    return m


def _flat(e):
    """A product of products as one product: its scalars first, then its matrices in order."""
    scalars, mats = [], []
    for a in e.args:
        for b in (a.args if isinstance(a, MatMul) else (a,)):
            (mats if isinstance(b, MatrixExpr) else scalars).append(b)
    return MatMul(*scalars, *mats)


def _factor(e):
    """Factor the common last (else first) factor out of a matrix sum, repeatedly."""
    if isinstance(e, MatMul):
        return _flat(MatMul(*[_factor(a) if isinstance(a, MatrixExpr) else a for a in e.args]))
    if not isinstance(e, MatAdd):
        return e
    terms = [_split(t) for t in e.args]
    c = terms[0][0]
    if c != 1 and not c.is_Number and all(t[0] == c for t in terms):  # e A x + e Aᵀ x → e (A + Aᵀ) x
        return _flat(MatMul(c, _factor(MatAdd(*[_join(sp.Integer(1), m) for _, m in terms]))))
    c = abs(c)
    if c != 1 and c.is_Number and all(t[0].is_Number and abs(t[0]) == c for t in terms):  # 2 A x - 2 b → 2 (A x - b)
        return _flat(MatMul(c, _factor(MatAdd(*[_join(t / c, m) for t, m in terms]))))
    if all(len(m) >= 2 for _, m in terms) or (all(len(m) >= 1 for _, m in terms) and len(terms) > 1):
        for side in (-1, 0):
            first = terms[0][1][side]
            if all(len(m) >= 2 and m[side] == first for _, m in terms):
                rest = [_join(c, m[:-1] if side == -1 else m[1:]) for c, m in terms]
                inner = _factor(MatAdd(*rest).doit())
                return MatMul(inner, first) if side == -1 else MatMul(first, inner)
    return MatAdd(*[_factor(t) for t in e.args])

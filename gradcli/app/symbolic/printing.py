"""Writing a formula three ways: Unicode (``(A + Aᵀ) x``, ``sin(x) + x·cos(x)``), LaTeX, and a PyTorch
expression of the inputs (``(A + A.T) @ x``, ``x.sin() + x * x.cos()``, ``torch.linalg.inv(X).T``) that both
PyTorch and ``gradcli grad`` evaluate.

One walk over the SymPy tree of either world (:mod:`.algebra`), with each style's spelling of each node; the
stand-ins between the worlds are written as what they stand for. Terms of a sum are written simplest first.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions import (Determinant, Identity, Inverse, MatAdd, MatMul, MatPow, MatrixExpr,
                                        MatrixSymbol, OneMatrix, Trace, Transpose, ZeroMatrix)

from .algebra import (Algebra, Diag, is_constant, LogSumExp, Norm, OneHot, Relu, Sigmoid, Sign, Softmax, Softplus,
                      Step, SumAll)

ADD, MATMUL, NEG, MUL, POW, ATOM = 10, 15, 18, 20, 30, 40

_SUP = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")

#: function → (Unicode name, LaTeX command, PyTorch method)
_FUNCS = {
    sp.sin: ("sin", r"\sin", "sin"), sp.cos: ("cos", r"\cos", "cos"), sp.tan: ("tan", r"\tan", "tan"),
    sp.exp: ("exp", r"\exp", "exp"), sp.log: ("log", r"\log", "log"), sp.tanh: ("tanh", r"\tanh", "tanh"),
    sp.sinh: ("sinh", r"\sinh", "sinh"), sp.cosh: ("cosh", r"\cosh", "cosh"), sp.asin: ("asin", r"\arcsin", "asin"),
    sp.acos: ("acos", r"\arccos", "acos"), sp.atan: ("atan", r"\arctan", "atan"),
    sp.erf: ("erf", r"\operatorname{erf}", "erf"), Sign: ("sign", r"\operatorname{sign}", "sign"),
    sp.sign: ("sign", r"\operatorname{sign}", "sign"), Sigmoid: ("σ", r"\sigma", "sigmoid"),
    Relu: ("relu", r"\operatorname{relu}", "relu"), Softplus: ("softplus", r"\operatorname{softplus}", "softplus"),
    SumAll: ("sum", r"\sum", "sum"), Softmax: ("softmax", r"\operatorname{softmax}", None),
    LogSumExp: ("logsumexp", r"\operatorname{logsumexp}", None),
}


def _key(term) -> tuple:
    """Simplest first: fewer operations, then fewer characters."""
    try:
        ops = sp.count_ops(term)
    except (TypeError, AttributeError):
        ops = 0
    return (ops, len(str(term)), str(term))


def _negative(term) -> bool:
    if isinstance(term, (sp.Mul, MatMul)):
        c = [a for a in term.args if a.is_Number]
        return bool(c) and bool(c[0] < 0)
    return bool(term.is_Number and term < 0)


def _negate(term):
    if isinstance(term, MatMul):
        return MatMul(*[-a if a.is_Number else a for a in term.args]).doit()
    return -term


class Printer:
    """The Unicode style; :class:`LatexPrinter` and :class:`TorchPrinter` override the spellings."""

    times = "·"
    matmul = " "
    style = "unicode"

    def __init__(self, algebra: Algebra, dtype_of: str | None = None):
        self.a = algebra
        self.dtype_of = dtype_of

    def __call__(self, e) -> str:
        return self.p(e)[0]

    def wrap(self, e, prec: int) -> str:
        text, p = self.p(e)
        return self.paren(text) if p < prec else text

    def paren(self, text: str) -> str:
        return f"({text})"

    # ---------------------------------------------------------------------------------------- dispatch
    def power_of_matrix(self, e):
        """X⁻¹ (Inverse, or a matrix to the power -1), Xᵏ, (Xᵏ)⁻¹."""
        if isinstance(e, Inverse) or e.exp == -1:
            return self.inverse(e.args[0])
        if e.exp.is_Integer and e.exp > 0:
            return self.matpow(e.base, int(e.exp))
        if e.exp.is_Integer:
            return self.inverse(MatPow(e.base, -e.exp))
        raise TypeError(f"cannot print the matrix power {e}")

    def p(self, e):
        """``(text, precedence)`` of the expression ``e`` (either world)."""
        if isinstance(e, MatrixSymbol):
            if e in self.a.blocks:
                return self.p(self.a.blocks[e].expr)
            return self.leaf(e.name), ATOM
        if isinstance(e, sp.Symbol):
            if e in self.a.placeholders:
                return self.p(self.a.placeholders[e].expr)
            return self.leaf(e.name), ATOM
        if is_constant(e):  # π, √2, log(2)
            return self.constant(e)
        if isinstance(e, (sp.Add, MatAdd)):
            return self.add(e), ADD
        if isinstance(e, MatMul):
            return self.matmul_(e)
        if isinstance(e, sp.Mul):
            return self.mul(e)
        if isinstance(e, sp.Pow):
            return self.pow(e)
        if e.is_Number:
            return self.number(e)
        if isinstance(e, (MatPow, Inverse)):
            return self.power_of_matrix(e)
        for kind, write in ((Transpose, self.transpose), (Trace, self.trace), (Determinant, self.det),
                            (Norm, self.norm), (sp.Abs, self.abs), (Step, self.step)):
            if isinstance(e, kind):
                return write(e.args[0])
        if isinstance(e, (Identity, OneMatrix, ZeroMatrix)):
            return {Identity: self.identity, OneMatrix: self.ones, ZeroMatrix: self.zeros}[type(e)](e), ATOM
        if isinstance(e, OneHot):
            return self.onehot(e.args[0], e.args[1])
        if isinstance(e, Diag):
            if self.a.shape_of(e.args[0]) == ():
                return self.scaled_identity(e.args[0], int(e.args[1]))
            return self.diag(e.args[0])
        if isinstance(e, sp.Function) and type(e) in _FUNCS or getattr(e, "func", None) in _FUNCS:
            return self.func(_FUNCS[e.func], e.args[0])
        raise TypeError(f"cannot print {type(e).__name__}")

    # ---------------------------------------------------------------------------------------- Unicode
    def leaf(self, name: str) -> str:
        return name

    def number(self, e):
        if e.is_Integer:
            return str(int(e)), ATOM if e >= 0 else NEG
        if e.is_Rational:
            return f"{e.p}/{e.q}", MUL
        return repr(float(e)), ATOM if e >= 0 else NEG

    def constant(self, e):
        if e == sp.pi:
            return "π", ATOM
        return self.symbolic_constant(e)

    def symbolic_constant(self, e):
        if isinstance(e, sp.Pow):
            return self.pow(e)
        if isinstance(e, sp.Mul):
            return self.mul(e)
        if isinstance(e, sp.Add):
            return self.add(e), ADD
        if getattr(e, "func", None) in _FUNCS:
            return self.func(_FUNCS[e.func], e.args[0])
        return repr(float(e)), ATOM

    def matpow(self, base, k: int):
        return self.wrap(base, ATOM) + str(k).translate(_SUP), POW

    def add(self, e) -> str:
        terms = sorted(e.args, key=_key)
        # a negative term does not lead when a positive one can
        terms.sort(key=_negative)
        out = self.wrap(terms[0], ADD)
        for t in terms[1:]:
            if _negative(t):
                out += " - " + self.wrap(_negate(t), MATMUL)
            else:
                out += " + " + self.wrap(t, ADD + 1)
        return out

    def split_mul(self, e):
        """(coefficient, numerator factors, denominator factors)."""
        coef, factors = e.as_coeff_mul()
        num, den = [], []
        for f in factors:
            if isinstance(f, sp.Pow) and f.exp.is_Number and f.exp < 0:
                den.append(f.base if f.exp == -1 else sp.Pow(f.base, -f.exp))
            else:
                num.append(f)
        if coef.is_Rational and not coef.is_Integer:
            if coef.p != 1 and coef.p != -1:
                num.insert(0, sp.Integer(abs(coef.p)))
            den.insert(0, sp.Integer(coef.q))
            coef = sp.Integer(-1 if coef < 0 else 1)
        return coef, num, den

    def mul(self, e):
        coef, num, den = self.split_mul(e)
        if coef < 0:
            rest = self.mul_parts(-coef, num, den)
            return "-" + rest, NEG
        return self.mul_parts(coef, num, den), MUL

    def mul_parts(self, coef, num, den) -> str:
        parts = ([self.number(coef)[0]] if coef != 1 else []) + [self.wrap(f, MUL) for f in num]
        top = self.times.join(parts) if parts else "1"
        if not den:
            return top
        bottom = self.times.join(self.wrap(f, MUL) for f in den)
        if len(den) > 1:
            bottom = self.paren(bottom)
        return self.fraction(top, bottom, len(parts) > 1)

    def fraction(self, top: str, bottom: str, compound: bool) -> str:
        return f"{top}/{bottom}"

    def pow(self, e):
        base, ex = e.base, e.exp
        if ex == sp.Rational(1, 2):
            return self.sqrt(base)
        if ex.is_Number and ex < 0:
            return self.mul_parts(sp.Integer(1), [], [base if ex == -1 else sp.Pow(base, -ex)]), MUL
        return self.power(base, ex), POW

    def sqrt(self, base):
        return f"√{self.wrap(base, ATOM)}", POW

    def power(self, base, ex) -> str:
        if ex.is_Integer:
            return self.wrap(base, ATOM) + str(int(ex)).translate(_SUP)
        return f"{self.wrap(base, ATOM)}^({self(ex)})"

    def func(self, names, arg):
        return f"{names[0]}({self(arg)})", ATOM

    def abs(self, arg):
        return f"|{self(arg)}|", ATOM

    def norm(self, arg):
        return f"‖{self(arg)}‖", ATOM

    def step(self, arg):
        return f"[{self(arg)} > 0]", ATOM

    def onehot(self, y, c):
        return f"onehot({self(y)}, {c})", ATOM

    def trace(self, arg):
        return f"tr({self(arg)})", ATOM

    def diag(self, arg):
        return f"diag({self(arg)})", ATOM

    def scaled_identity(self, c, n: int):
        return (self.wrap(c, MUL) + self.times + self.identity(Identity(n)), MUL) if c != 1 else \
            (self.identity(Identity(n)), ATOM)

    def det(self, arg):
        return f"det({self(arg)})", ATOM

    def identity(self, e) -> str:
        return "I"

    def ones(self, e) -> str:
        return "𝟏"

    def zeros(self, e) -> str:
        return "0"

    def transpose(self, arg):
        if isinstance(arg, Inverse) or (isinstance(arg, MatPow) and arg.exp == -1):
            return self.wrap(arg.args[0], ATOM) + "⁻ᵀ", POW
        return self.wrap(arg, ATOM) + "ᵀ", POW

    def inverse(self, arg):
        if isinstance(arg, Transpose):
            return self.wrap(arg.arg, ATOM) + "⁻ᵀ", POW
        return self.wrap(arg, ATOM) + "⁻¹", POW

    def matmul_(self, e):
        scalars = [a for a in e.args if not isinstance(a, MatrixExpr)]
        mats = [a for a in e.args if isinstance(a, MatrixExpr)]
        coef = sp.Mul(*scalars)
        neg = _negative(coef)
        if neg:
            coef = -coef
        chain = self.chain(mats)
        if coef != 1:
            chain = self.wrap(coef, MUL) + self.times + chain
        return ("-" + chain, NEG) if neg else (chain, MATMUL)

    def chain(self, mats) -> str:
        return self.matmul.join(self.wrap(m, POW) for m in mats)


class LatexPrinter(Printer):
    """LaTeX: ``\\left(A + A^{\\top}\\right) x``, ``\\sin(x) + x \\cos(x)``."""

    times = r" \cdot "
    matmul = " "
    style = "latex"

    def leaf(self, name: str) -> str:
        return name if len(name) == 1 else rf"\mathrm{{{name}}}"

    def paren(self, text: str) -> str:
        return rf"\left({text}\right)"

    def number(self, e):
        if e.is_Rational and not e.is_Integer:
            return rf"\frac{{{e.p}}}{{{e.q}}}", ATOM
        return super().number(e)

    def fraction(self, top: str, bottom: str, compound: bool) -> str:
        if bottom.startswith(r"\left(") and bottom.endswith(r"\right)"):
            bottom = bottom[6:-7]
        return rf"\frac{{{top}}}{{{bottom}}}"

    def sqrt(self, base):
        return rf"\sqrt{{{self(base)}}}", ATOM

    def constant(self, e):
        if e == sp.pi:
            return r"\pi", ATOM
        return self.symbolic_constant(e)

    def matpow(self, base, k: int):
        return f"{self.wrap(base, ATOM)}^{{{k}}}", POW

    def power(self, base, ex) -> str:
        return f"{self.wrap(base, ATOM)}^{{{self(ex)}}}"

    def func(self, names, arg):
        return rf"{names[1]}{self.paren(self(arg))}", ATOM

    def abs(self, arg):
        return rf"\left|{self(arg)}\right|", ATOM

    def norm(self, arg):
        return rf"\left\lVert {self(arg)} \right\rVert", ATOM

    def step(self, arg):
        return rf"\mathbb{{1}}\left[{self(arg)} > 0\right]", ATOM

    def onehot(self, y, c):
        return rf"\operatorname{{onehot}}\left({self(y)}, {c}\right)", ATOM

    def trace(self, arg):
        return rf"\operatorname{{tr}}{self.paren(self(arg))}", ATOM

    def diag(self, arg):
        return rf"\operatorname{{diag}}{self.paren(self(arg))}", ATOM

    def det(self, arg):
        return rf"\det{self.paren(self(arg))}", ATOM

    def ones(self, e) -> str:
        return r"\mathbf{1}"

    def transpose(self, arg):
        if isinstance(arg, Inverse) or (isinstance(arg, MatPow) and arg.exp == -1):
            return self.wrap(arg.args[0], ATOM) + r"^{-\top}", POW
        return self.wrap(arg, ATOM) + r"^{\top}", POW

    def inverse(self, arg):
        if isinstance(arg, Transpose):
            return self.wrap(arg.arg, ATOM) + r"^{-\top}", POW
        return self.wrap(arg, ATOM) + "^{-1}", POW


class TorchPrinter(Printer):
    """A PyTorch expression of the inputs (vectors are 1-d tensors, as the inputs are)."""

    times = " * "
    style = "torch"

    def number(self, e):
        if e.is_Integer:
            return str(int(e)), ATOM if e >= 0 else NEG
        return repr(float(e)), ATOM if e >= 0 else NEG

    def split_mul(self, e):
        coef, factors = e.as_coeff_mul()
        num, den = [], []
        for f in factors:
            if isinstance(f, sp.Pow) and f.exp.is_Number and f.exp < 0:
                den.append(f.base if f.exp == -1 else sp.Pow(f.base, -f.exp))
            else:
                num.append(f)
        return coef, num, den

    def mul_parts(self, coef, num, den) -> str:
        parts = ([self.number(coef)[0]] if coef != 1 else []) + [self.wrap(f, MUL) for f in num]
        top = " * ".join(parts) if parts else "1"
        if not den:
            return top
        return top + "".join(" / " + self.wrap(f, POW) for f in den)

    def sqrt(self, base):
        return f"{self.wrap(base, ATOM)}.sqrt()", ATOM

    def constant(self, e):
        return self.number(sp.Float(float(e)))

    def matpow(self, base, k: int):
        return self.chain([base] * k), MUL

    def power(self, base, ex) -> str:
        return f"{self.wrap(base, ATOM)} ** {self.wrap(ex, ATOM)}"

    def func(self, names, arg):
        inner = self.wrap(arg, ATOM)
        if names[0] == "softmax":
            return f"{inner}.softmax(0)", ATOM
        if names[0] == "logsumexp":
            return f"{inner}.flatten().logsumexp(0)", ATOM
        return f"{inner}.{names[2]}()", ATOM

    def abs(self, arg):
        return f"{self.wrap(arg, ATOM)}.abs()", ATOM

    def norm(self, arg):
        return f"torch.linalg.norm({self(arg)})", ATOM

    def step(self, arg):
        return f"{self.wrap(arg, ATOM)}.relu().sign()", ATOM

    def onehot(self, y, c):
        return f"torch.nn.functional.one_hot({self(y)}, {c}).to({self.dtype_of}.dtype)", ATOM

    def trace(self, arg):
        return f"{self.wrap(arg, ATOM)}.trace()", ATOM

    def diag(self, arg):
        return f"torch.diag({self(arg)})", ATOM

    def det(self, arg):
        return f"torch.linalg.det({self(arg)})", ATOM

    def _dtype(self) -> str:
        return f", dtype={self.dtype_of}.dtype" if self.dtype_of else ""

    def _size(self, e) -> str:
        r, c = e.shape
        return f"{r}" if c == 1 else f"{r}, {c}"

    def identity(self, e) -> str:
        return f"torch.eye({e.shape[0]}{self._dtype()})"

    def ones(self, e) -> str:
        return f"torch.ones({self._size(e)}{self._dtype()})"

    def zeros(self, e) -> str:
        return f"torch.zeros({self._size(e)}{self._dtype()})"

    def transpose(self, arg):
        if 1 in arg.shape:  # a vector: 1-d, with no orientation
            return self.p(arg)
        if isinstance(arg, Inverse) or (isinstance(arg, MatPow) and arg.exp == -1):
            return f"torch.linalg.inv({self(arg.args[0])}).T", ATOM
        return f"{self.wrap(arg, ATOM)}.T", ATOM

    def inverse(self, arg):
        if isinstance(arg, Transpose):
            return f"torch.linalg.inv({self(arg.arg)}).T", ATOM
        return f"torch.linalg.inv({self(arg)})", ATOM

    def matmul_(self, e):
        return super().matmul_(e)  # (MATMUL: a factor of a product is parenthesized, as * and @ bind alike)

    def chain(self, mats) -> str:
        out = self.wrap(mats[0], MUL + 1)
        shape = mats[0].shape
        for m in mats[1:]:
            code = self.wrap(m, MUL + 1)
            if shape[1] == 1 and m.shape[0] == 1:
                if shape == (1, 1) or m.shape == (1, 1):
                    out = f"{out} * {code}"
                else:
                    out = f"torch.outer({out}, {code})"
            else:
                out = f"{out} @ {code}"
            shape = (shape[0], m.shape[1])
        return out


def first_leaf(algebra: Algebra, e) -> str | None:
    """The name of an input the formula holds (factories take its dtype), or any input."""
    names = sorted(s.name for s in e.free_symbols if getattr(s, "name", "") in algebra.leaves)
    others = sorted(algebra.leaves, key=lambda n: (n == "v", n))  # the seed v of a Hessian block last
    return names[0] if names else (others[0] if others else None)

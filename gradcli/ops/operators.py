"""Python's operators on Tensor and the language's infix operators: one table, keyed by the grammar's aliases.

The grammar (``grammars/gradcli.lark``) names every infix operator with an alias (``arith "+" term -> add``).
:data:`BINARY` has one row per alias: the symbol a program writes, Python's protocol name (``add`` for
``__add__``, ``__radd__`` and ``__iadd__``), Python's function that applies it to any two values
(``operator.add``), and the Tensor methods it becomes: the forward and reflected forms and the in-place form
of the augmented assignment. Everything else is derived from it: Tensor's operator methods (installed here),
the builder's operator nodes and ``op=`` assignments (:mod:`gradcli.language.build`) and the interpreter's
operator functions and symbols (:mod:`gradcli.language.expressions`). Adding an infix operator is one grammar
line plus one row here; ``tests/language/test_operators.py`` checks that the grammar's aliases, symbols and
``AUGOP`` terminal and this table agree. :data:`UNARY` (keyed by the grammar's prefix aliases) and
:data:`COMPARISONS` (keyed by the ``COMP_OP`` symbols) do the same for ``-x`` and ``x < y``.

Importing this module (gradcli.ops does, after the op families) installs the operator methods on Tensor: it is
the one place above the ops where Tensor gets its arithmetic. The methods keep PyTorch 2.13's quirks
(``torch/_tensor.py``), and gradcli's own differences, as they were:

* ``2 / x`` is ``reciprocal(x) * 2`` (grad_fn MulBackward0), as Tensor.__rdiv__;
* ``2 - x`` is ``rsub(x, 2)`` (RsubBackward1) and ``2 ** x`` is ``pow(2, x)`` (PowBackward2);
* ``x @= m`` is computed out of place (Tensor has no ``__imatmul__``: Python falls back to ``x = x @ m``);
* ``x @ [[1., 2.]]`` converts the list (``to_tensor``), a gradcli extension (PyTorch raises TypeError);
* ``~x`` is not supported on tensors (gradcli has no bitwise_not): Tensor has no ``__invert__``.

The hottest operators (``x + y``, ``x * y``, ``x / y``, ``x - y``, ``-x``) are :func:`~._core.positional`
functions, which skip :meth:`~._core.Op.__call__`'s keyword and default handling; ``x - y`` also skips sub's
checks for bool operands when neither operand can be bool.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, NamedTuple

from ..engine.tensor import Tensor, to_tensor
from .core.apply import positional
from .elementwise.arithmetic import _sub as _unchecked_sub  # sub's op without its bool checks (the public sub adds them)
from .elementwise.arithmetic import add, floor_divide, mul, pow, remainder, rsub, sub, true_divide
from .elementwise.comparison import bitwise_and, bitwise_or, bitwise_xor, eq, ge, gt, le, lt, ne
from .linalg.products import matmul
from .elementwise.unary import abs, neg, reciprocal
from .shape.inplace import add_, apply, div_, mul_, pow_, sub_


class Infix(NamedTuple):
    """One infix operator of the language and of Tensor.

    Attributes:
        alias: the grammar's alias (``"add"``), the name of the builder's node (``BinOp.op``, ``AugAssign.op``).
        symbol: what a program writes (``"+"``; ``"+="`` is the augmented assignment).
        protocol: Python's method name without underscores: ``"add"`` for ``__add__``, ``__radd__``,
            ``__iadd__``.
        apply: Python's operator function (``operator.add``): applies the operator to any two values, tensors
            (through the methods below) or Python's numbers, strings and lists.
        forward: ``Tensor.__add__(self, other)``: ``self + other``.
        reflected: ``Tensor.__radd__(self, other)``: ``other + self`` for a left operand that is not a Tensor.
        in_place: ``t += v`` on a tensor (``Tensor.__iadd__``): writes into ``t`` and returns it (see
            :func:`~.inplace.apply`); None for an operator that PyTorch computes out of place (``@=``).
    """

    alias: str
    symbol: str
    protocol: str
    apply: Callable[[Any, Any], Any]
    forward: Callable[[Tensor, Any], Tensor]
    reflected: Callable[[Tensor, Any], Tensor]
    in_place: Callable[[Tensor, Any], Tensor] | None


class Prefix(NamedTuple):
    """One prefix operator: ``alias`` (the grammar's, ``"neg"``: ``UnaryOp.op``), ``symbol`` (``"-"``),
    ``protocol`` (``"neg"`` for ``__neg__``), ``apply`` (Python's ``operator.neg``, for any value) and
    ``method`` (``Tensor.__neg__``; None: tensors do not support it)."""

    alias: str
    symbol: str
    protocol: str
    apply: Callable[[Any], Any]
    method: Callable[[Tensor], Tensor] | None


class Comparison(NamedTuple):
    """One comparison operator: ``symbol`` (``"<"``, as the grammar's ``COMP_OP`` matches it), ``protocol``
    (``"lt"`` for ``__lt__``), ``apply`` (``operator.lt``) and ``method`` (``Tensor.__lt__``, the op ``lt``: a
    bool tensor). Python reflects comparisons itself (``2 < x`` is ``x > 2``)."""

    symbol: str
    protocol: str
    apply: Callable[[Any, Any], Any]
    method: Callable[[Tensor, Any], Tensor]


# ------------------------------------------------------------------------------------ the Tensor methods
_sub_positional = positional(_unchecked_sub, 2)


def _sub_operator(a, b):
    """``a - b``: sub(a, b), without its checks for bool operands when neither can be one."""
    if type(b) is float or type(b) is int or type(b) is Tensor and b.data.dtype.kind != "b":
        if a.data.dtype.kind != "b":
            return _sub_positional(a, b)
    return sub(a, b)


def _in_place(fn):
    """``t <op>= v`` for an op without an in-place method here: ``fn(t, v)`` written into ``t``."""
    return lambda t, v: apply(t, lambda s: fn(s, v), (v,))


# The reflected forms get the Tensor first: ``2 - x`` calls ``x.__rsub__(2)``, which is rsub(x, 2).
BINARY: dict[str, Infix] = {row.alias: row for row in (
    Infix("add", "+", "add", operator.add,
          forward=positional(add, 2),
          reflected=lambda a, b: add(b, a) if isinstance(b, Tensor) else add(a, b),
          in_place=add_),
    Infix("sub", "-", "sub", operator.sub,
          forward=_sub_operator,
          reflected=lambda a, b: rsub(a, b),
          in_place=sub_),
    Infix("mul", "*", "mul", operator.mul,
          forward=positional(mul, 2),
          reflected=lambda a, b: mul(b, a) if isinstance(b, Tensor) else mul(a, b),
          in_place=mul_),
    Infix("div", "/", "truediv", operator.truediv,
          forward=positional(true_divide, 2),
          reflected=lambda a, b: mul(reciprocal(a), b),
          in_place=div_),
    Infix("floordiv", "//", "floordiv", operator.floordiv,
          forward=lambda a, b: floor_divide(a, b),
          reflected=lambda a, b: floor_divide(b, a),
          in_place=_in_place(floor_divide)),
    Infix("mod", "%", "mod", operator.mod,
          forward=lambda a, b: remainder(a, b),
          reflected=lambda a, b: remainder(b, a),
          in_place=_in_place(remainder)),
    Infix("matmul", "@", "matmul", operator.matmul,
          forward=lambda a, b: matmul(a, to_tensor(b)),
          reflected=lambda a, b: matmul(to_tensor(b), a),
          in_place=None),
    Infix("pow", "**", "pow", operator.pow,
          forward=lambda a, b: pow(a, b),
          reflected=lambda a, b: pow(b, a),
          in_place=pow_),
    Infix("bitor", "|", "or", operator.or_,
          forward=lambda a, b: bitwise_or(a, b),
          reflected=lambda a, b: bitwise_or(b, a),
          in_place=_in_place(bitwise_or)),
    Infix("bitxor", "^", "xor", operator.xor,
          forward=lambda a, b: bitwise_xor(a, b),
          reflected=lambda a, b: bitwise_xor(b, a),
          in_place=_in_place(bitwise_xor)),
    Infix("bitand", "&", "and", operator.and_,
          forward=lambda a, b: bitwise_and(a, b),
          reflected=lambda a, b: bitwise_and(b, a),
          in_place=_in_place(bitwise_and)),
)}

UNARY: dict[str, Prefix] = {row.alias: row for row in (
    Prefix("neg", "-", "neg", operator.neg, positional(neg, 1)),
    Prefix("pos", "+", "pos", operator.pos, lambda a: a),
    Prefix("invert", "~", "invert", operator.invert, None),
)}

COMPARISONS: dict[str, Comparison] = {row.symbol: row for row in (
    Comparison("<", "lt", operator.lt, lambda a, b: lt(a, b)),
    Comparison("<=", "le", operator.le, lambda a, b: le(a, b)),
    Comparison(">", "gt", operator.gt, lambda a, b: gt(a, b)),
    Comparison(">=", "ge", operator.ge, lambda a, b: ge(a, b)),
    Comparison("==", "eq", operator.eq, lambda a, b: eq(a, b)),
    Comparison("!=", "ne", operator.ne, lambda a, b: ne(a, b)),
)}


def _in_place_method(row: Infix):
    fn = row.in_place

    def method(self, other):
        return fn(self, other)

    method.__name__ = f"__i{row.protocol}__"
    return method


def _tensor_methods() -> dict[str, Callable]:
    methods = {}
    for row in BINARY.values():
        methods[f"__{row.protocol}__"] = row.forward
        methods[f"__r{row.protocol}__"] = row.reflected
        if row.in_place is not None:
            methods[f"__i{row.protocol}__"] = _in_place_method(row)
    for row in UNARY.values():
        if row.method is not None:
            methods[f"__{row.protocol}__"] = row.method
    for row in COMPARISONS.values():
        methods[f"__{row.protocol}__"] = row.method
    methods["__abs__"] = lambda a: abs(a)  # abs(x) in Python (the language's abs() calls the op itself)
    return methods


#: Tensor's operator methods by Python's protocol name (``__add__``, ``__radd__``, ``__iadd__``, ...,
#: ``__neg__``, ``__lt__``, ``__abs__``), built from the tables above.
TENSOR_METHODS: dict[str, Callable] = _tensor_methods()


def install_operators() -> None:
    """Make :data:`TENSOR_METHODS` Tensor's methods (run once, when this module is imported)."""
    for name, fn in TENSOR_METHODS.items():
        setattr(Tensor, name, fn)


install_operators()

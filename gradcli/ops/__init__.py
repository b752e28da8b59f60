"""The op table: every op's forward and derivative, grouped by family, plus Tensor's operators.

Importing this package fills :data:`REGISTRY` (name → callable, the namespace of the language and of
``import gradcli``) and installs Tensor methods and operators. Each name is declared once, with ``@op`` (a
primitive: forward, then its derivative) or ``@composite`` (a function that dispatches to ops), in
:mod:`._core`. The families, each importing only those above it:

* :mod:`.creation` — tensor, zeros, ones, full, eye, arange, linspace, rand, randn, randint, *_like, new_*
* :mod:`.comparison` — eq/ne/lt/le/gt/ge, bitwise_and/or/xor, where, dtype casts (Tensor.to, .float(), ...)
* :mod:`.unary` — sqrt/rsqrt/reciprocal, exp/log, trigonometry, hyperbolic functions, sigmoid, erf, neg, abs,
  sign (the trivial ones declared from one table)
* :mod:`.arithmetic` — add, sub/rsub, mul, div/true_divide/floor_divide, remainder, pow/square, clamp,
  maximum/minimum
* :mod:`.shape` — reshape/view/flatten, transpose/permute/movedim/T, squeeze/unsqueeze, select/narrow, cat/stack,
  split/chunk/unbind, flip, clone
* :mod:`.reduction` — sum, mean, prod, max/min, amax/amin, argmax/argmin, var/std, logsumexp, norm, cumsum,
  sum_to_size, expand, repeat
* :mod:`.indexing` — ``x[key]``, the ops of ``x[key] = v`` (CopySlices), index_select, gather
* :mod:`.inplace` — the in-place methods (add_, sub_, mul_, div_, pow_, clamp_, fill_, zero_, copy_), ``t += v``,
  ``t[key] = v``, and the version counter that guards saved values
* :mod:`.linalg` — dot, mv, mm, bmm, outer, matmul, linear, einsum
* :mod:`.activation` — relu, relu6, leaky_relu, elu, selu, gelu, silu, softplus, hardtanh
* :mod:`.nn` — softmax, log_softmax
* :mod:`.loss` — cross_entropy, nll_loss, mse_loss, l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy,
  binary_cross_entropy_with_logits, kl_div
"""

from ..tensor import Tensor
from . import (activation, arithmetic, comparison, creation, indexing, inplace, linalg, loss,  # noqa: F401
               nn, reduction, shape, unary)  # (importing them fills the registry)
from ._core import KINDS, REGISTRY, Op, positional, to_tensor
from .activation import relu
from .arithmetic import (add, div, floor_divide, mul, pow, remainder, rsub, sub, true_divide,  # noqa: F401
                         _sub)
from .comparison import bitwise_and, bitwise_or, bitwise_xor, eq, ge, gt, le, lt, ne, to, where
from .indexing import getitem
from .linalg import dot, matmul, mm, mv, outer
from .loss import binary_cross_entropy_with_logits
from .reduction import expand, mean, norm, sum, sum_to_size
from .shape import flatten, permute, reshape, select, squeeze, t, transpose, unsqueeze
from .unary import abs, exp, log, neg, reciprocal, sigmoid, sign, sqrt, tanh

_sub_positional = positional(_sub, 2)


def _sub_operator(a, b):
    """``a - b``: sub(a, b), without its checks for bool operands when neither can be one."""
    if type(b) is float or type(b) is int or type(b) is Tensor and b.data.dtype.kind != "b":
        if a.data.dtype.kind != "b":
            return _sub_positional(a, b)
    return sub(a, b)


# Python's operator protocol -> op. Reflected forms (__radd__ for ``2 + x``) swap the operands; ``2 / x`` is
# ``reciprocal(x) * 2`` as in PyTorch (grad_fn MulBackward0).
_OPERATORS = {
    "__add__": positional(add, 2),  # positional(): the hottest operators skip Op.__call__'s argument handling
    "__radd__": lambda a, b: add(b, a) if isinstance(b, Tensor) else add(a, b),
    "__sub__": _sub_operator,
    "__rsub__": lambda a, b: rsub(a, b),
    "__mul__": positional(mul, 2),
    "__rmul__": lambda a, b: mul(b, a) if isinstance(b, Tensor) else mul(a, b),
    "__truediv__": positional(true_divide, 2),
    "__rtruediv__": lambda a, b: mul(reciprocal(a), b),
    "__floordiv__": lambda a, b: floor_divide(a, b),
    "__rfloordiv__": lambda a, b: floor_divide(b, a),
    "__mod__": lambda a, b: remainder(a, b),
    "__rmod__": lambda a, b: remainder(b, a),
    "__matmul__": lambda a, b: matmul(a, to_tensor(b)),
    "__rmatmul__": lambda a, b: matmul(to_tensor(b), a),
    "__pow__": lambda a, b: pow(a, b),
    "__rpow__": lambda a, b: pow(b, a),
    "__neg__": positional(neg, 1),
    "__pos__": lambda a: a,
    "__abs__": lambda a: abs(a),
    "__eq__": lambda a, b: eq(a, b),
    "__ne__": lambda a, b: ne(a, b),
    "__lt__": lambda a, b: lt(a, b),
    "__le__": lambda a, b: le(a, b),
    "__gt__": lambda a, b: gt(a, b),
    "__ge__": lambda a, b: ge(a, b),
    "__and__": lambda a, b: bitwise_and(a, b),
    "__or__": lambda a, b: bitwise_or(a, b),
    "__xor__": lambda a, b: bitwise_xor(a, b),
}
_OPERATORS.update(inplace.OPERATORS)  # x += 1 and the other augmented assignments: in place (Tensor.__iadd__)
for _name, _fn in _OPERATORS.items():
    setattr(Tensor, _name, _fn)


__all__ = ["REGISTRY", "KINDS", "Op", "to_tensor"] + sorted(n for n in REGISTRY if not n.startswith("_"))

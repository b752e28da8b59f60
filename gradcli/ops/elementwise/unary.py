"""Elementwise math: powers and roots, exponentials and logarithms, trigonometric and hyperbolic functions,
sigmoid, erf, and the kinks abs and sign.

Most of these are one line each of the table below (:func:`_unary`): name, PyTorch's backward class, the
forward, the derivative rule (taking what it needs by name, as every rule does: ``input`` or ``result``), the
note ``gradcli ops`` shows, the docstring, and the domain where the op is defined and differentiable. The few
with more to say (the number-exponent power, atan2) are declared in full.

Formulas and their evaluation order follow PyTorch's tools/autograd/derivatives.yaml, FunctionsManual.cpp and
the CPU kernels (aten/src/ATen/native/cpu/UnaryOpsKernel.cpp, BinaryOpsKernel.cpp), so float32 results agree
with PyTorch to rounding. Integer and bool inputs give the default float dtype (``promote="float"``) except for
abs, sign and neg, which keep the input's dtype.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.apply import broadcast_error
from ..core.declare import composite, not_implemented_for, op, require_tensors, zeros_like_grad
from .comparison import where

_LN2 = 0.6931471805599453  # M_LN2, as in derivatives.yaml
_LN10 = 2.3025850929940456  # M_LN10
_TWO_OVER_SQRT_PI = 1.1283791670955126  # M_2_SQRTPI
_INF = float("inf")


def _unary(name: str, grad_fn: str, forward, vjp, *, note: str, doc: str, promote: str | None = "float",
           aliases: tuple = (), domain: tuple | None = None, formula: str | None = None, kinks: str | None = None):
    """Declare an elementwise op of one tensor ``input`` and its derivative rule: a row of this module's table.

    Args:
        name, grad_fn, note, promote, aliases, domain, formula, kinks: as :func:`~..core.declare.op` takes them
            (also a Tensor method).
        forward: a numpy ufunc, or a function of ``input`` (a numpy array).
        vjp: the derivative rule, ``(grad, input)`` or ``(grad, result)`` (or just ``(grad)``).
        doc: the op's docstring.
    """
    if isinstance(forward, np.ufunc):
        ufunc = forward

        def forward(input):
            return ufunc(input)

    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = doc
    return op(name, grad_fn=grad_fn, note=note, promote=promote, method=True, aliases=aliases,
              domain=domain, formula=formula, kinks=kinks)(forward).defvjp(vjp).defjvp_elementwise()  # auto_element_wise


# --------------------------------------------------------------------------------------- powers and roots


@op("pow", grad_fn="PowBackward0", promote=None, public=False,
    note="d/dinput = exponent * input^(exponent-1)",
    formula="input: grad * exponent * input^(exponent - 1) (exponent a number; 0 where exponent = 0)")
def pow_scalar(input, exponent):
    """``input ** exponent`` for a Python-number exponent (torch.pow, Tensor_Scalar overload), in the dtype
    PyTorch's promotion gives (bool ** 2 is int64, int ** 2.5 the default float). The public ``pow``
    (:mod:`.arithmetic`) dispatches here; the rules below use it for their squares and cubes, as PyTorch's do.

    Raises:
        RuntimeError: for integer tensors to negative integer powers (PyTorch's message).
    """
    if input.dtype.kind in "iub" and isinstance(exponent, (int, np.integer)) and not isinstance(exponent, bool) \
            and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return np.power(input, input.dtype.type(exponent) if input.dtype.kind == "f" else exponent)


@pow_scalar.defvjp
def _(grad, input, exponent):
    # derivatives.yaml pow_backward: zeros for exponent 0, else grad * (exponent * self.pow(exponent - 1)).
    if exponent == 0:
        return zeros_like_grad(grad)
    return grad * (exponent * pow_scalar(input, exponent - 1))


pow_scalar.defjvp_elementwise()  # derivatives.yaml: result: auto_element_wise


def _rsqrt(input):
    one = input.dtype.type(1)
    return one / np.sqrt(input)


sqrt = _unary("sqrt", "SqrtBackward0", np.sqrt, lambda grad, result: grad / (2 * result),
              note="d/dx = 1 / (2 * result); inf at 0", domain=(0, _INF),
              doc="Square root (nan below 0); integers give the default float dtype. Matches torch.sqrt.",
              formula="input: grad / (2 * result)")
rsqrt = _unary("rsqrt", "RsqrtBackward0", _rsqrt,
               lambda grad, result: -0.5 * grad * pow_scalar(result, 3),  # derivatives.yaml: -0.5 * grad * result^3
               note="d/dx = -0.5 * result^3", domain=(0, _INF),
               doc="``1 / sqrt(input)`` (inf at 0, nan below); integers give the default float dtype. Matches "
                   "torch.rsqrt.", formula="input: -grad * result^3 / 2")
reciprocal = _unary("reciprocal", "ReciprocalBackward0", np.reciprocal,
                    lambda grad, result: -grad * (result * result),
                    note="d/dx = -1 / x^2 = -result^2",
                    doc="``1 / input``; integers give the default float dtype. Matches torch.reciprocal.",
                    formula="input: -grad * result^2")


# ------------------------------------------------------------------------------------------- exp and log

exp = _unary("exp", "ExpBackward0", np.exp, lambda grad, result: grad * result, note="d/dx = result",
             doc="``e ** input``; integers give the default float dtype. Matches torch.exp.",
             formula="input: grad * result")
exp2 = _unary("exp2", "Exp2Backward0", np.exp2, lambda grad, result: grad * result * _LN2,
              note="d/dx = result * ln 2",
              doc="``2 ** input``; integers give the default float dtype. Matches torch.exp2.",
              formula="input: grad * result * ln(2)")
expm1 = _unary("expm1", "Expm1Backward0", np.expm1, lambda grad, result: grad * (result + 1),
               note="d/dx = result + 1",
               doc="``exp(input) - 1``, accurate near 0; integers give the default float dtype. Matches "
                   "torch.expm1.", formula="input: grad * (result + 1)")
log = _unary("log", "LogBackward0", np.log, lambda grad, input: grad / input, note="d/dx = 1 / x",
             domain=(0, _INF),
             doc="Natural logarithm (nan below 0, -inf at 0); integers give the default float dtype. Matches "
                 "torch.log.", formula="input: grad / input")
log2 = _unary("log2", "Log2Backward0", np.log2, lambda grad, input: grad / (input * _LN2),
              note="d/dx = 1 / (x * ln 2)", domain=(0, _INF),
              doc="Base-2 logarithm; integers give the default float dtype. Matches torch.log2.",
              formula="input: grad / (input * ln(2))")
log10 = _unary("log10", "Log10Backward0", np.log10, lambda grad, input: grad / (input * _LN10),
               note="d/dx = 1 / (x * ln 10)", domain=(0, _INF),
               doc="Base-10 logarithm; integers give the default float dtype. Matches torch.log10.",
               formula="input: grad / (input * ln(10))")
log1p = _unary("log1p", "Log1PBackward0", np.log1p,
               lambda grad, input: grad / (input + 1),  # log1p_backward (FunctionsManual.cpp)
               note="d/dx = 1 / (x + 1)", domain=(-1, _INF),
               doc="``log(1 + input)``, accurate near 0 (nan below -1); integers give the default float dtype. "
                   "Matches torch.log1p.", formula="input: grad / (1 + input)")


# -------------------------------------------------------------------------------------------------- trig

sin = _unary("sin", "SinBackward0", np.sin, lambda grad, input: grad * cos(input), note="d/dx = cos(x)",
             doc="Sine (radians). Matches torch.sin.", formula="input: grad * cos(input)")
cos = _unary("cos", "CosBackward0", np.cos, lambda grad, input: grad * -sin(input), note="d/dx = -sin(x)",
             doc="Cosine (radians). Matches torch.cos.", formula="input: -grad * sin(input)")
tan = _unary("tan", "TanBackward0", np.tan, lambda grad, result: grad * (1 + pow_scalar(result, 2)),
             note="d/dx = 1 + result^2", doc="Tangent (radians). Matches torch.tan.",
             formula="input: grad * (1 + result^2)")
asin = _unary("asin", "AsinBackward0", np.arcsin, lambda grad, input: grad * rsqrt(-input * input + 1),
              note="d/dx = 1 / sqrt(1 - x^2)", aliases=("arcsin",), domain=(-1, 1),
              doc="Inverse sine (nan outside [-1, 1]). Matches torch.asin (alias arcsin).",
              formula="input: grad / sqrt(1 - input^2)")
acos = _unary("acos", "AcosBackward0", np.arccos, lambda grad, input: grad * -rsqrt(-input * input + 1),
              note="d/dx = -1 / sqrt(1 - x^2)", aliases=("arccos",), domain=(-1, 1),
              doc="Inverse cosine (nan outside [-1, 1]). Matches torch.acos (alias arccos).",
              formula="input: -grad / sqrt(1 - input^2)")
atan = _unary("atan", "AtanBackward0", np.arctan, lambda grad, input: grad / (input * input + 1),
              note="d/dx = 1 / (1 + x^2)", aliases=("arctan",),
              doc="Inverse tangent. Matches torch.atan (alias arctan).", formula="input: grad / (1 + input^2)")


@op("atan2", grad_fn="Atan2Backward0", inputs=2, promote="float", public=False,
    note="d/dinput = other / (input^2 + other^2), d/dother = -input / (...)",
    formula="input: grad * other / (input^2 + other^2); other: -grad * input / (input^2 + other^2)")
def _atan2(input, other):
    """The angle of the point (other, input), in (-pi, pi] (torch.atan2)."""
    try:
        return np.arctan2(input, other)
    except ValueError as e:
        raise broadcast_error(e, input, other) from None


@_atan2.defvjp
def _(grad, input, other, needs_input_grad):
    # atan2_backward (FunctionsManual.cpp): recip = 1 / (self^2 + other^2), 0 where that is 0 (the origin)
    denom = input * input + other * other
    recip = where(denom == 0, 0.0, reciprocal(denom))
    return (grad * other * recip if needs_input_grad[0] else None,
            grad * -input * recip if needs_input_grad[1] else None)


_atan2.defjvp_elementwise()  # derivatives.yaml: result: auto_element_wise


@composite("atan2", grad_fn="Atan2Backward0", method=True, aliases=("arctan2",),
           note="d/dinput = other / (input^2 + other^2), d/dother = -input / (...)")
def atan2(input, other):
    """Elementwise ``atan(input / other)`` in the right quadrant, with broadcasting; integers give the default
    float dtype. Matches torch.atan2 (alias arctan2); both arguments must be tensors.

    Raises:
        TypeError: for a Python number argument (PyTorch's message).
    """
    require_tensors("atan2", input=input, other=other)
    return _atan2(input, other)


# ------------------------------------------------------------------------------------------- hyperbolic

sinh = _unary("sinh", "SinhBackward0", np.sinh, lambda grad, input: grad * cosh(input), note="d/dx = cosh(x)",
              doc="Hyperbolic sine. Matches torch.sinh.", formula="input: grad * cosh(input)")
cosh = _unary("cosh", "CoshBackward0", np.cosh, lambda grad, input: grad * sinh(input), note="d/dx = sinh(x)",
              doc="Hyperbolic cosine. Matches torch.cosh.", formula="input: grad * sinh(input)")
tanh = _unary("tanh", "TanhBackward0", np.tanh,
              lambda grad, result: grad * (1 - result * result),  # tanh_backward (BinaryOpsKernel.cpp)
              note="d/dx = 1 - result^2", doc="Hyperbolic tangent. Matches torch.tanh.",
              formula="input: grad * (1 - result^2)")


# ----------------------------------------------------------------------------------------- sigmoid, erf


def _sigmoid(input):
    one = input.dtype.type(1)
    return one / (one + np.exp(-input))


_erf_f64 = np.vectorize(math.erf, otypes=[np.float64])


def _erf(input):
    return _erf_f64(input).astype(input.dtype, copy=False)


sigmoid = _unary("sigmoid", "SigmoidBackward0", _sigmoid,
                 lambda grad, result: grad * (1 - result) * result,  # sigmoid_backward (BinaryOpsKernel.cpp)
                 note="d/dx = result * (1 - result)",
                 doc="Logistic function ``1 / (1 + exp(-input))``. Matches torch.sigmoid.",
                 formula="input: grad * result * (1 - result)")
erf = _unary("erf", "ErfBackward0", _erf,
             # derivatives.yaml: 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad
             lambda grad, input: _TWO_OVER_SQRT_PI * exp(-pow_scalar(input, 2)) * grad,
             note="d/dx = 2 / sqrt(pi) * exp(-x^2)",
             doc="The error function ``2 / sqrt(pi) * integral_0^x exp(-t^2) dt`` (C's erf, computed in float64 "
                 "and rounded to the input's dtype). Matches torch.erf.",
             formula="input: grad * 2 / sqrt(pi) * exp(-input^2)")


# ------------------------------------------------------------------------------- neg, and the kinks abs, sign


def _neg(input):
    if input.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return np.negative(input)


def _abs(input):
    if input.dtype.kind == "b":
        raise not_implemented_for("abs_cpu", input.dtype)
    return np.abs(input)


def _sign(input):
    if input.dtype.kind == "b":
        return input.copy()
    if input.dtype.kind == "f":
        return (input > 0).astype(input.dtype) - (input < 0).astype(input.dtype)
    return np.sign(input)


neg = _unary("neg", "NegBackward0", _neg, lambda grad: -grad, note="d/dx = -1", promote="same",
             aliases=("negative",), doc="""``-input``. Matches torch.neg.

    Raises:
        RuntimeError: for bool tensors (PyTorch's message).
    """, formula="input: -grad")
abs = _unary("abs", "AbsBackward0", _abs, lambda grad, input: grad * sign(input), note="d/dx = sign(x); 0 at 0",
             promote="same", aliases=("absolute",), doc="""Absolute value. Matches torch.abs; its gradient at 0 is 0
    (sign(0) = 0).

    Raises:
        NotImplementedError: for bool tensors (PyTorch's message).
    """, formula="input: grad * sign(input) (0 at input = 0)", kinks="abs")
sign = _unary("sign", "SignBackward0", _sign, lambda grad: zeros_like_grad(grad), note="d/dx = 0", promote="same",
              doc="-1, 0 or 1 by the sign of each element, 0 for nan (bool stays bool). Matches torch.sign, computed "
                  "as its kernel does, ``(0 < x) - (x < 0)``; its gradient is zero.", formula="input: 0")


# ------------------------------------------------------------------------------------------------ round
def _round_half_even(input):
    if input.dtype.kind == "b":
        raise not_implemented_for("round_cpu", input.dtype)
    return np.round(input) if input.dtype.kind == "f" else input.copy()


@op("round", grad_fn="RoundBackward0", promote="same", public=False, note="d/dx = 0", formula="input: 0")
def _round(input):
    """Rounds to the nearest integer, halves to even (as C's nearbyint); integers stay as they are."""
    return _round_half_even(input)


@op("round", grad_fn="RoundBackward1", promote="same", public=False, note="d/dx = 0", formula="input: 0")
def _round_decimals(input, decimals):
    """PyTorch's round with decimals (UnaryOpsKernel.cpp): ``nearbyint(x * 10^d) / 10^d``, or for ``d < 0``
    ``nearbyint(x / 10^-d) * 10^-d``, in the input's dtype."""
    if input.dtype.kind != "f":
        raise not_implemented_for("round_cpu", input.dtype)
    t = input.dtype.type
    scale = t(10.0 ** abs(decimals))
    if decimals < 0:
        return (np.round(input / scale) * scale).astype(input.dtype, copy=False)
    return (np.round(input * scale) / scale).astype(input.dtype, copy=False)


for _r in (_round, _round_decimals):
    _r.defvjp(lambda grad: zeros_like_grad(grad)).defjvp_elementwise()  # derivatives.yaml: zeros_like(grad)


@composite("round", grad_fn="RoundBackward0 | RoundBackward1 (decimals)", note="d/dx = 0", method=True)
def round(input, decimals=0):
    """Rounds to the nearest integer, halves to even (as C's nearbyint); with ``decimals``, to that many decimal
    places (negative: to tens, hundreds...), as PyTorch's kernel computes it in the input's dtype. Matches
    torch.round (grad_fn RoundBackward0, RoundBackward1 with decimals); its gradient is zero.

    Raises:
        NotImplementedError: for bool tensors, and integer tensors with decimals (PyTorch's messages).
    """
    if decimals == 0:
        return _round(input)
    return _round_decimals(input, decimals)



# ---------------------------------------------------------------------------- floor, ceil, trunc, frac
def _rounding(name: str, ufunc, kernel: str):
    """The forward of floor/ceil/trunc: integers are returned as they are (copied), bools refused as PyTorch's
    ``<kernel>`` does."""
    def forward(input):
        if input.dtype.kind == "b":
            raise not_implemented_for(kernel, input.dtype)
        return ufunc(input) if input.dtype.kind == "f" else input.copy()

    return forward


def _frac(input):
    if input.dtype.kind != "f":
        raise not_implemented_for("frac_cpu", input.dtype)
    return input - np.trunc(input)  # the kernel's a - trunc(a)


floor = _unary("floor", "FloorBackward0", _rounding("floor", np.floor, "floor_vml_cpu"),
               lambda grad: zeros_like_grad(grad), note="d/dx = 0", promote="same", doc="""The largest integer
    not above each element (integers stay as they are). Matches torch.floor (grad_fn FloorBackward0); its
    gradient is zero.

    Raises:
        NotImplementedError: for bool tensors (PyTorch's message).
    """, formula="input: 0")
ceil = _unary("ceil", "CeilBackward0", _rounding("ceil", np.ceil, "ceil_vml_cpu"),
              lambda grad: zeros_like_grad(grad), note="d/dx = 0", promote="same", doc="""The smallest integer
    not below each element (integers stay as they are). Matches torch.ceil (grad_fn CeilBackward0); its
    gradient is zero.

    Raises:
        NotImplementedError: for bool tensors (PyTorch's message).
    """, formula="input: 0")
trunc = _unary("trunc", "TruncBackward0", _rounding("trunc", np.trunc, "trunc_vml_cpu"),
               lambda grad: zeros_like_grad(grad), note="d/dx = 0", promote="same", aliases=("fix",),
               doc="""Each element rounded toward zero (integers stay as they are). Matches torch.trunc (alias
    fix; grad_fn TruncBackward0); its gradient is zero.

    Raises:
        NotImplementedError: for bool tensors (PyTorch's message).
    """, formula="input: 0")
frac = _unary("frac", "FracBackward0", _frac, lambda grad: grad, note="d/dx = 1", promote="same",
              doc="""The fractional part ``input - trunc(input)``, with the sign of the input. Matches torch.frac
    (grad_fn FracBackward0); its gradient is 1 (derivatives.yaml: ``self: grad``).

    Raises:
        NotImplementedError: for integer and bool tensors (PyTorch's message).
    """, formula="input: grad")

"""Elementwise math: powers and roots, exponentials and logarithms, trigonometric and hyperbolic functions,
sigmoid, erf, and the kinks abs and sign.

Each is declared as every op is (:func:`~..core.declare.op`): name, PyTorch's backward class, the note
``gradcli ops`` shows, the formula ``--explain`` shows, the domain where the op is defined and differentiable,
and ``jvp="elementwise"`` (derivatives.yaml's ``auto_element_wise``: the tangent is the VJP rule applied to it);
then the forward on numpy arrays, then the derivative rule right below (taking what it needs by name, as every
rule does: ``input`` or ``result``).

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


# --------------------------------------------------------------------------------------- powers and roots


@op("pow", grad_fn="PowBackward0", promote=None, public=False,
    note="d/dinput = exponent * input^(exponent-1)",
    formula="input: grad * exponent * input^(exponent - 1) (exponent a number; 0 where exponent = 0)",
    jvp="elementwise")  # derivatives.yaml: result: auto_element_wise
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


@pow_scalar.defsymbolic
def _(s, input, exponent):
    return s.elementwise(lambda t: t ** s.elem(exponent), input)


@op("sqrt", grad_fn="SqrtBackward0", promote="float", method=True, domain=(0, _INF),
    note="d/dx = 1 / (2 * result); inf at 0",
    formula="input: grad / (2 * result)", jvp="elementwise")
def sqrt(input):
    """Square root (nan below 0); integers give the default float dtype. Matches torch.sqrt."""
    return np.sqrt(input)


@sqrt.defvjp
def _(grad, result):
    return grad / (2 * result)


sqrt.defsymbolic(lambda s, input: s.elementwise(s.sqrt, input))


@op("rsqrt", grad_fn="RsqrtBackward0", promote="float", method=True, domain=(0, _INF), note="d/dx = -0.5 * result^3",
    formula="input: -grad * result^3 / 2", jvp="elementwise")
def rsqrt(input):
    """``1 / sqrt(input)`` (inf at 0, nan below); integers give the default float dtype. Matches torch.rsqrt."""
    one = input.dtype.type(1)
    return one / np.sqrt(input)


@rsqrt.defvjp
def _(grad, result):
    return -0.5 * grad * pow_scalar(result, 3)  # derivatives.yaml: -0.5 * grad * result^3


rsqrt.defsymbolic(lambda s, input: s.elementwise(lambda t: 1 / s.sqrt(t), input))


@op("reciprocal", grad_fn="ReciprocalBackward0", promote="float", method=True, note="d/dx = -1 / x^2 = -result^2",
    formula="input: -grad * result^2", jvp="elementwise")
def reciprocal(input):
    """``1 / input``; integers give the default float dtype. Matches torch.reciprocal."""
    return np.reciprocal(input)


@reciprocal.defvjp
def _(grad, result):
    return -grad * (result * result)


reciprocal.defsymbolic(lambda s, input: s.elementwise(lambda t: 1 / t, input))


# ------------------------------------------------------------------------------------------- exp and log


@op("exp", grad_fn="ExpBackward0", promote="float", method=True, note="d/dx = result",
    formula="input: grad * result", jvp="elementwise")
def exp(input):
    """``e ** input``; integers give the default float dtype. Matches torch.exp."""
    return np.exp(input)


@exp.defvjp
def _(grad, result):
    return grad * result


exp.defsymbolic(lambda s, input: s.elementwise(s.exp, input))


@op("exp2", grad_fn="Exp2Backward0", promote="float", method=True, note="d/dx = result * ln 2",
    formula="input: grad * result * ln(2)", jvp="elementwise")
def exp2(input):
    """``2 ** input``; integers give the default float dtype. Matches torch.exp2."""
    return np.exp2(input)


@exp2.defvjp
def _(grad, result):
    return grad * result * _LN2


exp2.defsymbolic(lambda s, input: s.elementwise(lambda t: 2 ** t, input))


@op("expm1", grad_fn="Expm1Backward0", promote="float", method=True, note="d/dx = result + 1",
    formula="input: grad * (result + 1)", jvp="elementwise")
def expm1(input):
    """``exp(input) - 1``, accurate near 0; integers give the default float dtype. Matches torch.expm1."""
    return np.expm1(input)


@expm1.defvjp
def _(grad, result):
    return grad * (result + 1)


expm1.defsymbolic(lambda s, input: s.elementwise(lambda t: s.exp(t) - 1, input))


@op("log", grad_fn="LogBackward0", promote="float", method=True, domain=(0, _INF), note="d/dx = 1 / x",
    formula="input: grad / input", jvp="elementwise")
def log(input):
    """Natural logarithm (nan below 0, -inf at 0); integers give the default float dtype. Matches torch.log."""
    return np.log(input)


@log.defvjp
def _(grad, input):
    return grad / input


log.defsymbolic(lambda s, input: s.elementwise(s.log, input))


@op("log2", grad_fn="Log2Backward0", promote="float", method=True, domain=(0, _INF), note="d/dx = 1 / (x * ln 2)",
    formula="input: grad / (input * ln(2))", jvp="elementwise")
def log2(input):
    """Base-2 logarithm; integers give the default float dtype. Matches torch.log2."""
    return np.log2(input)


@log2.defvjp
def _(grad, input):
    return grad / (input * _LN2)


log2.defsymbolic(lambda s, input: s.elementwise(lambda t: s.log(t) / s.log(2), input))


@op("log10", grad_fn="Log10Backward0", promote="float", method=True, domain=(0, _INF), note="d/dx = 1 / (x * ln 10)",
    formula="input: grad / (input * ln(10))", jvp="elementwise")
def log10(input):
    """Base-10 logarithm; integers give the default float dtype. Matches torch.log10."""
    return np.log10(input)


@log10.defvjp
def _(grad, input):
    return grad / (input * _LN10)


log10.defsymbolic(lambda s, input: s.elementwise(lambda t: s.log(t) / s.log(10), input))


@op("log1p", grad_fn="Log1PBackward0", promote="float", method=True, domain=(-1, _INF), note="d/dx = 1 / (x + 1)",
    formula="input: grad / (1 + input)", jvp="elementwise")
def log1p(input):
    """``log(1 + input)``, accurate near 0 (nan below -1); integers give the default float dtype. Matches
    torch.log1p."""
    return np.log1p(input)


@log1p.defvjp
def _(grad, input):
    return grad / (input + 1)  # log1p_backward (FunctionsManual.cpp)


log1p.defsymbolic(lambda s, input: s.elementwise(lambda t: s.log(1 + t), input))


# -------------------------------------------------------------------------------------------------- trig


@op("sin", grad_fn="SinBackward0", promote="float", method=True, note="d/dx = cos(x)",
    formula="input: grad * cos(input)", jvp="elementwise")
def sin(input):
    """Sine (radians). Matches torch.sin."""
    return np.sin(input)


@sin.defvjp
def _(grad, input):
    return grad * cos(input)


sin.defsymbolic(lambda s, input: s.elementwise(s.sin, input))


@op("cos", grad_fn="CosBackward0", promote="float", method=True, note="d/dx = -sin(x)",
    formula="input: -grad * sin(input)", jvp="elementwise")
def cos(input):
    """Cosine (radians). Matches torch.cos."""
    return np.cos(input)


@cos.defvjp
def _(grad, input):
    return grad * -sin(input)


cos.defsymbolic(lambda s, input: s.elementwise(s.cos, input))


@op("tan", grad_fn="TanBackward0", promote="float", method=True, note="d/dx = 1 + result^2",
    formula="input: grad * (1 + result^2)", jvp="elementwise")
def tan(input):
    """Tangent (radians). Matches torch.tan."""
    return np.tan(input)


@tan.defvjp
def _(grad, result):
    return grad * (1 + pow_scalar(result, 2))


tan.defsymbolic(lambda s, input: s.elementwise(s.tan, input))


@op("asin", grad_fn="AsinBackward0", promote="float", method=True, aliases=("arcsin",), domain=(-1, 1),
    note="d/dx = 1 / sqrt(1 - x^2)",
    formula="input: grad / sqrt(1 - input^2)", jvp="elementwise")
def asin(input):
    """Inverse sine (nan outside [-1, 1]). Matches torch.asin (alias arcsin)."""
    return np.arcsin(input)


@asin.defvjp
def _(grad, input):
    return grad * rsqrt(-input * input + 1)


asin.defsymbolic(lambda s, input: s.elementwise(s.asin, input))


@op("acos", grad_fn="AcosBackward0", promote="float", method=True, aliases=("arccos",), domain=(-1, 1),
    note="d/dx = -1 / sqrt(1 - x^2)",
    formula="input: -grad / sqrt(1 - input^2)", jvp="elementwise")
def acos(input):
    """Inverse cosine (nan outside [-1, 1]). Matches torch.acos (alias arccos)."""
    return np.arccos(input)


@acos.defvjp
def _(grad, input):
    return grad * -rsqrt(-input * input + 1)


acos.defsymbolic(lambda s, input: s.elementwise(s.acos, input))


@op("atan", grad_fn="AtanBackward0", promote="float", method=True, aliases=("arctan",), note="d/dx = 1 / (1 + x^2)",
    formula="input: grad / (1 + input^2)", jvp="elementwise")
def atan(input):
    """Inverse tangent. Matches torch.atan (alias arctan)."""
    return np.arctan(input)


@atan.defvjp
def _(grad, input):
    return grad / (input * input + 1)


atan.defsymbolic(lambda s, input: s.elementwise(s.atan, input))


@op("atan2", grad_fn="Atan2Backward0", inputs=2, promote="float", public=False,
    note="d/dinput = other / (input^2 + other^2), d/dother = -input / (...)",
    formula="input: grad * other / (input^2 + other^2); other: -grad * input / (input^2 + other^2)",
    jvp="elementwise")  # derivatives.yaml: result: auto_element_wise
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


@op("sinh", grad_fn="SinhBackward0", promote="float", method=True, note="d/dx = cosh(x)",
    formula="input: grad * cosh(input)", jvp="elementwise")
def sinh(input):
    """Hyperbolic sine. Matches torch.sinh."""
    return np.sinh(input)


@sinh.defvjp
def _(grad, input):
    return grad * cosh(input)


sinh.defsymbolic(lambda s, input: s.elementwise(s.sinh, input))


@op("cosh", grad_fn="CoshBackward0", promote="float", method=True, note="d/dx = sinh(x)",
    formula="input: grad * sinh(input)", jvp="elementwise")
def cosh(input):
    """Hyperbolic cosine. Matches torch.cosh."""
    return np.cosh(input)


@cosh.defvjp
def _(grad, input):
    return grad * sinh(input)


cosh.defsymbolic(lambda s, input: s.elementwise(s.cosh, input))


@op("tanh", grad_fn="TanhBackward0", promote="float", method=True, note="d/dx = 1 - result^2",
    formula="input: grad * (1 - result^2)", jvp="elementwise")
def tanh(input):
    """Hyperbolic tangent. Matches torch.tanh."""
    return np.tanh(input)


@tanh.defvjp
def _(grad, result):
    return grad * (1 - result * result)  # tanh_backward (BinaryOpsKernel.cpp)


tanh.defsymbolic(lambda s, input: s.elementwise(s.tanh, input))


# ----------------------------------------------------------------------------------------- sigmoid, erf


_erf_f64 = np.vectorize(math.erf, otypes=[np.float64])


@op("sigmoid", grad_fn="SigmoidBackward0", promote="float", method=True, note="d/dx = result * (1 - result)",
    formula="input: grad * result * (1 - result)", jvp="elementwise")
def sigmoid(input):
    """Logistic function ``1 / (1 + exp(-input))``. Matches torch.sigmoid."""
    one = input.dtype.type(1)
    return one / (one + np.exp(-input))


@sigmoid.defvjp
def _(grad, result):
    return grad * (1 - result) * result  # sigmoid_backward (BinaryOpsKernel.cpp)


sigmoid.defsymbolic(lambda s, input: s.elementwise(s.Sigmoid, input))


@op("erf", grad_fn="ErfBackward0", promote="float", method=True, note="d/dx = 2 / sqrt(pi) * exp(-x^2)",
    formula="input: grad * 2 / sqrt(pi) * exp(-input^2)", jvp="elementwise")
def erf(input):
    """The error function ``2 / sqrt(pi) * integral_0^x exp(-t^2) dt`` (C's erf, computed in float64 and rounded to
    the input's dtype). Matches torch.erf."""
    return _erf_f64(input).astype(input.dtype, copy=False)


@erf.defvjp
def _(grad, input):
    # derivatives.yaml: 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad
    return _TWO_OVER_SQRT_PI * exp(-pow_scalar(input, 2)) * grad


erf.defsymbolic(lambda s, input: s.elementwise(s.erf, input))


# ------------------------------------------------------------------------------- neg, and the kinks abs, sign


@op("neg", grad_fn="NegBackward0", promote="same", method=True, aliases=("negative",), note="d/dx = -1",
    formula="input: -grad", jvp="elementwise")
def neg(input):
    """``-input``. Matches torch.neg.

    Raises:
        RuntimeError: for bool tensors (PyTorch's message).
    """
    if input.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return np.negative(input)


@neg.defvjp
def _(grad):
    return -grad


neg.defsymbolic(lambda s, input: s.elementwise(lambda t: -t, input))


@op("abs", grad_fn="AbsBackward0", promote="same", method=True, aliases=("absolute",), note="d/dx = sign(x); 0 at 0",
    formula="input: grad * sign(input) (0 at input = 0)", kinks="abs", jvp="elementwise")
def abs(input):
    """Absolute value. Matches torch.abs; its gradient at 0 is 0 (sign(0) = 0).

    Raises:
        NotImplementedError: for bool tensors (PyTorch's message).
    """
    if input.dtype.kind == "b":
        raise not_implemented_for("abs_cpu", input.dtype)
    return np.abs(input)


@abs.defvjp
def _(grad, input):
    return grad * sign(input)


abs.defsymbolic(lambda s, input: s.elementwise(s.Abs, input))


@op("sign", grad_fn="SignBackward0", promote="same", method=True, note="d/dx = 0",
    formula="input: 0", jvp="elementwise")
def sign(input):
    """-1, 0 or 1 by the sign of each element, 0 for nan (bool stays bool). Matches torch.sign, computed as its
    kernel does, ``(0 < x) - (x < 0)``; its gradient is zero."""
    if input.dtype.kind == "b":
        return input.copy()
    if input.dtype.kind == "f":
        return (input > 0).astype(input.dtype) - (input < 0).astype(input.dtype)
    return np.sign(input)


@sign.defvjp
def _(grad):
    return zeros_like_grad(grad)


sign.defsymbolic(lambda s, input: s.elementwise(s.Sign, input))


# ------------------------------------------------------------------------------------------------ round
def _round_half_even(input):
    if input.dtype.kind == "b":
        raise not_implemented_for("round_cpu", input.dtype)
    return np.round(input) if input.dtype.kind == "f" else input.copy()


def _zero_derivative(grad):
    return zeros_like_grad(grad)  # derivatives.yaml: zeros_like(grad)


@op("round", grad_fn="RoundBackward0", promote="same", public=False, note="d/dx = 0", formula="input: 0",
    jvp="elementwise")
def _round(input):
    """Rounds to the nearest integer, halves to even (as C's nearbyint); integers stay as they are."""
    return _round_half_even(input)


_round.defvjp(_zero_derivative)


@op("round", grad_fn="RoundBackward1", promote="same", public=False, note="d/dx = 0", formula="input: 0",
    jvp="elementwise")
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


_round_decimals.defvjp(_zero_derivative)


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


@op("floor", grad_fn="FloorBackward0", promote="same", method=True, note="d/dx = 0",
    formula="input: 0", jvp="elementwise")
def floor(input):
    """The largest integer not above each element (integers stay as they are). Matches torch.floor (grad_fn
    FloorBackward0); its gradient is zero.

    Raises:
        NotImplementedError: for bool tensors (PyTorch's message).
    """
    if input.dtype.kind == "b":
        raise not_implemented_for("floor_vml_cpu", input.dtype)
    return np.floor(input) if input.dtype.kind == "f" else input.copy()


@floor.defvjp
def _(grad):
    return zeros_like_grad(grad)


@op("ceil", grad_fn="CeilBackward0", promote="same", method=True, note="d/dx = 0",
    formula="input: 0", jvp="elementwise")
def ceil(input):
    """The smallest integer not below each element (integers stay as they are). Matches torch.ceil (grad_fn
    CeilBackward0); its gradient is zero.

    Raises:
        NotImplementedError: for bool tensors (PyTorch's message).
    """
    if input.dtype.kind == "b":
        raise not_implemented_for("ceil_vml_cpu", input.dtype)
    return np.ceil(input) if input.dtype.kind == "f" else input.copy()


@ceil.defvjp
def _(grad):
    return zeros_like_grad(grad)


@op("trunc", grad_fn="TruncBackward0", promote="same", method=True, aliases=("fix",), note="d/dx = 0",
    formula="input: 0", jvp="elementwise")
def trunc(input):
    """Each element rounded toward zero (integers stay as they are). Matches torch.trunc (alias fix; grad_fn
    TruncBackward0); its gradient is zero.

    Raises:
        NotImplementedError: for bool tensors (PyTorch's message).
    """
    if input.dtype.kind == "b":
        raise not_implemented_for("trunc_vml_cpu", input.dtype)
    return np.trunc(input) if input.dtype.kind == "f" else input.copy()


@trunc.defvjp
def _(grad):
    return zeros_like_grad(grad)


@op("frac", grad_fn="FracBackward0", promote="same", method=True, note="d/dx = 1",
    formula="input: grad", jvp="elementwise")
def frac(input):
    """The fractional part ``input - trunc(input)``, with the sign of the input. Matches torch.frac
    (grad_fn FracBackward0); its gradient is 1 (derivatives.yaml: ``self: grad``).

    Raises:
        NotImplementedError: for integer and bool tensors (PyTorch's message).
    """
    if input.dtype.kind != "f":
        raise not_implemented_for("frac_cpu", input.dtype)
    return input - np.trunc(input)  # the kernel's a - trunc(a)


@frac.defvjp
def _(grad):
    return grad

"""Arithmetic: add, sub/rsub, mul, div/true_divide/floor_divide, remainder, pow/square, and the elementwise
kinks clamp, maximum and minimum. The unary math functions (exp, log, trig, abs, neg, ...) are in :mod:`.unary`,
comparisons, where and casts in :mod:`.comparison`.

Each op is its forward (numpy, broadcasting as PyTorch does) and, right below, its derivative. Formulas and
their evaluation order follow PyTorch's tools/autograd/derivatives.yaml, FunctionsManual.cpp and the CPU
kernels (aten/src/ATen/native/cpu/BinaryOpsKernel.cpp), so float32 results agree with PyTorch to rounding.
Rules never unbroadcast: the engine sums each gradient back to its input's shape.

Where PyTorch dispatches one Python name to several ATen overloads with different ``grad_fn`` names
(``pow``, ``rsub``, ``div``, ``clamp``, ``remainder``), the public name is a :func:`~._core.composite` that
picks one of several ops (declared with ``public=False`` under the same name), as PyTorch's argument parser
does.
"""

from __future__ import annotations

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor, to_tensor
from ..core.apply import broadcast_error
from ..core.declare import composite, not_implemented_for, op, require_tensors, zeros_like_grad
from .comparison import where
from .unary import log, pow_scalar


def _is_bool(v) -> bool:
    if isinstance(v, Tensor):
        return v.data.dtype.kind == "b"
    if isinstance(v, (np.ndarray, np.generic)):
        return v.dtype.kind == "b"
    return isinstance(v, bool)


def _check_alpha(dtype, alpha) -> None:
    # alpha_check (BinaryOps.cpp), on the computation dtype
    if isinstance(alpha, (bool, np.bool_)) and dtype.kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dtype.kind != "f" and isinstance(alpha, (float, np.floating)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _scaled(other, alpha):
    return other if alpha == 1 else np.multiply(other, alpha)


# ------------------------------------------------------------------------------------------ arithmetic


@op("add", grad_fn="AddBackward0", inputs=2, method=True, note="d/dinput = 1, d/dother = alpha",
    formula="input: grad; other: alpha * grad",
    jvp="linear")  # derivatives.yaml: result: self_t + maybe_multiply(other_t, alpha)
def add(input, other, alpha=1):
    """``input + alpha * other`` with broadcasting and type promotion. Matches torch.add.

    Raises:
        RuntimeError: for operands that do not broadcast, or a float ``alpha`` with integer tensors.
    """
    if alpha != 1 or type(alpha) is not int:
        _check_alpha(input.dtype, alpha)
    try:
        return np.add(input, _scaled(other, alpha))
    except ValueError as e:
        raise broadcast_error(e, input, other) from None


@add.defvjp
def _(grad, alpha):
    return grad, (grad if alpha == 1 else grad * alpha)


@add.defsymbolic
def _(s, input, other, alpha=1):
    a, b = s.operands(input, other)
    return a + alpha * b, lambda g: (g, alpha * g)


def _check_sub_bool(input, other) -> None:
    # sub_check (BinaryOps.cpp): on the operands' own dtypes, before promotion; a Python bool counts as bool
    if _is_bool(input) and _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
                           "or `logical_xor()` operator instead.")
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")


def _sub_forward(input, other, alpha=1):
    """``input - alpha * other`` with broadcasting and type promotion (torch.sub)."""
    if alpha != 1 or type(alpha) is not int:
        _check_alpha(input.dtype, alpha)
    try:
        return np.subtract(input, _scaled(other, alpha))
    except ValueError as e:
        raise broadcast_error(e, input, other) from None


_sub = op("sub", grad_fn="SubBackward0", inputs=2, public=False,
          note="d/dinput = 1, d/dother = -alpha",
          formula="input: grad; other: -alpha * grad",
          jvp="linear")(_sub_forward)  # the op behind sub (and ``a - b``)


@_sub.defvjp
def _(grad, alpha, needs_input_grad):
    if not needs_input_grad[1]:  # x - constant: no negation to compute
        return grad, None
    return grad, (-grad if alpha == 1 else -grad * alpha)


@_sub.defsymbolic
def _(s, input, other, alpha=1):
    a, b = s.operands(input, other)
    return a - alpha * b, lambda g: (g, -alpha * g)


@composite("sub", grad_fn="SubBackward0", note="d/dinput = 1, d/dother = -alpha", method=True, aliases=("subtract",),
           formula={"SubBackward1": "input: grad (other a number)"})
def sub(input, other, alpha=1):
    """``input - alpha * other`` with broadcasting and type promotion. Matches torch.sub.

    Raises:
        RuntimeError: for bool operands (PyTorch's messages), operands that do not broadcast, or a float
            ``alpha`` with integer tensors.
    """
    _check_sub_bool(input, other)
    return _sub(input, other, alpha)


def _rsub_forward(input, other, alpha=1):
    """``other - alpha * input`` (torch.rsub)."""
    if alpha != 1 or type(alpha) is not int:
        _check_alpha(input.dtype, alpha)
    try:
        return np.subtract(other, _scaled(input, alpha))
    except ValueError as e:
        raise broadcast_error(e, input, other) from None


def _rsub_rule(grad, alpha, needs_input_grad):
    if not needs_input_grad[0]:
        return None, grad
    return (-grad if alpha == 1 else -grad * alpha), grad


_RSUB_NOTE = "d/dinput = -alpha, d/dother = 1"
_rsub_tensor = op("rsub", grad_fn="RsubBackward0", inputs=2, public=False, note=_RSUB_NOTE,
                  formula="input: -alpha * grad; other: grad (result = other - alpha * input)",
                  jvp="linear")(_rsub_forward).defvjp(
    _rsub_rule)
_rsub_scalar = op("rsub", grad_fn="RsubBackward1", inputs=2, public=False, note=_RSUB_NOTE,
                  formula="input: -alpha * grad (other a number; result = other - alpha * input)"
, jvp="linear")(_rsub_forward).defvjp(
    _rsub_rule)


def _rsub_symbolic(s, input, other, alpha=1):
    a, b = s.operands(input, other)
    return b - alpha * a, lambda g: (-alpha * g, g)


_rsub_tensor.defsymbolic(_rsub_symbolic)
_rsub_scalar.defsymbolic(_rsub_symbolic)


@composite("rsub", grad_fn="RsubBackward0 (tensor other) | RsubBackward1 (number other)", note=_RSUB_NOTE)
def rsub(input, other, alpha=1):
    """``other - alpha * input``, what ``2 - x`` computes. Matches torch.rsub: grad_fn RsubBackward0 when
    ``other`` is a tensor, RsubBackward1 when it is a Python number.

    Raises:
        RuntimeError: for bool operands, operands that do not broadcast, or a float ``alpha`` with integers.
    """
    _check_sub_bool(input, other)
    if isinstance(other, (Tensor, np.ndarray)):
        return _rsub_tensor(input, other, alpha)
    return _rsub_scalar(input, other, alpha)


@op("mul", grad_fn="MulBackward0", inputs=2, method=True, aliases=("multiply",),
    note="d/dinput = other, d/dother = input", formula="input: grad * other; other: grad * input", jvp="elementwise")
def mul(input, other):
    """Elementwise product with broadcasting and type promotion. Matches torch.mul."""
    try:
        return np.multiply(input, other)
    except ValueError as e:
        raise broadcast_error(e, input, other) from None


@mul.defvjp
def _(grad, input, other, needs_input_grad):
    # only the products that are needed (x * constant is the common case)
    return grad * other if needs_input_grad[0] else None, grad * input if needs_input_grad[1] else None


@mul.defsymbolic
def _(s, input, other):
    a, b = s.elems(input, other)
    return a * b, lambda g: (g * b, g * a)


@op("true_divide", grad_fn="DivBackward0", inputs=2, promote="float", method=True,
    note="d/dinput = 1 / other, d/dother = -input / other^2",
    formula="input: grad / other; other: -grad * input / other^2", jvp="elementwise")
def true_divide(input, other):
    """True division with broadcasting; integer inputs give the default float dtype. Matches torch.true_divide
    (torch.div without rounding_mode)."""
    try:
        return np.true_divide(input, other)
    except ValueError as e:
        raise broadcast_error(e, input, other) from None


@true_divide.defvjp
def _(grad, input, other, needs_input_grad):
    # derivatives.yaml: self: grad / other; other: -grad * ((self / other) / other)
    return (grad / other if needs_input_grad[0] else None,
            -grad * ((input / other) / other) if needs_input_grad[1] else None)


@true_divide.defsymbolic
def _(s, input, other):
    a, b = s.elems(input, other)
    return a / b, lambda g: (g / b, -g * a / b ** 2)


_ROUNDING_MODES = (None, "trunc", "floor")


@op("div", grad_fn="DivBackward2", inputs=2, promote="float", public=False, note="as true_divide",
    formula="input: 0 with rounding_mode 'trunc' or 'floor', else grad / other; other: 0 or -grad * input / other^2",
    jvp="elementwise")
def _div_mode_none(input, other, rounding_mode):
    """True division through torch.div's rounding_mode overload (``rounding_mode=None`` given explicitly)."""
    return true_divide.forward(input, other)


@_div_mode_none.defvjp
def _(grad, input, other, needs_input_grad):
    return true_divide.vjp(grad, input, other, needs_input_grad)


@_div_mode_none.defsymbolic
def _(s, input, other, rounding_mode):
    return true_divide.symbolic(s, input, other)


@op("div", grad_fn="DivBackward2", inputs=2, public=False, note="d/dinput = d/dother = 0", jvp="elementwise")
def _div_rounding(input, other, rounding_mode):
    """Division rounded toward zero ("trunc") or down ("floor"), in the promoted dtype (integers stay
    integers), as torch.div(..., rounding_mode=...)."""
    if input.dtype.kind == "b":
        raise not_implemented_for(f"div_{rounding_mode}_cpu", input.dtype)
    try:
        np.broadcast_shapes(np.shape(input), np.shape(other))
    except ValueError as e:
        raise broadcast_error(e, input, other) from None
    if input.dtype.kind in "iu":
        if np.any(other == 0):
            raise RuntimeError("ZeroDivisionError")
        if rounding_mode == "floor":
            return np.floor_divide(input, other)
        q = np.floor_divide(input, other)
        # round toward zero: a negative quotient with a remainder is one too low
        return q + ((q < 0) & (q * other != input)).astype(q.dtype)
    if rounding_mode == "floor":
        return np.floor_divide(input, other)  # Python's float floor division, as PyTorch's div_floor
    return np.trunc(np.true_divide(input, other))


@_div_rounding.defvjp
def _(grad):
    # derivatives.yaml div.Tensor_mode: zeros for both inputs when rounding_mode is set
    return zeros_like_grad(grad), zeros_like_grad(grad)


class _NotGiven:
    """The default of div's rounding_mode: like None, but PyTorch records another grad_fn (DivBackward2) when
    rounding_mode=None is passed explicitly (its argument parser then picks the rounding_mode overload)."""

    def __repr__(self) -> str:
        return "None"


_NOT_GIVEN = _NotGiven()


@composite("div", grad_fn="DivBackward0 | DivBackward2 (rounding_mode given)", method=True, aliases=("divide",),
           note="d/dinput = 1 / other, d/dother = -input / other^2; zero with rounding_mode 'trunc'/'floor'")
def div(input, other, *, rounding_mode=_NOT_GIVEN):
    """``input / other`` with broadcasting. Matches torch.div: true division (integers give the default float
    dtype), or with ``rounding_mode`` "trunc" / "floor" the quotient rounded toward zero / down in the promoted
    dtype (integers stay integers), whose gradient is zero. grad_fn DivBackward0, or DivBackward2 whenever
    rounding_mode is given (also as None), as PyTorch records.

    Raises:
        RuntimeError: for an unknown rounding_mode, or integer division by zero with a rounding_mode.
        NotImplementedError: for bool tensors with a rounding_mode.
    """
    if rounding_mode is _NOT_GIVEN:
        return true_divide(input, other)
    if rounding_mode is None:
        return _div_mode_none(input, other, None)
    if rounding_mode not in _ROUNDING_MODES:
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    return _div_rounding(input, other, rounding_mode)


def _not_differentiable(aten: str):
    def rule(grad):
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")

    return rule


@op("floor_divide", grad_fn="NotImplemented", inputs=2, method=True,
    note="no derivative: backward raises, as in PyTorch",
    formula="no derivative (floor_divide): backward raises, as in PyTorch")
def floor_divide(input, other):
    """``input // other``: the quotient rounded down, in the promoted dtype (integers stay integers). Matches
    torch.floor_divide and Python's ``//`` on tensors: PyTorch records a grad_fn named NotImplemented whose
    backward fails, and so does gradcli.

    Raises:
        RuntimeError: for integer division by zero; NotImplementedError for bool tensors.
    """
    return _div_rounding.forward(input, other, "floor")


floor_divide.defvjp(_not_differentiable("floor_divide"))


def _remainder_forward(input, other):
    """The remainder of floor division, with the sign of ``other`` (Python's ``%``), as torch.remainder."""
    if input.dtype.kind == "b":
        raise not_implemented_for("remainder_cpu", input.dtype)
    try:
        np.broadcast_shapes(np.shape(input), np.shape(other))
    except ValueError as e:
        raise broadcast_error(e, input, other) from None
    if input.dtype.kind in "iu" and np.any(other == 0):
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.remainder(input, other)
        if out.dtype.kind != "f":
            return out
        # ATen's floating kernel: fmod, then ``+ other`` where the signs differ; the zeros keep fmod's sign (the
        # dividend's: remainder(-2., 2) is -0., remainder(3., -1.5) is 0.), where NumPy's take the divisor's
        mod = np.fmod(input, other, dtype=out.dtype)
        return np.where((mod != 0) & ((other < 0) != (mod < 0)), mod + other, mod).astype(out.dtype, copy=False)


_REMAINDER_NOTE = "d/dinput = 1, d/dother = -floor(input / other)"
_remainder_tensor = op("remainder", grad_fn="RemainderBackward1", inputs=2, public=False,
                       note=_REMAINDER_NOTE,
                       formula="input: grad; other: -grad * floor(input / other)",
                       jvp="elementwise")(_remainder_forward)
_remainder_scalar = op("remainder", grad_fn="RemainderBackward0", inputs=2, public=False,
                       note="d/dinput = 1", formula="input: grad (other a number)",
                       jvp="elementwise")(_remainder_forward)
_remainder_rscalar = op("remainder", grad_fn="NotImplemented", inputs=2, public=False,
                        note="no derivative (a number input)")(_remainder_forward)


@_remainder_tensor.defvjp
def _(grad, input, other, needs_input_grad):
    # derivatives.yaml remainder.Tensor: self: grad; other: -grad * self.div(other, rounding_mode="floor")
    return grad, (-grad * div(input, other, rounding_mode="floor") if needs_input_grad[1] else None)


@_remainder_scalar.defvjp
def _(grad):
    return grad, None


_remainder_rscalar.defvjp(_not_differentiable("remainder"))


@composite("remainder", grad_fn="RemainderBackward1 (tensor other) | RemainderBackward0 (number other)",
           method=True, note=_REMAINDER_NOTE)
def remainder(input, other):
    """``input - other * floor(input / other)``: the remainder with the sign of ``other`` (Python's ``%``), with
    broadcasting and type promotion. Matches torch.remainder (grad_fn RemainderBackward1 for a tensor ``other``,
    RemainderBackward0 for a number; a number ``input`` has no derivative, as in PyTorch).

    Raises:
        RuntimeError: for integer division by zero; NotImplementedError for bool tensors.
    """
    if isinstance(other, (Tensor, np.ndarray)):
        if not isinstance(input, (Tensor, np.ndarray)):
            return _remainder_rscalar(input, other)
        return _remainder_tensor(input, other)
    return _remainder_scalar(input, other)


def _fmod_forward(input, other):
    """The remainder of division rounded toward zero, with the sign of ``input`` (C's fmod), as torch.fmod."""
    if input.dtype.kind == "b":
        raise not_implemented_for("fmod_cpu", input.dtype)
    try:
        np.broadcast_shapes(np.shape(input), np.shape(other))
    except ValueError as e:
        raise broadcast_error(e, input, other) from None
    if input.dtype.kind in "iu" and np.asarray(other).dtype.kind in "iub" and np.any(np.asarray(other) == 0):
        raise RuntimeError("ZeroDivisionError")
    return np.fmod(input, other)


_FMOD_NOTE = "d/dinput = 1, d/dother = -trunc(input / other)"
_fmod_tensor = op("fmod", grad_fn="FmodBackward1", inputs=2, public=False, note=_FMOD_NOTE,
                  formula="input: grad; other: -grad * trunc(input / other)", jvp="elementwise")(_fmod_forward)
_fmod_scalar = op("fmod", grad_fn="FmodBackward0", inputs=2, public=False, note="d/dinput = 1",
                  formula="input: grad (other a number)", jvp="elementwise")(_fmod_forward)


@_fmod_tensor.defvjp
def _(grad, input, other, needs_input_grad):
    # derivatives.yaml fmod.Tensor: self: grad; other: -grad * self.div(other, rounding_mode="trunc")
    return grad, (-grad * div(input, other, rounding_mode="trunc") if needs_input_grad[1] else None)


@_fmod_scalar.defvjp
def _(grad):
    return grad, None  # derivatives.yaml fmod.Scalar: self: grad


@composite("fmod", grad_fn="FmodBackward1 (tensor other) | FmodBackward0 (number other)", method=True,
           note=_FMOD_NOTE)
def fmod(input, other):
    """``input - other * trunc(input / other)``: the remainder with the sign of ``input`` (C's fmod), with
    broadcasting and type promotion. Matches torch.fmod (grad_fn FmodBackward1 for a tensor ``other``,
    FmodBackward0 for a number).

    Raises:
        TypeError: for a Python number ``input`` or an ``other`` that is neither a tensor nor a number (PyTorch's
            message: torch.fmod has no such overload).
        RuntimeError: for integer division by zero; NotImplementedError for bool tensors.
    """
    if not isinstance(input, (Tensor, np.ndarray)) or not isinstance(
            other, (Tensor, np.ndarray, np.generic, bool, int, float)):
        got = ", ".join("Tensor" if isinstance(v, (Tensor, np.ndarray)) else type(v).__name__ for v in (input, other))
        raise TypeError(f"fmod() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        " * (Tensor input, Number other, *, Tensor out = None)\n")
    if isinstance(other, (Tensor, np.ndarray)):
        return _fmod_tensor(input, other)
    return _fmod_scalar(input, other)


# ----------------------------------------------------------------------------------------------- powers
# pow's overload for a number exponent (PowBackward0) is unary.pow_scalar: the unary rules use it too.


@op("pow", grad_fn="PowBackward1", inputs=2, public=False,
    note="d/dinput = exponent * input^(exponent-1), d/dexponent = result * log(input)",
    formula="input: grad * exponent * input^(exponent - 1); exponent: grad * result * ln(input)", jvp="elementwise")
def _pow_tensor(input, exponent):
    """``input ** exponent`` elementwise for a tensor exponent (torch.pow, Tensor_Tensor overload)."""
    try:
        return np.power(input, exponent)
    except ValueError as e:
        raise broadcast_error(e, input, exponent) from None


@_pow_tensor.defvjp
def _(grad, input, exponent, result, needs_input_grad):
    gi = ge = None
    if needs_input_grad[0]:
        gi = where(exponent == 0, 0.0, grad * (exponent * _pow_tensor(input, exponent - 1)))
    if needs_input_grad[1]:
        # pow_backward_exponent: grad multiplies the masked factor, so a nan gradient stays nan (as PyTorch)
        ge = grad * where((input == 0) & (exponent >= 0), 0.0, result * log(input))
    return gi, ge


@_pow_tensor.defsymbolic
def _(s, input, exponent):
    a, b = s.elems(input, exponent)
    return a ** b, lambda g: (g * b * a ** (b - 1), g * a ** b * s.log(a))


@op("pow", grad_fn="PowBackward2", inputs=2, public=False, note="d/dexponent = result * log(input)",
    formula="exponent: grad * result * ln(input) (input a number)", jvp="elementwise")
def _pow_rscalar(input, exponent):
    """``input ** exponent`` where ``input`` was a Python number (``2 ** x``)."""
    return np.power(input, exponent)


@_pow_rscalar.defvjp
def _(grad, input, exponent, result):
    return None, grad * where((input == 0) & (exponent >= 0), 0.0, result * log(input))


@_pow_rscalar.defsymbolic
def _(s, input, exponent):
    a, b = s.elems(input, exponent)
    return a ** b, lambda g: (None, g * a ** b * s.log(a))


@composite("pow", method=True,
           grad_fn="PowBackward0 (number exponent) | PowBackward1 (tensor exponent) | PowBackward2 (number base)",
           note="d/dinput = exponent * input^(exponent-1), d/dexponent = result * log(input)")
def pow(input, exponent):
    """``input ** exponent`` with broadcasting; either may be a Python number. Matches torch.pow
    (grad_fn PowBackward0 for a number exponent, PowBackward1 for a tensor, PowBackward2 for a number base).

    Raises:
        RuntimeError: for integer tensors to negative integer powers.
    """
    if isinstance(exponent, Tensor) or isinstance(exponent, np.ndarray):
        if not isinstance(input, (Tensor, np.ndarray)):
            return _pow_rscalar(input, exponent)
        return _pow_tensor(input, exponent)
    if isinstance(exponent, (list, tuple)):
        return _pow_tensor(input, to_tensor(exponent))
    if type(input) is Tensor:
        d = dtypes.result_type([input.data.dtype] if input.data.ndim else [],
                               [] if input.data.ndim else [input.data.dtype], [exponent])
        if d != input.data.dtype:
            input = input.to(d)
    return pow_scalar(input, exponent)


@composite("square", grad_fn="PowBackward0", note="d/dx = 2 * x", method=True)
def square(input):
    """``input * input``, computed as ``pow(input, 2)`` (grad_fn PowBackward0; bool gives int64). Matches
    torch.square."""
    return pow(input, 2)


# ------------------------------------------------------------------------------ clamp, maximum, minimum

_CLAMP_NOTE = ("d/dinput = 1 where min <= input <= max (1 at the bounds), else 0; d/dmin, d/dmax = 1 where that "
               "bound is the result")
_MAXIMUM_NOTE = "d/dinput = 1 where input > other, 1/2 on ties, else 0 (and symmetrically for other)"
_MINIMUM_NOTE = "d/dinput = 1 where input < other, 1/2 on ties, else 0 (and symmetrically for other)"


@op("clamp", grad_fn="ClampBackward1", promote=None, public=False, note=_CLAMP_NOTE,
    formula="input: grad where min <= input <= max (at the bounds too), else 0", kinks="clamp", jvp="elementwise")
def _clamp_scalar(input, min, max):
    """``input`` limited to [min, max] by Python-number bounds (either None), torch.clamp's Scalar overload."""
    out = input
    if min is not None:
        out = np.maximum(out, min)
    if max is not None:
        out = np.minimum(out, max)
    return out.astype(input.dtype, copy=False)


@_clamp_scalar.defvjp
def _(grad, input, min, max):
    # clamp_backward (FunctionsManual.cpp): the subgradient 1 at the bounds
    if min is not None and max is not None:
        return where((input >= min) & (input <= max), grad, 0.0)
    if min is not None:
        return where(input >= min, grad, 0.0)
    return where(input <= max, grad, 0.0)


@op("clamp", grad_fn="ClampBackward0", inputs=3, public=False, note=_CLAMP_NOTE,
    formula="input: grad where min <= input <= max, else 0; min: grad where result = min; max: grad where result = "
            "max", kinks="clamp", jvp="elementwise")
def _clamp_tensor(input, min, max):
    """``input`` limited to [min, max] by tensor bounds (either None), broadcasting all three, torch.clamp's
    Tensor overload."""
    out = input
    try:
        if min is not None:
            out = np.maximum(out, min)
        if max is not None:
            out = np.minimum(out, max)
    except ValueError as e:
        raise broadcast_error(e, input, min, max) from None
    return out


@_clamp_tensor.defvjp
def _(grad, input, min, max, needs_input_grad):
    # clamp_backward_min_max (FunctionsManual.cpp)
    gi = gmin = gmax = None
    if min is not None and max is not None:
        if needs_input_grad[0]:
            gi = where((input >= min) & (input <= max), grad, 0.0)
        if needs_input_grad[1]:
            gmin = where((input < min) & (min < max), grad, 0.0)
        if needs_input_grad[2]:
            gmax = where((input > max) | (max < min), grad, 0.0)
    elif min is not None:
        gi = where(input >= min, grad, 0.0) if needs_input_grad[0] else None
        gmin = where(input < min, grad, 0.0) if needs_input_grad[1] else None
    else:
        gi = where(input <= max, grad, 0.0) if needs_input_grad[0] else None
        gmax = where(input > max, grad, 0.0) if needs_input_grad[2] else None
    return gi, gmin, gmax


@composite("clamp", grad_fn="ClampBackward1 (number bounds) | ClampBackward0 (tensor bounds)", method=True,
           aliases=("clip",), note=_CLAMP_NOTE)
def clamp(input, min=None, max=None):
    """``input`` limited to ``[min, max]`` elementwise: ``minimum(maximum(input, min), max)``, so ``max`` wins
    when ``min > max``; nan stays nan. Bounds are both Python numbers (grad_fn ClampBackward1) or both tensors
    that broadcast with ``input`` (ClampBackward0; they get gradients too); either may be None. The result dtype
    follows PyTorch's promotion (an int tensor clamped by 0.5 is float). Matches torch.clamp (alias clip); the
    gradient of ``input`` is 1 at the bounds.

    Raises:
        RuntimeError: if both bounds are None (PyTorch's message).
        TypeError: for a tensor bound mixed with a number bound.
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    kinds = {isinstance(b, (Tensor, np.ndarray)) for b in (min, max) if b is not None}
    if len(kinds) == 2 or any(b is not None and not isinstance(b, (Tensor, np.ndarray, bool, int, float,
                                                                    np.generic)) for b in (min, max)):
        got = ", ".join(["Tensor"] + [f"{n}={type(b).__name__ if not isinstance(b, Tensor) else 'Tensor'}"
                                      for n, b in (("min", min), ("max", max)) if b is not None])
        raise TypeError(f"clamp() received an invalid combination of arguments - got ({got}), but expected one "
                        "of:\n * (Tensor input, Tensor min = None, Tensor max = None)\n * (Tensor input, Number min "
                        "= None, Number max = None)")
    if kinds == {True}:
        return _clamp_tensor(input, min, max)
    if type(input) is Tensor:
        d = dtypes.result_type([input.data.dtype] if input.data.ndim else [],
                               [] if input.data.ndim else [input.data.dtype], [b for b in (min, max) if b is not None])
        if d != input.data.dtype:
            input = input.to(d)
    return _clamp_scalar(input, min, max)


def _max_min_rule(input, other, grad, needs_input_grad, loses_input, loses_other):
    # derivatives.yaml maximum/minimum: where(self == other, grad / 2, grad).masked_fill_(loses, 0): ties split
    # the gradient in half; with a nan operand both get the whole gradient.
    shared = where(input == other, grad / 2, grad)
    return (where(loses_input, 0.0, shared) if needs_input_grad[0] else None,
            where(loses_other, 0.0, shared) if needs_input_grad[1] else None)


@op("maximum", grad_fn="MaximumBackward0", inputs=2, public=False, note=_MAXIMUM_NOTE,
    formula="input: grad where input > other, grad / 2 where input = other, else 0; other: the same with input and "
            "other swapped", kinks="maximum", jvp="elementwise")
def _maximum(input, other):
    """The elementwise larger value, nan if either is nan (torch.maximum)."""
    try:
        return np.maximum(input, other)
    except ValueError as e:
        raise broadcast_error(e, input, other) from None


@_maximum.defvjp
def _(grad, input, other, needs_input_grad):
    return _max_min_rule(input, other, grad, needs_input_grad, input < other, input > other)


@op("minimum", grad_fn="MinimumBackward0", inputs=2, public=False, note=_MINIMUM_NOTE,
    formula="input: grad where input < other, grad / 2 where input = other, else 0; other: the same with input and "
            "other swapped", kinks="minimum", jvp="elementwise")
def _minimum(input, other):
    """The elementwise smaller value, nan if either is nan (torch.minimum)."""
    try:
        return np.minimum(input, other)
    except ValueError as e:
        raise broadcast_error(e, input, other) from None


@_minimum.defvjp
def _(grad, input, other, needs_input_grad):
    return _max_min_rule(input, other, grad, needs_input_grad, input > other, input < other)


@composite("maximum", grad_fn="MaximumBackward0", method=True, note=_MAXIMUM_NOTE)
def maximum(input, other):
    """The elementwise maximum of two tensors, with broadcasting and type promotion; nan propagates. Matches
    torch.maximum: on ties each input gets half of the gradient.

    Raises:
        TypeError: for a Python number argument (PyTorch's message).
    """
    require_tensors("maximum", input=input, other=other)
    return _maximum(input, other)


@composite("minimum", grad_fn="MinimumBackward0", method=True, note=_MINIMUM_NOTE)
def minimum(input, other):
    """The elementwise minimum of two tensors, with broadcasting and type promotion; nan propagates. Matches
    torch.minimum: on ties each input gets half of the gradient.

    Raises:
        TypeError: for a Python number argument (PyTorch's message).
    """
    require_tensors("minimum", input=input, other=other)
    return _minimum(input, other)


# ----------------------------------------------------------------------------------------- forward mode
# derivatives.yaml: add, sub, rsub are auto_linear; mul (other_t * self_p + self_t * other_p), div, remainder,
# fmod (self_t - other_t * self_p.div(other_p, "trunc")), pow, clamp, maximum and minimum are elementwise: their
# tangents are their VJP rules applied to the tangents
# (maximum: 1/2 of each tangent on ties, as derivatives.yaml's where(self_p == other_p, 0.5, ...)).
floor_divide.defjvp_unsupported("floor_divide")
_remainder_rscalar.defjvp_unsupported("remainder")

"""Elementwise ops: arithmetic, powers, exponentials and logarithms, trigonometry, kinks (abs, sign, clamp,
maximum, minimum), selection, comparisons, dtype casts. Activations (relu, gelu, ...) are in :mod:`.activation`.

Each op is its forward (numpy, broadcasting as PyTorch does) and, right below, its derivative. Formulas and
their evaluation order follow PyTorch's tools/autograd/derivatives.yaml, FunctionsManual.cpp and the CPU
kernels (aten/src/ATen/native/cpu/BinaryOpsKernel.cpp, UnaryOpsKernel.cpp), so float32 results agree with
PyTorch to rounding. Rules never unbroadcast: the engine sums each gradient back to its input's shape.

Where PyTorch dispatches one Python name to several ATen overloads with different ``grad_fn`` names
(``pow``, ``rsub``, ``div``, ``clamp``), the public name is a function that picks one of several ops, as
PyTorch's argument parser does; such functions carry ``grad_fn`` and ``note`` attributes for ``gradcli ops``.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from ._core import Op, install_method, op, register

_LN2 = 0.6931471805599453  # M_LN2, as in derivatives.yaml
_LN10 = 2.3025850929940456  # M_LN10
_TWO_OVER_SQRT_PI = 1.1283791670955126  # M_2_SQRTPI

#: PyTorch's ScalarType names, used in its error messages ("... not implemented for 'Long'").
_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "uint8": "Byte", "int8": "Char",
               "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool"}


def scalar_type_name(dtype) -> str:
    """PyTorch's ScalarType name of a numpy dtype (``int64`` -> ``"Long"``), as its error messages print it."""
    return _TYPE_NAMES.get(np.dtype(dtype).name, np.dtype(dtype).name)


def not_implemented_for(kernel: str, dtype) -> NotImplementedError:
    """PyTorch's dispatch error for a dtype a kernel lacks: ``"relu_cpu" not implemented for 'Bool'``."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_type_name(dtype)}'")


def infer_size(*shapes) -> tuple:
    """The broadcast shape of ``shapes``, folded left to right as PyTorch's TensorIterator does.

    Raises:
        RuntimeError: PyTorch's "The size of tensor a (3) must match the size of tensor b (4) at non-singleton
            dimension 0" for the first pair that does not broadcast.
    """
    acc = ()
    for shape in shapes:
        ndim = max(len(acc), len(shape))
        out = [0] * ndim
        for i in range(ndim - 1, -1, -1):
            offset = ndim - 1 - i
            da, db = len(acc) - 1 - offset, len(shape) - 1 - offset
            sa = acc[da] if da >= 0 else 1
            sb = shape[db] if db >= 0 else 1
            if sa != sb and sa != 1 and sb != 1:
                raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                                   f"non-singleton dimension {i}")
            out[i] = sb if sa == 1 else sa
        acc = tuple(out)
    return acc


def _size_error(error: ValueError, *arrays) -> Exception:
    """PyTorch's error for operands that do not broadcast (numpy's ValueError otherwise unchanged)."""
    try:
        infer_size(*(np.shape(a) for a in arrays if a is not None))
    except RuntimeError as e:
        return e
    return error


def _zeros(grad):
    """Zeros shaped like ``grad`` (PyTorch's ``zeros_like(grad)``: zero even where ``grad`` is inf or nan);
    a constant Tensor when ``grad`` is a Tensor (create_graph)."""
    if isinstance(grad, Tensor):
        return Tensor(np.zeros_like(grad.data))
    return np.zeros_like(grad)


def _require_tensors(name: str, **args) -> None:
    """PyTorch's argument check for ops without a Python-number overload (``torch.maximum(x, 1.0)``)."""
    for i, (arg, v) in enumerate(args.items()):
        if not isinstance(v, (Tensor, np.ndarray, np.generic)):
            raise TypeError(f"{name}(): argument '{arg}' (position {i + 1}) must be Tensor, not {type(v).__name__}")


def _is_bool(v) -> bool:
    if isinstance(v, Tensor):
        return v.data.dtype.kind == "b"
    if isinstance(v, (np.ndarray, np.generic)):
        return v.dtype.kind == "b"
    return isinstance(v, bool)


def public(*, grad_fn: str, note: str, name: str | None = None, method: bool = False, aliases: tuple = ()):
    """Register a function that dispatches to ops (decorator): the namespace entry, Tensor method and aliases,
    with ``grad_fn`` and ``note`` attributes for ``gradcli ops`` (as :func:`~._core.op` does for an Op)."""
    def wrap(fn):
        fn.grad_fn = grad_fn
        fn.note = note
        for n in (name or fn.__name__,) + tuple(aliases):
            register(n, fn, "op")
            if method:
                install_method(n, fn)
        return fn

    return wrap


def dispatched(grad_fn: str, *, inputs: int = 1, promote: str | None = "same", name: str):
    """Declare an op that a public function dispatches to (decorator): like :func:`~._core.op`, but not in the
    namespace; ``name`` is the public function's, as PyTorch names it in messages."""
    return lambda forward: Op(forward, grad_fn=grad_fn, inputs=inputs, promote=promote, name=name)


def _check_alpha(dtype, alpha) -> None:
    # alpha_check (BinaryOps.cpp), on the computation dtype
    if isinstance(alpha, (bool, np.bool_)) and dtype.kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dtype.kind != "f" and isinstance(alpha, (float, np.floating)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _scaled(other, alpha):
    return other if alpha == 1 else np.multiply(other, alpha)


# ------------------------------------------------------------------------------------------ arithmetic


@op("AddBackward0", inputs=2, method=True, note="d/dinput = 1, d/dother = alpha")
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
        raise _size_error(e, input, other) from None


@add.defvjp
def _(grad, alpha):
    return grad, (grad if alpha == 1 else grad * alpha)


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
        raise _size_error(e, input, other) from None


_sub = dispatched("SubBackward0", inputs=2, name="sub")(_sub_forward)


@_sub.defvjp
def _(grad, alpha, needs_input_grad):
    if not needs_input_grad[1]:  # x - constant: no negation to compute
        return grad, None
    return grad, (-grad if alpha == 1 else -grad * alpha)


@public(grad_fn="SubBackward0", note="d/dinput = 1, d/dother = -alpha", method=True, aliases=("subtract",))
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
        raise _size_error(e, input, other) from None


def _rsub_rule(grad, alpha, needs_input_grad):
    if not needs_input_grad[0]:
        return None, grad
    return (-grad if alpha == 1 else -grad * alpha), grad


_rsub_tensor = dispatched("RsubBackward0", inputs=2, name="rsub")(_rsub_forward).defvjp(_rsub_rule)
_rsub_scalar = dispatched("RsubBackward1", inputs=2, name="rsub")(_rsub_forward).defvjp(_rsub_rule)


@public(grad_fn="RsubBackward0 (tensor other) | RsubBackward1 (number other)",
        note="d/dinput = -alpha, d/dother = 1")
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


@op("MulBackward0", inputs=2, method=True, aliases=("multiply",),
    note="d/dinput = other, d/dother = input")
def mul(input, other):
    """Elementwise product with broadcasting and type promotion. Matches torch.mul."""
    try:
        return np.multiply(input, other)
    except ValueError as e:
        raise _size_error(e, input, other) from None


@mul.defvjp
def _(grad, input, other, needs_input_grad):
    # only the products that are needed (x * constant is the common case)
    return grad * other if needs_input_grad[0] else None, grad * input if needs_input_grad[1] else None


@op("DivBackward0", inputs=2, promote="float", method=True, name="true_divide",
    note="d/dinput = 1 / other, d/dother = -input / other^2")
def true_divide(input, other):
    """True division with broadcasting; integer inputs give the default float dtype. Matches torch.true_divide
    (torch.div without rounding_mode)."""
    try:
        return np.true_divide(input, other)
    except ValueError as e:
        raise _size_error(e, input, other) from None


@true_divide.defvjp
def _(grad, input, other, needs_input_grad):
    # derivatives.yaml: self: grad / other; other: -grad * ((self / other) / other)
    return (grad / other if needs_input_grad[0] else None,
            -grad * ((input / other) / other) if needs_input_grad[1] else None)


_ROUNDING_MODES = (None, "trunc", "floor")


@dispatched("DivBackward2", inputs=2, promote="float", name="div")
def _div_mode_none(input, other, rounding_mode):
    """True division through torch.div's rounding_mode overload (``rounding_mode=None`` given explicitly)."""
    return true_divide.forward(input, other)


@_div_mode_none.defvjp
def _(grad, input, other, needs_input_grad):
    return true_divide.vjp(grad, input, other, needs_input_grad)


@dispatched("DivBackward2", inputs=2, name="div")
def _div_rounding(input, other, rounding_mode):
    """Division rounded toward zero ("trunc") or down ("floor"), in the promoted dtype (integers stay
    integers), as torch.div(..., rounding_mode=...)."""
    if input.dtype.kind == "b":
        raise not_implemented_for(f"div_{rounding_mode}_cpu", input.dtype)
    try:
        np.broadcast_shapes(np.shape(input), np.shape(other))
    except ValueError as e:
        raise _size_error(e, input, other) from None
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
    return _zeros(grad), _zeros(grad)


class _NotGiven:
    """The default of div's rounding_mode: like None, but PyTorch records another grad_fn (DivBackward2) when
    rounding_mode=None is passed explicitly (its argument parser then picks the rounding_mode overload)."""

    def __repr__(self) -> str:
        return "None"


_NOT_GIVEN = _NotGiven()


@public(grad_fn="DivBackward0 | DivBackward2 (rounding_mode given)", method=True, aliases=("divide",),
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


@op("NotImplemented", inputs=2, method=True, note="no derivative: backward raises, as in PyTorch")
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
        raise _size_error(e, input, other) from None
    if input.dtype.kind in "iu" and np.any(other == 0):
        raise RuntimeError("ZeroDivisionError")
    return np.remainder(input, other)


_remainder_tensor = dispatched("RemainderBackward1", inputs=2, name="remainder")(_remainder_forward)
_remainder_scalar = dispatched("RemainderBackward0", inputs=2, name="remainder")(_remainder_forward)
_remainder_rscalar = dispatched("NotImplemented", inputs=2, name="remainder")(_remainder_forward)


@_remainder_tensor.defvjp
def _(grad, input, other, needs_input_grad):
    # derivatives.yaml remainder.Tensor: self: grad; other: -grad * self.div(other, rounding_mode="floor")
    return grad, (-grad * div(input, other, rounding_mode="floor") if needs_input_grad[1] else None)


@_remainder_scalar.defvjp
def _(grad):
    return grad, None


_remainder_rscalar.defvjp(_not_differentiable("remainder"))


@public(grad_fn="RemainderBackward1 (tensor other) | RemainderBackward0 (number other)", method=True,
        note="d/dinput = 1, d/dother = -floor(input / other)")
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


@op("NegBackward0", method=True, aliases=("negative",), note="d/dx = -1")
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


@op("ReciprocalBackward0", promote="float", method=True, note="d/dx = -1 / x^2 = -result^2")
def reciprocal(input):
    """``1 / input``; integers give the default float dtype. Matches torch.reciprocal."""
    return np.reciprocal(input)


@reciprocal.defvjp
def _(grad, result):
    return -grad * (result * result)


# ----------------------------------------------------------------------------------------------- powers


@dispatched("PowBackward0", promote=None, name="pow")
def _pow_scalar(input, exponent):
    """``input ** exponent`` for a Python-number exponent (torch.pow, Tensor_Scalar overload), in the dtype
    PyTorch's promotion gives (bool ** 2 is int64, int ** 2.5 the default float)."""
    if input.dtype.kind in "iub" and isinstance(exponent, (int, np.integer)) and not isinstance(exponent, bool) \
            and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return np.power(input, input.dtype.type(exponent) if input.dtype.kind == "f" else exponent)


@_pow_scalar.defvjp
def _(grad, input, exponent):
    # derivatives.yaml pow_backward: zeros for exponent 0, else grad * (exponent * self.pow(exponent - 1)).
    if exponent == 0:
        return _zeros(grad)
    return grad * (exponent * _pow_scalar(input, exponent - 1))


@dispatched("PowBackward1", inputs=2, name="pow")
def _pow_tensor(input, exponent):
    """``input ** exponent`` elementwise for a tensor exponent (torch.pow, Tensor_Tensor overload)."""
    try:
        return np.power(input, exponent)
    except ValueError as e:
        raise _size_error(e, input, exponent) from None


@_pow_tensor.defvjp
def _(grad, input, exponent, result, needs_input_grad):
    gi = ge = None
    if needs_input_grad[0]:
        gi = where(exponent == 0, 0.0, grad * (exponent * _pow_tensor(input, exponent - 1)))
    if needs_input_grad[1]:
        # pow_backward_exponent: grad multiplies the masked factor, so a nan gradient stays nan (as PyTorch)
        ge = grad * where((input == 0) & (exponent >= 0), 0.0, result * log(input))
    return gi, ge


@dispatched("PowBackward2", inputs=2, name="pow")
def _pow_rscalar(input, exponent):
    """``input ** exponent`` where ``input`` was a Python number (``2 ** x``)."""
    return np.power(input, exponent)


@_pow_rscalar.defvjp
def _(grad, input, exponent, result):
    return None, grad * where((input == 0) & (exponent >= 0), 0.0, result * log(input))


@public(grad_fn="PowBackward0 (number exponent) | PowBackward1 (tensor exponent) | PowBackward2 (number base)",
        note="d/dinput = exponent * input^(exponent-1), d/dexponent = result * log(input)", method=True)
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
        from ._core import to_tensor

        return _pow_tensor(input, to_tensor(exponent))
    if type(input) is Tensor:
        d = dtypes.result_type([input.data.dtype] if input.data.ndim else [],
                               [] if input.data.ndim else [input.data.dtype], [exponent])
        if d != input.data.dtype:
            input = input.to(d)
    return _pow_scalar(input, exponent)


@public(grad_fn="PowBackward0", note="d/dx = 2 * x", method=True)
def square(input):
    """``input * input``, computed as ``pow(input, 2)`` (grad_fn PowBackward0; bool gives int64). Matches
    torch.square."""
    return pow(input, 2)


@op("SqrtBackward0", promote="float", method=True, note="d/dx = 1 / (2 * result); inf at 0")
def sqrt(input):
    """Square root (nan below 0); integers give the default float dtype. Matches torch.sqrt."""
    return np.sqrt(input)


@sqrt.defvjp
def _(grad, result):
    return grad / (2 * result)


@op("RsqrtBackward0", promote="float", method=True, note="d/dx = -0.5 * result^3")
def rsqrt(input):
    """``1 / sqrt(input)`` (inf at 0, nan below); integers give the default float dtype. Matches torch.rsqrt."""
    one = input.dtype.type(1)
    return one / np.sqrt(input)


@rsqrt.defvjp
def _(grad, result):
    # derivatives.yaml: -0.5 * grad * result.pow(3)
    return -0.5 * grad * _pow_scalar(result, 3)


# ------------------------------------------------------------------------------------------ exp and log


@op("ExpBackward0", promote="float", method=True, note="d/dx = result")
def exp(input):
    """``e ** input``; integers give the default float dtype. Matches torch.exp."""
    return np.exp(input)


@exp.defvjp
def _(grad, result):
    return grad * result


@op("Exp2Backward0", promote="float", method=True, note="d/dx = result * ln 2")
def exp2(input):
    """``2 ** input``; integers give the default float dtype. Matches torch.exp2."""
    return np.exp2(input)


@exp2.defvjp
def _(grad, result):
    return grad * result * _LN2


@op("Expm1Backward0", promote="float", method=True, note="d/dx = result + 1")
def expm1(input):
    """``exp(input) - 1``, accurate near 0; integers give the default float dtype. Matches torch.expm1."""
    return np.expm1(input)


@expm1.defvjp
def _(grad, result):
    return grad * (result + 1)


@op("LogBackward0", promote="float", method=True, note="d/dx = 1 / x")
def log(input):
    """Natural logarithm (nan below 0, -inf at 0); integers give the default float dtype. Matches torch.log."""
    return np.log(input)


@log.defvjp
def _(grad, input):
    return grad / input


@op("Log2Backward0", promote="float", method=True, note="d/dx = 1 / (x * ln 2)")
def log2(input):
    """Base-2 logarithm; integers give the default float dtype. Matches torch.log2."""
    return np.log2(input)


@log2.defvjp
def _(grad, input):
    return grad / (input * _LN2)


@op("Log10Backward0", promote="float", method=True, note="d/dx = 1 / (x * ln 10)")
def log10(input):
    """Base-10 logarithm; integers give the default float dtype. Matches torch.log10."""
    return np.log10(input)


@log10.defvjp
def _(grad, input):
    return grad / (input * _LN10)


@op("Log1PBackward0", promote="float", method=True, note="d/dx = 1 / (x + 1)")
def log1p(input):
    """``log(1 + input)``, accurate near 0 (nan below -1); integers give the default float dtype. Matches
    torch.log1p."""
    return np.log1p(input)


@log1p.defvjp
def _(grad, input):
    # log1p_backward (FunctionsManual.cpp)
    return grad / (input + 1)


# -------------------------------------------------------------------------------------------------- trig


@op("SinBackward0", promote="float", method=True, note="d/dx = cos(x)")
def sin(input):
    """Sine (radians). Matches torch.sin."""
    return np.sin(input)


@sin.defvjp
def _(grad, input):
    return grad * cos(input)


@op("CosBackward0", promote="float", method=True, note="d/dx = -sin(x)")
def cos(input):
    """Cosine (radians). Matches torch.cos."""
    return np.cos(input)


@cos.defvjp
def _(grad, input):
    return grad * -sin(input)


@op("TanBackward0", promote="float", method=True, note="d/dx = 1 + result^2")
def tan(input):
    """Tangent (radians). Matches torch.tan."""
    return np.tan(input)


@tan.defvjp
def _(grad, result):
    return grad * (1 + _pow_scalar(result, 2))


@op("AsinBackward0", promote="float", method=True, aliases=("arcsin",), note="d/dx = 1 / sqrt(1 - x^2)")
def asin(input):
    """Inverse sine (nan outside [-1, 1]). Matches torch.asin (alias arcsin)."""
    return np.arcsin(input)


@asin.defvjp
def _(grad, input):
    return grad * rsqrt(-input * input + 1)


@op("AcosBackward0", promote="float", method=True, aliases=("arccos",), note="d/dx = -1 / sqrt(1 - x^2)")
def acos(input):
    """Inverse cosine (nan outside [-1, 1]). Matches torch.acos (alias arccos)."""
    return np.arccos(input)


@acos.defvjp
def _(grad, input):
    return grad * -rsqrt(-input * input + 1)


@op("AtanBackward0", promote="float", method=True, aliases=("arctan",), note="d/dx = 1 / (1 + x^2)")
def atan(input):
    """Inverse tangent. Matches torch.atan (alias arctan)."""
    return np.arctan(input)


@atan.defvjp
def _(grad, input):
    return grad / (input * input + 1)


@dispatched("Atan2Backward0", inputs=2, promote="float", name="atan2")
def _atan2(input, other):
    """The angle of the point (other, input), in (-pi, pi] (torch.atan2)."""
    try:
        return np.arctan2(input, other)
    except ValueError as e:
        raise _size_error(e, input, other) from None


@_atan2.defvjp
def _(grad, input, other, needs_input_grad):
    # atan2_backward (FunctionsManual.cpp): recip = 1 / (self^2 + other^2), 0 where that is 0 (the origin)
    denom = input * input + other * other
    recip = where(denom == 0, 0.0, reciprocal(denom))
    return (grad * other * recip if needs_input_grad[0] else None,
            grad * -input * recip if needs_input_grad[1] else None)


@public(grad_fn="Atan2Backward0", note="d/dinput = other / (input^2 + other^2), d/dother = -input / (...)",
        method=True, aliases=("arctan2",))
def atan2(input, other):
    """Elementwise ``atan(input / other)`` in the right quadrant, with broadcasting; integers give the default
    float dtype. Matches torch.atan2 (alias arctan2); both arguments must be tensors.

    Raises:
        TypeError: for a Python number argument (PyTorch's message).
    """
    _require_tensors("atan2", input=input, other=other)
    return _atan2(input, other)


@op("SinhBackward0", promote="float", method=True, note="d/dx = cosh(x)")
def sinh(input):
    """Hyperbolic sine. Matches torch.sinh."""
    return np.sinh(input)


@sinh.defvjp
def _(grad, input):
    return grad * cosh(input)


@op("CoshBackward0", promote="float", method=True, note="d/dx = sinh(x)")
def cosh(input):
    """Hyperbolic cosine. Matches torch.cosh."""
    return np.cosh(input)


@cosh.defvjp
def _(grad, input):
    return grad * sinh(input)


@op("TanhBackward0", promote="float", method=True, note="d/dx = 1 - result^2")
def tanh(input):
    """Hyperbolic tangent. Matches torch.tanh."""
    return np.tanh(input)


@tanh.defvjp
def _(grad, result):
    # tanh_backward (BinaryOpsKernel.cpp): grad * (1 - y * y)
    return grad * (1 - result * result)


@op("SigmoidBackward0", promote="float", method=True, note="d/dx = result * (1 - result)")
def sigmoid(input):
    """Logistic function ``1 / (1 + exp(-input))``. Matches torch.sigmoid."""
    one = input.dtype.type(1)
    return one / (one + np.exp(-input))


@sigmoid.defvjp
def _(grad, result):
    # sigmoid_backward (BinaryOpsKernel.cpp): grad * (1 - y) * y
    return grad * (1 - result) * result


_erf_f64 = np.vectorize(math.erf, otypes=[np.float64])


@op("ErfBackward0", promote="float", method=True, note="d/dx = 2 / sqrt(pi) * exp(-x^2)")
def erf(input):
    """The error function ``2 / sqrt(pi) * integral_0^x exp(-t^2) dt`` (C's erf, computed in float64 and
    rounded to the input's dtype). Matches torch.erf."""
    return _erf_f64(input).astype(input.dtype, copy=False)


@erf.defvjp
def _(grad, input):
    # derivatives.yaml: 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad
    return _TWO_OVER_SQRT_PI * exp(-_pow_scalar(input, 2)) * grad


# ------------------------------------------------------------------------------------- kinks: abs, sign


@op("AbsBackward0", method=True, aliases=("absolute",), note="d/dx = sign(x); 0 at 0")
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


@op("SignBackward0", method=True, note="d/dx = 0")
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
    return _zeros(grad)


# ------------------------------------------------------------------------------ clamp, maximum, minimum


@dispatched("ClampBackward1", promote=None, name="clamp")
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


@dispatched("ClampBackward0", inputs=3, name="clamp")
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
        raise _size_error(e, input, min, max) from None
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


@public(grad_fn="ClampBackward1 (number bounds) | ClampBackward0 (tensor bounds)", method=True,
        aliases=("clip",), note="d/dinput = 1 where min <= input <= max (1 at the bounds), else 0; "
                               "d/dmin, d/dmax = 1 where that bound is the result")
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


@dispatched("MaximumBackward0", inputs=2, name="maximum")
def _maximum(input, other):
    """The elementwise larger value, nan if either is nan (torch.maximum)."""
    try:
        return np.maximum(input, other)
    except ValueError as e:
        raise _size_error(e, input, other) from None


@_maximum.defvjp
def _(grad, input, other, needs_input_grad):
    return _max_min_rule(input, other, grad, needs_input_grad, input < other, input > other)


@dispatched("MinimumBackward0", inputs=2, name="minimum")
def _minimum(input, other):
    """The elementwise smaller value, nan if either is nan (torch.minimum)."""
    try:
        return np.minimum(input, other)
    except ValueError as e:
        raise _size_error(e, input, other) from None


@_minimum.defvjp
def _(grad, input, other, needs_input_grad):
    return _max_min_rule(input, other, grad, needs_input_grad, input > other, input < other)


@public(grad_fn="MaximumBackward0", method=True,
        note="d/dinput = 1 where input > other, 1/2 on ties, else 0 (and symmetrically for other)")
def maximum(input, other):
    """The elementwise maximum of two tensors, with broadcasting and type promotion; nan propagates. Matches
    torch.maximum: on ties each input gets half of the gradient.

    Raises:
        TypeError: for a Python number argument (PyTorch's message).
    """
    _require_tensors("maximum", input=input, other=other)
    return _maximum(input, other)


@public(grad_fn="MinimumBackward0", method=True,
        note="d/dinput = 1 where input < other, 1/2 on ties, else 0 (and symmetrically for other)")
def minimum(input, other):
    """The elementwise minimum of two tensors, with broadcasting and type promotion; nan propagates. Matches
    torch.minimum: on ties each input gets half of the gradient.

    Raises:
        TypeError: for a Python number argument (PyTorch's message).
    """
    _require_tensors("minimum", input=input, other=other)
    return _minimum(input, other)


# ------------------------------------------------------------------------------------------- selection


@dispatched("WhereBackward0", inputs=3, promote=None, name="where")
def _where(condition, input, other):
    """Elementwise choice between two tensors by a boolean condition. Matches torch.where."""
    try:
        return np.where(condition, input, other)
    except ValueError as e:
        raise _size_error(e, condition, input, other) from None


@_where.defvjp
def _(grad, condition):
    zero = _zeros(grad)
    return None, _where(condition, grad, zero), _where(condition, zero, grad)


@public(grad_fn="WhereBackward0", note="d/dinput = 1 where condition, d/dother = 1 elsewhere")
def where(condition, input, other):
    """``input`` where ``condition`` is true, else ``other``; numbers are accepted for ``input``/``other``
    and promoted with PyTorch's rules. Matches torch.where (three-argument form).

    Raises:
        RuntimeError: if ``condition`` is not a bool tensor, or the three do not broadcast (PyTorch's messages).
    """
    if not any(isinstance(v, Tensor) for v in (condition, input, other)):
        # derivative rules on numpy values (including numpy's 0-d scalars)
        return np.where(condition, input, other)
    from ._core import to_tensor

    cond = to_tensor(condition)
    if cond.data.dtype.kind != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{scalar_type_name(cond.data.dtype)}")
    vals = [v if isinstance(v, Tensor) else None for v in (input, other)]
    dim = [v.data.dtype for v in vals if v is not None and v.data.ndim]
    zero = [v.data.dtype for v in vals if v is not None and not v.data.ndim]
    wrapped = [v for v in (input, other) if not isinstance(v, Tensor)]
    dtype = dtypes.result_type(dim, zero, wrapped)
    a = input if isinstance(input, Tensor) else Tensor(np.asarray(input, dtype=dtype))
    b = other if isinstance(other, Tensor) else Tensor(np.asarray(other, dtype=dtype))
    if a.data.dtype != dtype:
        a = a.to(dtype)
    if b.data.dtype != dtype:
        b = b.to(dtype)
    return _where(cond, a, b)


def _where_method(self, condition, other):
    """``where(condition, self, other)``, as torch.Tensor.where."""
    return where(condition, self, other)


install_method("where", _where_method)


# ------------------------------------------------------------------------------------------ comparisons


def _comparison(name: str, ufunc, symbol: str):
    def forward(input, other):
        try:
            return ufunc(input, other)
        except ValueError as e:
            raise _size_error(e, input, other) from None

    forward.__name__ = name
    forward.__doc__ = (f"Elementwise ``input {symbol} other`` as a bool tensor, with broadcasting and type "
                       f"promotion. Matches torch.{name}; not differentiable.")
    return op(None, inputs=2, differentiable=False, method=True, name=name, note="not differentiable")(forward)


eq = _comparison("eq", np.equal, "==")
ne = _comparison("ne", np.not_equal, "!=")
lt = _comparison("lt", np.less, "<")
le = _comparison("le", np.less_equal, "<=")
gt = _comparison("gt", np.greater, ">")
ge = _comparison("ge", np.greater_equal, ">=")


def _logical(name: str, ufunc, symbol: str):
    def forward(input, other):
        if input.dtype.kind == "f":
            raise not_implemented_for(f"{name}_cpu", input.dtype)
        try:
            return ufunc(input, other)
        except ValueError as e:
            raise _size_error(e, input, other) from None

    forward.__name__ = name
    forward.__doc__ = (f"Bitwise/logical ``input {symbol} other`` of bool or integer tensors. Matches torch.{name}."
                       "\n\nRaises:\n    NotImplementedError: for floating tensors (PyTorch's message).")
    return op(None, inputs=2, differentiable=False, method=True, name=name, note="not differentiable")(forward)


bitwise_and = _logical("bitwise_and", np.bitwise_and, "&")
bitwise_or = _logical("bitwise_or", np.bitwise_or, "|")
bitwise_xor = _logical("bitwise_xor", np.bitwise_xor, "^")


# ------------------------------------------------------------------------------------------- dtype casts


@op("ToCopyBackward0", promote=None, name="_to_copy")
def _to_copy(input, dtype):
    """A copy converted to ``dtype`` (a numpy dtype). Matches torch.Tensor.to(dtype)."""
    return input.astype(dtype)


@_to_copy.defvjp
def _(grad):
    # The engine casts the gradient back to the input's dtype.
    return grad


def to(input, dtype=None, *args, **kwargs):
    """``input`` converted to ``dtype`` (a torch dtype, name, or Python type); the same tensor if it already has
    that dtype. Device arguments ("cpu") are accepted and ignored. Matches torch.Tensor.to."""
    if dtype is None:
        dtype = kwargs.get("dtype")
    if dtype is None or dtype == "cpu":  # a device: there is only the CPU
        return input
    d = dtypes.as_dtype(dtype).np
    if isinstance(input, np.ndarray):
        return input.astype(d)
    if input.data.dtype == d:
        return input
    return _to_copy(input, d)


install_method("to", to)
install_method("type", to)
for _name, _d in (("float", dtypes.float32), ("double", dtypes.float64), ("half", dtypes.float16),
                  ("long", dtypes.int64), ("int", dtypes.int32), ("bool", dtypes.bool_)):
    install_method(_name, (lambda d: lambda self: to(self, d))(_d))


def _alias_method(o: Op):
    def method(self, *args, **kwargs):
        return o(self, *args, **kwargs)

    method.__doc__ = o.__doc__
    return method


# Tensor methods under PyTorch's alias names (x.absolute(), x.arcsin(), ...)
for _name, _op in (("absolute", abs), ("negative", neg), ("multiply", mul), ("arcsin", asin), ("arccos", acos),
                   ("arctan", atan)):
    install_method(_name, _alias_method(_op))

"""More of torch's elementwise math: logaddexp, logaddexp2, float_power, ldexp, frexp, signbit, isposinf,
isneginf, bitwise_not, bitwise_left_shift/right_shift, and logspace.

Each op is declared once with its derivative rule as PyTorch's tools/autograd/derivatives.yaml writes it (quoted
beside each rule). float_power is a composite in PyTorch too (``pow`` of float64 casts) and records the
grad_fn names of the ops it is built from, as PyTorch's does.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, not_implemented_for, op
from .arithmetic import pow
from .comparison import to
from .unary import exp, exp2

_LN2 = math.log(2.0)  # M_LN2


def _floating(name: str, *arrays) -> None:
    """PyTorch's dispatch error for a float-only kernel given integers or bools."""
    for a in arrays:
        if a.dtype.kind != "f":
            raise not_implemented_for(name, a.dtype)


# ------------------------------------------------------------------------------------------ logaddexp

def _logaddexp(name: str, ufunc, power, value: str, base: str):
    """logaddexp (``base`` "e": ``power`` exp) or logaddexp2 (``base`` "2": exp2): ``value`` computed by
    ``ufunc`` without overflow, with broadcasting, float tensors only; derivatives.yaml's rule, self: grad / (1 +
    pow(base, other - self)), other: grad / (1 + pow(base, self - other))."""
    def forward(input, other):
        _floating(f"{name}_cpu", input, other)
        return ufunc(input, other)

    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = (f"``{value}`` without overflow, with broadcasting. Matches torch.{name}.\n\n    Raises:\n"
                       "        NotImplementedError: for integer or bool tensors (PyTorch's message).\n    ")
    pw = "exp" if base == "e" else "2^"
    entry = op(name, jvp="elementwise", grad_fn=f"{name.capitalize()}Backward0", inputs=2, promote="same",
               method=True, note=f"d/dinput = 1 / (1 + {pw}(other - input)), d/dother = 1 / (1 + {pw}(input - other))"
               )(forward)

    @entry.defvjp
    def _(grad, input, other):
        return grad / (1 + power(other - input)), grad / (1 + power(input - other))

    return entry


logaddexp = _logaddexp("logaddexp", np.logaddexp, exp, "log(exp(input) + exp(other))", "e")
logaddexp2 = _logaddexp("logaddexp2", np.logaddexp2, exp2, "log2(2^input + 2^other)", "2")


# ------------------------------------------------------------------------------- float_power and ldexp

def _as_double(x):
    """A tensor cast to float64 (ToCopyBackward0 where it changes dtype); a number stays a number."""
    if isinstance(x, Tensor):
        return to(x, dtypes.float64)
    if isinstance(x, np.ndarray):
        return to(to_tensor(x), dtypes.float64)
    return float(x) if not isinstance(x, bool) else float(x)


@composite("float_power", method=True,
           grad_fn="PowBackward0 (number exponent) | PowBackward1 (tensor exponent) | PowBackward2 (number base)",
           note="pow computed in float64: d/dinput = exponent * input^(exponent-1), d/dexponent = result * log(input)")
def float_power(input, exponent):
    """``input ** exponent`` computed in double precision: tensors are cast to float64 first (ToCopyBackward0
    where that changes their dtype), then ``pow``. Matches torch.float_power (``at::pow(self.to(kDouble),
    exponent.to(kDouble))``)."""
    if not isinstance(input, (Tensor, np.ndarray)) and not isinstance(exponent, (Tensor, np.ndarray)):
        raise TypeError("float_power(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return pow(_as_double(input), _as_double(exponent))


@op("ldexp", jvp="elementwise", grad_fn="LdexpBackward0", inputs=2, promote="float", public=False,
    note="d/dinput = 2^other, d/dother = input * 2^other * ln 2")
def _ldexp_tensor(input, other):
    """``input * 2 ** other`` for a floating ``other`` (torch.ldexp)."""
    return input * np.exp2(other)


@_ldexp_tensor.defvjp
def _(grad, input, other):
    # derivatives.yaml: self: grad * at::pow(2, other); other: grad * self * exp2(other) * M_LN2
    return grad * exp2(other), grad * input * exp2(other) * _LN2



@op("ldexp", jvp="elementwise", grad_fn="LdexpBackward0", promote="float", public=False, note="d/dinput = 2^other")
def _ldexp_int(input, other):
    """``input * 2 ** other`` for an integer ``other`` (a numpy array, not differentiable) (torch.ldexp)."""
    return input * np.exp2(other.astype(input.dtype))


@_ldexp_int.defvjp
def _(grad, other):
    # derivatives.yaml: self: grad * at::pow(2, other). For an integer ``other`` PyTorch's pow(2, other) is an
    # integer power, 0 at negative exponents: the gradient there is 0, as PyTorch's.
    power = np.where(other < 0, 0, np.left_shift(1, np.clip(other, 0, 62))).astype(other.dtype)
    return grad * (Tensor(power) if isinstance(grad, Tensor) else power)



@composite("ldexp", grad_fn="LdexpBackward0", method=True,
           note="d/dinput = 2^other, d/dother = input * 2^other * ln 2")
def ldexp(input, other):
    """``input * 2 ** other`` with broadcasting: the promoted dtype of the two, the default float dtype for
    integers. Matches torch.ldexp; for an integer ``other`` its derivative is PyTorch's ``grad * pow(2, other)``
    in integers, 0 where ``other`` is negative."""
    input, other = to_tensor(input), to_tensor(other)
    if other.data.dtype.kind in "iub":
        d = dtypes.promote_types(input.data.dtype, other.data.dtype)
        if d.kind == "f" and d != input.data.dtype:
            input = to(input, dtypes.from_numpy(d))
        return _ldexp_int(input, other.data)
    return _ldexp_tensor(input, other)


# ---------------------------------------------------------------------------------------------- frexp

class frexp_return(tuple):
    """torch.return_types.frexp: the (mantissa, exponent) result of torch.frexp."""

    __slots__ = ()
    _fields = ("mantissa", "exponent")

    def __new__(cls, mantissa, exponent):
        return tuple.__new__(cls, (mantissa, exponent))

    @property
    def mantissa(self):
        """The mantissas in (-1, -0.5] and [0.5, 1) (0 for 0), the input's dtype; differentiable."""
        return self[0]

    @property
    def exponent(self):
        """The int32 exponents: ``input = mantissa * 2 ** exponent``."""
        return self[1]

    def __repr__(self) -> str:
        return f"torch.return_types.frexp(\nmantissa={self[0]!r},\nexponent={self[1]!r})"

    __str__ = __repr__


frexp_return.__name__ = frexp_return.__qualname__ = "frexp"


def _check_frexp(input) -> None:
    if input.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")


@op("frexp", jvp="elementwise", grad_fn="FrexpBackward0", promote=None, public=False, note="d/dx = 1 / 2^exponent")
def _frexp_mantissa(input):
    """The mantissa of :func:`frexp` (the differentiable output)."""
    _check_frexp(input)
    return np.frexp(input)[0]


@_frexp_mantissa.defvjp
def _(grad, input):
    # derivatives.yaml frexp.Tensor: self: grad / exponent.exp2()
    return grad / exp2(_frexp_exponent(input))



@op("frexp", grad_fn=None, promote=None, differentiable=False, public=False, note="not differentiable")
def _frexp_exponent(input):
    """The int32 exponent of :func:`frexp` (not differentiable)."""
    _check_frexp(input)
    return np.frexp(input)[1].astype(np.int32)


@composite("frexp", grad_fn="FrexpBackward0", method=True, note="mantissa: d/dx = 1 / 2^exponent")
def frexp(input):
    """``input`` decomposed as ``mantissa * 2 ** exponent``: mantissa in (-1, -0.5] or [0.5, 1) with the input's
    dtype, exponent int32. Returns ``torch.return_types.frexp(mantissa, exponent)``. Matches torch.frexp.

    Raises:
        RuntimeError: for integer or bool tensors (PyTorch's message).
    """
    input = to_tensor(input)
    return frexp_return(_frexp_mantissa(input), _frexp_exponent(input))


# --------------------------------------------------------------------------------- sign classification

def _classify(name: str, fn, what: str):
    def forward(input):
        return np.asarray(fn(input), dtype=bool)

    forward.__name__ = name
    forward.__doc__ = f"Elementwise whether ``input`` {what}, as a bool tensor. Matches torch.{name}; not differentiable."
    return op(name, grad_fn=None, promote=None, differentiable=False, method=True,
              note="not differentiable")(forward)


signbit = _classify("signbit", lambda x: np.signbit(x) if x.dtype.kind == "f" else x < 0,
                    "has its sign bit set (negative, or -0.0)")
isposinf = _classify("isposinf", lambda x: np.isposinf(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool),
                     "is +inf")
isneginf = _classify("isneginf", lambda x: np.isneginf(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool),
                     "is -inf")


# ------------------------------------------------------------------------------------------- bitwise

@op("bitwise_not", grad_fn=None, promote=None, differentiable=False, method=True, note="not differentiable")
def bitwise_not(input):
    """``~input`` of a bool or integer tensor (logical not for bools). Matches torch.bitwise_not.

    Raises:
        NotImplementedError: for floating tensors (PyTorch's message).
    """
    if input.dtype.kind == "f":
        raise not_implemented_for("bitwise_not_cpu", input.dtype)
    return np.invert(input)


def _shift(name: str, ufunc, kernel: str):
    def forward(input, other):
        for a in (input, other):
            if a.dtype.kind == "b" or a.dtype.kind == "f":
                raise not_implemented_for(kernel, a.dtype)
        bits = np.dtype(input.dtype).itemsize * 8
        big = other >= bits
        out = ufunc(input, np.where(big | (other < 0), 0, other).astype(input.dtype))
        if name == "bitwise_left_shift":
            return np.where(big | (other < 0), 0, out).astype(input.dtype)
        return np.where(big | (other < 0), np.where(input < 0, -1, 0), out).astype(input.dtype)

    forward.__name__ = name
    forward.__doc__ = (f"``input {'<<' if 'left' in name else '>>'} other`` of integer tensors (shifts past the "
                       f"width give 0, or -1 for negative right shifts). Matches torch.{name}.\n\nRaises:\n    "
                       "NotImplementedError: for bool or floating tensors (PyTorch's message).")
    return op(name, grad_fn=None, inputs=2, differentiable=False, method=True, note="not differentiable")(forward)


bitwise_left_shift = _shift("bitwise_left_shift", np.left_shift, "lshift_cpu")
bitwise_right_shift = _shift("bitwise_right_shift", np.right_shift, "rshift_cpu")


# ------------------------------------------------------------------------------------------- logspace

@composite("logspace", kind="creation")
def logspace(start, end, steps, base=10.0, *, dtype=None, requires_grad=False, device=None):
    """``base ** linspace(start, end, steps)``: ``steps`` values from ``base**start`` to ``base**end`` on a log
    scale, the default float dtype unless ``dtype``. Computed as PyTorch's CPU kernel: each exponent from the
    nearer end (``start + step * i`` for the first half, ``end - step * (steps - 1 - i)`` for the second), then
    ``pow`` in the result's dtype (float64 for integer dtypes, truncated). Matches torch.logspace.

    Raises:
        RuntimeError: for a negative ``steps`` (PyTorch's message).
    """
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = dtypes.as_dtype(dtype).np if dtype is not None else dtypes.get_default_dtype().np
    work = d if d.kind == "f" else np.dtype(np.float64)
    idx = np.arange(steps)
    s, e, b = work.type(start), work.type(end), work.type(base)
    if steps == 1:
        values = np.power(b, np.full(1, s, dtype=work))
    else:
        step = (e - s) / work.type(max(steps - 1, 1))
        half = steps // 2
        expo = np.where(idx < half, s + step * idx.astype(work), e - step * (steps - idx - 1).astype(work))
        values = np.power(b, expo.astype(work))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = values.astype(d) if d.kind == "f" else np.trunc(values).astype(d)
    return Tensor(out, requires_grad=requires_grad)

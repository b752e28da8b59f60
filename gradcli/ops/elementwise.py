"""Elementwise ops: arithmetic, powers, exponentials, activations, comparisons.

Each op is its forward (numpy, broadcasting as PyTorch does) and, right below, its derivative. Formulas and
their evaluation order follow PyTorch's tools/autograd/derivatives.yaml and the CPU kernels
(aten/src/ATen/native/cpu/BinaryOpsKernel.cpp), so float32 results agree bit for bit where numpy's primitive
functions do. Rules never unbroadcast: the engine sums each gradient back to its input's shape.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from ._core import install_method, op, register

# ------------------------------------------------------------------------------------------ arithmetic


@op("AddBackward0", inputs=2, method=True)
def add(input, other, alpha=1):
    """``input + alpha * other`` with broadcasting and type promotion. Matches torch.add."""
    return np.add(input, other) if alpha == 1 else np.add(input, np.multiply(other, alpha))


@add.defvjp
def _(grad, alpha):
    return grad, (grad if alpha == 1 else grad * alpha)


@op("SubBackward0", inputs=2, method=True, aliases=("subtract",))
def sub(input, other, alpha=1):
    """``input - alpha * other`` with broadcasting and type promotion. Matches torch.sub.

    Raises:
        RuntimeError: for bool tensors, as PyTorch does.
    """
    if input.dtype.kind == "b" and np.asarray(other).dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
                           "or `logical_xor()` operator instead.")
    return np.subtract(input, other) if alpha == 1 else np.subtract(input, np.multiply(other, alpha))


@sub.defvjp
def _(grad, alpha, needs_input_grad):
    if not needs_input_grad[1]:  # x - constant: no negation to compute
        return grad, None
    return grad, (-grad if alpha == 1 else -grad * alpha)


@op("RsubBackward1", inputs=2)
def rsub(input, other, alpha=1):
    """``other - alpha * input``: what ``2 - x`` computes. Matches torch.rsub."""
    return np.subtract(other, input) if alpha == 1 else np.subtract(other, np.multiply(input, alpha))


@rsub.defvjp
def _(grad, alpha, needs_input_grad):
    if not needs_input_grad[0]:
        return None, grad
    return (-grad if alpha == 1 else -grad * alpha), grad


@op("MulBackward0", inputs=2, method=True, aliases=("multiply",))
def mul(input, other):
    """Elementwise product with broadcasting and type promotion. Matches torch.mul."""
    return np.multiply(input, other)


@mul.defvjp
def _(grad, input, other, needs_input_grad):
    # only the products that are needed (x * constant is the common case)
    return grad * other if needs_input_grad[0] else None, grad * input if needs_input_grad[1] else None


@op("DivBackward0", inputs=2, promote="float", method=True, aliases=("divide", "true_divide"))
def div(input, other):
    """True division with broadcasting; integer inputs give the default float dtype. Matches torch.div."""
    return np.true_divide(input, other)


@div.defvjp
def _(grad, input, other, needs_input_grad):
    # derivatives.yaml: self: grad / other; other: -grad * ((self / other) / other)
    return (grad / other if needs_input_grad[0] else None,
            -grad * ((input / other) / other) if needs_input_grad[1] else None)


@op("NegBackward0", method=True, aliases=("negative",))
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


@op("ReciprocalBackward0", promote="float", method=True)
def reciprocal(input):
    """``1 / input``; integers give the default float dtype. Matches torch.reciprocal."""
    return np.reciprocal(input)


@reciprocal.defvjp
def _(grad, result):
    return -grad * (result * result)


# ----------------------------------------------------------------------------------------------- powers


@op("PowBackward0", promote=None, name="_pow_scalar")
def _pow_scalar(input, exponent):
    """``input ** exponent`` for a Python-number exponent (torch.pow, Tensor_Scalar overload)."""
    if input.dtype.kind in "iub" and isinstance(exponent, (int, np.integer)) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return np.power(input, exponent)


@_pow_scalar.defvjp
def _(grad, input, exponent):
    # derivatives.yaml pow_backward: zero for exponent 0, else grad * (exponent * self.pow(exponent - 1)).
    if exponent == 0:
        return grad * 0
    return grad * (exponent * _pow_scalar(input, exponent - 1))


@op("PowBackward1", inputs=2, name="_pow_tensor")
def _pow_tensor(input, exponent):
    """``input ** exponent`` elementwise for a tensor exponent (torch.pow, Tensor_Tensor overload)."""
    return np.power(input, exponent)


@_pow_tensor.defvjp
def _(grad, input, exponent, result, needs_input_grad):
    gi = ge = None
    if needs_input_grad[0]:
        gi = where(exponent == 0, 0.0, grad * (exponent * _pow_tensor(input, exponent - 1)))
    if needs_input_grad[1]:
        ge = where((input == 0) & (exponent >= 0), 0.0, grad * (result * log(input)))
    return gi, ge


@op("PowBackward2", inputs=2, name="_pow_rscalar")
def _pow_rscalar(input, exponent):
    """``input ** exponent`` where ``input`` was a Python number (``2 ** x``)."""
    return np.power(input, exponent)


@_pow_rscalar.defvjp
def _(grad, input, exponent, result):
    return None, where((input == 0) & (exponent >= 0), 0.0, grad * (result * log(input)))


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
    if type(input) is Tensor and input.data.dtype.kind in "iub" and isinstance(exponent, float):
        input = Tensor(input.data.astype(dtypes.get_default_dtype().np))
    return _pow_scalar(input, exponent)


register("pow", pow, "op")
install_method("pow", pow)


@op("SqrtBackward0", promote="float", method=True)
def sqrt(input):
    """Square root; integers give the default float dtype. Matches torch.sqrt."""
    return np.sqrt(input)


@sqrt.defvjp
def _(grad, result):
    return grad / (2 * result)


# ------------------------------------------------------------------------------------- exp, log, trig


@op("ExpBackward0", promote="float", method=True)
def exp(input):
    """``e ** input``; integers give the default float dtype. Matches torch.exp."""
    return np.exp(input)


@exp.defvjp
def _(grad, result):
    return grad * result


@op("LogBackward0", promote="float", method=True)
def log(input):
    """Natural logarithm (nan below 0, -inf at 0); integers give the default float dtype. Matches torch.log."""
    return np.log(input)


@log.defvjp
def _(grad, input):
    return grad / input


@op("TanhBackward0", promote="float", method=True)
def tanh(input):
    """Hyperbolic tangent. Matches torch.tanh."""
    return np.tanh(input)


@tanh.defvjp
def _(grad, result):
    # tanh_backward (BinaryOpsKernel.cpp): grad * (1 - y * y)
    return grad * (1 - result * result)


@op("SigmoidBackward0", promote="float", method=True)
def sigmoid(input):
    """Logistic function ``1 / (1 + exp(-input))``. Matches torch.sigmoid."""
    one = input.dtype.type(1)
    return one / (one + np.exp(-input))


@sigmoid.defvjp
def _(grad, result):
    # sigmoid_backward (BinaryOpsKernel.cpp): grad * (1 - y) * y
    return grad * (1 - result) * result


# ---------------------------------------------------------------------------------- kinks: abs, relu


@op("AbsBackward0", method=True, aliases=("absolute",))
def abs(input):
    """Absolute value. Matches torch.abs; its gradient at 0 is 0 (sign(0) = 0)."""
    return np.abs(input)


@abs.defvjp
def _(grad, input):
    return grad * sign(input)


@op("SignBackward0", method=True)
def sign(input):
    """-1, 0 or 1 by the sign of each element. Matches torch.sign; its gradient is zero everywhere."""
    return np.sign(input)


@sign.defvjp
def _(grad):
    return grad * 0


@op("ReluBackward0", promote=None, method=True)
def relu(input):
    """``max(input, 0)``. Matches torch.relu; the gradient at 0 is 0 (threshold_backward)."""
    return np.maximum(input, input.dtype.type(0))


@relu.defvjp
def _(grad, result):
    return where(result <= 0, 0.0, grad)


# ------------------------------------------------------------------------------------------- selection


@op("WhereBackward0", inputs=3, promote=None, name="_where")
def _where(condition, input, other):
    """Elementwise choice between two tensors by a boolean condition. Matches torch.where."""
    return np.where(condition, input, other)


@_where.defvjp
def _(grad, condition):
    zero = grad * 0
    return None, _where(condition, grad, zero), _where(condition, zero, grad)



def where(condition, input, other):
    """``input`` where ``condition`` is true, else ``other``; numbers are accepted for ``input``/``other``
    and promoted with PyTorch's rules. Matches torch.where (three-argument form).

    Raises:
        RuntimeError: if ``condition`` is not a bool tensor (PyTorch's message).
    """
    if not any(isinstance(v, Tensor) for v in (condition, input, other)):
        # derivative rules on numpy values (including numpy's 0-d scalars)
        return np.where(condition, input, other)
    from ._core import to_tensor

    cond = to_tensor(condition)
    if cond.data.dtype.kind != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{cond.dtype.name.capitalize() if cond.dtype.name != 'int64' else 'Long'}")
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


register("where", where, "op")


# ------------------------------------------------------------------------------------------ comparisons


def _comparison(name: str, ufunc, symbol: str):
    def forward(input, other):
        return ufunc(input, other)

    forward.__name__ = name
    forward.__doc__ = (f"Elementwise ``input {symbol} other`` as a bool tensor, with broadcasting. Matches "
                       f"torch.{name}; not differentiable.")
    return op(None, inputs=2, differentiable=False, method=True, name=name)(forward)


eq = _comparison("eq", np.equal, "==")
ne = _comparison("ne", np.not_equal, "!=")
lt = _comparison("lt", np.less, "<")
le = _comparison("le", np.less_equal, "<=")
gt = _comparison("gt", np.greater, ">")
ge = _comparison("ge", np.greater_equal, ">=")


def _logical(name: str, ufunc, symbol: str):
    def forward(input, other):
        if input.dtype.kind == "f" or other.dtype.kind == "f":
            raise RuntimeError(f'"{name}_cpu" not implemented for \'Float\'')
        return ufunc(input, other)

    forward.__name__ = name
    forward.__doc__ = f"Bitwise/logical ``input {symbol} other`` of bool or integer tensors. Matches torch.{name}."
    return op(None, inputs=2, differentiable=False, method=True, name=name)(forward)


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

"""Comparisons, bitwise logic, selection and dtype casts: eq/ne/lt/le/gt/ge, bitwise_and/or/xor,
isnan/isinf/isfinite, where, and
Tensor.to with its shorthands (``x.float()``, ``x.long()``, ...).

Comparisons and bitwise ops broadcast and promote as PyTorch does and are not differentiable (bool or integer
outputs). ``where`` chooses elementwise between two tensors; its derivative routes the gradient to the chosen
side. A cast records ToCopyBackward0, whose derivative casts the gradient back (the engine does that).
"""

from __future__ import annotations

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor, to_tensor
from ..core.apply import broadcast_error
from ..core.declare import composite, not_implemented_for, op, tensor_method, zeros_like_grad

# ------------------------------------------------------------------------------------------ comparisons


def _comparison(name: str, ufunc, symbol: str):
    def forward(input, other):
        try:
            return ufunc(input, other)
        except ValueError as e:
            raise broadcast_error(e, input, other) from None

    forward.__name__ = name
    forward.__doc__ = (f"Elementwise ``input {symbol} other`` as a bool tensor, with broadcasting and type "
                       f"promotion. Matches torch.{name}; not differentiable.")
    return op(name, grad_fn=None, inputs=2, differentiable=False, method=True, note="not differentiable")(forward)


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
            raise broadcast_error(e, input, other) from None

    forward.__name__ = name
    forward.__doc__ = (f"Bitwise/logical ``input {symbol} other`` of bool or integer tensors. Matches torch.{name}."
                       "\n\nRaises:\n    NotImplementedError: for floating tensors (PyTorch's message).")
    return op(name, grad_fn=None, inputs=2, differentiable=False, method=True, note="not differentiable")(forward)


bitwise_and = _logical("bitwise_and", np.bitwise_and, "&")
bitwise_or = _logical("bitwise_or", np.bitwise_or, "|")
bitwise_xor = _logical("bitwise_xor", np.bitwise_xor, "^")


def _classification(name: str, ufunc, what: str, otherwise: bool):
    def forward(input):
        if input.dtype.kind != "f":  # integers and bools are finite numbers
            return np.full(input.shape, otherwise, dtype=bool)
        return ufunc(input)

    forward.__name__ = name
    forward.__doc__ = (f"Elementwise whether ``input`` is {what}, as a bool tensor of its shape ({otherwise} "
                       f"everywhere for integer and bool tensors). Matches torch.{name}; not differentiable.")
    return op(name, grad_fn=None, promote=None, differentiable=False, method=True,
              note="not differentiable")(forward)


isnan = _classification("isnan", np.isnan, "NaN", False)
isinf = _classification("isinf", np.isinf, "infinite (+inf or -inf)", False)
isfinite = _classification("isfinite", np.isfinite, "finite (neither NaN nor infinite)", True)


# ------------------------------------------------------------------------------------------- selection


@op("where", grad_fn="WhereBackward0", inputs=3, promote=None, public=False,
    note="d/dinput = 1 where condition, d/dother = 1 elsewhere",
    formula="input: grad where condition, else 0; other: grad where not condition, else 0")
def _where(condition, input, other):
    """Elementwise choice between two tensors by a boolean condition. Matches torch.where."""
    try:
        return np.where(condition, input, other)
    except ValueError as e:
        raise broadcast_error(e, condition, input, other) from None


@_where.defvjp
def _(grad, condition):
    zero = zeros_like_grad(grad)
    return None, _where(condition, grad, zero), _where(condition, zero, grad)


@_where.defjvp
def _(condition, input_t, other_t):
    # derivatives.yaml: result: where(condition, self_t, other_t)
    return _where(condition, input_t, other_t)


def _where_method(self, condition, other):
    """``where(condition, self, other)``, as torch.Tensor.where."""
    return where(condition, self, other)


@composite("where", grad_fn="WhereBackward0", method=_where_method,
           note="d/dinput = 1 where condition, d/dother = 1 elsewhere")
def where(condition, input, other):
    """``input`` where ``condition`` is true, else ``other``; numbers are accepted for ``input``/``other``
    and promoted with PyTorch's rules. Matches torch.where (three-argument form).

    Raises:
        RuntimeError: if ``condition`` is not a bool tensor, or the three do not broadcast (PyTorch's messages).
    """
    if not any(isinstance(v, Tensor) for v in (condition, input, other)):
        # derivative rules on numpy values (including numpy's 0-d scalars)
        return np.where(condition, input, other)
    cond = to_tensor(condition)
    if cond.data.dtype.kind != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{dtypes.scalar_type_name(cond.data.dtype)}")
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


# ------------------------------------------------------------------------------------------- dtype casts


@op("_to_copy", grad_fn="ToCopyBackward0", promote=None, note="d/dx = grad, cast back to the input's dtype",
    formula="input: grad cast back to input's dtype",
    jvp="linear")  # derivatives.yaml _to_copy: result: _to_copy(self_t, dtype): the tangent cast
def _to_copy(input, dtype):
    """A copy converted to ``dtype`` (a numpy dtype). Matches torch.Tensor.to(dtype)."""
    return input.astype(dtype)


@_to_copy.defvjp
def _(grad):
    # The engine casts the gradient back to the input's dtype.
    return grad


_DEVICE_TYPES = ("cpu", "cuda", "mps", "meta")


def _is_device(v) -> bool:
    """A device argument: a device string ("cpu", "cuda:0") or a ``torch.device`` (the language's, duck-typed)."""
    if isinstance(v, str):
        return v.partition(":")[0] in _DEVICE_TYPES
    return isinstance(getattr(v, "type", None), str) and v.type in _DEVICE_TYPES


@tensor_method("to")
def to(input, dtype=None, *args, **kwargs):
    """``input`` converted to ``dtype`` (a torch dtype, name, or Python type); the same tensor if it already has
    that dtype. Device arguments ("cpu") are accepted and ignored. Matches torch.Tensor.to."""
    if _is_device(dtype):  # .to(device) or .to(device, dtype): there is only the CPU
        dtype = args[0] if args else None
    if dtype is None:
        dtype = kwargs.get("dtype")
    if dtype is None or _is_device(dtype):
        return input
    d = dtypes.as_dtype(dtype).np
    if isinstance(input, np.ndarray):
        return input.astype(d)
    if input.data.dtype == d:
        return input
    return _to_copy(input, d)


@tensor_method("type")
def _type(self, dtype=None, non_blocking=False, **kwargs):
    """``x.type()``: the legacy type name (``'torch.FloatTensor'``); ``x.type(t)``: ``x`` converted to ``t``, a
    dtype, a legacy type (``torch.LongTensor``, a class with a ``legacy_dtype``) or its name
    (``'torch.LongTensor'``). Matches torch.Tensor.type on CPU.

    Raises:
        ValueError: for a type name PyTorch does not know (its message).
    """
    if dtype is None:
        dtype = kwargs.get("dtype")
    if dtype is None:
        names = {v: k for k, v in dtypes.LEGACY_TYPES.items()}
        return f"torch.{names.get(self.dtype.name, self.dtype.name)}"
    if isinstance(dtype, str) and dtype.startswith("torch.") and dtype[6:] in dtypes.LEGACY_TYPES:
        dtype = dtypes.LEGACY_TYPES[dtype[6:]]
    elif isinstance(dtype, str):
        raise ValueError(f"invalid type: '{dtype}'")
    dtype = getattr(dtype, "legacy_dtype", dtype)  # torch.LongTensor and the other legacy types
    return to(self, dtype)


@tensor_method("float")
def _float(self):
    """``self.to(torch.float32)``. Matches torch.Tensor.float."""
    return to(self, dtypes.float32)


@tensor_method("double")
def _double(self):
    """``self.to(torch.float64)``. Matches torch.Tensor.double."""
    return to(self, dtypes.float64)


@tensor_method("half")
def _half(self):
    """``self.to(torch.float16)``. Matches torch.Tensor.half."""
    return to(self, dtypes.float16)


@tensor_method("long")
def _long(self):
    """``self.to(torch.int64)``. Matches torch.Tensor.long."""
    return to(self, dtypes.int64)


@tensor_method("int")
def _int(self):
    """``self.to(torch.int32)``. Matches torch.Tensor.int."""
    return to(self, dtypes.int32)


@tensor_method("bool")
def _bool(self):
    """``self.to(torch.bool)``. Matches torch.Tensor.bool."""
    return to(self, dtypes.bool_)


# ---------------------------------------------------------------------------------- closeness, equality


@composite("isclose", kind="function")
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise, with broadcasting: a bool tensor. Matches
    torch.isclose (infinities close only to themselves; NaN only with ``equal_nan``).

    Raises:
        RuntimeError: for tensors of different dtypes (PyTorch's message).
    """
    a, b = to_tensor(input), to_tensor(other)
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{a.dtype.name.capitalize()} did not match {b.dtype.name.capitalize()}"
                           .replace("Float32", "Float").replace("Float64", "Double").replace("Int64", "Long"))
    with np.errstate(all="ignore"):
        out = np.isclose(a.data, b.data, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return Tensor(np.asarray(out))


@composite("allclose", kind="function")
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether every element of :func:`isclose` is true: a Python bool. Matches torch.allclose."""
    return bool(isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan).data.all())


@composite("equal", kind="function")
def equal(input, other) -> bool:
    """Whether the two tensors have the same shape and elements: a Python bool. Matches torch.equal."""
    a, b = to_tensor(input), to_tensor(other)
    return a.data.shape == b.data.shape and bool(np.array_equal(a.data, b.data))


@tensor_method("isclose")
def _isclose_method(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``torch.isclose(self, other, ...)``. Matches torch.Tensor.isclose."""
    return isclose(self, other, rtol, atol, equal_nan)


@tensor_method("allclose")
def _allclose_method(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """``torch.allclose(self, other, ...)``. Matches torch.Tensor.allclose."""
    return allclose(self, other, rtol, atol, equal_nan)


@tensor_method("equal")
def _equal_method(self, other) -> bool:
    """``torch.equal(self, other)``. Matches torch.Tensor.equal."""
    return equal(self, other)

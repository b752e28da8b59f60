"""PyTorch's legacy functions: torch.range (deprecated), torch.typename and torch.set_default_tensor_type
(deprecated).

What set_default_tensor_type changes lives in the run context, as the rest of gradcli's run state: the context's
default dtype (as torch.set_default_dtype).
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from ..engine import dtypes, limits
from ..engine.tensor import Tensor
from .core.declare import composite
from .creation import range_bounds

_RANGE_WARNING = ("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).")
_TENSOR_TYPE_WARNING = ("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                        "torch.set_default_dtype() and torch.set_default_device() as alternatives.")


def _number(name: str, v):
    if isinstance(v, Tensor):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"range(): argument '{name}' must be Number, not {type(v).__name__}")
    return v


@composite("range", kind="creation")
def range_(start, end, step=1, dtype=None, requires_grad=False, device=None):
    """``start, start + step, ..., end`` (``end`` included when reached): ``floor((end - start) / step) + 1``
    values ``start + i * step`` computed in float64 (int64 for integer dtypes), in the default float dtype unless
    ``dtype`` is given. Matches the deprecated torch.range, with its UserWarning.

    Raises:
        RuntimeError: for a zero step, infinite bounds or a step of the wrong sign (PyTorch's messages).
    """
    warnings.warn(_RANGE_WARNING, UserWarning, stacklevel=2)
    start, end, step = (_number(n, v) for n, v in (("start", start), ("end", end), ("step", step)))
    d = dtypes.as_dtype(dtype).np if dtype is not None else dtypes.get_default_dtype().np
    start, end, step, integral = range_bounds(start, end, step, d)
    n = (end - start) // step + 1 if integral else int((float(end) - float(start)) / float(step) + 1)
    limits.check_numel((n,), "range()")
    if integral:
        values = start + np.arange(n, dtype=np.int64) * step
    else:
        values = float(start) + np.arange(n, dtype=np.float64) * float(step)
    t = Tensor(values.astype(d))
    return t.requires_grad_(True) if requires_grad else t


_CLASS_REPR = re.compile(r"<class '([^']+)'>")


@composite("typename", kind="function")
def typename(obj) -> str:
    """The name of ``obj``'s type as PyTorch writes it: a tensor's legacy type (``'torch.LongTensor'``), a
    class's qualified name (``'torch.nn.parameter.Parameter'``), Python's name for builtin values (``'int'``),
    else the qualified name of the value's class. Matches torch.typename."""
    if isinstance(obj, Tensor):
        return obj.type()
    if isinstance(obj, dtypes.DType):
        return "torch.dtype"
    # a class (gradcli's classes and a program's print as PyTorch's and Python's), a program's object's class
    # (the language's objects hold it as ``cls``), then the value's type
    for value in (obj, getattr(obj, "cls", None), type(obj)):
        m = _CLASS_REPR.fullmatch(repr(value))
        if m and not m.group(1).startswith("gradcli."):
            name = m.group(1)
            return name[len("builtins."):] if name.startswith("builtins.") else name
    return type(obj).__qualname__


#: The legacy tensor types set_default_tensor_type accepts: the CPU floating ones.
_FLOAT_TYPES = {"torch.FloatTensor": dtypes.float32, "torch.DoubleTensor": dtypes.float64}


@composite("set_default_tensor_type", kind="function")
def set_default_tensor_type(t) -> None:
    """Make the floating legacy type ``t`` (``torch.FloatTensor`` or ``torch.DoubleTensor``, the class or its
    name) the default: the run context's default dtype, as torch.set_default_dtype. Matches the deprecated
    torch.set_default_tensor_type, with its UserWarning (CUDA types: gradcli runs on the CPU).

    Raises:
        TypeError: for a type that is not floating, a CUDA type or another value (PyTorch's messages).
        AttributeError: for a name torch does not have.
    """
    warnings.warn(_TENSOR_TYPE_WARNING, UserWarning, stacklevel=2)
    if isinstance(t, str):
        if t.startswith("torch.cuda."):
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        if t in _FLOAT_TYPES:
            dtypes.set_default_dtype(_FLOAT_TYPES[t])
            return
        name = t[len("torch."):] if t.startswith("torch.") else t
        if name.endswith("Tensor") and name[:-len("Tensor")] in ("Long", "Int", "Short", "Char", "Byte", "Bool",
                                                                  "Half", "BFloat16"):
            raise TypeError("only floating-point types are supported as the default type")
        raise AttributeError(f"module 'torch' has no attribute '{name}'")
    legacy = getattr(type(t), "legacy_dtype", None) if not isinstance(t, type) else None
    legacy = getattr(t, "legacy_dtype", legacy)
    if legacy is None:
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if legacy not in (dtypes.float32, dtypes.float64):
        raise TypeError("only floating-point types are supported as the default type")
    dtypes.set_default_dtype(legacy)

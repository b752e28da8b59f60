"""The ``out=`` keyword of PyTorch's functions (``torch.logical_and(a, b, out=t)``), for every function of the
op table that does not declare one itself.

The function computes its result as without ``out``; the result is then written into ``out`` and ``out`` is
returned, as PyTorch's out= overloads do: ``out`` is resized to the result's shape (with PyTorch's deprecation
warning when it had elements), the result is cast to ``out``'s dtype where PyTorch's ``canCast`` allows it, and
no gradient is recorded (an input that requires grad, with grad mode on, is refused).
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np

from ...engine import dtypes, grad_mode
from ...engine.tensor import Tensor
from .declare import REGISTRY


def takes_out(func) -> bool:
    """Whether ``func`` is a function of the op table (by identity) whose signature has no ``out`` parameter of
    its own, so that ``out=`` is handled by :func:`call_with_out`."""
    if not any(v is func for v in REGISTRY.values()):
        return False
    try:
        params = inspect.signature(getattr(func, "forward", func)).parameters
    except (TypeError, ValueError):
        return True
    return "out" not in params


def _can_cast(src: np.dtype, dst: np.dtype) -> bool:
    # c10::canCast: no float to integral, no non-bool to bool (complex is not supported by gradcli)
    if src.kind == "f" and dst.kind in "iub":
        return False
    return not (src.kind != "b" and dst.kind == "b")


def call_with_out(func, args: list, kwargs: dict):
    """``func(*args, **kwargs)`` with its result written into ``kwargs["out"]``, which is returned.

    Raises:
        TypeError: if ``out`` is not a Tensor, or the function's result is not one tensor.
        RuntimeError: if an argument requires grad while grad mode is on, or the result's dtype cannot be cast
            to ``out``'s (PyTorch's messages).
    """
    kwargs = dict(kwargs)
    out = kwargs.pop("out")
    if out is None:
        return func(*args, **kwargs)
    name = getattr(func, "name", None) or getattr(func, "__name__", "function")
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if grad_mode.is_grad_enabled() and any(isinstance(a, Tensor) and a.requires_grad
                                           for a in [out, *args, *kwargs.values()]):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    result = func(*args, **kwargs)
    if not isinstance(result, Tensor):
        raise TypeError(f"{name}(): out= is supported for functions returning one tensor")
    if not _can_cast(result.data.dtype, out.data.dtype):
        raise RuntimeError(f"result type {dtypes.scalar_type_name(result.data.dtype)} can't be cast to the desired "
                           f"output type {dtypes.scalar_type_name(out.data.dtype)}")
    if tuple(out.shape) != tuple(result.shape):
        if out.data.size:
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(result.shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0).", UserWarning, stacklevel=2)
        out.data = np.empty(result.shape, out.data.dtype)
    out.copy_(result)
    return out

"""Reductions: sum, mean, norm, and the broadcasting pair sum_to_size / expand.

``dim`` is None (all dimensions), an int or a tuple of ints, negative counting from the end; ``keepdim``
keeps reduced dimensions with size 1. Derivatives re-insert the reduced dimensions (:func:`_unsqueeze_to`)
and let the engine broadcast the gradient back to the input's shape. Names, dtype rules and grad_fn names
(SumBackward0 for a full reduction, SumBackward1 with ``dim``) match PyTorch.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ._core import install_method, normalize_dims, op


def _reduced_shape(shape, dim, keepdim):
    """The shape of the gradient of a reduction over ``dim`` with the reduced dimensions kept as size 1."""
    if dim is None:
        return (1,) * len(shape)
    axes = normalize_dims(dim, len(shape))
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _unsqueeze_to(grad, input_shape, dim, keepdim):
    """Re-insert the dimensions a reduction removed, so that ``grad`` broadcasts to ``input_shape``."""
    if keepdim or dim is None:
        return grad
    from .shape import reshape

    return reshape(grad, _reduced_shape(input_shape, dim, keepdim))


def _sum_grad_fn(dim=None, keepdim=False, dtype=None):
    return "SumBackward0" if dim is None else "SumBackward1"


@op(_sum_grad_fn, promote=None, method=True)
def sum(input, dim=None, keepdim=False, dtype=None):
    """Sum over ``dim`` (all elements when None). Bool and integer tensors sum to int64 as in torch.sum.

    Raises:
        IndexError: for a dimension out of range.
    """
    axes = normalize_dims(dim, input.ndim)
    out_dtype = dtypes.as_dtype(dtype).np if dtype is not None else (
        np.dtype(np.int64) if input.dtype.kind in "iub" else input.dtype)
    return np.sum(input, axis=axes, keepdims=keepdim if dim is not None else False, dtype=out_dtype)


@sum.defvjp
def _(grad, input_shape, dim, keepdim):
    return _unsqueeze_to(grad, input_shape, dim, keepdim)


def _mean_grad_fn(dim=None, keepdim=False, dtype=None):
    return "MeanBackward0" if dim is None else "MeanBackward1"


_DTYPE_WORDS = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


@op(_mean_grad_fn, promote=None, method=True)
def mean(input, dim=None, keepdim=False, dtype=None):
    """Arithmetic mean over ``dim`` (all elements when None). Matches torch.mean.

    Raises:
        RuntimeError: for integer or bool tensors without ``dtype`` (PyTorch's message).
        IndexError: for a dimension out of range.
    """
    if dtype is not None:
        input = input.astype(dtypes.as_dtype(dtype).np)
    if input.dtype.kind != "f":
        word = _DTYPE_WORDS.get(dtypes.from_numpy(input.dtype).name, "Long")
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {word}")
    axes = normalize_dims(dim, input.ndim)
    return np.mean(input, axis=axes, keepdims=keepdim if dim is not None else False)


@mean.defvjp
def _(grad, input_shape, dim, keepdim):
    n = 1
    if dim is None:
        for s in input_shape:
            n *= s
    else:
        for a in normalize_dims(dim, len(input_shape)):
            n *= input_shape[a]
    return _unsqueeze_to(grad, input_shape, dim, keepdim) / n


@op("LinalgVectorNormBackward0", promote=None, name="_vector_norm")
def _vector_norm(input, ord=2, dim=None, keepdim=False):
    """The vector ``ord``-norm over ``dim`` (all elements when None). Matches torch.linalg.vector_norm."""
    axes = normalize_dims(dim, input.ndim)
    keep = keepdim if dim is not None else False
    a = np.abs(input)
    if ord == 2:
        return np.sqrt(np.sum(a * a, axis=axes, keepdims=keep))
    if ord == float("inf"):
        return np.max(a, axis=axes, keepdims=keep)
    if ord == float("-inf"):
        return np.min(a, axis=axes, keepdims=keep)
    if ord == 0:
        return np.sum(a != 0, axis=axes, keepdims=keep).astype(input.dtype)
    if ord == 1:
        return np.sum(a, axis=axes, keepdims=keep)
    return np.power(np.sum(np.power(a, ord), axis=axes, keepdims=keep), input.dtype.type(1.0 / ord))


@_vector_norm.defvjp
def _(grad, input, result, ord, dim, keepdim):
    # derivatives.yaml linalg_vector_norm_backward; the gradient where the norm is 0 is 0.
    from .elementwise import abs, pow, sign, where

    shape = input.shape
    g = _unsqueeze_to(grad, shape, dim, keepdim)
    r = _unsqueeze_to(result, shape, dim, keepdim)
    if ord == 0:
        return input * 0
    if ord == 1:
        return sign(input) * g
    if ord == 2:
        return input * where(r == 0, 0.0, g / r)
    if ord in (float("inf"), float("-inf")):
        mask = abs(input) == r
        count = sum(mask * 1.0, dim, True) if dim is not None else sum(mask * 1.0)
        return sign(input) * where(mask, g / count, 0.0)
    return input * pow(abs(input), ord - 2) * where(r == 0, 0.0, g / pow(r, ord - 1))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The ``p``-norm of ``input`` over ``dim`` (all elements when None); ``"fro"`` is the 2-norm.
    Matches torch.norm, which computes it with torch.linalg.vector_norm (grad_fn LinalgVectorNormBackward0);
    its gradient at 0 is 0.

    Raises:
        RuntimeError: for integer tensors; ValueError for an unsupported ``p``.
    """
    if p in ("fro", None):
        p = 2
    if isinstance(p, str):
        raise ValueError(f"norm(): p={p!r} is not supported (use a number or 'fro')")
    if dtype is not None:
        input = input.to(dtype)
    if input.data.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_DTYPE_WORDS.get(input.dtype.name, 'Long')}")
    return _vector_norm(input, float(p), dim, keepdim)


from ._core import register  # noqa: E402

register("norm", norm, "op")
install_method("norm", norm)


@op("SumBackward1", promote=None, method=True)
def sum_to_size(input, *size):
    """Sum ``input`` down to the broadcast-compatible shape ``size``. Matches torch.Tensor.sum_to_size.

    Raises:
        RuntimeError: if ``size`` is not expandable to ``input``'s shape.
    """
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    from ..autograd import sum_to

    out = sum_to(input, tuple(size))
    if out.shape != tuple(size):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(input.shape)}}}.")
    return out


@sum_to_size.defvjp
def _(grad, input_shape):
    from .shape import expand

    return expand(grad, input_shape)

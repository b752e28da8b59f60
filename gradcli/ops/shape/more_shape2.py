"""More of torch's index and shape functions: argwhere, nonzero_static and vander.

argwhere and nonzero_static give indices (int64, not differentiable) as torch.nonzero does. vander is built as
ATen builds it (aten/src/ATen/native/LinearAlgebra.cpp): a result of ``x``'s dtype promoted with int64, its first
column filled with ones, the others a copy of ``x`` turned in place into their cumulative product, then flipped
unless ``increasing``; so its graph is PyTorch's (CopySlices, FlipBackward0), and so is its backward, which
PyTorch refuses: the in-place cumulative product overwrites the values its own derivative saved (PyTorch's "one
of the variables needed for gradient computation has been modified by an inplace operation").
"""

from __future__ import annotations

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, op
from ..creation import zeros
from ..reduction.scans import cumprod
from .scatter import nonzero
from .views import flip, unsqueeze
from ..reduction.reductions import expand


@composite("argwhere", grad_fn="none (indices)", note="not differentiable (indices)", method=True,
           differentiable=False)
def argwhere(input):
    """The indices of the nonzero elements of ``input``, an int64 tensor of shape ``(n, input.ndim)`` in
    row-major order (``(n, 0)`` for a 0-d input). Matches torch.argwhere (torch.nonzero's result); not
    differentiable. Under vmap it runs once per example (an op without a batching rule, as aten::argwhere in
    PyTorch), where torch.nonzero is refused; examples with different numbers of nonzero elements fail to stack
    (stack's error, as PyTorch's)."""
    return _argwhere(to_tensor(input))


@op("argwhere", grad_fn=None, promote=None, differentiable=False, public=False, note="not differentiable")
def _argwhere(input):
    """torch.nonzero's indices of ``input``: int64 of shape ``(n, input.ndim)``."""
    if input.ndim == 0:
        return np.zeros((1 if input != 0 else 0, 0), dtype=np.int64)
    return np.argwhere(input).astype(np.int64)


@composite("nonzero_static", grad_fn="none (indices)", note="not differentiable (indices)", method=True,
           differentiable=False)
def nonzero_static(input, *, size, fill_value=-1):
    """torch.nonzero's indices, exactly ``size`` rows: the first ``size`` nonzero elements' indices, then rows
    of ``fill_value``. An int64 tensor of shape ``(size, input.ndim)``. Matches torch.nonzero_static; not
    differentiable.

    Raises:
        RuntimeError: for a negative ``size`` (PyTorch's message).
        TypeError: for a ``size`` that is not an int.
    """
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"nonzero_static(): argument 'size' must be int, not {type(size).__name__}")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = nonzero(input).data
    out = np.full((size, found.shape[1]), fill_value, dtype=np.int64)
    k = min(size, found.shape[0])
    out[:k] = found[:k]
    return Tensor(out)


@composite("vander", grad_fn="FlipBackward0 | CopySlices (increasing)",
           note="d/dx of x^k is k x^(k-1), but PyTorch's backward refuses: its in-place cumprod overwrites "
                "what cumprod's derivative saved", method=False)
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-d ``x``: column ``i`` is ``x ** (N - 1 - i)`` (``x ** i`` with
    ``increasing``), ``N`` columns (default ``len(x)``), in ``x``'s dtype promoted with int64 (integers and
    bools give int64). Matches torch.vander, built as ATen builds it: its backward raises PyTorch's error for a
    value modified in place.

    Raises:
        RuntimeError: for an ``x`` that is not 1-d, or a negative ``N`` (PyTorch's messages).
    """
    x = to_tensor(x)
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = dtypes.from_numpy(dtypes.promote_types(x.data.dtype, np.dtype(np.int64)))
    # zeros of the result's shape made from x, so that under vmap the writes below land in a batched tensor
    # (every element is overwritten: x's nan and inf do not survive the product)
    result = expand(unsqueeze(x, 1), (x.shape[0], n)).to(dtype) * 0 if x.shape[0] and n else \
        zeros(x.shape[0], n, dtype=dtype)
    if n > 0:
        result[:, 0] = 1
        if n > 1:
            result[:, 1:] = expand(unsqueeze(x, 1), (x.shape[0], n - 1))
            result[:, 1:] = cumprod(result[:, 1:], 1)  # ATen's cumprod_out(tail, tail, 1): in place on what it saved
    return result if increasing else flip(result, [1])

"""Quantiles: quantile and nanquantile.

quantile follows PyTorch 2.13's aten/src/ATen/native/Sorting.cpp (quantile_impl, quantile_compute): sort, ranks
``q * (n - 1)`` (nanquantile: over the non-NaN values), gather below and above, lerp, then an in-place squeeze,
so that the result's grad_fn is PyTorch's SqueezeBackward4 and the gradient flows through sort and gather as
there.
"""

from __future__ import annotations

import numpy as np

from ...engine.tensor import Tensor, normalize_dim, to_tensor
from ..core.declare import composite
from ..elementwise.comparison import where
from ..shape.indexing import gather
from .order import sort
from ..linalg.products import _squeeze_result
from ..shape.views import flatten, reshape, transpose, unsqueeze


# ------------------------------------------------------------------------------------------------ quantile
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _lerp(start, end, weight):
    """at::lerp's CPU formula: ``start + w (end - start)`` for ``|w| < 0.5``, else ``end - (end - start) (1 - w)``."""
    return where(abs(weight) < 0.5, start + weight * (end - start), end - (end - start) * (1 - weight))


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    fname = "quantile"  # PyTorch's messages name quantile for nanquantile too
    input = to_tensor(input)
    x = input.data
    if x.size == 0:
        raise RuntimeError(f"{fname}() input tensor must be non-empty")
    if isinstance(q, Tensor):
        qa = q.data
        if qa.ndim > 1:
            raise RuntimeError(f"{fname}() q must be a scalar or 1D tensor")
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{fname}() q must be in the range [0, 1] but got {q:g}")
        qa = None
    if x.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{fname}() input tensor must be either float or double dtype")
    if qa is not None:
        if qa.dtype != x.dtype:
            raise RuntimeError(f"{fname}() q tensor must be same dtype as the input tensor")
        if not np.all((qa >= 0) & (qa <= 1)):
            raise RuntimeError(f"{fname}() q values must be in the range [0, 1]")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{fname}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    nd = input.ndim
    if dim is None:
        sorted_ = sort(flatten(input)).values
        out_shape = (1,) * nd if keepdim else ()
    else:
        d = normalize_dim(dim, max(nd, 1))
        if nd == 0 or d == nd - 1:
            sorted_ = sort(input).values if nd else reshape(input, (1,))
        else:
            sorted_ = sort(transpose(unsqueeze(input, -1), d, -1)).values
        shape = list(input.shape)
        if nd:
            if keepdim:
                shape[d] = 1
            else:
                del shape[d]
        out_shape = tuple(shape)
    n = sorted_.shape[-1]
    sorted_ = reshape(sorted_, out_shape + (n,))
    s = sorted_.data
    qv = (np.asarray(q, dtype=x.dtype) if qa is None else qa).reshape(-1)  # (nq,)
    isnan = np.isnan(s)
    if ignore_nan:
        ranks = qv * (np.sum(~isnan, axis=-1, keepdims=True) - 1).astype(x.dtype)
        ranks = np.where(ranks < 0, x.dtype.type(0), ranks)
    else:
        last = n - 1
        ranks = np.broadcast_to(qv * x.dtype.type(last), isnan.shape[:-1] + (qv.size,))
        ranks = np.where(isnan.any(axis=-1, keepdims=True), x.dtype.type(last), ranks)
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)
    below = ranks.astype(np.int64)
    values = gather(sorted_, -1, Tensor(below))
    if interpolation in ("linear", "midpoint"):
        weights = np.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        above = np.ceil(ranks).astype(np.int64)
        values = _lerp(values, gather(sorted_, -1, Tensor(above)), Tensor(weights.astype(x.dtype)))
    if qa is not None and qa.ndim == 1:
        values = transpose(unsqueeze(values, 0), 0, -1)
    return _squeeze_result(values, -1)  # squeeze_(-1): SqueezeBackward4, as matmul's


@composite("quantile", grad_fn="SqueezeBackward4", method=True,
           note="the gradient of the lerp between the two sorted values around rank q (n - 1), sent back "
                "through gather and sort")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The ``q``-th quantiles of ``input`` (all elements, or along ``dim``): the sorted values at rank ``q * (n -
    1)``, interpolated by ``interpolation`` (linear, lower, higher, midpoint, nearest). A 1-d ``q`` puts the
    quantiles in a new first dimension. NaN anywhere in a slice gives NaN. Float32/float64; ``q`` (a number, or
    a 0-d or 1-d tensor of the input's dtype) is not differentiable. Computed as PyTorch's quantile_impl (sort,
    gather, lerp, squeeze_: grad_fn SqueezeBackward4). Matches torch.quantile.

    Raises:
        RuntimeError: for an empty input, a q out of [0, 1] or of more than 1 dimension or of another dtype, an
            integer input, or an unknown interpolation (PyTorch's messages).
        NotImplementedError: for ``out``.
    """
    if out is not None:
        raise NotImplementedError("gradcli's quantile does not write into out=")
    return _quantile(input, q, dim, keepdim, interpolation, False)


@composite("nanquantile", grad_fn="SqueezeBackward4", method=True, note=quantile.note + " (NaN ignored)")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """quantile ignoring NaN: the ranks count the non-NaN values of each slice (a slice of NaN only gives NaN).
    Matches torch.nanquantile (grad_fn SqueezeBackward4).

    Raises:
        RuntimeError: as quantile (PyTorch's messages name quantile).
    """
    if out is not None:
        raise NotImplementedError("gradcli's nanquantile does not write into out=")
    return _quantile(input, q, dim, keepdim, interpolation, True)

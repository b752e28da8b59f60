"""Histograms of floating tensors: torch.histogram and torch.histogramdd.

As ATen computes them (aten/src/ATen/native/Histogram.cpp): the bin edges are ``linspace(min, max, bins + 1)``
in the input's dtype (``range``, else the data's minimum and maximum, widened by 0.5 each way when they are
equal) or the edges given; an element falls in the bin ``edges[i] <= x < edges[i + 1]``, the last bin closed,
elements outside the edges ignored; ``weight`` adds its value instead of 1; ``density`` divides by the total and
the bins' widths. Counting is NumPy's (``np.histogramdd`` on the same edges).

PyTorch declares no derivative for them: with an input that requires grad their results carry PyTorch's
``NotImplemented`` node, whose backward raises PyTorch's error (histogram's two results share one node; of
histogramdd's, the counts have one node and the edges another, as ATen computes them in two ops).
"""

from __future__ import annotations

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, not_implemented_for, op
from ..creation import linspace
from ..linalg.inverses import _named_tuple

return_types_histogram = _named_tuple("histogram", ("hist", "bin_edges"))
return_types_histogramdd = _named_tuple("histogramdd", ("hist", "bin_edges"))


def _not_implemented(aten: str):
    def rule(grads):
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")
    return rule


def _no_forward_mode(aten: str):
    def rule(input_t):
        # PyTorch's text for an op without a derivatives.yaml entry (autograd's NotImplemented kernel)
        raise NotImplementedError(f"Trying to use forward AD with aten::{aten} that does not support it.")
    return rule


def _range_edges(x: np.ndarray, bins: list, range_) -> list:
    """The outer edges of each dimension: ``range_`` (min0, max0, min1, max1, ...), else the data's extremes."""
    d = x.shape[-1]
    if range_ is not None:
        flat = [float(v) for v in range_]
        if len(flat) != 2 * d:
            raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should have {2 * d} "
                               f"elements, but got {len(flat)}")
        pairs = [(flat[2 * i], flat[2 * i + 1]) for i in range(d)]
    elif x.size:
        flat = x.reshape(-1, d)
        pairs = [(float(flat[:, i].min()), float(flat[:, i].max())) for i in range(d)]
    else:
        pairs = [(0.0, 1.0)] * d  # ATen's range of an empty input
    out = []
    for i, (lo, hi) in enumerate(pairs):
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension {i}'s range [{lo:g}, {hi:g}] is not finite")
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                               f"dimension {i}")
        if lo == hi:  # NumPy's and ATen's widening of an empty range
            lo, hi = lo - 0.5, hi + 0.5
        out.append((lo, hi))
    return out


def _edges(x: np.ndarray, bins, range_) -> list:
    """The bin edges of each dimension of ``x`` (``(..., D)``), in ``x``'s dtype."""
    d = x.shape[-1]
    if isinstance(bins, (Tensor, np.ndarray)) or (isinstance(bins, (list, tuple)) and bins and
                                                  isinstance(bins[0], (Tensor, np.ndarray))):
        given = [bins] if isinstance(bins, (Tensor, np.ndarray)) else list(bins)
        if len(given) != d:
            raise RuntimeError(f"torch.histogramdd: expected {d} sequences of bin edges for each dimension of the "
                               f"input tensor, but got {len(given)}")
        out = [to_tensor(e).data for e in given]
        for i, e in enumerate(out):
            if e.dtype != x.dtype:
                raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                                   f"but got input with dtype {_c_name(x)} and bins for dimension {i} with dtype "
                                   f"{_c_name(e)}")
        return out
    counts = [bins] * d if isinstance(bins, int) else [int(b) for b in bins]
    if len(counts) != d:
        raise RuntimeError(f"torch.histogramdd: expected {d} bin counts for each dimension of the input tensor, "
                           f"but got {len(counts)}")
    for i, b in enumerate(counts):
        if b <= 0:
            raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {b} for dimension {i}")
    return [linspace(lo, hi, b + 1, dtype=_dtype_of(x)).data for (lo, hi), b in zip(_range_edges(x, counts, range_),
                                                                                    counts)]


def _dtype_of(x: np.ndarray):
    return dtypes.from_numpy(x.dtype)


def _counts(input, weight, edges: list, density: bool) -> np.ndarray:
    """The histogram of ``input`` (``(..., D)``) over ``edges``, in ``input``'s dtype."""
    if input.dtype.kind != "f":
        raise not_implemented_for("histogramdd", input.dtype)
    d = input.shape[-1]
    sample = input.reshape(-1, d).astype(np.float64)
    w = None
    if weight is not None:
        if weight.dtype != input.dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                               "should have the same dtype, but got input("
                               f"{_c_name(input)}), and weight({_c_name(weight)})")
        w = weight.reshape(-1).astype(np.float64)
    hist, _ = np.histogramdd(sample, bins=[e.astype(np.float64) for e in edges], weights=w)
    hist = hist.astype(input.dtype)
    if density:
        hist = hist / hist.sum(dtype=input.dtype)
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = len(e) - 1
            hist = hist / np.diff(e).reshape(shape)
    return hist.astype(input.dtype, copy=False)


def _c_name(a: np.ndarray) -> str:
    return {"float32": "float", "float64": "double", "float16": "c10::Half"}.get(a.dtype.name, a.dtype.name)


@op("_histogram", grad_fn="NotImplemented", inputs=2, promote=None, multi_output=True, public=False,
    note="no derivative (PyTorch declares none)")
def _histogram(input, weight, edges, density):
    """(counts, edges) of a 1-d histogram (torch.histogram)."""
    return _counts(input.reshape(-1, 1), None if weight is None else weight.reshape(-1), [edges], density), \
        edges.copy()


_histogram.defvjp(_not_implemented("histogram"))
_histogram.defjvp(_no_forward_mode("histogram"))


@op("_histogramdd_from_bin_cts", grad_fn="NotImplemented", inputs=2, promote=None, public=False,
    note="no derivative (PyTorch declares none)")
def _histogramdd_counts(input, weight, edges, density):
    """The counts of a D-dimensional histogram (torch.histogramdd)."""
    return _counts(input, weight, list(edges), density)


_histogramdd_counts.defvjp(_not_implemented("_histogramdd_from_bin_cts"))
_histogramdd_counts.defjvp(_no_forward_mode("_histogramdd_from_bin_cts"))


@op("_histogramdd_from_bin_tensors", grad_fn="NotImplemented", inputs=2, promote=None, public=False,
    note="no derivative (PyTorch declares none)")
def _histogramdd_counts_at_edges(input, weight, edges, density):
    """The counts of a D-dimensional histogram over the bin edges given (torch.histogramdd)."""
    return _counts(input, weight, list(edges), density)


_histogramdd_counts_at_edges.defvjp(_not_implemented("_histogramdd_from_bin_tensors"))
_histogramdd_counts_at_edges.defjvp(_no_forward_mode("_histogramdd_from_bin_tensors"))


@op("_histogramdd_bin_edges", grad_fn="NotImplemented", promote=None, multi_output=True, public=False,
    note="no derivative (PyTorch declares none)")
def _histogramdd_edges(input, edges):
    """The bin edges of a D-dimensional histogram, one tensor per dimension (torch.histogramdd)."""
    return tuple(e.copy() for e in edges)


_histogramdd_edges.defvjp(_not_implemented("_histogramdd_bin_edges"))
_histogramdd_edges.defjvp(_no_forward_mode("_histogramdd_bin_edges"))


@composite("histogram", grad_fn="NotImplemented", note="no derivative (PyTorch declares none)", method=True)
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """The histogram of ``input``'s elements: ``bins`` equal-width bins over ``range`` (default the data's
    minimum and maximum), or the bin edges given as a 1-d tensor. Returns ``(hist, bin_edges)`` in ``input``'s
    floating dtype; ``weight`` (same shape and dtype) adds its values, ``density`` normalizes to a density.
    Matches torch.histogram.

    Raises:
        NotImplementedError: for integer or bool tensors; RuntimeError for ``bins <= 0``, a range that is not
            finite or with min > max, and a weight of another dtype (PyTorch's messages).
    """
    x = to_tensor(input)
    if x.data.dtype.kind != "f":
        raise not_implemented_for("histogramdd", x.data.dtype)
    edges = _edges(x.data.reshape(-1, 1), bins, range)
    if weight is not None and tuple(to_tensor(weight).shape) != tuple(x.shape):
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(x.shape) + [1]} and weight with shape {list(to_tensor(weight).shape)}")
    hist, bin_edges = _histogram(x, weight, edges[0], bool(density))
    return return_types_histogram(hist, bin_edges)


@composite("histogramdd", grad_fn="NotImplemented", note="no derivative (PyTorch declares none)")
def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """The D-dimensional histogram of the points ``input`` (``(..., D)``, the last dimension their
    coordinates): ``bins`` an int (for every dimension), one int per dimension, or one 1-d tensor of edges per
    dimension; ``range`` the flat ``[min0, max0, min1, max1, ...]``. Returns ``(hist, bin_edges)``: ``hist`` of
    shape ``(bins0, ..., binsD-1)`` and a tuple of D edge tensors, in ``input``'s floating dtype. Matches
    torch.histogramdd.

    Raises:
        NotImplementedError: for integer or bool tensors; RuntimeError for bad bins, ranges or weights
            (PyTorch's messages).
    """
    x = to_tensor(input)
    if x.data.dtype.kind != "f":
        raise not_implemented_for("histogramdd", x.data.dtype)
    if x.ndim < 1:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 1 dimension, but got 0")
    edges = _edges(x.data, bins, range)
    if isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor):  # the edges given are returned
        hist = _histogramdd_counts_at_edges(x, weight, tuple(edges), bool(density))
        return return_types_histogramdd(hist, tuple(bins))
    hist = _histogramdd_counts(x, weight, tuple(edges), bool(density))
    bin_edges = _histogramdd_edges(x, tuple(edges))
    return return_types_histogramdd(hist, tuple(bin_edges))

"""Searching and counting: isin, searchsorted, bucketize, histc, bincount, unique, unique_consecutive.

None of them is differentiable in PyTorch (their results are indices, counts or a selection whose
derivatives.yaml entry is ``output_differentiability: [False]`` or absent), so each is a composite on the input's
values that returns new tensors without a graph node. Sorting and counting are numpy's (``searchsorted``,
``unique``, ``bincount``, ``histogram``), whose results equal PyTorch's for these definitions.
"""

from __future__ import annotations

import numpy as np

from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, not_implemented_for


def _data(x) -> np.ndarray:
    """The values of a tensor or a Python number (as a 0-d array of PyTorch's inferred dtype)."""
    if isinstance(x, Tensor):
        return x.data
    return to_tensor(x).data


def _index_dtype(out_int32: bool):
    return np.int32 if out_int32 else np.int64


# ---------------------------------------------------------------------------------------------- isin

@composite("isin", grad_fn="none (a bool tensor)", note="not differentiable", differentiable=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` occurs in ``test_elements`` (either may be a number), as a bool
    tensor of ``elements``' shape; ``invert=True`` negates it. Matches torch.isin."""
    a, b = _data(elements), _data(test_elements)
    return Tensor(np.isin(a, b.ravel(), invert=invert).reshape(a.shape))


# ------------------------------------------------------------------------------ searchsorted, bucketize

def _side(right: bool, side) -> str:
    if side is None:
        return "right" if right else "left"
    if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                           "while right was True")
    return side


@composite("searchsorted", grad_fn="none (indices)", note="not differentiable (indices)", differentiable=False)
def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None):
    """For each of ``values``, the index in the innermost dimension of ``sorted_sequence`` where it would be
    inserted to keep it sorted: the first such index, or with ``right=True`` (``side="right"``) the last.
    ``sorted_sequence`` is 1-d, or has ``values``' leading dimensions; ``values`` may be a number (a 0-d result);
    ``sorter`` gives the indices that sort an unsorted sequence. int64, or int32 with ``out_int32``. Matches
    torch.searchsorted.

    Raises:
        RuntimeError: for leading dimensions that differ, or a ``side`` other than "left"/"right" (PyTorch's
            messages).
    """
    how = _side(right, side)
    seq, vals = _data(sorted_sequence), _data(values)
    if sorter is not None:
        seq = np.take_along_axis(seq, _data(sorter).astype(np.int64), axis=-1)
    if seq.ndim <= 1:
        out = np.searchsorted(seq.reshape(-1), vals, side=how)
    else:
        if seq.shape[:-1] != vals.shape[:-1]:
            raise RuntimeError(
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                "boundaries tensor and input value tensor must match, but we got boundaries tensor "
                f"{list(seq.shape)} and input value tensor {list(vals.shape)}")
        flat_seq = seq.reshape(-1, seq.shape[-1])
        flat_vals = vals.reshape(-1, vals.shape[-1])
        out = np.stack([np.searchsorted(s, v, side=how) for s, v in zip(flat_seq, flat_vals)]).reshape(vals.shape)
    return Tensor(np.asarray(out).astype(_index_dtype(out_int32)))


@composite("bucketize", grad_fn="none (indices)", note="not differentiable (indices)", differentiable=False)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each element of ``input`` (a tensor or a number) among the sorted 1-d ``boundaries``:
    the index ``i`` with ``boundaries[i-1] < x <= boundaries[i]``, or with ``right=True`` ``boundaries[i-1] <= x
    < boundaries[i]``. int64, or int32 with ``out_int32``. Matches torch.bucketize.

    Raises:
        RuntimeError: for boundaries that are not 1-d (PyTorch's message).
    """
    b = _data(boundaries)
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    out = np.searchsorted(b, _data(input), side="right" if right else "left")
    return Tensor(np.asarray(out).astype(_index_dtype(out_int32)))


# ----------------------------------------------------------------------------------- histc, bincount

@composite("histc", grad_fn="none (counts)", note="not differentiable (counts)", method=True, differentiable=False)
def histc(input, bins=100, min=0, max=0):
    """The histogram of ``input``'s elements in ``bins`` equal-width bins between ``min`` and ``max`` (the data's
    minimum and maximum when both are 0 or equal; elements outside are ignored), with the input's dtype. Matches
    torch.histc.

    Raises:
        NotImplementedError: for integer or bool tensors; RuntimeError for ``bins <= 0`` or ``max < min``
            (PyTorch's messages).
    """
    x = _data(input)
    if x.dtype.kind != "f":
        raise not_implemented_for("histogram_cpu", x.dtype)
    if bins <= 0:
        raise RuntimeError("torch.histc(): bins must be > 0, but got " + str(bins) + " for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if hi < lo:
        raise RuntimeError(f"torch.histc(): max must be larger than min, but got min {lo} max {hi}")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc(): range of [{lo}, {hi}] is not finite")
    vals = x.ravel()
    vals = vals[(vals >= lo) & (vals <= hi)]
    counts, _ = np.histogram(vals, bins=int(bins), range=(lo, hi))
    return Tensor(counts.astype(x.dtype))


@composite("bincount", grad_fn="none (counts)", note="not differentiable (counts)", method=True,
           differentiable=False)
def bincount(input, weights=None, minlength=0):
    """How many times each value ``0 .. max(input)`` occurs in the 1-d non-negative integer tensor ``input``
    (at least ``minlength`` bins); with ``weights`` (``input``'s shape), the sum of their weights instead.
    int64 counts; weighted sums are float32 for float32 weights and float64 otherwise. Matches torch.bincount.

    Raises:
        RuntimeError: for an input that is not 1-d non-negative integers, a negative ``minlength``, or weights of
            another length (PyTorch's messages).
    """
    x = _data(input)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if x.ndim != 1 or x.dtype.kind not in "iu" or (x.size and x.min() < 0):
        if x.dtype.kind in "fb":
            raise not_implemented_for("bincount_cpu", x.dtype)
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return Tensor(np.bincount(x, minlength=minlength).astype(np.int64))
    w = _data(weights)
    if w.ndim != 1 or w.shape[0] != x.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out = np.bincount(x, weights=w.astype(np.float64), minlength=minlength)
    return Tensor(out.astype(np.float32 if w.dtype == np.float32 else np.float64))


# --------------------------------------------------------------------------- unique, unique_consecutive

def _results(values, inverse, counts, return_inverse, return_counts):
    out = [Tensor(values)]
    if return_inverse:
        out.append(Tensor(inverse.astype(np.int64)))
    if return_counts:
        out.append(Tensor(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


@composite("unique", grad_fn="none (a selection)", note="not differentiable", method=True, differentiable=False)
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of ``input`` (flattened), or with ``dim`` its distinct slices along ``dim``, in
    ascending order; with ``return_inverse`` also where each element (slice) went (``input``'s shape, or
    ``input.size(dim)``), with ``return_counts`` how many times each occurs. Returns a tensor, or a tuple of
    (output, inverse, counts) in that order. Matches torch.unique (whose CPU kernel sorts whatever ``sorted``
    says).

    Raises:
        IndexError: for a ``dim`` out of range (PyTorch's message).
    """
    x = _data(input)
    if dim is None:
        values, inverse, counts = np.unique(x.ravel(), return_inverse=True, return_counts=True)
        return _results(values, inverse.reshape(x.shape), counts, return_inverse, return_counts)
    d = _dim(dim, x.ndim)
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True, axis=d)
    return _results(values, inverse.reshape(-1), counts, return_inverse, return_counts)


def _dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n



@composite("unique_consecutive", grad_fn="none (a selection)", note="not differentiable", method=True,
           differentiable=False)
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``input`` (flattened, or its slices along ``dim``) with each run of equal consecutive elements kept once;
    with ``return_inverse`` the run each element belongs to, with ``return_counts`` each run's length. Returns a
    tensor or a tuple (output, inverse, counts). Matches torch.unique_consecutive.

    Raises:
        IndexError: for a ``dim`` out of range (PyTorch's message).
    """
    x = _data(input)
    if dim is None:
        flat = x.ravel()
        change = np.ones(flat.shape[0], dtype=bool)
        change[1:] = flat[1:] != flat[:-1]
        shape_inverse = x.shape
        take = flat
    else:
        d = _dim(dim, x.ndim)
        take = np.moveaxis(x, d, 0)
        change = np.ones(take.shape[0], dtype=bool)
        if take.shape[0] > 1:
            change[1:] = np.any((take[1:] != take[:-1]).reshape(take.shape[0] - 1, -1), axis=1)
        shape_inverse = (take.shape[0],)
    starts = np.flatnonzero(change)
    inverse = (np.cumsum(change) - 1).reshape(shape_inverse)
    counts = np.diff(np.append(starts, change.shape[0]))
    values = take[starts] if dim is None else np.moveaxis(take[starts], 0, _dim(dim, x.ndim))
    return _results(np.ascontiguousarray(values), inverse, counts, return_inverse, return_counts)


"""quantile/nanquantile, scatter_reduce and masked_scatter.

quantile follows PyTorch 2.13's aten/src/ATen/native/Sorting.cpp (quantile_impl, quantile_compute): sort, ranks
``q * (n - 1)`` (nanquantile: over the non-NaN values), gather below and above, lerp, then an in-place squeeze,
so that the result's grad_fn is PyTorch's SqueezeBackward4 and the gradient flows through sort and gather as
there. scatter_reduce and masked_scatter follow derivatives.yaml with FunctionsManual.cpp's
scatter_reduce_backward / scatter_reduce_jvp and masked_scatter_backward. Derivative rules are written with ops
of the table, so that they can be differentiated again.
"""

from __future__ import annotations

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor, normalize_dim, to_tensor
from ..core.apply import infer_size
from ..core.declare import composite, op
from ..elementwise.comparison import where
from ..shape.indexing import _gather_key, gather
from ..nn.layers import sort
from ..linalg.products import _squeeze_result
from ..shape.scatter import (_check_scatter, _index_arg, _masked_scatter_zeros, _masked_select, _scatter_add,
                      _src_part, _tensor_arg)
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


# ------------------------------------------------------------------------------------------ scatter_reduce
_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce: str, dtype: np.dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    if info is None:  # bool
        return reduce == "amin"
    return info.min if reduce == "amax" else info.max


def _scatter_count(shape, dim, index, include_self: bool) -> np.ndarray:
    """How many values reduce into each position (self counted when included), at least 1 (scatter_reduce's
    mean)."""
    count = np.full(shape or (1,), 1 if include_self else 0, dtype=np.int64)
    i = index.reshape(index.shape or (1,))
    np.add.at(count, _gather_key(count.shape, normalize_dim(dim, count.ndim), i), 1)
    count[count == 0] = 1
    return count.reshape(shape)


@op("scatter_reduce", grad_fn="ScatterReduceBackward0", inputs=2, promote=None, public=False,
    note="sum/mean: the gradient (divided by the count) gathered; prod: the product of the others; amax/amin: "
         "shared among the elements equal to the result")
def _scatter_reduce(input, src, dim, index, reduce, include_self):
    """``input`` with ``src``'s elements reduced into it at ``index`` along ``dim``."""
    out = input.reshape(input.shape or (1,)).copy()
    i = index.reshape(index.shape or (1,))
    d = normalize_dim(dim, out.ndim)
    key = _gather_key(out.shape, d, i)
    vals = _src_part(src, index)
    if not include_self:
        out[key] = _identity(reduce, out.dtype)
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
             "amin": np.minimum}[reduce]
    ufunc.at(out, key, vals)
    if reduce == "mean":
        count = _scatter_count(out.shape, d, i, include_self)
        out = out // count if out.dtype.kind in "iub" else (out / count).astype(out.dtype)
    return out.reshape(input.shape)


def _scatter_reduce_partials(input, src, result, dim, index, reduce, include_self):
    """``(d out / d self, d out_at_index / d src)`` elementwise, as FunctionsManual.cpp's scatter_reduce_backward
    builds them for a gradient of ones (prod: exact where there are zeros; amax/amin: shared among ties)."""
    idx = Tensor(index)
    if reduce == "sum":
        return 1.0, 1.0
    if reduce == "mean":
        n = _scatter_count(tuple(input.shape), dim, index, include_self)
        inv = (1 / n).astype(np.float64 if input.dtype == np.float64 else np.float32)
        if isinstance(input, Tensor):  # under create_graph: Tensors only in the arithmetic
            inv = Tensor(inv)
        return inv, gather(inv, dim, idx)
    if reduce == "prod":
        masked_self = where(input == 0, 1.0, input)
        masked_self_result = _scatter_reduce(masked_self, src, dim, index, reduce, include_self)
        d_self = masked_self_result / masked_self
        src_zero = src == 0
        zero_f = where(src_zero, 1.0, 0.0 * src)
        src_num_zeros = gather(_scatter_add(0.0 * input, zero_f, dim, index), dim, idx)
        single = src_zero & (src_num_zeros == 1)
        masked_src_result = _scatter_reduce(input, where(single, 1.0, src), dim, index, reduce, include_self)
        d_src = where(single, gather(masked_src_result, dim, idx),
                      gather(result, dim, idx) / where(src_zero, 1.0, src))
        return d_self, d_src
    value = gather(result, dim, idx)
    self_is = where(input == result, 1.0, 0.0 * input)
    src_is = where(src == value, 1.0, 0.0 * src)
    share = 1 / _scatter_add(self_is, src_is, dim, index)
    return self_is * share, src_is * gather(share, dim, idx)


_PROD_ZEROS_ERROR = ("scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are scattered to "
                     "the same position in self")


@op("_scatter_reduce_delayed_error", grad_fn="Error", promote=None,
    note="no derivative: its backward raises PyTorch's DelayedError message")
def _delayed_error(input):
    """The identity, whose backward raises (PyTorch's DelayedError node, named Error): scatter_reduce's prod
    gradient of src where more than one zero meets in one position has no second derivative."""
    return input


@_delayed_error.defvjp
def _(grad):
    raise RuntimeError(_PROD_ZEROS_ERROR)


_delayed_error.defjvp_unsupported("scatter_reduce")


@_scatter_reduce.defvjp
def _(grad, input, src, result, dim, index, reduce, include_self, needs_input_grad):
    d_self, d_src = _scatter_reduce_partials(input, src, result, dim, index, reduce, include_self)
    gs = gsrc = None
    if needs_input_grad[0]:
        gs = grad * d_self
        if not include_self:  # grad_self.scatter(dim, index, 0): the self values that were replaced
            keep = np.ones(tuple(input.shape) or (1,), dtype=bool)
            keep[_gather_key(keep.shape, normalize_dim(dim, keep.ndim), index.reshape(index.shape or (1,)))] = False
            gs = where(keep.reshape(tuple(input.shape)), gs, 0.0)
    if needs_input_grad[1]:
        if tuple(index.shape) != tuple(src.shape):  # PyTorch's engine refuses its index-shaped gradient too
            raise RuntimeError(f"Function ScatterReduceBackward0 returned an invalid gradient at index 1 - got "
                               f"{list(index.shape)} but expected shape compatible with {list(src.shape)}")
        gsrc = gather(grad, dim, Tensor(index)) * d_src
        if reduce == "prod" and isinstance(gsrc, Tensor):  # create_graph: PyTorch's DelayedError past 1 zero
            zeros = np.zeros(tuple(input.shape) or (1,))
            i = index.reshape(index.shape or (1,))
            np.add.at(zeros, _gather_key(zeros.shape, normalize_dim(dim, zeros.ndim), i),
                      (_src_part(np.asarray(src.data if isinstance(src, Tensor) else src), index) == 0))
            if (zeros > 1).any():
                gsrc = _delayed_error(gsrc)
    return gs, gsrc


@_scatter_reduce.defjvp
def _(input_t, src_t, input, src, result, dim, index, reduce, include_self):
    # scatter_reduce_jvp: linear for sum and mean; for prod, amax and amin the tangents weighted by the same
    # partial derivatives as the backward's (each element contributes to one output)
    d_self, d_src = _scatter_reduce_partials(input, src, result, dim, index, reduce, include_self)
    t = input_t * d_self
    if not include_self:
        keep = np.ones(tuple(input.shape) or (1,), dtype=bool)
        keep[_gather_key(keep.shape, normalize_dim(dim, keep.ndim), index.reshape(index.shape or (1,)))] = False
        t = where(Tensor(keep.reshape(tuple(input.shape))), t, 0.0)
    return _scatter_add(t, src_t * d_src, dim, index)


@composite("scatter_reduce", grad_fn="ScatterReduceBackward0", method=True, note=_scatter_reduce.note)
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``input`` with ``src``'s elements reduced into the positions ``index`` gives along ``dim`` by ``reduce``:
    "sum", "prod", "mean" (integers: floor division), "amax" or "amin"; with ``include_self=False`` the
    input's values at those positions are left out of the reduction. Matches torch.scatter_reduce (grad_fn
    ScatterReduceBackward0; gradients as FunctionsManual.cpp's scatter_reduce_backward: prod exact with zeros,
    amax/amin shared among equal values).

    Raises:
        RuntimeError: for an unknown reduce, an index that is not int64/int32 or out of range or larger than
            the input, or a src of another dtype (PyTorch's messages).
    """
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    x = to_tensor(input)
    idx = _index_arg("scatter", index)
    s = to_tensor(src)
    _check_scatter("scatter", x.data, dim, idx, s.data)
    return _scatter_reduce(x, s, dim, idx, reduce, bool(include_self))


# ------------------------------------------------------------------------------------------ masked_scatter
@op("masked_scatter", grad_fn="MaskedScatterBackward0", inputs=2, promote=None, public=False,
    note="d/dinput = the gradient where the mask is false; d/dsource = the gradient's masked elements, in order")
def _masked_scatter(input, source, mask):
    """``input`` (broadcast with ``mask``) with ``source``'s first elements written, in order, where ``mask``
    is true."""
    shape = np.broadcast_shapes(input.shape, mask.shape)
    out = np.broadcast_to(input, shape).copy()
    m = np.broadcast_to(mask, shape)
    out[m] = source.reshape(-1)[:int(m.sum())]
    return out


@_masked_scatter.defvjp
def _(grad, source_shape, mask, needs_input_grad):
    # derivatives.yaml masked_scatter: self: grad.masked_fill(mask, 0); source: masked_scatter_backward
    gi = where(mask, 0.0, grad) if needs_input_grad[0] else None
    gs = None
    if needs_input_grad[1]:
        selected = _masked_select(grad, mask)  # (k,)
        n = int(np.prod(source_shape))
        first = np.arange(n) < int(np.broadcast_to(mask, tuple(grad.shape)).sum())
        gs = reshape(_masked_scatter_zeros(selected, first, (n,)), tuple(source_shape))
    return gi, gs


_masked_scatter.defjvp_linear()  # derivatives.yaml: self_t.masked_scatter(mask, source_t)


@composite("masked_scatter", grad_fn="MaskedScatterBackward0", method=True, note=_masked_scatter.note)
def masked_scatter(input, mask, source):
    """``input`` with the elements of ``source`` (in row-major order) copied to where the bool ``mask`` is true
    (``input`` and ``mask`` broadcast together). Matches torch.masked_scatter (grad_fn MaskedScatterBackward0).

    Raises:
        RuntimeError: for a mask that is not bool, a source of another dtype or with fewer elements than the
            mask's true values, or shapes that do not broadcast (PyTorch's messages).
    """
    x = to_tensor(input)
    m = _tensor_arg("masked_scatter", "mask", 2, mask)
    s = to_tensor(source)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{dtypes.scalar_type_name(m.dtype)}")
    if s.data.dtype != x.data.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{dtypes.scalar_type_name(x.data.dtype)} and {dtypes.scalar_type_name(s.data.dtype)}")
    shape = infer_size(m.shape, tuple(x.shape))
    if int(np.broadcast_to(m, shape).sum()) > s.data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return _masked_scatter(x, s, m)

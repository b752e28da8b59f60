"""More scatters: index_reduce (and ``Tensor.index_reduce_``), put (and ``Tensor.put_``), ``Tensor.masked_scatter_``
and ``Tensor.fill_diagonal_``.

Each follows PyTorch 2.13: grad_fn names (IndexReduceBackward0, PutBackward0, MaskedScatterBackward0; fill_diagonal_
fills a strided view of the tensor in place, so its history is PyTorch's CopySlices), derivatives
(tools/autograd/derivatives.yaml with FunctionsManual.cpp's index_reduce_backward, written with ops of the table
so that they can be differentiated again) and error texts (aten/src/ATen/native/TensorAdvancedIndexing.cpp,
Indexing.cpp, Fill.cpp). Index tensors are not differentiable; the forwards receive them as numpy arrays.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor, normalize_dim, to_tensor
from ..core.declare import composite, op, tensor_method
from ..elementwise.comparison import where
from .indexing import index_select
from .inplace import apply, fill_
from .scatter import _index_add, _inplace, _put_accumulate, _shared_among_ties, _take, _tensor_arg, masked_scatter
from .strided import as_strided, storage_offset_of, strides_of
from .views import reshape

# ------------------------------------------------------------------------------------------ index_reduce
_REDUCES = ("prod", "mean", "amax", "amin")
_UFUNCS = {"prod": np.multiply, "mean": np.add, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce: str, dtype: np.dtype):
    if reduce == "prod":
        return 1
    if reduce == "mean":
        return 0
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _counts(shape, dim: int, index, include_self: bool) -> np.ndarray:
    """How many values reduce into each slice along ``dim`` (self counted when included), at least 1, shaped
    to broadcast against an array of ``shape``."""
    n = np.full(shape[dim], 1 if include_self else 0, dtype=np.int64)
    np.add.at(n, index, 1)
    n[n == 0] = 1
    view = [1] * len(shape)
    view[dim] = shape[dim]
    return n.reshape(view)


@op("index_reduce", grad_fn="IndexReduceBackward0", inputs=2, promote=None, public=False,
    note="prod: the product of the other values; mean: the gradient divided by the count; amax/amin: shared "
         "among the values equal to the result",
    formula="prod: grad times the product of the others; mean: grad / count; amax/amin: grad shared among the "
            "values equal to result (self: only where not replaced when include_self is False)")
def _index_reduce(input, source, dim, index, reduce, include_self):
    """``input`` with the slices of ``source`` reduced into its slices ``index`` along ``dim`` by ``reduce``."""
    x = input.reshape(input.shape or (1,))
    s = source.reshape(source.shape or (1,))
    out = np.moveaxis(x.copy(), dim, 0)
    src = np.moveaxis(s, dim, 0)
    if not include_self:
        out[index] = _identity(reduce, out.dtype)
    _UFUNCS[reduce].at(out, index, src)
    out = np.moveaxis(out, 0, dim)
    if reduce == "mean":
        count = _counts(out.shape, dim, index, include_self)
        out = out // count if out.dtype.kind in "iu" else (out / count).astype(out.dtype)
    return np.ascontiguousarray(out).reshape(input.shape)


def _index_reduce_partials(input, source, result, dim, index, reduce, include_self):
    """``(d out / d self, d out_at_index / d source)`` elementwise (FunctionsManual.cpp's index_reduce_backward for
    a gradient of ones; prod exact where there are zeros, amax/amin shared among ties)."""
    idx = Tensor(index)
    if reduce == "mean":
        n = _counts(tuple(input.shape), dim, index, include_self)
        inv = (1 / n).astype(np.float64 if input.dtype == np.float64 else np.float32)
        inv = np.broadcast_to(inv, tuple(input.shape)).copy()
        if isinstance(input, Tensor):
            inv = Tensor(inv)
        return inv, index_select(inv, dim, idx)
    if reduce == "prod":
        masked_self = where(input == 0, 1.0, input)
        d_self = _index_reduce(masked_self, source, dim, index, reduce, include_self) / masked_self
        src_zero = np.asarray(_data(source)) == 0  # (masks: constants, computed on the values)
        zero_counts = _index_add(np.zeros(tuple(input.shape)), src_zero.astype(np.float64), dim, index)
        single = src_zero & (np.take(zero_counts, index, axis=dim) == 1)
        masked_src_result = _index_reduce(input, where(single, 1.0, source), dim, index, reduce, include_self)
        d_src = where(single, index_select(masked_src_result, dim, idx),
                      index_select(result, dim, idx) / where(src_zero, 1.0, source))
        return d_self, d_src
    return _shared_among_ties(input, source, result, dim, index, index_select, _index_add)


def _data(v):
    return v.data if isinstance(v, Tensor) else v


@_index_reduce.defvjp
def _(grad, input, source, result, dim, index, reduce, include_self, needs_input_grad):
    d_self, d_src = _index_reduce_partials(input, source, result, dim, index, reduce, include_self)
    gs = gsrc = None
    if needs_input_grad[0]:
        gs = grad * d_self
        if not include_self:  # grad_self.index_fill(dim, index, 0): the self values that were replaced
            keep = np.ones(tuple(input.shape), dtype=bool)
            keep[(slice(None),) * dim + (index,)] = False
            gs = where(keep, gs, 0.0)
    if needs_input_grad[1]:
        gsrc = index_select(grad, dim, Tensor(index)) * d_src
    return gs, gsrc


def _no_forward_formula():
    # derivatives.yaml gives index_reduce no forward-mode formula: PyTorch's generated code raises this
    raise NotImplementedError(
        "Trying to use forward AD with index_reduce that does not support it because it has not been implemented "
        "yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template="
        "feature-request.yml so that we can prioritize its implementation or submit a PR adding the implementation "
        "to derivatives.yaml")


_no_forward_formula.unsupported = True  # (read by torch.func.hessian, as defjvp_unsupported's rules)
_index_reduce.defjvp(_no_forward_formula)


def _index_reduce_args(fn: str, x: Tensor, dim, index, source, reduce, include_self: bool) -> tuple:
    if reduce not in _REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
                           f"{reduce}.")
    idx = _tensor_arg(fn, "index", 2, index)
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{dtypes.scalar_type_name(idx.dtype)}")
    s = to_tensor(source)
    d = normalize_dim(dim, max(x.ndim, 1))
    n = s.shape[d] if s.ndim else 1
    if idx.ndim > 1:
        raise RuntimeError("index_reduce_(): Index is supposed to be a vector")
    if idx.size != n:
        raise RuntimeError(f"index_reduce_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                           f"({n}), for dim: {d}")
    if s.data.dtype != x.data.dtype:
        raise RuntimeError(f"index_reduce_(): self ({dtypes.scalar_type_name(x.data.dtype)}) and source "
                           f"({dtypes.scalar_type_name(s.data.dtype)}) must have the same scalar type")
    flat = idx.reshape(-1).astype(np.int64)
    size = x.shape[d] if x.ndim else 1
    if ((flat < 0) | (flat >= size)).any():
        raise IndexError("index out of range in self")
    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=3)
    if x.data.dtype == np.bool_:  # ATen's kernels for bool: only the reductions that include self and no division
        if not include_self:
            raise RuntimeError('"index_reduce_func_exclude_input_init" not implemented for \'Bool\'')
        if reduce == "mean":
            raise RuntimeError('"div_floor_cpu" not implemented for \'Bool\'')
    return d, flat, s


@composite("index_reduce", grad_fn="IndexReduceBackward0", method=True, note=_index_reduce.note)
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """``input`` with the slices of ``source`` reduced into its slices at ``index`` (an int vector) along ``dim``
    by ``reduce``: "prod", "mean" (integers: floor division), "amax" or "amin"; with ``include_self=False`` the
    input's own values at those slices are left out. Matches torch.index_reduce (grad_fn IndexReduceBackward0;
    gradients as FunctionsManual.cpp's index_reduce_backward), which warns that it is in beta.

    Raises:
        RuntimeError: for an unknown reduce, an index that is not int32/int64 or not a vector or of another
            length than source along dim, or a source of another dtype; IndexError for an index out of range
            (PyTorch's messages).
    """
    x = to_tensor(input)
    d, idx, s = _index_reduce_args("index_reduce", x, dim, index, source, reduce, bool(include_self))
    return _index_reduce(x, s, d, idx, reduce, bool(include_self))


@tensor_method("index_reduce_")
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """``self.index_reduce_(dim, index, source, reduce, include_self=True)``: :func:`index_reduce` in place;
    returns self. Matches torch.Tensor.index_reduce_ (grad_fn IndexReduceBackward0)."""
    d, idx, s = _index_reduce_args("index_reduce_", self, dim, index, source, reduce, bool(include_self))
    return apply(self, lambda t: _index_reduce(t, s, d, idx, reduce, bool(include_self)), (s,))


# --------------------------------------------------------------------------------------------------- put
@op("put", grad_fn="PutBackward0", inputs=2, promote=None, public=False, jvp="linear",
    note="d/dinput = the gradient, zero where written unless accumulating; d/dsource = the gradient taken at the "
         "indices",
    formula=_put_accumulate.formulas["PutBackward0"])  # (one --explain text per class: take's backward is one too)
def _put(input, source, index, accumulate):
    """``input`` read as 1-d with ``source``'s elements written (or added, with ``accumulate``) at the flat
    positions ``index`` (non-negative int64)."""
    out = input.reshape(-1).copy()
    src = np.asarray(source, dtype=input.dtype).reshape(-1)
    if accumulate:
        np.add.at(out, index.reshape(-1), src)
    else:
        out[index.reshape(-1)] = src
    return out.reshape(input.shape)


@_put.defvjp
def _(grad, source, index, accumulate, needs_input_grad):
    # derivatives.yaml put: self: accumulate ? grad : grad.put(index, zeros_like(source), false);
    # source: grad.take(index).reshape_as(source)
    gi = gs = None
    if needs_input_grad[0]:
        zeros = np.zeros(tuple(source.shape), dtype=_data(grad).dtype)
        gi = grad if accumulate else _put(grad, Tensor(zeros) if isinstance(grad, Tensor) else zeros, index, False)
    if needs_input_grad[1]:
        gs = reshape(_take(grad, index), tuple(source.shape))
    return gi, gs


def _put_args(x: Tensor, index, source) -> tuple:
    idx = _tensor_arg("put_", "index", 1, index)
    if idx.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {dtypes.scalar_type_name(idx.dtype)}")
    s = to_tensor(source)
    if s.data.size != idx.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {s.data.size}, index.numel() = {idx.size}")
    if s.data.dtype != x.data.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {dtypes.scalar_type_name(x.data.dtype)} and source.dtype = "
                           f"{dtypes.scalar_type_name(s.data.dtype)}")
    n = x.data.size
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {idx[bad].reshape(-1)[0]} on a tensor of {n} "
                         "elements.")
    return idx, s  # (negative positions count from the end, as numpy's indexing reads them)


@composite("put", grad_fn="PutBackward0", method=True, note=_put.note)
def put(input, index, source, accumulate=False):
    """``input`` read as a 1-d tensor with the elements of ``source`` written at the positions ``index`` (int64,
    negative counting from the end), or added there with ``accumulate=True`` (repeated positions add up).
    Matches torch.put (grad_fn PutBackward0).

    Raises:
        RuntimeError: for an index that is not int64 or a source of another dtype; IndexError for an index out
            of range or a source of another number of elements (PyTorch's messages).
    """
    x = to_tensor(input)
    idx, s = _put_args(x, index, source)
    return _put(x, s, idx, bool(accumulate))


@tensor_method("put_")
def put_(self, index, source, accumulate=False):
    """``self.put_(index, source, accumulate=False)``: :func:`put` in place; returns self. Matches
    torch.Tensor.put_ (grad_fn PutBackward0)."""
    idx, s = _put_args(self, index, source)
    return apply(self, lambda t: _put(t, s, idx, bool(accumulate)), (s,))

# ---------------------------------------------------------------------------------------- masked_scatter_
masked_scatter_ = _inplace("masked_scatter_", masked_scatter, """``self.masked_scatter_(mask, source)``: the elements
    of ``source`` copied in order to where ``mask`` is true, in place; returns self. Matches
    torch.Tensor.masked_scatter_ (grad_fn MaskedScatterBackward0).""")


# ---------------------------------------------------------------------------------------- fill_diagonal_
@tensor_method("fill_diagonal_")
def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal of ``self`` (2-d, or n-d with all sizes equal) with ``fill_value`` in place; with
    ``wrap=True`` a tall matrix's diagonal starts again every ``columns + 1`` rows. Returns self. Matches
    torch.Tensor.fill_diagonal_, which fills a strided view (as_strided) of the tensor, so a tensor whose history
    is recorded gets PyTorch's CopySlices (aten/src/ATen/native/Fill.cpp).

    Raises:
        RuntimeError: for fewer than 2 dimensions or unequal sizes (PyTorch's messages), and those of fill_.
    """
    nd = self.data.ndim
    if nd < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.data.shape[0], self.data.shape[1]
    if nd > 2 and any(n != height for n in self.data.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    offset = storage_offset_of(self)
    strides = strides_of(self)
    step = sum(strides)
    fill_(as_strided(self, (min(height, width),), (step,), offset), fill_value)
    if wrap and nd == 2 and height > width + 1:
        wrap_size = (self.data.size + width) // (width + 1) - min(height, width)
        fill_(as_strided(self, (wrap_size,), (step,), offset + strides[0] * (width + 1)), fill_value)
    return self

"""Masks and scatters: masked_fill, masked_select, masked_scatter, scatter, scatter_add, scatter_reduce,
index_fill, index_copy, index_add, take, take_along_dim, nonzero, and their in-place methods.

Each follows PyTorch 2.13: its grad_fn (a number ``value`` and a tensor one are different overloads with
different backward classes: MaskedFillBackward0/1, ScatterBackward0/1, IndexFillBackward0/1), its derivatives
(tools/autograd/derivatives.yaml, written with ops of the table so that they can be differentiated again), its
forward-mode rule, and its error texts. Index and mask tensors are not differentiable; the forwards receive them
as numpy arrays, checked by the public functions. scatter_reduce and masked_scatter follow derivatives.yaml with
FunctionsManual.cpp's scatter_reduce_backward / scatter_reduce_jvp and masked_scatter_backward.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor, normalize_dim, to_tensor
from ..core.apply import broadcast_error, infer_size
from ..core.declare import composite, op, tensor_method
from ..elementwise.comparison import where
from .indexing import _gather_key, gather, index_select
from .inplace import apply
from ..reduction.reductions import expand, sum
from .views import reshape, view


def _tensor_arg(fn: str, name: str, position: int, v) -> np.ndarray:
    if not isinstance(v, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(v).__name__}")
    return v.data


def _index_arg(fn: str, index, position: int = 3) -> np.ndarray:
    idx = _tensor_arg(fn, "index", position, index)
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{fn}(): Expected dtype int32/int64 for index")
    return idx.astype(np.int64, copy=False)


def _scalar_value(value):
    """A Python number (or a 0-d Tensor's item for the number overloads)."""
    return value.item() if isinstance(value, Tensor) else value


def _index_data(name: str, indices) -> np.ndarray:
    if not isinstance(indices, Tensor):
        raise TypeError(f"{name}(): argument 'indices' (position 2) must be Tensor, not {type(indices).__name__}")
    a = indices.data
    if a.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{dtypes.scalar_type_name(a.dtype)}Tensor instead (while "
                           f"checking arguments for {name})")
    return a


# ------------------------------------------------------------------------------------------ masked_fill
def _fill_where(input, mask, value):
    try:
        shape = np.broadcast_shapes(input.shape, mask.shape)
    except ValueError as e:
        raise broadcast_error(e, input, mask) from None
    return np.where(mask, np.asarray(value).astype(input.dtype), np.broadcast_to(input, shape))


@op("masked_fill", grad_fn="MaskedFillBackward0", promote=None, public=False,
    note="d/dinput = 1 where the mask is false, 0 where it is true",
    formula="input: grad where mask is false, 0 where it is true")
def _masked_fill_number(input, mask, value):
    """``input`` with ``value`` (a number) where ``mask`` (a bool array) is true (torch.masked_fill, Scalar)."""
    return _fill_where(input, mask, value)


@_masked_fill_number.defvjp
def _(grad, mask):
    return where(mask, 0.0, grad)  # derivatives.yaml: grad.masked_fill(mask, 0)


@_masked_fill_number.defjvp
def _(input_t, mask):
    return where(mask, 0.0, input_t)  # self_t.masked_fill(mask, 0)


@op("masked_fill", grad_fn="MaskedFillBackward1", inputs=2, promote=None, public=False,
    note="d/dinput = 1 where the mask is false; d/dvalue = the sum of the gradient where it is true",
    formula="input: grad where mask is false; value: sum of grad where it is true")
def _masked_fill_tensor(input, value, mask):
    """``input`` with the 0-d ``value`` where ``mask`` is true (torch.masked_fill, Tensor value)."""
    return _fill_where(input, mask, value)


@_masked_fill_tensor.defvjp
def _(grad, mask, needs_input_grad):
    # derivatives.yaml: self: grad.masked_fill(mask, 0); value: masked_fill_backward(grad, mask) (its sum)
    return (where(mask, 0.0, grad) if needs_input_grad[0] else None,
            sum(where(mask, grad, 0.0)) if needs_input_grad[1] else None)


@_masked_fill_tensor.defjvp
def _(input_t, value_t, mask):
    return where(mask, value_t, input_t)  # self_t.masked_fill(mask, value_t)


@composite("masked_fill", grad_fn="MaskedFillBackward0 (number value) | MaskedFillBackward1 (tensor value)",
           method=True, note="d/dinput = 1 where the mask is false; d/dvalue = the sum of the gradient where true")
def masked_fill(input, mask, value):
    """``input`` with ``value`` where the bool ``mask`` (broadcast with it) is true; the value is cast to the
    input's dtype. Matches torch.masked_fill (grad_fn MaskedFillBackward0 for a number, MaskedFillBackward1 for
    a 0-d tensor value, which gets the sum of the gradient where the mask is true).

    Raises:
        RuntimeError: for a mask that is not bool or a value tensor that is not 0-d (PyTorch's messages).
    """
    x = to_tensor(input)
    m = _tensor_arg("masked_fill", "mask", 2, mask)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{dtypes.c_type_name(m.dtype)}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        return _masked_fill_tensor(x, value, m)
    return _masked_fill_number(x, m, value)


# ---------------------------------------------------------------------------------------- masked_select
@op("masked_select", grad_fn="MaskedSelectBackward0", promote=None, public=False,
    note="d/dinput = the gradient's elements put back where the mask is true, 0 elsewhere",
    formula="input: grad put back where mask is true, 0 elsewhere", jvp="linear")  # derivatives.yaml: auto_linear
def _masked_select(input, mask):
    """The elements of ``input`` where ``mask`` is true (both broadcast), as a 1-d array."""
    try:
        shape = np.broadcast_shapes(input.shape, mask.shape)
    except ValueError as e:
        raise broadcast_error(e, input, mask) from None
    return np.broadcast_to(input, shape)[np.broadcast_to(mask, shape)]


@op("_masked_scatter_zeros", grad_fn="MaskedScatterBackward0", promote=None,
    note="d/dgrad = the gradient's masked elements", jvp="linear")
def _masked_scatter_zeros(grad, mask, shape):
    """Zeros of ``shape`` with ``grad``'s elements where the broadcast ``mask`` is true (masked_select_backward)."""
    out = np.zeros(shape, dtype=grad.dtype)
    out[np.broadcast_to(mask, shape)] = grad
    return out


@_masked_select.defvjp
def _(grad, input_shape, mask):
    return _masked_scatter_zeros(grad, mask, np.broadcast_shapes(tuple(input_shape), mask.shape))


@_masked_scatter_zeros.defvjp
def _(grad, mask):
    return _masked_select(grad, mask)


@composite("masked_select", grad_fn="MaskedSelectBackward0", method=True, note=_masked_select.note)
def masked_select(input, mask):
    """The elements of ``input`` where the bool ``mask`` is true (the two broadcast together), as a 1-d tensor
    in row-major order. Matches torch.masked_select (grad_fn MaskedSelectBackward0).

    Raises:
        RuntimeError: for a mask that is not bool (PyTorch's message).
    """
    m = _tensor_arg("masked_select", "mask", 2, mask)
    if m.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    return _masked_select(to_tensor(input), m)


# ------------------------------------------------------------------------------------ scatter, scatter_add
def _check_scatter(fn: str, input, dim, idx, src=None) -> int:
    d = normalize_dim(dim, max(input.ndim, 1))
    if idx.size == 0:
        return d
    if max(input.ndim, 1) != max(idx.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None and src.dtype != input.dtype:
        raise RuntimeError(f"{fn}(): Expected self.dtype to be equal to src.dtype")
    a_shape, i_shape = input.shape or (1,), idx.shape or (1,)
    for k in range(len(a_shape)):
        if k != d and i_shape[k] > a_shape[k]:
            raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self {list(input.shape)} "
                               f"apart from dimension {d}")
    bad = (idx < 0) | (idx >= a_shape[d])
    if bad.any():
        raise RuntimeError(f"index {idx[bad].reshape(-1)[0]} is out of bounds for dimension {d} with size "
                           f"{a_shape[d]}")
    return d


def _src_part(src, idx):
    s = src.reshape(src.shape or (1,))
    return s[tuple(slice(0, n) for n in (idx.shape or (1,)))]


def _scattered(input, dim, index, values, accumulate: bool):
    out = input.reshape(input.shape or (1,)).copy()
    i = index.reshape(index.shape or (1,))
    key = _gather_key(out.shape, normalize_dim(dim, out.ndim), i)
    if accumulate:
        np.add.at(out, key, values)
    else:
        out[key] = values
    return out.reshape(input.shape)


@op("scatter", grad_fn="ScatterBackward0", inputs=2, promote=None, public=False,
    note="d/dinput = 1 where nothing was written; d/dsrc = the gradient gathered at the index",
    formula="input: grad with zeros where src was written; src: grad gathered at index")
def _scatter_src(input, src, dim, index):
    """``input`` with ``src``'s elements written at ``index`` along ``dim`` (torch.scatter, src)."""
    return _scattered(input, dim, index, _src_part(src, index), False)


@_scatter_src.defvjp
def _(grad, dim, index, needs_input_grad):
    # derivatives.yaml scatter.src: self: grad.scatter(dim, index, 0); src: grad.gather(dim, index)
    return (_scatter_value(grad, dim, index, 0) if needs_input_grad[0] else None,
            gather(grad, dim, Tensor(index)) if needs_input_grad[1] else None)


@_scatter_src.defjvp
def _(input_t, src_t, dim, index):
    return _scatter_src(input_t, src_t, dim, index)  # self_t.scatter(dim, index, src_t)


@op("scatter", grad_fn="ScatterBackward1", promote=None, public=False,
    note="d/dinput = 1 where nothing was written, 0 at the index",
    formula="input: grad with zeros where value was written")
def _scatter_value(input, dim, index, value):
    """``input`` with the number ``value`` written at ``index`` along ``dim`` (torch.scatter, value)."""
    return _scattered(input, dim, index, np.asarray(value).astype(input.dtype), False)


@_scatter_value.defvjp
def _(grad, dim, index):
    return _scatter_value(grad, dim, index, 0)  # derivatives.yaml scatter.value: grad.scatter(dim, index, 0)


@_scatter_value.defjvp
def _(input_t, dim, index):
    return _scatter_value(input_t, dim, index, 0)


def _reduced_scatter(input, dim, index, values, reduce):
    out = input.reshape(input.shape or (1,)).copy()
    i = index.reshape(index.shape or (1,))
    key = _gather_key(out.shape, normalize_dim(dim, out.ndim), i)
    (np.add if reduce == "add" else np.multiply).at(out, key, np.broadcast_to(values, i.shape))
    return out.reshape(input.shape)


def _scatter_not_differentiable(grad):
    raise RuntimeError("derivative for aten::scatter is not implemented")


@op("scatter", grad_fn="NotImplemented", inputs=2, promote=None, public=False,
    note="no derivative with reduce: backward raises, as in PyTorch")
def _scatter_reduce_src(input, src, dim, index, reduce):
    """``input`` with ``src``'s elements added to (multiplied into) it at ``index`` along ``dim``."""
    return _reduced_scatter(input, dim, index, _src_part(src, index), reduce)


_scatter_reduce_src.defvjp(_scatter_not_differentiable)
_scatter_reduce_src.defjvp_unsupported("scatter")


@op("scatter", grad_fn="NotImplemented", promote=None, public=False,
    note="no derivative with reduce: backward raises, as in PyTorch")
def _scatter_reduce_value(input, dim, index, value, reduce):
    """``input`` with the number ``value`` added to (multiplied into) it at ``index`` along ``dim``."""
    return _reduced_scatter(input, dim, index, np.asarray(value).astype(input.dtype), reduce)


_scatter_reduce_value.defvjp(_scatter_not_differentiable)
_scatter_reduce_value.defjvp_unsupported("scatter")


@composite("scatter", grad_fn="ScatterBackward0 (tensor src) | ScatterBackward1 (number value) | NotImplemented "
                              "(reduce)", method=True,
           note="d/dinput = 1 where nothing was written; d/dsrc = the gradient gathered at the index")
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """``input`` with ``src``'s elements (or the number ``value``) written along ``dim`` at the positions
    ``index`` gives: ``out[index[i][j]][j] = src[i][j]`` for dim 0. Matches torch.scatter (grad_fn
    ScatterBackward0 for a tensor src, ScatterBackward1 for a number); where ``index`` repeats a position the
    last write wins (PyTorch leaves that unspecified). With ``reduce="add"`` or ``"multiply"`` the elements are
    added to (multiplied into) the input's, repeated positions accumulating; PyTorch then records a grad_fn
    NotImplemented whose backward fails, and warns that ``reduce`` with a tensor src is deprecated.

    Raises:
        RuntimeError: for another ``reduce`` (PyTorch's message).
        RuntimeError: for an index that is not int64/int32, out of range, of another number of dimensions or larger
            than the input, or a src of another dtype (PyTorch's messages).
    """
    x = to_tensor(input)
    idx = _index_arg("scatter", index)
    if src is None and value is None:
        raise TypeError("scatter() missing 1 required positional argument: 'src'")
    src = value if src is None else src
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, Tensor):
        _check_scatter("scatter", x.data, dim, idx, src.data)
        if reduce is not None:
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in "
                          "a future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                          UserWarning, stacklevel=3)
            return _scatter_reduce_src(x, src, dim, idx, reduce)
        return _scatter_src(x, src, dim, idx)
    _check_scatter("scatter", x.data, dim, idx)
    if reduce is not None:
        return _scatter_reduce_value(x, dim, idx, src, reduce)
    return _scatter_value(x, dim, idx, src)


@op("scatter_add", grad_fn="ScatterAddBackward0", inputs=2, promote=None, public=False,
    note="d/dinput = 1; d/dsrc = the gradient gathered at the index",
    formula="input: grad; src: grad gathered at index", jvp="linear")  # scatter_add(self_t, dim, index, src_t)
def _scatter_add(input, src, dim, index):
    """``input`` with ``src``'s elements added at ``index`` along ``dim`` (torch.scatter_add)."""
    return _scattered(input, dim, index, _src_part(src, index), True)


@_scatter_add.defvjp
def _(grad, dim, index, needs_input_grad):
    # derivatives.yaml scatter_add: self: grad; src: grad.gather(dim, index)
    return grad, (gather(grad, dim, Tensor(index)) if needs_input_grad[1] else None)


@composite("scatter_add", grad_fn="ScatterAddBackward0", method=True, note=_scatter_add.note)
def scatter_add(input, dim, index, src):
    """``input`` with ``src``'s elements added along ``dim`` at the positions ``index`` gives (repeated
    positions add up): ``out[index[i][j]][j] += src[i][j]`` for dim 0. Matches torch.scatter_add (grad_fn
    ScatterAddBackward0).

    Raises:
        RuntimeError: for an index that is not int64/int32, out of range, of another number of dimensions or larger
            than the input, or a src of another dtype (PyTorch's messages).
    """
    x = to_tensor(input)
    idx = _index_arg("scatter", index)  # (PyTorch names scatter in this message)
    s = to_tensor(src)
    _check_scatter("scatter", x.data, dim, idx, s.data)  # (PyTorch's messages name scatter)
    return _scatter_add(x, s, dim, idx)


# ---------------------------------------------------------------------------------- index_fill, index_copy
def _index_vector(fn: str, input, dim, index) -> tuple:
    """The normalized dim and the int64 index vector of index_fill (negative indices count from the end) or
    index_copy (no negative indices), checked with PyTorch's messages."""
    idx = _tensor_arg(fn, "index", 3, index)
    copy = fn == "index_copy"
    if idx.dtype != np.int64:
        if copy:
            raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                               f"{dtypes.scalar_type_name(idx.dtype)}")
        raise IndexError(f"{fn}_(): Expected dtype int64 for index.")
    if idx.ndim > 1:
        if copy:
            raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
        raise RuntimeError("Index has to be a vector/scalar")
    d = normalize_dim(dim, max(input.ndim, 1))
    size = input.shape[d] if input.ndim else 1
    flat = idx.reshape(-1)
    bad = (flat < (0 if copy else -size)) | (flat >= size)
    if bad.any():
        raise IndexError(f"{'index_copy_(): ' if copy else ''}index {flat[bad][0]} is out of bounds for dimension "
                         f"{d} with size {size}")
    return d, np.where(flat < 0, flat + size, flat)


def _filled(input, dim, index, value):
    out = input.copy()
    if input.ndim == 0:
        return np.asarray(value).astype(input.dtype) if index.size else out
    out[(slice(None),) * dim + (index,)] = np.asarray(value).astype(input.dtype)
    return out


@op("index_fill", grad_fn="IndexFillBackward0", promote=None, public=False,
    note="d/dinput = 1 outside the filled slices, 0 in them", formula="input: grad with zeros in the filled slices")
def _index_fill_number(input, dim, index, value):
    """``input`` with the slices ``index`` along ``dim`` set to the number ``value``."""
    return _filled(input, dim, index, value)


@_index_fill_number.defvjp
def _(grad, dim, index):
    return _index_fill_number(grad, dim, index, 0)  # derivatives.yaml: grad.index_fill(dim, index, 0)


@_index_fill_number.defjvp
def _(input_t, dim, index):
    return _index_fill_number(input_t, dim, index, 0)


@op("index_fill", grad_fn="IndexFillBackward1", inputs=2, promote=None, public=False,
    note="d/dinput = 1 outside the filled slices; d/dvalue = the sum of the gradient in them",
    formula="input: grad with zeros in the filled slices; value: sum of grad in them")
def _index_fill_tensor(input, value, dim, index):
    """``input`` with the slices ``index`` along ``dim`` set to the 0-d ``value``."""
    return _filled(input, dim, index, value)


@_index_fill_tensor.defvjp
def _(grad, dim, index, needs_input_grad):
    # derivatives.yaml index_fill.int_Tensor: value: grad.index_select(dim, unique(index)).sum()
    gv = None
    if needs_input_grad[1]:
        g = grad if grad.ndim else reshape(grad, (1,))
        gv = sum(index_select(g, dim, Tensor(np.unique(index))))
    return (_index_fill_number(grad, dim, index, 0) if needs_input_grad[0] else None), gv


@_index_fill_tensor.defjvp
def _(input_t, value_t, dim, index):
    return _index_fill_tensor(input_t, value_t, dim, index)  # self_t.index_fill(dim, index, value_t)


@composite("index_fill", grad_fn="IndexFillBackward0 (number value) | IndexFillBackward1 (tensor value)",
           method=True, note="d/dinput = 1 outside the filled slices; d/dvalue = the sum of the gradient in them")
def index_fill(input, dim, index, value):
    """``input`` with the slices at ``index`` (an int64 vector; negative counting from the end) along ``dim`` set
    to ``value``. Matches torch.index_fill (grad_fn IndexFillBackward0 for a number, IndexFillBackward1 for a 0-d
    tensor value, which gets the sum of the gradient in the filled slices, each counted once).

    Raises:
        RuntimeError: for a value tensor that is not 0-d or an index that is not a vector; IndexError for an
            index that is not int64 or out of range (PyTorch's messages).
    """
    x = to_tensor(input)
    d, idx = _index_vector("index_fill", x.data, dim, index)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        return _index_fill_tensor(x, value, d, idx)
    return _index_fill_number(x, d, idx, value)


@op("index_copy", grad_fn="IndexCopyBackward0", inputs=2, promote=None, public=False,
    note="d/dinput = 1 outside the copied slices; d/dsource = the gradient's slices at the index",
    formula="input: grad with zeros in the copied slices; source: grad's slices at index",
    jvp="linear")  # self_t.index_copy(dim, index, source_t)
def _index_copy(input, source, dim, index):
    """``input`` with ``source``'s slices copied to the positions ``index`` along ``dim``."""
    out = input.copy()
    if input.ndim == 0:
        return source.reshape(()).astype(input.dtype) if index.size else out
    out[(slice(None),) * dim + (index,)] = source
    return out


@_index_copy.defvjp
def _(grad, dim, index, needs_input_grad):
    # derivatives.yaml index_copy: self: grad.index_fill(dim, index, 0); source: grad.index_select(dim, index)
    gs = None
    if needs_input_grad[1]:
        gs = grad if grad.ndim else reshape(grad, (1,))
        gs = index_select(gs, dim, Tensor(index))
    return (_index_fill_number(grad, dim, index, 0) if needs_input_grad[0] else None), gs


@composite("index_copy", grad_fn="IndexCopyBackward0", method=True, note=_index_copy.note)
def index_copy(input, dim, index, source):
    """``input`` with the slices of ``source`` copied to the positions ``index`` (an int64 vector) along
    ``dim``. Matches torch.index_copy (grad_fn IndexCopyBackward0).

    Raises:
        IndexError: for an index out of range (negative ones too), not a vector, or of another length than
            ``source`` along dim; RuntimeError for an index that is not int64 or a source of another dtype
            (PyTorch's messages).
    """
    x, s = to_tensor(input), to_tensor(source)
    d, idx = _index_vector("index_copy", x.data, dim, index)
    n = s.shape[d] if s.ndim else 1
    if idx.size != n:
        raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be equal to source.size(dim) ({n})")
    if s.dtype != x.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{dtypes.scalar_type_name(x.data.dtype)} and (source) "
                           f"{dtypes.scalar_type_name(s.data.dtype)}")
    return _index_copy(x, s, d, idx)


# ----------------------------------------------------------------------------------- take, take_along_dim
@op("take", grad_fn="TakeBackward0", promote=None, public=False,
    note="d/dinput = the gradient added into zeros at the flat indices",
    formula="input: grad added into zeros at the flat positions index", jvp="linear")  # derivatives.yaml: auto_linear
def _take(input, index):
    """The elements of the flattened ``input`` at ``index`` (an int64 array, negative counting from the end)."""
    return input.reshape(-1)[index]


@op("_put_accumulate", grad_fn="PutBackward0", promote=None, note="d/dgrad = the gradient taken at the indices",
    formula="source: grad taken at the flat positions index", jvp="linear")
def _put_accumulate(grad, index, shape):
    """Zeros of ``shape`` with ``grad`` added at the flat ``index`` (take_backward: put_ with accumulate)."""
    out = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=grad.dtype)
    np.add.at(out, index.reshape(-1), grad.reshape(-1))
    return out.reshape(shape)


@_take.defvjp
def _(grad, input_shape, index):
    return _put_accumulate(grad, index, tuple(input_shape))


@_put_accumulate.defvjp
def _(grad, index):
    return _take(grad, index)


@composite("take", grad_fn="TakeBackward0", method=True, note=_take.note)
def take(input, index):
    """The elements of ``input`` read as a 1-d tensor at the positions ``index`` (int64, negative counting from
    the end), in the shape of ``index``. Matches torch.take (grad_fn TakeBackward0: repeated positions add up).

    Raises:
        RuntimeError: for an index that is not int64; IndexError for one out of range (PyTorch's messages).
    """
    x = to_tensor(input)
    idx = _tensor_arg("take", "index", 2, index)
    if idx.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {dtypes.scalar_type_name(idx.dtype)}")
    n = x.data.size
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {idx[bad].reshape(-1)[0]} on a tensor of {n} "
                         "elements.")
    return _take(x, np.where(idx < 0, idx + n, idx))


@composite("take_along_dim", grad_fn="GatherBackward0", method=True,
           note="the gradient added into zeros at the gathered positions")
def take_along_dim(input, indices, dim=None):
    """The values of ``input`` at ``indices`` along ``dim``, the two broadcast apart from ``dim`` (a gather);
    without ``dim``, of the flattened input. Matches torch.take_along_dim (grad_fn GatherBackward0).

    Raises:
        RuntimeError: for indices that are not int64 or of another number of dimensions, or without ``dim`` an
            input that cannot be viewed as 1-d (a transposed one: PyTorch's ``view(-1)``); IndexError for a dim
            out of range or given with a 0-d input (PyTorch's messages).
    """
    x = to_tensor(input)
    idx = _tensor_arg("take_along_dim", "indices", 2, indices)
    if idx.dtype != np.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{dtypes.scalar_type_name(idx.dtype)}")
    if dim is None:  # PyTorch's self.view(-1): an input whose elements are not one run of memory is refused
        return gather(view(x, -1), 0, Tensor(idx.reshape(-1)))
    if x.ndim != idx.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {x.ndim} dimensions for input, and {idx.ndim} dimensions for indices")
    if x.ndim == 0:  # (PyTorch wraps the dim without allowing a 0-d tensor)
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = normalize_dim(dim, x.ndim)
    sizes = list(x.shape)
    sizes[d] = idx.shape[d]
    shape = np.broadcast_shapes(tuple(sizes), idx.shape)
    idx_b = np.broadcast_to(idx, shape)
    xs = list(shape)
    xs[d] = x.shape[d]
    if tuple(xs) != tuple(x.shape):
        x = expand(x, tuple(xs))
    return gather(x, d, Tensor(np.ascontiguousarray(idx_b)))


# ------------------------------------------------------------------------------------------------ nonzero
@composite("nonzero", grad_fn="none (indices)", note="not differentiable (indices)", method=True,
           differentiable=False)
def nonzero(input, *, as_tuple=False):
    """The indices of the nonzero elements of ``input``: an int64 tensor of shape ``(n, input.ndim)`` in
    row-major order, or with ``as_tuple=True`` one 1-d tensor per dimension (a 0-d input counts as 1-d). Matches
    torch.nonzero; not differentiable."""
    data = to_tensor(input).data
    if as_tuple:
        return tuple(Tensor(a.astype(np.int64)) for a in np.nonzero(data.reshape(data.shape or (1,))))
    if data.ndim == 0:
        return Tensor(np.zeros((1 if data != 0 else 0, 0), dtype=np.int64))
    return Tensor(np.argwhere(data).astype(np.int64))


# -------------------------------------------------------------------------------------------- index_add
@op("_index_add", grad_fn="IndexAddBackward0", inputs=2, promote="same",
    note="d/dself = grad; d/dsource = grad.index_select(dim, index) * alpha",
    formula="input: grad; source: alpha * grad's rows at index",
    jvp="linear")  # derivatives.yaml index_add: self_t.index_add(dim, index, source_t, alpha)
def _index_add(input, source, dim, index, alpha=1):
    """``input`` with ``alpha * source``'s slices added at ``index`` along ``dim`` (repeated indices add up)."""
    d = normalize_dim(dim, max(input.ndim, 1))
    out = input.copy()
    src = source if alpha == 1 else source * input.dtype.type(alpha)
    if input.ndim == 0:
        return out + src.reshape(())
    np.add.at(out, (slice(None),) * d + (index,), src)
    return out


@_index_add.defvjp
def _(grad, dim, index, alpha, needs_input_grad):
    gs = index_select(grad, dim, Tensor(index)) if needs_input_grad[1] else None
    if gs is not None and alpha != 1:
        gs = gs * alpha
    return grad, gs


@composite("index_add", grad_fn="IndexAddBackward0", note=_index_add.note, method=True)
def index_add(input, dim, index, source, *, alpha=1):
    """``input`` with ``alpha * source``'s slices added at the int ``index`` along ``dim`` (repeated indices add
    up). Matches torch.index_add (grad_fn IndexAddBackward0)."""
    return _index_add(to_tensor(input), to_tensor(source), dim, _index_data("index_add", index), alpha)


@tensor_method("index_add_")
def index_add_(self, dim, index, source, *, alpha=1):
    """``self.index_add_(dim, index, source, alpha=1)``: add ``alpha * source``'s slices into self at ``index``
    along ``dim``, in place; returns self. Matches torch.Tensor.index_add_ (grad_fn IndexAddBackward0)."""

    idx = _index_data("index_add_", index)
    return apply(self, lambda s: _index_add(s, source, dim, idx, alpha), (source,))


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
         "shared among the elements equal to the result",
    formula="sum: input: grad, src: grad gathered at index; mean: divided by the counts; prod: the product of the "
            "others; amax/amin: grad shared among the elements equal to result")
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
    return _shared_among_ties(input, src, result, dim, index, gather, _scatter_add)


def _shared_among_ties(input, src, result, dim, index, select, add):
    """amax/amin's ``(d out / d self, d out_at_index / d src)`` of scatter_reduce and index_reduce: 1 / k at
    each of the k values (of self and src) equal to the result they reduced into, 0 elsewhere
    (FunctionsManual.cpp's ``grad.masked_fill(self != result, 0) / N``). ``select(t, dim, Tensor(index))``
    reads the result at src's positions (gather; index_select for index_reduce's slices) and ``add(t, src,
    dim, index)`` sums src's elements into them (_scatter_add; _index_add)."""
    idx = Tensor(index)
    value = select(result, dim, idx)
    # the masks as PyTorch's: 1 or +0 (0 * a negative value is -0, which "+ 0.0" makes +0, so that the
    # gradient's zeros have the signs of PyTorch's masked_fill)
    self_is = where(input == result, 1.0, 0.0 * input) + 0.0
    src_is = where(src == value, 1.0, 0.0 * src) + 0.0
    share = 1 / add(self_is, src_is, dim, index)
    return self_is * share, src_is * select(share, dim, idx)


_PROD_ZEROS_ERROR = ("scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are scattered to "
                     "the same position in self")


@op("_scatter_reduce_delayed_error", grad_fn="Error", promote=None,
    note="no derivative: its backward raises PyTorch's DelayedError message",
    formula="no derivative: PyTorch's DelayedError (scatter_reduce's prod gradient where zeros meet); backward "
            "raises")
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
    note="d/dinput = the gradient where the mask is false; d/dsource = the gradient's masked elements, in order",
    formula="source: grad's elements where mask is true",
    jvp="linear")  # derivatives.yaml: self_t.masked_scatter(mask, source_t)
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


# ------------------------------------------------------------------------------------ in-place variants
def _inplace(name: str, fn, doc: str):
    def method(self, *args, **kwargs):
        others = tuple(a for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor))
        return apply(self, lambda s: fn(s, *args, **kwargs), others)

    method.__name__ = name
    method.__doc__ = doc
    return tensor_method(name)(method)


masked_fill_ = _inplace("masked_fill_", masked_fill, """``self.masked_fill_(mask, value)``: ``value`` written where
    ``mask`` is true, in place; returns self. Matches torch.Tensor.masked_fill_ (grad_fn MaskedFillBackward0 or 1).""")
scatter_ = _inplace("scatter_", scatter, """``self.scatter_(dim, index, src)`` (or ``value``, ``reduce``) in place;
    returns self. Matches torch.Tensor.scatter_ (grad_fn ScatterBackward0 or 1; NotImplemented with reduce).""")
scatter_add_ = _inplace("scatter_add_", scatter_add, """``self.scatter_add_(dim, index, src)`` in place; returns
    self. Matches torch.Tensor.scatter_add_ (grad_fn ScatterAddBackward0).""")
index_fill_ = _inplace("index_fill_", index_fill, """``self.index_fill_(dim, index, value)`` in place; returns
    self. Matches torch.Tensor.index_fill_ (grad_fn IndexFillBackward0 or 1).""")
index_copy_ = _inplace("index_copy_", index_copy, """``self.index_copy_(dim, index, source)`` in place; returns
    self. Matches torch.Tensor.index_copy_ (grad_fn IndexCopyBackward0).""")

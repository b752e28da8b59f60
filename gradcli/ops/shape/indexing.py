"""Indexing: ``x[key]`` (Tensor.__getitem__) with PyTorch's basic and advanced indexing, the ops behind
``x[key] = v`` when it is recorded (CopySlices, IndexPutBackward0; the in-place write itself is
:func:`gradcli.ops.shape.inplace.setitem`), and the gathers index_select and gather.

Indexing follows PyTorch's ``THPVariable_getitem`` / ``applySlicing`` (torch/csrc/autograd/
python_variable_indexing.cpp, ATen/TensorIndexing.h): an integer is a ``select`` (SelectBackward0), a slice a
``slice`` (SliceBackward0; a full slice inside a tuple is skipped), ``None`` an ``unsqueeze``, a key that
leaves the tensor unchanged an ``alias`` (AliasBackward0), and tensors, lists and booleans one advanced
``index`` (IndexBackward0) with PyTorch's placement of the indexed dimensions and its error messages. The
derivatives of index/gather/index_select scatter the gradient into zeros of the input's shape; those scatters
are ops too, so every rule can be differentiated again.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from ...engine import limits
from ...engine.tensor import Tensor, normalize_dim
from ..core.declare import op
from ..creation import _array_from_data
from .views import (_alias, _iteration_order, _slice, _strides, is_contiguous, select, unsqueeze)


# ----------------------------------------------------------------------------------- advanced indexing


@op("_index", grad_fn="IndexBackward0", promote=None, note="the gradient added into zeros at the indexed positions",
    formula="input: grad added into zeros at the indexed positions (input[indices])", jvp="linear")
def _index(input, key):
    """``input[key]`` for a key of full slices and int64 arrays (aten::index after its masks were expanded and
    its indices checked by :func:`_advanced_index`), laid out in memory as PyTorch lays it out.

    Raises:
        IndexError: for an index out of range: PyTorch's message, naming the position of the index among the
            indexed dimensions.
        LimitError: for a result of more than the ``elements`` limit (index tensors broadcast against each
            other, so small ones can ask for a huge result): checked before anything of that size is made.
    """
    dims = [d for d, k in enumerate(key) if isinstance(k, np.ndarray)]
    index_shape = np.broadcast_shapes(*(key[d].shape for d in dims))
    _check_index_result(input.shape, dims, index_shape)
    if any(input.shape[d] == 0 for d in dims) and 0 not in index_shape:
        # AdvancedIndex: an empty dimension indexed by a non-empty index
        raise IndexError("index is out of bounds for dimension with size 0")
    if 0 in index_shape or any(n == 0 for d, n in enumerate(input.shape) if d not in dims):
        # no element is read, so PyTorch checks no index: any in-range index gives the (empty) result's shape
        return np.ascontiguousarray(input[tuple(np.zeros_like(k) if isinstance(k, np.ndarray) else k
                                                for k in key)])
    if any(key[d].size and (key[d].min() < -input.shape[d] or key[d].max() >= input.shape[d]) for d in dims):
        arrays = np.broadcast_arrays(*(key[d] for d in dims))
        bad = [(a < -input.shape[d]) | (a >= input.shape[d]) for d, a in zip(dims, arrays)]
        # the first output element (row-major) with a bad index, and its first bad index, as PyTorch's kernel
        first = np.flatnonzero(np.logical_or.reduce(bad))[0]
        pos = next(p for p, b in enumerate(bad) if b.flat[first])
        raise IndexError(f"index {arrays[pos].flat[first]} is out of bounds for dimension {pos} with size "
                         f"{input.shape[dims[pos]]}")
    out = input[key]
    if is_contiguous(input) and all(key[d].flags.c_contiguous for d in dims):
        return np.ascontiguousarray(out)  # then PyTorch's layout is row-major too
    order = _index_output_order(input, key, dims, np.broadcast_arrays(*(key[d] for d in dims)), out.shape)
    if order == sorted(order):
        return np.ascontiguousarray(out)
    res = np.empty([out.shape[d] for d in order], dtype=out.dtype).transpose(np.argsort(order))
    res[...] = out
    return res


def _check_index_result(shape: tuple, dims: list, index_shape: tuple) -> None:
    """Refuse ``x[key]`` for ``x`` of ``shape`` whose result would have more than ``elements`` elements:
    the dimensions ``dims`` are indexed by arrays broadcasting to ``index_shape``, the others are kept whole.
    Its size is computed first; the shape (numpy's rule: the index dimensions in place of adjacent indexed
    dimensions, else in front) only for the message.

    Raises:
        LimitError: before the result, or any array of the index shape, is allocated.
    """
    n = 1
    for s in index_shape:
        n *= s
    for d, s in enumerate(shape):
        if d not in dims:
            n *= s
    if n <= limits.current.elements:
        return
    rest = [s for d, s in enumerate(shape) if d not in dims]
    if dims == list(range(dims[0], dims[-1] + 1)):
        out = rest[:dims[0]] + list(index_shape) + rest[dims[0]:]
    else:
        out = list(index_shape) + rest
    limits.check_numel(out, f"indexing a tensor of shape {list(shape)}")


def _index_output_order(input, key, dims, arrays, out_shape) -> list:
    """The memory order (slowest dimension first) of aten::index's result: the indexed dimensions (moved to the
    front when not adjacent) take the broadcast index shape with the index tensors' strides, the others keep
    the input's strides (at::native::AdvancedIndex, restride_src / reshape_indexer)."""
    if len(out_shape) <= 1:
        return list(range(len(out_shape)))
    in_strides = _strides(input)
    adjacent = dims == list(range(dims[0], dims[-1] + 1))
    before = dims[0] if adjacent else 0
    rest = [d for d in range(input.ndim) if d not in dims]
    src_order = rest[:before] + dims + rest[before:]
    nb = arrays[0].ndim
    src = ([in_strides[d] for d in src_order[:before]] + [0] * nb
           + [in_strides[d] for d in src_order[before + len(dims):]])
    # each index is viewed as [1] * before + its shape + [1] * after: broadcast (stride 0) where the result is
    # larger than 1
    pad_before = [0 if n != 1 else 1 for n in out_shape[:before]]
    pad_after = [0 if n != 1 else 1 for n in out_shape[before + nb:]]
    operands = [src] + [pad_before + list(_strides(a)) + pad_after for a in arrays]
    return _iteration_order(out_shape, operands)


@_index.defvjp
def _(grad, input_shape, key):
    return _index_put_zeros(grad, input_shape, key)


@op("_index_put_zeros", grad_fn="IndexPutBackward0", promote=None, note="index the gradient the same way",
    jvp="linear")
def _index_put_zeros(grad, input_shape, key):
    """Zeros of ``input_shape`` with ``grad`` added at ``key`` (repeated indices accumulate; index_put_ with
    accumulate=True)."""
    out = np.zeros(input_shape, dtype=grad.dtype)
    if grad.size:
        np.add.at(out, key, grad)
    return out


@_index_put_zeros.defvjp
def _(grad, key):
    return _index(grad, key)


_INDEX_MAX = 2 ** 63 - 1
_INDEX_MIN = -(2 ** 63)


def _type_name(obj) -> str:
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _is_long(obj) -> bool:
    """THPUtils_checkLong: Python and numpy integers, not bools."""
    return (isinstance(obj, int) and not isinstance(obj, bool)) or isinstance(obj, np.integer)


def _is_sequence(obj) -> bool:
    return isinstance(obj, (list, tuple, str, bytes, range, np.ndarray))


def _treat_as_tuple(key) -> bool:
    """PyTorch's (and NumPy's) heuristic: a short list holding tensors, sequences, slices, None or Ellipsis is
    a tuple of indices; any other list is one index."""
    if isinstance(key, tuple):
        return True
    if isinstance(key, (Tensor, np.ndarray)) or not _is_sequence(key):
        return False
    if len(key) >= 32:
        return False
    return any(isinstance(v, (Tensor, slice)) or _is_sequence(v) or v is None or v is Ellipsis for v in key)


def _count_specified(key) -> int:
    """The number of dimensions a key indexes (everything but None, Ellipsis and Python bools; a bool or uint8
    tensor counts its dimensions)."""
    n = 0
    for obj in key:
        if isinstance(obj, Tensor):
            n += obj.data.ndim if obj.data.dtype in (np.bool_, np.uint8) else 1
        elif obj is not None and obj is not Ellipsis and obj is not True and obj is not False:
            n += 1
    return n


def _sequence_index(obj) -> np.ndarray:
    """A list (or array) used as an index: torch.tensor's dtype inference, then bool/uint8 kept as a mask and
    anything else converted to int64 (torch::utils::indexing_tensor_from_data)."""
    arr = _array_from_data(obj, None)
    if arr.dtype in (np.bool_, np.uint8):
        return arr
    return arr.astype(np.int64)


def _bool_index(value: bool) -> np.ndarray:
    """A Python bool as an index: a new size-1 dimension taken whole (True) or emptied (False)."""
    return np.zeros(1 if value else 0, dtype=np.int64)


def _slice_bounds(s: slice):
    """``__PySlice_Unpack``: start, stop, step with PyTorch's defaults for None."""
    step = 1 if s.step is None else operator.index(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    start = (0 if step > 0 else _INDEX_MAX) if s.start is None else operator.index(s.start)
    stop = (_INDEX_MAX if step > 0 else _INDEX_MIN) if s.stop is None else operator.index(s.stop)
    return start, stop, step


def _apply_select(result, dim, index, real_dim):
    """applySelect: bounds checked against ``real_dim`` (the position in the key), then ``select``."""
    shape = result.shape
    if index == 0 and dim == 0 and not shape:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                         "C++ to convert a 0-dim tensor to a number")
    if dim < len(shape):
        size = shape[dim]
    else:
        # Past the last dimension (a 0-d tensor, or several Ellipses): PyTorch reads its inline size/stride
        # storage (5 sizes, then 5 strides), where unused sizes are 0, and select then rejects the dim.
        strides = _strides(result.data) if isinstance(result, Tensor) else ()
        size = 0 if dim < 5 or dim - 5 >= len(strides) else strides[dim - 5]
    if not (size > -1 - index and size > index):
        raise IndexError(f"index {index} is out of bounds for dimension {real_dim} with size {size}")
    return select(result, dim, index)


def _apply_slice(result, dim, s: slice, optimize: bool):
    """applySlice: a slice that keeps the whole dimension is skipped inside a tuple key; aten::slice clamps."""
    start, stop, step = _slice_bounds(s)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    shape = result.shape
    if not shape:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    size = shape[dim]
    if optimize and start == 0 and stop >= size and step == 1:
        return result
    if start < 0:
        start += size
    if stop < 0:
        stop += size
    start = min(max(start, 0), size)
    stop = min(max(stop, start), size)
    return _slice(result, dim, start, stop, step)


def _advanced_index(result, indices):
    """aten::index with PyTorch's checks: index dtypes, masks expanded to their nonzero positions (shape
    checked), broadcasting of the index arrays."""
    while indices and indices[-1] is None:
        indices.pop()
    shape = tuple(result.shape)
    if len(indices) > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got {len(indices)})")
    for ix in indices:
        if ix is not None and ix.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    expanded = []
    for ix in indices:
        if ix is None:
            expanded.append(None)
        elif ix.dtype in (np.bool_, np.uint8):
            if ix.dtype == np.uint8:
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                              "instead.", UserWarning, stacklevel=3)
            for j in range(ix.ndim):
                src = len(expanded) + j
                if ix.shape[j] != shape[normalize_dim(src, len(shape))]:
                    raise IndexError(f"The shape of the mask {list(ix.shape)} at index {j} does not match the "
                                     f"shape of the indexed tensor {list(shape)} at index {src}")
            expanded.extend(np.nonzero(ix))
        else:
            expanded.append(ix.astype(np.int64, copy=False))
    arrays = [e for e in expanded if e is not None]
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(a.shape)) for a in arrays)) from None
    return _index(result, tuple(slice(None) if e is None else e for e in expanded))


def _record(out: list, dim: int, arr: np.ndarray) -> int:
    """recordTensorIndex: the first tensor index goes to position ``dim``, later ones are appended; returns
    how many dimensions it indexes."""
    if not out:
        out.extend([None] * (dim + 1))
        out[dim] = arr
    else:
        out.append(arr)
    return arr.ndim if arr.dtype in (np.bool_, np.uint8) else 1


def getitem(input, key):
    """``input[key]`` with PyTorch's semantics: integers, slices (positive steps), None, Ellipsis, bools, and
    integer or boolean tensors and lists (advanced indexing; lists holding sequences, slices, None or Ellipsis
    are tuples of indices, as in PyTorch). Matches torch.Tensor.__getitem__, including the recorded graph.

    Raises:
        IndexError: for out-of-range indices, too many indices, mismatching masks or index shapes, or index
            types that are not allowed (PyTorch's messages).
        ValueError: for a zero or negative slice step.
        TypeError: for a string index.
    """
    if key is None:
        return unsqueeze(input, 0)
    if key is Ellipsis:
        return _alias(input)
    if _is_long(key):
        return _apply_select(input, 0, int(key), 0)
    if isinstance(key, slice):
        return _apply_slice(input, 0, key, optimize=False)
    if key is True or key is False:
        return _advanced_index(unsqueeze(input, 0), [_bool_index(key)])
    key = tuple(key) if _treat_as_tuple(key) else (key,)
    ndim = input.ndim
    specified = _count_specified(key)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result = input
    dim = 0
    out: list = []
    for i, obj in enumerate(key):
        if _is_long(obj):
            result = _apply_select(result, dim, int(obj), i)
        elif isinstance(obj, slice):
            result = _apply_slice(result, dim, obj, optimize=True)
            dim += 1
            if out:
                out.append(None)
        elif obj is Ellipsis:
            dim += ndim - specified
            if out:
                out.extend([None] * (ndim - specified))
        elif obj is None:
            result = unsqueeze(result, dim)
            dim += 1
            if out:
                out.append(None)
        elif obj is True or obj is False:
            result = unsqueeze(result, dim)
            dim += _record(out, dim, _bool_index(obj))
        else:
            if isinstance(obj, Tensor):
                arr = obj.data
            elif _is_sequence(obj):
                if isinstance(obj, (str, bytes)):
                    raise TypeError(f"new(): invalid data type '{type(obj).__name__}'")
                arr = _sequence_index(obj)
            else:
                try:
                    obj = operator.index(obj)
                except TypeError:
                    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                                     f"Variables are valid indices (got {_type_name(obj)})") from None
                result = _apply_select(result, dim, obj, i)
                continue
            if arr.ndim == 0 and arr.dtype.kind in "iub":
                if arr.dtype in (np.bool_, np.uint8):
                    result = unsqueeze(result, dim)
                    dim += _record(out, dim, _bool_index(bool(arr)))
                else:
                    result = _apply_select(result, dim, int(arr), i)
            else:
                dim += _record(out, dim, arr)
    if not out:
        # x[...], x[:, :]: a new tensor sharing the data (AliasBackward0), never the input itself
        return _alias(input) if result is input else result
    return _advanced_index(result, out)


Tensor.__getitem__ = getitem


# ----------------------------------------------------------------------------- the ops of x[key] = v


def _int_or_none(v):
    return None if v is None else int(v.data if isinstance(v, Tensor) else v)


def numpy_key(key):
    """An index with Tensors (integer, boolean) replaced by their numpy arrays."""
    if type(key) is tuple:
        return tuple(k.data if isinstance(k, Tensor) else k for k in key)
    return key.data if isinstance(key, Tensor) else key


def _setitem_kind(key, shape: tuple) -> tuple:
    """How PyTorch's ``t[key] = v`` proceeds (torch/csrc/autograd/python_variable_indexing.cpp): ``(view,
    advanced)``, where ``view`` names the last view op the key's basic part makes ("Select", "Slice",
    "Unsqueeze"; None when it leaves ``t`` itself: full slices ``0:len:1`` and ``...`` are skipped) and
    ``advanced`` says whether index arrays (integer or boolean, ``ndim >= 1``) follow."""
    items = key if type(key) is tuple else (key,)
    specified = sum(1 for k in items if k is not None and k is not Ellipsis and type(k) is not bool
                    and not (isinstance(k, np.ndarray) and k.dtype == np.bool_ and k.ndim))
    specified += sum(k.ndim - 1 for k in items if isinstance(k, np.ndarray) and k.dtype == np.bool_ and k.ndim)
    view, advanced, dim = None, False, 0
    for k in items:
        if k is Ellipsis:
            dim += max(len(shape) - specified, 0)
        elif k is None or type(k) is bool:
            view = "Unsqueeze"
        elif isinstance(k, slice):
            # PyTorch's applySlice returns the tensor itself for start 0 (or none), stop past the end (or
            # none) and step 1, compared before any clamping: ``-3:`` of 3 elements is a Slice view
            size = shape[dim] if dim < len(shape) else 0
            if not (_int_or_none(k.start) in (None, 0) and (k.stop is None or _int_or_none(k.stop) >= size)
                    and _int_or_none(k.step) in (None, 1)):
                view = "Slice"
            dim += 1
        elif isinstance(k, (list, np.ndarray)) and np.ndim(k):
            advanced = True
            dim += np.ndim(k) if np.asarray(k).dtype == np.bool_ else 1
        else:  # an integer, or a 0-d integer array
            view = "Select"
            dim += 1
    return view, advanced


@op("_copy_slices", grad_fn="CopySlices", inputs=2, promote=None,
    note="the gradient with zeros at the assigned positions; the value gets the gradient there",
    formula="input: grad with zeros at key (input[key] = value); value: grad[key] summed to value's shape",
    jvp="linear")
def _copy_slices(input, value, key):
    """A copy of ``input`` (any shape and dtype) with ``value`` (broadcast, cast to ``input``'s dtype) written
    at ``key`` (numpy's index form): the out-of-place half of the recorded ``t[key] = value`` (PyTorch's
    CopySlices node, wrapping the copy into a slice of the old values)."""
    out = np.array(input, copy=True)
    out[key] = value
    return out


@_copy_slices.defvjp
def _(grad, key, needs_input_grad):
    return (_copy_slices(grad, 0.0, key) if needs_input_grad[0] else None,
            _take_slices(grad, key) if needs_input_grad[1] else None)


@op("_index_put", grad_fn="IndexPutBackward0", inputs=2, promote=None,
    note="the gradient with zeros at the indexed positions; the values get the gradient there",
    formula="input: grad with zeros at indices; values: grad[indices]", jvp="linear")
def _index_put(input, values, key):
    """A copy of ``input`` with ``values`` written at ``key`` (index arrays): torch.index_put's forward, the
    out-of-place half of the recorded ``t[idx] = v`` on ``t`` itself."""
    return _copy_slices(input, values, key)


@_index_put.defvjp
def _(grad, key, needs_input_grad):
    return (_index_put(grad, 0.0, key) if needs_input_grad[0] else None,
            _take_slices(grad, key) if needs_input_grad[1] else None)


@op("_take_slices", grad_fn="IndexBackward0", promote=None, note="the gradient written into zeros at the positions",
    jvp="linear")
def _take_slices(input, key):
    """``input[key]`` as a new array (numpy's indexing; the gradient of the assigned value of
    :func:`_copy_slices`)."""
    return np.array(input[key], copy=True)


@_take_slices.defvjp
def _(grad, input_shape, key):
    return _copy_slices(np.zeros(input_shape, dtype=grad.dtype) if type(grad) is np.ndarray else
                        Tensor(np.zeros(input_shape, dtype=grad.data.dtype)), grad, key)


# ------------------------------------------------------------------------------- index_select, gather


def _data(t):
    return t.data if isinstance(t, Tensor) else np.asarray(t)


def _index_array(name, index):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' (position 3) must be Tensor, not {type(index).__name__}")
    return index.data


@op("index_select", grad_fn="IndexSelectBackward0", promote=None, method=True,
    note="the gradient's rows added into zeros at the selected indices",
    formula="input: grad's rows added into zeros at index, along dim", jvp="linear")
def index_select(input, dim, index):
    """The entries of ``input`` at the positions ``index`` (a 1-d int64/int32 tensor) along ``dim``.
    Matches torch.index_select.

    Raises:
        IndexError: for an index out of range (negative ones too), a dim out of range or an index that is not a
            vector; RuntimeError for a non-integer index; TypeError if ``index`` is not a tensor.
        LimitError: for a result of more than the ``elements`` limit (before it is allocated).
    """
    idx = _index_array("index_select", index)
    d = normalize_dim(dim, input.ndim)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if input.ndim == 0 and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    size = input.shape[d] if input.ndim else 1
    flat = idx.reshape(-1)
    if flat.size and (flat.min() < 0 or flat.max() >= size):
        raise IndexError("index out of range in self")
    if input.ndim == 0:
        return input.copy()
    if flat.size * (input.size // size if size else 0) > limits.current.elements:
        limits.check_numel(input.shape[:d] + (flat.size,) + input.shape[d + 1:], "index_select()")
    return np.ascontiguousarray(np.take(input, flat, axis=d))


@index_select.defvjp
def _(grad, input_shape, dim, index):
    return _index_select_backward(grad, input_shape, dim, index)


@op("_index_select_backward", grad_fn="IndexAddBackward0", promote=None,
    note="select the same indices of the gradient", jvp="linear")
def _index_select_backward(grad, input_shape, dim, index):
    """Zeros of ``input_shape`` with the rows of ``grad`` added at ``index`` along ``dim`` (index_add_)."""
    out = np.zeros(input_shape, dtype=grad.dtype)
    if not input_shape:
        return out + grad.reshape(())
    d = normalize_dim(dim, len(input_shape))
    np.add.at(out, (slice(None),) * d + (_data(index).reshape(-1),), grad)
    return out


@_index_select_backward.defvjp
def _(grad, dim, index):
    # (the index may be an array: rules of other ops, sort's among them, scatter through this one)
    return index_select(grad, dim, index if isinstance(index, Tensor) else Tensor(np.asarray(index)))


def _gather_key(shape, dim, idx):
    key = list(np.indices(idx.shape, sparse=True))
    key[dim] = idx
    return tuple(key)


@op("gather", grad_fn="GatherBackward0", promote=None, method=True,
    note="the gradient added into zeros at the gathered positions",
    formula="input: grad added into zeros at the gathered positions, along dim", jvp="linear")
def gather(input, dim, index, sparse_grad=False):
    """``out[i][j] = input[index[i][j]][j]`` for dim 0 (and likewise for other dims): ``index`` has the
    input's number of dimensions and no larger sizes apart from ``dim``. Matches torch.gather.

    Raises:
        RuntimeError: for a non-integer index, mismatching dimensions or sizes, or an index out of range
            (PyTorch's messages); IndexError for a dim out of range.
    """
    idx = _index_array("gather", index)
    d = normalize_dim(dim, input.ndim)
    if idx.size == 0:
        return np.zeros(idx.shape, dtype=input.dtype)
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if max(input.ndim, 1) != max(idx.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    a = input.reshape(input.shape or (1,))
    i = idx.reshape(idx.shape or (1,))
    for k in range(a.ndim):
        if k != d and i.shape[k] > a.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(idx.shape)} to be no "
                               f"larger than self {list(input.shape)} apart from dimension {d}")
    bad = (i < 0) | (i >= a.shape[d])
    if bad.any():
        raise RuntimeError(f"index {i[bad][0]} is out of bounds for dimension {d} with size {a.shape[d]}")
    return a[_gather_key(a.shape, d, i)].reshape(idx.shape)


@gather.defvjp
def _(grad, input_shape, dim, index):
    return _gather_backward(grad, input_shape, dim, index)


@op("_gather_backward", grad_fn="ScatterAddBackward0", promote=None,
    note="gather the same positions of the gradient", jvp="linear")
def _gather_backward(grad, input_shape, dim, index):
    """Zeros of ``input_shape`` with ``grad`` added at the positions ``index`` along ``dim`` (scatter_add_)."""
    out = np.zeros(input_shape or (1,), dtype=grad.dtype)
    idx = _data(index)
    i = idx.reshape(idx.shape or (1,))
    np.add.at(out, _gather_key(out.shape, normalize_dim(dim, out.ndim), i), grad.reshape(i.shape))
    return out.reshape(input_shape)


@_gather_backward.defvjp
def _(grad, dim, index):
    return gather(grad, dim, index if isinstance(index, Tensor) else Tensor(np.asarray(index)))


# ----------------------------------------------------------------------------------------- forward mode
# derivatives.yaml: indexing, index_select, gather, index_put and the slice copies are linear in their tensors
# (index: self_t[indices]; index_put: self_t.index_put(indices, values_t); gather(self_t, dim, index)); the
# indices are passed as they are.

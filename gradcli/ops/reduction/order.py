"""Order statistics: sort, argsort, topk, kthvalue, median (of all elements, and along a dim), msort.

The indices (and so where the gradient goes when values tie) are the ones PyTorch 2.13's CPU kernels choose:
topk runs libstdc++'s std::nth_element + std::sort (or std::partial_sort when ``64 * k <= n``) on (value,
index) pairs (aten/src/ATen/native/TopKImpl.h), emulated step by step here; kthvalue runs PyTorch's own
quick_select_template (aten/src/ATen/native/SortingUtils.h); median along a dim takes the lower median with ties
broken by index, NaN (the first one) winning; sort with ``stable=True`` is stable, and without it orders tied
values as libstdc++'s std::sort does (PyTorch's CPU sort; 1-d integers of 32,768 elements and more go through its
radix sort, stable), NaN last ascending and first descending. median of all elements shares the gradient evenly between the
elements equal to it (evenly_distribute_backward); the others send it to their index
(value_selecting_reduction_backward).
"""

from __future__ import annotations

import math

import numpy as np

from ...engine.tensor import Tensor, normalize_dim, to_tensor
from ..core.declare import composite, not_implemented_for, op, rule_values
from ..shape.indexing import _gather_backward, _index_select_backward, gather
from .reductions import _evenly_distribute, _return_type
from ..shape.views import movedim, reshape, unsqueeze

return_types_sort = _return_type("sort")
return_types_topk = _return_type("topk")
return_types_kthvalue = _return_type("kthvalue")
return_types_median = _return_type("median")


# ------------------------------------------------------------------- libstdc++'s selection, step by step
def _insertion_sort(a, first, last, comp):
    for i in range(first + 1, last):
        val = a[i]
        if comp(val, a[first]):
            a[first + 1:i + 1] = a[first:i]
            a[first] = val
        else:
            j = i
            while comp(val, a[j - 1]):
                a[j] = a[j - 1]
                j -= 1
            a[j] = val


def _move_median_to_first(a, result, i, j, k, comp):
    if comp(a[i], a[j]):
        if comp(a[j], a[k]):
            a[result], a[j] = a[j], a[result]
        elif comp(a[i], a[k]):
            a[result], a[k] = a[k], a[result]
        else:
            a[result], a[i] = a[i], a[result]
    elif comp(a[i], a[k]):
        a[result], a[i] = a[i], a[result]
    elif comp(a[j], a[k]):
        a[result], a[k] = a[k], a[result]
    else:
        a[result], a[j] = a[j], a[result]


def _unguarded_partition(a, first, last, pivot, comp):
    while True:
        while comp(a[first], a[pivot]):
            first += 1
        last -= 1
        while comp(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _partition_pivot(a, first, last, comp):
    mid = first + (last - first) // 2
    _move_median_to_first(a, first, first + 1, mid, last - 1, comp)
    return _unguarded_partition(a, first + 1, last, first, comp)


def _adjust_heap(a, first, hole, length, value, comp):
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if comp(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and comp(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value


def _make_heap(a, first, last, comp):
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        _adjust_heap(a, first, parent, length, a[first + parent], comp)
        if parent == 0:
            return
        parent -= 1


def _pop_heap(a, first, last, result, comp):
    value = a[result]
    a[result] = a[first]
    _adjust_heap(a, first, 0, last - first, value, comp)


def _heap_select(a, first, middle, last, comp):
    _make_heap(a, first, middle, comp)
    for i in range(middle, last):
        if comp(a[i], a[first]):
            _pop_heap(a, first, middle, i, comp)


def _sort_heap(a, first, last, comp):
    while last - first > 1:
        last -= 1
        _pop_heap(a, first, last, last, comp)


def _partial_sort(a, first, middle, last, comp):
    _heap_select(a, first, middle, last, comp)
    _sort_heap(a, first, middle, comp)


def _lg(n: int) -> int:
    return n.bit_length() - 1


def _std_sort(a, first, last, comp):
    def loop(first, last, depth):
        while last - first > 16:
            if depth == 0:
                _partial_sort(a, first, last, last, comp)
                return
            depth -= 1
            cut = _partition_pivot(a, first, last, comp)
            loop(cut, last, depth)
            last = cut

    if first != last:
        loop(first, last, _lg(last - first) * 2)
        _insertion_sort(a, first, last, comp)  # (__final_insertion_sort: the same order)


def _nth_element(a, first, nth, last, comp):
    if first == last or nth == last:
        return
    depth = _lg(last - first) * 2
    while last - first > 3:
        if depth == 0:
            _heap_select(a, first, nth + 1, last, comp)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, comp)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(a, first, last, comp)


def _topk_slice(values, k: int, largest: bool, sorted_: bool) -> list:
    """The indices topk picks from one slice, in its order (TopKImpl.h's topk_impl_loop)."""
    n = len(values)
    q = [(v, j) for j, v in enumerate(values)]
    if largest:
        def comp(x, y):
            return (math.isnan(x[0]) and not math.isnan(y[0])) or x[0] > y[0]
    else:
        def comp(x, y):
            return (not math.isnan(x[0]) and math.isnan(y[0])) or x[0] < y[0]
    if k * 64 <= n:
        _partial_sort(q, 0, k, n, comp)
    elif k > 0:
        _nth_element(q, 0, k - 1, n, comp)
        if sorted_:
            _std_sort(q, 0, k - 1, comp)
    return [j for _, j in q[:k]]


def _quick_select(values, k: int) -> int:
    """The index kthvalue picks (PyTorch's quick_select_template on (value, index) pairs)."""
    arr = list(values)
    ind = list(range(len(arr)))

    def gt(x, y):
        return (math.isnan(x) and not math.isnan(y)) or x > y

    def swap(i, j):
        arr[i], arr[j] = arr[j], arr[i]
        ind[i], ind[j] = ind[j], ind[i]

    lo, hi = 0, len(arr) - 1
    while True:
        if hi <= lo:
            return ind[k]
        if hi == lo + 1:
            if gt(arr[lo], arr[hi]):
                swap(lo, hi)
            return ind[k]
        p = lo + (hi - lo) // 2
        swap(p, lo + 1)
        if gt(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if gt(arr[lo], arr[hi]):
            swap(lo, hi)
        if gt(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j = lo + 1, hi
        piv = arr[lo]
        while True:
            i += 1
            while gt(piv, arr[i]):
                i += 1
            j -= 1
            while gt(arr[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1


def _per_slice(data: np.ndarray, axis: int, width: int, pick, fast=None, as_float: bool = True) -> np.ndarray:
    """Indices (int64) along ``axis``, ``width`` per slice, from ``pick(list of floats) -> list of ints`` (with
    ``as_float=False``, a list of the elements as Python numbers of their own type: int64 beyond 2**53 stays exact).

    ``fast(rows) -> array`` (optional) gives the same indices with numpy for the slices without tied values or
    NaN, where the index of a value does not depend on the algorithm: only the other slices run ``pick``."""
    moved = np.moveaxis(data, axis, -1)
    rows = int(np.prod(moved.shape[:-1], dtype=np.int64))
    flat = moved.reshape(rows, moved.shape[-1])
    if as_float:
        flat = flat.astype(np.float64)
    if fast is not None and flat.size:
        ordered = np.sort(flat, axis=1)
        slow = np.isnan(flat).any(axis=1) | (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
        out = np.asarray(fast(flat), dtype=np.int64).reshape(rows, width)
        for r in np.flatnonzero(slow):
            out[r] = pick(flat[r].tolist())
    else:
        out = np.array([pick(row) for row in flat.tolist()], dtype=np.int64).reshape(rows, width)
    return np.moveaxis(out.reshape(moved.shape[:-1] + (width,)), -1, axis)


def _scatter_back(grad, input, dim, idx, keepdim):
    """value_selecting_reduction_backward: the gradient put at the selected indices of zeros."""
    shape = tuple(input.shape)
    if not shape:
        return grad
    axis = normalize_dim(dim, len(shape))
    if not keepdim:
        grad = unsqueeze(grad, axis)
        idx = np.expand_dims(idx, axis)
    return _gather_backward(grad, shape, axis, idx)


def _gather_tangent(input_t, input, dim, idx, keepdim):
    if input.ndim == 0:
        return input_t
    axis = normalize_dim(dim, input.ndim)
    out = gather(input_t, axis, Tensor(idx if keepdim else np.expand_dims(idx, axis)))
    return out if keepdim else out.squeeze(axis)


def _slice_indices(data, dim, keepdim, pick, fast=None, as_float=True):
    """The int64 index along ``dim`` of the value that a value-selecting reduction (median, nanmedian, mode,
    kthvalue) picks in each slice, from ``pick(row) -> int`` (``fast`` and ``as_float`` as :func:`_per_slice`'s);
    0 for a 0-d ``data``; ``dim`` kept as size 1 with ``keepdim``, squeezed without."""
    if data.ndim == 0:
        return np.zeros((), dtype=np.int64)
    axis = normalize_dim(dim, data.ndim)
    idx = _per_slice(data, axis, 1, lambda row: [pick(row)], fast, as_float)
    return idx if keepdim else np.squeeze(idx, axis)


def _take_selected(input, axis, idx, keepdim):
    """``(values, indices)`` of a value-selecting reduction: ``input``'s elements at ``idx`` (the indices with
    ``axis`` kept as size 1), both squeezed along ``axis`` unless ``keepdim``."""
    values = np.take_along_axis(input, idx, axis=axis)
    if not keepdim:
        values, idx = np.squeeze(values, axis), np.squeeze(idx, axis)
    return values, idx


def _def_select_rules(entry, indices):
    """Give ``entry``, a value-selecting reduction ``(input, dim, keepdim) -> (values, indices)`` (median,
    nanmedian, mode along a dim), its derivative rules, with ``indices(data, dim, keepdim)`` the indices its
    forward picks (recomputed from the saved input): derivatives.yaml's
    ``value_selecting_reduction_backward(grad, dim, indices, self.sizes(), keepdim)`` and, forward mode,
    ``gather_with_keepdimed_indices(self_t, dim, indices, keepdim)``. Returns ``entry``."""

    @entry.defvjp
    def _(grad, input, dim, keepdim):
        return _scatter_back(grad, input, dim, indices(rule_values(input), dim, keepdim), keepdim)

    @entry.defjvp
    def _(input_t, input, dim, keepdim):
        return _gather_tangent(input_t, input, dim, indices(input.data, dim, keepdim), keepdim)

    return entry


def _select_along(name, input, dim, keepdim, indices, empty_ok=False):
    """``(values, indices)`` of torch.``name``(input, dim, keepdim) for median, nanmedian and mode, with
    ``indices(input, axis, True)`` the index picked in each slice. A 0-d input is its own value, at index 0.

    Raises:
        IndexError: for ``dim`` out of range; for a ``dim`` of size 0 (PyTorch's message) unless ``empty_ok``
            (median's CPU kernel returns empty values and indices instead)."""
    axis = normalize_dim(dim, max(input.ndim, 1))
    if input.ndim == 0:
        return input.copy(), np.zeros((), dtype=np.int64)
    if input.shape[axis] == 0:
        if not empty_ok:
            raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
        shape = input.shape[:axis] + ((1,) if keepdim else ()) + input.shape[axis + 1:]
        return np.zeros(shape, dtype=input.dtype), np.zeros(shape, dtype=np.int64)
    return _take_selected(input, axis, indices(input, axis, True), keepdim)


# ------------------------------------------------------------------------------------------ sort/argsort
@op("_sort", grad_fn="SortBackward0", promote=None, note="d/dx = the gradient scattered back to the sorted positions",
    formula="input: the grad of each sorted value sent back to the position it came from", kinks="sort")
def _sort(input, dim, descending, stable):
    """``(values, indices)`` along ``dim`` (stable, as PyTorch's CPU sort)."""
    if input.ndim == 0:
        return input.copy(), np.zeros((), dtype=np.int64)
    d = normalize_dim(dim, input.ndim)
    key = -input if descending and input.dtype.kind != "b" else input
    if descending and input.dtype.kind == "b":
        key = ~input
    if input.dtype.kind == "f":  # NaN sorts last ascending, first descending (PyTorch)
        key = np.where(np.isnan(input), -np.inf if descending else np.inf, key)
    idx = np.argsort(key, axis=d, kind="stable")
    values = np.take_along_axis(input, idx, axis=d)
    if not stable and not _radix_sorted(input, descending):
        idx = _unstable_order(input, values, idx, d, descending)
        values = np.take_along_axis(input, idx, axis=d)
    return values, idx.astype(np.int64)


def _radix_sorted(input, descending: bool) -> bool:
    """Whether ATen sorts with its radix sort (stable) instead of std::sort: 1-d integers ascending, from
    at::internal::GRAIN_SIZE (32,768) elements (SortingKernel.cpp, can_use_radix_sort)."""
    return input.ndim == 1 and not descending and input.dtype.kind in "iu" and input.size >= 32768


def _unstable_order(input, values, idx, d: int, descending: bool):
    """The indices of ``sort(stable=False)``: ATen runs libstdc++'s std::sort on (value, index) pairs compared by
    value only (KeyValueCompAsc/Desc: NaN last ascending, first descending), which orders tied values its own
    way. A slice without ties (NaNs tie with each other) has one order, the stable one; the slices with ties
    are sorted again by :func:`_std_sort`, step by step."""
    moved = np.moveaxis(values, d, -1)
    if moved.shape[-1] < 2:
        return idx
    same = moved[..., 1:] == moved[..., :-1]
    if moved.dtype.kind == "f":
        same |= np.isnan(moved[..., 1:]) & np.isnan(moved[..., :-1])
    tied = np.any(same, axis=-1)
    if not np.any(tied):
        return idx
    out = np.moveaxis(idx.copy(), d, -1)
    rows = np.moveaxis(input, d, -1)
    isnan = math.isnan
    if descending:
        def comp(left, right):
            return (isnan(left[0]) and not isnan(right[0])) or left[0] > right[0]
    else:
        def comp(left, right):
            return (not isnan(left[0]) and isnan(right[0])) or left[0] < right[0]
    for pos in np.ndindex(tied.shape):
        if not tied[pos]:
            continue
        row = rows[pos].astype(np.float64) if rows.dtype.kind != "f" else rows[pos]
        pairs = [(v, j) for j, v in enumerate(row.tolist())]
        _std_sort(pairs, 0, len(pairs), comp)
        out[pos] = [j for _, j in pairs]
    return np.moveaxis(out, -1, d)


@_sort.defvjp
def _(grad, input, dim, descending, stable):
    # value_selecting_reduction_backward: the gradient scattered back to where each value came from (the
    # indices recomputed from the saved input, as the forward picked them)
    data = input.data if isinstance(input, Tensor) else np.asarray(input)
    if data.ndim == 0:
        return grad
    _, idx = _sort(data, dim, descending, stable)
    d = normalize_dim(dim, data.ndim)
    moved = np.moveaxis(idx, d, -1)
    n = moved.shape[-1]
    flat = (moved.reshape(-1, n) + np.arange(moved.size // max(n, 1))[:, None] * n).reshape(-1)
    g = reshape(_movedim(grad, d), (-1,))
    out = _index_select_backward(g, (data.size,), 0, flat)
    return _movedim_back(reshape(out, moved.shape), d)


@_sort.defjvp
def _(input_t, input, dim, descending, stable):
    # derivatives.yaml sort: values: gather_with_keepdimed_indices(self_t, dim, indices, ...)
    data = input.data if isinstance(input, Tensor) else np.asarray(input)
    if data.ndim == 0:
        return input_t
    _, idx = _sort(data, dim, descending, stable)
    return gather(input_t, normalize_dim(dim, data.ndim), Tensor(idx))  # (the indices have no tangent)


def _movedim(t, d):

    return movedim(t, d, -1)


def _movedim_back(t, d):

    return movedim(t, -1, d)


@composite("sort", grad_fn="SortBackward0", note=_sort.note, method=True)
def sort(input, dim=-1, descending=False, stable=False):
    """``(values, indices)`` sorted along ``dim`` (a named tuple; stable); ``values`` is differentiable, the
    indices are int64. Matches torch.sort (grad_fn SortBackward0)."""
    values, indices = _sort(to_tensor(input), dim, bool(descending), bool(stable))
    return return_types_sort(values, indices)


@composite("argsort", grad_fn="none (indices)", note="not differentiable (indices)", method=True,
           differentiable=False)
def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim`` (int64). Matches torch.argsort."""
    return sort(input, dim, descending, stable)[1]


# ---------------------------------------------------------------------------------------------------- topk
def _topk_indices(data, k, dim, largest, sorted_):
    if data.ndim == 0:
        return np.zeros((), dtype=np.int64)
    axis = normalize_dim(dim, data.ndim)
    fast = None
    if sorted_:  # without ties the sorted order is the values' (unsorted, it is the selection's own)
        fast = lambda rows: np.argsort(-rows if largest else rows, axis=1, kind="stable")[:, :k]  # noqa: E731
    return _per_slice(data, axis, k, lambda row: _topk_slice(row, k, largest, sorted_), fast)


@op("_topk", grad_fn="TopkBackward0", promote=None,
    note="d/dx = the gradient of each of the k values at the index it came from, 0 elsewhere",
    formula="input: the grad of each of the k values at the index it came from, 0 elsewhere", kinks="topk")
def _topk(input, k, dim, largest, sorted):
    """``(values, indices)`` of torch.topk."""
    axis = normalize_dim(dim, max(input.ndim, 1))
    size = input.shape[axis] if input.ndim else 1
    if k < 0 or k > size:
        raise RuntimeError("selected index k out of range")
    if input.ndim == 0:
        return input.copy(), np.zeros((), dtype=np.int64)
    idx = _topk_indices(input, k, axis, largest, sorted)
    return np.take_along_axis(input, idx, axis=axis), idx


@_topk.defvjp
def _(grad, input, k, dim, largest, sorted):
    return _scatter_back(grad, input, dim, _topk_indices(rule_values(input), k, dim, largest, sorted), True)


@_topk.defjvp
def _(input_t, input, k, dim, largest, sorted):
    # derivatives.yaml topk: values: gather(self_t, dim, indices)
    return _gather_tangent(input_t, input, dim, _topk_indices(input.data, k, dim, largest, sorted), True)


@composite("topk", grad_fn="TopkBackward0", note=_topk.note, method=True)
def topk(input, k, dim=-1, largest=True, sorted=True):
    """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) elements along ``dim`` (a named
    tuple; NaN counts as the largest), in order when ``sorted``. Matches torch.topk (grad_fn TopkBackward0): the
    indices, also of tied values, are the ones PyTorch's CPU kernel picks; each value's gradient goes to its index.

    Raises:
        RuntimeError: for k out of range (PyTorch's message); IndexError for a dim out of range.
    """
    values, indices = _topk(to_tensor(input), int(k), dim, bool(largest), bool(sorted))
    return return_types_topk(values, indices)


# ----------------------------------------------------------------------------------------------- kthvalue
def _kth_indices(data, k, dim, keepdim):
    return _slice_indices(data, dim, keepdim, lambda row: _quick_select(row, k - 1),
                          lambda rows: np.argsort(rows, axis=1, kind="stable")[:, k - 1])


@op("_kthvalue", grad_fn="KthvalueBackward0", promote=None,
    note="d/dx = 1 at the index of the k-th smallest element of each slice, 0 elsewhere",
    formula="input: grad at the index of each slice's k-th smallest element, 0 elsewhere", kinks="kthvalue")
def _kthvalue(input, k, dim, keepdim):
    """``(values, indices)`` of torch.kthvalue."""
    axis = normalize_dim(dim, max(input.ndim, 1))
    size = input.shape[axis] if input.ndim else 1
    if input.ndim and size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {axis} to have non-zero size.")
    if k < 1 or k > size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
    if input.ndim == 0:
        return input.copy(), np.zeros((), dtype=np.int64)
    return _take_selected(input, axis, _kth_indices(input, k, axis, True), keepdim)


@_kthvalue.defvjp
def _(grad, input, k, dim, keepdim):
    return _scatter_back(grad, input, dim, _kth_indices(rule_values(input), k, dim, keepdim), keepdim)


@_kthvalue.defjvp
def _(input_t, input, k, dim, keepdim):
    # derivatives.yaml kthvalue: values: gather_with_keepdimed_indices(self_t, dim, indices, keepdim)
    return _gather_tangent(input_t, input, dim, _kth_indices(input.data, k, dim, keepdim), keepdim)


@composite("kthvalue", grad_fn="KthvalueBackward0", note=_kthvalue.note, method=True)
def kthvalue(input, k, dim=-1, keepdim=False):
    """``(values, indices)`` of the ``k``-th smallest element (1-based; NaN counts as the largest) along ``dim``
    (a named tuple). Matches torch.kthvalue (grad_fn KthvalueBackward0): the index, also among tied values, is
    the one PyTorch's quickselect picks, and the gradient goes there.

    Raises:
        RuntimeError: for k out of range (PyTorch's message); IndexError for a dim out of range or empty.
    """
    values, indices = _kthvalue(to_tensor(input), int(k), dim, bool(keepdim))
    return return_types_kthvalue(values, indices)


# -------------------------------------------------------------------------------------------------- median
def _median_check(input):
    if input.dtype.kind == "b":
        raise not_implemented_for("median_cpu", input.dtype)


def _median_index(row) -> int:
    nan = [j for j, v in enumerate(row) if v != v]
    if nan:
        return nan[0]
    order = sorted(range(len(row)), key=lambda j: (row[j], j))
    return order[(len(row) - 1) // 2]


@op("_median_all", grad_fn="MedianBackward0", promote=None,
    note="d/dx = 1/m at each of the m elements equal to the median, 0 elsewhere",
    formula="input: grad / m at each of the m elements equal to the median, 0 elsewhere", kinks="median",
    jvp="reduction")  # evenly_read_jvp: the tangent averaged over the elements equal to the median
def _median_all(input):
    """The lower median of all elements (NaN if there is one; NaN for an empty float tensor)."""
    _median_check(input)
    flat = input.reshape(-1)
    if flat.size == 0:
        return np.asarray(np.nan, dtype=input.dtype)
    if input.dtype.kind == "f" and np.isnan(flat).any():
        return np.asarray(np.nan, dtype=input.dtype)
    return np.asarray(np.sort(flat, kind="stable")[(flat.size - 1) // 2])


_median_all.defvjp(_evenly_distribute)  # derivatives.yaml median: evenly_distribute_backward(grad, self, result)


def _median_indices(data, dim, keepdim):
    return _slice_indices(data, dim, keepdim, _median_index,
                          lambda rows: np.argsort(rows, axis=1, kind="stable")[:, (rows.shape[1] - 1) // 2])


@op("_median_dim", grad_fn="MedianBackward1", promote=None,
    note="d/dx = 1 at the index of the median of each slice, 0 elsewhere",
    formula="input: grad at the index of each slice's median, 0 elsewhere", kinks="median")
def _median_dim(input, dim, keepdim):
    """``(values, indices)`` of torch.median(input, dim, keepdim)."""
    _median_check(input)
    return _select_along("median", input, dim, keepdim, _median_indices, empty_ok=True)


_def_select_rules(_median_dim, _median_indices)  # derivatives.yaml median.dim


@composite("median", grad_fn="MedianBackward0 (all elements) | MedianBackward1 (dim)", method=True,
           note="median(): d/dx = 1/m at each of the m elements equal to it; median(dim): 1 at its index")
def median(input, dim=None, keepdim=False):
    """The lower median: of all elements (0-d; NaN if there is one), or with ``dim`` a ``(values, indices)``
    named tuple along it (ties broken by the lower index; the first NaN of a slice wins). Matches torch.median:
    without dim grad_fn MedianBackward0, the gradient shared evenly by the elements equal to the median; with dim
    MedianBackward1, the gradient at the index.

    Raises:
        NotImplementedError: for bool tensors; IndexError for a dim out of range (PyTorch's messages).
    """
    x = to_tensor(input)
    if dim is None:
        return _median_all(x)
    values, indices = _median_dim(x, dim, bool(keepdim))
    return return_types_median(values, indices)


# --------------------------------------------------------------------------------------------------- msort
@composite("msort", grad_fn="SortBackward0", method=True,
           note="d/dx = the gradient of each sorted value sent back to where it came from")
def msort(input):
    """``input`` sorted along its first dimension (ascending; stable). Matches torch.msort (``sort(input,
    dim=0).values``; grad_fn SortBackward0)."""
    return sort(input, 0).values

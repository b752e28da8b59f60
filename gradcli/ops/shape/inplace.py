"""In-place operations: the ``_``-suffixed methods (``add_``, ``sub_``, ``mul_``, ``div_``, ``pow_``, ``clamp_``,
``fill_``, ``zero_``, ``copy_``, ``tril_``, ``triu_``), ``t[key] = v``, and PyTorch's version counter that guards saved values against
them. ``t += v`` and the other augmented assignments on tensors use them (:mod:`gradcli.ops.operators`).

All of them go through :func:`apply`: the result is computed by the ordinary (out-of-place) op, checked, and
written into the tensor's existing numpy buffer, so aliases and views of it (and the base of a view) see the new
values, as in PyTorch. Checks and messages follow PyTorch 2.13 (c10/core/TensorImpl, ATen TensorIterator,
torch/csrc/autograd/VariableTypeUtils.h):

* a leaf that requires grad cannot be modified in place while grad mode is on;
* an output of split/chunk/unbind (one node with several outputs) cannot be modified in place in grad mode;
* a tensor whose elements overlap in memory (``expand``) cannot be written;
* the result must have the tensor's shape (no broadcasting of the tensor itself) and its dtype must be castable
  to the tensor's (``int_t += 1.5`` fails: "result type Float can't be cast to the desired output type Long").

When the operation is recorded (grad mode on and the tensor or an operand requires grad), the tensor's history
becomes the op's node (``t.grad_fn`` is ``AddBackward0`` after ``t += v``, ``MulBackward0`` after ``mul_``) and the
node computes on a copy of the old values, so its gradient is exact.

Views, as PyTorch's: the view ops (view/reshape, t, transpose, permute, unsqueeze, squeeze, select, slice,
diagonal, expand, alias, split, unbind) mark a result that shares its input's memory as a view of the input's
base (``Tensor._base``, :func:`gradcli.engine.tensor.mark_view`), and the base keeps weak references to its
views. A recorded in-place operation on a view makes the base's history PyTorch's ``CopySlices`` (the base's
gradient goes to the op's result at the view's place, found from the memory layout, and to the base's old
history elsewhere), and one on a base or a view gives every live view of the base the history of its place
in the base (``AsStridedBackward0``, as PyTorch regenerates a view's grad_fn). A ``detach()`` alias shares the
memory and the version counter, not the history.

The version counter: each in-place write counts as a modification of the buffer it wrote (the root
``ndarray.base`` of the tensor's data, shared by every view, as PyTorch's counter is shared by a storage's
views; the registry is :mod:`gradcli.engine.versions`). The registry of modifications is empty until the first in-place
write, and only then does backward check (:func:`check_saved`, installed as ``autograd.saved_check``) that no
value a node saved was modified after the node was made, raising PyTorch's "one of the variables needed for
gradient computation has been modified by an inplace operation" otherwise. So programs without in-place
operations pay nothing for it.
"""

from __future__ import annotations

import bisect
import re
import weakref

import numpy as np

from ...engine import autograd, dtypes, graph, versions
from ...engine.graph import MultiNode, Node, OutputEdge
from ...engine.context import state as _state
from ...engine.errors import Unbatchable
from ...engine.tensor import Tensor, fw_tangent, live_views, mark_view
from ..core.apply import broadcast_error
from ..core.declare import op, tensor_method
from ..elementwise.arithmetic import add, clamp, div, fmod, mul, pow, sub
from . import joins, views as views_ops
from .indexing import _copy_slices, _index_put, _setitem_kind, numpy_key
from ..reduction.reductions import expand
from ..elementwise.unary import ceil, floor, frac, trunc
from ..linalg import structured as _structured  # tril/triu, for tril_/triu_

LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
OVERLAP_ERROR = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
                 "location. Please clone() the tensor before performing the operation.")
VERSION_HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
                "torch.autograd.set_detect_anomaly(True, check_nan=False).")

# ------------------------------------------------------------------------------------------ version counter
# The registry of modifications is gradcli.engine.versions (the tensor layer: Tensor._version reads it).


def bump(a: np.ndarray, node=None, owner: np.ndarray | None = None) -> None:
    """Count one in-place modification of ``a``'s buffer; ``node`` is the new grad_fn, if recorded, of the
    tensor whose array is ``owner`` (default ``a``: the modified tensor; a view's base for a view)."""
    versions.bump(a, graph.peek_sequence(), None if node is None else _short_name(node), owner)


version = versions.version


def _type_string(a: np.ndarray) -> str:
    return f"torch.{dtypes.scalar_type_name(a.dtype)}Tensor [{', '.join(map(str, a.shape))}]"


class _Modified(np.ndarray):
    """A saved value whose buffer was modified in place after it was saved: any computation with it (a ufunc, a
    numpy function, reading an element) raises PyTorch's error, so a derivative rule that does not need it (``x *
    2`` saves ``x``, which only ``2``'s gradient would use) still runs, as in PyTorch, which saves only what the
    needed formulas use."""

    def __array_finalize__(self, obj):
        self.message = getattr(obj, "message", None)

    def __array_ufunc__(self, *args, **kwargs):
        raise RuntimeError(self.message)

    def __array_function__(self, *args, **kwargs):
        raise RuntimeError(self.message)

    def __getitem__(self, key):
        raise RuntimeError(self.message)

    def tolist(self):
        raise RuntimeError(self.message)


def check_saved(roots) -> None:
    """Mark the values saved by the nodes of the graph of ``roots`` (output Tensors) whose buffer was modified in
    place after the node was made, so that a derivative rule using one raises PyTorch's RuntimeError. Called by
    the backward engine before it runs, and only while some buffer has been modified in place.

    The error (PyTorch's SavedVariable::unpack): "one of the variables needed for gradient computation has been
    modified by an inplace operation: [torch.FloatTensor [2]], which is output 0 of Mul, is at version 1;
    expected version 0 instead. Hint: ..." (the "which is" part names the tensor's current grad_fn, or the node
    itself for a saved result, and is absent for leaves and constants).
    """
    if not versions.modified:
        return
    stack = [r.grad_fn for r in roots if r.grad_fn is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        saved = node.saved
        if type(saved) is tuple and saved:  # (saved tensors hooks: no version check, as PyTorch)
            marked = None
            for slot, a in enumerate(saved):
                if type(a) is np.ndarray:
                    rec = versions.record(a)
                    if rec is not None and rec.positions[-1] > node.seq:
                        if marked is None:
                            marked = list(saved)
                        m = a.view(_Modified)
                        m.message = _modified_message(node, slot, a, rec)
                        marked[slot] = m
            if marked is not None:
                node.saved = tuple(marked)
        for e in node.edges:
            if type(e) is OutputEdge:
                stack.append(e.node)
            elif isinstance(e, Node):
                stack.append(e)


def _modified_message(node, slot: int, a: np.ndarray, rec: versions.Record) -> str:
    expected = bisect.bisect_right(rec.positions, node.seq)
    current = len(rec.positions)
    owner = None  # (output_nr, grad_fn name) of the tensor the value belongs to
    i = node.op.save_plan[slot] if slot < len(node.op.save_plan) else None
    if i == node.op.ninputs:  # the node's own result
        owner = (0, _short_name(node))
    else:
        where = None
        for pos, name, geom in rec.recorded:  # the last recorded modification after the node made the current grad_fn
            if pos > node.seq:
                # the value is the tensor that got that history, or another view of the buffer (AsStrided)
                if where is None:
                    where = versions.geometry(a)
                owner = (0, name if geom == where else "AsStrided")
        if owner is None and i is not None:
            e = node.edges[i]
            if type(e) is OutputEdge:
                owner = (e.nr, _short_name(e.node))
            elif isinstance(e, Node):
                owner = (0, _short_name(e))
    which = "" if owner is None else f", which is output {owner[0]} of {owner[1]},"
    return (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[{_type_string(a)}]{which} is at version {current}; expected version {expected} instead. "
            f"{VERSION_HINT}")


def _short_name(node) -> str:
    # PyTorch 2.13 names nodes without the "BackwardN" suffix in these messages ("output 0 of Mul"), and its
    # C++-only nodes by their full name ("output 0 of torch::autograd::CopySlices")
    name = graph.torch_name(node)
    return name if name.startswith("torch::") else re.sub(r"Backward\d*$", "", name)


autograd.saved_check = check_saved  # the engine calls it before a backward, while some buffer was modified


# ------------------------------------------------------------------------------------------------- views
# The ops whose result is a view of their first input (PyTorch's view functions): their results are marked
# (Tensor._base, gradcli.engine.tensor.mark_view) when numpy made them share the input's memory.
_VIEW_OPS = (views_ops._reshape, views_ops._reshape_alias, views_ops.permute, views_ops.transpose, views_ops.t,
             views_ops.unsqueeze, views_ops.squeeze, views_ops._diagonal, views_ops.select, views_ops._slice,
             views_ops._alias, expand, joins._split, joins._split_with_sizes, joins._unbind)


def _view_applier(apply_fn):
    def apply_view(o, args, params=None):
        out = apply_fn(o, args, params)
        a = args[0]
        if type(a) is Tensor:
            if type(out) is Tensor:
                mark_view(out, a)
            elif type(out) is tuple:  # split, unbind
                for x in out:
                    if type(x) is Tensor:
                        mark_view(x, a)
        return out

    return apply_view


for _o in _VIEW_OPS:
    _o.apply_fn = _view_applier(_o.apply_fn)


def _view_key(view: np.ndarray, base: np.ndarray) -> tuple:
    """Where the elements of ``view`` (an array sharing ``base``'s memory) are in ``base``: a tuple of index
    arrays of ``view``'s shape (``base[key]`` has the view's values). Found from the memory layout (data
    pointers and strides), so it holds for any chain of view ops, as PyTorch's as_strided geometry does."""
    item = base.itemsize
    # an int64 buffer laid out as base's memory, holding each element's C-order position in base
    lo = sum(min(0, s * (n - 1)) for s, n in zip(base.strides, base.shape))
    hi = sum(max(0, s * (n - 1)) for s, n in zip(base.strides, base.shape)) + item
    buf = np.zeros((hi - lo) // item, dtype=np.int64)
    scale = 8 // item if item <= 8 else None
    if scale is None or any(s % item for s in base.strides + view.strides):
        raise NotImplementedError("gradcli cannot locate this view in its base's memory")
    start = -lo // item
    as_strided = np.lib.stride_tricks.as_strided
    as_strided(buf[start:], base.shape, [s * scale for s in base.strides])[...] = (
        np.arange(base.size, dtype=np.int64).reshape(base.shape))
    offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // item
    flat = as_strided(buf[start + offset:], view.shape, [s * scale for s in view.strides]).copy()
    return np.unravel_index(flat, base.shape)


@op("_as_strided_view", grad_fn="AsStridedBackward0", promote=None, jvp="linear",
    note="the gradient placed in zeros at the view's elements")
def _as_strided_view(input, key):
    """``input[key]`` for the key of :func:`_view_key`: what a view of ``input`` holds. The history a view gets
    after an in-place operation on it or on its base (PyTorch regenerates it as AsStridedBackward0)."""
    return input[key]


@_as_strided_view.defvjp
def _(grad, input_shape, key):
    return _copy_slices(_zeros_like_shape(grad, input_shape), grad, key)


def _zeros_like_shape(grad, shape):
    if isinstance(grad, Tensor):
        return Tensor(np.zeros(shape, dtype=grad.data.dtype))
    return np.zeros(shape, dtype=grad.dtype)


def _rebase_view(t: Tensor, base: Tensor, result: Tensor) -> None:
    """A recorded in-place operation on the view ``t`` of ``base`` (PyTorch's CopySlices): ``result`` (the op's
    output, with its node) is copied into the base's history at the view's place, so the base's gradient flows
    to it there and to the base's old history elsewhere; then every live view of the base, ``t`` among them,
    gets its history from the base's new one (AsStridedBackward0)."""
    key = _view_key(t.data, base.data)
    old = Tensor(base.data, base.requires_grad, base.grad_fn)  # the base as its old history sees it
    node = _copy_slices(old, result, key).grad_fn
    _rebase(base, node)
    _regenerate_views(base)


def _regenerate_views(base: Tensor) -> None:
    """Give each live view of ``base`` (which requires grad: its history was just rewritten) the history of
    its place in the base, as PyTorch does when it next reads a view's grad_fn."""
    for v in live_views(base):
        m = v._meta
        if m.no_grad_view == 1:  # a view made in no_grad mode gets no history (PyTorch refuses its next use)
            continue
        node = _as_strided_view(base, _view_key(v.data, base.data)).grad_fn
        _rebase(v, node)


def _check_writable(t: Tensor) -> None:
    a = t.data
    if a.flags.writeable:
        return
    if any(s == 0 and n > 1 for s, n in zip(a.strides, a.shape)):
        raise RuntimeError(OVERLAP_ERROR)
    raise NotImplementedError("gradcli cannot write into this tensor's memory (a read-only array); clone() it "
                              "before modifying it in place")


def _cast_ok(src: np.dtype, dst: np.dtype) -> bool:
    # c10::canCast: no float -> integral/bool, no non-bool -> bool
    if src.kind == "f" and dst.kind != "f":
        return False
    return not (dst.kind == "b" and src.kind != "b")


#: PyTorch's refusal of an in-place op on a tensor that a vmap does not map, with an argument that it maps (the
#: batching rule of the binary pointwise in-place ops: mul_, sub_, div_, copy_).
INPLACE_BATCHED_ERROR = ("vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor "
                         "`other` in extra_args that has more elements than `self`. This happened due to `other` "
                         "being vmapped over but `self` not being vmapped over in a vmap. Please try to use "
                         "out-of-place operators instead of inplace arithmetic. If said operator is being called "
                         "inside the PyTorch framework, please file a bug report instead.")


def batched_inplace_error(refusal: str, shape, result) -> RuntimeError:
    """PyTorch's error for an in-place op inside vmap writing mapped values (``result``, a BatchedTensor) into a
    tensor of logical ``shape`` that the vmap does not map there. ``refusal`` says which of functorch's paths
    PyTorch takes for the op: "arithmetic" (the binary pointwise rule: INPLACE_BATCHED_ERROR), "add" (add_'s own
    rule: a shape mismatch against the physical result, batch dimensions in front), or an ATen name such as
    "aten::pow_" (the slow fallback's message, BatchedFallback.cpp, naming the level)."""
    if refusal == "add":
        return RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                            f"{list(result._value.shape)}")
    if refusal == "arithmetic":
        return RuntimeError(INPLACE_BATCHED_ERROR)
    level = min(result._levels)
    return RuntimeError(f"vmap: {refusal}(self, *extra_args) is not possible because there exists a Tensor `other` in "
                        "extra_args that has more elements than `self`. This happened due to `other` being vmapped "
                        f"over but `self` not being vmapped over at level {level}. Please try to use out-of-place "
                        f"operators instead of {refusal}. If said operator is being called inside the PyTorch "
                        "framework, please file a bug report instead.")


def apply(t: Tensor, compute, others=(), *, cast: str = "scalar", anomaly_mark=None,
          aliased_tangent: bool = False, refusal: str = "arithmetic") -> Tensor:
    """Run ``compute(t)`` (an out-of-place op giving a Tensor) and write its result into ``t``'s buffer.

    Args:
        t: the tensor to modify.
        compute: the out-of-place computation, called with ``t`` or, when recording, with a Tensor holding a copy
            of ``t``'s values and its history.
        others: the other arguments (tensors among them that require grad make the operation recorded).
        cast: how a result dtype that ``t``'s cannot hold is reported: "scalar" (ScalarType names, "Long"),
            "c" (C type names, "long int", as PyTorch's clamp kernel does), or None for operations that cast
            freely (fill_, copy_).
        aliased_tangent: under forward AD, when an argument shares ``t``'s memory, compute the tangent as
            PyTorch does for a formula without ``result`` (mul_): after the primal is written, the argument read
            with its new values and its old tangent, ``t`` with its old values.
        refusal: inside vmap, how PyTorch refuses mapped values written into ``t`` where it is not mapped (see
            :func:`batched_inplace_error`).

    Returns:
        ``t``, with its new values (and its new grad_fn when recorded).

    Raises:
        RuntimeError: PyTorch's messages for a leaf that requires grad, an output of split/unbind in grad mode,
            overlapping memory, a result of another shape or of a dtype that cannot be cast.
        NotImplementedError: for a read-only array that is not an expand (see :func:`_check_writable`).
    """
    enabled = _state.grad_enabled
    level = _state.fw_level
    tangent = None if level is None else fw_tangent(t)
    fn = t.grad_fn
    meta = t._meta
    if enabled:
        if type(fn) is MultiNode:
            raise RuntimeError(_multi_output_message(t))
        if meta is not None and meta.no_grad_view:
            _check_no_grad_view(t, others)
        if t.requires_grad and fn is None:
            raise RuntimeError(LEAF_ERROR)
    _check_writable(t)
    record = enabled and (t.requires_grad or any(type(o) is Tensor and o.requires_grad for o in others))
    base = None if meta is None else meta.base  # t._base
    if record:
        if base is not None and base.requires_grad and base.grad_fn is None:
            raise RuntimeError("a view of " + LEAF_ERROR)
        # the node computes on a copy of the old values: the write below must not change what it saved
        src = Tensor(t.data.copy(), t.requires_grad, fn)
        if level is not None and tangent is not None:
            src._fw = t._fw
    else:
        src = t
    result = compute(src)
    out = result.data
    data = t.data
    if getattr(out, "batched", False) and not getattr(data, "batched", False):  # inside vmap: a batched result
        # for an unbatched t (PyTorch's message); a result computed from unmapped inputs alone (lifted at every
        # level, see gradcli.api.vmap) is unbatched in PyTorch and may be written: vmap runs per example then
        if set(result._levels) <= result._lifted:
            raise Unbatchable("a value of unmapped inputs written into an unbatched tensor")
        raise batched_inplace_error(refusal, data.shape, result)
    if out.shape != data.shape:
        raise RuntimeError(f"output with shape {list(data.shape)} doesn't match the broadcast shape "
                           f"{list(out.shape)}")
    if cast is not None and not _cast_ok(out.dtype, data.dtype):
        name = dtypes.c_type_name if cast == "c" else dtypes.scalar_type_name
        raise RuntimeError(f"result type {dtypes.scalar_type_name(out.dtype)} can't be cast to the desired output "
                           f"type {name(data.dtype)}")
    aliased = aliased_tangent and level is not None and tangent is not None and _aliased(t, others)
    before = data.copy() if aliased else None
    data[...] = out
    if level is not None:
        new_tangent = fw_tangent(result)
        if aliased and new_tangent is not None:
            # PyTorch computes an in-place op's tangent after writing its primal: an argument sharing self's
            # memory is read with its new values (and its old tangent), self with its old ones
            old = Tensor(before)
            old._fw = (level, tangent)
            new_tangent = fw_tangent(compute(old))
        _set_tangent_inplace(t, tangent, new_tangent, level)
    node = result.grad_fn if record else None
    if node is not None and base is not None:  # a view: the base's history (and every view's) is rewritten
        _rebase_view(t, base, result)
        node = base.grad_fn  # CopySlices: the base's new history (the view's is AsStrided)
    bump(data, node, None if base is None else base.data)
    if node is not None and base is None:
        _rebase(t, node)
        _regenerate_views(t)
    return t


def _aliased(t: Tensor, others) -> bool:
    """Whether a Tensor among ``others`` shares memory with ``t``."""
    return any(type(o) is Tensor and np.shares_memory(o.data, t.data) for o in others)


def _set_tangent_inplace(t: Tensor, old, new, level) -> None:
    """Forward AD through an in-place operation: ``t``'s tangent becomes the result's, written into its old tangent
    (so that views of that tangent, the tangents of views of ``t`` made before, see it, as PyTorch updates the
    forward gradient in place) when that is a plain writable tensor of the same shape, else replacing it."""
    if new is None:
        return
    if (old is not None and old.grad_fn is None and not old.requires_grad and new.grad_fn is None
            and not new.requires_grad and old.data.shape == new.data.shape and old.data.flags.writeable
            and old.data.dtype == new.data.dtype):
        old.data[...] = new.data
        bump(old.data)
        return
    t._fw = (level, new if new.data.dtype == t.data.dtype else new.to(dtypes.from_numpy(t.data.dtype)))


def _rebase(t: Tensor, node) -> None:
    """Make ``node`` the history of ``t`` (torch's rebase_history for a tensor that is not a view)."""
    node.out_dtype = t.data.dtype  # gradients flowing into it are t's (the op may have computed wider)
    if t._retains_grad and t.grad_fn is not None:  # retain_grad() follows the tensor to its new history
        t.grad_fn.retained = None
        node.retained = weakref.ref(t)
    t.grad_fn = node
    t.requires_grad = True
    try:
        del t._output_nr
    except AttributeError:
        pass


#: PyTorch's refusal of an in-place op with grad mode on, on a view made in no_grad mode (handle_view_on_rebase).
NO_GRAD_VIEW_ERROR = ("{} no_grad mode and is being modified inplace with grad mode enabled. Given that this use case "
                      "is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the "
                      "view and the inplace either both inside the no_grad block (if you don't want the inplace to "
                      "be tracked) or both outside (if you want the inplace to be tracked).")


def _check_no_grad_view(t: Tensor, others, view: str | None = None) -> None:
    """Refuse, as PyTorch's check_inplace, an in-place op in grad mode on ``t`` (a view made in no_grad mode or
    a view of one) when it would be recorded (``t`` or one of ``others`` requires grad)."""
    if t.requires_grad or any(type(o) is Tensor and o.requires_grad for o in others):
        raise RuntimeError(_no_grad_view_message(t, view))


def _no_grad_view_message(t: Tensor, view: str | None = None) -> str:
    """The message for an in-place op on ``t``, a view made in no_grad mode or a view of one (``view``: the name of
    the view that an indexed assignment writes through, if any)."""
    if view is not None:
        return NO_GRAD_VIEW_ERROR.format(f"Output 0 of {view} is a view of a view which was created in")
    if t.grad_fn is not None:  # (PyTorch names the node here without "Backward0": "Transpose", "Squeeze1")
        name = re.sub(r"Backward0$|Backward(?=\d+$)", "", graph.torch_name(t.grad_fn))
        return NO_GRAD_VIEW_ERROR.format(f"Output {t.output_nr} of {name} is a view of a view which was created in")
    return NO_GRAD_VIEW_ERROR.format("A view was created in")


def _multi_output_message(t: Tensor) -> str:
    return (f"Output {t.output_nr} of {_short_name(t.grad_fn)} is a view and is being modified inplace. This view "
            "is the output of a function that returns multiple views. Such functions do not allow the output "
            "views to be modified inplace. You should replace the inplace operation by an out-of-place one.")


# --------------------------------------------------------------------------- ops that only exist in place
def _zeros_like(grad):
    if isinstance(grad, Tensor):
        return Tensor(np.zeros(grad.data.shape, dtype=grad.data.dtype))
    return np.zeros(np.shape(grad), dtype=np.asarray(grad).dtype)


@op("_zero", grad_fn="ZeroBackward0", promote=None, note="d/dself = 0",
    formula="input: 0 (its values are overwritten)", jvp="elementwise")
def _zero(input):
    """Zeros of ``input``'s shape and dtype (what ``zero_`` writes)."""
    return np.zeros(input.shape, dtype=input.dtype)


@_zero.defvjp
def _(grad):
    return _zeros_like(grad)


@op("_fill_scalar", grad_fn="FillBackward2", promote=None, note="d/dself = 0",
    formula="input: 0 (its values are overwritten)", jvp="elementwise")
def _fill_scalar(input, value):
    """``input``'s shape and dtype filled with the number ``value`` (cast as PyTorch casts, e.g. 2.7 -> 2)."""
    return np.full(input.shape, value, dtype=input.dtype)


@_fill_scalar.defvjp
def _(grad):
    return _zeros_like(grad)


@op("_fill_tensor", grad_fn="FillBackward3", inputs=2, promote=None, note="d/dself = 0, d/dvalue = sum(grad)",
    formula="input: 0; value: sum(grad)", jvp="elementwise")
def _fill_tensor(input, value):
    """``input``'s shape and dtype filled with the 0-d array ``value``."""
    return np.full(input.shape, value, dtype=input.dtype)


@_fill_tensor.defvjp
def _(grad):
    return _zeros_like(grad), grad.sum()


@op("_copy", grad_fn="CopyBackwards", inputs=2, promote=None, note="d/dself = 0, d/dsrc = grad (summed to src)",
    formula="src: grad (cast and summed to its shape); input (overwritten): 0", jvp="elementwise")
def _copy(input, src):
    """``src`` broadcast to ``input``'s shape (or the broadcast shape, which then fails the shape check) and cast
    to ``input``'s dtype (torch.Tensor.copy_ casts freely)."""
    try:
        shape = np.broadcast_shapes(input.shape, src.shape)
    except ValueError as e:
        raise broadcast_error(e, input, src) from None
    return np.broadcast_to(src, shape).astype(input.dtype)


@_copy.defvjp
def _(grad):
    return _zeros_like(grad), grad


# ------------------------------------------------------------------------------------------- the methods
@tensor_method("add_")
def add_(self, other, alpha=1):
    """``self += alpha * other`` in place; returns self. Matches torch.Tensor.add_ (grad_fn AddBackward0).

    Raises:
        RuntimeError: see :func:`apply`, and add's own errors (operands that do not broadcast, float alpha).
    """
    return apply(self, lambda s: add(s, other, alpha), (other,), refusal="add")


@tensor_method("sub_")
def sub_(self, other, alpha=1):
    """``self -= alpha * other`` in place; returns self. Matches torch.Tensor.sub_ (grad_fn SubBackward0).

    Raises:
        RuntimeError: see :func:`apply`, and sub's own errors (bool operands, broadcasting, float alpha).
    """
    return apply(self, lambda s: sub(s, other, alpha), (other,))


@tensor_method("mul_")
def mul_(self, other):
    """``self *= other`` in place; returns self. Matches torch.Tensor.mul_ (grad_fn MulBackward0).

    Raises:
        RuntimeError: see :func:`apply`.
    """
    return apply(self, lambda s: mul(s, other), (other,), aliased_tangent=True)


@tensor_method("div_")
def div_(self, other, *, rounding_mode=None):
    """``self /= other`` in place (true division, or rounded with ``rounding_mode`` "trunc"/"floor"); returns
    self. Matches torch.Tensor.div_ (grad_fn DivBackward0; DivBackward2 with a rounding_mode). An integer tensor
    cannot hold a true quotient: "result type Float can't be cast to the desired output type Long".

    Raises:
        RuntimeError: see :func:`apply`, and div's own errors.
    """
    if rounding_mode is None:
        return apply(self, lambda s: div(s, other), (other,))
    return apply(self, lambda s: div(s, other, rounding_mode=rounding_mode), (other,))


@tensor_method("pow_")
def pow_(self, exponent):
    """``self **= exponent`` in place; returns self. Matches torch.Tensor.pow_ (grad_fn PowBackward0/1).

    Raises:
        RuntimeError: see :func:`apply`.
    """
    return apply(self, lambda s: pow(s, exponent), (exponent,), refusal="aten::pow_")


@tensor_method("clamp_", "clip_")
def clamp_(self, min=None, max=None):
    """Limit ``self`` to ``[min, max]`` in place; returns self. Matches torch.Tensor.clamp_ (alias clip_;
    grad_fn ClampBackward1 for number bounds, ClampBackward0 for tensor bounds), including its message naming C
    types ("result type Float can't be cast to the desired output type long int").

    Raises:
        RuntimeError: see :func:`apply`, and clamp's own errors (no bound given).
    """
    return apply(self, lambda s: clamp(s, min, max), (min, max), cast="c", refusal="aten::clamp_")


def _rounding_inplace(name: str, fn):
    def method(self):
        return apply(self, fn)

    method.__name__ = name
    method.__doc__ = (f"``self.{name}()``: torch.{name[:-1]} in place; returns self. Matches torch.Tensor.{name} "
                      f"(the grad_fn of torch.{name[:-1]}).")
    return tensor_method(name)(method)


for _name, _fn in (("floor_", floor), ("ceil_", ceil), ("trunc_", trunc), ("fix_", trunc), ("frac_", frac)):
    _rounding_inplace(_name, _fn)


@tensor_method("fmod_")
def fmod_(self, other):
    """``self.fmod_(other)``: torch.fmod in place; returns self. Matches torch.Tensor.fmod_ (grad_fn FmodBackward0 for
    a number, FmodBackward1 for a tensor)."""
    return apply(self, lambda s: fmod(s, other), (other,), refusal="aten::fmod_")


@tensor_method("tril_")
def tril_(self, diagonal=0):
    """``self.tril_(diagonal)``: torch.tril in place (the elements above the ``diagonal``-th diagonal zeroed);
    returns self. Matches torch.Tensor.tril_ (grad_fn TrilBackward0)."""
    return apply(self, lambda s: _structured.tril(s, diagonal))


@tensor_method("triu_")
def triu_(self, diagonal=0):
    """``self.triu_(diagonal)``: torch.triu in place (the elements below the ``diagonal``-th diagonal zeroed);
    returns self. Matches torch.Tensor.triu_ (grad_fn TriuBackward0)."""
    return apply(self, lambda s: _structured.triu(s, diagonal))


@tensor_method("zero_")
def zero_(self):
    """Fill with zeros in place; returns self. Matches torch.Tensor.zero_ (grad_fn ZeroBackward0 when recorded).

    Raises:
        RuntimeError: see :func:`apply` (a leaf that requires grad in grad mode).
    """
    return apply(self, _zero, cast=None)


@tensor_method("fill_")
def fill_(self, value):
    """Fill with ``value`` (a number, or a 0-d tensor) in place, cast to self's dtype; returns self. Matches
    torch.Tensor.fill_ (grad_fn FillBackward2 for a number, FillBackward3 for a tensor, whose gradient is the sum
    of the output's).

    Raises:
        RuntimeError: for a value tensor that is not 0-d (PyTorch's message), and see :func:`apply`.
    """
    if isinstance(value, Tensor):
        if value.data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.data.ndim} dimensions.")
        return apply(self, lambda s: _fill_tensor(s, value), (value,), cast=None)
    if not isinstance(value, (bool, int, float, np.number, np.bool_)):
        raise TypeError(f"fill_(): argument 'value' must be Number, not {type(value).__name__}")
    return apply(self, lambda s: _fill_scalar(s, value), cast=None)


@tensor_method("copy_")
def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast to self's shape, cast to self's dtype) into self; returns self. Matches
    torch.Tensor.copy_ (grad_fn CopyBackwards, though PyTorch's name() says "torch::autograd::CopyBackwards"; ``src`` gets the gradient summed to its shape and dtype).

    Raises:
        RuntimeError: for a ``src`` that does not broadcast to self's shape, and see :func:`apply`.
        TypeError: for a ``src`` that is not a Tensor.
    """
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' (position 1) must be Tensor, not {type(src).__name__}")
    return apply(self, lambda s: _copy(s, src), (src,), cast=None)


def setitem(t: Tensor, key, value) -> None:
    """``t[key] = value`` in place (numpy's indexing on the buffer; ``key`` in numpy form, see
    :func:`numpy_key`): aliases and views of ``t`` see it. Matches torch.Tensor.__setitem__; when ``t`` or ``value`` requires grad in grad mode,
    the assignment is recorded as PyTorch's ``CopySlices`` node (``t``'s new grad_fn): the gradient of the old
    ``t`` is the incoming gradient with zeros at ``key``, and ``value``'s is the gradient at ``key`` (summed to
    ``value``'s shape where it was broadcast).

    Raises:
        RuntimeError: for a leaf that requires grad (or a view of one) in grad mode, an output of split/unbind
            in grad mode, and overlapping memory (PyTorch's messages).
    """
    enabled = _state.grad_enabled
    if enabled:
        view, advanced = _setitem_kind(key, t.data.shape)
        meta = t._meta
        if meta is not None and meta.no_grad_view:
            _check_no_grad_view(t, (value,), view or None)
        if t.requires_grad and t.grad_fn is None:  # t[key] is a view of t: PyTorch's words for it
            raise RuntimeError(("a view of " if view or not advanced else "") + LEAF_ERROR)
        if view and type(t.grad_fn) is MultiNode:  # the view made by the index is what PyTorch refuses
            raise RuntimeError(_multi_output_message(t).replace(
                f"Output {t.output_nr} of {_short_name(t.grad_fn)}", f"Output 0 of {view}", 1))
        if t.requires_grad or (isinstance(value, Tensor) and value.requires_grad) or (
                _state.fw_level is not None and (fw_tangent(t) is not None or (
                    isinstance(value, Tensor) and fw_tangent(value) is not None))):
            # PyTorch: index_put_ on t itself (IndexPutBackward0), else on a view (CopySlices); a key that
            # leaves t whole is fill_ (FillBackward3) or copy_ (CopyBackwards) of t
            v = value if isinstance(value, Tensor) else Tensor(np.asarray(value))
            if view:
                apply(t, lambda src: _copy_slices(src, v, key), (v,), cast=None)
            elif advanced:
                apply(t, lambda src: _index_put(src, v, key), (v,), cast=None)
            elif v.data.ndim == 0:
                apply(t, lambda src: _fill_tensor(src, v), (v,), cast=None)
            else:
                copy_(t, v)
            return
    _check_writable(t)
    t.data[key] = value.data if isinstance(value, Tensor) else value
    bump(t.data)


def _tensor_setitem(self, key, value) -> None:
    """``Tensor.__setitem__`` for library users: :func:`setitem` (the language calls it directly)."""
    setitem(self, numpy_key(key), value)


setattr(Tensor, "__setitem__", _tensor_setitem)


# ----------------------------------------------------------------------------------------- forward mode
# derivatives.yaml: zero_ and fill_ give zero tangents (fill_ with a tensor: its tangent, expanded), copy_ the
# source's tangent: each is elementwise in its inputs.

"""NumPy-style joins and splits and the rest of PyTorch's shape functions.

hstack/vstack/dstack/column_stack, hsplit/vsplit/dsplit/tensor_split, atleast_1d/2d/3d, tile,
repeat_interleave, broadcast_to/broadcast_tensors/broadcast_shapes, flipud/fliplr/rot90, ravel, diagflat,
meshgrid, cartesian_prod, combinations are composites in PyTorch (ATen's CompositeImplicitAutograd kernels),
built here from the same ops so that their results carry the same grad_fn (CatBackward0, SliceBackward0,
ExpandBackward0, ...). roll, block_diag and the three ``*_scatter`` functions are primitives with their own
backward (RollBackward0, BlockDiagBackward0, SelectScatterBackward0, SliceScatterBackward0,
DiagonalScatterBackward0) whose rules are derivatives.yaml's. tril_indices, triu_indices, unravel_index, numel,
is_tensor and broadcast_shapes compute no gradient. Sizes, grad_fn names and error texts follow PyTorch 2.13.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np

from ...engine import dtypes, limits
from ...engine.tensor import Size, Tensor, normalize_dim
from ..core.apply import infer_size
from ..core.declare import composite, op
from ..reduction.reductions import expand, repeat
from .indexing import index_select
from .joins import cat, stack
from .scatter import masked_select
from .views import _diagonal, _reshape, _shape_arg, _slice, diag, flip, reshape, select, unsqueeze


def _tensors_arg(name: str, tensors) -> list:
    """The tensors of ``f(t1, t2)`` or ``f((t1, t2))`` / ``f([t1, t2])`` as a list."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return list(tensors)


# ------------------------------------------------------------------------------------ atleast_nd


def _atleast(x: Tensor, n: int) -> Tensor:
    # at::atleast_1d/2d/3d: 0-d tensors reshaped, 1-d (and 2-d for 3d) unsqueezed, others returned as they are
    if x.ndim >= n:
        return x
    if x.ndim == 0:
        return reshape(x, (1,) * n)
    if n == 2 or x.ndim == 2:
        return unsqueeze(x, 0 if n == 2 else -1)
    return unsqueeze(unsqueeze(x, 0), -1)


def _atleast_call(name: str, n: int, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return _atleast(tensors[0], n)
    return tuple(_atleast(t, n) for t in _tensors_arg(name, tensors))


@composite("atleast_1d", grad_fn="varies", note="the gradient reshaped back (ViewBackward0)")
def atleast_1d(*tensors):
    """``input`` as a tensor of at least 1 dimension (a 0-d one reshaped to ``[1]``, others unchanged); several
    tensors (or one list of them) give a tuple. Matches torch.atleast_1d."""
    return _atleast_call("atleast_1d", 1, tensors)


@composite("atleast_2d", grad_fn="varies", note="the gradient reshaped back (ViewBackward0/UnsqueezeBackward0)")
def atleast_2d(*tensors):
    """``input`` as a tensor of at least 2 dimensions (0-d reshaped to ``[1, 1]``, 1-d unsqueezed at 0); several
    tensors give a tuple. Matches torch.atleast_2d."""
    return _atleast_call("atleast_2d", 2, tensors)


@composite("atleast_3d", grad_fn="varies", note="the gradient reshaped back (ViewBackward0/UnsqueezeBackward0)")
def atleast_3d(*tensors):
    """``input`` as a tensor of at least 3 dimensions (0-d reshaped to ``[1, 1, 1]``, 1-d ``[n]`` to
    ``[1, n, 1]``, 2-d unsqueezed last); several tensors give a tuple. Matches torch.atleast_3d."""
    return _atleast_call("atleast_3d", 3, tensors)


# ---------------------------------------------------------------------------------- numpy-style stacks


def _stack_list(name: str, tensors) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{'Tensor' if isinstance(tensors, Tensor) else type(tensors).__name__}")
    tensors = _tensors_arg(name, (tensors,))
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


_CAT_NOTE = "each input gets its slice of the gradient"


@composite("hstack", grad_fn="CatBackward0", note=_CAT_NOTE)
def hstack(tensors):
    """Join tensors column-wise: ``cat(atleast_1d(tensors), dim=1)``, or dim 0 for 1-d tensors. Matches
    torch.hstack.

    Raises:
        RuntimeError: for an empty list or mismatching sizes (torch.cat's messages).
    """
    ts = [_atleast(t, 1) for t in _stack_list("hstack", tensors)]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


@composite("vstack", grad_fn="CatBackward0", note=_CAT_NOTE, aliases=("row_stack",))
def vstack(tensors):
    """Join tensors row-wise: ``cat(atleast_2d(tensors), dim=0)``. Matches torch.vstack (and row_stack).

    Raises:
        RuntimeError: for an empty list or mismatching sizes.
    """
    return cat([_atleast(t, 2) for t in _stack_list("vstack", tensors)], 0)


@composite("dstack", grad_fn="CatBackward0", note=_CAT_NOTE)
def dstack(tensors):
    """Join tensors depth-wise: ``cat(atleast_3d(tensors), dim=2)``. Matches torch.dstack.

    Raises:
        RuntimeError: for an empty list or mismatching sizes.
    """
    return cat([_atleast(t, 3) for t in _stack_list("dstack", tensors)], 2)


@composite("column_stack", grad_fn="CatBackward0", note=_CAT_NOTE)
def column_stack(tensors):
    """Join tensors as columns: 0-d and 1-d tensors reshaped to ``[numel, 1]``, then ``cat(..., dim=1)``.
    Matches torch.column_stack.

    Raises:
        RuntimeError: for an empty list or mismatching sizes.
    """
    ts = _stack_list("column_stack", tensors)
    return cat([reshape(t, (t.data.size, 1)) if t.ndim <= 1 else t for t in ts], 1)


# ----------------------------------------------------------------------------------------- splits


def _bounds(size: int, indices) -> list:
    # each piece runs from the previous index to the next (both clamped to [0, size]); empty where they decrease
    out, start = [], 0
    for i in list(indices) + [size]:
        i = min(max(i + size if i < 0 else i, 0), size)
        out.append((start, max(i, start)))
        start = i
    return out


@composite("tensor_split", grad_fn="SliceBackward0", note="each piece's gradient placed in zeros", method=True)
def tensor_split(input, indices_or_sections, dim=0):
    """Split ``input`` along ``dim`` into ``n`` nearly equal pieces (an int: the first ``size % n`` one
    element longer) or at the given indices (a list; a 0-d or 1-d int64 tensor is read as either). Each piece
    is a slice (SliceBackward0). Matches torch.tensor_split.

    Raises:
        RuntimeError: for a 0-d input or sections < 1; TypeError for other arguments (PyTorch's messages).
    """
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        if arg.data.dtype.kind not in "iu" or arg.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{dtypes.scalar_type_name(arg.dtype)}" if arg.ndim <= 1 else
                               "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {arg.ndim} dims")
        arg = int(arg.data) if arg.ndim == 0 else [int(v) for v in arg.data]
    d = normalize_dim(dim, input.ndim)
    size = input.shape[d]
    if isinstance(arg, (list, tuple)):
        bounds = _bounds(size, _shape_arg((arg,), "indices"))
    else:
        if isinstance(arg, bool) or not isinstance(arg, (int, np.integer)):
            raise TypeError(f"tensor_split(): argument 'indices' must be tuple of ints, not {type(arg).__name__}")
        if arg <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {arg}")
        base, extra = divmod(size, int(arg))
        bounds, start = [], 0
        for i in range(int(arg)):
            n = base + (1 if i < extra else 0)
            bounds.append((start, start + n))
            start += n
    return tuple(_slice(input, d, a, b, 1) for a, b in bounds)


def _numpy_split(name: str, input, arg, dim: int, need: int):
    if input.ndim < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with "
                           f"{input.ndim} dimensions!")
    if isinstance(arg, (int, np.integer)) and not isinstance(arg, bool):
        size = input.shape[dim]
        if arg == 0 or size % arg:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {size} is not divisible by the split_size {arg}!")
    return tensor_split(input, arg, dim)


@composite("hsplit", grad_fn="SliceBackward0", note="each piece's gradient placed in zeros", method=True)
def hsplit(input, indices_or_sections):
    """``tensor_split`` along dim 1 (dim 0 for a 1-d tensor); an int must divide the size. Matches torch.hsplit.

    Raises:
        RuntimeError: for a 0-d tensor or sections that do not divide the size (PyTorch's messages).
    """
    return _numpy_split("hsplit", input, indices_or_sections, 0 if input.ndim == 1 else 1, 1)


@composite("vsplit", grad_fn="SliceBackward0", note="each piece's gradient placed in zeros", method=True)
def vsplit(input, indices_or_sections):
    """``tensor_split`` along dim 0 of a tensor of at least 2 dims; an int must divide the size. Matches
    torch.vsplit.

    Raises:
        RuntimeError: for fewer than 2 dims or sections that do not divide the size.
    """
    return _numpy_split("vsplit", input, indices_or_sections, 0, 2)


@composite("dsplit", grad_fn="SliceBackward0", note="each piece's gradient placed in zeros", method=True)
def dsplit(input, indices_or_sections):
    """``tensor_split`` along dim 2 of a tensor of at least 3 dims; an int must divide the size. Matches
    torch.dsplit.

    Raises:
        RuntimeError: for fewer than 3 dims or sections that do not divide the size.
    """
    return _numpy_split("dsplit", input, indices_or_sections, 2, 3)


# ------------------------------------------------------------------------------------------------ roll


def _roll_args(shape, shifts, dims):
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else _shape_arg((shifts,), "shifts")
    dims = () if dims is None else ((dims,) if isinstance(dims, (int, np.integer)) else _shape_arg((dims,), "dims"))
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims and len(shifts) != len(dims) or not dims and len(shifts) != 1:
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    return tuple(int(s) for s in shifts), tuple(normalize_dim(d, len(shape)) for d in dims)


@op("roll", grad_fn="RollBackward0", promote=None, method=True, note="roll the gradient back by -shifts",
    formula="input: grad rolled by -shifts along dims", jvp="linear")
def roll(input, shifts, dims=None):
    """``input`` with its elements shifted by ``shifts`` along ``dims`` (wrapping around; without dims, over
    the flattened tensor, shape restored). Matches torch.roll (grad_fn RollBackward0).

    Raises:
        RuntimeError: if shifts and dims differ in length (PyTorch's message); IndexError for a dim out of range.
    """
    shifts, dims = _roll_args(input.shape, shifts, dims)
    if input.size == 0:
        return input.copy()
    if not dims:
        return np.ascontiguousarray(np.roll(input, shifts[0]))
    return np.ascontiguousarray(np.roll(input, shifts, axis=dims))


@roll.defvjp
def _(grad, shifts, dims):
    # derivatives.yaml roll: grad.roll(-shifts, dims)
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    neg = tuple(-int(s) for s in shifts)
    return roll(grad, neg if len(neg) != 1 or dims is not None and not isinstance(dims, (int, np.integer))
                else neg[0], dims)


# ------------------------------------------------------------------------------- tile, repeat_interleave


@composite("tile", grad_fn="RepeatBackward0", note="sum the gradient over the copies", method=True)
def tile(input, *dims):
    """``input`` repeated ``dims[i]`` times along each dimension, ones prepended to ``dims`` when it is shorter
    than the input's dimensions: ``input.repeat(dims)``. Matches torch.tile.

    Raises:
        RuntimeError: for a negative count; TypeError for counts that are not ints.
    """
    dims = _shape_arg(dims, "dims")
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def _repeat_interleave_method(self, repeats, dim=None, *, output_size=None):
    return repeat_interleave(self, repeats, dim, output_size=output_size)


@composite("repeat_interleave", grad_fn="varies", note="sum the gradient over each element's copies",
           method=_repeat_interleave_method)
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element of ``input`` ``repeats`` times along ``dim`` (the flattened input without dim):
    ``repeats`` an int, or a tensor of one count per element (or one count for all). With a single int64
    tensor, ``repeat_interleave(repeats)`` gives ``[0, 0, 1, ...]``, each index repeated. Built as PyTorch
    builds it: ``index_select`` by the repeated indices (IndexSelectBackward0) for tensor counts; for an int,
    ``input`` unsqueezed, expanded, made contiguous and viewed (ViewBackward0 after CloneBackward0). Matches
    torch.repeat_interleave.

    Raises:
        RuntimeError: for negative counts or counts that do not match the dimension (PyTorch's messages).
    """
    if repeats is None:
        return _repeat_counts(input)
    x = input if dim is not None else reshape(input, (-1,))
    d = normalize_dim(dim if dim is not None else 0, x.ndim if x.ndim else 1)
    if isinstance(repeats, Tensor) and repeats.ndim > 0 and repeats.data.size != 1:
        if repeats.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if repeats.shape[0] != x.shape[d]:
            raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{repeats.shape[0]} and input.size({d}) = {x.shape[d]}")
        return index_select(x, d, _repeat_counts(repeats))
    if isinstance(repeats, Tensor):  # one count for all, as a tensor: index_select all the same
        if repeats.data.dtype.kind not in "iu":
            raise RuntimeError("repeats has to be Long or Int tensor")
        n = int(repeats.data.reshape(-1)[0])
        return index_select(x, d, _repeat_counts(Tensor(np.full(x.shape[d], n, repeats.data.dtype))))
    r = repeats
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
        raise TypeError(f"repeat_interleave(): argument 'repeats' must be Tensor or int, not {type(r).__name__}")
    if r < 0:
        raise RuntimeError("Repeats must be non-negative")
    if x.ndim == 0:
        x = reshape(x, (1,))
    shape = list(x.shape)
    big = shape[:d + 1] + [int(r)] + shape[d + 1:]
    out = shape[:d] + [shape[d] * int(r)] + shape[d + 1:]
    return expand(unsqueeze(x, d + 1), big).contiguous().view(out)


def _repeat_counts(repeats: Tensor) -> Tensor:
    """``repeat_interleave(repeats)``: each index ``i`` repeated ``repeats[i]`` times (int64)."""
    if repeats.ndim > 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.data.dtype.kind not in "iu":
        raise RuntimeError("repeats has to be Long or Int tensor")
    counts = repeats.data.reshape(-1)
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    limits.check_numel([int(counts.sum())], "repeat_interleave()")
    return Tensor(np.repeat(np.arange(counts.size, dtype=np.int64), counts))


# ------------------------------------------------------------------------------------------- broadcasting


@composite("broadcast_shapes", kind="function")
def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` (ints or sequences of ints) broadcast to, as a ``torch.Size``.
    Matches torch.broadcast_shapes.

    Raises:
        RuntimeError: for shapes that do not broadcast (PyTorch's message).
    """
    # torch.functional.broadcast_shapes: each shape compared from its last dimension with the result so far
    shapes = [(sh,) if isinstance(sh, (int, np.integer)) and not isinstance(sh, bool) else _shape_arg((sh,), "shape")
              for sh in shapes]
    out = [1] * max((len(sh) for sh in shapes), default=0)
    for k, sh in enumerate(shapes):
        for i in range(-1, -1 - len(sh), -1):
            if sh[i] < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if sh[i] == 1 or sh[i] == out[i]:
                continue
            if out[i] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {sh[i]} at {i}! Mismatching "
                                   f"argument at index {k} had {tuple(sh)}; but expected shape should be "
                                   f"broadcastable to {out}")
            out[i] = sh[i]
    return Size(out)


@composite("broadcast_to", grad_fn="ExpandBackward0", note="sum the gradient over the expanded dimensions",
           method=True)
def broadcast_to(input, size):
    """``input.expand(size)``. Matches torch.broadcast_to.

    Raises:
        RuntimeError: for a shape ``input`` does not broadcast to (torch.expand's messages).
    """
    return expand(input, size)


@composite("broadcast_tensors", grad_fn="ExpandBackward0", note="sum the gradient over the expanded dimensions")
def broadcast_tensors(*tensors):
    """Each tensor expanded to the shape they broadcast to, as a tuple (ExpandBackward0 each; a tensor of that
    shape already is returned as it is). Matches
    torch.broadcast_tensors.

    Raises:
        RuntimeError: for shapes that do not broadcast.
    """
    ts = _tensors_arg("broadcast_tensors", tensors)
    shape = infer_size(*(tuple(t.shape) for t in ts))
    return tuple(t if tuple(t.shape) == shape else expand(t, shape) for t in ts)


# -------------------------------------------------------------------------------------- flips, ravel


@composite("flipud", grad_fn="FlipBackward0", note="flip the gradient back", method=True)
def flipud(input):
    """``flip(input, [0])``. Matches torch.flipud.

    Raises:
        RuntimeError: for a 0-d tensor.
    """
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


@composite("fliplr", grad_fn="FlipBackward0", note="flip the gradient back", method=True)
def fliplr(input):
    """``flip(input, [1])``. Matches torch.fliplr.

    Raises:
        RuntimeError: for fewer than 2 dimensions.
    """
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def _rot90_dims(ndim, dims):
    dims = _shape_arg((dims,), "dims")
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == ndim:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    if not -ndim <= dims[0] < ndim:
        raise RuntimeError(f"Rotation dim0 out of range, dim0 = {dims[0]}")
    if not -ndim <= dims[1] < ndim:
        raise RuntimeError(f"Rotation dim1 out of range, dim1 = {dims[1]}")
    return tuple(d % ndim for d in dims)


@op("rot90", grad_fn="Rot90Backward0", promote=None, method=True, note="rotate the gradient back by -k",
    formula="input: grad rotated by -k in the plane of dims", jvp="linear")
def rot90(input, k=1, dims=(0, 1)):
    """``input`` rotated by ``k`` quarter turns in the plane of ``dims``, from the first towards the second (a
    copy). Matches torch.rot90 (grad_fn Rot90Backward0).

    Raises:
        RuntimeError: for dims that are not two different dimensions, or fewer than 2 dimensions (PyTorch's
            messages).
    """
    axes = _rot90_dims(input.ndim, dims)
    return np.ascontiguousarray(np.rot90(input, int(k) % 4, axes=axes))


@rot90.defvjp
def _(grad, k, dims):
    # derivatives.yaml rot90: grad.rot90(-k, dims)
    return rot90(grad, -k, dims)


@composite("ravel", grad_fn="ViewBackward0", note="reshape the gradient back", method=True)
def ravel(input):
    """``input.contiguous().view(-1)``. Matches torch.ravel."""
    return input.contiguous().view(-1)


@composite("diagflat", grad_fn="DiagEmbedBackward0", note="the gradient's diagonal", method=True)
def diagflat(input, offset=0):
    """A 2-d tensor with the flattened ``input`` on its ``offset``-th diagonal: ``diag(input.view(-1),
    offset)``. Matches torch.diagflat."""
    return diag(input.contiguous().view(-1), offset)


# -------------------------------------------------------------------------- meshgrid and its products


@composite("meshgrid", grad_fn="ExpandBackward0", note="sum the gradient over the expanded dimensions")
def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 0-d or 1-d tensors: the ``i``-th output is ``tensors[i]`` expanded along the
    other dimensions (``indexing="ij"``, the default; ``"xy"``: the first two inputs swapped, then the first two
    outputs, as at::meshgrid does; NumPy's default).
    Matches torch.meshgrid, with its UserWarning when ``indexing`` is not given.

    Raises:
        RuntimeError: for tensors of more than 1 dimension, tensors of different dtypes, or another indexing.
    """
    ts = _tensors_arg("meshgrid", tensors)
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:  # at::meshgrid's TORCH_WARN_ONCE (Python's default filter shows it once per place)
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for i, t in enumerate(ts):
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
        if t.dtype != ts[0].dtype:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have the same dtype.")
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts = [ts[1], ts[0]] + ts[2:]
    shape = tuple(int(t.data.size) for t in ts)
    out = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        out.append(expand(t.view(*view), shape))
    if swap:
        out = [out[1], out[0]] + out[2:]
    return tuple(out)


@composite("cartesian_prod", grad_fn="StackBackward0", note="each input gets its slice of the gradient")
def cartesian_prod(*tensors):
    """The cartesian product of 1-d tensors, one row per combination: ``stack`` of the flattened ``meshgrid``
    (a single tensor is returned as it is). Matches torch.cartesian_prod.

    Raises:
        RuntimeError: for tensors that are not 1-d.
    """
    ts = _tensors_arg("cartesian_prod", tensors)
    for t in ts:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    return stack([g.flatten() for g in meshgrid(ts, indexing="ij")], 1)


@composite("combinations", grad_fn="StackBackward0", note="each element gets the gradients of its copies")
def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of a 1-d tensor (with repeated elements for
    ``with_replacement``), one per row, in lexicographic order of positions: ``meshgrid``, a triangular mask,
    ``masked_select`` and ``stack``, as at::combinations. Matches torch.combinations.

    Raises:
        RuntimeError: for an input that is not 1-d or a negative r.
    """
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor(np.empty((0,), input.data.dtype))
    n = input.shape[0]
    limits.check_numel([n] * r, "combinations()")
    grids = meshgrid([input] * r, indexing="ij")
    idx = np.indices((n,) * r)
    mask = np.ones((n,) * r, dtype=bool)
    for a, b in zip(idx[:-1], idx[1:]):
        mask &= (a <= b) if with_replacement else (a < b)
    m = Tensor(mask)
    return stack([masked_select(g, m) for g in grids], 1)


# ------------------------------------------------------------------------------------ block_diag


_BLOCK_DIAG: dict = {}


def _as_block(shape) -> tuple:
    return (1, 1) if len(shape) == 0 else ((1, shape[0]) if len(shape) == 1 else tuple(shape))


def _block_diag_op(n: int):
    """The op joining ``n`` tensors on the diagonal of a 2-d one, built once per ``n`` (each input gets its
    edge in the graph, as torch.cat's)."""
    o = _BLOCK_DIAG.get(n)
    if o is not None:
        return o
    P = inspect.Parameter

    def forward(*arrays):
        blocks = [a.reshape(_as_block(a.shape)) for a in arrays]
        rows, cols = sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)
        limits.check_numel([rows, cols], "block_diag()")
        out = np.zeros((rows, cols), np.result_type(*arrays) if arrays else np.float32)
        r = c = 0
        for b in blocks:
            out[r:r + b.shape[0], c:c + b.shape[1]] = b
            r, c = r + b.shape[0], c + b.shape[1]
        return out

    def rule(grad, *shapes):
        # derivatives.yaml block_diag: block_diag_backward, each input's block of the gradient
        out, r, c = [], 0, 0
        for s in shapes:
            h, w = _as_block(s)
            out.append(_reshape(_slice(_slice(grad, 0, r, r + h, 1), 1, c, c + w, 1), tuple(s)))
            r, c = r + h, c + w
        return tuple(out) if len(out) != 1 else out[0]

    names = [f"tensors{i}" for i in range(n)]
    forward.__signature__ = inspect.Signature([P(nm, P.POSITIONAL_OR_KEYWORD) for nm in names])
    forward.__name__ = "block_diag"
    rule.__signature__ = inspect.Signature(
        [P("grad", P.POSITIONAL_OR_KEYWORD)] + [P(f"{nm}_shape", P.POSITIONAL_OR_KEYWORD) for nm in names])
    o = op("block_diag", grad_fn="BlockDiagBackward0", note="each input gets its block of the gradient",
           formula="tensors: each gets its block of grad", inputs=n, public=False, jvp="linear")(forward)
    o.defvjp(rule)
    _BLOCK_DIAG[n] = o
    return o


@composite("block_diag", grad_fn="BlockDiagBackward0", note="each input gets its block of the gradient")
def block_diag(*tensors):
    """A 2-d tensor with the inputs (0-d, 1-d as a row, or 2-d) on its diagonal and zeros elsewhere, of their
    promoted dtype. Matches torch.block_diag (grad_fn BlockDiagBackward0).

    Raises:
        RuntimeError: for an input of more than 2 dimensions (PyTorch's message).
    """
    ts = _tensors_arg("block_diag", tensors)
    for i, t in enumerate(ts):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
    if not ts:
        return Tensor(np.zeros((1, 0), dtypes.get_default_dtype().np))
    return _block_diag_op(len(ts))(*ts)


# ------------------------------------------------------------------------------------------- scatters


def _check_src(name: str, src_shape, want_shape):
    if tuple(src_shape) != tuple(want_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src_shape)}, "
                           f"slice size = {list(want_shape)}")


@op("select_scatter", grad_fn="SelectScatterBackward0", inputs=2, promote=None, method=True,
    note="input: the gradient with zeros at the slice; src: the gradient's slice",
    formula="input: grad with zeros at index along dim; src: grad.select(dim, index)", jvp="linear")
def select_scatter(input, src, dim, index):
    """A copy of ``input`` with ``src`` embedded at ``index`` along ``dim``. Matches torch.select_scatter.

    Raises:
        RuntimeError: if ``src``'s shape is not that of ``input.select(dim, index)``; IndexError for an index
            or dim out of range.
    """
    d = normalize_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    key = (slice(None),) * d + (index,)
    _check_src("select_scatter", np.shape(src), input[key].shape)
    out = np.array(input, copy=True)
    out[key] = src
    return out


@select_scatter.defvjp
def _(grad, dim, index):
    g_src = select(grad, dim, index)
    return select_scatter(grad, g_src * 0, dim, index), g_src


@op("slice_scatter", grad_fn="SliceScatterBackward0", inputs=2, promote=None, method=True,
    note="input: the gradient with zeros at the slice; src: the gradient's slice",
    formula="input: grad with zeros at the slice; src: grad's slice", jvp="linear")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` with ``src`` embedded at ``start:end:step`` along ``dim``. Matches
    torch.slice_scatter.

    Raises:
        RuntimeError: if ``src``'s shape is not the slice's, or for a step < 1.
    """
    if step < 1:
        raise RuntimeError("slice step must be positive")
    d = normalize_dim(dim, input.ndim)
    key = (slice(None),) * d + (slice(start, end, step),)
    _check_src("slice_scatter", np.shape(src), input[key].shape)
    out = np.array(input, copy=True)
    out[key] = src
    return out


@slice_scatter.defvjp
def _(grad, input_shape, dim, start, end, step):
    d = normalize_dim(dim, len(input_shape))
    a, b, s = slice(start, end, step).indices(input_shape[d])
    g_src = _slice(grad, d, a, max(a, b), s)
    return slice_scatter(grad, g_src * 0, dim, start, end, step), g_src


def _diag_key(shape, offset, dim1, dim2):
    n = len(shape)
    d1, d2 = normalize_dim(dim1, n), normalize_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    length = max(0, min(shape[d1] - max(-offset, 0), shape[d2] - max(offset, 0)))
    rows = np.arange(length) + max(-offset, 0)
    return d1, d2, rows, rows - max(-offset, 0) + max(offset, 0)


@op("diagonal_scatter", grad_fn="DiagonalScatterBackward0", inputs=2, promote=None, method=True,
    note="input: the gradient with zeros on the diagonal; src: the gradient's diagonal",
    formula="input: grad with zeros on the diagonal; src: grad.diagonal(offset, dim1, dim2)", jvp="linear")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with ``src`` on its ``offset``-th diagonal in the plane of ``dim1`` and ``dim2``
    (``src`` shaped as ``input.diagonal(offset, dim1, dim2)``). Matches torch.diagonal_scatter.

    Raises:
        RuntimeError: if ``src``'s shape is not the diagonal's.
    """
    d1, d2, rows, cols = _diag_key(input.shape, offset, dim1, dim2)
    _check_src("diagonal_scatter", np.shape(src), np.diagonal(input, offset, d1, d2).shape)
    out = np.array(input, copy=True)
    np.moveaxis(out, (d1, d2), (-2, -1))[..., rows, cols] = src
    return out


@diagonal_scatter.defvjp
def _(grad, offset, dim1, dim2):
    g_src = _diagonal(grad, offset, dim1, dim2)
    return diagonal_scatter(grad, g_src * 0, offset, dim1, dim2), g_src


# ------------------------------------------------------------------------------ indices and predicates


def _index_dtype(dtype):
    return np.dtype(np.int64) if dtype is None else dtypes.as_dtype(dtype).np


@composite("tril_indices", kind="creation")
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The coordinates of the lower triangle (with the ``offset``-th diagonal) of a ``row`` x ``col`` matrix,
    a ``[2, N]`` int64 tensor in row-major order. Matches torch.tril_indices.

    Raises:
        RuntimeError: for a negative row or col.
    """
    return _tri_indices("tril", np.tril_indices, row, col, offset, dtype)


@composite("triu_indices", kind="creation")
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The coordinates of the upper triangle (with the ``offset``-th diagonal) of a ``row`` x ``col`` matrix,
    a ``[2, N]`` int64 tensor in row-major order. Matches torch.triu_indices.

    Raises:
        RuntimeError: for a negative row or col.
    """
    return _tri_indices("triu", np.triu_indices, row, col, offset, dtype)


def _tri_indices(name, fn, row, col, offset, dtype):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    limits.check_numel([2, row * col], f"{name}_indices()")
    return Tensor(np.stack(fn(row, offset, col)).astype(_index_dtype(dtype)))


@composite("unravel_index", kind="function")
def unravel_index(indices, shape):
    """The coordinates of flat ``indices`` in a tensor of ``shape``: a tuple of int64 tensors of the indices'
    shape, one per dimension. Matches torch.unravel_index.

    Raises:
        TypeError: for indices that are not an integer tensor; ValueError for a negative size.
    """
    if not isinstance(indices, Tensor):
        indices = Tensor(np.asarray(indices))
    if indices.data.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {'torch.' + str(indices.dtype).replace('torch.', '')}")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else _shape_arg((shape,), "shape")
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    flat = indices.data.astype(np.int64)
    # torch.functional.unravel_index: (indices // stride) % size per dimension (floor division, so an index out of
    # range wraps around rather than raising)
    strides = np.cumprod((1,) + tuple(shape[:0:-1]))[::-1]
    return tuple(Tensor(np.asarray((flat // int(st)) % s if s else flat * 0, np.int64))
                 for st, s in zip(strides, shape))


@composite("numel", kind="function")
def numel(input):
    """The number of elements of ``input``, an int. Matches torch.numel.

    Raises:
        TypeError: for an argument that is not a Tensor.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"numel(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return int(input.data.size)


@composite("is_tensor", kind="function")
def is_tensor(obj):
    """Whether ``obj`` is a Tensor. Matches torch.is_tensor."""
    return isinstance(obj, Tensor)


@composite("positive", grad_fn="none (the input itself)", note="the input itself", method=True)
def positive(input):
    """``input`` itself (unary plus). Matches torch.positive.

    Raises:
        RuntimeError: for a bool tensor (PyTorch's message).
    """
    if input.data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "dstack", "column_stack",
           "tensor_split", "hsplit", "vsplit", "dsplit", "roll", "tile", "repeat_interleave", "broadcast_shapes",
           "broadcast_to", "broadcast_tensors", "flipud", "fliplr", "rot90", "ravel", "diagflat", "meshgrid",
           "cartesian_prod", "combinations", "block_diag", "select_scatter", "slice_scatter", "diagonal_scatter",
           "tril_indices", "triu_indices", "unravel_index", "numel", "is_tensor", "positive"]

"""Shape ops: reshape/view, transpose/permute/T, squeeze/unsqueeze, expand, and indexing.

Indexing is decomposed as PyTorch's ``applySlicing`` does (torch/csrc/autograd/python_variable_indexing.cpp):
an integer is a ``select`` (SelectBackward0), a slice a ``slice`` (SliceBackward0; a full ``:`` is skipped),
``None`` an ``unsqueeze``, and a key with tensors or lists is one advanced ``index`` (IndexBackward0). The
derivatives of select/slice/index scatter the gradient into zeros of the input's shape; those scatters are ops
too, so the rules can be differentiated again.
"""

from __future__ import annotations

import numpy as np

from .. import limits
from ..tensor import Tensor
from ._core import install_method, normalize_dim, op, register


def _shape_arg(shape) -> tuple:
    """Accept ``reshape(x, 2, 3)``, ``reshape(x, (2, 3))`` and ``reshape(x, [2, 3])`` alike."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    out = []
    for s in shape:
        if isinstance(s, Tensor):
            s = s.item()
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"shape must be a sequence of ints, not {type(s).__name__}")
        out.append(int(s))
    return tuple(out)


def _infer_shape(shape: tuple, numel: int) -> tuple:
    """Resolve one -1 in ``shape`` for ``numel`` elements.

    Raises:
        RuntimeError: PyTorch's "shape '[...]' is invalid for input of size N" and "only one dimension can be
            inferred".
    """
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return tuple(numel // known if s == -1 else s for s in shape)
    if known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


@op("ViewBackward0", promote=None, name="_reshape")
def _reshape(input, shape):
    """``input`` with a new shape of the same number of elements (one size may be -1)."""
    return np.reshape(input, _infer_shape(shape, input.size))


@_reshape.defvjp
def _(grad, input_shape):
    return _reshape(grad, input_shape)


def reshape(input, *shape):
    """``input`` with a new shape of the same number of elements; one size may be -1. Matches torch.reshape
    and torch.Tensor.view (grad_fn ViewBackward0).

    Raises:
        RuntimeError: if the sizes do not match (PyTorch's message).
    """
    return _reshape(input, _shape_arg(shape))


for _n in ("reshape", "view"):
    register(_n, reshape, "op")
    install_method(_n, reshape)


def flatten(input, start_dim=0, end_dim=-1):
    """Merge dimensions ``start_dim..end_dim`` into one. Matches torch.flatten (a view: ViewBackward0)."""
    nd = input.ndim
    if nd == 0:
        return reshape(input, (1,))
    s, e = normalize_dim(start_dim, nd), normalize_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = tuple(input.shape)
    return reshape(input, shape[:s] + (-1,) + shape[e + 1:])


register("flatten", flatten, "op")
install_method("flatten", flatten)


@op("PermuteBackward0", promote=None, method=True)
def permute(input, *dims):
    """``input`` with its dimensions reordered by ``dims``. Matches torch.permute.

    Raises:
        RuntimeError: if ``dims`` is not a permutation of the dimensions (PyTorch's message).
    """
    dims = _shape_arg(dims) if dims else ()
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not "
                           f"equal to len(dims) = {len(dims)}")
    axes = tuple(normalize_dim(d, input.ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(input, axes)


@permute.defvjp
def _(grad, dims):
    dims = _shape_arg(dims) if dims else ()
    nd = len(dims)
    axes = [normalize_dim(d, nd) for d in dims]
    inverse = [0] * nd
    for i, a in enumerate(axes):
        inverse[a] = i
    return permute(grad, *inverse)


@op("TransposeBackward0", promote=None, method=True, aliases=("swapaxes", "swapdims"))
def transpose(input, dim0, dim1):
    """``input`` with dimensions ``dim0`` and ``dim1`` swapped. Matches torch.transpose.

    Raises:
        IndexError: for a dimension out of range.
    """
    return np.swapaxes(input, normalize_dim(dim0, input.ndim), normalize_dim(dim1, input.ndim))


@transpose.defvjp
def _(grad, dim0, dim1):
    return transpose(grad, dim0, dim1)


@op("TBackward0", promote=None, method=True)
def t(input):
    """Transpose of a matrix (0-d and 1-d tensors are returned as they are). Matches torch.t.

    Raises:
        RuntimeError: for tensors with more than 2 dimensions.
    """
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return input.T


@t.defvjp
def _(grad):
    return t(grad)


def _T(self):
    """The tensor with all dimensions reversed (``x.T``; grad_fn PermuteBackward0). Matches torch.Tensor.T."""
    return permute(self, *range(self.data.ndim - 1, -1, -1))


def _mT(self):
    """The last two dimensions swapped (``x.mT``). Matches torch.Tensor.mT.

    Raises:
        RuntimeError: for tensors with fewer than 2 dimensions.
    """
    if self.data.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{self.data.ndim}-D tensor.")
    return transpose(self, -2, -1)


Tensor.T = property(_T)
Tensor.mT = property(_mT)


@op("UnsqueezeBackward0", promote=None, method=True)
def unsqueeze(input, dim):
    """``input`` with a size-1 dimension inserted at ``dim`` (in ``[-ndim-1, ndim]``). Matches torch.unsqueeze.

    Raises:
        IndexError: for a dimension out of range.
    """
    return np.expand_dims(input, normalize_dim(dim, input.ndim + 1))


@unsqueeze.defvjp
def _(grad, dim, input_shape):
    return _reshape(grad, input_shape)


def _squeeze_grad_fn(dim=None):
    if dim is None:
        return "SqueezeBackward0"
    return "SqueezeBackward2" if isinstance(dim, (tuple, list)) else "SqueezeBackward1"


@op(_squeeze_grad_fn, promote=None, method=True)
def squeeze(input, dim=None):
    """``input`` without size-1 dimensions (all of them, or those in ``dim`` that have size 1).
    Matches torch.squeeze.

    Raises:
        IndexError: for a dimension out of range.
    """
    if dim is None:
        return np.squeeze(input)
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    axes = tuple(a for a in (normalize_dim(d, input.ndim) for d in dims) if input.ndim and input.shape[a] == 1)
    return np.squeeze(input, axis=axes) if axes else input.view()


@squeeze.defvjp
def _(grad, input_shape):
    return _reshape(grad, input_shape)


@op("ExpandBackward0", promote=None, method=True)
def expand(input, *sizes):
    """A broadcast view of ``input`` with the shape ``sizes`` (-1 keeps a size). Matches torch.Tensor.expand.

    Raises:
        RuntimeError: if a non-1 dimension would change (PyTorch's message).
    """
    sizes = _shape_arg(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(input.shape)}}}, size={list(sizes)}): the number of "
                           f"sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({input.ndim})")
    lead = len(sizes) - input.ndim
    target = []
    for i, s in enumerate(sizes):
        have = input.shape[i - lead] if i >= lead else 1
        if s == -1:
            if i < lead:
                raise RuntimeError("The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   "non-existing dimension 0")
            s = have
        if have != 1 and have != s:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(input.shape)}")
        target.append(s)
    limits.check_numel(target, "expand()")  # a view, but what is computed from it is not
    return np.broadcast_to(input, tuple(target))


@expand.defvjp
def _(grad, input_shape):
    from .reduction import sum_to_size

    return sum_to_size(grad, input_shape)


# ---------------------------------------------------------------------------------------------- indexing


@op("SelectBackward0", promote=None, method=True)
def select(input, dim, index):
    """The slice of ``input`` at ``index`` along ``dim`` (that dimension removed). Matches torch.select.

    Raises:
        IndexError: for a dimension or index out of range (PyTorch's messages).
    """
    if input.ndim == 0:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                         "in C++ to convert a 0-dim tensor to a number")
    d = normalize_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {size}")
    return input[(slice(None),) * d + (index,)]


@select.defvjp
def _(grad, input_shape, dim, index):
    return _select_backward(grad, input_shape, dim, index)


@op("SelectBackwardBackward0", promote=None, name="_select_backward")
def _select_backward(grad, input_shape, dim, index):
    """Zeros of ``input_shape`` with ``grad`` placed at ``index`` along ``dim`` (torch.select_backward)."""
    out = np.zeros(input_shape, dtype=grad.dtype)
    out[(slice(None),) * normalize_dim(dim, len(input_shape)) + (index,)] = grad
    return out


@_select_backward.defvjp
def _(grad, dim, index):
    return select(grad, dim, index)


@op("SliceBackward0", promote=None, name="_slice")
def _slice(input, dim, start, end, step):
    """``input[start:end:step]`` along ``dim`` (a view). Matches aten::slice.

    Raises:
        ValueError: for a step that is not positive (PyTorch's message).
    """
    if step is not None and step <= 0:
        raise ValueError("step must be greater than zero")
    return input[(slice(None),) * dim + (slice(start, end, step),)]


@_slice.defvjp
def _(grad, input_shape, dim, start, end, step):
    return _slice_backward(grad, input_shape, dim, start, end, step)


@op("SliceBackwardBackward0", promote=None, name="_slice_backward")
def _slice_backward(grad, input_shape, dim, start, end, step):
    """Zeros of ``input_shape`` with ``grad`` placed at ``start:end:step`` along ``dim``."""
    out = np.zeros(input_shape, dtype=grad.dtype)
    out[(slice(None),) * dim + (slice(start, end, step),)] = grad
    return out


@_slice_backward.defvjp
def _(grad, dim, start, end, step):
    return _slice(grad, dim, start, end, step)


@op("IndexBackward0", promote=None, name="_index")
def _index(input, key):
    """``input[key]`` for a key with integer/bool arrays (advanced indexing). Matches aten::index.

    Raises:
        IndexError: for indices out of range (PyTorch's message).
    """
    try:
        return input[key]
    except IndexError as e:
        raise IndexError(_index_message(str(e))) from None


def _index_message(msg: str) -> str:
    # numpy: "index 5 is out of bounds for axis 0 with size 3" -> torch: "... for dimension 0 ..."
    return msg.replace("for axis", "for dimension")


@_index.defvjp
def _(grad, input_shape, key):
    return _index_put_zeros(grad, input_shape, key)


@op("IndexPutBackward0", promote=None, name="_index_put_zeros")
def _index_put_zeros(grad, input_shape, key):
    """Zeros of ``input_shape`` with ``grad`` added at ``key`` (repeated indices accumulate)."""
    out = np.zeros(input_shape, dtype=grad.dtype)
    np.add.at(out, key, grad)
    return out


@_index_put_zeros.defvjp
def _(grad, key):
    return _index(grad, key)


def _index_key_part(k):
    if isinstance(k, Tensor):
        if k.data.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return k.data
    if isinstance(k, list):
        arr = np.array(k)
        if arr.dtype.kind not in "iub" and arr.size:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return arr.astype(np.int64) if arr.size == 0 else arr
    return k


def getitem(input, key):
    """``input[key]`` with PyTorch's semantics: integers, slices (positive step), None, Ellipsis, and integer
    or boolean tensors and lists. Matches torch.Tensor.__getitem__, including the recorded graph.

    Raises:
        IndexError: for out-of-range indices or too many indices (PyTorch's messages).
        ValueError: for a non-positive slice step.
    """
    if not isinstance(key, tuple):
        key = (key,)
    key = tuple(_index_key_part(k) for k in key)
    if any(isinstance(k, np.ndarray) for k in key):
        limits.check_index(input.shape, key)
        return _index(input, key)
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim}")
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    expanded = []
    for k in key:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (input.ndim - n_real))
        else:
            expanded.append(k)
    out = input
    dim = 0
    for k in expanded:
        if k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, slice):
            size = out.shape[dim]
            start, stop, step = k.indices(size)
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            if not (start == 0 and stop == size and step == 1):
                out = _slice(out, dim, start, max(stop, start), step)
            dim += 1
        elif isinstance(k, (bool, np.bool_)):
            out = _index(out, (slice(None),) * dim + (k,))
            dim += 1
        elif isinstance(k, (int, np.integer)):
            out = select(out, dim, int(k))
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             "valid indices (got " + type(k).__name__ + ")")
    if out is input:
        # x[:] and x[...] are views in PyTorch; a fresh alias keeps the graph PyTorch's (no node for a no-op).
        return _alias(input)
    return out


def _alias(input):
    if isinstance(input, np.ndarray):
        return input.view()
    return _slice(input, 0, 0, input.data.shape[0], 1) if input.data.ndim else input


Tensor.__getitem__ = getitem

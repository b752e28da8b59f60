"""Shape ops: views (reshape/view/flatten, transpose/permute/movedim/T, squeeze/unsqueeze, select/narrow and
slicing, diagonal) and copies (clone, flip). Joins and splits (cat, stack, split, chunk, unbind) are in
:mod:`.joins`; ``expand`` and ``repeat`` sit with the reductions (:mod:`gradcli.ops.reduction.reductions`),
whose ``sum`` their derivatives are; ``x[key]``, index_select and gather are in :mod:`.indexing`.

Views and copies are told apart as PyTorch does, from strides: a tensor's ``data`` is a numpy array whose
strides follow the same rules as PyTorch's (transpose, permute, expand and slicing return strided views; cat,
gather and the like are contiguous; flip and advanced indexing keep the input's layout as TensorIterator does).
So ``reshape`` records ViewBackward0 for a contiguous tensor, ReshapeAliasBackward0 for a strided one that can
still be viewed, and CloneBackward0 + UnsafeViewBackward0 when a copy is needed, and ``view`` raises PyTorch's
error where it cannot view (at::native::reshape, at::detail::computeStride).

The derivatives of select and slice scatter the gradient into zeros of the input's shape; those scatters are
ops too, so every rule can be differentiated again.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from ...engine.tensor import Tensor, normalize_dim, to_tensor
from ..core.declare import composite, op, tensor_method


def _shape_arg(shape, what: str = "shape") -> tuple:
    """Accept ``reshape(x, 2, 3)``, ``reshape(x, (2, 3))`` and ``reshape(x, [2, 3])`` alike.

    Raises:
        TypeError: for sizes that are not integers.
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    out = []
    for s in shape:
        if isinstance(s, Tensor):
            s = s.item()
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"{what} must be a sequence of ints, not {type(s).__name__}")
        out.append(int(s))
    return tuple(out)


def _data(t):
    return t.data if isinstance(t, Tensor) else np.asarray(t)


# ------------------------------------------------------------------------------------ contiguity, layout


def _strides(a: np.ndarray) -> tuple:
    """Strides in elements (numpy's are in bytes)."""
    return tuple(s // a.itemsize for s in a.strides)


@tensor_method("is_contiguous")
def is_contiguous(input) -> bool:
    """Whether the elements are laid out densely in row-major order, ignoring size-1 dimensions (tensors with
    no elements are contiguous). Matches torch.Tensor.is_contiguous (TensorImpl::compute_contiguous)."""
    a = _data(input)
    if a.size == 0:
        return True
    expected = 1
    for n, s in zip(reversed(a.shape), reversed(_strides(a))):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def _viewable(shape: tuple, strides: tuple, newshape: tuple) -> bool:
    """Whether a tensor of ``shape``/``strides`` (elements) can be viewed with ``newshape`` without copying.

    PyTorch's at::detail::computeStride (aten/src/ATen/TensorUtils.cpp): the dimensions are cut into chunks
    that are contiguous among themselves, and every chunk must be covered by whole dimensions of the new
    shape. Size-1 dimensions never matter (their strides are arbitrary), so they are dropped first.
    """
    if not shape or 0 in shape:
        return True
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    if not old:
        return True
    view_d = len(newshape) - 1
    chunk_base = old[-1][1]
    tensor_numel = view_numel = 1
    for d in range(len(old) - 1, -1, -1):
        tensor_numel *= old[d][0]
        if d == 0 or old[d - 1][1] != tensor_numel * chunk_base:
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return False
            if d > 0:
                chunk_base = old[d - 1][1]
                tensor_numel = view_numel = 1
    return view_d == -1


def _iteration_order(shape, operand_strides) -> list:
    """The dimensions from slowest to fastest, as PyTorch's TensorIterator orders them to lay out a new output
    (TensorIteratorBase::reorder_dimensions): by the strides of the inputs in turn, skipping broadcast (0)
    strides, smaller size first on ties; the output is then allocated densely in that order."""
    nd = len(shape)
    perm = list(range(nd - 1, -1, -1))  # fastest first

    def should_swap(d0, d1):
        for strides in operand_strides:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm[::-1]


# ---------------------------------------------------------------------------------------- reshape, view


def _infer_shape(shape: tuple, numel: int) -> tuple:
    """Resolve one -1 in ``shape`` for ``numel`` elements (at::infer_size).

    Raises:
        RuntimeError: PyTorch's "shape '[...]' is invalid for input of size N", "only one dimension can be
            inferred", "invalid shape dimension -2 at index 0 of shape [-2, 6]" and the 0-element ambiguity.
    """
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s >= 0:
            known *= s
        else:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
    if numel == known or (infer is not None and known > 0 and numel % known == 0):
        if infer is None:
            return shape
        if known == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                               "unspecified dimension size -1 can be any value and is ambiguous")
        return shape[:infer] + (numel // known,) + shape[infer + 1:]
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


@op("_reshape", grad_fn="ViewBackward0", promote=None, note="reshape the gradient back to the input's shape",
    formula="input: grad reshaped back to input's shape", jvp="linear")
def _reshape(input, shape):
    """``input`` with a new shape of the same number of elements (one size may be -1): aten::view."""
    return np.reshape(input, _infer_shape(shape, input.size))


@_reshape.defvjp
def _(grad, input_shape):
    return _reshape(grad, input_shape)


@op("_reshape_alias", grad_fn="ReshapeAliasBackward0", promote=None, note="reshape the gradient back",
    formula="input: grad reshaped back to input's shape", jvp="linear")
def _reshape_alias(input, shape):
    """A view with a new shape of a tensor that is not contiguous but whose strides allow the view
    (aten::_reshape_alias, what torch.reshape records then)."""
    return np.reshape(input, shape)


@_reshape_alias.defvjp
def _(grad, input_shape):
    return _reshape(grad, input_shape)


@op("_unsafe_view", grad_fn="UnsafeViewBackward0", promote=None, note="reshape the gradient back",
    formula="input: grad reshaped back to input's shape", jvp="linear")
def _unsafe_view(input, shape):
    """The new shape of a fresh contiguous copy (aten::_unsafe_view: the second half of a copying reshape, and
    the end of matmul's folded products)."""
    return np.reshape(input, shape)


@_unsafe_view.defvjp
def _(grad, input_shape):
    return _reshape(grad, input_shape)


@op("clone", grad_fn="CloneBackward0", promote=None, method=True, note="d/dx = 1 (the gradient passes through)",
    formula="input: grad", jvp="linear")
def clone(input):
    """A copy of ``input`` with its dimensions laid out in the same order in memory
    (memory_format=torch.preserve_format). Matches torch.clone."""
    return _copy_preserving_layout(input)


def _copy_preserving_layout(a: np.ndarray) -> np.ndarray:
    """A dense copy of ``a`` whose dimensions are ordered in memory as ``a``'s strides order them (empty_like
    with torch.preserve_format: the same strides for a dense tensor, else at::infer_dense_strides, which
    orders the dimensions like TensorIterator and leaves broadcast ones in place)."""
    order = _iteration_order(a.shape, [_strides(a)])
    if order == sorted(order):
        return np.array(a, order="C", copy=True)
    out = np.empty([a.shape[d] for d in order], dtype=a.dtype).transpose(np.argsort(order))
    out[...] = a
    return out


@clone.defvjp
def _(grad):
    return grad


@clone.defsymbolic
def _(s, input, *rest):
    return input.expr, lambda g: g  # a copy: the same formula


@op("_clone_contiguous", grad_fn="CloneBackward0", promote=None, note="d/dx = 1 (the gradient passes through)",
    jvp="linear")
def _clone_contiguous(input):
    """A row-major copy of ``input`` (clone(memory_format=torch.contiguous_format))."""
    return np.array(input, order="C", copy=True)


@_clone_contiguous.defvjp
def _(grad):
    return grad


@_clone_contiguous.defsymbolic
def _(s, input, *rest):
    return input.expr, lambda g: g  # a copy: the same formula


_VIEW_NOTE = "reshape the gradient back to the input's shape"
_RESHAPE_GRAD_FN = "ViewBackward0, ReshapeAliasBackward0, or CloneBackward0 + UnsafeViewBackward0 (a copy)"


@composite("reshape", grad_fn=_RESHAPE_GRAD_FN, note=_VIEW_NOTE, method=True)
def reshape(input, *shape):
    """``input`` with a new shape of the same number of elements; one size may be -1. As torch.reshape
    decides: a view of a contiguous tensor (grad_fn ViewBackward0), a view of a tensor whose strides allow it
    (ReshapeAliasBackward0), else a contiguous copy (CloneBackward0, then UnsafeViewBackward0).

    Raises:
        RuntimeError: if the sizes do not match (PyTorch's messages).
    """
    shape = _shape_arg(shape)
    if not isinstance(input, Tensor):  # numpy arrays inside derivative rules
        return _reshape(input, shape)
    a = input.data
    new = _infer_shape(shape, a.size)
    if is_contiguous(a):
        return _reshape(input, new)
    if _viewable(a.shape, _strides(a), new):
        return _reshape_alias(input, new)
    return _unsafe_view(_clone_contiguous(input), new)


_VIEW_ERROR = ("view size is not compatible with input tensor's size and stride (at least one dimension spans "
               "across two contiguous subspaces). Use .reshape(...) instead.")


@composite("view", grad_fn="ViewBackward0", note=_VIEW_NOTE, method=True)
def view(input, *shape):
    """``input`` with a new shape of the same number of elements, sharing its data (grad_fn ViewBackward0).
    Matches torch.Tensor.view.

    Raises:
        RuntimeError: if the sizes do not match, or the strides do not allow a view (PyTorch's messages).
    """
    shape = _shape_arg(shape)
    if not isinstance(input, Tensor):
        return _reshape(input, shape)
    a = input.data
    new = _infer_shape(shape, a.size)
    if not _viewable(a.shape, _strides(a), new):
        raise RuntimeError(_VIEW_ERROR)
    return _reshape(input, new)


def _other_shape(other, name):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    return tuple(other.shape)


@composite("view_as", grad_fn="ViewBackward0", note=_VIEW_NOTE, method=True)
def view_as(input, other):
    """``input.view(other.size())``. Matches torch.Tensor.view_as."""
    return view(input, _other_shape(other, "view_as"))


@composite("reshape_as", grad_fn=_RESHAPE_GRAD_FN, note=_VIEW_NOTE, method=True)
def reshape_as(input, other):
    """``input.reshape(other.size())``. Matches torch.Tensor.reshape_as."""
    return reshape(input, _other_shape(other, "reshape_as"))


@composite("flatten", grad_fn=_RESHAPE_GRAD_FN, note=_VIEW_NOTE, method=True)
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dimensions ``start_dim..end_dim`` into one (a reshape: ViewBackward0, or a copy for a tensor that
    cannot be viewed; ``input`` itself when there is nothing to merge). Matches torch.flatten.

    Raises:
        IndexError: for a dimension out of range; RuntimeError if start_dim comes after end_dim.
    """
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


@composite("unflatten", grad_fn=_RESHAPE_GRAD_FN, note=_VIEW_NOTE, method=True)
def unflatten(input, dim, sizes):
    """Split dimension ``dim`` into ``sizes`` (one of which may be -1): a reshape. Matches torch.unflatten.

    Raises:
        IndexError: for a dimension out of range; RuntimeError when ``sizes`` does not multiply to the
            dimension's size (PyTorch's message).
    """
    nd = input.ndim
    d = normalize_dim(dim, nd)
    sizes = tuple(sizes)
    known = int(np.prod([s for s in sizes if s != -1])) if sizes else 1
    size = input.shape[d]
    if (-1 not in sizes and known != size) or (-1 in sizes and (known == 0 or size % known)):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({size}) in the input tensor")
    shape = tuple(input.shape)
    return reshape(input, shape[:d] + sizes + shape[d + 1:])


@tensor_method("contiguous")
def _contiguous(self):
    """``self`` if it is contiguous, else a row-major copy (CloneBackward0). Matches torch.Tensor.contiguous."""
    return self if is_contiguous(self) else _clone_contiguous(self)


# ------------------------------------------------------------------------------------ permute, transpose


@op("permute", grad_fn="PermuteBackward0", promote=None, method=True,
    note="permute the gradient by the inverse permutation",
    formula="input: grad permuted back by the inverse permutation", jvp="linear")
def permute(input, *dims):
    """``input`` with its dimensions reordered by ``dims`` (a view). Matches torch.permute.

    Raises:
        RuntimeError: if ``dims`` is not a permutation of the dimensions (PyTorch's message).
    """
    dims = _shape_arg(dims, "dims") if dims else ()
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
    dims = _shape_arg(dims, "dims") if dims else ()
    nd = len(dims)
    axes = [normalize_dim(d, nd) for d in dims]
    inverse = [0] * nd
    for i, a in enumerate(axes):
        inverse[a] = i
    return permute(grad, *inverse)


@permute.defsymbolic
def _(s, input, *dims):
    if len(input.shape) != 2 or tuple(d % 2 for d in dims) != (1, 0):
        raise s.NoFormula(f"permute{tuple(dims)} of a tensor of shape {input.shape} (formulas cover transposes)")
    return s.Transpose(s.mat(input)), lambda g: s.Transpose(g)


@op("transpose", grad_fn="TransposeBackward0", promote=None, method=True, aliases=("swapaxes", "swapdims"),
    note="transpose the gradient back", formula="input: grad transposed back (dim0, dim1)", jvp="linear")
def transpose(input, dim0, dim1):
    """``input`` with dimensions ``dim0`` and ``dim1`` swapped (a view). Matches torch.transpose.

    Raises:
        IndexError: for a dimension out of range.
    """
    return np.swapaxes(input, normalize_dim(dim0, input.ndim), normalize_dim(dim1, input.ndim))


@transpose.defvjp
def _(grad, dim0, dim1):
    return transpose(grad, dim0, dim1)


@transpose.defsymbolic
def _(s, input, dim0, dim1):
    if len(input.shape) != 2 or dim0 % 2 == dim1 % 2:
        raise s.NoFormula(f"transpose({dim0}, {dim1}) of a tensor of shape {input.shape}")
    return s.Transpose(s.mat(input)), lambda g: s.Transpose(g)


@op("t", grad_fn="TBackward0", promote=None, method=True, note="transpose the gradient back",
    formula="input: grad transposed back", jvp="linear")
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


@t.defsymbolic
def _(s, input):
    if len(input.shape) < 2:
        return input.expr, lambda g: g
    return s.Transpose(s.mat(input)), lambda g: s.Transpose(g)


@composite("movedim", grad_fn="PermuteBackward0", note="permute the gradient back", method=True,
           aliases=("moveaxis",))
def movedim(input, source, destination):
    """``input`` with the dimensions ``source`` (an int or a sequence) moved to the positions ``destination``,
    the others keeping their order (a permute: PermuteBackward0). Matches torch.movedim / torch.moveaxis.

    Raises:
        RuntimeError: for source/destination of different lengths or with repeated dims; IndexError for a dim
            out of range (PyTorch's messages).
    """
    src = list(source) if isinstance(source, (list, tuple)) else [source]
    dst = list(destination) if isinstance(destination, (list, tuple)) else [destination]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    nd = input.ndim
    src_n = [normalize_dim(d, nd) for d in src]
    dst_n = [normalize_dim(d, nd) for d in dst]
    for name, given, dims in (("source", src, src_n), ("destination", dst, dst_n)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given})")
    order = [-1] * nd
    for s_, d_ in zip(src_n, dst_n):
        order[d_] = s_
    rest = iter(d for d in range(nd) if d not in src_n)
    order = [next(rest) if o == -1 else o for o in order]
    return permute(input, *order) if nd else permute(input)


def _T(self):
    """The tensor with all dimensions reversed (``x.T``; grad_fn PermuteBackward0), with PyTorch's deprecation
    warnings for tensors that are not matrices. Matches torch.Tensor.T."""
    nd = self.data.ndim
    if nd == 0:
        warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
                      UserWarning, stacklevel=2)
    elif nd != 2:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
                      "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
                      "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
                      "tensor.", UserWarning, stacklevel=2)
    return permute(self, *range(nd - 1, -1, -1))


def _mT(self):
    """The last two dimensions swapped (``x.mT``; TransposeBackward0). Matches torch.Tensor.mT.

    Raises:
        RuntimeError: for tensors with fewer than 2 dimensions.
    """
    if self.data.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{self.data.ndim}-D tensor.")
    return transpose(self, -2, -1)


Tensor.T = property(_T)
Tensor.mT = property(_mT)


# ------------------------------------------------------------------------------------- squeeze, unsqueeze


@op("unsqueeze", grad_fn="UnsqueezeBackward0", promote=None, method=True,
    note="squeeze the inserted dimension from the gradient", formula="input: grad squeezed at dim", jvp="linear")
def unsqueeze(input, dim):
    """``input`` with a size-1 dimension inserted at ``dim`` (in ``[-ndim-1, ndim]``). Matches torch.unsqueeze.

    Raises:
        IndexError: for a dimension out of range.
    """
    return np.expand_dims(input, normalize_dim(dim, input.ndim + 1))


@unsqueeze.defvjp
def _(grad, dim, input_shape):
    # derivatives.yaml: grad.squeeze(dim), recorded as SqueezeBackward1 (with create_graph)
    if isinstance(grad, Tensor):
        return squeeze(grad, dim)
    return _reshape(grad, input_shape)


@unsqueeze.defsymbolic
def _(s, input, dim):
    if len(input.shape) == 1 and dim in (0, -2):  # a row: the column's transpose
        return s.Transpose(s.mat(input)), lambda g: s.Transpose(g)
    if len(input.shape) == 1 and dim in (1, -1) or not input.is_mat:
        return input.expr, lambda g: g
    raise s.NoFormula(f"unsqueeze({dim}) of a matrix")


def _squeeze_grad_fn(dim=None):
    if dim is None:
        return "SqueezeBackward0"
    return "SqueezeBackward2" if isinstance(dim, (tuple, list)) else "SqueezeBackward1"


@op("squeeze", grad_fn=_squeeze_grad_fn, promote=None, method=True,
    note="reshape the gradient back to the input's shape",
    formula={"SqueezeBackward0": "input: grad reshaped back to input's shape",
             "SqueezeBackward1": "input: grad unsqueezed at dim",
             "SqueezeBackward2": "input: grad unsqueezed at dims"}, jvp="linear")
def squeeze(input, dim=None):
    """``input`` without size-1 dimensions (all of them, or those in ``dim`` that have size 1).
    Matches torch.squeeze (grad_fn SqueezeBackward0, 1 with an int dim, 2 with a tuple).

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


@squeeze.defsymbolic
def _(s, input, dim=None):
    if input.is_mat and getattr(input.expr, "shape", None) and input.expr.shape[0] == 1 and \
            input.expr.shape[1] != 1:  # a row becomes the vector (a column)
        return s.Transpose(input.expr), lambda g: s.Transpose(g)
    return input.expr, lambda g: g


# ------------------------------------------------------------------------------------------------ narrow
@composite("narrow", grad_fn="SliceBackward0", note="the gradient placed in zeros at the range", method=True)
def narrow(input, dim, start, length):
    """``length`` entries of ``input`` from ``start`` along ``dim`` (a view; SliceBackward0). Matches
    torch.narrow.

    Raises:
        RuntimeError: for a 0-d tensor, a negative length or a range past the end; IndexError for a dim or
            start out of range (PyTorch's messages).
    """
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    start, length = operator.index(start), operator.index(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = normalize_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start > size - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _slice(input, d, start, start + length, 1)


# ------------------------------------------------------------------------------------------------ flip


def _flip_dims(dims, ndim):
    if isinstance(dims, Tensor) or not isinstance(dims, (list, tuple)):
        raise TypeError(f"flip(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}")
    axes = [normalize_dim(d, ndim) for d in _shape_arg((dims,), "dims")]
    seen = set()
    for a in axes:
        if a in seen:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
        seen.add(a)
    return tuple(a for a in axes if ndim)


def _flip_method(self, *dims):
    return flip(self, dims[0] if len(dims) == 1 and isinstance(dims[0], (list, tuple)) else dims)


@op("flip", grad_fn="FlipBackward0", promote=None, method=_flip_method,
    note="flip the gradient back along the same dims", formula="input: grad flipped back along dims", jvp="linear")
def flip(input, dims):
    """``input`` with the order of elements reversed along each of ``dims`` (a copy with the input's memory
    layout). Matches torch.flip.

    Raises:
        TypeError: if ``dims`` is not a list or tuple; RuntimeError for a repeated dim; IndexError for a dim
            out of range.
    """
    axes = _flip_dims(dims, input.ndim)
    out = _copy_preserving_layout(input)
    if axes:
        out[...] = np.flip(input, axes)
    return out


@flip.defvjp
def _(grad, dims):
    return flip(grad, dims)


_flip_method.__doc__ = flip.__doc__


# -------------------------------------------------------------------------------------------- diagonal


@op("_diagonal", grad_fn="DiagonalBackward0", promote=None, note="the gradient placed on the diagonal of zeros",
    formula="input: grad placed on the diagonal of zeros", jvp="linear")
def _diagonal(input, offset, dim1, dim2):
    """The diagonal of ``input`` in the plane of ``dim1`` and ``dim2`` (both removed, the diagonal appended as
    the last dimension; a view), as torch.diagonal computes it. The building block of einsum's repeated
    subscripts (``"ii->i"``).
    """
    return np.diagonal(input, offset, normalize_dim(dim1, input.ndim), normalize_dim(dim2, input.ndim))


@_diagonal.defvjp
def _(grad, input_shape, offset, dim1, dim2):
    return _diagonal_backward(grad, input_shape, offset, dim1, dim2)


@op("_diagonal_backward", grad_fn="DiagonalBackwardBackward0", promote=None,
    note="take the same diagonal of the gradient", formula="grad_output: the diagonal of grad", jvp="linear")
def _diagonal_backward(grad, input_shape, offset, dim1, dim2):
    """Zeros of ``input_shape`` with ``grad`` (last dimension: the diagonal) written on the diagonal of
    ``dim1``/``dim2`` at ``offset`` (torch.diagonal_backward)."""
    out = np.zeros(input_shape, dtype=grad.dtype)
    view = np.diagonal(out, offset, normalize_dim(dim1, len(input_shape)), normalize_dim(dim2, len(input_shape)))
    view.setflags(write=True)
    view[...] = grad
    return out


@_diagonal_backward.defvjp
def _(grad, offset, dim1, dim2):
    return _diagonal(grad, offset, dim1, dim2)


@composite("diagonal", grad_fn="DiagonalBackward0", note="the gradient placed on the diagonal of zeros",
           method=True)
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of ``input`` in the plane of ``dim1`` and ``dim2`` at ``offset`` (both dims removed, the
    diagonal appended as the last dimension; a view). Matches torch.diagonal.

    Raises:
        RuntimeError: for equal dims (PyTorch's message); IndexError for a dim out of range.
    """
    t = to_tensor(input)
    if t.data.ndim < 2:
        raise RuntimeError(f"diagonal dimensions requires ndim larger than 1, but got {t.data.ndim}")
    d1, d2 = normalize_dim(dim1, t.data.ndim), normalize_dim(dim2, t.data.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _diagonal(t, offset, d1, d2)


@op("diag_embed", grad_fn="DiagEmbedBackward0", promote=None, method=True,
    note="d/dinput = the diagonal of the gradient", formula="input: the diagonal of grad", jvp="linear")
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor of one more dimension with ``input``'s last dimension on the diagonal at ``offset`` of the plane
    of ``dim1`` and ``dim2`` (dimensions of the result, each of size ``n + |offset|``), zeros elsewhere; the
    other dimensions of ``input`` fill the result's other dimensions in order. Matches torch.diag_embed.

    Raises:
        RuntimeError: equal dims ("diagonal dimensions cannot be identical 0, 0"); IndexError: a dim out of range
            of the result's dimensions (PyTorch's messages).
    """
    ndim = input.ndim + 1
    d1, d2 = normalize_dim(dim1, ndim), normalize_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] + abs(offset)
    shape = list(input.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    out = np.zeros(tuple(shape), dtype=input.dtype)
    view = np.diagonal(out, offset, d1, d2)
    view.setflags(write=True)
    view[...] = input
    return out


@diag_embed.defvjp
def _(grad, offset, dim1, dim2):
    return _diagonal(grad, offset, dim1, dim2)


@op("_diag_copy", grad_fn="DiagonalBackward0_copy", promote=None,
    note="the gradient placed on the diagonal of zeros", formula="input: grad on the diagonal of zeros", jvp="linear")
def _diag_copy(input, diagonal):
    """The ``diagonal``-th diagonal of a matrix, as a new tensor (what torch.diag of a matrix returns)."""
    return np.diagonal(input, diagonal).copy()


@_diag_copy.defvjp
def _(grad, input_shape, diagonal):
    return _diagonal_backward(grad, input_shape, diagonal, 0, 1)


@composite("diag", grad_fn="varies",
           note="vector: d/dinput = the diagonal of the gradient; matrix: the gradient on the diagonal of zeros",
           method=True)
def diag(input, diagonal=0):
    """A vector on the ``diagonal``-th diagonal of a square matrix, or the ``diagonal``-th diagonal of a matrix
    (a copy). Matches torch.diag.

    Raises:
        RuntimeError: for a tensor of other than 1 or 2 dimensions (PyTorch's message).
    """
    t = to_tensor(input)
    if t.data.ndim == 1:
        return diag_embed(t, diagonal)
    if t.data.ndim == 2:
        return _diag_copy(t, diagonal)
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{t.data.ndim}D")


# ---------------------------------------------------------------------------------------------- select


@op("select", grad_fn="SelectBackward0", promote=None, method=True,
    note="the gradient placed in zeros at the selected index",
    formula="input: grad placed at index of zeros (input[index])", jvp="linear")
def select(input, dim, index):
    """The slice of ``input`` at ``index`` along ``dim`` (that dimension removed; a view). Matches torch.select.

    Raises:
        IndexError: for a 0-d tensor, a dimension or an index out of range (PyTorch's messages).
    """
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, input.ndim)
    index = operator.index(index)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    return input[(slice(None),) * d + (index, Ellipsis)]  # (Ellipsis: a 0-d result is a view too)


@select.defvjp
def _(grad, input_shape, dim, index):
    return _select_backward(grad, input_shape, dim, index)


@op("_select_backward", grad_fn="SelectBackwardBackward0", promote=None, note="select the same index of the gradient",
    formula="grad_output: grad's element at index", jvp="linear")
def _select_backward(grad, input_shape, dim, index):
    """Zeros of ``input_shape`` with ``grad`` placed at ``index`` along ``dim`` (torch.select_backward)."""
    out = np.zeros(input_shape, dtype=grad.dtype)
    out[(slice(None),) * normalize_dim(dim, len(input_shape)) + (operator.index(index),)] = grad
    return out


@_select_backward.defvjp
def _(grad, dim, index):
    return select(grad, dim, index)


# ---------------------------------------------------------------------------------------------- slicing


@op("_slice", grad_fn="SliceBackward0", promote=None, note="the gradient placed in zeros at the slice",
    formula="input: grad placed at the slice of zeros (input[start:end:step])", jvp="linear")
def _slice(input, dim, start, end, step):
    """``input[start:end:step]`` along ``dim`` with ``0 <= start <= end <= size`` and ``step > 0`` (a view):
    aten::slice after its clamping.

    Raises:
        IndexError: for a 0-d tensor (PyTorch's message).
    """
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    return input[(slice(None),) * dim + (slice(start, end, step),)]


@_slice.defvjp
def _(grad, input_shape, dim, start, end, step):
    return _slice_backward(grad, input_shape, dim, start, end, step)


@op("_slice_backward", grad_fn="SliceBackwardBackward0", promote=None, note="slice the gradient the same way",
    formula="grad_output: grad's slice", jvp="linear")
def _slice_backward(grad, input_shape, dim, start, end, step):
    """Zeros of ``input_shape`` with ``grad`` placed at ``start:end:step`` along ``dim``."""
    out = np.zeros(input_shape, dtype=grad.dtype)
    out[(slice(None),) * dim + (slice(start, end, step),)] = grad
    return out


@_slice_backward.defvjp
def _(grad, dim, start, end, step):
    return _slice(grad, dim, start, end, step)


@op("_alias", grad_fn="AliasBackward0", promote=None, note="d/dx = 1 (the gradient passes through)",
    formula="input: grad", jvp="linear")
def _alias(input):
    """A new tensor sharing ``input``'s data (at::alias: what ``x[...]`` and ``x[:, :]`` return)."""
    return input.view()


@_alias.defvjp
def _(grad):
    return grad


@_alias.defsymbolic
def _(s, input, *rest):
    return input.expr, lambda g: g  # a copy: the same formula


# ----------------------------------------------------------------------------------------- forward mode
# derivatives.yaml: every op here is linear (auto_linear, or the op applied to self_t: ``result:
# self_t.view(size)``, ``permute(self_t, dims)``): the tangent of a view is the same view of the tangent (the
# splits' in :mod:`.joins`).

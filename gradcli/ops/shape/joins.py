"""Joins and splits: cat (concat), stack, split, chunk, unbind.

They sit together because each is the other's derivative: the pieces' gradients of split and chunk are joined
back with cat (SplitBackward0, SplitWithSizesBackward0), unbind's with stack (UnbindBackward0), and cat's and
stack's gradients are sliced and selected out of the joined one (CatBackward0, StackBackward0). The joins are
one op per number of inputs (so that each input gets its edge in the graph); the splits return views, all of
them outputs of one node. Sizes, grad_fn names and error texts follow PyTorch 2.13.
"""

from __future__ import annotations

import inspect

import numpy as np

from ...engine import limits
from ...engine.tensor import Tensor, normalize_dim
from ..core.declare import composite, op
from .views import _reshape, _shape_arg, _slice, select


# ----------------------------------------------------------------------------------------- cat, stack

_NARY: dict = {}


def _nary_op(kind: str, n: int):
    """The op joining ``n`` tensors (cat or stack), built once per ``n``: its forward takes the tensors as
    ``n`` positional parameters (so each gets an edge in the graph) and ``dim``, already normalized."""
    key = (kind, n)
    o = _NARY.get(key)
    if o is not None:
        return o
    names = [f"tensors{i}" for i in range(n)]
    P = inspect.Parameter
    if kind == "cat":
        def forward(*args):
            arrays = args[:-1]
            kept = [a for a in arrays if a.shape != (0,)]
            if kept and len(kept) != len(arrays) and any(a.ndim != 1 for a in kept):
                arrays = kept  # PyTorch's legacy rule: 1-d empty tensors are skipped
            return np.ascontiguousarray(np.concatenate(arrays, axis=args[-1]))

        def rule(grad, dim, *shapes):
            out = []
            start = 0
            for s in shapes:
                if s == (0,) and len(grad.shape) != 1:
                    out.append(_reshape(_slice(grad, dim, 0, 0, 1), (0,)))
                    continue
                out.append(_slice(grad, dim, start, start + s[dim], 1))
                start += s[dim]
            return tuple(out)

        grad_fn, note = "CatBackward0", "each input gets its slice of the gradient along dim"
    else:
        def forward(*args):
            return np.ascontiguousarray(np.stack(args[:-1], axis=args[-1]))

        def rule(grad, dim, *shapes):
            return tuple(select(grad, dim, i) for i in range(len(shapes)))

        grad_fn, note = "StackBackward0", "each input gets its slice of the gradient at its index along dim"
    forward.__signature__ = inspect.Signature(
        [P(nm, P.POSITIONAL_OR_KEYWORD) for nm in names] + [P("dim", P.POSITIONAL_OR_KEYWORD)])
    forward.__name__ = kind
    rule.__signature__ = inspect.Signature(
        [P("grad", P.POSITIONAL_OR_KEYWORD), P("dim", P.POSITIONAL_OR_KEYWORD)]
        + [P(f"{nm}_shape", P.POSITIONAL_OR_KEYWORD) for nm in names])
    o = op(kind, grad_fn=grad_fn, note=note, inputs=n, public=False,
           jvp="linear")(forward)  # derivatives.yaml: cat/stack(tangents, dim)
    o.defvjp(rule)
    _NARY[key] = o
    return o


def _tensor_list(name: str, tensors) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{'Tensor' if isinstance(tensors, Tensor) else type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return list(tensors)


@composite("cat", grad_fn="CatBackward0", note="each input gets its slice of the gradient along dim",
           aliases=("concat",), formula="tensors: each gets its slice of grad along dim")
def cat(tensors, dim=0):
    """Concatenate tensors along ``dim`` (all other sizes equal; 1-d empty tensors are skipped, PyTorch's
    legacy rule), with type promotion across the inputs. Matches torch.cat (grad_fn CatBackward0).

    Raises:
        ValueError: for an empty list; RuntimeError for 0-d tensors or mismatching sizes; IndexError for a
            dimension out of range (PyTorch's messages).
        LimitError: for a result of more than the ``elements`` limit (before it is allocated).
    """
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, x in enumerate(tensors):
        if x.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    kept = [(i, x) for i, x in enumerate(tensors) if tuple(x.shape) != (0,)]
    if not kept:
        return _nary_op("cat", len(tensors))(*tensors, normalize_dim(dim, 1))
    first = kept[0][1]
    d = normalize_dim(dim, first.ndim)
    for i, x in kept:
        if x.ndim != first.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.ndim} and {x.ndim}")
        for k in range(first.ndim):
            if k != d and x.shape[k] != first.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{first.shape[k]} but got size {x.shape[k]} for tensor number {i} in the "
                                   "list.")
    if sum(x.data.size for x in tensors) > limits.current.elements:  # the result's size, checked cheaply
        shape = list(first.shape)
        shape[d] = sum(x.shape[d] for _, x in kept)
        limits.check_numel(shape, "cat()")
    return _nary_op("cat", len(tensors))(*tensors, d)


@composite("stack", grad_fn="StackBackward0", note="each input gets the gradient's slice at its index along dim",
           formula="tensors: each gets grad's slice at its index along dim")
def stack(tensors, dim=0):
    """Join equally shaped tensors along a new dimension ``dim`` (in ``[-ndim-1, ndim]``). Matches torch.stack
    (grad_fn StackBackward0).

    Raises:
        RuntimeError: for an empty list or tensors of different sizes; IndexError for a dimension out of range.
        LimitError: for a result of more than the ``elements`` limit (before it is allocated).
    """
    tensors = _tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]
    d = normalize_dim(dim, first.ndim + 1)
    for i, x in enumerate(tensors[1:], 1):
        if tuple(x.shape) != tuple(first.shape):
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first.shape)} at "
                               f"entry 0 and {list(x.shape)} at entry {i}")
    if len(tensors) * first.data.size > limits.current.elements:
        shape = list(first.shape)
        shape.insert(d, len(tensors))
        limits.check_numel(shape, "stack()")
    return _nary_op("stack", len(tensors))(*tensors, d)


#--------------------------------------------------------------------------------- split, chunk, unbind


def _split_forward(input, dim, sizes):
    """The pieces of ``input`` along ``dim`` (already normalized) of ``sizes`` entries each (summing to the
    dimension's size), as views: ``input.narrow(dim, start, size)`` for each."""
    out = []
    start = 0
    for size in sizes:
        out.append(input[(slice(None),) * dim + (slice(start, start + size),)])
        start += size
    return tuple(out)


def _split_backward(grads, dim):
    # derivatives.yaml split/split_with_sizes: split_backward, the pieces' gradients (zeros for pieces that
    # got none, filled by the engine) joined back along dim
    return _nary_op("cat", len(grads))(*grads, dim)


@op("_split", grad_fn="SplitBackward0", promote=None, multi_output=True,
    note="the pieces' gradients joined along dim (zeros for unused pieces)",
    formula="input: the pieces' grads joined back along dim (zeros for unused pieces)", jvp="linear")
def _split(input, dim, sizes):
    """torch.split with an int size: the pieces of ``sizes`` entries along ``dim`` (normalized), as views;
    all of them outputs of one SplitBackward0 node."""
    return _split_forward(input, dim, sizes)


@op("_split_with_sizes", grad_fn="SplitWithSizesBackward0", promote=None, multi_output=True,
    note="the pieces' gradients joined along dim (zeros for unused pieces)",
    formula="input: the pieces' grads joined back along dim (zeros for unused pieces)", jvp="linear")
def _split_with_sizes(input, dim, sizes):
    """torch.split with a list of sizes: the pieces of ``sizes`` entries along ``dim`` (normalized), as
    views; all of them outputs of one SplitWithSizesBackward0 node."""
    return _split_forward(input, dim, sizes)


_split.defvjp(_split_backward)
_split_with_sizes.defvjp(_split_backward)


def _split_sizes(tensor, split_size, dim):
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if isinstance(split_size, bool) or not isinstance(split_size, (int, np.integer)):
        raise TypeError(f"split(): argument 'split_size' must be int or list of ints, not "
                        f"{type(split_size).__name__}")
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    d = normalize_dim(dim, tensor.ndim)
    size = tensor.shape[d]
    if split_size == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
    n = max(-(-size // split_size), 1) if split_size else 1
    return d, [split_size if i < n - 1 else size - split_size * (n - 1) for i in range(n)]


def _split_sizes_list(tensor, sizes, dim):
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    sizes = list(_shape_arg((sizes,), "split_sizes"))
    d = normalize_dim(dim, tensor.ndim)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sizes}")
    if sum(sizes) != tensor.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {tensor.shape[d]} (input "
                           f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    return _split_with_sizes(tensor, d, tuple(sizes))


def _split_method(self, split_size, dim=0):
    return split(self, split_size, dim)


_SPLIT_NOTE = "each piece's gradient placed in zeros at its position"


@composite("split", grad_fn="SplitBackward0 (SplitWithSizesBackward0 for a list of sizes)", note=_SPLIT_NOTE,
           method=_split_method)
def split(tensor, split_size_or_sections, dim=0):
    """Split ``tensor`` along ``dim`` into pieces of ``split_size_or_sections`` elements (an int: equal pieces,
    the last one smaller; a list: those sizes). Returns a tuple of views. Matches torch.split (grad_fn
    SplitBackward0 for an int, SplitWithSizesBackward0 for a list).

    Raises:
        RuntimeError: for a 0-d tensor, a negative size, or sizes that do not sum to the dimension's size
            (PyTorch's messages).
    """
    if isinstance(split_size_or_sections, (list, tuple)):
        return _split_sizes_list(tensor, split_size_or_sections, dim)
    d, sizes = _split_sizes(tensor, split_size_or_sections, dim)
    return _split(tensor, d, tuple(sizes))


_split_method.__doc__ = split.__doc__


@composite("chunk", grad_fn="SplitBackward0", note=_SPLIT_NOTE, method=True)
def chunk(input, chunks, dim=0):
    """Split ``input`` into ``chunks`` pieces of ``ceil(size / chunks)`` elements along ``dim`` (fewer pieces
    when the size runs out). Matches torch.chunk (grad_fn SplitBackward0).

    Raises:
        RuntimeError: for a 0-d tensor or chunks < 1 (PyTorch's messages).
    """
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = normalize_dim(dim, input.ndim)
    size = input.shape[d]
    split_size = -(-size // chunks)
    if split_size == 0 and size == 0:
        return _split_sizes_list(input, [0] * chunks, d)
    return split(input, split_size, d)


@op("_unbind", grad_fn="UnbindBackward0", promote=None, multi_output=True,
    note="the slices' gradients stacked along dim (zeros for unused slices)",
    formula="input: the slices' grads stacked back along dim (zeros for unused ones)", jvp="linear")
def _unbind(input, dim):
    """torch.unbind along ``dim`` (normalized): ``input.select(dim, i)`` for each i, as views (0-d arrays for
    a 1-d input); all of them outputs of one UnbindBackward0 node."""
    return tuple(input[(slice(None),) * dim + (i, Ellipsis)] for i in range(input.shape[dim]))


@_unbind.defvjp
def _(grads, dim):
    # derivatives.yaml unbind: unbind_backward, the slices' gradients stacked along dim
    return _nary_op("stack", len(grads))(*grads, dim)


@composite("unbind", grad_fn="UnbindBackward0", note="each slice's gradient placed in zeros", method=True)
def unbind(input, dim=0):
    """The slices of ``input`` along ``dim`` (that dimension removed), as a tuple of views. Matches
    torch.unbind (grad_fn UnbindBackward0).

    Raises:
        IndexError: for a 0-d tensor or a dimension out of range (PyTorch's messages).
    """
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = normalize_dim(dim, input.ndim)
    return _unbind(input, d)


# ----------------------------------------------------------------------------------------- forward mode
# derivatives.yaml: ``split(self_t, ...)``, ``unbind(self_t, dim)``: the tangent of a piece is the same piece of
# the tangent (cat and stack declare theirs in _nary_op).

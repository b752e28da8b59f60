"""Batching for ``torch.func.vmap``: :class:`BatchedTensor` and the batching rules of the op table.

The design is functorch's (torch/_functorch/vmap.py, aten/src/ATen/functorch/BatchRules*.cpp), in gradcli's
own code: inside a vmap the function sees each mapped argument as a :class:`BatchedTensor`, a tensor of the
per-example ("logical") shape that holds one ordinary ("physical") Tensor whose leading dimensions are the
batch dimensions of the running vmaps (one per level, outermost first). An op applied to BatchedTensors runs
once on the physical tensors, by a batching rule:

* elementwise ops: the batch dimensions stay in front and the logical dimensions are right-aligned, so that
  broadcasting against unbatched tensors is the logical one (type promotion by the logical ranks);
* ops with ``dim``-like arguments (reductions, scans, softmax, select, slice, transpose, squeeze, ...): the
  dimensions are normalized against the logical rank and shifted past the batch dimensions;
* matrix products (mm, bmm, mv, dot, outer, addmm): one broadcasting matmul of the physical tensors;
* shape ops (reshape/view, expand, repeat, permute, t, padding, tril/triu): the logical shape argument behind
  the batch sizes.

An op without a rule takes PyTorch's slow fallback: it runs once per example on the slices of the physical
tensors, and the results are stacked (every step recorded, so gradients flow through it).

Autograd records on the physical tensors, as PyTorch does (a vmap's output has the physical op's grad_fn,
``SumBackward1`` for a per-example ``sum()``). A BatchedTensor reports ``requires_grad`` only when a transform
inside the vmap asked for it (``torch.func.grad`` in ``vmap(grad(f))``); :func:`batched_grad` is what
``torch.autograd.grad`` does when an argument is batched: one physical backward when everything is batched alike,
else one backward per example of the batched cotangents (``vmap`` over ``grad_outputs``, PyTorch's
``is_grads_batched``). A function that gradcli cannot batch (it reads a BatchedTensor's values from numpy)
raises :class:`Unbatchable`, and ``vmap`` then runs it once per example instead.
"""

from __future__ import annotations

import numpy as np

from ..engine import autograd, dtypes
from ..engine.context import state as _state
from ..engine.errors import Unbatchable
from ..engine.grad_mode import no_grad
from ..engine.tensor import Tensor, normalize_dim
from ..ops import REGISTRY
from ..ops.core import apply as _applying
from ..ops.shape.inplace import batched_inplace_error
from ..ops.shape.strided import batched_as_strided, storage_offset_of, strides_of

_reshape = REGISTRY["reshape"]
_stack = REGISTRY["stack"]
_select = REGISTRY["select"]
_matmul = REGISTRY["matmul"]
_expand = REGISTRY["expand"]
_transpose = REGISTRY["transpose"]

DYNAMIC_MASK_ERROR = ("vmap: We do not support batching operators that can support dynamic shape. Attempting to "
                      "batch over indexing with a boolean mask.")
NONZERO_ERROR = ("vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap over "
                 "aten::nonzero. Please file an issue at https://github.com/pytorch/pytorch/issues if you need this "
                 "feature.")
ITEM_ERROR = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() "
              "on a Tensor, please try to rewrite what you're doing with other operations. If error is occurring "
              "somewhere inside PyTorch internals, please file a bug report.")
CONTROL_FLOW_ERROR = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
                      "We don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .")
BACKWARD_ERROR = ("backward() called inside a functorch transform. This is not supported, please use functorch.grad "
                  "or functorch.vjp instead or call backward() outside of functorch transforms.")
SAME_RANDOMNESS_ERROR = ("Vmap does not currently support same randomness with a batched tensor input. Please file "
                         "an issue with functorch")


class _Metadata(np.ndarray):
    """The ``data`` of a BatchedTensor: an array of the logical shape, dtype and strides whose values cannot be
    read (the op table's composites read shapes and dtypes from ``.data``; values only through ops)."""

    def __array_ufunc__(self, *args, **kwargs):
        raise Unbatchable("a BatchedTensor's values were read by numpy")

    def __array_function__(self, func, types, args, kwargs):
        if func in _METADATA_FUNCTIONS:
            return super().__array_function__(func, types, args, kwargs)
        if func is np.argwhere:
            raise RuntimeError(NONZERO_ERROR)
        if func in (np.nonzero, np.flatnonzero):
            raise RuntimeError(DYNAMIC_MASK_ERROR)
        raise Unbatchable(f"a BatchedTensor's values were read by numpy.{func.__name__}")

    #: what an in-place op checks: a batched result cannot be written into an unbatched tensor
    batched = True

    def _refuse(self, *args, **kwargs):
        raise Unbatchable("a BatchedTensor's values were read")

    __getitem__ = __setitem__ = __iter__ = item = tolist = astype = copy = __float__ = __int__ = _refuse
    __bool__ = __index__ = sum = __array__ = fill = _refuse


_METADATA_FUNCTIONS = {np.shape, np.ndim, np.size, np.reshape, np.may_share_memory, np.shares_memory,
                       np.result_type}


def _metadata(phys: np.ndarray, k: int) -> _Metadata:
    """An array of the logical shape, dtype and strides (the composites decide view or copy from them) over its
    own uninitialised buffer, never read: sharing the physical tensor's memory would make it a live alias of
    it for the in-place checks."""
    shape, strides = phys.shape[k:], phys.strides[k:]
    if phys.size == 0 or any(st < 0 for st in strides):
        return np.empty(shape, phys.dtype).view(_Metadata)
    buffer = np.empty(max(phys.nbytes, phys.itemsize), np.uint8)
    return np.lib.stride_tricks.as_strided(buffer.view(phys.dtype)[:1], shape=shape, strides=strides).view(_Metadata)


class BatchedTensor(Tensor):
    """A tensor inside ``vmap``: per-example shape, one physical Tensor with the batch dimensions in front.

    Attributes:
        data: a metadata array of the logical shape (its values cannot be read; see :class:`Unbatchable`).
        _lifted: the levels at which the tensor is only an expansion of a value that the vmap does not map (an
            unmapped input that a transform inside the vmap differentiates, see :func:`lift`, and what is
            computed from such inputs alone): PyTorch holds such a tensor unbatched there, so an in-place op
            writing mapped values into it is refused.
    """

    __slots__ = ("_value", "_levels", "_tracks", "_lifted")

    def __init__(self, value: Tensor, levels: tuple, tracks: bool = False, lifted: frozenset = frozenset()):
        self._value = value
        self._levels = levels
        self._tracks = tracks
        self._lifted = lifted
        self._meta = None  # (a view's metadata: none on the logical tensor; the physical one carries its own)
        self.data = _metadata(value.data, len(levels))
        self._grad = None
        self._retains_grad = False

    @property
    def requires_grad(self) -> bool:
        """Whether a transform inside the vmap differentiates this tensor (autograd outside sees the physical
        tensor only, as in PyTorch)."""
        return self._tracks and self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, value) -> None:
        self._value.requires_grad = value
        self._tracks = bool(value)

    @property
    def grad_fn(self):
        """The physical tensor's node when :attr:`requires_grad`, else None."""
        return self._value.grad_fn if self.requires_grad else None

    @grad_fn.setter
    def grad_fn(self, value) -> None:
        self._value.grad_fn = value

    @property
    def _fw(self):
        raise AttributeError("_fw")

    def detach(self) -> "BatchedTensor":
        """The same batch without history."""
        return BatchedTensor(self._value.detach(), self._levels, lifted=self._lifted)

    def requires_grad_(self, requires_grad: bool = True) -> "BatchedTensor":
        """Make a transform inside the vmap differentiate this tensor (the physical tensor becomes a leaf that
        requires grad)."""
        if requires_grad and self._value.grad_fn is not None:
            self._value = self._value.detach()
        self._value.requires_grad_(requires_grad)
        self._tracks = bool(requires_grad)
        return self

    def item(self):
        """Refused inside vmap (PyTorch's message)."""
        raise RuntimeError(ITEM_ERROR)

    def __bool__(self) -> bool:
        raise RuntimeError(CONTROL_FLOW_ERROR)

    __float__ = __int__ = __index__ = __bool__

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    numpy = tolist

    # in place: the result computed out of place, then written into the physical tensor (recorded there)
    def _write(self, result, refusal: str = "arithmetic") -> "BatchedTensor":
        if type(result) is BatchedTensor and not set(result._levels).difference(result._lifted) <= \
                set(self._levels).difference(self._lifted):
            raise batched_inplace_error(refusal, self.shape, result)
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(result.shape)}")
        src = physical(result, self._levels) if type(result) is BatchedTensor else result
        self._value.copy_(src)
        return self

    def _old(self) -> "BatchedTensor":
        """The values before an in-place op, as a copy (what the op's node saves stays unmodified)."""
        return BatchedTensor(self._value.clone(), self._levels, self._tracks, self._lifted)

    def add_(self, other, alpha=1):
        """In place, as torch.Tensor.add_."""
        return self._write(REGISTRY["add"](self._old(), other, alpha=alpha), "add")

    def sub_(self, other, alpha=1):
        """In place, as torch.Tensor.sub_."""
        return self._write(REGISTRY["sub"](self._old(), other, alpha=alpha))

    def mul_(self, other):
        """In place, as torch.Tensor.mul_."""
        return self._write(REGISTRY["mul"](self._old(), other))

    def div_(self, other, *, rounding_mode=None):
        """In place, as torch.Tensor.div_."""
        return self._write(REGISTRY["div"](self._old(), other, rounding_mode=rounding_mode))

    def pow_(self, exponent):
        """In place, as torch.Tensor.pow_."""
        return self._write(REGISTRY["pow"](self._old(), exponent), "aten::pow_")

    def clamp_(self, min=None, max=None):
        """In place, as torch.Tensor.clamp_."""
        return self._write(REGISTRY["clamp"](self._old(), min, max), "aten::clamp_")

    def fmod_(self, other):
        """In place, as torch.Tensor.fmod_."""
        return self._write(REGISTRY["fmod"](self._old(), other), "aten::fmod_")

    def batched_like(self, fill) -> "BatchedTensor":
        """``fill(shape)`` (a numpy array) over the physical shape, batched as this tensor is: torch.zeros_like and
        torch.ones_like of a BatchedTensor inside vmap."""
        return BatchedTensor(Tensor(fill(self._value.data.shape)), self._levels)

    def zero_(self):
        """In place, as torch.Tensor.zero_."""
        return self._write(REGISTRY["zeros_like"](self))

    def fill_(self, value):
        """In place, as torch.Tensor.fill_."""
        return self._write(REGISTRY["zeros_like"](self) + value)

    def copy_(self, src, non_blocking=False):
        """In place, as torch.Tensor.copy_ (``src`` broadcast to this tensor's shape)."""
        return self._write(REGISTRY["zeros_like"](self) + src if tuple(src.shape) != tuple(self.shape) else src)

    def __repr__(self) -> str:
        text = repr(Tensor(self._value.data))
        if len(self._levels) == 1:
            body = "\n".join("    " + line for line in text.split("\n"))
            return f"BatchedTensor(lvl={self._levels[0]}, bdim=0, value=\n{body}\n)"
        inner = BatchedTensor(self._value, self._levels[:-1])
        body = "\n".join("    " + line for line in repr(inner).split("\n"))
        return f"BatchedTensor(lvl={self._levels[-1]}, bdim={len(self._levels) - 1}, value=\n{body}\n)"

    __str__ = __repr__


# --- levels and physical layouts ------------------------------------------------------------------------------

def levels_of(args):
    """The sorted levels of the BatchedTensors among ``args`` (and inside list/tuple arguments), or None."""
    found = None
    for a in args:
        if type(a) is BatchedTensor:
            found = set(a._levels) if found is None else found | set(a._levels)
        elif type(a) in (list, tuple):
            for e in a:
                if type(e) is BatchedTensor:
                    found = set(e._levels) if found is None else found | set(e._levels)
    return None if found is None else tuple(sorted(found))


def _sizes(args, levels) -> tuple:
    sizes = {}
    for a in args:
        for t in (a if type(a) in (list, tuple) else (a,)):
            if type(t) is BatchedTensor:
                for i, lv in enumerate(t._levels):
                    sizes[lv] = t._value.data.shape[i]
    return tuple(sizes[lv] for lv in levels)


def physical(t: BatchedTensor, levels: tuple, pad: int = 0) -> Tensor:
    """``t``'s physical tensor with a dimension for each of ``levels`` in front (size 1 where ``t`` is not
    batched at a level) and ``pad`` size-1 dimensions before its logical ones."""
    v = t._value
    if t._levels == levels and not pad:
        return v
    shape = v.data.shape
    k = len(t._levels)
    lead = []
    j = 0
    for lv in levels:
        if j < k and t._levels[j] == lv:
            lead.append(shape[j])
            j += 1
        else:
            lead.append(1)
    return _reshape(v, tuple(lead) + (1,) * pad + tuple(shape[k:]))


def _full(t, levels, sizes) -> Tensor:
    """A tensor (batched or not) as a physical tensor batched at every one of ``levels`` (expanded)."""
    if type(t) is BatchedTensor:
        p = physical(t, levels)
    else:
        p = _reshape(t, (1,) * len(levels) + tuple(t.shape))
    target = tuple(sizes) + tuple(p.shape[len(levels):])
    return p if tuple(p.shape) == target else _expand(p, target)


def wrap_result(out, levels, tracks: bool):
    """The physical result of a rule as BatchedTensors (tuples element by element)."""
    if type(out) is tuple:
        return tuple(wrap_result(o, levels, tracks) for o in out)
    if isinstance(out, Tensor):
        return BatchedTensor(out, levels, tracks)
    return out


def _tracks(args) -> bool:
    for a in args:
        for t in (a if type(a) in (list, tuple) else (a,)):
            if type(t) is BatchedTensor and t._tracks:
                return True
    return False


def _call(o, args):
    # (the op's own apply function: a view op's physical result is marked a view of its physical input, so that
    # the storage a batched view shares with its base is the physical one, as in PyTorch)
    return o.apply_fn(o, tuple(args))


# --- the slow fallback ----------------------------------------------------------------------------------------

def fallback(o, args, levels):
    """Run ``o`` once per example on slices of the physical tensors and stack the results (PyTorch's slow
    fallback, aten/src/ATen/functorch/BatchedFallback.cpp); every step is recorded."""
    sizes = _sizes(args, levels)
    n = 1
    for s in sizes:
        n *= s

    def flat(t):
        return _reshape(_full(t, levels, sizes), (n,) + tuple(t.shape))

    flats = [[flat(e) if type(e) is BatchedTensor else None for e in a] if type(a) in (list, tuple) else
             (flat(a) if type(a) is BatchedTensor else None) for a in args]

    def row(i):
        out = []
        for a, f in zip(args, flats):
            if type(a) in (list, tuple):
                out.append(type(a)(_select(fe, 0, i) if fe is not None else e for e, fe in zip(a, f)))
            else:
                out.append(_select(f, 0, i) if f is not None else a)
        return out

    if n == 0:
        zeros = REGISTRY["zeros"]
        with no_grad():
            probe = _call(o, [zeros(tuple(a.shape), dtype=a.dtype) if type(a) is BatchedTensor else a for a in args])
        results = None
    else:
        results = [_call(o, row(i)) for i in range(n)]
        probe = results[0]
    tracks = _tracks(args)

    def gather(j):
        first = probe if j is None else probe[j]
        if not isinstance(first, Tensor):
            return first
        if results is None:
            return BatchedTensor(REGISTRY["zeros"](tuple(sizes) + tuple(first.shape), dtype=first.dtype), levels)
        column = [r if j is None else r[j] for r in results]
        stacked = _stack(column, 0)
        return BatchedTensor(_reshape(stacked, tuple(sizes) + tuple(first.shape)), levels, tracks)

    if type(probe) is tuple:
        return tuple(gather(j) for j in range(len(probe)))
    return gather(None)


# --- rules ----------------------------------------------------------------------------------------------------

def _elementwise(o, args, levels):
    n = o.ninputs
    tensors = [a for a in args[:n] if isinstance(a, Tensor)]
    rank = max(t.ndim for t in args if isinstance(t, (Tensor, np.ndarray)))
    dtype = None
    if o.promote is not None and any(type(t) is BatchedTensor and t.ndim == 0 for t in tensors):
        dims = [t.data.dtype for t in tensors if t.ndim]
        zeros = [t.data.dtype for t in tensors if not t.ndim]
        numbers = [a for a in args[:n] if a is not None and not isinstance(a, Tensor)]
        dtype = dtypes.result_type(dims, zeros, numbers)
    new = list(args)
    for i, a in enumerate(args[:n]):
        if type(a) is BatchedTensor:
            p = physical(a, levels, rank - a.ndim)
            if dtype is not None and p.data.dtype != dtype and a.data.dtype.kind != "b":
                p = p.to(dtypes.from_numpy(dtype))
            new[i] = p
    for i, a in enumerate(args[n:], n):
        if type(a) is BatchedTensor:  # a tensor parameter (masked_fill's mask) broadcasts as an input does
            new[i] = physical(a, levels, rank - a.ndim)
    return wrap_result(_call(o, new), levels, _tracks(args))


#: Ops whose ``dim``-like parameters index the logical dimensions: parameter names, and whether the result has
#: one dimension more than the input (``unsqueeze``: the dim is normalized against rank + 1).
_DIM_PARAMS = {
    "sum": ("dim",), "mean": ("dim",), "prod": ("dim",), "amax": ("dim",), "amin": ("dim",), "all": ("dim",),
    "any": ("dim",), "argmax": ("dim",), "argmin": ("dim",), "logsumexp": ("dim",), "_std": ("dim",),
    "_var": ("dim",), "_vector_norm": ("dim",), "_norm_dim": ("dim",), "cumsum": ("dim",), "cumprod": ("dim",),
    "logcumsumexp": ("dim",), "_cummax": ("dim",), "_cummin": ("dim",), "_softmax": ("dim",),
    "_log_softmax": ("dim",), "glu": ("dim",), "_max_dim": ("dim",), "_min_dim": ("dim",),
    "_median_dim": ("dim",), "_kthvalue": ("dim",), "_sort": ("dim",), "_topk": ("dim",), "flip": ("dims",),
    "select": ("dim",), "_slice": ("dim",), "_unbind": ("dim",), "_split": ("dim",),
    "_split_with_sizes": ("dim",), "squeeze": ("dim",), "unsqueeze": ("dim",), "transpose": ("dim0", "dim1"),
    "_diagonal": ("dim1", "dim2"), "_unfold_dim": ("dimension",), "_reverse_cumsum": ("dim",),
    "diag_embed": ("dim1", "dim2"), "_squeeze_result": ("dim",),
}
_ONE_MORE = {"unsqueeze", "diag_embed"}
#: Reductions for which ``dim=None`` (or ``()``) means every dimension and a tuple of dims is accepted.
_ALL_DIMS = {"sum", "mean", "amax", "amin", "_std", "_var", "_vector_norm", "logsumexp"}


def _dim_rule(o, args, levels):
    if o.ninputs != 1 or type(args[0]) is not BatchedTensor:
        return NotImplemented
    x = args[0]
    r = x.ndim
    k = len(levels)
    rank = r + 1 if o.name in _ONE_MORE else r
    new = list(args)
    new[0] = physical(x, levels)
    names = o.param_names
    for pname in _DIM_PARAMS[o.name]:
        i = 1 + names.index(pname)
        d = args[i] if i < len(args) else None
        if d is None and o.name in ("argmax", "argmin") and r:
            # PyTorch's rule flattens the example: keepdim gives one dimension of size 1
            new[0] = _reshape(new[0], tuple(new[0].shape[:k]) + (-1,))
            new[i] = k
            continue
        if d is None or d == () or d == []:
            if o.name in _ALL_DIMS and r:
                new[i] = tuple(range(k, k + r))
                continue
            if o.name == "squeeze" and d is None:
                d = tuple(j for j, s in enumerate(x.shape) if s == 1)
                if not d:
                    return NotImplemented
            else:
                return NotImplemented
        if rank == 0:
            return NotImplemented
        if isinstance(d, (tuple, list)):
            new[i] = tuple(normalize_dim(e, rank) + k for e in d)
        elif isinstance(d, (int, np.integer)) and not isinstance(d, bool):
            new[i] = normalize_dim(d, rank) + k
        else:
            return NotImplemented
    for a in args[1:]:
        if type(a) is BatchedTensor:
            return NotImplemented
    return wrap_result(_call(o, new), levels, _tracks(args))


def _aligned(args, levels, n):
    """The tensor inputs as physical tensors of equal logical rank (batched ones padded; unbatched ones as
    they are, broadcast by matmul)."""
    out = []
    for a in args[:n]:
        out.append(physical(a, levels) if type(a) is BatchedTensor else a)
    return out


def _matmul_rule(o, args, levels):
    name = o.name
    wanted = {"mm": (2, 2), "bmm": (3, 3), "mv": (2, 1), "dot": (1, 1), "vdot": (1, 1), "outer": (1, 1)}
    if name == "_addmm":
        bias, a, b = args[0], args[1], args[2]
        if not (isinstance(a, Tensor) and isinstance(b, Tensor) and a.ndim == 2 and b.ndim == 2):
            return NotImplemented
        if not isinstance(bias, Tensor) or bias.ndim > 2 or len(args) > 3:
            return NotImplemented
    else:
        a, b = args[0], args[1]
        if not (isinstance(a, Tensor) and isinstance(b, Tensor)) or (a.ndim, b.ndim) != wanted[name]:
            return NotImplemented
        if len(args) > 2:
            return NotImplemented
        if a.data.dtype != b.data.dtype:
            return NotImplemented
    pa = physical(a, levels) if type(a) is BatchedTensor else a
    pb = physical(b, levels) if type(b) is BatchedTensor else b
    unsq, sq = REGISTRY["unsqueeze"], REGISTRY["squeeze"]
    if name == "outer":
        if type(b) is not BatchedTensor:
            pb = _reshape(pb, (1,) * len(levels) + tuple(pb.shape))
        out = unsq(pa, -1) * unsq(pb, -2)
    elif name in ("dot", "vdot"):
        if pa.ndim == 1 and type(a) is not BatchedTensor:
            pa = _reshape(pa, (1,) * len(levels) + tuple(pa.shape))
        if pb.ndim == 1 and type(b) is not BatchedTensor:
            pb = _reshape(pb, (1,) * len(levels) + tuple(pb.shape))
        out = sq(sq(_matmul(unsq(pa, -2), unsq(pb, -1)), -1), -1)
    elif name == "mv":
        out = sq(_matmul(pa, unsq(pb, -1)), -1)
    else:
        out = _matmul(pa, pb)
        if name == "_addmm":
            bias = args[0]
            pbias = physical(bias, levels, 2 - bias.ndim) if type(bias) is BatchedTensor else bias
            out = pbias + out
    return wrap_result(out, levels, _tracks(args))


def _resolve_shape(shape, numel: int):
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1 or any(s < -1 for s in shape):
        return None
    if -1 in shape:
        rest = 1
        for s in shape:
            if s != -1:
                rest *= s
        if rest == 0 or numel % rest:
            return None
        shape = tuple(numel // rest if s == -1 else s for s in shape)
    n = 1
    for s in shape:
        n *= s
    return shape if n == numel else None


def _sizes_arg(args) -> tuple:
    """A shape given as varargs (``x.expand(2, 3)``) or as one sequence (``x.expand((2, 3))``)."""
    rest = args[1:]
    if len(rest) == 1 and isinstance(rest[0], (tuple, list)):
        return tuple(rest[0])
    return tuple(rest)


def _shape_rule(o, args, levels):
    x = args[0]
    if type(x) is not BatchedTensor or any(type(a) is BatchedTensor for a in args[1:]):
        return NotImplemented
    sizes = _sizes(args, levels)
    p = physical(x, levels)
    k = len(levels)
    name = o.name
    if name in ("_reshape", "_unsafe_view", "_reshape_alias"):
        shape = _resolve_shape(args[1], x.numel())
        if shape is None:
            return NotImplemented
        new = [p, tuple(sizes) + shape] + list(args[2:])
    elif name == "permute":
        dims = _sizes_arg(args)
        if len(dims) != x.ndim or any(not isinstance(d, (int, np.integer)) for d in dims):
            return NotImplemented
        dims = tuple(normalize_dim(d, x.ndim) + k for d in dims)
        if len(set(dims)) != len(dims):
            return NotImplemented
        new = [p, tuple(range(k)) + dims]
    elif name == "expand":
        target = _sizes_arg(args)
        extra = len(target) - x.ndim
        if extra < 0 or any(s == -1 for s in target[:extra]):
            return NotImplemented
        if extra:
            p = physical(x, levels, extra)
        new = [p, tuple(sizes) + tuple(s if s != -1 else p.shape[k + i] for i, s in enumerate(target))]
        if len(args) > 2 and not isinstance(args[1], (tuple, list)):
            new = [p] + list(new[1])
    elif name == "repeat":
        reps = _sizes_arg(args)
        if len(reps) < x.ndim:
            return NotImplemented
        p = physical(x, levels, len(reps) - x.ndim)
        new = [p, (1,) * k + reps]
        if len(args) > 2 and not isinstance(args[1], (tuple, list)):
            new = [p] + list(new[1])
    elif name == "t":
        if x.ndim < 2:
            return NotImplemented
        return wrap_result(_transpose(p, k, k + 1), levels, _tracks(args))
    elif name in ("tril", "triu"):
        if x.ndim < 2:
            return NotImplemented
        new = [p] + list(args[1:])
    elif name == "constant_pad_nd":
        if len(args[1]) // 2 > x.ndim or len(args[1]) % 2:
            return NotImplemented
        new = [p] + list(args[1:])
    else:
        return NotImplemented
    return wrap_result(_call(o, new), levels, _tracks(args))


def _masked_select(o, args, levels):
    if type(args[1]) is not BatchedTensor:
        return NotImplemented
    raise RuntimeError("vmap: We do not support batching operators that can output dynamic shape. Attempted to "
                       "vmap over aten::masked_select. Please file an issue at https://github.com/pytorch/pytorch/"
                       "issues if you need this feature.")


#: The ops of the elementwise rule besides those whose forward-mode rule is elementwise.
_ELEMENTWISE = {"add", "sub", "rsub", "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or",
                "bitwise_xor", "floor_divide", "remainder", "where", "_to_copy", "clone", "_clone_contiguous",
                "_alias", "_add_scalar", "_div_scalar", "_mul_scalar", "_fill_scalar", "_zero", "isfinite",
                "isinf", "isnan", "round", "fmod", "div", "atan2", "maximum", "minimum", "clamp", "_xlogy", "pow",
                "_masked_fill", "masked_fill", "_copy", "_fill_tensor", "hardsigmoid", "hardswish", "relu",
                "elu_backward", "gelu_backward", "softplus_backward", "_hardsigmoid_backward", "celu", "elu",
                "hardtanh", "leaky_relu", "silu", "mish", "logsigmoid", "sign"}
#: Ops that draw random numbers (randomness="error" refuses them; "same" gives every example one draw).
_RANDOM = {"bernoulli", "poisson", "_exponential_fill", "_normal_fill", "_normal_float_tensor", "_normal_tensor_float",
           "_normal_tensor_tensor", "_random_fill", "_uniform_fill", "multinomial"}
_RANDOM_FILLS = {"_exponential_fill", "_normal_fill", "_random_fill", "_uniform_fill"}
_MATMUL = {"mm", "bmm", "mv", "dot", "vdot", "outer", "_addmm"}
_SHAPE = {"permute", "_reshape", "_unsafe_view", "_reshape_alias", "expand", "repeat", "t", "tril", "triu",
          "constant_pad_nd"}


def _storage_end(sizes, strides, offset: int):
    """One past the last storage place that a tensor of ``sizes``/``strides`` at ``offset`` reaches, or None when
    it has no element (functorch's maximum_indexable_location)."""
    if any(n == 0 for n in sizes):
        return None
    return offset + 1 + sum((n - 1) * st for n, st in zip(sizes, strides))


def _as_strided_rule(o, args, levels):
    """functorch's as_strided batching rule (aten/src/ATen/functorch/LegacyBatchingRegistrations.cpp): each
    example's view is taken in the physical storage, ``storage_offset`` counted from the physical tensor's
    (each example's offset moves on by its batch strides), after checking that the view of the first example
    stays inside the memory that the example reaches; the batch dims keep their physical strides in front
    (:func:`gradcli.ops.shape.strided.batched_as_strided`, whose gradient is each example's own)."""
    x, size, stride, offset = args
    if type(x) is not BatchedTensor:
        return NotImplemented
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"Tensor.as_strided(size, stride, ...): size and stride must have the same length! Got "
                           f"size {list(size)} and stride {list(stride)}")
    p = physical(x, levels)
    k, shape, pst, base = len(levels), tuple(p.shape), strides_of(p), storage_offset_of(p)
    start = base if offset is None else int(offset)
    for j in reversed(range(k)):  # each level's rule, innermost first, sees the levels inside it as example dims
        sizes, strides = shape[j + 1:k] + size, pst[j + 1:k] + stride
        end, reach = _storage_end(sizes, strides, start), _storage_end(shape[j + 1:], pst[j + 1:], base)
        call = (f"result = tensor.as_strided({list(sizes)}, {list(strides)}, {start}) can access memory outside of "
                "`tensor`. ")
        rewrite = ("This is not supported inside of vmap, please try to rewrite the `as_strided` call as a sequence "
                   "of PyTorch view operations")
        if end is None:
            continue
        if reach is None:
            raise RuntimeError(call + "`tensor` has no storage but the passed-in (size, stride, storage_offset) imply "
                               "a result with some storage. " + rewrite)
        if end > reach or start < base:
            raise RuntimeError(call + f"`result` can access some memory in range [{start}, {end}], but `tensor` can "
                               f"only access some memory in range [{base}, {reach}]. " + rewrite)
    return wrap_result(batched_as_strided(p, k, size, stride, offset), levels, _tracks(args))


def rule_of(o):
    """The batching rule of op ``o`` (a function ``(op, args, levels)`` returning the batched result, or
    NotImplemented to take the fallback), or None: the per-example fallback."""
    name = o.name
    if name in _RANDOM:
        return _random_rule
    if name == "masked_select":
        return _masked_select
    if name == "as_strided":
        return _as_strided_rule
    if name in _DIM_PARAMS:
        return _dim_rule
    if name in _MATMUL:
        return _matmul_rule
    if name in _SHAPE:
        return _shape_rule
    if name in _ELEMENTWISE or o.jvp_kind == "elementwise":
        return _elementwise
    return None


def _random_rule(o, args, levels):
    randomness = _state.vmap_randomness
    mode = randomness[-1] if randomness else "error"
    if mode == "error":
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                           "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
                           "of vmap")
    if mode == "same":
        if o.name not in _RANDOM_FILLS or any(type(a) is BatchedTensor for a in args[1:]):
            raise RuntimeError(SAME_RANDOMNESS_ERROR)
        x = args[0]
        one = _call(o, [REGISTRY["zeros"](tuple(x.shape), dtype=x.dtype)] + list(args[1:]))
        sizes = _sizes(args, levels)
        return BatchedTensor(_expand(_reshape(one, (1,) * len(levels) + tuple(one.shape)),
                                     tuple(sizes) + tuple(one.shape)), levels)
    if o.name == "multinomial":  # rows of each example: drawn example by example
        raise Unbatchable("multinomial with randomness='different'")
    return _elementwise(o, args, levels)


def dispatch(o, args, params=None):
    """Apply op ``o`` to ``args`` of which some may be BatchedTensors: NotImplemented when none is (the caller
    applies the op as usual), else the batched result."""
    levels = levels_of(args)
    if levels is None:
        return NotImplemented
    batched = []
    for a in args:
        for e in (a if type(a) in (list, tuple) else (a,)):
            if type(e) is _Metadata:  # a BatchedTensor's values as an index (a mask): numpy would read them
                if e.dtype == np.bool_:
                    raise RuntimeError(DYNAMIC_MASK_ERROR)
                raise Unbatchable("a BatchedTensor as an index")
            if type(e) is BatchedTensor:
                batched.append(e)
    rule = rule_of(o)
    out = NotImplemented
    if rule is not None:
        out = rule(o, args, levels)
    if out is NotImplemented:
        out = fallback(o, args, levels)
    if any(b._lifted for b in batched):
        _mark_lifted(out, batched)
    return out


def _mark_lifted(out, batched: list) -> None:
    """Mark the levels at which ``out`` is computed from lifted values alone: a level is lifted in the result
    when every argument batched at it is lifted there (see :attr:`BatchedTensor._lifted`)."""
    lifted = None
    for b in batched:
        mine = b._lifted.union(lv for lv in current_levels() if lv not in b._levels)
        lifted = mine if lifted is None else lifted & mine
    if not lifted:
        return
    for t in (out if type(out) is tuple else (out,)):
        if type(t) is BatchedTensor and all(t is not b for b in batched):
            t._lifted = frozenset(lv for lv in t._levels if lv in lifted)


# --- autograd inside vmap ------------------------------------------------------------------------------------

def _row(t, levels, sizes, i):
    """Example ``i`` (a flat index over ``levels``) of a tensor: its physical slice if batched, else itself."""
    if type(t) is not BatchedTensor:
        return t
    full = _full(t, levels, sizes)
    n = 1
    for s in sizes:
        n *= s
    return _select(_reshape(full, (n,) + tuple(t.shape)), 0, i)


def batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """``torch.autograd.grad`` with BatchedTensors among its arguments: NotImplemented when there is none.

    Everything batched at the same levels takes one physical backward; otherwise each example of the batch
    takes its own backward (the graph kept until the last), and the results are stacked.

    Raises:
        RuntimeError: an output that does not require grad (a BatchedTensor requires grad only for a transform
            inside the vmap): PyTorch's "element 0 of tensors does not require grad and does not have a grad_fn".
    """
    gos = [None] * len(outputs) if grad_outputs is None else list(grad_outputs)
    levels = levels_of(list(outputs) + list(inputs) + gos)
    if levels is None:
        return NotImplemented
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    tracks = create_graph
    if all(type(t) is BatchedTensor and t._levels == levels for t in list(outputs) + list(inputs)):
        sizes = _sizes(list(outputs) + gos, levels)
        phys_gos = []
        for o, g in zip(outputs, gos):
            if g is None:
                if o.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                g = REGISTRY["ones_like"](o._value)
            else:
                g = _full(g, levels, sizes)
            phys_gos.append(g)
        res = autograd.grad([o._value for o in outputs], [t._value for t in inputs], phys_gos,
                            retain_graph=retain_graph, create_graph=create_graph, allow_unused=allow_unused,
                            materialize_grads=materialize_grads)
        return tuple(None if g is None else BatchedTensor(g, levels, tracks) for g in res)
    sizes = _sizes(list(outputs) + list(inputs) + gos, levels)
    n = 1
    for s in sizes:
        n *= s
    plain_inputs = [t._value if type(t) is BatchedTensor else t for t in inputs]
    rows = []
    for i in range(n):
        outs_i = [_row(o, levels, sizes, i) for o in outputs]
        gos_i = [None if g is None else _row(g, levels, sizes, i) for g in gos]
        res = autograd.grad(outs_i, plain_inputs, gos_i, retain_graph=True if i < n - 1 else retain_graph,
                            create_graph=create_graph, allow_unused=True, materialize_grads=materialize_grads)
        rows.append([None if g is None else _row(BatchedTensor(g, t._levels), levels, sizes, i)
                     if type(t) is BatchedTensor else g for g, t in zip(res, inputs)])
    result = []
    for j, t in enumerate(inputs):
        col = [r[j] for r in rows]
        if all(c is None for c in col) or n == 0:
            if not allow_unused and n:
                raise RuntimeError(f"The differentiated Tensor at index {j} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            result.append(None)
            continue
        col = [REGISTRY["zeros_like"](plain_inputs[j] if type(t) is not BatchedTensor else col[0])
               if c is None else c for c in col]
        stacked = _stack(col, 0)
        result.append(BatchedTensor(_reshape(stacked, tuple(sizes) + tuple(col[0].shape)), levels, tracks))
    return tuple(result)


def batched_backward(tensors):
    """``backward()`` while a vmap runs: refused, as in PyTorch."""
    raise RuntimeError(BACKWARD_ERROR)


# --- entering and leaving a level -----------------------------------------------------------------------------

def current_levels() -> tuple:
    """The levels of the running vmaps in the active run context, outermost first."""
    return tuple(lv for lv, _ in _state.vmap_levels)


class Level:
    """``with Level(size, randomness) as lv``: a vmap level is running (the op table dispatches BatchedTensors
    to the rules, autograd to :func:`batched_grad`)."""

    def __init__(self, size: int, randomness: str):
        self.size = size
        self.randomness = randomness
        self.level = None

    def __enter__(self):
        # the level stack is the run context's (state.vmap_levels, state.vmap_randomness): immutable tuples,
        # rebuilt on entry and exit, so a context that is swapped out keeps its own
        s = _state
        active = s.vmap_levels
        self.level = (active[-1][0] + 1) if active else 1
        if not active:
            _applying.install_batching(dispatch)
            autograd.install_batched(batched_grad, batched_backward)
        s.vmap_levels = active + ((self.level, self.size),)
        s.vmap_randomness = s.vmap_randomness + (self.randomness,)
        return self.level

    def __exit__(self, *exc):
        s = _state
        s.vmap_levels = s.vmap_levels[:-1]
        s.vmap_randomness = s.vmap_randomness[:-1]
        if not s.vmap_levels:
            _applying.install_batching(None)
            autograd.install_batched(None, None)
        return False


def add_level(x: Tensor, dim: int, level: int) -> BatchedTensor:
    """``x`` batched at ``level`` along its (logical) dimension ``dim``."""
    if type(x) is BatchedTensor:
        k = len(x._levels)
        p = x._value
        if dim + k != k:
            p = REGISTRY["movedim"](p, dim + k, k)
        return BatchedTensor(p, x._levels + (level,), x._tracks)
    p = x if dim == 0 else REGISTRY["movedim"](x, dim, 0)
    return BatchedTensor(p, (level,))


def remove_level(x, level: int, size: int, out_dim: int):
    """The result of a vmap level: ``x``'s batch dimension of ``level`` moved into its logical dimension
    ``out_dim`` (an unbatched ``x`` is expanded along it, as PyTorch does)."""
    nd = x.ndim + 1
    if not -nd <= out_dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {out_dim})")
    d = out_dim % nd
    if type(x) is not BatchedTensor or level not in x._levels:
        y = REGISTRY["unsqueeze"](x, d)
        shape = list(y.shape)
        shape[d] = size
        return _expand(y, tuple(shape))
    i = x._levels.index(level)
    rest = x._levels[:i] + x._levels[i + 1:]
    p = x._value
    target = len(rest) + d
    if i != target:
        p = REGISTRY["movedim"](p, i, target)
    return BatchedTensor(p, rest, x._tracks) if rest else p


def lift(x: Tensor) -> Tensor:
    """``x`` batched at every running level (expanded where it is not): what a transform inside a vmap
    differentiates, so that each example gets its own gradient."""
    active = _state.vmap_levels
    if not active:
        return x
    levels = current_levels()
    if type(x) is BatchedTensor and x._levels == levels:
        return x
    sizes = tuple(s for _, s in active)
    if type(x) is BatchedTensor:
        lifted = x._lifted.union(lv for lv in levels if lv not in x._levels)
        return BatchedTensor(_full(x, levels, sizes), levels, x._tracks, frozenset(lifted))
    return BatchedTensor(_full(x, levels, sizes), levels, False, frozenset(levels))


def is_batched(x) -> bool:
    """Whether ``x`` is a BatchedTensor."""
    return type(x) is BatchedTensor


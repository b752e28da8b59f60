"""Strides and storage: ``Tensor.stride``, ``storage_offset``, ``element_size``, ``dim_order``, ``resize_``,
``untyped_storage`` (read-only), ``torch.is_storage``, ``torch.TypedStorage``, ``torch.empty_permuted``, the
memory formats (``torch.contiguous_format``, ``channels_last``, ...), and the strided view ``torch.as_strided``
with its scatter ``torch.as_strided_scatter``.

A tensor's ``data`` is a numpy array whose layout follows PyTorch's (:mod:`.views`), so the strides PyTorch
reports are numpy's, in elements instead of bytes, with PyTorch's conventions where the two differ:

* a tensor that is not a view (``Tensor._base`` is None) was allocated by its op: row-major (contiguous)
  strides, or the dense permutation its array has (TensorIterator keeps an input's layout, numpy's ufuncs too),
  never the zero or negative strides numpy gives its own broadcast or flipped views (PyTorch copies there);
* a view has its array's strides, but a size-1 dimension with stride 0 (numpy's ``expand_dims``, or an
  expand to size 1) gets PyTorch's ``size * stride`` of the dimension after it (1 for the last), as
  ``unsqueeze`` and ``expand`` compute it (aten/src/ATen/ExpandUtils.cpp, inferExpandGeometry).

The storage of a view is its base's memory: ``storage_offset`` is the distance, in elements, from the base's
first element to the view's. ``as_strided`` reads that memory through the sizes, strides and offset it is
given, after checking, as PyTorch does, that every element it reaches lies inside the storage (so it never
reads outside the tensor's own memory); ``untyped_storage()`` copies the storage's bytes into a read-only
object.

Derivatives (tools/autograd/derivatives.yaml, FunctionsManual.cpp's as_strided_backward and
as_strided_scatter's formulas): a gradient flows between the places of the storage that the input and the
output occupy. Both directions are the one linear op ``_storage_remap`` (add into zeros of the storage at one
set of places, read at another), whose own derivative is the same op with the places swapped, so every
gradient can be differentiated again.
"""

from __future__ import annotations

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor, mark_view, to_tensor
from ..core.declare import composite, op, tensor_method
from ..elementwise.comparison import where
from .inplace import bump
from .views import _shape_arg

from .layout import (CHANNELS_LAST, CONTIGUOUS_FORMAT, MEMORY_FORMATS, MemoryFormat,  # noqa: F401
                     allocate, format_order)


# ------------------------------------------------------------------------------------------------ strides
def _contiguous(shape) -> list:
    out, acc = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        out[d] = acc
        acc *= max(shape[d], 1)
    return out


def _dense_order(shape, strides) -> list | None:
    """The dimensions of size > 1 from outermost to innermost when ``strides`` (elements) lay them out densely
    without gaps or overlap, else None."""
    dims = sorted((d for d in range(len(shape)) if shape[d] > 1), key=lambda d: -strides[d])
    acc = 1
    for d in reversed(dims):
        if strides[d] != acc:
            return None
        acc *= shape[d]
    return dims


def _fix_unit_dims(shape, strides) -> list:
    # PyTorch's stride of a size-1 dimension made by unsqueeze or expand: size * stride of the next dimension
    out = list(strides)
    for d in range(len(shape) - 1, -1, -1):
        if shape[d] == 1 and out[d] == 0:
            out[d] = out[d + 1] * max(shape[d + 1], 1) if d + 1 < len(shape) else 1
    return out


def _base_of(t: Tensor):
    # a view's base; None for a tensor that is not a view, and for the per-example tensor of a vmap (whose
    # example is laid out afresh, row-major)
    return t._base if type(t) is Tensor else None


def _logical(t: Tensor) -> bool:
    return type(t) is not Tensor  # vmap's BatchedTensor: its data holds the per-example shape, not values


def strides_of(t: Tensor) -> tuple:
    """The strides PyTorch reports for ``t``, in elements (see the module docstring)."""
    a = t.data
    if a.ndim == 0:
        return ()
    if _logical(t):
        return tuple(_contiguous(a.shape))
    item = a.itemsize
    raw = [s // item for s in a.strides]
    if _base_of(t) is not None:
        return tuple(_fix_unit_dims(a.shape, raw))
    if a.flags.c_contiguous or a.size == 0 or min(raw) < 0 or _dense_order(a.shape, raw) is None:
        return tuple(_contiguous(a.shape))
    return tuple(_fix_unit_dims(a.shape, [s if n > 1 else 0 for s, n in zip(raw, a.shape)]))


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def storage_offset_of(t: Tensor) -> int:
    """Where ``t``'s first element is in its storage, in elements: 0 for a tensor that is not a view, the
    distance from its base's first element for a view."""
    base = _base_of(t)
    if base is None or t.data.size == 0:
        return 0
    return (_address(t.data) - _address(base.data)) // t.data.itemsize


def _storage(t: Tensor) -> tuple:
    """``(flat, dense)``: the storage of ``t`` as a 1-d array (element k at storage position k) and whether it
    is the tensor's own memory (a view of it) rather than a copy. The storage is the base's memory when the
    base's array lays its elements out densely with the strides :func:`strides_of` reports; otherwise (an array
    numpy broadcast or flipped, which PyTorch would have copied) a row-major copy of the base."""
    if _logical(t):
        return np.zeros(t.data.size, dtype=t.data.dtype), False
    base = _base_of(t) if _base_of(t) is not None else t
    b = base.data
    if b.size == 0:
        return np.zeros(0, dtype=b.dtype), False
    raw = [s // b.itemsize for s in b.strides]
    if min(raw, default=0) >= 0 and _dense_order(b.shape, raw) is not None:
        order = sorted(range(b.ndim), key=lambda d: (-raw[d] if b.shape[d] > 1 else 0))
        flat = np.transpose(b, [d for d in order if b.shape[d] > 1] +
                            [d for d in order if b.shape[d] <= 1]).reshape(-1)
        if flat.size == b.size and np.shares_memory(flat, b):
            return flat, True
    return np.ascontiguousarray(b).reshape(-1), False


def positions(shape, strides, offset: int) -> np.ndarray:
    """The storage position of each element of a tensor with ``shape``, ``strides`` and ``offset`` (int64,
    of ``shape``)."""
    pos = np.full(tuple(shape), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, strides)):
        view = [1] * len(shape)
        view[d] = n
        pos = pos + (np.arange(n, dtype=np.int64) * s).reshape(view)
    return pos


@tensor_method("stride")
def stride(self, dim=None):
    """The strides of ``self``, in elements: a tuple, or the stride of ``dim``. Matches torch.Tensor.stride
    (see the module docstring for how they are found).

    Raises:
        IndexError: for a dim out of range (PyTorch's message).
    """
    s = strides_of(self)
    if dim is None:
        return s
    n = len(s)
    if not (-max(n, 1) <= dim < max(n, 1)):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, {max(n, 1) - 1}], "
                         f"but got {dim})")
    return s[dim] if n else 1


@tensor_method("storage_offset")
def storage_offset(self):
    """The position of ``self``'s first element in its storage, in elements (0 unless ``self`` is a view).
    Matches torch.Tensor.storage_offset."""
    return storage_offset_of(self)


@tensor_method("element_size")
def element_size(self):
    """The size of one element in bytes (4 for float32, 1 for uint8 and bool). Matches
    torch.Tensor.element_size."""
    return int(self.data.itemsize)


def _is_format_contiguous(t: Tensor, fmt) -> bool:
    # Tensor.is_contiguous(memory_format=fmt): the dims in the format's physical order, size-1 dims skipped
    if fmt is CONTIGUOUS_FORMAT:
        order = list(range(t.data.ndim))
    else:
        try:
            order = list(format_order(fmt, t.data.ndim) or ())
        except RuntimeError:
            return False
    s, shape = strides_of(t), t.data.shape
    expected = 1
    for d in reversed(order):
        if shape[d] == 1:
            continue
        if s[d] != expected:
            return False
        expected *= shape[d]
    return True


def _swap_order(shape, strides, a: int, b: int) -> int:
    # torch._prims_common.compute_elementwise_output_logical_to_physical_perm's should_swap, for one tensor
    def ge(x, y):
        return y == 0 or (x != 0 and (x >= y or x % y == 0))

    sa, sb = strides[a], strides[b]
    if sa == 0 or sb == 0:
        return 0
    if sa == sb:
        return 0 if ge(shape[b], shape[a]) else 1
    if ge(sb, sa):
        return -1
    return 1 if ge(sa, sb) else 0


def _physical_perm(t: Tensor, check: bool) -> tuple:
    shape, s, nd = t.data.shape, strides_of(t), t.data.ndim
    if nd <= 1:
        return list(range(nd)), False
    contiguous, channels_last = _is_format_contiguous(t, CONTIGUOUS_FORMAT), _is_format_contiguous(t, CHANNELS_LAST)
    if contiguous and not channels_last:
        return list(range(nd)), False
    if channels_last and not contiguous:
        return [0, *range(2, nd), 1], False
    perm = list(reversed(range(nd)))
    for i in range(1, nd):
        d1 = i
        for d0 in reversed(range(i)):
            c = _swap_order(shape, s, perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    ambiguous = check and any(_swap_order(shape, s, perm[i], perm[i + 1]) != -1 for i in range(nd - 1))
    return list(reversed(perm)), ambiguous


@tensor_method("dim_order")
def dim_order(self, *, ambiguity_check=False):
    """The dimensions from outermost to innermost in memory, a tuple (``(0, 2, 3, 1)`` for channels_last).
    With ``ambiguity_check=True`` a tensor whose order is not unique (a size-1 dimension, equal strides) is
    refused; with a list of memory formats, such a tensor passes when it is contiguous in exactly one of them.
    Matches torch.Tensor.dim_order (torch/_tensor.py, torch._prims_common's logical-to-physical permutation).

    Raises:
        TypeError: for an ambiguity_check that is neither a bool nor a list of memory formats; RuntimeError for
            an ambiguous order (PyTorch's messages).
    """
    if not isinstance(ambiguity_check, bool):
        if not isinstance(ambiguity_check, list) or not all(isinstance(f, MemoryFormat) for f in ambiguity_check):
            raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    check = ambiguity_check if isinstance(ambiguity_check, bool) else True
    shape, s = self.data.shape, strides_of(self)
    multiple = any(a == b for a, b in zip(s, s[1:])) or any(n == 1 for n in shape)
    if check and multiple and sum(_is_format_contiguous(self, f) for f in formats) != 1:
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of the given "
                           "memory formats.")
    perm, ambiguous = _physical_perm(self, bool(ambiguity_check))
    if ambiguous:
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(perm)


# ------------------------------------------------------------------------------------------------ storage
class UntypedStorage:
    """A read-only copy of a tensor's storage as bytes (``x.untyped_storage()``): its size in bytes, the bytes
    as a list, and PyTorch's printed form. Holds a copy, so nothing a program does with it reaches the tensor's
    memory; gradcli's storages are not writable."""

    program_attributes = ("nbytes", "size", "tolist", "element_size", "dtype")
    __slots__ = ("_bytes",)

    def __init__(self, data: bytes):
        self._bytes = bytes(data)

    def nbytes(self) -> int:
        """The size in bytes."""
        return len(self._bytes)

    size = nbytes

    def element_size(self) -> int:
        """1: an untyped storage counts bytes."""
        return 1

    @property
    def dtype(self):
        """torch.uint8, as PyTorch's untyped storage reports."""
        return dtypes.uint8

    def tolist(self) -> list:
        """The bytes, as ints."""
        return list(self._bytes)

    def __len__(self) -> int:
        return len(self._bytes)

    def __getitem__(self, i):
        return self._bytes[i]

    def __repr__(self) -> str:
        lines = [f" {b}" for b in self._bytes]
        return "\n".join(lines + [f"[torch.storage.UntypedStorage(device=cpu) of size {len(self._bytes)}]"])


class TypedStorage:
    """``torch.TypedStorage(size, dtype=...)`` (zeros: PyTorch's are uninitialized) or the typed view of a
    storage: the elements as a list, their dtype, PyTorch's printed form. Read-only, as :class:`UntypedStorage`.

    Raises:
        TypeError: for a size that is not an int (PyTorch's message).
    """

    program_attributes = ("size", "tolist", "dtype", "element_size", "nbytes")
    __slots__ = ("_values",)

    def __init__(self, size=0, *, dtype=None, device=None):
        if isinstance(size, bool) or not isinstance(size, (int, list, tuple)):
            raise TypeError(f"TypedStorage(): argument 'size' must be int, not {type(size).__name__}")
        d = dtypes.as_dtype(dtype).np if dtype is not None else dtypes.get_default_dtype().np
        values = np.zeros(size, dtype=d) if isinstance(size, int) else np.asarray(size, dtype=d)
        values.flags.writeable = False
        self._values = values

    @property
    def dtype(self):
        """The element type."""
        return dtypes.from_numpy(self._values.dtype)

    def size(self) -> int:
        """The number of elements."""
        return int(self._values.size)

    def element_size(self) -> int:
        """The bytes of one element."""
        return int(self._values.itemsize)

    def nbytes(self) -> int:
        """The size in bytes."""
        return int(self._values.nbytes)

    def tolist(self) -> list:
        """The elements."""
        return self._values.tolist()

    def __len__(self) -> int:
        return int(self._values.size)

    def __repr__(self) -> str:
        lines = [f" {v}" for v in self._values.tolist()]
        return "\n".join(lines + [f"[torch.storage.TypedStorage(dtype=torch.{self.dtype.name}, device=cpu) of size "
                                  f"{self._values.size}]"])


@tensor_method("untyped_storage")
def untyped_storage(self):
    """A read-only copy of the bytes of ``self``'s storage (its base's memory for a view). Matches
    torch.Tensor.untyped_storage, except that gradcli's storage cannot be written."""
    flat, _ = _storage(self)
    return UntypedStorage(flat.tobytes())


@composite("is_storage", kind="function")
def is_storage(obj):
    """Whether ``obj`` is a storage (``x.untyped_storage()``, a ``torch.TypedStorage``). Matches
    torch.is_storage."""
    return isinstance(obj, (UntypedStorage, TypedStorage))


@composite("TypedStorage", kind="creation")
def typed_storage(size=0, *, dtype=None, device=None):
    """``torch.TypedStorage(size, dtype=None)``: a storage of ``size`` elements (see :class:`TypedStorage`).
    Matches torch.TypedStorage (deprecated in PyTorch, still documented)."""
    return TypedStorage(size, dtype=dtype, device=device)


# --------------------------------------------------------------------------------------- empty_permuted
@composite("empty_permuted", kind="creation")
def empty_permuted(size, physical_layout, *, dtype=None, requires_grad=False, **kw):
    """An uninitialised tensor (zeros in gradcli) of shape ``size`` whose dimensions lie in memory in the order
    ``physical_layout`` (outermost first): ``empty_permuted((2, 3, 5, 7), (0, 2, 3, 1))`` is channels_last, with
    strides ``(105, 1, 21, 3)``. Matches torch.empty_permuted.

    Raises:
        RuntimeError: for a layout that is not a permutation of the dimensions (PyTorch's message).
    """
    shape = _shape_arg((size,), "size")
    layout = tuple(int(d) for d in physical_layout)
    if len(layout) != len(shape):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; "
                           f"i.e. len(size) = {len(shape)} is not equal to len(physical_layout) = {len(layout)}")
    if sorted(layout) != list(range(len(shape))):
        raise RuntimeError("Duplicate dim not allowed")
    kw.pop("device", None)
    kw.pop("layout", None)
    kw.pop("pin_memory", None)
    if kw:
        raise TypeError(f"empty_permuted() got an unexpected keyword argument '{next(iter(kw))}'")
    d = dtypes.as_dtype(dtype).np if dtype is not None else dtypes.get_default_dtype().np
    out = Tensor(allocate(shape, d, layout))
    return out.requires_grad_(True) if requires_grad else out


# ---------------------------------------------------------------------------------------------- resize_
@tensor_method("resize_")
def resize_(self, *sizes, memory_format=None):
    """Give ``self`` the shape ``sizes`` in place, with row-major strides, keeping its storage: the elements are
    the storage's from ``self``'s offset on; a storage too small grows (the new elements are zeros in gradcli,
    uninitialized in PyTorch). Returns self. Matches torch.Tensor.resize_.

    Raises:
        RuntimeError: for a tensor that requires grad, or a negative size (PyTorch's messages).
    """
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = _shape_arg(sizes, "size")
    if any(n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    numel = int(np.prod(shape, dtype=np.int64))
    flat, own = _storage(self)
    off = storage_offset_of(self)
    if own and off + numel <= flat.size:
        new = flat[off:off + numel].reshape(shape)
    else:
        grown = np.zeros(max(off + numel, flat.size), dtype=flat.dtype)
        grown[:flat.size] = flat
        new = grown[off:off + numel].reshape(shape)
    order = format_order(memory_format, len(shape))
    if order is not None:
        new = np.ascontiguousarray(np.transpose(new.reshape([shape[d] for d in order]), np.argsort(order)))
    self.data = new
    bump(new)
    return self


# -------------------------------------------------------------------------------------------- as_strided
class _Geometry(tuple):
    """The ``size`` argument of the as_strided ops, carrying where the input and the output lie in the storage
    (their ``positions`` arrays, the storage's length) and, for as_strided, the storage itself: the derivative
    rules name only ``size``, ``stride`` and ``storage_offset``, as PyTorch's formulas do (their saved values
    are PyTorch's ``_saved_size``, ``_saved_stride``, ``_saved_storage_offset``), and read the geometry from it."""

    def __new__(cls, size, pin, pout, n, offset, source=None, flat=None):
        g = super().__new__(cls, size)
        g.pin, g.pout, g.n, g.offset, g.source, g.flat = pin, pout, n, offset, source, flat
        return g


#: --explain's text of AsStridedBackward0 (one text per backward class: the in-place views' history has it too)
_AS_STRIDED_FORMULA = "the gradient placed in zeros at the view's elements"


@op("_storage_remap", grad_fn="AsStridedBackward0", promote=None, jvp="linear",
    note="the gradient moved back between the same storage places",
    formula=_AS_STRIDED_FORMULA)
def _storage_remap(grad, src, dst, n):
    """Zeros of the storage's length ``n`` with ``grad`` added at the storage places ``src`` (int64, of
    ``grad``'s shape), read at the places ``dst``: how a gradient moves between two strided views of one
    storage (as_strided_backward)."""
    s = np.zeros(n, dtype=grad.dtype)
    np.add.at(s, src.reshape(-1), np.asarray(grad).reshape(-1))
    return s[dst]


@_storage_remap.defvjp
def _(grad, src, dst, n):
    return _storage_remap(grad, dst, src, n)


@op("as_strided", grad_fn="AsStridedBackward0", promote=None, public=False, jvp="linear",
    note="d/dinput = the gradient added at the storage places the output reads, taken at the input's",
    formula=_AS_STRIDED_FORMULA)
def _as_strided(input, size, stride, storage_offset):
    """The view of ``input``'s storage with ``size``, ``stride`` and ``storage_offset`` (the geometry and the
    storage ride on ``size``, see :class:`_Geometry`); an array other than the one the geometry was made for
    (a tangent, one sample of a vmap) is read through the same places, zeros outside it."""
    if input is size.source and size.flat is not None:
        return _strided_view(size.flat, tuple(size), stride, size.offset)
    return _storage_remap.forward(input, size.pin, size.pout, size.n)


@_as_strided.defvjp
def _(grad, size, stride, storage_offset):
    return _storage_remap(grad, size.pout, size.pin, size.n)


def _overlaps(size, stride) -> bool:
    dims = sorted((d for d in range(len(size)) if size[d] > 1), key=lambda d: stride[d])
    extent = 1
    for d in dims:
        if stride[d] < extent:
            return True
        extent = stride[d] * (size[d] - 1) + extent
    return False


def _strided_view(flat: np.ndarray, size: tuple, stride: tuple, offset: int) -> np.ndarray:
    """The elements of the 1-d ``flat`` at ``offset + sum(i_k * stride_k)``, as a numpy view (read-only where
    elements overlap, as PyTorch refuses to write those); the caller has checked the bounds."""
    item = flat.itemsize
    if 0 in size:  # no element to read: PyTorch's sizes and strides, on no memory
        return np.ndarray(size, dtype=flat.dtype, buffer=flat if flat.size else np.zeros(1, dtype=flat.dtype),
                          strides=[s * item for s in stride])
    # an ndarray over flat's buffer (so that its .base chain reaches the owner, as the version counter and
    # the views' bookkeeping need); numpy checks once more that every element lies inside that buffer
    out = np.ndarray(size, dtype=flat.dtype, buffer=flat, offset=offset * item, strides=[s * item for s in stride])
    if _overlaps(size, stride):
        out.flags.writeable = False
    return out


def _check_geometry(size, stride, offset: int, storage_len: int, item: int) -> None:
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    if 0 in size:
        return
    need = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if need > storage_len:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {item} requiring a storage size of {need * item} are out of bounds for storage "
                           f"of size {storage_len * item}")


def _int_list(name: str, value) -> tuple:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    try:
        return _shape_arg((tuple(value),), name)
    except TypeError:
        raise TypeError(f"as_strided(): argument '{name}' must be tuple of ints, not {type(value).__name__}") \
            from None


@composite("as_strided", grad_fn="AsStridedBackward0", method=True, note=_as_strided.note)
def as_strided(input, size, stride, storage_offset=None):
    """The view of ``input``'s storage whose element ``[i0, i1, ...]`` is the storage's element ``storage_offset
    + i0 * stride[0] + i1 * stride[1] + ...`` (``storage_offset`` defaults to ``input``'s own). Matches
    torch.as_strided (grad_fn AsStridedBackward0: an element of the input that several output elements read
    gets the sum of their gradients; storage elements outside the input get none).

    Raises:
        RuntimeError: for negative strides or sizes, a length mismatch, or elements out of the storage's
            bounds (PyTorch's messages).
    """
    x = to_tensor(input)
    size, stride = _int_list("size", size), _int_list("stride", stride)
    if getattr(x.data, "batched", False):  # inside vmap: the batching rule takes the view in the physical storage
        return _as_strided(x, size, stride, storage_offset)
    offset = storage_offset_of(x) if storage_offset is None else int(storage_offset)
    flat, own = _storage(x)
    _check_geometry(size, stride, offset, flat.size, x.data.itemsize)
    pin = positions(x.data.shape, strides_of(x), storage_offset_of(x))
    pout = positions(size, stride, offset)
    geometry = _Geometry(size, pin, pout, flat.size, offset, x.data, flat)
    out = _as_strided(x, geometry, stride, storage_offset)  # (saved as given: None when not, as PyTorch)
    if own:
        mark_view(out, x)
    return out


def batched_as_strided(p: Tensor, k: int, size: tuple, stride: tuple, storage_offset) -> Tensor:
    """vmap's as_strided on the physical tensor ``p`` whose ``k`` leading dims are the batch dims: the view of
    ``p``'s storage with the batch dims' sizes and strides in front of ``size``/``stride`` at ``storage_offset``
    (``p``'s own when None), as functorch's batching rule takes it (an example may read memory beyond its own
    elements). The gradient is each example's own (functorch's as_strided_backward runs per example, on the
    example's sizes and strides): it reaches the example's elements that its view reads, no other example's.

    Raises:
        RuntimeError: as :func:`as_strided` (the caller checks the examples' bounds first, with vmap's messages).
    """
    shape, pst, base = tuple(p.data.shape), strides_of(p), storage_offset_of(p)
    start = base if storage_offset is None else int(storage_offset)
    full_size, full_stride = shape[:k] + tuple(size), tuple(pst[:k]) + tuple(stride)
    flat, own = _storage(p)
    _check_geometry(full_size, full_stride, start, flat.size, p.data.itemsize)
    pin = positions(shape[k:], pst[k:], 0)
    pout = positions(size, stride, start - base)
    block = 1 + max(int(pin.max(initial=-1)), int(pout.max(initial=-1)))
    examples = int(np.prod(shape[:k], dtype=np.int64))
    first = np.arange(examples, dtype=np.int64).reshape(shape[:k]) * block
    pin = first.reshape(shape[:k] + (1,) * pin.ndim) + pin
    pout = first.reshape(shape[:k] + (1,) * pout.ndim) + pout
    geometry = _Geometry(full_size, pin, pout, examples * block, start, p.data, flat)
    out = _as_strided(p, geometry, full_stride, storage_offset)
    if own:
        mark_view(out, p)
    return out


# ------------------------------------------------------------------------------------ as_strided_scatter
@op("as_strided_scatter", grad_fn="AsStridedScatterBackward0", inputs=2, promote=None, public=False,
    jvp="linear", note="d/dinput = the gradient where src was not written; d/dsrc = the gradient at src's places",
    formula="input: grad with zeros where src was written; src: grad read at the strided places")
def _as_strided_scatter(input, src, size, stride, storage_offset):
    """A copy of ``input`` (its layout kept) with ``src`` written at the storage places of the strided view
    ``size``/``stride``/``storage_offset`` of the copy."""
    s = np.zeros(size.n, dtype=input.dtype)
    s[size.pin.reshape(-1)] = np.asarray(input).reshape(-1)
    s[size.pout.reshape(-1)] = np.asarray(src, dtype=input.dtype).reshape(-1)
    out = np.empty_like(input)
    out[...] = s[size.pin]
    return out


@_as_strided_scatter.defvjp
def _(grad, size, stride, storage_offset, needs_input_grad):
    # derivatives.yaml as_strided_scatter: self: as_strided_scatter(grad, zeros_like(src), ...);
    # src: grad.contiguous().as_strided(size, stride, storage_offset)
    gi = gs = None
    if needs_input_grad[0]:
        gi = where(np.isin(size.pin, size.pout), 0.0, grad)
    if needs_input_grad[1]:
        gs = _storage_remap(grad, size.pin, size.pout, size.n)
    return gi, gs


@composite("as_strided_scatter", grad_fn="AsStridedScatterBackward0", method=True, note=_as_strided_scatter.note)
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` with ``src`` embedded at the elements of its strided view ``size``/``stride``/
    ``storage_offset`` of ``input``'s storage (a view's places count from its base's first element, as
    as_strided's; ``storage_offset`` defaults to the input's), the copy keeping ``input``'s strides. Matches
    torch.as_strided_scatter (grad_fn AsStridedScatterBackward0).

    Raises:
        RuntimeError: as :func:`as_strided`, and for a ``src`` of another shape than ``size`` (PyTorch's
            message).
    """
    x, s = to_tensor(input), to_tensor(src)
    size, stride = _int_list("size", size), _int_list("stride", stride)
    flat, own = _storage(x)
    layout, start = strides_of(x), storage_offset_of(x)
    if own and not _overlaps(x.data.shape, layout):
        # ATen's clone_preserve_strides: a copy of the whole storage, the input's strides and offset kept, so the
        # strided places (storage_offset defaults to the input's) are counted in the input's storage
        n = flat.size
    else:  # a tensor with internal overlap (expanded) is cloned afresh, row-major, as ATen does; one whose array
        # numpy laid out (PyTorch would have copied it) in its own layout (vmap's examples: Unbatchable, per example)
        overlap = not _logical(x) and _overlaps(x.data.shape, layout)
        layout, start = tuple(_contiguous(x.data.shape)) if overlap else strides_of(Tensor(np.empty_like(x.data))), 0
        n = 1 + sum((k - 1) * st for k, st in zip(x.data.shape, layout)) if x.data.size else 0
    offset = start if storage_offset is None else int(storage_offset)
    _check_geometry(size, stride, offset, n, x.data.itemsize)
    if tuple(s.data.shape) != tuple(size):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(s.data.shape)}, slice size = {list(size)}")
    geometry = _Geometry(size, positions(x.data.shape, layout, start), positions(size, stride, offset), n, offset)
    return _as_strided_scatter(x, s, geometry, stride, storage_offset)

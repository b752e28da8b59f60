"""The Tensor: a numpy array plus what autograd needs (requires_grad, grad, grad_fn).

The layer under the engine: the Tensor's data and metadata, its version counter (:mod:`gradcli.engine.versions`),
dimension indices (:func:`normalize_dim`) and the conversion of Python data (:func:`to_tensor`). What needs the
layers above is installed on :class:`Tensor` by them, so that nothing here imports upward: ``backward`` by the
engine (:mod:`gradcli.engine.autograd`), operators (``+ - * / @ ** -x``, comparisons) and op methods (``x.sum()``,
``x.pow(2)``, ``x.T``) by the op table (:mod:`gradcli.ops`), where each op is declared once with its derivative.

Semantics and messages follow ``torch.Tensor`` (PyTorch 2.13).
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from . import dtypes, versions
from .context import state as _state
from .printing import format_tensor

_NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)
REQUIRES_GRAD_DTYPE_ERROR = "Only Tensors of floating point and complex dtype can require gradients"
# requires_grad_() words it differently in PyTorch 2.13.
REQUIRES_GRAD_INPLACE_ERROR = "only Tensors of floating point dtype can require gradients"


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as PyTorch's ``torch.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, key):
        """A size, or a Size for a slice (``x.shape[1:]`` is a ``torch.Size``, as PyTorch's)."""
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    def numel(self) -> int:
        """The product of the sizes (1 for ``()``)."""
        n = 1
        for s in self:
            n *= s
        return n


class Tensor:
    """An n-dimensional array that records the operations applied to it for reverse-mode differentiation.

    Create tensors with :func:`gradcli.engine.tensor` and the creation functions (``ones``, ``randn``, ...); the
    constructor is internal and takes a numpy array as is.

    Attributes:
        data: the values, a numpy ndarray (0-d for scalars) of a supported dtype (see :mod:`gradcli.engine.dtypes`).
        requires_grad: whether operations on this tensor are recorded.
        grad_fn: the graph :class:`~gradcli.engine.graph.Node` that produced this tensor, None for leaves.
        grad: the accumulated gradient (a Tensor of the same shape and dtype) of a leaf, or None.
        output_nr: which output of ``grad_fn`` this tensor is (0 unless grad_fn has several outputs).
    """

    # _output_nr is set only on outputs of a node with several (see output_nr), so other tensors pay nothing
    # _fw, the forward-AD tangent as ``(level, tangent)``, is set only on dual tensors (gradcli.api.forward_ad)
    # _meta: None, or the tensor's rare marks (a :class:`TensorMeta`: inference tensor, nn.Parameter, hooks,
    # view and base of views); one slot for all of them, since each slot costs every tensor made
    __slots__ = ("data", "requires_grad", "grad_fn", "_grad", "_retains_grad", "_output_nr", "_fw", "_meta",
                 "__weakref__")
    # Make numpy defer to Tensor's reflected operators in ``ndarray * Tensor``.
    __array_priority__ = 1000
    __hash__ = object.__hash__

    def __init__(self, data: np.ndarray, requires_grad: bool = False, grad_fn=None):
        self.data = data
        self.requires_grad = requires_grad
        self.grad_fn = grad_fn
        self._grad = None
        self._retains_grad = False
        # None, or INFERENCE_META inside torch.inference_mode() (the run context's mark for the tensors it makes)
        self._meta = _state.new_tensor_meta

    # ----------------------------------------------------------------------------------------------- metadata
    @property
    def shape(self) -> Size:
        """The shape as a :class:`Size`."""
        return Size(self.data.shape)

    def size(self, dim: int | None = None):
        """The shape, or the size of one dimension (negative ``dim`` counts from the end), as torch.Tensor.size."""
        if dim is None:
            return Size(self.data.shape)
        return self.data.shape[normalize_dim(dim, self.data.ndim)]

    @property
    def dtype(self) -> dtypes.DType:
        """The element type, e.g. ``torch.float32``."""
        return dtypes.from_numpy(self.data.dtype)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self.data.ndim

    def dim(self) -> int:
        """The number of dimensions, as torch.Tensor.dim."""
        return self.data.ndim

    def numel(self) -> int:
        """The number of elements."""
        return int(self.data.size)

    @property
    def output_nr(self) -> int:
        """Which output of ``grad_fn`` this tensor is: ``b.output_nr == 1`` for ``a, b = x.split(2)``, 0 for
        a tensor made by a node with one output and for leaves (torch.Tensor.output_nr)."""
        if self.grad_fn is None:  # a leaf, or detached by detach_()
            return 0
        try:
            return self._output_nr
        except AttributeError:
            return 0

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded operation (grad_fn is None), as in PyTorch."""
        return self.grad_fn is None

    def is_floating_point(self) -> bool:
        """True for float16/32/64 tensors."""
        return self.data.dtype.kind == "f"

    # -------------------------------------------------------------------------------------------- autograd
    @property
    def grad(self):
        """The gradient accumulated by backward: a Tensor for leaves (and for non-leaves after
        ``retain_grad()``), otherwise None. Reading it on a non-leaf that does not retain its gradient warns
        as PyTorch does (UserWarning) and returns None."""
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(_NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value.data.shape != self.data.shape:
                raise RuntimeError("assigned grad has data of a different size")
            if value.data.dtype != self.data.dtype:
                raise RuntimeError("assigned grad has data of a different type")
        self._grad = value

    def detach(self) -> "Tensor":
        """A new leaf sharing this tensor's data, with requires_grad False (torch.Tensor.detach)."""
        return Tensor(self.data)

    def detach_(self) -> "Tensor":
        """Make this tensor a leaf that does not require grad, in place (torch.Tensor.detach_)."""
        self.grad_fn = None
        self.requires_grad = False
        return self

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set requires_grad in place and return self.

        Raises:
            RuntimeError: on a non-leaf asked to stop requiring grad, or a non-float tensor asked to
                require grad, with PyTorch's messages.
        """
        requires_grad = bool(requires_grad)
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use "
                               "a computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        if requires_grad and self.data.dtype.kind != "f":
            raise RuntimeError(REQUIRES_GRAD_INPLACE_ERROR)
        m = self._meta
        if not requires_grad and m is not None and m.no_grad_view == 1 and m.base.requires_grad:
            requires_grad = True  # a view made in no_grad mode requires grad while its base does (PyTorch's)
        self.requires_grad = requires_grad
        return self

    def retain_grad(self) -> None:
        """Make backward fill ``.grad`` of this non-leaf tensor too (no-op on leaves).

        Raises:
            RuntimeError: on a tensor that does not require grad (PyTorch's message).
        """
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is not None and not self._retains_grad:
            self._retains_grad = True
            fn = self.grad_fn
            # an output of a node with several keeps its weak reference on its own edge (graph.OutputEdge)
            (fn.outputs[self._output_nr] if hasattr(fn, "outputs") else fn).retained = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf tensor after ``retain_grad()``."""
        return self._retains_grad

    @property
    def _version(self) -> int:
        """How many times this tensor's memory (shared with its views) was modified in place: PyTorch's version
        counter (:mod:`gradcli.engine.versions`; the in-place methods ``add_``, ``zero_``, ... are in
        :mod:`gradcli.ops.shape.inplace`)."""
        return versions.version(self.data)

    @property
    def _base(self):
        """The tensor this one is a view of (``x[0]._base is x``; the view of a view has the first one's base),
        or None for a tensor that is not a view (torch.Tensor._base). Views share their base's memory and
        version counter; an in-place operation on either rewrites the history of both (see
        :mod:`gradcli.ops.shape.inplace`)."""
        m = self._meta
        return None if m is None else m.base

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (torch.Tensor._is_view)."""
        return self._base is not None

    # ---------------------------------------------------------------------------------------- conversions
    def item(self):
        """The value of a one-element tensor as a Python number.

        Raises:
            RuntimeError: for tensors with more than one element (PyTorch's message).
        """
        if self.data.size != 1:
            raise RuntimeError(f"a Tensor with {self.data.size} elements cannot be converted to Scalar")
        return self.data.reshape(()).item()

    def tolist(self):
        """The values as (nested) Python lists, or a number for a 0-d tensor."""
        return self.data.tolist()

    def numpy(self) -> np.ndarray:
        """The data as a numpy array (shared, not copied).

        Raises:
            RuntimeError: if the tensor requires grad (PyTorch's message).
        """
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        return self.data

    def __bool__(self) -> bool:
        if self.data.size != 1:
            how = "no values" if self.data.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {how} is ambiguous")
        return bool(self.data.reshape(()))

    def __float__(self) -> float:
        if self.data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(self.data.reshape(()))

    def __int__(self) -> int:
        if self.data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self.data.reshape(()))

    def __index__(self) -> int:
        if self.data.dtype.kind not in "iub" or self.data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.data.reshape(()))

    def __len__(self) -> int:
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.data.shape[0]

    def __iter__(self):
        if self.data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.data.shape[0]))

    def __repr__(self) -> str:
        fn = self.grad_fn
        if is_parameter(self):  # torch.nn.Parameter's repr
            return "Parameter containing:\n" + format_tensor(self.data, requires_grad=self.requires_grad and fn is None,
                                                             grad_fn=None, default_dtype=dtypes.get_default_dtype().np)
        return format_tensor(self.data, requires_grad=self.requires_grad and fn is None,
                             grad_fn=None if fn is None else fn.name(),
                             default_dtype=dtypes.get_default_dtype().np, tangent=self._tangent_text())

    def _repr_prefix(self) -> str:
        """What PyTorch prints before a torch.nn.Parameter's values."""
        return "Parameter containing:\n" if is_parameter(self) else ""

    def _tangent_text(self):
        """How a dual tensor's printed form shows its forward-AD tangent (``tangent=...``, torch/_tensor_str.py's
        ``f"tangent={tangent}"``): the tangent's repr, or for a 0-d tangent its value as a Python float (Tensor
        formatting a 0-d tensor as its item); None for a tensor that is not dual."""
        tangent = fw_tangent(self)
        if tangent is None:
            return None
        if tangent.data.ndim == 0:
            return str(tangent.data.item())
        return repr(tangent)

    __str__ = __repr__


# ------------------------------------------------------------------------------------------- rare marks
class TensorMeta:
    """What few tensors carry, kept off the Tensor's own slots so that making a tensor costs one store for all
    of it (``Tensor._meta``: None for most tensors).

    Attributes:
        inference: made inside ``torch.inference_mode()`` (Tensor.is_inference).
        parameter: a ``torch.nn.Parameter``: gradcli's Parameter is a Tensor with this mark (not a subclass:
            the op table dispatches on ``type(t) is Tensor``), so that it prints as PyTorch's ``Parameter
            containing:`` and ``isinstance(t, nn.Parameter)`` holds (gradcli.api.nn.parameter).
        hooks: a leaf's ``register_hook`` hooks (handle id -> hook), or None (:mod:`gradcli.engine.hooks`).
        post_hooks: a leaf's ``register_post_accumulate_grad_hook`` hooks, or None.
        base: for a view, the tensor it is a view of (``Tensor._base``), else None (see :func:`mark_view`).
        views: for a tensor that views were made of, weak references to them, else None.
        grad_dtype: a leaf's ``Tensor.grad_dtype`` when set (a DType, or None for any dtype); False when not set
            (the leaf's own dtype) (:mod:`gradcli.api.autograd_graph`).
        no_grad_view: 0; 1 for a view made under ``torch.no_grad()`` (PyTorch's CreationMeta::NO_GRAD_MODE: it
            requires grad when its base does, yet is a leaf that gradients do not reach), 2 for a view of such
            a view made with grad mode on (see :func:`mark_view`).
    """

    __slots__ = ("inference", "parameter", "hooks", "post_hooks", "base", "views", "grad_dtype", "no_grad_view")

    def __init__(self, inference: bool = False):
        self.inference = inference
        self.parameter = False
        self.hooks = None
        self.post_hooks = None
        self.base = None
        self.views = None
        self.grad_dtype = False
        self.no_grad_view = 0


#: The mark a run context gives every tensor made inside ``torch.inference_mode()`` (shared, never changed: a
#: tensor that needs its own marks gets a copy, see :func:`own_meta`).
INFERENCE_META = TensorMeta(inference=True)


def own_meta(t: Tensor) -> TensorMeta:
    """``t``'s own :class:`TensorMeta`, made (or copied from the shared inference mark) on first use."""
    m = t._meta
    if m is None or m is INFERENCE_META:
        m = t._meta = TensorMeta(m is INFERENCE_META)
    return m


def mark_parameter(t: Tensor) -> Tensor:
    """Mark ``t`` as a ``torch.nn.Parameter`` (for as long as it lives); returns it."""
    own_meta(t).parameter = True
    return t


def is_parameter(t) -> bool:
    """Whether ``t`` is a tensor marked by :func:`mark_parameter`."""
    if not isinstance(t, Tensor):
        return False
    m = t._meta
    return m is not None and m.parameter


# ------------------------------------------------------------------------------------------------- views
def mark_view(out: Tensor, of: Tensor) -> None:
    """Record that ``out``, the result of a view op (view, reshape, t, transpose, select, slice, unsqueeze,
    ...) applied to ``of``, is a view: when its array shares ``of``'s memory, ``out._base`` becomes ``of``'s base
    (``of`` itself unless it is a view) and the base keeps a weak reference to it (``TensorMeta.views``), so that an
    in-place operation on the base or on any of its views can rewrite the history of all of them, as PyTorch's
    views do. A result that is a copy (numpy's reshape of a non-contiguous array) is not a view."""
    d = out.data
    if out is of or (d.base is None and d is not of.data):  # a copy (or the input itself)
        return
    m = of._meta
    base = of if m is None or m.base is None else m.base
    if versions.root(d) is not versions.root(base.data):
        return
    om = own_meta(out)
    om.base = base
    if not _state.grad_enabled:
        # PyTorch's views made in no_grad mode: the view requires grad as its base does, but no edge of the graph
        # leads to it (its grad_fn is None, gradients stop there) and an in-place op on it in grad mode is refused
        # (torch/csrc/autograd/variable.cpp, CreationMeta::NO_GRAD_MODE)
        if not _state.inference:
            om.no_grad_view = 1
            out.requires_grad = base.requires_grad
    elif m is not None and m.no_grad_view:  # the creation meta propagates to views of the view
        om.no_grad_view = 2
    bm = own_meta(base)
    views = bm.views
    if views is None:
        views = bm.views = []
    n = len(views)
    if n >= 16 and not n & (n - 1):  # at 16, 32, 64, ... entries: forget the views that died
        views[:] = [r for r in views if r() is not None]
    views.append(weakref.ref(out))


def live_views(base: Tensor) -> list:
    """The views of ``base`` that are still alive (see :func:`mark_view`), oldest first."""
    m = base._meta
    if m is None or not m.views:
        return []
    return [v for v in (r() for r in m.views) if v is not None]


def fw_tangent(t: Tensor):
    """The forward-AD tangent of ``t`` at the active level (:mod:`gradcli.api.forward_ad`), or None: none was set,
    or it belongs to a level that has been exited."""
    try:
        level, tangent = t._fw
    except AttributeError:
        return None
    return tangent if level == _state.fw_level else None


def to_tensor(value, dtype=None) -> Tensor:
    """Convert a Tensor, number, nested list/tuple of numbers or numpy array to a Tensor.

    Numbers and lists get ``torch.tensor``'s dtype inference (bool, int64, or the default float); ``dtype``
    overrides it. A Tensor is returned as is (cast if ``dtype`` differs).

    Raises:
        TypeError: for values that are not numeric.
        ValueError: for ragged nested lists.
    """
    if isinstance(value, Tensor):  # (a subclass too: vmap's BatchedTensor)
        if dtype is not None and value.data.dtype != dtype:
            return Tensor(value.data.astype(dtype))
        return value
    if isinstance(value, np.ndarray):
        dtypes.from_numpy(value.dtype)
        return Tensor(value if dtype is None else value.astype(dtype))
    if dtype is None:
        dtype = dtypes.infer_dtype(value)
    if isinstance(value, (list, tuple)) and _contains_tensor(value):
        value = _unwrap(value)
    try:
        arr = np.array(value, dtype=dtype)
    except ValueError as e:
        if "inhomogeneous" in str(e) or "sequence" in str(e):
            raise ValueError("expected sequence of equal length lists (ragged nested list)") from None
        raise
    return Tensor(arr)


def _contains_tensor(seq) -> bool:
    return any(isinstance(v, Tensor) or (isinstance(v, (list, tuple)) and _contains_tensor(v)) for v in seq)


def _unwrap(seq):
    out = []
    for v in seq:
        if isinstance(v, Tensor):
            out.append(v.data.tolist())
        elif isinstance(v, (list, tuple)):
            out.append(_unwrap(v))
        else:
            out.append(v)
    return out


def normalize_dim(dim: int, ndim: int) -> int:
    """A dimension index in ``[-ndim, ndim)`` made non-negative (0-d tensors accept -1 and 0).

    Raises:
        IndexError: PyTorch's "Dimension out of range (expected to be in range of [a, b], but got d)".
    """
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, not {type(dim).__name__}")
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def normalize_dims(dim, ndim: int):
    """``dim`` (None, an int, or a sequence of ints) as a sorted tuple of non-negative axes (None: all).

    Raises:
        IndexError: for a dimension out of range; RuntimeError for a repeated dimension (PyTorch's texts).
    """
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        axes = tuple(normalize_dim(d, ndim) for d in dim)
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
        return tuple(a for a in axes if a < ndim) if ndim else ()
    d = normalize_dim(dim, ndim)
    return (d,) if ndim else ()

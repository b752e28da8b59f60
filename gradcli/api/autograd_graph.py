"""More of ``torch.autograd`` and ``torch.autograd.graph``: ``enforce_grad_layout_policy``,
``allow_mutation_on_saved_tensors`` and ``Tensor.grad_dtype`` (``register_multi_grad_hook`` is in
:mod:`gradcli.engine.hooks`).

* ``enforce_grad_layout_policy(enable)`` (torch/autograd/grad_mode.py): by default a leaf's first gradient is
  laid out as the leaf is (PyTorch's gradient layout contract for dense leaves); with ``False`` it keeps the
  layout it arrives with. The flag belongs to the run context (``grad_layout_relaxed``).
* ``allow_mutation_on_saved_tensors()`` (torch/autograd/graph.py): inside it, a tensor saved for backward may be
  modified in place afterwards; backward uses the values it had when it was saved. PyTorch clones a saved
  tensor just before it is mutated; gradcli keeps a copy of each value saved inside the block (saved-tensors
  hooks, :mod:`gradcli.ops.core.saved_hooks`) and uses it when the tensor was modified since.
* ``Tensor.grad_dtype``: the dtype a leaf's gradient is accumulated in (its own dtype unless set; None keeps
  the gradient's dtype). Kept on the leaf (``TensorMeta.grad_dtype``), read by the accumulation of gradients
  (:mod:`gradcli.engine.graph`).
"""

from __future__ import annotations

import functools

from ..engine import dtypes
from ..engine.context import state as _state
from ..engine.tensor import Tensor, own_meta
from ..ops.core.saved_hooks import saved_tensors_hooks


class enforce_grad_layout_policy:
    """Context manager (and decorator) that says whether a leaf's first gradient is laid out as the leaf
    (``True``, the default: PyTorch's gradient layout contract) or keeps the layout the gradient arrives with
    (``False``). Matches torch.autograd.enforce_grad_layout_policy; the flag is the run context's, restored at
    the end of the block."""

    def __init__(self, enable: bool = True):
        self.prev = not _state.grad_layout_relaxed
        _state.grad_layout_relaxed = not enable
        self.mode = bool(enable)

    def __enter__(self):
        return None

    def __exit__(self, *exc) -> bool:
        _state.grad_layout_relaxed = not self.prev
        return False

    def __call__(self, fn):
        _state.grad_layout_relaxed = not self.prev  # as a decorator it changes nothing until the function runs
        mode = self.mode

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with enforce_grad_layout_policy(mode):
                return fn(*args, **kwargs)

        return wrapped


_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' contextin which the graph was "
            "originally recorded.")


class _Saved:
    """What the pack hook keeps of one saved tensor: the tensor, its version then, and a copy of its values."""

    __slots__ = ("tensor", "version", "copy")

    def __init__(self, t: Tensor):
        self.tensor = t
        self.version = t._version
        self.copy = Tensor(t.data.copy())


class allow_mutation_on_saved_tensors(saved_tensors_hooks):
    """``with torch.autograd.graph.allow_mutation_on_saved_tensors():``: tensors saved for backward inside the
    block may be modified in place afterwards (``b.sin_()`` after ``b ** 2`` saved ``b``), and backward, inside
    the block, uses the values they had when saved. Matches torch.autograd.graph.allow_mutation_on_saved_tensors
    (its context object prints as PyTorch's).

    Raises:
        RuntimeError: when nested in another such block; AssertionError: for a backward through the graph
            after the block ended (PyTorch's messages).
    """

    program_attributes = ()

    def __init__(self):
        self.active = False

        def pack(t):
            return _Saved(t)

        def unpack(saved):
            if not self.active:
                raise AssertionError(_OUTSIDE)
            return saved.tensor if saved.tensor._version == saved.version else saved.copy

        pack.allow_mutation = True
        super().__init__(pack, unpack)

    def __enter__(self):
        if any(getattr(p, "allow_mutation", False) for p, _ in _state.saved_hooks):
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        super().__enter__()
        self.active = True
        return self

    def __exit__(self, *exc) -> bool:
        self.active = False
        return super().__exit__(*exc)

    def __repr__(self) -> str:
        return f"<torch.autograd.graph._AllowMutationOnSavedContext object at {id(self):#x}>"


# ------------------------------------------------------------------------------------------- grad_dtype
def _leaf_check(t: Tensor, what: str) -> None:
    if t.grad_fn is not None:
        raise RuntimeError(f"grad_dtype can only be {what} on leaf tensors.")


def _get_grad_dtype(self):
    """``t.grad_dtype``: the dtype gradients of this leaf are accumulated in: its own dtype unless set, None
    when set to None (any dtype). Matches torch.Tensor.grad_dtype.

    Raises:
        RuntimeError: for a tensor that is not a leaf (PyTorch's message).
    """
    _leaf_check(self, "accessed")
    m = self._meta
    if m is None or m.grad_dtype is False:
        return self.dtype
    return m.grad_dtype


def _set_grad_dtype(self, value) -> None:
    _leaf_check(self, "set")
    own_meta(self).grad_dtype = None if value is None else dtypes.as_dtype(value)


Tensor.grad_dtype = property(_get_grad_dtype, _set_grad_dtype, doc=_get_grad_dtype.__doc__)

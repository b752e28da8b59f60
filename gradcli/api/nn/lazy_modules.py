"""The lazy modules of ``torch.nn``: ``LazyLinear``, ``LazyConv1d``/``2d``/``3d`` and ``LazyBatchNorm1d``/``2d``/
``3d``, as PyTorch 2.13's ``torch/nn/modules/lazy.py`` and the classes built on it.

A lazy module is its non-lazy class (``cls_to_become``) built with the inferred size 0 and its sized parameters
and buffers left uninitialised (they print as ``<UninitializedParameter>`` / ``<UninitializedBuffer>``). The first
call reads the size from the input (``in_features`` from its last dimension, ``in_channels`` / ``num_features``
from its channel dimension), gives each uninitialised parameter and buffer its shape in the same registration
slot, runs the class's ``reset_parameters`` (drawing from the seeded generator in PyTorch's order) and the module
becomes an instance of ``cls_to_become`` (``print`` then shows ``Linear(in_features=3, ...)``), as PyTorch does.
An optimizer must be made after that first call (PyTorch recommends the same dry run): gradcli's uninitialised
parameters are placeholders, not tensors.
"""

from __future__ import annotations

from ...engine import dtypes
from .conv import Conv1d, Conv2d
from .extra import BatchNorm2d
from .layers import BatchNorm1d, Linear, _empty
from .module import Module
from .pool3d import BatchNorm3d, Conv3d
from .parameter import Parameter


class UninitializedParameter:
    """A lazy module's parameter before its first call (PyTorch's ``torch.nn.parameter.UninitializedParameter``;
    it prints as PyTorch's ``<UninitializedParameter>``)."""

    grad = None
    requires_grad = True

    def __init__(self):
        # the numpy dtype the materialised tensor will have (the default dtype; Module.double() and
        # the other casts change it, as they change the dtype of PyTorch's uninitialised parameters)
        self.np_dtype = dtypes.get_default_dtype().np

    def detach(self):
        """Itself (``state_dict()`` holds it as PyTorch's does, printed ``<UninitializedParameter>``)."""
        return self

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedBuffer(UninitializedParameter):
    """A lazy module's buffer before its first call (``<UninitializedBuffer>``)."""

    requires_grad = False


class _LazyMixin:
    """The first-call inference shared by the lazy classes; each defines ``cls_to_become``, ``_lazy_names``
    (the parameters and buffers left uninitialised) and ``_infer(input)`` (sets the inferred size and returns each
    name's shape)."""

    cls_to_become: type = Module
    _lazy_names: tuple = ()

    def _make_lazy(self) -> None:
        d = self.__dict__
        for name in self._lazy_names:
            for store, kind in (("_parameters", UninitializedParameter), ("_buffers", UninitializedBuffer)):
                if d[store].get(name) is not None:
                    d[store][name] = kind()

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer is still uninitialised (before the first call)."""
        d = self.__dict__
        return any(isinstance(v, UninitializedParameter) for store in ("_parameters", "_buffers")
                   for v in d[store].values())

    def reset_parameters(self) -> None:
        """Nothing until the parameters have shapes (PyTorch's lazy ``reset_parameters``); then the class's."""
        if "_lazy_building" in self.__dict__ or self.has_uninitialized_params():
            return
        self.cls_to_become.reset_parameters(self)

    def initialize_parameters(self, input) -> None:
        """Give the uninitialised parameters and buffers their shapes from ``input``, draw them
        (``reset_parameters``) and turn the module into ``cls_to_become``."""
        if not self.has_uninitialized_params():
            return
        shapes = self._infer(input)
        d = self.__dict__
        for store, kind in (("_parameters", Parameter), ("_buffers", None)):
            for name, value in d[store].items():
                if isinstance(value, UninitializedParameter):
                    fresh = _empty(*shapes[name])
                    fresh.data = fresh.data.astype(value.np_dtype)
                    d[store][name] = kind(fresh) if kind is not None else fresh
        object.__setattr__(self, "__class__", self.cls_to_become)
        self.reset_parameters()

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            self.initialize_parameters(args[0] if args else next(iter(kwargs.values())))
        return Module.__call__(self, *args, **kwargs)


def _build(self, cls, *args, **kwargs) -> None:
    """Run ``cls.__init__`` without drawing (the sizes are 0), then leave the lazy names uninitialised."""
    self.__dict__["_lazy_building"] = True
    cls.__init__(self, *args, **kwargs)
    del self.__dict__["_lazy_building"]
    self._make_lazy()


class LazyLinear(_LazyMixin, Linear):
    """``nn.LazyLinear(out_features, bias=True)``: a Linear whose ``in_features`` is the last dimension of its
    first input."""

    cls_to_become = Linear
    _lazy_names = ("weight", "bias")
    program_attributes = Linear.program_attributes + ("has_uninitialized_params", "initialize_parameters")

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        _build(self, Linear, 0, out_features, bias)

    def _infer(self, input) -> dict:
        self.in_features = int(input.shape[-1])
        return {"weight": (self.out_features, self.in_features), "bias": (self.out_features,)}


class _LazyConv(_LazyMixin):
    _lazy_names = ("weight", "bias")
    program_attributes = Conv1d.program_attributes + ("has_uninitialized_params", "initialize_parameters")

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        _build(self, self.cls_to_become, 0, out_channels, kernel_size, stride, padding, dilation, groups, bias,
               padding_mode)

    def _infer(self, input) -> dict:
        """``in_channels`` from the input's channel dimension (PyTorch's ``_get_in_channels``).

        Raises:
            RuntimeError: an input of the wrong rank (PyTorch's message).
        """
        nd = self._nd
        if input.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {tuple(input.shape)}")
        self.in_channels = int(input.shape[1] if input.dim() == nd + 2 else input.shape[0])
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        return {"weight": (self.out_channels, self.in_channels // self.groups, *self.kernel_size),
                "bias": (self.out_channels,)}


class LazyConv1d(_LazyConv, Conv1d):
    """``nn.LazyConv1d(out_channels, kernel_size, ...)``: a Conv1d whose ``in_channels`` is read from its first
    input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """``nn.LazyConv2d(out_channels, kernel_size, ...)``: a Conv2d whose ``in_channels`` is read from its first
    input."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """``nn.LazyConv3d(out_channels, kernel_size, ...)``: a Conv3d whose ``in_channels`` is read from its first
    input."""

    cls_to_become = Conv3d


class _LazyNorm(_LazyMixin):
    _lazy_names = ("weight", "bias", "running_mean", "running_var")
    program_attributes = BatchNorm1d.program_attributes + ("has_uninitialized_params", "initialize_parameters")

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        _build(self, self.cls_to_become, 0, eps, momentum, affine, track_running_stats)

    def _infer(self, input) -> dict:
        self.num_features = int(input.shape[1])
        return dict.fromkeys(self._lazy_names, (self.num_features,))


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    """``nn.LazyBatchNorm1d(eps=1e-5, momentum=0.1, affine=True, track_running_stats=True)``: a BatchNorm1d whose
    ``num_features`` is the channel dimension of its first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    """``nn.LazyBatchNorm2d(...)``: a BatchNorm2d whose ``num_features`` is read from its first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    """``nn.LazyBatchNorm3d(...)``: a BatchNorm3d whose ``num_features`` is read from its first input."""

    cls_to_become = BatchNorm3d


CLASSES = {c.__name__: c for c in (LazyLinear, LazyConv1d, LazyConv2d, LazyConv3d, LazyBatchNorm1d, LazyBatchNorm2d,
                                   LazyBatchNorm3d)}
__all__ = sorted(CLASSES)

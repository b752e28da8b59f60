"""More built-in modules of ``torch.nn``: normalization layers (LayerNorm, GroupNorm,
InstanceNorm1d/2d, BatchNorm2d), activations (LogSigmoid, Softsign, CELU, Mish, Hardswish, Hardsigmoid,
Hardtanh, GLU, Softmin), Bilinear, ModuleDict, KLDivLoss, CosineSimilarity and PairwiseDistance.

Each is PyTorch 2.13's class: the same constructor arguments and defaults, the parameters initialised as its
``reset_parameters`` draws them (from the PyTorch-exact generator, in the same order), ``forward`` through the
op table (gradcli/ops/nn/functional.py and the others), and ``extra_repr`` as ``print(model)`` shows it.
"""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict

from ...ops import REGISTRY as _OPS
from . import init
from .layers import BatchNorm1d, _activation, _empty, _Loss
from .module import Module
from .parameter import Parameter


def _op(name):
    return _OPS[name]


def _shape_tuple(shape) -> tuple:
    return (shape,) if isinstance(shape, int) else tuple(shape)


# ---------------------------------------------------------------------------------------- normalization
def _affine_parameters(module, affine: bool, bias: bool, shape: tuple) -> None:
    """A normalization module's ``weight`` and ``bias`` Parameters of ``shape`` (None where ``affine`` or ``bias``
    is off, registered as PyTorch registers them), then its ``reset_parameters()``."""
    if affine:
        module.weight = Parameter(_empty(*shape))
        if bias:
            module.bias = Parameter(_empty(*shape))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)
    module.reset_parameters()


def _reset_affine(module) -> None:
    """Weight 1 and bias 0, where the module has them (LayerNorm's and GroupNorm's reset_parameters)."""
    if module.weight is not None:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)


class LayerNorm(Module):
    """``nn.LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=True, bias=True)``: F.layer_norm over the
    trailing ``normalized_shape`` dimensions; ``weight`` ones and ``bias`` zeros of that shape."""

    program_attributes = Module.program_attributes + ("normalized_shape", "eps", "elementwise_affine",
                                                      "reset_parameters")

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, elementwise_affine, bias, self.normalized_shape)

    def reset_parameters(self) -> None:
        """Weight 1, bias 0."""
        _reset_affine(self)

    def forward(self, input):
        return _op("layer_norm")(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """``nn.GroupNorm(num_groups, num_channels, eps=1e-5, affine=True, bias=True)``: F.group_norm; ``weight``
    ones and ``bias`` zeros of shape (num_channels,).

    Raises:
        ValueError: if num_channels is not divisible by num_groups (PyTorch's message).
    """

    program_attributes = Module.program_attributes + ("num_groups", "num_channels", "eps", "affine",
                                                      "reset_parameters")

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, affine, bias, (num_channels,))

    def reset_parameters(self) -> None:
        """Weight 1, bias 0."""
        _reset_affine(self)

    def forward(self, input):
        return _op("group_norm")(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _InstanceNorm(BatchNorm1d):
    """PyTorch's ``_InstanceNorm``: BatchNorm's attributes with affine and track_running_stats off by default;
    forward is F.instance_norm (the input's statistics in training or without running statistics)."""

    _expected_dim = 3

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats)

    def _check_input_dim(self, input) -> None:
        d = self._expected_dim
        if input.dim() not in (d - 1, d):
            raise ValueError(f"expected {d - 1}D or {d}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        d = self._expected_dim
        feature_dim = input.dim() - (d - 1)
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          UserWarning, stacklevel=2)
        if input.dim() == d - 1:  # unbatched: a batch of one
            return _op("squeeze")(self._apply_norm(_op("unsqueeze")(input, 0)), 0)
        return self._apply_norm(input)

    def _apply_norm(self, input):
        return _op("instance_norm")(input, self.running_mean, self.running_var, self.weight, self.bias,
                                    self.training or not self.track_running_stats, self.momentum
                                    if self.momentum is not None else 0.0, self.eps)


class InstanceNorm1d(_InstanceNorm):
    """``nn.InstanceNorm1d(num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False)``:
    F.instance_norm of an (N, C, L) or unbatched (C, L) input."""

    _expected_dim = 3


class InstanceNorm2d(_InstanceNorm):
    """``nn.InstanceNorm2d(num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False)``:
    F.instance_norm of an (N, C, H, W) or unbatched (C, H, W) input."""

    _expected_dim = 4


class BatchNorm2d(BatchNorm1d):
    """``nn.BatchNorm2d(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True)``: batch
    normalization of an (N, C, H, W) input (F.batch_norm over N, H, W)."""

    def _check_input_dim(self, input) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


# ------------------------------------------------------------------------------------------- activations
def _plain(name: str, op: str, doc: str):
    class Activation(Module):
        __doc__ = doc

        def forward(self, input):
            return _op(op)(input)

    Activation.__name__ = Activation.__qualname__ = name
    return Activation


LogSigmoid = _plain("LogSigmoid", "logsigmoid", "``nn.LogSigmoid()``: log(sigmoid(x)) (F.logsigmoid).")
Softsign = _plain("Softsign", "softsign", "``nn.Softsign()``: x / (1 + |x|) (F.softsign).")
Mish = _activation("Mish", "mish", "``nn.Mish(inplace=False)``: x * tanh(softplus(x)) (F.mish).",
                   pass_inplace=True)
Hardswish = _activation("Hardswish", "hardswish", "``nn.Hardswish(inplace=False)``: x * relu6(x + 3) / 6.",
                        pass_inplace=True)
Hardsigmoid = _activation("Hardsigmoid", "hardsigmoid", "``nn.Hardsigmoid(inplace=False)``: relu6(x + 3) / 6.",
                          pass_inplace=True)


class CELU(Module):
    """``nn.CELU(alpha=1.0, inplace=False)``: F.celu."""

    program_attributes = Module.program_attributes + ("alpha", "inplace")

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return _op("celu")(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Hardtanh(Module):
    """``nn.Hardtanh(min_val=-1.0, max_val=1.0, inplace=False)``: F.hardtanh.

    Raises:
        AssertionError: if ``max_val <= min_val`` (PyTorch's assertion).
    """

    program_attributes = Module.program_attributes + ("min_val", "max_val", "inplace")

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            min_val = min_value
        if max_value is not None:
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if not self.max_val > self.min_val:
            raise AssertionError()

    def forward(self, input):
        return _op("hardtanh")(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class GLU(Module):
    """``nn.GLU(dim=-1)``: F.glu."""

    program_attributes = Module.program_attributes + ("dim",)

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return _op("glu")(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Module):
    """``nn.Softmin(dim=None)``: F.softmin."""

    program_attributes = Module.program_attributes + ("dim",)

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return _op("softmin")(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


# ------------------------------------------------------------------------------------------- Bilinear
class Bilinear(Module):
    """``nn.Bilinear(in1_features, in2_features, out_features, bias=True)``: F.bilinear; ``weight`` (out, in1,
    in2) and ``bias`` (out,) drawn from U(-1/sqrt(in1), 1/sqrt(in1)), weight first, as PyTorch's
    ``reset_parameters``."""

    program_attributes = Module.program_attributes + ("in1_features", "in2_features", "out_features",
                                                      "reset_parameters")

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in1_features, in2_features))
        if bias:
            self.bias = Parameter(_empty(out_features))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw ``weight`` then ``bias`` from U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return _op("bilinear")(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


# ----------------------------------------------------------------------------------------- ModuleDict
class ModuleDict(Module):
    """``nn.ModuleDict(modules=None)``: an ordered dictionary of registered modules (``d[key]``, ``d[key] =
    m``, ``del d[key]``, ``len``, iteration over the keys, ``in``, keys/values/items, update, pop, clear)."""

    program_attributes = Module.program_attributes + ("keys", "values", "items", "update", "pop", "clear")

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self.__dict__["_modules"][key]._face()

    def __setitem__(self, key, module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key) -> None:
        del self.__dict__["_modules"][key]

    def __len__(self) -> int:
        return len(self.__dict__["_modules"])

    def __iter__(self):
        return iter(list(self.__dict__["_modules"]))

    def __contains__(self, key) -> bool:
        return key in self.__dict__["_modules"]

    def keys(self):
        """The keys, in insertion order."""
        return list(self.__dict__["_modules"].keys())

    def values(self):
        """The modules, in insertion order."""
        return [m._face() for m in self.__dict__["_modules"].values()]

    def items(self):
        """``(key, module)`` pairs, in insertion order."""
        return [(k, m._face()) for k, m in self.__dict__["_modules"].items()]

    def update(self, modules) -> None:
        """Add the modules of a mapping (or of an iterable of ``(key, module)`` pairs), in order.

        Raises:
            TypeError: for an iterable element that is not a pair (PyTorch's messages).
        """
        if isinstance(modules, (dict, OrderedDict, ModuleDict)):
            for k, m in modules.items():
                self[k] = m
            return
        for j, pair in enumerate(modules):
            if not isinstance(pair, (list, tuple)):
                raise TypeError(f"ModuleDict update sequence element #{j} should be Iterable; is "
                                f"{type(pair).__name__}")
            if len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length {len(pair)}; 2 is required")
            self[pair[0]] = pair[1]

    def pop(self, key):
        """Remove and return the module at ``key``."""
        v = self[key]
        del self[key]
        return v

    def clear(self) -> None:
        """Remove every module."""
        self.__dict__["_modules"].clear()


# ----------------------------------------------------------------------------------- losses, distances
class KLDivLoss(_Loss):
    """``nn.KLDivLoss(reduction='mean', log_target=False)``: F.kl_div."""

    program_attributes = _Loss.program_attributes + ("log_target",)

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return _op("kl_div")(input, target, reduction=self.reduction, log_target=self.log_target)


class CosineSimilarity(Module):
    """``nn.CosineSimilarity(dim=1, eps=1e-8)``: F.cosine_similarity."""

    program_attributes = Module.program_attributes + ("dim", "eps")

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return _op("cosine_similarity")(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``nn.PairwiseDistance(p=2.0, eps=1e-6, keepdim=False)``: F.pairwise_distance."""

    program_attributes = Module.program_attributes + ("norm", "eps", "keepdim")

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return _op("pairwise_distance")(x1, x2, self.norm, self.eps, self.keepdim)


#: The classes this module adds to ``torch.nn``, by name.
CLASSES = {c.__name__: c for c in (
    LayerNorm, GroupNorm, InstanceNorm1d, InstanceNorm2d, BatchNorm2d, LogSigmoid, Softsign, CELU, Mish,
    Hardswish, Hardsigmoid, Hardtanh, GLU, Softmin, Bilinear, ModuleDict, KLDivLoss, CosineSimilarity,
    PairwiseDistance)}

__all__ = list(CLASSES)

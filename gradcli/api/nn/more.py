"""More of ``torch.nn``'s built-in modules: the padding layers, the shrinkage and threshold activations, PReLU,
Softmax2d, Unflatten, the pixel and channel shuffles, the fixed-mode upsampling layers, RMSNorm, and the margin
and likelihood losses. Each is PyTorch 2.13's class (constructor arguments and defaults, ``extra_repr`` as
``print(model)`` shows it) over a function of the op table."""

from __future__ import annotations

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor
from ...ops import REGISTRY as _OPS
from .conv import Upsample
from .layers import _Loss
from .module import Module
from .parameter import Parameter


def _op(name):
    return _OPS[name]


def _ntuple(value, n: int) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


# -------------------------------------------------------------------------------------------- padding
def _padding_class(name: str, mode: str, nd: int, zero: bool = False):
    """A padding module of ``nd`` spatial dims: ``nn.<name>(padding)`` (and ``value`` for ConstantPadNd), an
    int or a ``2 * nd``-tuple (left, right, top, bottom, front, back), through F.pad with ``mode``."""
    constant = mode == "constant" and not zero

    class Pad(Module):
        program_attributes = Module.program_attributes + ("padding",) + (("value",) if mode == "constant" else ())

        def __init__(self, padding, value=None):
            super().__init__()
            self.padding = _ntuple(padding, 2 * nd)
            if constant:
                if value is None:
                    raise TypeError(f"{name}.__init__() missing 1 required positional argument: 'value'")
                self.value = value
            elif mode == "constant":
                self.value = 0.0

        def forward(self, input):
            if mode == "constant":
                return _op("pad")(input, self.padding, "constant", self.value)
            return _op("pad")(input, self.padding, mode)

        def extra_repr(self) -> str:
            return f"padding={self.padding}, value={self.value}" if constant else f"{self.padding}"

    Pad.__name__ = Pad.__qualname__ = name
    Pad.__doc__ = f"``nn.{name}(padding{', value' if constant else ''})``: F.pad with mode '{mode}' over the last " \
                  f"{nd} dims. Matches torch.nn.{name}."
    return Pad


_PADS = {f"{prefix}Pad{nd}d": _padding_class(f"{prefix}Pad{nd}d", mode, nd, zero=prefix == "Zero")
         for prefix, mode in (("Constant", "constant"), ("Zero", "constant"), ("Reflection", "reflect"),
                              ("Replication", "replicate"), ("Circular", "circular"))
         for nd in (1, 2, 3)}
globals().update(_PADS)


# ---------------------------------------------------------------------------------------- activations
class Hardshrink(Module):
    """``nn.Hardshrink(lambd=0.5)``: F.hardshrink."""

    program_attributes = Module.program_attributes + ("lambd",)

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return _op("hardshrink")(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """``nn.Softshrink(lambd=0.5)``: F.softshrink."""

    def forward(self, input):
        return _op("softshrink")(input, self.lambd)


class Tanhshrink(Module):
    """``nn.Tanhshrink()``: F.tanhshrink, ``x - tanh(x)``."""

    def forward(self, input):
        return _op("tanhshrink")(input)


class Threshold(Module):
    """``nn.Threshold(threshold, value, inplace=False)``: F.threshold."""

    program_attributes = Module.program_attributes + ("threshold", "value", "inplace")

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return _op("threshold")(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class PReLU(Module):
    """``nn.PReLU(num_parameters=1, init=0.25)``: F.prelu with a learnt slope (one, or one per channel), all
    ``init`` at the start."""

    program_attributes = Module.program_attributes + ("num_parameters", "init", "reset_parameters")

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(Tensor(np.full((num_parameters,), init, dtype=dtypes.get_default_dtype().np)))

    def reset_parameters(self) -> None:
        """Every slope back to ``init``."""
        self.weight.data.fill_(self.init)

    def forward(self, input):
        return _op("prelu")(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softmax2d(Module):
    """``nn.Softmax2d()``: softmax over the channels (dim -3) of a (C, H, W) or (N, C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return _op("softmax")(input, -3)


# ------------------------------------------------------------------------------------------- reshaping
class Unflatten(Module):
    """``nn.Unflatten(dim, unflattened_size)``: dim ``dim`` reshaped into ``unflattened_size``."""

    program_attributes = Module.program_attributes + ("dim", "unflattened_size")

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size) if isinstance(unflattened_size, list) else \
            unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class PixelShuffle(Module):
    """``nn.PixelShuffle(upscale_factor)``: F.pixel_shuffle."""

    program_attributes = Module.program_attributes + ("upscale_factor",)

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return _op("pixel_shuffle")(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``nn.PixelUnshuffle(downscale_factor)``: F.pixel_unshuffle."""

    program_attributes = Module.program_attributes + ("downscale_factor",)

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return _op("pixel_unshuffle")(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """``nn.ChannelShuffle(groups)``: F.channel_shuffle."""

    program_attributes = Module.program_attributes + ("groups",)

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return _op("channel_shuffle")(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class UpsamplingNearest2d(Upsample):
    """``nn.UpsamplingNearest2d(size=None, scale_factor=None)``: Upsample with mode 'nearest'."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``nn.UpsamplingBilinear2d(size=None, scale_factor=None)``: Upsample with mode 'bilinear' and
    ``align_corners=True``."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


# ------------------------------------------------------------------------------------------ RMSNorm
class RMSNorm(Module):
    """``nn.RMSNorm(normalized_shape, eps=None, elementwise_affine=True)``: F.rms_norm with a weight of ones."""

    program_attributes = Module.program_attributes + ("normalized_shape", "eps", "elementwise_affine",
                                                      "reset_parameters")

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(Tensor(np.ones(shape, dtype=dtypes.get_default_dtype().np)))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        """The weight back to ones."""
        if self.weight is not None:
            self.weight.data.fill_(1.0)

    def forward(self, input):
        return _op("rms_norm")(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


# ------------------------------------------------------------------------------------------- losses
class MarginRankingLoss(_Loss):
    """``nn.MarginRankingLoss(margin=0.0, reduction='mean')``: F.margin_ranking_loss."""

    program_attributes = _Loss.program_attributes + ("margin",)

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return _op("margin_ranking_loss")(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``nn.HingeEmbeddingLoss(margin=1.0, reduction='mean')``: F.hinge_embedding_loss."""

    program_attributes = _Loss.program_attributes + ("margin",)

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return _op("hinge_embedding_loss")(input, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """``nn.SoftMarginLoss(reduction='mean')``: F.soft_margin_loss."""

    def forward(self, input, target):
        return _op("soft_margin_loss")(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``nn.CosineEmbeddingLoss(margin=0.0, reduction='mean')``: F.cosine_embedding_loss."""

    program_attributes = _Loss.program_attributes + ("margin",)

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return _op("cosine_embedding_loss")(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """``nn.MultiLabelSoftMarginLoss(weight=None, reduction='mean')``: F.multilabel_soft_margin_loss."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        return _op("multilabel_soft_margin_loss")(input, target, weight=self.weight, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``nn.TripletMarginLoss(margin=1.0, p=2.0, eps=1e-6, swap=False, reduction='mean')``:
    F.triplet_margin_loss."""

    program_attributes = _Loss.program_attributes + ("margin", "p", "eps", "swap")

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return _op("triplet_margin_loss")(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                          swap=self.swap, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """``nn.PoissonNLLLoss(log_input=True, full=False, eps=1e-8, reduction='mean')``: F.poisson_nll_loss."""

    program_attributes = _Loss.program_attributes + ("log_input", "full", "eps")

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return _op("poisson_nll_loss")(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                       reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """``nn.GaussianNLLLoss(full=False, eps=1e-6, reduction='mean')``: F.gaussian_nll_loss."""

    program_attributes = _Loss.program_attributes + ("full", "eps")

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return _op("gaussian_nll_loss")(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


#: The classes of this module that ``torch.nn`` exposes, by name (added to gradcli.api.nn.CLASSES).
CLASSES = {c.__name__: c for c in (
    *_PADS.values(), Hardshrink, Softshrink, Tanhshrink, Threshold, PReLU, Softmax2d, Unflatten, PixelShuffle,
    PixelUnshuffle, ChannelShuffle, UpsamplingNearest2d, UpsamplingBilinear2d, RMSNorm, MarginRankingLoss,
    HingeEmbeddingLoss, SoftMarginLoss, CosineEmbeddingLoss, MultiLabelSoftMarginLoss, TripletMarginLoss,
    PoissonNLLLoss, GaussianNLLLoss)}

__all__ = sorted(CLASSES)

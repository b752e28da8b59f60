"""More of ``torch.nn``'s built-in modules: the channel-wise and alpha dropouts, RReLU, LocalResponseNorm, and the
CTC, multi-class margin, multi-label margin and linear cross-entropy losses. Each is PyTorch 2.13's class
(constructor arguments and defaults, ``extra_repr`` as ``print(model)`` shows it) over a function of the op table
(gradcli/ops/nn/feature_dropout.py, gradcli/ops/nn/more_losses.py)."""

from __future__ import annotations

import math

from ...ops import REGISTRY as _OPS
from .layers import Linear, _Loss, _WeightedLoss
from .module import Module


def _op(name):
    return _OPS[name]


# -------------------------------------------------------------------------------------------- dropouts
class _DropoutNd(Module):
    program_attributes = Module.program_attributes + ("p", "inplace")
    _function = "dropout1d"

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return _op(self._function)(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """``nn.Dropout1d(p=0.5, inplace=False)``: F.dropout1d (whole channels of (N, C, L) or (C, L))."""

    _function = "dropout1d"


class Dropout2d(_DropoutNd):
    """``nn.Dropout2d(p=0.5, inplace=False)``: F.dropout2d (whole channels of (N, C, H, W))."""

    _function = "dropout2d"


class Dropout3d(_DropoutNd):
    """``nn.Dropout3d(p=0.5, inplace=False)``: F.dropout3d (whole channels of (N, C, D, H, W) or (C, D, H, W))."""

    _function = "dropout3d"


class AlphaDropout(_DropoutNd):
    """``nn.AlphaDropout(p=0.5, inplace=False)``: F.alpha_dropout (keeps SELU's mean and variance)."""

    _function = "alpha_dropout"


class FeatureAlphaDropout(_DropoutNd):
    """``nn.FeatureAlphaDropout(p=0.5, inplace=False)``: F.feature_alpha_dropout (whole channels)."""

    _function = "feature_alpha_dropout"


# ----------------------------------------------------------------------------------------- activations
class RReLU(Module):
    """``nn.RReLU(lower=1/8, upper=1/3, inplace=False)``: F.rrelu, random slopes in training."""

    program_attributes = Module.program_attributes + ("lower", "upper", "inplace")

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return _op("rrelu")(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class LocalResponseNorm(Module):
    """``nn.LocalResponseNorm(size, alpha=1e-4, beta=0.75, k=1.0)``: F.local_response_norm across channels."""

    program_attributes = Module.program_attributes + ("size", "alpha", "beta", "k")

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return _op("local_response_norm")(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


# ---------------------------------------------------------------------------------------------- losses
class CTCLoss(_Loss):
    """``nn.CTCLoss(blank=0, reduction='mean', zero_infinity=False)``: F.ctc_loss."""

    program_attributes = _Loss.program_attributes + ("blank", "zero_infinity")

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(None, None, reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return _op("ctc_loss")(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                               self.zero_infinity)


class MultiMarginLoss(_WeightedLoss):
    """``nn.MultiMarginLoss(p=1, margin=1.0, weight=None, reduction='mean')``: F.multi_margin_loss."""

    program_attributes = _WeightedLoss.program_attributes + ("p", "margin", "weight")

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead")
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return _op("multi_margin_loss")(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                        reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """``nn.MultiLabelMarginLoss(reduction='mean')``: F.multilabel_margin_loss."""

    def forward(self, input, target):
        return _op("multilabel_margin_loss")(input, target, reduction=self.reduction)


class LinearCrossEntropyLoss(_WeightedLoss):
    """``nn.LinearCrossEntropyLoss(in_features, num_classes, *, out_features=(), bias=False, reduction='mean',
    weight=None, ignore_index=None, label_smoothing=0.0, options=None)``: a Linear layer of ``num_classes *
    prod(out_features)`` outputs (its weight viewed as (C, *out_features, in_features)) followed by
    F.linear_cross_entropy, as PyTorch 2.13's class."""

    program_attributes = _WeightedLoss.program_attributes + ("num_classes", "out_features", "ignore_index",
                                                             "label_smoothing", "options", "linear", "weight")

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None, dtype=None,
                 reduction="mean", weight=None, ignore_index=None, label_smoothing=0.0, options=None):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight, None, None, reduction)
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(self.out_features) * num_classes, bias=bias, dtype=dtype)
        self.options = options

    def forward(self, input, target):
        w = self.linear.weight.reshape((self.num_classes, *self.out_features, self.linear.in_features))
        b = None if self.linear.bias is None else self.linear.bias.reshape((self.num_classes, *self.out_features))
        return _op("linear_cross_entropy")(input, w, target, linear_bias=b, weight=self.weight,
                                           reduction=self.reduction, ignore_index=self.ignore_index,
                                           label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, out_features="
                f"{self.out_features}, bias={self.linear.bias is not None}, reduction={self.reduction}, "
                f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, options={self.options}")


#: PyTorch 2.13's module of each class (its ``repr``: gradcli/api/nn/naming.py reads ``_torch_module``).
_TORCH_MODULES = {"torch.nn.modules.dropout": (Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout),
                  "torch.nn.modules.activation": (RReLU,), "torch.nn.modules.normalization": (LocalResponseNorm,),
                  "torch.nn.modules.loss": (CTCLoss, MultiMarginLoss, MultiLabelMarginLoss, LinearCrossEntropyLoss)}
for _module, _classes in _TORCH_MODULES.items():
    for _cls in _classes:
        type.__setattr__(_cls, "_torch_module", _module)
del _module, _classes, _cls

#: The classes of this module that ``torch.nn`` exposes, by name (added to gradcli.api.nn.CLASSES).
CLASSES = {c.__name__: c for c in (
    Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout, RReLU, LocalResponseNorm, CTCLoss,
    MultiMarginLoss, MultiLabelMarginLoss, LinearCrossEntropyLoss)}

__all__ = sorted(CLASSES)

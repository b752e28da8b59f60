"""torch.nn's 3-d convolution, pooling and normalization modules and the remaining pools: Conv3d, ConvTranspose3d,
MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool1d/2d/3d, MaxUnpool1d/2d/3d, LPPool1d/2d/3d,
FractionalMaxPool2d/3d, BatchNorm3d and InstanceNorm3d, each as PyTorch 2.13's class: the same constructor
arguments, checks and defaults, parameters drawn as ``reset_parameters`` draws them (the convolutions: the
kaiming_uniform_ of :class:`.conv._ConvNd`), ``forward`` through the op table (gradcli/ops/nn/conv.py,
pooling_nd.py) and ``extra_repr`` as ``print(model)`` shows it."""

from __future__ import annotations

from ...ops import REGISTRY as _OPS
from .conv import _AdaptiveAvgPoolNd, _AvgPoolNd, _conv_init, _ConvNd, _ConvTransposeNd, _MaxPoolNd, _ntuple
from .extra import _InstanceNorm
from .layers import BatchNorm1d
from .module import Module


def _op(name):
    return _OPS[name]


# ------------------------------------------------------------------------------------------ convolutions
class Conv3d(_ConvNd):
    """``nn.Conv3d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
    padding_mode='zeros')``: F.conv3d with its own weight (out_channels, in_channels / groups, kD, kH, kW) and
    bias, drawn as PyTorch draws them. Matches torch.nn.Conv3d (``print`` shows ``Conv3d(16, 33, kernel_size=(3,
    3, 3), stride=(2, 2, 2))``).

    Raises:
        ValueError: PyTorch's messages for groups not dividing the channels, a bad padding string or mode,
            'same' with a stride.
    """

    _nd = 3
    __init__ = _conv_init("Conv3d")


class ConvTranspose3d(_ConvTransposeNd):
    """``nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
    groups=1, bias=True, dilation=1)``: F.conv_transpose3d with its own weight (in_channels, out_channels /
    groups, kD, kH, kW) and bias; ``forward(input, output_size=None)``. Matches torch.nn.ConvTranspose3d.

    Raises:
        ValueError: PyTorch's messages (groups, padding_mode other than zeros, an unreachable output_size).
    """

    _nd = 3


# ------------------------------------------------------------------------------------------ 3-d pools
class MaxPool3d(_MaxPoolNd):
    """``nn.MaxPool3d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False)``:
    F.max_pool3d (stride defaults to the kernel size). Matches torch.nn.MaxPool3d."""

    _fn = "max_pool3d"


class AvgPool3d(_AvgPoolNd):
    """``nn.AvgPool3d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
    divisor_override=None)``: F.avg_pool3d. Matches torch.nn.AvgPool3d (``print`` shows ``AvgPool3d(kernel_size=3,
    stride=2, padding=0)``)."""

    _fn = "avg_pool3d"


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """``nn.AdaptiveAvgPool3d(output_size)``: F.adaptive_avg_pool3d. Matches torch.nn.AdaptiveAvgPool3d."""

    _nd = 3


# -------------------------------------------------------------------------------- adaptive max pools
class _AdaptiveMaxPoolNd(Module):
    """torch.nn.modules.pooling._AdaptiveMaxPoolNd: ``(output_size, return_indices=False)``, forward through
    F.adaptive_max_pool{_nd}d."""

    program_attributes = Module.program_attributes + ("output_size", "return_indices")
    _nd = 2

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return _op(f"adaptive_max_pool{self._nd}d")(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """``nn.AdaptiveMaxPool1d(output_size, return_indices=False)``: F.adaptive_max_pool1d. Matches
    torch.nn.AdaptiveMaxPool1d."""

    _nd = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """``nn.AdaptiveMaxPool2d(output_size, return_indices=False)``: F.adaptive_max_pool2d (a None in
    output_size keeps that size). Matches torch.nn.AdaptiveMaxPool2d."""

    _nd = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """``nn.AdaptiveMaxPool3d(output_size, return_indices=False)``: F.adaptive_max_pool3d. Matches
    torch.nn.AdaptiveMaxPool3d."""

    _nd = 3


# ------------------------------------------------------------------------------------------ unpooling
class _MaxUnpoolNd(Module):
    """torch.nn.modules.pooling._MaxUnpoolNd: ``(kernel_size, stride=None, padding=0)`` as ``_nd``-tuples,
    ``forward(input, indices, output_size=None)`` through F.max_unpool{_nd}d."""

    program_attributes = Module.program_attributes + ("kernel_size", "stride", "padding")
    _nd = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._nd)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._nd)
        self.padding = _ntuple(padding, self._nd)

    def forward(self, input, indices, output_size=None):
        return _op(f"max_unpool{self._nd}d")(input, indices, self.kernel_size, self.stride, self.padding,
                                              output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """``nn.MaxUnpool1d(kernel_size, stride=None, padding=0)``: F.max_unpool1d, the partial inverse of
    MaxPool1d. Matches torch.nn.MaxUnpool1d."""

    _nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """``nn.MaxUnpool2d(kernel_size, stride=None, padding=0)``: F.max_unpool2d, the partial inverse of
    MaxPool2d. Matches torch.nn.MaxUnpool2d."""

    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """``nn.MaxUnpool3d(kernel_size, stride=None, padding=0)``: F.max_unpool3d, the partial inverse of
    MaxPool3d. Matches torch.nn.MaxUnpool3d."""

    _nd = 3


# -------------------------------------------------------------------------------------------- LP pools
class _LPPoolNd(Module):
    """torch.nn.modules.pooling._LPPoolNd: ``(norm_type, kernel_size, stride=None, ceil_mode=False)``, forward
    through F.lp_pool{_nd}d with ``float(norm_type)``."""

    program_attributes = Module.program_attributes + ("norm_type", "kernel_size", "stride", "ceil_mode")
    _nd = 2

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return _op(f"lp_pool{self._nd}d")(input, float(self.norm_type), self.kernel_size, self.stride,
                                           self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """``nn.LPPool1d(norm_type, kernel_size, stride=None, ceil_mode=False)``: F.lp_pool1d. Matches
    torch.nn.LPPool1d."""

    _nd = 1


class LPPool2d(_LPPoolNd):
    """``nn.LPPool2d(norm_type, kernel_size, stride=None, ceil_mode=False)``: F.lp_pool2d. Matches
    torch.nn.LPPool2d."""

    _nd = 2


class LPPool3d(_LPPoolNd):
    """``nn.LPPool3d(norm_type, kernel_size, stride=None, ceil_mode=False)``: F.lp_pool3d. Matches
    torch.nn.LPPool3d."""

    _nd = 3


# ------------------------------------------------------------------------------------ fractional pools
class _FractionalMaxPoolNd(Module):
    """torch.nn.FractionalMaxPool2d/3d: ``(kernel_size, output_size=None, output_ratio=None,
    return_indices=False, _random_samples=None)``; the samples are a buffer (None: drawn by each forward)."""

    program_attributes = Module.program_attributes + ("kernel_size", "output_size", "output_ratio",
                                                      "return_indices")
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        nd = self._nd
        name = type(self).__name__
        if nd == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _ntuple(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, nd) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return _op(f"fractional_max_pool{self._nd}d")(input, self.kernel_size, self.output_size, self.output_ratio,
                                                      self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """``nn.FractionalMaxPool2d(kernel_size, output_size=None, output_ratio=None, return_indices=False,
    _random_samples=None)``: F.fractional_max_pool2d (samples from torch.rand, as PyTorch's). Matches
    torch.nn.FractionalMaxPool2d.

    Raises:
        ValueError: PyTorch's messages for neither or both of output_size and output_ratio, a ratio outside
            (0, 1).
    """

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """``nn.FractionalMaxPool3d(kernel_size, output_size=None, output_ratio=None, return_indices=False,
    _random_samples=None)``: F.fractional_max_pool3d. Matches torch.nn.FractionalMaxPool3d.

    Raises:
        ValueError: as :class:`FractionalMaxPool2d`; a kernel size below 1.
    """

    _nd = 3


# ------------------------------------------------------------------------------------- normalization
class BatchNorm3d(BatchNorm1d):
    """``nn.BatchNorm3d(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True)``: batch
    normalization of an (N, C, D, H, W) input (F.batch_norm over N, D, H, W). Matches torch.nn.BatchNorm3d.

    Raises:
        ValueError: for an input that is not 5-d ("expected 5D input (got 4D input)").
    """

    def _check_input_dim(self, input) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class InstanceNorm3d(_InstanceNorm):
    """``nn.InstanceNorm3d(num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False)``:
    F.instance_norm of an (N, C, D, H, W) or unbatched (C, D, H, W) input. Matches torch.nn.InstanceNorm3d."""

    _expected_dim = 5


#: The classes of this module that ``torch.nn`` exposes, by name (added to gradcli.api.nn.CLASSES).
CLASSES = {c.__name__: c for c in (
    Conv3d, ConvTranspose3d, MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
    AdaptiveMaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, LPPool1d, LPPool2d, LPPool3d, FractionalMaxPool2d,
    FractionalMaxPool3d, BatchNorm3d, InstanceNorm3d)}

__all__ = list(CLASSES)

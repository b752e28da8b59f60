"""torch.nn's convolution, pooling, fold and resize modules: Conv1d, Conv2d, ConvTranspose2d (and
ConvTranspose1d), MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d, Unfold, Fold, Upsample, each as PyTorch 2.13's
class: the same constructor arguments, checks and defaults, parameters drawn as ``reset_parameters`` draws them
(kaiming_uniform_ with a = sqrt(5), then the bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)), from the
PyTorch-exact generator), ``forward`` through the op table (gradcli/ops/nn/: conv.py, pooling.py, fold.py,
resampling.py) and ``extra_repr`` as ``print(model)`` shows it
(``Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1))``)."""

from __future__ import annotations

import math

import numpy as np

from ...engine import dtypes, limits
from ...ops import REGISTRY as _OPS
from ...engine.tensor import Size, Tensor
from . import init
from .module import Module
from .parameter import Parameter


def _op(name):
    return _OPS[name]


def _empty(*shape) -> Tensor:
    limits.check_items(int(np.prod(shape)) if shape else 1, "a parameter")
    return Tensor(np.zeros(shape, dtype=dtypes.get_default_dtype().np))


def _ntuple(v, n: int) -> tuple:
    """torch.nn.modules.utils._ntuple: an iterable as a tuple, anything else repeated ``n`` times."""
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


# ------------------------------------------------------------------------------------------ convolutions
class _ConvNd(Module):
    """torch.nn.modules.conv._ConvNd: the checks, parameters, initialisation and repr shared by the convolution
    modules."""

    program_attributes = Module.program_attributes + (
        "in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "transposed",
        "output_padding", "groups", "padding_mode", "reset_parameters")

    _nd = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", output_padding=0, device=None, dtype=None):
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        kernel_size = _ntuple(kernel_size, nd)
        stride = _ntuple(stride, nd)
        dilation = _ntuple(dilation, nd)
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _ntuple(padding, nd)
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = self._transposed
        self.output_padding = _ntuple(output_padding, nd)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            rev = [0, 0] * nd
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(nd - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    rev[2 * i] = left
                    rev[2 * i + 1] = total - left
        else:
            rev = [p for p in reversed(padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = rev
        if self._transposed:
            self.weight = Parameter(_empty(in_channels, out_channels // groups, *kernel_size))
        else:
            self.weight = Parameter(_empty(out_channels, in_channels // groups, *kernel_size))
        if bias:
            self.bias = Parameter(_empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw ``weight`` by kaiming_uniform_(a=sqrt(5)), then ``bias`` from U(-1/sqrt(fan_in), 1/sqrt(fan_in))
        (torch.nn.modules.conv._ConvNd.reset_parameters)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(in_channels=self.in_channels, out_channels=self.out_channels, kernel_size=self.kernel_size,
                        stride=self.stride, padding=self.padding, dilation=self.dilation,
                        output_padding=self.output_padding, groups=self.groups, padding_mode=self.padding_mode)

    def _conv_forward(self, input, weight, bias):
        name = f"conv{self._nd}d"
        if self.padding_mode != "zeros":
            padded = _op("pad")(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return _op(name)(padded, weight, bias, self.stride, (0,) * self._nd, self.dilation, self.groups)
        return _op(name)(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


def _conv_init(name: str):
    """The ``__init__`` of Conv1d, Conv2d and Conv3d (``name``): PyTorch's signature (no output_padding; device
    and dtype accepted and unused), the arguments passed on to :class:`_ConvNd`. Its ``__qualname__`` is
    ``<name>.__init__``, so that Python's errors for wrong arguments name the class, as PyTorch's do."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        _ConvNd.__init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode)

    __init__.__qualname__ = f"{name}.__init__"
    return __init__


class Conv1d(_ConvNd):
    """``nn.Conv1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
    padding_mode='zeros')``: F.conv1d with its own weight (out_channels, in_channels / groups, kernel_size) and
    bias; padding_mode reflect/replicate/circular pads with F.pad first. Matches torch.nn.Conv1d.

    Raises:
        ValueError: PyTorch's messages for groups not dividing the channels, a bad padding string or mode,
            'same' with a stride.
    """

    _nd = 1
    __init__ = _conv_init("Conv1d")


class Conv2d(_ConvNd):
    """``nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
    padding_mode='zeros')``: F.conv2d with its own weight (out_channels, in_channels / groups, kH, kW) and bias.
    Matches torch.nn.Conv2d (``print`` shows ``Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1))``).

    Raises:
        ValueError: as :class:`Conv1d`.
    """

    _nd = 2
    __init__ = _conv_init("Conv2d")


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, output_padding)

    def _output_padding(self, input, output_size) -> tuple:
        """torch.nn.modules.conv._ConvTransposeNd._output_padding: the output_padding that gives
        ``output_size`` (None: the module's own)."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        output_size = list(output_size)[-nd:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.ndim}D input, output_size must have {nd} or "
                             f"{nd + 2} elements (got {len(output_size)})")
        least, most = [], []
        for d in range(nd):
            size = input.shape[input.ndim - nd + d]
            least.append((size - 1) * self.stride[d] - 2 * self.padding[d] + self.dilation[d] *
                         (self.kernel_size[d] - 1) + 1)
            most.append(least[d] + self.stride[d] - 1)
        for d in range(nd):
            if not least[d] <= output_size[d] <= most[d]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {least} "
                                 f"to {most} (for an input of {Size(input.shape[input.ndim - nd:])})")
        return tuple(o - lo for o, lo in zip(output_size, least))

    def forward(self, input, output_size=None):
        op_ = self._output_padding(input, output_size)
        return _op(f"conv_transpose{self._nd}d")(input, self.weight, self.bias, self.stride, self.padding, op_,
                                                 self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """``nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
    groups=1, bias=True, dilation=1)``: F.conv_transpose1d with its own weight (in_channels, out_channels /
    groups, kernel_size) and bias. Matches torch.nn.ConvTranspose1d."""

    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """``nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
    groups=1, bias=True, dilation=1)``: F.conv_transpose2d with its own weight (in_channels, out_channels /
    groups, kH, kW) and bias; ``forward(input, output_size=None)`` picks the output_padding that gives
    ``output_size``. Matches torch.nn.ConvTranspose2d.

    Raises:
        ValueError: PyTorch's messages (groups, padding_mode other than zeros, an unreachable output_size).
    """

    _nd = 2


# ------------------------------------------------------------------------------------------------- pools
class _MaxPoolNd(Module):
    program_attributes = Module.program_attributes + ("kernel_size", "stride", "padding", "dilation",
                                                      "ceil_mode", "return_indices")
    _fn = "max_pool2d"

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return _op(self._fn)(input, self.kernel_size, self.stride, self.padding, self.dilation,
                             ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """``nn.MaxPool1d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False)``:
    F.max_pool1d. Matches torch.nn.MaxPool1d."""

    _fn = "max_pool1d"


class MaxPool2d(_MaxPoolNd):
    """``nn.MaxPool2d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False)``:
    F.max_pool2d (stride defaults to the kernel size). Matches torch.nn.MaxPool2d (``print`` shows
    ``MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)``)."""

    _fn = "max_pool2d"


class AvgPool1d(Module):
    """``nn.AvgPool1d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True)``:
    F.avg_pool1d (the sizes kept as 1-tuples, as PyTorch's). Matches torch.nn.AvgPool1d."""

    program_attributes = Module.program_attributes + ("kernel_size", "stride", "padding", "ceil_mode",
                                                      "count_include_pad")

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return _op("avg_pool1d")(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                 self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    """torch.nn.modules.pooling._AvgPoolNd of the 2-d and 3-d pools: ``(kernel_size, stride=None, padding=0,
    ceil_mode=False, count_include_pad=True, divisor_override=None)``, forward through F.avg_pool{2,3}d
    (``_fn``)."""

    program_attributes = Module.program_attributes + ("kernel_size", "stride", "padding", "ceil_mode",
                                                      "count_include_pad", "divisor_override")

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    _fn = "avg_pool2d"

    def forward(self, input):
        return _op(self._fn)(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                             self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """``nn.AvgPool2d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
    divisor_override=None)``: F.avg_pool2d. Matches torch.nn.AvgPool2d (``print`` shows
    ``AvgPool2d(kernel_size=2, stride=2, padding=0)``)."""

    _fn = "avg_pool2d"


class _AdaptiveAvgPoolNd(Module):
    """torch.nn.modules.pooling._AdaptiveAvgPoolNd: ``(output_size)``, forward through
    F.adaptive_avg_pool{_nd}d."""

    program_attributes = Module.program_attributes + ("output_size",)
    _nd = 2

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return _op(f"adaptive_avg_pool{self._nd}d")(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """``nn.AdaptiveAvgPool2d(output_size)``: F.adaptive_avg_pool2d. Matches torch.nn.AdaptiveAvgPool2d."""

    _nd = 2


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """``nn.AdaptiveAvgPool1d(output_size)``: F.adaptive_avg_pool1d. Matches torch.nn.AdaptiveAvgPool1d."""

    _nd = 1


# ---------------------------------------------------------------------------------------- fold, resize
class Unfold(Module):
    """``nn.Unfold(kernel_size, dilation=1, padding=0, stride=1)``: F.unfold. Matches torch.nn.Unfold."""

    program_attributes = Module.program_attributes + ("kernel_size", "dilation", "padding", "stride")

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return _op("unfold")(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    """``nn.Fold(output_size, kernel_size, dilation=1, padding=0, stride=1)``: F.fold. Matches torch.nn.Fold."""

    program_attributes = Module.program_attributes + ("output_size", "kernel_size", "dilation", "padding",
                                                      "stride")

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return _op("fold")(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Upsample(Module):
    """``nn.Upsample(size=None, scale_factor=None, mode='nearest', align_corners=None,
    recompute_scale_factor=None)``: F.interpolate (scale_factor kept as a float or a tuple of floats).
    Matches torch.nn.Upsample (``print`` shows ``Upsample(scale_factor=2.0, mode='nearest')``)."""

    program_attributes = Module.program_attributes + ("size", "scale_factor", "mode", "align_corners",
                                                      "recompute_scale_factor")

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return _op("interpolate")(input, self.size, self.scale_factor, self.mode, self.align_corners,
                                  recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


#: The classes of this module that ``torch.nn`` exposes, by name (added to gradcli.api.nn.CLASSES).
CLASSES = {c.__name__: c for c in (
    Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d, MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d,
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, Unfold, Fold, Upsample)}

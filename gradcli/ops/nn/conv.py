"""Convolution and pooling: conv1d/conv2d/conv_transpose1d/conv_transpose2d, max_pool1d/2d,
avg_pool1d/2d, adaptive_avg_pool1d/2d, unfold/fold, pad and interpolate, as torch.nn.functional computes them and
names their backward.

The kernels are numpy im2col: ``sliding_window_view`` of the padded input gives every window as a strided view,
one copy lays them out as a matrix, one matmul per group does the rest. The transposed direction (the gradient
of a convolution with respect to its input, conv_transpose, fold, the pools' backward) is col2im: a matmul,
then the columns added into the padded image once per kernel offset (kh*kw strided adds of whole arrays, the
convention of im2col implementations: on the benchmark's 32x3x64x64 input gradient, 10.6 ms against 14.1 ms for
one np.add.at and 18.1 ms for one np.bincount over precomputed flat indices).

A convolution is bilinear in (input, weight): with ``conv(X, w)``, its transposed ``convT(Y, w)`` and the
weight's gradient ``convW(X, Y)``, ``<conv(X, w), Y> = <X, convT(Y, w)> = <w, convW(X, Y)>``. So every
derivative of each of the three is one of the three (PyTorch's convolution_backward and its double backward,
torch/csrc/autograd/FunctionsManual.cpp ``_convolution_double_backward``): the rules below are written with
these ops, which makes second derivatives (and forward mode over reverse) work.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...engine import dtypes, limits
from ...engine.tensor import Tensor, normalize_dim, to_tensor
from ..core.declare import composite, op, tensor_method
from ..reduction.reductions import mean, sum
from ..shape.views import reshape, squeeze, unsqueeze


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= int(x)
    return out


# ------------------------------------------------------------------------------------------ numpy kernels
def _pad_spatial(x: np.ndarray, padding, value=0) -> np.ndarray:
    """``x`` (N, C, *S) padded by ``padding[i]`` on both sides of each spatial dim (a copy only if needed)."""
    if not any(padding):
        return x
    return np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding], constant_values=value)


def _windows(xp: np.ndarray, ksize, stride, dilation, out) -> np.ndarray:
    """A strided view (N, C, *out, *K) of the windows of the padded ``xp`` (N, C, *S): ``out[i]`` windows of
    ``ksize[i]`` taps, ``dilation[i]`` apart, starting every ``stride[i]``."""
    nd = len(ksize)
    ext = tuple(d * (k - 1) + 1 for k, d in zip(ksize, dilation))
    win = sliding_window_view(xp, ext, axis=tuple(range(2, 2 + nd)))
    sl = (slice(None), slice(None)) + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out, stride)) + \
        tuple(slice(None, None, d) for d in dilation)
    return win[sl]


def _cols(x: np.ndarray, ksize, stride, padding, dilation, out, groups: int) -> np.ndarray:
    """im2col: the windows of ``x`` (N, C, *S) as a (G, C/G*K, N*P) matrix per group (K kernel taps, P output
    positions). This channel-first layout copies fastest (the windows' last axis stays the image's rows) and
    feeds one BLAS product per group."""
    nd = len(ksize)
    n, c = x.shape[:2]
    limits.check_numel((c * _prod(ksize), n * _prod(out)), "the convolution's im2col matrix")
    win = _windows(_pad_spatial(x, padding), ksize, stride, dilation, out)
    win = win.reshape((n, groups, c // groups) + tuple(out) + tuple(ksize))
    perm = (1, 2) + tuple(range(3 + nd, 3 + 2 * nd)) + (0,) + tuple(range(3, 3 + nd))
    return win.transpose(perm).reshape(groups, (c // groups) * _prod(ksize), n * _prod(out))


def _col2im(cols: np.ndarray, spatial, ksize, stride, padding, dilation) -> np.ndarray:
    """col2im: ``cols`` (C, *K, N, *out) (any strides) added into zeros at the windows' positions (the
    transpose of :func:`_windows`), one strided add of whole arrays per kernel offset; returns (N, C,
    *spatial)."""
    nd = len(ksize)
    c = cols.shape[0]
    n = cols.shape[1 + nd]
    out = cols.shape[2 + nd:]
    padded = tuple(s + 2 * p for s, p in zip(spatial, padding))
    # columns that reach past the padded image (a window of a ceil_mode pool) are cut off
    full = tuple(max(p, (o - 1) * st + (k - 1) * d + 1) for p, o, st, k, d in zip(padded, out, stride, ksize,
                                                                                   dilation))
    limits.check_numel((c, n) + full, "the result")
    img = np.zeros((c, n) + full, dtype=cols.dtype)
    for offs in np.ndindex(*ksize):
        sl = (slice(None), slice(None)) + tuple(slice(o * d, o * d + (m - 1) * st + 1, st)
                                                for o, d, m, st in zip(offs, dilation, out, stride))
        img[sl] += cols[(slice(None),) + offs]
    crop = (slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(padding, spatial))
    return np.ascontiguousarray(img[crop].swapaxes(0, 1))


def _bmm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` per group: numpy's stacked matmul does not reach BLAS's speed (a 2-d product measured 7 to 10
    times faster on one group), so each group's product is one 2-d matmul."""
    if a.shape[0] == 1:
        return (a[0] @ b[0])[None]
    return np.stack([x @ y for x, y in zip(a, b)])


def _conv_out(spatial, ksize, stride, padding, dilation) -> tuple:
    return tuple((s + 2 * p - d * (k - 1) - 1) // st + 1
                 for s, k, st, p, d in zip(spatial, ksize, stride, padding, dilation))


def _channel_first(y: np.ndarray, groups: int) -> np.ndarray:
    """(N, O, *out) → (G, O/G, N*P), contiguous."""
    n, o = y.shape[:2]
    return np.ascontiguousarray(y.reshape(n, o, -1).swapaxes(0, 1)).reshape(groups, o // groups, -1)


def _conv_np(x, w, stride, padding, dilation, groups) -> np.ndarray:
    """conv(X, w): (N, C, *S) with (O, C/G, *K) → (N, O, *out)."""
    n = x.shape[0]
    o, cg = w.shape[:2]
    ksize = w.shape[2:]
    out = _conv_out(x.shape[2:], ksize, stride, padding, dilation)
    col = _cols(x, ksize, stride, padding, dilation, out, groups)
    y = _bmm(w.reshape(groups, o // groups, cg * _prod(ksize)), col)  # (G, O/G, N*P)
    y = y.reshape(o, n, _prod(out)).swapaxes(0, 1)
    return np.ascontiguousarray(y).reshape((n, o) + tuple(out))


def _conv_t_np(y, w, spatial, stride, padding, dilation, groups) -> np.ndarray:
    """convT(Y, w): (N, O, *out) with (O, C/G, *K) → (N, C, *spatial), the transpose of :func:`_conv_np`."""
    n, o = y.shape[:2]
    out = y.shape[2:]
    cg = w.shape[1]
    ksize = w.shape[2:]
    wm = w.reshape(groups, o // groups, cg * _prod(ksize)).transpose(0, 2, 1)
    cols = _bmm(wm, _channel_first(y, groups))  # (G, C/G*K, N*P)
    cols = cols.reshape((groups * cg,) + tuple(ksize) + (n,) + tuple(out))
    return _col2im(cols, spatial, ksize, stride, padding, dilation)


def _conv_w_np(x, y, weight_shape, stride, padding, dilation, groups) -> np.ndarray:
    """convW(X, Y): the weight's gradient, (N, C, *S) and (N, O, *out) → (O, C/G, *K)."""
    out = y.shape[2:]
    ksize = tuple(weight_shape[2:])
    col = _cols(x, ksize, stride, padding, dilation, out, groups)  # (G, C/G*K, N*P)
    gw = _bmm(_channel_first(y, groups), col.transpose(0, 2, 1))  # (G, O/G, C/G*K)
    return gw.reshape(tuple(weight_shape))


def _transposed_spatial(insize, ksize, stride, padding, dilation, output_padding) -> tuple:
    return tuple((i - 1) * s - 2 * p + d * (k - 1) + 1 + op
                 for i, k, s, p, d, op in zip(insize, ksize, stride, padding, dilation, output_padding))


def _output_padding(spatial, outsize, ksize, stride, padding, dilation) -> tuple:
    """The output_padding that makes convT of an ``outsize`` map ``spatial`` long again."""
    return tuple(s - ((o - 1) * st + 1 - 2 * p + d * (k - 1))
                 for s, o, k, st, p, d in zip(spatial, outsize, ksize, stride, padding, dilation))


# ------------------------------------------------------------------------------------------- convolution
@op("_convolution", grad_fn="ConvolutionBackward0", inputs=3, promote=None,
    note="d/dinput = conv_transpose(g, weight), d/dweight = the input's windows times g, d/dbias = sum(g)")
def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """aten::_convolution on a batched input (N, C, *S): a convolution, or with ``transposed`` its
    transpose (weight (C_in, C_out/G, *K)), plus ``bias`` per output channel."""
    nd = input.ndim - 2
    if transposed:
        spatial = _transposed_spatial(input.shape[2:], weight.shape[2:], stride, padding, dilation,
                                      output_padding)
        y = _conv_t_np(input, weight, spatial, stride, padding, dilation, groups)
    else:
        y = _conv_np(input, weight, stride, padding, dilation, groups)
    if bias is not None:
        y += bias.reshape((1, -1) + (1,) * nd)
    return y


@_convolution.defvjp
def _(grad, input, weight, stride, padding, dilation, transposed, output_padding, groups, input_shape,
      weight_shape, needs_input_grad):
    # FunctionsManual.cpp convolution_backward: the input's gradient is the transposed convolution of grad
    # (the convolution of grad, for a transposed one), the weight's the correlation of input and grad.
    nd = len(input_shape) - 2
    gi = gw = gb = None
    zeros = (0,) * nd
    if transposed:
        if needs_input_grad[0]:
            gi = _convolution(grad, weight, None, stride, padding, dilation, False, zeros, groups)
        if needs_input_grad[1]:
            gw = _conv_weight(grad, input, weight_shape, stride, padding, dilation, groups)
    else:
        if needs_input_grad[0]:
            op_ = _output_padding(input_shape[2:], grad.shape[2:], weight_shape[2:], stride, padding, dilation)
            gi = _convolution(grad, weight, None, stride, padding, dilation, True, op_, groups)
        if needs_input_grad[1]:
            gw = _conv_weight(input, grad, weight_shape, stride, padding, dilation, groups)
    if needs_input_grad[2]:
        gb = sum(grad, (0,) + tuple(range(2, 2 + nd)))
    return gi, gw, gb


@_convolution.defjvp
def _(input_t, weight_t, bias_t, input, weight, stride, padding, dilation, transposed, output_padding, groups):
    # derivatives.yaml convolution: result: convolution_jvp (bilinear: conv(x_t, w) + conv(x, w_t) + b_t)
    args = (stride, padding, dilation, transposed, output_padding, groups)
    out = _convolution(input_t, weight, None, *args) + _convolution(input, weight_t, None, *args)
    if bias_t is not None:
        out = out + reshape(bias_t, (1, -1) + (1,) * (len(input.shape) - 2))
    return out


@op("_conv_weight", grad_fn="ConvolutionBackwardBackward0", inputs=2, promote=None,
    note="bilinear: d/dinput = conv_transpose(grad_output, g), d/dgrad_output = conv(input, g)")
def _conv_weight(input, grad_output, weight_shape, stride, padding, dilation, groups):
    """The gradient of a convolution with respect to its weight: ``input`` (N, C, *S) correlated with
    ``grad_output`` (N, O, *out), shape ``weight_shape`` (O, C/G, *K)."""
    return _conv_w_np(input, grad_output, weight_shape, stride, padding, dilation, groups)


@_conv_weight.defvjp
def _(grad, input, grad_output, weight_shape, stride, padding, dilation, groups, input_shape, needs_input_grad):
    gi = gg = None
    nd = len(input_shape) - 2
    if needs_input_grad[0]:
        op_ = _output_padding(input_shape[2:], grad_output.shape[2:], weight_shape[2:], stride, padding, dilation)
        gi = _convolution(grad_output, grad, None, stride, padding, dilation, True, op_, groups)
    if needs_input_grad[1]:
        gg = _convolution(input, grad, None, stride, padding, dilation, False, (0,) * nd, groups)
    return gi, gg


_conv_weight.defjvp_multilinear()


def _tuple_arg(v, nd: int, name: str) -> tuple:
    """An int or a list of ``nd`` ints as a tuple (PyTorch's expand_param_if_needed)."""
    if isinstance(v, (list, tuple)):
        v = tuple(int(x) for x in v)
        if len(v) == 1:
            return v * nd
        if len(v) != nd:
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} values to match "
                               f"the convolution dimensions, but got {name}={list(v)}")
        return v
    return (int(v),) * nd


def _conv(fname: str, nd: int, input, weight, bias, stride, padding, dilation, groups, transposed=False,
          output_padding=0):
    """The checks and the call of aten::_convolution behind conv1d/conv2d/conv_transpose1d/conv_transpose2d
    (aten/src/ATen/native/Convolution.cpp: check_shape_forward, _convolution_mode for 'same'/'valid')."""
    input = to_tensor(input)
    weight = to_tensor(weight)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fname}, but got "
                           f"input of size: {list(input.shape)}")
    if input.data.dtype != weight.data.dtype:
        raise RuntimeError(f"expected scalar type {dtypes.scalar_type_name(input.data.dtype)} but found "
                           f"{dtypes.scalar_type_name(weight.data.dtype)}")
    if bias is not None:
        bias = to_tensor(bias)
        if bias.data.dtype != input.data.dtype:
            raise RuntimeError(f"Input type ({dtypes.c_type_name(input.data.dtype)}) and bias type "
                               f"({dtypes.c_type_name(bias.data.dtype)}) should be the same")
    if input.data.dtype.kind not in "fiu":
        kernel = "slow_conv_transpose2d_out_cpu" if transposed else "slow_conv2d_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(input.data.dtype)}'")
    batched = input.ndim == nd + 2
    if not batched:
        input = unsqueeze(input, 0)
    if transposed and isinstance(padding, str):
        raise TypeError(f"{fname}(): argument 'padding' must be tuple of ints, not str")
    stride = _tuple_arg(stride, nd, "stride")
    dilation = _tuple_arg(dilation, nd, "dilation")
    output_padding = _tuple_arg(output_padding, nd, "output_padding")
    ksize = tuple(weight.shape[2:])
    pad_first = None
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = tuple(d * (k - 1) for d, k in zip(dilation, ksize))
            padding = tuple(t // 2 for t in total)
            if any(t % 2 for t in total):
                warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a "
                              "zero-padded copy of the input be created", UserWarning, stacklevel=3)
                pad_first = []
                for t in reversed(total):
                    pad_first += [0, t % 2]
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _tuple_arg(padding, nd, "padding")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    wshape = list(weight.shape)
    ishape = list(input.shape)
    if weight.ndim != nd + 2:
        # aten::_convolution takes the spatial dims from the weight: the stride F.convNd expanded to nd values
        # fails first, else the input's dims
        wd = weight.ndim - 2
        if nd != 1 and nd != wd:
            raise RuntimeError(f"expected stride to be a single integer value or a list of {wd} values to match "
                               f"the convolution dimensions, but got stride={list(stride)}")
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{wshape}, but got {input.ndim}-dimensional input of size {ishape} instead")
    if transposed:
        if ishape[1] != wshape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {wshape}, expected input{ishape} to have "
                               f"{wshape[0]} channels, but got {ishape[1]} channels instead")
        if wshape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
                               f"0, but got weight of size [{wshape}] instead")
        if bias is not None and (bias.ndim != 1 or bias.shape[0] != wshape[1] * groups):
            raise RuntimeError(f"Given transposed=1, weight of size {wshape}, expected bias to be 1-dimensional "
                               f"with {wshape[1] * groups} elements, but got bias of size {list(bias.shape)} "
                               f"instead")
        if any(op_ >= s and op_ >= d for op_, s, d in zip(output_padding, stride, dilation)):
            # (PyTorch runs a 1-d transposed convolution as a 2-d one of height 1)
            op2, st2, d2 = ((0,) + output_padding, (1,) + stride, (1,) + dilation) if nd == 1 else \
                (output_padding, stride, dilation)
            raise RuntimeError(
                f"output padding must be smaller than either stride or dilation, but got "
                f"output_padding_height: {op2[0]} output_padding_width: {op2[1]} stride_height: {st2[0]} "
                f"stride_width: {st2[1]} dilation_height: {d2[0]} dilation_width: {d2[1]}")
    else:
        if wshape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
                               f"0, but got weight of size [{wshape}] instead")
        if ishape[1] != wshape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {wshape}, expected input{ishape} to have "
                               f"{wshape[1] * groups} channels, but got {ishape[1]} channels instead")
        if bias is not None and (bias.ndim != 1 or bias.shape[0] != wshape[0]):
            raise RuntimeError(f"Given weight of size {wshape}, expected bias to be 1-dimensional with "
                               f"{wshape[0]} elements, but got bias of size {list(bias.shape)} instead")
        extra = (0,) * nd if pad_first is None else tuple(reversed(pad_first[1::2]))
        padded = tuple(s + 2 * p + e for s, p, e in zip(ishape[2:], padding, extra))
        kext = tuple(d * (k - 1) + 1 for d, k in zip(dilation, ksize))
        if any(p < k for p, k in zip(padded, kext)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                               f"Kernel size: ({' x '.join(map(str, kext))}). Kernel size can't be greater than "
                               f"actual input size")
    if pad_first is not None:
        input = constant_pad_nd(input, pad_first, 0)
    out = _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    return out if batched else squeeze(out, 0)


_CONV_NOTE = _convolution.note


@composite("conv1d", grad_fn="ConvolutionBackward0", note=_CONV_NOTE)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution (cross-correlation) of ``input`` (N, C, L) or unbatched (C, L) with ``weight``
    (O, C/groups, K), plus ``bias`` (O,): output (N, O, L_out), ``L_out = (L + 2 padding - dilation (K - 1) -
    1) // stride + 1``; ``padding`` an int, a 1-list, 'valid' or 'same'. Float and integer dtypes (input, weight
    and bias of one dtype). Matches torch.nn.functional.conv1d (grad_fn ConvolutionBackward0; unbatched:
    SqueezeBackward1).

    Raises:
        RuntimeError: PyTorch's messages for a wrong number of dims, channels that do not match the weight and
            groups, a bias of the wrong size, a kernel larger than the padded input, non-positive stride,
            dilation or groups, negative padding, 'same' with a stride, mixed dtypes.
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@composite("conv2d", grad_fn="ConvolutionBackward0", note=_CONV_NOTE)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution (cross-correlation) of ``input`` (N, C, H, W) or unbatched (C, H, W) with ``weight``
    (O, C/groups, kH, kW), plus ``bias`` (O,): output (N, O, H_out, W_out), each ``(size + 2 padding -
    dilation (k - 1) - 1) // stride + 1``; ``stride``, ``padding``, ``dilation`` ints or pairs, ``padding``
    also 'valid' or 'same'. Float and integer dtypes. Matches torch.nn.functional.conv2d (grad_fn
    ConvolutionBackward0; unbatched: SqueezeBackward1).

    Raises:
        RuntimeError: as :func:`conv1d` (e.g. "Given groups=1, weight of size [16, 3, 3, 3], expected
            input[1, 4, 8, 8] to have 3 channels, but got 4 channels instead").
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@composite("conv_transpose1d", grad_fn="ConvolutionBackward0", note=_CONV_NOTE)
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-d transposed convolution of ``input`` (N, C_in, L) or (C_in, L) with ``weight`` (C_in, C_out/groups,
    K): output length ``(L - 1) stride - 2 padding + dilation (K - 1) + output_padding + 1`` (the gradient of
    conv1d with respect to its input). Matches torch.nn.functional.conv_transpose1d.

    Raises:
        RuntimeError: PyTorch's messages (channels, groups, bias, output_padding not smaller than stride or
            dilation, negative padding).
    """
    return _conv("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, groups, True,
                 output_padding)


@composite("conv_transpose2d", grad_fn="ConvolutionBackward0", note=_CONV_NOTE)
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-d transposed convolution ("deconvolution") of ``input`` (N, C_in, H, W) or (C_in, H, W) with
    ``weight`` (C_in, C_out/groups, kH, kW): each output size ``(size - 1) stride - 2 padding + dilation (k - 1)
    + output_padding + 1`` (the gradient of conv2d with respect to its input). Matches
    torch.nn.functional.conv_transpose2d (grad_fn ConvolutionBackward0).

    Raises:
        RuntimeError: as :func:`conv_transpose1d`.
    """
    return _conv("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, groups, True,
                 output_padding)


# --------------------------------------------------------------------------------------------------- pad
@op("constant_pad_nd", grad_fn="ConstantPadNdBackward0", promote=None,
    note="d/dx = the gradient with the padding cut off (a negative pad's crop padded back with zeros)")
def constant_pad_nd(input, pad, value=0):
    """``input`` padded with ``value``: ``pad`` (left, right) pairs from the last dim backwards; negative
    amounts crop. Matches torch.constant_pad_nd."""
    nd = len(pad) // 2
    widths = [(0, 0)] * (input.ndim - nd)
    for i in range(nd):
        widths.append((pad[2 * (nd - 1 - i)], pad[2 * (nd - 1 - i) + 1]))
    crop = tuple(slice(-lo if lo < 0 else 0, s + hi if hi < 0 else s) for (lo, hi), s in zip(widths, input.shape))
    x = input[crop]
    return np.pad(x, [(max(lo, 0), max(hi, 0)) for lo, hi in widths], constant_values=value)


@constant_pad_nd.defvjp
def _(grad, pad):
    return constant_pad_nd(grad, [-p for p in pad], 0)


@constant_pad_nd.defjvp
def _(input_t, pad):
    # derivatives.yaml constant_pad_nd: result: constant_pad_nd(self_t, pad, 0)
    return constant_pad_nd(input_t, pad, 0)


def _index_maps(mode: str, size: int, lo: int, hi: int) -> np.ndarray:
    """The source index of each output position along one padded dim (reflect, replicate, circular)."""
    j = np.arange(-lo, size + hi)
    if mode == "reflect":
        period = 2 * (size - 1)
        j = np.abs(j) % period if period else np.zeros_like(j)
        return np.where(j >= size, period - j, j)
    if mode == "replicate":
        return np.clip(j, 0, size - 1)
    return j % size  # circular


def _name_grad_fn(maps, name):
    return name


@op("_take_axes", grad_fn=_name_grad_fn, promote=None,
    note="d/dx = the gradient added back into the positions each element was copied from")
def _take_axes(input, maps, name):
    """``input`` taken at ``maps`` (one index array per trailing dim, None to leave a dim): the
    reflect/replicate/circular pads and nearest interpolation (``name`` is PyTorch's grad_fn of the case)."""
    out = input
    for k, m in enumerate(maps):
        if m is not None:
            out = np.take(out, m, axis=input.ndim - len(maps) + k)
    return np.ascontiguousarray(out)


@_take_axes.defvjp
def _(grad, maps, name, input_shape):
    return _put_axes(grad, maps, tuple(input_shape[len(input_shape) - len(maps):]), name)


_take_axes.defjvp_linear()


def _backward_name(maps, sizes, name):
    return name.replace("Backward0", "BackwardBackward0")


@op("_put_axes", grad_fn=_backward_name, promote=None,
    note="d/dgrad = the gradient taken at the copied positions again")
def _put_axes(grad, maps, sizes, name):
    """The transpose of :func:`_take_axes`: each element of ``grad`` added into its source position (a 0/1
    matrix per dim, applied by one BLAS product)."""
    out = grad
    for k, (m, s) in enumerate(zip(maps, sizes)):
        if m is None:
            continue
        axis = grad.ndim - len(maps) + k
        onehot = np.zeros((len(m), s), dtype=grad.dtype)
        onehot[np.arange(len(m)), m] = 1
        out = np.moveaxis(np.tensordot(out, onehot, axes=([axis], [0])), -1, axis)
    return np.ascontiguousarray(out)


@_put_axes.defvjp
def _(grad, maps, name):
    return _take_axes(grad, maps, name)


_put_axes.defjvp_linear()


@op("_separable", grad_fn=_name_grad_fn, promote=None,
    note="d/dx = the gradient through the transposed matrices, dim by dim")
def _separable(input, mats, name):
    """A linear map of the trailing dims, one matrix (out_size, in_size) per dim (None to leave it) applied
    from the last dim backwards: adaptive_avg_pool2d and linear/bilinear interpolation (``name`` is PyTorch's
    grad_fn of the case)."""
    out = input
    for k in reversed(range(len(mats))):
        m = mats[k]
        if m is not None:
            axis = input.ndim - len(mats) + k
            out = np.moveaxis(np.tensordot(out, m.astype(input.dtype), axes=([axis], [1])), -1, axis)
    return np.ascontiguousarray(out)


@_separable.defvjp
def _(grad, mats, name):
    return _separable(grad, tuple(None if m is None else np.ascontiguousarray(m.T) for m in mats),
                      name.replace("Backward0", "BackwardBackward0"))


_separable.defjvp_linear()


@composite("pad", grad_fn="ConstantPadNdBackward0 (constant) | ReflectionPad{1,2}DBackward0 (reflect) | "
                          "ReplicationPad{1,2}DBackward0 (replicate) | CopySlices (circular)",
           note="d/dx = the gradient of the copied elements added back to where they came from")
def pad(input, pad, mode="constant", value=None):
    """``input`` padded: ``pad`` is (left, right) for the last dim, then (top, bottom) for the one before, and
    so on. ``mode`` "constant" (with ``value``, default 0; negative amounts crop), "reflect" (mirror without the
    edge), "replicate" (the edge repeated) or "circular" (wrapped around); the non-constant modes pad the last
    1 or 2 dims of a (C, L)/(N, C, L) or (C, H, W)/(N, C, H, W) input. Matches torch.nn.functional.pad.

    Raises:
        RuntimeError: PyTorch's messages for an odd or too long ``pad``, a value with a non-constant mode,
            reflect padding not smaller than the dim.
        NotImplementedError: for an unknown mode or a pad length the mode does not support.
    """
    input = to_tensor(input)
    pad = [int(p) for p in pad]
    grown = list(input.shape)
    for i in range(min(len(pad) // 2, len(grown))):
        grown[-1 - i] += pad[2 * i] + pad[2 * i + 1]
    limits.check_numel(grown, "pad()")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but "
                           f"got padding length {len(pad)} and input of dimension {input.ndim}")
    if mode == "constant":
        return constant_pad_nd(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    nd = len(pad) // 2
    if nd not in (1, 2) or input.ndim not in (nd + 1, nd + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\nSupported combinations "
            f"for non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D "
            f"input: padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last "
            f"3 dimensions)")
    maps = []
    for i in range(nd):
        size = input.shape[input.ndim - nd + i]
        lo, hi = pad[2 * (nd - 1 - i)], pad[2 * (nd - 1 - i) + 1]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension,"
                               f" but got: padding ({lo}, {hi}) at dimension {input.ndim - nd + i} of input "
                               f"{list(input.shape)}")
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        maps.append(_index_maps(mode, size, lo, hi))
    if mode != "circular" and input.data.dtype == np.bool_:
        _refuse(f"{'reflection' if mode == 'reflect' else 'replication'}_pad{nd}d", input, "fiu")
    if mode == "circular":
        name = "CopySlices"
    else:
        name = f"{'ReflectionPad' if mode == 'reflect' else 'ReplicationPad'}{nd}DBackward0"
    return _take_axes(input, tuple(maps), name)


# ------------------------------------------------------------------------------------------------- pools
def _refuse(kernel: str, input, kinds: str, *also) -> None:
    """PyTorch's NotImplementedError for a dtype its CPU kernel does not dispatch (``"avg_pool2d" not implemented
    for 'Bool'``): ``input``'s dtype must be of one of the numpy ``kinds`` or one of ``also``."""
    dt = input.data.dtype
    if dt.kind not in kinds and dt not in also:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(dt)}'")


def _pool_args(fname: str, kernel_size, stride, padding, dilation, nd: int = 2):
    """kernel_size, stride (default: the kernel size), padding, dilation as ``nd``-tuples (PyTorch's
    pooling_output_shape checks)."""
    def tup(v, name):
        if isinstance(v, (list, tuple)):
            v = tuple(int(x) for x in v)
            if len(v) == 1:
                v = v * nd
            if len(v) != nd:
                raise RuntimeError(f"{fname}: {name} must either be a single int, or a tuple of two ints")
            return v
        return (int(v),) * nd

    k = tup(kernel_size, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not len(stride)) else \
        tup(stride, "stride must either be omitted, a single int, or a tuple of two ints")
    p = tup(padding, "padding")
    d = tup(dilation, "dilation")
    if any(x <= 0 for x in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[-1]}")
    if any(x <= 0 for x in s):
        raise RuntimeError("stride should not be zero")
    if any(x <= 0 for x in d):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[-1]}")
    for pp, kk, dd in zip(p, k, d):
        if pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                               f"kernel_size={kk} and dilation={dd}")
    return k, s, p, d


def _pool_out(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling_output_shape: in ceil mode the last window must start inside the input or its left
    padding."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    o = num // s + 1
    if ceil_mode and (o - 1) * s >= size + p:
        o -= 1
    return o


def _pool_input(fname: str, input, nd: int = 2):
    input = to_tensor(input)
    if input.ndim not in (nd + 1, nd + 2) or any(s == 0 for s in input.shape[1:]):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    return input


def _pool_windows(x: np.ndarray, k, s, p, d, out, fill) -> np.ndarray:
    """(M, 1, *out, *K) windows of ``x`` (..., H, W) flattened to M leading rows, padded with ``fill`` (left
    ``p``; right enough for the last ceil-mode window)."""
    nd = len(k)
    lead = x.shape[:-nd]
    xm = x.reshape((_prod(lead), 1) + x.shape[-nd:])
    widths = [(0, 0), (0, 0)]
    for size, kk, ss, pp, dd, o in zip(x.shape[-nd:], k, s, p, d, out):
        widths.append((pp, max(pp, (o - 1) * ss + dd * (kk - 1) + 1 - size - pp)))
    xp = np.pad(xm, widths, constant_values=fill) if any(w != (0, 0) for w in widths) else xm
    return _windows(xp, k, s, d, out)


def _gather_grad_fn(indices, name):
    return name


@op("_pool_gather", grad_fn=_gather_grad_fn, promote=None,
    note="d/dx = each output's gradient added at the input position it was taken from")
def _pool_gather(input, indices, name):
    """``input`` (..., *S) taken at ``indices`` (..., *out), flat positions within each trailing ``S``."""
    rows = _prod(indices.shape[:-2])
    flat = input.reshape(rows, -1)
    return np.take_along_axis(flat, indices.reshape(rows, -1), axis=1).reshape(indices.shape)


@_pool_gather.defvjp
def _(grad, indices, input_shape):
    return _pool_scatter(grad, indices, tuple(input_shape))


_pool_gather.defjvp_linear()


@op("_pool_scatter", grad_fn="MaxPool2DWithIndicesBackwardBackward0", promote=None,
    note="d/dgrad = the gradient of the input taken at the indices again")
def _pool_scatter(grad, indices, input_shape):
    """Zeros of ``input_shape`` with each element of ``grad`` added at its flat position ``indices`` (within
    the trailing dims; repeated positions accumulate)."""
    rows = _prod(input_shape[:-2])
    size = _prod(input_shape) // rows
    idx = (indices.reshape(rows, -1) + (np.arange(rows) * size)[:, None]).reshape(-1)
    out = np.bincount(idx, weights=grad.reshape(-1), minlength=rows * size)
    return out.astype(grad.dtype).reshape(input_shape)


@_pool_scatter.defvjp
def _(grad, indices):
    return _pool_gather(grad, indices, "MaxPool2DWithIndicesBackward0")


_pool_scatter.defjvp_linear()


def _max_pool_indices(x: np.ndarray, k, s, p, d, ceil_mode: bool) -> np.ndarray:
    """The flat index (within each image's trailing dims) of each window's maximum: the first maximum in the
    window's row-major order, the last NaN if any, the first tap inside the input if every value is the
    lowest (-inf) (PyTorch's CPU max_pool kernel)."""
    nd = len(k)
    sizes = x.shape[-nd:]
    out = tuple(_pool_out(n, kk, ss, pp, dd, ceil_mode) for n, kk, ss, pp, dd in zip(sizes, k, s, p, d))
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, x.shape[-nd - 1:]))}). Calculated output size: "
                           f"({'x'.join(map(str, (x.shape[-nd - 1],) + out))}). Output size is too small")
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    limits.check_numel(x.shape[:-nd] + out + (_prod(k),), "the pooling windows")
    win = _pool_windows(x, k, s, p, d, out, fill)
    m = win.shape[0]
    flat = win.reshape((m,) + out + (_prod(k),))
    arg = flat.argmax(-1)
    if x.dtype.kind == "f":  # the kernel's ``val > maxval || isnan(val)``: the last NaN of a window wins
        nan = np.isnan(flat)
        if nan.any():
            arg = np.where(nan.any(-1), flat.shape[-1] - 1 - nan[..., ::-1].argmax(-1), arg)
    low = np.take_along_axis(flat, arg[..., None], -1)[..., 0] == fill
    if low.any():  # nothing above the padding's value: the kernel keeps its first tap inside the input
        real = _pool_windows(np.ones((1,) + sizes, dtype=np.int8), k, s, p, d, out, 0)
        first = real.reshape((1,) + out + (_prod(k),)).argmax(-1)
        arg = np.where(low, first, arg)
    # window offset → input position along each dim, then the flat position
    pos = np.zeros(arg.shape, dtype=np.int64)
    rest = arg
    offs = []
    for kk in reversed(k):
        offs.append(rest % kk)
        rest = rest // kk
    offs = offs[::-1]
    for i in range(nd):
        start = np.arange(out[i]) * s[i] - p[i]
        shape = [1] * (1 + nd)
        shape[1 + i] = out[i]
        coord = start.reshape(shape) + offs[i] * d[i]
        pos = pos * sizes[i] + coord
    return pos.reshape(x.shape[:-nd] + out)


@composite("max_pool2d", grad_fn="MaxPool2DWithIndicesBackward0",
           note="d/dx = each window's gradient at the position of its maximum")
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each ``kernel_size`` window of ``input`` (N, C, H, W) or (C, H, W), windows every
    ``stride`` (default ``kernel_size``), taps ``dilation`` apart, over ``-inf`` padding; output sizes
    ``(size + 2 padding - dilation (k - 1) - 1 [+ stride - 1 in ceil_mode]) // stride + 1``. With
    ``return_indices`` also the flat position (h * W + w) of each maximum (int64): ``(values, indices)``.
    The first maximum of a window wins. Matches torch.nn.functional.max_pool2d (grad_fn
    MaxPool2DWithIndicesBackward0).

    Raises:
        RuntimeError: PyTorch's messages for an empty or wrongly shaped input, zero stride or kernel, padding
            above half the kernel, an output size below 1.
        NotImplementedError: for a bool input ("max_pool2d" not implemented for 'Bool').
    """
    input = _pool_input("max_pool2d", input)
    if input.data.dtype == np.bool_:
        raise NotImplementedError("\"max_pool2d\" not implemented for 'Bool'")
    k, s, p, d = _pool_args("max_pool2d", kernel_size, stride, padding, dilation)
    idx = _max_pool_indices(input.data, k, s, p, d, ceil_mode)
    values = _pool_gather(input, idx, "MaxPool2DWithIndicesBackward0")
    return (values, Tensor(idx)) if return_indices else values


@composite("max_pool1d", grad_fn="SqueezeBackward1",
           note="d/dx = each window's gradient at the position of its maximum")
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each window along the last dim of ``input`` (N, C, L) or (C, L): max_pool2d on a
    height-1 view, as PyTorch computes it. Matches torch.nn.functional.max_pool1d (grad_fn SqueezeBackward1).

    Raises:
        RuntimeError: as :func:`max_pool2d` (PyTorch's max_pool1d message for a wrong number of dims).
    """
    input = to_tensor(input)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{list(input.shape)}")
    _refuse("max_pool1d_impl", input, "f")
    one = lambda v: (1,) + (tuple(v) if isinstance(v, (list, tuple)) else (v,))  # noqa: E731
    r = max_pool2d(unsqueeze(input, -2), one(kernel_size), None if stride is None else one(stride),
                   (0,) + one(padding)[1:], one(dilation), ceil_mode, return_indices)
    if return_indices:
        return squeeze(r[0], -2), Tensor(r[1].data.reshape(r[1].shape[:-2] + r[1].shape[-1:]))
    return squeeze(r, -2)


def _avg_divisors(sizes, k, s, p, out, count_include_pad: bool, divisor_override):
    """The divisor of each output position (an array of ``out``'s shape): PyTorch's avg_pool2d kernel (window
    clipped to the padded input; without count_include_pad to the input itself)."""
    if divisor_override is not None:
        return np.full(out, float(divisor_override))
    div = np.ones(out)
    for i, (n, kk, ss, pp, o) in enumerate(zip(sizes, k, s, p, out)):
        start = np.arange(o) * ss - pp
        end = np.minimum(start + kk, n + pp)
        size = end - start
        if not count_include_pad:
            size = np.minimum(end, n) - np.maximum(start, 0)
        shape = [1] * len(out)
        shape[i] = o
        div = div * size.reshape(shape)
    return div


def _avg_grad_fn(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return f"AvgPool{len(kernel_size)}DBackward0"


@op("_avg_pool", grad_fn=_avg_grad_fn, promote=None,
    note="d/dx = each window's gradient divided by its divisor, spread over the window")
def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """The average of each window over the trailing ``len(kernel_size)`` dims (zero padding)."""
    k, s, p = kernel_size, stride, padding
    nd = len(k)
    sizes = input.shape[-nd:]
    out = tuple(_pool_out(n, kk, ss, pp, 1, ceil_mode) for n, kk, ss, pp in zip(sizes, k, s, p))
    win = _pool_windows(input, k, s, p, (1,) * nd, out, 0)
    total = win.sum(axis=tuple(range(2 + nd, 2 + 2 * nd)))
    div = _avg_divisors(sizes, k, s, p, out, count_include_pad, divisor_override)
    return (total / div.astype(input.dtype)).astype(input.dtype).reshape(input.shape[:-nd] + out)


@_avg_pool.defvjp
def _(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, input_shape):
    return _avg_pool_backward(grad, tuple(input_shape), kernel_size, stride, padding, ceil_mode,
                              count_include_pad, divisor_override)


_avg_pool.defjvp_linear()


@op("_avg_pool_backward", grad_fn="AvgPool2DBackwardBackward0", promote=None,
    note="d/dgrad = the average pool of the gradient")
def _avg_pool_backward(grad, input_shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override):
    """The gradient of :func:`_avg_pool`: each output's gradient over its divisor, added over its window."""
    k, s, p = kernel_size, stride, padding
    nd = len(k)
    sizes = tuple(input_shape[-nd:])
    out = grad.shape[-nd:]
    div = _avg_divisors(sizes, k, s, p, out, count_include_pad, divisor_override)
    g = (grad / div.astype(grad.dtype)).astype(grad.dtype)
    m = _prod(input_shape[:-nd])
    g = g.reshape((m,) + (1,) * nd + (1,) + tuple(out))
    cols = np.broadcast_to(g, (m,) + tuple(k) + (1,) + tuple(out))
    return _col2im(cols, sizes, k, s, p, (1,) * nd).reshape(input_shape)


@_avg_pool_backward.defvjp
def _(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return _avg_pool(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


_avg_pool_backward.defjvp_linear()


@composite("avg_pool2d", grad_fn="AvgPool2DBackward0", note=_avg_pool.note)
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The average of each ``kernel_size`` window of ``input`` (N, C, H, W) or (C, H, W), windows every
    ``stride`` (default ``kernel_size``) over zero ``padding``; the divisor is the window's size clipped to the
    padded input (``count_include_pad=False``: to the input), or ``divisor_override``. Float dtypes and int64.
    Matches torch.nn.functional.avg_pool2d (grad_fn AvgPool2DBackward0).

    Raises:
        RuntimeError: PyTorch's messages for an empty or wrongly shaped input, zero stride, padding above half
            the kernel, a zero divisor_override, an output size below 1.
    """
    input = _pool_input("avg_pool2d", input)
    _refuse("avg_pool2d", input, "f", np.int64)
    k, s, p, _ = _pool_args("avg_pool2d", kernel_size, stride, padding, 1)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    out = tuple(_pool_out(n, kk, ss, pp, 1, ceil_mode) for n, kk, ss, pp in zip(input.shape[-2:], k, s, p))
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, input.shape[-3:]))}). Calculated output size: "
                           f"({'x'.join(map(str, (input.shape[-3],) + out))}). Output size is too small")
    return _avg_pool(input, k, s, p, bool(ceil_mode), bool(count_include_pad), divisor_override)


@composite("avg_pool1d", grad_fn="SqueezeBackward1", note=_avg_pool.note)
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """The average of each window along the last dim of ``input`` (N, C, L) or (C, L): avg_pool2d on a
    height-1 view, as PyTorch computes it. Matches torch.nn.functional.avg_pool1d (grad_fn SqueezeBackward1).

    Raises:
        RuntimeError: as :func:`avg_pool2d`; PyTorch's avg_pool1d message for a wrong number of dims.
    """
    input = to_tensor(input)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for avg_pool1d)")
    _refuse("avg_pool2d", input, "f", np.int64)
    one = lambda v: (1,) + (tuple(v) if isinstance(v, (list, tuple)) else (v,))  # noqa: E731
    r = avg_pool2d(unsqueeze(input, -2), one(kernel_size), None if stride is None else one(stride),
                   (0,) + one(padding)[1:], ceil_mode, count_include_pad)
    return squeeze(r, -2)


# ------------------------------------------------------------------------------------ adaptive pool, resize
def _adaptive_matrix(n: int, o: int) -> np.ndarray:
    """(o, n): row i averages input positions floor(i n / o) to ceil((i + 1) n / o) (PyTorch's start_index and
    end_index)."""
    i = np.arange(o)
    start = (i * n) // o
    end = ((i + 1) * n + o - 1) // o
    j = np.arange(n)
    inside = (j[None, :] >= start[:, None]) & (j[None, :] < end[:, None])
    return inside / (end - start)[:, None]


@composite("adaptive_avg_pool2d", grad_fn="AdaptiveAvgPool2DBackward0 | MeanBackward1 (output size 1)",
           note="d/dx = each output's gradient spread evenly over its window")
def adaptive_avg_pool2d(input, output_size):
    """The average over windows that split the last two dims of ``input`` (N, C, H, W) or (C, H, W) into
    ``output_size`` (an int, or a pair whose None keeps that size) cells: cell i covers floor(i H / oH) to
    ceil((i + 1) H / oH). Float dtypes. Matches torch.nn.functional.adaptive_avg_pool2d (grad_fn
    AdaptiveAvgPool2DBackward0; MeanBackward1 for an output of 1x1, which PyTorch computes as a mean).

    Raises:
        ValueError: for fewer than 3 dims ("Input dimension should be at least 3").
        RuntimeError: for a wrong number of dims or an empty input.
        NotImplementedError: for an integer input.
    """
    input = to_tensor(input)
    if input.ndim < 3:
        raise ValueError("Input dimension should be at least 3")
    if input.ndim > 4 or any(s == 0 for s in input.shape[-2:]):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    if input.data.dtype.kind != "f":
        raise NotImplementedError(f"\"adaptive_avg_pool2d\" not implemented for "
                                  f"'{dtypes.scalar_type_name(input.data.dtype)}'")
    size = (output_size, output_size) if not isinstance(output_size, (list, tuple)) else tuple(output_size)
    h, w = input.shape[-2:]
    oh, ow = (h if size[0] is None else int(size[0])), (w if size[1] is None else int(size[1]))
    if (oh, ow) == (1, 1):
        return mean(input, (-1, -2), True)
    return _separable(input, (_adaptive_matrix(h, oh), _adaptive_matrix(w, ow)), "AdaptiveAvgPool2DBackward0")


@composite("adaptive_avg_pool1d", grad_fn="SqueezeBackward1",
           note="d/dx = each output's gradient spread evenly over its window")
def adaptive_avg_pool1d(input, output_size):
    """The average over ``output_size`` windows splitting the last dim of ``input`` (N, C, L) or (C, L): cell i
    covers floor(i L / o) to ceil((i + 1) L / o). adaptive_avg_pool2d on a height-1 view, as PyTorch computes
    it. Matches torch.nn.functional.adaptive_avg_pool1d (grad_fn SqueezeBackward1).

    Raises:
        RuntimeError: PyTorch's message for an input that is not 2-d or 3-d.
    """
    input = to_tensor(input)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for adaptive_avg_pool1d)")
    o = output_size[0] if isinstance(output_size, (list, tuple)) else output_size
    return squeeze(adaptive_avg_pool2d(unsqueeze(input, -2), (1, o)), -2)


def _interp_sizes(input, size, scale_factor, nd, recompute_scale_factor):
    """The output sizes and the scales (None: from the sizes) of F.interpolate."""
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = tuple(size) if isinstance(size, (list, tuple)) else (size,) * nd
        if len(sizes) != nd:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(input.shape[2:])} and output size of "
                             f"{list(sizes)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             f"output size in (o1, o2, ...,oK) format.")
        return tuple(int(s) for s in sizes), (None,) * nd
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    scales = tuple(scale_factor) if isinstance(scale_factor, (list, tuple)) else (scale_factor,) * nd
    if len(scales) != nd:
        raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                         f"with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                         f"{list(scales)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                         f"scale_factor in (s1, s2, ...,sK) format.")
    sizes = tuple(int(math.floor(float(n) * float(s))) for n, s in zip(input.shape[2:], scales))
    return sizes, ((None,) * nd if recompute_scale_factor else tuple(float(s) for s in scales))


def _nearest_map(n: int, o: int, scale) -> np.ndarray:
    """PyTorch's nearest_idx: floor(dst * scale) in float32 (scale = 1 / scale_factor, or in / out)."""
    if o == n:
        return np.arange(o)
    if o == 2 * n:
        return np.arange(o) >> 1
    s = np.float32(1.0 / scale if scale is not None else n / o)
    return np.minimum(np.floor(np.arange(o, dtype=np.float32) * s).astype(np.int64), n - 1)


def _nearest_exact_map(n: int, o: int, scale) -> np.ndarray:
    """PyTorch's nearest_neighbor_exact_compute_source_index: floor((dst + 0.5) * scale) in float32."""
    s = np.float32(1.0 / scale if scale is not None else n / o)
    src = np.floor((np.arange(o, dtype=np.float32) + np.float32(0.5)) * s).astype(np.int64)
    return np.minimum(src, n - 1)


def _linear_matrix(n: int, o: int, scale, align_corners: bool, dtype) -> np.ndarray:
    """(o, n) interpolation weights of PyTorch's upsample_linear/bilinear (area_pixel_compute_source_index,
    computed in the op's dtype as its kernel does for float and double)."""
    ft = np.float64 if dtype == np.float64 else np.float32
    if align_corners:
        s = ft((n - 1) / (o - 1)) if o > 1 else ft(0)
        src = ft(s) * np.arange(o, dtype=ft)
    else:
        s = ft(1.0 / scale) if scale is not None and scale > 0 else ft(n / o)
        src = np.maximum(s * (np.arange(o, dtype=ft) + ft(0.5)) - ft(0.5), ft(0))
    i0 = np.floor(src).astype(np.int64)
    i0 = np.minimum(i0, n - 1)
    i1 = np.where(i0 < n - 1, i0 + 1, i0)
    l1 = (src - i0.astype(ft)).astype(ft)
    l0 = (ft(1) - l1).astype(ft)
    m = np.zeros((o, n), dtype=ft)
    rows = np.arange(o)
    np.add.at(m, (rows, i0), l0)
    np.add.at(m, (rows, i1), l1)
    return m


@composite("interpolate", grad_fn="UpsampleNearest{1,2}DBackward0 | UpsampleNearestExact{1,2}DBackward0 | "
                                  "UpsampleLinear1DBackward0 | UpsampleBilinear2DBackward0 | "
                                  "AdaptiveAvgPool2DBackward0 (area)",
           note="d/dx = the gradient through the transposed interpolation weights")
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims of ``input`` (N, C, L) or (N, C, H, W) to ``size`` or ``floor(size *
    scale_factor)``: mode "nearest" (the source at floor(dst * scale)), "nearest-exact" (at floor((dst + 0.5)
    * scale)), "linear" (3-d input) or "bilinear" (4-d), with ``align_corners`` (corner pixels aligned: scale
    (in - 1) / (out - 1)) or half-pixel centres, or "area" (adaptive average pooling to the size). Float
    dtypes. Matches torch.nn.functional.interpolate (grad_fn UpsampleNearest1D/2DBackward0,
    UpsampleNearestExact1D/2DBackward0, UpsampleLinear1DBackward0, UpsampleBilinear2DBackward0; area:
    adaptive_avg_pool's).

    Raises:
        ValueError: PyTorch's messages for both or neither of size and scale_factor, align_corners with
            nearest, a sequence of the wrong length.
        NotImplementedError: for a mode gradcli does not have (bicubic, trilinear, lanczos) or
            an input of the wrong number of dims for the mode.
    """
    input = to_tensor(input)
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if antialias:
        raise NotImplementedError("gradcli's interpolate has no antialias")
    nd = input.ndim - 2
    modes = ("nearest", "linear", "bilinear", "area", "nearest-exact")
    if nd not in (1, 2) or mode not in modes:
        if mode in modes and input.ndim >= 3:
            raise NotImplementedError(f"gradcli's interpolate has no {nd}-d {mode} mode")
        if mode in ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact"):
            raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) "
                                      f"for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | "
                                      f"area | nearest-exact (got {mode})")
        raise NotImplementedError(f"gradcli's interpolate has no mode {mode!r}")
    if mode == "linear" and nd != 1:
        raise NotImplementedError(f"Got {input.ndim}D input, but linear mode needs 3D input")
    if mode == "bilinear" and nd != 2:
        raise NotImplementedError(f"Got {input.ndim}D input, but bilinear mode needs 4D input")
    sizes, scales = _interp_sizes(input, size, scale_factor, nd, recompute_scale_factor)
    if mode == "area":  # torch.nn.functional.interpolate: adaptive_avg_pool{1,2}d to the sizes
        return adaptive_avg_pool1d(input, sizes) if nd == 1 else adaptive_avg_pool2d(input, sizes)
    kernel = mode.replace("-", "_")
    if nd == 1:
        _refuse(f"compute_indices_weights_{kernel}", input, "f")
    _refuse(f"upsample_{kernel}2d_channels_last", input, "f")
    limits.check_numel(tuple(input.shape[:2]) + sizes, "interpolate()")
    ins = input.shape[2:]
    if mode == "nearest":
        maps = tuple(_nearest_map(n, o, s) for n, o, s in zip(ins, sizes, scales))
        return _take_axes(input, maps, f"UpsampleNearest{nd}DBackward0")
    if mode == "nearest-exact":
        maps = tuple(_nearest_exact_map(n, o, s) for n, o, s in zip(ins, sizes, scales))
        return _take_axes(input, maps, f"UpsampleNearestExact{nd}DBackward0")
    align = bool(align_corners)
    mats = tuple(_linear_matrix(n, o, s, align, input.data.dtype) for n, o, s in zip(ins, sizes, scales))
    return _separable(input, mats, "UpsampleLinear1DBackward0" if nd == 1 else "UpsampleBilinear2DBackward0")


# ----------------------------------------------------------------------------------------- unfold, fold
def _fold_args(name, kernel_size, dilation, padding, stride):
    def tup(v):
        return tuple(int(x) for x in v) if isinstance(v, (list, tuple)) else (int(v), int(v))

    k, d, p, s = tup(kernel_size), tup(dilation), tup(padding), tup(stride)
    if any(x <= 0 for x in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} "
                           f"kernel_width: {k[1]}")
    if any(x <= 0 for x in s):
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} stride_width: "
                           f"{s[1]}")
    if any(x <= 0 for x in d):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} "
                           f"dilation_width: {d[1]}")
    if any(x < 0 for x in p):
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    return k, d, p, s


@op("_im2col", grad_fn="Im2ColBackward0", promote=None, note="d/dx = fold (col2im) of the gradient")
def _im2col(input, kernel_size, dilation, padding, stride):
    """(N, C, H, W) → (N, C * kH * kW, L): every block, channels then kernel offsets down the rows; (C, H, W) →
    (C * kH * kW, L)."""
    if input.ndim == 3:
        return _im2col(input[None], kernel_size, dilation, padding, stride)[0]
    n, c = input.shape[:2]
    out = _conv_out(input.shape[2:], kernel_size, stride, padding, dilation)
    win = _windows(_pad_spatial(input, padding), kernel_size, stride, dilation, out)  # (N, C, oh, ow, kh, kw)
    return np.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(n, c * _prod(kernel_size),
                                                                          _prod(out))


@_im2col.defvjp
def _(grad, kernel_size, dilation, padding, stride, input_shape):
    return _col2im_op(grad, tuple(input_shape[-2:]), kernel_size, dilation, padding, stride)


_im2col.defjvp_linear()


@op("_col2im", grad_fn="Col2ImBackward0", promote=None, note="d/dx = unfold (im2col) of the gradient")
def _col2im_op(input, output_size, kernel_size, dilation, padding, stride):
    """(N, C * kH * kW, L) → (N, C, *output_size): each block added back into place; (C * kH * kW, L) →
    (C, *output_size)."""
    if input.ndim == 2:
        return _col2im_op(input[None], output_size, kernel_size, dilation, padding, stride)[0]
    n = input.shape[0]
    out = _conv_out(output_size, kernel_size, stride, padding, dilation)
    c = input.shape[1] // _prod(kernel_size)
    cols = input.reshape((n, c) + tuple(kernel_size) + tuple(out)).transpose(1, 2, 3, 0, 4, 5)
    return _col2im(cols, tuple(output_size), kernel_size, stride, padding, dilation)


@_col2im_op.defvjp
def _(grad, output_size, kernel_size, dilation, padding, stride):
    return _im2col(grad, kernel_size, dilation, padding, stride)


_col2im_op.defjvp_linear()


@composite("unfold", grad_fn="Im2ColBackward0", note=_im2col.note)
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of ``input`` (N, C, H, W) or (C, H, W) as columns: (N, C * kH * kW, L), L the number
    of blocks. Matches torch.nn.functional.unfold (grad_fn Im2ColBackward0).

    Raises:
        RuntimeError: PyTorch's messages for a non-positive kernel size, stride or dilation, negative padding,
            an input that is not 3-d or 4-d, no block fitting.
    """
    input = to_tensor(input)
    if input.ndim not in (3, 4) or any(s == 0 for s in input.shape[1:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(input.shape)}")
    _refuse("im2col_out_cpu", input, "f")
    k, d, p, s = _fold_args("unfold", kernel_size, dilation, padding, stride)
    x = input
    out = _conv_out(x.shape[-2:], k, s, p, d)
    if any(o < 1 for o in out):
        raise RuntimeError(f"Given input with spatial size ({x.shape[-2]}, {x.shape[-1]}), kernel_size=({k[0]}, "
                           f"{k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of "
                           f"the array of sliding blocks as ({out[0]}, {out[1]}), but its components must be at "
                           f"least one.")
    return _im2col(x, k, d, p, s)


@composite("fold", grad_fn="Col2ImBackward0", note=_col2im_op.note)
def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The inverse layout of :func:`unfold`: columns (N, C * kH * kW, L) or (C * kH * kW, L) added back into an
    image (N, C, *output_size); overlapping blocks sum. Matches torch.nn.functional.fold (grad_fn
    Col2ImBackward0).

    Raises:
        RuntimeError: PyTorch's messages for a channel count not divisible by the kernel's size, a block count
            that does not match output_size, bad kernel size, stride, dilation or padding.
    """
    input = to_tensor(input)
    if input.ndim not in (2, 3) or any(s == 0 for s in input.shape[1:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(input.shape)}")
    _refuse("col2im_out_cpu", input, "f")
    k, d, p, s = _fold_args("fold", kernel_size, dilation, padding, stride)
    osize = tuple(int(x) for x in output_size) if isinstance(output_size, (list, tuple)) else \
        (int(output_size),) * 2
    x = input
    if x.shape[-2] % _prod(k):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={x.shape[-2]} and kernel_size=({k[0]}, {k[1]}).")
    out = _conv_out(osize, k, s, p, d)
    if _prod(out) != x.shape[-1] or any(o < 1 for o in out):
        raise RuntimeError(f"Given output_size=({osize[0]}, {osize[1]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
                           f"expected size of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {out[0]} * {out[1]} = {_prod(out)}, but got input.size(2)={x.shape[-1]}.")
    return _col2im_op(x, osize, k, d, p, s)


# ----------------------------------------------------------------------------------------- Tensor.unfold
@op("_unfold_dim", grad_fn="UnfoldBackward0", promote=None,
    note="d/dx = each window's gradient added back at the positions it covers")
def _unfold_dim(input, dimension, size, step):
    """Windows of ``size`` every ``step`` along ``dimension``: that dim becomes the window count and a last dim
    of ``size`` is added (a copy; PyTorch's is a view)."""
    if input.ndim == 0:
        return input.reshape(1).copy()
    win = sliding_window_view(input, size, axis=dimension)
    sl = [slice(None)] * input.ndim
    sl[dimension] = slice(None, None, step)
    return np.ascontiguousarray(win[tuple(sl)])


@_unfold_dim.defvjp
def _(grad, dimension, size, step, input_shape):
    return _unfold_dim_backward(grad, tuple(input_shape), dimension, size, step)


_unfold_dim.defjvp_linear()


@op("_unfold_dim_backward", grad_fn="UnfoldBackwardBackward0", promote=None,
    note="d/dgrad = the windows of the gradient")
def _unfold_dim_backward(grad, input_shape, dimension, size, step):
    """The transpose of :func:`_unfold_dim`: each window added back into zeros of ``input_shape``, one strided add
    per offset within the window (PyTorch's unfold_backward)."""
    if len(input_shape) == 0:
        return grad.reshape(())
    out = np.zeros(input_shape, dtype=grad.dtype)
    n = grad.shape[dimension]
    for j in range(size):
        sl = [slice(None)] * len(input_shape)
        sl[dimension] = slice(j, j + (n - 1) * step + 1, step)
        out[tuple(sl)] += grad[..., j]
    return out


@_unfold_dim_backward.defvjp
def _(grad, dimension, size, step):
    return _unfold_dim(grad, dimension, size, step)


_unfold_dim_backward.defjvp_linear()


@tensor_method("unfold")
def _tensor_unfold(self, dimension, size, step):
    """``Tensor.unfold(dimension, size, step)``: every window of ``size`` elements along ``dimension``, ``step``
    apart, as a new last dim (shape: ``dimension`` becomes ``(n - size) // step + 1``). Matches
    torch.Tensor.unfold (grad_fn UnfoldBackward0; gradcli's result is a copy, PyTorch's a view).

    Raises:
        RuntimeError: PyTorch's messages for a window larger than the dim or a non-positive step.
        IndexError: for a dimension out of range.
    """
    nd = self.ndim
    dim = normalize_dim(dimension, max(nd, 1))
    n = self.shape[dim] if nd else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return _unfold_dim(self, dim, int(size), int(step))

"""Convolution: conv1d/2d/3d and conv_transpose1d/2d/3d, as torch.nn.functional computes them and names
their backward (aten::_convolution and the op of its weight's gradient), on the im2col kernels of
:mod:`._im2col`.

A convolution is bilinear in (input, weight): with ``conv(X, w)``, its transposed ``convT(Y, w)`` and the
weight's gradient ``convW(X, Y)``, ``<conv(X, w), Y> = <X, convT(Y, w)> = <w, convW(X, Y)>``. So every
derivative of each of the three is one of the three (PyTorch's convolution_backward and its double backward,
torch/csrc/autograd/FunctionsManual.cpp ``_convolution_double_backward``): the rules below are written with
these ops, which makes second derivatives (and forward mode over reverse) work.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...engine import dtypes, limits
from ...engine.tensor import to_tensor
from ..core.declare import composite, op
from ..reduction.reductions import sum
from ..shape.views import reshape, squeeze, unsqueeze
from ._im2col import _col2im, _conv_out, _pad_spatial, _prod, _windows
from .resampling import constant_pad_nd


# ------------------------------------------------------------------------------------------ numpy kernels
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


def _bmm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` per group: numpy's stacked matmul does not reach BLAS's speed (a 2-d product measured 7 to 10
    times faster on one group), so each group's product is one 2-d matmul."""
    if a.shape[0] == 1:
        return (a[0] @ b[0])[None]
    return np.stack([x @ y for x, y in zip(a, b)])


def _channel_first(y: np.ndarray, groups: int) -> np.ndarray:
    """(N, O, *out) → (G, O/G, N*P), contiguous."""
    n, o = y.shape[:2]
    return np.ascontiguousarray(y.reshape(n, o, -1).swapaxes(0, 1)).reshape(groups, o // groups, -1)


#: The most elements of one im2col matrix made at once: a larger batch goes through in slices of samples, so
#: that the 3-d convolutions of PyTorch's examples (a 20x16x10x50x100 input) need megabytes, not gigabytes.
_COLS_BUDGET = 1 << 24


def _batch_slices(n: int, per_sample: int) -> list:
    """Slices of the batch of ``n`` samples whose im2col matrices (``per_sample`` elements each) fit the budget
    (one sample at least)."""
    step = max(1, _COLS_BUDGET // max(per_sample, 1))
    return [slice(i, min(n, i + step)) for i in range(0, n, step)]


def _conv_np(x, w, stride, padding, dilation, groups) -> np.ndarray:
    """conv(X, w): (N, C, *S) with (O, C/G, *K) → (N, O, *out)."""
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    ksize = w.shape[2:]
    out = _conv_out(x.shape[2:], ksize, stride, padding, dilation)
    p = _prod(out)
    limits.check_numel((n, o) + tuple(out), "the convolution's result")
    wm = w.reshape(groups, o // groups, cg * _prod(ksize))
    y = np.empty((n, o, p), dtype=np.result_type(x.dtype, w.dtype))
    for sl in _batch_slices(n, c * _prod(ksize) * p):
        col = _cols(x[sl], ksize, stride, padding, dilation, out, groups)
        y[sl] = _bmm(wm, col).reshape(o, -1, p).swapaxes(0, 1)  # (G, O/G, n*P) → (n, O, P)
    return y.reshape((n, o) + tuple(out))


def _conv_t_np(y, w, spatial, stride, padding, dilation, groups) -> np.ndarray:
    """convT(Y, w): (N, O, *out) with (O, C/G, *K) → (N, C, *spatial), the transpose of :func:`_conv_np`."""
    n, o = y.shape[:2]
    out = y.shape[2:]
    cg = w.shape[1]
    ksize = w.shape[2:]
    wm = w.reshape(groups, o // groups, cg * _prod(ksize)).transpose(0, 2, 1)
    limits.check_numel((n, groups * cg) + tuple(spatial), "the transposed convolution's result")
    x = np.zeros((0, groups * cg) + tuple(spatial), dtype=np.result_type(y.dtype, w.dtype)) if n == 0 else None
    for sl in _batch_slices(n, groups * cg * _prod(ksize) * _prod(out)):
        cols = _bmm(wm, _channel_first(y[sl], groups))  # (G, C/G*K, n*P)
        cols = cols.reshape((groups * cg,) + tuple(ksize) + (-1,) + tuple(out))
        part = _col2im(cols, spatial, ksize, stride, padding, dilation)
        if x is None:
            if sl.stop == n:
                return part
            x = np.empty((n,) + part.shape[1:], dtype=part.dtype)
        x[sl] = part
    return x


def _conv_w_np(x, y, weight_shape, stride, padding, dilation, groups) -> np.ndarray:
    """convW(X, Y): the weight's gradient, (N, C, *S) and (N, O, *out) → (O, C/G, *K)."""
    n, c = x.shape[:2]
    out = y.shape[2:]
    ksize = tuple(weight_shape[2:])
    gw = np.zeros((groups, weight_shape[0] // groups, weight_shape[1] * _prod(ksize)),
                  dtype=np.result_type(x.dtype, y.dtype))
    for sl in _batch_slices(n, c * _prod(ksize) * _prod(out)):
        col = _cols(x[sl], ksize, stride, padding, dilation, out, groups)  # (G, C/G*K, n*P)
        gw = gw + _bmm(_channel_first(y[sl], groups), col.transpose(0, 2, 1))  # (G, O/G, C/G*K)
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
    note="d/dinput = conv_transpose(g, weight), d/dweight = the input's windows times g, d/dbias = sum(g)",
    formula="input: conv_transpose(grad, weight); weight: input's windows correlated with grad; bias: grad summed "
            "over batch and positions")
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
    note="bilinear: d/dinput = conv_transpose(grad_output, g), d/dgrad_output = conv(input, g)",
    formula="the derivative of a convolution's weight gradient (bilinear: a convolution or a transposed one)",
    jvp="multilinear")
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


def _conv_operands(fname: str, nd: int, input, weight, bias, transposed: bool):
    """``input``, ``weight`` and ``bias`` as tensors, checked for their number of dims and dtypes (PyTorch's
    messages, in its order)."""
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
    return input, weight, bias


def _conv_padding(padding, nd: int, stride, dilation, ksize):
    """``padding`` (an int, a list, 'valid' or 'same') as an ``nd``-tuple, and the extra pad (constant_pad_nd's
    ``pad`` list) that 'same' needs first when a kernel's total padding is odd, else None (PyTorch's
    _convolution_mode)."""
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
                # stacklevel: the caller of conv1d/conv2d (this helper is one frame below _conv)
                warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a "
                              "zero-padded copy of the input be created", UserWarning, stacklevel=4)
                pad_first = []
                for t in reversed(total):
                    pad_first += [0, t % 2]
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _tuple_arg(padding, nd, "padding")
    return padding, pad_first


def _check_conv_params(stride, padding, output_padding, dilation, groups) -> None:
    """PyTorch's check_shape_forward messages for non-positive strides, dilations or groups and negative
    paddings."""
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


def _check_transposed_shapes(nd: int, ishape, wshape, bias, stride, dilation, groups, output_padding) -> None:
    """A transposed convolution's channels, groups, bias and output_padding against its weight (C_in,
    C_out/G, *K)."""
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


def _check_forward_shapes(nd: int, ishape, wshape, bias, padding, dilation, groups, ksize, pad_first) -> None:
    """A convolution's groups, channels and bias against its weight (O, C/G, *K), and its kernel against the
    padded input (with 'same''s extra pad)."""
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


def _conv(fname: str, nd: int, input, weight, bias, stride, padding, dilation, groups, transposed=False,
          output_padding=0):
    """The checks and the call of aten::_convolution behind conv1d/conv2d/conv_transpose1d/conv_transpose2d
    (aten/src/ATen/native/Convolution.cpp: check_shape_forward, _convolution_mode for 'same'/'valid')."""
    input, weight, bias = _conv_operands(fname, nd, input, weight, bias, transposed)
    batched = input.ndim == nd + 2
    if not batched:
        input = unsqueeze(input, 0)
    if transposed and isinstance(padding, str):
        raise TypeError(f"{fname}(): argument 'padding' must be tuple of ints, not str")
    stride = _tuple_arg(stride, nd, "stride")
    dilation = _tuple_arg(dilation, nd, "dilation")
    output_padding = _tuple_arg(output_padding, nd, "output_padding")
    ksize = tuple(weight.shape[2:])
    padding, pad_first = _conv_padding(padding, nd, stride, dilation, ksize)
    _check_conv_params(stride, padding, output_padding, dilation, groups)
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
        _check_transposed_shapes(nd, ishape, wshape, bias, stride, dilation, groups, output_padding)
    else:
        _check_forward_shapes(nd, ishape, wshape, bias, padding, dilation, groups, ksize, pad_first)
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


@composite("conv3d", grad_fn="ConvolutionBackward0", note=_CONV_NOTE)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution (cross-correlation) of ``input`` (N, C, D, H, W) or unbatched (C, D, H, W) with ``weight``
    (O, C/groups, kD, kH, kW), plus ``bias`` (O,): each output size ``(size + 2 padding - dilation (k - 1) - 1)
    // stride + 1``; ``stride``, ``padding``, ``dilation`` ints or triples, ``padding`` also 'valid' or 'same'.
    Float and integer dtypes. Matches torch.nn.functional.conv3d (grad_fn ConvolutionBackward0).

    Raises:
        RuntimeError: as :func:`conv1d`.
    """
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


@composite("conv_transpose3d", grad_fn="ConvolutionBackward0", note=_CONV_NOTE)
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-d transposed convolution of ``input`` (N, C_in, D, H, W) or (C_in, D, H, W) with ``weight`` (C_in,
    C_out/groups, kD, kH, kW): each output size ``(size - 1) stride - 2 padding + dilation (k - 1) +
    output_padding + 1`` (the gradient of conv3d with respect to its input). Matches
    torch.nn.functional.conv_transpose3d (grad_fn ConvolutionBackward0).

    Raises:
        RuntimeError: as :func:`conv_transpose1d`.
    """
    return _conv("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation, groups, True,
                 output_padding)

"""Padding and resizing: constant_pad_nd, pad (constant, reflect, replicate, circular) and interpolate (nearest,
nearest-exact, linear, bilinear, area), as torch.nn.functional computes them and names their backward: the
non-constant pads and nearest interpolation take each output element from an index map per dim, the linear
modes apply a weight matrix per dim (:func:`.pooling._separable`), area is adaptive average pooling.
"""

from __future__ import annotations

import math

import numpy as np

from ...engine import limits
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, op
from ._im2col import _refuse
from .pooling import _name_grad_fn, _separable, adaptive_avg_pool1d, adaptive_avg_pool2d


# --------------------------------------------------------------------------------------------------- pad
@op("constant_pad_nd", grad_fn="ConstantPadNdBackward0", promote=None,
    note="d/dx = the gradient with the padding cut off (a negative pad's crop padded back with zeros)",
    formula="input: grad with the padding cut off")
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


@op("_take_axes", grad_fn=_name_grad_fn, promote=None,
    note="d/dx = the gradient added back into the positions each element was copied from", jvp="linear")
def _take_axes(input, maps, name):
    """``input`` taken at ``maps`` (one index array per trailing dim, None to leave a dim): the
    reflect/replicate/circular pads and nearest interpolation (``name`` is PyTorch's grad_fn of the case)."""
    out = input
    for k, m in enumerate(maps):
        if m is not None:
            out = np.take(out, m, axis=input.ndim - len(maps) + k)
    return np.ascontiguousarray(out)


@_take_axes.defvjp
def _(grad, input, maps, name, input_shape):
    if name.startswith(("ReflectionPad", "ReplicationPad")):
        return _pad_backward(grad, input, maps, name)
    return _put_axes(grad, maps, tuple(input_shape[len(input_shape) - len(maps):]), name)


def _backward_name(maps, sizes, name):
    return name.replace("Backward0", "BackwardBackward0")


@op("_put_axes", grad_fn=_backward_name, promote=None,
    note="d/dgrad = the gradient taken at the copied positions again", jvp="linear")
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


def _pad_backward_name(maps, name):
    return name.replace("Backward0", "BackwardBackward0")


# The backward kernel of the reflect/replicate pads takes the input, as PyTorch's reflection_padNd_backward and
# replication_padNd_backward(grad_output, self, padding) do (for its shape only): so with create_graph the
# gradient requires grad when the input does, even for a gradient that does not (sign's zeros), and its
# derivative in the input is zeros.
@op("_pad_backward", grad_fn=_pad_backward_name, inputs=2, promote=None,
    note="d/dgrad = the gradient padded again (taken at the copied positions); no derivative with respect to self",
    formula={f"{kind}Pad{nd}DBackwardBackward0": "grad_output: the gradient padded again (taken at the positions "
                                                  "each element was copied from); self: zeros"
             for kind in ("Reflection", "Replication") for nd in (1, 2, 3)})
def _pad_backward(grad, input, maps, name):
    """The gradient of a reflect/replicate pad of an input like ``input``: :func:`_put_axes` of ``grad`` into
    ``input``'s trailing sizes."""
    return _put_axes.forward(grad, maps, tuple(input.shape[input.ndim - len(maps):]), name)


@_pad_backward.defvjp
def _(grad, input, maps, name, needs_input_grad):
    gg = _take_axes(grad, maps, name) if needs_input_grad[0] else None
    if not needs_input_grad[1]:
        return gg, None
    return gg, (Tensor(np.zeros_like(input.data)) if isinstance(input, Tensor) else np.zeros_like(input))


@_pad_backward.defjvp
def _(grad_t, input, maps, name):
    # linear in grad_output; the input gives only its shape
    return _pad_backward(grad_t, input, maps, name)


@_put_axes.defvjp
def _(grad, maps, name):
    return _take_axes(grad, maps, name)


@composite("pad", grad_fn="ConstantPadNdBackward0 (constant) | ReflectionPad{1,2,3}DBackward0 (reflect) | "
                          "ReplicationPad{1,2,3}DBackward0 (replicate) | CopySlices (circular)",
           note="d/dx = the gradient of the copied elements added back to where they came from",
           formula={"ReflectionPad1DBackward0": "input: each padded element's grad added to its mirror source",
                    "ReflectionPad2DBackward0": "input: each padded element's grad added to its mirror source",
                    "ReplicationPad1DBackward0": "input: the padding's grad added to the edge it copies",
                    "ReplicationPad2DBackward0": "input: the padding's grad added to the edge it copies",
                    "ReflectionPad3DBackward0": "input: each padded element's grad added to its mirror source",
                    "ReplicationPad3DBackward0": "input: the padding's grad added to the edge it copies"})
def pad(input, pad, mode="constant", value=None):
    """``input`` padded: ``pad`` is (left, right) for the last dim, then (top, bottom) for the one before, and
    so on. ``mode`` "constant" (with ``value``, default 0; negative amounts crop), "reflect" (mirror without the
    edge), "replicate" (the edge repeated) or "circular" (wrapped around); the non-constant modes pad the last
    1, 2 or 3 dims of a (C, L)/(N, C, L), (C, H, W)/(N, C, H, W) or (C, D, H, W)/(N, C, D, H, W) input. Matches torch.nn.functional.pad.

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
    if nd not in (1, 2, 3) or input.ndim not in (nd + 1, nd + 2):
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


# ------------------------------------------------------------------------------------------------ resize
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
           note="d/dx = the gradient through the transposed interpolation weights",
           formula={"UpsampleNearest1DBackward0": "input: each output's grad added to its source",
                    "UpsampleNearest2DBackward0": "input: each output's grad added to its source",
                    "UpsampleLinear1DBackward0": "input: grad spread by the interpolation weights",
                    "UpsampleBilinear2DBackward0": "input: grad spread by the interpolation weights",
                    "UpsampleNearestExact1DBackward0": "input: each output's grad added to its source",
                    "UpsampleNearestExact2DBackward0": "input: each output's grad added to its source"})
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

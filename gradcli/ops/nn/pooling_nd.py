"""More pooling: max_pool3d, avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool1d/2d/3d,
fractional_max_pool2d/3d, max_unpool1d/2d/3d and lp_pool1d/2d/3d, as torch.nn.functional computes them and names
their backward.

The max pools of every kind are one computation: the flat position of each window's maximum (PyTorch's CPU
rule: the first maximum in the window's row-major order, the last NaN if any), then the input taken there by
:func:`.pooling._pool_gather`, whose gradient adds each output's gradient back at that position. Only the
windows differ: a regular grid (max_pool3d, the N-d kernel of :mod:`.pooling`), the cells of an adaptive split
(floor(i n / o) to ceil((i + 1) n / o)) or the pseudo-random starts of fractional pooling (ATen's
generate_intervals, aten/src/ATen/native/FractionalMaxPool2d.cpp, from samples drawn by torch.rand).
"""

from __future__ import annotations

import numpy as np

from ...engine import dtypes, limits
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, op
from ..creation import rand
from ..elementwise.activation import relu
from ..elementwise.arithmetic import mul, pow
from ..elementwise.unary import abs, neg, sign
from ..reduction.reductions import mean
from ..shape.views import squeeze, unsqueeze
from ._im2col import _prod
from .pooling import (_adaptive_matrix, _avg_pool_nd, _max_pool, _pool_gather, _separable, avg_pool1d,
                      avg_pool2d, max_pool1d, max_pool2d)

_MAX_NOTE = "d/dx = each window's gradient at the position of its maximum"
_GATHER_FORMULA = "input: grad at the position of each window's maximum, 0 elsewhere"
_SCATTER_FORMULA = "grad: the input's gradient taken at the maxima's positions"


def _formulas(*names: str) -> dict:
    """The formula texts of max pools recorded as ``names`` and of their backward-of-backward nodes."""
    out = {}
    for n in names:
        out[n] = _GATHER_FORMULA
        out[n.replace("Backward0", "BackwardBackward0")] = _SCATTER_FORMULA
    return out


def _ntuple(v, nd: int) -> tuple:
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * nd


# ------------------------------------------------------------------------------------ regular 3-d pools
@composite("max_pool3d", grad_fn="MaxPool3DWithIndicesBackward0", note=_MAX_NOTE,
           formula=_formulas("MaxPool3DWithIndicesBackward0"), kinks="max_pool")
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each ``kernel_size`` window of ``input`` (N, C, D, H, W) or (C, D, H, W), windows every
    ``stride`` (default ``kernel_size``), taps ``dilation`` apart, over ``-inf`` padding; with
    ``return_indices`` also the flat position (d * H * W + h * W + w) of each maximum (int64). Matches
    torch.nn.functional.max_pool3d (grad_fn MaxPool3DWithIndicesBackward0).

    Raises:
        RuntimeError: PyTorch's messages for an empty or wrongly shaped input, zero stride or kernel, padding
            above half the kernel, an output size below 1.
        NotImplementedError: for a bool input.
    """
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@composite("avg_pool3d", grad_fn="AvgPool3DBackward0", note="d/dx = each window's gradient divided by its "
           "divisor, spread over the window",
           formula={"AvgPool3DBackward0": "input: grad / divisor at each position of the window, summed over "
                                          "windows",
                    "AvgPool3DBackwardBackward0": "grad: the average pool of the input's gradient"})
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The average of each ``kernel_size`` window of ``input`` (N, C, D, H, W) or (C, D, H, W), windows every
    ``stride`` (default ``kernel_size``) over zero ``padding``; the divisor as avg_pool2d's. float32, float64
    and int64. Matches torch.nn.functional.avg_pool3d (grad_fn AvgPool3DBackward0).

    Raises:
        RuntimeError: as :func:`.pooling.avg_pool2d`.
        NotImplementedError: for other dtypes ("avg_pool3d_out_frame" not implemented for 'Int').
    """
    return _avg_pool_nd("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override, kernel="avg_pool3d_out_frame")


# ------------------------------------------------------------------------------- windows of any shape
#: The most (window, tap) pairs whose values are gathered at once (rows of planes go through in slices).
_TAPS_BUDGET = 1 << 24


def _argmax_at(x: np.ndarray, coords: list) -> np.ndarray:
    """The flat position (within each plane) of the maximum of each window: ``x`` (M, *S), ``coords[i]`` the
    coordinates along dim i of each window's taps, (M or 1, out_i, L_i) ints, -1 for no tap (a shorter
    window). PyTorch's CPU rule: the first maximum in row-major tap order, the last NaN if any, the first tap
    when every value is -inf. Returns (M, *out) int64."""
    nd = len(coords)
    m = x.shape[0]
    sizes = x.shape[1:]
    out = tuple(c.shape[1] for c in coords)
    taps = tuple(c.shape[2] for c in coords)
    strides = [_prod(sizes[i + 1:]) for i in range(nd)]
    flat = 0
    valid = True
    for i, c in enumerate(coords):
        shape = [c.shape[0]] + [1] * (2 * nd)
        shape[1 + i] = out[i]
        shape[1 + nd + i] = taps[i]
        ci = c.reshape(shape)
        flat = flat + np.maximum(ci, 0) * strides[i]
        valid = valid & (ci >= 0)
    flat = np.broadcast_to(flat, (m,) + out + taps).reshape(m, _prod(out), _prod(taps))
    valid = np.broadcast_to(valid, valid.shape[:1] + out + taps).reshape(-1, _prod(out), _prod(taps))
    planes = x.reshape(m, -1)
    result = np.empty((m, _prod(out)), dtype=np.int64)
    step = max(1, _TAPS_BUDGET // max(flat[0].size, 1))
    for r in range(0, m, step):
        f = flat[r:r + step]
        vals = np.take_along_axis(planes[r:r + step], f.reshape(f.shape[0], -1), 1).reshape(f.shape)
        vals = np.where(valid[r:r + step] if valid.shape[0] > 1 else valid, vals, -np.inf)
        arg = vals.argmax(-1)
        nan = np.isnan(vals)
        if nan.any():  # the kernels' ``val > maxval || isnan(val)``: the last NaN of a window wins
            arg = np.where(nan.any(-1), vals.shape[-1] - 1 - nan[..., ::-1].argmax(-1), arg)
        result[r:r + step] = np.take_along_axis(f, arg[..., None], -1)[..., 0]
    return result.reshape((m,) + out)


def _float_only(kernel: str, input) -> None:
    if input.data.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(input.data.dtype)}'")


# ------------------------------------------------------------------------------------- adaptive pools
def _adaptive_sizes(fname: str, input, output_size, nd: int) -> tuple:
    """``output_size`` (an int, or ``nd`` values of which None keeps the input's size) as ints; the
    Python-level check of torch.nn.functional (_list_with_default)."""
    if isinstance(output_size, (list, tuple)):
        if input.ndim <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        sizes = tuple(output_size)
    else:
        sizes = (output_size,) * nd
    if len(sizes) != nd:
        raise RuntimeError(f"{fname}: internal error: output_size.size() must be {nd}")
    return tuple(input.shape[input.ndim - nd + i] if s is None else int(s) for i, s in enumerate(sizes))


def _adaptive_coords(n: int, o: int) -> np.ndarray:
    """(1, o, L): the input positions of each adaptive cell along one dim (-1 past a shorter cell's end)."""
    i = np.arange(o)
    start = (i * n) // o
    end = ((i + 1) * n + o - 1) // o
    length = int((end - start).max()) if o else 0
    pos = start[:, None] + np.arange(length)[None, :]
    return np.where(pos < end[:, None], pos, -1)[None]


def _adaptive_max(fname: str, nd: int, input, output_size, return_indices):
    """adaptive_max_pool2d/3d: the maximum over each cell of an adaptive split of the last ``nd`` dims."""
    input = to_tensor(input)
    sizes = _adaptive_sizes(fname, input, output_size, nd)
    if input.ndim not in (nd + 1, nd + 2) or any(s == 0 for s in input.shape[1:]):
        raise RuntimeError(f"{fname}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    _float_only(fname if nd == 2 else f"{fname}_cpu", input)
    spatial = input.shape[-nd:]
    limits.check_numel(input.shape[:-nd] + sizes, "the result")
    coords = [_adaptive_coords(n, o) for n, o in zip(spatial, sizes)]
    x = input.data.reshape((-1,) + spatial)
    idx = _argmax_at(x, coords).reshape(input.shape[:-nd] + sizes)
    values = _pool_gather(input, idx, f"AdaptiveMaxPool{nd}DBackward0", nd)
    return (values, Tensor(idx)) if return_indices else values


@composite("adaptive_max_pool2d", grad_fn="AdaptiveMaxPool2DBackward0", note=_MAX_NOTE,
           formula=_formulas("AdaptiveMaxPool2DBackward0"), kinks="max_pool")
def adaptive_max_pool2d(input, output_size, return_indices=False):
    """The maximum over the cells that split the last two dims of ``input`` (N, C, H, W) or (C, H, W) into
    ``output_size`` (an int, or a pair whose None keeps that size): cell i covers floor(i H / oH) to
    ceil((i + 1) H / oH); with ``return_indices`` also each maximum's flat position. Float dtypes. Matches
    torch.nn.functional.adaptive_max_pool2d (grad_fn AdaptiveMaxPool2DBackward0).

    Raises:
        RuntimeError: PyTorch's message for a wrong number of dims or an empty input.
        ValueError: for a tuple output_size longer than the input's dims allow.
        NotImplementedError: for an integer or bool input.
    """
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size, return_indices)


@composite("adaptive_max_pool3d", grad_fn="AdaptiveMaxPool3DBackward0", note=_MAX_NOTE,
           formula=_formulas("AdaptiveMaxPool3DBackward0"), kinks="max_pool")
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """The maximum over the cells that split the last three dims of ``input`` (N, C, D, H, W) or (C, D, H, W)
    into ``output_size`` cells (as :func:`adaptive_max_pool2d`). Matches torch.nn.functional.adaptive_max_pool3d
    (grad_fn AdaptiveMaxPool3DBackward0).

    Raises:
        RuntimeError, ValueError, NotImplementedError: as :func:`adaptive_max_pool2d`.
    """
    return _adaptive_max("adaptive_max_pool3d", 3, input, output_size, return_indices)


@composite("adaptive_max_pool1d", grad_fn="SqueezeBackward1", note=_MAX_NOTE)
def adaptive_max_pool1d(input, output_size, return_indices=False):
    """The maximum over ``output_size`` cells splitting the last dim of ``input`` (N, C, L) or (C, L):
    adaptive_max_pool2d on a height-1 view, as PyTorch computes it. Matches
    torch.nn.functional.adaptive_max_pool1d (grad_fn SqueezeBackward1).

    Raises:
        RuntimeError: PyTorch's message for an input that is not 2-d or 3-d.
    """
    input = to_tensor(input)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for adaptive_max_pool1d)")
    o = output_size[0] if isinstance(output_size, (list, tuple)) else output_size
    r = _adaptive_max("adaptive_max_pool2d", 2, unsqueeze(input, -2), (1, o), True)
    values = squeeze(r[0], -2)
    return (values, Tensor(r[1].data.reshape(values.shape))) if return_indices else values


@composite("adaptive_avg_pool3d", grad_fn="AdaptiveAvgPool3DBackward0 | MeanBackward1 (output size 1)",
           note="d/dx = each output's gradient spread evenly over its window",
           formula={"AdaptiveAvgPool3DBackward0": "input: grad / the size of each cell, at the cell's positions",
                    "AdaptiveAvgPool3DBackwardBackward0": "grad: the adaptive average pool of the input's "
                                                          "gradient"})
def adaptive_avg_pool3d(input, output_size):
    """The average over the cells that split the last three dims of ``input`` (N, C, D, H, W) or (C, D, H, W)
    into ``output_size`` (an int, or a triple whose None keeps that size): cell i covers floor(i D / oD) to
    ceil((i + 1) D / oD). Float dtypes. Matches torch.nn.functional.adaptive_avg_pool3d (grad_fn
    AdaptiveAvgPool3DBackward0; MeanBackward1 for an output of 1x1x1, which PyTorch computes as a mean).

    Raises:
        ValueError: for a tuple output_size with an input of 3 dims or fewer.
        RuntimeError: for a wrong number of dims or an empty input.
        NotImplementedError: for an integer input.
    """
    input = to_tensor(input)
    sizes = _adaptive_sizes("adaptive_avg_pool3d", input, output_size, 3)
    if input.ndim not in (4, 5) or any(s == 0 for s in input.shape[-3:]):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {list(input.shape)}")
    _float_only("adaptive_avg_pool3d_cpu", input)
    if sizes == (1, 1, 1):
        return mean(input, (-1, -2, -3), True)
    mats = tuple(_adaptive_matrix(n, o) for n, o in zip(input.shape[-3:], sizes))
    return _separable(input, mats, "AdaptiveAvgPool3DBackward0")


# ----------------------------------------------------------------------------------- fractional pools
def _intervals(samples: np.ndarray, insize: int, outsize: int, pool: int) -> np.ndarray:
    """ATen's generate_intervals, in the samples' dtype as it computes: (M,) samples → (M, outsize) window
    starts, ``int((i + u) alpha) - int(u alpha)`` with ``alpha = (insize - pool) / (outsize - 1)``, the last
    window at ``insize - pool``."""
    t = samples.dtype.type
    seq = np.empty((samples.shape[0], outsize), dtype=np.int64)
    if outsize > 1:
        alpha = t(insize - pool) / t(outsize - 1)
        i = np.arange(outsize - 1).astype(samples.dtype)
        seq[:, :-1] = ((i[None, :] + samples[:, None]) * alpha).astype(np.int64) - \
            (samples * alpha).astype(np.int64)[:, None]
    if outsize > 0:
        seq[:, -1] = insize - pool
    return seq


_DIM_WORDS = {2: ("height", "width"), 3: ("time", "height", "width")}


def _fractional_max(fname: str, nd: int, input, kernel_size, output_size, output_ratio, return_indices,
                    _random_samples):
    """fractional_max_pool2d/3d (torch.nn.functional's Python part, then ATen's kernel)."""
    input = to_tensor(input)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fname} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2:  # (torch.nn.functional's 2-d version measures the ratio before expanding it)
            if not isinstance(output_ratio, (list, tuple)):
                raise TypeError(f"object of type '{type(output_ratio).__name__}' has no len()")
            if len(output_ratio) > nd:
                raise ValueError(f"{fname} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = _ntuple(output_ratio, nd)
        output_size = [int(input.shape[input.ndim - nd + i] * ratio[i]) for i in range(nd)]
    k = tuple(int(v) for v in _ntuple(kernel_size, nd))
    out = tuple(int(v) for v in _ntuple(output_size, nd))
    if input.ndim not in (nd + 1, nd + 2) or any(s == 0 for s in input.shape[1:]):
        raise RuntimeError(f"{fname}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    _float_only(f"{fname}_out_frame", input)
    batched = input.ndim == nd + 2
    n = input.shape[0] if batched else 1
    c = input.shape[-nd - 1]
    if _random_samples is None:
        samples = rand(n, c, nd, dtype=dtypes.as_dtype(input.data.dtype)).data
    else:
        samples = to_tensor(_random_samples).data
        if samples.dtype != input.data.dtype:
            raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3 or samples.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}.")
    spatial = input.shape[-nd:]
    what = "fractional_max_pool2d()" if nd == 2 else "fractional_max_pool3d_out()"
    for word, o, kk, s in zip(_DIM_WORDS[nd], out, k, spatial):
        if o + kk - 1 > s:
            raise RuntimeError(f"{what}: pool {word} {kk} too large relative to input {word} {s}")
    limits.check_numel(input.shape[:-nd] + out, "the result")
    # ATen's kernels use sample 0 for the width and 1 for the height in 2-d; 0, 1, 2 for time, height, width
    # in 3-d
    u = samples[:n].reshape(n * c, nd)
    order = (1, 0) if nd == 2 else (0, 1, 2)
    coords = [(_intervals(u[:, order[i]], spatial[i], out[i], k[i])[:, :, None] + np.arange(k[i])[None, None, :])
              for i in range(nd)]
    x = input.data.reshape((-1,) + spatial)
    idx = _argmax_at(x, coords).reshape(input.shape[:-nd] + out)
    values = _pool_gather(input, idx, f"FractionalMaxPool{nd}DBackward0", nd)
    return (values, Tensor(idx)) if return_indices else values


@composite("fractional_max_pool2d", grad_fn="FractionalMaxPool2DBackward0", note=_MAX_NOTE,
           formula=_formulas("FractionalMaxPool2DBackward0"), kinks="max_pool")
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling (Graham, 2014) of ``input`` (N, C, H, W) or (C, H, W): the maximum of
    ``kernel_size`` windows whose starts step pseudo-randomly so that ``output_size`` (or ``output_ratio`` of
    the input's size) windows cover the input. The steps come from ``_random_samples`` (N, C, 2) in [0, 1),
    drawn by ``torch.rand`` in the input's dtype when not given (the same numbers as PyTorch's after the same
    seed). Float dtypes. Matches torch.nn.functional.fractional_max_pool2d (grad_fn
    FractionalMaxPool2DBackward0).

    Raises:
        ValueError: without output_size and output_ratio.
        RuntimeError: PyTorch's messages for a pool too large for the input, samples of the wrong shape.
        NotImplementedError: for an integer input.
    """
    return _fractional_max("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
                           return_indices, _random_samples)


@composite("fractional_max_pool3d", grad_fn="FractionalMaxPool3DBackward0", note=_MAX_NOTE,
           formula=_formulas("FractionalMaxPool3DBackward0"), kinks="max_pool")
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling of ``input`` (N, C, D, H, W) or (C, D, H, W), as :func:`fractional_max_pool2d`
    over three dims (``_random_samples`` (N, C, 3)). Matches torch.nn.functional.fractional_max_pool3d (grad_fn
    FractionalMaxPool3DBackward0).

    Raises:
        ValueError, RuntimeError, NotImplementedError: as :func:`fractional_max_pool2d`.
    """
    return _fractional_max("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
                           return_indices, _random_samples)


# ------------------------------------------------------------------------------------------- unpooling
def _unpool_grad_fn(indices, output_size, nd):
    return f"MaxUnpool{nd}DBackward0"


@op("_max_unpool", grad_fn=_unpool_grad_fn, promote=None,
    note="d/dx = the gradient taken at the indices", jvp="linear")
def _max_unpool(input, indices, output_size, nd):
    """Zeros of the input's leading dims and ``output_size`` with each element of ``input`` written at its
    flat position ``indices`` (within the last ``nd`` dims; of repeated positions the last write stays, as
    PyTorch's CPU kernel)."""
    lead = input.shape[:-nd]
    rows = _prod(lead)
    size = _prod(output_size)
    out = np.zeros((rows, size), dtype=input.dtype)
    np.put_along_axis(out, indices.reshape(rows, -1), input.reshape(rows, -1), 1)
    return out.reshape(tuple(lead) + tuple(output_size))


@_max_unpool.defvjp
def _(grad, indices, output_size, nd):
    # derivatives.yaml max_unpool2d: self: max_pool_double_backward(grad, indices, 2), the gradient taken at
    # the indices (recorded, as PyTorch's, by the gather and view it is made of)
    return _pool_gather(grad, indices, "ViewBackward0", nd)


def _unpool_output_size(input, k, s, p, output_size) -> list:
    """torch.nn.functional._unpool_output_size: the default size ``(in - 1) stride + kernel - 2 padding``, or
    ``output_size`` (its last ``len(k)`` values) checked to lie within a stride of it."""
    nd = len(k)
    if input.ndim < nd:  # (PyTorch's input.size()[-len(kernel_size) + d])
        raise IndexError("tuple index out of range")
    default = [(input.shape[input.ndim - nd + d] - 1) * s[d] + k[d] - 2 * p[d] for d in range(nd)]
    if output_size is None:
        ret = default
    else:
        output_size = [int(v) for v in output_size]
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                             f"length of '{len(output_size)}'")
        for d in range(nd):
            lo, hi = default[d] - s[d], default[d] + s[d]
            if not lo < output_size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
        ret = output_size
    for d in range(nd):
        if ret[d] < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={ret[d]}")
    return ret


def _max_unpool_nd(nd: int, input, indices, output_size):
    """ATen's max_unpool2d/max_unpool3d checks, then the scatter."""
    input = to_tensor(input)
    indices = to_tensor(indices)
    if indices.data.dtype != np.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{dtypes.scalar_type_name(indices.data.dtype)}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a "
                           f"tensor with {input.ndim} dimensions.")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    _float_only(f"max_unpool{nd}d", input)
    size = _prod(output_size)
    idx = indices.data
    bad = (idx < 0) | (idx >= size)
    if bad.any():
        raise RuntimeError(f"Found an invalid max index: {int(idx.reshape(-1)[bad.reshape(-1).argmax()])} (output "
                           f"volumes are of size {'x'.join(map(str, output_size))}")
    limits.check_numel(input.shape[:-nd] + tuple(output_size), "the result")
    return _max_unpool(input, idx, tuple(int(v) for v in output_size), nd)


_UNPOOL_NOTE = "d/dx = the gradient taken at the indices"
_UNPOOL_FORMULA = "input: grad taken at the indices"


@composite("max_unpool2d", grad_fn="MaxUnpool2DBackward0", note=_UNPOOL_NOTE,
           formula={"MaxUnpool2DBackward0": _UNPOOL_FORMULA})
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d: zeros of the pooled input's size (``(in - 1) stride + kernel - 2
    padding``, or ``output_size``) with each value of ``input`` (N, C, H, W) or (C, H, W) at its flat position
    in ``indices`` (max_pool2d's, int64). Float dtypes. Matches torch.nn.functional.max_unpool2d (grad_fn
    MaxUnpool2DBackward0).

    Raises:
        ValueError: for an output_size not within a stride of the default.
        RuntimeError: PyTorch's messages for indices that are not int64, not of the input's shape, or outside
            the output.
    """
    k = _ntuple(kernel_size, 2)
    s = k if stride is None else _ntuple(stride, 2)
    size = _unpool_output_size(to_tensor(input), k, s, _ntuple(padding, 2), output_size)
    return _max_unpool_nd(2, input, indices, size)


@composite("max_unpool3d", grad_fn="MaxUnpool3DBackward0", note=_UNPOOL_NOTE,
           formula={"MaxUnpool3DBackward0": _UNPOOL_FORMULA})
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d (as :func:`max_unpool2d`, for (N, C, D, H, W) or (C, D, H, W)).
    Matches torch.nn.functional.max_unpool3d (grad_fn MaxUnpool3DBackward0).

    Raises:
        ValueError, RuntimeError: as :func:`max_unpool2d`.
    """
    k = _ntuple(kernel_size, 3)
    s = k if stride is None else _ntuple(stride, 3)
    size = _unpool_output_size(to_tensor(input), k, s, _ntuple(padding, 3), output_size)
    return _max_unpool_nd(3, input, indices, size)


@composite("max_unpool1d", grad_fn="SqueezeBackward1", note=_UNPOOL_NOTE)
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d, for (N, C, L) or (C, L): max_unpool2d of width-1 views, as PyTorch
    computes it. Matches torch.nn.functional.max_unpool1d (grad_fn SqueezeBackward1).

    Raises:
        ValueError, RuntimeError: as :func:`max_unpool2d`.
    """
    input = to_tensor(input)
    indices = to_tensor(indices)
    k = _ntuple(kernel_size, 1)
    s = k if stride is None else _ntuple(stride, 1)
    size = _unpool_output_size(input, k, s, _ntuple(padding, 1), output_size)
    return squeeze(_max_unpool_nd(2, unsqueeze(input, -1), unsqueeze(indices, -1), list(size) + [1]), -1)


# -------------------------------------------------------------------------------------------- LP pools
def _lp_pool(nd: int, input, norm_type, kernel_size, stride, ceil_mode, pool, max_pool):
    """torch.nn.functional.lp_pool{1,2,3}d: ``(sum over the window of x ** p) ** (1 / p)``, computed as PyTorch
    does: the average pool of ``x ** p`` times the window's size (its sign kept, relu of its magnitude), to the
    power 1 / p; p = +-inf is the max pool of |x|."""
    input = to_tensor(input)
    if isinstance(norm_type, (int, float)) and not isinstance(norm_type, bool):
        if norm_type == float("inf"):
            return max_pool(abs(input), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return neg(max_pool(neg(abs(input)), kernel_size, stride, 0, 1, ceil_mode))
    if stride is not None:
        out = pool(pow(input, norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = pool(pow(input, norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    size = kernel_size if nd == 1 else _prod(_ntuple(kernel_size, nd))
    return pow(mul(mul(sign(out), relu(abs(out))), size), 1.0 / norm_type)


_LP_NOTE = "d/dx = p x^(p-1) times the window sum's (1/p)-th power's derivative"


@composite("lp_pool1d", grad_fn="PowBackward0", note=_LP_NOTE)
def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The p-norm of each window along the last dim of ``input`` (N, C, L) or (C, L): ``(sum x^p)^(1/p)`` over
    ``kernel_size`` taps every ``stride`` (default ``kernel_size``); p = inf is the max of |x|. Matches
    torch.nn.functional.lp_pool1d (grad_fn PowBackward0).

    Raises:
        RuntimeError: as :func:`.pooling.avg_pool1d`.
    """
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode, avg_pool1d, max_pool1d)


@composite("lp_pool2d", grad_fn="PowBackward0", note=_LP_NOTE)
def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The p-norm of each window of the last two dims of ``input`` (N, C, H, W) or (C, H, W), as
    :func:`lp_pool1d`. Matches torch.nn.functional.lp_pool2d (grad_fn PowBackward0).

    Raises:
        RuntimeError: as :func:`.pooling.avg_pool2d`.
    """
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode, avg_pool2d, max_pool2d)


@composite("lp_pool3d", grad_fn="PowBackward0", note=_LP_NOTE)
def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The p-norm of each window of the last three dims of ``input`` (N, C, D, H, W) or (C, D, H, W), as
    :func:`lp_pool1d`. Matches torch.nn.functional.lp_pool3d (grad_fn PowBackward0).

    Raises:
        RuntimeError: as :func:`avg_pool3d`.
    """
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode, avg_pool3d, max_pool3d)

"""Pooling: max_pool1d/2d (with their indices), avg_pool1d/2d, adaptive_avg_pool1d/2d, as
torch.nn.functional computes them and names their backward, on the window views and col2im of :mod:`._im2col`;
and the separable linear map of the trailing dims that adaptive_avg_pool2d and interpolate's linear modes share.
"""

from __future__ import annotations

import numpy as np

from ...engine import dtypes, limits
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, op
from ..reduction.reductions import mean
from ..shape.views import squeeze, unsqueeze
from ._im2col import _col2im, _prod, _refuse, _windows


# ------------------------------------------------------------------------------------------------- pools
def _pool_args(fname: str, kernel_size, stride, padding, dilation, nd: int = 2):
    """kernel_size, stride (default: the kernel size), padding, dilation as ``nd``-tuples (PyTorch's
    pooling_output_shape checks)."""
    count = {1: "one", 2: "two", 3: "three"}[nd]

    def tup(v, name):
        if isinstance(v, (list, tuple)):
            v = tuple(int(x) for x in v)
            if len(v) == 1:
                v = v * nd
            if len(v) != nd:
                raise RuntimeError(f"{fname}: {name} must either be a single int, or a tuple of {count} ints")
            return v
        return (int(v),) * nd

    k = tup(kernel_size, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not len(stride)) else \
        tup(stride, f"stride must either be omitted, a single int, or a tuple of {count} ints")
    p = tup(padding, "padding")
    d = tup(dilation, "dilation")
    if any(x <= 0 for x in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[-1]}")
    if any(x <= 0 for x in s):
        raise RuntimeError("stride should not be zero")
    if any(x <= 0 for x in d):
        got = f"dilationT: {d[0]} dilationH: {d[1]} dilationW: {d[2]}" if nd == 3 else \
            f"dilationH: {d[0]} dilationW: {d[-1]}"
        raise RuntimeError(f"dilation should be greater than zero, but got {got}")
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


def _gather_grad_fn(indices, name, nd=2):
    return name


@op("_pool_gather", grad_fn=_gather_grad_fn, promote=None,
    note="d/dx = each output's gradient added at the input position it was taken from", jvp="linear")
def _pool_gather(input, indices, name, nd=2):
    """``input`` (..., *S) taken at ``indices`` (..., *out), flat positions within each trailing ``S`` (the
    last ``nd`` dims): the max pools' values at their indices (``name`` is PyTorch's grad_fn of the pool)."""
    rows = _prod(indices.shape[:-nd])
    flat = input.reshape(rows, -1)
    return np.take_along_axis(flat, indices.reshape(rows, -1), axis=1).reshape(indices.shape)


@_pool_gather.defvjp
def _(grad, input, indices, name, nd):
    if name == "ViewBackward0":  # max_unpool's gradient (a gather and a view in PyTorch): scattered back by
        # PyTorch's gather backward, which takes the input for its shape only
        return _pool_scatter(grad, indices, tuple(np.shape(input.data if isinstance(input, Tensor) else input)),
                             name, nd)
    return _max_pool_backward(grad, input, indices, name, nd)


def _scatter_grad_fn(indices, input_shape, name="MaxPool2DWithIndicesBackward0", nd=2):
    return name.replace("Backward0", "BackwardBackward0")


@op("_pool_scatter", grad_fn=_scatter_grad_fn, promote=None,
    note="d/dgrad = the gradient of the input taken at the indices again", jvp="linear")
def _pool_scatter(grad, indices, input_shape, name="MaxPool2DWithIndicesBackward0", nd=2):
    """Zeros of ``input_shape`` with each element of ``grad`` added at its flat position ``indices`` (within
    the trailing ``nd`` dims; repeated positions accumulate): the gradient of a max pool (``name``: the pool's
    grad_fn)."""
    return _scatter_at(grad, indices, input_shape, nd)


def _scatter_at(grad: np.ndarray, indices: np.ndarray, input_shape: tuple, nd: int) -> np.ndarray:
    """Zeros of ``input_shape`` with each element of ``grad`` added at its flat position ``indices`` within the
    trailing ``nd`` dims (repeated positions accumulate)."""
    rows = _prod(input_shape[:-nd])
    size = _prod(input_shape) // rows
    idx = (indices.reshape(rows, -1) + (np.arange(rows) * size)[:, None]).reshape(-1)
    out = np.bincount(idx, weights=grad.reshape(-1), minlength=rows * size)
    return out.astype(grad.dtype).reshape(input_shape)


@_pool_scatter.defvjp
def _(grad, indices, name, nd):
    return _pool_gather(grad, indices, name, nd)


def _pool_backward_grad_fn(indices, name, nd=2):
    return name.replace("Backward0", "BackwardBackward0")


# The backward kernel of the max pools takes the input, as PyTorch's max_pool2d_with_indices_backward(grad_output,
# self, ..., indices) (and adaptive_max_pool2d_backward, fractional_max_pool2d_backward) do, for its shape only:
# so with create_graph the gradient requires grad when the input does, and its derivative in the input is zeros
# (derivatives.yaml: grad_output: max_pool_double_backward(grad, indices, 2); self: zeros_like(self)).
@op("_max_pool_backward", grad_fn=_pool_backward_grad_fn, inputs=2, promote=None,
    note="d/dgrad = the input's gradient taken at the indices again; no derivative with respect to self")
def _max_pool_backward(grad, input, indices, name, nd):
    """The gradient of a max pool (``name``: its grad_fn) of an input like ``input``: zeros with each element of
    ``grad`` added at its flat position ``indices`` (within the trailing ``nd`` dims)."""
    return _scatter_at(grad, indices, tuple(input.shape), nd)


@_max_pool_backward.defvjp
def _(grad, input, indices, name, nd, needs_input_grad):
    gg = _pool_gather(grad, indices, name, nd) if needs_input_grad[0] else None
    if not needs_input_grad[1]:
        return gg, None
    return gg, (Tensor(np.zeros_like(input.data)) if isinstance(input, Tensor) else np.zeros_like(input))


@_max_pool_backward.defjvp
def _(grad_t, input, indices, name, nd):
    # linear in grad_output; the input gives only its shape
    return _max_pool_backward(grad_t, input, indices, name, nd)


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
           note="d/dx = each window's gradient at the position of its maximum",
           formula={"MaxPool2DWithIndicesBackward0": "input: grad at the position of each window's maximum, 0 "
                                                     "elsewhere",
                    "MaxPool2DWithIndicesBackwardBackward0": "grad: the input's gradient taken at the maxima's "
                                                             "positions"},
           kinks="max_pool")
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
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _max_pool(fname: str, nd: int, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    """max_pool2d/max_pool3d: the checks, the indices of the maxima, the values taken there (grad_fn
    MaxPool{nd}DWithIndicesBackward0)."""
    input = _pool_input(fname, input, nd)
    if input.data.dtype == np.bool_:
        raise NotImplementedError(f"\"{fname}\" not implemented for 'Bool'")
    k, s, p, d = _pool_args(fname, kernel_size, stride, padding, dilation, nd)
    idx = _max_pool_indices(input.data, k, s, p, d, ceil_mode)
    values = _pool_gather(input, idx, f"MaxPool{nd}DWithIndicesBackward0", nd)
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
    note="d/dx = each window's gradient divided by its divisor, spread over the window", jvp="linear")
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
def _(grad, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return _avg_pool_backward(grad, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override)


def _avg_backward_grad_fn(kernel_size, *rest):
    return f"AvgPool{len(kernel_size)}DBackwardBackward0"


# The backward kernel takes the input as PyTorch's avg_pool2d_backward(grad_output, self, ...) does (for its
# shape only): so with create_graph the gradient requires grad when the input does, and its derivative in the
# input is zeros (derivatives.yaml: grad_output: avg_pool2d(grad, ...); self: zeros_like(self)).
@op("_avg_pool_backward", grad_fn=_avg_backward_grad_fn, inputs=2, promote=None,
    note="d/dgrad = the average pool of the gradient; no derivative with respect to self")
def _avg_pool_backward(grad, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override):
    """The gradient of :func:`_avg_pool` for an input like ``input``: each output's gradient over its divisor,
    added over its window."""
    k, s, p = kernel_size, stride, padding
    nd = len(k)
    input_shape = input.shape
    sizes = tuple(input_shape[-nd:])
    out = grad.shape[-nd:]
    div = _avg_divisors(sizes, k, s, p, out, count_include_pad, divisor_override)
    g = (grad / div.astype(grad.dtype)).astype(grad.dtype)
    m = _prod(input_shape[:-nd])
    g = g.reshape((m,) + (1,) * nd + (1,) + tuple(out))
    cols = np.broadcast_to(g, (m,) + tuple(k) + (1,) + tuple(out))
    return _col2im(cols, sizes, k, s, p, (1,) * nd).reshape(input_shape)


@_avg_pool_backward.defvjp
def _(grad, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, needs_input_grad):
    gg = (_avg_pool(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
          if needs_input_grad[0] else None)
    if not needs_input_grad[1]:
        return gg, None
    return gg, (Tensor(np.zeros_like(input.data)) if isinstance(input, Tensor) else np.zeros_like(input))


@_avg_pool_backward.defjvp
def _(grad_t, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    # linear in grad_output; the input gives only its shape
    return _avg_pool_backward(grad_t, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override)


@composite("avg_pool2d", grad_fn="AvgPool2DBackward0", note=_avg_pool.note,
           formula={"AvgPool2DBackward0": "input: grad / divisor at each position of the window, summed over windows",
                    "AvgPool2DBackwardBackward0": "grad: the average pool of the input's gradient"})
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
    return _avg_pool_nd("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


def _avg_pool_nd(fname: str, nd: int, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override, kernel: str | None = None, also=(np.int64,)):
    """avg_pool2d/avg_pool3d: the checks (``kernel``: the CPU kernel named when a dtype other than a float or
    one of ``also`` is refused) and the average of each window (grad_fn AvgPool{nd}DBackward0)."""
    input = _pool_input(fname, input, nd)
    _refuse(kernel or fname, input, "f", *also)
    k, s, p, _ = _pool_args(fname, kernel_size, stride, padding, 1, nd)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    out = tuple(_pool_out(n, kk, ss, pp, 1, ceil_mode) for n, kk, ss, pp in zip(input.shape[-nd:], k, s, p))
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, input.shape[-nd - 1:]))}). Calculated output "
                           f"size: ({'x'.join(map(str, (input.shape[-nd - 1],) + out))}). Output size is too small")
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


# ----------------------------------------------------------------------------------------- adaptive pool
def _name_grad_fn(maps, name):
    return name


@op("_separable", grad_fn=_name_grad_fn, promote=None,
    note="d/dx = the gradient through the transposed matrices, dim by dim", jvp="linear")
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
           note="d/dx = each output's gradient spread evenly over its window",
           formula={"AdaptiveAvgPool2DBackward0": "input: grad / the size of each cell, at the cell's positions"})
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

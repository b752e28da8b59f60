"""Sliding blocks: torch.nn.functional's unfold (im2col) and fold (col2im) of 2-d images, and Tensor.unfold
(the windows of one dim), as PyTorch computes them and names their backward, on the kernels of :mod:`._im2col`.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...engine.tensor import normalize_dim, to_tensor
from ..core.declare import composite, op, tensor_method
from ._im2col import _col2im, _conv_out, _pad_spatial, _prod, _refuse, _windows


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


@op("_im2col", grad_fn="Im2ColBackward0", promote=None, note="d/dx = fold (col2im) of the gradient",
    formula="input: fold(grad): each column's grad added back into its block", jvp="linear")
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


@op("_col2im", grad_fn="Col2ImBackward0", promote=None, note="d/dx = unfold (im2col) of the gradient",
    formula="input: unfold(grad): each column gets its block of grad", jvp="linear")
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
    note="d/dx = each window's gradient added back at the positions it covers",
    formula="input: each window's grad added back at the positions it covers", jvp="linear")
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


@op("_unfold_dim_backward", grad_fn="UnfoldBackwardBackward0", promote=None,
    note="d/dgrad = the windows of the gradient", jvp="linear")
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

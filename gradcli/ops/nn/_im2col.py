"""The numpy kernels that the convolutions, the pools and unfold/fold share: a padded image's windows as a
strided view (im2col's half), the columns added back into an image (col2im), the output size of a window grid,
and the dtype refusal of PyTorch's CPU kernels.

The kernels are numpy im2col: ``sliding_window_view`` of the padded input gives every window as a strided view,
one copy lays them out as a matrix, one matmul per group does the rest. The transposed direction (the gradient
of a convolution with respect to its input, conv_transpose, fold, the pools' backward) is col2im: a matmul,
then the columns added into the padded image once per kernel offset (kh*kw strided adds of whole arrays, the
convention of im2col implementations: on the benchmark's 32x3x64x64 input gradient, 10.6 ms against 14.1 ms for
one np.add.at and 18.1 ms for one np.bincount over precomputed flat indices).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...engine import dtypes, limits


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


def _conv_out(spatial, ksize, stride, padding, dilation) -> tuple:
    return tuple((s + 2 * p - d * (k - 1) - 1) // st + 1
                 for s, k, st, p, d in zip(spatial, ksize, stride, padding, dilation))


# ------------------------------------------------------------------------------------------------ dtypes
def _refuse(kernel: str, input, kinds: str, *also) -> None:
    """PyTorch's NotImplementedError for a dtype its CPU kernel does not dispatch (``"avg_pool2d" not implemented
    for 'Bool'``): ``input``'s dtype must be of one of the numpy ``kinds`` or one of ``also``."""
    dt = input.data.dtype
    if dt.kind not in kinds and dt not in also:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(dt)}'")

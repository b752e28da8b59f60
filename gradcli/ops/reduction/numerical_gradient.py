"""torch.gradient: a tensor's derivative estimated by finite differences, along each dimension asked.

Computed as ATen computes it (aten/src/ATen/native/ReduceOps.cpp, ``gradient_helper`` and
``gradient_helper_float``), from the table's ops, so that its graph and derivatives are PyTorch's (the result
of each dimension is a ``cat`` of the two edges and the interior: CatBackward0):

* with uniform spacing ``h`` (a number per dimension; 1 by default), the interior is ``(x[i+1] - x[i-1]) / h /
  2``, the edges ``(x[1] - x[0]) / h`` and ``(x[-1] - x[-2]) / h`` (edge_order 1) or the second-order
  one-sided differences (edge_order 2);
* with coordinates (a 1-d tensor per dimension), the interior is the second-order formula for unequal steps
  ``a x[i-1] + b x[i] + c x[i+1]``, and the edges as above with the first and last steps.
"""

from __future__ import annotations

from ...engine.tensor import Tensor, normalize_dim, to_tensor
from ..core.declare import composite
from ..shape.joins import cat
from .more_reductions import diff


def _slice(t: Tensor, dim: int, start, stop=None) -> Tensor:
    """``at::slice(t, dim, start, stop)``."""
    key = (slice(None),) * dim + (slice(start, stop),)
    return t[key]


def _uniform(x: Tensor, d: int, h, edge_order: int) -> Tensor:
    """gradient_helper_float: the derivative along ``d`` for the uniform step ``h`` (a number)."""
    center = (_slice(x, d, 2) - _slice(x, d, 0, -2)) / h
    if edge_order == 1:
        prepend = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / h
        append = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / h
    else:
        prepend = (_slice(x, d, 0, 1) * -1.5 + _slice(x, d, 1, 2) * 2 - _slice(x, d, 2, 3) * 0.5) / h
        append = (_slice(x, d, -3, -2) * 0.5 + _slice(x, d, -2, -1) * -2 + _slice(x, d, -1) * 1.5) / h
    return cat([prepend, center / 2, append], d)


def _coordinates(x: Tensor, d: int, coords: Tensor, edge_order: int) -> Tensor:
    """gradient_helper: the derivative along ``d`` at the coordinates ``coords`` (a 1-d tensor)."""
    if coords.ndim != 1:
        raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, but got an "
                           f"element with {coords.ndim} dimensions!")
    shape = [1] * x.ndim
    shape[d] = -1
    dx = diff(coords, 1, 0)
    dx1, dx2 = dx[0:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _slice(x, d, 0, -2) + b * _slice(x, d, 1, -1) + c * _slice(x, d, 2)
    if edge_order == 1:
        prepend = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / dx[0]
        append = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / dx[-1]
    else:
        a = -(2.0 * dx[0] + dx[1]) / (dx[0] * (dx[0] + dx[1]))
        b = (dx[0] + dx[1]) / (dx[0] * dx[1])
        c = -dx[0] / (dx[1] * (dx[0] + dx[1]))
        prepend = a * _slice(x, d, 0, 1) + b * _slice(x, d, 1, 2) + c * _slice(x, d, 2, 3)
        a = dx[-1] / (dx[-2] * (dx[-1] + dx[-2]))
        b = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
        c = (2 * dx[-1] + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
        append = a * _slice(x, d, -3, -2) + b * _slice(x, d, -2, -1) + c * _slice(x, d, -1)
    return cat([prepend, center, append], d)


@composite("gradient", grad_fn="CatBackward0", note="linear in input: finite differences (cat of the edges and "
           "the interior)")
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative of ``input`` estimated by central differences in the interior and one-sided differences
    (first or second order, ``edge_order``) at the edges, along each dimension of ``dim`` (an int or a list;
    default all). ``spacing``: a number (the step of every dimension), a list of numbers (one per dimension) or
    a list of 1-d tensors (the coordinates of the samples along each dimension). Returns a tuple of tensors of
    ``input``'s shape, one per dimension (integers give floats). Matches torch.gradient.

    Raises:
        RuntimeError: for an ``edge_order`` other than 1 or 2, a dimension shorter than ``edge_order + 1``,
            spacing of the wrong length, or coordinates that are not 1-d (PyTorch's messages).
    """
    x = to_tensor(input)
    if dim is None:
        dims = list(range(x.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    dims = [normalize_dim(d, x.ndim) for d in dims]
    if isinstance(spacing, (list, tuple)):
        steps = list(spacing)
        if len(steps) != len(dims):
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                               f"arguments to have the same length, but got a spacing argument of length {len(steps)} "
                               f"and a dim argument of length {len(dims)}.")
    else:
        steps = [spacing] * len(dims)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for d in dims:
        if x.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    out = []
    for d, h in zip(dims, steps):
        if isinstance(h, Tensor):
            out.append(_coordinates(x, d, h, edge_order))
        else:
            out.append(_uniform(x, d, h, edge_order))
    return tuple(out)

"""More reductions of torch: nansum, nanmean, nanmedian, std_mean, var_mean, aminmax, count_nonzero, mode,
dist, renorm; and the functions PyTorch composes from other ops: diff, cov, corrcoef, trapezoid (trapz),
cumulative_trapezoid.

The primitives are one autograd function each in PyTorch and one op here (NansumBackward0,
NanmedianBackward0/1, StdMeanBackward0, VarMeanBackward0, AminmaxBackward0, ModeBackward0, DistBackward0,
RenormBackward0), with the rules of tools/autograd/derivatives.yaml and FunctionsManual.cpp quoted beside them.
The composites follow aten's code step by step (aten/src/ATen/native/ReduceOps.cpp ``diff``, ``nanmean``;
Correlation.cpp ``cov``, ``corrcoef``; Integration.cpp ``trapezoid``, ``cumulative_trapezoid``), so the graph
they record and its grad_fn names are PyTorch's. Which index nanmedian and mode return among tied values is the
one PyTorch 2.13's CPU kernels return (the lower median of the non-NaN values, ties by position; the smallest of
the most frequent values, at its last position).
"""

from __future__ import annotations

import warnings

import numpy as np

from ...engine import dtypes
from ...engine.lazy import lazy
from ...engine.tensor import Tensor, normalize_dim, to_tensor
from ..core.declare import composite, op
from ..creation import zeros_like
from ..elementwise.arithmetic import clamp
from ..elementwise.comparison import isnan, where
from ..elementwise.special import logical_not, logical_xor
from ..elementwise.unary import sqrt
from ..shape.joins import cat
from ..shape.views import diagonal, narrow, select, squeeze, unsqueeze, view
from ..linalg.products import mm
from .order import _def_select_rules, _select_along, _slice_indices
from .reductions import (_accumulated_dtype, _axes, _dof_warning, _evenly_distribute, _numel, _return_type, _std,
                         _unsqueeze_to, _var, _var_args, _var_backward, _vector_norm, amax, amin, cumsum, expand, mean,
                         sum)

_loss = lazy("gradcli.ops.nn.loss")  # aten's mul.Scalar and div.Scalar (MulBackward1, DivBackward1)

return_types_nanmedian = _return_type("nanmedian")
return_types_mode = _return_type("mode")


# ------------------------------------------------------------------------------------------- nansum, nanmean


@op("nansum", grad_fn="NansumBackward0", promote=None, method=True,
    note="d/dx = 1 where x is not NaN, 0 at NaN", formula="input: grad where input is not NaN, 0 at NaN",
    jvp="reduction")
def nansum(input, dim=None, keepdim=False, dtype=None):
    """Sum over ``dim`` (an int or a tuple; all elements when None) with NaN counted as 0. Integer and bool
    tensors sum to int64. Matches torch.nansum.

    Raises:
        IndexError: for a dimension out of range.
    """
    axes = _axes(dim, input.ndim)
    out_dtype = _accumulated_dtype(input, dtype)
    return np.asarray(np.nansum(input, axis=axes, keepdims=keepdim if dim is not None else False, dtype=out_dtype))


@nansum.defvjp
def _(grad, input, dim, keepdim):
    # derivatives.yaml nansum: nansum_backward(grad.to(self.scalar_type()), self, dim, keepdim)
    # = unsqueeze_multiple(grad, dim, self.sizes(), keepdim) * self.isnan().logical_not()
    return _unsqueeze_to(grad, tuple(input.shape), dim, keepdim) * logical_not(isnan(input))


@composite("nanmean", grad_fn="DivBackward0", method=True, note="nansum(input) / (number of non-NaN elements)")
def nanmean(input, dim=None, keepdim=False, dtype=None):
    """The mean over ``dim`` of the elements that are not NaN. Matches torch.nanmean (``nansum / count``,
    grad_fn DivBackward0).

    Raises:
        RuntimeError: for integer or bool tensors (PyTorch's message).
    """
    x = to_tensor(input)
    if x.data.dtype.kind != "f":
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{dtypes.scalar_type_name(x.data.dtype)}")
    factor = sum(logical_not(isnan(x)), dim, keepdim)
    return nansum(x, dim, keepdim, dtype) / factor


# ---------------------------------------------------------------------------------------------- nanmedian


def _nanmedian_index(row) -> int:
    """The position of the lower median of ``row``'s non-NaN values (ties by position); for a row of NaN only,
    the middle position."""
    order = np.argsort(np.asarray(row, dtype=np.float64), kind="stable")  # (NaN last)
    k = int(np.count_nonzero(~np.isnan(np.asarray(row, dtype=np.float64))))
    return int(order[(k - 1) // 2 if k else (len(row) - 1) // 2])


def _nanmedian_indices(data, dim, keepdim):
    return _slice_indices(data, dim, keepdim, _nanmedian_index)


@op("_nanmedian_all", grad_fn="NanmedianBackward0", promote=None,
    note="d/dx = 1/m at each of the m elements equal to the median, 0 elsewhere",
    formula="input: grad / m at each of the m elements equal to the median of the non-NaN ones, 0 elsewhere",
    kinks="nanmedian", jvp="reduction")
def _nanmedian_all(input):
    """The lower median of the non-NaN elements (NaN if there are none)."""
    if input.dtype.kind == "b":
        raise NotImplementedError('"nanmedian_cpu" not implemented for \'Bool\'')
    flat = input.reshape(-1)
    if input.dtype.kind == "f":
        flat = flat[~np.isnan(flat)]
    if flat.size == 0:
        return np.asarray(np.nan, dtype=input.dtype)
    return np.asarray(np.sort(flat, kind="stable")[(flat.size - 1) // 2])


_nanmedian_all.defvjp(_evenly_distribute)  # derivatives.yaml nanmedian: evenly_distribute_backward(grad, self, result)


@op("_nanmedian_dim", grad_fn="NanmedianBackward1", promote=None,
    note="d/dx = 1 at the index of the median of each slice, 0 elsewhere",
    formula="input: grad at the index of each slice's median of the non-NaN elements, 0 elsewhere", kinks="nanmedian")
def _nanmedian_dim(input, dim, keepdim):
    """``(values, indices)`` of torch.nanmedian(input, dim, keepdim)."""
    if input.dtype.kind == "b":
        raise NotImplementedError('"nanmedian_cpu" not implemented for \'Bool\'')
    return _select_along("nanmedian", input, dim, keepdim, _nanmedian_indices)


_def_select_rules(_nanmedian_dim, _nanmedian_indices)  # derivatives.yaml nanmedian.dim


@composite("nanmedian", grad_fn="NanmedianBackward0 (all elements) | NanmedianBackward1 (dim)", method=True,
           note="d/dx = 1/m at each of the m elements equal to the median; with dim 1 at its index")
def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the elements that are not NaN: of all of them (0-d), or with ``dim`` a ``(values,
    indices)`` named tuple along it. Matches torch.nanmedian.

    Raises:
        NotImplementedError: for bool tensors; IndexError for a dim out of range (PyTorch's messages).
    """
    x = to_tensor(input)
    if dim is None:
        return _nanmedian_all(x)
    values, indices = _nanmedian_dim(x, dim, bool(keepdim))
    return return_types_nanmedian(values, indices)


# --------------------------------------------------------------------------------------- std_mean, var_mean


def _var_mean_forward(name):
    def forward(input, dim, correction, keepdim):
        out = (_std if name == "std" else _var).forward(input, dim, correction, keepdim)
        axes = _axes(dim, input.ndim)
        return out, np.mean(input, axis=axes, keepdims=keepdim).astype(input.dtype, copy=False)

    forward.__name__ = f"_{name}_mean"
    forward.__doc__ = f"``({name}, mean)`` of torch.{name}_mean with ``correction`` and ``dim`` normalised."
    return forward


_var_mean = op("_var_mean", grad_fn="VarMeanBackward0", promote=None, multi_output=True,
               note="var: d/dx = 2 (x - mean) / (n - correction); mean: d/dx = 1/n",
               formula="input: grad_var * 2 * (input - mean(input)) / (n - correction) + grad_mean / n")(
    _var_mean_forward("var"))
_std_mean = op("_std_mean", grad_fn="StdMeanBackward0", promote=None, multi_output=True,
               note="std: d/dx = (x - mean) / ((n - correction) std); mean: d/dx = 1/n",
               formula="input: grad_std * (input - mean(input)) / ((n - correction) * std) + grad_mean / n",
               kinks="std")(_var_mean_forward("std"))


def _mean_backward(grad, shape, dim, keepdim):
    return _unsqueeze_to(grad, shape, dim, keepdim) / _numel(shape, dim)


@_var_mean.defvjp
def _(grads, input, dim, correction, keepdim):
    # FunctionsManual.cpp var_mean_backward: var_backward(gvar) + mean_backward(gmean)
    gvar, gmean = grads
    shape = tuple(input.shape)
    return _var_backward(gvar, input, dim, correction, keepdim) + _mean_backward(gmean, shape, dim, keepdim)


@_std_mean.defvjp
def _(grads, input, dim, correction, keepdim):
    # FunctionsManual.cpp std_mean_backward: std_backward(result0, gstd) + mean_backward(gmean)
    gstd, gmean = grads
    shape = tuple(input.shape)
    std = _std(input, dim, correction, keepdim)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = where(std == 0, 0.0, gstd / (std * 2))
    return _var_backward(scaled, input, dim, correction, keepdim) + _mean_backward(gmean, shape, dim, keepdim)


def _var_tangent(input_t, input, dim, correction, keepdim):
    axes = _axes(dim, input.ndim)
    dof = _numel(tuple(input.shape), dim) - correction
    centered = input - mean(input, axes, True)
    return sum(centered * input_t, axes, keepdim) * (2.0 / dof)


@_var_mean.defjvp
def _(input_t, input, dim, correction, keepdim):
    return _var_tangent(input_t, input, dim, correction, keepdim), mean(input_t, _axes(dim, input.ndim), keepdim)


@_std_mean.defjvp
def _(input_t, input, result, dim, correction, keepdim):
    return (_var_tangent(input_t, input, dim, correction, keepdim) / (result[0] * 2),
            mean(input_t, _axes(dim, input.ndim), keepdim))


def _with_mean(name, entry, input, dim, unbiased, keepdim, correction):
    """var_mean's and std_mean's body (``name``, the op ``entry``): the arguments read as torch.var's, PyTorch's
    warning for ``correction`` not below the number of reduced elements, and the two results as a tuple."""
    dim, correction, keepdim = _var_args(name, dim, unbiased, keepdim, correction)
    x = to_tensor(input)
    if _numel(x.shape, dim) - correction <= 0:
        _dof_warning(name, stacklevel=5)  # (one frame more than the ops that warn themselves: this one)
    with warnings.catch_warnings():  # PyTorch warns once, as var_mean/std_mean, not again as var/std
        warnings.filterwarnings("ignore", r"(var|std)\(\): degrees of freedom", UserWarning)
        return tuple(entry(x, dim, correction, keepdim))


@composite("var_mean", grad_fn="VarMeanBackward0", note=_var_mean.note)
def var_mean(input, dim=None, unbiased=None, keepdim=False, correction=None):
    """``(var, mean)`` over ``dim`` (int or tuple; all elements when None) with Bessel's ``correction`` (default
    1; ``unbiased=False`` means 0). Matches torch.var_mean.

    Raises:
        RuntimeError: for integer tensors; TypeError for both ``unbiased`` and ``correction``.
    """
    return _with_mean("var_mean", _var_mean, input, dim, unbiased, keepdim, correction)


@composite("std_mean", grad_fn="StdMeanBackward0", note=_std_mean.note)
def std_mean(input, dim=None, unbiased=None, keepdim=False, correction=None):
    """``(std, mean)`` over ``dim`` (int or tuple; all elements when None) with Bessel's ``correction`` (default
    1; ``unbiased=False`` means 0). Matches torch.std_mean.

    Raises:
        RuntimeError: for integer tensors; TypeError for both ``unbiased`` and ``correction``.
    """
    return _with_mean("std_mean", _std_mean, input, dim, unbiased, keepdim, correction)


# ------------------------------------------------------------------------------------- aminmax, count_nonzero


class return_types_aminmax(tuple):
    """torch.return_types.aminmax: the ``(min, max)`` result of aminmax, with ``.min`` and ``.max``."""

    __slots__ = ()
    _fields = ("min", "max")

    def __new__(cls, min, max):
        return tuple.__new__(cls, (min, max))

    @property
    def min(self):
        """The smallest values."""
        return self[0]

    @property
    def max(self):
        """The largest values."""
        return self[1]

    def __repr__(self) -> str:
        return f"torch.return_types.aminmax(\nmin={self[0]!r},\nmax={self[1]!r})"

    __str__ = __repr__


@op("_aminmax", grad_fn="AminmaxBackward0", promote=None, multi_output=True,
    note="d/dx = 1/k at each of the k tied minima (and maxima) of a slice, 0 elsewhere",
    formula="input: grad_min / k at each of the k tied minima of a slice, plus grad_max likewise at the maxima",
    kinks="aminmax")
def _aminmax(input, dim, keepdim):
    """``(amin, amax)`` over ``dim`` (a tuple of every dimension when the caller gave none)."""
    if input.size == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    if input.dtype.kind == "b":
        return np.min(input, axis=dim, keepdims=keepdim), np.max(input, axis=dim, keepdims=keepdim)
    return amin.forward(input, dim, keepdim), amax.forward(input, dim, keepdim)


@_aminmax.defvjp
def _(grads, input, dim, keepdim):
    # derivatives.yaml aminmax: amin/amax's scale_grad_by_count backward for each output, summed
    gmin, gmax = grads
    lo, hi = amin(input, dim, keepdim), amax(input, dim, keepdim)
    return amin.vjp(gmin, input, lo, dim, keepdim) + amax.vjp(gmax, input, hi, dim, keepdim)


@_aminmax.defjvp
def _(input_t, input, result, dim, keepdim):
    out = []
    for r in result:
        mask = input == _unsqueeze_to(r, tuple(input.shape), dim, keepdim)
        out.append(sum(input_t * mask, dim, keepdim) / sum(mask, dim, keepdim))
    return tuple(out)


@composite("aminmax", grad_fn="AminmaxBackward0", method=True, note=_aminmax.note)
def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` of all elements, or along ``dim`` (a named tuple with ``.min`` and ``.max``). Matches
    torch.aminmax (the gradient shared evenly by tied elements, as amin and amax).

    Raises:
        RuntimeError: for an empty tensor (PyTorch's message); IndexError for a dim out of range.
    """
    x = to_tensor(input)
    if dim is None:
        axes = tuple(range(x.ndim))
    else:
        axes = (normalize_dim(dim, max(x.ndim, 1)),) if x.ndim else ()
    lo, hi = _aminmax(x, axes, bool(keepdim))
    return return_types_aminmax(lo, hi)


@op("count_nonzero", grad_fn=None, promote=None, differentiable=False, method=True,
    note="not differentiable (integer output)")
def count_nonzero(input, dim=None):
    """The number of nonzero elements (int64), over ``dim`` (an int or a tuple; all when None). Matches
    torch.count_nonzero; not differentiable.

    Raises:
        IndexError: for a dimension out of range.
    """
    return np.asarray(np.count_nonzero(input, axis=_axes(dim, input.ndim)), dtype=np.int64)


# ---------------------------------------------------------------------------------------------------- mode


def _mode_index(row) -> int:
    """The position PyTorch's CPU mode returns: of the smallest most frequent value (NaN equal to nothing), its
    last position."""
    order = np.argsort(np.asarray(row, dtype=np.float64), kind="stable")
    best, best_len, start = 0, 0, 0
    for i in range(1, len(order) + 1):
        if i == len(order) or not (row[order[i]] == row[order[start]]):
            if i - start > best_len:
                best, best_len = i - 1, i - start
            start = i
    return int(order[best])


def _mode_indices(data, dim, keepdim):
    return _slice_indices(data, dim, keepdim, _mode_index, as_float=False)  # (int64 compared exactly)


@op("_mode", grad_fn="ModeBackward0", promote=None, note="d/dx = 1 at the index of each slice's mode, 0 elsewhere",
    formula="input: grad at the index of each slice's mode, 0 elsewhere")
def _mode(input, dim, keepdim):
    """``(values, indices)`` of torch.mode(input, dim, keepdim)."""
    return _select_along("mode", input, dim, keepdim, _mode_indices)


_def_select_rules(_mode, _mode_indices)  # derivatives.yaml mode


@composite("mode", grad_fn="ModeBackward0", method=True, note=_mode.note)
def mode(input, dim=-1, keepdim=False):
    """``(values, indices)`` of the most frequent value along ``dim`` (the smallest among equally frequent ones;
    its last position). Matches torch.mode.

    Raises:
        IndexError: for a dim out of range or of size 0.
    """
    values, indices = _mode(to_tensor(input), dim, bool(keepdim))
    return return_types_mode(values, indices)


# ---------------------------------------------------------------------------------------------- dist, renorm


@op("dist", grad_fn="DistBackward0", inputs=2, method=True,
    note="d/dinput = the p-norm's gradient at input - other; d/dother its negative",
    formula="input: norm_backward(grad, input - other, p, result); other: its negative", kinks="dist")
def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast), a 0-d tensor. Matches torch.dist.

    Raises:
        RuntimeError: for integer tensors (PyTorch's message).
    """
    if input.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{dtypes.scalar_type_name(input.dtype)}")
    return np.asarray(_vector_norm.forward(np.asarray(input - other), float(p), None, False))


@dist.defvjp
def _(grad, input, other, result, p, needs_input_grad):
    # derivatives.yaml dist: self: norm_backward(grad, self - other, p, result); other: -norm_backward(...)
    g = _vector_norm.vjp(grad, input - other, result, float(p), None, False)
    if g is None:
        return None, None
    return (g if needs_input_grad[0] else None, -g if needs_input_grad[1] else None)


@dist.defjvp
def _(input_t, other_t, input, other, result, p):
    # derivatives.yaml dist result: norm_jvp(self_p - other_p, self_t - other_t, p, result)
    d = input - other
    g = _vector_norm.vjp(result * 0 + 1, d, result, float(p), None, False)
    return None if g is None else sum(g * (input_t - other_t))


def _renorm_dims(ndim, dim):
    axis = normalize_dim(dim, ndim)
    return tuple(i for i in range(ndim) if i != axis)


@op("renorm", grad_fn="RenormBackward0", promote=None, method=True,
    note="d/dx = 1 in slices whose p-norm is at most maxnorm, else the derivative of x * maxnorm / (norm + 1e-7)",
    formula="input: grad where norm <= maxnorm, else f * grad - f / (norm + 1e-7) * norm_backward(sum(input * grad))"
            " with f = maxnorm / (norm + 1e-7)", kinks="renorm")
def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled to norm ``maxnorm`` (by
    ``maxnorm / (norm + 1e-7)``). Matches torch.renorm.

    Raises:
        RuntimeError: for a non-positive ``p``, a negative ``maxnorm`` or a 0-d input (PyTorch's messages).
    """
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    norm = _vector_norm.forward(input, float(p), _renorm_dims(input.ndim, dim), True)
    with np.errstate(divide="ignore"):
        factor = np.where(norm > maxnorm, input.dtype.type(maxnorm) / (norm + input.dtype.type(1e-7)),
                          input.dtype.type(1))
    return (input * factor).astype(input.dtype, copy=False)


@renorm.defvjp
def _(grad, input, p, dim, maxnorm):
    # FunctionsManual.cpp renorm_backward
    dims = _renorm_dims(len(input.shape), dim)
    norm = _vector_norm(input, float(p), dims, True)
    grad_output = sum(input * grad, dims, True)
    nb = _vector_norm.vjp(grad_output, input, norm, float(p), dims, True)
    invnorm = 1 / (norm + 1e-7)
    factor = invnorm * maxnorm
    return where(norm > maxnorm, factor * grad - (factor * invnorm) * nb, grad)


@renorm.defjvp
def _(input_t, input, p, dim, maxnorm):
    # the same formula, self-adjoint per slice: the JVP of x * f(norm(x)) is f * t - f / (norm + 1e-7) * x * dnorm
    dims = _renorm_dims(input.ndim, dim)
    norm = _vector_norm(input, float(p), dims, True)
    dnorm = sum(_vector_norm.vjp(norm * 0 + 1, input, norm, float(p), dims, True) * input_t, dims, True)
    invnorm = 1 / (norm + 1e-7)
    factor = invnorm * maxnorm
    return where(norm > maxnorm, factor * input_t - (factor * invnorm) * dnorm * input, input_t)


# ---------------------------------------------------------------------------------------------------- diff


def _diff_operand(t, x, dim, name):
    t = to_tensor(t)
    if t.ndim == 0:
        shape = list(x.shape)
        shape[dim] = 1
        return expand(t, *shape)
    if t.ndim != x.ndim:
        raise RuntimeError(f"diff expects {name} or append to have the same dimension as input")
    return t


@composite("diff", grad_fn="SubBackward0", method=True, note="differences of neighbours (narrow, then sub), n times")
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim``, after ``prepend`` and ``append`` are joined to the input
    (a 0-d one expanded to one slice). Bool tensors give ``logical_xor``. Matches torch.diff (``narrow(x, dim,
    1, len - 1) - narrow(x, dim, 0, len - 1)``, n times).

    Raises:
        RuntimeError: for a 0-d input or a negative ``n`` (PyTorch's messages).
    """
    x = to_tensor(input)
    if x.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = normalize_dim(dim, x.ndim)
    if prepend is not None or append is not None:
        parts = ([_diff_operand(prepend, x, d, "prepend")] if prepend is not None else []) + [x] + \
            ([_diff_operand(append, x, d, "prepend")] if append is not None else [])
        x = cat(parts, d)
    if n == 0:  # at::zeros_like(self).copy_(self): grad_fn CopyBackwards
        return zeros_like(x).copy_(x)
    length = x.shape[d] - 1
    for _ in range(min(n, x.shape[d])):
        hi, lo = narrow(x, d, 1, length), narrow(x, d, 0, length)
        x = logical_xor(hi, lo) if x.dtype.np.kind == "b" else hi - lo
        length -= 1
    return x


# ------------------------------------------------------------------------------------------ cov, corrcoef


@composite("cov", grad_fn="SqueezeBackward0", method=True,
           note="mm of the centred observations divided by the normalisation factor")
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in the columns; a 1-d input
    is one variable), with integer frequency weights ``fweights`` and observation weights ``aweights``. Matches
    torch.cov step by step (aten/src/ATen/native/Correlation.cpp).

    Raises:
        RuntimeError: for more than 2 dimensions, bool input, bad weights (PyTorch's messages).
    """
    x = to_tensor(input)
    if x.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {x.ndim} "
                           "dimensions")
    if x.data.dtype.kind == "b":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = view(x, 1, -1) if x.ndim < 2 else x
    num_observations = x.shape[1]
    w = None
    for name, wt in (("fweights", fweights), ("aweights", aweights)):
        if wt is None:
            continue
        wt = to_tensor(wt)
        if wt.ndim > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                               f"{wt.ndim} dimensions")
        if wt.numel() != num_observations:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                               f"input but got {wt.numel()} != {num_observations}")
        if name == "fweights" and wt.data.dtype.kind not in "iu":
            raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights with "
                               f"{dtypes.scalar_type_name(wt.data.dtype)} dtype")
        if name == "aweights" and wt.data.dtype.kind != "f":
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{dtypes.scalar_type_name(wt.data.dtype)} dtype")
        if bool(np.any(wt.data < 0)):
            raise RuntimeError(f"cov(): {name} cannot be negative")
        w = wt if w is None else w * wt
    w_sum = sum(w) if w is not None else Tensor(np.asarray(num_observations, dtype=np.int64))
    if w is not None and not bool(w_sum.data != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = sum(x * w if w is not None else x, 1) / w_sum
    if w is not None and correction != 0:
        norm_factor = (w_sum - correction * sum(w * to_tensor(aweights)) / w_sum) if aweights is not None else \
            w_sum - correction
    else:
        norm_factor = w_sum - correction
    if bool(norm_factor.data <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm_factor = norm_factor * 0
    x = x - unsqueeze(avg, 1)
    c = mm(x, (x * w if w is not None else x).t())
    return squeeze(c / norm_factor)


@composite("corrcoef", grad_fn="ClampBackward1", method=True,
           note="cov divided by the outer product of the standard deviations, clipped to [-1, 1]")
def corrcoef(input):
    """Pearson's correlation coefficients of the variables in the rows of ``input``. Matches torch.corrcoef
    (cov, divided by the standard deviations, clipped to [-1, 1]).

    Raises:
        RuntimeError: as :func:`cov`.
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    stddev = sqrt(diagonal(c))
    c = c / view(stddev, -1, 1)
    c = c / view(stddev, 1, -1)
    return clamp(c, -1, 1)


# ---------------------------------------------------------------------------- trapezoid, cumulative_trapezoid


def _zeros_like_except(y, dim):
    shape = list(y.shape)
    del shape[dim]
    return Tensor(np.zeros(shape, dtype=y.data.dtype))


def _slices(t, dim):
    """``(t.slice(dim, 0, -1), t.slice(dim, 1))``."""
    n = t.shape[dim]
    return narrow(t, dim, 0, max(n - 1, 0)), narrow(t, dim, min(1, n), max(n - 1, 0))


def _scalar_op(name, t, number):
    """``t * number`` or ``t / number`` as aten's C++ code computes them (mul.Scalar: MulBackward1; div.Scalar:
    DivBackward1); integer and bool tensors promote to the default float dtype."""
    if t.data.dtype.kind != "f":
        return t * number if name == "mul" else t / number
    return (_loss._mul_scalar if name == "mul" else _loss._div_scalar)(t, number)


def _spacing(y, x, dim, name):
    """``x_right - x_left`` of the sample points ``x`` viewed against ``y`` (Integration.cpp)."""
    x = to_tensor(x)
    if y.data.dtype.kind == "b" or x.data.dtype.kind == "b":
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[dim] = x.shape[0]
        x = view(x, *shape)
    elif x.ndim < y.ndim:
        x = view(x, *([1] * (y.ndim - x.ndim) + list(x.shape)))
    left, right = _slices(x, dim)
    return right - left


@composite("trapezoid", grad_fn="MulBackward1 | DivBackward1 (x given)", aliases=("trapz",),
           note="the trapezoid rule: sum of (y_i + y_{i+1}) / 2 * dx_i")
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoid rule along ``dim``: sample points ``x`` (a tensor), or spacing ``dx`` (a number, default
    1). Matches torch.trapezoid and torch.trapz (aten/src/ATen/native/Integration.cpp).

    Raises:
        RuntimeError: for both ``x`` and ``dx``, bool inputs or an ``x`` of the wrong size (PyTorch's messages).
    """
    y = to_tensor(y)
    d = normalize_dim(dim, max(y.ndim, 1))
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments - got both x and dx")
    if y.shape[d] == 0:
        return _zeros_like_except(y, d)
    if x is not None and isinstance(x, Tensor):
        left, right = _slices(y, d)
        return _scalar_op("div", sum((left + right) * _spacing(y, x, d, "trapezoid"), d), 2.)
    step = 1 if dx is None else (x if x is not None else dx)
    return _scalar_op("mul", sum(y, d) - _scalar_op("mul", select(y, d, 0) + select(y, d, -1), 0.5), step)


@composite("cumulative_trapezoid", grad_fn="CumsumBackward0",
           note="the running trapezoid rule: cumsum of (y_i + y_{i+1}) / 2 * dx_i")
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid rule along ``dim`` (one element fewer than ``y`` along it): sample points ``x``
    (a tensor), or spacing ``dx`` (a number, default 1). Matches torch.cumulative_trapezoid.

    Raises:
        RuntimeError: for bool inputs or an ``x`` of the wrong size (PyTorch's messages).
    """
    y = to_tensor(y)
    d = normalize_dim(dim, max(y.ndim, 1))
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments - got both x and dx")
    left, right = _slices(y, d)
    if x is not None and isinstance(x, Tensor):
        return _scalar_op("div", cumsum((left + right) * _spacing(y, x, d, "cumulative_trapezoid"), d), 2.)
    step = 1 if dx is None else dx
    return cumsum(_scalar_op("mul", left + right, step / 2.), d)

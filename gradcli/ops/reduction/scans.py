"""Scans: cumprod, cummax/cummin and logcumsumexp along one dimension, beside cumsum
(:mod:`.reductions`).

Values, dtypes, the indices cummax/cummin choose (the last of equal values; NaN propagating), grad_fn names and
derivatives follow PyTorch 2.13 (tools/autograd/derivatives.yaml, FunctionsManual.cpp's cumprod_backward,
cumprod_jvp, cummaxmin_backward, logcumsumexp_backward and logcumsumexp_jvp). Derivative rules are written with
ops of the table, so that they can be differentiated again.
"""

from __future__ import annotations

import numpy as np

from ...engine.tensor import Tensor, normalize_dim, to_tensor
from ..core.declare import composite, not_implemented_for, op, rule_values
from ..elementwise.comparison import where
from ..shape.indexing import _gather_backward, gather
from .reductions import _accumulated_dtype, _return_type, _reverse_cumsum, cumsum, max, sum
from ..shape.views import flip, movedim, unsqueeze
from ..elementwise.unary import abs, exp, log

return_types_cummax = _return_type("cummax")
return_types_cummin = _return_type("cummin")


# ------------------------------------------------------------------------------------------------ cumprod
def _omitted_products(input, axis: int):
    """``C[..., k, j] = prod_{i <= j, i != k} input_i`` along ``axis`` (moved last), with the mask ``j >= k``:
    the partial derivatives of cumprod that hold with zeros in the input too (the O(n^2) path of PyTorch's
    cumprod_backward). Built with ops, so that it can be differentiated again."""
    x = movedim(input, axis, -1)
    n = x.shape[-1]
    c = cumprod(where(np.eye(n, dtype=bool), 1.0, unsqueeze(x, -2)), -1)
    return c, np.triu(np.ones((n, n), dtype=bool))


@op("cumprod", grad_fn="CumprodBackward0", promote=None, method=True,
    note="d/dx_k cumprod_j = prod_{i <= j, i != k} x_i for j >= k (exact with zeros too)",
    formula="input: the reverse cumsum of grad * result along dim, divided by input (where no element is 0; else "
            "the products of the others)")
def cumprod(input, dim, dtype=None):
    """Cumulative product along ``dim``. Bool and integer tensors give int64 (``dtype`` casts the input first).
    Matches torch.cumprod (grad_fn CumprodBackward0); the gradient is exact where the input has zeros, as
    PyTorch's.

    Raises:
        IndexError: for a dimension out of range.
    """
    axis = normalize_dim(dim, input.ndim)
    out_dtype = _accumulated_dtype(input, dtype)
    if input.ndim == 0:
        return input.astype(out_dtype)
    return np.cumprod(input.astype(out_dtype, copy=False), axis=axis)


@cumprod.defvjp
def _(grad, input, result, dim):
    # FunctionsManual.cpp cumprod_backward: reversed_cumsum(result * grad) / input without zeros, the sum of the
    # omitted products otherwise
    shape = tuple(input.shape)
    if not shape or shape[normalize_dim(dim, len(shape))] <= 1:
        return grad
    axis = normalize_dim(dim, len(shape))
    if not np.any(rule_values(input) == 0):
        return _reverse_cumsum(result * grad, axis) / input
    c, mask = _omitted_products(input, axis)
    g = unsqueeze(movedim(grad, axis, -1), -2)  # g[..., 0, j]
    return movedim(sum(where(mask, c * g, 0.0), -1), -1, axis)


@cumprod.defjvp
def _(input_t, input, result, dim):
    # FunctionsManual.cpp cumprod_jvp: cumsum(self_t / self_p) * result without zeros (size-1 dims and 0-d
    # inputs too), the exact sum of the omitted products otherwise
    axis = normalize_dim(dim, input.ndim)
    if not np.any(input.data == 0):
        return cumsum(input_t / input, axis) * result
    if input.ndim == 0:
        return input_t  # d/dx cumprod(x) = 1 for a single element, zero or not
    c, mask = _omitted_products(input, axis)
    t = unsqueeze(movedim(input_t, axis, -1), -1)  # t[..., k, 0]
    return movedim(sum(where(mask, c * t, 0.0), -2), -1, axis)


# --------------------------------------------------------------------------------------- cummax, cummin
def _cum_indices(data: np.ndarray, axis: int, largest: bool) -> np.ndarray:
    """The index of the running maximum (minimum) along ``axis``, as PyTorch's cummax_helper: a later element
    takes over when it is NaN or, the running value not being NaN, when it is >= (<=) the running value."""
    x = np.moveaxis(data, axis, -1)
    idx = np.zeros(x.shape, dtype=np.int64)
    if x.shape[-1] == 0:
        return np.moveaxis(idx, -1, axis)
    best = x[..., 0].copy()
    cur = np.zeros(x.shape[:-1], dtype=np.int64)
    for j in range(1, x.shape[-1]):
        v = x[..., j]
        better = (v >= best) if largest else (v <= best)
        if data.dtype.kind == "f":
            better = np.isnan(v) | (~np.isnan(best) & better)
        best = np.where(better, v, best)
        cur = np.where(better, j, cur)
        idx[..., j] = cur
    return np.moveaxis(idx, -1, axis)


def _cummaxmin(largest: bool, formula: str):
    name = "cummax" if largest else "cummin"

    def forward(input, dim):
        axis = normalize_dim(dim, input.ndim)
        if input.ndim == 0:
            return input.copy(), np.zeros((), dtype=np.int64)
        idx = _cum_indices(input, axis, largest)
        return np.take_along_axis(input, idx, axis=axis), idx

    def rule(grad, input, dim):
        # derivatives.yaml: cummaxmin_backward: zeros with the gradient added at the indices (scatter_add)
        shape = tuple(input.shape)
        if not shape:
            return grad
        axis = normalize_dim(dim, len(shape))
        return _gather_backward(grad, shape, axis, _cum_indices(rule_values(input), axis, largest))

    def jvp(input_t, input, dim):
        # derivatives.yaml: values: self_t.gather(dim, indices)
        if input.ndim == 0:
            return input_t
        axis = normalize_dim(dim, input.ndim)
        return gather(input_t, axis, Tensor(_cum_indices(input.data, axis, largest)))

    forward.__name__ = f"_{name}"
    forward.__doc__ = f"``(values, indices)`` of torch.{name} along ``dim``."
    o = op(f"_{name}", grad_fn=f"Cum{name[3:]}Backward0", promote=None,
           note="d/dx = the gradient of each position added at the index it took its value from", formula=formula,
           kinks=name)(forward)
    return o.defvjp(rule).defjvp(jvp)


_cummax = _cummaxmin(True, formula="input: each position's grad added at the index of its running maximum")
_cummin = _cummaxmin(False, formula="input: each position's grad added at the index of its running minimum")


@composite("cummax", grad_fn="CummaxBackward0", note=_cummax.note, method=True)
def cummax(input, dim):
    """``(values, indices)`` of the running maximum along ``dim`` (a named tuple): the index of the last of equal
    values, NaN propagating. Matches torch.cummax (grad_fn CummaxBackward0): each position's gradient goes to the
    element it took its value from; the indices (int64) have none.

    Raises:
        IndexError: for a dimension out of range.
    """
    values, indices = _cummax(to_tensor(input), dim)
    return return_types_cummax(values, indices)


@composite("cummin", grad_fn="CumminBackward0", note=_cummin.note, method=True)
def cummin(input, dim):
    """``(values, indices)`` of the running minimum along ``dim`` (a named tuple): the index of the last of equal
    values, NaN propagating. Matches torch.cummin (grad_fn CumminBackward0): each position's gradient goes to the
    element it took its value from; the indices (int64) have none.

    Raises:
        IndexError: for a dimension out of range.
    """
    values, indices = _cummin(to_tensor(input), dim)
    return return_types_cummin(values, indices)


# -------------------------------------------------------------------------------------------- logcumsumexp
@op("logcumsumexp", grad_fn="LogcumsumexpBackward0", promote=None, method=True,
    note="d/dx_k = sum_{j >= k} grad_j * exp(x_k - result_j)",
    formula="input: sum over j >= k of grad_j * exp(input_k - result_j), along dim")
def logcumsumexp(input, dim):
    """``log(cumsum(exp(input), dim))``, computed stably (a running log-add-exp). Matches torch.logcumsumexp
    (grad_fn LogcumsumexpBackward0).

    Raises:
        NotImplementedError: for integer and bool tensors (PyTorch's message).
        IndexError: for a dimension out of range.
    """
    if input.dtype.kind != "f":
        raise not_implemented_for("logcumsumexp_out_cpu", input.dtype)
    axis = normalize_dim(dim, input.ndim)
    if input.ndim == 0:
        return input.copy()
    return np.logaddexp.accumulate(input, axis=axis)


def _reverse_logcumsumexp(x, axis):
    return flip(logcumsumexp(flip(x, (axis,)), axis), (axis,))


@logcumsumexp.defvjp
def _(grad, input, result, dim):
    # FunctionsManual.cpp logcumsumexp_backward: the positive and negative parts of grad in log space
    shape = tuple(input.shape)
    if not shape:
        return grad
    axis = normalize_dim(dim, len(shape))
    lowest = float(np.finfo(rule_values(input).dtype).min)
    # log(0) = -inf where the gradient is 0, inf - inf = nan at infinite inputs: as in PyTorch, silently
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_abs_grad = log(abs(grad))
        log_pos = where(grad > 0, log_abs_grad, lowest)
        log_neg = where(grad < 0, log_abs_grad, lowest)
        out_pos = exp(_reverse_logcumsumexp(log_pos - result, axis) + input)
        out_neg = exp(_reverse_logcumsumexp(log_neg - result, axis) + input)
        return out_pos - out_neg


@logcumsumexp.defjvp
def _(input_t, input, dim):
    # FunctionsManual.cpp logcumsumexp_jvp: cumsum(exp(x - max) * t) / (cumsum(exp(x - max)) + 1e-13)
    if input.ndim == 0:
        return input_t
    axis = normalize_dim(dim, input.ndim)
    e = exp(input - max(input, axis, True).values)
    return cumsum(e * input_t, axis) / (cumsum(e, axis) + 1e-13)

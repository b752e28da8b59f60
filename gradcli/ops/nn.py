"""Normalising activations along a dimension: softmax and log_softmax (torch.nn.functional).

Forward as PyTorch's CPU kernels (the maximum subtracted first); derivatives as derivatives.yaml's
``_softmax_backward_data`` / ``_log_softmax_backward_data``, written with ops of the table so that they can be
differentiated again. The cross-entropy loss (gradcli.ops.loss) is log_softmax followed by nll_loss, as in
PyTorch.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes
from ._core import composite, normalize_dim, op, to_tensor
from .reduction import sum
from .unary import exp


def _check_float(input, kernel: str, dim: int) -> None:
    if input.dtype.kind != "f":
        name = dtypes.scalar_type_name(input.dtype)
        where = "lastdim_kernel_impl" if dim == max(input.ndim, 1) - 1 else "kernel_impl"
        raise NotImplementedError(f'"{kernel}_{where}" not implemented for \'{name}\'')


@op("_softmax", grad_fn="SoftmaxBackward0", promote=None, note="d/dx = y * (grad - sum(grad * y, dim))")
def _softmax(input, dim):
    """``exp(x) / sum(exp(x), dim)`` along ``dim`` (already checked), computed with the maximum subtracted."""
    axis = normalize_dim(dim, input.ndim)
    _check_float(input, "softmax", axis)
    if input.ndim == 0:
        return np.ones_like(input)
    e = np.exp(input - np.max(input, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


@_softmax.defvjp
def _(grad, result, dim):
    return result * (grad - sum(grad * result, dim, True))


@op("_log_softmax", grad_fn="LogSoftmaxBackward0", promote=None, note="d/dx = grad - exp(y) * sum(grad, dim)")
def _log_softmax(input, dim):
    """``x - logsumexp(x, dim)`` along ``dim`` (already checked), computed with the maximum subtracted."""
    axis = normalize_dim(dim, input.ndim)
    _check_float(input, "log_softmax", axis)
    if input.ndim == 0:
        return np.zeros_like(input)
    shifted = input - np.max(input, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


@_log_softmax.defvjp
def _(grad, result, dim):
    return grad - exp(result) * sum(grad, dim, True)


def _implicit_dim(name: str, ndim: int) -> int:
    # torch.nn.functional._get_softmax_dim
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", UserWarning, stacklevel=4)
    return 0 if ndim in (0, 1, 3) else 1


def _normalising(name: str, inner, note: str):
    def fn(input, dim=None, _stacklevel=3, dtype=None):
        if dtype is None and not isinstance(_stacklevel, int):  # torch.softmax(x, dim, dtype) positionally
            dtype = _stacklevel
        input = to_tensor(input)
        if dim is None:
            dim = _implicit_dim(name, input.ndim)
        if dtype is not None:
            input = input.to(dtype)
        return inner(input, dim)

    fn.__name__ = name
    fn.__doc__ = f"""{'Softmax' if name == 'softmax' else 'Log-softmax'} along ``dim``: {note}. ``dtype`` casts the
    input first (ToCopyBackward0). Without ``dim`` the dimension is chosen as PyTorch does (0 for 0-, 1- and 3-d
    inputs, else 1) with its deprecation warning. Matches torch.nn.functional.{name} (grad_fn
    {inner.grad_fn}).

    Raises:
        IndexError: for a dimension out of range; NotImplementedError for integer inputs (PyTorch's message).
    """
    return composite(name, grad_fn=inner.grad_fn, note=note, method=True)(fn)


softmax = _normalising("softmax", _softmax, "y = exp(x) / sum(exp(x)); d/dx = y * (grad - sum(grad * y))")
log_softmax = _normalising("log_softmax", _log_softmax,
                           "y = x - logsumexp(x); d/dx = grad - exp(y) * sum(grad)")


# ----------------------------------------------------------------------------------------- forward mode
# derivatives.yaml _softmax: result: result * (self_t - (self_t * result).sum(dim, true)), which is the VJP
# rule applied to the tangent (softmax's Jacobian is symmetric); _log_softmax: self_t - (self_t *
# result.exp()).sum(dim, true).
_softmax.defjvp_elementwise()


@_log_softmax.defjvp
def _(input_t, result, dim):
    if result.ndim == 0:
        return input_t - input_t
    return input_t - sum(input_t * exp(result), dim, True)

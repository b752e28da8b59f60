"""Normalising activations along a dimension: softmax and log_softmax (torch.nn.functional).

Forward as PyTorch's CPU kernels (the maximum subtracted first); derivatives as derivatives.yaml's
``_softmax_backward_data`` / ``_log_softmax_backward_data``, which are ops of their own as in PyTorch (a
gradient taken with ``create_graph=True`` has grad_fn ``SoftmaxBackwardDataBackward0`` /
``LogSoftmaxBackwardDataBackward0``), with their own derivatives (softmax_double_backward) and tangents. The
cross-entropy loss (gradcli.ops.nn.loss) is log_softmax followed by nll_loss, as in PyTorch.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...engine import dtypes
from ...engine.tensor import normalize_dim, to_tensor
from ..core.declare import composite, op
from ..reduction.reductions import sum
from ..elementwise.unary import exp


def _check_float(input, kernel: str, dim: int) -> None:
    if input.dtype.kind != "f":
        name = dtypes.scalar_type_name(input.dtype)
        where = "lastdim_kernel_impl" if dim == max(input.ndim, 1) - 1 else "kernel_impl"
        raise NotImplementedError(f'"{kernel}_{where}" not implemented for \'{name}\'')


@op("_softmax", grad_fn="SoftmaxBackward0", promote=None, note="d/dx = y * (grad - sum(grad * y, dim))",
    formula="input: result * (grad - sum(grad * result, dim))", jvp="elementwise")
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
    return _softmax_backward_data(grad, result, dim)


@_softmax.defsymbolic
def _(s, input, dim):
    if len(input.shape) != 1:
        raise s.NoFormula(f"softmax of a tensor of shape {input.shape} (formulas cover vectors)")
    y = s.Softmax(s.elem(input))
    return y, lambda g: y * (g - s.SumAll(g * y))


def _axis(dim, ndim: int):
    # the reduced axis of the backward kernels, counted from the end: a batched gradient (jacrev runs softmax's
    # rule on gradients with a leading batch dimension, gradcli.api.autograd_functional.batched_vjp) broadcasts against the
    # output on the left. None for a 0-d tensor, whose one element is the whole dim.
    return normalize_dim(dim, ndim) - ndim if ndim else None


@op("_softmax_backward_data", grad_fn="SoftmaxBackwardDataBackward0", inputs=2, promote=None,
    note="softmax_double_backward: d/dgrad_output = the same op of grad; d/doutput = grad_output * grad - "
         "sum(output * grad_output) * grad - grad_output * sum(output * grad)",
    formula="grad_output: the derivative of softmax's backward (softmax_double_backward, second order)")
def _softmax_backward_data(grad_output, output, dim):
    """softmax's derivative (aten ``_softmax_backward_data``): ``output * (grad_output - sum(grad_output *
    output, dim))``, ``output`` softmax's result. An op of its own, as in PyTorch, so that a gradient taken with
    ``create_graph=True`` shows ``SoftmaxBackwardDataBackward0`` and differentiates by its own rule."""
    axis = _axis(dim, output.ndim)
    return output * (grad_output - np.sum(grad_output * output, axis=axis, keepdims=True))


@_softmax_backward_data.defvjp
def _(grad, grad_output, output, dim, needs_input_grad):
    # derivatives.yaml _softmax_backward_data: grad_output: _softmax_backward_data(grad, output, dim, ...);
    # output: softmax_double_backward(grad, grad_output, dim, output) (FunctionsManual.cpp)
    gg = _softmax_backward_data(grad, output, dim) if needs_input_grad[0] else None
    go = None
    if needs_input_grad[1]:
        go = (grad_output * grad - sum(output * grad_output, dim, True) * grad
              - grad_output * sum(output * grad, dim, True))
    return gg, go


@_softmax_backward_data.defjvp
def _(grad_output_t, output_t, grad_output, output, dim):
    # the tangent of output * (grad_output - sum(grad_output * output)) along both inputs
    return (_softmax_backward_data(grad_output_t, output, dim)
            + output_t * (grad_output - sum(grad_output * output, dim, True))
            - output * sum(grad_output * output_t, dim, True))


@op("_log_softmax", grad_fn="LogSoftmaxBackward0", promote=None, note="d/dx = grad - exp(y) * sum(grad, dim)",
    formula="input: grad - exp(result) * sum(grad, dim)")
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
    return _log_softmax_backward_data(grad, result, dim)


@_log_softmax.defsymbolic
def _(s, input, dim):
    if len(input.shape) != 1:
        raise s.NoFormula(f"log_softmax of a tensor of shape {input.shape} (formulas cover vectors)")
    u = s.elem(input)
    return u - s.LogSumExp(u), lambda g: g - s.Softmax(u) * s.SumAll(g)


@op("_log_softmax_backward_data", grad_fn="LogSoftmaxBackwardDataBackward0", inputs=2, promote=None,
    note="d/dgrad_output = grad - sum(grad * exp(output)); d/doutput = -sum(grad_output) * exp(output) * grad",
    formula="grad_output: the derivative of log_softmax's backward (second order)")
def _log_softmax_backward_data(grad_output, output, dim):
    """log_softmax's derivative (aten ``_log_softmax_backward_data``): ``grad_output - exp(output) *
    sum(grad_output, dim)``, ``output`` log_softmax's result. An op of its own, as in PyTorch, so that a
    gradient taken with ``create_graph=True`` shows ``LogSoftmaxBackwardDataBackward0`` and differentiates by
    its own rule."""
    axis = _axis(dim, output.ndim)
    return grad_output - np.exp(output) * np.sum(grad_output, axis=axis, keepdims=True)


@_log_softmax_backward_data.defvjp
def _(grad, grad_output, output, dim, needs_input_grad):
    # derivatives.yaml _log_softmax_backward_data: grad_output: grad - (grad * output.exp()).sum(dim, true);
    # output: -grad_output.sum(dim, true) * output.exp() * grad
    gg = grad - sum(grad * exp(output), dim, True) if needs_input_grad[0] else None
    go = -sum(grad_output, dim, True) * exp(output) * grad if needs_input_grad[1] else None
    return gg, go


@_log_softmax_backward_data.defjvp
def _(grad_output_t, output_t, grad_output, output, dim):
    # the tangent of grad_output - exp(output) * sum(grad_output) along both inputs
    return (_log_softmax_backward_data(grad_output_t, output, dim)
            - exp(output) * output_t * sum(grad_output, dim, True))


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
# rule applied to the tangent (softmax's Jacobian is symmetric: _softmax declares jvp="elementwise");
# _log_softmax: self_t - (self_t * result.exp()).sum(dim, true).
@_log_softmax.defjvp
def _(input_t, result, dim):
    if result.ndim == 0:
        return input_t - input_t
    return input_t - sum(input_t * exp(result), dim, True)

"""torch.nn.functional.batch_norm: per-channel normalization with the batch's statistics (training, the running
ones updated in place) or the running ones (eval), one op with PyTorch 2.13's NativeBatchNormBackward0 and its
forward-mode rule (batch_norm_jvp). Derivative rules are written with ops of the table, so that they can be
differentiated again. layer_norm, group_norm and instance_norm (which is batch_norm of a reshaped input) are
in :mod:`.functional`.
"""

from __future__ import annotations

import numpy as np

from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, op
from ..elementwise.arithmetic import mul, sub
from ..reduction.reductions import mean, sum
from ..shape.inplace import bump
from ..shape.views import reshape
from ..elementwise.unary import rsqrt


# ------------------------------------------------------------------------------------------- batch_norm
def _bn_axes(ndim: int) -> tuple:
    return (0,) + tuple(range(2, ndim))


def _channel_view(t, ndim: int):
    return reshape(t, (1, -1) + (1,) * (ndim - 2))


@op("_native_batch_norm", grad_fn="NativeBatchNormBackward0", inputs=3, promote=None,
    note="training: d/dx = w invstd (g - mean(g) - xhat mean(g xhat)); eval: d/dx = w g / sqrt(var + eps)",
    formula="input: weight * invstd * (grad - mean(grad) - xhat * mean(grad * xhat)) in training (the batch's "
            "statistics), weight * invstd * grad in eval; weight: sum(grad * xhat); bias: sum(grad)")
def _native_batch_norm(input, weight, bias, training, eps, running_mean, running_var):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` per channel (dim 1): the batch's mean and biased variance
    in training, else the running ones (float64 accumulation, as PyTorch's CPU kernel)."""
    axes = _bn_axes(input.ndim)
    x = input.astype(np.float64)
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if training:
        m = x.mean(axis=axes, keepdims=True)
        v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
    else:
        m = running_mean.astype(np.float64).reshape(shape)
        v = running_var.astype(np.float64).reshape(shape)
    out = (x - m) / np.sqrt(v + eps)
    if weight is not None:
        out = out * weight.astype(np.float64).reshape(shape)
    if bias is not None:
        out = out + bias.astype(np.float64).reshape(shape)
    return out.astype(input.dtype)


@_native_batch_norm.defvjp
def _(grad, input, weight, training, eps, running_mean, running_var, weight_shape, needs_input_grad):
    nd = len(grad.shape)
    axes = _bn_axes(nd)
    if training:
        mu = mean(input, axes, True)
        xmu = sub(input, mu)
        invstd = rsqrt(mean(mul(xmu, xmu), axes, True) + eps)
    else:
        dt = np.float64 if grad.dtype == np.float64 else np.float32
        shape = (1, -1) + (1,) * (nd - 2)
        # constants as the rule's other values are: Tensors under create_graph, else numpy arrays
        const = Tensor if isinstance(input, Tensor) else np.asarray
        xmu = sub(input, const(running_mean.astype(dt).reshape(shape)))
        invstd = const((1.0 / np.sqrt(running_var.astype(np.float64) + eps)).astype(dt).reshape(shape))
    xhat = mul(xmu, invstd)
    sum_g = sum(grad, axes, True)
    sum_gx = sum(mul(grad, xhat), axes, True)
    scale = invstd if weight is None else mul(_channel_view(weight, nd), invstd)
    gi = None
    if needs_input_grad[0]:
        if training:
            n = 1
            for a in axes:
                n *= grad.shape[a]
            gi = mul(scale, sub(sub(grad, sum_g / n), mul(xhat, sum_gx / n)))
        else:
            gi = mul(grad, scale)
    gw = reshape(sum_gx, (-1,)) if needs_input_grad[1] else None
    gb = reshape(sum_g, (-1,)) if needs_input_grad[2] else None
    return gi, gw, gb


@_native_batch_norm.defjvp
def _(input_t, weight_t, bias_t, input, weight, training, eps, running_mean, running_var):
    # derivatives.yaml native_batch_norm: batch_norm_jvp. Training: the batch's mean and variance move with the
    # input (d mean = mean(x_t), d var = 2 mean((x - mean)(x_t - d mean))); eval: the running ones are constants.
    # The mean and invstd enter as PyTorch's saved outputs of the op, which are not differentiable
    # (output_differentiability [True, False, False]): constants for a derivative of the tangent.
    nd = len(input.shape)
    axes = _bn_axes(nd)
    if training:
        data = input.data.astype(np.float64)
        m = data.mean(axis=axes, keepdims=True)
        dt = input.data.dtype
        mu = Tensor(m.astype(dt))
        xmu = sub(input, mu)
        invstd = Tensor((1.0 / np.sqrt(((data - m) ** 2).mean(axis=axes, keepdims=True) + eps)).astype(dt))
        dxmu = sub(input_t, mean(input_t, axes, True))
        dvar = mul(mean(mul(xmu, dxmu), axes, True), 2.0)
        dinvstd = mul(mul(mul(invstd, invstd), invstd), mul(dvar, -0.5))
        xhat = mul(xmu, invstd)
        dxhat = mul(dxmu, invstd) + mul(xmu, dinvstd)
    else:
        dt = np.float64 if input.dtype == np.float64 else np.float32
        shape = (1, -1) + (1,) * (nd - 2)
        invstd = Tensor((1.0 / np.sqrt(running_var.astype(np.float64) + eps)).astype(dt).reshape(shape))
        xhat = mul(sub(input, Tensor(running_mean.astype(dt).reshape(shape))), invstd)
        dxhat = mul(input_t, invstd)
    out = dxhat if weight is None else mul(dxhat, _channel_view(weight, nd))
    if weight_t is not None:
        out = out + mul(xhat, _channel_view(weight_t, nd))
    if bias_t is not None:
        out = out + _channel_view(bias_t, nd)
    return out


@composite("batch_norm", grad_fn="NativeBatchNormBackward0", note=_native_batch_norm.note)
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    """Batch normalization over dim 1 of a (N, C, ...) input. In training the batch statistics normalise and
    the running ones (when given) are updated in place: ``running = (1 - momentum) running + momentum stat``
    with the unbiased variance; in eval the running statistics normalise. Matches
    torch.nn.functional.batch_norm (grad_fn NativeBatchNormBackward0).

    Raises:
        ValueError: PyTorch's message for one value per channel in training.
        RuntimeError: for running statistics missing in eval mode.
    """
    input = to_tensor(input)
    if training:
        size = tuple(input.shape)
        prod = size[0]
        for s in size[2:]:
            prod *= s
        if prod == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"torch.Size({list(size)})")
    elif running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    rm = None if running_mean is None else running_mean.data.copy()
    rv = None if running_var is None else running_var.data.copy()
    out = _native_batch_norm(input, weight, bias, bool(training), float(eps), rm, rv)
    if training and running_mean is not None:

        axes = _bn_axes(input.ndim)
        x = input.data.astype(np.float64)
        n = x.size // x.shape[1]
        m = x.mean(axis=axes)
        var = ((x - x.mean(axis=axes, keepdims=True)) ** 2).sum(axis=axes) / max(n - 1, 1)
        for buf, stat in ((running_mean, m), (running_var, var)):
            if buf is not None:
                buf.data[...] = (momentum * stat + (1 - momentum) * buf.data.astype(np.float64)).astype(buf.data.dtype)
                bump(buf.data)
    return out

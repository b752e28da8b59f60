"""torch.nn.functional's remaining activations, normalizations and distances: logsigmoid, softsign,
celu, mish, hardswish, hardsigmoid, glu, layer_norm, group_norm, instance_norm, normalize, cosine_similarity,
pairwise_distance, bilinear, one_hot, softmin.

Forwards follow PyTorch 2.13's CPU kernels (aten/src/ATen/native/cpu/Activation.cpp, layer_norm.cpp,
group_norm.cpp, Normalization.cpp, Distance.cpp, Linear.cpp) and torch/nn/functional.py, derivatives its
tools/autograd/derivatives.yaml and FunctionsManual.cpp (mish: infinitely_differentiable_mish_backward;
layer_norm: layer_norm_backward and layer_norm_jvp; group_norm: native_group_norm_backward and group_norm_jvp;
glu: glu_backward and glu_jvp). The ops that PyTorch writes as compositions of other ops (softsign, normalize,
cosine_similarity, pairwise_distance, bilinear, instance_norm, softmin) are composites here too, so that
their result's grad_fn is PyTorch's (DivBackward0, SumBackward1, NormBackward1, ViewBackward0...). Derivative
rules are written with ops of the table, so that they can be differentiated again.
"""

from __future__ import annotations

import numpy as np

from ...engine import autograd, dtypes, limits
from ...engine.context import state as _state
from ...engine.tensor import Tensor, fw_tangent, normalize_dim, to_tensor
from ..core.apply import infer_size
from ..core.declare import composite, not_implemented_for, op
from ..elementwise.activation import _elu, _elu_backward, _inplace, softplus
from ..elementwise.arithmetic import _not_differentiable, clamp
from ..elementwise.comparison import where
from .batch_norm import batch_norm
from ..linalg.products import einsum
from .softmax import _implicit_dim, _softmax
from ..reduction.reductions import _vector_norm, expand, mean, norm, repeat, sum
from ..shape.joins import _nary_op
from ..shape.views import reshape
from ..elementwise.unary import abs, rsqrt, sigmoid, tanh


def _float_only(input: np.ndarray, kernel: str) -> None:
    if input.dtype.kind != "f":
        raise not_implemented_for(kernel, input.dtype)


# ------------------------------------------------------------------------------------------- logsigmoid
@op("logsigmoid", grad_fn="LogSigmoidBackward0", promote=None,
    note="d/dx = sigmoid(-x) = 1 - sigmoid(x)", formula="input: grad * sigmoid(-input)", jvp="elementwise")
def logsigmoid(input):
    """``log(sigmoid(x))``, computed as ``min(x, 0) - log1p(exp(-|x|))`` (PyTorch's log_sigmoid CPU kernel, exact
    for large ``|x|``). Matches torch.nn.functional.logsigmoid (grad_fn LogSigmoidBackward0).

    Raises:
        NotImplementedError: for integer and bool tensors (PyTorch's message).
    """
    _float_only(input, "log_sigmoid_cpu")
    return np.minimum(input, input.dtype.type(0)) - np.log1p(np.exp(-np.abs(input)))


@logsigmoid.defvjp
def _(grad, input):
    # derivatives.yaml log_sigmoid_forward: log_sigmoid_backward(grad, self, buffer) = grad * sigmoid(-x)
    return grad * sigmoid(-input)


@logsigmoid.defsymbolic
def _(s, input):
    return s.elementwise(lambda t: -s.Softplus(-t), input)


# ---------------------------------------------------------------------------------------------- softsign
@composite("softsign", grad_fn="DivBackward0", note="d/dx = 1 / (1 + |x|)^2")
def softsign(input):
    """``x / (1 + |x|)``, computed as torch/nn/functional.py does: ``input / (input.abs() + 1)`` (grad_fn
    DivBackward0). Integer tensors give the default float dtype, as PyTorch's division. Matches
    torch.nn.functional.softsign."""
    input = to_tensor(input)
    return input / (abs(input) + 1)


# -------------------------------------------------------------------------------------------------- celu
@op("celu", grad_fn="CeluBackward0", promote=None, public=False,
    note="d/dx = 1 where x > 0, else exp(x / alpha)",
    formula="input: grad where input > 0, else grad * exp(input / alpha)", kinks="celu", jvp="elementwise")
def _celu(input, alpha):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``: PyTorch's celu, which is
    ``elu(x, alpha, scale=1, input_scale=1 / alpha)``."""
    _float_only(input, "elu_cpu")
    return _elu.forward(input, alpha, 1.0, 1.0 / alpha)


@_celu.defvjp
def _(grad, input, alpha):
    # derivatives.yaml celu: elu_backward(grad, alpha, 1, 1.0/alpha.toFloat(), false, self): the backward's input
    # scale is 1 over alpha rounded to float32 (the forward's is 1 / alpha in double), in every dtype
    return _elu_backward(grad, input, alpha, 1.0, 1.0 / float(np.float32(alpha)))


@composite("celu", grad_fn="CeluBackward0", note=_celu.note)
def celu(input, alpha=1.0, inplace=False):
    """Continuously differentiable ELU (Barron, 2017): ``x`` for ``x > 0``, else ``alpha * (exp(x / alpha) -
    1)``. Matches torch.nn.functional.celu (grad_fn CeluBackward0): the gradient at 0 is 1.

    Raises:
        RuntimeError: for ``alpha == 0`` (PyTorch's message); NotImplementedError for integer and bool tensors.
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _inplace(input, _celu(input, alpha), inplace)


# -------------------------------------------------------------------------------------------------- mish
@op("mish", grad_fn="MishBackward0", promote=None, public=False,
    note="d/dx = tanh(softplus(x)) + x * sigmoid(x) * (1 - tanh(softplus(x))^2)",
    formula="input: grad * (tanh(softplus(input)) + input * sigmoid(input) * (1 - tanh(softplus(input))^2))",
    jvp="elementwise")
def _mish(input):
    """``x * tanh(softplus(x))`` (PyTorch's mish kernel: ``x * tanh(log1p(exp(x)))``)."""
    _float_only(input, "mish_cpu")
    return input * np.tanh(np.logaddexp(input.dtype.type(0), input))


@_mish.defvjp
def _(grad, input):
    # FunctionsManual.cpp infinitely_differentiable_mish_backward
    s = sigmoid(input)
    t = tanh(softplus(input))
    return grad * (t + input * s * (1 - t * t))


@composite("mish", grad_fn="MishBackward0", note=_mish.note)
def mish(input, inplace=False):
    """Mish (Misra, 2019): ``x * tanh(softplus(x))``. Matches torch.nn.functional.mish (grad_fn MishBackward0).

    Raises:
        NotImplementedError: for integer and bool tensors (PyTorch's message).
    """
    return _inplace(input, _mish(input), inplace)


# ---------------------------------------------------------------------------------- hardswish, hardsigmoid
@op("hardswish", grad_fn="HardswishBackward0", promote=None, public=False,
    note="d/dx = 0 for x < -3, x / 3 + 1/2 for -3 <= x <= 3, 1 for x > 3",
    formula="input: 0 where input < -3, grad * (input / 3 + 1/2) where -3 <= input <= 3, grad where input > 3",
    kinks="hardswish", jvp="elementwise")
def _hardswish(input):
    """``x * min(max(x + 3, 0), 6) / 6`` (PyTorch's hardswish kernel)."""
    _float_only(input, "hardswish_cpu")
    t = input.dtype.type
    return input * np.minimum(np.maximum(input + t(3), t(0)), t(6)) / t(6)


@_hardswish.defvjp
def _(grad, input):
    # hardswish_backward (Activation.cpp): 0 below -3, grad * (x / 3 + 0.5) up to 3 (inclusive), grad above
    return where(input < -3, 0.0, where(input <= 3, grad * (input / 3 + 0.5), grad))


@composite("hardswish", grad_fn="HardswishBackward0", note=_hardswish.note)
def hardswish(input, inplace=False):
    """Hard swish (Howard et al., 2019, MobileNetV3): ``x * relu6(x + 3) / 6``. Matches
    torch.nn.functional.hardswish (grad_fn HardswishBackward0; gradient ``x / 3 + 1/2`` at -3 and 3).

    Raises:
        NotImplementedError: for integer and bool tensors (PyTorch's message).
    """
    return _inplace(input, _hardswish(input), inplace)


@op("hardsigmoid", grad_fn="HardsigmoidBackward0", promote=None, public=False,
    note="d/dx = 1/6 for -3 < x < 3, else 0",
    formula="input: grad / 6 where -3 < input < 3, else 0", kinks="hardsigmoid", jvp="elementwise")
def _hardsigmoid(input):
    """``min(max(x + 3, 0), 6) / 6`` (PyTorch's hardsigmoid kernel)."""
    _float_only(input, "hardsigmoid_cpu")
    t = input.dtype.type
    return np.minimum(np.maximum(input + t(3), t(0)), t(6)) / t(6)


@_hardsigmoid.defvjp
def _(grad, input):
    return _hardsigmoid_backward(grad, input)


@op("_hardsigmoid_backward", grad_fn="NotImplemented", inputs=2, promote=None,
    note="no derivative: backward raises, as in PyTorch")
def _hardsigmoid_backward(grad_output, input):
    """hardsigmoid_backward: ``grad_output * one_sixth`` strictly inside (-3, 3), else 0, where PyTorch's kernel
    (aten/src/ATen/native/cpu/Activation.cpp) takes ``one_sixth`` as ``1.0f / 6.0f``, a float32 constant, in every
    dtype (0.1666666716337204 in float64). PyTorch has no derivative for it (derivatives.yaml: not_implemented), so
    a second derivative through hardsigmoid raises, as there."""
    t = grad_output.dtype.type
    one_sixth = t(np.float32(1.0) / np.float32(6.0))
    return np.where((input > -3) & (input < 3), grad_output * one_sixth, t(0)).astype(grad_output.dtype)


_hardsigmoid_backward.defvjp(_not_differentiable("hardsigmoid_backward"))
_hardsigmoid_backward.defjvp_unsupported("hardsigmoid_backward")


@composite("hardsigmoid", grad_fn="HardsigmoidBackward0", note=_hardsigmoid.note)
def hardsigmoid(input, inplace=False):
    """Hard sigmoid: ``relu6(x + 3) / 6``. Matches torch.nn.functional.hardsigmoid (grad_fn
    HardsigmoidBackward0; gradient 0 at -3 and 3).

    Raises:
        NotImplementedError: for integer and bool tensors (PyTorch's message).
    """
    return _inplace(input, _hardsigmoid(input), inplace)


# --------------------------------------------------------------------------------------------------- glu
def _halves(x, axis: int, h: int):
    lead = (slice(None),) * axis
    return x[lead + (slice(0, h),)], x[lead + (slice(h, None),)]


@op("glu", grad_fn="GluBackward0", promote=None,
    note="with a, b the halves of x along dim: d/da = sigmoid(b), d/db = a sigmoid(b) (1 - sigmoid(b))",
    formula="input (halves a, b along dim): a: grad * sigmoid(b); b: grad * a * sigmoid(b) * (1 - sigmoid(b))")
def glu(input, dim=-1):
    """Gated linear unit (Dauphin et al., 2017): ``a * sigmoid(b)`` with ``a`` the first half of ``input`` along
    ``dim`` and ``b`` the second. Matches torch.nn.functional.glu (grad_fn GluBackward0).

    Raises:
        RuntimeError: for a 0-d input or an odd size along ``dim`` (PyTorch's messages); IndexError for a
            dimension out of range; NotImplementedError for integer tensors.
    """
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    axis = normalize_dim(dim, input.ndim)
    n = input.shape[axis]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {axis} is size {n}")
    _float_only(input, "glu_cpu")
    a, b = _halves(input, axis, n // 2)
    return a / (input.dtype.type(1) + np.exp(-b))


@glu.defvjp
def _(grad, input, dim):
    # FunctionsManual.cpp glu_backward: grad * sigmoid(b) for the first half, grad * a * s * (1 - s) for the
    # second, concatenated along dim
    axis = normalize_dim(dim, len(input.shape))
    a, b = _halves(input, axis, input.shape[axis] // 2)
    s = sigmoid(b)
    ga = grad * s
    return _nary_op("cat", 2)(ga, ga * a * (1 - s), axis)


@glu.defjvp
def _(input_t, input, dim):
    # derivatives.yaml glu: glu_jvp: a_t * sigmoid(b) + a * sigmoid(b) * (1 - sigmoid(b)) * b_t
    axis = normalize_dim(dim, input.ndim)
    h = input.shape[axis] // 2
    a, b = _halves(input, axis, h)
    a_t, b_t = _halves(input_t, axis, h)
    s = sigmoid(b)
    return a_t * s + a * s * (1 - s) * b_t


# ------------------------------------------------------------------------------------ layer and group norm
def _moments(x, axes):
    """``(x - mean, biased variance)`` over ``axes`` (kept), with ops (so that rules differentiate again)."""
    xmu = x - mean(x, axes, True)
    return xmu, mean(xmu * xmu, axes, True)


def _normalized_grad(g, xhat, rstd, axes):
    """The gradient of ``xhat = (x - mean) * rstd`` over ``axes`` for the gradient ``g`` of ``xhat``:
    ``rstd * (g - mean(g) - xhat * mean(g * xhat))`` (layer_norm_backward, native_group_norm_backward)."""
    return rstd * (g - mean(g, axes, True) - xhat * mean(g * xhat, axes, True))


def _normalized_tangent(x, x_t, axes, eps):
    """``(xhat, xhat_t)``: the normalized ``x`` over ``axes`` and its tangent (layer_norm_jvp, group_norm_jvp)."""
    xmu, var = _moments(x, axes)
    rstd = rsqrt(var + eps)
    xhat = xmu * rstd
    dxmu = x_t - mean(x_t, axes, True)
    dvar = 2 * mean(xmu * dxmu, axes, True)
    return xhat, dxmu * rstd - 0.5 * xmu * rstd * rstd * rstd * dvar


def _np_normalized(x: np.ndarray, axes, eps) -> np.ndarray:
    x = x.astype(np.float64)
    m = x.mean(axis=axes, keepdims=True)
    d = x - m
    return d / np.sqrt((d * d).mean(axis=axes, keepdims=True) + eps)


def _tail_axes(ndim: int, k: int) -> tuple:
    return tuple(range(ndim - k, ndim))


@op("_native_layer_norm", grad_fn="NativeLayerNormBackward0", inputs=3, promote=None,
    note="d/dx = rstd (g w - mean(g w) - xhat mean(g w xhat)); d/dw = sum(g xhat); d/db = sum(g)",
    formula="input: rstd * (grad * weight - mean(grad * weight) - xhat * mean(grad * weight * xhat)) over the "
            "normalized dims; weight: sum(grad * xhat); bias: sum(grad) (xhat = (input - mean) * rstd)")
def _native_layer_norm(input, weight, bias, k, eps):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last ``k`` dimensions (biased variance;
    computed in float64, returned in the input's dtype)."""
    out = _np_normalized(input, _tail_axes(input.ndim, k), eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out.astype(input.dtype)


@_native_layer_norm.defvjp
def _(grad, input, weight, k, eps, needs_input_grad):
    axes = _tail_axes(len(input.shape), k)
    xmu, var = _moments(input, axes)
    rstd = rsqrt(var + eps)
    xhat = xmu * rstd
    g = grad if weight is None else grad * weight
    gi = _normalized_grad(g, xhat, rstd, axes) if needs_input_grad[0] else None
    # weight and bias have the trailing shape: the engine sums the leading dimensions away
    gw = grad * xhat if needs_input_grad[1] else None
    gb = grad if needs_input_grad[2] else None
    return gi, gw, gb


@_native_layer_norm.defjvp
def _(input_t, weight_t, bias_t, input, weight, k, eps):
    # derivatives.yaml native_layer_norm: layer_norm_jvp(..., result1, result2): the mean and rstd enter as
    # PyTorch's saved outputs, which are not differentiable (output_differentiability [True, False, False]):
    # constants for a derivative of the tangent, as in PyTorch's reverse over forward.
    axes = _tail_axes(input.ndim, k)
    x = input.data.astype(np.float64)
    m = x.mean(axis=axes, keepdims=True)
    dt = input.data.dtype
    xmu = input - Tensor(m.astype(dt))
    rstd = Tensor((1.0 / np.sqrt(((x - m) ** 2).mean(axis=axes, keepdims=True) + eps)).astype(dt))
    xhat = xmu * rstd
    dxmu = input_t - mean(input_t, axes, True)
    dxhat = dxmu * rstd - xmu * (rstd * rstd * rstd) * mean(xmu * dxmu, axes, True)
    out = dxhat if weight is None else dxhat * weight
    if weight_t is not None:
        out = out + xhat * weight_t
    if bias_t is not None:
        out = out + bias_t
    return out


def _size_list(shape) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


@composite("layer_norm", grad_fn="NativeLayerNormBackward0", note=_native_layer_norm.note)
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalization (Ba et al., 2016) over the trailing ``normalized_shape`` dimensions: the mean and the
    biased variance of each slice, ``(x - mean) / sqrt(var + eps) * weight + bias`` with ``weight`` and ``bias``
    of shape ``normalized_shape``. Float32/float64. Matches torch.nn.functional.layer_norm (grad_fn
    NativeLayerNormBackward0).

    Raises:
        RuntimeError: for an input whose trailing shape is not ``normalized_shape``, or a weight/bias of another
            shape (PyTorch's messages); NotImplementedError for integer tensors.
        TypeError: for a ``normalized_shape`` that is not a tuple or list of ints (PyTorch's message).
    """
    input = to_tensor(input)
    if not isinstance(normalized_shape, (tuple, list)) or not all(isinstance(s, int) for s in normalized_shape):
        raise TypeError(f"layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type(normalized_shape).__name__}")
    ns = tuple(int(s) for s in normalized_shape)
    shape = tuple(input.shape)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{_size_list(t.shape)} and normalized_shape = {_size_list(ns)}")
    if len(shape) < len(ns) or shape[len(shape) - len(ns):] != ns:
        raise RuntimeError(f"Given normalized_shape={_size_list(ns)}, expected input with shape "
                           f"[*, {_size_list(ns)[1:-1]}], but got input of size{_size_list(shape)}")
    _float_only(input.data, "LayerNormKernelImpl")
    return _native_layer_norm(input, weight, bias, len(ns), eps)


def _channel_view(t, ndim: int):
    return reshape(t, (1, -1) + (1,) * (ndim - 2))


def _channel_sum(t, ndim: int):
    """``t`` of an (N, C, *) shape summed to (C,)."""
    return reshape(sum(t, (0,) + tuple(range(2, ndim)), True), (-1,))


@op("_native_group_norm", grad_fn="NativeGroupNormBackward0", inputs=3, promote=None,
    note="per (sample, group): layer_norm's derivative; d/dw, d/db summed per channel",
    formula="per (sample, group), input: rstd * (grad * weight - mean(grad * weight) - xhat * mean(grad * weight * "
            "xhat)); weight: sum(grad * xhat), bias: sum(grad) per channel")
def _native_group_norm(input, weight, bias, num_groups, eps):
    """Group normalization of an (N, C, *) input: each sample's ``num_groups`` groups of channels normalized
    over their channels and positions, then the per-channel affine (float64 inside)."""
    n = input.shape[0]
    out = _np_normalized(input.reshape(n, num_groups, -1), (2,), eps).reshape(input.shape)
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out.astype(input.dtype)


@_native_group_norm.defvjp
def _(grad, input, weight, num_groups, eps, needs_input_grad):
    shape = tuple(input.shape)
    nd = len(shape)
    x = reshape(input, (shape[0], num_groups, -1))
    xmu, var = _moments(x, (2,))
    rstd = rsqrt(var + eps)
    xhat = xmu * rstd
    gi = gw = gb = None
    if needs_input_grad[0]:
        g = grad if weight is None else grad * _channel_view(weight, nd)
        gi = reshape(_normalized_grad(reshape(g, (shape[0], num_groups, -1)), xhat, rstd, (2,)), shape)
    if needs_input_grad[1]:
        gw = _channel_sum(grad * reshape(xhat, shape), nd)
    if needs_input_grad[2]:
        gb = _channel_sum(grad, nd)
    return gi, gw, gb


@_native_group_norm.defjvp
def _(input_t, weight_t, bias_t, input, weight, num_groups, eps):
    shape = tuple(input.shape)
    nd = len(shape)
    g3 = (shape[0], num_groups, -1)
    xhat, dxhat = _normalized_tangent(reshape(input, g3), reshape(input_t, g3), (2,), eps)
    xhat, dxhat = reshape(xhat, shape), reshape(dxhat, shape)
    out = dxhat if weight is None else dxhat * _channel_view(weight, nd)
    if weight_t is not None:
        out = out + xhat * _channel_view(weight_t, nd)
    if bias_t is not None:
        out = out + _channel_view(bias_t, nd)
    return out


@composite("group_norm", grad_fn="NativeGroupNormBackward0", note=_native_group_norm.note)
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalization (Wu and He, 2018) of an (N, C, *) input: the C channels split into ``num_groups``
    groups, each (sample, group) normalized by its mean and biased variance, then ``* weight + bias`` per
    channel (shape (C,)). Matches torch.nn.functional.group_norm (grad_fn NativeGroupNormBackward0).

    Raises:
        RuntimeError: for fewer than 2 dimensions, C not divisible by ``num_groups``, or a weight/bias not of
            shape (C,) (PyTorch's messages); NotImplementedError for integer tensors.
    """
    input = to_tensor(input)
    shape = tuple(input.shape)
    if len(shape) < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {len(shape)}")
    c = shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {_size_list(shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {_size_list(t.shape)} and input of shape "
                               f"{_size_list(shape)}")
    _float_only(input.data, "GroupNormKernelImpl")
    return _native_group_norm(input, weight, bias, num_groups, eps)


@composite("instance_norm", grad_fn="ViewBackward0", note="batch_norm's derivative, per (sample, channel)")
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Instance normalization (Ulyanov et al., 2016) of an (N, C, *) input: each (sample, channel) normalized
    over its positions. Computed as PyTorch's at::instance_norm: batch_norm of the input viewed as (1, N * C,
    *) with the weight, bias and running statistics repeated N times, then viewed back (grad_fn
    ViewBackward0); the running statistics, when given, become the mean over the samples of the updated ones.
    Matches torch.nn.functional.instance_norm.

    Raises:
        ValueError: for a single position per channel in training (PyTorch's message).
    """

    input = to_tensor(input)
    shape = tuple(input.shape)
    if use_input_stats:
        size = 1
        for s in shape[2:]:
            size *= s
        if size == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                             f"torch.Size({list(shape)})")
    n, c = shape[0], shape[1]

    def rep(t):
        return None if t is None else repeat(t, n)

    rm, rv = rep(running_mean), rep(running_var)
    if rm is not None:
        rm, rv = rm.detach(), rv.detach()
    out = batch_norm(reshape(input, (1, n * c) + shape[2:]), rm, rv, rep(weight), rep(bias), use_input_stats,
                     momentum, eps)
    if use_input_stats and running_mean is not None:
        with autograd.no_grad():
            running_mean.copy_(mean(reshape(rm, (n, c)), 0))
            running_var.copy_(mean(reshape(rv, (n, c)), 0))
    return reshape(out, shape)


# ---------------------------------------------------------------------------------------------- distances
@composite("normalize", grad_fn="DivBackward0", note="d/dx of x / max(norm_p(x, dim), eps)")
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``, computed as torch/nn/functional.py does: ``input /
    input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)`` (grad_fn DivBackward0). Matches
    torch.nn.functional.normalize.

    Raises:
        RuntimeError: for integer tensors (torch.linalg.vector_norm's message); IndexError for a dimension out
            of range; NotImplementedError for ``out``.
    """
    if out is not None:
        raise NotImplementedError("gradcli's normalize does not write into out=")
    input = to_tensor(input)
    denom = clamp(norm(input, p, dim, True), min=eps)
    return input / expand(denom, tuple(input.shape))


def _float_common(x1, x2):
    """The two tensors cast to their common dtype, which must be floating (cosine_similarity's check)."""
    x1, x2 = to_tensor(x1), to_tensor(x2)
    common = dtypes.result_type([x.data.dtype for x in (x1, x2) if x.ndim],
                                [x.data.dtype for x in (x1, x2) if not x.ndim], [])
    if common.kind != "f":
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{dtypes.scalar_type_name(common)}")
    cast = dtypes.from_numpy(common)
    return (x1 if x1.data.dtype == common else x1.to(cast)), (x2 if x2.data.dtype == common else x2.to(cast))


@composite("cosine_similarity", grad_fn="SumBackward1", note="d/dx1 of sum(x1 / ||x1|| * x2 / ||x2||, dim)")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``<x1, x2> / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim`` after broadcasting, computed as
    PyTorch 2.13's at::cosine_similarity: ``sum(x1 / n1 * x2 / n2, dim)`` with each norm clamped to ``eps`` in
    value only (PyTorch clamps it in place without recording, so the gradient flows through the unclamped
    norm). Matches torch.nn.functional.cosine_similarity (grad_fn SumBackward1).

    Raises:
        RuntimeError: for shapes that do not broadcast or an integer common dtype (PyTorch's messages);
            IndexError for a dimension out of range.
    """
    x1, x2 = _float_common(x1, x2)
    shape = infer_size(tuple(x1.shape), tuple(x2.shape))
    x1, x2 = expand(x1, shape), expand(x2, shape)

    def clamped_norm(x):
        n = _vector_norm(x, 2.0, dim, True)
        shift = np.maximum(n.data, n.data.dtype.type(eps)) - n.data
        out = n + Tensor(shift)
        tangent = fw_tangent(out)
        if tangent is not None:
            # no_grad does not stop forward AD: PyTorch's clamp_min_ zeroes the tangent where not norm >= eps
            below = ~(n.data >= n.data.dtype.type(eps))
            if below.any():
                out._fw = (_state.fw_level, where(Tensor(below), 0.0, tangent))
        return out

    return sum((x1 / clamped_norm(x1)) * (x2 / clamped_norm(x2)), dim)


@op("_norm_dim", grad_fn="NormBackward1", promote=None, note=_vector_norm.note,
    formula="input: grad * sign(input) * |input|^(p - 1) / result^(p - 1) over dim (0 where result is 0)",
    kinks="norm", jvp="reduction")
def _norm_dim(input, ord=2, dim=None, keepdim=False):
    """at::norm(input, p, dim, keepdim), which pairwise_distance calls: torch.linalg.vector_norm's values and
    derivative under PyTorch's NormBackward1."""
    return _vector_norm.forward(input, ord, dim, keepdim)


_norm_dim.defvjp(_vector_norm.vjp)


@composite("pairwise_distance", grad_fn="NormBackward1", note="d/dx1 of ||x1 - x2 + eps||_p over the last dim")
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dimension of the broadcast inputs, computed as PyTorch's
    at::pairwise_distance: ``norm(x1 - x2 + eps, p, max(x1.dim(), x2.dim()) - 1, keepdim)`` (grad_fn
    NormBackward1). Matches torch.nn.functional.pairwise_distance.

    Raises:
        RuntimeError: for shapes that do not broadcast (PyTorch's message).
    """
    x1, x2 = to_tensor(x1), to_tensor(x2)
    d = x1 - x2 + eps
    return _norm_dim(d, float(p), max(x1.ndim, x2.ndim) - 1 if d.ndim else None, keepdim)


# ---------------------------------------------------------------------------------------------- bilinear
@composite("bilinear", grad_fn="ViewBackward0 (no bias) | AddBackward0 (bias)",
           note="d/dinput1 = grad W input2, d/dinput2 = input1 W grad, d/dW = grad x input1 x input2")
def bilinear(input1, input2, weight, bias=None):
    """``y_k = x1^T W_k x2 + b_k`` over the last dimension of ``input1`` (size in1) and ``input2`` (in2), with
    ``weight`` of shape (out, in1, in2) and ``bias`` (out,); the batch dimensions must be equal. Computed as
    PyTorch's at::bilinear: the inputs flattened to 2-d, the product (einsum here, _trilinear there), then
    reshaped (grad_fn ViewBackward0), plus the bias (AddBackward0). Matches torch.nn.functional.bilinear.

    Raises:
        RuntimeError: for mismatching dimensions or sizes (PyTorch's messages).
    """
    input1, input2, weight = to_tensor(input1), to_tensor(input2), to_tensor(weight)
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.shape[i]} and "
                               f"{input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected "
                           f"{weight.shape[0]}")
    out_shape = tuple(input1.shape[:-1]) + (weight.shape[0],)
    flat = einsum("bi,oij,bj->bo", reshape(input1, (-1, input1.shape[-1])), weight,
                  reshape(input2, (-1, input2.shape[-1])))
    out = reshape(flat, out_shape)
    return out if bias is None else out + bias


# ----------------------------------------------------------------------------------------------- one_hot
@composite("one_hot", grad_fn="none (integers)", note="not differentiable (an int64 result)", differentiable=False)
def one_hot(tensor, num_classes=-1):
    """The int64 one-hot encoding of an int64 class-index tensor: shape ``tensor.shape + (num_classes,)``, with
    ``num_classes = max + 1`` when -1. Matches torch.nn.functional.one_hot.

    Raises:
        RuntimeError: for a non-int64 tensor, negative classes, classes >= num_classes, or an empty tensor
            without num_classes (PyTorch's messages).
    """
    if not isinstance(tensor, Tensor) or tensor.data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    a = tensor.data
    if a.size == 0 and num_classes == -1:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if a.size:
        if a.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(a.max()) + 1
        elif a.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    limits.check_numel(a.shape + (num_classes,), "one_hot()")
    return Tensor((a[..., None] == np.arange(num_classes)).astype(np.int64))


# ----------------------------------------------------------------------------------------- forward mode
# derivatives.yaml: auto_element_wise for the activations (the VJP rule applied to the tangent)


# ----------------------------------------------------------------------------------------------- softmin
@composite("softmin", grad_fn="SoftmaxBackward0", note="softmax's derivative, of -x")
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input, dim)``, as torch/nn/functional.py computes it (grad_fn SoftmaxBackward0). Matches
    torch.nn.functional.softmin (an implicit ``dim`` as PyTorch's legacy rule picks it, with its warning)."""
    if dtype is None and not isinstance(_stacklevel, int):
        dtype = _stacklevel
    input = to_tensor(input)
    if dim is None:
        dim = _implicit_dim("softmin", input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    return _softmax(-input, dim)

"""The channel-wise and self-normalizing dropouts, RReLU and the Gumbel-softmax of torch.nn.functional, drawn from
the run's generator as PyTorch 2.13's CPU kernels draw them, so that after the same ``torch.manual_seed`` the
numbers are PyTorch's; and local_response_norm and native_channel_shuffle.

* dropout1d/2d/3d, feature_dropout, alpha_dropout, feature_alpha_dropout: aten/src/ATen/native/Dropout.cpp's
  ``_dropout_impl``: one ``bernoulli_(1 - p)`` draw per element of the noise (per (N, C) channel for the feature
  forms, ``make_feature_noise``), the input times the scaled noise (MulBackward0), plus the affine shift for
  the alpha forms (AddBackward0); the wrappers are torch/nn/functional.py's.
* rrelu: ``rrelu_with_noise`` (RreluWithNoiseBackward0): in training, one float64 ``uniform(lower, upper)`` per
  element that is not positive, in order (``_rrelu_with_noise_train``); otherwise leaky_relu with the mean
  slope. derivatives.yaml: ``rrelu_with_noise_backward``.
* gumbel_softmax: torch/nn/functional.py's composite (``-empty_like(logits).exponential_().log()``).
* local_response_norm: torch/nn/functional.py's composite (the 3-d average pool written as a 2-d one over the
  flattened spatial dims: the same numbers).
* native_channel_shuffle: channel_shuffle's forward without a derivative (PyTorch records NotImplemented).
"""

from __future__ import annotations

import warnings

import numpy as np

from ...engine import context, dtypes
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, op
from ..elementwise.arithmetic import add, div, mul, pow
from ..elementwise.comparison import where
from ..elementwise.unary import log, neg
from ..shape.views import reshape, squeeze, unsqueeze
from .pooling import avg_pool2d
from .resampling import pad
from .shrink_and_margins import channel_shuffle
from .softmax import softmax

#: SELU's alpha * scale (Dropout.cpp's alpha_dropout constant).
_ALPHA = 1.7580993408473766


def _generator():
    """The run's generator for a draw of these composites, refused inside ``vmap`` as PyTorch refuses it: with
    ``randomness="error"`` (the default) PyTorch's error; with "different" (a draw per example, which these
    composites do not make) a NotImplementedError. With "same" the one draw serves every example, as in PyTorch."""
    modes = context.state.vmap_randomness
    if modes:
        if modes[-1] == "error":
            raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                               "'same' or 'different' randomness flags on vmap or perform the randomness operation "
                               "out of vmap")
        if modes[-1] == "different":
            raise NotImplementedError("dropout variants, rrelu and gumbel_softmax under vmap(randomness='different') "
                                      "are not supported by gradcli")
    return context.generator()


def _check_p(p) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(input, p, train: bool, feature: bool, alpha: bool):
    """Dropout.cpp ``_dropout_impl<feature_dropout, alpha_dropout>`` on a Tensor."""
    _check_p(p)
    if p == 0 or not train or input.numel() == 0:
        return input
    dt = input.data.dtype
    if p == 1:
        return mul(input, Tensor(np.zeros((), dt)))
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = input.shape[:2] + (1,) * (input.ndim - 2)
    else:
        shape = input.shape
    noise = _generator().bernoulli(np.full(shape, 1 - p), dt)  # noise.bernoulli_(1 - p)
    if not alpha:
        return mul(input, Tensor((noise / dt.type(1 - p)).astype(dt)))
    a = 1.0 / np.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    # b = noise.add(-1).mul_(alpha * a).add_(alpha * a * p); noise.mul_(a): each step rounded to the dtype
    b = ((noise - dt.type(1)) * dt.type(_ALPHA * a) + dt.type(_ALPHA * a * p)).astype(dt)
    return add(mul(input, Tensor((noise * dt.type(a)).astype(dt))), Tensor(b))


def _inplace(input, out, inplace: bool):
    if inplace:
        input.copy_(out)
        return input
    return out


@composite("feature_dropout", grad_fn="MulBackward0", note="d/dx = channel mask / (1 - p)")
def feature_dropout(input, p, train):
    """Zero whole channels (each (n, c) slice of dims 2...) with probability ``p``, the others scaled by
    ``1 / (1 - p)`` (torch.feature_dropout; the mask drawn as PyTorch's CPU kernel draws it).

    Raises:
        ValueError: for p outside [0, 1]; RuntimeError for an input of fewer than 2 dims (PyTorch's messages).
    """
    return _dropout_impl(to_tensor(input), p, train, feature=True, alpha=False)


@composite("alpha_dropout", grad_fn="AddBackward0", note="d/dx = a * mask (SELU-preserving dropout)")
def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout (Klambauer et al. 2017): dropped elements set to SELU's negative saturation ``-alpha *
    scale`` and the result shifted and scaled to keep zero mean and unit variance: ``x * a * m + b`` with
    ``a = 1 / sqrt((alpha'^2 p + 1)(1 - p))``, ``b = (m - 1) alpha' a + alpha' a p``. Matches
    torch.nn.functional.alpha_dropout (grad_fn AddBackward0; the input itself when not training).

    Raises:
        ValueError: for p outside [0, 1] (PyTorch's message).
    """
    _check_p(p)
    input = to_tensor(input)
    return _inplace(input, _dropout_impl(input, p, training, feature=False, alpha=True), inplace)


@composite("feature_alpha_dropout", grad_fn="AddBackward0", note="d/dx = a * channel mask")
def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (one draw per (n, c)). Matches torch.nn.functional.feature_alpha_dropout.

    Raises:
        ValueError: for p outside [0, 1]; RuntimeError for fewer than 2 dims (PyTorch's messages).
    """
    _check_p(p)
    input = to_tensor(input)
    return _inplace(input, _dropout_impl(input, p, training, feature=True, alpha=True), inplace)


def _batched_feature_dropout(name: str, input, p, training, inplace, batched_dim: int):
    is_batched = input.ndim == batched_dim
    x = input if is_batched else unsqueeze(input, 0)
    out = _dropout_impl(x, p, training, feature=True, alpha=False)
    if not is_batched:
        out = squeeze(out, 0)
    return _inplace(input, out, inplace)


@composite("dropout1d", grad_fn="MulBackward0", note="d/dx = channel mask / (1 - p)")
def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of a (N, C, L) or (C, L) input. Matches torch.nn.functional.dropout1d (an unbatched
    input gets a batch dim and loses it again: SqueezeBackward1).

    Raises:
        ValueError: for p outside [0, 1]; RuntimeError for an input that is not 2-d or 3-d (PyTorch's messages).
    """
    _check_p(p)
    input = to_tensor(input)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that dropout1d exists to "
            "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional "
            "batch dimension (i.e. 2D or 3D inputs).")
    return _batched_feature_dropout("dropout1d", input, p, training, inplace, 3)


def _deprecated_dims(name: str, ndim: int, spatial: int) -> None:
    if ndim not in (spatial + 1, spatial + 2):
        lo, hi = spatial + 1, spatial + 2
        words = {2: "2 spatial dimensions", 3: "3 spatial dimensions"}[spatial]
        warnings.warn(
            f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result in an error in a "
            f"future release. To retain the behavior and silence this warning, please use dropout instead. Note "
            f"that {name} exists to provide channel-wise dropout on inputs with {words}, a channel dimension, and "
            f"an optional batch dimension (i.e. {lo}D or {hi}D inputs).", UserWarning, stacklevel=4)


@composite("dropout2d", grad_fn="MulBackward0", note="d/dx = channel mask / (1 - p)")
def dropout2d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of a (N, C, H, W) input; a 3-d input is taken as (N, C, L), with PyTorch's warning.
    Matches torch.nn.functional.dropout2d.

    Raises:
        ValueError: for p outside [0, 1] (PyTorch's message).
    """
    _check_p(p)
    input = to_tensor(input)
    _deprecated_dims("dropout2d", input.ndim, 2)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape (C, "
            "H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            UserWarning, stacklevel=3)
    return _inplace(input, _dropout_impl(input, p, training, feature=True, alpha=False), inplace)


@composite("dropout3d", grad_fn="MulBackward0", note="d/dx = channel mask / (1 - p)")
def dropout3d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout of a (N, C, D, H, W) or (C, D, H, W) input. Matches torch.nn.functional.dropout3d.

    Raises:
        ValueError: for p outside [0, 1] (PyTorch's message).
    """
    _check_p(p)
    input = to_tensor(input)
    _deprecated_dims("dropout3d", input.ndim, 3)
    return _batched_feature_dropout("dropout3d", input, p, training, inplace, 5)


# ------------------------------------------------------------------------------------------------- rrelu
@op("_rrelu_with_noise", grad_fn="RreluWithNoiseBackward0", promote=None, public=False,
    note="d/dx = noise (the drawn slope; 1 where x > 0) in training, else leaky_relu's with (lower + upper) / 2",
    formula="input: grad * noise in training, else grad where input > 0 and grad * (lower + upper) / 2 elsewhere",
    kinks="rrelu", jvp="elementwise")
def _rrelu_with_noise(input, noise, lower, upper, training):
    """``x * noise`` in training (``noise``: the drawn slopes, 1 where ``x > 0``), else leaky_relu with slope
    ``(lower + upper) / 2`` (aten rrelu_with_noise, CPU)."""
    if training:
        return (input * noise).astype(input.dtype, copy=False)
    slope = input.dtype.type((lower + upper) / 2)
    return np.where(input > 0, input, input * slope)


@_rrelu_with_noise.defvjp
def _(grad, input, noise, lower, upper, training):
    # derivatives.yaml rrelu_with_noise_backward: grad * noise when training and upper - lower > 1e-6, else
    # leaky_relu_backward(grad, self, (lower + upper) / 2)
    if training and upper - lower > 1e-6:
        return grad * (Tensor(noise) if isinstance(grad, Tensor) else noise)
    return where(input > 0, grad, grad * ((lower + upper) / 2))


def _rrelu_noise(x: np.ndarray, lower: float, upper: float) -> np.ndarray:
    """The slopes ``_rrelu_with_noise_train`` draws: for each element in order that is not positive, one
    ``uniform_real_distribution<double>(lower, upper)`` (a ``random64``), cast to the dtype's opmath type
    (float for float16/float32); 1 elsewhere."""
    noise = np.ones(x.shape, x.dtype)
    flat = x.reshape(-1)
    neg_at = np.flatnonzero(flat <= 0)
    r = _generator().uniform((neg_at.size,), np.float64, lower, upper)
    opmath = np.float64 if x.dtype == np.float64 else np.float32
    noise.reshape(-1)[neg_at] = r.astype(opmath).astype(x.dtype)
    return noise


@composite("rrelu", grad_fn="RreluWithNoiseBackward0", note=_rrelu_with_noise.note)
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU (Xu et al. 2015): in training each element that is not positive is multiplied by a
    slope drawn uniformly from ``[lower, upper]`` (PyTorch's draws, in order); otherwise leaky_relu with slope
    ``(lower + upper) / 2``. Matches torch.nn.functional.rrelu and torch.rrelu (grad_fn
    RreluWithNoiseBackward0).

    Raises:
        RuntimeError: for lower > upper (PyTorch's message).
    """
    input = to_tensor(input)
    if context.state.vmap_levels:  # PyTorch has no batching rule for rrelu
        raise RuntimeError("vmap: we do not yet support aten::rrelu. Please file an issue")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if input.data.dtype.kind != "f":
        raise NotImplementedError(f"\"rrelu_with_noise_out_cpu\" not implemented for "
                                  f"'{dtypes.scalar_type_name(input.data.dtype)}'")
    noise = _rrelu_noise(input.data, lower, upper) if training else np.zeros(input.shape, input.data.dtype)
    return _inplace(input, _rrelu_with_noise(input, noise, float(lower), float(upper), bool(training)), inplace)


# ----------------------------------------------------------------------------------------- gumbel_softmax
@composite("gumbel_softmax", grad_fn="SoftmaxBackward0 | AddBackward0 (hard)",
           note="the softmax of (logits + Gumbel noise) / tau; hard: straight-through (the soft gradient)")
def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Samples of the Gumbel-softmax distribution (Jang et al. 2016): ``softmax((logits + g) / tau, dim)``
    with ``g = -log(e)``, ``e`` exponential draws (PyTorch's ``exponential_``); ``hard=True`` returns the one-hot
    of each argmax with the soft sample's gradient (``y_hard - y_soft.detach() + y_soft``). Matches
    torch.nn.functional.gumbel_softmax (``eps`` is deprecated and unused, with PyTorch's warning).
    """
    logits = to_tensor(logits)
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", UserWarning, stacklevel=3)
    dt = logits.data.dtype
    gumbels = neg(log(Tensor(_generator().exponential(logits.shape, dt))))
    y_soft = softmax(div(add(logits, gumbels), tau), dim)
    if not hard:
        return y_soft
    axis = dim % max(logits.ndim, 1)
    index = np.expand_dims(np.argmax(y_soft.data, axis=axis), axis) if logits.ndim else np.zeros((), np.int64)
    y_hard = np.zeros(logits.shape, dt)
    if logits.ndim:
        np.put_along_axis(y_hard, index, dt.type(1), axis=axis)
    else:
        y_hard[()] = 1
    return add(Tensor(y_hard) - y_soft.detach(), y_soft)


# ------------------------------------------------------------------------------------ local_response_norm
@composite("local_response_norm", grad_fn="DivBackward0",
           note="x / (k + alpha * mean of x^2 over size neighbouring channels)^beta")
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Local response normalization (Krizhevsky et al. 2012) across channels (dim 1): ``x / (k + alpha *
    avg(x^2 over size channels, zero-padded))^beta``. Matches torch.nn.functional.local_response_norm (its
    composite; the 3-d average pool of 4-d+ inputs runs as the equal 2-d pool over the flattened spatial dims).

    Raises:
        ValueError: for an input of fewer than 3 dims (PyTorch's message).
    """
    input = to_tensor(input)
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div_ = mul(input, input)
    if dim == 3:
        div_ = unsqueeze(div_, 1)
        div_ = pad(div_, (0, 0, size // 2, (size - 1) // 2))
        div_ = squeeze(avg_pool2d(div_, (size, 1), stride=1), 1)
    else:
        sizes = input.shape
        div_ = reshape(div_, (sizes[0], 1, sizes[1], -1))
        div_ = pad(div_, (0, 0, size // 2, (size - 1) // 2))
        div_ = reshape(avg_pool2d(div_, (size, 1), stride=1), sizes)
    div_ = pow(add(mul(div_, alpha), k), beta)
    return div(input, div_)


# --------------------------------------------------------------------------------- native_channel_shuffle
@op("native_channel_shuffle", grad_fn="NotImplemented", promote=None,
    note="no derivative: backward raises, as in PyTorch")
def native_channel_shuffle(input, groups):
    """channel_shuffle's rearrangement without a derivative (PyTorch records a NotImplemented node). Matches
    torch.nn.functional.native_channel_shuffle.

    Raises:
        RuntimeError: for fewer than 3 dims or channels not divisible by ``groups`` (PyTorch's messages).
    """
    if input.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    return channel_shuffle.forward(input, groups)


@native_channel_shuffle.defvjp
def _(grad):
    raise RuntimeError("derivative for aten::native_channel_shuffle is not implemented")


native_channel_shuffle.defjvp_unsupported("native_channel_shuffle")

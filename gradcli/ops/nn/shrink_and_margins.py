"""More of torch.nn.functional: the shrinkage and threshold activations (hardshrink, softshrink, tanhshrink,
threshold), prelu, the channel rearrangements (pixel_shuffle, pixel_unshuffle, channel_shuffle), rms_norm, and
the margin and likelihood losses (margin_ranking_loss, hinge_embedding_loss, soft_margin_loss,
cosine_embedding_loss, multilabel_soft_margin_loss, triplet_margin_loss, poisson_nll_loss, gaussian_nll_loss).

The activations are ops with PyTorch's backward classes and derivatives.yaml's rules; the rest are composites,
written as PyTorch's own Python (torch/nn/functional.py) or its CompositeImplicitAutograd kernels
(aten/src/ATen/native/Loss.cpp) write them, so their graphs and values are PyTorch's.
"""

from __future__ import annotations

import math

import numpy as np

from ...engine.tensor import to_tensor
from ..core.declare import composite, op
from ..elementwise.comparison import where
from ..elementwise.unary import exp, log, tanh
from ..elementwise.arithmetic import clamp
from ..reduction.reductions import mean, sum
from ..shape.views import reshape
from .functional import logsigmoid, pairwise_distance
from .loss import _legacy_reduction, _reduce_composite


def _check_reduction(reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


# ---------------------------------------------------------------------------------------- activations

@op("hardshrink", jvp="elementwise", grad_fn="HardshrinkBackward0", promote=None, method=True,
    note="d/dx = 1 where |x| > lambd, else 0")
def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0. Matches torch.nn.functional.hardshrink."""
    return np.where((input >= -lambd) & (input <= lambd), input.dtype.type(0), input)


@hardshrink.defvjp
def _(grad, input, lambd):
    # derivatives.yaml hardshrink_backward: grad where self < -lambd or self > lambd, else 0
    return where((input >= -lambd) & (input <= lambd), 0.0, grad)


@op("softshrink", jvp="elementwise", grad_fn="SoftshrinkBackward0", promote=None, note="d/dx = 1 where |x| > lambd, else 0")
def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0. Matches
    torch.nn.functional.softshrink.

    Raises:
        RuntimeError: for a negative ``lambd`` (PyTorch's message).
    """
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    t = input.dtype.type
    return np.where(input > lambd, input - t(lambd), np.where(input < -lambd, input + t(lambd), input * t(0)))


@softshrink.defvjp
def _(grad, input, lambd):
    # derivatives.yaml softshrink_backward: grad where |self| > lambd, else 0
    return where((input >= -lambd) & (input <= lambd), 0.0, grad)


@composite("tanhshrink", grad_fn="SubBackward0", note="d/dx = tanh(x)^2")
def tanhshrink(input):
    """``x - tanh(x)``, computed so (torch/nn/functional.py). Matches torch.nn.functional.tanhshrink."""
    return input - tanh(input)


@op("threshold", jvp="elementwise", grad_fn="ThresholdBackward0", promote=None, note="d/dx = 1 where x > threshold, else 0")
def _threshold(input, threshold, value):
    """``x`` where ``x > threshold``, else ``value`` (torch.threshold)."""
    return np.where(input > threshold, input, input.dtype.type(value))


@_threshold.defvjp
def _(grad, input, threshold):
    # derivatives.yaml threshold_backward: grad where self > threshold, else 0
    return where(input > threshold, grad, 0.0)


@composite("threshold", grad_fn="ThresholdBackward0", note="d/dx = 1 where x > threshold, else 0")
def threshold(input, threshold, value, inplace=False):
    """``x`` where ``x > threshold``, else ``value``. Matches torch.nn.functional.threshold (``inplace``
    writes the result into ``input``)."""
    out = _threshold(input, threshold, value)
    if inplace:
        input.copy_(out)
        return input
    return out


@op("prelu", jvp="elementwise", grad_fn="PreluKernelBackward0", inputs=2, promote=None, public=False,
    note="d/dinput = 1 where x > 0, else weight; d/dweight = x where x <= 0 (summed to weight's shape)")
def _prelu(input, weight):
    """``max(0, x) + weight * min(0, x)`` for a ``weight`` that broadcasts against ``input`` (torch's
    _prelu_kernel)."""
    return np.where(input > 0, input, weight * input).astype(input.dtype, copy=False)


@_prelu.defvjp
def _(grad, input, weight):
    # derivatives.yaml _prelu_kernel_backward: self: where(self > 0, grad, weight * grad);
    # weight: where(self > 0, 0, self * grad) (the engine sums it back to weight's shape)
    return where(input > 0, grad, weight * grad), where(input > 0, 0.0, input * grad)


@composite("prelu", grad_fn="PreluKernelBackward0", note=_prelu.note, method=True)
def prelu(input, weight):
    """Parametric ReLU: ``max(0, x) + weight * min(0, x)`` with one weight, or one per channel (dim 1).
    Matches torch.nn.functional.prelu.

    Raises:
        RuntimeError: when ``weight`` has neither 1 nor as many elements as channels (PyTorch's message).
    """
    input, weight = to_tensor(input), to_tensor(weight)
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    if weight.numel() == 1:
        weight = reshape(weight, ())  # one slope for every element: the output keeps input's shape
    elif input.dim() >= 2:
        weight = reshape(weight, (1, channels) + (1,) * (input.dim() - 2))
    return _prelu(input, weight)


# --------------------------------------------------------------------------- channel rearrangements

def _shuffle_check(name: str, input, factor: int, channels: bool) -> None:
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {input.ndim} "
                           f"dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {'upscale' if channels else 'downscale'}_factor, but got "
                           f"{factor}")
    c, h, w = input.shape[-3:]
    if channels and c % (factor * factor):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                           f"of upscale_factor, but input.size(-3)={c} is not divisible by {factor * factor}")
    if not channels and (h % factor or w % factor):
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} and input.size(-1)={w} with downscale_factor={factor}")


@op("pixel_shuffle", grad_fn="PixelShuffleBackward0", promote=None,
    note="a rearrangement: d/dx = pixel_unshuffle(grad, upscale_factor)")
def pixel_shuffle(input, upscale_factor):
    """``(*, C r^2, H, W)`` to ``(*, C, H r, W r)``. Matches torch.nn.functional.pixel_shuffle.

    Raises:
        RuntimeError: for fewer than 3 dims, or channels not divisible by ``upscale_factor ** 2`` (PyTorch's
            messages).
    """
    r = upscale_factor
    _shuffle_check("pixel_shuffle", input, r, True)
    *batch, c, h, w = input.shape
    n = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return np.ascontiguousarray(x.reshape(*batch, c // (r * r), h * r, w * r))


@op("pixel_unshuffle", grad_fn="PixelUnshuffleBackward0", promote=None,
    note="a rearrangement: d/dx = pixel_shuffle(grad, downscale_factor)")
def pixel_unshuffle(input, downscale_factor):
    """``(*, C, H r, W r)`` to ``(*, C r^2, H, W)``, the inverse of pixel_shuffle. Matches
    torch.nn.functional.pixel_unshuffle.

    Raises:
        RuntimeError: for fewer than 3 dims, or a height or width not divisible by ``downscale_factor``.
    """
    r = downscale_factor
    _shuffle_check("pixel_unshuffle", input, r, False)
    *batch, c, h, w = input.shape
    n = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.transpose(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return np.ascontiguousarray(x.reshape(*batch, c * r * r, h // r, w // r))


@pixel_shuffle.defvjp
def _(grad, upscale_factor):
    # derivatives.yaml: self: pixel_unshuffle(grad, upscale_factor)
    return pixel_unshuffle(grad, upscale_factor)


@pixel_shuffle.defjvp
def _(input_t, upscale_factor):
    return pixel_shuffle(input_t, upscale_factor)


@pixel_unshuffle.defvjp
def _(grad, downscale_factor):
    # derivatives.yaml: self: pixel_shuffle(grad, downscale_factor)
    return pixel_shuffle(grad, downscale_factor)


@pixel_unshuffle.defjvp
def _(input_t, downscale_factor):
    return pixel_unshuffle(input_t, downscale_factor)


@op("channel_shuffle", grad_fn="ChannelShuffleBackward0", promote=None,
    note="a rearrangement: d/dx = channel_shuffle(grad, channels / groups)")
def channel_shuffle(input, groups):
    """The channels (dim 1) split into ``groups`` and interleaved. Matches torch.nn.functional.channel_shuffle.

    Raises:
        RuntimeError: for fewer than 3 dims or channels not divisible by ``groups`` (PyTorch's messages).
    """
    if input.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    b, c, *rest = input.shape
    if groups <= 0 or c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    x = input.reshape(b, groups, c // groups, *rest).swapaxes(1, 2)
    return np.ascontiguousarray(x.reshape(b, c, *rest))


@channel_shuffle.defvjp
def _(grad, groups):
    # shuffling C channels in ``groups`` groups is undone by shuffling them in C / groups groups (the gradient
    # has the input's shape)
    return channel_shuffle(grad, grad.shape[1] // groups)


@channel_shuffle.defjvp
def _(input_t, groups):
    return channel_shuffle(input_t, groups)


# --------------------------------------------------------------------------------------- rms_norm

@composite("rms_norm", grad_fn="MulBackward0", note="as its formula: x * rsqrt(mean(x^2) + eps) * weight")
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalization over the last ``len(normalized_shape)`` dims: ``x / sqrt(mean(x^2) +
    eps) * weight``, ``eps`` by default the dtype's machine epsilon. Matches torch.nn.functional.rms_norm."""
    dims = tuple(range(-len(tuple(normalized_shape)), 0))
    if eps is None:
        eps = float(np.finfo(input.data.dtype).eps)
    out = input * (mean(input * input, dims, keepdim=True) + eps).rsqrt()
    return out * weight if weight is not None else out


# ----------------------------------------------------------------------------------------- losses

@composite("margin_ranking_loss", grad_fn="MeanBackward0 (mean)", note="as its formula")
def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``, reduced. Matches
    torch.nn.functional.margin_ranking_loss."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _reduce_composite(clamp(-target * (input1 - input2) + margin, min=0), reduction)


@composite("hinge_embedding_loss", grad_fn="MeanBackward0 (mean)", note="as its formula")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``x`` where ``target`` is 1, ``max(0, margin - x)`` where it is -1, reduced. Matches
    torch.nn.functional.hinge_embedding_loss (aten's hinge_embedding_loss)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    zeros = input * 0
    margin_clamp = where(target != 1, clamp(margin - input, min=0), zeros)
    output_margin = where(target != 1, margin_clamp, zeros)
    output_self = where(target != -1, input, zeros)
    return _reduce_composite(output_margin + output_self, reduction)


@op("soft_margin_loss", grad_fn="SoftMarginLossBackward0", inputs=2, promote=None, public=False,
    note="d/dinput = -target * exp(-target x) / (1 + exp(-target x)) (/ numel for 'mean')")
def _soft_margin_loss(input, target, reduction):
    """``log1p(exp(-target * input))``, reduced (aten's soft_margin_loss)."""
    loss = np.log1p(np.exp(-input * target)).astype(input.dtype, copy=False)
    if reduction == "mean":
        return np.asarray(loss.mean(dtype=loss.dtype))
    if reduction == "sum":
        return np.asarray(loss.sum(dtype=loss.dtype))
    return loss


@_soft_margin_loss.defvjp
def _(grad, input, target, reduction):
    # derivatives.yaml soft_margin_loss_backward: -target * exp(-target * self) / (1 + exp(-target * self))
    # * grad, divided by numel for 'mean'; target: not differentiable
    z = exp(-target * input)
    g = -target * z / (1 + z) * grad
    return (g / int(np.prod(input.shape)) if reduction == "mean" else g), None


@_soft_margin_loss.defjvp
def _(input_t, input, target, reduction):
    # the VJP's elementwise factor applied to the tangent, then the same reduction
    z = exp(-target * input)
    t = -target * z / (1 + z) * input_t
    return mean(t) if reduction == "mean" else sum(t) if reduction == "sum" else t


@composite("soft_margin_loss", grad_fn="SoftMarginLossBackward0", note=_soft_margin_loss.note)
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))``, reduced. Matches torch.nn.functional.soft_margin_loss."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _soft_margin_loss(input, target, reduction)


@composite("cosine_embedding_loss", grad_fn="MeanBackward0 (mean)", note="as its formula")
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1, reduced.
    Matches torch.nn.functional.cosine_embedding_loss (aten's cosine_embedding_loss, EPSILON 1e-12)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    targ_dim = target.dim()
    prod_sum = sum(input1 * input2, targ_dim)
    mag_square1 = sum(input1 * input1, targ_dim) + 1e-12
    mag_square2 = sum(input2 * input2, targ_dim) + 1e-12
    cos = prod_sum / (mag_square1 * mag_square2).sqrt()
    zeros = cos * 0
    pos = 1 - cos
    neg = clamp(cos - margin, min=0)
    out = where(target == 1, pos, zeros) + where(target == -1, neg, zeros)
    return _reduce_composite(out, reduction)


@composite("multilabel_soft_margin_loss", grad_fn="MeanBackward0 (mean)", note="as its formula")
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """``-mean over classes of (y log sigmoid(x) + (1 - y) log sigmoid(-x))`` per sample, reduced. Matches
    torch.nn.functional.multilabel_soft_margin_loss (written as torch/nn/functional.py writes it)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = sum(loss, input.dim() - 1) / input.shape[-1]
    return _reduce_composite(loss, reduction)


@composite("triplet_margin_loss", grad_fn="MeanBackward0 (mean)", note="as its formula")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the pairwise p-norm distance, reduced. Matches
    torch.nn.functional.triplet_margin_loss (aten's triplet_margin_loss)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_swap = pairwise_distance(positive, negative, p, eps)
        dist_neg = where(dist_swap < dist_neg, dist_swap, dist_neg)
    return _reduce_composite(clamp(margin + dist_pos - dist_neg, min=0), reduction)


@composite("poisson_nll_loss", grad_fn="MeanBackward0 (mean)", note="as its formula")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """The Poisson negative log likelihood: ``exp(x) - y x`` (``log_input``) or ``x - y log(x + eps)``, plus
    Stirling's term where ``full`` and ``y > 1``, reduced. Matches torch.nn.functional.poisson_nll_loss."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = exp(input) - target * input if log_input else input - target * log(input + eps)
    if full:
        t = to_tensor(target)
        stirling = t * log(t) - t + 0.5 * log(2 * math.pi * t)
        loss = loss + where(t > 1, stirling, stirling * 0)
    return _reduce_composite(loss, reduction)


@composite("gaussian_nll_loss", grad_fn="MeanBackward0 (mean)", note="as its formula")
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """The Gaussian negative log likelihood ``(log(max(var, eps)) + (input - target)^2 / max(var, eps)) / 2``
    (plus ``log(2 pi) / 2`` where ``full``), reduced. Matches torch.nn.functional.gaussian_nll_loss.

    Raises:
        ValueError: for a negative variance or an unknown reduction (PyTorch's messages).
    """
    var = to_tensor(var) if not isinstance(var, (int, float)) else var
    if isinstance(var, (int, float)):
        var = input.new_full(input.shape, float(var))
    if var.dim() != input.dim() and var.shape == input.shape[:-1]:
        var = var.unsqueeze(-1)
    if bool((var < 0).any().item()):
        raise ValueError("var has negative entry/entries")
    # clamped without a gradient through the clamp, as PyTorch's ``with torch.no_grad(): var.clamp_(min=eps)``
    var = var + (clamp(var, min=eps) - var).detach()
    loss = 0.5 * (log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(reduction + " is not valid")

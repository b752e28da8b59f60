"""Loss functions (torch.nn.functional): forward and derivative as in aten/src/ATen/native/Loss.cpp.

``reduction`` is ``'mean'`` (default), ``'sum'`` or ``'none'``, as in PyTorch.
"""

from __future__ import annotations

import numpy as np

from ._core import op

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction):
    if reduction == "mean":
        return np.mean(loss)
    if reduction == "sum":
        return np.sum(loss)
    return loss


@op("BinaryCrossEntropyWithLogitsBackward0", inputs=4, promote=None)
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction="mean"):
    """Binary cross-entropy of ``sigmoid(input)`` against ``target`` (same shape, probabilities in [0, 1]),
    computed stably from the logits.

    ``weight`` rescales each element's loss and broadcasts to ``input``; ``pos_weight`` weighs positive
    examples, broadcasting along the last dimension. Matches torch.nn.functional.binary_cross_entropy_with_logits:
    ``loss = (1 - target) * input - log_weight * log_sigmoid(input)`` with
    ``log_weight = 1 + (pos_weight - 1) * target`` (Loss.cpp).

    Raises:
        ValueError: if ``target`` and ``input`` differ in shape, or for an unknown ``reduction``.
    """
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size (torch.Size({list(target.shape)})) must be the same as input size "
                         f"(torch.Size({list(input.shape)}))")
    one = input.dtype.type(1)
    target = target.astype(input.dtype, copy=False)
    # log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|))
    log_sigmoid = np.minimum(input, 0) - np.log1p(np.exp(-np.abs(input)))
    if pos_weight is not None:
        log_sigmoid = log_sigmoid * ((pos_weight - one) * target + one)
    loss = (one - target) * input - log_sigmoid
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@binary_cross_entropy_with_logits.defvjp
def _(grad, input, target, weight, pos_weight, reduction, input_shape, needs_input_grad):
    # binary_cross_entropy_with_logits_backward and _target_backward (FunctionsManual.cpp).
    from .elementwise import log, sigmoid

    n = int(np.prod(input_shape))
    gi = gt = None
    if needs_input_grad[0]:
        if pos_weight is not None:
            t = pos_weight * target
            gi = (sigmoid(input) * (t + 1 - target) - t) * grad
        else:
            gi = (sigmoid(input) - target) * grad
    if needs_input_grad[1]:
        # d/dtarget of (1 - t) x - (1 + (p - 1) t) log_sigmoid(x) is -x - (p - 1) log_sigmoid(x)
        gt = -input * grad if pos_weight is None else (-input - (pos_weight - 1) * log(sigmoid(input))) * grad
    out = []
    for g in (gi, gt):
        if g is not None and weight is not None:
            g = g * weight
        if g is not None and reduction == "mean":
            g = g / n
        out.append(g)
    return out[0], out[1], None, None

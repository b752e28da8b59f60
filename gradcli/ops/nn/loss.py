"""Loss functions (torch.nn.functional): forward and derivative as in aten/src/ATen/native/Loss.cpp and
LossNLL.cpp, composed like PyTorch where PyTorch composes (cross_entropy = log_softmax + nll_loss, l1_loss,
kl_div, the weighted forms), so the recorded graphs carry PyTorch's grad_fn names. ``gradcli ops`` shows the
loss's own node as its grad_fn, or "varies" where the arguments decide (weight=, beta=0, reduction, the
input's rank).

``reduction`` is ``'mean'`` (default), ``'sum'`` or ``'none'`` (kl_div also ``'batchmean'``); the legacy
``size_average``/``reduce`` arguments are accepted with PyTorch's deprecation warning.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor, to_tensor
from ..core.apply import infer_size
from ..core.declare import composite, op
from ..elementwise.arithmetic import pow
from ..elementwise.comparison import where
from .softmax import _log_softmax
from ..reduction.reductions import expand, mean, sum
from ..shape.views import reshape
from ..elementwise.unary import abs, exp, log, neg, sigmoid, sign

_REDUCTIONS = ("none", "mean", "sum")


def _scalar_name(t) -> str:
    return dtypes.scalar_type_name(t.dtype)


def _check_reduction(reduction) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average, reduce, reduction):
    """torch.nn._reduction.legacy_get_string: the old flags override ``reduction``, with PyTorch's warning."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='"
                  f"{_legacy_string(size_average, reduce)}' instead.", UserWarning, stacklevel=3)
    return _legacy_string(size_average, reduce)


def _legacy_string(size_average, reduce) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "mean" if size_average and reduce else ("sum" if reduce else "none")


def _reduce(loss, reduction):
    if reduction == "mean":
        return np.mean(loss)
    if reduction == "sum":
        return np.sum(loss)
    return loss


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _tensors(*values):
    return [None if v is None else to_tensor(v) for v in values]


# ------------------------------------------------------------- the C++ Scalar overloads PyTorch's losses use


@op("_mul_scalar", grad_fn="MulBackward1", promote=None, note="d/dx = grad * other",
    formula="input: grad * other (other a number)", jvp="elementwise")
def _mul_scalar(input, other):
    """``input * other`` for a Python number ``other`` (aten's mul.Scalar, as C++ code calls it)."""
    return input * input.dtype.type(other)


@_mul_scalar.defvjp
def _(grad, other):
    return grad * other


@_mul_scalar.defsymbolic
def _(s, input, other):
    c = s.elem(other)
    return s.elem(input) * c, lambda g: g * c


@op("_div_scalar", grad_fn="DivBackward1", promote=None, note="d/dx = grad / other",
    formula="input: grad / other (other a number)", jvp="elementwise")
def _div_scalar(input, other):
    """``input / other`` for a Python number ``other`` (aten's div.Scalar)."""
    return input / input.dtype.type(other)


@_div_scalar.defvjp
def _(grad, other):
    return grad / other


@_div_scalar.defsymbolic
def _(s, input, other):
    c = s.elem(other)
    return s.elem(input) / c, lambda g: g / c


@op("_add_scalar", grad_fn="AddBackward1", promote=None, note="d/dx = grad", formula="input: grad (other a number)",
    jvp="elementwise")
def _add_scalar(input, other):
    """``input + other`` for a Python number ``other`` (aten's add.Scalar)."""
    return input + input.dtype.type(other)


@_add_scalar.defvjp
def _(grad):
    return grad


@_add_scalar.defsymbolic
def _(s, input, other):
    return s.elem(input) + s.elem(other), lambda g: g


@op("_masked_fill", grad_fn="MaskedFillBackward0", promote=None, note="d/dx = grad, 0 where filled",
    jvp="elementwise")
def _masked_fill(input, mask, value):
    """``input`` with ``value`` where the bool array ``mask`` is true (torch.Tensor.masked_fill)."""
    return np.where(mask, input.dtype.type(value), input)


@_masked_fill.defvjp
def _(grad, mask):
    return where(mask, 0.0, grad)


@op("_xlogy", grad_fn="XlogyBackward0", inputs=2, promote="float",
    note="d/dinput = log(other) (0 where input is 0), d/dother = input / other",
    formula="input: grad * ln(other) (0 where input = 0); other: grad * input / other", jvp="elementwise")
def _xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 (NaN where ``other`` is NaN). Matches torch.xlogy."""
    with np.errstate(all="ignore"):
        out = input * np.log(other)
    return np.where((input == 0) & ~np.isnan(other), input.dtype.type(0), out)


@_xlogy.defvjp
def _(grad, input, other, needs_input_grad):
    # derivatives.yaml xlogy: self: grad * at::xlogy((self != 0), other); other: grad * self / other
    return (grad * _xlogy(input != 0, other) if needs_input_grad[0] else None,
            grad * input / other if needs_input_grad[1] else None)


def _broadcast_pair(input, target):
    """F.mse_loss & co: warn when the shapes differ, then torch.broadcast_tensors (ExpandBackward0 on the
    operand whose shape changes)."""
    if input.shape == target.shape:
        return input, target
    warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                  "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                  "same size.", UserWarning, stacklevel=3)
    shape = infer_size(tuple(input.shape), tuple(target.shape))
    return tuple(t if tuple(t.shape) == shape else expand(t, *shape) for t in (input, target))


def _weighted(errors, weight, input, reduction):
    """The ``weight=`` forms of mse_loss/l1_loss (torch.nn.functional): elementwise errors times weight."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = errors * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return sum(weighted)
    return sum(weighted) / sum(weight)


# ------------------------------------------------------------------------------------------------ mse, l1


@op("_mse_loss", grad_fn="MseLossBackward0", inputs=2,
    note="d/dinput = 2 (input - target) / n; d/dtarget = -d/dinput",
    formula="input: grad * 2 * (input - target) / n; target: minus that (without the / n for reduction='sum')",
    jvp="loss")
def _mse_loss(input, target, reduction):
    """Squared error ``(input - target) ** 2`` (same shapes), reduced."""
    d = input - target
    return _reduce(d * d, reduction)


@_mse_loss.defvjp
def _(grad, input, target, reduction, input_shape, needs_input_grad):
    # mse_loss_backward: norm * (input - target) * grad, norm = 2 / numel for 'mean'
    norm = 2.0 / _numel(input_shape) if reduction == "mean" else 2.0
    g = norm * (input - target) * grad
    return (g if needs_input_grad[0] else None, -g if needs_input_grad[1] else None)


@_mse_loss.defsymbolic
def _(s, input, target, reduction):
    d = s.elem(input) - s.elem(target)
    n = s.numel(input) if reduction == "mean" else 1
    if reduction == "none":
        return d ** 2, lambda g: (2 * d * g, -2 * d * g)
    return s.SumAll(d ** 2) / n, lambda g: (2 * d * g / n, -2 * d * g / n)


@composite("mse_loss", grad_fn="varies", note=_mse_loss.note)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error between ``input`` and ``target`` (broadcast, with PyTorch's warning when the shapes
    differ); ``weight`` (input's shape) gives ``sum(w (x - y)^2) / sum(w)`` for 'mean'. Matches
    torch.nn.functional.mse_loss (grad_fn MseLossBackward0).

    Raises:
        ValueError: for an unknown ``reduction`` or a ``weight`` of another shape.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    input, target, weight = _tensors(input, target, weight)
    a, b = _broadcast_pair(input, target)
    if weight is not None:
        _check_reduction(reduction)
        return _weighted(pow(a - b, 2), weight, input, reduction)
    _check_reduction(reduction)
    return _mse_loss(a, b, reduction)


def _reduce_composite(loss, reduction):
    """at::apply_loss_reduction on a tensor: mean (MeanBackward0), sum (SumBackward0) or as is."""
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    return loss


@composite("l1_loss", grad_fn="varies", note="d/dinput = sign(input - target) / n (0 where equal)")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error: ``|input - target|`` reduced (composed as PyTorch does: sub, abs, mean/sum, so the
    gradient at ``input == target`` is 0); ``weight`` as in :func:`mse_loss`. Matches
    torch.nn.functional.l1_loss.

    Raises:
        ValueError: for an unknown ``reduction`` or a ``weight`` of another shape.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    input, target, weight = _tensors(input, target, weight)
    a, b = _broadcast_pair(input, target)
    _check_reduction(reduction)
    if weight is not None:
        return _weighted(abs(a - b), weight, input, reduction)
    return _reduce_composite(abs(a - b), reduction)


# --------------------------------------------------------------------------------------- smooth L1, Huber


@op("_smooth_l1_loss", grad_fn="SmoothL1LossBackward0", inputs=2,
    note="d/dinput = (input - target) / beta inside |input - target| < beta, else sign(input - target)",
    formula="input: grad * (input - target) / beta where |input - target| < beta, else grad * sign(input - target); "
            "target: minus that", kinks="smooth_l1_loss", jvp="loss")
def _smooth_l1_loss(input, target, reduction, beta):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta``, d = input - target; reduced."""
    d = np.abs(input - target)
    b = input.dtype.type(beta)
    half = input.dtype.type(0.5)
    return _reduce(np.where(d < b, half * d * d / b, d - half * b), reduction)


@_smooth_l1_loss.defvjp
def _(grad, input, target, reduction, beta, input_shape, needs_input_grad):
    # smooth_l1_backward (PointwiseOpsKernel.cpp): x <= -beta: -1, x >= beta: 1, else x / beta; times grad
    d = input - target
    g = where(abs(d) < beta, d / beta, sign(d)) * grad
    if reduction == "mean":
        g = g / _numel(input_shape)
    return (g if needs_input_grad[0] else None, -g if needs_input_grad[1] else None)


@composite("smooth_l1_loss", grad_fn="varies", note=_smooth_l1_loss.note)
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Smooth L1 loss: quadratic for ``|input - target| < beta``, linear beyond (``beta = 0`` is l1_loss).
    Matches torch.nn.functional.smooth_l1_loss (grad_fn SmoothL1LossBackward0).

    Raises:
        ValueError: for an unknown ``reduction``; RuntimeError for a negative ``beta``.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    input, target = _tensors(input, target)
    a, b = _broadcast_pair(input, target)
    _check_reduction(reduction)
    if beta == 0.0:
        return _reduce_composite(abs(a - b), reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _smooth_l1_loss(a, b, reduction, float(beta))


@op("_huber_loss", grad_fn="HuberLossBackward0", inputs=2,
    note="d/dinput = input - target inside |input - target| < delta, else delta * sign(input - target)",
    formula="input: grad * (input - target) where |input - target| < delta, else grad * delta * sign(input - "
            "target); target: minus that", kinks="huber_loss", jvp="loss")
def _huber_loss(input, target, reduction, delta):
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``, d = input - target; reduced."""
    d = np.abs(input - target)
    dl = input.dtype.type(delta)
    half = input.dtype.type(0.5)
    return _reduce(np.where(d < dl, half * d * d, dl * (d - half * dl)), reduction)


@_huber_loss.defvjp
def _(grad, input, target, reduction, delta, input_shape, needs_input_grad):
    # huber_backward (PointwiseOpsKernel.cpp): x <= -delta: -delta, x >= delta: delta, else x; times grad
    d = input - target
    g = where(abs(d) < delta, d, delta * sign(d)) * grad
    if reduction == "mean":
        g = g / _numel(input_shape)
    return (g if needs_input_grad[0] else None, -g if needs_input_grad[1] else None)


@composite("huber_loss", grad_fn="varies", note=_huber_loss.note)
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Huber loss: quadratic for ``|input - target| < delta``, ``delta``-linear beyond; ``weight`` (input's
    shape) scales each element (then 'mean' is the plain mean). Matches torch.nn.functional.huber_loss
    (grad_fn HuberLossBackward0).

    Raises:
        ValueError: for an unknown ``reduction`` or a ``weight`` of another shape; RuntimeError for
            ``delta <= 0``.
    """
    input, target, weight = _tensors(input, target, weight)
    a, b = _broadcast_pair(input, target)
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return _huber_loss(a, b, reduction, float(delta))
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = _huber_loss(a, b, "none", float(delta)) * weight
    return {"none": lambda: weighted, "sum": lambda: sum(weighted), "mean": lambda: mean(weighted)}[reduction]()


# ------------------------------------------------------------------------------------------ binary losses
_BCE_EPSILON = 1e-12
# Loss.cpp's EPSILON for binary_cross_entropy_backward is a float: 1e-12 rounded to float32 (9.99999996e-13)
_BCE_BACKWARD_EPSILON = float(np.float32(1e-12))


@op("_binary_cross_entropy", grad_fn="BinaryCrossEntropyBackward0", inputs=3,
    note="d/dinput = (input - target) / max(input (1 - input), 1e-12); d/dtarget = log(1 - input) - log(input)",
    formula="input: grad * (input - target) / max(input * (1 - input), 1e-12); target: grad * (ln(1 - input) - "
            "ln(input))", jvp="loss")
def _binary_cross_entropy(input, target, weight, reduction):
    """``-w (t log(x) + (1 - t) log(1 - x))`` with each log clamped at -100 (Loss.cpp), reduced."""
    if ((input < 0) | (input > 1)).any() or np.isnan(input).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    one = input.dtype.type(1)
    floor = input.dtype.type(-100)
    with np.errstate(all="ignore"):
        loss = (target - one) * np.maximum(np.log1p(-input), floor) - target * np.maximum(np.log(input), floor)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@_binary_cross_entropy.defvjp
def _(grad, input, target, weight, reduction, input_shape, needs_input_grad):
    # derivatives.yaml: binary_cross_entropy_backward (an op of its own, with PyTorch's double-backward
    # formulas) and binary_cross_entropy_target_backward (-logit(input) * grad, composite)
    gi = _bce_backward(grad, input, target, weight, reduction) if needs_input_grad[0] else None
    gt = None
    if needs_input_grad[1]:
        gt = (log(1 - input) - log(input)) * grad
        if weight is not None:
            gt = gt * weight
        if reduction == "mean":
            gt = gt / _numel(input_shape)
    return gi, gt, None


@op("_bce_backward", grad_fn="BinaryCrossEntropyBackwardBackward0", inputs=4,
    note="PyTorch's binary_cross_entropy_double_backward formulas",
    formula="the derivative of binary_cross_entropy's backward (second order)")
def _bce_backward(grad, input, target, weight, reduction):
    """binary_cross_entropy's derivative w.r.t. its input (Loss.cpp binary_cross_entropy_backward):
    ``grad * (input - target) / max(input (1 - input), eps) * weight`` (divided by numel for 'mean'), eps
    1e-12 in float32."""
    eps = input.dtype.type(_BCE_BACKWARD_EPSILON)
    out = grad * (input - target) / np.maximum((1 - input) * input, eps)
    if weight is not None:
        out = out * weight
    return out / input.dtype.type(input.size) if reduction == "mean" else out


@_bce_backward.defvjp
def _(gg, grad, input, target, weight, reduction, input_shape, needs_input_grad):
    # FunctionsManual.cpp binary_cross_entropy_double_backward{,_grad_output,_target}
    eps = _BCE_EPSILON
    w = 1.0 if weight is None else weight
    n = _numel(input_shape) if reduction == "mean" else 1
    g_grad = g_input = g_target = None
    if needs_input_grad[0]:
        g_grad = (input - target) / ((input + eps) * (1 - input + eps)) * w * gg
        g_grad = {"none": lambda: g_grad, "sum": lambda: sum(g_grad), "mean": lambda: mean(g_grad)}[reduction]()
    if needs_input_grad[1]:
        g_input = ((input * input - 2 * input * target + target) / (((input + eps) ** 2) * ((1 - input + eps) ** 2))
                   * (grad * gg) * w / n)
    if needs_input_grad[2]:
        p = (1 - input) * input
        g_target = -grad * gg * w / where(p < eps, eps, p) / n
    return g_grad, g_input, g_target, None


@composite("binary_cross_entropy", grad_fn=_binary_cross_entropy.grad_fn, note=_binary_cross_entropy.note)
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross-entropy between probabilities ``input`` (in [0, 1]) and ``target`` (same shape); ``weight``
    broadcasts to them and rescales each element. Matches torch.nn.functional.binary_cross_entropy (grad_fn
    BinaryCrossEntropyBackward0; the logs are clamped at -100 as in PyTorch).

    Raises:
        ValueError: for different shapes or an unknown ``reduction``; RuntimeError for input values outside
            [0, 1].
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    input, target, weight = _tensors(input, target, weight)
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        n = max(target.ndim, weight.ndim)
        a = (1,) * (n - target.ndim) + tuple(target.shape)
        b = (1,) * (n - weight.ndim) + tuple(weight.shape)
        weight = expand(weight, *(max(x, y) for x, y in zip(a, b)))
    return _binary_cross_entropy(input, target, weight, reduction)


@op("_binary_cross_entropy_with_logits", grad_fn="BinaryCrossEntropyWithLogitsBackward0", inputs=4, promote=None,
    note="d/dinput = sigmoid(input) - target (with pos_weight: sigmoid(x) (p t + 1 - t) - p t), times weight",
    formula="input: grad * (sigmoid(input) - target) (times weight; with pos_weight p: sigmoid(input) * (p * target "
            "+ 1 - target) - p * target)", jvp="loss")
def _binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction):
    """Binary cross-entropy of ``sigmoid(input)`` against ``target``, computed stably from the logits:
    ``loss = (1 - target) * input - log_weight * log_sigmoid(input)`` with
    ``log_weight = 1 + (pos_weight - 1) * target`` (Loss.cpp)."""
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


@_binary_cross_entropy_with_logits.defvjp
def _(grad, input, target, weight, pos_weight, reduction, input_shape, needs_input_grad):
    # binary_cross_entropy_with_logits_backward and _target_backward (FunctionsManual.cpp).
    n = _numel(input_shape)
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


@_binary_cross_entropy_with_logits.defsymbolic
def _(s, input, target, weight, pos_weight, reduction):
    if weight is not None or pos_weight is not None:
        raise s.NoFormula("binary_cross_entropy_with_logits with weights")
    x, y = s.elems(input, target)
    n = s.numel(input) if reduction == "mean" else 1
    loss = (1 - y) * x + s.Softplus(-x)
    out = loss if reduction == "none" else s.SumAll(loss) / n
    return out, lambda g: ((s.Sigmoid(x) - y) * g / n, -x * g / n, None, None)


@composite("binary_cross_entropy_with_logits", grad_fn=_binary_cross_entropy_with_logits.grad_fn,
           note=_binary_cross_entropy_with_logits.note)
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Binary cross-entropy of ``sigmoid(input)`` against ``target`` (same shape, probabilities in [0, 1]),
    computed stably from the logits. ``weight`` rescales each element's loss and broadcasts to ``input``;
    ``pos_weight`` weighs positive examples, broadcasting along the last dimension. Matches
    torch.nn.functional.binary_cross_entropy_with_logits (grad_fn BinaryCrossEntropyWithLogitsBackward0).

    Raises:
        ValueError: if ``target`` and ``input`` differ in shape, or for an unknown ``reduction``.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    input, target = _tensors(input, target)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return _binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


# ------------------------------------------------------------------------------------ nll, cross-entropy


def _nll_parts(input, target, weight, ignore_index):
    """(input with classes last, targets as an int array of the batch shape, their weights with ignored targets
    weighing 0, which targets count) for nll_loss's forward and backward."""
    x = input[None] if input.ndim == 1 else np.moveaxis(input, 1, -1)
    t = target.reshape(x.shape[:-1])
    valid = t != ignore_index
    n_classes = x.shape[-1]
    bad = valid & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {int(t[bad][0])} is out of bounds.")
    safe = np.where(valid, t, 0)
    w = np.ones(t.shape, dtype=input.dtype) if weight is None else weight.astype(input.dtype)[safe]
    return x, safe, np.where(valid, w, input.dtype.type(0)), valid


def _nll_forward(input, target, weight, reduction, ignore_index):
    x, safe, w, _ = _nll_parts(input, target, weight, ignore_index)
    picked = np.take_along_axis(x, safe[..., None], axis=-1)[..., 0]
    loss = -w * picked
    if reduction == "none":
        return loss.reshape(target.shape)
    total = np.sum(loss)
    if reduction == "sum":
        return total
    with np.errstate(all="ignore"):
        return np.asarray(total / np.sum(w), dtype=input.dtype)


def _nll_backward_forward(grad, target, weight, reduction, ignore_index, shape):
    """The gradient of nll_loss w.r.t. its input: ``-w_i * grad`` (divided by the total weight for 'mean') at
    each target class, 0 elsewhere (LossNLL.cpp nll_loss_backward)."""
    input = np.zeros(shape, dtype=grad.dtype)
    x, safe, w, valid = _nll_parts(input, target, weight, ignore_index)
    g = grad.reshape(safe.shape) if reduction == "none" else grad
    with np.errstate(all="ignore"):  # all targets ignored: 0 / 0, but only counted targets are written
        if reduction == "mean":
            g = g / np.sum(w)
        value = np.where(valid, -w * g, input.dtype.type(0))
    np.put_along_axis(x, safe[..., None], value[..., None], axis=-1)
    return input


def _nll_op(grad_fn: str, name: str, formula: str):
    def forward(input, target, weight, reduction, ignore_index):
        return _nll_forward(input, target, weight, reduction, ignore_index)

    forward.__name__ = name
    forward.__doc__ = ("The negative log-likelihood of the classes ``target`` (an int64 array) under the "
                       "log-probabilities ``input`` (classes along dim 1), weighted, reduced (LossNLL.cpp).")
    o = op(name, grad_fn=grad_fn, promote=None,
           note="d/dinput = -weight[target] at the target class (/ total weight)", formula=formula,
           jvp="linear")(forward)

    def rule(grad, input_shape, target, weight, reduction, ignore_index):
        return _nll_backward(grad, target, weight, reduction, ignore_index, input_shape)

    o.defvjp(rule)
    return o


_nll_loss = _nll_op("NllLossBackward0", "_nll_loss",
                    formula="input: -grad * weight[target] at the target class, 0 elsewhere (divided by the total "
                            "weight for 'mean')")
_nll_loss2d = _nll_op("NllLoss2DBackward0", "_nll_loss2d",
                      formula="input: -grad * weight[target] at the target class of each position, 0 elsewhere "
                              "(divided by the total weight for 'mean')")


@op("_nll_backward", grad_fn="NllLossBackwardBackward0", promote=None,
    note="d/dgrad = nll_loss of the incoming gradient (linear in grad)",
    formula="the derivative of nll_loss's backward (second order)", jvp="linear")
def _nll_backward(grad, target, weight, reduction, ignore_index, shape):
    """nll_loss's derivative as an op, so that it can be differentiated again (it is linear in ``grad``)."""
    return _nll_backward_forward(grad, target, weight, reduction, ignore_index, shape)


@_nll_backward.defvjp
def _(grad, target, weight, reduction, ignore_index):
    return _nll_loss(grad, target, weight, reduction, ignore_index)


def _class_indices(input, target, weight, ignore_index):
    """Check class-index targets and weights as PyTorch does; returns (target array, weight array or None)."""
    if target.data.dtype not in (np.int64, np.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_scalar_name(target)}")
    n_classes = input.shape[0] if input.ndim == 1 else input.shape[1]
    if weight is not None:
        if weight.requires_grad:
            raise RuntimeError("the derivative for 'weight' is not implemented.")
        if weight.ndim != 1 or weight.numel() != n_classes:
            raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no classes "
                               f"but got weight tensor of shape: {list(weight.shape)}")
    return target.data.astype(np.int64), None if weight is None else weight.data


def _nll_loss_nd(input, target, weight, reduction, ignore_index):
    """LossNLL.cpp nll_loss_nd: 1-d/2-d inputs are nll_loss, 4-d nll_loss2d, others viewed as 4-d."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    t, w = _class_indices(input, target, weight, ignore_index)
    if input.ndim == 1:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        return _nll_loss(input, t, w, reduction, ignore_index)
    if input.ndim == 2:
        if target.ndim != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        return _nll_loss(input, t, w, reduction, ignore_index)
    out_size = (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {list(out_size)}, got {list(target.shape)}")
    if input.ndim == 4:
        return _nll_loss2d(input, t, w, reduction, ignore_index)
    n, c = input.shape[0], input.shape[1]
    out = _nll_loss2d(reshape(input, (n, c, 1, -1)), t.reshape(n, 1, -1), w, reduction, ignore_index)
    return reshape(out, out_size) if reduction == "none" else out


@composite("nll_loss", grad_fn="varies",
           note="d/dinput = -weight[target] at the target class (divided by the total weight for 'mean')")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood: ``-weight[t] * input[i, t]`` for each sample's class index ``t`` (int64 target
    of shape (N,) or (N, d1, ...), classes along dim 1 of ``input``; a 1-d input is one sample); targets equal
    to ``ignore_index`` count 0; 'mean' divides by the total weight of the counted targets. Matches
    torch.nn.functional.nll_loss (grad_fn NllLossBackward0, NllLoss2DBackward0 for 3-d+ inputs).

    Raises:
        ValueError: for an unknown ``reduction`` or mismatched batch sizes; RuntimeError for a target that
            is not int64 (or uint8) or a bad weight; IndexError for a class index out of range.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    input, target, weight = _tensors(input, target, weight)
    return _nll_loss_nd(input, target, weight, reduction, ignore_index)


def _class_weight_view(weight, ndim: int, class_dim: int):
    if ndim <= 1:
        return weight
    return reshape(weight, tuple(weight.shape[0] if i == class_dim else 1 for i in range(ndim)))


def _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing):
    # LossNLL.cpp cross_entropy_loss_prob_target
    class_dim = 0 if input.ndim == 1 else 1
    n_classes = input.shape[class_dim]
    if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {n_classes} classes or "
                           f"no classes but got weight tensor of shape: {list(weight.shape)}")
    logp = _log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        target = _add_scalar(_mul_scalar(target, 1 - label_smoothing), label_smoothing / n_classes)
    product = logp * target
    if weight is not None:
        product = product * _class_weight_view(weight, logp.ndim, class_dim)
    if reduction == "mean":
        return _div_scalar(neg(sum(product)), logp.numel() // n_classes)
    if reduction == "sum":
        return neg(sum(product))
    return neg(sum(product, class_dim))


def _cross_entropy_label_smoothing(input, target, weight, reduction, ignore_index, label_smoothing):
    # LossNLL.cpp cross_entropy_loss_label_smoothing
    class_dim = 0 if input.ndim == 1 else 1
    logp = _log_softmax(input, class_dim)
    nll = _nll_loss_nd(logp, target, weight, reduction, ignore_index)
    n_classes = logp.shape[class_dim]
    ignore = target.data == ignore_index
    if weight is not None:
        smooth = neg(sum(logp * _class_weight_view(weight, logp.ndim, class_dim), class_dim))
    else:
        smooth = neg(sum(logp, class_dim))
    smooth = _masked_fill(smooth, ignore, 0.0)
    if reduction == "mean":
        if weight is not None:
            total = Tensor(np.asarray(weight.data[target.data[~ignore]].sum(), dtype=weight.data.dtype))
        else:
            total = Tensor(np.asarray((~ignore).sum(), dtype=np.int64))
        ret = sum(smooth) / total
    elif reduction == "sum":
        ret = sum(smooth)
    else:
        ret = smooth
    return _mul_scalar(nll, 1 - label_smoothing) + _mul_scalar(ret, label_smoothing / n_classes)


@composite("cross_entropy", grad_fn="varies",
           note="d/dinput = softmax(input) - target distribution (through log_softmax and nll_loss)")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross-entropy between the logits ``input`` (classes along dim 1; a 1-d input is one sample) and either
    class indices (int64, the input's shape without dim 1) or class probabilities (float, the input's shape).
    Composed like PyTorch (LossNLL.cpp): indices give ``nll_loss(log_softmax(input, 1), target, ...)``;
    ``label_smoothing`` mixes in the uniform distribution; probabilities give
    ``-sum(log_softmax(input) * target * weight) / (numel / C)`` for 'mean'. Matches
    torch.nn.functional.cross_entropy, including its grad_fn names.

    Raises:
        ValueError: for an unknown ``reduction``; RuntimeError for ``label_smoothing`` outside [0, 1],
            ``ignore_index`` with probabilities, a bad weight or target dtype; IndexError for a class index out
            of range.
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    input, target, weight = _tensors(input, target, weight)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if tuple(input.shape) == tuple(target.shape):
        if target.data.dtype.kind != "f":
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{_scalar_name(target)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing)
    if label_smoothing > 0.0:
        return _cross_entropy_label_smoothing(input, target, weight, reduction, ignore_index, label_smoothing)
    return _nll_loss_nd(_log_softmax(input, 0 if input.ndim == 1 else 1), target, weight, reduction, ignore_index)


@cross_entropy.defsymbolic
def _(s, input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
      label_smoothing=0.0):
    if len(input.shape) != 1 or weight is not None or label_smoothing:
        raise s.NoFormula("cross_entropy of a batch or with weights or label smoothing (formulas cover one "
                          "sample: 1-d logits)")
    z, y = s.elem(input), s.elem(target)
    log_p = z - s.LogSumExp(z)
    if getattr(target, "shape", ()) == ():  # a class index: softmax(z) - onehot(y)
        onehot = s.OneHot(y, input.shape[0])
        return -s.SumAll(onehot * log_p), lambda g: ((s.Softmax(z) - onehot) * g, None)
    return -s.SumAll(y * log_p), lambda g: ((s.Softmax(z) * s.SumAll(y) - y) * g, -log_p * g)


# ------------------------------------------------------------------------------------------------- kl_div


@composite("kl_div", grad_fn="varies", note="d/dinput = -target (or -exp(target) with log_target), reduced")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence with ``input`` the log-probabilities and ``target`` the probabilities (or
    log-probabilities with ``log_target``): ``target * (log(target) - input)`` elementwise (xlogy, so 0 where
    target is 0), reduced; 'batchmean' divides the sum by the batch size (the first dimension) and 'mean'
    warns as PyTorch does. Matches torch.nn.functional.kl_div (composed of xlogy/sub/mul, or exp/sub/mul).

    Raises:
        ValueError: for an unknown ``reduction``; RuntimeError for integer inputs.
    """
    input, target = _tensors(input, target)
    if input.data.dtype.kind != "f" or target.data.dtype.kind != "f":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    if reduction != "batchmean":
        _check_reduction(reduction)
    if log_target:
        out = exp(target) * (target - input)
    else:
        out = _xlogy(target, target) - target * input
    reduced = _reduce_composite(out, "sum" if reduction == "batchmean" else reduction)
    if reduction == "batchmean" and input.ndim != 0:
        reduced = reduced / input.shape[0]
    return reduced


# ----------------------------------------------------------------------------------------- forward mode
# derivatives.yaml: mul/div/add by a number, masked_fill and xlogy are elementwise; the pointwise losses'
# ``result:`` is apply_loss_reduction of their elementwise tangent (mse_loss: apply_loss_reduction(2 * (self_p -
# target_p) * (self_t - target_t), reduction)); nll_loss is linear in its input (result: nll_loss(self_t,
# target, weight, reduction, ignore_index)), as is its backward in the gradient.


@_bce_backward.defjvp
def _(grad_t, input_t, target_t, grad, input, target, weight, reduction, input_shape):
    # linear in grad (a 0-d grad for 'mean'/'sum' broadcasts); elementwise in input and target, whose terms are
    # those of the double-backward rule above with the tangent as its gradient
    rule = _bce_backward.vjp
    return (_bce_backward(grad_t, input, target, weight, reduction)
            + rule(input_t, grad, input, target, weight, reduction, input_shape, (False, True, False, False))[1]
            + rule(target_t, grad, input, target, weight, reduction, input_shape, (False, False, True, False))[2])

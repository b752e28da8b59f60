"""More losses of torch.nn.functional: ctc_loss, multi_margin_loss, multilabel_margin_loss, linear_cross_entropy;
and embedding_bag.

Each of the first three is an op with PyTorch's backward class and its CPU kernel's formulas:

* ctc_loss (Graves et al. 2006; aten/src/ATen/native/LossCTC.cpp): ``_ctc_loss`` (CtcLossBackward0) is the
  negative log-likelihood of each target by the alpha recursion in log space; its derivative is
  ``ctc_loss_backward``'s, ``exp(log_probs) - exp(log(alpha beta) + nll - log_probs)`` per class, which is the
  gradient with respect to the logits of a log_softmax that made ``log_probs`` (PyTorch's convention); the
  reductions are ``ctc_loss_impl``'s (``'mean'`` divides each loss by its target length, then averages).
* multi_margin_loss, multilabel_margin_loss: LossMultiMargin.cpp and LossMultiLabelMargin.cpp.

Their derivatives have no derivative in PyTorch (a gradient taken with ``create_graph=True`` gets a
NotImplemented node whose backward raises ``derivative for aten::..._backward is not implemented``), and so here.
embedding_bag (EmbeddingBag.cpp, EmbeddingBagBackward0) sums, averages or takes the maximum of the rows of each
bag; its gradient (to the weight and to per_sample_weights) is not differentiable again, as PyTorch's.
linear_cross_entropy is torch/nn/functional.py's reference path: ``cross_entropy(linear(input, W), target)``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, op
from ..core.forward import fw_not_implemented
from ..elementwise.arithmetic import div
from ..elementwise.comparison import where
from ..linalg.products import linear
from ..reduction.reductions import mean, sum
from ..shape.views import reshape, squeeze, unsqueeze
from .loss import _legacy_reduction, cross_entropy

_REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _not_implemented(aten: str):
    def rule(grad):
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")

    return rule


def _array(v):
    return v.data if isinstance(v, Tensor) else np.asarray(v)


# ================================================================================================= ctc_loss
def _log_add(*terms):
    """``log(sum(exp(t)))`` of arrays elementwise, with LossCTC.cpp's guard: the maximum taken out, 0 where every
    term is -inf."""
    m = terms[0]
    for t in terms[1:]:
        m = np.maximum(m, t)
    m = np.where(m == -np.inf, 0.0, m)
    with np.errstate(invalid="ignore"):
        return np.log(np.add.reduce([np.exp(t - m) for t in terms])) + m


def _ctc_setup(log_probs, targets, input_lengths, target_lengths, blank):
    """The augmented label sequences l' (blank, l1, blank, l2, ..., blank) as (N, 2 max_len + 1) class indices,
    the log-probabilities of l' at each time (N, T, S), and the masks of valid positions and allowed skips."""
    n = log_probs.shape[1]
    il, tl = np.asarray(input_lengths, np.int64), np.asarray(target_lengths, np.int64)
    max_len = int(tl.max()) if n else 0
    s_len = 2 * max_len + 1
    labels = np.zeros((n, max_len), np.int64)
    if targets.ndim == 1:
        offsets = np.concatenate([[0], np.cumsum(tl)[:-1]]) if n else np.zeros(0, np.int64)
    for b in range(n):
        row = targets[offsets[b]:offsets[b] + tl[b]] if targets.ndim == 1 else targets[b, :tl[b]]
        labels[b, :tl[b]] = row
    prime = np.full((n, s_len), blank, np.int64)
    prime[:, 1::2] = labels
    lp = np.transpose(log_probs, (1, 0, 2)).astype(np.float64)  # (N, T, C): computed in float64
    lpp = np.take_along_axis(lp, np.broadcast_to(prime[:, None, :], (n, lp.shape[1], s_len)), axis=2)
    s = np.arange(s_len)
    valid = s[None, :] < (2 * tl + 1)[:, None]
    skip = np.zeros((n, s_len), bool)
    skip[:, 2:] = prime[:, 2:] != prime[:, :-2]
    return il, tl, prime, lp, lpp, valid, skip


def _ctc_alpha(lpp, il, tl, valid, skip):
    """log_alpha (N, T, S) of LossCTC.cpp's forward recursion."""
    n, t_len, s_len = lpp.shape
    la = np.full((n, t_len, s_len), -np.inf)
    if t_len == 0:
        return la
    la[:, 0, 0] = lpp[:, 0, 0]
    if s_len > 1:
        la[:, 0, 1] = np.where(tl > 0, lpp[:, 0, 1], -np.inf)
    neg = np.full((n, 1), -np.inf)
    for t in range(1, t_len):
        prev = la[:, t - 1]
        la2 = np.concatenate([neg, prev[:, :-1]], axis=1)
        la3 = np.where(skip, np.concatenate([neg, neg, prev[:, :-2]], axis=1)[:, :s_len], -np.inf)
        new = _log_add(prev, la2, la3) + lpp[:, t]
        la[:, t] = np.where(valid & (t < il)[:, None], new, -np.inf)
    return la


def _ctc_nll(la, il, tl):
    n = la.shape[0]
    b = np.arange(n)
    last = np.maximum(il - 1, 0)
    l1 = la[b, last, 2 * tl]
    l2 = np.where(tl > 0, la[b, last, np.maximum(2 * tl - 1, 0)], -np.inf)
    return -_log_add(l1, l2)


def _ctc_forward(log_probs, targets, input_lengths, target_lengths, blank):
    il, tl, prime, lp, lpp, valid, skip = _ctc_setup(log_probs, targets, input_lengths, target_lengths, blank)
    return _ctc_nll(_ctc_alpha(lpp, il, tl, valid, skip), il, tl)


def _ctc_check(log_probs, targets, input_lengths, target_lengths, blank):
    """ctc_loss_cpu_template's argument checks (PyTorch's messages)."""
    c = "ctc_loss_allocate_outputs"
    if log_probs.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional tensor for argument "
                           f"#1 'log_probs' (while checking arguments for {c})")
    t_len, n, n_classes = log_probs.shape
    if not 0 <= blank < n_classes:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    for v in target_lengths:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {v} (while checking "
                               f"arguments for {c})")
    if targets.ndim == 1:
        total = int(np.sum(target_lengths, dtype=np.int64))
        if targets.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got size {targets.shape[0]} "
                               f"for argument #2 'targets' (while checking arguments for {c})")
    else:
        if targets.shape[0] != n:
            raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size {targets.shape[0]} "
                               f"for argument #2 'targets' (while checking arguments for {c})")
        longest = max(target_lengths, default=0)
        if targets.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{targets.shape[1]} for argument #2 'targets' (while checking arguments for {c})")
    for v in input_lengths:
        if v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {v} (while checking "
                               f"arguments for {c})")
        if v > t_len:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_len}, but got value {v} (while "
                               f"checking arguments for {c})")
    if targets.size and (targets.min() < 0 or targets.max() >= n_classes):
        raise IndexError("index out of range in self")


@op("_ctc_loss", grad_fn="CtcLossBackward0", promote=None,
    note="d/dlog_probs = exp(log_probs) - exp(log(alpha beta) + nll - log_probs) (PyTorch's ctc_loss_backward: "
         "the gradient through the log_softmax that made log_probs)",
    formula="log_probs: grad * (exp(log_probs) - exp(log(sum of alpha * beta over the label's positions) + nll - "
            "log_probs)) at t < input_length, 0 after")
def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    """The CTC negative log-likelihood of each batch element (N,) from ``log_probs`` (T, N, C), ``targets``
    (an int64 array, (N, S) padded or 1-d concatenated) and the lengths (tuples of ints), checked."""
    nll = _ctc_forward(log_probs, targets, input_lengths, target_lengths, blank)
    return nll.astype(log_probs.dtype)


@op("_ctc_loss_backward", grad_fn="NotImplemented", inputs=2, promote=None,
    note="no derivative: backward raises, as in PyTorch")
def _ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    """LossCTC.cpp's ctc_loss_backward_cpu_template: the beta recursion, the log of the summed alpha * beta of
    each class, and ``(exp(lp) - exp(lcab + nll - lp)) * grad[b]`` for ``t < input_length`` (0 after, and 0 for an
    infinite loss with ``zero_infinity``)."""
    il, tl, prime, lp, lpp, valid, skip = _ctc_setup(log_probs, targets, input_lengths, target_lengths, blank)
    la = _ctc_alpha(lpp, il, tl, valid, skip)
    nll = _ctc_nll(la, il, tl)
    n, t_len, s_len = lpp.shape
    lb = np.full((n, t_len, s_len), -np.inf)
    b = np.arange(n)
    last = np.maximum(il - 1, 0)
    has_t = il > 0
    lb[b[has_t], last[has_t], 2 * tl[has_t]] = lpp[b[has_t], last[has_t], 2 * tl[has_t]]
    k = has_t & (tl > 0)
    lb[b[k], last[k], 2 * tl[k] - 1] = lpp[b[k], last[k], 2 * tl[k] - 1]
    neg = np.full((n, 1), -np.inf)
    skip_next = np.concatenate([skip[:, 2:], np.zeros((n, 2), bool)], axis=1)[:, :s_len]  # l'[s + 2] != l'[s]
    for t in range(t_len - 2, -1, -1):
        nxt = lb[:, t + 1]
        lb2 = np.concatenate([nxt[:, 1:], neg], axis=1)
        lb3 = np.where(skip_next, np.concatenate([nxt[:, 2:], neg, neg], axis=1)[:, :s_len], -np.inf)
        new = _log_add(nxt, lb2, lb3) + lpp[:, t]
        lb[:, t] = np.where(valid & (t < il - 1)[:, None], new, lb[:, t])
    lab = la + lb  # (N, T, S)
    top = lab.max(axis=2, keepdims=True)
    top = np.where(top == -np.inf, 0.0, top)
    onehot = np.zeros((n, s_len, lp.shape[2]))
    onehot[np.arange(n)[:, None], np.arange(s_len)[None, :], prime] = 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        lcab = np.log(np.einsum("nts,nsc->ntc", np.exp(lab - top), onehot)) + top
        g = np.exp(lp) - np.exp(lcab + nll[:, None, None] - lp)
    g = g * np.asarray(grad, np.float64).reshape(n, 1, 1)
    g = np.where(np.arange(t_len)[None, :, None] < il[:, None, None], g, 0.0)
    if zero_infinity:
        g = np.where((nll == np.inf)[:, None, None], 0.0, g)
    return np.transpose(g, (1, 0, 2)).astype(log_probs.dtype)


_ctc_loss_backward.defvjp(_not_implemented("_ctc_loss_backward"))


@_ctc_loss.defvjp
def _(grad, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    return _ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)


def _lengths(v, name: str) -> tuple:
    if isinstance(v, Tensor):
        if v.data.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
        return tuple(int(x) for x in v.data.reshape(-1))
    if not isinstance(v, (tuple, list)):
        raise TypeError(f"ctc_loss(): argument '{name}' must be a tuple of ints or a Tensor, not {type(v).__name__}")
    return tuple(int(x) for x in v)


@composite("ctc_loss", grad_fn="varies",
           note="d/dlog_probs = exp(log_probs) - posterior of each class (PyTorch's CTC gradient), reduced")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The Connectionist Temporal Classification loss (Graves et al. 2006) of ``log_probs`` ((T, N, C) or (T, C)
    log-probabilities), ``targets`` ((N, S) padded, 1-d concatenated, or (S,) unbatched) and the lengths (int
    tensors, lists or tuples). 'mean' divides each loss by its target length (at least 1) and averages;
    ``zero_infinity`` replaces infinite losses (impossible alignments) by 0. Matches
    torch.nn.functional.ctc_loss (grad_fn CtcLossBackward0 for 'none'; MeanBackward0/SumBackward0 otherwise;
    WhereBackward0 with ``zero_infinity``). The gradient is PyTorch's: with respect to the logits of the
    log_softmax that gave ``log_probs``.

    Raises:
        ValueError: for an unknown ``reduction``; RuntimeError for mismatched sizes or lengths out of range
            (PyTorch's messages).
    """
    _check_reduction(reduction)
    log_probs, targets = to_tensor(log_probs), to_tensor(targets)
    il, tl = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths, "target_lengths")
    batched = log_probs.ndim == 3
    lp = log_probs if batched else unsqueeze(log_probs, 1)
    t = targets.data.astype(np.int64)
    _ctc_check(lp, t, il, tl, blank)
    res = _ctc_loss(lp, t, il, tl, int(blank), bool(zero_infinity))
    if zero_infinity:
        res = where(res == np.inf, Tensor(np.zeros((), res.data.dtype)), res)
    if reduction == "mean":
        lengths = Tensor(np.maximum(np.asarray(tl, np.float64), 1).astype(res.data.dtype))
        return mean(div(res, lengths))
    if reduction == "sum":
        return sum(res)
    return res if batched else squeeze(res, 0)


# ======================================================================================== multi_margin_loss
def _margin_frames(input):
    """(nframe, dim) of a 0-d, 1-d or 2-d margin-loss input."""
    if input.ndim <= 1:
        return 1, (1 if input.ndim == 0 else input.shape[0])
    return input.shape[0], input.shape[1]


def _multi_margin_terms(input, target, p, margin, weight):
    """The hinge terms (nframe, dim), 0 at each sample's target class, and the mask where they are positive."""
    nframe, dim = _margin_frames(input)
    x = input.reshape(nframe, dim)
    y = target.reshape(nframe)
    xt = np.take_along_axis(x, y[:, None], axis=1)
    z = margin - xt + x
    on = (z > 0) & (np.arange(dim)[None, :] != y[:, None])
    h = np.where(on, z if p == 1 else z * z, 0).astype(x.dtype)
    if weight is not None:
        h = h * weight[y][:, None].astype(x.dtype)
    return x, y, z, on, h, nframe, dim


@op("multi_margin_loss", grad_fn="MultiMarginLossBackward0", promote=None, public=False,
    note="d/dx_j = w_y * (1 or 2 z_j) / dim where z_j = margin - x_y + x_j > 0, and minus their sum at the target",
    formula="self: for each class j other than the target t with z = margin - input[t] + input[j] > 0: grad * "
            "weight[t] * (1, or 2 z for p = 2) / dim to input[j] and its negative to input[t] (/ nframe for 'mean')")
def _multi_margin_loss(input, target, p, margin, weight, reduction):
    """LossMultiMargin.cpp's forward: ``sum_j w_y max(0, margin - x_y + x_j)^p / dim`` per sample, reduced."""
    x, y, z, on, h, nframe, dim = _multi_margin_terms(input, target, p, margin, weight)
    out = (h.sum(axis=1) / x.dtype.type(dim)).astype(x.dtype)
    if reduction == "mean":
        return np.asarray(out.sum() / x.dtype.type(nframe), x.dtype)
    if reduction == "sum":
        return np.asarray(out.sum(), x.dtype)
    return out if target.ndim > 0 else out.reshape(())


@op("_multi_margin_loss_backward", grad_fn="NotImplemented", inputs=2, promote=None,
    note="no derivative: backward raises, as in PyTorch")
def _multi_margin_loss_backward(grad, input, target, p, margin, weight, reduction):
    """LossMultiMargin.cpp's backward (multi_margin_loss_cpu_backward)."""
    x, y, z, on, h, nframe, dim = _multi_margin_terms(input, target, p, margin, weight)
    scale = 1.0 / (nframe * dim) if reduction == "mean" else 1.0 / dim
    g = np.asarray(grad, np.float64)
    g = g.reshape(nframe, 1) if reduction == "none" else g.reshape(1, 1)
    d = np.where(on, 1.0 if p == 1 else 2.0 * z, 0.0) * scale * g
    if weight is not None:
        d = d * weight[y][:, None]
    d[np.arange(nframe), y] = -d.sum(axis=1)
    return d.astype(x.dtype).reshape(input.shape)


_multi_margin_loss_backward.defvjp(_not_implemented("multi_margin_loss_backward"))


@_multi_margin_loss.defvjp
def _(grad, input, target, p, margin, weight, reduction):
    return _multi_margin_loss_backward(grad, input, target, p, margin, weight, reduction)


def _scalar(t) -> str:
    return dtypes.scalar_type_name(t.data.dtype)


def _legacy(size_average, reduce, reduction):
    return _legacy_reduction(size_average, reduce, reduction)


@composite("multi_margin_loss", grad_fn="MultiMarginLossBackward0", note=_multi_margin_loss.note)
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """The multi-class hinge loss: per sample ``sum_{j != y} weight[y] * max(0, margin - x[y] + x[j])^p / C``
    (``p`` 1 or 2), over a (C,) or (N, C) input and class indices (a 0-d/1-d int64 target). Matches
    torch.nn.functional.multi_margin_loss (grad_fn MultiMarginLossBackward0).

    Raises:
        ValueError: for p other than 1 or 2, a weight that is not 1-d or an unknown reduction; RuntimeError for
            inconsistent sizes, a target out of range or a weight that requires grad (PyTorch's messages).
    """
    reduction = _legacy(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    input, target = to_tensor(input), to_tensor(target)
    if weight is not None:
        weight = to_tensor(weight)
        if weight.ndim != 1:
            raise ValueError("weight must be one-dimensional")
        if weight.data.dtype != input.data.dtype:
            raise RuntimeError(f"expected scalar type {_scalar(input)} but found {_scalar(weight)}")
        if weight.requires_grad:
            raise RuntimeError("The function 'multi_margin_loss' is not differentiable with respect to argument "
                               "'weight'. This input cannot have requires_grad True.")
    _check_reduction(reduction)
    nframe, dim = _margin_frames(input)
    if input.ndim > 2 or (input.ndim >= 1 and input.shape[-1] == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    if target.ndim > 1 or target.numel() != nframe:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nframe}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != dim:
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {list(weight.shape)}")
    t = target.data.astype(np.int64)
    if t.size and (t.min() < 0 or t.max() >= dim):
        raise RuntimeError("target out of range")
    w = None if weight is None else weight.data
    return _multi_margin_loss(input, t, p, float(margin), w, reduction)


# =================================================================================== multilabel_margin_loss
def _multilabel_terms(input, target):
    nframe, dim = _margin_frames(input)
    x = input.reshape(nframe, dim)
    y = target.reshape(nframe, dim)
    stop = np.argmax(np.concatenate([y, -np.ones((nframe, 1), y.dtype)], axis=1) < 0, axis=1)  # first -1
    listed = np.arange(dim)[None, :] < stop[:, None]  # the target indices before the first -1
    return x, y, listed, nframe, dim


def _multilabel_mask(x, y, listed, is_target):
    """(nframe, targets, dim): where ``1 - x[y_k] + x[d] > 0`` for a listed target ``y_k`` and a class ``d``
    that is not a target, and the hinge values."""
    xt = np.take_along_axis(x, np.where(listed, y, 0), axis=1)  # (nframe, k)
    z = 1 - xt[:, :, None] + x[:, None, :]
    on = listed[:, :, None] & (is_target[:, None, :] == 0) & (z > 0)
    return z, on


@op("multilabel_margin_loss_forward", grad_fn="MultilabelMarginLossBackward0", promote=None, public=False,
    note="d/dx_d = +1/dim for each target y_k with 1 - x[y_k] + x[d] > 0 (d not a target), -1/dim to x[y_k]",
    formula="self: for each listed target t and non-target class d with 1 - input[t] + input[d] > 0: grad / dim "
            "to input[d] and -grad / dim to input[t] (/ nframe for 'mean')")
def _multilabel_margin_loss(input, target, is_target, reduction):
    """LossMultiLabelMargin.cpp's forward: ``sum_k sum_{d not a target} max(0, 1 - x[y_k] + x[d]) / dim``."""
    x, y, listed, nframe, dim = _multilabel_terms(input, target)
    z, on = _multilabel_mask(x, y, listed, is_target.reshape(nframe, dim))
    out = (np.where(on, z, 0).astype(x.dtype).sum(axis=(1, 2)) / x.dtype.type(dim)).astype(x.dtype)
    if reduction == "mean":
        return np.asarray(out.sum() / x.dtype.type(nframe), x.dtype)
    if reduction == "sum":
        return np.asarray(out.sum(), x.dtype)
    return out if target.ndim > 1 else out.reshape(())


@op("_multilabel_margin_loss_backward", grad_fn="NotImplemented", inputs=2, promote=None,
    note="no derivative: backward raises, as in PyTorch")
def _multilabel_margin_loss_backward(grad, input, target, is_target, reduction):
    """LossMultiLabelMargin.cpp's backward."""
    x, y, listed, nframe, dim = _multilabel_terms(input, target)
    z, on = _multilabel_mask(x, y, listed, is_target.reshape(nframe, dim))
    scale = 1.0 / (nframe * dim) if reduction == "mean" else 1.0 / dim
    g = np.asarray(grad, np.float64)
    g = g.reshape(nframe, 1) if reduction == "none" else g.reshape(1, 1)
    d = on.sum(axis=1) * scale * g  # + to each non-target class, per target that it violates
    minus = on.sum(axis=2) * scale * g  # - to each listed target
    yy = np.where(listed, y, 0)
    for k in range(dim):
        np.add.at(d, (np.arange(nframe), yy[:, k]), -np.where(listed[:, k], minus[:, k], 0.0))
    return d.astype(x.dtype).reshape(input.shape)


_multilabel_margin_loss_backward.defvjp(_not_implemented("multilabel_margin_loss_backward"))


@_multilabel_margin_loss.defvjp
def _(grad, input, target, is_target, reduction):
    return _multilabel_margin_loss_backward(grad, input, target, is_target, reduction)


@composite("multilabel_margin_loss", grad_fn="MultilabelMarginLossBackward0", note=_multilabel_margin_loss.note)
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The multi-label hinge loss: per sample ``sum over listed targets y_k and classes d that are not targets of
    max(0, 1 - x[y_k] + x[d]) / C``; ``target`` (int64, the input's shape) lists each sample's classes,
    ended by the first -1. Matches torch.nn.functional.multilabel_margin_loss (grad_fn
    MultilabelMarginLossBackward0).

    Raises:
        ValueError: for an unknown reduction; RuntimeError for inconsistent sizes or a target out of range
            (PyTorch's messages).
    """
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(reduction)
    input, target = to_tensor(input), to_tensor(target)
    if input.ndim > 2 or (input.ndim >= 1 and input.shape[-1] == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    nframe, dim = _margin_frames(input)
    ok = target.ndim <= 1 and target.numel() == dim if input.ndim <= 1 else \
        target.ndim == 2 and tuple(target.shape) == (nframe, dim)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    t = target.data.astype(np.int64)
    _, y, listed, _, _ = _multilabel_terms(input.data, t)
    if np.any(listed & ((y < 0) | (y >= dim))):
        raise RuntimeError("argument #2 'target' is out of range")
    is_target = np.zeros((nframe, dim), input.data.dtype)
    for k in range(dim):
        rows = np.flatnonzero(listed[:, k])
        is_target[rows, y[rows, k]] = 1
    return _multilabel_margin_loss(input, t, is_target.reshape(t.shape), reduction)


# ============================================================================================ embedding_bag
_MODES = {"sum": 0, "mean": 1, "max": 2}


def _bags(indices, offsets, include_last_offset: bool, n_index: int):
    """The bag of each index (offset2bag) and the number of bags."""
    n_bags = offsets.shape[0] - (1 if include_last_offset else 0)
    bag = np.zeros(n_index, np.int64)
    if n_bags > 0:
        starts = offsets[:n_bags]
        bag = np.searchsorted(starts, np.arange(n_index), side="right") - 1
    return bag, max(n_bags, 0)


def _bag_reduce(weight, indices, bag, n_bags, mode, psw, padding_idx):
    """(output, count per bag, argmax rows per bag for 'max' or None)."""
    keep = indices != padding_idx
    dt = weight.dtype
    rows = weight[indices].astype(np.float64)
    if psw is not None:
        rows = rows * psw.astype(np.float64)[:, None]
    count = np.bincount(bag[keep], minlength=n_bags)[:n_bags] if indices.size else np.zeros(n_bags, np.int64)
    out = np.zeros((n_bags, weight.shape[1]))
    arg = None
    if mode == "max":
        out = np.full((n_bags, weight.shape[1]), -np.inf)
        arg = np.full((n_bags, weight.shape[1]), -1, np.int64)
        for i in np.flatnonzero(keep):  # in order: the first maximum wins, as the kernel's strict ">"
            better = rows[i] > out[bag[i]]
            out[bag[i]] = np.where(better, rows[i], out[bag[i]])
            arg[bag[i]] = np.where(better, indices[i], arg[bag[i]])
        out = np.where(np.isneginf(out), 0.0, out)
    else:
        np.add.at(out, bag[keep], rows[keep])
        if mode == "mean":
            out = out / np.maximum(count, 1)[:, None]
    return out.astype(dt), count, arg


@op("_embedding_bag", grad_fn="EmbeddingBagBackward0", inputs=2, promote=None,
    note="d/dweight = each bag's gradient added into its rows (/ bag size for 'mean'; to the maximal row for "
         "'max'); d/dper_sample_weights = <grad of the bag, weight row>",
    formula="weight: grad of each bag added into the rows it looked up (times per_sample_weights; divided by the "
            "bag's size for 'mean'; only into the row that gave the maximum for 'max'); per_sample_weights: the "
            "dot product of the bag's grad with the row")
def _embedding_bag(weight, per_sample_weights, indices, offsets, mode, scale_grad_by_freq, include_last_offset,
                   padding_idx):
    """EmbeddingBag.cpp's forward: the sum, mean or maximum of the rows of each bag (padding rows skipped; an
    empty bag gives zeros). ``per_sample_weights`` (scales each row, 'sum' only) is a ones array when not
    given."""
    bag, n_bags = _bags(indices, offsets, include_last_offset, indices.shape[0])
    psw = per_sample_weights if mode == 0 else None
    out, _, _ = _bag_reduce(weight, indices, bag, n_bags, ("sum", "mean", "max")[mode], psw, padding_idx)
    return out


def _embedding_bag_weight_grad(g, w, psw, indices, offsets, mode, include_last_offset, padding_idx):
    """EmbeddingBag.cpp's _embedding_bag_dense_backward on arrays: each bag's gradient added into the rows it
    looked up (times per_sample_weights for 'sum', / the bag's size for 'mean', to the maximal row for 'max')."""
    g = np.asarray(g).astype(np.float64)
    bag, n_bags = _bags(indices, offsets, include_last_offset, indices.shape[0])
    keep = indices != padding_idx
    gw = np.zeros(w.shape)
    if mode == 2:
        _, _, arg = _bag_reduce(w, indices, bag, n_bags, "max", None, padding_idx)
        cols = np.broadcast_to(np.arange(w.shape[1]), arg.shape)
        hit = arg >= 0
        np.add.at(gw, (arg[hit], cols[hit]), g[hit])
    else:
        per = g[bag]
        if mode == 1:
            count = np.bincount(bag[keep], minlength=n_bags)[:n_bags]
            per = per / np.maximum(count, 1)[bag][:, None]
        else:
            per = per * np.asarray(psw).astype(np.float64)[:, None]
        np.add.at(gw, indices[keep], per[keep])
    return gw.astype(w.dtype)


def _embedding_bag_psw_grad(g, w, indices, offsets, include_last_offset, padding_idx, dtype):
    """EmbeddingBag.cpp's _embedding_bag_per_sample_weights_backward on arrays: the dot product of each bag's
    gradient with the row each sample looked up (0 for a padding row)."""
    g = np.asarray(g).astype(np.float64)
    bag, _ = _bags(indices, offsets, include_last_offset, indices.shape[0])
    keep = indices != padding_idx
    return np.where(keep, np.einsum("ij,ij->i", g[bag], np.asarray(w)[indices].astype(np.float64)), 0.0).astype(dtype)


@op("_embedding_bag_backward", grad_fn="NotImplemented", inputs=2, promote=None,
    note="no derivative: backward raises, as in PyTorch")
def _embedding_bag_backward(grad, per_sample_weights, weight, indices, offsets, mode, include_last_offset,
                            padding_idx):
    """The weight's gradient (``weight`` an array: the maximal rows of 'max' and the dtype) as a node of a graph
    made with create_graph: PyTorch's derivative of _embedding_bag_backward is not implemented."""
    return _embedding_bag_weight_grad(grad, weight, per_sample_weights, indices, offsets, mode, include_last_offset,
                                      padding_idx)


@_embedding_bag_backward.defvjp
def _(grad):
    raise NotImplementedError("the derivative for '_embedding_bag_backward' is not implemented.")


@op("_embedding_bag_per_sample_weights_backward", grad_fn="NotImplemented", inputs=2, promote=None,
    note="no derivative: backward raises, as in PyTorch")
def _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, include_last_offset, padding_idx,
                                               dtype):
    """per_sample_weights' gradient as a node of a graph made with create_graph: PyTorch has no derivative of
    _embedding_bag_per_sample_weights_backward (its NotImplemented node raises)."""
    return _embedding_bag_psw_grad(grad, weight, indices, offsets, include_last_offset, padding_idx, dtype)


_embedding_bag_per_sample_weights_backward.defvjp(_not_implemented("_embedding_bag_per_sample_weights_backward"))


@_embedding_bag.defvjp
def _(grad, weight, per_sample_weights, indices, offsets, mode, scale_grad_by_freq, include_last_offset,
      padding_idx, needs_input_grad):
    # derivatives.yaml _embedding_bag: weight: _embedding_bag_backward(...); per_sample_weights:
    # _embedding_bag_per_sample_weights_backward(...); neither is differentiable again: with create_graph (a
    # Tensor grad) each is a node whose backward raises PyTorch's error, so that a second derivative through
    # them raises as PyTorch's does (the weight's gradient depends on per_sample_weights, theirs on the weight)
    graph = isinstance(grad, Tensor)
    w, psw = _array(weight), _array(per_sample_weights)
    gw = gp = None
    if needs_input_grad[0]:
        if graph:
            gw = _embedding_bag_backward(grad, to_tensor(per_sample_weights), w, indices, offsets, mode,
                                         include_last_offset, padding_idx)
        else:
            gw = _embedding_bag_weight_grad(grad, w, psw, indices, offsets, mode, include_last_offset, padding_idx)
    if needs_input_grad[1] and mode == 0:
        if graph:
            gp = _embedding_bag_per_sample_weights_backward(grad, to_tensor(weight), indices, offsets,
                                                            include_last_offset, padding_idx, psw.dtype)
        else:
            gp = _embedding_bag_psw_grad(grad, w, indices, offsets, include_last_offset, padding_idx, psw.dtype)
    return gw, gp


def _embedding_bag_check(input, weight, offsets, per_sample_weights, mode, include_last_offset):
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({_size(per_sample_weights)}) is not None, then it "
                         f"must have the same shape as the input ({_size(input)})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets).__name__}")
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")


def _size(t) -> str:
    return "torch.Size([" + ", ".join(str(s) for s in t.shape) + "])"


@composite("embedding_bag", grad_fn="EmbeddingBagBackward0", note=_embedding_bag.note)
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """The sums, means or maxima of bags of embedding rows: a 1-d ``input`` of indices cut into bags at
    ``offsets``, or a 2-d input of one bag per row; ``per_sample_weights`` scales each row ('sum' only);
    ``padding_idx`` rows are skipped. Matches torch.nn.functional.embedding_bag (grad_fn EmbeddingBagBackward0).

    Raises:
        ValueError, NotImplementedError: PyTorch's argument checks (messages); IndexError for an index out of
            range; RuntimeError for offsets that do not start at 0 or run past the input.
    """
    input, weight = to_tensor(input), to_tensor(weight)
    offsets = None if offsets is None else to_tensor(offsets)
    per_sample_weights = None if per_sample_weights is None else to_tensor(per_sample_weights)
    if weight.data.dtype.kind in "iu" and input.data.dtype.kind == "f":
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      UserWarning, stacklevel=3)
        weight, input = input, weight
    _embedding_bag_check(input, weight, offsets, per_sample_weights, mode, include_last_offset)
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if sparse:
        raise NotImplementedError("embedding_bag with sparse=True (sparse gradients are out of gradcli's scope)")
    if max_norm is not None:
        raise NotImplementedError("embedding_bag with max_norm is not supported by gradcli")
    if scale_grad_by_freq:
        raise NotImplementedError("embedding_bag with scale_grad_by_freq=True is not supported by gradcli (PyTorch "
                                  "2.13's CPU kernel scales by counts that gradcli does not reproduce yet)")
    idx = input.data.astype(np.int64).reshape(-1)
    if input.ndim == 2:
        offs = np.arange(0, input.numel(), input.shape[1]) if input.shape[1] else np.zeros(input.shape[0], np.int64)
        include_last_offset = False
    else:
        offs = offsets.data.astype(np.int64)
    n = weight.shape[0]
    if offs.size and offs[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {offs[0]}\n[ torch.LongTensor{{}} ]")
    if offs.size and offs[-1] > idx.size:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {idx.size} but got offsets[-1] of "
                           f"{offs[-1]}")
    if (idx.size and (idx.min() < 0 or idx.max() >= n)) or np.any(np.diff(offs) < 0):
        raise RuntimeError("Expected i < index_size to be true, but got false.  (Could this error message be "
                           "improved?  If so, please report an enhancement request to PyTorch.)")
    if padding_idx is None:
        pad = -1
    else:
        if not -n <= padding_idx < n:
            raise RuntimeError("padding_idx must be within the number of embeddings, -" + str(n) + " through " +
                               str(n - 1) + ", but got " + str(padding_idx))
        pad = padding_idx % n
    psw = per_sample_weights.reshape(-1) if per_sample_weights is not None else \
        Tensor(np.ones(idx.shape, weight.data.dtype))
    return _embedding_bag(weight, psw, idx, offs, _MODES[mode], bool(scale_grad_by_freq), bool(include_last_offset),
                          pad)


# ===================================================================================== linear_cross_entropy
@composite("linear_cross_entropy", grad_fn="varies",
           note="cross_entropy(linear(input, linear_weight, linear_bias), target): its gradients through both")
def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """The cross-entropy of the logits ``linear(input, linear_weight, linear_bias)`` ((N, C, d1, ...) for a
    (C, d1, ..., in_features) weight) and ``target``. Matches torch.nn.functional.linear_cross_entropy's
    reference path (``options=None``).

    Raises:
        RuntimeError: PyTorch's shape checks (messages); NotImplementedError for ``options`` (PyTorch's chunked
            path).
    """
    input, linear_weight, target = to_tensor(input), to_tensor(linear_weight), to_tensor(target)
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}")
    num_batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                           f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if options is not None:
        raise NotImplementedError("linear_cross_entropy's chunked path (options=LinearCrossEntropyOptions(...)) is "
                                  "not supported by gradcli; options=None computes the same loss")
    ignore_index = -100 if ignore_index is None else ignore_index
    if out_features:
        flat = math.prod(out_features) * num_classes
        linear_weight = reshape(linear_weight, (flat, in_features))
        if linear_bias is not None:
            linear_bias = reshape(linear_bias, (flat,))
    logits = reshape(linear(input, linear_weight, linear_bias), logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)


# ------------------------------------------------------------------------------------------- forward mode
# derivatives.yaml gives none of these ops a forward-mode rule: forward AD raises PyTorch's NotImplementedError.
def _unsupported(name: str):
    def raise_(*_):
        raise NotImplementedError(fw_not_implemented(name))
    return raise_


@_ctc_loss.defjvp
def _(log_probs_t):
    _unsupported("_ctc_loss")()


@_multi_margin_loss.defjvp
def _(input_t):
    _unsupported("multi_margin_loss")()


@_multilabel_margin_loss.defjvp
def _(input_t):
    _unsupported("multilabel_margin_loss_forward")()


@_embedding_bag.defjvp
def _(weight_t, per_sample_weights_t):
    _unsupported("_embedding_bag")()


@_ctc_loss_backward.defjvp
def _(grad_t, log_probs_t):
    _unsupported("_ctc_loss_backward")()


@_multi_margin_loss_backward.defjvp
def _(grad_t, input_t):
    _unsupported("multi_margin_loss_backward")()


@_multilabel_margin_loss_backward.defjvp
def _(grad_t, input_t):
    _unsupported("multilabel_margin_loss_backward")()


@_embedding_bag_backward.defjvp
def _(grad_t, per_sample_weights_t):
    _unsupported("_embedding_bag_dense_backward")()  # (what the composite _embedding_bag_backward calls)


@_embedding_bag_per_sample_weights_backward.defjvp
def _(grad_t, weight_t):
    _unsupported("_embedding_bag_per_sample_weights_backward")()


for _op in (_ctc_loss, _multi_margin_loss, _multilabel_margin_loss, _embedding_bag, _ctc_loss_backward,
            _multi_margin_loss_backward, _multilabel_margin_loss_backward, _embedding_bag_backward,
            _embedding_bag_per_sample_weights_backward):
    _op.jvp.unsupported = True  # (read by torch.func.hessian: forward over reverse raises here)
del _op

"""The ops behind torch.nn's layers and a few more: embedding, batch_norm, dropout, sort/argsort and
index_add, each as PyTorch 2.13 computes it and names its backward.

Derivative rules are written with ops of the table, so that they can be differentiated again.
"""

from __future__ import annotations

import numpy as np

from ...engine import context, dtypes, limits
from ...engine.tensor import Tensor, normalize_dim, to_tensor
from ..core.declare import composite, op, tensor_method
from ..elementwise.arithmetic import mul, sub
from ..shape.indexing import _index_select_backward, gather, index_select
from ..reduction.reductions import _return_type, mean, sum

return_types_sort = _return_type("sort")
from ..shape.inplace import apply, bump
from ..shape.views import movedim, reshape
from ..elementwise.unary import rsqrt


# -------------------------------------------------------------------------------------------- embedding
def _index_data(name: str, indices) -> np.ndarray:
    if not isinstance(indices, Tensor):
        raise TypeError(f"{name}(): argument 'indices' (position 2) must be Tensor, not {type(indices).__name__}")
    a = indices.data
    if a.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{dtypes.scalar_type_name(a.dtype)}Tensor instead (while "
                           f"checking arguments for {name})")
    return a


@op("_embedding", grad_fn="EmbeddingBackward0", promote=None,
    note="d/dweight = the gradient's rows added into zeros at the looked-up rows (not the padding row)")
def _embedding(weight, indices, padding_idx):
    """The rows ``weight[indices]`` (``indices`` an int array, checked)."""
    n = weight.shape[0]
    if indices.size and (indices.min() < -n or indices.max() >= n):
        raise IndexError("index out of range in self")
    limits.check_numel(indices.shape + weight.shape[1:], "embedding()")
    return np.ascontiguousarray(np.take(weight, indices, axis=0))


@_embedding.defvjp
def _(grad, weight_shape, indices, padding_idx):
    flat = indices.reshape(-1) % weight_shape[0]
    g = reshape(grad, (flat.size,) + tuple(weight_shape[1:]))
    if padding_idx is not None:
        keep = (flat != padding_idx).astype(np.float64 if g.dtype == np.float64 else np.float32)
        keep = keep.reshape((-1,) + (1,) * (len(weight_shape) - 1))
        g = mul(g, Tensor(keep)) if isinstance(g, Tensor) else g * keep.astype(g.dtype)
    return _index_select_backward(g, tuple(weight_shape), 0, flat)


_embedding.defjvp_linear()  # derivatives.yaml: embedding(weight_t, indices, ...)


@composite("embedding", grad_fn="EmbeddingBackward0", note=_embedding.note)
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """The rows of ``weight`` at the integer ``input``'s indices (shape ``input.shape + weight.shape[1:]``);
    ``padding_idx``'s row gets no gradient. Matches torch.nn.functional.embedding (grad_fn EmbeddingBackward0).

    Raises:
        IndexError: for an index out of range; RuntimeError for a non-integer input.
        NotImplementedError: for max_norm, scale_grad_by_freq or sparse, which gradcli does not have.
    """
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("gradcli's embedding supports neither max_norm, scale_grad_by_freq nor sparse")
    weight = to_tensor(weight)
    idx = _index_data("embedding", input)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    return _embedding(weight, idx, padding_idx)


# ------------------------------------------------------------------------------------------- batch_norm
def _bn_axes(ndim: int) -> tuple:
    return (0,) + tuple(range(2, ndim))


def _channel_view(t, ndim: int):
    return reshape(t, (1, -1) + (1,) * (ndim - 2))


@op("_native_batch_norm", grad_fn="NativeBatchNormBackward0", inputs=3, promote=None,
    note="training: d/dx = w invstd (g - mean(g) - xhat mean(g xhat)); eval: d/dx = w g / sqrt(var + eps)")
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
        xmu = sub(input, Tensor(running_mean.astype(dt).reshape(shape)))
        invstd = Tensor((1.0 / np.sqrt(running_var.astype(np.float64) + eps)).astype(dt).reshape(shape))
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


# ---------------------------------------------------------------------------------------------- dropout
@composite("dropout", grad_fn="MulBackward0", note="d/dx = mask / (1 - p)")
def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the others by ``1 / (1 - p)`` in training (the mask
    drawn by bernoulli_ from the generator, as PyTorch's CPU dropout); the input itself otherwise. Matches
    torch.nn.functional.dropout (grad_fn MulBackward0).

    Raises:
        ValueError: for p outside [0, 1] (PyTorch's message).
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    input = to_tensor(input)
    if not training or p == 0:
        return input

    if p == 1:
        return mul(input, Tensor(np.zeros_like(input.data)))
    noise = context.generator().bernoulli(np.full(input.data.shape, 1 - p), input.data.dtype)
    noise = (noise / input.data.dtype.type(1 - p)).astype(input.data.dtype)
    return mul(input, Tensor(noise))


# ------------------------------------------------------------------------------------------ sort/argsort
@op("_sort", grad_fn="SortBackward0", promote=None, note="d/dx = the gradient scattered back to the sorted positions")
def _sort(input, dim, descending, stable):
    """``(values, indices)`` along ``dim`` (stable, as PyTorch's CPU sort)."""
    if input.ndim == 0:
        return input.copy(), np.zeros((), dtype=np.int64)
    d = normalize_dim(dim, input.ndim)
    key = -input if descending and input.dtype.kind != "b" else input
    if descending and input.dtype.kind == "b":
        key = ~input
    if input.dtype.kind == "f":  # NaN sorts last ascending, first descending (PyTorch)
        key = np.where(np.isnan(input), -np.inf if descending else np.inf, key)
    idx = np.argsort(key, axis=d, kind="stable")
    values = np.take_along_axis(input, idx, axis=d)
    return values, idx.astype(np.int64)


@_sort.defvjp
def _(grad, input, dim, descending, stable):
    # value_selecting_reduction_backward: the gradient scattered back to where each value came from (the
    # indices recomputed from the saved input, as the forward picked them)
    data = input.data if isinstance(input, Tensor) else np.asarray(input)
    if data.ndim == 0:
        return grad
    _, idx = _sort(data, dim, descending, stable)
    d = normalize_dim(dim, data.ndim)
    moved = np.moveaxis(idx, d, -1)
    n = moved.shape[-1]
    flat = (moved.reshape(-1, n) + np.arange(moved.size // max(n, 1))[:, None] * n).reshape(-1)
    g = reshape(_movedim(grad, d), (-1,))
    out = _index_select_backward(g, (data.size,), 0, flat)
    return _movedim_back(reshape(out, moved.shape), d)


@_sort.defjvp
def _(input_t, input, dim, descending, stable):
    # derivatives.yaml sort: values: gather_with_keepdimed_indices(self_t, dim, indices, ...)
    data = input.data if isinstance(input, Tensor) else np.asarray(input)
    if data.ndim == 0:
        return input_t
    _, idx = _sort(data, dim, descending, stable)
    return gather(input_t, normalize_dim(dim, data.ndim), Tensor(idx))  # (the indices have no tangent)


def _movedim(t, d):

    return movedim(t, d, -1)


def _movedim_back(t, d):

    return movedim(t, -1, d)


@composite("sort", grad_fn="SortBackward0", note=_sort.note, method=True)
def sort(input, dim=-1, descending=False, stable=False):
    """``(values, indices)`` sorted along ``dim`` (a named tuple; stable); ``values`` is differentiable, the
    indices are int64. Matches torch.sort (grad_fn SortBackward0)."""
    values, indices = _sort(to_tensor(input), dim, bool(descending), bool(stable))
    return return_types_sort(values, indices)


@composite("argsort", grad_fn="none (indices)", note="not differentiable (indices)", method=True,
           differentiable=False)
def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim`` (int64). Matches torch.argsort."""
    return sort(input, dim, descending, stable)[1]


# -------------------------------------------------------------------------------------------- index_add
@op("_index_add", grad_fn="IndexAddBackward0", inputs=2, promote="same",
    note="d/dself = grad; d/dsource = grad.index_select(dim, index) * alpha")
def _index_add(input, source, dim, index, alpha=1):
    """``input`` with ``alpha * source``'s slices added at ``index`` along ``dim`` (repeated indices add up)."""
    d = normalize_dim(dim, max(input.ndim, 1))
    out = input.copy()
    src = source if alpha == 1 else source * input.dtype.type(alpha)
    if input.ndim == 0:
        return out + src.reshape(())
    np.add.at(out, (slice(None),) * d + (index,), src)
    return out


@_index_add.defvjp
def _(grad, dim, index, alpha, needs_input_grad):
    gs = index_select(grad, dim, Tensor(index)) if needs_input_grad[1] else None
    if gs is not None and alpha != 1:
        gs = gs * alpha
    return grad, gs


_index_add.defjvp_linear()  # derivatives.yaml index_add: self_t.index_add(dim, index, source_t, alpha)


@composite("index_add", grad_fn="IndexAddBackward0", note=_index_add.note, method=True)
def index_add(input, dim, index, source, *, alpha=1):
    """``input`` with ``alpha * source``'s slices added at the int ``index`` along ``dim`` (repeated indices add
    up). Matches torch.index_add (grad_fn IndexAddBackward0)."""
    return _index_add(to_tensor(input), to_tensor(source), dim, _index_data("index_add", index), alpha)


@tensor_method("index_add_")
def index_add_(self, dim, index, source, *, alpha=1):
    """``self.index_add_(dim, index, source, alpha=1)``: add ``alpha * source``'s slices into self at ``index``
    along ``dim``, in place; returns self. Matches torch.Tensor.index_add_ (grad_fn IndexAddBackward0)."""

    idx = _index_data("index_add_", index)
    return apply(self, lambda s: _index_add(s, source, dim, idx, alpha), (source,))

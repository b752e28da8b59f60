"""``torch.nn.MultiheadAttention`` and the multi-head attention computation behind it, as PyTorch 2.13's
``torch/nn/modules/activation.py`` and ``torch.nn.functional.multi_head_attention_forward`` define them.

The computation is PyTorch's slow path written with the op table (linear, baddbmm, softmax, dropout, bmm,
matmul, views), so every gradient comes from the engine. PyTorch's fused paths (``_native_multi_head_attention``
in eval mode without grad, ``scaled_dot_product_attention`` when the weights are not asked for) compute the same
numbers up to float rounding; their dropout draws the same Bernoulli mask over the attention weights as
``F.dropout`` does, so a seeded training step matches PyTorch's too.
"""

from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor
from ...ops import REGISTRY as _OPS
from . import init
from .layers import Linear, _empty
from .module import Module
from .parameter import Parameter


def _op(name):
    return _OPS[name]


def _is_float(t: Tensor) -> bool:
    return t.data.dtype.kind == "f"


@contextlib.contextmanager
def factory_dtype(dtype):
    """Parameters made inside are of ``dtype`` (a module's ``dtype=`` argument; None: the default dtype), so
    that they are drawn in that dtype as PyTorch's factory arguments make them."""
    if dtype is None:
        yield
        return
    old = dtypes.get_default_dtype()
    dtypes.set_default_dtype(dtype)
    try:
        yield
    finally:
        dtypes.set_default_dtype(old)


# ------------------------------------------------------------------------------------------------ masks
def canonical_mask(mask, mask_name: str, other_type, other_name: str, target_type, check_other: bool = True):
    """PyTorch's ``F._canonical_mask``: a bool mask becomes a float mask of ``target_type`` (``-inf`` where True,
    0 elsewhere); a float mask is returned as it is; None stays None.

    Raises:
        AssertionError: for a mask that is neither bool nor floating (PyTorch's message).
    Warns:
        UserWarning: when ``check_other`` and the other mask's dtype differs (PyTorch's deprecation text).
    """
    if mask is None:
        return None
    is_float = _is_float(mask)
    if mask.data.dtype != np.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=2)
    if not is_float:
        mask = _op("zeros_like")(mask, dtype=target_type).masked_fill(mask, float("-inf"))
    return mask


def dtype_or_none(t):
    """PyTorch's ``F._none_or_dtype``: ``t.dtype``, or None for None."""
    return None if t is None else t.dtype


def square_subsequent_mask(sz: int, dtype=None) -> Tensor:
    """The causal mask of ``sz`` positions: ``-inf`` above the diagonal, 0 on and below it (float, of ``dtype``
    or the default dtype): ``torch.triu(torch.full((sz, sz), -inf), diagonal=1)``, as
    ``nn.Transformer.generate_square_subsequent_mask``."""
    return _op("triu")(_op("full")((sz, sz), float("-inf"), dtype=dtype), diagonal=1)


# -------------------------------------------------------------------------------------------- checks
def _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """PyTorch's ``_mha_shape_check``: whether the input is batched (3-D) or not (2-D), with its messages."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected_shape = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected_shape:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected_shape} but got "
                                         f"{attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _in_projection_packed(q, k, v, w, b):
    """q, k and v projected by the packed ``in_proj_weight`` (3E, E) and bias, as PyTorch's
    ``_in_projection_packed`` (one product for self-attention, two for encoder-decoder attention)."""
    E = q.size(-1)
    linear = _op("linear")
    if k is v:
        if q is k:
            proj = linear(q, w, b).unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        kv = linear(k, w_kv, b_kv).unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q, b_k, b_v):
    """q, k and v projected by separate weights (kdim/vdim differ from embed_dim), with PyTorch's checks."""
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, shape in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)), ("value", w_v, (Eq, Ev))):
        if tuple(w.shape) != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got {w.shape}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and tuple(b.shape) != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {b.shape}")
    linear = _op("linear")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _checked_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads):
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                               f"{(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _project(query, key, value, embed_dim, in_proj_weight, in_proj_bias, separate, q_w, k_w, v_w):
    if not separate:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        return _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                             f"{value.shape[:2]}")
    for name, w in (("q", q_w), ("k", k_w), ("v", v_w)):
        if w is None:
            raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
    b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
    return _in_projection(query, key, value, q_w, k_w, v_w, b_q, b_k, b_v)


def _sdpa(q, k, v, attn_mask, dropout_p, is_causal):
    """Scaled dot-product attention of (N, H, L, E) tensors as PyTorch's math kernel computes it: q and k each
    scaled by E**-1/4, softmax(q k^T + mask) (0 for a row the mask covers entirely, where the weights path
    gives NaN), dropout on the weights, times v."""
    scale = math.sqrt(1.0 / math.sqrt(q.size(-1)))
    w = _op("matmul")(q * scale, (k * scale).transpose(-2, -1))
    if is_causal:
        L, S = q.size(-2), k.size(-2)
        keep = _op("tril")(_op("ones")((L, S), dtype=dtypes.bool_))
        attn_mask = _op("zeros")((L, S), dtype=q.dtype).masked_fill(keep.logical_not(), float("-inf"))
    if attn_mask is not None:
        w = w + attn_mask
        dead = (w == float("-inf")).all(-1, keepdim=True)
        if bool(dead.any()):  # PyTorch's _safe_softmax: a row masked everywhere attends to nothing (weights 0)
            w = _op("softmax")(w.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)
        else:
            w = _op("softmax")(w, -1)
    else:
        w = _op("softmax")(w, -1)
    if dropout_p > 0.0:
        w = _op("dropout")(w, dropout_p, True)
    return _op("matmul")(w, v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention of ``query`` (L, N, E) or (L, E) over ``key`` (S, N, Ek) / ``value`` (S, N, Ev):
    ``(attn_output (L, N, E), attn_weights (N, L, S), or per head (N, H, L, S), or None)``. PyTorch's
    ``torch.nn.functional.multi_head_attention_forward``, step by step (canonical masks, in-projection,
    bias_k/bias_v, zero attention, padding mask, scaled scores, softmax, dropout, out-projection).

    Raises:
        AssertionError / RuntimeError: PyTorch's messages for bad shapes, dims or mask types.
    """
    is_batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask", dtype_or_none(attn_mask), "attn_mask",
                                      query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    q, k, v = _project(query, key, value, embed_dim, in_proj_weight, in_proj_bias, use_separate_proj_weight,
                       q_proj_weight, k_proj_weight, v_proj_weight)
    if attn_mask is not None:
        attn_mask = _checked_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads)
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _op("cat")([k, bias_k.repeat(1, bsz, 1)])
        v = _op("cat")([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else _op("pad")(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else _op("pad")(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _static(k, static_k, bsz * num_heads, head_dim, "k")
    v = _static(v, static_v, bsz * num_heads, head_dim, "v")
    if add_zero_attn:
        zeros = (bsz * num_heads, 1, head_dim)
        k = _op("cat")([k, _op("zeros")(zeros, dtype=k.dtype)], dim=1)
        v = _op("cat")([v, _op("zeros")(zeros, dtype=v.dtype)], dim=1)
        attn_mask = None if attn_mask is None else _op("pad")(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else _op("pad")(key_padding_mask, (0, 1))
    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(
            bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    shape = (tgt_len, bsz, embed_dim, num_heads, src_len, is_batched)
    if need_weights:
        return _attend_with_weights(q, k, v, attn_mask, dropout_p, is_causal, out_proj_weight, out_proj_bias,
                                    shape, average_attn_weights)
    return _attend(q, k, v, attn_mask, dropout_p, is_causal, out_proj_weight, out_proj_bias, shape), None


def _attend_with_weights(q, k, v, attn_mask, dropout_p, is_causal, out_w, out_b, shape, average):
    """Attention of (N*H, L, E) heads returning its weights: scaled scores (baddbmm onto the mask), softmax,
    dropout, bmm with v, out-projection; the weights (N, L, S) averaged over heads, or (N, H, L, S)."""
    tgt_len, bsz, embed_dim, num_heads, src_len, is_batched = shape
    q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
    if is_causal and attn_mask is None:
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    if attn_mask is not None:
        weights = _op("baddbmm")(attn_mask, q_scaled, k.transpose(-2, -1))
    else:
        weights = _op("bmm")(q_scaled, k.transpose(-2, -1))
    weights = _op("softmax")(weights, -1)
    if dropout_p > 0.0:
        weights = _op("dropout")(weights, dropout_p, True)
    out = _op("bmm")(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = _op("linear")(out, out_w, out_b)
    out = out.view(tgt_len, bsz, out.size(1))
    weights = weights.view(bsz, num_heads, tgt_len, src_len)
    if average:
        weights = weights.mean(dim=1)
    if not is_batched:
        out, weights = out.squeeze(1), weights.squeeze(0)
    return out, weights


def _attend(q, k, v, attn_mask, dropout_p, is_causal, out_w, out_b, shape):
    """Attention of (N*H, L, E) heads without its weights, as PyTorch hands it to scaled_dot_product_attention
    on (N, H, L, E) tensors, then the out-projection."""
    tgt_len, bsz, embed_dim, num_heads, src_len, is_batched = shape
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    head_dim = embed_dim // num_heads
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = _sdpa(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = _op("linear")(out, out_w, out_b)
    out = out.view(tgt_len, bsz, out.size(1))
    return out.squeeze(1) if not is_batched else out


def _static(t, static, rows: int, head_dim: int, name: str):
    if static is None:
        return t.view(t.shape[0], rows, head_dim).transpose(0, 1)
    if static.size(0) != rows:
        raise AssertionError(f"expecting static_{name}.size(0) of {rows}, but got {static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got {static.size(2)}")
    return static


# ------------------------------------------------------------------------------------------- modules
class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's ``torch.nn.modules.linear.NonDynamicallyQuantizableLinear``: a Linear (the out-projection of
    MultiheadAttention), named so that quantization leaves it alone; it computes as Linear."""

    _torch_module = "torch.nn.modules.linear"


class MultiheadAttention(Module):
    """``nn.MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
    add_zero_attn=False, kdim=None, vdim=None, batch_first=False)``: PyTorch 2.13's module. Parameters in
    PyTorch's order: ``in_proj_weight`` (3E, E) (or ``q/k/v_proj_weight`` when kdim/vdim differ from E),
    ``in_proj_bias`` (3E), ``out_proj`` (a Linear, drawn at construction), ``bias_k``/``bias_v`` (1, 1, E);
    then ``_reset_parameters`` draws xavier_uniform_ for the in-projection, zeroes both biases and draws
    xavier_normal_ for bias_k/bias_v. ``forward(query, key, value, key_padding_mask=None, need_weights=True,
    attn_mask=None, average_attn_weights=True, is_causal=False)`` returns ``(attn_output, attn_weights or
    None)`` (:func:`multi_head_attention_forward`).

    Raises:
        ValueError / AssertionError: PyTorch's messages for non-positive sizes or an embed_dim not divisible by
            num_heads.
    """

    _torch_module = "torch.nn.modules.activation"
    program_attributes = Module.program_attributes + ("merge_masks",)

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        with factory_dtype(dtype):
            self._build(embed_dim, num_heads, dropout, bias, add_bias_kv, add_zero_attn, kdim, vdim, batch_first)

    def _build(self, embed_dim, num_heads, dropout, bias, add_bias_kv, add_zero_attn, kdim, vdim, batch_first):
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        object.__setattr__(self, "_qkv_same_embed_dim", self.kdim == embed_dim and self.vdim == embed_dim)
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_empty(embed_dim, embed_dim))
            self.k_proj_weight = Parameter(_empty(embed_dim, self.kdim))
            self.v_proj_weight = Parameter(_empty(embed_dim, self.vdim))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_empty(3 * embed_dim, embed_dim))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_empty(3 * embed_dim))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias)
        if add_bias_kv:
            self.bias_k = Parameter(_empty(1, 1, embed_dim))
            self.bias_v = Parameter(_empty(1, 1, embed_dim))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        is_batched = query.dim() == 3
        key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask", dtype_or_none(attn_mask),
                                          "attn_mask", query.dtype)
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = {} if self._qkv_same_embed_dim else dict(
            use_separate_proj_weight=True, q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight)
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal, **separate)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """PyTorch's ``merge_masks``: ``(merged mask, mask type)``, type 1 for a key padding mask alone, 2 when
        an attention mask is given (both expanded to (N, H, L, S) and added), None for no mask."""
        mask_type = merged = None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                merged = attn_mask.view(1, 1, seq_len, seq_len).expand(batch_size, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.view(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type


#: The classes of this module that ``torch.nn`` exposes, by name.
CLASSES = {"MultiheadAttention": MultiheadAttention}

"""``torch.nn``'s transformer modules: ``TransformerEncoderLayer``, ``TransformerDecoderLayer``,
``TransformerEncoder``, ``TransformerDecoder`` and ``Transformer``, as PyTorch 2.13's
``torch/nn/modules/transformer.py`` defines them (the same submodules, in the same order, so that parameters
are drawn from the seeded generator in PyTorch's order and ``print(model)`` shows PyTorch's tree), computing
through :class:`~gradcli.api.nn.attention.MultiheadAttention`, Linear, Dropout and LayerNorm.

PyTorch's eval-mode fast paths (``_transformer_encoder_layer_fwd``, the nested-tensor encoder) compute the same
numbers as the layers below up to float rounding; the one visible difference, that the nested-tensor encoder
gives zeros at the padded positions of its input, is reproduced (:meth:`TransformerEncoder.forward`).
"""

from __future__ import annotations

import warnings

from ...engine import autograd
from ...engine.tensor import Tensor, is_parameter, mark_parameter
from ...ops import REGISTRY as _OPS
from . import init
from .attention import MultiheadAttention, canonical_mask, dtype_or_none, factory_dtype, square_subsequent_mask
from .extra import LayerNorm
from .layers import GELU, Dropout, Linear, ModuleList, ReLU
from .module import Module, core_of



def _op(name):
    return _OPS[name]


def _activation_fn(activation):
    """``"relu"``/``"gelu"`` as F.relu/F.gelu; any other value (a function or a module) as it is.

    Raises:
        RuntimeError: for another string (PyTorch's message).
    """
    if isinstance(activation, str):
        if activation == "relu":
            return _op("relu")
        if activation == "gelu":
            return _op("gelu")
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


def _relu_or_gelu(activation) -> int:
    core = core_of(activation)
    if activation is _op("relu") or isinstance(core, ReLU):
        return 1
    if activation is _op("gelu") or isinstance(core, GELU):
        return 2
    return 0


def _apply_activation(layer: Module, x):
    sub = layer.__dict__["_modules"].get("activation")
    return sub(x) if sub is not None else layer.__dict__["activation"](x)


def _clone_tensor(t, memo: dict):
    if t is None:
        return None
    if id(t) not in memo:
        copy = Tensor(t.data.copy(), t.requires_grad)
        memo[id(t)] = mark_parameter(copy) if is_parameter(t) else copy
        if t.grad is not None:
            memo[id(t)].grad = Tensor(t.grad.data.copy())
    return memo[id(t)]


def clone_module(module: Module, memo: dict | None = None) -> Module:
    """A deep copy of a built-in module (``copy.deepcopy`` as PyTorch's ``_get_clones`` uses it): new
    parameters and buffers with the same values, copies of the submodules, the other attributes shared (numbers,
    strings, functions).

    Raises:
        NotImplementedError: for a module of a program's class (gradcli cannot copy a program object).
    """
    memo = {} if memo is None else memo
    if id(module) in memo:
        return memo[id(module)]
    if module.__dict__.get("_owner") is not None:
        raise NotImplementedError(f"gradcli cannot deep-copy a module of a program's class ({module._get_name()}); "
                                  "TransformerEncoder and TransformerDecoder copy their layer, so pass a built-in "
                                  "nn.TransformerEncoderLayer or nn.TransformerDecoderLayer")
    new = object.__new__(type(module))
    memo[id(module)] = new
    d = new.__dict__
    d.update(module.__dict__)
    d["_parameters"] = {k: _clone_tensor(v, memo) for k, v in module.__dict__["_parameters"].items()}
    d["_buffers"] = {k: _clone_tensor(v, memo) for k, v in module.__dict__["_buffers"].items()}
    d["_non_persistent_buffers"] = set(module.__dict__["_non_persistent_buffers"])
    d["_modules"] = {k: None if v is None else clone_module(v, memo) for k, v in module.__dict__["_modules"].items()}
    for hooks in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks"):
        d[hooks] = dict(module.__dict__[hooks])
    return new


def _get_clones(module, n: int) -> ModuleList:
    core = core_of(module)
    return ModuleList([clone_module(core) for _ in range(n)])


def _seq_len(src, batch_first: bool) -> int:
    size = src.size()
    return size[0] if len(size) == 2 else size[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None) -> bool:
    """PyTorch's ``_detect_is_causal_mask``: ``is_causal`` when given, else whether ``mask`` equals the causal
    mask of ``size`` positions."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = square_subsequent_mask(sz, dtype=mask.dtype)
        make_causal = tuple(mask.size()) == tuple(causal.size()) and bool((mask == causal).all())
    return make_causal


# ------------------------------------------------------------------------------------------- layers
def _layer_init(name: str):
    """The ``__init__`` of TransformerEncoderLayer and TransformerDecoderLayer (``name``): PyTorch's signature
    (device accepted and unused), the submodules made by the class's ``_build`` under ``dtype`` as the factory
    dtype. Its ``__qualname__`` is ``<name>.__init__``, so that Python's errors for wrong arguments name the
    class, as PyTorch's do."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        Module.__init__(self)
        with factory_dtype(dtype):
            self._build(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                        norm_first, bias)

    __init__.__qualname__ = f"{name}.__init__"
    return __init__


def _build_feed_forward(layer: Module, d_model, dim_feedforward, dropout, layer_norm_eps, norm_first, bias,
                        cross_attention: bool) -> None:
    """The submodules both layers make after their attention, in PyTorch's order (so that parameters are drawn
    and printed as PyTorch's): ``linear1``, ``dropout``, ``linear2``, the ``norm_first`` flag, then ``norm1``,
    ``norm2`` and ``dropout1``, ``dropout2``, one of each per residual block (with ``cross_attention``, the
    decoder's, a third block: ``norm3`` and ``dropout3``)."""
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias)
    layer.norm_first = norm_first
    layer.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
    layer.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
    if cross_attention:
        layer.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
    layer.dropout1 = Dropout(dropout)
    layer.dropout2 = Dropout(dropout)
    if cross_attention:
        layer.dropout3 = Dropout(dropout)


def _self_attention_block(self, x, attn_mask, key_padding_mask, is_causal=False):
    """Both layers' ``_sa_block``: self-attention (no weights returned), then ``dropout1``."""
    x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                       is_causal=is_causal)[0]
    return self.dropout1(x)


def _feed_forward_block(layer: Module, x, last_dropout: Module):
    """Both layers' ``_ff_block``: linear2(dropout(activation(linear1(x)))), then the block's own dropout."""
    x = layer.linear2(layer.dropout(_apply_activation(layer, layer.linear1(x))))
    return last_dropout(x)


class TransformerEncoderLayer(Module):
    """``nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
    layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True)``: self-attention then a feed-forward
    block, each with dropout and a residual connection, LayerNorm after each (or before, ``norm_first``).
    ``forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)``; src (S, N, E), (N, S, E) with
    batch_first, or (S, E).

    Raises:
        RuntimeError: for an activation string other than "relu"/"gelu" (PyTorch's message).
    """

    _torch_module = "torch.nn.modules.transformer"

    __init__ = _layer_init("TransformerEncoderLayer")

    def _build(self, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
               bias):
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first)
        _build_feed_forward(self, d_model, dim_feedforward, dropout, layer_norm_eps, norm_first, bias, False)
        activation = _activation_fn(activation)
        self.activation_relu_or_gelu = _relu_or_gelu(activation)
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                              dtype_or_none(src_mask), "src_mask", src.dtype)
        src_mask = canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    _sa_block = _self_attention_block

    def _ff_block(self, x):
        return _feed_forward_block(self, x, self.dropout2)


class TransformerDecoderLayer(Module):
    """``nn.TransformerDecoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
    layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True)``: self-attention, attention over the
    encoder's output (``memory``), then a feed-forward block, each with dropout, a residual connection and a
    LayerNorm (after, or before with ``norm_first``). ``forward(tgt, memory, tgt_mask=None, memory_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False)``.

    Raises:
        RuntimeError: for an activation string other than "relu"/"gelu" (PyTorch's message).
    """

    _torch_module = "torch.nn.modules.transformer"

    __init__ = _layer_init("TransformerDecoderLayer")

    def _build(self, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
               bias):
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 bias=bias)
        _build_feed_forward(self, d_model, dim_feedforward, dropout, layer_norm_eps, norm_first, bias, True)
        self.activation = _activation_fn(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    _sa_block = _self_attention_block

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return _feed_forward_block(self, x, self.dropout3)


# ------------------------------------------------------------------------------------------- stacks
def _nested_tensor_refusal(layer) -> str:
    """Why PyTorch's TransformerEncoder cannot use nested tensors with ``layer`` ("" when it can)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """``nn.TransformerEncoder(encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
    mask_check=True)``: ``num_layers`` deep copies of ``encoder_layer`` (a ModuleList ``layers``), applied in
    turn, then ``norm`` if given. ``forward(src, mask=None, src_key_padding_mask=None, is_causal=None)``.

    Warns:
        UserWarning: PyTorch's, when enable_nested_tensor is asked for and the layer does not allow it.
    """

    _torch_module = "torch.nn.modules.transformer"

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _nested_tensor_refusal(core_of(encoder_layer))
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = canonical_mask(src_key_padding_mask, "src_key_padding_mask", dtype_or_none(mask),
                                              "mask", src.dtype)
        mask = canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        first = self.layers[0]
        nested = self._pads_with_zeros(src, mask, src_key_padding_mask, first)
        batch_first = first.self_attn.batch_first
        is_causal = _detect_is_causal_mask(mask, is_causal, _seq_len(src, batch_first))
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if nested:
            padded = (src_key_padding_mask != 0).unsqueeze(-1)
            output = output.masked_fill(padded, 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _pads_with_zeros(self, src, mask, key_padding_mask, first) -> bool:
        """Whether PyTorch would run this call on nested tensors (eval mode, batched, a left-aligned padding mask
        and no attention mask, nothing requiring grad): its output is then 0 at the padded positions."""
        if not self.use_nested_tensor or first.training or src.dim() != 3 or key_padding_mask is None:
            return False
        if mask is not None:
            return False
        keep = (key_padding_mask == 0).data
        if self.mask_check and not bool((keep[:, 1:] <= keep[:, :-1]).all()):
            return False
        attn, norm1, norm2 = first.self_attn, first.norm1, first.norm2
        args = (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight, attn.out_proj.bias,
                norm1.weight, norm1.bias, norm2.weight, norm2.bias, first.linear1.weight, first.linear1.bias,
                first.linear2.weight, first.linear2.bias)
        return not (autograd.is_grad_enabled() and any(a is not None and a.requires_grad for a in args))


class TransformerDecoder(Module):
    """``nn.TransformerDecoder(decoder_layer, num_layers, norm=None)``: ``num_layers`` deep copies of
    ``decoder_layer`` applied in turn over (tgt, memory), then ``norm`` if given. ``forward(tgt, memory,
    tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    tgt_is_causal=None, memory_is_causal=False)``."""

    _torch_module = "torch.nn.modules.transformer"

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        seq_len = _seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """``nn.Transformer(d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
    dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
    batch_first=False, norm_first=False, bias=True)``: an encoder (TransformerEncoder with a final LayerNorm)
    and a decoder (TransformerDecoder with a final LayerNorm); after construction every parameter of two or
    more dims is drawn again by xavier_uniform_, as PyTorch's ``_reset_parameters``. ``forward(src, tgt,
    src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None, memory_is_causal=False)``.

    Raises:
        RuntimeError: PyTorch's messages when src and tgt differ in batch size or their features are not d_model.
    """

    _torch_module = "torch.nn.modules.transformer"
    program_attributes = Module.program_attributes + ("generate_square_subsequent_mask",)
    #: What a program may read from the class itself (``nn.Transformer.generate_square_subsequent_mask(sz)``).
    static_attributes = ("generate_square_subsequent_mask",)

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        with factory_dtype(dtype):
            self._build(d_model, nhead, num_encoder_layers, num_decoder_layers, dim_feedforward, dropout,
                        activation, custom_encoder, custom_decoder, layer_norm_eps, batch_first, norm_first, bias)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def _build(self, d_model, nhead, num_encoder_layers, num_decoder_layers, dim_feedforward, dropout, activation,
               custom_encoder, custom_decoder, layer_norm_eps, batch_first, norm_first, bias):
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias)
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, norm)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        if is_batched and src.size(0 if self.batch_first else 1) != tgt.size(0 if self.batch_first else 1):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """The causal mask of ``sz`` positions: float ``-inf`` above the diagonal, 0 elsewhere."""
        return square_subsequent_mask(sz, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)


#: The classes of this module that ``torch.nn`` exposes, by name (added to gradcli.api.nn.CLASSES).
CLASSES = {c.__name__: c for c in (MultiheadAttention, TransformerEncoderLayer, TransformerDecoderLayer,
                                   TransformerEncoder, TransformerDecoder, Transformer)}

__all__ = sorted(CLASSES)

"""nn.MultiheadAttention and the transformer modules (gradcli/api/nn/attention.py, gradcli/api/nn/transformer.py)
in programs as PyTorch users write them: each program is run by Python with torch and by ``gradcli run``, after
the same ``torch.manual_seed``, and the outputs must agree: attention outputs and weights, the gradient of every
parameter and input (float32 printed to 4 decimals and compared to rtol 1e-4, float64 to 12 decimals), training
mode with dropout, ``print(model)`` and PyTorch's error messages. Sizes are small so that the file runs in
seconds."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from helpers import HANG_TIMEOUT, assert_printed_alike, python_and_gradcli_stdout

#: Printing helpers every program starts with: values as rounded lists, so that a gradient that is zero up to
#: float rounding (the key bias of an attention) does not change how a whole tensor is printed.
PRELUDE = """
import torch
from torch import nn
import torch.nn.functional as F

def show(name, t, digits=4):
    if t is None:
        print(name, None)
    else:
        print(name, tuple(t.shape), [round(v, digits) + 0.0 for v in t.detach().flatten().tolist()])

def grads(module, *inputs, digits=4):
    for n, p in module.named_parameters():
        show(n + '.grad', p.grad, digits)
    for i, x in enumerate(inputs):
        show('input%d.grad' % i, x.grad, digits)

def weighted(t):
    return (t * torch.arange(t.numel(), dtype=t.dtype).reshape(t.shape).sin()).sum()
"""

MHA = PRELUDE + """
cases = [
    (dict(), dict(), ((3, 2, 4), (5, 2, 4), (5, 2, 4))),
    (dict(kdim=3, vdim=5), dict(average_attn_weights=False), ((3, 2, 4), (5, 2, 3), (5, 2, 5))),
    (dict(batch_first=True), dict(need_weights=False), ((2, 3, 4), (2, 5, 4), (2, 5, 4))),
    (dict(bias=False, add_bias_kv=True, add_zero_attn=True), dict(), ((3, 2, 4), (5, 2, 4), (5, 2, 4))),
    (dict(), dict(), ((3, 4), (5, 4), (5, 4))),
]
for ctor, call, shapes in cases:
    torch.manual_seed(1)
    m = nn.MultiheadAttention(4, 2, **ctor)
    print(m, [(n, tuple(p.shape)) for n, p in m.named_parameters()])
    q, k, v = (torch.randn(*s, requires_grad=True) for s in shapes)
    out, w = m(q, k, v, **call)
    show('out', out)
    show('weights', w)
    print(out.grad_fn.name(), None if w is None else w.grad_fn.name())
    (weighted(out) + (0 if w is None else (w * w).sum())).backward()
    grads(m, q, k, v)

# self-attention (query, key and value the same tensor) with masks
torch.manual_seed(2)
m = nn.MultiheadAttention(4, 2)
x = torch.randn(4, 3, 4, requires_grad=True)
causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
kpm = torch.tensor([[False, False, False, False], [False, False, True, True], [False, True, True, True]])
for kw in [dict(attn_mask=causal), dict(key_padding_mask=kpm), dict(attn_mask=causal, key_padding_mask=kpm),
           dict(attn_mask=torch.randn(4, 4)), dict(attn_mask=torch.randn(6, 4, 4), need_weights=False),
           dict(key_padding_mask=kpm, need_weights=False), dict(attn_mask=causal, is_causal=True, need_weights=False),
           dict(attn_mask=nn.Transformer.generate_square_subsequent_mask(4), is_causal=True)]:
    x.grad = None
    out, w = m(x, x, x, **kw)
    show('masked out', out)
    show('masked weights', w)
    out.pow(2).sum().backward()
    show('x.grad', x.grad)

# a sequence whose keys are all padding: NaN when the weights are asked for, 0 through
# scaled_dot_product_attention (its safe softmax), and the other sequence's gradients unaffected
y = torch.randn(3, 2, 4, requires_grad=True)
for need in (True, False):
    y.grad = None
    out, w = m(y, y, y, key_padding_mask=torch.tensor([[True, True, True], [False, True, False]]), need_weights=need)
    show('all padding', out)
    show('all padding weights', w)
    weighted(out[:, 1]).backward()
    show('y.grad', y.grad)

# training with dropout: on the weights when they are asked for, inside scaled_dot_product_attention otherwise
torch.manual_seed(3)
m = nn.MultiheadAttention(4, 2, dropout=0.3)
for need in (True, False):
    out, w = m(x, x, x, need_weights=need)
    show('dropout out', out)
    show('dropout weights', w)
m.eval()
show('eval out', m(x, x, x)[0])
"""

MHA_FLOAT64 = PRELUDE + """
torch.manual_seed(4)
m = nn.MultiheadAttention(6, 3, kdim=2, vdim=3, dtype=torch.float64)
q = torch.randn(2, 2, 6, dtype=torch.float64, requires_grad=True)
k = torch.randn(3, 2, 2, dtype=torch.float64, requires_grad=True)
v = torch.randn(3, 2, 3, dtype=torch.float64, requires_grad=True)
out, w = m(q, k, v, attn_mask=torch.tensor([[False, True, False], [False, False, False]]))
show('out', out, 12)
show('weights', w, 12)
(weighted(out) + weighted(w)).backward()
grads(m, q, k, v, digits=12)
"""

LAYERS = PRELUDE + """
torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
print(layer)
src = torch.randn(5, 3, 8, requires_grad=True)
out = layer(src)                                    # training mode: dropout 0.1 everywhere
show('encoder out', out)
weighted(out).backward()
grads(layer, src)
layer.eval()
show('eval causal', layer(src, src_mask=nn.Transformer.generate_square_subsequent_mask(5), is_causal=True))

g = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.2, activation="gelu", norm_first=True, batch_first=True)
x = torch.randn(3, 5, 8, requires_grad=True)
kpm = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
y = g(x, src_key_padding_mask=kpm)
show('norm_first gelu batch_first', y)
y.pow(2).sum().backward()
grads(g, x)

h = nn.TransformerEncoderLayer(8, 4, 16, activation=nn.GELU(), bias=False, layer_norm_eps=1e-3)
print(h)
show('module activation, no bias', h(torch.randn(2, 8)))

dec = nn.TransformerDecoderLayer(8, 2, 16, activation=F.gelu)
print(dec)
mem = torch.randn(4, 3, 8, requires_grad=True)
tgt = torch.randn(5, 3, 8, requires_grad=True)
o = dec(tgt, mem, tgt_mask=nn.Transformer.generate_square_subsequent_mask(5), tgt_is_causal=True,
        memory_key_padding_mask=torch.tensor([[False] * 4, [False, False, True, True], [False] * 3 + [True]]))
show('decoder out', o)
weighted(o).backward()
grads(dec, tgt, mem)
dec2 = nn.TransformerDecoderLayer(8, 2, 16, norm_first=True, batch_first=True, dropout=0.0)
o2 = dec2(tgt.transpose(0, 1), mem.transpose(0, 1))
show('decoder norm_first', o2)
"""

TRANSFORMER = PRELUDE + """
torch.manual_seed(0)
model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16)
print(model)
print([(n, tuple(p.shape)) for n, p in model.named_parameters()][:6], len(list(model.parameters())))
show('encoder layer 1 in_proj_weight', model.encoder.layers[1].self_attn.in_proj_weight)
src = torch.randn(6, 2, 8, requires_grad=True)
tgt = torch.randn(4, 2, 8, requires_grad=True)
tgt_mask = model.generate_square_subsequent_mask(4)
out = model(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=torch.tensor([[False] * 6, [False] * 4 + [True] * 2]))
show('out', out)
print(out.grad_fn.name())
weighted(out).backward()
grads(model, src, tgt)

# a few training steps
torch.manual_seed(1)
model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16,
                       batch_first=True, norm_first=True, activation="gelu")
opt = torch.optim.Adam(model.parameters(), lr=0.01)
src, tgt, target = torch.randn(2, 5, 8), torch.randn(2, 3, 8), torch.randn(2, 3, 8)
for step in range(3):
    opt.zero_grad()
    loss = F.mse_loss(model(src, tgt, tgt_is_causal=True, tgt_mask=nn.Transformer.generate_square_subsequent_mask(3)),
                      target)
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 4))
model.eval()
with torch.no_grad():
    show('eval', model(src, tgt))
"""

TRANSFORMER_FLOAT64 = PRELUDE + """
torch.manual_seed(5)
model = nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=2, dim_feedforward=6,
                       dropout=0.25, dtype=torch.float64)
src = torch.randn(3, 2, 4, dtype=torch.float64, requires_grad=True)
tgt = torch.randn(2, 2, 4, dtype=torch.float64, requires_grad=True)
out = model(src, tgt, memory_mask=torch.tensor([[0.0, -1.0, 0.5], [0.0, 0.0, -2.0]], dtype=torch.float64))
show('out', out, 12)
weighted(out).backward()
grads(model, src, tgt, digits=12)
"""

ENCODER_STACKS = PRELUDE + """
torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(4, 2, 8, batch_first=True)
enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(4))
plain = nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
print(plain)
print(enc.use_nested_tensor, plain.use_nested_tensor)
print(enc.layers[0].self_attn.in_proj_weight is layer.self_attn.in_proj_weight)
x = torch.randn(2, 3, 4)
kpm = torch.tensor([[False, False, True], [False, False, False]])
enc.eval()
plain.eval()
with torch.no_grad():
    show('nested tensors: zeros at the padding', enc(x, src_key_padding_mask=kpm))
    show('per-layer fast path', plain(x, src_key_padding_mask=kpm))
    show('padding not left-aligned', enc(x, src_key_padding_mask=torch.tensor([[True, False, False], [False] * 3])))
show('with grad', enc(x, src_key_padding_mask=kpm))
dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 8), num_layers=2)
print(dec.num_layers, len(dec.layers), dec.norm)
show('decoder stack', dec(torch.randn(3, 2, 4), torch.randn(5, 2, 4)))

# dropout's mask follows the input's memory order, as PyTorch's empty_like(input).bernoulli_ (a batch_first
# attention output is a transposed view)
x = torch.arange(1., 25.).reshape(2, 3, 4)
for view in (x.transpose(0, 1), x.permute(2, 0, 1), x[:, 1:], x.transpose(0, 2)[::2], torch.arange(4.).expand(3, 4)):
    torch.manual_seed(7)
    show('dropout of a view', F.dropout(view, 0.5))
"""

ERRORS = PRELUDE + """
def attempt(label, f):
    try:
        f()
        print(label, 'no error')
    except Exception as e:
        print(label, type(e).__name__, str(e))

torch.manual_seed(0)
m = nn.MultiheadAttention(4, 2)
x = torch.randn(3, 2, 4)
attempt('heads', lambda: nn.MultiheadAttention(5, 2))
attempt('zero', lambda: nn.MultiheadAttention(0, 2))
attempt('1d query', lambda: m(torch.randn(4), torch.randn(4), torch.randn(4)))
attempt('key dims', lambda: m(x, torch.randn(3, 4), torch.randn(3, 4)))
attempt('unbatched key dims', lambda: m(torch.randn(3, 4), x, x))
attempt('kpm dims', lambda: m(x, x, x, key_padding_mask=torch.zeros(3, dtype=torch.bool)))
attempt('kpm shape', lambda: m(x, x, x, key_padding_mask=torch.zeros(2, 5, dtype=torch.bool)))
attempt('mask dims', lambda: m(x, x, x, attn_mask=torch.zeros(3, dtype=torch.bool)))
attempt('mask 2d shape', lambda: m(x, x, x, attn_mask=torch.zeros(3, 4, dtype=torch.bool)))
attempt('mask 3d shape', lambda: m(x, x, x, attn_mask=torch.zeros(2, 3, 3)))
attempt('mask int', lambda: m(x, x, x, attn_mask=torch.zeros(3, 3, dtype=torch.long)))
attempt('embed', lambda: m(torch.randn(3, 2, 5), torch.randn(3, 2, 5), torch.randn(3, 2, 5)))
attempt('kv shape', lambda: m(x, x, torch.randn(4, 2, 4)))
attempt('is_causal', lambda: m(x, x, x, is_causal=True))
attempt('unbatched 3d mask', lambda: m(torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 4),
                                       attn_mask=torch.zeros(3, 3, 3)))
attempt('activation', lambda: nn.TransformerEncoderLayer(4, 2, 8, activation='tanh'))
t = nn.Transformer(4, 2, 1, 1, 8)
attempt('batch', lambda: t(torch.randn(3, 2, 4), torch.randn(3, 1, 4)))
attempt('features', lambda: t(torch.randn(3, 2, 4), torch.randn(3, 2, 5)))
print(nn.Transformer.generate_square_subsequent_mask(3))
print(t.generate_square_subsequent_mask(4, dtype=torch.float64))
print(t.d_model, t.nhead, t.batch_first, t.encoder.num_layers, t.encoder.layers[0].norm_first)
print(t.decoder.layers[0].activation is F.relu, t.encoder.layers[0].activation_relu_or_gelu)
print(type(t.encoder.layers[0].self_attn.out_proj), type(t), isinstance(t.encoder, nn.TransformerEncoder))
print(nn.MultiheadAttention, nn.TransformerDecoderLayer)
"""


def _agree(tmp_path, name, program, rtol=1e-4):
    want, got = python_and_gradcli_stdout(tmp_path, name, program)
    assert_printed_alike(got, want, rtol)


def test_multihead_attention(tmp_path):
    _agree(tmp_path, "mha", MHA)


def test_multihead_attention_float64(tmp_path):
    _agree(tmp_path, "mha64", MHA_FLOAT64, rtol=1e-10)


def test_encoder_and_decoder_layers(tmp_path):
    _agree(tmp_path, "layers", LAYERS)


def test_transformer(tmp_path):
    _agree(tmp_path, "transformer", TRANSFORMER)


def test_transformer_float64_with_dropout(tmp_path):
    _agree(tmp_path, "transformer64", TRANSFORMER_FLOAT64, rtol=1e-10)


def test_encoder_and_decoder_stacks(tmp_path):
    _agree(tmp_path, "stacks", ENCODER_STACKS)


def test_errors_masks_and_attributes(tmp_path):
    _agree(tmp_path, "errors", ERRORS)


def test_stacks_of_a_program_class_are_refused(tmp_path):
    """TransformerEncoder deep-copies its layer; gradcli cannot copy a program's object, and says so."""
    path = tmp_path / "subclass.py"
    path.write_text("import torch\nfrom torch import nn\nclass L(nn.TransformerEncoderLayer):\n    pass\n"
                    "enc = nn.TransformerEncoder(L(4, 2, 8), 2)\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True,
                          timeout=HANG_TIMEOUT)
    assert proc.returncode == 1, proc.stderr
    assert "NotImplementedError: gradcli cannot deep-copy a module of a program's class (L)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_library_mha_matches_torch_functional():
    """The library function against torch.nn.functional.multi_head_attention_forward, with separate projection
    weights and static keys (arguments the modules never pass)."""
    torch = pytest.importorskip("torch")
    import gradcli as G
    from gradcli.api.nn.attention import multi_head_attention_forward

    rng = np.random.default_rng(0)
    arrays = {name: rng.standard_normal(shape) for name, shape in [
        ("q", (3, 2, 4)), ("k", (5, 2, 3)), ("v", (5, 2, 3)), ("wq", (4, 4)), ("wk", (4, 3)), ("wv", (4, 3)),
        ("b", (12,)), ("wo", (4, 4)), ("bo", (4,)), ("sv", (4, 5, 2))]}
    results = []
    for lib in (torch, G):
        t = {n: lib.tensor(a, requires_grad=True) for n, a in arrays.items()}
        fn = torch.nn.functional.multi_head_attention_forward if lib is torch else multi_head_attention_forward
        out, w = fn(t["q"], t["k"], t["v"], 4, 2, None, t["b"], None, None, False, 0.0, t["wo"], t["bo"],
                    use_separate_proj_weight=True, q_proj_weight=t["wq"], k_proj_weight=t["wk"],
                    v_proj_weight=t["wv"], static_v=t["sv"], average_attn_weights=False)
        (out.sum() + (w * w).sum()).backward()
        grads = [None if t[n].grad is None else t[n].grad.numpy() for n in sorted(t)]
        results.append([out.detach().numpy(), w.detach().numpy()] + grads)
    assert [a is None for a in results[0]] == [b is None for b in results[1]]  # v's weights unused: static_v
    for a, b in zip(*results):
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)

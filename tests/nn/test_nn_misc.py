"""The channel-wise and alpha dropouts, RReLU, Gumbel-softmax, LocalResponseNorm, native_channel_shuffle, the CTC,
multi-class margin, multi-label margin and linear cross-entropy losses, and embedding_bag, in programs as PyTorch
users write them: each program is run by Python with torch and by ``gradcli run``, and the outputs must agree
(numbers to rtol 1e-4; masks and random slopes after the same ``torch.manual_seed`` exactly).

The op-level checks (gradcheck, values and gradients against torch in float32 and float64) are the NN_MISC entries
of tests/ops/opinfo.py."""

from __future__ import annotations

from helpers import assert_printed_alike, python_and_gradcli_stdout

DROPOUTS = """
import torch
from torch import nn
import torch.nn.functional as F
torch.manual_seed(0)
for m, shape in [(nn.Dropout1d(0.4), (3, 4, 5)), (nn.Dropout1d(0.5), (4, 6)), (nn.Dropout2d(0.3), (2, 5, 3, 2)),
                 (nn.Dropout3d(p=0.5), (2, 4, 2, 2, 1)), (nn.Dropout3d(0.5), (4, 2, 2, 1)),
                 (nn.AlphaDropout(0.2), (6, 7)), (nn.FeatureAlphaDropout(0.3), (3, 5, 2))]:
    x = torch.randn(*shape, requires_grad=True)
    y = m(x)
    (y * torch.arange(y.numel()).reshape(y.shape)).sum().backward()
    print(m, y.grad_fn.name(), y, x.grad)
    m.eval()
    print(m(x) is x, m.training)
x = torch.randn(2, 3, 4)
print(F.dropout2d(x, 1.0), F.feature_alpha_dropout(x, 0.5), F.alpha_dropout(x, 0.0, True))
print(torch.feature_dropout(x, 0.5, True), torch.alpha_dropout(x, 0.5, True))
for bad in [lambda: F.dropout1d(torch.randn(2, 3, 4, 5)), lambda: nn.Dropout2d(1.5)]:
    try:
        bad()
    except (RuntimeError, ValueError) as e:
        print(type(e).__name__, e)
"""

RRELU_GUMBEL = """
import torch
from torch import nn
import torch.nn.functional as F
torch.manual_seed(1)
m = nn.RReLU(0.1, 0.3)
x = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
y = m(x)
y.sum().backward(retain_graph=True)
print(m, y, x.grad, y.grad_fn.name())
print(y.grad_fn._saved_noise, y.grad_fn._saved_lower, y.grad_fn._saved_upper, y.grad_fn._saved_training)
m.eval()
x.grad = None
y = m(x)
y.sum().backward()
print(y, x.grad, nn.RReLU(inplace=True))
print(F.rrelu(torch.randn(6), training=True), torch.rrelu(torch.randn(3, 2), 0.2, 0.4, True))
logits = torch.randn(5, 6, requires_grad=True)
s = F.gumbel_softmax(logits, tau=0.5)
h = F.gumbel_softmax(logits, hard=True, dim=0)
(s * torch.arange(30.).reshape(5, 6)).sum().backward()
print(s, h, logits.grad, s.grad_fn.name(), h.grad_fn.name())
"""

NORMS = """
import torch
from torch import nn
import torch.nn.functional as F
torch.manual_seed(2)
lrn = nn.LocalResponseNorm(3, alpha=0.5, beta=0.6, k=1.5)
for shape in [(2, 5, 4), (2, 4, 3, 3), (1, 3, 2, 2, 2)]:
    x = torch.randn(*shape, requires_grad=True)
    y = lrn(x)
    (y * y).sum().backward()
    print(lrn, y.grad_fn.name(), y, x.grad)
print(F.local_response_norm(torch.randn(1, 6, 2), 2))
x = torch.arange(16.).reshape(1, 4, 2, 2)
print(F.native_channel_shuffle(x, 2), F.native_channel_shuffle(x, 2).equal(F.channel_shuffle(x, 2)))
y = F.native_channel_shuffle(torch.randn(1, 4, 2, 2, requires_grad=True), 2)
print(str(y.grad_fn)[:15])
try:
    y.sum().backward()
except RuntimeError as e:
    print(e)
"""

CTC = """
import torch
from torch import nn
import torch.nn.functional as F
torch.manual_seed(3)
T, N, C = 12, 3, 5
x = torch.randn(T, N, C, dtype=torch.float64)
lp = x.log_softmax(2).detach().requires_grad_()
padded = torch.tensor([[1, 2, 2, 4], [3, 1, 0, 0], [4, 4, 4, 0]])
concat = torch.tensor([1, 2, 2, 4, 3, 1, 4, 4, 4])
lengths_in, lengths_t = torch.tensor([12, 10, 7]), torch.tensor([4, 2, 3])
for loss in [nn.CTCLoss(), nn.CTCLoss(reduction='sum'), nn.CTCLoss(reduction='none'), nn.CTCLoss(blank=0, zero_infinity=True)]:
    for targets in (padded, concat):
        lp.grad = None
        out = loss(lp, targets, lengths_in, lengths_t)
        (out * torch.arange(1., out.numel() + 1).reshape(out.shape)).sum().backward()
        print(loss, out.grad_fn.name(), out, lp.grad[::3])
# lists of lengths, a target that cannot fit (infinite loss), zero_infinity, another blank
lp.grad = None
out = F.ctc_loss(lp, torch.tensor([[1, 1, 1, 1, 1, 1, 1], [2, 0, 0, 0, 0, 0, 0], [1, 3, 0, 0, 0, 0, 0]]), [5, 12, 9], [5, 1, 2],
                 reduction='none')
print(out)
out = F.ctc_loss(lp, torch.tensor([[1, 1, 1, 1, 1, 1, 1], [2, 0, 0, 0, 0, 0, 0], [1, 3, 0, 0, 0, 0, 0]]), [5, 12, 9], [5, 1, 2],
                 zero_infinity=True, reduction='sum', blank=4)
out.backward()
print(out, out.grad_fn.name(), lp.grad[4])
# unbatched, as the documented example
u = torch.randn(10, 4).log_softmax(1).detach().requires_grad_()
out = nn.CTCLoss()(u, torch.tensor([1, 3, 3]), torch.tensor(10), torch.tensor(3))
out.backward()
print(out, u.grad)
g, = torch.autograd.grad(F.ctc_loss(lp, padded, lengths_in, lengths_t), lp, create_graph=True)
print(str(g.grad_fn)[:15])
for bad in [lambda: g.sum().backward(), lambda: F.ctc_loss(lp, padded, torch.tensor([13, 1, 1]), lengths_t),
            lambda: F.ctc_loss(lp, padded[:, :2], lengths_in, lengths_t), lambda: F.ctc_loss(lp, padded, [1, 2], [1, 2]),
            lambda: F.ctc_loss(lp, padded, lengths_in, lengths_t, reduction='avg')]:
    try:
        bad()
    except (RuntimeError, ValueError) as e:
        print(type(e).__name__, e)
"""

MARGINS = """
import torch
from torch import nn
import torch.nn.functional as F
x = torch.tensor([[0.1, 0.2, 0.4, 0.8, -0.3], [1.2, -0.7, 0.05, 2.0, 0.6], [0.3, 0.3, -1.0, 0.9, 0.2]],
                 requires_grad=True)
y = torch.tensor([3, 0, 4])
for loss in [nn.MultiMarginLoss(), nn.MultiMarginLoss(p=2, margin=0.7), nn.MultiMarginLoss(reduction='none'),
             nn.MultiMarginLoss(weight=torch.tensor([1., 2., 0.5, 1.5, 3.]), reduction='sum')]:
    out = loss(x, y)
    g, = torch.autograd.grad(out.sum(), x)
    print(loss, out.grad_fn.name(), out, g)
print(F.multi_margin_loss(x[0], torch.tensor(2)), F.multi_margin_loss(x[1], torch.tensor([1]), reduction='none'))
t = torch.tensor([[3, 0, -1, 1, 2], [0, 1, 2, 3, 4], [4, -1, 0, 0, 0]])
for loss in [nn.MultiLabelMarginLoss(), nn.MultiLabelMarginLoss(reduction='none'), nn.MultiLabelMarginLoss(reduction='sum')]:
    out = loss(x, t)
    g, = torch.autograd.grad(out.sum(), x)
    print(loss, out.grad_fn.name(), out, g)
out = F.multilabel_margin_loss(x, t)
print(out.grad_fn._saved_is_target, out.grad_fn._saved_reduction)
print(F.multilabel_margin_loss(torch.tensor([0.1, 0.2, 0.4, 0.8]), torch.tensor([3, 0, -1, 1])))
g, = torch.autograd.grad(F.multi_margin_loss(x, y), x, create_graph=True)
for bad in [lambda: g.sum().backward(), lambda: F.multi_margin_loss(x, y, p=3), lambda: F.multi_margin_loss(x, torch.tensor([0, 5, 1])),
            lambda: F.multi_margin_loss(x, torch.tensor([0, 1])), lambda: F.multilabel_margin_loss(x, y),
            lambda: F.multi_margin_loss(x, y, weight=torch.ones(5, requires_grad=True))]:
    try:
        bad()
    except (RuntimeError, ValueError) as e:
        print(type(e).__name__, e)
"""

EMBEDDING_BAG_AND_LINEAR_CE = """
import torch
from torch import nn
import torch.nn.functional as F
torch.manual_seed(4)
w = torch.randn(10, 3, requires_grad=True)
idx = torch.tensor([2, 2, 7, 2, 4, 3, 2, 9])
for kw in [dict(offsets=torch.tensor([0, 4])), dict(offsets=torch.tensor([0, 4]), mode='sum', padding_idx=2),
           dict(offsets=torch.tensor([0, 3, 3]), mode='max'), dict(offsets=torch.tensor([0, 5, 8]), include_last_offset=True, mode='sum'),
           dict(offsets=torch.tensor([0, 2, 6]), mode='mean', padding_idx=-8)]:
    w.grad = None
    out = F.embedding_bag(idx, w, **kw)
    (out * torch.arange(out.numel()).reshape(out.shape)).sum().backward()
    print(out.grad_fn.name(), out, w.grad)
psw = torch.rand(8, requires_grad=True)
out = F.embedding_bag(idx, w, torch.tensor([0, 4]), mode='sum', per_sample_weights=psw)
out.sum().backward()
print(out, psw.grad)
print(F.embedding_bag(torch.tensor([[1, 2], [4, 4]]), w, mode='max'))
for bad in [lambda: F.embedding_bag(idx, w), lambda: F.embedding_bag(idx, w, torch.tensor([1, 4])),
            lambda: F.embedding_bag(idx, w, torch.tensor([0, 4]), mode='prod'),
            lambda: F.embedding_bag(idx, w, torch.tensor([0, 4]), per_sample_weights=psw)]:
    try:
        bad()
    except (RuntimeError, ValueError, NotImplementedError) as e:
        print(type(e).__name__, e)
torch.manual_seed(283)
loss = nn.LinearCrossEntropyLoss(5, 10, out_features=(4, 3))
print(loss)
input = torch.randn(2, 5, requires_grad=True)
target = torch.randint(0, 10, (2, 4, 3))
output = loss(input, target)
output.backward()
print(output, output.grad_fn.name(), input.grad, loss.linear.weight.grad.abs().sum(0))
loss = nn.LinearCrossEntropyLoss(5, 4, bias=True, reduction='sum', label_smoothing=0.1)
print(loss, loss(torch.randn(3, 5), torch.tensor([0, 3, 1])))
x, W = torch.randn(2, 5, requires_grad=True), torch.randn(4, 5, requires_grad=True)
p = torch.randn(2, 4).softmax(1)
print(F.linear_cross_entropy(x, W, p), F.linear_cross_entropy(x, W, torch.tensor([1, 3]), ignore_index=3))
try:
    F.linear_cross_entropy(x, W, p, ignore_index=1)
except RuntimeError as e:
    print(e)
"""


def _agree(tmp_path, name, program):
    want, got = python_and_gradcli_stdout(tmp_path, name, program)
    assert_printed_alike(got, want)


def test_channel_and_alpha_dropouts_draw_pytorch_s_masks(tmp_path):
    _agree(tmp_path, "dropouts", DROPOUTS)


def test_rrelu_slopes_and_gumbel_softmax_samples_are_pytorch_s(tmp_path):
    _agree(tmp_path, "rrelu_gumbel", RRELU_GUMBEL)


def test_local_response_norm_and_native_channel_shuffle(tmp_path):
    _agree(tmp_path, "norms", NORMS)


def test_ctc_loss_values_gradients_and_errors(tmp_path):
    _agree(tmp_path, "ctc", CTC)


def test_multi_class_and_multi_label_margin_losses(tmp_path):
    _agree(tmp_path, "margins", MARGINS)


def test_embedding_bag_and_linear_cross_entropy(tmp_path):
    _agree(tmp_path, "bags", EMBEDDING_BAG_AND_LINEAR_CE)

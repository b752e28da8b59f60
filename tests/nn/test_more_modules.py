"""The padding layers, shrinkage activations, PReLU, Softmax2d, Unflatten, the shuffles, fixed-mode upsampling,
RMSNorm and the margin and likelihood losses, and torch.empty, in programs as PyTorch users write them: each
program is run by Python with torch and by ``gradcli run``, and the outputs must agree (numbers to rtol 1e-4)."""

from __future__ import annotations

import subprocess
import sys

from helpers import HANG_TIMEOUT, assert_printed_alike, python_and_gradcli_stdout

PADDING = """
import torch
from torch import nn
x = torch.arange(18.).reshape(1, 2, 3, 3)
for m in [nn.ZeroPad2d((1, 1, 2, 0)), nn.ConstantPad2d(1, 3.5), nn.ReflectionPad2d(1), nn.ReplicationPad2d((1, 0, 0, 2)),
          nn.CircularPad2d(1), nn.ZeroPad1d(2), nn.ReflectionPad1d((2, 1)), nn.ConstantPad3d(1, -1.0)]:
    y = m(x if '2d' in type(m).__name__ else (x[0] if '1d' in type(m).__name__ else x))
    print(m, type(m), y.shape)
    print(y)
w = torch.ones(1, 2, 3, 3, requires_grad=True)
nn.ReflectionPad2d(1)(w * 2).pow(2).sum().backward()
print(w.grad)
"""

ACTIVATIONS = """
import torch
from torch import nn
x = torch.tensor([[-1.5, -0.3, 0.2, 0.8], [1.2, -0.7, 0.05, 2.0]], requires_grad=True)
for m in [nn.Hardshrink(), nn.Softshrink(0.3), nn.Tanhshrink(), nn.Threshold(0.1, 20.), nn.PReLU(), nn.PReLU(4, 0.1)]:
    y = m(x)
    g, = torch.autograd.grad((y * torch.arange(8.).reshape(2, 4)).sum(), x)
    print(m, y, g)
p = nn.PReLU(2)
out = p(x.reshape(2, 2, 2)).sum()
out.backward()
print(p.weight.grad, list(p.named_parameters()))
print(nn.Softmax2d()(torch.arange(12.).reshape(1, 3, 2, 2)))
"""

RESHAPING = """
import torch
from torch import nn
x = torch.arange(32.).reshape(1, 8, 2, 2)
print(nn.PixelShuffle(2)(x), nn.PixelShuffle(2), nn.PixelUnshuffle(2)(nn.PixelShuffle(2)(x)).equal(x))
print(nn.ChannelShuffle(2)(x)[0, :, 0, 0], nn.ChannelShuffle(4))
u = nn.Unflatten(1, (2, 4))
print(u, u(x).shape)
print(nn.UpsamplingNearest2d(scale_factor=2)(x[:, :1]), nn.UpsamplingBilinear2d(scale_factor=2)(x[:, :1]))
print(nn.UpsamplingBilinear2d(size=3))
r = nn.RMSNorm([2, 2])
print(r, r(x))
print(nn.RMSNorm(4, eps=1e-3, elementwise_affine=False)(x.reshape(8, 4)))
"""

LOSSES = """
import torch
from torch import nn
torch.manual_seed(0)
x = torch.tensor([[-1.5, -0.3, 0.2, 0.8], [1.2, -0.7, 0.05, 2.0]], requires_grad=True)
y = torch.tensor([[0.5, -0.1, 0.9, 0.3], [-0.2, 0.4, 1.5, -1.0]])
t = torch.tensor([1., -1.])
cases = [
    (nn.MarginRankingLoss(0.1), (x[0], x[1], torch.tensor([1., -1., 1., -1.]))),
    (nn.HingeEmbeddingLoss(), (x, torch.tensor([[1., -1., 1., -1.], [-1., -1., 1., 1.]]))),
    (nn.SoftMarginLoss(reduction='sum'), (x, torch.tensor([[1., -1., 1., -1.], [-1., -1., 1., 1.]]))),
    (nn.CosineEmbeddingLoss(0.2), (x, y, t)),
    (nn.MultiLabelSoftMarginLoss(), (x, (y > 0).float())),
    (nn.TripletMarginLoss(margin=0.5), (x, y, y.flip(1))),
    (nn.PoissonNLLLoss(), (x, y.abs())),
    (nn.PoissonNLLLoss(log_input=False, full=True), (x.abs() + 1, y.abs() + 2)),
    (nn.GaussianNLLLoss(), (x, y, torch.ones(2, 4) * 0.5)),
]
for loss, args in cases:
    out = loss(*args)
    g, = torch.autograd.grad(out, x)
    print(loss, out, g)
"""

EMPTY = """
import torch
e = torch.empty(2, 3)
print(e.shape, e.dtype, e.requires_grad)
print(torch.empty((2,), dtype=torch.int64).dtype, torch.empty_like(torch.ones(3, dtype=torch.float64)).dtype)
print(torch.ones(2, dtype=torch.int32).new_empty(4).shape, torch.ones(2, dtype=torch.int32).new_empty(4).dtype)
x = torch.empty(3).fill_(2.5)
print(x)
"""


def _agree(tmp_path, name, program):
    want, got = python_and_gradcli_stdout(tmp_path, name, program)
    assert_printed_alike(got, want)


def test_padding_layers(tmp_path):
    _agree(tmp_path, "padding", PADDING)


def test_shrinkage_activations_and_prelu(tmp_path):
    _agree(tmp_path, "activations", ACTIVATIONS)


def test_shuffles_unflatten_upsampling_rmsnorm(tmp_path):
    _agree(tmp_path, "reshaping", RESHAPING)


def test_margin_and_likelihood_losses(tmp_path):
    _agree(tmp_path, "losses", LOSSES)


def test_empty(tmp_path):
    _agree(tmp_path, "empty", EMPTY)


def test_a_module_pytorch_has_and_gradcli_lacks_is_not_implemented(tmp_path):
    path = tmp_path / "sync_batch_norm.py"
    path.write_text("import torch\nfrom torch import nn\nm = nn.SyncBatchNorm(3)\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True,
                          timeout=HANG_TIMEOUT)
    assert proc.returncode == 1
    assert "NotImplementedError: 'torch.nn.SyncBatchNorm' is not supported by gradcli" in proc.stderr
    path.write_text("import torch\nfrom torch import nn\nm = nn.Linearr(3, 4)\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True,
                          timeout=HANG_TIMEOUT)
    assert "AttributeError: module 'torch.nn' has no attribute 'Linearr'" in proc.stderr
    assert "did you mean 'Linear'?" in proc.stderr

"""torch.nn's convolution and pooling modules (gradcli/api/nn/conv.py) in ``gradcli run`` programs, printed as
PyTorch prints them: seeded parameters (kaiming_uniform_ with a = sqrt(5) and the bias bound, drawn from
PyTorch's generator), ``print(model)``, and a small CNN trained by SGD whose losses and gradients equal PyTorch's."""

from __future__ import annotations

from helpers import assert_printed_alike, python_and_gradcli_stdout

MODULES = '''
import torch
import torch.nn as nn

torch.manual_seed(0)
print(nn.Conv2d(3, 4, 3).weight)
conv = nn.Conv2d(3, 4, 3)
print(conv.bias)
print(nn.Conv1d(2, 4, 3, stride=2, padding=1, bias=False, padding_mode="reflect"))
print(nn.Conv2d(4, 8, (3, 2), groups=2, dilation=2, padding="same"))
t = nn.ConvTranspose2d(3, 6, 3, stride=2, output_padding=1)
print(t, t.weight.shape, t.weight.sum().item(), t.bias)
print(nn.ConvTranspose1d(2, 3, 2, bias=False))
for m in (nn.MaxPool2d(2), nn.MaxPool1d(3, 1, 1), nn.AvgPool2d(2), nn.AvgPool1d(3), nn.AdaptiveAvgPool2d((2, None)),
          nn.Unfold(2), nn.Fold((4, 5), 2), nn.Upsample(scale_factor=2), nn.Upsample(size=(3, 4), mode="bilinear")):
    print(m)
x = torch.randn(2, 3, 6, 6)
print(conv(x).sum().item(), conv(x).grad_fn.name(), conv(x[0]).shape)
print(nn.Conv2d(3, 2, 3, padding=1, padding_mode="circular")(x)[0, 0, 0])
print(t(x, output_size=[14, 13]).shape)
print(nn.AvgPool2d(3, 2, 1, count_include_pad=False)(x)[1, 2])
print(nn.Upsample(scale_factor=1.5, mode="bilinear", align_corners=True)(x)[0, 0, :2])
print(nn.Fold((6, 6), 2)(nn.Unfold(2)(x))[0, 0, :2])
try:
    nn.Conv2d(3, 4, 3, groups=2)
except ValueError as e:
    print(e)
try:
    nn.ConvTranspose2d(3, 6, 3, stride=2)(x, output_size=[20, 20])
except ValueError as e:
    print(e)
print(nn.Conv2d(3, 4, 3, padding="valid"), nn.Conv1d(3, 4, 3, padding="same", dilation=2))
print(nn.Conv2d(2, 4, 2, padding="same", padding_mode="reflect")(torch.ones(1, 2, 5, 5)).shape)
v, i = nn.MaxPool2d(2, return_indices=True)(x)
print(i[0, 0], nn.MaxPool1d(2)(x[0]).shape, nn.AvgPool1d(3, 2, 1)(x[0]).grad_fn)
print(nn.AdaptiveAvgPool1d(4), nn.AdaptiveAvgPool1d(4)(x[0]))
print(nn.Upsample(scale_factor=1.5, mode="nearest-exact")(x)[0, 0, 0], nn.Upsample(size=(2, 3), mode="area")(x)[1, 1])
'''

CNN = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.conv(x)))
        return self.fc(torch.flatten(x, 1))


model = Net()
print(model)
seq = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2, ceil_mode=True), nn.Flatten(),
                    nn.Linear(2 * 3 * 3, 3))
print(seq)
x = torch.randn(5, 1, 8, 8)
y = torch.tensor([0, 2, 1, 1, 0])
opt = torch.optim.SGD(list(model.parameters()) + list(seq.parameters()), lr=0.1)
for step in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y) + F.cross_entropy(seq(x), y)
    loss.backward()
    print(step, round(loss.item(), 5), loss.grad_fn.name())
    print(model.conv.weight.grad[0, 0])
    print(seq[0].bias.grad)
    opt.step()
print(model.conv.bias)
print(model.fc.weight.grad.norm().item() > 0)
'''


def test_conv_and_pool_modules_print_and_compute_as_pytorch(tmp_path, torch):
    want, got = python_and_gradcli_stdout(tmp_path, "conv_modules", MODULES)
    assert_printed_alike(got, want)  # float32 convolutions: BLAS may change the last bits
    assert "Conv1d(2, 4, kernel_size=(3,), stride=(2,), padding=(1,), bias=False, padding_mode=reflect)" in got


def test_small_cnn_trains_as_pytorch(tmp_path, torch):
    """Conv2d -> ReLU -> MaxPool2d -> Flatten -> Linear, cross_entropy, three SGD steps: the printed model,
    losses, gradients and updated parameters equal PyTorch's."""
    want, got = python_and_gradcli_stdout(tmp_path, "cnn", CNN)
    assert_printed_alike(got, want)  # float32 convolutions, Linear and SGD steps: BLAS may change the last bits
    assert "Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))" in got

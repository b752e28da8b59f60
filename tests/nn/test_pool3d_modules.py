"""torch.nn's 3-d convolution, pooling and normalization modules and the remaining pools
(gradcli/api/nn/pool3d.py) in ``gradcli run`` programs, compared with the same program under PyTorch: seeded
parameters (Conv3d's kaiming_uniform_ and bias bound, from PyTorch's generator), ``print(model)``, outputs,
indices and gradients; fractional max pooling's samples drawn by torch.rand after the same seed; and the
functional ops' values, indices, gradients and errors (gradcli/ops/nn/conv.py, pooling_nd.py) against torch in
float64."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_printed_alike, python_and_gradcli_stdout

import gradcli as G

MODULES = '''
import torch
import torch.nn as nn

torch.manual_seed(0)
conv = nn.Conv3d(2, 4, (3, 2, 2), stride=(2, 1, 1), padding=(1, 0, 1))
print(conv, conv.weight.shape, conv.weight.sum().item(), conv.bias)
t = nn.ConvTranspose3d(4, 3, 2, stride=2, output_padding=1, groups=1)
print(t, t.weight.sum().item(), t.bias)
print(nn.Conv3d(4, 8, 3, groups=2, dilation=2, padding="same", bias=False))
for m in (nn.MaxPool3d(2), nn.MaxPool3d((3, 2, 2), stride=(2, 1, 2)), nn.AvgPool3d(3, stride=2),
          nn.AdaptiveAvgPool3d((2, None, 3)), nn.AdaptiveMaxPool1d(3), nn.AdaptiveMaxPool2d((None, 2)),
          nn.AdaptiveMaxPool3d(2), nn.MaxUnpool1d(2), nn.MaxUnpool2d(2, 1), nn.MaxUnpool3d(3, stride=2),
          nn.LPPool1d(2, 3, stride=2), nn.LPPool2d(1.5, (3, 2)), nn.LPPool3d(2, 2),
          nn.FractionalMaxPool2d(2, output_size=(3, 4)), nn.FractionalMaxPool3d(2, output_ratio=0.5),
          nn.BatchNorm3d(4), nn.InstanceNorm3d(4, affine=True), nn.ReflectionPad3d(1),
          nn.ReplicationPad3d((1, 0, 2, 1, 0, 1)), nn.CircularPad3d(1)):
    print(m)
x = torch.randn(2, 2, 5, 6, 6, requires_grad=True)
y = conv(x)
print(y.shape, y.grad_fn.name(), y.sum().item(), conv(x[0]).shape)
z = t(y)
print(z.shape, z[0, 0, 0, 0])
print(t(y, output_size=[7, 10, 15]).shape)
v, i = nn.MaxPool3d(2, return_indices=True)(z)
u = nn.MaxUnpool3d(2)(v, i, output_size=z.shape)
print(v.grad_fn.name(), i[1, 2, 1], u.shape, u.grad_fn.name(), (u != 0).sum().item())
p = nn.AvgPool3d((3, 2, 2), stride=(2, 1, 2), padding=1, count_include_pad=False)(z)
print(p.grad_fn.name(), p[0, 1, 1])
print(nn.AdaptiveAvgPool3d((2, None, 3))(z)[1, 0, 1, :2], nn.AdaptiveMaxPool3d(2, return_indices=True)(z)[1][0, 0])
print(nn.AdaptiveMaxPool2d((None, 2))(z[0])[1, 1], nn.AdaptiveMaxPool1d(3)(z[0, 0, 0]).grad_fn.name())
print(nn.LPPool3d(2, 2)(z)[0, 0, 0], nn.LPPool2d(1.5, (3, 2))(z[0, 0].abs())[1], nn.LPPool1d(2, 3, stride=2)(z[0, 0, 0]))
f2 = nn.FractionalMaxPool2d(2, output_size=(3, 4), return_indices=True)(z[0])
f3 = nn.FractionalMaxPool3d(2, output_ratio=0.5)(z)
print(f2[0][1], f2[1][0], f2[0].grad_fn.name(), f3[1, 2, 1], f3.grad_fn.name())
bn = nn.BatchNorm3d(3)
print(bn(z)[0, 0, 0, 0, :4], bn.running_mean, bn.num_batches_tracked)
bn.eval()
print(bn(z)[1, 2, 3, 4, :3])
inorm = nn.InstanceNorm3d(3, affine=True)
print(inorm(z)[0, 1, 2, 2, :4], inorm(z[0]).shape)
loss = (f3.sum() + p.pow(2).sum() + u.abs().sum() + bn(z).sum() + inorm(z).sum()
        + nn.ReflectionPad3d(1)(z).pow(2).sum() + nn.ReplicationPad3d((1, 0, 2, 1, 0, 1))(z).pow(2).sum())
loss.backward()
print(loss.item(), x.grad.shape, x.grad[1, 1, 2, 3], conv.weight.grad[2, 1], t.bias.grad)
print(nn.ReflectionPad3d(1)(torch.arange(8, dtype=torch.float).reshape(1, 1, 2, 2, 2))[0, 0, 1])
try:
    nn.FractionalMaxPool2d(2, output_ratio=(0.5, 1.5))
except ValueError as e:
    print(e)
try:
    nn.BatchNorm3d(3)(z[0])
except ValueError as e:
    print(e)
'''


def test_3d_and_more_pool_modules_print_and_compute_as_pytorch(tmp_path, torch):
    """Every module of gradcli/api/nn/pool3d.py (and the 3-d pads) in one program: printed as PyTorch prints
    it, and its outputs, indices and the gradients of a loss of all of them equal PyTorch's."""
    want, got = python_and_gradcli_stdout(tmp_path, "pool3d_modules", MODULES)
    assert_printed_alike(got, want)  # float32 convolutions: BLAS may change the last bits
    assert "Conv3d(2, 4, kernel_size=(3, 2, 2), stride=(2, 1, 1), padding=(1, 0, 1))" in got
    assert "FractionalMaxPool3DBackward0" in got


# ------------------------------------------------------------------------------------ the functional ops
def _both(torch, x):
    return torch.tensor(x, requires_grad=True), G.tensor(x, requires_grad=True)


@pytest.mark.parametrize("name, args, kwargs", [
    ("max_pool3d", ((2, 3, 2),), {"stride": 1, "padding": (1, 1, 0), "dilation": (1, 1, 2), "ceil_mode": True}),
    ("adaptive_max_pool3d", ((3, 2, 4),), {}),
    ("fractional_max_pool3d", (2,), {"output_size": (3, 3, 4)}),
])
def test_max_pools_pick_pytorchs_positions_with_nan_and_ties(torch, name, args, kwargs):
    """The position each 3-d max pool takes (the first maximum of a window, the last NaN, ties of equal values)
    is PyTorch's, and so is the gradient that goes back there."""
    rng = np.random.default_rng(1)
    x = rng.integers(-2, 3, (1, 2, 5, 5, 6)).astype(np.float64)  # many ties
    x[0, 0, 1, 2, 3] = x[0, 1, 4, 0, 0] = np.nan
    samples = rng.random((1, 2, 3))
    if name == "fractional_max_pool3d":
        kwargs = {**kwargs, "_random_samples": None}
    outs = []
    for m in (torch, G):
        t = m.tensor(x, requires_grad=True)
        kw = dict(kwargs)
        if "_random_samples" in kw:
            kw["_random_samples"] = m.tensor(samples)
        v, i = getattr(m.nn.functional if m is torch else m, name)(t, *args, return_indices=True, **kw)
        m.nan_to_num(v).sum().backward()
        outs.append((np.nan_to_num(v.detach().numpy(), nan=9.0), i.numpy(), t.grad.numpy()))
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_fractional_max_pool_draws_pytorchs_samples_after_the_same_seed(torch):
    """Without _random_samples, fractional_max_pool2d/3d draw torch.rand(N, C, dims) in the input's dtype: after
    the same seed the windows (so the values and indices) are PyTorch's, in float32 and float64."""
    for dtype in ("float32", "float64"):
        x = np.random.default_rng(2).standard_normal((3, 4, 11, 9, 8)).astype(dtype)
        got, want = [], []
        for m, out in ((G, got), (torch, want)):
            m.manual_seed(7)
            f = m.nn.functional if m is torch else m
            v2, i2 = f.fractional_max_pool2d(m.tensor(x[:, :, 0]), 3, output_ratio=(0.5, 0.6), return_indices=True)
            v3, i3 = f.fractional_max_pool3d(m.tensor(x), (2, 3, 2), output_size=(5, 4, 3), return_indices=True)
            out += [v2.numpy(), i2.numpy(), v3.numpy(), i3.numpy()]
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_conv3d_and_its_transpose_match_torch_in_slices_of_the_batch(torch, monkeypatch):
    """conv3d/conv_transpose3d and their gradients equal PyTorch's also when the im2col matrices are made a
    few samples at a time (the budget lowered so that a batch of 5 goes through in slices)."""
    from gradcli.ops.nn import conv as conv_module

    monkeypatch.setattr(conv_module, "_COLS_BUDGET", 200)
    rng = np.random.default_rng(3)
    x, w, wt = rng.standard_normal((5, 4, 4, 3, 5)), rng.standard_normal((6, 2, 2, 2, 3)), \
        rng.standard_normal((4, 3, 2, 1, 2))
    grads = []
    for m in (torch, G):
        f = m.nn.functional if m is torch else m
        tx, tw, twt = (m.tensor(a, requires_grad=True) for a in (x, w, wt))
        y = f.conv3d(tx, tw, None, (1, 2, 1), 1, 1, 2)
        z = f.conv_transpose3d(tx, twt, None, 2, (0, 1, 1), (1, 0, 1))
        (y.pow(2).sum() + z.pow(2).sum()).backward()
        grads.append([y.detach().numpy(), z.detach().numpy(), tx.grad.numpy(), tw.grad.numpy(), twt.grad.numpy()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10)


def test_max_unpool_places_values_and_takes_gradients_as_pytorch(torch):
    """max_unpool1d/2d/3d write each value at its index (the default and a given output_size) and send back
    the gradient found there."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 5, 4, 5))
    for nd, shape in ((1, x.shape[2:3]), (2, x.shape[3:]), (3, x.shape[2:])):
        src = x[(0,) * (3 - nd)] if nd < 3 else x
        outs = []
        for m in (torch, G):
            f = m.nn.functional if m is torch else m
            v, i = getattr(f, f"max_pool{nd}d")(m.tensor(src), 2, return_indices=True)
            v = m.tensor(v.numpy(), requires_grad=True)
            u = getattr(f, f"max_unpool{nd}d")(v, i, 2, output_size=list(shape))
            (u * m.tensor(np.arange(u.numel()).reshape(u.shape) * 1.0)).sum().backward()
            outs.append((u.detach().numpy(), v.grad.numpy(), u.grad_fn.name()))
        assert outs[0][2] == outs[1][2]
        for a, b in zip(outs[0][:2], outs[1][:2]):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("call", [
    lambda f, m, x: f.max_unpool2d(x[0, :, 0, :2, :2], m.tensor([[[[0, 20], [1, 2]]] * 3]), 2),
    lambda f, m, x: f.max_unpool2d(x[0, :, 0, :2, :2], m.tensor([[[[0, 1], [1, 2]]] * 3], dtype=m.int32), 2),
    lambda f, m, x: f.max_unpool3d(x[0, 0, 0], m.tensor([[0]]), 2),
    lambda f, m, x: f.fractional_max_pool2d(x[0, :, 0], 3, output_size=4),
    lambda f, m, x: f.fractional_max_pool3d(x, 2, output_size=2, _random_samples=m.rand(2, 2, 3)),
    lambda f, m, x: f.fractional_max_pool2d(x[0, :, 0], 2),
    lambda f, m, x: f.adaptive_max_pool2d(x[0, 0, 0, 0], 2),
    lambda f, m, x: f.adaptive_avg_pool3d(x[0, 0, 0], 2),
    lambda f, m, x: f.max_pool3d(x, (2, 2)),
    lambda f, m, x: f.avg_pool3d(x.to(m.int32), 2),
])
def test_errors_are_pytorchs(torch, call):
    """Wrong indices, pools too large for the input, samples of the wrong shape, inputs of the wrong rank or
    dtype: the same exception type and message as PyTorch."""
    x = np.random.default_rng(5).standard_normal((2, 3, 4, 4, 4))
    errors = []
    for m in (torch, G):
        f = m.nn.functional if m is torch else m
        with pytest.raises(Exception) as info:
            call(f, m, m.tensor(x))
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]


def test_reflection_pad3d_of_a_5d_input_runs_as_a_user_runs_it(torch):
    """``gradcli run``: nn.ReflectionPad3d's documented example prints PyTorch's tensor (it used to be refused
    as an unsupported padding size)."""
    import subprocess
    import sys

    program = ("import torch\nm = torch.nn.ReflectionPad3d(1)\n"
               "print(m(torch.arange(8, dtype=torch.float).reshape(1, 1, 2, 2, 2)))\n")
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", "-"], input=program, capture_output=True,
                         text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    want = torch.nn.ReflectionPad3d(1)(torch.arange(8, dtype=torch.float).reshape(1, 1, 2, 2, 2))
    assert got.stdout == str(want) + "\n"


def test_pool_class_hierarchy_as_pytorch(tmp_path):
    # isinstance answers as PyTorch's: the 3-d pools are not kinds of the 2-d ones (siblings under _AvgPoolNd)
    program = ("import torch.nn as nn\n"
               "mods = [nn.AvgPool2d(2), nn.AvgPool3d(2), nn.AdaptiveAvgPool2d(2), nn.AdaptiveAvgPool3d(2),\n"
               "        nn.MaxPool2d(2), nn.MaxPool3d(2)]\n"
               "kinds = [nn.AvgPool2d, nn.AvgPool3d, nn.AdaptiveAvgPool2d, nn.AdaptiveAvgPool3d, nn.MaxPool2d,\n"
               "         nn.MaxPool3d, nn.Module]\n"
               "print([[isinstance(m, k) for k in kinds] for m in mods])\n"
               "print([m for m in mods])\n")
    want, got = python_and_gradcli_stdout(tmp_path, "pools.py", program)
    assert got == want

"""Convolution and pooling (gradcli/ops/nn/conv.py, pooling.py, resampling.py, fold.py) beyond their op-table
samples: PyTorch's error texts for bad shapes, dtypes and arguments, max_pool2d's indices, Tensor.unfold (the
windows op that shares F.unfold's name), the float32 and integer results, and the conv kernels on the benchmark's
size."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as G
from gradcli.api.gradcheck import gradcheck, gradgradcheck

from helpers import ROOT, assert_raises_like_torch, grad_fn_name


def F(m):
    """torch.nn.functional, or gradcli (whose namespace holds the functional ops)."""
    return G if m is G else m.nn.functional


def _x(m, *shape, dtype=None):
    return m.ones(*shape) if dtype is None else m.ones(*shape, dtype=getattr(m, dtype))


ERRORS = [
    ("conv2d-channels", lambda m: F(m).conv2d(_x(m, 1, 4, 8, 8), _x(m, 16, 3, 3, 3))),
    ("conv2d-groups-channels", lambda m: F(m).conv2d(_x(m, 1, 4, 8, 8), _x(m, 16, 3, 3, 3), groups=2)),
    ("conv2d-groups-divisible", lambda m: F(m).conv2d(_x(m, 1, 4, 8, 8), _x(m, 15, 2, 3, 3), groups=2)),
    ("conv2d-bias-size", lambda m: F(m).conv2d(_x(m, 1, 3, 8, 8), _x(m, 16, 3, 3, 3), _x(m, 15))),
    ("conv2d-2d-input", lambda m: F(m).conv2d(_x(m, 3, 8), _x(m, 16, 3, 3, 3))),
    ("conv1d-1d-input", lambda m: F(m).conv1d(_x(m, 8), _x(m, 4, 4, 3))),
    ("conv2d-kernel-too-big", lambda m: F(m).conv2d(_x(m, 1, 3, 2, 2), _x(m, 16, 3, 3, 3))),
    ("conv2d-dilated-kernel-too-big", lambda m: F(m).conv2d(_x(m, 1, 3, 4, 4), _x(m, 2, 3, 2, 2), dilation=4)),
    ("conv2d-input-double-weight-float", lambda m: F(m).conv2d(_x(m, 1, 3, 8, 8, dtype="double"),
                                                               _x(m, 16, 3, 3, 3))),
    ("conv2d-input-float-weight-double", lambda m: F(m).conv2d(_x(m, 1, 3, 8, 8), _x(m, 16, 3, 3, 3, dtype="double"))),
    ("conv2d-bias-double", lambda m: F(m).conv2d(_x(m, 1, 3, 8, 8), _x(m, 16, 3, 3, 3), _x(m, 16, dtype="double"))),
    ("conv2d-long-input-float-weight", lambda m: F(m).conv2d(_x(m, 1, 3, 8, 8, dtype="long"), _x(m, 16, 3, 3, 3))),
    ("conv2d-same-strided", lambda m: F(m).conv2d(_x(m, 1, 3, 8, 8), _x(m, 4, 3, 3, 3), stride=2, padding="same")),
    ("conv2d-zero-stride", lambda m: F(m).conv2d(_x(m, 1, 3, 8, 8), _x(m, 4, 3, 3, 3), stride=0)),
    ("conv2d-negative-padding", lambda m: F(m).conv2d(_x(m, 1, 3, 8, 8), _x(m, 4, 3, 3, 3), padding=-1)),
    ("conv2d-padding-string", lambda m: F(m).conv2d(_x(m, 1, 3, 8, 8), _x(m, 4, 3, 3, 3), padding="foo")),
    ("conv2d-zero-dilation", lambda m: F(m).conv2d(_x(m, 1, 3, 8, 8), _x(m, 4, 3, 3, 3), dilation=0)),
    ("conv2d-zero-groups", lambda m: F(m).conv2d(_x(m, 1, 3, 8, 8), _x(m, 4, 3, 3, 3), groups=0)),
    ("conv2d-stride-length", lambda m: F(m).conv2d(_x(m, 1, 3, 8, 8), _x(m, 4, 3, 3, 3), stride=(1, 2, 3))),
    ("conv-transpose2d-channels", lambda m: F(m).conv_transpose2d(_x(m, 1, 4, 8, 8), _x(m, 3, 4, 3, 3))),
    ("conv-transpose2d-output-padding", lambda m: F(m).conv_transpose2d(_x(m, 1, 4, 8, 8), _x(m, 4, 4, 3, 3),
                                                                        output_padding=2, stride=2)),
    ("conv-transpose1d-output-padding", lambda m: F(m).conv_transpose1d(_x(m, 1, 4, 8), _x(m, 4, 4, 3),
                                                                        output_padding=1)),
    ("conv-transpose2d-groups", lambda m: F(m).conv_transpose2d(_x(m, 1, 4, 8, 8), _x(m, 4, 3, 3, 3), groups=3)),
    ("conv-transpose2d-bias", lambda m: F(m).conv_transpose2d(_x(m, 1, 4, 8, 8), _x(m, 4, 3, 3, 3), _x(m, 4))),
    ("conv2d-3d-weight", lambda m: F(m).conv2d(_x(m, 1, 3, 8, 8), _x(m, 4, 3, 3))),
    ("conv1d-4d-weight", lambda m: F(m).conv1d(_x(m, 1, 3, 8), _x(m, 4, 3, 3, 3))),
    ("max-pool2d-padding", lambda m: F(m).max_pool2d(_x(m, 1, 3, 8, 8), 2, padding=2)),
    ("max-pool2d-zero-stride", lambda m: F(m).max_pool2d(_x(m, 1, 3, 8, 8), 2, stride=0)),
    ("max-pool2d-zero-dilation", lambda m: F(m).max_pool2d(_x(m, 1, 3, 8, 8), 2, dilation=0)),
    ("max-pool2d-too-small", lambda m: F(m).max_pool2d(_x(m, 1, 3, 1, 1), 2)),
    ("max-pool2d-2d", lambda m: F(m).max_pool2d(_x(m, 3, 8), 2)),
    ("max-pool2d-kernel-length", lambda m: F(m).max_pool2d(_x(m, 1, 3, 5, 5), (2, 3, 3))),
    ("max-pool2d-bool", lambda m: F(m).max_pool2d(_x(m, 1, 3, 8, 8, dtype="bool"), 2)),
    ("max-pool1d-1d", lambda m: F(m).max_pool1d(_x(m, 8), 2)),
    ("avg-pool2d-padding", lambda m: F(m).avg_pool2d(_x(m, 1, 3, 8, 8), 2, padding=2)),
    ("avg-pool2d-divisor-zero", lambda m: F(m).avg_pool2d(_x(m, 1, 3, 5, 5), 2, divisor_override=0)),
    ("avg-pool1d-1d", lambda m: F(m).avg_pool1d(_x(m, 8), 2)),
    ("adaptive-avg-pool2d-2d", lambda m: F(m).adaptive_avg_pool2d(_x(m, 8, 8), (3, 2))),
    ("adaptive-avg-pool2d-long", lambda m: F(m).adaptive_avg_pool2d(_x(m, 1, 3, 8, 8, dtype="long"), (3, 2))),
    ("adaptive-avg-pool1d-1d", lambda m: F(m).adaptive_avg_pool1d(_x(m, 3), 2)),
    ("interpolate-area-align", lambda m: F(m).interpolate(_x(m, 2, 3, 4, 5), size=3, mode="area",
                                                          align_corners=False)),
    ("pad-odd", lambda m: F(m).pad(_x(m, 1, 3, 2, 2), (1,))),
    ("pad-too-long", lambda m: F(m).pad(_x(m, 1, 3, 2, 2), (1,) * 10)),
    ("pad-mode", lambda m: F(m).pad(_x(m, 2, 2), (1, 1), mode="foo")),
    ("pad-reflect-value", lambda m: F(m).pad(_x(m, 1, 3, 2, 2), (1, 1), value=2.0, mode="reflect")),
    ("pad-reflect-too-wide", lambda m: F(m).pad(_x(m, 2, 3, 4), (4, 1), mode="reflect")),
    ("pad-reflect-length", lambda m: F(m).pad(_x(m, 3, 2, 2), (1, 1, 1, 1, 1, 1), mode="reflect")),
    ("interpolate-linear-4d", lambda m: F(m).interpolate(_x(m, 2, 3, 4, 5), scale_factor=2, mode="linear")),
    ("interpolate-nearest-align", lambda m: F(m).interpolate(_x(m, 2, 3, 4, 5), scale_factor=2,
                                                             align_corners=True)),
    ("interpolate-both", lambda m: F(m).interpolate(_x(m, 2, 3, 4, 5), size=3, scale_factor=2)),
    ("interpolate-neither", lambda m: F(m).interpolate(_x(m, 2, 3, 4, 5))),
    ("unfold-too-big", lambda m: F(m).unfold(_x(m, 2, 3, 4, 5), 5)),
    ("fold-blocks", lambda m: F(m).fold(_x(m, 2, 12, 11), (4, 5), 2)),
    ("fold-channels", lambda m: F(m).fold(_x(m, 2, 11, 12), (4, 5), 2)),
    # dtypes PyTorch's CPU kernels do not dispatch
    ("conv2d-bool", lambda m: F(m).conv2d(_x(m, 1, 2, 3, 3, dtype="bool"), _x(m, 1, 2, 2, 2, dtype="bool"))),
    ("conv-transpose1d-bool", lambda m: F(m).conv_transpose1d(_x(m, 1, 2, 3, dtype="bool"),
                                                              _x(m, 2, 1, 2, dtype="bool"))),
    ("conv-transpose2d-padding-string", lambda m: F(m).conv_transpose2d(_x(m, 1, 2, 3, 3), _x(m, 2, 1, 2, 2),
                                                                        padding="same")),
    ("avg-pool2d-bool", lambda m: F(m).avg_pool2d(_x(m, 1, 2, 3, 3, dtype="bool"), 2)),
    ("avg-pool2d-int32", lambda m: F(m).avg_pool2d(_x(m, 1, 2, 3, 3, dtype="int32"), 2)),
    ("avg-pool1d-bool", lambda m: F(m).avg_pool1d(_x(m, 1, 2, 3, dtype="bool"), 2)),
    ("max-pool1d-long", lambda m: F(m).max_pool1d(_x(m, 1, 2, 3, dtype="long"), 2)),
    ("unfold-long", lambda m: F(m).unfold(_x(m, 1, 2, 3, 3, dtype="long"), 2)),
    ("fold-long", lambda m: F(m).fold(_x(m, 1, 8, 4, dtype="long"), 3, 2)),
    ("pad-reflect-bool", lambda m: F(m).pad(_x(m, 1, 2, 3, dtype="bool"), (1, 1), mode="reflect")),
    ("pad-replicate-bool", lambda m: F(m).pad(_x(m, 1, 2, 3, 3, dtype="bool"), (1, 1, 1, 1), mode="replicate")),
    ("interpolate-nearest-long", lambda m: F(m).interpolate(_x(m, 1, 2, 3, 3, dtype="long"), scale_factor=2)),
    ("interpolate-nearest1d-long", lambda m: F(m).interpolate(_x(m, 1, 2, 3, dtype="long"), scale_factor=2)),
    ("interpolate-bilinear-bool", lambda m: F(m).interpolate(_x(m, 1, 2, 3, 3, dtype="bool"), scale_factor=2,
                                                             mode="bilinear")),
    ("interpolate-linear-long", lambda m: F(m).interpolate(_x(m, 1, 2, 3, dtype="long"), scale_factor=2,
                                                           mode="linear")),
    ("interpolate-2d", lambda m: F(m).interpolate(_x(m, 3, 3), scale_factor=2)),
    ("tensor-unfold-size", lambda m: _x(m, 3, 7).unfold(1, 8, 1)),
    ("tensor-unfold-step", lambda m: _x(m, 3, 7).unfold(1, 3, 0)),
    ("tensor-unfold-dim", lambda m: _x(m, 3, 7).unfold(2, 1, 1)),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in ERRORS])
def test_error_message_matches_torch(fn, torch):
    assert_raises_like_torch(fn, torch)


def _pair(m, data, grad=True):
    return m.tensor(data, requires_grad=grad)


@pytest.mark.parametrize("args", [(1, 3, 2), (0, 2, 1), (-1, 7, 1), (1, 1, 3), (0, 3, 3)])
def test_tensor_unfold_matches_torch(args, torch):
    """``Tensor.unfold(dimension, size, step)``: values, grad_fn, gradient and second derivative as PyTorch's."""
    rng = np.random.default_rng(sum(args) + 7)
    x = rng.standard_normal((3, 7))
    v = rng.standard_normal(torch.tensor(x).unfold(*args).shape)
    out = {}
    for m in (G, torch):
        t = _pair(m, x)
        y = t.unfold(*args)
        (g,) = (G.autograd.grad if m is G else torch.autograd.grad)(y, [t], m.tensor(v), create_graph=True)
        out[m.__name__] = (np.asarray(y.detach().numpy() if m is torch else y.data), grad_fn_name(y),
                           np.asarray(g.detach().numpy() if m is torch else g.data))
    gv, tv = out["gradcli"], out["torch"]
    np.testing.assert_array_equal(gv[0], tv[0])
    assert gv[1] == tv[1] == "UnfoldBackward0"
    np.testing.assert_allclose(gv[2], tv[2], rtol=1e-12)
    assert gradcheck(lambda a: a.unfold(*args), [G.tensor(x, requires_grad=True)])
    assert gradgradcheck(lambda a: a.unfold(*args) ** 2, [G.tensor(x, requires_grad=True)])


def test_tensor_unfold_0d(torch):
    assert G.tensor(2.0).unfold(0, 1, 1).tolist() == torch.tensor(2.0).unfold(0, 1, 1).tolist() == [2.0]


def test_max_pool2d_indices_and_ties_match_torch(torch):
    """return_indices gives PyTorch's flat positions (h * W + w), the first maximum of a window winning ties;
    the gradient goes to that position only; max_pool1d's indices drop the height."""
    data = [[[[1.0, 3.0, 3.0, 0.0, 2.0], [3.0, 1.0, 2.0, 2.0, 2.0], [0.0, 5.0, 5.0, 1.0, 4.0],
              [5.0, 5.0, 0.0, 4.0, 4.0]]]]
    for kw in ({"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
               {"kernel_size": (2, 3), "stride": 1, "dilation": (2, 1)}):
        got, want = [], []
        for m, out in ((G, got), (torch, want)):
            x = _pair(m, data)
            v, i = F(m).max_pool2d(x, return_indices=True, **kw)
            v.sum().backward()
            out += [v.tolist(), i.tolist(), str(i.dtype), x.grad.tolist()]
        assert got == want, kw
    x1 = [[1.0, 4.0, 4.0, 2.0, 0.0, 3.0]]
    assert [r.tolist() for r in G.max_pool1d(G.tensor(x1), 2, 1, return_indices=True)] == \
        [r.tolist() for r in torch.nn.functional.max_pool1d(torch.tensor(x1), 2, 1, return_indices=True)]


def test_integer_convolution_and_pools_match_torch(torch):
    """int64 convolution and pools compute exactly (PyTorch's CPU kernels accept them) and never require grad."""
    rng = np.random.default_rng(3)
    x = rng.integers(-5, 5, (2, 3, 6, 6))
    w = rng.integers(-3, 3, (4, 3, 3, 3))
    b = rng.integers(-3, 3, (4,))
    for f in (lambda m: F(m).conv2d(m.tensor(x), m.tensor(w), m.tensor(b), padding=1),
              lambda m: F(m).conv_transpose2d(m.tensor(x), m.tensor(w.transpose(1, 0, 2, 3).copy()), stride=2),
              lambda m: F(m).max_pool2d(m.tensor(x), 2), lambda m: F(m).avg_pool2d(m.tensor(x), 2),
              lambda m: F(m).pad(m.tensor(x), (1, 2, 2, 0), mode="reflect")):
        g, t = f(G), f(torch)
        assert str(g.dtype) == str(t.dtype) == "torch.int64"
        np.testing.assert_array_equal(g.data, t.numpy())
        assert not g.requires_grad


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv2d_on_a_batch_matches_torch(dtype, torch):
    """A CNN-sized batch (8x3x20x20, 16 filters 3x3, padding 1, stride 2, groups 1 and 3): the output and the
    three gradients equal PyTorch's in float32 and float64."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 3, 20, 20)).astype(dtype)
    for groups in (1, 3):
        w = (rng.standard_normal((15, 3 // groups, 3, 3)) * 0.3).astype(dtype)
        b = rng.standard_normal(15).astype(dtype)
        res = []
        for m in (G, torch):
            ts = [m.tensor(a.copy(), requires_grad=True) for a in (x, w, b)]
            y = F(m).conv2d(*ts, stride=2, padding=1, groups=groups)
            (y * y).sum().backward()
            res.append([np.asarray(y.detach().numpy() if m is torch else y.data)] +
                       [np.asarray(t.grad.numpy() if m is torch else t.grad.data) for t in ts])
        tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-10}
        for a, b_ in zip(*res):
            assert a.dtype == b_.dtype
            np.testing.assert_allclose(a, b_, **tol)


def test_max_pool2d_nan_and_minus_inf_windows_match_torch(torch):
    """PyTorch's kernel (``val > maxval || isnan(val)``): the last NaN of a window wins, and a window of -inf
    (or padding only besides) keeps its first tap inside the input."""
    nan, inf = float("nan"), float("inf")
    data = [[[[nan, 1.0, nan, 2.0, -inf, -inf], [0.0, nan, 3.0, -inf, -inf, -inf], [1.0, 2.0, 3.0, -inf, -inf, 5.0]]]]
    for kw in ({"kernel_size": 2, "padding": 1}, {"kernel_size": (1, 4), "stride": 1},
               {"kernel_size": 3, "stride": 1, "padding": 1, "dilation": 2}):
        got, want = [], []
        for m, out in ((G, got), (torch, want)):
            v, i = F(m).max_pool2d(m.tensor(data), return_indices=True, **kw)
            out += [str(v.tolist()), i.tolist()]
        assert got == want, kw


@pytest.mark.parametrize("fn", [
    lambda: G.conv2d(G.ones(1, 1, 2, 2), G.ones(1, 1, 1, 1), padding=100_000),
    lambda: G.pad(G.ones(2, 2), (10**6, 10**6, 10**6, 0)),
    lambda: G.interpolate(G.ones(1, 1, 4, 4), scale_factor=10_000),
    lambda: G.max_pool2d(G.ones(1, 1, 3000, 3000), 5, 1)])
def test_huge_results_are_refused_before_allocating(fn):
    """gradcli's element limit (gradcli/engine/limits.py) stops an im2col matrix, a padded or resized result or a
    pool's windows before numpy allocates them."""
    with pytest.raises(Exception, match="elements per tensor"):
        fn()


def test_gradcli_grad_of_a_conv_expression_matches_torch(torch):
    """``gradcli grad`` on an expression of conv2d, reflect pad, max_pool2d and interpolate (as a user types it):
    the gradients and the graph's node names are PyTorch's."""
    import json
    import os
    import subprocess
    import sys

    x = [[[[1.0, -2.0, 0.5, 0.25], [3.0, 0.0, -1.0, 2.0], [2.0, 1.5, -0.5, -3.0]]]]
    w = [[[[0.5, -1.0], [2.0, 0.25]]], [[[1.0, 1.5], [-0.5, 2.0]]]]
    expr = "interpolate(max_pool2d(pad(conv2d(x, w, padding=1), (1, 1, 0, 1), mode='reflect'), 2), scale_factor=2).sum()"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-m", "gradcli", "grad", expr, "-i", f"x=tensor({x})", "-i", f"w=tensor({w})",
                        "--json"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    F_ = torch.nn.functional
    out = F_.interpolate(F_.max_pool2d(F_.pad(F_.conv2d(tx, tw, padding=1), (1, 1, 0, 1), mode="reflect"), 2),
                         scale_factor=2).sum()
    out.backward()
    assert got["output"]["value"] == pytest.approx(out.item(), rel=1e-6)
    np.testing.assert_allclose(got["grads"]["x"]["value"], tx.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(got["grads"]["w"]["value"], tw.grad.numpy(), rtol=1e-6)
    names = {n["name"] for n in got["graph"]["nodes"]}
    assert {"ConvolutionBackward0", "ReflectionPad2DBackward0", "MaxPool2DWithIndicesBackward0",
            "UpsampleNearest2DBackward0"} <= names

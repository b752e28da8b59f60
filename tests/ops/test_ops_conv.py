"""Convolution and pooling (issue 18, gradcli/ops/conv.py) beyond their op-table samples: PyTorch's error texts
for bad shapes, dtypes and arguments, max_pool2d's indices, Tensor.unfold (the windows op that shares F.unfold's
name), the float32 and integer results, and the conv kernels on the benchmark's size."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as G

from helpers import assert_raises_like_torch, grad_fn_name


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
    ("tensor-unfold-size", lambda m: _x(m, 3, 7).unfold(1, 8, 1)),
    ("tensor-unfold-step", lambda m: _x(m, 3, 7).unfold(1, 3, 0)),
    ("tensor-unfold-dim", lambda m: _x(m, 3, 7).unfold(2, 1, 1)),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in ERRORS])
def test_error_message_matches_torch(fn, torch):
    assert_raises_like_torch(fn, torch)

"""The elementwise ops and activations against PyTorch where the op table's samples (tests/ops/opinfo.py, run by
tests/ops/test_op_table.py) cannot go:

* kinks and edges at exact points (relu/abs/sign/leaky_relu/elu at 0, hardtanh/clamp at their bounds,
  maximum/minimum ties, sqrt at 0, softplus at its threshold, nan inputs): values, grad_fn names, first and
  second derivatives equal PyTorch's, in float32 and float64;
* special values (0, -0, tiny, huge, inf, nan, and every pair of them for binary ops): the same, op by op;
* dtypes and values for integer and bool inputs;
* error types and messages for common misuse;
* ``inplace=True``;
* the ops as a user reaches them: the CLI (``gradcli grad`` with ``torch.``/``F.`` prefixes, methods, keyword
  arguments) and ``gradcli ops``' notes.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

import gradcli as G

from helpers import assert_raises_like_torch, autograd_grad, grad_fn_name, to_np
from opinfo import OP_DB
from gradcli.frontends.cli import app


def F(m):
    """torch.nn.functional for torch, gradcli itself for gradcli (one namespace)."""
    return m if m is G else m.nn.functional


NAN, INF = float("nan"), float("inf")

# ============================================================================================ kinks
KINKS = [  # id, fn(m, *tensors), input values (every input requires grad)
    ("relu-at-0", lambda m, x: F(m).relu(x), [[-1.0, 0.0, 1.0]]),
    ("relu-method-at-0", lambda m, x: x.relu(), [[-0.0, 0.0, 2.0]]),
    ("relu-nan", lambda m, x: F(m).relu(x), [[NAN, -1.0]]),
    ("abs-at-0", lambda m, x: m.abs(x), [[-1.0, 0.0, -0.0, 1.0]]),
    ("sign-at-0", lambda m, x: m.sign(x) * x, [[-1.0, 0.0, 1.0]]),
    ("leaky-relu-at-0", lambda m, x: F(m).leaky_relu(x), [[-1.0, 0.0, 1.0]]),
    ("leaky-relu-slope-0.2-at-0", lambda m, x: F(m).leaky_relu(x, 0.2), [[-1.0, 0.0, 1.0]]),
    ("leaky-relu-negative-slope-at-0", lambda m, x: F(m).leaky_relu(x, negative_slope=-0.5), [[-1.0, 0.0, 1.0]]),
    ("leaky-relu-nan", lambda m, x: F(m).leaky_relu(x), [[NAN]]),
    ("elu-at-0", lambda m, x: F(m).elu(x), [[-1.0, 0.0, 1.0]]),
    ("elu-alpha-0.5-at-0", lambda m, x: F(m).elu(x, alpha=0.5), [[-1.0, 0.0, 1.0]]),
    ("selu-at-0", lambda m, x: F(m).selu(x), [[-1.0, 0.0, 1.0]]),
    ("elu-squared-at-0", lambda m, x: F(m).elu(x) * F(m).elu(x), [[-0.5, 0.0, 0.5]]),
    ("hardtanh-at-bounds", lambda m, x: F(m).hardtanh(x), [[-2.0, -1.0, 0.0, 1.0, 2.0]]),
    ("hardtanh-custom-bounds", lambda m, x: F(m).hardtanh(x, -0.5, 0.25), [[-0.5, 0.0, 0.25, 0.3]]),
    ("hardtanh-nan", lambda m, x: F(m).hardtanh(x), [[NAN]]),
    ("relu6-at-0-and-6", lambda m, x: F(m).relu6(x), [[-1.0, 0.0, 3.0, 6.0, 7.0]]),
    ("clamp-at-bounds", lambda m, x: m.clamp(x, -1.0, 1.0), [[-2.0, -1.0, 0.0, 1.0, 2.0]]),
    ("clamp-min-at-bound", lambda m, x: m.clamp(x, min=0.0), [[-1.0, 0.0, 1.0]]),
    ("clamp-max-at-bound", lambda m, x: m.clamp(x, max=0.0), [[-1.0, 0.0, 1.0]]),
    ("clamp-min-above-max", lambda m, x: m.clamp(x, 1.0, -1.0), [[-2.0, -1.0, 0.0, 1.0, 2.0]]),
    ("clamp-equal-bounds", lambda m, x: m.clamp(x, 0.5, 0.5), [[0.0, 0.5, 1.0]]),
    ("clamp-nan", lambda m, x: m.clamp(x, -1.0, 1.0), [[NAN, 0.0]]),
    ("clip-at-bounds", lambda m, x: m.clip(x, -1.0, 1.0), [[-1.0, 1.0]]),
    ("clamp-tensor-ties", lambda m, x, lo, hi: m.clamp(x, lo, hi),
     [[-1.0, 0.0, 1.0, 2.0, 0.5, 3.0], [-1.0, -1.0, 0.0, 3.0, 1.0, 1.0], [1.0, 0.0, 1.0, 2.0, 0.0, 1.0]]),
    ("clamp-tensor-min-ties", lambda m, x, lo: m.clamp(x, min=lo), [[-1.0, 0.0, 1.0], [-1.0, 1.0, 0.0]]),
    ("clamp-tensor-max-ties", lambda m, x, hi: m.clamp(x, max=hi), [[-1.0, 0.0, 1.0], [-1.0, 1.0, 0.0]]),
    ("maximum-ties", lambda m, a, b: m.maximum(a, b), [[1.0, 2.0, 3.0, 0.0], [1.0, 1.0, 4.0, -0.0]]),
    ("minimum-ties", lambda m, a, b: m.minimum(a, b), [[1.0, 2.0, 3.0, 0.0], [1.0, 1.0, 4.0, -0.0]]),
    ("maximum-nan", lambda m, a, b: m.maximum(a, b), [[NAN, 1.0, NAN], [1.0, NAN, NAN]]),
    ("minimum-nan", lambda m, a, b: m.minimum(a, b), [[NAN, 1.0], [1.0, NAN]]),
    ("maximum-ties-squared", lambda m, a, b: m.maximum(a * a, b * b), [[1.0, -2.0, 0.0], [-1.0, 2.0, 0.0]]),
    ("maximum-broadcast-ties", lambda m, a, b: m.maximum(a, b), [[[0.0], [1.0]], [0.0, 1.0, 2.0]]),
    ("sqrt-at-0", lambda m, x: m.sqrt(x), [[0.0, 1.0]]),
    ("rsqrt-at-0", lambda m, x: m.rsqrt(x), [[0.0, 4.0]]),
    ("log-at-0", lambda m, x: m.log(x), [[0.0, 1.0]]),
    ("log2-log10-at-0", lambda m, x: m.log2(x) + m.log10(x), [[0.0, 1.0]]),
    ("log1p-at-minus-1", lambda m, x: m.log1p(x), [[-1.0, 0.0]]),
    ("reciprocal-at-0", lambda m, x: m.reciprocal(x), [[0.0, -0.0, 2.0]]),
    ("pow-0.5-at-0", lambda m, x: x ** 0.5, [[0.0, 4.0]]),
    ("pow-2-at-0", lambda m, x: x ** 2, [[0.0, -1.0]]),
    ("pow-0-at-0", lambda m, x: x ** 0, [[0.0, 2.0]]),
    ("square-at-0", lambda m, x: m.square(x), [[0.0, -1.5]]),
    ("pow-tensor-at-0", lambda m, x, e: m.pow(x, e), [[0.0, 0.0, 0.0, 2.0], [0.0, 2.0, 0.5, 0.0]]),
    ("asin-acos-at-1", lambda m, x: m.asin(x) + m.acos(-x), [[1.0, -1.0, 0.0]]),
    ("atan2-at-origin", lambda m, a, b: m.atan2(a, b), [[0.0, 0.0, 1.0], [0.0, -1.0, 0.0]]),
    ("softplus-at-threshold", lambda m, x: F(m).softplus(x, beta=2.0, threshold=1.0), [[0.4, 0.5, 0.6]]),
    ("softplus-default-threshold", lambda m, x: F(m).softplus(x), [[19.5, 20.0, 20.5]]),
    ("gelu-at-0", lambda m, x: F(m).gelu(x), [[-1.0, 0.0, 1.0]]),
    ("gelu-tanh-at-0", lambda m, x: F(m).gelu(x, approximate="tanh"), [[-1.0, 0.0, 1.0]]),
    ("silu-at-0", lambda m, x: F(m).silu(x), [[-1.0, 0.0, 1.0]]),
    ("div-floor-at-integers", lambda m, a, b: m.div(a, b, rounding_mode="floor"), [[4.0, -4.0, 3.0], [2.0, 2.0, 0.0]]),
    ("div-trunc", lambda m, a, b: m.div(a, b, rounding_mode="trunc"), [[3.5, -3.5], [2.0, 2.0]]),
    ("where-nan-branch", lambda m, x: m.where(x > 0, x, m.sqrt(x)), [[4.0, -1.0]]),
]


def _kink_run(m, fn, values, dtype):
    """Output, first derivatives (create_graph) and second derivatives (of sum(g * u)) of fn at the points."""
    xs = [m.tensor(v, dtype=dtype, requires_grad=True) for v in values]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(m, *xs)
        v = m.ones_like(out)
        first = autograd_grad(m)(out, xs, grad_outputs=v, create_graph=True, allow_unused=True)
        terms = [(g * (k + 1.5)).sum() for k, g in enumerate(first) if g is not None and g.requires_grad]
        second = [None] * len(xs)
        if terms:
            total = terms[0]
            for t in terms[1:]:
                total = total + t
            second = autograd_grad(m)(total, xs, allow_unused=True)
    return out, first, second


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn, values", [pytest.param(f, v, id=i) for i, f, v in KINKS])
def test_kinks_against_torch(fn, values, dtype, torch):
    out_g, first_g, second_g = _kink_run(G, fn, values, getattr(G, dtype))
    out_t, first_t, second_t = _kink_run(torch, fn, values, getattr(torch, dtype))
    assert str(out_g.dtype) == str(out_t.dtype)
    assert grad_fn_name(out_g) == grad_fn_name(out_t)
    np.testing.assert_allclose(to_np(out_g), to_np(out_t), rtol=1e-6, atol=0, equal_nan=True, err_msg="value")
    for order, got, want in (("first", first_g, first_t), ("second", second_g, second_t)):
        for k, (a, b) in enumerate(zip(got, want)):
            if a is None or b is None:  # a zero gradient may be materialised on one side and not the other
                other = b if a is None else a
                assert other is None or not np.any(to_np(other)), f"{order} derivative of input {k}: {a} vs {b}"
                continue
            np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-6, atol=0, equal_nan=True,
                                       err_msg=f"{order} derivative of input {k}")


def test_kink_conventions_explicitly():
    """The conventions themselves, independent of torch (documented in the ops' notes)."""
    x = G.tensor([-1.0, 0.0, 1.0], requires_grad=True)
    for f, want in ((G.relu, [0, 0, 1]), (G.abs, [-1, 0, 1]), (lambda t: G.leaky_relu(t, 0.2), [0.2, 0.2, 1]),
                    (lambda t: G.elu(t, 0.5), [0.5 * np.exp(-1), 0.5, 1]),
                    (lambda t: G.clamp(t, -1.0, 1.0), [1, 1, 1]), (G.hardtanh, [0, 1, 0])):
        x.grad = None
        f(x).sum().backward()
        np.testing.assert_allclose(x.grad.data, want, rtol=1e-6)
    a = G.tensor([1.0, 2.0], requires_grad=True)
    b = G.tensor([1.0, 3.0], requires_grad=True)
    G.maximum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 0.0] and b.grad.tolist() == [0.5, 1.0]


# =============================================================================== special values
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-30, -1e-30, 1e-8, 30.0, -30.0, 100.0, -100.0, 1e30, -1e30,
           INF, -INF, NAN]
UNARY_SPECIAL = {  # fn(m, x) applied to every value of SPECIAL at once
    "exp": lambda m, x: m.exp(x), "exp2": lambda m, x: m.exp2(x), "expm1": lambda m, x: m.expm1(x),
    "log": lambda m, x: m.log(x), "log2": lambda m, x: m.log2(x), "log10": lambda m, x: m.log10(x),
    "log1p": lambda m, x: m.log1p(x), "sqrt": lambda m, x: m.sqrt(x), "rsqrt": lambda m, x: m.rsqrt(x),
    "square": lambda m, x: m.square(x), "reciprocal": lambda m, x: m.reciprocal(x), "abs": lambda m, x: m.abs(x),
    "sign": lambda m, x: m.sign(x), "neg": lambda m, x: m.neg(x), "sin": lambda m, x: m.sin(x),
    "cos": lambda m, x: m.cos(x), "tan": lambda m, x: m.tan(x), "asin": lambda m, x: m.asin(x),
    "acos": lambda m, x: m.acos(x), "atan": lambda m, x: m.atan(x), "sinh": lambda m, x: m.sinh(x),
    "cosh": lambda m, x: m.cosh(x), "tanh": lambda m, x: m.tanh(x), "sigmoid": lambda m, x: m.sigmoid(x),
    "erf": lambda m, x: m.erf(x), "relu": lambda m, x: F(m).relu(x), "relu6": lambda m, x: F(m).relu6(x),
    "leaky_relu": lambda m, x: F(m).leaky_relu(x, 0.1), "elu": lambda m, x: F(m).elu(x),
    "selu": lambda m, x: F(m).selu(x), "gelu": lambda m, x: F(m).gelu(x),
    "gelu-tanh": lambda m, x: F(m).gelu(x, approximate="tanh"), "silu": lambda m, x: F(m).silu(x),
    "softplus": lambda m, x: F(m).softplus(x), "softplus-beta": lambda m, x: F(m).softplus(x, beta=2, threshold=5),
    "hardtanh": lambda m, x: F(m).hardtanh(x), "clamp": lambda m, x: m.clamp(x, -1, 1),
    "pow-2.5": lambda m, x: x ** 2.5, "pow--1": lambda m, x: x ** -1, "pow-0": lambda m, x: x ** 0,
    "pow-3": lambda m, x: x ** 3, "rpow": lambda m, x: 2.0 ** x, "remainder": lambda m, x: x % 1.5,
    "div-floor": lambda m, x: m.div(x, 0.7, rounding_mode="floor"),
    "div-trunc": lambda m, x: m.div(x, -0.7, rounding_mode="trunc"),
    "maximum": lambda m, x: m.maximum(x, m.zeros_like(x)), "atan2": lambda m, x: m.atan2(x, m.ones_like(x) * 0.5),
    "atan2-other": lambda m, x: m.atan2(m.ones_like(x) * 0.5, x), "atan2-same": lambda m, x: m.atan2(x, x),
}
# every pair of these (1e-30 is left out: torch's vectorised float32 fmod returns nan for 1e30 % 1e-30, where the
# exact remainder is tiny)
PAIR_VALUES = [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 30.0, -100.0, 1e30, INF, -INF, NAN]
BINARY_SPECIAL = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b, "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b, "rsub": lambda m, a, b: m.rsub(a, b), "pow": lambda m, a, b: m.pow(a, b),
    "atan2": lambda m, a, b: m.atan2(a, b), "maximum": lambda m, a, b: m.maximum(a, b),
    "minimum": lambda m, a, b: m.minimum(a, b), "remainder": lambda m, a, b: a % b,
    "div-floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "div-trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "clamp-min": lambda m, a, b: m.clamp(a, min=b), "clamp-max": lambda m, a, b: m.clamp(a, max=b),
    "clamp": lambda m, a, b: m.clamp(a, b, b + 1), "where": lambda m, a, b: m.where(a > b, a, b),
}


def _first_and_second(m, fn, values, dtype):
    xs = [m.tensor(v, dtype=getattr(m, dtype), requires_grad=True) for v in values]
    out = fn(m, *xs)
    first = autograd_grad(m)(out.sum(), xs, create_graph=True)
    terms = [g.sum() * (k + 1) for k, g in enumerate(first) if g.requires_grad]
    second = autograd_grad(m)(sum(terms[1:], terms[0]), xs, allow_unused=True) if terms else [None] * len(xs)
    return [out] + list(first) + list(second)


def _compare_special(fn, values, dtype, torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _first_and_second(G, fn, values, dtype)
        want = _first_and_second(torch, fn, values, dtype)
    rtol = 1e-5 if dtype == "float32" else 1e-10
    n = len(values)
    labels = ["value"] + [f"first derivative {k}" for k in range(n)] + [f"second derivative {k}" for k in range(n)]
    for k, (label, a, b) in enumerate(zip(labels, got, want)):
        a = np.zeros(len(values[0])) if a is None else to_np(a)
        b = np.zeros(len(values[0])) if b is None else to_np(b)
        bad = ~np.isclose(a, b, rtol=rtol, atol=1e-30, equal_nan=True)
        for i in np.nonzero(bad)[0]:
            # PyTorch's vectorised float32 kernels can differ from its scalar ones at special points (on AVX-512,
            # gelu(inf) is nan for 8 or more elements and inf for one): the scalar kernel, run on the element
            # alone, is PyTorch's answer too
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                alone = _first_and_second(torch, fn, [[v[i]] for v in values], dtype)[k]
            alone = np.zeros(1) if alone is None else to_np(alone)
            bad[i] = not np.isclose(a[i], alone[0], rtol=rtol, atol=1e-30, equal_nan=True)
        assert not bad.any(), (f"{label} at {[tuple(v[i] for v in values) for i in np.nonzero(bad)[0]]}: "
                               f"{a[bad]} vs {b[bad]}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(UNARY_SPECIAL))
def test_unary_special_values_against_torch(name, dtype, torch):
    """0, -0, tiny, huge, inf and nan: values, first and second derivatives equal PyTorch's."""
    _compare_special(UNARY_SPECIAL[name], [SPECIAL], dtype, torch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(BINARY_SPECIAL))
def test_binary_special_values_against_torch(name, dtype, torch):
    a = [x for x in PAIR_VALUES for _ in PAIR_VALUES]
    b = [y for _ in PAIR_VALUES for y in PAIR_VALUES]
    _compare_special(BINARY_SPECIAL[name], [a, b], dtype, torch)


# ======================================================================================= dtypes
DTYPES = [  # id, fn(m) -> Tensor: dtype and values equal torch's
    ("exp2-int", lambda m: m.exp2(m.tensor([-1, 0, 3]))),
    ("expm1-bool", lambda m: m.expm1(m.tensor([True, False]))),
    ("log2-int", lambda m: m.log2(m.tensor([1, 8]))),
    ("log10-int", lambda m: m.log10(m.tensor([1, 100]))),
    ("log1p-int", lambda m: m.log1p(m.tensor([0, 3]))),
    ("rsqrt-int", lambda m: m.rsqrt(m.tensor([1, 4]))),
    ("sin-bool", lambda m: m.sin(m.tensor([True, False]))),
    ("cosh-int32", lambda m: m.cosh(m.tensor([1, 2], dtype=m.int32))),
    ("atan-int", lambda m: m.atan(m.tensor([1, -2]))),
    ("erf-int", lambda m: m.erf(m.tensor([0, 1, -2]))),
    ("erf-float64", lambda m: m.erf(m.tensor([0.5, -3.0, 6.0], dtype=m.float64))),
    ("atan2-int-bool", lambda m: m.atan2(m.tensor([1, -2, 3]), m.tensor([True, False, True]))),
    ("atan2-float32-float64-0d", lambda m: m.atan2(m.tensor([1.0, 2.0]), m.tensor(2.0, dtype=m.float64))),
    ("square-int", lambda m: m.square(m.tensor([-3, 2]))),
    ("square-int32", lambda m: m.square(m.tensor([-3, 2], dtype=m.int32))),
    ("square-bool", lambda m: m.square(m.tensor([True, False]))),
    ("pow-bool-2", lambda m: m.pow(m.tensor([True, False]), 2)),
    ("pow-bool-2.0", lambda m: m.pow(m.tensor([True, False]), 2.0)),
    ("pow-int32-2", lambda m: m.pow(m.tensor([3], dtype=m.int32), 2)),
    ("maximum-int32-int64", lambda m: m.maximum(m.tensor([3, -1], dtype=m.int32), m.tensor([1, 2]))),
    ("maximum-int-float", lambda m: m.maximum(m.tensor([3, -1]), m.tensor([1.5, 2.5]))),
    ("maximum-bool", lambda m: m.maximum(m.tensor([True, False]), m.tensor([False, False]))),
    ("minimum-float32-float64-0d", lambda m: m.minimum(m.tensor([1.0, 3.0]), m.tensor(2.0, dtype=m.float64))),
    ("clamp-int-float-bound", lambda m: m.clamp(m.tensor([1, -2, 3]), 0.5)),
    ("clamp-int-int-bounds", lambda m: m.clamp(m.tensor([1, -2, 3]), 0, 2)),
    ("clamp-bool", lambda m: m.clamp(m.tensor([True, False]), 0, 1)),
    ("clamp-float-int-bounds", lambda m: m.clamp(m.tensor([1.5, -2.0]), -1, 1)),
    ("clamp-int-float-tensor-bound", lambda m: m.clamp(m.tensor([1, -2, 3]), min=m.tensor(0.5))),
    ("clamp-float32-float64-bound", lambda m: m.clamp(m.tensor([1.0, -2.0]), m.tensor([0.0, 0.0], dtype=m.float64))),
    ("clamp-broadcast-bound", lambda m: m.clamp(m.tensor([1.0, -2.0, 3.0]), min=m.zeros(2, 1))),
    ("clamp-nan-bound", lambda m: m.clamp(m.tensor([1.0, -2.0]), min=float("nan"))),
    ("hardtanh-int", lambda m: F(m).hardtanh(m.tensor([3, -2, 0]))),
    ("hardtanh-int-fractional-bounds", lambda m: F(m).hardtanh(m.tensor([3, -2, 0]), -1.5, 1.5)),
    ("relu6-int", lambda m: F(m).relu6(m.tensor([-1, 3, 9]))),
    ("relu-int32", lambda m: F(m).relu(m.tensor([-1, 3], dtype=m.int32))),
    ("sign-bool", lambda m: m.sign(m.tensor([True, False]))),
    ("sign-uint8", lambda m: m.sign(m.tensor([1, 0], dtype=m.uint8))),
    ("sign-int", lambda m: m.sign(m.tensor([-4, 0, 2]))),
    ("abs-int8-min", lambda m: m.abs(m.tensor([-128, 5], dtype=m.int8))),
    ("div-floor-int", lambda m: m.div(m.tensor([7, -7, 7, -7]), m.tensor([2, 2, -2, -2]), rounding_mode="floor")),
    ("div-trunc-int", lambda m: m.div(m.tensor([7, -7, 7, -7]), m.tensor([2, 2, -2, -2]), rounding_mode="trunc")),
    ("div-trunc-int-scalar", lambda m: m.div(m.tensor([7, -7, 6]), 3, rounding_mode="trunc")),
    ("div-floor-int-float-scalar", lambda m: m.div(m.tensor([7, -7]), 2.5, rounding_mode="floor")),
    ("div-floor-float", lambda m: m.div(m.tensor([7.5, -7.5, 0.3]), m.tensor([2.0, 2.0, 0.1]), rounding_mode="floor")),
    ("div-trunc-float", lambda m: m.div(m.tensor([7.5, -7.5]), 2.0, rounding_mode="trunc")),
    ("div-floor-by-zero", lambda m: m.div(m.tensor([1.0, -2.0, 0.0]), 0.0, rounding_mode="floor")),
    ("div-trunc-by-zero", lambda m: m.div(m.tensor([1.0, -2.0, 0.0]), 0.0, rounding_mode="trunc")),
    ("div-none-int", lambda m: m.div(m.tensor([7, -7]), m.tensor([2, 2]), rounding_mode=None)),
    ("div-int", lambda m: m.div(m.tensor([7, -7]), 2)),
    ("floordiv-float", lambda m: m.tensor([3.5, -2.5, 4.0]) // m.tensor([2.0, 2.0, -3.0])),
    ("floordiv-int", lambda m: m.tensor([7, -7, 7]) // m.tensor([2, 2, -2])),
    ("floordiv-int-float-scalar", lambda m: m.tensor([7, -7]) // 2.5),
    ("rfloordiv-scalar", lambda m: 7 // m.tensor([2.0, -3.0])),
    ("floor-divide-function", lambda m: m.floor_divide(m.tensor([7, -7]), m.tensor([2, 2]))),
    ("floor-divide-method", lambda m: m.tensor([7.5, -7.5]).floor_divide(2)),
    ("mod-float", lambda m: m.tensor([3.5, -2.5, 4.0, -4.0]) % m.tensor([2.0, 2.0, -3.0, 2.0])),
    ("mod-int", lambda m: m.tensor([7, -7, 7, -7]) % m.tensor([2, 2, -2, -2])),
    ("mod-int-float-scalar", lambda m: m.tensor([7, -7]) % 2.5),
    ("mod-float-by-zero", lambda m: m.tensor([1.0, -2.0]) % 0.0),
    ("rmod-scalar", lambda m: 7 % m.tensor([2.0, -3.0])),
    ("remainder-method", lambda m: m.tensor([7.5, -7.5]).remainder(2)),
    ("true-divide-int", lambda m: m.true_divide(m.tensor([7, -7]), m.tensor([2, 4]))),
    ("where-scalars", lambda m: m.where(m.tensor([True, False]), 1.0, 0)),
    ("where-int-scalars", lambda m: m.where(m.tensor([True, False]), 1, 0)),
    ("rsub-int-float-scalar", lambda m: m.rsub(m.tensor([1, 2]), 0.5)),
    ("rsub-int-tensor", lambda m: m.rsub(m.tensor([1, 2]), m.tensor([5, 5], dtype=m.int32))),
    ("sub-alpha-int", lambda m: m.sub(m.tensor([1, 2]), m.tensor([1, 1]), alpha=3)),
    ("add-bool-alpha-true", lambda m: m.add(m.tensor([True, False]), m.tensor([False, False]), alpha=True)),
    ("gelu-float64", lambda m: F(m).gelu(m.tensor([-3.0, 0.5, 2.0], dtype=m.float64))),
    ("softplus-beta-0", lambda m: F(m).softplus(m.tensor([1.0, -2.0]), beta=0)),
    ("comparison-nan", lambda m: m.tensor([NAN, 1.0]) == m.tensor([NAN, 1.0])),
    ("lt-int-float-scalar", lambda m: m.lt(m.tensor([0, 1]), 0.5)),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in DTYPES])
def test_dtypes_and_values_against_torch(fn, torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out_t = fn(torch)
    out_g = fn(G)
    assert str(out_g.dtype) == str(out_t.dtype)
    assert tuple(out_g.shape) == tuple(out_t.shape)
    np.testing.assert_allclose(to_np(out_g), to_np(out_t), rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in DTYPES if "float" in i or "int" not in i])
def test_dtypes_with_default_float64(fn, torch):
    G.set_default_dtype(G.float64)
    prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        out_g, out_t = fn(G), fn(torch)
    finally:
        torch.set_default_dtype(prev)
    assert str(out_g.dtype) == str(out_t.dtype)
    np.testing.assert_allclose(to_np(out_g), to_np(out_t), rtol=1e-12, equal_nan=True)


# ======================================================================================= errors
f3, i3, b3 = ([1.0, -2.0, 3.0], [1, -2, 3], [True, False, True])
ERRORS = [  # id, fn(m) that raises: same exception type and message as torch
    ("bitwise-and-double", lambda m: m.ones(2, dtype=m.float64) & m.ones(2, dtype=m.float64)),
    ("bitwise-or-float", lambda m: m.bitwise_or(m.ones(2), m.ones(2))),
    ("bitwise-xor-float", lambda m: m.ones(2) ^ m.ones(2)),
    ("bitwise-and-int-float", lambda m: m.tensor(i3) & m.tensor(f3)),
    ("bitwise-and-int-float-scalar", lambda m: m.tensor(i3) & 1.5),
    ("leaky-relu-int", lambda m: F(m).leaky_relu(m.tensor(i3))),
    ("leaky-relu-bool", lambda m: F(m).leaky_relu(m.tensor(b3))),
    ("elu-int", lambda m: F(m).elu(m.tensor(i3))),
    ("selu-int", lambda m: F(m).selu(m.tensor(i3))),
    ("gelu-int", lambda m: F(m).gelu(m.tensor(i3))),
    ("gelu-bool", lambda m: F(m).gelu(m.tensor(b3))),
    ("silu-int", lambda m: F(m).silu(m.tensor(i3))),
    ("softplus-int", lambda m: F(m).softplus(m.tensor(i3))),
    ("relu-bool", lambda m: F(m).relu(m.tensor(b3))),
    ("hardtanh-bool", lambda m: F(m).hardtanh(m.tensor(b3))),
    ("relu6-bool", lambda m: F(m).relu6(m.tensor(b3))),
    ("gelu-bad-approximate", lambda m: F(m).gelu(m.tensor(f3), approximate="fast")),
    ("hardtanh-min-above-max", lambda m: F(m).hardtanh(m.tensor(f3), 1.0, -1.0)),
    ("abs-bool", lambda m: m.abs(m.tensor(b3))),
    ("clamp-without-bounds", lambda m: m.clamp(m.tensor(f3))),
    ("clip-without-bounds", lambda m: m.tensor(f3).clip()),
    ("maximum-number-other", lambda m: m.maximum(m.tensor(f3), 1.0)),
    ("maximum-number-input", lambda m: m.maximum(1.0, m.tensor(f3))),
    ("minimum-list-other", lambda m: m.minimum(m.tensor(f3), [1.0, 2.0, 3.0])),
    ("atan2-number-other", lambda m: m.atan2(m.tensor(f3), 1.0)),
    ("div-bad-rounding-mode", lambda m: m.div(m.tensor(f3), 2.0, rounding_mode="round")),
    ("div-floor-int-by-zero", lambda m: m.div(m.tensor(i3), 0, rounding_mode="floor")),
    ("div-trunc-int-by-zero-tensor", lambda m: m.div(m.tensor(i3), m.tensor([1, 0, 1]), rounding_mode="trunc")),
    ("div-floor-bool", lambda m: m.div(m.tensor(b3), m.tensor(b3), rounding_mode="floor")),
    ("div-trunc-bool", lambda m: m.div(m.tensor(b3), m.tensor(b3), rounding_mode="trunc")),
    ("sub-bool-int", lambda m: m.tensor(b3) - 1),
    ("rsub-int-bool", lambda m: 1 - m.tensor(b3)),
    ("rsub-bool-bool", lambda m: m.rsub(m.tensor(b3), m.tensor(b3))),
    ("sub-bool-float", lambda m: m.tensor(b3) - m.tensor(f3)),
    ("sub-bool-python-bool", lambda m: m.tensor(b3) - True),
    ("sub-int-float-alpha", lambda m: m.sub(m.tensor(i3), m.tensor(i3), alpha=0.5)),
    ("add-int-float-alpha", lambda m: m.add(m.tensor(i3), 2, alpha=1.5)),
    ("add-bool-alpha-float-tensors", lambda m: m.add(m.tensor(f3), m.tensor(f3), alpha=True)),
    ("rsub-int-float-alpha", lambda m: m.rsub(m.tensor(i3), m.tensor(i3), alpha=0.5)),
    ("add-size-mismatch", lambda m: m.tensor(f3) + m.ones(4)),
    ("mul-size-mismatch-2d", lambda m: m.ones(2, 3) * m.ones(3, 2)),
    ("sub-size-mismatch", lambda m: m.ones(2, 3) - m.ones(2, 2)),
    ("div-size-mismatch-middle", lambda m: m.ones(3, 2, 2) / m.ones(4, 2)),
    ("div-floor-size-mismatch", lambda m: m.div(m.ones(3), m.ones(2), rounding_mode="floor")),
    ("pow-size-mismatch", lambda m: m.ones(3) ** m.ones(2)),
    ("atan2-size-mismatch", lambda m: m.atan2(m.ones(2, 3), m.ones(4))),
    ("maximum-size-mismatch", lambda m: m.maximum(m.ones(3), m.ones(4))),
    ("minimum-size-mismatch", lambda m: m.minimum(m.ones(3, 1), m.ones(2, 4))),
    ("eq-size-mismatch", lambda m: m.ones(3) == m.ones(4)),
    ("lt-size-mismatch", lambda m: m.lt(m.ones(2, 3), m.ones(3, 2))),
    ("bitwise-size-mismatch", lambda m: m.tensor(b3) & m.tensor([True, False])),
    ("where-size-mismatch", lambda m: m.where(m.tensor(b3), m.ones(3), m.ones(4))),
    ("where-size-mismatch-condition", lambda m: m.where(m.tensor([True, False]), m.ones(3), m.ones(3))),
    ("where-float-condition", lambda m: m.where(m.ones(3), m.ones(3), m.zeros(3))),
    ("clamp-tensor-size-mismatch", lambda m: m.clamp(m.ones(3), m.zeros(4), m.ones(3))),
    ("clamp-tensor-max-size-mismatch", lambda m: m.clamp(m.ones(3), m.zeros(3), m.ones(2))),
    ("int-negative-power", lambda m: m.pow(m.tensor(i3), -2)),
    ("floordiv-int-by-zero", lambda m: m.tensor(i3) // 0),
    ("floordiv-bool", lambda m: m.tensor(b3) // m.tensor(b3)),
    ("mod-int-by-zero", lambda m: m.tensor(i3) % m.tensor([1, 0, 1])),
    ("mod-bool", lambda m: m.tensor(b3) % m.tensor(b3)),
    ("mod-size-mismatch", lambda m: m.ones(3) % m.ones(2)),
    ("floordiv-backward", lambda m: (m.ones(3, requires_grad=True) // 2).sum().backward()),
    ("rfloordiv-backward", lambda m: (2 // m.ones(3, requires_grad=True)).sum().backward()),
    ("rmod-backward", lambda m: (2 % m.ones(3, requires_grad=True)).sum().backward()),
    ("relu-inplace-leaf-requires-grad", lambda m: F(m).relu(m.ones(3, requires_grad=True), inplace=True)),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in ERRORS])
def test_error_message_matches_torch(fn, torch):
    assert_raises_like_torch(fn, torch)


@pytest.mark.parametrize("fn", [lambda m, x: x // 2, lambda m, x: 3 // x, lambda m, x: m.floor_divide(x, x),
                                lambda m, x: 3 % x], ids=["floordiv", "rfloordiv", "floor_divide", "rmod"])
def test_ops_without_derivative_record_not_implemented_like_torch(fn, torch):
    for m in (G, torch):
        out = fn(m, m.tensor([1.5, -2.0], requires_grad=True))
        assert out.requires_grad and grad_fn_name(out) == "NotImplemented"
        with m.no_grad():
            assert fn(m, m.tensor([1.5, -2.0], requires_grad=True)).grad_fn is None


def test_clamp_mixed_bounds_is_a_type_error(torch):
    """torch's argument parser lists its overloads; gradcli says the same without the ``out`` argument."""
    for m in (torch, G):
        with pytest.raises(TypeError, match=r"clamp\(\) received an invalid combination of arguments"):
            m.clamp(m.ones(3), min=m.zeros(3), max=1.0)


def test_inplace_activation_on_a_nonleaf_that_requires_grad_is_refused():
    y = G.ones(3, requires_grad=True) * 2
    with pytest.raises(NotImplementedError, match="inplace=False"):
        G.relu(y, inplace=True)


# ======================================================================================== inplace
INPLACE = [  # id, fn(m, x) with inplace=True
    ("relu", lambda m, x: F(m).relu(x, inplace=True)),
    ("leaky-relu", lambda m, x: F(m).leaky_relu(x, 0.1, inplace=True)),
    ("elu", lambda m, x: F(m).elu(x, inplace=True)),
    ("selu", lambda m, x: F(m).selu(x, inplace=True)),
    ("silu", lambda m, x: F(m).silu(x, inplace=True)),
    ("hardtanh", lambda m, x: F(m).hardtanh(x, -0.5, 0.5, inplace=True)),
    ("relu6", lambda m, x: F(m).relu6(x * 4, inplace=True)),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in INPLACE])
def test_inplace_writes_into_the_input_like_torch(fn, torch):
    data = [-1.5, -0.25, 0.0, 0.75, 2.0]
    results = []
    for m in (G, torch):
        x = m.tensor(data)
        out = fn(m, x)
        results.append((to_np(out).copy(), to_np(x).copy(), out is x))
        with m.no_grad():  # in-place under no_grad on a tensor that requires grad is allowed
            w = m.tensor(data, requires_grad=True)
            assert fn(m, w) is not None
            results.append(to_np(w).copy())
    (out_g, x_g, same_g), w_g, (out_t, x_t, same_t), w_t = results
    np.testing.assert_allclose(out_g, out_t, rtol=1e-6)
    np.testing.assert_allclose(x_g, x_t, rtol=1e-6)
    np.testing.assert_allclose(w_g, w_t, rtol=1e-6)
    assert same_g == same_t


# ============================================================================== the op table's notes
def test_every_elementwise_op_and_activation_has_a_note_and_grad_fn():
    """The ops of the elementwise and activation families of the op table (tests/ops/opinfo.py), aliases
    included, show their derivative note, grad_fn (None for comparisons) and PyTorch counterpart in
    ``gradcli ops --json``."""
    names = [n for op in OP_DB if op.family in ("elementwise", "activation") for n in (op.name, *op.aliases)]
    assert {"gelu", "clamp", "maximum", "atan2", "square", "relu6", "div"} <= set(names)
    r = runner.invoke(app, ["ops", "--json"])
    assert r.exit_code == 0, r.output
    listed = {e["name"]: e for e in json.loads(r.stdout)}
    for n in names:
        e = listed[n]
        assert e["derivative"], f"{n} has no derivative note"
        assert e["grad_fn"] is None or e["grad_fn"], n  # comparisons: None
        assert "Matches torch" in e["summary"], n


# ============================================================================================ CLI
runner = CliRunner()


def cli_json(*args):
    r = runner.invoke(app, ["grad", *args, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


CLI = [  # program, inputs (name -> list), the same computation in torch
    ("F.gelu(x, approximate='tanh').sum()", {"x": [-1.0, 0.0, 2.0]},
     lambda t, F, x: F.gelu(x, approximate="tanh").sum()),
    ("torch.clamp(x, min=-1, max=1).sum()", {"x": [-2.0, -1.0, 0.5, 1.0]},
     lambda t, F, x: t.clamp(x, min=-1, max=1).sum()),
    ("maximum(x, y).sum()", {"x": [1.0, 2.0, 3.0], "y": [1.0, 5.0, 0.0]},
     lambda t, F, x, y: t.maximum(x, y).sum()),
    ("x.clip(0, 2).square().sum() + F.leaky_relu(x, 0.2).sum()", {"x": [-1.0, 0.0, 3.0]},
     lambda t, F, x: x.clip(0, 2).square().sum() + F.leaky_relu(x, 0.2).sum()),
    ("import torch.nn.functional as F\ny = F.softplus(x, beta=2) + F.elu(x, alpha=0.5)\n(y * F.silu(x)).mean()",
     {"x": [-1.5, 0.0, 0.5]}, lambda t, F, x: ((F.softplus(x, beta=2) + F.elu(x, alpha=0.5)) * F.silu(x)).mean()),
    ("torch.atan2(x, y).sum() + x.div(y, rounding_mode='floor').sum()", {"x": [1.0, -2.0], "y": [0.5, 3.0]},
     lambda t, F, x, y: t.atan2(x, y).sum() + x.div(y, rounding_mode="floor").sum()),
    ("(x.exp2() + x.expm1() + x.sin() * x.cosh() + torch.erf(x) + F.hardtanh(x, -0.5, 0.5)).sum()",
     {"x": [-1.0, 0.25, 0.5]},
     lambda t, F, x: (x.exp2() + x.expm1() + x.sin() * x.cosh() + t.erf(x) + F.hardtanh(x, -0.5, 0.5)).sum()),
    ("(x % y * (x // y).detach()).sum() + (x % 0.75).sum()", {"x": [3.5, -2.5], "y": [2.0, 1.5]},
     lambda t, F, x, y: (x % y * (x // y).detach()).sum() + (x % 0.75).sum()),
]


@pytest.mark.parametrize("program, inputs, ref", CLI, ids=[c[0].split("(")[0] for c in CLI])
def test_cli_gradients_match_torch(program, inputs, ref, torch):
    args = [program]
    for name, vals in inputs.items():
        args += ["-i", f"{name}={vals}"]
    doc = cli_json(*args)
    xs = {n: torch.tensor(v, requires_grad=True) for n, v in inputs.items()}
    out = ref(torch, torch.nn.functional, *xs.values())
    out.backward()
    assert doc["output"]["grad_fn"] == type(out.grad_fn).__name__
    np.testing.assert_allclose(doc["output"]["value"], out.item(), rtol=1e-6)
    for n, x in xs.items():
        np.testing.assert_allclose(doc["grads"][n]["value"], x.grad.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("program, message", [
    ("maximum(x, 1.0)", "TypeError: maximum(): argument 'other' (position 2) must be Tensor, not float"),
    ("F.gelu(x.long())", "NotImplementedError: \"GeluKernelImpl\" not implemented for 'Long'"),
    ("x + ones(4)", "RuntimeError: The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
                    "dimension 0"),
    ("x.div(x, rounding_mode='nearest')", "div expected rounding_mode to be one of None, 'trunc', or 'floor'"),
    ("(x // 2).sum()", "RuntimeError: derivative for aten::floor_divide is not implemented"),
])
def test_cli_errors(program, message):
    r = runner.invoke(app, ["grad", program, "-i", "x=[1.0, 2.0, 3.0]"])
    assert r.exit_code == 1, r.output
    assert message in r.stderr
    assert "Traceback" not in r.stderr

"""Tests of the op table (gradcli.ops) and the autograd engine.

* Every public op of kind "op" in ``gradcli.ops.REGISTRY`` has cases in :data:`CASES` (differentiable ops) or
  :data:`NONDIFF_CASES` (comparisons and bitwise ops); a new op without a case fails
  :func:`test_every_registry_op_has_a_case`.
* Each differentiable case is gradchecked in float64 (tests/helpers.py: one-hot backward vs central
  differences) and compared with PyTorch, in float32 and float64: forward values, dtypes, ``grad_fn`` names and
  the gradients of ``out.backward(v)``.
* Type promotion, error messages and engine behaviour (accumulation, fan-out, detach, grad modes,
  retain_grad, autograd.grad, deep graphs, gradient aliasing) are compared with PyTorch too.

A case's ``fn(m, *tensors)`` runs unchanged with ``m = gradcli`` and ``m = torch``; :func:`api` resolves the
few functions that torch keeps elsewhere (``torch.Tensor.view``, ``torch.nn.functional...``).
"""

from __future__ import annotations

import sys
import time
import warnings
import importlib
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import gradcli as G
from gradcli.ops import KINDS, REGISTRY

from helpers import (BINARY_SHAPES, UNARY_SHAPES, Arg, Case, NDCase, api, assert_raises_like_torch, autograd_grad,
                     g_inputs, grad_fn_name, gradcheck, gradgradcheck, make_arrays, seed_of, sh, t_inputs, to_np)


# ============================================================================================ the op table
CASES: list[Case] = []


def add_case(op: str, id: str, fn: Callable, *args: Arg, marks=()) -> None:
    CASES.append(Case(op, f"{op}-{id}", fn, tuple(args), marks=tuple(marks)))



R, NZ, POS, UNIT, BOOL, INT = "real", "nonzero", "pos", "unit", "bool", "int"

# ---------------------------------------------------------------------------------------- unary elementwise
UNARY = {  # name -> domain (away from kinks and out of the domain's edges)
    "abs": NZ, "neg": R, "exp": R, "log": POS, "sqrt": POS, "sign": NZ, "sigmoid": R, "tanh": R,
    "relu": NZ, "reciprocal": NZ,
}
for _name, _dom in UNARY.items():
    for _s in UNARY_SHAPES:
        add_case(_name, sh(_s), (lambda n: lambda m, a: api(m, n)(a))(_name), Arg(_s, _dom))
    # the Tensor method
    add_case(_name, "method", (lambda n: lambda m, a: getattr(a, n)())(_name), Arg((3, 4), _dom))
for _alias, _dom in (("absolute", NZ), ("negative", R)):
    add_case(_alias, "3x4", (lambda n: lambda m, a: api(m, n)(a))(_alias), Arg((3, 4), _dom))
add_case("__neg__", "3x4", lambda m, a: -a, Arg((3, 4)))
add_case("__abs__", "3x4", lambda m, a: abs(a), Arg((3, 4), NZ))
add_case("relu", "mixed-signs", lambda m, a: m.relu(a), Arg((2, 3, 4), NZ))

# --------------------------------------------------------------------------------------- binary elementwise
BINARY = {"add": R, "sub": R, "mul": R, "div": NZ, "rsub": R}  # name -> domain of `other`
for _name, _dom in BINARY.items():
    for _sa, _sb in BINARY_SHAPES:
        add_case(_name, f"{sh(_sa)}-{sh(_sb)}", (lambda n: lambda m, a, b: api(m, n)(a, b))(_name),
                 Arg(_sa), Arg(_sb, _dom))
    # only one input requires grad, either one
    add_case(_name, "3x4-nograd-other", (lambda n: lambda m, a, b: api(m, n)(a, b))(_name),
             Arg((3, 4)), Arg((3, 4), _dom, grad=False))
    add_case(_name, "3x4-nograd-input", (lambda n: lambda m, a, b: api(m, n)(a, b))(_name),
             Arg((3, 4), grad=False), Arg((3, 4), _dom))
    # a Python number as `other`
    add_case(_name, "3x4-scalar", (lambda n: lambda m, a: api(m, n)(a, 2.5))(_name), Arg((3, 4)))
    add_case(_name, "0d-scalar", (lambda n: lambda m, a: api(m, n)(a, -1.5))(_name), Arg(()))
    # the same tensor twice (fan-out inside one op)
    add_case(_name, "same-tensor", (lambda n: lambda m, a: api(m, n)(a, a))(_name), Arg((3, 4), NZ))
for _name in ("add", "sub", "rsub"):
    add_case(_name, "alpha", (lambda n: lambda m, a, b: api(m, n)(a, b, alpha=2))(_name), Arg((3, 4)), Arg((4,)))
for _alias, _dom in (("subtract", R), ("multiply", R), ("divide", NZ), ("true_divide", NZ)):
    add_case(_alias, "3x1-1x4", (lambda n: lambda m, a, b: api(m, n)(a, b))(_alias), Arg((3, 1)), Arg((1, 4), _dom))
for _method, _dom in (("add", R), ("sub", R), ("mul", R), ("div", NZ)):
    add_case(_method, "method", (lambda n: lambda m, a, b: getattr(a, n)(b))(_method), Arg((3, 4)), Arg((4,), _dom))
# Python operators, including the reflected forms
add_case("__add__", "3x4-4", lambda m, a, b: a + b, Arg((3, 4)), Arg((4,)))
add_case("__radd__", "scalar", lambda m, a: 2.5 + a, Arg((3, 4)))
add_case("__sub__", "3x4-4", lambda m, a, b: a - b, Arg((3, 4)), Arg((4,)))
add_case("__rsub__", "scalar", lambda m, a: 2 - a, Arg((3, 4)))
add_case("__mul__", "3x4-4", lambda m, a, b: a * b, Arg((3, 4)), Arg((4,)))
add_case("__rmul__", "scalar", lambda m, a: 2.5 * a, Arg((3, 4)))
add_case("__truediv__", "3x4-4", lambda m, a, b: a / b, Arg((3, 4)), Arg((4,), NZ))
add_case("__rtruediv__", "scalar", lambda m, a: 2 / a, Arg((3, 4), NZ))
add_case("__rtruediv__", "int-scalar-0d", lambda m, a: 3 / a, Arg((), NZ))

# ------------------------------------------------------------------------------------------------- powers
for _exp, _dom in ((2, R), (3, R), (1, R), (0, R), (-2, NZ), (0.5, POS), (2.5, POS), (-1.5, POS)):
    add_case("pow", f"scalar-exp-{_exp}", (lambda e: lambda m, a: m.pow(a, e))(_exp), Arg((3, 4), _dom))
add_case("pow", "scalar-exp-2-0d", lambda m, a: m.pow(a, 2), Arg(()))
for _sa, _sb in BINARY_SHAPES:
    add_case("pow", f"tensor-exp-{sh(_sa)}-{sh(_sb)}", lambda m, a, b: m.pow(a, b), Arg(_sa, POS), Arg(_sb))
add_case("pow", "tensor-exp-nograd-exp", lambda m, a, b: m.pow(a, b), Arg((3, 4), POS), Arg((3, 4), grad=False))
add_case("pow", "tensor-exp-nograd-base", lambda m, a, b: m.pow(a, b), Arg((3, 4), POS, grad=False), Arg((3, 4)))
add_case("pow", "scalar-base", lambda m, a: m.pow(2.0, a), Arg((3, 4)))
add_case("pow", "method", lambda m, a: a.pow(3), Arg((3, 4)))
add_case("__pow__", "int", lambda m, a: a ** 2, Arg((3, 4)))
add_case("__pow__", "float", lambda m, a: a ** 1.5, Arg((3, 4), POS))
add_case("__pow__", "tensor", lambda m, a, b: a ** b, Arg((3, 4), POS), Arg((4,)))
add_case("__rpow__", "scalar", lambda m, a: 2 ** a, Arg((3, 4)))

# -------------------------------------------------------------------------------------------------- where
add_case("where", "3x4", lambda m, c, a, b: m.where(c, a, b), Arg((3, 4), BOOL), Arg((3, 4)), Arg((3, 4)))
add_case("where", "broadcast", lambda m, c, a, b: m.where(c, a, b), Arg((3, 4), BOOL), Arg((3, 1)), Arg((1, 4)))
add_case("where", "0d-input", lambda m, c, a, b: m.where(c, a, b), Arg((3, 4), BOOL), Arg(()), Arg((4,)))
add_case("where", "scalar-other", lambda m, c, a: m.where(c, a, 0.0), Arg((3, 4), BOOL), Arg((3, 4)))
add_case("where", "scalar-input", lambda m, c, b: m.where(c, 1.5, b), Arg((3, 4), BOOL), Arg((3, 4)))
add_case("where", "nograd-other", lambda m, c, a, b: m.where(c, a, b), Arg((3, 4), BOOL), Arg((3, 4)),
         Arg((3, 4), grad=False))
add_case("where", "mask-from-data", lambda m, a: m.where(a > 0, a, a * a), Arg((3, 4), NZ))

# ---------------------------------------------------------------------------------------------- reductions
REDUCE_VARIANTS = [  # (id, shape, kwargs)
    ("0d", (), {}), ("4", (4,), {}), ("3x4", (3, 4), {}), ("2x3x4", (2, 3, 4), {}),
    ("3x4-dim0", (3, 4), {"dim": 0}), ("3x4-dim1", (3, 4), {"dim": 1}), ("3x4-dim-1", (3, 4), {"dim": -1}),
    ("3x4-dim1-keepdim", (3, 4), {"dim": 1, "keepdim": True}),
    ("3x4-dim0-keepdim", (3, 4), {"dim": 0, "keepdim": True}),
    ("2x3x4-dim02", (2, 3, 4), {"dim": (0, 2)}),
    ("2x3x4-dim-1-0-keepdim", (2, 3, 4), {"dim": (-1, 0), "keepdim": True}),
    ("3x1-dim1", (3, 1), {"dim": 1}), ("4-dim0", (4,), {"dim": 0}), ("0d-dim0", (), {"dim": 0}),
    ("0d-dim0-keepdim", (), {"dim": 0, "keepdim": True}),
]
for _name in ("sum", "mean"):
    for _id, _s, _kw in REDUCE_VARIANTS:
        add_case(_name, _id, (lambda n, kw: lambda m, a: getattr(m, n)(a, **kw))(_name, _kw), Arg(_s))
    add_case(_name, "method-dim1-keepdim", (lambda n: lambda m, a: getattr(a, n)(dim=1, keepdim=True))(_name),
             Arg((3, 4)))
    add_case(_name, "method-full", (lambda n: lambda m, a: getattr(a, n)())(_name), Arg((3, 4)))
add_case("sum", "dtype-float64", lambda m, a: m.sum(a, dtype=m.float64), Arg((3, 4)))
add_case("mean", "dtype-float64", lambda m, a: m.mean(a, dtype=m.float64), Arg((3, 4)))

NORM_VARIANTS = [  # (id, shape, domain, kwargs)
    ("fro-3x4", (3, 4), R, {}), ("p2-4", (4,), R, {"p": 2}), ("p2-0d", (), NZ, {}),
    ("p1-3x4", (3, 4), NZ, {"p": 1}), ("p3-3x4", (3, 4), NZ, {"p": 3}), ("p0.5-3x4", (3, 4), NZ, {"p": 0.5}),
    ("pinf-3x4", (3, 4), NZ, {"p": float("inf")}), ("p-inf-3x4", (3, 4), NZ, {"p": float("-inf")}),
    ("p0-3x4", (3, 4), NZ, {"p": 0}),
    ("p2-dim1", (3, 4), R, {"p": 2, "dim": 1}), ("p2-dim0-keepdim", (3, 4), R, {"p": 2, "dim": 0, "keepdim": True}),
    ("p1-dim-1", (2, 3, 4), NZ, {"p": 1, "dim": -1}), ("pinf-dim1", (3, 4), NZ, {"p": float("inf"), "dim": 1}),
    ("p3-dim02", (2, 3, 4), NZ, {"p": 3, "dim": (0, 2)}), ("fro-2x3x4", (2, 3, 4), R, {"p": "fro"}),
]
for _id, _s, _dom, _kw in NORM_VARIANTS:
    add_case("norm", _id, (lambda kw: lambda m, a: m.norm(a, **kw))(_kw), Arg(_s, _dom))
add_case("norm", "method", lambda m, a: a.norm(), Arg((3, 4)))

SUM_TO_SIZE = [((3, 4), (1, 4)), ((3, 4), (3, 1)), ((3, 4), (1, 1)), ((2, 3, 4), (3, 4)), ((2, 3, 4), (1, 4)),
               ((2, 3, 4), (2, 1, 4)), ((3, 4), (3, 4)), ((4,), (1,))]
for _s, _to in SUM_TO_SIZE:
    add_case("sum_to_size", f"{sh(_s)}-to-{sh(_to)}", (lambda to: lambda m, a: api(m, "sum_to_size")(a, *to))(_to),
             Arg(_s))
add_case("sum_to_size", "tuple-arg", lambda m, a: api(m, "sum_to_size")(a, (1, 4)), Arg((3, 4)))
add_case("sum_to_size", "method", lambda m, a: a.sum_to_size(3, 1), Arg((3, 4)))

# ------------------------------------------------------------------------------------------------- linalg
add_case("dot", "4-4", lambda m, a, b: m.dot(a, b), Arg((4,)), Arg((4,)))
add_case("dot", "nograd-other", lambda m, a, b: m.dot(a, b), Arg((4,)), Arg((4,), grad=False))
add_case("dot", "same-tensor", lambda m, a: m.dot(a, a), Arg((4,)))
add_case("mv", "3x4-4", lambda m, a, b: m.mv(a, b), Arg((3, 4)), Arg((4,)))
add_case("mv", "nograd-mat", lambda m, a, b: m.mv(a, b), Arg((3, 4), grad=False), Arg((4,)))
add_case("mm", "3x4-4x2", lambda m, a, b: m.mm(a, b), Arg((3, 4)), Arg((4, 2)))
add_case("mm", "1x4-4x1", lambda m, a, b: m.mm(a, b), Arg((1, 4)), Arg((4, 1)))
add_case("mm", "nograd-mat2", lambda m, a, b: m.mm(a, b), Arg((3, 4)), Arg((4, 2), grad=False))
add_case("mm", "transposed-input", lambda m, a, b: m.mm(a.t(), b), Arg((4, 3)), Arg((4, 2)))
for _name in ("outer", "ger"):
    add_case(_name, "3-4", (lambda n: lambda m, a, b: getattr(m, n)(a, b))(_name), Arg((3,)), Arg((4,)))
add_case("outer", "nograd-vec2", lambda m, a, b: m.outer(a, b), Arg((3,)), Arg((4,), grad=False))
MATMUL_SHAPES = [  # every rank combination, and broadcast batches
    ("1-1", (4,), (4,)), ("2-1", (3, 4), (4,)), ("1-2", (4,), (4, 2)), ("2-2", (3, 4), (4, 2)),
    ("3-2", (2, 3, 4), (4, 5)), ("2-3", (3, 4), (2, 4, 5)), ("3-3", (2, 3, 4), (2, 4, 5)),
    ("3-1", (2, 3, 4), (4,)), ("1-3", (4,), (2, 4, 5)), ("3-3-bcast", (1, 3, 4), (2, 4, 5)),
    ("4-3-bcast", (2, 1, 3, 4), (3, 4, 2)), ("4-2", (2, 2, 3, 4), (4, 5)),
]
for _id, _sa, _sb in MATMUL_SHAPES:
    add_case("matmul", _id, lambda m, a, b: m.matmul(a, b), Arg(_sa), Arg(_sb))
    add_case("__matmul__", _id, lambda m, a, b: a @ b, Arg(_sa), Arg(_sb))
add_case("matmul", "3-2-nograd-other", lambda m, a, b: m.matmul(a, b), Arg((2, 3, 4)), Arg((4, 5), grad=False))
add_case("matmul", "3-2-nograd-input", lambda m, a, b: m.matmul(a, b), Arg((2, 3, 4), grad=False), Arg((4, 5)))
add_case("matmul", "method", lambda m, a, b: a.matmul(b), Arg((3, 4)), Arg((4, 2)))

# ------------------------------------------------------------------------------------------------- shape
add_case("reshape", "3x4-to-2x6", lambda m, a: m.reshape(a, (2, 6)), Arg((3, 4)))
add_case("reshape", "3x4-to-minus1", lambda m, a: m.reshape(a, (-1,)), Arg((3, 4)))
add_case("reshape", "2x3x4-to-4x-1", lambda m, a: m.reshape(a, (4, -1)), Arg((2, 3, 4)))
add_case("reshape", "0d-to-1x1", lambda m, a: m.reshape(a, (1, 1)), Arg(()))
add_case("reshape", "1-to-0d", lambda m, a: m.reshape(a, ()), Arg((1,)))
add_case("reshape", "method-varargs", lambda m, a: a.reshape(2, 6), Arg((3, 4)))
add_case("reshape", "after-transpose", lambda m, a: m.reshape(a.t(), (12,)), Arg((3, 4)))
add_case("view", "3x4-to-2x6", lambda m, a: api(m, "view")(a, 2, 6), Arg((3, 4)))
add_case("view", "method-tuple", lambda m, a: a.view((4, 3)), Arg((3, 4)))
add_case("view", "0d-to-1", lambda m, a: a.view(1), Arg(()))
for _id, _s, _kw in (("2x3x4", (2, 3, 4), {}), ("2x3x4-start1", (2, 3, 4), {"start_dim": 1}),
                     ("2x3x4-0-1", (2, 3, 4), {"start_dim": 0, "end_dim": 1}), ("0d", (), {}), ("4", (4,), {}),
                     ("3x4-same-dim", (3, 4), {"start_dim": 1, "end_dim": -1})):
    add_case("flatten", _id, (lambda kw: lambda m, a: m.flatten(a, **kw))(_kw), Arg(_s))
add_case("flatten", "method", lambda m, a: a.flatten(), Arg((3, 4)))
for _id, _s, _dims in (("2x3x4-201", (2, 3, 4), (2, 0, 1)), ("3x4-10", (3, 4), (1, 0)), ("4-0", (4,), (0,)),
                       ("2x3x4-negative", (2, 3, 4), (-1, 0, -2)), ("0d", (), ())):
    add_case("permute", _id, (lambda d: lambda m, a: m.permute(a, d))(_dims), Arg(_s))
add_case("permute", "method-varargs", lambda m, a: a.permute(1, 2, 0), Arg((2, 3, 4)))
for _name in ("transpose", "swapaxes", "swapdims"):
    add_case(_name, "2x3x4-0-2", (lambda n: lambda m, a: getattr(m, n)(a, 0, 2))(_name), Arg((2, 3, 4)))
add_case("transpose", "3x4-neg", lambda m, a: m.transpose(a, -1, -2), Arg((3, 4)))
add_case("transpose", "3x4-same", lambda m, a: m.transpose(a, 1, 1), Arg((3, 4)))
add_case("transpose", "method", lambda m, a: a.transpose(0, 1), Arg((3, 4)))
for _id, _s in (("3x4", (3, 4)), ("4", (4,)), ("0d", ()), ("1x4", (1, 4))):
    add_case("t", _id, lambda m, a: m.t(a), Arg(_s))
add_case("t", "method", lambda m, a: a.t(), Arg((3, 4)))
add_case("T", "3x4", lambda m, a: a.T, Arg((3, 4)))
add_case("T", "4", lambda m, a: a.T, Arg((4,)))
add_case("T", "2x3x4", lambda m, a: a.T, Arg((2, 3, 4)))
add_case("mT", "3x4", lambda m, a: a.mT, Arg((3, 4)))
add_case("mT", "2x3x4", lambda m, a: a.mT, Arg((2, 3, 4)))
for _id, _s, _d in (("3x4-0", (3, 4), 0), ("3x4-1", (3, 4), 1), ("3x4-last", (3, 4), -1), ("3x4-minus3", (3, 4), -3),
                    ("0d-0", (), 0), ("4-1", (4,), 1)):
    add_case("unsqueeze", _id, (lambda d: lambda m, a: m.unsqueeze(a, d))(_d), Arg(_s))
add_case("unsqueeze", "method", lambda m, a: a.unsqueeze(1), Arg((3, 4)))
for _id, _s, _kw in (("3x1x4-all", (3, 1, 4), {}), ("3x1x4-dim1", (3, 1, 4), {"dim": 1}),
                     ("3x1x4-dim0-noop", (3, 1, 4), {"dim": 0}), ("1x3x1-dim-1", (1, 3, 1), {"dim": -1}),
                     ("1x3x1-dims", (1, 3, 1), {"dim": (0, 2)}), ("0d", (), {}), ("1-all", (1,), {}),
                     ("3x4-all-noop", (3, 4), {})):
    add_case("squeeze", _id, (lambda kw: lambda m, a: m.squeeze(a, **kw))(_kw), Arg(_s))
add_case("squeeze", "method", lambda m, a: a.squeeze(1), Arg((3, 1, 4)))
for _id, _s, _to in (("3x1-to-3x4", (3, 1), (3, 4)), ("4-to-2x3x4", (4,), (2, 3, 4)), ("3x1-minus1", (3, 1), (-1, 4)),
                     ("0d-to-3", (), (3,)), ("1x1-to-2x3", (1, 1), (2, 3)), ("3x4-same", (3, 4), (3, 4))):
    add_case("expand", _id, (lambda to: lambda m, a: api(m, "expand")(a, *to))(_to), Arg(_s))
add_case("expand", "method-tuple", lambda m, a: a.expand((2, 3, 4)), Arg((3, 1)))
for _id, _s, _d, _i in (("3x4-0-1", (3, 4), 0, 1), ("3x4-1-neg", (3, 4), 1, -1), ("2x3x4-1-2", (2, 3, 4), 1, 2),
                        ("4-0-3", (4,), 0, 3), ("2x3x4-negdim", (2, 3, 4), -1, 0)):
    add_case("select", _id, (lambda d, i: lambda m, a: m.select(a, d, i))(_d, _i), Arg(_s))
add_case("select", "method", lambda m, a: a.select(1, 2), Arg((3, 4)))

# ---------------------------------------------------------------------------------------------- indexing
INDEXING = [  # (id, shape, key-function of (m, tensor)); the mask case takes the mask as a second input
    ("int", (3, 4), lambda m, a: a[1]),
    ("int-int", (3, 4), lambda m, a: a[1, 2]),
    ("int-0d-result", (4,), lambda m, a: a[2]),
    ("slice", (3, 4), lambda m, a: a[1:3]),
    ("slice-open", (4,), lambda m, a: a[1:]),
    ("slice-full", (3, 4), lambda m, a: a[:]),
    ("slice-out-of-range", (4,), lambda m, a: a[2:10]),
    ("slice-empty", (4,), lambda m, a: a[3:1]),
    ("step-slice", (4,), lambda m, a: a[::2]),
    ("step-slice-2d", (3, 4), lambda m, a: a[:, 1::2]),
    ("negative-int", (3, 4), lambda m, a: a[-1]),
    ("negative-slice", (3, 4), lambda m, a: a[:, -3:-1]),
    ("int-slice", (3, 4), lambda m, a: a[0, 1:3]),
    ("none", (3, 4), lambda m, a: a[None]),
    ("none-middle", (3, 4), lambda m, a: a[:, None, 1]),
    ("ellipsis", (3, 4), lambda m, a: a[...]),
    ("ellipsis-int", (2, 3, 4), lambda m, a: a[..., 1]),
    ("int-ellipsis", (2, 3, 4), lambda m, a: a[1, ...]),
    ("ellipsis-none", (3, 4), lambda m, a: a[..., None]),
    ("list", (3, 4), lambda m, a: a[[0, 2]]),
    ("list-repeated", (3, 4), lambda m, a: a[[0, 2, 0, 0]]),
    ("list-negative", (4,), lambda m, a: a[[-1, 0]]),
    ("list-second-dim", (3, 4), lambda m, a: a[:, [3, 1]]),
    ("two-lists", (3, 4), lambda m, a: a[[0, 2], [1, 3]]),
    ("list-and-slice", (3, 4), lambda m, a: a[[2, 0], 1:3]),
    ("int-tensor", (3, 4), lambda m, a: a[m.tensor([2, 0, 2])]),
    ("2d-int-tensor", (4,), lambda m, a: a[m.tensor([[0, 1], [3, 3]])]),
    ("chained", (2, 3, 4), lambda m, a: a[1][2][1:3]),
]
for _id, _s, _f in INDEXING:
    add_case("__getitem__", _id, _f, Arg(_s))
add_case("__getitem__", "bool-mask", lambda m, a, mask: a[mask], Arg((3, 4)), Arg((3, 4), BOOL))
add_case("__getitem__", "bool-mask-rows", lambda m, a, mask: a[mask], Arg((3, 4)), Arg((3,), BOOL))
add_case("__getitem__", "bool-mask-from-data", lambda m, a: a[a > 0], Arg((3, 4), NZ))

# -------------------------------------------------------------------------------------------------- loss
BCE = "binary_cross_entropy_with_logits"


def _bce(**kw):
    return lambda m, x, y: api(m, BCE)(x, y, **kw)


for _s in ((3, 4), (4,), ()):
    for _red in ("mean", "sum", "none"):
        add_case(BCE, f"{sh(_s)}-{_red}", _bce(reduction=_red), Arg(_s), Arg(_s, UNIT, grad=False))
add_case(BCE, "target-grad-mean", _bce(), Arg((3, 4)), Arg((3, 4), UNIT))
add_case(BCE, "target-grad-none", _bce(reduction="none"), Arg((3, 4)), Arg((3, 4), UNIT))
add_case(BCE, "weight", lambda m, x, y, w: api(m, BCE)(x, y, weight=w), Arg((3, 4)), Arg((3, 4), UNIT, grad=False),
         Arg((4,), POS, grad=False))
add_case(BCE, "pos-weight", lambda m, x, y, p: api(m, BCE)(x, y, pos_weight=p), Arg((3, 4)),
         Arg((3, 4), UNIT, grad=False), Arg((4,), POS, grad=False))
add_case(BCE, "pos-weight-target-grad-sum", lambda m, x, y, p: api(m, BCE)(x, y, pos_weight=p, reduction="sum"),
         Arg((3, 4)), Arg((3, 4), UNIT), Arg((4,), POS, grad=False))
add_case(BCE, "weight-and-pos-weight-none",
         lambda m, x, y, w, p: api(m, BCE)(x, y, weight=w, pos_weight=p, reduction="none"),
         Arg((3, 4)), Arg((3, 4), UNIT, grad=False), Arg((3, 1), POS, grad=False), Arg((4,), POS, grad=False))
add_case(BCE, "large-logits", lambda m, x, y: api(m, BCE)(x * 20, y), Arg((3, 4)), Arg((3, 4), UNIT, grad=False))

# ------------------------------------------------------------------------------------------ compositions
add_case("composite", "mlp", lambda m, x, w, b: m.sigmoid(m.tanh(x @ w + b)).sum(dim=0), Arg((3, 4)),
         Arg((4, 2)), Arg((2,)))
add_case("composite", "softplus-like", lambda m, x: m.log(1 + m.exp(x)).mean(), Arg((2, 3, 4)))
add_case("composite", "normalize", lambda m, x: x / m.norm(x, dim=1, keepdim=True), Arg((3, 4)))
add_case("composite", "diamond", lambda m, x: (lambda y: y * y + y.sum() - m.relu(y))(x * 2 + 1), Arg((3, 4), NZ))


# ================================================================================= non-differentiable ops
NONDIFF_CASES: list[NDCase] = []
COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
for _name, _sym in COMPARISONS.items():
    for _id, _args in (("int-3x4-3x4", (Arg((3, 4), INT), Arg((3, 4), INT))),
                       ("int-3x1-1x4", (Arg((3, 1), INT), Arg((1, 4), INT))),
                       ("float-3x4-4", (Arg((3, 4)), Arg((4,)))),
                       ("float-requires-grad", (Arg((3, 4)), Arg((3, 4)))),
                       ("int-float", (Arg((3, 4), INT), Arg((3, 4)))),
                       ("bool-bool", (Arg((4,), BOOL), Arg((4,), BOOL))),
                       ("0d-0d", (Arg((), INT), Arg((), INT)))):
        NONDIFF_CASES.append(NDCase(_name, f"{_name}-{_id}", (lambda n: lambda m, a, b: getattr(m, n)(a, b))(_name),
                                    _args))
    NONDIFF_CASES.append(NDCase(_name, f"{_name}-scalar", (lambda n: lambda m, a: getattr(m, n)(a, 0))(_name),
                                (Arg((3, 4), INT),)))
    NONDIFF_CASES.append(NDCase(_name, f"{_name}-float-scalar", (lambda n: lambda m, a: getattr(m, n)(a, 0.5))(_name),
                                (Arg((3, 4)),)))
    NONDIFF_CASES.append(NDCase(_name, f"{_name}-method", (lambda n: lambda m, a, b: getattr(a, n)(b))(_name),
                                (Arg((3, 4), INT), Arg((3, 4), INT))))
    NONDIFF_CASES.append(NDCase(f"__{_name}__", f"{_name}-operator",
                                (lambda s: lambda m, a, b: eval(f"a {s} b"))(_sym), (Arg((3, 4), INT), Arg((4,), INT))))
BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}
for _name, _sym in BITWISE.items():
    for _id, _args in (("bool-bool", (Arg((3, 4), BOOL), Arg((3, 4), BOOL))),
                       ("int-int", (Arg((3, 4), INT), Arg((3, 4), INT))),
                       ("bool-int", (Arg((3, 4), BOOL), Arg((4,), INT))),
                       ("bool-3x1-1x4", (Arg((3, 1), BOOL), Arg((1, 4), BOOL)))):
        NONDIFF_CASES.append(NDCase(_name, f"{_name}-{_id}", (lambda n: lambda m, a, b: getattr(m, n)(a, b))(_name),
                                    _args))
    NONDIFF_CASES.append(NDCase(_name, f"{_name}-int-scalar", (lambda n: lambda m, a: getattr(m, n)(a, 6))(_name),
                                (Arg((3, 4), INT),)))
    NONDIFF_CASES.append(NDCase(f"__{_name[8:]}__", f"{_name}-operator",
                                (lambda s: lambda m, a, b: eval(f"a {s} b"))(_sym),
                                (Arg((3, 4), BOOL), Arg((3, 4), BOOL))))

#: Registry ops of kind "op" deliberately without a case here (name -> reason). Keep empty if possible.
EXCLUDED: dict[str, str] = {}


# ========================================================================================== known bugs
# gradcli bugs found by these tests (reported; see the module's final report). Each affected case is a strict
# xfail, so the suite stays green, the bug stays visible, and a fix turns the xfail into a failure that asks
# for the entry to be removed.
KNOWN_TORCH_MISMATCH: dict[str, str] = {
}
KNOWN_GRADCHECK_FAIL: dict[str, str] = {
}
KNOWN_GRADGRAD_FAIL: dict[str, str] = {
}

# ================================================================================== the other case books
#: Modules tests/cases_<area>.py, each with ``BOOK = CaseBook()`` (tests/helpers.py), one per area of the op
#: table, so that areas grow independently. Their cases join the lists above.
CASE_BOOKS = sorted(p.stem for p in Path(__file__).parent.glob("cases_*.py"))
for _mod in CASE_BOOKS:
    _book = importlib.import_module(_mod).BOOK
    CASES += _book.cases
    NONDIFF_CASES += _book.nondiff
    KNOWN_TORCH_MISMATCH.update(_book.known_torch_mismatch)
    KNOWN_GRADCHECK_FAIL.update(_book.known_gradcheck_fail)
    KNOWN_GRADGRAD_FAIL.update(_book.known_gradgrad_fail)
    EXCLUDED.update(_book.excluded)


def xfail_bug(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


# ================================================================================================ helpers
@pytest.fixture
def default_float64(torch):
    """Default dtype float64 in both gradcli and torch, restored afterwards."""
    G.set_default_dtype(G.float64)
    prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        G.set_default_dtype(G.float32)
        torch.set_default_dtype(prev)


def case_params(cases, known: dict | None = None):
    known = known or {}
    return [pytest.param(c, id=c.id, marks=list(c.marks) + ([xfail_bug(known[c.id])] if c.id in known else []))
            for c in cases]


def tdtype(t) -> str:
    """A gradcli or torch dtype as torch prints it ("torch.float32")."""
    return str(t.dtype)


def tol(dtype) -> dict:
    return {"rtol": 1e-6, "atol": 1e-12} if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-6}


# ============================================================================================== coverage
def _ops_of_kind_op() -> set:
    return {n for n, k in KINDS.items() if k == "op" and not n.startswith("_")}


def test_every_registry_op_has_a_case():
    covered = {c.op for c in CASES} | {c.op for c in NONDIFF_CASES}
    missing = _ops_of_kind_op() - covered - set(EXCLUDED)
    assert not missing, f"ops in gradcli.ops.REGISTRY without a test case in tests/ops/test_ops.py: {sorted(missing)}"


def test_exclusions_and_case_names_are_current():
    ops = _ops_of_kind_op()
    stale = set(EXCLUDED) - ops
    assert not stale, f"EXCLUDED names that are no longer ops: {sorted(stale)}"
    syntax = {"composite", "T", "mT"}
    for c in CASES + NONDIFF_CASES:
        if c.op in ops or c.op in syntax:
            continue
        assert c.op.startswith("__") and hasattr(G.Tensor, c.op), f"case {c.id}: unknown op {c.op!r}"
    ids = [c.id for c in CASES] + [c.id for c in NONDIFF_CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"


def test_known_bug_entries_name_existing_cases():
    ids = {c.id for c in CASES}
    assert set(KNOWN_TORCH_MISMATCH) <= ids and set(KNOWN_GRADCHECK_FAIL) <= ids and set(KNOWN_GRADGRAD_FAIL) <= ids


def test_registry_kinds_and_namespace():
    assert set(KINDS) == set(REGISTRY)
    assert set(KINDS.values()) <= {"op", "creation", "function"}
    for name in _ops_of_kind_op():
        assert getattr(G, name) is REGISTRY[name], name
        assert callable(REGISTRY[name])


def test_nondifferentiable_cases_are_exactly_the_non_differentiable_ops():
    """Comparisons/bitwise ops are tested for values and dtypes only; make sure every other op is in CASES."""
    nondiff_ops = {c.op for c in NONDIFF_CASES} & _ops_of_kind_op()
    for name in nondiff_ops:
        assert getattr(REGISTRY[name], "differentiable", True) is False, name
    for name in _ops_of_kind_op() - nondiff_ops - set(EXCLUDED):
        assert getattr(REGISTRY[name], "differentiable", True) is not False, name


# ============================================================================================= gradcheck
@pytest.mark.parametrize("case", case_params(CASES, KNOWN_GRADCHECK_FAIL))
def test_gradcheck(case):
    arrays = make_arrays(case.args, case.id)
    inputs = g_inputs(case.args, arrays, np.float64)

    def fn(*xs):
        return case.fn(G, *xs)

    assert fn(*inputs).requires_grad == any(a.differentiable for a in case.args)
    if any(a.differentiable for a in case.args):  # else the output not requiring grad is the check
        assert gradcheck(fn, inputs, seed=seed_of(case.id))


def test_gradcheck_detects_a_wrong_derivative(monkeypatch):
    """The gradcheck itself must fail on a wrong rule (here: exp's derivative scaled by 1.01)."""
    exp_op = REGISTRY["exp"]
    rule = exp_op.vjp
    monkeypatch.setattr(exp_op, "vjp", lambda grad, result: rule(grad, result) * 1.01)
    x = G.tensor(np.linspace(-1, 1, 5), dtype=G.float64, requires_grad=True)
    with pytest.raises(AssertionError, match="Jacobian mismatch"):
        gradcheck(lambda t: G.exp(t), [x])


#: The cases with at least one input that requires grad (the others have no derivative to check).
DIFF_CASES = [c for c in CASES if any(a.differentiable for a in c.args)]


@pytest.mark.parametrize("case", case_params(DIFF_CASES, KNOWN_GRADGRAD_FAIL))
def test_gradgradcheck(case):
    """Second derivatives: the gradient (built with create_graph=True) is itself gradchecked."""
    arrays = make_arrays(case.args, case.id)
    inputs = g_inputs(case.args, arrays, np.float64)
    assert gradgradcheck(lambda *xs: case.fn(G, *xs), inputs, seed=seed_of(case.id))


def test_gradgradcheck_detects_a_wrong_second_derivative(monkeypatch):
    """A rule that is right to first order but not differentiable correctly must fail gradgradcheck: here
    tanh's rule uses a detached result (first derivative right, second derivative wrong)."""
    tanh_op = REGISTRY["tanh"]
    rule = tanh_op.vjp
    monkeypatch.setattr(tanh_op, "vjp", lambda grad, result: rule(grad, result.detach()
                                                                   if isinstance(result, G.Tensor) else result))
    x = G.tensor(np.linspace(-1, 1, 5), dtype=G.float64, requires_grad=True)
    gradcheck(lambda t: G.tanh(t), [x])
    with pytest.raises(AssertionError, match="does not require grad, but it varies"):
        gradgradcheck(lambda t: G.tanh(t), [x])


@pytest.mark.parametrize("case", case_params(DIFF_CASES, KNOWN_GRADGRAD_FAIL))
def test_second_derivative_against_torch(case, torch):
    """``grad(out, inputs, v, create_graph=True)`` then ``grad(sum(g_k * u_k), inputs)`` equal PyTorch's
    (float64): first and second derivatives, and which of them are defined."""
    arrays = make_arrays(case.args, case.id)
    rng = np.random.default_rng(seed_of(case.id + "vv"))
    results = []
    v = u = None
    for m, make in ((G, g_inputs), (torch, lambda *a: t_inputs(torch, *a))):
        xs = make(case.args, arrays, np.float64)
        wrt = [x for a, x in zip(case.args, xs) if a.differentiable]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = case.fn(m, *xs)
        if v is None:
            v = rng.standard_normal(tuple(out.shape))
            u = [rng.standard_normal(tuple(x.shape)) for x in wrt]
        first = autograd_grad(m)(out, wrt, grad_outputs=m.tensor(v), create_graph=True, allow_unused=True)
        terms = [(g * m.tensor(uk)).sum() for g, uk in zip(first, u) if g is not None and g.requires_grad]
        second = [None] * len(wrt)
        if terms:
            total = terms[0]
            for t in terms[1:]:
                total = total + t
            second = autograd_grad(m)(total, wrt, allow_unused=True)
        results.append(([None if g is None else to_np(g).copy() for g in first],
                        [None if g is None else to_np(g).copy() for g in second]))
    (g1, g2), (t1, t2) = results
    for k in range(len(g1)):
        for name, a, b in (("first", g1[k], t1[k]), ("second", g2[k], t2[k])):
            if a is None or b is None:  # gradcli may materialise a zero gradient where torch leaves None
                other = b if a is None else a
                assert other is None or not np.any(other), f"{name} derivative of input {k}: {a} vs {b}"
                continue
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10, err_msg=f"{name} derivative of input {k}")


# ========================================================================================= torch oracle
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", case_params(CASES, KNOWN_TORCH_MISMATCH))
def test_against_torch(case, dtype, torch):
    arrays = make_arrays(case.args, case.id)
    gi = g_inputs(case.args, arrays, dtype)
    ti = t_inputs(torch, case.args, arrays, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's x.T deprecation for non-2-d tensors
        out_t = case.fn(torch, *ti)
    out_g = case.fn(G, *gi)

    assert isinstance(out_g, G.Tensor)
    assert tuple(out_g.shape) == tuple(out_t.shape)
    assert tdtype(out_g) == tdtype(out_t)
    np.testing.assert_allclose(to_np(out_g), to_np(out_t), **tol(dtype), err_msg="forward")
    assert out_g.requires_grad == out_t.requires_grad
    assert grad_fn_name(out_g) == grad_fn_name(out_t)
    assert out_g.is_leaf == out_t.is_leaf

    if not out_t.requires_grad:
        return
    v = np.random.default_rng(seed_of(case.id + "v")).standard_normal(tuple(out_t.shape)).astype(dtype)
    out_t.backward(torch.from_numpy(v.copy()))
    out_g.backward(G.tensor(v))
    for k, (a, g, t) in enumerate(zip(case.args, gi, ti)):
        if not a.differentiable:
            assert g.grad is None and t.grad is None
            continue
        assert (g.grad is None) == (t.grad is None), f"input {k}"
        if t.grad is None:
            continue
        assert tdtype(g.grad) == tdtype(t.grad), f"grad dtype of input {k}"
        assert tuple(g.grad.shape) == tuple(t.grad.shape)
        np.testing.assert_allclose(g.grad.data, t.grad.numpy(), **tol(dtype), err_msg=f"grad of input {k}")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in NONDIFF_CASES])
def test_nondifferentiable_against_torch(case, torch):
    arrays = make_arrays(case.args, case.id)
    gi = g_inputs(case.args, arrays, np.float32)
    ti = t_inputs(torch, case.args, arrays, np.float32)
    out_g = case.fn(G, *gi)
    out_t = case.fn(torch, *ti)
    assert tdtype(out_g) == tdtype(out_t)
    assert tuple(out_g.shape) == tuple(out_t.shape)
    np.testing.assert_array_equal(to_np(out_g), to_np(out_t))
    assert out_g.requires_grad is False and out_t.requires_grad is False
    assert out_g.grad_fn is None


# ======================================================================================= type promotion
PROMOTION = [  # id, fn(m) -> Tensor
    ("int64-times-float-scalar", lambda m: m.tensor([1, 2, 3]) * 2.5),
    ("int64-div-int64", lambda m: m.tensor([1, 2, 3]) / m.tensor([2, 4, 5])),
    ("int64-div-int-scalar", lambda m: m.tensor([1, 2, 3]) / 2),
    ("float32-plus-float64-0d", lambda m: m.tensor([1.0, 2.0, 3.0]) + m.tensor(2.0, dtype=m.float64)),
    ("float32-0d-plus-float64-0d", lambda m: m.tensor(1.0) + m.tensor(2.0, dtype=m.float64)),
    ("float32-plus-float64", lambda m: m.tensor([1.0, 2.0]) + m.tensor([2.0, 3.0], dtype=m.float64)),
    ("int64-plus-float32-0d", lambda m: m.tensor([1, 2, 3]) + m.tensor(0.5)),
    ("int32-plus-int64-0d", lambda m: m.tensor([1, 2], dtype=m.int32) + m.tensor(3)),
    ("int32-plus-int64", lambda m: m.tensor([1, 2], dtype=m.int32) + m.tensor([3, 4])),
    ("uint8-plus-int8", lambda m: m.tensor([1, 2], dtype=m.uint8) + m.tensor([3, 4], dtype=m.int8)),
    ("bool-plus-int-scalar", lambda m: m.tensor([True, False]) + 1),
    ("bool-plus-int64", lambda m: m.tensor([True, False]) + m.tensor([1, 2])),
    ("bool-plus-bool", lambda m: m.tensor([True, False]) + m.tensor([True, True])),
    ("bool-times-float-scalar", lambda m: m.tensor([True, False]) * 1.5),
    ("int-pow-2", lambda m: m.tensor([1, 2, 3]) ** 2),
    ("int-pow-2.5", lambda m: m.tensor([1, 2, 3]) ** 2.5),
    ("int-pow-int-tensor", lambda m: m.tensor([1, 2, 3]) ** m.tensor([2, 0, 1])),
    ("int-scalar-pow-float-tensor", lambda m: 2 ** m.tensor([0.5, 1.0])),
    ("float32-plus-int-scalar", lambda m: m.tensor([1.0, 2.0]) + 3),
    ("float32-plus-float-scalar", lambda m: m.tensor([1.0, 2.0]) + 3.5),
    ("float64-times-float-scalar", lambda m: m.tensor([1.0, 2.0], dtype=m.float64) * 3.5),
    ("int32-times-int-scalar", lambda m: m.tensor([1, 2], dtype=m.int32) * 3),
    ("int-sub-float-scalar", lambda m: m.tensor([1, 2]) - 0.5),
    ("int-rsub", lambda m: 1 - m.tensor([1, 2])),
    ("int-neg", lambda m: -m.tensor([1, 2])),
    ("sum-bool", lambda m: m.tensor([True, False, True]).sum()),
    ("sum-int32", lambda m: m.tensor([1, 2], dtype=m.int32).sum()),
    ("sum-int64-dim", lambda m: m.tensor([[1, 2], [3, 4]]).sum(dim=0)),
    ("sum-uint8", lambda m: m.tensor([200, 100], dtype=m.uint8).sum()),
    ("sum-float32", lambda m: m.tensor([1.0, 2.0]).sum()),
    ("mean-int-with-dtype", lambda m: m.tensor([1, 2]).mean(dtype=m.float32)),
    ("exp-int", lambda m: m.exp(m.tensor([0, 1]))),
    ("sqrt-int", lambda m: m.sqrt(m.tensor([1, 4]))),
    ("reciprocal-int", lambda m: m.reciprocal(m.tensor([1, 4]))),
    ("sigmoid-int", lambda m: m.sigmoid(m.tensor([0, 1]))),
    ("abs-int", lambda m: m.abs(m.tensor([-1, 2]))),
    ("relu-int", lambda m: m.relu(m.tensor([-1, 2]))),
    ("where-int-float-scalar", lambda m: m.where(m.tensor([True, False]), m.tensor([1, 2]), 0.5)),
    ("where-float32-float64", lambda m: m.where(m.tensor([True, False]), m.tensor([1.0, 2.0]),
                                                m.tensor([3.0, 4.0], dtype=m.float64))),
    ("matmul-int", lambda m: m.tensor([[1, 2], [3, 4]]) @ m.tensor([1, 1])),
    ("float16-plus-int64", lambda m: m.tensor([1.0], dtype=m.float16) + m.tensor([2])),
    ("tensor-of-np-float64-scalar", lambda m: m.tensor(np.float64(1.5))),
    ("tensor-of-np-int32-scalar", lambda m: m.tensor(np.int32(3))),
]


def _table_params(table):
    """(id, fn) or (id, fn, reason): a reason marks a reported gradcli bug (strict xfail, so a fix is noticed)."""
    for e in table:
        marks = [xfail_bug(e[2])] if len(e) == 3 else []
        yield pytest.param(e[1], id=e[0], marks=marks)


@pytest.mark.parametrize("fn", list(_table_params(PROMOTION)))
def test_type_promotion(fn, torch):
    out_g, out_t = fn(G), fn(torch)
    assert tdtype(out_g) == tdtype(out_t)
    np.testing.assert_allclose(to_np(out_g), to_np(out_t), rtol=1e-6)


@pytest.mark.parametrize("fn", list(_table_params(
    [e for e in PROMOTION if any(w in e[0] for w in ("scalar", "div", "float32", "exp", "sqrt"))
     and not e[0].startswith("tensor-of-np-float64")])))
def test_type_promotion_default_float64(fn, torch, default_float64):
    out_g, out_t = fn(G), fn(torch)
    assert tdtype(out_g) == tdtype(out_t)
    np.testing.assert_allclose(to_np(out_g), to_np(out_t), rtol=1e-6)


@pytest.mark.parametrize("data", [[1, 2], [True, False]], ids=["int64", "bool"])
def test_mean_of_int_raises_torchs_error(data, torch):
    with pytest.raises(RuntimeError) as et:
        torch.tensor(data).mean()
    with pytest.raises(RuntimeError) as eg:
        G.tensor(data).mean()
    assert str(eg.value) == str(et.value)


# ======================================================================================== error messages
def _nonscalar_backward(m):
    x = m.ones(3, requires_grad=True)
    (x * 2).backward()


def _backward_twice_mul(m):
    x = m.ones(3, requires_grad=True)
    y = (x * 2 * x).sum()
    y.backward()
    y.backward()


def _backward_twice_scalar_mul(m):
    x = m.ones(3, requires_grad=True)
    y = (x * 2).sum()
    y.backward()
    y.backward()


def _grad_shape_mismatch(m):
    x = m.ones(3, requires_grad=True)
    (x * 2).backward(m.ones(4))


def _grad_shape_mismatch_2d(m):
    x = m.ones(2, 3, requires_grad=True)
    (x * 2).backward(m.ones(3, 2))


def _backward_no_grad(m):
    m.ones(3).sum().backward()


def _backward_no_grad_leaf(m):
    m.ones(()).backward()


def _grad_of_unused(m):
    x = m.ones(3, requires_grad=True)
    y = m.ones(3, requires_grad=True)
    autograd_grad(m)((x * 2).sum(), [x, y])


def _grad_wrt_no_grad(m):
    x = m.ones(3, requires_grad=True)
    y = m.ones(3)
    autograd_grad(m)((x * 2).sum(), [x, y])


def _index_2d(m):
    return m.ones(3, 2)[1, 7]


ERRORS = [  # id, fn(m) that raises
    ("nonscalar-backward-without-gradient", _nonscalar_backward),
    ("backward-twice-through-freed-buffers", _backward_twice_mul),
    ("backward-twice-x-times-2", _backward_twice_scalar_mul),
    ("gradient-shape-mismatch", _grad_shape_mismatch),
    ("gradient-shape-mismatch-2d", _grad_shape_mismatch_2d),
    ("backward-on-tensor-without-grad", _backward_no_grad),
    ("backward-on-leaf-without-grad", _backward_no_grad_leaf),
    ("requires-grad-int-tensor", lambda m: m.tensor([1, 2], requires_grad=True)),
    ("requires-grad-bool-tensor", lambda m: m.tensor([True], requires_grad=True)),
    ("requires-grad-int-ones", lambda m: m.ones(2, dtype=m.int64, requires_grad=True)),
    ("requires-grad-inplace-int-tensor", lambda m: m.tensor([1, 2]).requires_grad_()),
    ("broadcast-mismatch", lambda m: m.ones(3) * m.ones(2, 2)),
    ("broadcast-mismatch-3d", lambda m: m.ones(3, 1, 2) + m.ones(4, 3)),
    ("broadcast-mismatch-where", lambda m: m.where(m.ones(3) > 0, m.ones(2), 0.0)),
    ("mm-shape-mismatch", lambda m: m.mm(m.ones(2, 3), m.ones(4, 5))),
    ("mm-not-matrix", lambda m: m.mm(m.ones(3), m.ones(3, 2))),
    ("matmul-2-2-mismatch", lambda m: m.ones(2, 3) @ m.ones(4, 5)),
    ("matmul-1-2-mismatch", lambda m: m.ones(3) @ m.ones(4, 5)),
    ("matmul-0d", lambda m: m.matmul(m.ones(()), m.ones(3))),
    ("matmul-3-2-mismatch", lambda m: m.ones(2, 3, 4) @ m.ones(5, 2)),
    ("matmul-3-3-mismatch", lambda m: m.ones(2, 3, 4) @ m.ones(2, 5, 2)),
    ("mv-size-mismatch", lambda m: m.mv(m.ones(2, 3), m.ones(5))),
    ("dot-size-mismatch", lambda m: m.dot(m.ones(3), m.ones(4))),
    ("dot-not-1d", lambda m: m.dot(m.ones(3, 1), m.ones(3))),
    ("dot-dtype-mismatch", lambda m: m.dot(m.ones(3), m.ones(3, dtype=m.float64))),
    ("mm-dtype-mismatch", lambda m: m.mm(m.ones(2, 2), m.ones(2, 2, dtype=m.float64))),
    ("sum-dim-out-of-range", lambda m: m.ones(2, 3).sum(dim=2)),
    ("sum-negative-dim-out-of-range", lambda m: m.ones(2, 3).sum(dim=-3)),
    ("mean-dim-out-of-range", lambda m: m.ones(2, 3).mean(dim=5)),
    ("sum-0d-dim-out-of-range", lambda m: m.ones(()).sum(dim=1)),
    ("unsqueeze-dim-out-of-range", lambda m: m.ones(2, 3).unsqueeze(3)),
    ("transpose-dim-out-of-range", lambda m: m.ones(2, 3).transpose(0, 2)),
    ("reshape-invalid-size", lambda m: m.ones(2, 3).reshape(4, 2)),
    ("reshape-invalid-inferred", lambda m: m.ones(2, 3).reshape(4, -1)),
    ("reshape-two-inferred", lambda m: m.ones(2, 3).reshape(-1, -1)),
    ("view-invalid-size", lambda m: m.ones(2, 3).view(7)),
    ("expand-bad-size", lambda m: m.ones(2, 3).expand(4, 3)),
    ("t-3d", lambda m: m.ones(2, 3, 4).t()),
    ("index-out-of-range", lambda m: m.ones(3)[5]),
    ("index-negative-out-of-range", lambda m: m.ones(3)[-4]),
    ("index-out-of-range-second-dim", _index_2d),
    ("index-list-out-of-range", lambda m: m.ones(3)[[0, 5]]),
    ("too-many-indices", lambda m: m.ones(3)[0, 0]),
    ("index-0d", lambda m: m.ones(())[0]),
    ("select-out-of-range", lambda m: m.select(m.ones(3, 2), 1, 2)),
    ("view-non-contiguous", lambda m: m.ones(3, 4).t().view(12)),
    ("item-of-many", lambda m: m.ones(3).item()),
    ("sub-bool", lambda m: m.tensor([True]) - m.tensor([False])),
    ("neg-bool", lambda m: -m.tensor([True])),
    ("int-negative-int-power", lambda m: m.tensor([1, 2]) ** -1),
    ("where-non-bool-condition", lambda m: m.where(m.tensor([1, 0]), m.ones(2), m.zeros(2))),
    ("retain-grad-without-grad", lambda m: m.ones(3).retain_grad()),
    ("grad-of-unused-input", _grad_of_unused),
    ("grad-wrt-tensor-without-grad", _grad_wrt_no_grad),
    ("bitwise-and-float", lambda m: m.ones(2) & m.ones(2)),
    ("bce-target-shape", lambda m: api(m, BCE)(m.ones(3), m.ones(4))),
]


@pytest.mark.parametrize("fn", list(_table_params(ERRORS)))
def test_error_message_matches_torch(fn, torch):
    assert_raises_like_torch(fn, torch)


PRECISION_0D = [  # derivative rules that use where() on 0-d operands
    pytest.param(lambda m, a, b: m.relu(a), (), (), id="relu-0d"),
    pytest.param(lambda m, a, b: m.pow(a, b), (3,), (), id="pow-0d-exponent"),
    pytest.param(lambda m, a, b: m.pow(a, b), (), (), id="pow-0d-0d"),
    pytest.param(lambda m, a, b: m.norm(a), (3,), (), id="norm-full"),
    pytest.param(lambda m, a, b: m.norm(a, p=3), (), (), id="norm-p3-0d"),
]


@pytest.mark.parametrize("fn, sa, sb", PRECISION_0D)
def test_float64_gradients_stay_float64_with_0d_operands(fn, sa, sb, torch):
    """float64 gradients must be computed in float64 (torch's agree to the last bits here)."""
    rng = np.random.default_rng(7)
    a, b = rng.uniform(0.5, 2.0, sa), rng.uniform(0.5, 2.0, sb)
    grads = []
    for m in (G, torch):
        ta = m.tensor(a, dtype=m.float64, requires_grad=True)
        tb = m.tensor(b, dtype=m.float64, requires_grad=True)
        out = fn(m, ta, tb)
        v = np.full(tuple(out.shape), 0.1)
        out.backward(m.tensor(v, dtype=m.float64))
        grads.append(to_np(ta.grad).copy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-13, atol=0)


def test_backward_twice_through_add_and_sum_succeeds(torch):
    # add and sum save nothing: torch allows the second backward without retain_graph, and accumulates.
    for m in (G, torch):
        x = m.ones(3, requires_grad=True)
        y = (x + 2).sum()
        y.backward()
        y.backward()
        np.testing.assert_array_equal(to_np(x.grad), [2.0, 2.0, 2.0])


# ==================================================================================== engine behaviour
@pytest.mark.parametrize("shape", [(5,), (4, 5)], ids=["eye5", "eye4x5"])
def test_accumulation_with_retain_graph(shape, torch):
    # The PyTorch autograd tutorial: gradients accumulate over calls until .grad is zeroed.
    results = {}
    for m in (G, torch):
        inp = m.eye(*shape, requires_grad=True)
        out = (inp + 1).pow(2).t()
        seen = []
        out.backward(m.ones_like(out), retain_graph=True)
        seen.append(to_np(inp.grad).copy())
        out.backward(m.ones_like(out), retain_graph=True)
        seen.append(to_np(inp.grad).copy())
        inp.grad.zero_()
        out.backward(m.ones_like(out), retain_graph=True)
        seen.append(to_np(inp.grad).copy())
        results[m.__name__] = seen
    eye = np.eye(*shape)
    expected = [2 + 2 * eye, 4 + 4 * eye, 2 + 2 * eye]
    for got_g, got_t, want in zip(results["gradcli"], results["torch"], expected):
        np.testing.assert_array_equal(got_g, want)
        np.testing.assert_array_equal(got_t, want)


def test_grad_zero_keeps_identity():
    x = G.ones(3, requires_grad=True)
    (x * 3).sum().backward()
    g = x.grad
    g.zero_()
    (x * 3).sum().backward()
    assert x.grad is g  # accumulated in place, as torch
    np.testing.assert_array_equal(g.data, [3.0, 3.0, 3.0])


@pytest.mark.parametrize("expr", [
    pytest.param(lambda m, a: a * a, id="a*a"),
    pytest.param(lambda m, a: a + a, id="x+x"),
    pytest.param(lambda m, a: a * a * a, id="a*a*a"),
    pytest.param(lambda m, a: (lambda b: b * b + b)(a * 2), id="nonleaf-fan-out"),
    pytest.param(lambda m, a: m.exp(a) * m.tanh(a), id="two-ops"),
    pytest.param(lambda m, a: (lambda b: b[0] * b[1] + b[2] * b[0])(a), id="index-fan-out"),
    pytest.param(lambda m, a: (a.sum() * a).sum(), id="reduction-fan-out"),
    pytest.param(lambda m, a: m.where(a > 0, a, -a) + a * a, id="where-fan-out"),
])
def test_fan_out_against_torch(expr, torch):
    data = np.array([0.5, -1.5, 2.0])
    grads = []
    for m in (G, torch):
        a = m.tensor(data.copy(), requires_grad=True, dtype=m.float64)
        expr(m, a).sum().backward()
        grads.append(to_np(a.grad).copy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_fan_out_values():
    a = G.tensor([0.5, -1.5, 2.0], dtype=G.float64, requires_grad=True)
    (a * a).sum().backward()
    np.testing.assert_array_equal(a.grad.data, 2 * a.data)
    a.grad = None
    (a + a).sum().backward()
    np.testing.assert_array_equal(a.grad.data, [2.0, 2.0, 2.0])
    a.grad = None
    (G.exp(a) * G.tanh(a)).sum().backward()
    e, t = np.exp(a.data), np.tanh(a.data)
    np.testing.assert_allclose(a.grad.data, e * t + e * (1 - t * t), rtol=1e-12)


def test_detach(torch):
    x = G.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert d.requires_grad is False and d.grad_fn is None and d.is_leaf
    np.testing.assert_array_equal(d.data, y.data)
    assert np.shares_memory(d.data, y.data)  # shares storage, as torch
    z = (x * d).sum()  # d is a constant
    z.backward()
    np.testing.assert_array_equal(x.grad.data, [2.0, 4.0])
    # detach of a leaf shares its data: in-place changes show through
    xd = x.detach()
    xd.zero_()
    np.testing.assert_array_equal(x.data, [0.0, 0.0])
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    tx.detach().zero_()
    np.testing.assert_array_equal(tx.detach().numpy(), [0.0, 0.0])


def test_detach_cuts_gradient_flow():
    x = G.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    out = (y.detach() * x).sum()  # d/dx = y only
    out.backward()
    np.testing.assert_array_equal(x.grad.data, [1.0, 4.0, 9.0])


def test_no_grad_and_enable_grad(torch):
    for m in (G, torch):
        x = m.ones(3, requires_grad=True)
        with m.no_grad():
            y = x * 2
            assert not m.is_grad_enabled()
            with m.enable_grad():
                z = x * 2
                assert m.is_grad_enabled()
            w = x * 2
        assert m.is_grad_enabled()
        assert y.requires_grad is False and y.grad_fn is None
        assert z.requires_grad is True and grad_fn_name(z) == "MulBackward0"
        assert w.requires_grad is False
        assert x.requires_grad is True  # leaves keep their flag


def test_no_grad_decorator_and_exception_restore():
    x = G.ones(3, requires_grad=True)

    @G.no_grad()
    def f(t):
        return t * 2

    assert f(x).requires_grad is False
    assert G.is_grad_enabled()
    with pytest.raises(ZeroDivisionError):
        with G.no_grad():
            1 / 0
    assert G.is_grad_enabled()
    y = x * 2
    assert y.requires_grad


def test_retain_grad_on_non_leaf(torch):
    grads = []
    for m in (G, torch):
        x = m.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        assert y.retains_grad
        z = y * y
        z.sum().backward(retain_graph=True)
        grads.append((to_np(y.grad).copy(), to_np(x.grad).copy()))
        # a second backward accumulates into the retained grad too
        (y * 1).sum().backward()
        grads.append((to_np(y.grad).copy(), to_np(x.grad).copy()))
    for (gy, gx), (ty, tx) in zip(grads[:2], grads[2:]):
        np.testing.assert_array_equal(gy, ty)
        np.testing.assert_array_equal(gx, tx)
    np.testing.assert_array_equal(grads[0][0], [4.0, -8.0, 12.0])


def test_non_leaf_grad_access_warns_like_torch(torch):
    messages = []
    for m in (G, torch):
        x = m.ones(2, requires_grad=True)
        y = x * 2
        with pytest.warns(UserWarning) as rec:
            assert y.grad is None
        messages.append(str(rec[0].message))
    # torch appends where in C++ it was triggered
    assert messages[0] == messages[1].split(" (Triggered internally at")[0]


def test_autograd_grad_allow_unused(torch):
    for m in (G, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = m.tensor([3.0], requires_grad=True)
        z = (x * x).sum()
        gx, gy = autograd_grad(m)(z, [x, y], allow_unused=True)
        assert gy is None
        np.testing.assert_array_equal(to_np(gx), [2.0, 4.0])
        assert x.grad is None  # returned, not accumulated


def test_autograd_grad_values_and_non_leaf(torch):
    res = []
    for m in (G, torch):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True, dtype=m.float64)
        h = x * x
        out = (h * 3).sum()
        gh, gx = autograd_grad(m)(out, [h, x], retain_graph=True)
        (gx2,) = autograd_grad(m)([out], [x], grad_outputs=[m.tensor(2.0, dtype=m.float64)])
        res.append([to_np(gh), to_np(gx), to_np(gx2)])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_autograd_grad_create_graph_second_derivative(torch):
    res = []
    for m in (G, torch):
        x = m.tensor([0.5, -1.0, 2.0], requires_grad=True, dtype=m.float64)
        y = (x ** 3).sum()
        (g,) = autograd_grad(m)(y, [x], create_graph=True)
        (gg,) = autograd_grad(m)(g.sum(), [x])
        res.append((to_np(g).copy(), to_np(gg).copy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12)


@pytest.mark.parametrize("step, n", [("add", 1_000_000), ("mul", 200_000)], ids=["add-1M", "mul-200k"])
def test_deep_chain_backward_has_no_recursion_limit(step, n, capsys):
    """A chain far deeper than Python's recursion limit: backward must be iterative. Time is measured and
    printed (run with -s), not asserted: the forward costs gradcli's per-op overhead (~10 us), the backward
    the engine's."""
    assert n > 100 * sys.getrecursionlimit()
    x0 = G.tensor(1.0, dtype=G.float64, requires_grad=True)
    t0 = time.perf_counter()
    x = x0
    if step == "mul":
        for _ in range(n):
            x = x * 1.0000001
    else:
        for _ in range(n):
            x = x + 0
    t1 = time.perf_counter()
    x.backward()
    t2 = time.perf_counter()
    want = 1.0000001 ** n if step == "mul" else 1.0
    assert x0.grad.item() == pytest.approx(want, rel=1e-9)
    del x
    with capsys.disabled():
        print(f"\n[deep chain] {n} x {step}: forward {t1 - t0:.2f}s, backward {t2 - t1:.2f}s")


@pytest.mark.parametrize("how", ["leaf-backward", "add-zero", "view", "reshape", "mul-one", "retain-grad",
                                 "two-paths"])
def test_first_grad_does_not_alias_the_users_gradient(how, torch):
    # (torch itself lets x.grad share storage with g for views, where AccumulateGrad steals the reshaped
    # gradient; gradcli always copies. Values are compared with torch, aliasing is checked on gradcli.)
    for m in (G, torch):
        x = m.zeros(3, requires_grad=True)
        h = None
        if how == "leaf-backward":
            y = x
        elif how == "add-zero":
            y = x + 0
        elif how == "view":
            y = x.view(3)
        elif how == "reshape":
            y = x.reshape(1, 3)
        elif how == "mul-one":
            y = x * 1
        elif how == "two-paths":
            y = x + x * 0
        else:
            h = x + 0
            h.retain_grad()
            y = h.view(3)
        g = m.tensor([[1.0, 2.0, 3.0]]) if how == "reshape" else m.tensor([1.0, 2.0, 3.0])
        y.backward(g)
        target = x if h is None else h
        if m is G:
            assert not np.shares_memory(target.grad.data, g.data)
            g.data[...] = 100.0  # mutating the user's tensor must not change .grad
        np.testing.assert_array_equal(to_np(target.grad), [1.0, 2.0, 3.0])
        # a later backward accumulates into .grad, never into the user's tensor
        (x * 1).backward(m.tensor([1.0, 1.0, 1.0]))
        np.testing.assert_array_equal(to_np(x.grad), [2.0, 3.0, 4.0])
        if m is G:
            np.testing.assert_array_equal(g.data.reshape(-1), [100.0, 100.0, 100.0])


def test_grad_result_does_not_alias_grad_outputs():
    x = G.zeros(3, requires_grad=True)
    v = G.tensor([1.0, 2.0, 3.0])
    (gx,) = G.grad(x + 0, [x], grad_outputs=[v])
    assert not np.shares_memory(gx.data, v.data)


def test_grad_fn_graph_and_leaf_flags(torch):
    for m in (G, torch):
        x = m.ones(2, requires_grad=True)
        y = (x * 2).sum()
        assert x.is_leaf and not y.is_leaf
        assert grad_fn_name(y) == "SumBackward0"
        (nf,) = y.grad_fn.next_functions
        mul = nf[0]
        assert (mul.name() if m is G else type(mul).__name__) == "MulBackward0"
        acc = mul.next_functions[0][0]
        assert (acc.name() if m is G else type(acc).__name__) == "AccumulateGrad"
        assert acc.variable is x


def test_int_and_bool_tensors_do_not_require_grad(torch):
    for m in (G, torch):
        x = m.ones(3, requires_grad=True)
        assert (x > 0).requires_grad is False
        i = m.tensor([1, 2])
        assert (i * 2).requires_grad is False
        assert i.requires_grad is False

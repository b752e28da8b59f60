"""Rounding (floor, ceil, trunc, frac, fmod), scans, triangles and products, masks and scatters, and order
statistics beyond their op-table samples (tests/ops/opinfo.py): error texts compared with PyTorch's,
scatter's ``reduce=`` (grad_fn NotImplemented, its backward error and deprecation warning), the indices
topk/kthvalue/median choose among tied values, and the gradients at ties and zeros."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradcli as G

from helpers import assert_raises_like_torch, grad_fn_name


def _x(m):
    return m.tensor([[1.0, -2.0, 3.0, 0.5], [0.0, 2.0, -1.0, 4.0], [2.5, 1.5, -0.5, 1.0]])


def _i(m, data):
    return m.tensor(data)


ERRORS = [
    ("floor-bool", lambda m: m.floor(m.tensor([True]))),
    ("frac-int", lambda m: m.frac(m.tensor([1, 2]))),
    ("fmod-number-input", lambda m: m.fmod(2.0, _x(m))),
    ("fmod-str-other", lambda m: m.fmod(_x(m), "a")),
    ("fmod-int-by-zero", lambda m: m.fmod(m.tensor([5, 3]), 0)),
    ("cumprod-dim", lambda m: m.cumprod(_x(m), 3)),
    ("cummax-dim", lambda m: m.cummax(_x(m), -3)),
    ("logcumsumexp-int", lambda m: m.logcumsumexp(m.tensor([1, 2]), 0)),
    ("tril-1d", lambda m: m.tril(m.ones(3))),
    ("triu-0d", lambda m: m.triu(m.tensor(1.0))),
    ("trace-3d", lambda m: m.trace(m.ones(2, 2, 2))),
    ("trace-bool", lambda m: m.trace(m.ones(2, 2, dtype=m.bool))),
    ("tensordot-negative", lambda m: m.tensordot(_x(m), _x(m), -1)),
    ("tensordot-too-many", lambda m: m.tensordot(_x(m), m.ones(4), 2)),
    ("tensordot-mismatch", lambda m: m.tensordot(_x(m), m.ones(3, 2), 1)),
    ("tensordot-int-pair", lambda m: m.tensordot(_x(m), m.ones(4, 2), (1, 0))),
    ("masked-fill-float-mask", lambda m: m.masked_fill(_x(m), m.ones(3, 4), 1.0)),
    ("masked-fill-long-mask", lambda m: m.masked_fill(_x(m), m.ones(3, 4, dtype=m.int64), 1.0)),
    ("masked-fill-1d-value", lambda m: m.masked_fill(_x(m), m.ones(3, 4, dtype=m.bool), m.ones(2))),
    ("masked-select-float-mask", lambda m: m.masked_select(_x(m), m.ones(3, 4))),
    ("scatter-index-out-of-range", lambda m: m.scatter(_x(m), 0, _i(m, [[3]]), 1.0)),
    ("scatter-float-index", lambda m: m.scatter(_x(m), 0, m.tensor([[0.0]]), 1.0)),
    ("scatter-src-dtype", lambda m: m.scatter(_x(m), 0, _i(m, [[0]]), m.ones(1, 1, dtype=m.float64))),
    ("scatter-add-src-dtype", lambda m: m.scatter_add(_x(m), 0, _i(m, [[0]]), m.ones(1, 1, dtype=m.float64))),
    ("scatter-reduce-mean", lambda m: m.scatter(_x(m), 0, _i(m, [[0]]), 2.0, reduce="mean")),
    ("index-fill-out-of-range", lambda m: m.index_fill(_x(m), 1, _i(m, [4]), 1.0)),
    ("index-fill-int32", lambda m: m.index_fill(_x(m), 1, m.tensor([0], dtype=m.int32), 1.0)),
    ("index-fill-2d-index", lambda m: m.index_fill(_x(m), 1, _i(m, [[0]]), 1.0)),
    ("index-fill-negative-out-of-range", lambda m: m.index_fill(_x(m), 1, _i(m, [-5]), 1.0)),
    ("index-copy-int32", lambda m: m.index_copy(_x(m), 1, m.tensor([0], dtype=m.int32), m.ones(3, 1))),
    ("index-copy-2d-index", lambda m: m.index_copy(_x(m), 1, _i(m, [[0]]), m.ones(3, 1))),
    ("index-copy-negative", lambda m: m.index_copy(_x(m), 1, _i(m, [-1]), m.ones(3, 1))),
    ("index-copy-count", lambda m: m.index_copy(_x(m), 1, _i(m, [0]), m.ones(3, 2))),
    ("index-copy-dtype", lambda m: m.index_copy(_x(m), 1, _i(m, [0]), m.ones(3, 1, dtype=m.float64))),
    ("take-out-of-range", lambda m: m.take(_x(m), _i(m, [12]))),
    ("take-float-index", lambda m: m.take(_x(m), m.tensor([1.0]))),
    ("take-along-dim-ndim", lambda m: m.take_along_dim(_x(m), _i(m, [0]), 0)),
    ("take-along-dim-int32", lambda m: m.take_along_dim(_x(m), m.tensor([[0]], dtype=m.int32), 1)),
    ("take-along-dim-0d-dim", lambda m: m.take_along_dim(m.tensor(1.0), m.tensor(0), 0)),
    ("topk-k-too-large", lambda m: m.topk(_x(m), 5)),
    ("topk-0d-k2", lambda m: m.topk(m.tensor(3.0), 2)),
    ("kthvalue-k0", lambda m: m.kthvalue(_x(m), 0)),
    ("kthvalue-empty", lambda m: m.kthvalue(m.zeros(3, 0), 1, 1)),
    ("median-bool", lambda m: m.median(m.tensor([True, False]))),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in ERRORS])
def test_error_message_matches_torch(fn, torch):
    assert_raises_like_torch(fn, torch)


@pytest.mark.parametrize("value", [False, True])
def test_scatter_reduce_records_not_implemented(value, torch):
    """scatter(..., reduce=): the values (repeated positions accumulate), grad_fn NotImplemented, the backward's
    error, the forward-AD error, and the deprecation warning for a tensor src, as PyTorch's."""
    got = []
    for m in (torch, G):
        x = _x(m).requires_grad_()
        idx = _i(m, [[0, 1, 2, 0], [0, 1, 1, 1]])
        src = 1.5 if value else m.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = m.scatter(x, 0, idx, src, reduce="multiply" if value else "add")
        messages = [str(e.message).split(" (Triggered internally")[0] for e in w if e.category is UserWarning]
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        got.append((np.asarray(y.detach().tolist()), grad_fn_name(y), str(e.value), messages))
    (tv, tn, te, tw), (gv, gn, ge, gw) = got
    np.testing.assert_allclose(gv, tv)
    assert gn == tn == "NotImplemented"
    assert ge == te
    # PyTorch warns once per process (TORCH_WARN_ONCE): after an earlier scatter with reduce= in the same run,
    # torch says nothing more, and gradcli still says it
    assert gw == tw or (tw == [] and gw == ([] if value else [
        "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a future "
        "PyTorch release. Use torch.scatter_reduce instead for more reduction options."]))


@pytest.mark.parametrize("name, call", [
    ("topk", lambda m, a: m.topk(a, 3, 1)), ("topk-smallest-unsorted", lambda m, a: m.topk(a, 4, 1, False, False)),
    ("topk-partial-sort", lambda m, a: m.topk(a.repeat(1, 30), 2, 1)),
    ("kthvalue", lambda m, a: m.kthvalue(a, 3, 1)), ("median-dim", lambda m, a: m.median(a, 1)),
    ("cummax", lambda m, a: m.cummax(a, 1)), ("cummin", lambda m, a: m.cummin(a, 0)),
])
def test_tie_indices_and_gradients_match_torch(name, call, torch):
    """Among tied values the index PyTorch's CPU kernels choose (libstdc++'s selection for topk, quickselect for
    kthvalue), and so where the gradient goes."""
    rows = [[2.0, 2.0, 1.0, 2.0, 0.0, 1.0], [4.0, 4.0, 4.0, 4.0, 4.0, 4.0], [1.0, 3.0, 3.0, 0.0, 3.0, 1.0],
            [0.0, 0.0, 5.0, 5.0, 0.0, 0.0]]
    got = []
    for m in (torch, G):
        a = m.tensor(rows, requires_grad=True)
        r = call(m, a)
        w = m.arange(r.values.numel(), dtype=m.float32).reshape(r.values.shape) + 1
        (r.values * w).sum().backward()
        got.append((r.indices.tolist(), a.grad.tolist()))
    assert got[1] == got[0]


def test_cumprod_gradient_with_zeros_matches_torch(torch):
    rows = [[2.0, 0.0, 3.0, 0.0, 1.5], [0.0, 1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0, 0.0]]
    got = []
    for m in (torch, G):
        a = m.tensor(rows, dtype=m.float64, requires_grad=True)
        y = m.cumprod(a, 1)
        (g,) = m.autograd.grad((y * m.arange(15, dtype=m.float64).reshape(3, 5)).sum(), a, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), a)
        got.append((g.tolist(), gg.tolist()))
    np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-12)
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-12)


INPLACE = [
    ("masked_fill_", lambda m, y, v: y.masked_fill_(m.tensor([[True, False, True, False]] * 3), 1.5)),
    ("masked_fill_-tensor", lambda m, y, v: y.masked_fill_(m.tensor([True, False, False, True]), v)),
    ("scatter_", lambda m, y, v: y.scatter_(0, m.tensor([[0, 1, 2, 0]]), v.expand(1, 4) * 1.0)),
    ("scatter_-value", lambda m, y, v: y.scatter_(1, m.tensor([[0], [3], [1]]), 2.0)),
    ("scatter_add_", lambda m, y, v: y.scatter_add_(0, m.tensor([[0, 1, 2, 0], [0, 0, 0, 0]]), v * m.ones(2, 4))),
    ("index_fill_", lambda m, y, v: y.index_fill_(1, m.tensor([0, 2]), v)),
    ("index_copy_", lambda m, y, v: y.index_copy_(1, m.tensor([3, 0]), v * m.ones(3, 2))),
    ("floor_", lambda m, y, v: (y * 3).floor_()), ("ceil_", lambda m, y, v: (y * 3).ceil_()),
    ("trunc_", lambda m, y, v: (y * 3).trunc_()), ("fix_", lambda m, y, v: (y * 3).fix_()),
    ("frac_", lambda m, y, v: (y * 3).frac_()), ("fmod_", lambda m, y, v: y.fmod_(0.75)),
    ("fmod_-tensor", lambda m, y, v: y.fmod_(v * m.tensor([1.0, -0.5, 0.75, 2.0]))),
]


@pytest.mark.parametrize("call", [pytest.param(c, id=i) for i, c in INPLACE])
def test_inplace_variants_match_torch(call, torch):
    """The in-place methods: values, grad_fn (the out-of-place op's), gradients of self and of a tensor value."""
    got = []
    for m in (torch, G):
        x = _x(m).requires_grad_()
        v = m.tensor(2.0, requires_grad=True)
        y = x * 1
        out = call(m, y, v)
        (out * _x(m)).sum().backward()
        got.append((out.tolist(), grad_fn_name(out), x.grad.tolist(), None if v.grad is None else v.grad.item()))
    (tv, tn, tx, tg), (gv, gn, gx, gg) = got
    np.testing.assert_allclose(gv, tv, rtol=1e-6)
    assert gn == tn
    np.testing.assert_allclose(gx, tx, rtol=1e-6)
    assert (gg is None) == (tg is None) and (gg is None or abs(gg - tg) < 1e-5)


@pytest.mark.parametrize("data, dim", [(0.0, 0), ([[0.0], [2.0]], 1), ([0.0, 2.0, 3.0], 0), ([2.0, 0.0, 0.0, 3.0], 0)])
def test_cumprod_tangent_with_zeros_matches_torch(data, dim, torch):
    from gradcli.api import forward_ad as fa
    import torch.autograd.forward_ad as ta

    with fa.dual_level():
        d = fa.make_dual(G.tensor(data), G.tensor(data) * 0 + G.tensor(1.5))
        got = fa.unpack_dual(G.cumprod(d, dim)).tangent.tolist()
    with ta.dual_level():
        d = ta.make_dual(torch.tensor(data), torch.tensor(data) * 0 + 1.5)
        want = ta.unpack_dual(torch.cumprod(d, dim)).tangent.tolist()
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("call", [
    lambda m: m.topk(m.zeros(3, 0), 0, 1), lambda m: m.topk(m.zeros(0, 3), 2, 1),
    lambda m: m.kthvalue(m.zeros(0, 3), 2, 1),
    lambda m: m.median(m.zeros(0, 3), 1), lambda m: m.cummax(m.zeros(2, 0), 1), lambda m: m.cumprod(m.zeros(0, 3), 0),
])
def test_empty_inputs_match_torch(call, torch):
    def shapes(r):
        return [tuple(t.shape) for t in r] if isinstance(r, tuple) else [tuple(r.shape)]

    assert shapes(call(G)) == shapes(call(torch))

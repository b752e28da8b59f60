"""Type promotion, error messages and float64 precision of gradcli's ops, compared with PyTorch.

* :data:`PROMOTION`: result dtypes and values of mixed-dtype expressions (int/bool/float16/32/64 tensors and
  Python numbers), also with float64 as the default dtype;
* :data:`ERRORS`: the exception type and message of bad calls (shapes, dims, dtypes, indices, backward
  misuse) equal PyTorch's;
* float64 gradients of rules that use ``where`` on 0-d operands stay float64 to the last bits.

The op table's generic tests (gradcheck, values, gradients) are in tests/ops/test_op_table.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as G

from helpers import api, assert_raises_like_torch, autograd_grad, to_np

BCE = "binary_cross_entropy_with_logits"


def xfail_bug(reason: str):
    """A reported gradcli bug: a strict xfail, so that its fix is noticed."""
    return pytest.mark.xfail(strict=True, reason=reason)


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


def tdtype(t) -> str:
    """A gradcli or torch dtype as torch prints it ("torch.float32")."""
    return str(t.dtype)


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

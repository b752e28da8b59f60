"""The optimised paths of the op table and the engine give the results of the general ones.

* ``_core._apply``'s inline fast path (one or two inputs of one float dtype, or a float tensor and a Python
  number) against the general path (promotion, ``_wrap_output``), which a Tensor subclass takes: the same
  values, dtypes, grad_fn names and gradients, bit for bit;
* float32 stays float32 (and float64 float64) through numbers, operators and backward;
* the shared read-only arrays for Python numbers: never written, -0.0 and nan kept apart;
* the engine's shortcut for nodes used once (``Node.uses``): partial graphs, nodes used twice, several roots,
  retain_graph, create_graph, against PyTorch;
* Tensor's operators (``positional``) against the functions they stand for, including sub's bool errors.

No timings here: benchmarks/run.py measures.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as G
from gradcli.ops.core import apply as _core


def leaf(values, dtype):
    return G.Tensor(np.array(values, dtype=dtype), True)


def _same(a, b):
    assert type(a) is type(b) is G.Tensor
    assert a.data.dtype == b.data.dtype
    assert a.data.shape == b.data.shape
    np.testing.assert_array_equal(a.data, b.data)


def _arithmetic(name):
    from gradcli.ops.elementwise import arithmetic

    return getattr(arithmetic, name)


# (op, arguments after the tensor inputs): every op the fast path serves, with parameters at their defaults
OPS = {
    "add": (lambda: G.add, (1,)), "add_alpha": (lambda: G.add, (2,)), "sub": (lambda: _arithmetic("_sub"), (1,)),
    "mul": (lambda: G.mul, ()), "true_divide": (lambda: G.true_divide, ()), "tanh": (lambda: G.tanh, ()),
    "exp": (lambda: G.exp, ()), "neg": (lambda: G.neg, ()), "sigmoid": (lambda: G.sigmoid, ()),
    "sin": (lambda: G.sin, ()), "abs": (lambda: G.abs, ()), "gelu": (lambda: G.gelu, ("none",)), "sum": (lambda: G.sum, (None, False, None)),
    "mean_dim": (lambda: G.mean, (0, True, None)), "dot": (lambda: G.dot, ()),
}
# operands: ("leaf", values) a leaf that requires grad, ("const", values) a constant tensor, ("number", v)
OPERANDS = {
    "tensors": (("leaf", [[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]]), ("leaf", [[0.5, 4.0, -3.0], [1.0, 2.0, 0.75]])),
    "broadcast": (("leaf", [[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]]), ("leaf", [0.5, 4.0, -3.0])),
    "0-d": (("leaf", 1.25), ("leaf", [0.5, 4.0, -3.0])),
    "vectors": (("leaf", [1.5, -2.0, 0.25]), ("leaf", [0.5, 4.0, -3.0])),
    "constant": (("leaf", [1.5, -2.0, 0.25]), ("const", [0.5, 4.0, -3.0])),
    "float": (("leaf", [1.5, -2.0, 0.25]), ("number", 2.5)),
    "int": (("leaf", [1.5, -2.0, 0.25]), ("number", 3)),
}


def _cases():
    for name, (make, _) in OPS.items():
        n = 1 if name in ("tanh", "exp", "neg", "sigmoid", "sin", "abs", "gelu", "sum", "mean_dim") else 2
        for kind in OPERANDS:
            if n == 1 and kind not in ("tensors", "vectors", "0-d"):
                continue  # one input: the second operand does not matter
            if name == "dot" and kind not in ("vectors", "constant"):
                continue  # dot takes two 1-d tensors
            yield name, kind


def _apply_both(o, operands, params, dtype):
    """The op through _apply (its fast path) and through _apply_general on fresh, equal operands, then backward
    through both; returns [(out, grads)] for each."""
    results = []
    for apply in (_core._apply, _core._apply_general):
        ts = [leaf(v, dtype) if k == "leaf" else G.Tensor(np.array(v, dtype=dtype)) if k == "const" else v
              for k, v in operands]
        out = apply(o, (*ts, *params))
        out.backward(G.Tensor(np.ones(out.data.shape, dtype=out.data.dtype)))
        results.append((out, [t.grad for t in ts if isinstance(t, G.Tensor) and t.requires_grad]))
    return results


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, kind", list(_cases()))
def test_fast_path_equals_general_path(name, kind, dtype):
    make, params = OPS[name]
    o = make()
    (out1, g1), (out2, g2) = _apply_both(o, OPERANDS[kind][:o.ninputs], params, dtype)
    _same(out1, out2)
    assert out1.grad_fn.name() == out2.grad_fn.name()
    assert out1.grad_fn.dtype == out2.grad_fn.dtype and out1.grad_fn.out_shape == out2.grad_fn.out_shape
    assert len(g1) == len(g2) > 0
    for a, b in zip(g1, g2):
        _same(a, b)


@pytest.mark.perf
def test_fast_path_is_taken(monkeypatch):
    """The comparisons above would prove nothing if _apply took the general path for these calls."""
    def general(o, args):
        raise AssertionError(f"{o.name} took the general path")

    monkeypatch.setattr(_core, "_apply_general", general)
    x, c = leaf([1.0, 2.0], "float32"), G.Tensor(np.array([3.0, 4.0], dtype=np.float32))
    y = (((x * 2.0 + c) - 1).tanh() / x).exp().sum()
    y.backward()
    with pytest.raises(AssertionError, match="took the general path"):
        x * np.float64(2.0)  # a numpy scalar is not a Python number: the general path


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dtype_is_kept_through_numbers_and_backward(dtype, torch):
    x = leaf([0.5, -1.5, 2.0], dtype)
    tx = torch.tensor([0.5, -1.5, 2.0], dtype=getattr(torch, dtype), requires_grad=True)
    outs = []
    for m, t in ((G, x), (torch, tx)):
        y = (2.5 * t + 1) / 3 - 0.5
        y = (y * y).tanh() ** 2 + (2 - t) * 0.1
        y = m.sigmoid(y) * 1e-3 + m.exp(-t)
        outs.append(y)
        y.sum().backward()
    assert outs[0].dtype.name == dtype and x.grad.dtype.name == dtype
    np.testing.assert_allclose(outs[0].data, outs[1].detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-5)


def test_number_arrays_are_shared_read_only_and_keep_signed_zero(torch):
    x = leaf([1.0, -1.0], "float32")
    y1, y2 = x * 1.75, x * 1.75
    s1, s2 = y1.grad_fn.saved[1], y2.grad_fn.saved[1]
    assert s1 is s2 and not s1.flags.writeable
    y1.data[...] = 0  # results never alias the shared number
    assert s1 == np.float32(1.75)
    for zero in (0.0, -0.0):
        got = (x * zero).data
        want = (torch.tensor([1.0, -1.0]) * zero).numpy()
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    n1, n2 = x * float("nan"), x * float("nan")
    assert np.isnan(n1.data).all()
    assert n1.grad_fn.saved[1] is not n2.grad_fn.saved[1]  # nan is not a dict key that finds itself: not cached


def _both(build, torch):
    """build(module, x) -> output for gradcli and torch; returns (gradcli x.grad, torch x.grad)."""
    x = leaf([0.5, -1.5, 2.0], "float64")
    tx = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
    build(G, x)
    build(torch, tx)
    return x.grad.data, tx.grad.numpy()


@pytest.mark.parametrize("case", ["shared", "partial", "partial-then-rest", "roots", "retain", "long-chain"])
def test_engine_shortcut_for_nodes_used_once(case, torch):
    def build(m, x):
        if case == "shared":  # y used by three edges of two nodes
            y = x * 2
            ((y * y + y).tanh() * 3).sum().backward()
        elif case == "partial":  # y has two uses, one outside the graph being differentiated
            y = x * 2
            a, b = y * 3, y * 4  # noqa: F841
            a.sum().backward()
        elif case == "partial-then-rest":
            y = (x * 2).tanh()
            a, b = y * 3, y * 4
            a.sum().backward(retain_graph=True)
            b.sum().backward()
        elif case == "roots":  # several roots, one of them inside the other's graph
            b = (x * 2).exp()
            a = (b * 3).sum()
            (m.autograd.backward if m is G else m.autograd.backward)([a, b.sum()])
        elif case == "retain":
            y = ((x * 1.5).sigmoid() - 0.25).sum()
            y.backward(retain_graph=True)
            y.backward()
        else:
            y = x
            for i in range(3000):
                y = (y * 1.0001 + 0.001).tanh() if i % 2 else y - 0.0005
            y.sum().backward()
    g, tg = _both(build, torch)
    np.testing.assert_allclose(g, tg, rtol=1e-12)


def test_engine_shortcut_with_create_graph(torch):
    """Second derivatives: the backward pass adds uses to nodes while it runs."""
    res = []
    for m in (G, torch):
        x = m.tensor([0.5, -1.5, 2.0], dtype=m.float64, requires_grad=True)
        w = m.tensor([1.5, 0.5, -1.0], dtype=m.float32, requires_grad=True)  # promoted: saved values are cast
        y = ((x * w).tanh() * x).sum()
        gx, gw = (G.grad if m is G else m.autograd.grad)(y, [x, w], create_graph=True)
        (gx.sum() + (gw * gw).sum()).backward()
        res.append([np.asarray(t.data if m is G else t.detach().numpy()) for t in (gx, gw, x.grad, w.grad)])
    for a, b in zip(*res):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("op, fn", [("__add__", G.add), ("__mul__", G.mul), ("__truediv__", G.div),
                                    ("__sub__", G.sub)])
@pytest.mark.parametrize("other", ["tensor", 2.5, 3])
def test_operators_equal_their_functions(op, fn, other):
    x = leaf([1.5, -2.0], "float32")
    o = leaf([0.5, 4.0], "float32") if other == "tensor" else other
    a, b = getattr(x, op)(o), fn(x, o)
    _same(a, b)
    assert a.grad_fn.name() == b.grad_fn.name()


def test_sub_operator_keeps_bool_errors(torch):
    for a, b in (([True, False], [True, True]), ([1.0, 2.0], True), ([True, False], 1.5)):
        with pytest.raises(RuntimeError) as got:
            G.tensor(a) - (G.tensor(b) if isinstance(b, list) else b)
        with pytest.raises(RuntimeError) as want:
            torch.tensor(a) - (torch.tensor(b) if isinstance(b, list) else b)
        assert str(got.value) == str(want.value)


def test_broadcast_error_on_the_fast_path(torch):
    with pytest.raises(RuntimeError) as got:
        leaf([1.0, 2.0, 3.0], "float32") * leaf([1.0, 2.0], "float32")
    with pytest.raises(RuntimeError) as want:
        torch.ones(3) * torch.ones(2)
    assert str(got.value) == str(want.value)


def test_positional_rejects_wrong_arity():
    with pytest.raises(ValueError):
        _core.positional(G.add, 1)

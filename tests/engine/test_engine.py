"""The autograd engine against PyTorch: gradient accumulation, fan-out, detach, grad modes, retain_grad,
``autograd.grad`` (unused inputs, non-leaves, second derivatives), deep graphs without recursion limits,
gradients that never alias the user's tensors, and the recorded graph of ``grad_fn`` nodes.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest

import gradcli as G

from helpers import autograd_grad, grad_fn_name, to_np


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


# 200,000 nodes: 200 times Python's default recursion limit, so any recursion in backward fails; more only
# adds time.
@pytest.mark.parametrize("step, n", [("add", 200_000), ("mul", 200_000)], ids=["add-200k", "mul-200k"])
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

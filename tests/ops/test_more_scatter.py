"""index_reduce(_), put(_), masked_scatter_ and fill_diagonal_ (gradcli/ops/shape/more_scatter.py): values,
grad_fn names, gradients and error texts compared with PyTorch, and a `gradcli run` program."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradcli as G
from helpers import python_and_gradcli_stdout


def _both(fn, torch):
    out = []
    for m in (G, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(fn(m))
    return out


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_in_place_values_and_gradients(reduce, include_self, torch):
    a = np.random.default_rng(0).standard_normal((5, 3))
    s = np.random.default_rng(1).standard_normal((4, 3))
    v = np.random.default_rng(2).standard_normal((5, 3))

    def run(m):
        x, src = m.tensor(a, requires_grad=True), m.tensor(s, requires_grad=True)
        y = x * 1.0
        y.index_reduce_(0, m.tensor([0, 4, 2, 0]), src, reduce, include_self=include_self)
        y.backward(m.tensor(v))
        return np.array(y.tolist()), y.grad_fn.name(), np.array(x.grad.tolist()), np.array(src.grad.tolist())

    g, t = _both(run, torch)
    assert g[1] == t[1] == "IndexReduceBackward0"
    for k in (0, 2, 3):
        np.testing.assert_allclose(g[k], t[k], rtol=1e-6, atol=1e-7)


def test_index_reduce_of_integers_and_its_errors(torch):
    def run(m):
        x = m.tensor([[5, 7], [1, 1], [3, 4]])
        out = [x.index_reduce(0, m.tensor([0, 0, 2]), m.tensor([[2, 2], [3, 3], [9, 9]]), "mean").tolist()]
        for args in ((0, m.tensor([0]), m.ones(1, 2, dtype=m.int64), "sum"),
                     (0, m.tensor([0.0]), m.ones(1, 2, dtype=m.int64), "prod"),
                     (0, m.tensor([5]), m.ones(1, 2, dtype=m.int64), "prod"),
                     (0, m.tensor([0, 1]), m.ones(1, 2, dtype=m.int64), "prod"),
                     (0, m.tensor([0]), m.ones(1, 2), "prod")):
            try:
                x.index_reduce(*args)
            except (RuntimeError, IndexError) as e:
                out.append((type(e).__name__, str(e)))
        return out

    g, t = _both(run, torch)
    assert g == t


def test_index_reduce_warns_as_pytorch_and_refuses_forward_mode(torch):
    with pytest.warns(UserWarning, match="index_reduce\\(\\) is in beta"):
        G.zeros(2).index_reduce(0, G.tensor([0]), G.ones(1), "prod")
    fa = G.func.jvp
    with pytest.raises(NotImplementedError) as got:
        fa(lambda x: x.index_reduce(0, G.tensor([0]), G.ones(1), "prod"), (G.ones(2),), (G.ones(2),))
    with pytest.raises(NotImplementedError) as want, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.func.jvp(lambda x: x.index_reduce(0, torch.tensor([0]), torch.ones(1), "prod"), (torch.ones(2),),
                       (torch.ones(2),))
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_values_gradients_and_saved_values(accumulate, torch):
    a = np.random.default_rng(3).standard_normal((2, 3))
    s = np.random.default_rng(4).standard_normal(3)
    v = np.random.default_rng(5).standard_normal((2, 3))

    def run(m):
        x, src = m.tensor(a, requires_grad=True), m.tensor(s, requires_grad=True)
        idx = m.tensor([1, -1, 1])
        y = m.put(x, idx, src, accumulate)
        z = (x * 1.0).put_(idx, src, accumulate)
        saved = (y.grad_fn._saved_index.tolist(), y.grad_fn._saved_accumulate)
        y.backward(m.tensor(v))
        return (np.array(y.tolist()), np.array(z.tolist()), y.grad_fn.name(), z.grad_fn.name(),
                np.array(x.grad.tolist()), np.array(src.grad.tolist())) + saved

    g, t = _both(run, torch)
    np.testing.assert_allclose(g[0], t[0])
    np.testing.assert_allclose(g[1], t[1])
    assert g[2:4] == t[2:4] and g[6:] == t[6:]
    if accumulate:  # (with repeated indices and no accumulation PyTorch leaves which write wins unspecified)
        np.testing.assert_allclose(g[4], t[4])
        np.testing.assert_allclose(g[5], t[5])


def test_put_errors_are_pytorchs(torch):
    def run(m):
        x = m.zeros(2, 3)
        out = []
        for args in ((m.tensor([10]), m.ones(1)), (m.tensor([1, 2]), m.ones(3)), (m.tensor([1.0]), m.ones(1))):
            try:
                x.put(*args)
            except (RuntimeError, IndexError) as e:
                out.append((type(e).__name__, str(e)))
        return out

    g, t = _both(run, torch)
    assert g == t and len(g) == 3


def test_masked_scatter_in_place(torch):
    def run(m):
        x = m.tensor([[0.0, 0, 0, 0, 0], [0, 0, 0, 0, 0]], requires_grad=True)
        src = m.arange(10.0).reshape(2, 5).requires_grad_()
        mask = m.tensor([[0, 0, 0, 1, 1], [1, 1, 0, 1, 1]], dtype=m.bool)
        y = x * 1.0
        y.masked_scatter_(mask, src)
        y.backward(m.arange(10.0).reshape(2, 5))
        return y.tolist(), y.grad_fn.name(), x.grad.tolist(), src.grad.tolist()

    g, t = _both(run, torch)
    assert g == t


@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((7, 3), False), ((7, 3), True), ((3, 5), True),
                                        ((3, 3, 3), False), ((4, 2), True)])
def test_fill_diagonal(shape, wrap, torch):
    def run(m):
        w = m.ones(*shape, requires_grad=True)
        y = w * 2.0
        y.fill_diagonal_(5, wrap=wrap)
        y.sum().backward()
        z = m.zeros(*shape).t() if len(shape) == 2 else m.zeros(*shape)
        z.fill_diagonal_(1.5, wrap)
        return y.tolist(), y.grad_fn.name().replace("torch::autograd::", ""), w.grad.tolist(), z.tolist()

    g, t = _both(run, torch)
    assert g == t


def test_fill_diagonal_errors_are_pytorchs(torch):
    for shape in ((3,), (3, 4, 5)):
        with pytest.raises(RuntimeError) as want:
            torch.zeros(*shape).fill_diagonal_(1)
        with pytest.raises(RuntimeError) as got:
            G.zeros(*shape).fill_diagonal_(1)
        assert str(got.value) == str(want.value)


PROGRAM = """
import torch
x = torch.empty(5, 3).fill_(2)
t = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]], dtype=torch.float, requires_grad=True)
index = torch.tensor([0, 4, 2, 0])
y = x.index_reduce(0, index, t, 'amax', include_self=False)
print(y)
y.sum().backward()
print(t.grad)
src = torch.tensor([[4, 3, 5], [6, 7, 8]])
print(src.put_(torch.tensor([1, 3]), torch.tensor([9, 10])))
s = torch.zeros(2, 5)
print(s.masked_scatter_(torch.tensor([[0, 0, 0, 1, 1], [1, 1, 0, 1, 1]], dtype=torch.bool), torch.arange(10.0)))
c = torch.zeros(7, 3)
print(c.fill_diagonal_(5, wrap=True))
w = torch.ones(3, 3, requires_grad=True)
d = w * 3
d.fill_diagonal_(0)
print(d)
d.sum().backward()
print(w.grad)
"""


def test_a_program_prints_what_pytorch_prints(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "more_scatter", PROGRAM)
    assert got == want


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_of_bool_tensors_as_pytorch(reduce, include_self, torch):
    # ATen's bool kernels: prod/amax/amin including self answer; excluding self, or mean, raise its messages
    def run(m):
        a = m.tensor([[True, False], [False, True]])
        b = m.tensor([[True, True]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return a.index_reduce(0, m.tensor([1]), b, reduce, include_self=include_self).tolist()
            except RuntimeError as e:
                return str(e)

    assert run(G) == run(torch)

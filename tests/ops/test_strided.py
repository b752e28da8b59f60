"""Strides and storage (gradcli/ops/shape/strided.py): Tensor.stride, storage_offset, is_contiguous, dim_order,
element_size, resize_, untyped_storage, torch.is_storage, empty_permuted, the memory formats, as_strided and
as_strided_scatter, compared with PyTorch; and the same through `gradcli run`."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as G
from gradcli.api.gradcheck import gradcheck
from helpers import python_and_gradcli_stdout

#: Tensors made by views and by ops that allocate, as (id, builder(m)); their strides, offsets and contiguity
#: must be PyTorch's.
LAYOUTS = [
    ("contiguous", lambda m: m.zeros(2, 3, 4)), ("t", lambda m: m.zeros(2, 3).t()),
    ("permute", lambda m: m.zeros(2, 3, 4).permute(2, 0, 1)), ("slice-step", lambda m: m.zeros(4, 6)[1:, ::2]),
    ("select", lambda m: m.zeros(4, 6)[2]), ("unsqueeze-0", lambda m: m.zeros(2, 3).unsqueeze(0)),
    ("unsqueeze-last", lambda m: m.zeros(2, 3).unsqueeze(-1)), ("none-index", lambda m: m.zeros(2, 3)[:, None]),
    ("expand", lambda m: m.zeros(3, 1).expand(3, 4)), ("expand-new-dims", lambda m: m.zeros(3).expand(2, 1, 3)),
    ("view", lambda m: m.zeros(2, 6).view(3, 4)), ("diagonal", lambda m: m.zeros(3, 3).diagonal()),
    ("sin-of-t", lambda m: m.zeros(2, 3).t().sin()), ("add-of-t", lambda m: m.zeros(3, 2).t() + 1),
    ("flip", lambda m: m.zeros(2, 3).flip(0)), ("matmul", lambda m: m.zeros(2, 3) @ m.zeros(3, 4)),
    ("sum", lambda m: m.zeros(2, 3, 4).sum(1)), ("cat", lambda m: m.cat([m.zeros(2, 3), m.zeros(2, 3)])),
    ("clone-of-t", lambda m: m.zeros(2, 3).t().clone()), ("contiguous-of-t", lambda m: m.zeros(2, 3).t().contiguous()),
    ("narrow", lambda m: m.zeros(5, 4).narrow(0, 1, 2)), ("unbind", lambda m: m.zeros(3, 4).unbind(1)[2]),
    ("chunk", lambda m: m.zeros(6, 4).chunk(3)[1]), ("squeeze", lambda m: m.zeros(2, 1, 3).squeeze(1)),
    ("size-1", lambda m: m.zeros(2, 1, 3)), ("empty", lambda m: m.zeros(0, 3)), ("0d", lambda m: m.tensor(3.0)),
    ("reshape-copy", lambda m: m.zeros(2, 3).t().reshape(6)), ("advanced-index", lambda m: m.zeros(4, 3)[m.tensor([0, 2])]),
    ("transpose-slice", lambda m: m.zeros(2, 3, 4).transpose(0, 2)[1:]), ("mT", lambda m: m.zeros(2, 3, 4).mT),
    ("split", lambda m: m.zeros(5, 4).split(2, dim=1)[1]), ("relu-of-permute", lambda m: m.zeros(2, 3, 4).permute(1, 2, 0).relu()),
    ("channels-last", lambda m: m.empty(2, 3, 5, 7, memory_format=m.channels_last)),
    ("empty-permuted", lambda m: m.empty_permuted((2, 3, 5, 7), (0, 2, 3, 1))),
    ("as-strided", lambda m: m.as_strided(m.zeros(3, 3), (2, 2), (1, 2), 1)),
    ("as-strided-of-slice", lambda m: m.as_strided(m.zeros(4, 4)[1:], (2,), (5,))),
]


@pytest.mark.parametrize("build", [pytest.param(b, id=i) for i, b in LAYOUTS])
def test_strides_offsets_and_contiguity_are_pytorchs(build, torch):
    g, t = build(G), build(torch)
    assert g.stride() == t.stride()
    assert g.storage_offset() == t.storage_offset()
    assert g.is_contiguous() == t.is_contiguous()
    assert [g.stride(d) for d in range(-g.dim(), g.dim())] == [t.stride(d) for d in range(-t.dim(), t.dim())]
    assert g.element_size() == t.element_size()
    if g.dim():
        assert g.dim_order() == t.dim_order()


def test_stride_of_a_dim_out_of_range_is_pytorchs_error(torch):
    with pytest.raises(IndexError) as want:
        torch.zeros(3).stride(3)
    with pytest.raises(IndexError) as got:
        G.zeros(3).stride(3)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("check", [True, False, ["contiguous_format", "channels_last"], "ILLEGAL", ["x"]])
@pytest.mark.parametrize("shape,perm", [((1, 2, 3, 4), None), ((2, 3, 5, 7), None), ((2, 3, 5, 7), (0, 2, 3, 1)),
                                        ((2, 2), (1, 0)), ((3, 3, 3, 3), (0, 2, 3, 1))])
def test_dim_order_and_its_ambiguity_check(shape, perm, check, torch):
    def run(m):
        x = m.empty(shape) if perm is None else m.empty_permuted(shape, perm)
        arg = [getattr(m, f) for f in check] if isinstance(check, list) and check != ["x"] else check
        try:
            return x.dim_order(ambiguity_check=arg)
        except (RuntimeError, TypeError) as e:
            return type(e).__name__, str(e)

    assert run(G) == run(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "uint8", "int8", "int16", "int32", "int64", "bool"])
def test_element_size(dtype, torch):
    assert G.tensor([], dtype=getattr(G, dtype)).element_size() == torch.tensor([], dtype=getattr(torch, dtype)).element_size()


def test_views_share_the_storage_that_as_strided_reads(torch):
    for m in (G, torch):
        x = m.arange(12.0).reshape(3, 4)
        v = m.as_strided(x, (2, 2), (1, 4), 1)
        v.mul_(-1)  # a view: the base sees it
        if m is G:
            got = (x.tolist(), v._base is x)
        else:
            want = (x.tolist(), v._base is x)
    assert got == want


@pytest.mark.parametrize("case", [
    ((3, 3), None, (2, 2), (1, 2), None), ((3, 3), None, (2, 2), (1, 2), 1), ((3, 3), None, (3, 2), (1, 1), None),
    ((3, 4), "t", (2, 3), (1, 4), None), ((4, 4), "slice", (2, 3), (4, 1), None), ((4, 4), "slice", (2,), (1,), 0),
    ((2, 3), None, (), (), 4), ((2, 3), None, (0, 2), (1, 1), None)])
def test_as_strided_values_and_gradients_are_pytorchs(case, torch):
    shape, how, size, stride, offset = case
    a = np.random.default_rng(0).standard_normal(shape)
    v = np.random.default_rng(1).standard_normal(size)
    res = []
    for m in (G, torch):
        x = m.tensor(a, requires_grad=True)
        base = x * 1.0
        src = base.t() if how == "t" else base[1:] if how == "slice" else base
        y = m.as_strided(src, size, stride) if offset is None else m.as_strided(src, size, stride, offset)
        y.backward(m.tensor(v))
        res.append((np.array(y.tolist()), type(y.grad_fn).__name__ if m is torch else y.grad_fn.name(),
                    np.array(x.grad.tolist()), y.stride(), y.storage_offset()))
    g, t = res
    np.testing.assert_allclose(g[0], t[0])
    assert g[1:2] == t[1:2] and g[3:] == t[3:]
    np.testing.assert_allclose(g[2], t[2])


@pytest.mark.parametrize("args", [((2, 2), (1, 2), 9), ((2,), (-1,)), ((2, 2), (1,)), ((2, 2), (1, 2), -1),
                                  ((3, 3), (3, 1), 1)])
def test_as_strided_refuses_what_pytorch_refuses(args, torch):
    with pytest.raises(RuntimeError) as want:
        torch.as_strided(torch.zeros(3, 3), *args)
    with pytest.raises(RuntimeError) as got:
        G.as_strided(G.zeros(3, 3), *args)
    assert str(got.value) == str(want.value)


def test_as_strided_never_reads_outside_the_storage():
    x = G.zeros(2, 2)
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 16"):
        G.as_strided(x, (1,), (1,), 4)
    big = G.as_strided(x, (2, 2), (0, 3))  # the last element of the storage, overlapping reads
    assert big.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    with pytest.raises(RuntimeError, match="more than one element"):
        big.add_(1)


def test_as_strided_scatter_values_and_src_gradient_are_pytorchs(torch):
    a = np.random.default_rng(2).standard_normal((3, 3))
    s = np.random.default_rng(3).standard_normal((2, 2))
    v = np.random.default_rng(4).standard_normal((3, 3))
    res = []
    for m in (G, torch):
        x, src = m.tensor(a, requires_grad=True), m.tensor(s, requires_grad=True)
        y = m.as_strided_scatter(x, src, (2, 2), (1, 2), 1)
        y.backward(m.tensor(v))
        res.append((np.array(y.tolist()), np.array(src.grad.tolist()), y.grad_fn.name()))
    np.testing.assert_allclose(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1])
    assert res[0][2] == res[1][2] == "AsStridedScatterBackward0"


def test_as_strided_scatter_self_gradient_is_the_numerical_one(torch):
    """PyTorch 2.13's self gradient is wrong (pytorch/pytorch#88105: its own gradcheck fails): gradcli's is
    1 off the scattered places and 0 on them, as central differences (and PyTorch's numerical Jacobian) say."""
    x = G.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
    y = G.as_strided_scatter(x, G.ones(2, 2), (2, 2), (1, 2))
    y.backward(G.ones(3, 3))
    assert x.grad.tolist() == [[0, 0, 0], [0, 1, 1], [1, 1, 1]]
    assert gradcheck(lambda a, b: G.as_strided_scatter(a, b, (2, 2), (1, 2)),
                                (G.randn(3, 3, dtype=G.float64, requires_grad=True),
                                 G.randn(2, 2, dtype=G.float64, requires_grad=True)))
    tx = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    tb = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    assert not torch.autograd.gradcheck(lambda a, b: torch.as_strided_scatter(a, b, (2, 2), (1, 2)), (tx, tb),
                                        raise_exception=False)


@pytest.mark.parametrize("sizes", [(2, 2), (3, 2), (7,), (2, 4), (0,)])
def test_resize_keeps_the_storage_as_pytorch(sizes, torch):
    out = []
    for m in (G, torch):
        x = m.tensor([[1, 2], [3, 4], [5, 6]])
        y = x.resize_(*sizes)
        kept = y.flatten()[:6].tolist()
        out.append((tuple(y.shape), y.stride(), kept if y.numel() <= 6 else kept[:6], y is x))
    assert out[0] == out[1]


def test_resize_refuses_a_tensor_that_requires_grad(torch):
    with pytest.raises(RuntimeError) as want:
        torch.zeros(3, requires_grad=True).resize_(2)
    with pytest.raises(RuntimeError) as got:
        G.zeros(3, requires_grad=True).resize_(2)
    assert str(got.value) == str(want.value)


def test_untyped_storage_and_is_storage(torch):
    for m in (G, torch):
        x = m.tensor([1, 2, 3], dtype=m.int16)
        s = x.untyped_storage()
        got = (s.nbytes(), s.tolist(), m.is_storage(s), m.is_storage(x), m.is_storage([1]),
               m.is_storage(m.TypedStorage(5, dtype=m.float32)), x[1:].untyped_storage().nbytes())
        if m is G:
            g = got
    assert g == got


def test_empty_permuted_errors_are_pytorchs(torch):
    for args in (((2, 3), (0, 0)), ((2, 3), (0,))):
        with pytest.raises(RuntimeError) as want:
            torch.empty_permuted(*args)
        with pytest.raises(RuntimeError) as got:
            G.empty_permuted(*args)
        assert str(got.value) == str(want.value)


PROGRAM = """
import torch
x = torch.tensor([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]])
print(x.stride(), x.stride(0), x.stride(-1), x.t().stride(), x[:, 1:].storage_offset(), x.element_size())
print(torch.empty((2, 3, 5, 7), memory_format=torch.channels_last).stride(), torch.channels_last)
p = torch.empty_permuted((2, 3, 5, 7), (0, 2, 3, 1))
print(p.stride(), p.dim_order(), torch.empty((2, 3, 5, 7)).transpose(1, 2).dim_order())
w = torch.arange(9.0).reshape(3, 3).requires_grad_()
v = torch.as_strided(w * 2, (2, 2), (1, 2), 1)
print(v, v.stride(), v.storage_offset())
v.sum().backward()
print(w.grad)
print(torch.as_strided_scatter(torch.zeros(3, 3), torch.ones(2, 2), (2, 2), (1, 2)))
r = torch.arange(1., 7.).resize_(2, 3)
print(r, torch.is_storage(r.untyped_storage()), r.untyped_storage().nbytes())
"""


def test_a_program_prints_what_pytorch_prints(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "strided", PROGRAM)
    assert got == want

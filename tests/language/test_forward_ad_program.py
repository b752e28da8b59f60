"""A program using ``torch.autograd.forward_ad``, run by ``gradcli run``, prints exactly what
the same program prints under PyTorch: dual tensors (``tangent=`` suffix, a 0-d tangent as a number), tangents
through ops, views, matmul, softmax, in-place ops and setitem, ``unpack_dual`` inside and after the level,
reverse over forward, and PyTorch's messages (shape mismatch, nested levels, no level)."""

from __future__ import annotations


from helpers import python_and_gradcli_stdout

PROGRAM = """\
import torch
import torch.autograd.forward_ad as fwAD


def f(x):
    return (x.sin() * x).sum(0) + x.exp().mean()


x = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.5]])
t = torch.ones(2, 3)
with fwAD.dual_level():
    dual = fwAD.make_dual(x, t)
    print(dual)
    out = f(dual)
    print(out)
    print(fwAD.unpack_dual(out).tangent)
    p, tan = fwAD.unpack_dual(out)
    print(p, tan)
    print(fwAD.unpack_dual(out)[1])
    print(fwAD.unpack_dual(x))
    y = torch.softmax(dual, dim=1)
    print(fwAD.unpack_dual(y).tangent)
    m = dual @ dual.T
    print(fwAD.unpack_dual(m).tangent)
    z = dual.clone()
    z.mul_(2.0)
    print(z)
    z[0] = dual[1] * 3
    print(fwAD.unpack_dual(z).tangent)
    print(fwAD.unpack_dual(dual > 1))
    print(fwAD.unpack_dual(torch.argmax(dual)))
    print(fwAD.unpack_dual(dual.max(dim=1).values))
    print(fwAD.unpack_dual(torch.nn.functional.mse_loss(dual, torch.zeros(2, 3))))
print(fwAD.unpack_dual(out).tangent)
print(out)
w = torch.tensor([1.0, 2.0], requires_grad=True)
with fwAD.dual_level():
    d = fwAD.make_dual(w, torch.tensor([1.0, 0.0]))
    print(d)
    o = (d ** 3).sum()
    tan = fwAD.unpack_dual(o).tangent
    print(o)
    g = torch.autograd.grad(tan, w)
    print(g)
with fwAD.dual_level():
    try:
        fwAD.make_dual(x, torch.ones(3))
    except RuntimeError as e:
        print(e)
    try:
        with fwAD.dual_level():
            pass
    except RuntimeError as e:
        print(e)
try:
    fwAD.make_dual(x, t)
except RuntimeError as e:
    print(e)
"""


def test_forward_ad_program_prints_what_pytorch_prints(tmp_path, torch):
    want, got = python_and_gradcli_stdout(tmp_path, "forward_ad", PROGRAM)
    assert got == want
    assert "tangent=tensor([[1., 1., 1.]," in got and "tangent=3.0)" in got

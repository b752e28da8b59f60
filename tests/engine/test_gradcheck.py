"""torch.autograd.gradcheck and gradgradcheck (gradcli/api/gradcheck.py) in programs, against PyTorch's."""

from __future__ import annotations


from helpers import python_and_gradcli_stdout

PROGRAM = '''
import torch
from torch.autograd import gradcheck, gradgradcheck

class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x

def f(x, y):
    return (x * y.exp()).sum(dim=0) / (1 + x.pow(2)), x.sin()

x = torch.tensor([[0.1, 0.2], [0.3, -0.4]], dtype=torch.double, requires_grad=True)
y = torch.tensor([[1.0, -1.0], [0.5, 0.25]], dtype=torch.double, requires_grad=True)
print(gradcheck(f, (x, y)), gradgradcheck(f, (x, y)), gradcheck(lambda t: t.tanh(), x[0]))
z = torch.tensor([1., 2.], dtype=torch.double, requires_grad=True)
try:
    gradcheck(Bad.apply, (z,))
except RuntimeError as e:
    print(repr(str(e)))
print(gradcheck(Bad.apply, (z,), raise_exception=False), gradgradcheck(Bad.apply, (z,), raise_exception=False))
try:
    gradcheck(lambda t: t * 2, (torch.ones(2, dtype=torch.double),))
except ValueError as e:
    print(e)
'''


def test_gradcheck_in_a_program_prints_what_pytorch_prints(tmp_path, torch):
    want, got = python_and_gradcli_stdout(tmp_path, "gradcheck", PROGRAM)
    assert got == want
    assert "Jacobian mismatch for output 0 with respect to input 0" in got

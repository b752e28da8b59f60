"""The fused products (addmm, addmv, addbmm, baddbmm, addr, inner, chain_matmul), the reductions of
gradcli/ops/reduction/more_reductions.py and NumPy's keyword names, used the way a program uses them: a program run
with ``gradcli run`` prints what it prints with PyTorch (values, grad_fn names, named tuples, gradients), and bad arguments give PyTorch's errors. Each op's gradients, forward mode and transforms are compared
with PyTorch through its entry in tests/ops/opinfo.py."""

from __future__ import annotations

import pytest

import gradcli as G
from helpers import python_and_gradcli_stdout

PROGRAM = '''
import torch
torch.manual_seed(0)
a = torch.randn(3, 4, requires_grad=True)
b = torch.randn(4, 5, requires_grad=True)
c = torch.randn(3, 5, requires_grad=True)
out = torch.addmm(c, a, b, beta=0.5, alpha=2)
print(out, out.grad_fn.name())
out.sum().backward()
print(a.grad, b.grad, c.grad)
v = torch.randn(4, requires_grad=True)
print(torch.addmv(torch.ones(3), a, v, alpha=-1), torch.zeros(3).addmv(a, v, beta=0))
b1, b2 = torch.randn(2, 3, 4), torch.randn(2, 4, 5)
print(torch.addbmm(c, b1, b2), torch.baddbmm(c, b1, b2, alpha=0.5).shape)
print(torch.addr(torch.zeros(3, 4), torch.arange(1., 4), torch.arange(1., 5)))
print(torch.inner(a, a).grad_fn.name(), torch.inner(v, v), torch.inner(a, torch.tensor(2.)).grad_fn.name())
print(torch.chain_matmul(a, b, torch.ones(5, 2)))  # (and its deprecation warning, on stderr)
nan = float("nan")
x = torch.tensor([[1., nan, 2.], [nan, 4., 0.5], [3., 3., nan]], requires_grad=True)
s = torch.nansum(x, 1)
print(s, torch.nanmean(x), torch.nanmean(x, dim=0, keepdim=True), x.nansum())
s.sum().backward()
print(x.grad)
print(torch.nanmedian(x), torch.nanmedian(x, 1), x.nanmedian(dim=0).indices)
y = torch.randn(4, 5, requires_grad=True)
std, mean = torch.std_mean(y, dim=1)
print(std, mean, std.grad_fn.name())
(std.sum() + mean.sum()).backward()
print(y.grad)
print(torch.var_mean(y, 0, unbiased=False), torch.var_mean(y, correction=2))
r = torch.aminmax(y, dim=0)
print(r, r.min.grad_fn.name(), y.aminmax())
print(torch.count_nonzero(torch.tensor([[0, 1, 2], [0, 0, 3]]), dim=0), torch.tensor([0., 1.]).count_nonzero())
print(torch.mode(torch.tensor([[1., 2., 2., 1., 3.], [4., 4., 5., 5., 0.]]), 1))
print(torch.dist(y, torch.zeros(5)), torch.dist(y, y.detach() * 2, p=1).grad_fn.name(), torch.dist(y, y * 0, 3.5))
print(torch.renorm(y, 2, 0, 1.0), y.renorm(1, 1, 2.0).grad_fn.name())
print(torch.diff(torch.tensor([1, 3, 2, 7])), torch.diff(y, n=2, dim=0), torch.diff(y, prepend=torch.zeros(4, 1)).shape)
print(torch.diff(torch.tensor([True, False, False, True])))
print(torch.cov(y), torch.cov(y, correction=0, fweights=torch.tensor([1, 2, 1, 1, 3])).grad_fn.name())
print(torch.corrcoef(y), torch.corrcoef(y).grad_fn.name())
print(torch.trapezoid(torch.tensor([1, 5, 10])), torch.trapezoid(y, dx=0.5), torch.trapz(y, torch.arange(5.)))
print(torch.cumulative_trapezoid(y, dim=0), torch.cumulative_trapezoid(y, torch.tensor([0., 1., 3., 4., 7.])))
z = torch.arange(12.).reshape(3, 4)
print(z.sum(axis=0), torch.mean(z, axis=1, keepdims=True), z.amax(axis=1), torch.cat([z, z], axis=0).shape)
print(torch.std(z, axis=0), z.nansum(axis=1), torch.add(x1=z, x2=z).sum(), torch.softmax(z, axis=1).argmax(axis=1))
'''


def test_program_matches_pytorch(tmp_path):
    """A program using the new ops prints with ``gradcli run`` exactly what it prints with PyTorch."""
    want, got = python_and_gradcli_stdout(tmp_path, "fused_and_reductions", PROGRAM)
    assert got == want


ERRORS = {
    "addmm-shapes": lambda m: m.addmm(m.zeros(3, 5), m.ones(3, 4), m.ones(3, 5)),
    "addmm-dtype": lambda m: m.addmm(m.zeros(3, 5), m.ones(3, 4), m.ones(4, 5, dtype=m.float64)),
    "addmv-size": lambda m: m.addmv(m.zeros(3), m.ones(3, 4), m.ones(3)),
    "diff-0d": lambda m: m.diff(m.tensor(1.0)),
    "diff-negative": lambda m: m.diff(m.ones(3), n=-1),
    "nanmean-int": lambda m: m.nanmean(m.tensor([1, 2])),
    "cov-3d": lambda m: m.cov(m.ones(2, 2, 2)),
    "renorm-p": lambda m: m.renorm(m.ones(2, 2), 0, 0, 1.0),
    "renorm-maxnorm": lambda m: m.renorm(m.ones(2, 2), 2, 0, -1.0),
    "sum-axis-and-dim": lambda m: m.sum(m.ones(2), dim=0, axis=0),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_pytorch(case, torch):
    """Bad arguments raise PyTorch's exception type (and, for the op's own checks, its message)."""
    errors = []
    for m in (G, torch):
        try:
            ERRORS[case](m)
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            errors.append(e)
        else:
            raise AssertionError(f"{m.__name__}: {case} raised nothing")
    got, want = errors
    assert type(got) is type(want), (got, want)
    if not case.startswith("sum-"):
        assert str(got) == str(want)



@pytest.mark.parametrize("call", [lambda m, x: m.var_mean(x, dim=0, correction=2),
                                  lambda m, x: m.std_mean(x, correction=3), lambda m, x: x.var(correction=2),
                                  lambda m, x: m.std(x, 0, correction=2)])
def test_degrees_of_freedom_warning_once_as_pytorch(call, torch):
    # var_mean/std_mean warn once under their own name (not again as var/std, which compute them)
    import warnings

    def warned(m):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call(m, m.tensor([1.0, 2.0]))
        return [str(w.message).split(" (Triggered")[0] for w in caught if issubclass(w.category, UserWarning)]

    assert warned(G) == warned(torch)

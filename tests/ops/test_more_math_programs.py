"""Programs that use the more-math, searching and counting ops (logaddexp, frexp, unique, searchsorted, ...)
print what PyTorch prints, run with `gradcli run` beside Python and torch."""

from helpers import python_and_gradcli_stdout

ELEMENTWISE = """
import torch
x = torch.tensor([1.0, -2.0, 0.5, 3.0], requires_grad=True)
y = torch.tensor([0.3, 1.0, 2.0, -1.0])
a = torch.logaddexp(x, y)
b = torch.logaddexp2(x, y)
print(a)
print(b)
(a.sum() + b.sum()).backward()
print(x.grad)
p = torch.float_power(x, 2)
print(p, p.dtype)
print(torch.float_power(torch.tensor([2, 3]), torch.tensor([0.5, -1.0])))
l = torch.ldexp(x, torch.tensor([1, 2, -1, 0]))
print(l)
l.sum().backward()
print(x.grad)
f = torch.frexp(torch.tensor([10.0, -0.75, 0.0, 1024.0]))
print(f)
m, e = f
print(m.dtype, e.dtype, f.mantissa.shape, f.exponent[0])
print(torch.signbit(torch.tensor([0.7, -1.2, 0.0, -0.0, 2.3])))
print(torch.isposinf(torch.tensor([-float('inf'), float('inf'), 1.2])))
print(torch.isneginf(torch.tensor([-float('inf'), float('inf'), 1.2])))
print(torch.bitwise_not(torch.tensor([-1, -2, 3], dtype=torch.int8)))
print(torch.bitwise_left_shift(torch.tensor([-1, -2, 3], dtype=torch.int8), torch.tensor([1, 0, 3], dtype=torch.int8)))
print(torch.bitwise_right_shift(torch.tensor([-8, 16, 3]), 2))
print(torch.logspace(start=-10, end=10, steps=5))
print(torch.logspace(start=0.1, end=1.0, steps=5))
print(torch.logspace(start=0.1, end=1.0, steps=1))
print(torch.logspace(start=2, end=2, steps=1, base=2))
print(torch.logspace(0, 3, 4, dtype=torch.int64))
"""

SEARCH = """
import torch
print(torch.isin(torch.tensor([[1, 2], [3, 4]]), torch.tensor([2, 3])))
print(torch.isin(torch.tensor([[1, 2], [3, 4]]), 2, invert=True))
seq = torch.tensor([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]])
values = torch.tensor([[3, 6, 9], [3, 6, 9]])
print(torch.searchsorted(seq, values))
print(torch.searchsorted(seq, values, side='right'))
print(torch.searchsorted(torch.tensor([1, 3, 5, 7, 9]), values, out_int32=True))
print(torch.searchsorted(torch.tensor([1, 3, 5, 7, 9]), 4))
print(torch.searchsorted(torch.tensor([1, 6, 2, 8, 0]), torch.tensor([3, 6, 9]), sorter=torch.tensor([4, 0, 2, 1, 3])))
boundaries = torch.tensor([1, 3, 5, 7, 9])
v = torch.tensor([[3, 6, 9], [3, 6, 9]])
print(torch.bucketize(v, boundaries))
print(torch.bucketize(v, boundaries, right=True))
print(torch.histc(torch.tensor([1., 2, 1]), bins=4, min=0, max=3))
print(torch.histc(torch.tensor([1., 2, 1, 5, -3])))
print(torch.tensor([0.5, 0.1, 0.9]).histc(bins=3))
print(torch.bincount(torch.tensor([4, 3, 6, 3, 4])))
print(torch.bincount(torch.tensor([0, 1, 1, 2]), weights=torch.tensor([0.5, 1.0, 0.25, 2.0])))
print(torch.tensor([0, 1, 1]).bincount(minlength=5))
print(torch.unique(torch.tensor([1, 3, 2, 3], dtype=torch.long)))
output, inverse_indices = torch.unique(torch.tensor([[1, 3], [2, 3]], dtype=torch.long), sorted=True, return_inverse=True)
print(output)
print(inverse_indices)
a = torch.tensor([[[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1]], [[0, 0, 1, 1], [0, 0, 1, 1], [1, 1, 1, 1]], [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1]]])
print(torch.unique(a, dim=0))
print(torch.unique(a, dim=1, return_counts=True))
print(a.unique(dim=2, return_inverse=True))
x = torch.tensor([1, 1, 2, 2, 3, 1, 1, 2])
print(torch.unique_consecutive(x))
print(torch.unique_consecutive(x, return_inverse=True))
print(x.unique_consecutive(return_counts=True))
print(torch.unique_consecutive(torch.tensor([[1, 1], [1, 1], [2, 3]]), dim=0, return_counts=True))
"""


def test_elementwise_programs_print_what_pytorch_prints(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "more_math", ELEMENTWISE)
    assert got == want


def test_search_and_count_programs_print_what_pytorch_prints(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "search", SEARCH)
    assert got == want

"""torch.utils.data in programs (gradcli/api/data.py): each program runs under Python with torch and under
``gradcli run``, and prints the same thing: seeded shuffling (the loader's and the sampler's draws from PyTorch's
generator, so the random numbers after the loop agree too), drop_last, batching without shuffling, a program's
own Dataset class, TensorDataset, Subset, ConcatDataset, random_split with lengths and fractions, the samplers
and default_collate of numbers, tuples and dicts."""

from __future__ import annotations

import pytest

from helpers import python_and_gradcli_stdout

PROGRAMS = {
    "custom_dataset_shuffled": """
import torch
from torch.utils.data import Dataset, DataLoader

class Squares(Dataset):
    def __init__(self, n):
        self.n = n
    def __len__(self):
        return self.n
    def __getitem__(self, i):
        return torch.tensor([float(i)]), i * i

torch.manual_seed(0)
ds = Squares(10)
loader = DataLoader(ds, batch_size=3, shuffle=True)
print(len(loader), isinstance(ds, Dataset))
for epoch in range(2):
    for x, y in loader:
        print(x.tolist(), y)
print(torch.rand(2))
""",
    "tensor_dataset_drop_last": """
import torch
from torch.utils.data import TensorDataset, DataLoader
torch.manual_seed(3)
x = torch.arange(20.).reshape(10, 2)
y = torch.arange(10)
tds = TensorDataset(x, y)
print(len(tds), tds[3], len(tds.tensors))
dl = DataLoader(tds, batch_size=4, shuffle=True, drop_last=True)
print(len(dl), dl.batch_size, dl.drop_last)
for a, b in dl:
    print(a, b)
for a, b in DataLoader(tds, batch_size=4):
    print(a.shape, b)
print(torch.randn(3))
""",
    "random_split": """
import torch
import torch.utils.data as data
torch.manual_seed(1)
tds = data.TensorDataset(torch.arange(10.))
tr, te = data.random_split(tds, [0.7, 0.3])
print(len(tr), len(te), tr.indices, te.indices, tr.dataset is tds)
a, b, c = data.random_split(range(10), [3, 3, 4])
print(list(a), list(b), list(c), isinstance(a, data.Subset))
parts = data.random_split(range(7), [0.5, 0.5])
print([len(p) for p in parts])
try:
    data.random_split(range(5), [2, 2])
except ValueError as e:
    print(e)
print(torch.rand(1))
""",
    "samplers_and_collate": """
import torch
from torch.utils.data import (DataLoader, Subset, ConcatDataset, RandomSampler, SequentialSampler,
                              BatchSampler, SubsetRandomSampler, default_collate)
torch.manual_seed(5)
rows = [{"a": 1.5, "b": (1, 2), "name": "x"}, {"a": 2.5, "b": (3, 4), "name": "y"}]
for batch in DataLoader(rows, batch_size=2):
    print(batch)
print(default_collate([(1, 2.0), (3, 4.0)]))
print(list(BatchSampler(SequentialSampler(range(7)), 3, False)))
print(list(BatchSampler(range(7), 3, True)))
print(list(RandomSampler(range(6))))
print(list(RandomSampler(range(6), replacement=True, num_samples=5)))
print(list(SubsetRandomSampler([10, 20, 30, 40])))
cat = ConcatDataset([range(3), range(10, 12)])
print(len(cat), [cat[i] for i in range(len(cat))])
sub = Subset(list("abcdef"), [5, 0, 2])
print(len(sub), sub[0], [s for s in DataLoader(sub, batch_size=2)])
for b in DataLoader(range(5), batch_size=None):
    print(b)
print(list(DataLoader(range(6), batch_size=2, collate_fn=lambda b: sum(b))))
print(torch.rand(2))
""",
    "training_loop": """
import torch
from torch import nn
from torch.utils.data import TensorDataset, DataLoader
torch.manual_seed(0)
X = torch.randn(32, 3)
Y = X @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(X, Y), batch_size=8, shuffle=True)
for epoch in range(3):
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item()
    print(epoch, round(total, 4))
""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_prints_what_pytorch_prints(tmp_path, name):
    want, got = python_and_gradcli_stdout(tmp_path, name, PROGRAMS[name])
    assert got == want


def test_loader_errors_are_pytorch_s(tmp_path):
    program = """
from torch.utils.data import DataLoader, RandomSampler, TensorDataset
import torch
for make in (lambda: DataLoader(range(3), sampler=[0, 1], shuffle=True),
             lambda: DataLoader(range(3), batch_size=None, drop_last=True),
             lambda: TensorDataset(torch.zeros(2), torch.zeros(3)),
             lambda: DataLoader(range(3), batch_size=0)):
    try:
        make()
    except (ValueError, AssertionError) as e:
        print(type(e).__name__, e)
"""
    want, got = python_and_gradcli_stdout(tmp_path, "errors", program)
    assert got == want

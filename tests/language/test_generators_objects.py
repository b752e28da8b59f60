"""torch.Generator objects, torch.default_generator, ``generator=`` arguments and the default device in programs:
``gradcli run`` prints what Python with PyTorch prints (addresses masked)."""

from __future__ import annotations

import re

import pytest

from helpers import python_and_gradcli_stdout

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def _same(tmp_path, name: str, program: str) -> None:
    want, got = python_and_gradcli_stdout(tmp_path, name, program)
    assert _ADDRESS.sub("0x?", got) == _ADDRESS.sub("0x?", want)


def test_generator_object_methods(tmp_path):
    _same(tmp_path, "gen_methods", """
import torch
g = torch.Generator()
h = torch.Generator(device="cpu")
print(g.manual_seed(3) is g, g.initial_seed(), g.device, h.device)
print(repr(g).startswith("<torch._C.Generator object at 0x"), type(g.seed()).__name__)
g.manual_seed(2**64 - 1)
print(g.initial_seed())
print(torch.manual_seed(5) is torch.default_generator, torch.default_generator.initial_seed())
print(torch.default_generator)
print(torch.default_generator.manual_seed(9).initial_seed(), torch.initial_seed())
""")


def test_generator_state_round_trip(tmp_path):
    _same(tmp_path, "gen_state", """
import torch
g = torch.Generator().manual_seed(11)
s0 = g.get_state()
print(s0.dtype, s0.shape, s0[:40].tolist(), s0[-48:].tolist())
a = torch.rand(5, generator=g)
s1 = g.get_state()
print(s1[:40].tolist())
b = torch.randn(3, dtype=torch.float64, generator=g)  # leaves a cached normal
s2 = g.get_state()
print(s2[5016:5056].tolist())
c = torch.rand(4, generator=g)
g.set_state(s1)
print(torch.rand(4, generator=g), torch.equal(g.get_state(), s1))
g.set_state(s2)
print(torch.randn(2, dtype=torch.float64, generator=g), torch.rand(4, generator=g))
g.set_state(s0)
print(torch.equal(torch.rand(5, generator=g), a))
torch.manual_seed(0)
s = torch.default_generator.get_state()
x = torch.randn(20)
torch.default_generator.set_state(s)
print(torch.equal(x, torch.randn(20)), torch.equal(s, torch.default_generator.get_state()))
for k in range(630):
    torch.rand(1)
print(torch.default_generator.get_state()[:32].tolist())
h = torch.Generator().manual_seed(4)
torch.rand(0, generator=h)  # no draw: the state still says "just seeded"
print(h.get_state()[:32].tolist())
for k in range(624):
    torch.rand(1, generator=h)
print(h.get_state()[:32].tolist())
""")


def test_generator_arguments_draw_from_that_generator(tmp_path):
    _same(tmp_path, "gen_args", """
import torch
torch.manual_seed(0)
g = torch.Generator().manual_seed(7)
print(torch.rand(3, generator=g), torch.randn(20, generator=g), torch.randint(0, 10, (5,), generator=g))
print(torch.randperm(6, generator=g), torch.randint_like(torch.ones(3), 10, generator=g))
print(torch.rand_like(torch.ones(2), generator=g), torch.randn_like(torch.ones(2), generator=g))
print(torch.normal(0.0, 1.0, (3,), generator=g), torch.normal(torch.zeros(3), 1.0, generator=g))
print(torch.bernoulli(torch.full((5,), 0.5), generator=g), torch.multinomial(torch.ones(5), 3, generator=g))
x = torch.empty(4)
print(x.uniform_(generator=g).clone(), x.normal_(generator=g).clone(), x.random_(0, 9, generator=g).clone(),
      x.exponential_(generator=g).clone())
print(torch.poisson(torch.tensor([1.0, 4.0, 20.0, 0.5]), generator=g), torch.poisson(torch.ones(3), g))
print(torch.rand(3))  # the global generator was not used by the draws above
""")


def test_bernoulli_in_place(tmp_path):
    _same(tmp_path, "gen_bernoulli_", """
import torch
g = torch.Generator().manual_seed(3)
print(torch.zeros(2, 3).bernoulli_(torch.tensor([0.2, 0.9, 0.5]), generator=g))
print(torch.zeros(20).bernoulli_(0.3, generator=g), torch.zeros(20, dtype=torch.float64).bernoulli_(generator=g))
print(torch.zeros(4).bernoulli_(torch.rand(4, dtype=torch.float64, generator=g), generator=g))
torch.manual_seed(1)
x = torch.zeros(3, requires_grad=True).clone()
print(x.bernoulli_(0.5))
y = torch.zeros(3, requires_grad=True).clone()
print(y.bernoulli_(torch.full((3,), 0.5)))
try:
    torch.zeros(2).bernoulli_(1.5)
except RuntimeError as e:
    print(e)
""")


def test_isinstance_of_generator_and_device(tmp_path):
    _same(tmp_path, "gen_isinstance", """
import torch
g = torch.Generator()
print(isinstance(g, torch.Generator), isinstance(torch.default_generator, torch.Generator),
      isinstance(torch.manual_seed(1), torch.Generator), isinstance(3, torch.Generator))
print(isinstance(g.device, torch.device), g.device.type, g.device.index)
""")


def test_data_utilities_take_a_generator(tmp_path):
    _same(tmp_path, "gen_data", """
import torch
from torch.utils.data import DataLoader, RandomSampler, random_split
print([s.indices for s in random_split(list(range(6)), [3, 3], generator=torch.Generator().manual_seed(2))])
print(list(RandomSampler(range(5), generator=torch.Generator().manual_seed(3))))
print([b for b in DataLoader(list(range(6)), batch_size=2, shuffle=True,
                             generator=torch.Generator().manual_seed(4))])
""")


def test_default_device(tmp_path):
    _same(tmp_path, "gen_device", """
import torch
print(torch.get_default_device())
torch.set_default_device("cpu")
torch.set_default_device(torch.device("cpu"))
print(torch.get_default_device(), repr(torch.get_default_device()))
""")


@pytest.mark.parametrize("line", ['torch.Generator(device="cuda")', 'torch.set_default_device("cuda")'])
def test_other_devices_are_refused(tmp_path, line):
    import subprocess
    import sys

    path = tmp_path / "dev.py"
    path.write_text(f"import torch\n{line}\n")
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True,
                         timeout=120)
    assert got.returncode != 0
    assert "NotImplementedError: gradcli computes on the CPU only: device 'cuda' is not available" in got.stderr
    assert "Traceback" not in got.stderr


def test_manual_seed_displays_the_generator_in_a_notebook(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "nb.py"
    path.write_text("import torch\n# %%\ntorch.manual_seed(283)\n# %%\ntorch.rand(2)\n")
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", "--notebook", str(path)], capture_output=True,
                         text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    torch = pytest.importorskip("torch")
    torch.manual_seed(283)
    want = f"<torch._C.Generator at 0x?>\n{torch.rand(2)}\n"
    assert _ADDRESS.sub("0x?", got.stdout) == want

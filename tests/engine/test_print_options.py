"""torch.set_printoptions in programs: tensors print as PyTorch prints them under each option, and the options
belong to the run context (a run that sets them does not change the next run's printing)."""

import gradcli as G
from gradcli.engine.context import RunContext
from helpers import python_and_gradcli_stdout

PROGRAM = """
import torch
torch.set_printoptions(precision=2)
print(torch.tensor([1.12345]))
torch.set_printoptions(threshold=5)
print(torch.arange(10))
torch.set_printoptions(threshold=5, edgeitems=1)
print(torch.arange(10.).reshape(2, 5) / 3)
torch.set_printoptions(profile='default')
print(torch.arange(10))
torch.set_printoptions(linewidth=30)
print(torch.arange(20.) / 7)
torch.set_printoptions(profile='default', sci_mode=True)
print(torch.tensor([1.5, 2.25]))
print(torch.tensor([3.0, 4.0]))
torch.set_printoptions(sci_mode=False)
print(torch.tensor([1e-9, 2e10]))
torch.set_printoptions(profile='short')
print(torch.arange(2000.).reshape(40, 50) / 3)
torch.set_printoptions(profile='full')
print(torch.arange(1100).reshape(2, 550))
torch.set_printoptions(profile='default')
print(torch.tensor([1.12345]), torch.arange(1100.))
"""


def test_set_printoptions_prints_what_pytorch_prints(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "printoptions", PROGRAM)
    assert got == want


def test_print_options_belong_to_the_run_context():
    with RunContext():
        G.set_printoptions(precision=1)
        assert str(G.tensor([1.25])) == "tensor([1.2])"
    with RunContext():
        assert str(G.tensor([1.25])) == "tensor([1.2500])"
    assert str(G.tensor([1.25])) == "tensor([1.2500])"

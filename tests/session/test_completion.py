"""Tab completion offers only names PyTorch has (torch as the oracle) that gradcli supports."""

import pytest

pytest.importorskip("prompt_toolkit")

from prompt_toolkit.document import Document

from gradcli.frontends.session.app import SessionCompleter
from gradcli.frontends.session.core import Session


def completer():
    s = Session(write=lambda t: None, error=lambda t: None)
    s.execute("x = tensor([1., 2.], requires_grad=True)")
    return SessionCompleter(s)


def candidates(c, text):
    return [x.text for x in c.get_completions(Document(text), None)]


@pytest.mark.parametrize("text, module", [
    ("torch.nn.functional.", "torch.nn.functional"),
    ("F.", "torch.nn.functional"),
    ("torch.", "torch"),
    ("torch.nn.", "torch.nn"),
    ("torch.linalg.", "torch.linalg"),
    ("torch.autograd.", "torch.autograd"),
    ("torch.autograd.functional.", "torch.autograd.functional"),
    ("torch.func.", "torch.func"),
    ("torch.optim.", "torch.optim"),
])
def test_module_completions_exist_in_pytorch(text, module):
    pytest.importorskip("torch")
    import importlib

    mod = importlib.import_module(module)
    names = candidates(completer(), text)
    assert names, text
    assert [n for n in names if not hasattr(mod, n)] == []


def test_functional_completions_keep_what_gradcli_supports():
    torch = pytest.importorskip("torch")
    c = completer()
    names = candidates(c, "torch.nn.functional.")
    assert {"relu", "softmax", "log_softmax", "mse_loss", "cross_entropy"} <= set(names)
    assert "sort" not in names and "sum" not in names  # the language accepts F.sort; PyTorch has no such name
    assert not hasattr(torch.nn.functional, "sort")
    assert candidates(c, "torch.nn.functional.sor") == []  # what offered torch.nn.functional.sort
    assert "softmax" in candidates(c, "F.so")


def test_tensor_method_completions_exist_in_pytorch():
    torch = pytest.importorskip("torch")
    c = completer()
    names = candidates(c, "x.")
    assert {"backward", "grad", "grad_fn", "sigmoid", "sum", "detach", "requires_grad"} <= set(names)
    assert [n for n in names if not hasattr(torch.Tensor, n)] == []  # the class: mT of a vector raises


def test_the_names_of_pytorchs_modules_exist_in_the_installed_pytorch():
    torch = pytest.importorskip("torch")
    import importlib

    from gradcli.language import torch_names

    for module, names in torch_names.MEMBERS.items():
        owner = torch.Tensor if module == "Tensor" else importlib.import_module(module)
        assert [n for n in sorted(names) if not hasattr(owner, n)] == [], module

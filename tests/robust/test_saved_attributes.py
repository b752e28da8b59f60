"""The language reaches ``grad_fn._saved_<name>`` (PyTorch's saved values, gradcli/ops/core/saved_names.py)
and nothing else starting with ``_``: not on other objects, not other names, not Python's internals through them."""

from __future__ import annotations

import pytest

from gradcli.engine.errors import GradcliError, GradcliSyntaxError
from gradcli.language.build import build_program
from gradcli.language.interpreter import Interpreter

SETUP = "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x.pow(2)\n"


def run(text):
    out: list = []
    Interpreter(write=out.append).run(build_program(SETUP + text))
    return "".join(out)


def test_saved_values_are_reachable():
    assert run("print(y.grad_fn._saved_self is x, y.grad_fn._saved_exponent)") == "True 2\n"


@pytest.mark.parametrize("text, message", [
    ("x._saved_self", "'Tensor' object has no attribute '_saved_self' (gradcli does not expose names starting "
                      "with '_')"),
    ("y.grad_fn.next_functions[0][0]._saved_self", "'AccumulateGrad' object has no attribute '_saved_self' "
                                                   "(gradcli does not expose names starting with '_')"),
    ("torch._saved_self", "does not expose names starting with '_'"),
    ("(1, 2)._saved_self", "does not expose names starting with '_'"),
    ("y.grad_fn._saved_other", "'PowBackward0' object has no attribute '_saved_other'"),
    ("y.grad_fn._saved_", "'PowBackward0' object has no attribute '_saved_'"),
    ("y.grad_fn._raw_saved_exponent", "'PowBackward0' object has no attribute '_raw_saved_exponent'"),
    ("y.grad_fn._raw_saved_self.node", "'SavedTensor' object has no attribute 'node'"),
    ("y.grad_fn._raw_saved_self.slot", "'SavedTensor' object has no attribute 'slot'"),
    ("x._raw_saved_self", "does not expose names starting with '_'"),
    ("y.grad_fn._sequence_nr", "does not expose names starting with '_'"),
    ("y.grad_fn._rebuild_saved", "does not expose names starting with '_'"),
    ("y.grad_fn._saved_self._saved_self", "'Tensor' object has no attribute '_saved_self'"),
    ("y.grad_fn._saved_self._version_", "does not expose names starting with '_'"),
])
def test_other_underscore_names_are_refused(text, message):
    with pytest.raises(GradcliError) as e:
        run(text)
    assert e.value.type == "AttributeError"
    assert message in e.value.message


@pytest.mark.parametrize("text", ["y.grad_fn._saved_self.__class__", "y.grad_fn.__class__._saved_self",
                                  "y.grad_fn._saved_exponent.__class__", "y.grad_fn.__getattr__('_saved_self')",
                                  "y.grad_fn.__dict__"])
def test_python_internals_stay_refused_as_syntax(text):
    with pytest.raises(GradcliSyntaxError):
        run(text)


def test_saved_attributes_cannot_be_assigned():
    with pytest.raises(GradcliError) as e:
        run("y.grad_fn._saved_self = x")
    assert e.value.type == "AttributeError"

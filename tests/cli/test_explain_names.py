"""``gradcli grad --explain`` writes each node's formula with PyTorch's argument names (derivatives.yaml: ``input``
for ``self``, ``other``, ``result``, ``grad``), never with ``x`` and ``y``, which read as the program's own
variables. Run as the user ran it, and the numbers it shows compared with PyTorch."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from gradcli.ops.core.formulas import FORMULAS, pytorch_names

from helpers import ROOT

_SHORTHAND = re.compile(r"\b(x|y|g|out|dx|dy)\b|d/dx|d/dy")


def gradcli(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_mul_is_explained_with_pytorchs_names_not_the_programs():
    torch = pytest.importorskip("torch")
    p = gradcli("grad", "(x * y).sum()", "-i", "x=[1., 2.]", "-i", "y=[3., 5.]", "--explain", "--json")
    assert p.returncode == 0, p.stderr
    steps = {s["name"]: s for s in json.loads(p.stdout)["steps"]}
    mul = steps["MulBackward0"]
    assert mul["formula"] == "input: grad * other; other: grad * input"
    assert steps["SumBackward0"]["formula"] == "input: grad copied to every element"
    # what it sends is PyTorch's: x gets grad * y, y gets grad * x
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 5.0], requires_grad=True)
    (x * y).sum().backward()
    assert [(s["to"], s["input"], s["grad"]) for s in mul["sent"]] == [("x", "input", x.grad.tolist()),
                                                                       ("y", "other", y.grad.tolist())]
    table = gradcli("grad", "(x * y).sum()", "-i", "x=[1., 2.]", "-i", "y=[3., 5.]", "--explain").stdout
    assert "input: grad * other; other: grad * input" in table
    assert not _SHORTHAND.search(table.split("the chain rule")[1].split("what each input received")[0]
                                 .replace("→ x (input)", "").replace("→ y (other)", ""))


@pytest.mark.parametrize("program, name, formula", [
    ("x.tanh().sum()", "TanhBackward0", "input: grad * (1 - result^2)"),
    ("(x / y).sum()", "DivBackward0", "input: grad / other; other: -grad * input / other^2"),
    ("x.relu().sum()", "ReluBackward0", "input: grad where result > 0, else 0 (0 at input = 0)"),
    ("(x ** y).sum()", "PowBackward1", "input: grad * exponent * input^(exponent - 1); exponent: grad * result * "
                                       "ln(input)"),
])
def test_formulas_name_the_arguments_as_derivatives_yaml(program, name, formula):
    p = gradcli("grad", program, "-i", "x=[1., 2.]", "-i", "y=[3., 5.]", "--explain", "--json")
    steps = {s["name"]: s for s in json.loads(p.stdout)["steps"]}
    assert steps[name]["formula"] == formula
    # the names before each ':' are the inputs the explanation sends to
    sent = [s["input"] for s in steps[name]["sent"]]
    assert [part.split(":")[0].strip() for part in formula.split(";")] == sent


def test_no_formula_uses_the_shorthand_names():
    offending = {k: v for k, v in FORMULAS.items() if _SHORTHAND.search(v)}
    assert offending == {}


def test_an_op_note_is_renamed_too():
    # the fallback for a backward function without an entry: its op's note, in the same names
    assert pytorch_names("d/dx = 2 * x") == "d/dinput = 2 * input"
    assert pytorch_names("d/dx = y, d/dy = x (summed over dim)") == \
        "d/dinput = other, d/dother = input (summed over dim)"
    assert pytorch_names("d/dx = y * (grad - sum(grad * y, dim))") == \
        "d/dinput = result * (grad - sum(grad * result, dim))"  # one input: its y is the result
    assert pytorch_names("d/dx = x[0] + max(x)") == "d/dinput = input[0] + max(input)"

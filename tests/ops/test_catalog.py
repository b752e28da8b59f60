"""``gradcli ops``: the catalogue of supported ops, read from the op table."""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

import gradcli as G
from gradcli.language import torch_names
from gradcli.frontends.cli import app
from gradcli.language.build import build_program
from gradcli.ops import KINDS, REGISTRY

from helpers import ROOT

runner = CliRunner()


def ops_json(*args):
    r = runner.invoke(app, ["ops", *args, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_every_public_registry_name_is_listed_once_in_order():
    doc = ops_json()
    names = [e["name"] for e in doc]
    assert names == sorted(n for n in REGISTRY if not n.startswith("_"))
    for e in doc:
        assert e["kind"] == KINDS[e["name"]]
        assert e["signature"].startswith(e["name"] + "(")


def test_entries_describe_the_op():
    by_name = {e["name"]: e for e in ops_json()}
    assert by_name["add"]["signature"] == "add(input, other, alpha=1)"
    assert by_name["add"]["grad_fn"] == "AddBackward0" and by_name["add"]["method"] is True
    assert by_name["eq"]["grad_fn"] is None  # comparisons have no gradient
    assert by_name["sum"]["grad_fn"] == "varies"  # SumBackward0 or SumBackward1 by dim
    assert by_name["absolute"]["alias_of"] == "abs" and by_name["abs"]["alias_of"] is None
    assert by_name["zeros"]["kind"] == "creation" and by_name["zeros"]["grad_fn"] is None
    assert "Matches torch.abs" in by_name["abs"]["summary"]


def test_filters():
    assert [e["name"] for e in ops_json("sum")] == sorted(n for n in REGISTRY if "sum" in n and n[0] != "_")
    assert {e["kind"] for e in ops_json("--kind", "creation")} == {"creation"}
    r = runner.invoke(app, ["ops", "--kind", "nope"])
    assert r.exit_code == 2 and "--kind must be" in r.stderr


def test_table():
    r = runner.invoke(app, ["ops", "exp"])
    assert r.exit_code == 0, r.output
    assert "ExpBackward0" in r.stdout and "exp(input)" in r.stdout


# ---------------------------------------------------------------------------- PyTorch names gradcli lacks
def test_torch_names_file_is_current():
    torch = pytest.importorskip("torch")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_torch_names
    finally:
        sys.path.pop(0)
    names = gen_torch_names.torch_names()
    assert names["version"] == torch.__version__.split("+")[0]
    assert sorted(torch_names.TORCH) == names["TORCH"]
    assert sorted(torch_names.FUNCTIONAL) == names["FUNCTIONAL"]
    assert sorted(torch_names.TENSOR) == names["TENSOR"]


@pytest.mark.parametrize("program, type_, message", [
    ("torch.stft(x)", "NotImplementedError", "'torch.stft' is not supported by gradcli"),
    ("x.stft()", "NotImplementedError", "'Tensor.stft' is not supported by gradcli"),
    ("F.conv_tbc(x, x)", "NotImplementedError", "'torch.nn.functional.conv_tbc' is not supported by gradcli"),
    ("torch.nn.functional.conv_tbc(x, x)", "NotImplementedError",
     "'torch.nn.functional.conv_tbc' is not supported by gradcli"),
    ("torch.foo(x)", "AttributeError", "module 'torch' has no attribute 'foo'"),
    ("x.foo()", "AttributeError", "'Tensor' object has no attribute 'foo'"),
    ("x.zero_grad()", "AttributeError", "'Tensor' object has no attribute 'zero_grad'"),
])
def test_unsupported_and_unknown_names(program, type_, message):
    r = runner.invoke(app, ["grad", program, "-i", "x=[1., 2.]"])
    assert r.exit_code == 1
    assert f"{type_}: {message}" in r.stderr
    if type_ == "NotImplementedError":
        assert "gradcli ops" in r.stderr


def test_bare_name_of_an_unsupported_torch_function_gets_a_hint():
    r = runner.invoke(app, ["grad", "stft(x)", "-i", "x=[1., 2.]"])
    assert r.exit_code == 1
    assert "NameError: name 'stft' is not defined" in r.stderr
    assert "PyTorch has stft, but gradcli does not support it" in r.stderr


def test_every_op_is_reachable_where_pytorch_has_it():
    """torch.X, F.X and the Tensor method X exist in gradcli for every op X that PyTorch has there."""
    from gradcli.language.interpreter import Interpreter

    interp = Interpreter(write=lambda s: None)
    interp.run(build_program("import torch\nimport torch.nn.functional as F\n", "<test>"))
    torch_ns = interp.globals["torch"]
    f_ns = interp.globals["F"]
    missing = []
    for name, kind in KINDS.items():
        if name.startswith("_") or kind == "function":
            continue
        if name in torch_names.TORCH and name not in torch_ns.members:
            missing.append(f"torch.{name}")
        if name in torch_names.FUNCTIONAL and name not in f_ns.members:
            missing.append(f"F.{name}")
        if kind == "op" and name in torch_names.TENSOR and not hasattr(G.Tensor, name):
            missing.append(f"Tensor.{name}")
    assert not missing, missing


def test_every_differentiable_op_has_a_derivative_note():
    from gradcli.app.catalog import list_ops

    missing = [i.name for i in list_ops(kind="op") if i.grad_fn and not i.alias_of and not i.derivative]
    assert not missing, f"declare note= on these ops for gradcli ops: {missing}"

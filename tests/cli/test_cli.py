"""gradcli grad as a user runs it: through typer's CliRunner, and through real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from gradcli.frontends.cli import app

from helpers import ROOT
runner = CliRunner()


def run(*args):
    return runner.invoke(app, ["grad", *args])


def run_json(*args):
    r = run(*args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_dot_gradient_json():
    doc = run_json("2 * dot(x, x)", "-i", "x=arange(4.0)")
    assert doc["output"] == {"value": 28.0, "shape": [], "dtype": "float32", "grad_fn": "MulBackward0",
                             "nonfinite": False}
    assert doc["grads"]["x"] == {"value": [0.0, 4.0, 8.0, 12.0], "shape": [4], "nonfinite": False}
    names = [n["name"] for n in doc["graph"]["nodes"]]
    assert names == ["MulBackward0", "DotBackward0", "AccumulateGrad"]
    assert {"from": "x", "to": "n1"} in doc["graph"]["edges"]


def test_dot_gradient_table():
    r = run("2 * dot(x, x)", "-i", "x=arange(4.0)")
    assert r.exit_code == 0
    assert "tensor([ 0.,  4.,  8., 12.])" in r.stdout
    assert "tensor(28., grad_fn=<MulBackward0>)" in r.stdout
    assert "DotBackward0" in r.stdout
    assert "\x1b[" not in r.stdout  # no escape codes when not a terminal


def test_one_layer_net_matches_closed_form():
    doc = run_json("binary_cross_entropy_with_logits(matmul(x, w) + b, y)", "-c", "x=ones(5)", "-c", "y=zeros(3)",
                   "-i", "w=randn(5, 3)", "-i", "b=randn(3)", "--seed", "0")
    w = np.array(doc["inputs"]["w"]["value"], dtype=np.float32)
    b = np.array(doc["inputs"]["b"]["value"], dtype=np.float32)
    z = w.sum(0) + b
    expected_b = (1 / (1 + np.exp(-z))) / 3  # d/dz mean(BCE(z, 0)) = sigmoid(z) / 3
    # float32 through a BLAS matmul: torch.testing's float32 tolerances, not the last bits
    np.testing.assert_allclose(doc["grads"]["b"]["value"], expected_b, rtol=1.3e-6, atol=1e-5)
    np.testing.assert_allclose(doc["grads"]["w"]["value"], np.tile(expected_b, (5, 1)), rtol=1.3e-6, atol=1e-5)
    assert doc["output"]["grad_fn"] == "BinaryCrossEntropyWithLogitsBackward0"
    assert [n["name"] for n in doc["graph"]["nodes"]][:4] == [
        "BinaryCrossEntropyWithLogitsBackward0", "AddBackward0", "SqueezeBackward4", "MmBackward0"]
    assert doc["inputs"]["x"]["kind"] == "const" and doc["inputs"]["x"]["requires_grad"] is False
    # --seed makes inputs reproducible
    assert run_json("binary_cross_entropy_with_logits(matmul(x, w) + b, y)", "-c", "x=ones(5)", "-c", "y=zeros(3)",
                    "-i", "w=randn(5, 3)", "-i", "b=randn(3)", "--seed", "0") == doc


def test_repeat_accumulates_and_zero_grad():
    doc = run_json("(inp + 1).pow(2)", "-i", "inp=eye(5)", "--gradient", "ones(5, 5)", "--repeat", "2")
    eye = np.eye(5)
    assert [np.array(c["grads"]["inp"]["value"]).tolist() for c in doc["calls"]] == [
        (2 + 2 * eye).tolist(), (4 + 4 * eye).tolist()]
    doc = run_json("(inp + 1).pow(2)", "-i", "inp=eye(5)", "--gradient", "ones(5, 5)", "--repeat", "3",
                   "--zero-grad")
    for c in doc["calls"]:
        assert np.array(c["grads"]["inp"]["value"]).tolist() == (2 + 2 * eye).tolist()


def test_vjp_with_gradient_vector():
    doc = run_json("x * 2", "-i", "x=[0.1, -2, 3]", "--gradient", "[0.1, 1.0, 0.0001]")
    assert doc["grads"]["x"]["value"] == [0.2, 2.0, 0.0002]


def test_program_declares_its_own_leaf():
    doc = run_json("x = tensor([1., 2.], requires_grad=True); (x * x).sum()")
    assert doc["grads"]["x"]["value"] == [2.0, 4.0]
    assert doc["inputs"]["x"]["kind"] == "leaf"


def test_const_dtype_inference_and_float64():
    doc = run_json("x * c", "-i", "x=[1, 2, 3]", "-c", "c=[1, 0, 2]", "--gradient", "ones(3)")
    assert doc["inputs"]["c"]["dtype"] == "int64"
    assert doc["inputs"]["x"]["dtype"] == "float32"  # -i converts to the default float dtype
    assert doc["output"]["dtype"] == "float32"
    r = run("(x * c).sum()", "-i", "x=[1, 2, 3]", "-c", "c=[1, 0, 2]", "--dtype", "float64", "--json")
    doc = json.loads(r.stdout)
    assert doc["inputs"]["x"]["dtype"] == "float64"
    assert doc["grads"]["x"]["value"] == [1.0, 0.0, 2.0]


@pytest.mark.parametrize("ext", [".npy", ".json", ".csv"])
def test_inputs_from_files(tmp_path, ext):
    data = np.array([[1.0, 2.0], [3.0, 4.0]])
    path = tmp_path / f"w{ext}"
    if ext == ".npy":
        np.save(path, data)
    elif ext == ".json":
        path.write_text(json.dumps(data.tolist()))
    else:
        path.write_text("1,2\n3,4\n")
    doc = run_json("(w * w).sum()", "-i", f"w=@{path}")
    assert doc["grads"]["w"]["value"] == (2 * data).tolist()


def test_fortran_ordered_npy_is_a_contiguous_leaf(tmp_path):
    """torch.tensor(np.asfortranarray(a)) is C-contiguous: view() works on it (it would not on a transposed
    layout)."""
    path = tmp_path / "f.npy"
    np.save(path, np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    doc = run_json("(x.view(6) * arange(6.)).sum()", "-i", f"x=@{path}")
    assert doc["output"]["value"] == 55.0 and doc["grads"]["x"]["value"] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_npy_with_objects_is_refused(tmp_path):
    path = tmp_path / "obj.npy"
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    r = run("x", "-i", f"x=@{path}")
    assert r.exit_code == 2
    assert "allow_pickle=False" in r.stderr


def test_program_from_file_and_torch_prefixes(tmp_path):
    doc = run_json(f"@{ROOT / 'examples' / 'control_flow.gc'}", "-i", "a=100.")
    assert doc["output"]["value"] == 1600.0 and doc["grads"]["a"]["value"] == 16.0
    doc = run_json("F.binary_cross_entropy_with_logits(torch.matmul(x, w), y, reduction='sum')",
                   "-c", "x=ones(2)", "-c", "y=zeros(3)", "-i", "w=zeros(2, 3)")
    assert doc["grads"]["w"]["value"] == [[0.5] * 3] * 2


def test_syntax_error_has_caret_and_exit_2():
    r = run("2 * (x +", "-i", "x=[1.]")
    assert r.exit_code == 2
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines[0] == "<expr>:1:9:"
    assert lines[1] == "    2 * (x +" and lines[2] == "    " + " " * 8 + "^"
    assert lines[3].startswith("SyntaxError: ")
    assert "expected one of" in r.stderr
    assert "Traceback" not in r.stderr


def test_spec_syntax_error_names_the_option():
    r = run("x", "-i", "x=[1, 2")
    assert r.exit_code == 2
    assert r.stderr.startswith("-i x:1:")


@pytest.mark.parametrize("args, message", [
    (["x * 2", "-i", "x=[1., 2.]"], "RuntimeError: grad can be implicitly created only for scalar outputs"),
    (["x.sum()", "-i", "x=[1., 2.]", "--gradient", "[1., 2.]"],
     "RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a shape "
     "of torch.Size([])."),
    (["y.zero_grad()", "-i", "y=[1.]"], "AttributeError: 'Tensor' object has no attribute 'zero_grad'"),
    (["tensor([1, 2], requires_grad=True).sum()"],
     "RuntimeError: Only Tensors of floating point and complex dtype can require gradients"),
    (["undefined + 1"], "NameError: name 'undefined' is not defined"),
    (["mm(x, x)", "-i", "x=ones(3, 2)"], "RuntimeError: mat1 and mat2 shapes cannot be multiplied (3x2 and 3x2)"),
])
def test_evaluation_errors_exit_1_with_pytorch_messages(args, message):
    r = run(*args)
    assert r.exit_code == 1, r.output
    assert message in r.stderr
    assert r.stdout == ""
    assert "Traceback" not in r.stderr


def test_runtime_error_shows_position():
    r = run("y = x * 2\ny.zero_grad()", "-i", "x=[1.]")
    assert r.exit_code == 1
    assert r.stderr.splitlines()[:3] == ["<expr>:2:1:", "    y.zero_grad()", "    ^"]


@pytest.mark.parametrize("args", [["x", "-i", "nonsense"], ["x", "-i", "x=@/no/such/file.npy"],
                                  ["x", "-i", "x=1", "-c", "x=2"], ["x", "--dtype", "int64", "-i", "x=1."]])
def test_bad_input_exits_2(args):
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.stderr


def test_json_is_strict_with_nonfinite_values():
    doc = run_json("log(x)", "-i", "x=[0., -1., 1.]", "--gradient", "[1., 1., 1.]")
    assert doc["output"]["value"] == ["-Infinity", "NaN", 0.0]
    assert doc["grads"]["x"]["value"] == ["Infinity", -1.0, 1.0]


def _subprocess(*args, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True, text=True, env=env,
                          timeout=600, **kw)


def test_subprocess_json_and_errors(tmp_path):
    p = _subprocess("grad", "x * 2", "-i", "x=[0.1, -2, 3]", "--gradient", "[0.1, 1.0, 0.0001]", "--json",
                    cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["grads"]["x"]["value"] == [0.2, 2.0, 0.0002]
    p = _subprocess("grad", "x *", cwd=tmp_path)
    assert p.returncode == 2 and "SyntaxError" in p.stderr and "Traceback" not in p.stderr and p.stdout == ""
    p = _subprocess("grad", "x * 2", "-i", "x=[1., 2.]", cwd=tmp_path)
    assert p.returncode == 1 and "implicitly created only for scalar outputs" in p.stderr


def test_subprocess_reads_program_from_stdin(tmp_path):
    p = _subprocess("grad", "-", "-i", "x=[3.]", "--json", input="y = x * x\ny.sum()\n", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["grads"]["x"]["value"] == [6.0]


def test_library_one_liner():
    code = ("import gradcli as G; x = G.tensor([1., 2.], requires_grad=True); (x * x).sum().backward(); "
            "print(x.grad)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=600)
    assert p.stdout == "tensor([2., 4.])\n"

"""``gradcli jvp``, ``gradcli hvp``, ``gradcli jacobian --mode`` and batch entries with a ``transform`` as a user
types them: values against torch.func / torch.autograd.functional, the JSON documents
against their schemas (``gradcli schema jvp``/``hvp``/``batch``), tables, compact lines, ``--check`` against
central differences, and the errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from gradcli.frontends.cli import app
from gradcli.render.schemas import schema

runner = CliRunner()
torch = pytest.importorskip("torch")


def run(*args, input=None):
    return runner.invoke(app, list(args), input=input)


def doc(*args) -> dict:
    r = run(*args, "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    name = args[0]
    Draft202012Validator(schema(name)).validate(d)
    return d


def test_jvp_as_typed_equals_torch_func_jvp():
    d = doc("jvp", "x.sin() * y", "-i", "x=[1., 2.]", "-i", "y=[3., 4.]", "--tangent", "x=[1., 0.]",
            "--tangent", "y=[0., 1.]")
    x, y = torch.tensor([1., 2.]), torch.tensor([3., 4.])
    out, jv = torch.func.jvp(lambda a, b: a.sin() * b, (x, y), (torch.tensor([1., 0.]), torch.tensor([0., 1.])))
    np.testing.assert_allclose(d["jvp"]["value"], jv.numpy(), rtol=1e-6)
    np.testing.assert_allclose(d["output"]["value"], out.numpy(), rtol=1e-6)
    assert d["jvp"]["shape"] == [2] and d["mode"] == "forward"


def test_hvp_as_typed_equals_torch_hvp():
    d = doc("hvp", "(x ** 3).sum() * y.sum()", "-i", "x=[1., 2.]", "-i", "y=[3., 4.]", "--vector", "x=[1., 1.]",
            "--vector", "y=[1., 0.]")
    x, y = torch.tensor([1., 2.]), torch.tensor([3., 4.])
    _, (hx, hy) = torch.autograd.functional.hvp(lambda a, b: (a ** 3).sum() * b.sum(), (x, y),
                                                (torch.tensor([1., 1.]), torch.tensor([1., 0.])))
    np.testing.assert_allclose(d["hvp"]["x"]["value"], hx.numpy(), rtol=1e-6)
    np.testing.assert_allclose(d["hvp"]["y"]["value"], hy.numpy(), rtol=1e-6)
    assert d["mode"] == "reverse"


def test_check_against_central_differences():
    d = doc("jvp", "(x * x).exp()", "-i", "x=[0.1, 0.2, 0.3]", "-t", "x=[1., 2., 3.]", "--check")
    assert d["check"]["ok"] and set(d["check"]["inputs"]) == {"jvp"}
    d = doc("hvp", "x.sin().prod()", "-i", "x=[0.5, 0.7]", "-v", "x=[1., -1.]", "--check", "--dtype", "float64")
    assert d["check"]["ok"] and set(d["check"]["inputs"]) == {"x"}
    r = run("hvp", "x.sin().prod()", "-i", "x=[0.5, 0.7]", "-v", "x=[1., -1.]", "--check", "-q")
    assert r.exit_code == 0 and r.stdout.splitlines()[-1].startswith("check: ok")
    # at relu's kink the derivative (0) is not the central difference (0.5): the check fails and exits 1
    r = run("jvp", "x.relu()", "-i", "x=[0.]", "-t", "x=[1.]", "--check", "-q")
    assert r.exit_code == 1 and "check: FAILED" in r.stdout


def test_tables_and_compact_lines():
    r = run("jvp", "x.sin()", "-i", "x=[1., 2.]", "-t", "x=[1., 1.]")
    assert r.exit_code == 0
    assert "jvp: J v, shape (2,)" in r.stdout and "jvp: tensor([ 0.5403, -0.4161])" in r.stdout
    r = run("hvp", "(x ** 3).sum()", "-i", "x=[1., 2.]", "-v", "x=[1., 1.]", "-q")
    assert r.stdout == "output: tensor(9.)\nhvp x: tensor([ 6., 12.])\n"
    r = run("jvp", "x.sin()", "-i", "x=[1., 2.]", "-t", "x=[1., 1.]", "--check")
    assert "check: central differences in float64" in r.stdout


def test_jacobian_modes_agree_and_auto_chooses():
    args = ("jacobian", "(A @ x).tanh()", "-c", "A=randn(5, 2)", "-i", "x=[0.5, -0.5]", "--seed", "3")
    fwd, rev, auto = doc(*args, "--mode", "forward"), doc(*args, "--mode", "reverse"), doc(*args)
    np.testing.assert_allclose(fwd["jacobian"]["x"]["value"], rev["jacobian"]["x"]["value"], rtol=1e-5)
    assert (fwd["mode"], rev["mode"], auto["mode"]) == ("forward", "reverse", "forward")  # 2 inputs < 5 outputs
    assert doc("jacobian", "x.sum()", "-i", "x=[1., 2.]")["mode"] == "reverse"
    r = run("jacobian", "x * 2", "-i", "x=[1., 2.]", "--mode", "forward")
    assert r.exit_code == 0 and "jacobian (forward mode)" in r.stdout


def test_errors():
    r = run("jvp", "x.sin()", "-i", "x=[1., 2.]")
    assert r.exit_code == 2 and "jvp needs --tangent x=SPEC for every -i input (missing: x)" in r.stderr
    r = run("jvp", "x.sin()", "-i", "x=[1., 2.]", "-t", "x=[1.]")
    assert r.exit_code == 2 and "--tangent x has shape [1] but the input x has shape [2]" in r.stderr
    r = run("jvp", "x.sin()", "-i", "x=[1., 2.]", "-t", "z=[1., 1.]")
    assert r.exit_code == 2 and "--tangent z: not an -i input (inputs: x)" in r.stderr
    r = run("hvp", "x.sin()", "-i", "x=[1., 2.]", "-v", "x=[1., 1.]")
    assert r.exit_code == 1 and "should return a single element Tensor" in r.stderr
    r = run("jvp", "x.sin()", "-i", "x=[1., 2.]", "-t", "x=[1., 1.]", "--eps", "1e-3")
    assert r.exit_code == 2 and "--eps needs --check" in r.stderr
    r = run("jvp", "x * x", "-i", "x=ones(10)", "-t", "x=ones(10)", "--limit", "elements=10")
    assert r.exit_code == 0
    r = run("jacobian", "x.outer(x)", "-i", "x=ones(10)", "--limit", "elements=200", "--mode", "forward")
    assert r.exit_code == 1 and "the jacobian has 1,000 elements" in r.stderr


def test_batch_transform_entries_against_the_batch_schema():
    lines = [
        {"program": "x.sin() * y", "inputs": {"x": [1.0, 2.0], "y": [3.0, 4.0]}, "transform": "jacobian",
         "mode": "forward", "id": "j"},
        {"program": "(x ** 3).sum()", "inputs": {"x": [1.0, 2.0]}, "transform": "hessian"},
        {"program": "x.sin()", "inputs": {"x": [1.0, 2.0]}, "transform": "jvp", "tangent": {"x": [1.0, 0.0]},
         "check": True},
        {"program": "(x ** 3).sum()", "inputs": {"x": [1.0, 2.0]}, "transform": "hvp", "vector": {"x": "[1., 1.]"}},
        {"program": "(x ** 3).sum()", "inputs": {"x": [1.0, 2.0]}, "transform": "hvp"},
        {"program": "x.sum()", "inputs": {"x": [1.0]}, "transform": "rotate"},
        {"program": "x.sum()", "inputs": {"x": [1.0]}, "transform": "hessian", "mode": "forward"},
    ]
    text = "".join(json.dumps(x) + "\n" for x in lines)
    r = run("batch", "-", "--format", "json", input=text)
    out = [json.loads(x) for x in r.stdout.splitlines()]
    v = Draft202012Validator(schema("batch"))
    for o in out:
        v.validate(o)
    x = torch.tensor([1., 2.])
    jx = torch.autograd.functional.jacobian(lambda a: a.sin() * torch.tensor([3., 4.]), x)
    np.testing.assert_allclose(out[0]["jacobian"]["x"]["value"], jx.numpy(), rtol=1e-6)
    assert out[0]["id"] == "j" and out[0]["mode"] == "forward"
    assert out[1]["hessian"]["x"]["x"]["value"] == [[6.0, 0.0], [0.0, 12.0]]
    assert out[2]["check"]["ok"] and out[2]["jvp"]["value"][0] == pytest.approx(np.cos(1.0), rel=1e-6)
    assert out[3]["hvp"]["x"]["value"] == [6.0, 12.0]
    assert "needs 'vector'" in out[4]["error"]["message"]
    assert "'transform' must be one of jacobian, hessian, jvp, hvp" in out[5]["error"]["message"]
    assert "only jacobian has modes" in out[6]["error"]["message"]
    r = run("batch", "-", "-q", input=text)
    assert r.stdout.splitlines()[3] == "4: output: tensor(9.); hvp x: tensor([ 6., 12.])"


def test_batch_evaluate_takes_transform_entries():
    from gradcli.frontends.batch import evaluate

    res = list(evaluate([{"program": "x * x", "inputs": {"x": [1.0, 2.0]}, "transform": "jvp",
                          "tangent": {"x": [1.0, 1.0]}}]))
    assert res[0]["jvp"]["value"] == [2.0, 4.0]


def test_jacobian_and_hessian_check_against_central_differences():
    # --check on every transform command: the Jacobian by columns of differences of the output, the Hessian
    # by differences of the gradient along each input element (float64)
    d = doc("jacobian", "(A @ x).tanh()", "-c", "A=[[1., 2.], [3., 4.]]", "-i", "x=[0.5, -0.5]", "--check")
    assert d["check"]["ok"] and d["check"]["evaluations"] == 4 and list(d["check"]["inputs"]) == ["x"]
    d = doc("hessian", "(x ** 3).sum() + x[0] * y", "-i", "x=[1., 2.]", "-i", "y=3.", "--check")
    assert list(d["check"]["inputs"]) == ["x,x", "x,y", "y,x", "y,y"] and d["check"]["ok"]
    np.testing.assert_allclose(d["check"]["inputs"]["x,x"]["numerical"], [[6., 0.], [0., 12.]], atol=1e-6)
    r = run("jacobian", "x.sin() * 2", "-i", "x=[1., 2.]", "--check", "--eps", "0.5", "-q")
    assert r.exit_code == 1 and "check: FAILED" in r.stdout and "--check failed" in r.stderr

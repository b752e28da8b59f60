"""``gradcli jacobian`` and ``gradcli hessian`` as a user runs them: typical commands,
values against torch.autograd.functional, the JSON documents against their schemas, tables, compact lines, and
the errors (an unknown mode, a Hessian of a non-scalar output, a result over the elements limit)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from gradcli.frontends.cli import app
from gradcli.render.schemas import schema

runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args))


def doc(*args) -> dict:
    r = run(*args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_the_issue_s_jacobian_commands_equal_pytorch():
    torch = pytest.importorskip("torch")
    d = doc("jacobian", "x.sin() * y", "-i", "x=[1., 2.]", "-i", "y=[3., 4.]")
    x, y = torch.tensor([1., 2.]), torch.tensor([3., 4.])
    jx, jy = torch.autograd.functional.jacobian(lambda a, b: a.sin() * b, (x, y))
    np.testing.assert_allclose(d["jacobian"]["x"]["value"], jx.numpy(), rtol=1e-6)
    np.testing.assert_allclose(d["jacobian"]["y"]["value"], jy.numpy(), rtol=1e-6)
    assert d["jacobian"]["x"]["shape"] == [2, 2] and d["mode"] == "reverse"
    d = doc("jacobian", "(A @ x).tanh()", "-c", "A=[[1., 2.], [3., 4.]]", "-i", "x=[0.5, -0.5]")
    A = torch.tensor([[1., 2.], [3., 4.]])
    want = torch.autograd.functional.jacobian(lambda v: (A @ v).tanh(), torch.tensor([0.5, -0.5]))
    np.testing.assert_allclose(d["jacobian"]["x"]["value"], want.numpy(), rtol=1e-6)
    assert list(d["jacobian"]) == ["x"]  # constants are not differentiated


def test_shapes_are_output_plus_input():
    d = doc("jacobian", "W @ x", "-i", "W=ones(2, 3)", "-i", "x=ones(3)")
    assert d["jacobian"]["W"]["shape"] == [2, 2, 3] and d["jacobian"]["x"]["shape"] == [2, 3]
    np.testing.assert_array_equal(d["jacobian"]["x"]["value"], np.ones((2, 3)))


def test_the_issue_s_hessian_command_equals_pytorch():
    torch = pytest.importorskip("torch")
    d = doc("hessian", "(x ** 3).sum() + x[0] * x[1]", "-i", "x=[1., 2.]")
    want = torch.autograd.functional.hessian(lambda a: (a ** 3).sum() + a[0] * a[1], torch.tensor([1., 2.]))
    np.testing.assert_allclose(d["hessian"]["x"]["x"]["value"], want.numpy())
    d = doc("hessian", "(a * b).sum() ** 2", "-i", "a=[1., 2.]", "-i", "b=[3., 4.]", "--dtype", "float64")
    ha = torch.autograd.functional.hessian(lambda p, q: (p * q).sum() ** 2,
                                           (torch.tensor([1., 2.], dtype=torch.float64),
                                            torch.tensor([3., 4.], dtype=torch.float64)))
    for i, a in enumerate("ab"):
        for j, b in enumerate("ab"):
            np.testing.assert_allclose(d["hessian"][a][b]["value"], ha[i][j].numpy())


def test_json_documents_are_valid():
    for name, args in (("jacobian", ["jacobian", "x.exp()", "-i", "x=[0., 1.]"]),
                       ("hessian", ["hessian", "(x ** 4).sum()", "-i", "x=[1., 2.]"])):
        errors = list(Draft202012Validator(schema(name)).iter_errors(doc(*args)))
        assert errors == [], errors


def test_tables_and_compact_lines():
    r = run("jacobian", "x.sin() * y", "-i", "x=[1., 2.]", "-i", "y=[3., 4.]")
    assert r.exit_code == 0
    assert "jacobian (reverse mode): d output / d x, shape (2, 2) (rows: output elements, columns: x)" in r.stdout
    assert "1.6209" in r.stdout and "-1.6646" in r.stdout
    r = run("hessian", "(x ** 3).sum() + x[0] * x[1]", "-i", "x=[1., 2.]", "-q")
    assert r.stdout == "output: tensor(11.)\nd2 output/d x d x: tensor([[ 6.,  1.], [ 1., 12.]])\n"
    big = run("jacobian", "(W @ x).tanh()", "-i", "W=randn(20, 30)", "-c", "x=randn(30)", "--seed", "0")
    assert big.exit_code == 0 and "(19, 29)" in big.stdout and "..." in big.stdout


def test_errors():
    r = run("jacobian", "x * 2", "-i", "x=[1.]", "--mode", "sideways")
    assert r.exit_code == 2 and "--mode must be one of reverse, forward, auto, got 'sideways'" in r.stderr
    r = run("hessian", "x * 2", "-i", "x=[1., 2.]")
    assert r.exit_code == 1
    assert "The Tensor returned by the function given to hessian should contain a single element" in r.stderr
    r = run("jacobian", "x * 2", "-c", "x=[1.]")
    assert r.exit_code == 2 and "jacobian needs an input" in r.stderr
    r = run("jacobian", "x.outer(x)", "-i", "x=ones(100)", "--limit", "elements=100000")
    assert r.exit_code == 1 and "the jacobian has 1,000,000 elements" in r.stderr


def test_the_four_transform_commands_share_one_declaration_of_their_options():
    # jacobian, hessian, jvp and hvp take the same options, in the same order, with the same help; each adds
    # its own (--mode, --symbolic, --tangent, --vector; --strict for jacobian and hessian) after --const.
    import typer

    group = typer.main.get_command(app)
    shared = None
    for name, own in (("jacobian", [["--mode"], ["--strict"]]), ("hessian", [["--symbolic"], ["--strict"]]),
                      ("jvp", [["--tangent", "-t"]]), ("hvp", [["--vector", "-v"]])):
        params = [(tuple(p.opts), getattr(p, "help", None)) for p in group.commands[name].params]
        rest = [p for p in params if sorted(p[0]) not in [sorted(o) for o in own]]
        assert len(params) - len(rest) == len(own), name
        assert shared is None or rest == shared, name
        shared = rest
    r = run("jvp", "--help")
    assert r.exit_code == 0 and "--tangent" in r.stdout and "--rtol" in r.stdout

"""``--symbolic`` as a user runs it: ``gradcli grad``, ``gradcli hessian``, ``gradcli batch`` entries, the
session's ``:diff``; the reasons when there is no formula; SymPy imported only for ``--symbolic``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from gradcli.frontends.cli import app
from helpers import HANG_TIMEOUT

pytest.importorskip("sympy", reason="--symbolic needs SymPy: pip install 'gradcli[symbolic]'")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
runner = CliRunner()


def gradcli(*args, input=None):
    return runner.invoke(app, list(args), input=input, env={"NO_COLOR": "1"})


def _json(*args):
    r = gradcli(*args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


# ---------------------------------------------------------------------------------------- the examples
@pytest.mark.parametrize("args,name,pretty", [
    (["x * x.sin()", "-i", "x=0.7"], "x", "sin(x) + x·cos(x)"),
    (["x @ A @ x", "-i", "x=[1., 2., 3.]", "-c", "A=[[1., 2., 0.], [0., 1., 4.], [5., 0., 1.]]"], "x", "(A + Aᵀ) x"),
    (["(X.T @ A @ X).trace()", "-i", "X=[[1., 2.], [3., 4.]]", "-c", "A=[[1., 2.], [0., 3.]]"], "X", "(A + Aᵀ) X"),
    (["torch.logdet(X)", "-i", "X=[[3., 1.], [1., 2.]]"], "X", "X⁻ᵀ"),
])
def test_the_examples_print_their_formulas(args, name, pretty):
    r = gradcli("grad", *args, "--symbolic")
    assert r.exit_code == 0, r.output
    assert "formula: the gradient in closed form" in r.stdout
    row = next(line for line in r.stdout.splitlines() if line.startswith(f"│ {name} ") and "agrees" in line)
    assert f"│ {pretty} " in row and "agrees (max abs diff" in row
    assert "gradients" in r.stdout  # the numbers are still there


def test_json_member_and_its_expression_is_accepted_by_gradcli():
    doc = _json("grad", "x @ A @ x", "-i", "x=[1., 2.]", "-c", "A=[[1., 2.], [3., 4.]]", "--symbolic")
    f = doc["symbolic"]["x"]
    assert f == {"expr": "(A + A.T) @ x", "pretty": "(A + Aᵀ) x", "latex": r"\left(A + A^{\top}\right) x",
                 "agrees": True, "max_abs_diff": 0.0, "reason": None}
    # the expression is a program of the inputs: gradcli computes the gradient from it
    again = _json("grad", f["expr"], "-c", "x=[1., 2.]", "-c", "A=[[1., 2.], [3., 4.]]")
    assert again["output"]["value"] == doc["grads"]["x"]["value"]


def test_latex_in_tables_and_compact_lines():
    r = gradcli("grad", "X.det().log()", "-i", "X=[[3., 1.], [1., 2.]]", "--symbolic", "--symbolic-format", "latex")
    assert r.exit_code == 0 and r"X^{-\top}" in r.stdout
    r = gradcli("grad", "(x * x.sin()).sum()", "-i", "x=[1., 2.]", "--symbolic", "-q")
    assert r.exit_code == 0 and "x: formula: sin(x) + x·cos(x)  [agrees (max abs diff" in r.stdout
    r = gradcli("grad", "x.sum()", "-i", "x=[1., 2.]", "--symbolic", "--symbolic-format", "mathml")
    assert r.exit_code == 2 and "--symbolic-format must be unicode or latex" in r.output


def test_vector_jacobian_product_with_gradient():
    doc = _json("grad", "A @ x", "-i", "x=[1., 2.]", "-c", "A=[[1., 2.], [3., 4.]]", "--gradient", "[1., -1.]",
                "--symbolic")
    f = doc["symbolic"]["x"]
    assert f["pretty"] == "Aᵀ v" and f["agrees"] is True


def test_fields_symbolic_alone_and_its_exit_code():
    doc = _json("grad", "x.exp().sum()", "-i", "x=[0., 1.]", "--fields", "symbolic")
    assert list(doc) == ["symbolic"] and doc["symbolic"]["x"]["pretty"] == "exp(x)"
    # no formula: the reason, exit 1 when the formula was all that was asked for, 0 otherwise
    r = gradcli("grad", "x.cumsum(0).sum()", "-i", "x=[1., 2.]", "--json", "--fields", "symbolic")
    assert r.exit_code == 1
    assert "cumsum (CumsumBackward0) has no symbolic rule at line 1, column 1" in r.stdout
    r = gradcli("grad", "x.cumsum(0).sum()", "-i", "x=[1., 2.]", "--symbolic")
    assert r.exit_code == 0 and "tensor([2., 1.])" in r.stdout
    assert "formula: no formula: cumsum (CumsumBackward0) has no symbolic rule at line 1, column 1" in r.stdout


@pytest.mark.parametrize("program,reason", [
    ("x[i].sum()", "indexing with a tensor of indices (_index) at line 1, column 1"),
    ("x[0] * x[1]", "indexing an element (select) at line 1, column 1"),
    ("y = x.sum()\nif y > 0:\n    y = y * 2\ny", "control flow on a tensor's value (the truth value of a tensor "
                                               "computed from an input) at line 2, column 4"),
    ("(x * randn(2)).sum()", "random numbers (randn) at line 1, column 6"),
    ("y = x * 1; y.add_(1); y.sum()", "an in-place update (add_) at line 1, column 12"),
    ("(x * ones(2)).sum()", "a constant tensor of shape (2,) made by the program, used by mul at line 1, column 2"),
])
def test_reasons_name_the_construct_and_where_it_is(program, reason):
    r = gradcli("grad", program, "-i", "x=[1., 2.]", "-c", "i=[0, 1]", "--symbolic", "--seed", "0")
    assert r.exit_code == 0, r.output
    assert f"formula: no formula: {reason}" in r.stdout


def test_hessian_symbolic():
    r = gradcli("hessian", "x @ A @ x", "-i", "x=[1., 2.]", "-c", "A=[[1., 2.], [3., 4.]]", "--symbolic", "-q")
    assert r.exit_code == 0 and "x,x: formula: A + Aᵀ  [agrees" in r.stdout
    r = gradcli("hessian", "(x * x.sin()).sum()", "-i", "x=[1., 2.]", "--symbolic", "--json")
    f = json.loads(r.stdout)["symbolic"]["x,x"]
    assert f["pretty"] == "diag(2·cos(x) - x·sin(x))" and f["agrees"] is True
    assert f["expr"] == "torch.diag(2 * x.cos() - x * x.sin())"


def test_batch_entries_with_symbolic(tmp_path):
    path = tmp_path / "entries.jsonl"
    path.write_text(json.dumps({"program": "x @ x", "inputs": {"x": [1.0, 2.0]}, "symbolic": True}) + "\n" +
                    json.dumps({"program": "x.sum()", "inputs": {"x": [1.0]}}) + "\n" +
                    json.dumps({"program": "x.sum()", "symbolic": 1}) + "\n")
    r = gradcli("batch", str(path), "--format", "json")
    docs = [json.loads(line) for line in r.stdout.splitlines()]
    assert docs[0]["symbolic"]["x"]["pretty"] == "2·x" and "symbolic" not in docs[1]
    assert "'symbolic' must be true or false" in json.dumps(docs[2])


def test_session_diff():
    p = subprocess.run([sys.executable, "-m", "gradcli", "repl"], input="x = tensor([1., 2.], requires_grad=True)\n"
                       "A = tensor([[1., 2.], [3., 4.]])\n:diff x @ A @ x\ny = 2 * x\n:diff y.sum()\n:diff\n",
                       capture_output=True, text=True, timeout=HANG_TIMEOUT, env=dict(os.environ, NO_COLOR="1"),
                       cwd=ROOT)
    assert "(A + Aᵀ) x" in p.stdout and "agrees" in p.stdout
    assert "y was computed from the leaves in an earlier entry" in p.stdout
    assert ":diff needs an expression" in p.stdout + p.stderr


def test_sympy_is_imported_only_for_symbolic():
    code = ("import sys\nsys.argv = ['gradcli'] + sys.argv[1:]\nfrom gradcli.frontends.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nsys.stderr.write(str('sympy' in sys.modules))\n")
    base = ["grad", "(x * x.sin()).sum()", "-i", "x=[1., 2.]"]
    for extra, want in (([], "False"), (["--json"], "False"), (["-q"], "False"), (["--symbolic"], "True")):
        p = subprocess.run([sys.executable, "-c", code, *base, *extra], capture_output=True, text=True,
                           timeout=HANG_TIMEOUT, env=dict(os.environ, PYTHONPATH=ROOT, NO_COLOR="1"))
        assert p.stderr.strip().endswith(want), (extra, p.stderr)


def _validator(name: str):
    jsonschema = pytest.importorskip("jsonschema")
    r = gradcli("schema", name)
    doc = json.loads(r.stdout)
    jsonschema.Draft202012Validator.check_schema(doc)
    return jsonschema.Draft202012Validator(doc)


def test_documents_follow_gradcli_schema():
    grad = _validator("grad")
    for args in (["x @ A @ x", "-i", "x=[1., 2.]", "-c", "A=[[1., 2.], [3., 4.]]", "--symbolic"],
                 ["x.cumsum(0).sum()", "-i", "x=[1., 2.]", "--symbolic"],
                 ["x.exp().sum()", "-i", "x=[1., 2.]", "--fields", "symbolic"]):
        doc = json.loads(gradcli("grad", *args, "--json").stdout)
        assert "symbolic" in doc and [e.message for e in grad.iter_errors(doc)] == []
    assert "symbolic" in json.dumps(json.loads(gradcli("schema", "grad").stdout)["$defs"]["formula"])
    hessian = _validator("hessian")
    doc = json.loads(gradcli("hessian", "(x * x.sin()).sum()", "-i", "x=[1., 2.]", "--symbolic", "--json").stdout)
    assert [e.message for e in hessian.iter_errors(doc)] == []


def test_without_sympy_a_clear_message():
    """Where SymPy is missing (find_spec finds none), --symbolic is a usage error that says how to install it
    (exit 2)."""
    code = ("import sys, importlib.util\nreal = importlib.util.find_spec\n"
            "importlib.util.find_spec = lambda n, *a: None if n == 'sympy' else real(n, *a)\n"
            "sys.argv = ['gradcli'] + sys.argv[1:]\nfrom gradcli.frontends.cli import main\nmain()\n")
    p = subprocess.run([sys.executable, "-c", code, "grad", "x.sum()", "-i", "x=[1.]", "--symbolic"],
                       capture_output=True, text=True, timeout=HANG_TIMEOUT,
                       env=dict(os.environ, PYTHONPATH=ROOT, NO_COLOR="1"))
    assert p.returncode == 2 and "--symbolic needs SymPy" in p.stderr and "gradcli[symbolic]" in p.stderr


def test_readme_examples_print_their_formulas():
    """Each row of the README's table of --symbolic examples prints the formula the row shows."""
    import re
    import shlex

    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text.split("## The gradient as a formula (`--symbolic`)", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(gradcli [^`]+)` \| `([^`]+)`", section, re.M)
    assert len(rows) >= 6
    for command, formula in rows:
        r = gradcli(*shlex.split(command)[1:], "-q", "--seed", "0")
        assert r.exit_code == 0, (command, r.output)
        assert f"formula: {formula}  [agrees" in r.stdout, (command, r.stdout)


def test_repeat_compares_one_backward_calls_gradient():
    r = gradcli("grad", "x * x.sin()", "-i", "x=0.7", "--symbolic", "--repeat", "3", "-q")
    assert r.exit_code == 0 and "x: formula: sin(x) + x·cos(x)  [agrees" in r.stdout


def test_a_wrong_rule_is_caught_by_the_check(monkeypatch):
    """The check at the inputs is what makes a formula trustworthy: a rule with a wrong derivative (here sin's,
    replaced by one that says d/dx sin(x) = -cos(x)) is reported as disagreeing, exit 1."""
    from gradcli.ops.elementwise import unary

    def wrong(s, input):
        u = s.elem(input)
        return s.sin(u), lambda g: -g * s.cos(u)

    monkeypatch.setattr(unary.sin, "symbolic", wrong)
    r = gradcli("grad", "x.sin().sum()", "-i", "x=[0.5, 1.]", "--symbolic")
    assert r.exit_code == 1
    row = next(line for line in r.stdout.splitlines() if line.startswith("│ x ") and "disagrees" in line)
    assert "-cos(x)" in row and "disagrees (max abs diff 1.8" in row
    assert "the formula of x disagrees with autograd at the inputs" in r.stderr

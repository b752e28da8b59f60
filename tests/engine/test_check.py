"""``gradcli grad --check``: gradients against central finite differences in float64, from the command line."""

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
from gradcli.ops import REGISTRY

from helpers import HANG_TIMEOUT, ROOT
runner = CliRunner()


def grad(*args):
    return runner.invoke(app, ["grad", *args])


def check_json(*args, code=0):
    r = grad(*args, "--check", "--json")
    assert r.exit_code == code, r.output
    return json.loads(r.stdout)


def test_check_passes_and_reports_per_input_differences():
    doc = check_json("(x.exp() * y).sum()", "-i", "x=[0.1, 2., -1.]", "-i", "y=3.0")
    c = doc["check"]
    assert c["ok"] is True and c["evaluations"] == 2 * 4 + 1  # and one run at the inputs themselves (kinks)
    assert set(c["inputs"]) == {"x", "y"}
    x = np.array([0.1, 2.0, -1.0], dtype=np.float32).astype(np.float64)
    np.testing.assert_allclose(c["inputs"]["x"]["numerical"], 3 * np.exp(x), rtol=1e-8)
    np.testing.assert_allclose(c["inputs"]["y"]["numerical"], np.exp(x).sum(), rtol=1e-8)
    for name in ("x", "y"):
        assert c["inputs"][name]["ok"] is True
        # float32 gradients against float64 differences: small but not zero
        assert 0 <= c["inputs"][name]["max_abs_diff"] < 1e-4
        assert 0 <= c["inputs"][name]["max_rel_diff"] < 1e-5


def test_check_table_on_stdout():
    r = grad("(x * x).sum()", "-i", "x=[1., 2.]", "--check")
    assert r.exit_code == 0, r.output
    assert "check: central differences in float64" in r.stdout
    table = r.stdout[r.stdout.index("check: central differences"):]
    row = next(line for line in table.splitlines() if line.strip("│ ").startswith("x "))
    assert row.split("│")[-2].strip() == "ok"


def test_check_fails_with_exit_1_on_a_wrong_derivative(monkeypatch):
    exp_op = REGISTRY["exp"]
    rule = exp_op.vjp
    monkeypatch.setattr(exp_op, "vjp", lambda g, result: rule(g, result) * 1.01)
    r = grad("x.exp().sum()", "-i", "x=[0.5, 1.5]", "--check")
    assert r.exit_code == 1
    assert "FAIL" in r.stdout
    assert "--check failed" in r.stderr and "x (max abs diff" in r.stderr
    doc = check_json("x.exp().sum()", "-i", "x=[0.5, 1.5]", code=1)
    assert doc["check"]["ok"] is False and doc["check"]["inputs"]["x"]["ok"] is False
    assert doc["check"]["inputs"]["x"]["max_rel_diff"] == pytest.approx(0.01, rel=1e-3)


def test_check_uses_the_gradient_vector_for_non_scalar_outputs():
    doc = check_json("x * x", "-i", "x=[1., -2., 3.]", "--gradient", "[1., 0.5, 0.]")
    assert doc["check"]["ok"] is True
    np.testing.assert_allclose(doc["check"]["inputs"]["x"]["numerical"], [2.0, -2.0, 0.0], atol=1e-8)


def test_check_perturbs_leaves_the_program_creates():
    doc = check_json("w = tensor([1., 2.], requires_grad=True); (w ** 3 * x).sum()", "-i", "x=[0.5, 4.]")
    c = doc["check"]
    assert set(c["inputs"]) == {"x", "w"} and c["ok"]
    np.testing.assert_allclose(c["inputs"]["w"]["numerical"], [1.5, 48.0], rtol=1e-7)


def test_check_with_random_numbers_uses_one_seed_for_every_run():
    doc = check_json("(x * randn(3)).sum()", "-i", "x=[1., 2., 3.]")
    assert doc["check"]["ok"] is True


def test_check_unused_input_counts_as_zero_gradient():
    doc = check_json("(x * 2).sum()", "-i", "x=[1.]", "-i", "u=[5., 6.]")
    assert doc["grads"]["u"]["value"] is None
    assert doc["check"]["inputs"]["u"]["ok"] is True
    assert doc["check"]["inputs"]["u"]["numerical"] == [0.0, 0.0]


def test_check_at_a_kink_follows_the_subgradient_convention_and_fails_honestly():
    # relu at exactly 0: PyTorch's gradient is 0, the central difference is 0.5
    doc = check_json("x.relu().sum()", "-i", "x=[0., 1.]", code=1)
    x = doc["check"]["inputs"]["x"]
    assert x["numerical"] == pytest.approx([0.5, 1.0])
    assert doc["grads"]["x"]["value"] == [0.0, 1.0]


def test_check_keeps_the_float32_default_for_printing():
    doc = check_json("(x * 3).sum()", "-i", "x=[1., 2.]")
    assert doc["output"]["dtype"] == "float32" and doc["inputs"]["x"]["dtype"] == "float32"


def test_check_refuses_too_many_elements():
    r = grad("x.sum()", "-i", "x=ones(20000)", "--check")
    assert r.exit_code == 2
    assert "CheckLimitError" in r.stderr and "40001 runs" in r.stderr
    r = grad("x.sum()", "-i", "x=ones(200)", "--check", "--check-max-evaluations", "100")
    assert r.exit_code == 2


def test_check_options_are_validated():
    r = grad("x.sum()", "-i", "x=[1.]", "--check", "--eps", "0")
    assert r.exit_code == 2 and "eps > 0" in r.stderr


def test_check_custom_tolerances():
    # a loose step makes the difference quotient of x**3 visibly wrong: eps^2 error at eps=1e-1 is 1e-2
    doc = check_json("(x ** 3).sum()", "-i", "x=[1.]", "--eps", "0.1", "--atol", "0", "--rtol", "1e-4", code=1)
    assert doc["check"]["inputs"]["x"]["max_abs_diff"] == pytest.approx(0.01, rel=1e-3)


def test_check_through_a_real_subprocess(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    p = subprocess.run([sys.executable, "-m", "gradcli", "grad", "(x * x).mean()", "-i", "x=[1., 2., 3.]",
                        "--check", "--json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=HANG_TIMEOUT)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["check"]["ok"] is True


# ------------------------------------------------------------------------------------------------ kinks
def _run_cli(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_check_at_relus_kink_says_which_element_and_which_op():
    # What the user ran: the check fails (exit 1, as documented), and says that x[0] sits at relu's kink.
    torch = pytest.importorskip("torch")
    p = _run_cli("grad", "x.relu().sum()", "-i", "x=[0., 1.]", "--check")
    assert p.returncode == 1, p.stderr
    assert "FAIL (kink)" in p.stdout
    assert ("x[0] = 0 is at a kink of relu: finite differences average the one-sided slopes (0 and 1 give 0.5); "
            "PyTorch's gradient there is 0") in p.stdout
    assert "x[1]" not in p.stdout  # the smooth element is not a kink
    assert "--check failed only at kinks" in p.stderr and "x[0] = 0 is at a kink of relu" in p.stderr
    # the gradient reported at the kink is PyTorch's subgradient
    t = torch.tensor([0.0, 1.0], requires_grad=True)
    t.relu().sum().backward()
    assert "tensor([0., 1.])" in p.stdout and t.grad.tolist() == [0.0, 1.0]


def test_check_kinks_in_json_validate_against_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    p = _run_cli("grad", "x.relu().sum()", "-i", "x=[0., 1.]", "--check", "--json")
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    schema = json.loads(_run_cli("schema", "grad").stdout)
    jsonschema.validate(doc, schema)
    c = doc["check"]
    assert c["ok"] is False and c["fails_only_at_kinks"] is True
    (k,) = c["inputs"]["x"]["kinks"]
    assert k["index"] == [0] and k["value"] == 0.0 and k["ops"] == ["relu"] and k["ok"] is False
    assert k["left"] == pytest.approx(0.0, abs=1e-6) and k["right"] == pytest.approx(1.0, rel=1e-6)
    assert k["numerical"] == pytest.approx(0.5, rel=1e-6) and k["analytical"] == 0.0 and k["jump"] is False
    assert k["message"].startswith("x[0] = 0 is at a kink of relu")


def test_check_finds_kinks_of_several_ops_and_passing_ones():
    # clamp at both bounds (PyTorch's gradient 1 at the bounds), scaled so that the slopes are 0 and 3
    doc = check_json("(x.clamp(0, 1) * 3).sum()", "-i", "x=[0., 1., 0.5, 2.]", code=1)
    kinks = doc["check"]["inputs"]["x"]["kinks"]
    assert [k["index"] for k in kinks] == [[0], [1]] and all(k["ops"] == ["clamp"] for k in kinks)
    assert doc["check"]["fails_only_at_kinks"] is True
    # abs at 0: the central difference (0) is PyTorch's subgradient, so the check passes, and says it is a kink
    doc = check_json("x.abs().sum()", "-i", "x=[0., -2.]")
    (k,) = doc["check"]["inputs"]["x"]["kinks"]
    assert k["ok"] is True and k["ops"] == ["abs"] and k["index"] == [0]
    # two inputs meeting at a kink of maximum: each input's element is named
    doc = check_json("torch.maximum(x, y).sum()", "-i", "x=[1., 2.]", "-i", "y=[1., 3.]")
    assert [k["ops"] for k in doc["check"]["inputs"]["x"]["kinks"]] == [["maximum"]]
    assert [k["index"] for k in doc["check"]["inputs"]["y"]["kinks"]] == [[0]]


def test_check_kink_of_an_op_that_declares_none_is_described_generally():
    # where() picks a branch: not an op with kinks of its own, so the point is described by its slopes
    p = _run_cli("grad", "torch.where(x > 0, x, 2 * x).sum()", "-i", "x=[0., 1.]", "--check")
    assert p.returncode == 1
    assert "x[0] = 0 is at a point where the one-sided slopes differ" in p.stdout


def test_check_smooth_functions_have_no_kinks_even_with_large_curvature():
    for args in (("(1 / x).sum()", "-i", "x=[0.001, 1.]"), ("(x.exp() * y).sum()", "-i", "x=[10., -1.]", "-i",
                                                             "y=3.0")):
        doc = check_json(*args)
        assert all(i["kinks"] == [] for i in doc["check"]["inputs"].values())
    # a large step makes the central difference of x**3 wrong: a genuine failure, not a kink
    doc = check_json("(x ** 3).sum()", "-i", "x=[1.]", "--eps", "0.1", "--atol", "0", "--rtol", "1e-4", code=1)
    assert doc["check"]["inputs"]["x"]["kinks"] == [] and doc["check"]["fails_only_at_kinks"] is False


def test_check_a_discontinuity_is_not_called_a_kink():
    doc = check_json("(x.floor() + x).sum()", "-i", "x=[1., 1.5]", code=1)
    (k,) = doc["check"]["inputs"]["x"]["kinks"]
    assert k["jump"] is True and k["index"] == [0] and "is at a discontinuity" in k["message"]


def test_check_a_genuine_failure_beside_a_kink_is_still_a_failure(monkeypatch):
    exp_op = REGISTRY["exp"]
    rule = exp_op.vjp
    monkeypatch.setattr(exp_op, "vjp", lambda g, result: rule(g, result) * 1.01)
    r = grad("x.exp().sum() + y.relu().sum()", "-i", "x=[0.5]", "-i", "y=[0., 1.]", "--check")
    assert r.exit_code == 1
    assert "--check failed: gradients differ from finite differences" in r.stderr
    assert "x (max abs diff" in r.stderr and "of those, at kinks: y[0] = 0 is at a kink of relu" in r.stderr
    table = r.stdout[r.stdout.index("check: central differences"):]
    verdicts = {line.split("│")[1].strip(): line.split("│")[-2].strip() for line in table.splitlines()
                if line.startswith("│")}
    assert verdicts == {"x": "FAIL", "y": "FAIL (kink)"}


def test_check_looks_for_kinks_within_the_evaluation_budget():
    # ten elements at relu's kink: 21 runs for the differences leave 4 of 25, enough to tell one kink
    doc = check_json("x.relu().sum()", "-i", "x=zeros(10)", "--check-max-evaluations", "25", code=1)
    c = doc["check"]
    assert c["evaluations"] <= 25 and len(c["inputs"]["x"]["kinks"]) == 1
    assert c["fails_only_at_kinks"] is False  # the other nine were not told apart: nothing to excuse them
    doc = check_json("x.relu().sum()", "-i", "x=zeros(10)", code=1)
    assert len(doc["check"]["inputs"]["x"]["kinks"]) == 10 and doc["check"]["fails_only_at_kinks"] is True

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

from gradcli.cli import app
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
    assert c["ok"] is True and c["evaluations"] == 2 * 4
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
    assert "CheckLimitError" in r.stderr and "40000 runs" in r.stderr
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

"""Compact answers (``--format compact``, ``-q``) for grad, batch and the session, and
``--show`` choosing the sections of tables and compact lines."""

from __future__ import annotations

import os
import subprocess
import sys

from typer.testing import CliRunner

from gradcli.frontends.cli import app

from helpers import ROOT

runner = CliRunner()


def test_grad_q_prints_one_line_per_result():
    r = runner.invoke(app, ["grad", "2 * dot(x, x)", "-i", "x=arange(4.0)", "-q"])
    assert r.exit_code == 0
    assert r.stdout == "output: tensor(28., grad_fn=<MulBackward0>)\nx: tensor([ 0.,  4.,  8., 12.])\n"
    same = runner.invoke(app, ["grad", "2 * dot(x, x)", "-i", "x=arange(4.0)", "--format", "compact"])
    assert same.stdout == r.stdout


def test_compact_joins_a_matrix_onto_one_line_and_numbers_repeated_calls():
    r = runner.invoke(app, ["grad", "(w @ x).sum()", "-i", "w=[[1.,2.],[3.,4.]]", "-c", "x=[1., 1.]", "-q",
                            "--repeat", "2"])
    assert r.stdout.splitlines() == ["output: tensor(10., grad_fn=<SumBackward0>)",
                                     "w (call 1): tensor([[1., 1.], [1., 1.]])",
                                     "w (call 2): tensor([[2., 2.], [2., 2.]])"]


def test_compact_without_a_gradient_and_with_a_check():
    r = runner.invoke(app, ["grad", "3.0", "-q"])
    assert r.stdout.splitlines() == ["output: tensor(3.)",
                                     "no gradient: the output does not depend on an input that requires grad"]
    r = runner.invoke(app, ["grad", "(x.exp()).sum()", "-i", "x=[0.5]", "-q", "--check", "--seed", "0"])
    assert r.stdout.splitlines()[-1].startswith("check: ok (max |grad - numerical| ")


def test_show_chooses_sections():
    r = runner.invoke(app, ["grad", "(x*x).sum()", "-i", "x=[1.,2.]", "-q", "--show", "output,graph"])
    assert r.stdout.splitlines() == ["output: tensor(5., grad_fn=<SumBackward0>)",
                                     "graph: n0=SumBackward0(n1), n1=MulBackward0(x, x), x=AccumulateGrad"]
    r = runner.invoke(app, ["grad", "(x*x).sum()", "-i", "x=[1.,2.]", "--show", "grads"])
    assert "gradients" in r.stdout and "tensor([2., 4.])" in r.stdout
    assert "output" not in r.stdout and "graph" not in r.stdout and "inputs" not in r.stdout
    bad = runner.invoke(app, ["grad", "x*2", "-i", "x=[1.]", "--show", "gradients"])
    assert bad.exit_code == 2 and "--show takes names from output, inputs, grads, graph" in bad.stderr
    bad = runner.invoke(app, ["grad", "x.sum()", "-i", "x=[1.]", "--json", "--show", "grads"])
    assert bad.exit_code == 2 and "--fields those of --format json" in bad.stderr
    bad = runner.invoke(app, ["grad", "x.sum()", "-i", "x=[1.]", "-q", "--json"])
    assert bad.exit_code == 2


def test_batch_q_and_the_session():
    r = runner.invoke(app, ["batch", "-", "-q"], input="x = tensor([1., 2.], requires_grad=True); (x * x).sum()\n"
                                                       "undefined\n")
    assert r.exit_code == 1
    assert r.stdout.splitlines() == ["1: output: tensor(5., grad_fn=<SumBackward0>); x: tensor([2., 4.])",
                                     "2: NameError: name 'undefined' is not defined"]
    s = subprocess.run([sys.executable, "-m", "gradcli", "repl"], input=":format compact\n"
                       "x = tensor([1., 2.], requires_grad=True)\n:grad (x*x).sum()\n", capture_output=True,
                       text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert s.returncode == 0, s.stderr
    assert s.stdout.splitlines()[-2:] == ["output: tensor(5., grad_fn=<SumBackward0>)", "x: tensor([2., 4.])"]

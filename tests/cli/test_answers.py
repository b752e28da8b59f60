"""Answers for programs whose output has no gradient, and for programs that call backward
themselves, each as the user typed it."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from gradcli.frontends.cli import app

runner = CliRunner()
NOTE = "no gradient: the output does not depend on an input that requires grad"


def grad(*args):
    return runner.invoke(app, ["grad", *args])


def test_outputs_without_a_gradient_print_their_value_and_a_note():
    for args, value in ((["3.0"], "tensor(3.)"), (["x.detach()", "-i", "x=[1.,2.]"], "tensor([1., 2.])"),
                        (["X.sum().item()", "-i", "X=[1.,2.]"], "tensor(3.)"), (["c * 2", "-c", "c=[1., 2.]"],
                                                                                  "tensor([2., 4.])")):
        r = grad(*args)
        assert r.exit_code == 0, r.output
        assert value in r.stdout and NOTE in r.stdout
        assert "declare an input" not in r.output
        doc = json.loads(grad(*args, "--json").stdout)
        assert doc["grads"] == {} and doc["calls"] == []


def test_a_program_that_calls_backward_itself_is_reported_as_it_left_its_gradients():
    """The program's own backward, with or without retain_graph=True, is the only one: x.grad is [2., 4.] as in
    PyTorch, not [4, 8] (a second backward by gradcli) nor 'backward through the graph a second time'."""
    for program in ("y = (x*x).sum(); y.backward(retain_graph=True); y", "y = (x*x).sum(); y.backward(); y"):
        r = grad(program, "-i", "x=[1.,2.]", "--json")
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        assert doc["grads"]["x"]["value"] == [2.0, 4.0] and len(doc["calls"]) == 1
        table = grad(program, "-i", "x=[1.,2.]")
        assert "tensor([2., 4.])" in table.stdout and "the program called backward itself: the gradients are as it left them" in table.stdout


def test_the_program_s_own_backward_and_the_options_that_need_gradcli_s():
    r = grad("y = (x*x).sum(); y.backward(); y", "-i", "x=[1.,2.]", "--repeat", "2")
    assert r.exit_code == 2
    assert "the program calls backward itself, so gradcli does not: --repeat cannot apply" in r.stderr


def test_x_grad_as_output():
    r = grad("x.grad", "-i", "x=[1.,2.]")
    assert r.exit_code == 1
    assert "the program's output is None, not a tensor" in r.stderr and "call backward in the program" in r.stderr
    r = grad("(x * x).sum().backward(); x.grad", "-i", "x=[1.,2.]", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["output"]["value"] == [2.0, 4.0] and doc["grads"]["x"]["value"] == [2.0, 4.0]

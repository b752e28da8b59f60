"""``gradcli jacobian`` of a program that ends in a tuple of tensors (several outputs), and ``--strict``, as a
user runs them: the JSON document against torch.autograd.functional.jacobian's tuple of tuples (reverse and
forward mode) and against its schema, the table and compact lines, the session's ``:jacobian``, a batch
transform entry, and PyTorch's messages: strict mode's, a Hessian of a tuple or of a non-scalar output, an
output that is not a Tensor."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from gradcli.frontends.cli import app
from gradcli.render.schemas import schema
from helpers import ROOT

runner = CliRunner()

X, Y = [0.5, -1.5, 2.0], [3.0, 4.0, -0.25]
PROGRAMS = {  # program text -> the same function for PyTorch
    "(x.sin(), (x * y).sum())": lambda x, y: (x.sin(), (x * y).sum()),
    "(x * y, y.exp()[:2], x.outer(y))": lambda x, y: (x * y, y.exp()[:2], x.outer(y)),
    "(x.tanh(),)": lambda x, y: (x.tanh(),),
}


def jacobian_doc(program: str, *extra: str) -> dict:
    r = runner.invoke(app, ["jacobian", program, "-i", f"x={X}", "-i", f"y={Y}", "--dtype", "float64", *extra,
                            "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def torch_jacobian(torch, program: str, forward: bool):
    x, y = (torch.tensor(v, dtype=torch.float64) for v in (X, Y))
    if forward:
        return torch.autograd.functional.jacobian(PROGRAMS[program], (x, y), vectorize=True,
                                                  strategy="forward-mode")
    return torch.autograd.functional.jacobian(PROGRAMS[program], (x, y))


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
@pytest.mark.parametrize("program", list(PROGRAMS))
def test_tuple_output_jacobian_equals_pytorch(program, mode):
    torch = pytest.importorskip("torch")
    d = jacobian_doc(program, "--mode", mode)
    assert not list(Draft202012Validator(schema("jacobian")).iter_errors(d))
    want = torch_jacobian(torch, program, mode == "forward")
    outs = PROGRAMS[program](*(torch.tensor(v, dtype=torch.float64) for v in (X, Y)))
    assert isinstance(d["output"], list) and len(d["output"]) == len(outs) == len(want)
    assert isinstance(d["jacobian"], list) and len(d["jacobian"]) == len(want)
    for o, (got_out, out) in enumerate(zip(d["output"], outs)):
        np.testing.assert_allclose(got_out["value"], out.detach().numpy(), rtol=1e-12)
        assert list(d["jacobian"][o]) == ["x", "y"]
        for k, name in enumerate("xy"):
            block = d["jacobian"][o][name]
            assert block["shape"] == list(want[o][k].shape)
            np.testing.assert_allclose(block["value"], want[o][k].numpy(), rtol=1e-12, atol=1e-15)


def test_tuple_output_check_passes_and_names_each_block():
    d = jacobian_doc("(x.sin(), (x * y).sum())", "--check")
    assert d["check"]["ok"]
    assert list(d["check"]["inputs"]) == ["output[0],x", "output[0],y", "output[1],x", "output[1],y"]


def test_tuple_output_table_and_compact_lines():
    torch = pytest.importorskip("torch")
    args = ["jacobian", "(x.sin(), (x * y).sum())", "-i", "x=[1., 2.]", "-i", "y=[3., 4.]"]
    r = runner.invoke(app, args + ["-q"])
    assert r.exit_code == 0, r.output
    x, y = torch.tensor([1., 2.]), torch.tensor([3., 4.])
    outs = (x.sin(), (x * y).sum())
    (jxx, jxy), (jsx, jsy) = torch.autograd.functional.jacobian(lambda a, b: (a.sin(), (a * b).sum()), (x, y))
    assert r.stdout.splitlines() == [
        f"output: {outs}",
        "d output[0]/d x: " + str(jxx).replace("\n       ", ""),
        "d output[0]/d y: " + str(jxy).replace("\n       ", ""),
        f"d output[1]/d x: {jsx}",
        f"d output[1]/d y: {jsy}"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "d output[0] / d x, shape (2, 2)" in r.stdout and "d output[1] / d y, shape (2,)" in r.stdout


def _torch_error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the message PyTorch gives is what the CLI must print
        return f"{type(e).__name__}: {e}"
    raise AssertionError("PyTorch answered")


@pytest.mark.parametrize("program, function", [
    ("y.sin()", lambda x, y: y.sin()),
    ("(x.sin(), (x * y).sum())", lambda x, y: (x.sin(), (x * y).sum())),
    ("(x.sin(), y.sum())", lambda x, y: (x.sin(), y.sum())),
])
def test_strict_gives_pytorch_s_message(program, function):
    torch = pytest.importorskip("torch")
    x, y = torch.tensor([1., 2.]), torch.tensor([3., 4.])
    want = _torch_error(lambda: torch.autograd.functional.jacobian(function, (x, y), strict=True))
    assert "is not allowed in strict mode" in want
    for mode in ("reverse", "auto"):
        r = runner.invoke(app, ["jacobian", program, "-i", "x=[1., 2.]", "-i", "y=[3., 4.]", "--strict",
                                "--mode", mode])
        assert r.exit_code == 1 and want in r.output, r.output
    r = runner.invoke(app, ["jacobian", program, "-i", "x=[1., 2.]", "-i", "y=[3., 4.]", "--strict",
                            "--mode", "forward"])
    want = _torch_error(lambda: torch.autograd.functional.jacobian(function, (x, y), strict=True, vectorize=True,
                                                                    strategy="forward-mode"))
    assert r.exit_code == 1 and want in r.output, r.output


def test_strict_answers_where_every_output_depends_on_every_input():
    torch = pytest.importorskip("torch")
    d = jacobian_doc("(x * y, (x + y).sum())", "--strict")
    x, y = (torch.tensor(v, dtype=torch.float64) for v in (X, Y))
    want = torch.autograd.functional.jacobian(lambda a, b: (a * b, (a + b).sum()), (x, y), strict=True)
    assert d["mode"] == "reverse"
    for o in range(2):
        for k, name in enumerate("xy"):
            np.testing.assert_allclose(d["jacobian"][o][name]["value"], want[o][k].numpy(), rtol=1e-12)


@pytest.mark.parametrize("command, program, function", [
    ("hessian", "((x * y).sum(),)", lambda x, y: ((x * y).sum(),)),
    ("hessian", "x.sin() * y", lambda x, y: x.sin() * y),
    ("hessian", "(y.sin().sum() + x.sum())", lambda x, y: y.sin().sum() + x.sum()),
    ("jacobian", "(x.sin(), 2.0)", lambda x, y: (x.sin(), 2.0)),
])
def test_pytorch_s_refusals(command, program, function):
    torch = pytest.importorskip("torch")
    x, y = torch.tensor([1., 2.]), torch.tensor([3., 4.])
    strict = command == "hessian" and program.startswith("(y")
    api = getattr(torch.autograd.functional, command)
    want = _torch_error(lambda: api(function, (x, y), strict=strict))
    r = runner.invoke(app, [command, program, "-i", "x=[1., 2.]", "-i", "y=[3., 4.]"] +
                      (["--strict"] if strict else []))
    assert r.exit_code == 1 and want in r.output, (want, r.output)


def test_the_session_s_jacobian_of_a_tuple():
    torch = pytest.importorskip("torch")
    script = ("x = tensor([1., 2.], requires_grad=True)\ny = tensor([3., 4.], requires_grad=True)\n"
              ":format json\n:jacobian (x.sin(), (x * y).sum())\n")
    r = subprocess.run([sys.executable, "-m", "gradcli", "repl"], input=script, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout.strip().splitlines()[-1])
    x, y = torch.tensor([1., 2.]), torch.tensor([3., 4.])
    want = torch.autograd.functional.jacobian(lambda a, b: (a.sin(), (a * b).sum()), (x, y))
    for o in range(2):
        for k, name in enumerate("xy"):
            np.testing.assert_allclose(d["jacobian"][o][name]["value"], want[o][k].numpy(), rtol=1e-6)


def test_a_batch_entry_s_jacobian_of_a_tuple(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "entries.jsonl"
    entries = [{"program": "(x.sin(), (x * y).sum())", "inputs": {"x": "[1., 2.]", "y": "[3., 4.]"},
                "transform": "jacobian", "mode": mode} for mode in ("reverse", "forward")]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    r = runner.invoke(app, ["batch", str(path), "--json"])
    assert r.exit_code == 0, r.output
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert not [e for line in lines for e in Draft202012Validator(schema("batch")).iter_errors(line)]
    x, y = torch.tensor([1., 2.]), torch.tensor([3., 4.])
    want = torch.autograd.functional.jacobian(lambda a, b: (a.sin(), (a * b).sum()), (x, y))
    for line in lines:
        for o in range(2):
            for k, name in enumerate("xy"):
                np.testing.assert_allclose(line["jacobian"][o][name]["value"], want[o][k].numpy(), rtol=1e-6)

"""The same options per entry. A JSON Lines entry's ``gradient``, ``repeat``, ``zero_grad``,
``check``, ``dtype`` and ``seed`` mean what ``gradcli grad``'s options mean: each entry's JSON line equals
``gradcli grad ... --json`` with those options (plus ``line``). ``batch --check`` checks every entry."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gradcli.frontends.cli import app

runner = CliRunner()


def grad_doc(*args) -> dict:
    r = runner.invoke(app, ["grad", *args, "--json"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


def batch_docs(tmp_path, lines, *args) -> tuple[int, list[dict], str]:
    path = tmp_path / "entries.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    r = runner.invoke(app, ["batch", str(path), "--json", *args])
    return r.exit_code, [json.loads(x) for x in r.stdout.splitlines()], r.stderr


def without_line(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "line"}




CASES = [
    ({"program": "x * 2", "inputs": {"x": "[1., 2., 3.]"}, "gradient": [0.1, 1.0, 10.0]},
     ["x * 2", "-i", "x=[1., 2., 3.]", "--gradient", "[0.1, 1.0, 10.0]"]),
    ({"program": "(x * x).sum()", "inputs": {"x": "[1., 2.]"}, "repeat": 3},
     ["(x * x).sum()", "-i", "x=[1., 2.]", "--repeat", "3"]),
    ({"program": "(x * x).sum()", "inputs": {"x": "[1., 2.]"}, "repeat": 3, "zero_grad": True},
     ["(x * x).sum()", "-i", "x=[1., 2.]", "--repeat", "3", "--zero-grad"]),
    ({"program": "(x.sin() * 3).sum()", "inputs": {"x": "[0.5, 1.5]"}, "dtype": "float64"},
     ["(x.sin() * 3).sum()", "-i", "x=[0.5, 1.5]", "--dtype", "float64"]),
    ({"program": "(w * randn(3)).sum()", "inputs": {"w": "randn(3)"}, "seed": 7},
     ["(w * randn(3)).sum()", "-i", "w=randn(3)", "--seed", "7"]),
    ({"program": "(x.exp() * x).sum()", "inputs": {"x": "[0.1, 0.2]"}, "check": True, "seed": 0},
     ["(x.exp() * x).sum()", "-i", "x=[0.1, 0.2]", "--check", "--seed", "0"]),
    ({"program": "(x.exp() * x).sum()", "inputs": {"x": "[0.1, 0.2]"}, "check": {"eps": 1e-4, "rtol": 1e-2},
      "seed": 0},
     ["(x.exp() * x).sum()", "-i", "x=[0.1, 0.2]", "--check", "--eps", "1e-4", "--rtol", "1e-2", "--seed", "0"]),
]


@pytest.mark.parametrize("entry, args", CASES, ids=[c[1][-2].lstrip("-") + "-" + str(i) for i, c in enumerate(CASES)])
def test_an_entry_s_options_mean_what_grad_s_options_mean(tmp_path, entry, args):
    code, docs, _ = batch_docs(tmp_path, [entry])
    assert code == 0, docs
    assert without_line(docs[0]) == grad_doc(*args)


def test_batch_check_checks_every_entry_and_a_failed_check_fails_the_entry(tmp_path):
    entries = [{"program": "(x * x).sum()", "inputs": {"x": "[1., 2.]"}},
               # a wrong gradient on purpose: detach hides x from backward in one factor
               {"program": "(x.detach() * x).sum()", "inputs": {"x": "[1., 2.]"}},
               {"program": "(x * x).sum()", "inputs": {"x": "[1., 2.]"}, "check": False}]
    code, docs, err = batch_docs(tmp_path, entries, "--check")
    assert code == 1
    assert docs[0]["check"]["ok"] is True and docs[1]["check"]["ok"] is False and "check" not in docs[2]
    assert docs[1]["grads"]["x"]["value"] == [1.0, 2.0]  # the result is still written
    assert "3 entries, 1 failed (line 2)" in err


def test_batch_check_in_the_table(tmp_path):
    path = tmp_path / "e.txt"
    path.write_text("x = tensor([1., 2.], requires_grad=True); (x * x).sum()\n"
                    "x = tensor([1., 2.], requires_grad=True); (x.detach() * x).sum()\n")
    r = runner.invoke(app, ["batch", str(path), "--check"])
    assert r.exit_code == 1
    assert "check: ok" in r.stdout and "check: FAILED" in r.stdout


@pytest.mark.parametrize("check, message", [
    ("yes", "'check' must be true, false or an object of eps, atol, rtol, max_evaluations, got \"yes\""),
    ({"epsilon": 1}, "unknown field 'check.epsilon'; the fields are: eps, atol, rtol, max_evaluations"),
    ({"eps": 0}, "'check.eps' must be a number > 0, got 0"),
    ({"atol": -1}, "'check.atol' must be a number >= 0, got -1"),
    ({"max_evaluations": 1.5}, "'check.max_evaluations' must be an integer >= 1, got 1.5"),
])
def test_a_bad_check_field_fails_its_entry_alone(tmp_path, check, message):
    entries = [{"program": "(x * x).sum()", "inputs": {"x": "[1., 2.]"}, "check": check},
               {"program": "(x * 3).sum()", "inputs": {"x": "[1., 2.]"}}]
    code, docs, _ = batch_docs(tmp_path, entries)
    assert code == 1
    assert docs[0]["error"]["message"] == message and docs[0]["error"]["type"] == "InputError"
    assert docs[1]["grads"]["x"]["value"] == [3.0, 3.0]

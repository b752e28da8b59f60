"""``gradcli.frontends.batch.evaluate``: entries in, result dicts out, exactly the lines of
``gradcli batch --json`` for the same entries; a bad entry is a result with ``error``."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from gradcli.frontends.batch import evaluate
from gradcli.frontends.cli import app

ENTRIES = [
    {"program": "(x * x).sum()", "inputs": {"x": [1.0, 2.0]}, "id": "first"},
    {"program": "x * c", "inputs": {"x": "[1., 2.]"}, "consts": {"c": "arange(2)"}, "gradient": [1, 1],
     "repeat": 2, "seed": 0, "dtype": "float64"},
    {"program": "(w * randn(3)).sum()", "inputs": {"w": "randn(3)"}, "seed": 5},
    {"program": "undefined + 1"},
    {"program": "x.sum()", "inputs": {"x": "[1., 2.]"}, "check": True, "seed": 1},
]


def test_evaluate_equals_the_batch_command(tmp_path):
    path = tmp_path / "entries.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in ENTRIES))
    r = CliRunner().invoke(app, ["batch", str(path), "--json"])
    want = [json.loads(line) for line in r.stdout.splitlines()]
    got = list(evaluate(ENTRIES))
    assert json.loads(json.dumps(got)) == want
    assert got[3]["error"]["type"] == "NameError" and got[0]["id"] == "first"


def test_text_entries_bad_items_and_laziness():
    results = evaluate(iter(["x = tensor([3.], requires_grad=True); (x * 2).sum()", 7, {"program": 1}]))
    first = next(results)  # a generator: one entry at a time
    assert first["line"] == 1 and first["grads"]["x"]["value"] == [2.0]
    rest = list(results)
    assert [d["line"] for d in rest] == [2, 3]
    assert "a dict of JSON Lines fields or a str program, got int" in rest[0]["error"]["message"]
    assert rest[1]["error"]["message"] == "'program' must be a string, got a number"

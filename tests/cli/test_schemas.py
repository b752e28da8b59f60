"""The JSON Schemas of gradcli's JSON outputs: valid draft 2020-12 documents, printed by `gradcli schema`,
self-contained, and satisfied by real outputs (and not by broken ones)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from gradcli.frontends.cli import app
from gradcli.render.schemas import NAMES, schema

from helpers import ROOT
runner = CliRunner()


def printed_schema(name: str) -> dict:
    r = runner.invoke(app, ["schema", name])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def validator(name: str):
    doc = printed_schema(name)
    jsonschema.Draft202012Validator.check_schema(doc)
    # No registry and no retrieval: every $ref must resolve inside the printed document.
    return jsonschema.Draft202012Validator(doc, format_checker=jsonschema.FormatChecker())


def errors(v, doc) -> list[str]:
    return [e.message for e in v.iter_errors(doc)]


@pytest.mark.parametrize("name", NAMES)
def test_schema_command_prints_the_packaged_schema(name):
    doc = printed_schema(name)
    assert doc == schema(name)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"] == f"urn:gradcli:schema:{name}"


def test_unknown_schema_exits_2():
    r = runner.invoke(app, ["schema", "nope"])
    assert r.exit_code == 2
    assert "UsageError: no schema named 'nope'; the schemas are: grad, batch, ops" in r.stderr
    assert r.stdout == ""


GRAD_CASES = [
    ["2 * dot(x, x)", "-i", "x=arange(4.0)"],
    ["binary_cross_entropy_with_logits(matmul(x, w) + b, y)", "-c", "x=ones(5)", "-c", "y=zeros(3)",
     "-i", "w=randn(5, 3)", "-i", "b=randn(3)", "--seed", "0"],
    ["(inp + 1).pow(2)", "-i", "inp=eye(5)", "--gradient", "ones(5, 5)", "--repeat", "2"],
    ["log(x)", "-i", "x=[0., -1., 1.]", "--gradient", "[1., 1., 1.]"],            # NaN and infinities
    ["(x * c).sum() + m.sum()", "-i", "x=[1, 2]", "-c", "c=[1, 0]", "-c", "m=[True, False]",
     "--dtype", "float64"],                                                          # int64, bool, float64
    ["x.sum() + 0 * y.sum()", "-i", "x=[1.]", "-i", "y=[[1.], [2.]]"],
    ["(x * 1).sum() + z.sum()", "-i", "x=[1.]", "-i", "z=[2.]", "-c", "k=3"],
    ["x", "-i", "x=1."],                                                             # no grad_fn: empty graph
    ["x = tensor([1., 2.], requires_grad=True); y = x.detach() * 2; (x * y).sum()"],
    [f"@{ROOT / 'examples' / 'control_flow.gc'}", "-i", "a=100."],
    ["(x.exp() * y).sum()", "-i", "x=[0.1, 2., -1.]", "-i", "y=3.0", "--check"],     # the "check" member
    ["x.relu().sum()", "-i", "x=[0., 1.]", "--check"],                               # a kink: check fails
]


@pytest.mark.parametrize("args", GRAD_CASES, ids=lambda a: a[0][:30])
def test_grad_json_outputs_are_valid(args):
    r = runner.invoke(app, ["grad", *args, "--json"])
    assert r.exit_code == (1 if "relu" in args[0] else 0), r.output
    assert errors(validator("grad"), json.loads(r.stdout)) == []


def test_grad_schema_rejects_broken_documents():
    v = validator("grad")
    doc = json.loads(runner.invoke(app, ["grad", "2 * dot(x, x)", "-i", "x=arange(4.0)", "--json"]).stdout)
    assert errors(v, doc) == []
    broken = [
        dict(doc, extra=1),
        dict(doc, output=dict(doc["output"], dtype="float")),
        dict(doc, output=dict(doc["output"], value="nan")),
        dict(doc, output=dict(doc["output"], shape=[-1])),
        dict(doc, inputs={"x": dict(doc["inputs"]["x"], kind="variable")}),
        dict(doc, calls=[]),
        dict(doc, graph={"nodes": [{"id": "n0"}], "edges": []}),
    ]
    for b in broken:
        assert errors(v, b), b


def test_grad_fields_choose_the_members_and_stay_valid():
    """``--fields``: the document holds exactly the chosen members, in the schema's order; by default
    all five."""
    v = validator("grad")
    args = ["grad", "(x * x).sum()", "-i", "x=[1., 2.]", "--json"]
    assert list(json.loads(runner.invoke(app, args).stdout)) == ["output", "inputs", "grads", "calls", "graph"]
    for fields, members in (("grads", ["grads"]), ("graph,output", ["output", "graph"]),
                            ("output, inputs,grads", ["output", "inputs", "grads"])):
        r = runner.invoke(app, [*args, "--fields", fields])
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        assert list(doc) == members and errors(v, doc) == []
    for bad, message in ((["--fields", "gradients"], "--fields takes names from output, inputs, grads, calls, "
                                                      "graph, symbolic, got 'gradients'"),
                         (["--fields", ""], "--fields takes names from")):
        r = runner.invoke(app, [*args, *bad])
        assert r.exit_code == 2 and message in r.stderr
    r = runner.invoke(app, ["grad", "x * 2", "-i", "x=[1.]", "--fields", "grads"])
    assert r.exit_code == 2 and "use it with --format json" in r.stderr


def test_batch_json_lines_are_valid(tmp_path):
    v = validator("batch")
    text = tmp_path / "exprs.txt"
    text.write_text("x = tensor([1., 2.], requires_grad=True); (x * x).sum()\n"
                    "def f(x):\n    return x.exp().sum()\nf(tensor([0.], requires_grad=True))\n---\n"
                    "1 +\nundefined\n---\n", encoding="utf-8")
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes("\n".join([
        json.dumps({"program": "2 * dot(x, x)", "inputs": {"x": [0, 1, 2, 3]}, "id": "dot"}),
        json.dumps({"program": "x * c", "inputs": {"x": "arange(3.0)"}, "consts": {"c": [1, 0, 2]},
                    "gradient": [1, 1, 1], "repeat": 2, "id": [1, {"a": None}]}),
        json.dumps({"program": "x", "inputs": {"x": "[1, 2"}, "id": None}),
        json.dumps({"program": "x", "bogus": 1, "id": "∂"}, ensure_ascii=False),
        "not json",
        "[]",
    ]).encode("utf-8") + b"\n\xff\n")
    lines = []
    for path in (text, cases, ROOT / "examples" / "exprs.txt", ROOT / "examples" / "cases.jsonl"):
        r = runner.invoke(app, ["batch", str(path), "--json"])
        assert r.exit_code == 1, r.output
        lines += [json.loads(line) for line in r.stdout.splitlines()]
    assert len(lines) == 5 + 7 + 4 + 5  # "1 +", "undefined" and the stray "---" are 3 failed entries
    assert {"error" in d for d in lines} == {True, False}
    for doc in lines:
        assert errors(v, doc) == [], doc
    # Broken lines are rejected: no line, both a result and an error, an error without its fields.
    ok = next(d for d in lines if "error" not in d)
    bad = next(d for d in lines if "error" in d)
    for b in ({k: val for k, val in ok.items() if k != "line"}, dict(ok, error=bad["error"]), dict(ok, line=0),
              dict(bad, error={"type": "X", "message": "m"}), dict(bad, output=ok["output"])):
        assert errors(v, b), b


def test_ops_json_is_valid():
    v = validator("ops")
    r = runner.invoke(app, ["ops", "--json"])
    assert r.exit_code == 0, r.output
    listing = json.loads(r.stdout)
    assert len(listing) > 50 and {d["kind"] for d in listing} == {"op", "creation", "function"}
    assert errors(v, listing) == []
    for kind in ("op", "creation", "function"):
        assert errors(v, json.loads(runner.invoke(app, ["ops", "--kind", kind, "--json"]).stdout)) == []
    assert errors(v, [dict(listing[0], kind="macro")])
    assert errors(v, [{k: val for k, val in listing[0].items() if k != "signature"}])
    assert errors(v, [dict(listing[0], method="yes")])
    assert errors(v, {"name": "mul"})

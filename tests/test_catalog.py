"""``gradcli ops``: the catalogue of supported ops, read from the op table."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from gradcli.cli import app
from gradcli.ops import KINDS, REGISTRY

runner = CliRunner()


def ops_json(*args):
    r = runner.invoke(app, ["ops", *args, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_every_public_registry_name_is_listed_once_in_order():
    doc = ops_json()
    names = [e["name"] for e in doc]
    assert names == sorted(n for n in REGISTRY if not n.startswith("_"))
    for e in doc:
        assert e["kind"] == KINDS[e["name"]]
        assert e["signature"].startswith(e["name"] + "(")


def test_entries_describe_the_op():
    by_name = {e["name"]: e for e in ops_json()}
    assert by_name["add"]["signature"] == "add(input, other, alpha=1)"
    assert by_name["add"]["grad_fn"] == "AddBackward0" and by_name["add"]["method"] is True
    assert by_name["eq"]["grad_fn"] is None  # comparisons have no gradient
    assert by_name["sum"]["grad_fn"] == "varies"  # SumBackward0 or SumBackward1 by dim
    assert by_name["absolute"]["alias_of"] == "abs" and by_name["abs"]["alias_of"] is None
    assert by_name["zeros"]["kind"] == "creation" and by_name["zeros"]["grad_fn"] is None
    assert "Matches torch.abs" in by_name["abs"]["summary"]


def test_filters():
    assert [e["name"] for e in ops_json("sum")] == sorted(n for n in REGISTRY if "sum" in n and n[0] != "_")
    assert {e["kind"] for e in ops_json("--kind", "creation")} == {"creation"}
    r = runner.invoke(app, ["ops", "--kind", "nope"])
    assert r.exit_code == 2 and "--kind must be" in r.stderr


def test_table():
    r = runner.invoke(app, ["ops", "exp"])
    assert r.exit_code == 0, r.output
    assert "ExpBackward0" in r.stdout and "exp(input)" in r.stdout

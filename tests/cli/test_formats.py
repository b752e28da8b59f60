"""Output formats are renderers in a registry: a format registered here (a throwaway CSV-ish one) is used by
``gradcli grad --format`` and ``gradcli batch --format`` with no other change; ``--json`` is ``--format json``;
unknown formats are usage errors that list the choices. The shared options are declared once."""

from __future__ import annotations

import re

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from gradcli import render
from gradcli.frontends.cli import app
from gradcli.render.registry import EntryFormat, Renderer

from helpers import ROOT

runner = CliRunner()


def gc(*args, input=None):
    return runner.invoke(app, list(args), input=input)


class CsvEntries(EntryFormat):
    """One ``line,ok,output`` row per entry, under a header row."""

    def header(self) -> str:
        return "line,ok,output\n"

    def entry(self, item) -> str:
        if item.error is not None:
            return f"{item.line},false,{item.error.type}\n"
        return f"{item.line},true,{item.result.output.value.item():g}\n"


class CsvRenderer(Renderer):
    """``name,grad`` rows of the gradients (flattened), for ``grad``; :class:`CsvEntries` for ``batch``."""

    name = "csv-test"

    def grad(self, result, stream) -> None:
        stream.write("name,grad\n")
        for name, g in result.grads().items():
            stream.write(f"{name},{' '.join(f'{v:g}' for v in g.reshape(-1))}\n")

    def batch(self, stream) -> CsvEntries:
        return CsvEntries()


@pytest.fixture
def csv_format():
    render.register(CsvRenderer())
    yield CsvRenderer.name
    render.unregister(CsvRenderer.name)


def test_a_registered_format_is_used_by_grad(csv_format):
    r = gc("grad", "2 * dot(x, x)", "-i", "x=arange(4.0)", "--format", csv_format)
    assert r.exit_code == 0, r.output
    assert r.stdout == "name,grad\nx,0 4 8 12\n"


def test_a_registered_format_is_used_by_batch(csv_format):
    entries = ("x = tensor([1., 2.], requires_grad=True); (x * x).sum()\n2 * dot(x, x)\n"
               "x = tensor([3.], requires_grad=True); x.sum()\n")
    r = gc("batch", "-", "--format", csv_format, input=entries)
    assert r.exit_code == 1, r.output  # the second entry fails
    assert r.stdout == "line,ok,output\n1,true,5\n2,false,NameError\n3,true,3\n"
    assert r.stderr.startswith("gradcli batch: 3 entries, 1 failed (line 2)")


def test_what_a_format_cannot_show_is_a_usage_error(csv_format):
    # --format's choices are the formats that can show the command's result: a registered one counts when it can
    r = gc("ops", "--format", csv_format)
    assert r.exit_code == 2 and r.stdout == ""
    assert "Invalid value for '--format': 'csv-test' is not one of 'table', 'json'." in r.stderr
    # a format chosen for another output (-q with --explain) names only the formats that can show it
    r = gc("grad", "x * 2", "-i", "x=1.", "--explain", "-q")
    assert r.exit_code == 2 and r.stdout == ""
    assert ("UsageError: the compact format cannot show the chain rule explained; the formats that can are: table, "
            "json") in r.stderr
    r = gc("grad", "x * 2", "-i", "x=1.", "--explain", "--format", csv_format)
    assert "the csv-test format cannot show the chain rule explained; the formats that can are: table, json" in r.stderr


def test_declared_formats_show_what_their_renderers_implement():
    # --help reads each command's --format choices from the declarations (gradcli/render/__init__.py), before
    # any renderer is imported: they must say what the renderers do
    code = ("import json; from gradcli import render; "
            "print(json.dumps({n: [k for k in render.KINDS if render.shows(n, k)] for n in render.names()}), "
            "[n for n in render.names() if render.loaded(n)])")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    text, loaded = p.stdout.rsplit(" ", 1)
    assert loaded.strip() == "[]", p.stderr  # the declarations were read, not the renderers
    declared = json.loads(text)
    for name in render.names():
        r = render.get(name)
        assert set(declared[name]) == {kind for kind in render.KINDS
                                       if getattr(type(r), kind) is not getattr(render.Renderer, kind)}, name


def test_program_output_goes_to_stderr_unless_the_format_shares_stdout(csv_format):
    r = gc("grad", "print('hello'); x * 2", "-i", "x=1.", "--format", csv_format)
    assert r.stdout == "name,grad\nx,2\n" and r.stderr == "hello\n"
    r = gc("grad", "print('hello'); x * 2", "-i", "x=1.")  # tables share standard output
    assert r.stdout.startswith("hello\n")


@pytest.mark.parametrize("args", [["grad", "x", "-i", "x=1."], ["ops"], ["batch", "-"]])
def test_unknown_format_is_a_usage_error_listing_the_choices(args):
    r = gc(*args, "--format", "nope", input="")
    assert r.exit_code == 2 and r.stdout == ""
    assert "Invalid value for '--format': 'nope' is not one of 'table', 'json'" in r.stderr
    assert "Traceback" not in r.stderr


def test_json_is_the_json_format():
    assert gc("grad", "x * x", "-i", "x=3.", "--json").stdout == gc("grad", "x * x", "-i", "x=3.",
                                                                     "--format", "json").stdout
    assert json.loads(gc("ops", "relu", "--format", "json").stdout) == json.loads(gc("ops", "relu", "--json").stdout)
    r = gc("grad", "x", "-i", "x=1.", "--json", "--format", "table")
    assert r.exit_code == 2 and "UsageError: --json means --format json" in r.stderr


def test_batch_input_format_option_and_its_former_spelling():
    line = '{"program": "(x * 2).sum()", "inputs": {"x": [1.0]}}\n'
    for args in (["--input-format", "jsonl"], ["--format", "jsonl"]):
        r = gc("batch", "-", "--format", "json", *args, input=line) if args[0] == "--input-format" else \
            gc("batch", "-", "--json", *args, input=line)
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["grads"]["x"]["value"] == [2.0]
    r = gc("batch", "-", "--input-format", "text", input=line)
    assert r.exit_code == 1  # a JSON object is not a program
    r = gc("batch", "-", "--format", "jsonl", "--input-format", "text", input=line)
    assert r.exit_code == 2 and "UsageError: --format jsonl is --input-format jsonl" in r.stderr


@pytest.mark.parametrize("command", ["grad", "run", "batch"])
def test_shared_options_are_declared_once(command):
    from gradcli.frontends import cli_options

    r = gc(command, "--help")
    assert r.exit_code == 0
    assert "--dtype [float32|float64]" in r.stdout  # a choice: --help lists it
    assert " ".join(cli_options.Seed.__metadata__[0].help.split()[:3]) in " ".join(r.stdout.split())
    for option in ("--seed", "--max-steps", "--limit", "--anomaly", "--debug"):
        assert option in r.stdout
    # run has no --format (its output is the program's own printing); its --graph help may mention it
    assert bool(re.search(r"^\s*--format\b", r.stdout, re.M)) == (command != "run")


@pytest.mark.parametrize("command, args", [("grad", ["x", "-i", "x=1."]), ("batch", ["-"])])
def test_bad_dtype_is_one_usage_error(command, args):
    r = gc(command, *args, "--dtype", "int64", input="")
    assert r.exit_code == 2 and r.stdout == ""
    assert "UsageError: --dtype must be float32 or float64, got 'int64'" in r.stderr


def test_a_registered_format_works_in_worker_processes(csv_format):
    entries = "".join(f"x = tensor([{k}.], requires_grad=True); (x * x).sum()\n" for k in range(40))
    r = gc("batch", "-", "--format", csv_format, "--jobs", "2", input=entries)
    assert r.exit_code == 0, r.output
    assert r.stdout == "line,ok,output\n" + "".join(f"{k + 1},true,{k * k:g}\n" for k in range(40))

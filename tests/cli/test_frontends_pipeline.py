"""Every front end computes through the one application pipeline (:func:`gradcli.app.jobs.run`), and none reaches
into the engine's internals.

* Each CLI command that computes, each kind of ``gradcli batch`` entry, each session command that computes,
  ``gradcli plot`` and ``gradcli run --graph`` is run as a user runs it (typer's runner, the session on piped
  input) with :func:`gradcli.app.jobs.run` and the differentiation modes (:data:`gradcli.app.calculator.MODES`)
  wrapped to count their calls; the answers are still right.
* A scan of ``gradcli/frontends/``: no private attribute of the engine (``t._grad``), no backward-call counter,
  no import of the backward engine, no regular expression over an error's message.
"""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gradcli
from gradcli.app import calculator, jobs
from gradcli.frontends.cli import app
from gradcli.frontends.session import start

PACKAGE = Path(gradcli.__file__).parent
runner = CliRunner()


@pytest.fixture
def seen(monkeypatch, tmp_path):
    """The job classes :func:`jobs.run` received and the modes :func:`calculator.differentiate` used, in
    order, with the real pipeline doing the work. Each call is appended to a file, so that the calls made in
    batch's forked worker processes are seen too."""
    log = tmp_path / "seen.txt"

    def note(kind: str, value: str) -> None:
        with open(log, "a") as f:
            f.write(f"{kind} {value}\n")

    class Record:
        def __getitem__(self, kind: str) -> list:
            lines = log.read_text().splitlines() if log.exists() else []
            return [line.split(" ", 1)[1] for line in lines if line.startswith(kind + " ")]

    real_run = jobs.run

    def run(job, context=None):
        note("jobs", type(job).__name__)
        return real_run(job, context)

    monkeypatch.setattr(jobs, "run", run)
    for mode, how in list(calculator.MODES.items()):
        def counted(outcome, mode_, *args, _how=how, **kw):
            note("modes", mode_)
            return _how(outcome, mode_, *args, **kw)
        monkeypatch.setitem(calculator.MODES, mode, counted)
    return Record()


def gc(*args, input=None):
    return runner.invoke(app, list(args), input=input)


@pytest.mark.parametrize("args, job, modes, answer", [
    (["grad", "(x * x).sum()", "-i", "x=[1., 2.]", "-q"], "GradJob", ["grad"], "x: tensor([2., 4.])"),
    (["grad", "(x * x).sum()", "-i", "x=[1., 2.]", "--repeat", "2", "-q"], "GradJob", ["repeat"],
     "x (call 2): tensor([4., 8.])"),
    (["grad", "(x * x).sum()", "-i", "x=[1., 2.]", "--check", "-q"], "GradJob", ["grad", "check"], "check: ok"),
    (["jacobian", "x * x", "-i", "x=[1., 2.]", "-q"], "TransformJob", ["jacobian"], "[[2., 0.], [0., 4.]]"),
    (["hessian", "(x ** 3).sum()", "-i", "x=[1., 2.]", "-q"], "TransformJob", ["hessian"], "[[ 6.,  0.], [ 0., 12.]]"),
    (["jvp", "x * x", "-i", "x=[1., 2.]", "-t", "x=[1., 1.]", "--check", "-q"], "TransformJob", ["jvp", "check"],
     "jvp: tensor([2., 4.])"),
    (["hvp", "(x ** 3).sum()", "-i", "x=[1., 2.]", "-v", "x=[1., 0.]", "-q"], "TransformJob", ["hvp"],
     "hvp x: tensor([6., 0.])"),
])
def test_each_cli_command_runs_one_job(seen, args, job, modes, answer):
    r = gc(*args)
    assert r.exit_code == 0, r.output
    assert answer in r.stdout
    assert seen["jobs"] == [job] and seen["modes"] == modes


def test_plot_runs_a_plot_job(seen):
    r = gc("plot", "x * x", "--over", "x=-1:1:3", "--format", "csv")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1:] == ["-1.0,1.0,-2.0,0", "0.0,0.0,0.0,0", "1.0,1.0,2.0,0"]
    assert seen["jobs"] == ["PlotJob"]


@pytest.mark.parametrize("graph", [[], ["--graph", "mermaid"]])
def test_run_and_run_graph_run_a_run_job(seen, tmp_path, graph):
    path = tmp_path / "train.py"
    path.write_text("x = tensor([1., 2.], requires_grad=True)\ny = (x * x).sum()\ny.backward()\nprint(x.grad)\n")
    r = gc("run", str(path), *graph)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("tensor([2., 4.])\n")
    assert ("flowchart TB" in r.stdout) == bool(graph)
    assert seen["jobs"] == ["RunJob"]


def test_each_batch_entry_runs_one_job(seen):
    entries = [{"program": "(x * x).sum()", "inputs": {"x": "[1., 2.]"}},
               {"program": "(x * x).sum()", "inputs": {"x": "[1., 2.]"}, "check": True},
               {"program": "x * x", "inputs": {"x": "[1., 2.]"}, "transform": "jacobian"},
               {"program": "(x ** 3).sum()", "inputs": {"x": "[1., 2.]"}, "transform": "hessian"},
               {"program": "x * x", "inputs": {"x": "[1., 2.]"}, "transform": "jvp", "tangent": {"x": "[1., 1.]"}},
               {"program": "(x ** 3).sum()", "inputs": {"x": "[1., 2.]"}, "transform": "hvp",
                "vector": {"x": "[1., 0.]"}}]
    r = gc("batch", "-", "--json", input="".join(json.dumps(e) + "\n" for e in entries))
    assert r.exit_code == 0, r.output
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert [sorted(k for k in ("grads", "check", "jacobian", "hessian", "jvp", "hvp") if k in line)
            for line in lines] == [["grads"], ["check", "grads"], ["jacobian"], ["hessian"], ["jvp"], ["hvp"]]
    assert sorted(seen["jobs"]) == ["GradJob"] * 2 + ["TransformJob"] * 4
    assert sorted(seen["modes"]) == sorted(["grad", "grad", "check", "jacobian", "hessian", "jvp", "hvp"])


def test_each_session_command_runs_one_job(seen):
    out, err = io.StringIO(), io.StringIO()
    code = start(stdin=io.StringIO("x = tensor([1., 2.], requires_grad=True)\n:grad (x * x).sum()\n"
                                   ":graph x * x\n:jacobian x * x\n:hessian (x ** 3).sum()\n:inputs\n"),
                 stdout=out, stderr=err, format="compact")
    assert code == 0, err.getvalue()
    assert "x: tensor([2., 4.])" in out.getvalue() and "MulBackward0" in out.getvalue()
    assert seen["jobs"] == ["SessionJob"] * 4
    assert seen["modes"] == ["jacobian", "hessian"]  # :grad is one backward call of the session's own


# ------------------------------------------------------------------------------------------------ the scan
def engine_private_names() -> set:
    """The private names the engine defines: attributes it sets on ``self``, class members, ``__slots__``
    entries and module-level names starting with one underscore."""
    names = set()
    for path in (PACKAGE / "engine").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found = []
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                found.append(node.attr)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                found.append(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                found.append(node.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append(node.value)  # __slots__ entries (and other strings: harmless here)
            names.update(n for n in found if n.startswith("_") and not n.startswith("__") and n.isidentifier())
    return names


def internals_used(source: str, private: set) -> list:
    """What ``source`` (a front end's text) takes from the engine's internals, as ``line: what``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute):
            receiver = node.value.id if isinstance(node.value, ast.Name) else None
            if node.attr in private and receiver not in ("self", "cls"):
                out.append(f"{line}: .{node.attr}")
            if node.attr == "backward_calls":
                out.append(f"{line}: .backward_calls")
        elif isinstance(node, ast.Name) and node.id == "backward_calls":
            out.append(f"{line}: backward_calls")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            module = getattr(node, "module", None) or ""
            targets = [module + "." + a.name if module else a.name for a in node.names]
            if any(t.endswith("engine.autograd") or t.endswith("engine.autograd.backward_calls") for t in targets) \
                    or module.endswith("engine.autograd"):
                out.append(f"{line}: import of the backward engine")
            if any(a.name == "backward_calls" for a in node.names):
                out.append(f"{line}: backward_calls")
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "lazy" and node.args and \
                    isinstance(node.args[0], ast.Constant) and node.args[0].value == "gradcli.engine.autograd":
                out.append(f"{line}: import of the backward engine")
            if isinstance(func, ast.Attribute) and func.attr in ("match", "fullmatch", "search", "findall",
                                                                 "finditer", "sub", "subn", "split"):
                for arg in ast.walk(ast.Tuple(elts=list(node.args), ctx=ast.Load())):
                    if isinstance(arg, ast.Attribute) and arg.attr in ("message", "args") or \
                            isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "str" \
                            and arg.args and isinstance(arg.args[0], ast.Name):
                        out.append(f"{line}: a regular expression over an error's message")
                        break
    return out


def test_the_scan_finds_what_it_looks_for():
    private = engine_private_names()
    assert "_grad" in private
    source = ("from gradcli.engine import autograd\nfrom gradcli.engine.autograd import backward_calls\n"
              "import re\nn = autograd.backward_calls\ng = t._grad\nm = re.search('x', err.message)\n"
              "k = PATTERN.match(str(exc))\nself._grad = 1\n")
    found = internals_used(source, private)
    assert {f.split(": ", 1)[1] for f in found} == {"import of the backward engine", ".backward_calls",
                                                     "backward_calls", "._grad",
                                                     "a regular expression over an error's message"}
    assert not any(f.startswith("8:") for f in found)  # a front end's own private attributes are its own


def test_front_ends_do_not_reach_into_the_engine():
    private = engine_private_names()
    found = {}
    for path in sorted((PACKAGE / "frontends").rglob("*.py")):
        used = internals_used(path.read_text(encoding="utf-8"), private)
        if used:
            found[str(path.relative_to(PACKAGE))] = used
    assert found == {}


def test_the_pipeline_refuses_what_is_not_a_job_or_a_mode():
    with pytest.raises(TypeError, match="not a job: str"):
        jobs.run("(x * x).sum()")
    with pytest.raises(ValueError, match="unknown mode of differentiation 'no such mode'"):
        calculator.differentiate(None, "no such mode")

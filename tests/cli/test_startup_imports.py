"""Start-up imports only what the command uses (benchmarks/README.md has the figures).

Each check runs the real entry point (:func:`gradcli.frontends.cli.main`, what the console script and ``python -m gradcli``
call) in a fresh interpreter and lists which of the modules the command must not need were imported. Adding
an eager import (``from . import limits`` at the top of gradcli/frontends/cli.py, ``from . import table`` in
gradcli/render/__init__.py, a console with emoji codes) makes one of these fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gradcli import render

pytestmark = pytest.mark.perf  # start-up imports and the collector over start-up: performance guards

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The entry point as the console script calls it, its exit code in ``code`` (a script's middle part).
_MAIN = """\
sys.argv = ["gradcli"] + sys.argv[1:]
from gradcli.frontends.cli import main
try:
    main()
except SystemExit as e:
    code = e.code
else:
    code = 0
"""

_RUN = "import os, sys\n" + _MAIN + """\
loaded = sorted(m for m in {watched!r} if m in sys.modules)
import gc, json  # (after the list: the check watches the json module too)
sys.stderr.write("\\n" + json.dumps({{"code": code, "loaded": loaded, "gc": [gc.isenabled(), gc.get_freeze_count()],
                                     "blas_timeout": os.environ.get("OPENBLAS_THREAD_TIMEOUT")}}) + "\\n")
"""


def _imports(args, watched, no_color=True, gc_state=None, environ=None, report=None):
    """Run ``gradcli ARGS`` through main() in a fresh interpreter (environment ``environ``, default this
    process's; its PYTHONPATH, if any, ahead of the repository): (its standard output, its exit code, which of
    the ``watched`` modules it imported); ``gc_state``, a list, receives [collector enabled, frozen objects] at
    the end; ``report``, a dict, the whole report (``blas_timeout``: OPENBLAS_THREAD_TIMEOUT at the end)."""
    env = dict(os.environ if environ is None else environ, NO_COLOR="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (environ or {}).get("PYTHONPATH", "").split(os.pathsep) + [ROOT]
                                        if p)
    if not no_color:
        del env["NO_COLOR"]
    p = subprocess.run([sys.executable, "-c", _RUN.format(watched=sorted(watched)), *args], capture_output=True,
                       text=True, env=env, timeout=600)
    found = json.loads(p.stderr.strip().splitlines()[-1])
    if gc_state is not None:
        gc_state[:] = found["gc"]
    if report is not None:
        report.update(found)
    return p.stdout, found["code"], found["loaded"]


# What computing needs and --help does not: numpy (half of the floor `python -c "import numpy, typer, rich, lark"`),
# the limits, the result types, every renderer, rich's console, the language and the op table.
_COMPUTING = {"numpy", "gradcli.engine.limits", "gradcli.app.result", "gradcli.render.table", "gradcli.render.json",
              "gradcli.render.compact", "gradcli.render.pictures", "gradcli.render.messages", "rich.console",
              "rich.table", "lark", "gradcli.language", "gradcli.ops", "gradcli.app.calculator", "json",
              "orjson"}


def test_importing_the_cli_imports_nothing_a_command_needs():
    code = f"import sys, gradcli.frontends.cli\nprint(sorted(m for m in {sorted(_COMPUTING)!r} if m in sys.modules))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert p.stdout.strip() == "[]", p.stderr


def test_help_imports_neither_numpy_nor_a_renderer():
    out, code, loaded = _imports(["--help"], _COMPUTING)
    assert code == 0 and "Usage: gradcli" in out and "--version" in out
    assert loaded == []
    out, code, loaded = _imports(["--version"], _COMPUTING)
    assert code == 0 and out.startswith("gradcli ")
    assert loaded == []


def test_help_lists_every_format_without_importing_it():
    out, code, loaded = _imports(["grad", "--help"], {"gradcli.render.table", "gradcli.render.json",
                                                      "gradcli.render.compact", "gradcli.render.pictures",
                                                      "gradcli.app.result", "rich.console"})
    assert code == 0 and loaded == []
    flat = " ".join(out.split())
    assert "[table|json|compact|dot|svg|png|pdf|mermaid|tree]" in flat.replace(" ", "")
    assert "[json|dot|svg|png|pdf|mermaid|tree]" in flat.replace(" ", "")  # --graph: the formats that draw it


def test_json_output_never_imports_rich_or_the_tables():
    out, code, loaded = _imports(["grad", "2 * dot(x, x)", "-i", "x=arange(4.0)", "--json"],
                                 {"rich.console", "rich.table", "rich.text", "gradcli.render.table",
                                  "gradcli.render.compact", "gradcli.render.pictures", "gradcli.render.json",
                                  "orjson"})  # (orjson: large arrays only)
    assert code == 0 and json.loads(out)["grads"]["x"]["value"] == [0.0, 4.0, 8.0, 12.0]
    assert loaded == ["gradcli.render.json"]


def test_tables_import_neither_the_json_renderer_nor_emoji_codes():
    for no_color in (True, False):
        out, code, loaded = _imports(["grad", "2 * dot(x, x)", "-i", "x=arange(4.0)"],
                                     {"gradcli.render.json", "gradcli.render.compact", "gradcli.render.pictures",
                                      "rich._emoji_codes", "gradcli.render.table", "orjson"}, no_color=no_color)
        assert code == 0 and "MulBackward0" in out and "tensor([ 0.,  4.,  8., 12.])" in out
        assert loaded == ["gradcli.render.table"]


def test_every_declared_format_is_what_its_module_registers():
    # The lazy registry's declarations (gradcli/render/__init__.py) must say what the renderers do: the name,
    # and whether it draws the graph (--graph's choices are read from the declarations, before any import).
    declared = {n: render.draws_graph(n) for n in render.names()}
    assert list(declared)[:3] == ["table", "json", "compact"]
    for name, draws in declared.items():
        r = render.get(name)
        assert render.loaded(name) and r.name == name
        assert draws == (type(r).graph is not render.Renderer.graph), name
    assert render.names() == tuple(declared)  # loading kept the order


def test_a_declared_format_whose_module_does_not_register_it_is_an_error():
    calls = []
    render.declare("nowhere", lambda: calls.append(1))
    try:
        assert "nowhere" in render.names() and not render.loaded("nowhere") and calls == []
        try:
            render.get("nowhere")
        except RuntimeError as e:
            assert calls == [1] and "'nowhere' was declared but its module did not register it" in str(e)
        else:
            raise AssertionError("get() of a format nobody registers returned")
    finally:
        render.unregister("nowhere")


def test_the_collector_pauses_over_start_up_only():
    # main() pauses the cyclic garbage collector while gradcli starts (modules, classes and the click command
    # live until exit), then freezes what start-up made and turns collection on again before the command's own
    # work (gradcli.frontends.cli.started), so the program's reference cycles are collected as usual.
    state = []
    out, code, _ = _imports(["grad", "2 * dot(x, x)", "-i", "x=arange(4.0)", "--json"], (), gc_state=state)
    assert code == 0 and json.loads(out)["output"]["value"] == 28.0
    enabled, frozen = state
    assert enabled and frozen > 10_000


def test_the_collector_is_left_alone_outside_main():
    # Run as a library (typer's test runner here), the app never touches the caller's collector.
    import gc

    from typer.testing import CliRunner

    from gradcli.frontends.cli import app

    before = (gc.isenabled(), gc.get_freeze_count())
    r = CliRunner().invoke(app, ["grad", "2 * dot(x, x)", "-i", "x=arange(4.0)", "--json"])
    assert r.exit_code == 0, r.output
    assert (gc.isenabled(), gc.get_freeze_count()) == before


def test_one_commands_resolved_annotations_build_the_same_options():
    # _app_for() evaluates the chosen command's annotations once (typer would compile them four times): the
    # click options built from them must be the ones built from the annotations' text.
    code = """\
import typer.main
from gradcli.frontends import cli
def options(app, name):
    cmd = typer.main.get_command(app).commands[name]
    return [(p.name, tuple(p.opts), p.type.name, repr(p.default), getattr(p, "help", None), p.required)
            for p in cmd.params]
before = {n: options(cli.app, n) for n in ("grad", "run", "batch", "plot")}
for n in before:
    slim = cli._app_for([n])
    assert not any(isinstance(a, str) for a in slim.registered_commands[0].callback.__annotations__.values())
    assert options(slim, n) == before[n], n
print("ok", sum(len(v) for v in before.values()))
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert p.stdout.startswith("ok "), p.stderr
    assert int(p.stdout.split()[1]) > 60


_COUNT_LARKS = """\
import sys
import lark
made = []
_init = lark.Lark.__init__
def _counting(self, *args, **kwargs):
    made.append(1)
    return _init(self, *args, **kwargs)
lark.Lark.__init__ = _counting
""" + _MAIN + """\
from gradcli.language import grammar
import json
sys.stderr.write("\\n" + json.dumps({"code": code, "larks": len(made), "parser": grammar.parser.cache_info().currsize,
                                     "lark": lark.__version__}) + "\\n")
"""


def _larks(args, environ=None, report=None):
    """Run ``gradcli ARGS`` through main() (environment ``environ``, as :func:`_imports` takes it): (its standard
    error, its exit code, how many ``lark.Lark`` parsers it built, whether grammar.parser() was called);
    ``report``, a dict, the whole report (``lark``: the version of the Lark it imported)."""
    env = dict(os.environ if environ is None else environ, NO_COLOR="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (environ or {}).get("PYTHONPATH", "").split(os.pathsep) + [ROOT]
                                        if p)
    p = subprocess.run([sys.executable, "-c", _COUNT_LARKS, *args], capture_output=True, text=True, env=env,
                       timeout=600)
    found = json.loads(p.stderr.strip().splitlines()[-1])
    if report is not None:
        report.update(found)
    return p.stderr, found["code"], found["larks"], found["parser"]


def test_a_successful_grad_builds_no_lark_parser():
    # The expression and the input spec are parsed by the driver on the generated tables
    # (grammars/gradcli.tables.json): no lark.Lark is built, nor its pickled cache read.
    for extra in ([], ["--json"]):
        _, code, larks, parser = _larks(["grad", "2 * dot(x, x)", "-i", "x=arange(4.0)", *extra])
        assert (code, larks, parser) == (0, 0, 0)


def test_a_syntax_error_still_gets_larks_message():
    err, code, larks, parser = _larks(["grad", "2 * * dot(x, x)", "-i", "x=arange(4.0)"])
    assert code == 2 and larks == 1 and parser == 1
    assert "SyntaxError: invalid syntax: unexpected '*'" in err
    assert "expected one of: '(', '+', '-', '[', '{', '~', a name, a number, a string, end of line" in err
    err, code, larks, _ = _larks(["grad", "2 * dot(x, x) ?", "-i", "x=arange(4.0)"])
    assert code == 2 and larks == 1 and "SyntaxError: unexpected character '?'" in err and "              ^" in err


def test_a_text_that_parses_imports_no_lark_nor_hashlib():
    # The driver's own tokens, and tables whose fingerprint names no Lark version: importing Lark costs about
    # 20 ms of every start, hashlib about 5 (the tables' fingerprint holds the grammar's text, not its hash).
    for args in (["grad", "2 * dot(x, x)", "-i", "x=arange(4.0)"], ["grad", "(x * x).sum()", "-i", "x=[1., 2.]",
                                                                      "--json"]):
        out, code, loaded = _imports(args, {"lark", "hashlib"})
        assert code == 0 and loaded == [], (args, loaded)


def _another_lark(tmp_path, version="1.2.2"):
    """An environment whose PYTHONPATH puts, ahead of the installed Lark, a copy of it that says it is Lark
    ``version`` (its ``__version__`` rewritten): gradcli as a user with another Lark than the one that generated
    grammars/gradcli.tables.json runs it. Lark's parser cache goes to ``tmp_path`` (it is named by the version)."""
    import re
    import shutil

    import lark

    site = tmp_path / "site"
    shutil.copytree(os.path.dirname(lark.__file__), site / "lark", ignore=shutil.ignore_patterns("__pycache__"))
    init = site / "lark" / "__init__.py"
    text, n = re.subn(r"""^__version__\s*(?::\s*str\s*)?=\s*["'][^"']+["']""", f'__version__ = "{version}"',
                      init.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert n == 1 and lark.__version__ != version
    init.write_text(text, encoding="utf-8")
    return dict(os.environ, PYTHONPATH=str(site), XDG_CACHE_HOME=str(tmp_path / "cache"))


def test_another_lark_version_still_starts_without_lark(tmp_path):
    # The generated tables are the grammar's, whichever Lark is installed: with another Lark first on the path,
    # a text that parses still imports no Lark (no parser rebuilt: start-up 2.36x the floor instead of 1.41x with
    # Lark 1.2.2 when the fingerprint held Lark's version), and the answer is PyTorch's.
    torch = pytest.importorskip("torch")
    environ = _another_lark(tmp_path)
    x = torch.tensor([1.0], requires_grad=True)
    (expected,) = torch.autograd.grad((2 * x).sum(), x)
    out, code, loaded = _imports(["grad", "2*x", "-i", "x=[1.]"], {"lark", "hashlib"}, environ=environ)
    assert code == 0 and loaded == []
    assert f"│ x    │ {expected} │" in out  # the gradients table: tensor([2.])
    out, code, loaded = _imports(["grad", "2*x", "-i", "x=[1.]", "--json"], {"lark"}, environ=environ)
    assert code == 0 and loaded == [] and json.loads(out)["grads"]["x"]["value"] == expected.tolist()


def test_another_lark_version_reports_the_same_syntax_errors(tmp_path):
    # Where the text does not parse, the driver hands its tokens to Lark (or Lark reads the text): a Lark of
    # another version gives the same message, position and caret as the Lark that generated the tables.
    environ = _another_lark(tmp_path)
    program = tmp_path / "block.py"
    program.write_text("def g(t):\nreturn t\n", encoding="utf-8")
    for args in (["grad", "2 * * x", "-i", "x=[1.]"],  # an unexpected token: the driver's
                 ["grad", "2 * x ?", "-i", "x=[1.]"],  # no terminal matches: Lark's lexer reports it
                 ["grad", "x.sum(", "-i", "x=[1.]"],  # the end of the input
                 ["grad", "2 * x", "-i", "x=[1., 2"],  # in an input spec
                 ["run", str(program)]):  # a block with no indented body
        theirs, ours = {}, {}
        err, code, larks, _ = _larks(args, environ=environ, report=theirs)
        expected_err, expected_code, expected_larks, _ = _larks(args, report=ours)
        assert theirs["lark"] == "1.2.2" and ours["lark"] != "1.2.2"
        assert code == expected_code == 2 and larks == expected_larks, args
        assert err.rsplit("\n{", 1)[0] == expected_err.rsplit("\n{", 1)[0], args
        assert "^" in err and "Traceback" not in err, args


def test_a_command_shortens_openblas_spinning_unless_the_user_chose():
    # main() sets OPENBLAS_THREAD_TIMEOUT=24 before numpy (and its OpenBLAS) loads, so that OpenBLAS's idle
    # threads stop spinning soon after the last matrix product; a value in the environment is left as it is
    for given, expected in ((None, "24"), ("28", "28")):
        environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
        if given is not None:
            environ["OPENBLAS_THREAD_TIMEOUT"] = given
        report = {}
        out, code, _ = _imports(["grad", "(x @ x).sum()", "-i", "x=randn(3, 3)"], (), environ=environ, report=report)
        assert code == 0 and "SumBackward0" in out
        assert report["blas_timeout"] == expected


def test_a_grad_command_imports_neither_scipy_nor_sympy():
    """scipy.special (torch.special's values) and SymPy (--symbolic) load only when an op or option needs them:
    even finding scipy.special would import the scipy package."""
    out, code, loaded = _imports(["grad", "2 * dot(x, x)", "-i", "x=arange(4.0)"], {"scipy", "scipy.special", "sympy"})
    assert code == 0 and "MulBackward0" in out
    assert loaded == []
    out, code, loaded = _imports(["grad", "torch.special.ndtri(x).sum()", "-i", "x=[0.25, 0.5]"], {"scipy"})
    assert code == 0 and loaded == ["scipy"]

"""Mistakes users make, each done as a user does it."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

from typer.testing import CliRunner

from gradcli.frontends.cli import app

from helpers import ROOT

runner = CliRunner()


def in_a_terminal(*args, env=None) -> bytes:
    """Run ``python -m gradcli ARGS`` with its standard output on a pseudo-terminal; what it wrote."""
    main, secondary = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "gradcli", *args], stdout=secondary, stderr=subprocess.PIPE,
                         env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", **(env or {})})
    os.close(secondary)
    out = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait()
    os.close(main)
    return out


def test_no_color_means_no_escape_codes_on_a_terminal():
    for args in (["grad", "x * 2", "-i", "x=[1.]", "--gradient", "[1.]"], ["ops", "sum"]):
        assert b"\x1b[" in in_a_terminal(*args)  # bold headers when colours are on
        assert b"\x1b[" not in in_a_terminal(*args, env={"NO_COLOR": "1"})


def test_graph_ids_never_collide_with_input_names():
    r = runner.invoke(app, ["grad", "(n1 * n0).sin().sum()", "-i", "n1=[1.,2.]", "-i", "n0=[3.,4.]", "--json"])
    graph = json.loads(r.stdout)["graph"]
    ids = [n["id"] for n in graph["nodes"]]
    assert len(ids) == len(set(ids)) and {"n0", "n1"} <= set(ids)
    leaves = {n["id"] for n in graph["nodes"] if n["leaf"]}
    assert leaves == {"n0", "n1"}
    assert all(e["from"] in ids and e["to"] in ids and e["to"] not in leaves for e in graph["edges"])


def test_warnings_point_at_the_user_s_program_not_gradcli_s_source():
    r = runner.invoke(app, ["grad", "softmax(z)[0]", "-i", "z=[2.0, 1.0, 0.1]"])
    assert r.exit_code == 0
    assert r.stderr.startswith("<expr>:1: UserWarning: Implicit dimension choice for softmax has been deprecated")
    assert "  softmax(z)[0]" in r.stderr and "gradcli/" not in r.stderr and ".py" not in r.stderr


def test_caret_means_power_gets_a_hint():
    r = runner.invoke(app, ["grad", "sin(x)*x^2", "-i", "x=1.5"])
    assert r.exit_code == 1
    assert "\"bitwise_xor_cpu\" not implemented for 'Float'" in r.stderr
    assert "a power is '**' (x ** 2)" in r.stderr


def test_small_things():
    r = runner.invoke(app, ["ops", "sum"])
    assert "1 name (" in r.stdout or " names (" in r.stdout
    one = runner.invoke(app, ["ops", "logsumexp"])
    assert "1 name (gradcli ops --json" in one.stdout
    for program in ("", "  ", "# only a comment"):
        r = runner.invoke(app, ["grad", program])
        assert r.exit_code == 2 and "the program is empty" in r.stderr
    r = runner.invoke(app, ["schema"])
    assert r.exit_code == 0 and r.stdout.split() == ["grad", "batch", "ops", "explain", "plot", "jacobian", "hessian",
                                                    "jvp", "hvp"]


def test_an_input_from_standard_input():
    r = runner.invoke(app, ["grad", "(x * x).sum()", "-i", "x=@-", "--json"], input="[1., 2.]\n")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["inputs"]["x"]["value"] == [1.0, 2.0] and doc["grads"]["x"]["value"] == [2.0, 4.0]


def test_did_you_mean_for_names_methods_and_keywords():
    for program, hint in (("sinn(x)", "did you mean 'sin'?"), ("x.summ()", "did you mean 'sum'?"),
                          ("sigmod(x)", "did you mean 'sigmoid'?"), ("x.sum(dimm=0)", "did you mean 'dim'?"),
                          ("torch.sigmod(x)", "did you mean 'sigmoid'?")):
        r = runner.invoke(app, ["grad", program, "-i", "x=[1., 2.]"])
        assert r.exit_code == 1 and hint in r.stderr, (program, r.stderr)


def test_an_undefined_name_says_how_to_pass_it():
    r = runner.invoke(app, ["grad", "(y * 2).sum()"])
    assert r.exit_code == 1
    assert "NameError: name 'y' is not defined" in r.stderr and "pass it with -i y=SPEC" in r.stderr


def test_pytorch_s_submodules_are_not_denied():
    r = runner.invoke(app, ["grad", "torch.fft.fft(x)", "-i", "x=[1., 2.]"])
    assert r.exit_code == 1
    assert "gradcli does not support torch.fft yet" in r.stderr and "has no attribute" not in r.stderr


def test_torch_linalg_is_a_namespace_that_names_what_gradcli_lacks():
    # torch.linalg holds the table's linalg functions; a PyTorch one gradcli lacks says so
    r = runner.invoke(app, ["grad", "torch.linalg.norm(x)", "-i", "x=[3., 4.]", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["grads"]["x"]["value"] == [0.6, 0.8]
    r = runner.invoke(app, ["grad", "torch.linalg.eig(x)", "-i", "x=[[1., 2.], [3., 4.]]"])
    assert r.exit_code == 1
    assert "'torch.linalg.eig' is not supported by gradcli" in r.stderr, r.stderr
    r = runner.invoke(app, ["grad", "torch.linalg.nosuch(x)", "-i", "x=[1., 2.]"])
    assert r.exit_code == 1 and "module 'torch.linalg' has no attribute 'nosuch'" in r.stderr, r.stderr


def test_constants():
    r = runner.invoke(app, ["grad", "(x * pi + e + torch.pi - torch.e).sum() + (inf > 1) + 0 * torch.inf",
                            "-i", "x=[1., 2.]", "--json"])
    assert r.exit_code == 0, r.output
    import math
    assert json.loads(r.stdout)["grads"]["x"]["value"] == [float(math.pi)] * 2 or \
        abs(json.loads(r.stdout)["grads"]["x"]["value"][0] - math.pi) < 1e-6
    r = runner.invoke(app, ["grad", "x * nan", "-i", "x=1."])
    assert r.exit_code == 0 and "nan" in r.stdout


def test_a_positional_input_gets_a_hint():
    r = subprocess.run([sys.executable, "-m", "gradcli", "grad", "sin(x)*x**2", "x=1.5"], capture_output=True,
                       text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2
    assert 'x=1.5 is not an option: give an input with -i "x=1.5"' in r.stderr


def test_options_that_would_be_silently_ignored_are_refused():
    r = runner.invoke(app, ["grad", "(x*x).sum()", "-i", "x=[1.]", "--zero-grad"])
    assert r.exit_code == 2 and "--zero-grad needs --repeat N" in r.stderr
    r = runner.invoke(app, ["grad", "(x*x).sum()", "-i", "x=[1.]", "--eps", "1e-3"])
    assert r.exit_code == 2 and "--eps needs --check" in r.stderr
    assert runner.invoke(app, ["grad", "(x*x).sum()", "-i", "x=[1.]", "--eps", "1e-3", "--check"]).exit_code == 0
    assert "[op|creation|function]" in runner.invoke(app, ["ops", "--help"]).stdout
    assert "float32|float64" in runner.invoke(app, ["grad", "--help"]).stdout


def test_version_and_shell_completion():
    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.stdout.startswith("gradcli ")
    from importlib.metadata import version

    assert r.stdout.strip() == f"gradcli {version('gradcli')}"
    top = runner.invoke(app, ["--help"]).stdout
    assert "--install-completion" in top and "--show-completion" in top
    # as a user types it, in a process of its own (typer's completion keeps process-wide state)
    script = os.path.join(os.path.dirname(sys.executable), "gradcli")  # the console script pip installed
    # typer finds the user's shell from the process tree (shellingham), and then `--show-completion` is a flag;
    # a test's process tree may hold no shell (CI), so the shell is named, which typer's switch below allows
    env = {**os.environ, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    r = subprocess.run([script, "--show-completion", "bash"], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0 and "complete -o default -F _gradcli_completion gradcli" in r.stdout, r.stderr


def test_tensors_are_never_rewrapped_inside_a_cell_and_columns_is_honoured():
    """At 60 columns (COLUMNS, piped) a 3x8 input does not fit its cell: such tensors print below their table,
    whole, rather than re-wrapped mid-row inside the cell with the output's grad_fn cut (``grad_fn=<MseLossBa…``)."""
    r = subprocess.run([sys.executable, "-m", "gradcli", "grad", "mse_loss(x, y)", "-i", "x=randn(3, 8)", "-c",
                        "y=zeros(3, 8)", "--seed", "0"], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "60"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert all(len(line.rstrip()) <= 60 for line in lines if line.startswith(("┏", "│", "└")))  # the tables fit
    assert "tensor(1.0393, grad_fn=<MseLossBackward0>)" in lines  # whole, below the output table
    assert "tensor([[-1.1258, -1.1524, -0.2506, -0.4339,  0.8487,  0.6920, -0.3160, -2.1152]," in lines
    assert "…" not in r.stdout


def test_ops_keeps_names_whole_at_80_columns():
    r = subprocess.run([sys.executable, "-m", "gradcli", "ops", "softmax"], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"})
    assert r.returncode == 0
    assert "log_softmax(input, dim=None, _stacklevel=3, dtype=None)" in r.stdout
    assert "log_softmax (method) · op · LogSoftmaxBackward0" in r.stdout


def test_help_starts_without_the_engine():
    # ``gradcli --help`` and ``gradcli grad --help`` compute nothing, so they do not import the
    # op table, the language or numpy's engine modules (the package's names load on first use)
    code = ("import sys; sys.argv = ['gradcli'] + sys.argv[1:]\n"
            "from gradcli.frontends.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('gradcli.ops', 'gradcli.language', 'lark'))),"
            " file=sys.stderr)\n")
    for args in (["--help"], ["grad", "--help"]):
        p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600)
        assert "Usage: gradcli" in p.stdout
        assert p.stderr.strip() == "[]", p.stderr


def test_library_names_load_on_first_use():
    code = ("import sys, gradcli as G\n"
            "assert 'gradcli.ops' not in sys.modules\n"
            "import gradcli.engine.tensor  # the submodule does not replace the function G.tensor\n"
            "x = G.tensor([1., 2.], requires_grad=True); (x * x).sum().backward(); print(x.grad, G.float)\n"
            "from gradcli import relu, no_grad, Tensor; print(relu.__name__, 'sin' in dir(G))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert p.stdout == "tensor([2., 4.]) torch.float32\nrelu True\n", p.stderr

"""The prompt_toolkit front end through its pipe input (no terminal), and piped standard input."""

import subprocess
import sys

import pytest

pytest.importorskip("prompt_toolkit")

from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from gradcli.frontends.session.app import GrammarLexer, SessionCompleter, history_path, interact
from gradcli.frontends.session.core import Session


def run_keys(keys: str, monkeypatch) -> int:
    monkeypatch.setenv("NO_COLOR", "1")
    with create_pipe_input() as inp:
        inp.send_text(keys)
        return interact(input=inp, output=DummyOutput(), history=InMemoryHistory())


def test_lines_blocks_and_ctrl_d(monkeypatch, capsys):
    code = run_keys("x = tensor([1., 2.], requires_grad=True)\r"
                    "for i in range(2):\r"
                    "print(i * x)\r"  # the continuation line starts indented (the previous line ends with ':')
                    "\r"
                    ":grad (x * x).sum()\r"
                    "x +* 1\r"
                    "x.sum()\r"
                    "\x04", monkeypatch)
    out, err = capsys.readouterr()
    assert code == 0
    assert out.startswith("tensor([0., 0.], grad_fn=<MulBackward0>)\ntensor([1., 2.], grad_fn=<MulBackward0>)\n")
    assert "tensor([2., 4.])" in out  # :grad's gradients table
    assert out.endswith("tensor(3., grad_fn=<SumBackward0>)\n")  # the session went on after the error
    assert "<stdin>:1:4:\n    x +* 1\n       ^\nSyntaxError" in err


def test_ctrl_c_cancels_the_line_and_the_entry(monkeypatch, capsys):
    code = run_keys("this is not run\x03"  # Ctrl-C while typing: the line is dropped
                    "for i in range(3):\r\x03"  # Ctrl-C at the continuation prompt: the whole entry is dropped
                    "5\r\x04", monkeypatch)
    out, err = capsys.readouterr()
    assert (code, out, err) == (0, "5\n", "")


def test_quit_command(monkeypatch, capsys):
    assert run_keys(":quit\r1 + 1\r", monkeypatch) == 0
    assert capsys.readouterr().out == ""


def test_completion_of_commands_variables_ops_and_attributes():
    s = Session(write=lambda t: None, error=lambda t: None)
    s.execute("weights = tensor([1., 2.], requires_grad=True)")
    c = SessionCompleter(s)

    def complete(text):
        return [x.text for x in c.get_completions(Document(text), None)]

    assert complete(":gr") == [":grad", ":graph"]
    assert "weights" in complete("wei")
    assert "sigmoid" in complete("sigm")
    assert complete("weights.sigm") == ["sigmoid", "sigmoid_"]  # (torch.Tensor has both)
    assert "grad_fn" in complete("weights.grad")
    assert "functional" in complete("torch.nn.")
    assert complete("weights.__cl") == []  # only what the language lets a program read
    assert complete("nothing.") == []


def test_completion_of_file_names_after_save_and_load(tmp_path, monkeypatch):
    (tmp_path / "session_one.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    c = SessionCompleter(Session(write=lambda t: None, error=lambda t: None))
    assert [x.text for x in c.get_completions(Document(":load sess"), None)] == ["ion_one.py"]


def test_lexer_colours_from_the_grammar_terminals():
    lexer = GrammarLexer({"sin"})
    parts = lexer.tokens("for i in sin(x): 1.5 'a'  # c")
    styles = {text: style for style, text in parts}
    assert "".join(t for _, t in parts) == "for i in sin(x): 1.5 'a'  # c"
    assert styles["for"] == styles["in"] == "class:keyword"
    assert styles["sin"] == "class:builtin"
    assert styles["1.5"] == "class:number"
    assert styles["'a'"] == "class:string"
    assert styles["# c"] == "class:comment"
    assert lexer.tokens("x $ y")[-1] == ("class:error", "$ y")


def test_history_path_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert history_path() == tmp_path / "gradcli" / "history"
    monkeypatch.setenv("XDG_STATE_HOME", "relative")  # the spec: a relative path is ignored
    monkeypatch.setenv("HOME", str(tmp_path))
    assert history_path() == tmp_path / ".local" / "state" / "gradcli" / "history"


def repl(stdin: str):
    return subprocess.run([sys.executable, "-m", "gradcli", "repl"], input=stdin, capture_output=True,
                          text=True, timeout=600)


def test_piped_stdin_runs_line_by_line():
    p = repl("x = tensor([1., 2.], requires_grad=True)\nfor i in range(2):\n    print(i)\ny = (x ** 2).sum()\n"
             "y\n:format json\n:grad y * 3\n")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[:3] == ["0", "1", "tensor(5., grad_fn=<SumBackward0>)"]
    assert '"grads": {"x": {"value": [6.0, 12.0]' in lines[3]
    assert "\x1b[" not in p.stdout and ">>>" not in p.stdout


def test_piped_stdin_stops_at_the_first_error_with_its_code():
    p = repl("a = 1\nprint(a)\nb +\nprint('not reached')\n")
    assert (p.returncode, p.stdout) == (2, "1\n")
    assert p.stderr.startswith("<stdin>:1:4:\n    b +\n")
    p = repl("print(1)\nnope\nprint(2)\n")
    assert (p.returncode, p.stdout) == (1, "1\n")
    assert "NameError: name 'nope' is not defined" in p.stderr


@pytest.mark.perf
def test_grad_does_not_import_prompt_toolkit():
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom gradcli.frontends.cli import app\n"
            "r = CliRunner().invoke(app, ['grad', '(x * x).sum()', '-i', 'x=[1., 2.]'])\n"
            "assert r.exit_code == 0, r.output\n"
            "print(sorted(m for m in sys.modules if m.startswith(('prompt_toolkit', 'gradcli.frontends.session'))))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "[]\n"


def test_repl_options_are_checked():
    p = subprocess.run([sys.executable, "-m", "gradcli", "repl", "--format", "yaml"], input="1\n",
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 2
    assert "the session's format must be one of table, json" in p.stderr
    p = subprocess.run([sys.executable, "-m", "gradcli", "repl", "--dtype", "float64"], input="tensor([1.5]).dtype\n",
                       capture_output=True, text=True, timeout=600)
    assert (p.returncode, p.stdout) == (0, "torch.float64\n")


def test_piped_blocks_end_at_the_next_statement_and_keep_their_clauses():
    p = repl("x = 3\nif x > 5:\n    print('big')\nelse:\n    print('small')\nprint('after')\n"
             "try:\n    nope\nexcept NameError:\n    print('caught')\n")
    assert (p.returncode, p.stdout, p.stderr) == (0, "small\nafter\ncaught\n", "")

"""What a user of the session relies on: ``:save`` writes a file that ``gradcli run --notebook`` replays with the
output the session showed, and ``:help`` lists every command the session answers to."""

import re
import subprocess
import sys

import pytest

from gradcli.frontends.session.core import COMMANDS, DISPATCH, Session

from helpers import ROOT


def run_notebook(path, *flags):
    import os

    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "gradcli", "run", *flags, str(path)], capture_output=True,
                          text=True, env=env, timeout=120)


def test_save_at_the_prompt_replays_with_the_flag_it_names(tmp_path, monkeypatch, capsys):
    pytest.importorskip("prompt_toolkit")
    from prompt_toolkit.history import InMemoryHistory
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from gradcli.frontends.session.app import interact

    path = tmp_path / "s.py"
    monkeypatch.setenv("NO_COLOR", "1")
    keys = ("x = tensor([1., 2., 3.], requires_grad=True)\r"
            "y = (x ** 2).sum()\r"
            "y\r"  # a bare expression: the session shows its value
            "y.backward(); x.grad\r"
            "1 + 1; 'two'\r"
            "None\r"
            "x +* 1\r"  # a syntax error: not saved
            "z = y * 2; boom\r"  # z ran, then an error: z is kept, boom is not
            "for i in range(2):\r"
            "print(i * z)\r"  # the prompt indents this line, and the next (left as it is: it ends the block)
            "\r"
            "def f(a):\r"
            "return [a, a * 2]\r"
            "\r"
            "f(z)\r"
            f":save {path}\r"
            "\x04")
    with create_pipe_input() as inp:
        inp.send_text(keys)
        assert interact(input=inp, output=DummyOutput(), history=InMemoryHistory()) == 0
    shown, _ = capsys.readouterr()
    shown_lines = shown.splitlines()
    saved = shown_lines.pop()
    assert saved == f"saved 10 entries to {path} (gradcli run --notebook {path} shows what the session showed)"
    flag = re.search(r"gradcli run (--\S+)", saved).group(1)

    text = path.read_text()
    assert not [line for line in text.splitlines() if line and not line.strip()]  # no whitespace-only lines
    assert "boom" not in text and "+*" not in text
    r = run_notebook(path, flag)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.splitlines() == shown_lines
    assert "tensor(14., grad_fn=<SumBackward0>)" in shown_lines and "'two'" in shown_lines
    # without the flag a script shows no bare expression's value: only what print() wrote
    printed = ["tensor(0., grad_fn=<MulBackward0>)", "tensor(28., grad_fn=<MulBackward0>)"]
    assert run_notebook(path).stdout.splitlines() == printed and set(printed) <= set(shown_lines)


def test_save_keeps_spaces_inside_a_multi_line_string(tmp_path):
    out = []
    s = Session(write=out.append, error=out.append)
    s.execute("s = '''a\n    \n\nb'''\n    ")
    s.execute("s")
    s.execute(f":save {tmp_path / 's.py'}")
    r = run_notebook(tmp_path / "s.py", "--notebook")
    assert r.stdout == out[0] == "'a\\n    \\n\\nb'\n"


def test_help_lists_every_command_the_session_dispatches():
    out = []
    s = Session(write=out.append, error=out.append)
    s.execute(":help")
    text = "".join(out)
    for name in DISPATCH:  # the names and aliases the session answers to
        assert re.search(rf"(^  |\W){re.escape(name)}\b", text, re.M), name
    assert ":format table|json|compact" in text and ":quit" in text
    # the table is the dispatcher: every name in it runs a command, and every command method is in it
    for name in DISPATCH:
        out.clear()
        s.execute(f"{name} ")
        assert "unknown session command" not in "".join(out), name
    methods = {m for m in dir(Session) if m.startswith("cmd_")}
    assert methods == {c.method for c in COMMANDS.values()}
    assert s.execute(":quit").exit and s.execute(":q").exit and s.execute(":exit").exit

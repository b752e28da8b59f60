"""What ``--help`` says and how piped tables are laid out, run as a user runs gradcli (real subprocesses): the
usage line names its arguments as POSIX usage does (``PROGRAM``), the help lists every choice there is and only
the choices there are (schemas, formats), a range in the help is the range the option enforces when the command
line is parsed, and piped tables carry no trailing blanks and unwrapped titles."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from helpers import ROOT

COMMANDS = ("grad", "run", "batch", "schema", "ops", "plot", "jacobian", "hessian", "jvp", "hvp", "repl")


def gradcli(*args, input=None, columns=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    p = subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True, env=env,
                       input=None if input is None else input.encode(), timeout=120)
    # (text, but a PNG or PDF on standard output is bytes: read what it can)
    return subprocess.CompletedProcess(p.args, p.returncode, p.stdout.decode("utf-8", "replace"),
                                       p.stderr.decode("utf-8", "replace"))


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_schema_help_lists_every_schema_that_schema_lists():
    names = gradcli("schema").stdout.split()
    assert len(names) == 9 and names[:5] == ["grad", "batch", "ops", "explain", "plot"]
    help_text = _flat(gradcli("schema", "--help").stdout)
    for name in names:
        assert f"'{name}' (" in help_text  # the description
    assert ", ".join(names) + ": the JSON output it describes" in help_text  # the argument's help


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_metavars_not_typer_placeholders(command):
    p = gradcli(command, "--help", columns=200)
    assert p.returncode == 0, p.stderr
    usage = p.stdout.splitlines()[0]
    assert "{" not in usage and "}" not in usage, usage  # typer's {program}
    for placeholder in ("<int", "<float", "<str", "<text", "<path"):
        assert placeholder not in p.stdout, (command, placeholder)
    if command in ("grad", "plot", "jacobian", "hessian", "jvp", "hvp"):
        assert usage.endswith(" PROGRAM")
    # help that talks about batch entries belongs to batch
    assert ("the default of every entry" in _flat(p.stdout).lower()) == (command == "batch")
    assert ("limit is per entry" in _flat(p.stdout).lower()) == (command == "batch")


def test_repeat_range_is_in_the_help_and_enforced_before_the_program_runs():
    from gradcli.app.calculator import MAX_REPEAT
    from gradcli.frontends.cli_options import MAX_REPEAT as OPTION_MAX

    assert OPTION_MAX == MAX_REPEAT == 10_000
    assert "--repeat N Run backward N times (1 to 10,000)" in _flat(gradcli("grad", "--help").stdout)
    p = gradcli("grad", "print('the program ran'); (x * x).sum()", "-i", "x=[1.]", "--repeat", "20000")
    assert p.returncode == 2 and "the program ran" not in p.stdout + p.stderr
    assert "Invalid value for '--repeat': 20000 is not in the range 1<=x<=10000." in p.stderr
    assert "Traceback" not in p.stderr
    p = gradcli("grad", "(x * x).sum()", "-i", "x=[1.]", "--repeat", "10000", "-q")
    assert p.returncode == 0 and "x (call 10000): tensor([20000.])" in p.stdout


@pytest.mark.parametrize("command, choices", [
    ("grad", "table|json|compact|dot|svg|png|pdf|mermaid|tree"),
    ("ops", "table|json"),
    ("batch", "table|json|compact|auto|text|jsonl"),
    ("jacobian", "table|json|compact"),
    ("plot", "table|json|svg|png|pdf|csv"),
])
def test_format_choices_in_the_help_are_the_formats_the_command_can_write(command, choices):
    p = gradcli(command, "--help", columns=200)
    assert f"--format [{choices}]" in p.stdout
    for name in choices.split("|"):
        if name in ("auto", "text", "jsonl", "csv"):
            continue
        # every listed format is accepted (what follows may fail for other reasons, never for the format)
        r = gradcli(command, *{"grad": ["x * 2", "-i", "x=1."], "ops": ["relu"], "batch": ["-"],
                               "jacobian": ["x * 2", "-i", "x=[1.]"],
                               "plot": ["x * x", "--over", "x=0:1", "-o", os.devnull]}[command],
                    "--format", name, input="(x * 2).sum()\n")
        assert "Invalid value for '--format'" not in r.stderr and "cannot show" not in r.stderr, (name, r.stderr)
    r = gradcli("ops", "--format", "svg")
    assert r.returncode == 2 and "'svg' is not one of 'table', 'json'." in r.stderr


def test_repl_help_lists_the_formats_the_session_takes():
    assert "--format [table|json|compact]" in gradcli("repl", "--help", columns=200).stdout
    for name in ("table", "json", "compact"):
        p = gradcli("repl", "--format", name, input="(1 + 1)\n")
        assert p.returncode == 0 and p.stdout == "2\n", (name, p.stderr)


def test_explain_with_compact_names_only_the_formats_that_can_explain():
    p = gradcli("grad", "x * 2", "-i", "x=1.", "--explain", "-q")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == ("UsageError: the compact format cannot show the chain rule explained; the formats "
                                "that can are: table, json")


@pytest.mark.parametrize("args", [
    ["grad", "x.relu().sum()", "-i", "x=[0., 1.]", "--check"],
    ["grad", "2 * dot(x, x)", "-i", "x=arange(4.0)", "--repeat", "2", "--graph-values"],
    ["grad", "(x * x).sum()", "-i", "x=[1., 2.]", "--explain"],
    ["ops", "relu"],
    ["jacobian", "x * 2", "-i", "x=[1., 2.]", "--check"],
])
def test_piped_tables_have_no_trailing_blanks(args):
    for columns in (None, 80):  # a pipe (wide), and a pipe with COLUMNS set
        p = gradcli(*args, columns=columns)
        assert p.stdout.strip(), p.stderr
        blank_ended = [line for line in p.stdout.splitlines() if line != line.rstrip()]
        assert blank_ended == [], blank_ended[:3]


def test_check_caption_is_one_line():
    p = gradcli("grad", "x.relu().sum()", "-i", "x=[0., 1.]", "--check")
    caption = ("check: central differences in float64 (eps 1e-06; pass when |grad - numerical| <= 1e-05 + 0.001 * "
               "|numerical|)")
    assert caption in p.stdout.splitlines()
    # the other titles are lines of their own too, never padded
    lines = p.stdout.splitlines()
    for title in ("output", "inputs", "gradients", "graph (root first; inputs feed each node)"):
        assert title in lines


def test_titles_of_a_narrow_terminal_width_are_not_wrapped_into_a_block():
    p = gradcli("grad", "x.relu().sum()", "-i", "x=[0., 1.]", "--check", columns=60)
    assert any(line.startswith("check: central differences in float64 (eps 1e-06; pass when") for line in
               p.stdout.splitlines())
    assert not re.search(r"^1e-06; pass when", p.stdout, re.M)

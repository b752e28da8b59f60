"""The README's pictures section: its commands run, the pictures in docs/ are those of
scripts/make_docs_pictures.py (the same commands as the README shows), and the output it quotes is real."""

from __future__ import annotations

import importlib.util
import re
import shlex

import pytest

from helpers import ROOT
from pictures import gc, need_dot

README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README[README.index("## Pictures:"):README.index("## `gradcli run PATH")]


def _script():
    spec = importlib.util.spec_from_file_location("make_docs_pictures", ROOT / "scripts" / "make_docs_pictures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def section_commands() -> list[str]:
    return [m.group(1) for m in re.finditer(r"^    gradcli (.+)$", SECTION, flags=re.M)]


def test_the_readme_shows_the_commands_that_make_the_docs_pictures():
    shown = section_commands()
    for command in _script().COMMANDS:
        assert command in shown, command
        path = command.rsplit("-o ", 1)[1]
        assert (ROOT / path).is_file() and (ROOT / path).stat().st_size > 1000
        assert f"]({path})" in SECTION  # and shows the picture


@pytest.mark.parametrize("command", section_commands())
def test_every_command_of_the_pictures_section_runs(command, tmp_path):
    args = shlex.split(command.split(" > ")[0].split(" | ")[0])
    picture = any(a in ("svg", "png", "pdf") for a in args)
    if "-o" in args:
        i = args.index("-o")
        picture |= args[i + 1].endswith((".svg", ".png", ".pdf"))
        args[i + 1] = str(tmp_path / args[i + 1].rsplit("/", 1)[-1])
    if picture and args[0] == "plot":
        pytest.importorskip("matplotlib")
    if picture and args[0] != "plot":  # grad and run draw their graph with Graphviz's dot
        need_dot()
    r = gc(*args)
    assert r.exit_code == 0, r.output


def test_the_quoted_explain_output_is_real():
    quoted = SECTION[SECTION.index("    $ gradcli grad"):].split("\n\n")[0].splitlines()
    command = quoted[0][len("    $ gradcli "):]
    out = gc(*shlex.split(command)).stdout.splitlines()
    for line in quoted[1:]:
        if line.strip() == "...":
            continue
        assert line[4:] in [o.rstrip() for o in out], line

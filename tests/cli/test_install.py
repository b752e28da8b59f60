"""The wheel carries the grammar: a non-editable install, run from another directory, works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import ROOT


def test_non_editable_install_from_another_directory(tmp_path):
    target = tmp_path / "site"
    # --no-deps: numpy/typer/rich/lark come from the test environment; --no-build-isolation: use its hatchling.
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                        "--target", str(target), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert (target / "gradcli" / "grammars" / "gradcli.lark").is_file()
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=str(target))
    p = subprocess.run([sys.executable, "-m", "gradcli", "grad", "2 * dot(x, x)", "-i", "x=arange(4.0)", "--json"],
                       capture_output=True, text=True, cwd=work, env=env, timeout=600)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["grads"]["x"]["value"] == [0.0, 4.0, 8.0, 12.0]
    p = subprocess.run([sys.executable, "-c", "import gradcli, sys; sys.stdout.write(gradcli.__file__)"],
                       capture_output=True, text=True, cwd=work, env=env, timeout=600)
    assert p.stdout.startswith(str(target))  # really the installed copy, not the checkout
    script = target / "bin" / "gradcli"
    assert script.is_file()  # the console script is declared

    # The JSON Schemas ship in the wheel, and the installed console script runs a batch with worker processes
    # (which import the main module again: it must be guarded).
    for name in ("grad", "batch", "ops"):
        assert (target / "gradcli" / "render" / "schemas" / f"{name}.schema.json").is_file()
    p = subprocess.run([sys.executable, "-m", "gradcli", "schema", "batch"], capture_output=True, text=True,
                       cwd=work, env=env, timeout=600)
    assert p.returncode == 0 and json.loads(p.stdout)["$id"] == "urn:gradcli:schema:batch"
    entries = "".join(f"x = tensor([{k}.], requires_grad=True); (x * x).sum()\n" for k in range(40))
    p = subprocess.run([sys.executable, str(script), "batch", "-", "--json", "--jobs", "2"], input=entries,
                       capture_output=True, text=True, cwd=work, env=env, timeout=600)
    assert p.returncode == 0, p.stderr
    assert [json.loads(line)["grads"]["x"]["value"] for line in p.stdout.splitlines()] == [[2.0 * k] for k in range(40)]

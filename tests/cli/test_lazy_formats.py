"""A format's module that another module holds through gradcli.engine.lazy.lazy() still registers the format.

``lazy()`` puts the module in ``sys.modules`` before it runs; the registry's loaders (gradcli/render/__init__.py)
import a name from the module, which runs it, where ``from . import table`` would hand back the module unrun
and ``get("table")`` would fail with "declared but its module did not register it".
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers import ROOT

_CODE = """\
import io
from gradcli.engine.lazy import lazy
held = {name: lazy("gradcli.render." + name) for name in ("table", "json", "compact", "pictures")}
from gradcli import render
print([render.get(name).name for name in ("table", "json", "compact", "dot", "tree")])
"""


def _run(args):
    env = dict(os.environ, PYTHONPATH=ROOT, NO_COLOR="1")
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)


def test_formats_held_lazily_elsewhere_still_register():
    p = _run(["-c", _CODE])
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "['table', 'json', 'compact', 'dot', 'tree']"


@pytest.mark.parametrize("fmt", ["tree", "dot", "mermaid"])
def test_each_graph_picture_draws(fmt):
    # the picture module holds what draws each picture through lazy() (tree: the table module's console too)
    p = _run(["-m", "gradcli", "grad", "2 * dot(x, x)", "-i", "x=arange(4.0)", "--format", fmt])
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "DotBackward0" in p.stdout and "MulBackward0" in p.stdout

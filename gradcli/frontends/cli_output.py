"""Where a command's rendered result goes: standard output, or the file of ``-o FILE``; and the format a file
name implies (``-o graph.svg`` draws an SVG when no ``--format``/``--graph`` says otherwise).

The result is rendered into memory first and written at the end, so that a failure while rendering (Graphviz
missing, matplotlib missing) leaves no half-written file behind. Binary formats (PNG, PDF) are never written
to a terminal.
"""

from __future__ import annotations

import io
import os
import sys

from .. import render
from ..engine.errors import InputError

#: File extensions → the format they imply.
EXTENSIONS = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot", ".mmd": "mermaid",
              ".mermaid": "mermaid", ".json": "json"}


def format_for_path(path: str | None) -> str | None:
    """The registered format the extension of ``path`` names (``graph.svg`` → ``svg``), or None."""
    if not path:
        return None
    name = EXTENSIONS.get(os.path.splitext(path)[1].lower())
    return name if name in render.names() else None


def emit(renderer, path: str | None, draw) -> None:
    """Render with ``draw(stream)`` and write the result to ``path`` (``-o``; ``-`` or None: standard output).

    Raises:
        InputError: the file cannot be written, or a binary format would go to a terminal (exit 2).
    """
    binary = renderer.binary
    to_stdout = path in (None, "-")
    if binary and to_stdout and sys.stdout.isatty():
        raise InputError(f"the {renderer.name} format is binary and standard output is a terminal: write it to a "
                         f"file with -o FILE.{renderer.name} (or redirect it)", type="UsageError")
    if not binary and to_stdout:
        draw(sys.stdout)  # text straight to standard output (it may stream, as tables do)
        return
    buffer = io.BytesIO() if binary else io.StringIO()
    draw(buffer)
    data = buffer.getvalue()
    if to_stdout:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        if binary:
            with open(path, "wb") as f:
                f.write(data)
        else:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(data)
    except OSError as e:
        raise InputError(f"cannot write {path}: {e.strerror or e}", type="OutputError") from None

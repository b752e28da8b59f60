"""Helpers of the picture tests: run gradcli's CLI in-process, read a PNG without an imaging library, and
check that Graphviz's dot is there (CI installs it; a developer machine without it skips those tests)."""

from __future__ import annotations

import os
import shutil
import struct
import zlib

import pytest
from typer.testing import CliRunner

from gradcli.frontends.cli import app

runner = CliRunner()

#: The README's example: a hidden unit h = tanh(x w + b).
PROGRAM = "h = (x * w + b).tanh(); h.sum()"
INPUTS = ("-i", "x=[1., 2.]", "-i", "w=[0.5, -1.]", "-i", "b=0.1")


def gc(*args, input=None):
    """``gradcli ARGS`` in this process (typer's test runner); stdout and stderr apart."""
    return runner.invoke(app, [str(a) for a in args], input=input)


def need_dot():
    """Skip unless Graphviz's ``dot`` is on PATH; under CI (CI=true), where .ci/run installs it, fail."""
    if shutil.which("dot") is None:
        if os.environ.get("CI"):
            pytest.fail("Graphviz's dot is missing under CI: .ci/run installs Debian's graphviz package")
        pytest.skip("Graphviz's dot is not installed (apt-get install graphviz)")


def read_png(data: bytes):
    """Decode a non-interlaced 8-bit PNG (grey, RGB, RGBA, grey+alpha, or palette): returns
    ``(width, height, rows)`` with rows as lists of pixel tuples (palette pixels as RGB)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos = 8
    idat = b""
    palette = None
    width = height = depth = color = None
    interlace = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"PLTE":
            palette = [tuple(chunk[i:i + 3]) for i in range(0, len(chunk), 3)]
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    assert depth == 8 and interlace == 0, f"unsupported PNG: depth {depth}, interlace {interlace}"
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color]
    raw = zlib.decompress(idat)
    stride = width * channels
    rows = []
    prev = bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        pixels = [tuple(line[i:i + channels]) for i in range(0, stride, channels)]
        if palette is not None:
            pixels = [palette[p[0]] for p in pixels]
        rows.append(pixels)
    return width, height, rows


def ink(rows, background=None) -> float:
    """The share of pixels that differ from the background (the top-left pixel unless given)."""
    bg = background if background is not None else rows[0][0]
    total = sum(len(r) for r in rows)
    return sum(1 for r in rows for p in r if p != bg) / total


def colors(rows) -> set:
    """The distinct RGB colours of the opaque pixels."""
    return {p[:3] for r in rows for p in r if len(p) < 4 or p[3] == 255}

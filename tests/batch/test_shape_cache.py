"""The batch's shape cache (gradcli/language/build.py _ShapeCache): a program of a shape already built is the
cached one with the new text's numbers, and gives exactly what a fresh parse gives."""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import given, settings, strategies as st

from gradcli.language import build
from gradcli.language import nodes as n

TEMPLATE = "x = tensor([{a}, {b}], requires_grad=True)\ny = (x * {c} - 2 * x ** 2).sum()\ny"


def _dump(v):
    # a node tree as plain data (class, fields), for comparing two builds
    if isinstance(v, n.Node):
        return (type(v).__name__, tuple(_dump(getattr(v, f)) for f in n.fields(v)))
    if isinstance(v, (list, tuple)):
        return tuple(_dump(x) for x in v)
    return (type(v).__name__, v)


numbers = st.one_of(st.integers(-999, 999).map(str),
                    st.floats(-100, 100, allow_nan=False).map(lambda f: repr(round(f, 3))),
                    st.sampled_from(["1e3", "2.5e-4", ".5", "7."]))


@settings(max_examples=200, deadline=None)
@given(numbers, numbers, numbers)
def test_a_cached_shape_builds_what_a_fresh_parse_builds(a, b, c):
    text = TEMPLATE.format(a=a, b=b, c=c)
    fresh = build.build_program(text)  # (the cache is off outside shape_cache())
    with build.shape_cache():
        first = build.build_program(TEMPLATE.format(a=a.replace("9", "8"), b=b, c=c))
        cached = build.build_program(text)
    assert _dump(cached.body) == _dump(fresh.body)
    assert cached.source == text and first.body is cached.body  # the same nodes, now with text's numbers


def test_texts_with_strings_or_comments_are_parsed_each_time():
    with build.shape_cache():
        p1 = build.build_program("print('1'); 1")
        p2 = build.build_program("print('2'); 2")
        p3 = build.build_program("x = 3  # 3\nx")
        p4 = build.build_program("x = 4  # 5\nx")
    assert p1.body is not p2.body and p3.body is not p4.body
    assert p2.body[0].value.args[0].value == "2" and p4.body[0].value.value == 4


def test_batch_results_and_error_positions_equal_single_runs(tmp_path):
    lines = [TEMPLATE.replace("\n", "; ").format(a=i, b=1.5 * i, c=-i) for i in range(1, 6)]
    lines += ["x = tensor([1.25, 2.5]); x.bogus(3)", "x = tensor([0.75, 2.5]); x.bogus(4)"]
    path = tmp_path / "entries.txt"
    path.write_text("\n".join(lines) + "\n")
    out = subprocess.run([sys.executable, "-m", "gradcli", "batch", str(path), "--json"], capture_output=True,
                         text=True)
    got = [json.loads(line) for line in out.stdout.splitlines()]
    for line, entry in zip(lines, got):
        single = subprocess.run([sys.executable, "-m", "gradcli", "grad", line, "--json"], capture_output=True,
                                text=True)
        if entry.get("error"):
            assert (entry["error"]["line"], entry["error"]["column"]) == (1, 26)
            assert "<expr>:1:26:" in single.stderr and "'bogus'" in entry["error"]["message"]
        else:
            want = json.loads(single.stdout)
            assert (entry["output"], entry["grads"]) == (want["output"], want["grads"])

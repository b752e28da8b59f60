"""Nothing lost: one entry with a syntax error (an unclosed bracket above all) fails alone,
and every line after it is an entry of its own, with its result and its line number. Run as a user runs it:
``gradcli batch FILE --json`` (typer's CliRunner), on hand-written broken files and on hypothesis-generated
files mixing valid lines with broken ones."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gradcli.frontends.cli import app

runner = CliRunner()


def run_batch(path) -> tuple[int, list[dict], str]:
    r = runner.invoke(app, ["batch", str(path), "--json"])
    docs = [json.loads(line) for line in r.stdout.splitlines()]
    return r.exit_code, docs, r.stderr


def valid(n: int) -> str:
    return f"x = tensor([{n}., 2.], requires_grad=True); (x * x).sum()"


def value(n: int) -> float:
    return float(n * n + 4)


def test_the_issue_s_reproduction_a_line_missing_its_closing_bracket(tmp_path):
    lines = [valid(n) for n in range(1, 11)]
    lines[4] = lines[4][:-1]  # line 5 lacks its closing ')'
    path = tmp_path / "ten.txt"
    path.write_text("\n".join(lines) + "\n")
    code, docs, err = run_batch(path)
    assert code == 1
    assert [d["line"] for d in docs] == list(range(1, 11))
    assert docs[4]["error"]["type"] == "SyntaxError" and docs[4]["error"]["line"] == 1
    assert [d["output"]["value"] for d in docs if "output" in d] == [value(n) for n in range(1, 11) if n != 5]
    assert "10 entries, 1 failed (line 5)" in err


def test_an_unclosed_bracket_on_the_first_of_twenty_lines(tmp_path):
    lines = [valid(n) for n in range(1, 21)]
    lines[0] = "x = tensor([1., 2.], requires_grad=True; (x * x).sum("
    path = tmp_path / "twenty.txt"
    path.write_text("\n".join(lines) + "\n")
    code, docs, err = run_batch(path)
    assert [d["line"] for d in docs] == list(range(1, 21))
    assert "error" in docs[0] and all("output" in d for d in docs[1:])
    assert "20 entries, 1 failed (line 1)" in err


def test_a_block_header_without_a_body_fails_alone(tmp_path):
    path = tmp_path / "header.txt"
    path.write_text(f"for i in range(3):\n{valid(1)}\n{valid(2)}\n")
    code, docs, _ = run_batch(path)
    assert [d["line"] for d in docs] == [1, 2, 3]
    assert docs[0]["error"]["type"] == "SyntaxError"
    assert [d["output"]["value"] for d in docs[1:]] == [value(1), value(2)]


def test_real_multi_line_entries_still_work(tmp_path):
    """Brackets closed on an indented line, a block with a body, a backslash, a bracket whose continuation is not a
    program on its own: each stays one entry, running to '---' (or the end of the input) as documented."""
    path = tmp_path / "blocks.txt"
    path.write_text(
        "x = tensor([1.,\n"
        "            2.], requires_grad=True); (x * x).sum()\n"
        "---\n"
        "def f(x):\n"
        "    return (x ** 3).sum()\n"
        "x = tensor([1., 2.], requires_grad=True)\n"
        "f(x)\n"
        "---\n"
        "x = tensor([3., 4.], requires_grad=True); y = (x * x).sum() + \\\n"
        "1\n"
        "y\n"
        "---\n"
        "z = tensor([5.,\n"
        "2.], requires_grad=True); (z * 2).sum()\n")
    code, docs, _ = run_batch(path)
    assert code == 0, docs
    assert [(d["line"], d["output"]["value"]) for d in docs] == [(1, 5.0), (4, 9.0), (9, 26.0), (13, 14.0)]


BROKEN = st.sampled_from([
    "x = tensor([1., 2.], requires_grad=True; (x * x).sum()",  # unclosed bracket, error mid-line
    "y = (x * 2",  # unclosed at the end
    "z = [1, 2,",
    "f(",
    "s = 'abc",  # unclosed strings
    's = "abc',
    "    x = 1",  # stray indentation
    "  (x * x).sum()",
    # (block headers are tested alone above: a header followed by an indented line here would be a real block,
    # which runs to '---' as documented)
    "1 +",
    "\x00\x01junk\x7f",  # binary junk
    "x ===== 3",
    ")))",
])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.integers(1, 99), BROKEN), min_size=1, max_size=12))
def test_every_valid_line_s_result_is_present_in_order_with_its_line_number(tmp_path, rows):
    text = "\n".join(valid(r) if isinstance(r, int) else r for r in rows) + "\n"
    path = tmp_path / "mixed.txt"
    path.write_bytes(text.encode("utf-8"))
    _, docs, err = run_batch(path)
    got = {d["line"]: d["output"]["value"] for d in docs if "output" in d}
    want = {k + 1: value(r) for k, r in enumerate(rows) if isinstance(r, int)}
    assert {k: got.get(k) for k in want} == want, (rows, docs)  # (a "broken" line may still run: '    x = 1')
    lines = [d["line"] for d in docs]
    assert lines == sorted(set(lines))
    assert f"{len(docs)} entries" in err or f"{len(docs)} entry" in err

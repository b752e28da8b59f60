"""gradcli batch as a user runs it (typer's CliRunner): the input formats, the outputs, each error path and the
exit statuses. Pipes, signals, --jobs and streaming run through real subprocesses in test_batch_pipes.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from gradcli import render
from gradcli.frontends.batch import Defaults, ParallelRunner, read_entries, run_entries
from gradcli.frontends.cli import app

from helpers import ROOT
runner = CliRunner()


def batch(*args, input=None):
    return runner.invoke(app, ["batch", *args], input=input)


def json_lines(r) -> list[dict]:
    assert r.stdout.endswith("\n")
    return [json.loads(line) for line in r.stdout.splitlines()]


def grad_json(*args) -> dict:
    r = runner.invoke(app, ["grad", *args, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def without(doc: dict, *keys) -> dict:
    return {k: v for k, v in doc.items() if k not in keys}


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# ----------------------------------------------------------------------------------------------- text files
TEXT = """\
# a comment, then a blank line

x = tensor([1., 2.], requires_grad=True); (x * x).sum()
   # an indented comment
def f(x):  # (a comment after the colon)
    return (x ** 3).sum()

x = tensor([1., 2.], requires_grad=True)
f(x)
---
w = tensor([[1., 2.], [3., 4.]], requires_grad=True); w.mm(w).sum()
"""


def test_text_file_json_lines_one_per_entry_with_lines(tmp_path):
    r = batch(write(tmp_path, "exprs.txt", TEXT), "--json")
    assert r.exit_code == 0, r.output
    docs = json_lines(r)
    assert [d["line"] for d in docs] == [3, 5, 11]
    assert all("id" not in d and "error" not in d for d in docs)
    assert docs[0]["grads"]["x"]["value"] == [2.0, 4.0]
    assert docs[1]["grads"]["x"]["value"] == [3.0, 12.0]  # 3 x^2, the block with a def
    assert docs[2]["grads"]["w"]["value"] == [[7.0, 11.0], [9.0, 13.0]]
    # Each line carries exactly what `gradcli grad --json` gives for the same program.
    assert without(docs[0], "line") == grad_json("x = tensor([1., 2.], requires_grad=True); (x * x).sum()")
    assert without(docs[1], "line") == grad_json(
        "def f(x):  # (a comment after the colon)\n    return (x ** 3).sum()\n\nx = tensor([1., 2.], requires_grad=True)\n"
        "f(x)")
    assert r.stderr.startswith("gradcli batch: 3 entries, 0 failed, ")


def test_gradients_match_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    r = batch(write(tmp_path, "exprs.txt", "x = tensor([0.5, -1., 2.], requires_grad=True); "
                                           "(sigmoid(x) * tanh(x)).sum()\n"), "--json")
    got = json_lines(r)[0]
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = (torch.sigmoid(x) * torch.tanh(x)).sum()
    y.backward()
    assert got["output"]["grad_fn"] == type(y.grad_fn).__name__
    np.testing.assert_allclose(got["grads"]["x"]["value"], x.grad.numpy(), rtol=1e-6)


def test_text_table(tmp_path):
    r = batch(write(tmp_path, "exprs.txt", TEXT + "undefined + 1\n"))
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["line", "│", "entry", "│", "output", "│", "gradients", "or", "error"]
    assert "tensor(5., grad_fn=<SumBackward0>)" in r.stdout and "x: tensor([2., 4.])" in r.stdout
    assert "w: tensor([[ 7., 11.]," in r.stdout and "[ 9., 13.]])" in r.stdout
    assert "NameError: name 'undefined' is not defined" in r.stdout
    row = next(k for k, line in enumerate(lines) if line.lstrip().startswith("12 │"))
    assert "undefined + 1" in lines[row] and "^" in lines[row + 1]  # the caret under the column
    assert "\x1b[" not in r.stdout
    assert "1 failed (line 12)" in r.stderr


def test_block_runs_to_end_of_input_without_closing_line(tmp_path):
    r = batch(write(tmp_path, "e.txt", "for i in [1., 2.]:\n    pass\ntensor(i, requires_grad=True) * 2\n"),
              "--json")
    assert r.exit_code == 0, r.output
    assert [(d["line"], d["output"]["value"]) for d in json_lines(r)] == [(1, 4.0)]


def test_stray_block_end_is_a_failed_entry(tmp_path):
    r = batch(write(tmp_path, "e.txt", "x = tensor([1.], requires_grad=True)\n(x * 2).sum()\n---\n"), "--json")
    assert r.exit_code == 1
    docs = json_lines(r)
    assert [d["line"] for d in docs] == [1, 2, 3]
    assert docs[1]["error"]["type"] == "NameError"  # each line is its own entry
    assert docs[2]["error"] == {"type": "FileFormatError", "line": 1, "column": 1,
                                "message": "'---' ends a multi-line entry, but none is open"}


def test_text_entry_errors_are_positioned_within_the_entry(tmp_path):
    r = batch(write(tmp_path, "e.txt", "1 +\nx = tensor([1.], requires_grad=True); x.zero_grad()\n"
                                       "def f(x):\n    return x +\n---\n"), "--json")
    assert r.exit_code == 1
    e1, e2, e3 = (d["error"] for d in json_lines(r))
    assert (e1["type"], e1["message"], e1["line"], e1["column"]) == ("SyntaxError", "unexpected end of line", 1, 4)
    assert e2 == {"type": "AttributeError", "message": "'Tensor' object has no attribute 'zero_grad'",
                  "line": 1, "column": 39}
    assert (e3["type"], e3["line"]) == ("SyntaxError", 2)  # line 2 of the block (file line 4)


def test_undecodable_line_fails_alone(tmp_path):
    path = tmp_path / "e.txt"
    path.write_bytes(b"\xef\xbb\xbfx = tensor([1.], requires_grad=True); (x * 2).sum()\n"  # BOM is dropped
                     b"caf\xe9\n"
                     b"x = tensor([1.], requires_grad=True); (x * 3).sum()\r\n")
    r = batch(str(path), "--json")
    assert r.exit_code == 1
    docs = json_lines(r)
    assert [d["line"] for d in docs] == [1, 2, 3]
    assert docs[1]["error"]["type"] == "UnicodeDecodeError" and "not valid UTF-8" in docs[1]["error"]["message"]
    assert docs[2]["grads"]["x"]["value"] == [3.0]


def test_program_prints_go_to_stderr_with_their_line(tmp_path):
    r = batch(write(tmp_path, "e.txt", "\nx = tensor([1.], requires_grad=True); print('hi', x); x.sum()\n"),
              "--json")
    assert r.exit_code == 0
    assert json_lines(r)[0]["line"] == 2  # stdout has only the result
    assert f"{tmp_path / 'e.txt'}:2: hi tensor([1.], requires_grad=True)\n" in r.stderr


# ----------------------------------------------------------------------------------------------- JSON Lines
def test_jsonl_fields_mean_what_grad_options_mean(tmp_path):
    cases = [
        {"program": "2 * dot(x, x)", "inputs": {"x": [0, 1, 2, 3]}, "id": "dot"},
        {"program": "x * c", "inputs": {"x": "arange(3.0)"}, "consts": {"c": [1, 0, 2]},
         "gradient": [1, 1, 1], "repeat": 2, "id": {"any": ["json", 1]}},
        {"program": "(inp + 1).pow(2)", "inputs": {"inp": "eye(3)"}, "gradient": "ones(3, 3)", "repeat": 3,
         "zero_grad": True},
        {"program": "(w * w).sum()", "inputs": {"w": "randn(2, 3)"}, "seed": 4, "dtype": "float64", "id": None},
    ]
    r = batch(write(tmp_path, "cases.jsonl", "\n".join(json.dumps(c) for c in cases) + "\n\n"), "--json")
    assert r.exit_code == 0, r.output
    docs = json_lines(r)
    assert [d["line"] for d in docs] == [1, 2, 3, 4]
    assert [d.get("id", "absent") for d in docs] == ["dot", {"any": ["json", 1]}, "absent", None]
    assert without(docs[0], "line", "id") == grad_json("2 * dot(x, x)", "-i", "x=[0, 1, 2, 3]")
    assert without(docs[1], "line", "id") == grad_json("x * c", "-i", "x=arange(3.0)", "-c", "c=[1, 0, 2]",
                                                       "--gradient", "[1, 1, 1]", "--repeat", "2")
    assert docs[1]["inputs"]["c"]["dtype"] == "int64"  # PyTorch's inference for constants given as data
    assert without(docs[2], "line") == grad_json("(inp + 1).pow(2)", "-i", "inp=eye(3)", "--gradient",
                                                 "ones(3, 3)", "--repeat", "3", "--zero-grad")
    assert without(docs[3], "line", "id") == grad_json("(w * w).sum()", "-i", "w=randn(2, 3)", "--seed", "4",
                                                       "--dtype", "float64")


def test_jsonl_inputs_from_files(tmp_path):
    np.save(tmp_path / "w.npy", np.array([[1.0, 2.0], [3.0, 4.0]]))
    line = json.dumps({"program": "(w * w).sum()", "inputs": {"w": f"@{tmp_path / 'w.npy'}"}})
    r = batch(write(tmp_path, "c.jsonl", line + "\n"), "--json")
    assert json_lines(r)[0]["grads"]["w"]["value"] == [[2.0, 4.0], [6.0, 8.0]]


@pytest.mark.parametrize("line, error", [
    ("not json", {"type": "JSONDecodeError", "message": "invalid JSON: Expecting value", "line": 1, "column": 1}),
    ('{"program": "x", "inputs": {"x": NaN}}',
     {"type": "JSONDecodeError", "message": "invalid JSON: NaN is not JSON (RFC 8259 has no NaN or Infinity)",
      "line": None, "column": None}),
    ('["x"]', {"type": "InputError", "message": 'expected a JSON object per line ({"program": ...}), got an array',
               "line": None, "column": None}),
    ('{"inputs": {"x": [1]}}', {"type": "InputError", "message": "the field 'program' (a string) is required",
                                "line": None, "column": None}),
    ('{"program": 3}', {"type": "InputError", "message": "'program' must be a string, got a number",
                        "line": None, "column": None}),
    ('{"program": "x", "input": {"x": [1]}}',
     {"type": "InputError", "line": None, "column": None,
      "message": "unknown field 'input'; the fields are: program, inputs, consts, gradient, repeat, zero_grad, "
                 "seed, dtype, check, id, transform, mode, tangent, vector, symbolic"}),
    ('{"program": "x", "inputs": [1]}',
     {"type": "InputError", "line": None, "column": None,
      "message": "'inputs' must be an object of name: SPEC or data (like -i NAME=SPEC), got an array"}),
    ('{"program": "x", "repeat": 0}', {"type": "InputError", "message": "'repeat' must be an integer >= 1, got 0",
                                       "line": None, "column": None}),
    ('{"program": "x", "zero_grad": 1}', {"type": "InputError", "message": "'zero_grad' must be true or false, got 1",
                                          "line": None, "column": None}),
    ('{"program": "x", "dtype": "int64"}',
     {"type": "InputError", "message": "'dtype' must be \"float32\" or \"float64\", got \"int64\"",
      "line": None, "column": None}),
    ('{"program": "x.sum()", "inputs": {"x": "[1, 2"}}',
     {"type": "SyntaxError", "message": "inputs.x: unexpected end of input", "line": 1, "column": 6}),
    ('{"program": "x.sum()", "inputs": {"x": ["a"]}}', None),
    ('{"program": "x.sum()", "inputs": {"1x": [1]}}', None),
    ('{"program": "(x * c).sum()", "inputs": {"x": [1.0]}, "consts": {"c": "undefined"}}',
     {"type": "NameError", "message": "consts.c: name 'undefined' is not defined", "line": 1, "column": 1}),
    ('{"program": "x * 2", "inputs": {"x": [1.0, 2.0]}, "gradient": [1.0]}', None),
    ('{"program": "x +", "inputs": {"x": [1.0]}}',
     {"type": "SyntaxError", "message": "unexpected end of line", "line": 1, "column": 4}),
])
def test_jsonl_bad_entries_fail_alone(tmp_path, line, error):
    good = '{"program": "(x * 2).sum()", "inputs": {"x": [1.0]}, "id": "ok"}'
    r = batch(write(tmp_path, "c.jsonl", f"{good}\n{line}\n{good}\n"), "--json")
    assert r.exit_code == 1, r.output
    first, bad, last = json_lines(r)
    assert first["id"] == last["id"] == "ok" and "error" not in first and "error" not in last
    assert bad["line"] == 2 and set(bad) <= {"line", "id", "error"}
    if error is not None:
        assert bad["error"] == error
    else:
        assert bad["error"]["type"] in ("InputSpecError", "RuntimeError") and bad["error"]["message"]
    assert "1 failed (line 2)" in r.stderr


def test_jsonl_failed_entry_keeps_its_id(tmp_path):
    r = batch(write(tmp_path, "c.jsonl", '{"program": "x", "id": 5, "repeat": "2"}\n'), "--json")
    assert json_lines(r) == [{"line": 1, "id": 5, "error": {
        "type": "InputError", "message": "'repeat' must be an integer >= 1, got \"2\"", "line": None,
        "column": None}}]


def test_jsonl_table_shows_program_and_error(tmp_path):
    r = batch(write(tmp_path, "c.jsonl", '{"program": "(x * 3).sum()", "inputs": {"x": [1.0, 2.0]}}\n'
                                         '{"program": "x * 2", "inputs": {"x": [1.0, 2.0]}}\n'))
    assert r.exit_code == 1
    assert "(x * 3).sum()" in r.stdout and "x: tensor([3., 3.])" in r.stdout
    assert "RuntimeError: grad can be implicitly created only for" in r.stdout  # the cell wraps


# ------------------------------------------------------------------------------------------ format choice
def test_stdin_format_is_detected_from_the_first_line():
    r = batch("-", "--json", input='\n{"program": "(x * 2).sum()", "inputs": {"x": [1.0]}}\n')
    assert r.exit_code == 0, r.output
    assert json_lines(r)[0]["line"] == 2
    r = batch("-", "--json", input="# text\nx = tensor([1.], requires_grad=True); (x * 2).sum()\n")
    assert r.exit_code == 0, r.output
    assert json_lines(r)[0]["grads"]["x"]["value"] == [2.0]


def test_extension_and_format_option(tmp_path):
    line = '{"program": "(x * 2).sum()", "inputs": {"x": [1.0]}}\n'
    # .txt is text: a JSON object is then a program, a dict display, whose value is not an output.
    r = batch(write(tmp_path, "c.txt", line), "--json")
    error = json_lines(r)[0]["error"]
    assert r.exit_code == 1 and error["type"] == "TypeError"
    assert error["message"] == "the output must be a tensor or a number, not dict"
    r = batch(write(tmp_path, "c.txt", line), "--json", "--format", "jsonl")
    assert r.exit_code == 0 and json_lines(r)[0]["grads"]["x"]["value"] == [2.0]
    r = batch(write(tmp_path, "c.ndjson", line), "--json")
    assert r.exit_code == 0
    r = batch(write(tmp_path, "c.data", line), "--json")  # other extensions: detected
    assert r.exit_code == 0
    r = batch("-", "--json", "--format", "text", input=line)
    assert r.exit_code == 1


def test_batch_defaults_and_entry_overrides(tmp_path):
    text = "x = randn(3, requires_grad=True); (x * x).sum()\n"
    a = json_lines(batch(write(tmp_path, "a.txt", text * 2), "--json", "--seed", "1", "--dtype", "float64"))
    assert a[0]["inputs"]["x"]["dtype"] == "float64"
    assert without(a[0], "line") == without(a[1], "line")  # every entry is seeded the same way
    assert without(a[0], "line") == grad_json(text.strip(), "--seed", "1", "--dtype", "float64")
    line = json.dumps({"program": text.strip(), "seed": 2, "dtype": "float32"})
    b = json_lines(batch(write(tmp_path, "b.jsonl", line + "\n"), "--json", "--seed", "1", "--dtype", "float64"))
    assert without(b[0], "line") == grad_json(text.strip(), "--seed", "2")


def test_max_steps_applies_to_every_entry(tmp_path):
    r = batch(write(tmp_path, "e.txt", "def f():\n    while True:\n        pass\nf()\n---\n" * 2),
              "--json", "--max-steps", "1000")
    assert r.exit_code == 1
    assert [(d["error"]["type"], "1,000" in d["error"]["message"], d["line"]) for d in json_lines(r)] == [
        ("StepLimitError", True, 1), ("StepLimitError", True, 6)]


# ---------------------------------------------------------------------------------------- exit statuses
@pytest.mark.parametrize("args, message", [
    (["/no/such/file.txt"], "FileNotFoundError: no such file: /no/such/file.txt"),
    ([str(ROOT / "examples")], f"IsADirectoryError: {ROOT / 'examples'} is a directory"),
    (["-", "--dtype", "int64"], "UsageError: --dtype must be float32 or float64, got 'int64'"),
    (["-", "--jobs", "0"], "Invalid value for '--jobs'"),
    (["-", "--format", "csv"], "Invalid value for '--format'"),
])
def test_unreadable_input_or_bad_option_exits_2(args, message):
    r = batch(*args, input="")
    assert r.exit_code == 2, r.output
    assert message in r.stderr
    assert r.stdout == "" and "Traceback" not in r.stderr


def test_empty_input_succeeds():
    r = batch("-", "--json", input="\n# nothing\n")
    assert r.exit_code == 0 and r.stdout == ""
    assert r.stderr.startswith("gradcli batch: 0 entries, 0 failed, ")


def test_shipped_examples(tmp_path):
    r = batch(str(ROOT / "examples" / "exprs.txt"), "--json")
    assert r.exit_code == 1  # its last entry fails on purpose
    docs = json_lines(r)
    assert docs[0]["grads"]["x"]["value"] == [0.0, 4.0, 8.0, 12.0]
    assert docs[1]["grads"]["x"]["value"] == [[4.5, 4.5], [4.5, 4.5]]
    assert docs[2]["grads"]["a"]["value"] == docs[2]["output"]["value"] / 0.5  # a.grad == d / a
    assert "error" in docs[3]
    r = batch(str(ROOT / "examples" / "cases.jsonl"), "--json")
    assert r.exit_code == 1
    docs = {d["id"]: d for d in json_lines(r)}
    assert docs["vjp"]["grads"]["x"]["value"] == [0.2, 2.0, 0.0002]
    assert docs["one_layer_net"]["output"]["grad_fn"] == "BinaryCrossEntropyWithLogitsBackward0"
    assert docs["no_gradient"]["error"]["type"] == "RuntimeError"
    # cat examples/cases.jsonl | gradcli batch - --json | jq -c 'select(.error) | .line'
    r = batch("-", "--json", input=(ROOT / "examples" / "cases.jsonl").read_text())
    assert [d["line"] for d in json_lines(r) if "error" in d] == [5]
    r = batch(str(ROOT / "examples" / "exprs.txt"))  # the table
    assert r.exit_code == 1 and "a: tensor(2048.)" in r.stdout


def test_readme_example():
    r = batch("-", "--json", input="x = tensor([1., 2.], requires_grad=True); 2 * dot(x, x)\n2 * dot(x, x)\n")
    first, second = json_lines(r)
    assert first["line"] == 1 and first["output"] == {"value": 10.0, "shape": [], "dtype": "float32",
                                                      "grad_fn": "MulBackward0", "nonfinite": False}
    assert second == {"line": 2, "error": {"type": "NameError", "message": "name 'x' is not defined", "line": 1,
                                           "column": 9}}


# ------------------------------------------------------------------------------------ streaming, bounded
class _Counting:
    """An iterator of entries that counts how many have been taken."""

    def __init__(self, entries):
        self.entries = iter(entries)
        self.taken = 0

    def __iter__(self):
        return self

    def __next__(self):
        entry = next(self.entries)
        self.taken += 1
        return entry


def _entries(n: int):
    import io

    text = "".join(f"x = tensor([{k}.], requires_grad=True); (x * x).sum()\n" for k in range(n))
    return read_entries(io.BytesIO(text.encode()), "text", Defaults())


def test_entries_are_read_only_as_needed():
    # one job runs in one forked worker (so that a stuck entry can be killed): it reads a bounded window ahead
    source = _Counting(_entries(1000))
    outcomes = run_entries(source, render.get("json").batch(None))
    entry, outcome = next(outcomes)
    # At most: the queue (chunk * (jobs + 1)), the chunks in flight (2 per worker) and one being read.
    assert source.taken <= 16 * 2 + 2 * 16 + 16 and json.loads(outcome.text)["grads"]["x"]["value"] == [0.0]
    outcomes.close()


def test_parallel_runner_reads_a_bounded_window_ahead_and_keeps_order():
    source = _Counting(_entries(400))
    runner_ = ParallelRunner(source, render.get("json").batch(None), jobs=2, chunk=4)
    outcomes = iter(runner_)
    first = next(outcomes)
    # At most: the queue (chunk * (jobs + 1)), the chunks in flight (2 per worker) and one being read.
    assert source.taken <= 4 * 3 + 2 * 2 * 4 + 4
    rest = list(outcomes)
    lines = [first[0].line] + [e.line for e, _ in rest]
    assert lines == list(range(1, 401))
    assert [json.loads(o.text)["grads"]["x"]["value"] for _, o in [first] + rest] == [[2.0 * k] for k in range(400)]


def test_a_ctrl_c_while_a_finished_batch_exits_keeps_its_exit_status(tmp_path):
    # The batch has written its results and summary; a SIGINT that lands as typer ends the command (here: sent
    # the moment typer.Exit is made, deterministically) must not turn it into "interrupted" and exit 130.
    import subprocess
    import sys

    path = write(tmp_path, "b.txt", "x = tensor([1., 2.], requires_grad=True); (x * 2).sum()\n1 / undefined\n")
    script = ("import os, signal, sys\nimport typer\nfrom gradcli.frontends.cli import main\n"
              "init = typer.Exit.__init__\n"
              "def exit_then_interrupt(self, *args, **kwargs):\n"
              "    init(self, *args, **kwargs)\n"
              "    os.kill(os.getpid(), signal.SIGINT)\n"
              "typer.Exit.__init__ = exit_then_interrupt\n"
              "sys.argv = ['gradcli', 'batch', sys.argv[1]]\nmain()\n")
    r = subprocess.run([sys.executable, "-c", script, path], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr  # one entry failed: 1, as without the Ctrl-C
    assert "interrupted" not in r.stderr and "gradcli batch: 2 entries, 1 failed (line 2)" in r.stderr


def test_ignore_interrupts_ignores_sigint_until_exit():
    import signal

    from gradcli.frontends.cli import ignore_interrupts

    before = signal.getsignal(signal.SIGINT)
    try:
        ignore_interrupts()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)

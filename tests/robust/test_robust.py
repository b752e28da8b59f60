"""Hostile input through the CLI: every limit (refused before the work, with a message that says how to raise
it), every file error path, --debug, the nonfinite flag and --anomaly.

Limits are exercised at their defaults where that is cheap (``ones(100000, 100000)``), and otherwise lowered
with ``--limit`` or ``GRADCLI_MAX_*`` to small values, which is also how the tests prove that both raise them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from gradcli.engine import limits
from gradcli.frontends.cli import app

from helpers import HANG_TIMEOUT, ROOT
runner = CliRunner()


def run(program, *options, input=None, env=None):
    """``gradcli grad [options] -- PROGRAM`` (after ``--``, a program starting with ``-`` is not an option)."""
    return runner.invoke(app, ["grad", *options, "--", program], input=input, env=env)


def fails(result, code: int, *fragments):
    """Assert a clean failure: the exit code, each fragment on stderr, nothing on stdout, no traceback."""
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == code, (result.exit_code, result.output)
    for f in fragments:
        assert f in result.stderr, (f, result.stderr)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    return result.stderr


def ok(*args, **kw):
    r = run(*args, "--json", **kw)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def subprocess_gradcli(*args, env=None, **kw):
    e = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "gradcli", "grad", *args], capture_output=True, env=e,
                          timeout=HANG_TIMEOUT, **kw)


# ------------------------------------------------------------------------------------------------- elements
@pytest.mark.parametrize("program", [
    "ones(100000, 100000)", "zeros((100000, 100000))", "randn(size=(100000, 100000))", "full((100000, 100000), 1.)",
    "randint(0, 3, (100000, 100000))", "eye(100000)", "arange(0, 1e12)", "linspace(0, 1, 10 ** 12)",
    "ones(100000, 1) * ones(1, 100000)", "where(ones(100000, 1) > 0, ones(1, 100000), 0.)",
    "ones(100000, 1) @ ones(1, 100000)", "zeros(100000, 0) @ zeros(0, 100000)", "mm(ones(100000, 1), ones(1, 100000))",
    "outer(ones(100000), ones(100000))", "ones(100000) @ ones(1, 100000).expand(100000, 100000)",
    "matmul(ones(1000, 1000, 1), ones(1000, 1, 1000))", "ones(1).expand(100000, 100000)",
    "ones(100, 100)[zeros(100000, 1, dtype=torch.int64), zeros(1, 100000, dtype=torch.int64)]",
])
def test_elements_limit_refuses_before_allocating(program):
    err = fails(run(program), 1, "LimitError: ", "elements", "100,000,000",
                "--limit elements=N", "GRADCLI_MAX_ELEMENTS")
    assert "would have shape" in err or "would give" in err


def test_elements_limit_is_raised_and_lowered_by_flag_and_environment():
    assert ok("(x * ones(10, 10)).sum()", "-i", "x=1.", "--limit", "elements=100")["output"]["value"] == 100.0
    fails(run("(x * ones(11, 10)).sum()", "-i", "x=1.", "--limit", "elements=100"), 1,
          "shape [11, 10], 110 elements", "the limit is 100 ")
    fails(run("(x * ones(11, 10)).sum()", "-i", "x=1.", env={"GRADCLI_MAX_ELEMENTS": "100"}), 1, "LimitError")
    # the flag wins over the environment
    assert ok("(x * ones(11, 10)).sum()", "-i", "x=1.", "--limit", "elements=200",
              env={"GRADCLI_MAX_ELEMENTS": "100"})["grads"]["x"]["value"] == 110.0
    fails(run("(x * ones(11, 1)).sum()", "-i", "x=ones(10)", "--limit", "elements=100"), 1, "broadcasting [10] and [11, 1]")
    # the backward pass of an allowed forward stays allowed
    doc = ok("(x @ w).sum()", "-i", "x=ones(10, 10)", "-i", "w=ones(10, 10)", "--limit", "elements=100")
    assert doc["grads"]["x"]["value"] == [[10.0] * 10] * 10


def test_elements_limit_applies_to_data_files(tmp_path):
    p = tmp_path / "big.npy"
    np.save(p, np.zeros((20, 10)))
    fails(run("x.sum()", "-i", f"x=@{p}", "--limit", "elements=100"), 1, "shape [20, 10], 200 elements")
    # a .npy header claiming 10^10 elements is refused from the header, before any data is read
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1, dtype=np.float32))
    header["shape"] = (100000, 100000)
    with open(tmp_path / "huge.npy", "wb") as f:
        np.lib.format.write_array_header_1_0(f, header)
        f.write(b"\0" * 64)
    fails(run("x.sum()", "-i", f"x=@{tmp_path / 'huge.npy'}"), 1, "10,000,000,000 elements")


# ---------------------------------------------------------------------------------------- Python objects
@pytest.mark.parametrize("program, fragment", [
    ("[0] * 10 ** 8", "the repeated sequence would have 100,000,000 items"),
    ("[0] * 10 ** 4 * 10 ** 4", "the repeated sequence would have 100,000,000 items"),
    ("'ab' * 10 ** 8", "200,000,000 items"),
    ("[0] * tensor(10 ** 8)", "items"),
    ("s = 'x' * 10 ** 6\nfor i in range(10):\n    s = s + s\nlen(s)", "the concatenation would have 16,000,000"),
    ("len(list(range(10 ** 10)))", "list() would have 10,000,000,000 items"),
    ("len(tuple(range(10 ** 30)))", "tuple() would have more than"),
    ("sum(range(10 ** 12))", "sum() would have"),
    ("len(''.join(['x' * 10 ** 6] * 11))", "str.join() would have 11,000,000 items"),
    ("len(('x' * 10 ** 6).replace('x', 'yy' * 10))", "str.replace() would have 20,000,000 items"),
    ("len(f'{1:999999999}')", "the f-string format '999999999'"),
    ("len('%999999999d' % 1)", "the %-format"),
    # converting Python values one by one: refused before the first (this took minutes and gigabytes)
    ("tensor(range(10 ** 9))", "the data of tensor() would have 1,000,000,000 items"),
    ("tensor([range(10 ** 4)] * 10 ** 4)", "the data of tensor() would have 100,000,000 items"),
    ("tensor([[1.] * 10 ** 4] * 10 ** 4, dtype=torch.float64)", "the data of tensor() would have 100,000,000"),
])
def test_items_limit_bounds_python_sequences(program, fragment):
    fails(run(program), 1, "LimitError: ", fragment, "--limit items=N")


def test_items_limit_reads_iterators_one_item_past_it():
    fails(run("max(zip(range(10 ** 12), range(10 ** 12)))[0]", "--limit", "items=1000"), 1,
          "max() would have more than 1,000 items")
    doc = ok("x * max(zip(range(1000), range(1000)))[0]", "-i", "x=1.", "--limit", "items=1000")
    assert doc["output"]["value"] == 999.0


def test_tensor_data_within_the_items_limit_is_converted():
    doc = ok("(x * tensor([range(100)] * 10)).sum()", "-i", "x=1.", "--limit", "items=1000")
    assert doc["output"]["value"] == 49500.0
    fails(run("(x * tensor([range(100)] * 11)).sum()", "-i", "x=1.", "--limit", "items=1000"), 1,
          "the data of tensor() would have 1,100 items; the limit is 1,000")


def test_tolist_counts_items():
    fails(run("len(ones(1000).tolist())", "--limit", "items=999"), 1, "tolist() would have 1,000 items")
    assert ok("x * len(ones(1000).tolist())", "-i", "x=1.", "--limit", "items=1000")["output"]["value"] == 1000


@pytest.mark.parametrize("program, fragment", [
    ("10 ** 10 ** 10", "the integer power 10 ** 10000000000"),
    ("x = 2 ** 99999\nx * x", "the integer product would have about 200,000 bits"),
    ("round(5, -10 ** 9)", "round(..., -1000000000)"),
])
def test_int_bits_limit(program, fragment):
    fails(run(program), 1, "LimitError: ", fragment, "bits per Python integer", "GRADCLI_MAX_INT_BITS")


def test_int_bits_limit_can_be_raised():
    assert ok("x * (2 ** 100000 > 2 ** 99999)", "-i", "x=1.", "--limit", "int_bits=200000")["output"]["value"] == 1
    fails(run("float(2 ** 100000 > 2 ** 99999)"), 1, "the integer power 2 ** 100000 would have about 100,001 bits")


# -------------------------------------------------------------------------------------- size and nesting
def test_program_size_limit_is_checked_before_parsing():
    program = "1 + " * 30_000 + "1"
    fails(run(program), 2, "LimitError: <expr> has 120,001 characters", "--limit chars=N")
    spec = "[" + "1, " * 40_000 + "1]"
    fails(run("x", "-i", "x=" + spec), 2, f"-i x has {len(spec):,} characters")
    fails(run("1 + 1 + 1", "--limit", "chars=5"), 2, "<expr> has 9 characters; the limit is 5 ")


@pytest.mark.parametrize("program", [
    "(" * 10_000 + "1" + ")" * 10_000,      # brackets: no tree nodes, refused while lexing
    "[" * 10_000 + "1" + "]" * 10_000,
    "abs(" * 10_000 + "1" + ")" * 10_000,   # calls
    "-" * 10_000 + "1",                      # unary operators
    "x" + ".T" * 5_000,                      # attribute chains
    "1" + " + 1" * 5_000,                    # a long left-associative chain is deep too
    "".join(" " * i + "if True:\n" for i in range(1_100)) + " " * 1_100 + "x\n",  # blocks
    "[" * 5_000 + "a" + "]" * 5_000 + " = 1",  # nested assignment targets
    "f'{" + "(" * 5_000 + "1" + ")" * 5_000 + "}'",  # inside an f-string
])
def test_nesting_limit_not_recursion_error(program):
    err = fails(run(program, "-i", "x=1.", "--limit", "chars=none"), 2, "LimitError: ", "nesting",
                "--limit nesting=N")
    assert "RecursionError" not in err
    assert err.splitlines()[0].startswith("<expr>:")  # with a position


@pytest.mark.parametrize("program, message", [
    # the deep unpacking runs (assignment targets are unpacked without recursion); it leaves no output
    ("[" * 5_000 + "a" + "]" * 5_000 + " = " + "[" * 5_000 + "x" + "]" * 5_000, "the program has no output"),
    ("-" * 20_000 + "x", "RecursionError: maximum recursion depth exceeded"),
    ("[" * 20_000 + "x" + "]" * 20_000, "RecursionError: maximum recursion depth exceeded"),
])
def test_without_the_nesting_limit_deep_programs_are_still_clean_errors(program, message):
    fails(run(program, "-i", "x=1.", "--limit", "nesting=none"), 1, message)


def test_nesting_limit_can_be_raised_and_lowered():
    program = "(" * 300 + "x" + ")" * 300 + ".sum()"
    assert ok(program, "-i", "x=[1.]")["output"]["value"] == 1.0
    fails(run(program, "-i", "x=[1.]", "--limit", "nesting=100"), 2, "brackets nest too deeply here; the limit is 100 ")
    chain = "x" + " + x" * 1_500
    fails(run(chain, "-i", "x=1."), 2, "nests expressions or blocks too deeply")
    assert ok(chain, "-i", "x=1.", "--limit", "nesting=2000")["grads"]["x"]["value"] == 1501.0


# ----------------------------------------------------------------------------- steps, calls, graph nodes
def test_step_limit():
    # the default 5,000,000 statements, or (on a slow or busy machine) the early stop of a run on course to pass
    # them: "StepLimitError: the program ran N statements in T seconds, on course ..."
    fails(run("while True:\n    pass"), 1, "LimitError: the program ran ", "statements", "--max-steps")
    fails(run("while True:\n    pass", "--max-steps", "100"), 1, "more than 100 statements")
    fails(run("while True:\n    pass", "--limit", "steps=50"), 1, "more than 50 statements")
    fails(run("while True:\n    pass", env={"GRADCLI_MAX_STEPS": "70"}), 1, "more than 70 statements")


def test_call_depth_limit():
    program = "def f(n):\n    if n == 0:\n        return x\n    return f(n - 1) * 1\nf({})"
    err = fails(run(program.format(1200), "-i", "x=2."), 1, "RecursionError: maximum recursion depth exceeded: f()",
                "--limit call_depth=N")
    assert err.splitlines()[0] == "<expr>:4:12:"
    assert ok(program.format(1200), "-i", "x=2.", "--limit", "call_depth=1300")["grads"]["x"]["value"] == 1.0
    # a call depth far beyond Python's stack is still a clean error, not a crash
    fails(run(program.format(10 ** 6), "-i", "x=2.", "--limit", "call_depth=none", "--limit", "steps=none"), 1,
          "RecursionError")


def test_graph_nodes_limit():
    program = "y = x\nfor i in range({}):\n    y = y * 1.5\ny"
    assert ok(program.format(50), "-i", "x=1.", "--limit", "graph_nodes=100")["grads"]["x"]["value"] == \
        pytest.approx(1.5 ** 50)
    err = fails(run(program.format(500), "-i", "x=1.", "--limit", "graph_nodes=100"), 1,
                "LimitError: the program recorded more than 100 autograd graph nodes", "GRADCLI_MAX_GRAPH_NODES")
    assert err.splitlines()[1] == "        y = y * 1.5"
    # no_grad records nothing
    assert ok("with torch.no_grad():\n    for i in range(500):\n        z = x * 2\nx * 2", "-i", "x=1.",
              "--limit", "graph_nodes=100")["output"]["value"] == 2.0


def test_repeat_is_bounded():
    # refused when the options are read, before the program runs
    fails(run("(x * x).sum()", "-i", "x=[1.]", "--repeat", "10001"), 2,
          "Invalid value for '--repeat': 10001 is not in the range 1<=x<=10000")


@pytest.mark.parametrize("args, fragment", [
    (["--limit", "nonsense=3"], "--limit expects NAME=N with NAME one of elements, items"),
    (["--limit", "elements"], "--limit expects NAME=N"),
    (["--limit", "elements=lots"], "--limit elements: expected a positive whole number or 'none', got 'lots'"),
    (["--limit", "elements=1.5"], "expected a positive whole number"),
    (["--limit", "steps=10G"], "expected a positive whole number"),
])
def test_bad_limit_options_exit_2(args, fragment):
    fails(run("1.", *args), 2, "UsageError: ", fragment)


def test_limit_values_and_environment():
    assert limits.parse_value("memory", "1.5G", "x") == 3 * 2 ** 29
    assert limits.parse_value("file_bytes", "64MiB", "x") == 64 * 2 ** 20
    assert limits.parse_value("elements", "1e9", "x") == 10 ** 9
    assert limits.parse_value("elements", "1_000", "x") == 1000
    assert limits.parse_value("elements", "none", "x") == limits.UNLIMITED
    fails(run("1.", env={"GRADCLI_MAX_NESTING": "deep"}), 2, "GRADCLI_MAX_NESTING: expected a positive whole number")


# ------------------------------------------------------------------------------------------------- files
def _unreadable(tmp_path) -> str:
    """A path that exists but cannot be read: mode 000 (when not root), or /proc/self/mem (EIO as root)."""
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        p = tmp_path / "secret.gc"
        p.write_text("1.")
        p.chmod(0)
        return str(p)
    return "/proc/self/mem"


def test_program_file_errors(tmp_path):
    fails(run(f"@{tmp_path / 'missing.gc'}"), 2, "FileNotFoundError: no such file: ")
    fails(run(f"@{tmp_path}"), 2, "IsADirectoryError: ", "is a directory")
    err = fails(run(f"@{_unreadable(tmp_path)}"), 2)
    assert "PermissionError: permission denied" in err or "OSError: cannot read" in err
    (tmp_path / "bin.gc").write_bytes(b"x = 1\n\x00\x01\x02")
    fails(run(f"@{tmp_path / 'bin.gc'}"), 2, "FileFormatError: ", "is a binary file", "line 2, column 1")
    (tmp_path / "latin.gc").write_bytes("x = 1\ny = 'caf\u00e9'\n".encode("latin-1"))
    err = fails(run(f"@{tmp_path / 'latin.gc'}"), 2, "UnicodeDecodeError: ", "not UTF-8 text: invalid byte 0xe9",
                "(line 2, column 9)")
    assert err.splitlines()[0].endswith("latin.gc:2:9:")
    (tmp_path / "big.gc").write_text("1. + " * 100 + "1.")
    fails(run(f"@{tmp_path / 'big.gc'}", "--limit", "file_bytes=100"), 2, "LimitError: ", "big.gc is 502 bytes",
          "--limit file_bytes=N")
    (tmp_path / "bom.gc").write_bytes(b"\xef\xbb\xbf2. * x")
    assert ok(f"@{tmp_path / 'bom.gc'}", "-i", "x=3.")["output"]["value"] == 6.0


def test_stdin_errors():
    fails(run("-", input=b"x = 1\n\xff\xfe"), 2, "UnicodeDecodeError: <stdin> is not UTF-8 text: invalid byte 0xff",
          "line 2, column 1")
    fails(run("-", input=b"1." * 100, env={"GRADCLI_MAX_FILE_BYTES": "50"}), 2, "<stdin> is more than 50 bytes")
    assert ok("-", "-i", "x=[3.]", input=b"y = x * x\ny.sum()")["grads"]["x"]["value"] == [6.0]
    p = subprocess_gradcli("-", "--json", input=b"\x89PNG\r\n\x1a\n\x00\x00")
    assert p.returncode == 2 and b"not UTF-8 text" in p.stderr and b"Traceback" not in p.stderr


def test_device_files_are_read_within_the_limit():
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero on this platform")
    fails(run("@/dev/zero", "--limit", "file_bytes=1M"), 2, "/dev/zero is more than 1,048,576 bytes")
    fails(run("x", "-i", "x=@/dev/zero"), 2, "unknown data file type")


@pytest.mark.parametrize("name, content, fragments", [
    ("bad.json", b'[[1, 2],\n [3, 4,]]', ["FileFormatError: ", "invalid JSON", "bad.json:2:"]),
    ("str.json", b'[1, "two"]', ["expected a number or nested lists of numbers (found str)"]),
    ("null.json", b'[1, null]', ["(found null)"]),
    ("obj.json", b'{"a": 1}', ["(found an object)"]),
    ("ragged.json", b'[[1, 2], [3]]', ["ragged nested list"]),
    ("deep.json", b"[" * 100_000 + b"]" * 100_000, ["FileFormatError: "]),
    ("deep64.json", b"[" * 70 + b"1" + b"]" * 70, ["nested more than 64 deep"]),
    ("bigint.json", b"[" + b"9" * 30 + b"]", ["FileFormatError: "]),
    ("bad.csv", b"1,2\n3,x\n", ["FileFormatError: ", "bad.csv:2: not a number: 'x'", "bad.csv:2:3:"]),
    ("ragged.csv", b"1,2\n3\n", ["ragged.csv:2: expected 2 values like the first row, got 1"]),
    ("bin.csv", b"1,2\n\x00\x00", ["is a binary file"]),
    ("latin.csv", "1,2\n3,\u00e9".encode("latin-1"), ["not UTF-8 text"]),
    ("garbage.npy", b"not a numpy file at all", ["FileFormatError: ", "is not a valid .npy file"]),
    ("data.txt", b"1,2", ["unknown data file type '.txt'"]),
])
def test_data_file_errors(tmp_path, name, content, fragments):
    (tmp_path / name).write_bytes(content)
    fails(run("x.sum()", "-i", f"x=@{tmp_path / name}"), 2, *fragments)


def test_npy_files_refused(tmp_path):
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    fails(run("x", "-i", f"x=@{tmp_path / 'obj.npy'}"), 2, "UnsafeFileError: ", "holds Python objects",
          "allow_pickle=False")
    np.save(tmp_path / "str.npy", np.array(["a", "b"]))
    fails(run("x", "-i", f"x=@{tmp_path / 'str.npy'}"), 2, "dtype <U1 is not supported")
    np.save(tmp_path / "ok.npy", np.arange(1000, dtype=np.float64))
    (tmp_path / "cut.npy").write_bytes((tmp_path / "ok.npy").read_bytes()[:500])
    fails(run("x", "-i", f"x=@{tmp_path / 'cut.npy'}"), 2, "is truncated")
    fails(run("x", "-i", f"x=@{tmp_path}"), 2, "IsADirectoryError")
    fails(run("x", "-i", f"x=@{tmp_path / 'none.npy'}"), 2, "FileNotFoundError")
    fails(run("x", "-i", f"x=@{tmp_path / 'ok.npy'}", "--limit", "elements=999"), 1, "1,000 elements")
    assert ok("x.sum()", "-i", f"x=@{tmp_path / 'ok.npy'}")["output"]["value"] == 499500.0


def test_data_file_size_limit(tmp_path):
    text = json.dumps(list(range(100)))
    (tmp_path / "d.json").write_text(text)
    fails(run("x", "-i", f"x=@{tmp_path / 'd.json'}", "--limit", "file_bytes=100"), 2,
          f"d.json is {len(text):,} bytes")


# ------------------------------------------------------------------------------- tracebacks and --debug
def test_debug_shows_the_internal_traceback():
    r = run("x.__class__", "-i", "x=1.", "--debug")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith("Traceback (most recent call last)") and "in _check_name" in r.stderr
    assert r.stderr.endswith("SyntaxError: gradcli does not allow the attribute '__class__': names starting with "
                             "'__' reach Python's internals, not the language (a class may define the special "
                             "methods: __init__, __call__, __repr__, ...)\n")
    r = run("ones(2) @ ones(3)", "--debug")
    assert r.exit_code == 1 and "Traceback" in r.stderr and "RuntimeError: inconsistent tensor size" in r.stderr
    assert "ops/linalg/" in r.stderr  # the engine's frame where it was raised
    assert "Traceback" not in run("ones(2) @ ones(3)").stderr


def _main(monkeypatch, capsys, exc, env=None):
    from gradcli.frontends import cli

    def broken(*args, **kwargs):  # main() calls _app_for(argv)(obj=...)
        raise exc

    monkeypatch.setattr(cli, "_app_for", lambda argv: broken)
    monkeypatch.setattr(limits, "install_process_guards", lambda: None)
    for k, v in (env or {}).items():
        monkeypatch.setenv(k, v)
    with pytest.raises(SystemExit) as e:
        cli.main()
    return e.value.code, capsys.readouterr().err


def test_internal_errors_have_no_traceback_unless_debug(monkeypatch, capsys):
    code, err = _main(monkeypatch, capsys, ZeroDivisionError("a bug"))
    assert code == 1 and "gradcli: internal error: ZeroDivisionError: a bug" in err and "Traceback" not in err
    code, err = _main(monkeypatch, capsys, ZeroDivisionError("a bug"), env={"GRADCLI_DEBUG": "1"})
    assert code == 1 and "Traceback (most recent call last)" in err and "in broken" in err
    code, err = _main(monkeypatch, capsys, MemoryError())
    assert code == 1 and "MemoryError: out of memory" in err and "--limit memory=N" in err
    code, err = _main(monkeypatch, capsys, RecursionError("deep"))
    assert code == 1 and "RecursionError: deep" in err
    code, err = _main(monkeypatch, capsys, limits.exceeded_time())
    assert code == 1 and "LimitError: gradcli ran for 300 seconds" in err


def test_time_limit_stops_a_running_program():
    p = subprocess_gradcli("while True:\n    x = 1", "--limit", "steps=none", env={"GRADCLI_MAX_TIME": "1"})
    err = p.stderr.decode()
    assert p.returncode == 1, err
    assert "LimitError: gradcli ran for 1 seconds" in err and "Traceback" not in err
    assert err.startswith("<expr>:")  # where the program was


def test_memory_limit_turns_an_allocation_into_an_error():
    p = subprocess_gradcli("x = ones(10000, 10000, dtype=torch.float64)\nx.sum()", "--limit", "memory=512M")
    err = p.stderr.decode()
    assert p.returncode == 1, err
    assert "MemoryError: out of memory" in err and "Traceback" not in err and "<expr>:1:5:" in err


# ----------------------------------------------------------------------------------- numerical trouble
def test_nonfinite_is_flagged_in_json():
    doc = ok("(sqrt(x) * y).sum()", "-i", "x=[0., 1.]", "-i", "y=[1., 2.]")
    assert doc["output"]["nonfinite"] is False
    assert doc["inputs"]["x"]["nonfinite"] is False
    assert doc["grads"]["x"] == {"value": ["Infinity", 1.0], "shape": [2], "nonfinite": True}
    assert doc["grads"]["y"]["nonfinite"] is False
    assert doc["calls"][0]["grads"]["x"]["nonfinite"] is True
    doc = ok("log(x)", "-i", "x=[-1., 1.]", "--gradient", "[1., 1.]")
    assert doc["output"]["nonfinite"] is True and doc["output"]["value"] == ["NaN", 0.0]
    doc = ok("(x * c).sum()", "-i", "x=[1., 2.]", "-c", "c=[1., float('inf')]")
    assert doc["inputs"]["c"]["nonfinite"] is True and doc["inputs"]["x"]["nonfinite"] is False


def test_nonfinite_is_flagged_in_tables_and_on_stderr():
    r = run("(sqrt(x) * 0).sum()", "-i", "x=[0., 1.]")
    assert r.exit_code == 0
    assert "nonfinite" in r.stdout and "tensor([nan, 0.])" in r.stdout
    row = next(line for line in r.stdout.splitlines() if "tensor([nan, 0.])" in line)
    assert "NaN" in row.replace("nan", "")
    assert r.stderr.startswith("warning: NaN or infinity in grad of x (gradcli grad --anomaly")
    r = run("(x * 2).sum()", "-i", "x=[0., 1.]")
    assert "nonfinite" not in r.stdout and r.stderr == ""


ANOMALY_CASES = [  # program, x, where the op is, the same computation in PyTorch
    ("(sqrt(x) * 0).sum()", [0., 1.], (1, 2), lambda x, t: (t.sqrt(x) * 0).sum()),
    ("y = x / 0\nz = y * 0\nz.sum()", [1., 2.], (1, 5), lambda x, t: ((x / 0) * 0).sum()),
    ("y = x * 1\ny += log(x) * 0\ny.sum()", [0., 1.], (2, 6), lambda x, t: (x * 1 + t.log(x) * 0).sum()),
    ("def f(a):\n    return (a.pow(0.5) * 0).sum()\nf(x) + x.sum()", [0., 4.], (2, 13),
     lambda x, t: (x.pow(0.5) * 0).sum() + x.sum()),
]


@pytest.mark.parametrize("program, x, position, reference", ANOMALY_CASES)
def test_anomaly_names_the_op_and_its_position_like_pytorch(program, x, position, reference):
    import warnings

    torch = pytest.importorskip("torch")
    err = fails(run(program, "-i", f"x={x}", "--anomaly"), 1, "RuntimeError: Function '", "anomaly mode")
    lines = err.splitlines()
    assert lines[0] == f"<expr>:{position[0]}:{position[1]}:"
    assert lines[2] == "    " + " " * (position[1] - 1) + "^"
    # PyTorch under detect_anomaly names the same function and output
    xt = torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Anomaly Detection has been enabled" and the forward traceback
        with torch.autograd.detect_anomaly(), pytest.raises(RuntimeError) as e:
            reference(xt, torch).backward()
    assert lines[3] == f"RuntimeError: {e.value}"


def test_anomaly_mode_changes_nothing_when_all_is_finite():
    assert ok("(x * x).sum()", "-i", "x=[1., 2.]", "--anomaly")["grads"]["x"]["value"] == [2.0, 4.0]
    assert ok("(sqrt(x) * 0).sum()", "-i", "x=[0., 1.]")["grads"]["x"]["value"] == ["NaN", 0.0]  # without it
    from gradcli.engine import anomaly

    assert not anomaly.enabled()


# ------------------------------------------------------------------------------------------ deep values
@pytest.mark.parametrize("program", [
    "l = []\nfor i in range(100000):\n    l = [l]\ntensor(l)",
    "l = []\nfor i in range(100000):\n    l = [l]\nl",
    "l = []\nfor i in range(100000):\n    l = [l]\nprint(l)\n1.",
    "l = [1]\nl.append(l)\ntensor(l)",  # found hanging: dtype inference walked the cycle forever
    "x = ones(1)\nl = [x]\nl.append(l)\ntensor(l, dtype=torch.float32)",
    "l = [1]\nl.append(l)\nl == l",
])
def test_deep_or_cyclic_values_are_clean_errors(program):
    r = run(program)
    if program.endswith("l == l"):  # Python's identity shortcut: True, an output without a gradient (exit 0)
        assert r.exit_code == 0 and "tensor(True)" in r.stdout, r.output
        return
    assert r.exit_code == 1 and "Traceback" not in r.stderr, r.output

"""Hostile programs run as a user runs them (``gradcli run FILE``, ``gradcli grad ...`` in a subprocess): each ends
with the documented exit code and a one-line message, never a traceback or an internal error, and within its
limits. The subprocess timeout is a guard against a hang (``helpers.HANG_TIMEOUT``), not a speed check.

The programs: Python's exceptions raised inside builtins (catchable as Python's types), the size limits
(``items``, ``int_bits``) wherever a program builds a value, work inside one C call that only the time limit's
watchdog can stop, runaway loops, text that would drive a terminal, Python's source rules, and files (read-only,
opt-in).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers import HANG_TIMEOUT

#: The exit status of a process the time limit's watchdog killed, as Python's subprocess reports it (SIGKILL).
KILLED = -9


def gradcli(*args, cwd=None, env=None):
    e = dict(os.environ)
    e.pop("GRADCLI_DEBUG", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True, cwd=cwd, env=e,
                          timeout=HANG_TIMEOUT)


def assert_clean(p) -> None:
    """No traceback and no internal error, whatever the outcome."""
    err = p.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert "internal error" not in err, err


def run_program(tmp_path, source: str, *options, name: str = "prog.py"):
    path = tmp_path / name
    path.write_bytes(source.encode("utf-8", "surrogatepass"))
    return gradcli("run", str(path), *options, cwd=tmp_path)


# (program, exit code, text expected on stdout, text expected on stderr[, a --limit]): run with a generous time
# limit
CASES = {
    # Python's exceptions raised inside builtins are the program's, of Python's type
    "unpack map": ("try:\n    a, b = map(int, ['x', 'y'])\nexcept ValueError:\n    print('caught')\n", 0, "caught", ""),
    "for over map": ("try:\n    for i in map(int, ['1', 'x']):\n        pass\nexcept ValueError:\n"
                     "    print('caught')\n", 0, "caught", ""),
    "int('x')": ("try:\n    int('x')\nexcept ValueError as e:\n    print('caught')\n", 0, "caught", ""),
    "next of empty": ("try:\n    next(iter([]))\nexcept StopIteration:\n    print('caught')\n", 0, "caught", ""),
    "in a generator": ("def g():\n    yield int('x')\ntry:\n    list(g())\nexcept ValueError:\n    print('caught')\n",
                       0, "caught", ""),
    "super(A, 1)": ("class A:\n    pass\nsuper(A, 1).x\n", 1, "",
                    "TypeError: super(type, obj): obj must be an instance or subtype of type"),
    "A.__iter__ = iter": ("class A:\n    pass\nA.__iter__ = iter\nfor x in A():\n    pass\n", 1, "",
                          "RecursionError"),
    "A.__eq__ = max": ("class A:\n    pass\nA.__eq__ = max\nprint(A() == A())\n", 1, "",
                       "TypeError: 'A' object is not iterable"),
    "yield in finally": ("def g():\n    try:\n        yield 1\n        yield 2\n    finally:\n        yield 3\n"
                         "x = g()\nnext(x)\nprint('ok')\n", 0, "ok", ""),
    # sizes: refused before they are built
    "f-string doubling": ("s = 'ab'\nwhile True:\n    s = f'{s}{s}'\n", 1, "", "LimitError: the f-string"),
    "%-format doubling": ("s = 'ab'\nwhile True:\n    s = '%s%s' % (s, s)\n", 1, "", "LimitError: the %-format"),
    "str of a big list": ("s = 'a' * 1000000\nt = str([s] * 10)\n", 1, "", "LimitError: str()"),
    "star arguments": ("print(max(*range(10**8)))\n", 1, "", "LimitError: the * arguments"),
    "list.extend loop": ("l = [0] * 1000000\nm = []\nwhile True:\n    m.extend(l)\n", 1, "",
                         "LimitError: list.extend()"),
    "dict.update": ("d = {i: i for i in range(600)}\nd.update({-i: i for i in range(1, 600)})\n", 1, "",
                    "LimitError: dict.update() would have 1,199 items", "items=1000"),
    "tolist": ("import torch\nt = torch.zeros(50000000)\nx = t.numpy().tolist()\n", 1, "", "LimitError: tolist()"),
    "random.choices": ("import random\nx = random.choices([1], k=10**9)\n", 1, "",
                       "LimitError: random.choices()"),
    "random.getrandbits": ("import random\nx = random.getrandbits(10**7)\n", 1, "",
                           "LimitError: random.getrandbits()"),
    "math.factorial": ("import math\nx = math.factorial(30000)\n", 1, "", "LimitError: math.factorial()"),
    "math.prod": ("import math\nx = math.prod([10**1000] * 1000)\n", 1, "", "LimitError: math.prod()"),
    "__index__ asked once": ("class N:\n    def __init__(self):\n        self.k = 0\n    def __index__(self):\n"
                             "        self.k += 1\n        return 1 if self.k == 1 else 10**9\nprint(len([0] * N()))\n",
                             0, "1", ""),
    # text that would drive a terminal is shown escaped in messages
    "escape in an error": ("raise RuntimeError('\\x1b]0;T\\x07')\n", 1, "", "RuntimeError: \\x1b]0;T\\x07"),
    "lone surrogate printed": ("print('\\ud800')\n", 1, "", "UnicodeEncodeError"),
    # Python's source rules
    "CR line endings": ("x = 1\ry = 2\rprint(x + y)\r", 0, "3", ""),
    "CRLF line endings": ("x = 1\r\ny = 2\r\nprint(x + y)\r\n", 0, "3", ""),
    "def __del__": ("class A:\n    def __del__(self):\n        pass\nA()\nprint('ok')\n", 0, "ok", ""),
    "from __future__": ("from __future__ import annotations\nprint('ok')\n", 0, "ok", ""),
    "reading __del__": ("class A:\n    def __del__(self):\n        pass\nA().__del__\n", 2, "",
                        "SyntaxError: gradcli does not allow the attribute '__del__'"),
    "reading __class__": ("x = 1\nx.__class__\n", 2, "", "SyntaxError"),
    # files: read-only
    "writing a file": ("open('out.txt', 'w')\n", 1, "", "PermissionError"),
    "reading outside": ("open('/etc/hostname')\n", 1, "", "--allow-read DIR"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_program(tmp_path, name):
    source, code, out, err, *limit = CASES[name]
    p = run_program(tmp_path, source, "--limit", "time=600", *(("--limit", limit[0]) if limit else ()))
    assert_clean(p)
    assert p.returncode == code, (p.stdout, p.stderr)
    assert out in p.stdout.decode("utf-8", "replace")
    stderr = p.stderr.decode("utf-8", "replace")
    assert err in stderr
    if name == "yield in finally":  # Python's "Exception ignored", on one line of its own
        assert "RuntimeError: generator ignored GeneratorExit" in stderr


@pytest.mark.parametrize("source", [
    "print(0.5 in range(10**15))\n",
    "print(all(range(1, 10**15)))\n",
    # 200,000 integers of one hash: a set built in one call of quadratic time
    "print(len(set(range(0, 200000 * (2 ** 61 - 1), 2 ** 61 - 1))))\n",
])
def test_time_limit_holds_inside_one_c_call(tmp_path, source):
    # Python's SIGALRM handler cannot run inside these calls: the watchdog kills the process past the limit,
    # saying so on one line (a busy machine may stop it still in Python, as the LimitError).
    p = run_program(tmp_path, source, "--limit", "time=2")
    assert_clean(p)
    err = p.stderr.decode()
    assert p.returncode in (KILLED, 1), (p.returncode, err)
    assert "time limit" in err or "the limit is 2 seconds" in err
    if p.returncode == KILLED:
        assert err.count("\n") == 1 and err.startswith("LimitError:") and "exit status 137" in err


def test_runaway_loop_stops_as_the_steps_limit(tmp_path):
    # at the default limits the clock of the steps limit stops it long before 5,000,000 statements on a slow
    # machine; either way it is the steps limit that stops it
    p = run_program(tmp_path, "x = 1\nwhile True:\n    x = x * 1\n")
    assert_clean(p)
    assert p.returncode == 1
    assert "StepLimitError" in p.stderr.decode()


def test_heavy_loop_is_not_stopped_by_the_clock(tmp_path):
    # few statements a second (heavy tensor work) is not on course to pass the steps limit: it runs on
    source = "import torch\nx = torch.ones(300, 300)\nfor i in range(40):\n    y = x @ x\nprint('done')\n"
    p = run_program(tmp_path, source, "--limit", "steps=10000", "--limit", "time=600")
    assert p.returncode == 0 and b"done" in p.stdout


def test_control_characters_in_grad_errors_are_escaped():
    p = gradcli("grad", 'raise RuntimeError("\\x1b]0;T\\x07")')
    assert_clean(p)
    assert p.returncode == 1
    assert b"\x1b" not in p.stderr and b"\x07" not in p.stderr
    assert b"RuntimeError: \\x1b]0;T\\x07" in p.stderr


def test_printed_text_is_kept_when_piped_and_escaped_on_a_terminal(tmp_path):
    p = run_program(tmp_path, "print('\\x1b[31mred')\n")
    assert p.returncode == 0 and p.stdout == b"\x1b[31mred\n"  # piped: as it is
    pexpect = pytest.importorskip("pexpect")
    path = tmp_path / "prog.py"
    for options, want in [((), b"\\x1b[31mred"), (("--raw-output",), b"\x1b[31mred")]:
        child = pexpect.spawn(sys.executable, ["-m", "gradcli", "run", str(path), *options], timeout=HANG_TIMEOUT)
        child.expect(pexpect.EOF)
        assert want in child.before


def test_big_integer_constant_is_an_input_error():
    p = gradcli("grad", "x*2", "-c", "x=10**30", "-i", "y=1")
    assert_clean(p)
    assert p.returncode == 2 and b"Overflow" in p.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_output_that_cannot_be_written():
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "gradcli", "grad", "x*2", "-i", "x=1"], stdout=full,
                           stderr=subprocess.PIPE, timeout=HANG_TIMEOUT)
    assert_clean(p)
    assert p.returncode == 1 and b"cannot write to standard output" in p.stderr
    p = subprocess.run([sys.executable, "-m", "gradcli", "grad", "x*2", "-i", "x=1"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=HANG_TIMEOUT, preexec_fn=lambda: os.close(1))
    assert_clean(p)
    assert p.returncode == 1 and b"standard output is closed" in p.stderr


def test_files_are_read_under_the_programs_directory_and_allow_read(tmp_path):
    (tmp_path / "names.txt").write_text("alice\nbob\n")
    data = tmp_path / "data"
    data.mkdir()
    (data / "n.txt").write_text("3")
    source = ("with open('names.txt') as f:\n    names = [line.strip() for line in f]\nprint(names)\n"
              "from pathlib import Path\nprint(Path('names.txt').read_text().count('\\n'))\n"
              "try:\n    open('nope.txt')\nexcept FileNotFoundError:\n    print('missing')\n")
    p = run_program(tmp_path, source)
    assert_clean(p)
    assert p.returncode == 0, p.stderr
    assert p.stdout.decode().split("\n")[:3] == ["['alice', 'bob']", "2", "missing"]
    # grad reads nothing unless allowed, and says which option allows it
    p = gradcli("grad", "float(open('data/n.txt').read()) * x", "-i", "x=1", cwd=tmp_path)
    assert p.returncode == 1 and b"--allow-read DIR" in p.stderr
    p = gradcli("grad", "float(open('data/n.txt').read()) * x", "-i", "x=1", "--allow-read", "data",
                "--format", "compact", cwd=tmp_path)
    assert p.returncode == 0 and b"tensor(3.)" in p.stdout


def test_reads_count_against_file_bytes(tmp_path):
    (tmp_path / "big.txt").write_text("x" * 5000)
    p = run_program(tmp_path, "a = open('big.txt').read()\nb = open('big.txt').read()\n",
                    "--limit", "file_bytes=8000")
    assert_clean(p)
    assert p.returncode == 1 and b"file_bytes" in p.stderr  # an error of the run (exit 1)


def test_session_shows_a_programs_control_characters_escaped():
    from gradcli.frontends.session.core import Session

    out, err = [], []
    s = Session(write=out.append, error=err.append)
    s.execute("print('\\x1b]0;T\\x07')")
    s.execute("raise RuntimeError('\\x1b[2J')")
    s.execute("x = 1\rprint(x)")
    text, errors = "".join(out), "".join(err)
    assert "\x1b" not in text + errors and "\x07" not in text
    assert "\\x1b]0;T\\x07" in text and "RuntimeError: \\x1b[2J" in errors
    assert text.endswith("1\n")  # a CR ends a line, as in Python's source

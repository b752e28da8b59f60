"""Fuzzing with hypothesis: whatever text, program, option or file gradcli is given, it answers with a result or
a gradcli error (a :class:`~gradcli.engine.errors.GradcliError`), never another exception and never a hang.

Inputs come from five sources, each fed to the parser, the interpreter (through :func:`gradcli.app.calculator.compute`,
which also runs backward, and the renderers) or the CLI:

* random text, and random sequences of the language's tokens;
* programs and expressions derived from the grammar itself (``hypothesis.extra.lark``'s strategy on
  ``grammars/gradcli.lark``, with a size budget; indentation is laid out after generation, names come from the
  op table, so a new op is fuzzed as soon as it exists);
* mutations of valid programs (the shipped examples, with their inputs, and programs like the README's);
* command lines mixing those with every option of ``gradcli grad``;
* random and mutated ``.json``, ``.csv`` and ``.npy`` files.

Runs use small limits (``FUZZ_LIMITS``) so every example is quick, and a watchdog fails any example that runs
longer than ``WATCHDOG_SECONDS``: a hang is a failure like any other.

Profiles (hypothesis settings profiles): ``gradcli-ci`` (the default: a few thousand examples in all,
derandomized so CI is repeatable) and ``gradcli-long`` (``GRADCLI_FUZZ=long``: 50 times as many, freshly
random each run, for deep runs). Each crash found becomes an entry of ``REGRESSIONS`` with its minimal example.
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
import signal
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import LarkStrategy
from lark.grammar import NonTerminal
from typer.testing import CliRunner

from gradcli.engine import limits
from gradcli.app.calculator import GradRequest, compute
from gradcli.frontends.cli import app
from gradcli.engine.errors import GradcliError
from gradcli.language.grammar import grammar_path, parse
from gradcli.language.attributes import TENSOR_ATTRS
from gradcli.language.builtins import BUILTIN_NAMES
from gradcli.ops import REGISTRY

from helpers import ROOT

# ------------------------------------------------------------------------------------------------ profiles
_COMMON = dict(deadline=None, print_blob=True, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large,
                                      HealthCheck.large_base_example])
settings.register_profile("gradcli-ci", max_examples=100, derandomize=True, **_COMMON)
settings.register_profile("gradcli-long", max_examples=100 * 50, derandomize=False, **_COMMON)
PROFILE = "gradcli-long" if os.environ.get("GRADCLI_FUZZ", "").lower() == "long" else "gradcli-ci"
SCALE = 50 if PROFILE == "gradcli-long" else 1


def fuzz(examples: int):
    """The settings of one fuzz test: the active profile with ``examples`` examples (times the profile's
    scale)."""
    return settings(settings.get_profile(PROFILE), max_examples=examples * SCALE)


FUZZ_LIMITS = {"steps": 3_000, "elements": 200_000, "items": 200_000, "int_bits": 5_000, "call_depth": 40,
               "graph_nodes": 20_000, "file_bytes": 1_000_000, "nesting": 300}
FUZZ_ENV = {limits.SPECS[k].env: str(v) for k, v in FUZZ_LIMITS.items()}
WATCHDOG_SECONDS = 30


class Hang(BaseException):
    """An example ran past the watchdog (a BaseException, so no ``except Exception`` in gradcli hides it)."""


@contextmanager
def watchdog(seconds: float = WATCHDOG_SECONDS):
    def alarm(signum, frame):
        raise Hang(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture(autouse=True)
def _fuzz_limits():
    limits.configure(FUZZ_LIMITS, environ={})
    yield


# ------------------------------------------------------------------------------------------------- targets
INPUTS = ["x=[1., -2., 0.5]", "y=randn(2, 3)", "z=0.", "a=100."]
CONSTS = ["c=[1, 0, 2]", "m=ones(3, 2)"]


def check_program(program: str, **request) -> None:
    """Run ``program`` as ``gradcli grad`` would (parse, run, backward, render as JSON and tables): a result or
    a gradcli error, nothing else."""
    from rich.console import Console

    from gradcli.render.json import dumps, grad_result_to_dict
    from gradcli.render.table import nonfinite_warning, render_grad

    req = dict(program=program, inputs=INPUTS, consts=CONSTS, seed=0)
    req.update(request)
    with watchdog():
        try:
            result = compute(GradRequest(**req), write=lambda s: None, warn=lambda s: None)
        except GradcliError as e:
            e.format()
            assert e.exit_code in (1, 2)
            return
        json.loads(dumps(grad_result_to_dict(result)))
        render_grad(result, Console(file=io.StringIO(), width=120), np.float32)
        nonfinite_warning(result)


def check_parse(text: str) -> None:
    with watchdog():
        try:
            parse(text)
        except GradcliError as e:
            e.format()


# ---------------------------------------------------------------------------------------- the grammar
NAMES = sorted({n for n in REGISTRY if not n.startswith("_")} | set(BUILTIN_NAMES) | set(TENSOR_ATTRS)
               | {"x", "y", "z", "c", "m", "a", "b", "f", "g", "i", "n", "torch", "F", "nn", "functional",
                  "autograd", "no_grad", "enable_grad", "float32", "float64", "int64", "bool", "dim", "keepdim",
                  "reduction", "requires_grad", "dtype", "next_functions", "name", "append", "split", "join",
                  "undefined"} - {"if", "in"})
_NL, _INDENT, _DEDENT = "\x00n", "\x00i", "\x00d"


class _BoundedLark(LarkStrategy):
    """``hypothesis.extra.lark``'s strategy with a size budget. The expression grammar recurses at each of its
    thirteen precedence levels, so unbounded draws grow until they overrun hypothesis's buffer or its limit of
    nested spans (and a depth bound alone still lets them grow exponentially). Once ``budget`` rules have been
    expanded, or rules nest ``MAX_NESTING`` deep, every rule takes its shortest expansion, which always ends."""

    MAX_NESTING = 80  # below hypothesis's limit on nested spans (one per rule drawn)

    def __init__(self, grammar, start, explicit, budget: int):
        super().__init__(grammar, start, explicit, st.characters())
        _, rules, _ = grammar.grammar.compile([start], ())
        expansions = {}
        for rule in rules:
            expansions.setdefault(rule.origin.name, []).append(tuple(rule.expansion))
        self.shortest = {name: min(exps, key=len) for name, exps in expansions.items()}
        self.budget = budget
        self.fuel = budget
        self.nesting = 0

    def do_draw(self, data):
        self.fuel, self.nesting = self.budget, 0
        return super().do_draw(data)

    def draw_symbol(self, data, symbol, draw_state):
        if not isinstance(symbol, NonTerminal):
            return super().draw_symbol(data, symbol, draw_state)
        if self.fuel <= 0 or self.nesting >= self.MAX_NESTING:
            for e in self.shortest[symbol.name]:
                self.draw_symbol(data, e, draw_state)
            return
        self.fuel -= 1
        self.nesting += 1
        try:
            super().draw_symbol(data, symbol, draw_state)
        finally:
            self.nesting -= 1


@functools.lru_cache(maxsize=None)
def _grammar_tables():
    """gradcli's grammar as a Lark LALR parser and its compiled terminals: built once per test process, shared by
    both strategies."""
    from lark import Lark

    grammar = Lark(grammar_path().read_text(encoding="utf-8"), parser="lalr", start=["file_input", "spec_input"])
    terminals, _, ignore = grammar.grammar.compile(["file_input", "spec_input"], ())
    return grammar, terminals, ignore


def _grammar_strategy(start: str, budget: int):
    grammar, terminals, ignore = _grammar_tables()
    pad = lambda s: st.just(f" {s} ")  # noqa: E731 - keywords never run into names
    explicit = {t.name: pad(t.pattern.value) for t in terminals if t.pattern.type == "str"}
    explicit.update({name: st.just(" ") for name in ignore})
    explicit.update({
        # half the names are the run's variables, so that more programs get past name lookup
        "NAME": st.one_of(st.sampled_from(["x", "y", "z", "c", "m"]), st.sampled_from(NAMES)).map(lambda s: f" {s} "),
        "INT": st.sampled_from(["0", "1", "2", "3", "5", "64", "1000", "123456789012345678901234567890"]).map(
            lambda s: f" {s} "),
        "FLOAT": st.sampled_from(["0.", "0.5", "1.", "2.5", "1e-3", "1e308", ".5", "1e-320"]).map(lambda s: f" {s} "),
        "STRING": st.sampled_from(["'sum'", "'mean'", "'none'", "''", "'%d'", "'%s %s'", "'{}'", '"a\\nb"',
                                   "r'\\x'", "'\\u00e9'"]).map(lambda s: f" {s} "),
        "FSTRING": st.sampled_from(["f'{x}'", "f'{1:.3f}'", "f'{x!r}'", "f'{{}}'", "f'{y.sum():>8}'", "f'{'",
                                    "f'{i:{n}}'", "f'{1:99}'"]).map(lambda s: f" {s} "),
        "AUGOP": st.sampled_from(["+=", "-=", "*=", "/=", "@=", "**="]).map(lambda s: f" {s} "),
        "COMP_OP": st.sampled_from(["<", "<=", ">", ">=", "==", "!="]).map(lambda s: f" {s} "),
        "_NEWLINE": st.just(_NL), "_INDENT": st.just(_INDENT), "_DEDENT": st.just(_DEDENT),
    })
    return _BoundedLark(grammar, start, explicit, budget).map(layout)


def layout(raw: str) -> str:
    """Generated tokens (with newline/indent/dedent markers) as program text indented the way the markers say."""
    out, level, line_start = [], 0, True
    for piece in re.split("(\x00[nid])", raw):
        if piece == _NL:
            out.append("\n")
            line_start = True
        elif piece == _INDENT:
            level += 1
        elif piece == _DEDENT:
            level = max(level - 1, 0)
        elif piece.strip():
            if line_start:
                out.append("    " * level)
                line_start = False
            out.append(" ".join(piece.split()) + " ")
    return "".join(out)


PROGRAMS = _grammar_strategy("file_input", 400)
EXPRESSIONS = _grammar_strategy("spec_input", 150)

TOKENS = NAMES[:60] + ["x", "y", "(", ")", "[", "]", ",", ":", ".", "=", "+", "-", "*", "/", "**", "@", "//", "%",
                       "<", "==", "not", "and", "or", "if", "else", "for", "in", "while", "def", "return", "1",
                       "2.5", "0", "'a'", "f'{x}'", "True", "None", "...", "\n", "\n    ", "\n        ", ";", "#",
                       "\\\n", "lambda", "import", "with", "torch.", "F.", ".sum()", ".backward()", "requires_grad=True"]
TOKEN_SOUP = st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join)


# --------------------------------------------------------------------------------------------- the corpus
def _example_request(path: Path) -> dict:
    """An example's program with the inputs of the command in its first line (``# gradcli grad @... -i ...``)."""
    import shlex

    text = path.read_text(encoding="utf-8")
    words = shlex.split(text.splitlines()[0].lstrip("# "))
    req = {"program": text, "inputs": [], "consts": [], "seed": 0}
    for option, value in zip(words, words[1:]):
        if option in ("-i", "-c"):
            req["inputs" if option == "-i" else "consts"].append(value)
        elif option == "--gradient":
            req["gradient"] = value
    return req


def corpus() -> list[dict]:
    """Valid programs with their inputs: the shipped examples, and programs like the README's."""
    requests = [_example_request(p) for p in sorted((ROOT / "examples").glob("*.gc"))]
    programs = [
        "2 * dot(x, x)", "binary_cross_entropy_with_logits(matmul(x[:2], m.T) + 1., zeros(3))",
        "(x + 1).pow(2).sum()", "y = x * 2\ny.retain_grad()\n(y * y).sum()",
        "w = randn(3, 2, requires_grad=True)\nout = (x @ w).relu().sum()\nout",
        "def f(a, b=2):\n    return (a * b).sum()\nt = 0\nfor i in range(3):\n    t = t + f(x, i)\nt",
        "with torch.no_grad():\n    k = x * 2\n(x * k).sum()", "s = sum(y, dim=1, keepdim=True)\n(s ** 2).mean()",
        "x[c > 0].sum() + y[:, 1].norm()", "g = torch.autograd.grad((x * x).sum(), x)[0]\n(g * x).sum()",
        "print(f'{x.sum():.2f}', x.shape)\nwhere(x > 0, x, x * 0.1).sum()",
        "z2 = x.reshape(3, 1).expand(3, 4)\nz2.t().flatten().sum()",
    ]
    return requests + [{"program": p, "inputs": INPUTS, "consts": CONSTS, "seed": 0} for p in programs]


CORPUS = corpus()
_EXTREMES = ["0", "-1", "1e308", "float('nan')", "float('inf')", "10 ** 30", "[]", "()", "None", "'s'",
             "ones(0)", "x", "-x", "1e-45", "True", "2 ** 63", "zeros(3, 0)"]


@st.composite
def mutants(draw) -> dict:
    """A corpus request whose program has a few edits: deletions, duplications, insertions of tokens and extreme
    values, and swaps of numbers and names."""
    request = draw(st.sampled_from(CORPUS))
    text = request["program"]
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 12)))
        kind = draw(st.sampled_from(["delete", "duplicate", "token", "extreme", "number", "name", "char"]))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] * draw(st.integers(1, 3)) + text[j:]
        elif kind == "token":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif kind == "extreme":
            text = text[:i] + draw(st.sampled_from(_EXTREMES)) + text[j:]
        elif kind == "number":
            text = re.sub(r"\d+(\.\d*)?", lambda m: draw(st.sampled_from(["0", "1", "-3", "1e9", "2.5", "100000"])),
                          text, count=draw(st.integers(1, 3)))
        elif kind == "name":
            names = re.findall(r"[A-Za-z_]\w*", text)
            if names:
                old = draw(st.sampled_from(names))
                text = re.sub(rf"\b{re.escape(old)}\b", draw(st.sampled_from(NAMES)), text)
        else:
            text = text[:i] + draw(st.characters()) + text[i + 1:]
    return dict(request, program=text)


# ---------------------------------------------------------------------------------------------- the tests
@fuzz(600)
@given(st.text(max_size=200))
def test_random_text(text):
    check_parse(text)
    check_program(text)


@fuzz(600)
@given(TOKEN_SOUP)
def test_token_soup(text):
    check_program(text)


@fuzz(200)
@given(EXPRESSIONS)
def test_grammar_expressions(text):
    check_program(text)


@fuzz(100)
@given(PROGRAMS)
def test_grammar_programs(text):
    check_parse(text)
    check_program(text)


@fuzz(600)
@given(mutants(), st.booleans())
def test_mutated_programs(request, anomaly):
    check_program(**request, anomaly=anomaly)


def test_the_corpus_runs():
    # the mutations start from programs that work: a broken corpus would fuzz only the error paths
    for request in CORPUS:
        compute(GradRequest(**request), write=lambda s: None)


SPECS = st.one_of(st.sampled_from(["[1., 2., 3.]", "1.", "randn(3)", "ones(2, 3)", "arange(4.0)", "[[1, 2]]",
                                   "", "[", "x", "@/no/such.npy", "@" + str(ROOT / "README.md"), "tensor(True)",
                                   "'text'", "[1, [2]]", "1e400", "zeros(0)", "ones(1000, 1000)"]),
                  EXPRESSIONS.filter(lambda s: len(s) < 80))


@st.composite
def command_lines(draw) -> list[str]:
    program = draw(st.one_of(st.sampled_from(CORPUS).map(lambda r: r["program"]), mutants().map(lambda r: r["program"]),
                             EXPRESSIONS, st.text(max_size=30)))
    args = ["grad"]
    for _ in range(draw(st.integers(0, 5))):
        option = draw(st.sampled_from(["-i", "-c", "--gradient", "--repeat", "--zero-grad", "--seed", "--dtype",
                                       "--json", "--max-steps", "--limit", "--anomaly", "--debug"]))
        if option in ("-i", "-c"):
            name = draw(st.sampled_from(["x", "y", "z", "c", "m", "w", "torch", "_", "x y", "1x", "", "x="]))
            args += [option, f"{name}={draw(SPECS)}"]
        elif option == "--gradient":
            args += [option, draw(SPECS)]
        elif option in ("--repeat", "--seed", "--max-steps"):
            args += [option, draw(st.sampled_from(["1", "2", "0", "-1", "10001", "abc", "99999999999999999999"]))]
        elif option == "--dtype":
            args += [option, draw(st.sampled_from(["float32", "float64", "int64", "bfloat16", ""]))]
        elif option == "--limit":
            args += [option, draw(st.sampled_from(["elements=100", "steps=10", "nesting=3", "chars=10", "x=1",
                                                   "items=none", "time=-1", "memory=1K", "graph_nodes=2"]))]
        else:
            args.append(option)
    return args + ["--", program]


@fuzz(150)
@given(command_lines())
def test_command_lines(args):
    with watchdog():
        r = CliRunner().invoke(app, args, env=FUZZ_ENV)
    assert r.exception is None or isinstance(r.exception, SystemExit), (args, repr(r.exception))
    assert r.exit_code in (0, 1, 2), (args, r.exit_code, r.output)
    if "--debug" not in args:
        assert "Traceback" not in r.stderr, (args, r.stderr)
    if r.exit_code == 0 and "--json" in args:
        json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    elif r.exit_code != 0:
        assert r.stdout == "" or "--json" not in args


def _npy_bytes(draw) -> bytes:
    arr = draw(st.sampled_from([np.arange(6.0).reshape(2, 3), np.array(3, dtype=np.int64), np.zeros(0),
                                np.array([True, False]), np.ones((2, 2), dtype=np.float16)]))
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=False)
    data = bytearray(buf.getvalue())
    for _ in range(draw(st.integers(0, 3))):
        if data:
            i = draw(st.integers(0, len(data) - 1))
            data[i] = draw(st.integers(0, 255))
    if draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]
    return bytes(data)


@st.composite
def data_files(draw):
    suffix = draw(st.sampled_from([".json", ".csv", ".npy"]))
    if suffix == ".npy":
        content = _npy_bytes(draw)
    elif draw(st.booleans()):
        content = draw(st.binary(max_size=200))
    else:
        content = draw(st.text(alphabet=st.sampled_from(list("0123456789.,-+eE[]{}\"nula \n\tNaIfity#x")),
                               max_size=200)).encode()
    return suffix, content


@fuzz(400)
@given(data_files())
def test_data_files(tmp_path_factory, file):
    from gradcli.language.specs import load_file

    suffix, content = file
    path = tmp_path_factory.mktemp("fuzz") / f"data{suffix}"
    path.write_bytes(content)
    with watchdog():
        try:
            arr = load_file(str(path))
        except GradcliError as e:
            e.format()
            return
    assert isinstance(arr, np.ndarray)
    check_program("(x * 1).sum()", inputs=[f"x=@{path}"], consts=[])


# ------------------------------------------------------------------------------------------- regressions
# Every crash the fuzzers found, as the minimal example they shrank it to (and what was wrong). Each must now
# give a result or a gradcli error.
REGRESSION_COMMAND_LINES = [
    (["grad", "--seed", str(2**64), "--", "x * 2"], "numpy's generator refused a negative seed with a ValueError "
     "(a traceback); since seeds are torch.manual_seed's, -1 is valid and 2**64 is the seed it refuses"),
]


@pytest.mark.parametrize("args, what", REGRESSION_COMMAND_LINES)
def test_command_line_regressions(args, what):
    r = CliRunner().invoke(app, args)
    assert isinstance(r.exception, SystemExit) and r.exit_code == 2 and "Traceback" not in r.stderr


REGRESSIONS = [
    ("l = [1]\nl.append(l)\ntensor(l)", "dtype inference walked a list containing itself forever (a hang)"),
    ("f'{" + "(" * 400 + "1" + ")" * 400 + "}'",
     "limit errors raised while building an f-string field escaped as Lark's VisitError"),
]


@pytest.mark.parametrize("program, what", REGRESSIONS)
def test_regressions(program, what):
    check_program(program)


REGRESSION_FILES = [
    (".npy", b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': \x002, 3), }" + b" " * 58 +
     b"\n" + bytes(48), "numpy's header parser raised tokenize.TokenError, which escaped as an internal error"),
]


@pytest.mark.parametrize("suffix, content, what", REGRESSION_FILES)
def test_file_regressions(tmp_path, suffix, content, what):
    from gradcli.language.specs import load_file

    path = tmp_path / f"data{suffix}"
    path.write_bytes(content)
    with pytest.raises(GradcliError):
        load_file(str(path))

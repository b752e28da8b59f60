"""The builder runs inside the parser (gradcli.language.grammar.parse_into: Lark's LALR tables, lexer and Indenter,
no parse tree). These tests hold it to what building from Lark's own tree gives: Lark parses the text into a tree
(``propagate_positions``, ``maybe_placeholders``), Lark's transformer walks it and calls the same builder methods
with each tree node's ``meta``, and the two programs must be equal node for node, positions included -- or the
two must fail with the same error at the same place. The texts: every program of the corpus and of examples/,
the batch benchmark's entries, texts with several errors, and programs and expressions drawn from the grammar
(the fuzzer's strategies)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from lark import Token as LarkToken
from lark import Transformer_NonRecursive
from lark.exceptions import VisitError

from gradcli.engine.errors import GradcliError
from gradcli.language import nodes as n
from gradcli.language.build import _HANDLERS, _Builder, build_program, parse_expression
from gradcli.language.grammar import Token, parse

from helpers import ROOT

_SETTINGS = dict(max_examples=40, deadline=None, derandomize=True, database=None)


class _FromTree(Transformer_NonRecursive):
    """The builder's methods called from Lark's tree, as gradcli built programs before parse_into."""

    def __init__(self, builder):
        super().__init__()
        self.builder = builder

    def __default__(self, data, children, meta):
        return _HANDLERS[data](self.builder, meta, children)


def _reference(text: str, start: str = "file_input"):
    tree = parse(text, start)
    try:
        built = _FromTree(_Builder(text, "<input>")).transform(tree)
    except VisitError as e:
        raise e.orig_exc from None
    return built if start == "spec_input" else n.Program(built, text, "<input>")


def dump(value):
    """A program as nested plain data: node type, every field, positions included."""
    if isinstance(value, (n.Node, n.Program)):
        return (type(value).__name__,) + tuple((f, dump(getattr(value, f)))  # noqa: B009
                                               for f in n.fields(value))
    if isinstance(value, (list, tuple)):
        return [dump(v) for v in value]
    if isinstance(value, (LarkToken, Token)):  # (Lark's tree holds Lark's; the driver gives its own)
        return ("Token", value.type, str(value), value.line, value.column)
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return (type(value).__name__, repr(value))


def _outcome(build, text):
    try:
        return "ok", dump(build(text))
    except GradcliError as e:
        return "error", type(e).__name__, e.format()


def assert_same(text: str, start: str = "file_input"):
    new = build_program if start == "file_input" else parse_expression
    assert _outcome(new, text) == _outcome(lambda t: _reference(t, start), text), text


def _texts() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests" / "corpus" / "programs").iterdir())
             if p.suffix == ".py"]
    examples = ROOT / "examples"
    texts += [p.read_text(encoding="utf-8") for p in sorted(examples.glob("*.gc")) + sorted(examples.glob("*.py"))]
    texts += [line for line in (examples / "exprs.txt").read_text(encoding="utf-8").splitlines()
              if line.strip() and not line.startswith("#")]
    texts += [json.loads(line)["program"] for line in (examples / "cases.jsonl").read_text(encoding="utf-8")
              .splitlines() if line.strip()]
    return texts


def test_corpus_and_examples_build_the_same_programs():
    texts = _texts()
    assert len(texts) > 60
    for text in texts:
        assert_same(text)


def test_batch_benchmark_entries_build_the_same_programs():
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from run import BATCH_TEMPLATES
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    for template in BATCH_TEMPLATES:
        assert_same(template.format(a=1.5, b=-0.25, c=3))


@pytest.mark.parametrize("text", [
    # positions of rules that start with an inlined rule, a placeholder or a bracket
    "y = x[(a):b, ::2, 1:]\nz = x[:, None]",
    "def f(a, b=(1), *c, d, **e):\n    return lambda u, *v: (u, v)\n",
    "@dec\nclass A(B):\n    def __init__(self):\n        super().__init__()\n",
    "try:\n    pass\nexcept (ValueError) as e:\n    raise\nelse:\n    x = 1\nfinally:\n    del x\n",
    "from torch import (nn, optim as o,)\nimport torch.nn.functional as F, numpy\n%matplotlib inline\n",
    "print(f'{x!r:>{w}} {{}} {y[0]:.3f}', *a, sep='', **k)\nassert not a < b <= c is not None, 'm'\n",
    "x = [i * j for i in range(3) if i for j in (1, 2)]\ny = {k: v for k, v in d.items()}\ng = sum(i for i in x)",
    "while x:\n    x -= 1\n    if x: break\n    elif y: continue\n    else: pass\nwith no_grad() as g: y = -x ** 2",
    "def gen():\n    global a\n    x = yield 1\n    yield from range(3)\n",
    # indentation: tabs, comment and blank lines, brackets over lines, blocks closed at the end of the text
    "if x:\n\tif y:\n\t\tz = 1\n# c\n\n    \nw = [1,\n  2]\n",
    "def f():\n    return (1 +\n        2)  # c\n  # comment\nfor i in x:\n    while i:\n        i -= 1",
    'x = 1 + \\\n    2\ny = """a\nb"""\nz = (\n)',
    # the lexer of the parser's state: a keyword where only a name fits, characters no terminal takes
    "y = x.from\nz = x.if",
    "x = $",
    "x = 1 ?",
    "x = 1 + if",
    "print('a' 'b' f'{1}')\n",
    # errors: the first one the parser meets is reported, before any the builder would find earlier
    "1 = x\ny = (",
    "f(a=1, 2)\ny = )",
    "f(a=1, 2)\ny = 2",
    "x = 1\n  y = 2\n",
    "if x:\n    y\n  z\n",
    # a block's body missing (the parser's error at the next line's token, Lark's lexer's where no terminal of
    # the state matches, at a dedent), a dedent to no level where a body is missing too, a block at the end
    "def g(t):\nreturn t\n",
    "def g(t):\ny = 1\n",
    "def g(t):\n    if t:\nreturn t\n",
    "def g(t):\n    for i in t:\n  return t\n",
    "class A:\n    @dec\nx = 1\n",
    "def g(t):\n    if t:",
    "match x:\n    case 1: pass\n",
    "x = f'{'",
    "x.__class__ = 1; 1 +",
    "def f(a=1, b): pass",
    "(" * 300 + ")" * 300,
    "x" + ".a" * 150,
])
def test_tricky_texts_build_the_same_programs(text):
    assert_same(text)


def _strategies():
    """tests/robust/test_fuzz.py's grammar strategies, from the module pytest collects (imported under the name
    pytest gives it, ``test_fuzz`` from its folder, so that its strategies are built once per test process)."""
    import importlib
    import sys
    from pathlib import Path

    folder = str(Path(__file__).resolve().parent.parent / "robust")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module("test_fuzz")


@settings(**_SETTINGS)
@given(_strategies().PROGRAMS)
def test_grammar_programs_build_the_same(text):
    assert_same(text)


@settings(**_SETTINGS)
@given(_strategies().EXPRESSIONS)
def test_grammar_expressions_build_the_same(text):
    assert_same(text, "spec_input")


def test_a_rule_without_a_builder_method_is_refused():
    """parse_into refuses a handler table that lacks a rule (Lark's transformer would have left a Tree in the
    program)."""
    from gradcli.language.grammar import _Driver

    with pytest.raises(LookupError, match="'call'"):
        _Driver({k: v for k, v in _HANDLERS.items() if k != "call"})


def test_nesting_limit_still_applies():
    from gradcli.engine import limits
    from gradcli.engine.context import RunContext

    with RunContext(limits=limits.Limits(nesting=20)):
        with pytest.raises(GradcliError, match="nest"):
            build_program("y = " + "-" * 30 + "x")
        build_program("y = " + "-" * 15 + "x")
        assert_same("y = " + "(" * 25 + "x" + ")" * 25)  # refused by the lexer, at the 21st bracket
        assert_same("y = f'{" + "(" * 25 + "x" + ")" * 25 + "}'")  # in an f-string's field, parsed on its own


def test_lark_tree_path_unchanged():
    """``parse`` still returns Lark's tree (the batch reader uses it to tell a complete entry)."""
    assert parse("x = 1\n").data == "file_input"


def test_the_generated_tables_are_the_grammars():
    """grammars/gradcli.tables.json (what parse_into runs on, without building Lark's parser) is what
    scripts/gen_parse_tables.py makes from the grammar now: rerun the script after changing the grammar."""
    import importlib.util

    from gradcli.language import grammar

    spec = importlib.util.spec_from_file_location("gen_parse_tables", ROOT / "scripts" / "gen_parse_tables.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    fresh = grammar.tables_from_lark()
    on_disk = grammar.tables_path().read_text(encoding="utf-8")
    assert on_disk == script.render(fresh), "grammars/gradcli.tables.json is stale: run scripts/gen_parse_tables.py"
    assert grammar.parse_tables() == fresh == json.loads(on_disk)
    # the driver's tables are Lark's: same number of states, actions and lexers, and the rules in Lark's order
    lark = grammar.parser()
    assert len(fresh["states"]) == len(lark.parser.parser.parser.parse_table.states)
    assert [r[0] for r in fresh["rules"]] == [r.origin.name for r in lark.rules]


def test_stale_or_broken_tables_are_not_used(tmp_path):
    from gradcli.language import grammar

    text = grammar.grammar_path().read_text(encoding="utf-8")
    assert grammar.read_tables(grammar.tables_path(), text) is not None
    assert grammar.read_tables(grammar.tables_path(), text + "\n// edited\n") is None  # the grammar changed
    assert grammar.read_tables(tmp_path / "missing.json", text) is None
    broken = tmp_path / "broken.json"
    broken.write_text(grammar.tables_path().read_text(encoding="utf-8")[:1000], encoding="utf-8")
    assert grammar.read_tables(broken, text) is None
    for change in ({"format": 2, "lark": "1.3.1"},  # the layout before (it named the Lark that made it)
                   {"options": {}}):  # made for a parser with other options
        other = json.loads(grammar.tables_path().read_text(encoding="utf-8"))
        other["fingerprint"].update(change)
        (tmp_path / "other.json").write_text(json.dumps(other), encoding="utf-8")
        assert grammar.read_tables(tmp_path / "other.json", text) is None, change


def test_the_tables_do_not_depend_on_which_lark_is_installed():
    # The fingerprint is the grammar's text, the file's layout and the options: nothing of the installed Lark
    # (tests/cli/test_startup_imports.py runs gradcli with a Lark of another version).
    from gradcli.language import grammar

    tables = json.loads(grammar.tables_path().read_text(encoding="utf-8"))
    assert sorted(tables["fingerprint"]) == ["format", "grammar", "options"]


def test_the_drivers_tokens_behave_as_larks():
    # grammar.Token stands in for lark.lexer.Token so that parsing imports no Lark: the same string, attributes,
    # equality, repr and new_borrow_pos; as_lark() hands Lark its own for its exceptions.
    args = ("NAME", "x", 4, 2, 3, 2, 4, 5)
    ours, larks = Token(*args), LarkToken(*args)
    assert ours == larks == "x" and hash(ours) == hash("x") and repr(ours) == repr(larks) == "Token('NAME', 'x')"
    assert not ours == Token("STRING", "x") and not larks == LarkToken("STRING", "x")  # (only ==: Lark's != is str's)
    attrs = ("type", "value", "start_pos", "line", "column", "end_line", "end_column", "end_pos")
    assert [getattr(ours, a) for a in attrs] == [getattr(larks, a) for a in attrs]
    borrowed, lark_borrowed = Token.new_borrow_pos("_DEDENT", "", ours), LarkToken.new_borrow_pos("_DEDENT", "", larks)
    assert [getattr(borrowed, a) for a in attrs] == [getattr(lark_borrowed, a) for a in attrs]
    as_lark = ours.as_lark()
    assert type(as_lark) is LarkToken and [getattr(as_lark, a) for a in attrs] == [getattr(larks, a) for a in attrs]


def test_node_classes_take_their_fields_by_position_or_keyword():
    # nodes._Fields: the annotated attributes are the fields (after line and col), a class-body value is a default
    call = n.Call(1, 2, n.Name(1, 2, "f"), [], [])
    assert n.fields(call) == ("line", "col", "func", "args", "kwargs", "kwstars")
    assert (call.kwstars, call.func.id) == (None, "f")
    assert n.Call(line=3, col=4, func=None, args=[1], kwargs=[], kwstars=[5]).kwstars == [5]
    assert not hasattr(call, "__dict__") and n.fields(n.Pass(1, 1)) == ("line", "col")
    assert n.fields(n.Program([], "", "f.py")) == ("body", "source", "filename")
    assert n.Program([], "").filename == "<input>"
    with pytest.raises(TypeError, match="missing its field 'kwargs'"):
        n.Call(1, 2, None, [])
    with pytest.raises(TypeError, match="has no field 'nope'"):
        n.Name(1, 2, "x", nope=1)
    with pytest.raises(TypeError, match="takes 3 arguments, not 4"):
        n.Name(1, 2, "x", "y")
    with pytest.raises(AttributeError):
        call.nope = 1


def test_tokens_read_with_every_terminal_then_each_states_own_expression():
    # _Driver._lex reads a token with one expression of all terminals, in an order of priority that agrees with
    # every lexer's, and falls back to the state's own expression where the match is a terminal the state does not
    # take; a state that has read grammar._HOT tokens gets its own. The programs must be Lark's all along: texts
    # where the first terminal to match is not one the state takes (``**`` after ``*``-only states, keywords
    # after an expression, ``not in``/``is not``, an f-string, a magic), read cold and then hot.
    from gradcli.language import grammar

    tables = grammar.parse_tables()
    order = {name: i for i, (name, _) in enumerate(tables["terminals"])}
    for lexer in tables["lexers"]:  # each lexer's order is the union's, restricted
        assert [order[n] for n in lexer["names"]] == sorted(order[n] for n in lexer["names"])
    texts = ["def f(*args, **kw):\n    return args[0] ** 2 if kw else -x\n",
             "y = [a for a in range(3) if a not in (1,) and a is not None or not a]\n",
             "z = f'{x!r:>{w}}' + rb'\\x00' + \"\"\"doc\"\"\"\n",
             "%matplotlib inline\nx = 1e-3 ** -2 // 3 @ w; x **= 2; lambda *a, b=1: (yield)\n",
             "with torch.no_grad():\n    for i, (a, b) in enumerate(zip(p, q)):\n        a -= lr * b.grad\n"]
    grammar._Driver._cache.clear()  # every state cold
    for text in texts:
        assert_same(text)
    driver = grammar._Driver.get(_HANDLERS)
    assert driver.union is not None
    for _ in range(grammar._HOT):  # the same states again, until they read with their own expressions
        for text in texts:
            assert_same(text)
    assert driver.compiled and any(s[grammar._OWN] is not None for s in driver.scanners.values())
    for text in texts:
        assert_same(text)


def test_a_command_compiles_one_expression_for_its_tokens():
    import os
    import subprocess
    import sys

    code = ("from gradcli.language import build, grammar\n"
            "build.build_program('x = tensor([1., 2.], requires_grad=True)\\ny = (x * x).sum()\\ny')\n"
            "build.parse_expression('arange(4.0)')\n"
            "d = grammar._Driver.get(build._HANDLERS)\n"
            "print(d.union is not None, len(d.compiled), len(d.scanners))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    union, own, states = p.stdout.split()
    assert (union, own) == ("True", "0") and int(states) > 10, p.stderr

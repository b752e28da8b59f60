"""The infix operators are the grammar plus one table (gradcli.ops.operators): the two agree, and everything else
(Tensor's methods, the builder, the interpreter) follows the table, with PyTorch's results."""

from __future__ import annotations

import re

import numpy as np
import pytest
from lark.grammar import NonTerminal, Terminal

import gradcli as G
from gradcli.engine.errors import GradcliError
from gradcli.language.build import build_program
from gradcli.language.grammar import parser
from gradcli.language.interpreter import Interpreter
from gradcli.ops.operators import BINARY, COMPARISONS, TENSOR_METHODS, UNARY

# Python's augmented-assignment and comparison tokens, to find which of them the grammar's terminals accept.
PYTHON_AUGOPS = ("+=", "-=", "*=", "/=", "//=", "%=", "@=", "**=", "&=", "|=", "^=", ">>=", "<<=", ":=")
PYTHON_COMPARISONS = ("<", "<=", ">", ">=", "==", "!=", "<>", "is", "in")


def _symbol(sym) -> str | None:
    """The text of an anonymous string terminal of the grammar ("+"), else None."""
    if not isinstance(sym, Terminal) or not sym.filter_out:
        return None
    pattern = parser().get_terminal(sym.name).pattern
    return pattern.value if pattern.type == "str" else None


def _is_operator(text: str | None) -> bool:
    # operators are punctuation; "=" is assignment and keyword arguments, "or"/"not" are boolean keywords
    return text is not None and not text.isalnum() and text != "="


def grammar_infix() -> dict[str, str]:
    """alias -> symbol of every ``left "op" right -> alias`` rule of the grammar."""
    out = {}
    for rule in parser().rules:
        e = rule.expansion
        if rule.alias and len(e) == 3 and isinstance(e[0], NonTerminal) and isinstance(e[2], NonTerminal):
            if _is_operator(_symbol(e[1])):
                out[rule.alias] = _symbol(e[1])
    return out


def grammar_prefix() -> dict[str, str]:
    """alias -> symbol of every ``"op" operand -> alias`` rule whose operand is the rule itself (``-x``)."""
    out = {}
    for rule in parser().rules:
        e = rule.expansion
        if rule.alias and len(e) == 2 and isinstance(e[1], NonTerminal) and e[1] == rule.origin:
            if _is_operator(_symbol(e[0])):
                out[rule.alias] = _symbol(e[0])
    return out


def _accepts(terminal: str, candidates) -> set[str]:
    pattern = parser().get_terminal(terminal).pattern.to_regexp()
    return {c for c in candidates if re.fullmatch(pattern, c)}


def test_grammar_infix_aliases_are_the_table():
    assert grammar_infix() == {alias: row.symbol for alias, row in BINARY.items()}


def test_grammar_prefix_aliases_are_the_table():
    assert grammar_prefix() == {alias: row.symbol for alias, row in UNARY.items()}


def test_grammar_augmented_assignments_are_the_table():
    assert _accepts("AUGOP", PYTHON_AUGOPS) == {row.symbol + "=" for row in BINARY.values()}


def test_grammar_comparisons_are_the_table():
    assert _accepts("COMP_OP", PYTHON_COMPARISONS) == set(COMPARISONS)


@pytest.mark.parametrize("alias", list(BINARY))
def test_builder_names_each_operator_by_its_alias(alias):
    sym = BINARY[alias].symbol
    expr, aug = build_program(f"a {sym} b\na {sym}= b").body
    assert (expr.value.op, aug.op) == (alias, alias)


@pytest.mark.parametrize("alias", list(UNARY))
def test_builder_names_each_prefix_operator_by_its_alias(alias):
    (stmt,) = build_program(f"{UNARY[alias].symbol}a").body
    assert stmt.value.op == alias


def test_prefix_operators_in_a_program(torch):
    x, tx = G.tensor([1.5, -2.0], requires_grad=True), torch.tensor([1.5, -2.0], requires_grad=True)
    it = Interpreter(write=lambda s: None)
    it.globals["x"] = x
    _same(it.run(build_program("-x")), -tx)
    assert it.run(build_program("+x")) is x
    assert it.run(build_program("-(2) + +3 + ~4")) == -2 + 3 + ~4
    with pytest.raises(GradcliError, match="bad operand type for unary ~: 'Tensor'"):
        it.run(build_program("~x"))


def test_tensor_methods_are_the_table():
    methods = TENSOR_METHODS
    for row in BINARY.values():
        for name in (f"__{row.protocol}__", f"__r{row.protocol}__", f"__i{row.protocol}__"):
            if name == "__imatmul__":  # PyTorch computes x @= m out of place: Tensor has no __imatmul__
                assert name not in methods and name not in vars(G.Tensor)
                continue
            assert vars(G.Tensor)[name] is methods[name], name
    assert "__invert__" not in vars(G.Tensor)  # ~x: gradcli has no bitwise_not
    for row in COMPARISONS.values():
        assert vars(G.Tensor)[f"__{row.protocol}__"] is row.method


def _operands(m, alias):
    """Two operands for ``alias`` in gradcli or torch: integer tensors for the bitwise operators (and
    ``//``, ``%`` to cover their integer kernels), float tensors requiring grad for the others."""
    if alias.startswith("bit"):
        return m.tensor([6, 3, 12]), m.tensor([3, 5, 10])
    if alias == "matmul":
        return (m.tensor([[1.5, -2.0], [0.5, 3.0]], requires_grad=True),
                m.tensor([[0.25, 1.0], [2.0, -1.0]], requires_grad=True))
    return m.tensor([1.5, 2.0, 4.0], requires_grad=True), m.tensor([0.5, 3.0, 2.5], requires_grad=True)


def _same(got, want):
    assert type(want).__name__ == "Tensor" and isinstance(got, G.Tensor)
    np.testing.assert_allclose(got.data, want.detach().numpy(), rtol=1e-6)
    assert str(got.data.dtype) == str(want.dtype).replace("torch.", "")
    want_fn = None if want.grad_fn is None else type(want.grad_fn).__name__
    assert (None if got.grad_fn is None else got.grad_fn.name()) == want_fn


@pytest.mark.parametrize("alias", list(BINARY))
def test_each_operator_in_a_program_is_pytorchs(alias, torch):
    sym = BINARY[alias].symbol
    a, b = _operands(G, alias)
    ta, tb = _operands(torch, alias)
    number = 3 if alias.startswith("bit") else 2.0
    for text, want in [(f"a {sym} b", lambda: BINARY[alias].apply(ta, tb)),
                       (f"{number} {sym} a" if alias != "matmul" else "[[1., 2.]] @ a",
                        lambda: BINARY[alias].apply(number, ta) if alias != "matmul"
                        else torch.tensor([[1., 2.]]) @ ta)]:
        it = Interpreter(write=lambda s: None)
        it.globals.update(a=a, b=b)
        _same(it.run(build_program(text)), want())


@pytest.mark.parametrize("alias", list(BINARY))
def test_each_augmented_assignment_is_pytorchs(alias, torch):
    sym = BINARY[alias].symbol
    a, b = (t.detach() for t in _operands(G, alias))
    ta, tb = (t.detach() for t in _operands(torch, alias))
    it = Interpreter(write=lambda s: None)
    it.globals.update(a=a, b=b)
    it.run(build_program(f"c = a\nc {sym}= b"))
    c = it.globals["c"]
    tc = ta
    tc = BINARY[alias].apply(tc, tb) if alias == "matmul" else {
        "add": tc.__iadd__, "sub": tc.__isub__, "mul": tc.__imul__, "div": tc.__itruediv__,
        "floordiv": tc.__ifloordiv__, "mod": tc.__imod__, "pow": tc.__ipow__, "bitor": tc.__ior__,
        "bitxor": tc.__ixor__, "bitand": tc.__iand__}[alias](tb)
    _same(c, tc)
    # in place (the name a still sees the new values) exactly where PyTorch is
    assert (c is a) == (tc is ta)

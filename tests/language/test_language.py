"""The language: grammar (precedence, literals, statements), builder checks, interpreter semantics."""

from __future__ import annotations

import pytest

import gradcli as G
from gradcli.engine.errors import EvalError, GradcliError, GradcliSyntaxError
from gradcli.language.build import build_program, decode_string
from gradcli.language.interpreter import Interpreter


def run(text, **env):
    out = []
    it = Interpreter(write=out.append)
    it.globals.update(env)
    value = it.run(build_program(text))
    return value, "".join(out), it


@pytest.mark.parametrize("text, expected", [
    ("2 + 3 * 4", 14), ("(2 + 3) * 4", 20), ("-2 ** 2", -4), ("2 ** -1", 0.5), ("2 ** 3 ** 2", 512),
    ("10 - 4 - 3", 3), ("8 / 4 / 2", 1.0), ("7 // 2", 3), ("7 % 4", 3), ("1e-3", 0.001), ("4.", 4.0),
    (".5", 0.5), ("True and not False", True), ("1 < 2 < 3", True), ("3 > 2 > 2", False),
    ("1 if False else 2", 2), ("'a\\n' + \"b\"", "a\nb"), ("[1, [2, 3]]", [1, [2, 3]]), ("(1,)", (1,)),
    ("()", ()), ("None", None), ("len([1, 2, 3])", 3), ("max(2, 5)", 5), ("abs(-3)", 3), ("float(3)", 3.0),
    ("1; 2", 2), ("x = 5\nx", 5),
])
def test_python_expressions(text, expected):
    assert run(text)[0] == expected


def test_tensor_expressions_and_methods():
    x = G.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    value, _, _ = run("(x @ x.T)[0, 1] + x[:, 1].sum() * x[1:2].mean()", x=x)
    assert value.item() == pytest.approx(11 + 6 * 3.5)
    value, _, _ = run("torch.nn.functional.relu(x - 2).pow(2)", x=x)
    assert value.tolist() == [[0.0, 0.0], [1.0, 4.0]] and value.grad_fn.name() == "PowBackward0"
    value, _, _ = run("x.grad_fn", x=x)
    assert value is None
    value, _, _ = run("randn(5, 3, requires_grad=True).shape")
    assert tuple(value) == (5, 3)
    value, _, _ = run("F.binary_cross_entropy_with_logits(x, torch.zeros(2, 2), reduction='sum')", x=x)
    assert value.grad_fn.name() == "BinaryCrossEntropyWithLogitsBackward0"


def test_print_and_fstring():
    _, out, _ = run("x = torch.arange(4.0)\nprint('x is', x)\nprint(f'{x.sum()} and {2.5:.2f}')")
    assert out == "x is tensor([0., 1., 2., 3.])\ntensor(6.) and 2.50\n"


def test_control_flow_and_functions():
    text = ("def f(a):\n    b = a * 2\n    while b.norm() < 1000:\n        b = b * 2\n    if b.sum() > 0:\n"
            "        c = b\n    else:\n        c = 100 * b\n    return c\n"
            "a = torch.tensor(100., requires_grad=True)\nd = f(a)\nd.backward()\na.grad == d / a")
    value, _, it = run(text)
    assert str(value) == "tensor(True)" and it.globals["a"].grad.item() == 16.0
    value, _, _ = run("t = 0\nfor i in range(5):\n    if i == 3:\n        continue\n    t += i\nt")
    assert value == 7


def test_with_no_grad_block():
    value, _, it = run("w = ones(2, requires_grad=True)\nwith torch.no_grad():\n    z = w * 2\nz.requires_grad")
    assert value is False


@pytest.mark.parametrize("text, line, col", [
    ("x = (1 +", 1, 9), ("1 +* 2", 1, 4), ("f(a=1, 2)", 1, 8), ("2 = x", 1, 1), ("f() = 1", 1, 1),
    ("if x:\nprint(1)", 2, 1), ("x = $", 1, 5),
])
def test_syntax_errors_have_positions(text, line, col):
    with pytest.raises(GradcliSyntaxError) as e:
        build_program(text)
    assert (e.value.line, e.value.column) == (line, col)
    assert e.value.exit_code == 2


@pytest.mark.parametrize("text, type_, fragment", [
    ("x.__class__", "SyntaxError", "'__class__'"), ("__import__('os')", "SyntaxError", "'__import__'"),
    ("().__class__", "SyntaxError", "'__class__'"), ("getattr(1, 'real')", "NameError", "getattr"),
    ("eval('1')", "NameError", "eval"), ("import os", "ModuleNotFoundError", "os"),
    ("torch.does_not_exist(1)", "AttributeError", "module 'torch' has no attribute 'does_not_exist'"),
    ("ones(2, 2).numpy", "RuntimeError", ""),
])
def test_language_refuses_python_escapes(text, type_, fragment):
    x = G.ones(2)
    try:
        run(text, x=x)
    except GradcliError as e:
        assert e.type == type_ and fragment in e.message
    else:
        assert type_ == "RuntimeError"  # attribute access that is allowed (numpy method is not called)


def test_step_limit_and_recursion_limit():
    it = Interpreter(max_steps=1000)
    with pytest.raises(EvalError, match="more than 1,000 statements"):
        it.run(build_program("while True:\n    pass"))
    with pytest.raises(EvalError) as e:
        Interpreter().run(build_program("def f(n):\n    return f(n + 1)\nf(0)"))
    assert e.value.type == "RecursionError"


def test_decode_string_escapes():
    assert decode_string(r"'a\tb\x41\u00e9\\'") == "a\tbA\u00e9\\"
    assert decode_string(r"r'a\n'") == "a\\n"

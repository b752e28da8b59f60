"""Generators, comprehensions, lambdas, classes and caught exceptions expose no Python internals and stay within
the limits."""

from __future__ import annotations

import pytest

from gradcli.engine import limits
from gradcli.engine.errors import GradcliError, GradcliSyntaxError, LimitError
from gradcli.language.build import build_program
from gradcli.language.interpreter import Interpreter


def run(text, **kw):
    out: list = []
    Interpreter(write=out.append, **kw).run(build_program(text))
    return "".join(out)


@pytest.mark.parametrize("text", [
    "g = (x for x in range(3))\ng.gi_frame",
    "g = (x for x in range(3))\ng.gi_code",
    "d = {}\nd.__reduce__", "d = {}\nd.items.__self__",
    "f = lambda: 1\nf.body", "f = lambda: 1\nf.scope", "def g():\n    n = 1\n    return lambda: n\ng().defaults",
])
def test_generators_and_dicts_expose_no_python_attribute(text):
    with pytest.raises(GradcliError) as e:
        run(text)
    assert e.value.type in ("AttributeError", "SyntaxError")


@pytest.mark.parametrize("text", ["{}.__class__",
                                  "(lambda: 1).__closure__", "(lambda: 1).__globals__"])
def test_dunder_attributes_refused_as_syntax(text):
    with pytest.raises(GradcliSyntaxError):
        run(text)


def test_huge_comprehension_hits_the_items_limit():
    with pytest.raises(LimitError) as e:
        run(f"[0 for i in range({limits.current.items + 10})]")
    assert "comprehension" in e.value.message or e.value.type == "StepLimitError"  # whichever comes first


def test_runaway_generator_hits_the_step_limit():
    with pytest.raises(LimitError) as e:
        run("sum(1 for i in range(10 ** 12))", max_steps=10_000)
    assert e.value.type == "StepLimitError"


def test_recursion_through_lambdas_hits_the_call_depth_limit():
    with pytest.raises(GradcliError) as e:
        run("f = lambda k: f(k + 1)\nf(0)", max_depth=200)
    assert e.value.type == "RecursionError"


@pytest.mark.parametrize("handler", ["except:", "except Exception:", "except RecursionError:"])
def test_limits_cannot_be_caught(handler):
    with pytest.raises(LimitError):
        run(f"try:\n    while True:\n        pass\n{handler}\n    print('swallowed')", max_steps=5_000)
    with pytest.raises(GradcliError) as e:
        run(f"def f(k):\n    return f(k + 1)\ntry:\n    f(0)\n{handler}\n    print('swallowed')", max_depth=100)
    assert e.value.type == "RecursionError"


@pytest.mark.parametrize("text", ["try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.args",
                                  "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.with_traceback"])
def test_caught_exceptions_expose_no_python_attribute(text):
    with pytest.raises(GradcliError) as e:
        run(text)
    assert e.value.type == "AttributeError"


@pytest.mark.parametrize("text, kind", [
    # recursion through the special methods ends at the call-depth limit, not in Python's stack
    ("class A:\n    def __call__(self):\n        return self()\nA()()", "call_depth"),
    ("class A:\n    def __repr__(self):\n        return repr(self)\nprint(A())", "call_depth"),
    ("class A:\n    def __init__(self):\n        A()\nA()", "call_depth"),
    ("class A:\n    def __len__(self):\n        return len(self)\nlen(A())", "call_depth"),
    # runaway generators: their bodies count steps, and what consumes them counts items
    ("def g():\n    while True:\n        pass\n    yield 1\nnext(g())", "steps"),
    ("def g():\n    i = 0\n    while True:\n        yield i\n        i += 1\nlist(g())", "steps"),
    ("def g():\n    yield from g()\nnext(g())", "call_depth"),
    # runaway loops over objects still count their steps
    ("class A:\n    def f(self):\n        while True:\n            pass\nA().f()", "steps"),
])
def test_runaway_classes_hit_the_limits(text, kind):
    with pytest.raises(LimitError) as e:
        run(text, max_steps=100_000, max_depth=200)
    assert e.value.limit == kind


def test_an_endless_generator_consumed_whole_hits_the_items_limit():
    from gradcli.engine import limits

    limits.configure({"items": 1000}, environ={})
    with pytest.raises(LimitError) as e:
        run("def g():\n    i = 0\n    while True:\n        yield i\n        i += 1\nlist(g())")
    assert e.value.limit == "items"


def test_many_attributes_hit_the_items_limit():
    from gradcli.engine import limits

    limits.configure({"items": 50}, environ={})  # (the per-test run context restores the limits)
    with pytest.raises(LimitError) as e:
        run("class B:\n    pass\nb = B()\n" + "".join(f"b.a{i} = {i}\n" for i in range(60)))
    assert e.value.limit == "items" and "the attributes of a B object" in e.value.message


def test_program_objects_expose_no_python_internals():
    # the special methods a class defines are called by gradcli; the objects themselves are the interpreter's
    out = run("class A:\n    def __init__(self):\n        self._hidden = 3\n"
              "    def __repr__(self):\n        return 'A!'\na = A()\nprint(a, a._hidden, [a], f'{a!r}')\n"
              "print(type(a) if False else 'no type()', callable(a), isinstance(a, A), isinstance(a, object))\n")
    assert out == "A! 3 [A!] A!\nno type() False True True\n"
    with pytest.raises(GradcliError) as e:
        run("class A:\n    pass\nA().__init__.__globals__")
    assert e.value.type == "SyntaxError"

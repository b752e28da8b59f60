"""Issue 13 item 7: the new constructs expose no Python internals and stay within the limits."""

from __future__ import annotations

import pytest

from gradcli import limits
from gradcli.errors import GradcliError, GradcliSyntaxError, LimitError
from gradcli.language.build import build_program
from gradcli.language.interpreter import Interpreter


def run(text, **kw):
    out: list = []
    Interpreter(write=out.append, **kw).run(build_program(text))
    return "".join(out)


@pytest.mark.parametrize("text", [
    "g = (x for x in range(3))\ng.gi_frame",
    "g = (x for x in range(3))\ng.gi_code",
    "d = {}\nd.fromkeys",
    "f = lambda: 1\nf.body", "f = lambda: 1\nf.scope", "def g():\n    n = 1\n    return lambda: n\ng().defaults",
])
def test_generators_and_dicts_expose_no_python_attribute(text):
    with pytest.raises(GradcliError) as e:
        run(text)
    assert e.value.type in ("AttributeError", "SyntaxError")


@pytest.mark.parametrize("text", ["g = (x for x in range(3))\ng.__next__", "{}.__class__",
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

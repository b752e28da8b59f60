"""The session's logic (gradcli.frontends.session.core), as a user types it: entries, values, session commands, errors."""

import json

import numpy as np
import pytest

from gradcli.frontends.session.core import Session


class Out:
    def __init__(self):
        self.out, self.err = [], []

    def session(self, **kw):
        return Session(write=self.out.append, error=self.err.append, **kw)

    def take(self):
        out, err = "".join(self.out), "".join(self.err)
        self.out.clear()
        self.err.clear()
        return out, err


@pytest.fixture
def io():
    return Out()


def test_variables_persist_and_values_print_as_pytorch(io):
    s = io.session()
    assert s.execute("x = tensor([1., 2., 3.], requires_grad=True)").code == 0
    assert io.take() == ("", "")  # an assignment shows nothing, as in Python's REPL
    s.execute("y = (x * x).sum()")
    s.execute("y")
    assert io.take()[0] == "tensor(14., grad_fn=<SumBackward0>)\n"
    s.execute("None")
    assert io.take()[0] == ""  # None prints nothing
    s.execute("print(x * 2)")
    assert io.take()[0] == "tensor([2., 4., 6.], grad_fn=<MulBackward0>)\n"
    s.execute("1 + 1; 2 + 2")
    assert io.take()[0] == "2\n4\n"


def test_the_parser_decides_completeness():
    s = Session(write=lambda t: None, error=lambda t: None)
    assert s.is_complete("x = 1")
    assert not s.is_complete("x = (1,")
    assert not s.is_complete("x = [1,\n 2")
    assert s.is_complete("x = [1,\n 2]")
    assert not s.is_complete("for i in range(3):")
    assert not s.is_complete("for i in range(3):\n    print(i)")  # a block ends at an empty line
    assert s.is_complete("for i in range(3):\n    print(i)\n")
    assert not s.is_complete("def f(a):\n    return a")
    assert s.is_complete("x +* 2")  # a syntax error that is not at the end: complete (reported when run)
    assert s.is_complete(":grad x.sum(")
    assert not s.is_complete('s = """abc')  # a triple-quoted string goes on
    assert not s.is_complete("s = f\'\'\'abc\ndef")
    assert s.is_complete('s = """abc\ndef"""')
    assert s.is_complete("s = 'abc")  # a one-line string that is not closed is an error


def test_blocks_run(io):
    s = io.session()
    assert s.execute("t = 0\nfor i in range(4):\n    t += i\n").code == 0
    s.execute("t")
    assert io.take()[0] == "6\n"
    s.execute("def f(a):\n    return a * 2\n")
    s.execute("f(tensor([1., 2.]))")
    assert io.take()[0] == "tensor([2., 4.])\n"


def test_errors_show_the_caret_and_the_session_goes_on(io):
    s = io.session()
    out = s.execute("x +* 2")
    assert out.code == 2
    assert io.take()[1] == ("<stdin>:1:4:\n    x +* 2\n       ^\nSyntaxError: invalid syntax: unexpected '*'\n"
                            "expected one of: '(', '+', '-', '[', '{', '~', a name, a number, a string, "
                            "end of line\n")
    assert s.execute("nope + 1").code == 1
    err = io.take()[1]
    assert err.startswith("<stdin>:1:1:\n    nope + 1\n    ^\nNameError: name 'nope' is not defined")
    s.execute("a = 3")
    s.execute("a")
    assert io.take() == ("3\n", "")


def test_grad_answers_for_the_session_leaves(io):
    s = io.session(format="json")
    s.execute("x = tensor([1., 2., 3.], requires_grad=True)")
    s.execute("w = tensor([0.5, -1., 2.], requires_grad=True)")
    s.execute("c = tensor([1., 1., 1.])")
    assert s.execute(":grad (x.sin() * w + c).exp().sum()").code == 0
    doc = json.loads(io.take()[0])
    assert set(doc["grads"]) == {"x", "w"}
    assert s.interp.globals["x"].grad is None  # :grad is a question: the leaves' .grad stay as they were
    torch = pytest.importorskip("torch")
    tx = torch.tensor([1., 2., 3.], requires_grad=True)
    tw = torch.tensor([0.5, -1., 2.], requires_grad=True)
    (tx.sin() * tw + 1).exp().sum().backward()
    np.testing.assert_allclose(doc["grads"]["x"]["value"], tx.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(doc["grads"]["w"]["value"], tw.grad.numpy(), rtol=1e-6)


def test_grad_tables_and_twice_the_same(io):
    s = io.session()
    s.execute("x = tensor([1., 2.], requires_grad=True)")
    s.execute(":grad (x ** 2).sum()")
    first = io.take()[0]
    s.execute(":grad (x ** 2).sum()")
    assert io.take()[0] == first
    assert "gradients" in first and "tensor([2., 4.])" in first and "PowBackward0" in first


def test_grad_without_leaves_says_how_to_define_one(io):
    s = io.session()
    assert s.execute(":grad tensor([1., 2.]).sum()").code == 1
    err = io.take()[1]
    assert "element 0 of tensors does not require grad" in err
    assert "requires_grad=True" in err


def test_graph_is_the_tree(io):
    s = io.session()
    s.execute("x = tensor([1., 2.], requires_grad=True)")
    s.execute("y = (x.exp() * 2).sum()")
    assert s.execute(":graph y").code == 0
    out = io.take()[0]
    assert out.splitlines()[0].startswith("SumBackward0")
    assert "ExpBackward0" in out and "MulBackward0" in out and "x" in out


def test_graph_in_other_formats_and_to_files(io, tmp_path):
    # the session's :graph draws as gradcli grad --graph does: DOT and Mermaid as text, SVG/PNG
    # to a file (the extension chooses the format), binary formats never to the terminal
    s = io.session()
    s.execute("x = tensor([1., 2.], requires_grad=True)")
    s.execute("y = (x.exp() * 2).sum()")
    assert s.execute(":graph y --format dot").code == 0
    dot = io.take()[0]
    assert dot.startswith("digraph") and "ExpBackward0" in dot and "->" in dot
    assert s.execute(":graph y -f mermaid").code == 0
    assert io.take()[0].startswith("flowchart")
    svg = tmp_path / "g.svg"
    assert s.execute(f":graph (y * 3) -o {svg}").code == 0
    assert io.take()[0] == f"wrote {svg}\n"
    text = svg.read_text()
    assert "<svg" in text and "MulBackward0" in text and "SumBackward0" in text
    png = tmp_path / "g.out"
    assert s.execute(f":graph y -o {png} --format png").code == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert s.execute(":graph y --format png").code == 2
    assert "binary" in io.take()[1]
    assert s.execute(":graph y --format table").code == 2
    assert "--graph takes a format that draws the graph" in io.take()[1]


def test_graph_of_a_leaf_or_a_constant_says_why_there_is_none(io):
    s = io.session()
    s.execute("x = tensor([1., 2.], requires_grad=True)")
    s.execute(":graph x")
    assert io.take()[0].startswith("x is a leaf that requires grad: it has no grad_fn")
    s.execute(":graph 3")
    assert io.take()[0].startswith("3 does not require grad: it has no grad_fn and no graph")


def test_inputs_format_reset_help_ops(io):
    s = io.session()
    s.execute(":inputs")
    assert "no leaves" in io.take()[0]
    s.execute("x = tensor([1., 2.], requires_grad=True)")
    s.execute("(x * 3).sum().backward()")
    s.execute(":inputs")
    assert io.take()[0] == "x: tensor([1., 2.], requires_grad=True)\nx.grad: tensor([3., 3.])\n"
    assert s.execute(":format yaml").code == 2
    assert "the session's format must be one of table, json" in io.take()[1]
    s.execute(":format json")
    assert s.format == "json"
    s.execute(":help")
    assert ":grad EXPR" in io.take()[0]
    s.execute(":ops sigmoid")
    assert "sigmoid" in io.take()[0]
    s.execute(":reset")
    io.take()
    assert s.execute("x").code == 1
    assert s.execute(":gard x").code == 2
    assert "did you mean :grad?" in io.take()[1]


def test_save_reproduces_with_gradcli_run(io, tmp_path):
    from gradcli.app.run_program import RunRequest, run_program

    s = io.session()
    s.execute("x = tensor([1., 2.], requires_grad=True)")
    s.execute("y = (x ** 3).sum()")
    s.execute("y +* 1")  # a syntax error: not saved
    s.execute("z = y * 2; boom")  # z ran, then an error: z is kept, boom is not
    s.execute("for i in range(2):\n    print(i)\n")
    s.execute("print(z)")
    io.take()
    path = tmp_path / "s.py"
    s.execute(f":save {path}")
    assert io.take()[0].startswith("saved 5 entries to")
    printed = []
    result = run_program(RunRequest(source=path.read_text(), filename=str(path)), write=printed.append,
                         warn=printed.append, report=printed.append)
    assert result.exit_code == 0
    assert "".join(printed) == "0\n1\ntensor(18., grad_fn=<MulBackward0>)\n"
    s2 = io.session()
    assert s2.execute(f":load {path}").code == 0
    assert io.take()[0] == "0\n1\ntensor(18., grad_fn=<MulBackward0>)\n"
    assert "z" in s2.interp.globals


def test_the_time_limit_bounds_each_entry_not_the_session(io):
    from gradcli.engine import limits

    with _time_limit(limits, 1):
        s = io.session()  # (the session takes the limits in force when it starts)
        out = s.execute("while True:\n    pass\n")
        assert out.code == 1
        assert "LimitError: the entry ran for" in io.take()[1]
        s.execute("1 + 1")
        assert io.take()[0] == "2\n"


def _time_limit(limits, seconds):
    import contextlib
    import dataclasses

    @contextlib.contextmanager
    def cm():
        old = limits.current
        # no step limit: on a fast machine 5,000,000 steps of a loop take less than the time limit
        limits.current = dataclasses.replace(old, time=seconds, steps=limits.UNLIMITED)
        try:
            yield
        finally:
            limits.current = old

    return cm()


def test_jacobian_and_hessian_in_the_session():
    """``:jacobian`` and ``:hessian``: as gradcli jacobian/hessian, with
    respect to the session's leaves, leaving the session as it was."""
    import os
    import subprocess
    import sys

    from helpers import ROOT

    script = ("x = tensor([1., 2.], requires_grad=True)\n:format compact\n:jacobian x.exp()\n"
              ":hessian (x ** 3).sum()\nx.grad is None\n")
    r = subprocess.run([sys.executable, "-m", "gradcli", "repl"], input=script, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["output: tensor([2.7183, 7.3891])",
                                     "d output/d x: tensor([[2.7183, 0.0000], [0.0000, 7.3891]])",
                                     "output: tensor(9.)", "d2 output/d x d x: tensor([[ 6.,  0.], [ 0., 12.]])",
                                     "True"]

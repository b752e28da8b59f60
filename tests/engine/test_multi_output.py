"""Ops with several differentiable outputs recorded as ONE graph node, as PyTorch does: the pieces of
split/chunk/unbind share their grad_fn (SplitBackward0, SplitWithSizesBackward0, UnbindBackward0), each knows
its ``output_nr``, consumers' ``next_functions`` name (node, output_nr), and backward runs the node once with
zeros for the pieces that got no gradient. Checked against torch: values, names, identity, gradients with
some pieces unused, retain_grad on a piece, autograd.grad on pieces, double backward; gradcheck and
gradgradcheck in float64; the graph of ``gradcli grad --json`` and programs through ``gradcli run``.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

import gradcli as G

from helpers import autograd_grad, grad_fn_name, gradcheck, gradgradcheck, to_np
from gradcli.frontends.cli import app

runner = CliRunner()

SPLITS = [  # id -> (m, x) -> tuple of pieces; x is 4x6
    pytest.param(lambda m, x: m.split(x, 2), id="split-int"),
    pytest.param(lambda m, x: x.split(4, dim=1), id="split-int-dim1-uneven"),
    pytest.param(lambda m, x: m.split(x, [1, 0, 3]), id="split-sizes"),
    pytest.param(lambda m, x: x.split([2, 4], -1), id="split-sizes-method"),
    pytest.param(lambda m, x: x.split(10), id="split-one-piece"),
    pytest.param(lambda m, x: m.chunk(x, 3, dim=1), id="chunk"),
    pytest.param(lambda m, x: x.chunk(3), id="chunk-fewer-pieces"),
    pytest.param(lambda m, x: m.unbind(x, 1), id="unbind-dim1"),
    pytest.param(lambda m, x: x.unbind(), id="unbind-method"),
    pytest.param(lambda m, x: (x * 2).split(1, dim=0), id="split-of-a-result"),
    pytest.param(lambda m, x: x.split(2)[1].unbind(1), id="unbind-of-a-piece"),
]


def _x(m, dtype="float32"):
    return m.tensor(np.arange(24.0).reshape(4, 6) / 7 - 1, dtype=getattr(m, dtype), requires_grad=True)


def _structure(pieces):
    """What the graph looks like from the pieces: names, output_nr, whether all share one node, and each
    node's next_functions as (name, output_nr) pairs."""
    fns = [p.grad_fn for p in pieces]
    nexts = [[(None if f is None else f.name().split("::")[-1], nr) for f, nr in fn.next_functions] for fn in fns]
    return ([grad_fn_name(p) for p in pieces], [p.output_nr for p in pieces],
            all(f is fns[0] for f in fns), nexts)


@pytest.mark.parametrize("call", SPLITS)
def test_pieces_share_one_node_like_torch(call, torch):
    res = []
    for m in (G, torch):
        x = _x(m)
        pieces = call(m, x)
        res.append((_structure(pieces), [to_np(p).tolist() for p in pieces], [tuple(p.shape) for p in pieces]))
    assert res[0] == res[1]
    assert res[0][0][2]  # a.grad_fn is b.grad_fn


@pytest.mark.parametrize("call", SPLITS)
@pytest.mark.parametrize("used", ["first", "last", "alternate", "twice"])
def test_gradients_with_some_pieces_unused_match_torch(call, used, torch):
    res = []
    for m in (G, torch):
        x = _x(m)
        pieces = call(m, x)
        n = len(pieces)
        if used == "first":
            chosen = [0]
        elif used == "last":
            chosen = [n - 1]
        elif used == "alternate":
            chosen = list(range(0, n, 2))
        else:
            chosen = [0, 0, n - 1]  # a piece used twice: its gradients accumulate before the node runs
        loss = sum(((pieces[k] * (j + 2)).sin().sum() for j, k in enumerate(chosen)), m.tensor(0.0))
        loss.backward()
        res.append(to_np(x.grad))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-6, atol=1e-7)


def test_one_node_runs_once_with_zeros_for_unused_pieces(torch):
    # the consumer uses a and b; c, d never get a gradient: the node runs once and fills zeros there
    res = []
    for m in (G, torch):
        x = m.arange(8.0, requires_grad=True)
        a, b, c, d = x.split(2)
        loss = (a * b).sum()
        assert loss.grad_fn.next_functions[0][0].next_functions[0][0] is a.grad_fn
        loss.backward()
        res.append(to_np(x.grad).tolist())
    assert res[0] == res[1] == [2.0, 3.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]


def test_retain_grad_on_pieces(torch):
    res = []
    for m in (G, torch):
        x = _x(m)
        a, b, c = x.chunk(3, dim=1)
        a.retain_grad()
        b.retain_grad()
        c.retain_grad()  # unused: its .grad stays None, as in torch
        (a * b.exp() + a).sum().backward()
        assert c.grad is None and a.retains_grad
        res.append((to_np(a.grad).tolist(), to_np(b.grad).tolist(), to_np(x.grad).tolist()))
    for got, want in zip(res[0], res[1]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_autograd_grad_with_respect_to_pieces(torch):
    res = []
    for m in (G, torch):
        x = _x(m, "float64")
        a, b, c = x.split([1, 2, 1])
        ga, gb = autograd_grad(m)((a * b[:1] + b.pow(2).sum()).sum(), [a, b], retain_graph=True)
        gc, = autograd_grad(m)((a * b[:1]).sum(), [c], allow_unused=True)
        res.append((to_np(ga).tolist(), to_np(gb).tolist(), gc))
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            autograd_grad(m)((a * 2).sum(), [c])
    assert res[0] == res[1]


def test_backward_from_pieces_as_roots(torch):
    res = []
    for m in (G, torch):
        x = _x(m)
        a, b = x.split(2)
        autograd = G.autograd if m is G else m.autograd
        autograd.backward([a, b], [m.ones(2, 6), m.full((2, 6), 3.0)])
        a.sum().backward()  # the split saved no tensors: a second backward through it works, as in torch
        res.append(to_np(x.grad).tolist())
    assert res[0] == res[1]


def test_second_backward_without_retain_graph_raises_like_torch(torch):
    for m in (G, torch):
        x = _x(m)
        a, b = x.split(2)
        loss = (a * b).sum()  # mul saved a and b
        loss.backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            loss.backward()
        x.grad = None
        loss2 = (a * b).sum()
        loss2.backward(retain_graph=True)
        loss2.backward()
        assert np.allclose(to_np(x.grad), 2 * np.concatenate([to_np(b), to_np(a)]))


@pytest.mark.parametrize("call", SPLITS)
def test_double_backward_through_pieces_matches_torch(call, torch):
    res = []
    for m in (G, torch):
        x = _x(m, "float64")
        pieces = call(m, x)
        loss = sum(((p * (k + 1)) ** 3).sum() for k, p in enumerate(pieces[::2]))
        g, = autograd_grad(m)(loss, [x], create_graph=True)
        h, = autograd_grad(m)((g * g.cos()).sum(), [x])
        res.append((to_np(g), to_np(h)))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10)


@pytest.mark.parametrize("call", SPLITS)
def test_gradcheck_and_gradgradcheck(call):
    def fn(x):
        pieces = call(G, x)
        return sum(((p * (k + 1)).tanh() * p).sum() for k, p in enumerate(pieces) if k % 2 == 0)

    x = G.tensor(np.random.default_rng(3).uniform(-1, 1, (4, 6)), requires_grad=True)
    assert gradcheck(fn, [x])
    assert gradgradcheck(fn, [x])


def test_integer_and_no_grad_pieces_are_plain_tensors(torch):
    for pieces in (G.arange(6).split(2), G.arange(6).unbind()):
        assert all(p.grad_fn is None and not p.requires_grad and p.output_nr == 0 for p in pieces)
    flags = []
    for m in (G, torch):
        x = m.arange(6.0, requires_grad=True)
        with m.no_grad():
            pieces = x.split(4)
        # views made in no_grad mode: leaves without history that require grad as their base does (PyTorch's)
        flags.append([(p.grad_fn is None, p.requires_grad, p.is_leaf) for p in pieces])
    assert flags[0] == flags[1] == [(True, True, True)] * 2
    x = G.arange(6.0, requires_grad=True)
    assert x.unbind()[3].output_nr == 3 and x.output_nr == 0


def test_pieces_print_their_node(torch):
    for m in (G, torch):
        a, b = m.arange(4.0, requires_grad=True).split(2)
        assert re.fullmatch(r"<SplitBackward0 object at 0x[0-9a-f]+>", repr(b.grad_fn))
        assert repr(b).endswith("grad_fn=<SplitBackward0>)")


# ================================================================================== through the command line
def test_cli_graph_has_one_split_node_like_torch(torch):
    from jsonschema import validate

    r = runner.invoke(app, ["grad", "a, b = x.split(2); (a * b).sum()", "-i", "x=arange(4.)", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    r = runner.invoke(app, ["schema", "grad"])
    assert r.exit_code == 0, r.output
    validate(doc, json.loads(r.stdout))
    nodes = {n["id"]: n for n in doc["graph"]["nodes"]}
    assert [n["name"] for n in doc["graph"]["nodes"]] == ["SumBackward0", "MulBackward0", "SplitBackward0",
                                                            "AccumulateGrad"]
    split = nodes["n2"]
    assert split["output_shapes"] == [[2], [2]] and split["shape"] == [2] and split["inputs"] == ["x"]
    assert nodes["n1"]["inputs"] == ["n2", "n2"]
    assert {"from": "n2", "to": "n1", "output_nr": 0} in doc["graph"]["edges"]
    assert {"from": "n2", "to": "n1", "output_nr": 1} in doc["graph"]["edges"]
    assert all("output_nr" not in e for e in doc["graph"]["edges"] if e["from"] != "n2")
    assert all("output_shapes" not in n for n in doc["graph"]["nodes"] if n["id"] != "n2")
    # torch's graph: the same node names in the same order, one SplitBackward0 feeding MulBackward0 twice
    x = torch.arange(4.0, requires_grad=True)
    a, b = x.split(2)
    out = (a * b).sum()
    mul = out.grad_fn.next_functions[0][0]
    assert [(type(f).__name__, nr) for f, nr in mul.next_functions] == [("SplitBackward0", 0), ("SplitBackward0", 1)]
    out.backward()
    assert doc["grads"]["x"]["value"] == x.grad.tolist() == [2.0, 3.0, 0.0, 1.0]


def test_cli_unbind_graph_and_table():
    r = runner.invoke(app, ["grad", "r = x.unbind(1); (r[0] * r[2]).sum() + r[0].sum()", "-i",
                            "x=[[1., 2., 3.], [4., 5., 6.]]", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    unbind = [n for n in doc["graph"]["nodes"] if n["name"] == "UnbindBackward0"]
    assert len(unbind) == 1 and unbind[0]["output_shapes"] == [[2], [2], [2]]
    assert sorted(e["output_nr"] for e in doc["graph"]["edges"] if e["from"] == unbind[0]["id"]) == [0, 0, 2]
    assert doc["grads"]["x"]["value"] == [[4.0, 0.0, 1.0], [7.0, 0.0, 4.0]]
    r = runner.invoke(app, ["grad", "r = x.unbind(1); (r[0] * r[2]).sum()", "-i", "x=[[1., 2., 3.], [4., 5., 6.]]"])
    assert r.exit_code == 0, r.output
    assert re.search(r"UnbindBackward0 +│ \(2,\), \(2,\), \(2,\) ", r.stdout)


PROGRAM = """\
a, b, c = x.split(2)
print(a.grad_fn == b.grad_fn, a.grad_fn == c.grad_fn, a.output_nr, b.output_nr, c.output_nr)
print(b.grad_fn)
print((a * c).grad_fn.next_functions)
b.retain_grad()
y = (a * b).sum()
y.backward(retain_graph=True)
print(b.grad, x.grad)
g = torch.autograd.grad((a * a * b).sum(), x, create_graph=True)[0]
print(g)
print(torch.autograd.grad(g.sum(), x)[0])
print(x.unbind()[3].grad_fn, x.unbind()[3].output_nr)
"""


def test_run_program_like_torch(tmp_path, torch):
    src = tmp_path / "p.py"
    src.write_text("x = torch.arange(5., requires_grad=True)\n" + PROGRAM)
    r = runner.invoke(app, ["run", str(src)])
    assert r.exit_code == 0, r.output
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        namespace = {"torch": torch}
        exec(compile("x = torch.arange(5., requires_grad=True)\n" + PROGRAM, "p.py", "exec"), namespace)  # torch's run
    hide = re.compile(r"0x[0-9a-f]+")
    assert hide.sub("0x", r.stdout) == hide.sub("0x", out.getvalue())
    assert "True True 0 1 2" in r.stdout


def test_double_backward_with_promotion_through_pieces(torch):
    # a float32 piece times a float64 leaf: the create_graph rule rebuilds the saved piece from its edge
    # (an output of SplitBackward0) in float32 and casts it, as the forward did
    res = []
    for m in (G, torch):
        x = m.arange(6.0, requires_grad=True)
        w = m.tensor([1.5, 2.5], dtype=m.float64, requires_grad=True)
        a, b, c = x.split(2)
        loss = ((a * w) ** 2 * b).sum() + c.double().sum()
        g = autograd_grad(m)(loss, [x, w], create_graph=True)
        h = autograd_grad(m)((g[0] ** 2).sum() + g[1].sum(), [x, w])
        res.append([to_np(t).tolist() for t in g + h] + [str(t.dtype) for t in g + h])
    assert res[0] == res[1]

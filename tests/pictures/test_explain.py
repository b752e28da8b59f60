"""``gradcli grad --explain``: the chain rule node by node, with numbers; the numbers against PyTorch (the
gradient each node received, through ``retain_grad``, and what reached each input), the table, the JSON and
its schema; and the formula table covers every backward function the op table records."""

from __future__ import annotations

import json
import re
import sys
import warnings
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import gradcli as G
from gradcli.engine.graph import Node, OutputEdge
from gradcli.ops.core.formulas import FORMULAS
from gradcli.render.schemas import schema
from pictures import INPUTS, PROGRAM, gc


def explain_json(*args) -> dict:
    r = gc("grad", *args, "--explain", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    jsonschema.Draft202012Validator(schema("explain")).validate(doc)
    return doc


def test_explain_numbers_match_torch(torch):
    doc = explain_json(PROGRAM, *INPUTS)
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([0.5, -1.], requires_grad=True)
    b = torch.tensor(0.1, requires_grad=True)
    m = x * w
    a = m + b
    h = a.tanh()
    s = h.sum()
    for t in (m, a, h, s):
        t.retain_grad()
    s.backward()
    steps = doc["steps"]
    assert [st["name"] for st in steps] == ["SumBackward0", "TanhBackward0", "AddBackward0", "MulBackward0"]
    assert [st["var"] for st in steps] == [None, "h", None, None]
    assert doc["seed"] == 1.0
    for st, t in zip(steps, (s, h, a, m)):
        np.testing.assert_allclose(st["grad_in"], t.grad.numpy(), rtol=1e-6)
        np.testing.assert_allclose(st["value"], t.detach().numpy(), rtol=1e-6)
    tanh, add, mul = steps[1], steps[2], steps[3]
    assert tanh["formula"] == "input: grad * (1 - result^2)"  # derivatives.yaml: tanh_backward(grad, result)
    np.testing.assert_allclose(tanh["sent"][0]["grad"], a.grad.numpy(), rtol=1e-6)
    # add sends b the sum over the broadcast dimension: b.grad itself
    assert [(x["to"], x["input"]) for x in add["sent"]] == [("n3", "input"), ("b", "other")]
    np.testing.assert_allclose(add["sent"][1]["grad"], b.grad.numpy(), rtol=1e-6)
    assert [(x["to"], x["input"]) for x in mul["sent"]] == [("x", "input"), ("w", "other")]
    np.testing.assert_allclose(mul["sent"][0]["grad"], x.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(mul["sent"][1]["grad"], w.grad.numpy(), rtol=1e-6)
    for name, t in (("x", x), ("w", w), ("b", b)):
        np.testing.assert_allclose(doc["leaves"][name], t.grad.numpy(), rtol=1e-6)


def test_fan_out_shows_each_contribution(torch):
    # a is used twice by the product: mul sends a gradient through each of its inputs; they add up in a
    doc = explain_json("a = x * 3; (a * a).sum()", "-i", "x=[1., 2.]")
    mul = doc["steps"][1]
    assert mul["name"] == "MulBackward0" and [s["to"] for s in mul["sent"]] == ["n2", "n2"]
    assert mul["sent"][0]["grad"] == [3.0, 6.0] == mul["sent"][1]["grad"]
    assert doc["steps"][2]["grad_in"] == [6.0, 12.0] and doc["leaves"]["x"] == [18.0, 36.0]


def test_an_input_that_needs_no_gradient_gets_nothing():
    doc = explain_json("(x * c).sum()", "-i", "x=[1., 2.]", "-c", "c=[3., 4.]")
    mul = doc["steps"][1]
    assert mul["sent"] == [{"to": "x", "input": "input", "grad": [3.0, 4.0]},
                           {"to": None, "input": "other", "grad": None}]


def test_explain_with_gradient_and_repeat_explains_the_last_call():
    doc = explain_json("y = x * x; y", "-i", "x=[1., 2.]", "--gradient", "[1., 10.]", "--repeat", "3")
    assert doc["seed"] == [1.0, 10.0]
    assert doc["steps"][0]["grad_in"] == [1.0, 10.0]
    assert doc["leaves"]["x"] == [2.0, 40.0]  # one call's worth (x.grad holds three)


def test_explain_several_outputs():
    doc = explain_json("a, c = x.split(1); (a * c).sum()", "-i", "x=[2., 3.]")
    split = next(s for s in doc["steps"] if s["name"] == "SplitBackward0")
    assert split["var"] == "a, c" and split["grad_in"] == [[3.0], [2.0]] and split["value"] == [[2.0], [3.0]]
    assert split["sent"][0]["grad"] == [3.0, 2.0]


def test_explain_table():
    r = gc("grad", PROGRAM, *INPUTS, "--explain")
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert out.startswith("backward starts at the output (n0) with the gradient 1.0")
    assert "h · TanhBackward0" in out and "input: grad * (1 - result^2)" in out
    assert "→ n2 (input): [0.7116, 0.0856]" in out and "→ b (other): 0.79718775" in out
    assert re.search(r"│ x\s+│ \[ 0\.3558, -0\.0856\]", out)


def test_explain_summarizes_long_tensors_as_pytorch_prints_them():
    r = gc("grad", "(x * 2).sum()", "-i", "x=arange(20.)", "--explain")
    assert "[ 0.,  2.,  4.,  ..., 34., 36., 38.]" in r.stdout
    assert "[2., 2., 2.,  ..., 2., 2., 2.]" in r.stdout


def _walk(out, names: dict, case_id: str) -> None:
    outs = out if isinstance(out, (tuple, list)) else [out]
    stack = [t.grad_fn for t in outs if isinstance(t, G.Tensor) and t.grad_fn is not None]
    seen = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        names.setdefault(n.name(), case_id)
        for e in n.edges:
            if type(e) is OutputEdge:
                stack.append(e.node)
            elif isinstance(e, Node):
                stack.append(e)


def test_every_backward_function_of_the_op_table_has_a_formula():
    """Every grad_fn that a sample of the op table records (tests/ops/opinfo.py, the multi-op graphs, and their
    backward with create_graph) has an entry in gradcli.ops.core.formulas.FORMULAS."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "ops"))
    import cases_graphs
    import opinfo
    from helpers import g_inputs, make_arrays

    names = {}
    rows = [r for r in opinfo.table_cases() if r[0].differentiable and r[0].supports_autograd] + \
        [(None, None, c) for c in cases_graphs.BOOK.cases]  # (an op whose backward raises, as PyTorch's, left out)
    for _, _, case in rows:
        arrays = make_arrays(case.args, case.id)
        inputs = g_inputs(case.args, arrays)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = case.fn(G, *inputs)
        _walk(out, names, case.id)
        first = out[0] if isinstance(out, (tuple, list)) else out
        wrt = [t for t in inputs if isinstance(t, G.Tensor) and t.requires_grad]
        if (isinstance(first, G.Tensor) and first.grad_fn is not None and first.dtype.is_floating_point and wrt
                and first.grad_fn.name() != "NotImplemented"):
            grads = G.autograd.grad(first.sum(), wrt, create_graph=True, allow_unused=True)
            _walk([g for g in grads if g is not None], names, case.id + " (backward)")
    missing = {n: c for n, c in names.items() if n not in FORMULAS}
    assert not missing, f"no formula in gradcli/ops/core/formulas.py for: {missing}"
    assert len(names) > 100


def test_every_static_grad_fn_name_has_a_formula():
    from gradcli.ops import REGISTRY
    from gradcli.ops.core.declare import Op

    declared = {o.grad_fn for o in REGISTRY.values() if isinstance(o, Op) and isinstance(o.grad_fn, str)}
    assert declared - set(FORMULAS) == set()

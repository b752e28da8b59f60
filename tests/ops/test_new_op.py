"""A new op is one declaration plus its sample inputs.

An op declared here, the way a family module declares one (``@op`` with its aliases, Tensor method, domain,
derivative note, ``--explain`` formula and kinks; its VJP and JVP right below), is picked up with nothing
restated anywhere: the op table of the tests reads its aliases, method form and sampling domain from the
registry and the generic checks (gradcheck, gradgradcheck, every alias and method) run on its samples;
the completeness check reports it until it has an entry; ``gradcli ops`` lists it; ``--explain``'s formula
and ``--check``'s kink name come from its declaration; forward mode computes its tangent. The op is removed
again after each test.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

import gradcli as G
from gradcli.api import forward_ad as fwAD
from gradcli.frontends.cli import app
from gradcli.ops import REGISTRY
from gradcli.ops.core import declare
from gradcli.ops.core.declare import op
from gradcli.ops.core.formulas import formula

import opinfo
import test_op_table
from helpers import g_inputs, gradcheck, gradgradcheck, make_arrays, seed_of

NAME, ALIAS, GRAD_FN = "cbrt_test", "cuberoot_test", "CbrtTestBackward0"
FORMULA = "input: grad / (3 * result^2)"


@pytest.fixture
def new_op(monkeypatch):
    """Declare ``cbrt_test`` (the cube root, alias ``cuberoot_test``, a Tensor method, defined and smooth on
    (0, inf)) for one test; every table it enters is restored afterwards."""
    saved = [(table, table.copy()) for table in (declare.REGISTRY, declare.KINDS, declare.METHODS,
                                                 declare.FORMULAS, declare.KINKS)]

    @op(NAME, grad_fn=GRAD_FN, method=True, aliases=(ALIAS,), domain=(0, math.inf), kinks=NAME,
        note="d/dx = 1 / (3 * result^2)", formula=FORMULA)
    def cbrt_test(input):
        """The real cube root, elementwise."""
        return np.cbrt(input)

    @cbrt_test.defvjp
    def _(grad, result):
        return grad / (3 * (result * result))

    cbrt_test.defjvp_elementwise()

    for n in (NAME, ALIAS):  # ``import gradcli``'s namespace is made once; the op is added to it for the test
        monkeypatch.setattr(G, n, cbrt_test, raising=False)
    yield cbrt_test
    for n in (NAME, ALIAS):
        delattr(G.Tensor, n)
    for table, copy in saved:
        table.clear()
        table.update(copy)


def test_the_op_table_reads_aliases_method_and_domain_from_the_declaration(new_op):
    entry = opinfo.OpInfo(NAME, "elementwise", opinfo.unary_samples)
    assert entry.aliases == (ALIAS,) and entry.method is True and entry.domain == opinfo.POS
    samples = entry.samples()
    assert {s.name for s in samples} == {None, ALIAS}
    assert {(s.name, s.method) for s in samples if s.method} == {(None, True), (ALIAS, True)}
    assert all(a.domain == opinfo.POS for s in samples for a in s.inputs)
    with pytest.raises(TypeError, match="does not restate it"):
        opinfo.OpInfo(NAME, "elementwise", opinfo.unary_samples, domain=opinfo.R)


def test_an_op_without_sample_inputs_is_reported(new_op, monkeypatch):
    assert NAME in test_op_table._public_ops() - test_op_table._covered()
    with pytest.raises(AssertionError, match=NAME):
        test_op_table.test_every_registry_op_has_an_entry()
    entry = opinfo.OpInfo(NAME, "elementwise", opinfo.unary_samples)
    monkeypatch.setattr(opinfo, "OP_DB", opinfo.OP_DB + [entry])
    test_op_table.test_every_registry_op_has_an_entry()
    test_op_table.test_every_entry_has_samples_and_runs_each_alias()
    test_op_table.test_every_tensor_method_is_called_as_a_method()
    test_op_table.test_elementwise_entries_cover_0d_and_size_1_dims("elementwise")


def test_the_generic_checks_run_on_its_samples(new_op):
    entry = opinfo.OpInfo(NAME, "elementwise", opinfo.unary_samples)
    for sample in entry.samples():
        case = entry.case(sample)
        inputs = g_inputs(case.args, make_arrays(case.args, case.id), np.float64)
        out = case.fn(G, *inputs)
        np.testing.assert_allclose(out.data, np.cbrt(inputs[0].data), rtol=1e-15)
        assert out.grad_fn.name() == GRAD_FN
        assert gradcheck(lambda *xs: case.fn(G, *xs), inputs, seed=seed_of(case.id))
        assert gradgradcheck(lambda *xs: case.fn(G, *xs), inputs, seed=seed_of(case.id))


def test_gradcheck_fails_for_a_wrong_rule_of_a_new_op(new_op):
    new_op.defvjp(lambda grad, result: grad / (2 * (result * result)))
    x = G.tensor([0.5, 1.0, 2.0], dtype=G.float64, requires_grad=True)
    with pytest.raises(AssertionError, match="Jacobian mismatch"):
        gradcheck(new_op, [x])


def test_gradcli_ops_explain_and_forward_mode_read_the_declaration(new_op):
    listed = json.loads(CliRunner().invoke(app, ["ops", "cbrt_test", "--json"]).stdout)
    assert [(e["name"], e["grad_fn"], e["derivative"], e["method"]) for e in listed] == [
        (NAME, GRAD_FN, "d/dx = 1 / (3 * result^2)", True)]
    alias = json.loads(CliRunner().invoke(app, ["ops", ALIAS, "--json"]).stdout)
    assert [e["alias_of"] for e in alias] == [NAME]
    x = G.tensor([8.0, 27.0], dtype=G.float64, requires_grad=True)
    y = x.cbrt_test()
    assert formula(y.grad_fn) == FORMULA and declare.KINKS[GRAD_FN] == NAME
    with fwAD.dual_level():
        d = fwAD.make_dual(G.tensor([8.0, 27.0], dtype=G.float64), G.tensor([1.0, 1.0], dtype=G.float64))
        t = fwAD.unpack_dual(new_op(d)).tangent
    np.testing.assert_allclose(t.data, [1 / 12, 1 / 27], rtol=1e-15)
    assert REGISTRY[ALIAS] is new_op

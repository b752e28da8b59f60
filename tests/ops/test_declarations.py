"""The op table's declarations (gradcli/ops/core/declare.py): one way to declare, one set of fields for ``gradcli
ops``, op modules that import each other top-down only, and the facts kept once (ScalarType names, PyTorch's
broadcast error, the codes of the rule calls)."""

from __future__ import annotations

import ast
import inspect
import warnings
from pathlib import Path

import numpy as np
import pytest

import gradcli as G
from gradcli.engine import dtypes, rules
from gradcli.ops import KINDS, REGISTRY, Op
from gradcli.ops.core.apply import infer_size
from gradcli.ops.core.declare import ENTRY_KINDS, METHODS, composite, op

from gradcli.app.catalog import list_ops
from gradcli.ops.core.declare import signature_of
from helpers import ROOT

OPS_DIR = ROOT / "gradcli" / "ops"


# ------------------------------------------------------------------------------------------ the fields
@pytest.mark.parametrize("name", sorted(n for n in REGISTRY if not n.startswith("_")))
def test_every_entry_has_the_fields_gradcli_ops_reads(name):
    e = REGISTRY[name]
    assert e.kind == KINDS[name] and e.kind in ENTRY_KINDS
    assert REGISTRY[e.name] is e and (name == e.name or name in e.aliases)
    assert isinstance(signature_of(e), inspect.Signature)
    info = next(i for i in list_ops() if i.name == name)  # what gradcli ops shows
    assert isinstance(info.summary, str) and info.summary and "\n" not in info.summary
    assert isinstance(e.note, str) and isinstance(e.aliases, tuple)
    assert e.differentiable in (True, False)
    if e.kind == "op":
        assert e.note, f"{name}: an op declares its derivative note"
        assert e.grad_fn is None or isinstance(e.grad_fn, str) or callable(e.grad_fn)
    else:
        assert e.grad_fn is None and e.note == "" and not e.method
    if e.method and "." not in name:  # torch.special.expit is a function only, though sigmoid is a method
        assert name in METHODS and hasattr(G.Tensor, name)


def test_ops_and_composites_are_the_only_kinds_of_entry():
    for name, e in REGISTRY.items():
        assert isinstance(e, Op) or inspect.isfunction(e), name


def test_a_composite_op_must_declare_its_grad_fn_and_note():
    with pytest.raises(TypeError, match="grad_fn= .* and note="):
        composite("_test_missing_note", grad_fn="AddBackward0")(lambda input: input)
    with pytest.raises(TypeError, match="grad_fn= .* and note="):
        composite("_test_missing_grad_fn", note="d/dx = 1")(lambda input: input)
    with pytest.raises(TypeError, match="no grad_fn or derivative note"):
        composite("_test_creation", kind="creation", grad_fn="AddBackward0")(lambda: None)
    assert "_test_missing_note" not in REGISTRY and "_test_creation" not in REGISTRY


def test_an_op_declares_its_forward_mode_rule():
    def forward(input):
        """Identity."""
        return input

    o = op("_test_identity", grad_fn="AliasBackward0", note="d/dx = 1")(forward)
    assert o.jvp is None and o.vjp is None and o.jvp_kind is None and "_test_identity" not in REGISTRY

    def jvp(input_t, input):
        return input_t

    assert o.defjvp(jvp) is o and o.jvp is jvp and o.jvp_kind == "rule"
    assert o.jvp_plan == (("t", 0), ("input", 0))
    with pytest.raises(TypeError, match="forward-mode rule asks for unknown value 'other_t'"):
        o.defjvp(lambda other_t: other_t)
    assert o.defjvp_linear() is o and o.jvp_kind == "linear"
    with pytest.raises(TypeError, match="needs the VJP rule first"):
        o.defjvp_elementwise()
    # every differentiable op of the table has one (tests/engine/test_forward_ad.py checks the private ones too)
    assert all(e.jvp is not None for e in REGISTRY.values() if isinstance(e, Op) and e.differentiable)


def test_a_forward_mode_kind_is_declared_in_the_decorator():
    """``jvp="linear"`` takes effect at once; the kinds computed from the VJP once ``@defvjp`` gives it."""
    def forward(input):
        """Identity."""
        return input

    linear = op("_test_linear", grad_fn="AliasBackward0", note="d/dx = 1", jvp="linear")(forward)
    assert linear.jvp_kind == "linear" and linear.jvp is not None
    elementwise = op("_test_elementwise", grad_fn="AliasBackward0", note="d/dx = 1", jvp="elementwise")(forward)
    assert elementwise.jvp is None and elementwise.jvp_kind is None
    assert elementwise.defvjp(lambda grad: grad) is elementwise and elementwise.jvp_kind == "elementwise"
    with pytest.raises(TypeError, match="jvp= is one of"):
        op("_test_bad_kind", grad_fn="AliasBackward0", note="d/dx = 1", jvp="rule")(forward)
    assert G.exp.jvp_kind == "elementwise" and G.sum.jvp_kind == "linear" and G.mm.jvp_kind == "multilinear"


def test_formulas_and_kinks_are_declared_once_with_their_op(monkeypatch):
    """``formula=`` and ``kinks=`` enter FORMULAS/KINKS by grad_fn name; a second, different text for the same
    backward function is an error at declaration (no text silently lost), the same text is not."""
    from gradcli.ops.core import declare
    from gradcli.ops.core.formulas import FORMULAS, KINKS

    assert FORMULAS is declare.FORMULAS and KINKS is declare.KINKS
    assert G.tanh.formulas == {"TanhBackward0": "input: grad * (1 - result^2)"}
    assert G.sum.formulas.keys() == {"SumBackward0", "SumBackward1"} and G.abs.kinks == "abs"
    assert FORMULAS["SumBackward1"] == "input: grad broadcast over the reduced dims" and KINKS["AbsBackward0"] == "abs"
    monkeypatch.setattr(declare, "FORMULAS", dict(FORMULAS))
    monkeypatch.setattr(declare, "KINKS", dict(KINKS))

    def forward(input):
        """Identity."""
        return input

    o = op("_test_f", grad_fn="TestFormulaBackward0", note="d/dx = 1", formula="input: grad", kinks="f")(forward)
    assert o.formulas == {"TestFormulaBackward0": "input: grad"} and declare.KINKS["TestFormulaBackward0"] == "f"
    op("_test_g", grad_fn="TestFormulaBackward0", note="d/dx = 1", formula="input: grad")(forward)
    with pytest.raises(ValueError, match="TestFormulaBackward0 already has another formula"):
        op("_test_h", grad_fn="TestFormulaBackward0", note="d/dx = 1", formula="input: 2 * grad")(forward)
    with pytest.raises(TypeError, match="a dict by grad_fn name"):
        op("_test_i", grad_fn=lambda dim: "TestBackward0", note="d/dx = 1", formula="input: grad")(forward)
    o = op("_test_j", grad_fn=lambda dim=None: "TestBackward0", note="d/dx = 1",
           formula={"TestBackward0": "input: grad", "TestBackward1": "input: grad, dim"})(forward)
    assert declare.FORMULAS["TestBackward1"] == "input: grad, dim"
    assert "TestFormulaBackward0" not in FORMULAS  # (the tables patched for this test only)



def test_every_forward_mode_kind_has_its_function_and_forward_mode_is_installed():
    """Forward mode computes a tangent by the op's ``jvp_kind`` (forward.JVP_KINDS); apply, below forward,
    reaches it through the hook that forward installs when the package is imported."""
    import gc

    from gradcli.ops.core import apply, forward

    # the private ops too (the losses' are behind public composites)
    ops = {o for o in gc.get_objects() if isinstance(o, Op)}
    kinds = {o.jvp_kind for o in ops if o.jvp is not None}
    assert kinds <= set(forward.JVP_KINDS), kinds - set(forward.JVP_KINDS)
    assert {"rule", "linear", "multilinear", "elementwise", "loss", "reduction"} <= kinds
    assert apply._fw_apply is forward._fw_apply
    # each op calls the apply function of its number of tensor inputs
    assert G.mul.apply_fn is apply._apply_binary and G.exp.apply_fn is apply._apply_unary
    # (the view ops' is wrapped to mark their results as views of their input: gradcli.ops.shape.inplace)
    from gradcli.ops.shape import inplace

    assert all(o.apply_fn is apply.applier(o.ninputs) for o in ops if o not in inplace._VIEW_OPS)
    assert all(o.apply_fn.__name__ == "apply_view" for o in inplace._VIEW_OPS)

def test_unary_table_ops_declare_their_domain():
    assert G.log.domain == (0, float("inf")) and G.acos.domain == (-1, 1) and G.exp.domain is None


# ------------------------------------------------------------------------------------- the rule codes
@pytest.mark.parametrize("o, call", [
    (G.exp, rules.CALL_SAVED),  # rule(grad, result)
    (G.mul, rules.CALL_SAVED_NEEDS),  # rule(grad, input, other, needs_input_grad)
    (G.add, rules.CALL_SAVED_PARAMS),  # rule(grad, alpha)
    (G.sum, rules.CALL_PLAN),  # rule(grad, input_shape, dim, keepdim)
])
def test_call_codes(o, call):
    assert o.vjp_call == call


def test_plan_kinds():
    assert G.sum.vjp_plan == ((rules.ARG_SHAPE, 0), (rules.ARG_PARAM, 0), (rules.ARG_PARAM, 1))
    assert G.mul.vjp_plan == ((rules.ARG_INPUT, 0), (rules.ARG_INPUT, 1), (rules.ARG_NEEDS_INPUT_GRAD, 0))
    assert G.permute.vjp_plan == ((rules.ARG_VARARGS, 0),)
    assert G.tanh.vjp_plan == ((rules.ARG_RESULT, 0),)


# ----------------------------------------------------------------------------------- facts kept once
def test_scalar_type_names_are_pytorchs(torch):
    for d in dtypes.ALL:
        t = torch.zeros(1, dtype=getattr(torch, d.name))
        assert dtypes.scalar_type_name(d) == t.type()[len("torch."):-len("Tensor")], d
        assert dtypes.scalar_type_name(d.np) == dtypes.scalar_type_name(d)


@pytest.mark.parametrize("shapes", [((2, 3), (4, 5)), ((3,), (4,)), ((2, 1, 3), (5, 4)), ((1,), (2, 3), (4, 3))])
def test_infer_size_is_pytorchs(shapes, torch):
    with pytest.raises(RuntimeError) as theirs:
        torch.broadcast_tensors(*(torch.ones(*s) for s in shapes))
    with pytest.raises(RuntimeError) as ours:
        infer_size(*shapes)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("program", [
    lambda m, F: m.matmul(m.ones(2, 3, 4, 5), m.ones(4, 5, 5, 6)),  # batch dimensions that do not broadcast
    lambda m, F: F.mse_loss(m.ones(2, 3), m.ones(4, 5)),
    lambda m, F: m.ones(2, 3) + m.ones(4, 5),
], ids=["matmul", "mse_loss", "add"])
def test_broadcast_errors_name_the_pair_pytorch_names(program, torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mse_loss warns about the target's size first, in both
        with pytest.raises(RuntimeError) as theirs:
            program(torch, torch.nn.functional)
        with pytest.raises(RuntimeError) as ours:
            program(G, G)
    assert str(ours.value) == str(theirs.value)


# ------------------------------------------------------------------------------ the op modules' imports
def _local_imports(path: Path) -> list[str]:
    """The import statements inside functions of one file of gradcli/ops, as ``file:line``."""
    tree = ast.parse(path.read_text(), str(path))
    local = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    local.append(f"{path.relative_to(OPS_DIR)}:{inner.lineno}")
    return local


def test_op_modules_have_no_function_local_imports():
    # (the op families' order among themselves, and ops/core below them, is checked with the package's
    # layers in tests/engine/test_layers.py)
    local = [hit for p in sorted(OPS_DIR.rglob("*.py")) for hit in _local_imports(p)]
    assert not local, f"imports inside functions: {local}"


def test_elementwise_names_the_operators_use_are_exported():
    import gradcli.ops as ops

    for name in ("abs", "add", "bitwise_and", "bitwise_or", "bitwise_xor", "div", "eq", "exp", "floor_divide", "ge",
                 "gt", "le", "log", "lt", "mul", "ne", "neg", "pow", "reciprocal", "remainder", "rsub", "sigmoid",
                 "sign", "sqrt", "sub", "tanh", "to", "true_divide", "where", "_sub", "getitem"):
        assert hasattr(ops, name), name
    assert np.array_equal((G.tensor([1.0, 2.0]) - 1).data, [0.0, 1.0])

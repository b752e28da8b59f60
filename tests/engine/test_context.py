"""The run context (gradcli.engine.context.RunContext): default dtype, random generator, limits, anomaly mode, grad mode
and node budget in one object that a ``with`` block installs and restores; requests, runs and batch entries
each get their own, so nothing one sets reaches the next."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

import gradcli as G
from gradcli.engine.generator import Generator
from gradcli.engine import anomaly, context, limits, node_budget
from gradcli.frontends.cli import app
from gradcli.engine.context import RunContext
from gradcli.engine.errors import EvalError, LimitError

from helpers import ROOT


def snapshot() -> tuple:
    return (G.get_default_dtype(), limits.current, G.is_grad_enabled(), anomaly.enabled(),
            context.state.graph_stop)


# ---------------------------------------------------------------------------------------------- isolation
@pytest.mark.parametrize("order", ["one", "two"])
def test_what_a_test_sets_does_not_reach_the_next(order):
    # Both run (in either order): whichever runs second sees the defaults, not what the first one set.
    assert G.get_default_dtype() is G.float32
    assert limits.current == limits.Limits()
    assert G.is_grad_enabled() and not anomaly.enabled()
    assert context.state.graph_stop == limits.UNLIMITED
    G.set_default_dtype(G.float64)
    limits.configure({"elements": 10, "steps": 5}, environ={})
    G.set_grad_enabled(False)
    G.manual_seed(3)
    anomaly.detect_anomaly().__enter__()  # left on on purpose
    node_budget.start_node_budget(100)


def test_each_context_has_its_own_values_and_restores_the_previous_ones():
    before = snapshot()
    outer_rng = context.generator()
    with RunContext(dtype="float64", seed=0, anomaly=True, grad_enabled=False,
                    limits=limits.Limits(elements=50)) as ctx:
        assert context.current() is ctx and ctx.active
        assert G.get_default_dtype() is G.float64 and G.ones(2).dtype is G.float64
        assert limits.current.elements == 50
        assert not G.is_grad_enabled() and anomaly.enabled()
        assert context.generator() is not outer_rng
        with pytest.raises(LimitError):
            G.ones(60)
    assert snapshot() == before
    assert context.generator() is outer_rng
    assert not ctx.active
    assert (ctx.default_dtype, ctx.limits.elements, ctx.grad_enabled, ctx.anomaly) == (G.float64, 50, False, True)


def test_contexts_nest_and_start_from_defaults_except_the_limits():
    limits.configure({"steps": 77}, environ={})
    G.set_default_dtype(G.float64)
    with G.no_grad():
        with RunContext() as inner:
            # a fresh context: PyTorch's defaults, the active context's limits (what --limit set for the process)
            assert G.get_default_dtype() is G.float32 and G.is_grad_enabled()
            assert limits.current.steps == 77
            limits.configure({"steps": 5}, environ={})
            with RunContext(dtype=G.float64) as innermost:
                assert context.current() is innermost and limits.current.steps == 5
                G.set_default_dtype(G.float32)
            assert context.current() is inner and G.get_default_dtype() is G.float32
            assert limits.current.steps == 5
        assert not G.is_grad_enabled()  # the no_grad block of the outer context
        assert limits.current.steps == 77 and G.get_default_dtype() is G.float64
    assert G.is_grad_enabled()
    assert innermost.default_dtype is G.float32  # what the block set stays with the context


def test_a_context_is_restored_when_its_block_raises():
    before = snapshot()
    ctx = RunContext(dtype="float64")
    with pytest.raises(ZeroDivisionError):
        with ctx:
            G.set_grad_enabled(False)
            limits.configure({"items": 3}, environ={})
            with G.enable_grad():
                1 / 0
    assert snapshot() == before
    assert ctx.grad_enabled is False and ctx.limits.items == 3  # and the context kept its own changes


def test_context_blocks_must_nest():
    a, b = RunContext(), RunContext()
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match="must nest"):
        a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)


def test_grad_modes_restore_inside_the_active_context():
    with RunContext():
        with G.no_grad():
            assert not G.is_grad_enabled()
            with RunContext() as other:
                assert G.is_grad_enabled()  # another context has its own grad mode
                with G.no_grad():
                    pass
                assert G.is_grad_enabled()
                G.set_grad_enabled(False)
            assert not G.is_grad_enabled() and other.grad_enabled is False
            with G.enable_grad():
                x = G.ones(2, requires_grad=True)
                assert (x * 2).requires_grad
            assert not (x * 2).requires_grad
        assert G.is_grad_enabled()


def test_a_context_entered_again_keeps_its_values_like_a_session():
    session = RunContext(seed=1)
    with session:
        G.set_default_dtype(G.float64)
        first = G.randn(3).data
    with session:
        assert G.get_default_dtype() is G.float64
        second = G.randn(3).data
    ref = Generator(1).normal((6,), np.float64)  # one stream across the two blocks (PyTorch's: randn(6))
    np.testing.assert_array_equal(np.concatenate([first, second]), ref)
    with session:
        with session:  # re-entering the active context is allowed
            G.set_default_dtype(G.float32)
        assert G.get_default_dtype() is G.float32


def test_seeds_belong_to_the_context():
    with RunContext(seed=0):
        a = G.randn(4).data
    with RunContext(seed=0):
        b = G.randn(2).data
        with RunContext(seed=5):
            G.manual_seed(9)  # reseeds the inner context only
            G.rand(3)
        c = G.randn(2).data  # the outer stream goes on as if nothing happened in between
    np.testing.assert_array_equal(np.concatenate([b, c]), a)
    with pytest.raises(ValueError):
        RunContext(seed=2**64)  # torch.manual_seed's range is [-2**63, 2**64)
    with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
        RunContext(dtype="int64")


def test_the_generator_is_made_on_first_use_only():
    ctx = RunContext()
    assert ctx._value("rng") is None
    with ctx:
        assert context.state.rng is None
        G.ones(2)
        assert context.state.rng is None
        G.rand(1)
        assert context.state.rng is not None


def test_the_node_budget_belongs_to_the_context():
    x = G.ones(1, requires_grad=True)
    with RunContext():
        node_budget.start_node_budget(3)
        y = x * 1
        with RunContext():  # another context: its own (no) budget
            for _ in range(10):
                y = y * 1
        y = y * 1  # (the budget counts its start: 3 leaves room for 2 nodes, as begin_run did)
        with pytest.raises(LimitError, match="more than 3 autograd graph nodes"):
            y * 1
    assert (x * 1).grad_fn is not None  # no budget outside


def test_anomaly_mode_belongs_to_the_context():
    def nan_grad():
        x = G.tensor([0., 1.], requires_grad=True)
        (G.sqrt(x) * 0).sum().backward()
        return x.grad

    assert np.isnan(nan_grad().data[0])
    with RunContext(anomaly=True) as ctx:
        assert ctx.anomaly and anomaly.enabled()
        with pytest.raises(EvalError, match="Function 'SqrtBackward0' returned nan values in its 0th output"):
            nan_grad()
        with anomaly.detect_anomaly():
            pass
        assert anomaly.enabled()  # detect_anomaly restored what was there
    assert not anomaly.enabled()
    with anomaly.detect_anomaly():
        assert anomaly.enabled()
    assert not anomaly.enabled()


# ------------------------------------------------------------------------------------ requests and entries
def test_a_request_runs_in_a_context_of_its_own():
    from gradcli.app.calculator import GradRequest, compute

    before = snapshot()
    program = ("w = randn(3, requires_grad=True)\ny = (w * 2).sum()\n"
               "torch.set_grad_enabled(False)\ntorch.manual_seed(7)\ny")
    r = compute(GradRequest(program=program, dtype="float64", seed=0, anomaly=True, max_steps=100))
    assert r.output.dtype == "float64"
    assert snapshot() == before
    with RunContext(seed=0, dtype="float64"):
        np.testing.assert_array_equal(r.inputs[0].value.value, G.randn(3).data)


def test_gradcli_run_in_process_leaves_the_callers_context_alone(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text("torch.set_grad_enabled(False)\ntorch.manual_seed(3)\nprint(ones(1).dtype)\n")
    before = snapshot()
    rng = context.generator()
    r = CliRunner().invoke(app, ["run", str(path), "--dtype", "float64", "--limit", "steps=50"])
    assert (r.exit_code, r.stdout) == (0, "torch.float64\n")
    assert snapshot()[0] is before[0] and snapshot()[2:] == before[2:]
    assert context.generator() is rng


BATCH = [
    # sets the grad mode and reseeds inside the program, in float64 with seed 0
    {"program": "w = randn(3, requires_grad=True)\ny = (w * 2).sum()\ntorch.set_grad_enabled(False)\n"
                "torch.manual_seed(7)\ny", "dtype": "float64", "seed": 0},
    # none of that reaches the next entry: float32, grad mode on, a generator of its own
    {"program": "w = randn(3, requires_grad=True)\n(w * 2).sum()"},
    {"program": "w = randn(3, requires_grad=True)\n(w * 2).sum()", "seed": 0},
]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_batch_entry_does_not_leak_into_the_next(jobs):
    text = "".join(json.dumps(e) + "\n" for e in BATCH)
    r = CliRunner().invoke(app, ["batch", "-", "--json", "--format", "jsonl", "--jobs", jobs], input=text)
    assert r.exit_code == 0, r.output
    docs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [d["output"]["dtype"] for d in docs] == ["float64", "float32", "float32"]
    assert all(d["grads"]["w"]["value"] == [2.0, 2.0, 2.0] for d in docs)
    w = [np.array(d["inputs"]["w"]["value"]) for d in docs]
    with RunContext(seed=0):
        seeded = G.randn(3).data
    with RunContext(seed=7):
        reseeded = G.randn(3).data
    np.testing.assert_array_equal(w[2].astype(np.float32), seeded)  # JSON: the shortest float32 decimal
    np.testing.assert_allclose(w[0], seeded, rtol=1e-6)  # the same draws, in float64
    assert not np.allclose(w[1], reseeded) and not np.allclose(w[1], seeded)


# ------------------------------------------------------------------------------------------- library use
def test_library_use_without_a_context():
    # a fresh process: the root context, changed by the functions PyTorch users know
    code = """
import gradcli as G
from gradcli.engine import context, limits
assert context.current() is context.ROOT
G.set_default_dtype(G.float64)
G.manual_seed(0)
a = G.randn(2)
limits.configure({"elements": 4}, environ={})
try:
    G.ones(5)
except Exception as e:
    print(type(e).__name__)
with G.no_grad():
    print((G.ones(2, requires_grad=True) * 2).requires_grad)
with G.RunContext(seed=0) as ctx:
    print(G.randn(2).dtype, ctx.default_dtype, limits.current.elements)  # the limits are inherited
print(a.dtype, context.ROOT.default_dtype, limits.current.elements, G.is_grad_enabled())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.splitlines() == ["LimitError", "False", "torch.float32 torch.float32 4",
                                "torch.float64 torch.float64 4 True"]


def test_run_context_is_public_and_documented():
    assert G.RunContext is RunContext
    for name in ("RunContext", "default_dtype", "limits", "grad_enabled", "anomaly", "generator",
                 "manual_seed"):
        obj = RunContext if name == "RunContext" else getattr(RunContext, name)
        assert (obj.__doc__ or "").strip(), name
    assert "RunContext" in G.__doc__

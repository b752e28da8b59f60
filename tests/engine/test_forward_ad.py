"""gradcli.api.forward_ad (torch.autograd.forward_ad): levels, dual tensors, messages and printing
compared with PyTorch; tangents through in-place ops and views; PyTorch's error for an op without a forward-mode
rule. The per-op JVP checks are generated from the op table (tests/ops/test_op_table.py: test_jvp, test_jvp_hvp)."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as G
from gradcli.api import forward_ad as fwAD
from gradcli.ops import REGISTRY
from gradcli.ops.core.declare import Op, op


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return type(e).__name__, str(e)
    return None


def test_make_dual_unpack_dual_and_printing_match_torch(torch):
    tfw = torch.autograd.forward_ad
    for m, fw in ((G, fwAD), (torch, tfw)):
        x = m.tensor([1.0, 2.0])
        with fw.dual_level() as level:
            assert level == 0
            d = fw.make_dual(x, m.tensor([0.5, 1.0]))
            y = d * d + d.sin()
            s = y.sum()
            texts = [repr(d), repr(y), repr(s), repr(fw.unpack_dual(y)), repr(fw.unpack_dual(x)),
                     repr(fw.unpack_dual(d > 1)), repr(fw.unpack_dual(y)[1]), repr(fw.unpack_dual(y).primal)]
        texts += [repr(fw.unpack_dual(y)), repr(y)]
        if m is G:
            got = texts
        else:
            want = texts
    assert got == want


def test_reverse_over_forward_matches_torch(torch):
    tfw = torch.autograd.forward_ad
    out = []
    for m, fw in ((G, fwAD), (torch, tfw)):
        x = m.tensor([0.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, m.tensor([1.0, 2.0, -1.0], dtype=m.float64))
            tangent = fw.unpack_dual((d.exp() * d).sum()).tangent
            out.append((repr(d), repr(tangent), m.autograd.grad(tangent, x)[0].detach().numpy().copy()))
    assert out[0][:2] == out[1][:2]
    np.testing.assert_allclose(out[0][2], out[1][2], rtol=1e-12)


@pytest.mark.parametrize("case", ["shape", "int-primal", "int-tangent", "no-level", "level-1", "nested", "dual-twice",
                                  "exit-outside", "unpack-not-tensor", "unpack-outside", "unpack-level-1",
                                  "dtype"])
def test_errors_match_torch(case, torch):
    tfw = torch.autograd.forward_ad
    results = []
    for m, fw in ((G, fwAD), (torch, tfw)):
        x = m.tensor([1.0, 2.0])

        def inside(f):
            with fw.dual_level():
                return f()

        calls = {
            "shape": lambda: inside(lambda: fw.make_dual(x, m.ones(3))),
            "int-primal": lambda: inside(lambda: fw.make_dual(m.tensor([1, 2]), m.tensor([1, 2]))),
            "int-tangent": lambda: inside(lambda: fw.make_dual(x, m.tensor([1, 2]))),
            "no-level": lambda: fw.make_dual(x, x),
            "level-1": lambda: inside(lambda: fw.make_dual(x, x, level=1)),
            "nested": lambda: inside(lambda: inside(lambda: None)),
            "dual-twice": lambda: inside(lambda: fw.make_dual(fw.make_dual(x, x), x)),
            "exit-outside": lambda: fw.exit_dual_level(),
            "unpack-not-tensor": lambda: inside(lambda: fw.unpack_dual(3)),
            "unpack-outside": lambda: repr(fw.unpack_dual(3)),
            "unpack-level-1": lambda: inside(lambda: (repr(fw.unpack_dual(x, level=1)),
                                                      fw.unpack_dual(fw.make_dual(x, x), level=1))),
            "dtype": lambda: inside(lambda: repr(fw.make_dual(x, m.ones(2, dtype=m.float64)))),
        }
        results.append(calls[case]() if case in ("dtype", "unpack-outside") else _error(calls[case]))
    assert results[0] == results[1]


def test_level_exit_forgets_tangents_and_the_next_level_starts_clean():
    x = G.tensor([1.0, 2.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, G.ones(2))
        y = d * 3
    assert fwAD.unpack_dual(y).tangent is None and fwAD.unpack_dual(d).tangent is None
    with fwAD.dual_level():
        assert fwAD.unpack_dual(y).tangent is None
        assert "tangent" not in repr(d * 2)
    with G.RunContext():  # a run context of its own: no level there
        with pytest.raises(RuntimeError, match="no level exists"):
            fwAD.make_dual(x, x)


def test_an_error_in_the_block_leaves_the_level():
    with pytest.raises(ValueError):
        with fwAD.dual_level():
            raise ValueError
    with fwAD.dual_level():  # not "nested"
        pass


def test_inplace_ops_and_views_carry_tangents_as_torch(torch):
    tfw = torch.autograd.forward_ad
    out = []
    for m, fw in ((G, fwAD), (torch, tfw)):
        with fw.dual_level():
            base = fw.make_dual(m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 1.0, 1.0]))
            v = base[1:]
            v.mul_(2.0)  # the view's tangent is a view of the base's: both change
            w = m.zeros(3)
            w[0] = base[2]
            c = m.tensor([1.0, 2.0])
            c.add_(fw.make_dual(m.tensor([1.0, 1.0]), m.tensor([3.0, 4.0])))
            out.append([repr(base), repr(v), repr(fw.unpack_dual(w)), repr(c)])
    assert out[0] == out[1]


def test_an_op_without_a_rule_raises_pytorchs_error(torch):
    @op("_no_jvp_for_test", grad_fn="NoJvpBackward0", note="d/dx = 1")
    def no_jvp(input):
        """An op with a VJP and no JVP."""
        return input.copy()

    no_jvp.defvjp(lambda grad: grad)
    with fwAD.dual_level():
        d = fwAD.make_dual(G.tensor([1.0]), G.tensor([1.0]))
        with pytest.raises(NotImplementedError) as e:
            no_jvp(d)
        no_jvp(G.tensor([1.0]))  # no dual input: no tangent wanted
    assert str(e.value) == (
        "Trying to use forward AD with _no_jvp_for_test that does not support it because it has not been "
        "implemented yet.\nPlease file an issue to PyTorch at "
        "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can prioritize its "
        "implementation or submit a PR adding the implementation to derivatives.yaml")
    # PyTorch's text, with its op's name
    with torch.autograd.forward_ad.dual_level():
        d = torch.autograd.forward_ad.make_dual(torch.ones(1, 2), torch.ones(1, 2))
        with pytest.raises(NotImplementedError) as t:
            torch.cdist(d, d)
    assert str(t.value) == str(e.value).replace("_no_jvp_for_test", "_cdist_forward")


def test_floor_divide_has_no_forward_ad_as_in_torch(torch):
    got = want = None
    with fwAD.dual_level():
        got = _error(lambda: fwAD.make_dual(G.tensor([1.0, 2.0]), G.ones(2)) // 2)
    with torch.autograd.forward_ad.dual_level():
        want = _error(lambda: torch.autograd.forward_ad.make_dual(torch.tensor([1.0, 2.0]), torch.ones(2)) // 2)
    assert got == want


def test_every_differentiable_op_has_a_forward_rule():
    import gc

    ops = {o for o in gc.get_objects() if isinstance(o, Op)} | {o for o in REGISTRY.values() if isinstance(o, Op)}
    missing = sorted(o.name for o in ops if o.differentiable and o.jvp is None and o.name != "_no_jvp_for_test")
    assert not missing, f"ops without a JVP rule (@op.defjvp...): {missing}"


def test_forward_over_reverse_matches_torch(torch):
    """The tangent of a gradient taken with create_graph=True inside the level: a Hessian-vector product."""
    tfw = torch.autograd.forward_ad
    out = []
    for m, fw in ((G, fwAD), (torch, tfw)):
        x = m.tensor([0.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, m.tensor([1.0, 2.0, -1.0], dtype=m.float64))
            y = (d.exp() * d).sum() + (d * d).sin().sum() + m.softmax(d, 0).log().sum()
            g, = m.autograd.grad(y, d, create_graph=True)
            out.append(repr(fw.unpack_dual(g).tangent))
    assert out[0] == out[1]

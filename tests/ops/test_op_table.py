"""The generic tests of the op table, generated from tests/ops/opinfo.py (PyTorch's OpInfo pattern).

For every sample of every entry (test ids such as ``log-3x4``, ``absolute-3x4``, ``sum-3x4-dim1-keepdim``,
``__radd__-scalar``), and for the multi-op graphs of tests/ops/cases_graphs.py (``composite-mlp``):

* :func:`test_gradcheck`: gradcli's derivative in float64 against central differences (tests/helpers.py:
  one-hot backward rows vs finite differences, PyTorch gradcheck's eps 1e-6, atol 1e-5, rtol 1e-3);
* :func:`test_gradgradcheck`: the gradient built with ``create_graph=True`` gradchecked in turn;
* :func:`test_against_torch`: in float32 and float64, forward values, shape, dtype, ``requires_grad``,
  ``grad_fn`` name and leaf flag, then the gradients of ``out.backward(v)`` (values, dtypes, shapes,
  which inputs get one) equal PyTorch's;
* :func:`test_second_derivative_against_torch`: first and second derivatives (and which are defined) equal
  PyTorch's in float64;
* :func:`test_nondifferentiable_against_torch`: for ops without derivative (comparisons, bitwise, argmax),
  values, shapes and dtypes equal PyTorch's and nothing requires grad.

The table's completeness is tested too: a public op of kind "op" in ``gradcli.ops.REGISTRY`` (differentiable
or not) without an entry fails :func:`test_every_registry_op_has_an_entry`, so a new op is tested the moment
it has one.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import gradcli as G
from gradcli.ops import KINDS, REGISTRY

import cases_graphs
import opinfo
from helpers import (autograd_grad, g_inputs, grad_fn_name, gradcheck, gradgradcheck, make_arrays, seed_of,
                     t_inputs, to_np)

#: (entry, sample, case) for every sample of the table.
TABLE = opinfo.table_cases()
#: The graph cases: (None, None, case).
GRAPHS = [(None, None, c) for c in cases_graphs.BOOK.cases]


def _differentiable(c) -> bool:
    return any(a.differentiable for a in c.args)


def _params(test: str, rows, dtypes: bool = False) -> list:
    """pytest params of ``rows`` for ``test``, with each entry's skips (pytest.mark.skip) and known bugs
    (strict xfail); with ``dtypes``, one param per float dtype of the entry."""
    out = []
    for op, sample, case in rows:
        marks = list(case.marks)
        for skip in (op.skips if op else ()):
            if skip.test == test and (not skip.ids or sample.id in skip.ids or case.id in skip.ids):
                marks.append(pytest.mark.xfail(strict=True, reason=skip.reason) if skip.xfail
                             else pytest.mark.skip(reason=skip.reason))
        if dtypes:
            for dt in (op.dtypes if op else (np.float32, np.float64)):
                out.append(pytest.param(case, dt, id=f"{case.id}-{np.dtype(dt).name}", marks=marks))
        else:
            out.append(pytest.param(case, id=case.id, marks=marks))
    return out


#: Samples of differentiable entries (and the graphs); ``BACKWARD`` are those whose backward is defined.
DIFF_ROWS = [r for r in TABLE if r[0].differentiable] + GRAPHS
BACKWARD_ROWS = [r for r in DIFF_ROWS if r[0] is None or r[0].supports_autograd]
#: The samples with an input that requires grad (the others have no derivative to check twice).
GRADGRAD_ROWS = [r for r in BACKWARD_ROWS if _differentiable(r[2]) and (r[0] is None or r[0].supports_gradgrad)]
NONDIFF_ROWS = [r for r in TABLE if not r[0].differentiable]


def tdtype(t) -> str:
    """A gradcli or torch dtype as torch prints it ("torch.float32")."""
    return str(t.dtype)


def tol(dtype, family: str | None = None) -> dict:
    """The tolerance of a comparison with PyTorch: float64 tight; float32 torch.testing's, and for linear algebra
    (inverses and powers of inverses, whose float32 error grows with the condition number and whose last bits
    follow the LAPACK kernel the CPU runs) ten times wider, as PyTorch's own OpInfos widen theirs."""
    if dtype == np.float64:
        return {"rtol": 1e-6, "atol": 1e-12}
    return {"rtol": 1e-4, "atol": 1e-5} if family == "linalg" else {"rtol": 1e-5, "atol": 1e-6}


# ============================================================================================ the table
def _public_ops() -> set:
    return {n for n, k in KINDS.items() if k == "op" and not n.startswith("_")}


def _covered() -> set:
    return {op.name for op in opinfo.OP_DB} | {a for op in opinfo.OP_DB for a in op.aliases}


def test_every_registry_op_has_an_entry():
    missing = _public_ops() - _covered()
    assert not missing, (f"ops in gradcli.ops.REGISTRY without an entry in tests/ops/opinfo.py (declare their "
                         f"sample inputs there, or list them as an alias of their op): {sorted(missing)}")


def test_entries_name_registry_ops_or_tensor_syntax():
    ops = _public_ops()
    for op in opinfo.OP_DB:
        if op.syntax:
            assert op.name not in REGISTRY and hasattr(G.Tensor, op.name), op.name
        else:
            assert op.name in ops, f"entry {op.name!r} is not a public op of kind 'op'"
        for alias in op.aliases:
            assert alias in ops, f"alias {alias!r} of {op.name!r} is not a public op of kind 'op'"
    names = [op.name for op in opinfo.OP_DB] + [a for op in opinfo.OP_DB for a in op.aliases]
    assert len(names) == len(set(names)), "an op has two entries"


def test_every_entry_has_samples_and_runs_each_alias():
    for op in opinfo.OP_DB:
        samples = op.samples()
        assert samples, f"{op.name} has no samples"
        used = {s.name for s in samples}
        for alias in op.aliases:
            assert alias in used, f"no sample of {op.name} calls its alias {alias}"
        for s in samples:
            assert s.name is None or s.name in op.aliases or s.name in opinfo.OPERATORS, (op.name, s.id, s.name)
        if op.differentiable and not op.syntax:
            assert any(_differentiable(op.case(s)) for s in samples), f"no sample of {op.name} requires grad"


def test_every_tensor_method_is_called_as_a_method():
    """An op (or alias) that is also a Tensor method has a sample calling the method."""
    missing = []
    for op in opinfo.OP_DB:
        methods = {s.name or op.name for s in op.samples() if s.method}
        missing += [n for n in (op.name, *op.aliases) if not op.syntax and hasattr(G.Tensor, n) and n not in methods]
    assert not missing, f"Tensor methods without a method sample in tests/ops/opinfo.py: {missing}"


@pytest.mark.parametrize("family", ["elementwise", "activation"])
def test_elementwise_entries_cover_0d_and_size_1_dims(family):
    """Every elementwise op runs on a 0-d tensor and on one with a size-1 dim (broadcasting)."""
    for op in (o for o in opinfo.OP_DB if o.family == family):
        shapes = [a.shape for s in op.samples() for a in s.inputs]
        assert () in shapes, f"{op.name}: no 0-d sample"
        assert any(1 in s for s in shapes), f"{op.name}: no sample with a size-1 dim"


def test_case_ids_are_unique_and_skips_are_current():
    ids = [c.id for _, _, c in TABLE + GRAPHS]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    tests = {n for n, f in globals().items() if n.startswith("test_") and inspect.isfunction(f)}
    for op in opinfo.OP_DB:
        sample_ids = {s.id for s in op.samples()} | {op.case_id(s) for s in op.samples()}
        for skip in op.skips:
            assert skip.test in tests, f"{op.name}: skip of unknown test {skip.test}"
            assert set(skip.ids) <= sample_ids, f"{op.name}: skip of unknown samples {set(skip.ids) - sample_ids}"
            assert skip.reason, f"{op.name}: a skip needs its reason"


def test_registry_kinds_and_namespace():
    assert set(KINDS) == set(REGISTRY)
    assert set(KINDS.values()) <= {"op", "creation", "function"}
    for name in _public_ops():
        assert getattr(G, name) is REGISTRY[name], name
        assert callable(REGISTRY[name])


def test_differentiable_entries_match_the_registry():
    """Entries without derivative are exactly the ops the registry declares not differentiable."""
    for op in opinfo.OP_DB:
        if op.syntax:
            continue
        for name in (op.name, *op.aliases):
            declared = getattr(REGISTRY[name], "differentiable", True)
            if op.differentiable:
                assert declared is not False, name
            else:
                assert declared is False, name


# ============================================================================================ gradcheck
@pytest.mark.parametrize("case", _params("test_gradcheck", BACKWARD_ROWS))
def test_gradcheck(case):
    arrays = make_arrays(case.args, case.id)
    inputs = g_inputs(case.args, arrays, np.float64)

    def fn(*xs):
        return case.fn(G, *xs)

    assert fn(*inputs).requires_grad == _differentiable(case)
    if _differentiable(case):  # else the output not requiring grad is the check
        assert gradcheck(fn, inputs, seed=seed_of(case.id))


def test_gradcheck_detects_a_wrong_derivative():
    """The gradcheck itself must fail on a wrong rule: here exp's value with its derivative scaled by 1.01
    (``e + (x - x.detach()) * 1.01 e``, e detached: the forward is exp, the backward 1.01 exp)."""
    def wrong_exp(t):
        e = G.exp(t).detach()
        return e + (t - t.detach()) * (e * 1.01)

    x = G.tensor(np.linspace(-1, 1, 5), dtype=G.float64, requires_grad=True)
    np.testing.assert_allclose(wrong_exp(x).data, np.exp(x.data), rtol=1e-15)
    with pytest.raises(AssertionError, match="Jacobian mismatch"):
        gradcheck(wrong_exp, [x])


@pytest.mark.parametrize("case", _params("test_gradgradcheck", GRADGRAD_ROWS))
def test_gradgradcheck(case):
    """Second derivatives: the gradient (built with create_graph=True) is itself gradchecked."""
    arrays = make_arrays(case.args, case.id)
    inputs = g_inputs(case.args, arrays, np.float64)
    assert gradgradcheck(lambda *xs: case.fn(G, *xs), inputs, seed=seed_of(case.id))


def test_gradgradcheck_detects_a_wrong_second_derivative():
    """A rule that is right to first order but not differentiable correctly must fail gradgradcheck: here
    tanh with a derivative built from the detached result (first derivative right, second wrong)."""
    def tanh_detached_rule(t):
        y = G.tanh(t).detach()
        return y + (t - t.detach()) * (1 - y * y)

    x = G.tensor(np.linspace(-1, 1, 5), dtype=G.float64, requires_grad=True)
    gradcheck(tanh_detached_rule, [x])
    with pytest.raises(AssertionError, match="does not require grad, but it varies"):
        gradgradcheck(tanh_detached_rule, [x])


@pytest.mark.parametrize("case", _params("test_second_derivative_against_torch", GRADGRAD_ROWS))
def test_second_derivative_against_torch(case, torch):
    """``grad(out, inputs, v, create_graph=True)`` then ``grad(sum(g_k * u_k), inputs)`` equal PyTorch's
    (float64): first and second derivatives, and which of them are defined."""
    arrays = make_arrays(case.args, case.id)
    rng = np.random.default_rng(seed_of(case.id + "vv"))
    results = []
    v = u = None
    for m, make in ((G, g_inputs), (torch, lambda *a: t_inputs(torch, *a))):
        xs = make(case.args, arrays, np.float64)
        wrt = [x for a, x in zip(case.args, xs) if a.differentiable]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = case.fn(m, *xs)
        if v is None:
            v = rng.standard_normal(tuple(out.shape))
            u = [rng.standard_normal(tuple(x.shape)) for x in wrt]
        first = autograd_grad(m)(out, wrt, grad_outputs=m.tensor(v), create_graph=True, allow_unused=True)
        terms = [(g * m.tensor(uk)).sum() for g, uk in zip(first, u) if g is not None and g.requires_grad]
        second = [None] * len(wrt)
        if terms:
            total = terms[0]
            for t in terms[1:]:
                total = total + t
            second = autograd_grad(m)(total, wrt, allow_unused=True)
        results.append(([None if g is None else to_np(g).copy() for g in first],
                        [None if g is None else to_np(g).copy() for g in second]))
    (g1, g2), (t1, t2) = results
    for k in range(len(g1)):
        for name, a, b in (("first", g1[k], t1[k]), ("second", g2[k], t2[k])):
            if a is None or b is None:  # gradcli may materialise a zero gradient where torch leaves None
                other = b if a is None else a
                assert other is None or not np.any(other), f"{name} derivative of input {k}: {a} vs {b}"
                continue
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10, err_msg=f"{name} derivative of input {k}")


# ========================================================================================= torch oracle
def _backward_error(m, out, v):
    try:
        out.backward(m.tensor(v))
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case, dtype", _params("test_against_torch", DIFF_ROWS, dtypes=True))
def test_against_torch(case, dtype, torch):
    arrays = make_arrays(case.args, case.id)
    gi = g_inputs(case.args, arrays, dtype)
    ti = t_inputs(torch, case.args, arrays, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's x.T deprecation for non-2-d tensors
        out_t = case.fn(torch, *ti)
    out_g = case.fn(G, *gi)

    assert isinstance(out_g, G.Tensor)
    assert tuple(out_g.shape) == tuple(out_t.shape)
    assert tdtype(out_g) == tdtype(out_t)
    np.testing.assert_allclose(to_np(out_g), to_np(out_t), **tol(dtype), err_msg="forward")
    assert out_g.requires_grad == out_t.requires_grad
    assert grad_fn_name(out_g) == grad_fn_name(out_t)
    assert out_g.is_leaf == out_t.is_leaf

    if not out_t.requires_grad:
        return
    v = np.random.default_rng(seed_of(case.id + "v")).standard_normal(tuple(out_t.shape)).astype(dtype)
    op = opinfo.BY_NAME.get(case.op)
    if op is not None and not op.supports_autograd:  # the backward raises, as PyTorch's
        err_t = _backward_error(torch, out_t, v)
        assert err_t is not None
        assert _backward_error(G, out_g, v) == err_t
        return
    out_t.backward(torch.from_numpy(v.copy()))
    out_g.backward(G.tensor(v))
    for k, (a, g, t) in enumerate(zip(case.args, gi, ti)):
        if not a.differentiable:
            assert g.grad is None and t.grad is None
            continue
        assert (g.grad is None) == (t.grad is None), f"input {k}"
        if t.grad is None:
            continue
        assert tdtype(g.grad) == tdtype(t.grad), f"grad dtype of input {k}"
        assert tuple(g.grad.shape) == tuple(t.grad.shape)
        np.testing.assert_allclose(g.grad.data, t.grad.numpy(), **tol(dtype, op.family if op is not None else None),
                                   err_msg=f"grad of input {k}")


@pytest.mark.parametrize("case", _params("test_nondifferentiable_against_torch", NONDIFF_ROWS))
def test_nondifferentiable_against_torch(case, torch):
    arrays = make_arrays(case.args, case.id)
    gi = g_inputs(case.args, arrays, np.float32)
    ti = t_inputs(torch, case.args, arrays, np.float32)
    out_g = case.fn(G, *gi)
    out_t = case.fn(torch, *ti)
    assert tdtype(out_g) == tdtype(out_t)
    assert tuple(out_g.shape) == tuple(out_t.shape)
    np.testing.assert_array_equal(to_np(out_g), to_np(out_t))
    assert out_g.requires_grad is False and out_t.requires_grad is False
    assert out_g.grad_fn is None


# ========================================================================================= forward mode
#: The samples whose op has a derivative (and so a forward-mode rule, or PyTorch's "Trying to use forward AD"
#: error); ``HVP`` are those with second derivatives.
JVP_ROWS = [r for r in BACKWARD_ROWS if _differentiable(r[2])]
HVP_ROWS = GRADGRAD_ROWS


def _tangents(case, arrays, seed: str) -> list:
    """A random tangent (float64) per input that requires grad, None for the others."""
    rng = np.random.default_rng(seed_of(case.id + seed))
    return [rng.standard_normal(arr.shape) if a.differentiable else None for a, arr in zip(case.args, arrays)]


def _jvp_gradcli(case, arrays, tangents, requires_grad: bool = False):
    """``(out, tangent)`` of the case by gradcli's forward AD (float64): inputs with a tangent made dual."""
    from gradcli.api import forward_ad as fwAD

    xs = g_inputs(case.args, arrays, np.float64)
    if not requires_grad:
        xs = [x.detach() for x in xs]
    with fwAD.dual_level():
        duals = [x if t is None else fwAD.make_dual(x, G.tensor(t)) for x, t in zip(xs, tangents)]
        out = case.fn(G, *duals)
        primal, tangent = fwAD.unpack_dual(out)
        return xs, primal, tangent


@pytest.mark.parametrize("case", _params("test_jvp", JVP_ROWS))
def test_jvp(case, torch):
    """Forward mode in float64: the tangent of the output for random input tangents equals central
    differences along the tangent (eps 1e-6, atol 1e-5, rtol 1e-3) and ``torch.func.jvp``; the primal equals
    the ordinary forward."""
    arrays = make_arrays(case.args, case.id)
    tangents = _tangents(case, arrays, "t")
    _, primal, tangent = _jvp_gradcli(case, arrays, tangents)
    want = case.fn(G, *[x.detach() for x in g_inputs(case.args, arrays, np.float64)])
    np.testing.assert_array_equal(primal.data, want.data)
    assert tangent is not None, "the output of a dual input has no tangent"
    assert tangent.data.shape == primal.data.shape and tangent.data.dtype == primal.data.dtype

    op = opinfo.BY_NAME.get(case.op)
    if op is not None and op.family == "random":  # a sample's tangent is zero, not its reseeded difference
        np.testing.assert_array_equal(tangent.data, 0.0)
        try:
            _compare_torch_jvp(case, arrays, tangents, tangent, torch)
        except RuntimeError as e:  # PyTorch's normal(mean, std) with broadcasting makes a tangent of mean's shape
            assert "different size than that of the original Tensor" in str(e), e
        return
    eps = 1e-6
    plus = [G.tensor(a + eps * t) if t is not None else G.tensor(cast_(a)) for a, t in zip(arrays, tangents)]
    minus = [G.tensor(a - eps * t) if t is not None else G.tensor(cast_(a)) for a, t in zip(arrays, tangents)]
    numeric = (case.fn(G, *plus).data - case.fn(G, *minus).data) / (2 * eps)
    np.testing.assert_allclose(tangent.data, numeric, atol=1e-5, rtol=1e-3, err_msg="central differences")
    _compare_torch_jvp(case, arrays, tangents, tangent, torch)


def _compare_torch_jvp(case, arrays, tangents, tangent, torch) -> None:
    """gradcli's tangent equals ``torch.func.jvp``'s (PyTorch's dual tensors where functorch fails)."""
    ti = t_inputs(torch, case.args, arrays, np.float64)
    ti = [t.detach() for t in ti]
    wrt = [k for k, t in enumerate(tangents) if t is not None]

    def f(*ps):
        xs = list(ti)
        for k, p in zip(wrt, ps):
            xs[k] = p
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return case.fn(torch, *xs)

    primals, tans = tuple(ti[k] for k in wrt), tuple(torch.from_numpy(tangents[k]) for k in wrt)
    try:
        _, t_tangent = torch.func.jvp(f, primals, tans)
    except RuntimeError:  # a few functorch paths fail (F.linear of a 3-d input and a 2-d bias): PyTorch's dual tensors
        from torch.autograd import forward_ad as tfw

        with tfw.dual_level():
            t_tangent = tfw.unpack_dual(f(*(tfw.make_dual(p, t) for p, t in zip(primals, tans)))).tangent
    np.testing.assert_allclose(tangent.data, to_np(t_tangent), rtol=1e-7, atol=1e-10, err_msg="torch.func.jvp")


def cast_(a):
    return a.astype(np.float64) if a.dtype.kind == "f" else a


@pytest.mark.parametrize("case", _params("test_jvp_hvp", HVP_ROWS))
def test_jvp_hvp(case, torch):
    """Second order through forward mode (float64), the Hessian-vector products of ``w . f`` both ways, equal to
    PyTorch's: reverse over forward (the output's tangent ``J u`` is differentiable: ``grad(sum(w * J u),
    inputs)``) and forward over reverse (inside the level, the tangent of ``grad(f, inputs, w,
    create_graph=True)``)."""
    from gradcli.api import forward_ad as fwAD

    arrays = make_arrays(case.args, case.id)
    tangents = _tangents(case, arrays, "u")
    xs, primal, tangent = _jvp_gradcli(case, arrays, tangents, requires_grad=True)
    w = np.random.default_rng(seed_of(case.id + "w")).standard_normal(primal.data.shape)
    wrt = [x for a, x in zip(case.args, xs) if a.differentiable]
    got = [None] * len(wrt)
    if tangent.requires_grad:
        got = G.autograd.grad((tangent * G.tensor(w)).sum(), wrt, allow_unused=True)

    want = _torch_hvp(case, arrays, tangents, w, torch)
    if want is None:  # PyTorch cannot: central differences of gradcli's gradient along the tangents
        want = _fd_hvp(case, arrays, tangents, w)
        rtol, atol = 1e-3, 1e-5
    else:
        rtol, atol = 1e-7, 1e-10
    _compare_hvp(got, want, rtol, atol, "reverse over forward")

    xs = g_inputs(case.args, arrays, np.float64)
    wrt = [x for a, x in zip(case.args, xs) if a.differentiable]
    with fwAD.dual_level():
        duals = [x if t is None else fwAD.make_dual(x, G.tensor(t)) for x, t in zip(xs, tangents)]
        out = case.fn(G, *duals)
        grads = G.autograd.grad(out, wrt, G.tensor(w), create_graph=True, allow_unused=True)
        fwd = [None if g is None else fwAD.unpack_dual(g).tangent for g in grads]
    _compare_hvp(fwd, want, rtol, atol, "forward over reverse")


def _compare_hvp(got, want, rtol, atol, how: str) -> None:
    for k, (a, b) in enumerate(zip(got, want)):
        if a is None or b is None:
            other = b if a is None else a
            assert other is None or not np.any(other if isinstance(other, np.ndarray) else to_np(other)), (
                f"{how}: hvp of input {k}: {a} vs {b}")
            continue
        a, b = (x if isinstance(x, np.ndarray) else to_np(x) for x in (a, b))
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"{how}: hvp of input {k}")


def _torch_hvp(case, arrays, tangents, w, torch):
    """PyTorch's ``grad(sum(w * J u), inputs)``: reverse over its forward AD, or, where that fails in PyTorch
    (its log_softmax tangent modifies a saved value in place), forward over reverse with torch.func (equal: the
    Hessian of ``w . f`` is symmetric); None where both fail (no forward AD for silu_backward)."""
    from torch.autograd import forward_ad as tfw

    ti = t_inputs(torch, case.args, arrays, np.float64)
    twrt = [x for a, x in zip(case.args, ti) if a.differentiable]
    try:
        with warnings.catch_warnings(), tfw.dual_level():
            warnings.simplefilter("ignore")
            duals = [x if t is None else tfw.make_dual(x, torch.from_numpy(t)) for x, t in zip(ti, tangents)]
            t_tan = tfw.unpack_dual(case.fn(torch, *duals)).tangent
            if t_tan is None or not t_tan.requires_grad:
                return [None] * len(twrt)
            return torch.autograd.grad((t_tan * torch.from_numpy(w)).sum(), twrt, allow_unused=True)
    except (RuntimeError, NotImplementedError):
        pass
    ti = [x.detach() for x in ti]
    wrt = [k for k, t in enumerate(tangents) if t is not None]

    def grad_of(*ps):
        def scalar(*qs):
            xs = list(ti)
            for k, q in zip(wrt, qs):
                xs[k] = q
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return (case.fn(torch, *xs) * torch.from_numpy(w)).sum()

        return torch.func.grad(scalar, argnums=tuple(range(len(ps))))(*ps)

    try:
        _, hv = torch.func.jvp(grad_of, tuple(ti[k] for k in wrt), tuple(torch.from_numpy(tangents[k]) for k in wrt))
    except (RuntimeError, NotImplementedError):
        return None
    return list(hv)


def _fd_hvp(case, arrays, tangents, w, eps: float = 1e-6) -> list:
    """Central differences along the tangents of gradcli's gradient of ``sum(w * f)`` (float64)."""
    def grads(sign):
        xs = [G.tensor(a + sign * eps * t, requires_grad=True) if t is not None else G.tensor(cast_(a))
              for a, t in zip(arrays, tangents)]
        wrt = [x for x, t in zip(xs, tangents) if t is not None]
        gs = G.autograd.grad((case.fn(G, *xs) * G.tensor(w)).sum(), wrt, allow_unused=True, materialize_grads=True)
        return [g.data for g in gs]

    return [(p - m) / (2 * eps) for p, m in zip(grads(1), grads(-1))]

"""Every op of the op table under ``torch.func.vmap``, compared with PyTorch (generated from tests/ops/opinfo.py).

Each sample's float inputs get a batch of 3 examples (drawn like the sample's own values), mapped along the
leading dimension and along dimension 1 (``in_dims=1``, 0 for a 0-d example); the other inputs (indices,
masks) are not mapped. The batched result must equal torch.func.vmap's in float64 (values, shape, dtype), and
where PyTorch refuses (a random op in randomness "error" mode, data-dependent shapes) gradcli must raise the
same exception type. A new op of the table is covered the moment it has an entry.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradcli as G
from gradcli.api import func as F
from helpers import cast, make_arrays, to_np

import opinfo

B = 3
#: The samples with a float input to map over (the others, integer and bool ops, have nothing to batch here).
CASES = [case for _, _, case in opinfo.table_cases() if any(a.is_float for a in case.args)]

#: Samples where torch.func.vmap refuses or answers other than its own per-example results because of a gap in
#: its batching rules (not a refusal of the computation): gradcli gives the per-example results, and the oracle
#: is PyTorch's per-example results, stacked. Keyed by test id, with what PyTorch does.
TORCH_VMAP_GAPS = {
    "linear-3d-2d-bias-0": "a broadcast error from linear's batching rule",
    "linear-3d-1d-weight-0d-bias-0": "a broadcast error from linear's batching rule",
    "linalg.solve-broadcast-0": "a broadcast error from linalg_solve's batching rule",
    "linalg.solve-broadcast-1": "a broadcast error from linalg_solve's batching rule",
    "flip-0d-0": "IndexError: flip's rule shifts the dim of a 0-d example past its batch dim",
    "flip-0d-1": "IndexError: flip's rule shifts the dim of a 0-d example past its batch dim",
    "index_select-0d-index-0": "index_select's rule treats the 0-d index as a batch of indices (3x3x4)",
    "index_select-0d-index-1": "index_select's rule treats the 0-d index as a batch of indices (3x3x4)",
    "linalg.lu_solve-broadcast-0": "linalg_lu_solve's batching rule broadcasts LU against B's example batch (other "
                                   "numbers than per example)",
    "linalg.lu_solve-broadcast-1": "linalg_lu_solve's batching rule broadcasts LU against B's example batch (other "
                                   "numbers than per example)",
    "linalg.lstsq-vector-0": "linalg_lstsq's batching rule does not see the vector right-hand side (a size error)",
    "linalg.lstsq-vector-1": "linalg_lstsq's batching rule does not see the vector right-hand side (a size error)",
    "slice_scatter-end-only-0": "slice_scatter's rule does not shift a negative end= past the batch dim (RuntimeError: "
                                "upper bound and lower bound inconsistent with step sign); each example answers",
    "slice_scatter-end-only-1": "slice_scatter's rule with a negative end= (the same RuntimeError)",
}


def _batched_arrays(case, in_dim: int):
    """Per input: (array, in_dim) with B examples stacked along ``in_dim`` for float inputs, (array, None)
    for the others."""
    draws = [make_arrays(case.args, f"{case.id}/vmap{b}") for b in range(B)]
    out = []
    for j, arg in enumerate(case.args):
        first = draws[0][j]
        if first.dtype.kind != "f":
            out.append((first, None))
            continue
        d = in_dim if first.ndim >= in_dim else 0
        out.append((np.stack([cast(dr[j], np.float64) for dr in draws], axis=d), d))
    return out


def _run(m, vmap, case, batched):
    tensors = []
    for arr, _ in batched:
        tensors.append(m.from_numpy(np.array(arr, copy=True)) if m is not G else G.tensor(np.array(arr, copy=True)))
    dims = tuple(d for _, d in batched)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return vmap(lambda *ts: case.fn(m, *ts), in_dims=dims)(*tensors)


def _per_example_torch(torch):
    def vmap(f, in_dims):
        def run(*ts):
            n = next(t.shape[d] for t, d in zip(ts, in_dims) if d is not None)
            outs = [f(*(t if d is None else t.select(d, i) for t, d in zip(ts, in_dims))) for i in range(n)]
            if isinstance(outs[0], tuple):
                return type(outs[0])(*(torch.stack([o[j] for o in outs]) for j in range(len(outs[0]))))
            return torch.stack(outs)
        return run
    return vmap


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [leaf for e in x for leaf in _leaves(e)]
    return [x]

#: Known gradcli differences (strict xfails: fixing one fails the test until its entry is removed).
GRADCLI_GAPS: dict = {
}


def _params():
    out = []
    for in_dim in (0, 1):
        for case in CASES:
            reason = GRADCLI_GAPS.get(f"{case.id}-{in_dim}")
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(case, in_dim, id=f"{case.id}-{in_dim}", marks=marks))
    return out


@pytest.mark.parametrize("case, in_dim", _params())
def test_vmap_of_every_op_equals_torch(case, in_dim, torch):
    batched = _batched_arrays(case, in_dim)
    if f"{case.id}-{in_dim}" in TORCH_VMAP_GAPS:
        want = _run(torch, _per_example_torch(torch), case, batched)
        got = _run(G, F.vmap, case, batched)
        _assert_equal(got, want)
        return
    try:
        want = _run(torch, torch.func.vmap, case, batched)
    except Exception as e:
        if "Batching rule not implemented" in str(e) or "does not yet have a batching rule" in str(e):
            # PyTorch has no batching rule for this op (its fallback refuses views; as_strided_scatter "requires
            # special handling"): gradcli batches it, and the oracle is PyTorch's per-example results, stacked
            want = _run(torch, _per_example_torch(torch), case, batched)
        else:  # PyTorch refuses: gradcli must refuse with the same exception type
            with pytest.raises(Exception) as got:
                _run(G, F.vmap, case, batched)
            assert type(got.value).__name__ == type(e).__name__, (str(got.value), str(e))
            return
    got = _run(G, F.vmap, case, batched)
    _assert_equal(got, want)


def _torch_or_same_error(run_torch, run_gradcli):
    """PyTorch's result, or None after checking that gradcli raises PyTorch's RuntimeError with its message."""
    try:
        return run_torch()
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            run_gradcli()
        assert str(got.value) == str(e)
        return None


def _assert_equal(got, want):
    for g, w in zip(_leaves(got), _leaves(want), strict=True):
        assert isinstance(g, G.Tensor)
        assert tuple(g.shape) == tuple(w.shape)
        assert str(g.dtype) == str(w.dtype)
        np.testing.assert_allclose(to_np(g), to_np(w), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("body", [
    lambda m, a: m.zeros_like(a).copy_(a) * 2,  # zeros_like of a mapped tensor is mapped: copy_ takes its values
    lambda m, a: m.ones_like(a).add_(a),
    lambda m, a: m.zeros(2, 4).copy_(a),  # an unmapped tensor cannot take mapped values in place
    lambda m, a: m.ones(2, 4).mul_(a),
])
def test_in_place_ops_on_mapped_and_unmapped_tensors_as_pytorch(body, torch):
    x = np.arange(24.0).reshape(3, 2, 4)
    want = _torch_or_same_error(lambda: torch.func.vmap(lambda a: body(torch, a))(torch.tensor(x)),
                                lambda: F.vmap(lambda a: body(G, a))(G.tensor(x)))
    if want is None:
        return
    _assert_equal(F.vmap(lambda a: body(G, a))(G.tensor(x)), want)


@pytest.mark.parametrize("body", [
    # a tensor computed from unmapped inputs alone is unmapped: mapped values cannot be written into it
    lambda m, x, y, s: (y.exp().clone().mul_(x), s.sum())[1],
    lambda m, x, y, s: (y * s).clone().add_(x, alpha=2.0).sum(),
    lambda m, x, y, s: y.sin().clamp(-1.0, 1.0).sub_(x).sum(),
    lambda m, x, y, s: y.exp().pow_(x).sum(),  # (PyTorch's slow fallback's message, naming the level)
    lambda m, x, y, s: y.exp().fmod_(x).sum(),
    lambda m, x, y, s: m.ones(2, dtype=m.float64).add_(x).mul(y).sum(),  # add_'s own rule: a shape error
    # unmapped values written into a mapped tensor, or into an unmapped one, are allowed
    lambda m, x, y, s: x.clone().mul_(y.exp()).sum(),
    lambda m, x, y, s: (y.sin().add_(2.0).mul_(s) * (y * x)).sum(),
    lambda m, x, y, s: (y.exp().clone().mul_(s) + x).clone().mul_(x).sum(),
    # unmapped values written into a tensor that is not an input (vmap runs the function once per example)
    lambda m, x, y, s: (m.ones(2, dtype=m.float64).mul_(y).add_(y.exp()) * x).sum(),
    lambda m, x, y, s: (m.zeros(2, dtype=m.float64).copy_(y * s) * x.sin()).sum(),
])
def test_in_place_ops_under_vmap_of_grad_with_unmapped_inputs_as_pytorch(body, torch):
    # gradcli expands the unmapped inputs of grad inside vmap (each example gets its own gradient); what is
    # computed from them alone stays unmapped for the in-place checks, as PyTorch holds it unbatched
    x = np.arange(6.0).reshape(3, 2) * 0.5 - 1.0
    y, s = np.array([1.0, 2.0]), np.array(0.5)

    def call(m):
        f = m.func.grad(lambda x, y, s: body(m, x, y, s), argnums=(0, 1, 2))
        args = [m.tensor(a, dtype=m.float64, requires_grad=r) for a, r in ((x, False), (y, True), (s, True))]
        return m.func.vmap(f, in_dims=(0, None, None))(*args)

    want = _torch_or_same_error(lambda: call(torch), lambda: call(G))
    if want is None:
        return
    _assert_equal(call(G), want)


_RANDOM_BODIES = {
    "normal-tensor-float": lambda m, x: m.normal(x, 2.0),
    "normal-float-tensor": lambda m, x: m.normal(1.5, x + 0.1),
    "normal-tensor-tensor": lambda m, x: m.normal(x, x + 0.1),
    "normal-unmapped-std": lambda m, x: m.normal(x, m.ones(4, dtype=m.float64)),
    "normal-negative-std": lambda m, x: m.normal(1.5, x - 2.0),
    "normal-unmapped": lambda m, x: m.normal(m.zeros(4, dtype=m.float64), 1.0) + x,
    "multinomial": lambda m, x: m.multinomial(x, 3),
    "multinomial-replacement": lambda m, x: m.multinomial(x, 6, True),
    "multinomial-2d": lambda m, x: m.multinomial(x.reshape(2, 2), 2),
    "multinomial-too-many": lambda m, x: m.multinomial(x, 6),
    "multinomial-negative": lambda m, x: m.multinomial(x - 2.0, 2),
    "multinomial-unmapped": lambda m, x: m.multinomial(m.ones(4, dtype=m.float64), 2) + x.long() * 0,
    "seeded-normal": lambda m, x: (m.manual_seed(0), m.normal(x, 2.0))[1],
    "seeded-randn": lambda m, x: (m.manual_seed(0), m.randn(4, dtype=m.float64))[1] + x,
    "seeded-per-example": lambda m, x: (m.manual_seed(0), m.normal(1.5, x.exp() * 0.1))[1],
}


@pytest.mark.parametrize("randomness", ["error", "different", "same"])
@pytest.mark.parametrize("name", list(_RANDOM_BODIES))
def test_random_ops_under_vmap_as_pytorch(name, randomness, torch):
    # PyTorch's random batching rules: "error" refuses before any argument check, "same" refuses a mapped
    # input, "different" draws per example (the numbers are the generator's: shapes, dtypes, errors and the
    # equal rows of "same" are compared)
    body = _RANDOM_BODIES[name]
    x = np.array([[0.5, 0.1, 0.9, 0.3], [0.2, 0.8, 0.4, 0.6], [0.7, 0.3, 0.1, 0.5]])

    def call(m, vmap):
        return vmap(lambda a: body(m, a), randomness=randomness)(m.tensor(x, dtype=m.float64))

    want = _torch_or_same_error(lambda: call(torch, torch.func.vmap), lambda: call(G, F.vmap))
    if want is None:
        return
    got = call(G, F.vmap)
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype) == str(want.dtype)
    if randomness == "same" or got.dtype.is_floating_point:  # (category indices may repeat by chance)
        rows_equal = [bool((w == want[0]).all()) for w in want]
        assert [bool((to_np(g) == to_np(got[0])).all()) for g in got] == rows_equal


def test_argwhere_under_vmap_runs_per_example_and_nonzero_is_refused_as_pytorch(torch):
    x = np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 3.0, 0.0, 4.0], [5.0, 0.0, 0.0, 6.0]])
    for vmap_g, vmap_t, a in ((F.vmap(G.argwhere), torch.func.vmap(torch.argwhere), x),
                              (F.vmap(F.vmap(G.argwhere), in_dims=1), torch.func.vmap(torch.func.vmap(torch.argwhere),
                                                                                      in_dims=1), x.reshape(3, 2, 2))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _assert_equal(vmap_g(G.tensor(a)), vmap_t(torch.tensor(a)))
    x[1, 1] = 0.0  # examples with different counts: stack's error
    for fn in ("argwhere", "nonzero"):
        with warnings.catch_warnings(), pytest.raises(RuntimeError) as want:
            warnings.simplefilter("ignore")
            torch.func.vmap(getattr(torch, fn))(torch.tensor(x))
        with pytest.raises(RuntimeError) as got:
            F.vmap(getattr(G, fn))(G.tensor(x))
        assert str(got.value) == str(want.value)


def _outcome(fn, *args):
    """``fn(*args)``'s result, or the text of the RuntimeError it raises."""
    try:
        return fn(*args)
    except RuntimeError as e:
        return str(e)


def _assert_same_outcome(got, want):
    if isinstance(want, str):
        assert got == want
    else:
        _assert_equal(got, want)


@pytest.mark.parametrize("in_dim", [0, 1])
def test_flat_take_along_dim_of_a_non_contiguous_input_as_pytorch(in_dim, torch):
    # PyTorch's take_along_dim without dim is self.view(-1).gather(...): a transposed input, or the examples
    # of a batch mapped along dimension 1, cannot be viewed
    x = np.arange(36.0).reshape(3, 3, 4)
    idx = [0, 11, 5]
    for body in (lambda m, t: m.take_along_dim(t[0].t(), m.tensor(idx)),
                 lambda m, t: m.take_along_dim(t[0], m.tensor(idx))):
        _assert_same_outcome(_outcome(body, G, G.tensor(x)), _outcome(body, torch, torch.tensor(x)))
    want = _outcome(lambda: torch.func.vmap(lambda a: torch.take_along_dim(a, torch.tensor(idx)), in_dims=in_dim)(
        torch.tensor(x)))
    got = _outcome(lambda: F.vmap(lambda a: G.take_along_dim(a, G.tensor(idx)), in_dims=in_dim)(G.tensor(x)))
    _assert_same_outcome(got, want)


_AS_STRIDED_BODIES = {
    "2x2": lambda m, a: m.as_strided(a, (2, 2), (1, 2)),
    "offset": lambda m, a: a.as_strided((2, 2), (1, 2), 1),
    "0d": lambda m, a: m.as_strided(a, (), (), 4),
    "of-transpose": lambda m, a: m.as_strided(a.t(), (2, 3), (1, 3)),
    "overlap": lambda m, a: m.as_strided(a, (3, 2), (1, 1)),
    "out-of-bounds": lambda m, a: m.as_strided(a, (3, 3), (3, 1), 1),
    "below-the-example": lambda m, a: m.as_strided(a[1:], (2,), (1,), 0),
    "length-mismatch": lambda m, a: m.as_strided(a, (2, 2), (2,)),
    "negative-stride": lambda m, a: m.as_strided(a, (2,), (-1,)),
    "grad": lambda m, a: m.func.grad(lambda b: (m.as_strided(b, (2, 2), (1, 2)) ** 2).sum())(a),
    "grad-of-transpose": lambda m, a: m.func.grad(lambda b: (m.as_strided(b.t(), (3, 2), (2, 1)).exp()).sum())(a),
}


@pytest.mark.parametrize("in_dim", [0, 1, 2])
@pytest.mark.parametrize("name", list(_AS_STRIDED_BODIES))
def test_as_strided_under_vmap_as_pytorch(name, in_dim, torch):
    # functorch's rule: each example's view in the physical storage (its offset moved on by the batch strides,
    # which depend on in_dims), its bounds check and messages; under grad each example gets its own gradient
    x = np.arange(27.0).reshape(3, 3, 3) / 10.0
    body = _AS_STRIDED_BODIES[name]

    def call(m, vmap):
        return vmap(lambda a: body(m, a), in_dims=in_dim)(m.tensor(x))

    want = _torch_or_same_error(lambda: call(torch, torch.func.vmap), lambda: call(G, F.vmap))
    if want is None:
        return
    _assert_equal(call(G, F.vmap), want)


@pytest.mark.parametrize("body", [
    lambda m, a: m.as_strided(a, (2,), (2,)),
    lambda m, a: m.as_strided(a, (2, 2), (1, 3), 1),
    lambda m, a: m.as_strided(a, (3,), (3,), 1),
])
def test_as_strided_under_nested_vmap_as_pytorch(body, torch):
    x = np.arange(48.0).reshape(2, 4, 6) / 10.0
    want = _outcome(lambda: torch.func.vmap(torch.func.vmap(lambda a: body(torch, a)), in_dims=1)(torch.tensor(x)))
    got = _outcome(lambda: F.vmap(F.vmap(lambda a: body(G, a)), in_dims=1)(G.tensor(x)))
    _assert_same_outcome(got, want)

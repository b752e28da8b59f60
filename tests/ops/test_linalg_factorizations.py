"""LU and LDL factorizations, triangular solves, lstsq and the *_ex variants (gradcli/ops/linalg/factorizations.py,
least_squares.py), and the float32 precision of solve and svd (gradcli/ops/linalg/_lapack.py), compared with
PyTorch: values, pivots and info, errors, batches, and use in a program through ``gradcli run``. The generic
checks (gradcheck, against torch, forward mode, vmap, transforms) run on the OpInfo entries (tests/ops/opinfo.py,
FACTORIZATIONS)."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gradcli as G


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _pair(torch, a):
    return G.tensor(np.array(a)), torch.tensor(np.array(a))


def _np(x):
    return np.asarray(x.data if isinstance(x, G.Tensor) else x.detach().numpy())


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (4, 3), (3, 5), (2, 3, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lu_factor_ex_equals_torch(torch, shape, dtype):
    a = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    g, t = _pair(torch, a)
    gr, tr = G.linalg.lu_factor_ex(g), torch.linalg.lu_factor_ex(t)
    np.testing.assert_allclose(_np(gr.LU), _np(tr.LU), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(_np(gr.pivots), _np(tr.pivots))
    assert _np(gr.pivots).dtype == np.int32 and _np(gr.info).dtype == np.int32
    np.testing.assert_array_equal(_np(gr.info), _np(tr.info))
    P, L, U = G.linalg.lu(g)
    tP, tL, tU = torch.linalg.lu(t)
    for x, y in ((P, tP), (L, tL), (U, tU)):
        np.testing.assert_allclose(_np(x), _np(y), rtol=1e-5, atol=1e-5)
    for x, y in zip(G.lu_unpack(gr.LU, gr.pivots), torch.lu_unpack(tr.LU, tr.pivots)):
        np.testing.assert_allclose(_np(x), _np(y), rtol=1e-5, atol=1e-5)


def test_singular_matrices_give_info_and_the_errors_of_torch(torch):
    a = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]])
    g, t = _pair(torch, a)
    np.testing.assert_array_equal(_np(G.linalg.lu_factor_ex(g).info), _np(torch.linalg.lu_factor_ex(t).info))
    np.testing.assert_array_equal(_np(G.linalg.inv_ex(g).info), _np(torch.linalg.inv_ex(t).info))
    np.testing.assert_array_equal(_np(G.linalg.solve_ex(g, g[:, 0]).info), _np(torch.linalg.solve_ex(t, t[:, 0]).info))
    np.testing.assert_array_equal(_np(G.linalg.inv_ex(g).inverse[1]), _np(torch.linalg.inv_ex(t).inverse[1]))
    for gf, tf in ((lambda x: G.linalg.lu_factor(x), lambda x: torch.linalg.lu_factor(x)),
                   (lambda x: G.linalg.lu_factor_ex(x, check_errors=True),
                    lambda x: torch.linalg.lu_factor_ex(x, check_errors=True)),
                   (lambda x: G.linalg.inv_ex(x, check_errors=True), lambda x: torch.linalg.inv_ex(x, check_errors=True)),
                   (lambda x: G.linalg.lu_factor(x, pivot=False), lambda x: torch.linalg.lu_factor(x, pivot=False))):
        with pytest.raises(RuntimeError) as want:
            tf(t)
        with pytest.raises(RuntimeError) as got:
            gf(g)
        assert str(got.value) == str(want.value)
        assert type(got.value).__name__ == type(want.value).__name__


def test_cholesky_ex_and_cholesky_equal_torch(torch):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 3, 3))
    spd = a @ a.transpose(0, 2, 1) + 3 * np.eye(3)
    bad = np.stack([spd[0], -np.eye(3)])
    for arr in (spd, bad):
        g, t = _pair(torch, arr)
        for upper in (False, True):
            gr, tr = G.linalg.cholesky_ex(g, upper=upper), torch.linalg.cholesky_ex(t, upper=upper)
            np.testing.assert_allclose(_np(gr.L), _np(tr.L), atol=1e-12)
            np.testing.assert_array_equal(_np(gr.info), _np(tr.info))
    g, t = _pair(torch, bad)
    for gf, tf in ((lambda x: G.cholesky(x), lambda x: _quiet(torch.cholesky, x)),
                   (lambda x: G.linalg.cholesky_ex(x, check_errors=True),
                    lambda x: torch.linalg.cholesky_ex(x, check_errors=True))):
        with pytest.raises(RuntimeError) as want:
            tf(t)
        with pytest.raises(RuntimeError) as got:
            gf(g)
        assert str(got.value) == str(want.value)
    g, t = _pair(torch, spd)
    np.testing.assert_allclose(_np(G.cholesky(g, upper=True)), _np(_quiet(torch.cholesky, t, upper=True)))
    assert G.cholesky(g.requires_grad_()).grad_fn.name() == "CholeskyBackward0"


def test_cholesky_has_no_forward_mode_as_torch(torch):
    import torch.autograd.forward_ad as tfa

    import gradcli.api.forward_ad as gfa

    a = np.eye(2) * 2
    with tfa.dual_level(), pytest.raises(NotImplementedError) as want:
        _quiet(torch.cholesky, tfa.make_dual(torch.tensor(a), torch.ones(2, 2, dtype=torch.float64)))
    with gfa.dual_level(), pytest.raises(NotImplementedError) as got:
        G.cholesky(gfa.make_dual(G.tensor(a), G.ones(2, 2, dtype=G.float64)))
    assert str(got.value) == str(want.value)


def test_ldl_factor_equals_torch_and_has_no_derivative(torch):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 4, 4))
    sym = a + a.transpose(0, 2, 1)  # indefinite: 2x2 pivots (negative) appear
    g, t = _pair(torch, sym)
    gr, tr = G.linalg.ldl_factor_ex(g), torch.linalg.ldl_factor_ex(t)
    np.testing.assert_allclose(_np(gr.LD), _np(tr.LD), atol=1e-12)
    np.testing.assert_array_equal(_np(gr.pivots), _np(tr.pivots))
    np.testing.assert_array_equal(_np(gr.info), _np(tr.info))
    assert repr(G.linalg.ldl_factor(g)).startswith("torch.return_types.linalg_ldl_factor(\nLD=tensor(")
    x = G.tensor(sym, requires_grad=True)
    y = torch.tensor(sym, requires_grad=True)
    with pytest.raises(RuntimeError) as want:
        torch.linalg.ldl_factor(y).LD.sum().backward()
    with pytest.raises(RuntimeError) as got:
        G.linalg.ldl_factor(x).LD.sum().backward()
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("upper, left, unit", [(True, True, False), (False, False, False), (True, False, True)])
def test_solve_triangular_and_triangular_solve_equal_torch(torch, upper, left, unit):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 1, 3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((3, 3, 2) if left else (3, 2, 3))
    ga, ta = G.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    gb, tb = G.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
    gx = G.linalg.solve_triangular(ga, gb, upper=upper, left=left, unitriangular=unit)
    tx = torch.linalg.solve_triangular(ta, tb, upper=upper, left=left, unitriangular=unit)
    np.testing.assert_allclose(_np(gx), _np(tx), rtol=1e-10)
    (gx * gx).sum().backward()
    (tx * tx).sum().backward()
    np.testing.assert_allclose(_np(ga.grad), _np(ta.grad), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(_np(gb.grad), _np(tb.grad), rtol=1e-8, atol=1e-12)
    assert gx.grad_fn.name() == tx.grad_fn.name() == "LinalgSolveTriangularBackward0"
    if left:  # torch.triangular_solve: b first, batch dims broadcast, the clone of A
        gr = G.triangular_solve(gb, ga, upper=upper, unitriangular=unit)
        tr = _quiet(torch.triangular_solve, tb, ta, upper=upper, unitriangular=unit)
        np.testing.assert_allclose(_np(gr.solution), _np(tr.solution), rtol=1e-10)
        np.testing.assert_array_equal(_np(gr.cloned_coefficient), _np(tr.cloned_coefficient))


def test_triangular_solve_transpose_tangent_is_the_derivative(torch):
    """PyTorch's forward mode of triangular_solve(transpose=True) solves with A_t untransposed; gradcli's tangent
    equals central differences and PyTorch's tangent of the equivalent solve with A^T."""
    import torch.autograd.forward_ad as tfa

    import gradcli.api.forward_ad as gfa

    rng = np.random.default_rng(5)
    a, b = np.tril(rng.standard_normal((3, 3))) + 3 * np.eye(3), rng.standard_normal((3, 2))
    da, db = np.tril(rng.standard_normal((3, 3))), rng.standard_normal((3, 2))
    with gfa.dual_level():
        r = G.triangular_solve(gfa.make_dual(G.tensor(b), G.tensor(db)), gfa.make_dual(G.tensor(a), G.tensor(da)),
                               upper=False, transpose=True)
        got = _np(gfa.unpack_dual(r.solution).tangent)
    eps = 1e-6
    fd = (np.linalg.solve((a + eps * da).T, b + eps * db) - np.linalg.solve((a - eps * da).T, b - eps * db)) / (2 * eps)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)
    with tfa.dual_level():
        at = tfa.make_dual(torch.tensor(a.T.copy()), torch.tensor(da.T.copy()))
        x = torch.linalg.solve_triangular(at, tfa.make_dual(torch.tensor(b), torch.tensor(db)), upper=True)
        np.testing.assert_allclose(got, _np(tfa.unpack_dual(x).tangent), rtol=1e-10)


@pytest.mark.parametrize("driver", [None, "gels", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((1, 3, 3), (2, 3, 3)), ((4, 3), (4,)), ((2, 3, 5), (2, 3, 2))])
def test_lstsq_equals_torch(torch, driver, shapes):
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    if driver == "gels" and a.shape[-2] < a.shape[-1]:
        pytest.skip("gels needs full rank, as LAPACK's (PyTorch's answer is its own for a wide A)")
    ga, ta = G.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    gb, tb = G.tensor(b, requires_grad=True), torch.tensor(b, requires_grad=True)
    gr, tr = G.linalg.lstsq(ga, gb, driver=driver), torch.linalg.lstsq(ta, tb, driver=driver)
    for x, y in zip(gr, tr):
        assert tuple(x.shape) == tuple(y.shape) and str(x.dtype) == str(y.dtype)
        np.testing.assert_allclose(_np(x), _np(y), rtol=1e-8, atol=1e-10)
    loss = (gr.solution ** 2).sum() + (gr.residuals.sum() if gr.residuals.numel() else 0)
    tloss = (tr.solution ** 2).sum() + (tr.residuals.sum() if tr.residuals.numel() else 0)
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(_np(ga.grad), _np(ta.grad), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(_np(gb.grad), _np(tb.grad), rtol=1e-7, atol=1e-9)


def test_lstsq_errors_equal_torch(torch):
    for a, b, kw in (((3, 3), (3, 2), {"driver": "foo"}), ((3, 3), (4, 2), {}), ((3, 3), (4,), {}), ((3,), (3,), {})):
        ga, ta = G.zeros(a), torch.zeros(a)
        gb, tb = G.zeros(b), torch.zeros(b)
        with pytest.raises(RuntimeError) as want:
            torch.linalg.lstsq(ta, tb, **kw)
        with pytest.raises(RuntimeError) as got:
            G.linalg.lstsq(ga, gb, **kw)
        assert str(got.value) == str(want.value)


def test_matrix_rank_tensorinv_tensorsolve_equal_torch(torch):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 4, 3))
    low = a[..., :1] @ a[..., :1, :]
    for arr, kw in ((a, {}), (low, {}), (a, {"atol": 1.0}), (a, {"rtol": 0.5}), (low, {"tol": 1e-3})):
        g, t = _pair(torch, arr)
        np.testing.assert_array_equal(_np(G.linalg.matrix_rank(g, **kw)), _np(torch.linalg.matrix_rank(t, **kw)))
    m = rng.standard_normal((6, 6)) + 4 * np.eye(6)
    g, t = _pair(torch, m.reshape(2, 3, 6))
    np.testing.assert_allclose(_np(G.linalg.tensorinv(g)), _np(torch.linalg.tensorinv(t)), rtol=1e-10)
    gb, tb = _pair(torch, rng.standard_normal((2, 3)))
    gx, tx = G.linalg.tensorsolve(g, gb), torch.linalg.tensorsolve(t, tb)
    assert gx.shape == tx.shape
    np.testing.assert_allclose(_np(gx), _np(tx), rtol=1e-10)
    for gf, tf in ((lambda: G.linalg.tensorinv(G.zeros(2, 2), ind=1), lambda: torch.linalg.tensorinv(torch.zeros(2, 2), ind=1)),
                   (lambda: G.linalg.tensorinv(G.zeros(2, 3), ind=0), lambda: torch.linalg.tensorinv(torch.zeros(2, 3), ind=0)),
                   (lambda: G.linalg.tensorsolve(G.zeros(4, 6, 8, 2), G.zeros(4, 6)),
                    lambda: torch.linalg.tensorsolve(torch.zeros(4, 6, 8, 2), torch.zeros(4, 6)))):
        with pytest.raises(RuntimeError) as want:
            tf()
        with pytest.raises(RuntimeError) as got:
            gf()
        assert str(got.value) == str(want.value)


def test_float32_solve_and_svd_use_float32_lapack(torch):
    """numpy.linalg computes float32 in float64; PyTorch (and gradcli) call sgesv/sgesdd: the residuals of a
    float32 solve are float32's, not float64's rounded (the documented example of linalg.solve prints False)."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((20, 20)).astype(np.float32)
    b = rng.standard_normal((20, 3)).astype(np.float32)
    x = _np(G.linalg.solve(G.tensor(a), G.tensor(b)))
    x64 = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
    from scipy.linalg import lapack

    np.testing.assert_array_equal(x, lapack.sgesv(a, b)[2])
    assert np.abs(x - x64).max() > np.abs(x64.astype(np.float32) - x64).max()  # float32 arithmetic, not rounding
    u, s, _ = G.linalg.svd(G.tensor(a))
    tu, ts, _ = torch.linalg.svd(torch.tensor(a))
    np.testing.assert_allclose(_np(s), _np(ts), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.abs(_np(u)), np.abs(_np(tu)), atol=1e-4)  # signs: the same driver (gesdd)


def test_triu_and_tril_in_place_equal_torch(torch):
    a = np.arange(12.0).reshape(3, 4)
    for name, k in (("triu_", 0), ("tril_", -1), ("triu_", 1)):
        g, t = _pair(torch, a)
        assert getattr(g, name)(k) is g
        getattr(t, name)(k)
        np.testing.assert_array_equal(_np(g), _np(t))
    x = G.tensor(a, requires_grad=True)
    y = (x * 2).triu_()
    assert y.grad_fn.name() == "TriuBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(_np(x.grad), 2 * np.triu(np.ones((3, 4))))


PROGRAM = """\
A = torch.tensor([[4.0, 3.0, 1.0], [6.0, 3.0, 2.0], [1.0, 5.0, 7.0]], requires_grad=True)
B = torch.tensor([[1.0], [2.0], [3.0]])
LU, pivots = torch.linalg.lu_factor(A)
print(pivots)
X = torch.linalg.lu_solve(LU, pivots, B)
print(X.grad_fn)
X.sum().backward()
print(A.grad)
print(torch.linalg.lu_factor_ex(torch.zeros(2, 2)))
print(torch.linalg.solve_triangular(A.triu(), B, upper=True))
"""


def test_program_through_gradcli_run(tmp_path, torch):
    """The program prints under ``gradcli run`` what it prints under Python with PyTorch (grad_fn addresses
    masked)."""
    src = tmp_path / "lu.py"
    src.write_text(PROGRAM)
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", str(src)], capture_output=True, text=True,
                         timeout=120, check=False)
    assert got.returncode == 0, got.stderr
    want = subprocess.run([sys.executable, "-c", f"import runpy, torch; runpy.run_path({str(src)!r}, {{'torch': torch}})"],
                          capture_output=True, text=True, timeout=120, check=True)
    mask = re.compile(r" at 0x[0-9a-f]+")
    assert mask.sub("", got.stdout) == mask.sub("", want.stdout)

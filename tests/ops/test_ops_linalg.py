"""torch.linalg and the matrix functions (gradcli/ops/linalg/: inverses.py, decompositions.py, determinants.py,
norms.py, matrix_functions.py, products.py) beyond the op table's
generated checks (tests/ops/opinfo.py MATRIX): PyTorch's errors at the documented edge cases (singular and
non-positive-definite matrices, shapes, dtypes), the gradients at singular and degenerate points (det of a
singular matrix, repeated eigen/singular values), the Hessian-vector products where PyTorch's own are wrong,
cdist's forward mode and second derivative (PyTorch's errors), the named tuples as PyTorch prints them, and a ``gradcli run`` program
compared with PyTorch's output."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as G
from gradcli.api import forward_ad as fwAD

import opinfo
import test_op_table as table
from helpers import make_arrays, python_and_gradcli_stdout


def _lib_error(m, fn):
    try:
        fn(m)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return e
    raise AssertionError(f"{m.__name__}: no error")


SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
ERRORS = {  # id: fn(m) that raises, in gradcli as in torch
    "inv-singular": lambda m: m.linalg.inv(m.tensor(SINGULAR)),
    "inv-batch-singular": lambda m: m.linalg.inv(m.stack([m.eye(2), m.tensor(SINGULAR)])),
    "inverse-zeros": lambda m: m.inverse(m.zeros(3, 3)),
    "inv-first-pivot": lambda m: m.linalg.inv(m.tensor([[0.0, 0.0], [0.0, 1.0]])),
    "inv-pivot-3": lambda m: m.linalg.inv(m.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [0.0, 0.0, 1.0]])),
    "solve-singular": lambda m: m.linalg.solve(m.tensor(SINGULAR), m.ones(2)),
    "solve-shapes": lambda m: m.linalg.solve(m.eye(3), m.ones(2)),
    "solve-shapes-matrix": lambda m: m.linalg.solve(m.eye(3), m.ones(4, 2)),
    "cholesky-not-pd": lambda m: m.linalg.cholesky(m.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "cholesky-batch": lambda m: m.linalg.cholesky(m.stack([m.eye(2), m.tensor([[1.0, 2.0], [2.0, 1.0]])])),
    "cholesky-first-minor": lambda m: m.linalg.cholesky(m.tensor([[-1.0, 2.0], [2.0, 1.0]])),
    "det-not-square": lambda m: m.linalg.det(m.ones(3, 4)),
    "det-1d": lambda m: m.linalg.det(m.ones(3)),
    "det-int": lambda m: m.linalg.det(m.ones(3, 3, dtype=m.int64)),
    "matrix_power-not-square": lambda m: m.linalg.matrix_power(m.ones(2, 3), 2),
    "cross-length": lambda m: m.linalg.cross(m.ones(3, 2), m.ones(3, 2)),
    "multi_dot-one": lambda m: m.linalg.multi_dot([m.ones(2, 2)]),
    "cdist-1d": lambda m: m.cdist(m.ones(3), m.ones(3)),
    "vector_norm-int": lambda m: m.linalg.vector_norm(m.ones(3, dtype=m.int64)),
    "matrix_norm-1d": lambda m: m.linalg.matrix_norm(m.ones(3)),
    "matrix_norm-order": lambda m: m.linalg.matrix_norm(m.ones(3, 3), 3),
    "eigh-not-square": lambda m: m.linalg.eigh(m.ones(3, 4)),
    "qr-mode": lambda m: m.linalg.qr(m.ones(3, 4), mode="x"),
    "norm-3d-ord": lambda m: m.linalg.norm(m.ones(3, 3, 3), 2),
    "svd-driver": lambda m: m.linalg.svd(m.ones(2, 2), driver="gesvd"),
    "svdvals-driver": lambda m: m.linalg.svdvals(m.ones(2, 2), driver="gesvd"),
    "vdot-sizes": lambda m: m.vdot(m.ones(3), m.ones(2)),
    "vdot-2d": lambda m: m.vdot(m.ones(3, 1), m.ones(3)),
    "vdot-dtypes": lambda m: m.vdot(m.ones(3), m.ones(3, dtype=m.float64)),
    "vecdot-dtypes": lambda m: m.linalg.vecdot(m.ones(3), m.ones(3, dtype=m.float64)),
    "multi_dot-first-3d": lambda m: m.linalg.multi_dot([m.ones(2, 2, 2), m.ones(2, 2)]),
    "multi_dot-last-3d": lambda m: m.linalg.multi_dot([m.ones(2, 2), m.ones(2, 2, 2)]),
    "multi_dot-middle-1d": lambda m: m.linalg.multi_dot([m.ones(2, 2), m.ones(2), m.ones(2, 2)]),
    "multi_dot-shapes": lambda m: m.linalg.multi_dot([m.ones(2, 3), m.ones(2, 2)]),
    "cdist-columns": lambda m: m.cdist(m.ones(2, 3), m.ones(2, 4)),
    "cdist-negative-p": lambda m: m.cdist(m.ones(2, 3), m.ones(2, 3), p=-1.0),
    "cdist-int": lambda m: m.cdist(m.ones(2, 3, dtype=m.int64), m.ones(2, 3, dtype=m.int64)),
    "matrix_norm-dims": lambda m: m.linalg.matrix_norm(m.ones(3, 3), dim=(0, 0)),
    "matrix_norm-3-dims": lambda m: m.linalg.matrix_norm(m.ones(3, 3, 3), dim=(0, 1, 2)),
    "solve-1d-A": lambda m: m.linalg.solve(m.ones(3), m.ones(3)),
    "inv-int": lambda m: m.linalg.inv(m.ones(2, 2, dtype=m.int64)),
    "cholesky-not-square": lambda m: m.linalg.cholesky(m.ones(2, 3)),
    "svd-1d": lambda m: m.linalg.svd(m.ones(3)),
    "eigh-uplo": lambda m: m.linalg.eigh(m.eye(2), UPLO="X"),
    "solve-dtypes": lambda m: m.linalg.solve(m.eye(2), m.ones(2, dtype=m.float64)),
    "cross-dtypes": lambda m: m.linalg.cross(m.ones(3), m.ones(3, dtype=m.float64)),
    "cross-ndim": lambda m: m.linalg.cross(m.ones(3), m.ones(2, 3)),
    "cdist-dtypes": lambda m: m.cdist(m.ones(2, 3), m.ones(2, 3, dtype=m.float64)),
    "multi_dot-dtypes": lambda m: m.linalg.multi_dot([m.ones(2, 3), m.ones(3, 2, dtype=m.float64)]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(name, torch):
    got, want = _lib_error(G, ERRORS[name]), _lib_error(torch, ERRORS[name])
    assert str(got) == str(want)
    assert isinstance(got, RuntimeError) and isinstance(want, RuntimeError)
    if isinstance(want, torch.linalg.LinAlgError):  # torch._C._LinAlgError
        assert isinstance(got, G.linalg.LinAlgError) and type(got).__name__ == type(want).__name__


def _grads(m, data, f, create_graph=False):
    a = m.tensor(data, dtype=m.float64, requires_grad=True)
    (g,) = m.autograd.grad(f(m, a), [a], create_graph=create_graph)
    return g


@pytest.mark.parametrize("data", [SINGULAR, [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]],
                                  [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.0]]],
                         ids=["2x2-rank1", "3x3-rank2", "3x3-rank1"])
def test_det_gradient_of_singular_matrices(data, torch):
    """PyTorch's linalg_det_backward: 0 in a first backward (its LU solve of a zero right-hand side), the
    cofactor matrix through the SVD when the gradient is itself differentiable (create_graph)."""
    f = lambda m, a: m.linalg.det(a)  # noqa: E731
    first = _grads(G, data, f)
    want = _grads(torch, data, f).numpy()
    # PyTorch's first backward is 0 only when its LU meets an exactly zero pivot, which for a rank n-1 matrix
    # depends on the CPU's LAPACK kernels; where it does not, it gives the cofactors (create_graph's answer)
    if np.any(want != 0.0):
        np.testing.assert_allclose(_grads(G, data, f, create_graph=True).data, want, atol=1e-10)
    else:
        np.testing.assert_allclose(first.data, want, atol=1e-12)
    np.testing.assert_array_equal(first.data, 0.0)
    graph = _grads(G, data, f, create_graph=True)
    np.testing.assert_allclose(graph.data, _grads(torch, data, f, create_graph=True).detach().numpy(), atol=1e-10)
    cofactors = np.array([[4.0, -2.0], [-2.0, 1.0]]) if len(data) == 2 else None
    if cofactors is not None:
        np.testing.assert_allclose(graph.data, cofactors, atol=1e-12)


DEGENERATE = {  # the eigenvectors' and singular vectors' derivatives divide by gaps that are 0 here
    "eigh-vectors": lambda m, a: m.linalg.eigh(a).eigenvectors.sum(),
    "eigh-values": lambda m, a: m.linalg.eigh(a).eigenvalues.sum(),
    "eigvalsh": lambda m, a: m.linalg.eigvalsh(a).sum(),
    "svd-U": lambda m, a: m.linalg.svd(a).U.sum(),
    "svd-S": lambda m, a: m.linalg.svd(a).S.sum(),
    "svdvals": lambda m, a: m.linalg.svdvals(a).sum(),
}


@pytest.mark.parametrize("name", sorted(DEGENERATE))
def test_repeated_eigen_and_singular_values(name, torch):
    """At 2 I: nan for the vectors (as PyTorch's eigh_backward/svd_backward), finite for the values."""
    data = [[2.0, 0.0], [0.0, 2.0]]
    got = _grads(G, data, DEGENERATE[name]).data
    want = _grads(torch, data, DEGENERATE[name]).numpy()
    np.testing.assert_allclose(got, want, atol=1e-12)  # nan where PyTorch's is nan
    assert np.isnan(got).all() == (name in ("eigh-vectors", "svd-U"))


_HVP_IDS = sorted(c.id for op, s, c in opinfo.table_cases()
                  if any(k.test == "test_jvp_hvp" and k is opinfo._HVP_VS_FD for k in op.skips))


@pytest.mark.parametrize("case_id", _HVP_IDS)
def test_hvp_where_pytorch_s_is_wrong(case_id):
    """Reverse over forward and forward over reverse, gradcli's HVPs equal central differences of its
    gradient (PyTorch's reverse over forward is not the HVP here: see opinfo._HVP_VS_FD)."""
    from gradcli.api import forward_ad as fwAD

    case = next(c for _, _, c in opinfo.table_cases() if c.id == case_id)
    arrays = make_arrays(case.args, case.id)
    tangents = table._tangents(case, arrays, "u")
    xs, primal, tangent = table._jvp_gradcli(case, arrays, tangents, requires_grad=True)
    w = np.random.default_rng(0).standard_normal(primal.data.shape)
    wrt = [x for a, x in zip(case.args, xs) if a.differentiable]
    want = table._fd_hvp(case, arrays, tangents, w)
    if tangent.requires_grad:
        got = G.autograd.grad((tangent * G.tensor(w)).sum(), wrt, allow_unused=True, materialize_grads=True)
    else:  # the tangent does not depend on the inputs (det of 1x1 matrices): a zero HVP
        got = [np.zeros_like(f) for f in want]
    for g, f in zip(got, want):
        np.testing.assert_allclose(getattr(g, "data", g), f, rtol=1e-4, atol=1e-6)
    xs = [x.detach().requires_grad_(a.differentiable) for a, x in zip(case.args, xs)]
    with fwAD.dual_level():
        duals = [x if t is None else fwAD.make_dual(x, G.tensor(t)) for x, t in zip(xs, tangents)]
        grads = G.autograd.grad(case.fn(G, *duals), [x for a, x in zip(case.args, xs) if a.differentiable],
                                G.tensor(w), create_graph=True, allow_unused=True)
        fwd = [None if g is None else fwAD.unpack_dual(g).tangent for g in grads]
    for g, f in zip(fwd, want):  # None: no gradient (slogdet's sign), or not depending on the inputs
        np.testing.assert_allclose(np.zeros_like(f) if g is None else g.data, f, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("case_id", sorted(c.id for op, s, c in opinfo.table_cases() if op.name == "cdist"))
def test_cdist_forward_mode_and_second_derivative_raise_as_pytorch(case_id, torch):
    """PyTorch has no forward-mode rule for cdist and no derivative of its backward (_cdist_backward): forward AD
    raises NotImplementedError ("Trying to use forward AD with _cdist_forward ..."), the gradient taken with
    create_graph has grad_fn CdistBackwardBackward0 and differentiating it raises "the derivative for
    '_cdist_backward' is not implemented."; gradcli raises the same errors, and torch.func.hessian (forward over
    reverse) PyTorch's forward-mode error."""
    case = next(c for _, _, c in opinfo.table_cases() if c.id == case_id)
    arrays = make_arrays(case.args, case.id)
    tangents = table._tangents(case, arrays, "t")
    results = []
    for m in (G, torch):
        inputs = ([G.tensor(a, requires_grad=arg.differentiable) for a, arg in zip(arrays, case.args)] if m is G
                  else table.t_inputs(torch, case.args, arrays))
        wrt = [x for a, x in zip(case.args, inputs) if a.differentiable]
        fw = fwAD if m is G else torch.autograd.forward_ad
        with fw.dual_level():
            duals = [x.detach() if t is None else fw.make_dual(x.detach(), m.tensor(t))
                     for x, t in zip(inputs, tangents)]
            err_fw = _lib_error(m, lambda _: case.fn(m, *duals))
        grads = m.autograd.grad(case.fn(m, *inputs).sum(), wrt, create_graph=True)
        names = [type(g.grad_fn).__name__ if m is torch else g.grad_fn.name() for g in grads]
        err_bw = _lib_error(m, lambda _: m.autograd.grad(sum(g.sum() for g in grads), wrt))
        err_h = _lib_error(m, lambda _: m.func.hessian(lambda *xs: case.fn(m, *xs).sum())(*[x.detach() for x in wrt])
                           if len(wrt) == len(inputs) else m.func.hessian(
                               lambda x: case.fn(m, x, inputs[1].detach()).sum())(wrt[0].detach()))
        results.append([names] + [(type(e).__name__, str(e)) for e in (err_fw, err_bw, err_h)])
    assert results[0] == results[1]


def test_named_tuples_print_as_pytorch(torch):
    data = [[2.0, 1.0], [1.0, 3.0]]
    for f in (lambda m, a: m.linalg.slogdet(a), lambda m, a: m.slogdet(-a), lambda m, a: m.linalg.qr(a),
              lambda m, a: m.linalg.eigh(m.diag(m.diagonal(a)))):
        got, want = f(G, G.tensor(data)), f(torch, torch.tensor(data))
        assert repr(got) == repr(want) and str(got) == str(want)
        assert type(got).__name__ == type(want).__name__
        assert all(getattr(got, k) is got[i] for i, k in enumerate(got._fields))
        assert [getattr(want, k).shape for k in got._fields] == [tuple(x.shape) for x in got]
    r = G.linalg.svd(G.tensor(data))
    assert type(r).__name__ == "linalg_svd" and r._fields == ("U", "S", "Vh") and r.S is r[1]


def test_a_rule_returning_no_gradient_does_not_stop_the_others():
    """The engine counts an edge without gradient (a rule's None: slogdet's sign, the 0-norm) down too:
    otherwise the node it leads to would never run, and every gradient through it would be lost."""
    x = G.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = -x
    ((y * 2).sum() + G.linalg.slogdet(y.view(2, 2)).sign + G.norm(y, 0)).backward()
    np.testing.assert_array_equal(x.grad.data, [-2.0] * 4)


def test_torch_linalg_namespace():
    assert G.linalg.det is G.ops.REGISTRY["linalg.det"] and "det" in G.linalg.NAMES
    from gradcli.language import torch_names

    assert set(G.linalg.NAMES) <= torch_names.LINALG


PROGRAM = 'import torch\nA = torch.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], dtype=torch.float64, requires_grad=True)\nb = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64, requires_grad=True)\nd = torch.linalg.det(A)\nx = torch.linalg.solve(A, b)\nsign, logabsdet = torch.linalg.slogdet(A)\nL = torch.linalg.cholesky(A)\nw = torch.linalg.eigvalsh(A)\ns = torch.linalg.svdvals(A)\nprint(d, x, sign, logabsdet, sep="\\n")\nprint(L)\nprint(w, s)\nprint(torch.linalg.inv(A))\nprint(torch.linalg.matrix_norm(A), torch.linalg.matrix_norm(A, ord=2), torch.linalg.norm(b, ord=1))\nprint(torch.linalg.cross(b, x))\nprint(torch.linalg.matrix_power(A, 3))\nprint(torch.linalg.matrix_exp(A / 4))\nprint(torch.linalg.multi_dot([b, A, A, b]))\nprint(torch.linalg.pinv(A[:, :2]))\nprint(torch.cdist(A, A.flip(0)))\nprint(torch.diag(A), torch.diagonal(A, 1), torch.diag_embed(b))\nprint(torch.linalg.slogdet(A))\nprint(A.det(), A.inverse().grad_fn.name(), A.slogdet().logabsdet)\nloss = d + x.sum() + logabsdet + L.sum() + w.sum() + s.sum() + torch.linalg.pinv(A).sum() + torch.cdist(A, A.flip(0)).sum()\nloss.backward()\nprint(A.grad)\nprint(b.grad)\ntry:\n    torch.linalg.inv(torch.tensor([[1.0, 2.0], [2.0, 4.0]]))\nexcept RuntimeError as e:\n    print("RuntimeError:", e)\ntry:\n    torch.linalg.cholesky(torch.tensor([[1.0, 2.0], [2.0, 1.0]]))\nexcept RuntimeError as e:\n    print(e)\nS = torch.tensor([[2.0, 0.0], [0.0, 2.0]], requires_grad=True)\ntorch.linalg.eigh(S).eigenvectors.sum().backward()\nprint(S.grad)\ntry:\n    torch.linalg.solve(torch.zeros(2, 2), torch.ones(2))\nexcept torch.linalg.LinAlgError as e:\n    print("LinAlgError:", e)\nX = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])\nQ, R = torch.linalg.qr(X)\nprint(R, (Q @ R - X).abs().max() < 1e-5)\nE = torch.tensor([[2.0, 1.0], [1.0, 3.0]])\nprint(torch.linalg.eigh(E).eigenvalues, torch.linalg.eigh(E).eigenvectors.abs())\nU, S, Vh = torch.linalg.svd(torch.tensor([[3.0, 0.0], [4.0, 5.0]]))\nprint(S, ((U * S) @ Vh).round() + 0.0)\n'


def test_program_matches_pytorch(tmp_path):
    """A program using torch.linalg (values, grad_fn names, named tuples, gradients, caught LinAlgErrors, a
    nan gradient at repeated eigenvalues) prints with ``gradcli run`` what it prints with PyTorch."""
    want, got = python_and_gradcli_stdout(tmp_path, "linalg", PROGRAM)
    assert got == want


@pytest.mark.parametrize("mode, shape", [("r", (3, 3)), ("complete", (4, 3))])
def test_qr_backward_errors_match_pytorch(mode, shape, torch):
    """linalg.qr records its node in every mode; its backward refuses mode 'r' (no Q) and a complete QR of a
    tall matrix, with PyTorch's messages."""
    def run(m):
        a = m.ones(*shape, requires_grad=True)
        r = m.linalg.qr(a * 2 + m.eye(*shape), mode=mode)
        assert tuple(r.Q.shape) == ((0,) if mode == "r" else (4, 4))
        return _lib_error(m, lambda m: r.R.sum().backward())

    got, want = run(G), run(torch)
    assert type(got) is RuntimeError and str(got) == str(want)

"""Decompositions: torch.linalg's cholesky, qr, eigh, eigvalsh, svd and svdvals, and torch.qr and torch.svd.

Every function works on batches of matrices (the last two dimensions). Values, grad_fn names, named tuples
(``torch.return_types.linalg_qr``...) and error texts follow PyTorch 2.13; the derivatives are those of
tools/autograd/derivatives.yaml and FunctionsManual.cpp (cholesky_backward, linalg_qr_backward,
linalg_eig_backward, svd_backward and the corresponding *_jvp). Rules are written with ops of the table so that
they can be differentiated again; they recompute the decomposition from the input (an op with several outputs
cannot save its result), which under ``create_graph=True`` records it. The shared checks and helpers are in
:mod:`.inverses`.
"""

from __future__ import annotations

import numpy as np

from ...engine.lazy import lazy
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, op, rule_values
from ..elementwise.comparison import where
from .inverses import (_LinAlgError, _batch_prefix, _cat, _check_matrix, _linalg_solve, _mH, _named_tuple,
                       _narrow, _undefined)
from .products import matmul
from .structured import tril
from ..shape.views import _diagonal, diag_embed, unsqueeze

# LAPACK in the input's precision (gesdd, PyTorch's CPU SVD driver; numpy.linalg would compute float32 in float64)
_lapack = lazy("gradcli.ops.linalg._lapack")


return_types_linalg_qr = _named_tuple("linalg_qr", ("Q", "R"))
return_types_qr = _named_tuple("qr", ("Q", "R"))
return_types_linalg_eigh = _named_tuple("linalg_eigh", ("eigenvalues", "eigenvectors"))
return_types_linalg_svd = _named_tuple("linalg_svd", ("U", "S", "Vh"))
return_types_svd = _named_tuple("svd", ("U", "S", "V"))


# ================================================================================================ cholesky
def _not_pd_order(a: np.ndarray) -> np.ndarray:
    """The order of the first leading minor of each matrix that is not positive-definite (LAPACK potrf's
    ``info``), 0 where all are: a Cholesky factorization column by column, vectorized over the batch."""
    a = np.asarray(a, dtype=np.float64)
    n = a.shape[-1]
    L = np.zeros_like(a)
    info = np.zeros(a.shape[:-2], dtype=np.int64)
    for k in range(n):
        d = a[..., k, k] - np.sum(L[..., k, :k] ** 2, axis=-1)
        bad = ~(d > 0)
        info = np.where((info == 0) & bad, k + 1, info)
        lkk = np.sqrt(np.where(bad, 1.0, d))
        L[..., k, k] = lkk
        L[..., k + 1:, k] = (a[..., k + 1:, k] - np.einsum("...ij,...j->...i", L[..., k + 1:, :k],
                                                            L[..., k, :k])) / lkk[..., None]
    return info


@op("_linalg_cholesky", grad_fn="LinalgCholeskyExBackward0", promote=None,
    note="d/dA = L^{-T} Phi(L^T grad) L^{-1} symmetrized, Phi = lower triangle with half the diagonal",
    formula="A: L^{-T} Phi(L^T @ grad) L^{-1} symmetrized (L = result; Phi: the lower triangle, its diagonal halved)")
def _linalg_cholesky(A, upper=False):
    """The lower Cholesky factor of each symmetric positive-definite matrix (reading the lower triangle), or
    its transpose when ``upper``. torch.linalg.cholesky."""
    _check_matrix("linalg.cholesky", A)
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        info = _not_pd_order(np.tril(A) + np.swapaxes(np.tril(A, -1), -1, -2))
        if not np.any(info):  # LAPACK failed where our factorization did not (rounding, NaN): name the last
            info = np.full(A.shape[:-2], A.shape[-1], dtype=np.int64)
        prefix, k = _batch_prefix(A, info)
        raise _LinAlgError(f"linalg.cholesky: {prefix}The factorization could not be completed because the input "
                           f"is not positive-definite (the leading minor of order {k} is not positive-definite)."
                           ) from None
    L = L.astype(A.dtype, copy=False)
    return np.swapaxes(L, -1, -2).copy() if upper else L


def _solve_lower(L, X, left=True):
    """``L^{-1} X`` (``X L^{-1}`` when not ``left``) for lower-triangular ``L`` (through solve)."""
    return _linalg_solve(L, X, left)


@_linalg_cholesky.defvjp
def _(grad, result, upper):
    # FunctionsManual.cpp cholesky_backward
    L = _mH(result) if upper else result
    gL = _mH(grad) if upper else grad
    gA = tril(matmul(_mH(L), gL))
    gA = 0.5 * (gA + _mH(tril(gA, -1)))
    gA = _linalg_solve(_mH(L), gA, True)
    return _linalg_solve(L, gA, False)


@_linalg_cholesky.defjvp
def _(A_t, result, upper):
    # FunctionsManual.cpp cholesky_jvp: dL = L Phi(L^{-1} dA L^{-H}), Phi = tril with half the diagonal
    L = _mH(result) if upper else result
    # the whole tangent, as PyTorch's: the forward reads one triangle, its JVP is that of L L^H = A
    X = _linalg_solve(_mH(L), _linalg_solve(L, A_t, True), False)
    phi = tril(X, -1) + 0.5 * diag_embed(_diagonal(X, 0, -2, -1))
    dL = matmul(L, phi)
    return _mH(dL) if upper else dL


@composite("linalg.cholesky", grad_fn="LinalgCholeskyExBackward0", note=_linalg_cholesky.note)
def linalg_cholesky(A, *, upper=False):
    """The Cholesky factor ``L`` (lower, ``A = L L^T``; ``L^T`` when ``upper``) of each symmetric
    positive-definite matrix of ``A`` (only its lower triangle is read). Matches torch.linalg.cholesky (grad_fn
    LinalgCholeskyExBackward0, FunctionsManual.cpp cholesky_backward).

    Raises:
        torch._C._LinAlgError: "linalg.cholesky: The factorization could not be completed because the input is
            not positive-definite (the leading minor of order k is not positive-definite)." (with the batch
            element in a batch).
        RuntimeError: fewer than 2 dimensions, non-square matrices, integer tensors.
    """
    return _linalg_cholesky(to_tensor(A), bool(upper))


# ================================================================================================ qr
def _parse_qr_mode(mode: str) -> tuple[bool, bool]:
    if mode == "reduced":
        return True, True
    if mode == "complete":
        return True, False
    if mode == "r":
        return False, True
    raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                       "'complete'")


@op("_linalg_qr", grad_fn="LinalgQrBackward0", promote=None, multi_output=True,
    note="d/dA = [gQ + Q copyltu(M)] R^{-T}, M = R gR^T - gQ^T Q (LinalgQrBackward0)",
    formula="A: (grad_Q + Q copyltu(M)) R^{-T}, M = R grad_R^T - grad_Q^T Q")
def _linalg_qr(A, mode="reduced"):
    """``(Q, R)`` of each matrix of ``A``. torch.linalg.qr."""
    compute_q, _ = _parse_qr_mode(mode)
    _check_matrix("linalg.qr", A, square=False)
    q, r = np.linalg.qr(A, mode="complete" if mode == "complete" else "reduced")
    q, r = q.astype(A.dtype, copy=False), r.astype(A.dtype, copy=False)
    if not compute_q:
        q = np.zeros((0,), dtype=A.dtype)
    return q, r


def _qr_backward_square(gQ, gR, Q, R):
    # m >= n: gA = [gQ + Q copyltu(M)] R^{-H}, M = R gR^H - gQ^H Q (FunctionsManual.cpp linalg_qr_backward)
    M = matmul(R, _mH(gR)) - matmul(_mH(gQ), Q)
    low = tril(M, -1)
    copyltu = low + _mH(low) + diag_embed(_diagonal(M, 0, -2, -1))
    b = gQ + matmul(Q, copyltu)
    return _linalg_solve(_mH(R), b, False)


@_linalg_qr.defvjp
def _(grads, A, mode):
    compute_q, reduced = _parse_qr_mode(mode)
    if not compute_q:
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                           "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = rule_values(A).shape[-2:]
    if not reduced and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    gQ, gR = grads
    Q, R = _linalg_qr(A, mode)
    if m >= n:
        return _qr_backward_square(gQ, gR, Q, R)
    # m < n: A = [X | Y] = Q [U | V] with X square: V = Q^T Y gives Q the extra gradient Y gV^T, and Y gets
    # Q gV (FunctionsManual.cpp linalg_qr_backward's wide case)
    Y = _narrow(A, -1, m, n - m)
    U = _narrow(R, -1, 0, m)
    gU = _narrow(gR, -1, 0, m)
    gV = _narrow(gR, -1, m, n - m)
    gX = _qr_backward_square(gQ + matmul(Y, _mH(gV)), gU, Q, U)
    return _cat([gX, matmul(Q, gV)], -1)


@_linalg_qr.defjvp
def _(A_t, A, result, mode):
    # FunctionsManual.cpp linalg_qr_jvp (m >= n): C = Q^T dA R^{-1}, Omega = the skew part of C's lower
    # triangle; dR = (C - Omega) R, dQ = dA R^{-1} - Q C + Q Omega
    Q, R = result
    m, n = A.shape[-2:]
    if m < n:
        X_t = _narrow(A_t, -1, 0, m)
        Y_t = _narrow(A_t, -1, m, n - m)
        U = _narrow(R, -1, 0, m)
        dQ, dU = _qr_jvp_square(X_t, Q, U)
        V = _narrow(R, -1, m, n - m)
        dV = matmul(_mH(dQ), matmul(Q, V)) + matmul(_mH(Q), Y_t)
        return dQ, _cat([dU, dV], -1)
    return _qr_jvp_square(A_t, Q, R)


def _qr_jvp_square(dA, Q, R):
    dAR = _linalg_solve(R, dA, False)  # dA R^{-1}
    C = matmul(_mH(Q), dAR)
    low = tril(C, -1)
    omega = low - _mH(low)  # the skew-symmetric part fixing Q's gauge (R's diagonal)
    dR = matmul(C - omega, R)
    dQ = dAR - matmul(Q, C) + matmul(Q, omega)
    return dQ, dR


@composite("linalg.qr", grad_fn="LinalgQrBackward0", note=_linalg_qr.note)
def linalg_qr(A, mode="reduced"):
    """``(Q, R)`` with ``A = Q R`` (a named tuple torch.return_types.linalg_qr): ``mode`` "reduced" (Q m×k, R
    k×n, k = min(m, n)), "complete" (Q m×m) or "r" (R only, Q empty). Matches torch.linalg.qr (grad_fn
    LinalgQrBackward0; R's diagonal signs are LAPACK's).

    Raises:
        RuntimeError: an unknown mode, fewer than 2 dimensions, integer tensors (PyTorch's messages); in
            backward, mode "r", or "complete" with more rows than columns.
    """
    q, r = _linalg_qr(to_tensor(A), mode)
    return return_types_linalg_qr(q, r)


@composite("qr", grad_fn="LinalgQrBackward0", note=_linalg_qr.note, method=True)
def qr(input, some=True):
    """torch.qr: torch.linalg.qr with ``mode="reduced"`` (``some=True``) or "complete", as the named tuple
    torch.return_types.qr."""
    q, r = _linalg_qr(to_tensor(input), "reduced" if some else "complete")
    return return_types_qr(q, r)


# ================================================================================================ eigh
def _check_uplo(UPLO: str) -> str:
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


@op("_linalg_eigh", grad_fn="LinalgEighBackward0", promote=None, multi_output=True,
    note="d/dA = V (diag(gL) + skew(V^T gV) / (L_j - L_i)) V^T (LinalgEighBackward0)",
    formula="A: V (diag(grad_L) + skew(V^T grad_V) / (L_j - L_i)) V^T (inf/nan for repeated eigenvalues when the "
            "eigenvectors are used)")
def _linalg_eigh(A, UPLO="L"):
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix of ``A``. torch.linalg.eigh."""
    _check_matrix("linalg.eigh", A)
    w, v = np.linalg.eigh(A, UPLO=_check_uplo(UPLO))
    return w.astype(A.dtype, copy=False), v.astype(A.dtype, copy=False)


def _eigh_backward(gL, gV, L, V):
    # FunctionsManual.cpp linalg_eig_backward (is_hermitian): gA = V (diag(gL) + skew(V^H gV) / E) V^H,
    # E_ij = L_j - L_i (1 on the diagonal); repeated eigenvalues divide by 0 (inf/nan, as PyTorch's)
    if gV is None:
        return matmul(V * unsqueeze(gL, -2), _mH(V))
    VhgV = matmul(_mH(V), gV)
    VhgV = 0.5 * (VhgV - _mH(VhgV))
    n = rule_values(L).shape[-1]
    E = unsqueeze(L, -2) - unsqueeze(L, -1)
    E = where(np.eye(n, dtype=bool), 1.0, E)
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = VhgV / E
    inner = where(np.eye(n, dtype=bool), 0.0, inner)
    if gL is not None:
        inner = inner + diag_embed(gL)
    return matmul(V, matmul(inner, _mH(V)))


@_linalg_eigh.defvjp
def _(grads, A, UPLO):
    gL, gV = (None if _undefined(g) else g for g in grads)
    if gL is None and gV is None:  # zero gradients (a node runs only when an output got one): zero
        return np.zeros_like(rule_values(A))
    L, V = _linalg_eigh(A, UPLO)
    return _eigh_backward(gL, gV, L, V)


@_linalg_eigh.defjvp
def _(A_t, A, result, UPLO):
    # FunctionsManual.cpp linalg_eig_jvp (hermitian): dP = V^H dA V, dL = diag(dP), dV = V (dP / E), E's diagonal
    # zeroed; the whole tangent, as PyTorch's (not the triangle the forward reads)
    L, V = result
    dP = matmul(_mH(V), matmul(A_t, V))
    dL = _diagonal(dP, 0, -2, -1)
    n = L.shape[-1]
    E = unsqueeze(L, -2) - unsqueeze(L, -1)
    E = where(np.eye(n, dtype=bool), 1.0, E)
    with np.errstate(divide="ignore", invalid="ignore"):
        dV = matmul(V, where(np.eye(n, dtype=bool), 0.0, dP / E))
    return dL, dV


@composite("linalg.eigh", grad_fn="LinalgEighBackward0", note=_linalg_eigh.note)
def linalg_eigh(A, UPLO="L"):
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix of ``A``, reading its lower (``UPLO="L"``) or
    upper triangle (a named tuple torch.return_types.linalg_eigh): eigenvalues ascending, eigenvectors in the
    columns, their signs LAPACK's. Matches torch.linalg.eigh (grad_fn LinalgEighBackward0; the eigenvectors'
    gradient is inf/nan where eigenvalues repeat, as PyTorch's).

    Raises:
        RuntimeError: fewer than 2 dimensions, non-square matrices, integer tensors, a bad ``UPLO``.
    """
    w, v = _linalg_eigh(to_tensor(A), UPLO)
    return return_types_linalg_eigh(w, v)


@composite("linalg.eigvalsh", grad_fn="LinalgEighBackward0", note="d/dA = V diag(grad) V^T")
def linalg_eigvalsh(A, UPLO="L"):
    """The eigenvalues (ascending) of each symmetric matrix of ``A``. Matches torch.linalg.eigvalsh (grad_fn
    LinalgEighBackward0: ``V diag(grad) V^T``, finite for repeated eigenvalues too).

    Raises:
        RuntimeError: fewer than 2 dimensions, non-square matrices, integer tensors, a bad ``UPLO``.
    """
    return _linalg_eigh(to_tensor(A), UPLO)[0]


# ================================================================================================ svd
def _check_driver(driver) -> None:
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")


@op("_linalg_svd", grad_fn="LinalgSvdBackward0", promote=None, multi_output=True,
    note="d/dA = U [(skew(U^T gU) S + S skew(V^T gV)) / (S_j^2 - S_i^2) + diag(gS)] V^T + the off-range terms",
    formula="A: U (diag(grad_S) + (skew(U^T grad_U) S + S skew(V^T grad_V)) / (S_j^2 - S_i^2)) V^T + the terms "
            "outside the span of U, V (svdvals: U diag(grad_S) V^T)")
def _linalg_svd(A, full_matrices=True):
    """``(U, S, Vh)`` of each matrix of ``A``. torch.linalg.svd."""
    _check_matrix("linalg.svd", A, square=False)
    u, s, vh = _lapack.gesdd(A, full_matrices=bool(full_matrices))
    return u.astype(A.dtype, copy=False), s.astype(A.dtype, copy=False), vh.astype(A.dtype, copy=False)


def _svd_backward(gU, gS, gVh, U, S, Vh):
    # FunctionsManual.cpp svd_backward (real), U m×k, S k, Vh k×n; gU/gVh None when undefined
    m, n = rule_values(U).shape[-2], rule_values(Vh).shape[-1]
    k = rule_values(S).shape[-1]
    if gU is None and gVh is None:
        return matmul(U * unsqueeze(gS, -2), Vh)
    eye = np.eye(k, dtype=bool)
    V = _mH(Vh)
    gV = _mH(gVh) if gVh is not None else None
    S2 = S * S
    E = unsqueeze(S2, -2) - unsqueeze(S2, -1)
    E = where(eye, 1.0, E)
    gA = None
    with np.errstate(divide="ignore", invalid="ignore"):
        if gU is not None:
            UhgU = matmul(_mH(U), gU)
            UhgU = UhgU - _mH(UhgU)
            gA = UhgU * unsqueeze(S, -2)
        if gV is not None:
            VhgV = matmul(Vh, gV)
            VhgV = VhgV - _mH(VhgV)
            t = unsqueeze(S, -1) * VhgV
            gA = t if gA is None else gA + t
        gA = gA / E
        gA = where(eye, 0.0, gA)
        if gS is not None:
            gA = gA + diag_embed(gS)
        if m > k and gU is not None:
            gA = matmul(U, gA)
            gUSinv = gU / unsqueeze(S, -2)
            gA = gA + gUSinv - matmul(U, matmul(_mH(U), gUSinv))
            gA = matmul(gA, Vh)
        elif n > k and gV is not None:
            gA = matmul(gA, Vh)
            gVSinv = gV / unsqueeze(S, -2)
            gA = gA + _mH(gVSinv) - matmul(matmul(_mH(gVSinv), V), Vh)
            gA = matmul(U, gA)
        else:
            gA = matmul(matmul(U, gA), Vh)
    return gA


@_linalg_svd.defvjp
def _(grads, A, full_matrices):
    gU, gS, gVh = grads
    U, S, Vh = _linalg_svd(A, False)
    k = rule_values(S).shape[-1]
    if full_matrices:  # derivatives.yaml: the gradients narrowed to the first k singular vectors
        gU = _narrow(gU, -1, 0, k)
        gVh = _narrow(gVh, -2, 0, k)
    gU, gS, gVh = (None if _undefined(g) else g for g in (gU, gS, gVh))
    if gU is None and gS is None and gVh is None:  # zero gradients (see eigh's rule): zero
        return np.zeros_like(rule_values(A))
    return _svd_backward(gU, gS, gVh, U, S, Vh)


def _svd_jvp(dA, U, S, Vh):
    # FunctionsManual.cpp linalg_svd_jvp (real, the reduced factors): dP = U^T dA V, dS = diag(dP),
    # dU = U (dP S + S dP^T) / E + (I - U U^T) dA V S^{-1}, dV = V (S dP + dP^T S) / E + (I - V V^T) dA^T U S^{-1}
    m, n = U.shape[-2], Vh.shape[-1]
    k = S.shape[-1]
    V = _mH(Vh)
    eye = np.eye(k, dtype=bool)
    dP = matmul(_mH(U), matmul(dA, V))
    dS = _diagonal(dP, 0, -2, -1)
    S2 = S * S
    E = where(eye, 1.0, unsqueeze(S2, -2) - unsqueeze(S2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        dU = matmul(U, where(eye, 0.0, (dP * unsqueeze(S, -2) + unsqueeze(S, -1) * _mH(dP)) / E))
        dV = matmul(V, where(eye, 0.0, (unsqueeze(S, -1) * dP + _mH(dP) * unsqueeze(S, -2)) / E))
        if m > k:
            dAV = matmul(dA, V)
            dU = dU + (dAV - matmul(U, matmul(_mH(U), dAV))) / unsqueeze(S, -2)
        if n > k:
            dAhU = matmul(_mH(dA), U)
            dV = dV + (dAhU - matmul(V, matmul(Vh, dAhU))) / unsqueeze(S, -2)
    return dU, dS, _mH(dV)


@_linalg_svd.defjvp
def _(A_t, A, result, full_matrices):
    # as PyTorch's linalg_svd_jvp with full_matrices and m != n: the tangents of the first k singular vectors,
    # zeros for the others (which are not unique)
    m, n = A.shape[-2:]
    U, S, Vh = result
    k = S.shape[-1]
    if not full_matrices or m == n:
        return _svd_jvp(A_t, U, S, Vh)
    dU, dS, dVh = _svd_jvp(A_t, _narrow(U, -1, 0, k), S, _narrow(Vh, -2, 0, k))
    if m > k:
        dU = _cat([dU, Tensor(np.zeros(U.shape[:-1] + (m - k,), dtype=U.data.dtype))], -1)
    if n > k:
        dVh = _cat([dVh, Tensor(np.zeros(Vh.shape[:-2] + (n - k, n), dtype=Vh.data.dtype))], -2)
    return dU, dS, dVh


@composite("linalg.svd", grad_fn="LinalgSvdBackward0", note=_linalg_svd.note)
def linalg_svd(A, full_matrices=True, *, driver=None):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh`` (a named tuple torch.return_types.linalg_svd): singular values
    descending; U m×m and Vh n×n with ``full_matrices``, else m×k and k×n (k = min(m, n)); the singular vectors'
    signs are LAPACK's (gesdd, in the input's precision, as PyTorch on the CPU). Matches torch.linalg.svd (grad_fn LinalgSvdBackward0, FunctionsManual.cpp
    svd_backward; inf/nan where singular values repeat and U or Vh is used, as PyTorch's).

    Raises:
        RuntimeError: fewer than 2 dimensions, integer tensors.
    """
    _check_driver(driver)
    u, s, vh = _linalg_svd(to_tensor(A), bool(full_matrices))
    return return_types_linalg_svd(u, s, vh)


@composite("svd", grad_fn="LinalgSvdBackward0", note=_linalg_svd.note, method=True)
def svd(input, some=True, compute_uv=True):
    """torch.svd (deprecated in PyTorch for torch.linalg.svd): ``(U, S, V)`` with ``V`` (not ``Vh``), reduced
    when ``some``; the named tuple torch.return_types.svd. Without ``compute_uv`` U and V are zeros."""
    t = to_tensor(input)
    if not compute_uv:  # PyTorch: the singular values, U and V zero-filled (m, m) and (n, n)
        m, n = t.data.shape[-2:]
        s = _linalg_svdvals(t)
        return return_types_svd(Tensor(np.zeros(t.data.shape[:-2] + (m, m), dtype=t.data.dtype)), s,
                                Tensor(np.zeros(t.data.shape[:-2] + (n, n), dtype=t.data.dtype)))
    u, s, vh = _linalg_svd(t, not some)
    return return_types_svd(u, s, _mH(vh))


@op("_linalg_svdvals", grad_fn="LinalgSvdBackward0", promote=None, note="d/dA = U diag(grad) V^T")
def _linalg_svdvals(A):
    """The singular values of each matrix of ``A``, descending. torch.linalg.svdvals."""
    _check_matrix("linalg.svdvals", A, square=False)
    return _lapack.gesdd(A, compute_uv=False)


@_linalg_svdvals.defvjp
def _(grad, A):
    U, S, Vh = _linalg_svd(A, False)
    return matmul(U * unsqueeze(grad, -2), Vh)


@_linalg_svdvals.defjvp
def _(A_t, A):
    U, S, Vh = _linalg_svd(A, False)
    return _diagonal(matmul(_mH(U), matmul(A_t, _mH(Vh))), 0, -2, -1)


@composite("linalg.svdvals", grad_fn="LinalgSvdBackward0", note=_linalg_svdvals.note)
def linalg_svdvals(A, *, driver=None):
    """The singular values (descending) of each matrix of ``A`` (..., m, n) → (..., min(m, n)). Matches
    torch.linalg.svdvals (grad_fn LinalgSvdBackward0: ``U diag(grad) V^T``, finite for repeated values too).

    Raises:
        RuntimeError: fewer than 2 dimensions, integer tensors.
    """
    _check_driver(driver)
    return _linalg_svdvals(to_tensor(A))

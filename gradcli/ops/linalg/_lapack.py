"""LAPACK through SciPy's wrappers, in the precision of the input, for the linear algebra of :mod:`gradcli.ops.linalg`.

PyTorch's CPU linear algebra calls LAPACK's routines of the tensor's own precision (``sgetrf``/``sgesdd`` for
float32, ``dgetrf``/``dgesdd`` for float64). numpy.linalg does not: it computes a float32 input in float64 and
rounds the result, which is more accurate than PyTorch's float32 answer and so differs from it wherever an
example looks at rounding (``torch.allclose(A @ X, B)``, the reconstruction error of an SVD). SciPy's wrappers of
the same routines (``scipy.linalg.lapack``, the routine chosen by dtype with ``get_lapack_funcs``) give float32
results computed in float32, and LAPACK's conventions: 1-based ``int32`` pivots (getrf, sytrf; SciPy's getrf
gives them 0-based, they are shifted back here), getrf's and sytrf's ``info``.

Each function loops over the batch (the dimensions before the last two) and calls the routine on each matrix.
The module is loaded lazily (``lazy("gradcli.ops.linalg._lapack")``): importing SciPy costs start-up time that
commands which do no linear algebra should not pay (tests/cli/test_startup_imports.py).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import get_blas_funcs, get_lapack_funcs
from scipy.linalg import lstsq as _scipy_lstsq


def _funcs(names: tuple, a: np.ndarray):
    return get_lapack_funcs(names, (a,))


def _batched(a: np.ndarray):
    """``(batch shape, a reshaped to (-1, m, n))``."""
    return a.shape[:-2], a.reshape((-1,) + a.shape[-2:])


def getrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The LU factorization with partial pivoting of each matrix of ``a`` (..., m, n): ``(LU, pivots, info)``,
    LU packed (L below the diagonal, unit diagonal implied; U on and above it), pivots (..., min(m, n)) int32
    1-based (row i was swapped with row pivots[i]), info (...) int32: LAPACK's index of the first zero on U's
    diagonal, 0 where there is none."""
    batch, flat = _batched(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    lu = np.empty_like(flat)
    piv = np.empty((flat.shape[0], k), dtype=np.int32)
    info = np.zeros(flat.shape[0], dtype=np.int32)
    if flat.shape[0] and k:
        (fn,) = _funcs(("getrf",), flat)
        for i, mat in enumerate(flat):
            lu[i], p, info[i] = fn(mat)
            piv[i] = p + 1
    else:
        lu[...] = flat
    return lu.reshape(a.shape), piv.reshape(batch + (k,)), info.reshape(batch)


def getrs(lu: np.ndarray, piv: np.ndarray, b: np.ndarray, trans: int = 0) -> np.ndarray:
    """``A^{-1} b`` (``trans=1``: ``A^{-T} b``) for each matrix of the LU factorization ``(lu, piv)`` (1-based
    pivots) and right-hand sides ``b`` (..., n, k); the batch dimensions broadcast."""
    batch = np.broadcast_shapes(lu.shape[:-2], piv.shape[:-1], b.shape[:-2])
    lu_b = np.broadcast_to(lu, batch + lu.shape[-2:]).reshape((-1,) + lu.shape[-2:])
    piv_b = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape((-1,) + piv.shape[-1:])
    b_b = np.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    out = np.empty(b_b.shape, dtype=lu.dtype)
    if out.size:
        (fn,) = _funcs(("getrs",), lu_b)
        for i in range(out.shape[0]):
            out[i] = fn(lu_b[i], piv_b[i].astype(np.int32) - 1, b_b[i], trans=trans)[0]
    return out.reshape(batch + b.shape[-2:])


def gesv(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(X, info)`` with ``a X = b`` for square ``a`` (..., n, n) and ``b`` (..., n, k) of the same batch shape
    (LAPACK gesv: getrf then getrs); info > 0 marks a singular matrix (X is then undefined)."""
    batch, fa = _batched(a)
    fb = b.reshape((-1,) + b.shape[-2:])
    out = np.empty(fb.shape, dtype=a.dtype)
    info = np.zeros(fa.shape[0], dtype=np.int32)
    if out.size:
        (fn,) = _funcs(("gesv",), fa)
        for i in range(fa.shape[0]):
            _, _, out[i], info[i] = fn(fa[i], fb[i])
    return out.reshape(b.shape), info.reshape(batch)


def gesdd(a: np.ndarray, full_matrices: bool = True, compute_uv: bool = True):
    """The SVD of each matrix of ``a`` (..., m, n) by LAPACK gesdd (divide and conquer, PyTorch's CPU driver):
    ``(U, S, Vh)`` (S only without ``compute_uv``), S descending.

    Raises:
        numpy.linalg.LinAlgError: if gesdd does not converge.
    """
    batch, flat = _batched(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    s = np.empty((flat.shape[0], k), dtype=a.dtype)
    cu, cv = (m, n) if full_matrices else (k, k)
    u = np.zeros((flat.shape[0], m, cu), dtype=a.dtype)
    vh = np.zeros((flat.shape[0], cv, n), dtype=a.dtype)
    if k == 0 and compute_uv and full_matrices:  # an empty side: the identity of the other
        u[:] = np.eye(m, dtype=a.dtype)
        vh[:] = np.eye(n, dtype=a.dtype)
    if flat.shape[0] and k:
        fn, lwork_fn = _funcs(("gesdd", "gesdd_lwork"), flat)
        lwork = int(lwork_fn(m, n, compute_uv=int(compute_uv), full_matrices=int(full_matrices))[0])
        for i, mat in enumerate(flat):
            ui, si, vi, info = fn(mat, compute_uv=int(compute_uv), full_matrices=int(full_matrices),
                                  lwork=max(lwork, 1))
            if info > 0:
                raise np.linalg.LinAlgError("SVD did not converge")
            s[i] = si
            if compute_uv:
                u[i], vh[i] = ui, vi
    if not compute_uv:
        return s.reshape(batch + (k,))
    return u.reshape(batch + u.shape[1:]), s.reshape(batch + (k,)), vh.reshape(batch + vh.shape[1:])


def sytrf(a: np.ndarray, lower: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LAPACK sytrf, the Bunch-Kaufman LDL^T factorization of each symmetric matrix of ``a`` (..., n, n)
    (reading the lower triangle, or the upper one): ``(LD, pivots, info)`` as LAPACK leaves them (LD: D's
    blocks on the diagonal, L's multipliers below it, the other triangle zeroed as PyTorch's; pivots int32,
    LAPACK's 1-based and negative for 2x2 blocks; info > 0 where D is singular)."""
    batch, flat = _batched(a)
    n = a.shape[-1]
    ld = np.zeros_like(flat)
    piv = np.zeros((flat.shape[0], n), dtype=np.int32)
    info = np.zeros(flat.shape[0], dtype=np.int32)
    if flat.shape[0] and n:
        (fn,) = _funcs(("sytrf",), flat)
        for i, mat in enumerate(flat):
            out, piv[i], info[i] = fn(mat, lower=int(lower))
            ld[i] = np.tril(out) if lower else np.triu(out)
    return ld.reshape(a.shape), piv.reshape(batch + (n,)), info.reshape(batch)


def lstsq(a: np.ndarray, b: np.ndarray, rcond: float, driver: str):
    """Least squares for each pair of matrices of ``a`` (..., m, n) and ``b`` (..., m, k) (batch shapes equal)
    with LAPACK's ``driver`` (gels, gelsy, gelsd, gelss): ``(X, rank, singular values)``, X (..., n, k); rank
    (...) int64 (gelsy, gelsd, gelss), the singular values (..., min(m, n)) (gelsd, gelss)."""

    batch, fa = _batched(a)
    fb = b.reshape((-1,) + b.shape[-2:])
    m, n = a.shape[-2:]
    x = np.zeros((fa.shape[0], n, b.shape[-1]), dtype=a.dtype)
    rank = np.zeros(fa.shape[0], dtype=np.int64)
    sv = np.zeros((fa.shape[0], min(m, n)), dtype=a.dtype)
    for i in range(fa.shape[0]):
        if driver == "gels":
            (fn,) = _funcs(("gels",), fa[i])
            rhs = np.zeros((max(m, n), b.shape[-1]), dtype=a.dtype)
            rhs[:m] = fb[i]
            _, out, _ = fn(fa[i], rhs)
            x[i] = out[:n]
            continue
        xi, _, r, s = _scipy_lstsq(fa[i], fb[i], cond=rcond, lapack_driver=driver, check_finite=False)
        x[i], rank[i] = xi, r
        if s is not None:
            sv[i] = s
    return x.reshape(batch + x.shape[1:]), rank.reshape(batch), sv.reshape(batch + (min(m, n),))


def potrf(a: np.ndarray, upper: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK potrf, the Cholesky factorization of each symmetric matrix of ``a`` (..., n, n) (reading the lower
    triangle, or the upper one): ``(L, info)``, the other triangle zeroed; where info > 0 (the order of the first
    leading minor that is not positive-definite) the factor is LAPACK's partial one, as PyTorch returns it."""
    batch, flat = _batched(a)
    out = np.zeros_like(flat)
    info = np.zeros(flat.shape[0], dtype=np.int32)
    if flat.size:
        (fn,) = _funcs(("potrf",), flat)
        for i, mat in enumerate(flat):
            c, info[i] = fn(mat, lower=int(not upper), clean=1)
            out[i] = (np.triu(c) if upper else np.tril(c)) + 0.0  # no -0.0 in the zeroed triangle
    return out.reshape(a.shape), info.reshape(batch)


def trsm(a: np.ndarray, b: np.ndarray, upper: bool, left: bool, unitriangular: bool) -> np.ndarray:
    """BLAS trsm (PyTorch's linalg.solve_triangular on the CPU): ``X`` with ``a X = b`` (``X a = b`` when not
    ``left``) for the triangular matrices of ``a`` (the triangle ``upper`` names; the other is not read; a unit
    diagonal assumed with ``unitriangular``); batch dimensions broadcast. A zero on the diagonal gives inf/nan,
    not an error."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    fa = np.broadcast_to(a, batch + a.shape[-2:]).reshape((-1,) + a.shape[-2:])
    fb = np.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    out = np.empty(fb.shape, dtype=a.dtype)
    if out.size:
        (fn,) = get_blas_funcs(("trsm",), (fa,))
        for i in range(fa.shape[0]):
            out[i] = fn(1.0, fa[i], fb[i], side=int(not left), lower=int(not upper), diag=int(unitriangular))
    return out.reshape(batch + b.shape[-2:])

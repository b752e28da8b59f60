"""Least squares, ranks and tensor inverses: torch.linalg's lstsq, matrix_rank, tensorinv and tensorsolve.

lstsq runs LAPACK's drivers (gelsy by default, as PyTorch on the CPU; gels, gelsd, gelss) through SciPy in the
input's precision (:mod:`._lapack`); its derivative is PyTorch's (FunctionsManual.cpp linalg_lstsq_backward:
through the pseudo-inverse, ``gA = pinv_backward(gX B^T, pinv(A), A)``, ``gB = pinv(A)^T gX``; the residuals'
gradient ``2 r diag(g) X^T`` and ``-2 r diag(g)``, r = A X - B), and its forward mode derivatives.yaml's
(linalg_lstsq_solution_jvp, linalg_lstsq_residuals_jvp). matrix_rank counts singular values (not
differentiable); tensorinv and tensorsolve reshape to torch.linalg.inv and torch.linalg.solve, as PyTorch does.
"""

from __future__ import annotations

import math

import numpy as np

from ...engine import dtypes
from ...engine.lazy import lazy
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, op, rule_values
from ..reduction.reductions import sum
from ..shape.views import _reshape_alias, movedim, reshape, squeeze, unsqueeze
from .decompositions import _linalg_eigh, _linalg_svdvals
from .inverses import (
    _check_float,
    _is_vector_rhs,
    _linalg_inv,
    _linalg_pinv,
    _linalg_solve,
    _LinAlgError,
    _mH,
    _named_tuple,
    _undefined,
)
from .products import matmul

_lapack = lazy("gradcli.ops.linalg._lapack")  # SciPy's LAPACK, loaded when lstsq first runs

return_types_linalg_lstsq = _named_tuple("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))

DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _check_lstsq(A: np.ndarray, B: np.ndarray, driver: str) -> bool:
    """PyTorch's checks of lstsq's inputs; whether ``B`` is a (batch of) vector(s)."""
    if driver not in DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    _check_float("torch.linalg.lstsq", A)
    if A.dtype != B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {dtypes.scalar_type_name(A.dtype)} and other's dtype "
                           f"{dtypes.scalar_type_name(B.dtype)}")
    if not (A.ndim >= B.ndim and A.ndim - B.ndim <= 1):
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    vector = A.ndim - 1 == B.ndim
    if vector and A.shape[-2] != B.shape[-1]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-1)")
    if not vector and A.shape[-2] != B.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    return vector


def _rcond(A: np.ndarray, rcond) -> float:
    return float(np.finfo(A.dtype).eps * max(A.shape[-2:])) if rcond is None else float(rcond)


def _residuals(A: np.ndarray, b: np.ndarray, x: np.ndarray, driver: str, rank: np.ndarray) -> np.ndarray:
    """PyTorch's residuals: the squared norms of the columns of ``A X - B`` where m > n and the driver is not gelsy
    (gelsd and gelss: only if every matrix has full rank), else empty."""
    m, n = A.shape[-2:]
    if m <= n or driver == "gelsy" or (driver in ("gelsd", "gelss") and np.any(rank != n)):
        return np.zeros((0,), dtype=A.dtype)
    r = np.matmul(A, x) - b
    return np.sum(r * r, axis=-2)


@op("_linalg_lstsq", grad_fn="LinalgLstsqBackward0", inputs=2, promote=None, multi_output=True,
    note="d/dA = pinv_backward(gX B^T, pinv(A), A), d/dB = pinv(A)^T gX (LinalgLstsqBackward0)",
    formula="self: pinv_backward(grad_solution @ b^T, pinv(self), self) + 2 r diag(grad_residuals) solution^T; "
            "b: pinv(self)^T @ grad_solution - 2 r diag(grad_residuals) (r = self @ solution - b)")
def _linalg_lstsq(input, b, rcond, driver):
    """``(solution, residuals)`` of the least-squares problems ``min ||A X - B||``. torch.linalg.lstsq."""
    vector = _check_lstsq(input, b, driver)
    bm = b[..., None] if vector else b
    batch = np.broadcast_shapes(input.shape[:-2], bm.shape[:-2])
    A = np.broadcast_to(input, batch + input.shape[-2:])
    B = np.broadcast_to(bm, batch + bm.shape[-2:])
    x, rank, _ = _lapack.lstsq(A, B, _rcond(input, rcond), driver)
    res = _residuals(A, B, x, driver, rank)
    return (x[..., 0] if vector else x), res


def _as_matrix(x, vector: bool):
    return unsqueeze(x, -1) if vector else x


@_linalg_lstsq.defvjp
def _(grads, input, b, rcond, driver, needs_input_grad):
    # FunctionsManual.cpp linalg_lstsq_backward (through the pseudo-inverse), and the residuals' gradient
    gX, gR = (None if _undefined(g) else g for g in grads)
    vector = _is_vector_rhs(tuple(rule_values(input).shape), tuple(rule_values(b).shape))
    X = _linalg_lstsq(input, b, rcond, driver)[0]
    Xm, Bm = _as_matrix(X, vector), _as_matrix(b, vector)
    gA = gB = None
    P = _linalg_pinv(input)
    if gX is not None:
        gXm = _as_matrix(gX, vector)
        if needs_input_grad[0]:
            gA = _linalg_pinv.vjp(matmul(gXm, _mH(Bm)), input, P)
        gB = matmul(_mH(P), gXm)
    if gR is not None and rule_values(gR).size:
        r = matmul(input, Xm) - Bm
        rg = 2 * r * unsqueeze(gR, -2)
        tA = matmul(rg, _mH(Xm))
        gA = tA if gA is None else gA + tA
        gB = -rg if gB is None else gB - rg
    if gA is None:
        gA = np.zeros_like(rule_values(input))
    if gB is None:
        gB = np.zeros_like(rule_values(Bm))
    return gA, (squeeze(gB, -1) if vector else gB)


@_linalg_lstsq.defjvp
def _(input_t, b_t, input, b, result, rcond, driver):
    # derivatives.yaml linalg_lstsq: solution: dpinv(A) B + pinv(A) dB (linalg_lstsq_solution_jvp); residuals:
    # 2 sum(r * (dA X + A dX - dB)) over the rows (linalg_lstsq_residuals_jvp)
    vector = _is_vector_rhs(tuple(input.shape), tuple(b.shape))
    X, res = result
    P = _linalg_pinv(input)
    dP = _linalg_pinv.jvp(input_t, input, P)
    Bm, dBm, Xm = _as_matrix(b, vector), _as_matrix(b_t, vector), _as_matrix(X, vector)
    dX = matmul(dP, Bm) + matmul(P, dBm)
    dres = None
    if math.prod(res.shape):  # residuals computed (else empty, without a tangent)
        r = matmul(input, Xm) - Bm
        dr = matmul(input_t, Xm) + matmul(input, dX) - dBm
        dres = 2 * sum(r * dr, -2)
    return (squeeze(dX, -1) if vector else dX), dres


@composite("linalg.lstsq", grad_fn="LinalgLstsqBackward0", note=_linalg_lstsq.note)
def linalg_lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of ``A X = B`` (torch.return_types.linalg_lstsq(solution, residuals, rank,
    singular_values)): A (..., m, n), B (..., m, k) or a (batch of) vector(s) (..., m), batch dimensions
    broadcast; LAPACK's ``driver`` (default gelsy, as PyTorch on the CPU), ``rcond`` (default eps * max(m, n))
    the relative threshold of the rank. residuals: the squared residual norms where m > n and the driver is not
    gelsy (gelsd/gelss: all matrices of full rank), else empty; rank (int64, A's batch shape; empty for gels);
    singular_values (gelsd/gelss; else empty). Matches torch.linalg.lstsq (grad_fn LinalgLstsqBackward0; rank and
    singular values have no gradient).

    Raises:
        RuntimeError: an unknown driver, fewer than 2 dimensions, other dtypes, mismatching sizes (PyTorch's
            messages).
    """
    A, B = to_tensor(A), to_tensor(B)
    driver = "gelsy" if driver is None else driver
    x, res = _linalg_lstsq(A, B, rcond, driver)
    a = A.data
    empty_int = np.zeros((0,), dtype=np.int64)
    if driver == "gels":
        return return_types_linalg_lstsq(x, res, Tensor(empty_int), Tensor(np.zeros((0,), dtype=a.dtype)))
    _, rank, sv = _lapack.lstsq(a, np.zeros(a.shape[:-1] + (1,), dtype=a.dtype), _rcond(a, rcond), driver)
    if driver == "gelsy":
        sv = np.zeros((0,), dtype=a.dtype)
    return return_types_linalg_lstsq(x, res, Tensor(rank), Tensor(sv))


# ================================================================================================ matrix_rank
@composite("linalg.matrix_rank", grad_fn="none (an integer count)", note="not differentiable (an integer count)",
           differentiable=False)
def linalg_matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The numerical rank of each matrix of ``A`` (..., m, n) → int64 (...): the number of singular values (the
    eigenvalues' absolute values with ``hermitian``) above ``max(atol, rtol * max(S))``; without either, rtol is
    eps * max(m, n), with only atol rtol is 0 (``tol`` is the old name of atol). Matches torch.linalg.matrix_rank.

    Raises:
        RuntimeError: fewer than 2 dimensions, integer tensors.
    """
    A = to_tensor(A)
    a = A.data
    if a.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    _check_float("torch.linalg.matrix_rank", a)
    if tol is not None:
        atol = tol
    if hermitian:
        s = np.abs(_linalg_eigh(a, "L")[0])
    else:
        s = _linalg_svdvals(a)
    atol_v = 0.0 if atol is None else _value(atol)
    rtol_v = (np.finfo(a.dtype).eps * max(a.shape[-2:]) if atol is None else 0.0) if rtol is None else _value(rtol)
    smax = np.max(s, axis=-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,), dtype=s.dtype)
    tol_v = np.maximum(atol_v, rtol_v * smax)
    return Tensor(np.sum(s > tol_v, axis=-1).astype(np.int64))


def _value(x):
    return np.asarray(x.data if isinstance(x, Tensor) else x)[..., None]


# ================================================================================================ tensorinv, tensorsolve
@composite("linalg.tensorinv", grad_fn="composite", note="the inverse of the matrix reshape, reshaped back")
def linalg_tensorinv(A, ind=2):
    """The tensor ``X`` with ``tensordot(X, A, ind) = I``: A reshaped to a square matrix (the first ``ind``
    dimensions against the rest), inverted, reshaped to ``A.shape[ind:] + A.shape[:ind]``. Matches
    torch.linalg.tensorinv.

    Raises:
        RuntimeError: ``ind`` not positive, or the products of the two groups of dimensions differ (PyTorch's
            messages); torch._C._LinAlgError for a singular reshape ("inv: The diagonal element ...").
    """
    A = to_tensor(A)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    head, tail = A.data.shape[:ind], A.data.shape[ind:]
    p_head, p_tail = math.prod(head), math.prod(tail)
    if p_head != p_tail:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]),"
                           f" but got {p_tail} != {p_head}")
    try:
        inv = _linalg_inv(reshape(A, (p_head, p_tail)))
    except _LinAlgError as err:  # PyTorch inverts with at::inverse, whose message is named "inv"
        raise _LinAlgError(str(err).replace("linalg.inv:", "inv:", 1)) from None
    # LAPACK's inverse is column-major in PyTorch, so its reshape is an alias (ReshapeAliasBackward0)
    return _reshape_alias(inv, tuple(tail) + tuple(head))


@composite("linalg.tensorsolve", grad_fn="composite", note="the solve of the matrix reshape, reshaped back")
def linalg_tensorsolve(A, B, dims=None):
    """The tensor ``X`` with ``tensordot(A, X, X.ndim) = B``: the dimensions ``dims`` of A moved to the end, A
    reshaped to a (prod(B.shape), prod(rest)) matrix and solved against B flattened (torch.linalg.solve), the
    solution reshaped to ``A.shape[B.ndim:]``. Matches torch.linalg.tensorsolve.

    Raises:
        RuntimeError: the products of the two groups of dimensions differ (PyTorch's message), and
            torch.linalg.solve's errors.
    """
    A, B = to_tensor(A), to_tensor(B)
    if dims is not None:
        dims = tuple(dims)
        nd = A.data.ndim
        A = movedim(A, dims, tuple(range(nd - len(dims), nd)))
    result_shape = A.data.shape[B.data.ndim:]
    p_res, p_other = math.prod(result_shape), math.prod(A.data.shape[:B.data.ndim])
    if p_res != p_other:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {p_res} != {p_other}")
    x = _linalg_solve(reshape(A, (p_other, p_res)), reshape(B, (p_other,)), True)
    return reshape(x, tuple(result_shape))

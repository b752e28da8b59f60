"""Matrix functions: torch.linalg's det, slogdet, inv, solve, cholesky, qr, eigh, eigvalsh, svd,
svdvals, pinv, matrix_norm, vector_norm, norm, cross, matrix_power, matrix_exp, multi_dot, and torch.det,
torch.inverse, torch.slogdet, torch.logdet, torch.cross, torch.matrix_power, torch.matrix_exp, torch.pinverse,
torch.cdist. The ``torch.linalg`` namespace itself is :mod:`gradcli.api.linalg`.

The functions of ``torch.linalg`` are registered under their qualified names (``"linalg.det"``), so that
``gradcli ops`` lists them and the op table tests them, and are reached as ``torch.linalg.det`` (never
``torch.det``, which is its own entry where PyTorch has it).

Every function works on batches of matrices (the last two dimensions; numpy.linalg is vectorized over the
leading ones). Values, grad_fn names, named tuples (``torch.return_types.linalg_slogdet``...) and error texts
follow PyTorch 2.13; the derivatives are those of tools/autograd/derivatives.yaml and FunctionsManual.cpp
(linalg_det_backward, slogdet_backward, linalg_solve_backward, cholesky_backward, linalg_qr_backward,
linalg_eig_backward, svd_backward, pinv_backward, linalg_matrix_exp_differential, _cdist_backward and the
corresponding *_jvp). Rules are written with ops of the table so that they can be differentiated again; the
rules of the decompositions recompute the decomposition from the input (an op with several outputs cannot
save its result), which under ``create_graph=True`` records it.
"""

from __future__ import annotations

import builtins as _py
import warnings

import numpy as np

from ...engine import dtypes
from ...engine.tensor import Tensor, normalize_dim, to_tensor
from ..core.declare import composite, op, rule_values
from ..elementwise.arithmetic import pow
from ..elementwise.comparison import where
from .products import dot, matmul, mm
from .structured import tril, triu
from ..reduction.reductions import _vector_norm, amax, amin, sum
from ..reduction.scans import cumprod
from ..shape.views import _diagonal, cat, diag_embed, diagonal, flip, movedim, narrow, transpose, unsqueeze
from ..elementwise.unary import abs, sign


# ================================================================================================ helpers
class _LinAlgError(RuntimeError):
    """PyTorch's ``torch._C._LinAlgError`` (a RuntimeError): a decomposition failed on the input's values."""


_LinAlgError.__name__ = "_LinAlgError"
_LinAlgError.__qualname__ = "_LinAlgError"


def _named_tuple(name: str, fields: tuple):
    """A ``torch.return_types.<name>`` look-alike: a tuple with the named fields that prints like PyTorch's."""

    def __new__(cls, *values):
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    ns = {"__slots__": (), "_fields": fields, "__new__": __new__, "__repr__": __repr__, "__str__": __repr__,
          "__doc__": f"torch.return_types.{name}: the tuple ({', '.join(fields)})."}
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: self[i])
    cls = type(name, (tuple,), ns)
    cls.__module__ = "torch.return_types"
    return cls


return_types_slogdet = _named_tuple("slogdet", ("sign", "logabsdet"))
return_types_linalg_slogdet = _named_tuple("linalg_slogdet", ("sign", "logabsdet"))
return_types_linalg_qr = _named_tuple("linalg_qr", ("Q", "R"))
return_types_qr = _named_tuple("qr", ("Q", "R"))
return_types_linalg_eigh = _named_tuple("linalg_eigh", ("eigenvalues", "eigenvectors"))
return_types_linalg_svd = _named_tuple("linalg_svd", ("U", "S", "Vh"))
return_types_svd = _named_tuple("svd", ("U", "S", "V"))


def _check_float(name: str, a: np.ndarray, what: str = "input") -> None:
    if a.dtype.kind != "f":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as {what}. Got "
                           f"{dtypes.scalar_type_name(a.dtype)}")


def _check_matrix(name: str, a: np.ndarray, square: bool = True, arg: str = "A") -> None:
    """PyTorch's checks of linalg inputs: at least 2 dimensions, floating point, square (when asked)."""
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    _check_float(name, a)
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: {arg} must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")


def _batch_prefix(a: np.ndarray, bad: np.ndarray) -> tuple[str, int]:
    """``("(Batch element i): ", k)`` for the first batch element whose ``bad`` (an int per matrix, 0 = fine)
    is set, as PyTorch's linalg error messages name it ("" for a single matrix)."""
    flat = bad.reshape(-1)
    i = int(np.flatnonzero(flat)[0])
    return ("" if a.ndim == 2 else f"(Batch element {i}): "), int(flat[i])


def _lu_zero_pivot(a: np.ndarray) -> np.ndarray:
    """The 1-based index of the first zero on U's diagonal of the LU decomposition with partial pivoting (LAPACK
    getrf's ``info``) of each matrix of ``a``, 0 where there is none. Vectorized over the batch; a loop over the
    n columns. Only run to word the error of a singular matrix."""
    batch = a.shape[:-2]
    n = a.shape[-1]
    u = np.array(a, dtype=np.float64).reshape((-1, n, n))
    b = np.arange(u.shape[0])
    info = np.zeros(u.shape[0], dtype=np.int64)
    for k in range(n):
        p = k + np.argmax(np.abs(u[:, k:, k]), axis=-1)  # the first largest, as LAPACK's idamax
        rows_k, rows_p = u[b, k].copy(), u[b, p].copy()
        u[b, p], u[b, k] = rows_k, rows_p
        piv = u[:, k, k]
        zero = piv == 0
        info = np.where((info == 0) & zero, k + 1, info)
        factor = u[:, k + 1:, k] / np.where(zero, 1.0, piv)[:, None]
        u[:, k + 1:, :] -= np.where(zero[:, None, None], 0.0, factor[..., None] * u[:, k, None, :])
    info = info.reshape(batch)
    return info


def _singular_error(name: str, a: np.ndarray) -> _LinAlgError:
    info = _lu_zero_pivot(a)
    if not np.any(info):  # LAPACK found a zero pivot our rounding did not: name the last one
        info = np.full(a.shape[:-2], a.shape[-1], dtype=np.int64)
    prefix, k = _batch_prefix(a, info)
    return _LinAlgError(f"{name}: {prefix}The diagonal element {k} is zero, the inversion could not be completed "
                        "because the input matrix is singular.")


def _cat(xs, dim):
    """cat of rule values: recorded when one of them is a Tensor (create_graph), numpy's otherwise."""
    if any(isinstance(x, Tensor) for x in xs):
        return cat([x if isinstance(x, Tensor) else Tensor(np.asarray(x)) for x in xs], dim)
    return np.concatenate(xs, dim)


def _narrow(x, dim, start, length):
    """narrow of a rule value: recorded for a Tensor, a numpy slice otherwise."""
    if isinstance(x, Tensor):
        return narrow(x, dim, start, length)
    index = [slice(None)] * x.ndim
    index[dim] = slice(start, start + length)
    return x[tuple(index)]


def _like(x, ref):
    """A numpy constant as a Tensor when the rule runs on Tensors (create_graph), else itself."""
    return Tensor(x) if isinstance(ref, Tensor) else x


def _mH(x):
    return transpose(x, -2, -1)


def _eye_like(a: np.ndarray) -> np.ndarray:
    return np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)


def _undefined(g) -> bool:
    """Whether a gradient of a multi-output op is one the engine filled with zeros (PyTorch's undefined
    gradient: the output was not used). A gradient that requires grad (a double backward) never is."""
    if isinstance(g, Tensor) and g.requires_grad:
        return False
    return not np.any(rule_values(g))


# ================================================================================================ det
@op("_linalg_det", grad_fn="LinalgDetBackward0", promote=None,
    note="d/dA det(A) = det(A) A^{-T} (the cofactor matrix; through the SVD for a singular A)")
def _linalg_det(A):
    """The determinant of each matrix of ``A`` (..., n, n) → (...). torch.linalg.det."""
    _check_matrix("linalg.det", A)
    return np.asarray(np.linalg.det(A), dtype=A.dtype)


def _cofactor_singular(A):
    """The cofactor matrix of singular matrices through the SVD, as PyTorch's linalg_det_backward in grad mode:
    ``U diag(prod_{j != i} s_j) Vh * det(U) det(Vh)``."""
    U, S, Vh = _linalg_svd(A, False)
    alpha = _linalg_det(U) * _linalg_det(Vh)
    n = rule_values(S).shape[-1]
    one = np.ones(rule_values(S).shape[:-1] + (1,), dtype=rule_values(S).dtype)
    left = cumprod(_cat([one, _narrow(S, -1, 0, n - 1)], -1), -1)
    right = flip(cumprod(_cat([one, flip(_narrow(S, -1, 1, n - 1), (-1,))], -1), -1), (-1,))
    d = left * right * unsqueeze(alpha, -1)
    return matmul(U * unsqueeze(d, -2), Vh)


def _det_backward(grad, A, det):
    # FunctionsManual.cpp linalg_det_backward: (grad * det) A^{-H} solved with A's LU; a singular matrix gives
    # 0 there (LAPACK's triangular solve skips the zero right-hand side), while in grad mode (create_graph)
    # PyTorch differentiates through the SVD, which gives the cofactor matrix
    a = rule_values(A)
    if a.shape[-1] == 0:
        return None
    if a.shape[-1] == 1:  # det = the element: the gradient does not depend on A (no second derivative)
        return unsqueeze(unsqueeze(grad, -1), -1)
    g = unsqueeze(unsqueeze(grad * det, -1), -1)
    singular = rule_values(det) == 0
    if not np.any(singular):
        return _linalg_solve(_mH(A), g * _like(_eye_like(a), g), True)
    if isinstance(A, Tensor):
        cof = _cofactor_singular(A)
        if np.all(singular):
            return unsqueeze(unsqueeze(grad, -1), -1) * cof
        safe = where(np.asarray(singular)[..., None, None], Tensor(_eye_like(a)), A)
        return where(np.asarray(singular)[..., None, None], unsqueeze(unsqueeze(grad, -1), -1) * cof,
                     _linalg_solve(_mH(safe), g * Tensor(_eye_like(a)), True))
    inv = np.linalg.pinv(a)  # only read where the matrix is invertible
    return np.where(singular[..., None, None], np.zeros_like(a), np.swapaxes(inv, -1, -2) * rule_values(g))


@_linalg_det.defvjp
def _(grad, A, result):
    return _det_backward(grad, A, result)


@_linalg_det.defjvp
def _(A_t, A, result):
    # derivatives.yaml linalg_det: the trace of the cofactor matrix times the tangent (linalg_det_jvp)
    if A.data.shape[-1] == 0:
        return None
    return sum(_det_backward(Tensor(np.ones(A.data.shape[:-2], dtype=A.data.dtype)), A, result) * A_t, (-2, -1))


@composite("linalg.det", grad_fn="LinalgDetBackward0", note=_linalg_det.note)
def linalg_det(A):
    """The determinant of each matrix of ``A`` (..., n, n) → (...), float32 or float64. Matches
    torch.linalg.det (grad_fn LinalgDetBackward0: ``det(A) A^{-T}``; for a singular matrix 0 in an ordinary
    backward, the cofactor matrix through the SVD with ``create_graph=True``, as PyTorch's).

    Raises:
        RuntimeError: fewer than 2 dimensions, non-square matrices, integer tensors (PyTorch's messages).
    """
    return _linalg_det(to_tensor(A))


@composite("det", grad_fn="LinalgDetBackward0", note=_linalg_det.note, method=True)
def det(input):
    """torch.det: the same as torch.linalg.det (grad_fn LinalgDetBackward0)."""
    return _linalg_det(to_tensor(input))


# ================================================================================================ slogdet
@op("_linalg_slogdet", grad_fn="LinalgSlogdetBackward0", promote=None, multi_output=True,
    note="d/dA logabsdet = A^{-T}; the sign has no gradient (real)")
def _linalg_slogdet(A):
    """``(sign, logabsdet)`` of each matrix of ``A``. torch.linalg.slogdet."""
    _check_matrix("linalg.slogdet", A)
    s, l = np.linalg.slogdet(A)
    return np.asarray(s, dtype=A.dtype), np.asarray(l, dtype=A.dtype)


@_linalg_slogdet.defvjp
def _(grads, A):
    # FunctionsManual.cpp slogdet_backward (real): solve(A^H, diag_embed(grad_logabsdet))
    a = rule_values(A)
    if a.shape[-1] == 0:
        return None
    g = grads[1]
    if _undefined(g):  # only the sign was used: PyTorch returns an undefined gradient (the leaf's .grad stays None)
        return None
    return _linalg_solve(_mH(A), unsqueeze(unsqueeze(g, -1), -1) * _like(_eye_like(a), g), True)


@_linalg_slogdet.defjvp
def _(A_t, A):
    # derivatives.yaml linalg_slogdet: logabsdet_t = trace(solve(A, A_t)), sign_t = 0 (real)
    tr = sum(_diagonal(_linalg_solve(A, A_t, True), 0, -2, -1), -1)
    return tr * 0, tr


def _slogdet(A, name, kind):
    s, l = _linalg_slogdet(to_tensor(A))
    return kind(s, l)


@composite("linalg.slogdet", grad_fn="LinalgSlogdetBackward0", note=_linalg_slogdet.note)
def linalg_slogdet(A):
    """``(sign, logabsdet)`` of each matrix of ``A`` (a named tuple torch.return_types.linalg_slogdet): the sign
    (-1, 0 or 1) and the log of the absolute value of the determinant (-inf for a singular matrix). Matches
    torch.linalg.slogdet (grad_fn LinalgSlogdetBackward0 on both: ``A^{-T}`` times the logabsdet's gradient).

    Raises:
        RuntimeError: fewer than 2 dimensions, non-square matrices, integer tensors (PyTorch's messages).
    """
    return _slogdet(A, "linalg.slogdet", return_types_linalg_slogdet)


@composite("slogdet", grad_fn="LinalgSlogdetBackward0", note=_linalg_slogdet.note, method=True)
def slogdet(input):
    """torch.slogdet: torch.linalg.slogdet's values as the named tuple torch.return_types.slogdet."""
    return _slogdet(input, "linalg.slogdet", return_types_slogdet)


@composite("logdet", grad_fn="WhereBackward0", note="d/dA = A^{-T} where det(A) > 0; nan for det(A) < 0",
           method=True)
def logdet(input):
    """The log of the determinant of each matrix: nan where it is negative, -inf where it is 0. Matches
    torch.logdet, which PyTorch computes as ``where(sign == -1, nan, logabsdet)`` of slogdet (grad_fn
    WhereBackward0)."""
    s, l = _linalg_slogdet(to_tensor(input))
    return where(s == -1, float("nan"), l)


# ================================================================================================ inv
@op("_linalg_inv", grad_fn="LinalgInvExBackward0", promote=None, note="d/dA = -A^{-T} grad A^{-T}")
def _linalg_inv(A):
    """The inverse of each matrix of ``A``. torch.linalg.inv."""
    _check_matrix("linalg.inv", A)
    try:
        return np.linalg.inv(A).astype(A.dtype, copy=False)
    except np.linalg.LinAlgError:
        raise _singular_error("linalg.inv", A) from None


@_linalg_inv.defvjp
def _(grad, result):
    # derivatives.yaml linalg_inv_ex: -inverse^H @ grad @ inverse^H
    r = _mH(result)
    return -matmul(r, matmul(grad, r))


@_linalg_inv.defjvp
def _(A_t, result):
    # derivatives.yaml linalg_inv_ex: -inverse @ A_t @ inverse
    return -matmul(matmul(result, A_t), result)


@composite("linalg.inv", grad_fn="LinalgInvExBackward0", note=_linalg_inv.note)
def linalg_inv(A):
    """The inverse of each matrix of ``A`` (..., n, n). Matches torch.linalg.inv (grad_fn LinalgInvExBackward0:
    ``-A^{-T} grad A^{-T}``).

    Raises:
        torch._C._LinAlgError (a RuntimeError): for a singular matrix: "linalg.inv: The diagonal element 2 is
            zero, the inversion could not be completed because the input matrix is singular." (with "(Batch
            element i): " in a batch), the index being LAPACK's first zero pivot of the LU decomposition.
        RuntimeError: fewer than 2 dimensions, non-square matrices, integer tensors (PyTorch's messages).
    """
    return _linalg_inv(to_tensor(A))


@composite("inverse", grad_fn="LinalgInvExBackward0", note=_linalg_inv.note, method=True)
def inverse(input):
    """torch.inverse: the same as torch.linalg.inv (grad_fn LinalgInvExBackward0)."""
    return _linalg_inv(to_tensor(input))


# ================================================================================================ solve
def _is_vector_rhs(a_shape, b_shape) -> bool:
    # PyTorch's linalg_solve_is_vector_rhs: B is a (batch of) vector(s) when it has one dimension less than A
    # and its batch shape equals A's
    return len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1 and tuple(b_shape[:-1]) == tuple(a_shape[:-2]))


@op("_linalg_solve", grad_fn="LinalgSolveExBackward0", inputs=2, promote=None,
    note="d/dB = solve(A^T, grad), d/dA = -d/dB X^T")
def _linalg_solve(A, B, left=True):
    """``X`` with ``A X = B`` (``X A = B`` when not ``left``), batched and broadcast. torch.linalg.solve."""
    _check_matrix("linalg.solve", A)
    if B.dtype != A.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{dtypes.scalar_type_name(A.dtype)} and B of type {dtypes.scalar_type_name(B.dtype)} "
                           "instead")
    vector = _is_vector_rhs(A.shape, B.shape)
    b = B[..., None] if vector else B
    if not left:
        A, b = np.swapaxes(A, -1, -2), np.swapaxes(b, -1, -2)
    n = A.shape[-1]
    if b.ndim < 1 or b.shape[-2] != n:
        shp = (f"{A.shape[-2]}x{A.shape[-1]} and {b.shape[-2]}x{b.shape[-1]}" if left else
               f"{b.shape[-1]}x{b.shape[-2]} and {A.shape[-1]}x{A.shape[-2]}")
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({shp})")
    batch = np.broadcast_shapes(A.shape[:-2], b.shape[:-2])
    try:
        x = np.linalg.solve(np.broadcast_to(A, batch + A.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:]))
    except np.linalg.LinAlgError:
        raise _LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.") from None
    if not left:
        x = np.swapaxes(x, -1, -2)
    x = x.astype(A.dtype, copy=False)
    return x[..., 0] if vector else x


@_linalg_solve.defvjp
def _(grad, A, B, result, left, needs_input_grad):
    # FunctionsManual.cpp linalg_solve_backward: gB = solve(A^H, grad), gA = -gB X^H (left); for XA = B,
    # gB = solve(A^H, grad, left=False), gA = -X^H gB
    vector = _is_vector_rhs(tuple(rule_values(A).shape), tuple(rule_values(B).shape))
    gB = _linalg_solve(_mH(A), grad, left)
    if not needs_input_grad[0]:
        return None, gB
    if vector:
        gA = -(unsqueeze(gB, -1) * unsqueeze(result, -2))
    elif left:
        gA = -matmul(gB, _mH(result))
    else:
        gA = -matmul(_mH(result), gB)
    return gA, gB


@_linalg_solve.defjvp
def _(A_t, B_t, A, result, left):
    # derivatives.yaml linalg_solve_ex: solve(A, B_t - A_t X) (left), solve(A, B_t - X A_t, left=False)
    vector = _is_vector_rhs(tuple(A.shape), tuple(result.shape) if left else ())
    if vector:
        rhs = B_t - sum(A_t * unsqueeze(result, -2), -1)
    elif left:
        rhs = B_t - matmul(A_t, result)
    else:
        rhs = B_t - matmul(result, A_t)
    return _linalg_solve(A, rhs, left)


@composite("linalg.solve", grad_fn="LinalgSolveExBackward0", note=_linalg_solve.note)
def linalg_solve(A, B, *, left=True):
    """The solution ``X`` of ``A X = B`` (``X A = B`` with ``left=False``): ``A`` (..., n, n); ``B`` (..., n, k)
    or a (batch of) vector(s) (..., n); batch dimensions broadcast. Matches torch.linalg.solve (grad_fn
    LinalgSolveExBackward0: ``gB = solve(A^T, grad)``, ``gA = -gB X^T``).

    Raises:
        torch._C._LinAlgError: for a singular matrix ("torch.linalg.solve: The solver failed because the input
            matrix is singular.").
        RuntimeError: incompatible shapes, dtypes, fewer than 2 dimensions (PyTorch's messages).
    """
    A, B = to_tensor(A), to_tensor(B)
    return _linalg_solve(A, B, bool(left))


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
    note="d/dA = L^{-T} Phi(L^T grad) L^{-1} symmetrized, Phi = lower triangle with half the diagonal")
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
    dA = tril(A_t) + _mH(tril(A_t, -1))  # only the lower triangle is read
    X = _linalg_solve(_mH(L), _linalg_solve(L, dA, True), False)
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
    note="d/dA = [gQ + Q copyltu(M)] R^{-T}, M = R gR^T - gQ^T Q (LinalgQrBackward0)")
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
    note="d/dA = V (diag(gL) + skew(V^T gV) / (L_j - L_i)) V^T (LinalgEighBackward0)")
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


def _hermitian_tangent(A_t, UPLO):
    # the tangent as eigh reads it: one triangle mirrored
    if UPLO.upper() == "L":
        return tril(A_t) + _mH(tril(A_t, -1))
    return triu(A_t) + _mH(triu(A_t, 1))


@_linalg_eigh.defjvp
def _(A_t, A, result, UPLO):
    # FunctionsManual.cpp linalg_eig_jvp (hermitian): dP = V^H dA V, dL = diag(dP), dV = V (dP / E), E's diagonal
    # zeroed
    L, V = result
    dP = matmul(_mH(V), matmul(_hermitian_tangent(A_t, UPLO), V))
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
    note="d/dA = U [(skew(U^T gU) S + S skew(V^T gV)) / (S_j^2 - S_i^2) + diag(gS)] V^T + the off-range terms")
def _linalg_svd(A, full_matrices=True):
    """``(U, S, Vh)`` of each matrix of ``A``. torch.linalg.svd."""
    _check_matrix("linalg.svd", A, square=False)
    u, s, vh = np.linalg.svd(A, full_matrices=bool(full_matrices))
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
    signs are LAPACK's (gesdd). Matches torch.linalg.svd (grad_fn LinalgSvdBackward0, FunctionsManual.cpp
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
    return np.linalg.svd(A, compute_uv=False).astype(A.dtype, copy=False)


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


# ================================================================================================ pinv
@op("_linalg_pinv", grad_fn="LinalgPinvBackward0", promote=None,
    note="d/dA = -P^T g P^T + (I - A P) g^T P P^T + P^T P g^T (I - P A), P = pinv(A)")
def _linalg_pinv(A, rtol=None, hermitian=False):
    """The pseudo-inverse through the SVD, singular values below ``rtol * max(S)`` dropped. torch.linalg.pinv."""
    _check_matrix("linalg.pinv", A, square=False)
    m, n = A.shape[-2:]
    if rtol is None:
        rtol = np.finfo(A.dtype).eps * _py.max(m, n)
    if m == 0 or n == 0:
        return np.zeros(A.shape[:-2] + (n, m), dtype=A.dtype)
    u, s, vh = np.linalg.svd(A, full_matrices=False)
    cutoff = rtol * np.max(s, axis=-1, keepdims=True)
    sinv = np.where(s > cutoff, 1.0 / np.where(s > cutoff, s, 1.0), 0.0).astype(A.dtype)
    return (np.swapaxes(vh, -1, -2) * sinv[..., None, :]) @ np.swapaxes(u, -1, -2)


@_linalg_pinv.defvjp
def _(grad, A, result):
    # pinv_backward (FunctionsManual.cpp), as the adjoint of d pinv = -P dA P + P P^T dA^T (I - A P)
    # + (I - P A) dA^T P^T P, P = pinv(A)
    P = result
    Pt = _mH(P)
    gt = _mH(grad)
    out = -matmul(Pt, matmul(grad, Pt))
    out = out + matmul(gt - matmul(A, matmul(P, gt)), matmul(P, Pt))
    return out + matmul(matmul(Pt, P), gt - matmul(matmul(gt, P), A))


@_linalg_pinv.defjvp
def _(A_t, A, result):
    # pinv_jvp (FunctionsManual.cpp)
    P = result
    Pt = _mH(P)
    dAt = _mH(A_t)
    out = -matmul(P, matmul(A_t, P))
    out = out + matmul(matmul(P, Pt), dAt - matmul(dAt, matmul(A, P)))
    return out + matmul(dAt - matmul(P, matmul(A, dAt)), matmul(Pt, P))


@composite("linalg.pinv", grad_fn="LinalgPinvBackward0", note=_linalg_pinv.note)
def linalg_pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse of each matrix of ``A`` (..., m, n) → (..., n, m), through the SVD:
    singular values at most ``rtol * max(S)`` (default ``max(m, n) * eps``) treated as 0 (``hermitian=True``
    is accepted and changes nothing: the SVD gives the same pseudo-inverse of a symmetric matrix). Matches
    torch.linalg.pinv (grad_fn LinalgPinvBackward0, FunctionsManual.cpp pinv_backward).

    Raises:
        RuntimeError: fewer than 2 dimensions, integer tensors.
        NotImplementedError: for ``atol`` (gradcli has only ``rtol``).
    """
    if atol is not None:
        raise NotImplementedError("linalg.pinv with atol= is not supported by gradcli (use rtol=)")
    return _linalg_pinv(to_tensor(A), None if rtol is None else float(rtol), bool(hermitian))


@composite("pinverse", grad_fn="LinalgPinvBackward0", note=_linalg_pinv.note, method=True)
def pinverse(input, rcond=1e-15):
    """torch.pinverse: torch.linalg.pinv with ``rtol=rcond``."""
    return _linalg_pinv(to_tensor(input), float(rcond), False)


# ================================================================================================ norms
def _norm_dtype(A, dtype):
    return A.to(dtype) if dtype is not None else A


@composite("linalg.vector_norm", grad_fn="LinalgVectorNormBackward0",
           note="d/dx = sign(x) |x|^(p-1) / norm^(p-1); 0 where the norm is 0")
def linalg_vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The vector ``ord``-norm of ``x`` over ``dim`` (an int, a tuple, or all dimensions). Matches
    torch.linalg.vector_norm (grad_fn LinalgVectorNormBackward0).

    Raises:
        RuntimeError: for integer tensors (PyTorch's message).
    """
    x = _norm_dtype(to_tensor(x), dtype)
    _check_float("linalg.vector_norm", x.data)
    if isinstance(dim, list):
        dim = tuple(dim)
    return _vector_norm(x, float(ord), dim, bool(keepdim))


def _matrix_dims(A, dim):
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    d0, d1 = normalize_dim(dim[0], A.ndim), normalize_dim(dim[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


@composite("linalg.matrix_norm", grad_fn="varies",
           note="fro: a vector norm; 1/inf: amax of the absolute row/column sums; 2/nuc: through the SVD")
def linalg_matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The matrix norm of each matrix of ``A`` in the dims ``dim``: ``ord`` "fro" (LinalgVectorNormBackward0),
    "nuc" (the sum of the singular values, SumBackward1), 2/-2 (the largest/smallest singular value,
    AmaxBackward0/AminBackward0), 1/-1 (the max/min absolute column sum), inf/-inf (row sum). Matches
    torch.linalg.matrix_norm, composed as PyTorch composes it.

    Raises:
        RuntimeError: fewer than 2 dimensions, an unsupported order, integer tensors (PyTorch's messages).
    """
    A = _norm_dtype(to_tensor(A), dtype)
    if A.data.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    _check_float("linalg.matrix_norm", A.data)
    d0, d1 = _matrix_dims(A.data, tuple(dim))
    if ord in ("fro", "nuc"):
        if ord == "fro":
            return _vector_norm(A, 2.0, (d0, d1), bool(keepdim))
        s = _linalg_svdvals(movedim(A, (d0, d1), (-2, -1)))
        r = sum(s, -1)
        return _keep_matrix_dims(r, d0, d1, keepdim)
    if isinstance(ord, str) or float(ord) not in (1.0, -1.0, 2.0, -2.0, float("inf"), float("-inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    ord = float(ord)
    if _py.abs(ord) == 2.0:
        s = _linalg_svdvals(movedim(A, (d0, d1), (-2, -1)))
        r = amax(s, -1) if ord > 0 else amin(s, -1)
        return _keep_matrix_dims(r, d0, d1, keepdim)
    # PyTorch: a vector 1-norm along one dim, then amax/amin along the other (1: columns, inf: rows)
    if _py.abs(ord) == float("inf"):
        d0, d1 = d1, d0
    v = _vector_norm(A, 1.0, (d0,), bool(keepdim))
    if not keepdim and d0 < d1:
        d1 -= 1
    return amax(v, d1, bool(keepdim)) if ord > 0 else amin(v, d1, bool(keepdim))


def _keep_matrix_dims(r, d0, d1, keepdim):
    # PyTorch: the reduced result unsqueezed twice, then the backshift permutation undone (PermuteBackward0)
    if not keepdim:
        return r
    nd = r.data.ndim + 2
    perm = [i for i in range(nd) if i not in (d0, d1)] + [d0, d1]
    reverse = [perm.index(i) for i in range(nd)]
    return unsqueeze(unsqueeze(r, -1), -1).permute(*reverse)


@composite("linalg.norm", grad_fn="varies", note="a vector norm or a matrix norm, as dim and ord choose")
def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector or a matrix norm of ``A``, as torch.linalg.norm chooses: without ``ord`` and ``dim`` the
    2-norm of all elements; a 1-D ``dim`` (or a 1-D input): :func:`linalg_vector_norm`; a 2-D ``dim`` (or a 2-D
    input with ``ord``): :func:`linalg_matrix_norm`.

    Raises:
        RuntimeError: ``ord`` without ``dim`` on an input that is not 1-D or 2-D (PyTorch's message); those of
            the vector and matrix norms.
    """
    A = to_tensor(A)
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        dim = tuple(dim)
        if len(dim) == 1:
            return linalg_vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
        return linalg_matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if ord is None:
        return linalg_vector_norm(A, 2, None, keepdim, dtype=dtype)
    nd = A.data.ndim
    if nd not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{nd}D.")
    if nd == 1:
        return linalg_vector_norm(A, ord, None, keepdim, dtype=dtype)
    return linalg_matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)


# ================================================================================================ cross
@op("_linalg_cross", grad_fn="LinalgCrossBackward0", inputs=2, promote=None,
    note="d/dinput = cross(other, grad), d/dother = cross(grad, input)")
def _linalg_cross(input, other, dim=-1):
    """The cross product of 3-vectors along ``dim``, broadcast. torch.linalg.cross."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.dtype != other.dtype:
        raise RuntimeError(f"expected scalar type {dtypes.scalar_type_name(input.dtype)} but found "
                           f"{dtypes.scalar_type_name(other.dtype)}")
    d = normalize_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    shape = np.broadcast_shapes(input.shape, other.shape)
    return np.cross(np.broadcast_to(input, shape), np.broadcast_to(other, shape), axis=d).astype(input.dtype,
                                                                                                 copy=False)


@_linalg_cross.defvjp
def _(grad, input, other, dim, needs_input_grad):
    # derivatives.yaml linalg_cross
    return (_linalg_cross(other, grad, dim) if needs_input_grad[0] else None,
            _linalg_cross(grad, input, dim) if needs_input_grad[1] else None)


@_linalg_cross.defjvp
def _(input_t, other_t, input, other, dim):
    return _linalg_cross(input_t, other, dim) + _linalg_cross(input, other_t, dim)


@composite("linalg.cross", grad_fn="LinalgCrossBackward0", note=_linalg_cross.note)
def linalg_cross(input, other, *, dim=-1):
    """The cross product of the 3-vectors of ``input`` and ``other`` along ``dim`` (size 3), batch dims
    broadcast. Matches torch.linalg.cross (grad_fn LinalgCrossBackward0).

    Raises:
        RuntimeError: a ``dim`` of length other than 3, different numbers of dimensions (PyTorch's messages).
    """
    return _linalg_cross(to_tensor(input), to_tensor(other), dim)


@composite("cross", grad_fn="LinalgCrossBackward0", note=_linalg_cross.note, method=True)
def cross(input, other, dim=None):
    """torch.cross: torch.linalg.cross along ``dim``; without ``dim``, the first dimension of size 3 (with
    PyTorch's deprecation warning)."""
    a, b = to_tensor(input), to_tensor(other)
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        shape = np.broadcast_shapes(a.data.shape, b.data.shape)
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return _linalg_cross(a, b, dim)


# ================================================================================================ matrix_power
def _matrix_power(A, n, name):
    A = to_tensor(A)
    if A.data.ndim < 2 or A.data.shape[-1] != A.data.shape[-2]:  # (integer matrices are fine, as in PyTorch)
        _check_matrix(name, A.data)
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:  # PyTorch: A.clone().copy_(the identity) (CopyBackwards)
        eye = np.broadcast_to(np.eye(A.data.shape[-1], dtype=A.data.dtype), A.data.shape).copy()
        return A.clone().copy_(Tensor(eye))
    if n < 0:
        A = _linalg_inv(A)
        n = -n
        if n == 1:
            return A
    if n == 1:
        return A.clone()
    if n == 2:
        return matmul(A, A)
    if n == 3:
        return matmul(matmul(A, A), A)
    # PyTorch's binary decomposition (aten/src/ATen/native/LinearAlgebra.cpp linalg_matrix_power_impl)
    z = result = None
    while n > 0:
        bit = n % 2
        n //= 2
        z = A if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


@composite("linalg.matrix_power", grad_fn="varies", note="products of A (or of its inverse for n < 0)")
def linalg_matrix_power(A, n):
    """``A`` to the integer power ``n`` (..., m, m): n = 0 the identity, n < 0 a power of the inverse; computed
    by PyTorch's binary decomposition with matmul (MmBackward0 for a matrix). Matches torch.linalg.matrix_power.

    Raises:
        RuntimeError: non-square matrices (PyTorch's message); torch._C._LinAlgError for a singular matrix and
            n < 0.
    """
    return _matrix_power(A, n, "linalg.matrix_power")


@composite("matrix_power", grad_fn="varies", note="products of A (or of its inverse for n < 0)", method=True)
def matrix_power(input, n):
    """torch.matrix_power: the same as torch.linalg.matrix_power."""
    return _matrix_power(input, n, "linalg.matrix_power")


# ================================================================================================ matrix_exp
def _expm(a: np.ndarray) -> np.ndarray:
    """The matrix exponential of each matrix of ``a``: scaling and squaring with a degree-18 Taylor polynomial
    (evaluated by Horner's rule), the scaling chosen per batch from the 1-norm so that ``||A / 2^s|| <= 0.5``
    (truncation error below float64's rounding)."""
    n = a.shape[-1]
    if n == 0:
        return a.copy()
    work = a.astype(np.float64)
    norm = np.max(np.sum(np.abs(work), axis=-2), axis=-1)
    with np.errstate(divide="ignore"):
        s = np.maximum(0, np.ceil(np.log2(np.maximum(norm, 1e-300) / 0.5))).astype(np.int64)
    s = np.where(np.isfinite(norm), s, 0)
    scaled = work / (2.0 ** s)[..., None, None]
    eye = np.eye(n)
    out = np.broadcast_to(eye, scaled.shape).copy()
    for k in range(18, 0, -1):
        out = eye + (scaled @ out) / k
    for i in range(int(np.max(s)) if s.size else 0):
        sq = out @ out
        out = np.where((s > i)[..., None, None], sq, out)
    return out.astype(a.dtype)


def _matrix_exp_differential(A, E, adjoint):
    """The Fréchet derivative of exp at ``A`` in the direction ``E`` (``A^T`` for the adjoint): the upper-right
    block of exp([[A, E], [0, A]]) (FunctionsManual.cpp linalg_matrix_exp_differential)."""
    M = _mH(A) if adjoint else A
    n = rule_values(A).shape[-1]
    zero = np.zeros(rule_values(A).shape, dtype=rule_values(A).dtype)
    big = _linalg_matrix_exp(_cat([_cat([M, E], -1), _cat([zero, M], -1)], -2))
    return _narrow(_narrow(big, -2, 0, n), -1, n, n)


@op("_linalg_matrix_exp", grad_fn="LinalgMatrixExpBackward0", promote=None,
    note="d/dA = the upper-right block of exp([[A^T, grad], [0, A^T]])")
def _linalg_matrix_exp(A):
    """exp(A) of each matrix of ``A``. torch.linalg.matrix_exp."""
    _check_matrix("linalg.matrix_exp", A)
    return _expm(A)


@_linalg_matrix_exp.defvjp
def _(grad, A):
    return _matrix_exp_differential(A, grad, True)


@_linalg_matrix_exp.defjvp
def _(A_t, A):
    return _matrix_exp_differential(A, A_t, False)


@composite("linalg.matrix_exp", grad_fn="LinalgMatrixExpBackward0", note=_linalg_matrix_exp.note)
def linalg_matrix_exp(A):
    """The matrix exponential of each square matrix of ``A``. Matches torch.linalg.matrix_exp (grad_fn
    LinalgMatrixExpBackward0; the derivative is the exponential of a block matrix, as PyTorch's).

    Raises:
        RuntimeError: fewer than 2 dimensions, non-square matrices, integer tensors.
    """
    return _linalg_matrix_exp(to_tensor(A))


@composite("matrix_exp", grad_fn="LinalgMatrixExpBackward0", note=_linalg_matrix_exp.note, method=True)
def matrix_exp(input):
    """torch.matrix_exp: the same as torch.linalg.matrix_exp."""
    return _linalg_matrix_exp(to_tensor(input))


# ================================================================================================ multi_dot
def _multi_dot_order(shapes: list) -> list:
    """PyTorch's (and numpy's) matrix-chain order: ``s[i][j]`` the split of the cheapest product of i..j."""
    n = len(shapes)
    p = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


@composite("linalg.multi_dot", grad_fn="varies", note="a chain of mm in the cheapest order")
def linalg_multi_dot(tensors):
    """The product of a list of matrices (the first may be a 1-D row vector, the last a 1-D column vector),
    multiplied in the cheapest order (mm; the result reshaped as PyTorch's, ViewBackward0). Matches
    torch.linalg.multi_dot.

    Raises:
        RuntimeError: fewer than 2 tensors, wrong dimensions or sizes (PyTorch's messages).
    """
    ts = [to_tensor(t) for t in tensors]
    n = len(ts)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first_1d, last_1d = ts[0].data.ndim == 1, ts[-1].data.ndim == 1
    for i, t in enumerate(ts):
        nd = t.data.ndim
        if (i == 0 and nd not in (1, 2)):
            raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {nd}D")
        if (i == n - 1 and nd not in (1, 2)):
            raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {nd}D")
        if 0 < i < n - 1 and nd != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {nd}D")
    if first_1d:
        ts[0] = unsqueeze(ts[0], 0)
    if last_1d:
        ts[-1] = unsqueeze(ts[-1], -1)
    for i in range(1, n):
        if ts[i].data.dtype != ts[0].data.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{dtypes.c_type_name(ts[0].data.dtype)} and tensor {i} "
                               f"{dtypes.c_type_name(ts[i].data.dtype)}")
        if ts[i - 1].data.shape[1] != ts[i].data.shape[0]:
            a, b = ts[i - 1].data.shape, ts[i].data.shape
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes [{a[0]}, {a[1]}] and "
                               f"[{b[0]}, {b[1]}] cannot be multiplied")
    if n == 2:
        out = mm(ts[0], ts[1])
    else:
        split = _multi_dot_order([t.data.shape for t in ts])

        def chain(i, j):
            if i == j:
                return ts[i]
            k = split[i][j]
            return mm(chain(i, k), chain(k + 1, j))

        out = chain(0, n - 1)
    # PyTorch views the product to the output shape (ViewBackward0), 1-D ends dropped
    shape = tuple(([] if first_1d else [out.data.shape[0]]) + ([] if last_1d else [out.data.shape[1]]))
    return out.view(shape)


# ================================================================================================ cdist
@op("_cdist", grad_fn="CdistBackward0", inputs=2, promote=None,
    note="d/dx1 = sum_j grad_ij d(||x1_i - x2_j||_p); d/dx2 the negative, summed over i")
def _cdist(x1, x2, p=2.0):
    """The p-norm distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M) → (..., P, R).
    torch.cdist."""
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    a = np.abs(diff)
    if p == 0:
        out = np.sum(a != 0, axis=-1).astype(x1.dtype)
    elif p == 1:
        out = np.sum(a, axis=-1)
    elif p == 2:
        out = np.sqrt(np.sum(a * a, axis=-1))
    elif p == float("inf"):
        out = np.max(a, axis=-1) if a.shape[-1] else np.zeros(a.shape[:-1], dtype=x1.dtype)
    else:
        out = np.power(np.sum(np.power(a, p), axis=-1), 1.0 / p)
    return np.asarray(out, dtype=x1.dtype)


def _cdist_grad_diff(diff, dist, p):
    """d dist_ij / d x1_i (..., P, R, M) given ``diff = x1_i - x2_j``: FunctionsManual's _cdist_backward cases."""
    d = unsqueeze(dist, -1)
    if p == 1:
        return sign(diff)
    if p == 2:
        return where(d == 0, 0.0, diff / where(d == 0, 1.0, d))
    if p == float("inf"):
        return sign(diff) * (abs(diff) == d)
    if p < 2:
        return where(d == 0, 0.0, sign(diff) * pow(abs(diff), p - 1) / pow(where(d == 0, 1.0, d), p - 1))
    return where(d == 0, 0.0, diff * pow(abs(diff), p - 2) / pow(where(d == 0, 1.0, d), p - 1))


@_cdist.defvjp
def _(grad, x1, x2, result, p, needs_input_grad):
    if p == 0:
        return None, None
    diff = unsqueeze(x1, -2) - unsqueeze(x2, -3)
    g = unsqueeze(grad, -1) * _cdist_grad_diff(diff, result, p)
    return (sum(g, -2) if needs_input_grad[0] else None, -sum(g, -3) if needs_input_grad[1] else None)


@_cdist.defjvp
def _(x1_t, x2_t, x1, x2, result, p):
    if p == 0:
        return None
    diff = unsqueeze(x1, -2) - unsqueeze(x2, -3)
    dt = unsqueeze(x1_t, -2) - unsqueeze(x2_t, -3)
    return sum(_cdist_grad_diff(diff, result, p) * dt, -1)


@composite("cdist", grad_fn="CdistBackward0", note=_cdist.note)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distance between each row of ``x1`` (..., P, M) and each row of ``x2`` (..., R, M), batch
    dims broadcast → (..., P, R). Matches torch.cdist (grad_fn CdistBackward0; the gradient 0 where a distance
    is 0; computed directly, without PyTorch's matmul shortcut for large p = 2 inputs).

    Raises:
        RuntimeError: inputs with fewer than 2 dims, different row lengths, a negative ``p``, integer tensors
            (PyTorch's messages).
    """
    a, b = to_tensor(x1), to_tensor(x2)
    if a.data.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {a.data.ndim}D")
    if b.data.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {b.data.ndim}D")
    if a.data.shape[-1] != b.data.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.data.shape[-1]} X2: "
                           f"{b.data.shape[-1]}")
    if a.data.dtype != b.data.dtype and a.data.dtype.kind == b.data.dtype.kind == "f":
        raise RuntimeError(f"expected scalar type {dtypes.scalar_type_name(a.data.dtype)} but found "
                           f"{dtypes.scalar_type_name(b.data.dtype)}")
    for t in (a, b):
        if t.data.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, X{1 if t is a else 2} got: "
                               f"{dtypes.scalar_type_name(t.data.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    batch = np.broadcast_shapes(a.data.shape[:-2], b.data.shape[:-2])
    if a.data.shape[:-2] != batch:
        a = a.expand(*batch, *a.data.shape[-2:])
    if b.data.shape[:-2] != batch:
        b = b.expand(*batch, *b.data.shape[-2:])
    return _cdist(a, b, float(p))


# ================================================================================ matmul, diagonal, vecdot
@op("vdot", grad_fn="VdotBackward0", inputs=2, promote=None, method=True,
    note="d/dinput = grad * other, d/dother = grad * input (real)")
def vdot(input, other):
    """The inner product of two 1-d tensors of one size and dtype (for real tensors the same as dot). Matches
    torch.vdot (grad_fn VdotBackward0).

    Raises:
        RuntimeError: for non-1-d inputs, different sizes or dtypes (PyTorch's messages, those of dot).
    """
    return dot.forward(input, other)


@vdot.defvjp
def _(grad, input, other, needs_input_grad):
    return (grad * other if needs_input_grad[0] else None, grad * input if needs_input_grad[1] else None)


@vdot.defjvp
def _(input_t, other_t, input, other):
    return dot(input_t, other) + dot(input, other_t)


@composite("linalg.matmul", grad_fn="varies", note="torch.matmul's derivatives")
def linalg_matmul(input, other):
    """torch.linalg.matmul: an alias of torch.matmul (the same graph: MmBackward0, BmmBackward0, ...)."""
    return matmul(input, other)


@composite("linalg.diagonal", grad_fn="DiagonalBackward0", note="the gradient placed on the diagonal of zeros")
def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """torch.linalg.diagonal: torch.diagonal with the last two dimensions as default (a view; grad_fn
    DiagonalBackward0).

    Raises:
        RuntimeError: for equal dims or fewer than 2 dimensions (PyTorch's messages).
    """
    return diagonal(A, offset, dim1, dim2)


@composite("linalg.vecdot", grad_fn="SumBackward1", note="d/dx = y, d/dy = x (summed over dim)")
def linalg_vecdot(x, y, *, dim=-1):
    """The dot product of the vectors of ``x`` and ``y`` along ``dim``, batch dims broadcast: ``sum(x * y,
    dim)``, as PyTorch computes it for real tensors (grad_fn SumBackward1 over MulBackward0). Matches
    torch.linalg.vecdot.

    Raises:
        RuntimeError: for shapes that do not broadcast, or integer and float mixed (PyTorch's messages).
    """
    x, y = to_tensor(x), to_tensor(y)
    if x.data.ndim == 1 and y.data.ndim == 1 and x.data.dtype == y.data.dtype:
        return vdot(x, y)  # PyTorch's vecdot of two vectors: vdot (VdotBackward0)
    if x.data.dtype != y.data.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{dtypes.scalar_type_name(x.data.dtype)} and y of type "
                           f"{dtypes.scalar_type_name(y.data.dtype)} instead")
    return sum(x * y, dim)

"""LU and LDL factorizations and triangular solves: torch.linalg's lu_factor, lu_factor_ex, lu, lu_solve,
solve_triangular, ldl_factor, ldl_factor_ex, inv_ex, solve_ex and cholesky_ex; torch.lu, torch.lu_solve,
torch.lu_unpack, torch.triangular_solve and torch.cholesky.

The factorizations are LAPACK's, through SciPy's wrappers in the input's precision (:mod:`._lapack`), so that LU,
pivots (1-based int32, getrf's), LD and its pivots (sytrf's) and ``info`` are PyTorch's. Values, grad_fn names,
named tuples and error texts follow PyTorch 2.13; the derivatives are those of tools/autograd/derivatives.yaml and
FunctionsManual.cpp (linalg_lu_backward/linalg_lu_jvp, lu_factor_ex_backward, linalg_lu_solve_LU,
linalg_solve_triangular_backward/_forward_AD, triangular_solve_backward, lu_unpack_backward, cholesky_backward),
written with ops of the table so that they can be differentiated again. ldl_factor has no derivative in PyTorch
("derivative for aten::linalg_ldl_factor_ex is not implemented"), nor here.
"""

from __future__ import annotations

import numpy as np

from ...engine import dtypes
from ...engine.lazy import lazy
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, op, rule_values
from ..reduction.reductions import expand
from .decompositions import _linalg_cholesky
from .inverses import (
    _batch_prefix,
    _cat,
    _check_float,
    _check_matrix,
    _is_vector_rhs,
    _linalg_inv,
    _linalg_solve,
    _LinAlgError,
    _mH,
    _named_tuple,
    _narrow,
    _undefined,
)
from .products import matmul
from .structured import tril, triu

_lapack = lazy("gradcli.ops.linalg._lapack")  # SciPy's LAPACK, loaded when a factorization first runs

return_types_linalg_lu_factor = _named_tuple("linalg_lu_factor", ("LU", "pivots"))
return_types_linalg_lu_factor_ex = _named_tuple("linalg_lu_factor_ex", ("LU", "pivots", "info"))
return_types_linalg_lu = _named_tuple("linalg_lu", ("P", "L", "U"))
return_types_lu_unpack = _named_tuple("lu_unpack", ("P", "L", "U"))
return_types_linalg_ldl_factor = _named_tuple("linalg_ldl_factor", ("LD", "pivots"))
return_types_linalg_ldl_factor_ex = _named_tuple("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
return_types_linalg_inv_ex = _named_tuple("linalg_inv_ex", ("inverse", "info"))
return_types_linalg_solve_ex = _named_tuple("linalg_solve_ex", ("result", "info"))
return_types_linalg_cholesky_ex = _named_tuple("linalg_cholesky_ex", ("L", "info"))
return_types_triangular_solve = _named_tuple("triangular_solve", ("solution", "cloned_coefficient"))


def _like(x, ref):
    """A numpy constant as a Tensor when the rule runs on Tensors (create_graph), else itself."""
    return Tensor(np.asarray(x)) if isinstance(ref, Tensor) else np.asarray(x)


def _data(x) -> np.ndarray:
    return x.data if isinstance(x, Tensor) else np.asarray(x)


# ================================================================================================ triangular
def _tri(x, upper: bool, unitriangular: bool):
    """The triangle of ``x`` a triangular solve reads (its diagonal left out when ``unitriangular``)."""
    return triu(x, int(unitriangular)) if upper else tril(x, -int(unitriangular))


def _check_solve_triangular(A: np.ndarray, B: np.ndarray, left: bool) -> None:
    for name, a in (("A", A), ("B", B)):
        if a.ndim < 2:
            raise RuntimeError(f"linalg.solve_triangular: The input tensor {name} must have at least 2 dimensions.")
    _check_float("linalg.solve_triangular", A)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.solve_triangular: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if B.dtype != A.dtype:
        raise RuntimeError("linalg.solve_triangular: Expected A and B to have the same dtype, but found A of type "
                           f"{_dtype_name(A)} and B of type {_dtype_name(B)} instead")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        shp = (f"{n}x{n} and {B.shape[-2]}x{B.shape[-1]}" if left else f"{B.shape[-2]}x{B.shape[-1]} and {n}x{n}")
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({shp})")


def _dtype_name(a: np.ndarray) -> str:
    return dtypes.scalar_type_name(a.dtype)


@op("_linalg_solve_triangular", grad_fn="LinalgSolveTriangularBackward0", inputs=2, promote=None,
    note="d/dB = solve_triangular(A^T, grad), d/dA = -d/dB X^T (its triangle)",
    formula="B: solve_triangular(self^T, grad, upper=!upper); self: -(grad_B @ result^T) on self's triangle "
            "(result^T @ grad_B when not left)")
def _linalg_solve_triangular(input, B, upper, left, unitriangular):
    """``X`` with ``A X = B`` (``X A = B`` when not ``left``) for triangular ``A``. torch.linalg.solve_triangular."""
    _check_solve_triangular(input, B, left)
    return _lapack.trsm(input, B, upper, left, unitriangular)


@_linalg_solve_triangular.defvjp
def _(grad, input, result, upper, left, unitriangular, needs_input_grad):
    # FunctionsManual.cpp linalg_solve_triangular_backward: gB = solve_triangular(A^H, grad, !upper),
    # gA = -gB X^H (left) or -X^H gB, kept on A's triangle (its diagonal dropped when unitriangular)
    gB = _linalg_solve_triangular(_mH(input), grad, not upper, left, unitriangular)
    if not needs_input_grad[0]:
        return None, gB
    gA = -matmul(gB, _mH(result)) if left else -matmul(_mH(result), gB)
    return _tri(gA, upper, unitriangular), gB


@_linalg_solve_triangular.defjvp
def _(input_t, B_t, input, result, upper, left, unitriangular):
    # FunctionsManual.cpp linalg_solve_triangular_forward_AD: solve_triangular(A, dB - dA X) (or dB - X dA)
    dA = _tri(input_t, upper, unitriangular)
    rhs = B_t - (matmul(dA, result) if left else matmul(result, dA))
    return _linalg_solve_triangular(input, rhs, upper, left, unitriangular)


@composite("linalg.solve_triangular", grad_fn="LinalgSolveTriangularBackward0", note=_linalg_solve_triangular.note)
def linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """The solution ``X`` of ``A X = B`` (``X A = B`` with ``left=False``) for triangular ``A`` (..., n, n): its
    upper triangle when ``upper``, else the lower one (the other is not read), a unit diagonal assumed with
    ``unitriangular``; ``B`` (..., n, k) (left) or (..., k, n); batch dimensions broadcast. BLAS trsm, as PyTorch on
    the CPU: a zero on the diagonal gives inf/nan, not an error. Matches torch.linalg.solve_triangular (grad_fn
    LinalgSolveTriangularBackward0).

    Raises:
        RuntimeError: fewer than 2 dimensions, non-square A, other dtypes, incompatible shapes (PyTorch's
            messages).
    """
    return _linalg_solve_triangular(to_tensor(A), to_tensor(B), bool(upper), bool(left), bool(unitriangular))


@op("_triangular_solve", grad_fn="TriangularSolveBackward0", inputs=2, promote=None, multi_output=True,
    note="d/db = triangular_solve(grad, A, transpose=!transpose), d/dA = -d/db X^T on A's triangle + grad of the clone",
    formula="self: triangular_solve(grad_solution, A, upper, !transpose); A: -(grad_self @ solution^T) on A's "
            "triangle + grad_cloned_coefficient")
def _triangular_solve(input, A, upper, transpose, unitriangular):
    """``(X, A.clone())`` with ``op(A) X = b`` (op: transpose or not) for triangular ``A``. torch.triangular_solve."""
    for name, a in (("A", A), ("self", input)):
        if a.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: The input tensor {name} must have at least 2 dimensions.")
    _check_float("torch.triangular_solve", A)
    if A.shape[-1] != A.shape[-2] or input.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"torch.triangular_solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {input.shape[-2]}x{input.shape[-1]})")
    batch = np.broadcast_shapes(A.shape[:-2], input.shape[:-2])
    a = np.swapaxes(A, -1, -2) if transpose else A
    x = _lapack.trsm(a, input, upper != bool(transpose), True, unitriangular)
    return x, np.broadcast_to(A, batch + A.shape[-2:]).copy()


@_triangular_solve.defvjp
def _(grads, input, A, upper, transpose, unitriangular, needs_input_grad):
    # FunctionsManual.cpp triangular_solve_backward
    g_x, g_m = (None if _undefined(g) else g for g in grads)
    gb = gA = None
    if g_x is not None:
        x = _triangular_solve(input, A, upper, transpose, unitriangular)[0]
        gb = _triangular_solve(g_x, A, upper, not transpose, unitriangular)[0]
        if needs_input_grad[1]:
            gA = -matmul(x, _mH(gb)) if transpose else -matmul(gb, _mH(x))
            gA = _tri(gA, upper, unitriangular)
    if g_m is not None and needs_input_grad[1]:
        gA = g_m if gA is None else gA + g_m
    if gA is None:
        gA = np.zeros_like(rule_values(A))
    if gb is None:
        gb = np.zeros_like(rule_values(input))
    return gb, gA


@_triangular_solve.defjvp
def _(input_t, A_t, input, A, result, upper, transpose, unitriangular):
    # derivatives.yaml triangular_solve: solution: op(A)^{-1} (b_t - op(dA) X), dA the part of A_t the forward
    # reads (its triangle); clone: A_t, broadcast to the batch. PyTorch's rule (generic_solve_jvp) takes the whole
    # A_t, untransposed also when transpose=True: the same tangent for a triangular A_t without transpose, and one
    # that central differences refute otherwise (tests/ops/test_linalg_factorizations.py)
    x, clone = result
    dA = _tri(A_t, upper, unitriangular)
    dA = _mH(dA) if transpose else dA
    dX = _triangular_solve(input_t - matmul(dA, x), A, upper, transpose, unitriangular)[0]
    return dX, expand(A_t, tuple(clone.shape))


@composite("triangular_solve", grad_fn="TriangularSolveBackward0", note=_triangular_solve.note, method=True)
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve (deprecated in PyTorch for torch.linalg.solve_triangular, its arguments reversed):
    the solution ``X`` of ``A X = b`` (``A^T X = b`` with ``transpose``) for the triangular ``A`` (upper by
    default) and a copy of ``A``, as the named tuple torch.return_types.triangular_solve(solution,
    cloned_coefficient); batch dimensions broadcast. grad_fn TriangularSolveBackward0.

    Raises:
        RuntimeError: fewer than 2 dimensions, non-square A, incompatible shapes.
    """
    x, m = _triangular_solve(to_tensor(input), to_tensor(A), bool(upper), bool(transpose), bool(unitriangular))
    return return_types_triangular_solve(x, m)


# ================================================================================================ LU
def _lu_error(name: str, A: np.ndarray, info: np.ndarray) -> RuntimeError:
    prefix, k = _batch_prefix(A, info)
    return RuntimeError(f"{name}: {prefix}U[{k},{k}] is zero and using it on lu_solve would result in a division by "
                        "zero. If you still want to perform the factorization, consider calling linalg.lu(A, pivot) "
                        "or linalg.lu_factor_ex(A, pivot)")


def _check_lu_input(name: str, A: np.ndarray, pivot: bool) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    _check_float(name, A)
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")


def _permutation(piv: np.ndarray, m: int, dtype) -> np.ndarray:
    """The permutation matrices P (..., m, m) with ``A = P L U`` of LAPACK's 1-based pivots (..., k): rows i and
    piv[i] - 1 swapped in turn."""
    batch = piv.shape[:-1]
    flat = piv.reshape(-1, piv.shape[-1]).astype(np.int64) - 1
    perm = np.tile(np.arange(m), (flat.shape[0], 1))
    rows = np.arange(flat.shape[0])
    for i in range(flat.shape[1]):
        j = flat[:, i]
        a, b = perm[rows, i].copy(), perm[rows, j].copy()
        perm[rows, i], perm[rows, j] = b, a
    P = np.zeros((flat.shape[0], m, m), dtype=dtype)
    P[rows[:, None], perm, np.arange(m)[None, :]] = 1  # (P^T A)[j] = A[perm[j]]
    return P.reshape(batch + (m, m))


def _unpack(LU, k: int):
    """``(L, U)`` of the packed LU (..., m, n): L (..., m, k) unit lower, U (..., k, n) upper."""
    m = rule_values(LU).shape[-2]
    L = tril(_narrow(LU, -1, 0, k), -1) + _like(np.eye(m, k, dtype=rule_values(LU).dtype), LU)
    U = triu(_narrow(LU, -2, 0, k))
    return L, U


@op("_linalg_lu_factor_ex", grad_fn="LinalgLuFactorExBackward0", promote=None,
    note="d/dA = P L^{-T} [tril(L^T gL, -1) + triu(gU U^T)] U^{-T} (square; LinalgLuFactorExBackward0)",
    formula="A: P L^{-T} (tril(L^T grad, -1) + triu(triu(grad) U^T)) U^{-T} (square A; the wide and tall cases "
            "as FunctionsManual.cpp linalg_lu_backward)")
def _linalg_lu_factor_ex(A, pivot=True):
    """``(LU, pivots, info)`` of each matrix of ``A`` (LAPACK getrf). torch.linalg.lu_factor_ex."""
    _check_lu_input("linalg.lu_factor_ex", A, pivot)
    return _lapack.getrf(A)


def _lu_parts(A):
    """``(P, L, U, k)`` of the LU factorization of the rule value ``A``: P a constant, L and U recorded."""
    LU, piv, _ = _linalg_lu_factor_ex(A, True)
    a = rule_values(A)
    k = min(a.shape[-2:])
    L, U = _unpack(LU, k)
    return _like(_permutation(_data(piv), a.shape[-2], a.dtype), A), L, U, k


def _lu_backward(gL, gU, P, L, U, m: int, n: int, k: int):
    # FunctionsManual.cpp linalg_lu_backward (pivot=True); gL/gU None when undefined
    if m == n:
        gA = tril(matmul(_mH(L), gL), -1) if gL is not None else None
        if gU is not None:
            t = triu(matmul(gU, _mH(U)))
            gA = t if gA is None else gA + t
        gA = _linalg_solve_triangular(_mH(U), gA, False, False, False)
        gA = _linalg_solve_triangular(_mH(L), gA, True, True, True)
        return matmul(P, gA)
    if m < n:  # wide: A = P L [U1 | U2]
        U1, U2 = _narrow(U, -1, 0, k), _narrow(U, -1, k, n - k)
        gA = matmul(_mH(L), gL) if gL is not None else None
        if gU is not None:
            t = matmul(triu(gU), _mH(U))
            gA = -t if gA is None else gA - t
        gA = _linalg_solve_triangular(_mH(U1), tril(gA, -1), False, False, False)
        if gU is not None:
            gA = _cat([gA + triu(_narrow(gU, -1, 0, k)), _narrow(gU, -1, k, n - k)], -1)
        gA = _linalg_solve_triangular(_mH(L), gA, True, True, True)
        if gU is None:
            gA = _cat([gA, np.zeros_like(rule_values(U2))], -1)
        return matmul(P, gA)
    L1, L2 = _narrow(L, -2, 0, k), _narrow(L, -2, k, m - k)  # tall: P^T A = [L1; L2] U
    gA = matmul(gU, _mH(U)) if gU is not None else None
    if gL is not None:
        t = matmul(_mH(L), tril(gL, -1))
        gA = -t if gA is None else gA - t
    gA = _linalg_solve_triangular(_mH(L1), triu(gA), True, True, True)
    if gL is not None:
        gA = _cat([gA + tril(_narrow(gL, -2, 0, k), -1), _narrow(gL, -2, k, m - k)], -2)
    gA = _linalg_solve_triangular(_mH(U), gA, False, False, False)
    if gL is None:
        gA = _cat([gA, np.zeros_like(rule_values(L2))], -2)
    return matmul(P, gA)


@_linalg_lu_factor_ex.defvjp
def _(grad, A, pivot):
    # FunctionsManual.cpp lu_factor_ex_backward: the packed gradient split into L's (strictly lower) and U's
    P, L, U, k = _lu_parts(A)
    m, n = rule_values(A).shape[-2:]
    gL = tril(_narrow(grad, -1, 0, k), -1)
    gU = triu(_narrow(grad, -2, 0, k))
    return _lu_backward(gL, gU, P, L, U, m, n, k)


def _lu_jvp(dA, P, L, U, m: int, n: int, k: int):
    # FunctionsManual.cpp linalg_lu_jvp: (dL, dU)
    PdA = matmul(_mH(P), dA)
    if m == n:
        dK = _linalg_solve_triangular(U, _linalg_solve_triangular(L, PdA, False, True, True), True, False, False)
        return matmul(L, tril(dK, -1)), matmul(triu(dK), U)
    if m < n:
        U1, U2 = _narrow(U, -1, 0, k), _narrow(U, -1, k, n - k)
        dK = _linalg_solve_triangular(L, _narrow(PdA, -1, 0, k), False, True, True)
        dK = _linalg_solve_triangular(U1, dK, True, False, False)
        dL = matmul(L, tril(dK, -1))
        dU1 = matmul(triu(dK), U1)
        dU2 = _linalg_solve_triangular(L, _narrow(PdA, -1, k, n - k) - matmul(dL, U2), False, True, True)
        return dL, _cat([dU1, dU2], -1)
    L1, L2 = _narrow(L, -2, 0, k), _narrow(L, -2, k, m - k)
    dK = _linalg_solve_triangular(L1, _narrow(PdA, -2, 0, k), False, True, True)
    dK = _linalg_solve_triangular(U, dK, True, False, False)
    dU = matmul(triu(dK), U)
    dL1 = matmul(L1, tril(dK, -1))
    dL2 = _linalg_solve_triangular(U, _narrow(PdA, -2, k, m - k) - matmul(L2, dU), True, False, False)
    return _cat([dL1, dL2], -2), dU


@_linalg_lu_factor_ex.defjvp
def _(A_t, A):
    P, L, U, k = _lu_parts(A)
    m, n = A.shape[-2:]
    dL, dU = _lu_jvp(A_t, P, L, U, m, n, k)
    # the packed tangent: dL below the diagonal (its first k columns), dU on and above it
    return _pack(dL, dU, m, n, k)


def _pack(L, U, m: int, n: int, k: int):
    """The packed (..., m, n) of the lower (..., m, k) and upper (..., k, n) parts (L's diagonal dropped)."""
    low = tril(L, -1)
    if n > k:
        low = _cat([low, Tensor(np.zeros(low.shape[:-1] + (n - k,), dtype=low.data.dtype))], -1)
    up = triu(U)
    if m > k:
        up = _cat([up, Tensor(np.zeros(up.shape[:-2] + (m - k, n), dtype=up.data.dtype))], -2)
    return low + up


@composite("linalg.lu_factor_ex", grad_fn="LinalgLuFactorExBackward0", note=_linalg_lu_factor_ex.note)
def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False):
    """``(LU, pivots, info)`` (torch.return_types.linalg_lu_factor_ex): the LU factorization with partial
    pivoting of each matrix of ``A`` (..., m, n) as LAPACK getrf leaves it: L (unit diagonal, not stored) and U
    packed in LU, the 1-based int32 row swaps in pivots (..., min(m, n)), info (...) int32 the index of U's first
    zero diagonal element (0: none). Matches torch.linalg.lu_factor_ex (grad_fn LinalgLuFactorExBackward0,
    FunctionsManual.cpp linalg_lu_backward).

    Raises:
        RuntimeError: with ``check_errors`` for a singular matrix ("U[i,i] is zero ..."); ``pivot=False`` (not
            on the CPU, as PyTorch); fewer than 2 dimensions, integer tensors.
    """
    A = to_tensor(A)
    LU, piv, info = _linalg_lu_factor_ex(A, bool(pivot))
    if check_errors and np.any(info.data):
        raise _lu_error("torch.linalg.lu_factor_ex", A.data, info.data)
    return return_types_linalg_lu_factor_ex(LU, piv, info)


@composite("linalg.lu_factor", grad_fn="LinalgLuFactorExBackward0", note=_linalg_lu_factor_ex.note)
def linalg_lu_factor(A, *, pivot=True):
    """``(LU, pivots)`` (torch.return_types.linalg_lu_factor): torch.linalg.lu_factor_ex without ``info``, a
    singular matrix an error. Matches torch.linalg.lu_factor.

    Raises:
        RuntimeError: "torch.linalg.lu_factor: U[i,i] is zero and using it on lu_solve would result in a division
            by zero. ..." for a singular matrix (with "(Batch element b): " in a batch), and see lu_factor_ex.
    """
    A = to_tensor(A)
    _check_lu_input("linalg.lu_factor", A.data, bool(pivot))
    LU, piv, info = _linalg_lu_factor_ex(A, bool(pivot))
    if np.any(info.data):
        raise _lu_error("torch.linalg.lu_factor", A.data, info.data)
    return return_types_linalg_lu_factor(LU, piv)


@composite("lu", grad_fn="LinalgLuFactorExBackward0", note=_linalg_lu_factor_ex.note, method=True)
def lu(A, pivot=True, get_infos=False):
    """torch.lu (deprecated in PyTorch for torch.linalg.lu_factor): the plain tuple ``(LU, pivots)``, or
    ``(LU, pivots, infos)`` with ``get_infos`` (then a singular matrix is no error).

    Raises:
        RuntimeError: for a singular matrix without ``get_infos``; see torch.linalg.lu_factor_ex.
    """
    A = to_tensor(A)
    LU, piv, info = _linalg_lu_factor_ex(A, bool(pivot))
    if get_infos:
        return LU, piv, info
    if np.any(info.data):
        raise _lu_error("torch.linalg.lu_factor_ex", A.data, info.data)
    return LU, piv


@op("_linalg_lu", grad_fn="LinalgLuBackward0", promote=None, multi_output=True,
    note="d/dA = P L^{-T} [tril(L^T gL, -1) + triu(gU U^T)] U^{-T} (square; LinalgLuBackward0)",
    formula="A: P L^{-T} (tril(L^T grad_L, -1) + triu(grad_U U^T)) U^{-T} (square A; the wide and tall cases as "
            "FunctionsManual.cpp linalg_lu_backward)")
def _linalg_lu(A, pivot=True):
    """``(L, U)`` of the LU factorization of each matrix of ``A``. torch.linalg.lu."""
    _check_lu_input("linalg.lu", A, pivot)
    LU, _, _ = _lapack.getrf(A)
    return _unpack(LU, min(A.shape[-2:]))


@_linalg_lu.defvjp
def _(grads, A, pivot):
    gL, gU = (None if _undefined(g) else g for g in grads)
    if gL is None and gU is None:  # zero gradients (a node runs only when an output got one): zero
        return np.zeros_like(rule_values(A))
    P, L, U, k = _lu_parts(A)
    m, n = rule_values(A).shape[-2:]
    return _lu_backward(gL, gU, P, L, U, m, n, k)


@_linalg_lu.defjvp
def _(A_t, A):
    P, L, U, k = _lu_parts(A)
    m, n = A.shape[-2:]
    return _lu_jvp(A_t, P, L, U, m, n, k)


@composite("linalg.lu", grad_fn="LinalgLuBackward0", note=_linalg_lu.note)
def linalg_lu(A, *, pivot=True):
    """``(P, L, U)`` with ``A = P L U`` (torch.return_types.linalg_lu): P (..., m, m) a permutation, L (..., m, k)
    unit lower triangular, U (..., k, n) upper triangular, k = min(m, n); LAPACK getrf's pivoting. P has no
    gradient. Matches torch.linalg.lu (grad_fn LinalgLuBackward0, FunctionsManual.cpp linalg_lu_backward).

    Raises:
        RuntimeError: ``pivot=False`` (not on the CPU), fewer than 2 dimensions, integer tensors.
    """
    A = to_tensor(A)
    L, U = _linalg_lu(A, bool(pivot))
    _, piv, _ = _lapack.getrf(A.data)
    return return_types_linalg_lu(Tensor(_permutation(piv, A.data.shape[-2], A.data.dtype)), L, U)


@op("_lu_unpack", grad_fn="LuUnpackBackward0", promote=None, multi_output=True,
    note="d/dLU = tril(gL, -1) + triu(gU), narrowed to LU's shape",
    formula="LU_data: tril(grad_L, -1) + triu(grad_U), each in LU's shape")
def _lu_unpack(LU_data):
    """``(L, U)`` of the packed LU. torch.lu_unpack."""
    return _unpack(LU_data, min(LU_data.shape[-2:]))


@_lu_unpack.defvjp
def _(grads, LU_data):
    # FunctionsManual.cpp lu_unpack_backward
    gL, gU = grads
    m, n = rule_values(LU_data).shape[-2:]
    k = min(m, n)
    return _pack(_t(gL), _t(gU), m, n, k) if isinstance(gL, Tensor) or isinstance(gU, Tensor) else \
        _pack_np(rule_values(gL), rule_values(gU), m, n, k)


def _t(x):
    return x if isinstance(x, Tensor) else Tensor(np.asarray(x))


def _pack_np(gL: np.ndarray, gU: np.ndarray, m: int, n: int, k: int) -> np.ndarray:
    out = np.zeros(gL.shape[:-2] + (m, n), dtype=gL.dtype)
    out[..., :, :k] += np.tril(gL, -1)
    out[..., :k, :] += np.triu(gU)
    return out


@_lu_unpack.defjvp
def _(LU_data_t, LU_data):
    k = min(LU_data.shape[-2:])
    dL = tril(_narrow(LU_data_t, -1, 0, k), -1)
    dU = triu(_narrow(LU_data_t, -2, 0, k))
    return dL, dU


@composite("lu_unpack", grad_fn="LuUnpackBackward0", note=_lu_unpack.note)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` (torch.return_types.lu_unpack) of a packed LU factorization and its pivots (from
    torch.linalg.lu_factor): P the permutation of the pivots, L unit lower, U upper. Without ``unpack_data`` L
    and U are empty, without ``unpack_pivots`` P is. Matches torch.lu_unpack (grad_fn LuUnpackBackward0).

    Raises:
        RuntimeError: pivots that are not int32, or of another batch shape than LU (PyTorch's messages).
    """
    LU_data, LU_pivots = to_tensor(LU_data), to_tensor(LU_pivots)
    lu_np, piv = LU_data.data, LU_pivots.data
    if piv.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by torch.linalg."
                           "lu_factor")
    empty = Tensor(np.zeros((0,), dtype=lu_np.dtype))
    if unpack_data:
        L, U = _lu_unpack(LU_data)
    else:
        L, U = empty, empty
    P = Tensor(_permutation(piv, lu_np.shape[-2], lu_np.dtype)) if unpack_pivots else empty
    return return_types_lu_unpack(P, L, U)


# ================================================================================================ lu_solve
def _lu_solve_np(LU: np.ndarray, piv: np.ndarray, B: np.ndarray, left: bool, adjoint: bool) -> np.ndarray:
    if left:
        return _lapack.getrs(LU, piv, B, trans=1 if adjoint else 0)
    # X A = B  <=>  A^T X^T = B^T (X A^T = B  <=>  A X^T = B^T)
    return np.swapaxes(_lapack.getrs(LU, piv, np.swapaxes(B, -1, -2), trans=0 if adjoint else 1), -1, -2)


@op("_linalg_lu_solve", grad_fn="LinalgLuSolveBackward0", inputs=3, promote=None,
    note="d/dB = lu_solve(LU, grad, adjoint=!adjoint); d/dLU from gA = -A^{-T} grad X^T: tril(P^T gA U^T, -1) "
         "+ triu(L^T P^T gA)",
    formula="B: lu_solve(LU, pivots, grad, adjoint=!adjoint); LU: tril(P^T gA U^T, -1) + triu(L^T P^T gA), "
            "gA = -grad_B @ result^T")
def _linalg_lu_solve(LU, pivots, B, left=True, adjoint=False):
    """``X`` with ``A X = B`` for the LU factorization of ``A`` (``X A = B``, ``A^H``: left, adjoint).
    torch.linalg.lu_solve."""
    piv = _data(pivots)
    _check_float("linalg.lu_solve", LU)
    if B.dtype != LU.dtype:
        raise RuntimeError("linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{_dtype_name(LU)} and B of type {_dtype_name(B)} instead")
    if piv.dtype != np.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type Int")
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise RuntimeError(f"linalg.lu_solve: A must be batches of square matrices, but they are {LU.shape[-2]} by "
                           f"{n} matrices")
    if (B.shape[-2] if left else B.shape[-1]) != n:
        shp = f"{n}x{n} and {B.shape[-2]}x{B.shape[-1]}" if left else f"{B.shape[-2]}x{B.shape[-1]} and {n}x{n}"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({shp})")
    return _lu_solve_np(LU, piv, B, left, adjoint).astype(LU.dtype, copy=False)


def _int_pivots(pivots, LU):
    """The pivots a rule received as the int32 values the forward had (a node keeps its saved inputs in the dtype
    the op computed in), a Tensor when the rule runs on Tensors."""
    return _like(_data(pivots).astype(np.int32), LU)


@_linalg_lu_solve.defvjp
def _(grad, LU, pivots, result, left, adjoint, needs_input_grad):  # pivots: an int input, no gradient
    # gB = A^{-H} grad (the adjoint system); gA by the solve's own rule, then onto the LU factors through
    # dA = P (dL U + L dU): gL = tril(P^T gA U^H, -1), gU = triu(L^H P^T gA) (FunctionsManual.cpp
    # linalg_lu_solve_LU gives the same)
    pivots = _int_pivots(pivots, LU)
    gB = _linalg_lu_solve(LU, pivots, grad, left, not adjoint)
    if not needs_input_grad[0]:
        return None, None, gB
    X = result
    if left:
        gA = -matmul(X, _mH(gB)) if adjoint else -matmul(gB, _mH(X))
    else:
        gA = -matmul(_mH(gB), X) if adjoint else -matmul(_mH(X), gB)
    n = rule_values(LU).shape[-1]
    L, U = _unpack(LU, n)
    PtgA = matmul(_like(np.swapaxes(_permutation(_data(pivots), n, rule_values(LU).dtype), -1, -2), LU), gA)
    gLU = tril(matmul(PtgA, _mH(U)), -1) + triu(matmul(_mH(L), PtgA))
    return gLU, None, gB


@_linalg_lu_solve.defjvp
def _(LU_t, B_t, LU, pivots, result, left, adjoint):
    # dX = A^{-1} (dB - dA X) for A X = B (and likewise for the other three systems), dA = P (dL U + L dU)
    n = LU.shape[-1]
    pivots = _int_pivots(pivots, LU)
    L, U = _unpack(LU, n)
    dL, dU = tril(LU_t, -1), triu(LU_t)
    P = Tensor(_permutation(_data(pivots), n, LU.data.dtype))
    dA = matmul(P, matmul(dL, U) + matmul(L, dU))
    dA = _mH(dA) if adjoint else dA
    rhs = B_t - (matmul(dA, result) if left else matmul(result, dA))
    return _linalg_lu_solve(LU, pivots, rhs, left, adjoint)


@composite("linalg.lu_solve", grad_fn="LinalgLuSolveBackward0", note=_linalg_lu_solve.note)
def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """The solution ``X`` of ``A X = B`` given the LU factorization ``(LU, pivots)`` of ``A`` from
    torch.linalg.lu_factor (``X A = B`` with ``left=False``; ``A^T`` in place of ``A`` with ``adjoint``); B
    (..., n, k), batch dimensions broadcast. LAPACK getrs. Matches torch.linalg.lu_solve (grad_fn
    LinalgLuSolveBackward0).

    Raises:
        RuntimeError: pivots not int32, non-square LU, other dtypes, incompatible shapes (PyTorch's messages).
    """
    return _linalg_lu_solve(to_tensor(LU), to_tensor(pivots), to_tensor(B), bool(left), bool(adjoint))


@composite("lu_solve", grad_fn="LinalgLuSolveBackward0", note=_linalg_lu_solve.note, method=True)
def lu_solve(input, LU_data, LU_pivots):
    """torch.lu_solve (deprecated in PyTorch for torch.linalg.lu_solve, its arguments reordered): ``A^{-1} b``
    for ``b`` (..., n, k) and the LU factorization of ``A``."""
    return _linalg_lu_solve(to_tensor(LU_data), to_tensor(LU_pivots), to_tensor(input), True, False)


# ================================================================================================ *_ex, cholesky
@composite("linalg.inv_ex", grad_fn="LinalgInvExBackward0", note="d/dA = -A^{-T} grad A^{-T}")
def linalg_inv_ex(A, *, check_errors=False):
    """``(inverse, info)`` (torch.return_types.linalg_inv_ex): torch.linalg.inv with LAPACK's ``info`` (int32
    (...): the index of the first zero pivot of the LU factorization, 0 for an invertible matrix) in place of an
    error; for a singular matrix the inverse holds inf/nan. Matches torch.linalg.inv_ex (grad_fn
    LinalgInvExBackward0).

    Raises:
        torch._C._LinAlgError: with ``check_errors`` for a singular matrix (linalg.inv's message, named inv_ex).
        RuntimeError: fewer than 2 dimensions, non-square matrices, integer tensors.
    """
    A = to_tensor(A)
    _check_matrix("linalg.inv_ex", A.data)
    LU, piv, info = _lapack.getrf(A.data)
    if not np.any(info):
        return return_types_linalg_inv_ex(_linalg_inv(A), Tensor(info))
    if check_errors:
        prefix, k = _batch_prefix(A.data, info)
        raise _LinAlgError(f"linalg.inv_ex: {prefix}The diagonal element {k} is zero, the inversion could not be "
                           "completed because the input matrix is singular.")
    eye = np.broadcast_to(np.eye(A.data.shape[-1], dtype=A.data.dtype), A.data.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        inverse = _lapack.getrs(LU, piv, eye)
    return return_types_linalg_inv_ex(Tensor(inverse), Tensor(info))


@composite("linalg.solve_ex", grad_fn="LinalgSolveExBackward0", note="d/dB = solve(A^T, grad), d/dA = -d/dB X^T")
def linalg_solve_ex(A, B, *, left=True, check_errors=False):
    """``(result, info)`` (torch.return_types.linalg_solve_ex): torch.linalg.solve with LAPACK's ``info`` (int32
    per matrix of A's batch, 0 for an invertible matrix) in place of an error. Matches torch.linalg.solve_ex.

    Raises:
        torch._C._LinAlgError: with ``check_errors`` for a singular matrix.
        RuntimeError: see torch.linalg.solve.
    """
    A, B = to_tensor(A), to_tensor(B)
    _check_matrix("linalg.solve_ex", A.data)
    LU, piv, info = _lapack.getrf(A.data)
    if not np.any(info):
        return return_types_linalg_solve_ex(_linalg_solve(A, B, bool(left)), Tensor(info))
    if check_errors:
        raise _LinAlgError("torch.linalg.solve_ex: The solver failed because the input matrix is singular.")
    vector = _is_vector_rhs(A.data.shape, B.data.shape)
    b = B.data[..., None] if vector else B.data
    with np.errstate(divide="ignore", invalid="ignore"):
        x = _lu_solve_np(LU, piv, b, bool(left), False)
    return return_types_linalg_solve_ex(Tensor(x[..., 0] if vector else x), Tensor(info))


@composite("linalg.cholesky_ex", grad_fn="LinalgCholeskyExBackward0", note=_linalg_cholesky.note)
def linalg_cholesky_ex(A, *, upper=False, check_errors=False):
    """``(L, info)`` (torch.return_types.linalg_cholesky_ex): torch.linalg.cholesky with LAPACK potrf's ``info``
    (int32: the order of the first leading minor that is not positive-definite, 0 where there is none) in place
    of an error; where info > 0, L is LAPACK's partial factor (not recorded). Matches torch.linalg.cholesky_ex.

    Raises:
        torch._C._LinAlgError: with ``check_errors`` for a matrix that is not positive-definite.
        RuntimeError: fewer than 2 dimensions, non-square matrices, integer tensors.
    """
    A = to_tensor(A)
    _check_matrix("linalg.cholesky_ex", A.data)
    L, info = _lapack.potrf(A.data, bool(upper))
    if not np.any(info):
        return return_types_linalg_cholesky_ex(_linalg_cholesky(A, bool(upper)), Tensor(info))
    if check_errors:
        prefix, k = _batch_prefix(A.data, info)
        raise _LinAlgError(f"linalg.cholesky_ex: {prefix}The factorization could not be completed because the input "
                           f"is not positive-definite (the leading minor of order {k} is not positive-definite).")
    return return_types_linalg_cholesky_ex(Tensor(L), Tensor(info))


@op("_cholesky", grad_fn="CholeskyBackward0", promote=None,
    note="d/dA = L^{-T} Phi(L^T grad) L^{-1} symmetrized, Phi = lower triangle with half the diagonal",
    formula="self: L^{-T} Phi(L^T @ grad) L^{-1} symmetrized (L = result; Phi: the lower triangle, its diagonal "
            "halved)")
def _cholesky(input, upper=False):
    """The Cholesky factor of each matrix of ``input``. torch.cholesky."""
    _check_matrix("cholesky", input)
    L, info = _lapack.potrf(input, bool(upper))
    if np.any(info):
        prefix, k = _batch_prefix(input, info)
        raise _LinAlgError(f"cholesky: {prefix}The factorization could not be completed because the input is not "
                           f"positive-definite (the leading minor of order {k} is not positive-definite).")
    return L


@_cholesky.defvjp
def _(grad, result, upper):
    return _linalg_cholesky.vjp(grad, result, upper)


def _cholesky_no_forward_ad():
    # derivatives.yaml has no forward-mode formula for the deprecated cholesky (linalg_cholesky_ex has one)
    raise NotImplementedError(
        "Trying to use forward AD with cholesky that does not support it because it has not been implemented yet.\n"
        "Please file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml"
        " so that we can prioritize its implementation or submit a PR adding the implementation to derivatives.yaml")


_cholesky_no_forward_ad.unsupported = True  # (read by torch.func.hessian: forward over reverse raises here)
_cholesky.defjvp(_cholesky_no_forward_ad)


@composite("cholesky", grad_fn="CholeskyBackward0", note=_cholesky.note, method=True)
def cholesky(input, upper=False):
    """torch.cholesky (deprecated in PyTorch for torch.linalg.cholesky): the lower Cholesky factor (the upper one
    with ``upper``) of each symmetric positive-definite matrix (LAPACK potrf). grad_fn CholeskyBackward0.

    Raises:
        torch._C._LinAlgError: "cholesky: The factorization could not be completed because the input is not
            positive-definite (the leading minor of order k is not positive-definite)."
    """
    return _cholesky(to_tensor(input), bool(upper))


# ================================================================================================ LDL
def _ldl_not_differentiable(grad):
    raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


@op("_linalg_ldl_factor_ex", grad_fn="NotImplemented", promote=None,
    note="no derivative: backward raises, as in PyTorch (derivatives.yaml has no formula for linalg_ldl_factor_ex)")
def _linalg_ldl_factor_ex(A, hermitian=False):
    """``(LD, pivots, info)`` of each symmetric matrix of ``A`` (LAPACK sytrf). torch.linalg.ldl_factor_ex."""
    _check_matrix("torch.linalg.ldl_factor_ex", A)
    return _lapack.sytrf(A, lower=True)


_linalg_ldl_factor_ex.defvjp(_ldl_not_differentiable)
_linalg_ldl_factor_ex.defjvp_unsupported("linalg_ldl_factor_ex")


@composite("linalg.ldl_factor_ex", grad_fn="NotImplemented", note=_linalg_ldl_factor_ex.note)
def linalg_ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """``(LD, pivots, info)`` (torch.return_types.linalg_ldl_factor_ex): the Bunch-Kaufman LDL^T factorization of
    each symmetric matrix of ``A`` (its lower triangle read), as LAPACK sytrf leaves it: D's 1x1 and 2x2 blocks on
    LD's diagonal, L's multipliers below it; pivots int32 (1-based, negative for a 2x2 block); info > 0 where D
    is singular. No derivative (PyTorch has none: backward raises "derivative for aten::linalg_ldl_factor_ex is
    not implemented"). Matches torch.linalg.ldl_factor_ex.

    Raises:
        RuntimeError: with ``check_errors`` for a singular D; fewer than 2 dimensions, non-square matrices.
    """
    A = to_tensor(A)
    LD, piv, info = _linalg_ldl_factor_ex(A, bool(hermitian))
    if check_errors and np.any(info.data):
        prefix, k = _batch_prefix(A.data, info.data)
        raise RuntimeError(f"torch.linalg.ldl_factor_ex: {prefix}Unknown error code: {k}.")
    return return_types_linalg_ldl_factor_ex(LD, piv, info)


@composite("linalg.ldl_factor", grad_fn="NotImplemented", note=_linalg_ldl_factor_ex.note)
def linalg_ldl_factor(A, *, hermitian=False):
    """``(LD, pivots)`` (torch.return_types.linalg_ldl_factor): torch.linalg.ldl_factor_ex without ``info``.
    Matches torch.linalg.ldl_factor (no derivative, as PyTorch's)."""
    LD, piv, _ = _linalg_ldl_factor_ex(to_tensor(A), bool(hermitian))
    return return_types_linalg_ldl_factor(LD, piv)


"""Inverses and linear systems: torch.linalg's inv, solve and pinv, and torch.inverse and torch.pinverse; and the
helpers that the other matrix functions of :mod:`gradcli.ops.linalg` share (PyTorch's ``_LinAlgError``, the
``torch.return_types`` named tuples, the checks of matrix inputs and their error texts, and the rule-value
helpers).

The functions of ``torch.linalg`` are registered under their qualified names (``"linalg.inv"``), so that
``gradcli ops`` lists them and the op table tests them, and are reached as ``torch.linalg.inv`` (never
``torch.inv``); ``torch.inverse`` and ``torch.pinverse`` are their own entries, as in PyTorch. The
``torch.linalg`` namespace itself is :mod:`gradcli.api.linalg`.

Every function works on batches of matrices (the last two dimensions; numpy.linalg is vectorized over the
leading ones). Values, grad_fn names and error texts follow PyTorch 2.13; the derivatives are those of
tools/autograd/derivatives.yaml and FunctionsManual.cpp (linalg_solve_backward, pinv_backward and the
corresponding *_jvp), written with ops of the table so that they can be differentiated again. ``_linalg_solve``
is also what the rules of the decompositions and determinants solve with.
"""

from __future__ import annotations

import builtins as _py

import numpy as np

from ...engine import dtypes
from ...engine.lazy import lazy
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, op, rule_values
from .products import matmul
from ..reduction.reductions import sum
from ..shape.joins import cat
from ..shape.views import narrow, transpose, unsqueeze

# LAPACK in the input's precision (sgesv for float32, as PyTorch; numpy.linalg would compute float32 in float64)
_lapack = lazy("gradcli.ops.linalg._lapack")


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


# ================================================================================================ inv
@op("_linalg_inv", grad_fn="LinalgInvExBackward0", promote=None, note="d/dA = -A^{-T} grad A^{-T}",
    formula="A: -result^T @ grad @ result^T")
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


@_linalg_inv.defsymbolic
def _(s, A):
    inv = s.Inverse(s.mat(A))
    return inv, lambda g: -s.Transpose(inv) * g * s.Transpose(inv)


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
    note="d/dB = solve(A^T, grad), d/dA = -d/dB X^T", formula="B: solve(A^T, grad); A: -solve(A^T, grad) @ result^T")
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
    x, info = _lapack.gesv(np.broadcast_to(A, batch + A.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:]))
    if np.any(info):
        raise _LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.")
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


# ================================================================================================ pinv
@op("_linalg_pinv", grad_fn="LinalgPinvBackward0", promote=None,
    note="d/dA = -P^T g P^T + (I - A P) g^T P P^T + P^T P g^T (I - P A), P = pinv(A)",
    formula="input: -P^T grad P^T + (I - input P) grad^T P P^T + P^T P grad^T (I - P input) (P = result)")
def _linalg_pinv(A, rtol=None, hermitian=False):
    """The pseudo-inverse through the SVD, singular values below ``rtol * max(S)`` dropped. torch.linalg.pinv."""
    _check_matrix("linalg.pinv", A, square=False)
    m, n = A.shape[-2:]
    if rtol is None:
        rtol = np.finfo(A.dtype).eps * _py.max(m, n)
    if m == 0 or n == 0:
        return np.zeros(A.shape[:-2] + (n, m), dtype=A.dtype)
    u, s, vh = _lapack.gesdd(A, full_matrices=False)
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

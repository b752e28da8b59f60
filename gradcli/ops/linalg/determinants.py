"""Determinants: torch.linalg's det and slogdet, and torch.det, torch.slogdet and torch.logdet.

Values, grad_fn names, named tuples (``torch.return_types.linalg_slogdet``...) and error texts follow PyTorch
2.13; the derivatives are those of FunctionsManual.cpp (linalg_det_backward, slogdet_backward and the
corresponding *_jvp): ``det(A) A^{-T}`` solved with :func:`.inverses._linalg_solve`, and for a singular matrix
under ``create_graph=True`` the cofactor matrix through the SVD (:mod:`.decompositions`), as PyTorch's.
"""

from __future__ import annotations

import numpy as np

from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, op, rule_values
from ..elementwise.comparison import where
from .decompositions import _linalg_svd
from .inverses import _cat, _check_matrix, _eye_like, _like, _linalg_solve, _mH, _named_tuple, _narrow, _undefined
from .products import matmul
from ..reduction.reductions import sum
from ..reduction.scans import cumprod
from ..shape.views import _diagonal, flip, unsqueeze


return_types_slogdet = _named_tuple("slogdet", ("sign", "logabsdet"))
return_types_linalg_slogdet = _named_tuple("linalg_slogdet", ("sign", "logabsdet"))


# ================================================================================================ det
@op("_linalg_det", grad_fn="LinalgDetBackward0", promote=None,
    note="d/dA det(A) = det(A) A^{-T} (the cofactor matrix; through the SVD for a singular A)",
    formula="A: grad * result * A^{-T} (the cofactor matrix; 0 for a singular A in a first backward, the cofactors "
            "through the SVD with create_graph)")
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


@_linalg_det.defsymbolic
def _(s, A):
    a = s.mat(A)
    return s.Det(a), lambda g: g * s.Det(a) * s.Transpose(s.Inverse(a))


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
    note="d/dA logabsdet = A^{-T}; the sign has no gradient (real)",
    formula="A: grad_logabsdet * A^{-T}; the sign has no gradient")
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


@_linalg_slogdet.defsymbolic
def _(s, A):
    a = s.mat(A)
    # d/dA log|det A| = A^{-T} (the Matrix Cookbook (57)); SymPy's own diff of log(Determinant(X)) gives 0
    return (None, s.log(s.Abs(s.Det(a)))), lambda gs: s.Transpose(s.Inverse(a)) * gs[1]


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


@logdet.defsymbolic
def _(s, input):
    a = s.mat(input)
    # d/dA log det A = A^{-T} (the Matrix Cookbook (57)); SymPy's own diff of log(Determinant(X)) gives 0
    return s.log(s.Det(a)), lambda g: g * s.Transpose(s.Inverse(a))

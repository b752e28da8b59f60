"""Matrix functions: torch.linalg's matrix_power and matrix_exp, and torch.matrix_power and torch.matrix_exp.

matrix_power is composed as PyTorch composes it (products by binary decomposition, of the inverse for a negative
power: aten/src/ATen/native/LinearAlgebra.cpp linalg_matrix_power_impl); matrix_exp is one op whose derivative is
the exponential of a block matrix (FunctionsManual.cpp linalg_matrix_exp_differential).
"""

from __future__ import annotations

import numpy as np

from ...engine.tensor import Tensor, to_tensor
from ..core.declare import composite, op, rule_values
from .inverses import _cat, _check_matrix, _linalg_inv, _mH, _narrow
from .products import matmul


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
    note="d/dA = the upper-right block of exp([[A^T, grad], [0, A^T]])",
    formula="input: the upper-right block of matrix_exp([[input^T, grad], [0, input^T]])")
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

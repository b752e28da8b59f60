"""Norms and distances: torch.linalg's vector_norm, matrix_norm and norm, and torch.cdist.

The norms are composed as PyTorch composes them (a vector norm, amax/amin of one, or the singular values of
:mod:`.decompositions`), so that their grad_fn is PyTorch's; cdist is one op (CdistBackward0, FunctionsManual.cpp
_cdist_backward). Error texts follow PyTorch 2.13.
"""

from __future__ import annotations

import builtins as _py

import numpy as np

from ...engine import dtypes
from ...engine.tensor import normalize_dim, to_tensor
from ..core.declare import composite, op
from ..core.forward import fw_not_implemented
from ..elementwise.arithmetic import pow
from ..elementwise.comparison import where
from .decompositions import _linalg_svdvals
from .inverses import _check_float
from ..reduction.reductions import _vector_norm, amax, amin, sum
from ..shape.views import movedim, transpose, unsqueeze
from ..elementwise.unary import abs, sign


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


# ================================================================================================ cdist
@op("_cdist", grad_fn="CdistBackward0", inputs=2, promote=None,
    note="d/dx1 = sum_j grad_ij d(||x1_i - x2_j||_p); d/dx2 the negative, summed over i",
    formula="x1: grad * d ||x1_i - x2_j||_p / d x1_i summed over j (0 where the distance is 0); x2: the negative, "
            "summed over i", kinks="cdist")
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
    # derivatives.yaml _cdist_forward: x1: _cdist_backward(grad, x1, x2, p, result), x2: the same with the roles
    # swapped and grad, result transposed
    if p == 0:
        return None, None
    return (_cdist_backward(grad, x1, x2, result, p) if needs_input_grad[0] else None,
            _cdist_backward(transpose(grad, -1, -2), x2, x1, transpose(result, -1, -2), p)
            if needs_input_grad[1] else None)


@_cdist.defjvp
def _(x1_t, x2_t):
    # PyTorch has no forward-mode rule for cdist
    raise NotImplementedError(fw_not_implemented("_cdist_forward"))


_cdist.jvp.unsupported = True


@op("_cdist_backward", grad_fn="CdistBackwardBackward0", inputs=4, promote=None,
    note="no derivative: backward raises, as in PyTorch")
def _cdist_backward(grad, x1, x2, cdist, p):
    """The gradient of ``cdist(x1, x2, p)`` with respect to ``x1`` for the output gradient ``grad``
    (FunctionsManual.cpp _cdist_backward: sum over j of grad_ij d(||x1_i - x2_j||_p)/d x1_i, 0 where a distance
    is 0). PyTorch has no derivative of it (derivatives.yaml: not_implemented), so a second derivative of cdist
    raises, as there: NotImplementedError "the derivative for '_cdist_backward' is not implemented." backward,
    and PyTorch's "Trying to use forward AD with _cdist_backward ..." in forward mode."""
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    g = grad[..., None] * _cdist_grad_diff(diff, cdist, p)
    return np.asarray(np.sum(g, axis=-2), dtype=x1.dtype)


@_cdist_backward.defvjp
def _(grad):
    raise NotImplementedError("the derivative for '_cdist_backward' is not implemented.")


@_cdist_backward.defjvp
def _(grad_t):
    raise NotImplementedError(fw_not_implemented("_cdist_backward"))


_cdist_backward.jvp.unsupported = True


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

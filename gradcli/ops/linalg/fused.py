"""PyTorch's fused products: addmm, addmv, addbmm, baddbmm, addr (``beta * input + alpha * product``), and the
products composed of others: inner, chain_matmul.

Each fused op is one autograd function in PyTorch (AddmmBackward0, AddmvBackward0, AddbmmBackward0,
BaddbmmBackward0, AddrBackward0) and one op here, with derivatives.yaml's rules: ``self: maybe_multiply(grad,
beta)`` for the added tensor (the engine sums it back to its broadcast shape) and the product's rule times
``alpha`` for the factors. With ``beta == 0`` the added tensor is ignored, so its NaN and inf do not propagate
(PyTorch's documented behaviour). inner is torch.inner (a product for a 0-d operand, else tensordot over the last
dimensions: grad_fn ViewBackward0); chain_matmul is torch.linalg.multi_dot with its deprecation warning.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...engine import dtypes, limits
from ...engine.tensor import to_tensor
from ..core.declare import composite, op
from ..elementwise.arithmetic import mul
from ..reduction.reductions import expand, sum
from ..shape.views import clone, transpose, unsqueeze
from .products import _check_mm, bmm, linalg_multi_dot, mm, mv, outer
from .structured import tensordot


def _scalar_name(a) -> str:
    return dtypes.scalar_type_name(a.dtype)


def _check_expand(input, target) -> None:
    """PyTorch's expand error when ``input`` does not broadcast to the product's shape ``target``."""
    lead = len(target) - input.ndim
    for i, s in enumerate(target):
        have = input.shape[i - lead] if i >= lead else 1
        if lead < 0 or (have != 1 and have != s):
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(target)}.  Tensor sizes: "
                               f"{list(input.shape)}")


def _combine(input, product, beta, alpha):
    """``beta * input + alpha * product`` in the product's dtype, ``input`` ignored for ``beta == 0``."""
    t = product.dtype.type
    out = product if alpha == 1 else product * t(alpha)
    if beta == 0:
        return np.broadcast_to(np.zeros((), product.dtype), product.shape) + out
    return out + (input if beta == 1 else input * t(beta))


def _scaled(x, s):
    """``x * s`` unless ``s`` is 1 (derivatives.yaml's maybe_multiply)."""
    return x if s == 1 else x * s


def _check_dtypes(name_a, a, name_b, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"{name_a} and {name_b} must have the same dtype, but got {_scalar_name(a)} and "
                           f"{_scalar_name(b)}")


# ----------------------------------------------------------------------------------------------- addmm


@op("addmm", grad_fn="AddmmBackward0", inputs=3, promote=None, method=True,
    note="d/dinput = beta, d/dmat1 = alpha * grad @ mat2^T, d/dmat2 = alpha * mat1^T @ grad")
# (the formula of AddmmBackward0 is declared once, with F.linear's addmm in products.py)
def addmm(input, mat1, mat2, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``: (n×m) @ (m×p), ``input`` broadcast to (n×p). Matches
    torch.addmm (``input`` ignored when ``beta`` is 0).

    Raises:
        RuntimeError: for non-2-d factors, mismatched sizes, an ``input`` that does not broadcast, or dtypes
            that differ (PyTorch's messages).
    """
    _check_mm(mat1, mat2, "mat1", got=True)
    _check_dtypes("self", input, "mat2", mat2)
    _check_dtypes("mat1", mat1, "mat2", mat2)
    _check_expand(input, (mat1.shape[0], mat2.shape[1]))
    limits.check_matmul(mat1.shape, mat2.shape)
    return _combine(input, mat1 @ mat2, beta, alpha)


@addmm.defvjp
def _(grad, mat1, mat2, beta, alpha, needs_input_grad):
    # derivatives.yaml addmm: self: maybe_multiply(grad, beta); mat1: mm_mat1_backward(grad, mat2, ..., alpha);
    # mat2: mm_mat2_backward(grad, mat1, ..., alpha)
    return (_scaled(grad, beta) if needs_input_grad[0] else None,
            _scaled(mm(grad, mat2.mT), alpha) if needs_input_grad[1] else None,
            _scaled(mm(mat1.mT, grad), alpha) if needs_input_grad[2] else None)


@addmm.defjvp
def _(input_t, mat1_t, mat2_t, mat1, mat2, beta, alpha):
    # derivatives.yaml addmm result: maybe_multiply(self_t, beta) + maybe_multiply(mat1_t.mm(mat2_p), alpha)
    # + maybe_multiply(mat1_p.mm(mat2_t), alpha)
    return _scaled(input_t, beta) + _scaled(mm(mat1_t, mat2) + mm(mat1, mat2_t), alpha)


# ----------------------------------------------------------------------------------------------- addmv


@op("addmv", grad_fn="AddmvBackward0", inputs=3, promote=None, method=True,
    note="d/dinput = beta, d/dmat = alpha * outer(grad, vec), d/dvec = alpha * mat^T @ grad",
    formula="input: beta * grad summed to its shape; mat: alpha * outer(grad, vec); vec: alpha * mat^T @ grad")
def addmv(input, mat, vec, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``: (n×m) @ (m) → (n), ``input`` broadcast to (n). Matches
    torch.addmv (``input`` ignored when ``beta`` is 0).

    Raises:
        RuntimeError: for wrong ranks or sizes, an ``input`` that does not broadcast, or dtypes that differ
            (PyTorch's messages).
    """
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1 or (input.ndim == 1 and input.shape[0] not in (1, mat.shape[0])) \
            or mat.shape[1] != vec.shape[0]:
        if mat.ndim == 2 and vec.ndim == 1:
            raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.ndim else 1}), mat "
                               f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    if not (input.dtype == mat.dtype == vec.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_scalar_name(input)}, "
                           f"{_scalar_name(mat)}, and {_scalar_name(vec)}")
    return _combine(input, mat @ vec, beta, alpha)


@addmv.defvjp
def _(grad, mat, vec, beta, alpha, needs_input_grad):
    # derivatives.yaml addmv: self: maybe_multiply(grad, beta); mat: maybe_multiply(grad.ger(vec), alpha);
    # vec: maybe_multiply(mat.t().mv(grad), alpha)
    return (_scaled(grad, beta) if needs_input_grad[0] else None,
            _scaled(outer(grad, vec), alpha) if needs_input_grad[1] else None,
            _scaled(mv(mat.mT, grad), alpha) if needs_input_grad[2] else None)


@addmv.defjvp
def _(input_t, mat_t, vec_t, mat, vec, beta, alpha):
    return _scaled(input_t, beta) + _scaled(mv(mat_t, vec) + mv(mat, vec_t), alpha)


# -------------------------------------------------------------------------------------- addbmm, baddbmm


def _check_batches(batch1, batch2):
    if batch1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch2.shape[:2] != (batch1.shape[0], batch1.shape[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch1.shape[0]}, "
                           f"{batch1.shape[2]}] but got: [{batch2.shape[0]}, {batch2.shape[1]}].")
    _check_dtypes("batch1", batch1, "batch2", batch2)
    limits.check_matmul(batch1.shape, batch2.shape)


@op("addbmm", grad_fn="AddbmmBackward0", inputs=3, promote=None, method=True,
    note="d/dinput = beta, d/dbatch1 = alpha * grad @ batch2^T, d/dbatch2 = alpha * batch1^T @ grad (each batch)",
    formula="input: beta * grad summed to its shape; batch1: alpha * grad @ batch2[b]^T for each b; batch2: "
            "alpha * batch1[b]^T @ grad for each b")
def addbmm(input, batch1, batch2, beta=1, alpha=1):
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``: (b×n×m) and (b×m×p) → (n×p), ``input``
    broadcast to (n×p). Matches torch.addbmm (``input`` ignored when ``beta`` is 0).

    Raises:
        RuntimeError: for non-3-d batches, mismatched sizes, an ``input`` that does not broadcast, or dtypes
            that differ (PyTorch's messages).
    """
    _check_batches(batch1, batch2)
    _check_dtypes("self", input, "batch1", batch1)
    _check_expand(input, (batch1.shape[1], batch2.shape[2]))
    product = np.matmul(batch1, batch2).sum(axis=0, dtype=batch1.dtype) if batch1.shape[0] else \
        np.zeros((batch1.shape[1], batch2.shape[2]), batch1.dtype)
    return _combine(input, product, beta, alpha)


@addbmm.defvjp
def _(grad, batch1, batch2, beta, alpha, needs_input_grad):
    # derivatives.yaml addbmm: batch1: maybe_multiply(grad.unsqueeze(0).expand({b, n, p}).bmm(batch2.transpose(1,
    # 2)), alpha); batch2: maybe_multiply(batch1.transpose(1, 2).bmm(grad.unsqueeze(0).expand({b, n, p})), alpha)
    g = None
    if needs_input_grad[1] or needs_input_grad[2]:
        g = expand(unsqueeze(grad, 0), batch1.shape[0], batch1.shape[1], batch2.shape[2])
    return (_scaled(grad, beta) if needs_input_grad[0] else None,
            _scaled(bmm(g, transpose(batch2, 1, 2)), alpha) if needs_input_grad[1] else None,
            _scaled(bmm(transpose(batch1, 1, 2), g), alpha) if needs_input_grad[2] else None)


@addbmm.defjvp
def _(input_t, batch1_t, batch2_t, batch1, batch2, beta, alpha):
    return _scaled(input_t, beta) + _scaled(sum(bmm(batch1_t, batch2) + bmm(batch1, batch2_t), 0), alpha)


@op("baddbmm", grad_fn="BaddbmmBackward0", inputs=3, promote=None, method=True,
    note="d/dinput = beta, d/dbatch1 = alpha * grad @ batch2^T, d/dbatch2 = alpha * batch1^T @ grad, batch by batch",
    formula="input: beta * grad summed to its shape; batch1: alpha * grad @ batch2^T; batch2: alpha * batch1^T @ "
            "grad, batch by batch")
def baddbmm(input, batch1, batch2, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` batch by batch: (b×n×m) and (b×m×p) → (b×n×p), ``input``
    broadcast to (b×n×p). Matches torch.baddbmm (``input`` ignored when ``beta`` is 0).

    Raises:
        RuntimeError: for non-3-d batches, mismatched sizes, an ``input`` that does not broadcast, or dtypes
            that differ (PyTorch's messages).
    """
    _check_batches(batch1, batch2)
    _check_dtypes("self", input, "batch1", batch1)
    _check_expand(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    return _combine(input, np.matmul(batch1, batch2), beta, alpha)


@baddbmm.defvjp
def _(grad, batch1, batch2, beta, alpha, needs_input_grad):
    # derivatives.yaml baddbmm: self: maybe_multiply(grad, beta); batch1: maybe_multiply(grad.bmm(batch2.transpose(1,
    # 2)), alpha); batch2: maybe_multiply(batch1.transpose(1, 2).bmm(grad), alpha)
    return (_scaled(grad, beta) if needs_input_grad[0] else None,
            _scaled(bmm(grad, transpose(batch2, 1, 2)), alpha) if needs_input_grad[1] else None,
            _scaled(bmm(transpose(batch1, 1, 2), grad), alpha) if needs_input_grad[2] else None)


@baddbmm.defjvp
def _(input_t, batch1_t, batch2_t, batch1, batch2, beta, alpha):
    return _scaled(input_t, beta) + _scaled(bmm(batch1_t, batch2) + bmm(batch1, batch2_t), alpha)


# ------------------------------------------------------------------------------------------------ addr


@op("addr", grad_fn="AddrBackward0", inputs=3, promote=None, method=True,
    note="d/dinput = beta, d/dvec1 = alpha * grad @ vec2, d/dvec2 = alpha * grad^T @ vec1",
    formula="input: beta * grad summed to its shape; vec1: alpha * grad @ vec2; vec2: alpha * grad^T @ vec1")
def addr(input, vec1, vec2, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``: (n) and (m) → (n×m), ``input`` broadcast to (n×m).
    Matches torch.addr (``input`` ignored when ``beta`` is 0).

    Raises:
        RuntimeError: for operands that are not 1-d, an ``input`` that does not broadcast, or dtypes that differ
            (PyTorch's messages).
    """
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    _check_dtypes("vec1", vec1, "vec2", vec2)
    _check_dtypes("self", input, "vec1", vec1)
    _check_expand(input, (vec1.shape[0], vec2.shape[0]))
    limits.check_numel(vec1.shape + vec2.shape, "addr()")
    return _combine(input, np.multiply.outer(vec1, vec2), beta, alpha)


@addr.defvjp
def _(grad, vec1, vec2, beta, alpha, needs_input_grad):
    # derivatives.yaml addr: self: maybe_multiply(grad, beta); vec1: maybe_multiply(grad.mv(vec2), alpha);
    # vec2: maybe_multiply(grad.t().mv(vec1), alpha)
    return (_scaled(grad, beta) if needs_input_grad[0] else None,
            _scaled(mv(grad, vec2), alpha) if needs_input_grad[1] else None,
            _scaled(mv(grad.mT, vec1), alpha) if needs_input_grad[2] else None)


@addr.defjvp
def _(input_t, vec1_t, vec2_t, vec1, vec2, beta, alpha):
    return _scaled(input_t, beta) + _scaled(outer(vec1_t, vec2) + outer(vec1, vec2_t), alpha)


# --------------------------------------------------------------------------------- inner, chain_matmul


@composite("inner", grad_fn="ViewBackward0 | MulBackward0 (a 0-d operand)", method=True,
           note="tensordot over the last dimensions (a product for a 0-d operand)")
def inner(input, other):
    """The sum of products over the last dimensions: (..., k) and (..., k) → input's leading dims + other's.
    Matches torch.inner (``input * other`` for a 0-d operand, else tensordot).

    Raises:
        RuntimeError: for last dimensions of different sizes (PyTorch's message).
    """
    a, b = to_tensor(input), to_tensor(other)
    if a.ndim == 0 or b.ndim == 0:
        return mul(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(a.shape)} and {list(b.shape)}")
    return tensordot(a, b, ([-1], [-1]))


@composite("chain_matmul", grad_fn="varies", note="a chain of mm in the cheapest order (as linalg.multi_dot)")
def chain_matmul(*matrices):
    """The product of 2-d matrices in the cheapest order. Matches torch.chain_matmul (deprecated in PyTorch,
    with its warning; one matrix gives a copy).

    Raises:
        RuntimeError: for no matrices or ones that are not 2-d (PyTorch's messages).
    """
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                  "multiple parameters.", UserWarning, stacklevel=2)
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for x in matrices:
        if to_tensor(x).ndim != 2:
            raise RuntimeError(f"Tensor dimension is {to_tensor(x).ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return clone(matrices[0])
    return linalg_multi_dot(list(matrices))

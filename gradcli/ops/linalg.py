"""Linear algebra: dot, mv, mm, and matmul composed from them the way PyTorch composes it.

torch.matmul is not one autograd function: for 1-d @ 1-d it calls dot (DotBackward0), for 2-d @ 1-d mv
(MvBackward0), for 2-d @ 2-d mm (MmBackward0), and for 1-d @ 2-d it unsqueezes, calls mm and squeezes
(SqueezeBackward4 on top of MmBackward0), see aten/src/ATen/native/LinearAlgebra.cpp ``_matmul_impl``. gradcli
composes matmul the same way so the recorded graph is PyTorch's. Batched (>2-d) products are one node here.
"""

from __future__ import annotations

import numpy as np

from .. import limits
from ._core import install_method, op, register


def _check_same_dtype(a, b, what):
    if a.dtype != b.dtype:
        from .. import dtypes

        raise RuntimeError(f"{what} must have the same dtype, but got {dtypes.from_numpy(a.dtype).name.capitalize()} "
                           f"and {dtypes.from_numpy(b.dtype).name.capitalize()}")


@op("DotBackward0", inputs=2, promote=None, method=True)
def dot(input, tensor):
    """Inner product of two 1-d tensors of the same size and dtype. Matches torch.dot.

    Raises:
        RuntimeError: for non-1-d inputs, different sizes or dtypes (PyTorch's messages).
    """
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors")
    if input.shape[0] != tensor.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{tensor.shape[0]}] to have the same number of elements, but got {input.shape[0]} "
                           f"and {tensor.shape[0]} elements respectively")
    _check_same_dtype(input, tensor, "dot : expected both vectors to have same dtype, but found")
    return np.asarray(np.dot(input, tensor))


@dot.defvjp
def _(grad, input, tensor, needs_input_grad):
    return (grad * tensor if needs_input_grad[0] else None, grad * input if needs_input_grad[1] else None)


@op("MvBackward0", inputs=2, promote=None, method=True)
def mv(input, vec):
    """Matrix (n×m) times vector (m) → (n). Matches torch.mv.

    Raises:
        RuntimeError: for wrong ranks or sizes (PyTorch's messages).
    """
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x{input.shape[1]}), "
                           f"vec ({vec.shape[0]})")
    _check_same_dtype(input, vec, "expected m1 and m2 to have the same dtype, but got:")
    return input @ vec


@mv.defvjp
def _(grad, input, vec, needs_input_grad):
    return (outer(grad, vec) if needs_input_grad[0] else None,
            input.mT @ grad if needs_input_grad[1] else None)


@op("MmBackward0", inputs=2, promote=None, method=True)
def mm(input, mat2):
    """Matrix product of an (n×m) and an (m×p) matrix. Matches torch.mm.

    Raises:
        RuntimeError: for non-2-d inputs or mismatched inner sizes (PyTorch's messages).
    """
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    _check_same_dtype(input, mat2, "expected m1 and m2 to have the same dtype, but got:")
    limits.check_matmul(input.shape, mat2.shape)
    return input @ mat2


@mm.defvjp
def _(grad, input, mat2, needs_input_grad):
    return (grad @ mat2.mT if needs_input_grad[0] else None,
            input.mT @ grad if needs_input_grad[1] else None)


@op("MulBackward0", inputs=2, promote=None, method=True, aliases=("ger",))
def outer(input, vec2):
    """Outer product of two 1-d tensors: (n) and (m) → (n×m). Matches torch.outer (which is a product of
    broadcast views, hence grad_fn MulBackward0)."""
    limits.check_numel(np.shape(input) + np.shape(vec2), "outer()")
    return np.multiply.outer(input, vec2)


@outer.defvjp
def _(grad, input, vec2, needs_input_grad):
    return (mv(grad, vec2) if needs_input_grad[0] else None,
            mv(grad.mT, input) if needs_input_grad[1] else None)


@op("UnsafeViewBackward0", inputs=2, promote=None, name="_matmul_batched")
def _matmul_batched(input, other):
    """Batched matrix product with broadcast batch dimensions (numpy.matmul semantics)."""
    limits.check_matmul(input.shape, other.shape)
    return np.matmul(input, other)


@_matmul_batched.defvjp
def _(grad, input, other, needs_input_grad):
    # A 1-d operand was treated as a row (left) or column (right) matrix; the engine sums batch dimensions.
    from .shape import reshape, unsqueeze

    gi = go = None
    if input.ndim == 1:
        if needs_input_grad[0]:
            gi = matmul(unsqueeze(grad, -2), other.mT)
        if needs_input_grad[1]:
            go = matmul(reshape(input, (-1, 1)), unsqueeze(grad, -2))
        return gi, go
    if other.ndim == 1:
        if needs_input_grad[0]:
            gi = matmul(unsqueeze(grad, -1), reshape(other, (1, -1)))
        if needs_input_grad[1]:
            go = matmul(input.mT, unsqueeze(grad, -1))
            go = reshape(go, tuple(go.shape[:-1]))
        return gi, go
    return (matmul(grad, other.mT) if needs_input_grad[0] else None,
            matmul(input.mT, grad) if needs_input_grad[1] else None)


def matmul(input, other):
    """Matrix product with PyTorch's rules for 1-d, 2-d and batched operands. Matches torch.matmul (and ``@``),
    including the recorded graph (dot, mv, mm, or unsqueeze → mm → squeeze for 1-d @ 2-d).

    Raises:
        RuntimeError: for 0-d operands, mismatched sizes or dtypes (PyTorch's messages).
    """
    a_nd, b_nd = input.ndim, other.ndim
    if a_nd == 0 or b_nd == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a_nd}D and {b_nd}D")
    if a_nd == 1 and b_nd == 1:
        return dot(input, other)
    if a_nd == 2 and b_nd == 1:
        return mv(input, other)
    if a_nd == 1 and b_nd == 2:
        from .shape import unsqueeze

        if input.shape[0] != other.shape[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied (1x{input.shape[0]} and "
                               f"{other.shape[0]}x{other.shape[1]})")
        return _squeeze_result(mm(unsqueeze(input, 0), other), 0)
    if a_nd == 2 and b_nd == 2:
        return mm(input, other)
    ka = input.shape[-1]
    kb = other.shape[-2] if b_nd >= 2 else other.shape[0]
    if ka != kb:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0] if a_nd > 2 else 1}, {ka}] but got: "
                           f"[{other.shape[0] if b_nd > 2 else 1}, {kb}].")
    if isinstance(input, np.ndarray) and isinstance(other, np.ndarray):
        limits.check_matmul(input.shape, other.shape)
        return np.matmul(input, other)
    _check_same_dtype(input.data, other.data, "expected m1 and m2 to have the same dtype, but got:")
    return _matmul_batched(input, other)


def _squeeze_result_forward(input, dim):
    """Drop the size-1 row that matmul added to a 1-d left operand (aten's in-place ``squeeze_``)."""
    return np.squeeze(input, axis=dim)


# matmul's in-place squeeze_ records SqueezeBackward4, not squeeze's SqueezeBackward1.
_squeeze_result = op("SqueezeBackward4", promote=None, name="_squeeze_result")(_squeeze_result_forward)


@_squeeze_result.defvjp
def _(grad, dim, input_shape):
    from .shape import reshape

    return reshape(grad, input_shape)


register("matmul", matmul, "op")
install_method("matmul", matmul)

"""Products: dot, mv, mm, bmm, outer, matmul and linear composed the way PyTorch composes them, einsum, and the
products of torch.linalg (cross, multi_dot, vdot, vecdot).

torch.matmul is not one autograd function (aten/src/ATen/native/LinearAlgebra.cpp ``_matmul_impl``): 1-d @ 1-d
is dot (DotBackward0), 2-d @ 1-d mv, 2-d @ 2-d mm, 1-d @ 2-d unsqueeze → mm → squeeze_ (SqueezeBackward4); a
>=3-d operand with a 1-d/2-d one is folded into one mm/mv (UnsafeViewBackward0 on top; for 2-d @ 3-d through
the transposed product, then ``.contiguous()``: CloneBackward0) when the smaller operand requires grad or the
larger one folds without a copy; anything else is expand → reshape → bmm → _unsafe_view. gradcli composes
matmul the same way, so the recorded graph is PyTorch's. Memory layout (contiguity, which PyTorch's choices
depend on) is read from the numpy arrays' strides, which follow PyTorch's for the same sequence of views.

F.linear follows at::linear: addmm for a 2-d input with bias (AddmmBackward0), flatten → addmm → view for a
contiguous input of another rank with a 1-d bias, else matmul with ``weight.t()`` (+ bias).

einsum is composed the way torch.einsum composes it without opt_einsum (aten/src/ATen/native/Linear.cpp):
diagonal for repeated subscripts, unsqueeze and permute to align the operands, then left to right sum/mul or
permute → reshape → bmm → view → permute per pair, so the recorded graph and its gradients are PyTorch's.

The products of torch.linalg are here too: cross (torch.cross and torch.linalg.cross, LinalgCrossBackward0),
multi_dot (a chain of mm in the cheapest order, as PyTorch's), vdot, vecdot, and the aliases linalg.matmul and
linalg.diagonal. They are registered under their qualified names (``"linalg.cross"``), reached as
``torch.linalg.cross`` (:mod:`gradcli.api.linalg`).
"""

from __future__ import annotations

import string
import warnings

import numpy as np

from ...engine import dtypes, limits
from ...engine.tensor import Tensor, normalize_dim, to_tensor
from ..core.apply import infer_size
from ..core.declare import composite, op
from ..elementwise.arithmetic import mul
from ..reduction.reductions import expand, sum
from ..shape.views import (_clone_contiguous, _diagonal, _unsafe_view, diagonal, movedim, permute, reshape, squeeze, t,
                          unsqueeze, view)


def _scalar_name(a) -> str:
    """PyTorch's ScalarType name of an array's dtype ("Float", "Long")."""
    return dtypes.scalar_type_name(a.dtype)


def _cpp_name(a) -> str:
    """The C++ type name PyTorch's mm messages use ("float", "long int")."""
    return dtypes.c_type_name(a.dtype)


# --------------------------------------------------------------------------------------- dot, mv, mm, bmm


@op("dot", grad_fn="DotBackward0", inputs=2, promote=None, method=True,
    note="d/dinput = grad * tensor, d/dtensor = grad * input", formula="input: grad * tensor; tensor: grad * input",
    jvp="multilinear")
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
    if input.dtype != tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_scalar_name(input)} and "
                           f"{_scalar_name(tensor)}")
    return np.asarray(np.dot(input, tensor))


@dot.defvjp
def _(grad, input, tensor, needs_input_grad):
    return (grad * tensor if needs_input_grad[0] else None, grad * input if needs_input_grad[1] else None)


@dot.defsymbolic
def _(s, input, tensor):
    a, b = s.mat(input), s.mat(tensor)
    return s.Transpose(a) * b, lambda g: (g * b, g * a)


@op("mv", grad_fn="MvBackward0", inputs=2, promote=None, method=True,
    note="d/dinput = outer(grad, vec), d/dvec = input^T @ grad",
    formula="input: outer(grad, vec); vec: input^T @ grad", jvp="multilinear")
def mv(input, vec):
    """Matrix (n×m) times vector (m) → (n). Matches torch.mv.

    Raises:
        RuntimeError: for wrong ranks, sizes or dtypes (PyTorch's messages).
    """
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x{input.shape[1]}), "
                           f"vec ({vec.shape[0]})")
    if input.dtype != vec.dtype:
        v, m = _scalar_name(vec), _scalar_name(input)
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {v}, {m}, and {v}")
    return input @ vec


@mv.defvjp
def _(grad, input, vec, needs_input_grad):
    return (outer(grad, vec) if needs_input_grad[0] else None,
            mv(input.mT, grad) if needs_input_grad[1] else None)


@mv.defsymbolic
def _(s, input, vec):
    a, b = s.mat(input), s.mat(vec)
    return a * b, lambda g: (g * s.Transpose(b), s.Transpose(a) * g)


def _check_mm(input, mat2, first="self", got=False):
    for name, m in ((first, input), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix" + (f", got {m.ndim}-D tensor" if got else ""))
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")


@op("mm", grad_fn="MmBackward0", inputs=2, promote=None, method=True,
    note="d/dinput = grad @ mat2^T, d/dmat2 = input^T @ grad", formula="input: grad @ mat2^T; mat2: input^T @ grad",
    jvp="multilinear")
def mm(input, mat2):
    """Matrix product of an (n×m) and an (m×p) matrix of one dtype. Matches torch.mm.

    Raises:
        RuntimeError: for non-2-d inputs, mismatched inner sizes or dtypes (PyTorch's messages).
    """
    _check_mm(input, mat2)
    if input.dtype != mat2.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cpp_name(input)} != "
                           f"{_cpp_name(mat2)}")
    limits.check_matmul(input.shape, mat2.shape)
    return input @ mat2


@mm.defvjp
def _(grad, input, mat2, needs_input_grad):
    return (mm(grad, mat2.mT) if needs_input_grad[0] else None,
            mm(input.mT, grad) if needs_input_grad[1] else None)


@mm.defsymbolic
def _(s, input, mat2):
    a, b = s.mat(input), s.mat(mat2)
    return a * b, lambda g: (g * s.Transpose(b), s.Transpose(a) * g)


@op("bmm", grad_fn="BmmBackward0", inputs=2, promote=None, method=True,
    note="d/dinput = grad @ mat2^T, d/dmat2 = input^T @ grad, batch by batch",
    formula="batch by batch, input: grad @ mat2^T; mat2: input^T @ grad", jvp="multilinear")
def bmm(input, mat2):
    """Batched matrix product of (b×n×m) and (b×m×p) tensors of one dtype → (b×n×p); no broadcasting.
    Matches torch.bmm.

    Raises:
        RuntimeError: for non-3-d inputs, mismatched batch or inner sizes, or dtypes (PyTorch's messages).
        LimitError: for a result of more than the ``elements`` limit (before it is computed).
    """
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if mat2.shape[:2] != (input.shape[0], input.shape[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{input.shape[0]}, "
                           f"{input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    if input.dtype != mat2.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input)} but found {_scalar_name(mat2)}")
    limits.check_matmul(input.shape, mat2.shape)
    return np.matmul(input, mat2)


@bmm.defvjp
def _(grad, input, mat2, needs_input_grad):
    return (bmm(grad, mat2.mT) if needs_input_grad[0] else None,
            bmm(input.mT, grad) if needs_input_grad[1] else None)


@op("_addmm", grad_fn="AddmmBackward0", inputs=3, promote=None,
    note="d/dinput = grad, d/dmat1 = grad @ mat2^T, d/dmat2 = mat1^T @ grad",
    formula="input: beta * grad summed to its shape (beta = alpha = 1 in F.linear); mat1: alpha * grad @ mat2^T; "
            "mat2: alpha * mat1^T @ grad")
def _addmm(input, mat1, mat2):
    """``input + mat1 @ mat2`` with ``input`` broadcast to (n×p): torch.addmm with beta = alpha = 1, which
    F.linear calls."""
    _check_mm(mat1, mat2, "mat1", got=True)
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_scalar_name(mat1)} and "
                           f"{_scalar_name(mat2)}")
    if input.dtype != mat1.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_scalar_name(input)} and "
                           f"{_scalar_name(mat2)}")
    target = (mat1.shape[0], mat2.shape[1])
    lead = len(target) - input.ndim
    for i, s in enumerate(target):
        have = input.shape[i - lead] if i >= lead else 1
        if lead < 0 or (have != 1 and have != s):
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(target)}.  Tensor sizes: "
                               f"{list(input.shape)}")
    limits.check_matmul(mat1.shape, mat2.shape)
    return mat1 @ mat2 + input


@_addmm.defvjp
def _(grad, mat1, mat2, needs_input_grad):
    # derivatives.yaml addmm: self: grad (the engine sums it to the bias's shape); mat1/mat2 as mm
    return (grad if needs_input_grad[0] else None,
            mm(grad, mat2.mT) if needs_input_grad[1] else None,
            mm(mat1.mT, grad) if needs_input_grad[2] else None)


@op("outer", grad_fn="MulBackward0", inputs=2, method=True, aliases=("ger",),
    note="d/dinput = grad @ vec2, d/dvec2 = grad^T @ input", jvp="multilinear")
def outer(input, vec2):
    """Outer product of two 1-d tensors: (n) and (m) → (n×m), with type promotion. Matches torch.outer (a
    product of broadcast views, hence grad_fn MulBackward0).

    Raises:
        RuntimeError: for operands that are not 1-d (PyTorch's message).
    """
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    limits.check_numel(np.shape(input) + np.shape(vec2), "outer()")
    return np.multiply.outer(input, vec2)


@outer.defvjp
def _(grad, input, vec2, needs_input_grad):
    return (mv(grad, vec2) if needs_input_grad[0] else None,
            mv(grad.mT, input) if needs_input_grad[1] else None)


@outer.defsymbolic
def _(s, input, vec2):
    a, b = s.mat(input), s.mat(vec2)
    return a * s.Transpose(b), lambda g: (g * b, s.Transpose(g) * a)


# -------------------------------------------------------------------------------- matmul and its pieces


def _contiguous(t):
    """``t.contiguous()``: ``t`` itself if its layout is row-major (size-1 dimensions' strides ignored, as in
    both PyTorch and numpy), else a clone (CloneBackward0)."""
    return t if t.data.flags.c_contiguous else _clone_contiguous(t)


def _reshape_copying(t, shape):
    """``t.reshape(shape)`` as PyTorch records it: a view (ViewBackward0) when the layout allows one, else
    clone + _unsafe_view (CloneBackward0, UnsafeViewBackward0)."""
    if not np.may_share_memory(np.reshape(t.data, shape), t.data):  # numpy copies exactly when torch does
        return _unsafe_view(_clone_contiguous(t), shape)
    return reshape(t, shape)


def _foldable(t1: Tensor) -> bool:
    """Whether the leading dimensions of ``t1`` merge into one without a copy (should_fold's stride test)."""
    if t1.data.size == 0:
        return True
    shape, strides = t1.data.shape, t1.data.strides
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """aten's should_fold: a >=3-d operand with a 1-d/2-d one goes through one mm/mv if the smaller operand
    requires grad, or (unless the left operand is the 2-d one) the larger folds without a copy."""
    a_larger = a.ndim >= b.ndim
    t1_dim, t2_dim = (a.ndim, b.ndim) if a_larger else (b.ndim, a.ndim)
    if not (t1_dim >= 3 and t2_dim <= 2):
        return False
    if (b if a_larger else a).requires_grad:
        return True
    if a.ndim == 2:
        return False
    return _foldable(a if a_larger else b.mT)


@composite("matmul", grad_fn="varies", method=True,
           note="d/dinput = grad @ other^T, d/dother = input^T @ grad (through the ops it is composed of)")
def matmul(input, other):
    """Matrix product with PyTorch's rules for 1-d, 2-d and batched (broadcast) operands. Matches torch.matmul
    (and ``@``), including the recorded graph (see the module docstring).

    Raises:
        RuntimeError: for 0-d operands, mismatched sizes or dtypes (the messages of the op PyTorch reaches:
            dot, mv, mm or bmm).
    """
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        return np.matmul(input, other)  # derivative rules on numpy arrays
    a, b = to_tensor(input), to_tensor(other)
    da, db = a.ndim, b.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 1 and db == 2:
        return _squeeze_result(mm(unsqueeze(a, 0), b), 0)
    if da == 2 and db == 2:
        return mm(a, b)
    # A 3-d operand with a batch of one that requires grad, against a real batch, is squeezed to a matrix
    # first (what PyTorch 2.13 records: SqueezeBackward1, then the folded product).
    if da == 3 and db == 3 and (a.shape[0] == 1) != (b.shape[0] == 1):
        if a.shape[0] == 1 and a.requires_grad:
            a, da = squeeze(a, 0), 2
        elif b.shape[0] == 1 and b.requires_grad:
            b, db = squeeze(b, 0), 2
    if _should_fold(a, b):
        return _matmul_folded(a, b)
    return _matmul_batched(a, b)


def _matmul_folded(a: Tensor, b: Tensor) -> Tensor:
    """matmul of a batch against a matrix or vector, folded into one mm/mv (aten's ``should_fold`` path)."""
    da, db = a.ndim, b.ndim
    transpose = db > da
    t1 = b.mT if transpose else a
    t2 = (t(a) if da == 2 else a) if transpose else b
    out_shape = tuple(t1.shape[:-1])
    folded = int(np.prod(out_shape))
    t1_folded = _reshape_copying(t1, (folded, t1.shape[-1]))
    if t2.ndim == 2:
        out = _unsafe_view(mm(t1_folded, t2), out_shape + (t2.shape[1],))
        return _contiguous(out.mT) if transpose else out
    return _unsafe_view(mv(t1_folded, t2), out_shape)


def _matmul_batched(a: Tensor, b: Tensor) -> Tensor:
    """matmul of broadcast batches: both expanded to one batch shape, then bmm (aten's general path)."""
    da, db = a.ndim, b.ndim
    n = a.shape[-2] if da > 1 else 1
    m1 = a.shape[-1]
    m2 = b.shape[-2] if db > 1 else b.shape[0]
    p = b.shape[-1] if db > 1 else 1
    batch = infer_size(tuple(a.shape[:max(da - 2, 0)]), tuple(b.shape[:max(db - 2, 0)]))
    count = int(np.prod(batch))
    a3 = _reshape_copying(expand(a, *(batch + (n, m1))), (count, n, m1))
    vector_rhs = db == 1
    b3 = _reshape_copying(expand(unsqueeze(b, -1) if vector_rhs else b, *(batch + (m2, p))), (count, m2, p))
    out = bmm(a3, b3)
    if vector_rhs:
        out = squeeze(out, -1)
    out_shape = batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ())
    return _unsafe_view(out, out_shape)


def _squeeze_result_forward(input, dim):
    """Drop the size-1 row that matmul added to a 1-d left operand (aten's in-place ``squeeze_``)."""
    return np.squeeze(input, axis=dim)


# matmul's in-place squeeze_ records SqueezeBackward4, not squeeze's SqueezeBackward1.
_squeeze_result = op("_squeeze_result", grad_fn="SqueezeBackward4", promote=None,
                     note="d/dx = grad reshaped back",
                     formula="input: grad unsqueezed at dim", jvp="linear")(_squeeze_result_forward)


@_squeeze_result.defvjp
def _(grad, dim, input_shape):
    return reshape(grad, input_shape)


@_squeeze_result.defsymbolic
def _(s, input, dim):
    return s.Transpose(s.mat(input)), lambda g: s.Transpose(g)  # the row x^T A becomes the vector A^T x


@composite("linear", grad_fn="varies",
           note="d/dinput = grad @ weight, d/dweight = grad^T @ input, d/dbias = grad summed over the batch")
def linear(input, weight, bias=None):
    """``input @ weight.T + bias``: input (*, in), weight (out, in) or (in,), bias broadcastable to the output
    (or None). Matches torch.nn.functional.linear and its recorded graph (see the module docstring).

    Raises:
        RuntimeError: for 0-d operands and mismatched sizes or dtypes (PyTorch's messages).
    """
    input, weight = to_tensor(input), to_tensor(weight)
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {input.ndim}D and "
                           f"{weight.ndim}D")
    if bias is not None:
        bias = to_tensor(bias)
        if input.ndim == 2:
            return _addmm(bias, input, t(weight))
        if bias.ndim == 1 and input.data.flags.c_contiguous:
            lead = tuple(input.shape[:-1])
            out = _addmm(bias, reshape(input, (int(np.prod(lead)), input.shape[-1])), t(weight))
            return reshape(out, lead + (out.shape[1],))
    out = matmul(input, t(weight))
    return out if bias is None else out + bias


# --------------------------------------------------------------------------------------------------- einsum
_LETTERS = string.ascii_uppercase + string.ascii_lowercase


def _parse_einsum(equation: str, shapes: list) -> tuple:
    """The equation with the ellipsis replaced by letters and the output made explicit (PyTorch's rules:
    implicit output = ellipsis dimensions, then the labels used once, in alphabetical order, uppercase first).

    Returns (operand subscripts, output subscripts, the letters standing for the ellipsis' dimensions), each a
    string of letters.
    Raises:
        RuntimeError: PyTorch's einsum messages for malformed equations and mismatched operands or sizes.
    """
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    for term in terms + [rhs]:
        for ch in term.replace("...", ""):
            if ch not in _LETTERS:
                raise RuntimeError(f"einsum(): invalid subscript given at index {eq.index(ch)} in the equation "
                                   f"string, subscripts must be in [a-zA-Z]")
    used = set(eq)
    free = [c for c in _LETTERS if c not in used]
    ell = 0
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        labels = len(term.replace("...", ""))
        if "..." in term:
            if labels > len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({labels}) is more than the "
                                   f"number of dimensions ({len(shape)}) for operand {k}")
            ell = max(ell, len(shape) - labels)
        elif labels != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({labels}) does not match the "
                               f"number of dimensions ({len(shape)}) for operand {k} and no ellipsis was given")
    ell_letters = "".join(free[:ell])
    subs = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            n = len(shape) - len(term.replace("...", ""))
            term = term.replace("...", ell_letters[ell - n:] if n else "")
        subs.append(term)
    if arrow:
        out = rhs.replace("...", ell_letters)
        for ch in out:
            if out.count(ch) > 1:
                raise RuntimeError(f"einsum(): output subscript {ch} appears more than once in the output")
            if not any(ch in s for s in subs):
                raise RuntimeError(f"einsum(): output subscript {ch} does not appear in the equation for any "
                                   "input operand")
    else:
        counts = {}
        for s in subs:
            for ch in s:
                counts[ch] = counts.get(ch, 0) + 1
        out = ell_letters + "".join(sorted((c for c, k in counts.items() if k == 1 and c not in ell_letters),
                                           key=_LETTERS.index))
    _check_einsum_sizes(subs, shapes, ell_letters)
    return subs, out, ell_letters


def _check_einsum_sizes(subs: list, shapes: list, ell_letters: str) -> None:
    """Check that each label's sizes agree within an operand and broadcast across operands (PyTorch's einsum
    messages; the ellipsis' dimensions are named as such)."""
    sizes = {}
    for k, (s, shape) in enumerate(zip(subs, shapes)):
        first = {}  # this operand's first dimension of each label
        for dim, (ch, size) in enumerate(zip(s, shape)):
            if ch in first:
                if size != shape[first[ch]]:
                    raise RuntimeError(f"einsum(): subscript {ch} is repeated for operand {k} but the sizes don't "
                                       f"match, {size} != {shape[first[ch]]}")
                continue
            first[ch] = dim
            seen = sizes.get(ch, 1)
            if size != 1 and seen != 1 and size != seen:
                if ch in ell_letters:  # PyTorch's message, its missing space included
                    raise RuntimeError(f"einsum(): dimension {dim} covered by ellipsis in operand {k}has size {size} "
                                       f"which does not broadcast with previously seen ellipsis with size {seen} for "
                                       "the respective dimension")
                raise RuntimeError(f"einsum(): subscript {ch} has size {size} for operand {k} which does not "
                                   f"broadcast with previously seen size {seen}")
            if size != 1:
                sizes[ch] = size


einsum_note = ("composed of permute/diagonal/unsqueeze/sum/mul/bmm/view as PyTorch composes it; each of those "
               "carries its own derivative")


def _sumproduct_pair(left, right, sum_dims: list):
    """``(left * right).sum(sum_dims, keepdim=True)`` for two operands of one rank whose dimensions are
    aligned (size 1 where an operand lacks one): a mul when nothing is summed, else PyTorch's permute →
    reshape → bmm → view → permute (aten/src/ATen/native/Linear.cpp ``sumproduct_pair``, keepdim=True)."""
    if not sum_dims:
        return mul(left, right)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= left.shape[i]
            elif sl:  # in one operand only: summed right away
                left = sum(left, i, True)
            elif sr:
                right = sum(right, i, True)
        elif sl and sr:
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims)
                + [right.shape[d] for d in ro])
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [0] * len(out_size)
    for i, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = i
    left = reshape(permute(left, *lperm), lro_size, lo_size, sum_size)
    right = reshape(permute(right, *rperm), lro_size, sum_size, ro_size)
    return permute(view(bmm(left, right), *out_size), *operm)


def _einsum_compose(tensors: list, subs: list, out: str, ell_letters: str):
    """torch.einsum's computation (aten/src/ATen/native/Linear.cpp ``einsum`` without a contraction path, as
    when opt_einsum is not installed), op by op so that the recorded graph is PyTorch's.

    Every operand is brought to one layout: the output's dimensions, then the summed ones (the ellipsis'
    first when it is summed, then the other labels in label order, uppercase first). Repeated labels take a
    diagonal (moved back to the label's first position), missing labels are unsqueezed, and the operand is
    permuted. The operands are then contracted left to right, each pair summing first the dimensions that only
    one of them still has, then through ``_sumproduct_pair``; what is left summed is viewed (several operands)
    or summed (one operand) away.
    """
    position = {ch: i for i, ch in enumerate(out)}
    out_num_dim = len(out)
    summed = [ch for ch in ell_letters if ch not in position]
    summed += sorted({ch for s in subs for ch in s if ch not in position and ch not in ell_letters},
                     key=_LETTERS.index)
    for ch in summed:
        position[ch] = len(position)
    ndim = len(position)
    dim_counts = [0] * ndim  # how many operands have each dimension with a size other than 1
    ops = []
    for x, sub in zip(tensors, subs):
        perm = [-1] * ndim
        dim = 0
        for ch in sub:
            p = position[ch]
            if perm[p] == -1:
                if x.shape[dim] != 1:
                    dim_counts[p] += 1
                perm[p] = dim
                dim += 1
            else:  # a repeated label: the diagonal, moved to where the label first appeared
                x = movedim(_diagonal(x, 0, perm[p], dim), -1, perm[p])
        for p in range(ndim):
            if perm[p] == -1:
                x = unsqueeze(x, dim)
                perm[p] = dim
                dim += 1
        ops.append(permute(x, *perm))
    while len(ops) > 1:
        a, b = ops.pop(0), ops.pop(0)
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_num_dim, ndim):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = sum(a, a_sum, True)
        if b_sum:
            b = sum(b, b_sum, True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))
    result = ops[0]
    if ndim > out_num_dim:
        if len(tensors) > 1:  # the summed dimensions are of size 1 by now
            return view(result, *result.shape[:out_num_dim])
        return sum(result, list(range(out_num_dim, ndim)))
    return result


def _einsum_sublists(args: tuple) -> tuple:
    """torch.einsum's sublist form ``(op1, sublist1, op2, sublist2, ..., [sublist_out])`` as ``(equation,
    operands)``: subscripts 0-25 are ``A``-``Z``, 26-51 ``a``-``z``, ``...`` is ``...`` (torch/functional.py)."""
    def letter(n) -> str:
        if n is Ellipsis:
            return "..."
        if isinstance(n, int) and 0 <= n < 26:
            return chr(ord("A") + n)
        if isinstance(n, int) and 26 <= n < 52:
            return chr(ord("a") + n - 26)
        raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")

    equation = ",".join("".join(letter(s) for s in sub) for sub in args[1::2])
    if len(args) % 2 == 1:
        return equation + "->" + "".join(letter(s) for s in args[-1]), args[:-1:2]
    return equation, args[::2]


@composite("einsum", grad_fn="varies", note=einsum_note)
def einsum(equation, *operands):
    """Einstein summation over the operands by ``equation`` (``"ij,jk->ik"``; ``...`` for broadcast
    dimensions; without ``->`` the output is the ellipsis then the subscripts used once, alphabetically);
    the operands may also be given as one list, or as PyTorch's sublists (``einsum(a, [0, 1], b, [1, 2],
    [0, 2])``). Operands must share one dtype. Matches torch.einsum as it runs
    without opt_einsum: the operands are contracted left to right, and the graph is PyTorch's
    permute/diagonal/unsqueeze/sum/mul/bmm/view decomposition (aten/src/ATen/native/Linear.cpp), so grad_fn is
    PermuteBackward0 (one operand, nothing summed), SumBackward1 (one operand, summed subscripts), MulBackward0
    (several operands, nothing left to contract) or ViewBackward0 (several operands, contracted).

    Raises:
        RuntimeError: PyTorch's messages for malformed equations, wrong operand counts, ranks, sizes or dtypes.
        LimitError: for a result of more than the ``elements`` limit (before it is computed).
    """
    if isinstance(equation, Tensor):  # the sublist form: einsum(op1, [0, 1], op2, [1, 2], [0, 2])
        equation, operands = _einsum_sublists((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' must be str, not {type(equation).__name__}")
    tensors = [to_tensor(x) for x in operands]
    subs, out, ell_letters = _parse_einsum(equation, [tuple(x.shape) for x in tensors])
    for x in tensors[1:]:
        if x.data.dtype != tensors[0].data.dtype:
            raise RuntimeError(f"expected scalar type {_scalar_name(tensors[0].data)} but found "
                               f"{_scalar_name(x.data)}")
    sizes = {}
    for s, x in zip(subs, tensors):  # each output subscript's size, as _parse_einsum broadcasts them
        for ch, size in zip(s, x.shape):
            if sizes.get(ch, 1) == 1:
                sizes[ch] = size
    limits.check_numel([sizes[ch] for ch in out], "einsum()")
    return _einsum_compose(tensors, subs, out, ell_letters)


# ---------------------------------------------------------------------------------------------------- cross
@op("_linalg_cross", grad_fn="LinalgCrossBackward0", inputs=2, promote=None,
    note="d/dinput = cross(other, grad), d/dother = cross(grad, input)",
    formula="input: cross(other, grad); other: cross(grad, input)")
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


# ------------------------------------------------------------------------------------------------ multi_dot
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
    ts = [to_tensor(x) for x in tensors]
    n = len(ts)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first_1d, last_1d = ts[0].data.ndim == 1, ts[-1].data.ndim == 1
    for i, x in enumerate(ts):
        nd = x.data.ndim
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
        split = _multi_dot_order([x.data.shape for x in ts])

        def chain(i, j):
            if i == j:
                return ts[i]
            k = split[i][j]
            return mm(chain(i, k), chain(k + 1, j))

        out = chain(0, n - 1)
    # PyTorch views the product to the output shape (ViewBackward0), 1-D ends dropped
    shape = tuple(([] if first_1d else [out.data.shape[0]]) + ([] if last_1d else [out.data.shape[1]]))
    return out.view(shape)


# --------------------------------------------------------------------------------- matmul, diagonal, vecdot
@op("vdot", grad_fn="VdotBackward0", inputs=2, promote=None, method=True,
    note="d/dinput = grad * other, d/dother = grad * input (real)",
    formula="input: grad * other; other: grad * input (real)")
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


# ----------------------------------------------------------------------------------------- forward mode
# derivatives.yaml: dot, mv, mm, bmm, outer are linear in each input (mm: self_t.mm(mat2_p) + self_p.mm(mat2_t));
# addmm: self_t + mat1_t.mm(mat2_p) + mat1_p.mm(mat2_t) (beta = alpha = 1 here); squeeze is auto_linear.


@_addmm.defjvp
def _(input_t, mat1_t, mat2_t, mat1, mat2):
    return input_t + mm(mat1_t, mat2) + mm(mat1, mat2_t)

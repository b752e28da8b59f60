"""Triangles and products: tril, triu, trace, kron, tensordot.

tril, triu and trace are ops (TrilBackward0, TriuBackward0, TraceBackward0; linear, so their tangents are the op
of the tangent); kron and tensordot are composed of other ops as PyTorch composes them
(aten/src/ATen/native/LinearAlgebra.cpp: kron is a product of two reshaped views, UnsafeViewBackward0 on top;
tensordot sums, permutes and reshapes for one mm, ViewBackward0 on top), so their graphs, grad_fn names and
derivatives are PyTorch's.
"""

from __future__ import annotations

import numpy as np

from ...engine.tensor import Tensor, normalize_dim, to_tensor
from ..core.declare import composite, not_implemented_for, op
from ..elementwise.arithmetic import mul
from ..elementwise.comparison import where
from .products import mm
from ..reduction.reductions import sum
from ..shape.views import _unsafe_view, permute, reshape


# ------------------------------------------------------------------------------------------- tril, triu
def _triangle(name: str, npfn, keeps: str, formula: str):
    def forward(input, diagonal=0):
        if input.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return npfn(input, diagonal)

    forward.__name__ = name
    forward.__doc__ = f"""The {keeps} triangle of the matrices in the last two dimensions of ``input``: the
    elements on and {'below' if name == 'tril' else 'above'} the ``diagonal``-th diagonal (0 the main one, positive
    above it, negative below), the others 0. Matches torch.{name} (grad_fn {name.capitalize()}Backward0): the
    gradient is the same triangle of the output's.

    Raises:
        RuntimeError: for a tensor of fewer than 2 dimensions (PyTorch's message).
    """
    o = op(name, grad_fn=f"{name.capitalize()}Backward0", promote=None, method=True,
           note=f"d/dx = 1 on the {keeps} triangle, 0 elsewhere: the gradient's {name}", formula=formula,
           jvp="linear")(forward)  # derivatives.yaml: auto_linear
    return o


tril = _triangle("tril", np.tril, "lower", formula="input: tril(grad, diagonal)")
triu = _triangle("triu", np.triu, "upper", formula="input: triu(grad, diagonal)")


@tril.defvjp
def _(grad, diagonal):
    return tril(grad, diagonal)  # derivatives.yaml: grad.tril(diagonal)


@triu.defvjp
def _(grad, diagonal):
    return triu(grad, diagonal)  # derivatives.yaml: grad.triu(diagonal)


# ------------------------------------------------------------------------------------------------- trace
@op("trace", grad_fn="TraceBackward0", promote=None, method=True,
    note="d/dx = 1 on the main diagonal, 0 elsewhere", formula="input: grad placed on the main diagonal of zeros",
    jvp="linear")  # derivatives.yaml: auto_linear
def trace(input):
    """The sum of the main diagonal of a matrix (integers give int64). Matches torch.trace (grad_fn
    TraceBackward0): the gradient is the output's gradient on the diagonal of zeros.

    Raises:
        RuntimeError: for a tensor that is not a matrix; NotImplementedError for bool (PyTorch's messages).
    """
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype.kind == "b":
        raise not_implemented_for("trace", input.dtype)
    out = np.trace(input)
    return np.asarray(out, dtype=np.int64 if input.dtype.kind in "iu" else input.dtype)


@trace.defvjp
def _(grad, input_shape):
    # FunctionsManual.cpp trace_backward: zeros of the input's shape with grad on the diagonal
    return where(np.eye(*input_shape, dtype=bool), grad, 0.0)


@trace.defsymbolic
def _(s, input):
    a = s.mat(input)
    return s.Trace(a), lambda g: g * s.Identity(a.shape[0])


# -------------------------------------------------------------------------------------------------- kron
@composite("kron", grad_fn="UnsafeViewBackward0", method=True,
           note="d/dinput = sum of the gradient's blocks times other, d/dother = ... (a product of views)")
def kron(input, other):
    """The Kronecker product: blocks ``input[i, j] * other`` (the dimensions of the smaller tensor padded with 1
    in front). Matches torch.kron, computed as PyTorch does (the inputs viewed with interleaved size-1
    dimensions, multiplied with broadcasting, viewed back; grad_fn UnsafeViewBackward0 over MulBackward0).

    Raises:
        TypeError: if an argument is not a tensor.
    """
    for i, (n, v) in enumerate((("input", input), ("other", other))):
        if not isinstance(v, Tensor):
            raise TypeError(f"kron(): argument '{n}' (position {i + 1}) must be Tensor, not {type(v).__name__}")
    sa, sb = tuple(input.shape), tuple(other.shape)
    nd = max(len(sa), len(sb))
    pa, pb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    a_shape = tuple(s for d in pa for s in (d, 1))
    b_shape = tuple(s for d in pb for s in (1, d))
    out_shape = tuple(x * y for x, y in zip(pa, pb))
    return _unsafe_view(mul(_unsafe_view(input, a_shape), _unsafe_view(other, b_shape)), out_shape)


# --------------------------------------------------------------------------------------------- tensordot
def _dim_list(d, which: str, position: int) -> list:
    if not isinstance(d, (list, tuple)):
        # PyTorch passes each half to aten::tensordot, whose parser takes lists only
        raise TypeError(f"tensordot(): argument '{which}' (position {position}) must be tuple of ints, not "
                        f"{type(d).__name__}")
    return list(d)


@composite("tensordot", grad_fn="ViewBackward0",
           note="the gradient of the mm it reduces to, permuted and reshaped back")
def tensordot(a, b, dims=2):
    """The sum over the dimensions ``dims`` of ``a`` and ``b``: an int ``n`` contracts the last ``n`` of ``a``
    with the first ``n`` of ``b``; a pair of lists names them. Matches torch.tensordot, computed as PyTorch
    does (contracted size-1 dimensions summed first, permute and reshape to one mm, reshape of the result:
    grad_fn ViewBackward0).

    Raises:
        TypeError: for a pair of ints (PyTorch wants two lists).
        RuntimeError: for negative or too many dims, lists of different lengths, contracted sizes that differ,
            or inputs of different dtypes (PyTorch's messages).
    """
    a, b = to_tensor(a), to_tensor(b)
    if isinstance(dims, Tensor):
        dims = dims.data.tolist()
    if isinstance(dims, (tuple, list)):
        if len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or "
                               f"list[list[int]] containing two lists, but got dims={dims}")
        dims_a, dims_b = _dim_list(dims[0], "dims_self", 3), _dim_list(dims[1], "dims_other", 4)
    elif isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))  # (torch.functional.tensordot's lists)
    else:
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    given = list(zip(dims_a, dims_b))  # as given, for the error message
    dims_a = [normalize_dim(d, a.ndim) for d in dims_a]
    dims_b = [normalize_dim(d, b.ndim) for d in dims_b]
    t1, t2, csize = a, b, 1
    for (d1, d2), (g1, g2) in zip(zip(dims_a, dims_b), given):
        s1, s2 = a.shape[d1], b.shape[d2]
        if s2 == 1:  # broadcast dimensions are summed right away
            t1 = sum(t1, d1, True)
        elif s1 == 1:
            t2 = sum(t2, d2, True)
        else:
            if s1 != s2:
                raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in dim {g1} and "
                                   f"second has size {s2} in dim {g2}")
            csize *= s1
    p1 = [i for i in range(a.ndim) if i not in dims_a]
    p2 = [i for i in range(b.ndim) if i not in dims_b]
    rsizes = [t1.shape[i] for i in p1] + [t2.shape[i] for i in p2]
    size1 = int(np.prod([t1.shape[i] for i in p1], dtype=np.int64))
    size2 = int(np.prod([t2.shape[i] for i in p2], dtype=np.int64))
    m1 = reshape(permute(t1, *(p1 + dims_a)), (size1, csize))
    m2 = reshape(permute(t2, *(dims_b + p2)), (csize, size2))
    return reshape(mm(m1, m2), tuple(rsizes))

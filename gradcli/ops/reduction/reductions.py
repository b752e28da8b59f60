"""Reductions: sum, mean, prod, max/min, amax/amin, argmax/argmin, var/std, logsumexp, norm, cumsum; and the
copies whose derivatives are sums, expand and repeat, with the broadcasting pair of expand, sum_to_size.

``dim`` is None (all dimensions), an int or a tuple of ints (where PyTorch takes one), negative counting from
the end; ``keepdim`` keeps reduced dimensions with size 1. Derivatives re-insert the reduced dimensions
(:func:`_unsqueeze_to`) and let the engine broadcast the gradient back to the input's shape. Names, dtype rules,
grad_fn names (SumBackward0 for a full reduction, SumBackward1 with ``dim``; MaxBackward1 for ``max()``,
MaxBackward0 for ``max(dim)``), subgradients at ties and zeros, and error texts follow PyTorch 2.13
(tools/autograd/derivatives.yaml and torch/csrc/autograd/FunctionsManual.cpp).
"""

from __future__ import annotations

import builtins as _py
import warnings

import numpy as np

from ...engine import dtypes, limits
from ...engine.tensor import Tensor, normalize_dim, normalize_dims
from ..core.declare import composite, op, rule_values
from ..elementwise.arithmetic import maximum, minimum, pow
from ..elementwise.comparison import where
from ..shape.views import _other_shape, _reshape, _shape_arg, reshape, transpose, unsqueeze
from ..elementwise.unary import abs, exp, sign


def _axes(dim, ndim: int) -> tuple:
    """The reduced axes, non-negative and sorted: all of them for None or an empty tuple (PyTorch reduces
    every dimension for ``dim=()``).

    Raises:
        IndexError: for a dimension out of range; RuntimeError for a repeated one.
    """
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    return normalize_dims(dim, ndim)


def _reduced_shape(shape, dim, keepdim):
    """The shape of the gradient of a reduction over ``dim`` with the reduced dimensions kept as size 1."""
    axes = _axes(dim, len(shape))
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _unsqueeze_to(grad, input_shape, dim, keepdim):
    """Re-insert the dimensions a reduction removed, so that ``grad`` broadcasts to ``input_shape``."""
    if keepdim or dim is None:
        return grad
    return reshape(grad, _reduced_shape(input_shape, dim, keepdim))


def _numel(shape, dim) -> int:
    """How many elements of a tensor of ``shape`` a reduction over ``dim`` (None: all) combines."""
    n = 1
    for a in _axes(dim, len(shape)):
        n *= shape[a]
    return n


# ------------------------------------------------------------------------------------------------- sum, mean


def _sum_grad_fn(dim=None, keepdim=False, dtype=None):
    return "SumBackward0" if dim is None else "SumBackward1"


def _accumulated_dtype(input, dtype) -> np.dtype:
    """The numpy dtype that sum, nansum, prod, cumsum and cumprod compute in and return: ``dtype`` when given,
    else int64 for bool and integer inputs (PyTorch promotes integral types to kLong), else the input's."""
    if dtype is not None:
        return dtypes.as_dtype(dtype).np
    return np.dtype(np.int64) if input.dtype.kind in "iub" else input.dtype


@op("sum", grad_fn=_sum_grad_fn, promote=None, method=True,
    note="d/dx = 1 (the gradient broadcast over the reduced dims)",
    formula={"SumBackward0": "input: grad copied to every element",
             "SumBackward1": "input: grad broadcast over the reduced dims"}, jvp="linear")
def sum(input, dim=None, keepdim=False, dtype=None):
    """Sum over ``dim`` (all elements when None). Bool and integer tensors sum to int64 as in torch.sum.

    Raises:
        IndexError: for a dimension out of range.
    """
    axes = _axes(dim, input.ndim)
    out_dtype = _accumulated_dtype(input, dtype)
    return np.sum(input, axis=axes, keepdims=keepdim if dim is not None else False, dtype=out_dtype)


@sum.defvjp
def _(grad, input_shape, dim, keepdim):
    return _unsqueeze_to(grad, input_shape, dim, keepdim)


@sum.defsymbolic
def _(s, input, dim=None, keepdim=False, dtype=None):
    s.reduce_all(input, dim, "sum")
    return s.SumAll(s.elem(input)), lambda g: g


def _mean_grad_fn(dim=None, keepdim=False, dtype=None):
    return "MeanBackward0" if dim is None else "MeanBackward1"


@op("mean", grad_fn=_mean_grad_fn, promote=None, method=True, note="d/dx = 1/n, n the number of reduced elements",
    formula={"MeanBackward0": "input: grad / n to every element (n: input's number of elements)",
             "MeanBackward1": "input: grad / n broadcast over the reduced dims (n elements reduced)"}, jvp="linear")
def mean(input, dim=None, keepdim=False, dtype=None):
    """Arithmetic mean over ``dim`` (all elements when None). Matches torch.mean.

    Raises:
        RuntimeError: for integer or bool tensors without ``dtype`` (PyTorch's message).
        IndexError: for a dimension out of range.
    """
    if dtype is not None:
        input = input.astype(dtypes.as_dtype(dtype).np)
    if input.dtype.kind != "f":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {dtypes.scalar_type_name(input.dtype)}")
    return np.mean(input, axis=_axes(dim, input.ndim), keepdims=keepdim if dim is not None else False)


@mean.defvjp
def _(grad, input_shape, dim, keepdim):
    return _unsqueeze_to(grad, input_shape, dim, keepdim) / _numel(input_shape, dim)


@mean.defsymbolic
def _(s, input, dim=None, keepdim=False, dtype=None):
    s.reduce_all(input, dim, "mean")
    n = s.numel(input)
    return s.SumAll(s.elem(input)) / n, lambda g: g / n


# ------------------------------------------------------------------------------------------------------ prod


def _prod_grad_fn(dim=None, keepdim=False, dtype=None):
    return "ProdBackward0" if dim is None else "ProdBackward1"


@op("prod", grad_fn=_prod_grad_fn, promote=None, method=True,
    note="d/dx_i = prod_{j != i} x_j (result / x_i where no element is 0)",
    formula={"ProdBackward0": "input: grad * the product of the other elements (result / input where no element is "
                              "0)",
             "ProdBackward1": "input: grad * the product of the other elements of the slice along dim"},
    jvp="reduction")
def prod(input, dim=None, keepdim=False, dtype=None):
    """Product over one dimension ``dim`` (an int), or of all elements when None. Bool and integer tensors give
    int64 as in torch.prod; ``dtype`` casts the input first.

    Raises:
        TypeError: for a tuple ``dim`` (torch.prod takes one dimension).
        IndexError: for a dimension out of range.
    """
    if isinstance(dim, (tuple, list)):
        raise TypeError("prod(): argument 'dim' must be int, not tuple")
    out_dtype = _accumulated_dtype(input, dtype)
    if dim is None:
        return np.prod(input, dtype=out_dtype)
    axis = normalize_dim(dim, input.ndim)
    if input.ndim == 0:
        return input.astype(out_dtype)
    return np.prod(input, axis=axis, keepdims=keepdim, dtype=out_dtype)


def _prod_others(input, axis: int):
    """For each element along ``axis``, the product of the other elements of its slice (exact with zeros).

    Built from ops of the table (an (n, n) masked copy of each slice, reduced with prod) so that it can be
    differentiated again; PyTorch's prod_safe_zeros_backward computes the same with exclusive cumprods."""
    x = transpose(input, axis, -1)
    n = x.shape[-1]
    rows = expand(unsqueeze(x, -2), *(tuple(x.shape[:-1]) + (n, n)))
    return transpose(prod(where(np.eye(n, dtype=bool), 1.0, rows), -1), axis, -1)


@prod.defvjp
def _(grad, input, result, dim, keepdim):
    # derivatives.yaml prod_backward: grad * result / input where no element is 0, else the products of the
    # other elements (prod_safe_zeros_backward).
    if input.ndim == 0:
        return grad
    zeros = bool((rule_values(input) == 0).any())
    if dim is None:
        if not zeros:
            return grad * (result / input)
        return grad * reshape(_prod_others(reshape(input, (-1,)), 0), tuple(input.shape))
    axis = normalize_dim(dim, input.ndim)
    g = _unsqueeze_to(grad, input.shape, axis, keepdim)
    if not zeros:
        return g * (_unsqueeze_to(result, input.shape, axis, keepdim) / input)
    return g * _prod_others(input, axis)


# -------------------------------------------------------------------------------------- max, min and friends


def _return_type(name: str):
    """A ``torch.return_types.<name>`` look-alike: a (values, indices) tuple with ``.values`` and ``.indices``
    that prints like PyTorch's."""

    class ReturnType(tuple):
        __slots__ = ()
        _fields = ("values", "indices")

        def __new__(cls, values, indices):
            return tuple.__new__(cls, (values, indices))

        @property
        def values(self):
            """The reduced values (differentiable)."""
            return self[0]

        @property
        def indices(self):
            """Where the values were found along the reduced dimension (int64)."""
            return self[1]

        def __repr__(self) -> str:
            return f"torch.return_types.{name}(\nvalues={self[0]!r},\nindices={self[1]!r})"

        __str__ = __repr__

    ReturnType.__name__ = ReturnType.__qualname__ = name
    ReturnType.__doc__ = f"torch.return_types.{name}: the (values, indices) result of {name}(input, dim)."
    return ReturnType


return_types_max = _return_type("max")
return_types_min = _return_type("min")


def _selected(input, result):
    """Where ``input`` equals the reduced ``result`` (NaN counting as equal to NaN, as PyTorch's masks do)."""
    return (input == result) | ((input != input) & (result != result))


def _check_nonempty(input, name: str) -> None:
    if input.size == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")


def _evenly_distribute(grad, input, result):
    # FunctionsManual.cpp evenly_distribute_backward: the gradient is shared equally by all the maxima.
    mask = _selected(input, result)
    return where(mask, grad / sum(mask), 0.0)


@op("_max_all", grad_fn="MaxBackward1", promote=None, note="d/dx = 1/k at each of the k maxima, 0 elsewhere",
    formula="input: grad / k at each of the k tied maxima, 0 elsewhere", kinks="max", jvp="reduction")
def _max_all(input):
    """The largest element (NaN if there is one). Matches torch.max(input)."""
    _check_nonempty(input, "max")
    return np.max(input)


_max_all.defvjp(_evenly_distribute)


@op("_min_all", grad_fn="MinBackward1", promote=None, note="d/dx = 1/k at each of the k minima, 0 elsewhere",
    formula="input: grad / k at each of the k tied minima, 0 elsewhere", kinks="min", jvp="reduction")
def _min_all(input):
    """The smallest element (NaN if there is one). Matches torch.min(input)."""
    _check_nonempty(input, "min")
    return np.min(input)


_min_all.defvjp(_evenly_distribute)


@op("_take_along", grad_fn="GatherBackward0", promote=None, note="d/dinput = grad scattered back to the indices",
    jvp="linear")
def _take_along(input, indices, dim, keepdim):
    """``input`` at ``indices`` (int64, reduced dimension kept as size 1) along ``dim``: the values that max/min
    over ``dim`` selected."""
    if input.ndim == 0:
        return input.copy()
    out = np.take_along_axis(input, indices, axis=dim)
    return out if keepdim else np.squeeze(out, axis=dim)


@op("_scatter_along", grad_fn="ValueSelectingReductionBackward0", promote=None,
    note="d/dvalues = grad gathered at the indices",
    formula="input: grad at the selected index of each slice, 0 elsewhere", kinks="max/min", jvp="linear")
def _scatter_along(values, indices, dim, keepdim, shape):
    """Zeros of ``shape`` with ``values`` placed at ``indices`` along ``dim``: the derivative of max/min over
    ``dim`` (PyTorch's value_selecting_reduction_backward)."""
    out = np.zeros(shape, dtype=values.dtype)
    if out.ndim == 0:
        return values.reshape(()).copy()
    np.put_along_axis(out, indices, values if keepdim else np.expand_dims(values, dim), axis=dim)
    return out


@_take_along.defvjp
def _(grad, indices, dim, keepdim, input_shape):
    return _scatter_along(grad, indices, dim, keepdim, input_shape)


@_scatter_along.defvjp
def _(grad, indices, dim, keepdim):
    return _take_along(grad, indices, dim, keepdim)


def _dim_indices(data: np.ndarray, dim: int, largest: bool) -> np.ndarray:
    """The index of the first maximum (minimum) along ``dim``, NaN winning as in PyTorch, with ``dim`` kept."""
    if data.ndim == 0:
        return np.zeros((), dtype=np.int64)
    f = np.argmax if largest else np.argmin
    return np.expand_dims(f(data, axis=dim), dim).astype(np.int64)


def _dim_reduction(largest: bool, formula: str):
    def forward(input, dim, keepdim):
        axis = normalize_dim(dim, input.ndim)
        if input.ndim and input.shape[axis] == 0:
            raise IndexError(f"{'max' if largest else 'min'}(): Expected reduction dim {axis} to have non-zero "
                             "size.")
        idx = _dim_indices(input, axis, largest)
        values = _take_along(input, idx, axis, True)
        if not keepdim and input.ndim:
            values, idx = np.squeeze(values, axis), np.squeeze(idx, axis)
        return values, idx

    def rule(grad, input, dim, keepdim):
        # The indices are recomputed from the saved input: the same first maximum the forward picked.
        axis = normalize_dim(dim, input.ndim)
        return _scatter_along(grad, _dim_indices(rule_values(input), axis, largest), axis, keepdim, tuple(input.shape))

    def jvp(input_t, input, dim, keepdim):
        # derivatives.yaml max.dim: result: gather_with_keepdimed_indices(self_t, dim, indices, keepdim)
        if input.ndim == 0:
            return input_t
        axis = normalize_dim(dim, input.ndim)
        return _take_along(input_t, _dim_indices(input.data, axis, largest), axis, keepdim)

    name = "_max_dim" if largest else "_min_dim"
    forward.__name__ = name
    forward.__doc__ = (f"The {'largest' if largest else 'smallest'} element along ``dim`` and its first index. "
                       f"Matches torch.{'max' if largest else 'min'}(input, dim, keepdim).")
    o = op(name, grad_fn="MaxBackward0" if largest else "MinBackward0", promote=None,
           note="d/dx = 1 at the selected index of each slice, 0 elsewhere", formula=formula,
           kinks="max" if largest else "min")(forward)
    o.defvjp(rule)
    o.defjvp(jvp)
    return o


_max_dim = _dim_reduction(True, formula="input: grad at the index max chose in each slice, 0 elsewhere")
_min_dim = _dim_reduction(False, formula="input: grad at the index min chose in each slice, 0 elsewhere")


def _max_min(name, all_op, dim_op, result_type, pairwise):
    def fn(input, dim=None, keepdim=False, other=None):
        if isinstance(dim, Tensor) or other is not None:
            return pairwise(input, dim if other is None else other)
        if dim is None:
            return all_op(input)
        if isinstance(dim, (tuple, list)):
            raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
        values, indices = dim_op(input, dim, keepdim)
        return result_type(values, indices)

    fn.__name__ = name
    word = "largest" if name == "max" else "smallest"
    fn.__doc__ = f"""The {word} element; or, with ``dim``, a ``(values, indices)`` result along ``dim``; or, with a
    tensor ``other``, torch.{pairwise.name}(input, other). Matches torch.{name}.

    ``{name}(input)``: 0-d, grad_fn {all_op.grad_fn}; the gradient is shared evenly by tied elements.
    ``{name}(input, dim, keepdim=False)``: ``torch.return_types.{name}(values, indices)`` (indexable, unpackable,
    ``.values``/``.indices``); values have grad_fn {dim_op.grad_fn} and the gradient goes to the first {word}
    element of each slice only (its index); indices are int64.

    Raises:
        RuntimeError: for an empty tensor without ``dim``; IndexError for a dimension out of range.
    """
    note = f"{name}(): d/dx = 1/k at each of the k tied extrema; {name}(dim): 1 at the selected index of each slice"
    return composite(name, grad_fn="varies", note=note, method=True)(fn)


max = _max_min("max", _max_all, _max_dim, return_types_max, maximum)
min = _max_min("min", _min_all, _min_dim, return_types_min, minimum)


def _amax_like(name: str, npfn, grad_fn: str, word: str, formula: str):
    def forward(input, dim=(), keepdim=False):
        axes = _axes(dim, input.ndim)
        empty = [a for a in axes if input.shape[a] == 0]
        if empty:
            raise IndexError(f"{name}(): Expected reduction dim {empty[0]} to have non-zero size.")
        return npfn(input, axis=axes, keepdims=keepdim)

    def rule(grad, input, result, dim, keepdim):
        # derivatives.yaml: scale_grad_by_count(restore_reduced_dims(grad), restore_reduced_dims(result) == self)
        shape = tuple(input.shape)
        mask = input == _unsqueeze_to(result, shape, dim, keepdim)
        return (_unsqueeze_to(grad, shape, dim, keepdim) / sum(mask, _axes(dim, len(shape)), True)) * mask

    forward.__name__ = name
    forward.__doc__ = (f"The {word} over ``dim`` (an int or a tuple; ``()`` or None: all dimensions). Matches "
                       f"torch.{name}; the gradient is shared evenly by tied elements.\n\n    Raises:\n"
                       "        IndexError: for a dimension out of range.")
    o = op(name, grad_fn=grad_fn, promote=None, method=True,
           note="d/dx = 1/k at each of the k tied extrema of a slice, 0 elsewhere", formula=formula,
           kinks=name, jvp="reduction")(forward)
    o.defvjp(rule)
    return o


amax = _amax_like("amax", np.max, "AmaxBackward0", "maximum",
                  formula="input: grad / k at each of the k tied maxima of a slice, 0 elsewhere")
amin = _amax_like("amin", np.min, "AminBackward0", "minimum",
                  formula="input: grad / k at each of the k tied minima of a slice, 0 elsewhere")


def _arg_reduction(name: str, npfn, largest: bool):
    def forward(input, dim=None, keepdim=False):
        if dim is None:
            if input.size == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            out = np.asarray(npfn(input.reshape(-1)), dtype=np.int64)
            return out.reshape((1,) * input.ndim) if keepdim else out
        axis = normalize_dim(dim, input.ndim)
        if input.ndim == 0:
            return np.zeros((), dtype=np.int64)
        if input.shape[axis] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
        return npfn(input, axis=axis, keepdims=keepdim).astype(np.int64)

    forward.__name__ = name
    forward.__doc__ = (f"The index (int64) of the first {'maximum' if largest else 'minimum'} along ``dim``, or "
                       f"in the flattened tensor when None. Matches torch.{name}; not differentiable.\n\n"
                       "    Raises:\n        IndexError: for a dimension out of range or an empty tensor.")
    return op(name, grad_fn=None, promote=None, differentiable=False, method=True,
              note="not differentiable (integer output)")(forward)


argmax = _arg_reduction("argmax", np.argmax, True)
argmin = _arg_reduction("argmin", np.argmin, False)


def _logical_reduction(name: str, npfn):
    def forward(input, dim=None, keepdim=False):
        if dim is None:
            out = np.asarray(npfn(input != 0))
            return out.reshape((1,) * input.ndim) if keepdim else out
        axes = tuple(normalize_dim(d, input.ndim) for d in (dim if isinstance(dim, (tuple, list)) else (dim,)))
        if input.ndim == 0:
            return np.asarray(input != 0)
        return npfn(input != 0, axis=axes, keepdims=keepdim)

    forward.__name__ = name
    forward.__doc__ = (f"Whether {'every' if name == 'all' else 'any'} element (along ``dim``, an int or a tuple, or "
                       f"of the whole tensor) is nonzero: a bool tensor. Matches torch.{name}; not differentiable.\n\n"
                       "    Raises:\n        IndexError: for a dimension out of range.")
    return op(name, grad_fn=None, promote=None, differentiable=False, method=True,
              note="not differentiable (bool output)")(forward)


all_ = _logical_reduction("all", np.all)  # (not shadowing the builtins in this module)
any_ = _logical_reduction("any", np.any)


# -------------------------------------------------------------------------------------------------- var, std


def _dof_warning(name: str, stacklevel: int = 4) -> None:
    """PyTorch's warning for ``correction`` not below the number of reduced elements; ``stacklevel`` as
    warnings.warn's, counted from here (4: the caller of the op that called this)."""
    warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                  "factor (input numel divided by output numel).", UserWarning, stacklevel=stacklevel)


def _var_forward(name):
    def forward(input, dim, correction, keepdim):
        if input.dtype.kind != "f":
            raise RuntimeError("std and var only support floating point and complex dtypes")
        axes = _axes(dim, input.ndim)
        n = _numel(input.shape, dim)
        if n - correction <= 0:
            _dof_warning(name)
        d = _centered(input, axes)
        with np.errstate(all="ignore"):  # 0 degrees of freedom: inf, or NaN for 0 / 0, as PyTorch
            out = np.sum(d * d, axis=axes, keepdims=keepdim) / input.dtype.type(_py.max(0, n - correction))
        return np.sqrt(out) if name == "std" else out

    forward.__name__ = f"_{name}"
    forward.__doc__ = f"torch.{name} with ``correction`` and ``dim`` normalised (see :func:`{name}`)."
    return forward


_var = op("_var", grad_fn="VarBackward0", promote=None,
          note="d/dx = 2 (x - mean) / (n - correction)",
          formula="input: grad * 2 * (input - mean(input)) / (n - correction)", jvp="reduction")(_var_forward("var"))
_std = op("_std", grad_fn="StdBackward0", promote=None,
          note="d/dx = (x - mean) / ((n - correction) std); 0 where std is 0",
          formula="input: grad * (input - mean(input)) / ((n - correction) * result) (0 where result is 0)",
          kinks="std", jvp="reduction")(_var_forward("std"))


def _centered(input: np.ndarray, axes: tuple) -> np.ndarray:
    """``input - mean(input over axes)``, computed after shifting by the first element along ``axes``: values
    that are all equal give exactly 0, as PyTorch's Welford algorithm does for var/std, where numpy's mean of
    them can be 1 ulp off (a tiny std whose derivative is then not PyTorch's 0)."""
    if all(input.shape[a] > 0 for a in axes):
        input = input - input[tuple(slice(0, 1) if a in axes else slice(None) for a in range(len(input.shape)))]
    return input - mean(input, axes, True)


def _var_backward(grad, input, dim, correction, keepdim):
    # FunctionsManual.cpp var_backward
    shape = tuple(input.shape)
    n = _numel(shape, dim)
    dof = n - correction
    if dim is None or len(shape) == 0 or dim == ():
        if dof <= 0:
            return grad * where(input == mean(input), float("nan"), float("inf"))
        return (2.0 / dof) * grad * (input - mean(input))
    g = _unsqueeze_to(grad, shape, dim, keepdim)
    scale = 2.0 / dof if dof != 0 else float("inf")
    # (x - mean(x)) with the plain mean, as PyTorch's var_backward: for equal values a 1-ulp-off mean gives
    # PyTorch's tiny gradient (only the forward is exact, by Welford's algorithm there and _centered here)
    return scale * g * (input - mean(input, _axes(dim, len(shape)), True))


_var.defvjp(_var_backward)


@_std.defvjp
def _(grad, input, result, dim, correction, keepdim):
    # FunctionsManual.cpp std_backward: var_backward of grad / (2 std), masked to 0 where std is 0
    with np.errstate(divide="ignore", invalid="ignore"):  # the 0 / 0 and x / 0 that the mask replaces
        scaled = where(result == 0, 0.0, grad / (result * 2))
    return _var_backward(scaled, input, dim, correction, keepdim)


def _var_args(name, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(input, unbiased)
        if unbiased is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both 'unbiased' and "
                        "'correction'")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if isinstance(dim, list):
        dim = tuple(dim)
    return None if dim == () else dim, correction, bool(keepdim)


@composite("var", grad_fn="VarBackward0", note=_var.note, method=True)
def var(input, dim=None, unbiased=None, keepdim=False, correction=None):
    """Variance over ``dim`` (int or tuple; all elements when None) with Bessel's ``correction`` (default 1;
    ``unbiased=False`` means 0). Matches torch.var, including ``var(input, unbiased)`` and grad_fn VarBackward0;
    with ``n - correction <= 0`` the result is NaN (and a UserWarning, as PyTorch).

    Raises:
        RuntimeError: for integer tensors; TypeError for both ``unbiased`` and ``correction``.
    """
    dim, correction, keepdim = _var_args("var", dim, unbiased, keepdim, correction)
    return _var(input, dim, correction, keepdim)


@composite("std", grad_fn="StdBackward0", note=_std.note, method=True)
def std(input, dim=None, unbiased=None, keepdim=False, correction=None):
    """Standard deviation, the square root of :func:`var` (same arguments). Matches torch.std (grad_fn
    StdBackward0); its gradient where the result is 0 is 0.

    Raises:
        RuntimeError: for integer tensors; TypeError for both ``unbiased`` and ``correction``.
    """
    dim, correction, keepdim = _var_args("std", dim, unbiased, keepdim, correction)
    return _std(input, dim, correction, keepdim)


# ------------------------------------------------------------------------------------------- logsumexp


@op("logsumexp", grad_fn="LogsumexpBackward0", promote="float", method=True,
    note="d/dx = exp(x - logsumexp(x)) (softmax)", formula="input: grad * exp(input - result) (softmax(input))",
    jvp="reduction")
def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input), dim))`` computed stably (the maximum is subtracted first; infinite maxima are
    handled as PyTorch does). ``dim`` is an int or a tuple. Integer inputs give the default float dtype.
    Matches torch.logsumexp.

    Raises:
        IndexError: for a dimension out of range.
    """
    axes = _axes(dim, input.ndim)
    if input.ndim == 0:
        return input.copy()
    m = np.max(input, axis=axes, keepdims=True) if input.size else np.zeros([1] * input.ndim, input.dtype)
    m = np.where(np.isinf(m), input.dtype.type(0), m)
    out = np.log(np.sum(np.exp(input - m), axis=axes, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=axes)


@logsumexp.defvjp
def _(grad, input, result, dim, keepdim):
    shape = tuple(input.shape)
    if not shape:
        return grad * exp(input - result)
    return _unsqueeze_to(grad, shape, dim, keepdim) * exp(input - _unsqueeze_to(result, shape, dim, keepdim))


@logsumexp.defsymbolic
def _(s, input, dim, keepdim=False):
    s.reduce_all(input, dim, "logsumexp")
    u = s.elem(input)
    return s.LogSumExp(u), lambda g: g * s.exp(u - s.LogSumExp(u))


# ------------------------------------------------------------------------------------------------- cumsum


@op("cumsum", grad_fn="CumsumBackward0", promote=None, method=True,
    note="d/dx_i = sum of the gradient over positions j >= i", formula="input: the reverse cumsum of grad along dim",
    jvp="linear")
def cumsum(input, dim, dtype=None):
    """Cumulative sum along ``dim``. Bool and integer tensors give int64 (``dtype`` casts the input first), as
    torch.cumsum.

    Raises:
        IndexError: for a dimension out of range.
    """
    axis = normalize_dim(dim, input.ndim)
    out_dtype = _accumulated_dtype(input, dtype)
    if input.ndim == 0:
        return input.astype(out_dtype)
    return np.cumsum(input, axis=axis, dtype=out_dtype)


@op("_reverse_cumsum", grad_fn="FlipBackward0", promote=None, note="d/dx = cumsum(grad)", jvp="linear")
def _reverse_cumsum(input, dim):
    """Cumulative sum from the end along ``dim`` (PyTorch's reversed_cumsum: ``flip(cumsum(flip(x)))``)."""
    axis = normalize_dim(dim, input.ndim)
    return np.flip(np.cumsum(np.flip(input, axis), axis=axis), axis)


@cumsum.defvjp
def _(grad, dim, input_shape):
    # FunctionsManual.cpp cumsum_backward
    if not input_shape or input_shape[normalize_dim(dim, len(input_shape))] <= 1:
        return grad
    return _reverse_cumsum(grad, dim)


@_reverse_cumsum.defvjp
def _(grad, dim):
    return cumsum(grad, dim)


# --------------------------------------------------------------------------------------------------- norm


@op("_vector_norm", grad_fn="LinalgVectorNormBackward0", promote=None,
    note="d/dx = sign(x) |x|^(p-1) / norm^(p-1); 0 where the norm is 0; none for p = 0",
    formula="input: grad * sign(input) * |input|^(ord - 1) / result^(ord - 1) (grad * input / result for ord = 2; 0 "
            "where result is 0)", kinks="norm", jvp="reduction")
def _vector_norm(input, ord=2, dim=None, keepdim=False):
    """The vector ``ord``-norm over ``dim`` (all elements when None). Matches torch.linalg.vector_norm."""
    axes = normalize_dims(dim, input.ndim)
    keep = keepdim if dim is not None else False
    a = np.abs(input)
    if ord == 2:
        return np.sqrt(np.sum(a * a, axis=axes, keepdims=keep))
    if ord == float("inf"):
        return np.max(a, axis=axes, keepdims=keep)
    if ord == float("-inf"):
        return np.min(a, axis=axes, keepdims=keep)
    if ord == 0:
        return np.sum(a != 0, axis=axes, keepdims=keep).astype(input.dtype)
    if ord == 1:
        return np.sum(a, axis=axes, keepdims=keep)
    return np.power(np.sum(np.power(a, ord), axis=axes, keepdims=keep), input.dtype.type(1.0 / ord))


@_vector_norm.defvjp
def _(grad, input, result, ord, dim, keepdim):
    # FunctionsManual.cpp norm_backward, case by case; p = 0 has no gradient (undefined, the leaf's .grad stays
    # None), and the gradient where the norm (or, for p < 1, the element) is 0 is 0.
    if ord == 0:
        return None
    shape = tuple(input.shape)
    g = _unsqueeze_to(grad, shape, dim, keepdim)
    r = _unsqueeze_to(result, shape, dim, keepdim)
    if ord == 1:
        return sign(input) * g
    if ord == 2:
        return g * where(r == 0, 0.0, input / r)
    if ord in (float("inf"), float("-inf")):
        mask = _selected(abs(input), r)
        return sign(input) * ((g / sum(mask, _axes(dim, len(shape)), True)) * mask)
    if ord < 1:
        scaled = sign(input) * where(input == 0, 0.0, pow(abs(input), ord - 1))
        return scaled * g * pow(r, 1 - ord)
    scaled = sign(input) * pow(abs(input), ord - 1) if ord < 2 else input * pow(abs(input), ord - 2)
    return scaled * where(r == 0, 0.0, g / pow(r, ord - 1))


@_vector_norm.defsymbolic
def _(s, input, ord=2, dim=None, keepdim=False):
    s.reduce_all(input, dim, "norm")
    if ord != 2:
        raise s.NoFormula(f"the {ord}-norm (formulas cover the 2-norm)")
    u = s.elem(input)
    return s.Norm(u), lambda g: g * u / s.Norm(u)


@composite("norm", grad_fn="LinalgVectorNormBackward0", method=True,
           note="d/dx = sign(x) |x|^(p-1) / norm^(p-1); 0 where the norm is 0; none for p = 0")
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The ``p``-norm of ``input`` over ``dim`` (all elements when None); ``"fro"`` is the 2-norm.
    Matches torch.norm, which computes it with torch.linalg.vector_norm (grad_fn LinalgVectorNormBackward0):
    the gradient at 0 is 0, and p = 0 (the count of non-zeros) has no gradient at all.

    Raises:
        RuntimeError: for integer tensors; ValueError for an unsupported ``p``.
    """
    if p in ("fro", None):
        p = 2
    if isinstance(p, str):
        raise ValueError(f"norm(): p={p!r} is not supported (use a number or 'fro')")
    if dtype is not None:
        input = input.to(dtype)
    if input.data.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{dtypes.scalar_type_name(input.data.dtype)}")
    return _vector_norm(input, float(p), dim, keepdim)


# ------------------------------------------------------------------------------------------- sum_to_size


@composite("sum_to_size", grad_fn="varies", note="d/dx = 1 (the gradient expanded back)", method=True)
def sum_to_size(input, *size):
    """Sum ``input`` down to the broadcast-compatible shape ``size``. Matches torch.Tensor.sum_to_size, which
    is ``sum(dims, keepdim=True)`` then ``view`` when leading dimensions go (SumBackward1, ViewBackward0), and
    returns ``input`` itself when nothing is summed.

    Raises:
        RuntimeError: if ``size`` is not expandable to ``input``'s shape (PyTorch's message).
    """
    size = _shape_arg(size)
    shape = tuple(input.shape)
    lead = len(shape) - len(size)
    if lead < 0 or _py.any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    if not size:
        return sum(input)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1)
    out = sum(input, axes, True) if axes else input
    return reshape(out, size) if lead > 0 else out


# ------------------------------------------------------------------------------- expand and repeat
# Copies of the input along new or size-1 dimensions: their derivatives sum the gradient over the copies.


@op("expand", grad_fn="ExpandBackward0", promote=None, method=True,
    note="sum the gradient over the expanded dimensions", formula="input: grad summed over the expanded dims",
    jvp="linear")
def expand(input, *sizes):
    """A broadcast view of ``input`` with the shape ``sizes`` (-1 keeps a size). Matches torch.Tensor.expand
    (at::inferExpandGeometry, which checks from the last dimension).

    Raises:
        RuntimeError: if a non-1 dimension would change (PyTorch's messages).
    """
    sizes = _shape_arg(sizes, "size")
    if len(sizes) < input.ndim:
        name = dtypes.scalar_type_name(input.dtype)
        raise RuntimeError(f"expand(torch.{name}Tensor{{{list(input.shape)}}}, size={list(sizes)}): the number of "
                           f"sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({input.ndim})")
    lead = len(sizes) - input.ndim
    target = [0] * len(sizes)
    for i in range(len(sizes) - 1, -1, -1):
        s = sizes[i]
        have = input.shape[i - lead] if i >= lead else 1
        if s == -1:
            if i < lead:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            s = have
        if have != s and have != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(input.shape)}")
        target[i] = s
    if any(s < 0 for s in target):
        bad = next(s for s in target if s < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {target}")
    limits.check_numel(target, "expand()")  # a view, but what is computed from it is not
    return np.broadcast_to(input, tuple(target))


@expand.defvjp
def _(grad, input_shape):
    return sum_to_size(grad, input_shape)


@composite("expand_as", grad_fn="ExpandBackward0", note="sum the gradient over the expanded dimensions",
           method=True)
def expand_as(input, other):
    """``input.expand(other.size())`` (ExpandBackward0). Matches torch.Tensor.expand_as."""
    return expand(input, _other_shape(other, "expand_as"))


@op("repeat", grad_fn="RepeatBackward0", promote=None, method=True, note="sum the gradient over the repeated copies",
    formula="input: grad summed over the repeated copies", jvp="linear")
def repeat(input, *repeats):
    """``input`` tiled ``repeats[i]`` times along each dimension (leading new dimensions when there are more
    repeats than dimensions). Matches torch.Tensor.repeat.

    Raises:
        RuntimeError: for fewer repeats than dimensions or a negative repeat (PyTorch's messages).
        TypeError: without repeats.
        LimitError: for a result of more than the ``elements`` limit (before it is allocated).
    """
    if not repeats:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    repeats = _shape_arg(repeats, "repeats")
    if len(repeats) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    padded = (1,) * (len(repeats) - input.ndim) + input.shape
    target = [s * r for s, r in zip(padded, repeats)]
    for s in target:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {target}")
    limits.check_numel(target, "repeat()")
    return np.ascontiguousarray(np.tile(input, repeats))


@repeat.defvjp
def _(grad, input_shape, repeats):
    repeats = _shape_arg(repeats, "repeats")
    padded = (1,) * (len(repeats) - len(input_shape)) + tuple(input_shape)
    interleaved = []
    for r, s in zip(repeats, padded):
        interleaved += [r, s]
    g = _reshape(grad, tuple(interleaved))
    g = sum(g, tuple(range(0, 2 * len(repeats), 2)))
    return _reshape(g, tuple(input_shape))


# ----------------------------------------------------------------------------------------- forward mode
# derivatives.yaml: sum, mean, cumsum, expand, repeat and the gathers are auto_linear (the op of the tangent);
# the value reductions' tangents are their partial derivatives times the tangent, summed per slice (prod:
# ``(prod_backward(ones, self_p, result, dim, keepdim) * self_t).sum(dim, keepdim)``; max(): evenly_read_jvp;
# amax: amaxamin_jvp; var/std/logsumexp/norm: their ``result:`` formulas, equal to this).


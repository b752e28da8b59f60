"""Creation functions: tensor, zeros, ones, full, eye, arange, linspace, rand, randn, randint, the *_like forms
and the Tensor methods new_zeros, new_ones, new_full and new_tensor.

Signatures, dtype inference and errors are PyTorch's: sizes may be given as ``ones(2, 3)``, ``ones((2, 3))``,
``ones([2, 3])`` or ``ones(size=(2, 3))`` (``full`` and ``randint`` take a tuple); ``dtype`` defaults to the
default float dtype (``tensor``, ``full``, ``arange`` and ``randint`` infer theirs); ``requires_grad=True``
makes a leaf that requires grad (float dtypes only). ``torch.tensor``'s inference (torch/csrc/utils/
tensor_new.cpp, ``infer_scalar_type``) keeps the dtype of numpy scalars and arrays and of tensors in a list.
Random numbers come from the run context's PyTorch CPU generator (:mod:`gradcli.engine.generator`), seeded by
:func:`manual_seed` (``--seed``): the same seed gives PyTorch's numbers.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..engine import context, dtypes, limits
from ..engine.tensor import Tensor
from .core.declare import check_requires_grad, composite, tensor_method
from .shape import layout as _layout

# the active run context's generator, made on first use (importing numpy.random costs start-up time)
_generator = context.generator


@composite("manual_seed", kind="function")
def manual_seed(seed: int) -> None:
    """Seed the generator behind rand/randn/randint/randperm/normal_/... in the active run context
    (torch.manual_seed: afterwards the numbers are PyTorch's).

    Raises:
        ValueError: for a seed that ``int()`` cannot read or outside [-2**63, 2**64) (PyTorch's messages).
    """
    context.manual_seed(seed)


def _leaf(data: np.ndarray, requires_grad: bool) -> Tensor:
    check_requires_grad(data, requires_grad)
    return Tensor(data, bool(requires_grad))


def _type_name(v) -> str:
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def _is_int(v) -> bool:
    return (isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))) or (
        isinstance(v, Tensor) and v.data.ndim == 0 and v.data.dtype.kind in "iu")


# ----------------------------------------------------------------------------------------------- sizes


def _size(name: str, size: tuple, kw_size=None) -> tuple:
    """The shape of ``name(*size)`` or ``name(size=...)``, parsed as PyTorch's argument parser does.

    Raises:
        TypeError: for a missing size or sizes that are not integers (PyTorch's messages).
        RuntimeError: for a negative size.
    """
    if kw_size is not None:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        size = (kw_size,)
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], list):
        for i, s in enumerate(size[0]):
            if not _is_int(s):
                raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, but found element "
                                f"of type {_type_name(s)} at pos {i}")
        items = size[0]
    elif len(size) == 1 and isinstance(size[0], tuple):
        items = size[0]
    elif len(size) == 1 and not _is_int(size[0]):
        raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{_type_name(size[0])}")
    else:
        items = size
    for i, s in enumerate(items):
        if not _is_int(s):
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                            f"\"type must be tuple of ints,but got {_type_name(s)}\"")
    shape = tuple(int(s) for s in items)
    for s in shape:
        if s < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    limits.check_numel(shape, "the new tensor")
    return shape


def _size_tuple(name: str, size, position: int) -> tuple:
    """A size that must be a tuple or list (full, randint)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{name}(): argument 'size' (position {position}) must be tuple of ints, not "
                        f"{_type_name(size)}")
    return _size(name, (size,))


def _float_dtype(dtype) -> np.dtype:
    return dtypes.as_dtype(dtype).np if dtype is not None else dtypes.get_default_dtype().np


# ------------------------------------------------------------------------------------------ torch.tensor


def _is_seq(v) -> bool:
    return isinstance(v, (list, tuple, range)) or (isinstance(v, np.ndarray) and v.ndim > 0)


def infer_scalar_type(data) -> np.dtype:
    """The dtype ``torch.tensor(data)`` gives: a tensor's or numpy value's own dtype, bool for Python bools,
    int64 for Python ints, the default float dtype for Python floats and empty lists, and PyTorch's type
    promotion over the elements of a list.

    Raises:
        TypeError: for strings and other non-numeric values, and a list that holds itself; RuntimeError for
            None; ValueError for lists nested deeper than a tensor's 64 dimensions, which also ends a walk
            through lists that hold each other (PyTorch's messages, tensor_new.cpp).
    """
    result = None
    stack = [(data, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, Tensor):
            d = v.data.dtype
        elif isinstance(v, (np.ndarray, np.generic)) and not isinstance(v, (np.str_, np.bytes_)):
            d = dtypes.from_numpy(np.asarray(v).dtype).np
        elif isinstance(v, bool):
            d = np.dtype(np.bool_)
        elif isinstance(v, int):
            d = np.dtype(np.int64)
        elif isinstance(v, float):
            d = dtypes.get_default_dtype().np
        elif isinstance(v, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(v).__name__}'")
        elif isinstance(v, (list, tuple, range)):
            if len(v) == 0:
                d = dtypes.get_default_dtype().np
            else:
                if depth >= 64:
                    raise ValueError(f"too many dimensions '{type(v).__name__}'")
                for item in v:
                    if item is v:
                        raise TypeError("new(): self-referential lists are incompatible")
                    stack.append((item, depth + 1))
                continue
        else:
            raise RuntimeError(f"Could not infer dtype of {type(v).__name__}")
        result = d if result is None else dtypes.promote_types(result, d)
    return result


def _scalar(v, kind: str):
    if isinstance(v, Tensor):
        if v.data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return v.data.reshape(()).item()
    if _is_seq(v):
        if kind == "f":
            raise TypeError(f"must be real number, not {type(v).__name__}")
        raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer")
    return v


def _store(obj, sizes, dim, out, kind) -> None:
    # torch's recursive_store: every sequence at depth ``dim`` must have length sizes[dim]
    if dim == len(sizes):
        out.append(_scalar(obj, kind))
        return
    if not _is_seq(obj):
        raise TypeError("not a sequence")
    if len(obj) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(obj)})")
    for v in obj:
        _store(v, sizes, dim + 1, out, kind)


_PYTHON_NUMBERS = frozenset((bool, int, float))


def _python_numbers_array(data, dtype):
    """The fast path of :func:`_array_from_data` for regular nested lists of Python numbers (None otherwise):
    numpy builds the array, the dtype is inferred from the types of the numbers."""
    try:
        leaves = np.array(data, dtype=object)
    except ValueError:
        return None
    level = [data]  # every container must be a list or tuple (numpy would unpack arrays into Python numbers)
    for depth in range(leaves.ndim):
        if not all(isinstance(c, (list, tuple)) for c in level):
            return None
        if depth < leaves.ndim - 1:
            level = [v for c in level for v in c]
    types = set(map(type, leaves.flat))
    if not types <= _PYTHON_NUMBERS:
        return None
    if dtype is None:
        dtype = (dtypes.get_default_dtype().np if float in types or not types else
                 np.dtype(np.int64) if int in types else np.dtype(np.bool_))
    try:
        return np.array(data, dtype=dtype)
    except OverflowError:
        return None


def _data_sizes(data) -> list:
    """The shape of nested sequences, from their first elements (PyTorch's compute_sizes).

    Raises:
        ValueError: for more than 64 dimensions (PyTorch's message).
        LimitError: for more values than the ``items`` or ``elements`` limit (before any is read: converting
            Python values takes time in proportion to their number, ``tensor(range(10 ** 9))``).
    """
    sizes = []
    seq = data
    while _is_seq(seq):
        if len(sizes) == 64:  # a tensor has at most 64 dimensions
            raise ValueError(f"too many dimensions '{type(seq).__name__}'")
        sizes.append(len(seq))
        if not len(seq):
            break
        seq = seq[0]
    n = math.prod(sizes)
    if n > limits.current.items:
        limits.check_items(n, "the data of tensor()")
    limits.check_numel(sizes, "tensor()")
    return sizes


def _array_from_data(data, dtype) -> np.ndarray:
    """The values of ``torch.tensor(data, dtype=dtype)`` as a numpy array (not necessarily a copy).

    Raises:
        TypeError, ValueError, RuntimeError: PyTorch's messages for non-numeric data and ragged lists.
        LimitError: see :func:`_data_sizes`.
    """
    if isinstance(data, Tensor):
        arr = data.data
    elif isinstance(data, np.ndarray):
        dtypes.from_numpy(data.dtype)
        arr = data
    elif (isinstance(data, (list, tuple)) and _data_sizes(data) is not None
          and (arr := _python_numbers_array(data, dtype)) is not None):
        return arr
    else:
        sizes = _data_sizes(data)
        inferred = infer_scalar_type(data)
        target = dtype if dtype is not None else inferred
        flat: list = []
        _store(data, sizes, 0, flat, target.kind)
        arr = np.array(flat, dtype=target).reshape(sizes)
    return arr if dtype is None else arr.astype(dtype, copy=False)


@composite("tensor", kind="creation")
def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new contiguous leaf tensor holding a copy of ``data`` (a number, nested lists/tuples of numbers or
    0-d tensors, a numpy array or scalar, or a Tensor, which warns as PyTorch does). dtype inference as
    torch.tensor (:func:`infer_scalar_type`); ``dtype`` converts (floats to integers truncate).

    Raises:
        TypeError: for strings and non-numeric data; ValueError for ragged lists; RuntimeError for None or if
            ``requires_grad`` is asked of a non-float tensor (PyTorch's messages).
    """
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
    d = None if dtype is None else dtypes.as_dtype(dtype).np
    arr = _array_from_data(data, d)
    return _leaf(np.array(arr, order="C", copy=True), requires_grad)


# ------------------------------------------------------------------------------------------- fills


def _check_kw(name: str, kw: dict) -> None:
    kw.pop("device", None)  # "cpu" is the only device
    if kw:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kw))}'")


@composite("zeros", kind="creation")
def zeros(*size, dtype=None, requires_grad=False, **kw):
    """A tensor of zeros of shape ``size`` (default float dtype unless ``dtype``). Matches torch.zeros.

    Raises:
        TypeError: for a missing or non-integer size; RuntimeError for a negative size (PyTorch's messages).
    """
    shape = _size("zeros", size, kw.pop("size", None))
    _check_kw("zeros", kw)
    return _leaf(np.zeros(shape, dtype=_float_dtype(dtype)), requires_grad)


@composite("ones", kind="creation")
def ones(*size, dtype=None, requires_grad=False, **kw):
    """A tensor of ones of shape ``size`` (default float dtype unless ``dtype``). Matches torch.ones.

    Raises:
        TypeError: for a missing or non-integer size; RuntimeError for a negative size (PyTorch's messages).
    """
    shape = _size("ones", size, kw.pop("size", None))
    _check_kw("ones", kw)
    return _leaf(np.ones(shape, dtype=_float_dtype(dtype)), requires_grad)


def _fill_dtype(fill_value) -> np.dtype:
    """full's dtype from its value: bool, int64 for integers, else the default float dtype."""
    if isinstance(fill_value, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(fill_value, (int, np.integer)):
        return np.dtype(np.int64)
    return dtypes.get_default_dtype().np


def _fill_scalar(name: str, fill_value):
    if isinstance(fill_value, Tensor):
        if fill_value.data.ndim:
            raise RuntimeError(f"{name}(): argument 'fill_value' must be a 0-dimensional tensor or a number")
        return fill_value.data.item()
    if not isinstance(fill_value, (bool, int, float, np.generic)):
        raise TypeError(f"{name}(): argument 'fill_value' must be Number, not {type(fill_value).__name__}")
    return fill_value


@composite("full", kind="creation")
def full(size, fill_value, dtype=None, requires_grad=False, device=None):
    """A tensor of shape ``size`` (a tuple or list) filled with ``fill_value``; dtype from the value (bool,
    int64, or the default float dtype) unless ``dtype``. Matches torch.full.

    Raises:
        TypeError: for a size that is not a tuple of ints; RuntimeError for a negative size.
    """
    shape = _size_tuple("full", size, 1)
    v = _fill_scalar("full", fill_value)
    d = dtypes.as_dtype(dtype).np if dtype is not None else _fill_dtype(v)
    return _leaf(np.full(shape, v, dtype=d), requires_grad)


@composite("eye", kind="creation")
def eye(n, m=None, dtype=None, requires_grad=False, device=None):
    """The n×m identity matrix (m defaults to n), default float dtype unless ``dtype``. Matches torch.eye.

    Raises:
        TypeError: for non-integer sizes; RuntimeError for negative ones (PyTorch's messages).
    """
    for arg, pos, v in (("n", 1, n), ("m", 2, m)):
        if v is not None and not _is_int(v):
            raise TypeError(f"eye(): argument '{arg}' (position {pos}) must be int, not {_type_name(v)}")
    n = int(n)
    m = n if m is None else int(m)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    limits.check_numel((n, m), "eye()")
    return _leaf(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad)


# ------------------------------------------------------------------------------------------ ranges


def _number(name: str, arg: str, v):
    if isinstance(v, Tensor):
        if v.data.size != 1:
            raise RuntimeError(f"{name}(): argument '{arg}' must be a 0-dimensional tensor or a number")
        v = v.data.reshape(()).item()
    if isinstance(v, np.generic):
        v = v.item()
    if not isinstance(v, (bool, int, float)):
        raise TypeError(f"{name}(): argument '{arg}' must be Number, not {type(v).__name__}")
    return v


def range_bounds(start, end, step, d: np.dtype) -> tuple:
    """``(start, end, step, integral)`` of torch.arange/torch.range after PyTorch's checks of the bounds: ints
    when ``d`` (the result's numpy dtype) is integral or bool.

    Raises:
        RuntimeError: for a zero step, an infinite bound or a step of the wrong sign (PyTorch's messages).
    """
    integral = d.kind in "iub"
    if integral:
        start, end, step = int(start), int(end), int(step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    return start, end, step, integral


@composite("arange", kind="creation")
def arange(start=None, end=None, step=1, dtype=None, requires_grad=False, device=None):
    """Values from ``start`` (default 0) up to ``end`` (exclusive) by ``step``: ``ceil((end - start) / step)``
    values ``start + i * step`` computed in float64 (int64 for integer dtypes), then converted. int64 unless an
    argument is a float (then the default float dtype) or ``dtype`` is given. Matches torch.arange.

    Raises:
        RuntimeError: for a zero step or a step of the wrong sign (PyTorch's messages).
    """
    if end is None:
        if start is None:
            raise TypeError("arange() missing 1 required positional arguments: \"end\"")
        start, end = 0, start
    elif start is None:
        start = 0
    start, end, step = (_number("arange", a, v) for a, v in (("start", start), ("end", end), ("step", step)))
    if dtype is not None:
        d = dtypes.as_dtype(dtype).np
    else:
        floats = any(isinstance(v, float) for v in (start, end, step))
        d = dtypes.get_default_dtype().np if floats else np.dtype(np.int64)
    start, end, step, integral = range_bounds(start, end, step, d)
    n = math.ceil(float(end - start) / step) if integral else math.ceil((float(end) - float(start)) / float(step))
    limits.check_numel((n,), "arange()")
    if integral:
        values = start + np.arange(n, dtype=np.int64) * step
    else:
        values = float(start) + np.arange(n, dtype=np.float64) * float(step)
    return _leaf(values.astype(d), requires_grad)


def _fma(a, b, c):
    """``a * b + c`` rounded once (a fused multiply-add), elementwise, in the dtype of ``a``: float32 through float64
    (whose product of two float32 values is exact), float64 by Dekker's exact product and a compensated sum."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == np.float32:
        return (a.astype(np.float64) * b.astype(np.float64) + np.float64(c)).astype(np.float32)
    p = a * b
    split = 134217729.0  # 2**27 + 1: Veltkamp's split of a float64 into two halves of 26 bits
    ah = a * split - (a * split - a)
    bh = b * split - (b * split - b)
    err = ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)  # p + err == a * b exactly
    t = p + c
    bv = t - p
    e2 = (p - (t - bv)) + (c - bv)  # t + e2 == p + c exactly
    return t + (err + e2)


@composite("linspace", kind="creation")
def linspace(start, end, steps, dtype=None, requires_grad=False, device=None):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive, default float dtype unless
    ``dtype``. Computed as PyTorch's CPU kernel does: in the result's dtype (float64 steps for integer
    dtypes, truncated), the first half from ``start`` and the second half from ``end``, with fused multiply-adds
    from 8 steps on (its vectorized loop; the values then equal PyTorch's to the last bit, which a long float32
    training loop on them shows). Matches torch.linspace.

    Raises:
        TypeError: for a non-integer ``steps``; RuntimeError for a negative one.
    """
    if not _is_int(steps):
        raise TypeError(f"linspace(): argument 'steps' (position 3) must be int, not {_type_name(steps)}")
    steps = int(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = _number("linspace", "start", start), _number("linspace", "end", end)
    d = _float_dtype(dtype)
    limits.check_numel((steps,), "linspace()")
    idx = np.arange(steps)
    if d.kind == "f":
        s, e = d.type(start), d.type(end)
        if steps == 1:
            values = np.full(1, s, dtype=d)
        else:
            step = (e - s) / d.type(steps - 1)
            half = steps // 2
            if d.itemsize < 4 or steps < 32 // d.itemsize:  # float16, or fewer steps than a 256-bit vector has lanes
                values = np.where(idx < half, s + step * idx.astype(d), e - step * (steps - idx - 1).astype(d))
            else:  # its vectorized loop: fused multiply-adds, one rounding each
                values = np.where(idx < half, _fma(step, idx.astype(d), s),
                                  _fma(-step, (steps - idx - 1).astype(d), e))
    else:
        s, e = int(start), int(end)
        if steps == 1:
            values = np.full(1, s)
        else:
            step = (float(e) - float(s)) / (steps - 1)
            half = steps // 2
            values = np.where(idx < half, s + step * idx, e - step * (steps - idx - 1))
            values = np.trunc(values)
    return _leaf(np.asarray(values).astype(d), requires_grad)


# ------------------------------------------------------------------------------------------ random

_KERNEL_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                 "bool": "Bool"}


def _random_float_dtype(kernel: str, d: np.dtype) -> np.dtype:
    if d.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_KERNEL_NAMES[dtypes.from_numpy(d).name]}'")
    return d


def _uniform(shape: tuple, d: np.dtype) -> np.ndarray:
    return _generator().uniform(shape, d)


def _normal(shape: tuple, d: np.dtype) -> np.ndarray:
    return _generator().normal(shape, d)


@composite("rand", kind="creation")
def rand(*size, dtype=None, requires_grad=False, generator=None, **kw):
    """Uniform samples in [0, 1) of shape ``size`` (float dtypes only). Matches torch.rand, number for number
    after the same seed (:mod:`gradcli.engine.generator`).

    Raises:
        NotImplementedError: for integer or bool dtypes (PyTorch's message); TypeError/RuntimeError for bad sizes.
    """
    shape = _size("rand", size, kw.pop("size", None))
    _check_kw("rand", kw)
    with context.drawing_from(generator):
        return _leaf(_uniform(shape, _random_float_dtype("check_uniform_bounds", _float_dtype(dtype))), requires_grad)


@composite("randn", kind="creation")
def randn(*size, dtype=None, requires_grad=False, generator=None, **kw):
    """Standard normal samples of shape ``size`` (float dtypes only). Matches torch.randn, number for number
    after the same seed (:mod:`gradcli.engine.generator`).

    Raises:
        NotImplementedError: for integer or bool dtypes (PyTorch's message); TypeError/RuntimeError for bad sizes.
    """
    shape = _size("randn", size, kw.pop("size", None))
    _check_kw("randn", kw)
    d = _random_float_dtype("normal_kernel_cpu", _float_dtype(dtype))
    with context.drawing_from(generator):
        return _leaf(_normal(shape, d), requires_grad)


@composite("randint", kind="creation")
def randint(*args, size=None, low=None, high=None, dtype=None, requires_grad=False, generator=None, device=None):
    """Integers uniform in [low, high) (low defaults to 0) of shape ``size`` (a tuple), int64 unless ``dtype``:
    ``randint(high, size)`` or ``randint(low, high, size)``. Matches torch.randint, number for number after the
    same seed (:mod:`gradcli.engine.generator`).

    Raises:
        TypeError: for a size that is not a tuple; RuntimeError if low >= high (PyTorch's messages).
    """
    args = list(args)
    if size is None:
        if not args:
            raise TypeError("randint() missing required argument 'size'")
        pos = len(args)
        size = args.pop()
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"randint(): argument 'size' (position {pos}) must be tuple of ints, not "
                            f"{_type_name(size)}")
    shape = _size("randint", (tuple(size) if isinstance(size, list) else size,))
    if high is None:
        if not args:
            raise TypeError("randint() missing required argument 'high'")
        high = args.pop()
    if low is None:
        low = args.pop() if args else 0
    if args:
        raise TypeError("randint() takes at most 3 positional arguments")
    for arg, v in (("low", low), ("high", high)):
        if not _is_int(v):
            raise TypeError(f"randint(): argument '{arg}' must be int, not {_type_name(v)}")
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    d = dtypes.as_dtype(dtype).np if dtype is not None else np.dtype(np.int64)
    with context.drawing_from(generator):
        return _leaf(_generator().random_from_to(shape, low, high, d), requires_grad)


# --------------------------------------------------------------------------------------------- *_like


def _like_input(name: str, input) -> np.ndarray:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.data


def _like(name, fill, doc, batchable: bool = False, random: bool = False):
    def like(input, dtype=None, requires_grad=False, device=None, *, generator=None):
        if generator is not None and not random:
            raise TypeError(f"{name}() got an unexpected keyword argument 'generator'")
        with context.drawing_from(generator):
            return _like_fill(input, dtype, requires_grad)

    def _like_fill(input, dtype, requires_grad):
        a = _like_input(name, input)
        d = dtypes.as_dtype(dtype).np if dtype is not None else a.dtype
        # inside vmap (a BatchedTensor has ``batched_like``), a constant fill is batched as the input is, as in
        # PyTorch: an in-place op on it may then take batched values
        batched = getattr(input, "batched_like", None) if batchable and not requires_grad else None
        if batched is not None:
            return batched(lambda shape: fill(shape, d))
        return _leaf(fill(a.shape, d), requires_grad)

    like.__name__ = like.__qualname__ = name
    like.__doc__ = doc
    return composite(name, kind="creation")(like)


zeros_like = _like("zeros_like", lambda shape, d: np.zeros(shape, dtype=d),
                   "Zeros with the shape (and dtype, unless ``dtype``) of ``input``. Matches torch.zeros_like.",
                   batchable=True)
ones_like = _like("ones_like", lambda shape, d: np.ones(shape, dtype=d),
                  "Ones with the shape (and dtype, unless ``dtype``) of ``input``. Matches torch.ones_like.",
                  batchable=True)
rand_like = _like("rand_like", lambda shape, d: _uniform(shape, _random_float_dtype("check_uniform_bounds", d)),
                  "Uniform [0, 1) samples with the shape (and float dtype) of ``input``. Like torch.rand_like.\n\n"
                  "Raises:\n    NotImplementedError: for integer or bool dtypes (PyTorch's message).", random=True)
randn_like = _like("randn_like",
                   lambda shape, d: _normal(shape, _random_float_dtype("normal_kernel_cpu", d)),
                   "Standard normal samples with the shape (and float dtype) of ``input``. Like torch.randn_like."
                   "\n\nRaises:\n    NotImplementedError: for integer or bool dtypes (PyTorch's message).", random=True)


@composite("full_like", kind="creation")
def full_like(input, fill_value, dtype=None, requires_grad=False, device=None):
    """``fill_value`` (converted to the dtype) with the shape and dtype (unless ``dtype``) of ``input``.
    Matches torch.full_like."""
    a = _like_input("full_like", input)
    d = dtypes.as_dtype(dtype).np if dtype is not None else a.dtype
    return _leaf(np.full(a.shape, _fill_scalar("full_like", fill_value), dtype=d), requires_grad)


# ------------------------------------------------------------------------------------- Tensor.new_*


def _new_dtype(self, dtype) -> np.dtype:
    return dtypes.as_dtype(dtype).np if dtype is not None else self.data.dtype


@tensor_method("new_zeros")
def _new_zeros(self, *size, dtype=None, requires_grad=False, device=None):
    """Zeros of shape ``size`` with this tensor's dtype (unless ``dtype``). Matches torch.Tensor.new_zeros."""
    return _leaf(np.zeros(_size("new_zeros", size), dtype=_new_dtype(self, dtype)), requires_grad)


@tensor_method("new_ones")
def _new_ones(self, *size, dtype=None, requires_grad=False, device=None):
    """Ones of shape ``size`` with this tensor's dtype (unless ``dtype``). Matches torch.Tensor.new_ones."""
    return _leaf(np.ones(_size("new_ones", size), dtype=_new_dtype(self, dtype)), requires_grad)


@tensor_method("new_full")
def _new_full(self, size, fill_value, dtype=None, requires_grad=False, device=None):
    """``fill_value`` in shape ``size`` (a tuple) with this tensor's dtype (unless ``dtype``). Matches
    torch.Tensor.new_full."""
    shape = _size_tuple("new_full", size, 1)
    return _leaf(np.full(shape, _fill_scalar("new_full", fill_value), dtype=_new_dtype(self, dtype)),
                 requires_grad)


@tensor_method("new_tensor")
def _new_tensor(self, data, dtype=None, requires_grad=False, device=None):
    """A new leaf holding a copy of ``data`` with this tensor's dtype (unless ``dtype``). Matches
    torch.Tensor.new_tensor."""
    return tensor(data, dtype=dtypes.from_numpy(_new_dtype(self, dtype)), requires_grad=requires_grad)


# --------------------------------------------------------------------------------------------- empty
# PyTorch's empty tensors hold whatever the allocator returned; gradcli's hold zeros (a value PyTorch's could
# hold too), so a program that fills them before reading, as every correct program does, prints the same.


@composite("empty", kind="creation")
def empty(*size, dtype=None, requires_grad=False, **kw):
    """An uninitialised tensor of shape ``size`` (default float dtype unless ``dtype``); gradcli's holds
    zeros. Matches torch.empty (``memory_format=torch.channels_last`` lays it out as PyTorch does; ``pin_memory``
    is accepted and has no effect).

    Raises:
        TypeError: for a missing or non-integer size; RuntimeError for a negative size (PyTorch's messages).
    """
    shape = _size("empty", size, kw.pop("size", None))
    fmt = kw.pop("memory_format", None)
    kw.pop("pin_memory", None)
    _check_kw("empty", kw)
    out = np.zeros(shape, dtype=_float_dtype(dtype))
    if fmt is not None:  # channels_last: the dims in the format's order (the dims in the format's order)
        out = _layout.allocate(shape, out.dtype, _layout.format_order(fmt, len(shape)))
    return _leaf(out, requires_grad)


empty_like = _like("empty_like", lambda shape, d: np.zeros(shape, dtype=d),
                   "An uninitialised tensor (zeros in gradcli) with the shape (and dtype, unless ``dtype``) of "
                   "``input``. Matches torch.empty_like.")


@tensor_method("new_empty")
def _new_empty(self, *size, dtype=None, requires_grad=False, device=None):
    """An uninitialised tensor (zeros in gradcli) of shape ``size`` with this tensor's dtype (unless
    ``dtype``). Matches torch.Tensor.new_empty."""
    return _leaf(np.zeros(_size("new_empty", size), dtype=_new_dtype(self, dtype)), requires_grad)

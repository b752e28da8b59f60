"""Data types: PyTorch's names, default dtype and type-promotion rules on top of numpy dtypes.

A :class:`DType` wraps a numpy dtype and prints as PyTorch does (``torch.float32``). The default floating
dtype is float32, as in PyTorch, and can be changed with :func:`set_default_dtype` (``--dtype float64``). It
belongs to the active run context (:mod:`gradcli.engine.context`, which swaps it when a context is activated).

Type promotion follows PyTorch's ``at::result_type`` (c10/core/ScalarType.h and
aten/src/ATen/native/TypeProperties.cpp), which differs from numpy's: operands are ranked as tensors with
dimensions > zero-dimensional tensors > Python numbers ("wrapped numbers"), and a lower rank only changes the
result when it belongs to a higher category (bool < integer < floating). So ``float32 tensor + 2.5`` stays
float32, ``int64 tensor * 2.5`` is the default float dtype, and ``float32 (3,) + float64 ()`` is float32.
"""

from __future__ import annotations

import numpy as np


class DType:
    """A tensor element type: a numpy dtype with PyTorch's name.

    Attributes:
        name: PyTorch's name without the ``torch.`` prefix (``"float32"``).
        np: the numpy dtype.
        is_floating_point: True for float16/32/64.
    """

    __slots__ = ("name", "np", "is_floating_point", "itemsize")

    def __init__(self, name: str, np_dtype):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    __str__ = __repr__


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
uint8 = DType("uint8", np.uint8)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
bool_ = DType("bool", np.bool_)

ALL = (float16, float32, float64, uint8, int8, int16, int32, int64, bool_)
_BY_NP = {d.np: d for d in ALL}

#: Every name PyTorch accepts for a dtype (``torch.float``, ``torch.long``, ...), mapped to the DType.
NAMES = {d.name: d for d in ALL}
NAMES.update({"half": float16, "float": float32, "double": float64, "short": int16, "int": int32,
              "long": int64})

#: PyTorch's legacy CPU tensor types (``torch.FloatTensor``, what ``x.type()`` returns), by the dtype they hold.
LEGACY_TYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
                "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16",
                "CharTensor": "int8", "ByteTensor": "uint8", "BoolTensor": "bool"}

#: The default floating dtype of the active run context (a holder that gradcli.engine.context swaps).
_default = float32


def get_default_dtype() -> DType:
    """The default floating dtype of the active run context (float32 unless changed), as
    ``torch.get_default_dtype()``."""
    return _default


def set_default_dtype(d) -> None:
    """Set the default floating dtype of the active run context; accepts a DType, a numpy dtype or a name
    (float32 or float64 only).

    Raises:
        TypeError: for a non-floating dtype, with PyTorch's message.
    """
    global _default
    d = as_dtype(d)
    if d not in (float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default = d


def as_dtype(d) -> DType:
    """Convert a DType, numpy dtype, Python type (float, int, bool) or name to a DType.

    Raises:
        TypeError: for anything else or an unsupported dtype.
    """
    if isinstance(d, DType):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if isinstance(d, str):
        name = d[6:] if d.startswith("torch.") else d
        if name in NAMES:
            return NAMES[name]
        raise TypeError(f"unsupported dtype {d!r}; expected one of: {', '.join(sorted(NAMES))}")
    try:
        return _BY_NP[np.dtype(d)]
    except (TypeError, KeyError):
        raise TypeError(f"unsupported dtype {d!r}") from None


def from_numpy(npd) -> DType:
    """The DType of a numpy dtype. Raises TypeError for dtypes gradcli does not support."""
    try:
        return _BY_NP[npd]
    except KeyError:
        return as_dtype(npd)


def _category(npd: np.dtype) -> int:
    kind = npd.kind
    return 2 if kind == "f" else (0 if kind == "b" else 1)


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """PyTorch's ``torch.promote_types`` on numpy dtypes: bool < integers < floats; a float always wins
    over an integer (int64 with float16 is float16, unlike numpy's float64)."""
    if a == b:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    return np.promote_types(a, b)


def result_type(dim: list, zerodim: list, wrapped: list) -> np.dtype:
    """PyTorch's ``at::result_type`` for elementwise operands.

    Args:
        dim: numpy dtypes of tensors with one or more dimensions.
        zerodim: numpy dtypes of 0-d tensors.
        wrapped: Python numbers (bool, int, float) given where a tensor is expected.

    Returns:
        The numpy dtype every operand is cast to.
    """
    def fold(dtypes):
        out = None
        for d in dtypes:
            out = d if out is None else promote_types(out, d)
        return out

    default = _default.np
    w = fold([np.dtype(np.bool_) if isinstance(v, (bool, np.bool_)) else
              (np.dtype(np.int64) if isinstance(v, (int, np.integer)) else default) for v in wrapped])
    return _combine(fold(dim), _combine(fold(zerodim), w))


def _combine(higher, lower):
    # c10's combine_categories: a lower-priority operand only matters if it is of a higher category.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if _category(higher) == 2:
        return higher
    if higher.kind == "b" or _category(lower) == 2:
        return promote_types(higher, lower)
    return higher


def infer_dtype(value) -> np.dtype:
    """The dtype ``torch.tensor(value)`` gives to nested Python data: bool, int64 or the default float.

    Raises:
        TypeError: for values that are not numbers or nested lists of numbers.
        ValueError: for lists nested deeper than a tensor's 64 dimensions (or containing themselves).
    """
    kinds = set()
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (list, tuple)):
            if depth >= 64:
                raise ValueError("lists nested more than 64 deep (a tensor has at most 64 dimensions)")
            stack.extend((item, depth + 1) for item in v)
        elif isinstance(v, (bool, np.bool_)):
            kinds.add("b")
        elif isinstance(v, (int, np.integer)):
            kinds.add("i")
        elif isinstance(v, (float, np.floating)):
            kinds.add("f")
        elif isinstance(v, np.ndarray):
            kinds.add("f" if v.dtype.kind == "f" else ("b" if v.dtype.kind == "b" else "i"))
        else:
            raise TypeError(f"Could not infer dtype of {type(v).__name__}")
    if "f" in kinds or not kinds:
        return _default.np
    if "i" in kinds:
        return np.dtype(np.int64)
    return np.dtype(np.bool_)


# ------------------------------------------------------------------------------- PyTorch's names in messages
#: PyTorch's ScalarType name of each dtype (c10::toString), as its error messages print it: "... not implemented
#: for 'Long'", "expected scalar type Float but found Double", ``torch.FloatTensor``.
SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "uint8": "Byte", "int8": "Char",
                     "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool"}

#: The C++ type of each dtype, as the messages of PyTorch's templated kernels print it (mm: "expected m1 and m2
#: to have the same dtype, but got: float != double"; clamp_: "desired output type long int").
C_TYPE_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double", "uint8": "unsigned char",
                "int8": "signed char", "int16": "short int", "int32": "int", "int64": "long int", "bool": "bool"}


def _dtype_name(d) -> str:
    return d.name if isinstance(d, DType) else np.dtype(d).name


def scalar_type_name(d) -> str:
    """PyTorch's ScalarType name (``"Float"``, ``"Long"``) of a DType, numpy dtype or anything numpy reads as
    one; numpy's own name for a dtype PyTorch does not have."""
    name = _dtype_name(d)
    return SCALAR_TYPE_NAMES.get(name, name)


def c_type_name(d) -> str:
    """The C++ type name (``"float"``, ``"long int"``) PyTorch's kernels print for a dtype (see
    :data:`C_TYPE_NAMES`); numpy's own name for a dtype PyTorch does not have."""
    name = _dtype_name(d)
    return C_TYPE_NAMES.get(name, name)

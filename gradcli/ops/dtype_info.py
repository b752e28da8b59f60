"""torch's dtype and printing utilities: promote_types, result_type, can_cast, finfo, iinfo, set_default_dtype,
set_printoptions (whose options the active run context keeps, read by :mod:`gradcli.engine.printing`).

They compute nothing on tensors' values, so they are functions of the namespace (``kind="function"``), not ops.
Promotion is :mod:`gradcli.engine.dtypes`' (PyTorch's categories: bool < integers < floats); the default dtype
is the active run context's.
"""

from __future__ import annotations

import math

import numpy as np

from ..engine import context, dtypes, printing
from ..engine.tensor import Tensor
from .core.declare import composite


def _dtype(d, fn: str, arg: str, pos: int) -> dtypes.DType:
    if not isinstance(d, dtypes.DType):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be torch.dtype, not {type(d).__name__}")
    return d


@composite("promote_types", kind="function")
def promote_types(type1, type2):
    """The smallest dtype both ``type1`` and ``type2`` convert to without losing their category (bool <
    integers < floats). Matches torch.promote_types.

    Raises:
        TypeError: for an argument that is not a dtype (PyTorch's message).
    """
    a, b = _dtype(type1, "promote_types", "type1", 1), _dtype(type2, "promote_types", "type2", 2)
    return dtypes.from_numpy(dtypes.promote_types(a.np, b.np))


@composite("result_type", kind="function")
def result_type(tensor, other):
    """The dtype an elementwise op on ``tensor`` and ``other`` (tensors or Python numbers) computes in:
    dimensioned tensors before 0-d ones before numbers, a higher category always winning. Matches
    torch.result_type.

    Raises:
        TypeError: when neither argument is a tensor (PyTorch's message).
    """
    dim, zero, wrapped = [], [], []
    for v in (tensor, other):
        if isinstance(v, Tensor):
            (dim if v.data.ndim else zero).append(v.data.dtype)
        elif isinstance(v, (bool, int, float)):
            wrapped.append(v)
        else:
            raise TypeError(f"result_type(): argument 'other' must be Tensor or Number, not {type(v).__name__}")
    if not dim and not zero:
        raise TypeError("result_type() received an invalid combination of arguments - got (two numbers)")
    return dtypes.from_numpy(dtypes.result_type(dim, zero, wrapped))


@composite("can_cast", kind="function")
def can_cast(from_, to):
    """Whether PyTorch's casting rules allow ``from_`` to become ``to`` in an in-place op: not a float to an
    integer or bool, not an integer to bool. Matches torch.can_cast.

    Raises:
        TypeError: for an argument that is not a dtype (PyTorch's message).
    """
    a, b = _dtype(from_, "can_cast", "from_", 1), _dtype(to, "can_cast", "to", 2)
    if a.np.kind == "f" and b.np.kind != "f":
        return False
    return not (a.np.kind != "b" and b.np.kind == "b")


def _g(v) -> str:
    """A number as PyTorch's finfo/iinfo reprs print it (C's ``%g``)."""
    return f"{v:g}"


class finfo_type(tuple):
    """torch.finfo: the numerical properties of a floating dtype (bits, eps, max, min, tiny, smallest_normal,
    resolution, dtype), printed as PyTorch prints them."""

    __slots__ = ()
    _fields = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __repr__(self) -> str:
        bits, eps, mx, mn, tiny, normal, res, name = self
        return (f"finfo(resolution={_g(res)}, min={_g(mn)}, max={_g(mx)}, eps={_g(eps)}, "
                f"smallest_normal={_g(normal)}, tiny={_g(tiny)}, dtype={name})")

    __str__ = __repr__


class iinfo_type(tuple):
    """torch.iinfo: the numerical properties of an integer dtype (bits, max, min, dtype), printed as PyTorch
    prints them."""

    __slots__ = ()
    _fields = ("bits", "max", "min", "dtype")

    def __repr__(self) -> str:
        return f"iinfo(min={_g(self[2])}, max={_g(self[1])}, dtype={self[3]})"

    __str__ = __repr__


finfo_type.__name__ = finfo_type.__qualname__ = "finfo"
iinfo_type.__name__ = iinfo_type.__qualname__ = "iinfo"


@composite("finfo", kind="function")
def finfo(type=None):
    """The properties of the floating dtype ``type`` (the default dtype when omitted): ``bits``, ``eps``,
    ``max``, ``min``, ``tiny`` (= ``smallest_normal``), ``resolution`` (``10 ** -precision``) and ``dtype``
    (its name), as Python numbers. Matches torch.finfo.

    Raises:
        TypeError: for a dtype that is not floating (PyTorch's message).
    """
    d = dtypes.get_default_dtype() if type is None else _dtype(type, "finfo", "type", 1)
    if d.np.kind != "f":
        raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                        "'torch.finfo'")
    info = np.finfo(d.np)
    resolution = float(10 ** -int(-math.log10(float(info.eps))))
    return finfo_type((info.bits, float(info.eps), float(info.max), float(info.min), float(info.tiny),
                       float(info.smallest_normal), resolution, d.name))


@composite("iinfo", kind="function")
def iinfo(type):
    """The properties of the integer dtype ``type``: ``bits``, ``max``, ``min`` (Python ints) and ``dtype``
    (its name). Matches torch.iinfo.

    Raises:
        TypeError: for a floating or bool dtype (PyTorch's message).
    """
    d = _dtype(type, "iinfo", "type", 1)
    if d.np.kind not in "iu":
        raise TypeError("torch.bool is not supported by torch.iinfo" if d.np.kind == "b" else
                        "torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
    info = np.iinfo(d.np)
    return iinfo_type((info.bits, int(info.max), int(info.min), d.name))


@composite("set_default_dtype", kind="function")
def set_default_dtype(d) -> None:
    """Make ``d`` (torch.float32 or torch.float64) the default floating dtype of the active run context: of
    ``torch.tensor`` of Python floats, of the creation functions, and of integer ops that give floats. Matches
    torch.set_default_dtype.

    Raises:
        TypeError: for a non-floating dtype (PyTorch's message).
    """
    dtypes.set_default_dtype(d)



@composite("set_printoptions", kind="function")
def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Set how tensors print in the active run context: ``precision`` (digits after the point), ``threshold``
    (elements before a tensor is summarized), ``edgeitems`` (rows kept at each end of a summary), ``linewidth``,
    ``profile`` ("default", "short" or "full": all four at once, before the others given) and ``sci_mode``
    (True/False forces scientific notation on or off; None, the default, lets the values decide). Options not
    given keep their value, except ``sci_mode``, which is always set. Matches torch.set_printoptions.

    Raises:
        ValueError: for an unknown ``profile``.
    """
    current = printing.print_options()
    if profile is not None:
        if profile not in printing.PROFILES:
            raise ValueError(f"Unknown profile {profile!r}; expected one of: default, short, full")
        current = current._replace(**dict(zip(("precision", "threshold", "edgeitems", "linewidth"),
                                              printing.PROFILES[profile])))
    given = {"precision": precision, "threshold": threshold, "edgeitems": edgeitems, "linewidth": linewidth}
    current = current._replace(**{k: v for k, v in given.items() if v is not None}, sci_mode=sci_mode)
    context.state.print_options = None if current == printing.DEFAULT_OPTIONS else current

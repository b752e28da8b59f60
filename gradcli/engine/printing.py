"""Text rendering of gradcli values, character-for-character like PyTorch.

The tensor layout below is a transcription of ``torch/_tensor_str.py`` of
PyTorch 2.13 (``_Formatter``, ``_vector_str``, ``_tensor_str_with_formatter``,
``get_summarized_data``, ``_add_suffixes`` and the dense-CPU path of
``_str_intern``) with torch's default print options.  It works on numpy
arrays only; torch is never imported here, it is only used by the tests as
an oracle.
"""

from __future__ import annotations

import math
import types
from typing import NamedTuple

import numpy as np

from . import context as _context

__all__ = ["format_tensor", "format_value", "format_display"]



class PrintOptions(NamedTuple):
    """torch.set_printoptions' options: digits after the point, how many elements a tensor may have before it
    is summarized, how many rows and columns a summary keeps at each end, the line width, and the scientific
    notation (None: torch's choice from the values). The active run context holds them
    (``gradcli.engine.context.state.print_options``; None there means these defaults, torch's "default"
    profile)."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


DEFAULT_OPTIONS = PrintOptions()

#: torch.set_printoptions' profiles: (precision, threshold, edgeitems, linewidth).
PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def print_options() -> PrintOptions:
    """The print options of the active run context."""
    return _context.state.print_options or DEFAULT_OPTIONS

_PREFIX = "tensor("

# numpy dtype -> the text of str(torch_dtype).  Anything else has no torch
# counterpart that gradcli claims to reproduce, so it is rejected.
_TORCH_DTYPE_NAMES = {
    np.dtype(np.float16): "torch.float16",
    np.dtype(np.float32): "torch.float32",
    np.dtype(np.float64): "torch.float64",
    np.dtype(np.int8): "torch.int8",
    np.dtype(np.int16): "torch.int16",
    np.dtype(np.int32): "torch.int32",
    np.dtype(np.int64): "torch.int64",
    np.dtype(np.uint8): "torch.uint8",
    np.dtype(np.bool_): "torch.bool",
}

# torch.set_default_dtype only accepts floating dtypes.
_DEFAULT_DTYPE_CHOICES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


class _Formatter:
    """Per-tensor number layout, as torch's ``_Formatter`` decides it.

    ``values`` must already be float64 for floating tensors: torch formats
    Python floats obtained through ``.item()``/``.tolist()``, which are the
    exact float64 images of float16/float32 values, and it does its min/max
    ratio arithmetic in double, so float64 gives the same decisions and the
    same digits.
    """

    def __init__(self, values: np.ndarray, floating: bool, opts: PrintOptions = DEFAULT_OPTIONS):
        self.opts = opts
        self.precision = opts.precision
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1

        flat = values.reshape(-1)
        if not floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return

        # Zeros, nans and infs never widen the columns nor influence the
        # mode: torch only looks at nonzero finite values.
        nonzero_finite = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero_finite.size == 0:
            return

        abs_vals = np.abs(nonzero_finite)
        nz_min = float(abs_vals.min())
        nz_max = float(abs_vals.max())

        self.int_mode = bool(np.all(nonzero_finite == np.ceil(nonzero_finite)))
        self.sci_mode = nz_max / nz_min > 1000.0 or nz_max > 1.0e8 or nz_min < 1.0e-4
        if opts.sci_mode is not None:
            self.sci_mode = bool(opts.sci_mode)

        py_vals = nonzero_finite.tolist()
        if self.sci_mode:
            width = max(len(f"{v:.{opts.precision}e}") for v in py_vals)
        elif self.int_mode:
            # +1 for the trailing "." that marks a float tensor.
            width = max(len(f"{v:.0f}") for v in py_vals) + 1
        else:
            width = max(len(f"{v:.{opts.precision}f}") for v in py_vals)
        self.max_width = max(self.max_width, width)

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{self.precision}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{self.precision}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _summarized_data(values: np.ndarray, edgeitems: int) -> np.ndarray:
    """Only the elements that will be shown, like torch's ``get_summarized_data``.

    torch recursively keeps the first and last ``edgeitems`` rows of every
    dimension longer than ``2 * edgeitems``; selecting those indices along
    each axis independently yields the same set of elements.
    """
    keep = np.r_[0:edgeitems, -edgeitems:0] if edgeitems else np.zeros(0, dtype=np.int64)
    for axis, size in enumerate(values.shape):
        if size > 2 * edgeitems:
            values = np.take(values, keep, axis=axis)
    return values


def _vector_str(values: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    edge = formatter.opts.edgeitems
    element_length = formatter.width() + 2  # ", " between elements
    elements_per_line = max(1, math.floor((formatter.opts.linewidth - indent) / element_length))

    if summarize and values.shape[0] > 2 * edge:
        data = (
            [formatter.format(v) for v in values[:edge].tolist()]
            + [" ..."]
            + [formatter.format(v) for v in (values[-edge:].tolist() if edge else [])]
        )
    else:
        data = [formatter.format(v) for v in values.tolist()]

    lines = [
        ", ".join(data[i : i + elements_per_line])
        for i in range(0, len(data), elements_per_line)
    ]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(
    values: np.ndarray, indent: int, summarize: bool, formatter: _Formatter
) -> str:
    dim = values.ndim
    if dim == 0:
        return formatter.format(values.item())
    if dim == 1:
        return _vector_str(values, indent, summarize, formatter)

    size = values.shape[0]
    edge = formatter.opts.edgeitems
    if summarize and size > 2 * edge:
        rows = list(range(edge)) + [None] + list(range(size - edge, size))
    else:
        rows = list(range(size))
    slices = [
        "..." if i is None else _tensor_str_with_formatter(values[i], indent + 1, summarize, formatter)
        for i in rows
    ]
    # Blank lines between blocks grow with the dimension, as in torch.
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(tensor_str: str, suffixes: list[str], indent: int, linewidth: int = 80) -> str:
    parts = [tensor_str]
    # torch's own arithmetic (it over-counts by 2 when there is no newline);
    # kept verbatim because it decides where the suffixes wrap.
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def format_tensor(
    data: "np.ndarray",
    *,
    requires_grad: bool = False,
    grad_fn: str | None = None,
    default_dtype: "np.dtype" = np.float32,
    threshold: int | None = None,
    tangent: str | None = None,
) -> str:
    """Return exactly ``str(t)`` (== ``repr(t)``) of the equivalent torch tensor.

    Inputs:
        data: numpy array of any shape (0-d included, empty included) whose
            dtype is one of float16, float32, float64, int8, int16, int32,
            int64, uint8, bool.  Anything ``np.asarray`` accepts is taken.
        requires_grad: the tensor is a leaf that requires grad; adds the
            ``requires_grad=True`` suffix (ignored when ``grad_fn`` is given,
            as in torch).
        grad_fn: name of the node that produced a non-leaf tensor, e.g.
            ``"MulBackward0"``; adds ``grad_fn=<MulBackward0>``.
        tangent: the printed forward-AD tangent of a dual tensor; adds
            ``tangent=...`` last (torch/_tensor_str.py).
        default_dtype: what ``torch.get_default_dtype()`` would return
            (float32 or float64; float16 is accepted too, as torch does).
            Tensors of that dtype, int64 and bool get no ``dtype=`` suffix
            unless they are empty.
        threshold: summarize tensors of more elements than this, as after
            ``torch.set_printoptions(threshold=...)`` (default 1000, torch's).

    Torch refuses ``requires_grad`` on non-floating tensors; this function
    does not police that and simply prints the suffix it is asked for.

    Raises:
        TypeError: ``data`` has a dtype outside the list above.
        ValueError: ``default_dtype`` is not a floating dtype.

    Convention: matches ``torch/_tensor_str.py`` of PyTorch 2.13 with the
    active run context's print options (torch.set_printoptions; by default
    precision 4, threshold 1000, edgeitems 3, linewidth 80), for dense CPU
    tensors.
    """
    opts = print_options()
    arr = np.asarray(data)
    dtype = arr.dtype
    # Byte order does not change the values, and torch has no such notion.
    if not dtype.isnative:
        dtype = dtype.newbyteorder("=")
        arr = arr.astype(dtype)
    if dtype not in _TORCH_DTYPE_NAMES:
        raise TypeError(f"format_tensor: unsupported dtype {dtype}")
    default = np.dtype(default_dtype)
    if default not in _DEFAULT_DTYPE_CHOICES:
        raise ValueError(f"format_tensor: default_dtype must be a floating dtype, got {default}")

    indent = len(_PREFIX)
    suffixes: list[str] = []
    floating = dtype.kind == "f"

    if arr.size == 0:
        # numpy prints the shape of empty arrays unless they are 1-d; torch follows.
        if arr.ndim != 1:
            suffixes.append("size=" + str(tuple(int(s) for s in arr.shape)))
        # No elements to infer the dtype from, so even int64/bool is spelled out.
        if dtype != default:
            suffixes.append("dtype=" + _TORCH_DTYPE_NAMES[dtype])
        tensor_str = "[]"
    else:
        if dtype not in (default, np.dtype(np.int64), np.dtype(np.bool_)):
            suffixes.append("dtype=" + _TORCH_DTYPE_NAMES[dtype])
        values = arr.astype(np.float64) if floating else arr
        summarize = values.size > (opts.threshold if threshold is None else threshold)
        formatter = _Formatter(_summarized_data(values, opts.edgeitems) if summarize else values, floating, opts)
        tensor_str = _tensor_str_with_formatter(values, indent, summarize, formatter)

    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")

    return _add_suffixes(_PREFIX + tensor_str, suffixes, indent, opts.linewidth)


def _is_tensor_like(obj) -> bool:
    return isinstance(getattr(obj, "data", None), np.ndarray) and hasattr(obj, "requires_grad")


def _is_grad_fn_like(obj) -> bool:
    # Classes are excluded because their ``name`` would be an unbound method.
    return (
        not isinstance(obj, type)
        and callable(getattr(obj, "name", None))
        and not hasattr(obj, "data")
    )


def _is_namedtuple(obj) -> bool:
    # Only collections.namedtuple's generated __repr__ is reproduced; a tuple
    # subclass with its own __repr__ is left to that __repr__.
    rep = getattr(type(obj), "__repr__", None)
    return isinstance(obj, tuple) and getattr(rep, "__qualname__", "") == "namedtuple.<locals>.__repr__"


def _object_address(obj) -> str:
    # object.__repr__ formats the address with CPython's %p rules
    # (e.g. "0x7f3a..." on Linux, zero-padded on Windows); reuse it verbatim.
    return object.__repr__(obj).rsplit(" object at ", 1)[1].rstrip(">")


def _repr(obj, default_dtype, active: set[int]) -> str:
    if _is_tensor_like(obj):
        grad_fn = getattr(obj, "grad_fn", None)
        tangent = getattr(obj, "_tangent_text", None)  # a dual tensor's (gradcli.engine.tensor.Tensor._tangent_text)
        prefix = getattr(obj, "_repr_prefix", None)  # "Parameter containing:\n" (gradcli.engine.tensor.Tensor)
        return (prefix() if callable(prefix) else "") + format_tensor(
            obj.data,
            requires_grad=bool(obj.requires_grad),
            grad_fn=None if grad_fn is None else str(grad_fn.name()),
            default_dtype=default_dtype,
            tangent=tangent() if callable(tangent) else None,
        )
    if _is_grad_fn_like(obj):
        # a custom Function's node prints under its Python module (torch.autograd.function.MyExpBackward)
        qualified = getattr(obj, "qualified_name", None)
        return f"<{qualified() if callable(qualified) else obj.name()} object at {_object_address(obj)}>"

    kind = type(obj)
    is_namedtuple = _is_namedtuple(obj)
    if kind not in (tuple, list, dict) and not is_namedtuple:
        return repr(obj)

    # Python's Py_ReprEnter guard: a container that contains itself prints as "[...]".
    if id(obj) in active:
        return {tuple: "(...)", list: "[...]", dict: "{...}"}.get(kind, "...")
    active.add(id(obj))
    try:
        if is_namedtuple:
            fields = ", ".join(
                f"{name}={_repr(v, default_dtype, active)}" for name, v in zip(kind._fields, obj)
            )
            return f"{kind.__name__}({fields})"
        if kind is dict:
            items = ", ".join(
                f"{_repr(k, default_dtype, active)}: {_repr(v, default_dtype, active)}"
                for k, v in obj.items()
            )
            return "{" + items + "}"
        inner = ", ".join(_repr(v, default_dtype, active) for v in obj)
        if kind is list:
            return "[" + inner + "]"
        return "(" + inner + ("," if len(obj) == 1 else "") + ")"
    finally:
        active.discard(id(obj))


def format_value(value, *, default_dtype=np.float32) -> str:
    """Return what ``print(value)`` shows in PyTorch for a gradcli value.

    Inputs:
        value: anything.  Tensors are recognised by duck typing: an object
            with ``data`` (np.ndarray, dtypes as in :func:`format_tensor`),
            ``requires_grad`` (bool), ``grad_fn`` (None or an object with a
            ``name()`` method) and ``is_leaf``.  An object with a ``name()``
            method and no ``data`` is a graph node and prints as
            ``<MulBackward0 object at 0x...>`` (CPython ``object.__repr__``
            address format).  Tuples, lists, dicts and namedtuples are
            rendered like ``str()`` of the container, i.e. ``repr()`` of each
            element, recursing so that nested tensors print as torch would.
            ``str`` values are returned as-is; everything else goes through
            ``str()``.
        default_dtype: as in :func:`format_tensor`.

    Raises:
        TypeError / ValueError: from :func:`format_tensor` for a tensor-like
            object with an unsupported dtype, or a bad ``default_dtype``.
        Whatever the value's own ``__repr__``/``__str__`` raises.

    Convention: Python's ``str()``/``repr()`` rules plus
    ``torch/_tensor_str.py`` of PyTorch 2.13 for tensors.  This is plain
    ``print()`` output, not Jupyter's pretty-printed cell display.
    """
    if isinstance(value, str):
        return value
    if (
        _is_tensor_like(value)
        or _is_grad_fn_like(value)
        or type(value) in (tuple, list, dict)
        or _is_namedtuple(value)
    ):
        return _repr(value, default_dtype, set())
    return str(value)


# IPython's RepresentationPrinter default: lines are broken to stay within 79 columns.
_DISPLAY_WIDTH = 79
_BRACKETS = {tuple: ("(", ")"), list: ("[", "]"), set: ("{", "}")}


def format_display(value, *, default_dtype=np.float32) -> str | None:
    """Return what a Jupyter notebook shows as the ``Out[n]`` of a cell whose last expression has this value
    (IPython's display hook, ``text/plain``), or None for None (which Jupyter does not show).

    Inputs:
        value: anything :func:`format_value` takes.  Tensors show as ``repr()`` (the same text as ``str()``);
            a graph node as ``<MulBackward0 at 0x...>`` (IPython's form for an object without its own
            ``repr``, which is what PyTorch's grad_fn classes are); strings with their quotes; tuples, lists
            and sets laid out as IPython's pretty printer does: on one line when it fits in 79 columns,
            otherwise one element per line aligned after the opening bracket (a set's elements sorted, by
            ``str`` when they do not compare); a multi-line element forces that layout and its further
            lines are indented to the bracket.  Everything else shows as its ``repr()``.
        default_dtype: as in :func:`format_tensor`.

    Raises:
        Whatever :func:`format_tensor` or the value's ``repr()`` raises.

    Convention: ``IPython.lib.pretty.pretty`` (a Wadler-style layout, from Ruby's prettyprint) for the values
    gradcli's language has.  The layout of nested containers that hold multi-line elements is simplified:
    each container decides on its own whether it fits.
    """
    if value is None:
        return None
    return _display(value, 0, 0, 0, np.dtype(default_dtype), set())


def _display_items(value) -> list:
    items = list(value)
    if type(value) is set:
        for key in (None, str):
            try:
                return sorted(items, key=key)
            except Exception:  # IPython falls back to str order, then to iteration order
                continue
    return items


def _display(value, col: int, indent: int, trail: int, default_dtype, active: set) -> str:
    """Lay ``value`` out starting at column ``col``, continuation lines indented by ``indent``, with ``trail``
    characters (closing brackets, a comma) following it on its last line."""
    kind = type(value)
    if kind not in _BRACKETS:
        return ("\n" + " " * indent).join(_display_atom(value, default_dtype).split("\n"))
    open_, close = _BRACKETS[kind]
    if id(value) in active:
        return open_ + "..." + close
    items = _display_items(value)
    if kind is set and not items:
        return "set()"
    one_tuple = kind is tuple and len(items) == 1
    close = ("," if one_tuple else "") + close
    active.add(id(value))
    try:
        flat = [_display(v, 0, 0, 0, default_dtype, active) for v in items]
        text = open_ + ", ".join(flat) + close
        if "\n" not in text and col + len(text) + trail <= _DISPLAY_WIDTH:
            return text
        inner = indent + len(open_)
        parts = []
        c = col + len(open_)
        for k, v in enumerate(items):
            last = k == len(items) - 1
            parts.append(_display(v, c, inner, len(close) + trail if last else 1, default_dtype, active))
            c = inner
        return open_ + (",\n" + " " * inner).join(parts) + close
    finally:
        active.discard(id(value))


def _display_atom(value, default_dtype) -> str:
    if _is_tensor_like(value):
        return _repr(value, default_dtype, set())
    if _is_grad_fn_like(value):
        return f"<{value.name()} at {id(value):#x}>"
    # gradcli's objects that IPython shows otherwise than their repr: a method of their class, or of a function
    # of the op table, an attribute
    shown = getattr(value if isinstance(value, types.FunctionType) else type(value), "display_text", None)
    if shown is not None and callable(shown):
        return value.display_text()
    return repr(value)

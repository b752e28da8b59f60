"""Input specs: ``-i NAME=SPEC`` (a leaf that requires grad) and ``-c NAME=SPEC`` (a constant).

SPEC is an expression of the language (``[1, 2, 3]``, ``arange(4.0)``, ``randn(5, 3)``) or ``@path`` to a
``.npy`` (loaded with ``allow_pickle=False``), ``.json`` (a number or nested lists) or ``.csv`` file (numbers,
one row per line; a single row or column becomes 1-d). Constants keep PyTorch's dtype inference (``[1, 0, 2]``
is int64, ``[1., 0.]`` the default float); inputs are converted to the default float dtype, as a leaf.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import dtypes
from ..errors import GradcliError, InputError
from ..ops._core import to_tensor
from ..tensor import Tensor

_NAME_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$", re.S)
MAX_FILE_BYTES = 512 * 1024 * 1024


_NO_DATA = object()


@dataclass
class Spec:
    """One ``NAME=SPEC`` option: ``requires_grad`` is True for ``-i``, False for ``-c``.

    ``data``, when given, is the value itself (a number or nested lists, as read from JSON: a ``gradcli batch``
    JSON Lines entry) and ``text`` is unused."""
    name: str
    text: str
    requires_grad: bool
    option: str  # "-i" or "-c", for messages
    data: object = _NO_DATA

    @property
    def has_data(self) -> bool:
        return self.data is not _NO_DATA


def parse_spec(option_value: str, requires_grad: bool) -> Spec:
    """Split ``NAME=SPEC``.

    Raises:
        InputError: if there is no ``NAME=`` or the name is not an identifier.
    """
    flag = "-i" if requires_grad else "-c"
    m = _NAME_RE.match(option_value)
    if not m:
        raise InputError(f"{flag} expects NAME=SPEC (for example {flag} 'x=[1., 2.]'), got {option_value!r}",
                         type="InputSpecError")
    return Spec(m.group(1), m.group(2).strip(), requires_grad, flag)


def make_spec(item, requires_grad: bool) -> Spec:
    """A :class:`Spec` from a ``"NAME=SPEC"`` string (``-i``/``-c``) or a ``(name, value)`` pair, where value is
    SPEC text (a str) or the data itself (a number or nested lists of numbers, e.g. from JSON).

    Raises:
        InputError: for a malformed ``NAME=SPEC`` or a name that is not an identifier.
    """
    if isinstance(item, str):
        return parse_spec(item, requires_grad)
    name, value = item
    flag = "-i" if requires_grad else "-c"
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise InputError(f"input name {name!r} is not a valid name (letters, digits and '_', not starting with a "
                         "digit)", type="InputSpecError")
    if isinstance(value, str):
        return Spec(name, value.strip(), requires_grad, flag)
    return Spec(name, "", requires_grad, flag, data=value)


def load_file(path_text: str) -> np.ndarray:
    """Load ``@path`` data as a numpy array.

    Raises:
        InputError: for missing, unreadable, oversized or malformed files, naming the file (and line for CSV).
    """
    path = Path(path_text).expanduser()
    if not path.exists():
        raise InputError(f"no such file: {path_text}", type="FileNotFoundError")
    if path.is_dir():
        raise InputError(f"{path_text} is a directory, not a data file", type="IsADirectoryError")
    try:
        size = path.stat().st_size
    except OSError as e:
        raise InputError(f"cannot read {path_text}: {e.strerror}", type="OSError") from None
    if size > MAX_FILE_BYTES:
        raise InputError(f"{path_text} is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}", type="FileTooLarge")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            try:
                return np.load(path, allow_pickle=False)
            except ValueError as e:
                if "allow_pickle" in str(e) or "Object arrays" in str(e):
                    raise InputError(f"{path_text} holds Python objects; gradcli loads only numeric .npy files "
                                     "(allow_pickle=False)", type="UnsafeFileError") from None
                raise InputError(f"{path_text} is not a valid .npy file: {e}", type="FileFormatError") from None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read {path_text}: {getattr(e, 'strerror', None) or e}",
                         type="OSError") from None
    if suffix == ".json":
        import json

        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"{path_text}: invalid JSON: {e.msg}", type="FileFormatError", line=e.lineno,
                             column=e.colno, source=text, filename=path_text) from None
        try:
            return to_tensor(data).data
        except (TypeError, ValueError) as e:
            raise InputError(f"{path_text}: expected a number or nested lists of numbers ({e})",
                             type="FileFormatError") from None
    if suffix == ".csv":
        return _load_csv(text, path_text)
    raise InputError(f"{path_text}: unknown data file type {suffix or '(none)'!r}; use .npy, .json or .csv",
                     type="FileFormatError")


def _load_csv(text: str, name: str) -> np.ndarray:
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            rows.append([float(v) for v in line.split(",")])
        except ValueError:
            bad = next(v for v in line.split(",") if not _is_float(v))
            raise InputError(f"{name}:{lineno}: not a number: {bad.strip()!r}", type="FileFormatError",
                             line=lineno, column=line.find(bad) + 1, source=text, filename=name) from None
        if len(rows[-1]) != len(rows[0]):
            raise InputError(f"{name}:{lineno}: expected {len(rows[0])} values like line 1, got {len(rows[-1])}",
                             type="FileFormatError", line=lineno, column=1, source=text, filename=name)
    arr = np.array(rows, dtype=np.float64)
    if arr.ndim == 2 and (arr.shape[0] == 1 or arr.shape[1] == 1):
        arr = arr.reshape(-1)
    return arr.astype(dtypes.get_default_dtype().np)


def _is_float(v: str) -> bool:
    try:
        float(v)
        return True
    except ValueError:
        return False


def evaluate_spec(spec: Spec, interpreter) -> Tensor:
    """The tensor a spec describes: a fresh leaf (``requires_grad`` for ``-i``), never sharing memory with
    another input.

    Raises:
        InputError: for unreadable files or values that are not numeric.
        GradcliSyntaxError: for a SPEC that does not parse (exit 2).
        EvalError: for a SPEC that fails while evaluating (exit 1), positioned in the spec text.
    """
    from .build import parse_expression
    from .nodes import Program

    filename = f"{spec.option} {spec.name}"
    if spec.has_data:
        value = spec.data
    elif spec.text.startswith("@"):
        value = load_file(spec.text[1:])
    else:
        if not spec.text:
            raise InputError(f"{spec.option} {spec.name}: empty SPEC", type="InputSpecError")
        expr = parse_expression(spec.text, filename)
        saved = interpreter.program
        interpreter.program = Program([], spec.text, filename)
        try:
            value = interpreter.eval_expr(expr, {})
        finally:
            interpreter.program = saved
    try:
        t = to_tensor(value)
    except (TypeError, ValueError) as e:
        raise InputError(f"{filename}: expected a tensor, a number or nested lists of numbers, got "
                         f"{type(value).__name__} ({e})", type="InputSpecError") from None
    except GradcliError:
        raise
    data = np.array(t.data, copy=True)
    if spec.requires_grad:
        default = dtypes.get_default_dtype().np
        return Tensor(data if data.dtype == default else data.astype(default), True)
    return Tensor(data)

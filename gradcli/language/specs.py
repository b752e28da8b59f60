"""Input specs: ``-i NAME=SPEC`` (a leaf that requires grad) and ``-c NAME=SPEC`` (a constant).

SPEC is an expression of the language (``[1, 2, 3]``, ``arange(4.0)``, ``randn(5, 3)``) or ``@path`` to a
``.npy`` (numeric only, never pickled objects), ``.json`` (a number or nested lists) or ``.csv`` file
(numbers, one row per line; a single row or column becomes 1-d).

This module also reads every file and standard input gradcli takes (programs too): within the ``file_bytes``
limit, as UTF-8 text, with errors that name the file and, for malformed text, JSON and CSV, the line. Constants keep PyTorch's dtype inference (``[1, 0, 2]``
is int64, ``[1., 0.]`` the default float); inputs are converted to the default float dtype, as a leaf.
"""

from __future__ import annotations

import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..engine import dtypes, limits
from ..engine.errors import GradcliError, InputError
from ..engine.lazy import lazy
from ..engine.tensor import Tensor, to_tensor
from .nodes import Program

build = lazy("gradcli.language.build")  # the parser and the op table: loaded when a SPEC is a program text

_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"  # the grammar's NAME
_NAME_RE = re.compile(rf"^\s*({_IDENTIFIER})\s*=(.*)$", re.S)


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
    if not isinstance(name, str) or not re.fullmatch(_IDENTIFIER, name):
        raise InputError(f"input name {name!r} is not a valid name (letters, digits and '_', not starting with a "
                         "digit)", type="InputSpecError")
    if isinstance(value, str):
        return Spec(name, value.strip(), requires_grad, flag)
    return Spec(name, "", requires_grad, flag, data=value)


def file_error(exc: OSError, path_text: str) -> InputError:
    """The InputError (exit 2) for an OSError raised opening or reading the file ``path_text``: its type and a
    message naming the file (no such file, a directory, permission denied, or the system's reason)."""
    if isinstance(exc, FileNotFoundError):
        return InputError(f"no such file: {path_text}", type="FileNotFoundError")
    if isinstance(exc, IsADirectoryError):
        return InputError(f"{path_text} is a directory, not a file", type="IsADirectoryError")
    if isinstance(exc, PermissionError):
        return InputError(f"permission denied: {path_text}", type="PermissionError")
    return InputError(f"cannot read {path_text}: {exc.strerror or exc}", type="OSError")


def read_bytes(path_text: str) -> bytes:
    """The bytes of the file ``path_text``, read within the ``file_bytes`` limit (a pipe or device is read one
    byte past it, never to its end).

    Raises:
        InputError: FileNotFoundError, IsADirectoryError, PermissionError or OSError naming the file.
        InputLimitError: for a file over ``file_bytes``.
    """
    path = Path(path_text).expanduser()
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError
        if stat.S_ISREG(st.st_mode):
            limits.check_file_size(st.st_size, path_text)
        with open(path, "rb") as f:
            data = f.read(limits.current.file_bytes + 1 if limits.current.file_bytes < limits.UNLIMITED else -1)
    except OSError as e:
        raise file_error(e, path_text) from None
    limits.check_file_size(len(data), path_text, stream=True)
    return data


def _check_exists(path_text: str) -> None:
    try:
        if stat.S_ISDIR(Path(path_text).expanduser().stat().st_mode):
            raise file_error(IsADirectoryError(), path_text)
    except FileNotFoundError as e:
        raise file_error(e, path_text) from None
    except OSError:
        pass


def read_stdin(stream=None) -> str:
    """Standard input as text, read within the ``file_bytes`` limit and decoded as UTF-8.

    Raises:
        InputError: for input that is not UTF-8 text (with the line and column of the first bad byte).
        InputLimitError: for input over ``file_bytes``.
    """
    stream = sys.stdin if stream is None else stream
    raw = getattr(stream, "buffer", None)
    limit = limits.current.file_bytes
    size = limit + 1 if limit < limits.UNLIMITED else -1
    try:
        data = raw.read(size) if raw is not None else stream.read(size)
    except UnicodeDecodeError as e:  # a text-only stream that decodes itself
        raise InputError(f"<stdin> is not UTF-8 text ({e.reason})", type="UnicodeDecodeError") from None
    except OSError as e:
        raise InputError(f"cannot read standard input: {e.strerror or e}", type="OSError") from None
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    limits.check_file_size(len(data), "<stdin>", stream=True)
    return decode_text(data, "<stdin>")


def decode_text(data: bytes, name: str) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark is dropped).

    Raises:
        InputError: for binary data (NUL bytes) or bytes that are not UTF-8, with the line and column of the
            first bad byte and the line shown with a caret.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    nul = data.find(b"\0")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        bad = e.start
        kind, what = "UnicodeDecodeError", f"is not UTF-8 text: invalid byte 0x{data[bad]:02x}"
    else:
        if nul < 0:
            return text
        bad = nul
        kind, what = "FileFormatError", "is a binary file (it contains NUL bytes), not text"
    line = data.count(b"\n", 0, bad) + 1
    column = len(data[data.rfind(b"\n", 0, bad) + 1:bad].decode("utf-8", "replace")) + 1
    shown = data.decode("utf-8", "replace").replace("\0", "\ufffd")
    raise InputError(f"{name} {what} (line {line}, column {column})", type=kind, line=line, column=column,
                     source=shown, filename=name)


def read_text_file(path_text: str) -> str:
    """A text file (a program), within the ``file_bytes`` limit, as UTF-8.

    Raises:
        InputError: see :func:`read_bytes` and :func:`decode_text`.
    """
    return decode_text(read_bytes(path_text), path_text)


def read_program(program: str) -> tuple[str, str]:
    """The text and file name of ``gradcli grad``'s PROGRAM argument: the text itself (``"<expr>"``), ``@path``
    for a file, ``-`` for standard input (``"<stdin>"``).

    Raises:
        InputError: for files or input that cannot be read as UTF-8 text within the limits.
    """
    if program == "-":
        return read_stdin(), "<stdin>"
    if program.startswith("@"):
        return read_text_file(program[1:]), program[1:]
    return program, "<expr>"


def load_file(path_text: str) -> np.ndarray:
    """Load ``@path`` data as a numpy array: ``.npy`` (numeric, never pickled objects), ``.json`` (a number or
    nested lists), ``.csv`` (numbers, one row per line).

    Raises:
        InputError: for missing, unreadable, oversized or malformed files, naming the file (and the line for
            JSON and CSV); UnsafeFileError for a .npy holding Python objects.
        LimitError: for data with more elements than the ``elements`` limit (checked from a .npy header before
            the data is read).
    """
    suffix = Path(path_text).suffix.lower()
    if suffix == ".npy":
        arr = _load_npy(path_text)
    elif suffix == ".json":
        arr = _load_json(decode_text(read_bytes(path_text), path_text), path_text)
    elif suffix == ".csv":
        arr = _load_csv(decode_text(read_bytes(path_text), path_text), path_text)
    else:
        _check_exists(path_text)  # a missing file or a directory is reported as such first
        raise InputError(f"{path_text}: unknown data file type {suffix or '(none)'!r}; use .npy, .json or .csv",
                         type="FileFormatError")
    limits.check_numel(arr.shape, path_text)
    return arr


def _load_npy(path_text: str) -> np.ndarray:
    import io
    import warnings

    from numpy.lib import format as npy

    # Read the file (within file_bytes, or what its header says it needs), check the header, then the data.
    path = Path(path_text).expanduser()
    try:
        with open(path, "rb") as f, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a malformed header makes Python warn about its escapes
            version = npy.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = npy.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran, dtype = npy.read_array_header_2_0(f)
            else:
                raise ValueError(f"unsupported .npy format version {version}")
            header_end = f.tell()
    except OSError as e:
        raise file_error(e, path_text) from None
    except Exception as e:  # numpy's header parser raises ValueError, SyntaxError, tokenize errors, ...
        raise InputError(f"{path_text} is not a valid .npy file: {e}", type="FileFormatError") from None
    if dtype.hasobject:
        raise InputError(f"{path_text} holds Python objects; gradcli loads only numeric .npy files "
                         "(allow_pickle=False)", type="UnsafeFileError")
    try:
        dtypes.from_numpy(dtype)
    except TypeError:
        raise InputError(f"{path_text}: .npy data of dtype {dtype} is not supported (use a float, integer or "
                         "bool dtype)", type="FileFormatError") from None
    limits.check_numel(shape, path_text)
    need = header_end + int(np.prod(shape, dtype=object)) * dtype.itemsize
    try:
        with open(path, "rb") as f:
            data = f.read(need + 1)
    except OSError as e:
        raise InputError(f"cannot read {path_text}: {e.strerror or e}", type="OSError") from None
    if len(data) < need:
        raise InputError(f"{path_text} is not a valid .npy file: it is truncated ({len(data):,} bytes, the "
                         f"header says {need:,})", type="FileFormatError")
    try:
        return npy.read_array(io.BytesIO(data[:need]), allow_pickle=False)
    except Exception as e:  # the data does not match the header
        raise InputError(f"{path_text} is not a valid .npy file: {e}", type="FileFormatError") from None


def _load_json(text: str, name: str) -> np.ndarray:
    import json

    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{name}: invalid JSON: {e.msg}", type="FileFormatError", line=e.lineno,
                         column=e.colno, source=text, filename=name) from None
    except RecursionError:
        raise InputError(f"{name}: JSON nested too deeply", type="FileFormatError") from None
    except ValueError as e:  # e.g. an integer literal over Python's digit limit
        raise InputError(f"{name}: invalid JSON: {e}", type="FileFormatError") from None
    problem = _json_problem(data)
    if problem is not None:
        raise InputError(f"{name}: expected a number or nested lists of numbers ({problem})",
                         type="FileFormatError")
    try:
        return to_tensor(data).data
    except (TypeError, ValueError, OverflowError) as e:
        raise InputError(f"{name}: expected a number or nested lists of numbers ({e})",
                         type="FileFormatError") from None


def _json_problem(data) -> str | None:
    """What makes decoded JSON something other than numbers in nested lists, or None (iterative)."""
    stack = [(data, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, list):
            if depth >= 64:
                return "lists nested more than 64 deep (the most dimensions a tensor has)"
            stack.extend((item, depth + 1) for item in v)
        elif not isinstance(v, (bool, int, float)):
            return f"found {'null' if v is None else type(v).__name__.replace('dict', 'an object')}"
    return None


def _load_csv(text: str, name: str) -> np.ndarray:
    from array import array

    values = array("d")
    width = None
    rows = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split(",")
        for k, v in enumerate(parts):
            try:
                values.append(float(v))
            except ValueError:
                column = sum(len(p) + 1 for p in parts[:k]) + (len(v) - len(v.lstrip())) + 1
                raise InputError(f"{name}:{lineno}: not a number: {v.strip()!r}", type="FileFormatError",
                                 line=lineno, column=column, source=text, filename=name) from None
        if width is None:
            width = len(parts)
        elif len(parts) != width:
            raise InputError(f"{name}:{lineno}: expected {width} values like the first row, got {len(parts)}",
                             type="FileFormatError", line=lineno, column=1, source=text, filename=name)
        rows += 1
    arr = np.frombuffer(values, dtype=np.float64).reshape(rows, width or 0) if rows else np.zeros(0)
    if arr.ndim == 2 and (arr.shape[0] == 1 or arr.shape[1] == 1):
        arr = arr.reshape(-1)
    return arr.astype(dtypes.get_default_dtype().np)


def evaluate_spec(spec: Spec, interpreter) -> Tensor:
    """The tensor a spec describes: a fresh leaf (``requires_grad`` for ``-i``), never sharing memory with
    another input. ``@-`` reads the SPEC from standard input (an expression, which JSON data also is).

    Raises:
        InputError: for unreadable files or values that are not numeric.
        GradcliSyntaxError: for a SPEC that does not parse (exit 2).
        EvalError: for a SPEC that fails while evaluating (exit 1), positioned in the spec text.
    """
    filename = f"{spec.option} {spec.name}"
    text = spec.text
    if not spec.has_data and text == "@-":  # standard input holds the SPEC (an expression, or JSON data)
        text = read_stdin().strip()
        filename = f"{filename} (<stdin>)"
    if spec.has_data:
        value = spec.data
    elif text.startswith("@"):
        value = load_file(text[1:])
    else:
        if not text:
            raise InputError(f"{spec.option} {spec.name}: empty SPEC", type="InputSpecError")
        expr = build.parse_expression(text, filename)
        saved = interpreter.program
        interpreter.program = Program([], text, filename)
        try:
            value = interpreter.eval_expr(expr, {})
        finally:
            interpreter.program = saved
    try:
        t = to_tensor(value)
    except OverflowError:  # torch.tensor(10**30): PyTorch's message
        raise InputError(f"{filename}: Overflow when unpacking long long (an integer beyond 64 bits; write it "
                         f"as a float: 1e30)", type="InputSpecError") from None
    except (TypeError, ValueError) as e:
        raise InputError(f"{filename}: expected a tensor, a number or nested lists of numbers, got "
                         f"{type(value).__name__} ({e})", type="InputSpecError") from None
    except GradcliError:
        raise
    data = np.array(t.data, copy=True, order="C")  # a fresh, C-contiguous leaf, as torch.tensor makes
    if spec.requires_grad:
        default = dtypes.get_default_dtype().np
        return Tensor(data if data.dtype == default else data.astype(default), True)
    return Tensor(data)

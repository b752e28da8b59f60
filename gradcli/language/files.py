"""Reading files from a program: read-only and opt-in.

A program may ``open(path)`` (the read modes ``r``/``rt`` only) and ``pathlib.Path(path).read_text()``, for files
under the directories the command allows (:func:`allow_read`): ``gradcli run`` allows the program's own
directory and each ``--allow-read DIR``; ``grad``, ``batch`` and the session read nothing unless given
``--allow-read``; a library user allows none unless it calls :func:`allow_read`. Nothing writes. Every read
counts against the ``file_bytes`` limit (the bytes read under one permission, all files together: one command's
runs), checked before the file is read. The permission belongs to the run context (:class:`ReadAccess`), so
it never reaches a run or batch entry that was not given it. A refused ``open`` is Python's ``PermissionError`` with the option that allows it.

Paths are resolved (symbolic links and ``..`` followed) before they are compared with the allowed directories,
so that a link cannot lead out of them.
"""

from __future__ import annotations

import io
import os

import contextlib

from ..engine import limits
from ..engine.context import state as _state


class ReadAccess:
    """What programs may read: the real paths of the allowed directories, what a refusal names as the way to
    allow more, and the bytes read so far under this permission (the ``file_bytes`` budget). It is the run
    context's (``state.file_access``), so one run's permission does not reach a run in another context."""

    __slots__ = ("directories", "hint", "read")

    def __init__(self, directories, hint: str):
        self.directories = tuple(os.path.realpath(d) for d in directories)
        self.hint = hint
        self.read = 0


def allow_read(directories, hint: str = "--allow-read DIR") -> None:
    """Let programs in the active run context (and the contexts made from it afterwards) read the files under
    ``directories`` (paths; replaces the list), and none elsewhere. ``hint`` is what a refusal says allows
    more."""
    _state.file_access = ReadAccess(directories, hint)


@contextlib.contextmanager
def reading_allowed(directories, hint: str = "--allow-read DIR"):
    """``with reading_allowed(dirs):`` :func:`allow_read` for the block only: the runs started inside it (their
    contexts start with the active one's permission) may read under ``directories``; afterwards the active
    context allows what it allowed before."""
    before = _state.file_access
    allow_read(directories, hint)
    try:
        yield
    finally:
        _state.file_access = before


def _check(path) -> tuple:
    """``(real path, access)`` of a path a program may read.

    Raises:
        TypeError: ``path`` is neither a str nor a Path.
        PermissionError: ``path`` is outside the allowed directories (or none are allowed).
    """
    if not isinstance(path, (str, PathValue)):
        raise TypeError(f"expected str or Path, not {type(path).__name__}")
    text = str(path)
    real = os.path.realpath(text)
    access = _state.file_access
    allowed = access.directories if access is not None else ()
    for d in allowed:
        if real == d or real.startswith(d.rstrip(os.sep) + os.sep):
            return real, access
    where = "outside the directories it may read" if allowed else "a file, and this command reads none"
    hint = access.hint if access is not None else "--allow-read DIR"
    raise PermissionError(13, f"Permission denied: {text!r} is {where} (give {hint} to let the program "
                              "read the files under DIR)")


def _read_text(path, encoding=None, errors=None) -> str:
    real, access = _check(path)
    try:
        size = os.path.getsize(real)
    except OSError as exc:
        raise FileNotFoundError(2, f"No such file or directory: {str(path)!r}") from exc if not os.path.exists(
            real) else exc
    budget = limits.current.file_bytes
    if access.read + size > budget:
        raise limits.exceeded("file_bytes", f"reading {str(path)!r} ({size:,} bytes) would make "
                                            f"{access.read + size:,} bytes read by the program")
    with open(real, "rb") as f:  # noqa: PTH123 - the one place the language opens a file, to read it
        data = f.read(size + 1)
    if access.read + len(data) > budget:  # it grew while we looked
        raise limits.exceeded("file_bytes", f"{str(path)!r} is more than {size:,} bytes")
    access.read += len(data)
    return data.decode(encoding or "utf-8", errors or "strict").replace("\r\n", "\n").replace("\r", "\n")


class ReadFile(io.StringIO):
    """A file a program opened to read: its whole text, read when opened (within ``file_bytes``); ``read``,
    ``readline``, ``readlines``, iteration by lines, ``close`` and ``with``, as Python's text files."""

    def __init__(self, text: str, name: str):
        super().__init__(text)
        self.name = name

    def __repr__(self) -> str:
        return f"<_io.TextIOWrapper name={self.name!r} mode='r' encoding='utf-8'>"


def open_file(file, mode: str = "r", buffering: int = -1, encoding=None, errors=None, newline=None) -> ReadFile:
    """Python's ``open`` for reading text: ``mode`` ``r`` or ``rt``.

    Raises:
        PermissionError: for any other mode (nothing writes) or a file outside the allowed directories.
        FileNotFoundError: for a file that does not exist.
        LimitError: past the ``file_bytes`` limit.
    """
    if not isinstance(mode, str) or mode not in ("r", "rt", "tr"):
        if isinstance(mode, str) and "b" in mode and not any(c in mode for c in "wax+"):
            raise ValueError("gradcli programs read text files only (mode 'r')")
        raise PermissionError(13, f"Permission denied: gradcli programs cannot write files (mode {mode!r}); "
                                  "open(path) reads")
    return ReadFile(_read_text(file, encoding, errors), str(file))


class PathValue:
    """``pathlib.Path`` for reading: ``read_text()``, ``exists()``, ``is_file()``, ``name``, ``stem``,
    ``suffix``, ``parent``, ``/`` and ``str()``; no method writes."""

    def __init__(self, *parts):
        for p in parts:
            if not isinstance(p, (str, PathValue)):
                raise TypeError(f"argument should be a str or an os.PathLike object, not '{type(p).__name__}'")
        self._path = os.path.join(*[str(p) for p in parts]) if parts else "."

    def __str__(self) -> str:
        return self._path

    def __repr__(self) -> str:
        return f"PosixPath({self._path!r})"

    def __truediv__(self, other) -> "PathValue":
        return PathValue(self, other)

    def __eq__(self, other) -> bool:
        return isinstance(other, PathValue) and other._path == self._path

    __hash__ = object.__hash__

    def read_text(self, encoding=None, errors=None) -> str:
        """The file's text (within the allowed directories and ``file_bytes``)."""
        return _read_text(self, encoding, errors)

    def exists(self) -> bool:
        """Whether the path exists (only asked of allowed directories)."""
        return os.path.exists(_check(self)[0])

    def is_file(self) -> bool:
        """Whether the path is a file (only asked of allowed directories)."""
        return os.path.isfile(_check(self)[0])


#: What a program reads of an open file and of a Path (one accessor each).
FILE_ATTRS = {"read": lambda f: f.read, "readline": lambda f: f.readline, "readlines": lambda f: f.readlines,
              "close": lambda f: f.close, "closed": lambda f: f.closed, "name": lambda f: f.name}
PATH_ATTRS = {"read_text": lambda p: p.read_text, "exists": lambda p: p.exists, "is_file": lambda p: p.is_file,
              "name": lambda p: os.path.basename(p._path), "suffix": lambda p: os.path.splitext(p._path)[1],
              "stem": lambda p: os.path.splitext(os.path.basename(p._path))[0],
              "parent": lambda p: PathValue(os.path.dirname(p._path) or ".")}

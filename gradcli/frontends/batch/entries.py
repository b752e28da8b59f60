"""Reading ``gradcli batch`` input: numbered lines, then entries (text or JSON Lines), lazily.

* text: one entry per line, a program that declares its own inputs
  (``x = tensor([1., 2.], requires_grad=True); (x * x).sum()``). Blank lines and ``#`` comment lines are
  skipped. A line that is incomplete on its own (a block header ending in ``:``, an open bracket, a trailing
  backslash: the rule of Python's interactive prompt) starts a multi-line entry, which runs to a line ``---``
  (or the end of the input).
* JSON Lines: one object per line with the fields of :data:`JSONL_FIELDS`, meaning what ``gradcli grad``'s
  arguments and options mean; blank lines are skipped.

Nothing is read ahead of need, so standard input streams; a bad line is a bad entry (with an ``error``),
never an exception.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from ...app import jobs  # the pipeline each entry runs through (not lazy: entries run in threads)
from ...app.calculator import GradRequest
from ...engine import limits
from ...engine.errors import GradcliError, GradcliSyntaxError, InputError
from ...engine.lazy import lazy
from ...language import grammar

# Read by entries with a 'transform' or a 'check' field only.
finite_differences = lazy("gradcli.app.finite_differences")
transforms = lazy("gradcli.app.transforms")

FORMATS = ("auto", "text", "jsonl")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
TEXT_SUFFIXES = (".txt", ".gc")
BLOCK_END = "---"

#: The fields of a JSON Lines entry: what ``gradcli grad``'s arguments and options mean, plus ``id``.
JSONL_FIELDS = ("program", "inputs", "consts", "gradient", "repeat", "zero_grad", "seed", "dtype", "check", "id",
                "transform", "mode", "tangent", "vector", "symbolic")

#: An entry's ``transform`` (``gradcli jacobian``/``hessian``/``jvp``/``hvp``) and the field holding its vectors.
TRANSFORM_VECTORS = {"jacobian": None, "hessian": None, "jvp": "tangent", "hvp": "vector"}

#: The tolerances of an entry's ``check`` (``gradcli grad --check``'s options), with their defaults.
CHECK_FIELDS = ("eps", "atol", "rtol", "max_evaluations")


@dataclass
class Line:
    """One physical line of the input: ``number`` is 1-based, ``text`` has no line ending (None if the line
    is not valid UTF-8, then ``error`` says so), ``end`` is the byte offset just after it (for progress)."""
    number: int
    text: str | None
    end: int
    error: GradcliError | None = None


@dataclass
class Entry:
    """One unit of work: the 1-based ``line`` where it starts, its ``text`` (shown in the table), the byte
    offset after it (``end``), and either the :class:`~gradcli.app.calculator.GradRequest` to run or the ``error``
    that makes it unrunnable (a malformed JSON line, an undecodable line). ``id`` is echoed back when
    ``has_id``. ``check``: the tolerances of a finite-difference check of the gradients (``--check``; None: no
    check), as keyword arguments of :func:`gradcli.app.finite_differences.finite_difference_check`."""
    line: int
    text: str
    end: int
    request: GradRequest | None = None
    error: GradcliError | None = None
    id: object = None
    has_id: bool = False
    check: dict | None = None
    transform: dict | None = None
    symbolic: bool = False  # "symbolic": true: the gradients as formulas too (gradcli grad --symbolic)

    def job(self):
        """The entry as a job of the application pipeline: a :class:`~gradcli.app.jobs.GradJob` (with its check
        when ``check``), or with ``transform`` (``{"kind", "mode", "vectors"}``) a
        :class:`~gradcli.app.jobs.TransformJob` (a transform's check takes eps, atol and rtol)."""
        if self.transform is None:
            return jobs.GradJob(self.request, check=self.check, symbolic="unicode" if self.symbolic else None)
        check = None if self.check is None else {k: self.check[k] for k in ("eps", "atol", "rtol")}
        return jobs.TransformJob(self.request, self.transform["kind"], self.transform["mode"],
                                 vectors=self.transform["vectors"], check=check)

    def compute(self, write, warn):
        """Run the entry's job (:meth:`job`) through :func:`gradcli.app.jobs.run`: a
        :class:`~gradcli.app.result.GradResult` (with its formulas when ``symbolic``), or for a transform a
        :class:`~gradcli.app.transforms.TransformResult`."""
        return jobs.run(self.job(), jobs.Context(write=write, warn=warn))


@dataclass
class Defaults:
    """Batch-wide defaults for every entry (``--dtype``, ``--seed``, ``--max-steps``, ``--check`` with its
    tolerances: a dict of :data:`CHECK_FIELDS`, or None), and the input's name (``<stdin>`` or the path) used in
    messages; ``anomaly`` (``--anomaly``) applies to every entry."""
    dtype: str = "float32"
    seed: int | None = None
    max_steps: int | None = None
    filename: str = "<stdin>"
    anomaly: bool = False
    check: dict | None = None


def read_lines(stream, name: str = "<stdin>") -> Iterator[Line]:
    """Number the lines of a binary stream, each yielded as soon as it has arrived (standard input streams).

    Each line is decoded as UTF-8 on its own (a leading byte-order mark is dropped), so one bad line is one
    bad entry, not an unreadable file; a ``#`` comment line is decoded with replacement characters (a comment
    is skipped whatever bytes it holds). A line longer than the ``file_bytes`` limit is one bad entry too: it is
    read past in pieces, never held whole (``/dev/zero`` is not a line).

    Raises:
        InputError: if reading fails (an I/O error; exit 2).
    """
    end = 0
    number = 0
    longest = limits.current.file_bytes
    size = longest + 1 if longest < limits.UNLIMITED else -1
    try:
        while raw := stream.readline(size):
            number += 1
            end += len(raw)
            if len(raw) > longest and not raw.endswith(b"\n"):
                while (more := stream.readline(1 << 20)) and not more.endswith(b"\n"):
                    end += len(more)
                end += len(more)
                yield Line(number, None, end, limits.exceeded("file_bytes", f"line {number} of {name} is more than "
                                                                            f"{longest:,} bytes"))
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                if raw.lstrip(b" \t").startswith(b"#"):  # a comment: its bytes are never read
                    yield Line(number, raw.decode("utf-8", "replace").rstrip("\r\n"), end)
                    continue
                yield Line(number, None, end, InputError(
                    f"line {number} is not valid UTF-8 (byte {e.start + 1}: {raw[e.start:e.start + 1]!r})",
                    type="UnicodeDecodeError"))
                continue
            if number == 1 and text.startswith("\ufeff"):
                text = text[1:]
            yield Line(number, text.rstrip("\r\n"), end)
    except OSError as e:
        raise InputError(f"cannot read {name}: {e.strerror or e}", type="OSError") from None


def opens_block(text: str) -> bool:
    """Whether a line is incomplete on its own and so starts a multi-line entry: it parses up to the end of
    the input but needs more (``def f(x):``, ``y = [1,``, a trailing backslash). This is the rule of
    Python's interactive prompt (``codeop``), decided by gradcli's own grammar."""
    s = text.rstrip()
    # Most lines are plainly complete: parse only those that may not be (a comment may hide the ':').
    if not (s.endswith((":", "\\", ",")) or "#" in s or s.count("(") + s.count("[") + s.count("{")
            > s.count(")") + s.count("]") + s.count("}")):
        return False
    try:
        grammar.parse(text)
    except GradcliSyntaxError as e:
        return e.message == "unexpected end of input"
    except (GradcliError, RecursionError):  # too long or too deep to be a block's start: the entry fails alone
        return False
    return False


def text_entries(lines: Iterable[Line], defaults: Defaults) -> Iterator[Entry]:
    """The entries of a text file (see the module docstring). A line ``---`` with no multi-line entry open
    is reported as a failed entry (it usually means the entry above it was meant to be one block).

    An entry with a syntax error fails alone: a line that leaves a bracket open starts a multi-line entry, but a
    following line that is not indented and is a whole program on its own starts a new entry instead (the open
    one fails with its syntax error), and so does a line that is not indented after a block header (``if x:``)
    that has no body yet. So one unclosed bracket never swallows the lines after it."""
    block: list[Line] = []
    for ln in lines:
        if block:
            if ln.text is not None and ln.text.strip() == BLOCK_END:
                yield from _block_entries(block, ln.end, defaults)
                block = []
                continue
            if not _cuts_block(block, ln):
                block.append(ln)
                continue
            yield from _block_entries(block, block[-1].end, defaults)
            block = []
        if ln.error is not None:
            yield Entry(ln.number, "", ln.end, error=ln.error.with_position(line=1, column=None, source=None,
                                                                            filename=None))
            continue
        s = ln.text.strip()
        if not s or s.startswith("#"):
            continue
        if s == BLOCK_END:
            yield Entry(ln.number, ln.text, ln.end, error=InputError(
                f"'{BLOCK_END}' ends a multi-line entry, but none is open", type="FileFormatError", line=1,
                column=1, hint="a multi-line entry starts with a line that is incomplete on its own (ending with "
                               "':' or leaving a bracket open); join simple statements on one line with ';'"))
        elif opens_block(ln.text):
            block = [ln]
        else:
            yield Entry(ln.number, ln.text, ln.end, request=_request(ln.text, defaults), check=defaults.check)
    if block:
        yield from _block_entries(block, block[-1].end, defaults)


def _line_entries(ln: Line, defaults: Defaults) -> Iterator[Entry]:
    """The entry of one line on its own: its error, nothing (a blank or comment line), or its program."""
    if ln.error is not None:
        yield Entry(ln.number, "", ln.end, error=ln.error.with_position(line=1, column=None, source=None,
                                                                        filename=None))
        return
    s = ln.text.strip()
    if s and not s.startswith("#"):
        yield Entry(ln.number, ln.text, ln.end, request=_request(ln.text, defaults), check=defaults.check)


def _block_entries(block: list[Line], end: int, defaults: Defaults) -> Iterator[Entry]:
    """The entry of a multi-line block; a block of several lines that cannot be one entry is split back
    into its lines, each an entry of its own, so that no line is hidden in another's error: a line of it is
    not UTF-8, or it continues an open bracket (or a backslash) and the whole does not parse. A block under
    a header (``def f(x):`` and its indented body) stays one entry, its error positioned in it."""
    if len(block) > 1 and (any(ln.error is not None for ln in block)
                           or (not _is_header(block[0].text)
                               and _parse_state("\n".join(ln.text for ln in block)) != "complete")):
        for ln in block:
            yield from _line_entries(ln, defaults)
        return
    yield _block_entry(block, end, defaults)


def _cuts_block(block: list[Line], ln: Line) -> bool:
    """Whether line ``ln`` starts a new entry rather than continuing the open multi-line ``block``: it is not
    indented, not blank, not a comment, and either the block is a header without a body yet (``for ...:``) or
    the block is still incomplete (a bracket left open) or already wrong, and ``ln`` is a whole program (or the
    start of a block) on its own. A backslash continuation and an open triple-quoted string always continue, and so does a block
    that is complete so far (it runs to ``---``)."""
    text = ln.text
    if text is None or not text.strip() or text.lstrip().startswith("#") or text[:1] in " \t":
        return False
    first = block[0].text or ""
    if first.count('"""') % 2 or first.count("'''") % 2 or (block[-1].text or "").rstrip().endswith("\\"):
        return False
    if _is_header(first) and all(not (b.text or "").strip() or (b.text or "").lstrip().startswith("#")
                                 for b in block[1:]):
        return True
    return _parse_state("\n".join(b.text or "" for b in block)) != "complete" and _parse_state(text) != "error"


def _is_header(text: str) -> bool:
    """Whether a line is a block header (its code, without a trailing comment, ends with ':')."""
    code = text.split("#", 1)[0].rstrip() if "#" in text and "'" not in text and '"' not in text else text.rstrip()
    return code.endswith(":")


def _parse_state(text: str) -> str:
    """"complete" if ``text`` parses, "incomplete" if it parses up to its end but needs more, else "error"."""
    try:
        grammar.parse(text)
    except GradcliSyntaxError as e:
        return "incomplete" if e.message == "unexpected end of input" else "error"
    except (GradcliError, RecursionError):
        return "error"
    return "complete"


def _request(program: str, defaults: Defaults, **fields) -> GradRequest:
    fields.setdefault("dtype", defaults.dtype)
    fields.setdefault("seed", defaults.seed)
    return GradRequest(program=program, filename=defaults.filename, max_steps=defaults.max_steps,
                       anomaly=defaults.anomaly, **fields)


def _block_entry(block: list[Line], end: int, defaults: Defaults) -> Entry:
    start = block[0].number
    bad = next((ln for ln in block if ln.error is not None), None)
    text = "\n".join(ln.text or "" for ln in block)
    if bad is not None:
        return Entry(start, text, end, error=bad.error.with_position(line=bad.number - start + 1, column=None,
                                                                     source=None, filename=None))
    return Entry(start, text, end, request=_request(text, defaults), check=defaults.check)


def jsonl_entries(lines: Iterable[Line], defaults: Defaults) -> Iterator[Entry]:
    """The entries of a JSON Lines file: one object per non-blank line (see :func:`jsonl_entry`)."""
    for ln in lines:
        if ln.error is not None:
            yield Entry(ln.number, "", ln.end, error=ln.error.with_position(line=1, column=None, source=None,
                                                                            filename=None))
        elif ln.text.strip():
            yield jsonl_entry(ln, defaults)


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON (RFC 8259 has no NaN or Infinity)")


def jsonl_entry(ln: Line, defaults: Defaults) -> Entry:
    """One JSON Lines entry: ``{"program": str, "inputs": {name: SPEC or data}, "consts": {...},
    "gradient": SPEC or data, "repeat": int, "zero_grad": bool, "seed": int, "dtype": str, "check": true, false
    or {"eps", "atol", "rtol", "max_evaluations"}, "id": any, "transform": "jacobian" | "hessian" | "jvp" | "hvp",
    "mode": "reverse" | "forward" | "auto" (jacobian), "tangent" (jvp) / "vector" (hvp): {name: SPEC or data}}``.
    Only ``program`` is required; the others default to the batch's options (``--seed``, ``--dtype``,
    ``--check``...). A SPEC is a string (an expression or ``@file``, as for ``-i``); data is a number or nested
    lists, with PyTorch's dtype inference for ``consts``.

    Malformed lines give an :class:`Entry` with an ``error`` (never an exception)."""
    def bad(message, **kw):
        return Entry(ln.number, ln.text, ln.end, error=InputError(message, type=kw.pop("type", "InputError"),
                                                                  **kw), id=obj_id, has_id=has_id)

    obj_id, has_id = None, False
    try:
        obj = json.loads(ln.text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        return bad(f"invalid JSON: {e.msg}", type="JSONDecodeError", line=e.lineno, column=e.colno,
                   source=ln.text)
    except ValueError as e:
        return bad(f"invalid JSON: {e}", type="JSONDecodeError")
    except RecursionError:
        return bad("invalid JSON: nested too deeply to read", type="JSONDecodeError")
    if not isinstance(obj, dict):
        return bad(f"expected a JSON object per line ({{\"program\": ...}}), got {_json_type(obj)}")
    if "id" in obj:
        message = _id_problem(obj["id"])
        if message:
            return bad(message)
        has_id, obj_id = True, obj["id"]
    unknown = [k for k in obj if k not in JSONL_FIELDS]
    if unknown:
        return bad(f"unknown field {unknown[0]!r}; the fields are: {', '.join(JSONL_FIELDS)}")
    program = obj.get("program")
    if not isinstance(program, str):
        return bad("the field 'program' (a string) is required" if program is None else
                   f"'program' must be a string, got {_json_type(program)}")
    fields = {}
    for key, option in (("inputs", "-i"), ("consts", "-c")):
        value = obj.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            return bad(f"'{key}' must be an object of name: SPEC or data (like {option} NAME=SPEC), got "
                       f"{_json_type(value)}")
        fields[key] = list(value.items())
    if obj.get("gradient") is not None:
        fields["gradient"] = obj["gradient"]
    for key, kind, check in (("repeat", "an integer >= 1", lambda v: _is_int(v) and v >= 1),
                             ("zero_grad", "true or false", lambda v: isinstance(v, bool)),
                             ("symbolic", "true or false", lambda v: isinstance(v, bool)),
                             ("seed", "an integer", _is_int),
                             ("dtype", '"float32" or "float64"', lambda v: v in ("float32", "float64"))):
        value = obj.get(key)
        if value is None:
            continue
        if not check(value):
            return bad(f"'{key}' must be {kind}, got {json.dumps(value, ensure_ascii=False)}")
        fields[key] = value
    check = defaults.check
    if "check" in obj:
        check, message = _entry_check(obj["check"], defaults.check)
        if message:
            return bad(message)
    transform, message = _entry_transform(obj)
    if message:
        return bad(message)
    if transform is not None:
        if "check" in obj and check is not None and transform["kind"] in ("jacobian", "hessian"):
            return bad(f"'check' applies to the jvp and hvp transforms, not to {transform['kind']}")
        if transform["kind"] in ("jacobian", "hessian"):
            check = None
        for key in ("gradient", "repeat", "zero_grad", "symbolic"):
            if obj.get(key) is not None:
                return bad(f"'{key}' is a field of gradient entries, not of a transform")
    sym = bool(fields.pop("symbolic", False))
    return Entry(ln.number, program, ln.end, request=_request(program, defaults, **fields), id=obj_id,
                 has_id=has_id, check=check, transform=transform, symbolic=sym)


#: How deeply an ``id`` may nest arrays and objects (it is echoed in every result line).
ID_DEPTH = 100


def _id_problem(value) -> str | None:
    """Why an entry's ``id`` cannot be echoed back as JSON, or None: a number out of range (``1e999`` reads
    as infinity), a string with a lone surrogate (``"\\ud800"``: not UTF-8), nesting deeper than
    :data:`ID_DEPTH`."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > ID_DEPTH:
            return f"'id' nests arrays or objects more than {ID_DEPTH} deep"
        if isinstance(v, float) and not math.isfinite(v):
            return "'id' holds a number out of range of a double (it would read as infinity)"
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return "'id' holds a string with a lone surrogate (\\ud800-\\udfff without its pair): not UTF-8"
        elif isinstance(v, dict):
            stack.extend((x, depth + 1) for kv in v.items() for x in kv)
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v)
    return None


def _entry_transform(obj: dict):
    """An entry's ``transform`` with its ``mode`` and vectors (``tangent`` for jvp, ``vector`` for hvp: objects
    of name: SPEC or data): ``({"kind", "mode", "vectors"} or None, error message or None)``."""
    kind = obj.get("transform")
    if kind is None:
        for key in ("mode", "tangent", "vector"):
            if obj.get(key) is not None:
                return None, f"'{key}' needs a 'transform' ({', '.join(TRANSFORM_VECTORS)})"
        return None, None
    if kind not in TRANSFORM_VECTORS:
        return None, (f"'transform' must be one of {', '.join(TRANSFORM_VECTORS)}, got "
                      f"{json.dumps(kind, ensure_ascii=False)}")
    mode = obj.get("mode", "auto")
    if mode is None:
        mode = "auto"
    if mode not in transforms.MODES or (kind != "jacobian" and mode != "auto"):
        allowed = ", ".join(transforms.MODES) if kind == "jacobian" else '"auto" (only jacobian has modes)'
        return None, f"'mode' must be {allowed}, got {json.dumps(mode, ensure_ascii=False)}"
    field_name = TRANSFORM_VECTORS[kind]
    for key in ("tangent", "vector"):
        if key != field_name and obj.get(key) is not None:
            return None, f"'{key}' is not a field of the {kind} transform"
    vectors = []
    if field_name is not None:
        value = obj.get(field_name)
        if not isinstance(value, dict):
            return None, (f"the {kind} transform needs '{field_name}': an object of input name: SPEC or data "
                          f"(like --{field_name} NAME=SPEC)")
        vectors = list(value.items())
    return {"kind": kind, "mode": mode, "vectors": vectors}, None


def _entry_check(value, default: dict | None):
    """An entry's ``check`` field: ``(tolerances or None, error message or None)``. ``true`` takes the batch's
    tolerances (or gradcheck's defaults), an object overrides some of them, ``false``/null turns checking off."""
    if value is None or value is False:
        return None, None
    fd = finite_differences
    base = dict(default) if default else {"eps": fd.DEFAULT_EPS, "atol": fd.DEFAULT_ATOL, "rtol": fd.DEFAULT_RTOL,
                                          "max_evaluations": fd.DEFAULT_MAX_EVALUATIONS}
    if value is True:
        return base, None
    if not isinstance(value, dict):
        return None, (f"'check' must be true, false or an object of {', '.join(CHECK_FIELDS)}, got "
                      f"{json.dumps(value, ensure_ascii=False)}")
    for key, v in value.items():
        if key not in CHECK_FIELDS:
            return None, f"unknown field 'check.{key}'; the fields are: {', '.join(CHECK_FIELDS)}"
        whole = key == "max_evaluations"
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (whole and not isinstance(v, int)) or \
                v < 0 or (v == 0 and key in ("eps", "max_evaluations")):
            kind = "an integer >= 1" if whole else ("a number > 0" if key == "eps" else "a number >= 0")
            return None, f"'check.{key}' must be {kind}, got {json.dumps(v)}"
        base[key] = v
    return base, None


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _json_type(v) -> str:
    for t, name in ((bool, "a boolean"), (int, "a number"), (float, "a number"), (str, "a string"),
                    (list, "an array"), (dict, "an object")):
        if isinstance(v, t):
            return name
    return "null"


def format_for(path: str, fmt: str = "auto") -> str:
    """The input format: ``fmt`` unless it is "auto"; then by the file's extension (``.jsonl``/``.ndjson``:
    "jsonl"; ``.txt``/``.gc``: "text"), and "auto" (decided by the first line) for other names and ``-``."""
    if fmt != "auto" or path == "-":
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    if suffix in TEXT_SUFFIXES:
        return "text"
    return "auto"


def read_entries(stream, fmt: str, defaults: Defaults) -> Iterator[Entry]:
    """The entries of a binary stream in format ``fmt`` ("text", "jsonl", or "auto": JSON Lines if the first
    non-blank line starts with ``{``, else text), read lazily.

    Raises:
        InputError: if the stream cannot be read (exit 2).
    """
    lines = read_lines(stream, defaults.filename)
    if fmt == "auto":
        head = []
        for ln in lines:
            head.append(ln)
            if ln.text is None or ln.text.strip():
                break
        first = head[-1].text if head else None
        fmt = "jsonl" if first is not None and first.lstrip().startswith("{") else "text"
        lines = itertools.chain(head, lines)
    return (jsonl_entries if fmt == "jsonl" else text_entries)(lines, defaults)

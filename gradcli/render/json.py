"""The ``json`` format: strict RFC 8259 documents, written with ``json.dumps`` (never rich, which wraps long lines).

Arrays become nested lists; NaN and the infinities become the strings ``"NaN"``, ``"Infinity"`` and
``"-Infinity"`` (JSON has no such numbers). float32 values are written with the shortest decimal that reads
back to the same float32 (``0.2``, not ``0.20000000298023224``); float64 values with Python's repr.
Every tensor object (the output, each input, each gradient) carries ``"nonfinite": true`` when its values hold
NaN or an infinity, ``false`` otherwise, so that numerical trouble is never hidden in a long list.

How, by size (the text is the same whichever way): up to 16 elements (a batch entry's arrays), element by
element in Python; larger arrays in a few numpy passes (:func:`shortest_float64`) and one ``tolist``; float32
and float64 arrays of :attr:`ArrayTexts.LARGE` elements or more, as text written by orjson
(:mod:`gradcli.render.jsonarrays`) and written as it is, without ``json.dumps`` walking a list of them.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np

from ..engine.lazy import lazy
from ..app.result import EntryResult, ErrorInfo, GradResult, TensorInfo, nonfinite
from .plotdata import _as_dtype
from .registry import EntryFormat, Renderer, register

symbolic = lazy("gradcli.render.symbolic")  # --symbolic only

jsonarrays = lazy("gradcli.render.jsonarrays")  # large float32/float64 arrays only (it imports orjson)


def _scalar(v: float):
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def array_to_json(a: np.ndarray):
    """A numpy array as JSON-ready nested lists (a bare value for 0-d), see the module docstring.

    Costs a few numpy passes over the array and one C-level ``tolist``, never a Python call per element (a
    float32 array's shortest decimals come from :func:`shortest_float64`), except for the NaN and infinities
    of arrays that hold them, and for arrays of at most 16 elements, where a Python call per element is the
    cheaper way (:func:`_small_float_json`, the same values)."""
    a = np.asarray(a)
    kind = a.dtype.kind
    if kind in "biu":
        return a.tolist()
    if kind == "f" and 0 < a.size <= _SMALL:
        return _small_float_json(a)
    values = a if a.dtype == np.float64 else shortest_float64(a)
    finite = np.isfinite(values)
    if finite.all():
        return values.tolist()
    obj = values.astype(object)
    obj[np.isnan(values)] = "NaN"
    obj[values == np.inf] = "Infinity"
    obj[values == -np.inf] = "-Infinity"
    return obj.tolist()


_SMALL = 16  # up to this many elements, Python handles each one faster than numpy passes over the array


def _small_float_json(a: np.ndarray):
    """:func:`array_to_json` of a float array of 1 to :data:`_SMALL` elements, element by element in Python (a
    batch entry's arrays are this small): float32/float16 values as numpy's ``str`` of each (its shortest
    decimal, as :func:`shortest_float64` gives for a few elements), float64 ones as they are."""
    flat = a.reshape(-1)
    vals = flat.tolist() if a.dtype == np.float64 else [float(str(x)) for x in flat]
    if not all(map(math.isfinite, vals)):
        vals = [_scalar(v) for v in vals]
    if a.ndim == 0:
        return vals[0]
    for n in reversed(a.shape[1:]):  # nested lists, innermost first
        vals = [vals[i:i + n] for i in range(0, len(vals), n)]
    return vals


_POW10 = 10.0 ** np.arange(23)  # exact in float64


def shortest_float64(a: np.ndarray) -> np.ndarray:
    """For a float32 (or float16) array, the float64 array whose ``repr`` of each element is the shortest decimal
    that reads back to that element (numpy's ``str`` of a float32, Dragon4's shortest digits): the nearest
    p-digit decimal for the smallest p (1 to 9) that converts back, found for all elements at once. The decimal
    m * 10**-k is formed by one correctly rounded multiplication or division by an exact power of ten, so it is
    the float64 a JSON reader gets from the text; elements of extreme magnitude (|x| < 1e-14 or >= 1e23,
    where 10**k is not exact) and NaN/infinities take numpy's ``str``. Same shape; float64."""
    a = np.asarray(a)
    flat = a.reshape(-1)
    if flat.size <= 16:  # a few numpy passes cost more than numpy's str of a few elements
        return np.array([float(x) for x in flat.astype(str)], np.float64).reshape(a.shape)
    with np.errstate(invalid="ignore"):  # (a signalling NaN's cast)
        out = flat.astype(np.float64)  # zeros (with their sign), NaN and the infinities stay as they are
        ax = np.abs(out)
    todo = np.nonzero(np.isfinite(ax) & (ax > 0))[0]
    if not todo.size:
        return out.reshape(a.shape)
    e = np.floor(np.log10(ax[todo])).astype(np.int64)
    rare = (e < -14) | (e > 22)
    fallback, todo, e = todo[rare], todo[~rare], e[~rare]
    target, axt = np.abs(flat[todo]), ax[todo]

    def round_trips(digits, axt, e, target):
        k = digits - 1 - e
        pw = _POW10[np.abs(k)]
        up = k >= 0
        m = np.rint(np.where(up, axt * pw, axt / pw))
        dec = np.where(up, m / pw, m * pw)
        return dec.astype(a.dtype) == target, dec

    # Most float32 values need 7 to 9 digits: try 7 first, then go down for those that took 7 and up for the
    # rest, so that each element is tried about three times instead of up to nine.
    good7, dec7 = round_trips(7, axt, e, target)
    down = np.nonzero(good7)[0]
    best = np.where(good7, dec7, np.nan)
    for digits in range(6, 0, -1):
        if not down.size:
            break
        good, dec = round_trips(digits, axt[down], e[down], target[down])
        best[down[good]] = dec[good]
        down = down[good]
    up_idx = np.nonzero(~good7)[0]
    for digits in (8, 9):
        if not up_idx.size:
            break
        good, dec = round_trips(digits, axt[up_idx], e[up_idx], target[up_idx])
        best[up_idx[good]] = dec[good]
        up_idx = up_idx[~good]
    found = ~np.isnan(best)
    out[todo[found]] = np.copysign(best[found], flat[todo[found]])
    todo = todo[~found]
    rest = np.concatenate([todo, fallback])
    if rest.size:  # numpy's own shortest repr, element by element (rare)
        out[rest] = [float(x) for x in flat[rest].astype(str)]
    return out.reshape(a.shape)


def _tensor(t: TensorInfo, enc=array_to_json) -> dict:
    return {"value": enc(t.value), "shape": list(t.shape), "dtype": t.dtype, "grad_fn": t.grad_fn,
            "nonfinite": bool(nonfinite(t.value))}


def _grad(g, shape, enc=array_to_json) -> dict:
    return {"value": None if g is None else enc(g), "shape": list(shape), "nonfinite": bool(nonfinite(g))}


def check_to_dict(c, enc=array_to_json) -> dict:
    """The ``"check"`` member of ``gradcli grad --check --json``."""
    return {
        "ok": c.ok, "eps": c.eps, "atol": c.atol, "rtol": c.rtol, "evaluations": c.evaluations,
        "fails_only_at_kinks": c.fails_only_at_kinks,
        "inputs": {i.name: {"ok": i.ok, "max_abs_diff": _scalar(i.max_abs_diff), "max_rel_diff": _scalar(i.max_rel_diff),
                            "numerical": enc(i.numerical),
                            "kinks": [{"index": list(k.index), "value": _scalar(k.value), "left": _scalar(k.left),
                                       "right": _scalar(k.right), "numerical": _scalar(k.numerical),
                                       "analytical": _scalar(k.analytical), "ok": k.ok, "ops": list(k.ops),
                                       "jump": k.jump, "message": k.message(i.name)}
                                      for k in getattr(i, "kinks", ())]}
                   for i in c.inputs},
    }


#: The members of ``gradcli grad --json`` that ``--fields`` chooses from (all of them by default).
FIELDS = ("output", "inputs", "grads", "calls", "graph", "symbolic")


class ArrayTexts:
    """Encodes the arrays of one document: small ones as nested lists (:func:`array_to_json`), large ones
    (``LARGE`` elements or more) once each as JSON text behind a placeholder that :meth:`substitute` replaces
    in the document's text (or :meth:`write` writes in its place), so that an array that appears twice (the
    gradient under ``grads`` and again under ``calls``) is encoded once. A large float32/float64 array's text
    is written by orjson (:func:`gradcli.render.jsonarrays.float_array_parts`), other dtypes' by ``json.dumps``."""

    LARGE = 1024
    _TOKEN = re.compile(r'"\\u0000(\d+)\\u0000"')

    def __init__(self):
        self.texts: list[str] = []
        self._seen: list[tuple[np.ndarray, str]] = []

    def __call__(self, a) -> object:
        a = np.asarray(a)
        if a.size < self.LARGE:
            return array_to_json(a)
        nan = a.dtype.kind == "f"
        for ref, token in self._seen:
            if ref is a or (ref.shape == a.shape and ref.dtype == a.dtype
                            and np.array_equal(ref.flat[:64], a.flat[:64], equal_nan=nan)  # (most differ early)
                            and np.array_equal(ref, a, equal_nan=nan)):
                return token
        token = f"\x00{len(self.texts)}\x00"
        if a.dtype in (np.float32, np.float64) and a.ndim:  # by orjson, not json.dumps (many times faster)
            # ASCII bytes, written as they are where it can be
            self.texts.append(jsonarrays.float_array_parts(a))
        else:
            self.texts.append(json.dumps(array_to_json(a), allow_nan=False))
        self._seen.append((a, token))
        return token

    def substitute(self, text: str) -> str:
        """``text`` (``json.dumps`` of a document built with this encoder) with each placeholder replaced."""
        if not self.texts:
            return text
        return self._TOKEN.sub(lambda m: self._str(int(m.group(1))), text)

    def _str(self, i: int) -> str:
        t = self.texts[i]
        return b"".join(t).decode("ascii") if isinstance(t, list) else t

    def write(self, text: str, stream) -> None:
        """Write :meth:`substitute` of ``text`` to ``stream`` piece by piece, without joining the large texts
        into one string (the ASCII ones go to the stream's binary buffer when its encoding is ASCII's superset)."""
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            import codecs

            try:
                if codecs.lookup(stream.encoding).name not in ("utf-8", "ascii", "latin-1", "iso8859-1", "cp1252"):
                    buffer = None
            except (AttributeError, LookupError, TypeError):
                buffer = None
        pos = 0
        for m in self._TOKEN.finditer(text):
            stream.write(text[pos:m.start()])
            t = self.texts[int(m.group(1))]
            if isinstance(t, list) and buffer is not None:
                stream.flush()
                if sum(map(len, t)) > _PIPE_BYTES:
                    _widen_pipe(buffer)
                for part in t:
                    buffer.write(part)
            else:
                stream.write(self._str(int(m.group(1))))
            pos = m.end()
        stream.write(text[pos:])


_PIPE_BYTES = 1 << 20


def _widen_pipe(buffer) -> None:
    """Before writing megabytes to a pipe (``gradcli grad ... --json | jq``): let the pipe hold up to 1 MiB
    (Linux's ``F_SETPIPE_SZ``; its default is 64 KiB), so that the writer and the reader take turns a sixteenth
    as often. Does nothing elsewhere, or when the system refuses."""
    try:
        import fcntl
        import os
        import stat

        fd = buffer.fileno()
        if stat.S_ISFIFO(os.fstat(fd).st_mode) and hasattr(fcntl, "F_SETPIPE_SZ"):
            if fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) < _PIPE_BYTES:
                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (OSError, ValueError, AttributeError, ImportError):
        pass


def _graph_node(n, values: bool = False) -> dict:
    d = {"id": n.id, "name": n.name, "shape": list(n.shape), "dtype": n.dtype, "inputs": n.inputs, "leaf": n.leaf}
    if n.output_shapes is not None:
        d["output_shapes"] = [list(s) for s in n.output_shapes]
    if values:  # --graph-values (gradcli.app.recording): the variable, forward value and incoming gradient
        d.update(var=n.var, value=_values_json(n.value), grad=_values_json(n.grad))
    if n.saved is not None:  # --graph-saved
        d["saved"] = [{"name": name, "value": array_to_json(a)} for name, a in n.saved]
    return d


def _values_json(v):
    # one array, a list of them (one per output of a node with several; None where there is none), or None
    if v is None:
        return None
    if isinstance(v, list):
        return [_values_json(x) for x in v]
    return array_to_json(v)


def graph_to_dict(graph) -> dict:
    """The ``"graph"`` member of ``gradcli grad --json``: ``nodes`` (with ``var``, ``value`` and ``grad`` under
    --graph-values, ``saved`` under --graph-saved) and ``edges``."""
    multi = {n.id for n in graph.nodes if n.output_shapes is not None}  # nodes with several outputs
    return {
        "nodes": [_graph_node(n, graph.values) for n in graph.nodes],
        "edges": [{"from": a, "to": b, "output_nr": nr} if a in multi else {"from": a, "to": b}
                  for a, b, nr in graph.edges],
    }


def grad_result_to_dict(r: GradResult, enc=array_to_json, fields=FIELDS) -> dict:
    """The ``gradcli grad --json`` document (schema: ``gradcli schema grad``): the members ``fields`` (all of
    :data:`FIELDS` by default, ``--fields``), ``"check"`` only with --check. ``enc`` encodes each array (an
    :class:`ArrayTexts` for large documents)."""
    shapes = {i.name: i.value.shape for i in r.inputs}
    members = {
        "output": lambda: _tensor(r.output, enc),
        "inputs": lambda: {i.name: dict(_tensor(i.value, enc), requires_grad=i.value.requires_grad, kind=i.kind)
                           for i in r.inputs},
        "grads": lambda: {name: _grad(g, shapes[name], enc) for name, g in r.grads().items()},
        "calls": lambda: [{"grads": {name: _grad(g, shapes[name], enc) for name, g in call.items()}}
                          for call in r.calls],
        "graph": lambda: graph_to_dict(r.graph),
    }
    doc = {name: members[name]() for name in FIELDS if name in fields and name in members}
    if getattr(r, "symbolic", None) is not None and "symbolic" in fields:  # --symbolic
        doc["symbolic"] = symbolic.to_dict(r.symbolic)
    if r.check is not None:
        doc["check"] = check_to_dict(r.check, enc)
    return doc


def grad_text(r: GradResult, fields=FIELDS) -> str:
    """The text of the ``gradcli grad --json`` document (large arrays encoded once each: :class:`ArrayTexts`)."""
    enc = ArrayTexts()
    return enc.substitute(dumps(grad_result_to_dict(r, enc, fields)))


_ENCODER = json.JSONEncoder(allow_nan=False, ensure_ascii=False)  # what json.dumps(doc, ...) would build each time


def dumps(doc) -> str:
    """Strict JSON text (``allow_nan=False``: a stray NaN is a bug, not output); ``json.dumps(doc,
    allow_nan=False, ensure_ascii=False)``."""
    return _ENCODER.encode(doc)


def batch_entry_to_dict(line: int, result: GradResult | None = None, error: dict | None = None,
                        id=None, has_id: bool = False, enc=array_to_json) -> dict:
    """One ``gradcli batch --json`` line (schema: ``gradcli schema batch``): ``line`` (1-based line of the entry
    in its file), ``id`` when the entry gave one, then either the fields of ``gradcli grad --json`` (of
    ``gradcli jacobian``/``hessian``/``jvp``/``hvp --json`` for an entry with a ``transform``) or
    ``error`` (``{"type", "message", "line", "column"}``, the position relative to the entry's text)."""
    doc = {"line": line}
    if has_id:
        doc["id"] = id
    if error is not None:
        doc["error"] = error
    elif getattr(result, "blocks", None) is not None:  # a transform entry (gradcli.app.transforms.TransformResult)
        doc.update(transform_to_dict(result, enc))
    else:
        doc.update(grad_result_to_dict(result, enc))
    return doc


def error_to_dict(error: ErrorInfo) -> dict:
    """The ``error`` member of a failed ``gradcli batch`` entry: ``{"type", "message", "line", "column"}``."""
    return {"type": error.type, "message": error.message, "line": error.line, "column": error.column}


class JsonEntries(EntryFormat):
    """``gradcli batch``'s JSON Lines: one :func:`batch_entry_to_dict` object per line, no header."""

    def entry(self, item: EntryResult) -> str:
        enc = ArrayTexts()
        doc = batch_entry_to_dict(item.line, item.result, None if item.error is None else error_to_dict(item.error),
                                  item.id, item.has_id, enc)
        return enc.substitute(dumps(doc)) + "\n"


class JsonRenderer(Renderer):
    """The ``json`` format: one document per command (``gradcli schema grad``/``ops``), JSON Lines for
    ``gradcli batch`` (``gradcli schema batch``)."""

    name = "json"

    def grad(self, result: GradResult, stream, fields=FIELDS) -> None:
        enc = ArrayTexts()
        enc.write(dumps(grad_result_to_dict(result, enc, fields)) + "\n", stream)

    def ops(self, infos: list, stream) -> None:
        stream.write(dumps([i.to_dict() for i in infos]) + "\n")

    def transform(self, result, stream) -> None:
        enc = ArrayTexts()
        enc.write(dumps(transform_to_dict(result, enc)) + "\n", stream)

    def batch(self, stream) -> JsonEntries:
        return JsonEntries()

    def graph(self, result, stream, options) -> None:
        stream.write(dumps(graph_to_dict(result.graph)) + "\n")

    def plot(self, result, stream) -> None:
        stream.write(dumps(plot_to_dict(result)) + "\n")

    def explain(self, result, stream) -> None:
        stream.write(dumps(explanation_to_dict(result)) + "\n")


register(JsonRenderer())


def transform_to_dict(r, enc=array_to_json) -> dict:
    """The ``gradcli jacobian``/``hessian``/``jvp``/``hvp --json`` document (schemas of the same names): the
    output, the blocks under the transform's name (by input name; by two names for the Hessian; one block for
    the JVP; a Jacobian of a tuple of outputs: a list of the outputs, and a list of blocks by input name, one
    per output), the mode, and ``"check"`` with ``--check``."""
    def block(a):
        return {"value": enc(a), "shape": list(a.shape)}

    if r.kind == "hessian":
        body = {}
        for (a, b), arr in r.blocks.items():
            body.setdefault(a, {})[b] = block(arr)
    elif r.kind == "jvp":
        body = block(r.blocks[None])
    elif isinstance(r.output, tuple):  # several outputs: a list over them of blocks by input name
        body = [{} for _ in r.output]
        for (i, name), a in r.blocks.items():
            body[i][name] = block(a)
    else:
        body = {name: block(a) for name, a in r.blocks.items()}
    output = [_tensor(o, enc) for o in r.output] if isinstance(r.output, tuple) else _tensor(r.output, enc)
    doc = {"output": output, r.kind: body, "mode": r.mode}
    if getattr(r, "symbolic", None) is not None:  # hessian --symbolic
        doc["symbolic"] = symbolic.to_dict(r.symbolic)
    if r.check is not None:
        doc["check"] = check_to_dict(r.check, enc)
    return doc


def explanation_to_dict(result: GradResult) -> dict:
    """The ``gradcli grad --explain --json`` document (schema: ``gradcli schema explain``)."""
    ex = result.explanation
    return {
        "output": _tensor(result.output),
        "seed": None if ex.seed is None else array_to_json(ex.seed),
        "steps": [{"id": s.id, "name": s.name, "var": s.var, "formula": s.formula, "value": _values_json(s.value),
                   "grad_in": _values_json(s.grad_in),
                   "sent": [{"to": x.to, "input": x.input, "grad": None if x.grad is None else array_to_json(x.grad)}
                            for x in s.sent]}
                  for s in ex.steps],
        "leaves": {name: None if g is None else array_to_json(g) for name, g in ex.leaves.items()},
    }


def plot_to_dict(result) -> dict:
    """The ``gradcli plot --format json`` document (schema: ``gradcli schema plot``)."""
    dt = result.dtype

    def arr(a):
        return array_to_json(_as_dtype(a, dt))

    doc = {"program": result.program, "dtype": dt, "order": result.order, "vectorized": result.vectorized}
    if result.curve is not None:
        c = result.curve
        doc["over"] = [c.name]
        doc.update(x=arr(c.x), f=arr(c.f), df=arr(c.df))
        if result.order == 2:
            doc["d2f"] = None if c.d2 is None else arr(c.d2)
        doc["breaks"] = {"f": np.nonzero(c.f_break)[0].tolist(), "df": np.nonzero(c.df_break)[0].tolist()}
        if result.order == 2:
            doc["breaks"]["d2f"] = np.nonzero(c.d2_break)[0].tolist()
        doc["kinks"] = [{"x": arr(k.x), "f": arr(k.f), "df": arr(k.df), "left": arr(k.left), "right": arr(k.right)}
                        for k in c.kinks]
    else:
        fl = result.field
        doc["over"] = [fl.xname, fl.yname]
        doc.update(x=arr(fl.x), y=arr(fl.y), f=arr(fl.f), df={fl.xname: arr(fl.dfdx), fl.yname: arr(fl.dfdy)})
    return doc

"""The ``compact`` format (``--format compact``, ``-q``): one line per result, as a person reads an answer.

``gradcli grad``::

    output: tensor(28., grad_fn=<MulBackward0>)
    x: tensor([ 0.,  4.,  8., 12.])

each tensor as PyTorch prints it, a tensor printed over several lines joined onto one (``[[1., 2.], [3., 4.]]``);
with ``--repeat`` one line per input and call (``x (call 2): ...``); the note when there is no gradient, the
check's verdict with ``--check``. The output and the gradients by default; ``--show output,inputs,grads,graph``
adds the inputs (``x (input): ...``) and the graph on one line. ``gradcli batch``: one line per entry, ``LINE: output; x: grad`` or
``LINE: Type: message``. ``--show`` chooses the sections, as for tables.
"""

from __future__ import annotations

import re

import numpy as np

from ..engine.lazy import lazy
from ..engine.printing import format_tensor
from ..app.result import EntryResult, GradResult
from .messages import escape_controls
from .registry import EntryFormat, Renderer, register

symbolic = lazy("gradcli.render.symbolic")  # --symbolic only

transforms = lazy("gradcli.app.transforms")  # a transform's lines only

#: The sections of a ``gradcli grad`` answer that ``--show`` chooses from (tables and compact lines).
SECTIONS = ("output", "inputs", "grads", "graph", "formula")

_JOIN = re.compile(r"\n\s*")


def one_line(text: str) -> str:
    """A tensor's text (PyTorch's, maybe over several lines) on one line: ``tensor([[1., 2.], [3., 4.]])``."""
    return _JOIN.sub(" ", text)


def grad_lines(result: GradResult, sections=SECTIONS) -> list[str]:
    """The compact answer of ``gradcli grad``, line by line (see the module docstring)."""
    d = np.dtype(result.default_dtype)

    def fmt(value, **kw) -> str:
        return one_line(format_tensor(value, default_dtype=d, **kw))

    lines = []
    out = result.output
    if "output" in sections:
        lines.append("output: " + fmt(out.value, grad_fn=out.grad_fn, requires_grad=out.requires_grad))
    if "inputs" in sections:
        for i in result.inputs:
            lines.append(f"{i.name} ({i.kind}): " + fmt(i.value.value, requires_grad=i.value.requires_grad))
    if "grads" in sections:
        if result.note is not None:
            lines.append(result.note)
        names = [i.name for i in result.inputs if i.value.requires_grad]
        multi = len(result.calls) > 1
        for name in names:
            for k, call in enumerate(result.calls):
                g = call.get(name)
                label = f"{name} (call {k + 1})" if multi else name
                lines.append(f"{label}: " + ("None" if g is None else fmt(g)))
        if result.check is not None:
            lines.append(check_line(result.check))
    sym = getattr(result, "symbolic", None)  # --symbolic: with the gradients, or alone (--show formula)
    if sym is not None and ("grads" in sections or "formula" in sections):
        lines.extend(symbolic.lines(sym))
    if "graph" in sections and result.graph.nodes:
        lines.append("graph: " + ", ".join(f"{n.id}={n.name}({', '.join(n.inputs)})" if n.inputs else
                                           f"{n.id}={n.name}" for n in result.graph.nodes))
    return lines


def transform_lines(r) -> list[str]:
    """``gradcli jacobian``/``hessian``/``jvp``/``hvp -q``: the output, then one line per block (``d output/d x:
    tensor(...)``, ``jvp: tensor(...)``), then the ``--check`` line."""
    d = np.dtype(r.default_dtype)
    lines = ["output: " + one_line(transforms.output_text(r.output, d))]
    for key, a in r.blocks.items():
        lines.append(f"{transforms.block_label(r.kind, key)}: " + one_line(format_tensor(a, default_dtype=d)))
    if getattr(r, "symbolic", None) is not None:  # hessian --symbolic
        lines.extend(symbolic.lines(r.symbolic))
    if r.check is not None:
        lines.append(check_line(r.check))
    return lines


def check_line(check) -> str:
    """The compact line of a ``--check``: ok, FAILED, or FAILED at kinks only (every element beyond the tolerance
    is at a kink: see :mod:`gradcli.app.finite_differences`), and the largest absolute difference."""
    worst = max((i.max_abs_diff for i in check.inputs), default=0.0)
    at_kinks = getattr(check, "fails_only_at_kinks", False)  # (a transform's check has no kinks)
    verdict = "ok" if check.ok else "FAILED at kinks only" if at_kinks else "FAILED"
    return f"check: {verdict} (max |grad - numerical| {worst:.3g})"


class CompactEntries(EntryFormat):
    """``gradcli batch --format compact``: one line per entry."""

    def entry(self, item: EntryResult) -> str:
        if item.error is not None:
            return escape_controls(f"{item.line}: {item.error.type}: {one_line(item.error.message)}") + "\n"
        if getattr(item.result, "blocks", None) is not None:  # a transform entry
            lines = transform_lines(item.result)
        else:
            lines = grad_lines(item.result, ("output", "grads"))
        return escape_controls(f"{item.line}: " + "; ".join(lines)) + "\n"


class CompactRenderer(Renderer):
    """The ``compact`` format: one line per result (see the module docstring)."""

    name = "compact"
    prints_to_stdout = True

    def grad(self, result: GradResult, stream, fields=("output", "grads")) -> None:
        stream.write("".join(escape_controls(line) + "\n" for line in grad_lines(result, fields)))

    def batch(self, stream) -> CompactEntries:
        return CompactEntries()

    def transform(self, result, stream) -> None:
        stream.write("".join(escape_controls(line) + "\n" for line in transform_lines(result)))


register(CompactRenderer())

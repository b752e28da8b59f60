"""The catalogue of supported ops behind ``gradcli ops``, read from the op table itself
(:data:`gradcli.ops.REGISTRY`): nothing here is written by hand per op.

Every registry entry, an Op (``@op``) or a composite function (``@composite``), carries the same fields
(:class:`gradcli.ops.core.declare.Entry`): PyTorch's name, the call signature, the grad_fn PyTorch records ("varies"
when it depends on the arguments, e.g. ``sum`` with and without ``dim``, or matmul's choice of dot, mv, mm or
bmm), and the one-line derivative note declared with it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..ops import REGISTRY
from ..ops.core.declare import Op, _summary, signature_of


@dataclass
class OpInfo:
    """One name of the language's namespace.

    kind: "op" (differentiable or not), "creation" (tensor factories) or "function" (grad modes, seeding).
    signature: ``name(param, ..., param=default)`` as the function accepts it.
    grad_fn: PyTorch's backward class name, "varies", "composite", or None (no gradient).
    derivative: the derivative note ("" when none was declared).
    method: also a Tensor method of the same name.
    alias_of: the canonical name when this name is an alias (``absolute`` of ``abs``), else None.
    summary: the first line of the docstring.
    """
    name: str
    kind: str
    signature: str
    grad_fn: str | None
    derivative: str
    method: bool
    alias_of: str | None
    summary: str

    def to_dict(self) -> dict:
        """JSON-ready dict (schema: ``gradcli schema ops``)."""
        return asdict(self)


def _grad_fn(entry) -> str | None:
    """What ``gradcli ops`` shows as an entry's grad_fn: None without a gradient, "varies" for an op whose
    grad_fn is a function of its arguments, else the declared text."""
    g = entry.grad_fn
    if g is None or not entry.differentiable:
        return None
    return g if isinstance(g, str) else "varies"


def list_ops(kind: str | None = None, name: str | None = None) -> list[OpInfo]:
    """Every registry entry, sorted by name.

    Args:
        kind: keep only this kind ("op", "creation", "function").
        name: keep only names containing this text (case-insensitive).
    """
    out = []
    for n in sorted(REGISTRY):
        if n.startswith("_"):
            continue
        entry = REGISTRY[n]
        if kind is not None and entry.kind != kind:
            continue
        if name is not None and name.lower() not in n.lower():
            continue
        out.append(OpInfo(name=n, kind=entry.kind, signature=f"{n}{signature_of(entry)}".replace("'", '"'),
                          grad_fn=_grad_fn(entry), derivative=entry.note, method=bool(entry.method),
                          alias_of=entry.name if n != entry.name else None,
                          summary=entry.summary if isinstance(entry, Op) else _summary(entry.__doc__)))
    return out

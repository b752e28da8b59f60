"""The catalogue of supported ops behind ``gradcli ops``, read from the op table itself
(:data:`gradcli.ops.REGISTRY`): nothing here is written by hand per op.

Each entry gives PyTorch's name, the call signature, the grad_fn PyTorch records (the Op's ``grad_fn``; "varies"
when it depends on the arguments, e.g. ``sum`` with and without ``dim``; "composite" for functions built from
other ops), and the one-line derivative note declared with the op (``@op(..., note=...)``).
"""

from __future__ import annotations

import inspect
from dataclasses import asdict, dataclass


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


def _signature(name: str, fn) -> str:
    target = getattr(fn, "forward", fn)
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return f"{name}(...)"
    return f"{name}{sig}".replace("'", '"')


def _grad_fn(fn) -> str | None:
    from .ops import Op

    if isinstance(fn, Op):
        if fn.differentiable is False or fn.grad_fn is None:
            return None
        return fn.grad_fn if isinstance(fn.grad_fn, str) else "varies"
    declared = getattr(fn, "grad_fn", None)
    if isinstance(declared, str):
        return declared
    if getattr(fn, "differentiable", True) is False:
        return None
    return "composite"


def _summary(fn) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ")


def list_ops(kind: str | None = None, name: str | None = None) -> list[OpInfo]:
    """Every registry entry, sorted by name.

    Args:
        kind: keep only this kind ("op", "creation", "function").
        name: keep only names containing this text (case-insensitive).
    """
    from .ops import KINDS, REGISTRY
    from .ops._core import METHODS

    canonical = {}
    for n, fn in REGISTRY.items():
        own = getattr(fn, "name", None) or getattr(fn, "__name__", n)
        canonical[n] = own if own != n and own in REGISTRY and REGISTRY[own] is fn else None
    out = []
    for n in sorted(REGISTRY):
        if n.startswith("_"):
            continue
        k = KINDS[n]
        if kind is not None and k != kind:
            continue
        if name is not None and name.lower() not in n.lower():
            continue
        fn = REGISTRY[n]
        out.append(OpInfo(name=n, kind=k, signature=_signature(n, fn), grad_fn=_grad_fn(fn) if k == "op" else None,
                          derivative=getattr(fn, "note", "") or "", method=n in METHODS, alias_of=canonical[n],
                          summary=_summary(fn)))
    return out

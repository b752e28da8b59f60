"""The gradient as a formula (``--symbolic``) in each format: the table section "formula", the compact lines,
and the ``symbolic`` member of ``--json`` (schema: ``gradcli schema grad``). The formulas themselves are
:class:`gradcli.app.symbolic.SymbolicResult`, read here by attribute only (no SymPy is imported to print them).
"""

from __future__ import annotations


def verdict(f) -> str:
    """``agrees (max abs diff 2.1e-16)``, ``disagrees (max abs diff 0.5)``, or the reason there is none."""
    if f.reason is not None:
        return f.reason
    if f.agrees is None:
        return "not checked (no gradient to compare)"
    return f"{'agrees' if f.agrees else 'disagrees'} (max abs diff {f.max_abs_diff:.2g})"


def shown(f, style: str) -> str:
    """The formula in the tables' style: Unicode, or LaTeX with ``--symbolic-format latex``."""
    return f.latex if style == "latex" else f.pretty


def to_dict(sym) -> dict:
    """``{NAME: {"expr", "pretty", "latex", "agrees", "max_abs_diff", "reason"}}`` (``--json``'s ``symbolic``)."""
    return {name: {"expr": f.expr, "pretty": f.pretty, "latex": f.latex, "agrees": f.agrees,
                   "max_abs_diff": f.max_abs_diff, "reason": f.reason}
            for name, f in sym.formulas.items()}


def table(sym, console) -> None:
    """The "formula" section: one row per input (its formula and the check at the inputs, red when it
    disagrees), or the one-line reason why there is none."""
    from rich.table import Table
    from rich.text import Text

    what = "hessian" if sym.what == "hessian" else "gradient"
    if sym.reason is not None:
        console.print(Text(f"formula: {sym.reason}"), soft_wrap=True)
        return
    t = Table()
    for col in ("name", "formula", "check at the inputs"):
        t.add_column(col)
    for name, f in sym.formulas.items():
        bad = f.reason is None and f.agrees is False
        t.add_row(Text(name), Text(shown(f, sym.style) or ""),
                  Text(verdict(f), style="bold red" if bad else ("green" if f.agrees else "")))
    console.print(Text(f"formula: the {what} in closed form", style="italic"), soft_wrap=True)
    console.print(t)


def lines(sym) -> list[str]:
    """Compact lines: ``x: formula: (A + Aᵀ) x  [agrees (max abs diff 0)]``."""
    if sym.reason is not None:
        return [f"formula: {sym.reason}"]
    return [f"{name}: formula: {shown(f, sym.style) or '-'}  [{verdict(f)}]" for name, f in sym.formulas.items()]

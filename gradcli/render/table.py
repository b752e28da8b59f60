"""Rich tables for ``gradcli grad``: the output, the inputs, their gradients (one row per backward call with
--repeat), and the graph. Values are shown exactly as PyTorch prints them. Rich writes plain text without
escape codes when stdout is not a terminal or NO_COLOR is set.
"""

from __future__ import annotations

from ..printing import format_tensor
from ..result import GradResult


def _shape(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def render_grad(result: GradResult, console, default_dtype) -> None:
    """Print the tables of a :class:`GradResult` on a rich Console.

    Args:
        default_dtype: the default float numpy dtype (decides PyTorch's ``dtype=`` suffix in values).
    """
    from rich.table import Table
    from rich.text import Text  # cells are Text so that "[...]" in values is never read as rich markup

    def fmt(value, grad_fn=None, requires_grad=False):
        return Text(format_tensor(value, grad_fn=grad_fn, requires_grad=requires_grad, default_dtype=default_dtype))

    out = result.output
    t = Table(title="output", title_justify="left")
    for col in ("value", "shape", "dtype", "grad_fn"):
        t.add_column(col)
    t.add_row(fmt(out.value, out.grad_fn, out.requires_grad), Text(_shape(out.shape)), Text(out.dtype),
              Text(out.grad_fn or "-"))
    console.print(t)

    if result.inputs:
        t = Table(title="inputs", title_justify="left")
        for col in ("name", "kind", "value", "shape", "dtype"):
            t.add_column(col)
        for inp in result.inputs:
            t.add_row(Text(inp.name), Text(inp.kind), fmt(inp.value.value, requires_grad=inp.value.requires_grad),
                      Text(_shape(inp.value.shape)), Text(inp.value.dtype))
        console.print(t)

    names = [i.name for i in result.inputs if i.value.requires_grad]
    if names and result.calls:
        multi = len(result.calls) > 1
        t = Table(title="gradients" + (" after each backward call" if multi else ""), title_justify="left",
                  show_lines=multi)
        t.add_column("name")
        if multi:
            t.add_column("call")
        t.add_column("grad")
        for name in names:
            for k, call in enumerate(result.calls):
                g = call.get(name)
                cells = [Text(name)] + ([Text(str(k + 1))] if multi else []) + \
                        [Text("None") if g is None else fmt(g)]
                t.add_row(*cells)
        console.print(t)

    if result.graph.nodes:
        t = Table(title="graph (root first; inputs feed each node)", title_justify="left")
        for col in ("id", "grad_fn", "shape", "dtype", "inputs"):
            t.add_column(col)
        for node in result.graph.nodes:
            t.add_row(*(Text(c) for c in (node.id, node.name, _shape(node.shape), node.dtype,
                                          ", ".join(node.inputs) or "-")))
        console.print(t)


def render_check(check, console) -> None:
    """Print the ``--check`` table: per input, the largest absolute and relative difference between the
    gradient and central finite differences in float64, and whether it is within tolerance."""
    from rich.table import Table
    from rich.text import Text

    t = Table(title=f"check: central differences in float64 (eps {check.eps:g}; pass when |grad - numerical| "
                    f"<= {check.atol:g} + {check.rtol:g} * |numerical|)", title_justify="left")
    for col in ("name", "max abs diff", "max rel diff", "result"):
        t.add_column(col)
    for i in check.inputs:
        t.add_row(Text(i.name), Text(f"{i.max_abs_diff:.3e}"), Text(f"{i.max_rel_diff:.3e}"),
                  Text("ok" if i.ok else "FAIL", style="green" if i.ok else "bold red"))
    console.print(t)


def render_ops(infos, console) -> None:
    """Print the ``gradcli ops`` table (one row per name: signature, grad_fn, derivative note)."""
    from rich.table import Table
    from rich.text import Text

    t = Table(title=f"{len(infos)} names (gradcli ops --json for all fields)", title_justify="left")
    for col in ("name", "kind", "signature", "grad_fn", "derivative"):
        t.add_column(col, overflow="fold")
    for i in infos:
        derivative = i.derivative or ("-" if i.grad_fn is None else "")
        if i.alias_of:
            derivative = f"alias of {i.alias_of}"
        t.add_row(Text(i.name + (" (method)" if i.method else "")), Text(i.kind), Text(i.signature),
                  Text(i.grad_fn or "-"), Text(derivative))
    console.print(t)

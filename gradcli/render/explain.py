"""``gradcli grad --explain`` as a table (people) and as JSON (programs; schema: ``gradcli schema explain``).

One row per node of the graph in backward order: the node (its program variable and grad_fn), its local
derivative as a formula, its forward value, the gradient that came in, and what it sent to each input.
Scalars are written in full (the shortest decimal that reads back to the same value of their dtype), tensors
as PyTorch prints them, summarized past :data:`THRESHOLD` elements in the table (the JSON has every element).
"""

from __future__ import annotations

from ..app.result import GradResult
from .graphview import value_text

#: Elements of a tensor shown in the table before it is summarized (PyTorch's summary: first and last 3).
THRESHOLD = 12


def _text(v, default) -> str:
    return value_text(v, default, THRESHOLD)


def render_explain(result: GradResult, console) -> None:
    """Print the explanation of ``result`` (``result.explanation``) on a rich Console: how backward starts,
    one row per node, and what each input received."""
    from rich.table import Table
    from rich.text import Text

    ex = result.explanation
    default = result.default_dtype
    if not ex.steps:
        console.print(Text("the output has no grad_fn: no inputs require grad, so there is no chain rule to "
                           "explain"))
        return
    console.print(Text(f"backward starts at the output ({ex.steps[0].id}) with the gradient "
                       f"{_text(ex.seed, default)}" + (" (ones: the output has one element)"
                                                       if _is_ones(ex.seed) else " (--gradient)")))
    t = Table(show_lines=True)
    t.add_column("node", overflow="fold")
    t.add_column("local derivative", overflow="fold")
    t.add_column("value", overflow="fold")
    t.add_column("grad in", overflow="fold")
    t.add_column("sends to each input", overflow="fold")
    for s in ex.steps:
        node = Text(s.id + "\n")
        if s.var:
            node.append(s.var, style="bold")
            node.append(" · ")
        node.append(s.name)
        sent = Text()
        for k, x in enumerate(s.sent):
            if k:
                sent.append("\n")
            target = x.to if x.to is not None else "-"
            sent.append(f"→ {target} ({x.input}): ")
            if x.to is None:
                sent.append("nothing (does not require grad)", style="dim")
            elif x.grad is None:
                sent.append("None", style="dim")
            else:
                sent.append(_text(x.grad, default))
        if s.grad_in is None:
            sent = Text("no gradient arrived: not run", style="dim")
        t.add_row(node, Text(s.formula or "-"), Text(_text(s.value, default) if s.value is not None else "-"),
                  Text(_text(s.grad_in, default)), sent)
    _titled(console, "the chain rule, node by node (backward order, the last backward call)", t)
    if ex.leaves:
        t = Table()
        t.add_column("input")
        t.add_column("gradient", overflow="fold")
        for name, g in ex.leaves.items():
            t.add_row(Text(name), Text("None" if g is None else _text(g, default)))
        _titled(console, "what each input received", t)


def _titled(console, title: str, table) -> None:
    # as gradcli.render.table.print_titled (which imports this module): the title a line of its own, never wrapped
    # into a block as narrow as the table nor padded to its width
    from rich.text import Text

    console.print(Text(title, style="italic"), soft_wrap=True)
    console.print(table)


def _is_ones(seed) -> bool:
    import numpy as np

    return seed is not None and np.asarray(seed).size == 1 and float(np.asarray(seed).reshape(-1)[0]) == 1.0

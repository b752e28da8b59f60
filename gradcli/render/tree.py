"""The ``tree`` format: the autograd graph as a tree in the terminal (rich), the output at the top and each
node's inputs under it, as ``grad_fn.next_functions`` walks it.

A node that feeds several others (``a`` in ``a * a + a``) is drawn under the first and referred to as
``↑ n3`` after that, so the tree has as many lines as the graph has edges. With ``--graph-values`` each node
shows its forward value and gradient on the lines under it. Colours follow the picture formats (the output
green, inputs blue); rich writes plain text when standard output is not a terminal or ``NO_COLOR`` is set.
"""

from __future__ import annotations

from .graphview import build_view

STYLES = {"root": "bold green", "op": "", "input": "bold blue", "leaf": "bold cyan", "collapsed": "dim italic",
          "more": "dim italic"}


def _label(v):
    from rich.text import Text

    t = Text()
    if v.kind in ("collapsed", "more"):
        t.append(v.title, style=STYLES[v.kind])
        return t
    if v.var and v.kind in ("root", "op"):
        t.append(v.var, style="bold")
        t.append(" · ")
        t.append(v.op, style=STYLES[v.kind])
    else:
        t.append(v.title, style=STYLES[v.kind])
    t.append(f"  {v.detail}", style="dim")
    if v.kind == "root":
        t.append("  (output)", style="green")
    elif v.kind in ("input", "leaf"):
        t.append(f"  {v.kind}", style="dim")
    if v.value is not None:
        t.append("\nvalue " + v.value.replace("\n", "\n      "))
        t.append("\ngrad  " + v.grad.replace("\n", "\n      "))
    for name, text in v.saved:
        t.append(f"\nsaved {name}: " + text.replace("\n", "\n      "), style="yellow")
    return t


def build_tree(result, options=None):
    """The rich ``Tree`` of ``result``'s graph (see the module docstring), or None for an empty graph;
    ``options``: a :class:`~gradcli.render.graphview.GraphOptions` (None: the defaults)."""
    from rich.text import Text
    from rich.tree import Tree

    view = build_view(result, options)
    if not view.nodes:
        return None
    nodes = {v.id: v for v in view.nodes}
    inputs = {}
    for src, dst, label in view.edges:
        inputs.setdefault(dst, []).append((src, label))
    root = view.nodes[0]
    tree = Tree(_label(root))
    drawn = {root.id}
    # Depth first, in drawing order: a node is drawn where the tree first reaches it, and every later edge to
    # it (lower on the screen) is the "↑" reference.
    stack = [(tree, iter(inputs.get(root.id, ())))]
    while stack:
        branch, pending = stack[-1]
        edge = next(pending, None)
        if edge is None:
            stack.pop()
            continue
        src, label = edge
        v = nodes.get(src)
        if v is None:
            continue
        prefix = Text(f"[{label}] ", style="dim") if label else Text()
        if src in drawn:
            branch.add(prefix + Text(f"↑ {v.title} (drawn above)", style="dim"))
            continue
        drawn.add(src)
        stack.append((branch.add(prefix + _label(v)), iter(inputs.get(src, ()))))
    if view.note:
        tree.add(Text(view.note, style="dim italic"))
    return tree

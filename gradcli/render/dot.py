"""The ``dot`` format: the autograd graph as Graphviz DOT text (no dependency; ``dot -Tsvg`` draws it).

Drawn as torchviz's ``make_dot`` draws PyTorch's graph (edges from each input to the node that consumed it,
boxes filled by kind: the output green, ``-i`` inputs blue, program leaves light blue, saved tensors orange),
with what torchviz leaves out: the program's variable names (``h · TanhBackward0``), shape and dtype on every
node, and with ``--graph-values`` the forward value and gradient of each node (as micrograd's ``draw_dot``).
Labels are Graphviz HTML-like labels; the text in them is escaped. See :mod:`gradcli.render.graphview` for
what is drawn and how large graphs are cut down.
"""

from __future__ import annotations

from .graphview import build_view

#: Fill colour per node kind (X11 colour names, as torchviz uses).
FILL = {"root": "darkolivegreen1", "op": "lightgrey", "input": "lightblue", "leaf": "lightcyan",
        "collapsed": "white", "more": "white"}
FONT = "Helvetica"
MONO = "monospace"


def escape(text: str) -> str:
    """Text for a Graphviz HTML-like label: ``& < > "`` escaped, each line ended by a left-aligned break, the
    spaces that indent a line kept (as no-break spaces: Graphviz drops leading spaces)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    lines = [("&#160;" * (len(line) - len(line.lstrip(" ")))) + line.lstrip(" ") for line in text.split("\n")]
    return "<BR ALIGN=\"LEFT\"/>".join(lines)


def _hang(head: str, text: str) -> str:
    """``head`` then ``text``, its next lines indented under the first (a matrix prints on several lines)."""
    return head + text.replace("\n", "\n" + " " * len(head))


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _label(v) -> str:
    rows = []
    if v.kind in ("collapsed", "more"):
        return f'<<I>{escape(v.title)}</I>>'
    if v.var and v.op and v.kind in ("root", "op"):
        title = f"<B>{escape(v.var)}</B> · {escape(v.op)}"
    elif v.var:
        title = f"<B>{escape(v.var)}</B>"
    else:
        title = escape(v.title)
    if v.kind == "root":
        title += " <I>(output)</I>"
    rows.append(f'<TR><TD ALIGN="CENTER">{title}</TD></TR>')
    rows.append(f'<TR><TD ALIGN="CENTER"><FONT POINT-SIZE="9">{escape(v.detail)}</FONT></TD></TR>')
    if v.value is not None:
        rows.append(f'<TR><TD ALIGN="LEFT" BALIGN="LEFT"><FONT FACE="{MONO}" POINT-SIZE="9">{escape(_hang("value ", v.value))}'
                    f'</FONT></TD></TR>')
        rows.append(f'<TR><TD ALIGN="LEFT" BALIGN="LEFT"><FONT FACE="{MONO}" POINT-SIZE="9">{escape(_hang("grad  ", v.grad))}'
                    f'</FONT></TD></TR>')
    for name, text in v.saved:
        rows.append(f'<TR><TD ALIGN="LEFT" BALIGN="LEFT" BGCOLOR="orange"><FONT FACE="{MONO}" POINT-SIZE="9">'
                    f'{escape(_hang(f"saved {name}: ", text))}</FONT></TD></TR>')
    return '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">' + "".join(rows) + "</TABLE>>"


def view_to_dot(view, title: str | None = None) -> str:
    """The DOT text of a :class:`GraphView`."""
    lines = ["digraph autograd {",
             f'  graph [rankdir=TB, nodesep=0.25, ranksep=0.35, fontname="{FONT}", fontsize=11'
             + (f", label={_quote(title)}, labelloc=t" if title else "") + "];",
             f'  node [shape=box, style="rounded,filled", fontname="{FONT}", fontsize=11, margin="0.14,0.05"];',
             '  edge [color="#555555", arrowsize=0.7, fontname="Helvetica", fontsize=9];']
    for v in view.nodes:
        style = '"dashed"' if v.kind in ("collapsed", "more") else '"rounded,filled"'
        extra = ", penwidth=2" if v.kind == "root" else ""
        lines.append(f"  {_quote(v.id)} [label={_label(v)}, fillcolor={FILL[v.kind]}, style={style}{extra}];")
    for src, dst, label in view.edges:
        attrs = []
        if label:
            attrs.append(f"label={_quote(label)}")
        if src == "more":
            attrs.append("style=dashed")
        lines.append(f"  {_quote(src)} -> {_quote(dst)}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    lines.append("}")
    return "\n".join(lines) + "\n"


def graph_to_dot(result, options=None) -> str:
    """The DOT text of ``result``'s graph (an empty graph is a digraph with one note node); ``options``: a
    :class:`~gradcli.render.graphview.GraphOptions` (None: the defaults)."""
    view = build_view(result, options)
    if not view.nodes:
        return ('digraph autograd {\n  note [shape=plaintext, label="the output has no grad_fn: no inputs '
                'require grad, so there is no graph"];\n}\n')
    return view_to_dot(view, view.note)

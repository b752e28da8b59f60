"""The ``mermaid`` format: the autograd graph as a Mermaid flowchart, for Markdown (GitHub, GitLab and many
documentation tools draw ```` ```mermaid ```` blocks).

The same picture as the ``dot`` format (:mod:`gradcli.render.graphview`): edges from each input to the node
that consumed it, nodes styled by kind through ``classDef``. Node ids are prefixed (``g_n3``, ``g_x``) so that
no program name collides with Mermaid's keywords (``end``); label text is escaped with Mermaid's entity codes.
"""

from __future__ import annotations

from .graphview import build_view

#: classDef per node kind.
STYLES = {
    "root": "fill:#caff70,stroke:#333,stroke-width:2px",
    "op": "fill:#e8e8e8,stroke:#555",
    "input": "fill:#add8e6,stroke:#555",
    "leaf": "fill:#e0ffff,stroke:#555",
    "collapsed": "fill:#fff,stroke:#555,stroke-dasharray:4 3",
    "more": "fill:#fff,stroke:#555,stroke-dasharray:4 3",
}


def escape(text: str) -> str:
    """Text inside a quoted Mermaid label: ``# " < >`` as entity codes, lines joined by ``<br/>``."""
    text = text.replace("#", "#35;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")
    lines = [("#nbsp;" * (len(line) - len(line.lstrip(" ")))) + line.lstrip(" ") for line in text.split("\n")]
    return "<br/>".join(lines)


def _hang(head: str, text: str) -> str:
    return head + text.replace("\n", "\n" + " " * len(head))


def _id(nid: str) -> str:
    return "g_" + "".join(c if c.isalnum() or c == "_" else "_" for c in nid)


def graph_to_mermaid(result, options=None) -> str:
    """The Mermaid flowchart of ``result``'s graph (``options``: a
    :class:`~gradcli.render.graphview.GraphOptions`, None for the defaults)."""
    view = build_view(result, options)
    lines = ["flowchart TB"]
    if not view.nodes:
        lines.append('  note["the output has no grad_fn: no inputs require grad, so there is no graph"]')
        return "\n".join(lines) + "\n"
    for v in view.nodes:
        if v.kind in ("collapsed", "more"):
            label = f"<i>{escape(v.title)}</i>"
        else:
            title = f"<b>{escape(v.var)}</b> · {escape(v.op)}" if v.var and v.kind in ("root", "op") else \
                (f"<b>{escape(v.var)}</b>" if v.var else escape(v.title))
            if v.kind == "root":
                title += " <i>(output)</i>"
            parts = [title, escape(v.detail)]
            if v.value is not None:
                parts += [escape(_hang("value ", v.value)), escape(_hang("grad  ", v.grad))]
            parts += [escape(_hang(f"saved {name}: ", text)) for name, text in v.saved]
            label = "<br/>".join(parts)
        lines.append(f'  {_id(v.id)}["{label}"]')
    for src, dst, label in view.edges:
        arrow = "-.->" if src == "more" else "-->"
        lines.append(f"  {_id(src)} {arrow}" + (f"|{escape(label)}|" if label else "") + f" {_id(dst)}")
    for kind, style in STYLES.items():
        members = [_id(v.id) for v in view.nodes if v.kind == kind]
        if members:
            lines.append(f"  classDef {kind} {style}")
            lines.append(f"  class {','.join(members)} {kind}")
    if view.note:
        lines.append(f"  %% {view.note}")
    return "\n".join(lines) + "\n"

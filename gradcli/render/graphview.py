"""What every picture of the autograd graph shows, decided once for the DOT, Mermaid and tree formats.

From a :class:`~gradcli.app.result.GradResult`'s graph this makes a :class:`GraphView`: one :class:`ViewNode` per
node to draw, titled with the program variable the node's output was assigned to (``h · TanhBackward0``),
its shape and dtype, and with ``--graph-values`` its forward value and the gradient that flowed into it (as
micrograd's ``draw_dot``), with ``--graph-saved`` what its backward saved (as torchviz's ``show_saved``).
Each node has a kind, which the formats style apart: the ``root`` (the output), ``op`` nodes, ``input``
leaves (``-i``), program ``leaf``\\ s, and the two kinds of stand-ins below.

Large graphs stay readable in two steps:

* **repeated chains collapse**: a chain of nodes that repeats the same ops (a loop: ``y = y * w + b`` a
  hundred times) keeps its first and last repetition, and one ``collapsed`` node stands for the middle
  ("98 nodes: 49 × AddBackward0 ← MulBackward0");
* **a cap**: past ``max_nodes`` nodes (nearest the root first) the rest is left out, and one ``more`` node
  says how many and how to see them all (``--graph-max-nodes 0``).

Edges point the way the forward pass went (an input to the node that consumed it), as torchviz draws them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..engine.printing import format_tensor

#: Nodes drawn at most by default (``--graph-max-nodes``; 0 draws all).
MAX_NODES = 80
#: Elements of a tensor shown in a picture before it is summarized as PyTorch summarizes long tensors.
VALUE_THRESHOLD = 6
#: A repeated chain collapses when it repeats at least this many times.
MIN_REPEATS = 4
#: The longest repeating period (nodes per repetition) looked for.
MAX_PERIOD = 8


@dataclass(frozen=True)
class GraphOptions:
    """How to draw the graph.

    Attributes:
        values: show each node's forward value and gradient (when the result recorded them).
        saved: show what each node saved for backward (when recorded).
        max_nodes: draw at most this many nodes (0: all).
        collapse: collapse repeated chains (``--graph-max-nodes 0`` turns it off too).
    """
    values: bool = True
    saved: bool = True
    max_nodes: int = MAX_NODES
    collapse: bool = True


@dataclass
class ViewNode:
    """One box of the picture.

    Attributes:
        id: the graph id (``n3``, a leaf's name) or a stand-in's (``collapsed0``, ``more``).
        kind: ``root``, ``op``, ``input``, ``leaf``, ``collapsed`` or ``more``.
        title: the first line: ``"h · TanhBackward0"``, ``"x"``, or the stand-in's text.
        var: the program variable (bold in the pictures), or None.
        op: the grad_fn name (``AccumulateGrad`` for a leaf), or None for a stand-in.
        detail: the shape and dtype, e.g. ``"(2,) float32"``.
        value, grad: the forward value and the gradient as text (None when not shown).
        saved: ``(name, text)`` of the saved tensors (with --graph-saved).
    """
    id: str
    kind: str
    title: str
    var: str | None = None
    op: str | None = None
    detail: str = ""
    value: str | None = None
    grad: str | None = None
    saved: list = field(default_factory=list)


@dataclass
class GraphView:
    """The picture's nodes (root first) and edges (``(from id, to id, label)``: from an input to its
    consumer; the label is ``"out k"`` for output k of a node with several, else ""), and ``hidden``: how
    many graph nodes the cap left out (0 when none; collapsed chains are counted in their stand-ins)."""
    nodes: list = field(default_factory=list)
    edges: list = field(default_factory=list)
    hidden: int = 0
    collapsed: int = 0

    @property
    def note(self) -> str | None:
        """What was left out, in words, or None."""
        parts = []
        if self.collapsed:
            parts.append(f"{self.collapsed:,} nodes of repeated chains collapsed")
        if self.hidden:
            parts.append(f"{self.hidden:,} nodes left out past the cap")
        if not parts:
            return None
        return "; ".join(parts) + " (--graph-max-nodes 0 draws every node)"


def shape_text(shape) -> str:
    """A shape as a Python tuple: ``()``, ``(2,)``, ``(3, 4)``."""
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def value_text(value, default_dtype="float32", threshold: int = VALUE_THRESHOLD) -> str:
    """A value as PyTorch prints it without ``tensor(...)`` around it: a 0-d value in full precision
    (``0.5370496``), a tensor as PyTorch prints it, summarized past ``threshold`` elements
    (``[1., 2., 3.,  ..., 8., 9., 10.]``); a list of values (one per output) as ``out 0: ...`` lines."""
    if value is None:
        return "None"
    if isinstance(value, list):
        return "\n".join(f"out {k}: " + value_text(v, default_dtype, threshold) for k, v in enumerate(value))
    a = np.asarray(value)
    if a.ndim == 0:
        return str(a[()])  # numpy's shortest text that reads back to the same value of its dtype
    text = format_tensor(a, default_dtype=np.dtype(default_dtype), threshold=threshold)
    body = text[len("tensor("):-1]
    return body.replace("\n" + " " * len("tensor("), "\n")


def build_view(result, options: GraphOptions | None = None) -> GraphView:
    """The :class:`GraphView` of ``result.graph`` (see the module docstring); ``options`` None: the
    defaults."""
    if options is None:
        options = GraphOptions()
    graph = result.graph
    kinds = {i.name: i.kind for i in result.inputs}
    default = result.default_dtype
    nodes = {n.id: n for n in graph.nodes}
    root = graph.nodes[0].id if graph.nodes else None
    inputs = {n.id: list(n.inputs) for n in graph.nodes}
    labels = {}  # (from, to) -> label
    multi = {n.id for n in graph.nodes if n.output_shapes is not None}
    for a, b, nr in graph.edges:
        labels[(a, b)] = f"out {nr}" if a in multi else ""
    view = GraphView()
    stand_ins = {}
    if options.collapse and root is not None:
        stand_ins, inputs, view.collapsed = _collapse(graph, inputs, root)
    order = _breadth_first(root, inputs) if root is not None else []
    if options.max_nodes and len(order) > options.max_nodes:
        kept = order[:options.max_nodes]
        counted = sum(stand_ins[i][0] if i in stand_ins else 1 for i in order[options.max_nodes:])
        view.hidden = counted
        keep = set(kept)
        order = kept
    else:
        keep = set(order)
    for nid in order:
        if nid in stand_ins:
            count, text = stand_ins[nid]
            view.nodes.append(ViewNode(id=nid, kind="collapsed", title=f"⋮ {count:,} nodes: {text}"))
            continue
        n = nodes[nid]
        view.nodes.append(_view_node(n, nid == root, kinds, default, options, graph.values))
    cut = False
    for nid in order:
        for src in inputs.get(nid, ()):
            if src in keep:
                view.edges.append((src, nid, labels.get((src, nid), "")))
            else:
                cut = True
                view.edges.append(("more", nid, ""))
    if view.hidden and cut:
        view.nodes.append(ViewNode(id="more", kind="more",
                                   title=f"… {view.hidden:,} more nodes (--graph-max-nodes 0 shows all)"))
    # one edge per pair (a node feeding another twice, as in x * x, is drawn twice in torchviz; keep both,
    # but the "more" stand-in once per consumer)
    seen = set()
    edges = []
    for e in view.edges:
        if e[0] == "more":
            if e in seen:
                continue
            seen.add(e)
        edges.append(e)
    view.edges = edges
    return view


def _view_node(n, is_root: bool, kinds: dict, default, options: GraphOptions, recorded: bool) -> ViewNode:
    if n.leaf is not None:
        kind = "input" if kinds.get(n.leaf) == "input" else "leaf"
        title = n.leaf
        var = n.leaf
    else:
        kind = "root" if is_root else "op"
        var = n.var
        title = f"{n.var} · {n.name}" if n.var else n.name
    shape = (shape_text(n.shape) if n.output_shapes is None else
             ", ".join(shape_text(s) for s in n.output_shapes))
    v = ViewNode(id=n.id, kind=kind, title=title, var=var, op=n.name, detail=f"{shape} {n.dtype}")
    if options.values and recorded:
        v.value = value_text(n.value, default)
        v.grad = value_text(n.grad, default)
    if options.saved and n.saved:
        v.saved = [(name, value_text(a, default)) for name, a in n.saved]
    return v


def _breadth_first(root: str, inputs: dict) -> list:
    order = [root]
    seen = {root}
    i = 0
    while i < len(order):
        for src in inputs.get(order[i], ()):
            if src not in seen:
                seen.add(src)
                order.append(src)
        i += 1
    return order


def _chain_links(graph, nodes: dict, inputs: dict) -> dict:
    """For each op node, the input its chain goes on through (the deepest op input, when the node is its only
    consumer and takes it once), else None."""
    consumers = {}
    for nid, srcs in inputs.items():
        for s in set(srcs):
            consumers[s] = consumers.get(s, 0) + 1
    # depth: the longest path down to a leaf; a chain goes on through the deepest input (the carried value)
    depth = {}
    for n in sorted(graph.nodes, key=lambda n: (n.leaf is None, n.seq if n.seq is not None else -1)):
        depth[n.id] = 1 + max((depth.get(s, 0) for s in inputs[n.id]), default=0)

    def continuation(nid):
        ops = [s for s in inputs[nid] if nodes[s].leaf is None]
        if not ops:
            return None
        best = max(ops, key=lambda s: depth.get(s, 0))
        if consumers.get(best, 0) != 1 or inputs[nid].count(best) != 1:
            return None
        return best

    return {nid: continuation(nid) for nid in inputs if nodes[nid].leaf is None}


def _best_period(sigs: list, i: int):
    """The repetition that starts at ``sigs[i]`` and hides the most nodes: ``(period, hidden, repetitions)``
    for at least :data:`MIN_REPEATS` repetitions of a period up to :data:`MAX_PERIOD`, else None."""
    best = None
    for p in range(1, MAX_PERIOD + 1):
        run = 0
        while i + run + p < len(sigs) and sigs[i + run] == sigs[i + run + p]:
            run += 1
        reps = (run + p) // p
        if reps >= MIN_REPEATS and (best is None or (reps - 2) * p > best[1]):
            best = (p, (reps - 2) * p, reps)
    return best


def _collapse_chain(chain: list, sigs: list, nodes: dict, inputs: dict, stand_ins: dict) -> int:
    """Replace the repeated runs of one chain by stand-ins (added to ``stand_ins``, ``inputs`` rewired in place);
    returns how many nodes were hidden."""
    total = 0
    i = 0
    while i < len(chain):
        best = _best_period(sigs, i)
        if best is None:
            i += 1
            continue
        p, hide, reps = best
        first, last = i + p, i + p + hide - 1  # hide repetitions 2 .. reps-1
        hidden = chain[first:last + 1]
        sid = f"collapsed{len(stand_ins)}"
        names = " ← ".join(nodes[c].name for c in chain[i:i + p])
        stand_ins[sid] = (hide, f"{reps - 2:,} × {names}")
        # the node before the hidden run now consumes the stand-in, which consumes the node after it
        before, after = chain[first - 1], chain[last + 1] if last + 1 < len(chain) else None
        inputs[before] = [sid if s == chain[first] else s for s in inputs[before]]
        inputs[sid] = [after] if after is not None else []
        for h in hidden:
            inputs.pop(h, None)
        total += hide
        i = last + 1
    return total


def _collapse(graph, inputs: dict, root: str):
    """Collapse repeated chains: returns (stand-ins: id → (count, text), the new inputs lists, how many
    nodes were collapsed)."""
    nodes = {n.id: n for n in graph.nodes}
    nxt = _chain_links(graph, nodes, inputs)
    targets = {m for m in nxt.values() if m is not None}

    def signature(nid):
        n = nodes[nid]
        side = tuple(sorted(nodes[s].name + ":" + (nodes[s].leaf or "") for s in inputs[nid] if s != nxt[nid]))
        return (n.name, tuple(n.shape), side)

    stand_ins = {}
    inputs = {k: list(v) for k, v in inputs.items()}
    total = 0
    for start in [nid for nid in nxt if nid not in targets]:
        chain = [start]
        while nxt.get(chain[-1]) is not None:
            chain.append(nxt[chain[-1]])
        if len(chain) < 2 * MIN_REPEATS:
            continue
        total += _collapse_chain(chain, [signature(c) for c in chain], nodes, inputs, stand_ins)
    # nodes that only fed hidden ones (side inputs) are no longer reachable: they are counted as collapsed
    reachable = set(_breadth_first(root, inputs))
    for nid in list(inputs):
        if nid not in reachable and nid not in stand_ins and nid in nodes:
            total += 1
            inputs.pop(nid)
    return stand_ins, inputs, total

"""``gradcli grad --graph FORMAT``: the autograd graph as DOT (checked by Graphviz itself), SVG (its elements),
PNG (its size and pixels), PDF, Mermaid and a terminal tree; node names from the program's variables;
``--graph-values`` (each node's value and gradient, compared with PyTorch's ``retain_grad``) and
``--graph-saved``; large graphs collapsed or capped with a note; what happens when Graphviz is missing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from gradcli import render
from pictures import INPUTS, PROGRAM, colors, gc, ink, need_dot, read_png

SVG = "{http://www.w3.org/2000/svg}"
LOOP = "y = x\nfor i in range(100):\n    y = y * w + b\ny.sum()"


def svg_nodes_edges(text: str):
    """(node titles → their text, edge titles) of a Graphviz SVG."""
    root = ET.fromstring(text)
    nodes, edges = {}, []
    for g in root.iter(SVG + "g"):
        title = g.find(SVG + "title")
        if g.get("class") == "node":
            nodes[title.text] = " ".join(t.text or "" for t in g.iter(SVG + "text"))
        elif g.get("class") == "edge":
            edges.append(title.text)
    return nodes, edges


def test_the_graph_formats_are_registered_renderers():
    for name in ("dot", "svg", "png", "pdf", "mermaid", "tree"):
        assert name in render.names()
    r = gc("grad", "--help")
    assert "--graph" in r.stdout and "mermaid" in r.stdout


def test_dot_is_valid_graphviz_and_names_nodes_by_variable():
    need_dot()
    r = gc("grad", PROGRAM, *INPUTS, "--graph", "dot")
    assert r.exit_code == 0, r.output
    dot = r.stdout
    assert dot.startswith("digraph autograd {")
    # Graphviz itself reads it (a syntax error would fail here), and lays out 7 nodes and 6 edges
    out = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, check=True).stdout.decode()
    nodes, edges = svg_nodes_edges(out)
    assert set(nodes) == {"n0", "n1", "n2", "n3", "x", "w", "b"}
    assert sorted(edges) == sorted(["n1&#45;&gt;n0", "n2&#45;&gt;n1", "n3&#45;&gt;n2", "b&#45;&gt;n2", "x&#45;&gt;n3",
                                    "w&#45;&gt;n3"]) or len(edges) == 6
    assert "h" in nodes["n1"] and "TanhBackward0" in nodes["n1"] and "(2,) float32" in nodes["n1"]
    assert "SumBackward0" in nodes["n0"] and "(output)" in nodes["n0"]
    # kinds styled apart: the root, the inputs and the ops have their own fill colours
    fills = dict(re.findall(r'"(\w+)" \[label=.*fillcolor=(\w+)', dot))
    assert fills["n0"] == "darkolivegreen1" and fills["x"] == "lightblue" and fills["n1"] == "lightgrey"


def test_svg_elements_name_every_node_and_edge():
    need_dot()
    r = gc("grad", PROGRAM, *INPUTS, "--graph", "svg", "--graph-values")
    assert r.exit_code == 0, r.output
    nodes, edges = svg_nodes_edges(r.stdout)
    assert len(nodes) == 7 and len(edges) == 6
    assert "value" in nodes["n1"] and "[ 0.5370, -0.9562]" in nodes["n1"] and "[1., 1.]" in nodes["n1"]
    assert "0.1" in nodes["b"] and "0.79718775" in nodes["b"]


def test_png_file_has_the_size_of_the_graph_and_ink(tmp_path):
    need_dot()
    path = tmp_path / "graph.png"
    r = gc("grad", PROGRAM, *INPUTS, "--graph", "png", "--graph-values", "-o", path)
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    width, height, rows = read_png(path.read_bytes())
    assert 250 < width < 1200 and 300 < height < 1500  # seven boxes in five ranks
    assert 0.15 < ink(rows) < 0.9  # boxes and text, not a blank page
    found = colors(rows)
    assert (173, 216, 230) in found  # lightblue: the inputs
    assert (202, 255, 112) in found  # darkolivegreen1: the output


def test_pdf_and_extension_picks_the_format(tmp_path):
    need_dot()
    pdf = tmp_path / "g.pdf"
    r = gc("grad", PROGRAM, *INPUTS, "-o", pdf)  # no --graph: the extension decides
    assert r.exit_code == 0, r.output
    assert pdf.read_bytes().startswith(b"%PDF-")
    svg = tmp_path / "g.svg"
    assert gc("grad", PROGRAM, *INPUTS, "-o", svg).exit_code == 0
    assert svg_nodes_edges(svg.read_text())[0].keys() >= {"n0", "x"}


def test_mermaid_flowchart():
    r = gc("grad", PROGRAM, *INPUTS, "--graph", "mermaid")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "flowchart TB"
    assert '  g_n1["<b>h</b> · TanhBackward0<br/>(2,) float32"]' in lines
    assert "  g_x --> g_n3" in lines and "  g_n1 --> g_n0" in lines
    assert sum(1 for line in lines if "-->" in line) == 6
    assert "  class g_n0 root" in lines


def test_mermaid_escapes_and_prefixes_ids():
    r = gc("grad", "end = x * 2; end.sum()", "-i", "x=[1.]", "--graph", "mermaid", "--graph-values")
    assert r.exit_code == 0, r.output
    assert '<b>end</b> · MulBackward0' in r.stdout and "g_x --> g_n1" in r.stdout


def test_tree_in_the_terminal():
    r = gc("grad", PROGRAM, *INPUTS, "--graph", "tree")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("SumBackward0  () float32  (output)")
    assert "└── h · TanhBackward0  (2,) float32" in lines[1]
    assert any("x  (2,) float32  input" in line for line in lines)


def test_tree_refers_to_shared_nodes_once():
    r = gc("grad", "a = x * 2; (a * a + a).sum()", "-i", "x=[1., 2.]", "--graph", "tree")
    assert r.exit_code == 0, r.output
    assert r.stdout.count("a · MulBackward0  (2,) float32") == 1
    assert r.stdout.count("↑ a · MulBackward0 (drawn above)") == 2


def test_tree_draws_a_shared_node_where_it_is_first_reached():
    # x feeds the first branch deep down and MulBackward0 directly: it is drawn in the first branch, and the
    # reference under MulBackward0 comes after it on the screen ("drawn above" is true)
    r = gc("grad", "((x.exp() + 1) * x).sum()", "-i", "x=[1., 2.]", "--graph", "tree")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    drawn = next(i for i, line in enumerate(lines) if "x  (2,) float32  input" in line)
    ref = next(i for i, line in enumerate(lines) if "↑ x (drawn above)" in line)
    assert "ExpBackward0" in lines[drawn - 1] and drawn < ref == len(lines) - 1


def test_graph_values_in_json_match_torch_retain_grad(torch):
    r = gc("grad", PROGRAM, *INPUTS, "--json", "--graph-values")
    assert r.exit_code == 0, r.output
    nodes = {n["id"]: n for n in json.loads(r.stdout)["graph"]["nodes"]}
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([0.5, -1.], requires_grad=True)
    b = torch.tensor(0.1, requires_grad=True)
    m = x * w
    a = m + b
    h = a.tanh()
    s = h.sum()
    for t in (m, a, h, s):
        t.retain_grad()
    s.backward()
    expected = {"n0": s, "n1": h, "n2": a, "n3": m, "x": x, "w": w, "b": b}
    for nid, t in expected.items():
        np.testing.assert_allclose(nodes[nid]["value"], t.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(nodes[nid]["grad"], t.grad.numpy(), rtol=1e-6)
    assert nodes["n1"]["var"] == "h" and nodes["n0"]["var"] is None and nodes["x"]["var"] == "x"


def test_graph_values_accumulate_over_repeat_like_grad():
    doc = json.loads(gc("grad", "y = x * x; y.sum()", "-i", "x=[3.]", "--json", "--graph-values",
                        "--repeat", "3").stdout)
    nodes = {n["id"]: n for n in doc["graph"]["nodes"]}
    assert nodes["x"]["grad"] == [18.0] == doc["grads"]["x"]["value"]
    assert nodes["n1"]["grad"] == [3.0]  # y's gradient, retained three times
    doc = json.loads(gc("grad", "y = x * x; y.sum()", "-i", "x=[3.]", "--json", "--graph-values",
                        "--repeat", "3", "--zero-grad").stdout)
    assert {n["id"]: n for n in doc["graph"]["nodes"]}["n1"]["grad"] == [1.0]


def test_graph_values_of_a_node_with_several_outputs_and_in_place_ops():
    r = gc("grad", "a, c = x.split(1); a = a * 1; a += c; a.sum()", "-i", "x=[1., 2.]", "--json", "--graph-values")
    assert r.exit_code == 0, r.output
    nodes = {n["id"]: n for n in json.loads(r.stdout)["graph"]["nodes"]}
    split = next(n for n in nodes.values() if n["name"] == "SplitBackward0")
    assert split["value"] == [[1.0], [2.0]] and split["grad"] == [[1.0], [1.0]] and split["var"] == "a, c"
    add = next(n for n in nodes.values() if n["name"] == "AddBackward0")
    mul = next(n for n in nodes.values() if n["name"] == "MulBackward0")
    # the in-place add wrote into mul's buffer: each node keeps the value it made
    assert add["value"] == [3.0] and mul["value"] == [1.0] and add["var"] == "a" == mul["var"]


def test_graph_saved_tensors():
    r = gc("grad", PROGRAM, *INPUTS, "--json", "--graph-saved")
    nodes = {n["id"]: n for n in json.loads(r.stdout)["graph"]["nodes"]}
    assert nodes["n3"]["saved"] == [{"name": "input", "value": [1.0, 2.0]}, {"name": "other", "value": [0.5, -1.0]}]
    assert nodes["n1"]["saved"][0]["name"] == "result" and nodes["n2"]["saved"] == []
    r = gc("grad", PROGRAM, *INPUTS, "--graph", "dot", "--graph-saved")
    assert "saved result: [ 0.5370, -0.9562]" in r.stdout and 'BGCOLOR="orange"' in r.stdout


def test_default_json_and_table_are_unchanged_by_the_pictures():
    doc = json.loads(gc("grad", PROGRAM, *INPUTS, "--json").stdout)
    assert set(doc["graph"]["nodes"][0]) == {"id", "name", "shape", "dtype", "inputs", "leaf"}
    table = gc("grad", PROGRAM, *INPUTS).stdout
    assert "value" not in table.split("graph (root first")[1]


def test_table_with_graph_values_adds_the_tree():
    r = gc("grad", PROGRAM, *INPUTS, "--graph-values")
    assert r.exit_code == 0, r.output
    assert "graph (root first" in r.stdout and "h · TanhBackward0  (2,) float32" in r.stdout
    assert "grad  [0.7116, 0.0856]" in r.stdout


def test_repeated_chains_collapse():
    r = gc("grad", LOOP, "-i", "x=1.", "-i", "w=0.9", "-i", "b=0.1", "--graph", "dot")
    assert r.exit_code == 0, r.output
    boxes = re.findall(r'^  "(\w+)" \[label=', r.stdout, flags=re.M)
    assert len(boxes) < 15  # of 201 grad_fn nodes and 3 leaves
    assert "194 nodes: 97 × AddBackward0 ← MulBackward0" in r.stdout
    assert "194 nodes of repeated chains collapsed (--graph-max-nodes 0 draws every node)" in r.stdout
    full = gc("grad", LOOP, "-i", "x=1.", "-i", "w=0.9", "-i", "b=0.1", "--graph", "dot", "--graph-max-nodes", "0")
    assert len(re.findall(r'^  "(\w+)" \[label=', full.stdout, flags=re.M)) == 204


def test_the_cap_leaves_a_note_with_the_count():
    program = "y = x\nfor i in range(30):\n    y = (y * w).sin() + y.cos() * b\ny.sum()"
    r = gc("grad", program, "-i", "x=1.", "-i", "w=0.9", "-i", "b=0.1", "--graph", "dot", "--graph-max-nodes", "20")
    assert r.exit_code == 0, r.output
    boxes = re.findall(r'^  "(\w+)" \[label=', r.stdout, flags=re.M)
    assert len(boxes) == 21 and "more" in boxes
    m = re.search(r"… ([\d,]+) more nodes \(--graph-max-nodes 0 shows all\)", r.stdout)
    total = len(json.loads(gc("grad", program, "-i", "x=1.", "-i", "w=0.9", "-i", "b=0.1", "--json").stdout)
                    ["graph"]["nodes"])
    assert m and int(m.group(1).replace(",", "")) + 20 <= total


def test_missing_dot_is_exit_2_with_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot here
    out = tmp_path / "g.svg"
    r = gc("grad", PROGRAM, *INPUTS, "--graph", "svg", "-o", out)
    assert r.exit_code == 2 and r.stdout == ""
    assert "DependencyError: the svg format needs Graphviz's 'dot' program" in r.stderr
    assert "apt-get install graphviz" in r.stderr and "--graph dot" in r.stderr
    assert not out.exists()  # nothing half-written
    assert gc("grad", PROGRAM, *INPUTS, "--graph", "dot").exit_code == 0  # DOT text needs nothing


def test_png_is_not_written_to_a_terminal(monkeypatch):
    need_dot()
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    from gradcli.frontends import cli_output
    from gradcli.engine.errors import InputError

    with pytest.raises(InputError, match="binary and standard output is a terminal"):
        cli_output.emit(render.get("png"), None, lambda stream: None)


def test_graph_usage_errors():
    r = gc("grad", PROGRAM, *INPUTS, "--graph", "table")
    assert r.exit_code == 2 and "'table' is not one of 'json', 'dot'" in r.stderr
    r = gc("grad", PROGRAM, *INPUTS, "--graph", "dot", "--explain")
    assert r.exit_code == 2 and "choose one" in r.stderr
    r = gc("grad", PROGRAM, *INPUTS, "--graph", "dot", "--format", "json")
    assert r.exit_code == 2 and "--graph FORMAT chooses the output format" in r.stderr


def test_format_dot_is_graph_dot_and_json_graph():
    assert gc("grad", PROGRAM, *INPUTS, "--format", "dot").stdout == gc("grad", PROGRAM, *INPUTS,
                                                                         "--graph", "dot").stdout
    doc = json.loads(gc("grad", PROGRAM, *INPUTS, "--graph", "json").stdout)
    assert set(doc) == {"nodes", "edges"} and len(doc["nodes"]) == 7


def test_an_empty_graph_is_drawn_as_a_note():
    from gradcli.app.calculator import GradRequest, compute
    from gradcli.render.dot import graph_to_dot
    from gradcli.render.mermaid import graph_to_mermaid

    result = compute(GradRequest(program="x * 2", inputs=["x=1."], graph_names=True))
    result.graph.nodes, result.graph.edges = [], []  # as for an output without grad_fn
    assert "no graph" in graph_to_dot(result) and "no graph" in graph_to_mermaid(result)


@pytest.mark.perf
def test_start_up_imports_no_picture_library():
    code = ("import sys, gradcli.frontends.cli; print(sorted(m for m in ('graphviz', 'plotext', 'matplotlib', 'rich') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"

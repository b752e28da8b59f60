"""``gradcli plot``: f and its derivatives over a grid (values against PyTorch), vectorized or point by point;
gaps at NaN regions and jumps, kinks with PyTorch's subgradient marked; the terminal plot's text, PNG/SVG/PDF
files (size and pixels), CSV and JSON (with its schema); two inputs as a field with the gradient."""

from __future__ import annotations

import csv
import io
import json
import sys

import jsonschema
import numpy as np
import pytest

from gradcli.app.plot_grid import PlotRequest, compute_plot, parse_over, simplest_between
from gradcli.render.schemas import schema
from pictures import colors, gc, ink, read_png


def plot_json(*args) -> dict:
    r = gc("plot", *args, "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    jsonschema.Draft202012Validator(schema("plot")).validate(doc)
    return doc


def test_values_and_derivatives_match_torch(torch):
    doc = plot_json("x.sin() * x ** 2", "--over", "x=-3:3:61", "--order", "2", "--dtype", "float64")
    assert doc["vectorized"] is True and doc["over"] == ["x"]
    x = torch.tensor(doc["x"], dtype=torch.float64, requires_grad=True)
    f = x.sin() * x ** 2
    (df,) = torch.autograd.grad(f.sum(), x, create_graph=True)
    (d2,) = torch.autograd.grad(df.sum(), x)
    np.testing.assert_allclose(doc["f"], f.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(doc["df"], df.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(doc["d2f"], d2.numpy(), rtol=1e-12, atol=1e-12)
    assert doc["kinks"] == [] and doc["breaks"] == {"f": [], "df": [], "d2f": []}


def test_other_inputs_are_fixed_with_i_and_c():
    doc = plot_json("(x * w).tanh() + c", "--over", "x=-1:1:5", "-i", "w=2.", "-c", "c=1.", "--dtype", "float64")
    x = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(doc["f"], np.tanh(2 * x) + 1, rtol=1e-12)
    np.testing.assert_allclose(doc["df"], 2 * (1 - np.tanh(2 * x) ** 2), rtol=1e-12)


def test_a_program_that_is_not_elementwise_runs_point_by_point(torch):
    calls = []
    req = PlotRequest(program="y = x * ones(3); (y ** 2).sum()", over=["x=-1:1:11"])
    result = compute_plot(req, progress=lambda done, total, elapsed: calls.append((done, total)))
    assert result.vectorized is False and calls[-1] == (11, 11)
    np.testing.assert_allclose(result.curve.f, 3 * np.linspace(-1, 1, 11) ** 2, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(result.curve.df, 6 * np.linspace(-1, 1, 11), rtol=1e-6, atol=1e-6)
    # a cumulative sum has the grid's shape but is not elementwise: the check points catch it
    doc = plot_json("x.cumsum(0) if False else x.sum() + x * 0", "--over", "x=0:1:4")
    assert doc["vectorized"] is False


def test_more_than_one_number_per_point_is_an_error():
    r = gc("plot", "x * ones(3)", "--over", "x=0:1:4")
    assert r.exit_code == 1
    assert "gradcli plot needs one number per point" in r.stderr and "shape [3]" in r.stderr


def test_kink_on_the_grid_is_marked_with_pytorchs_subgradient(torch):
    doc = plot_json("x.abs()", "--over", "x=-1:1:5")
    assert doc["kinks"] == [{"x": 0.0, "f": 0.0, "df": 0.0, "left": -1.0, "right": 1.0}]
    t = torch.tensor(0.0, requires_grad=True)
    t.abs().backward()
    assert doc["df"][2] == t.grad.item() == 0.0
    assert doc["breaks"]["df"] == [2, 3] and doc["breaks"]["f"] == []  # f is drawn through, df is not


def test_kink_between_grid_points_is_found_and_added(torch):
    doc = plot_json("x.relu() + (x - 1).clamp(min=0) * 2", "--over", "x=-2:3:50")
    kinks = {k["x"]: k for k in doc["kinks"]}
    assert set(kinks) == {0.0, 1.0}
    for c, k in kinks.items():
        t = torch.tensor(c, requires_grad=True)
        (t.relu() + (t - 1).clamp(min=0) * 2).backward()
        assert k["df"] == t.grad.item()  # relu'(0) = 0; clamp's gradient at its bound is 1: 1 + 2 = 3
    assert kinks[0.0]["left"] == 0.0 and kinks[0.0]["right"] == 1.0 and kinks[1.0]["df"] == 3.0
    assert len(doc["x"]) == 52 and 0.0 in doc["x"] and 1.0 in doc["x"]
    i = doc["x"].index(1.0)
    assert i in doc["breaks"]["df"] and i + 1 in doc["breaks"]["df"] and i not in doc["breaks"]["f"]


def test_nan_regions_and_poles_are_gaps():
    doc = plot_json("x.sqrt()", "--over", "x=-1:1:21")
    assert doc["f"][:10] == ["NaN"] * 10 and doc["f"][10] == 0.0
    assert all(i in doc["breaks"]["f"] for i in range(1, 11))
    doc = plot_json("1 / x", "--over", "x=-1:1:20")  # no grid point at 0
    assert doc["breaks"]["f"] == [10] and doc["kinks"] == []
    doc = plot_json("x.sign()", "--over", "x=-1:1:20")
    assert doc["breaks"]["f"] == [10]


def test_smooth_steep_curves_are_not_broken():
    for program in ("x.exp()", "(3 * x).tanh()", "x ** 3 - x"):
        doc = plot_json(program, "--over", "x=-3:3")
        assert doc["breaks"]["f"] == [] and doc["breaks"]["df"] == [], program


def test_simplest_number_between():
    assert simplest_between(-0.3, 0.2) == 0.0
    assert simplest_between(0.3, 0.7) == 0.5
    assert simplest_between(1.2, 1.3) == 1.25
    assert simplest_between(2.01, 2.02) == 2.01
    assert simplest_between(-3.2, -2.9) == -3.0


def test_over_parsing():
    o = parse_over("t=-2pi:pi/2:100")
    assert (o.name, o.points) == ("t", 100) and o.start == pytest.approx(-2 * np.pi) and o.stop == pytest.approx(
        np.pi / 2)
    for bad, text in (("x=1:0", "START must be below STOP"), ("x", "NAME=START:STOP"), ("x=a:1", "must be a number"),
                      ("x=0:1:1", "at least 2 points")):
        r = gc("plot", "x", "--over", bad)
        assert r.exit_code == 2 and text in r.stderr, (bad, r.stderr)


def test_usage_errors():
    r = gc("plot", "x", "--over", "x=0:1", "--format", "dot")
    assert r.exit_code == 2 and "'dot' is not one of 'table', 'json', 'svg', 'png', 'pdf' (or 'csv')" in r.stderr
    r = gc("plot", "x", "--over", "x=0:1", "-i", "x=1.")
    assert r.exit_code == 2 and "x is swept by --over and also given by -i/-c" in r.stderr
    r = gc("plot", "x * y", "--over", "x=0:1", "--over", "y=0:1", "--order", "2")
    assert r.exit_code == 2 and "--order 2 plots a curve" in r.stderr


def test_terminal_plot_text():
    r = gc("plot", "x.sin() * x ** 2", "--over", "x=-3:3", "--order", "2")
    assert r.exit_code == 0, r.output
    lines = r.stdout.rstrip("\n").split("\n")
    assert len(lines) == 30 and max(len(line) for line in lines) == 100  # the size for a pipe
    assert "x.sin() * x ** 2" in lines[0]
    assert "\x1b[" not in r.stdout  # no colour in a pipe
    assert lines[-2].strip() == "x" and "-3" in lines[-3] and "3" in lines[-3]
    painted = sum(not c.isspace() for line in _canvas(lines) for c in line)
    assert painted > 200


def _canvas(lines: list) -> list:
    """The rows of the plot's frame (between its top and bottom border), without the y tick labels."""
    top = next(k for k, line in enumerate(lines) if "┌" in line)
    bottom = next(k for k, line in enumerate(lines) if "└" in line)
    return [line.split("┤", 1)[-1].split("│", 1)[-1] for line in lines[top + 1:bottom]]


def test_terminal_plot_without_colour_gives_each_curve_its_marker(monkeypatch):
    # what the user ran, in a pipe (no colour) and with NO_COLOR=1 at a terminal
    r = gc("plot", "x.sin() * x ** 2", "--over", "x=-3:3", "--order", "2")
    lines = r.stdout.rstrip("\n").split("\n")
    assert lines[-1].split() == ["▚", "f", "⢕", "df/dx", "•", "d²f/dx²"]  # the legend, under the plot
    canvas = "".join(_canvas(lines))
    assert any(c in canvas for c in "▀▄▌▐▖▗▘▙▚▛▜▝▞▟")  # f: quadrant blocks
    assert sum("\u2800" <= c <= "\u28ff" for c in canvas) > 50  # df/dx: braille dots
    assert canvas.count("•") > 50  # d²f/dx²: bullets
    assert "f " not in canvas and "df/dx" not in canvas and "┌" not in canvas  # no legend box on the curves
    from gradcli.app.plot_grid import PlotRequest, compute_plot
    from gradcli.render import plotterm

    result = compute_plot(PlotRequest("x.sin() * x ** 2", ["x=-3:3"], order=2))
    monkeypatch.setenv("NO_COLOR", "1")

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    out = Terminal()
    plotterm.render_plot(result, out)
    assert "\x1b[" not in out.getvalue() and out.getvalue().rstrip("\n").split("\n")[-1] == lines[-1].rstrip()
    colour = plotterm.curve_text(result, 100, 30, color=True)
    assert "\x1b[38;5;12m▚\x1b[0m f" in colour.split("\n")[-2]  # with colour: colours tell them apart


def test_terminal_y_ticks_are_plain_numbers():
    r = gc("plot", "x.sin() * x ** 2", "--over", "x=-3:3", "--order", "2")
    labels = [line.split("┤")[0].strip() for line in r.stdout.split("\n") if "┤" in line]
    assert labels == ["10", "5", "0", "-5", "-10"]
    from gradcli.render.plotterm import nice_ticks, tick_labels

    assert tick_labels(nice_ticks(-0.5, 0.5)) == ["-0.4", "-0.2", "0.0", "0.2", "0.4"]
    assert tick_labels(nice_ticks(0, 5e6)) == ["0", "1e6", "2e6", "3e6", "4e6", "5e6"]
    assert tick_labels(nice_ticks(99.5, 100.5)) == ["99.6", "99.8", "100.0", "100.2", "100.4"]


def test_a_pole_to_both_signs_is_cut_symmetrically(tmp_path):
    from gradcli.app.plot_grid import PlotRequest, compute_plot
    from gradcli.render.plotdata import y_limits

    result = compute_plot(PlotRequest("1/x", ["x=-3:3"]))
    low, high = y_limits(result)
    assert low == -high and 3 < high < 30  # f's branches both run to the edge; x=1 (f=1) is not flattened
    # a pole on one side only is cut on that side: the other keeps the data's end (and a margin)
    result = compute_plot(PlotRequest("x.sqrt()", ["x=1e-6:4"]))
    low, high = y_limits(result)
    assert -0.5 < low < 0 and 2 < high < 10
    assert y_limits(compute_plot(PlotRequest("x.sin() * x ** 2", ["x=-3:3"], order=2))) is None  # nothing extreme
    r = gc("plot", "1/x", "--over", "x=-3:3")
    labels = [line.split("┤")[0].strip() for line in r.stdout.split("\n") if "┤" in line]
    assert labels[0] == labels[-1].lstrip("-") and labels[-1].startswith("-")  # the terminal's range too
    pytest.importorskip("matplotlib")
    out = tmp_path / "inv.png"
    assert gc("plot", "1/x", "--over", "x=-3:3", "-o", out).exit_code == 0
    _, height, rows = read_png(out.read_bytes())
    blue = [k for k, row in enumerate(rows) if (31, 119, 180) in {p[:3] for p in row}]
    # f's two branches reach both the top and the bottom of the axes: the range is cut symmetrically
    assert blue[0] < 0.1 * height and blue[-1] > 0.85 * height


def test_terminal_plot_marks_the_kink():
    r = gc("plot", "x.abs()", "--over", "x=-1:1:41")
    assert "● df/dx at a kink (PyTorch's)" in r.stdout
    assert r.stdout.count("●") == 2  # the legend's and the one at (0, 0)


def test_png_file_size_and_pixels(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "plot.png"
    r = gc("plot", "x.relu() - (x - 1).clamp(min=0) * 2", "--over", "x=-2:3", "-o", out)
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    width, height, rows = read_png(out.read_bytes())
    assert (width, height) == (880, 550)
    assert 0.03 < ink(rows, (255, 255, 255, 255)) < 0.5
    found = colors(rows)
    assert (31, 119, 180) in found and (214, 39, 40) in found  # f blue, df/dx red


def test_svg_and_pdf_files(tmp_path):
    pytest.importorskip("matplotlib")
    svg = tmp_path / "p.svg"
    assert gc("plot", "x.tanh()", "--over", "x=-2:2", "-o", svg).exit_code == 0
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and text.count("<path") > 5
    assert "Date" not in text.split("</metadata>")[0] or "<dc:date>" not in text
    pdf = tmp_path / "p.pdf"
    assert gc("plot", "x.tanh()", "--over", "x=-2:2", "--format", "pdf", "-o", pdf).exit_code == 0
    assert pdf.read_bytes().startswith(b"%PDF-")


def test_same_plot_same_bytes(tmp_path):
    pytest.importorskip("matplotlib")
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    for p in (a, b):
        assert gc("plot", "x.tanh()", "--over", "x=-2:2", "-o", p).exit_code == 0
    assert a.read_bytes() == b.read_bytes()


def test_matplotlib_missing_is_exit_2(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "p.png"
    r = gc("plot", "x", "--over", "x=0:1", "-o", out)
    assert r.exit_code == 2 and "pip install 'gradcli[plot]'" in r.stderr and not out.exists()
    assert gc("plot", "x", "--over", "x=0:1").exit_code == 0  # the terminal plot needs no matplotlib


def test_csv():
    r = gc("plot", "x.abs()", "--over", "x=-1:1:5", "--order", "2", "--format", "csv")
    assert r.exit_code == 0, r.output
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows[0] == ["x", "f", "df/dx", "d2f/dx2", "kink"]
    assert rows[1] == ["-1.0", "1.0", "-1.0", "0.0", "0"] and rows[3][:3] == ["0.0", "0.0", "0.0"] and rows[3][4] == "1"
    r = gc("plot", "x.sqrt()", "--over", "x=-1:1:3", "--format", "csv")
    assert r.stdout.splitlines()[1] == "-1.0,nan,nan,0"


def test_field_of_two_inputs(torch):
    doc = plot_json("(x ** 2 + y ** 2).sqrt()", "--over", "x=-2:2:9", "--over", "y=-1:1:5", "--dtype", "float64")
    assert doc["over"] == ["x", "y"] and len(doc["f"]) == 5 and len(doc["f"][0]) == 9
    X, Y = np.meshgrid(np.linspace(-2, 2, 9), np.linspace(-1, 1, 5))
    np.testing.assert_allclose(doc["f"], np.hypot(X, Y), rtol=1e-12)
    t = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    (t[0] ** 2 + t[1] ** 2).sqrt().backward()
    assert np.isnan(t.grad[0].item()) and doc["df"]["x"][2][4] == "NaN"  # at the origin: inf * 0, as PyTorch
    mask = np.hypot(X, Y) > 0
    np.testing.assert_allclose(np.array(doc["df"]["x"], dtype=float)[mask], (X / np.hypot(X, Y))[mask], rtol=1e-12)
    np.testing.assert_allclose(np.array(doc["df"]["y"], dtype=float)[mask], (Y / np.hypot(X, Y))[mask], rtol=1e-12)


def test_field_in_the_terminal_and_as_png(tmp_path):
    r = gc("plot", "x * y", "--over", "x=-1:1", "--over", "y=-1:1")
    assert r.exit_code == 0, r.output
    assert "arrows: the gradient's direction" in r.stdout
    assert "↗" in r.stdout and "↙" in r.stdout and "(y axis: y)" in r.stdout
    pytest.importorskip("matplotlib")
    out = tmp_path / "field.png"
    assert gc("plot", "(x ** 2 + y ** 2).sqrt()", "--over", "x=-2:2", "--over", "y=-2:2", "-o", out).exit_code == 0
    width, height, rows = read_png(out.read_bytes())
    assert (width, height) == (880, 550) and ink(rows, (255, 255, 255, 255)) > 0.3

"""The ``table`` format: rich tables for people. ``gradcli grad``: the output, the inputs, their gradients (one
row per backward call with --repeat), and the graph; ``gradcli ops``: one row per name; ``gradcli batch``: one
row per entry, streamed. Values are shown exactly as PyTorch prints them. Rich writes plain text without
escape codes when stdout is not a terminal or NO_COLOR is set.

A table whose values hold NaN or infinities gets a ``nonfinite`` column naming them per row. The graph table
shows the first :data:`GRAPH_ROWS` nodes (``--format json`` lists every node).
"""

from __future__ import annotations

import numpy as np

from ..engine.lazy import lazy
from ..engine.printing import format_tensor
from ..app.result import EntryResult, ErrorInfo, GradResult, nonfinite
from .messages import escape_controls, nonfinite_warning, nonfinite_where  # noqa: F401  (importable from here too)
from .registry import EntryFormat, Renderer, register

symbolic = lazy("gradcli.render.symbolic")  # --symbolic only

transforms = lazy("gradcli.app.transforms")  # transforms only
explain = lazy("gradcli.render.explain")  # --explain only
plotterm = lazy("gradcli.render.plotterm")  # gradcli plot only

GRAPH_ROWS = 200
#: The width of tables written to a file or pipe (read whole: values are not wrapped at 80 columns).
PIPE_WIDTH = 200
#: The width of ``gradcli batch``'s table written to a file or pipe.
BATCH_PIPE_WIDTH = 160


def _flag(value) -> str:
    kinds = nonfinite(value)
    return ", ".join({"nan": "NaN"}.get(k, k) for k in kinds) if kinds else "-"


def stdout_console(stream):
    """A rich Console on ``stream`` (standard output): the terminal's width, or when it is not a terminal
    ``COLUMNS`` if set, else :data:`PIPE_WIDTH` columns. With ``NO_COLOR`` set (https://no-color.org) it writes no escape codes at all:
    rich alone drops colours but keeps bold and italic."""
    import os

    from rich.console import Console

    # emoji=False: no ":name:" in a title or header is an emoji code, and replacing them would import rich's table
    # of 3,600 emoji names (~3 ms of every start-up).
    plain = {"color_system": None, "emoji": False} if os.environ.get("NO_COLOR") else {"emoji": False}
    console = Console(file=stream, **plain)
    if not console.is_terminal:  # piped: no trailing blanks (rich pads titles and wrapped text to the width)
        width = {} if os.environ.get("COLUMNS", "").strip().isdigit() else {"width": PIPE_WIDTH}  # else wide
        console = Console(file=TrimmedLines(stream), **width, **plain)
    console.on_broken_pipe = _closed_pipe  # rich would exit 1; the command reports a closed pipe (141, quietly)
    return console


class TrimmedLines:
    """A text stream that writes ``stream``'s lines without their trailing blanks: rich pads a table's title
    and justified text with spaces to the console's width, which a file or pipe (``| cat``, ``diff``) keeps.
    Blanks at the end of a write are held back until the rest of their line shows whether text follows."""

    def __init__(self, stream):
        self.stream = stream
        self._held = ""

    def write(self, text: str) -> int:
        lines = (self._held + text).split("\n")
        last = lines.pop()
        body = "".join(line.rstrip(" ") + "\n" for line in lines)
        kept = last.rstrip(" ")
        self._held = last[len(kept):]
        if body or kept:
            self.stream.write(body + kept)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name):  # fileno, encoding, ...: the stream's
        return getattr(self.stream, name)


def print_titled(console, title: str, table) -> None:
    """Print ``table`` under ``title``, a line of its own that is never wrapped to the table's width (rich wraps
    a table's title into a block as narrow as the table; a terminal wraps this line at its own width)."""
    from rich.text import Text

    console.print(Text(escape_controls(title), style="italic"), soft_wrap=True)
    console.print(table)


def _closed_pipe() -> None:
    raise BrokenPipeError("standard output was closed by its reader")


def _shape(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def render_grad(result: GradResult, console, default_dtype=None,
                sections=("output", "inputs", "grads", "graph")) -> None:
    """Print the tables of a :class:`GradResult` on a rich Console.

    Args:
        default_dtype: the default float numpy dtype (decides PyTorch's ``dtype=`` suffix in values); default:
            the run's, ``result.default_dtype``.
        sections: the tables to print (``--show``): output, inputs, grads (with the note and the check), graph.
    """
    from rich.text import Text  # cells are Text so that "[...]" in values is never read as rich markup

    cells = _Cells(console, np.dtype(result.default_dtype) if default_dtype is None else default_dtype)
    if "output" in sections:
        _output_table(result.output, console, cells)
    if result.inputs and "inputs" in sections:
        _inputs_table(result.inputs, console, cells)
    if "grads" in sections and result.note is not None:
        console.print(Text(result.note))
    names = [i.name for i in result.inputs if i.value.requires_grad]
    if names and result.calls and "grads" in sections:
        _grads_table(result, names, console, cells)
    if getattr(result, "symbolic", None) is not None and ("grads" in sections or "formula" in sections):
        symbolic.table(result.symbolic, console)  # --symbolic: the section "formula"
    if result.graph.nodes and "graph" in sections:
        _graph_table(result.graph.nodes, console)


class _Cells:
    """The value cells of :func:`render_grad`'s tables. A tensor's text is never re-wrapped inside a cell (rows
    broken mid-row): one too wide for the room its column has is printed below its table, as PyTorch prints
    it, and the cell says so."""

    def __init__(self, console, default_dtype):
        self.console = console
        self.default_dtype = default_dtype
        self.below = []  # (label, Text) to print after the table

    def fmt(self, value, grad_fn=None, requires_grad=False):
        """A tensor's text as PyTorch prints it."""
        from rich.text import Text

        return Text(format_tensor(value, grad_fn=grad_fn, requires_grad=requires_grad,
                                  default_dtype=self.default_dtype))

    def cell(self, label: str, text, others: list[list[str]]):
        """``text``, or "(below)" when it is wider than the room the other columns (``others``: each column's
        texts) leave it."""
        from rich.text import Text

        widths = [max(len(line) for c in col for line in c.split("\n")) for col in others]
        room = self.console.width - 1 - sum(w + 3 for w in widths) - 3
        if max(len(line) for line in text.plain.split("\n")) <= room:
            return text
        self.below.append((label, text))
        return Text("(below)")

    def flush_below(self) -> None:
        """Print the values that did not fit their cells, ``label =`` and the value."""
        from rich.text import Text

        for label, text in self.below:
            self.console.print(Text(f"{label} ="))
            self.console.print(text, soft_wrap=True)
        self.below.clear()


def _output_table(out, console, cells: _Cells) -> None:
    from rich.table import Table
    from rich.text import Text

    flag = bool(nonfinite(out.value))
    t = Table()
    cols = ("value", "shape", "dtype", "grad_fn") + (("nonfinite",) if flag else ())
    for col in cols:
        t.add_column(col)
    rest = [_shape(out.shape), out.dtype, out.grad_fn or "-"] + ([_flag(out.value)] if flag else [])
    value = cells.cell("output", cells.fmt(out.value, out.grad_fn, out.requires_grad),
                       [[c, r] for c, r in zip(cols[1:], rest)])
    t.add_row(value, *(Text(r) for r in rest))
    print_titled(console, "output", t)
    cells.flush_below()


def _inputs_table(inputs, console, cells: _Cells) -> None:
    from rich.table import Table
    from rich.text import Text

    flag = any(nonfinite(inp.value.value) for inp in inputs)
    t = Table()
    for col in ("name", "kind", "value", "shape", "dtype") + (("nonfinite",) if flag else ()):
        t.add_column(col)
    others = [["name"] + [i.name for i in inputs], ["kind"] + [i.kind for i in inputs],
              ["shape"] + [_shape(i.value.shape) for i in inputs],
              ["dtype"] + [i.value.dtype for i in inputs]] + ([["nonfinite", "false"]] if flag else [])
    for inp in inputs:
        t.add_row(Text(inp.name), Text(inp.kind),
                  cells.cell(inp.name, cells.fmt(inp.value.value, requires_grad=inp.value.requires_grad), others),
                  Text(_shape(inp.value.shape)), Text(inp.value.dtype),
                  *([Text(_flag(inp.value.value))] if flag else []))
    print_titled(console, "inputs", t)
    cells.flush_below()


def _grads_table(result: GradResult, names: list, console, cells: _Cells) -> None:
    from rich.table import Table
    from rich.text import Text

    multi = len(result.calls) > 1
    if result.backward_by_program:
        console.print(Text("the program called backward itself: the gradients are as it left them"))
    t = Table(show_lines=multi)
    t.add_column("name")
    if multi:
        t.add_column("call")
    t.add_column("grad")
    flag = any(nonfinite(call.get(name)) for name in names for call in result.calls)
    if flag:
        t.add_column("nonfinite")
    others = [["name", *names]] + ([["call", str(len(result.calls))]] if multi else []) + \
        ([["nonfinite", "false"]] if flag else [])
    for name in names:
        for k, call in enumerate(result.calls):
            g = call.get(name)
            label = f"{name}.grad" + (f" (call {k + 1})" if multi else "")
            row = [Text(name)] + ([Text(str(k + 1))] if multi else []) + \
                [Text("None") if g is None else cells.cell(label, cells.fmt(g), others)] + \
                ([Text(_flag(g))] if flag else [])
            t.add_row(*row)
    print_titled(console, "gradients" + (" after each backward call" if multi else ""), t)
    cells.flush_below()


def _graph_table(nodes, console) -> None:
    from rich.table import Table
    from rich.text import Text

    t = Table()
    for col in ("id", "grad_fn", "shape", "dtype", "inputs"):
        t.add_column(col)
    for node in nodes[:GRAPH_ROWS]:
        # a node with several outputs (SplitBackward0) shows each output's shape
        shape = (_shape(node.shape) if node.output_shapes is None else
                 ", ".join(_shape(s) for s in node.output_shapes))
        t.add_row(*(Text(c) for c in (node.id, node.name, shape, node.dtype, ", ".join(node.inputs) or "-")))
    if len(nodes) > GRAPH_ROWS:
        t.add_row(Text("..."), Text(f"{len(nodes) - GRAPH_ROWS:,} more nodes (--json lists all)"),
                  Text(""), Text(""), Text(""))
    print_titled(console, "graph (root first; inputs feed each node)", t)


#: A Jacobian/Hessian block shows at most this many rows and columns; the rest are summarised with "...",
#: the first and last ones kept, as PyTorch summarises large tensors.
BLOCK_ROWS, BLOCK_COLS = 12, 8


def _number(v) -> str:
    """One element of a block: 4 decimals as PyTorch prints tensors, scientific beyond 1e6 or below 1e-4."""
    v = float(v)
    if v != v or v in (float("inf"), float("-inf")):
        return {True: "nan"}.get(v != v, "inf" if v > 0 else "-inf")
    return f"{v:.4f}" if v == 0 or 1e-4 <= abs(v) < 1e6 else f"{v:.4e}"


def _keep(n: int, most: int) -> list:
    if n <= most:
        return list(range(n))
    half = most // 2
    return list(range(half)) + [None] + list(range(n - half, n))


def _index(k: int, shape) -> str:
    if not shape:
        return "()"
    idx = np.unravel_index(k, shape)
    return str(int(idx[0])) if len(shape) == 1 else "(" + ", ".join(str(int(i)) for i in idx) + ")"


def render_transform(result, console) -> None:
    """Print a :class:`~gradcli.app.transforms.TransformResult`: the output, then one table per block of a Jacobian or
    Hessian, rows labelled by the output (or first input) element's index and columns by the input element's
    index, in PyTorch's flattened order (large blocks keep their first and last rows and columns); a JVP's or
    HVP's blocks as tensors; then the ``--check`` table."""
    from rich.table import Table
    from rich.text import Text

    d = np.dtype(result.default_dtype)
    console.print(Text("output: " + transforms.output_text(result.output, d)), soft_wrap=True)
    shapes = dict(result.inputs)
    for key, a in result.blocks.items():
        if result.kind in ("jvp", "hvp"):
            title = f"{result.kind}: {'J v' if key is None else f'H v, d/d {key}'}, shape {_shape(a.shape)}"
            console.print(Text(title), soft_wrap=True)
            console.print(Text(f"{transforms.block_label(result.kind, key)}: " + format_tensor(a, default_dtype=d)),
                          soft_wrap=True)
            continue
        if result.kind == "jacobian" and isinstance(key, tuple):  # one of several outputs
            row_shape, col_shape = tuple(result.output[key[0]].shape), shapes[key[1]]
            title = (f"jacobian ({result.mode} mode): d output[{key[0]}] / d {key[1]}, shape {_shape(a.shape)} "
                     f"(rows: output[{key[0]}] elements, columns: {key[1]})")
        elif result.kind == "jacobian":
            row_shape, col_shape = tuple(result.output.shape), shapes[key]
            title = (f"jacobian ({result.mode} mode): d output / d {key}, shape {_shape(a.shape)} (rows: output "
                     f"elements, columns: {key})")
        else:
            row_shape, col_shape = shapes[key[0]], shapes[key[1]]
            title = (f"hessian: d2 output / d {key[0]} d {key[1]}, shape {_shape(a.shape)} (rows: {key[0]}, "
                     f"columns: {key[1]})")
        rows_n, cols_n = int(np.prod(row_shape, dtype=np.int64)), int(np.prod(col_shape, dtype=np.int64))
        m = a.reshape(rows_n, cols_n)
        cols = _keep(cols_n, BLOCK_COLS)
        console.print(Text(title), soft_wrap=True)
        t = Table()
        t.add_column("")
        for c in cols:
            t.add_column("..." if c is None else _index(c, col_shape), justify="right")
        for r in _keep(rows_n, BLOCK_ROWS):
            if r is None:
                t.add_row(*(Text("...") for _ in range(len(cols) + 1)))
                continue
            t.add_row(Text(_index(r, row_shape)), *(Text("..." if c is None else _number(m[r, c])) for c in cols))
        console.print(t)
    if result.check is not None:
        render_check(result.check, console)
    if getattr(result, "symbolic", None) is not None:
        symbolic.table(result.symbolic, console)  # hessian --symbolic


def render_check(check, console) -> None:
    """Print the ``--check`` table: per input, the largest absolute and relative difference between the
    gradient and central finite differences in float64, and whether it is within tolerance (``FAIL (kink)``
    when it fails only at kinks); then one line per element at a kink (:meth:`gradcli.app.finite_differences.Kink.message`)."""
    from rich.table import Table
    from rich.text import Text

    t = Table()
    for col in ("name", "max abs diff", "max rel diff", "result"):
        t.add_column(col)
    for i in check.inputs:
        verdict = "ok" if i.ok else "FAIL (kink)" if i.fails_only_at_kinks else "FAIL"
        t.add_row(Text(i.name), Text(f"{i.max_abs_diff:.3e}"), Text(f"{i.max_rel_diff:.3e}"),
                  Text(verdict, style="green" if i.ok else "bold red"))
    print_titled(console, f"check: central differences in float64 (eps {check.eps:g}; pass when |grad - numerical| "
                          f"<= {check.atol:g} + {check.rtol:g} * |numerical|)", t)
    for i in check.inputs:
        for k in i.kinks:
            console.print(Text(k.message(i.name) + ("" if k.ok else " (beyond the tolerance)")), soft_wrap=True)


def render_ops(infos, console) -> None:
    """Print the ``gradcli ops`` table (one row per name: signature, grad_fn, derivative note). Below
    :data:`OPS_TABLE_WIDTH` columns the five columns cannot hold a signature without splitting names
    (``log_softmax(inp|ut``), so each name gets a short block instead: the name, kind and grad_fn on one line,
    the signature and the derivative on their own lines, wrapped at spaces by the terminal."""
    from rich.table import Table
    from rich.text import Text

    title = f"{len(infos)} name{'' if len(infos) == 1 else 's'} (gradcli ops --json for all fields)"

    def derivative(i) -> str:
        if i.alias_of:
            return f"alias of {i.alias_of}"
        return i.derivative or ("-" if i.grad_fn is None else "")

    if console.width < OPS_TABLE_WIDTH:
        console.print(Text(title))
        for i in infos:
            head = f"{i.name}{' (method)' if i.method else ''} · {i.kind}" + (f" · {i.grad_fn}" if i.grad_fn else "")
            console.print(Text(head, style="bold"), soft_wrap=True)
            console.print(Text("  " + i.signature), soft_wrap=True)
            d = derivative(i)
            if d and d != "-":
                console.print(Text("  " + d), soft_wrap=True)
        return
    t = Table()
    for col in ("name", "kind", "signature", "grad_fn", "derivative"):
        t.add_column(col, overflow="fold")
    for i in infos:
        t.add_row(Text(i.name + (" (method)" if i.method else "")), Text(i.kind), Text(i.signature),
                  Text(i.grad_fn or "-"), Text(derivative(i)))
    print_titled(console, title, t)


#: ``gradcli ops`` draws its table from this many columns on; below, a block per name (see :func:`render_ops`).
OPS_TABLE_WIDTH = 120


def batch_cells(result: GradResult, default_dtype=None) -> tuple[str, str]:
    """The output and gradients cells of a ``gradcli batch`` table row: the output as PyTorch prints it, and
    ``name: grad`` for each leaf that requires grad (its gradient after the last backward call), and with a
    check the line ``check: ok`` or ``check: FAILED``. ``default_dtype``: as for :func:`render_grad`."""
    from .compact import check_line  # deferred, not lazy(): that would list compact in sys.modules for every table

    if default_dtype is None:
        default_dtype = np.dtype(result.default_dtype)
    out = result.output
    if isinstance(out, tuple):  # a transform entry's several outputs
        output = transforms.output_text(out, default_dtype)
    else:
        output = format_tensor(out.value, grad_fn=out.grad_fn, requires_grad=out.requires_grad,
                               default_dtype=default_dtype)
    if getattr(result, "blocks", None) is not None:  # a transform entry: its blocks, labelled
        named = [(transforms.block_label(result.kind, key), a) for key, a in result.blocks.items()]
    else:
        named = list(result.grads().items())
    grads = []
    for name, g in named:
        text = "None" if g is None else format_tensor(g, default_dtype=default_dtype)
        grads.append(f"{name}: " + text.replace("\n", "\n" + " " * (len(name) + 2)))
    if result.check is not None:
        grads.append(check_line(result.check))
    if getattr(result, "blocks", None) is None and (where := nonfinite_where(result)):
        grads.append("nonfinite: " + ", ".join(where))  # the mark of grad's nonfinite column
    return output, "\n".join(grads) or "-"


class BatchTable:
    """The ``gradcli batch`` table, printed one row at a time as entries finish (it streams): columns line,
    entry, output, gradients or error. Columns have fixed proportions of the width so that separately printed
    rows line up under the header.

    Args:
        width: the width in characters (the terminal's, or a fixed width when piped).
        color: whether to write colors (only for a terminal without ``NO_COLOR``).
    """

    COLUMNS = (("line", None), ("entry", 3), ("output", 3), ("gradients or error", 4))

    def __init__(self, width: int, color: bool):
        import io

        from rich.console import Console

        self.color = color
        self.console = Console(file=io.StringIO(), width=width, force_terminal=color, no_color=not color,
                               color_system="auto" if color else None, highlight=False, emoji=False)

    def _table(self, header: bool):
        from rich import box
        from rich.table import Table

        t = Table(box=box.MINIMAL_HEAVY_HEAD if header else box.MINIMAL, show_header=header, show_edge=False,
                  pad_edge=False, expand=True)
        for name, ratio in self.COLUMNS:
            if ratio is None:
                t.add_column(name, width=6, justify="right", no_wrap=True)
            else:
                t.add_column(name, ratio=ratio, overflow="fold")
        return t

    def _render(self, table) -> str:
        with self.console.capture() as capture:
            self.console.print(table)
        text = capture.get()
        if not self.color:  # cells are padded to the column width: drop the trailing blanks
            text = "\n".join(line.rstrip() for line in text.split("\n"))
        return text

    def header(self) -> str:
        """The header lines (printed once, before the first row)."""
        return self._render(self._table(True))

    def _widths(self) -> list[int]:
        """The columns' widths, read off the header's rule (rich distributes the width by the ratios)."""
        if getattr(self, "_cached_widths", None) is None:
            rule = next(line for line in self.header().split("\n") if "┿" in line)
            cuts = [i for i, ch in enumerate(rule) if ch == "┿"]
            bounds = [-2] + cuts + [len(rule) + 1]
            widths = [bounds[k + 1] - bounds[k] - 3 for k in range(len(bounds) - 1)]
            widths[-1] = max(1, self.console.width - sum(widths[:-1]) - 3 * (len(widths) - 1))
            self._cached_widths = widths
        return self._cached_widths

    def row(self, line: int, entry: str, output: str | None, grads_or_error: str, failed: bool) -> str:
        """The lines of one row; ``output`` is None for a failed entry, whose error fills the last column.

        Laid out here, not by a rich Table per row (that costs ~1 ms an entry): each cell's lines are
        wrapped at spaces to its column's width (words longer than the column are cut, as rich's "fold"), cells
        are padded and joined with the header's separators; a failed entry's last cell is red on a terminal."""
        widths = self._widths()
        # a program's text (the entry, what it printed in an error) shown, never run by the terminal
        entry, grads_or_error = escape_controls(entry), escape_controls(grads_or_error)
        output = None if output is None else escape_controls(output)
        cells = [_wrap(str(line), widths[0]), _wrap(entry, widths[1]), _wrap("-" if output is None else output,
                                                                                  widths[2]),
                 _wrap(grads_or_error, widths[3])]
        height = max(len(c) for c in cells)
        red = failed and self.color
        out = []
        for i in range(height):
            parts = []
            for k, (cell, w) in enumerate(zip(cells, widths)):
                text = cell[i] if i < len(cell) else ""
                text = text.rjust(w) if k == 0 else text.ljust(w)
                if red and k == len(cells) - 1 and text.strip():
                    text = f"\x1b[31m{text}\x1b[0m"
                parts.append(text)
            row = " │ ".join(parts)
            out.append(row if self.color else row.rstrip())
        return "\n".join(out) + "\n"


def _wrap(text: str, width: int) -> list[str]:
    """``text``'s lines, each wrapped at spaces to ``width`` (a word longer than the width is cut)."""
    out = []
    for line in text.split("\n"):
        while len(line) > width:
            cut = line.rfind(" ", 0, width + 1)
            if cut <= 0 or not line[:cut].strip():
                out.append(line[:width])
                line = line[width:]
            else:
                out.append(line[:cut].rstrip())
                line = line[cut + 1:]
        out.append(line)
    return out


def error_cell(error: ErrorInfo) -> str:
    """The error cell of a failed entry's row: the source line with a caret (when known), ``Type: message``,
    the hint."""
    return "\n".join(list(error.excerpt) + [f"{error.type}: {error.message}"] + ([error.hint] if error.hint else []))


class TableEntries(EntryFormat):
    """``gradcli batch``'s rows: a :class:`BatchTable` of the given width and colour, built on first use (in
    the process that renders: only ``width`` and ``color`` are pickled to ``--jobs`` workers)."""

    def __init__(self, width: int, color: bool):
        self.width = width
        self.color = color
        self._table = None

    def __getstate__(self):
        return {"width": self.width, "color": self.color, "_table": None}

    def _batch_table(self) -> BatchTable:
        if self._table is None:
            self._table = BatchTable(self.width, self.color)
        return self._table

    def header(self) -> str:
        return self._batch_table().header()

    def entry(self, item: EntryResult) -> str:
        if item.error is not None:
            output, last = None, error_cell(item.error)
        else:
            output, last = batch_cells(item.result)
        failed = not item.ok or (item.result.check is not None and not item.result.check.ok)
        return self._batch_table().row(item.line, item.text, output, last, failed=failed)


class TableRenderer(Renderer):
    """The ``table`` format (the default): rich tables on standard output, which the program's own output
    shares."""

    name = "table"
    prints_to_stdout = True

    def grad(self, result: GradResult, stream, fields=("output", "inputs", "grads", "graph")) -> None:
        console = stdout_console(stream)
        render_grad(result, console, sections=fields)
        if result.check is not None and "grads" in fields:
            render_check(result.check, console)

    def ops(self, infos: list, stream) -> None:
        render_ops(infos, stdout_console(stream))

    def transform(self, result, stream) -> None:
        render_transform(result, stdout_console(stream))

    def batch(self, stream) -> TableEntries:
        """Rows as wide as the terminal, in colour unless NO_COLOR; :data:`BATCH_PIPE_WIDTH` columns without
        colour for a file or pipe."""
        from rich.console import Console

        out = Console(file=stream)
        return TableEntries(out.width if out.is_terminal else BATCH_PIPE_WIDTH,
                            color=out.is_terminal and not out.no_color)

    def explain(self, result, stream) -> None:
        explain.render_explain(result, stdout_console(stream))

    def plot(self, result, stream) -> None:
        """The plot in the terminal (plotext; see :mod:`gradcli.render.plotterm`)."""
        plotterm.render_plot(result, stream)


register(TableRenderer())

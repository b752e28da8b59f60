"""PyTorch's documented examples, as programs: extracted from the installed torch, run on both sides, compared.

PyTorch's docstrings hold examples in doctest form (``>>> a = torch.randn(4)`` followed by what PyTorch
printed). :func:`extract` turns each docstring that has examples into one :class:`Example`: a program whose
first cell is ``import torch; from torch import nn; import torch.nn.functional as F`` (the names PyTorch's own
doctest run provides) and whose further cells (``# %%``) are the docstring's ``>>>`` statements, one cell each.
The text of the examples is PyTorch's code: it is regenerated from the installed torch every time and never
committed; only what PyTorch printed (``expected.json``) is stored, beside the hash of the example's text, so
that a different torch shows up as a changed example instead of a wrong comparison.

Both sides run an example as a notebook does: after ``torch.manual_seed(0)``, each cell's last expression is
shown as IPython shows it (``IPython.lib.pretty``; gradcli: ``gradcli run --seed 0 --notebook``, with the
``elements`` limit raised to :data:`ELEMENTS_LIMIT`). The outputs
are compared with object addresses masked; where the texts differ only in numbers, the numbers must agree
within ``RTOL`` (:func:`outputs_agree`).

Scope: every deterministic CPU example, except those about complex numbers, sparse tensors, quantization,
CUDA and devices, distributed, the profiler and jit/compile (:data:`OUT_OF_SCOPE`, matched on the example's
text), and those that PyTorch itself cannot run here (an error, or output that changes between two runs with
the same seed).
"""

from __future__ import annotations

import ast
import doctest
import hashlib
import io
import math
import re
from contextlib import redirect_stdout
from dataclasses import dataclass

#: What the doctest run of PyTorch provides before every example (its ``conftest``/``doctest_namespace``).
PRELUDE = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n"

#: The namespaces whose docstrings are read: (python path, category reported). A docstring that several
#: names share counts once, in the first namespace listed that has it (torch.linalg.det before torch.det).
NAMESPACES = (
    ("torch.autograd", "autograd"),
    ("torch.autograd.functional", "autograd"),
    ("torch.autograd.forward_ad", "autograd"),
    ("torch.autograd.graph", "autograd"),
    ("torch.func", "func"),
    ("torch.linalg", "linalg"),
    ("torch.special", "special"),
    ("torch.nn.functional", "nn.functional"),
    ("torch.nn", "nn modules"),
    ("torch.optim", "optim"),
    ("torch.Tensor", "Tensor methods"),
    ("torch", "tensor ops"),
)

#: Out of scope, with the reason: (regular expression over the example's text, reason).
OUT_OF_SCOPE = (
    (r"cuda|device\s*=|\.to\(\s*['\"]|\bmps\b|\bmeta\b|pin_memory|\.cpu\(\)", "CUDA and devices"),
    (r"complex|cfloat|cdouble|chalf|\d[jJ]\b|\.real\b|\.imag\b|view_as_real|\bpolar\(|\.conj|is_conj|\bangle\(",
     "complex numbers"),
    (r"sparse|to_sparse|_coo|_csr|_csc|_bsr|_bsc", "sparse tensors"),
    (r"quantiz|qint|quint|dequantize|q_scale|q_zero", "quantization"),
    (r"distributed|torch\.distributed|\bdist\.", "distributed"),
    (r"profiler|profile\(", "the profiler"),
    (r"torch\.jit|jit\.|torch\.compile|\bscript\(|torch\._dynamo|torch\.export|fx\.", "jit/compile"),
)

#: The ``elements`` limit the examples run under (``gradcli run --limit elements=200000000``): a few of PyTorch's
#: examples make tensors of just over gradcli's default of 100,000,000 elements per tensor (ReplicationPad3d's
#: and CircularPad3d's pad a 16x3x8x320x480 input to 106,468,992 elements), which PyTorch computes; the default
#: is a bound for untrusted programs, and these are PyTorch's own.
ELEMENTS_LIMIT = 200_000_000

#: Relative tolerance for outputs that differ only in their numbers.
RTOL = 1e-4
ATOL = 1e-6

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?\binf\b|\bnan\b")


@dataclass(frozen=True)
class Example:
    """One docstring's examples as a program.

    Attributes:
        id: ``<qualified name>``, e.g. ``torch.Tensor.addmm`` (one program per docstring).
        category: one of the categories of :data:`NAMESPACES`.
        cells: the statements of the ``>>>`` lines, one cell each (the prelude not included).
        sha: the hash of the cells' text (changes when the installed torch's example changes).
    """

    id: str
    category: str
    cells: tuple

    @property
    def sha(self) -> str:
        return hashlib.sha256("\n# %%\n".join(self.cells).encode()).hexdigest()[:16]

    def program(self) -> str:
        """The program ``gradcli run --seed 0 --notebook`` runs: the prelude, then one ``# %%`` cell a
        statement."""
        return PRELUDE + "".join(f"# %%\n{cell}\n" for cell in self.cells)

    def out_of_scope(self) -> str | None:
        """The reason the example is out of scope, or None."""
        text = "\n".join(self.cells)
        for pattern, reason in OUT_OF_SCOPE:
            if re.search(pattern, text):
                return reason
        return None


def _objects(torch):
    import importlib

    for path, category in NAMESPACES:
        head, _, attr = path.rpartition(".")
        try:
            mod = importlib.import_module(path)
        except ImportError:
            mod = getattr(importlib.import_module(head), attr)
        for name in sorted(dir(mod)):
            if name.startswith("_"):
                continue
            try:
                obj = getattr(mod, name)
            except Exception:
                continue
            yield f"{path}.{name}", category, obj


def extract(torch) -> list[Example]:
    """Every docstring of :data:`NAMESPACES` that holds ``>>>`` examples, as an :class:`Example`, in a stable
    order (a docstring shared by several names is taken once, under its first name)."""
    parser = doctest.DocTestParser()
    seen: set[str] = set()
    out: list[Example] = []
    for qualname, category, obj in _objects(torch):
        doc = getattr(obj, "__doc__", None)
        if not isinstance(doc, str) or ">>>" not in doc or doc in seen:
            continue
        seen.add(doc)
        try:
            found = parser.get_examples(doc)
        except ValueError:  # inconsistent indentation inside the docstring
            continue
        cells = _statements([e.source.rstrip("\n") for e in found])
        if cells:
            out.append(Example(qualname, category, cells))
    return out


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def _statements(sources: list[str]) -> tuple:
    """Whole statements from doctest sources: some docstrings write a multi-line statement as several
    ``>>>`` lines (``>>> m = nn.Sequential(`` then ``>>>     nn.Linear(50, 50),``); an indented line, or a
    line that does not parse on its own, is joined to the statement before it, as a reader would."""
    cells: list[str] = []
    for source in sources:
        if cells and (source[:1].isspace() or not _parses(cells[-1])):
            cells[-1] += "\n" + source
        else:
            cells.append(source)
    return tuple(cells)


def _display_text(value) -> str:
    from IPython.lib.pretty import pretty

    return pretty(value)


def run_torch(example: Example, torch) -> str:
    """Run ``example`` with PyTorch as a notebook does, after ``torch.manual_seed(0)``; return what it printed
    (``print`` and each cell's displayed value).

    Raises:
        Whatever the example raises.
    """
    _reset(torch)
    namespace: dict = {"__name__": "__doc_example__"}
    buf = io.StringIO()
    with redirect_stdout(buf):
        exec(compile(PRELUDE, "<prelude>", "exec"), namespace)  # the oracle side runs PyTorch's own code
        torch.manual_seed(0)
        for cell in example.cells:
            tree = ast.parse(cell)
            last = tree.body[-1] if tree.body else None
            if isinstance(last, ast.Expr):
                tree.body = tree.body[:-1]
                exec(compile(tree, "<cell>", "exec"), namespace)
                value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
                if value is not None:
                    print(_display_text(value))
            else:
                exec(compile(tree, "<cell>", "exec"), namespace)
    return buf.getvalue()


def _reset(torch) -> None:
    """PyTorch's process-wide settings back to their defaults: an example may change them
    (``torch.set_grad_enabled(False)``, ``torch.set_default_dtype``), and gradcli runs each in a fresh context."""
    torch.set_grad_enabled(True)
    torch.set_default_dtype(torch.float32)
    torch.set_printoptions(profile="default")
    torch.autograd.set_detect_anomaly(False)


def mask(text: str) -> str:
    """``text`` with object addresses masked (``0x7f...`` → ``0x?``)."""
    return _ADDRESS.sub("0x?", text)


def outputs_agree(expected: str, actual: str) -> bool:
    """Whether two outputs agree: equal with addresses masked, or equal but for numbers that agree within
    ``RTOL``/``ATOL`` (``nan`` with ``nan``, ``inf`` with ``inf``)."""
    expected, actual = mask(expected), mask(actual)
    if expected == actual:
        return True
    if _NUMBER.sub("#", expected) != _NUMBER.sub("#", actual):
        return False
    for a, b in zip(_NUMBER.findall(expected), _NUMBER.findall(actual)):
        x, y = float(a), float(b)
        if math.isnan(x) and math.isnan(y):
            continue
        if x == y:
            continue
        if not math.isclose(x, y, rel_tol=RTOL, abs_tol=ATOL):
            return False
    return True


def run_gradcli(example: Example) -> tuple[str, str]:
    """Run ``example`` with gradcli as ``gradcli run --seed 0 --notebook --limit elements=200000000`` does
    (the same application function, in this process, under :data:`ELEMENTS_LIMIT`); return (standard output,
    first error's text or "")."""
    import dataclasses

    from gradcli.app import run_program
    from gradcli.engine import limits
    from gradcli.engine.context import RunContext

    out: list[str] = []
    errors: list[str] = []
    req = run_program.RunRequest(source=example.program(), filename=f"<{example.id}>", notebook=True, seed=0)
    try:
        with RunContext(limits=dataclasses.replace(limits.current, elements=ELEMENTS_LIMIT)):
            run_program.run_program(req, write=out.append, warn=lambda text: None,
                                    report=lambda err: errors.append(f"{err.type}: {err}"))
    except Exception as err:  # a syntax error (the whole program refused) or a bad request
        errors.append(f"{getattr(err, 'type', type(err).__name__)}: {err}")
    return "".join(out), (errors[0] if errors else "")

"""The op table's families: one module per family, all listed (by their real paths) in ``gradcli/ops/__init__.py``'s
docstring, none bound in ``gradcli.ops`` under a name that hides a subpackage (``gradcli.ops.shape`` is the
package, not the views module) or an op (``scatter``, ``softmax``, ``dropout``); and the ops that moved between
modules (sort, quantile, scatter_reduce, cat, split, torch.linalg's functions, embedding, batch_norm, ...) still
give PyTorch's values, grad_fn names and gradients, called from Python and from a ``gradcli run`` program."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import gradcli.ops as ops

OPS_DIR = Path(ops.__file__).parent
#: Not families: the packages' ``__init__`` files and Tensor's operators (ops/core/, the machinery of declaring
#: ops, is left out too).
NOT_FAMILIES = {"__init__", "operators"}


def _family_modules() -> set[str]:
    """Every family module as a dotted path relative to gradcli.ops (``shape.views``); private helper modules
    (``nn._im2col``) are not families."""
    out = set()
    for path in OPS_DIR.rglob("*.py"):
        rel = path.relative_to(OPS_DIR).with_suffix("")
        if rel.parts[0] == "core" or rel.name in NOT_FAMILIES or rel.name.startswith("_"):  # private helpers
            continue
        out.add(".".join(rel.parts))
    return out


def test_the_package_docstring_lists_every_family_by_its_path():
    listed = set(re.findall(r"^\* :mod:`\.([a-z_.0-9]+)`", ops.__doc__, flags=re.M))
    assert listed == _family_modules()


def test_no_family_module_hides_a_subpackage_or_an_op():
    for sub in ("core", "elementwise", "shape", "reduction", "linalg", "nn"):
        assert getattr(ops, sub).__name__ == f"gradcli.ops.{sub}", sub
    modules = [n for n in ops.__all__ if isinstance(getattr(ops, n, None), types.ModuleType)]
    assert not modules, f"names of gradcli.ops.__all__ bound to modules: {modules}"


def _moved_ops(m, F):
    """One call of each op that moved between modules, for gradcli or torch (``m``; ``F`` its nn.functional)."""
    x = m.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, 1.5], [2.0, 1.0, 5.0]], dtype=m.float64, requires_grad=True)
    return x, {
        "sort": lambda: x.sort(dim=1).values,
        "argsort": lambda: x.argsort(dim=0).double(),
        "quantile": lambda: m.quantile(x, 0.5, dim=1),
        "scatter_reduce": lambda: x.scatter_reduce(0, m.tensor([[0, 1, 0]]), x[:1], "amax"),
        "masked_scatter": lambda: x.masked_scatter(x > 2, x.flatten()),
        "index_add": lambda: x.index_add(0, m.tensor([2]), x[:1]),
        "cat": lambda: m.cat([x, x]),
        "stack": lambda: m.stack([x, x], 1),
        "split": lambda: x.split(1)[0],
        "unbind": lambda: x.unbind(1)[2],
        "linalg.det": lambda: m.linalg.det(x),
        "linalg.inv": lambda: m.linalg.inv(x),
        "linalg.solve": lambda: m.linalg.solve(x, x[:, 0]),
        "linalg.svdvals": lambda: m.linalg.svdvals(x),
        "linalg.matrix_norm": lambda: m.linalg.matrix_norm(x, "nuc"),
        "linalg.matrix_exp": lambda: m.linalg.matrix_exp(x / 4),
        "linalg.cross": lambda: m.linalg.cross(x, x.flip(0)),
        "linalg.multi_dot": lambda: m.linalg.multi_dot([x, x, x]),
        "cdist": lambda: m.cdist(x, x.flip(1)),
        "embedding": lambda: F.embedding(m.tensor([2, 0]), x),
        "batch_norm": lambda: F.batch_norm(x, None, None, training=True),
    }


def test_moved_ops_give_pytorchs_values_grad_fns_and_gradients():
    # the ops that moved between modules, called as a user calls them: PyTorch's values, grad_fn and gradients
    torch = pytest.importorskip("torch")
    import gradcli as G

    gx, gcases = _moved_ops(G, G)
    tx, tcases = _moved_ops(torch, torch.nn.functional)
    for name in gcases:
        g, t = gcases[name](), tcases[name]()
        assert np.allclose(g.detach().numpy(), t.detach().numpy(), atol=1e-10), name
        assert (g.grad_fn is None) == (t.grad_fn is None), name
        if t.grad_fn is None:
            continue
        assert g.grad_fn.name() == t.grad_fn.name(), name
        (gg,) = G.autograd.grad(g.sum(), gx)
        (tg,) = torch.autograd.grad(t.sum(), tx)
        assert np.allclose(gg.numpy(), tg.numpy(), atol=1e-8), name


def test_a_program_using_the_moved_ops_runs_from_the_cli(tmp_path):
    torch = pytest.importorskip("torch")
    program = tmp_path / "moved.py"
    program.write_text("x = torch.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)\n"
                       "y = torch.linalg.det(x) + torch.cat([x, x]).sort(dim=0).values.sum() + torch.quantile(x, 0.5)\n"
                       "y.backward()\n"
                       "print(y.grad_fn.name())\n"
                       "print(x.grad.tolist())\n")
    out = subprocess.run([sys.executable, "-m", "gradcli", "run", str(program)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    x = torch.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    y = torch.linalg.det(x) + torch.cat([x, x]).sort(dim=0).values.sum() + torch.quantile(x, 0.5)
    y.backward()
    name, grad = out.stdout.strip().splitlines()[-2:]
    assert name == y.grad_fn.name()
    assert np.allclose(np.array(ast.literal_eval(grad)), x.grad.numpy())

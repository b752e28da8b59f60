"""Run state lives in the run context or on the objects it describes, never in module globals.

Everything a run changes (limits, default dtype, generator, grad and inference modes, hooks, saved tangents,
version counters, parameter marks, transform depth, backward-call count) belongs to the
:class:`~gradcli.engine.context.RunContext` that a run, a batch entry or a session owns, or to the tensor or graph
node it is about. So no module of ``gradcli`` may keep state that its functions change at run time, except the
few globals of :data:`ALLOWED`, each with its reason.

The scan reads every module with :mod:`ast` (nothing is imported) and reports, inside functions and methods:

* ``global NAME`` statements (a function rebinding a module global);
* mutations of a module-level container (a dict, list or set display or constructor call, a weak dictionary,
  a counter): item assignment or deletion, augmented item assignment, a mutating method call (``append``,
  ``update``, ``setdefault``, ``pop``, ``clear``, ...), ``next()`` of a counter;
* assignments to an attribute of an imported gradcli module (``limits.current = ...``), which rebind that
  module's global from outside.

What happens at import time (module-level statements filling a table, the op table's registration, installing
methods on Tensor) is not run state and is not reported. The second half checks the behaviour: two run contexts
do not see each other's hooks, parameters, backward-call counts, inference mode or transform depth.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import gradcli
import gradcli as G
from gradcli.engine.context import RunContext
from gradcli.engine.grad_mode import inference_mode, is_inference_mode_enabled

PACKAGE = Path(gradcli.__file__).parent

#: (module, name) -> why it may change at run time. Keep this short: a new entry needs a reason that is not
#: "it was easier" (the run context or the object concerned is the place for run state).
ALLOWED = {
    # the active context's values: RunContext swaps them on activation (gradcli.engine.context)
    ("gradcli.engine.context", "state"): "the holder of the active run context's values, swapped by RunContext",
    ("gradcli.engine.dtypes", "_default"): "the active context's default dtype (the holder RunContext swaps; "
                                           "dtypes sits below the context in the layers)",
    ("gradcli.engine.limits", "current"): "the active context's limits (the holder RunContext swaps)",
    # per-buffer version counters: numpy arrays cannot carry attributes, and the count belongs to the memory
    # (shared by every tensor viewing it, in any context), as PyTorch's lives with the storage
    ("gradcli.engine.versions", "modified"): "the version counters of numpy buffers, keyed by the buffer (weak)",
    ("gradcli.engine.versions", "_prune_at"): "when the version counters of dead buffers are next dropped",
    # pure caches: the same answer whatever the run, only faster
    ("gradcli.ops.core.apply", "_NUMBERS"): "cache of Python numbers as read-only 0-d arrays",
    ("gradcli.ops.core.apply", "_SHAPES"): "cache of shape tuples shared between graph nodes",
    ("gradcli.engine.generator", "_LIBM_F64"): "cache of the vectorized libm functions, made on first use",
    ("gradcli.ops.shape.joins", "_NARY"): "cache of the cat/stack ops of each arity, made on first use",
    ("gradcli.ops.shape.more_shape", "_BLOCK_DIAG"): "cache of the block_diag ops of each arity, made on first use",
    # registries, filled as declarations are imported (and by tests and plugins)
    ("gradcli.ops.core.declare", "REGISTRY"): "the op registry",
    ("gradcli.ops.core.declare", "KINDS"): "the op registry's kind of each name",
    ("gradcli.ops.core.declare", "METHODS"): "the op registry's Tensor method names",
    ("gradcli.ops.core.declare", "FORMULAS"): "the op registry's --explain formula of each backward class",
    ("gradcli.ops.core.declare", "KINKS"): "the op registry's --check kink name of each backward class",
    ("gradcli.ops.core.declare", "_NOTE_ONLY"): "the op registry's ops declared with a note only (filled as "
                                                "declarations are imported)",
    ("gradcli.render.registry", "_RENDERERS"): "the output-format registry",
    ("gradcli.ops.core.declare", "FORMULAS"): "the op registry's formula text of each grad_fn name, filled as "
                                              "declarations are made",
    ("gradcli.ops.core.declare", "KINKS"): "the op registry's kinks of each grad_fn name, filled as declarations "
                                           "are made",
    # installed once, at import, by a module one layer up
    ("gradcli.ops.core.apply", "_fw_apply"): "forward mode's apply, installed at import by ops.core.forward",
    # the process, not a run
    ("gradcli.api.forward_ad", "_IDS"): "ids of forward-AD levels, unique in the process (a counter: no run "
                                        "reads what another took)",
    ("gradcli.frontends.cli", "_collector_deferred"): "whether the command's start-up paused the garbage "
                                                       "collector (once per process)",
    ("gradcli.engine.limits", "_watchdog"): "the process that kills this process when a time limit is stuck "
                                            "inside one C call: it guards (and kills) the whole process, whatever "
                                            "context runs, so there is one per process",
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


_MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque", "WeakKeyDictionary",
                  "WeakValueDictionary", "WeakSet", "count", "array"}
_MUTATING_METHODS = {"append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem", "clear",
                     "remove", "discard", "__setitem__", "__delitem__", "appendleft", "popleft"}


def _is_mutable_value(node: ast.AST) -> bool:
    if isinstance(node, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        return name in _MUTABLE_CALLS
    return False


def _module_globals(tree: ast.Module) -> set:
    """Names bound at module level to a mutable container."""
    out = set()
    for stmt in tree.body:
        targets, value = [], None
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        if value is not None and _is_mutable_value(value):
            out.update(t.id for t in targets if isinstance(t, ast.Name))
    return out


def _imported_modules(tree: ast.Module, module: str) -> set:
    """Local names that refer to gradcli modules (``from . import limits``, ``import gradcli.engine.x as y``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level or base.startswith("gradcli"):
                for a in node.names:
                    target = PACKAGE.parent / Path(*(module.split(".")[:len(module.split(".")) - node.level]
                                                     if node.level else []), *base.split("."), a.name)
                    if target.with_suffix(".py").exists() or (target / "__init__.py").exists():
                        names.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("gradcli") and a.asname:
                    names.add(a.asname)
    return names


def _findings(path: Path) -> list:
    module = _module_name(path)
    tree = ast.parse(path.read_text(), str(path))
    mutable = _module_globals(tree)
    modules = _imported_modules(tree, module + (".__init__" if path.name == "__init__.py" else ""))
    found = []

    def report(owner: str, name: str, node: ast.AST, what: str) -> None:
        found.append(((owner, name), f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {what}"))

    def root_name(node):
        while isinstance(node, (ast.Subscript, ast.Attribute)) and not (
                isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules):
            node = node.value
        return node

    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                for name in node.names:
                    report(module, name, node, f"global {name}")
            targets = []
            if isinstance(node, (ast.Assign, ast.Delete)):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in modules:
                    report(t.value.id, t.attr, node, f"{t.value.id}.{t.attr} rebound from outside its module")
                elif isinstance(t, ast.Subscript):
                    r = root_name(t)
                    if isinstance(r, ast.Name) and r.id in mutable:
                        report(module, r.id, node, f"{r.id}[...] changed")
            if isinstance(node, ast.Call):
                f = node.func
                if isinstance(f, ast.Attribute) and f.attr in _MUTATING_METHODS:
                    r = root_name(f.value)
                    if isinstance(r, ast.Name) and r.id in mutable:
                        report(module, r.id, node, f"{r.id}.{f.attr}(...)")
                elif isinstance(f, ast.Name) and f.id == "next" and node.args:
                    r = node.args[0]
                    if isinstance(r, ast.Name) and r.id in mutable:
                        report(module, r.id, node, f"next({r.id})")
    return found


def test_no_module_global_changes_at_run_time():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for key, where in _findings(path):
            owner, name = key
            if "." not in owner:  # an alias of an imported module: match by the name the alias stands for
                matches = [k for k in ALLOWED if k[1] == name and k[0].rsplit(".", 1)[-1] == owner.lstrip("_")]
                if matches:
                    continue
            elif key in ALLOWED:
                continue
            found.append(where)
    assert not found, ("module globals changed at run time (run state belongs to the RunContext or to the "
                       "tensor/node it is about; see ALLOWED for the exceptions):\n" + "\n".join(found))


def test_the_scan_finds_what_it_is_for(tmp_path, monkeypatch):
    # the scan itself: each kind of run-time change of a module global is reported
    pkg = tmp_path / "gradcli"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "other.py").write_text("current = None\n")
    (pkg / "m.py").write_text(
        "import itertools\nfrom . import other\n_T = {}\n_L = []\n_C = itertools.count()\nN = 0\nK = (1, 2)\n"
        "_T['import-time'] = 1\n"
        "def f(x):\n    global N\n    N += 1\n    _T[x] = 1\n    _L.append(x)\n    next(_C)\n"
        "    other.current = x\n    y = {}\n    y[x] = K[0]\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", pkg)
    got = sorted(w.split(": ", 1)[1] for _, w in _findings(pkg / "m.py"))
    assert got == ["_L.append(...)", "_T[...] changed", "global N", "next(_C)",
                   "other.current rebound from outside its module"]


# ---------------------------------------------------------------------------- contexts do not share state
def test_two_contexts_do_not_see_each_others_state():
    a, b = RunContext(), RunContext()
    seen = []
    with a:
        x = G.ones(3, requires_grad=True)
        x.register_hook(lambda g: seen.append("a") or g * 2)
        (x * x).sum().backward()
        p = G.nn.Parameter(G.ones(2))
        with inference_mode():
            inner_a = G.ones(1)
    with b:
        y = G.ones(3, requires_grad=True)
        (y * y).sum().backward()
        (y * y).sum().backward()
        q = G.ones(2)
        with inference_mode():
            assert is_inference_mode_enabled()
            with a:  # another context inside an inference block: its own mode, off
                assert not is_inference_mode_enabled()
                made_in_a = G.ones(1)
            assert G.ones(1).is_inference()
    assert seen == ["a"] and y.grad.tolist() == [4.0, 4.0, 4.0] and x.grad.tolist() == [4.0, 4.0, 4.0]
    assert (a.backward_calls, b.backward_calls) == (1, 2)
    assert isinstance(p, G.nn.Parameter) and not isinstance(q, G.nn.Parameter)
    assert inner_a.is_inference() and not made_in_a.is_inference()
    with a:
        (x * x).sum().backward()  # the hook goes with the tensor, whichever context runs the backward
        assert not is_inference_mode_enabled()
    assert seen == ["a", "a"] and a.backward_calls == 2 and b.backward_calls == 2


def test_transform_depth_is_the_contexts():
    # a torch.func transform running in one context does not make another context's calls keep their graph
    from gradcli.engine.context import state

    depths = []

    def f(t):
        depths.append(state.func_depth)
        with RunContext():
            depths.append(state.func_depth)
        return (t * t).sum()

    g = G.func.grad(f)(G.tensor(np.array([1.0, 2.0])))
    assert g.tolist() == [2.0, 4.0] and depths == [1, 0] and state.func_depth == 0


def test_vmap_levels_and_file_permission_are_the_contexts(tmp_path):
    # a vmap running in one context is not running in another; a permission to read files given in one context
    # reaches the contexts made from it, not one made before or after
    from gradcli.engine.context import state
    from gradcli.language import files

    seen = []

    def f(v):
        seen.append(len(state.vmap_levels))
        with RunContext():
            seen.append((len(state.vmap_levels), state.batching, state.batched_autograd))
            seen.append(float((G.ones(2) * 3).sum()))  # plain ops, no batching rules
        return v * 2

    out = G.func.vmap(f)(G.ones(3))
    assert out.tolist() == [2.0, 2.0, 2.0] and seen == [1, (0, None, None), 6.0]
    (tmp_path / "a.txt").write_text("hi")
    before = RunContext()
    with files.reading_allowed([str(tmp_path)]):
        inside = RunContext()
        assert files._read_text(str(tmp_path / "a.txt")) == "hi"
    after = RunContext()
    for ctx, may in ((inside, True), (before, False), (after, False)):
        with ctx:
            if may:
                assert files._read_text(str(tmp_path / "a.txt")) == "hi"
            else:
                with pytest.raises(PermissionError, match="reads none"):
                    files._read_text(str(tmp_path / "a.txt"))
    assert state.file_access is None


def test_hooks_and_metadata_live_on_their_objects():
    x = G.ones(2, requires_grad=True)
    y = x * 2
    assert x._meta is None and y.grad_fn.extra is None  # nothing until asked for
    h = y.register_hook(lambda g: g * 3)
    y.grad_fn.metadata["k"] = 1
    assert y.grad_fn.extra.tensor_hooks and y.grad_fn.metadata == {"k": 1}
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
    h.remove()
    assert not y.grad_fn.extra.tensor_hooks[0]


def test_inference_mode_is_a_mark_of_the_context_not_a_swapped_constructor():
    from gradcli.engine.tensor import Tensor

    init = Tensor.__init__
    with inference_mode():
        assert Tensor.__init__ is init
        t = G.ones(2) * 2
    assert t.is_inference() and not G.ones(2).is_inference()
    assert Tensor.__init__ is init

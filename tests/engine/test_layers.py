"""The package's layers: modules import each other top-down only, and never in a circle.

Every module of ``gradcli`` is parsed with :mod:`ast` (nothing is imported), and every import statement counts,
at any depth (inside functions and methods too), absolute or relative; ``from . import x`` counts as an import
of the module ``x`` when there is one, else of the package. From these the test builds the module graph and
fails on

* any cycle (reported with the import statements that close it), and
* any import from a lower layer to a higher one (:data:`LAYERS`).

A lower layer that needs something from a higher one gets it installed from above (the op table installs
Tensor's operators and methods, the engine installs ``Tensor.backward``, the in-place ops install the check of
saved values). Function-local imports remain only to defer heavy or optional dependencies (rich, lark, typer,
numpy.random, resource, signal), and must not go upward either.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gradcli

PACKAGE = Path(gradcli.__file__).parent

#: The layers, bottom first, each a folder of the package (``ops/core`` sits below the rest of ``ops``). A module
#: may import modules of its own layer (without a cycle) and of lower ones. The folder a module is in is its layer.
LAYERS = [
    ("engine", "Tensor, graph nodes, the backward pass, grad modes, run context, dtypes, generator, errors, limits"),
    ("ops.core", "declaring and applying an op, its derivatives in both modes"),
    ("ops", "the op table, by family, and Tensor's operators"),
    ("api", "PyTorch's library namespaces: autograd.functional, func, forward_ad, linalg, nn, optim; the package"),
    ("language", "grammar, program, interpreter, builtins, input specs"),
    ("app", "the application: what a command computes, as a Result"),
    ("render", "tables, JSON, pictures, plots, schemas: the only place that formats output"),
    ("frontends", "the gradcli command, batch and the interactive session"),
]
LAYER_NAMES = [f"{folder}/: {what}" for folder, what in LAYERS]
#: Modules at the package's top level: ``gradcli`` re-exports the library API, ``__main__`` runs the command.
TOP_LEVEL = {"gradcli": "api", "gradcli.__main__": "frontends"}


def module_files(package: Path = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package's ``__init__``) for every ``.py`` file under ``package``."""
    root = package.parent
    mods = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts.pop()
        mods[".".join(parts)] = (path, is_pkg)
    return mods


class Import:
    """One import of a package module by another: where it is and whether it is inside a function."""

    def __init__(self, source: str, target: str, path: Path, line: int, local: bool):
        self.source, self.target, self.path, self.line, self.local = source, target, path, line, local

    def __repr__(self) -> str:
        where = "function-local " if self.local else ""
        return f"{self.source} -> {self.target} ({where}import at {self.path.name}:{self.line})"


def _targets(node, module: str, is_pkg: bool, mods: dict, top: str) -> list[str]:
    """The package modules an Import/ImportFrom node imports."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = module.split(".") if is_pkg else module.split(".")[:-1]
            if node.level > 1:
                base = base[:len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        # ``from pkg import name``: the submodule pkg.name if there is one, else pkg itself
        names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in mods else prefix for a in node.names]
    out = []
    for name in names:
        if name != top and not name.startswith(top + "."):
            continue
        while name not in mods and "." in name:  # ``import gradcli.ops.core.apply.X`` style: the nearest module
            name = name.rsplit(".", 1)[0]
        if name in mods:
            out.append(name)
    return out


def collect_imports(package: Path = PACKAGE) -> tuple[dict, list[Import]]:
    """The package's modules and every import between two of them (at any depth of the code)."""
    mods = module_files(package)
    top = package.name
    imports = []
    for module, (path, is_pkg) in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        # which import nodes are inside a function (or a method)
        local_nodes = set()
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                local_nodes.update(id(n) for n in ast.walk(fn)
                                   if isinstance(n, (ast.Import, ast.ImportFrom)) or lazy_target(n))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets = _targets(node, module, is_pkg, mods, top)
            elif lazy_target(node):
                targets = _targets(ast.Import(names=[ast.alias(name=lazy_target(node))]), module, is_pkg, mods, top)
            else:
                continue
            for target in dict.fromkeys(targets):
                if target != module:
                    imports.append(Import(module, target, path, node.lineno, id(node) in local_nodes))
    return mods, imports


def lazy_target(node) -> str | None:
    """The module a ``lazy("gradcli.x.y")`` call (gradcli.engine.lazy) names, or None for any other node."""
    if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "lazy" and len(node.args) == 1
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.args[0].value
    return None


def find_cycles(modules, imports: list[Import]) -> list[list[Import]]:
    """One cycle (as the list of imports that close it) per strongly connected component of the graph: a
    shortest one through the component's first module (breaking it may leave others: the test runs again)."""
    graph: dict[str, dict[str, Import]] = {m: {} for m in modules}
    for imp in imports:
        graph[imp.source].setdefault(imp.target, imp)
    # Tarjan's strongly connected components, iteratively
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(set(comp))
    cycles = []
    for comp in comps:
        # a shortest way back to the start, inside the component (breadth first)
        start = min(comp)
        prev = {start: None}
        queue = [start]
        found = None
        while queue and found is None:
            v = queue.pop(0)
            for w, imp in graph[v].items():
                if w == start:
                    found = imp
                    break
                if w in comp and w not in prev:
                    prev[w] = imp
                    queue.append(w)
        path = [found]
        while prev[path[0].source] is not None:
            path.insert(0, prev[path[0].source])
        cycles.append(path)
    return cycles


def layer_of(module: str) -> int | None:
    """The layer of ``module`` (an index of :data:`LAYERS`): the folder it is in, the most specific one first;
    None for a module outside every layer's folder."""
    folders = [folder for folder, _ in LAYERS]
    if module in TOP_LEVEL:
        return folders.index(TOP_LEVEL[module])
    rest = module.split(".", 1)[1] if "." in module else ""
    for folder in sorted(folders, key=len, reverse=True):
        if rest == folder or rest.startswith(folder + "."):
            return folders.index(folder)
    return None


# ---------------------------------------------------------------------------------------------- the checks
def test_no_import_cycle():
    mods, imports = collect_imports()
    cycles = find_cycles(mods, imports)
    assert not cycles, "import cycles (one per group of modules that import each other):\n" + "\n".join(
        "  " + " -> ".join([c[0].source] + [i.target for i in c]) + "\n" + "\n".join(f"      {i!r}" for i in c)
        for c in cycles)


def test_imports_go_down_the_layers_only():
    mods, imports = collect_imports()
    unlisted = sorted(m for m in mods if layer_of(m) is None)
    assert not unlisted, f"modules without a layer (add them to LAYERS in {Path(__file__).name}): {unlisted}"
    upward = [i for i in imports if layer_of(i.source) < layer_of(i.target)]
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(
        f"  {i!r}: layer {layer_of(i.source)} ({LAYER_NAMES[layer_of(i.source)]}) imports layer "
        f"{layer_of(i.target)} ({LAYER_NAMES[layer_of(i.target)]})" for i in upward)


def test_every_layer_is_a_folder_and_the_top_level_is_small():
    for folder, _ in LAYERS:
        assert (PACKAGE / folder.replace(".", "/") / "__init__.py").is_file(), folder
    entries = sorted(p.name for p in PACKAGE.iterdir() if p.name != "__pycache__" and not p.name.startswith("."))
    assert len(entries) <= 10, entries
    loose = [p.name for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")]
    assert not loose, f"modules outside the layers' folders: {loose}"


def test_no_imports_by_name_at_runtime():
    # importlib.import_module("gradcli.x") or __import__ would hide an edge from the checks above
    found = []
    for module, (path, _) in module_files().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name in ("import_module", "__import__") or (name == "lazy" and not lazy_target(node)):
                    found.append(f"{path.name}:{node.lineno}")
    assert not found, f"imports by name (lazy() takes a literal module name): {found}"


#: At most this many function-local imports of gradcli's own modules; each says why on its line (a comment).
#: Everything else is imported at the top of its module, or deferred there with gradcli.engine.lazy.lazy().
MAX_LOCAL_IMPORTS = 30


def test_function_local_imports_are_few_and_say_why():
    mods, imports = collect_imports()
    local = {(i.path, i.line) for i in imports if i.local}
    assert len(local) <= MAX_LOCAL_IMPORTS, (
        f"{len(local)} function-local imports of gradcli's own modules (at most {MAX_LOCAL_IMPORTS}; use "
        "gradcli.engine.lazy.lazy() at the module's top):\n" + "\n".join(f"  {p.name}:{n}" for p, n in sorted(local)))
    silent = [f"{p.relative_to(PACKAGE)}:{n}" for p, n in sorted(local) if "#" not in p.read_text().splitlines()[n - 1]]
    assert not silent, f"function-local imports without a reason on their line: {silent}"


def test_lazy_modules_load_on_first_use(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys\nfrom gradcli.engine.lazy import lazy\n"
        "m = lazy('gradcli.app.calculator')\n"
        "print('numpy' in sys.modules)\n"
        "m.GradRequest\n"
        "print('numpy' in sys.modules, lazy('gradcli.app.calculator') is sys.modules['gradcli.app.calculator'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "True"]


def test_the_lower_layers_load_without_the_upper_ones():
    # In a fresh interpreter, the engine's modules import alone: no op, language or command module and none of
    # rich, lark, typer, numpy.random comes with them. (gradcli/__init__ loads the op table, so the package is
    # set up here without running it.)
    import subprocess
    import sys

    code = f"""
import sys, types
pkg = types.ModuleType("gradcli")
pkg.__path__ = [{str(PACKAGE)!r}]
sys.modules["gradcli"] = pkg
import gradcli.engine.autograd, gradcli.engine.anomaly, gradcli.engine.context, gradcli.engine.tensor, gradcli.engine.versions
x = gradcli.engine.tensor.Tensor(gradcli.engine.tensor.to_tensor([1.0]).data, True)
print(sorted(m for m in sys.modules if m.startswith(("gradcli.ops", "gradcli.language", "rich", "lark", "typer",
                                                     "numpy.random", "gradcli.frontends.cli", "gradcli.app.calculator"))))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ------------------------------------------------------------------------------------ the checker itself
def _package(tmp_path: Path, files: dict) -> Path:
    pkg = tmp_path / "pkg"
    for name, text in files.items():
        p = pkg / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return pkg


def test_checker_sees_function_local_relative_and_package_imports(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "def f():\n    from .sub import c\n    return c\n",
        "sub/__init__.py": "",
        "sub/c.py": "import pkg.a\n",
        "d.py": "from .sub import thing\n",
        "e.py": "import numpy\nfrom pkg import d\n",
    })
    mods, imports = collect_imports(pkg)
    edges = {(i.source, i.target, i.local) for i in imports}
    assert edges == {("pkg.a", "pkg.b", False), ("pkg.b", "pkg.sub.c", True), ("pkg.sub.c", "pkg.a", False),
                     ("pkg.d", "pkg.sub", False), ("pkg.e", "pkg.d", False)}
    (cycle,) = find_cycles(mods, imports)
    assert [i.source for i in cycle] == ["pkg.a", "pkg.b", "pkg.sub.c"]
    assert cycle[1].local and cycle[1].line == 2


def test_checker_finds_no_cycle_in_a_tree(tmp_path):
    pkg = _package(tmp_path, {"__init__.py": "from . import a, b\n", "a.py": "from . import b\n", "b.py": ""})
    mods, imports = collect_imports(pkg)
    assert find_cycles(mods, imports) == []


@pytest.mark.parametrize("module, layer", [("gradcli.ops.shape.views", "ops"), ("gradcli.ops.core.apply", "ops.core"),
                                           ("gradcli.language.interpreter", "language"),
                                           ("gradcli.render.table", "render"), ("gradcli", "api"),
                                           ("gradcli.frontends.batch.runner", "frontends"),
                                           ("gradcli.engine", "engine"), ("gradcli.nonexistent", None)])
def test_layer_lookup(module, layer):
    folders = [folder for folder, _ in LAYERS]
    assert layer_of(module) == (None if layer is None else folders.index(layer))

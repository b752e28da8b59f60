"""Count the Python constructs and torch names the corpus programs use (what the language must cover to run them).

    python scripts/corpus_constructs.py            # markdown tables on standard output

gradcli stops at a program's first unsupported construct, so its errors show one reason per program. This
script reads every program in tests/corpus/programs/ with CPython's `ast` (parsing only, nothing runs) and
lists all the constructs and module-level torch names each program uses, so that the work behind the first
error is visible too. FAILURES.md quotes its output.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "corpus" / "programs"


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, (ast.Constant, ast.JoinedStr)) and (
        isinstance(node, ast.JoinedStr) or isinstance(node.value, str))


def constructs(tree: ast.Module, source: str) -> set[str]:
    """The names of the Python language features (lambda, comprehensions, classes, ...) that one program uses."""
    found: set[str] = set()
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and _is_str(body[0].value):
        found.add("module docstring")
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Lambda:
            found.add("lambda")
        elif kind in (ast.ListComp, ast.SetComp):
            found.add("list/set comprehension")
        elif kind is ast.DictComp:
            found.add("dict comprehension")
        elif kind is ast.GeneratorExp:
            found.add("generator expression")
        elif kind is ast.Dict:
            found.add("dict literal")
        elif kind is ast.Compare:
            for op in node.ops:
                if isinstance(op, (ast.Is, ast.IsNot)):
                    found.add("is / is not")
                if isinstance(op, (ast.In, ast.NotIn)):
                    found.add("in / not in")
        elif kind is ast.IfExp:
            found.add("conditional expression")
        elif kind is ast.Starred:
            found.add("star-unpacking")
        elif kind is ast.Delete:
            found.add("del")
        elif kind is ast.Assert:
            found.add("assert")
        elif kind is ast.Try:
            found.add("try/except")
            if node.orelse:
                found.add("try/else")
            if node.finalbody:
                found.add("try/finally")
            if any(h.name for h in node.handlers):
                found.add("except E as e")
        elif kind is ast.Raise:
            found.add("raise")
        elif kind in (ast.Yield, ast.YieldFrom):
            found.add("yield (generators)")
        elif kind in (ast.Global, ast.Nonlocal):
            found.add("global/nonlocal")
        elif kind is ast.ClassDef:
            found.add("class")
            for base in node.bases:
                found.add(f"class inherits {ast.unparse(base)}")
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name.startswith("__") and item.name.endswith("__"):
                    found.add(f"special method {item.name}")
        elif kind is ast.FunctionDef:
            args = node.args
            if args.defaults or args.kw_defaults:
                found.add("default parameters")
            if args.kwonlyargs:
                found.add("keyword-only parameters")
            if args.vararg or args.kwarg:
                found.add("*args / **kwargs")
            for deco in node.decorator_list:
                found.add(f"decorator @{ast.unparse(deco)}")
            if any(isinstance(n, (ast.FunctionDef, ast.Lambda)) for n in ast.walk(node) if n is not node):
                found.add("closure (nested def or lambda)")
        elif kind is ast.FormattedValue:
            if node.format_spec is not None:
                found.add("f-string format spec")
            if node.conversion != -1:
                found.add("f-string conversion (!r/!s)")
            if any(isinstance(n, ast.Slice) for n in ast.walk(node.value)):
                found.add("f-string holding a slice ({w[:, 0]:.4f})")
        elif kind is ast.Call and isinstance(node.func, ast.Name) and node.func.id == "super":
            found.add("super()")
        elif kind is ast.Call and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
                and _is_str(node.func.value):
            found.add("str.format")
        elif kind is ast.BinOp and isinstance(node.op, ast.Mod) and _is_str(node.left):
            found.add("% formatting")
        elif kind is ast.If and isinstance(node.test, ast.Compare) and ast.unparse(node.test.left) == "__name__":
            found.add('if __name__ == "__main__"')
        elif kind is ast.Import:
            for alias in node.names:
                if alias.name != "torch":
                    found.add(f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else ""))
        elif kind is ast.ImportFrom:
            found.add(f"from {node.module} import ..." if len(node.names) == 1
                      else "from-import of several names")
            found.add(f"from {node.module} import ...")
        elif kind is ast.Constant and isinstance(node.value, str) and "\n" in node.value:
            found.add("multi-line string")
        elif kind is ast.With:
            for item in node.items:
                manager = item.context_expr
                callee = manager.func if isinstance(manager, ast.Call) else manager
                found.add(f"with {ast.unparse(callee)}(...)")
    if '"""' in source or "'''" in source:
        found.add("triple-quoted string")
    return found


def torch_names(tree: ast.Module) -> set[str]:
    """Dotted names reached from an imported torch module or name (`torch.nn.Linear`, `F.mse_loss`, `fwAD.make_dual`)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "torch":
                    aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else "torch"
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "torch":
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts = []
            cur: ast.AST = node
            while isinstance(cur, ast.Attribute):
                parts.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id in aliases:
                names.add(".".join([aliases[cur.id], *reversed(parts)]))
        elif isinstance(node, ast.Name) and node.id in aliases and "." in aliases[node.id]:
            names.add(aliases[node.id])
    # keep the longest chains only: torch.nn.Linear implies torch.nn
    return {n for n in names if not any(other.startswith(n + ".") for other in names)}


def main() -> int:
    by_construct: dict[str, list[str]] = defaultdict(list)
    by_name: dict[str, list[str]] = defaultdict(list)
    programs = sorted(PROGRAMS.glob("[0-9][0-9][0-9]_*.py"))
    for path in programs:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
        number = path.name[:3]
        for c in constructs(tree, source):
            by_construct[c].append(number)
        for n in torch_names(tree):
            by_name[n].append(number)

    print(f"Constructs used by the {len(programs)} corpus programs (programs by number):\n")
    print("| construct | programs | which |\n|---|---|---|")
    for c, nums in sorted(by_construct.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"| {c} | {len(nums)} | {' '.join(nums)} |")
    print(f"\ntorch names reached through a module or an imported name:\n")
    print("| name | programs | which |\n|---|---|---|")
    for n, nums in sorted(by_name.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"| `{n}` | {len(nums)} | {' '.join(nums)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

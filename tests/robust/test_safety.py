"""Language safety: a program runs gradcli's language and nothing else.

1. Known ways out of Python sandboxes (``__import__``, ``().__class__.__mro__``, ``getattr``, string-format
   field lookups, f-strings, builtins like ``open``) are each a gradcli error, through the interpreter and the
   CLI, and none of them has an effect.
2. A static check of the package source (Python's ``ast``): no ``eval``/``exec``/``compile``/``__import__``
   calls, no pickle/marshal/shelve (or subprocess/ctypes) imports, no ``getattr``/``setattr``/``hasattr`` with a
   computed name outside a short list of reviewed places, and ``numpy.load``/``read_array`` only with
   ``allow_pickle=False``. The checker is itself tested on code that breaks each rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gradcli as G
from gradcli.frontends.cli import app
from gradcli.engine.errors import GradcliError, GradcliSyntaxError
from gradcli.language.build import build_program
from gradcli.language.attributes import (DICT_METHODS, DTYPE_ATTRS, LIST_METHODS, NODE_ATTRS, SET_METHODS,
                                         STR_METHODS, TENSOR_ATTRS, TUPLE_METHODS)
from gradcli.ops.core.declare import METHODS
from gradcli.language.namespaces import TENSOR_CLASS
from gradcli.language.interpreter import Interpreter
from gradcli.language.values import Function

PACKAGE = Path(G.__file__).resolve().parent
SENTINEL = "/tmp/gradcli-safety-sentinel"

STATIC = [  # Python's internals by name: refused by the builder, before anything runs (exit 2)
    "__import__('os')", "__import__('os').system('touch " + SENTINEL + "')", "__builtins__",
    "x.__class__", "x.__class__.__mro__", "().__class__", "().__class__.__bases__[0].__subclasses__()",
    "[].__class__.__base__", "''.__class__.__mro__[1].__subclasses__()", "print.__globals__", "F.__dict__",
    "torch.__dict__", "x.backward.__func__", "torch.autograd.grad.__code__",
    "(x * 2).grad_fn.__class__", "x.dtype.__class__",
    "f'{x.__class__}'", "f'{__import__(\"os\")}'", "f'{().__class__.__mro__}'",
    "def f(__a):\n    return __a", "import torch as __t", "from torch import __file__", "f(__x=1)",
    # classes: the special methods are definable and callable; Python's object model is not
    "class A:\n    pass\nA.__dict__", "class A:\n    pass\nA().__class__", "class A:\n    pass\nA.__mro__",
    "class A:\n    def __getattribute__(self, n):\n        return 1", "class A:\n    __slots__ = ()",
    "class A:\n    pass\nA.__subclasses__()", "def f():\n    pass\nf.__code__", "def f():\n    pass\nf.__globals__",
]
RUNTIME = [
    # Python's builtins and reflection: not in the language (exit 1)
    "getattr(x, '__class__')", "getattr(x, 'data')", "setattr(x, 'requires_grad', False)", "globals()",
    "locals()", "vars(x)", "dir(x)", "type(x)", "open('" + SENTINEL + "', 'w')", "eval('1')", "exec('1')",
    "compile('1', 'f', 'eval')", "breakpoint()", "input()", "exit()", "quit()", "help()", "memoryview(b'')",
    "import os", "from os import system", "import subprocess", "import torch.os", "from torch import os",
    "import torch.nn.functional.os",
    # string-formatting field lookups: str.format is not there, %-format has no attribute access
    "'{0.__class__}'.format(x)", "'{.__class__}'.format(x)", "'{0.grad_fn}'.format(x)", "'%(a)s' % x",
    "'{a.__class__}'.format_map({'a': x})", "''.join.__self__", "'a'.encode()", "'a'.maketrans('a', 'b')",
    # attributes outside the allow-lists
    "x.grad_fn", "(x * 2).grad_fn.op", "(x * 2).grad_fn.saved", "(x * 2).grad_fn.edges", "x.dtype.np",
    "x.numpy().ctypes", "x.detach().numpy().tofile('" + SENTINEL + "')", "x.data.base", "[].copy()", "[].sort()",
    "torch.nn.functional.F", "torch.Size.index", "x.shape.count(1)",
    # syntax Python has and the language does not (yield, async def); comprehensions and lambdas are the
    # language's own (LEGITIMATE below)
    "lambda: 1", "[c for c in 'ab']", "x = yield 1", "async def f():\n    pass",
    # names with one leading underscore (and the special methods) are syntax, for classes: gradcli's own
    # objects refuse them when the program runs
    "x._grad", "x.grad_fn._sequence", "torch.Tensor.__init__", "no_grad.__enter__", "import os.__init__",
    "(lambda: 1)._scope", "class A:\n    pass\nA()._x", "class A:\n    def __init__(self):\n        pass\n"
    "A.__init__.__name__.__class__",
    # classes, decorators, global and __name__: the language's own, and their values are the language's
    "class A:\n    pass", "@no_grad\ndef f():\n    return 1", "global x", "__name__",
    "def __init__(a):\n    return a",
]
ESCAPES = STATIC + RUNTIME
# Programs of ESCAPES that are legitimate language, and the plain data they return.
LEGITIMATE = {"x.grad_fn": None, "type(x)": TENSOR_CLASS, "[c for c in 'ab']": ["a", "b"], "class A:\n    pass": None,
              "@no_grad\ndef f():\n    return 1": None, "global x": None, "__name__": "__main__",
              "def __init__(a):\n    return a": None,
              # the names a program may read of a tensor: its attributes and methods, none of Python's internals
              # Python's container methods that build plain values
              "'a'.maketrans('a', 'b')": {97: 98}, "[].copy()": [], "[].sort()": None,
              "dir(x)": sorted(n for n in set(TENSOR_ATTRS) | set(METHODS) if not n.startswith("_") or n == "_version")}


@pytest.mark.parametrize("program", ESCAPES)
def test_escape_attempts_are_language_errors(program):
    x = G.ones(2, requires_grad=True)
    it = Interpreter(write=lambda s: None)
    it.globals["x"] = x
    try:
        value = it.run(build_program(program))
    except GradcliError as e:
        assert e.type and e.message
        if program in STATIC:
            assert isinstance(e, GradcliSyntaxError) and e.exit_code == 2  # refused before running
            assert "gradcli does not allow" in e.message
    else:
        # a few are legitimate language: reading x.grad_fn (None for a leaf) is allowed, and returns data only
        if program == "lambda: 1":  # the language's own function object, nothing of Python's
            assert isinstance(value, Function) and repr(value).startswith("<function <lambda> at 0x")
        else:
            assert program in LEGITIMATE and value == LEGITIMATE[program]
    assert not Path(SENTINEL).exists()


def test_an_unbound_tensor_method_is_pytorch_s_and_only_that():
    # torch.Tensor.add(x, 1) is PyTorch's unbound method: it computes, and its dunders stay out of reach
    it = Interpreter(write=lambda s: None)
    it.globals["x"] = G.ones(2)
    assert it.run(build_program("torch.Tensor.add(x, 1)")).tolist() == [2.0, 2.0]
    with pytest.raises(GradcliError):
        it.run(build_program("torch.Tensor.add.__globals__"))


@pytest.mark.parametrize("program", [p for p in ESCAPES if p != "x.grad_fn"][::4])
def test_escape_attempts_through_the_cli_exit_cleanly(program):
    r = CliRunner().invoke(app, ["grad", "-i", "x=[1., 2.]", "--", program])
    assert r.exit_code in (1, 2), r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert "Traceback" not in r.stderr and r.stdout == ""
    assert not Path(SENTINEL).exists()


def test_attribute_tables_name_only_public_members_that_exist():
    x = G.ones(2, 2, requires_grad=True)
    y = x * 2
    for table, obj in [(TENSOR_ATTRS, y), (NODE_ATTRS, y.grad_fn), (DTYPE_ATTRS, x.dtype), (STR_METHODS, "a b"),
                       (LIST_METHODS, [1]), (DICT_METHODS, {1: 2}), (SET_METHODS, {1}), (TUPLE_METHODS, (1,))]:
        for name, accessor in table.items():
            assert not name.startswith("_") or (table is TENSOR_ATTRS and name in ("_version", "_base", "_is_view"))
            if accessor is not None and not (table is NODE_ATTRS and name == "variable"):
                # every entry reaches a real member (grad_dtype: of a leaf only, as PyTorch says)
                accessor(x if (table is TENSOR_ATTRS and name == "grad_dtype") else obj)


# ------------------------------------------------------------------------------------ the source check
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "breakpoint"}
FORBIDDEN_MODULES = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "cloudpickle", "joblib",
                     "subprocess", "ctypes"}
DYNAMIC_ATTR_CALLS = {"getattr", "setattr", "delattr", "hasattr"}
FORBIDDEN_ATTRIBUTES = {"__globals__", "__builtins__", "__subclasses__", "__code__", "__getattribute__"}
# Computed attribute names that were reviewed: (file relative to the package, enclosing function or "<module>").
REVIEWED_DYNAMIC_ATTRS = {
    ("engine/context.py", "_load"): "the run context's values, named by the fixed _Active.SWAPPED tuple",
    ("engine/context.py", "_store"): "the run context's values, named by the fixed _Active.SWAPPED tuple",
    ("engine/context.py", "_value"): "one of the run context's values, named by the fixed _Active.SWAPPED tuple",
    ("engine/context.py", "_set_value"): "one of the run context's values, named by the fixed _Active.SWAPPED tuple",
    ("engine/context.py", "_make_root"): "the root context's defaults, named by the fixed _Active.SWAPPED tuple",
    ("engine/hooks.py", "register"): "the hook table of a graph node, one of the fixed names its registrars pass",
    ("ops/core/declare.py", "__init__"): "the defjvp_<kind> method of a forward-mode kind the declaration names "
                                         "(one of JVP_KINDS)",
    ("ops/core/declare.py", "defvjp"): "the defjvp_<kind> method of the forward-mode kind the declaration named",
    ("api/func.py", "__getattr__"): "vmap's randomness guard forwards reads to the engine Generator it wraps "
                                    "(gradcli code only: programs read attributes through the language's tables)",
    ("ops/core/declare.py", "install_method"): "installs op-table methods on Tensor at import time",
    ("frontends/session/core.py", "command"): "calls the cmd_* method that the session's fixed COMMANDS table names",
    ("render/registry.py", "shows"): "whether a renderer class overrides one of the fixed KINDS methods",
    ("render/table.py", "__getattr__"): "the output-stream wrapper forwards reads to the stream it wraps (gradcli's)",
    ("ops/operators.py", "install_operators"): "installs Python's operator methods on Tensor at import time",
    ("language/build.py", "<module>"): "defines the builder's binary-operator methods at import time",
    ("engine/lazy.py", "lazy"): "binds a lazy module on its parent package, as the import system does",
    ("language/nodes.py", "max_depth"): "reads the fields of gradcli's own program nodes",
    ("language/nodes.py", "__init__"): "sets the fields of gradcli's own program nodes (their class's _fields)",
    ("language/build.py", "_number_consts"): "reads the fields of gradcli's own program nodes",
    # torch.nn glue: reads go through each class's program_attributes allow-list and never a name
    # starting with "_"; writes register parameters/modules as PyTorch's Module.__setattr__ does, refusing "_"
    # names and the class's methods; the namespaces list names from init.NAMES/utils.NAMES
    ("language/nn_bridge.py", "module_attribute"): "a module's program_attributes (allow-list), no '_' names",
    ("language/nn_bridge.py", "object_attribute"): "an optimizer's/scheduler's/handle's program_attributes",
    ("language/nn_bridge.py", "set_module_attribute"): "Module.__setattr__: no '_' names, no method names",
    ("language/nn_bridge.py", "set_instance_attribute"): "registers a Parameter/module on a program's module",
    ("language/nn_bridge.py", "namespaces"): "torch.nn.init/utils members from their NAMES lists",
    ("language/attributes.py", "_library_attribute"): "a torch class's own static_attributes allow-list "
                                                      "(nn.Transformer.generate_square_subsequent_mask)",
}


def _literal_str(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def check_source(source: str, filename: str) -> list[str]:
    """Problems found in one file's source: ``"file:line: what"`` strings."""
    tree = ast.parse(source, filename)
    problems = []

    def walk(node, func):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            check(child, inner)
            walk(child, inner)

    def report(node, what):
        problems.append(f"{filename}:{node.lineno}: {what}")

    def check(node, func):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else None
            if name in FORBIDDEN_CALLS or (isinstance(f, ast.Attribute) and f.attr in FORBIDDEN_CALLS
                                           and isinstance(f.value, ast.Name) and f.value.id == "builtins"):
                report(node, f"calls {name or f.attr}()")
            if name in DYNAMIC_ATTR_CALLS and (len(node.args) < 2 or not _literal_str(node.args[1])):
                if (filename, func) not in REVIEWED_DYNAMIC_ATTRS:
                    report(node, f"{name}() with a computed attribute name (in {func})")
            if isinstance(f, ast.Attribute) and f.attr == "attrgetter":
                if not all(_literal_str(a) for a in node.args):
                    report(node, "operator.attrgetter() with a computed name")
            is_np_load = isinstance(f, ast.Attribute) and f.attr == "load" and isinstance(f.value, ast.Name) \
                and f.value.id in ("np", "numpy")
            if is_np_load or (isinstance(f, ast.Attribute) and f.attr == "read_array") or name == "read_array":
                ok = any(k.arg == "allow_pickle" and isinstance(k.value, ast.Constant) and k.value.value is False
                         for k in node.keywords)
                if not ok:
                    report(node, f"{f.attr if isinstance(f, ast.Attribute) else name}() without allow_pickle=False")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in FORBIDDEN_MODULES:
                    report(node, f"imports {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] in FORBIDDEN_MODULES:
                report(node, f"imports from {node.module}")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES:
            report(node, f"uses .{node.attr}")

    walk(tree, "<module>")
    return problems


def test_package_source_has_no_code_execution_paths():
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 10
    problems = []
    for path in files:
        problems += check_source(path.read_text(encoding="utf-8"), path.relative_to(PACKAGE).as_posix())
    assert problems == []


def test_limits_dataclass_has_every_limit():
    from gradcli.engine import limits

    assert list(limits.Limits().as_dict()) == list(limits.SPECS)


def test_reviewed_dynamic_attribute_sites_still_exist():
    # a stale entry would let a new computed getattr in the same place pass unreviewed
    for (file, func) in REVIEWED_DYNAMIC_ATTRS:
        source = (PACKAGE / file).read_text(encoding="utf-8")
        assert func == "<module>" or f"def {func}(" in source, (file, func)


BAD = '''
import pickle
from marshal import loads
import subprocess as sp
x = eval("1")
exec("x = 1")
code = compile("1", "f", "eval")
os = __import__("os")
import builtins
builtins.eval("2")
name = "a"
getattr(x, name)
setattr(x, name, 1)
hasattr(x, name)
import numpy as np
np.load("a.npy")
np.load("a.npy", allow_pickle=True)
np.lib.format.read_array(f)
g = print.__globals__
import operator
operator.attrgetter(name)
def fine():
    return getattr(x, "literal"), np.load("a.npy", allow_pickle=False), re.compile("x")
'''


def test_the_source_check_finds_each_forbidden_pattern():
    problems = check_source(BAD, "bad.py")
    expected = ["imports pickle", "imports from marshal", "imports subprocess", "calls eval()", "calls exec()",
                "calls compile()", "calls __import__()", "calls eval()", "getattr() with a computed",
                "setattr() with a computed", "hasattr() with a computed", "load() without allow_pickle=False",
                "load() without allow_pickle=False", "read_array() without allow_pickle=False", "uses .__globals__",
                "operator.attrgetter() with a computed name"]
    assert len(problems) == len(expected), problems
    for p, e in zip(problems, expected):
        assert e in p, (p, e)


def test_a_modules_eval_is_the_training_switch_and_runs_no_text(tmp_path):
    # nn.Module.eval() is PyTorch's mode switch (train(False)), reachable by name from every program; it takes
    # no argument, so a text handed to it is PyTorch's TypeError and is never evaluated
    program = tmp_path / "model.py"
    program.write_text("import torch\nfrom torch import nn\nm = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))\n"
                       "print(m.eval() is m, m.training, m[1].training)\n"
                       f"m.eval(\"__import__('os').system('touch {SENTINEL}')\")\n")
    r = CliRunner().invoke(app, ["run", str(program)])
    assert r.exit_code == 1 and r.stdout == "True False False\n"
    assert "TypeError: Module.eval() takes 1 positional argument but 2 were given" in r.stderr
    assert "Traceback" not in r.stderr and not Path(SENTINEL).exists()

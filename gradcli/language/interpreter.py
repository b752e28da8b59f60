"""The interpreter: runs a program (:mod:`.nodes`) on the engine.

Only this language runs: values are Tensors, Python numbers, strings, None, lists/tuples/sets, user
functions, and the namespaces ``torch``/``F``. No Python ``eval``/``exec``; attributes are reachable only
through the allow-lists below (the tensor API, a grad_fn's ``name``/``next_functions``), never dunder names.
Engine exceptions become :class:`~gradcli.errors.EvalError` with the position of the expression that failed,
keeping PyTorch's type name and message. Runaway programs end with a clear error before they exhaust the
machine (:mod:`gradcli.limits`): statement executions, function-call depth, the bits of Python integers, the
items of Python lists, tuples and strings (``[0] * n``, ``s + s``, ``list(range(n))``, ``str.replace``), and
the autograd nodes a run records.

Attribute access goes through explicit tables of accessors (no ``getattr`` with a name from the program), and
the builder already refused names starting with ``__`` and attributes starting with ``_``.
"""

from __future__ import annotations

import builtins as _py
import itertools
import operator
import re
import sys
import types
import warnings
from contextlib import contextmanager

import numpy as np

from .. import anomaly, autograd, dtypes, limits
from ..errors import EvalError, GradcliError
from ..ops import REGISTRY
from ..ops import inplace
from ..ops._core import METHODS
from ..tensor import Size, Tensor
from . import nodes as n

DEFAULT_MAX_STEPS = limits.SPECS["steps"].default
DEFAULT_MAX_DEPTH = limits.SPECS["call_depth"].default
# Python's recursion limit while a program runs: each level of a program (an expression, a call of a program
# function) takes a few Python frames; deeper nesting ends in a RecursionError, reported as a gradcli error,
# well before the C stack could overflow.
RECURSION_LIMIT = 20_000


class Namespace:
    """A module-like namespace of the language (``torch``, ``torch.nn.functional``)."""

    __slots__ = ("name", "members")

    def __init__(self, name: str, members: dict):
        self.name = name
        self.members = members

    def __repr__(self) -> str:
        return f"<module '{self.name}'>"


class Function:
    """A function defined in a program with ``def``."""

    __slots__ = ("name", "params", "body", "defaults")

    def __init__(self, name, params, body, defaults):
        self.name = name
        self.params = params
        self.body = body
        self.defaults = defaults

    def __repr__(self) -> str:
        return f"<function {self.name} at {id(self):#x}>"


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def _tolist(t: Tensor):
    def tolist():
        limits.check_items(t.data.size, "tolist()")
        return t.tolist()

    return tolist


def _str_join(sep: str):
    def join(iterable):
        items = _materialize(iterable, "str.join()")
        limits.check_items(sum(len(s) if isinstance(s, str) else 0 for s in items) + len(sep) * len(items),
                           "str.join()")
        return sep.join(items)

    return join


def _str_replace(s: str):
    def replace(old, new, count=-1):
        if isinstance(old, str) and isinstance(new, str) and isinstance(count, int):
            hits = len(s) + 1 if old == "" else s.count(old)
            if count >= 0:
                hits = _py.min(hits, count)
            limits.check_items(len(s) + hits * (len(new) - len(old)), "str.replace()")
        return s.replace(old, new, count)

    return replace


# The attributes the language may read, one accessor each (written out: no getattr with a program's name).
# Tensor methods of the op table (METHODS) are added by _tensor_member.
TENSOR_ATTRS = {
    "shape": lambda t: t.shape, "dtype": lambda t: t.dtype, "ndim": lambda t: t.ndim,
    "grad_fn": lambda t: t.grad_fn, "output_nr": lambda t: t.output_nr, "requires_grad": lambda t: t.requires_grad, "is_leaf": lambda t: t.is_leaf,
    "data": lambda t: t.detach(), "T": lambda t: t.T, "mT": lambda t: t.mT, "backward": lambda t: t.backward,
    "detach": lambda t: t.detach, "detach_": lambda t: t.detach_, "requires_grad_": lambda t: t.requires_grad_,
    "retain_grad": lambda t: t.retain_grad, "retains_grad": lambda t: t.retains_grad, "zero_": lambda t: t.zero_,
    "item": lambda t: t.item, "tolist": _tolist, "size": lambda t: t.size, "dim": lambda t: t.dim,
    "numel": lambda t: t.numel, "is_floating_point": lambda t: t.is_floating_point, "numpy": lambda t: t.numpy,
    "grad": None,  # read with its warning, in get_attribute
}
NODE_ATTRS = {"name": lambda f: (lambda: autograd.torch_name(f)), "next_functions": lambda f: f.next_functions,
              "variable": lambda f: f.variable}
DTYPE_ATTRS = {"is_floating_point": lambda d: d.is_floating_point, "itemsize": lambda d: d.itemsize}
STR_METHODS = {"upper": lambda s: s.upper, "lower": lambda s: s.lower, "strip": lambda s: s.strip,
               "split": lambda s: s.split, "join": _str_join, "replace": _str_replace,
               "startswith": lambda s: s.startswith, "endswith": lambda s: s.endswith}
LIST_METHODS = {"append": lambda v: v.append, "pop": lambda v: v.pop, "index": lambda v: v.index,
                "count": lambda v: v.count}


def _tensor_member(t: Tensor, name: str):
    """An op-table method of Tensor (``x.sum``, ``x.pow``) bound to ``t``, or None if ``name`` is not one. Looked
    up in the class's own namespace, among the names the op table installed."""
    if name not in METHODS:
        return None
    member = vars(Tensor).get(name)
    if isinstance(member, property):
        return member.fget(t)
    if isinstance(member, types.FunctionType):
        return types.MethodType(member, t)
    return None


def _type_name(v) -> str:
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, Function):
        return "function"
    if isinstance(v, Namespace):
        return "module"
    return type(v).__name__


# ----------------------------------------------------------------------------------------------- builtins
def _print_factory(interp):
    def print_(*args, sep=" ", end="\n"):
        from ..printing import format_value

        default = dtypes.get_default_dtype().np
        text = (sep if sep is not None else " ").join(
            a if isinstance(a, str) else format_value(a, default_dtype=default) for a in args)
        interp.write(text + (end if end is not None else "\n"))

    return print_


def _len(x):
    return len(x)


def _materialize(iterable, what: str) -> list:
    """The items of ``iterable`` as a list, refusing more than the ``items`` limit before building it (a
    ``range`` or a tensor by its length, an iterator by reading one item past the limit)."""
    try:
        size = len(iterable)
    except OverflowError:  # len(range(10 ** 30))
        raise limits.exceeded("items", f"{what} would have more than {sys.maxsize:,} items") from None
    except TypeError:
        size = None
    if size is not None:
        limits.check_items(size, what)
        return list(iterable)
    out = list(itertools.islice(iterable, limits.current.items + 1))
    if len(out) > limits.current.items:
        raise limits.exceeded("items", f"{what} would have more than {limits.current.items:,} items")
    return out


def _list(iterable=()):
    return _materialize(iterable, "list()")


def _tuple(iterable=()):
    return tuple(_materialize(iterable, "tuple()"))


def _range(*args):
    ints = [int(a) if isinstance(a, Tensor) else a for a in args]
    for a in ints:
        if not isinstance(a, int) or isinstance(a, bool):
            raise TypeError(f"'{_type_name(a)}' object cannot be interpreted as an integer")
    return range(*ints)


def _poly(torch_name, py_fn, iterates=False):
    """A builtin that is PyTorch's op for tensors and Python's function otherwise (max, min, sum, abs).
    ``iterates``: Python's form may take one iterable, read within the ``items`` limit."""
    def fn(*args, **kwargs):
        if args and isinstance(args[0], Tensor):
            return REGISTRY[torch_name](*args, **kwargs)
        if iterates and args and not isinstance(args[0], (int, float, complex)):
            args = (_materialize(args[0], f"{torch_name}()"),) + args[1:]
            if torch_name == "sum" and len(args) > 1 and isinstance(args[1], (str, list, tuple)):
                raise TypeError("sum() adds numbers and tensors in gradcli; join sequences with +")
        return py_fn(*args, **kwargs)

    fn.__name__ = torch_name
    return fn


def _float(x=0.0):
    return float(x)


def _int(x=0):
    return int(x)


def _bool(x=False):
    return bool(x)


def _str(x=""):
    from ..printing import format_value

    return x if isinstance(x, str) else format_value(x, default_dtype=dtypes.get_default_dtype().np)


def _round(x, ndigits=None):
    if type(ndigits) is int and ndigits < 0 and isinstance(x, int):
        limits.check_int_bits(int(-ndigits * 3.33), f"round(..., {ndigits})")  # Python computes 10 ** -ndigits
    return round(x) if ndigits is None else round(x, ndigits)


def _torch_tensor_constructor(*args):
    """``torch.Tensor(data)`` or ``torch.Tensor(*sizes)``: PyTorch's legacy constructor, always of the default
    float dtype (sizes give zeros where PyTorch leaves memory uninitialized)."""
    if not args:
        return REGISTRY["zeros"](0)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return REGISTRY["zeros"](*args)
    if len(args) > 1:
        raise TypeError("Tensor(): expected sizes (ints) or one sequence of data")
    return REGISTRY["tensor"](args[0], dtype=dtypes.get_default_dtype())


BUILTIN_NAMES = ("print", "len", "range", "abs", "min", "max", "sum", "float", "int", "bool", "str", "round",
                 "list", "tuple", "enumerate", "zip")


def _namespaces():
    members = dict((k, v) for k, v in REGISTRY.items() if not k.startswith("_"))
    members.update({name: d for name, d in dtypes.NAMES.items()})
    members.update({
        "no_grad": autograd.no_grad, "enable_grad": autograd.enable_grad,
        "set_grad_enabled": autograd.set_grad_enabled, "is_grad_enabled": autograd.is_grad_enabled,
        "Tensor": _torch_tensor_constructor, "Size": Size, "get_default_dtype": dtypes.get_default_dtype,
    })
    functional = Namespace("torch.nn.functional", members)
    nn = Namespace("torch.nn", {"functional": functional})
    autograd_ns = Namespace("torch.autograd", {"grad": autograd.grad, "backward": autograd.backward})
    torch = Namespace("torch", dict(members, nn=nn, autograd=autograd_ns))
    return torch, functional


_OPERATORS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "matmul": operator.matmul, "pow": operator.pow,
    "bitor": operator.or_, "bitxor": operator.xor, "bitand": operator.and_,
}
_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
            "!=": operator.ne}
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "mod": "%", "matmul": "@",
            "pow": "**", "bitor": "|", "bitxor": "^", "bitand": "&"}
_ALLOWED_MODULES = {"torch", "torch.nn", "torch.nn.functional", "torch.autograd"}


def _missing(owner: str, name: str) -> Exception:
    """The error for ``owner.name`` that gradcli does not have: NotImplementedError naming it when PyTorch has
    it (gradcli/torch_names.py), else the AttributeError PyTorch would raise."""
    from .. import torch_names

    known = {"torch": torch_names.TORCH, "torch.nn.functional": torch_names.FUNCTIONAL,
             "Tensor": torch_names.TENSOR}.get(owner, ())
    if name in known:
        return NotImplementedError(f"'{owner}.{name}' is not supported by gradcli (run `gradcli ops` for the "
                                   "supported ops)")
    if owner == "Tensor":
        return AttributeError(f"'Tensor' object has no attribute '{name}'")
    return AttributeError(f"module '{owner}' has no attribute '{name}'")


class Interpreter:
    """Runs programs against one global environment.

    Args:
        write: where ``print`` output goes (a function taking a string); default: standard output.
        warn: where warnings go (a function taking a string); default: standard error.
        max_steps: the most statement executions before the run is stopped (``--max-steps``).
        max_depth: the deepest nesting of calls to user functions.

    Attributes:
        globals: the program's variables (name → value).
    """

    def __init__(self, *, write=None, warn=None, max_steps: int | None = None, max_depth: int | None = None):
        self.write = write or (lambda s: sys.stdout.write(s))
        self.warn = warn or (lambda s: sys.stderr.write(s))
        self.max_steps = limits.current.steps if max_steps is None else max_steps
        self.max_depth = limits.current.call_depth if max_depth is None else max_depth
        self.steps = 0
        self.depth = 0
        self.program = None
        self.warned: set = set()
        torch, functional = _namespaces()
        self.modules = {"torch": torch, "torch.nn": torch.members["nn"], "torch.nn.functional": functional,
                        "torch.autograd": torch.members["autograd"]}
        self.builtins = {k: v for k, v in REGISTRY.items() if not k.startswith("_")}
        self.builtins.update({
            "print": _print_factory(self), "len": _len, "range": _range, "abs": _poly("abs", _py.abs),
            "min": _poly("min", _py.min, True), "max": _poly("max", _py.max, True),
            "sum": _poly("sum", _py.sum, True),
            "float": _float, "int": _int, "bool": _bool, "str": _str, "round": _round, "list": _list,
            "tuple": _tuple, "enumerate": enumerate, "zip": zip,
            "torch": torch, "F": functional, "no_grad": autograd.no_grad, "enable_grad": autograd.enable_grad,
        })
        self.globals: dict = {}

    # ---------------------------------------------------------------------------------------- running
    def run(self, program: n.Program):
        """Run every statement of ``program``; returns the value of the last top-level statement if it is an
        expression or an assignment (the program's output), else None.

        Raises:
            EvalError: for any error while running, with the position of the failing expression.
            LimitError: when the program reaches a limit (steps, call depth, graph nodes, elements, ...).
        """
        last = None
        with self.running(program):
            for stmt in program.body:
                last = self.exec_top(stmt)
        return last

    @contextmanager
    def running(self, program: n.Program):
        """Make ``program`` the current one (for error positions and warnings) while its top-level statements
        are run one by one with :meth:`exec_top`, and give Python's stack room for ``max_depth`` calls."""
        self.program = program
        # Each call of a program function takes several Python frames; max_depth bounds the program's own
        # nesting, and this limit leaves room for it (a RecursionError that still happens is reported).
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old_limit, min(12 * self.max_depth + 2000, RECURSION_LIMIT)))
        autograd.start_node_budget(limits.current.graph_nodes)
        if anomaly.enabled():
            self.eval_expr = self._eval_recording_positions
        try:
            yield self
        finally:
            autograd.stop_node_budget()
            sys.setrecursionlimit(old_limit)
            self.__dict__.pop("eval_expr", None)

    def _eval_recording_positions(self, e, env):
        # --anomaly: the graph nodes this expression creates remember where it is in the source, so that a
        # backward that produces NaN/inf can name it (innermost expression first: nested calls tag their own).
        mark = anomaly.mark()
        value = Interpreter.eval_expr(self, e, env)
        if isinstance(value, Tensor) and value.grad_fn is not None:
            anomaly.tag(value.grad_fn, mark, self._where(e))
        return value

    def exec_top(self, stmt):
        """Run one top-level statement (inside :meth:`running`); returns its value (the value of an expression
        statement, the assigned value of ``name = ...``) or None.

        Raises:
            EvalError: for any error while running it, with the position of the failing expression.
        """
        try:
            if isinstance(stmt, n.ExprStmt):
                self.step(stmt)
                return self.eval_expr(stmt.value, self.globals)
            self.exec_stmt(stmt, self.globals)
            if isinstance(stmt, n.Assign) and isinstance(stmt.target, n.Name):
                return self.globals.get(stmt.target.id)
            return None
        except _Return:
            raise self.error(SyntaxError("'return' outside function"), stmt) from None
        except (_Break, _Continue):
            raise self.error(SyntaxError("'break' outside loop"), stmt) from None
        except RecursionError:
            raise self.error(RecursionError("maximum recursion depth exceeded (the program nests calls or "
                                            "expressions too deeply)"), stmt) from None
        except MemoryError as exc:
            raise limits.memory_error(exc).with_position(**self._where(stmt)) from None
        except GradcliError as exc:  # e.g. the time limit, wherever it struck
            raise self.error(exc, stmt) from None

    def step(self, node):
        self.steps += 1
        if self.steps > self.max_steps:
            err = limits.exceeded("steps", f"the program ran more than {self.max_steps:,} statements",
                                  self.max_steps)
            err.type = "StepLimitError"  # a LimitError; the name says which limit stopped the program
            err.hint += " (or --max-steps N)"
            raise err.with_position(**self._where(node))

    def _where(self, node):
        p = self.program
        return dict(line=node.line, column=node.col, source=p.source if p else None,
                    filename=p.filename if p else None)

    def warning(self, category: str, message: str, node) -> None:
        """Write a warning raised at ``node`` as Python's warnings module does by default: once per source
        line and message, as ``file:line: Category: message`` and the source line indented by two spaces."""
        key = (node.line, category, message)
        if key in self.warned:
            return
        self.warned.add(key)
        p = self.program
        if p is None:
            self.warn(f"{category}: {message}\n")
            return
        lines = p.source.splitlines()
        source = lines[node.line - 1].strip() if 1 <= node.line <= len(lines) else ""
        self.warn(f"{p.filename}:{node.line}: {category}: {message}\n" + (f"  {source}\n" if source else ""))

    def error(self, exc: BaseException, node) -> GradcliError:
        """Wrap a Python exception raised while evaluating ``node`` as an EvalError at its position."""
        if isinstance(exc, GradcliError):
            return exc.with_position(**self._where(node))
        return EvalError.from_exception(exc).with_position(**self._where(node))

    # ------------------------------------------------------------------------------------- statements
    def exec_block(self, body, env):
        for stmt in body:
            self.exec_stmt(stmt, env)

    def exec_stmt(self, s, env):
        self.step(s)
        t = type(s)
        if t is n.ExprStmt:
            self.eval_expr(s.value, env)
        elif t is n.Assign:
            self.assign(s.target, self.eval_expr(s.value, env), env)
        elif t is n.AugAssign:
            current = self.eval_expr(s.target, env)
            value = self.eval_expr(s.value, env)
            mark = anomaly.mark() if anomaly.enabled() else None
            result = None
            if type(current) is Tensor:  # t += v on a tensor is in place, as in PyTorch (Tensor.__iadd__)
                try:
                    result = inplace.augmented(s.op, current, value)
                except Exception as exc:
                    raise self.error(exc, s) from None
            elif type(current) is list and s.op in ("add", "mul"):
                result = self.list_inplace(s.op, current, value, s)  # Python's list.__iadd__/__imul__
            if result is None:
                result = self.binop(s.op, current, value, s)
            if mark is not None and isinstance(result, Tensor) and result.grad_fn is not None:
                anomaly.tag(result.grad_fn, mark, self._where(s))
            if not (result is current and type(s.target) is n.Attribute and s.target.attr == "data"):
                self.assign(s.target, result, env)  # (``w.data -= ...`` wrote into w: nothing to rebind)
        elif t is n.If:
            for test, body in s.branches:
                if self.truth(self.eval_expr(test, env), test):
                    self.exec_block(body, env)
                    return
            if s.orelse:
                self.exec_block(s.orelse, env)
        elif t is n.While:
            while self.truth(self.eval_expr(s.test, env), s.test):
                if not self.loop_body(s.body, env):
                    break
                self.step(s)
        elif t is n.For:
            iterable = self.eval_expr(s.iter, env)
            try:
                it = iter(iterable)
            except TypeError as e:
                raise self.error(e, s.iter) from None
            for item in it:
                self.assign(s.target, item, env)
                if not self.loop_body(s.body, env):
                    break
        elif t is n.FunctionDef:
            defaults = [None if d is None else self.eval_expr(d, env) for _, d in s.params]
            env[s.name] = Function(s.name, s.params, s.body, defaults)
        elif t is n.Return:
            raise _Return(None if s.value is None else self.eval_expr(s.value, env))
        elif t is n.With:
            ctx = self.eval_expr(s.context, env)
            if not isinstance(ctx, (autograd.no_grad, autograd.enable_grad)):
                raise self.error(TypeError(f"'{_type_name(ctx)}' object does not support the context manager "
                                           "protocol (gradcli supports torch.no_grad() and torch.enable_grad())"),
                                 s.context)
            value = ctx.__enter__()
            try:
                if s.alias:
                    env[s.alias] = value
                self.exec_block(s.body, env)
            finally:
                ctx.__exit__(None, None, None)
        elif t is n.Import:
            self.do_import(s, env)
        elif t is n.Pass:
            pass
        elif t is n.Break:
            raise _Break()
        elif t is n.Continue:
            raise _Continue()
        else:  # pragma: no cover - the builder makes no other statements
            raise AssertionError(f"unknown statement {t.__name__}")

    def loop_body(self, body, env) -> bool:
        """Run one iteration of a loop body; False after ``break``."""
        try:
            self.exec_block(body, env)
        except _Break:
            return False
        except _Continue:
            pass
        return True

    def do_import(self, s: n.Import, env):
        module = s.module
        if s.name is not None:
            full = f"{module}.{s.name}"
            if full in self.modules:
                env[s.alias or s.name] = self.modules[full]
                return
            if module in self.modules and s.name in self.modules[module].members:
                env[s.alias or s.name] = self.modules[module].members[s.name]
                return
            raise self.error(ImportError(f"cannot import name '{s.name}' from '{module}' (gradcli provides "
                                         "torch, torch.nn.functional and torch.autograd)"), s)
        if module not in self.modules:
            raise self.error(ModuleNotFoundError(f"No module named '{module}' (gradcli programs can import "
                                                 "torch, torch.nn.functional and torch.autograd)"), s)
        if s.alias:
            env[s.alias] = self.modules[module]
        else:
            env["torch"] = self.modules["torch"]

    def assign(self, target, value, env):
        t = type(target)
        if t is n.Name:
            env[target.id] = value
        elif t is n.Seq:
            try:
                values = list(value)
            except TypeError:
                raise self.error(TypeError(f"cannot unpack non-iterable {_type_name(value)} object"), target)
            if len(values) != len(target.items):
                raise self.error(ValueError(f"expected {len(target.items)} values to unpack, got {len(values)}"),
                                 target)
            for item, v in zip(target.items, values):
                self.assign(item, v, env)
        elif t is n.Attribute:
            obj = self.eval_expr(target.value, env)
            self.set_attribute(obj, target.attr, value, target)
        elif t is n.Subscript:
            obj = self.eval_expr(target.value, env)
            key = self.subscript_key(target, env)
            try:
                if isinstance(obj, Tensor):
                    inplace.setitem(obj, inplace.numpy_key(key), value)
                elif isinstance(obj, list):
                    if isinstance(key, slice):
                        limits.check_items(len(obj) + len(value), "the list")
                    obj[key] = value
                else:
                    raise TypeError(f"'{_type_name(obj)}' object does not support item assignment")
            except Exception as e:
                raise self.error(e, target) from None
        else:  # pragma: no cover
            raise AssertionError("bad target")

    def set_attribute(self, obj, name, value, node):
        try:
            if isinstance(obj, Tensor) and name == "requires_grad":
                # PyTorch's setter: its own texts, then requires_grad_()'s (the long one for a non-leaf)
                if obj.grad_fn is not None and value:
                    raise RuntimeError("you can only change requires_grad flags of leaf variables.")
                if value and not obj.is_floating_point():
                    raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
                obj.requires_grad_(bool(value))
            elif isinstance(obj, Tensor) and name == "grad":
                obj.grad = value
            else:
                raise AttributeError(f"cannot set attribute '{name}' of '{_type_name(obj)}' object")
        except Exception as e:
            raise self.error(e, node) from None

    # ------------------------------------------------------------------------------------ expressions
    def eval_expr(self, e, env):
        t = type(e)
        if t is n.Name:
            return self.lookup(e, env)
        if t is n.Const:
            return e.value
        if t is n.BinOp:
            return self.binop(e.op, self.eval_expr(e.left, env), self.eval_expr(e.right, env), e)
        if t is n.Call:
            return self.call(e, env)
        if t is n.Attribute:
            return self.get_attribute(self.eval_expr(e.value, env), e.attr, e)
        if t is n.Subscript:
            obj = self.eval_expr(e.value, env)
            key = self.subscript_key(e, env)
            try:
                return obj[key]
            except Exception as exc:
                raise self.error(exc, e) from None
        if t is n.UnaryOp:
            v = self.eval_expr(e.operand, env)
            if e.op == "not_":
                return not self.truth(v, e.operand)
            try:
                if e.op == "neg":
                    return -v
                if e.op == "pos":
                    return +v
                return ~v
            except Exception as exc:
                raise self.error(exc, e) from None
        if t is n.Compare:
            left = self.eval_expr(e.operands[0], env)
            result = True
            for op, right_node in zip(e.ops, e.operands[1:]):
                right = self.eval_expr(right_node, env)
                try:
                    result = _COMPARE[op](left, right)
                except Exception as exc:
                    raise self.error(exc, e) from None
                if len(e.ops) > 1 and not self.truth(result, e):
                    return result
                left = right
            return result
        if t is n.BoolOp:
            left = self.eval_expr(e.left, env)
            truth = self.truth(left, e.left)
            if e.op == "and_":
                return self.eval_expr(e.right, env) if truth else left
            return left if truth else self.eval_expr(e.right, env)
        if t is n.Ternary:
            return self.eval_expr(e.body, env) if self.truth(self.eval_expr(e.test, env), e.test) else self.eval_expr(e.orelse, env)
        if t is n.Seq:
            items = [self.eval_expr(i, env) for i in e.items]
            if e.kind == "list":
                return items
            if e.kind == "tuple":
                return tuple(items)
            try:
                return set(items)
            except TypeError as exc:
                raise self.error(exc, e) from None
        if t is n.FString:
            return self.fstring(e, env)
        raise AssertionError(f"unknown expression {t.__name__}")  # pragma: no cover

    def lookup(self, e: n.Name, env):
        name = e.id
        if name in env:
            return env[name]
        if env is not self.globals and name in self.globals:
            return self.globals[name]
        if name in self.builtins:
            return self.builtins[name]
        err = self.error(NameError(f"name '{name}' is not defined"), e)
        from .. import torch_names

        if name in torch_names.TORCH or name in torch_names.FUNCTIONAL:
            err.hint = (f"PyTorch has {name}, but gradcli does not support it (run `gradcli ops` for the "
                        "supported ops)")
        raise err

    def truth(self, value, node) -> bool:
        try:
            return bool(value)
        except Exception as exc:
            raise self.error(exc, node) from None

    def list_inplace(self, op: str, lst: list, value, node):
        """``lst += iterable`` (extend) and ``lst *= n`` (repeat) in place, as Python's list does, so that aliases
        of the list see it; within the ``items`` limit. Returns the list, or None to use :meth:`binop` (for a
        count that is not an integer: its TypeError)."""
        try:
            if op == "add":
                if not isinstance(value, _SEQUENCES):  # any iterable, as Python's list.__iadd__ takes
                    value = _materialize(value, "the concatenation")
                limits.check_items(len(lst) + len(value), "the concatenation")
                lst.extend(value)
                return lst
            try:
                count = operator.index(value)
            except TypeError:
                return None
            limits.check_items(len(lst) * max(count, 0), "the repeated sequence")
            lst *= count
            return lst
        except (GradcliError, TypeError) as exc:
            raise self.error(exc, node) from None

    def binop(self, op, left, right, node):
        try:
            if type(left) is not Tensor or type(right) is not Tensor:
                _check_python_op(op, left, right)
            return _OPERATORS[op](left, right)
        except GradcliError as exc:
            raise self.error(exc, node) from None
        except TypeError as exc:
            if "unsupported operand" in str(exc) or "can't multiply" in str(exc):
                exc = TypeError(f"unsupported operand type(s) for {_SYMBOLS[op]}: '{_type_name(left)}' and "
                                f"'{_type_name(right)}'")
            raise self.error(exc, node) from None
        except Exception as exc:
            raise self.error(exc, node) from None

    def subscript_key(self, e: n.Subscript, env):
        parts = []
        for p in e.index:
            if type(p) is n.SliceExpr:
                parts.append(slice(*(None if x is None else self.eval_expr(x, env) for x in (p.start, p.stop, p.step))))
            else:
                parts.append(self.eval_expr(p, env))
        return tuple(parts) if e.is_tuple else parts[0]

    def get_attribute(self, obj, name, node):
        try:
            if name.startswith("_"):
                raise AttributeError(f"'{_type_name(obj)}' object has no attribute '{name}' (gradcli does not "
                                     "expose names starting with '_')")
            if isinstance(obj, Tensor):
                if name == "grad":
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        value = obj.grad
                    for w in caught:
                        self.warning(w.category.__name__, str(w.message), node)
                    return value
                accessor = TENSOR_ATTRS.get(name)
                if accessor is not None:
                    return accessor(obj)
                member = _tensor_member(obj, name)
                if member is None:
                    raise _missing("Tensor", name)
                return member
            if isinstance(obj, Namespace):
                if name in obj.members:
                    return obj.members[name]
                raise _missing(obj.name, name)
            table = None
            if isinstance(obj, (autograd.Node, autograd.AccumulateGrad)):
                table = NODE_ATTRS
            elif isinstance(obj, dtypes.DType):
                table = DTYPE_ATTRS
            elif isinstance(obj, Size):
                table = {"numel": lambda s: s.numel}
            elif isinstance(obj, str):
                table = STR_METHODS
            elif isinstance(obj, list):
                table = LIST_METHODS
            if table is not None and name in table:
                return table[name](obj)
            fields = getattr(type(obj), "_fields", ()) if isinstance(obj, tuple) else ()
            if name in fields:  # max(dim).values, .indices
                return obj[fields.index(name)]
            raise AttributeError(f"'{_type_name(obj)}' object has no attribute '{name}'")
        except Exception as exc:
            raise self.error(exc, node) from None

    def call(self, e: n.Call, env):
        func = self.eval_expr(e.func, env)
        args = [self.eval_expr(a, env) for a in e.args]
        if e.star is not None:
            star = self.eval_expr(e.star, env)
            try:
                args.extend(star)
            except TypeError as exc:
                raise self.error(exc, e.star) from None
        kwargs = {k: self.eval_expr(v, env) for k, v in e.kwargs}
        if isinstance(func, Function):
            return self.call_function(func, args, kwargs, e)
        if not callable(func) or isinstance(func, (Tensor, Namespace, str, list, tuple)):
            raise self.error(TypeError(f"'{_type_name(func)}' object is not callable"), e)
        try:
            return func(*args, **kwargs)
        except GradcliError as exc:  # e.g. a LimitError of an op: at this call, unless it has a position
            raise exc.with_position(**self._where(e))
        except BrokenPipeError:  # a closed stdout ends the run (see cli.main), not an error here
            raise
        except RecursionError:
            raise self.error(RecursionError("maximum recursion depth exceeded"), e) from None
        except MemoryError as exc:
            raise limits.memory_error(exc).with_position(**self._where(e)) from None
        except Exception as exc:
            raise self.error(exc, e) from None

    def call_function(self, f: Function, args, kwargs, node):
        names = [p for p, _ in f.params]
        if len(args) > len(names):
            raise self.error(TypeError(f"{f.name}() takes {len(names)} positional arguments but {len(args)} were "
                                       "given"), node)
        local = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise self.error(TypeError(f"{f.name}() got an unexpected keyword argument '{k}'"), node)
            if k in local:
                raise self.error(TypeError(f"{f.name}() got multiple values for argument '{k}'"), node)
            local[k] = v
        for (p, default_node), default in zip(f.params, f.defaults):
            if p not in local:
                if default_node is None:
                    raise self.error(TypeError(f"{f.name}() missing 1 required positional argument: '{p}'"), node)
                local[p] = default
        if self.depth >= self.max_depth:
            err = limits.exceeded("call_depth", f"maximum recursion depth exceeded: {f.name}() nests calls more "
                                                f"than {self.max_depth:,} deep", self.max_depth)
            err.type = "RecursionError"
            raise err.with_position(**self._where(node))
        self.depth += 1
        try:
            self.exec_block(f.body, local)
        except _Return as r:
            return r.value
        finally:
            self.depth -= 1
        return None

    def fstring(self, e: n.FString, env) -> str:
        out = []
        for part in e.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            expr, conversion, spec = part
            value = self.eval_expr(expr, env)
            try:
                if conversion in ("r", "a") and not isinstance(value, str):
                    text = _str(value)
                elif conversion == "r":
                    text = repr(value)
                elif spec:
                    v = value.item() if isinstance(value, Tensor) else value
                    if not isinstance(v, (int, float, str, bool)):
                        raise TypeError(f"unsupported format string passed to {_type_name(value)}.__format__")
                    _check_format_widths(spec, "the f-string format")
                    text = format(v, spec)
                else:
                    text = _str(value)
            except Exception as exc:
                raise self.error(exc, e) from None
            out.append(text)
        return "".join(out)


_SEQUENCES = (str, list, tuple)
_PERCENT_RE = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")


def _check_python_op(op: str, left, right) -> None:
    """Refuse, before computing it, a Python operation whose result would pass the ``int_bits`` or ``items``
    limits: ``10 ** 10 ** 10``, squaring huge integers, ``[0] * 10 ** 10``, ``s + s`` doubling, ``'%9999999d'``."""
    if op == "pow":
        if type(left) is int and type(right) is int and right > 0 and _py.abs(left) > 1:
            limits.check_int_bits(right * (_py.abs(left).bit_length() - 1) + 1, f"the integer power {left} ** {right}")
    elif op == "mul":
        if isinstance(left, _SEQUENCES) or (isinstance(right, _SEQUENCES) and not isinstance(left, Tensor)):
            seq, count = (left, right) if isinstance(left, _SEQUENCES) else (right, left)
            try:
                count = operator.index(count)
            except TypeError:
                return
            limits.check_items(count * len(seq), "the repeated sequence")
        elif type(left) is int and type(right) is int:
            limits.check_int_bits(left.bit_length() + right.bit_length(), "the integer product")
    elif op == "add":
        if isinstance(left, _SEQUENCES) and isinstance(right, _SEQUENCES):
            limits.check_items(len(left) + len(right), "the concatenation")
    elif op == "mod" and isinstance(left, str):
        for m in _PERCENT_RE.finditer(left):
            for width in m.groups():
                if width == "*":
                    raise ValueError("gradcli does not support '*' widths in %-formatting; write the width")
            _check_format_widths(m.group(0), "the %-format")


def _check_format_widths(spec: str, what: str) -> None:
    """Refuse a format whose width or precision would build a string over the ``items`` limit."""
    for digits in re.findall(r"\d+", spec):
        if len(digits) > 18 or int(digits) > limits.current.items:
            raise limits.exceeded("items", f"{what} {spec!r} would make a string of more than "
                                           f"{limits.current.items:,} characters")

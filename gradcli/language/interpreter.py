"""The interpreter: runs a program (:mod:`.nodes`) on the engine.

Only this language runs: values are Tensors, Python numbers, strings, None, lists/tuples/sets, user
functions and the namespaces ``torch``/``F`` (:mod:`.values`). No Python ``eval``/``exec``: names and
attributes are those of :mod:`.builtins` (the ops, a few of Python's builtins, the tensor API, a grad_fn's
``name``/``next_functions``), never dunder names. The operators are those of the one operator table,
:mod:`gradcli.ops.operators`. Engine exceptions become :class:`~gradcli.engine.errors.EvalError` with the position of
the expression that failed, keeping PyTorch's type name and message. Runaway programs end with a clear error
before they exhaust the machine (:mod:`gradcli.engine.limits`): statement executions and function-call depth (here),
the autograd nodes a run records (the engine), and the size of Python's integers, lists, tuples and strings
(:mod:`.safety`).
"""

from __future__ import annotations

import operator
import sys
import warnings
from contextlib import contextmanager

from ..engine import anomaly, context, grad_mode, limits, node_budget
from ..api import forward_ad
from ..ops.core import saved_hooks
from ..engine.errors import EvalError, GradcliError, LimitError
from ..ops.shape import inplace
from ..ops.operators import BINARY, COMPARISONS, UNARY
from ..engine.tensor import Tensor
from . import builtins
from . import nodes as n
from .safety import SEQUENCES, check_format_widths, check_python_op, materialize
from .values import (MISSING, BoundMethod, Class, ClassMethod, Function, Generator, Instance, Namespace,
                     Property, Scope, StaticMethod, Super, type_name)
from .values import Return as _Return

_PyFunction = type(lambda: None)  # a Python function a decorator returned (torch.no_grad()(f)): binds as a method

DEFAULT_MAX_STEPS = limits.SPECS["steps"].default
DEFAULT_MAX_DEPTH = limits.SPECS["call_depth"].default
# Python's recursion limit while a program runs: each level of a program (an expression, a call of a program
# function) takes a few Python frames; deeper nesting ends in a RecursionError, reported as a gradcli error,
# well before the C stack could overflow.
RECURSION_LIMIT = 20_000


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


# The operators, from the one table of gradcli.ops.operators (keyed by the grammar's aliases).
_APPLY = {alias: row.apply for alias, row in BINARY.items()}
_IN_PLACE = {alias: row.in_place for alias, row in BINARY.items() if row.in_place is not None}
_UNARY = {alias: row.apply for alias, row in UNARY.items()}
_COMPARE = {symbol: row.apply for symbol, row in COMPARISONS.items()}
# Python's identity and membership tests (not operators of the table: no tensor meaning of their own).
_COMPARE.update({"is": operator.is_, "is not": operator.is_not, "in": lambda a, b: a in b,
                 "not in": lambda a, b: a not in b})


_PROVIDED = ("torch, torch.nn, torch.nn.functional, torch.nn.init, torch.nn.utils, torch.optim, "
             "torch.optim.lr_scheduler, torch.autograd, torch.autograd.functional, torch.autograd.forward_ad, math "
             "and random")


def _keyword_hint(func, message: str) -> str | None:
    """did-you-mean for ``f() got an unexpected keyword argument 'dimm'``, among ``func``'s parameters."""
    import inspect
    import re

    from ..ops import REGISTRY

    m = re.search(r"unexpected keyword argument '(\w+)'", message)
    if m is None:
        return None
    # a Tensor method (x.sum) is the op of its name; an op's parameters are its forward's
    target = REGISTRY.get(getattr(func, "__name__", ""), func) if inspect.ismethod(func) else func
    target = getattr(target, "forward", None) or target
    try:
        params = [p.name for p in inspect.signature(target).parameters.values()
                  if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    except (TypeError, ValueError):
        return None
    return builtins.did_you_mean(m.group(1), params)


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
        self.call_node = None  # the call being evaluated (where the warnings it raises point)
        self.frames: list = []  # (function, its variables) of the program functions being called (for super())
        self._yields: dict = {}  # id(statement) -> whether it yields (see yields())
        self.modules = dict(builtins.modules())
        # `import random`: a generator of this run's own, seeded from the run's seed (--seed)
        self.modules["random"] = builtins.lazy_random_module(context.generator().initial_seed())
        self.builtins = builtins.names(self.modules, write=lambda text: self.write(text))
        self.globals: dict = {"__name__": "__main__"}

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
        node_budget.start_node_budget(limits.current.graph_nodes)
        if anomaly.enabled():
            self.eval_expr = self._eval_recording_positions
        # Warnings that ops raise (PyTorch's, e.g. softmax's implicit dim) point at the program's call that
        # raised them, never at gradcli's source: routed to :meth:`warning` with the current call.
        catcher = warnings.catch_warnings()
        catcher.__enter__()
        warnings.simplefilter("always")  # :meth:`warning` shows each once per program position
        warnings.showwarning = self._show_warning
        try:
            yield self
        finally:
            catcher.__exit__(None, None, None)
            node_budget.stop_node_budget()
            sys.setrecursionlimit(old_limit)
            self.__dict__.pop("eval_expr", None)

    def _show_warning(self, message, category, filename, lineno, file=None, line=None):
        self.warning(category.__name__, str(message), self.call_node)

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
        key = (None if node is None else node.line, category, message)
        if key in self.warned:
            return
        self.warned.add(key)
        p = self.program
        if p is None or node is None:
            self.warn(f"{category}: {message}\n")
            return
        lines = p.source.splitlines()
        source = lines[node.line - 1].strip() if 1 <= node.line <= len(lines) else ""
        self.warn(f"{p.filename}:{node.line}: {category}: {message}\n" + (f"  {source}\n" if source else ""))

    def error(self, exc: BaseException, node) -> GradcliError:
        """Wrap a Python exception raised while evaluating ``node`` as an EvalError at its position (with a hint
        for the usual mistakes: ``^`` meant as a power)."""
        if isinstance(exc, GradcliError):
            return exc.with_position(**self._where(node))
        err = EvalError.from_exception(exc).with_position(**self._where(node))
        if type(node) is n.BinOp and node.op == "bitxor" and "bitwise_xor" in err.message:
            err.hint = "'^' is bitwise xor in Python and PyTorch; a power is '**' (x ** 2)"
        elif getattr(exc, "gradcli_hint", None):
            err.hint = exc.gradcli_hint
        return err

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
            value = self.eval_expr(s.value, env)
            self.assign(s.target, value, env)
            if s.more:
                for target in s.more:
                    self.assign(target, value, env)
        elif t is n.AugAssign:
            current = self.eval_expr(s.target, env)
            value = self.eval_expr(s.value, env)
            mark = anomaly.mark() if anomaly.enabled() else None
            result = None
            if type(current) is Tensor and s.op in _IN_PLACE:  # t += v: in place, as PyTorch's Tensor.__iadd__
                try:
                    result = _IN_PLACE[s.op](current, value)
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
            decorators = [self.eval_expr(d, env) for d in s.decorators or ()]
            value = self.make_function(s.name, s.params, s.body, env, s)
            self.bind_name(env, s.name, self.decorate(value, decorators, s))
        elif t is n.ClassDef:
            decorators = [self.eval_expr(d, env) for d in s.decorators or ()]
            self.bind_name(env, s.name, self.decorate(self.make_class(s, env), decorators, s))
        elif t is n.Global:
            if s.kind == "nonlocal" and (type(env) is not Scope or env.declared is None):
                raise self.error(SyntaxError("nonlocal declaration not allowed at module level"), s)
        elif t is n.Delete:
            for target in s.targets:
                self.delete(target, env)
        elif t is n.Yield:
            raise self.error(SyntaxError("'yield' outside function"), s)
        elif t is n.Return:
            raise _Return(None if s.value is None else self.eval_expr(s.value, env))
        elif t is n.With:
            ctx = self.eval_expr(s.context, env)
            if isinstance(ctx, Instance):
                self.with_instance(ctx, s, env)
                return
            if not isinstance(ctx, (grad_mode._GradModeContext, forward_ad.dual_level,
                                    saved_hooks.saved_tensors_hooks)):
                raise self.error(TypeError(f"'{type_name(ctx)}' object does not support the context manager "
                                           "protocol (gradcli supports torch.no_grad(), torch.enable_grad(), "
                                           "torch.autograd.forward_ad.dual_level() and "
                                           "torch.autograd.graph.saved_tensors_hooks())"),
                                 s.context)
            try:
                value = ctx.__enter__()
            except Exception as exc:  # dual_level inside another: PyTorch's RuntimeError, at the with
                raise self.error(exc, s.context) from None
            try:
                if s.alias:
                    env[s.alias] = value
                self.exec_block(s.body, env)
            finally:
                ctx.__exit__(None, None, None)
        elif t is n.Import:
            self.do_import(s, env)
        elif t is n.Try:
            self.exec_try(s, env)
        elif t is n.Raise:
            exc = RuntimeError("No active exception to reraise") if s.exc is None else self.eval_expr(s.exc, env)
            if isinstance(exc, type) and issubclass(exc, BaseException) and exc.__name__ in builtins.EXCEPTIONS:
                exc = exc()
            if not isinstance(exc, BaseException) or type(exc).__name__ not in builtins.EXCEPTIONS:
                exc = TypeError("exceptions must derive from BaseException")
            raise self.error(exc, s)
        elif t is n.Assert:
            if not self.truth(self.eval_expr(s.test, env), s.test):
                message = () if s.msg is None else (builtins.to_str(self.eval_expr(s.msg, env)),)
                raise self.error(AssertionError(*message), s)
        elif t is n.Pass:
            pass
        elif t is n.Break:
            raise _Break()
        elif t is n.Continue:
            raise _Continue()
        else:  # pragma: no cover - the builder makes no other statements
            raise AssertionError(f"unknown statement {t.__name__}")

    def exec_try(self, s: n.Try, env):
        """``try``/``except``/``else``/``finally`` as Python runs it. Errors of the program and of gradcli's ops
        are caught as the Python type PyTorch raises (by the error's type name); limits (steps, call depth,
        elements, ...) are not catchable, so a runaway program still ends."""
        try:
            try:
                self.exec_block(s.body, env)
            except EvalError as err:
                body = self.except_clause(err, s, env)
                if body is None:
                    raise
                self.exec_block(body, env)
            else:
                if s.orelse:
                    self.exec_block(s.orelse, env)
        finally:
            if s.final:
                self.exec_block(s.final, env)

    def except_clause(self, err: EvalError, s: n.Try, env):
        """The body of the first ``except`` of ``s`` that catches ``err`` (its ``as`` name bound), or None."""
        cls = builtins.EXCEPTIONS.get(err.type)
        if isinstance(err, LimitError) or cls is None:
            return None
        for exc_node, alias, body in s.handlers:
            if exc_node is not None:
                wanted = self.eval_expr(exc_node, env)
                kinds = wanted if isinstance(wanted, tuple) else (wanted,)
                if not all(isinstance(k, type) and k.__name__ in builtins.EXCEPTIONS for k in kinds):
                    raise self.error(TypeError("catching classes that do not inherit from BaseException "
                                               "is not allowed"), exc_node) from None
                if not issubclass(cls, kinds):
                    continue
            if alias:
                env[alias] = cls(err.message)
            return body
        return None

    # ------------------------------------------------------------------------------------ generators
    def yields(self, s) -> bool:
        """Whether statement ``s`` (or a block inside it) yields (cached per statement)."""
        cached = self._yields.get(id(s))
        if cached is not None:
            return cached
        t = type(s)
        if t is n.Yield:
            found = True
        elif t is n.If:
            found = any(self.yields(x) for _, b in s.branches for x in b) or any(
                self.yields(x) for x in s.orelse or ())
        elif t in (n.While, n.For, n.With):
            found = any(self.yields(x) for x in s.body)
        elif t is n.Try:
            found = any(self.yields(x) for x in [*s.body, *(x for h in s.handlers for x in h[-1]),
                                                   *(s.orelse or ()), *(s.final or ())])
        else:
            found = False
        self._yields[id(s)] = found
        return found

    def gen_block(self, body, env):
        """Run a generator function's block as a Python generator: statements that yield suspend it (their
        value goes to ``next``/``send``), the others run as :meth:`exec_stmt` runs them."""
        for s in body:
            if not self.yields(s):
                self.exec_stmt(s, env)
                continue
            self.step(s)
            t = type(s)
            if t is n.Yield:
                if s.delegate:
                    source = self.eval_expr(s.value, env)
                    try:
                        it = iter(source)
                    except TypeError as exc:
                        raise self.error(exc, s.value) from None
                    sent = yield from it
                else:
                    sent = yield None if s.value is None else self.eval_expr(s.value, env)
                if s.target is not None:
                    self.assign(s.target, sent, env)
            elif t is n.If:
                for test, b in s.branches:
                    if self.truth(self.eval_expr(test, env), test):
                        yield from self.gen_block(b, env)
                        break
                else:
                    if s.orelse:
                        yield from self.gen_block(s.orelse, env)
            elif t is n.While:
                while self.truth(self.eval_expr(s.test, env), s.test):
                    try:
                        yield from self.gen_block(s.body, env)
                    except _Break:
                        break
                    except _Continue:
                        pass
                    self.step(s)
            elif t is n.For:
                iterable = self.eval_expr(s.iter, env)
                try:
                    it = iter(iterable)
                except TypeError as e:
                    raise self.error(e, s.iter) from None
                for item in it:
                    self.assign(s.target, item, env)
                    try:
                        yield from self.gen_block(s.body, env)
                    except _Break:
                        break
                    except _Continue:
                        pass
            elif t is n.Try:
                try:
                    try:
                        yield from self.gen_block(s.body, env)
                    except EvalError as err:
                        handler = self.except_clause(err, s, env)
                        if handler is None:
                            raise
                        yield from self.gen_block(handler, env)
                    else:
                        if s.orelse:
                            yield from self.gen_block(s.orelse, env)
                finally:
                    if s.final:
                        yield from self.gen_block(s.final, env)
            else:  # With
                raise self.error(SyntaxError("gradcli does not support 'yield' inside a 'with' block"), s)

    def make_function(self, name, params, body, env, node=None) -> Function:
        """A ``def`` or ``lambda`` (``node``, for its ``*args``, keyword-only and ``**kwargs`` parameters):
        defaults evaluated now; a closure over ``env`` unless defined at top level (a class body's functions
        close over what encloses the class, as Python's methods do)."""
        kwonly = (node.kwonly if node is not None else None) or []
        defaults = [None if d is None else self.eval_expr(d, env) for _, d in list(params) + list(kwonly)]
        scope = env
        while type(scope) is Scope and scope.is_class:
            scope = scope.outer
        f = Function(name, params, body, defaults, None if scope is self.globals else scope, self,
                     node.vararg if node is not None else None, kwonly,
                     node.kwarg if node is not None else None,
                     getattr(node, "declared", None))  # noqa: B009 - a Lambda node has no declared names
        f.generator = getattr(node, "generator", False)  # noqa: B009 - nor a generator flag
        return f

    def bind_name(self, env, name: str, value) -> None:
        """``name = value`` in ``env``, or in the program's or the enclosing function's variables for a name
        the function declared ``global`` or ``nonlocal``."""
        if type(env) is Scope and env.declared is not None and name in env.declared:
            if env.declared[name] == "global":
                self.globals[name] = value
                return
            scope = env.outer
            while scope is not None and scope is not self.globals:
                if name in scope and not (type(scope) is Scope and scope.is_class):
                    scope[name] = value
                    return
                scope = scope.outer if type(scope) is Scope else None
            raise SyntaxError(f"no binding for nonlocal '{name}' found")
        env[name] = value

    def decorate(self, value, decorators: list, node):
        """Apply ``@decorators`` (already evaluated, top to bottom) to ``value``, the last one first."""
        for d in reversed(decorators):
            value = self.call_value(d, [value], {}, node)
        return value

    def make_class(self, s: n.ClassDef, env) -> Class:
        """Run a ``class`` body in a namespace of its own and make the :class:`Class` of what it defined.

        Raises:
            EvalError: a base that is not a class (TypeError), or bases with no consistent MRO.
        """
        bases, builtin = [], None
        for node in s.bases:
            b = self.eval_expr(node, env)
            if isinstance(b, Class):
                bases.append(b)
                builtin = builtin or b.builtin
            elif b is builtins.OBJECT:
                continue
            elif builtins.is_builtin_base(b):
                builtin = b
            else:
                raise self.error(TypeError(f"gradcli classes derive from classes of the program, object or "
                                           f"{builtins.BUILTIN_BASE_NAMES}; got a '{type_name(b)}'"), node)
        body = Scope(env, is_class=True)
        self.exec_block(s.body, body)
        limits.check_items(len(body), f"the class {s.name}")
        try:
            cls = Class(s.name, bases, dict(body), builtin, self)
        except TypeError as exc:
            raise self.error(exc, s) from None
        for value in cls.namespace.values():
            for f in (value, getattr(value, "func", None), getattr(value, "fget", None),  # noqa: B009
                      getattr(value, "fset", None)):  # noqa: B009 - the wrappers of values.py
                if isinstance(f, Function) and f.owner is None:
                    f.owner = cls
                    f.name = f"{s.name}.{f.name}"
        return cls

    def bind(self, value, obj, cls):
        """A class attribute as read from ``obj`` (an instance, or the class itself when ``obj`` is None):
        functions become bound methods, ``classmethod`` binds ``cls``, ``staticmethod`` unwraps, ``property``
        calls its getter (on an instance)."""
        t = type(value)
        if t is Function or t is _PyFunction:
            return value if obj is None else BoundMethod(value, obj)
        if t is StaticMethod:
            return value.func
        if t is ClassMethod:
            return BoundMethod(value.func, cls)
        if t is Property:
            if obj is None:
                return value
            return self.call_value(value.fget, [obj], {}, self.call_node)
        return value

    def with_instance(self, ctx: Instance, s, env) -> None:
        """``with obj [as name]:`` for an object whose class defines ``__enter__`` and ``__exit__``."""
        for name in ("__enter__", "__exit__"):
            if ctx.cls.lookup(name) is MISSING:
                raise self.error(TypeError(f"'{ctx.cls.name}' object does not support the context manager "
                                           "protocol"), s.context)
        value = ctx.special("__enter__")
        if s.alias:
            self.bind_name(env, s.alias, value)
        try:
            self.exec_block(s.body, env)
        except EvalError as err:
            cls = builtins.EXCEPTIONS.get(err.type)
            if isinstance(err, LimitError) or cls is None:
                raise
            if not self.truth(ctx.special("__exit__", cls, cls(err.message), None), s):
                raise
            return
        ctx.special("__exit__", None, None, None)

    def delete(self, target, env) -> None:
        """``del target``: a variable, an item, an attribute of a program's object, or each of a tuple."""
        t = type(target)
        try:
            if t is n.Name:
                scope = self.globals if (type(env) is Scope and env.declared and
                                         env.declared.get(target.id) == "global") else env
                if target.id not in scope:
                    raise NameError(f"name '{target.id}' is not defined", name=target.id)
                del scope[target.id]
            elif t is n.Seq:
                for item in target.items:
                    self.delete(item, env)
            elif t is n.Subscript:
                obj = self.eval_expr(target.value, env)
                key = self.subscript_key(target, env)
                if isinstance(obj, Tensor):
                    raise TypeError("'Tensor' object does not support item deletion")
                del obj[key]
            else:
                obj = self.eval_expr(target.value, env)
                builtins.delete_attribute(obj, target.attr)
        except GradcliError:
            raise
        except Exception as exc:
            raise self.error(exc, target) from None

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
                                         f"{_PROVIDED})"), s)
        if module not in self.modules:
            raise self.error(ModuleNotFoundError(f"No module named '{module}' (gradcli programs can import "
                                                 f"{_PROVIDED})"), s)
        if s.alias:
            env[s.alias] = self.modules[module]
        else:  # import torch.nn.functional binds torch, as Python binds the top-level package
            top = module.split(".")[0]
            env[top] = self.modules[top]

    def assign(self, target, value, env):
        t = type(target)
        if t is n.Name:
            if type(env) is Scope and env.declared is not None:
                try:
                    self.bind_name(env, target.id, value)
                except SyntaxError as exc:
                    raise self.error(exc, target) from None
            else:
                env[target.id] = value
        elif t is n.Seq:
            try:
                values = list(value)
            except TypeError:
                raise self.error(TypeError(f"cannot unpack non-iterable {type_name(value)} object"), target)
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
                elif isinstance(obj, dict):
                    obj[key] = value
                    limits.check_items(len(obj), "the dict")
                elif isinstance(obj, list):
                    if isinstance(key, slice):
                        limits.check_items(len(obj) + len(value), "the list")
                    obj[key] = value
                else:
                    raise TypeError(f"'{type_name(obj)}' object does not support item assignment")
            except Exception as e:
                raise self.error(e, target) from None
        else:  # pragma: no cover
            raise AssertionError("bad target")

    def object_attribute(self, obj, name: str, node):
        """``obj.name`` for a program's instance, class or ``super()``: the instance's own attributes, then the
        class's (through the MRO; functions bound), as Python reads them.

        Raises:
            EvalError: AttributeError with Python's message.
        """
        t = type(obj)
        if t is Instance:
            if name in obj.attrs:
                return obj.attrs[name]
            value = obj.cls.lookup(name)
            if value is not MISSING:
                return self.bind(value, obj, obj.cls)
            found, value = builtins.builtin_attribute(obj, name)
            if found:
                return value
            raise self.error(AttributeError(f"'{obj.cls.name}' object has no attribute '{name}'"), node)
        if t is Class:
            value = obj.lookup(name)
            if value is not MISSING:
                return self.bind(value, None, obj)
            if name == "__name__":
                return obj.name
            found, value = builtins.builtin_attribute(obj, name)
            if found:
                return value
            raise self.error(AttributeError(f"type object '{obj.name}' has no attribute '{name}'"), node)
        # super(): the classes after obj.cls in the MRO of the object's class
        target = obj.obj
        cls = target.cls if isinstance(target, Instance) else target
        mro = cls.mro
        start = mro.index(obj.cls) + 1 if obj.cls in mro else len(mro)
        for c in mro[start:]:
            if name in c.namespace:
                return self.bind(c.namespace[name], target if isinstance(target, Instance) else None, cls)
        if name == "__init__":  # object.__init__ (or the gradcli base's): nothing to do
            return builtins.base_init(cls.builtin, target)
        found, value = builtins.builtin_attribute(target, name, through_super=True)
        if found:
            return value
        raise self.error(AttributeError(f"'super' object has no attribute '{name}'"), node)

    def set_attribute(self, obj, name, value, node):
        if type(obj) is Instance:
            prop = obj.cls.lookup(name)
            if type(prop) is Property:
                if prop.fset is None:
                    raise self.error(AttributeError(f"property '{name}' of '{obj.cls.name}' object has no "
                                                    "setter"), node)
                self.call_value(prop.fset, [obj, value], {}, node)
                return
            try:
                if obj.base is not None and builtins.set_base_attribute(obj, name, value):
                    return
                builtins.set_instance_attribute(obj, name, value)
            except Exception as e:
                raise self.error(e, node) from None
            return
        if type(obj) is Class:
            obj.namespace[name] = value
            return
        try:
            builtins.write_attribute(obj, name, value)
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
                return _UNARY[e.op](v)
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
        if t is n.Dict:
            return self.make_dict(e, env)
        if t is n.Lambda:
            return self.make_function("<lambda>", e.params, e.body, env, e)
        if t is n.Comprehension:
            return self.comprehension(e, env)
        raise AssertionError(f"unknown expression {t.__name__}")  # pragma: no cover

    def make_dict(self, e: n.Dict, env) -> dict:
        out: dict = {}
        for key, value in e.items:
            try:
                if key is None:
                    mapping = self.eval_expr(value, env)
                    if not isinstance(mapping, dict):
                        raise TypeError(f"'{type_name(mapping)}' object is not a mapping")
                    out.update(mapping)
                else:
                    k = self.eval_expr(key, env)
                    out[k] = self.eval_expr(value, env)
            except GradcliError:
                raise
            except Exception as exc:
                raise self.error(exc, key or value) from None
        limits.check_items(len(out), "the dict")
        return out

    def _comprehension_items(self, e: n.Comprehension, env):
        """The values of a comprehension in order: (key, value) pairs for a dict, else values. Each item is one
        step (the ``steps`` limit); the iterables are evaluated as Python does (the first in ``env``, the others
        in the comprehension's own scope)."""
        scope = Scope(env)

        def loop(i):
            target, iter_node, conditions = e.clauses[i]
            iterable = self.eval_expr(iter_node, env if i == 0 else scope)
            try:
                it = iter(iterable)
            except TypeError as exc:
                raise self.error(exc, iter_node) from None
            for item in it:
                self.step(e)
                self.assign(target, item, scope)
                if all(self.truth(self.eval_expr(c, scope), c) for c in conditions):
                    if i + 1 < len(e.clauses):
                        yield from loop(i + 1)
                    elif e.key is not None:
                        yield self.eval_expr(e.key, scope), self.eval_expr(e.element, scope)
                    else:
                        yield self.eval_expr(e.element, scope)

        return loop(0)

    def comprehension(self, e: n.Comprehension, env):
        items = self._comprehension_items(e, env)
        if e.kind == "generator":
            return items
        out = {} if e.kind == "dict" else set() if e.kind == "set" else []
        limit = limits.current.items
        try:
            for item in items:
                if e.kind == "dict":
                    out[item[0]] = item[1]
                elif e.kind == "set":
                    out.add(item)
                else:
                    out.append(item)
                if len(out) > limit:
                    raise limits.exceeded("items", f"the {e.kind} comprehension would have more than {limit:,} items")
        except GradcliError as exc:
            raise exc.with_position(**self._where(e)) if exc.line is None else exc
        except TypeError as exc:  # an unhashable key
            raise self.error(exc, e) from None
        return out

    def lookup(self, e: n.Name, env):
        name = e.id
        if name in env:
            return env[name]
        scope = env
        while type(scope) is Scope:  # a comprehension's or closure's enclosing scopes
            scope = scope.outer
            if name in scope:
                return scope[name]
        if env is not self.globals and name in self.globals:
            return self.globals[name]
        if name in self.builtins:
            return self.builtins[name]
        err = self.error(NameError(f"name '{name}' is not defined", name=name), e)
        hint = builtins.unsupported_name_hint(name, [*env, *self.globals, *self.builtins])
        if hint is not None:
            err.hint = hint
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
                if not isinstance(value, SEQUENCES):  # any iterable, as Python's list.__iadd__ takes
                    value = materialize(value, "the concatenation")
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
                check_python_op(op, left, right)
            return _APPLY[op](left, right)
        except GradcliError as exc:
            raise self.error(exc, node) from None
        except TypeError as exc:
            if "unsupported operand" in str(exc) or "can't multiply" in str(exc):
                exc = TypeError(f"unsupported operand type(s) for {BINARY[op].symbol}: '{type_name(left)}' and "
                                f"'{type_name(right)}'")
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
        t = type(obj)
        if t is Instance or t is Class or t is Super:
            return self.object_attribute(obj, name, node)
        try:
            if isinstance(obj, Tensor) and name == "grad":
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    value = obj.grad
                for w in caught:
                    self.warning(w.category.__name__, str(w.message), node)
                return value
            return builtins.read_attribute(obj, name)
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
        for m in e.kwstars or ():
            mapping = self.eval_expr(m, env)
            if not isinstance(mapping, dict):
                raise self.error(TypeError(f"argument after ** must be a mapping, not {type_name(mapping)}"), m)
            for k, v in mapping.items():
                if not isinstance(k, str):
                    raise self.error(TypeError("keywords must be strings"), m)
                if k in kwargs:
                    raise self.error(TypeError(f"got multiple values for keyword argument '{k}'"), m)
                kwargs[k] = v
        if type(func) is Function:
            return self.call_function(func, args, kwargs, e)
        return self.call_value(func, args, kwargs, e)

    def call_value(self, func, args: list, kwargs: dict, node):
        """Call any value a program may call: its functions, bound methods, classes (a new instance), objects
        whose class defines ``__call__``, ``super()``, and gradcli's and Python's callables.

        Raises:
            EvalError: what the call raised, at ``node``.
        """
        t = type(func)
        if t is Function:
            return self.call_function(func, args, kwargs, node)
        if t is BoundMethod:
            return self.call_value(func.func, [func.obj] + args, kwargs, node)
        if t is Class:
            return self.instantiate(func, args, kwargs, node)
        if t is Instance:
            f = func.cls.lookup("__call__")
            if f is MISSING and func.base is not None and callable(func.base):  # e.g. a torch.nn module's
                return self.call_value(func.base, args, kwargs, node)
            if f is MISSING:
                raise self.error(TypeError(f"'{func.cls.name}' object is not callable"), node)
            return self.call_value(self.bind(f, func, func.cls), args, kwargs, node)
        if func is builtins.SUPER:
            return self.make_super(args, node)
        if t is StaticMethod or t is ClassMethod:
            return self.call_value(func.func, args, kwargs, node)
        if not callable(func) or isinstance(func, (Tensor, Namespace, str, list, tuple)):
            raise self.error(TypeError(f"'{type_name(func)}' object is not callable"), node)
        outer, self.call_node = self.call_node, node  # where a warning of this call points
        try:
            return func(*args, **kwargs)
        except GradcliError as exc:  # e.g. a LimitError of an op: at this call, unless it has a position
            raise exc.with_position(**self._where(node))
        except BrokenPipeError:  # a closed stdout ends the run (see cli.main), not an error here
            raise
        except RecursionError:
            raise self.error(RecursionError("maximum recursion depth exceeded"), node) from None
        except MemoryError as exc:
            raise limits.memory_error(exc).with_position(**self._where(node)) from None
        except Exception as exc:
            err = self.error(exc, node)
            if isinstance(exc, TypeError) and "unexpected keyword argument" in err.message and not err.hint:
                err.hint = _keyword_hint(func, err.message)
            raise err from None
        finally:
            self.call_node = outer

    def instantiate(self, cls: Class, args: list, kwargs: dict, node):
        """``Cls(args)``: a new instance, initialised by the ``__init__`` its MRO defines (or gradcli's base
        class's, e.g. torch.nn.Module's)."""
        if cls.builtin is not None and builtins.builtin_instantiate(cls.builtin) is not None:
            obj = builtins.builtin_instantiate(cls.builtin)(cls)
        else:
            obj = Instance(cls)
        init = cls.lookup("__init__")
        if init is MISSING and obj.base is not None:
            # no __init__ of the program's: its torch.nn base class's (class Wide(nn.Linear): pass; Wide(2, 3))
            self.call_value(builtins.base_init(cls.builtin, obj), args, kwargs, node)
            return obj
        if init is MISSING:
            if args or kwargs:
                raise self.error(TypeError(f"{cls.name}() takes no arguments"), node)
            return obj
        result = self.call_value(self.bind(init, obj, cls), args, kwargs, node)
        if result is not None:
            raise self.error(TypeError(f"__init__() should return None, not '{type_name(result)}'"), node)
        return obj

    def make_super(self, args: list, node) -> Super:
        """``super()`` in a method (the class that defined it, and its first argument), or ``super(Cls, obj)``.

        Raises:
            EvalError: RuntimeError as Python's outside a method.
        """
        if args:
            if len(args) != 2 or not isinstance(args[0], Class):
                raise self.error(TypeError("super() takes a class and an object: super(Cls, self)"), node)
            return Super(args[0], args[1])
        for f, local in reversed(self.frames):
            if f.owner is not None and f.params:
                return Super(f.owner, local[f.params[0][0]])
            break
        raise self.error(RuntimeError("super(): no arguments"), node)

    def call_function(self, f: Function, args, kwargs, node):
        names = [p for p, _ in f.params]
        npos = len(names)
        if len(args) > npos and f.vararg is None:
            given = len(args)
            raise self.error(TypeError(f"{f.name}() takes {npos} positional argument{'s' if npos != 1 else ''} "
                                       f"but {given} {'were' if given != 1 else 'was'} given"), node)
        local = dict(zip(names, args))
        if f.scope is not None or f.declared:  # a closure: its enclosing function's variables behind its own
            scope = Scope(f.scope if f.scope is not None else self.globals, f.declared)
            scope.update(local)
            local = scope
        if f.vararg is not None:
            local[f.vararg] = tuple(args[npos:])
        extra = {} if f.kwarg is not None else None
        kwonly = f.kwonly
        for k, v in kwargs.items():
            if k in local and k != f.vararg:
                raise self.error(TypeError(f"{f.name}() got multiple values for argument '{k}'"), node)
            if k in names or any(k == kn for kn, _ in kwonly):
                local[k] = v
            elif extra is not None:
                extra[k] = v
            else:
                raise self.error(TypeError(f"{f.name}() got an unexpected keyword argument '{k}'"), node)
        if extra is not None:
            local[f.kwarg] = extra
        for (p, default_node), default in zip(list(f.params) + list(kwonly), f.defaults):
            if p not in local:
                if default_node is None:
                    what = "positional" if any(p == q for q in names) else "keyword-only"
                    raise self.error(TypeError(f"{f.name}() missing 1 required {what} argument: '{p}'"), node)
                local[p] = default
        if self.depth >= self.max_depth:
            err = limits.exceeded("call_depth", f"maximum recursion depth exceeded: {f.name}() nests calls more "
                                                f"than {self.max_depth:,} deep", self.max_depth)
            err.type = "RecursionError"
            raise err.with_position(**self._where(node))
        if f.generator:
            return Generator(self, f, local)
        self.depth += 1
        self.frames.append((f, local))
        try:
            self.exec_block(f.body, local)
        except _Return as r:
            return r.value
        finally:
            self.depth -= 1
            self.frames.pop()
        return None

    def fstring(self, e: n.FString, env) -> str:
        out = []
        for part in e.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            expr, conversion, spec = part
            value = self.eval_expr(expr, env)
            if type(spec) is n.FString:  # {x:>{width}}
                spec = self.fstring(spec, env)
            try:
                if conversion == "s":
                    value = builtins.to_str(value)
                elif conversion in ("r", "a"):
                    value = builtins.to_repr(value)
                if spec:
                    v = value.item() if isinstance(value, Tensor) else value
                    if not isinstance(v, (int, float, str, bool)):
                        raise TypeError(f"unsupported format string passed to {type_name(value)}.__format__")
                    check_format_widths(spec, "the f-string format")
                    text = format(v, spec)
                else:
                    text = builtins.to_str(value)
            except Exception as exc:
                raise self.error(exc, e) from None
            out.append(text)
        return "".join(out)

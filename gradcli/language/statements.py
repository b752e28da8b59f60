"""Running statements: the :class:`Statements` mixin of :class:`~.interpreter.Interpreter`.

One table, :data:`STATEMENTS`, maps each statement node type to its handler; :meth:`Statements.exec_stmt` and
the generator runner (:mod:`.generators`, for the statements that do not yield) both dispatch through it, so
each kind of statement is written once. Also here: assignment to names, items, attributes and tuples (with
``global``/``nonlocal``), ``del``, ``try``/``except`` matching, ``with`` and ``import``.
"""

from __future__ import annotations

import errno
import operator

import numpy as np

from ..api import autograd_graph, forward_ad
from ..engine import anomaly, grad_mode
from ..engine.errors import EvalError, GradcliError, LimitError
from ..engine.tensor import Tensor
from ..ops.core import saved_hooks
from ..ops.operators import BINARY
from ..ops.shape import inplace
from . import builtins, files, nn_bridge
from . import nodes as n
from .safety import SEQUENCES, admit, check_array_index, check_array_op, check_array_value, materialize
from .values import MISSING, Instance, Scope, type_name
from .values import Return as _Return


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


#: What passes through a statement unchanged: gradcli's errors (already at a position), the control flow of
#: ``break``/``continue``/``return``, what the interpreter reports itself (memory, recursion), and a closed
#: pipe (the command reports it; see also :func:`program_error`).
PASS_THROUGH = (GradcliError, _Break, _Continue, _Return, MemoryError, RecursionError, BrokenPipeError)
#: The errors of writing the output (a full disk, a closed standard output, a device's error): the command
#: reports them; an OSError with another errno (a file the program opens) is the program's.
OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EBADF, errno.EIO, errno.EFBIG, errno.EDQUOT, errno.EPIPE})


def program_error(interp, exc: Exception, node) -> BaseException:
    """What a Python exception raised inside a builtin at ``node`` is reported as: the program's error of its
    Python type (catchable by ``except ValueError``), or, for a failed write of the output, itself."""
    if isinstance(exc, OSError) and exc.errno in OUTPUT_ERRNOS:
        return exc
    return interp.error(exc, node)


# ``t op= v`` on a Tensor: the in-place op of the operator table (PyTorch's Tensor.__iadd__ and friends).
_IN_PLACE = {alias: row.in_place for alias, row in BINARY.items() if row.in_place is not None}
# ``a op= v`` on a program's NumPy array: NumPy's in-place operators (they write into a, and into the tensor that
# torch.from_numpy made of it)
_NUMPY_IN_PLACE = {"add": operator.iadd, "sub": operator.isub, "mul": operator.imul, "div": operator.itruediv,
                   "floordiv": operator.ifloordiv, "mod": operator.imod, "pow": operator.ipow}

_PROVIDED = ("torch, torch.nn, torch.nn.functional, torch.nn.init, torch.nn.utils, torch.optim, "
             "torch.optim.lr_scheduler, torch.autograd, torch.autograd.functional, torch.autograd.forward_ad, "
             "torch.utils.data, math, random, numpy, collections and itertools")

def handles(table: dict, *kinds):
    """Decorator: make the function the handler of the node classes ``kinds`` in ``table`` (node type ->
    function of ``(interpreter, node, env)``), the interpreter's dispatch tables."""
    def register(function):
        for kind in kinds:
            table[kind] = function
        return function
    return register


#: Every statement node type -> its handler, a function of ``(interpreter, statement, env)``.
STATEMENTS: dict = {}


class Statements:
    """How the interpreter runs each kind of statement node (a mixin of the Interpreter)."""

    def exec_block(self, body, env):
        """Run the statements of ``body`` in ``env``, each one step (the ``steps`` limit)."""
        table = STATEMENTS
        for s in body:  # exec_stmt, inlined: a block is what loops run
            self.step(s)
            try:  # (free in Python 3.11 until something raises)
                table[type(s)](self, s, env)
            except PASS_THROUGH:
                raise
            except Exception as exc:  # raised inside a builtin (int('x') in map(), unpacking an iterator)
                raise program_error(self, exc, s) from None  # the program's error, of Python's type: catchable

    def exec_stmt(self, s, env):
        """Run statement ``s`` in ``env`` (one step) with its handler of :data:`STATEMENTS`.

        Raises:
            EvalError: what it raised, at the position of the failing expression.
        """
        self.step(s)
        try:
            STATEMENTS[type(s)](self, s, env)
        except PASS_THROUGH:
            raise
        except Exception as exc:  # as in exec_block
            raise program_error(self, exc, s) from None

    @handles(STATEMENTS, n.ExprStmt)
    def exec_expr_stmt(self, s: n.ExprStmt, env):
        self.eval_expr(s.value, env)

    @handles(STATEMENTS, n.Assign)
    def exec_assign(self, s: n.Assign, env):
        value = self.eval_expr(s.value, env)
        self.assign(s.target, value, env)
        if s.more:
            for target in s.more:
                self.assign(target, value, env)

    @handles(STATEMENTS, n.AugAssign)
    def exec_aug_assign(self, s: n.AugAssign, env):
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
        elif s.op == "add" and nn_bridge.extends_in_place(current):  # ModuleList/ParameterList.__iadd__
            try:
                result = current.extend(value)
            except Exception as exc:
                raise self.error(exc, s) from None
        elif type(current) is np.ndarray and s.op in _NUMPY_IN_PLACE:  # a += v: in place, as NumPy's __iadd__
            try:
                check_array_op(s.op, current, value)
                result = _NUMPY_IN_PLACE[s.op](current, value)
            except Exception as exc:
                raise self.error(exc, s) from None
        if result is None:
            result = self.binop(s.op, current, value, s)
        if mark is not None and isinstance(result, Tensor) and result.grad_fn is not None:
            anomaly.tag(result.grad_fn, mark, self._where(s))
        if not (result is current and type(s.target) is n.Attribute and s.target.attr == "data"):
            self.assign(s.target, result, env)  # (``w.data -= ...`` wrote into w: nothing to rebind)

    def if_branch(self, s: n.If, env):
        """The block of ``s`` whose test is true first (``if``, each ``elif``), its ``else`` block, or None."""
        for test, body in s.branches:
            if self.truth(self.eval_expr(test, env), test):
                return body
        return s.orelse

    @handles(STATEMENTS, n.If)
    def exec_if(self, s: n.If, env):
        body = self.if_branch(s, env)
        if body:
            self.exec_block(body, env)

    @handles(STATEMENTS, n.While)
    def exec_while(self, s: n.While, env):
        while self.truth(self.eval_expr(s.test, env), s.test):
            if not self.loop_body(s.body, env):
                break
            self.step(s)

    @handles(STATEMENTS, n.For)
    def exec_for(self, s: n.For, env):
        for item in self.iterate(s.iter, env):
            self.assign(s.target, item, env)
            if not self.loop_body(s.body, env):
                break

    def loop_body(self, body, env) -> bool:
        """Run one iteration of a loop body; False after ``break``."""
        try:
            self.exec_block(body, env)
        except _Break:
            return False
        except _Continue:
            pass
        return True

    @handles(STATEMENTS, n.FunctionDef)
    def exec_function_def(self, s: n.FunctionDef, env):
        decorators = [self.eval_expr(d, env) for d in s.decorators or ()]
        value = self.make_function(s.name, s.params, s.body, env, s)
        self.bind_name(env, s.name, self.decorate(value, decorators, s))

    @handles(STATEMENTS, n.ClassDef)
    def exec_class_def(self, s: n.ClassDef, env):
        decorators = [self.eval_expr(d, env) for d in s.decorators or ()]
        self.bind_name(env, s.name, self.decorate(self.make_class(s, env), decorators, s))

    @handles(STATEMENTS, n.Global)
    def exec_global(self, s: n.Global, env):
        if s.kind == "nonlocal" and (type(env) is not Scope or env.declared is None):
            raise self.error(SyntaxError("nonlocal declaration not allowed at module level"), s)

    @handles(STATEMENTS, n.Delete)
    def exec_delete(self, s: n.Delete, env):
        for target in s.targets:
            self.delete(target, env)

    @handles(STATEMENTS, n.Yield)
    def exec_yield(self, s: n.Yield, env):  # a generator function's yields run in .generators
        raise self.error(SyntaxError("'yield' outside function"), s)

    @handles(STATEMENTS, n.Return)
    def exec_return(self, s: n.Return, env):
        raise _Return(None if s.value is None else self.eval_expr(s.value, env))

    @handles(STATEMENTS, n.With)
    def exec_with(self, s: n.With, env):
        ctx = self.eval_expr(s.context, env)
        if isinstance(ctx, Instance):
            self.with_instance(ctx, s, env)
            return
        if not isinstance(ctx, (grad_mode._GradModeContext, forward_ad.dual_level,
                                saved_hooks.saved_tensors_hooks, files.ReadFile,
                                autograd_graph.enforce_grad_layout_policy)):
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

    @handles(STATEMENTS, n.Import)
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

    @handles(STATEMENTS, n.Try)
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

    @handles(STATEMENTS, n.Raise)
    def exec_raise(self, s: n.Raise, env):
        exc = RuntimeError("No active exception to reraise") if s.exc is None else self.eval_expr(s.exc, env)
        if isinstance(exc, type) and issubclass(exc, BaseException) and exc.__name__ in builtins.EXCEPTIONS:
            exc = exc()
        if not isinstance(exc, BaseException) or type(exc).__name__ not in builtins.EXCEPTIONS:
            exc = TypeError("exceptions must derive from BaseException")
        raise self.error(exc, s)

    @handles(STATEMENTS, n.Assert)
    def exec_assert(self, s: n.Assert, env):
        if not self.truth(self.eval_expr(s.test, env), s.test):
            message = () if s.msg is None else (builtins.to_str(self.eval_expr(s.msg, env)),)
            raise self.error(AssertionError(*message), s)

    @handles(STATEMENTS, n.Pass)
    def exec_pass(self, s: n.Pass, env):
        pass

    @handles(STATEMENTS, n.Break)
    def exec_break(self, s: n.Break, env):
        raise _Break()

    @handles(STATEMENTS, n.Continue)
    def exec_continue(self, s: n.Continue, env):
        raise _Continue()

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
                elif type(obj) is np.ndarray:  # a program's NumPy array (numbers only, within the limits)
                    check_array_index(obj, key)
                    obj[key] = check_array_value(value)
                elif isinstance(obj, dict):
                    obj[key] = value
                    admit(len(obj), "the dict")
                elif isinstance(obj, list):
                    if isinstance(key, slice):
                        admit(len(obj) + len(value), "the list")
                    obj[key] = value
                elif nn_bridge.assigns_items(obj):  # nn.ModuleList / ModuleDict / ParameterList / ParameterDict
                    obj[key] = value
                else:
                    raise TypeError(f"'{type_name(obj)}' object does not support item assignment")
            except Exception as e:
                raise self.error(e, target) from None
        else:  # pragma: no cover
            raise AssertionError("bad target")

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

    def list_inplace(self, op: str, lst: list, value, node):
        """``lst += iterable`` (extend) and ``lst *= n`` (repeat) in place, as Python's list does, so that aliases
        of the list see it; within the ``items`` limit. Returns the list, or None to use :meth:`binop` (for a
        count that is not an integer: its TypeError)."""
        try:
            if op == "add":
                if not isinstance(value, SEQUENCES):  # any iterable, as Python's list.__iadd__ takes
                    value = materialize(value, "the concatenation")
                admit(len(lst) + len(value), "the concatenation")
                lst.extend(value)
                return lst
            try:
                count = operator.index(value)
            except TypeError:
                return None
            admit(len(lst) * max(count, 0), "the repeated sequence")
            lst *= count
            return lst
        except (GradcliError, TypeError) as exc:
            raise self.error(exc, node) from None

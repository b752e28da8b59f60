"""Evaluating expressions: the :class:`Expressions` mixin of :class:`~.interpreter.Interpreter`.

Names (the program's variables, enclosing scopes, then the builtins), the operators of the one operator table
(:mod:`gradcli.ops.operators`, keyed by the grammar's aliases), comparisons, ``and``/``or``, subscripts and
slices, literals, f-strings, comprehensions, and attribute reads. Calls, lambdas' functions and the attributes
of the program's objects are :mod:`.calls`'s; every error becomes an EvalError at the expression's position
(``self.error``).
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from ..engine import limits
from ..engine.errors import GradcliError
from ..engine.tensor import Tensor
from ..ops.operators import BINARY, COMPARISONS, UNARY
from . import builtins
from . import nodes as n
from .safety import admit, check_array_index, check_array_op, check_format_widths, check_python_op
from .values import Class, Instance, Scope, Super, type_name

# The operators, from the one table of gradcli.ops.operators (keyed by the grammar's aliases).
_APPLY = {alias: row.apply for alias, row in BINARY.items()}
_UNARY = {alias: row.apply for alias, row in UNARY.items()}
_COMPARE = {symbol: row.apply for symbol, row in COMPARISONS.items()}
# Python's identity and membership tests (not operators of the table: no tensor meaning of their own).
_COMPARE.update({"is": operator.is_, "is not": operator.is_not, "in": lambda a, b: a in b,
                 "not in": lambda a, b: a not in b})


class Expressions:
    """How the interpreter evaluates each kind of expression node (a mixin of the Interpreter)."""

    def eval_expr(self, e, env):
        """The value of expression ``e`` with the variables ``env``.

        Every operand is evaluated here, not in a handler of its own, so that each level of a nested
        expression takes one Python frame (``RECURSION_LIMIT`` of :mod:`.interpreter` counts on it); the work
        after the operands are evaluated is in the helpers below.

        Raises:
            EvalError: what evaluating it raised, at the position of the innermost expression that failed.
        """
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
                if type(obj) is np.ndarray:  # a program's NumPy array: fancy indexing within the limits
                    check_array_index(obj, key)
                return obj[key]
            except Exception as exc:
                raise self.error(exc, e) from None
        if t is n.UnaryOp:
            v = self.eval_expr(e.operand, env)
            if e.op == "not_":
                return not self.truth(v, e.operand)
            return self.unary(e.op, v, e)
        if t is n.Compare:
            left = self.eval_expr(e.operands[0], env)
            result = True
            for op, right_node in zip(e.ops, e.operands[1:]):
                right = self.eval_expr(right_node, env)
                result = self.compare(op, left, right, e)
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
            if self.truth(self.eval_expr(e.test, env), e.test):
                return self.eval_expr(e.body, env)
            return self.eval_expr(e.orelse, env)
        if t is n.Seq:
            return self.make_seq(e, [self.eval_expr(i, env) for i in e.items])
        if t is n.FString:
            return self.fstring(e, env)
        if t is n.Dict:
            return self.make_dict(e, env)
        if t is n.Lambda:
            return self.make_function("<lambda>", e.params, e.body, env, e)
        if t is n.Comprehension:
            return self.comprehension(e, env)
        raise AssertionError(f"unknown expression {t.__name__}")  # pragma: no cover

    def unary(self, op: str, value, node):
        """``-value``, ``+value``, ``~value`` (``op``: the grammar's alias) by the operator table."""
        try:
            return _UNARY[op](value)
        except Exception as exc:
            raise self.error(exc, node) from None

    def compare(self, op: str, left, right, node):
        """``left op right`` for one comparison of a chain (``op``: its symbol, or ``is``/``in`` ...)."""
        try:
            if isinstance(left, (np.ndarray, np.generic)) or isinstance(right, (np.ndarray, np.generic)):
                check_array_op(op, left, right)  # NumPy's broadcast, within the limits
            return _COMPARE[op](left, right)
        except Exception as exc:
            raise self.error(exc, node) from None

    def make_seq(self, e: n.Seq, items: list):
        """The list, tuple or set display ``e`` of its evaluated ``items``."""
        if e.kind == "list":
            return items
        if e.kind == "tuple":
            return tuple(items)
        try:
            return set(items)
        except TypeError as exc:
            raise self.error(exc, e) from None

    def fstring(self, e: n.FString, env) -> str:
        out, size = [], 0
        for part in e.parts:
            if isinstance(part, str):
                out.append(part)
                size += len(part)
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
                size += len(text)
                admit(size, "the f-string")
            except Exception as exc:
                raise self.error(exc, e) from None
            out.append(text)
        return "".join(out)

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
        admit(len(out), "the dict")
        return out

    def iterate(self, node, env):
        """An iterator over the value of expression ``node`` (a ``for`` loop's, a comprehension's, ``yield
        from``'s iterable).

        Raises:
            EvalError: TypeError at ``node`` for a value that is not iterable.
        """
        iterable = self.eval_expr(node, env)
        try:
            return iter(iterable)
        except TypeError as exc:
            raise self.error(exc, node) from None

    def _comprehension_items(self, e: n.Comprehension, env):
        """The values of a comprehension in order: (key, value) pairs for a dict, else values. Each item is one
        step (the ``steps`` limit); the iterables are evaluated as Python does (the first in ``env``, the others
        in the comprehension's own scope)."""
        scope = Scope(env)

        def loop(i):
            target, iter_node, conditions = e.clauses[i]
            for item in self.iterate(iter_node, env if i == 0 else scope):
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

    def binop(self, op, left, right, node):
        try:
            if type(left) is not Tensor or type(right) is not Tensor:
                checked = check_python_op(op, left, right)
                if checked is not None:
                    left, right = checked
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

"""Text → program: the grammar's rules build :mod:`.nodes` as the parser reduces them, checking what the grammar
leaves loose.

Each rule (or its alias after ``->``) is a method of :class:`_Builder` taking ``(meta, children)`` as a Lark
transformer's would: the children as in Lark's tree, ``meta`` the first token of the rule's text. The methods are
called by :func:`.grammar.parse_into` while the LALR parser runs (no parse tree is built: building one takes
most of the time of a short program); ``tests/language/test_parse_driver.py`` holds them to what building from
Lark's tree gives. The grammar parses assignment targets and keyword-argument names as expressions (that keeps it
LALR(1)); the builder checks them and reports ``cannot assign to ...`` with the position. The parser's loop and
the builder are iterative, so deeply nested input does not exhaust Python's stack here; the built program is
then measured (iteratively) against the ``nesting`` limit, so that running it cannot either.

The language reaches nothing of Python's object model: names starting with ``__`` and attributes starting
with ``_`` are refused here, as syntax, before anything runs. String literals are decoded
by :func:`decode_string` (no Python ``eval``); f-string fields are parsed with the same grammar.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

from ..engine import limits
from ..engine.errors import GradcliSyntaxError
from ..ops.operators import BINARY, UNARY
from . import nodes as n
from .grammar import Token, parse_into

#: The special methods a program's class may define and call (``def __init__``, ``super().__init__()``); the
#: other dunder names (``__class__``, ``__dict__``, ``__globals__``, ...) stay refused.
SPECIAL_METHODS = frozenset({
    "__init__", "__call__", "__repr__", "__str__", "__len__", "__getitem__", "__setitem__", "__delitem__",
    "__iter__", "__next__", "__contains__", "__bool__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
    "__ge__", "__hash__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__",
    "__rmatmul__", "__neg__", "__pos__", "__abs__", "__enter__", "__exit__", "__float__", "__int__", "__index__",
    "__format__", "__iadd__", "__isub__", "__imul__", "__itruediv__"})

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0", "a": "\a", "b": "\b",
            "f": "\f", "v": "\v", "\n": ""}
_ESCAPE_RE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.|\n)", re.S)


def split_literal(token: str) -> tuple[str, str]:
    """A string literal token's prefix (lower case: "", "r", "u", "f", "rf") and the text between its quotes
    (single or triple)."""
    i = 0
    while token[i] not in "'\"":
        i += 1
    prefix, rest = token[:i].lower(), token[i:]
    q = 3 if rest[:3] in ('"""', "'''") and len(rest) >= 6 else 1
    return "".join(sorted(prefix)).replace("fr", "rf"), rest[q:-q]


def decode_string(token: str) -> str:
    """The value of a string literal token (quotes single or triple, ``r``/``u``/``f`` prefix and backslash
    escapes handled as Python does for the common escapes; unknown escapes are kept as written, like Python)."""
    prefix, body = split_literal(token)
    if "r" in prefix:
        return body
    return unescape(body)


def unescape(body: str) -> str:
    """Python's backslash escapes decoded in ``body`` (the text of a non-raw literal)."""
    def sub(m):
        e = m.group(1)
        if e[0] in "xuU" and len(e) > 1:
            return chr(int(e[1:], 16))
        return _ESCAPES.get(e, "\\" + e)

    return _ESCAPE_RE.sub(sub, body)


def split_field(field: str) -> tuple[str, str | None, str | None]:
    """An f-string replacement field split as Python does: the expression, the conversion (``!r``) and the format
    spec, at the first ``!``/``:`` outside brackets and strings (``w[:, 0]:.4f`` -> ``w[:, 0]``, ``.4f``)."""
    depth, quote, i = 0, None, 0
    while i < len(field):
        ch = field[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and ch == "!" and field[i + 1:i + 2] != "=":
            rest = field[i + 1:]
            conversion, _, spec = rest.partition(":")
            return field[:i], conversion.strip(), (spec if ":" in rest else None)
        elif depth == 0 and ch == ":":
            return field[:i], None, field[i + 1:]
        elif depth == 0 and ch in "=<>" and field[i + 1:i + 2] == "=":
            i += 1
        i += 1
    return field, None, None


def _pos(meta_or_token):
    return getattr(meta_or_token, "line", 1) or 1, getattr(meta_or_token, "column", 1) or 1


def _at(child):
    """Position of a built node or token."""
    if isinstance(child, n.Node):
        return child.line, child.col
    return _pos(child)


# The operators, from the one table (gradcli.ops.operators, keyed by the grammar's aliases): the builder's
# method for each alias (defined below the class), and the augmented assignment each AUGOP token ("+=") stands for.
_AUGOPS = {row.symbol + "=": alias for alias, row in BINARY.items()}


class _Builder:
    """The grammar's rules, each a method named after the rule (or its alias) taking ``(meta, children)``:
    called by the parser as it reduces (:func:`.grammar.parse_into`)."""

    def __init__(self, source: str, filename: str):
        self.source = source
        self.filename = filename

    def _error(self, message, line, col):
        return GradcliSyntaxError(message, line=line, column=col, source=self.source, filename=self.filename)

    # ------------------------------------------------------------------------------------------ programs
    def file_input(self, meta, children):
        body = []
        for c in children:
            body.extend(c if isinstance(c, list) else [c])
        return body

    suite = file_input  # a block is a statement list, flattened the same way

    def spec_input(self, meta, children):
        return children[0]

    def simple_stmt(self, meta, children):
        out = []
        for c in children:
            if isinstance(c, list):  # import a, b: one statement per name
                out.extend(c)
            elif c is not None:
                out.append(c)
        return out

    def expr_stmt(self, meta, children):
        line, col = _at(children[0])
        return n.ExprStmt(line, col, children[0])

    def _check_target(self, target):
        stack = [target]  # iterative: targets like ((((a,),),),) nest arbitrarily
        while stack:
            t = stack.pop()
            if isinstance(t, (n.Name, n.Attribute, n.Subscript)):
                if isinstance(t, n.Name) and t.id in ("True", "False", "None"):
                    raise self._error(f"cannot assign to {t.id}", t.line, t.col)
            elif isinstance(t, n.Seq) and t.kind in ("tuple", "list"):
                stack.extend(reversed(t.items))
            else:
                what = {"Call": "function call", "Const": "literal", "BinOp": "expression", "Compare": "comparison"}
                raise self._error(f"cannot assign to {what.get(type(t).__name__, 'expression')}", t.line, t.col)

    def _check_name(self, tok, attribute: bool = False, definition: bool = False):
        """Refuse Python's internals: ``__import__``, ``__class__``, ``x.__dict__`` (a language error).

        The special methods a class defines (:data:`SPECIAL_METHODS`: ``def __init__``, ``super().__init__()``)
        are allowed as attribute names and as the names of ``def``; ``__name__`` (``if __name__ ==
        "__main__":``) as a name. An attribute starting with one ``_`` is syntax (``self._cache``): what it
        reaches is decided when it runs (a program's own objects have them; gradcli's refuse them).
        """
        name = str(tok)
        if not name.startswith("__"):
            return name
        if (attribute or definition) and name in SPECIAL_METHODS:
            return name
        if definition and name.endswith("__") and len(name) > 4 and name not in _OBJECT_MODEL:  # def __del__: the
            return name  # program's own method, which reads nothing of Python's (reading x.__del__ stays refused)
        if not definition and name == "__name__":  # `if __name__ == "__main__":`, a function's fn.__name__
            return name
        kind = "attribute" if attribute else "name"
        raise self._error(f"gradcli does not allow the {kind} {name!r}: names starting with '__' reach "
                          "Python's internals, not the language (a class may define the special methods: "
                          "__init__, __call__, __repr__, ...)", *_pos(tok))

    def assign(self, meta, children):
        *targets, value = children
        for target in targets:
            self._check_target(target)
        target = targets[0]
        return n.Assign(target.line, target.col, target, value, targets[1:] or None)

    def aug_assign(self, meta, children):
        target, op, value = children
        if not isinstance(target, (n.Name, n.Attribute, n.Subscript)):
            raise self._error("illegal expression for augmented assignment", target.line, target.col)
        return n.AugAssign(target.line, target.col, target, _AUGOPS[str(op)], value)

    def return_stmt(self, meta, children):
        return n.Return(*_pos(meta), children[0])

    def magic_stmt(self, meta, children):
        line, col = _pos(children[0])
        magic = str(children[0])
        name = re.match(r"%(\w+)", magic).group(1)
        if name != "matplotlib":
            raise self._error(f"IPython magic %{name} is not part of gradcli's language (only %matplotlib lines "
                              "are accepted, and do nothing)", line, col)
        return [n.Pass(line, col)]

    def pass_stmt(self, meta, children):
        return n.Pass(*_pos(meta))

    def break_stmt(self, meta, children):
        return n.Break(*_pos(meta))

    def continue_stmt(self, meta, children):
        return n.Continue(*_pos(meta))

    def dotted_name(self, meta, children):
        if len(children) == 1 and str(children[0]) == "__future__":  # from __future__ import annotations
            return "__future__"
        return ".".join(self._check_name(c, attribute=i > 0) for i, c in enumerate(children))

    def dotted_as(self, meta, children):
        module, alias = children
        return (module, None if alias is None else self._check_name(alias), _pos(meta))

    def import_as(self, meta, children):
        name, alias = children
        return (self._check_name(name, attribute=True), None if alias is None else self._check_name(alias))

    def import_stmt(self, meta, children):
        return [n.Import(*pos, module, alias) for module, alias, pos in children]

    def from_import(self, meta, children):
        module, *names = children
        if module == "__future__":  # Python's features of the future are the language's present: nothing to do
            for name, _ in names:
                if name not in _FUTURE:
                    raise self._error(f"future feature {name} is not defined", *_pos(meta))
            return [n.Pass(*_pos(meta))]
        return [n.Import(*_pos(meta), module, alias, name) for name, alias in names if name is not None]

    def raise_stmt(self, meta, children):
        return n.Raise(*_pos(meta), children[0])

    def try_stmt(self, meta, children):
        body, *rest = children
        handlers = [c for c in rest if isinstance(c, tuple) and c[0] == "except"]
        orelse = next((c[1] for c in rest if isinstance(c, tuple) and c[0] == "else"), None)
        final = next((c[1] for c in rest if isinstance(c, tuple) and c[0] == "finally"), None)
        return n.Try(*_pos(meta), body, [h[1:] for h in handlers], orelse, final)

    def except_clause(self, meta, children):
        exc, alias, body = children
        return ("except", exc, None if alias is None else self._check_name(alias), body)

    def else_clause(self, meta, children):
        return ("else", children[0])

    def finally_clause(self, meta, children):
        return ("finally", children[0])

    def assert_stmt(self, meta, children):
        return n.Assert(*_pos(meta), children[0], children[1])

    def lambdef(self, meta, children):
        sig, body = children
        params, vararg, kwonly, kwarg = sig or ([], None, None, None)
        line, col = _pos(meta)
        return n.Lambda(line, col, params, [n.Return(*_at(body), body)], vararg, kwonly, kwarg)

    def if_stmt(self, meta, children):
        test, body, *rest = children
        orelse = rest.pop() if rest and (rest[-1] is None or isinstance(rest[-1], list)) else None
        branches = [(test, body)] + [c for c in rest]
        return n.If(*_pos(meta), branches, orelse)

    def elif_clause(self, meta, children):
        return (children[0], children[1])

    def while_stmt(self, meta, children):
        return n.While(*_pos(meta), children[0], children[1])

    def for_stmt(self, meta, children):
        target, it, body = children
        self._check_target(target)
        return n.For(*_pos(meta), target, it, body)

    def funcdef(self, meta, children):
        name, sig, body = children
        params, vararg, kwonly, kwarg = sig or ([], None, None, None)
        declared, generator = _declarations(body)
        return n.FunctionDef(*_pos(meta), self._check_name(name, definition=True), params, body, vararg, kwonly,
                             kwarg, None, declared or None, generator)

    def yield_expr(self, meta, children):
        return n.Yield(*_pos(meta), children[0], False)

    def yield_from(self, meta, children):
        return n.Yield(*_pos(meta), children[0], True)

    def yield_stmt(self, meta, children):
        return children[0]

    def yield_assign(self, meta, children):
        target, y = children
        self._check_target(target)
        y.target = target
        return y

    def parameters(self, meta, children):
        """(positional params, *vararg name, keyword-only params, **kwarg name), checked as Python does."""
        params, kwonly, vararg, kwarg, star_seen = [], [], None, None, False
        for kind, name, default, tok in children:
            if kwarg is not None:
                raise self._error("arguments cannot follow var-keyword argument", *_pos(tok))
            if kind == "p":
                if star_seen:
                    kwonly.append((name, default))
                else:
                    if default is None and params and params[-1][1] is not None:
                        raise self._error("non-default argument follows default argument", *_pos(tok))
                    params.append((name, default))
            elif kind == "star":
                if star_seen:
                    raise self._error("* argument may appear only once", *_pos(tok))
                star_seen, vararg = True, name
            else:
                kwarg = name
        if star_seen and vararg is None and not kwonly:
            raise self._error("named arguments must follow bare *", *_pos(meta))
        names = [p[0] for p in params + kwonly] + [v for v in (vararg, kwarg) if v is not None]
        if len(set(names)) != len(names):
            raise self._error("duplicate argument in function definition", *_pos(meta))
        return params, vararg, kwonly or None, kwarg

    def param(self, meta, children):
        return ("p", self._check_name(children[0]), children[1], children[0])

    def star_param(self, meta, children):
        return ("star", self._check_name(children[0]), None, children[0])

    def bare_star(self, meta, children):
        return ("star", None, None, meta)

    def kwstar_param(self, meta, children):
        return ("kwstar", self._check_name(children[0]), None, children[0])

    def classdef(self, meta, children):
        name, args, body = children
        bases = []
        for kind, a, b in args or []:
            if kind != "pos":
                what = "keyword arguments (metaclass=...)" if kind == "kw" else "unpacking"
                raise self._error(f"gradcli classes take base classes only, not {what}",
                                  *(_at(b) if kind == "kw" else _at(a)))
            bases.append(a)
        return n.ClassDef(*_pos(meta), self._check_name(name), bases, body)

    def decorated(self, meta, children):
        *decorators, definition = children
        definition.decorators = decorators
        return definition

    def decorator(self, meta, children):
        return children[0]

    def global_stmt(self, meta, children):
        return n.Global(*_pos(meta), "global", [self._check_name(c) for c in children])

    def nonlocal_stmt(self, meta, children):
        return n.Global(*_pos(meta), "nonlocal", [self._check_name(c) for c in children])

    def del_stmt(self, meta, children):
        target = children[0]
        targets = target.items if isinstance(target, n.Seq) and target.kind == "tuple" else [target]
        for t in targets:
            self._check_target(t)
        return n.Delete(*_pos(meta), targets)

    def with_stmt(self, meta, children):
        ctx, alias, body = children
        return n.With(*_pos(meta), ctx, None if alias is None else self._check_name(alias), body)

    # ---------------------------------------------------------------------------------------- expressions
    def tuple(self, meta, children):
        items = [c for c in children if c is not None]
        line, col = _at(items[0])
        return n.Seq(line, col, "tuple", items)

    def paren_tuple(self, meta, children):
        return n.Seq(*_pos(meta), "tuple", [c for c in children if c is not None])

    def empty_tuple(self, meta, children):
        return n.Seq(*_pos(meta), "tuple", [])

    def list(self, meta, children):
        return n.Seq(*_pos(meta), "list", [c for c in children if c is not None])

    def set(self, meta, children):
        return n.Seq(*_pos(meta), "set", list(children))

    def dict(self, meta, children):
        return n.Dict(*_pos(meta), [c for c in children if c is not None])

    def dict_item(self, meta, children):
        return (children[0], children[1])

    def dict_unpack(self, meta, children):
        return (None, children[0])

    def comp_for(self, meta, children):
        target, iterable, *conditions = children
        self._check_target(target)
        return (target, iterable, conditions)

    def _comprehension(self, kind, meta, children):
        if kind == "dict":
            key, element, *clauses = children
        else:
            key, (element, *clauses) = None, children
        return n.Comprehension(*_pos(meta), kind, element, key, clauses)

    def listcomp(self, meta, children):
        return self._comprehension("list", meta, children)

    def setcomp(self, meta, children):
        return self._comprehension("set", meta, children)

    def dictcomp(self, meta, children):
        return self._comprehension("dict", meta, children)

    def genexp(self, meta, children):
        return self._comprehension("generator", meta, children)

    def genexp_arg(self, meta, children):
        return ("pos", self._comprehension("generator", meta, children), None)

    def ternary(self, meta, children):
        body, test, orelse = children
        return n.Ternary(body.line, body.col, body, test, orelse)

    def or_(self, meta, children):
        return n.BoolOp(*_at(children[0]), "or_", children[0], children[1])

    def and_(self, meta, children):
        return n.BoolOp(*_at(children[0]), "and_", children[0], children[1])

    def not_(self, meta, children):
        return n.UnaryOp(*_pos(meta), "not_", children[0])

    def compare(self, meta, children):
        left, op, right = children
        if isinstance(left, n.Compare):  # a < b < c is one chain, as in Python
            left.ops.append(str(op))
            left.operands.append(right)
            return left
        return n.Compare(left.line, left.col, [str(op)], [left, right])

    def comp_op(self, meta, children):
        return " ".join(str(c) for c in children)

    def getattr(self, meta, children):
        value, name = children
        return n.Attribute(value.line, value.col, value, self._check_name(name, attribute=True))

    def call(self, meta, children):
        func, args = children
        pos_args, kwargs, kwstars = [], [], []
        for kind, a, b in args or []:
            if kind == "pos":
                if kwargs or kwstars:
                    raise self._error("positional argument follows keyword argument" + (" unpacking" if kwstars
                                                                                        else ""), a.line, a.col)
                pos_args.append(a)
            elif kind == "star":
                if kwstars:
                    raise self._error("iterable argument unpacking follows keyword argument unpacking",
                                      a.line, a.col)
                pos_args.append(n.Starred(a.line, a.col, a))
            elif kind == "kwstar":
                kwstars.append(a)
            else:
                if any(k == a for k, _ in kwargs):
                    raise self._error(f"keyword argument repeated: {a}", b.line, b.col)
                kwargs.append((a, b))
        return n.Call(func.line, func.col, func, pos_args, kwargs, kwstars or None)

    def arguments(self, meta, children):
        return children

    def pos_arg(self, meta, children):
        return ("pos", children[0], None)

    def star_arg(self, meta, children):
        return ("star", children[0], None)

    def kwstar_arg(self, meta, children):
        return ("kwstar", children[0], None)

    def kw_arg(self, meta, children):
        key, value = children
        if not isinstance(key, n.Name):
            raise self._error('expression cannot contain assignment, perhaps you meant "=="?', key.line, key.col)
        return ("kw", key.id, value)

    def getitem(self, meta, children):
        value, (parts, is_tuple) = children
        return n.Subscript(value.line, value.col, value, parts, is_tuple)

    def subscripts(self, meta, children):
        parts = [c for c in children if c is not None]
        return parts, len(parts) > 1

    def slice(self, meta, children):
        start, stop, step = (children + [None, None, None])[:3]
        return n.SliceExpr(*_pos(meta), start, stop, step)

    def name(self, meta, children):
        return n.Name(*_pos(children[0]), self._check_name(children[0]))

    def int(self, meta, children):
        return n.Const(*_pos(children[0]), int(children[0]))

    def float(self, meta, children):
        return n.Const(*_pos(children[0]), float(children[0]))

    def string(self, meta, children):
        line, col = _pos(children[0])
        parts = []
        for tok in children:
            if tok.type == "FSTRING":
                parts.extend(self._fstring_parts(tok))
            else:
                parts.append(decode_string(tok))
        if all(isinstance(p, str) for p in parts):
            return n.Const(line, col, "".join(parts))
        return n.FString(line, col, parts)

    def _fstring_parts(self, tok: Token) -> list:
        prefix, body = split_literal(str(tok))
        return self._fstring_body(body, "r" in prefix, tok)

    def _fstring_body(self, body: str, raw: bool, tok: Token) -> list:
        def literal(chars):
            text = "".join(chars)
            return text if raw else unescape(text)

        parts, i, text = [], 0, []
        while i < len(body):
            ch = body[i]
            if ch == "{" and body[i + 1:i + 2] == "{":
                text.append("{")
                i += 2
            elif ch == "}" and body[i + 1:i + 2] == "}":
                text.append("}")
                i += 2
            elif ch == "{":
                depth, j = 1, i + 1
                while j < len(body) and depth:
                    depth += {"{": 1, "}": -1}.get(body[j], 0)
                    j += 1
                if depth:
                    raise self._error("f-string: expecting '}'", tok.line, tok.column)
                field, conversion, spec = split_field(body[i + 1:j - 1])
                if conversion is not None and conversion not in ("r", "s", "a"):
                    raise self._error("f-string: invalid conversion character: expected 's', 'r', or 'a'",
                                      tok.line, tok.column)
                if text:
                    parts.append(literal(text))
                    text = []
                if not field.strip():
                    raise self._error("f-string: valid expression required before '}'", tok.line, tok.column)
                try:
                    expr = parse_expression(field.strip(), self.filename)
                except GradcliSyntaxError as exc:  # the field's own position is not a position in the file
                    raise self._error(f"f-string: {exc.message}", tok.line, tok.column) from None
                if spec is not None and "{" in spec:  # a nested field in the spec: {x:>{width}}
                    spec = n.FString(tok.line, tok.column, self._fstring_body(spec, raw, tok))
                parts.append((expr, conversion, spec))
                i = j
            elif ch == "}":
                raise self._error("f-string: single '}' is not allowed", tok.line, tok.column)
            else:
                text.append(ch)
                i += 1
        if text:
            parts.append(literal(text))
        return parts

    def true(self, meta, children):
        return n.Const(*_pos(meta), True)

    def false(self, meta, children):
        return n.Const(*_pos(meta), False)

    def none(self, meta, children):
        return n.Const(*_pos(meta), None)

    def ellipsis(self, meta, children):
        return n.Const(*_pos(meta), Ellipsis)


def _binop(name):
    def method(self, meta, children):
        left, right = children
        return n.BinOp(left.line, left.col, name, left, right)

    method.__name__ = name
    return method


def _unary(name):
    def method(self, meta, children):
        return n.UnaryOp(*_pos(meta), name, children[0])

    method.__name__ = name
    return method


for _op in BINARY:
    setattr(_Builder, _op, _binop(_op))
for _op in UNARY:
    setattr(_Builder, _op, _unary(_op))


#: The special methods of Python's object model itself (attribute access, descriptors, class creation, pickling):
#: a program may not define them, since defining them would be asking Python to use them. Other dunder names may
#: be defined (``def __del__``, ``def __hash__``): they are the program's functions.
_OBJECT_MODEL = frozenset({
    "__getattribute__", "__getattr__", "__setattr__", "__delattr__", "__dir__", "__get__", "__set__",
    "__delete__", "__set_name__", "__new__", "__init_subclass__", "__class_getitem__", "__prepare__",
    "__instancecheck__", "__subclasscheck__", "__mro_entries__", "__reduce__", "__reduce_ex__", "__getstate__",
    "__setstate__", "__getnewargs__", "__getnewargs_ex__", "__copy__", "__deepcopy__", "__class__", "__dict__",
    "__slots__", "__weakref__", "__module__", "__qualname__", "__annotations__", "__globals__", "__closure__",
    "__code__", "__builtins__", "__import__", "__subclasses__", "__bases__", "__mro__", "__init_subclass__"})
#: Python's ``from __future__ import`` features (all mandatory in Python 3 but ``annotations``, which changes
#: nothing the language does: annotations are not evaluated).
_FUTURE = frozenset({"annotations", "division", "print_function", "absolute_import", "generator_stop",
                     "nested_scopes", "generators", "with_statement", "unicode_literals"})


def build_program(text: str, filename: str = "<input>") -> n.Program:
    """Parse and build a program (through the shape cache when :func:`shape_cache` is on).

    Raises:
        GradcliSyntaxError: for text that does not parse, assigns to something that is not a target, or uses
            names starting with ``__`` (attributes starting with ``_``).
        InputLimitError: for text over the ``chars`` limit or nesting deeper than the ``nesting`` limit.
    """
    if "\r" in text:  # Python's line endings: CR LF and a bare CR (old Mac files) end a line as LF does
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _SHAPES.enabled:
        return _SHAPES.build(text, filename)
    return n.Program(_build(text, "file_input", filename), text, filename)


# Numbers as the grammar's INT and FLOAT read them, with names first so that the digits of ``x1`` are a name's.
_NUMBER_SCAN = re.compile(r"[A-Za-z_]\w*|((?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[0-9]+(?:[eE][-+]?[0-9]+)?)")
_DIGIT = re.compile(r"[0-9]")


class _ShapeCache:
    """Built programs by their *shape*: the text with each number literal's digits replaced by 0. Batch files
    and pipes often hold one program many times with other numbers (``x = tensor([1.25, -0.5], ...)``), and
    parsing is two thirds of an entry's time: a program of a known shape is the cached one with its number
    constants set to the new text's (same shape, so every node keeps its line and column). Only texts without
    strings, comments and backslashes take part, and a shape is kept only when each number of the text is
    exactly one constant of the built program. The cached program is changed in place by the next text of its
    shape, so the cache is on only where a program does not outlive the next one (:func:`shape_cache`: a batch
    entry), never in the interactive session, whose functions live on."""

    def __init__(self):
        self.enabled = False
        self.shapes: dict = {}  # shape -> (program body, [Const per number, in order], nesting limit) or None

    def build(self, text: str, filename: str) -> n.Program:
        numbers = None
        if not any(c in text for c in "'\"#\\"):
            numbers = [m for m in _NUMBER_SCAN.finditer(text) if m.group(1)]
        if not numbers:
            return n.Program(_build(text, "file_input", filename), text, filename)
        shape = _shape_key(text, numbers)
        cached = self.shapes.get(shape)
        if cached is not None and cached[2] == limits.current.nesting:
            limits.check_source(text, filename)
            body, consts, _ = cached
            for m, const in zip(numbers, consts):
                const.value = _number_value(m.group(1))
            return n.Program(body, text, filename)
        body = _build(text, "file_input", filename)
        if len(self.shapes) < _SHAPE_CACHE_SIZE:
            consts = _number_consts(body, text, numbers)
            if consts is not None:
                self.shapes[shape] = (body, consts, limits.current.nesting)
        return n.Program(body, text, filename)


_SHAPE_CACHE_SIZE = 4096
_SHAPES = _ShapeCache()


def _shape_key(text: str, numbers: list) -> str:
    parts, at = [], 0
    for m in numbers:
        parts.append(text[at:m.start(1)])
        parts.append(_DIGIT.sub("0", m.group(1)))
        at = m.end(1)
    parts.append(text[at:])
    return "".join(parts)


def _number_value(token: str):
    return float(token) if any(c in token for c in ".eE") else int(token)


def _number_consts(body, text: str, numbers: list) -> list | None:
    """The Const node of each number of ``text`` in order, or None when they do not match one to one."""
    line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    found = {}
    stack = list(body)
    while stack:
        v = stack.pop()
        if isinstance(v, n.Node):
            if type(v) is n.Const and type(v.value) in (int, float):
                found.setdefault((v.line, v.col), []).append(v)
            stack.extend(getattr(v, f) for f in v._fields)  # noqa: B009 - the fields of our own nodes
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    if sum(len(c) for c in found.values()) != len(numbers):
        return None
    out = []
    for m in numbers:
        line = next(i for i in range(len(line_starts) - 1, -1, -1) if line_starts[i] <= m.start(1))
        here = found.get((line + 1, m.start(1) - line_starts[line] + 1))
        if not here or len(here) != 1 or here[0].value != _number_value(m.group(1)):
            return None
        out.append(here[0])
    return out


@contextmanager
def shape_cache():
    """Build programs through the shape cache in this block (see :class:`_ShapeCache`): for a batch entry,
    whose program is done with before the next one is built."""
    before = _SHAPES.enabled
    _SHAPES.enabled = True
    try:
        yield
    finally:
        _SHAPES.enabled = before


def _build(text: str, start: str, filename: str):
    """Parse and build ``text`` (a statement list for "file_input", an expression for "spec_input"), then
    measure it against the ``nesting`` limit."""
    built = parse_into(text, start, filename, _HANDLERS, _Builder(text, filename))
    limit = limits.current.nesting
    # Every node but a statement's ExprStmt and a lambda's Return holds characters of its own (an operator, a
    # bracket, a keyword, a name's letters) that its children's text does not, so a text this short cannot
    # nest deeper than the limit, and the tree need not be walked.
    if 2 * len(text) + 2 > limit:
        deep = n.max_depth(built, limit)
        if deep is not None:
            err = limits.exceeded("nesting", "the program nests expressions or blocks too deeply here")
            raise err.with_position(line=deep.line, column=deep.col, source=text, filename=filename)
    return built


#: The builder's methods by rule name, as :func:`.grammar.parse_into` calls them.
_HANDLERS = {name: fn for name, fn in vars(_Builder).items() if callable(fn) and not name.startswith("_")}


def parse_expression(text: str, filename: str = "<input>"):
    """Parse and build one expression (an input spec, an f-string's field).

    Raises:
        GradcliSyntaxError: for text that is not one expression.
        InputLimitError: for text over the ``chars`` limit or nesting deeper than the ``nesting`` limit.
    """
    return _build(text, "spec_input", filename)


def _declarations(body: list) -> tuple[dict, bool]:
    """The names a function's ``global``/``nonlocal`` statements declare (name → kind), and whether it yields
    (a generator function), looking into its blocks but not into the functions and classes it defines."""
    out: dict = {}
    generator = False
    stack = list(body)
    while stack:
        s = stack.pop()
        t = type(s)
        if t is n.Global:
            for name in s.names:
                out[name] = s.kind
        elif t is n.Yield:
            generator = True
        elif t is n.If:
            for _, b in s.branches:
                stack.extend(b)
            stack.extend(s.orelse or ())
        elif t in (n.While, n.For, n.With):
            stack.extend(s.body)
        elif t is n.Try:
            stack.extend(s.body)
            for h in s.handlers:
                stack.extend(h[-1])
            stack.extend(s.orelse or ())
            stack.extend(s.final or ())
    return out, generator

"""The program: what the builder makes of a Lark tree and the interpreter runs.

Every node carries the 1-based ``line`` and ``col`` of its first character, for error messages.
Expression nodes end in ``Expr``-like names of what they compute; statement nodes are the Python statements
the language has. The tree node names of the grammar map onto these one to one (see build.py).
"""

from __future__ import annotations


class _Fields(type):
    """The metaclass of the program's node classes: a class's annotated attributes, after its base's, are its
    fields: its ``__slots__``, its ``_fields`` (in order, as ``ast.AST._fields``) and the parameters of its
    ``__init__`` (positional or keyword; one with a value in the class body may be left out and takes that
    value). What ``dataclass(slots=True, repr=False, eq=False)`` made, without generating and compiling an
    ``__init__`` for each of the 38 classes at every start-up (about 5 ms of start-up time). Nodes compare by
    identity (two ``x`` in a program are two nodes)."""

    def __new__(mcs, name, bases, namespace):
        own = tuple(namespace.get("__annotations__", ()))
        base = bases[0] if bases else None
        defaults = dict(getattr(base, "_defaults", {}))
        for field in own:
            if field in namespace:
                defaults[field] = namespace.pop(field)
        namespace["__slots__"] = own
        namespace["_fields"] = getattr(base, "_fields", ()) + own
        namespace["_defaults"] = defaults
        return super().__new__(mcs, name, bases, namespace)


class _Node(metaclass=_Fields):
    """What every node class shares: ``__init__`` over its fields."""

    def __init__(self, *args, **kwargs):
        names = self._fields
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes {len(names)} arguments, not {len(args)}")
        for field, value in zip(names, args):
            setattr(self, field, value)
        if len(args) < len(names) or kwargs:
            defaults = self._defaults
            for field in names[len(args):]:
                if field in kwargs:
                    setattr(self, field, kwargs.pop(field))
                elif field in defaults:
                    setattr(self, field, defaults[field])
                else:
                    raise TypeError(f"{type(self).__name__}() is missing its field {field!r}")
            if kwargs:
                raise TypeError(f"{type(self).__name__}() has no field {next(iter(kwargs))!r} (or it was also "
                                f"given by position)")


def fields(node) -> tuple:
    """The names of ``node``'s fields, in order (``line``, ``col``, then its own)."""
    return node._fields


class Node(_Node):
    line: int
    col: int


# ----------------------------------------------------------------------------------------------- expressions
class Const(Node):
    """A number, string, True/False/None or Ellipsis literal."""
    value: object


class FString(Node):
    """An f-string: literal text and ``{expr}`` parts in order."""
    parts: list  # str or Node


class Name(Node):
    id: str


class Seq(Node):
    """A list, tuple or set display; ``kind`` is "list", "tuple" or "set"."""
    kind: str
    items: list


class Dict(Node):
    """A dict display: (key, value) pairs in order; key None for a ``**mapping`` item."""
    items: list


class Comprehension(Node):
    """A list/set/dict comprehension or generator expression (``kind``: "list", "set", "dict", "generator"):
    the element (``key`` too for a dict) and its ``for`` clauses, each (target, iterable, [conditions])."""
    kind: str
    element: Node
    key: Node | None
    clauses: list


class BinOp(Node):
    """An infix operator; ``op`` is the grammar's node name ("add", "matmul", ...)."""
    op: str
    left: Node
    right: Node


class UnaryOp(Node):
    op: str  # "neg", "pos", "invert", "not_"
    operand: Node


class Compare(Node):
    """A chain ``a < b <= c``: operators and operands, evaluated left to right like Python."""
    ops: list
    operands: list


class BoolOp(Node):
    op: str  # "and_" or "or_"
    left: Node
    right: Node


class Ternary(Node):
    body: Node
    test: Node
    orelse: Node


class Attribute(Node):
    value: Node
    attr: str


class Call(Node):
    func: Node
    args: list  # Node or Starred, in the order written
    kwargs: list  # (name, Node)
    kwstars: list | None = None  # **mappings


class Starred(Node):
    """``*iterable`` among a call's positional arguments: its items go where it is written (``f(1, *a, 2)``)."""
    value: Node


class Subscript(Node):
    value: Node
    index: list  # Node or SliceExpr per comma-separated part
    is_tuple: bool


class SliceExpr(Node):
    start: Node | None
    stop: Node | None
    step: Node | None


class Lambda(Node):
    """``lambda params: expr``; ``body`` is ``[Return(expr)]``, as a function's. The parameters are as
    :class:`FunctionDef`'s."""
    params: list
    body: list
    vararg: str | None = None
    kwonly: list | None = None
    kwarg: str | None = None


# ------------------------------------------------------------------------------------------------ statements
class Try(Node):
    """``try``: the body, its handlers ((exception expression or None, alias or None, body)), ``else`` and
    ``finally`` blocks (None when absent)."""
    body: list
    handlers: list
    orelse: list | None
    final: list | None


class Raise(Node):
    exc: Node | None


class Assert(Node):
    test: Node
    msg: Node | None


class ExprStmt(Node):
    value: Node


class Assign(Node):
    target: Node  # Name, Attribute, Subscript or Seq of those
    value: Node
    more: list | None = None  # ``a = b = value``: the targets after the first, assigned left to right


class AugAssign(Node):
    target: Node
    op: str  # the binary op name, "add" for "+="
    value: Node


class Return(Node):
    value: Node | None


class Pass(Node):
    pass


class Break(Node):
    pass


class Continue(Node):
    pass


class Import(Node):
    module: str
    alias: str | None
    name: str | None = None  # for "from module import name"


class If(Node):
    branches: list  # (test, body) pairs, "if" then each "elif"
    orelse: list | None


class While(Node):
    test: Node
    body: list


class For(Node):
    target: Node
    iter: Node
    body: list


class FunctionDef(Node):
    """``def name(params, *vararg, kwonly, **kwarg): body``, under its ``decorators`` (expressions, applied
    last to first). ``declared`` maps the names of its ``global``/``nonlocal`` statements to "global" or
    "nonlocal" (None when there are none)."""
    name: str
    params: list  # (name, default Node or None): the positional-or-keyword parameters
    body: list
    vararg: str | None = None  # *args
    kwonly: list | None = None  # (name, default Node or None) after * or *args
    kwarg: str | None = None  # **kwargs
    decorators: list | None = None
    declared: dict | None = None
    generator: bool = False  # its body yields: calling it makes a generator


class ClassDef(Node):
    """``class name(bases, **keywords): body`` under its ``decorators``; ``bases`` are expressions."""
    name: str
    bases: list
    body: list
    decorators: list | None = None


class Global(Node):
    """``global a, b`` or ``nonlocal a, b`` (``kind``): the function assigns these names in the program's
    variables or in the enclosing function's."""
    kind: str
    names: list


class Yield(Node):
    """``yield value`` or ``yield from iterable`` (``delegate``), as a statement or as ``target = yield
    value`` (what ``send`` gave, None for ``next``)."""
    value: Node | None
    delegate: bool
    target: Node | None = None


class Delete(Node):
    """``del a, b[0], c.attr``."""
    targets: list


class With(Node):
    context: Node
    alias: str | None
    body: list


class Program(_Node):
    """A parsed program: its statements and the text they came from."""
    body: list
    source: str
    filename: str = "<input>"


def _children(value, out: list) -> None:
    """Append the program nodes directly inside ``value`` (a node's field: a node, or lists and tuples of
    nodes, strings and None, as in Call.kwargs or If.branches)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, Node):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            stack.extend(v)


def max_depth(body: list, limit: int):
    """The first node nested deeper than ``limit`` levels in ``body`` (a statement list or one expression),
    or None. Every statement and expression node is one level (``f(g(x))`` is three, ``a + b + c`` two).
    Iterative, so any depth can be measured."""
    stack = [(n, 1) for n in (body if isinstance(body, list) else [body]) if isinstance(n, Node)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return node
        kids: list = []
        for f in node._fields:
            _children(getattr(node, f), kids)  # noqa: B009 - the fields of our own nodes
        stack.extend((k, depth + 1) for k in kids)
    return None
